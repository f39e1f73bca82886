/* A process's metrics, in the Prometheus text exposition format (0.0.4):
 * counters, gauges and histograms, each a family of series told apart by
 * up to two labels. The modules that count hold their series (found once,
 * then bumped with no lookup); the daemon renders the whole registry for
 * `corral metrics` and its optional HTTP listener.
 *
 * Labels carry bounded vocabularies only (a decision, a reason, a state):
 * never a sandbox's or a host's name, so the number of series stays small.
 * Past METRICS_SERIES_MAX series a family answers NULL, and bumping NULL
 * does nothing: a metric may be lost, never the daemon.
 *
 * Used from one thread (the broker's loop); no locks. */
#ifndef CORRAL_METRICS_H
#define CORRAL_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define METRICS_SERIES_MAX 256          /* series of one family */
#define METRICS_BUCKETS_MAX 16          /* a histogram's bounds, +Inf aside */
#define METRICS_NAME_MAX_BYTES 64
#define METRICS_LABEL_MAX_BYTES 64      /* a label's value, NUL included */

struct metrics;
struct metric_family;
struct metric_series;
struct buf;

/* An empty registry; NULL if out of memory. */
struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/* A family, rendered in the order made. NAME is [a-z_][a-z0-9_]*,
 * LABELS NULL, "a" or "a,b" (label names). NULL for a bad name or out of
 * memory. A histogram's BOUNDS are its buckets' upper bounds, increasing
 * (NBOUNDS at most METRICS_BUCKETS_MAX); +Inf is added. */
struct metric_family *metrics_counter(struct metrics *m, const char *name, const char *help,
    const char *labels);
struct metric_family *metrics_gauge(struct metrics *m, const char *name, const char *help,
    const char *labels);
struct metric_family *metrics_histogram(struct metrics *m, const char *name, const char *help,
    const char *labels, const double *bounds, size_t nbounds);

/* F's series with the label values V1 and V2 (as many as F has labels;
 * the others NULL), made on first use. Values longer than
 * METRICS_LABEL_MAX_BYTES - 1 are cut. NULL past METRICS_SERIES_MAX. */
struct metric_series *metric_series(struct metric_family *f, const char *v1, const char *v2);

/* A counter goes up by N; a gauge is set to V, or moved by D; a histogram
 * observes X. S NULL does nothing. */
void metric_add(struct metric_series *s, uint64_t n);
void metric_set(struct metric_series *s, double v);
void metric_move(struct metric_series *s, double d);
void metric_observe(struct metric_series *s, double x);
/* The value of a counter or gauge (a histogram's count); 0 for NULL. */
double metric_value(const struct metric_series *s);

/* Called before each render (the gauges that are read, not counted, such
 * as sandboxes by state). */
void metrics_on_render(struct metrics *m, void (*fn)(void *arg), void *arg);

/* Appends the exposition of every family to OUT; -1 when OUT is full. */
int metrics_render(struct metrics *m, struct buf *out);

#endif
