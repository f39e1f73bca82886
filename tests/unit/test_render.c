/* Rendering a sandbox's policy, and writing policies as YAML. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <yaml.h>

#include "policy/caller.h"
#include "policy/load.h"
#include "policy/render.h"

static const struct render_root sam_roots[] = {
	{ "/home/sam/code/app", true },
	{ "/home/sam/reference", false },
};

/* The spec of the brief: two roots, uid and gid 1000, no profile. */
static struct render_spec
sam_spec(void)
{
	struct render_spec spec;

	memset(&spec, 0, sizeof(spec));
	spec.roots = sam_roots;
	spec.nroots = 2;
	spec.uid = 1000;
	spec.gid = 1000;
	return spec;
}

static struct policy *
render_ok(const struct render_spec *spec)
{
	struct policy *p = NULL;

	assert_int_equal(render_policy(spec, &p), RENDER_OK);
	assert_non_null(p);
	return p;
}

static bool
paths_have(const struct policy_paths *list, const char *path)
{
	size_t i;

	for (i = 0; i < list->npaths; i++)
		if (strcmp(list->paths[i], path) == 0)
			return true;
	return false;
}

static struct policy *
load_text(const char *text)
{
	struct policy_diags diags;
	struct policy *p = NULL;
	char *shown;

	policy_diags_init(&diags);
	if (policy_load_buffer("test", text, strlen(text), &p, &diags) != 0) {
		shown = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE);
		print_error("%s\n--- text ---\n%s", shown != NULL ? shown : "?", text);
		free(shown);
	}
	policy_diags_clear(&diags);
	assert_non_null(p);
	return p;
}

static char *
yaml_of(const struct policy *p)
{
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(render_yaml(p, &text, &len), RENDER_OK);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	return text;
}

static void
test_writable_root_is_read_write_only(void **state)
{
	struct render_spec spec = sam_spec();
	struct policy *p = render_ok(&spec);

	assert_true(paths_have(&p->read_write, "/home/sam/code/app"));
	assert_false(paths_have(&p->read_only, "/home/sam/code/app"));
	policy_free(p);
}

static void
test_readonly_root_is_read_only_only(void **state)
{
	struct render_spec spec = sam_spec();
	struct policy *p = render_ok(&spec);

	assert_true(paths_have(&p->read_only, "/home/sam/reference"));
	assert_false(paths_have(&p->read_write, "/home/sam/reference"));
	policy_free(p);
}

static void
test_runtime_is_read_only(void **state)
{
	struct render_spec spec = sam_spec();
	struct policy *p = render_ok(&spec);

	assert_string_equal(render_runtime_default(), LIBEXECDIR "/corral");
	assert_true(paths_have(&p->read_only, render_runtime_default()));
	assert_false(paths_have(&p->read_write, render_runtime_default()));
	policy_free(p);
}

static void
test_runtime_dir_can_be_given(void **state)
{
	struct render_spec spec = sam_spec();
	struct policy *p;

	spec.runtime_dir = "/opt/corral/libexec/corral";
	p = render_ok(&spec);
	assert_true(paths_have(&p->read_only, "/opt/corral/libexec/corral"));
	assert_false(paths_have(&p->read_only, render_runtime_default()));
	policy_free(p);
}

static void
test_system_dirs_are_read_only_and_tmp_writable(void **state)
{
	static const char *const system[] = {
		"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/opt",
	};
	struct render_spec spec = sam_spec();
	struct policy *p = render_ok(&spec);
	size_t i;

	for (i = 0; i < sizeof(system) / sizeof(system[0]); i++) {
		assert_true(paths_have(&p->read_only, system[i]));
		assert_false(paths_have(&p->read_write, system[i]));
	}
	assert_true(paths_have(&p->read_write, "/tmp"));
	assert_false(paths_have(&p->read_only, "/tmp"));
	policy_free(p);
}

/* Asserts that every path of LIST under /home is one of ALLOWED. */
static void
assert_home_paths_only(const struct policy_paths *list, const char *const *allowed,
    size_t nallowed)
{
	size_t i, j;
	bool found;

	for (i = 0; i < list->npaths; i++) {
		if (!caller_path_within(list->paths[i], "/home"))
			continue;
		for (j = 0, found = false; j < nallowed; j++)
			found = found || strcmp(list->paths[i], allowed[j]) == 0;
		if (!found)
			fail_msg("unexpected path under /home: %s", list->paths[i]);
	}
}

static void
test_nothing_else_under_home(void **state)
{
	static const char *const roots[] = { "/home/sam/code/app", "/home/sam/reference" };
	struct render_spec spec = sam_spec();
	struct policy *p = render_ok(&spec);
	char *text;

	assert_home_paths_only(&p->read_only, roots, 2);
	assert_home_paths_only(&p->read_write, roots, 2);
	assert_false(paths_have(&p->read_only, "/home"));
	assert_false(paths_have(&p->read_only, "/"));
	assert_false(paths_have(&p->read_write, "/"));
	/* The text too: no "/home" outside the two roots. */
	text = yaml_of(p);
	assert_null(strstr(text, "/home/sam\n"));
	assert_null(strstr(text, "/home\n"));
	free(text);
	policy_free(p);
}

static void
test_landlock_is_hard_requirement(void **state)
{
	struct render_spec spec = sam_spec();
	struct policy *p = render_ok(&spec);

	assert_int_equal(p->landlock, POLICY_LANDLOCK_HARD_REQUIREMENT);
	policy_free(p);
}

static void
test_process_runs_as_uid_and_gid(void **state)
{
	struct render_spec spec = sam_spec();
	struct policy *p;

	spec.gid = 1001;
	p = render_ok(&spec);
	assert_true(p->has_process);
	assert_string_equal(p->run_as_user, "1000");
	assert_string_equal(p->run_as_group, "1001");
	policy_free(p);
}

static void
test_uid_or_gid_zero_is_refused(void **state)
{
	struct render_spec spec = sam_spec();
	struct policy *p = NULL;

	spec.uid = 0;
	assert_int_equal(render_policy(&spec, &p), RENDER_ERR_ROOT_ID);
	assert_null(p);
	spec.uid = 1000;
	spec.gid = 0;
	assert_int_equal(render_policy(&spec, &p), RENDER_ERR_ROOT_ID);
	assert_null(p);
}

static void
test_home_is_read_write(void **state)
{
	struct render_spec spec = sam_spec();
	struct policy *p;

	spec.home = "/var/lib/corral/sandboxes/agent-7/home";
	p = render_ok(&spec);
	assert_true(paths_have(&p->read_write, spec.home));
	policy_free(p);
}

static void
test_root_path_is_normalized(void **state)
{
	static const struct render_root roots[] = { { "/home/sam//code/app/", true } };
	struct render_spec spec = sam_spec();
	struct policy *p;

	spec.roots = roots;
	spec.nroots = 1;
	p = render_ok(&spec);
	assert_true(paths_have(&p->read_write, "/home/sam/code/app"));
	policy_free(p);
}

static void
test_relative_or_dotdot_root_is_refused(void **state)
{
	static const struct render_root relative[] = { { "code/app", true } };
	static const struct render_root dotdot[] = { { "/home/sam/../root", false } };
	static const struct render_root dot[] = { { "/home/./sam", false } };
	struct render_spec spec = sam_spec();
	struct policy *p = NULL;

	spec.nroots = 1;
	spec.roots = relative;
	assert_int_equal(render_policy(&spec, &p), RENDER_ERR_BAD_PATH);
	spec.roots = dotdot;
	assert_int_equal(render_policy(&spec, &p), RENDER_ERR_BAD_PATH);
	spec.roots = dot;
	assert_int_equal(render_policy(&spec, &p), RENDER_ERR_BAD_PATH);
	assert_null(p);
}

static void
test_writable_system_root_is_read_write_only(void **state)
{
	static const struct render_root roots[] = { { "/opt", true } };
	struct render_spec spec = sam_spec();
	struct policy *p;

	spec.roots = roots;
	spec.nroots = 1;
	p = render_ok(&spec);
	assert_true(paths_have(&p->read_write, "/opt"));
	assert_false(paths_have(&p->read_only, "/opt"));
	policy_free(p);
}

static const char profile_text[] =
	"version: 1\n"
	"network_policies:\n"
	"  github:\n"
	"    name: code-hosts\n"
	"    endpoints:\n"
	"      - {host: github.com, port: 443}\n"
	"      - {host: \"*.github.com\", ports: [443, 8443]}\n"
	"    binaries:\n"
	"      - {path: /usr/bin/git}\n";

static void
test_profile_entries_are_copied(void **state)
{
	struct policy *profile = load_text(profile_text), *p;
	struct render_spec spec = sam_spec();

	spec.profile = profile;
	p = render_ok(&spec);
	assert_int_equal(p->nrules, 1);
	assert_string_equal(p->rules[0].key, "github");
	assert_string_equal(p->rules[0].name, "code-hosts");
	assert_int_equal(p->rules[0].nendpoints, 2);
	/* A deep copy: the profile may be freed (or reloaded) first. */
	assert_ptr_not_equal(p->rules[0].key, profile->rules[0].key);
	policy_free(profile);
	assert_string_equal(p->rules[0].endpoints[1].host.name, "github.com");
	policy_free(p);
}

static void
test_grants_become_one_credentials_entry(void **state)
{
	static const char *const ssh[] = { "github.com:22", "gitlab.com:22" };
	static const char *const gh[] = { "api.github.com:443", "github.com:443" };
	const struct render_grant grants[] = { { "ssh", ssh, 2 }, { "gh", gh, 2 } };
	struct render_spec spec = sam_spec();
	const struct policy_rule *r;
	struct policy *p;

	spec.grants = grants;
	spec.ngrants = 2;
	p = render_ok(&spec);
	assert_int_equal(p->nrules, 1);
	r = &p->rules[0];
	assert_string_equal(r->key, "credentials");
	assert_int_equal(r->nbinaries, 1);
	assert_string_equal(r->binaries[0].path, "/" "**");
	assert_true(r->any_binary);
	assert_int_equal(r->nendpoints, 3);
	assert_string_equal(r->endpoints[0].host.name, "github.com");
	assert_int_equal(r->endpoints[0].nports, 2);
	assert_int_equal(r->endpoints[0].ports[0], 22);
	assert_int_equal(r->endpoints[0].ports[1], 443);
	assert_string_equal(r->endpoints[1].host.name, "gitlab.com");
	assert_string_equal(r->endpoints[2].host.name, "api.github.com");
	assert_true(r->endpoints[2].sni_check);
	policy_free(p);
}

static void
test_grant_without_valid_port_is_refused(void **state)
{
	static const char *const bad[][1] = { { "github.com" }, { "github.com:0" },
	    { "github.com:65536" }, { "github.com:22x" }, { "github.com:" } };
	struct render_spec spec = sam_spec();
	struct render_grant grant = { "x", NULL, 1 };
	struct policy *p = NULL;
	size_t i;

	spec.grants = &grant;
	spec.ngrants = 1;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		grant.hosts = bad[i];
		assert_int_equal(render_policy(&spec, &p), RENDER_ERR_GRANT_PORT);
		assert_null(p);
	}
}

static void
test_grant_with_bad_host_is_refused(void **state)
{
	static const char *const bad[] = { "*.com:443" };
	const struct render_grant grant = { "x", bad, 1 };
	struct render_spec spec = sam_spec();
	struct policy *p = NULL;

	spec.grants = &grant;
	spec.ngrants = 1;
	assert_int_equal(render_policy(&spec, &p), RENDER_ERR_GRANT_HOST);
	assert_null(p);
}

static void
test_profile_credentials_key_is_refused(void **state)
{
	static const char *const hosts[] = { "github.com:22" };
	const struct render_grant grant = { "ssh", hosts, 1 };
	struct policy *profile = load_text(
	    "version: 1\n"
	    "network_policies:\n"
	    "  credentials:\n"
	    "    endpoints: [{host: example.com, port: 443}]\n"
	    "    binaries: [{path: /usr/bin/curl}]\n");
	struct render_spec spec = sam_spec();
	struct policy *p = NULL;

	spec.profile = profile;
	spec.grants = &grant;
	spec.ngrants = 1;
	assert_int_equal(render_policy(&spec, &p), RENDER_ERR_KEY_TAKEN);
	assert_null(p);
	policy_free(profile);
}

/* Parses TEXT with libyaml and fails on any anchor or alias event. */
static void
assert_no_anchor_or_alias(const char *text)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	bool done = false;
	size_t events = 0;

	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	while (!done) {
		assert_true(yaml_parser_parse(&parser, &ev));
		events++;
		assert_int_not_equal(ev.type, YAML_ALIAS_EVENT);
		if (ev.type == YAML_SCALAR_EVENT)
			assert_null(ev.data.scalar.anchor);
		if (ev.type == YAML_SEQUENCE_START_EVENT)
			assert_null(ev.data.sequence_start.anchor);
		if (ev.type == YAML_MAPPING_START_EVENT)
			assert_null(ev.data.mapping_start.anchor);
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	assert_true(events > 10);
}

/* A rendered sandbox policy with the standard-like profile and grants. */
static struct policy *
full_policy(struct policy **profile)
{
	static const char *const ssh[] = { "github.com:22", "gitlab.com:22" };
	static const struct render_grant grant = { "ssh", ssh, 2 };
	struct render_spec spec = sam_spec();

	*profile = load_text(profile_text);
	spec.profile = *profile;
	spec.grants = &grant;
	spec.ngrants = 1;
	spec.home = "/var/lib/corral/sandboxes/agent-7/home";
	return render_ok(&spec);
}

static void
test_yaml_has_no_anchor_or_alias(void **state)
{
	struct policy *profile, *p = full_policy(&profile);
	char *text = yaml_of(p);

	assert_no_anchor_or_alias(text);
	free(text);
	policy_free(p);
	policy_free(profile);
}

/* The top-level keys of TEXT, in order, joined with ' '. */
static void
top_keys(const char *text, char *out, size_t size)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int depth = 0;
	bool key = true, done = false;

	out[0] = '\0';
	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	while (!done) {
		assert_true(yaml_parser_parse(&parser, &ev));
		if (depth == 1 && (ev.type == YAML_SCALAR_EVENT ||
		    ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT)) {
			if (key && ev.type == YAML_SCALAR_EVENT) {
				strncat(out, (const char *)ev.data.scalar.value,
				    size - strlen(out) - 2);
				strcat(out, " ");
			}
			key = !key;
		}
		if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT)
			depth++;
		if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT)
			depth--;
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
}

static void
test_yaml_keys_follow_the_schema_order(void **state)
{
	struct policy *profile, *p = full_policy(&profile);
	char keys[256], *text;

	p->has_write_guard = true;
	free(p->write_guard_allowed_root);
	p->write_guard_allowed_root = strdup("workspace");
	p->write_guard_deny_reason = strdup("Writes must stay inside the workspace.");
	text = yaml_of(p);
	top_keys(text, keys, sizeof(keys));
	assert_string_equal(keys, "version filesystem_policy landlock process "
	    "network_policies write_guard ");
	free(text);
	policy_free(p);
	policy_free(profile);
}

/* Renders P as YAML, loads it back, and asserts the two are equal. */
static void
assert_round_trip(const struct policy *p)
{
	char *text = yaml_of(p);
	struct policy *back = load_text(text);

	if (!policy_equal(p, back))
		fail_msg("the loaded policy differs from the rendered one:\n%s", text);
	free(text);
	policy_free(back);
}

static void
test_render_then_load_is_equal(void **state)
{
	struct policy *profile, *p = full_policy(&profile);

	assert_round_trip(p);
	policy_free(p);
	policy_free(profile);
}

static void
test_every_feature_survives_a_round_trip(void **state)
{
	struct policy *p = load_text(
	    "version: 1\n"
	    "filesystem_policy:\n"
	    "  read_only: [/usr, \"/srv/odd: name\", \"/srv/#hash\", /srv/caf\xc3\xa9]\n"
	    "  read_write: []\n"
	    "landlock:\n"
	    "  compatibility: best_effort\n"
	    "network_policies:\n"
	    "  \"weird key\":\n"
	    "    name: \"true\"\n"
	    "    endpoints:\n"
	    "      - {host: \"*.example.com\", port: 443, sni_check: false}\n"
	    "      - {host: \"**.example.org\", ports: [443, 8443, 80]}\n"
	    "      - host: mirror.example.net\n"
	    "        port: 8080\n"
	    "        allowed_ips: [10.20.0.0/16, \"fd00:1::/64\"]\n"
	    "    binaries:\n"
	    "      - {path: \"/usr/lib/git-core/**\"}\n"
	    "      - {path: \"/usr/bin/python3*\"}\n"
	    "  empty:\n"
	    "    endpoints: [{host: a.example.com, port: 1}]\n"
	    "    binaries: []\n"
	    "write_guard:\n"
	    "  deny_reason: \"Stay here: really, a long reason that goes well past eighty "
	    "columns so that a folding emitter would break it.\"\n");

	assert_round_trip(p);
	policy_free(p);
}

static void
test_yaml_buffer_too_small_is_refused(void **state)
{
	struct render_spec spec = sam_spec();
	struct policy *p = render_ok(&spec);
	char small[16], big[8192];
	size_t len = 0;

	assert_int_equal(render_yaml_buffer(p, small, sizeof(small), &len), RENDER_ERR_TOO_BIG);
	assert_string_equal(small, "");
	assert_int_equal(render_yaml_buffer(p, big, sizeof(big), &len), RENDER_OK);
	assert_int_equal(strlen(big), len);
	assert_non_null(strstr(big, "version: 1\n"));
	policy_free(p);
}

static void
test_strerror_names_every_error(void **state)
{
	int e;

	for (e = RENDER_OK; e <= RENDER_ERR_TOO_BIG; e++)
		assert_string_not_equal(render_strerror((enum render_err)e),
		    "unknown render error");
	assert_string_equal(render_strerror((enum render_err)999), "unknown render error");
}

/* A comment line cannot be broken out of: control bytes become '?', a
 * byte that is not UTF-8 too, and the text is cut on a whole character. */
static void
test_a_comment_stays_one_line_of_text(void **state)
{
	char line[64], small[8];

	render_comment("owner of /a\nnetwork_policies: {}\r\t\x7f", line, sizeof(line));
	assert_string_equal(line, "# owner of /a?network_policies: {}???\n");
	render_comment("caf\xc3\xa9 \xff\xc3", line, sizeof(line));
	assert_string_equal(line, "# caf\xc3\xa9 ??\n");
	/* What YAML takes for a line break (NEL, U+2028, U+2029) or refuses
	 * (C1, a surrogate, an overlong form) is shown as '?' too. */
	render_comment("a\xc2\x85" "b\xe2\x80\xa8" "c\xe2\x80\xa9" "d\xc2\x9b" "e\xed\xa0\x80" "f",
	    line, sizeof(line));
	assert_string_equal(line, "# a?b?c?d?e???f\n");
	render_comment("\xe0\x80\xaf", line, sizeof(line));
	assert_string_equal(line, "# ???\n");
	render_comment("ab\xc3\xa9", small, 6);
	assert_string_equal(small, "# ab\n");
	render_comment("x", small, 2);
	assert_string_equal(small, "");
}

/* The rendered policy with a comment line before it loads as it was. */
static void
test_a_commented_policy_loads(void **state)
{
	struct render_spec spec = sam_spec();
	struct policy *p = render_ok(&spec), *q;
	char line[128], *yaml = NULL, *text;

	render_comment("run_as is the caller's\xe2\x80\xa8version: 2", line, sizeof(line));
	assert_int_equal(render_yaml(p, &yaml, NULL), RENDER_OK);
	text = malloc(strlen(line) + strlen(yaml) + 1);
	strcpy(text, line);
	strcat(text, yaml);
	q = load_text(text);
	assert_int_equal(q->version, p->version);
	policy_free(q);
	policy_free(p);
	free(yaml);
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writable_root_is_read_write_only),
		cmocka_unit_test(test_readonly_root_is_read_only_only),
		cmocka_unit_test(test_runtime_is_read_only),
		cmocka_unit_test(test_runtime_dir_can_be_given),
		cmocka_unit_test(test_system_dirs_are_read_only_and_tmp_writable),
		cmocka_unit_test(test_nothing_else_under_home),
		cmocka_unit_test(test_landlock_is_hard_requirement),
		cmocka_unit_test(test_process_runs_as_uid_and_gid),
		cmocka_unit_test(test_uid_or_gid_zero_is_refused),
		cmocka_unit_test(test_home_is_read_write),
		cmocka_unit_test(test_root_path_is_normalized),
		cmocka_unit_test(test_relative_or_dotdot_root_is_refused),
		cmocka_unit_test(test_writable_system_root_is_read_write_only),
		cmocka_unit_test(test_profile_entries_are_copied),
		cmocka_unit_test(test_grants_become_one_credentials_entry),
		cmocka_unit_test(test_grant_without_valid_port_is_refused),
		cmocka_unit_test(test_grant_with_bad_host_is_refused),
		cmocka_unit_test(test_profile_credentials_key_is_refused),
		cmocka_unit_test(test_yaml_has_no_anchor_or_alias),
		cmocka_unit_test(test_yaml_keys_follow_the_schema_order),
		cmocka_unit_test(test_render_then_load_is_equal),
		cmocka_unit_test(test_every_feature_survives_a_round_trip),
		cmocka_unit_test(test_yaml_buffer_too_small_is_refused),
		cmocka_unit_test(test_strerror_names_every_error),
		cmocka_unit_test(test_a_comment_stays_one_line_of_text),
		cmocka_unit_test(test_a_commented_policy_loads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
