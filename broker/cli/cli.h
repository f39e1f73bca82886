/* The corral command line: shared state of one invocation and the verb table. */
#ifndef CORRAL_CLI_H
#define CORRAL_CLI_H

#include <stdbool.h>

#include "common/visible.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1       /* refused or failed, with a one-line reason on stderr */
#define CLI_EXIT_USAGE 2

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

/* Prints "corral: " and the message to stderr; returns CLI_EXIT_FAILED. */
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
int cli_interrupt(struct cli *cli, int argc, char **argv);
int cli_shell(struct cli *cli, int argc, char **argv);
int cli_fs_read(struct cli *cli, int argc, char **argv);
int cli_fs_write(struct cli *cli, int argc, char **argv);
int cli_fs_edit(struct cli *cli, int argc, char **argv);
int cli_fs_list(struct cli *cli, int argc, char **argv);
int cli_fs_grep(struct cli *cli, int argc, char **argv);

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
