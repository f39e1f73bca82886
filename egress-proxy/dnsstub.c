/* The DNS stub of one sandbox: UDP and TCP listeners, one state per query
 * while the resolver works, one state per TCP client. A query's life:
 * parse, judge the name by the tenant's current policy, then refuse, answer
 * NODATA, or resolve, check the addresses, record, and answer. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/sock.h"
#include "common/timeutil.h"
#include "egress-proxy/addr.h"
#include "egress-proxy/dns.h"
#include "egress-proxy/dnsstub.h"
#include "egress-proxy/namemap.h"
#include "egress-proxy/proxy-int.h"
#include "egress-proxy/resolve.h"
#include "egress-proxy/secretstore.h"
#include "policy/index.h"
#include "policy/match.h"
#include "policy/policy.h"

#define DNSSTUB_REPLY_MAX_BYTES DNS_EDNS_MAX_BYTES      /* every answer the stub builds fits */
#define DNSSTUB_UDP_IN_MAX_BYTES 4096                   /* a larger datagram is dropped */
#define DNSSTUB_ACCEPT_BACKOFF_MS 100                   /* pause of accept after EMFILE */
#define DNSSTUB_REFUSED_REASON "dns_name_not_allowed"
#define DNSSTUB_OWN_ADDRESS { 127, 0, 1, 1 }     /* the sandbox's own name, as Debian maps it */
#define DNSSTUB_OWN_TTL_S 300

struct stub_conn;

/* One query, from arrival to answer. */
struct stub_query {
	struct dnsstub *stub;
	struct stub_conn *conn;                 /* the TCP client; NULL over UDP */
	struct sockaddr_storage peer;           /* the UDP client */
	socklen_t peer_len;
	struct policy_gen *gen;                 /* the policy it is judged under */
	struct resolve_query *rq;               /* while the resolver works */
	struct dns_query q;
	char host[POLICY_HOST_MAX_BYTES + 1];   /* the normalized name */
	struct stub_query *prev, *next;         /* the stub's pending queries */
};

/* One TCP client: reads length-prefixed queries and answers them one at a
 * time, in order. */
struct stub_conn {
	struct dnsstub *stub;
	int fd;
	bool eof;                               /* the client sent all it will */
	bool closing;                           /* freed from the loop by the reaper */
	struct event *rev, *wev, *idle;
	struct stub_query *query;               /* the one being answered, if resolving */
	uint8_t in[DNSSTUB_TCP_IN_MAX_BYTES];
	size_t in_len;
	uint8_t out[DNS_TCP_PREFIX_BYTES + DNSSTUB_REPLY_MAX_BYTES];
	size_t out_off, out_len;                /* the answer not yet sent */
	struct stub_conn *prev, *next;
};

struct dnsstub {
	struct proxy_tenant *tenant;
	int udp_fd, tcp_fd;
	uint16_t port;
	bool has_gateway;                       /* bound to one IPv4 address: the gateway's */
	uint8_t gateway[4];
	struct event *udp_ev, *tcp_ev, *backoff, *expire, *reaper;
	bool restricted;                        /* only clients in CLIENT_NET */
	struct policy_cidr client_net;
	struct namemap *names;
	struct stub_query *pending;
	unsigned npending;
	struct stub_conn *conns;
	unsigned nconns;
	struct stub_conn *closing;
};

static void stub_conn_process(struct stub_conn *c);
static void stub_conn_close(struct stub_conn *c);

static struct proxy *
stub_proxy(const struct dnsstub *s)
{
	return s->tenant->proxy;
}

/* ---- the queries ---- */

static struct stub_query *
stub_query_new(struct dnsstub *s, struct stub_conn *c, const struct sockaddr_storage *peer,
    socklen_t peer_len)
{
	struct stub_query *sq = calloc(1, sizeof(*sq));

	if (sq == NULL)
		return NULL;
	sq->stub = s;
	sq->conn = c;
	if (peer != NULL) {
		sq->peer = *peer;
		sq->peer_len = peer_len;
	}
	sq->gen = policy_gen_ref(s->tenant->gen);
	return sq;
}

static void
stub_query_unlink(struct stub_query *sq)
{
	struct dnsstub *s = sq->stub;

	if (sq->prev != NULL)
		sq->prev->next = sq->next;
	else if (s->pending == sq)
		s->pending = sq->next;
	else
		return;                 /* not pending */
	if (sq->next != NULL)
		sq->next->prev = sq->prev;
	sq->prev = sq->next = NULL;
	s->npending--;
}

/* Frees SQ, cancelling its lookup; no answer is sent. */
static void
stub_query_free(struct stub_query *sq)
{
	if (sq == NULL)
		return;
	if (sq->rq != NULL)
		resolve_query_cancel(sq->rq);
	stub_query_unlink(sq);
	if (sq->conn != NULL && sq->conn->query == sq)
		sq->conn->query = NULL;
	policy_gen_unref(sq->gen);
	free(sq);
}

/* Queues the answer MSG for the TCP client C and sends what it can now. */
static void
stub_conn_queue(struct stub_conn *c, const uint8_t *msg, size_t len)
{
	ssize_t n;

	dns_tcp_put_length(c->out, len);
	memcpy(c->out + DNS_TCP_PREFIX_BYTES, msg, len);
	c->out_off = 0;
	c->out_len = DNS_TCP_PREFIX_BYTES + len;
	n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		stub_conn_close(c);
		return;
	}
	c->out_off = n > 0 ? (size_t)n : 0;
	if (c->out_off == c->out_len)
		c->out_len = c->out_off = 0;
	else
		event_add(c->wev, NULL);
}

/* Sends the built answer MSG to SQ's client and frees SQ. */
static void
stub_send(struct stub_query *sq, const uint8_t *msg, size_t len)
{
	struct stub_conn *c = sq->conn;

	if (c == NULL) {
		/* Best effort, like any UDP answer: the client asks again. */
		(void)sendto(sq->stub->udp_fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL,
		    (const struct sockaddr *)&sq->peer, sq->peer_len);
	} else {
		stub_conn_queue(c, msg, len);
	}
	stub_query_free(sq);
}

/* Answers SQ with no records and RCODE (NOERROR: NODATA). */
static void
stub_answer_rcode(struct stub_query *sq, enum dns_rcode rcode)
{
	uint8_t msg[DNSSTUB_REPLY_MAX_BYTES];
	size_t len;

	if (dns_build_rcode(&sq->q, rcode, msg, sizeof(msg), &len) != DNS_ERR_NONE) {
		if (sq->conn != NULL)
			stub_conn_close(sq->conn);
		stub_query_free(sq);
		return;
	}
	stub_send(sq, msg, len);
}

/* Answers SQ with the N IPv4 addresses ADDRS for TTL_S. */
static void
stub_answer_a(struct stub_query *sq, const uint8_t (*addrs)[4], size_t n, uint32_t ttl_s)
{
	uint8_t msg[DNSSTUB_REPLY_MAX_BYTES];
	size_t len;

	if (dns_build_a(&sq->q, addrs, n, ttl_s, msg, sizeof(msg), &len) != DNS_ERR_NONE) {
		stub_answer_rcode(sq, DNS_RCODE_SERVFAIL);
		return;
	}
	stub_send(sq, msg, len);
}

/* Writes a `dns` record about SQ; -1 when the ledger cannot take it.
 * corral-ledger(5): a dns record has no id, port or ip; an allow names
 * its entry, and has a reason only when no address was given. */
static int
stub_record(const struct stub_query *sq, enum ledger_decision decision, const char *host,
    const char *policy, const char *reason)
{
	const struct proxy_tenant *t = sq->stub->tenant;
	struct ledger_record rec;

	ledger_record_init(&rec, LEDGER_EVENT_DNS);
	rec.sandbox = t->name;
	rec.session_id = t->session_id;
	rec.agent = t->agent;
	rec.mode = LEDGER_MODE_DNS;
	rec.host = host;
	rec.decision = decision;
	rec.policy = policy;
	rec.reason = reason;
	return ledger_write(stub_proxy(sq->stub)->ledger, &rec);
}

/* Refuses a name for REASON: NXDOMAIN, a record, a denial. Nothing goes
 * upstream: the name's labels could carry data out. */
static void
stub_refuse_for(struct stub_query *sq, const char *reason)
{
	int recorded = stub_record(sq, LEDGER_DECISION_DENY, sq->q.name, NULL, reason);

	denial_ring_add(sq->stub->tenant->denials, time_now_us(), sq->q.name, 0, NULL, -1, reason);
	stub_answer_rcode(sq, recorded == -1 ? DNS_RCODE_SERVFAIL : DNS_RCODE_NXDOMAIN);
}

/* A name the policy does not allow. */
static void
stub_refuse(struct stub_query *sq)
{
	stub_refuse_for(sq, DNSSTUB_REFUSED_REASON);
}

/* True when SQ's name holds a placeholder of the tenant's secrets: a
 * name is no place for one, whatever a wildcard entry allows. */
static bool
stub_holds_placeholder(const struct stub_query *sq)
{
	size_t n;
	const struct secretsub_secret *s = secretstore_secrets(sq->stub->tenant->secrets, &n);

	for (size_t i = 0; i < n; i++)
		if (strcasestr(sq->q.name, s[i].placeholder) != NULL)
			return true;
	return false;
}

/* True when the endpoint E of rule R could allow a connection to HOST
 * (the entries policy_index_name_allowed counts). */
static bool
stub_endpoint_names(const struct policy_rule *r, const struct policy_endpoint *e,
    const char *host)
{
	return (r->any_binary || r->nbinaries > 0) && match_host(&e->host, host);
}

/* The name of the first entry that allows HOST, for the record. */
static const char *
stub_rule_name(const struct policy *p, const char *host)
{
	for (size_t i = 0; i < p->nrules; i++)
		for (size_t j = 0; j < p->rules[i].nendpoints; j++)
			if (stub_endpoint_names(&p->rules[i], &p->rules[i].endpoints[j], host))
				return p->rules[i].name;
	return NULL;
}

/* The proxy's address check for SA. An internal address passes when
 * the allowed_ips of some entry naming the host contain it: the port is
 * not known yet, and the proxy checks again with the entry of the port. */
static enum addr_verdict
stub_check_address(const struct stub_query *sq, const struct sockaddr *sa)
{
	const struct policy *p = sq->gen->policy;
	const struct addr_policy *ap = stub_proxy(sq->stub)->addrs;
	enum addr_verdict v = addr_check(ap, sa, NULL, 0);
	const struct policy_endpoint *e;

	for (size_t i = 0; v == ADDR_DENY_INTERNAL && i < p->nrules; i++) {
		for (size_t j = 0; j < p->rules[i].nendpoints; j++) {
			e = &p->rules[i].endpoints[j];
			if (e->nallowed_ips == 0 || !stub_endpoint_names(&p->rules[i], e, sq->host))
				continue;
			if (addr_verdict_allowed(addr_check(ap, sa, e->allowed_ips, e->nallowed_ips)))
				return ADDR_ALLOW_LISTED;
		}
	}
	return v;
}

static uint32_t
stub_ttl(uint32_t ttl_s)
{
	if (ttl_s < DNSSTUB_TTL_MIN_S)
		return DNSSTUB_TTL_MIN_S;
	return ttl_s > DNSSTUB_TTL_MAX_S ? DNSSTUB_TTL_MAX_S : ttl_s;
}

/* Every address failed the check: NODATA (an NXDOMAIN would also wipe
 * answers of other types), a deny record and a denial saying why. */
static void
stub_refuse_addresses(struct stub_query *sq, enum addr_verdict v)
{
	const char *reason = addr_verdict_reason(v);
	int recorded = stub_record(sq, LEDGER_DECISION_DENY, sq->host, NULL, reason);

	denial_ring_add(sq->stub->tenant->denials, time_now_us(), sq->host, 0, NULL, -1, reason);
	stub_answer_rcode(sq, recorded == -1 ? DNS_RCODE_SERVFAIL : DNS_RCODE_NOERROR);
}

/* Answers the passing addresses PASS (N of them), recording them in the
 * ledger first and in the address-to-name map. */
static void
stub_give_addresses(struct stub_query *sq, const uint8_t (*pass)[4], size_t n, uint32_t ttl_s)
{
	int64_t now_ns = time_mono_ns();

	if (stub_record(sq, LEDGER_DECISION_ALLOW, sq->host,
	    stub_rule_name(sq->gen->policy, sq->host), NULL) == -1) {
		stub_answer_rcode(sq, DNS_RCODE_SERVFAIL);
		return;
	}
	/* A full map drops its oldest pair; out of memory loses only this
	 * pair, which costs a transparent connection its name, not safety. */
	for (size_t i = 0; i < n; i++)
		(void)namemap_add(sq->stub->names, AF_INET, pass[i], sq->host, ttl_s, now_ns);
	stub_answer_a(sq, pass, n, ttl_s);
}

/* Checks each resolved address and answers with those that pass. */
static void
stub_on_addresses(struct stub_query *sq, const struct resolve_result *res)
{
	uint8_t pass[RESOLVE_ADDRS_MAX][4];
	enum addr_verdict v, first_refusal = ADDR_DENY_INVALID;
	const struct sockaddr_in *sin;
	size_t n = 0;

	for (size_t i = 0; i < res->naddrs; i++) {
		if (res->addrs[i].ss_family != AF_INET)
			continue;
		v = stub_check_address(sq, (const struct sockaddr *)&res->addrs[i]);
		sin = (const struct sockaddr_in *)&res->addrs[i];
		if (addr_verdict_allowed(v))
			memcpy(pass[n++], &sin->sin_addr, 4);
		else if (first_refusal == ADDR_DENY_INVALID)
			first_refusal = v;
	}
	if (n == 0)
		stub_refuse_addresses(sq, first_refusal);
	else
		stub_give_addresses(sq, (const uint8_t (*)[4])pass, n, stub_ttl(res->ttl_s));
}

/* Answers SQ from the resolver's outcome. */
static void
stub_on_outcome(struct stub_query *sq, enum resolve_status status,
    const struct resolve_result *res)
{
	enum dns_rcode rcode = DNS_RCODE_SERVFAIL;
	const char *reason = "resolution_failed";

	if (status == RESOLVE_OK && res->naddrs > 0) {
		stub_on_addresses(sq, res);
		return;
	}
	if (status == RESOLVE_ERR_NXDOMAIN) {
		rcode = DNS_RCODE_NXDOMAIN;
		reason = "name_not_found";
	} else if (status == RESOLVE_OK || status == RESOLVE_ERR_NODATA) {
		rcode = DNS_RCODE_NOERROR;
		reason = "no_address";
	}
	if (stub_record(sq, LEDGER_DECISION_ALLOW, sq->host,
	    stub_rule_name(sq->gen->policy, sq->host), reason) == -1)
		rcode = DNS_RCODE_SERVFAIL;
	stub_answer_rcode(sq, rcode);
}

static void
stub_on_resolved(enum resolve_status status, const struct resolve_result *res, void *arg)
{
	struct stub_query *sq = arg;
	struct stub_conn *c = sq->conn;

	/* Answered from here on: a connection closed while answering must
	 * not free SQ, which stub_send frees. */
	sq->rq = NULL;
	stub_query_unlink(sq);
	if (c != NULL)
		c->query = NULL;
	stub_on_outcome(sq, status, res);
	if (c != NULL && !c->closing)
		stub_conn_process(c);
}

/* Resolves an allowed name for an A query: the cache, else the resolver. */
static void
stub_resolve(struct stub_query *sq)
{
	struct dnsstub *s = sq->stub;
	struct resolver *r = stub_proxy(s)->resolver;
	struct resolve_result res;
	int cached;

	/* A query the ledger could not record must not leave the host. */
	if (!ledger_ok(stub_proxy(s)->ledger) || s->npending >= DNSSTUB_PENDING_MAX) {
		stub_answer_rcode(sq, DNS_RCODE_SERVFAIL);
		return;
	}
	if ((cached = resolver_cached(r, sq->host, AF_INET, &res)) != -1) {
		stub_on_outcome(sq, (enum resolve_status)cached, &res);
		return;
	}
	if ((sq->rq = resolver_lookup(r, sq->host, AF_INET, stub_on_resolved, sq)) == NULL) {
		stub_answer_rcode(sq, DNS_RCODE_SERVFAIL);
		return;
	}
	sq->next = s->pending;
	if (s->pending != NULL)
		s->pending->prev = sq;
	s->pending = sq;
	s->npending++;
	if (sq->conn != NULL)
		sq->conn->query = sq;
}

/* True when SQ asks for the sandbox's own host name (the sandbox's name,
 * one label): programs look themselves up (git does at every commit), and
 * a host's /etc/hosts, which the sandbox sees, does not name it. */
static bool
stub_is_own_name(const struct stub_query *sq)
{
	const struct proxy_tenant *t = sq->stub->tenant;

	return !t->host_mode && t->name != NULL && strcmp(sq->host, t->name) == 0;
}

/* Answers the sandbox's own name as Debian's /etc/hosts does, with
 * DNSSTUB_OWN_ADDRESS (loopback, inside the sandbox), unrecorded: it
 * leaves the sandbox for nothing, so it is no refusal to report. */
static void
stub_answer_own_name(struct stub_query *sq)
{
	static const uint8_t own[1][4] = { DNSSTUB_OWN_ADDRESS };

	if (sq->q.qtype == DNS_TYPE_A)
		stub_answer_a(sq, own, 1, DNSSTUB_OWN_TTL_S);
	else
		stub_answer_rcode(sq, DNS_RCODE_NOERROR);
}

/* True when SQ asks for PROXY_INFO_HOST, the sandbox's own page on its
 * gateway (corral(1), "FROM INSIDE"). */
static bool
stub_is_info_name(const struct stub_query *sq)
{
	return !sq->stub->tenant->host_mode && sq->stub->has_gateway &&
	    strcmp(sq->host, PROXY_INFO_HOST) == 0;
}

/* Answers PROXY_INFO_HOST with the gateway's address, unrecorded: what
 * the page serves never leaves the daemon. */
static void
stub_answer_info_name(struct stub_query *sq)
{
	const uint8_t(*gw)[4] = (const uint8_t(*)[4])sq->stub->gateway;

	if (sq->q.qtype == DNS_TYPE_A)
		stub_answer_a(sq, gw, 1, DNSSTUB_OWN_TTL_S);
	else
		stub_answer_rcode(sq, DNS_RCODE_NOERROR);
}

/* Judges the parsed query SQ by the tenant's current policy. */
static void
stub_judge(struct stub_query *sq)
{
	if (stub_holds_placeholder(sq)) {
		stub_refuse_for(sq, "secret_misuse");
		return;
	}
	/* A name that needed escapes, or does not normalize (an address
	 * literal, the root), is no host name any entry could allow. */
	if (!sq->q.name_is_hostname || match_host_normalize(sq->q.name, sq->host) != MATCH_OK) {
		stub_refuse(sq);
		return;
	}
	if (stub_is_own_name(sq)) {
		stub_answer_own_name(sq);
		return;
	}
	if (stub_is_info_name(sq)) {
		stub_answer_info_name(sq);
		return;
	}
	if (!policy_index_name_allowed(sq->gen->index, sq->host)) {
		stub_refuse(sq);
		return;
	}
	if (sq->q.qtype != DNS_TYPE_A) {
		/* AAAA and the rest: an empty answer, so the A answer stands. */
		stub_answer_rcode(sq, DNS_RCODE_NOERROR);
		return;
	}
	stub_resolve(sq);
}

/* Takes one message from a client: C over TCP, else PEER over UDP. */
static void
stub_handle(struct dnsstub *s, struct stub_conn *c, const struct sockaddr_storage *peer,
    socklen_t peer_len, const uint8_t *msg, size_t len)
{
	struct stub_query *sq = stub_query_new(s, c, peer, peer_len);
	enum dns_error e;
	enum dns_rcode rcode;

	if (sq == NULL) {
		if (c != NULL)
			stub_conn_close(c);
		return;
	}
	e = dns_parse_query(msg, len, c != NULL ? DNS_TRANSPORT_TCP : DNS_TRANSPORT_UDP, &sq->q);
	if (e == DNS_ERR_NONE) {
		stub_judge(sq);
		return;
	}
	if (c == NULL && dns_error_rcode(e, &rcode)) {
		stub_answer_rcode(sq, rcode);
		return;
	}
	/* A TCP client that sends what is no query loses its connection. */
	if (c != NULL)
		stub_conn_close(c);
	stub_query_free(sq);
}

/* ---- clients ---- */

static bool
stub_client_allowed(const struct dnsstub *s, const struct sockaddr_storage *peer)
{
	const uint8_t *bytes;

	if (!s->restricted)
		return true;
	if (peer->ss_family == AF_INET)
		bytes = (const uint8_t *)&((const struct sockaddr_in *)peer)->sin_addr;
	else if (peer->ss_family == AF_INET6)
		bytes = (const uint8_t *)&((const struct sockaddr_in6 *)peer)->sin6_addr;
	else
		return false;
	return addr_cidr_contains(&s->client_net, peer->ss_family, bytes);
}

static void
stub_on_udp(evutil_socket_t fd, short what, void *arg)
{
	struct dnsstub *s = arg;
	uint8_t buf[DNSSTUB_UDP_IN_MAX_BYTES];
	struct sockaddr_storage peer;
	socklen_t peer_len;
	ssize_t n;

	for (int i = 0; i < DNSSTUB_UDP_BATCH; i++) {
		peer_len = sizeof(peer);
		n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
		    (struct sockaddr *)&peer, &peer_len);
		if (n < 0)
			return;
		/* MSG_TRUNC gives the real length: a datagram over the buffer is dropped. */
		if ((size_t)n > sizeof(buf) || !stub_client_allowed(s, &peer))
			continue;
		stub_handle(s, NULL, &peer, peer_len, buf, (size_t)n);
	}
}

/* ---- TCP clients ---- */

static void
stub_conn_touch(struct stub_conn *c)
{
	struct timeval tv = { DNSSTUB_TCP_IDLE_TIMEOUT_S, 0 };

	event_add(c->idle, &tv);
}

/* Ends C: its pending query is cancelled, and the reaper frees it (never
 * inside its own callbacks). */
static void
stub_conn_close(struct stub_conn *c)
{
	struct dnsstub *s = c->stub;

	if (c->closing)
		return;
	c->closing = true;
	stub_query_free(c->query);
	event_del(c->rev);
	event_del(c->wev);
	event_del(c->idle);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	s->nconns--;
	c->prev = NULL;
	c->next = s->closing;
	s->closing = c;
	event_active(s->reaper, EV_TIMEOUT, 0);
}

static void
stub_conn_free(struct stub_conn *c)
{
	if (c->rev != NULL)
		event_free(c->rev);
	if (c->wev != NULL)
		event_free(c->wev);
	if (c->idle != NULL)
		event_free(c->idle);
	if (c->fd != -1)
		close(c->fd);
	free(c);
}

/* Answers the queries C has read, one at a time and in order, while no
 * answer is pending; reads on when it needs more. */
static void
stub_conn_process(struct stub_conn *c)
{
	const uint8_t *msg;
	size_t msg_len, frame_len;
	enum dns_tcp_frame f;

	while (!c->closing && c->query == NULL && c->out_len == 0) {
		f = dns_tcp_frame(c->in, c->in_len, &msg, &msg_len, &frame_len);
		if (f == DNS_TCP_BAD_LENGTH ||
		    (f == DNS_TCP_NEED_MORE && (c->eof || c->in_len == sizeof(c->in)))) {
			stub_conn_close(c);
			return;
		}
		if (f == DNS_TCP_NEED_MORE) {
			event_add(c->rev, NULL);
			return;
		}
		stub_handle(c->stub, c, NULL, 0, msg, msg_len);
		if (c->closing)
			return;
		memmove(c->in, c->in + frame_len, c->in_len - frame_len);
		c->in_len -= frame_len;
		if (!c->eof)
			event_add(c->rev, NULL);
	}
}

static void
stub_conn_on_read(evutil_socket_t fd, short what, void *arg)
{
	struct stub_conn *c = arg;
	ssize_t n;

	if (c->in_len == sizeof(c->in)) {
		/* Full while an answer is pending: wait for it (back-pressure). */
		event_del(c->rev);
		return;
	}
	n = recv(fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		stub_conn_close(c);
		return;
	}
	if (n == 0) {
		c->eof = true;
		event_del(c->rev);
	}
	c->in_len += (size_t)n;
	stub_conn_touch(c);
	stub_conn_process(c);
}

static void
stub_conn_on_write(evutil_socket_t fd, short what, void *arg)
{
	struct stub_conn *c = arg;
	ssize_t n = send(fd, c->out + c->out_off, c->out_len - c->out_off,
	    MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		event_add(c->wev, NULL);
		return;
	}
	if (n <= 0) {
		stub_conn_close(c);
		return;
	}
	c->out_off += (size_t)n;
	if (c->out_off < c->out_len) {
		event_add(c->wev, NULL);
		return;
	}
	c->out_off = c->out_len = 0;
	stub_conn_touch(c);
	stub_conn_process(c);
}

static void
stub_conn_on_idle(evutil_socket_t fd, short what, void *arg)
{
	stub_conn_close(arg);
}

/* Takes over the accepted FD; -1 when out of memory (FD is then closed). */
static int
stub_conn_start(struct dnsstub *s, int fd)
{
	struct event_base *base = stub_proxy(s)->base;
	struct stub_conn *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		close(fd);
		return -1;
	}
	c->stub = s;
	c->fd = fd;
	c->rev = event_new(base, fd, EV_READ | EV_PERSIST, stub_conn_on_read, c);
	c->wev = event_new(base, fd, EV_WRITE, stub_conn_on_write, c);
	c->idle = event_new(base, -1, 0, stub_conn_on_idle, c);
	if (c->rev == NULL || c->wev == NULL || c->idle == NULL) {
		stub_conn_free(c);
		return -1;
	}
	c->next = s->conns;
	if (s->conns != NULL)
		s->conns->prev = c;
	s->conns = c;
	s->nconns++;
	event_add(c->rev, NULL);
	stub_conn_touch(c);
	return 0;
}

static void
stub_on_backoff_end(evutil_socket_t fd, short what, void *arg)
{
	struct dnsstub *s = arg;

	event_add(s->tcp_ev, NULL);
}

static void
stub_on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct dnsstub *s = arg;
	struct timeval tv = { 0, DNSSTUB_ACCEPT_BACKOFF_MS * 1000 };
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	int fd = accept4(lfd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd == -1) {
		/* Out of descriptors: pause instead of spinning on a ready listener. */
		if (errno == EMFILE || errno == ENFILE) {
			event_del(s->tcp_ev);
			event_add(s->backoff, &tv);
		}
		return;
	}
	if (s->nconns >= DNSSTUB_TCP_CONNS_MAX || !stub_client_allowed(s, &peer)) {
		close(fd);
		return;
	}
	(void)stub_conn_start(s, fd);
}

static void
stub_on_reap(evutil_socket_t fd, short what, void *arg)
{
	struct dnsstub *s = arg;
	struct stub_conn *c;

	while ((c = s->closing) != NULL) {
		s->closing = c->next;
		stub_conn_free(c);
	}
}

static void
stub_on_expire(evutil_socket_t fd, short what, void *arg)
{
	struct dnsstub *s = arg;

	namemap_expire(s->names, time_mono_ns());
}

/* ---- listening ---- */

static uint16_t
stub_sockaddr_port(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET ? ((const struct sockaddr_in *)ss)->sin_port :
	    ((const struct sockaddr_in6 *)ss)->sin6_port);
}

/* Binds UDP, then TCP on the port UDP got; with port 0, another port is
 * tried when TCP finds that one taken. -1 with errno. */
static int
stub_bind(struct dnsstub *s, const struct sockaddr *listen_addr, socklen_t len)
{
	struct sockaddr_storage want, addr;
	socklen_t alen;

	if (len > sizeof(want) || (listen_addr->sa_family != AF_INET &&
	    listen_addr->sa_family != AF_INET6)) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	memset(&want, 0, sizeof(want));
	memcpy(&want, listen_addr, len);
	for (int i = 0; i < DNSSTUB_BIND_TRIES; i++) {
		addr = want;
		alen = sizeof(addr);
		if ((s->udp_fd = sock_bind((const struct sockaddr *)&addr, len, SOCK_DGRAM)) == -1 ||
		    getsockname(s->udp_fd, (struct sockaddr *)&addr, &alen) == -1)
			return -1;
		s->port = stub_sockaddr_port(&addr);
		if ((s->tcp_fd = sock_bind((const struct sockaddr *)&addr, len, SOCK_STREAM)) != -1)
			return 0;
		if (errno != EADDRINUSE || stub_sockaddr_port(&want) != 0)
			return -1;
		close(s->udp_fd);
		s->udp_fd = -1;
	}
	errno = EADDRINUSE;
	return -1;
}

static int
stub_events(struct dnsstub *s)
{
	struct event_base *base = stub_proxy(s)->base;
	struct timeval every = { DNSSTUB_EXPIRE_INTERVAL_S, 0 };

	s->udp_ev = event_new(base, s->udp_fd, EV_READ | EV_PERSIST, stub_on_udp, s);
	s->tcp_ev = event_new(base, s->tcp_fd, EV_READ | EV_PERSIST, stub_on_accept, s);
	s->backoff = event_new(base, -1, 0, stub_on_backoff_end, s);
	s->expire = event_new(base, -1, EV_PERSIST, stub_on_expire, s);
	s->reaper = event_new(base, -1, 0, stub_on_reap, s);
	if (s->udp_ev == NULL || s->tcp_ev == NULL || s->backoff == NULL || s->expire == NULL ||
	    s->reaper == NULL) {
		errno = ENOMEM;
		return -1;
	}
	event_add(s->udp_ev, NULL);
	event_add(s->tcp_ev, NULL);
	event_add(s->expire, &every);
	return 0;
}

static struct dnsstub *
stub_alloc(struct proxy_tenant *t)
{
	struct dnsstub *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->tenant = t;
	s->udp_fd = s->tcp_fd = -1;
	if ((s->names = namemap_new(NAMEMAP_DEFAULT_ENTRIES)) == NULL) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

static struct dnsstub *
stub_fail(struct dnsstub *s)
{
	int saved = errno;

	dnsstub_free(s);
	errno = saved;
	return NULL;
}

struct dnsstub *
dnsstub_new(struct proxy_tenant *t, const struct sockaddr *listen_addr, socklen_t len)
{
	struct dnsstub *s = stub_alloc(t);

	if (s == NULL)
		return NULL;
	if (stub_bind(s, listen_addr, len) == -1 || stub_events(s) == -1)
		return stub_fail(s);
	return s;
}

struct dnsstub *
dnsstub_adopt(struct proxy_tenant *t, int udp_fd, int tcp_fd)
{
	struct dnsstub *s = stub_alloc(t);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (s == NULL) {
		close(udp_fd);
		close(tcp_fd);
		return NULL;
	}
	s->udp_fd = udp_fd;
	s->tcp_fd = tcp_fd;
	s->port = sock_port(udp_fd);
	if (getsockname(udp_fd, (struct sockaddr *)&ss, &len) == -1 ||
	    sock_check(udp_fd, ss.ss_family, SOCK_DGRAM) == -1 ||
	    sock_check(tcp_fd, ss.ss_family, SOCK_STREAM) == -1)
		return stub_fail(s);
	if (sock_port(tcp_fd) != s->port) {
		errno = EINVAL;
		return stub_fail(s);
	}
	if (ss.ss_family == AF_INET) {
		memcpy(s->gateway, &((struct sockaddr_in *)&ss)->sin_addr, sizeof(s->gateway));
		s->has_gateway = true;
	}
	return stub_events(s) == -1 ? stub_fail(s) : s;
}

static void
stub_event_free(struct event *ev)
{
	if (ev != NULL)
		event_free(ev);
}

void
dnsstub_free(struct dnsstub *s)
{
	if (s == NULL)
		return;
	while (s->conns != NULL)
		stub_conn_close(s->conns);
	while (s->pending != NULL)
		stub_query_free(s->pending);
	stub_on_reap(-1, 0, s);
	stub_event_free(s->udp_ev);
	stub_event_free(s->tcp_ev);
	stub_event_free(s->backoff);
	stub_event_free(s->expire);
	stub_event_free(s->reaper);
	if (s->udp_fd != -1)
		close(s->udp_fd);
	if (s->tcp_fd != -1)
		close(s->tcp_fd);
	namemap_free(s->names);
	free(s);
}

void
dnsstub_set_client_net(struct dnsstub *s, const struct sockaddr *net, unsigned prefix)
{
	memset(&s->client_net, 0, sizeof(s->client_net));
	s->client_net.family = net->sa_family;
	s->client_net.prefix_len = (uint8_t)prefix;
	if (net->sa_family == AF_INET)
		memcpy(s->client_net.addr, &((const struct sockaddr_in *)net)->sin_addr, 4);
	else
		memcpy(s->client_net.addr, &((const struct sockaddr_in6 *)net)->sin6_addr, 16);
	s->restricted = true;
}

uint16_t
dnsstub_port(const struct dnsstub *s)
{
	return s->port;
}

struct namemap *
dnsstub_namemap(const struct dnsstub *s)
{
	return s->names;
}
