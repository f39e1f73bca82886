/* Which process opened a proxied connection (corral-policy(5), "Binaries").
 *
 * A cgroup BPF program (broker/monitor/identify.bpf.c, loaded and attached
 * by the monitor, broker/monitor/bpfload.h) runs on
 * every TCP connect() made in a watched cgroup and records the caller: its
 * pid and thread as the initial pid namespace sees them, its start time, the
 * device and inode of its executable, and the same for its parents, keyed by
 * the socket's cookie. The proxy, holding the accepted end, asks inet_diag
 * for the cookie of the client's end (by its exact 4-tuple, in the client's
 * network namespace), looks the record up, and reads the executables' paths
 * from /proc, each checked against the recorded inode.
 *
 * Identification names the process that called connect(): a socket has one
 * creator, so "several owners" never arises from this record; a socket
 * passed to another process afterwards is still attributed to the one that
 * connected it. It is attribution plus a gate, not a wall: a listed
 * interpreter can run anything.
 *
 * Cost: the program adds ~1 us to each connect() in a watched cgroup; nothing
 * else runs unless the proxy calls identify_lookup().
 *
 * Privilege: the monitor loads the program and hands the map descriptor to
 * the broker. identify_lookup() needs no capability to read the map (kernel
 * >= 6.3; before that, kernel.unprivileged_bpf_disabled also gates map
 * lookups), none for inet_diag, and CAP_SYS_PTRACE to read /proc/PID/exe of
 * processes of another user (the sandbox's run_as). */
#ifndef CORRAL_IDENTIFY_H
#define CORRAL_IDENTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define IDENTIFY_ANCESTORS_MAX 16       /* parents recorded per connect, nearest first */
#define IDENTIFY_TEXT_MAX_BYTES 16384   /* all paths of one answer, NULs included */
#define IDENTIFY_BOUNDARIES_MAX 8       /* pids the ancestors may stop at */

enum identify_err {
	IDENTIFY_OK = 0,
	IDENTIFY_ERR_INVALID,           /* a bad argument (address family, NULL, count) */
	IDENTIFY_ERR_SYSTEM,            /* a system call failed; errno says which */
	IDENTIFY_ERR_NO_SOCKET,         /* no socket with that 4-tuple in the diag namespace */
	IDENTIFY_ERR_NO_RECORD,         /* the socket was not connected from the watched cgroup */
	IDENTIFY_ERR_GONE,              /* the process that connected has exited */
	IDENTIFY_ERR_REUSED,            /* its pid now belongs to another process */
	IDENTIFY_ERR_EXECED,            /* it runs another executable than when it connected */
	IDENTIFY_ERR_TOO_LONG,          /* the paths do not fit IDENTIFY_TEXT_MAX_BYTES */
};

/* A static English description of ERR. */
const char *identify_strerror(enum identify_err err);

/* The client's connection as the CLIENT sees it: LOCAL is its own address
 * (the proxy's getpeername), REMOTE is where it connected to (the proxy's
 * getsockname for the CONNECT listener; SO_ORIGINAL_DST for the transparent
 * one). Both of one family, AF_INET or AF_INET6. */
struct identify_tuple {
	struct sockaddr_storage local;
	struct sockaddr_storage remote;
};

/* The process that connected and its parents at that moment. The strings
 * point into TEXT, so the struct must not be copied. Paths are those the
 * process sees (its own mount namespace), per readlink of /proc/PID/exe,
 * each checked against the device and inode recorded at connect time. */
struct identify_owner {
	pid_t pid;                      /* thread group id, initial pid namespace */
	pid_t tid;                      /* the thread that called connect() */
	uint64_t start_time;            /* clock ticks since boot, /proc/PID/stat field 22 */
	dev_t exe_dev;                  /* the executable's device and inode */
	ino_t exe_ino;
	const char *exe;                /* the executable's path */
	bool exe_writable;              /* the sandbox can or could have written it */
	size_t n_ancestors;
	pid_t ancestor_pids[IDENTIFY_ANCESTORS_MAX];    /* parent first */
	const char *ancestors[IDENTIFY_ANCESTORS_MAX];  /* their executables' paths */
	bool ancestor_writable[IDENTIFY_ANCESTORS_MAX]; /* ... each like exe_writable */
	bool ancestors_truncated;       /* stopped at the cap, or at a parent gone or changed */
	char text[IDENTIFY_TEXT_MAX_BYTES];
};

/* Where the ancestors stop (those pids are excluded), as the initial pid
 * namespace numbers them: the persistent shell and corral-init, say. Pid 1
 * always stops them. N = 0 (or no boundary) goes up to pid 1. */
struct identify_boundary {
	size_t n;
	pid_t pids[IDENTIFY_BOUNDARIES_MAX];
};

struct exetrust;
/* Finds who connected the client end of TUPLE: asks inet_diag through
 * DIAG_FD for its cookie, looks the cookie up in MAP_FD, checks that the
 * recorded process still runs with the recorded start time and executable,
 * and fills OUT. Each executable is judged by TRUST (exetrust.h), from the
 * same statx that checks its inode; with TRUST NULL (the host's own
 * processes) none is marked writable. Not thread-safe (one caller per
 * DIAG_FD). */
enum identify_err identify_lookup(int diag_fd, int map_fd, const struct identify_tuple *tuple,
    const struct identify_boundary *boundary, const struct exetrust *trust,
    struct identify_owner *out);

#endif
