/* Tests of common/metrics: the exposition text of each kind, labels and
 * their escapes, and the bounds that keep a registry small. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/metrics.h"

#define TEST_OUT_MAX_BYTES (1024 * 1024)

static int
setup(void **state)
{
	*state = metrics_new();
	return *state == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	metrics_free(*state);
	return 0;
}

/* The registry's text, in a buffer the caller frees. */
static struct buf *
render(struct metrics *m)
{
	struct buf *out = buf_new(TEST_OUT_MAX_BYTES);

	assert_non_null(out);
	assert_int_equal(metrics_render(m, out), 0);
	return out;
}

static void
test_counters_and_gauges(void **state)
{
	struct metrics *m = *state;
	struct metric_family *t = metrics_counter(m, "corral_tunnels_total", "Tunnels judged.",
	    "decision,reason");
	struct metric_family *g = metrics_gauge(m, "corral_sandboxes", "Sandboxes.", "state");
	struct metric_family *u = metrics_counter(m, "corral_creates_total", "Creates.", NULL);
	struct buf *out;

	metric_add(metric_series(t, "allow", ""), 2);
	metric_add(metric_series(t, "deny", "host_not_allowed"), 1);
	metric_add(metric_series(t, "allow", ""), 3);
	metric_set(metric_series(g, "ready", NULL), 4);
	metric_move(metric_series(g, "ready", NULL), -1);
	metric_add(metric_series(u, NULL, NULL), 7);
	out = render(m);
	assert_string_equal(buf_data(out),
	    "# HELP corral_tunnels_total Tunnels judged.\n"
	    "# TYPE corral_tunnels_total counter\n"
	    "corral_tunnels_total{decision=\"allow\",reason=\"\"} 5\n"
	    "corral_tunnels_total{decision=\"deny\",reason=\"host_not_allowed\"} 1\n"
	    "# HELP corral_sandboxes Sandboxes.\n"
	    "# TYPE corral_sandboxes gauge\n"
	    "corral_sandboxes{state=\"ready\"} 3\n"
	    "# HELP corral_creates_total Creates.\n"
	    "# TYPE corral_creates_total counter\n"
	    "corral_creates_total 7\n");
	assert_true(metric_value(metric_series(t, "allow", "")) == 5);
	buf_free(out);
}

static void
test_histograms_count_into_cumulative_buckets(void **state)
{
	static const double bounds[] = { 0.01, 0.1, 1 };
	struct metrics *m = *state;
	struct metric_family *h = metrics_histogram(m, "corral_create_seconds", "Create time.",
	    NULL, bounds, 3);
	struct metric_series *s = metric_series(h, NULL, NULL);
	struct buf *out;

	metric_observe(s, 0.005);
	metric_observe(s, 0.01);
	metric_observe(s, 0.5);
	metric_observe(s, 3);
	out = render(m);
	assert_string_equal(buf_data(out),
	    "# HELP corral_create_seconds Create time.\n"
	    "# TYPE corral_create_seconds histogram\n"
	    "corral_create_seconds_bucket{le=\"0.01\"} 2\n"
	    "corral_create_seconds_bucket{le=\"0.1\"} 2\n"
	    "corral_create_seconds_bucket{le=\"1\"} 3\n"
	    "corral_create_seconds_bucket{le=\"+Inf\"} 4\n"
	    "corral_create_seconds_sum 3.515\n"
	    "corral_create_seconds_count 4\n");
	buf_free(out);
}

static void
test_label_values_are_escaped_and_cut(void **state)
{
	struct metrics *m = *state;
	struct metric_family *f = metrics_counter(m, "x_total", "X.", "why");
	char longv[200];
	struct buf *out;

	metric_add(metric_series(f, "a\"b\\c\nd", NULL), 1);
	memset(longv, 'v', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = '\0';
	metric_add(metric_series(f, longv, NULL), 1);
	out = render(m);
	assert_non_null(strstr(buf_data(out), "x_total{why=\"a\\\"b\\\\c\\nd\"} 1\n"));
	assert_non_null(strstr(buf_data(out), "{why=\"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\"}"));
	buf_free(out);
}

static void
test_bad_names_and_too_many_series_are_refused(void **state)
{
	static const double down[] = { 1, 0.5 };
	struct metrics *m = *state;
	struct metric_family *f = metrics_counter(m, "y_total", "Y.", "n");
	char v[16];

	assert_null(metrics_counter(m, "Bad-Name", "B.", NULL));
	assert_null(metrics_counter(m, "9lives", "B.", NULL));
	assert_null(metrics_gauge(m, "z", "Z.", "le"));
	assert_null(metrics_gauge(m, "z", "Z.", "a,b,c"));
	assert_null(metrics_histogram(m, "h", "H.", NULL, down, 2));
	for (int i = 0; i < METRICS_SERIES_MAX; i++) {
		snprintf(v, sizeof(v), "%d", i);
		assert_non_null(metric_series(f, v, NULL));
	}
	assert_null(metric_series(f, "one-more", NULL));
	metric_add(NULL, 1);    /* a lost series is no crash */
	metric_observe(NULL, 1);
	assert_true(metric_value(NULL) == 0);
}

static void
test_a_full_buffer_fails_the_render(void **state)
{
	struct metrics *m = *state;
	struct buf *out = buf_new(16);

	metric_add(metric_series(metrics_counter(m, "long_name_total", "Long.", NULL), NULL, NULL), 1);
	assert_int_equal(metrics_render(m, out), -1);
	buf_free(out);
}

static int test_renders;

static void
test_count_renders(void *arg)
{
	(void)arg;
	test_renders++;
}

static void
test_the_render_hook_runs_first(void **state)
{
	struct metrics *m = *state;

	metrics_on_render(m, test_count_renders, NULL);
	buf_free(render(m));
	buf_free(render(m));
	assert_int_equal(test_renders, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counters_and_gauges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_histograms_count_into_cumulative_buckets, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_label_values_are_escaped_and_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_names_and_too_many_series_are_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_a_full_buffer_fails_the_render, setup, teardown),
		cmocka_unit_test_setup_teardown(test_the_render_hook_runs_first, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
