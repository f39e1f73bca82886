/* corral status: is corrald there, and what does it say about itself. */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker/cli/cli.h"
#include "broker/cli/client.h"
#include "common/json.h"
#include "common/visible.h"
#include "common/timeutil.h"

#define CLI_REASON_MAX_BYTES 512

#define CLI_STATUS_JSON_MAX_BYTES (64 * 1024)      /* a status answer, escaped */

static int
cli_status_disconnected(const char *reason, bool json)
{
	struct json *j;

	if (!json) {
		printf("Status: Disconnected\nReason: %s\n", reason);
		return CLI_EXIT_FAILED;
	}
	j = json_new(CLI_STATUS_JSON_MAX_BYTES);
	json_object_begin(j);
	json_kv_string(j, "status", "disconnected");
	json_kv_string(j, "reason", reason);
	json_object_end(j);
	if (json_ok(j))
		puts(json_text(j, NULL));
	json_free(j);
	return CLI_EXIT_FAILED;
}

/* The value of counter NAME in ST; 0 when it is not there. */
static uint64_t
cli_status_counter(const Corral__StatusReply *st, const char *name)
{
	for (size_t i = 0; i < st->n_counters; i++)
		if (strcmp(st->counters[i]->key, name) == 0)
			return st->counters[i]->value;
	return 0;
}

/* "Reload: ..." (the last one, and the profiles' version in force). */
static void
cli_status_print_reload(const Corral__StatusReply *st)
{
	char when[RFC3339_US_BYTES], error[CLI_REASON_MAX_BYTES];

	if (st->reload_at_us == 0) {
		printf("Reload: none since the start (profiles version %llu)\n",
		    (unsigned long long)st->profiles_version);
		return;
	}
	time_format_rfc3339_us(st->reload_at_us, when);
	if (st->reload_ok)
		printf("Reload: ok at %s (profiles version %llu)\n", when,
		    (unsigned long long)st->profiles_version);
	else
		printf("Reload: failed at %s, nothing changed (profiles version %llu): %s\n", when,
		    (unsigned long long)st->profiles_version,
		    visible_copy(st->reload_error, error, sizeof(error)));
}

static void
cli_status_print_text(const Corral__StatusReply *st, int64_t uptime_s)
{
	printf("Status: Connected\nVersion: %s\nSandboxes: %u\n", st->version, st->sandboxes);
	if (st->started_at_us > 0)
		printf("Uptime: %llds\n", (long long)uptime_s);
	printf("Ledger: %s (%llu bytes queued, %llu records refused)\n",
	    st->ledger_ok ? "ok" : "failing: connections are refused",
	    (unsigned long long)st->ledger_queued_bytes,
	    (unsigned long long)st->ledger_refused_records);
	printf("Connections: %llu allowed, %llu refused, %llu open\n",
	    (unsigned long long)cli_status_counter(st, "connections_allowed"),
	    (unsigned long long)cli_status_counter(st, "connections_refused"),
	    (unsigned long long)cli_status_counter(st, "tunnels_open"));
	if (cli_status_counter(st, "warm_wanted") > 0)
		printf("Warm pool: %llu of %llu ready, %llu building\n",
		    (unsigned long long)cli_status_counter(st, "warm_ready"),
		    (unsigned long long)cli_status_counter(st, "warm_wanted"),
		    (unsigned long long)cli_status_counter(st, "warm_building"));
	cli_status_print_reload(st);
	for (size_t i = 0; i < st->n_layers; i++)
		printf("%s\n", st->layers[i]);
}

static void
cli_status_print_json(const Corral__StatusReply *st, int64_t uptime_s)
{
	struct json *j = json_new(CLI_STATUS_JSON_MAX_BYTES);

	json_object_begin(j);
	json_kv_string(j, "status", "connected");
	json_kv_string(j, "version", st->version);
	json_kv_int(j, "uptime_s", uptime_s);
	json_kv_uint(j, "sandboxes", st->sandboxes);
	json_key(j, "counters");
	json_object_begin(j);
	for (size_t i = 0; i < st->n_counters; i++)
		json_kv_uint(j, st->counters[i]->key, st->counters[i]->value);
	json_object_end(j);
	json_key(j, "ledger");
	json_object_begin(j);
	json_kv_bool(j, "ok", st->ledger_ok);
	json_kv_uint(j, "queued_bytes", st->ledger_queued_bytes);
	json_kv_uint(j, "refused_records", st->ledger_refused_records);
	json_object_end(j);
	json_key(j, "reload");
	json_object_begin(j);
	json_kv_int(j, "at_us", st->reload_at_us);
	json_kv_bool(j, "ok", st->reload_at_us == 0 || st->reload_ok);
	json_kv_string(j, "error", st->reload_error);
	json_kv_uint(j, "profiles_version", st->profiles_version);
	json_object_end(j);
	json_kv_string(j, "firewall", st->firewall);
	json_key(j, "layers");
	json_array_begin(j);
	for (size_t i = 0; i < st->n_layers; i++)
		json_str(j, st->layers[i]);
	json_array_end(j);
	json_object_end(j);
	if (json_ok(j))
		puts(json_text(j, NULL));
	json_free(j);
}

static int
cli_status_print(const Corral__StatusReply *st, bool json)
{
	char reason[CLI_REASON_MAX_BYTES];
	int64_t uptime_s = st->started_at_us > 0 ?
	    (time_now_us() - st->started_at_us) / 1000000 : 0;

	if (strcmp(st->version, PACKAGE_VERSION) != 0) {
		snprintf(reason, sizeof(reason), "version mismatch: corral %s, corrald %s",
		    PACKAGE_VERSION, st->version);
		return cli_status_disconnected(reason, json);
	}
	if (json)
		cli_status_print_json(st, uptime_s);
	else
		cli_status_print_text(st, uptime_s);
	return CLI_EXIT_OK;
}

int
cli_status(struct cli *cli, int argc, char **argv)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Status status = CORRAL__STATUS__INIT;
	Corral__Response *resp = NULL;
	char reason[CLI_REASON_MAX_BYTES * 2], why[CLI_REASON_MAX_BYTES];
	bool json = false;
	int fd, rc;

	if ((rc = cli_json_option(argc, argv, "status", &json)) != 0)
		return rc;
	if (optind != argc)
		return cli_usage(cli_find("status"));
	if ((fd = client_connect(cli->socket_path, reason, sizeof(reason))) == -1)
		return cli_status_disconnected(reason, json);
	req.request_case = CORRAL__REQUEST__REQUEST_STATUS;
	req.status = &status;
	rc = client_call(fd, &req, &resp, why, sizeof(why));
	close(fd);
	if (rc == -1 || resp->response_case != CORRAL__RESPONSE__RESPONSE_STATUS) {
		/* Something listens, but it does not answer as a corrald does. */
		snprintf(reason, sizeof(reason), "%s did not answer as corrald %s (%s)",
		    cli->socket_path, PACKAGE_VERSION, rc == -1 ? why : "unexpected answer");
		if (resp != NULL)
			corral__response__free_unpacked(resp, NULL);
		return cli_status_disconnected(reason, json);
	}
	rc = cli_status_print(resp->status, json);
	corral__response__free_unpacked(resp, NULL);
	return rc;
}

int
cli_metrics(struct cli *cli, int argc, char **argv)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Metrics metrics = CORRAL__METRICS__INIT;
	Corral__Response *resp;
	int rc;

	if (argc != 1)
		return cli_usage(cli_find("metrics"));
	req.request_case = CORRAL__REQUEST__REQUEST_METRICS;
	req.metrics = &metrics;
	if ((rc = cli_call(cli, &req, &resp)) != CLI_EXIT_OK ||
	    (rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_METRICS)) != CLI_EXIT_OK)
		return rc;
	fputs(resp->metrics->text, stdout);
	corral__response__free_unpacked(resp, NULL);
	return CLI_EXIT_OK;
}

int
cli_reload(struct cli *cli, int argc, char **argv)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Reload reload = CORRAL__RELOAD__INIT;
	Corral__Response *resp;
	char shown[CLI_REASON_MAX_BYTES];
	int rc;

	if (argc == 2 && strcmp(argv[1], "--close-revoked") == 0)
		reload.close_revoked = true;
	else if (argc != 1)
		return cli_usage(cli_find("reload"));
	req.request_case = CORRAL__REQUEST__REQUEST_RELOAD;
	req.reload = &reload;
	if ((rc = cli_call(cli, &req, &resp)) != CLI_EXIT_OK ||
	    (rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_RELOAD)) != CLI_EXIT_OK)
		return rc;
	if (!resp->reload->ok) {
		for (size_t i = 0; i < resp->reload->n_errors; i++)
			fprintf(stderr, "%s\n", visible_copy(resp->reload->errors[i], shown,
			    sizeof(shown)));
		rc = cli_fail("reload: nothing changed (profiles version %llu stays)",
		    (unsigned long long)resp->reload->profiles_version);
	} else {
		printf("reloaded: profiles version %llu; %u sandbox%s follow%s it; %u tunnel%s "
		    "closed\n", (unsigned long long)resp->reload->profiles_version,
		    resp->reload->sandboxes_updated, resp->reload->sandboxes_updated == 1 ? "" : "es",
		    resp->reload->sandboxes_updated == 1 ? "s" : "", resp->reload->tunnels_closed,
		    resp->reload->tunnels_closed == 1 ? "" : "s");
		for (size_t i = 0; i < resp->reload->n_restart_keys; i++)
			printf("%s changed: it takes effect when corrald starts again\n",
			    resp->reload->restart_keys[i]);
	}
	corral__response__free_unpacked(resp, NULL);
	return rc;
}
