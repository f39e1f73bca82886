/* The supervisor of a sandbox's connect() calls, in corral-init (the
 * ancestor of every workload, which ptrace-like access needs under Yama's
 * scope 1), for host Unix sockets (corral-policy(5), "UNIX SOCKETS").
 *
 * Every workload's seccomp filter hands connect() to corral-init
 * (seccomp_apply_workload with a listener, broker/init/seccomp.h). The
 * kernel guard on the sandbox's cgroup (broker/monitor/unixguard.bpf.c)
 * refuses every pathname connect and addressed send of a workload but
 * corral-init's own, so the supervisor:
 * - answers CONTINUE to whatever is not an AF_UNIX pathname (the connect
 *   then runs in the workload's task, where the identification program
 *   sees it; an address or descriptor swapped after the check meets the
 *   guard);
 * - for a pathname, reads the address once, takes the workload's socket
 *   (pidfd_getfd), opens the path once (O_PATH, from the workload's cwd
 *   when relative) and allows the socket when it is the sandbox's own (on
 *   one of its private tmpfs mounts, or bound by a socket of its network
 *   namespace: sock_diag) or one the policy listed; it then connects the
 *   workload's socket itself through /proc/self/fd/N, so the inode checked
 *   is the inode connected, and answers with the errno. Anything else gets
 *   EACCES.
 * Refusals and connects to listed sockets are reported to the daemon on
 * the exec channel (INITPROTO_UNIX, without waiting), which writes them to
 * the ledger: at most SOCKGUARD_REPORTS_PER_S a second; those over it, and
 * those a full channel cannot take, are counted and said with the next.
 *
 * Threads: up to SOCKGUARD_WORKERS_MAX. The idle ones wait on the
 * listeners, each armed for one event at a time; the thread that gets a
 * call serves it itself (no hand-over in between), and before a pathname
 * call (whose connect may block) it starts another when none waits. A
 * pathname call that finds nearly every thread held in a connect() gets
 * EAGAIN. They start with
 * the first listener, after corral-init has dropped and put its Landlock
 * layer on, and take no lock a forked child could need. Library-like:
 * never logs. */
#ifndef CORRAL_SOCKGUARD_H
#define CORRAL_SOCKGUARD_H

#include <stddef.h>
#include <sys/types.h>

#include "common/initproto.h"

#define SOCKGUARD_WORKERS_MAX 16        /* threads: calls served at once */
#define SOCKGUARD_REPORTS_PER_S 100     /* reports a second; the rest are counted */
#define SOCKGUARD_OWN_MAX 8             /* private tmpfs mounts of a sandbox */
#define SOCKGUARD_ERR_MAX_BYTES 256

/* The sockets of a sandbox's own and the policy's: what the decision
 * compares with. */
struct sockguard_config {
	dev_t own[SOCKGUARD_OWN_MAX];   /* file systems only the sandbox has */
	size_t n_own;
	struct {
		dev_t dev;
		ino_t ino;
		const char *name;       /* under INITPROTO_SOCKETS_DIR (not copied) */
	} listed[INITPROTO_SOCKETS_MAX];
	size_t n_listed;
	int chan;                       /* where reports go (not owned), or -1 */
};

struct sockguard;

/* Fills CFG from the sandbox built for SPEC (after mounts_build, in its
 * root): /tmp, /dev/shm, /run and a tmpfs HOME of its own; each listed
 * socket as bound in. -1 with a reason in ERR. */
int sockguard_config_read(const struct initproto_spec *spec, int chan,
    struct sockguard_config *cfg, char *err, size_t errlen);

/* A supervisor for CFG (copied); NULL with errno. Starts no thread yet. */
struct sockguard *sockguard_new(const struct sockguard_config *cfg);
/* Supervises the calls of the filter whose listener is FD (taken: closed
 * once no process uses the filter, or now on failure); starts the threads
 * at the first. -1 with errno. */
int sockguard_add(struct sockguard *g, int fd);
/* Waits, at most MAX_MS, until every thread of G waits for a call or is
 * held in a connect(), before the caller forks: a lock one of them held
 * would stay held in the child (an ASan build's allocator is not made
 * safe across fork, and a child stuck on it hung corral-init). NULL is
 * fine. */
void sockguard_quiesce(struct sockguard *g, int max_ms);

#endif
