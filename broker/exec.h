/* Commands in a sandbox, over its exec channel to corral-init (PROTOCOL.md
 * section 4), for the broker's libevent loop.
 *
 * exec_start() sends the command; corral-init forks it under the
 * sandbox's layers and answers. The answer and the exit come back through
 * callbacks from the loop: started(p, NULL) once it runs (or
 * started(p, why) if it could not start, and nothing after), then
 * exited(p, code) with the exit status, or 128+N for signal N, or -1 when
 * the sandbox went away first. A callback may free the exec_proc it is
 * given, and nothing else of the channel.
 *
 * In pipes mode the daemon makes the three pipes and keeps their ends
 * (non-blocking) for the caller to read and write; in tty mode
 * corral-init makes a pty of the sandbox's own devpts and its master
 * arrives with started(). Either way the descriptors belong to the
 * exec_proc: use them, do not close them. */
#ifndef CORRAL_EXEC_H
#define CORRAL_EXEC_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/limits.h"

#define EXEC_PATH "/usr/local/bin:/usr/bin:/bin"
#define EXEC_ENV_BASE_MAX 24            /* entries exec_env_new writes */

struct event_base;
struct exec_channel;
struct exec_proc;

struct exec_request {
	const char *const *argv;        /* NULL-terminated, at least argv[0] */
	const char *const *envp;        /* NULL-terminated: the whole environment */
	const char *cwd;                /* NULL: the sandbox's working folder */
	bool tty;
	unsigned int rows, cols;        /* the window (tty mode) */
	int extra_fd;                   /* the command's fd 3 (both modes); -1: none
					 * (0 to 2 count as none too). Not taken:
					 * the caller closes its copy once
					 * exec_start returns. */
};

/* A file operation (broker/init/fsop.h) for corral-init to run under a
 * workload's layers. Its result is written to OUT_FD's file; IN_FD's file
 * holds the input of a write or an edit (-1 otherwise). Neither is taken:
 * the caller closes its copies once exec_fsop_start returns. */
struct exec_fsop_request {
	unsigned int op;                /* enum fsproto_op */
	const char *path;               /* "" : the workspace */
	const char *pattern;            /* grep; NULL otherwise */
	int out_fd;
	int in_fd;
};

struct exec_callbacks {
	void (*started)(struct exec_proc *p, const char *why, void *arg);
	void (*exited)(struct exec_proc *p, int code, void *arg);
};

/* Serves the channel FD (taken: closed by exec_channel_free) in BASE;
 * LOST(ARG) is called once if corral-init goes away (after every proc's
 * last callback); it must not free the channel, only schedule that. */
struct exec_channel *exec_channel_new(struct event_base *base, int fd,
    void (*lost)(void *arg), void *arg);
/* corral-init's reports of Unix socket connects it refused or made to a
 * listed socket (common/initproto.h, UNIX): FN(U, ARG) for each, from the
 * loop; U and its texts live for the call only, its pidfd is closed after. */
struct initproto_unix;
typedef void (*exec_unix_fn)(const struct initproto_unix *u, void *arg);
void exec_channel_on_unix(struct exec_channel *ch, exec_unix_fn fn, void *arg);
/* Closes the channel, which ends the sandbox (corral-init exits, and the
 * kernel kills its pid namespace). Commands still open get no more calls;
 * file operations hear it once (exited -1, or started with a reason).
 * Accepts NULL. */
void exec_channel_free(struct exec_channel *ch);

/* Starts REQ; NULL with a reason in *ERR when it cannot even be sent. */
struct exec_proc *exec_start(struct exec_channel *ch, const struct exec_request *req,
    const struct exec_callbacks *cb, void *arg, char **err);
/* Starts the file operation REQ, answered through CB as a command is
 * (started, then exited: 0 done, 1 refused, other codes: no result);
 * NULL with a reason in *ERR when it cannot be sent. */
struct exec_proc *exec_fsop_start(struct exec_channel *ch, const struct exec_fsop_request *req,
    const struct exec_callbacks *cb, void *arg, char **err);
/* The command's pid inside the sandbox (after started), else -1. */
pid_t exec_pid(const struct exec_proc *p);
/* The daemon's ends: stdin (write), stdout and stderr (read); -1 in tty mode. */
int exec_stdin(const struct exec_proc *p);
int exec_stdout(const struct exec_proc *p);
int exec_stderr(const struct exec_proc *p);
/* Closes stdin, so the command reads end of file. */
void exec_close_stdin(struct exec_proc *p);
/* The pty master (tty mode, after started), else -1. */
int exec_tty(const struct exec_proc *p);
/* Sets the window size of the command's terminal. */
int exec_resize(struct exec_proc *p, unsigned int rows, unsigned int cols);
/* Sends SIG to the command's process group. */
int exec_kill(struct exec_proc *p, int sig);
/* Forgets P (the command goes on) and closes its descriptors. Accepts NULL. */
void exec_proc_free(struct exec_proc *p);

/* The environment a sandbox's command gets: the proxy variables in both
 * cases at GATEWAY:GATEWAY_CONNECT_PORT, NO_PROXY for loopback, HOME,
 * PATH=EXEC_PATH, LANG=C.UTF-8, then EXTRA (K=V strings, NULL-terminated,
 * may be NULL). Free it with exec_env_free. */
char **exec_env_new(const char *gateway, const char *home, const char *const *extra);
void exec_env_free(char **env);

#endif
