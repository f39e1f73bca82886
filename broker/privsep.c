/* corrald's privilege split, the broker's side: starting the monitor, the
 * stubs that ask it over the link (as OpenSSH's monitor_wrap.c), and the
 * broker's drop to the user corral. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sched.h>

#include <event2/event.h>

#include "broker/broker-seccomp.h"
#include "broker/monitor/monitor-wire.h"
#include "broker/monitor/monitor.h"
#include "broker/privsep.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "common/reason.h"
#include "common/xmalloc.h"

#define PRIVSEP_STOP_WAIT_MS 20000      /* the monitor's teardown of every sandbox */
#define PRIVSEP_STOP_POLL_MS 5
#define PRIVSEP_KEPT_CAP CAP_SYS_PTRACE /* /proc/PID/exe and ns of other users' processes */
#define PRIVSEP_CAP_NUMBERS_MAX 64
#define PRIVSEP_REAP_LIVE_MAX 1024     /* names in one REAP: 64 bytes each fit a message */
#define PRIVSEP_HELD_MAX_BYTES (1024 * 1024)    /* requests waiting for room on the link */

/* A request sent, waiting for its answer: the monitor answers in order. */
struct privsep_pending {
	privsep_reply_fn done;          /* NULL: a synchronous call waits for it */
	void *arg;
	int64_t sent_us;                /* when it was sent, for the round trip's time */
	struct privsep_pending *next;
};

/* An answer read by a synchronous call for an earlier asynchronous
 * request: its callback runs from the loop, never inside the call (it may
 * make calls of its own). */
struct privsep_ready {
	struct seqmsg *msg;
	privsep_reply_fn done;
	void *arg;
	struct privsep_ready *next;
};

/* A request the link had no room for yet (the monitor is busy and the
 * socket's buffer full): sent, in order, once there is room. */
struct privsep_held {
	struct privsep_held *next;
	uint32_t type;
	size_t n_fds;
	int fds[SEQMSG_FDS_MAX];        /* duplicates, owned: the caller's may close */
	size_t len;
	unsigned char body[];
};

struct privsep {
	int fd;                         /* the broker's end */
	pid_t pid;                      /* the monitor */
	struct monitor_hello hello;
	struct seqmsg *msg;      /* the answer being read */
	struct event *ev;               /* answers to asynchronous requests */
	struct event *deliver;          /* ... that a synchronous call read first */
	struct privsep_pending *head, *tail;
	struct privsep_ready *ready;    /* those answers, oldest first */
	struct privsep_held *held;      /* requests not sent yet, oldest first */
	size_t held_bytes;
	struct event *writable;         /* room on the link for them */
	bool gone;                      /* the monitor closed the link */
	struct event *lost_ev;          /* tells the broker so, from the loop */
	void (*lost)(void *arg);        /* privsep_on_lost() */
	void *lost_arg;
	void (*timed)(double seconds, void *arg);       /* privsep_on_answer() */
	void *timed_arg;
};

/* ---- The broker's end --------------------------------------------------- */

static void
privsep_enqueue(struct privsep *ps, privsep_reply_fn done, void *arg)
{
	struct privsep_pending *p = xcalloc(1, sizeof(*p));

	p->done = done;
	p->arg = arg;
	p->sent_us = time_now_us();
	if (ps->tail != NULL)
		ps->tail->next = p;
	else
		ps->head = p;
	ps->tail = p;
}

/* Takes the oldest request off the queue; its callback, or NULL for a
 * synchronous call (then *ARG is unset). */
static privsep_reply_fn
privsep_dequeue(struct privsep *ps, void **arg)
{
	struct privsep_pending *p = ps->head;
	privsep_reply_fn done;

	if (p == NULL)
		return NULL;
	ps->head = p->next;
	if (ps->head == NULL)
		ps->tail = NULL;
	done = p->done;
	*arg = p->arg;
	if (ps->timed != NULL)
		ps->timed((double)(time_now_us() - p->sent_us) / 1e6, ps->timed_arg);
	free(p);
	return done;
}

void
privsep_on_answer(struct privsep *ps, void (*fn)(double seconds, void *arg), void *arg)
{
	ps->timed = fn;
	ps->timed_arg = arg;
}

/* Runs the callbacks of answers a synchronous call read first. */
static void
privsep_deliver(evutil_socket_t fd, short what, void *arg)
{
	struct privsep *ps = arg;
	struct privsep_ready *r;

	while ((r = ps->ready) != NULL) {
		ps->ready = r->next;
		r->done(r->msg, r->arg);
		seqmsg_clear(r->msg);
		free(r->msg);
		free(r);
	}
}

/* Keeps ps->msg (and its descriptors) for DONE, to run from the loop. */
static void
privsep_defer(struct privsep *ps, privsep_reply_fn done, void *arg)
{
	struct privsep_ready *r = xcalloc(1, sizeof(*r)), **tail = &ps->ready;

	r->msg = xmalloc(sizeof(*r->msg));
	memcpy(r->msg, ps->msg, sizeof(*r->msg));
	ps->msg->n_fds = 0;             /* they moved with the copy */
	seqmsg_clear(ps->msg);
	r->done = done;
	r->arg = arg;
	while (*tail != NULL)
		tail = &(*tail)->next;
	*tail = r;
	if (ps->deliver != NULL)
		event_active(ps->deliver, EV_TIMEOUT, 0);
}

/* The monitor is gone: the broker hears it once, from the loop. */
static void
privsep_announce_lost(evutil_socket_t fd, short what, void *arg)
{
	struct privsep *ps = arg;

	(void)fd;
	(void)what;
	if (ps->lost != NULL)
		ps->lost(ps->lost_arg);
}

/* ---- Requests the link has no room for yet ---------------------------- */

static void
privsep_held_free(struct privsep_held *h)
{
	for (size_t i = 0; i < h->n_fds; i++)
		close(h->fds[i]);
	free(h);
}

/* Drops every request held (the monitor is gone). */
static void
privsep_drop_held(struct privsep *ps)
{
	struct privsep_held *h;

	while ((h = ps->held) != NULL) {
		ps->held = h->next;
		privsep_held_free(h);
	}
	ps->held_bytes = 0;
	if (ps->writable != NULL)
		event_del(ps->writable);
}

/* Sends the requests held, in order, while the link has room: 0 (some
 * may still wait), or -1 with errno when the link is lost. */
static int
privsep_flush(struct privsep *ps)
{
	struct privsep_held *h;

	while ((h = ps->held) != NULL) {
		if (seqmsg_send_raw(ps->fd, h->type, h->body, h->len, h->fds, h->n_fds) == -1)
			return errno == EAGAIN ? 0 : -1;
		ps->held = h->next;
		ps->held_bytes -= h->len;
		privsep_held_free(h);
	}
	if (ps->writable != NULL)
		event_del(ps->writable);
	return 0;
}

/* Keeps the request composed in PS's buffer, to send when the link has
 * room; its descriptors are duplicated, as the caller may close its own
 * (a client that hung up) before then. */
static int
privsep_hold(struct privsep *ps, char **err)
{
	const struct seqmsg *m = ps->msg;
	struct privsep_held *h = xmalloc(sizeof(*h) + m->len), **tail = &ps->held;
	int saved;

	h->next = NULL;
	h->type = m->type;
	h->len = m->len;
	memcpy(h->body, m->body, m->len);
	for (h->n_fds = 0; h->n_fds < m->n_fds; h->n_fds++) {
		if ((h->fds[h->n_fds] = fcntl(m->fds[h->n_fds], F_DUPFD_CLOEXEC, 0)) == -1) {
			saved = errno;
			privsep_held_free(h);
			return reason_set(err, "cannot keep the request for the monitor: %s",
			    strerror(saved));
		}
	}
	while (*tail != NULL)
		tail = &(*tail)->next;
	*tail = h;
	ps->held_bytes += h->len;
	if (ps->writable != NULL)
		event_add(ps->writable, NULL);
	return 0;
}

/* The monitor is gone: every asynchronous request hears it (MSG NULL). */
static void
privsep_lose(struct privsep *ps)
{
	privsep_reply_fn done;
	void *arg;

	privsep_drop_held(ps);
	privsep_deliver(-1, 0, ps);
	/* Once, and from the loop: this may run inside a synchronous call. */
	if (!ps->gone && ps->lost_ev != NULL)
		event_active(ps->lost_ev, 0, 0);
	ps->gone = true;
	if (ps->ev != NULL)
		event_del(ps->ev);
	while (ps->head != NULL)
		if ((done = privsep_dequeue(ps, &arg)) != NULL)
			done(NULL, arg);
}

/* Reads one answer into ps->msg: 1, 0 when none is there yet, -1 when
 * the monitor is gone (*ERR says how). */
static int
privsep_read(struct privsep *ps, char **err)
{
	int rc;

	seqmsg_clear(ps->msg);
	rc = seqmsg_recv(ps->fd, ps->msg);
	if (rc == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (rc != 1)
		return reason_set(err, "the monitor is gone (%s)",
		    rc == 0 ? "it closed the link" : strerror(errno));
	return 1;
}

/* The answer to a synchronous call that gave up waiting: read in its turn,
 * so that the link stays in step, and dropped. */
static void
privsep_late_answer(struct seqmsg *msg, void *arg)
{
	(void)arg;
	if (msg != NULL)
		log_warnx("monitor: an answer came after its call gave up waiting");
}

/* The synchronous call waiting (the one request queued without a
 * callback) gives up: its answer, when it comes, is dropped. The monitor
 * serves in order, and may be busy with many creates before it (each one
 * bounded, their sum not): that is no reason to lose the link, which would
 * stop corrald and every sandbox. */
static void
privsep_give_up(struct privsep *ps)
{
	for (struct privsep_pending *p = ps->head; p != NULL; p = p->next) {
		if (p->done == NULL) {
			p->done = privsep_late_answer;
			return;
		}
	}
}

/* Waits for the answer to the synchronous request just queued; answers
 * to earlier asynchronous ones are handed to their callbacks meanwhile,
 * and requests held (this one too) are sent as the link has room. */
static int
privsep_wait(struct privsep *ps, char **err)
{
	int64_t deadline_us = time_now_us() + (int64_t)PRIVSEP_REPLY_TIMEOUT_MS * 1000;
	struct pollfd p = { .fd = ps->fd };
	privsep_reply_fn done;
	int64_t left_ms;
	void *arg;
	int rc;

	for (;;) {
		left_ms = (deadline_us - time_now_us()) / 1000;
		p.events = POLLIN | (ps->held != NULL ? POLLOUT : 0);
		do {
			rc = poll(&p, 1, left_ms > 0 ? (int)left_ms : 0);
		} while (rc == -1 && errno == EINTR);
		if (rc == 1 && (p.revents & POLLOUT) && privsep_flush(ps) == -1) {
			reason_set(err, "cannot reach the monitor: %s", strerror(errno));
			privsep_lose(ps);
			return -1;
		}
		if (rc == 1 && !(p.revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)))
			continue;
		if (rc == 0) {
			privsep_give_up(ps);
			return reason_set(err, "the monitor did not answer within %d ms "
			    "(busy with the requests before it)", PRIVSEP_REPLY_TIMEOUT_MS);
		}
		if (rc == -1 || (rc = privsep_read(ps, err)) == -1) {
			privsep_lose(ps);
			return -1;
		}
		if (rc == 0)
			continue;
		if ((done = privsep_dequeue(ps, &arg)) == NULL)
			return 0;
		privsep_defer(ps, done, arg);
	}
}

/* Sends the message composed in PS's buffer, and clears it. When the link
 * has no room (the monitor is busy with one create while more come), the
 * message is held and goes, in order, once it has: up to
 * PRIVSEP_HELD_MAX_BYTES held, past which a request is refused unless it
 * MUST go: the CA that a create sent already waits for, root's creates,
 * and the small requests that connections or the loop's waiting bound.
 * Only other users' creates (up to 128 KB each) and the warm pool's can
 * be told the monitor is busy. */
static int
privsep_send(struct privsep *ps, bool must, char **err)
{
	int rc = -1;

	if (ps == NULL || ps->fd == -1 || ps->gone)
		reason_set(err, "the monitor is gone");
	else if (ps->msg->overflow)
		reason_set(err, "the request is too large");
	else if (ps->held == NULL && seqmsg_send(ps->fd, ps->msg) == 0)
		rc = 0;
	else if (ps->held == NULL && errno != EAGAIN)
		reason_set(err, "cannot reach the monitor: %s", strerror(errno));
	else if (!must && ps->held_bytes + ps->msg->len > PRIVSEP_HELD_MAX_BYTES)
		reason_set(err, "the monitor is busy with other requests: try again");
	else
		rc = privsep_hold(ps, err);
	if (ps != NULL) {
		/* Attached descriptors are the caller's, not the message's. */
		ps->msg->n_fds = 0;
		seqmsg_clear(ps->msg);
	}
	return rc;
}

/* Sends the composed request (held past the bound only if it MUST go);
 * DONE(ARG) takes its answer. */
static int
privsep_send_queued(struct privsep *ps, bool must, privsep_reply_fn done, void *arg,
    char **err)
{
	if (privsep_send(ps, must, err) == -1)
		return -1;
	privsep_enqueue(ps, done, arg);
	return 0;
}

static int
privsep_call(struct privsep *ps, char **err)
{
	/* One at a time (the loop waits): small, and always kept. */
	if (privsep_send_queued(ps, true, NULL, NULL, err) == -1)
		return -1;
	return privsep_wait(ps, err);
}

static void
privsep_on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct privsep *ps = arg;
	privsep_reply_fn done;
	char *err = NULL;
	void *cb_arg;
	int rc;

	while ((rc = privsep_read(ps, &err)) == 1) {
		/* A synchronous call reads its own answer: never this one. */
		if ((done = privsep_dequeue(ps, &cb_arg)) == NULL) {
			log_error("monitor: an answer nobody asked for");
			continue;
		}
		done(ps->msg, cb_arg);
	}
	if (rc == -1) {
		log_error("%s", err);
		privsep_lose(ps);
	}
	free(err);
}

/* Room on the link: the requests held go. */
static void
privsep_on_writable(evutil_socket_t fd, short what, void *arg)
{
	struct privsep *ps = arg;

	(void)fd;
	(void)what;
	if (privsep_flush(ps) == -1) {
		log_error("cannot reach the monitor: %s", strerror(errno));
		privsep_lose(ps);
	}
}

int
privsep_attach(struct privsep *ps, struct event_base *base)
{
	int flags = fcntl(ps->fd, F_GETFL);

	if (flags == -1 || fcntl(ps->fd, F_SETFL, flags | O_NONBLOCK) == -1)
		return -1;
	ps->ev = event_new(base, ps->fd, EV_READ | EV_PERSIST, privsep_on_readable, ps);
	ps->deliver = event_new(base, -1, 0, privsep_deliver, ps);
	ps->lost_ev = event_new(base, -1, 0, privsep_announce_lost, ps);
	ps->writable = event_new(base, ps->fd, EV_WRITE | EV_PERSIST, privsep_on_writable, ps);
	return ps->ev == NULL || ps->deliver == NULL || ps->lost_ev == NULL ||
	    ps->writable == NULL ||
	    event_add(ps->ev, NULL) == -1 ? -1 : 0;
}

void
privsep_on_lost(struct privsep *ps, void (*lost)(void *arg), void *arg)
{
	ps->lost = lost;
	ps->lost_arg = arg;
}

/* Why the answer MSG is not the one asked for: the monitor is gone
 * (NULL), its FAILED text, or a malformed answer. */
static const char *
privsep_refusal(struct seqmsg *msg)
{
	const char *text;

	if (msg == NULL)
		return "the monitor is gone";
	if (monitor_wire_text_decode(msg, MONITOR_FAILED, &text, NULL) == 0)
		return text;
	return "the monitor's answer is malformed";
}

/* Reads a create's answer MSG into OUT; -1 with the reason in *ERR. */
static int
privsep_built(struct privsep *ps, struct seqmsg *msg, struct monitor_built *out,
    char **err)
{
	if (msg == NULL || msg->type != MONITOR_BUILT)
		return reason_set(err, "%s", privsep_refusal(msg));
	if (monitor_wire_built_decode(msg, out) == -1)
		return reason_set(err, "the monitor's answer is malformed");
	out->map_fd = ps->hello.map_fd;
	return 0;
}

/* Who hears an asynchronous request's answer: the callback its decoder
 * (the reply function it was queued with) knows to call. */
struct privsep_asked {
	struct privsep *ps;
	union {
		privsep_built_fn built;
		privsep_done_fn done;
		privsep_socket_fn socket;
		privsep_firewall_fn firewall;
		privsep_owner_fn owner;
		privsep_reaped_fn reaped;
	} to;
	void *arg;
};

/* Sends the request composed in PS's buffer (held past the bound only if
 * it MUST go); DECODE reads its answer and tells ASKED. */
static int
privsep_ask(struct privsep *ps, bool must, privsep_reply_fn decode, struct privsep_asked asked,
    char **err)
{
	struct privsep_asked *c = xmalloc(sizeof(*c));

	*c = asked;
	c->ps = ps;
	if (privsep_send_queued(ps, must, decode, c, err) == -1) {
		free(c);
		return -1;
	}
	return 0;
}

static void
privsep_on_created(struct seqmsg *msg, void *arg)
{
	struct privsep_asked *c = arg;
	struct monitor_built b;
	char *err = NULL;

	if (privsep_built(c->ps, msg, &b, &err) == -1)
		c->to.built(NULL, err, c->arg);
	else
		c->to.built(&b, NULL, c->arg);
	free(err);
	free(c);
}

int
privsep_create_async(struct privsep *ps, const struct monitor_create *req, bool must,
    privsep_built_fn built, void *arg, char **err)
{
	monitor_wire_create_encode(ps->msg, req);
	return privsep_ask(ps, must, privsep_on_created,
	    (struct privsep_asked){ .to.built = built, .arg = arg }, err);
}

int
privsep_send_ca(struct privsep *ps, const char *pem, char **err)
{
	monitor_wire_text_encode(ps->msg, MONITOR_CREATE_CA, pem, -1);
	/* The monitor answers the CREATE only; it waits for this. */
	return privsep_send(ps, true, err);
}

/* A DONE answer: "" when the work is done, else why not. */
static void
privsep_on_done(struct seqmsg *msg, void *arg)
{
	struct privsep_asked *c = arg;
	const char *text = "the monitor is gone";

	if (msg != NULL && monitor_wire_text_decode(msg, MONITOR_DONE, &text, NULL) == -1)
		text = "the monitor's answer is malformed";
	c->to.done(text[0] != '\0' ? text : NULL, c->arg);
	free(c);
}

int
privsep_warm_async(struct privsep *ps, unsigned slot, privsep_done_fn done, void *arg,
    char **err)
{
	monitor_wire_warm_encode(ps->msg, slot);
	/* The pool refills later: it never holds past the bound. */
	return privsep_ask(ps, false, privsep_on_done,
	    (struct privsep_asked){ .to.done = done, .arg = arg }, err);
}

int
privsep_destroy_async(struct privsep *ps, const char *name, privsep_done_fn done, void *arg,
    char **err)
{
	monitor_wire_text_encode(ps->msg, MONITOR_DESTROY, name, -1);
	/* Small, and one per sandbox, which the shares bound. */
	return privsep_ask(ps, true, privsep_on_done,
	    (struct privsep_asked){ .to.done = done, .arg = arg }, err);
}

/* What a REAPED answer lists, gathered for one call. */
struct privsep_reaped_list {
	char **items;
	size_t n, cap;
};

static void
privsep_reaped_add(const char *what, void *arg)
{
	struct privsep_reaped_list *l = arg;

	if (l->n == l->cap) {
		l->cap = l->cap == 0 ? 16 : l->cap * 2;
		l->items = xreallocarray(l->items, l->cap, sizeof(*l->items));
	}
	l->items[l->n++] = xstrdup(what);
}

/* Tells DONE what the REAPED answer MSG (NULL: the monitor is gone) says. */
static void
privsep_reaped_tell(struct seqmsg *msg, privsep_reaped_fn done, void *arg)
{
	struct privsep_reaped_list l = { 0 };
	uint32_t count = 0;
	const char *why = NULL;

	if (msg == NULL)
		why = "the monitor is gone";
	else if (monitor_wire_list_decode(msg, MONITOR_REAPED, MONITOR_WIRE_REAPED_MAX, &count,
	    privsep_reaped_add, &l) == -1)
		why = "the monitor's answer is malformed";
	done(why == NULL ? count : 0, (const char *const *)l.items, l.n, why, arg);
	for (size_t i = 0; i < l.n; i++)
		free(l.items[i]);
	free(l.items);
}

static void
privsep_on_reaped(struct seqmsg *msg, void *arg)
{
	struct privsep_asked *c = arg;

	privsep_reaped_tell(msg, c->to.reaped, c->arg);
	free(c);
}

/* REAP's request for LIVE, composed in PS's buffer. */
static void
privsep_reap_encode(struct privsep *ps, const char *const *live, size_t nlive)
{
	/* Every sandbox the monitor built is live to it already; the list
	 * only adds names it does not know, up to what one message holds. */
	if (nlive > PRIVSEP_REAP_LIVE_MAX)
		nlive = PRIVSEP_REAP_LIVE_MAX;
	monitor_wire_list_encode(ps->msg, MONITOR_REAP, 0, live, nlive);
}

int
privsep_reap_async(struct privsep *ps, const char *const *live, size_t nlive,
    privsep_reaped_fn done, void *arg, char **err)
{
	privsep_reap_encode(ps, live, nlive);
	/* Root's: small, one at a time a connection. */
	return privsep_ask(ps, true, privsep_on_reaped,
	    (struct privsep_asked){ .to.reaped = done, .arg = arg }, err);
}

void
privsep_reap(struct privsep *ps, const char *const *live, size_t nlive,
    privsep_reaped_fn done, void *arg)
{
	char *err = NULL;

	privsep_reap_encode(ps, live, nlive);
	if (privsep_call(ps, &err) == -1)
		done(0, NULL, 0, err, arg);
	else
		privsep_reaped_tell(ps->msg, done, arg);
	free(err);
	seqmsg_clear(ps->msg);
}

static void
privsep_on_firewall(struct seqmsg *msg, void *arg)
{
	struct privsep_asked *c = arg;
	const char *text;

	if (msg == NULL)
		c->to.firewall(NULL, "the monitor is gone", c->arg);
	else if (monitor_wire_text_decode(msg, MONITOR_FIREWALL_IS, &text, NULL) == -1)
		c->to.firewall(NULL, "the monitor's answer is malformed", c->arg);
	else
		c->to.firewall(text, NULL, c->arg);
	free(c);
}

int
privsep_firewall_async(struct privsep *ps, privsep_firewall_fn done, void *arg, char **err)
{
	monitor_wire_text_encode(ps->msg, MONITOR_FIREWALL, "", -1);
	/* Small, and one per connection, which the shares bound. */
	return privsep_ask(ps, true, privsep_on_firewall,
	    (struct privsep_asked){ .to.firewall = done, .arg = arg }, err);
}

static void
privsep_on_owned(struct seqmsg *msg, void *arg)
{
	struct privsep_asked *c = arg;
	uid_t uid;
	gid_t gid;

	if (msg == NULL || msg->type != MONITOR_OWNED)
		c->to.owner(0, 0, privsep_refusal(msg), c->arg);
	else if (monitor_wire_owned_decode(msg, &uid, &gid) == -1)
		c->to.owner(0, 0, "the monitor's answer is malformed", c->arg);
	else
		c->to.owner(uid, gid, NULL, c->arg);
	free(c);
}

int
privsep_owner_async(struct privsep *ps, int caller_fd, const char *path, privsep_owner_fn done,
    void *arg, char **err)
{
	monitor_wire_text_encode(ps->msg, MONITOR_OWNER, path, caller_fd);
	/* Small, and root's alone. */
	return privsep_ask(ps, true, privsep_on_owned,
	    (struct privsep_asked){ .to.owner = done, .arg = arg }, err);
}

static void
privsep_on_netsock(struct seqmsg *msg, void *arg)
{
	struct privsep_asked *c = arg;
	const char *text;
	char *err = NULL;
	int fd = -1;

	if (msg == NULL || msg->type != MONITOR_NETSOCK_IS)
		reason_set(&err, "%s", privsep_refusal(msg));
	else if (monitor_wire_text_decode(msg, MONITOR_NETSOCK_IS, &text, &fd) == -1 || fd == -1)
		reason_set(&err, "the monitor's answer is malformed");
	c->to.socket(fd, err, c->arg);
	free(err);
	free(c);
}

int
privsep_sandbox_socket_async(struct privsep *ps, int caller_fd, const char *name,
    privsep_socket_fn done, void *arg, char **err)
{
	monitor_wire_text_encode(ps->msg, MONITOR_NETSOCK, name, caller_fd);
	/* Small, and one per connection, which the shares bound. */
	return privsep_ask(ps, true, privsep_on_netsock,
	    (struct privsep_asked){ .to.socket = done, .arg = arg }, err);
}

bool
privsep_gone(const struct privsep *ps)
{
	return ps->gone;
}

pid_t
privsep_pid(const struct privsep *ps)
{
	return ps->pid;
}

int
privsep_take_bypass_fd(struct privsep *ps)
{
	int fd = ps->hello.bypass_fd;

	ps->hello.bypass_fd = -1;
	return fd;
}

const struct monitor_hello *
privsep_hello(const struct privsep *ps)
{
	return &ps->hello;
}

struct privsep *
privsep_start(const struct monitor_setup *setup, char **err)
{
	struct privsep *ps;
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		reason_set(err, "socketpair: %s", strerror(errno));
		return NULL;
	}
	if ((pid = fork()) == -1) {
		reason_set(err, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return NULL;
	}
	if (pid == 0)
		monitor_run(sv[1], setup);
	close(sv[1]);
	ps = xcalloc(1, sizeof(*ps));
	ps->fd = sv[0];
	ps->pid = pid;
	ps->hello.map_fd = ps->hello.bypass_fd = -1;   /* until a HELLO names them */
	ps->msg = xmalloc(sizeof(*ps->msg));
	seqmsg_init(ps->msg, 0);
	if (privsep_wait(ps, err) == -1 || monitor_wire_hello_decode(ps->msg, &ps->hello) == -1) {
		reason_set(err, "the monitor did not start");
		privsep_stop(ps);
		return NULL;
	}
	seqmsg_clear(ps->msg);
	return ps;
}

void
privsep_stop(struct privsep *ps)
{
	struct timespec step = { 0, PRIVSEP_STOP_POLL_MS * 1000000L };
	int status;

	if (ps == NULL)
		return;
	privsep_lose(ps);
	if (ps->ev != NULL)
		event_free(ps->ev);
	if (ps->deliver != NULL)
		event_free(ps->deliver);
	if (ps->lost_ev != NULL)
		event_free(ps->lost_ev);
	if (ps->writable != NULL)
		event_free(ps->writable);
	if (ps->fd != -1)
		close(ps->fd);
	if (ps->hello.map_fd != -1)
		close(ps->hello.map_fd);
	if (ps->hello.bypass_fd != -1)
		close(ps->hello.bypass_fd);
	/* The monitor tears down and exits: wait, so that when corrald is
	 * gone its kernel objects are too. */
	for (int waited = 0; waited < PRIVSEP_STOP_WAIT_MS; waited += PRIVSEP_STOP_POLL_MS) {
		if (waitpid(ps->pid, &status, WNOHANG) != 0)
			break;
		nanosleep(&step, NULL);
	}
	seqmsg_clear(ps->msg);
	free(ps->msg);
	free(ps);
}

/* ---- The broker's drop -------------------------------------------------- */

int
privsep_user(const char *user, uid_t *uid, gid_t *gid, char **err)
{
	const struct passwd *pw = getpwnam(user);

	if (pw == NULL)
		return reason_set(err, "the user '%s' does not exist: create it (useradd --system "
		    "--user-group --no-create-home --shell /usr/sbin/nologin %s) or name another "
		    "with `user:` in the config", user, user);
	if (pw->pw_uid == 0 || pw->pw_gid == 0)
		return reason_set(err, "the user '%s' is root: the broker must not be", user);
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

static int
privsep_capset(uint32_t keep)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { { keep, keep, 0 }, { 0, 0, 0 } };

	return (int)syscall(SYS_capset, &hdr, data);
}

/* Only CAP_SYS_PTRACE is left in the bounding set, and nothing ambient. */
static int
privsep_bound(void)
{
	for (int cap = 0; cap < PRIVSEP_CAP_NUMBERS_MAX; cap++)
		if (cap != PRIVSEP_KEPT_CAP && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1 &&
		    errno != EINVAL)
			return -1;
	return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

/* Checks the drop held: every uid and gid USER's, no way back to root. */
static int
privsep_verify(uid_t uid, gid_t gid)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;

	if (getresuid(&r, &e, &s) == -1 || getresgid(&rg, &eg, &sg) == -1)
		return -1;
	if (r != uid || e != uid || s != uid || rg != gid || eg != gid || sg != gid ||
	    setuid(0) == 0 || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

int
privsep_drop(const char *user, char **err)
{
	uid_t uid;
	gid_t gid;

	if (privsep_user(user, &uid, &gid, err) == -1)
		return -1;
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == -1 || privsep_bound() == -1 ||
	    setgroups(1, &gid) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1)
		return reason_set(err, "cannot become %s: %s", user, strerror(errno));
	if (privsep_capset(1u << PRIVSEP_KEPT_CAP) == -1 ||
	    prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) == -1 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 || privsep_verify(uid, gid) == -1)
		return reason_set(err, "cannot drop privileges to %s: %s", user, strerror(errno));
	if (broker_seccomp_install() == -1)
		return reason_set(err, "cannot install the broker's seccomp filter");
	return 0;
}
