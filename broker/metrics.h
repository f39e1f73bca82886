/* corrald's metrics (corrald(8), "METRICS"): what its sandboxes, its proxy
 * and its ledger do, as counters a scraper reads. Most are counted from
 * the ledger's records as they are written (one place sees every
 * decision), the rest read when asked (sandboxes by state, open tunnels,
 * the ledger's queue). Exposed by `corral metrics` on the control socket
 * and, when metrics.listen is set, over HTTP on a loopback address
 * (GET /metrics), both in the Prometheus text format. */
#ifndef CORRAL_BROKER_METRICS_H
#define CORRAL_BROKER_METRICS_H

#include <stdint.h>

struct daemon;

/* Counters status shows (corral status --json), from the same counts. */
struct metrics_summary {
	int64_t started_us;             /* when corrald started */
	uint64_t creates;               /* sandboxes made since the start */
	uint64_t connections_allowed;   /* connect records, allowed */
	uint64_t connections_refused;   /* ... refused */
	uint64_t dns_refused;           /* names the DNS stub refused */
	uint64_t bytes_up, bytes_down;  /* through tunnels that closed */
	uint64_t tunnels_open;
};

/* Makes D's metrics and watches D's ledger for them; opens the HTTP
 * listener when the configuration names one. -1 (logged) on failure. */
int metrics_start(struct daemon *d);
/* Closes the listener and frees the metrics; NULL metrics is fine. */
void metrics_stop(struct daemon *d);

/* A create ended after SECONDS: RESULT is "created", "refused" (the
 * request was refused) or "failed" (the build failed). */
void metrics_create_done(struct daemon *d, const char *result, double seconds);
/* A shell run ended: OUTCOME is "exited", "signaled", "timed_out" or
 * "failed" (no process could be made for it). */
void metrics_run_done(struct daemon *d, const char *outcome);

/* The exposition text (free() it); NULL when out of memory. */
char *metrics_text(struct daemon *d);
void metrics_summary(struct daemon *d, struct metrics_summary *out);

#endif
