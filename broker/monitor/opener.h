/* Opening the caller's folders and sockets with the caller's rights, for
 * the root monitor (ARCHITECTURE.md, "A sandbox's life").
 *
 * The opening is done in a child of the monitor that takes the caller's
 * file-system identity (fsuid, fsgid, groups: the capabilities that
 * bypass file permissions go with it), never in the monitor: a file
 * system that never answers (a user's FUSE mount) holds that child, which
 * is killed at the deadline, never the monitor that serves everyone.
 *
 * The child is forked ahead (opener_prepare, after a create was answered)
 * and waits for one request: a create pays neither the fork nor the
 * child's end, only the opening. It holds nothing of the monitor's but
 * its socket (every other descriptor closed), and dies with the monitor.
 *
 * Errors: -1 and a one-line reason in *ERR (the caller frees it) that
 * says what was refused and why. Nothing here logs. */
#ifndef CORRAL_OPENER_H
#define CORRAL_OPENER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/limits.h"

#define OPENER_ITEMS_MAX CORRAL_ROOTS_MAX       /* paths in one request: every root */
#define OPENER_GROUPS_MAX 256           /* supplementary groups of one caller */
#define OPENER_TIMEOUT_MS 5000          /* for the caller's files to open */

/* Whose rights open. */
struct opener_who {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t ngroups;
};

enum opener_kind {
	OPENER_ROOT,    /* a folder the caller may read (and write unless read_only);
	                 * refused when it holds .gnupg */
	OPENER_DIR,     /* a folder */
	OPENER_SOCKET,  /* a Unix socket the caller may connect to */
};

struct opener_item {
	const char *path;               /* absolute; no symlink may be on it */
	bool read_only;                 /* OPENER_ROOT */
};

/* Opens the N items (at most OPENER_ITEMS_MAX) of KIND as WHO, each
 * O_PATH with no symlink on the way, into FDS. */
int opener_open(const struct opener_who *who, enum opener_kind kind,
    const struct opener_item *items, size_t n, int *fds, char **err);
/* Forks the child the next opener_open uses, and reaps the last one. */
void opener_prepare(void);
/* Ends the child forked ahead (the monitor exits). */
void opener_end(void);
/* Opens folder PATH (O_PATH, no symlink on the way) with the calling
 * thread's own rights; -1 and errno. */
int opener_path(const char *path);

#endif
