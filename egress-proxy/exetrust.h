/* Which executables a binary-scoped policy entry may match in a sandbox
 * (corral-policy(5), "Binaries"): never one the sandbox can write, could
 * have written, or whose owner on the host could change it.
 *
 * A path says nothing: curl copied to the workspace as bin/node has the
 * path a rule for node names. What the sandbox cannot have written is a
 * file on one of its read-only system mounts (/usr, /etc, /opt, ...: the
 * host's, bound read-only by corral-init), not at or below one of its
 * roots (a root is the user's folder, writable on the host and maybe in
 * another sandbox, even when this one sees it read-only) nor its HOME. The
 * device does not tell those apart (a root often lies on the same file
 * system as /usr), a read-only flag does not either (a read-only root has
 * it too): the mount does. The set of trusted mounts is read once, from
 * corral-init's mount table after it is built: no process inside may mount
 * or unmount, and the trees are private, so it holds for the sandbox's life
 * (and a running executable pins its mount, so its id is not reused).
 *
 * On a trusted mount a file is still not trusted unless root owns it and
 * neither its group nor others may write it, and it has no access ACL
 * (which may grant what the mode bits do not): a user who owns it, or may
 * write it, could change it from the host (a sandbox's user never is
 * root). Pure, but for exetrust_load(). */
#ifndef CORRAL_EXETRUST_H
#define CORRAL_EXETRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EXETRUST_MOUNTS_MAX 64          /* trusted mounts of one sandbox */
#define EXETRUST_MOUNTINFO_MAX_BYTES (1024 * 1024)      /* a mount table read whole */

struct exetrust {
	size_t n;
	uint32_t mounts[EXETRUST_MOUNTS_MAX];   /* statx's stx_mnt_id, mountinfo's first field */
};

/* What identification learned of one executable, from one statx. */
struct exetrust_file {
	uint32_t mnt_id;
	uid_t uid;
	mode_t mode;
	bool acl;                       /* it has system.posix_acl_access */
};

/* Fills T's mounts from TEXT, a mount table as /proc/PID/mountinfo gives
 * it (the paths as the sandbox sees them): those mounted read-only at or
 * below a system folder and not at or below any of the NEXCLUDED folders
 * (the roots and HOME). -1 with *WHY (static) when a line cannot be read
 * or there are more than EXETRUST_MOUNTS_MAX: the caller must refuse the
 * sandbox, never start it trusting too much or, silently, nothing. */
int exetrust_parse(struct exetrust *t, const char *text, const char *const *excluded,
    size_t nexcluded, const char **why);
/* Reads /proc/INIT_PID/mountinfo and parses it; -1 with *WHY (static),
 * errno set when reading failed. */
int exetrust_load(struct exetrust *t, pid_t init_pid, const char *const *excluded,
    size_t nexcluded, const char **why);
/* True when a binary-scoped entry may match F. */
bool exetrust_allows(const struct exetrust *t, const struct exetrust_file *f);

#endif
