/* The monitor: corrald's root process. privsep_start() in the broker
 * forks it from the started process, once the configuration is loaded,
 * and it serves the broker over a SOCK_SEQPACKET socketpair
 * (broker/monitor/monitor-wire.h), one request at a time, with the closed
 * list of broker/monitor/privop.h.
 *
 * The monitor trusts nothing the broker sends: a request it does not
 * expect, a malformed message or one out of order ends it, as a broker
 * that sends one is broken or subverted. Whenever it ends (that, or the
 * broker's end closing: exit, crash, SIGKILL), it tears down every
 * sandbox it built, the fence, its cgroup roots and the control socket
 * first. This header is what the broker needs to start it. */
#ifndef CORRAL_MONITOR_H
#define CORRAL_MONITOR_H

#include <netinet/in.h>
#include <stddef.h>

struct grant;

#define MONITOR_PROCESS_NAME "corrald-monitor"  /* its name in ps */
#define MONITOR_OWN_DIRS_MAX 4         /* corrald's folders a setup names */

/* What the monitor is set up with, from the started process's
 * configuration (trusted: read before the fork). */
struct monitor_setup {
	const char *state_dir;          /* instance id and sandboxes' homes derive from it */
	struct in_addr pool;            /* network of the sandbox pool (a /30 per sandbox) */
	unsigned pool_prefix;
	const char *init_path;          /* corral-init */
	const char *runtime_dir;        /* shown read-only inside, or NULL */
	const struct grant *grants;     /* the operator's grants (corrald.yaml credentials) */
	size_t ngrants;
	const char *const *own_dirs;    /* corrald's state, log and profile
	                                 * folders: no sandbox's root may reach them */
	size_t n_own_dirs;
	const char *host_cgroup;        /* host_proxy.cgroup to watch, or NULL */
	const char *socket_path;        /* the control socket: callers' connections come
	                                 * from it, and it is removed at the end */
	int lock_fd;                    /* the state folder's lock, held to the end */
};

/* Becomes the monitor on FD, the link to the broker: sets up, says so in
 * a HELLO, serves until the link closes or misbehaves, tears down, exits.
 * Call it in the child of fork(), as root. */
void monitor_run(int fd, const struct monitor_setup *setup) __attribute__((noreturn));

#endif
