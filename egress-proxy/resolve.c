/* Name resolution: c-ares driven by the libevent loop through its
 * socket-state callback, a bounded TTL cache, and one c-ares query per
 * (name, family) however many callers wait for it.
 *
 * Every answer reaches its caller through the query's own libevent event,
 * activated when the answer is known and run later by the loop: so no user
 * callback runs inside resolver_lookup or inside c-ares, and a callback
 * may cancel other queries or free the resolver. */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <ares.h>
#include <event2/event.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/reason.h"
#include "common/timeutil.h"
#include "egress-proxy/resolve.h"

#define RESOLVE_NAME_MAX_BYTES 253      /* a DNS name, without the final dot */
#define RESOLVE_LABEL_MAX_BYTES 63
#define RESOLVE_SERVER_MAX_BYTES 64     /* "[v6 address]:port" and its NUL */
#define CACHE_BUCKETS (2 * RESOLVE_CACHE_MAX_ENTRIES)
#define LOOKUP_BUCKETS 1024
#define NS_PER_S INT64_C(1000000000)

/* A cached answer, positive or negative, for one (name, family). */
struct cache_entry {
	struct cache_entry *hnext;          /* bucket chain */
	TAILQ_ENTRY(cache_entry) lru;       /* head: most recently used */
	uint32_t hash;
	int family;
	enum resolve_status status;         /* OK, NXDOMAIN or NODATA */
	struct resolve_result res;
	int64_t expires_ns;                 /* on the resolver's clock */
	char name[];
};

/* The one c-ares query in flight for (name, family), and who waits for it.
 * It stays until c-ares answers, even when nobody waits any more (c-ares
 * 1.18 cannot cancel one query); the answer is cached all the same. */
struct lookup {
	struct lookup *hnext;
	uint32_t hash;
	int family;
	struct resolver *r;
	TAILQ_HEAD(, resolve_query) waiters;
	char name[];
};

struct resolve_query {
	struct resolver *r;
	struct lookup *lk;                  /* while waiting; NULL once answered */
	TAILQ_ENTRY(resolve_query) entry;   /* in lk->waiters, or in r->ready */
	struct event *deliver;              /* activated once answered */
	enum resolve_status status;
	struct resolve_result res;
	resolve_cb cb;
	void *arg;
};

/* The libevent event watching one of c-ares's sockets. */
struct sock_watch {
	LIST_ENTRY(sock_watch) entry;
	struct resolver *r;
	ares_socket_t fd;
	struct event *ev;
};

struct resolver {
	struct event_base *base;
	ares_channel channel;
	bool library_ready;                 /* ares_library_init succeeded */
	struct ares_addr_port_node *servers;  /* NULL: resolv.conf */
	int timeout_ms;
	int tries;
	struct event *timer;                /* ares_timeout() of the channel */
	LIST_HEAD(, sock_watch) socks;
	struct cache_entry *cache[CACHE_BUCKETS];
	TAILQ_HEAD(cache_lru, cache_entry) lru;
	size_t ncached;
	struct lookup *lookups[LOOKUP_BUCKETS];
	size_t nlookups;
	TAILQ_HEAD(, resolve_query) ready;  /* answered, callback not yet run */
	resolve_clock_fn clock;
	void *clock_arg;
};

static const struct resolve_result no_result;

static int64_t
resolver_now_ns(const struct resolver *r)
{
	return r->clock != NULL ? r->clock(r->clock_arg) : time_mono_ns();
}

static bool
family_supported(int family)
{
	return family == AF_INET || family == AF_INET6 || family == AF_UNSPEC;
}

static bool
name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Copies NAME lowercased, without its final dot, into OUT; -1 unless it
 * is a host name. Why so strict: c-ares reads backslash escapes and would
 * send any other byte, and the cache key must be one spelling per name. */
static int
name_normalize(const char *name, char out[RESOLVE_NAME_MAX_BYTES + 1])
{
	size_t len = strlen(name), label = 0;

	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0 || len > RESOLVE_NAME_MAX_BYTES)
		return -1;
	for (size_t i = 0; i < len; i++) {
		char c = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] - 'A' + 'a') : name[i];

		if (c == '.' ? label == 0 : !name_char_ok(c))
			return -1;
		label = c == '.' ? 0 : label + 1;
		if (label > RESOLVE_LABEL_MAX_BYTES)
			return -1;
		out[i] = c;
	}
	out[len] = '\0';
	return label == 0 ? -1 : 0;     /* "name.." */
}

/* FNV-1a over the name and the family. */
static uint32_t
key_hash(const char *name, int family)
{
	uint32_t h = 2166136261u ^ (uint32_t)family;

	for (; *name != '\0'; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h;
}

/* ---- the cache ---- */

static struct cache_entry *
cache_find(struct resolver *r, const char *name, int family, uint32_t hash)
{
	struct cache_entry *e = r->cache[hash % CACHE_BUCKETS];

	while (e != NULL && !(e->hash == hash && e->family == family &&
	    strcmp(e->name, name) == 0))
		e = e->hnext;
	return e;
}

/* Unlinks E from its bucket and from the LRU list, and frees it. */
static void
cache_drop(struct resolver *r, struct cache_entry *e)
{
	struct cache_entry **pp = &r->cache[e->hash % CACHE_BUCKETS];

	while (*pp != NULL && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp != NULL)
		*pp = e->hnext;
	TAILQ_REMOVE(&r->lru, e, lru);
	r->ncached--;
	free(e);
}

/* The cached answer for the key, refreshed as most recently used, with
 * what is left of its TTL; -1 when absent or expired (then dropped). */
static int
cache_get(struct resolver *r, const char *name, int family, uint32_t hash,
    struct resolve_result *out)
{
	struct cache_entry *e = cache_find(r, name, family, hash);
	int64_t left_ns;

	if (e == NULL)
		return -1;
	left_ns = e->expires_ns - resolver_now_ns(r);
	if (left_ns <= 0) {
		cache_drop(r, e);
		return -1;
	}
	TAILQ_REMOVE(&r->lru, e, lru);
	TAILQ_INSERT_HEAD(&r->lru, e, lru);
	*out = e->res;
	out->ttl_s = (uint32_t)((left_ns + NS_PER_S - 1) / NS_PER_S);
	return (int)e->status;
}

/* Keeps RES (its ttl_s already clamped) for the key, replacing an older
 * answer and dropping the least recently used one when full. A failed
 * allocation only means the answer is not cached. */
static void
cache_put(struct resolver *r, const char *name, int family, uint32_t hash,
    enum resolve_status status, const struct resolve_result *res)
{
	struct cache_entry *e = cache_find(r, name, family, hash), **head;
	size_t len = strlen(name);

	if (e != NULL)
		cache_drop(r, e);
	/* The least recently used answer makes room. */
	if (r->ncached >= RESOLVE_CACHE_MAX_ENTRIES && (e = TAILQ_LAST(&r->lru, cache_lru)) != NULL)
		cache_drop(r, e);
	if ((e = malloc(sizeof(*e) + len + 1)) == NULL)
		return;
	memcpy(e->name, name, len + 1);
	e->hash = hash;
	e->family = family;
	e->status = status;
	e->res = *res;
	e->expires_ns = resolver_now_ns(r) + (int64_t)res->ttl_s * NS_PER_S;
	head = &r->cache[hash % CACHE_BUCKETS];
	e->hnext = *head;
	*head = e;
	TAILQ_INSERT_HEAD(&r->lru, e, lru);
	r->ncached++;
}

void
resolver_flush(struct resolver *r)
{
	struct cache_entry *e;

	while ((e = TAILQ_FIRST(&r->lru)) != NULL)
		cache_drop(r, e);
}

/* ---- queries and their delivery ---- */

/* Runs Q's callback from the loop. Q is freed first, so the callback may
 * do anything, free the resolver included. */
static void
query_deliver(evutil_socket_t fd, short what, void *arg)
{
	struct resolve_query *q = arg;
	struct resolve_result res = q->res;
	enum resolve_status status = q->status;
	resolve_cb cb = q->cb;
	void *cb_arg = q->arg;

	(void)fd;
	(void)what;
	TAILQ_REMOVE(&q->r->ready, q, entry);
	event_free(q->deliver);
	free(q);
	cb(status, &res, cb_arg);
}

static struct resolve_query *
query_new(struct resolver *r, resolve_cb cb, void *arg)
{
	struct resolve_query *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	q->deliver = event_new(r->base, -1, 0, query_deliver, q);
	if (q->deliver == NULL) {
		free(q);
		return NULL;
	}
	q->r = r;
	q->cb = cb;
	q->arg = arg;
	return q;
}

/* Gives Q its answer and schedules its callback. */
static void
query_answer(struct resolve_query *q, enum resolve_status status,
    const struct resolve_result *res)
{
	q->lk = NULL;
	q->status = status;
	q->res = *res;
	TAILQ_INSERT_TAIL(&q->r->ready, q, entry);
	event_active(q->deliver, EV_TIMEOUT, 0);
}

void
resolve_query_cancel(struct resolve_query *q)
{
	if (q == NULL)
		return;
	if (q->lk != NULL)
		TAILQ_REMOVE(&q->lk->waiters, q, entry);
	else
		TAILQ_REMOVE(&q->r->ready, q, entry);
	event_free(q->deliver);
	free(q);
}

/* ---- lookups: one c-ares query per key ---- */

static struct lookup **
lookup_slot(struct resolver *r, const char *name, int family, uint32_t hash)
{
	struct lookup **pp = &r->lookups[hash % LOOKUP_BUCKETS];

	for (; *pp != NULL; pp = &(*pp)->hnext)
		if ((*pp)->hash == hash && (*pp)->family == family &&
		    strcmp((*pp)->name, name) == 0)
			break;
	return pp;
}

static struct lookup *
lookup_new(struct resolver *r, const char *name, int family, uint32_t hash)
{
	size_t len = strlen(name);
	struct lookup *lk = malloc(sizeof(*lk) + len + 1);
	struct lookup **head = &r->lookups[hash % LOOKUP_BUCKETS];

	if (lk == NULL)
		return NULL;
	memcpy(lk->name, name, len + 1);
	lk->hash = hash;
	lk->family = family;
	lk->r = r;
	TAILQ_INIT(&lk->waiters);
	lk->hnext = *head;
	*head = lk;
	r->nlookups++;
	return lk;
}

static void
lookup_unlink(struct resolver *r, struct lookup *lk)
{
	struct lookup **pp = lookup_slot(r, lk->name, lk->family, lk->hash);

	*pp = lk->hnext;
	r->nlookups--;
}

static enum resolve_status
status_from_ares(int status)
{
	switch (status) {
	case ARES_SUCCESS:
		return RESOLVE_OK;
	case ARES_ENOTFOUND:
		return RESOLVE_ERR_NXDOMAIN;
	case ARES_ENODATA:
		return RESOLVE_ERR_NODATA;
	case ARES_ETIMEOUT:
		return RESOLVE_ERR_TIMEOUT;
	case ARES_ESERVFAIL:
	case ARES_EREFUSED:
	case ARES_ECONNREFUSED:
	case ARES_ENOTIMP:
	case ARES_EFORMERR:
	case ARES_EBADRESP:
		return RESOLVE_ERR_SERVFAIL;
	case ARES_ENOMEM:
		return RESOLVE_ERR_NOMEM;
	default:
		return RESOLVE_ERR_OTHER;
	}
}

static uint32_t
ttl_clamp(int64_t ttl_s)
{
	if (ttl_s < RESOLVE_TTL_MIN_S)
		return RESOLVE_TTL_MIN_S;
	return ttl_s > RESOLVE_TTL_MAX_S ? RESOLVE_TTL_MAX_S : (uint32_t)ttl_s;
}

/* Appends AI's addresses of FAMILY to RES, port 0, while there is room. */
static void
result_take(struct resolve_result *res, const struct ares_addrinfo *ai, int family)
{
	for (const struct ares_addrinfo_node *n = ai->nodes; n != NULL; n = n->ai_next) {
		struct sockaddr_storage *ss;

		if (res->naddrs == RESOLVE_ADDRS_MAX)
			return;
		ss = &res->addrs[res->naddrs];
		if (n->ai_family != family || n->ai_addr == NULL ||
		    (size_t)n->ai_addrlen > sizeof(*ss))
			continue;
		memset(ss, 0, sizeof(*ss));
		memcpy(ss, n->ai_addr, (size_t)n->ai_addrlen);
		if (family == AF_INET)
			((struct sockaddr_in *)ss)->sin_port = 0;
		else
			((struct sockaddr_in6 *)ss)->sin6_port = 0;
		res->naddrs++;
	}
}

/* The smallest TTL among AI's addresses and CNAMEs: the answer is only as
 * fresh as the shortest-lived record it rests on. */
static int64_t
ttl_of(const struct ares_addrinfo *ai)
{
	int64_t ttl = INT64_MAX;

	for (const struct ares_addrinfo_node *n = ai->nodes; n != NULL; n = n->ai_next)
		ttl = n->ai_ttl < ttl ? n->ai_ttl : ttl;
	for (const struct ares_addrinfo_cname *c = ai->cnames; c != NULL; c = c->next)
		ttl = c->ttl < ttl ? c->ttl : ttl;
	return ttl;
}

/* Turns c-ares's answer into our status and result; IPv4 first. */
static enum resolve_status
result_from_ares(int family, int status, const struct ares_addrinfo *ai,
    struct resolve_result *res)
{
	enum resolve_status st = status_from_ares(status);

	*res = no_result;
	if (st == RESOLVE_OK && ai != NULL) {
		if (family != AF_INET6)
			result_take(res, ai, AF_INET);
		if (family != AF_INET)
			result_take(res, ai, AF_INET6);
		res->ttl_s = ttl_clamp(ttl_of(ai));
	}
	if (st == RESOLVE_OK && res->naddrs == 0) {
		*res = no_result;
		st = RESOLVE_ERR_NODATA;
	}
	if (st == RESOLVE_ERR_NXDOMAIN || st == RESOLVE_ERR_NODATA)
		res->ttl_s = RESOLVE_NEGATIVE_TTL_S;
	return st;
}

/* c-ares's answer for LK: cached when it is an answer (timeouts and server
 * failures are not), then handed to every waiter. */
static void
lookup_done(void *arg, int status, int timeouts, struct ares_addrinfo *ai)
{
	struct lookup *lk = arg;
	struct resolver *r = lk->r;
	struct resolve_query *q;
	struct resolve_result res;
	enum resolve_status st;

	(void)timeouts;
	/* ares_destroy() ends every query this way; resolver_free frees them. */
	if (status == ARES_EDESTRUCTION)
		goto done;
	lookup_unlink(r, lk);
	st = result_from_ares(lk->family, status, ai, &res);
	if (st == RESOLVE_OK || st == RESOLVE_ERR_NXDOMAIN || st == RESOLVE_ERR_NODATA)
		cache_put(r, lk->name, lk->family, lk->hash, st, &res);
	while ((q = TAILQ_FIRST(&lk->waiters)) != NULL) {
		TAILQ_REMOVE(&lk->waiters, q, entry);
		query_answer(q, st, &res);
	}
	free(lk);
done:
	if (ai != NULL)
		ares_freeaddrinfo(ai);
}

/* ---- driving c-ares from the loop ---- */

static void
timer_rearm(struct resolver *r)
{
	struct timeval tv;

	if (ares_timeout(r->channel, NULL, &tv) != NULL)
		evtimer_add(r->timer, &tv);
	else
		evtimer_del(r->timer);
}

static void
timer_fired(evutil_socket_t fd, short what, void *arg)
{
	struct resolver *r = arg;

	(void)fd;
	(void)what;
	ares_process_fd(r->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	timer_rearm(r);
}

/* A c-ares socket is ready. The watch may be freed inside
 * ares_process_fd (the socket closed), so R is read first. */
static void
sock_ready(evutil_socket_t fd, short what, void *arg)
{
	struct resolver *r = ((struct sock_watch *)arg)->r;

	ares_process_fd(r->channel, (what & EV_READ) ? fd : ARES_SOCKET_BAD,
	    (what & EV_WRITE) ? fd : ARES_SOCKET_BAD);
	timer_rearm(r);
}

static void
watch_free(struct sock_watch *w)
{
	LIST_REMOVE(w, entry);
	if (w->ev != NULL)
		event_free(w->ev);
	free(w);
}

/* c-ares's socket-state callback: what to watch on FD, nothing to forget
 * it. When memory runs out the socket goes unwatched and its queries end
 * by the timer (a timeout), never hang. */
static void
sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct resolver *r = data;
	struct sock_watch *w;
	short what = (short)((readable ? EV_READ : 0) | (writable ? EV_WRITE : 0));

	LIST_FOREACH(w, &r->socks, entry)
		if (w->fd == fd)
			break;
	if (w != NULL)
		watch_free(w);
	if (what == 0 || (w = calloc(1, sizeof(*w))) == NULL)
		return;
	w->r = r;
	w->fd = fd;
	LIST_INSERT_HEAD(&r->socks, w, entry);
	w->ev = event_new(r->base, fd, (short)(what | EV_PERSIST), sock_ready, w);
	if (w->ev == NULL || event_add(w->ev, NULL) != 0)
		watch_free(w);
}

/* A channel with the resolver's settings. Why DNS only (lookups "b", no
 * search domains, no HOSTALIASES): the name was checked by the policy as
 * written, so it is sent as written, and the host's own files have no say
 * over where a sandbox's traffic goes. */
static int
channel_open(struct resolver *r, ares_channel *out, char **err)
{
	static char lookups_dns_only[] = "b";
	struct ares_options o;
	int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
	    ARES_OPT_SOCK_STATE_CB | ARES_OPT_DOMAINS | ARES_OPT_LOOKUPS;
	int rc;

	memset(&o, 0, sizeof(o));
	o.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
	o.timeout = r->timeout_ms;
	o.tries = r->tries;
	o.sock_state_cb = sock_state;
	o.sock_state_cb_data = r;
	o.lookups = lookups_dns_only;
	if ((rc = ares_init_options(out, &o, mask)) != ARES_SUCCESS) {
		reason_set(err, "c-ares: %s", ares_strerror(rc));
		return -1;
	}
	if (r->servers != NULL && (rc = ares_set_servers_ports(*out, r->servers)) != ARES_SUCCESS) {
		reason_set(err, "c-ares servers: %s", ares_strerror(rc));
		ares_destroy(*out);
		return -1;
	}
	return 0;
}

/* ---- the list of servers ---- */

/* Splits TEXT into its address and port (0 when absent): "v4", "v4:port",
 * "v6", "[v6]", "[v6]:port". -1 when malformed. */
static int
server_split(const char *text, char host[RESOLVE_SERVER_MAX_BYTES], unsigned long *port)
{
	const char *end = NULL, *colon = strrchr(text, ':');
	char *stop;

	if (strlen(text) >= RESOLVE_SERVER_MAX_BYTES)
		return -1;
	if (text[0] == '[') {
		if ((end = strchr(text, ']')) == NULL || (end[1] != '\0' && end[1] != ':'))
			return -1;
		colon = end[1] == ':' ? end + 1 : NULL;
		text++;
	} else if (colon != NULL && strchr(text, ':') == colon) {
		end = colon;            /* one colon: IPv4 and a port */
	} else {
		colon = NULL;           /* none, or a bare IPv6 address */
	}
	snprintf(host, RESOLVE_SERVER_MAX_BYTES, "%.*s",
	    (int)(end != NULL ? (size_t)(end - text) : strlen(text)), text);
	*port = 0;
	if (colon == NULL)
		return 0;
	*port = strtoul(colon + 1, &stop, 10);
	return colon[1] >= '0' && colon[1] <= '9' && *stop == '\0' &&
	    *port >= 1 && *port <= 65535 ? 0 : -1;
}

/* One c-ares server node for TEXT; NULL with *ERR set. */
static struct ares_addr_port_node *
server_parse(const char *text, char **err)
{
	char host[RESOLVE_SERVER_MAX_BYTES];
	struct ares_addr_port_node *n;
	unsigned long port;

	if ((n = calloc(1, sizeof(*n))) == NULL) {
		reason_set(err, "out of memory");
		return NULL;
	}
	if (server_split(text, host, &port) < 0)
		goto bad;
	if (text[0] != '[' && inet_pton(AF_INET, host, &n->addr.addr4) == 1)
		n->family = AF_INET;
	else if (inet_pton(AF_INET6, host, &n->addr.addr6) == 1)
		n->family = AF_INET6;
	else
		goto bad;
	n->udp_port = n->tcp_port = (int)port;
	return n;
bad:
	reason_set(err, "DNS server \"%s\" is not an IP address with an optional port "
	    "(\"198.18.0.53\", \"198.18.0.53:5353\", \"[::1]:5353\")", text);
	free(n);
	return NULL;
}

static void
servers_free(struct ares_addr_port_node *n)
{
	while (n != NULL) {
		struct ares_addr_port_node *next = n->next;

		free(n);
		n = next;
	}
}

/* R's server list from SERVERS, in order. */
static int
servers_set(struct resolver *r, const char *const *servers, size_t nservers, char **err)
{
	struct ares_addr_port_node **tail = &r->servers;

	for (size_t i = 0; i < nservers; i++) {
		if ((*tail = server_parse(servers[i], err)) == NULL)
			return -1;
		tail = &(*tail)->next;
	}
	return 0;
}

/* ---- the public side ---- */

struct resolver *
resolver_new(struct event_base *base, const char *const *servers, size_t nservers,
    char **err)
{
	struct resolver *r = calloc(1, sizeof(*r));

	if (err != NULL)
		*err = NULL;
	if (r == NULL) {
		reason_set(err, "out of memory");
		return NULL;
	}
	r->base = base;
	r->timeout_ms = RESOLVE_TIMEOUT_MS;
	r->tries = RESOLVE_TRIES;
	LIST_INIT(&r->socks);
	TAILQ_INIT(&r->lru);
	TAILQ_INIT(&r->ready);
	if (servers_set(r, servers, nservers, err) < 0)
		goto fail;
	if ((r->timer = evtimer_new(base, timer_fired, r)) == NULL) {
		reason_set(err, "out of memory");
		goto fail;
	}
	if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS) {
		reason_set(err, "c-ares: cannot initialise the library");
		goto fail;
	}
	r->library_ready = true;
	if (channel_open(r, &r->channel, err) < 0)
		goto fail;
	return r;
fail:
	resolver_free(r);
	return NULL;
}

/* Frees every lookup in flight and the queries waiting on them. */
static void
lookups_free(struct resolver *r)
{
	for (size_t i = 0; i < LOOKUP_BUCKETS; i++) {
		struct lookup *lk;

		while ((lk = r->lookups[i]) != NULL) {
			while (!TAILQ_EMPTY(&lk->waiters))
				resolve_query_cancel(TAILQ_FIRST(&lk->waiters));
			r->lookups[i] = lk->hnext;
			free(lk);
		}
	}
	r->nlookups = 0;
}

void
resolver_free(struct resolver *r)
{
	if (r == NULL)
		return;
	/* Ends each c-ares query with ARES_EDESTRUCTION, which lookup_done
	 * ignores: no user callback runs from here. */
	if (r->channel != NULL)
		ares_destroy(r->channel);
	while (!LIST_EMPTY(&r->socks))
		watch_free(LIST_FIRST(&r->socks));
	lookups_free(r);
	while (!TAILQ_EMPTY(&r->ready))
		resolve_query_cancel(TAILQ_FIRST(&r->ready));
	resolver_flush(r);
	if (r->timer != NULL)
		event_free(r->timer);
	servers_free(r->servers);
	if (r->library_ready)
		ares_library_cleanup();
	free(r);
}

const char *
resolve_strerror(enum resolve_status status)
{
	switch (status) {
	case RESOLVE_OK:
		return "resolved";
	case RESOLVE_ERR_NXDOMAIN:
		return "no such name";
	case RESOLVE_ERR_NODATA:
		return "the name has no address of that family";
	case RESOLVE_ERR_TIMEOUT:
		return "the DNS server did not answer in time";
	case RESOLVE_ERR_SERVFAIL:
		return "the DNS server failed or refused";
	case RESOLVE_ERR_NOMEM:
		return "out of memory";
	case RESOLVE_ERR_CANCELLED:
		return "cancelled";
	case RESOLVE_ERR_OTHER:
		break;
	}
	return "resolution failed";
}

int
resolver_cached(struct resolver *r, const char *name, int family,
    struct resolve_result *out)
{
	char key[RESOLVE_NAME_MAX_BYTES + 1];

	if (!family_supported(family) || name_normalize(name, key) < 0)
		return -1;
	return cache_get(r, key, family, key_hash(key, family), out);
}

/* Attaches Q to the lookup of the key, starting one when none is in
 * flight. -1 when out of memory (Q untouched). */
static int
lookup_join(struct resolver *r, struct resolve_query *q, const char *key, int family,
    uint32_t hash)
{
	struct lookup *lk = *lookup_slot(r, key, family, hash);
	struct ares_addrinfo_hints hints;

	if (lk != NULL) {
		q->lk = lk;
		TAILQ_INSERT_TAIL(&lk->waiters, q, entry);
		return 0;
	}
	if ((lk = lookup_new(r, key, family, hash)) == NULL)
		return -1;
	q->lk = lk;
	TAILQ_INSERT_TAIL(&lk->waiters, q, entry);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family;
	hints.ai_flags = ARES_AI_NOSORT;    /* no probing connect() per address */
	/* May answer at once (an IP literal): LK is gone after this call. */
	ares_getaddrinfo(r->channel, lk->name, NULL, &hints, lookup_done, lk);
	timer_rearm(r);
	return 0;
}

struct resolve_query *
resolver_lookup(struct resolver *r, const char *name, int family, resolve_cb cb, void *arg)
{
	char key[RESOLVE_NAME_MAX_BYTES + 1];
	struct resolve_result res;
	struct resolve_query *q;
	uint32_t hash;
	int cached;

	if ((q = query_new(r, cb, arg)) == NULL)
		return NULL;
	if (!family_supported(family) || name_normalize(name, key) < 0) {
		query_answer(q, RESOLVE_ERR_OTHER, &no_result);
		return q;
	}
	hash = key_hash(key, family);
	if ((cached = cache_get(r, key, family, hash, &res)) != -1) {
		query_answer(q, (enum resolve_status)cached, &res);
		return q;
	}
	if (lookup_join(r, q, key, family, hash) < 0) {
		event_free(q->deliver);
		free(q);
		return NULL;
	}
	return q;
}

void
resolver_set_clock(struct resolver *r, resolve_clock_fn fn, void *arg)
{
	r->clock = fn;
	r->clock_arg = arg;
}

int
resolver_set_timeouts(struct resolver *r, int timeout_ms, int tries)
{
	int old_timeout_ms = r->timeout_ms, old_tries = r->tries;
	ares_channel fresh;

	if (r->nlookups > 0 || timeout_ms <= 0 || tries <= 0)
		return -1;
	r->timeout_ms = timeout_ms;
	r->tries = tries;
	if (channel_open(r, &fresh, NULL) < 0) {
		r->timeout_ms = old_timeout_ms;
		r->tries = old_tries;
		return -1;
	}
	ares_destroy(r->channel);
	r->channel = fresh;
	timer_rearm(r);
	return 0;
}
