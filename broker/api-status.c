/* The control socket's status request. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/api.h"
#include "broker/daemon.h"
#include "broker/kernel.h"
#include "broker/metrics.h"
#include "broker/privsep.h"
#include "broker/reload.h"
#include "broker/sandbox.h"
#include "broker/warm.h"
#include "common/log.h"
#include "common/wire.h"
#include "common/xmalloc.h"
#include "egress-proxy/ledger.h"

/* A status waiting for the monitor's word on the firewall. One request
 * in flight serves every status that comes meanwhile: a user who asks
 * and hangs up in a loop would otherwise queue a request a status behind
 * the monitor's backlog (each one small and always kept, their sum not). */
struct api_status_wait {
	struct api_pending *p;
	struct api_status_wait *next;
};

/* One counter of the status answer. */
static Corral__StatusReply__CountersEntry *
api_status_counter(const char *name, uint64_t value)
{
	Corral__StatusReply__CountersEntry *e = xmalloc(sizeof(*e));

	corral__status_reply__counters_entry__init(e);
	e->key = xstrdup(name);
	e->value = value;
	return e;
}

/* The counts since the start and the ledger's health, for status --json. */
static void
api_status_counters(struct daemon *d, Corral__StatusReply *r)
{
	struct metrics_summary sum;
	struct ledger_stats ls = { 0 };

	metrics_summary(d, &sum);
	const struct { const char *name; uint64_t value; } counts[] = {
		{ "creates", sum.creates }, { "connections_allowed", sum.connections_allowed },
		{ "connections_refused", sum.connections_refused }, { "dns_refused", sum.dns_refused },
		{ "bytes_up", sum.bytes_up }, { "bytes_down", sum.bytes_down },
		{ "tunnels_open", sum.tunnels_open },
		{ "warm_wanted", warm_wanted_total(d) }, { "warm_ready", warm_count(d, NULL, true) },
		{ "warm_building", warm_building(d) },
	};
	size_t n = sizeof(counts) / sizeof(counts[0]);

	r->started_at_us = sum.started_us;
	r->counters = xcalloc(n, sizeof(*r->counters));
	for (size_t i = 0; i < n; i++)
		r->counters[r->n_counters++] = api_status_counter(counts[i].name, counts[i].value);
	if (d->ledger != NULL)
		ledger_stats(d->ledger, &ls);
	r->ledger_ok = d->ledger != NULL && ledger_ok(d->ledger);
	r->ledger_queued_bytes = ls.queued_bytes;
	r->ledger_refused_records = ls.refused_records;
}

/* Answers P with the status, FIREWALL ("Firewall: ...", taken) its last
 * layer line. */
static void
api_status_send(struct daemon *d, struct api_pending *p, char *firewall)
{
	char lines[KERNEL_LAYERS][KERNEL_LAYER_LINE_MAX_BYTES];
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	Corral__StatusReply *r = xmalloc(sizeof(*r));

	corral__status_reply__init(r);
	r->version = xstrdup(PACKAGE_VERSION);
	r->sandboxes = sandbox_count(d);
	kernel_layers(lines);
	r->layers = xcalloc(KERNEL_LAYERS + 1, sizeof(*r->layers));
	for (size_t i = 0; i < KERNEL_LAYERS; i++)
		r->layers[r->n_layers++] = xstrdup(lines[i]);
	r->layers[r->n_layers++] = firewall;
	r->firewall = xstrdup(firewall + strlen("Firewall: "));
	api_status_counters(d, r);
	r->reload_at_us = d->reload.at_us;
	r->reload_ok = d->reload.ok;
	r->reload_error = xstrdup(d->reload.error != NULL ? d->reload.error : "");
	r->profiles_version = d->profiles_version;
	resp.response_case = CORRAL__RESPONSE__RESPONSE_STATUS;
	resp.status = r;
	api_pending_reply(p, &resp);
	api_response_clear(&resp);
}

/* Answers P with the firewall's LINE, or why there is none. */
static void
api_status_answer(struct daemon *d, struct api_pending *p, const char *line, const char *why)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	char *firewall;

	if (d->closing) {
		/* What a status reads may be gone already. */
		api_error(&resp, WIRE_ERR_UNAVAILABLE, "corrald is stopping");
		api_pending_reply(p, &resp);
		api_response_clear(&resp);
		return;
	}
	if (line != NULL)
		xasprintf(&firewall, "Firewall: %s", line);
	else
		xasprintf(&firewall, "Firewall: unknown (%s)", why);
	api_status_send(d, p, firewall);
}

/* The monitor's line on the firewall: every status waiting hears it. */
static void
api_status_on_firewall(const char *line, const char *why, void *arg)
{
	struct daemon *d = arg;
	struct api_status_wait *w = d->status_waits, *next;

	d->status_waits = NULL;
	for (; w != NULL; w = next) {
		next = w->next;
		api_status_answer(d, w->p, line, why);
		free(w);
	}
}

void
api_status(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    struct api_pending *p)
{
	struct api_status_wait *w;
	char *firewall, *err = NULL;
	bool asked = d->status_waits != NULL;

	(void)caller;
	(void)req;
	if (!d->sandboxes_ok) {
		xasprintf(&firewall, "Firewall: unknown (sandboxes unavailable: %s)",
		    d->monitor_why);
		api_status_send(d, p, firewall);
		return;
	}
	w = xmalloc(sizeof(*w));
	w->p = p;
	w->next = d->status_waits;
	d->status_waits = w;
	/* Asked of the monitor without waiting: it may be busy building. */
	if (!asked && privsep_firewall_async(d->privsep, api_status_on_firewall, d, &err) == -1) {
		api_status_on_firewall(NULL, err, d);
		free(err);
	}
}

int
api_metrics(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp)
{
	Corral__MetricsReply *r;
	char *text;

	(void)req;
	/* Counts over every user's sandboxes: an operator's. */
	if (caller->uid != 0) {
		api_error(resp, WIRE_ERR_PERMISSION, "metrics are root's (or scrape metrics.listen)");
		return 0;
	}
	if ((text = metrics_text(d)) == NULL) {
		api_error(resp, WIRE_ERR_INTERNAL, "the metrics could not be rendered");
		return 0;
	}
	r = xmalloc(sizeof(*r));
	corral__metrics_reply__init(r);
	r->text = text;
	resp->response_case = CORRAL__RESPONSE__RESPONSE_METRICS;
	resp->metrics = r;
	return 0;
}

/* LIST (N texts) as a repeated field's malloc'd copy. */
static char **
api_texts(char *const *list, size_t n)
{
	char **out = xcalloc(n + 1, sizeof(*out));

	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(list[i]);
	return out;
}

int
api_reload(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp)
{
	Corral__ReloadReply *r;
	struct reload_result res;

	/* It changes what every user's sandboxes may reach: an operator's. */
	if (caller->uid != 0) {
		api_error(resp, WIRE_ERR_PERMISSION, "reload is root's (or SIGHUP to corrald)");
		return 0;
	}
	log_info("reload asked by pid %d", (int)caller->pid);
	(void)daemon_reload(d, req->reload->close_revoked, &res);
	r = xmalloc(sizeof(*r));
	corral__reload_reply__init(r);
	r->ok = res.ok;
	r->errors = api_texts(res.errors, res.nerrors);
	r->n_errors = res.nerrors;
	r->restart_keys = api_texts(res.restart_keys, res.nrestart_keys);
	r->n_restart_keys = res.nrestart_keys;
	r->profiles_version = res.version;
	r->sandboxes_updated = res.sandboxes_updated;
	r->tunnels_closed = (uint32_t)res.tunnels_closed;
	reload_result_clear(&res);
	resp->response_case = CORRAL__RESPONSE__RESPONSE_RELOAD;
	resp->reload = r;
	return 0;
}
