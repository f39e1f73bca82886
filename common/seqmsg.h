/* One message per datagram of a SOCK_SEQPACKET socket, with descriptors
 * beside it by SCM_RIGHTS: the codec of corrald's links between its own
 * processes (the exec channel to corral-init, common/initproto.h, and the
 * monitor's link, broker/monitor/monitor-wire.h).
 *
 * A message is a 32-bit type, then fields in the order its type fixes:
 * numbers as 32-bit host-order words, text as a 32-bit length (NUL
 * included) and the bytes. Both ends are on one machine, so host order is
 * the order. A reader refuses whole any message that is short, long,
 * truncated, holds text without its NUL or with one inside, or brings
 * another number of descriptors than its type says. Library-like: nothing
 * here logs. */
#ifndef CORRAL_SEQMSG_H
#define CORRAL_SEQMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEQMSG_MAX_BYTES (128 * 1024)   /* one datagram, under the socket buffer */
#define SEQMSG_FDS_MAX 64               /* descriptors in one message */
#define SEQMSG_TYPE_MAX 255             /* types 1..255: the exec channel's, then the monitor's */

/* One message being built or read. Received descriptors belong to it until
 * taken (seqmsg_take_fd) and are closed by seqmsg_clear. */
struct seqmsg {
	uint32_t type;
	size_t len;                     /* bytes of body */
	size_t off;                     /* read cursor into body */
	bool overflow;                  /* a put did not fit */
	size_t n_fds;
	int fds[SEQMSG_FDS_MAX];
	unsigned char body[SEQMSG_MAX_BYTES];
};

/* Starts an empty message of TYPE. */
void seqmsg_init(struct seqmsg *m, uint32_t type);
/* Closes the descriptors M still owns and empties it. */
void seqmsg_clear(struct seqmsg *m);
/* Appends a field; a message that overflows is refused by seqmsg_send. */
void seqmsg_put_u32(struct seqmsg *m, uint32_t v);
void seqmsg_put_str(struct seqmsg *m, const char *s);
/* Attaches FD (not owned: the caller keeps and closes it). */
void seqmsg_put_fd(struct seqmsg *m, int fd);
/* Reads the next field; -1 (EBADMSG) when the body has no such field. */
int seqmsg_get_u32(struct seqmsg *m, uint32_t *v);
int seqmsg_get_str(struct seqmsg *m, const char **s);
/* -1 (EBADMSG) unless the whole body was read and N_FDS came with it. */
int seqmsg_get_end(const struct seqmsg *m, size_t n_fds);
/* Moves received descriptor I out of M (then the caller closes it). */
int seqmsg_take_fd(struct seqmsg *m, size_t i);

/* Sends M as one datagram on SOCK. 0, or -1 with errno. */
int seqmsg_send(int sock, const struct seqmsg *m);
/* The same for a message kept elsewhere: TYPE, the LEN bytes of BODY and
 * N_FDS descriptors of FDS (not owned). */
int seqmsg_send_raw(int sock, uint32_t type, const void *body, size_t len, const int *fds,
    size_t n_fds);
/* Receives one datagram into M (descriptors close-on-exec). 1 on a message,
 * 0 when the peer closed (or sent an empty datagram, which no end does),
 * -1 with errno (EBADMSG for a truncated one, an empty one that brought
 * descriptors, or a type outside 1..SEQMSG_TYPE_MAX; EAGAIN on a
 * non-blocking socket with nothing to read). Whatever descriptors came
 * with a datagram that is not a message are closed. Receivers check the
 * types they expect. */
int seqmsg_recv(int sock, struct seqmsg *m);

#endif
