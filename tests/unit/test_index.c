/* Unit tests for policy/index: exact, one-label and any-depth hosts, ports,
 * binary scoping and identification, the DNS stub's question, and a
 * differential test against a brute-force scan of the whole policy. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/index.h"
#include "policy/match.h"

#define DIFF_SEED 0x5eed2024u
#define DIFF_ENTRIES 1000
#define DIFF_QUERIES 10000
#define DIFF_BASES 40
#define TEST_NAME_MAX_BYTES 256

static const char *const any_binary[] = { MATCH_ANY_BINARY_GLOB };
static const char *const curl_only[] = { "/usr/bin/curl" };
static const char *const shells[] = { "/usr/bin/bash", "/bin/sh" };
static const char *const no_binaries[] = { NULL };
static const uint16_t https[] = { 443 };
static const uint16_t web[] = { 80, 443, 8080 };

/* A policy built in code, as the loader would leave it. The structs are
 * filled by hand so the tests do not depend on the loader. */

static char *
test_strdup(const char *s)
{
	char *d = strdup(s);

	assert_non_null(d);
	return d;
}

static struct policy *
test_policy_new(void)
{
	struct policy *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->version = POLICY_VERSION;
	return p;
}

/* Appends a rule named KEY with the N binary globs BINS; returns its index. */
static size_t
test_rule_add(struct policy *p, const char *key, const char *const *bins, size_t n)
{
	struct policy_rule *r;
	size_t i;

	p->rules = realloc(p->rules, (p->nrules + 1) * sizeof(*p->rules));
	assert_non_null(p->rules);
	r = &p->rules[p->nrules];
	memset(r, 0, sizeof(*r));
	r->key = test_strdup(key);
	r->name = test_strdup(key);
	r->binaries = calloc(n + 1, sizeof(*r->binaries));
	assert_non_null(r->binaries);
	for (i = 0; i < n; i++) {
		r->binaries[i].path = test_strdup(bins[i]);
		if (strcmp(bins[i], MATCH_ANY_BINARY_GLOB) == 0)
			r->any_binary = true;
	}
	r->nbinaries = n;
	return p->nrules++;
}

/* Appends an endpoint HOST (a pattern) with the N sorted PORTS to rule R. */
static void
test_endpoint_add(struct policy *p, size_t r, const char *host, const uint16_t *ports, size_t n)
{
	struct policy_rule *rule = &p->rules[r];
	struct policy_endpoint *ep;

	rule->endpoints = realloc(rule->endpoints, (rule->nendpoints + 1) * sizeof(*ep));
	assert_non_null(rule->endpoints);
	ep = &rule->endpoints[rule->nendpoints++];
	memset(ep, 0, sizeof(*ep));
	if (match_host_parse(host, &ep->host) != MATCH_OK)
		fail_msg("test pattern \"%s\" refused", host);
	ep->ports = calloc(n + 1, sizeof(*ep->ports));
	assert_non_null(ep->ports);
	memcpy(ep->ports, ports, n * sizeof(*ports));
	ep->nports = n;
	ep->sni_check = true;
}

static void
test_policy_free(struct policy *p)
{
	size_t r, i;

	for (r = 0; r < p->nrules; r++) {
		struct policy_rule *rule = &p->rules[r];

		for (i = 0; i < rule->nendpoints; i++) {
			free(rule->endpoints[i].host.name);
			free(rule->endpoints[i].ports);
		}
		for (i = 0; i < rule->nbinaries; i++)
			free(rule->binaries[i].path);
		free(rule->endpoints);
		free(rule->binaries);
		free(rule->key);
		free(rule->name);
	}
	free(p->rules);
	free(p);
}

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A fixture: a policy, its index, and the helpers' pointers to free. */
struct fixture {
	struct policy *p;
	struct policy_index *idx;
};

/* Builds the index of F's policy. */
static void
fixture_index(struct fixture *f)
{
	f->idx = policy_index_new(f->p);
	assert_non_null(f->idx);
}

static int
setup_policy(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->p = test_policy_new();
	*state = f;
	return 0;
}

static int
teardown_policy(void **state)
{
	struct fixture *f = *state;

	policy_index_free(f->idx);
	test_policy_free(f->p);
	free(f);
	return 0;
}

static enum policy_verdict
decide_any(const struct fixture *f, const char *name, uint16_t port)
{
	return policy_index_decide(f->idx, name, port, NULL, 0, NULL);
}

static void
test_exact_name_allows_its_listed_ports(void **state)
{
	struct fixture *f = *state;
	struct policy_match m;
	size_t r = test_rule_add(f->p, "code", any_binary, LEN(any_binary));

	test_endpoint_add(f->p, r, "github.com", web, LEN(web));
	fixture_index(f);
	assert_int_equal(policy_index_decide(f->idx, "github.com", 443, NULL, 0, &m), POLICY_ALLOW);
	assert_ptr_equal(m.rule, &f->p->rules[r]);
	assert_ptr_equal(m.endpoint, &f->p->rules[r].endpoints[0]);
	assert_null(m.binary);
	assert_int_equal(decide_any(f, "github.com", 80), POLICY_ALLOW);
	assert_int_equal(decide_any(f, "github.com", 8080), POLICY_ALLOW);
}

static void
test_port_mismatch_is_denied_as_no_rule(void **state)
{
	struct fixture *f = *state;
	struct policy_match m;
	size_t r = test_rule_add(f->p, "code", any_binary, LEN(any_binary));

	test_endpoint_add(f->p, r, "github.com", web, LEN(web));
	fixture_index(f);
	assert_int_equal(policy_index_decide(f->idx, "github.com", 22, NULL, 0, &m),
	    POLICY_DENY_NO_RULE);
	assert_null(m.rule);
	assert_int_equal(decide_any(f, "github.com", 0), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, "github.com", 65535), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, "github.com", 444), POLICY_DENY_NO_RULE);
}

static void
test_exact_name_does_not_match_other_names(void **state)
{
	struct fixture *f = *state;
	size_t r = test_rule_add(f->p, "code", any_binary, LEN(any_binary));

	test_endpoint_add(f->p, r, "github.com", https, LEN(https));
	fixture_index(f);
	assert_int_equal(decide_any(f, "api.github.com", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, "github.co", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, "github.com.evil.net", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, "com", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, "", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, NULL, 443), POLICY_DENY_NO_RULE);
}

static void
test_one_label_wildcard_allows_child_not_grandchild_or_apex(void **state)
{
	struct fixture *f = *state;
	size_t r = test_rule_add(f->p, "content", any_binary, LEN(any_binary));

	test_endpoint_add(f->p, r, "*.example.com", https, LEN(https));
	fixture_index(f);
	assert_int_equal(decide_any(f, "raw.example.com", 443), POLICY_ALLOW);
	assert_int_equal(decide_any(f, "a.raw.example.com", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, "example.com", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, "rawexample.com", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, ".example.com", 443), POLICY_DENY_NO_RULE);
}

static void
test_any_depth_wildcard_allows_every_depth_not_apex(void **state)
{
	struct fixture *f = *state;
	size_t r = test_rule_add(f->p, "content", any_binary, LEN(any_binary));

	test_endpoint_add(f->p, r, "**.example.com", https, LEN(https));
	fixture_index(f);
	assert_int_equal(decide_any(f, "raw.example.com", 443), POLICY_ALLOW);
	assert_int_equal(decide_any(f, "a.b.c.raw.example.com", 443), POLICY_ALLOW);
	assert_int_equal(decide_any(f, "example.com", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, "xexample.com", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, "example.com.evil.net", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(decide_any(f, ".example.com", 443), POLICY_DENY_NO_RULE);
}

static void
test_binary_scoped_entry_needs_binary_when_unidentified(void **state)
{
	struct fixture *f = *state;
	struct policy_match m;
	size_t r = test_rule_add(f->p, "curl", curl_only, LEN(curl_only));

	test_endpoint_add(f->p, r, "github.com", https, LEN(https));
	fixture_index(f);
	assert_int_equal(policy_index_decide(f->idx, "github.com", 443, NULL, 0, &m),
	    POLICY_NEED_BINARY);
	assert_null(m.rule);
	assert_int_equal(decide_any(f, "github.com", 80), POLICY_DENY_NO_RULE);
}

static void
test_any_binary_entry_allows_without_identification(void **state)
{
	struct fixture *f = *state;
	struct policy_match m;
	size_t scoped = test_rule_add(f->p, "curl", curl_only, LEN(curl_only));
	size_t any = test_rule_add(f->p, "any", any_binary, LEN(any_binary));

	test_endpoint_add(f->p, scoped, "github.com", https, LEN(https));
	test_endpoint_add(f->p, any, "**.github.com", https, LEN(https));
	test_endpoint_add(f->p, any, "github.com", https, LEN(https));
	fixture_index(f);
	assert_int_equal(policy_index_decide(f->idx, "github.com", 443, NULL, 0, &m), POLICY_ALLOW);
	assert_ptr_equal(m.rule, &f->p->rules[any]);
	assert_ptr_equal(m.endpoint, &f->p->rules[any].endpoints[1]);
	assert_int_equal(decide_any(f, "api.github.com", 443), POLICY_ALLOW);
}

static void
test_binary_scoped_entry_denies_unlisted_binary(void **state)
{
	struct fixture *f = *state;
	const char *const chain[] = { "/usr/bin/wget", "/usr/bin/python3" };
	struct policy_match m;
	size_t r = test_rule_add(f->p, "curl", curl_only, LEN(curl_only));

	test_endpoint_add(f->p, r, "github.com", https, LEN(https));
	fixture_index(f);
	assert_int_equal(policy_index_decide(f->idx, "github.com", 443, chain, LEN(chain), &m),
	    POLICY_DENY_BINARY);
	assert_null(m.rule);
	assert_int_equal(policy_index_decide(f->idx, "github.com", 443, curl_only, 1, &m),
	    POLICY_ALLOW);
	assert_string_equal(m.binary, "/usr/bin/curl");
}

static void
test_ancestor_binary_allows(void **state)
{
	struct fixture *f = *state;
	const char *const chain[] = { "/usr/bin/curl", "/usr/bin/bash" };
	struct policy_match m;
	size_t r = test_rule_add(f->p, "shells", shells, LEN(shells));

	test_endpoint_add(f->p, r, "github.com", https, LEN(https));
	fixture_index(f);
	assert_int_equal(policy_index_decide(f->idx, "github.com", 443, chain, LEN(chain), &m),
	    POLICY_ALLOW);
	assert_ptr_equal(m.binary, chain[1]);
	assert_int_equal(policy_index_decide(f->idx, "github.com", 443, chain, 1, &m),
	    POLICY_DENY_BINARY);
}

static void
test_no_identification_record_denies_binary_scoped_entries(void **state)
{
	struct fixture *f = *state;
	const char *const none[] = { NULL };
	size_t r = test_rule_add(f->p, "curl", curl_only, LEN(curl_only));

	test_endpoint_add(f->p, r, "github.com", https, LEN(https));
	fixture_index(f);
	/* Non-NULL and empty: identification ran and found no owner. */
	assert_int_equal(policy_index_decide(f->idx, "github.com", 443, none, 0, NULL),
	    POLICY_DENY_BINARY);
}

static void
test_empty_binary_list_lets_nothing_through(void **state)
{
	struct fixture *f = *state;
	size_t r = test_rule_add(f->p, "nobody", no_binaries, 0);

	test_endpoint_add(f->p, r, "github.com", https, LEN(https));
	fixture_index(f);
	/* No identification could help: say so at once. */
	assert_int_equal(decide_any(f, "github.com", 443), POLICY_DENY_BINARY);
	assert_int_equal(policy_index_decide(f->idx, "github.com", 443, curl_only, 1, NULL),
	    POLICY_DENY_BINARY);
	assert_false(policy_index_name_allowed(f->idx, "github.com"));
}

static void
test_first_allowing_entry_in_policy_order_is_reported(void **state)
{
	struct fixture *f = *state;
	struct policy_match m;
	size_t a = test_rule_add(f->p, "a", curl_only, LEN(curl_only));
	size_t b = test_rule_add(f->p, "b", any_binary, LEN(any_binary));
	size_t c = test_rule_add(f->p, "c", any_binary, LEN(any_binary));

	test_endpoint_add(f->p, c, "api.github.com", https, LEN(https));
	test_endpoint_add(f->p, b, "*.github.com", web, LEN(web));
	test_endpoint_add(f->p, a, "**.github.com", https, LEN(https));
	fixture_index(f);
	assert_int_equal(policy_index_decide(f->idx, "api.github.com", 443, curl_only, 1, &m),
	    POLICY_ALLOW);
	assert_ptr_equal(m.rule, &f->p->rules[a]);
	assert_int_equal(policy_index_decide(f->idx, "api.github.com", 443, shells, 1, &m),
	    POLICY_ALLOW);
	assert_ptr_equal(m.rule, &f->p->rules[b]);
}

static void
test_name_allowed_for_some_port(void **state)
{
	struct fixture *f = *state;
	size_t r = test_rule_add(f->p, "curl", curl_only, LEN(curl_only));

	test_endpoint_add(f->p, r, "github.com", https, LEN(https));
	test_endpoint_add(f->p, r, "*.example.com", web, LEN(web));
	test_endpoint_add(f->p, r, "**.example.org", web, LEN(web));
	fixture_index(f);
	assert_true(policy_index_name_allowed(f->idx, "github.com"));
	assert_true(policy_index_name_allowed(f->idx, "a.example.com"));
	assert_true(policy_index_name_allowed(f->idx, "a.b.example.org"));
	assert_false(policy_index_name_allowed(f->idx, "a.b.example.com"));
	assert_false(policy_index_name_allowed(f->idx, "example.com"));
	assert_false(policy_index_name_allowed(f->idx, "example.org"));
	assert_false(policy_index_name_allowed(f->idx, "gitlab.com"));
	assert_false(policy_index_name_allowed(f->idx, NULL));
	assert_false(policy_index_name_allowed(NULL, "github.com"));
}

static void
test_empty_policy_denies_everything(void **state)
{
	struct fixture *f = *state;

	fixture_index(f);
	assert_int_equal(decide_any(f, "github.com", 443), POLICY_DENY_NO_RULE);
	assert_int_equal(policy_index_decide(f->idx, "a.b", 1, curl_only, 1, NULL),
	    POLICY_DENY_NO_RULE);
	assert_false(policy_index_name_allowed(f->idx, "github.com"));
}

static void
test_overlong_name_is_denied(void **state)
{
	struct fixture *f = *state;
	char name[600];
	size_t r = test_rule_add(f->p, "any", any_binary, LEN(any_binary));

	test_endpoint_add(f->p, r, "**.example.com", https, LEN(https));
	fixture_index(f);
	memset(name, 'a', sizeof(name));
	strcpy(name + sizeof(name) - 13, ".example.com");
	assert_int_equal(decide_any(f, name, 443), POLICY_DENY_NO_RULE);
	assert_false(policy_index_name_allowed(f->idx, name));
	assert_int_equal(decide_any(f, name + sizeof(name) - 40, 443), POLICY_ALLOW);
}

static void
test_verdict_reasons_are_distinct(void **state)
{
	(void)state;
	assert_string_equal(policy_verdict_reason(POLICY_ALLOW), "allowed");
	assert_string_equal(policy_verdict_reason(POLICY_DENY_NO_RULE), "host_not_allowed");
	assert_string_equal(policy_verdict_reason(POLICY_DENY_BINARY), "binary_not_allowed");
	assert_string_equal(policy_verdict_reason(POLICY_NEED_BINARY), "binary_not_identified");
	assert_string_equal(policy_verdict_reason((enum policy_verdict)99), "unknown_verdict");
}

static void
test_free_accepts_null(void **state)
{
	(void)state;
	policy_index_free(NULL);
}

/* The differential test: a random policy of DIFF_ENTRIES endpoints and
 * DIFF_QUERIES random queries, the index against a plain scan. */

static uint64_t diff_rng_state;

static uint32_t
diff_rand(uint32_t n)
{
	uint64_t x = diff_rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	diff_rng_state = x;
	return (uint32_t)(x % n);
}

static const char *const diff_labels[] = { "a", "b", "api", "www", "cdn", "x-1", "s" };
static const char *const diff_globs[] = {
	"/usr/bin/curl", "/usr/bin/*", "/usr/**/python3", "/usr/bin/git", "/opt/*/bin/node",
	"/usr/lib/git-core/**", "/bin/sh",
};
static const char *const diff_paths[] = {
	"/usr/bin/curl", "/usr/bin/wget", "/usr/local/bin/python3", "/usr/bin/python3",
	"/opt/node/bin/node", "/usr/lib/git-core/git-remote-https", "/bin/sh", "/usr/bin/bash",
};
static const uint16_t diff_ports[] = { 22, 80, 443, 8080, 9418 };

/* Writes DEPTH random labels and then base domain BASE into OUT. */
static void
diff_name(char *out, unsigned depth, unsigned base)
{
	int n = 0;
	unsigned i;

	for (i = 0; i < depth; i++)
		n += snprintf(out + n, TEST_NAME_MAX_BYTES - (size_t)n, "%s.",
		    diff_labels[diff_rand(LEN(diff_labels))]);
	snprintf(out + n, TEST_NAME_MAX_BYTES - (size_t)n, "d%u.com", base);
}

/* Adds a rule with 1-4 random endpoints and a random binary scope. */
static size_t
diff_rule_add(struct policy *p, size_t max_endpoints)
{
	static const char *const kinds[] = { "", "*.", "**." };
	const char *bins[3];
	char key[32], host[TEST_NAME_MAX_BYTES], name[TEST_NAME_MAX_BYTES];
	uint16_t ports[2];
	size_t r, e, n = 1 + diff_rand(4), nbins = 0, i;
	uint32_t scope = diff_rand(8);

	if (scope < 3)
		bins[nbins++] = MATCH_ANY_BINARY_GLOB;
	else if (scope < 7)
		for (i = 0; i < 3; i++)
			bins[nbins++] = diff_globs[diff_rand(LEN(diff_globs))];
	snprintf(key, sizeof(key), "rule%zu", p->nrules);
	r = test_rule_add(p, key, bins, nbins);
	for (e = 0; e < n && e < max_endpoints; e++) {
		diff_name(name, diff_rand(3), diff_rand(DIFF_BASES));
		snprintf(host, sizeof(host), "%s%s", kinds[diff_rand(3)], name);
		ports[0] = diff_ports[diff_rand(3)];
		ports[1] = diff_ports[3 + diff_rand(2)];
		test_endpoint_add(p, r, host, ports, 1 + diff_rand(2));
	}
	return e;
}

/* The decision by a scan of every entry, with the index's semantics. */
static enum policy_verdict
brute_decide(const struct policy *p, const char *name, uint16_t port,
    const char *const *bins, size_t nbins, struct policy_match *out)
{
	bool named = false, identifiable = false;
	size_t r, e, b, g, k;

	memset(out, 0, sizeof(*out));
	for (r = 0; r < p->nrules; r++) {
		const struct policy_rule *rule = &p->rules[r];

		for (e = 0; e < rule->nendpoints; e++) {
			const struct policy_endpoint *ep = &rule->endpoints[e];
			bool port_ok = false;

			for (k = 0; k < ep->nports; k++)
				port_ok = port_ok || ep->ports[k] == port;
			if (!port_ok || !match_host(&ep->host, name))
				continue;
			named = true;
			if (rule->any_binary) {
				*out = (struct policy_match){ rule, ep, NULL };
				return POLICY_ALLOW;
			}
			if (rule->nbinaries > 0 && bins == NULL)
				identifiable = true;
			for (b = 0; bins != NULL && b < nbins; b++)
				for (g = 0; g < rule->nbinaries; g++)
					if (match_binary(rule->binaries[g].path, bins[b])) {
						*out = (struct policy_match){ rule, ep, bins[b] };
						return POLICY_ALLOW;
					}
		}
	}
	if (!named)
		return POLICY_DENY_NO_RULE;
	return bins == NULL && identifiable ? POLICY_NEED_BINARY : POLICY_DENY_BINARY;
}

/* Whether some entry that can allow anything names NAME, by a scan. */
static bool
brute_name_allowed(const struct policy *p, const char *name)
{
	size_t r, e;

	for (r = 0; r < p->nrules; r++)
		for (e = 0; e < p->rules[r].nendpoints; e++)
			if (p->rules[r].nbinaries > 0 && p->rules[r].endpoints[e].nports > 0 &&
			    match_host(&p->rules[r].endpoints[e].host, name))
				return true;
	return false;
}

/* Runs one random query through both and compares; counts verdicts. */
static void
diff_query(const struct fixture *f, size_t counts[4])
{
	char name[TEST_NAME_MAX_BYTES];
	const char *chain[3];
	size_t nchain = diff_rand(4), i;
	uint32_t kind = diff_rand(4);
	uint16_t port = diff_ports[diff_rand(LEN(diff_ports))];
	struct policy_match want, got;
	enum policy_verdict vw, vg;

	diff_name(name, diff_rand(4), diff_rand(DIFF_BASES + 5));
	for (i = 0; i < nchain; i++)
		chain[i] = diff_paths[diff_rand(LEN(diff_paths))];
	vw = brute_decide(f->p, name, port, kind == 0 ? NULL : chain, nchain, &want);
	vg = policy_index_decide(f->idx, name, port, kind == 0 ? NULL : chain, nchain, &got);
	if (vw != vg || want.rule != got.rule || want.endpoint != got.endpoint ||
	    want.binary != got.binary)
		fail_msg("%s:%u: scan says %s, index says %s", name, port,
		    policy_verdict_reason(vw), policy_verdict_reason(vg));
	counts[vg]++;
	if (policy_index_name_allowed(f->idx, name) != brute_name_allowed(f->p, name))
		fail_msg("name_allowed(%s) disagrees with the scan", name);
}

static void
test_index_agrees_with_brute_force_scan(void **state)
{
	struct fixture *f = *state;
	size_t entries = 0, q, counts[4] = { 0 }, v;

	diff_rng_state = DIFF_SEED;
	while (entries < DIFF_ENTRIES)
		entries += diff_rule_add(f->p, DIFF_ENTRIES - entries);
	fixture_index(f);
	for (q = 0; q < DIFF_QUERIES; q++)
		diff_query(f, counts);
	/* The queries must exercise every verdict, or the test proves little. */
	for (v = 0; v < 4; v++)
		if (counts[v] < DIFF_QUERIES / 100)
			fail_msg("verdict %s seen only %zu times", policy_verdict_reason(v), counts[v]);
}

#define FIXTURE_TEST(t) cmocka_unit_test_setup_teardown(t, setup_policy, teardown_policy)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_TEST(test_exact_name_allows_its_listed_ports),
		FIXTURE_TEST(test_port_mismatch_is_denied_as_no_rule),
		FIXTURE_TEST(test_exact_name_does_not_match_other_names),
		FIXTURE_TEST(test_one_label_wildcard_allows_child_not_grandchild_or_apex),
		FIXTURE_TEST(test_any_depth_wildcard_allows_every_depth_not_apex),
		FIXTURE_TEST(test_binary_scoped_entry_needs_binary_when_unidentified),
		FIXTURE_TEST(test_any_binary_entry_allows_without_identification),
		FIXTURE_TEST(test_binary_scoped_entry_denies_unlisted_binary),
		FIXTURE_TEST(test_ancestor_binary_allows),
		FIXTURE_TEST(test_no_identification_record_denies_binary_scoped_entries),
		FIXTURE_TEST(test_empty_binary_list_lets_nothing_through),
		FIXTURE_TEST(test_first_allowing_entry_in_policy_order_is_reported),
		FIXTURE_TEST(test_name_allowed_for_some_port),
		FIXTURE_TEST(test_empty_policy_denies_everything),
		FIXTURE_TEST(test_overlong_name_is_denied),
		FIXTURE_TEST(test_index_agrees_with_brute_force_scan),
		cmocka_unit_test(test_verdict_reasons_are_distinct),
		cmocka_unit_test(test_free_accepts_null),
	};

	return cmocka_run_group_tests_name("index", tests, NULL, NULL);
}
