/* policy/suggest.c: the smallest additions that would have allowed a
 * sandbox's refusals. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "policy/suggest.h"

#define MAX 16
#define PY "/usr/bin/python3.11"
#define CURL "/usr/bin/curl"

static void
test_one_per_host_port_and_binary_counted(void **state)
{
	const struct suggest_denial d[] = {
		{ "example.com", 443, CURL, "host_not_allowed", 2 },
		{ "example.com", 443, CURL, "host_not_allowed", 1 },
		{ "example.com", 80, CURL, "host_not_allowed", 1 },
		{ "example.com", 443, PY, "binary_not_allowed", 1 },
	};
	struct suggestion s[MAX];

	(void)state;
	assert_int_equal(suggest_make(d, 4, s, MAX), 3);
	assert_string_equal(s[0].host, "example.com");
	assert_int_equal(s[0].port, 443);
	assert_string_equal(s[0].binary, CURL);
	assert_int_equal(s[0].denials, 3);
	assert_false(s[0].wildcard);
	assert_int_equal(s[1].port, 80);
	assert_string_equal(s[2].binary, PY);
	assert_string_equal(s[0].risk, "this host and port, for this program only");
}

static void
test_what_no_entry_would_allow_is_left_out(void **state)
{
	const struct suggest_denial d[] = {
		{ "198.18.1.1", 9, NULL, "udp_not_allowed", 1 },
		{ "1.2.3.4", 443, CURL, "ip_literal_not_allowed", 1 },
		{ "/run/docker.sock", 0, NULL, "unix_socket_not_allowed", 1 },
		{ "evil.com", 0, NULL, "host_not_allowed", 1 },          /* a DNS refusal */
		{ "", 443, CURL, "host_not_allowed", 1 },
	};
	struct suggestion s[MAX];

	(void)state;
	assert_int_equal(suggest_make(d, 5, s, MAX), 0);
}

static void
test_two_names_under_one_domain_give_a_wildcard(void **state)
{
	const struct suggest_denial d[] = {
		{ "a.cdn.example.com", 443, CURL, "host_not_allowed", 1 },
		{ "b.cdn.example.com", 443, CURL, "host_not_allowed", 2 },
		{ "pypi.org", 443, PY, "host_not_allowed", 1 },
		{ "files.pythonhosted.org", 443, PY, "host_not_allowed", 1 },
	};
	struct suggestion s[MAX];

	(void)state;
	assert_int_equal(suggest_make(d, 4, s, MAX), 3);
	/* The narrowest that covers both: one label under cdn.example.com. */
	assert_string_equal(s[0].host, "*.cdn.example.com");
	assert_true(s[0].wildcard);
	assert_int_equal(s[0].denials, 3);
	assert_string_equal(s[0].risk, "every name one label under cdn.example.com on port 443");
	/* pypi.org and pythonhosted.org are two domains: two exact entries. */
	assert_string_equal(s[1].host, "pypi.org");
	assert_string_equal(s[2].host, "files.pythonhosted.org");
}

static void
test_names_at_several_depths_take_a_deep_wildcard_and_the_apex_stays(void **state)
{
	const struct suggest_denial d[] = {
		{ "api.example.com", 443, CURL, "host_not_allowed", 1 },
		{ "a.b.example.com", 443, CURL, "host_not_allowed", 1 },
		{ "example.com", 443, CURL, "host_not_allowed", 1 },
	};
	struct suggestion s[MAX];

	(void)state;
	assert_int_equal(suggest_make(d, 3, s, MAX), 2);
	assert_string_equal(s[0].host, "**.example.com");
	assert_int_equal(s[0].denials, 2);
	assert_string_equal(s[1].host, "example.com");
	assert_false(s[1].wildcard);
}

static void
test_never_a_wildcard_over_a_public_suffix(void **state)
{
	const struct suggest_denial d[] = {
		{ "alice.github.io", 443, CURL, "host_not_allowed", 1 },
		{ "bob.github.io", 443, CURL, "host_not_allowed", 1 },
		{ "x.co.uk", 443, CURL, "host_not_allowed", 1 },
		{ "y.co.uk", 443, CURL, "host_not_allowed", 1 },
	};
	struct suggestion s[MAX];

	(void)state;
	assert_int_equal(suggest_make(d, 4, s, MAX), 4);
	for (int i = 0; i < 4; i++)
		assert_false(s[i].wildcard);
	assert_string_equal(s[0].host, "alice.github.io");
	assert_string_equal(s[3].host, "y.co.uk");
}

static void
test_other_binaries_or_ports_do_not_widen(void **state)
{
	const struct suggest_denial d[] = {
		{ "a.example.com", 443, CURL, "host_not_allowed", 1 },
		{ "b.example.com", 443, PY, "host_not_allowed", 1 },
		{ "c.example.com", 80, CURL, "host_not_allowed", 1 },
		{ "a.example.com", 443, CURL, "host_not_allowed", 1 },
	};
	struct suggestion s[MAX];

	(void)state;
	assert_int_equal(suggest_make(d, 4, s, MAX), 3);
	assert_false(s[0].wildcard);
	assert_int_equal(s[0].denials, 2);
	assert_false(s[1].wildcard);
	assert_false(s[2].wildcard);
}

static void
test_an_unknown_binary_says_any_program(void **state)
{
	const struct suggest_denial d[] = { { "example.com", 443, "", "host_not_allowed", 1 } };
	struct suggestion s[1];

	(void)state;
	assert_int_equal(suggest_make(d, 1, s, 1), 1);
	assert_string_equal(s[0].binary, "");
	assert_string_equal(s[0].risk, "any program of the sandbox, to this host only");
}

static void
test_output_is_bounded(void **state)
{
	const struct suggest_denial d[] = {
		{ "a.org", 443, CURL, "host_not_allowed", 1 },
		{ "b.org", 443, CURL, "host_not_allowed", 1 },
		{ "a.org", 443, CURL, "host_not_allowed", 4 },
	};
	struct suggestion s[1];

	(void)state;
	assert_int_equal(suggest_make(d, 3, s, 1), 1);
	assert_string_equal(s[0].host, "a.org");
	assert_int_equal(s[0].denials, 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_per_host_port_and_binary_counted),
		cmocka_unit_test(test_what_no_entry_would_allow_is_left_out),
		cmocka_unit_test(test_two_names_under_one_domain_give_a_wildcard),
		cmocka_unit_test(test_names_at_several_depths_take_a_deep_wildcard_and_the_apex_stays),
		cmocka_unit_test(test_never_a_wildcard_over_a_public_suffix),
		cmocka_unit_test(test_other_binaries_or_ports_do_not_widen),
		cmocka_unit_test(test_an_unknown_binary_says_any_program),
		cmocka_unit_test(test_output_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
