/* The broker's sandboxes: a create request checked and turned into a
 * monitor request, a proxy tenant and an exec channel; delete; look-ups.
 * Every sandbox also has a registry row. */
#ifndef CORRAL_SANDBOX_H
#define CORRAL_SANDBOX_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "broker/limits.h"
#include "common/wire.h"
#include "common/limits.h"

#define SANDBOX_ENV_MAX 64
#define SANDBOX_TEXT_MAX_BYTES 256       /* a label's key or value, a session id, an agent */
#define SANDBOX_CGROUP_LIMITS 3          /* pids, memory, cpus: a cgroup controller's each */
#define SANDBOX_GRANT_NAMES_MAX_BYTES 1024     /* "known: ..." in a refusal */
#define SANDBOX_MIN_REGULAR_UID 1000    /* below it: system accounts, never run_as by default */

struct monitor_grants;
struct secrets_shown;
struct daemon;
struct exec_channel;
struct exec_stream;
struct policy;
struct proxy_tenant;

/* Who asks: from SO_PEERCRED and SO_PEERGROUPS. */
struct sandbox_caller {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	gid_t groups[64];
	size_t ngroups;
	int fd;                         /* its connection, while the request is handled */
};

#define SANDBOX_RUN_NAME_BYTES 32       /* "exec:" and a pid */

struct sandbox;

/* The run of SB that the process PID, with its ANCESTORS (N, parent
 * first; all host pids), belongs to: a shell run's request id, or
 * "exec:PID" for an exec's command; NULL when none. The layers above this
 * one answer it (daemon.c registers it). */
typedef const char *(*sandbox_run_of_fn)(struct daemon *d, struct sandbox *sb, pid_t pid,
    const pid_t *ancestors, size_t n);

struct sandbox {
	char *name;
	uid_t owner;                    /* the caller that created it */
	uid_t uid;                      /* run_as */
	gid_t gid;
	char *profile;                  /* NULL when a policy was given */
	bool policy_edited;             /* set or updated since: a reload leaves it be */
	char *session_id;
	char *agent;
	char *cwd;
	char *home;
	char **roots;                   /* absolute paths */
	bool *writable;
	size_t nroots;
	char **labels;                  /* "key=value" */
	size_t nlabels;
	char **env;                     /* the grants' variables, then the caller's --env, "K=V" */
	struct monitor_grants *creds;  /* what the grants copied, or NULL */
	struct secrets_shown *secrets;  /* what it shows of its secrets (their values: its tenant's) */
	size_t nsecrets;
	size_t nenv;
	unsigned slot;
	struct in_addr gateway;
	struct in_addr address;
	int host_ifindex;               /* its veth's host end: bypass records name it */
	bool partial;                   /* started without every layer (best_effort) */
	char **missing;
	size_t nmissing;
	char *limit_source[SANDBOX_CGROUP_LIMITS];      /* pids, memory, cpu: v1, v2, none */
	struct limits_value limits[LIMITS_N];
	int landlock_abi;
	int64_t created_us;
	pid_t init_pid;
	struct proxy_tenant *tenant;
	struct exec_channel *channel;
	struct limitwatch *limit_watch;         /* its limit hits, recorded; NULL: none watched */
	struct exec_stream *streams;    /* the exec streams open on it (api-exec.c) */
	struct daemon *daemon;          /* for the ledger's run of its connections */
	char run_name[SANDBOX_RUN_NAME_BYTES];  /* sandbox_run_of's answer */
	struct sandbox *next;
};

/* The end of a create: the new sandbox, or NULL with an error code for the
 * wire and a one-line reason. */
typedef void (*sandbox_created_fn)(struct daemon *d, struct sandbox *sb, const char *code,
    const char *err, void *arg);
/* Starts creating REQ (copied) for CALLER and returns: the checks and the
 * registry's reservation happen now, the build in the monitor while the
 * loop goes on. DONE hears the end once, possibly before this returns
 * (a request refused outright). */
void sandbox_create(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__SandboxCreate *req, sandbox_created_fn done, void *arg);
/* Who must let go of a sandbox before it goes: the layers above this one
 * (exec streams, shells) register here, so this file names none of them. */
typedef void (*sandbox_gone_fn)(struct sandbox *sb);
#define SANDBOX_GONE_HOOKS_MAX 4
/* Adds FN to the hooks sandbox_delete calls first, in the order added. */
void sandbox_on_gone(struct daemon *d, sandbox_gone_fn fn);
/* Who waits for a teardown: WHY is NULL once what the monitor held of
 * NAME is gone, else why that is not known (the monitor is gone: the next
 * start reaps it). Both are valid during the call only. */
typedef void (*sandbox_destroyed_fn)(const char *name, const char *why, void *arg);
/* Tears SB down and forgets it: the hooks, then its tunnels, its channel
 * (corral-init ends), its registry row, at once; then what the monitor
 * holds (cgroups, namespace, HOME), after the monitor's earlier work.
 * DONE, when not NULL, hears once (possibly before this returns). */
void sandbox_delete(struct daemon *d, struct sandbox *sb, sandbox_destroyed_fn done, void *arg);
/* Has the monitor tear down what it holds of NAME (a sandbox the broker
 * no longer knows), in turn after its earlier work; DONE as above. */
void sandbox_destroy(struct daemon *d, const char *name, sandbox_destroyed_fn done, void *arg);
/* DONE joins those who wait for each teardown in flight of NAME (NULL:
 * of every name) whose sandbox CALLER may see: a delete that comes again
 * answers when the first one does. Returns how many it joined. */
size_t sandbox_await_teardowns(struct daemon *d, const char *name,
    const struct sandbox_caller *caller, sandbox_destroyed_fn done, void *arg);
/* Ends SB without the monitor (it is gone): the hooks, its tunnels, its
 * channel (corral-init ends, and every process of the sandbox with it);
 * its registry row stays for the next start to reap. */
void sandbox_abandon(struct daemon *d, struct sandbox *sb);
/* The sandbox NAME, or NULL. */
struct sandbox *sandbox_find(struct daemon *d, const char *name);
/* May CALLER see and use SB? Root may; others only their own. */
bool sandbox_visible(const struct sandbox *sb, const struct sandbox_caller *caller);
/* How many sandboxes live. */
unsigned sandbox_count(const struct daemon *d);
/* How many creates the monitor is building now. */
unsigned sandbox_creating_count(const struct daemon *d);
/* The lowest /30 of the pool that no sandbox, create in flight or warm
 * sandbox holds and whose old veth is gone (it dies with its namespace, a
 * little after the sandbox); -1 when none is left. */
int sandbox_free_slot(struct daemon *d);
/* Renders SB's policy again from PROFILE (its roots, run_as and grants
 * as at its create) and puts it in force; CLOSE_REVOKED closes the
 * tunnels it refuses (counted into *CLOSED). -1 with *ERR (malloc'd). */
int sandbox_follow_profile(struct daemon *d, struct sandbox *sb, const struct policy *profile,
    bool close_revoked, size_t *closed, char **err);
/* SB as the wire describes it (SandboxInfo), malloc'd for a Response. */
Corral__SandboxInfo *sandbox_info(const struct daemon *d, const struct sandbox *sb);

#endif
