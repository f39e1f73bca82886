/* One proxied connection, from accept to close (ARCHITECTURE.md, "A
 * connection's life"). Each state has one function that enters it; the
 * order is: read the request, decide, resolve, check the address, dial the
 * checked address, and only then answer 200. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netfilter_ipv4.h>

#include <event2/event.h>
/* The events are embedded in the session (no allocation per event): the
 * layout is libevent 2.1's, which the library's soname pins. */
#include <event2/event_struct.h>

#include "common/log.h"
#include "common/timeutil.h"
#include "egress-proxy/addr.h"
#include "egress-proxy/http.h"
#include "egress-proxy/mitm.h"
#include "egress-proxy/proxy-int.h"
#include "egress-proxy/relay.h"
#include "egress-proxy/secretstore.h"
#include "egress-proxy/resolve.h"
#include "egress-proxy/tls.h"
#include "policy/httprule.h"
#include "policy/index.h"
#include "policy/policy.h"

#define SESSION_READ_ENDED (-1)         /* session_read_client: error or end of file */
#define SESSION_READ_FULL (-2)          /* ... the head or hello reached its cap */

enum session_state {
	SESSION_READ_HEAD = 0,          /* reading the request head, under the handshake timer */
	SESSION_RESOLVING,              /* the name is allowed; waiting for its addresses */
	SESSION_DIALING,                /* connecting to the checked address, under the connect timer */
	SESSION_SNIFF,                  /* tunnel open, reading the ClientHello to check its SNI */
	SESSION_RELAY,                  /* bytes flow both ways */
	SESSION_TERMINATED,             /* its TLS terminated: the mitm has both sockets */
	SESSION_CLOSING,                /* done; freed from the loop by session_reap() */
};

struct session {
	struct proxy_tenant *tenant;
	struct policy_gen *gen;         /* the policy it was decided under */
	enum session_state state;
	int client_fd;
	int upstream_fd;
	/* One read and one write event per descriptor for the whole life:
	 * their callbacks dispatch on STATE, so no state change touches epoll. */
	struct event client_rd;         /* the head, then the ClientHello, then the relay */
	struct event client_wr;         /* the relay */
	struct event upstream_rd;       /* the relay; added with the dial */
	struct event upstream_wr;       /* the dial's completion, then the relay */
	struct event timer;             /* handshake, connect and SNI deadlines */
	struct event idle;              /* the relay's idle timer */
	uint8_t *in;                    /* client bytes not yet passed on */
	size_t in_len;
	size_t head_len;                /* the request head's bytes at the start of IN */
	struct http_request *req;       /* plain HTTP: the parsed head, until forwarded */
	struct tls_reader *hello;       /* reading the ClientHello (SNI check) */
	struct resolve_query *query;
	struct relay relay;             /* all zero until the upstream connects */
	struct mitm *mitm;              /* SESSION_TERMINATED: both sockets are its */
	uint64_t id;
	int64_t start_us;
	char host[POLICY_HOST_MAX_BYTES + 1];
	uint16_t port;
	enum ledger_mode mode;
	const char *rule;               /* the entry that allowed it (in GEN) */
	const struct policy_endpoint *endpoint; /* and its endpoint (in GEN) */
	bool sni_check;
	char *binary;                   /* the identified executable, or NULL */
	char *run;                      /* the run it belongs to, when identified and known */
	char *allowed_by;               /* the executable (its own or an ancestor's) the entry matched */
	int64_t pid;                    /* its pid, or LEDGER_NULL_INT */
	bool transparent;               /* came through the fence: no proxy protocol */
	struct sockaddr_storage orig;   /* transparent: where the client meant to go */
	bool counted;                   /* counts against the tunnel limits */
	bool recorded_allow;            /* a close record is owed */
	bool identify_tried;            /* identification ran (once is enough) */
	char ip[INET6_ADDRSTRLEN];
	struct sockaddr_storage upstream;
	struct session *prev, *next;    /* the tenant's list, then the reaper's */
};

static void session_on_client_read(struct session *s);
static void session_on_transparent_read(struct session *s);
static void session_on_sniff(struct session *s);
static void session_on_connected(struct session *s);
static void session_name_from_dns(struct session *s);
static const struct identify_owner *session_identify(struct session *s);
static enum policy_verdict session_decide_again(struct session *s, const char **reason);
static const char *session_unterminable(const struct session *s);
static bool session_terminates(const struct session *s);

struct session *
session_next(const struct session *s)
{
	return s->next;
}

static struct proxy *
session_proxy(const struct session *s)
{
	return s->tenant->proxy;
}

/* A ledger record about S with its identity filled in. */
static void
session_record_init(const struct session *s, struct ledger_record *rec, enum ledger_event ev)
{
	ledger_record_init(rec, ev);
	rec->id = s->id;
	rec->sandbox = s->tenant->host_mode ? NULL : s->tenant->name;
	rec->session_id = s->tenant->session_id;
	rec->agent = s->tenant->agent;
	rec->mode = s->mode;
	rec->host = s->host[0] != '\0' ? s->host : NULL;
	rec->port = s->port != 0 ? s->port : LEDGER_NULL_INT;
	rec->ip = s->ip[0] != '\0' ? s->ip : NULL;
	rec->binary = s->binary;
	rec->pid = s->pid;
	rec->run = s->run;
}

/* Keeps NAME as S's host, cut to fit (a copy: no printf per tunnel). */
static void
session_set_host(struct session *s, const char *name)
{
	size_t len = strnlen(name, sizeof(s->host) - 1);

	memcpy(s->host, name, len);
	s->host[len] = '\0';
}

/* The dotted quad of the IPv4 address at BYTES into OUT (at least
 * INET_ADDRSTRLEN bytes), as inet_ntop() writes it but without its
 * sprintf, which is most of its cost. */
static void
session_format_ipv4(const uint8_t bytes[4], char *out)
{
	char *p = out;

	for (int i = 0; i < 4; i++) {
		unsigned v = bytes[i];

		if (v >= 100)
			*p++ = (char)('0' + v / 100);
		if (v >= 10)
			*p++ = (char)('0' + v / 10 % 10);
		*p++ = (char)('0' + v % 10);
		*p++ = i < 3 ? '.' : '\0';
	}
}

/* Sets S's ip (the ledger's) to the address SA, an AF_INET or AF_INET6 one. */
static void
session_set_ip(struct session *s, const struct sockaddr_storage *sa)
{
	if (sa->ss_family == AF_INET)
		session_format_ipv4((const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr, s->ip);
	else if (sa->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, s->ip,
		    sizeof(s->ip));
}

static void
session_unlink(struct session *s)
{
	struct proxy_tenant *t = s->tenant;

	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		t->sessions = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

/* No callback of S runs again. */
static void
session_stop_events(struct session *s)
{
	event_del(&s->client_rd);
	event_del(&s->client_wr);
	if (s->upstream_fd != -1) {     /* the upstream's events exist from the dial on */
		event_del(&s->upstream_rd);
		event_del(&s->upstream_wr);
	}
	event_del(&s->timer);
	event_del(&s->idle);
}

/* The bytes S carried each way, into REC: the plain text of a terminated
 * connection, the relay's otherwise. */
static void
session_bytes(const struct session *s, struct ledger_record *rec)
{
	uint64_t up, down;

	if (s->mitm != NULL) {
		mitm_bytes(s->mitm, &up, &down);
	} else {
		up = relay_bytes_up(&s->relay);
		down = relay_bytes_down(&s->relay);
	}
	rec->bytes_up = (int64_t)up;
	rec->bytes_down = (int64_t)down;
}

/* Ends S: records the close of an allowed connection, releases its
 * limits, and hands it to the reaper (never freed inside its own callbacks). */
static void
session_close(struct session *s, const char *reason)
{
	struct proxy *p = session_proxy(s);
	struct ledger_record rec;

	if (s->state == SESSION_CLOSING)
		return;
	if (s->recorded_allow) {
		session_record_init(s, &rec, LEDGER_EVENT_CLOSE);
		rec.policy = s->rule;
		/* corral-ledger(5): a normal end has no reason. */
		rec.reason = strcmp(reason, "closed") == 0 ? NULL : reason;
		session_bytes(s, &rec);
		rec.duration_ms = (time_now_us() - s->start_us) / 1000;
		ledger_write(p->ledger, &rec);
	}
	if (s->counted) {
		s->tenant->tunnels--;
		p->tunnels--;
		if (s->tenant->owner != NULL)
			s->tenant->owner->tunnels--;
		s->counted = false;
	}
	if (s->query != NULL) {
		resolve_query_cancel(s->query);
		s->query = NULL;
	}
	/* Nothing of the mitm runs again: its configuration is the tenant's,
	 * which may go before the reaper frees the mitm. */
	mitm_stop(s->mitm);
	session_stop_events(s);
	s->state = SESSION_CLOSING;
	session_unlink(s);
	s->next = p->closing;
	p->closing = s;
	event_active(p->reaper, EV_TIMEOUT, 0);
}

static void
session_free(struct session *s)
{
	mitm_free(s->mitm);
	relay_clear(&s->relay);
	if (s->client_fd != -1)
		close(s->client_fd);
	if (s->upstream_fd != -1)
		close(s->upstream_fd);
	if (s->gen != NULL)
		policy_gen_unref(s->gen);
	tls_reader_free(s->hello);
	free(s->binary);
	free(s->run);
	free(s->allowed_by);
	free(s->in);
	free(s->req);
	free(s);
}

void
session_reap(struct proxy *p)
{
	struct session *s;

	while ((s = p->closing) != NULL) {
		p->closing = s->next;
		session_free(s);
	}
}

void
session_abort(struct session *s)
{
	session_close(s, "proxy_shutdown");
}

/* Sends a final response to the client (best effort: the socket is new
 * and its buffer empty) and closes. */
static void
session_reply_and_close(struct session *s, const char *reply, int len, const char *reason)
{
	/* A client that thinks it talks TLS or another protocol to the
	 * server itself cannot read an HTTP answer: it just sees the close. */
	if (s->transparent && s->mode != LEDGER_MODE_HTTP)
		len = 0;
	if (len > 0)
		(void)send(s->client_fd, reply, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(s->client_fd, SHUT_WR);
	session_close(s, reason);
}

/* The deny record of S, with who was refused (for the auditor and the
 * agent) when IDENTIFY: identification is paid on refusals too, tens of
 * microseconds, except where shedding load is the point. */
static void
session_record_refusal(struct session *s, const char *reason, bool identify)
{
	struct ledger_record rec;

	if (identify && !s->identify_tried)
		(void)session_identify(s);
	session_record_init(s, &rec, LEDGER_EVENT_CONNECT);
	rec.decision = LEDGER_DECISION_DENY;
	rec.reason = reason;
	ledger_write(session_proxy(s)->ledger, &rec);
}

/* Refuses S by policy: a deny record, a denial, a 403 that says why. */
static void
session_deny(struct session *s, const char *reason)
{
	char reply[REPLY_MAX_BYTES];
	int len;

	session_record_refusal(s, reason, true);
	denial_ring_add(s->tenant->denials, time_now_us(), s->host, s->port, s->binary,
	    s->binary != NULL ? s->pid : -1, reason);
	len = reply_forbidden(reply, sizeof(reply), s->host, s->port, s->binary, reason,
	    s->tenant->name);
	session_reply_and_close(s, reply, len, reason);
}

/* Refuses a request that could not be judged (malformed, too large). */
static void
session_fail(struct session *s, int status, const char *reason)
{
	char reply[REPLY_MAX_BYTES];
	int len;

	/* A 503 sheds load (tunnels, the ledger, descriptors, memory): it
	 * costs no identification, so a flood of them costs the loop little. */
	if (!s->recorded_allow)
		session_record_refusal(s, reason, status != 503);
	len = reply_error(reply, sizeof(reply), status, reason);
	session_reply_and_close(s, reply, len, reason);
}

/* The loop's common timeout of MS milliseconds, made on first use; NULL
 * when there is no slot left or libevent refused (then a plain timeout does). */
static const struct timeval *
session_common_timeout(struct proxy *p, uint64_t ms)
{
	struct timeval tv = { .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000 };
	struct proxy_timeout *t;

	for (size_t i = 0; i < PROXY_TIMEOUTS_MAX; i++) {
		t = &p->timeouts[i];
		if (t->tv != NULL && t->ms == ms)
			return t->tv;
		if (t->tv == NULL) {
			t->ms = ms;
			t->tv = event_base_init_common_timeout(p->base, &tv);
			return t->tv;
		}
	}
	return NULL;
}

static void
session_arm_timer(struct session *s, unsigned ms)
{
	const struct timeval *common = session_common_timeout(session_proxy(s), ms);
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	event_add(&s->timer, common != NULL ? common : &tv);
}

static void
session_on_relay_done(enum relay_end end, void *arg)
{
	static const char *const reasons[] = {
		[RELAY_END_CLOSED] = "closed",
		[RELAY_END_IDLE] = "idle_timeout",
		[RELAY_END_CLIENT_ERROR] = "client_error",
		[RELAY_END_UPSTREAM_ERROR] = "upstream_error",
		[RELAY_END_NOMEM] = "out_of_memory",
	};

	session_close(arg, reasons[end]);
}

/* Appends what the client sent, up to CAP bytes in all: the count read,
 * 0 when nothing was there, SESSION_READ_ENDED on error or end of file,
 * SESSION_READ_FULL at the cap.
 * The bytes land in the loop's scratch buffer first and S keeps only what
 * came, so a waiting client costs no more memory than it sent. */
static ssize_t
session_read_client(struct session *s, size_t cap)
{
	char *scratch = session_proxy(s)->scratch;
	size_t room = cap - s->in_len;
	uint8_t *grown;
	ssize_t n;

	if (s->in_len >= cap)
		return SESSION_READ_FULL;
	n = recv(s->client_fd, scratch, room < RELAY_CHUNK_BYTES ? room : RELAY_CHUNK_BYTES, 0);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : SESSION_READ_ENDED;
	if (n == 0 || (grown = realloc(s->in, s->in_len + (size_t)n)) == NULL)
		return SESSION_READ_ENDED;
	memcpy(grown + s->in_len, scratch, (size_t)n);
	s->in = grown;
	s->in_len += (size_t)n;
	return n;
}

/* Hands the client's bytes read so far to the relay and lets it read on. */
static void
session_release_client(struct session *s)
{
	s->state = SESSION_RELAY;
	event_del(&s->timer);
	if (s->in_len > 0 && relay_push_upstream(&s->relay, s->in, s->in_len) == -1) {
		session_close(s, "out_of_memory");
		return;
	}
	free(s->in);
	s->in = NULL;
	s->in_len = 0;
	relay_read_client(&s->relay);
}

/* Feeds the LEN new client bytes at DATA to the ClientHello reader; true
 * once S may go on relaying (*OK: no TLS, or TLS naming the CONNECT host). */
static bool
session_sni_decided(struct session *s, const uint8_t *data, size_t len, bool *ok)
{
	struct tls_hello_info info;

	switch (tls_reader_feed(s->hello, data, len, &info)) {
	case TLS_NEED_MORE:
		return false;
	case TLS_FOUND:
		*ok = strcmp(info.name, s->host) == 0;
		return true;
	case TLS_NOT_TLS:
		*ok = true;             /* not TLS: nothing to compare */
		return true;
	default:
		/* TLS without a usable name (or a broken hello): the host the
		 * client named cannot be confirmed, so the tunnel closes. */
		*ok = false;
		return true;
	}
}

static void
session_sni_mismatch(struct session *s)
{
	struct ledger_record rec;

	session_record_init(s, &rec, LEDGER_EVENT_CONNECT);
	rec.decision = LEDGER_DECISION_DENY;
	rec.policy = s->rule;
	rec.reason = "sni_mismatch";
	ledger_write(session_proxy(s)->ledger, &rec);
	denial_ring_add(s->tenant->denials, time_now_us(), s->host, s->port, NULL, -1,
	    "sni_mismatch");
	session_close(s, "sni_mismatch");
}

/* The ClientHello is judged: pass the tunnel on, or close it. */
static void
session_after_sni(struct session *s, bool ok)
{
	tls_reader_free(s->hello);
	s->hello = NULL;
	if (ok)
		session_release_client(s);
	else
		session_sni_mismatch(s);
}

/* Reads the ClientHello after CONNECT while the download side already
 * runs, so server-speaks-first protocols work. */
static void
session_start_sniff(struct session *s)
{
	struct proxy *p = session_proxy(s);
	bool ok = false;

	if ((s->hello = tls_reader_new()) == NULL) {
		session_close(s, "out_of_memory");
		return;
	}
	s->state = SESSION_SNIFF;
	relay_start(&s->relay, false);
	if (s->state != SESSION_SNIFF)
		return;
	if (s->in_len > 0 && session_sni_decided(s, s->in, s->in_len, &ok)) {
		session_after_sni(s, ok);
		return;
	}
	event_add(&s->client_rd, NULL);         /* mostly still added since the head */
	session_arm_timer(s, p->limits.handshake_timeout_ms);
}

/* The tunnel is open: the client reads 200 (CONNECT), and bytes flow. */
static void
session_enter_relay(struct session *s, bool sniff)
{
	if (s->mode == LEDGER_MODE_CONNECT && relay_push_client(&s->relay, REPLY_CONNECTED,
	    strlen(REPLY_CONNECTED)) == -1) {
		session_close(s, "out_of_memory");
		return;
	}
	free(s->req);
	s->req = NULL;
	if (sniff) {
		session_start_sniff(s);
		return;
	}
	s->state = SESSION_RELAY;
	relay_start(&s->relay, false);
	if (s->state == SESSION_RELAY)
		session_release_client(s);
}

static void
session_on_sniff(struct session *s)
{
	bool ok = false;
	ssize_t n = session_read_client(s, TLS_HELLO_MAX_BYTES);

	if (n == SESSION_READ_ENDED || n == SESSION_READ_FULL) {
		session_close(s, n == SESSION_READ_FULL ? "hello_too_large" : "client_closed");
		return;
	}
	if (n > 0 && session_sni_decided(s, s->in + s->in_len - n, (size_t)n, &ok))
		session_after_sni(s, ok);
}

/* Forgets the first HEAD_LEN bytes the client sent (its request head),
 * keeping what followed; an idle tunnel then holds no buffer at all. */
static void
session_drop_head(struct session *s, size_t head_len)
{
	memmove(s->in, s->in + head_len, s->in_len - head_len);
	s->in_len -= head_len;
	if (s->in_len == 0) {
		free(s->in);
		s->in = NULL;
	}
}

/* Plain HTTP is one request per connection: the client may send its
 * body (CONTENT_LENGTH bytes after the head, HEAD_BYTES of which are still
 * in S->in with the body's start) and nothing after it. */
static void
session_limit_body(struct session *s, const struct http_request *req, size_t head_bytes)
{
	uint64_t allowed = head_bytes + (req->has_content_length ? req->content_length : 0);

	if (s->in_len > allowed)
		s->in_len = (size_t)allowed;    /* a pipelined second request goes nowhere */
	relay_limit_client(&s->relay, allowed - s->in_len);
}

/* True when the header H of BUF says how the connection goes on: it is
 * the proxy's to say (one request per connection). */
static bool
session_hop_header(const char *buf, const struct http_header *h)
{
	static const char *const hop[] = { "Connection", "Proxy-Connection", "Keep-Alive" };

	for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
		if (h->name.len == strlen(hop[i]) &&
		    strncasecmp(buf + h->name.off, hop[i], h->name.len) == 0)
			return true;
	return false;
}

/* Sends a plain-HTTP request upstream in origin form, as one request on
 * its own connection (Connection: close, so that the upstream's end is the
 * client's: a second request on it would otherwise wait for an answer
 * that never comes); the client's body bytes already read follow it. */
static int
session_forward_head(struct session *s)
{
	const struct http_request *req = s->req;
	const char *buf = (const char *)s->in;
	const struct http_span *target = s->mode == LEDGER_MODE_FORWARD ? &req->path : &req->target;
	char line[PROXY_HEADER_MAX_BYTES + 512];
	int n;

	n = snprintf(line, sizeof(line), "%s %s%.*s HTTP/1.%u\r\n",
	    http_method_name(req->method),
	    target->len == 0 || buf[target->off] == '?' ? "/" : "",
	    (int)target->len, buf + target->off, req->version_minor);
	for (size_t i = 0; i < req->nheaders && n > 0 && (size_t)n < sizeof(line); i++)
		if (!session_hop_header(buf, &req->headers[i]))
			n += snprintf(line + n, sizeof(line) - (size_t)n, "%.*s: %.*s\r\n",
			    (int)req->headers[i].name.len, buf + req->headers[i].name.off,
			    (int)req->headers[i].value.len, buf + req->headers[i].value.off);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -1;
	if (!req->has_host_header)
		n += snprintf(line + n, sizeof(line) - (size_t)n, "Host: %s\r\n", s->host);
	n += snprintf(line + n, sizeof(line) - (size_t)n, "Connection: close\r\n\r\n");
	if ((size_t)n >= sizeof(line))
		return -1;
	if (relay_push_upstream(&s->relay, line, (size_t)n) == -1)
		return -1;
	/* What followed the head (a body) goes after it, and nothing more. */
	session_drop_head(s, req->head_len);
	session_limit_body(s, req, 0);
	return 0;
}

/* The relay runs on S's own events and descriptors. */
static void
session_init_relay(struct session *s)
{
	struct proxy *p = session_proxy(s);
	struct relay_io io = {
		.client_fd = s->client_fd, .upstream_fd = s->upstream_fd,
		.client_rd = &s->client_rd, .client_wr = &s->client_wr,
		.upstream_rd = &s->upstream_rd, .upstream_wr = &s->upstream_wr,
		.idle = &s->idle, .pipe_rd = p->pipe[0], .pipe_wr = p->pipe[1],
		.idle_common = p->limits.idle_timeout_s == 0 ? NULL :
		    session_common_timeout(p, (uint64_t)p->limits.idle_timeout_s * 1000),
	};

	relay_init(&s->relay, &io, p->scratch, p->limits.idle_timeout_s, session_on_relay_done, s);
}

/* --- Terminated connections (corral-policy(5), "tls: terminate") --- */

static const char *
session_mitm_judge(void *arg, const char *method, const char *target)
{
	struct session *s = arg;

	if (s->state != SESSION_TERMINATED)
		return "connection_closing";
	return httprule_judge(s->endpoint, method, target);
}

/* The names of the secrets of bits USED into OUT (SIZE bytes),
 * comma-separated; NULL when none. */
static const char *
session_secret_names(const struct session *s, uint32_t used, char *out, size_t size)
{
	const struct mitm_config *cfg = &s->tenant->mitm;
	size_t at = 0;

	out[0] = '\0';
	for (size_t i = 0; i < cfg->nsecrets && i < 32; i++) {
		if ((used & (UINT32_C(1) << i)) == 0)
			continue;
		at += (size_t)snprintf(out + at, size - at, "%s%s", at > 0 ? "," : "",
		    cfg->secrets[i].name);
		if (at >= size)
			break;
	}
	return out[0] != '\0' ? out : NULL;
}

/* Each request, passed (before it is sent) or answered by the proxy: a
 * request record, and a refusal in the denials too; -1 when the ledger
 * cannot take it (a request to pass is then refused). */
static int
session_mitm_request(void *arg, const struct mitm_request *r)
{
	struct session *s = arg;
	struct ledger_record rec;
	char names[LEDGER_NAME_MAX_BYTES];

	if (s->state != SESSION_TERMINATED)
		return -1;
	session_record_init(s, &rec, LEDGER_EVENT_REQUEST);
	rec.decision = r->refused != NULL ? LEDGER_DECISION_DENY : LEDGER_DECISION_ALLOW;
	rec.policy = s->rule;
	rec.reason = r->refused;
	rec.method = r->method;
	rec.path = r->target;
	rec.status = r->status != 0 ? r->status : LEDGER_NULL_INT;
	rec.secrets = r->secret != NULL ? r->secret :
	    session_secret_names(s, r->secrets_used, names, sizeof(names));
	if (r->refused != NULL)
		denial_ring_add(s->tenant->denials, time_now_us(), s->host, s->port, s->binary,
		    s->binary != NULL ? s->pid : -1, r->refused);
	return ledger_write(session_proxy(s)->ledger, &rec);
}

static void
session_mitm_done(void *arg, const char *why, uint64_t up, uint64_t down)
{
	(void)up;
	(void)down;
	session_close(arg, why != NULL ? why : "closed");
}

/* The endpoint's TLS is terminated: CONNECT's 200 (on a new socket, whose
 * buffer takes it whole), then the mitm takes both sockets, with what the
 * client sent already (its ClientHello, or the start of it). */
static void
session_terminate(struct session *s)
{
	struct proxy *p = session_proxy(s);
	struct proxy_tenant *t = s->tenant;
	const struct mitm_hooks hooks = { session_mitm_judge, session_mitm_request,
	    session_mitm_done, s };
	size_t reply_len = strlen(REPLY_CONNECTED);
	int client = s->client_fd, upstream = s->upstream_fd;
	char *err = NULL;

	if (s->mode == LEDGER_MODE_CONNECT) {
		if (send(client, REPLY_CONNECTED, reply_len, MSG_NOSIGNAL | MSG_DONTWAIT) !=
		    (ssize_t)reply_len) {
			session_close(s, "client_error");
			return;
		}
		session_drop_head(s, s->head_len);
	}
	session_stop_events(s);
	t->mitm.server_ctx = p->server_ctx;
	t->mitm.upstream_ctx = p->upstream_ctx;
	s->client_fd = s->upstream_fd = -1;     /* the mitm's, even when it fails */
	s->state = SESSION_TERMINATED;
	s->mitm = mitm_start(p->base, &t->mitm, s->host, s->port, client, s->in, s->in_len, upstream,
	    &hooks, &err);
	free(s->in);
	s->in = NULL;
	s->in_len = 0;
	if (s->mitm == NULL) {
		log_warnx("sandbox %s: terminating TLS toward %s: %s", t->name, s->host,
		    err != NULL ? err : "failed");
		free(err);
		session_close(s, "tls_terminate_failed");
	}
}

/* The policy changed while S resolved or dialled: what allows it now
 * decides, and how. False when it no longer may (refused and closed). */
static bool
session_still_allowed(struct session *s)
{
	const char *why;

	if (session_decide_again(s, &why) != POLICY_ALLOW) {
		session_deny(s, "revoked_by_policy_change");
		return false;
	}
	if (session_terminates(s) && (why = session_unterminable(s)) != NULL) {
		session_deny(s, why);
		return false;
	}
	s->sni_check = s->endpoint->sni_check && s->mode == LEDGER_MODE_CONNECT;
	return true;
}

static void
session_on_connected(struct session *s)
{
	int error = 0;
	socklen_t len = sizeof(error);

	event_del(&s->timer);
	event_del(&s->upstream_wr);     /* the read event may have come first */
	if (getsockopt(s->upstream_fd, SOL_SOCKET, SO_ERROR, &error, &len) == -1)
		error = errno;
	if (error != 0) {
		session_fail(s, 502, error == ETIMEDOUT ? "upstream_timeout" :
		    error == ECONNREFUSED ? "upstream_refused" : "upstream_unreachable");
		return;
	}
	if (s->gen != s->tenant->gen && !session_still_allowed(s))
		return;
	if (session_terminates(s)) {
		session_terminate(s);
		return;
	}
	session_init_relay(s);
	if (s->mode == LEDGER_MODE_FORWARD || s->transparent) {
		/* Plain HTTP either way: its head as the proxy writes it. */
		if ((s->mode == LEDGER_MODE_FORWARD || s->mode == LEDGER_MODE_HTTP) &&
		    session_forward_head(s) == -1) {
			session_fail(s, 502, "request_not_forwarded");
			return;
		}
		session_enter_relay(s, false);
		return;
	}
	/* The client's bytes after CONNECT are its ClientHello, if any. */
	session_drop_head(s, s->head_len);
	session_enter_relay(s, s->sni_check);
}

/* Records the allow decision; -1 (and a 503) when the ledger cannot take
 * it: a connection the ledger cannot record does not happen. */
static int
session_record_allow(struct session *s)
{
	struct ledger_record rec;

	session_record_init(s, &rec, LEDGER_EVENT_CONNECT);
	rec.decision = LEDGER_DECISION_ALLOW;
	rec.policy = s->rule;
	if (ledger_write(session_proxy(s)->ledger, &rec) == -1) {
		session_fail(s, 503, "ledger_unavailable");
		return -1;
	}
	s->recorded_allow = true;
	return 0;
}

static void
session_on_upstream_ready(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	if (s->state == SESSION_DIALING) {
		session_on_connected(s);
		/* A server that speaks first often has by now: its bytes go
		 * to the client at once. */
		if ((what & EV_READ) && (s->state == SESSION_RELAY || s->state == SESSION_SNIFF))
			relay_read_upstream_now(&s->relay);
	} else if (what & EV_READ)
		relay_readable(&s->relay, fd);
	else
		relay_writable(&s->relay, fd);
}

static void
session_assign_upstream(struct session *s)
{
	struct event_base *base = session_proxy(s)->base;

	event_assign(&s->upstream_rd, base, s->upstream_fd, EV_READ | EV_PERSIST,
	    session_on_upstream_ready, s);
	event_assign(&s->upstream_wr, base, s->upstream_fd, EV_WRITE, session_on_upstream_ready, s);
}

/* Dials the checked address, never the one a client named. */
static void
session_dial(struct session *s)
{
	struct proxy *p = session_proxy(s);
	socklen_t len = s->upstream.ss_family == AF_INET ? sizeof(struct sockaddr_in) :
	    sizeof(struct sockaddr_in6);
	int one = 1;

	if (session_record_allow(s) == -1)
		return;
	s->upstream_fd = socket(s->upstream.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    IPPROTO_TCP);
	if (s->upstream_fd == -1) {
		session_fail(s, 503, "no_descriptors");
		return;
	}
	session_assign_upstream(s);
	/* As the client's side (proxy_listener_new): no Nagle wait. */
	setsockopt(s->upstream_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(s->upstream_fd, (struct sockaddr *)&s->upstream, len) == -1 &&
	    errno != EINPROGRESS) {
		session_fail(s, 502, errno == ECONNREFUSED ? "upstream_refused" :
		    "upstream_unreachable");
		return;
	}
	s->state = SESSION_DIALING;
	/* Read and write in one registration: the relay reads the upstream
	 * next, so its connect costs one epoll change (dropping the write). */
	event_add(&s->upstream_rd, NULL);
	event_add(&s->upstream_wr, NULL);
	session_arm_timer(s, p->limits.connect_timeout_ms);
}

/* Picks the first resolved address the address check lets through. */
static void
session_on_addresses(struct session *s, const struct resolve_result *res)
{
	/* The entry's allowed_ips widen the internal ranges it may reach. */
	const struct policy_endpoint *ep = s->endpoint;
	enum addr_verdict v = ADDR_DENY_INVALID;

	for (size_t i = 0; i < res->naddrs; i++) {
		v = addr_check(session_proxy(s)->addrs, (const struct sockaddr *)&res->addrs[i],
		    ep != NULL ? ep->allowed_ips : NULL, ep != NULL ? ep->nallowed_ips : 0);
		if (addr_verdict_allowed(v)) {
			s->upstream = res->addrs[i];
			break;
		}
	}
	if (!addr_verdict_allowed(v)) {
		/* The ledger names the address refused (the last one judged). */
		if (res->naddrs > 0)
			session_set_ip(s, &res->addrs[res->naddrs - 1]);
		session_deny(s, addr_verdict_reason(v));
		return;
	}
	session_set_ip(s, &s->upstream);
	if (s->upstream.ss_family == AF_INET)
		((struct sockaddr_in *)&s->upstream)->sin_port = htons(s->port);
	else
		((struct sockaddr_in6 *)&s->upstream)->sin6_port = htons(s->port);
	session_dial(s);
}

static void
session_on_resolved(enum resolve_status status, const struct resolve_result *res, void *arg)
{
	struct session *s = arg;

	s->query = NULL;
	if (status != RESOLVE_OK || res->naddrs == 0) {
		session_fail(s, status == RESOLVE_ERR_TIMEOUT ? 504 : 502,
		    status == RESOLVE_ERR_NXDOMAIN || status == RESOLVE_ERR_NODATA ?
		    "name_not_found" : "resolution_failed");
		return;
	}
	session_on_addresses(s, res);
}

static void
session_resolve(struct session *s)
{
	struct proxy *p = session_proxy(s);
	struct resolve_result res;

	s->state = SESSION_RESOLVING;
	if (resolver_cached(p->resolver, s->host, AF_INET, &res) != -1) {
		session_on_resolved(res.naddrs > 0 ? RESOLVE_OK : RESOLVE_ERR_NODATA, &res, s);
		return;
	}
	s->query = resolver_lookup(p->resolver, s->host, AF_INET, session_on_resolved, s);
	if (s->query == NULL)
		session_fail(s, 503, "out_of_memory");
}

/* Where the connection on FD (of FAMILY) was headed before the fence
 * redirected it: the kernel's NAT record. */
static int
client_original_dst(int fd, sa_family_t family, struct sockaddr_storage *out)
{
	socklen_t len = sizeof(*out);

	/* IP6T_SO_ORIGINAL_DST has SO_ORIGINAL_DST's value, at SOL_IPV6. */
	return getsockopt(fd, family == AF_INET6 ? SOL_IPV6 : SOL_IP, SO_ORIGINAL_DST, out, &len);
}

/* The client's connection as the client sees it: its own address, and
 * where it connected (the listener, or where the fence redirected it from). */
static int
session_client_tuple(struct session *s, struct identify_tuple *tuple)
{
	socklen_t len = sizeof(tuple->local);

	memset(tuple, 0, sizeof(*tuple));
	if (getpeername(s->client_fd, (struct sockaddr *)&tuple->local, &len) == -1)
		return -1;
	if (s->transparent) {
		tuple->remote = s->orig;
		return 0;
	}
	/* The fence sends a sandbox's CONNECT port to where the proxy
	 * listens: the client's socket names the port it dialled, which the
	 * kernel's NAT record keeps. Host mode has none. */
	if (client_original_dst(s->client_fd, tuple->local.ss_family, &tuple->remote) == 0)
		return 0;
	len = sizeof(tuple->remote);
	return getsockname(s->client_fd, (struct sockaddr *)&tuple->remote, &len);
}

/* The executables of O a binary-scoped entry may match, into CHAIN (the
 * process's, then its ancestors'): all of them, or with TRUSTED_ONLY those
 * the sandbox cannot have written. Returns how many. */
static size_t
session_binary_chain(const struct identify_owner *o, bool trusted_only, const char **chain)
{
	size_t n = 0;

	if (!trusted_only || !o->exe_writable)
		chain[n++] = o->exe;
	for (size_t i = 0; i < o->n_ancestors; i++)
		if (!trusted_only || !o->ancestor_writable[i])
			chain[n++] = o->ancestors[i];
	return n;
}

/* Asks which process opened the client's socket (its executable and its
 * ancestors'), and keeps its binary and pid for the ledger; NULL when it
 * cannot be told. The answer lives in the proxy's scratch until the next. */
static const struct identify_owner *
session_identify(struct session *s)
{
	struct proxy_tenant *t = s->tenant;
	struct identify_owner *o = session_proxy(s)->owner;
	struct identify_tuple tuple;
	const char *run;

	s->identify_tried = true;
	if (t->diag_fd == -1 || session_client_tuple(s, &tuple) == -1 ||
	    identify_lookup(t->diag_fd, t->map_fd, &tuple, &t->boundary, t->trust, o) != IDENTIFY_OK)
		return NULL;
	free(s->binary);
	s->binary = strdup(o->exe);
	s->pid = o->pid;
	free(s->run);
	s->run = NULL;
	if (t->run_of != NULL && (run = t->run_of(t->run_of_arg, o->pid, o->ancestor_pids,
	    o->n_ancestors)) != NULL)
		s->run = strdup(run);
	return o;
}

/* Every entry naming the endpoint is scoped to binaries: identifies the
 * process and judges again with the executables the sandbox cannot have
 * written. *REASON says why when it refuses: "binary_writable" when a
 * writable copy is what would have matched. */
static enum policy_verdict
session_decide_by_binary(struct session *s, const struct policy_gen *g, struct policy_match *m,
    const char **reason)
{
	const char *chain[1 + IDENTIFY_ANCESTORS_MAX];
	const struct identify_owner *o;
	enum policy_verdict v;
	size_t n;

	*reason = "binary_not_identified";
	if ((o = session_identify(s)) == NULL)
		return POLICY_DENY_BINARY;
	n = session_binary_chain(o, true, chain);
	v = policy_index_decide(g->index, s->host, s->port, chain, n, m);
	*reason = policy_verdict_reason(v);
	if (v == POLICY_DENY_BINARY && n < 1 + o->n_ancestors) {
		n = session_binary_chain(o, false, chain);
		if (policy_index_decide(g->index, s->host, s->port, chain, n, NULL) ==
		    POLICY_ALLOW)
			*reason = "binary_writable";
	}
	return v;
}

/* A request for the sandbox's own page (PROXY_INFO_HOST, plain HTTP, by
 * the proxy or the fence): answered here, never dialled. */
static bool
session_is_info(const struct session *s)
{
	return !s->tenant->host_mode && s->port == PROXY_INFO_PORT &&
	    strcmp(s->host, PROXY_INFO_HOST) == 0 &&
	    (s->mode == LEDGER_MODE_FORWARD || s->mode == LEDGER_MODE_HTTP);
}

/* The page: the tenant's newest denials and suggestions (GET, HEAD), or a
 * 405. The socket's buffer is raised first, so the answer goes in one send. */
static void
session_answer_info(struct session *s)
{
	enum http_method method = s->req != NULL ? s->req->method : HTTP_METHOD_GET;
	struct denial *d = calloc(PROXY_INFO_DENIALS_MAX, sizeof(*d));
	char *reply = malloc(PROXY_INFO_MAX_BYTES);
	int len = -1, sndbuf = PROXY_INFO_MAX_BYTES * 2;
	size_t n;

	if (d == NULL || reply == NULL) {
		len = -1;
	} else if (method == HTTP_METHOD_GET || method == HTTP_METHOD_HEAD) {
		n = denial_ring_since(s->tenant->denials, 0, d, PROXY_INFO_DENIALS_MAX);
		len = reply_info(reply, PROXY_INFO_MAX_BYTES, s->tenant->name, d, n,
		    method == HTTP_METHOD_GET);
	} else {
		len = reply_error(reply, PROXY_INFO_MAX_BYTES, 405, "read_only");
	}
	(void)setsockopt(s->client_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (len < 0)
		session_fail(s, 503, "out_of_memory");
	else
		session_reply_and_close(s, reply, len, "info_page");
	free(reply);
	free(d);
}

/* Why S, allowed to an endpoint whose TLS is terminated, cannot be: NULL
 * when it can. Only TLS is terminated (a CONNECT tunnel, a redirected
 * ClientHello); plain HTTP or TCP to such an endpoint would pass unjudged. */
static const char *
session_unterminable(const struct session *s)
{
	if (s->mode != LEDGER_MODE_CONNECT && s->mode != LEDGER_MODE_SNI)
		return "tls_required";
	if (session_proxy(s)->server_ctx == NULL)
		return "tls_unavailable";
	return NULL;
}

/* True when S's TLS is terminated: its entry says so, or a secret of its
 * sandbox may go to its host (the swap needs the plain text). */
static bool
session_terminates(const struct session *s)
{
	return s->endpoint->tls == POLICY_TLS_TERMINATE ||
	    secretstore_covers(s->tenant->secrets, s->host, s->port);
}

/* A secret whose placeholder the bytes S sent before its decision hold
 * (a CONNECT or plain request's head, a ClientHello), or NULL: bytes the
 * proxy reads but never rewrites carry no placeholder. */
static const char *
session_misused_secret(const struct session *s)
{
	size_t n;
	const struct secretsub_secret *sec = secretstore_secrets(s->tenant->secrets, &n);

	return n > 0 && s->in_len > 0 ? secretsub_find(sec, n, s->in, s->in_len) : NULL;
}

/* Makes the tenant's current policy generation S's own. The entry that
 * allowed S (rule, endpoint) lives in the generation it was decided
 * under: the caller decides again before using them. */
static void
session_take_current_gen(struct session *s)
{
	if (s->gen == s->tenant->gen)
		return;
	policy_gen_unref(s->gen);
	s->gen = policy_gen_ref(s->tenant->gen);
}

/* Decides S, allowed under a policy since replaced, again under the
 * current one, as it was decided: by the executable that allowed it, or,
 * when the new policy asks which binary, identified now. On POLICY_ALLOW
 * S takes the new policy and its entry; otherwise it keeps the one that
 * allowed it (its close record names that entry), and *REASON may say
 * why. */
static enum policy_verdict
session_decide_again(struct session *s, const char **reason)
{
	const char *chain[1] = { s->allowed_by };
	struct policy_gen *current = s->tenant->gen;
	struct policy_match m;
	enum policy_verdict v;
	char *by;

	*reason = NULL;
	v = policy_index_decide(current->index, s->host, s->port, s->allowed_by != NULL ? chain : NULL,
	    s->allowed_by != NULL ? 1 : 0, &m);
	if (v == POLICY_NEED_BINARY)
		v = session_decide_by_binary(s, current, &m, reason);
	if (v != POLICY_ALLOW)
		return v;
	session_take_current_gen(s);
	s->rule = m.rule->name;
	s->endpoint = m.endpoint;
	if (m.binary != NULL && (s->allowed_by == NULL || strcmp(m.binary, s->allowed_by) != 0) &&
	    (by = strdup(m.binary)) != NULL) {
		free(s->allowed_by);
		s->allowed_by = by;
	}
	return POLICY_ALLOW;
}

/* Judges the request by the tenant's current policy. */
static void
session_decide(struct session *s)
{
	const char *reason = NULL;
	struct policy_match m;
	enum policy_verdict v;

	if (session_is_info(s)) {
		session_answer_info(s);
		return;
	}
	if (session_misused_secret(s) != NULL) {
		session_deny(s, "secret_misuse");
		return;
	}
	/* The policy in force now, not the one when the client connected. */
	session_take_current_gen(s);
	v = policy_index_decide(s->gen->index, s->host, s->port, NULL, 0, &m);
	if (v == POLICY_NEED_BINARY)
		v = session_decide_by_binary(s, s->gen, &m, &reason);
	if (v != POLICY_ALLOW) {
		session_deny(s, reason != NULL ? reason : policy_verdict_reason(v));
		return;
	}
	s->rule = m.rule->name;
	s->endpoint = m.endpoint;
	if (m.binary != NULL && (s->allowed_by = strdup(m.binary)) == NULL) {
		session_fail(s, 503, "out_of_memory");
		return;
	}
	if (session_terminates(s) && (reason = session_unterminable(s)) != NULL) {
		session_deny(s, reason);
		return;
	}
	s->sni_check = m.endpoint->sni_check && s->mode == LEDGER_MODE_CONNECT;
	session_resolve(s);
}

/* Keeps what the tunnel needs of the head REQ parsed into the loop's
 * scratch: its length, and for plain HTTP (forwarded later) all of it. */
static int
session_keep_request(struct session *s, const struct http_request *req)
{
	s->head_len = req->head_len;
	if (s->mode == LEDGER_MODE_CONNECT)
		return 0;
	if ((s->req = malloc(sizeof(*s->req))) == NULL)
		return -1;
	*s->req = *req;
	return 0;
}

static void
session_on_head(struct session *s)
{
	struct http_request *req = session_proxy(s)->req;
	enum http_err e = http_parse(s->in, s->in_len, req);

	if (e == HTTP_NEED_MORE) {
		if (s->in_len >= session_proxy(s)->limits.header_max_bytes)
			session_fail(s, 431, http_err_reason(HTTP_ERR_TOO_LARGE));
		return;
	}
	if (e != HTTP_OK) {
		session_fail(s, http_err_status(e), http_err_reason(e));
		return;
	}
	session_set_host(s, req->host);
	s->port = req->port;
	s->mode = req->method == HTTP_METHOD_CONNECT ? LEDGER_MODE_CONNECT : LEDGER_MODE_FORWARD;
	if (req->kind != HTTP_TARGET_NAME) {
		/* Policies name hosts; an address literal could be anything. The
		 * parser wrote it normalized, as the ledger's ip says addresses. */
		snprintf(s->ip, sizeof(s->ip), "%s", req->host);
		session_deny(s, "ip_literal_not_allowed");
		return;
	}
	if (s->mode == LEDGER_MODE_FORWARD && req->chunked) {
		session_fail(s, 411, "chunked_request_body_not_supported");
		return;
	}
	if (session_keep_request(s, req) == -1) {
		session_fail(s, 503, "out_of_memory");
		return;
	}
	session_decide(s);
}

static void
session_on_client_read(struct session *s)
{
	ssize_t n = session_read_client(s, session_proxy(s)->limits.header_max_bytes);

	if (n == SESSION_READ_ENDED) {
		session_close(s, "client_closed");
		return;
	}
	if (n == SESSION_READ_FULL) {
		session_fail(s, 431, http_err_reason(HTTP_ERR_TOO_LARGE));
		return;
	}
	if (n > 0)
		session_on_head(s);
}

static void
session_on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	switch (s->state) {
	case SESSION_READ_HEAD:
		/* A transparent client that stays silent may speak second (a
		 * server-speaks-first protocol): name it from the DNS stub. */
		if (s->transparent && s->in_len == 0)
			session_name_from_dns(s);
		else
			session_fail(s, 400, "handshake_timeout");
		break;
	case SESSION_DIALING:
		session_fail(s, 504, "upstream_timeout");
		break;
	case SESSION_SNIFF:
		/* A client that sent nothing yet: the upstream may speak first,
		 * so its bytes pass unchecked only when no ClientHello started. */
		if (s->in_len == 0) {
			session_release_client(s);
		} else {
			session_close(s, "hello_timeout");
		}
		break;
	default:
		break;
	}
}

/* The name the DNS stub gave this tenant for the address the client
 * dialled, allowed on that port; NULL when there is none. */
static const char *
session_dns_name(struct session *s)
{
	return proxy_tenant_name_for(s->tenant, &s->orig, s->port, s->gen);
}

/* The transparent client named no host in its bytes: take the DNS stub's
 * record of the address it dialled, or refuse. */
static void
session_name_from_dns(struct session *s)
{
	const char *name = session_dns_name(s);

	event_del(&s->timer);
	s->mode = LEDGER_MODE_TCP;
	if (name == NULL) {
		session_deny(s, "no_name_for_address");
		return;
	}
	session_set_host(s, name);
	session_decide(s);
}

/* Takes the host from a plain-HTTP request's Host header; false while the
 * head is incomplete. */
static bool
session_name_from_http(struct session *s)
{
	struct http_request *req = session_proxy(s)->req;
	enum http_err e = http_parse_origin(s->in, s->in_len, req);

	if (e == HTTP_NEED_MORE && s->in_len < session_proxy(s)->limits.header_max_bytes)
		return false;
	if (e != HTTP_OK || req->kind != HTTP_TARGET_NAME) {
		session_name_from_dns(s);
		return true;
	}
	event_del(&s->timer);
	s->mode = LEDGER_MODE_HTTP;
	session_set_host(s, req->host);
	if (session_keep_request(s, req) == -1) {
		session_fail(s, 503, "out_of_memory");
		return true;
	}
	session_decide(s);
	return true;
}

/* Feeds the transparent client's first bytes to the ClientHello reader,
 * then the HTTP parser; the first that names a host decides. */
static void
session_sniff_name(struct session *s, const uint8_t *data, size_t len)
{
	struct tls_hello_info info;

	switch (tls_reader_feed(s->hello, data, len, &info)) {
	case TLS_NEED_MORE:
		return;
	case TLS_FOUND:
		event_del(&s->timer);
		s->mode = LEDGER_MODE_SNI;
		session_set_host(s, info.name);
		session_decide(s);
		return;
	case TLS_NOT_TLS:
		session_name_from_http(s);
		return;
	default:
		/* TLS without a name (or with a refused one): no name from it. */
		session_name_from_dns(s);
		return;
	}
}

static void
session_on_transparent_read(struct session *s)
{
	ssize_t n = session_read_client(s, TLS_HELLO_MAX_BYTES);

	if (n == SESSION_READ_ENDED) {
		session_close(s, "client_closed");
		return;
	}
	if (n == SESSION_READ_FULL) {
		session_name_from_dns(s);
		return;
	}
	if (n <= 0)
		return;
	/* Bytes came: the short wait for a silent client gives way to the
	 * handshake deadline. */
	if ((size_t)n == s->in_len)
		session_arm_timer(s, session_proxy(s)->limits.handshake_timeout_ms);
	session_sniff_name(s, s->in + s->in_len - n, (size_t)n);
}

/* Where the fence's redirect was headed, into S's orig (whose family is
 * the client's). */
static int
session_original_dst(struct session *s)
{
	if (client_original_dst(s->client_fd, s->orig.ss_family, &s->orig) == -1)
		return -1;
	/* Until the proxy dials an address of its own, the ledger's ip is
	 * the one the sandbox dialled. */
	session_set_ip(s, &s->orig);
	s->port = ntohs(s->orig.ss_family == AF_INET ?
	    ((struct sockaddr_in *)&s->orig)->sin_port :
	    ((struct sockaddr_in6 *)&s->orig)->sin6_port);
	return 0;
}

/* A client the fence redirected: no proxy protocol, so the host comes
 * from its ClientHello, its Host header, or the DNS stub's record. */
static void
session_start_transparent(struct session *s, const struct sockaddr_storage *peer)
{
	struct proxy *p = session_proxy(s);

	s->transparent = true;
	s->mode = LEDGER_MODE_TCP;
	s->orig.ss_family = peer->ss_family;
	if (session_original_dst(s) == -1) {
		session_deny(s, "no_original_destination");
		return;
	}
	if ((s->hello = tls_reader_new()) == NULL) {
		session_close(s, "out_of_memory");
		return;
	}
	event_add(&s->client_rd, NULL);
	session_arm_timer(s, PROXY_SILENT_CLIENT_MS < p->limits.handshake_timeout_ms ?
	    PROXY_SILENT_CLIENT_MS : p->limits.handshake_timeout_ms);
	/* A TLS client sends its ClientHello right after connecting: mostly
	 * it is here by the accept, and is read now rather than a pass of the
	 * loop later. */
	session_on_transparent_read(s);
}

/* Counts S against the limits; false (and a 503) when they are reached. */
static bool
session_admit(struct session *s)
{
	struct proxy *p = session_proxy(s);

	struct proxy_owner *o = s->tenant->owner;

	if (s->tenant->tunnels >= p->limits.max_tunnels_per_tenant ||
	    p->tunnels >= p->limits.max_tunnels) {
		session_fail(s, 503, "too_many_tunnels");
		return false;
	}
	/* One user's sandboxes together hold their share at most: the
	 * others (and root) keep room. */
	if (o != NULL && o->tunnels >= o->share) {
		session_fail(s, 503, "user_tunnel_share");
		return false;
	}
	if (!ledger_ok(p->ledger)) {
		session_fail(s, 503, "ledger_unavailable");
		return false;
	}
	s->tenant->tunnels++;
	p->tunnels++;
	if (o != NULL)
		o->tunnels++;
	s->counted = true;
	return true;
}

/* While the session waits on the resolver or the dial, the client is not
 * read: a client that speaks early stops being watched until the tunnel
 * opens (then its bytes are the ClientHello, or go on as they came). */
static void
session_pause_client(struct session *s)
{
	event_del(&s->client_rd);
}

/* The client's read event, whatever the state: one registration for the
 * session's whole life. */
static void
session_on_client_ready(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	switch (s->state) {
	case SESSION_READ_HEAD:
		if (s->transparent)
			session_on_transparent_read(s);
		else
			session_on_client_read(s);
		break;
	case SESSION_SNIFF:
		session_on_sniff(s);
		break;
	case SESSION_RELAY:
		relay_readable(&s->relay, fd);
		break;
	default:
		session_pause_client(s);
		break;
	}
}

static void
session_on_client_writable(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	relay_writable(&s->relay, fd);
}

static void
session_on_idle(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	relay_idle_expired(&s->relay);
}

/* The client's events and the timers, none added; the upstream's are
 * made at the dial, with its descriptor. */
static void
session_assign_events(struct session *s)
{
	struct event_base *base = session_proxy(s)->base;

	event_assign(&s->client_rd, base, s->client_fd, EV_READ | EV_PERSIST,
	    session_on_client_ready, s);
	event_assign(&s->client_wr, base, s->client_fd, EV_WRITE, session_on_client_writable, s);
	evtimer_assign(&s->timer, base, session_on_timeout, s);
	evtimer_assign(&s->idle, base, session_on_idle, s);
}

void
session_start(struct proxy_tenant *t, int fd, const struct sockaddr_storage *peer,
    bool transparent)
{
	struct proxy *p = t->proxy;
	struct session *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		close(fd);
		return;
	}
	s->tenant = t;
	s->client_fd = fd;
	s->upstream_fd = -1;
	s->id = ledger_next_id();
	s->pid = LEDGER_NULL_INT;
	s->start_us = time_now_us();
	s->mode = LEDGER_MODE_CONNECT;
	s->gen = policy_gen_ref(t->gen);
	s->next = t->sessions;
	if (t->sessions != NULL)
		t->sessions->prev = s;
	t->sessions = s;
	session_assign_events(s);
	if (!session_admit(s))
		return;
	if (transparent) {
		session_start_transparent(s, peer);
		return;
	}
	event_add(&s->client_rd, NULL);
	session_arm_timer(s, p->limits.handshake_timeout_ms);
	/* Clients send their request right after connecting: read it now
	 * rather than a pass of the loop later. */
	session_on_client_read(s);
}

/* Closes S if its tunnel would be refused under G, or terminated (its
 * bytes would no longer pass unread); true if it did. */
static bool
session_close_if_revoked(struct session *s)
{
	const char *why;

	if (s->state != SESSION_RELAY && s->state != SESSION_SNIFF)
		return false;
	if (session_decide_again(s, &why) == POLICY_ALLOW) {
		if (!session_terminates(s))
			return false;
		session_close(s, "policy_changed");
		return true;
	}
	denial_ring_add(s->tenant->denials, time_now_us(), s->host, s->port, s->binary,
	    s->binary != NULL ? s->pid : -1, "revoked_by_policy_change");
	session_close(s, "revoked_by_policy_change");
	return true;
}

bool
session_policy_changed(struct session *s, bool close_revoked)
{
	if (s->state == SESSION_TERMINATED) {
		/* Its requests were judged by the rules it was decided under:
		 * any change may have changed them, and HTTP clients reconnect. */
		session_close(s, "policy_changed");
		return true;
	}
	return close_revoked && session_close_if_revoked(s);
}
