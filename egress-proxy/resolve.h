/* Name resolution for the proxy and the DNS stub: c-ares driven by the
 * libevent loop, with a small cache that respects TTLs (c-ares 1.18 has
 * none). The proxy resolves only names the policy already allowed. */
#ifndef CORRAL_RESOLVE_H
#define CORRAL_RESOLVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct event_base;
struct resolver;
struct resolve_query;

#define RESOLVE_ADDRS_MAX 8             /* addresses kept per answer */
#define RESOLVE_CACHE_MAX_ENTRIES 4096  /* names cached, least recently used dropped */
#define RESOLVE_TTL_MIN_S 5             /* a shorter TTL is raised to this */
#define RESOLVE_TTL_MAX_S 300           /* a longer TTL is cut to this */
#define RESOLVE_NEGATIVE_TTL_S 5        /* how long "no such name" is kept */
#define RESOLVE_TIMEOUT_MS 3000         /* per try, per server */
#define RESOLVE_TRIES 2

enum resolve_status {
	RESOLVE_OK = 0,
	RESOLVE_ERR_NXDOMAIN,           /* the name does not exist */
	RESOLVE_ERR_NODATA,             /* the name exists, without addresses of that family */
	RESOLVE_ERR_TIMEOUT,
	RESOLVE_ERR_SERVFAIL,           /* the upstream server failed or refused */
	RESOLVE_ERR_NOMEM,
	RESOLVE_ERR_CANCELLED,          /* never passed to a callback: see resolve_query_cancel */
	RESOLVE_ERR_OTHER,
};

struct resolve_result {
	size_t naddrs;
	struct sockaddr_storage addrs[RESOLVE_ADDRS_MAX];  /* port 0 */
	uint32_t ttl_s;                 /* what is left of the TTL */
};

typedef void (*resolve_cb)(enum resolve_status status, const struct resolve_result *res,
    void *arg);

/* A resolver on BASE asking SERVERS ("198.18.0.53", "[::1]:5353"; NULL or
 * none: the machine's resolv.conf). NULL with a malloc'd reason in *ERR. */
struct resolver *resolver_new(struct event_base *base, const char *const *servers,
    size_t nservers, char **err);
/* Cancels every query (no callback runs) and frees R; NULL is fine. */
void resolver_free(struct resolver *r);

/* A one-line description of STATUS. */
const char *resolve_strerror(enum resolve_status status);

/* Answers from the cache alone: RESOLVE_OK with *OUT filled, a cached
 * failure, or -1 when the name is not cached (or expired). Never blocks. */
int resolver_cached(struct resolver *r, const char *name, int family,
    struct resolve_result *out);

/* Starts a lookup of NAME (normalized) for FAMILY (AF_INET, AF_INET6 or
 * AF_UNSPEC). CB runs later from the loop, exactly once, unless the query
 * is cancelled first. NULL when the query could not start (out of memory). */
struct resolve_query *resolver_lookup(struct resolver *r, const char *name, int family,
    resolve_cb cb, void *arg);
/* Cancels Q: its callback will not run. Q is invalid afterwards. */
void resolve_query_cancel(struct resolve_query *q);

/* Drops every cached answer (after a policy change, or for tests). */
void resolver_flush(struct resolver *r);

#endif
