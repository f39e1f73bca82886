/* The decision index. Each host kind has an open-addressing hash table
 * (linear probing, at most half full) from a name to the run of
 * (rule, endpoint) references that carry it, in policy order:
 * - exact names are keyed by the name;
 * - "*.suffix" by the suffix, looked up with the query minus its first label;
 * - "**.suffix" by the suffix, looked up with every proper suffix of the query.
 * Keys are hashed with FNV-1a over their bytes from last to first, so one
 * right-to-left pass over a query yields the hash of every suffix of it.
 * Only the policy inserts keys; a query can only probe, so it cannot make
 * the tables degrade. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "policy/index.h"
#include "policy/match.h"

#define INDEX_FNV_OFFSET 0xcbf29ce484222325ULL
#define INDEX_FNV_PRIME 0x100000001b3ULL
#define INDEX_TABLE_MIN_SLOTS 8
#define INDEX_NO_MATCH UINT32_MAX
#define INDEX_NKINDS 3                  /* enum policy_host_kind */
/* Tables a query can hit: the exact name, its one-label parent, and one
 * any-depth suffix per dot (a 253-byte name has at most 126 dots). */
#define INDEX_CANDIDATES_MAX (2 + POLICY_HOST_MAX_BYTES / 2)

/* One endpoint of one rule, under one host key. */
struct index_ref {
	const struct policy_rule *rule;
	const struct policy_endpoint *ep;
	uint32_t ordinal;               /* position in policy order, terminated endpoints first */
	bool any_binary;                /* the rule lists MATCH_ANY_BINARY_GLOB */
};

/* A key and its run of references (sorted by ordinal); key NULL: empty. */
struct index_slot {
	uint64_t hash;
	const char *key;
	size_t keylen;
	const struct index_ref *refs;   /* into its table's refs */
	size_t count;
};

struct index_table {
	struct index_slot *slots;
	size_t mask;                    /* slot count - 1; slot count is a power of two */
	struct index_ref *refs;
	size_t nrefs;
};

struct policy_index {
	const struct policy *policy;
	struct index_table tables[INDEX_NKINDS];
};

/* What one decision has seen so far. */
struct index_decision {
	uint16_t port;
	const char *const *binaries;
	size_t nbinaries;
	bool named;                     /* some entry names host:port */
	bool identifiable;              /* some binary-scoped entry could allow */
	uint32_t best;                  /* ordinal of the first allowing entry */
	uint32_t terminated_unknown;    /* the first terminated binary-scoped one that might */
	struct policy_match match;
};

/* Feeds the byte C into the running FNV-1a hash H. */
static uint64_t
index_hash_step(uint64_t h, char c)
{
	return (h ^ (uint8_t)c) * INDEX_FNV_PRIME;
}

/* The hash of the LEN bytes at KEY, taken from the last byte to the first. */
static uint64_t
index_hash(const char *key, size_t len)
{
	uint64_t h = INDEX_FNV_OFFSET;

	while (len > 0)
		h = index_hash_step(h, key[--len]);
	return h;
}

/* The first slot to probe for hash H: FNV's high bits folded down. */
static size_t
index_slot_start(const struct index_table *t, uint64_t h)
{
	return (size_t)(h ^ (h >> 29) ^ (h >> 47)) & t->mask;
}

/* The slot holding KEY (LEN bytes, hash H), or NULL. */
static const struct index_slot *
index_table_find(const struct index_table *t, const char *key, size_t len, uint64_t h)
{
	size_t i;
	const struct index_slot *s;

	if (t->nrefs == 0)
		return NULL;
	for (i = index_slot_start(t, h);; i = (i + 1) & t->mask) {
		s = &t->slots[i];
		if (s->key == NULL)
			return NULL;
		if (s->hash == h && s->keylen == len && memcmp(s->key, key, len) == 0)
			return s;
	}
}

/* Orders references by host name, then policy order. */
static int
index_ref_compare(const void *a, const void *b)
{
	const struct index_ref *x = a, *y = b;
	int c = strcmp(x->ep->host.name, y->ep->host.name);

	if (c != 0)
		return c;
	return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

/* True when RULE lists MATCH_ANY_BINARY_GLOB, whether or not its any_binary flag says so. */
static bool
index_rule_any_binary(const struct policy_rule *rule)
{
	size_t i;

	if (rule->any_binary)
		return true;
	for (i = 0; i < rule->nbinaries; i++)
		if (rule->binaries[i].path != NULL && strcmp(rule->binaries[i].path, MATCH_ANY_BINARY_GLOB) == 0)
			return true;
	return false;
}

/* True when EP can take part in a decision: a name and some port. */
static bool
index_endpoint_usable(const struct policy_endpoint *ep)
{
	return ep->host.name != NULL && ep->nports > 0 &&
	    (unsigned)ep->host.kind < INDEX_NKINDS;
}

/* Counts usable endpoints per host kind into COUNTS; false when the
 * policy has more endpoints than an ordinal can number. */
static bool
index_count(const struct policy *p, size_t counts[INDEX_NKINDS])
{
	size_t r, e, total = 0;

	for (r = 0; r < p->nrules; r++) {
		total += p->rules[r].nendpoints;
		for (e = 0; e < p->rules[r].nendpoints; e++)
			if (index_endpoint_usable(&p->rules[r].endpoints[e]))
				counts[p->rules[r].endpoints[e].host.kind]++;
	}
	return total < INDEX_NO_MATCH / 2;
}

/* Appends a reference for every usable endpoint to its kind's table.
 * Endpoints whose TLS is terminated come before all others, in policy
 * order among themselves: where two entries allow one connection, the
 * one that judges its requests decides, so that another entry cannot let
 * past unjudged what rules restrict (corral-policy(5), "TERMINATED
 * ENDPOINTS"). */
static void
index_fill(struct policy_index *idx)
{
	const struct policy *p = idx->policy;
	const struct policy_endpoint *ep;
	struct index_table *t;
	uint32_t ordinal = 0, total = 0;
	size_t r, e;

	for (r = 0; r < p->nrules; r++)
		total += (uint32_t)p->rules[r].nendpoints;
	for (r = 0; r < p->nrules; r++) {
		bool any = index_rule_any_binary(&p->rules[r]);

		for (e = 0; e < p->rules[r].nendpoints; e++, ordinal++) {
			ep = &p->rules[r].endpoints[e];
			if (!index_endpoint_usable(ep))
				continue;
			t = &idx->tables[ep->host.kind];
			t->refs[t->nrefs++] = (struct index_ref){ &p->rules[r], ep,
			    ep->tls == POLICY_TLS_TERMINATE ? ordinal : total + ordinal, any };
		}
	}
}

/* Puts the run of COUNT references from FIRST under their common name. */
static void
index_table_insert(struct index_table *t, size_t first, size_t count)
{
	const char *key = t->refs[first].ep->host.name;
	size_t len = strlen(key);
	uint64_t h = index_hash(key, len);
	size_t i = index_slot_start(t, h);

	while (t->slots[i].key != NULL)
		i = (i + 1) & t->mask;
	t->slots[i] = (struct index_slot){ h, key, len, &t->refs[first], count };
}

/* Sorts T's references and builds its slots; false when out of memory. */
static bool
index_table_build(struct index_table *t)
{
	size_t i, start, groups = 0, nslots = INDEX_TABLE_MIN_SLOTS;

	if (t->nrefs == 0)
		return true;
	qsort(t->refs, t->nrefs, sizeof(*t->refs), index_ref_compare);
	for (i = 0; i < t->nrefs; i++)
		if (i == 0 || strcmp(t->refs[i].ep->host.name, t->refs[i - 1].ep->host.name) != 0)
			groups++;
	while (nslots < 2 * groups)
		nslots *= 2;
	if ((t->slots = calloc(nslots, sizeof(*t->slots))) == NULL)
		return false;
	t->mask = nslots - 1;
	for (start = 0, i = 1; i <= t->nrefs; i++) {
		if (i < t->nrefs && strcmp(t->refs[i].ep->host.name, t->refs[start].ep->host.name) == 0)
			continue;
		index_table_insert(t, start, i - start);
		start = i;
	}
	return true;
}

struct policy_index *
policy_index_new(const struct policy *p)
{
	struct policy_index *idx = calloc(1, sizeof(*idx));
	size_t counts[INDEX_NKINDS] = { 0 };
	size_t k;

	if (idx == NULL)
		return NULL;
	idx->policy = p;
	if (!index_count(p, counts))
		goto fail;
	for (k = 0; k < INDEX_NKINDS; k++)
		if (counts[k] > 0 &&
		    (idx->tables[k].refs = calloc(counts[k], sizeof(struct index_ref))) == NULL)
			goto fail;
	index_fill(idx);
	for (k = 0; k < INDEX_NKINDS; k++)
		if (!index_table_build(&idx->tables[k]))
			goto fail;
	return idx;
fail:
	policy_index_free(idx);
	return NULL;
}

void
policy_index_free(struct policy_index *idx)
{
	size_t k;

	if (idx == NULL)
		return;
	for (k = 0; k < INDEX_NKINDS; k++) {
		free(idx->tables[k].slots);
		free(idx->tables[k].refs);
	}
	free(idx);
}

/* Collects into OUT the slots whose patterns match NAME; returns how many. */
static size_t
index_candidates(const struct policy_index *idx, const char *name,
    const struct index_slot *out[INDEX_CANDIDATES_MAX])
{
	const struct index_table *any = &idx->tables[POLICY_HOST_ANY_DEPTH];
	const struct index_slot *s;
	size_t len = strnlen(name, POLICY_HOST_MAX_BYTES + 1), i, n = 0;
	size_t parent = 0;              /* index of the first dot, 0 if none */
	uint64_t h = INDEX_FNV_OFFSET, parent_hash = 0;

	if (len == 0 || len > POLICY_HOST_MAX_BYTES)
		return 0;
	for (i = len; i-- > 0;) {
		/* Here h hashes name[i + 1 .. len): a proper suffix when
		 * name[i] is a dot with a label before it. */
		if (name[i] == '.' && i > 0) {
			parent = i;
			parent_hash = h;
			if ((s = index_table_find(any, name + i + 1, len - i - 1, h)) != NULL)
				out[n++] = s;
		}
		h = index_hash_step(h, name[i]);
	}
	if ((s = index_table_find(&idx->tables[POLICY_HOST_EXACT], name, len, h)) != NULL)
		out[n++] = s;
	if (parent > 0 && (s = index_table_find(&idx->tables[POLICY_HOST_ONE_LABEL],
	    name + parent + 1, len - parent - 1, parent_hash)) != NULL)
		out[n++] = s;
	return n;
}

/* True when PORT is among EP's sorted ports. */
static bool
index_port_listed(const struct policy_endpoint *ep, uint16_t port)
{
	size_t lo = 0, hi = ep->nports, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ep->ports[mid] == port)
			return true;
		if (ep->ports[mid] < port)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* The first of D's binaries that one of RULE's globs matches, or NULL. */
static const char *
index_binary_allowed(const struct index_decision *d, const struct policy_rule *rule)
{
	size_t b, g;

	for (b = 0; b < d->nbinaries; b++)
		for (g = 0; g < rule->nbinaries; g++)
			if (d->binaries[b] != NULL && match_binary(rule->binaries[g].path, d->binaries[b]))
				return d->binaries[b];
	return NULL;
}

/* Weighs reference R, which names D's host, into the decision D. */
static void
index_consider(struct index_decision *d, const struct index_ref *r)
{
	const char *binary = NULL;

	if (!index_port_listed(r->ep, d->port))
		return;
	d->named = true;
	if (!r->any_binary) {
		if (r->rule->nbinaries == 0)
			return;         /* an empty list lets nothing through */
		if (d->binaries == NULL) {
			d->identifiable = true;
			if (r->ep->tls == POLICY_TLS_TERMINATE && r->ordinal < d->terminated_unknown)
				d->terminated_unknown = r->ordinal;
			return;
		}
		if ((binary = index_binary_allowed(d, r->rule)) == NULL)
			return;
	}
	d->best = r->ordinal;
	d->match = (struct policy_match){ r->rule, r->ep, binary };
}

enum policy_verdict
policy_index_decide(const struct policy_index *idx, const char *name, uint16_t port,
    const char *const *binaries, size_t nbinaries, struct policy_match *out)
{
	const struct index_slot *cands[INDEX_CANDIDATES_MAX];
	struct index_decision d = { port, binaries, nbinaries, false, false, INDEX_NO_MATCH,
		INDEX_NO_MATCH, { 0 } };
	const struct index_ref *r;
	size_t n = 0, c, i;

	if (idx != NULL && name != NULL)
		n = index_candidates(idx, name, cands);
	for (c = 0; c < n; c++) {
		/* Each run is in policy order: past the best so far, stop. */
		for (i = 0; i < cands[c]->count; i++) {
			r = &cands[c]->refs[i];
			if (r->ordinal >= d.best)
				break;
			index_consider(&d, r);
		}
	}
	if (out != NULL)
		*out = d.match;
	/* A terminated entry for some binaries decides over the entry that
	 * allowed without asking which binary: the binary must be known. */
	if (d.best != INDEX_NO_MATCH && d.terminated_unknown < d.best)
		return POLICY_NEED_BINARY;
	if (d.best != INDEX_NO_MATCH)
		return POLICY_ALLOW;
	if (!d.named)
		return POLICY_DENY_NO_RULE;
	return binaries == NULL && d.identifiable ? POLICY_NEED_BINARY : POLICY_DENY_BINARY;
}

bool
policy_index_name_allowed(const struct policy_index *idx, const char *name)
{
	const struct index_slot *cands[INDEX_CANDIDATES_MAX];
	const struct index_ref *r;
	size_t n, c, i;

	if (idx == NULL || name == NULL)
		return false;
	n = index_candidates(idx, name, cands);
	for (c = 0; c < n; c++) {
		for (i = 0; i < cands[c]->count; i++) {
			r = &cands[c]->refs[i];
			if (r->any_binary || r->rule->nbinaries > 0)
				return true;
		}
	}
	return false;
}

const char *
policy_verdict_reason(enum policy_verdict verdict)
{
	switch (verdict) {
	case POLICY_ALLOW:
		return "allowed";
	case POLICY_DENY_NO_RULE:
		return "host_not_allowed";
	case POLICY_DENY_BINARY:
		return "binary_not_allowed";
	case POLICY_NEED_BINARY:
		return "binary_not_identified";
	}
	return "unknown_verdict";
}
