/* corral: the command-line client. Global options, then a verb from the table. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/cli/cli.h"
#include "broker/cli/cli-secrets.h"
#include "broker/conf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/visible.h"
#include "common/xmalloc.h"
#include "policy/diag.h"

static int cli_help(struct cli *cli, int argc, char **argv);
static int cli_version(struct cli *cli, int argc, char **argv);

static const struct cli_cmd cli_table[] = {
	{ "help", "[VERB]", "show the verbs, or one verb's usage", cli_help },
	{ "version", "", "print the version", cli_version },
	{ "status", "[--json]", "say whether corrald answers, what it counts, and what the "
	    "kernel offers", cli_status },
	{ "metrics", "", "corrald's metrics, in the Prometheus text format (root)", cli_metrics },
	{ "reload", "[--close-revoked]", "read corrald.yaml and the profiles again (root)",
	    cli_reload },
	{ "policy render",
	    "[--root PATH[:ro]]... [--profile P] [--uid U --gid G] [--grant NAME]...",
	    "print the policy a sandbox on these roots would get", cli_policy_render },
	{ "policy check", "FILE", "check a policy file; errors as FILE:LINE:COL",
	    cli_policy_check },
	{ "policy get", "NAME [--json]", "print a sandbox's policy in force", cli_policy_get },
	{ "policy set", "[--close-revoked] [--json] NAME FILE",
	    "replace a sandbox's policy (validated first; in force on return)", cli_policy_set },
	{ "policy update",
	    "NAME [--rule R] [--add-endpoint H:P [--binary G]...]... "
	    "[--remove-endpoint H:P]... [--close-revoked] [--json]",
	    "add or remove endpoints of a sandbox's policy", cli_policy_update },
	{ "policy suggest", "NAME [--since T] [--json] [--apply]",
	    "the smallest additions that would have allowed a sandbox's refusals",
	    cli_policy_suggest },
	{ "denials", "NAME [--since T] [--json]", "what a sandbox was refused, structured",
	    cli_denials },
	{ "logs", "[NAME] [--sandbox NAME] [--denied] [--since T] [--until T] [--follow] [--json]",
	    "egress ledger records (of a sandbox, host mode, or all yours)", cli_logs },
	{ "report", "NAME|--all [--since T] [--until T] [--json]",
	    "per sandbox: hosts reached with bytes, refusals by reason, binaries", cli_report },
	{ "sandbox create",
	    "--root PATH[:ro]... [--cwd DIR] [--profile P | --policy FILE] [--run-as USER] "
	    "[--grant NAME]... [--secret NAME[=SOURCE]]... [--home DIR] [--label K=V]... "
	    "[--env K=V]... [--pids N] "
	    "[--memory SIZE] [--cpus N] [--session S] [--agent A] [--name N] "
	    "[--allow-nested-readonly] [--json]",
	    "create a sandbox on these folders", cli_sandbox_create },
	{ "sandbox list", "[--selector K=V,...] [--json]", "list the sandboxes",
	    cli_sandbox_list },
	{ "sandbox get", "NAME [--json]", "describe one sandbox", cli_sandbox_get },
	{ "sandbox delete", "NAME... | --all [--json]", "delete sandboxes (idempotent)",
	    cli_sandbox_delete },
	{ "exec", "NAME [--workdir D] [--env K=V]... [--timeout S] [--tty] -- CMD...",
	    "run one command in a sandbox; exits with its status", cli_exec },
	{ "run", "NAME [--shell S] [--timeout S] [--id ID] [--json [--follow]] -- 'COMMAND TEXT'",
	    "run a command in a sandbox's persistent shell; exits with its status", cli_run },
	{ "runs", "NAME [--json | --late ID]", "a sandbox's runs in flight and kept results, "
	    "or one run's late output", cli_runs },
	{ "runs get", "NAME ID [--json]", "a run's output and result, by its id (never run "
	    "again)", cli_runs_get },
	{ "runs attach", "NAME ID [--json]", "a run's output as it comes, then its result "
	    "(--json: a JSON line each)", cli_runs_attach },
	{ "interrupt", "NAME ID", "interrupt a run", cli_interrupt },
	{ "shell", "NAME", "an interactive shell in a sandbox, with a tty", cli_shell },
	{ "fs read", "NAME PATH [--json]", "read a file of a sandbox", cli_fs_read },
	{ "fs write", "NAME PATH [--content TEXT] [--json]",
	    "write a file (stdin without --content), under the write guard", cli_fs_write },
	{ "fs edit", "NAME PATH --old TEXT --new TEXT [--json]",
	    "replace the one occurrence of a text in a file", cli_fs_edit },
	{ "fs list", "NAME [PATH] [--json]", "list a folder of a sandbox", cli_fs_list },
	{ "fs grep", "NAME PATTERN [PATH] [--json]", "find lines matching a pattern",
	    cli_fs_grep },
	{ "forward", "NAME [ADDR:]HOST_PORT:SANDBOX_PORT | NAME PATH:SANDBOX_PORT | --list [--json]",
	    "reach a service on a sandbox's loopback from the host's, while this runs",
	    cli_forward },
	{ "reap", "[--json]", "remove what dead servers left behind", cli_reap },
};

#define CLI_NCMDS (sizeof(cli_table) / sizeof(cli_table[0]))
#define CLI_ERROR_MAX_BYTES 8192        /* one error's message */
#define CLI_ERROR_JSON_MAX_BYTES (CLI_ERROR_MAX_BYTES * 7 + 64)       /* escaped */

bool cli_json_errors;
bool cli_errored;

/* The exit status of a wire error CODE. */
static int
cli_exit_of(const char *code)
{
	static const struct {
		const char *code;
		int status;
	} statuses[] = {
		{ "usage", CLI_EXIT_USAGE }, { "not_found", CLI_EXIT_NOT_FOUND },
		{ "permission_denied", CLI_EXIT_REFUSED }, { "limit", CLI_EXIT_LIMIT },
		{ "unavailable", CLI_EXIT_UNAVAILABLE }, { "already_exists", CLI_EXIT_EXISTS },
	};

	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (code != NULL && strcmp(code, statuses[i].code) == 0)
			return statuses[i].status;
	return CLI_EXIT_FAILED;
}

/* MESSAGE of CODE on stderr: one JSON object under --json, else each line
 * after "corral: ", made safe (it may quote a name someone else chose). */
static void
cli_print_error(const char *code, const char *message)
{
	const char *line = message, *nl;
	struct json *j;

	cli_errored = true;
	if (cli_json_errors && (j = json_new(CLI_ERROR_JSON_MAX_BYTES)) != NULL) {
		json_object_begin(j);
		json_key(j, "error");
		json_object_begin(j);
		json_kv_string(j, "code", code);
		json_kv_string(j, "message", message);
		json_object_end(j);
		json_object_end(j);
		if (json_text(j, NULL) != NULL) {
			fprintf(stderr, "%s\n", json_text(j, NULL));
			json_free(j);
			return;
		}
		json_free(j);
	}
	for (; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		char *part = xstrndup(line, (size_t)(nl - line));

		fprintf(stderr, "corral: %s\n", cli_text(part));
		free(part);
	}
	fprintf(stderr, "corral: %s\n", cli_text(line));
}

/* The message of FMT and AP, printed as an error of CODE. */
static void cli_verror(const char *code, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void
cli_verror(const char *code, const char *fmt, va_list ap)
{
	char message[CLI_ERROR_MAX_BYTES];

	vsnprintf(message, sizeof(message), fmt, ap);
	cli_print_error(code, message);
}

int
cli_error(const char *code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verror(code, fmt, ap);
	va_end(ap);
	return cli_exit_of(code);
}

int
cli_unreachable(const char *why)
{
	return cli_error(errno == EACCES || errno == EPERM ? "permission_denied" : "unavailable",
	    "%s", why);
}

int
cli_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verror("failed", fmt, ap);
	va_end(ap);
	return CLI_EXIT_FAILED;
}

int
cli_command_status(int rc)
{
	return cli_errored && rc != CLI_EXIT_USAGE ? CLI_EXIT_CORRAL : rc;
}

const char *
cli_text(const char *s)
{
	static char ring[CLI_TEXT_RING][CLI_TEXT_MAX_BYTES];
	static unsigned next;

	return visible_copy(s, ring[next++ % CLI_TEXT_RING], CLI_TEXT_MAX_BYTES);
}

int
cli_usage(const struct cli_cmd *cmd)
{
	char line[CLI_ERROR_MAX_BYTES];

	if (cmd == NULL)
		snprintf(line, sizeof(line), "usage: corral VERB [ARGS] (try `corral help`)");
	else
		snprintf(line, sizeof(line), "usage: corral %s%s%s", cmd->name,
		    cmd->usage[0] != '\0' ? " " : "", cmd->usage);
	if (cli_json_errors) {
		cli_print_error("usage", line);
	} else {
		cli_errored = true;
		fprintf(stderr, "%s\n", line);
	}
	return CLI_EXIT_USAGE;
}

int
cli_json_option(int argc, char **argv, const char *verb, bool *json)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt != 'j')
			return cli_usage(cli_find(verb));
		*json = true;
	}
	return 0;
}

int
cli_print_json(struct json *j)
{
	const char *text = json_text(j, NULL);
	int rc = CLI_EXIT_OK;

	if (text == NULL)
		rc = cli_fail("the answer is too large to print as JSON");
	else
		puts(text);
	json_free(j);
	return rc;
}

const struct cli_cmd *
cli_find(const char *name)
{
	for (size_t i = 0; i < CLI_NCMDS; i++)
		if (strcmp(cli_table[i].name, name) == 0)
			return &cli_table[i];
	return NULL;
}

static void
cli_print_verbs(FILE *out)
{
	fprintf(out, "usage: corral [--config FILE] [--socket PATH] "
	    "[--profiles-dir DIR] VERB [ARGS]\n\nverbs:\n");
	for (size_t i = 0; i < CLI_NCMDS; i++)
		fprintf(out, "  %-16s %s\n", cli_table[i].name, cli_table[i].summary);
	fprintf(out, "\n`corral help VERB` shows a verb's arguments; "
	    "man corral(1) says more.\n");
}

/* `corral help GROUP`: every verb of the group ("sandbox"), and for
 * sandbox the secrets --secret may name. */
static int
cli_help_group(struct cli *cli, const char *group)
{
	size_t len = strlen(group);
	int shown = 0;

	for (size_t i = 0; i < CLI_NCMDS; i++)
		if (strncmp(cli_table[i].name, group, len) == 0 && cli_table[i].name[len] == ' ') {
			printf("usage: corral %s %s\n  %s\n", cli_table[i].name, cli_table[i].usage,
			    cli_table[i].summary);
			shown++;
		}
	if (shown == 0)
		return cli_fail("unknown verb '%s' (try `corral help`)", group);
	if (strcmp(group, "sandbox") == 0)
		cli_secrets_print_kinds(cli);
	return CLI_EXIT_OK;
}

static int
cli_help(struct cli *cli, int argc, char **argv)
{
	char name[64];
	const struct cli_cmd *cmd;

	if (argc < 2) {
		cli_print_verbs(stdout);
		return CLI_EXIT_OK;
	}
	snprintf(name, sizeof(name), "%s%s%s", argv[1], argc > 2 ? " " : "",
	    argc > 2 ? argv[2] : "");
	if ((cmd = cli_find(name)) == NULL && (cmd = cli_find(argv[1])) == NULL)
		return cli_help_group(cli, argv[1]);
	printf("usage: corral %s %s\n  %s\n", cmd->name, cmd->usage, cmd->summary);
	if (strcmp(cmd->name, "sandbox create") == 0)
		cli_secrets_print_kinds(cli);
	return CLI_EXIT_OK;
}

static int
cli_version(struct cli *cli, int argc, char **argv)
{
	printf("corral %s\n", PACKAGE_VERSION);
	return CLI_EXIT_OK;
}

/* Whether the verb's arguments ask for --json, before any "--" (what
 * follows it is a command's own). */
static bool
cli_wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0)
			return true;
	return false;
}

/* Finds the verb at ARGV: two words when the table has them, else one.
 * Sets *WORDS to the number of words used. */
static const struct cli_cmd *
cli_match_verb(int argc, char **argv, int *words)
{
	char name[64];
	const struct cli_cmd *cmd;

	if (argc >= 2) {
		snprintf(name, sizeof(name), "%s %s", argv[0], argv[1]);
		if ((cmd = cli_find(name)) != NULL) {
			*words = 2;
			return cmd;
		}
	}
	*words = 1;
	return cli_find(argv[0]);
}

/* Reports an unknown verb, naming the group's verbs when the first word is one. */
static int
cli_unknown_verb(int argc, char **argv)
{
	size_t len = strlen(argv[0]);
	int group = 0;

	for (size_t i = 0; i < CLI_NCMDS; i++)
		if (strncmp(cli_table[i].name, argv[0], len) == 0 &&
		    cli_table[i].name[len] == ' ') {
			if (!group++)
				fprintf(stderr, "usage:\n");
			cli_usage(&cli_table[i]);
		}
	if (group)
		return CLI_EXIT_USAGE;
	fprintf(stderr, "corral: unknown verb '%s' (try `corral help`)\n", argv[0]);
	return CLI_EXIT_USAGE;
}

/* The daemon's configuration (--config, CORRAL_CONFIG), when one is named:
 * the socket and the profiles folder it sets up, where no flag or variable
 * named them, so that the CLI talks to the daemon that file describes.
 * *CFG holds the strings. A file named and broken is an error, printed as
 * the daemon prints it; -1 then. */
static int
cli_read_config(struct cli *cli, struct config **cfg)
{
	struct policy_diags diags;
	char *errors;
	int rc = 0;

	*cfg = NULL;
	if (cli->config_path == NULL || cli->config_path[0] == '\0')
		return 0;
	policy_diags_init(&diags);
	if (config_load(cli->config_path, true, cfg, &diags) == -1) {
		errors = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE);
		fprintf(stderr, "corral: %s", errors != NULL ? errors : "cannot read the configuration\n");
		free(errors);
		rc = -1;
	} else {
		if (cli->socket_path == NULL || cli->socket_path[0] == '\0')
			cli->socket_path = (*cfg)->socket;
		if (cli->profiles_dir == NULL || cli->profiles_dir[0] == '\0')
			cli->profiles_dir = (*cfg)->profiles_dir;
	}
	policy_diags_clear(&diags);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option globals[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "profiles-dir", required_argument, NULL, 'p' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli cli = {
		.socket_path = getenv("CORRAL_SOCKET"),
		.config_path = getenv("CORRAL_CONFIG"),
		.profiles_dir = getenv("CORRAL_PROFILES_DIR"),
	};
	const struct cli_cmd *cmd;
	struct config *cfg;
	int opt, words, rc;

	log_init("corral", 1, LOG_LEVEL_WARN);
	while ((opt = getopt_long(argc, argv, "+h", globals, NULL)) != -1) {
		switch (opt) {
		case 'c': cli.config_path = optarg; break;
		case 's': cli.socket_path = optarg; break;
		case 'p': cli.profiles_dir = optarg; break;
		case 'V': return cli_version(&cli, 0, NULL);
		case 'h': cli_print_verbs(stdout); return CLI_EXIT_OK;
		default: cli_print_verbs(stderr); return CLI_EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		cli_print_verbs(stderr);
		return CLI_EXIT_USAGE;
	}
	if ((cmd = cli_match_verb(argc, argv, &words)) == NULL)
		return cli_unknown_verb(argc, argv);
	if (cli_read_config(&cli, &cfg) == -1)
		return CLI_EXIT_FAILED;
	if (cli.socket_path == NULL || cli.socket_path[0] == '\0')
		cli.socket_path = CLI_SOCKET_DEFAULT;
	cli_json_errors = cli_wants_json(argc, argv);
	/* The verb sees its own name as argv[0], as getopt expects. */
	optind = 0;
	rc = cmd->run(&cli, argc - words + 1, argv + words - 1);
	config_free(cfg);
	return rc;
}
