/* Unit tests for common/ledgerrec: one key's value of a ledger record,
 * decoded, with hostile strings, escapes, cuts and malformed records. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/ledgerrec.h"

/* A record as corrald's ledger writes it (corral-ledger(5)). */
#define TEST_RECORD "{\"ts\":\"2026-11-29T17:58:31.123456Z\",\"event\":\"close\"," \
	"\"id\":1764439111000001,\"sandbox\":\"web-1\",\"session_id\":null,\"agent\":null," \
	"\"run\":null,\"pid\":4242,\"binary\":\"/usr/bin/curl\",\"mode\":\"connect\"," \
	"\"host\":\"example.com\",\"port\":443,\"ip\":\"198.18.1.3\",\"decision\":null," \
	"\"policy\":\"web\",\"reason\":null,\"bytes_up\":517,\"bytes_down\":1048576," \
	"\"duration_ms\":12}"

/* KEY's value in the NUL-terminated REC, into a buffer of SIZE. */
static enum ledgerrec_kind
get(const char *rec, const char *key, char *out, size_t size)
{
	return ledgerrec_get(rec, strlen(rec), key, out, size);
}

static void
test_string_value_is_found_by_key(void **state)
{
	char out[64];

	assert_int_equal(get(TEST_RECORD, "sandbox", out, sizeof(out)), LEDGERREC_STRING);
	assert_string_equal(out, "web-1");
	assert_int_equal(get(TEST_RECORD, "ts", out, sizeof(out)), LEDGERREC_STRING);
	assert_string_equal(out, "2026-11-29T17:58:31.123456Z");
	assert_int_equal(get(TEST_RECORD, "duration_ms", out, sizeof(out)), LEDGERREC_NUMBER);
	assert_string_equal(out, "12");
}

static void
test_null_value_is_null_and_empty(void **state)
{
	char out[64] = "stale";

	assert_int_equal(get(TEST_RECORD, "decision", out, sizeof(out)), LEDGERREC_NULL);
	assert_string_equal(out, "");
}

static void
test_number_value_is_its_text(void **state)
{
	char out[64];

	assert_int_equal(get(TEST_RECORD, "bytes_down", out, sizeof(out)), LEDGERREC_NUMBER);
	assert_string_equal(out, "1048576");
	assert_int_equal(get("{\"x\":-1.5e+3}", "x", out, sizeof(out)), LEDGERREC_NUMBER);
	assert_string_equal(out, "-1.5e+3");
}

static void
test_booleans_are_their_text(void **state)
{
	char out[8];

	assert_int_equal(get("{\"a\":true,\"b\":false}", "b", out, sizeof(out)), LEDGERREC_BOOL);
	assert_string_equal(out, "false");
}

static void
test_absent_key_is_absent(void **state)
{
	char out[64];

	assert_int_equal(get(TEST_RECORD, "count", out, sizeof(out)), LEDGERREC_ABSENT);
	assert_int_equal(get("{}", "ts", out, sizeof(out)), LEDGERREC_ABSENT);
	assert_int_equal(get(" { } ", "ts", out, sizeof(out)), LEDGERREC_ABSENT);
}

/* A hostile host that spells out a member is a string, never a member. */
static void
test_member_spelled_inside_a_string_is_not_a_member(void **state)
{
	static const char rec[] = "{\"host\":\"x\\\",\\\"decision\\\":\\\"deny\",\"decision\":"
	    "\"allow\"}";
	char out[64];

	assert_int_equal(get(rec, "decision", out, sizeof(out)), LEDGERREC_STRING);
	assert_string_equal(out, "allow");
	assert_int_equal(get(rec, "host", out, sizeof(out)), LEDGERREC_STRING);
	assert_string_equal(out, "x\",\"decision\":\"deny");
}

static void
test_short_escapes_are_decoded(void **state)
{
	char out[64];

	assert_int_equal(get("{\"k\":\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\"}", "k", out,
	    sizeof(out)), LEDGERREC_STRING);
	assert_string_equal(out, "a\"b\\c/d\be\ff\ng\rh\ti");
}

static void
test_unicode_escapes_become_utf8(void **state)
{
	char out[64];

	assert_int_equal(get("{\"k\":\"\\u00e9\\u2028\\u001b\\u0041\"}", "k", out, sizeof(out)),
	    LEDGERREC_STRING);
	assert_string_equal(out, "\xc3\xa9\xe2\x80\xa8\x1b" "A");
}

static void
test_surrogate_pair_is_joined(void **state)
{
	char out[64];

	assert_int_equal(get("{\"k\":\"\\ud83d\\ude00\"}", "k", out, sizeof(out)),
	    LEDGERREC_STRING);
	assert_string_equal(out, "\xf0\x9f\x98\x80");
}

static void
test_lone_surrogates_become_replacement(void **state)
{
	char out[64];

	assert_int_equal(get("{\"k\":\"\\ud83dx\\ude00\"}", "k", out, sizeof(out)),
	    LEDGERREC_STRING);
	assert_string_equal(out, "\xef\xbf\xbdx\xef\xbf\xbd");
}

/* OUT is a C string: a NUL in the value would cut it short. */
static void
test_nul_escape_becomes_replacement(void **state)
{
	char out[64];

	assert_int_equal(get("{\"k\":\"a\\u0000b\"}", "k", out, sizeof(out)), LEDGERREC_STRING);
	assert_string_equal(out, "a\xef\xbf\xbd" "b");
}

static void
test_raw_utf8_is_copied(void **state)
{
	char out[64];

	assert_int_equal(get("{\"k\":\"caf\xc3\xa9\"}", "k", out, sizeof(out)), LEDGERREC_STRING);
	assert_string_equal(out, "caf\xc3\xa9");
}

static void
test_value_longer_than_out_is_cut_at_a_character(void **state)
{
	char out[5];

	/* "ab" and the two bytes of U+00E9 fit 4 bytes; the next one does not. */
	assert_int_equal(get("{\"k\":\"ab\\u00e9\\u00e9\"}", "k", out, sizeof(out)),
	    LEDGERREC_TOO_LONG);
	assert_string_equal(out, "ab\xc3\xa9");
	/* Raw bytes: the cut never leaves half a character. */
	assert_int_equal(get("{\"k\":\"abc\xc3\xa9\"}", "k", out, sizeof(out)), LEDGERREC_TOO_LONG);
	assert_string_equal(out, "abc");
}

static void
test_value_that_exactly_fits_is_whole(void **state)
{
	char out[6];

	assert_int_equal(get("{\"k\":\"hello\"}", "k", out, sizeof(out)), LEDGERREC_STRING);
	assert_string_equal(out, "hello");
}

static void
test_raw_control_byte_is_malformed(void **state)
{
	char out[64];

	assert_int_equal(get("{\"k\":\"a\nb\"}", "k", out, sizeof(out)), LEDGERREC_MALFORMED);
	assert_string_equal(out, "");
	assert_int_equal(get("{\"a\":\"\x1b[2J\",\"k\":1}", "k", out, sizeof(out)),
	    LEDGERREC_MALFORMED);
}

/* Each of RECS (N) is malformed: no field "k" is read from it. */
static void
assert_all_malformed(const char *const *recs, size_t n)
{
	char out[64];

	for (size_t i = 0; i < n; i++)
		assert_int_equal(get(recs[i], "k", out, sizeof(out)), LEDGERREC_MALFORMED);
}

static void
test_bad_escapes_are_malformed(void **state)
{
	static const char *const recs[] = {
		"{\"k\":\"\\x41\"}",
		"{\"k\":\"\\u12g4\"}",
		"{\"k\":\"\\u12\"}",
		"{\"k\":\"\\",
	};

	assert_all_malformed(recs, sizeof(recs) / sizeof(recs[0]));
}

static void
test_cut_records_are_malformed(void **state)
{
	static const char *const recs[] = {
		"{\"k\":\"abc",
		"{\"a\":1,\"k\"",
		"{\"a\":1,",
		"{\"a\":1",
		"{\"k\":-",
		"",
	};

	assert_all_malformed(recs, sizeof(recs) / sizeof(recs[0]));
}

/* The length is the record's end, whatever bytes follow it. */
static void
test_length_bounds_the_record(void **state)
{
	static const char rec[] = "{\"a\":1,\"k\":\"v\"}";
	char out[64];

	assert_int_equal(ledgerrec_get(rec, 7, "a", out, sizeof(out)), LEDGERREC_NUMBER);
	assert_string_equal(out, "1");
	assert_int_equal(ledgerrec_get(rec, 6, "a", out, sizeof(out)), LEDGERREC_MALFORMED);
	assert_int_equal(ledgerrec_get(rec, 7, "k", out, sizeof(out)), LEDGERREC_MALFORMED);
	assert_int_equal(ledgerrec_get(rec, 14, "k", out, sizeof(out)), LEDGERREC_MALFORMED);
	assert_int_equal(ledgerrec_get(rec, 15, "k", out, sizeof(out)), LEDGERREC_STRING);
}

static void
test_nested_values_are_malformed(void **state)
{
	char out[64];

	assert_int_equal(get("{\"a\":{\"k\":1},\"k\":2}", "k", out, sizeof(out)),
	    LEDGERREC_MALFORMED);
	assert_int_equal(get("{\"a\":[1],\"k\":2}", "k", out, sizeof(out)), LEDGERREC_MALFORMED);
}

static void
test_what_is_not_an_object_is_malformed(void **state)
{
	static const char *const recs[] = {
		"[\"k\",1]",
		"\"k\"",
		"{k:1}",
		"{\"k\" 1}",
		"{\"k\":nul}",
		"{\"k\":01}",
		"{\"k\":1 2}",
	};

	assert_all_malformed(recs, sizeof(recs) / sizeof(recs[0]));
}

static void
test_first_of_duplicate_keys_wins(void **state)
{
	char out[64];

	assert_int_equal(get("{\"k\":\"one\",\"k\":\"two\"}", "k", out, sizeof(out)),
	    LEDGERREC_STRING);
	assert_string_equal(out, "one");
}

static void
test_escaped_key_matches_its_decoded_name(void **state)
{
	char out[64];

	assert_int_equal(get("{\"\\u006b\":\"v\"}", "k", out, sizeof(out)), LEDGERREC_STRING);
	assert_string_equal(out, "v");
}

static void
test_overlong_key_never_matches(void **state)
{
	char key[LEDGERREC_KEY_MAX_BYTES + 2], rec[128], out[8];

	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	snprintf(rec, sizeof(rec), "{\"%s\":1,\"k\":2}", key);
	assert_int_equal(get(rec, key, out, sizeof(out)), LEDGERREC_ABSENT);
	assert_int_equal(get(rec, "k", out, sizeof(out)), LEDGERREC_NUMBER);
	assert_string_equal(out, "2");
}

static void
test_whitespace_between_tokens_is_accepted(void **state)
{
	char out[64];

	assert_int_equal(get(" {\t\"a\" : 1 ,\r\n \"k\" :\"v\" } ", "k", out, sizeof(out)),
	    LEDGERREC_STRING);
	assert_string_equal(out, "v");
}

static void
test_scan_finds_every_field_in_one_pass(void **state)
{
	char ts[32], host[64], port[32], reason[32];
	struct ledgerrec_field f[] = {
		{ "port", port, sizeof(port), LEDGERREC_MALFORMED },
		{ "ts", ts, sizeof(ts), LEDGERREC_MALFORMED },
		{ "reason", reason, sizeof(reason), LEDGERREC_MALFORMED },
		{ "host", host, sizeof(host), LEDGERREC_MALFORMED },
	};

	assert_true(ledgerrec_scan(TEST_RECORD, strlen(TEST_RECORD), f, 4));
	assert_int_equal(f[0].kind, LEDGERREC_NUMBER);
	assert_string_equal(port, "443");
	assert_int_equal(f[1].kind, LEDGERREC_STRING);
	assert_string_equal(ts, "2026-11-29T17:58:31.123456Z");
	assert_int_equal(f[2].kind, LEDGERREC_NULL);
	assert_int_equal(f[3].kind, LEDGERREC_STRING);
	assert_string_equal(host, "example.com");
}

/* Fields found before the record goes bad keep their values; the rest are malformed. */
static void
test_scan_marks_fields_after_a_fault_malformed(void **state)
{
	static const char rec[] = "{\"a\":\"x\",\"b\":\"y\n\",\"c\":1}";
	char a[8], c[8];
	struct ledgerrec_field f[] = {
		{ "a", a, sizeof(a), LEDGERREC_ABSENT },
		{ "c", c, sizeof(c), LEDGERREC_ABSENT },
	};

	assert_false(ledgerrec_scan(rec, strlen(rec), f, 2));
	assert_int_equal(f[0].kind, LEDGERREC_STRING);
	assert_string_equal(a, "x");
	assert_int_equal(f[1].kind, LEDGERREC_MALFORMED);
	assert_string_equal(c, "");
}

static void
test_scan_of_absent_fields_says_absent(void **state)
{
	char a[8];
	struct ledgerrec_field f[] = { { "zz", a, sizeof(a), LEDGERREC_MALFORMED } };

	assert_true(ledgerrec_scan(TEST_RECORD, strlen(TEST_RECORD), f, 1));
	assert_int_equal(f[0].kind, LEDGERREC_ABSENT);
}

static void
test_int_reads_integers_only(void **state)
{
	int64_t v = 0;

	assert_true(ledgerrec_int(TEST_RECORD, strlen(TEST_RECORD), "id", &v));
	assert_int_equal(v, 1764439111000001LL);
	assert_true(ledgerrec_int("{\"k\":-9223372036854775808}", 26, "k", &v));
	assert_true(v == INT64_MIN);
	assert_false(ledgerrec_int("{\"k\":9223372036854775808}", 25, "k", &v));
	assert_false(ledgerrec_int("{\"k\":1.5}", 9, "k", &v));
	assert_false(ledgerrec_int("{\"k\":1e3}", 9, "k", &v));
	assert_false(ledgerrec_int("{\"k\":\"1\"}", 9, "k", &v));
	assert_false(ledgerrec_int("{\"k\":null}", 10, "k", &v));
	assert_false(ledgerrec_int("{\"j\":1}", 7, "k", &v));
}

int
main(void)
{
#define T(f) cmocka_unit_test(f)
	const struct CMUnitTest tests[] = {
		T(test_string_value_is_found_by_key),
		T(test_null_value_is_null_and_empty),
		T(test_number_value_is_its_text),
		T(test_booleans_are_their_text),
		T(test_absent_key_is_absent),
		T(test_member_spelled_inside_a_string_is_not_a_member),
		T(test_short_escapes_are_decoded),
		T(test_unicode_escapes_become_utf8),
		T(test_surrogate_pair_is_joined),
		T(test_lone_surrogates_become_replacement),
		T(test_nul_escape_becomes_replacement),
		T(test_raw_utf8_is_copied),
		T(test_value_longer_than_out_is_cut_at_a_character),
		T(test_value_that_exactly_fits_is_whole),
		T(test_raw_control_byte_is_malformed),
		T(test_bad_escapes_are_malformed),
		T(test_cut_records_are_malformed),
		T(test_length_bounds_the_record),
		T(test_nested_values_are_malformed),
		T(test_what_is_not_an_object_is_malformed),
		T(test_first_of_duplicate_keys_wins),
		T(test_escaped_key_matches_its_decoded_name),
		T(test_overlong_key_never_matches),
		T(test_whitespace_between_tokens_is_accepted),
		T(test_scan_finds_every_field_in_one_pass),
		T(test_scan_marks_fields_after_a_fault_malformed),
		T(test_scan_of_absent_fields_says_absent),
		T(test_int_reads_integers_only),
	};
#undef T

	return cmocka_run_group_tests_name("ledgerrec", tests, NULL, NULL);
}
