/* Tests of common/visible: control bytes become \xHH, and nothing is cut
 * in the middle of an escape. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/visible.h"

static void
test_plain_text_passes_as_it_is(void **state)
{
	char out[64];

	(void)state;
	assert_string_equal(visible_copy("team=red, s1 héllo", out, sizeof(out)), "team=red, s1 héllo");
}

static void
test_control_bytes_become_escapes(void **state)
{
	char out[64];

	(void)state;
	assert_string_equal(visible_copy("a\nName: evil\x1b[2J\x7f", out, sizeof(out)),
	    "a\\x0aName: evil\\x1b[2J\\x7f");
	assert_string_equal(visible_copy("back\\slash", out, sizeof(out)), "back\\\\slash");
}

static void
test_an_escape_is_never_cut_in_half(void **state)
{
	char out[6];

	(void)state;
	assert_string_equal(visible_copy("ab\ncd", out, sizeof(out)), "ab");
	assert_string_equal(visible_copy(NULL, out, sizeof(out)), "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text_passes_as_it_is),
		cmocka_unit_test(test_control_bytes_become_escapes),
		cmocka_unit_test(test_an_escape_is_never_cut_in_half),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
