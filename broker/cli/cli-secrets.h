/* `corral sandbox create --secret NAME[=SOURCE]`: each value read by the
 * CLI with its user's rights (corral(1), "--secret"), then sent to corrald
 * and wiped here. A SOURCE is env:NAME, file:PATH (${HOME}/ is the grant
 * home) or gh-hosts; without one, the kind's own (corrald tells the
 * sources of the kinds its corrald.yaml defines). */
#ifndef CORRAL_CLI_SECRETS_H
#define CORRAL_CLI_SECRETS_H

#include <stddef.h>

#include "common/wire.h"
#include "policy/secret.h"

struct cli;

struct cli_secrets {
	size_t n;
	const char *specs[SECRET_PER_SANDBOX_MAX];       /* as given: NAME or NAME=SOURCE */
	char *names[SECRET_PER_SANDBOX_MAX];
	char *values[SECRET_PER_SANDBOX_MAX];            /* read; wiped by cli_secrets_clear */
	Corral__SecretValue msgs[SECRET_PER_SANDBOX_MAX];
	Corral__SecretValue *ptrs[SECRET_PER_SANDBOX_MAX];
};

/* Notes one --secret SPEC; its exit status on a usage error. */
int cli_secrets_add(struct cli_secrets *s, const char *spec);
/* Reads every value (HOME: --home or the caller's own, absolute; NULL:
 * the caller's) and points MSG's secrets at them. Exit status. */
int cli_secrets_read(const struct cli *cli, struct cli_secrets *s, const char *home,
    Corral__SandboxCreate *msg);
/* Wipes and frees what S read. */
void cli_secrets_clear(struct cli_secrets *s);
/* The secret kinds corrald knows, one line each, for `corral help`;
 * built-in ones only when corrald does not answer. */
void cli_secrets_print_kinds(const struct cli *cli);

#endif
