/* Verbs that ask corrald: policy get|set|update and denials. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/cli/cli.h"
#include "broker/cli/client.h"
#include "common/buf.h"
#include "common/json.h"
#include "common/timeutil.h"
#include "common/xmalloc.h"

#define CLI_LIST_MAX 64                 /* --add-endpoint, --binary, ... each */
#define CLI_POLICY_FILE_MAX_BYTES (1024 * 1024)
#define CLI_JSON_MAX_BYTES (4 * 1024 * 1024)

int
cli_call(const struct cli *cli, const Corral__Request *req, Corral__Response **resp)
{
	char why[512];

	int rc;

	if (client_request(cli->socket_path, req, resp, why, sizeof(why)) == -1)
		return cli_unreachable(why);
	if ((*resp)->response_case == CORRAL__RESPONSE__RESPONSE_ERROR) {
		/* The daemon's message names what was wrong; its code, the kind. */
		rc = cli_error((*resp)->error->code, "%s", (*resp)->error->message);
		corral__response__free_unpacked(*resp, NULL);
		*resp = NULL;
		return rc;
	}
	return CLI_EXIT_OK;
}

int
cli_expect(Corral__Response *resp, int expected)
{
	if ((int)resp->response_case == expected)
		return CLI_EXIT_OK;
	corral__response__free_unpacked(resp, NULL);
	return cli_fail("unexpected answer from corrald");
}

/* Prints a PolicyReply: its YAML, or with JSON {"sandbox", "policy"} (the
 * policy in force, as YAML text); NOTE, when not NULL, is the line for
 * people instead of the YAML. Any other answer is a protocol error. */
static int
cli_print_policy(Corral__Response *resp, const char *sandbox, bool json, const char *note)
{
	struct json *j;
	int rc;

	if ((rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_POLICY)) != CLI_EXIT_OK)
		return rc;
	if (json && (j = json_new(CLI_JSON_MAX_BYTES)) != NULL) {
		json_object_begin(j);
		json_kv_string(j, "sandbox", sandbox);
		json_kv_string(j, "policy", resp->policy->yaml);
		json_object_end(j);
		if (json_text(j, NULL) != NULL)
			puts(json_text(j, NULL));
		json_free(j);
	} else if (note != NULL) {
		printf("policy of %s %s; in force now\n", cli_text(sandbox), note);
	} else {
		fputs(resp->policy->yaml, stdout);
	}
	corral__response__free_unpacked(resp, NULL);
	return CLI_EXIT_OK;
}

int
cli_policy_get(struct cli *cli, int argc, char **argv)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__PolicyGet get = CORRAL__POLICY_GET__INIT;
	Corral__Response *resp;
	bool json = false;
	int rc;

	if ((rc = cli_json_option(argc, argv, "policy get", &json)) != 0)
		return rc;
	if (argc - optind != 1)
		return cli_usage(cli_find("policy get"));
	get.sandbox = argv[optind];
	req.request_case = CORRAL__REQUEST__REQUEST_POLICY_GET;
	req.policy_get = &get;
	if ((rc = cli_call(cli, &req, &resp)) != CLI_EXIT_OK)
		return rc;
	return cli_print_policy(resp, get.sandbox, json, NULL);
}

char *
cli_read_policy_file(const char *file)
{
	struct buf *b = buf_new(CLI_POLICY_FILE_MAX_BYTES);
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
	char chunk[8192];
	char *text = NULL;
	size_t n;
	int ok = 1;

	if (f == NULL) {
		cli_fail("%s: %s", file, strerror(errno));
		buf_free(b);
		return NULL;
	}
	while (ok && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		ok = buf_append(b, chunk, n) == 0;
	if (!ok)
		cli_fail("%s: larger than %d bytes", file, CLI_POLICY_FILE_MAX_BYTES);
	else if (ferror(f))
		cli_fail("%s: read error", file);
	else
		text = buf_steal(b, NULL);
	if (f != stdin)
		fclose(f);
	buf_free(b);
	return text;
}

int
cli_policy_set(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "close-revoked", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__PolicySet set = CORRAL__POLICY_SET__INIT;
	Corral__Response *resp;
	bool json = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if (opt == 'c')
			set.close_revoked = 1;
		else
			return cli_usage(cli_find("policy set"));
	}
	if (argc - optind != 2)
		return cli_usage(cli_find("policy set"));
	set.sandbox = argv[optind];
	/* The daemon gets the policy's content, never a path to open for us. */
	if ((set.content = cli_read_policy_file(argv[optind + 1])) == NULL)
		return CLI_EXIT_FAILED;
	req.request_case = CORRAL__REQUEST__REQUEST_POLICY_SET;
	req.policy_set = &set;
	rc = cli_call(cli, &req, &resp);
	free(set.content);
	if (rc != CLI_EXIT_OK)
		return rc;
	return cli_print_policy(resp, set.sandbox, json, "replaced");
}

/* Appends ARG to a bounded list of option values. */
static int
cli_list_add(char **list, size_t *n, char *arg, const char *option)
{
	if (*n == CLI_LIST_MAX)
		return cli_fail("too many %s options (at most %d)", option, CLI_LIST_MAX);
	list[(*n)++] = arg;
	return 0;
}

int
cli_policy_update(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rule", required_argument, NULL, 'r' },
		{ "add-endpoint", required_argument, NULL, 'a' },
		{ "binary", required_argument, NULL, 'b' },
		{ "remove-endpoint", required_argument, NULL, 'x' },
		{ "close-revoked", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	char *adds[CLI_LIST_MAX], *bins[CLI_LIST_MAX], *removes[CLI_LIST_MAX];
	Corral__PolicyUpdate up = CORRAL__POLICY_UPDATE__INIT;
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Response *resp;
	bool json = false;
	int opt, rc = 0;

	up.add_endpoints = adds;
	up.binaries = bins;
	up.remove_endpoints = removes;
	while (rc == 0 && (opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'r': up.rule = optarg; break;
		case 'a': rc = cli_list_add(adds, &up.n_add_endpoints, optarg, "--add-endpoint"); break;
		case 'b': rc = cli_list_add(bins, &up.n_binaries, optarg, "--binary"); break;
		case 'x': rc = cli_list_add(removes, &up.n_remove_endpoints, optarg, "--remove-endpoint"); break;
		case 'c': up.close_revoked = 1; break;
		case 'j': json = true; break;
		default: return cli_usage(cli_find("policy update"));
		}
	}
	if (rc != 0)
		return rc;
	if (argc - optind != 1 || up.n_add_endpoints + up.n_remove_endpoints == 0)
		return cli_usage(cli_find("policy update"));
	up.sandbox = argv[optind];
	req.request_case = CORRAL__REQUEST__REQUEST_POLICY_UPDATE;
	req.policy_update = &up;
	if ((rc = cli_call(cli, &req, &resp)) != CLI_EXIT_OK)
		return rc;
	return cli_print_policy(resp, up.sandbox, json, "updated");
}

static void
cli_denials_json(const Corral__DenialsReply *r)
{
	struct json *j = json_new(CLI_JSON_MAX_BYTES);
	char ts[RFC3339_US_BYTES];

	json_array_begin(j);
	for (size_t i = 0; i < r->n_denials; i++) {
		const Corral__Denial *d = r->denials[i];

		time_format_rfc3339_us(d->ts_us, ts);
		json_object_begin(j);
		json_kv_string(j, "ts", ts);
		json_kv_string(j, "host", d->host);
		json_kv_uint(j, "port", d->port);
		json_kv_string(j, "binary", d->binary[0] != '\0' ? d->binary : NULL);
		if (d->pid > 0)
			json_kv_int(j, "pid", d->pid);
		else
			json_kv_null(j, "pid");
		json_kv_string(j, "reason", d->reason);
		json_kv_uint(j, "count", d->count);
		json_object_end(j);
	}
	json_array_end(j);
	puts(json_text(j, NULL) != NULL ? json_text(j, NULL) : "[]");
	json_free(j);
}

static void
cli_denials_text(const Corral__DenialsReply *r)
{
	char ts[RFC3339_US_BYTES];

	for (size_t i = 0; i < r->n_denials; i++) {
		const Corral__Denial *d = r->denials[i];

		time_format_rfc3339_us(d->ts_us, ts);
		printf("%s  %s:%u  %s  %s%s", ts, cli_text(d->host), d->port,
		    d->binary[0] != '\0' ? cli_text(d->binary) : "-", cli_text(d->reason),
		    d->count > 1 ? "" : "\n");
		if (d->count > 1)
			printf("  (x%u)\n", d->count);
	}
}

int
cli_denials(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Denials den = CORRAL__DENIALS__INIT;
	Corral__Response *resp;
	bool json = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if (opt != 's')
			return cli_usage(cli_find("denials"));
		else if (time_parse_since(optarg, time_now_us(), &den.since_us) == -1)
			return cli_fail("--since %s: not an RFC 3339 time or a duration "
			    "like 30s, 5m, 2h", optarg);
	}
	if (argc - optind != 1)
		return cli_usage(cli_find("denials"));
	den.sandbox = argv[optind];
	req.request_case = CORRAL__REQUEST__REQUEST_DENIALS;
	req.denials = &den;
	if ((rc = cli_call(cli, &req, &resp)) != CLI_EXIT_OK ||
	    (rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_DENIALS)) != CLI_EXIT_OK)
		return rc;
	if (json)
		cli_denials_json(resp->denials);
	else
		cli_denials_text(resp->denials);
	corral__response__free_unpacked(resp, NULL);
	return CLI_EXIT_OK;
}
