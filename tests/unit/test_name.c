/* Sandbox names: ^[a-z0-9][a-z0-9-]{0,62}$. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "policy/name.h"

/* A name of LEN copies of C, in BUF (at least LEN + 1 bytes). */
static const char *
repeat(char *buf, char c, size_t len)
{
	memset(buf, c, len);
	buf[len] = '\0';
	return buf;
}

static void
test_simple_names_are_valid(void **state)
{
	assert_true(policy_name_valid("a"));
	assert_true(policy_name_valid("0"));
	assert_true(policy_name_valid("agent-7"));
	assert_true(policy_name_valid("my-box-2"));
	assert_true(policy_name_valid("9-lives"));
}

static void
test_empty_and_null_are_invalid(void **state)
{
	assert_false(policy_name_valid(""));
	assert_false(policy_name_valid(NULL));
	assert_string_equal(policy_name_error(""), "is empty");
}

static void
test_63_characters_are_valid(void **state)
{
	char buf[64];

	assert_true(policy_name_valid(repeat(buf, 'a', 63)));
	assert_null(policy_name_error(buf));
}

static void
test_64_characters_are_invalid(void **state)
{
	char buf[65];

	assert_false(policy_name_valid(repeat(buf, 'a', 64)));
	assert_string_equal(policy_name_error(buf), "is longer than 63 characters");
}

static void
test_uppercase_is_invalid(void **state)
{
	assert_false(policy_name_valid("Agent"));
	assert_false(policy_name_valid("agEnt"));
}

static void
test_leading_hyphen_is_invalid(void **state)
{
	assert_false(policy_name_valid("-a"));
	assert_string_equal(policy_name_error("-rf"),
	    "must start with a lower-case letter or a digit");
}

static void
test_trailing_hyphen_is_valid(void **state)
{
	assert_true(policy_name_valid("a-"));
}

static void
test_path_like_names_are_invalid(void **state)
{
	assert_false(policy_name_valid("../.."));
	assert_false(policy_name_valid("a/b"));
	assert_false(policy_name_valid(".hidden"));
	assert_false(policy_name_valid("a.b"));
}

static void
test_other_characters_are_invalid(void **state)
{
	static const char *const bad[] = {
		"a_b", "a b", "a\n", "caf\xc3\xa9", "a*", "a:b", "a\t",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(policy_name_valid(bad[i]));
		assert_string_equal(policy_name_error(bad[i]),
		    "may hold only lower-case letters, digits and '-'");
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_names_are_valid),
		cmocka_unit_test(test_empty_and_null_are_invalid),
		cmocka_unit_test(test_63_characters_are_valid),
		cmocka_unit_test(test_64_characters_are_invalid),
		cmocka_unit_test(test_uppercase_is_invalid),
		cmocka_unit_test(test_leading_hyphen_is_invalid),
		cmocka_unit_test(test_trailing_hyphen_is_valid),
		cmocka_unit_test(test_path_like_names_are_invalid),
		cmocka_unit_test(test_other_characters_are_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
