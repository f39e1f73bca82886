/* The address-to-name map: a fixed array of pairs, chained into hash
 * buckets by address and into one list by the time each was answered. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "egress-proxy/namemap.h"

#define NAMEMAP_MIN_BUCKETS 16
#define NAMEMAP_ADDR_MAX_BYTES 16
#define NAMEMAP_NS_PER_S INT64_C(1000000000)

struct namemap_entry {
	bool used;
	int family;
	uint8_t addr[NAMEMAP_ADDR_MAX_BYTES];
	uint32_t hash;
	int64_t expires_ns;
	uint64_t answered;                      /* when, counted in answers */
	char *name;
	struct namemap_entry *chain;            /* the next pair in its bucket */
	struct namemap_entry *newer, *older;    /* the answer order; unused pairs on FREE by OLDER */
};

struct namemap {
	struct namemap_entry *entries;
	size_t max;
	size_t count;
	struct namemap_entry **buckets;
	size_t nbuckets;                        /* a power of two */
	uint32_t seed;
	uint64_t answers;                       /* counts every namemap_add that stored */
	struct namemap_entry *newest, *oldest;
	struct namemap_entry *free;             /* slots given back */
	size_t untouched;                       /* entries[untouched..max) never used yet */
};

static size_t
namemap_addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

/* A seed for the bucket hash, so that the addresses some name resolves to
 * cannot be picked to pile into one bucket. */
static uint32_t
namemap_seed(void)
{
	uint32_t seed;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
		seed = (uint32_t)time(NULL) ^ (uint32_t)(uintptr_t)&seed;
	return seed;
}

/* FNV-1a over the seed, the family and the address bytes. */
static uint32_t
namemap_hash(const struct namemap *m, int family, const uint8_t *addr)
{
	uint32_t h = 2166136261u ^ m->seed;
	size_t len = namemap_addr_len(family);

	h = (h ^ (uint8_t)family) * 16777619u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ addr[i]) * 16777619u;
	return h;
}

struct namemap *
namemap_new(size_t max_entries)
{
	struct namemap *m;

	if (max_entries == 0 || (m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	m->max = max_entries;
	m->nbuckets = NAMEMAP_MIN_BUCKETS;
	while (m->nbuckets < max_entries)
		m->nbuckets *= 2;
	m->entries = calloc(max_entries, sizeof(*m->entries));
	m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
	if (m->entries == NULL || m->buckets == NULL) {
		namemap_free(m);
		return NULL;
	}
	m->seed = namemap_seed();
	return m;
}

void
namemap_free(struct namemap *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; m->entries != NULL && i < m->max; i++)
		free(m->entries[i].name);
	free(m->entries);
	free(m->buckets);
	free(m);
}

static struct namemap_entry **
namemap_bucket(const struct namemap *m, uint32_t hash)
{
	return &m->buckets[hash & (m->nbuckets - 1)];
}

static bool
namemap_same_addr(const struct namemap_entry *e, uint32_t hash, int family,
    const uint8_t *addr)
{
	return e->hash == hash && e->family == family &&
	    memcmp(e->addr, addr, namemap_addr_len(family)) == 0;
}

/* Takes E out of the answer order. */
static void
namemap_unlink_order(struct namemap *m, struct namemap_entry *e)
{
	if (e->newer != NULL)
		e->newer->older = e->older;
	else
		m->newest = e->older;
	if (e->older != NULL)
		e->older->newer = e->newer;
	else
		m->oldest = e->newer;
	e->newer = e->older = NULL;
}

/* Makes E the most recently answered pair. */
static void
namemap_link_newest(struct namemap *m, struct namemap_entry *e)
{
	e->answered = ++m->answers;
	e->older = m->newest;
	e->newer = NULL;
	if (m->newest != NULL)
		m->newest->newer = e;
	m->newest = e;
	if (m->oldest == NULL)
		m->oldest = e;
}

/* Drops E: out of its bucket and the answer order, back on the free list. */
static void
namemap_remove(struct namemap *m, struct namemap_entry *e)
{
	struct namemap_entry **pp = namemap_bucket(m, e->hash);

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
	namemap_unlink_order(m, e);
	free(e->name);
	memset(e, 0, sizeof(*e));
	e->older = m->free;
	m->free = e;
	m->count--;
}

static struct namemap_entry *
namemap_find(const struct namemap *m, uint32_t hash, int family, const uint8_t *addr,
    const char *name)
{
	struct namemap_entry *e;

	for (e = *namemap_bucket(m, hash); e != NULL; e = e->chain)
		if (namemap_same_addr(e, hash, family, addr) && strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

/* A free slot, dropping the least recently answered pair when full. The
 * slots are handed out in order the first time: a sandbox that asks few
 * names never touches (so never holds) the pages of the rest. */
static struct namemap_entry *
namemap_take_slot(struct namemap *m)
{
	struct namemap_entry *e;

	if (m->free == NULL && m->untouched < m->max)
		return &m->entries[m->untouched++];
	if (m->free == NULL)
		namemap_remove(m, m->oldest);
	e = m->free;
	m->free = e->older;
	e->older = NULL;
	return e;
}

static int
namemap_insert(struct namemap *m, uint32_t hash, int family, const uint8_t *addr,
    const char *name, int64_t expires_ns)
{
	char *copy = strdup(name);
	struct namemap_entry *e, **bucket;

	if (copy == NULL) {
		errno = ENOMEM;
		return -1;
	}
	e = namemap_take_slot(m);
	e->used = true;
	e->family = family;
	memcpy(e->addr, addr, namemap_addr_len(family));
	e->hash = hash;
	e->expires_ns = expires_ns;
	e->name = copy;
	bucket = namemap_bucket(m, hash);
	e->chain = *bucket;
	*bucket = e;
	namemap_link_newest(m, e);
	m->count++;
	return 0;
}

int
namemap_add(struct namemap *m, int family, const uint8_t *addr, const char *name,
    uint32_t ttl_s, int64_t now_ns)
{
	int64_t expires_ns = now_ns + (int64_t)ttl_s * NAMEMAP_NS_PER_S;
	size_t name_len = name != NULL ? strlen(name) : 0;
	struct namemap_entry *e;
	uint32_t hash;

	if (namemap_addr_len(family) == 0 || name_len == 0 || name_len > NAMEMAP_NAME_MAX_BYTES) {
		errno = EINVAL;
		return -1;
	}
	if (ttl_s == 0)
		return 0;
	hash = namemap_hash(m, family, addr);
	if ((e = namemap_find(m, hash, family, addr, name)) == NULL)
		return namemap_insert(m, hash, family, addr, name, expires_ns);
	/* A client may still hold the earlier answer: keep the later expiry. */
	if (expires_ns > e->expires_ns)
		e->expires_ns = expires_ns;
	namemap_unlink_order(m, e);
	namemap_link_newest(m, e);
	return 0;
}

/* Puts E into FOUND (N of them, at most MAX), newest first; when full,
 * E replaces the oldest one if it is newer. */
static size_t
namemap_collect(const struct namemap_entry *e, const struct namemap_entry **found,
    size_t n, size_t max)
{
	size_t i;

	if (n == max && e->answered < found[n - 1]->answered)
		return n;
	i = n < max ? n++ : n - 1;
	for (; i > 0 && e->answered > found[i - 1]->answered; i--)
		found[i] = found[i - 1];
	found[i] = e;
	return n;
}

size_t
namemap_lookup(const struct namemap *m, int family, const uint8_t *addr, int64_t now_ns,
    const char **names, size_t max)
{
	const struct namemap_entry *found[NAMEMAP_LOOKUP_MAX_NAMES];
	const struct namemap_entry *e;
	uint32_t hash;
	size_t n = 0;

	if (max == 0 || namemap_addr_len(family) == 0)
		return 0;
	if (max > NAMEMAP_LOOKUP_MAX_NAMES)
		max = NAMEMAP_LOOKUP_MAX_NAMES;
	hash = namemap_hash(m, family, addr);
	for (e = *namemap_bucket(m, hash); e != NULL; e = e->chain)
		if (namemap_same_addr(e, hash, family, addr) && now_ns < e->expires_ns)
			n = namemap_collect(e, found, n, max);
	for (size_t i = 0; i < n; i++)
		names[i] = found[i]->name;
	return n;
}

size_t
namemap_expire(struct namemap *m, int64_t now_ns)
{
	size_t dropped = 0;

	for (size_t i = 0; i < m->max; i++) {
		if (m->entries[i].used && now_ns >= m->entries[i].expires_ns) {
			namemap_remove(m, &m->entries[i]);
			dropped++;
		}
	}
	return dropped;
}

size_t
namemap_count(const struct namemap *m)
{
	return m->count;
}
