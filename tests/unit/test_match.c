/* Unit tests for policy/match: name normalization, host patterns (exact,
 * one label, any depth, public-suffix refusal), binary globs. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "policy/match.h"

/* A pathological glob against a PATH_MAX path must finish under this. It
 * takes milliseconds at worst (under valgrind too), where a backtracking
 * matcher would take years, so the margin is for slow test machines. */
#define TEST_GLOB_BUDGET_NS (1000 * 1000 * 1000)

struct host_case {
	const char *in;
	enum match_err want;
	const char *out;                /* the normalized name when want is MATCH_OK */
};

struct pattern_case {
	const char *pattern;
	const char *name;
	bool want;
};

struct glob_case {
	const char *glob;
	const char *path;
	bool want;
};

/* Runs every normalize case of CASES (N of them). */
static void
check_normalize_table(const struct host_case *cases, size_t n)
{
	char out[POLICY_HOST_MAX_BYTES + 1];
	size_t i;

	for (i = 0; i < n; i++) {
		enum match_err e = match_host_normalize(cases[i].in, out);

		if (e != cases[i].want)
			fail_msg("normalize(\"%s\"): got %d (%s), want %d", cases[i].in, e,
			    match_strerror(e), cases[i].want);
		if (e == MATCH_OK)
			assert_string_equal(out, cases[i].out);
		else
			assert_string_equal(out, "");
	}
}

/* Parses every pattern of CASES and expects the error of each. */
static void
check_parse_table(const struct host_case *cases, size_t n)
{
	struct policy_host h;
	size_t i;

	for (i = 0; i < n; i++) {
		enum match_err e = match_host_parse(cases[i].in, &h);

		if (e != cases[i].want)
			fail_msg("parse(\"%s\"): got %d (%s), want %d", cases[i].in, e,
			    match_strerror(e), cases[i].want);
		if (e == MATCH_OK) {
			assert_non_null(h.name);
			assert_string_equal(h.name, cases[i].out);
		} else {
			assert_null(h.name);
		}
		free(h.name);
	}
}

/* Parses each pattern of CASES and matches it against the case's name. */
static void
check_pattern_table(const struct pattern_case *cases, size_t n)
{
	struct policy_host h;
	size_t i;

	for (i = 0; i < n; i++) {
		assert_int_equal(match_host_parse(cases[i].pattern, &h), MATCH_OK);
		if (match_host(&h, cases[i].name) != cases[i].want)
			fail_msg("match_host(\"%s\", \"%s\") should be %s", cases[i].pattern,
			    cases[i].name, cases[i].want ? "true" : "false");
		free(h.name);
	}
}

static void
check_glob_table(const struct glob_case *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		assert_int_equal(match_binary_check(cases[i].glob), MATCH_OK);
		if (match_binary(cases[i].glob, cases[i].path) != cases[i].want)
			fail_msg("match_binary(\"%s\", \"%s\") should be %s", cases[i].glob,
			    cases[i].path, cases[i].want ? "true" : "false");
	}
}

#define TABLE_LEN(t) (sizeof(t) / sizeof((t)[0]))

static void
test_normalize_lowercases_and_drops_one_trailing_dot(void **state)
{
	static const struct host_case cases[] = {
		{ "GitHub.COM", MATCH_OK, "github.com" },
		{ "github.com.", MATCH_OK, "github.com" },
		{ "API.GitHub.Com.", MATCH_OK, "api.github.com" },
		{ "localhost", MATCH_OK, "localhost" },
		{ "_dmarc.example.com", MATCH_OK, "_dmarc.example.com" },
		{ "xn--bcher-kva.de", MATCH_OK, "xn--bcher-kva.de" },
		{ "github.com..", MATCH_ERR_EMPTY_LABEL, NULL },
	};

	(void)state;
	check_normalize_table(cases, TABLE_LEN(cases));
}

static void
test_normalize_refuses_empty_names_and_labels(void **state)
{
	static const struct host_case cases[] = {
		{ "", MATCH_ERR_EMPTY, NULL },
		{ ".", MATCH_ERR_EMPTY, NULL },
		{ NULL, MATCH_ERR_EMPTY, NULL },
		{ ".github.com", MATCH_ERR_EMPTY_LABEL, NULL },
		{ "a..b.com", MATCH_ERR_EMPTY_LABEL, NULL },
	};

	(void)state;
	check_normalize_table(cases, TABLE_LEN(cases));
}

static void
test_normalize_refuses_bad_characters(void **state)
{
	static const struct host_case cases[] = {
		{ "allowed.com@evil.com", MATCH_ERR_BAD_CHAR, NULL },
		{ "user@github.com", MATCH_ERR_BAD_CHAR, NULL },
		{ "github%2ecom", MATCH_ERR_BAD_CHAR, NULL },
		{ "git%68ub.com", MATCH_ERR_BAD_CHAR, NULL },
		{ "github.com/x", MATCH_ERR_BAD_CHAR, NULL },
		{ "git hub.com", MATCH_ERR_BAD_CHAR, NULL },
		{ "github.com\\", MATCH_ERR_BAD_CHAR, NULL },
		{ "git*hub.com", MATCH_ERR_BAD_CHAR, NULL },
		{ "a\tb.com", MATCH_ERR_BAD_CHAR, NULL },
	};

	(void)state;
	check_normalize_table(cases, TABLE_LEN(cases));
}

static void
test_normalize_refuses_u_labels(void **state)
{
	/* Callers must send A-labels (xn--): raw UTF-8 never matches. */
	static const struct host_case cases[] = {
		{ "b\xc3\xbc" "cher.de", MATCH_ERR_BAD_CHAR, NULL },
		{ "\xd0\xbf\xd1\x80\xd0\xb8\xd0\xbc\xd0\xb5\xd1\x80.\xd1\x80\xd1\x84", MATCH_ERR_BAD_CHAR, NULL },
		{ "G\xc4\xb0THUB.COM", MATCH_ERR_BAD_CHAR, NULL },
	};

	(void)state;
	check_normalize_table(cases, TABLE_LEN(cases));
}

static void
test_normalize_refuses_hyphen_at_label_edges(void **state)
{
	static const struct host_case cases[] = {
		{ "-github.com", MATCH_ERR_BAD_HYPHEN, NULL },
		{ "github-.com", MATCH_ERR_BAD_HYPHEN, NULL },
		{ "api.github.com-", MATCH_ERR_BAD_HYPHEN, NULL },
		{ "git-hub.com", MATCH_OK, "git-hub.com" },
	};

	(void)state;
	check_normalize_table(cases, TABLE_LEN(cases));
}

static void
test_normalize_refuses_ip_literals_in_every_spelling(void **state)
{
	static const struct host_case cases[] = {
		{ "127.0.0.1", MATCH_ERR_IP_LITERAL, NULL },
		{ "127.1", MATCH_ERR_IP_LITERAL, NULL },
		{ "2130706433", MATCH_ERR_IP_LITERAL, NULL },
		{ "0x7f.0.0.1", MATCH_ERR_IP_LITERAL, NULL },
		{ "0177.0.0.1", MATCH_ERR_IP_LITERAL, NULL },
		{ "0x7f000001", MATCH_ERR_IP_LITERAL, NULL },
		{ "127.0.0.0x1", MATCH_ERR_IP_LITERAL, NULL },
		{ "169.254.169.254.", MATCH_ERR_IP_LITERAL, NULL },
		{ "[::1]", MATCH_ERR_IP_LITERAL, NULL },
		{ "::1", MATCH_ERR_IP_LITERAL, NULL },
		{ "::ffff:127.0.0.1", MATCH_ERR_IP_LITERAL, NULL },
		{ "github.com:443", MATCH_ERR_IP_LITERAL, NULL },
		{ "1.2.3.com", MATCH_OK, "1.2.3.com" },
		{ "0xcafe.com", MATCH_OK, "0xcafe.com" },
	};

	(void)state;
	check_normalize_table(cases, TABLE_LEN(cases));
}

/* Writes NLABELS labels of LABEL_LEN 'a's joined by dots into OUT. */
static void
make_name(char *out, size_t nlabels, size_t label_len)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; i < nlabels; i++) {
		if (i > 0)
			strcat(out, ".");
		memset(out + strlen(out), 'a', label_len);
		out[(i + 1) * label_len + i] = '\0';
	}
}

static void
test_normalize_enforces_label_and_name_lengths(void **state)
{
	char name[600], out[POLICY_HOST_MAX_BYTES + 1];

	(void)state;
	make_name(name, 2, MATCH_LABEL_MAX_BYTES);          /* 63 + 1 + 63 */
	assert_int_equal(match_host_normalize(name, out), MATCH_OK);
	make_name(name, 2, MATCH_LABEL_MAX_BYTES + 1);
	assert_int_equal(match_host_normalize(name, out), MATCH_ERR_TOO_LONG);
	make_name(name, 4, 62);                             /* 4 * 62 + 3 = 251 */
	strcat(name, ".a");                                 /* 253 */
	assert_int_equal(match_host_normalize(name, out), MATCH_OK);
	strcat(name, ".");                                  /* 254 with the root dot */
	assert_int_equal(match_host_normalize(name, out), MATCH_OK);
	assert_int_equal(strlen(out), POLICY_HOST_MAX_BYTES);
	name[strlen(name) - 1] = 'b';                       /* 254 without it */
	assert_int_equal(match_host_normalize(name, out), MATCH_ERR_TOO_LONG);
	make_name(name, 100, 5);                            /* 599 */
	assert_int_equal(match_host_normalize(name, out), MATCH_ERR_TOO_LONG);
}

static void
test_parse_accepts_exact_and_wildcard_patterns(void **state)
{
	static const struct host_case cases[] = {
		{ "GitHub.com.", MATCH_OK, "github.com" },
		{ "*.githubassets.com", MATCH_OK, "githubassets.com" },
		{ "**.Example.COM", MATCH_OK, "example.com" },
		{ "*.foo.github.io", MATCH_OK, "foo.github.io" },
		{ "*.example.co.uk", MATCH_OK, "example.co.uk" },
		{ "github.io", MATCH_OK, "github.io" },
	};
	struct policy_host h;

	(void)state;
	check_parse_table(cases, TABLE_LEN(cases));
	assert_int_equal(match_host_parse("*.x.example.com", &h), MATCH_OK);
	assert_int_equal(h.kind, POLICY_HOST_ONE_LABEL);
	free(h.name);
	assert_int_equal(match_host_parse("**.x.example.com", &h), MATCH_OK);
	assert_int_equal(h.kind, POLICY_HOST_ANY_DEPTH);
	free(h.name);
	assert_int_equal(match_host_parse("x.example.com", &h), MATCH_OK);
	assert_int_equal(h.kind, POLICY_HOST_EXACT);
	free(h.name);
}

static void
test_parse_refuses_public_suffix_wildcards(void **state)
{
	static const struct host_case cases[] = {
		{ "*", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
		{ "**", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
		{ "*.", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
		{ "*.com", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
		{ "**.com", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
		{ "*.co.uk", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
		{ "**.CO.UK.", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
		{ "*.github.io", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
		{ "**.github.io", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
		{ "*.s3.amazonaws.com", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
		/* In the PSL's private section too (the profiles list its
		 * hosts one by one instead). */
		{ "*.githubusercontent.com", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
		{ "*.notatld-xyz", MATCH_ERR_WILDCARD_TOO_WIDE, NULL },
	};

	(void)state;
	check_parse_table(cases, TABLE_LEN(cases));
}

static void
test_parse_refuses_misplaced_wildcards(void **state)
{
	static const struct host_case cases[] = {
		{ "a*.com", MATCH_ERR_WILDCARD_PLACE, NULL },
		{ "*foo.com", MATCH_ERR_WILDCARD_PLACE, NULL },
		{ "foo.*.com", MATCH_ERR_WILDCARD_PLACE, NULL },
		{ "***.example.com", MATCH_ERR_WILDCARD_PLACE, NULL },
		{ "*.*.example.com", MATCH_ERR_WILDCARD_PLACE, NULL },
		{ "**.*.example.com", MATCH_ERR_WILDCARD_PLACE, NULL },
		{ "example.com.*", MATCH_ERR_WILDCARD_PLACE, NULL },
		{ "example.*", MATCH_ERR_WILDCARD_PLACE, NULL },
	};

	(void)state;
	check_parse_table(cases, TABLE_LEN(cases));
}

static void
test_parse_refuses_what_normalize_refuses(void **state)
{
	static const struct host_case cases[] = {
		{ "", MATCH_ERR_EMPTY, NULL },
		{ "127.1", MATCH_ERR_IP_LITERAL, NULL },
		{ "*.127.0.0.1", MATCH_ERR_IP_LITERAL, NULL },
		{ "[::1]", MATCH_ERR_IP_LITERAL, NULL },
		{ "allowed.com@evil.com", MATCH_ERR_BAD_CHAR, NULL },
		{ "*.example%2ecom", MATCH_ERR_BAD_CHAR, NULL },
		{ "**.b\xc3\xbc" "cher.de", MATCH_ERR_BAD_CHAR, NULL },
		{ "*..example.com", MATCH_ERR_EMPTY_LABEL, NULL },
	};

	(void)state;
	check_parse_table(cases, TABLE_LEN(cases));
}

static void
test_wildcard_does_not_match_apex(void **state)
{
	static const struct pattern_case cases[] = {
		{ "*.example.com", "example.com", false },
		{ "**.example.com", "example.com", false },
		{ "*.example.com", "xexample.com", false },
		{ "**.example.com", "xexample.com", false },
		{ "**.example.com", ".example.com", false },
		{ "*.example.com", ".example.com", false },
	};

	(void)state;
	check_pattern_table(cases, TABLE_LEN(cases));
}

static void
test_one_label_wildcard_matches_exactly_one_label(void **state)
{
	static const struct pattern_case cases[] = {
		{ "*.example.com", "a.example.com", true },
		{ "*.example.com", "api-1.example.com", true },
		{ "*.example.com", "a.b.example.com", false },
		{ "*.example.com", "a.example.com.evil.net", false },
		{ "*.example.com", "a.example.co", false },
	};

	(void)state;
	check_pattern_table(cases, TABLE_LEN(cases));
}

static void
test_any_depth_wildcard_matches_one_or_more_labels(void **state)
{
	static const struct pattern_case cases[] = {
		{ "**.example.com", "a.example.com", true },
		{ "**.example.com", "a.b.c.example.com", true },
		{ "**.example.com", "example.com.evil.net", false },
		{ "**.example.com", "a.example.org", false },
		{ "**.example.com", "aexample.com", false },
	};

	(void)state;
	check_pattern_table(cases, TABLE_LEN(cases));
}

static void
test_exact_pattern_matches_only_its_name(void **state)
{
	static const struct pattern_case cases[] = {
		{ "github.com", "github.com", true },
		{ "GITHUB.com.", "github.com", true },
		{ "github.com", "api.github.com", false },
		{ "github.com", "github.co", false },
		{ "github.com", "github.com.evil.net", false },
	};

	(void)state;
	check_pattern_table(cases, TABLE_LEN(cases));
}

static void
test_case_and_trailing_dot_match_through_normalize(void **state)
{
	char name[POLICY_HOST_MAX_BYTES + 1];
	struct policy_host h;

	(void)state;
	assert_int_equal(match_host_parse("*.Example.com", &h), MATCH_OK);
	assert_int_equal(match_host_normalize("API.EXAMPLE.COM.", name), MATCH_OK);
	assert_true(match_host(&h, name));
	assert_false(match_host(&h, "API.EXAMPLE.COM."));   /* un-normalized: caller's bug */
	free(h.name);
}

static void
test_match_host_refuses_null_arguments(void **state)
{
	struct policy_host h = { POLICY_HOST_EXACT, NULL };

	(void)state;
	assert_false(match_host(&h, "github.com"));
	assert_false(match_host(NULL, "github.com"));
	h.name = (char *)(uintptr_t)"github.com";
	assert_false(match_host(&h, NULL));
}

static void
test_strerror_describes_every_error(void **state)
{
	int e;

	(void)state;
	for (e = MATCH_OK; e <= MATCH_ERR_NOMEM; e++)
		assert_string_not_equal(match_strerror((enum match_err)e), "unknown match error");
	assert_string_equal(match_strerror((enum match_err)999), "unknown match error");
}

static void
test_binary_check_accepts_absolute_globs(void **state)
{
	static const char *const good[] = {
		"/usr/bin/curl", "/usr/bin/*", "/usr/**/python3", "/**", "/usr/bin/python3.*",
		"/opt/*/bin/*", "/usr/bin/a?b", "/usr/lib/**",
	};
	size_t i;

	(void)state;
	for (i = 0; i < TABLE_LEN(good); i++)
		if (match_binary_check(good[i]) != MATCH_OK)
			fail_msg("match_binary_check(\"%s\") refused", good[i]);
}

static void
test_binary_check_refuses_relative_dot_and_empty_segments(void **state)
{
	static const char *const bad[] = {
		"", "usr/bin/curl", "curl", "/", "/usr//bin", "/usr/bin/", "/usr/./bin/curl",
		"/usr/../bin/curl", "/usr/bin/..", "/.", "/usr/**bin/x", "/usr/bin**", "/***",
		"/a/b**/c", "*/bin",
	};
	size_t i;

	(void)state;
	assert_int_equal(match_binary_check(NULL), MATCH_ERR_BAD_BINARY);
	for (i = 0; i < TABLE_LEN(bad); i++)
		if (match_binary_check(bad[i]) != MATCH_ERR_BAD_BINARY)
			fail_msg("match_binary_check(\"%s\") accepted", bad[i]);
}

static void
test_binary_check_enforces_length_and_segment_limits(void **state)
{
	char glob[MATCH_BINARY_MAX_BYTES + 8];
	size_t i;

	(void)state;
	glob[0] = '\0';
	for (i = 0; i < MATCH_BINARY_MAX_SEGMENTS; i++)
		strcat(glob, "/a");
	assert_int_equal(match_binary_check(glob), MATCH_OK);
	strcat(glob, "/a");
	assert_int_equal(match_binary_check(glob), MATCH_ERR_BAD_BINARY);
	glob[0] = '/';
	memset(glob + 1, 'a', MATCH_BINARY_MAX_BYTES - 2);
	glob[MATCH_BINARY_MAX_BYTES - 1] = '\0';            /* 4095 bytes: fits */
	assert_int_equal(match_binary_check(glob), MATCH_OK);
	glob[MATCH_BINARY_MAX_BYTES - 1] = 'a';
	glob[MATCH_BINARY_MAX_BYTES] = '\0';                /* 4096 bytes: too long */
	assert_int_equal(match_binary_check(glob), MATCH_ERR_BAD_BINARY);
}

static void
test_binary_exact_path_matches_only_itself(void **state)
{
	static const struct glob_case cases[] = {
		{ "/usr/bin/curl", "/usr/bin/curl", true },
		{ "/usr/bin/curl", "/usr/bin/curl2", false },
		{ "/usr/bin/curl", "/usr/bin/cur", false },
		{ "/usr/bin/curl", "/usr/local/bin/curl", false },
		{ "/usr/bin/curl", "/usr/bin", false },
		{ "/usr/bin/a?b", "/usr/bin/a?b", true },
		{ "/usr/bin/a?b", "/usr/bin/axb", false },
		{ "/usr/bin/[ab]", "/usr/bin/a", false },
	};

	(void)state;
	check_glob_table(cases, TABLE_LEN(cases));
}

static void
test_binary_star_stays_within_one_segment(void **state)
{
	static const struct glob_case cases[] = {
		{ "/usr/bin/*", "/usr/bin/curl", true },
		{ "/usr/bin/*", "/usr/bin/x/curl", false },
		{ "/usr/bin/*", "/usr/bin", false },
		{ "/usr/*/curl", "/usr/bin/curl", true },
		{ "/usr/*/curl", "/usr/local/bin/curl", false },
		{ "/usr/bin/python3.*", "/usr/bin/python3.11", true },
		{ "/usr/bin/python3.*", "/usr/bin/python3", false },
		{ "/usr/bin/*python*", "/usr/bin/python", true },
		{ "/usr/bin/*py*th*on", "/usr/bin/cpython", true },
		{ "/usr/bin/*py*th*on", "/usr/bin/pythons", false },
		{ "/usr/bin/a*a", "/usr/bin/a", false },
		{ "/usr/bin/a*a", "/usr/bin/aa", true },
		{ "/opt/*/bin/*", "/opt/node/bin/node", true },
	};

	(void)state;
	check_glob_table(cases, TABLE_LEN(cases));
}

static void
test_binary_double_star_crosses_segments(void **state)
{
	static const struct glob_case cases[] = {
		{ "/usr/**/python3", "/usr/bin/python3", true },
		{ "/usr/**/python3", "/usr/local/bin/python3", true },
		{ "/usr/**/python3", "/usr/python3", true },
		{ "/usr/**/python3", "/usr/bin/python3/x", false },
		{ "/usr/**/python3", "/opt/bin/python3", false },
		{ "/usr/**", "/usr/a/b/c", true },
		{ "/usr/**", "/usrx/a", false },
		{ "/**/bin/*", "/usr/local/bin/node", true },
		{ "/**/bin/*", "/usr/local/sbin/node", false },
		{ "/a/**/b/**/c", "/a/x/b/y/z/c", true },
		{ "/a/**/b/**/c", "/a/b/c", true },
		{ "/a/**/b/**/c", "/a/c/b", false },
		{ "/a/**/x*y/c", "/a/q/x1y/c", true },
	};

	(void)state;
	check_glob_table(cases, TABLE_LEN(cases));
}

static void
test_binary_root_double_star_matches_every_absolute_path(void **state)
{
	static const struct glob_case cases[] = {
		{ "/**", "/usr/bin/curl", true },
		{ "/**", "/a", true },
		{ "/**", "/", true },
		{ "/**", "/tmp/x/y/z/w", true },
	};

	(void)state;
	check_glob_table(cases, TABLE_LEN(cases));
	assert_false(match_binary("/**", "usr/bin/curl"));
	assert_false(match_binary("/**", ""));
	assert_false(match_binary("/**", NULL));
}

static void
test_binary_refuses_non_canonical_paths(void **state)
{
	(void)state;
	assert_false(match_binary("/usr/bin/*", "/usr/bin/../../tmp/evil"));
	assert_false(match_binary("/usr/**", "/usr/bin/../../tmp/evil"));
	assert_false(match_binary("/usr/bin/*", "/usr/bin/./curl"));
	assert_false(match_binary("/usr/bin/*", "/usr/bin//curl"));
	assert_false(match_binary("/usr/bin/curl", "/usr/bin/curl/"));
	assert_false(match_binary("usr/bin/curl", "usr/bin/curl"));
	assert_true(match_binary("/usr/bin/curl", "/usr/bin/curl"));
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Times GLOB against PATH and asserts it finishes within the budget. */
static void
check_glob_fast(const char *glob, const char *path, bool want)
{
	uint64_t t0 = now_ns(), took;
	bool got = match_binary(glob, path);

	took = now_ns() - t0;
	assert_int_equal(got, want);
	if (took > TEST_GLOB_BUDGET_NS)
		fail_msg("glob of %zu bytes took %llu ns", strlen(glob), (unsigned long long)took);
}

static void
test_pathological_glob_stays_fast(void **state)
{
	char path[MATCH_BINARY_MAX_BYTES], glob[MATCH_BINARY_MAX_BYTES];
	size_t i;

	(void)state;
	/* One 4094-byte segment of 'a's against "*a*a*...*b": exponential
	 * for a backtracking matcher. */
	path[0] = '/';
	memset(path + 1, 'a', sizeof(path) - 2);
	path[sizeof(path) - 1] = '\0';
	strcpy(glob, "/");
	for (i = 0; i < 1000; i++)
		strcat(glob, "*a");
	strcat(glob, "*b");
	assert_int_equal(match_binary_check(glob), MATCH_OK);
	check_glob_fast(glob, path, false);
	glob[strlen(glob) - 1] = 'a';
	check_glob_fast(glob, path, true);
	/* 2046 one-letter segments and a last "z", against "**", 61
	 * segments that each match "a", then two that do not: the greedy
	 * walk retries the 61 from every position. The literal ends agree,
	 * so the quick check cannot decide it. */
	for (i = 0; i + 4 < sizeof(path); i += 2)
		memcpy(path + i, "/a", 2);
	strcpy(path + i, "/z");
	strcpy(glob, "/**");
	for (i = 0; i < MATCH_BINARY_MAX_SEGMENTS - 3; i++)
		strcat(glob, "/*a*");
	strcat(glob, "/c*/z");
	assert_int_equal(match_binary_check(glob), MATCH_OK);
	check_glob_fast(glob, path, false);
	/* The same with the "c*" segment turned into "**": now it matches. */
	memcpy(glob + strlen(glob) - 4, "**", 2);
	check_glob_fast(glob, path, true);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize_lowercases_and_drops_one_trailing_dot),
		cmocka_unit_test(test_normalize_refuses_empty_names_and_labels),
		cmocka_unit_test(test_normalize_refuses_bad_characters),
		cmocka_unit_test(test_normalize_refuses_u_labels),
		cmocka_unit_test(test_normalize_refuses_hyphen_at_label_edges),
		cmocka_unit_test(test_normalize_refuses_ip_literals_in_every_spelling),
		cmocka_unit_test(test_normalize_enforces_label_and_name_lengths),
		cmocka_unit_test(test_parse_accepts_exact_and_wildcard_patterns),
		cmocka_unit_test(test_parse_refuses_public_suffix_wildcards),
		cmocka_unit_test(test_parse_refuses_misplaced_wildcards),
		cmocka_unit_test(test_parse_refuses_what_normalize_refuses),
		cmocka_unit_test(test_wildcard_does_not_match_apex),
		cmocka_unit_test(test_one_label_wildcard_matches_exactly_one_label),
		cmocka_unit_test(test_any_depth_wildcard_matches_one_or_more_labels),
		cmocka_unit_test(test_exact_pattern_matches_only_its_name),
		cmocka_unit_test(test_case_and_trailing_dot_match_through_normalize),
		cmocka_unit_test(test_match_host_refuses_null_arguments),
		cmocka_unit_test(test_strerror_describes_every_error),
		cmocka_unit_test(test_binary_check_accepts_absolute_globs),
		cmocka_unit_test(test_binary_check_refuses_relative_dot_and_empty_segments),
		cmocka_unit_test(test_binary_check_enforces_length_and_segment_limits),
		cmocka_unit_test(test_binary_exact_path_matches_only_itself),
		cmocka_unit_test(test_binary_star_stays_within_one_segment),
		cmocka_unit_test(test_binary_double_star_crosses_segments),
		cmocka_unit_test(test_binary_root_double_star_matches_every_absolute_path),
		cmocka_unit_test(test_binary_refuses_non_canonical_paths),
		cmocka_unit_test(test_pathological_glob_stays_fast),
	};

	return cmocka_run_group_tests_name("match", tests, NULL, NULL);
}
