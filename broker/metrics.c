/* corrald's metrics: the families, the ledger's records counted into them,
 * and the HTTP listener. See metrics.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "broker/bypass.h"
#include "broker/conf.h"
#include "broker/daemon.h"
#include "broker/metrics-http.h"
#include "broker/metrics.h"
#include "broker/privsep.h"
#include "broker/sandbox.h"
#include "broker/warm.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/timeutil.h"
#include "egress-proxy/ledger.h"
#include "egress-proxy/proxy.h"

#define METRICS_TEXT_MAX_BYTES (1024 * 1024)

struct broker_metrics {
	struct metrics *m;
	struct metrics_http *http;
	struct metric_series *start_time, *sandboxes_ready, *sandboxes_creating, *tunnels_open;
	struct metric_series *warm_ready, *warm_building;
	struct metric_series *ledger_queued, *ledger_refused, *bytes_up, *bytes_down;
	struct metric_family *creates, *connections, *dns, *unix_sockets, *lifecycle, *runs, *bypass;
	struct metric_family *inbound;
	struct metric_family *requests;
	struct metric_series *create_seconds, *monitor_seconds;
	uint64_t ledger_refused_seen;   /* the ledger's count at the last render */
	struct metric_series *bypass_lost;
	uint64_t bypass_lost_seen;      /* the bypass reader's count at the last render */
	struct metrics_summary sum;
};

/* Seconds buckets: creates take milliseconds to a second, the monitor's
 * round trips microseconds to milliseconds. */
static const double metrics_create_bounds[] = { 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5 };
static const double metrics_monitor_bounds[] = { 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5 };

/* A string value for a label: "" for null. */
static const char *
metrics_label(const char *s)
{
	return s != NULL ? s : "";
}

static const char *
metrics_decision(enum ledger_decision d)
{
	return d == LEDGER_DECISION_ALLOW ? "allow" : d == LEDGER_DECISION_DENY ? "deny" : "";
}

/* Counts one ledger record (written or not: a refusal the ledger could
 * not take still happened, and was refused). */
static void
metrics_on_record(const struct ledger_record *rec, bool written, void *arg)
{
	struct broker_metrics *bm = arg;
	const char *decision = metrics_decision(rec->decision);

	(void)written;
	switch (rec->event) {
	case LEDGER_EVENT_CONNECT:
		metric_add(metric_series(bm->connections, decision, metrics_label(rec->reason)), 1);
		if (rec->decision == LEDGER_DECISION_ALLOW)
			bm->sum.connections_allowed++;
		else
			bm->sum.connections_refused++;
		break;
	case LEDGER_EVENT_CLOSE:
		if (rec->bytes_up > 0) {
			metric_add(bm->bytes_up, (uint64_t)rec->bytes_up);
			bm->sum.bytes_up += (uint64_t)rec->bytes_up;
		}
		if (rec->bytes_down > 0) {
			metric_add(bm->bytes_down, (uint64_t)rec->bytes_down);
			bm->sum.bytes_down += (uint64_t)rec->bytes_down;
		}
		break;
	case LEDGER_EVENT_DNS:
		metric_add(metric_series(bm->dns, decision, metrics_label(rec->reason)), 1);
		if (rec->decision == LEDGER_DECISION_DENY)
			bm->sum.dns_refused++;
		break;
	case LEDGER_EVENT_UNIX:
		metric_add(metric_series(bm->unix_sockets, decision, NULL), 1);
		break;
	case LEDGER_EVENT_LIFECYCLE:
		metric_add(metric_series(bm->lifecycle, metrics_label(rec->reason), NULL), 1);
		break;
	case LEDGER_EVENT_BYPASS:
		metric_add(metric_series(bm->bypass, metrics_label(rec->reason), NULL), 1);
		break;
	case LEDGER_EVENT_INBOUND:
		if (rec->decision != LEDGER_DECISION_NONE)      /* the opening record */
			metric_add(metric_series(bm->inbound, decision, metrics_label(rec->reason)), 1);
		break;
	case LEDGER_EVENT_REQUEST:
		metric_add(metric_series(bm->requests, decision, metrics_label(rec->reason)), 1);
		break;
	}
}

/* The gauges read, not counted: before each render. */
static void
metrics_read_gauges(void *arg)
{
	struct daemon *d = arg;
	struct broker_metrics *bm = d->metrics;
	struct ledger_stats ls;
	uint64_t lost;

	metric_set(bm->sandboxes_ready, sandbox_count(d));
	metric_set(bm->sandboxes_creating, sandbox_creating_count(d));
	metric_set(bm->warm_ready, warm_count(d, NULL, true));
	metric_set(bm->warm_building, warm_building(d));
	bm->sum.tunnels_open = d->proxy != NULL ? proxy_tunnels_open(d->proxy) : 0;
	metric_set(bm->tunnels_open, (double)bm->sum.tunnels_open);
	if (d->ledger != NULL) {
		ledger_stats(d->ledger, &ls);
		metric_set(bm->ledger_queued, (double)ls.queued_bytes);
		metric_add(bm->ledger_refused, ls.refused_records - bm->ledger_refused_seen);
		bm->ledger_refused_seen = ls.refused_records;
	}
	lost = bypass_reader_lost(d->bypass) + bypass_reader_malformed(d->bypass);
	metric_add(bm->bypass_lost, lost - bm->bypass_lost_seen);
	bm->bypass_lost_seen = lost;
}

/* One series of a family without labels. */
static struct metric_series *
metrics_one(struct metric_family *f)
{
	return metric_series(f, NULL, NULL);
}

static int
metrics_families(struct broker_metrics *bm)
{
	struct metrics *m = bm->m;
	struct metric_family *sandboxes, *warm;

	metric_set(metric_series(metrics_gauge(m, "corral_build_info",
	    "corrald's version, as a label.", "version"), PACKAGE_VERSION, NULL), 1);
	bm->start_time = metrics_one(metrics_gauge(m, "corral_start_time_seconds",
	    "When corrald started, in seconds since the epoch.", NULL));
	sandboxes = metrics_gauge(m, "corral_sandboxes", "Sandboxes by state.", "state");
	bm->sandboxes_ready = metric_series(sandboxes, "ready", NULL);
	bm->sandboxes_creating = metric_series(sandboxes, "creating", NULL);
	warm = metrics_gauge(m, "corral_warm_sandboxes", "Warm sandboxes (warm_pool), by state.",
	    "state");
	bm->warm_ready = metric_series(warm, "ready", NULL);
	bm->warm_building = metric_series(warm, "building", NULL);
	bm->creates = metrics_counter(m, "corral_sandbox_creates_total",
	    "Sandbox creates that ended, by result (created, refused, failed).", "result");
	bm->create_seconds = metrics_one(metrics_histogram(m, "corral_sandbox_create_seconds",
	    "How long a create took, from the request to its answer.", NULL,
	    metrics_create_bounds, sizeof(metrics_create_bounds) / sizeof(metrics_create_bounds[0])));
	bm->tunnels_open = metrics_one(metrics_gauge(m, "corral_tunnels_open",
	    "Connections open through the egress proxy.", NULL));
	bm->connections = metrics_counter(m, "corral_connections_total",
	    "Connections judged by the egress proxy, by decision and reason.", "decision,reason");
	bm->bytes_up = metrics_one(metrics_counter(m, "corral_connection_bytes_up_total",
	    "Bytes sandboxes sent through connections that closed.", NULL));
	bm->bytes_down = metrics_one(metrics_counter(m, "corral_connection_bytes_down_total",
	    "Bytes sandboxes received through connections that closed.", NULL));
	bm->dns = metrics_counter(m, "corral_dns_queries_total",
	    "Queries the DNS stub judged, by decision and reason.", "decision,reason");
	bm->unix_sockets = metrics_counter(m, "corral_unix_connections_total",
	    "Connections to host Unix sockets, refused or listed, by decision.", "decision");
	bm->bypass = metrics_counter(m, "corral_bypass_packets_total",
	    "Packets the fence rejected outright, as bypass records, by reason.", "reason");
	bm->bypass_lost = metrics_one(metrics_counter(m, "corral_bypass_lost_total",
	    "Rejected packets with no bypass record: dropped by the kernel (the socket was "
	    "full) or unreadable.", NULL));
	bm->inbound = metrics_counter(m, "corral_inbound_connections_total",
	    "Connections from the host through corral forward, by decision and reason.",
	    "decision,reason");
	bm->requests = metrics_counter(m, "corral_requests_total",
	    "HTTP requests on connections whose TLS the proxy terminates, by decision and "
	    "reason.", "decision,reason");
	bm->runs = metrics_counter(m, "corral_runs_total",
	    "Shell runs that ended, by outcome: exited, signaled, timed_out, failed.", "outcome");
	bm->lifecycle = metrics_counter(m, "corral_lifecycle_events_total",
	    "Lifecycle records: sandboxes made, deleted, held to a limit, by reason.", "reason");
	bm->ledger_queued = metrics_one(metrics_gauge(m, "corral_ledger_queued_bytes",
	    "Ledger bytes taken, not yet on disk.", NULL));
	bm->ledger_refused = metrics_one(metrics_counter(m, "corral_ledger_refused_records_total",
	    "Records the ledger could not take (its connections were refused).", NULL));
	bm->monitor_seconds = metrics_one(metrics_histogram(m, "corral_monitor_request_seconds",
	    "Round trips of the broker's requests to its root monitor.", NULL,
	    metrics_monitor_bounds, sizeof(metrics_monitor_bounds) / sizeof(metrics_monitor_bounds[0])));
	return bm->monitor_seconds != NULL && bm->ledger_refused != NULL &&
	    bm->bypass_lost != NULL && bm->lifecycle != NULL &&
	    bm->runs != NULL && bm->tunnels_open != NULL && bm->start_time != NULL ? 0 : -1;
}

char *
metrics_text(struct daemon *d)
{
	struct buf *out;
	char *text = NULL;

	if (d->metrics == NULL || (out = buf_new(METRICS_TEXT_MAX_BYTES)) == NULL)
		return NULL;
	if (metrics_render(d->metrics->m, out) == 0)
		text = buf_steal(out, NULL);
	buf_free(out);
	return text;
}

/* The text the HTTP listener serves. */
static char *
metrics_http_text(void *arg)
{
	return metrics_text(arg);
}

/* A request to the monitor took SECONDS, round trip. */
static void
metrics_on_monitor_answer(double seconds, void *arg)
{
	struct daemon *d = arg;

	if (d->metrics != NULL)
		metric_observe(d->metrics->monitor_seconds, seconds);
}

int
metrics_start(struct daemon *d)
{
	struct broker_metrics *bm = calloc(1, sizeof(*bm));

	if (bm == NULL || (bm->m = metrics_new()) == NULL) {
		free(bm);
		log_error("metrics: out of memory");
		return -1;
	}
	d->metrics = bm;
	if (metrics_families(bm) == -1) {
		log_error("metrics: out of memory");
		return -1;
	}
	bm->sum.started_us = time_now_us();
	metric_set(bm->start_time, (double)bm->sum.started_us / 1e6);
	metrics_on_render(bm->m, metrics_read_gauges, d);
	if (d->ledger != NULL)
		ledger_observe(d->ledger, metrics_on_record, bm);
	if (d->privsep != NULL)
		privsep_on_answer(d->privsep, metrics_on_monitor_answer, d);
	if (d->cfg->metrics_listen != NULL &&
	    (bm->http = metrics_http_start(d->base, d->cfg->metrics_listen, metrics_http_text,
	    d)) == NULL)
		return -1;
	return 0;
}

void
metrics_stop(struct daemon *d)
{
	struct broker_metrics *bm = d->metrics;

	if (bm == NULL)
		return;
	if (d->ledger != NULL)
		ledger_observe(d->ledger, NULL, NULL);
	if (d->privsep != NULL)
		privsep_on_answer(d->privsep, NULL, NULL);
	metrics_http_stop(bm->http);
	metrics_free(bm->m);
	free(bm);
	d->metrics = NULL;
}

void
metrics_create_done(struct daemon *d, const char *result, double seconds)
{
	if (d->metrics == NULL)
		return;
	metric_add(metric_series(d->metrics->creates, result, NULL), 1);
	metric_observe(d->metrics->create_seconds, seconds);
	if (strcmp(result, "created") == 0)
		d->metrics->sum.creates++;
}

void
metrics_run_done(struct daemon *d, const char *outcome)
{
	if (d->metrics != NULL)
		metric_add(metric_series(d->metrics->runs, outcome, NULL), 1);
}

void
metrics_summary(struct daemon *d, struct metrics_summary *out)
{
	memset(out, 0, sizeof(*out));
	if (d->metrics == NULL)
		return;
	metrics_read_gauges(d);
	*out = d->metrics->sum;
}
