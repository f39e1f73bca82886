/* corral forward: the host's way into a sandbox's loopback (forward.h). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/util.h>

#include "broker/api.h"
#include "broker/daemon.h"
#include "broker/forward.h"
#include "broker/privsep.h"
#include "broker/sandbox.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "common/utf8.h"
#include "common/xmalloc.h"
#include "egress-proxy/ledger.h"
#include "egress-proxy/proxy.h"
#include "egress-proxy/relay.h"

#define FORWARD_MESSAGE_MAX_BYTES 256

/* One `corral forward` command, while it runs. */
struct forward_reg {
	struct bufferevent *client;
	struct api_slot *slot;
	struct sandbox *sb;
	uint32_t port;
	char *listen;
	uid_t uid;
	pid_t pid;
	int64_t opened_us;
	uint64_t connections, refused;
	unsigned open_connections;
	struct forward_reg *next;
};

/* The loopback addresses tried, in order, for a socket of each family. */
enum forward_target { FORWARD_V4, FORWARD_V6, FORWARD_TARGETS };

struct forward_conn;

/* A socket asked of the monitor; its connection may go before the answer. */
struct forward_ask {
	struct forward_conn *c;         /* NULL once it went */
};

/* One connection through a forward. */
struct forward_conn {
	struct daemon *d;
	struct sandbox *sb;
	struct api_slot *slot;
	struct forward_reg *reg;        /* the forward it came through, while it is open */
	struct bufferevent *bev;        /* the control connection, until the relay takes its fd */
	struct frame_decoder *frames;
	int client_fd, sandbox_fd;
	enum forward_target target;
	bool v4_only;                   /* the socket is IPv4: no ::1 to try */
	struct forward_ask *ask;        /* the monitor's socket asked for, or NULL */
	struct event client_rd, client_wr, sandbox_rd, sandbox_wr, idle, timer;
	bool relaying, events_set;
	struct relay relay;
	uint64_t id;
	uint32_t port;
	char *listen;
	pid_t pid;
	int64_t start_ns;
	size_t ok_len;                  /* the ok frame's bytes, not the stream's */
	const char *end_reason;         /* set by whoever ends it; NULL: closed normally */
	struct forward_conn *next;
};

static struct forward_reg *forward_regs;
static struct forward_conn *forward_conns;
static char *forward_scratch;   /* RELAY_CHUNK_BYTES, shared by every forward's relay */

static const char *const forward_ips[FORWARD_TARGETS] = { "127.0.0.1", "::1" };

/* --- Checks shared by both requests ----------------------------------- */

/* The sandbox, port and host side of a request, or NULL with the refusal
 * (CODE, MSG). */
static struct sandbox *
forward_check(struct daemon *d, const struct sandbox_caller *caller, const char *name,
    uint32_t port, const char *listen, const char **code, char *msg, size_t size)
{
	struct sandbox *sb = sandbox_find(d, name);

	*code = WIRE_ERR_INVALID;
	if (sb == NULL || !sandbox_visible(sb, caller)) {
		*code = WIRE_ERR_NOT_FOUND;
		snprintf(msg, size, "no sandbox %.64s of yours", name);
	} else if (port == 0 || port > 65535) {
		snprintf(msg, size, "port %u is not a TCP port (1-65535)", port);
	} else if (listen[0] == '\0' || strlen(listen) >= FORWARD_LISTEN_MAX_BYTES ||
	    !utf8_valid(listen)) {
		snprintf(msg, size, "listen must name the host side in at most %d bytes of UTF-8",
		    FORWARD_LISTEN_MAX_BYTES - 1);
	} else if (d->privsep == NULL || privsep_gone(d->privsep)) {
		*code = WIRE_ERR_UNAVAILABLE;
		snprintf(msg, size, "corrald's monitor is not running: nothing can reach a sandbox");
	} else {
		return sb;
	}
	return NULL;
}

/* The open forward a connection came through: one user's, of that
 * sandbox's port, from that host side (which only one listener holds at
 * a time). The CLI's children connect, so the pid is not the forward's. */
static struct forward_reg *
forward_reg_of(const struct sandbox *sb, uint32_t port, const char *listen, uid_t uid)
{
	for (struct forward_reg *r = forward_regs; r != NULL; r = r->next)
		if (r->sb == sb && r->port == port && r->uid == uid && strcmp(r->listen, listen) == 0)
			return r;
	return NULL;
}

/* --- ForwardOpen ------------------------------------------------------- */

static void
forward_reg_free(struct forward_reg *r)
{
	struct forward_reg **pp;

	for (pp = &forward_regs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	for (struct forward_conn *c = forward_conns; c != NULL; c = c->next)
		if (c->reg == r)
			c->reg = NULL;
	bufferevent_free(r->client);
	api_slot_release(r->slot);
	free(r->listen);
	free(r);
}

static void
forward_reg_close(void *arg)
{
	forward_reg_free(arg);
}

/* Nothing follows a ForwardOpen: a byte is a protocol error, an end of
 * file the command's end. Either way the forward goes. */
static void
forward_reg_on_read(struct bufferevent *bev, void *arg)
{
	(void)bev;
	forward_reg_free(arg);
}

static void
forward_reg_on_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	forward_reg_free(arg);
}

void
api_forward_open_attach(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct bufferevent *bev, struct frame_decoder *frames,
    struct api_slot *slot)
{
	const Corral__ForwardOpen *fo = req->forward_open;
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	Corral__Ok ok = CORRAL__OK__INIT;
	char msg[FORWARD_MESSAGE_MAX_BYTES];
	struct forward_reg *r;
	const char *code;
	struct sandbox *sb;
	uint8_t *frame;
	size_t len;

	if ((sb = forward_check(d, caller, fo->sandbox, fo->port, fo->listen, &code, msg,
	    sizeof(msg))) == NULL) {
		api_slot_release(slot);
		api_stream_refuse(bev, frames, code, msg);
		return;
	}
	resp.response_case = CORRAL__RESPONSE__RESPONSE_OK;
	resp.ok = &ok;
	if ((frame = wire_pack(&resp.base, &len)) == NULL) {
		api_slot_release(slot);
		api_stream_refuse(bev, frames, WIRE_ERR_INTERNAL, "out of memory");
		return;
	}
	frame_decoder_free(frames);
	r = xcalloc(1, sizeof(*r));
	r->client = bev;
	r->slot = slot;
	r->sb = sb;
	r->port = fo->port;
	r->listen = xstrdup(fo->listen);
	r->uid = caller->uid;
	r->pid = caller->pid;
	r->opened_us = time_now_us();
	r->next = forward_regs;
	forward_regs = r;
	api_slot_on_close(slot, forward_reg_close, r);
	/* It rests while its command runs: no idle timeout. */
	bufferevent_set_timeouts(bev, NULL, NULL);
	bufferevent_setcb(bev, forward_reg_on_read, NULL, forward_reg_on_event, r);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	bufferevent_write(bev, frame, len);
	free(frame);
}

/* --- ForwardList ------------------------------------------------------- */

int
api_forward_list(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp)
{
	Corral__ForwardListReply *reply = xmalloc(sizeof(*reply));
	size_t n = 0;

	(void)d;
	(void)req;
	corral__forward_list_reply__init(reply);
	for (struct forward_reg *r = forward_regs; r != NULL; r = r->next)
		n += caller->uid == 0 || caller->uid == r->uid;
	reply->forwards = xcalloc(n > 0 ? n : 1, sizeof(*reply->forwards));
	for (struct forward_reg *r = forward_regs; r != NULL; r = r->next) {
		Corral__ForwardInfo *fi;

		if (caller->uid != 0 && caller->uid != r->uid)
			continue;
		fi = xmalloc(sizeof(*fi));
		corral__forward_info__init(fi);
		fi->sandbox = xstrdup(r->sb->name);
		fi->port = r->port;
		fi->listen = xstrdup(r->listen);
		fi->uid = r->uid;
		fi->pid = r->pid;
		fi->opened_at_us = r->opened_us;
		fi->connections = r->connections;
		fi->refused = r->refused;
		fi->open_connections = r->open_connections;
		reply->forwards[reply->n_forwards++] = fi;
	}
	resp->response_case = CORRAL__RESPONSE__RESPONSE_FORWARD_LIST;
	resp->forward_list = reply;
	return 0;
}

/* --- ForwardConnect ---------------------------------------------------- */

/* The opening record of C, under a new id: allowed, or refused for REASON. */
static int
forward_record_open(struct forward_conn *c, bool allowed, const char *reason)
{
	struct proxy_inbound_event e;

	c->id = ledger_next_id();
	e = (struct proxy_inbound_event){
		.id = c->id, .listen = c->listen, .port = (int)c->port, .pid = c->pid,
		.decision = allowed ? LEDGER_DECISION_ALLOW : LEDGER_DECISION_DENY,
		.ip = c->sandbox_fd != -1 || allowed ? forward_ips[c->target] : NULL,
		.reason = reason,
	};

	if (c->reg != NULL) {
		if (allowed)
			c->reg->connections++;
		else
			c->reg->refused++;
	}
	return proxy_tenant_record_inbound(c->sb->tenant, &e);
}

static void
forward_record_end(struct forward_conn *c)
{
	uint64_t down = relay_bytes_down(&c->relay);
	struct proxy_inbound_event e = {
		.id = c->id, .listen = c->listen, .port = (int)c->port, .pid = c->pid,
		.decision = LEDGER_DECISION_NONE, .ip = forward_ips[c->target],
		.reason = c->end_reason,
		/* What the sandbox sent went down to the host, after the ok. */
		.bytes_up = (int64_t)(down > c->ok_len ? down - c->ok_len : 0),
		.bytes_down = (int64_t)relay_bytes_up(&c->relay),
		.duration_ms = (time_mono_ns() - c->start_ns) / 1000000,
	};

	(void)proxy_tenant_record_inbound(c->sb->tenant, &e);
}

static void
forward_conn_free(struct forward_conn *c)
{
	struct forward_conn **pp;

	for (pp = &forward_conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->ask != NULL)
		c->ask->c = NULL;
	if (c->relaying) {
		forward_record_end(c);
		if (c->reg != NULL)
			c->reg->open_connections--;
	}
	if (c->relaying) {              /* the relay's events are made with it */
		event_del(&c->client_rd);
		event_del(&c->client_wr);
		event_del(&c->sandbox_rd);
	}
	if (c->events_set) {
		event_del(&c->sandbox_wr);
		event_del(&c->idle);
		event_del(&c->timer);
	}
	relay_clear(&c->relay);
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	frame_decoder_free(c->frames);
	if (c->client_fd != -1)
		close(c->client_fd);
	if (c->sandbox_fd != -1)
		close(c->sandbox_fd);
	api_slot_release(c->slot);
	free(c->listen);
	free(c);
}

/* corrald stops: the connection ends with it. */
static void
forward_conn_close(void *arg)
{
	struct forward_conn *c = arg;

	c->end_reason = "corrald_stopped";
	forward_conn_free(c);
}

/* Ends C before the relay: one error frame on its control connection. */
static void
forward_conn_refuse(struct forward_conn *c, const char *code, const char *message)
{
	struct bufferevent *bev = c->bev;
	struct frame_decoder *frames = c->frames;

	c->bev = NULL;
	c->frames = NULL;
	forward_conn_free(c);
	api_stream_refuse(bev, frames, code, message);
}

/* Refuses C before the relay for REASON (recorded) with the wire's CODE
 * and MESSAGE. */
static void
forward_deny(struct forward_conn *c, const char *reason, const char *code, const char *message)
{
	(void)forward_record_open(c, false, reason);
	forward_conn_refuse(c, code, message);
}

static void
forward_on_relay_done(enum relay_end end, void *arg)
{
	struct forward_conn *c = arg;
	static const char *const reasons[] = {
		[RELAY_END_CLOSED] = NULL,
		[RELAY_END_IDLE] = "idle_timeout",     /* none is set: never */
		[RELAY_END_CLIENT_ERROR] = "host_side_error",
		[RELAY_END_UPSTREAM_ERROR] = "sandbox_side_error",
		[RELAY_END_NOMEM] = "out_of_memory",
	};

	c->end_reason = reasons[end];
	/* Freed from the loop, not inside the relay's callback. */
	event_active(&c->timer, EV_TIMEOUT, 0);
}

static void
forward_on_ready(evutil_socket_t fd, short what, void *arg)
{
	struct forward_conn *c = arg;

	if (what & EV_READ)
		relay_readable(&c->relay, fd);
	if (what & EV_WRITE)
		relay_writable(&c->relay, fd);
}

static void
forward_on_idle(evutil_socket_t fd, short what, void *arg)
{
	struct forward_conn *c = arg;

	(void)fd;
	(void)what;
	relay_idle_expired(&c->relay);
}

/* The relay's descriptors and events; the control connection's descriptor
 * leaves its bufferevent (which no longer closes it). */
static int
forward_start_relay(struct forward_conn *c)
{
	struct event_base *base = c->d->base;
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	Corral__Ok ok = CORRAL__OK__INIT;
	struct relay_io io;
	uint8_t *frame;

	resp.response_case = CORRAL__RESPONSE__RESPONSE_OK;
	resp.ok = &ok;
	if ((frame = wire_pack(&resp.base, &c->ok_len)) == NULL)
		return -1;
	c->client_fd = bufferevent_getfd(c->bev);
	bufferevent_setfd(c->bev, -1);
	bufferevent_free(c->bev);
	c->bev = NULL;
	frame_decoder_free(c->frames);
	c->frames = NULL;
	(void)evutil_make_socket_nonblocking(c->client_fd);
	event_del(&c->timer);
	event_del(&c->sandbox_wr);
	event_assign(&c->client_rd, base, c->client_fd, EV_READ | EV_PERSIST, forward_on_ready, c);
	event_assign(&c->client_wr, base, c->client_fd, EV_WRITE, forward_on_ready, c);
	event_assign(&c->sandbox_rd, base, c->sandbox_fd, EV_READ | EV_PERSIST, forward_on_ready, c);
	event_assign(&c->sandbox_wr, base, c->sandbox_fd, EV_WRITE, forward_on_ready, c);
	io = (struct relay_io){
		.client_fd = c->client_fd, .upstream_fd = c->sandbox_fd,
		.client_rd = &c->client_rd, .client_wr = &c->client_wr,
		.upstream_rd = &c->sandbox_rd, .upstream_wr = &c->sandbox_wr,
		.idle = &c->idle, .pipe_rd = -1, .pipe_wr = -1,
	};
	/* What the relay reads goes on at once (see cli-forward.c). */
	(void)setsockopt(c->sandbox_fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	/* No idle timeout: a dev server's socket may rest for long; the
	 * forward ends with its command. */
	relay_init(&c->relay, &io, forward_scratch, 0, forward_on_relay_done, c);
	c->relaying = true;
	if (c->reg != NULL)
		c->reg->open_connections++;
	if (relay_push_client(&c->relay, frame, c->ok_len) == -1) {
		free(frame);
		return -1;
	}
	free(frame);
	relay_start(&c->relay, true);
	return 0;
}

/* The sandbox's port took C: record it and relay. */
static void
forward_connected(struct forward_conn *c)
{
	if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0 ||
	    frame_decoder_held(c->frames) > 0) {
		forward_deny(c, "protocol", WIRE_ERR_PROTOCOL,
		    "a forwarded connection's bytes may follow only its ok");
		return;
	}
	if (forward_record_open(c, true, NULL) == -1) {
		forward_conn_refuse(c, WIRE_ERR_UNAVAILABLE,
		    "the ledger cannot take records: the connection would go unrecorded");
		return;
	}
	if (forward_start_relay(c) == -1) {
		c->end_reason = "out_of_memory";
		forward_conn_free(c);
	}
}

/* Nothing listens at port PORT (or it would not accept in time). */
static void
forward_unreachable(struct forward_conn *c, const char *reason)
{
	char msg[FORWARD_MESSAGE_MAX_BYTES];

	snprintf(msg, sizeof(msg), "nothing in sandbox %.64s accepts on port %u of its loopback "
	    "(%s)", c->sb->name, c->port, reason);
	forward_deny(c, reason, WIRE_ERR_UNAVAILABLE, msg);
}

static void forward_dial(struct forward_conn *c);

/* The connect to the current target ended with ERROR (0: it took). */
static void
forward_dialled(struct forward_conn *c, int error)
{
	if (error == 0)
		forward_connected(c);
	else if (error == ECONNREFUSED && !c->v4_only && c->target + 1 < FORWARD_TARGETS) {
		c->target++;
		forward_dial(c);
	} else {
		forward_unreachable(c, error == ECONNREFUSED ? "nothing_listening" : "connect_failed");
	}
}

/* The connect finished (writable), took too long, or, once relaying,
 * the relay ended (the timer made active). */
static void
forward_on_connect(evutil_socket_t fd, short what, void *arg)
{
	struct forward_conn *c = arg;
	socklen_t len = sizeof(int);
	int error = 0;

	(void)fd;
	if (c->relaying) {
		forward_conn_free(c);
		return;
	}
	if (what & EV_TIMEOUT) {
		forward_unreachable(c, "connect_timeout");
		return;
	}
	event_del(&c->timer);
	if (getsockopt(c->sandbox_fd, SOL_SOCKET, SO_ERROR, &error, &len) == -1)
		error = errno;
	forward_dialled(c, error);
}

/* The loopback address of C's target for a socket of FAMILY, in SS. */
static socklen_t
forward_target_addr(struct forward_conn *c, int family, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family != AF_INET6) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)c->port);
		v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		c->v4_only = true;
		return sizeof(*v4);
	}
	v6->sin6_family = AF_INET6;
	v6->sin6_port = htons((uint16_t)c->port);
	/* IPv4 mapped: the same socket kind reaches 127.0.0.1. */
	(void)inet_pton(AF_INET6, c->target == FORWARD_V4 ? "::ffff:127.0.0.1" : "::1",
	    &v6->sin6_addr);
	return sizeof(*v6);
}

/* Connects C's socket to its port at its current target. */
static void
forward_connect_target(struct forward_conn *c)
{
	struct timeval timeout = { FORWARD_CONNECT_TIMEOUT_S, 0 };
	struct sockaddr_storage ss;
	socklen_t slen = sizeof(int), alen;
	int family = 0;

	(void)getsockopt(c->sandbox_fd, SOL_SOCKET, SO_DOMAIN, &family, &slen);
	alen = forward_target_addr(c, family, &ss);
	event_assign(&c->sandbox_wr, c->d->base, c->sandbox_fd, EV_WRITE, forward_on_connect, c);
	if (connect(c->sandbox_fd, (struct sockaddr *)&ss, alen) == 0) {
		forward_dialled(c, 0);
	} else if (errno == EINPROGRESS) {
		event_add(&c->sandbox_wr, NULL);
		event_add(&c->timer, &timeout);
	} else {
		forward_dialled(c, errno);
	}
}

/* The monitor made C no socket, for WHY: a refusal of its (the caller is
 * not the sandbox's) reads as no such sandbox, as the broker's own does. */
static void
forward_no_socket(struct forward_conn *c, const char *why)
{
	char msg[FORWARD_MESSAGE_MAX_BYTES];

	snprintf(msg, sizeof(msg), "no socket in sandbox %.64s: %s", c->sb->name,
	    why != NULL ? why : "the monitor failed");
	forward_deny(c, "no_socket", why != NULL && monitor_wire_refusal(why) ?
	    WIRE_ERR_NOT_FOUND : WIRE_ERR_UNAVAILABLE, msg);
}

/* The monitor's answer: a socket in the sandbox's network, or why not. */
static void
forward_on_socket(int fd, const char *err, void *arg)
{
	struct forward_ask *ask = arg;
	struct forward_conn *c = ask->c;

	free(ask);
	if (c == NULL) {                /* it went meanwhile */
		if (fd != -1)
			close(fd);
		return;
	}
	c->ask = NULL;
	if (fd == -1) {
		forward_no_socket(c, err);
		return;
	}
	c->sandbox_fd = fd;
	forward_connect_target(c);
}

/* Dials C's port at its current target from a fresh socket in the
 * sandbox's network namespace, which the monitor makes: asked for, and
 * answered from the loop (a create it is building goes first). */
static void
forward_dial(struct forward_conn *c)
{
	char *err = NULL;
	struct forward_ask *ask;

	if (c->sandbox_fd != -1) {
		event_del(&c->sandbox_wr);
		close(c->sandbox_fd);
		c->sandbox_fd = -1;
	}
	ask = xcalloc(1, sizeof(*ask));
	ask->c = c;
	c->ask = ask;
	if (privsep_sandbox_socket_async(c->d->privsep, bufferevent_getfd(c->bev), c->sb->name,
	    forward_on_socket, ask, &err) == -1) {
		c->ask = NULL;
		free(ask);
		forward_no_socket(c, err);
		free(err);
	}
}

void
api_forward_connect_attach(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct bufferevent *bev, struct frame_decoder *frames,
    struct api_slot *slot)
{
	const Corral__ForwardConnect *fc = req->forward_connect;
	char msg[FORWARD_MESSAGE_MAX_BYTES];
	struct forward_conn *c;
	const char *code;
	struct sandbox *sb;

	if ((sb = forward_check(d, caller, fc->sandbox, fc->port, fc->listen, &code, msg,
	    sizeof(msg))) == NULL) {
		api_slot_release(slot);
		api_stream_refuse(bev, frames, code, msg);
		return;
	}
	if (forward_scratch == NULL)
		forward_scratch = xmalloc(RELAY_CHUNK_BYTES);
	c = xcalloc(1, sizeof(*c));
	c->d = d;
	c->sb = sb;
	c->slot = slot;
	c->bev = bev;
	c->frames = frames;
	c->client_fd = c->sandbox_fd = -1;
	c->port = fc->port;
	c->listen = xstrdup(fc->listen);
	c->pid = caller->pid;
	c->start_ns = time_mono_ns();
	c->reg = forward_reg_of(sb, fc->port, fc->listen, caller->uid);
	c->next = forward_conns;
	forward_conns = c;
	api_slot_on_close(slot, forward_conn_close, c);
	/* Nothing is read until the relay (early bytes stay in the kernel),
	 * and nothing of the request's own connection object is left: its
	 * callbacks and the idle timeout of a request not yet whole. */
	bufferevent_setcb(bev, NULL, NULL, NULL, NULL);
	bufferevent_set_timeouts(bev, NULL, NULL);
	bufferevent_disable(bev, EV_READ);
	evtimer_assign(&c->timer, d->base, forward_on_connect, c);
	evtimer_assign(&c->idle, d->base, forward_on_idle, c);
	event_assign(&c->sandbox_wr, d->base, -1, EV_WRITE, forward_on_connect, c);
	c->events_set = true;
	if (fc->refused_uid != 0) {
		Corral__Response resp = CORRAL__RESPONSE__INIT;
		Corral__Ok ok = CORRAL__OK__INIT;

		/* The CLI turned another user away: its word, recorded. */
		(void)forward_record_open(c, false, "not_owner");
		resp.response_case = CORRAL__RESPONSE__RESPONSE_OK;
		resp.ok = &ok;
		c->bev = NULL;
		c->frames = NULL;
		forward_conn_free(c);
		api_stream_answer(bev, frames, &resp);
		return;
	}
	forward_dial(c);
}

void
forward_sandbox_gone(struct sandbox *sb)
{
	for (struct forward_conn *c = forward_conns, *next; c != NULL; c = next) {
		next = c->next;
		if (c->sb == sb) {
			c->end_reason = "sandbox_deleted";
			forward_conn_free(c);
		}
	}
	for (struct forward_reg *r = forward_regs, *next; r != NULL; r = next) {
		next = r->next;
		if (r->sb == sb)
			forward_reg_free(r);
	}
}
