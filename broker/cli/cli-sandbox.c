/* corral sandbox create|list|get|delete and corral reap: the lifecycle verbs. */
#include "config.h"
#include "common/limits.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/cli/cli.h"
#include "broker/cli/cli-map.h"
#include "broker/cli/cli-roots.h"
#include "broker/cli/cli-sandbox-json.h"
#include "broker/cli/cli-secrets.h"
#include "broker/cli/client.h"
#include "common/json.h"
#include "common/timeutil.h"
#include "common/units.h"
#include "common/xmalloc.h"
#include "policy/name.h"

#define CLI_SANDBOX_JSON_MAX_BYTES (32 * 1024 * 1024)   /* a 4 MiB answer, escaped */
#define CLI_PIDS_MAX 4194304                    /* the kernel's PID_MAX_LIMIT */
#define CLI_TIME_HUMAN_BYTES 21                 /* "2026-11-29T17:58:31Z" and its NUL */

/* What `sandbox create` was asked for; msg points into the arrays. */
struct cli_create_args {
	Corral__SandboxCreate msg;
	Corral__Root root_msgs[CORRAL_ROOTS_MAX];
	Corral__Root *roots[CORRAL_ROOTS_MAX];
	char *grants[CORRAL_GRANTS_MAX];
	struct cli_map labels, env;
	struct cli_secrets secrets;
	const char *policy_file;
	char *cwd, *home, *policy;      /* owned: absolute --cwd, --home; the policy's text */
	bool json;
};

int
cli_check_name(const char *name)
{
	const char *why = policy_name_error(name);

	if (why == NULL)
		return 0;
	return cli_fail("sandbox name '%s' %s (names match ^[a-z0-9][a-z0-9-]{0,62}$)",
	    name, why);
}

static int
cli_add_root(struct cli_create_args *a, const char *arg)
{
	Corral__Root *r = &a->root_msgs[a->msg.n_roots];
	bool writable;
	int rc;

	if (a->msg.n_roots == CORRAL_ROOTS_MAX)
		return cli_fail("too many --root options (at most %d)", CORRAL_ROOTS_MAX);
	corral__root__init(r);
	if ((rc = cli_root_parse(arg, &r->path, &writable)) != 0)
		return rc;
	r->writable = writable;
	a->roots[a->msg.n_roots++] = r;
	return 0;
}

static int
cli_add_grant(struct cli_create_args *a, char *name)
{
	if (a->msg.n_grants == CORRAL_GRANTS_MAX)
		return cli_fail("too many --grant options (at most %d)", CORRAL_GRANTS_MAX);
	if (name[0] == '\0')
		return cli_fail("--grant needs a grant name (ssh, gh, aws, kube, or one "
		    "of the daemon's configured credentials)");
	a->grants[a->msg.n_grants++] = name;
	return 0;
}

/* Parses --pids N: a positive count up to the kernel's pid limit. */
static int
cli_parse_pids(const char *text, uint32_t *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || v == 0 ||
	    v > CLI_PIDS_MAX)
		return cli_fail("--pids %s: expected a count from 1 to %d", text, CLI_PIDS_MAX);
	*out = (uint32_t)v;
	return 0;
}

/* Parses --memory SIZE: bytes, or a count with K, M, G or T (powers of 1024). */
static int
cli_parse_memory(const char *text, uint64_t *out)
{
	if (!units_parse_size(text, out))
		return cli_fail("--memory %s: expected a size in bytes, or with K, M, G or T "
		    "(512M, 2G)", text);
	return 0;
}

/* Parses --cpus N: a count with at most three decimals (0.5, 2), into thousandths. */
static int
cli_parse_cpus(const char *text, uint32_t *milli)
{
	if (!units_parse_cpus(text, milli))
		return cli_fail("--cpus %s: expected a number of CPUs above 0 and at most %d, "
		    "with at most %d decimals (0.5, 2)", text, UNITS_CPU_MAX_MILLI / 1000,
		    UNITS_CPU_DECIMALS);
	return 0;
}

static int
cli_create_parse(int argc, char **argv, struct cli_create_args *a)
{
	static const struct option opts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "cwd", required_argument, NULL, 'C' },
		{ "profile", required_argument, NULL, 'P' },
		{ "policy", required_argument, NULL, 'F' },
		{ "run-as", required_argument, NULL, 'u' },
		{ "grant", required_argument, NULL, 'G' },
		{ "secret", required_argument, NULL, 'S' },
		{ "home", required_argument, NULL, 'H' },
		{ "label", required_argument, NULL, 'l' },
		{ "env", required_argument, NULL, 'e' },
		{ "pids", required_argument, NULL, 'p' },
		{ "memory", required_argument, NULL, 'm' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "session", required_argument, NULL, 's' },
		{ "agent", required_argument, NULL, 'a' },
		{ "name", required_argument, NULL, 'n' },
		{ "allow-nested-readonly", no_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	Corral__SandboxCreate *m = &a->msg;
	int opt, rc = 0;

	while (rc == 0 && (opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'r': rc = cli_add_root(a, optarg); break;
		case 'C': m->cwd = optarg; break;
		case 'P': m->profile = optarg; break;
		case 'F': a->policy_file = optarg; break;
		case 'u': m->run_as = optarg; break;
		case 'G': rc = cli_add_grant(a, optarg); break;
		case 'S': rc = cli_secrets_add(&a->secrets, optarg); break;
		case 'H': m->home = optarg; break;
		case 'l': rc = cli_map_add(&a->labels, optarg, "--label"); break;
		case 'e': rc = cli_map_add(&a->env, optarg, "--env"); break;
		case 'p': rc = cli_parse_pids(optarg, &m->pids); break;
		case 'm': rc = cli_parse_memory(optarg, &m->memory_bytes); break;
		case 'c': rc = cli_parse_cpus(optarg, &m->milli_cpus); break;
		case 's': m->session_id = optarg; break;
		case 'a': m->agent = optarg; break;
		case 'n': m->name = optarg; break;
		case 'N': m->allow_nested_readonly = 1; break;
		case 'j': a->json = true; break;
		default: return cli_usage(cli_find("sandbox create"));
		}
	}
	if (rc != 0)
		return rc;
	if (optind != argc || m->n_roots == 0)
		return cli_usage(cli_find("sandbox create"));
	if (m->profile[0] != '\0' && a->policy_file != NULL) {
		fprintf(stderr, "corral: --profile and --policy exclude each other\n");
		return cli_usage(cli_find("sandbox create"));
	}
	return m->name[0] != '\0' ? cli_check_name(m->name) : 0;
}

/* Makes the message's pointers and paths absolute: cwd and home as the
 * roots are; reads the secrets' values with the caller's rights. */
static int
cli_create_prepare(const struct cli *cli, struct cli_create_args *a)
{
	Corral__SandboxCreate *m = &a->msg;

	m->roots = a->roots;
	m->grants = a->grants;
	m->labels = cli_map_entries(&a->labels);
	m->n_labels = a->labels.n;
	m->env = cli_map_entries(&a->env);
	m->n_env = a->env.n;
	if (m->cwd[0] != '\0' && (m->cwd = a->cwd = cli_absolute_path(m->cwd)) == NULL)
		return cli_fail("--cwd: the current folder cannot be named");
	if (m->home[0] != '\0' && (m->home = a->home = cli_absolute_path(m->home)) == NULL)
		return cli_fail("--home: the current folder cannot be named");
	/* The daemon gets the policy's content, never a path to open for us. */
	if (a->policy_file != NULL &&
	    (m->policy = a->policy = cli_read_policy_file(a->policy_file)) == NULL)
		return CLI_EXIT_FAILED;
	return a->secrets.n > 0 ? cli_secrets_read(cli, &a->secrets, m->home, m) : 0;
}

static void
cli_create_clear(struct cli_create_args *a)
{
	Corral__SandboxCreate *m = &a->msg;

	for (size_t i = 0; i < m->n_roots; i++)
		free(a->root_msgs[i].path);
	free(a->cwd);
	free(a->home);
	free(a->policy);
	cli_secrets_clear(&a->secrets);
	cli_map_clear(&a->labels);
	cli_map_clear(&a->env);
}

/* Prints one JSON document: a sandbox object, or an array of them. */
static int
cli_sandboxes_json(Corral__SandboxInfo **list, size_t n, bool array)
{
	struct json *j = json_new(CLI_SANDBOX_JSON_MAX_BYTES);

	if (array)
		json_array_begin(j);
	for (size_t i = 0; i < n; i++)
		cli_sandbox_json(j, list[i]);
	if (array)
		json_array_end(j);
	return cli_print_json(j);
}

static void
cli_print_created(const Corral__SandboxInfo *s)
{
	printf("created %s (enforcement %s)\n", cli_text(s->name), cli_text(s->enforcement));
	if (s->n_missing_layers == 0)
		return;
	printf("missing layers:");
	for (size_t i = 0; i < s->n_missing_layers; i++)
		printf("%s %s", i > 0 ? "," : "", cli_text(s->missing_layers[i]));
	printf("\n");
}

int
cli_sandbox_create(struct cli *cli, int argc, char **argv)
{
	struct cli_create_args a = { .msg = CORRAL__SANDBOX_CREATE__INIT };
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Response *resp;
	int rc;

	cli_map_init(&a.labels, &corral__sandbox_create__labels_entry__descriptor);
	cli_map_init(&a.env, &corral__sandbox_create__env_entry__descriptor);
	if ((rc = cli_create_parse(argc, argv, &a)) == 0)
		rc = cli_create_prepare(cli, &a);
	req.request_case = CORRAL__REQUEST__REQUEST_SANDBOX_CREATE;
	req.sandbox_create = &a.msg;
	if (rc == 0 && (rc = cli_call(cli, &req, &resp)) == 0 &&
	    (rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_SANDBOX)) == 0) {
		if (a.json)
			rc = cli_sandboxes_json(&resp->sandbox, 1, false);
		else
			cli_print_created(resp->sandbox);
		corral__response__free_unpacked(resp, NULL);
	}
	cli_create_clear(&a);
	return rc;
}

/* Writes US as an RFC 3339 time to the second, or "-" when unknown. */
static void
cli_time_human(int64_t us, char out[CLI_TIME_HUMAN_BYTES])
{
	char full[RFC3339_US_BYTES];

	if (us <= 0) {
		snprintf(out, CLI_TIME_HUMAN_BYTES, "-");
		return;
	}
	time_format_rfc3339_us(us, full);
	snprintf(out, CLI_TIME_HUMAN_BYTES, "%.19sZ", full);
}

static const char *
cli_or_dash(const char *s)
{
	return s != NULL && s[0] != '\0' ? cli_text(s) : "-";
}

/* One limit for people: "memory 11.8G (default, enforced by v1)". */
static void
cli_print_limit(const Corral__Limit *l)
{
	char value[UNITS_SIZE_TEXT_MAX_BYTES];

	if (strcmp(l->name, "pids") == 0)
		snprintf(value, sizeof(value), "%llu", (unsigned long long)l->value);
	else if (strcmp(l->name, "cpus") == 0)
		snprintf(value, sizeof(value), "%llu.%03llu", (unsigned long long)(l->value / 1000),
		    (unsigned long long)(l->value % 1000));
	else
		units_format_size(l->value, value, sizeof(value));
	printf("%-13s%s %s (%s, enforced by %s)\n", "Limit:", cli_text(l->name), value,
	    cli_or_dash(l->source), cli_or_dash(l->controller));
}

static void
cli_list_table(Corral__SandboxInfo **list, size_t n)
{
	char created[CLI_TIME_HUMAN_BYTES];
	int width = 4;

	for (size_t i = 0; i < n; i++)
		if ((int)strlen(list[i]->name) > width)
			width = (int)strlen(list[i]->name);
	printf("%-*s  %-8s  %-11s  %-10s  %s\n", width, "NAME", "STATE", "ENFORCEMENT",
	    "PROFILE", "CREATED");
	for (size_t i = 0; i < n; i++) {
		cli_time_human(list[i]->created_at_us, created);
		printf("%-*s  %-8s  %-11s  %-10s  %s\n", width, cli_text(list[i]->name),
		    cli_or_dash(list[i]->state), cli_or_dash(list[i]->enforcement),
		    cli_or_dash(list[i]->profile), created);
	}
}

int
cli_sandbox_list(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "selector", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	Corral__SandboxList list = CORRAL__SANDBOX_LIST__INIT;
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Response *resp;
	struct cli_map selector;
	bool json = false;
	int opt, rc = 0;

	cli_map_init(&selector, &corral__sandbox_list__selector_entry__descriptor);
	while (rc == 0 && (opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if (opt == 's')
			rc = cli_map_add_list(&selector, optarg, "--selector");
		else
			rc = cli_usage(cli_find("sandbox list"));
	}
	if (rc == 0 && optind != argc)
		rc = cli_usage(cli_find("sandbox list"));
	list.selector = cli_map_entries(&selector);
	list.n_selector = selector.n;
	req.request_case = CORRAL__REQUEST__REQUEST_SANDBOX_LIST;
	req.sandbox_list = &list;
	if (rc == 0 && (rc = cli_call(cli, &req, &resp)) == 0 &&
	    (rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_SANDBOX_LIST)) == 0) {
		if (json)
			rc = cli_sandboxes_json(resp->sandbox_list->sandboxes,
			    resp->sandbox_list->n_sandboxes, true);
		else
			cli_list_table(resp->sandbox_list->sandboxes, resp->sandbox_list->n_sandboxes);
		corral__response__free_unpacked(resp, NULL);
	}
	cli_map_clear(&selector);
	return rc;
}

/* Prints "LABEL:" and the pairs, or nothing when there are none. */
static void
cli_print_labels(const Corral__SandboxInfo *s)
{
	if (s->n_labels == 0)
		return;
	printf("%-13s", "Labels:");
	for (size_t i = 0; i < s->n_labels; i++)
		printf("%s%s=%s", i > 0 ? ", " : "", cli_text(s->labels[i]->key),
		    cli_text(s->labels[i]->value));
	printf("\n");
}

static void
cli_print_optional(const char *label, const char *value)
{
	if (value != NULL && value[0] != '\0')
		printf("%-13s%s\n", label, cli_text(value));
}

/* The human summary of `sandbox get`: one line per fact that is known. */
static void
cli_print_sandbox(const Corral__SandboxInfo *s)
{
	char created[CLI_TIME_HUMAN_BYTES];

	printf("%-13s%s\n%-13s%s\n", "Name:", cli_text(s->name), "State:", cli_or_dash(s->state));
	printf("%-13s%s", "Enforcement:", cli_or_dash(s->enforcement));
	for (size_t i = 0; i < s->n_missing_layers; i++)
		printf("%s%s", i == 0 ? " (missing: " : ", ", cli_text(s->missing_layers[i]));
	printf("%s\n", s->n_missing_layers > 0 ? ")" : "");
	cli_print_optional("Profile:", s->profile);
	for (size_t i = 0; i < s->n_roots; i++)
		printf("%-13s%s (%s)\n", "Root:", cli_text(s->roots[i]->path),
		    s->roots[i]->writable ? "read-write" : "read-only");
	cli_print_optional("Run as:", s->run_as);
	cli_print_optional("Cwd:", s->cwd);
	cli_print_optional("Home:", s->home);
	if (s->network != NULL && s->network->gateway[0] != '\0')
		printf("%-13sgateway %s, proxy %s, dns %s\n", "Network:", cli_text(s->network->gateway),
		    cli_or_dash(s->network->proxy), cli_or_dash(s->network->dns));
	for (size_t i = 0; i < s->n_credentials; i++)
		printf("%-13s%s\n", "Credential:", cli_text(s->credentials[i]->name));
	for (size_t i = 0; i < s->n_secrets; i++) {
		printf("%-13s%s (to", "Secret:", cli_text(s->secrets[i]->name));
		for (size_t h = 0; h < s->secrets[i]->n_hosts; h++)
			printf("%s %s", h > 0 ? "," : "", cli_text(s->secrets[i]->hosts[h]));
		printf(")\n");
	}
	for (size_t i = 0; i < s->n_limits; i++)
		cli_print_limit(s->limits[i]);
	cli_print_labels(s);
	cli_print_optional("Session:", s->session_id);
	cli_print_optional("Agent:", s->agent);
	cli_time_human(s->created_at_us, created);
	printf("%-13s%s\n", "Created:", created);
}

int
cli_sandbox_get(struct cli *cli, int argc, char **argv)
{
	Corral__SandboxGet get = CORRAL__SANDBOX_GET__INIT;
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Response *resp;
	bool json = false;
	int rc;

	if ((rc = cli_json_option(argc, argv, "sandbox get", &json)) != 0)
		return rc;
	if (argc - optind != 1)
		return cli_usage(cli_find("sandbox get"));
	if ((rc = cli_check_name(argv[optind])) != 0)
		return rc;
	get.name = argv[optind];
	req.request_case = CORRAL__REQUEST__REQUEST_SANDBOX_GET;
	req.sandbox_get = &get;
	if ((rc = cli_call(cli, &req, &resp)) != 0 ||
	    (rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_SANDBOX)) != 0)
		return rc;
	if (json)
		rc = cli_sandboxes_json(&resp->sandbox, 1, false);
	else
		cli_print_sandbox(resp->sandbox);
	corral__response__free_unpacked(resp, NULL);
	return rc;
}

/* {"deleted": [NAME...]}: what went (names that were not there are no error). */
static void
cli_delete_json(const Corral__SandboxDeleteReply *r)
{
	struct json *j = json_new(CLI_SANDBOX_JSON_MAX_BYTES);

	json_object_begin(j);
	json_key(j, "deleted");
	json_array_begin(j);
	for (size_t i = 0; i < r->n_deleted; i++)
		json_str(j, r->deleted[i]);
	json_array_end(j);
	json_object_end(j);
	if (json_text(j, NULL) != NULL)
		puts(json_text(j, NULL));
	json_free(j);
}

int
cli_sandbox_delete(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	Corral__SandboxDelete del = CORRAL__SANDBOX_DELETE__INIT;
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Response *resp;
	bool json = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if (opt == 'a')
			del.all = 1;
		else
			return cli_usage(cli_find("sandbox delete"));
	}
	/* Names or --all, never both: a typo must not widen into "everything". */
	if (del.all == (optind < argc))
		return cli_usage(cli_find("sandbox delete"));
	for (int i = optind; i < argc; i++)
		if ((rc = cli_check_name(argv[i])) != 0)
			return rc;
	del.names = argv + optind;
	del.n_names = (size_t)(argc - optind);
	req.request_case = CORRAL__REQUEST__REQUEST_SANDBOX_DELETE;
	req.sandbox_delete = &del;
	if ((rc = cli_call(cli, &req, &resp)) != 0 ||
	    (rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_SANDBOX_DELETE)) != 0)
		return rc;
	if (json)
		cli_delete_json(resp->sandbox_delete);
	else
		for (size_t i = 0; i < resp->sandbox_delete->n_deleted; i++)
			printf("deleted %s\n", cli_text(resp->sandbox_delete->deleted[i]));
	corral__response__free_unpacked(resp, NULL);
	return CLI_EXIT_OK;
}

static int
cli_reap_json(const Corral__ReapReply *r)
{
	struct json *j = json_new(CLI_SANDBOX_JSON_MAX_BYTES);

	json_object_begin(j);
	json_key(j, "sandboxes");
	json_array_begin(j);
	for (size_t i = 0; i < r->n_sandboxes; i++)
		json_str(j, r->sandboxes[i]);
	json_array_end(j);
	json_key(j, "objects");
	json_array_begin(j);
	for (size_t i = 0; i < r->n_objects; i++)
		json_str(j, r->objects[i]);
	json_array_end(j);
	json_object_end(j);
	return cli_print_json(j);
}

static void
cli_reap_text(const Corral__ReapReply *r)
{
	for (size_t i = 0; i < r->n_sandboxes; i++)
		printf("reaped sandbox %s\n", cli_text(r->sandboxes[i]));
	for (size_t i = 0; i < r->n_objects; i++)
		printf("removed %s\n", cli_text(r->objects[i]));
	if (r->n_sandboxes + r->n_objects == 0)
		printf("nothing to reap\n");
}

int
cli_reap(struct cli *cli, int argc, char **argv)
{
	Corral__Reap reap = CORRAL__REAP__INIT;
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Response *resp;
	bool json = false;
	int rc;

	if ((rc = cli_json_option(argc, argv, "reap", &json)) != 0)
		return rc;
	if (optind != argc)
		return cli_usage(cli_find("reap"));
	req.request_case = CORRAL__REQUEST__REQUEST_REAP;
	req.reap = &reap;
	if ((rc = cli_call(cli, &req, &resp)) != 0 ||
	    (rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_REAP)) != 0)
		return rc;
	if (json)
		rc = cli_reap_json(resp->reap);
	else
		cli_reap_text(resp->reap);
	corral__response__free_unpacked(resp, NULL);
	return rc;
}
