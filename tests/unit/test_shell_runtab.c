/* Unit tests for broker/runtab: run ids and serials, kept output and
 * offsets, late output, the table's bounds, watchers. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "broker/runtab.h"

#define TEST_NOW_US INT64_C(1700000000000000)
#define TEST_WATCHER_INIT { .w = { test_on_output, test_on_done, NULL } }

/* A watcher that counts what it hears. */
struct test_watcher {
	struct run_watcher w;
	uint64_t next_offset;
	size_t bytes;
	int done;
};

static void
test_on_output(struct run_watcher *w, uint64_t offset, const uint8_t *data, size_t len)
{
	struct test_watcher *t = (struct test_watcher *)w;

	assert_int_equal(offset, t->next_offset);
	t->next_offset = offset + len;
	t->bytes += len;
}

static void
test_on_done(struct run_watcher *w, struct run *r)
{
	((struct test_watcher *)w)->done++;
}

static struct run *
add(struct runtab *t, const char *id)
{
	struct run *r = runtab_add(t, id, "main", "true", 120, TEST_NOW_US);

	assert_non_null(r);
	return r;
}

static void
finish(struct run *r, int code)
{
	struct run_result res = { .exit_code = code };

	run_finish(r, &res, NULL);
}

/* A fresh table T holding one run "a", watched by TW. */
static struct run *
watched_run(struct runtab *t, struct test_watcher *tw)
{
	struct run *r;

	runtab_init(t);
	r = add(t, "a");
	run_watch(r, &tw->w);
	return r;
}

/* A fresh table T filled with runs r0, r1, ...; finished ones if FINISHED. */
static void
fill(struct runtab *t, bool finished)
{
	char id[16];

	runtab_init(t);
	for (int i = 0; i < RUNTAB_RUNS_MAX; i++) {
		snprintf(id, sizeof(id), "r%d", i);
		if (finished)
			finish(add(t, id), 0);
		else
			add(t, id);
	}
}

static void
test_find_returns_the_run_with_that_id(void **state)
{
	struct runtab t;

	runtab_init(&t);
	add(&t, "a");
	add(&t, "b");
	assert_string_equal(runtab_find(&t, "b")->id, "b");
	assert_null(runtab_find(&t, "c"));
	runtab_clear(&t);
}

static void
test_output_is_read_back_from_any_offset(void **state)
{
	struct runtab t;
	struct run *r;
	uint8_t dst[16];
	uint64_t at;
	size_t n;

	runtab_init(&t);
	r = add(&t, "a");
	run_output_append(r, (const uint8_t *)"hello ", 6);
	run_output_append(r, (const uint8_t *)"world", 5);
	n = run_output_read(r, 3, dst, sizeof(dst), &at);
	assert_int_equal(at, 3);
	assert_int_equal(n, 8);
	assert_memory_equal(dst, "lo world", 8);
	assert_int_equal(run_output_read(r, 11, dst, sizeof(dst), &at), 0);
	assert_false(run_truncated(r));
	runtab_clear(&t);
}

/* Past the cap the oldest bytes go, and offsets stay those of the whole output. */
static void
test_output_past_the_cap_keeps_the_newest_bytes(void **state)
{
	struct runtab t;
	struct run *r;
	uint8_t *chunk = malloc(RUN_OUTPUT_KEEP_BYTES / 3), dst[8];
	uint64_t at;
	size_t n, total = 0;

	runtab_init(&t);
	r = add(&t, "a");
	for (int i = 0; i < 4; i++) {
		memset(chunk, 'a' + i, RUN_OUTPUT_KEEP_BYTES / 3);
		run_output_append(r, chunk, RUN_OUTPUT_KEEP_BYTES / 3);
		total += RUN_OUTPUT_KEEP_BYTES / 3;
	}
	run_output_append(r, (const uint8_t *)"END", 3);
	total += 3;
	assert_true(run_truncated(r));
	assert_int_equal(r->out.total, total);
	assert_int_equal(run_output_first(r), total - RUN_OUTPUT_KEEP_BYTES);
	n = run_output_read(r, 0, dst, 1, &at);
	assert_int_equal(n, 1);
	assert_int_equal(at, total - RUN_OUTPUT_KEEP_BYTES);
	n = run_output_read(r, total - 4, dst, sizeof(dst), &at);
	assert_int_equal(n, 4);
	assert_memory_equal(dst, "dEND", 4);
	free(chunk);
	runtab_clear(&t);
}

/* One append larger than the cap keeps its own tail. */
static void
test_a_single_huge_append_keeps_its_tail(void **state)
{
	struct runtab t;
	size_t big = RUN_OUTPUT_KEEP_BYTES + 10;
	uint8_t *chunk = calloc(1, big), dst[4];
	struct run *r;
	uint64_t at;

	memcpy(chunk + big - 4, "TAIL", 4);
	runtab_init(&t);
	r = add(&t, "a");
	run_output_append(r, chunk, big);
	assert_int_equal(run_output_read(r, big - 4, dst, 4, &at), 4);
	assert_memory_equal(dst, "TAIL", 4);
	assert_int_equal(r->out.len, RUN_OUTPUT_KEEP_BYTES);
	free(chunk);
	runtab_clear(&t);
}

/* Reads across the ring's wrap give the bytes in order. */
static void
test_a_wrapped_ring_reads_back_in_order(void **state)
{
	size_t step = 7777, total = 0, n;
	uint8_t *chunk = malloc(step), *all = malloc(RUN_OUTPUT_KEEP_BYTES);
	struct runtab t;
	struct run *r;
	uint64_t at;

	runtab_init(&t);
	r = add(&t, "a");
	while (total < RUN_OUTPUT_KEEP_BYTES * 2 + 123) {
		for (size_t i = 0; i < step; i++)
			chunk[i] = (uint8_t)((total + i) % 251);
		run_output_append(r, chunk, step);
		total += step;
	}
	n = run_output_read(r, 0, all, RUN_OUTPUT_KEEP_BYTES, &at);
	assert_int_equal(n, RUN_OUTPUT_KEEP_BYTES);
	assert_int_equal(at, total - RUN_OUTPUT_KEEP_BYTES);
	for (size_t i = 0; i < n; i++) {
		if (all[i] != (uint8_t)((at + i) % 251))
			fail_msg("byte %zu (offset %llu) is out of order", i,
			    (unsigned long long)(at + i));
	}
	free(chunk);
	free(all);
	runtab_clear(&t);
}

static void
test_watchers_hear_each_chunk_then_the_end_once(void **state)
{
	struct test_watcher tw = TEST_WATCHER_INIT;
	struct runtab t;
	struct run *r = watched_run(&t, &tw);

	run_output_append(r, (const uint8_t *)"abc", 3);
	run_output_append(r, (const uint8_t *)"de", 2);
	finish(r, 0);
	finish(r, 1);
	assert_int_equal(tw.bytes, 5);
	assert_int_equal(tw.done, 1);
	assert_null(r->watchers);
	assert_int_equal(r->result.exit_code, 0);
	runtab_clear(&t);
}

static void
test_an_unwatched_watcher_hears_nothing_more(void **state)
{
	struct test_watcher tw = TEST_WATCHER_INIT;
	struct runtab t;
	struct run *r = watched_run(&t, &tw);

	run_unwatch(r, &tw.w);
	run_output_append(r, (const uint8_t *)"abc", 3);
	finish(r, 0);
	assert_int_equal(tw.bytes, 0);
	assert_int_equal(tw.done, 0);
	runtab_clear(&t);
}

/* A full table forgets its oldest finished run to make room. */
static void
test_a_full_table_drops_the_oldest_finished_run(void **state)
{
	struct runtab t;

	fill(&t, true);
	add(&t, "new");
	assert_int_equal(t.count, RUNTAB_RUNS_MAX);
	assert_null(runtab_find(&t, "r0"));
	assert_non_null(runtab_find(&t, "r1"));
	runtab_clear(&t);
}

/* Runs in flight, or watched, are never dropped: a table of them refuses. */
static void
test_a_table_full_of_runs_in_flight_refuses(void **state)
{
	struct runtab t;

	fill(&t, false);
	assert_null(runtab_add(&t, "new", "main", "true", 1, TEST_NOW_US));
	assert_non_null(runtab_find(&t, "r0"));
	runtab_clear(&t);
}

/* The kept bytes of all runs are bounded too. */
static void
test_kept_bytes_over_the_bound_drop_old_runs(void **state)
{
	size_t per = RUN_OUTPUT_KEEP_BYTES;
	uint8_t *chunk = calloc(1, per);
	char id[16];
	struct runtab t;
	int runs = RUNTAB_KEEP_BYTES_MAX / RUN_OUTPUT_KEEP_BYTES + 2;

	runtab_init(&t);
	for (int i = 0; i < runs; i++) {
		struct run *r;

		snprintf(id, sizeof(id), "r%d", i);
		r = add(&t, id);
		run_output_append(r, chunk, per);
		finish(r, 0);
	}
	runtab_trim(&t);
	assert_true(runtab_kept_bytes(&t) <= RUNTAB_KEEP_BYTES_MAX);
	assert_null(runtab_find(&t, "r0"));
	assert_non_null(runtab_find(&t, id));
	free(chunk);
	runtab_clear(&t);
}

static void
test_remove_forgets_the_run(void **state)
{
	struct runtab t;

	runtab_init(&t);
	add(&t, "a");
	runtab_remove(&t, add(&t, "b"));
	assert_null(runtab_find(&t, "b"));
	assert_int_equal(t.count, 1);
	runtab_clear(&t);
}

static void
test_run_ids_are_short_and_plain(void **state)
{
	char longid[RUN_ID_MAX_BYTES + 2];

	assert_true(run_id_valid("build-1.2:a_b"));
	assert_false(run_id_valid(""));
	assert_false(run_id_valid("a b"));
	assert_false(run_id_valid("a/b"));
	assert_false(run_id_valid("x\n"));
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	assert_false(run_id_valid(longid));
	longid[RUN_ID_MAX_BYTES] = '\0';
	assert_true(run_id_valid(longid));
}

static void
test_an_error_ends_a_run_without_result(void **state)
{
	struct test_watcher tw = TEST_WATCHER_INIT;
	struct runtab t;
	struct run *r = watched_run(&t, &tw);

	run_finish(r, NULL, "the sandbox was deleted");
	assert_int_equal(r->state, RUN_DONE);
	assert_string_equal(r->error, "the sandbox was deleted");
	assert_int_equal(tw.done, 1);
	runtab_clear(&t);
}

/* Late output has a stream of its own: the run's output and its watchers
 * never see it, and past its cap it keeps the newest bytes. */
static void
test_late_output_is_kept_apart(void **state)
{
	struct test_watcher tw = TEST_WATCHER_INIT;
	uint8_t *chunk = malloc(RUN_LATE_KEEP_BYTES), dst[8];
	struct runtab t;
	struct run *r;
	uint64_t at;

	runtab_init(&t);
	r = add(&t, "a");
	run_output_append(r, (const uint8_t *)"out", 3);
	run_watch(r, &tw.w);
	run_late_append(r, (const uint8_t *)"late", 4);
	assert_int_equal(tw.bytes, 0);
	assert_int_equal(r->out.total, 3);
	assert_int_equal(run_late_read(r, 0, dst, sizeof(dst), &at), 4);
	assert_memory_equal(dst, "late", 4);
	memset(chunk, 'x', RUN_LATE_KEEP_BYTES);
	run_late_append(r, chunk, RUN_LATE_KEEP_BYTES);
	run_late_append(r, (const uint8_t *)"END", 3);
	assert_int_equal(r->late.total, RUN_LATE_KEEP_BYTES + 7);
	assert_int_equal(run_late_read(r, 0, dst, 1, &at), 1);
	assert_int_equal(at, 7);
	assert_int_equal(run_late_read(r, r->late.total - 3, dst, sizeof(dst), &at), 3);
	assert_memory_equal(dst, "END", 3);
	assert_int_equal(runtab_kept_bytes(&t), 3 + RUN_LATE_KEEP_BYTES);
	run_unwatch(r, &tw.w);
	free(chunk);
	runtab_clear(&t);
}

/* A serial names one run for good: an id used again after an ack is a
 * new run with a new serial, and the old one is not found. */
static void
test_serials_name_one_run_for_good(void **state)
{
	struct runtab t;
	struct run *a, *b;
	uint64_t old;

	runtab_init(&t);
	a = add(&t, "a");
	b = add(&t, "b");
	assert_true(a->serial != b->serial);
	assert_ptr_equal(runtab_find_serial(&t, b->serial), b);
	old = a->serial;
	runtab_remove(&t, a);
	assert_null(runtab_find_serial(&t, old));
	a = add(&t, "a");
	assert_true(a->serial != old);
	assert_ptr_equal(runtab_find_serial(&t, a->serial), a);
	runtab_clear(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_returns_the_run_with_that_id),
		cmocka_unit_test(test_late_output_is_kept_apart),
		cmocka_unit_test(test_serials_name_one_run_for_good),
		cmocka_unit_test(test_output_is_read_back_from_any_offset),
		cmocka_unit_test(test_output_past_the_cap_keeps_the_newest_bytes),
		cmocka_unit_test(test_a_single_huge_append_keeps_its_tail),
		cmocka_unit_test(test_a_wrapped_ring_reads_back_in_order),
		cmocka_unit_test(test_watchers_hear_each_chunk_then_the_end_once),
		cmocka_unit_test(test_an_unwatched_watcher_hears_nothing_more),
		cmocka_unit_test(test_a_full_table_drops_the_oldest_finished_run),
		cmocka_unit_test(test_a_table_full_of_runs_in_flight_refuses),
		cmocka_unit_test(test_kept_bytes_over_the_bound_drop_old_runs),
		cmocka_unit_test(test_remove_forgets_the_run),
		cmocka_unit_test(test_run_ids_are_short_and_plain),
		cmocka_unit_test(test_an_error_ends_a_run_without_result),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
