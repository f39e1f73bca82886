/* The corral command line: shared state of one invocation and the verb table. */
#ifndef CORRAL_CLI_H
#define CORRAL_CLI_H

#include <stdbool.h>

#include "common/visible.h"

/* Exit statuses (corral(1), EXIT STATUS): a kind of error each, from the
 * wire's code; exec and run pass the command's own through, and exit
 * CLI_EXIT_CORRAL when corral itself failed. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1       /* failed, or a value refused (invalid_argument) */
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_NOT_FOUND 3    /* not_found */
#define CLI_EXIT_REFUSED 4      /* permission_denied: not the caller's, or a policy or guard said no */
#define CLI_EXIT_LIMIT 5        /* limit */
#define CLI_EXIT_UNAVAILABLE 6  /* unavailable: corrald unreachable, or a layer missing */
#define CLI_EXIT_EXISTS 7       /* already_exists */
#define CLI_EXIT_TIMEOUT 124    /* exec and run: the --timeout ended the command */
#define CLI_EXIT_CORRAL 125     /* exec and run: corral failed, not the command */

/* Set by main when the verb's arguments hold --json: errors are then one
 * JSON object on stderr, {"error": {"code", "message"}}. */
extern bool cli_json_errors;
/* Whether an error was reported (by cli_error, cli_fail or cli_usage). */
extern bool cli_errored;

/* corrald's own default (broker/conf.h), from configure's runstatedir. */
#define CLI_SOCKET_DEFAULT RUNSTATEDIR "/corral/corrald.sock"

/* What every verb may read: the global options, resolved once. */
struct cli {
	const char *socket_path;        /* --socket, CORRAL_SOCKET, default */
	const char *config_path;        /* --config, CORRAL_CONFIG, or NULL */
	const char *profiles_dir;       /* --profiles-dir, CORRAL_PROFILES_DIR, or NULL */
};

struct cli_cmd {
	const char *name;               /* one or two words: "status", "policy render" */
	const char *usage;              /* the arguments after the name */
	const char *summary;            /* one line for `corral help` */
	int (*run)(struct cli *cli, int argc, char **argv);
};

/* Prints "corral: " and the message to stderr (or the JSON error); returns
 * the exit status of CODE, a wire error code ("not_found", ...), or of
 * "failed" for an error of the CLI's own. */
int cli_error(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* WHY the daemon could not be asked, as client_connect or client_request
 * left errno: refused by the socket's mode (permission_denied), or not
 * there (unavailable). */
int cli_unreachable(const char *why);
/* exec's and run's status from RC: the command's own, or CLI_EXIT_CORRAL
 * when corral itself reported an error (a usage error stays one). */
int cli_command_status(int rc);
/* cli_error("failed", ...): CLI_EXIT_FAILED. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* S made safe for a terminal (control bytes as \xHH: a label, a file's
 * name or a host may hold what it likes), in one of CLI_TEXT_RING buffers
 * reused in turn, so that one printf may hold several; cut past
 * CLI_TEXT_MAX_BYTES. */
#define CLI_TEXT_RING 8
#define CLI_TEXT_MAX_BYTES (4096 * VISIBLE_EXPANSION + 1)     /* a path, escaped */
const char *cli_text(const char *s);
/* Prints the verb's usage line to stderr; returns CLI_EXIT_USAGE. */
int cli_usage(const struct cli_cmd *cmd);
struct json;
/* Prints J's text (or says why it cannot), frees J; the verb's exit code. */
int cli_print_json(struct json *j);
/* Parses a verb whose only option is --json; 0, or VERB's usage exit code. */
int cli_json_option(int argc, char **argv, const char *verb, bool *json);
/* The table entry named NAME; NULL when there is none. */
const struct cli_cmd *cli_find(const char *name);

/* The verbs, one file per group. */
int cli_status(struct cli *cli, int argc, char **argv);
int cli_metrics(struct cli *cli, int argc, char **argv);
int cli_reload(struct cli *cli, int argc, char **argv);
int cli_policy_render(struct cli *cli, int argc, char **argv);
int cli_policy_check(struct cli *cli, int argc, char **argv);
int cli_policy_get(struct cli *cli, int argc, char **argv);
int cli_policy_set(struct cli *cli, int argc, char **argv);
int cli_policy_update(struct cli *cli, int argc, char **argv);
int cli_policy_suggest(struct cli *cli, int argc, char **argv);
int cli_denials(struct cli *cli, int argc, char **argv);
int cli_logs(struct cli *cli, int argc, char **argv);
int cli_report(struct cli *cli, int argc, char **argv);
int cli_sandbox_create(struct cli *cli, int argc, char **argv);
int cli_sandbox_list(struct cli *cli, int argc, char **argv);
int cli_sandbox_get(struct cli *cli, int argc, char **argv);
int cli_sandbox_delete(struct cli *cli, int argc, char **argv);
int cli_reap(struct cli *cli, int argc, char **argv);
int cli_exec(struct cli *cli, int argc, char **argv);
int cli_run(struct cli *cli, int argc, char **argv);
int cli_runs(struct cli *cli, int argc, char **argv);
int cli_runs_get(struct cli *cli, int argc, char **argv);
int cli_runs_attach(struct cli *cli, int argc, char **argv);
int cli_interrupt(struct cli *cli, int argc, char **argv);
int cli_shell(struct cli *cli, int argc, char **argv);
int cli_fs_read(struct cli *cli, int argc, char **argv);
int cli_fs_write(struct cli *cli, int argc, char **argv);
int cli_fs_edit(struct cli *cli, int argc, char **argv);
int cli_fs_list(struct cli *cli, int argc, char **argv);
int cli_fs_grep(struct cli *cli, int argc, char **argv);
int cli_forward(struct cli *cli, int argc, char **argv);

/* 0 when NAME is a sandbox name (^[a-z0-9][a-z0-9-]{0,62}$); else prints why
 * and returns CLI_EXIT_FAILED. */
int cli_check_name(const char *name);
/* Reads FILE ("-": standard input) whole, up to the cap (free() it); NULL
 * with the reason printed. */
char *cli_read_policy_file(const char *file);

struct Corral__Request;
struct Corral__Response;
/* Sends REQ to corrald and reads its answer into *RESP. An Error answer,
 * or no answer, is printed and gives CLI_EXIT_FAILED (*RESP then NULL). */
int cli_call(const struct cli *cli, const struct Corral__Request *req,
    struct Corral__Response **resp);
/* CLI_EXIT_OK when RESP answers with EXPECTED (a Corral__Response's
 * response_case); else prints why, frees RESP and gives CLI_EXIT_FAILED. */
int cli_expect(struct Corral__Response *resp, int expected);

#endif
