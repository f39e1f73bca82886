/* Profiles: the shipped ones (conf/profiles under $top_srcdir), lookup by
 * name, and the refusals. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "policy/match.h"
#include "policy/profile.h"

/* corral-policy(5), "PROFILES", word for word. */
static const char *const strict_hosts[] = {
	"github.com", "api.github.com", "codeload.github.com",
	"objects.githubusercontent.com", "raw.githubusercontent.com", "gitlab.com",
	"pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "crates.io",
	"static.crates.io", "index.crates.io", "proxy.golang.org", "sum.golang.org",
};
static const char *const search_hosts[] = {
	"api.search.brave.com", "api.tavily.com", "html.duckduckgo.com", "duckduckgo.com",
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static char profiles_dir[4096];

static int
setup(void **state)
{
	const char *top = getenv("top_srcdir");

	snprintf(profiles_dir, sizeof(profiles_dir), "%s/conf/profiles",
	    top != NULL ? top : ".");
	return 0;
}

static struct policy *
load_profile(const char *name)
{
	struct policy_diags diags;
	struct policy *p = NULL;
	char *message = NULL, *shown;

	policy_diags_init(&diags);
	if (profile_load(profiles_dir, name, &p, &diags, &message) != PROFILE_OK) {
		shown = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE);
		print_error("%s\n%s", message != NULL ? message : "?",
		    shown != NULL ? shown : "");
		free(shown);
	}
	free(message);
	policy_diags_clear(&diags);
	assert_non_null(p);
	return p;
}

/* True when some endpoint of P is the exact host NAME. */
static bool
has_host(const struct policy *p, const char *name)
{
	size_t i, j;

	for (i = 0; i < p->nrules; i++)
		for (j = 0; j < p->rules[i].nendpoints; j++)
			if (p->rules[i].endpoints[j].host.kind == POLICY_HOST_EXACT &&
			    strcmp(p->rules[i].endpoints[j].host.name, name) == 0)
				return true;
	return false;
}

/* Asserts that P's hosts are exactly A plus B (as sets), all exact and on :443 only. */
static void
assert_exact_hosts(const struct policy *p, const char *const *a, size_t na,
    const char *const *b, size_t nb)
{
	size_t i, j, k, found = 0;

	for (i = 0; i < p->nrules; i++) {
		for (j = 0; j < p->rules[i].nendpoints; j++) {
			const struct policy_endpoint *e = &p->rules[i].endpoints[j];
			bool listed = false;

			assert_int_equal(e->host.kind, POLICY_HOST_EXACT);
			assert_int_equal(e->nports, 1);
			assert_int_equal(e->ports[0], 443);
			for (k = 0; k < na; k++)
				listed = listed || strcmp(e->host.name, a[k]) == 0;
			for (k = 0; k < nb; k++)
				listed = listed || strcmp(e->host.name, b[k]) == 0;
			if (!listed)
				fail_msg("host %s is not in the documented list", e->host.name);
			found++;
		}
	}
	for (k = 0; k < na; k++)
		if (!has_host(p, a[k]))
			fail_msg("host %s is missing", a[k]);
	for (k = 0; k < nb; k++)
		if (!has_host(p, b[k]))
			fail_msg("host %s is missing", b[k]);
	/* No host listed twice either. */
	assert_int_equal(found, na + nb);
}

static void
test_strict_reaches_code_hosts_and_registries(void **state)
{
	struct policy *p = load_profile("strict");

	assert_true(has_host(p, "github.com"));
	assert_true(has_host(p, "pypi.org"));
	assert_true(has_host(p, "registry.npmjs.org"));
	policy_free(p);
}

static void
test_tavily_is_in_standard_not_strict(void **state)
{
	struct policy *strict = load_profile("strict");
	struct policy *standard = load_profile("standard");

	assert_false(has_host(strict, "api.tavily.com"));
	assert_true(has_host(standard, "api.tavily.com"));
	policy_free(strict);
	policy_free(standard);
}

static void
test_strict_has_exactly_the_documented_hosts(void **state)
{
	struct policy *p = load_profile("strict");

	assert_exact_hosts(p, strict_hosts, COUNT(strict_hosts), NULL, 0);
	policy_free(p);
}

static void
test_standard_has_exactly_the_documented_hosts(void **state)
{
	struct policy *p = load_profile("standard");

	assert_exact_hosts(p, strict_hosts, COUNT(strict_hosts), search_hosts,
	    COUNT(search_hosts));
	policy_free(p);
}

/* Asserts that every entry of profile NAME names binaries, none matching every binary. */
static void
assert_entries_name_binaries(const char *name)
{
	struct policy *p = load_profile(name);
	size_t i, j;

	assert_true(p->nrules > 0);
	for (i = 0; i < p->nrules; i++) {
		if (p->rules[i].nbinaries == 0)
			fail_msg("%s: entry %s has no binaries", name, p->rules[i].key);
		assert_false(p->rules[i].any_binary);
		for (j = 0; j < p->rules[i].nbinaries; j++)
			assert_int_equal(match_binary_check(p->rules[i].binaries[j].path), MATCH_OK);
	}
	policy_free(p);
}

static void
test_every_entry_names_its_binaries(void **state)
{
	assert_entries_name_binaries("strict");
	assert_entries_name_binaries("standard");
}

static void
test_profiles_hold_network_policies_only(void **state)
{
	struct policy *p = load_profile("standard");

	assert_int_equal(p->read_only.npaths, 0);
	assert_int_equal(p->read_write.npaths, 0);
	assert_false(p->has_process);
	policy_free(p);
}

static void
test_standard_keeps_stricts_entries(void **state)
{
	struct policy *strict = load_profile("strict");
	struct policy *standard = load_profile("standard");
	struct policy *trimmed;

	/* standard = strict + web_search: drop its last entry and compare. */
	assert_int_equal(standard->nrules, strict->nrules + 1);
	assert_string_equal(standard->rules[standard->nrules - 1].key, "web_search");
	trimmed = policy_dup(standard);
	assert_non_null(trimmed);
	trimmed->nrules--;
	assert_true(policy_equal(strict, trimmed));
	trimmed->nrules++;
	policy_free(trimmed);
	policy_free(strict);
	policy_free(standard);
}

static void
test_unknown_profile_lists_the_known_ones(void **state)
{
	struct policy *p = NULL;
	char *message = NULL;

	assert_int_equal(profile_load(profiles_dir, "wide-open", &p, NULL, &message),
	    PROFILE_ERR_UNKNOWN);
	assert_null(p);
	assert_non_null(message);
	assert_string_equal(message, "unknown profile 'wide-open' (known: standard, strict)");
	free(message);
}

static void
test_profile_list_is_sorted(void **state)
{
	struct profile_list list = { 0 };

	assert_int_equal(profile_list(profiles_dir, &list), PROFILE_OK);
	assert_int_equal(list.count, 2);
	assert_string_equal(list.names[0], "standard");
	assert_string_equal(list.names[1], "strict");
	profile_list_clear(&list);
	assert_null(list.names);
}

static void
test_path_like_profile_name_is_refused(void **state)
{
	static const char *const bad[] = { "../strict", "a/b", "..", "", "Strict", "strict.yaml" };
	struct policy *p = NULL;
	char *message = NULL;
	size_t i;

	for (i = 0; i < COUNT(bad); i++) {
		assert_int_equal(profile_load(profiles_dir, bad[i], &p, NULL, &message),
		    PROFILE_ERR_BAD_NAME);
		assert_null(p);
		assert_non_null(strstr(message, "invalid profile name"));
		free(message);
	}
}

static void
test_invalid_name_is_shown_escaped(void **state)
{
	struct policy *p = NULL;
	char *message = NULL;

	assert_int_equal(profile_load(profiles_dir, "a\nb", &p, NULL, &message),
	    PROFILE_ERR_BAD_NAME);
	assert_string_equal(message, "invalid profile name 'a?b': it may hold only "
	    "lower-case letters, digits and '-'");
	free(message);
}

/* A fresh folder holding FILE with TEXT (mode 0644); its path in DIR. */
static void
make_dir_with(char *dir, size_t size, const char *file, const char *text)
{
	char path[4200];
	FILE *f;

	snprintf(dir, size, "/tmp/test_profile.XXXXXX");
	assert_non_null(mkdtemp(dir));
	if (file == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0644), 0);
}

static void
remove_dir_with(const char *dir, const char *file)
{
	char path[4200];

	if (file != NULL) {
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		unlink(path);
	}
	rmdir(dir);
}

static void
test_broken_profile_gives_the_loaders_errors(void **state)
{
	struct policy_diags diags;
	struct policy *p = NULL;
	char dir[64], *message = NULL;

	make_dir_with(dir, sizeof(dir), "broken.yaml",
	    "version: 1\nnetwork_policies:\n  x:\n    endpoints: [{host: a.example.com, port: 70000}]\n"
	    "    binaries: [{path: /usr/bin/curl}]\n");
	policy_diags_init(&diags);
	assert_int_equal(profile_load(dir, "broken", &p, &diags, &message), PROFILE_ERR_LOAD);
	assert_null(p);
	assert_non_null(strstr(message, "profile 'broken'"));
	assert_true(diags.count > 0);
	assert_int_equal(diags.items[0].line, 4);
	assert_non_null(strstr(diags.items[0].file, "broken.yaml"));
	policy_diags_clear(&diags);
	free(message);
	remove_dir_with(dir, "broken.yaml");
}

static void
test_profile_set_holds_every_profile(void **state)
{
	struct profile_set *set = NULL;
	char *message = NULL;

	assert_int_equal(profile_set_load(profiles_dir, &set, NULL, &message), PROFILE_OK);
	assert_null(message);
	assert_int_equal(set->names.count, 2);
	assert_non_null(profile_set_find(set, profiles_dir, "strict", NULL));
	assert_non_null(profile_set_find(set, profiles_dir, "standard", NULL));
	assert_null(profile_set_find(set, profiles_dir, "wide-open", &message));
	assert_string_equal(message, "unknown profile 'wide-open' (known: standard, strict)");
	free(message);
	assert_null(profile_set_find(set, profiles_dir, "../strict", &message));
	assert_non_null(strstr(message, "invalid profile name"));
	free(message);
	profile_set_free(set);
}

static void
test_profile_set_is_all_or_nothing(void **state)
{
	struct policy_diags diags;
	struct profile_set *set = NULL;
	char dir[64], *message = NULL;

	make_dir_with(dir, sizeof(dir), "broken.yaml",
	    "version: 1\nnetwork_policies:\n  x:\n    endpoints: [{host: a.example.com, port: 70000}]\n"
	    "    binaries: [{path: /usr/bin/curl}]\n");
	policy_diags_init(&diags);
	assert_int_equal(profile_set_load(dir, &set, &diags, &message), PROFILE_ERR_LOAD);
	assert_null(set);
	assert_non_null(strstr(message, "profile 'broken'"));
	assert_true(diags.count > 0 && diags.items[0].line == 4);
	policy_diags_clear(&diags);
	free(message);
	remove_dir_with(dir, "broken.yaml");
	assert_int_equal(profile_set_load("/nonexistent/corral/profiles", &set, NULL, &message),
	    PROFILE_ERR_DIR);
	assert_null(set);
	free(message);
}

static void
test_empty_folder_says_it_has_no_profiles(void **state)
{
	struct policy *p = NULL;
	char dir[64], *message = NULL, expected[160];

	make_dir_with(dir, sizeof(dir), NULL, NULL);
	assert_int_equal(profile_load(dir, "strict", &p, NULL, &message), PROFILE_ERR_UNKNOWN);
	snprintf(expected, sizeof(expected),
	    "unknown profile 'strict' (there are no profiles in %s)", dir);
	assert_string_equal(message, expected);
	free(message);
	remove_dir_with(dir, NULL);
}

static void
test_missing_folder_is_an_error(void **state)
{
	struct policy *p = NULL;
	char *message = NULL;

	assert_int_equal(profile_load("/nonexistent/corral/profiles", "strict", &p, NULL,
	    &message), PROFILE_ERR_DIR);
	assert_non_null(strstr(message, "/nonexistent/corral/profiles"));
	free(message);
}

static void
test_default_folder_is_under_sysconfdir(void **state)
{
	assert_string_equal(profile_dir_default(), SYSCONFDIR "/corral/profiles");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strict_reaches_code_hosts_and_registries),
		cmocka_unit_test(test_profile_set_holds_every_profile),
		cmocka_unit_test(test_profile_set_is_all_or_nothing),
		cmocka_unit_test(test_tavily_is_in_standard_not_strict),
		cmocka_unit_test(test_strict_has_exactly_the_documented_hosts),
		cmocka_unit_test(test_standard_has_exactly_the_documented_hosts),
		cmocka_unit_test(test_every_entry_names_its_binaries),
		cmocka_unit_test(test_profiles_hold_network_policies_only),
		cmocka_unit_test(test_standard_keeps_stricts_entries),
		cmocka_unit_test(test_unknown_profile_lists_the_known_ones),
		cmocka_unit_test(test_profile_list_is_sorted),
		cmocka_unit_test(test_path_like_profile_name_is_refused),
		cmocka_unit_test(test_invalid_name_is_shown_escaped),
		cmocka_unit_test(test_broken_profile_gives_the_loaders_errors),
		cmocka_unit_test(test_empty_folder_says_it_has_no_profiles),
		cmocka_unit_test(test_missing_folder_is_an_error),
		cmocka_unit_test(test_default_folder_is_under_sysconfdir),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
