/* The address-to-name map of one sandbox: which names the DNS stub gave out
 * each address for, and until when (the TTL it gave, on the monotonic clock).
 * The transparent proxy asks it for a connection that carries neither SNI nor
 * Host. Several names may share an address; each (address, name) pair is one
 * entry. The map is bounded: when full, the pair answered least recently is
 * dropped. Used from the event loop's thread only; takes no lock, never
 * logs. */
#ifndef CORRAL_NAMEMAP_H
#define CORRAL_NAMEMAP_H

#include <stddef.h>
#include <stdint.h>

struct namemap;

#define NAMEMAP_DEFAULT_ENTRIES 4096    /* (address, name) pairs per sandbox */
#define NAMEMAP_NAME_MAX_BYTES 253      /* a name, without its NUL */
#define NAMEMAP_LOOKUP_MAX_NAMES 16     /* names one lookup gives, at most */

/* An empty map holding at most MAX_ENTRIES pairs; NULL if out of memory
 * or MAX_ENTRIES is 0. */
struct namemap *namemap_new(size_t max_entries);
/* Frees M and its names; NULL is fine. */
void namemap_free(struct namemap *m);

/* Records that NAME was given out for the address of FAMILY (AF_INET: 4
 * bytes at ADDR, AF_INET6: 16, network order) for TTL_S seconds from
 * NOW_NS. A pair already present keeps the later of its two expiries and
 * becomes the most recently answered. A TTL of 0 records nothing. -1
 * (errno EINVAL) for another family, an empty name or one longer than
 * NAMEMAP_NAME_MAX_BYTES; -1 (ENOMEM) when out of memory. */
int namemap_add(struct namemap *m, int family, const uint8_t *addr, const char *name,
    uint32_t ttl_s, int64_t now_ns);

/* Puts into NAMES (up to MAX, at most NAMEMAP_LOOKUP_MAX_NAMES) the names
 * given out for that address that have not expired at NOW_NS, most
 * recently answered first; returns how many. The pointers stay valid until the next namemap_add, namemap_expire
 * or namemap_free. */
size_t namemap_lookup(const struct namemap *m, int family, const uint8_t *addr,
    int64_t now_ns, const char **names, size_t max);

/* Drops every pair expired at NOW_NS; returns how many. */
size_t namemap_expire(struct namemap *m, int64_t now_ns);

/* The pairs held, expired or not. */
size_t namemap_count(const struct namemap *m);

#endif
