/* Unit tests for common/json: nesting, commas, escaping, the cap, misuse. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/json.h"

#define TEST_JSON_MAX_BYTES 4096
#define TEST_JSON_DEPTH_MAX 32          /* JSON_DEPTH_MAX in common/json.c */

static int
setup_json(void **state)
{
	*state = json_new(TEST_JSON_MAX_BYTES);
	return *state == NULL ? -1 : 0;
}

static int
teardown_json(void **state)
{
	json_free(*state);
	return 0;
}

/* Writes the LEN bytes at S as the document's one string value and checks
 * the text is EXPECT (with its quotes). */
static void
check_string(const char *s, size_t len, const char *expect)
{
	struct json *j = json_new(TEST_JSON_MAX_BYTES);
	const char *text;

	assert_non_null(j);
	json_str_n(j, s, len);
	assert_true(json_ok(j));
	text = json_text(j, NULL);
	assert_non_null(text);
	assert_string_equal(text, expect);
	json_free(j);
}

#define CHECK_STRING(lit, expect) check_string((lit), sizeof(lit) - 1, (expect))

static void
test_object_members_are_separated_by_commas(void **state)
{
	struct json *j = *state;
	size_t len = 0;

	json_object_begin(j);
	json_kv_string(j, "a", "x");
	json_kv_int(j, "b", -3);
	json_kv_uint(j, "c", 7);
	json_kv_bool(j, "d", true);
	json_kv_null(j, "e");
	json_object_end(j);
	assert_true(json_ok(j));
	assert_string_equal(json_text(j, &len), "{\"a\":\"x\",\"b\":-3,\"c\":7,\"d\":true,\"e\":null}");
	assert_int_equal(len, strlen(json_text(j, NULL)));
}

static void
test_nested_arrays_and_objects_get_commas_only_between_members(void **state)
{
	struct json *j = *state;

	json_object_begin(j);
	json_key(j, "list");
	json_array_begin(j);
	json_int(j, 1);
	json_str(j, "two");
	json_object_begin(j);
	json_kv_bool(j, "three", false);
	json_object_end(j);
	json_array_begin(j);
	json_array_end(j);
	json_array_end(j);
	json_key(j, "empty");
	json_object_begin(j);
	json_object_end(j);
	json_object_end(j);
	assert_string_equal(json_text(j, NULL),
	    "{\"list\":[1,\"two\",{\"three\":false},[]],\"empty\":{}}");
}

static void
test_integer_extremes_are_written_exactly(void **state)
{
	struct json *j = *state;

	json_array_begin(j);
	json_int(j, INT64_MIN);
	json_int(j, INT64_MAX);
	json_uint(j, UINT64_MAX);
	json_array_end(j);
	assert_string_equal(json_text(j, NULL),
	    "[-9223372036854775808,9223372036854775807,18446744073709551615]");
}

static void
test_null_string_is_written_as_null(void **state)
{
	struct json *j = *state;

	json_object_begin(j);
	json_kv_string(j, "host", NULL);
	json_object_end(j);
	assert_string_equal(json_text(j, NULL), "{\"host\":null}");
}

static void
test_quote_and_backslash_are_escaped(void **state)
{
	(void)state;
	CHECK_STRING("a\"b\\c", "\"a\\\"b\\\\c\"");
}

static void
test_control_characters_use_short_forms(void **state)
{
	(void)state;
	CHECK_STRING("\b\t\n\f\r", "\"\\b\\t\\n\\f\\r\"");
}

static void
test_other_control_characters_use_u_escapes(void **state)
{
	(void)state;
	CHECK_STRING("\x01\x1b\x1f", "\"\\u0001\\u001b\\u001f\"");
}

static void
test_embedded_nul_is_escaped(void **state)
{
	(void)state;
	CHECK_STRING("a\0b", "\"a\\u0000b\"");
}

static void
test_del_and_slash_pass_unchanged(void **state)
{
	(void)state;
	CHECK_STRING("\x7f</script>", "\"\x7f</script>\"");
}

static void
test_forged_field_and_newline_stay_inside_the_string(void **state)
{
	struct json *j = *state;

	json_object_begin(j);
	json_kv_string(j, "host", "a\"}\n{\"x\":1");
	json_object_end(j);
	assert_string_equal(json_text(j, NULL), "{\"host\":\"a\\\"}\\n{\\\"x\\\":1\"}");
	assert_null(strchr(json_text(j, NULL), '\n'));
}

static void
test_keys_are_escaped(void **state)
{
	struct json *j = *state;

	json_object_begin(j);
	json_kv_int(j, "k\"\n", 1);
	json_object_end(j);
	assert_string_equal(json_text(j, NULL), "{\"k\\\"\\n\":1}");
}

static void
test_valid_multibyte_utf8_passes_unchanged(void **state)
{
	(void)state;
	/* é (2 bytes), € (3), U+FFFF (3), 😀 (4), U+10FFFF (4) */
	CHECK_STRING("\xc3\xa9\xe2\x82\xac\xef\xbf\xbf\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf",
	    "\"\xc3\xa9\xe2\x82\xac\xef\xbf\xbf\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"");
}

static void
test_line_and_paragraph_separators_are_escaped(void **state)
{
	(void)state;
	CHECK_STRING("a\xe2\x80\xa8" "b\xe2\x80\xa9", "\"a\\u2028b\\u2029\"");
}

static void
test_bad_lead_bytes_become_replacement_each(void **state)
{
	(void)state;
	/* a lone continuation byte, C0/C1 (always overlong), F5 and FF (never used) */
	CHECK_STRING("\x80" "a\xc1\xf5\xff", "\"\\ufffda\\ufffd\\ufffd\\ufffd\"");
}

static void
test_truncated_sequence_becomes_replacement_per_byte(void **state)
{
	(void)state;
	CHECK_STRING("\xe2\x82" "A", "\"\\ufffd\\ufffdA\"");
	CHECK_STRING("x\xf0\x9f\x98", "\"x\\ufffd\\ufffd\\ufffd\"");
}

static void
test_overlong_encodings_become_replacement(void **state)
{
	(void)state;
	/* '/' as C0 AF and as E0 80 AF; U+FFFF as F0 8F BF BF */
	CHECK_STRING("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	CHECK_STRING("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK_STRING("\xf0\x8f\xbf\xbf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

static void
test_surrogates_become_replacement(void **state)
{
	(void)state;
	CHECK_STRING("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK_STRING("\xed\xbf\xbf", "\"\\ufffd\\ufffd\\ufffd\"");
	/* the code point just below the surrogates is fine */
	CHECK_STRING("\xed\x9f\xbf", "\"\xed\x9f\xbf\"");
}

static void
test_code_points_past_10ffff_become_replacement(void **state)
{
	(void)state;
	CHECK_STRING("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

static void
test_output_past_cap_fails_and_hides_text(void **state)
{
	struct json *j = json_new(16);

	(void)state;
	assert_non_null(j);
	json_object_begin(j);
	json_kv_string(j, "host", "example.com");
	assert_false(json_ok(j));
	json_object_end(j);
	assert_false(json_ok(j));
	assert_null(json_text(j, NULL));
	json_free(j);
}

static void
test_output_exactly_at_cap_is_accepted(void **state)
{
	struct json *j = json_new(sizeof("{\"a\":\"bc\"}") - 1);

	(void)state;
	assert_non_null(j);
	json_object_begin(j);
	json_kv_string(j, "a", "bc");
	json_object_end(j);
	assert_true(json_ok(j));
	assert_string_equal(json_text(j, NULL), "{\"a\":\"bc\"}");
	json_free(j);
}

static void
test_escapes_count_against_the_cap(void **state)
{
	struct json *j = json_new(10);

	(void)state;
	assert_non_null(j);
	/* 4 raw bytes, but "\ufffd" x 4 plus quotes is 26 bytes */
	json_str_n(j, "\xff\xff\xff\xff", 4);
	assert_false(json_ok(j));
	assert_null(json_text(j, NULL));
	json_free(j);
}

static void
test_end_without_begin_is_refused(void **state)
{
	struct json *j = *state;

	json_object_end(j);
	assert_false(json_ok(j));
	assert_null(json_text(j, NULL));
}

static void
test_mismatched_end_is_refused(void **state)
{
	struct json *j = *state;

	json_object_begin(j);
	json_array_end(j);
	assert_false(json_ok(j));
}

static void
test_unclosed_document_has_no_text(void **state)
{
	struct json *j = *state;

	json_object_begin(j);
	json_kv_int(j, "a", 1);
	assert_true(json_ok(j));
	assert_null(json_text(j, NULL));
}

static void
test_empty_document_has_no_text(void **state)
{
	struct json *j = *state;

	assert_true(json_ok(j));
	assert_null(json_text(j, NULL));
}

static void
test_key_without_value_before_end_is_refused(void **state)
{
	struct json *j = *state;

	json_object_begin(j);
	json_key(j, "a");
	json_object_end(j);
	assert_false(json_ok(j));
}

static void
test_value_without_key_in_object_is_refused(void **state)
{
	struct json *j = *state;

	json_object_begin(j);
	json_int(j, 1);
	assert_false(json_ok(j));
}

static void
test_key_outside_object_is_refused(void **state)
{
	struct json *j = *state;

	json_array_begin(j);
	json_key(j, "a");
	assert_false(json_ok(j));
}

static void
test_two_keys_in_a_row_are_refused(void **state)
{
	struct json *j = *state;

	json_object_begin(j);
	json_key(j, "a");
	json_key(j, "b");
	assert_false(json_ok(j));
}

static void
test_second_top_level_value_is_refused(void **state)
{
	struct json *j = *state;

	json_object_begin(j);
	json_object_end(j);
	json_object_begin(j);
	assert_false(json_ok(j));
	assert_null(json_text(j, NULL));
}

static void
test_nesting_past_depth_cap_is_refused(void **state)
{
	struct json *j = *state;

	for (int i = 0; i < TEST_JSON_DEPTH_MAX; i++)
		json_array_begin(j);
	assert_true(json_ok(j));
	json_array_begin(j);
	assert_false(json_ok(j));
}

static void
test_nesting_at_depth_cap_is_accepted(void **state)
{
	struct json *j = *state;

	for (int i = 0; i < TEST_JSON_DEPTH_MAX; i++)
		json_array_begin(j);
	for (int i = 0; i < TEST_JSON_DEPTH_MAX; i++)
		json_array_end(j);
	assert_true(json_ok(j));
	assert_int_equal(strlen(json_text(j, NULL)), 2 * TEST_JSON_DEPTH_MAX);
}

static void
test_reset_starts_a_fresh_document(void **state)
{
	struct json *j = *state;

	json_object_end(j);
	assert_false(json_ok(j));
	json_reset(j);
	assert_true(json_ok(j));
	json_array_begin(j);
	json_int(j, 5);
	json_array_end(j);
	assert_string_equal(json_text(j, NULL), "[5]");
}

static void
test_escape_writes_body_without_quotes(void **state)
{
	char out[32];

	(void)state;
	assert_int_equal(json_escape("a\"\n\xff", 4, out, sizeof(out)), 11);
	assert_string_equal(out, "a\\\"\\n\\ufffd");
}

static void
test_escape_refuses_output_that_does_not_fit(void **state)
{
	char out[7];

	(void)state;
	/* "\ufffd" is 6 bytes and needs a seventh for the NUL; one more byte does not fit */
	assert_int_equal(json_escape("\xff", 1, out, sizeof(out)), 6);
	assert_string_equal(out, "\\ufffd");
	assert_int_equal(json_escape("\xff" "a", 2, out, sizeof(out)), -1);
	assert_string_equal(out, "");
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup_json, teardown_json)
	const struct CMUnitTest tests[] = {
		T(test_object_members_are_separated_by_commas),
		T(test_nested_arrays_and_objects_get_commas_only_between_members),
		T(test_integer_extremes_are_written_exactly),
		T(test_null_string_is_written_as_null),
		T(test_quote_and_backslash_are_escaped),
		T(test_control_characters_use_short_forms),
		T(test_other_control_characters_use_u_escapes),
		T(test_embedded_nul_is_escaped),
		T(test_del_and_slash_pass_unchanged),
		T(test_forged_field_and_newline_stay_inside_the_string),
		T(test_keys_are_escaped),
		T(test_valid_multibyte_utf8_passes_unchanged),
		T(test_line_and_paragraph_separators_are_escaped),
		T(test_bad_lead_bytes_become_replacement_each),
		T(test_truncated_sequence_becomes_replacement_per_byte),
		T(test_overlong_encodings_become_replacement),
		T(test_surrogates_become_replacement),
		T(test_code_points_past_10ffff_become_replacement),
		T(test_output_past_cap_fails_and_hides_text),
		T(test_output_exactly_at_cap_is_accepted),
		T(test_escapes_count_against_the_cap),
		T(test_end_without_begin_is_refused),
		T(test_mismatched_end_is_refused),
		T(test_unclosed_document_has_no_text),
		T(test_empty_document_has_no_text),
		T(test_key_without_value_before_end_is_refused),
		T(test_value_without_key_in_object_is_refused),
		T(test_key_outside_object_is_refused),
		T(test_two_keys_in_a_row_are_refused),
		T(test_second_top_level_value_is_refused),
		T(test_nesting_past_depth_cap_is_refused),
		T(test_nesting_at_depth_cap_is_accepted),
		T(test_reset_starts_a_fresh_document),
		T(test_escape_writes_body_without_quotes),
		T(test_escape_refuses_output_that_does_not_fit),
	};
#undef T

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
