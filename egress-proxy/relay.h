/* The byte relay of one tunnel: client to upstream and back, with
 * back-pressure (a side stops reading while the other cannot take more),
 * half-close passed on, and an idle timeout. An idle tunnel holds no
 * buffer: bytes go through one scratch buffer shared by the loop, and only
 * what a slow peer has not taken yet is kept, in a buffer of its size. */
#ifndef CORRAL_RELAY_H
#define CORRAL_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct relay;

#define RELAY_CHUNK_BYTES (64 * 1024)   /* one read; the scratch buffer's size */

/* Why a relay ended. */
enum relay_end {
	RELAY_END_CLOSED = 0,           /* both sides finished cleanly */
	RELAY_END_IDLE,                 /* nothing moved for the idle timeout */
	RELAY_END_CLIENT_ERROR,         /* reading or writing the client failed */
	RELAY_END_UPSTREAM_ERROR,       /* reading or writing the upstream failed */
	RELAY_END_NOMEM,
};

/* Called once when the relay ends; the relay may be freed from here. */
typedef void (*relay_done_cb)(enum relay_end end, void *arg);

/* A relay between two connected non-blocking sockets. SCRATCH is a buffer
 * of RELAY_CHUNK_BYTES shared by every relay of the loop. The relay does
 * not own the descriptors. NULL if out of memory. */
struct relay *relay_new(struct event_base *base, int client_fd, int upstream_fd,
    char *scratch, unsigned idle_timeout_s, relay_done_cb done, void *arg);
/* Stops every event; frees R (NULL is fine). The callback does not run. */
void relay_free(struct relay *r);

/* Queues LEN bytes for the upstream ahead of anything read from the client
 * (bytes a client sent with its CONNECT, a ClientHello already read). */
int relay_push_upstream(struct relay *r, const void *data, size_t len);
/* Queues LEN bytes for the client (a response head). */
int relay_push_client(struct relay *r, const void *data, size_t len);

/* Starts relaying. With READ_CLIENT false, the client is not read until
 * relay_read_client() (the session is still reading it: a ClientHello). */
void relay_start(struct relay *r, bool read_client);
void relay_read_client(struct relay *r);

/* Reads at most BYTES more from the client, then stops reading it for
 * good: plain HTTP is one request per connection, so whatever a client
 * sends after its request's body is never passed on. */
void relay_limit_client(struct relay *r, uint64_t bytes);

/* Bytes written to the upstream and to the client so far. */
uint64_t relay_bytes_up(const struct relay *r);
uint64_t relay_bytes_down(const struct relay *r);

#endif
