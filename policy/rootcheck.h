/* Which folders a sandbox's root may not be. A root is shown inside at its
 * own path, read-only or not, and a read-only bind does not stop connect()
 * on a socket found in it, so a root must never be a way to the host's
 * kernel views, its services' sockets, corrald's own files or another
 * user's files. Refused, whatever the mode:
 * - "/" and the system and shared trees themselves (/proc, /sys, /dev,
 *   /run, /var/run, /var, /var/lib, /tmp, /var/tmp, /etc, /boot, /home,
 *   /root and the system folders a sandbox already sees read-only);
 * - anything inside /proc, /sys, /dev, /run or /var/run;
 * - an ancestor of any of those, of corrald's own folders or of another
 *   user's home;
 * - anything inside corrald's own folders (state, log, runtime) or another
 *   user's home.
 * A user's own folder inside /tmp or /var/www stays allowed. Pure: the
 * caller supplies corrald's folders and the homes. */
#ifndef CORRAL_POLICY_ROOTCHECK_H
#define CORRAL_POLICY_ROOTCHECK_H

#include <stdbool.h>
#include <stddef.h>

enum rootcheck_rule {
	ROOTCHECK_OK = 0,
	ROOTCHECK_NOT_CANONICAL,        /* not absolute, or ".", ".." or empty parts */
	ROOTCHECK_KERNEL_TREE,          /* inside /proc, /sys, /dev, /run */
	ROOTCHECK_SYSTEM,               /* a system or shared folder itself */
	ROOTCHECK_HOLDS_SYSTEM,         /* an ancestor of one */
	ROOTCHECK_CORRALD,              /* inside, or an ancestor of, corrald's folders */
	ROOTCHECK_OTHER_HOME,           /* inside, or an ancestor of, another user's home */
};

/* What corrald and the machine hold that no root may reach. */
struct rootcheck_context {
	const char *const *own;         /* corrald's state, log and runtime folders */
	size_t nown;
	const char *const *homes;       /* other users' homes (not the sandbox's user's) */
	size_t nhomes;
};

/* True when PATH is absolute, shorter than PATH_MAX, and has no "", "."
 * or ".." part ("/" is). */
bool rootcheck_path_canonical(const char *path);
/* Judges root PATH. *WHAT (may be NULL) names the folder that decided:
 * the system folder, corrald's folder or the home. */
enum rootcheck_rule rootcheck_judge(const char *path, const struct rootcheck_context *ctx,
    const char **what);
/* A static phrase for RULE, to follow "root PATH refused: it " and be
 * followed by the folder of *WHAT ("is a system or shared folder"). */
const char *rootcheck_strerror(enum rootcheck_rule rule);

#endif
