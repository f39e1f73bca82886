/* corral run, runs, interrupt and shell: persistent shells from the
 * command line (corral(1)). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "broker/cli/cli.h"
#include "broker/cli/client-run.h"
#include "broker/cli/client.h"
#include "common/buf.h"
#include "common/json.h"
#include "common/timeutil.h"
#include "common/wire.h"

#define CLI_RUN_WHY_BYTES 512
#define CLI_RUN_ID_BYTES 40
#define CLI_RUN_JSON_MAX_BYTES (64 * 1024 * 1024)       /* --json: the output and result */
#define CLI_RUN_OUTPUT_MAX_BYTES (16 * 1024 * 1024)     /* --json: output kept */
#define CLI_RUN_CHUNK_JSON_MAX_BYTES (8 * 1024 * 1024)  /* --follow: one chunk's line */
#define CLI_RUN_EXIT_MASK 0xff
#define CLI_RUN_TEXT_MAX_BYTES (64 * 1024)              /* the command's words joined */

/* One `corral run`: where its output goes and how far it got. */
struct cli_run {
	bool json;
	bool follow;                    /* with json: a JSON line per chunk, then the result's */
	struct buf *out;                /* --json: the output */
	uint64_t next;                  /* the offset expected next */
	const char *stop_why;           /* why the output stopped being followed */
};

/* One JSON line of --follow: {"offset": N, "output": TEXT}; -1 when
 * stdout cannot take it. */
static int
cli_run_print_chunk(uint64_t offset, const uint8_t *data, size_t len)
{
	struct json *j = json_new(CLI_RUN_CHUNK_JSON_MAX_BYTES);
	const char *text;
	int rc = -1;

	json_object_begin(j);
	json_kv_uint(j, "offset", offset);
	json_key(j, "output");
	json_str_n(j, (const char *)data, len);
	json_object_end(j);
	if ((text = json_text(j, NULL)) != NULL && printf("%s\n", text) > 0 && fflush(stdout) == 0)
		rc = 0;
	json_free(j);
	return rc;
}

/* Writes a chunk to stdout (or keeps it for --json), skipping what we had. */
static int
cli_run_output(void *arg, uint64_t offset, const uint8_t *data, size_t len)
{
	struct cli_run *c = arg;
	size_t skip = offset < c->next ? (size_t)(c->next - offset) : 0;

	if (skip >= len)
		return 0;
	data += skip;
	len -= skip;
	c->next = offset + skip + len;
	if (c->json && c->follow)
		return cli_run_print_chunk(offset + skip, data, len);
	if (c->json && buf_append(c->out, data, len) != 0) {
		c->stop_why = "the output is larger than --json keeps (16 MiB); run it without --json";
		return -1;
	}
	while (!c->json && len > 0) {
		ssize_t n = write(STDOUT_FILENO, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			c->stop_why = "writing the output failed";
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The result as one JSON object: with the output kept, or, after
 * --follow's lines, under "result". */
static void
cli_run_print_json(const struct cli_run *c, const char *id, const Corral__RunResult *r)
{
	struct json *j = json_new(CLI_RUN_JSON_MAX_BYTES);
	const char *text;

	json_object_begin(j);
	if (c->follow) {
		json_key(j, "result");
		json_object_begin(j);
	}
	json_kv_string(j, "request_id", id);
	if (!c->follow) {
		json_key(j, "output");
		json_str_n(j, (const char *)buf_data(c->out), buf_len(c->out));
	}
	json_kv_int(j, "exit_code", r->exit_code);
	json_kv_int(j, "signal", r->signal);
	json_kv_string(j, "cwd", r->cwd);
	json_kv_bool(j, "timed_out", r->timed_out);
	json_kv_bool(j, "truncated", r->truncated);
	json_kv_bool(j, "respawned", r->respawned);
	json_kv_bool(j, "state_saved", r->state_saved);
	json_kv_string(j, "ended_by", r->ended_by != NULL && r->ended_by[0] != '\0' ?
	    r->ended_by : NULL);
	if (c->follow)
		json_object_end(j);
	json_object_end(j);
	if ((text = json_text(j, NULL)) != NULL)
		printf("%s\n", text);
	json_free(j);
}

/* A fresh id for a run whose caller gave none. */
static void
cli_run_new_id(char *out, size_t size)
{
	uint8_t raw[8] = { 0 };

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		memset(raw, 0, sizeof(raw));
	snprintf(out, size, "cli-%02x%02x%02x%02x%02x%02x%02x%02x", raw[0], raw[1], raw[2],
	    raw[3], raw[4], raw[5], raw[6], raw[7]);
}

/* Parses --timeout S. */
static int
cli_run_timeout(const char *text, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || v > UINT32_MAX)
		return cli_fail("--timeout %s: expected whole seconds", text);
	*out = (uint32_t)v;
	return 0;
}

/* Joins the words after "--" with spaces into TEXT. */
static int
cli_run_text(int argc, char **argv, char *text, size_t size)
{
	size_t o = 0;

	text[0] = '\0';
	for (int i = 0; i < argc; i++) {
		int n = snprintf(text + o, size - o, "%s%s", i > 0 ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= size - o)
			return cli_fail("run: the command is longer than %zu bytes", size - 1);
		o += (size_t)n;
	}
	return 0;
}

/* Parses NAME [options] -- TEXT into REQ. */
static int
cli_run_parse(int argc, char **argv, Corral__RunStart *req, struct cli_run *c, char *text)
{
	static const struct option opts[] = {
		{ "shell", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "id", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "follow", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	int dashes = 1, opt, rc = 0;

	while (dashes < argc && strcmp(argv[dashes], "--") != 0)
		dashes++;
	if (dashes >= argc - 1)
		return cli_usage(cli_find("run"));
	while (rc == 0 && (opt = getopt_long(dashes, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's': req->shell = optarg; break;
		case 't': rc = cli_run_timeout(optarg, &req->timeout_seconds); break;
		case 'i': req->request_id = optarg; break;
		case 'j': c->json = true; break;
		case 'f': c->follow = true; break;
		default: return cli_usage(cli_find("run"));
		}
	}
	if (rc != 0)
		return rc;
	if (dashes - optind != 1 || (c->follow && !c->json))
		return cli_usage(cli_find("run"));
	req->sandbox = argv[optind];
	if ((rc = cli_run_text(argc - dashes - 1, argv + dashes + 1, text,
	    CLI_RUN_TEXT_MAX_BYTES)) != 0)
		return rc;
	req->command = text;
	return cli_check_name(req->sandbox);
}

/* Tells the daemon it may forget run ID (best effort). */
/* When corrald started, as it says, or 0 when it does not answer. */
static int64_t
cli_run_daemon_start(const struct cli *cli)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Status status = CORRAL__STATUS__INIT;
	Corral__Response *resp = NULL;
	char why[CLI_RUN_WHY_BYTES];
	int64_t started = 0;
	int fd;

	if ((fd = client_connect(cli->socket_path, why, sizeof(why))) == -1)
		return 0;
	req.request_case = CORRAL__REQUEST__REQUEST_STATUS;
	req.status = &status;
	if (client_call(fd, &req, &resp, why, sizeof(why)) == 0 &&
	    resp->response_case == CORRAL__RESPONSE__RESPONSE_STATUS)
		started = resp->status->started_at_us;
	if (resp != NULL)
		corral__response__free_unpacked(resp, NULL);
	close(fd);
	return started;
}

/* The connection went while run ID ran (started at STARTED_US): says
 * whether the run can go on, as corrald now tells. A run lives in its
 * sandbox, and no sandbox outlives corrald. */
static int
cli_run_lost(const struct cli *cli, const char *why, const char *id, int64_t started_us)
{
	char when[RFC3339_US_BYTES];
	int64_t daemon_start = cli_run_daemon_start(cli);

	if (daemon_start == 0)
		return cli_fail("%s, and corrald no longer answers on %s: run '%s' ended with "
		    "its sandbox (a restarted corrald keeps no sandbox and no run)", why,
		    cli->socket_path, id);
	if (daemon_start > started_us) {
		time_format_rfc3339_us(daemon_start, when);
		return cli_fail("%s: corrald restarted at %s, and run '%s' ended with its "
		    "sandbox", why, when, id);
	}
	return cli_fail("%s (corrald still runs, and so does run '%s': `corral run --id %s` with "
	    "the same command resumes it)", why, id, id);
}

static void
cli_run_ack(const struct cli *cli, const char *sandbox, const char *id)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__RunAck ack = CORRAL__RUN_ACK__INIT;
	Corral__Response *resp = NULL;
	char why[CLI_RUN_WHY_BYTES];

	ack.sandbox = (char *)(uintptr_t)sandbox;
	ack.request_id = (char *)(uintptr_t)id;
	req.request_case = CORRAL__REQUEST__REQUEST_RUN_ACK;
	req.run_ack = &ack;
	if (client_request(cli->socket_path, &req, &resp, why, sizeof(why)) == 0)
		corral__response__free_unpacked(resp, NULL);
}

/* A run's exit status: the shell's, or CLI_EXIT_TIMEOUT when its timeout
 * ended it. */
static int
cli_run_status(const Corral__RunResult *result)
{
	return result->timed_out ? CLI_EXIT_TIMEOUT : result->exit_code & CLI_RUN_EXIT_MASK;
}

/* Follows REQ (a RunStart or a RunResume of run ID in SANDBOX) to the
 * result; acknowledges the run after it when ACK. */
static int
cli_run_request(struct cli *cli, const Corral__Request *req, const char *sandbox,
    const char *id, struct cli_run *c, bool ack)
{
	Corral__RunResult *result = NULL;
	struct client_run_error err;
	char why[CLI_RUN_WHY_BYTES];
	int64_t started_us;
	int fd, rc;

	if ((fd = client_connect(cli->socket_path, why, sizeof(why))) == -1)
		return cli_unreachable(why);
	started_us = time_now_us();
	switch (client_run(fd, req, cli_run_output, c, &result, &err)) {
	case CLIENT_RUN_RESULT:
		if (c->json)
			cli_run_print_json(c, id, result);
		rc = cli_run_status(result);
		if (ack)
			cli_run_ack(cli, sandbox, id);
		break;
	case CLIENT_RUN_LOST:
		rc = cli_run_lost(cli, err.why, id, started_us);
		break;
	case CLIENT_RUN_STOPPED:
		rc = cli_fail("%s (run '%s' goes on)", c->stop_why, id);
		break;
	default:
		rc = cli_error(err.code, "%s", err.why);
		break;
	}
	if (result != NULL)
		corral__run_result__free_unpacked(result, NULL);
	close(fd);
	return rc;
}

static int
cli_run_follow(struct cli *cli, Corral__RunStart *start, struct cli_run *c, bool own_id)
{
	Corral__Request req = CORRAL__REQUEST__INIT;

	req.request_case = CORRAL__REQUEST__REQUEST_RUN_START;
	req.run_start = start;
	return cli_run_request(cli, &req, start->sandbox, start->request_id, c, own_id);
}

/* corral runs get|attach NAME ID [--json] [--follow]: run ID's output from
 * its start and its result, never running it again (RunResume). ATTACH:
 * with --json, a line per chunk as it comes (--follow), as run --follow. */
static int
cli_runs_resume(struct cli *cli, int argc, char **argv, const char *verb, bool attach)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "follow", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__RunResume res = CORRAL__RUN_RESUME__INIT;
	struct cli_run c = { .follow = attach };
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'j': c.json = true; break;
		case 'f': c.follow = true; break;
		default: return cli_usage(cli_find(verb));
		}
	}
	if (argc - optind != 2 || (c.follow && !c.json && !attach))
		return cli_usage(cli_find(verb));
	if ((rc = cli_check_name(argv[optind])) != 0)
		return rc;
	c.follow = c.follow && c.json;
	res.sandbox = argv[optind];
	res.request_id = argv[optind + 1];
	req.request_case = CORRAL__REQUEST__REQUEST_RUN_RESUME;
	req.run_resume = &res;
	c.out = buf_new(CLI_RUN_OUTPUT_MAX_BYTES);
	rc = cli_run_request(cli, &req, res.sandbox, res.request_id, &c, false);
	buf_free(c.out);
	return cli_command_status(rc);
}

int
cli_runs_get(struct cli *cli, int argc, char **argv)
{
	return cli_runs_resume(cli, argc, argv, "runs get", false);
}

int
cli_runs_attach(struct cli *cli, int argc, char **argv)
{
	return cli_runs_resume(cli, argc, argv, "runs attach", true);
}

int
cli_run(struct cli *cli, int argc, char **argv)
{
	Corral__RunStart start = CORRAL__RUN_START__INIT;
	struct cli_run c = { 0 };
	char id[CLI_RUN_ID_BYTES], *text = malloc(CLI_RUN_TEXT_MAX_BYTES);
	bool own_id;
	int rc;

	if (text == NULL)
		return cli_fail("out of memory");
	if ((rc = cli_run_parse(argc, argv, &start, &c, text)) == 0) {
		/* Without --id the run gets an id of ours, acknowledged once done. */
		if ((own_id = start.request_id[0] == '\0')) {
			cli_run_new_id(id, sizeof(id));
			start.request_id = id;
		}
		c.out = buf_new(CLI_RUN_OUTPUT_MAX_BYTES);
		rc = cli_run_follow(cli, &start, &c, own_id);
		buf_free(c.out);
	}
	free(text);
	return cli_command_status(rc);
}

static const char *
cli_runs_state(const Corral__RunInfo *r)
{
	return r->result == NULL ? "running" : r->result->timed_out ? "timed-out" : "done";
}

static void
cli_runs_json(const Corral__RunListReply *list)
{
	struct json *j = json_new(CLI_RUN_JSON_MAX_BYTES);
	const char *text;

	json_array_begin(j);
	for (size_t i = 0; i < list->n_runs; i++) {
		const Corral__RunInfo *r = list->runs[i];

		json_object_begin(j);
		json_kv_string(j, "request_id", r->request_id);
		json_kv_string(j, "shell", r->shell);
		json_kv_string(j, "command", r->command);
		json_kv_int(j, "started_at_us", r->started_at_us);
		json_kv_uint(j, "output_bytes", r->output_bytes);
		json_kv_uint(j, "late_bytes", r->late_bytes);
		json_kv_string(j, "state", cli_runs_state(r));
		json_key(j, "result");
		if (r->result == NULL) {
			json_null_value(j);
		} else {
			json_object_begin(j);
			json_kv_int(j, "exit_code", r->result->exit_code);
			json_kv_int(j, "signal", r->result->signal);
			json_kv_string(j, "cwd", r->result->cwd);
			json_kv_bool(j, "timed_out", r->result->timed_out);
			json_kv_bool(j, "truncated", r->result->truncated);
			json_kv_bool(j, "respawned", r->result->respawned);
			json_kv_bool(j, "state_saved", r->result->state_saved);
			json_object_end(j);
		}
		json_object_end(j);
	}
	json_array_end(j);
	if ((text = json_text(j, NULL)) != NULL)
		printf("%s\n", text);
	json_free(j);
}

static void
cli_runs_table(const Corral__RunListReply *list)
{
	printf("%-24s %-10s %-9s %5s %10s %8s  %s\n", "ID", "SHELL", "STATE", "EXIT", "OUTPUT",
	    "LATE", "COMMAND");
	for (size_t i = 0; i < list->n_runs; i++) {
		const Corral__RunInfo *r = list->runs[i];
		char code[16] = "-";

		if (r->result != NULL)
			snprintf(code, sizeof(code), "%d", r->result->exit_code);
		printf("%-24s %-10s %-9s %5s %10llu %8llu  %.60s\n", r->request_id, r->shell,
		    cli_runs_state(r), code, (unsigned long long)r->output_bytes,
		    (unsigned long long)r->late_bytes, r->command);
	}
}

/* Writes run ID's late output (what its jobs wrote after its result) to
 * stdout: RunResume with late set, from the oldest byte kept. */
static int
cli_runs_late(struct cli *cli, const char *sandbox, const char *id)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__RunResume res = CORRAL__RUN_RESUME__INIT;
	Corral__RunResult *result = NULL;
	struct client_run_error err;
	struct cli_run c = { 0 };
	char why[CLI_RUN_WHY_BYTES];
	int fd, rc;

	if ((fd = client_connect(cli->socket_path, why, sizeof(why))) == -1)
		return cli_unreachable(why);
	res.sandbox = (char *)(uintptr_t)sandbox;
	res.request_id = (char *)(uintptr_t)id;
	res.late = true;
	req.request_case = CORRAL__REQUEST__REQUEST_RUN_RESUME;
	req.run_resume = &res;
	switch (client_run(fd, &req, cli_run_output, &c, &result, &err)) {
	case CLIENT_RUN_RESULT:
		rc = CLI_EXIT_OK;
		break;
	case CLIENT_RUN_STOPPED:
		rc = cli_fail("%s", c.stop_why);
		break;
	default:
		rc = cli_error(err.code, "%s", err.why);
		break;
	}
	if (result != NULL)
		corral__run_result__free_unpacked(result, NULL);
	close(fd);
	return rc;
}

int
cli_runs(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "late", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__RunList rl = CORRAL__RUN_LIST__INIT;
	Corral__Response *resp = NULL;
	const char *late = NULL;
	bool json = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'j': json = true; break;
		case 'l': late = optarg; break;
		default: return cli_usage(cli_find("runs"));
		}
	}
	if (argc - optind != 1 || (late != NULL && json))
		return cli_usage(cli_find("runs"));
	if ((rc = cli_check_name(argv[optind])) != 0)
		return rc;
	if (late != NULL)
		return cli_runs_late(cli, argv[optind], late);
	rl.sandbox = argv[optind];
	req.request_case = CORRAL__REQUEST__REQUEST_RUN_LIST;
	req.run_list = &rl;
	if ((rc = cli_call(cli, &req, &resp)) != 0)
		return rc;
	if (resp->response_case != CORRAL__RESPONSE__RESPONSE_RUN_LIST) {
		rc = cli_fail("corrald answered something else than a run list");
	} else if (json) {
		cli_runs_json(resp->run_list);
	} else {
		cli_runs_table(resp->run_list);
	}
	corral__response__free_unpacked(resp, NULL);
	return rc;
}

int
cli_interrupt(struct cli *cli, int argc, char **argv)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__RunInterrupt ri = CORRAL__RUN_INTERRUPT__INIT;
	Corral__Response *resp = NULL;
	int rc;

	if (argc != 3 || argv[1][0] == '-')
		return cli_usage(cli_find("interrupt"));
	if ((rc = cli_check_name(argv[1])) != 0)
		return rc;
	ri.sandbox = argv[1];
	ri.request_id = argv[2];
	req.request_case = CORRAL__REQUEST__REQUEST_RUN_INTERRUPT;
	req.run_interrupt = &ri;
	if ((rc = cli_call(cli, &req, &resp)) != 0)
		return rc;
	corral__response__free_unpacked(resp, NULL);
	return CLI_EXIT_OK;
}

/* An interactive bash through the exec stream's terminal mode: a session
 * of its own, apart from the persistent shells that runs use. */
int
cli_shell(struct cli *cli, int argc, char **argv)
{
	char *args[] = { (char *)(uintptr_t)"exec", NULL, (char *)(uintptr_t)"--tty",
	    (char *)(uintptr_t)"--", (char *)(uintptr_t)"bash", (char *)(uintptr_t)"-i", NULL };

	if (argc != 2 || argv[1][0] == '-')
		return cli_usage(cli_find("shell"));
	args[1] = argv[1];
	optind = 0;
	return cli_exec(cli, 6, args);
}
