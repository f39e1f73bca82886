/* Edits of a loaded policy for `corral policy update`: add an endpoint to
 * an entry, remove an endpoint from every entry. The caller edits a copy,
 * then renders and reloads it (render.h, load.h) so the result passes the
 * same validation as a file, and only then puts it in force. */
#ifndef CORRAL_POLICY_EDIT_H
#define CORRAL_POLICY_EDIT_H

#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

#define EDIT_RULE_DEFAULT "added"

enum edit_err {
	EDIT_OK = 0,
	EDIT_ERR_NOMEM,
	EDIT_ERR_ENDPOINT,              /* not HOST:PORT */
	EDIT_ERR_HOST,                  /* the host is not a valid pattern (see match.h) */
	EDIT_ERR_PORT,                  /* the port is not 1-65535 */
	EDIT_ERR_BINARY,                /* a binary glob that is not absolute or has ".." */
	EDIT_ERR_RULE,                  /* an entry name that is empty or too long */
	EDIT_ERR_NOT_FOUND,             /* no entry has that endpoint */
};

/* A one-line description of ERR. */
const char *edit_strerror(enum edit_err err);

/* Parses "HOST:PORT" (HOST a name or wildcard pattern) into OUT (whose
 * name the caller frees) and *PORT. */
enum edit_err edit_parse_endpoint(const char *text, struct policy_host *out, uint16_t *port);

/* Adds ENDPOINT ("HOST:PORT") to the entry keyed RULE (created when
 * missing), letting through BINARIES (none: every binary). Binaries apply
 * to the whole entry, so new ones are added to its list. */
enum edit_err policy_edit_add_endpoint(struct policy *p, const char *rule,
    const char *endpoint, const char *const *binaries, size_t nbinaries);

/* Removes ENDPOINT's port from every entry that has it (an endpoint left
 * without ports goes, and an entry left without endpoints goes);
 * *REMOVED counts the ports removed. EDIT_ERR_NOT_FOUND when none was. */
enum edit_err policy_edit_remove_endpoint(struct policy *p, const char *endpoint,
    size_t *removed);

#endif
