/* The monitor: corrald's privileged operations, a closed list. Each takes
 * a request the broker validated, validates it again, and hands back
 * descriptors and facts, never parsing network bytes. The interface is
 * shaped as messages (plain structs in, structs and descriptors out) so
 * that it can run in a separate root process behind a socketpair. */
#ifndef CORRAL_MONITOR_H
#define CORRAL_MONITOR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "broker/monitor/spawn.h"

struct config_credential;
struct credcopy_result;
#define MONITOR_INSTANCE_MAX_BYTES 33   /* "i" and hex of the state folder's hash */
#define MONITOR_MISSING_MAX 8           /* layers a sandbox may lack, listed */
#define MONITOR_SLOTS_MAX 16384         /* /30s of a /16 pool */
#define MONITOR_GRANTS_MAX 16           /* grants of one sandbox */

struct monitor;
struct monitor_sandbox;

/* What the monitor is set up with, once. */
struct monitor_config {
	const char *state_dir;          /* instance id and sandboxes' homes derive from it */
	struct in_addr pool;            /* network of the sandbox pool (a /30 per sandbox) */
	unsigned pool_prefix;
	const char *init_path;          /* corral-init */
	const char *runtime_dir;        /* shown read-only inside, or NULL */
	uint16_t connect_port, transparent_port, dns_port;
	const struct config_credential *credentials;    /* the config's grants */
	size_t ncredentials;
};

/* A sandbox to build; the broker validated it (names, roots, run_as). The
 * monitor takes the caller's identity from CALLER_FD (the client's own
 * connection, handed over), never from the broker's word. */
struct monitor_create {
	int caller_fd;                  /* the client's socket (not owned) */
	const char *name;
	uid_t uid;                      /* run_as, never 0 */
	gid_t gid;
	uid_t caller_uid;               /* the roots are opened with the caller's rights: */
	gid_t caller_gid;               /* the monitor fills these four from caller_fd */
	const gid_t *caller_groups;
	size_t n_caller_groups;
	const struct spawn_root *roots;
	size_t n_roots;
	const char *workdir;            /* NULL: the first writable root */
	unsigned slot;                  /* its /30 in the pool */
	uint64_t pids;                  /* limits, 0: none */
	uint64_t memory_bytes;
	uint32_t cpu_milli;
	bool hard_requirement;          /* refuse when a layer is missing */
	const char *grant_home;         /* where grants are copied from (opened as the caller) */
	const char *const *grants;      /* grant names (built-in or the config's) */
	size_t n_grants;
};

/* What a built sandbox is, for the broker. */
struct monitor_built {
	pid_t init_pid;
	int channel_fd;                 /* the exec channel (the broker owns it) */
	int diag_fd;                    /* NETLINK_SOCK_DIAG in its network namespace (owned) */
	int map_fd;                     /* the identification map (the monitor's; -1: none) */
	int connect_fd;                 /* listening on the gateway's CONNECT port (owned) */
	int transparent_fd;             /* ... its transparent port (owned) */
	int dns_udp_fd, dns_tcp_fd;     /* ... its DNS port, UDP bound and TCP listening (owned) */
	struct in_addr gateway;         /* the host end, the proxy's address */
	struct in_addr address;         /* the sandbox end */
	char home[4096];                /* its private HOME */
	int landlock_abi;
	bool seccomp;
	const char *missing[MONITOR_MISSING_MAX];       /* layers not in force */
	size_t n_missing;
	const char *limit_source[3];    /* pids, memory, cpu: "v2", "v1", "none" */
	char text_store[512];           /* the texts above, when decoded from the monitor */
	struct credcopy_result *creds;  /* what the grants copied (owned), or NULL */
};

/* Sets up the privileged side: instance id, cgroups, the fence, the
 * identification program. NULL with a reason in *ERR. */
struct monitor *monitor_new(const struct monitor_config *cfg, char **err);
/* Removes the fence and frees M (sandboxes must be destroyed first). */
void monitor_free(struct monitor *m);
/* Watches CGROUP_PATH (host_proxy.cgroup) with the identification
 * program. -1 with a reason in *ERR. */
int monitor_watch_host(struct monitor *m, const char *cgroup_path, char **err);
/* Whether the host's firewall lets the fence work, as one line: "ok",
 * "at risk: why" or "unknown: why" (broker/monitor/fwcheck.h). */
void monitor_firewall(struct monitor *m, char *line, size_t size);
/* The identification map, or -1 when the program is not loaded. */
int monitor_map_fd(const struct monitor *m);
/* Closes the descriptors of B that are still open. */
void monitor_built_close(struct monitor_built *b);
/* The instance id ("i0123abcd"): names the fence table and cgroups. */
const char *monitor_instance(const struct monitor *m);

/* Builds sandbox REQ; fills OUT. -1 with a one-line reason in *ERR, and
 * nothing of it left behind. */
int monitor_create(struct monitor *m, const struct monitor_create *req,
    struct monitor_built *out, char **err);
/* Tears down sandbox NAME: kills its processes, removes its cgroups, its
 * home and its namespace (the veth dies with it). Idempotent. */
int monitor_destroy(struct monitor *m, const char *name, char **err);
/* Removes what no live sandbox owns: cgroups of this instance and homes
 * under the state folder whose names are not in LIVE; REMOVED (may be
 * NULL) hears of each ("cgroup NAME", "home NAME"). Returns the count. */
size_t monitor_reap(struct monitor *m, const char *const *live, size_t nlive,
    void (*removed)(const char *what, void *arg), void *arg);

#endif
