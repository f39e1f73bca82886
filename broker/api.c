/* The control socket's connections: read one framed request, check who
 * asks, run its handler, write the framed response. A peer that sends
 * something unexpected loses its connection. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "broker/api.h"
#include "broker/forward.h"
#include "broker/conf.h"
#include "broker/daemon.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xmalloc.h"

/* What one user of the control socket holds now: its share. */
struct api_user {
	uid_t uid;
	unsigned conns;                 /* connections not yet answered or handed over */
	unsigned streams;               /* streams they hold */
	size_t held;                    /* bytes of their requests read but not yet whole */
	struct api_user *next;
};

struct api_conn {
	struct api *api;
	struct bufferevent *bev;
	struct frame_decoder *frames;
	struct sandbox_caller caller;
	struct api_user *user;
	size_t held;                    /* this connection's part of user->held */
	bool answered;                  /* close once the answer is written */
	struct api_pending *pending;    /* a reply that comes later, or NULL */
	struct api_conn *prev, *next;
};

/* A stream's part of its user's share; outlives the api at shutdown
 * (the streams end after it), with api NULL then. */
struct api_slot {
	struct api *api;
	struct api_user *user;
	void (*close)(void *arg);       /* ends the stream at shutdown; NULL: none given */
	void *close_arg;
	struct api_slot *prev, *next;
};

/* A reply promised to a connection; the connection may go first. */
struct api_pending {
	struct api_conn *conn;          /* NULL once the client left */
};

struct api {
	struct daemon *daemon;
	struct evconnlistener *listener;
	char *path;
	unsigned nconns;
	struct api_conn *conns;
	struct api_user *users;         /* those holding a connection or a stream */
	unsigned nstreams;
	struct api_slot *slots;
	struct event *accept_again;     /* out of descriptors: accept after a pause */
};

/* The requests this daemon answers; others get an "unavailable" error. */
static const struct {
	Corral__Request__RequestCase which;
	api_handler handler;
} api_handlers[] = {
	{ CORRAL__REQUEST__REQUEST_METRICS, api_metrics },
	{ CORRAL__REQUEST__REQUEST_RELOAD, api_reload },
	{ CORRAL__REQUEST__REQUEST_POLICY_GET, api_policy_get },
	{ CORRAL__REQUEST__REQUEST_POLICY_SET, api_policy_set },
	{ CORRAL__REQUEST__REQUEST_POLICY_UPDATE, api_policy_update },
	{ CORRAL__REQUEST__REQUEST_DENIALS, api_denials },
	{ CORRAL__REQUEST__REQUEST_SANDBOX_GET, api_sandbox_get },
	{ CORRAL__REQUEST__REQUEST_SANDBOX_LIST, api_sandbox_list },
	{ CORRAL__REQUEST__REQUEST_RUN_ACK, api_run_ack },
	{ CORRAL__REQUEST__REQUEST_RUN_INTERRUPT, api_run_interrupt },
	{ CORRAL__REQUEST__REQUEST_RUN_LIST, api_run_list },
	{ CORRAL__REQUEST__REQUEST_FORWARD_LIST, api_forward_list },
	{ CORRAL__REQUEST__REQUEST_SECRET_LIST, api_secret_list },
};

/* Requests answered later, once work elsewhere (a sandbox, the monitor) is done. */
static const struct {
	Corral__Request__RequestCase which;
	api_deferred_handler handler;
} api_deferred[] = {
	{ CORRAL__REQUEST__REQUEST_SANDBOX_CREATE, api_sandbox_create },
	{ CORRAL__REQUEST__REQUEST_SANDBOX_DELETE, api_sandbox_delete },
	{ CORRAL__REQUEST__REQUEST_REAP, api_reap },
	{ CORRAL__REQUEST__REQUEST_STATUS, api_status },
	{ CORRAL__REQUEST__REQUEST_FS_READ, api_fs },
	{ CORRAL__REQUEST__REQUEST_FS_WRITE, api_fs },
	{ CORRAL__REQUEST__REQUEST_FS_EDIT, api_fs },
	{ CORRAL__REQUEST__REQUEST_FS_LIST, api_fs },
	{ CORRAL__REQUEST__REQUEST_FS_GREP, api_fs },
};

/* Requests that take their connection over: streams. */
static const struct {
	Corral__Request__RequestCase which;
	api_attach_fn attach;
} api_attachers[] = {
	{ CORRAL__REQUEST__REQUEST_EXEC_START, api_exec_attach },
	{ CORRAL__REQUEST__REQUEST_RUN_START, api_run_attach },
	{ CORRAL__REQUEST__REQUEST_RUN_RESUME, api_run_attach },
	{ CORRAL__REQUEST__REQUEST_LOGS, api_logs_attach },
	{ CORRAL__REQUEST__REQUEST_FORWARD_OPEN, api_forward_open_attach },
	{ CORRAL__REQUEST__REQUEST_FORWARD_CONNECT, api_forward_connect_attach },
};

void
api_error(Corral__Response *resp, const char *code, const char *fmt, ...)
{
	Corral__Error *e = xmalloc(sizeof(*e));
	va_list ap;
	char *msg;

	corral__error__init(e);
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("out of memory");
	va_end(ap);
	e->code = xstrdup(code);
	e->message = msg;
	api_response_clear(resp);
	resp->response_case = CORRAL__RESPONSE__RESPONSE_ERROR;
	resp->error = e;
}

void
api_response_clear(Corral__Response *resp)
{
	Corral__Response *copy;

	if (resp->response_case == CORRAL__RESPONSE__RESPONSE__NOT_SET)
		return;
	/* free_unpacked frees the message itself: hand it a heap copy. */
	copy = xmalloc(sizeof(*copy));
	*copy = *resp;
	corral__response__free_unpacked(copy, NULL);
	corral__response__init(resp);
}

/* The share record of UID, made when missing. */
static struct api_user *
api_user_of(struct api *a, uid_t uid)
{
	struct api_user *u;

	for (u = a->users; u != NULL; u = u->next)
		if (u->uid == uid)
			return u;
	u = xcalloc(1, sizeof(*u));
	u->uid = uid;
	u->next = a->users;
	a->users = u;
	return u;
}

/* Answers C with a "limit" error naming the share, and closes it once written. */
static void
api_refuse_share(struct api_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* U's record goes once it holds neither a connection nor a stream. */
static void
api_user_drop_unused(struct api *a, struct api_user *u)
{
	struct api_user **pp;

	if (u->conns > 0 || u->streams > 0)
		return;
	for (pp = &a->users; *pp != NULL; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	free(u);
}

/* C lets go of its part of its user's share. */
static void
api_user_release(struct api_conn *c)
{
	struct api_user *u = c->user;

	if (u == NULL)
		return;
	u->held -= c->held;
	c->held = 0;
	c->user = NULL;
	u->conns--;
	api_user_drop_unused(c->api, u);
}

/* A slot among the streams for C's user, or NULL (C told why, "limit"):
 * a user other than root holds shares.streams at most, and never the
 * streams kept for root. */
static struct api_slot *
api_slot_take(struct api_conn *c)
{
	struct api *a = c->api;
	unsigned share = a->daemon->cfg->shares.streams;
	uid_t uid = c->caller.uid;
	struct api_slot *slot;

	if (a->nstreams >= API_STREAMS_MAX || (uid != 0 &&
	    a->nstreams >= API_STREAMS_MAX - API_ROOT_STREAMS)) {
		api_refuse_share(c, "corrald holds %u exec, run and logs streams, its most%s; try again "
		    "once some end", a->nstreams, uid != 0 ? " for users other than root" : "");
		return NULL;
	}
	if (uid != 0 && c->user->streams >= share) {
		api_refuse_share(c, "you already hold %u exec, run and logs streams, your share "
		    "(shares.streams in corrald.yaml); end some", c->user->streams);
		return NULL;
	}
	slot = xcalloc(1, sizeof(*slot));
	slot->api = a;
	slot->user = c->user;
	slot->next = a->slots;
	if (a->slots != NULL)
		a->slots->prev = slot;
	a->slots = slot;
	c->user->streams++;
	a->nstreams++;
	return slot;
}

void
api_slot_on_close(struct api_slot *slot, void (*close)(void *arg), void *arg)
{
	slot->close = close;
	slot->close_arg = arg;
}

void
api_slot_release(struct api_slot *slot)
{
	struct api *a;

	if (slot == NULL)
		return;
	if ((a = slot->api) != NULL) {
		if (slot->prev != NULL)
			slot->prev->next = slot->next;
		else
			a->slots = slot->next;
		if (slot->next != NULL)
			slot->next->prev = slot->prev;
		a->nstreams--;
		slot->user->streams--;
		api_user_drop_unused(a, slot->user);
	}
	free(slot);
}

static void
api_conn_free(struct api_conn *c)
{
	struct api *a = c->api;

	api_user_release(c);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		a->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	a->nconns--;
	if (c->pending != NULL)
		c->pending->conn = NULL;
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	frame_decoder_free(c->frames);
	free(c);
}

/* Writes RESP as one frame; -1 when it cannot be packed. */
static int
api_send(struct api_conn *c, const Corral__Response *resp)
{
	size_t len;
	uint8_t *frame = wire_pack(&resp->base, &len);

	if (frame == NULL)
		return -1;
	bufferevent_write(c->bev, frame, len);
	free(frame);
	return 0;
}

static api_handler
api_find_handler(Corral__Request__RequestCase which)
{
	for (size_t i = 0; i < sizeof(api_handlers) / sizeof(api_handlers[0]); i++)
		if (api_handlers[i].which == which)
			return api_handlers[i].handler;
	return NULL;
}

static api_deferred_handler
api_find_deferred(Corral__Request__RequestCase which)
{
	for (size_t i = 0; i < sizeof(api_deferred) / sizeof(api_deferred[0]); i++)
		if (api_deferred[i].which == which)
			return api_deferred[i].handler;
	return NULL;
}

static api_attach_fn
api_find_attach(Corral__Request__RequestCase which)
{
	for (size_t i = 0; i < sizeof(api_attachers) / sizeof(api_attachers[0]); i++)
		if (api_attachers[i].which == which)
			return api_attachers[i].attach;
	return NULL;
}

/* Hands C's socket to a stream; the connection object goes away. */
static int
api_attach(struct api_conn *c, api_attach_fn attach, const Corral__Request *req)
{
	struct api_slot *slot;

	if ((slot = api_slot_take(c)) == NULL)
		return 0;
	api_user_release(c);
	frame_decoder_next(c->frames);
	attach(c->api->daemon, &c->caller, req, c->bev, c->frames, slot);
	c->bev = NULL;
	c->frames = NULL;
	return 1;
}

/* Starts a deferred request: C waits (reading nothing more) for its reply. */
static void
api_defer(struct api_conn *c, api_deferred_handler handler, const Corral__Request *req)
{
	struct api_pending *p = xcalloc(1, sizeof(*p));

	p->conn = c;
	c->pending = p;
	c->answered = true;
	bufferevent_set_timeouts(c->bev, NULL, NULL);
	handler(c->api->daemon, &c->caller, req, p);
}

void
api_pending_reply(struct api_pending *p, const Corral__Response *resp)
{
	struct timeval idle = { API_IDLE_TIMEOUT_S, 0 };
	struct api_conn *c = p->conn;

	free(p);
	if (c == NULL)
		return;
	/* Never freed here: the reply may come from inside the handler. The
	 * write callback closes it once written; a reply that could not be
	 * packed leaves it to the idle timeout. */
	c->pending = NULL;
	bufferevent_set_timeouts(c->bev, &idle, &idle);
	(void)api_send(c, resp);
}

static void
api_closing_on_write(struct bufferevent *bev, void *arg)
{
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		bufferevent_free(bev);
}

static void
api_closing_on_event(struct bufferevent *bev, short what, void *arg)
{
	bufferevent_free(bev);
}

/* Writes FRAME (taken; NULL: none could be packed) and closes BEV once
 * it is out. Takes BEV and FRAMES. */
static void
api_stream_close_after(struct bufferevent *bev, struct frame_decoder *frames, uint8_t *frame,
    size_t len)
{
	frame_decoder_free(frames);
	if (frame == NULL) {
		bufferevent_free(bev);
		return;
	}
	bufferevent_setcb(bev, NULL, api_closing_on_write, api_closing_on_event, NULL);
	bufferevent_disable(bev, EV_READ);
	bufferevent_enable(bev, EV_WRITE);
	bufferevent_write(bev, frame, len);
	free(frame);
}

void
api_stream_refuse(struct bufferevent *bev, struct frame_decoder *frames, const char *code,
    const char *message)
{
	size_t len;
	uint8_t *frame = wire_pack_error(code, message, &len);

	api_stream_close_after(bev, frames, frame, len);
}

void
api_stream_answer(struct bufferevent *bev, struct frame_decoder *frames,
    const Corral__Response *resp)
{
	size_t len;
	uint8_t *frame = wire_pack(&resp->base, &len);

	api_stream_close_after(bev, frames, frame, len);
}

/* Answers one request; -1 drops the connection, 1 says it was handed over. */
static int
api_dispatch(struct api_conn *c, const uint8_t *payload, size_t len)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	Corral__Request *req;
	const char *why = NULL;
	api_deferred_handler deferred;
	api_handler handler;
	api_attach_fn attach;
	int rc = 0;

	if ((req = wire_request_unpack(payload, len, &why)) == NULL) {
		api_error(&resp, WIRE_ERR_PROTOCOL, "%s", why != NULL ? why : "not a request");
		rc = -1;
	} else if ((attach = api_find_attach(req->request_case)) != NULL) {
		rc = api_attach(c, attach, req);
	} else if ((deferred = api_find_deferred(req->request_case)) != NULL) {
		api_defer(c, deferred, req);
	} else if ((handler = api_find_handler(req->request_case)) == NULL) {
		api_error(&resp, WIRE_ERR_UNAVAILABLE, "this corrald (%s) does not serve that "
		    "request yet", PACKAGE_VERSION);
	} else if (handler(c->api->daemon, &c->caller, req, &resp) == -1) {
		rc = -1;
	}
	if (resp.response_case != CORRAL__RESPONSE__RESPONSE__NOT_SET && api_send(c, &resp) == -1)
		rc = -1;
	api_response_clear(&resp);
	/* A create's secrets are in locked memory now: the frame that
	 * carried them goes no further. */
	if (req != NULL && req->request_case == CORRAL__REQUEST__REQUEST_SANDBOX_CREATE &&
	    req->sandbox_create->n_secrets > 0)
		explicit_bzero((void *)(uintptr_t)payload, len);
	if (req != NULL)
		corral__request__free_unpacked(req, NULL);
	if (rc != 1)
		c->answered = true;
	return rc;
}

enum frame_status
api_read_frame(struct evbuffer *in, struct frame_decoder *frames)
{
	enum frame_status st = frame_decoder_status(frames);
	size_t used;

	while (st == FRAME_NEED_MORE && evbuffer_get_length(in) > 0) {
		size_t chunk = evbuffer_get_contiguous_space(in);
		uint8_t *bytes = evbuffer_pullup(in, (ev_ssize_t)chunk);

		st = frame_decoder_feed(frames, bytes, chunk, &used);
		/* The decoder has them: the socket's copy is wiped before libevent
		 * frees it (a create's secrets come this way). */
		explicit_bzero(bytes, used);
		evbuffer_drain(in, used);
	}
	return st;
}

/* Answers C with a "limit" error naming the share, and closes it once written. */
static void
api_refuse_share(struct api_conn *c, const char *fmt, ...)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("out of memory");
	va_end(ap);
	api_error(&resp, WIRE_ERR_LIMIT, "%s", msg);
	free(msg);
	api_send(c, &resp);
	api_response_clear(&resp);
	c->answered = true;
	bufferevent_disable(c->bev, EV_READ);
}

/* Counts what C holds of a request not yet whole into its user's share;
 * true (C refused) when a user other than root holds more than its share:
 * many half-sent frames of one user cannot take the daemon's memory. */
static bool
api_over_share(struct api_conn *c)
{
	size_t now = frame_decoder_held(c->frames) +
	    evbuffer_get_length(bufferevent_get_input(c->bev));
	uint64_t share = c->api->daemon->cfg->shares.buffered_bytes;

	c->user->held = c->user->held - c->held + now;
	c->held = now;
	if (c->user->uid == 0 || c->user->held <= share)
		return false;
	log_warnx("uid %u holds %zu bytes of half-sent requests, over its share; refusing one",
	    (unsigned)c->user->uid, c->user->held);
	api_refuse_share(c, "your requests not yet whole hold %zu bytes, over your share of %llu "
	    "(shares.buffered_bytes in corrald.yaml); send whole requests", c->user->held,
	    (unsigned long long)share);
	api_user_release(c);
	return true;
}

static void
api_on_read(struct bufferevent *bev, void *arg)
{
	struct api_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	const uint8_t *payload;
	enum frame_status st;
	size_t len;

	while (!c->answered && (st = api_read_frame(in, c->frames)) != FRAME_NEED_MORE) {
		if (api_over_share(c))
			return;
		if (st != FRAME_READY) {
			Corral__Response resp = CORRAL__RESPONSE__INIT;

			api_error(&resp, WIRE_ERR_PROTOCOL, "%s", frame_decoder_error(c->frames));
			api_send(c, &resp);
			api_response_clear(&resp);
			c->answered = true;
			break;
		}
		payload = frame_decoder_payload(c->frames, &len);
		if (api_dispatch(c, payload, len) == 1) {
			api_conn_free(c);       /* the stream has its socket now */
			return;
		}
		frame_decoder_next(c->frames);
	}
	if (!c->answered && api_over_share(c))
		return;
	if (c->answered && c->pending == NULL &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		api_conn_free(c);
}

static void
api_on_write(struct bufferevent *bev, void *arg)
{
	struct api_conn *c = arg;

	if (c->answered && c->pending == NULL)
		api_conn_free(c);
}

static void
api_on_event(struct bufferevent *bev, short what, void *arg)
{
	api_conn_free(arg);
}

/* Reads who is on the other end; the kernel vouches for it. */
static int
api_peer(int fd, struct sandbox_caller *caller)
{
	struct ucred cred;
	socklen_t len = sizeof(cred), glen = sizeof(caller->groups);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return -1;
	caller->uid = cred.uid;
	caller->gid = cred.gid;
	caller->pid = cred.pid;
	caller->fd = fd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, caller->groups, &glen) == -1)
		return -1;
	caller->ngroups = glen / sizeof(caller->groups[0]);
	return 0;
}

/* True when PID lives in a pid namespace below corrald's: inside a
 * sandbox, whose processes may not drive the daemon. Unknown counts as
 * inside (fail closed). */
static bool
api_peer_in_sandbox(pid_t pid)
{
	/* corrald's own depth never changes: read once, not per connection
	 * (each read of a status file costs tens of microseconds). */
	static int mine = -1;
	pid_t ids[PROC_NS_DEPTH_MAX];
	int theirs;

	if (mine <= 0)
		mine = proc_ns_pids(0, ids, PROC_NS_DEPTH_MAX);
	theirs = proc_ns_pids(pid, ids, PROC_NS_DEPTH_MAX);
	return mine <= 0 || theirs <= 0 || theirs != mine;
}

/* Tells the client on FD why it is refused, in one frame. */
static void
api_refuse_fd(int fd, const char *code, const char *message)
{
	size_t len;
	uint8_t *frame = wire_pack_error(code, message, &len);

	if (frame != NULL)
		(void)send(fd, frame, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	free(frame);
}

/* True (FD told why) when UID may not open another connection: a user
 * other than root holds its share at most, and never the connections kept
 * for root, so no user locks out the others or root. */
static bool
api_refuse_over_count(struct api *a, uid_t uid, int fd)
{
	unsigned share = a->daemon->cfg->shares.connections, mine = 0;
	char msg[API_REFUSAL_MAX_BYTES];

	for (struct api_user *u = a->users; u != NULL; u = u->next)
		if (u->uid == uid)
			mine = u->conns;
	if (a->nconns >= API_CONNECTIONS_MAX || (uid != 0 &&
	    a->nconns >= API_CONNECTIONS_MAX - API_ROOT_CONNECTIONS)) {
		snprintf(msg, sizeof(msg), "corrald holds %u control connections, its most%s; try "
		    "again", a->nconns, uid != 0 ? " for users other than root" : "");
	} else if (uid != 0 && mine >= share) {
		snprintf(msg, sizeof(msg), "you already hold %u control connections, your share "
		    "(shares.connections in corrald.yaml); close some", mine);
	} else {
		return false;
	}
	log_warnx("uid %u: %s", (unsigned)uid, msg);
	api_refuse_fd(fd, WIRE_ERR_LIMIT, msg);
	return true;
}

/* Tells a process inside a sandbox why it is refused, in one frame. */
static void
api_refuse_sandboxed(int fd)
{
	api_refuse_fd(fd, WIRE_ERR_PERMISSION, "requests from inside a sandbox are refused");
}

static void
api_on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
    void *arg)
{
	struct api *a = arg;
	struct timeval idle = { API_IDLE_TIMEOUT_S, 0 };
	struct api_conn *c;

	c = xcalloc(1, sizeof(*c));
	c->api = a;
	if (api_peer(fd, &c->caller) == -1 || api_peer_in_sandbox(c->caller.pid)) {
		api_refuse_sandboxed(fd);
		free(c);
		close(fd);
		return;
	}
	if (api_refuse_over_count(a, c->caller.uid, fd)) {
		free(c);
		close(fd);
		return;
	}
	if ((c->frames = frame_decoder_new()) == NULL ||
	    (c->bev = bufferevent_socket_new(a->daemon->base, fd, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		frame_decoder_free(c->frames);
		free(c);
		close(fd);
		return;
	}
	a->nconns++;
	c->user = api_user_of(a, c->caller.uid);
	c->user->conns++;
	c->next = a->conns;
	if (a->conns != NULL)
		a->conns->prev = c;
	a->conns = c;
	bufferevent_setcb(c->bev, api_on_read, api_on_write, api_on_event, c);
	bufferevent_set_timeouts(c->bev, &idle, &idle);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

/* Removes a socket file left by a daemon that is gone; refuses to touch
 * anything else, or a socket someone still answers on. */
static int
api_remove_stale(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, alive;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		log_error("%s exists and is not a socket; not removing it", path);
		return -1;
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	alive = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	if (alive) {
		log_error("another daemon answers on %s", path);
		return -1;
	}
	return unlink(path);
}

int
api_listen(const char *path, gid_t group)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, rc;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_error("control socket path too long: %s", path);
		return -1;
	}
	if (api_remove_stale(path) == -1)
		return -1;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	/* Made with its mode, and its group set without following a link:
	 * nothing here acts on a path someone could swap. */
	old = umask(0777 & ~API_SOCKET_MODE);
	rc = fd == -1 ? -1 : bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (rc == -1 || listen(fd, API_LISTEN_BACKLOG) == -1 ||
	    (group != (gid_t)-1 && lchown(path, (uid_t)-1, group) == -1)) {
		log_error("cannot listen on %s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
}

static void
api_on_accept_again(evutil_socket_t fd, short what, void *arg)
{
	struct api *a = arg;

	evconnlistener_enable(a->listener);
}

/* Out of descriptors: a listener that stays ready would spin the loop, so
 * accepting pauses; the clients wait in the backlog meanwhile. */
static void
api_on_accept_error(struct evconnlistener *l, void *arg)
{
	struct api *a = arg;
	struct timeval pause = { 0, API_ACCEPT_PAUSE_MS * 1000 };
	int err = EVUTIL_SOCKET_ERROR();

	if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM) {
		log_warnx("control socket: accept: %s", strerror(err));
		return;
	}
	log_warnx("control socket: out of descriptors (%s); accepting again in %d ms",
	    strerror(err), API_ACCEPT_PAUSE_MS);
	evconnlistener_disable(l);
	evtimer_add(a->accept_again, &pause);
}

struct api *
api_new(struct daemon *d, int fd, const char *path)
{
	struct api *a = xcalloc(1, sizeof(*a));

	a->daemon = d;
	a->path = xstrdup(path);
	a->accept_again = evtimer_new(d->base, api_on_accept_again, a);
	a->listener = evconnlistener_new(d->base, api_on_accept, a,
	    LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_CLOSE_ON_FREE, -1, fd);
	if (a->listener != NULL)
		evconnlistener_set_error_cb(a->listener, api_on_accept_error);
	if (a->listener == NULL || a->accept_again == NULL) {
		log_error("cannot serve %s", path);
		close(fd);
		api_free(a);
		return NULL;
	}
	return a;
}

void
api_free(struct api *a)
{
	if (a == NULL)
		return;
	while (a->conns != NULL)
		api_conn_free(a->conns);
	/* The streams end with the api (each gives its slot back as it
	 * ends); one that cannot be ended here forgets the api. */
	for (struct api_slot *slot = a->slots, *next; slot != NULL; slot = next) {
		next = slot->next;
		if (slot->close != NULL)
			slot->close(slot->close_arg);
	}
	for (struct api_slot *slot = a->slots; slot != NULL; slot = slot->next)
		slot->api = NULL;
	while (a->users != NULL) {
		struct api_user *u = a->users;

		a->users = u->next;
		free(u);
	}
	if (a->listener != NULL) {
		evconnlistener_free(a->listener);
		/* Under the split the socket's folder is root's: the monitor
		 * removes it when the broker is gone. */
		(void)unlink(a->path);
	}
	if (a->accept_again != NULL)
		event_free(a->accept_again);
	free(a->path);
	free(a);
}
