/* What a non-root caller's policy may say. Such a sandbox runs as the
 * caller, so its policy may not set process:, and may name file-system paths
 * only within the sandbox's roots, the system baseline and the corral
 * runtime: a policy must never open to the caller what its roots did not.
 * Its unix_sockets may not lie in /proc, /sys, /dev or the runtime; the
 * monitor opens the others with the caller's rights and refuses any it
 * could not connect to itself. */
#ifndef CORRAL_POLICY_CALLER_H
#define CORRAL_POLICY_CALLER_H

#include <stddef.h>

#include "policy/policy.h"

enum caller_result {
	CALLER_OK = 0,                  /* nothing to refuse */
	CALLER_REFUSED,                 /* see the report's messages */
	CALLER_ERR_NOMEM,
};

/* The violations found, one line each (malloc'd). */
struct caller_report {
	char **messages;
	size_t nmessages;
};

/* Checks P for a non-root caller whose sandbox has the absolute ROOTS.
 * RUNTIME_DIR NULL means LIBEXECDIR "/corral". REPORT is filled (cleared
 * first) with every violation, not only the first. */
enum caller_result caller_check(const struct policy *p, const char *const *roots,
    size_t nroots, const char *runtime_dir, struct caller_report *report);

/* Frees what REPORT holds and empties it. */
void caller_report_clear(struct caller_report *report);

/* True when PATH is DIR or lies below it, by whole segments:
 * /home/sam/code-evil is not within /home/sam/code. */
bool caller_path_within(const char *path, const char *dir);

#endif
