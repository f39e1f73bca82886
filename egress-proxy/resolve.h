/* Name resolution for the proxy and the DNS stub: c-ares driven by the
 * libevent loop, with a small cache that respects TTLs (c-ares 1.18 has
 * none). Concurrent lookups of one name and family share one query.
 *
 * The resolver asks DNS about whatever name it is given: checking the name
 * against the policy first is the caller's job, and a name the policy
 * refused must never reach resolver_lookup, or its labels would leave the
 * sandbox in the query. */
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
	RESOLVE_ERR_OTHER,              /* e.g. NAME is not a host name */
};

struct resolve_result {
	size_t naddrs;                  /* 0 unless RESOLVE_OK */
	struct sockaddr_storage addrs[RESOLVE_ADDRS_MAX];  /* port 0; IPv4 before IPv6 */
	uint32_t ttl_s;                 /* what is left of the TTL; 0 for an uncached failure */
};

/* RES is never NULL; it lives only for the duration of the call. */
typedef void (*resolve_cb)(enum resolve_status status, const struct resolve_result *res,
    void *arg);

/* A resolver on BASE asking SERVERS ("198.18.0.53", "198.18.0.53:5353",
 * "::1", "[::1]:5353"; NULL or none: the machine's resolv.conf). It asks
 * DNS only: no hosts file, no search domains, no HOSTALIASES. NULL with a
 * malloc'd reason in *ERR (when ERR is not NULL). */
struct resolver *resolver_new(struct event_base *base, const char *const *servers,
    size_t nservers, char **err);
/* Cancels every query (no callback runs) and frees R; NULL is fine. Safe
 * from inside a resolve_cb. */
void resolver_free(struct resolver *r);

/* A one-line description of STATUS. */
const char *resolve_strerror(enum resolve_status status);

/* Answers from the cache alone: RESOLVE_OK with *OUT filled, a cached
 * failure (RESOLVE_ERR_NXDOMAIN or RESOLVE_ERR_NODATA, *OUT with no
 * address), or -1 when the name is not cached (or expired). Never blocks.
 * OUT->ttl_s is what is left of the TTL. */
int resolver_cached(struct resolver *r, const char *name, int family,
    struct resolve_result *out);

/* Starts a lookup of NAME (a host name: letters, digits, '-', '_' and dots;
 * case and one final dot do not matter) for FAMILY (AF_INET, AF_INET6 or
 * AF_UNSPEC). CB runs later from the loop, never from inside this call,
 * exactly once, unless the query is cancelled first; the query is invalid
 * once CB starts. NULL when the query could not start (out of memory). */
struct resolve_query *resolver_lookup(struct resolver *r, const char *name, int family,
    resolve_cb cb, void *arg);
/* Cancels Q: its callback will not run. Q is invalid afterwards. Safe from
 * inside any other query's callback. */
void resolve_query_cancel(struct resolve_query *q);

/* Drops every cached answer (after a policy change, or for tests). */
void resolver_flush(struct resolver *r);

/* For tests: the clock, in monotonic nanoseconds, that ages cached
 * answers; FN NULL goes back to CLOCK_MONOTONIC. */
typedef int64_t (*resolve_clock_fn)(void *arg);
void resolver_set_clock(struct resolver *r, resolve_clock_fn fn, void *arg);

/* For tests: TIMEOUT_MS per try and TRIES instead of RESOLVE_TIMEOUT_MS
 * and RESOLVE_TRIES. 0, or -1 while a lookup is in flight or on failure
 * (the old settings stay). */
int resolver_set_timeouts(struct resolver *r, int timeout_ms, int tries);

#endif
