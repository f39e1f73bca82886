/* Unit tests for policy/httprule (method and path rules of a terminated
 * endpoint) and their schema: loading `tls` and `rules`, refusing what is
 * wrong with one line each, rendering them back, and judging requests,
 * paths an upstream would decode to another among them. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/diag.h"
#include "policy/httprule.h"
#include "policy/index.h"
#include "policy/load.h"
#include "policy/policy.h"
#include "policy/render.h"

#define HEAD "version: 1\nnetwork_policies:\n  api:\n    binaries: [{path: \"/**\"}]\n" \
	"    endpoints:\n"

static struct policy *
load_ok(const char *endpoints)
{
	struct policy_diags d;
	struct policy *p = NULL;
	char *text;

	policy_diags_init(&d);
	assert_true(asprintf(&text, HEAD "%s", endpoints) > 0);
	if (policy_load_buffer("t", text, strlen(text), &p, &d) != 0)
		fail_msg("%s", d.count > 0 ? d.items[0].message : "refused");
	policy_diags_clear(&d);
	free(text);
	return p;
}

/* The first error of loading ENDPOINTS holds WANT. */
static void
load_refused(const char *endpoints, const char *want)
{
	struct policy_diags d;
	struct policy *p = NULL;
	char *text;

	policy_diags_init(&d);
	assert_true(asprintf(&text, HEAD "%s", endpoints) > 0);
	assert_int_equal(policy_load_buffer("t", text, strlen(text), &p, &d), -1);
	assert_null(p);
	assert_true(d.count > 0);
	if (strstr(d.items[0].message, want) == NULL)
		fail_msg("'%s' lacks '%s'", d.items[0].message, want);
	policy_diags_clear(&d);
	free(text);
}

static const struct policy_endpoint *
endpoint0(const struct policy *p)
{
	return &p->rules[0].endpoints[0];
}

static void
test_tls_and_rules_load(void **state)
{
	struct policy *p = load_ok("      - host: api.github.com\n        port: 443\n"
	    "        tls: terminate\n        rules:\n"
	    "          - {methods: [GET, POST], paths: [\"/repos/acme/**\"]}\n"
	    "          - {paths: [/user]}\n");
	const struct policy_endpoint *e = endpoint0(p);

	(void)state;
	assert_int_equal(e->tls, POLICY_TLS_TERMINATE);
	assert_int_equal(e->nhttp_rules, 2);
	assert_int_equal(e->http_rules[0].methods.npaths, 2);
	assert_string_equal(e->http_rules[0].methods.paths[1], "POST");
	assert_string_equal(e->http_rules[0].paths.paths[0], "/repos/acme/**");
	assert_int_equal(e->http_rules[1].methods.npaths, 0);
	policy_free(p);
}

static void
test_an_endpoint_passes_through_by_default(void **state)
{
	struct policy *p = load_ok("      - {host: example.com, port: 443}\n");

	(void)state;
	assert_int_equal(endpoint0(p)->tls, POLICY_TLS_PASSTHROUGH);
	assert_int_equal(endpoint0(p)->nhttp_rules, 0);
	assert_null(httprule_judge(endpoint0(p), "DELETE", "/anything"));
	policy_free(p);
}

static void
test_bad_schema_is_refused_with_a_reason(void **state)
{
	(void)state;
	load_refused("      - {host: a.example, port: 443, tls: yes}\n",
	    "'tls' must be terminate or passthrough");
	load_refused("      - {host: a.example, port: 443, rules: [{paths: [/x]}]}\n",
	    "'rules' needs 'tls: terminate'");
	load_refused("      - {host: a.example, port: 443, tls: terminate, rules: []}\n",
	    "'rules' lists 0 rules");
	load_refused("      - {host: a.example, port: 443, tls: terminate, rules: [{methods: [get]}]}\n",
	    "method 'get' is not a method the proxy reads");
	load_refused("      - {host: a.example, port: 443, tls: terminate, rules: [{methods: [PROPFIND]}]}\n",
	    "method 'PROPFIND' is not a method the proxy reads");
	load_refused("      - {host: a.example, port: 443, tls: terminate, rules: [{paths: [x/y]}]}\n",
	    "path 'x/y' is not absolute");
	load_refused("      - {host: a.example, port: 443, tls: terminate, rules: [{paths: [\"/a/../b\"]}]}\n",
	    "'..' segment");
	load_refused("      - {host: a.example, port: 443, tls: terminate, rules: [{paths: [\"/a?b=1\"]}]}\n",
	    "never the query");
	load_refused("      - {host: a.example, port: 443, tls: terminate, rules: [{path: [/a]}]}\n",
	    "path");
	load_refused("      - {host: a.example, port: 443, tls: terminate, rules: [{paths: []}]}\n",
	    "'paths' lists 0 items");
}

static void
test_rules_render_back_the_same(void **state)
{
	struct policy *p = load_ok("      - host: api.github.com\n        port: 443\n"
	    "        tls: terminate\n        rules:\n"
	    "          - {methods: [GET], paths: [\"/repos/**\", /]}\n");
	struct policy *again = NULL;
	struct policy_diags d;
	char *yaml = NULL;
	size_t len = 0;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(render_yaml(p, &yaml, &len), RENDER_OK);
	assert_non_null(strstr(yaml, "tls: terminate"));
	assert_int_equal(policy_load_buffer("again", yaml, len, &again, &d), 0);
	assert_true(policy_equal(p, again));
	policy_diags_clear(&d);
	policy_free(again);
	policy_free(p);
	free(yaml);
}

static void
test_requests_are_judged_by_method_and_path(void **state)
{
	struct policy *p = load_ok("      - host: api.github.com\n        port: 443\n"
	    "        tls: terminate\n        rules:\n"
	    "          - {methods: [GET, POST], paths: [\"/repos/acme/**\"]}\n"
	    "          - {methods: [GET], paths: [/user, /]}\n");
	const struct policy_endpoint *e = endpoint0(p);

	(void)state;
	assert_null(httprule_judge(e, "GET", "/repos/acme/app/issues"));
	assert_null(httprule_judge(e, "POST", "/repos/acme/app/issues?per_page=1"));
	assert_null(httprule_judge(e, "GET", "/repos/acme"));
	assert_null(httprule_judge(e, "GET", "/repos/acme/"));
	assert_null(httprule_judge(e, "GET", "/user"));
	assert_null(httprule_judge(e, "GET", "/"));
	/* Unreserved characters mean the same encoded. */
	assert_null(httprule_judge(e, "GET", "/repos/%61cme/app"));
	assert_string_equal(httprule_judge(e, "POST", "/user"), "path_not_allowed");
	/* A trailing slash is a folder: only a folder rule ("/a/" "**") takes it. */
	assert_string_equal(httprule_judge(e, "GET", "/user/"), "path_not_allowed");
	assert_string_equal(httprule_judge(e, "GET", "/repos/other/app"), "path_not_allowed");
	assert_string_equal(httprule_judge(e, "DELETE", "/repos/acme/app"), "method_not_allowed");
	assert_string_equal(httprule_judge(e, "get", "/user"), "method_not_allowed");
	/* The query never opens a path. */
	assert_string_equal(httprule_judge(e, "GET", "/other?/repos/acme/x"), "path_not_allowed");
	policy_free(p);
}

static void
test_paths_an_upstream_would_read_otherwise_are_refused(void **state)
{
	struct policy *p = load_ok("      - host: api.github.com\n        port: 443\n"
	    "        tls: terminate\n        rules: [{paths: [\"/repos/acme/**\"]}]\n");
	const struct policy_endpoint *e = endpoint0(p);
	static const char *const tricks[] = {
		"/repos/acme/../other/x", "/repos/acme/%2e%2e/other", "/repos/acme/%2E./other",
		"/repos/acme%2f..%2fother", "/repos/acme/x%2Fy", "/repos/acme\\..\\other",
		"/repos/acme/%5c", "/repos/acme//x", "/repos/acme/./x", "/repos/acme/%00",
		"/repos/acme/%zz", "/repos/acme/%4", "*", "http://api.github.com/repos/acme/x", "",
		"/repos/acme/..;/admin", "/repos/acme/x;a=b", "/repos/acme/%2e%2e%3b/admin",
		"/repos/acme#/../admin", "/repos/acme/%23x",
		"/repos/acme/%252e%252e/other", "/repos/acme/%c0%ae%c0%ae/other", "/repos/acme/%C1%9C",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tricks) / sizeof(tricks[0]); i++) {
		const char *why = httprule_judge(e, "GET", tricks[i]);

		if (why == NULL || strcmp(why, "path_not_canonical") != 0)
			fail_msg("%s: %s", tricks[i], why != NULL ? why : "passed");
	}
	/* Other encoded characters stay encoded, and match only as written. */
	assert_null(httprule_judge(e, "GET", "/repos/acme/a%20b"));
	policy_free(p);
	/* A glob's encodings are in capitals, as requests are matched. */
	p = load_ok("      - {host: a.example, port: 443, tls: terminate, rules: [{paths: [\"/a%2Bb\"]}]}\n");
	assert_null(httprule_judge(endpoint0(p), "GET", "/a%2bb"));
	assert_null(httprule_judge(endpoint0(p), "GET", "/a%2Bb"));
	policy_free(p);
	load_refused("      - {host: a.example, port: 443, tls: terminate, rules: [{paths: [\"/a%2bb\"]}]}\n",
	    "is not, in capitals, the encoding");
	load_refused("      - {host: a.example, port: 443, tls: terminate, rules: [{paths: [\"/%62\"]}]}\n",
	    "write letters, digits and -._~ as they are");
}

static void
test_a_terminated_endpoint_decides_over_a_pass_through_one(void **state)
{
	struct policy *p = load_ok("      - {host: api.github.com, port: 443}\n"
	    "  strict:\n    binaries: [{path: \"/**\"}]\n    endpoints:\n"
	    "      - {host: \"*.github.com\", port: 443, tls: terminate, rules: [{paths: [/zen]}]}\n");
	struct policy_index *idx = policy_index_new(p);
	struct policy_match m;

	(void)state;
	assert_non_null(idx);
	assert_int_equal(policy_index_decide(idx, "api.github.com", 443, NULL, 0, &m),
	    POLICY_ALLOW);
	assert_int_equal(m.endpoint->tls, POLICY_TLS_TERMINATE);
	assert_string_equal(httprule_judge(m.endpoint, "GET", "/other"), "path_not_allowed");
	policy_index_free(idx);
	policy_free(p);
}

static void
test_a_binary_scoped_terminated_entry_asks_for_the_binary(void **state)
{
	struct policy *p = load_ok("      - {host: \"*.github.com\", port: 443}\n"
	    "  curl:\n    binaries: [{path: /usr/bin/curl}]\n    endpoints:\n"
	    "      - {host: api.github.com, port: 443, tls: terminate, rules: [{paths: [/zen]}]}\n");
	struct policy_index *idx = policy_index_new(p);
	const char *curl[] = { "/usr/bin/curl" }, *wget[] = { "/usr/bin/wget" };
	struct policy_match m;

	(void)state;
	assert_non_null(idx);
	assert_int_equal(policy_index_decide(idx, "api.github.com", 443, NULL, 0, &m),
	    POLICY_NEED_BINARY);
	assert_int_equal(policy_index_decide(idx, "api.github.com", 443, curl, 1, &m), POLICY_ALLOW);
	assert_int_equal(m.endpoint->tls, POLICY_TLS_TERMINATE);
	assert_int_equal(policy_index_decide(idx, "api.github.com", 443, wget, 1, &m), POLICY_ALLOW);
	assert_int_equal(m.endpoint->tls, POLICY_TLS_PASSTHROUGH);
	/* Another host of the wide entry needs no identification. */
	assert_int_equal(policy_index_decide(idx, "www.github.com", 443, NULL, 0, &m),
	    POLICY_ALLOW);
	policy_index_free(idx);
	policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tls_and_rules_load),
		cmocka_unit_test(test_an_endpoint_passes_through_by_default),
		cmocka_unit_test(test_bad_schema_is_refused_with_a_reason),
		cmocka_unit_test(test_rules_render_back_the_same),
		cmocka_unit_test(test_requests_are_judged_by_method_and_path),
		cmocka_unit_test(test_paths_an_upstream_would_read_otherwise_are_refused),
		cmocka_unit_test(test_a_terminated_endpoint_decides_over_a_pass_through_one),
		cmocka_unit_test(test_a_binary_scoped_terminated_entry_asks_for_the_binary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
