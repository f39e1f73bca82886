/* Unit tests for common/timeutil: RFC 3339 formatting and --since parsing. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/timeutil.h"

#define US_PER_S INT64_C(1000000)
/* 2026-11-29T17:58:31Z, the fixed "now" for durations. */
#define TEST_NOW_US (INT64_C(1795975111) * US_PER_S)
/* 2023-11-14T22:13:20Z */
#define TEST_KNOWN_S INT64_C(1700000000)
/* Left in the output when a parse is refused, to show nothing was written. */
#define TEST_UNTOUCHED INT64_C(-42)

/* Parses TEXT with the fixed now; returns the result, failing the test on a refusal. */
static int64_t
parse_ok(const char *text)
{
	int64_t us = TEST_UNTOUCHED;

	if (time_parse_since(text, TEST_NOW_US, &us) != 0)
		fail_msg("refused \"%s\"", text);
	return us;
}

/* Checks that TEXT is refused and the output is left alone. */
static void
assert_refused(const char *text)
{
	int64_t us = TEST_UNTOUCHED;

	if (time_parse_since(text, TEST_NOW_US, &us) != -1)
		fail_msg("accepted \"%s\"", text);
	assert_int_equal(us, TEST_UNTOUCHED);
}

static void
test_format_known_epoch_value(void **state)
{
	char out[RFC3339_US_BYTES];

	(void)state;
	time_format_rfc3339_us(TEST_KNOWN_S * US_PER_S + 123456, out);
	assert_string_equal(out, "2023-11-14T22:13:20.123456Z");
}

static void
test_format_epoch_zero(void **state)
{
	char out[RFC3339_US_BYTES];

	(void)state;
	time_format_rfc3339_us(0, out);
	assert_string_equal(out, "1970-01-01T00:00:00.000000Z");
}

static void
test_format_before_epoch_rounds_toward_the_past(void **state)
{
	char out[RFC3339_US_BYTES];

	(void)state;
	time_format_rfc3339_us(-1, out);
	assert_string_equal(out, "1969-12-31T23:59:59.999999Z");
}

static void
test_format_clamps_to_four_digit_years(void **state)
{
	char out[RFC3339_US_BYTES];

	(void)state;
	time_format_rfc3339_us(INT64_MAX, out);
	assert_string_equal(out, "9999-12-31T23:59:59.999999Z");
	time_format_rfc3339_us(INT64_MIN, out);
	assert_string_equal(out, "0000-01-01T00:00:00.000000Z");
}

static void
test_format_then_parse_round_trips(void **state)
{
	char out[RFC3339_US_BYTES];

	(void)state;
	time_format_rfc3339_us(TEST_NOW_US + 654321, out);
	assert_int_equal(parse_ok(out), TEST_NOW_US + 654321);
}

static void
test_now_is_after_2023(void **state)
{
	(void)state;
	assert_true(time_now_us() > TEST_KNOWN_S * US_PER_S);
}

static void
test_monotonic_clock_does_not_go_back(void **state)
{
	int64_t a = time_mono_ns(), b = time_mono_ns();

	(void)state;
	assert_true(a > 0);
	assert_true(b >= a);
}

static void
test_parse_rfc3339_utc(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("2023-11-14T22:13:20Z"), TEST_KNOWN_S * US_PER_S);
}

static void
test_parse_rfc3339_lower_case_t_and_z(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("2023-11-14t22:13:20z"), TEST_KNOWN_S * US_PER_S);
}

static void
test_parse_rfc3339_positive_offset(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("2023-11-14T23:13:20+01:00"), TEST_KNOWN_S * US_PER_S);
}

static void
test_parse_rfc3339_negative_offset_with_minutes(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("2023-11-14T17:43:20-04:30"), TEST_KNOWN_S * US_PER_S);
}

static void
test_parse_rfc3339_fraction(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("2023-11-14T22:13:20.5Z"), TEST_KNOWN_S * US_PER_S + 500000);
	assert_int_equal(parse_ok("2023-11-14T22:13:20.000001Z"), TEST_KNOWN_S * US_PER_S + 1);
}

static void
test_parse_rfc3339_nanoseconds_are_truncated_to_microseconds(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("2023-11-14T22:13:20.123456789Z"),
	    TEST_KNOWN_S * US_PER_S + 123456);
}

static void
test_parse_rfc3339_leap_day(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("2024-02-29T00:00:00Z"), INT64_C(1709164800) * US_PER_S);
}

static void
test_parse_duration_seconds(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("30s"), TEST_NOW_US - 30 * US_PER_S);
}

static void
test_parse_duration_minutes(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("5m"), TEST_NOW_US - 300 * US_PER_S);
}

static void
test_parse_duration_hours(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("2h"), TEST_NOW_US - 7200 * US_PER_S);
}

static void
test_parse_duration_days(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("1d"), TEST_NOW_US - 86400 * US_PER_S);
}

static void
test_refuses_empty_text(void **state)
{
	(void)state;
	assert_refused("");
	assert_int_equal(time_parse_since(NULL, TEST_NOW_US, &(int64_t){ 0 }), -1);
}

static void
test_refuses_unknown_unit(void **state)
{
	(void)state;
	assert_refused("5x");
	assert_refused("5");
	assert_refused("s");
	assert_refused("5ms");
}

static void
test_refuses_signed_duration(void **state)
{
	(void)state;
	assert_refused("-5m");
	assert_refused("+5m");
}

static void
test_refuses_zero_duration(void **state)
{
	(void)state;
	assert_refused("0s");
}

static void
test_refuses_spaces_around_duration(void **state)
{
	(void)state;
	assert_refused(" 5m");
	assert_refused("5m ");
	assert_refused("5 m");
}

static void
test_refuses_duration_overflow(void **state)
{
	(void)state;
	assert_refused("99999999999999999999s");
	/* fits in int64 as a count, not as microseconds */
	assert_refused("9223372036855s");
	assert_refused("106751991167301d");
}

static void
test_refuses_duration_reaching_before_int64(void **state)
{
	int64_t us = TEST_UNTOUCHED;

	(void)state;
	assert_int_equal(time_parse_since("1s", INT64_MIN + 1, &us), -1);
	assert_int_equal(us, TEST_UNTOUCHED);
}

static void
test_refuses_month_13(void **state)
{
	(void)state;
	assert_refused("2026-13-01T00:00:00Z");
}

static void
test_refuses_day_past_end_of_month(void **state)
{
	(void)state;
	assert_refused("2026-02-29T00:00:00Z");
	assert_refused("2026-04-31T00:00:00Z");
	assert_refused("2026-01-00T00:00:00Z");
}

static void
test_refuses_clock_out_of_range(void **state)
{
	(void)state;
	assert_refused("2026-11-29T24:00:00Z");
	assert_refused("2026-11-29T17:60:00Z");
	assert_refused("2026-11-29T17:58:61Z");
}

static void
test_refuses_missing_or_bad_offset(void **state)
{
	(void)state;
	assert_refused("2026-11-29T17:58:31");
	assert_refused("2026-11-29T17:58:31+1:00");
	assert_refused("2026-11-29T17:58:31+0100");
	assert_refused("2026-11-29T17:58:31+24:00");
	assert_refused("2026-11-29T17:58:31ZZ");
}

static void
test_refuses_bad_separator_or_short_fields(void **state)
{
	(void)state;
	assert_refused("2026-11-29 17:58:31Z");
	assert_refused("2026-11-29");
	assert_refused("26-11-29T17:58:31Z");
	assert_refused("2026-1-29T17:58:31Z");
}

static void
test_refuses_empty_or_long_fraction(void **state)
{
	(void)state;
	assert_refused("2026-11-29T17:58:31.Z");
	assert_refused("2026-11-29T17:58:31.1234567890Z");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_known_epoch_value),
		cmocka_unit_test(test_format_epoch_zero),
		cmocka_unit_test(test_format_before_epoch_rounds_toward_the_past),
		cmocka_unit_test(test_format_clamps_to_four_digit_years),
		cmocka_unit_test(test_format_then_parse_round_trips),
		cmocka_unit_test(test_now_is_after_2023),
		cmocka_unit_test(test_monotonic_clock_does_not_go_back),
		cmocka_unit_test(test_parse_rfc3339_utc),
		cmocka_unit_test(test_parse_rfc3339_lower_case_t_and_z),
		cmocka_unit_test(test_parse_rfc3339_positive_offset),
		cmocka_unit_test(test_parse_rfc3339_negative_offset_with_minutes),
		cmocka_unit_test(test_parse_rfc3339_fraction),
		cmocka_unit_test(test_parse_rfc3339_nanoseconds_are_truncated_to_microseconds),
		cmocka_unit_test(test_parse_rfc3339_leap_day),
		cmocka_unit_test(test_parse_duration_seconds),
		cmocka_unit_test(test_parse_duration_minutes),
		cmocka_unit_test(test_parse_duration_hours),
		cmocka_unit_test(test_parse_duration_days),
		cmocka_unit_test(test_refuses_empty_text),
		cmocka_unit_test(test_refuses_unknown_unit),
		cmocka_unit_test(test_refuses_signed_duration),
		cmocka_unit_test(test_refuses_zero_duration),
		cmocka_unit_test(test_refuses_spaces_around_duration),
		cmocka_unit_test(test_refuses_duration_overflow),
		cmocka_unit_test(test_refuses_duration_reaching_before_int64),
		cmocka_unit_test(test_refuses_month_13),
		cmocka_unit_test(test_refuses_day_past_end_of_month),
		cmocka_unit_test(test_refuses_clock_out_of_range),
		cmocka_unit_test(test_refuses_missing_or_bad_offset),
		cmocka_unit_test(test_refuses_bad_separator_or_short_fields),
		cmocka_unit_test(test_refuses_empty_or_long_fraction),
	};

	return cmocka_run_group_tests_name("timeutil", tests, NULL, NULL);
}
