/* Tests of broker/limitwatch: reading the cgroups' event counts, and a
 * report for each count that grew. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "broker/limitwatch.h"

struct hits {
	int calls;
	enum limitwatch_kind kind;
	uint64_t count;
};

static void
test_on_hit(enum limitwatch_kind kind, uint64_t count, void *arg)
{
	struct hits *h = arg;

	h->calls++;
	h->kind = kind;
	h->count = count;
}

/* A temporary file holding TEXT, open for reading; its path in PATH. */
static int
test_counts_file(char path[64], const char *text)
{
	int fd;

	snprintf(path, 64, "/tmp/corral-limitwatch.XXXXXX");
	assert_true((fd = mkstemp(path)) != -1);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static void
test_rewrite(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void
test_counts_are_read_by_key(void **state)
{
	(void)state;
	/* v1's memory.oom_control, v2's memory.events, pids.events. */
	assert_int_equal(limitwatch_parse("oom_kill_disable 0\nunder_oom 0\noom_kill 7\n",
	    "oom_kill"), 7);
	assert_int_equal(limitwatch_parse("low 0\nhigh 2\nmax 5\noom 3\noom_kill 2\n"
	    "oom_group_kill 0\n", "oom_kill"), 2);
	assert_int_equal(limitwatch_parse("max 12\n", "max"), 12);
	assert_int_equal(limitwatch_parse("maxima 12\n", "max"), 0);
	assert_int_equal(limitwatch_parse("", "max"), 0);
	assert_string_equal(limitwatch_reason(LIMITWATCH_MEMORY), "memory_limit");
	assert_string_equal(limitwatch_reason(LIMITWATCH_PIDS), "pids_limit");
}

static void
test_a_count_that_grew_is_reported_once(void **state)
{
	struct event_base *base = event_base_new();
	struct hits h = { 0 };
	char mem[64], pids[64];
	int mfd = test_counts_file(mem, "oom_kill_disable 0\noom_kill 4\n");
	int pfd = test_counts_file(pids, "max 0\n");
	struct limitwatch *w;

	(void)state;
	w = limitwatch_new(base, mfd, pfd, test_on_hit, &h);
	assert_non_null(w);
	/* What the count held before the watch began is not this sandbox's. */
	event_base_loop(base, EVLOOP_ONCE);
	assert_int_equal(h.calls, 0);
	test_rewrite(pids, "max 3\n");
	event_base_loop(base, EVLOOP_ONCE);
	assert_int_equal(h.calls, 1);
	assert_int_equal(h.kind, LIMITWATCH_PIDS);
	assert_int_equal(h.count, 3);
	event_base_loop(base, EVLOOP_ONCE);
	assert_int_equal(h.calls, 1);
	/* A hit just before the end is not lost. */
	test_rewrite(mem, "oom_kill_disable 0\noom_kill 5\n");
	limitwatch_free(w);
	assert_int_equal(h.calls, 2);
	assert_int_equal(h.kind, LIMITWATCH_MEMORY);
	assert_int_equal(h.count, 1);
	unlink(mem);
	unlink(pids);
	event_base_free(base);
}

/* A run marks the counts as it begins and asks at its end: a hit between
 * is seen at once, without waiting for the timer, and reported once. */
static void
test_a_mark_tells_a_hit_since(void **state)
{
	struct event_base *base = event_base_new();
	struct hits h = { 0 };
	char mem[64];
	int mfd = test_counts_file(mem, "oom_kill 2\n");
	struct limitwatch *w = limitwatch_new(base, mfd, -1, test_on_hit, &h);
	uint64_t mark;

	(void)state;
	assert_non_null(w);
	mark = limitwatch_seen(w, LIMITWATCH_MEMORY);
	assert_int_equal(mark, 2);
	assert_false(limitwatch_grew(w, LIMITWATCH_MEMORY, mark));
	assert_false(limitwatch_grew(w, LIMITWATCH_PIDS, 0));  /* not watched */
	test_rewrite(mem, "oom_kill 3\n");
	assert_true(limitwatch_grew(w, LIMITWATCH_MEMORY, mark));
	assert_int_equal(h.calls, 1);
	assert_int_equal(h.count, 1);
	assert_true(limitwatch_grew(w, LIMITWATCH_MEMORY, mark));
	assert_int_equal(h.calls, 1);
	assert_false(limitwatch_grew(NULL, LIMITWATCH_MEMORY, 0));
	assert_int_equal(limitwatch_seen(NULL, LIMITWATCH_MEMORY), 0);
	limitwatch_free(w);
	unlink(mem);
	event_base_free(base);
}

static void
test_nothing_to_watch_is_no_watch(void **state)
{
	struct event_base *base = event_base_new();
	struct hits h = { 0 };

	(void)state;
	assert_null(limitwatch_new(base, -1, -1, test_on_hit, &h));
	limitwatch_free(NULL);
	event_base_free(base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_are_read_by_key),
		cmocka_unit_test(test_a_count_that_grew_is_reported_once),
		cmocka_unit_test(test_a_mark_tells_a_hit_since),
		cmocka_unit_test(test_nothing_to_watch_is_no_watch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
