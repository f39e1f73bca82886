/* Benchmarks policy_index_decide: a policy of 1,000 endpoints (500 exact
 * names, 250 "*.x", 250 "**.x"; a third of the rules binary-scoped with 3
 * globs each) and a mixed query set (exact, one-label and any-depth hits,
 * misses, binary-scoped queries with a 3-deep ancestor chain).
 * Timing 1: batches of BENCH_BATCH decisions timed with CLOCK_MONOTONIC;
 * median and p99 of the batch means. Timing 2: every call timed on its
 * own, less the measured cost of the two clock reads. Run on an -O2 build:
 *   tests/bench/bench_decision [batches] */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/xmalloc.h"
#include "policy/index.h"
#include "policy/match.h"

#define BENCH_ENTRIES 1000
#define BENCH_EXACT 500
#define BENCH_ONE_LABEL 250
#define BENCH_ENDPOINTS_PER_RULE 4
#define BENCH_SCOPED_EVERY 3            /* every third rule is binary-scoped */
#define BENCH_QUERIES 4096              /* distinct queries, cycled */
#define BENCH_BATCH 1000                /* decisions per timed batch */
#define BENCH_BATCHES_DEFAULT 2000      /* 2,000,000 decisions */
#define BENCH_SINGLE_CALLS 1000000
#define BENCH_NAME_MAX_BYTES 256
#define BENCH_SEED 0x2545F4914F6CDD1DULL

enum bench_class {
	BENCH_EXACT_HIT, BENCH_ONE_LABEL_HIT, BENCH_ANY_DEPTH_HIT, BENCH_MISS,
	BENCH_PORT_MISS, BENCH_SCOPED, BENCH_NCLASSES,
};

static const char *const bench_class_names[BENCH_NCLASSES] = {
	"exact hit", "*.x hit", "**.x hit", "name miss", "port miss", "scoped, 3-deep chain",
};

static const char *const bench_globs[] = {
	"/usr/bin/curl", "/usr/lib/git-core/*", "/usr/**/python3",
};
static const char *const bench_allowed_chain[] = {
	"/usr/lib/git-core/git-remote-https", "/usr/bin/git", "/usr/bin/bash",
};
static const char *const bench_refused_chain[] = {
	"/usr/bin/wget", "/usr/bin/make", "/usr/bin/bash",
};
static const uint16_t bench_port_sets[][2] = { { 443, 0 }, { 80, 443 }, { 22, 0 }, { 443, 8443 } };

struct bench_query {
	char name[BENCH_NAME_MAX_BYTES];
	uint16_t port;
	const char *const *chain;
	size_t nchain;
	enum bench_class cls;
};

static uint64_t bench_rng = BENCH_SEED;

static uint32_t
bench_rand(uint32_t n)
{
	bench_rng ^= bench_rng << 13;
	bench_rng ^= bench_rng >> 7;
	bench_rng ^= bench_rng << 17;
	return (uint32_t)(bench_rng % n);
}

static uint64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The host pattern of endpoint E (0..BENCH_ENTRIES-1). */
static void
bench_pattern(size_t e, char *out, size_t len)
{
	if (e < BENCH_EXACT)
		snprintf(out, len, "api%zu.svc%zu.com", e, e % 50);
	else if (e < BENCH_EXACT + BENCH_ONE_LABEL)
		snprintf(out, len, "*.one%zu.example.org", e);
	else
		snprintf(out, len, "**.deep%zu.example.net", e);
}

/* Fills endpoint EP with pattern number E and its port set. */
static void
bench_endpoint_fill(struct policy_endpoint *ep, size_t e)
{
	char pattern[BENCH_NAME_MAX_BYTES];
	const uint16_t *set = bench_port_sets[e % 4];
	enum match_err err;

	bench_pattern(e, pattern, sizeof(pattern));
	if ((err = match_host_parse(pattern, &ep->host)) != MATCH_OK) {
		fprintf(stderr, "bench: %s: %s\n", pattern, match_strerror(err));
		exit(1);
	}
	ep->nports = set[1] == 0 ? 1 : 2;
	ep->ports = xcalloc(ep->nports, sizeof(*ep->ports));
	memcpy(ep->ports, set, ep->nports * sizeof(*set));
	ep->sni_check = true;
}

/* Endpoints are spread over rules round-robin, so every rule mixes kinds. */
static struct policy *
bench_policy_new(void)
{
	size_t nrules = BENCH_ENTRIES / BENCH_ENDPOINTS_PER_RULE, r, e, g;
	struct policy *p = xcalloc(1, sizeof(*p));

	p->version = POLICY_VERSION;
	p->nrules = nrules;
	p->rules = xcalloc(nrules, sizeof(*p->rules));
	for (r = 0; r < nrules; r++) {
		struct policy_rule *rule = &p->rules[r];
		bool scoped = r % BENCH_SCOPED_EVERY == 0;

		xasprintf(&rule->key, "rule%zu", r);
		rule->name = xstrdup(rule->key);
		rule->nbinaries = scoped ? 3 : 1;
		rule->binaries = xcalloc(rule->nbinaries, sizeof(*rule->binaries));
		for (g = 0; g < rule->nbinaries; g++)
			rule->binaries[g].path = xstrdup(scoped ? bench_globs[g] : MATCH_ANY_BINARY_GLOB);
		rule->any_binary = !scoped;
		rule->nendpoints = BENCH_ENDPOINTS_PER_RULE;
		rule->endpoints = xcalloc(BENCH_ENDPOINTS_PER_RULE, sizeof(*rule->endpoints));
	}
	for (e = 0; e < BENCH_ENTRIES; e++)
		bench_endpoint_fill(&p->rules[e % nrules].endpoints[e / nrules], e);
	return p;
}

static void
bench_policy_free(struct policy *p)
{
	size_t r, i;

	for (r = 0; r < p->nrules; r++) {
		for (i = 0; i < p->rules[r].nendpoints; i++) {
			free(p->rules[r].endpoints[i].host.name);
			free(p->rules[r].endpoints[i].ports);
		}
		for (i = 0; i < p->rules[r].nbinaries; i++)
			free(p->rules[r].binaries[i].path);
		free(p->rules[r].endpoints);
		free(p->rules[r].binaries);
		free(p->rules[r].key);
		free(p->rules[r].name);
	}
	free(p->rules);
	free(p);
}

/* Endpoint number E as a name that it allows (with DEPTH labels for a
 * wildcard). */
static void
bench_hit_name(size_t e, unsigned depth, char *out, size_t len)
{
	char pattern[BENCH_NAME_MAX_BYTES];
	const char *suffix;
	int n = 0;

	bench_pattern(e, pattern, sizeof(pattern));
	if (e < BENCH_EXACT) {
		snprintf(out, len, "%s", pattern);
		return;
	}
	suffix = strchr(pattern, '.') + 1;
	while (depth-- > 0)
		n += snprintf(out + n, len - (size_t)n, "h%u.", bench_rand(1000));
	snprintf(out + n, len - (size_t)n, "%s", suffix);
}

/* Endpoints of binary-scoped rules: those in rules 0, 3, 6, ... */
static size_t
bench_scoped_endpoint(void)
{
	size_t nrules = BENCH_ENTRIES / BENCH_ENDPOINTS_PER_RULE;
	size_t rule = BENCH_SCOPED_EVERY * bench_rand((uint32_t)(nrules / BENCH_SCOPED_EVERY));

	return rule + nrules * bench_rand(BENCH_ENDPOINTS_PER_RULE);
}

/* Makes query Q of class CLS. */
static void
bench_query_make(struct bench_query *q, enum bench_class cls)
{
	size_t e;

	memset(q, 0, sizeof(*q));
	q->cls = cls;
	q->port = 443;
	switch (cls) {
	case BENCH_EXACT_HIT:
		e = bench_rand(BENCH_EXACT);
		break;
	case BENCH_ONE_LABEL_HIT:
		e = BENCH_EXACT + bench_rand(BENCH_ONE_LABEL);
		break;
	case BENCH_ANY_DEPTH_HIT:
		e = BENCH_EXACT + BENCH_ONE_LABEL + bench_rand(BENCH_ENTRIES - BENCH_EXACT - BENCH_ONE_LABEL);
		break;
	case BENCH_MISS:
		snprintf(q->name, sizeof(q->name), "cdn%u.assets.unlisted%u.example.io",
		    bench_rand(1000), bench_rand(1000));
		return;
	case BENCH_PORT_MISS:
		e = bench_rand(BENCH_ENTRIES);
		q->port = 9000;
		break;
	default:
		e = bench_scoped_endpoint();
		q->chain = bench_rand(2) ? bench_allowed_chain : bench_refused_chain;
		q->nchain = 3;
		break;
	}
	/* Port sets 0, 1 and 3 hold 443; set 2 (port 22) does not. */
	if (cls != BENCH_PORT_MISS && e % 4 == 2)
		q->port = 22;
	bench_hit_name(e, 1 + (cls == BENCH_ANY_DEPTH_HIT ? bench_rand(3) : 0), q->name,
	    sizeof(q->name));
}

static int
bench_u64_compare(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The P-th percentile of the N sorted values V. */
static uint64_t
bench_percentile(const uint64_t *v, size_t n, unsigned p)
{
	size_t i = (n * p) / 100;

	return v[i < n ? i : n - 1];
}

/* The median cost of two back-to-back clock reads, the timer's overhead. */
static uint64_t
bench_clock_overhead(void)
{
	uint64_t v[10001], t0;
	size_t i;

	for (i = 0; i < 10001; i++) {
		t0 = bench_now_ns();
		v[i] = bench_now_ns() - t0;
	}
	qsort(v, 10001, sizeof(*v), bench_u64_compare);
	return v[5000];
}

static volatile unsigned bench_sink;

static void
bench_decide(const struct policy_index *idx, const struct bench_query *q)
{
	struct policy_match m;

	bench_sink += policy_index_decide(idx, q->name, q->port, q->chain, q->nchain, &m);
}

/* Timing 1: median and p99 of batch means; returns the overall mean. */
static void
bench_batches(const struct policy_index *idx, const struct bench_query *qs, size_t nbatches,
    uint64_t *median, uint64_t *p99, double *mean)
{
	uint64_t *means = xcalloc(nbatches, sizeof(*means)), t0, total = 0;
	size_t b, i, k = 0;

	for (b = 0; b < nbatches; b++) {
		t0 = bench_now_ns();
		for (i = 0; i < BENCH_BATCH; i++, k = (k + 1) % BENCH_QUERIES)
			bench_decide(idx, &qs[k]);
		means[b] = bench_now_ns() - t0;
		total += means[b];
		means[b] /= BENCH_BATCH;
	}
	qsort(means, nbatches, sizeof(*means), bench_u64_compare);
	*median = bench_percentile(means, nbatches, 50);
	*p99 = bench_percentile(means, nbatches, 99);
	*mean = (double)total / (double)(nbatches * BENCH_BATCH);
	free(means);
}

/* Timing 2: every call on its own, per query class. */
static void
bench_single(const struct policy_index *idx, const struct bench_query *qs, uint64_t overhead)
{
	uint64_t *all = xcalloc(BENCH_SINGLE_CALLS, sizeof(*all));
	uint64_t *cls[BENCH_NCLASSES], t0, d;
	size_t ncls[BENCH_NCLASSES] = { 0 }, i, c;

	for (c = 0; c < BENCH_NCLASSES; c++)
		cls[c] = xcalloc(BENCH_SINGLE_CALLS, sizeof(**cls));
	for (i = 0; i < BENCH_SINGLE_CALLS; i++) {
		const struct bench_query *q = &qs[i % BENCH_QUERIES];

		t0 = bench_now_ns();
		bench_decide(idx, q);
		d = bench_now_ns() - t0;
		d = d > overhead ? d - overhead : 0;
		all[i] = d;
		cls[q->cls][ncls[q->cls]++] = d;
	}
	qsort(all, BENCH_SINGLE_CALLS, sizeof(*all), bench_u64_compare);
	printf("per call (clock overhead %llu ns subtracted): median %llu ns, p99 %llu ns\n",
	    (unsigned long long)overhead,
	    (unsigned long long)bench_percentile(all, BENCH_SINGLE_CALLS, 50),
	    (unsigned long long)bench_percentile(all, BENCH_SINGLE_CALLS, 99));
	for (c = 0; c < BENCH_NCLASSES; c++) {
		qsort(cls[c], ncls[c], sizeof(**cls), bench_u64_compare);
		printf("  %-22s median %5llu ns, p99 %5llu ns (%zu calls)\n", bench_class_names[c],
		    (unsigned long long)bench_percentile(cls[c], ncls[c], 50),
		    (unsigned long long)bench_percentile(cls[c], ncls[c], 99), ncls[c]);
		free(cls[c]);
	}
	free(all);
}

int
main(int argc, char **argv)
{
	static const unsigned mix[] = { 25, 15, 15, 15, 10, 20 };   /* percent per class */
	struct bench_query *qs = xcalloc(BENCH_QUERIES, sizeof(*qs));
	size_t nbatches = argc > 1 ? strtoul(argv[1], NULL, 10) : BENCH_BATCHES_DEFAULT;
	struct policy *p = bench_policy_new();
	struct policy_index *idx;
	uint64_t median, p99, t0;
	size_t i, verdicts[4] = { 0 };
	unsigned roll, c;
	double mean;

	t0 = bench_now_ns();
	if ((idx = policy_index_new(p)) == NULL) {
		fprintf(stderr, "bench: out of memory\n");
		return 1;
	}
	printf("index of %d endpoints built in %llu us\n", BENCH_ENTRIES,
	    (unsigned long long)(bench_now_ns() - t0) / 1000);
	for (i = 0; i < BENCH_QUERIES; i++) {
		roll = bench_rand(100);
		for (c = 0; roll >= mix[c]; c++)
			roll -= mix[c];
		bench_query_make(&qs[i], (enum bench_class)c);
		verdicts[policy_index_decide(idx, qs[i].name, qs[i].port, qs[i].chain,
		    qs[i].nchain, NULL)]++;
	}
	printf("query set: %zu allow, %zu deny (no rule), %zu deny (binary), %zu need binary\n",
	    verdicts[POLICY_ALLOW], verdicts[POLICY_DENY_NO_RULE], verdicts[POLICY_DENY_BINARY],
	    verdicts[POLICY_NEED_BINARY]);
	bench_single(idx, qs, bench_clock_overhead());
	bench_batches(idx, qs, nbatches < 1 ? 1 : nbatches, &median, &p99, &mean);
	printf("decision: median %llu ns, p99 %llu ns, mean %.0f ns over %zu decisions "
	    "(%d entries, %d wildcards)\n", (unsigned long long)median, (unsigned long long)p99,
	    mean, nbatches * BENCH_BATCH, BENCH_ENTRIES, BENCH_ENTRIES - BENCH_EXACT);
	policy_index_free(idx);
	bench_policy_free(p);
	free(qs);
	return median <= 1000 ? 0 : 1;
}
