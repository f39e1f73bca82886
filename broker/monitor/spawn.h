/* Starting a sandbox's corral-init, for the root monitor (ARCHITECTURE.md,
 * "A sandbox's life").
 *
 * spawn_launch() starts corral-init in new mount, pid, network, UTS and
 * IPC namespaces (in the cgroup given, joined before its exec). It builds
 * at once the part of its file system no spec changes, then waits with
 * nothing but its channel open, so the caller can wire the network into
 * spawn_netns_fd() and join the v1 cgroups of spawn_pid(): a cold create
 * does this while corral-init builds, and a warm sandbox waits so until
 * a create claims it. spawn_prepare() checks the spec, opens every root
 * once with the caller's fsuid, fsgid and groups (O_PATH, no symlink
 * anywhere on the path) and clones each as a detached mount tree in the
 * host's mount namespace. spawn_ready() sends the spec and the trees and
 * waits until corral-init has built the rest, dropped to run_as and
 * answered, or refused.
 *
 * Errors: NULL or -1 and a one-line reason in *ERR (the caller frees it)
 * that says what was refused and why. Nothing here logs. */
#ifndef CORRAL_SPAWN_H
#define CORRAL_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "broker/monitor/monitor-wire.h"
#include "common/limits.h"

#define SPAWN_READY_TIMEOUT_MS 5000     /* for corral-init to build and answer */


struct spawn_spec {
	const char *name;       /* ^[a-z0-9][a-z0-9-]{0,62}$: the hostname inside */
	uid_t uid;              /* run_as; 0 is refused */
	gid_t gid;              /* run_as's primary group, its only group; 0 is refused */
	uid_t caller_uid;       /* whose rights open the roots (SO_PEERCRED) */
	gid_t caller_gid;
	const gid_t *caller_groups;     /* SO_PEERGROUPS */
	size_t n_caller_groups;
	const struct monitor_root *roots;
	size_t n_roots;         /* 1 to CORRAL_ROOTS_MAX */
	const char *home;       /* HOME, a folder the daemon prepared (opened
	                         * with the daemon's rights), at its own path */
	int home_fd;            /* HOME already opened (O_PATH, not taken), or
	                         * -1 to open HOME by its path */
	const char *workdir;    /* commands' default cwd; NULL: the first
	                         * writable root, else HOME */
	const char *gateway;    /* the sandbox's gateway: its only nameserver */
	const char *runtime;    /* corral's runtime folder, shown read-only, or NULL */
	const char *ca_pem;     /* the sandbox CA's certificate (PEM), added to the
	                         * trust bundle inside; NULL: none */
	uint64_t tmpfs_bytes;   /* the size of /tmp and of /dev/shm, each; 0 is refused */
	const char *const *own_dirs;    /* corrald's state, log and profile
	                                 * folders: no root may reach them */
	size_t n_own_dirs;
	const struct monitor_socket *sockets;   /* host Unix sockets, opened with the
	                                         * caller's rights (each one it may
	                                         * connect to) and bound inside */
	size_t n_sockets;       /* at most INITPROTO_SOCKETS_MAX */
};

struct spawn;

/* Starts corral-init (INIT_PATH, absolute) in CGROUP_FD's cgroup (v2; -1:
 * the monitor's own); it waits for the spec. */
struct spawn *spawn_launch(const char *init_path, int cgroup_fd, char **err);
/* Checks SPEC and opens what it names for spawn_ready; once per SP. */
int spawn_prepare(struct spawn *sp, const struct spawn_spec *spec, char **err);
/* corral-init's pid in the host's pid namespace. */
pid_t spawn_pid(const struct spawn *sp);
/* A pidfd of corral-init (owned by SP). */
int spawn_pidfd(const struct spawn *sp);
/* The sandbox's network namespace (owned by SP), for moving the veth in. */
int spawn_netns_fd(const struct spawn *sp);
/* Before spawn_ready: whether the kernel's Unix socket guard is on the
 * sandbox's cgroup, so that corral-init supervises connect() (the spec's
 * unix_guard). */
void spawn_set_unix_guard(struct spawn *sp, bool on);
/* Before spawn_ready: the sandbox CA's certificate (PEM; NULL: none),
 * for the trust bundle inside, when spawn_prepare did not have it. */
void spawn_set_ca(struct spawn *sp, const char *pem);
/* Sends the spec and waits at most TIMEOUT_MS for corral-init's answer. */
int spawn_ready(struct spawn *sp, int timeout_ms, char **err);
/* After spawn_ready: the Landlock ABI corral-init put in force (0: none)
 * and whether the workload seccomp filter can be applied. */
int spawn_landlock_abi(const struct spawn *sp);
bool spawn_seccomp(const struct spawn *sp);
/* Hands the exec channel over (to exec_channel_new); -1 before ready. */
int spawn_take_channel(struct spawn *sp);
/* Closes what SP still owns, and kills and reaps its corral-init (ready or
 * not: call it when the sandbox goes). Accepts NULL. */
void spawn_free(struct spawn *sp);

#endif
