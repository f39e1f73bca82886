/* corral-shell.so: the loadable bash builtin `corral` of persistent shells
 * (ARCHITECTURE.md, "Sessions: shells and files"; the messages are
 * shellinner.h's). The supervisor (corral-shell.c) starts one pristine
 * zygote, `bash --norc --noprofile -c` with the string
 *
 *     enable -f SO corral || exit 97; corral loop || exit 0; eval "$__corral_s"
 *
 * and each run is one clone of it, a spare made one run ahead:
 *
 *   corral loop   in the zygote: waits for SPAWN and makes each spare with
 *                 clone(CLONE_PARENT), the supervisor's child, so the kernel
 *                 tells the supervisor alone how it ended. Returns 1 when
 *                 the supervisor is gone. In the spare it takes a session
 *                 and a Landlock domain of its own, says READY, waits for
 *                 its script and output pipe, puts the script in
 *                 $__corral_s and arms the exit dump, and returns 0: the
 *                 -c string's eval then runs the script at top level, as
 *                 `bash -c` would.
 *   the exit dump (on_exit, in the spare's own process only) its working
 *                 folder (getcwd: the kernel's, whatever $PWD says) and
 *                 export_env, the environment bash would pass a command.
 *
 * The zygote never runs a run's text; nothing of one run reaches the next.
 * Bash's ABI for loadable builtins (struct builtin, WORD_LIST, unchanged
 * since bash 2) and the six variables and functions of bash's used here
 * are declared below: the build needs no bash headers. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "broker/init/landlock.h"
#include "broker/init/shellinner.h"
#include "common/shellwire.h"

/* ---- the part of bash's loadable-builtin ABI used here ---- */
typedef struct word_desc {
	char *word;
	int flags;
} WORD_DESC;
typedef struct word_list {
	struct word_list *next;
	WORD_DESC *word;
} WORD_LIST;
struct builtin {
	char *name;
	int (*function)(WORD_LIST *);
	int flags;
	char *const *long_doc;
	const char *short_doc;
	char *handle;
};
#define SHELLBUILTIN_ENABLED 0x01       /* bash's BUILTIN_ENABLED */
#define SHELLBUILTIN_OK 0               /* bash's EXECUTION_SUCCESS */
#define SHELLBUILTIN_FAIL 1             /* EXECUTION_FAILURE */
#define SHELLBUILTIN_USAGE 2            /* EX_USAGE */
extern void *bind_variable(const char *, char *, int);
extern void maybe_make_export_env(void);
extern char **export_env;
extern void builtin_error(const char *, ...);
extern pid_t dollar_dollar_pid;         /* $$ */
extern pid_t last_asynchronous_pid;     /* $! */

#define SHELLBUILTIN_NO_PID (-1)        /* bash's NO_PID */
#define SHELLBUILTIN_HIGH_FD 64         /* received descriptors are copied above the targets */
#define SHELLBUILTIN_DUMP_WAIT_MS 1000  /* the supervisor takes a dump chunk within it */

/* Why a spare ends before its run (its exit status; the supervisor asks
 * for another). */
enum shellbuiltin_spare_exit {
	SHELLBUILTIN_LET_GO = 0,        /* the supervisor closed its input */
	SHELLBUILTIN_NO_FDS = 121,      /* its descriptors could not be placed */
	SHELLBUILTIN_NO_SESSION = 122,
	SHELLBUILTIN_NO_DOMAIN = 123,   /* Landlock refused a domain of its own */
	SHELLBUILTIN_NO_SCRIPT = 124,   /* the script or its pipe came malformed */
};

/* Where this process is in its life. */
enum shellbuiltin_stage {
	SHELLBUILTIN_ZYGOTE,            /* loaded: `corral loop` may run */
	SHELLBUILTIN_RUN,               /* a run's shell: the builtin has no more to do */
};

static enum shellbuiltin_stage shellbuiltin_stage;
/* In the run's shell: its own pid, whose exit() the dump is for. */
static pid_t shellbuiltin_spare;
/* The dump's chunk, in static memory: the exit path allocates nothing. */
static char shellbuiltin_chunk[SHELLINNER_CHUNK_MAX_BYTES];

/* One datagram KIND + DATA on FD; blocking, but for at most
 * SHELLBUILTIN_DUMP_WAIT_MS when the peer does not read. */
static int
shellbuiltin_send(int fd, char kind, const void *data, size_t len)
{
	struct iovec iov[2] = { { &kind, 1 }, { (void *)(uintptr_t)data, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	ssize_t n;

	while ((n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT)) == -1 &&
	    (errno == EINTR || errno == EAGAIN)) {
		/* A run's own process may have filled the socket: its dump is
		 * lost, its shell must still exit. */
		if (errno == EAGAIN && poll(&p, 1, SHELLBUILTIN_DUMP_WAIT_MS) <= 0)
			return -1;
	}
	return n == -1 ? -1 : 0;
}

/* One datagram from FD with up to NFDS descriptors (the rest are closed)
 * into BUF; its length (0 at end of file, -1 on error) and the number of
 * descriptors in *GOT. */
static ssize_t
shellbuiltin_recv(int fd, void *buf, size_t size, int *fds, size_t nfds, size_t *got)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(SHELLINNER_SPAWN_FDS * sizeof(int))];
	} ctl;
	struct iovec iov = { buf, size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
	    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	ssize_t n;
	int one;

	*got = 0;
	do {
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	} while (n == -1 && errno == EINTR);
	for (c = CMSG_FIRSTHDR(&mh); n >= 0 && c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			memcpy(&one, CMSG_DATA(c) + i * sizeof(int), sizeof(one));
			if (*got < nfds)
				fds[(*got)++] = one;
			else
				close(one);
		}
	}
	if (n > 0 && (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return -1;
	return n;
}

/* In a new spare: the input and state sockets at their numbers
 * (close-on-exec: commands never hold them), and nothing else of the
 * zygote's but 0, 1 and 2, the supervisor's /dev/null (corral-shell.c,
 * shell_stdio; 1 and 2 become the run's pipe when its script comes).
 * Inheriting them costs nothing; opening /dev/null in every spare was a
 * path walk under Landlock per run. Received descriptors may sit where
 * another must go, so each is first copied above every target. */
static int
shellbuiltin_place(const int fds[SHELLINNER_SPAWN_FDS])
{
	int high[SHELLINNER_SPAWN_FDS];

	for (int i = 0; i < SHELLINNER_SPAWN_FDS; i++) {
		if ((high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, SHELLBUILTIN_HIGH_FD)) == -1)
			return -1;
	}
	if (fcntl(STDIN_FILENO, F_GETFD) == -1 || fcntl(STDOUT_FILENO, F_GETFD) == -1 ||
	    fcntl(STDERR_FILENO, F_GETFD) == -1 ||
	    dup3(high[0], SHELLINNER_IN_FD, O_CLOEXEC) == -1 ||
	    dup3(high[1], SHELLINNER_STATE_FD, O_CLOEXEC) == -1)
		return -1;
	close_range(STDERR_FILENO + 1, SHELLINNER_IN_FD - 1, 0);
	close_range(SHELLINNER_STATE_FD + 1, ~0U, 0);
	return 0;
}

/* The script from the input socket, in chunks each sized before it is
 * read (no large buffer to map and unmap on the run's path), and the
 * output pipe's write end that comes with the first chunk in *OUT; NULL
 * when the supervisor let the spare go or sent something malformed. */
static char *
shellbuiltin_script(int *out)
{
	char *script = NULL, *grown;
	size_t have = 0, got;
	ssize_t n;
	bool last = false;

	*out = -1;
	while (!last) {
		do {
			n = recv(SHELLINNER_IN_FD, NULL, 0, MSG_PEEK | MSG_TRUNC);
		} while (n == -1 && errno == EINTR);
		if (n <= 0 || have + (size_t)n > SHELLWIRE_SCRIPT_MAX_BYTES + 1 ||
		    (grown = realloc(script, have + (size_t)n + 1)) == NULL)
			break;
		script = grown;
		n = shellbuiltin_recv(SHELLINNER_IN_FD, script + have, (size_t)n,
		    *out == -1 ? out : NULL, *out == -1 ? 1 : 0, &got);
		if (n <= 0 || (have == 0 && got != 1) || (script[have] != SHELLINNER_SCRIPT &&
		    script[have] != SHELLINNER_SCRIPT_END))
			break;
		last = script[have] == SHELLINNER_SCRIPT_END;
		memmove(script + have, script + have + 1, (size_t)n - 1);
		have += (size_t)n - 1;
	}
	if (!last) {
		free(script);
		return NULL;
	}
	script[have] = '\0';
	return script;
}

/* Puts LEN bytes of S into the dump's chunk, sending full chunks; -1 when
 * the supervisor does not take them. */
static int
shellbuiltin_dump_put(size_t *at, const char *s, size_t len)
{
	size_t n;

	while (len > 0) {
		n = sizeof(shellbuiltin_chunk) - *at < len ? sizeof(shellbuiltin_chunk) - *at : len;
		memcpy(shellbuiltin_chunk + *at, s, n);
		*at += n;
		s += n;
		len -= n;
		if (*at == sizeof(shellbuiltin_chunk)) {
			if (shellbuiltin_send(SHELLINNER_STATE_FD, SHELLINNER_DUMP,
			    shellbuiltin_chunk, *at) == -1)
				return -1;
			*at = 0;
		}
	}
	return 0;
}

/* The exit dump of the spare's own shell: subshells inherit the
 * registration, and their state is not the run's. */
static void
shellbuiltin_dump(void)
{
	char pwd[PATH_MAX];
	size_t at = 0, total;

	/* The kernel's working folder, not $PWD: the run's text may set PWD
	 * to anything, and the report must say where the shell really is. */
	if (getcwd(pwd, sizeof(pwd)) == NULL)
		pwd[0] = '\0';
	maybe_make_export_env();
	total = strlen(pwd) + 1;
	for (char **e = export_env; e != NULL && *e != NULL; e++)
		total += strlen(*e) + 1;
	if (total > SHELLWIRE_STATE_MAX_BYTES) {
		(void)shellbuiltin_send(SHELLINNER_STATE_FD, SHELLINNER_DUMP_TOO_BIG, NULL, 0);
		return;
	}
	if (shellbuiltin_dump_put(&at, pwd, strlen(pwd) + 1) == -1)
		return;
	for (char **e = export_env; e != NULL && *e != NULL; e++) {
		if (shellbuiltin_dump_put(&at, *e, strlen(*e) + 1) == -1)
			return;
	}
	(void)shellbuiltin_send(SHELLINNER_STATE_FD, SHELLINNER_DUMP_END, shellbuiltin_chunk, at);
}

/* on_exit, first of the handlers (the last registered): the dump, then
 * straight to _exit with the same STATUS. What exit() would do next is
 * the run's cost alone: the libraries' destructors and the atfork and
 * atexit lists, a dozen page faults in a fresh clone, none of which a
 * shell about to end needs; its output is flushed first. */
static void
shellbuiltin_on_exit(int status, void *arg)
{
	(void)arg;
	if (shellbuiltin_spare == 0 || getpid() != shellbuiltin_spare)
		return;
	shellbuiltin_spare = 0;
	shellbuiltin_dump();
	fflush(NULL);
	_exit(status);
}

/* In the spare, from its clone to its script: never returns on failure. */
static void
shellbuiltin_spare_start(const int fds[SHELLINNER_SPAWN_FDS])
{
	int abi = landlock_abi(), out;
	sigset_t none;
	char *script;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	shellbuiltin_stage = SHELLBUILTIN_RUN;
	if (shellbuiltin_place(fds) == -1)
		_exit(SHELLBUILTIN_NO_FDS);
	/* A session of its own: the run's process group, signalled whole on
	 * an interrupt; no terminal. */
	if (setsid() == -1)
		_exit(SHELLBUILTIN_NO_SESSION);
	/* A domain of its own, nested in the zygote's (scoped for signals):
	 * no process of another run may read its memory or reopen its
	 * descriptors, its output pipe among them. */
	if (abi >= 1 && ll_domain_only(abi, 0) == -1)
		_exit(SHELLBUILTIN_NO_DOMAIN);
	/* The zygote's SCHED_BATCH (corral-shell.c) is not the run's. */
	(void)sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){ .sched_priority = 0 });
	if (shellbuiltin_send(SHELLINNER_STATE_FD, SHELLINNER_READY, NULL, 0) == -1)
		_exit(SHELLBUILTIN_LET_GO);
	script = shellbuiltin_script(&out);
	close(SHELLINNER_IN_FD);
	if (script == NULL)
		_exit(out == -1 ? SHELLBUILTIN_LET_GO : SHELLBUILTIN_NO_SCRIPT);
	if (dup2(out, STDOUT_FILENO) == -1 || dup2(out, STDERR_FILENO) == -1)
		_exit(SHELLBUILTIN_NO_FDS);
	close(out);
	/* $$ is the run's own shell, as in bash -c, never the zygote. */
	dollar_dollar_pid = getpid();
	last_asynchronous_pid = SHELLBUILTIN_NO_PID;
	bind_variable(SHELLWIRE_SCRIPT_VAR, script, 0);
	free(script);
	shellbuiltin_spare = getpid();
	if (on_exit(shellbuiltin_on_exit, NULL) != 0)
		shellbuiltin_spare = 0;
}

/* `corral loop`: the zygote's life; returns in each spare, ready to run. */
static int
shellbuiltin_loop(void)
{
	int fds[SHELLINNER_SPAWN_FDS];
	char kind;
	size_t got;
	ssize_t n;
	long pid;

	for (;;) {
		n = shellbuiltin_recv(SHELLINNER_ZYGOTE_FD, &kind, 1, fds, SHELLINNER_SPAWN_FDS,
		    &got);
		if (n <= 0 || kind != SHELLINNER_SPAWN || got != SHELLINNER_SPAWN_FDS) {
			for (size_t i = 0; i < got; i++)
				close(fds[i]);
			if (n <= 0)
				return SHELLBUILTIN_FAIL;       /* the supervisor is gone */
			continue;
		}
		/* fork() would make the zygote the parent and its SIGCHLD
		 * handler would reap the spare; CLONE_PARENT makes it the
		 * supervisor's child. A raw clone in a single-threaded bash:
		 * no lock is held, and glibc caches no pid. */
		pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL, NULL, 0);
		if (pid == 0) {
			shellbuiltin_spare_start(fds);
			return SHELLBUILTIN_OK;
		}
		/* A failed clone: the supervisor sees no READY and asks again. */
		for (int i = 0; i < SHELLINNER_SPAWN_FDS; i++)
			close(fds[i]);
	}
}

static int
shellbuiltin_main(WORD_LIST *list)
{
	const char *sub = list != NULL && list->word != NULL ? list->word->word : "";

	if (shellbuiltin_stage == SHELLBUILTIN_ZYGOTE && strcmp(sub, "loop") == 0)
		return shellbuiltin_loop();
	builtin_error("used by corral-shell only");
	return SHELLBUILTIN_USAGE;
}

/* Called by bash as `enable -f` loads the builtin: from here on the zygote
 * (and by fork every spare, the flag lives in the address space) is not
 * dumpable, so no run's process can read its memory or descriptors. */
int corral_builtin_load(char *name);

int
corral_builtin_load(char *name)
{
	(void)name;
	return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0;
}

static char shellbuiltin_name[] = "corral";
static char shellbuiltin_line[] = "corral-shell's runs (not for use by hand).";
static char *const shellbuiltin_doc[] = { shellbuiltin_line, NULL };

/* What bash's enable -f looks up: NAME_struct. */
extern struct builtin corral_struct;
struct builtin corral_struct = { shellbuiltin_name, shellbuiltin_main, SHELLBUILTIN_ENABLED,
	shellbuiltin_doc, "corral loop", NULL };
