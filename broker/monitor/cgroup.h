/* The cgroups of sandboxes, for the root monitor of corrald (ARCHITECTURE.md,
 * "A sandbox's life"; corrald(8), "REGISTRY AND REAPING", for reaping).
 *
 * Layout. Each hierarchy has a base: the cgroup corrald runs in (its parent
 * when corrald moved itself into its leaf corrald-<instance>). Under it:
 *   <base>/corral-<instance>/            the instance root
 *   <base>/corral-<instance>/<sandbox>/  one leaf per sandbox
 * in cgroup v2 always (tracking, killing, the identification BPF program)
 * and, for each limit v2 cannot enforce, in the v1 hierarchy of its
 * controller. The instance id keeps a test daemon and the real one apart.
 *
 * Limits. Pids, memory and CPU each come from the v2 controller when the
 * base offers it, else from the mounted v1 controller, else they are not
 * enforced, and cgroup_limit_source() says which. Memory means memory
 * without swap: memory.swap.max is 0 (v2) and memory.memsw.limit_in_bytes
 * equals the limit (v1) where the kernel has those files. memory.oom.group
 * is left off: the OOM killer ends the process that overflows, not the
 * sandbox's init.
 *
 * Order the caller must follow to have a workload in every cgroup before
 * its first instruction: cgroup_sandbox_create(); clone3() corral-init
 * with CLONE_INTO_CGROUP and cgroup_sandbox_v2_fd() (v2 from the start),
 * corral-init blocking on its exec channel before anything else;
 * cgroup_sandbox_join(init's pid) for the v1 hierarchies; only then let
 * corral-init go on. Its workloads inherit every cgroup.
 *
 * Errors: each failing call returns -1 and, when ERR is not NULL, a
 * one-line reason in *ERR for the caller to free. Nothing here logs. */
#ifndef CORRAL_CGROUP_H
#define CORRAL_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "broker/monitor/monitor-wire.h"

#define CGROUP_ROOT_PREFIX "corral-"    /* instance roots: corral-<instance> */
#define CGROUP_LEAF_PREFIX "corrald-"   /* corrald's own v2 leaf: corrald-<instance> */
/* A warm sandbox's leaf: warm_<slot>. The underscore keeps it apart from
 * every sandbox name; v2 cannot rename a cgroup, so a claimed warm
 * sandbox keeps it. */
#define CGROUP_WARM_PREFIX MONITOR_WARM_PREFIX
#define CGROUP_CPU_PERIOD_US 100000     /* the CFS period every CPU limit uses */
#define CGROUP_CPU_MIN_MILLI 10         /* 1 ms of quota per period, the kernel's floor */
#define CGROUP_CPU_MAX_MILLI 1024000    /* 1024 CPUs */
#define CGROUP_KILL_WAIT_MS 2000        /* for a killed sandbox to empty */
#define CGROUP_RMDIR_WAIT_MS 200        /* for an emptied cgroup to stop being busy */

/* What a sandbox is limited in. */
enum cgroup_resource {
	CGROUP_PIDS,                    /* processes and threads */
	CGROUP_MEMORY,                  /* bytes of memory, swap excluded */
	CGROUP_CPU,                     /* CPU bandwidth */
	CGROUP_RESOURCES
};

/* Where a limit is enforced. */
enum cgroup_source {
	CGROUP_SOURCE_NONE,             /* nowhere: the machine cannot enforce it */
	CGROUP_SOURCE_V1,               /* the v1 hierarchy of its controller */
	CGROUP_SOURCE_V2,               /* the v2 hierarchy */
};

/* One mounted hierarchy as this process sees it; empty strings when absent. */
struct cgroup_hier {
	char mount[PATH_MAX];           /* its mount point */
	char rel[PATH_MAX];             /* the base as /proc/PID/cgroup names it ("/", "/a/b") */
	char base[PATH_MAX];            /* mount + rel: where instance roots go */
};

/* The cgroup set-up of this machine, as cgroup_host_discover() found it. */
struct cgroup_host {
	struct cgroup_hier v2;          /* v2, at /sys/fs/cgroup or /sys/fs/cgroup/unified */
	bool v2_controller[CGROUP_RESOURCES]; /* in the v2 base's cgroup.controllers */
	/* Pure v2 only: controllers must be enabled in the base's
	 * subtree_control, which the kernel refuses while the base holds
	 * processes, so corrald must first call cgroup_host_enter_leaf(). */
	bool v2_needs_leaf;
	struct cgroup_hier v1[CGROUP_RESOURCES]; /* each resource's v1 hierarchy */
	/* Kill by freezing and signalling even where cgroup.kill exists: the
	 * path of kernels before 5.14. Off after discovery; tests set it. */
	bool kill_by_signals;
};

/* The limits of one sandbox; 0 means no limit. */
struct cgroup_limits {
	uint64_t pids;                  /* processes and threads */
	uint64_t memory_bytes;
	uint32_t cpu_milli;             /* milli-CPUs: 500 is half a CPU */
};

struct cgroup_sandbox;

/* Fills HOST from /proc/self/mountinfo, /proc/self/cgroup and the base's
 * files. Changes nothing. */
int cgroup_host_discover(struct cgroup_host *host, char **err);
/* The same from the text of those two /proc files (for a fake tree). */
int cgroup_host_discover_from(struct cgroup_host *host, const char *mountinfo,
    const char *self_cgroup, char **err);
/* Where RES would be enforced on this host. */
enum cgroup_source cgroup_host_source(const struct cgroup_host *host, enum cgroup_resource res);
/* Moves this whole process into <v2 base>/corrald-<INSTANCE> so that
 * controllers can be enabled below the base; fails when other processes
 * remain in the base (corrald then needs its own unit with Delegate=yes). */
int cgroup_host_enter_leaf(struct cgroup_host *host, const char *instance, char **err);

/* Whether NAME may name a sandbox's leaf: a sandbox name, or
 * CGROUP_WARM_PREFIX and a number. */
bool cgroup_leaf_name_valid(const char *name);

/* Puts limits LIM on SB (a fresh cgroup has none: zero leaves one so). */
int cgroup_sandbox_limit(const struct cgroup_sandbox *sb, const struct cgroup_limits *lim,
    char **err);

/* Makes the cgroups of sandbox NAME under INSTANCE with limits LIM; refuses
 * a NAME whose cgroup exists in any hierarchy (reap it first). */
int cgroup_sandbox_create(const struct cgroup_host *host, const char *instance,
    const char *name, const struct cgroup_limits *lim, struct cgroup_sandbox **out, char **err);
/* A handle on the existing cgroups of NAME (those of its leaves that exist). */
int cgroup_sandbox_open(const struct cgroup_host *host, const char *instance,
    const char *name, struct cgroup_sandbox **out, char **err);
/* Closes the handle; the cgroups stay. Accepts NULL. */
void cgroup_sandbox_free(struct cgroup_sandbox *sb);

/* "v2", "v1" or "none": where SB's limit on RES is enforced. */
const char *cgroup_limit_source(const struct cgroup_sandbox *sb, enum cgroup_resource res);
/* An O_RDONLY descriptor (the caller's) on the file that counts how often
 * SB hit its limit on RES: for memory, its OOM kills (v2 memory.events,
 * v1 memory.oom_control: "oom_kill N"); for pids, its refused forks
 * (pids.events: "max N"). -1 when RES is not enforced or the kernel has
 * no such count (CPU has none: it only waits). */
int cgroup_sandbox_events_fd(const struct cgroup_sandbox *sb, enum cgroup_resource res);
/* The v2 leaf as an O_DIRECTORY descriptor owned by SB, for clone3's
 * CLONE_INTO_CGROUP and for attaching BPF programs. */
int cgroup_sandbox_v2_fd(const struct cgroup_sandbox *sb);
/* The name of SB's leaves: the sandbox's, or a warm sandbox's warm name,
 * which it keeps once claimed. */
const char *cgroup_sandbox_name(const struct cgroup_sandbox *sb);
/* Puts process PID in every leaf of SB (v2 included; a no-op there after
 * CLONE_INTO_CGROUP). Call it before PID runs workload code. */
int cgroup_sandbox_join(const struct cgroup_sandbox *sb, pid_t pid, char **err);
/* Up to MAX pids of the processes in SB's v2 leaf and below, into PIDS;
 * returns how many there are (possibly more than MAX), or -1. */
ssize_t cgroup_sandbox_procs(const struct cgroup_sandbox *sb, pid_t *pids, size_t max, char **err);
/* Kills every process of SB and waits, at most CGROUP_KILL_WAIT_MS, until
 * no leaf holds one. */
int cgroup_sandbox_kill(const struct cgroup_sandbox *sb, char **err);
/* Kills what is left, then removes SB's leaves in every hierarchy. */
int cgroup_sandbox_remove(const struct cgroup_sandbox *sb, char **err);

/* Calls FN once for each sandbox name found under INSTANCE in any
 * hierarchy, so that the reaper can remove those no live row owns. */
int cgroup_list_sandboxes(const struct cgroup_host *host, const char *instance,
    void (*fn)(const char *name, void *arg), void *arg, char **err);
/* Kills and removes the cgroups of sandbox NAME under INSTANCE, wherever
 * they exist; nothing to remove is a success. */
int cgroup_remove_by_name(const struct cgroup_host *host, const char *instance,
    const char *name, char **err);
/* Removes every sandbox of INSTANCE, then its roots. */
int cgroup_instance_remove(const struct cgroup_host *host, const char *instance, char **err);

#endif
