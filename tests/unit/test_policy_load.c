/* Unit tests for the policy loader (policy/load.c), its diagnostics
 * (policy/diag.c) and the model's lifecycle (policy/policy.c). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/diag.h"
#include "policy/load.h"
#include "policy/policy.h"
#include "policy/render.h"
#include "tests/unit/yaml-test-util.h"

#define TEST_DOC_MAX_BYTES 4096
#define TEST_BILLION_LAUGHS_MAX_MS 1000

static struct policy_diags diags;
static struct policy *pol;
static char tmp_path[64];

static int
setup(void **state)
{
	policy_diags_init(&diags);
	pol = NULL;
	tmp_path[0] = '\0';
	return 0;
}

static int
teardown(void **state)
{
	policy_diags_clear(&diags);
	policy_free(pol);
	pol = NULL;
	if (tmp_path[0] != '\0')
		unlink(tmp_path);
	return 0;
}

static int
load(const char *text)
{
	return policy_load_buffer("t.yaml", text, strlen(text), &pol, &diags);
}

/* Asserts that diagnostic I is at LINE:COL and its message holds NEEDLE. */
static void
assert_diag(size_t i, unsigned line, unsigned col, const char *needle)
{
	yaml_test_assert_diag(&diags, i, "t.yaml", line, col, needle);
}

/* Asserts that TEXT fails to load with one error, at LINE:COL, holding NEEDLE. */
static void
assert_only_error(const char *text, unsigned line, unsigned col, const char *needle)
{
	assert_int_equal(load(text), -1);
	assert_null(pol);
	yaml_test_assert_one_diag(&diags, "t.yaml", line, col, needle);
}

/* A one-rule policy whose only endpoint is the flow mapping {BODY}, on
 * line 4; BODY starts at column ENDPOINT_COL. */
#define ENDPOINT_COL 10
static const char *
endpoint_doc(const char *body)
{
	static char doc[TEST_DOC_MAX_BYTES];

	snprintf(doc, sizeof(doc),
	    "network_policies:\n"
	    "  r:\n"
	    "    endpoints:\n"
	    "      - {%s}\n"
	    "    binaries: [{path: /usr/bin/git}]\n", body);
	return doc;
}

/* The column of the first NEEDLE in an endpoint BODY. */
static unsigned
endpoint_col(const char *body, const char *needle)
{
	const char *at = strstr(body, needle);

	assert_non_null(at);
	return ENDPOINT_COL + (unsigned)(at - body);
}

/* Asserts that the endpoint {BODY} is refused once, at NEEDLE, with MESSAGE. */
static void
assert_endpoint_refused(const char *body, const char *at, const char *message)
{
	assert_only_error(endpoint_doc(body), 4, endpoint_col(body, at), message);
}

static const char full_policy[] =
    "version: 1\n"
    "filesystem_policy:\n"
    "  read_only: [/usr, /lib, /etc, /home/sam/reference]\n"
    "  read_write: [/tmp, /home/sam/code/app]\n"
    "landlock:\n"
    "  compatibility: best_effort\n"
    "process:\n"
    "  run_as_user: \"1000\"\n"
    "  run_as_group: sam\n"
    "network_policies:\n"
    "  code_hosts:\n"
    "    name: code-hosts\n"
    "    endpoints:\n"
    "      - {host: github.com, port: 443}\n"
    "      - host: \"*.Example.NET.\"\n"
    "        ports: [443, 80, 443]\n"
    "        allowed_ips: [10.0.0.0/8, \"fd00::/8\"]\n"
    "        sni_check: false\n"
    "    binaries:\n"
    "      - {path: /usr/bin/git}\n"
    "      - path: /usr/lib/git-core/**\n"
    "  anything:\n"
    "    endpoints: [{host: \"**.example.org\", port: 8443}]\n"
    "    binaries: [{path: \"/**\"}]\n"
    "write_guard:\n"
    "  allowed_root: workspace\n"
    "  deny_reason: Writes must stay inside the workspace.\n";

static void
test_full_policy_loads_every_field(void **state)
{
	const struct policy_rule *r;
	const struct policy_endpoint *e;

	if (load(full_policy) != 0)
		yaml_test_dump_diags(&diags);
	assert_non_null(pol);
	assert_int_equal(diags.count, 0);
	assert_int_equal(pol->version, 1);
	assert_int_equal(pol->read_only.npaths, 4);
	assert_string_equal(pol->read_only.paths[3], "/home/sam/reference");
	assert_int_equal(pol->read_write.npaths, 2);
	assert_string_equal(pol->read_write.paths[1], "/home/sam/code/app");
	assert_int_equal(pol->landlock, POLICY_LANDLOCK_BEST_EFFORT);
	assert_true(pol->has_process);
	assert_string_equal(pol->run_as_user, "1000");
	assert_string_equal(pol->run_as_group, "sam");
	assert_int_equal(pol->nrules, 2);
	r = &pol->rules[0];
	assert_string_equal(r->key, "code_hosts");
	assert_string_equal(r->name, "code-hosts");
	assert_int_equal(r->nendpoints, 2);
	e = &r->endpoints[0];
	assert_int_equal(e->host.kind, POLICY_HOST_EXACT);
	assert_string_equal(e->host.name, "github.com");
	assert_int_equal(e->nports, 1);
	assert_int_equal(e->ports[0], 443);
	assert_true(e->sni_check);
	assert_int_equal(e->line, 14);
	assert_int_equal(e->col, 9);
	e = &r->endpoints[1];
	assert_int_equal(e->host.kind, POLICY_HOST_ONE_LABEL);
	assert_string_equal(e->host.name, "example.net");
	assert_int_equal(e->nports, 2);
	assert_int_equal(e->ports[0], 80);
	assert_int_equal(e->ports[1], 443);
	assert_false(e->sni_check);
	assert_int_equal(e->nallowed_ips, 2);
	assert_int_equal(e->allowed_ips[0].family, AF_INET);
	assert_int_equal(e->allowed_ips[0].addr[0], 10);
	assert_int_equal(e->allowed_ips[0].prefix_len, 8);
	assert_int_equal(e->allowed_ips[1].family, AF_INET6);
	assert_int_equal(e->allowed_ips[1].addr[0], 0xfd);
	assert_int_equal(e->allowed_ips[1].prefix_len, 8);
	assert_int_equal(r->nbinaries, 2);
	assert_string_equal(r->binaries[1].path, "/usr/lib/git-core/**");
	assert_false(r->any_binary);
	r = &pol->rules[1];
	assert_string_equal(r->name, "anything");
	assert_int_equal(r->endpoints[0].host.kind, POLICY_HOST_ANY_DEPTH);
	assert_true(r->any_binary);
	assert_true(pol->has_write_guard);
	assert_string_equal(pol->write_guard_allowed_root, "workspace");
	assert_string_equal(pol->write_guard_deny_reason, "Writes must stay inside the workspace.");
}

static void
test_absent_sections_take_defaults(void **state)
{
	assert_int_equal(load("network_policies:\n  gh:\n    endpoints: [{host: github.com, port: 443}]\n"
	    "    binaries: []\n"), 0);
	assert_int_equal(pol->version, POLICY_VERSION);
	assert_int_equal(pol->landlock, POLICY_LANDLOCK_HARD_REQUIREMENT);
	assert_false(pol->has_process);
	assert_null(pol->run_as_user);
	assert_false(pol->has_write_guard);
	assert_string_equal(pol->write_guard_allowed_root, "workspace");
	assert_null(pol->write_guard_deny_reason);
	assert_string_equal(pol->rules[0].name, "gh");
	assert_true(pol->rules[0].endpoints[0].sni_check);
}

static void
test_empty_binaries_list_loads_and_allows_no_program(void **state)
{
	assert_int_equal(load("network_policies:\n  gh:\n    endpoints: [{host: github.com, port: 443}]\n"
	    "    binaries: []\n"), 0);
	assert_int_equal(pol->rules[0].nbinaries, 0);
	assert_false(pol->rules[0].any_binary);
}

static void
test_paths_are_normalized(void **state)
{
	assert_int_equal(load("filesystem_policy:\n  read_only: [\"//usr///lib/\", /./opt/./x, /]\n"), 0);
	assert_string_equal(pol->read_only.paths[0], "/usr/lib");
	assert_string_equal(pol->read_only.paths[1], "/opt/x");
	assert_string_equal(pol->read_only.paths[2], "/");
}

static void
test_relative_path_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  read_write: [/tmp, code/app]\n", 2, 22,
	    "path 'code/app' in read_write is not absolute");
}

static void
test_dotdot_path_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  read_only:\n    - /home/sam/../root\n", 3, 7,
	    "has a '..' segment");
}

static void
test_empty_path_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  read_only: [\"\"]\n", 2, 15, "is not absolute");
}

static void
test_path_in_both_lists_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  read_only: [/srv]\n  read_write: [/srv/]\n", 3, 16,
	    "path '/srv' is in both read_only (line 2) and read_write");
}

static void
test_unknown_top_level_key_lists_expected_keys(void **state)
{
	assert_only_error("version: 1\nnetwork_policy: {}\n", 2, 1,
	    "unknown key 'network_policy' in the policy (expected version, filesystem_policy, "
	    "landlock, process, network_policies, write_guard)");
}

static void
test_unknown_endpoint_key_lists_expected_keys(void **state)
{
	const char *body = "host: github.com, port: 443, protocol: rest";

	assert_endpoint_refused(body, "protocol",
	    "unknown key 'protocol' in endpoint (expected host, port, ports, allowed_ips, sni_check, tls, rules)");
}

static void
test_unknown_key_in_nested_section_refused(void **state)
{
	assert_only_error("landlock:\n  compatibility: best_effort\n  mode: strict\n", 3, 3,
	    "unknown key 'mode' in landlock (expected compatibility)");
}

static void
test_scalar_where_list_expected_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  read_only: /usr\n", 2, 14,
	    "'read_only' in filesystem_policy must be a list, but it is a single value");
}

static void
test_list_where_scalar_expected_refused(void **state)
{
	assert_only_error("version: [1]\n", 1, 10, "'version' in the policy must be a single value, but it is a list");
}

static void
test_empty_value_where_mapping_expected_refused(void **state)
{
	assert_only_error("version: 1\nprocess:\n", 2, 9, "'process' in the policy must be a mapping, but it is empty");
}

static void
test_plain_string_binary_refused(void **state)
{
	assert_only_error("network_policies:\n  r:\n    endpoints: []\n    binaries: [/usr/bin/git]\n",
	    4, 16, "each item of 'binaries' must be a mapping, but this one is a single value");
}

static void
test_duplicate_key_refused(void **state)
{
	assert_only_error("version: 1\nlandlock:\n  compatibility: best_effort\n  compatibility: best_effort\n",
	    4, 3, "duplicate key 'compatibility' in landlock (first given at line 3, column 3)");
}

static void
test_duplicate_network_policy_key_refused(void **state)
{
	assert_only_error("network_policies:\n  a: {endpoints: [], binaries: []}\n  b: {endpoints: [], binaries: []}\n"
	    "  a: {endpoints: [], binaries: []}\n", 4, 3,
	    "duplicate key 'a' in network_policies (first given at line 2, column 3)");
}

static void
test_anchor_refused(void **state)
{
	assert_only_error("version: &v 1\n", 1, 10, "anchors are not allowed (&v)");
}

static void
test_alias_refused(void **state)
{
	assert_int_equal(load("filesystem_policy:\n  read_only: &ro [/usr]\n  read_write: *ro\n"), -1);
	assert_int_equal(diags.count, 2);
	assert_diag(0, 2, 14, "anchors are not allowed (&ro)");
	assert_diag(1, 3, 15, "aliases are not allowed (*ro)");
}

static void
test_billion_laughs_refused_quickly(void **state)
{
	char doc[TEST_DOC_MAX_BYTES];
	size_t o = 0;
	struct timespec t0, t1;
	long ms;

	o += (size_t)snprintf(doc + o, sizeof(doc) - o, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
	for (int i = 1; i < 10; i++)
		o += (size_t)snprintf(doc + o, sizeof(doc) - o,
		    "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n",
		    i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(load(doc), -1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms < TEST_BILLION_LAUGHS_MAX_MS);
	assert_diag(0, 1, 1, "unknown key 'a0'");
	assert_diag(1, 1, 5, "anchors are not allowed (&a0)");
	assert_diag(4, 2, 10, "aliases are not allowed (*a0)");
}

static void
test_oversized_buffer_refused(void **state)
{
	size_t len = POLICY_FILE_MAX_BYTES + 1;
	char *big = malloc(len);

	assert_non_null(big);
	memset(big, '#', len);
	assert_int_equal(policy_load_buffer("t.yaml", big, len, &pol, &diags), -1);
	free(big);
	assert_int_equal(diags.count, 1);
	assert_diag(0, 0, 0, "over the limit of 1048576 bytes");
}

/* KEY: followed by DEPTH nested flow lists. */
static char *
nested_doc(int depth)
{
	char *doc = malloc((size_t)depth * 2 + 16);
	size_t o = 0;

	assert_non_null(doc);
	o += (size_t)sprintf(doc, "deep: ");
	for (int i = 0; i < depth; i++)
		doc[o++] = '[';
	for (int i = 0; i < depth; i++)
		doc[o++] = ']';
	doc[o++] = '\n';
	doc[o] = '\0';
	return doc;
}

static void
test_nesting_deeper_than_limit_refused(void **state)
{
	/* The top mapping is one level: POLICY_LOAD_DEPTH_MAX lists make one too many. */
	char *doc = nested_doc(POLICY_LOAD_DEPTH_MAX);

	assert_int_equal(load(doc), -1);
	free(doc);
	assert_int_equal(diags.count, 1);
	assert_diag(0, 1, 7 + POLICY_LOAD_DEPTH_MAX - 1, "nested deeper than 32 levels");
}

static void
test_nesting_at_limit_is_only_an_unknown_key(void **state)
{
	char *doc = nested_doc(POLICY_LOAD_DEPTH_MAX - 1);

	assert_int_equal(load(doc), -1);
	free(doc);
	assert_int_equal(diags.count, 1);
	assert_diag(0, 1, 1, "unknown key 'deep'");
}

static void
test_invalid_utf8_refused_with_position(void **state)
{
	assert_only_error("version: 1\nwrite_guard:\n  deny_reason: caf\xc3\x28\n", 3, 20,
	    "invalid UTF-8");
}

static void
test_utf16_bom_refused_as_invalid_utf8(void **state)
{
	static const char doc[] = "\xff\xfev\0e\0r\0";

	assert_int_equal(policy_load_buffer("t.yaml", doc, sizeof(doc) - 1, &pol, &diags), -1);
	assert_diag(0, 1, 1, "invalid UTF-8");
}

static void
test_control_character_refused(void **state)
{
	assert_only_error("version: 1\x01\n", 1, 11, "control characters are not allowed");
}

static void
test_nul_escape_in_quoted_value_refused(void **state)
{
	assert_only_error("write_guard:\n  deny_reason: \"no\\0pe\"\n", 2, 16, "NUL character");
}

static void
test_tag_refused(void **state)
{
	assert_only_error("version: !!int 1\n", 1, 10, "tags are not allowed (tag:yaml.org,2002:int)");
}

static void
test_second_document_refused(void **state)
{
	assert_only_error("version: 1\n---\nversion: 1\n", 2, 1, "a second YAML document");
}

static void
test_empty_document_refused(void **state)
{
	assert_only_error("", 1, 1, "the policy is empty");
}

static void
test_comment_only_document_refused(void **state)
{
	assert_only_error("# nothing here\n", 1, 1, "the policy is empty");
}

static void
test_top_level_list_refused(void **state)
{
	assert_only_error("- version: 1\n", 1, 1, "the policy must be a mapping");
}

static void
test_syntax_error_reported_with_position(void **state)
{
	assert_only_error("version: 1\nlandlock:\n  compatibility: [best_effort\n", 4, 1, "YAML syntax error");
}

static void
test_port_zero_refused(void **state)
{
	assert_endpoint_refused("host: github.com, port: 0", "0", "port 0 is out of range (1-65535)");
}

static void
test_port_65536_refused(void **state)
{
	assert_endpoint_refused("host: github.com, port: 65536", "65536", "port 65536 is out of range");
}

static void
test_port_with_letters_refused(void **state)
{
	assert_endpoint_refused("host: github.com, port: 443x", "443x", "port '443x' is not a number");
}

static void
test_negative_port_refused(void **state)
{
	assert_endpoint_refused("host: github.com, port: -1", "-1", "port -1 is out of range");
}

static void
test_port_with_plus_sign_refused(void **state)
{
	assert_endpoint_refused("host: github.com, port: +443", "+443", "port '+443' is not a number");
}

static void
test_quoted_port_refused(void **state)
{
	assert_endpoint_refused("host: github.com, port: \"443\"", "\"443\"", "is quoted");
}

static void
test_port_with_leading_zero_refused(void **state)
{
	assert_endpoint_refused("host: github.com, port: 0443", "0443", "leading zero");
}

static void
test_huge_port_does_not_overflow(void **state)
{
	assert_endpoint_refused("host: github.com, port: 99999999999999999999999", "999",
	    "out of range");
}

static void
test_port_and_ports_both_refused(void **state)
{
	assert_only_error(endpoint_doc("host: github.com, port: 443, ports: [80]"), 4, 9,
	    "endpoint has both 'port' and 'ports'");
}

static void
test_endpoint_without_port_refused(void **state)
{
	assert_only_error(endpoint_doc("host: github.com"), 4, 9, "endpoint has no 'port' or 'ports'");
}

static void
test_empty_ports_list_refused(void **state)
{
	assert_endpoint_refused("host: github.com, ports: []", "[]", "'ports' is empty");
}

static void
test_bad_port_in_ports_list_refused(void **state)
{
	assert_endpoint_refused("host: github.com, ports: [443, 70000]", "70000", "port 70000 is out of range");
}

static void
test_endpoint_without_host_refused(void **state)
{
	assert_only_error(endpoint_doc("port: 443"), 4, 9, "endpoint has no 'host' (required)");
}

static void
test_public_suffix_wildcard_host_refused(void **state)
{
	assert_endpoint_refused("host: \"*.com\", port: 443", "\"*.com\"", "host '*.com': the wildcard covers a public suffix");
}

static void
test_misplaced_wildcard_host_refused(void **state)
{
	assert_endpoint_refused("host: \"git*.com\", port: 443", "\"git*", "host 'git*.com':");
}

static void
test_sni_check_must_be_boolean(void **state)
{
	assert_endpoint_refused("host: github.com, port: 443, sni_check: yes", "yes",
	    "'sni_check' must be true or false, not 'yes'");
}

static void
test_missing_binaries_refused(void **state)
{
	assert_only_error("network_policies:\n  gh:\n    endpoints: [{host: github.com, port: 443}]\n", 3, 5,
	    "network policy 'gh' has no 'binaries' (required: ");
}

static void
test_missing_endpoints_refused(void **state)
{
	assert_only_error("network_policies:\n  gh:\n    binaries: []\n", 3, 5,
	    "network policy 'gh' has no 'endpoints'");
}

static void
test_relative_binary_refused(void **state)
{
	assert_only_error("network_policies:\n  r:\n    endpoints: []\n    binaries: [{path: git}]\n",
	    4, 23, "binary 'git': ");
}

static void
test_binary_without_path_refused(void **state)
{
	assert_only_error("network_policies:\n  r:\n    endpoints: []\n    binaries: [{}]\n",
	    4, 16, "binary has no 'path' (required)");
}

static void
test_double_star_binary_sets_any_binary(void **state)
{
	assert_int_equal(load("network_policies:\n  r:\n    endpoints: []\n"
	    "    binaries: [{path: /usr/bin/git}, {path: \"/**\"}]\n"), 0);
	assert_true(pol->rules[0].any_binary);
	assert_int_equal(pol->rules[0].nbinaries, 2);
}

static void
test_ports_are_sorted_and_deduplicated(void **state)
{
	assert_int_equal(load(endpoint_doc("host: github.com, ports: [8443, 22, 443, 22, 8443]")), 0);
	assert_int_equal(pol->rules[0].endpoints[0].nports, 3);
	assert_int_equal(pol->rules[0].endpoints[0].ports[0], 22);
	assert_int_equal(pol->rules[0].endpoints[0].ports[1], 443);
	assert_int_equal(pol->rules[0].endpoints[0].ports[2], 8443);
}

static void
test_allowed_ips_loopback_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [127.0.0.0/16]", "127",
	    "overlaps the loopback range 127.0.0.0/8");
}

static void
test_allowed_ips_covering_loopback_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [64.0.0.0/2]", "64.",
	    "overlaps the loopback range");
}

static void
test_allowed_ips_ipv6_loopback_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [\"::1/128\"]", "\"::1",
	    "overlaps the loopback address ::1");
}

static void
test_allowed_ips_v4_mapped_loopback_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [\"::ffff:127.0.0.1/128\"]",
	    "\"::ffff", "overlaps the loopback range 127.0.0.0/8");
}

static void
test_allowed_ips_link_local_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [169.254.169.254/32]", "169",
	    "overlaps the link-local range 169.254.0.0/16");
}

static void
test_allowed_ips_ipv6_link_local_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [\"fe80::/16\"]", "\"fe80",
	    "overlaps the link-local range fe80::/10");
}

static void
test_allowed_ips_unspecified_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [0.0.0.0/8]", "0.0.0.0",
	    "overlaps the unspecified address 0.0.0.0");
}

static void
test_allowed_ips_ipv6_unspecified_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [\"::/128\"]", "\"::/",
	    "overlaps the unspecified address ::");
}

static void
test_allowed_ips_slash_zero_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [0.0.0.0/0]", "0.0.0.0",
	    "covers every address");
}

static void
test_allowed_ips_without_prefix_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [10.1.2.3]", "10.1",
	    "is not ADDRESS/PREFIX");
}

static void
test_allowed_ips_bad_address_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [10.0.0/8]", "10.0",
	    "has no valid IPv4 or IPv6 address");
}

static void
test_allowed_ips_bad_prefix_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [10.0.0.0/33]", "10.0",
	    "has a bad prefix length (0-32)");
}

static void
test_allowed_ips_prefix_with_leading_zero_refused(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [10.0.0.0/08]", "10.0",
	    "has a bad prefix length");
}

static void
test_allowed_ips_host_bits_refused_with_network(void **state)
{
	assert_endpoint_refused("host: db.internal, port: 5432, allowed_ips: [10.1.2.3/8]", "10.1",
	    "has bits set past its prefix length (the network is 10.0.0.0/8)");
}

static void
test_version_2_refused(void **state)
{
	assert_only_error("version: 2\n", 1, 10, "unsupported policy version 2 (this corral reads version 1)");
}

static void
test_version_text_refused(void **state)
{
	assert_only_error("version: one\n", 1, 10, "version 'one' is not a number");
}

static void
test_quoted_version_refused(void **state)
{
	assert_only_error("version: \"1\"\n", 1, 10, "version \"1\" is quoted");
}

static void
test_unknown_landlock_compatibility_refused(void **state)
{
	assert_only_error("landlock:\n  compatibility: whatever\n", 2, 18,
	    "unknown landlock compatibility 'whatever' (expected hard_requirement or best_effort)");
}

static void
test_run_as_root_refused(void **state)
{
	assert_only_error("process:\n  run_as_user: 0\n", 2, 16, "run_as_user '0' is root");
}

static void
test_run_as_root_name_refused(void **state)
{
	assert_only_error("process:\n  run_as_group: root\n", 2, 17, "run_as_group 'root' is root");
}

static void
test_run_as_bad_name_refused(void **state)
{
	assert_only_error("process:\n  run_as_user: \"sam smith\"\n", 2, 16, "is neither a number nor a user name");
}

static void
test_empty_process_section_sets_has_process(void **state)
{
	assert_int_equal(load("process: {}\n"), 0);
	assert_true(pol->has_process);
	assert_null(pol->run_as_user);
}

static void
test_write_guard_unknown_root_refused(void **state)
{
	assert_only_error("write_guard:\n  allowed_root: home\n", 2, 17, "allowed_root 'home' is not supported");
}

static void
test_several_errors_reported_at_once(void **state)
{
	static const char doc[] =
	    "version: 2\n"                                      /* 1 */
	    "colour: blue\n"                                    /* 2 */
	    "filesystem_policy:\n"
	    "  read_only: [usr, /ok]\n"                         /* 4 */
	    "network_policies:\n"
	    "  r:\n"
	    "    endpoints:\n"
	    "      - {host: \"*.com\", port: 0, sni: true}\n"   /* 8: three */
	    "    binaries: [{path: bin}]\n";                    /* 9 */

	assert_int_equal(load(doc), -1);
	if (diags.count != 7)
		yaml_test_dump_diags(&diags);
	assert_int_equal(diags.count, 7);
	/* Found in two passes (shape, then values), reported top to bottom. */
	assert_diag(0, 1, 10, "unsupported policy version 2");
	assert_diag(1, 2, 1, "unknown key 'colour'");
	assert_diag(2, 4, 15, "path 'usr' in read_only is not absolute");
	assert_diag(3, 8, 16, "host '*.com'");
	assert_diag(4, 8, 31, "port 0 is out of range");
	assert_diag(5, 8, 34, "unknown key 'sni'");
	assert_diag(6, 9, 23, "binary 'bin'");
}

static void
test_too_many_errors_are_capped(void **state)
{
	size_t len = 0;
	char *doc = malloc(POLICY_DIAGS_MAX * 2 * 16);

	assert_non_null(doc);
	for (int i = 0; i < POLICY_DIAGS_MAX * 2; i++)
		len += (size_t)sprintf(doc + len, "k%d: 1\n", i);
	assert_int_equal(load(doc), -1);
	free(doc);
	assert_int_equal(diags.count, POLICY_DIAGS_MAX + 1);
	assert_true(diags.truncated);
	assert_int_equal(diags.items[POLICY_DIAGS_MAX - 1].line, POLICY_DIAGS_MAX);
	assert_non_null(strstr(diags.items[POLICY_DIAGS_MAX].message, "too many errors"));
}

static void
test_errors_of_an_earlier_load_stay_first(void **state)
{
	const char *second = "version: 1\nbogus: 1\n";

	assert_int_equal(load("a: 1\nb: 1\nc: 1\n"), -1);
	assert_int_equal(policy_load_buffer("u.yaml", second, strlen(second), &pol, &diags), -1);
	assert_int_equal(diags.count, 4);
	assert_int_equal(diags.items[2].line, 3);
	assert_string_equal(diags.items[3].file, "u.yaml");
	assert_int_equal(diags.items[3].line, 2);
}

static void
test_errors_counted_without_diagnostics(void **state)
{
	const char *doc = "version: 2\n";

	assert_int_equal(policy_load_buffer("t.yaml", doc, strlen(doc), &pol, NULL), -1);
	assert_null(pol);
}

static void
test_one_line_format(void **state)
{
	char *text;

	assert_int_equal(load("version: 1\nbogus: 1\n"), -1);
	text = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE);
	assert_string_equal(text, "t.yaml:2:1: unknown key 'bogus' in the policy (expected version, "
	    "filesystem_policy, landlock, process, network_policies, write_guard)\n");
	free(text);
}

static void
test_verbose_format_shows_line_and_caret(void **state)
{
	char *text;

	assert_int_equal(load("version: 1\nlandlock:\n\tcompatibility: x\n"), -1);
	text = policy_diags_format(&diags, POLICY_DIAG_VERBOSE);
	assert_string_equal(text, "t.yaml:3:1: YAML syntax error: found character that cannot start any token "
	    "(while scanning for the next token at line 3, column 1)\n"
	    "  \tcompatibility: x\n"
	    "  ^\n");
	free(text);
}

static void
test_verbose_caret_counts_characters_not_bytes(void **state)
{
	char *text;
	const char *caret;

	assert_int_equal(load("write_guard: {deny_reason: \"\xc3\xa9t\xc3\xa9\", allowed_root: x}\n"), -1);
	assert_diag(0, 1, 49, "allowed_root 'x'");
	text = policy_diags_format(&diags, POLICY_DIAG_VERBOSE);
	caret = strrchr(text, '\n');
	while (caret > text && caret[-1] != '\n')
		caret--;
	/* Two spaces of indent, then a space for each of the 48 characters
	 * (not the 50 bytes) before the caret. */
	assert_int_equal(strlen(caret), 2 + 48 + 2);
	free(text);
}

static void
test_source_line_control_bytes_are_made_printable(void **state)
{
	policy_diags_add(&diags, "f\x1b[31m", 1, 3, "ab\x1b[2Jc\xff", 8, "bad %s", "\x07thing");
	assert_string_equal(diags.items[0].file, "f?[31m");
	assert_string_equal(diags.items[0].source, "ab?[2Jc?");
	assert_string_equal(diags.items[0].message, "bad ?thing");
}

static void
test_file_level_error_has_no_position(void **state)
{
	char *text;

	policy_diags_add(&diags, "p.yaml", 0, 0, NULL, 0, "refused");
	text = policy_diags_format(&diags, POLICY_DIAG_VERBOSE);
	assert_string_equal(text, "p.yaml: refused\n");
	free(text);
}

/* Writes TEXT to a new temporary file of MODE; its name is in tmp_path. */
static void
write_tmp(const char *text, mode_t mode)
{
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/test_policy_load.XXXXXX");
	fd = mkstemp(tmp_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void
test_file_loads_identically_to_buffer(void **state)
{
	struct policy *from_buffer = NULL;

	write_tmp(full_policy, 0644);
	assert_int_equal(policy_load_file(tmp_path, &pol, &diags), 0);
	assert_int_equal(policy_load_buffer("b", full_policy, strlen(full_policy), &from_buffer, &diags), 0);
	assert_true(policy_equal(pol, from_buffer));
	policy_free(from_buffer);
}

static void
test_file_errors_name_the_file(void **state)
{
	write_tmp("version: 3\n", 0600);
	assert_int_equal(policy_load_file(tmp_path, &pol, &diags), -1);
	assert_string_equal(diags.items[0].file, tmp_path);
	assert_int_equal(diags.items[0].line, 1);
	assert_string_equal(diags.items[0].source, "version: 3");
}

static void
test_world_writable_file_refused(void **state)
{
	write_tmp(full_policy, 0666);
	assert_int_equal(policy_load_file(tmp_path, &pol, &diags), -1);
	assert_null(pol);
	assert_int_equal(diags.count, 1);
	assert_int_equal(diags.items[0].line, 0);
	assert_non_null(strstr(diags.items[0].message, "writable by every user (mode 0666)"));
}

static void
test_group_writable_file_refused(void **state)
{
	write_tmp(full_policy, 0620);
	assert_int_equal(policy_load_file(tmp_path, &pol, &diags), -1);
	assert_non_null(strstr(diags.items[0].message, "writable by its group"));
}

static void
test_file_of_another_user_refused(void **state)
{
	int rc;

	if (geteuid() != 0)
		skip();
	write_tmp(full_policy, 0644);
	assert_int_equal(chown(tmp_path, 4242, 4242), 0);
	/* Loaded by uid 4243: the file is neither root's nor its own. */
	assert_int_equal(seteuid(4243), 0);
	rc = policy_load_file(tmp_path, &pol, &diags);
	assert_int_equal(seteuid(0), 0);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(diags.items[0].message, "belongs to uid 4242"));
}

static void
test_file_of_root_loads_for_another_user(void **state)
{
	int rc;

	if (geteuid() != 0)
		skip();
	write_tmp(full_policy, 0644);
	assert_int_equal(seteuid(4243), 0);
	rc = policy_load_file(tmp_path, &pol, &diags);
	assert_int_equal(seteuid(0), 0);
	assert_int_equal(rc, 0);
}

static void
test_fifo_refused_without_blocking(void **state)
{
	snprintf(tmp_path, sizeof(tmp_path), "/tmp/test_policy_load.fifo.%d", (int)getpid());
	assert_int_equal(mkfifo(tmp_path, 0600), 0);
	assert_int_equal(policy_load_file(tmp_path, &pol, &diags), -1);
	assert_non_null(strstr(diags.items[0].message, "not a regular file"));
}

static void
test_directory_refused(void **state)
{
	assert_int_equal(policy_load_file("/tmp", &pol, &diags), -1);
	assert_non_null(strstr(diags.items[0].message, "not a regular file"));
}

static void
test_oversized_file_refused_before_reading(void **state)
{
	write_tmp("", 0600);
	assert_int_equal(truncate(tmp_path, POLICY_FILE_MAX_BYTES + 1), 0);
	assert_int_equal(policy_load_file(tmp_path, &pol, &diags), -1);
	assert_non_null(strstr(diags.items[0].message, "is 1048577 bytes, over the limit"));
}

static void
test_missing_file_says_why(void **state)
{
	assert_int_equal(policy_load_file("/nonexistent/policy.yaml", &pol, &diags), -1);
	assert_non_null(strstr(diags.items[0].message, "cannot open the file: No such file"));
}

static void
test_stream_from_pipe_loads(void **state)
{
	const char *doc = "version: 1\nprocess: {run_as_user: sam}\n";
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], doc, strlen(doc)), (ssize_t)strlen(doc));
	close(fds[1]);
	assert_int_equal(policy_load_stream(fds[0], "<stdin>", &pol, &diags), 0);
	close(fds[0]);
	assert_string_equal(pol->run_as_user, "sam");
}

static void
test_stream_over_limit_refused(void **state)
{
	static const char chunk[4096] = { '#' };
	size_t sent = 0;
	pid_t child;
	int fds[2], status;

	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(fds[0]);
		while (sent <= POLICY_FILE_MAX_BYTES && write(fds[1], chunk, sizeof(chunk)) > 0)
			sent += sizeof(chunk);
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(policy_load_stream(fds[0], "<stdin>", &pol, &diags), -1);
	close(fds[0]);
	waitpid(child, &status, 0);
	assert_non_null(strstr(diags.items[0].message, "over the limit of 1048576 bytes"));
}

static void
test_fd_of_a_pipe_refused(void **state)
{
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	close(fds[1]);
	assert_int_equal(policy_load_fd(fds[0], "<pipe>", &pol, &diags), -1);
	close(fds[0]);
	assert_non_null(strstr(diags.items[0].message, "not a regular file"));
}

static void
test_dup_is_equal_to_original(void **state)
{
	struct policy *copy;

	assert_int_equal(load(full_policy), 0);
	copy = policy_dup(pol);
	assert_non_null(copy);
	assert_true(policy_equal(pol, copy));
	assert_ptr_not_equal(copy->rules[0].endpoints[1].ports, pol->rules[0].endpoints[1].ports);
	policy_free(copy);
}

static void
test_equal_sees_a_changed_port(void **state)
{
	struct policy *copy;

	assert_int_equal(load(full_policy), 0);
	copy = policy_dup(pol);
	assert_non_null(copy);
	copy->rules[0].endpoints[1].ports[0] = 81;
	assert_false(policy_equal(pol, copy));
	policy_free(copy);
}

static void
test_equal_sees_a_changed_cidr(void **state)
{
	struct policy *copy;

	assert_int_equal(load(full_policy), 0);
	copy = policy_dup(pol);
	assert_non_null(copy);
	copy->rules[0].endpoints[1].allowed_ips[1].addr[15] = 1;
	assert_false(policy_equal(pol, copy));
	policy_free(copy);
}

static void
test_equal_ignores_positions(void **state)
{
	struct policy *copy;

	assert_int_equal(load(full_policy), 0);
	copy = policy_dup(pol);
	assert_non_null(copy);
	copy->rules[0].endpoints[0].line = 99;
	assert_true(policy_equal(pol, copy));
	policy_free(copy);
}

static void
test_new_policy_is_empty_and_strict(void **state)
{
	struct policy *p = policy_new();

	assert_non_null(p);
	assert_int_equal(p->version, POLICY_VERSION);
	assert_int_equal(p->landlock, POLICY_LANDLOCK_HARD_REQUIREMENT);
	assert_int_equal(p->nrules, 0);
	policy_free(p);
	policy_free(NULL);
}

/* ---- filesystem_policy.unix_sockets ---- */

static const char sockets_doc[] =
    "filesystem_policy:\n"
    "  unix_sockets:\n"
    "    - path: /run/user/1000//ssh-agent.socket/\n"
    "      env: SSH_AUTH_SOCK\n"
    "    - {path: /home/sam/.cache/clangd/sock, name: clangd}\n";

static void
test_unix_sockets_load_with_names_and_env(void **state)
{
	assert_int_equal(load(sockets_doc), 0);
	assert_int_equal(pol->nunix_sockets, 2);
	assert_string_equal(pol->unix_sockets[0].path, "/run/user/1000/ssh-agent.socket");
	assert_string_equal(pol->unix_sockets[0].name, "ssh-agent.socket");
	assert_string_equal(pol->unix_sockets[0].env, "SSH_AUTH_SOCK");
	assert_int_equal(pol->unix_sockets[0].line, 3);
	assert_int_equal(pol->unix_sockets[0].col, 7);
	assert_string_equal(pol->unix_sockets[1].path, "/home/sam/.cache/clangd/sock");
	assert_string_equal(pol->unix_sockets[1].name, "clangd");
	assert_null(pol->unix_sockets[1].env);
}

static void
test_unix_socket_relative_path_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  unix_sockets:\n    - path: run/agent\n", 3, 13,
	    "unix socket path 'run/agent' is not absolute");
}

static void
test_unix_socket_without_path_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  unix_sockets:\n    - name: agent\n", 3, 7,
	    "'path'");
}

static void
test_unix_socket_as_a_plain_path_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  unix_sockets: [/run/agent]\n", 2, 18,
	    "unix_sockets");
}

static void
test_unix_socket_unknown_key_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  unix_sockets:\n    - {path: /a/s, mode: rw}\n", 3, 20,
	    "unknown key 'mode' in unix socket (expected path, name, env)");
}

static void
test_unix_socket_bad_name_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  unix_sockets:\n    - {path: /a/s, name: ../x}\n", 3, 26,
	    "unix socket name '../x' is refused");
}

static void
test_unix_socket_hidden_basename_needs_a_name(void **state)
{
	assert_only_error("filesystem_policy:\n  unix_sockets:\n    - path: /home/sam/.agent\n", 3, 13,
	    "(the path's last component) is refused");
}

static void
test_unix_socket_long_name_refused(void **state)
{
	char doc[TEST_DOC_MAX_BYTES], name[POLICY_UNIX_SOCKET_NAME_MAX_BYTES + 2];

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(doc, sizeof(doc), "filesystem_policy:\n  unix_sockets:\n    - path: /a/%s\n", name);
	assert_only_error(doc, 3, 13, "at most 64");
}

static void
test_unix_socket_env_of_corral_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  unix_sockets:\n    - {path: /a/s, env: HTTPS_PROXY}\n",
	    3, 25, "unix socket env 'HTTPS_PROXY' is set by corral itself");
}

static void
test_unix_socket_env_of_the_loader_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  unix_sockets:\n    - {path: /a/s, env: LD_PRELOAD}\n",
	    3, 25, "steers the dynamic loader");
}

static void
test_unix_socket_env_not_a_name_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  unix_sockets:\n    - {path: /a/s, env: 1X}\n",
	    3, 25, "is not a variable name");
}

static void
test_unix_socket_name_twice_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  unix_sockets:\n    - path: /a/agent\n"
	    "    - path: /b/agent\n", 4, 7,
	    "unix socket name 'agent' is given twice (first at line 3, column 7)");
}

static void
test_unix_socket_path_twice_refused(void **state)
{
	assert_only_error("filesystem_policy:\n  unix_sockets:\n    - {path: /a/s, name: one}\n"
	    "    - {path: /a//s, name: two}\n", 4, 7, "unix socket path '/a/s' is given twice");
}

static void
test_too_many_unix_sockets_refused(void **state)
{
	char doc[TEST_DOC_MAX_BYTES];
	size_t n;

	n = (size_t)snprintf(doc, sizeof(doc), "filesystem_policy:\n  unix_sockets:\n");
	for (int i = 0; i <= POLICY_UNIX_SOCKETS_MAX; i++)
		n += (size_t)snprintf(doc + n, sizeof(doc) - n, "    - path: /s/%d\n", i);
	assert_only_error(doc, 3, 5, "unix_sockets lists 17 sockets: at most 16");
}

static void
test_dup_and_equal_see_unix_sockets(void **state)
{
	struct policy *copy;

	assert_int_equal(load(sockets_doc), 0);
	copy = policy_dup(pol);
	assert_non_null(copy);
	assert_true(policy_equal(pol, copy));
	assert_ptr_not_equal(copy->unix_sockets[0].path, pol->unix_sockets[0].path);
	copy->unix_sockets[0].line = 99;
	assert_true(policy_equal(pol, copy));
	free(copy->unix_sockets[1].name);
	copy->unix_sockets[1].name = strdup("other");
	assert_false(policy_equal(pol, copy));
	policy_free(copy);
}

/* Rendered and loaded again, the sockets say the same. */
static void
test_unix_sockets_survive_rendering(void **state)
{
	struct policy *again = NULL;
	char *text = NULL;

	assert_int_equal(load(sockets_doc), 0);
	assert_int_equal(render_yaml(pol, &text, NULL), RENDER_OK);
	assert_non_null(strstr(text, "unix_sockets:"));
	assert_int_equal(policy_load_buffer("r.yaml", text, strlen(text), &again, &diags), 0);
	assert_true(policy_equal(pol, again));
	policy_free(again);
	free(text);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_full_policy_loads_every_field),
		T(test_absent_sections_take_defaults),
		T(test_empty_binaries_list_loads_and_allows_no_program),
		T(test_paths_are_normalized),
		T(test_relative_path_refused),
		T(test_dotdot_path_refused),
		T(test_empty_path_refused),
		T(test_path_in_both_lists_refused),
		T(test_unknown_top_level_key_lists_expected_keys),
		T(test_unknown_endpoint_key_lists_expected_keys),
		T(test_unknown_key_in_nested_section_refused),
		T(test_scalar_where_list_expected_refused),
		T(test_list_where_scalar_expected_refused),
		T(test_empty_value_where_mapping_expected_refused),
		T(test_plain_string_binary_refused),
		T(test_duplicate_key_refused),
		T(test_duplicate_network_policy_key_refused),
		T(test_anchor_refused),
		T(test_alias_refused),
		T(test_billion_laughs_refused_quickly),
		T(test_oversized_buffer_refused),
		T(test_nesting_deeper_than_limit_refused),
		T(test_nesting_at_limit_is_only_an_unknown_key),
		T(test_invalid_utf8_refused_with_position),
		T(test_utf16_bom_refused_as_invalid_utf8),
		T(test_control_character_refused),
		T(test_nul_escape_in_quoted_value_refused),
		T(test_tag_refused),
		T(test_second_document_refused),
		T(test_empty_document_refused),
		T(test_comment_only_document_refused),
		T(test_top_level_list_refused),
		T(test_syntax_error_reported_with_position),
		T(test_port_zero_refused),
		T(test_port_65536_refused),
		T(test_port_with_letters_refused),
		T(test_negative_port_refused),
		T(test_port_with_plus_sign_refused),
		T(test_quoted_port_refused),
		T(test_port_with_leading_zero_refused),
		T(test_huge_port_does_not_overflow),
		T(test_port_and_ports_both_refused),
		T(test_endpoint_without_port_refused),
		T(test_empty_ports_list_refused),
		T(test_bad_port_in_ports_list_refused),
		T(test_endpoint_without_host_refused),
		T(test_public_suffix_wildcard_host_refused),
		T(test_misplaced_wildcard_host_refused),
		T(test_sni_check_must_be_boolean),
		T(test_missing_binaries_refused),
		T(test_missing_endpoints_refused),
		T(test_relative_binary_refused),
		T(test_binary_without_path_refused),
		T(test_double_star_binary_sets_any_binary),
		T(test_ports_are_sorted_and_deduplicated),
		T(test_allowed_ips_loopback_refused),
		T(test_allowed_ips_covering_loopback_refused),
		T(test_allowed_ips_ipv6_loopback_refused),
		T(test_allowed_ips_v4_mapped_loopback_refused),
		T(test_allowed_ips_link_local_refused),
		T(test_allowed_ips_ipv6_link_local_refused),
		T(test_allowed_ips_unspecified_refused),
		T(test_allowed_ips_ipv6_unspecified_refused),
		T(test_allowed_ips_slash_zero_refused),
		T(test_allowed_ips_without_prefix_refused),
		T(test_allowed_ips_bad_address_refused),
		T(test_allowed_ips_bad_prefix_refused),
		T(test_allowed_ips_prefix_with_leading_zero_refused),
		T(test_allowed_ips_host_bits_refused_with_network),
		T(test_version_2_refused),
		T(test_version_text_refused),
		T(test_quoted_version_refused),
		T(test_unknown_landlock_compatibility_refused),
		T(test_run_as_root_refused),
		T(test_run_as_root_name_refused),
		T(test_run_as_bad_name_refused),
		T(test_empty_process_section_sets_has_process),
		T(test_write_guard_unknown_root_refused),
		T(test_several_errors_reported_at_once),
		T(test_too_many_errors_are_capped),
		T(test_errors_of_an_earlier_load_stay_first),
		T(test_errors_counted_without_diagnostics),
		T(test_one_line_format),
		T(test_verbose_format_shows_line_and_caret),
		T(test_verbose_caret_counts_characters_not_bytes),
		T(test_source_line_control_bytes_are_made_printable),
		T(test_file_level_error_has_no_position),
		T(test_file_loads_identically_to_buffer),
		T(test_file_errors_name_the_file),
		T(test_world_writable_file_refused),
		T(test_group_writable_file_refused),
		T(test_file_of_another_user_refused),
		T(test_file_of_root_loads_for_another_user),
		T(test_fifo_refused_without_blocking),
		T(test_directory_refused),
		T(test_oversized_file_refused_before_reading),
		T(test_missing_file_says_why),
		T(test_stream_from_pipe_loads),
		T(test_stream_over_limit_refused),
		T(test_fd_of_a_pipe_refused),
		T(test_dup_is_equal_to_original),
		T(test_equal_sees_a_changed_port),
		T(test_equal_sees_a_changed_cidr),
		T(test_equal_ignores_positions),
		T(test_new_policy_is_empty_and_strict),
		T(test_unix_sockets_load_with_names_and_env),
		T(test_unix_socket_relative_path_refused),
		T(test_unix_socket_without_path_refused),
		T(test_unix_socket_as_a_plain_path_refused),
		T(test_unix_socket_unknown_key_refused),
		T(test_unix_socket_bad_name_refused),
		T(test_unix_socket_hidden_basename_needs_a_name),
		T(test_unix_socket_long_name_refused),
		T(test_unix_socket_env_of_corral_refused),
		T(test_unix_socket_env_of_the_loader_refused),
		T(test_unix_socket_env_not_a_name_refused),
		T(test_unix_socket_name_twice_refused),
		T(test_unix_socket_path_twice_refused),
		T(test_too_many_unix_sockets_refused),
		T(test_dup_and_equal_see_unix_sockets),
		T(test_unix_sockets_survive_rendering),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
