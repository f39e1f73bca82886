/* Secrets: the kinds, sources and values of policy/secret.c, and the
 * locked store of egress-proxy/secretstore.c. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "egress-proxy/secretstore.h"
#include "policy/secret.h"

#define GH_VALUE "gho_16C7e42F292c6912E7710c838347Ae178B4a"

static void
test_builtin_gh_kind(void **state)
{
	struct secret_kind k;

	(void)state;
	assert_int_equal(secret_find("gh", NULL, 0, &k), 0);
	assert_string_equal(k.from, "gh-hosts");
	assert_int_equal(k.nhosts, 2);
	assert_string_equal(k.hosts[0], "api.github.com:443");
	assert_string_equal(k.hosts[1], "github.com:443");
	assert_string_equal(k.env[0], "GH_TOKEN");
	assert_true(k.builtin);
	assert_int_equal(secret_find("nope", NULL, 0, &k), -1);
	assert_true(secret_is_builtin("gh"));
	assert_false(secret_is_builtin("npm"));
}

static void
test_config_kinds_come_after_builtin_ones(void **state)
{
	static const char *const hosts[] = { "registry.npmjs.org:443" };
	struct secret_kind extra[] = { { "npm", "env:NPM", hosts, 1, NULL, 0, NULL, 0, false } };
	struct secret_kind k;

	(void)state;
	assert_int_equal(secret_find("npm", extra, 1, &k), 0);
	assert_string_equal(k.from, "env:NPM");
	assert_int_equal(secret_find("gh", extra, 1, &k), 0);
	assert_true(k.builtin);
}

static void
test_sources_are_parsed_and_refused_by_name(void **state)
{
	struct secret_source src;

	(void)state;
	assert_null(secret_source_parse("env:NPM_TOKEN", &src));
	assert_int_equal(src.from, SECRET_FROM_ENV);
	assert_string_equal(src.arg, "NPM_TOKEN");
	assert_null(secret_source_parse("file:${HOME}/.token", &src));
	assert_int_equal(src.from, SECRET_FROM_FILE);
	assert_string_equal(src.arg, "${HOME}/.token");
	assert_null(secret_source_parse("gh-hosts", &src));
	assert_int_equal(src.from, SECRET_FROM_GH_HOSTS);
	assert_string_equal(secret_source_parse("env:", &src), "names no variable (env:NAME)");
	assert_non_null(strstr(secret_source_parse("env:1X", &src), "is not env:NAME"));
	assert_non_null(strstr(secret_source_parse("env:A-B", &src), "is not env:NAME"));
	assert_string_equal(secret_source_parse("file:", &src), "names no file (file:PATH)");
	assert_non_null(strstr(secret_source_parse("file:a\nb", &src), "control character"));
	assert_non_null(strstr(secret_source_parse("vault:x", &src), "is not a source"));
}

static void
test_values_are_one_word_of_printable_ascii(void **state)
{
	char big[SECRET_VALUE_MAX_BYTES + 2];

	(void)state;
	assert_null(secret_value_check(GH_VALUE, strlen(GH_VALUE)));
	assert_null(secret_value_check("p@ss:w0rd!12", 12));
	assert_string_equal(secret_value_check("", 0), "is empty");
	assert_non_null(strstr(secret_value_check("p@ss:w0rd!", 10), "shorter than 12 bytes"));
	assert_non_null(secret_value_check("two words", 9));
	assert_non_null(secret_value_check("line\n", 5));
	assert_non_null(secret_value_check("nul\0x", 5));
	assert_non_null(secret_value_check("caf\xc3\xa9", 5));
	memset(big, 'a', sizeof(big));
	assert_null(secret_value_check(big, SECRET_VALUE_MAX_BYTES));
	assert_non_null(secret_value_check(big, SECRET_VALUE_MAX_BYTES + 1));
	assert_int_equal(secret_value_trim("tok\n", 4), 3);
	assert_int_equal(secret_value_trim("tok\r\n", 5), 3);
	assert_int_equal(secret_value_trim("tok", 3), 3);
	assert_int_equal(secret_value_trim("tok\n\n", 5), 4);
}

/* gh's hosts.yml TEXT gives TOKEN (NULL: none, with WHY holding NEEDLE). */
static void
assert_gh_token(const char *text, const char *token, const char *needle)
{
	const char *why = NULL;
	char *got = NULL;
	int rc = secret_gh_token(text, strlen(text), &got, &why);

	if (token != NULL) {
		assert_int_equal(rc, 0);
		assert_string_equal(got, token);
	} else {
		assert_int_equal(rc, -1);
		assert_null(got);
		assert_non_null(strstr(why, needle));
	}
	free(got);
}

static void
test_gh_hosts_token_is_read(void **state)
{
	(void)state;
	assert_gh_token("github.com:\n    oauth_token: " GH_VALUE "\n    user: octo\n", GH_VALUE,
	    NULL);
	/* gh 2.40 and later: one per account, the active one named by user. */
	assert_gh_token("github.com:\n    users:\n        other:\n            oauth_token: gho_x\n"
	    "        octo:\n            oauth_token: " GH_VALUE "\n    user: octo\n", GH_VALUE, NULL);
	assert_gh_token("ghe.example.com:\n    oauth_token: gho_other\n", NULL,
	    "no oauth_token for github.com");
	assert_gh_token("github.com:\n    user: octo\n", NULL, "keyring");
	assert_gh_token("github.com: [unclosed\n", NULL, "not YAML that gh wrote");
	assert_gh_token("a: &x 1\nb: *x\n", NULL, "not YAML that gh wrote");
}

static void
test_gh_writes_hosts_yml_and_netrc_with_the_placeholder(void **state)
{
	struct secret_file files[SECRET_FILES_MAX];
	const char *const *extra = secret_extra_env("gh");

	(void)state;
	assert_int_equal(secret_files("gh", "gho_PLACEHOLDER", files), 2);
	assert_string_equal(files[0].path, ".config/gh/hosts.yml");
	assert_non_null(strstr(files[0].content, "github.com:\n    oauth_token: gho_PLACEHOLDER\n"));
	assert_string_equal(files[1].path, ".netrc");
	assert_non_null(strstr(files[1].content,
	    "machine github.com login x-access-token password gho_PLACEHOLDER\n"));
	secret_files_clear(files, 2);
	assert_int_equal(secret_files("npm", "x", files), 0);
	assert_string_equal(extra[0], "GH_CONFIG_DIR=${HOME}/.config/gh");
	assert_null(extra[1]);
	assert_null(secret_extra_env("npm")[0]);
}

/* ASan makes mlock do nothing: under it what is locked cannot be seen. */
#if defined(__SANITIZE_ADDRESS__)
#define LOCKS_SHOW 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOCKS_SHOW 0
#endif
#endif
#ifndef LOCKS_SHOW
#define LOCKS_SHOW 1
#endif

/* How many kB of this process's memory are locked. */
static long
locked_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return kb;
}

static void
test_store_keeps_values_locked_with_placeholders(void **state)
{
	static const char *const gh_hosts[] = { "api.github.com:443", "github.com:443" };
	static const char *const npm_hosts[] = { "registry.npmjs.org:443" };
	static const char *const headers[] = { "X-Api-Key" };
	struct secretstore_entry e[] = {
		{ "gh", GH_VALUE, gh_hosts, 2, NULL, 0 },
		{ "npm", "npm_abcdefghijklmnopqrstuvwxyz0123456789", npm_hosts, 1, headers, 1 },
	};
	long before = locked_kb();
	char *err = NULL;
	struct secretstore *s = secretstore_new(e, 2, &err);
	const struct secretsub_secret *v;
	const char *const *hosts;
	size_t n;

	(void)state;
	assert_non_null(s);
	assert_true(!LOCKS_SHOW || locked_kb() > before);
	v = secretstore_secrets(s, &n);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "gh");
	assert_string_equal(v[0].value, GH_VALUE);
	assert_ptr_not_equal(v[0].value, GH_VALUE);     /* a copy, in the store */
	assert_int_equal(strlen(v[0].placeholder), strlen(GH_VALUE));
	assert_memory_equal(v[0].placeholder, "gho_", 4);
	assert_string_not_equal(v[0].placeholder, GH_VALUE);
	assert_string_equal(v[0].hosts[1], "github.com:443");
	assert_string_equal(v[0].headers[0], "Authorization");
	assert_string_equal(v[1].headers[0], "X-Api-Key");
	/* The value and its base64 at three alignments, in the store too;
	 * none of its escapes, each of which leaves it as it is. */
	assert_int_equal(v[0].nechoes, 4);
	assert_string_equal(v[0].echoes[0], GH_VALUE);
	assert_true(secretstore_covers(s, "api.github.com", 443));
	assert_true(secretstore_covers(s, "GitHub.com", 443));
	assert_false(secretstore_covers(s, "github.com", 22));
	assert_false(secretstore_covers(s, "evil.com", 443));
	hosts = secretstore_hosts(s, 1, &n);
	assert_int_equal(n, 1);
	assert_string_equal(hosts[0], "registry.npmjs.org:443");
	secretstore_free(s);
	assert_int_equal(locked_kb(), before);
}

static void
test_store_refuses_what_it_cannot_keep(void **state)
{
	static const char *const hosts[] = { "api.github.com" };
	struct secretstore_entry e[] = { { "gh", GH_VALUE, hosts, 1, NULL, 0 } };
	struct secretstore_entry bad[] = { { "gh", "two words", hosts, 1, NULL, 0 } };
	char *err = NULL;

	(void)state;
	assert_null(secretstore_new(e, 1, &err));
	assert_non_null(strstr(err, "is not HOST:PORT"));
	free(err);
	err = NULL;
	assert_null(secretstore_new(bad, 1, &err));
	assert_non_null(strstr(err, "printable ASCII"));
	free(err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_gh_kind),
		cmocka_unit_test(test_config_kinds_come_after_builtin_ones),
		cmocka_unit_test(test_sources_are_parsed_and_refused_by_name),
		cmocka_unit_test(test_values_are_one_word_of_printable_ascii),
		cmocka_unit_test(test_gh_hosts_token_is_read),
		cmocka_unit_test(test_gh_writes_hosts_yml_and_netrc_with_the_placeholder),
		cmocka_unit_test(test_store_keeps_values_locked_with_placeholders),
		cmocka_unit_test(test_store_refuses_what_it_cannot_keep),
	};

	return cmocka_run_group_tests_name("secret", tests, NULL, NULL);
}
