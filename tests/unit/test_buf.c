/* Unit tests for common/buf: the maximum, NUL termination, consume, steal. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"

#define TEST_BUF_MAX_BYTES 16

static int
setup_buf(void **state)
{
	*state = buf_new(TEST_BUF_MAX_BYTES);
	return *state == NULL ? -1 : 0;
}

static int
teardown_buf(void **state)
{
	buf_free(*state);
	return 0;
}

static void
test_new_buffer_is_empty_and_terminated(void **state)
{
	struct buf *b = *state;

	assert_int_equal(buf_len(b), 0);
	assert_int_equal(buf_max(b), TEST_BUF_MAX_BYTES);
	assert_non_null(buf_data(b));
	assert_string_equal(buf_data(b), "");
}

static void
test_append_up_to_max_is_accepted(void **state)
{
	struct buf *b = *state;
	char fill[TEST_BUF_MAX_BYTES];

	memset(fill, 'a', sizeof(fill));
	assert_int_equal(buf_append(b, fill, sizeof(fill)), 0);
	assert_int_equal(buf_len(b), TEST_BUF_MAX_BYTES);
	assert_memory_equal(buf_data(b), fill, sizeof(fill));
	assert_int_equal(buf_data(b)[TEST_BUF_MAX_BYTES], '\0');
}

static void
test_append_past_max_is_refused_and_leaves_buffer_unchanged(void **state)
{
	struct buf *b = *state;
	char fill[TEST_BUF_MAX_BYTES];

	assert_int_equal(buf_append_str(b, "hello"), 0);
	memset(fill, 'x', sizeof(fill));
	assert_int_equal(buf_append(b, fill, TEST_BUF_MAX_BYTES - 5 + 1), -1);
	assert_int_equal(buf_len(b), 5);
	assert_string_equal(buf_data(b), "hello");
}

static void
test_append_one_byte_to_full_buffer_is_refused(void **state)
{
	struct buf *b = *state;
	char fill[TEST_BUF_MAX_BYTES];

	memset(fill, 'a', sizeof(fill));
	assert_int_equal(buf_append(b, fill, sizeof(fill)), 0);
	assert_int_equal(buf_append(b, "b", 1), -1);
	assert_int_equal(buf_len(b), TEST_BUF_MAX_BYTES);
	assert_memory_equal(buf_data(b), fill, sizeof(fill));
}

static void
test_append_huge_length_does_not_wrap(void **state)
{
	struct buf *b = *state;

	assert_int_equal(buf_append_str(b, "ab"), 0);
	assert_int_equal(buf_append(b, "c", SIZE_MAX), -1);
	assert_int_equal(buf_append(b, "c", SIZE_MAX - 1), -1);
	assert_string_equal(buf_data(b), "ab");
}

static void
test_growth_keeps_earlier_bytes(void **state)
{
	struct buf *b = buf_new(4096);
	char expect[4096];

	(void)state;
	assert_non_null(b);
	for (size_t i = 0; i < sizeof(expect); i++) {
		expect[i] = (char)('a' + i % 26);
		assert_int_equal(buf_append(b, &expect[i], 1), 0);
	}
	assert_int_equal(buf_len(b), sizeof(expect));
	assert_memory_equal(buf_data(b), expect, sizeof(expect));
	assert_int_equal(buf_data(b)[sizeof(expect)], '\0');
	buf_free(b);
}

static void
test_zero_max_buffer_refuses_every_byte(void **state)
{
	struct buf *b = buf_new(0);

	(void)state;
	assert_non_null(b);
	assert_int_equal(buf_append(b, "", 0), 0);
	assert_int_equal(buf_append(b, "a", 1), -1);
	assert_string_equal(buf_data(b), "");
	buf_free(b);
}

static void
test_printf_appends_formatted_text(void **state)
{
	struct buf *b = *state;

	assert_int_equal(buf_append_str(b, "n="), 0);
	assert_int_equal(buf_printf(b, "%d,%s", 42, "ok"), 0);
	assert_string_equal(buf_data(b), "n=42,ok");
	assert_int_equal(buf_len(b), 7);
}

static void
test_printf_overflow_leaves_buffer_unchanged(void **state)
{
	struct buf *b = *state;

	assert_int_equal(buf_append_str(b, "0123456789"), 0);
	assert_int_equal(buf_printf(b, "%s", "abcdefg"), -1);
	assert_int_equal(buf_len(b), 10);
	assert_string_equal(buf_data(b), "0123456789");
	assert_int_equal(buf_printf(b, "%s", "abcdef"), 0);
	assert_string_equal(buf_data(b), "0123456789abcdef");
}

static void
test_consume_drops_leading_bytes(void **state)
{
	struct buf *b = *state;

	assert_int_equal(buf_append_str(b, "header:body"), 0);
	buf_consume(b, 7);
	assert_int_equal(buf_len(b), 4);
	assert_string_equal(buf_data(b), "body");
}

static void
test_consume_past_length_empties(void **state)
{
	struct buf *b = *state;

	assert_int_equal(buf_append_str(b, "abc"), 0);
	buf_consume(b, 100);
	assert_int_equal(buf_len(b), 0);
	assert_string_equal(buf_data(b), "");
}

static void
test_consume_frees_room_under_max(void **state)
{
	struct buf *b = *state;
	char fill[TEST_BUF_MAX_BYTES];

	memset(fill, 'a', sizeof(fill));
	assert_int_equal(buf_append(b, fill, sizeof(fill)), 0);
	buf_consume(b, 3);
	assert_int_equal(buf_append_str(b, "xyz"), 0);
	assert_int_equal(buf_append_str(b, "!"), -1);
	assert_string_equal(buf_data(b), "aaaaaaaaaaaaaxyz");
}

static void
test_steal_hands_over_contents_and_empties(void **state)
{
	struct buf *b = *state;
	size_t len = 0;
	char *s;

	assert_int_equal(buf_append_str(b, "secret"), 0);
	s = buf_steal(b, &len);
	assert_non_null(s);
	assert_int_equal(len, 6);
	assert_string_equal(s, "secret");
	assert_int_equal(buf_len(b), 0);
	assert_string_equal(buf_data(b), "");
	assert_int_equal(buf_append_str(b, "again"), 0);
	assert_string_equal(buf_data(b), "again");
	assert_string_equal(s, "secret");
	free(s);
}

static void
test_reset_empties_and_keeps_max(void **state)
{
	struct buf *b = *state;

	assert_int_equal(buf_append_str(b, "abc"), 0);
	buf_reset(b);
	assert_int_equal(buf_len(b), 0);
	assert_string_equal(buf_data(b), "");
	assert_int_equal(buf_max(b), TEST_BUF_MAX_BYTES);
}

static void
test_secret_buffer_behaves_like_any_other(void **state)
{
	struct buf *b = buf_new(256);

	(void)state;
	assert_non_null(b);
	buf_set_secret(b);
	for (int i = 0; i < 20; i++)
		assert_int_equal(buf_append_str(b, "key-"), 0);
	assert_int_equal(buf_len(b), 80);
	assert_memory_equal(buf_data(b), "key-key-", 8);
	buf_consume(b, 76);
	assert_string_equal(buf_data(b), "key-");
	buf_reset(b);
	assert_string_equal(buf_data(b), "");
	buf_free(b);
}

/* Reads past the NUL on purpose: the bytes a consume vacated are still
 * inside the allocation, and must no longer hold the secret. */
static void
test_secret_consume_wipes_vacated_bytes(void **state)
{
	struct buf *b = *state;
	const char *d;

	buf_set_secret(b);
	assert_int_equal(buf_append_str(b, "abcdefgh"), 0);
	buf_consume(b, 4);
	d = buf_data(b);
	assert_string_equal(d, "efgh");
	for (size_t i = 4; i < 8; i++)
		assert_int_equal(d[i], '\0');
}

static void
test_free_accepts_null(void **state)
{
	(void)state;
	buf_free(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_buffer_is_empty_and_terminated, setup_buf, teardown_buf),
		cmocka_unit_test_setup_teardown(test_append_up_to_max_is_accepted, setup_buf, teardown_buf),
		cmocka_unit_test_setup_teardown(test_append_past_max_is_refused_and_leaves_buffer_unchanged, setup_buf, teardown_buf),
		cmocka_unit_test_setup_teardown(test_append_one_byte_to_full_buffer_is_refused, setup_buf, teardown_buf),
		cmocka_unit_test_setup_teardown(test_append_huge_length_does_not_wrap, setup_buf, teardown_buf),
		cmocka_unit_test(test_growth_keeps_earlier_bytes),
		cmocka_unit_test(test_zero_max_buffer_refuses_every_byte),
		cmocka_unit_test_setup_teardown(test_printf_appends_formatted_text, setup_buf, teardown_buf),
		cmocka_unit_test_setup_teardown(test_printf_overflow_leaves_buffer_unchanged, setup_buf, teardown_buf),
		cmocka_unit_test_setup_teardown(test_consume_drops_leading_bytes, setup_buf, teardown_buf),
		cmocka_unit_test_setup_teardown(test_consume_past_length_empties, setup_buf, teardown_buf),
		cmocka_unit_test_setup_teardown(test_consume_frees_room_under_max, setup_buf, teardown_buf),
		cmocka_unit_test_setup_teardown(test_steal_hands_over_contents_and_empties, setup_buf, teardown_buf),
		cmocka_unit_test_setup_teardown(test_reset_empties_and_keeps_max, setup_buf, teardown_buf),
		cmocka_unit_test(test_secret_buffer_behaves_like_any_other),
		cmocka_unit_test_setup_teardown(test_secret_consume_wipes_vacated_bytes, setup_buf, teardown_buf),
		cmocka_unit_test(test_free_accepts_null),
	};

	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
