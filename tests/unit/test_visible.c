/* Tests of common/visible: control bytes (C0, DEL, C1) and bytes of no
 * well-formed UTF-8 sequence become \xHH, and nothing is cut in the middle
 * of an escape or of a character. */
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

/* U+009B is CSI to a terminal that obeys C1 controls, as ESC [ is. */
static void
test_c1_controls_become_escapes(void **state)
{
	char out[64];

	(void)state;
	assert_string_equal(visible_copy("a\xc2\x9b" "31mX\xc2\x85\xc2\x80\xc2\x9f", out, sizeof(out)),
	    "a\\xc2\\x9b31mX\\xc2\\x85\\xc2\\x80\\xc2\\x9f");
	/* U+00A0 and U+00FF, right after the C1 range, are printable. */
	assert_string_equal(visible_copy("\xc2\xa0\xc3\xbf", out, sizeof(out)), "\xc2\xa0\xc3\xbf");
}

static void
test_bytes_of_no_utf8_sequence_become_escapes(void **state)
{
	char out[64];

	(void)state;
	assert_string_equal(visible_copy("\x9b" "31m", out, sizeof(out)), "\\x9b31m");
	assert_string_equal(visible_copy("caf\xe9", out, sizeof(out)), "caf\\xe9");
	assert_string_equal(visible_copy("\xc0\xaf", out, sizeof(out)), "\\xc0\\xaf");       /* overlong */
	assert_string_equal(visible_copy("\xed\xa0\x80", out, sizeof(out)), "\\xed\\xa0\\x80"); /* surrogate */
	assert_string_equal(visible_copy("\xe2\x82", out, sizeof(out)), "\\xe2\\x82");       /* cut */
	assert_string_equal(visible_copy("\xf0\x9f\x90\x8e!", out, sizeof(out)), "\xf0\x9f\x90\x8e!");
}

static void
test_a_character_is_never_cut_in_half(void **state)
{
	char out[5];

	(void)state;
	assert_string_equal(visible_copy("ab\xe2\x82\xac", out, sizeof(out)), "ab");
	assert_string_equal(visible_copy("a\xc2\x9b", out, sizeof(out)), "a");
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
		cmocka_unit_test(test_c1_controls_become_escapes),
		cmocka_unit_test(test_bytes_of_no_utf8_sequence_become_escapes),
		cmocka_unit_test(test_a_character_is_never_cut_in_half),
		cmocka_unit_test(test_an_escape_is_never_cut_in_half),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
