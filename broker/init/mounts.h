/* The sandbox's file system (ARCHITECTURE.md, "A sandbox's life"), built by
 * corral-init in its new mount namespace while it is still root, from the
 * spec and the detached trees the daemon opened with the caller's rights.
 * When mounts_build returns 0 the process's root is the new tree and the
 * host's is gone from the namespace. Library-like: -1 with a reason in
 * ERR, never logs; a failure leaves a namespace fit only to exit from. */
#ifndef CORRAL_MOUNTS_H
#define CORRAL_MOUNTS_H

#include <stddef.h>

#include "common/initproto.h"

/* Where corral-init assembles the new root before pivot_root; its own
 * namespace's copy of the host's /tmp, hidden by a tmpfs. */
#define MOUNTS_STAGING_DIR "/tmp"
/* Where the sandbox's generated resolv.conf lives inside. */
#define MOUNTS_RESOLV_PATH "/run/corral/resolv.conf"
#define MOUNTS_BUNDLE_MAX_BYTES (8 * 1024 * 1024)

/* The device nodes bound from the host into /dev. NULL-terminated. */
extern const char *const mounts_dev_nodes[];

struct mounts;

/* Builds, before the spec comes, what no spec changes: the new root with
 * the system folders, /run, /dev (without /dev/shm), /proc and the masks
 * of the host's files. A failure is kept and told by mounts_build. NULL
 * only when out of memory (mounts_build tells that too). */
struct mounts *mounts_prepare(void);
/* Builds the spec's part of the tree on M and pivots into it; frees M.
 * Consumes (closes) the spec's root and HOME descriptors whether it
 * succeeds or not. */
int mounts_build(struct mounts *m, struct initproto_spec *spec, char *err, size_t errlen);

#endif
