/* The byte relay of one tunnel: client to upstream and back, with
 * back-pressure (a side stops reading while the other cannot take more),
 * half-close passed on, and an idle timeout. An idle tunnel holds no
 * buffer: bytes go through one pipe shared by the loop (splice, once a
 * direction carries a stream), or its scratch buffer, and only what a slow
 * peer has not taken yet is kept, in a buffer of its size.
 *
 * The relay runs on its owner's events: one read and one write event per
 * descriptor, made once for the connection's whole life, so handing a
 * descriptor from the owner's reading to the relay's changes no epoll
 * registration. The owner's callbacks pass readiness on with
 * relay_readable() and relay_writable() once the relay runs. */
#ifndef CORRAL_RELAY_H
#define CORRAL_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

struct event;
struct relay;

#define RELAY_CHUNK_BYTES (64 * 1024)   /* one read; the scratch buffer's size */
/* A direction is copied through the scratch buffer until one read brings
 * this much, then spliced: for the few bytes of a short exchange, two
 * splice calls through the pipe cost more than recv and send. */
#define RELAY_SPLICE_AFTER_BYTES (16 * 1024)

/* Why a relay ended. */
enum relay_end {
	RELAY_END_CLOSED = 0,           /* both sides finished cleanly */
	RELAY_END_IDLE,                 /* nothing moved for the idle timeout */
	RELAY_END_CLIENT_ERROR,         /* reading or writing the client failed */
	RELAY_END_UPSTREAM_ERROR,       /* reading or writing the upstream failed */
	RELAY_END_NOMEM,
};

/* Called once when the relay ends; its owner closes the connection
 * (from the loop: not inside this callback). */
typedef void (*relay_done_cb)(enum relay_end end, void *arg);

/* The descriptors and the owner's events a relay uses: read and write
 * events per descriptor (persistent reads, one-shot writes) and a timer. */
struct relay_io {
	int client_fd, upstream_fd;
	struct event *client_rd, *client_wr;
	struct event *upstream_rd, *upstream_wr;
	struct event *idle;
	int pipe_rd, pipe_wr;           /* the loop's shared pipe (empty between calls), or -1 */
	const struct timeval *idle_common;      /* the loop's common timeout of the idle time, or NULL */
};

/* One direction of the tunnel (the relay's own fields). */
struct relay_dir {
	struct relay *relay;
	int from, to;
	struct event *rd;               /* FROM readable */
	struct event *wr;               /* TO writable: only while PENDING holds bytes */
	char *pending;                  /* bytes read but not yet written */
	size_t pending_len, pending_off;
	bool eof;                       /* FROM said end of file */
	bool shut;                      /* TO was shut down for writing */
	bool held;                      /* not to be read yet: relay_read_client() */
	bool bulk;                      /* a read brought RELAY_SPLICE_AFTER_BYTES: splice */
	uint64_t budget;                /* bytes FROM may still send (UINT64_MAX: no limit) */
	uint64_t bytes;                 /* written to TO */
	enum relay_end fail;            /* what an error on this direction means */
};

/* A relay, embedded in its owner (the relay's own fields); all zero is a
 * relay that never ran, which relay_clear() and the byte counts accept. */
struct relay {
	char *scratch;
	int pipe_rd, pipe_wr;           /* -1: bytes are copied through SCRATCH */
	struct relay_dir up;            /* client -> upstream */
	struct relay_dir down;          /* upstream -> client */
	struct event *idle;
	struct timeval idle_tv;
	const struct timeval *idle_at;  /* what the idle timer is added with: IDLE_TV or the common one */
	bool active;                    /* something moved since the idle timer last fired */
	bool done;
	relay_done_cb done_cb;
	void *arg;
};

/* Sets R up between two connected non-blocking sockets on IO's events.
 * SCRATCH is a buffer of RELAY_CHUNK_BYTES shared by every relay of the
 * loop. Nothing is read or written before relay_start(). */
void relay_init(struct relay *r, const struct relay_io *io, char *scratch,
    unsigned idle_timeout_s, relay_done_cb done, void *arg);
/* Frees what R holds; the events and descriptors are the owner's. */
void relay_clear(struct relay *r);

/* Queues LEN bytes for the upstream ahead of anything read from the client
 * (bytes a client sent with its CONNECT, a ClientHello already read). */
int relay_push_upstream(struct relay *r, const void *data, size_t len);
/* Queues LEN bytes for the client (a response head). */
int relay_push_client(struct relay *r, const void *data, size_t len);

/* Starts relaying. With READ_CLIENT false, the client is not read until
 * relay_read_client() (the owner is still reading it: a ClientHello). */
void relay_start(struct relay *r, bool read_client);
void relay_read_client(struct relay *r);

/* Readiness from the owner's events: FD (the client's or the upstream's)
 * is readable, or writable; and the idle timer fired. */
void relay_readable(struct relay *r, int fd);
void relay_writable(struct relay *r, int fd);
void relay_idle_expired(struct relay *r);
/* The upstream was readable when its connect finished: reads it now if
 * the relay would (nothing waits for the client), not a pass of the loop
 * later. */
void relay_read_upstream_now(struct relay *r);

/* Reads at most BYTES more from the client, then stops reading it for
 * good: plain HTTP is one request per connection, so whatever a client
 * sends after its request's body is never passed on. */
void relay_limit_client(struct relay *r, uint64_t bytes);

/* Bytes written to the upstream and to the client so far. */
uint64_t relay_bytes_up(const struct relay *r);
uint64_t relay_bytes_down(const struct relay *r);

#endif
