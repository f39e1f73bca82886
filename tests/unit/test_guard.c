/* The write guard: absolute and ".." paths refused, with exact messages. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "policy/guard.h"

#define ROOT "/home/sam/code/app"

/* Asserts that guard_message() for VERDICT and PATH is EXPECTED. */
static void
assert_message(enum guard_verdict verdict, const char *reason, const char *root,
    const char *path, const char *expected)
{
	char *msg = guard_message(verdict, reason, root, path);

	assert_non_null(msg);
	assert_string_equal(msg, expected);
	free(msg);
}

static void
test_relative_path_is_allowed(void **state)
{
	assert_int_equal(guard_check("notes/a.md"), GUARD_ALLOW);
	assert_int_equal(guard_check("a.md"), GUARD_ALLOW);
	assert_null(guard_message(GUARD_ALLOW, NULL, ROOT, "notes/a.md"));
}

static void
test_dot_segments_and_dotted_names_are_allowed(void **state)
{
	assert_int_equal(guard_check("./a.md"), GUARD_ALLOW);
	assert_int_equal(guard_check("..a/b"), GUARD_ALLOW);
	assert_int_equal(guard_check("a/b..c"), GUARD_ALLOW);
	assert_int_equal(guard_check("a/.../b"), GUARD_ALLOW);
}

static void
test_absolute_path_is_refused(void **state)
{
	assert_int_equal(guard_check("/etc/passwd"), GUARD_REFUSE_ABSOLUTE);
	assert_int_equal(guard_check(ROOT "/notes/a.md"), GUARD_REFUSE_ABSOLUTE);
}

static void
test_dotdot_path_is_refused(void **state)
{
	assert_int_equal(guard_check(".."), GUARD_REFUSE_DOTDOT);
	assert_int_equal(guard_check("../x"), GUARD_REFUSE_DOTDOT);
	assert_int_equal(guard_check("a/.."), GUARD_REFUSE_DOTDOT);
	assert_int_equal(guard_check("a/../b"), GUARD_REFUSE_DOTDOT);
}

static void
test_dotdot_that_climbs_out_is_refused(void **state)
{
	assert_int_equal(guard_check("a/../../x"), GUARD_REFUSE_DOTDOT);
}

static void
test_empty_path_is_refused(void **state)
{
	assert_int_equal(guard_check(""), GUARD_REFUSE_EMPTY);
	assert_int_equal(guard_check(NULL), GUARD_REFUSE_EMPTY);
}

static void
test_control_character_is_refused(void **state)
{
	assert_int_equal(guard_check("a\nb"), GUARD_REFUSE_CONTROL);
	assert_int_equal(guard_check("a\x7f"), GUARD_REFUSE_CONTROL);
	assert_int_equal(guard_check("/etc/\x1b[2J"), GUARD_REFUSE_CONTROL);
}

static void
test_utf8_name_is_allowed(void **state)
{
	assert_int_equal(guard_check("notes/caf\xc3\xa9.md"), GUARD_ALLOW);
}

static void
test_absolute_message_is_exact(void **state)
{
	assert_message(GUARD_REFUSE_ABSOLUTE, NULL, ROOT, "/etc/passwd",
	    "Writes must stay inside the workspace. outside /home/sam/code/app/: /etc/passwd");
}

static void
test_dotdot_message_is_exact(void **state)
{
	assert_message(guard_check("a/../../x"), NULL, ROOT, "a/../../x",
	    "Writes must stay inside the workspace. outside /home/sam/code/app/: a/../../x");
}

static void
test_message_uses_the_policy_reason(void **state)
{
	assert_message(GUARD_REFUSE_ABSOLUTE, "Stay in the repo.", ROOT, "/tmp/x",
	    "Stay in the repo. outside /home/sam/code/app/: /tmp/x");
}

static void
test_message_keeps_one_slash_after_root(void **state)
{
	assert_message(GUARD_REFUSE_ABSOLUTE, NULL, ROOT "/", "/x",
	    "Writes must stay inside the workspace. outside /home/sam/code/app/: /x");
}

static void
test_control_message_names_the_byte_not_the_path(void **state)
{
	assert_message(GUARD_REFUSE_CONTROL, NULL, ROOT, "ab\ncd",
	    "Writes must stay inside the workspace. The path holds a control "
	    "character (0x0a at byte 2).");
}

static void
test_empty_message_is_exact(void **state)
{
	assert_message(GUARD_REFUSE_EMPTY, NULL, ROOT, "",
	    "Writes must stay inside the workspace. The path is empty.");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relative_path_is_allowed),
		cmocka_unit_test(test_dot_segments_and_dotted_names_are_allowed),
		cmocka_unit_test(test_absolute_path_is_refused),
		cmocka_unit_test(test_dotdot_path_is_refused),
		cmocka_unit_test(test_dotdot_that_climbs_out_is_refused),
		cmocka_unit_test(test_empty_path_is_refused),
		cmocka_unit_test(test_control_character_is_refused),
		cmocka_unit_test(test_utf8_name_is_allowed),
		cmocka_unit_test(test_absolute_message_is_exact),
		cmocka_unit_test(test_dotdot_message_is_exact),
		cmocka_unit_test(test_message_uses_the_policy_reason),
		cmocka_unit_test(test_message_keeps_one_slash_after_root),
		cmocka_unit_test(test_control_message_names_the_byte_not_the_path),
		cmocka_unit_test(test_empty_message_is_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
