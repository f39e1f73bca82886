/* The monitor's messages (ARCHITECTURE.md, "Processes"): the broker asks
 * over a SOCK_SEQPACKET socketpair, the monitor answers each request in
 * order.
 * They ride the exec channel's codec (common/initproto.h: one
 * datagram per message, fields in a fixed order, descriptors by
 * SCM_RIGHTS), with their own types. The monitor decodes what the broker
 * sends as untrusted: every count is bounded here and every field is
 * checked again by monitor_create. Library-like: nothing here logs.
 *
 *   monitor -> broker  HELLO    set-up result, instance; fds: the identification
 *                               map, the bypass log
 *   broker -> monitor  CREATE   a sandbox to build; fd: the client's connection
 *                                                        -> BUILT (6 fds) or FAILED
 *   broker -> monitor  CREATE_CA  right after every CREATE: the sandbox CA's
 *                               certificate, which the broker makes while the
 *                               monitor builds ("": the broker gave the create
 *                               up), read when the spec is sent; no answer
 *   broker -> monitor  DESTROY  a sandbox's name         -> DONE
 *   broker -> monitor  WARM     an address slot             -> DONE ("" or why)
 *   broker -> monitor  REAP     the live sandboxes       -> REAPED (what went)
 *   broker -> monitor  OWNER    a path; fd: the client's connection (root only)
 *                                                        -> OWNED or FAILED
 *   broker -> monitor  FIREWALL ""                       -> FIREWALL_IS (one line)
 *   broker -> monitor  NETSOCK  a sandbox's name; fd: the client's connection
 *                               (its creator or root)    -> NETSOCK_IS (fd: a TCP
 *                                                           socket in its network) or FAILED
 * Closing the socket asks the monitor to tear everything down and exit. */
#ifndef CORRAL_MONITOR_WIRE_H
#define CORRAL_MONITOR_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <netinet/in.h>

#include "common/limits.h"
#include "common/seqmsg.h"

#define MONITOR_WIRE_LIVE_MAX 4096      /* live names in one REAP */
#define MONITOR_WIRE_REAPED_MAX 256     /* removals listed in one REAPED (all are counted) */
#define MONITOR_WIRE_TEXT_MAX 512       /* a reason */
#define MONITOR_WIRE_LIST_MAX 64        /* hosts, files, skips, env entries of one grant's report */
#define MONITOR_WIRE_BUILT_FDS 6        /* channel, diag, connect, transparent, dns udp, dns tcp */
#define MONITOR_WIRE_EVENTS_FDS 2       /* and, when there, the memory and pids event counts */

#define MONITOR_INSTANCE_MAX_BYTES 33   /* "i" and hex of the state folder's hash */
#define MONITOR_MISSING_MAX 8           /* layers a sandbox may lack, listed */
#define MONITOR_HOME_MAX_BYTES 4096     /* a sandbox's HOME path */
#define MONITOR_SLOTS_MAX 16384         /* /30s of a /16 pool: CREATE names one */
#define MONITOR_SOCKETS_MAX 16          /* host Unix sockets one CREATE lists */
#define MONITOR_CA_PEM_MAX_BYTES 8192   /* the sandbox CA's certificate, PEM */
#define MONITOR_FILES_MAX 8             /* files one CREATE writes into the home */
#define MONITOR_FILE_MAX_BYTES 2048     /* ... each */
#define MONITOR_WARM_PREFIX "warm_"     /* a warm sandbox's name: warm_<slot>, which
                                         * DESTROY takes to discard it */

enum monitor_wire_type {
	MONITOR_HELLO = 64,
	MONITOR_CREATE,
	MONITOR_BUILT,
	MONITOR_FAILED,
	MONITOR_DESTROY,
	MONITOR_DONE,
	MONITOR_REAP,
	MONITOR_REAPED,
	MONITOR_OWNER,
	MONITOR_OWNED,
	MONITOR_FIREWALL,
	MONITOR_FIREWALL_IS,
	MONITOR_NETSOCK,
	MONITOR_NETSOCK_IS,
	MONITOR_WARM,
	MONITOR_CREATE_CA,
};

/* One of the caller's folders, shown at its own path. */
struct monitor_root {
	const char *path;               /* absolute, without symlinks, ".", ".." or "//" */
	bool read_only;
};

/* A host Unix socket of the policy, opened with the caller's rights and
 * bound inside at INITPROTO_SOCKETS_DIR/NAME. */
struct monitor_socket {
	const char *path;               /* absolute, normalized */
	const char *name;               /* one file name, checked again by the monitor */
};

/* A sandbox to build; the broker validated it (names, roots, run_as). The
 * monitor takes the caller's identity from CALLER_FD (the client's own
 * connection, handed over), never from the broker's word. */
/* A file written into a sandbox's private home (a secret's placeholder in
 * a tool's config: corral(1), "--secret"); never a secret's value. */
struct monitor_file {
	const char *path;               /* relative to the home, no "..", no leading "/" */
	const char *content;
};

struct monitor_create {
	int caller_fd;                  /* the client's socket (not owned) */
	const char *name;
	uid_t uid;                      /* run_as, never 0 */
	gid_t gid;
	uid_t caller_uid;               /* the roots are opened with the caller's rights: */
	gid_t caller_gid;               /* the monitor fills these four from caller_fd */
	const gid_t *caller_groups;
	size_t n_caller_groups;
	const struct monitor_root *roots;
	size_t n_roots;
	const char *workdir;            /* NULL: the first writable root */
	unsigned slot;                  /* its /30 in the pool */
	uint64_t pids;                  /* limits, 0: none */
	uint64_t memory_bytes;
	uint32_t cpu_milli;
	uint64_t tmpfs_bytes;           /* /tmp and /dev/shm, each */
	uint64_t home_bytes;            /* HOME, a tmpfs */
	bool hard_requirement;          /* refuse when a layer is missing */
	bool warm;                      /* build it on the warm sandbox of SLOT */
	const char *grant_home;         /* where grants are copied from (opened as the caller) */
	const char *const *grants;      /* grant names (built-in or the config's) */
	size_t n_grants;
	const struct monitor_socket *sockets;   /* the policy's host Unix sockets */
	size_t n_sockets;               /* at most MONITOR_SOCKETS_MAX */
	const struct monitor_file *files;       /* written into the home as run_as */
	size_t n_files;                 /* at most MONITOR_FILES_MAX */
};

/* A path a grant did not copy, and why. */
struct monitor_grant_skip {
	char *path;                     /* relative to the home */
	char *reason;
};

/* One grant as the monitor applied it. */
struct monitor_grant_applied {
	char *name;
	char **hosts;                   /* "host:port" */
	size_t nhosts;
	char **copied;                  /* files, relative to the home */
	size_t ncopied;
	struct monitor_grant_skip *skipped;
	size_t nskipped;
};

/* What the grants gave a sandbox. */
struct monitor_grants {
	struct monitor_grant_applied *grants;   /* in the request's order, then "gitconfig" */
	size_t ngrants;
	char **env;                             /* "NAME=VALUE" for every command */
	size_t nenv;
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
	int memory_events_fd;           /* its count of OOM kills, read-only (owned; -1: none) */
	int pids_events_fd;             /* ... of forks refused at its pids limit */
	struct in_addr gateway;         /* the host end, the proxy's address */
	struct in_addr address;         /* the sandbox end */
	int host_ifindex;               /* the host end's interface (the bypass log names it) */
	char home[MONITOR_HOME_MAX_BYTES];      /* its private HOME */
	int landlock_abi;
	bool seccomp;
	const char *missing[MONITOR_MISSING_MAX];       /* layers not in force */
	size_t n_missing;
	const char *limit_source[3];    /* pids, memory, cpu: "v2", "v1", "none" */
	char text_store[512];           /* the texts above, when decoded from the monitor */
	struct monitor_grants *creds;   /* what the grants copied (owned), or NULL */
};

/* Empties B: no descriptor (-1 each), no fact. */
void monitor_built_init(struct monitor_built *b);
/* Closes the descriptors of B that are still open. */
void monitor_built_close(struct monitor_built *b);
/* Frees G; NULL is fine. */
void monitor_grants_free(struct monitor_grants *g);

/* What the monitor says once it is set up. */
struct monitor_hello {
	bool sandboxes;                 /* sandboxes can be built */
	char why[MONITOR_WIRE_TEXT_MAX];        /* else, why not */
	char instance[MONITOR_INSTANCE_MAX_BYTES];
	bool host_watched;              /* host_proxy.cgroup is watched */
	char host_why[MONITOR_WIRE_TEXT_MAX];   /* else, why not ("" when not asked) */
	int map_fd;                     /* the identification map, or -1 */
	int bypass_fd;                  /* the fence's NFLOG group, bound (owned), or -1 */
	char bypass_why[MONITOR_WIRE_TEXT_MAX]; /* why it is -1 ("" when not set up) */
};

/* A decoded CREATE: the request and the storage its pointers lead into.
 * Its caller_* fields are left empty: the monitor fills them from
 * req.caller_fd. */
struct monitor_wire_create {
	struct monitor_create req;
	struct monitor_root roots[CORRAL_ROOTS_MAX];
	const char *grants[CORRAL_GRANTS_MAX];
	struct monitor_socket sockets[MONITOR_SOCKETS_MAX];
	struct monitor_file files[MONITOR_FILES_MAX];
};

/* A decoded REAPED. */
struct monitor_wire_reaped {
	uint32_t count;                 /* everything removed */
	size_t n;                       /* of which listed */
	char what[MONITOR_WIRE_REAPED_MAX][96];
};

void monitor_wire_hello_encode(struct seqmsg *m, const struct monitor_hello *h);
int monitor_wire_hello_decode(struct seqmsg *m, struct monitor_hello *h);

void monitor_wire_create_encode(struct seqmsg *m, const struct monitor_create *r);
/* Strings of OUT point into M: keep M until OUT is used. OUT->req.caller_fd
 * is taken from M (the caller closes it). */
int monitor_wire_create_decode(struct seqmsg *m, struct monitor_wire_create *out);

/* BUILT carries B's descriptors (attached, not owned). */
void monitor_wire_built_encode(struct seqmsg *m, const struct monitor_built *b);
/* Takes the descriptors into B; its texts are copied into B, the grants'
 * result allocated (B->creds: monitor_grants_free it). */
int monitor_wire_built_decode(struct seqmsg *m, struct monitor_built *b);

/* A message of TYPE holding one text (FAILED, DESTROY, DONE with "" on
 * success, OWNER: then FD is attached, else -1) or a list of texts (REAP,
 * REAPED after a count). */
/* Whether WHY, a FAILED's text, is the monitor's refusal of what the caller
 * may not have ("refused: ...", "root X refused: ...") rather than a
 * failure of the machine's. */
bool monitor_wire_refusal(const char *why);
void monitor_wire_text_encode(struct seqmsg *m, enum monitor_wire_type type,
    const char *text, int fd);
/* *FD (may be NULL when none is expected) takes the attached descriptor. */
int monitor_wire_text_decode(struct seqmsg *m, enum monitor_wire_type type,
    const char **text, int *fd);
void monitor_wire_list_encode(struct seqmsg *m, enum monitor_wire_type type,
    uint32_t count, const char *const *texts, size_t n);
/* Calls EACH for every text (at most MAX); -1 when malformed or too many. */
int monitor_wire_list_decode(struct seqmsg *m, enum monitor_wire_type type,
    size_t max, uint32_t *count, void (*each)(const char *text, void *arg), void *arg);

/* WARM: the address slot of the warm sandbox to build. */
void monitor_wire_warm_encode(struct seqmsg *m, unsigned slot);
int monitor_wire_warm_decode(struct seqmsg *m, unsigned *slot);

/* OWNED: the owner of the path asked. */
void monitor_wire_owned_encode(struct seqmsg *m, uid_t uid, gid_t gid);
int monitor_wire_owned_decode(struct seqmsg *m, uid_t *uid, gid_t *gid);

#endif
