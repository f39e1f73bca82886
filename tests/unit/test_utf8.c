/* common/utf8: what counts as UTF-8 for the ledger, JSON and policy files. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/utf8.h"

static void
test_ascii_and_well_formed_sequences_are_valid(void **state)
{
	(void)state;
	assert_true(utf8_valid(""));
	assert_true(utf8_valid("/usr/bin/python3"));
	assert_true(utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8e"));
	assert_true(utf8_valid("\xf4\x8f\xbf\xbf"));            /* U+10FFFF */
	assert_int_equal(utf8_sequence((const unsigned char *)"\xe2\x82\xac", 3), 3);
}

static void
test_malformed_sequences_are_refused(void **state)
{
	(void)state;
	assert_false(utf8_valid("/\xff"));                       /* a byte never in UTF-8 */
	assert_false(utf8_valid("\xc0\xaf"));                    /* overlong '/' */
	assert_false(utf8_valid("\xe0\x80\xaf"));                /* overlong, three bytes */
	assert_false(utf8_valid("\xed\xa0\x80"));                /* a surrogate */
	assert_false(utf8_valid("\xf4\x90\x80\x80"));            /* past U+10FFFF */
	assert_false(utf8_valid("\xe2\x82"));                    /* cut short */
	assert_false(utf8_valid("\x80"));                        /* a stray continuation */
	assert_int_equal(utf8_sequence((const unsigned char *)"\xe2\x82\xac", 2), 0);
	assert_int_equal(utf8_sequence((const unsigned char *)"", 0), 0);
}

static void
test_controls_are_told(void **state)
{
	(void)state;
	assert_true(utf8_is_control((const unsigned char *)"\n", 1));
	assert_true(utf8_is_control((const unsigned char *)"\x7f", 1));
	assert_false(utf8_is_control((const unsigned char *)"a", 1));
	assert_true(utf8_is_control((const unsigned char *)"\xc2\x85", 2));    /* NEL */
	assert_true(utf8_is_control((const unsigned char *)"\xc2\x9b", 2));    /* CSI */
	assert_false(utf8_is_control((const unsigned char *)"\xc2\xa0", 2));   /* NBSP */
	assert_true(utf8_is_control((const unsigned char *)"\xe2\x80\xa8", 3));
	assert_true(utf8_is_control((const unsigned char *)"\xe2\x80\xa9", 3));
	assert_false(utf8_is_control((const unsigned char *)"\xe2\x82\xac", 3));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascii_and_well_formed_sequences_are_valid),
		cmocka_unit_test(test_malformed_sequences_are_refused),
		cmocka_unit_test(test_controls_are_told),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
