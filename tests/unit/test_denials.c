/* Unit tests for egress-proxy/denials: merging equal refusals, keeping the
 * newest entries, the since filter, and cutting long texts. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "egress-proxy/denials.h"

#define TEST_RING_ENTRIES 4
#define TEST_OUT_MAX 16
#define TEST_LONG_BYTES 1000            /* past DENIAL_TEXT_MAX_BYTES */

static int
setup_ring(void **state)
{
	*state = denial_ring_new(TEST_RING_ENTRIES);
	return *state == NULL ? -1 : 0;
}

static int
teardown_ring(void **state)
{
	denial_ring_free(*state);
	return 0;
}

/* Everything in the ring, oldest first, into OUT; returns how many. */
static size_t
all(const struct denial_ring *r, struct denial *out)
{
	return denial_ring_since(r, INT64_MIN, out, TEST_OUT_MAX);
}

static void
test_equal_refusals_in_a_row_are_merged(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];

	denial_ring_add(r, 100, "evil.example", 443, "/usr/bin/curl", 10, "no_matching_entry");
	denial_ring_add(r, 200, "evil.example", 443, "/usr/bin/curl", 11, "no_matching_entry");
	denial_ring_add(r, 300, "evil.example", 443, "/usr/bin/curl", 12, "no_matching_entry");
	assert_int_equal(all(r, out), 1);
	assert_int_equal(out[0].count, 3);
	assert_int_equal(out[0].first_ts_us, 100);
	assert_int_equal(out[0].ts_us, 300);
	assert_int_equal(out[0].pid, 12);
	assert_string_equal(out[0].host, "evil.example");
	assert_int_equal(out[0].port, 443);
	assert_string_equal(out[0].binary, "/usr/bin/curl");
	assert_string_equal(out[0].reason, "no_matching_entry");
}

static void
test_refusals_differing_in_any_key_are_not_merged(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];

	denial_ring_add(r, 1, "a.example", 443, "/bin/x", 1, "r");
	denial_ring_add(r, 2, "b.example", 443, "/bin/x", 1, "r");
	denial_ring_add(r, 3, "b.example", 80, "/bin/x", 1, "r");
	denial_ring_add(r, 4, "b.example", 80, "/bin/y", 1, "r");
	assert_int_equal(all(r, out), 4);
	denial_ring_add(r, 5, "b.example", 80, "/bin/y", 1, "s");
	assert_int_equal(all(r, out), 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(out[i].count, 1);
	assert_string_equal(out[3].reason, "s");
}

static void
test_only_the_newest_entry_absorbs_a_repeat(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];

	denial_ring_add(r, 1, "a.example", 443, "", -1, "r");
	denial_ring_add(r, 2, "b.example", 443, "", -1, "r");
	denial_ring_add(r, 3, "a.example", 443, "", -1, "r");
	assert_int_equal(all(r, out), 3);
	assert_int_equal(out[0].count, 1);
	assert_int_equal(out[2].count, 1);
}

static void
test_wraparound_keeps_the_newest_entries(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];
	char host[32];

	for (int i = 0; i < 10; i++) {
		snprintf(host, sizeof(host), "h%d.example", i);
		denial_ring_add(r, i, host, 443, NULL, -1, "r");
	}
	assert_int_equal(all(r, out), TEST_RING_ENTRIES);
	for (int i = 0; i < TEST_RING_ENTRIES; i++) {
		snprintf(host, sizeof(host), "h%d.example", 10 - TEST_RING_ENTRIES + i);
		assert_string_equal(out[i].host, host);
		assert_int_equal(out[i].ts_us, 10 - TEST_RING_ENTRIES + i);
	}
}

static void
test_since_includes_the_boundary_and_excludes_before(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];

	denial_ring_add(r, 1000, "a.example", 443, NULL, -1, "r");
	denial_ring_add(r, 1999, "b.example", 443, NULL, -1, "r");
	denial_ring_add(r, 2000, "c.example", 443, NULL, -1, "r");
	denial_ring_add(r, 3000, "d.example", 443, NULL, -1, "r");
	assert_int_equal(denial_ring_since(r, 2000, out, TEST_OUT_MAX), 2);
	assert_string_equal(out[0].host, "c.example");
	assert_string_equal(out[1].host, "d.example");
	assert_int_equal(denial_ring_since(r, 2001, out, TEST_OUT_MAX), 1);
	assert_int_equal(denial_ring_since(r, 3001, out, TEST_OUT_MAX), 0);
}

static void
test_since_counts_only_what_happened_since(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];

	denial_ring_add(r, 1000, "a.example", 443, NULL, -1, "r");
	denial_ring_add(r, 2000, "a.example", 443, NULL, -1, "r");
	denial_ring_add(r, 3000, "a.example", 443, NULL, -1, "r");
	denial_ring_add(r, 5000, "a.example", 443, NULL, -1, "r");
	assert_int_equal(denial_ring_since(r, 4000, out, TEST_OUT_MAX), 1);
	assert_int_equal(out[0].count, 1);
	assert_int_equal(out[0].first_ts_us, 5000);
	assert_int_equal(denial_ring_since(r, 2000, out, TEST_OUT_MAX), 1);
	assert_int_equal(out[0].count, 3);
	assert_int_equal(out[0].first_ts_us, 2000);
	assert_int_equal(out[0].ts_us, 5000);
}

static void
test_a_long_run_of_repeats_is_counted_whole(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];

	/* More repeats than one entry holds times for: they take several
	 * entries, and are answered as one. */
	for (int i = 0; i < 100; i++)
		denial_ring_add(r, 10 + i, "a.example", 443, NULL, i, "r");
	assert_int_equal(all(r, out), 1);
	assert_int_equal(out[0].count, 100);
	assert_int_equal(out[0].first_ts_us, 10);
	assert_int_equal(out[0].pid, 99);
	assert_int_equal(denial_ring_since(r, 60, out, TEST_OUT_MAX), 1);
	assert_int_equal(out[0].count, 50);
}

static void
test_since_with_small_max_answers_the_newest_oldest_first(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];

	denial_ring_add(r, 1, "a.example", 443, NULL, -1, "r");
	denial_ring_add(r, 2, "b.example", 443, NULL, -1, "r");
	denial_ring_add(r, 3, "c.example", 443, NULL, -1, "r");
	assert_int_equal(denial_ring_since(r, 0, out, 2), 2);
	assert_string_equal(out[0].host, "b.example");
	assert_string_equal(out[1].host, "c.example");
	assert_int_equal(denial_ring_since(r, 0, out, 0), 0);
}

static void
test_empty_ring_answers_nothing(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];

	assert_int_equal(all(r, out), 0);
}

static void
test_null_texts_are_empty(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];

	denial_ring_add(r, 1, NULL, 0, NULL, -1, NULL);
	assert_int_equal(all(r, out), 1);
	assert_string_equal(out[0].host, "");
	assert_string_equal(out[0].binary, "");
	assert_string_equal(out[0].reason, "");
	assert_int_equal(out[0].port, 0);
}

static void
test_long_text_is_cut_to_fit(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];
	char long_host[TEST_LONG_BYTES + 1];

	memset(long_host, 'x', TEST_LONG_BYTES);
	long_host[TEST_LONG_BYTES] = '\0';
	denial_ring_add(r, 1, long_host, 443, long_host, -1, long_host);
	assert_int_equal(all(r, out), 1);
	assert_int_equal(strlen(out[0].host), DENIAL_TEXT_MAX_BYTES - 1);
	assert_int_equal(strlen(out[0].binary), DENIAL_TEXT_MAX_BYTES - 1);
	assert_int_equal(strlen(out[0].reason), DENIAL_TEXT_MAX_BYTES - 1);
	assert_memory_equal(out[0].host, long_host, DENIAL_TEXT_MAX_BYTES - 1);
}

static void
test_cut_does_not_split_a_utf8_character(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];
	char host[TEST_LONG_BYTES + 1];
	size_t n = DENIAL_TEXT_MAX_BYTES - 2;   /* the 3-byte "€" after them straddles the cut */

	memset(host, 'x', n);
	for (size_t i = n; i + 3 <= TEST_LONG_BYTES; i += 3)
		memcpy(host + i, "\xe2\x82\xac", 3);
	host[n + (TEST_LONG_BYTES - n) / 3 * 3] = '\0';
	denial_ring_add(r, 1, host, 443, NULL, -1, "r");
	all(r, out);
	assert_int_equal(strlen(out[0].host), n);
	assert_memory_equal(out[0].host, host, n);
}

static void
test_texts_equal_after_the_cut_are_merged(void **state)
{
	struct denial_ring *r = *state;
	struct denial out[TEST_OUT_MAX];
	char a[TEST_LONG_BYTES + 1], b[TEST_LONG_BYTES + 1];

	memset(a, 'x', TEST_LONG_BYTES);
	a[TEST_LONG_BYTES] = '\0';
	memcpy(b, a, sizeof(b));
	b[TEST_LONG_BYTES - 1] = 'y';
	denial_ring_add(r, 1, a, 443, NULL, -1, "r");
	denial_ring_add(r, 2, b, 443, NULL, -1, "r");
	assert_int_equal(all(r, out), 1);
	assert_int_equal(out[0].count, 2);
}

static void
test_ring_of_zero_entries_is_refused(void **state)
{
	(void)state;
	assert_null(denial_ring_new(0));
	denial_ring_free(NULL);
}

#define RING_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup_ring, teardown_ring)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		RING_TEST(test_equal_refusals_in_a_row_are_merged),
		RING_TEST(test_refusals_differing_in_any_key_are_not_merged),
		RING_TEST(test_only_the_newest_entry_absorbs_a_repeat),
		RING_TEST(test_wraparound_keeps_the_newest_entries),
		RING_TEST(test_since_includes_the_boundary_and_excludes_before),
		RING_TEST(test_since_counts_only_what_happened_since),
		RING_TEST(test_a_long_run_of_repeats_is_counted_whole),
		RING_TEST(test_since_with_small_max_answers_the_newest_oldest_first),
		RING_TEST(test_empty_ring_answers_nothing),
		RING_TEST(test_null_texts_are_empty),
		RING_TEST(test_long_text_is_cut_to_fit),
		RING_TEST(test_cut_does_not_split_a_utf8_character),
		RING_TEST(test_texts_equal_after_the_cut_are_merged),
		cmocka_unit_test(test_ring_of_zero_entries_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
