/* The JSON shape of one sandbox, as `corral sandbox get --json` prints it
 * (corral(1)); `create --json` prints the same object and
 * `list --json` an array of them. */
#ifndef CORRAL_CLI_SANDBOX_JSON_H
#define CORRAL_CLI_SANDBOX_JSON_H

#include "common/corral.pb-c.h"
#include "common/json.h"

/* Writes S into J as one object: name, state, enforcement, missing_layers,
 * profile, roots, mounts, labels, session_id, agent, machine_id, runner,
 * network, credentials, created_at (RFC 3339), run_as, cwd, home, limits.
 * Strings the daemon left empty are written as null. */
void cli_sandbox_json(struct json *j, const Corral__SandboxInfo *s);

#endif
