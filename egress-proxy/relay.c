/* The relay: two directions, each a source descriptor, a sink descriptor
 * and the bytes the sink has not taken yet. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "egress-proxy/relay.h"

/* One direction of the tunnel. */
struct relay_dir {
	struct relay *relay;
	int from, to;
	struct event *rd;               /* FROM readable */
	struct event *wr;               /* TO writable: only while PENDING holds bytes */
	char *pending;                  /* bytes read but not yet written */
	size_t pending_len, pending_off;
	bool eof;                       /* FROM said end of file */
	bool shut;                      /* TO was shut down for writing */
	bool reading;                   /* RD is added */
	bool held;                      /* not to be read yet: relay_read_client() */
	uint64_t budget;                /* bytes FROM may still send (UINT64_MAX: no limit) */
	uint64_t bytes;                 /* written to TO */
	enum relay_end fail;            /* what an error on this direction means */
};

struct relay {
	struct event_base *base;
	char *scratch;
	struct relay_dir up;            /* client -> upstream */
	struct relay_dir down;          /* upstream -> client */
	struct event *idle;
	struct timeval idle_tv;
	bool active;                    /* something moved since the idle timer last fired */
	bool done;
	relay_done_cb done_cb;
	void *arg;
};

static void relay_on_read(evutil_socket_t fd, short what, void *arg);
static void relay_on_write(evutil_socket_t fd, short what, void *arg);

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

/* Passes a read end of file on as a write shutdown once nothing is pending. */
static void
relay_pass_eof(struct relay_dir *d)
{
	if (!d->eof || d->shut || d->pending_len > d->pending_off)
		return;
	shutdown(d->to, SHUT_WR);
	d->shut = true;
	relay_check_closed(d->relay);
}

static void
relay_set_reading(struct relay_dir *d, bool on)
{
	if (on == d->reading || d->eof || (on && d->held) || d->relay->done)
		return;
	d->reading = on;
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

static void
relay_on_read(evutil_socket_t fd, short what, void *arg)
{
	struct relay_dir *d = arg;
	struct relay *r = d->relay;
	size_t want = d->budget < RELAY_CHUNK_BYTES ? (size_t)d->budget : RELAY_CHUNK_BYTES;
	ssize_t n, w;

	if (want == 0) {
		/* Done with what this side may send: it is read no more, and
		 * the other end is not told (the answer is still to come). */
		relay_set_reading(d, false);
		d->eof = d->shut = true;
		relay_check_closed(r);
		return;
	}
	n = recv(d->from, r->scratch, want, 0);
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
	if ((w = relay_write_some(d, r->scratch, (size_t)n)) < 0) {
		relay_finish(r, d->fail);
		return;
	}
	if (w < n && relay_keep(d, r->scratch + w, (size_t)(n - w)) == -1)
		relay_finish(r, RELAY_END_NOMEM);
}

static void
relay_on_write(evutil_socket_t fd, short what, void *arg)
{
	struct relay_dir *d = arg;
	ssize_t w;

	if (d->relay->done)
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

static void
relay_on_idle(evutil_socket_t fd, short what, void *arg)
{
	struct relay *r = arg;

	if (!r->active) {
		relay_finish(r, RELAY_END_IDLE);
		return;
	}
	r->active = false;
	event_add(r->idle, &r->idle_tv);
}

static int
relay_dir_init(struct relay *r, struct relay_dir *d, int from, int to, enum relay_end fail)
{
	d->relay = r;
	d->budget = UINT64_MAX;
	d->from = from;
	d->to = to;
	d->fail = fail;
	d->rd = event_new(r->base, from, EV_READ | EV_PERSIST, relay_on_read, d);
	d->wr = event_new(r->base, to, EV_WRITE, relay_on_write, d);
	return d->rd != NULL && d->wr != NULL ? 0 : -1;
}

struct relay *
relay_new(struct event_base *base, int client_fd, int upstream_fd, char *scratch,
    unsigned idle_timeout_s, relay_done_cb done, void *arg)
{
	struct relay *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->base = base;
	r->scratch = scratch;
	r->done_cb = done;
	r->arg = arg;
	r->idle_tv.tv_sec = idle_timeout_s;
	r->idle = evtimer_new(base, relay_on_idle, r);
	if (r->idle == NULL ||
	    relay_dir_init(r, &r->up, client_fd, upstream_fd, RELAY_END_UPSTREAM_ERROR) == -1 ||
	    relay_dir_init(r, &r->down, upstream_fd, client_fd, RELAY_END_CLIENT_ERROR) == -1) {
		relay_free(r);
		return NULL;
	}
	return r;
}

static void
relay_dir_clear(struct relay_dir *d)
{
	if (d->rd != NULL)
		event_free(d->rd);
	if (d->wr != NULL)
		event_free(d->wr);
	free(d->pending);
}

void
relay_free(struct relay *r)
{
	if (r == NULL)
		return;
	relay_dir_clear(&r->up);
	relay_dir_clear(&r->down);
	if (r->idle != NULL)
		event_free(r->idle);
	free(r);
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
		relay_on_write(d->to, EV_WRITE, d);
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
		event_add(r->idle, &r->idle_tv);
}

void
relay_read_client(struct relay *r)
{
	r->up.held = false;
	relay_dir_start(&r->up, true);
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
