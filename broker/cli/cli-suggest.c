/* corral policy suggest: the smallest policy additions that would have
 * allowed what a sandbox was refused (policy/suggest.h), from its denials,
 * and --apply, through the same validated path as `policy update`. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/cli/cli.h"
#include "broker/cli/client.h"
#include "common/json.h"
#include "common/timeutil.h"
#include "common/wire.h"
#include "policy/suggest.h"

#define CLI_SUGGEST_JSON_MAX_BYTES (1024 * 1024)
#define CLI_SUGGEST_ENDPOINT_BYTES (POLICY_HOST_MAX_BYTES + 16)

struct cli_suggest_args {
	const char *sandbox;
	int64_t since_us;
	bool json, apply;
};

static int
cli_suggest_parse(int argc, char **argv, struct cli_suggest_args *a)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "apply", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'j': a->json = true; break;
		case 'a': a->apply = true; break;
		case 's':
			if (time_parse_since(optarg, time_now_us(), &a->since_us) == -1)
				return cli_fail("--since %s: not an RFC 3339 time or a duration "
				    "like 30s, 5m, 2h", optarg);
			break;
		default: return cli_usage(cli_find("policy suggest"));
		}
	}
	if (argc - optind != 1)
		return cli_usage(cli_find("policy suggest"));
	a->sandbox = argv[optind];
	return 0;
}

/* The sandbox's denials since A's time, as suggestions into *OUT (N). */
static int
cli_suggest_make(struct cli *cli, const struct cli_suggest_args *a, struct suggestion **out,
    size_t *n)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Denials den = CORRAL__DENIALS__INIT;
	Corral__Response *resp;
	struct suggest_denial *in;
	size_t nd;
	int rc;

	den.sandbox = (char *)(uintptr_t)a->sandbox;
	den.since_us = a->since_us;
	req.request_case = CORRAL__REQUEST__REQUEST_DENIALS;
	req.denials = &den;
	if ((rc = cli_call(cli, &req, &resp)) != CLI_EXIT_OK ||
	    (rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_DENIALS)) != CLI_EXIT_OK)
		return rc;
	nd = resp->denials->n_denials;
	in = calloc(nd > 0 ? nd : 1, sizeof(*in));
	*out = calloc(nd > 0 ? nd : 1, sizeof(**out));
	if (in == NULL || *out == NULL) {
		free(in);
		corral__response__free_unpacked(resp, NULL);
		return cli_fail("out of memory");
	}
	for (size_t i = 0; i < nd; i++) {
		const Corral__Denial *d = resp->denials->denials[i];

		in[i] = (struct suggest_denial){ d->host, (uint16_t)d->port, d->binary, d->reason,
		    d->count };
	}
	*n = suggest_make(in, nd, *out, nd);
	free(in);
	corral__response__free_unpacked(resp, NULL);
	return CLI_EXIT_OK;
}

/* Applies S as `policy update NAME --add-endpoint HOST:PORT [--binary B]`. */
static int
cli_suggest_apply(struct cli *cli, const char *sandbox, const struct suggestion *s)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__PolicyUpdate up = CORRAL__POLICY_UPDATE__INIT;
	Corral__Response *resp;
	char endpoint[CLI_SUGGEST_ENDPOINT_BYTES], *adds[1] = { endpoint };
	char *bins[1] = { (char *)(uintptr_t)s->binary };
	int rc;

	snprintf(endpoint, sizeof(endpoint), "%s:%u", s->host, (unsigned)s->port);
	up.sandbox = (char *)(uintptr_t)sandbox;
	up.add_endpoints = adds;
	up.n_add_endpoints = 1;
	up.binaries = bins;
	up.n_binaries = s->binary[0] != '\0' ? 1 : 0;
	req.request_case = CORRAL__REQUEST__REQUEST_POLICY_UPDATE;
	req.policy_update = &up;
	if ((rc = cli_call(cli, &req, &resp)) != CLI_EXIT_OK ||
	    (rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_POLICY)) != CLI_EXIT_OK)
		return rc;
	corral__response__free_unpacked(resp, NULL);
	return CLI_EXIT_OK;
}

static void
cli_suggest_json(const char *sandbox, const struct suggestion *s, size_t n, bool applied)
{
	struct json *j = json_new(CLI_SUGGEST_JSON_MAX_BYTES);
	char endpoint[CLI_SUGGEST_ENDPOINT_BYTES];

	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		snprintf(endpoint, sizeof(endpoint), "%s:%u", s[i].host, (unsigned)s[i].port);
		json_object_begin(j);
		json_kv_string(j, "sandbox", sandbox);
		json_kv_string(j, "add_endpoint", endpoint);
		json_kv_string(j, "binary", s[i].binary[0] != '\0' ? s[i].binary : NULL);
		json_kv_bool(j, "wildcard", s[i].wildcard);
		json_kv_uint(j, "denials", s[i].denials);
		json_kv_string(j, "risk", s[i].risk);
		json_kv_bool(j, "applied", applied);
		json_object_end(j);
	}
	json_array_end(j);
	puts(json_text(j, NULL) != NULL ? json_text(j, NULL) : "[]");
	json_free(j);
}

static void
cli_suggest_text(const char *sandbox, const struct suggestion *s, size_t n, bool applied)
{
	if (n == 0)
		printf("nothing to suggest: no refusal of %s by name\n", cli_text(sandbox));
	for (size_t i = 0; i < n; i++) {
		printf("%s %s:%u%s%s  (%llu refused; allows %s)\n", applied ? "added" : "+",
		    cli_text(s[i].host), (unsigned)s[i].port, s[i].binary[0] != '\0' ? " for " : "",
		    s[i].binary[0] != '\0' ? cli_text(s[i].binary) : "", (unsigned long long)s[i].denials,
		    s[i].risk);
		if (!applied)
			printf("    corral policy update %s --add-endpoint %s:%u%s%s\n", cli_text(sandbox),
			    cli_text(s[i].host), (unsigned)s[i].port,
			    s[i].binary[0] != '\0' ? " --binary " : "",
			    s[i].binary[0] != '\0' ? cli_text(s[i].binary) : "");
	}
}

int
cli_policy_suggest(struct cli *cli, int argc, char **argv)
{
	struct cli_suggest_args a = { 0 };
	struct suggestion *s = NULL;
	size_t n = 0;
	int rc;

	if ((rc = cli_suggest_parse(argc, argv, &a)) != 0 ||
	    (rc = cli_check_name(a.sandbox)) != 0 ||
	    (rc = cli_suggest_make(cli, &a, &s, &n)) != CLI_EXIT_OK)
		return rc;
	for (size_t i = 0; a.apply && i < n && rc == CLI_EXIT_OK; i++)
		rc = cli_suggest_apply(cli, a.sandbox, &s[i]);
	if (rc == CLI_EXIT_OK && a.json)
		cli_suggest_json(a.sandbox, s, n, a.apply);
	else if (rc == CLI_EXIT_OK)
		cli_suggest_text(a.sandbox, s, n, a.apply);
	free(s);
	return rc;
}
