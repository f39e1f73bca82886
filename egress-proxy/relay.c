/* The relay: two directions, each a source descriptor, a sink descriptor
 * and the bytes the sink has not taken yet. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "egress-proxy/relay.h"

#define RELAY_MOVE_BROKEN (-2)          /* relay_splice: the tunnel failed (no errno) */

static void
relay_finish(struct relay *r, enum relay_end end)
{
	if (r->done)
		return;
	r->done = true;
	event_del(r->up.rd);
	event_del(r->up.wr);
	event_del(r->down.rd);
	event_del(r->down.wr);
	event_del(r->idle);
	r->done_cb(end, r->arg);
}

/* Both directions ended and flushed: the tunnel is over. */
static void
relay_check_closed(struct relay *r)
{
	if (r->up.shut && r->down.shut)
		relay_finish(r, RELAY_END_CLOSED);
}

static struct relay_dir *
relay_other(struct relay_dir *d)
{
	return d == &d->relay->up ? &d->relay->down : &d->relay->up;
}

/* Passes a read end of file on as a write shutdown once nothing is
 * pending. The last direction to end needs none: the tunnel is over, and
 * closing its descriptors sends the same FIN. */
static void
relay_pass_eof(struct relay_dir *d)
{
	if (!d->eof || d->shut || d->pending_len > d->pending_off)
		return;
	if (!relay_other(d)->shut)
		shutdown(d->to, SHUT_WR);
	d->shut = true;
	relay_check_closed(d->relay);
}

/* Adding an added event or deleting a deleted one changes nothing, so
 * the event itself says whether FROM is read (its owner may have added it). */
static void
relay_set_reading(struct relay_dir *d, bool on)
{
	if (d->eof || (on && d->held) || d->relay->done)
		return;
	if (on)
		event_add(d->rd, NULL);
	else
		event_del(d->rd);
}

static int relay_push(struct relay_dir *d, const void *data, size_t len);

/* Keeps the LEN bytes at DATA that TO did not take; reading stops until
 * they are written (back-pressure). */
static int
relay_keep(struct relay_dir *d, const char *data, size_t len)
{
	if (relay_push(d, data, len) == -1)
		return -1;
	relay_set_reading(d, false);
	event_add(d->wr, NULL);
	return 0;
}

/* Writes as much of LEN bytes at DATA to TO as it takes now; returns the
 * count written, or -1 on a real error. */
static ssize_t
relay_write_some(struct relay_dir *d, const char *data, size_t len)
{
	ssize_t n = send(d->to, data, len, MSG_NOSIGNAL);

	if (n >= 0) {
		d->bytes += (uint64_t)n;
		d->relay->active = true;
		return n;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return 0;
	return -1;
}

/* Empties the shared pipe: it carries the next tunnel's bytes next, so
 * nothing of this one may stay in it. */
static void
relay_drain_pipe(struct relay *r)
{
	while (read(r->pipe_rd, r->scratch, RELAY_CHUNK_BYTES) > 0)
		;
}

/* Moves up to WANT bytes from FROM to TO through the shared pipe, with no
 * copy through user space (splice(2): half the CPU of recv and send per
 * byte); what TO does not take now is read out of the pipe and kept. The
 * count read, 0 at end of file, -1 with errno, RELAY_MOVE_BROKEN when the
 * tunnel fails. */
static ssize_t
relay_splice(struct relay_dir *d, size_t want)
{
	struct relay *r = d->relay;
	ssize_t n, w;

	n = splice(d->from, NULL, r->pipe_wr, NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n <= 0)
		return n;
	w = splice(r->pipe_rd, NULL, d->to, NULL, (size_t)n, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		relay_drain_pipe(r);
		return RELAY_MOVE_BROKEN;
	}
	if (w < 0)
		w = 0;
	d->bytes += (uint64_t)w;
	r->active = true;
	if (w == n)
		return n;
	if (read(r->pipe_rd, r->scratch, (size_t)(n - w)) != n - w) {
		relay_drain_pipe(r);
		return RELAY_MOVE_BROKEN;
	}
	return relay_keep(d, r->scratch, (size_t)(n - w)) == -1 ? RELAY_MOVE_BROKEN : n;
}

/* Reads up to WANT bytes of FROM: into the scratch buffer (*COPIED), or,
 * once the direction carries a stream and with the loop's pipe, straight
 * on to TO. */
static ssize_t
relay_move(struct relay_dir *d, size_t want, bool *copied)
{
	struct relay *r = d->relay;
	ssize_t n;

	*copied = !d->bulk || r->pipe_rd == -1;
	if (!*copied)
		return relay_splice(d, want);
	n = recv(d->from, r->scratch, want, 0);
	if (n >= RELAY_SPLICE_AFTER_BYTES)
		d->bulk = true;
	return n;
}

static void
relay_on_read(struct relay_dir *d)
{
	struct relay *r = d->relay;
	size_t want = d->budget < RELAY_CHUNK_BYTES ? (size_t)d->budget : RELAY_CHUNK_BYTES;
	bool copied;
	ssize_t n, w;

	if (want == 0) {
		/* Done with what this side may send: it is read no more, and
		 * the other end is not told (the answer is still to come). */
		relay_set_reading(d, false);
		d->eof = d->shut = true;
		relay_check_closed(r);
		return;
	}
	n = relay_move(d, want, &copied);
	if (n == RELAY_MOVE_BROKEN) {
		relay_finish(r, d->fail);
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			relay_finish(r, d == &r->up ? RELAY_END_CLIENT_ERROR :
			    RELAY_END_UPSTREAM_ERROR);
		return;
	}
	r->active = true;
	if (d->budget != UINT64_MAX)
		d->budget -= (uint64_t)n;
	if (n == 0) {
		relay_set_reading(d, false);
		d->eof = true;
		relay_pass_eof(d);
		return;
	}
	if (!copied)
		return;                 /* relay_move() spliced it on already */
	if ((w = relay_write_some(d, r->scratch, (size_t)n)) < 0) {
		relay_finish(r, d->fail);
		return;
	}
	if (w < n && relay_keep(d, r->scratch + w, (size_t)(n - w)) == -1)
		relay_finish(r, RELAY_END_NOMEM);
}

static void
relay_on_write(struct relay_dir *d)
{
	ssize_t w;

	/* Nothing pending: a write event left from the dial, nothing to do. */
	if (d->relay->done || d->pending_len == d->pending_off)
		return;
	w = relay_write_some(d, d->pending + d->pending_off, d->pending_len - d->pending_off);
	if (w < 0) {
		relay_finish(d->relay, d->fail);
		return;
	}
	d->pending_off += (size_t)w;
	if (d->pending_off < d->pending_len) {
		event_add(d->wr, NULL);
		return;
	}
	/* Flushed: drop the buffer so an idle tunnel holds none. */
	free(d->pending);
	d->pending = NULL;
	d->pending_len = d->pending_off = 0;
	relay_set_reading(d, true);
	relay_pass_eof(d);
}

void
relay_idle_expired(struct relay *r)
{
	if (r->done)
		return;
	if (!r->active) {
		relay_finish(r, RELAY_END_IDLE);
		return;
	}
	r->active = false;
	event_add(r->idle, r->idle_at);
}

static void
relay_dir_init(struct relay *r, struct relay_dir *d, int from, int to, enum relay_end fail)
{
	d->relay = r;
	d->budget = UINT64_MAX;
	d->from = from;
	d->to = to;
	d->fail = fail;
}

void
relay_init(struct relay *r, const struct relay_io *io, char *scratch,
    unsigned idle_timeout_s, relay_done_cb done, void *arg)
{
	memset(r, 0, sizeof(*r));
	r->scratch = scratch;
	r->pipe_rd = io->pipe_rd;
	r->pipe_wr = io->pipe_wr;
	r->done_cb = done;
	r->arg = arg;
	r->idle = io->idle;
	r->idle_tv.tv_sec = idle_timeout_s;
	r->idle_at = io->idle_common != NULL ? io->idle_common : &r->idle_tv;
	relay_dir_init(r, &r->up, io->client_fd, io->upstream_fd, RELAY_END_UPSTREAM_ERROR);
	r->up.rd = io->client_rd;
	r->up.wr = io->upstream_wr;
	relay_dir_init(r, &r->down, io->upstream_fd, io->client_fd, RELAY_END_CLIENT_ERROR);
	r->down.rd = io->upstream_rd;
	r->down.wr = io->client_wr;
}

void
relay_clear(struct relay *r)
{
	free(r->up.pending);
	free(r->down.pending);
	r->up.pending = r->down.pending = NULL;
}

/* Queues bytes on D without writing them yet: relay_start() flushes. */
static int
relay_push(struct relay_dir *d, const void *data, size_t len)
{
	size_t held = d->pending_len - d->pending_off;
	char *p;

	if (len == 0)
		return 0;
	if ((p = malloc(held + len)) == NULL)
		return -1;
	if (held > 0)
		memcpy(p, d->pending + d->pending_off, held);
	memcpy(p + held, data, len);
	free(d->pending);
	d->pending = p;
	d->pending_off = 0;
	d->pending_len = held + len;
	return 0;
}

int
relay_push_upstream(struct relay *r, const void *data, size_t len)
{
	return relay_push(&r->up, data, len);
}

int
relay_push_client(struct relay *r, const void *data, size_t len)
{
	return relay_push(&r->down, data, len);
}

/* Starts D: writes what was pushed first, else reads. The socket is
 * almost always writable now, so the write is tried at once rather than a
 * pass of the loop later (a CONNECT's 200 reaches the client sooner). */
static void
relay_dir_start(struct relay_dir *d, bool read)
{
	if (d->relay->done)
		return;
	if (d->pending_len > d->pending_off)
		relay_on_write(d);
	else if (read)
		relay_set_reading(d, true);
}

void
relay_start(struct relay *r, bool read_client)
{
	r->up.held = !read_client;
	relay_dir_start(&r->down, true);
	relay_dir_start(&r->up, read_client);
	if (r->idle_tv.tv_sec > 0)
		event_add(r->idle, r->idle_at);
}

void
relay_read_client(struct relay *r)
{
	r->up.held = false;
	relay_dir_start(&r->up, true);
}

void
relay_readable(struct relay *r, int fd)
{
	relay_on_read(fd == r->up.from ? &r->up : &r->down);
}

void
relay_read_upstream_now(struct relay *r)
{
	struct relay_dir *d = &r->down;

	if (r->done || d->eof || d->pending_len > d->pending_off)
		return;
	relay_on_read(d);
}

void
relay_writable(struct relay *r, int fd)
{
	relay_on_write(fd == r->up.to ? &r->up : &r->down);
}

void
relay_limit_client(struct relay *r, uint64_t bytes)
{
	r->up.budget = bytes;
}

uint64_t
relay_bytes_up(const struct relay *r)
{
	return r->up.bytes;
}

uint64_t
relay_bytes_down(const struct relay *r)
{
	return r->down.bytes;
}
