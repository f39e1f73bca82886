/* Landlock layers for corral-init and its workloads (corral-policy(5),
 * filesystem_policy): a ruleset is built from paths and the kinds of
 * access granted beneath them, then applied to the calling thread as one
 * more layer. Every file-system right of the ABI is handled, so anything
 * not granted is denied; layers nest, and a later one can only narrow.
 * Network rules are never used. Functions return -1 with errno set on
 * failure and never log. */
#ifndef CORRAL_LANDLOCK_H
#define CORRAL_LANDLOCK_H

#include <stddef.h>

/* The Landlock ABI a sandbox needs for `enforcement: full` (scopes). */
#define LL_ABI_FULL 6
/* The most rules one ruleset holds. */
#define LL_RULES_MAX 256
/* What ll_status can report, and the length of each line. */
#define LL_MISSING_MAX 2
#define LL_MISSING_TEXT_MAX_BYTES 96

/* The kinds of access a path can be given. A file (rather than a folder)
 * gets only the rights that apply to files. */
enum ll_access {
	LL_READ_ONLY,   /* execute, read files, list folders */
	LL_READ_WRITE,  /* every file-system right of the ABI, REFER and
	                 * TRUNCATE included */
	LL_DEV,         /* device nodes: read, write, truncate (`> /dev/null`) */
	LL_TERMINAL,    /* LL_DEV and device ioctls (ABI 5): /dev/tty, /dev/pts */
};

/* Scopes (ABI 6): what a process of the layer cannot reach outside it. */
#define LL_SCOPE_ABSTRACT_UNIX 0x1u  /* connect to abstract Unix sockets */
#define LL_SCOPE_SIGNAL 0x2u         /* send signals */

struct ll_ruleset;

/* What is missing for `enforcement: full`, one line per missing piece. */
struct ll_status {
	int abi;
	size_t n_missing;
	char missing[LL_MISSING_MAX][LL_MISSING_TEXT_MAX_BYTES];
};

/* The running kernel's Landlock ABI; 0 when Landlock is absent or off. */
int landlock_abi(void);
/* Fills ST with what an ABI lacks for `enforcement: full` (0: no Landlock). */
void ll_status(int abi, struct ll_status *st);

/* An empty ruleset for ABI (from landlock_abi(); above the known ABI it
 * uses the rights of the known one). NULL (EOPNOTSUPP) when ABI < 1. */
struct ll_ruleset *ll_new(int abi);
/* Grants ACCESS beneath PATH, opened now (O_PATH) and kept by descriptor. */
int ll_allow_path(struct ll_ruleset *rs, const char *path, enum ll_access access);
/* The same for a descriptor the caller keeps (it is duplicated). */
int ll_allow_fd(struct ll_ruleset *rs, int fd, enum ll_access access);
/* Adds LL_SCOPE_* flags; -1 (EOPNOTSUPP) when the ABI is below 6. */
int ll_scope(struct ll_ruleset *rs, unsigned int scopes);
/* Sets no_new_privs and applies RS to the calling thread as a new layer. */
int ll_restrict_self(struct ll_ruleset *rs);
/* Closes the ruleset's descriptors; accepts NULL. */
void ll_free(struct ll_ruleset *rs);

/* Sets no_new_privs and applies one more layer that changes no file rule:
 * a domain boundary only (Landlock refuses ptrace-mode access from outside
 * a domain's own, /proc/PID/mem, environ and fd included), with the
 * LL_SCOPE_* flags SCOPES when ABI (from landlock_abi()) has scopes and
 * none otherwise. It handles only the right to make block devices, which
 * no sandbox process holds anyway (CAP_MKNOD). -1 (EOPNOTSUPP) when ABI < 1.
 * Allocates nothing: safe in a process just forked. */
int ll_domain_only(int abi, unsigned int scopes);

#endif
