/* corral-shell: the supervisor of one persistent shell (ARCHITECTURE.md,
 * "Sessions: shells and files"; the broker's link is common/shellwire.h,
 * the private messages broker/init/shellinner.h).
 *
 *     corral-shell SO        fd 3: the broker's socket; cwd: the workdir
 *
 * corral-init starts it as it starts any command (the workload's Landlock
 * layer, seccomp filter, no_new_privs). It holds the broker's socket,
 * evaluates nothing, is not dumpable, and stays outside the Landlock
 * domain in which every run lives, which is scoped for signals and
 * abstract sockets: no process a run starts can signal it, read its
 * memory or descriptors, or reach its sockets.
 *
 * Inside that domain a pristine zygote bash (--norc --noprofile) that has
 * loaded the builtin SO makes one spare per run, one run ahead, with
 * clone(CLONE_PARENT): each spare is this process's child. A spare takes a
 * session and a Landlock domain of its own, says READY on its state socket
 * (SO_PASSCRED: only datagrams from its own pid count), and waits for its
 * script. A run then is: the script and the write end of the run's output
 * pipe (the broker made it and reads the other end) to the spare's input
 * socket, and when waitpid says the spare ended, the kernel's status and
 * the spare's exit dump (only after a normal exit; the last one its own
 * pid sent) to the broker.
 * The zygote holds no state and may be killed by a run: it is started
 * again. This process reaps every orphan of the runs (a subreaper). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/init/landlock.h"
#include "broker/init/shellinner.h"
#include "common/seqmsg.h"
#include "common/shellwire.h"
#include "common/sock.h"
#include "common/timeutil.h"

#define SHELL_SCRIPT_MAX_BYTES 1024     /* the zygote's -c string */
#define SHELL_SPARE_READY_MS 2000       /* a spare asked for says READY within it */
#define SHELL_SEND_MS 2000              /* a spare takes a chunk of its script within it */
#define SHELL_RETRY_FIRST_MS 50         /* after a lost spare or zygote, then doubled */
#define SHELL_RETRY_MAX_MS 2000
#define SHELL_SPARE_FAILS_MAX 4         /* lost in a row before the waiting run fails */
#define SHELL_ZYGOTE_QUICK_MS 1000      /* a zygote that dies sooner is retried later */
#define SHELL_READY_BYTES 64            /* a spare's datagram before its run: READY */
#define SHELL_NS_PER_MS 1000000
#define SHELL_EXIT_BROKEN 1             /* the broker broke the protocol, or none is there */
#define SHELL_EXIT_NO_DOMAIN 96         /* the zygote's child could not enter its domain */
#define SHELL_EXIT_NO_EXEC 127


/* The spare asked for, one run ahead. */
struct shell_spare {
	bool asked;                     /* SPAWN sent */
	bool ready;                     /* READY came: pid is known */
	pid_t pid;
	int in;                         /* our end of its input socket */
	int state;                      /* our end of its state socket */
	int64_t asked_ms;
};

/* The run in the shell (the broker sends one at a time). */
struct shell_run {
	bool active;                    /* RUN came, EXITED or FAILED not yet sent */
	bool started;                   /* a spare has it: pid and state set */
	uint32_t no;
	char *script;
	size_t len, have;
	int out;                        /* the write end of its output pipe, until the spare has it */
	pid_t pid;
	int state;
	char *dump;                     /* the dump its shell is sending */
	size_t dump_len;
	size_t dump_fields;             /* NUL-ended fields in it */
	bool dump_done;                 /* the last dump from its pid is whole */
	bool dump_too_big;
	unsigned foreign;               /* datagrams from another pid, dropped */
};

struct shell {
	const char *so;
	int abi;
	pid_t zygote;
	int zygote_ctl;                 /* our end of the zygote's SHELLINNER_ZYGOTE_FD */
	int64_t zygote_ms;              /* when it started */
	int64_t retry_ms;               /* no spare is asked for before it */
	int64_t backoff_ms;
	unsigned spare_fails;
	struct shell_spare spare;
	struct shell_run run;
	char *last_dump;                /* the last dump sent: an equal one is SAME */
	size_t last_len;
	struct seqmsg *msg;
};

static int64_t
shell_now_ms(void)
{
	return time_mono_ns() / SHELL_NS_PER_MS;
}

/* The broker is gone or broke the protocol: so is the shell. Runs in
 * flight go on and end unreported; the zygote dies with us (PDEATHSIG). */
static void __attribute__((noreturn))
shell_end(int code)
{
	_exit(code);
}

static void
shell_send_nums(enum shellwire_type type, const uint32_t *nums, size_t n, int fd)
{
	if (shellwire_send_nums(SHELLWIRE_FD, type, nums, n, fd) == -1)
		shell_end(SHELL_EXIT_BROKEN);
}

static void __attribute__((format(printf, 3, 4)))
shell_send_text(enum shellwire_type type, uint32_t run, const char *fmt, ...)
{
	char text[SHELLWIRE_TEXT_MAX_BYTES];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (shellwire_send_text(SHELLWIRE_FD, type, run, text) == -1)
		shell_end(SHELL_EXIT_BROKEN);
}

static void
shell_close(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

/* ---- the zygote ---- */

/* Where the system's bash is, in the sandbox's read-only /usr or /bin. */
static const char *const shell_bash_paths[] = { "/bin/bash", "/usr/bin/bash", NULL };

/* In the forked child: the zygote's domain J, then bash. Never returns. */
static void __attribute__((noreturn))
shell_zygote_exec(const struct shell *sh, pid_t parent, int ctl)
{
	char script[SHELL_SCRIPT_MAX_BYTES];
	char *argv[] = { (char *)(uintptr_t)"bash", (char *)(uintptr_t)"--norc",
	    (char *)(uintptr_t)"--noprofile", (char *)(uintptr_t)"-c", script, NULL };
	sigset_t none;

	/* It dies with the supervisor, and must not outlive one that died
	 * before the flag was set. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 || getppid() != parent)
		_exit(SHELL_EXIT_BROKEN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* This supervisor ignores SIGPIPE; an ignored signal stays ignored
	 * across exec, and bash -c cannot undo it: runs would see EPIPE
	 * where a pipeline's writer is meant to die (yes | head -1). */
	signal(SIGPIPE, SIG_DFL);
	/* SCHED_BATCH never preempts on waking: the zygote's clone of the
	 * next spare waits for a free core instead of stalling the run in
	 * flight and its report. Each spare is SCHED_OTHER again before it
	 * says READY (shellbuiltin.c). */
	(void)sched_setscheduler(0, SCHED_BATCH, &(struct sched_param){ .sched_priority = 0 });
	/* J: the zygote and every run below it; scoped, so nothing in it can
	 * signal this supervisor or reach an abstract socket outside. */
	if (sh->abi >= 1 && ll_domain_only(sh->abi, LL_SCOPE_SIGNAL | LL_SCOPE_ABSTRACT_UNIX) == -1)
		_exit(SHELL_EXIT_NO_DOMAIN);
	if (dup2(ctl, SHELLINNER_ZYGOTE_FD) == -1)
		_exit(SHELL_EXIT_BROKEN);
	close_range(SHELLINNER_ZYGOTE_FD + 1, ~0U, 0);
	snprintf(script, sizeof(script), "enable -f '%s' corral || exit %d; corral loop || exit 0; "
	    "eval \"$%s\"", sh->so, SHELLINNER_EXIT_NO_BUILTIN, SHELLWIRE_SCRIPT_VAR);
	/* The system's bash, never one found through PATH: a run may write
	 * to a folder PATH names, and kill the zygote to have it started. */
	for (size_t i = 0; shell_bash_paths[i] != NULL; i++)
		execv(shell_bash_paths[i], argv);
	_exit(SHELL_EXIT_NO_EXEC);
}

static void
shell_zygote_start(struct shell *sh)
{
	pid_t self = getpid();
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1) {
		shell_send_text(SHELLWIRE_NOTE, 0, "socketpair: %s", strerror(errno));
		sh->retry_ms = shell_now_ms() + SHELL_RETRY_MAX_MS;
		return;
	}
	sh->zygote = fork();
	if (sh->zygote == 0)
		shell_zygote_exec(sh, self, sp[1]);
	close(sp[1]);
	if (sh->zygote == -1) {
		close(sp[0]);
		shell_send_text(SHELLWIRE_NOTE, 0, "fork: %s", strerror(errno));
		sh->retry_ms = shell_now_ms() + SHELL_RETRY_MAX_MS;
		return;
	}
	sh->zygote_ctl = sp[0];
	sh->zygote_ms = shell_now_ms();
}

/* ---- spares ---- */

static void
shell_spare_drop(struct shell *sh)
{
	shell_close(&sh->spare.in);
	shell_close(&sh->spare.state);
	sh->spare = (struct shell_spare){ .in = -1, .state = -1 };
}

/* The next spare or zygote waits: first SHELL_RETRY_FIRST_MS, then twice
 * as long each time, at most SHELL_RETRY_MAX_MS (a run that kills them in
 * a loop slows them down, and the notes with them). */
static void
shell_backoff(struct shell *sh)
{
	sh->backoff_ms = sh->backoff_ms == 0 ? SHELL_RETRY_FIRST_MS :
	    sh->backoff_ms * 2 > SHELL_RETRY_MAX_MS ? SHELL_RETRY_MAX_MS : sh->backoff_ms * 2;
	sh->retry_ms = shell_now_ms() + sh->backoff_ms;
}

/* A spare was lost before it was used: asked again later, and after too
 * many in a row the waiting run fails. */
static void
shell_spare_lost(struct shell *sh, const char *why)
{
	shell_spare_drop(sh);
	shell_backoff(sh);
	if (++sh->spare_fails < SHELL_SPARE_FAILS_MAX || !sh->run.active || sh->run.started)
		return;
	shell_send_text(SHELLWIRE_FAILED, sh->run.no, "no shell process could be made for the "
	    "run (%s)", why);
	shell_close(&sh->run.out);
	free(sh->run.script);
	sh->run = (struct shell_run){ .state = -1, .out = -1 };
	sh->spare_fails = 0;
}

/* Sends SPAWN with the spare's ends of two new socketpairs. */
static void
shell_spare_ask(struct shell *sh)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(SHELLINNER_SPAWN_FDS * sizeof(int))];
	} ctl;
	char kind = SHELLINNER_SPAWN;
	struct iovec iov = { &kind, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
	    .msg_controllen = sizeof(ctl.buf) };
	int in[2], st[2], one = 1, fds[SHELLINNER_SPAWN_FDS];
	struct cmsghdr *c;

	if (sh->spare.asked || sh->zygote == -1 || shell_now_ms() < sh->retry_ms)
		return;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, in) == -1) {
		shell_spare_lost(sh, strerror(errno));
		return;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, st) == -1) {
		close(in[0]);
		close(in[1]);
		shell_spare_lost(sh, strerror(errno));
		return;
	}
	/* Only our ends are non-blocking: the spare's dump must never lose a
	 * chunk to EAGAIN as it exits. */
	fcntl(st[0], F_SETFL, O_NONBLOCK);
	fcntl(in[0], F_SETFL, O_NONBLOCK);
	setsockopt(st[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	sh->spare = (struct shell_spare){ .asked = true, .in = in[0], .state = st[0],
	    .asked_ms = shell_now_ms() };
	fds[0] = in[1];
	fds[1] = st[1];
	memset(&ctl, 0, sizeof(ctl));
	c = &ctl.align;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	/* A zygote that is gone is noticed by SIGCHLD, and started again. */
	(void)sendmsg(sh->zygote_ctl, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(in[1]);
	close(st[1]);
}

/* True when PID is this process's child: waitid asks the kernel, and
 * WNOWAIT leaves a zombie for shell_reap. */
static bool
shell_is_child(pid_t pid)
{
	siginfo_t si;

	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

/* One datagram from the state socket FD into BUF, with its sender's pid
 * (-1 when none came); descriptors sent along are closed. The length, 0
 * at end of file, -1 when nothing is there. */
static ssize_t
shell_recv_cred(int fd, char *buf, size_t size, pid_t *pid)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(SEQMSG_FDS_MAX * sizeof(int))];
	} ctl;
	struct iovec iov = { buf, size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
	    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	struct ucred u;
	ssize_t n;

	*pid = -1;
	do {
		n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	} while (n == -1 && errno == EINTR);
	if (n == -1 && errno != EAGAIN)
		return 0;       /* an error on our end of the socket: as its end */
	for (c = CMSG_FIRSTHDR(&mh); n >= 0 && c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(u))) {
			memcpy(&u, CMSG_DATA(c), sizeof(u));
			*pid = u.pid;
		} else if (c->cmsg_type == SCM_RIGHTS) {
			for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int got;

				memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(got));
				close(got);
			}
		}
	}
	if (n >= 0 && (mh.msg_flags & MSG_TRUNC))
		*pid = -1;      /* cut short: counted as no one's */
	return n;
}

/* The spare's state socket before it is used: READY, or its end. */
static void
shell_spare_on_state(struct shell *sh)
{
	char buf[SHELL_READY_BYTES];
	pid_t pid;
	ssize_t n;

	while ((n = shell_recv_cred(sh->spare.state, buf, sizeof(buf), &pid)) != -1) {
		if (n == 0) {
			shell_spare_lost(sh, "it ended as it started");
			return;
		}
		/* Only the spare itself, the supervisor's own child, holds the
		 * socket now; anything else is ignored. */
		if (sh->spare.ready || n != 1 || buf[0] != SHELLINNER_READY || pid <= 0 ||
		    pid == sh->zygote || !shell_is_child(pid))
			continue;
		sh->spare.ready = true;
		sh->spare.pid = pid;
		sh->spare_fails = 0;
		sh->backoff_ms = 0;
	}
}

/* ---- runs ---- */

static void
shell_run_clear(struct shell *sh)
{
	shell_close(&sh->run.state);
	shell_close(&sh->run.out);
	free(sh->run.script);
	free(sh->run.dump);
	sh->run = (struct shell_run){ .state = -1, .out = -1 };
}

/* Sends the script to the spare's input, the output pipe with its first
 * chunk; -1 when the spare does not take it in time. */
static int
shell_run_send_script(struct shell *sh)
{
	struct pollfd p = { .fd = sh->spare.in, .events = POLLOUT };
	size_t at = 0, n;
	char kind;
	ssize_t rc;

	do {
		n = sh->run.len - at > SHELLINNER_CHUNK_MAX_BYTES ? SHELLINNER_CHUNK_MAX_BYTES :
		    sh->run.len - at;
		kind = at + n == sh->run.len ? SHELLINNER_SCRIPT_END : SHELLINNER_SCRIPT;
		struct iovec iov[2] = { { &kind, 1 }, { sh->run.script + at, n } };

		while ((rc = sock_send_fd(sh->spare.in, iov, 2, at == 0 ? sh->run.out : -1, 0)) == -1 &&
		    errno == EAGAIN) {
			/* A spare a run stopped (it may signal any run's process)
			 * holds the shell no longer than this. */
			if (poll(&p, 1, SHELL_SEND_MS) == 0)
				return -1;
		}
		if (rc == -1)
			return -1;
		at += n;
	} while (kind != SHELLINNER_SCRIPT_END);
	return 0;
}

/* The run has its script and a ready spare: it starts. */
static void
shell_run_start(struct shell *sh)
{
	sh->run.started = true;
	sh->run.pid = sh->spare.pid;
	sh->run.state = sh->spare.state;
	sh->spare.state = -1;
	/* Undoes a stop an earlier run's process may have sent the spare. */
	kill(sh->run.pid, SIGCONT);
	/* A spare that never takes its script is killed: its status says so. */
	if (shell_run_send_script(sh) == -1)
		kill(-sh->run.pid, SIGKILL);
	/* Whose connections are this run's: the broker names them in the
	 * ledger. Sent once the spare has its script, so the run starts a
	 * wake-up sooner; a connection of the run comes long after. */
	shell_send_nums(SHELLWIRE_STARTED, (uint32_t[]){ sh->run.no, (uint32_t)sh->run.pid }, 2, -1);
	shell_close(&sh->run.out);      /* only the run's processes write to it */
	free(sh->run.script);
	sh->run.script = NULL;
	shell_spare_drop(sh);
	shell_spare_ask(sh);            /* the next run's, while this one runs */
}

static void
shell_run_try_start(struct shell *sh)
{
	if (!sh->run.active || sh->run.started || sh->run.have != sh->run.len)
		return;
	if (sh->spare.ready)
		shell_run_start(sh);
	else
		shell_spare_ask(sh);
}

/* Keeps one datagram of the run's dump (BUF, N bytes, from PID). */
static void
shell_run_dump_add(struct shell_run *r, const char *buf, size_t n, pid_t pid)
{
	char *grown;

	if (pid != r->pid || n == 0 || (buf[0] != SHELLINNER_DUMP && buf[0] != SHELLINNER_DUMP_END &&
	    buf[0] != SHELLINNER_DUMP_TOO_BIG)) {
		r->foreign++;
		return;
	}
	if (r->dump_done) {
		/* A later dump from the same process replaces the earlier
		 * one: the exit handler's is always its last. */
		r->dump_done = r->dump_too_big = false;
		r->dump_len = r->dump_fields = 0;
	}
	if (buf[0] == SHELLINNER_DUMP_TOO_BIG) {
		r->dump_done = r->dump_too_big = true;
		return;
	}
	/* Fields are bounded too: EXITED carries each with a length, and a
	 * dump of empty fields would pass the message's bound. */
	for (size_t i = 1; i < n; i++)
		r->dump_fields += buf[i] == '\0';
	if (!r->dump_too_big && r->dump_len + n - 1 <= SHELLWIRE_STATE_MAX_BYTES &&
	    r->dump_fields <= SHELLWIRE_STATE_FIELDS_MAX &&
	    (grown = realloc(r->dump, r->dump_len + n)) != NULL) {
		r->dump = grown;
		memcpy(r->dump + r->dump_len, buf + 1, n - 1);
		r->dump_len += n - 1;
	} else {
		r->dump_too_big = true;
	}
	r->dump_done = buf[0] == SHELLINNER_DUMP_END;
}

/* Reads what is on the run's state socket. */
static void
shell_run_on_state(struct shell *sh)
{
	static char buf[SHELLINNER_CHUNK_MAX_BYTES + 1];
	pid_t pid;
	ssize_t n;

	while ((n = shell_recv_cred(sh->run.state, buf, sizeof(buf), &pid)) > 0)
		shell_run_dump_add(&sh->run, buf, (size_t)n, pid);
	if (n == 0)
		shell_close(&sh->run.state);    /* every holder closed it: no more */
}

/* True when the run's dump is the last one sent, byte for byte. */
static bool
shell_run_dump_same(const struct shell *sh)
{
	return sh->last_dump != NULL && sh->last_len == sh->run.dump_len &&
	    memcmp(sh->last_dump, sh->run.dump, sh->last_len) == 0;
}

/* Keeps the run's dump as the last one sent. */
static void
shell_run_dump_keep(struct shell *sh)
{
	free(sh->last_dump);
	sh->last_dump = sh->run.dump;
	sh->last_len = sh->run.dump_len;
	sh->run.dump = NULL;
}

/* EXITED: the run's number, the kernel's word, what became of its dump,
 * and with SENT the dump's NUL-ended fields. */
static void
shell_run_send_exited(struct shell *sh, uint32_t how, uint32_t code, uint32_t dump)
{
	struct seqmsg *m = sh->msg;
	size_t at = 0, n;

	seqmsg_init(m, SHELLWIRE_EXITED);
	seqmsg_put_u32(m, sh->run.no);
	seqmsg_put_u32(m, how);
	seqmsg_put_u32(m, code);
	seqmsg_put_u32(m, dump);
	while (dump == SHELLWIRE_DUMP_SENT && at < sh->run.dump_len) {
		n = strnlen(sh->run.dump + at, sh->run.dump_len - at);
		if (at + n == sh->run.dump_len)
			break;  /* a last field without its NUL: the broker refuses the short dump */
		seqmsg_put_str(m, sh->run.dump + at);
		at += n + 1;
	}
	if (seqmsg_send(SHELLWIRE_FD, m) == -1)
		shell_end(SHELL_EXIT_BROKEN);
	seqmsg_clear(m);
}

/* The run's shell ended with STATUS (its zombie already read out). */
static void
shell_run_ended(struct shell *sh, int status)
{
	uint32_t how = SHELLWIRE_EXIT_CODE, code, dump = SHELLWIRE_DUMP_NONE;

	if (sh->run.state != -1)
		shell_run_on_state(sh);         /* sent before the exit: all there */
	if (WIFSIGNALED(status)) {
		how = SHELLWIRE_EXIT_SIGNAL;
		code = (uint32_t)WTERMSIG(status);
	} else {
		code = (uint32_t)WEXITSTATUS(status);
	}
	/* A dump counts only after a normal exit: a run that forged one and
	 * then had itself killed keeps the state from before. */
	if (WIFEXITED(status) && sh->run.dump_done && sh->run.dump_too_big)
		dump = SHELLWIRE_DUMP_TOO_BIG;
	else if (WIFEXITED(status) && sh->run.dump_done && shell_run_dump_same(sh))
		dump = SHELLWIRE_DUMP_SAME;
	else if (WIFEXITED(status) && sh->run.dump_done)
		dump = SHELLWIRE_DUMP_SENT;
	if (sh->run.foreign > 0)
		shell_send_text(SHELLWIRE_NOTE, 0, "run %u: %u state message(s) from another "
		    "process dropped", sh->run.no, sh->run.foreign);
	shell_run_send_exited(sh, how, code, dump);
	if (dump == SHELLWIRE_DUMP_SENT)
		shell_run_dump_keep(sh);
	shell_run_clear(sh);
}

/* ---- the broker ---- */

/* RUN: a new run's number, its script's length and first chunk. */
static void
shell_on_run(struct shell *sh, struct seqmsg *m)
{
	uint32_t no, total;
	const char *chunk;
	size_t n;

	if (sh->run.active || seqmsg_get_u32(m, &no) == -1 || seqmsg_get_u32(m, &total) == -1 ||
	    seqmsg_get_str(m, &chunk) == -1 || seqmsg_get_end(m, 1) == -1 ||
	    total > SHELLWIRE_SCRIPT_MAX_BYTES || (n = strlen(chunk)) > total)
		shell_end(SHELL_EXIT_BROKEN);
	sh->run = (struct shell_run){ .active = true, .no = no, .len = total, .have = n,
	    .state = -1, .out = seqmsg_take_fd(m, 0) };
	if ((sh->run.script = malloc(total + 1)) == NULL)
		shell_end(SHELL_EXIT_BROKEN);
	memcpy(sh->run.script, chunk, n);
	shell_run_try_start(sh);
}

/* MORE: the next chunk of the run's script. */
static void
shell_on_more(struct shell *sh, struct seqmsg *m)
{
	const char *chunk;
	uint32_t no;
	size_t n;

	if (seqmsg_get_u32(m, &no) == -1 || seqmsg_get_str(m, &chunk) == -1 ||
	    seqmsg_get_end(m, 0) == -1 || !sh->run.active || no != sh->run.no ||
	    sh->run.script == NULL || (n = strlen(chunk)) > sh->run.len - sh->run.have)
		shell_end(SHELL_EXIT_BROKEN);
	memcpy(sh->run.script + sh->run.have, chunk, n);
	sh->run.have += n;
	shell_run_try_start(sh);
}

/* SIGNAL: SIGINT or SIGKILL to the run's process group; a run still
 * waiting for its spare ends at once, its text never ran. */
static void
shell_on_signal(struct shell *sh, struct seqmsg *m)
{
	uint32_t no, sig;

	if (seqmsg_get_u32(m, &no) == -1 || seqmsg_get_u32(m, &sig) == -1 ||
	    seqmsg_get_end(m, 0) == -1 || (sig != SIGINT && sig != SIGKILL))
		shell_end(SHELL_EXIT_BROKEN);
	if (!sh->run.active || no != sh->run.no)
		return;         /* it ended as the signal came */
	if (sh->run.started) {
		/* Its session, which the spare made: its pgid is its pid. */
		kill(-sh->run.pid, (int)sig);
		return;
	}
	shell_run_send_exited(sh, SHELLWIRE_EXIT_SIGNAL, sig, SHELLWIRE_DUMP_NONE);
	shell_run_clear(sh);
}

/* One message from the broker (poll said one is there; the socket stays
 * blocking, so what we send the broker is never lost to EAGAIN). */
static void
shell_on_broker(struct shell *sh)
{
	int rc = seqmsg_recv(SHELLWIRE_FD, sh->msg);

	if (rc != 1)
		shell_end(rc == 0 ? 0 : SHELL_EXIT_BROKEN);
	switch (sh->msg->type) {
	case SHELLWIRE_RUN:
		shell_on_run(sh, sh->msg);
		break;
	case SHELLWIRE_MORE:
		shell_on_more(sh, sh->msg);
		break;
	case SHELLWIRE_SIGNAL:
		shell_on_signal(sh, sh->msg);
		break;
	default:
		shell_end(SHELL_EXIT_BROKEN);
	}
	seqmsg_clear(sh->msg);
}

/* ---- children ---- */

/* The zygote ended: started again, later if it dies young. One that
 * cannot load the builtin never will: the shell fails. */
static void
shell_zygote_ended(struct shell *sh, int status)
{
	bool young = shell_now_ms() - sh->zygote_ms < SHELL_ZYGOTE_QUICK_MS;

	shell_close(&sh->zygote_ctl);
	sh->zygote = -1;
	if (WIFEXITED(status) && (WEXITSTATUS(status) == SHELLINNER_EXIT_NO_BUILTIN ||
	    WEXITSTATUS(status) == SHELL_EXIT_NO_DOMAIN || WEXITSTATUS(status) == SHELL_EXIT_NO_EXEC)) {
		shell_send_text(SHELLWIRE_FAILED, 0, "bash %s", WEXITSTATUS(status) ==
		    SHELL_EXIT_NO_EXEC ? "cannot be started (is it installed?)" :
		    WEXITSTATUS(status) == SHELL_EXIT_NO_DOMAIN ? "cannot enter its Landlock domain" :
		    "cannot load corral-shell.so (enable -f failed)");
		shell_end(SHELL_EXIT_BROKEN);
	}
	if (sh->spare.asked && !sh->spare.ready)
		shell_spare_drop(sh);
	if (young)
		shell_backoff(sh);
	shell_send_text(SHELLWIRE_NOTE, 0, "the zygote bash ended (%s %d); starting another",
	    WIFSIGNALED(status) ? "signal" : "status",
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* Every child that ended: the run's shell (its state read before its
 * zombie goes, so its pid cannot be taken meanwhile), the zygote, a spare,
 * or an orphan of a run that came to us. */
static void
shell_reap(struct shell *sh)
{
	siginfo_t si;
	int status;
	pid_t pid;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 || si.si_pid == 0)
			return;
		pid = si.si_pid;
		if (sh->run.started && pid == sh->run.pid && sh->run.state != -1)
			shell_run_on_state(sh);
		if (waitpid(pid, &status, 0) != pid)
			return;
		if (sh->run.started && pid == sh->run.pid)
			shell_run_ended(sh, status);
		else if (pid == sh->zygote)
			shell_zygote_ended(sh, status);
		else if (sh->spare.ready && pid == sh->spare.pid)
			shell_spare_lost(sh, "it was killed");
	}
}

/* The spare asked for never said READY: the zygote is stuck (a run may
 * stop it) and is killed, and started again when it is reaped. */
static void
shell_on_time(struct shell *sh)
{
	if (sh->spare.asked && !sh->spare.ready &&
	    shell_now_ms() - sh->spare.asked_ms >= SHELL_SPARE_READY_MS) {
		shell_send_text(SHELLWIRE_NOTE, 0, "the zygote made no spare in %d ms; killing it",
		    SHELL_SPARE_READY_MS);
		if (sh->zygote > 0)
			kill(sh->zygote, SIGKILL);
		shell_spare_lost(sh, "the zygote did not answer");
	}
	if (sh->zygote == -1 && shell_now_ms() >= sh->retry_ms)
		shell_zygote_start(sh);
	if (!sh->spare.asked)
		shell_spare_ask(sh);
}

/* How long poll may wait: until the spare's deadline, or the retry of a
 * spare or zygote that is wanted; -1: until something happens. */
static int
shell_poll_ms(const struct shell *sh)
{
	int64_t now = shell_now_ms();
	bool want = !sh->spare.asked || sh->zygote == -1;

	if (sh->spare.asked && !sh->spare.ready)
		return (int)(sh->spare.asked_ms + SHELL_SPARE_READY_MS > now ?
		    sh->spare.asked_ms + SHELL_SPARE_READY_MS - now : 0);
	if (want && sh->retry_ms > now)
		return (int)(sh->retry_ms - now);
	return -1;
}

/* Descriptors 0 to 2 on /dev/null: nothing of ours is written anywhere. */
static int
shell_stdio(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd == -1)
		return -1;
	for (int i = 0; i <= STDERR_FILENO; i++) {
		if (fd != i && dup2(fd, i) == -1)
			return -1;
	}
	if (fd > STDERR_FILENO)
		close(fd);
	return 0;
}

/* Everything before the loop; -1 when this process cannot be the shell. */
static int
shell_setup(struct shell *sh, const char *so)
{
	struct rlimit core;
	struct stat st;

	/* Nobody else's to read: memory, descriptors, environment. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 || fstat(SHELLWIRE_FD, &st) == -1 ||
	    !S_ISSOCK(st.st_mode) || shell_stdio() == -1 || strchr(so, '\'') != NULL)
		return -1;
	fcntl(SHELLWIRE_FD, F_SETFD, FD_CLOEXEC);
	/* The runs' orphans (daemons, jobs left behind) come to us, not to
	 * corral-init. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	/* No core files in the user's folders, as before: a run may raise it. */
	if (getrlimit(RLIMIT_CORE, &core) == 0) {
		core.rlim_cur = 0;
		setrlimit(RLIMIT_CORE, &core);
	}
	signal(SIGPIPE, SIG_IGN);
	sh->so = so;
	sh->abi = landlock_abi();
	sh->zygote = -1;
	sh->zygote_ctl = -1;
	sh->spare = (struct shell_spare){ .in = -1, .state = -1 };
	sh->run = (struct shell_run){ .state = -1, .out = -1 };
	sh->msg = malloc(sizeof(*sh->msg));
	return sh->msg == NULL ? -1 : 0;
}

/* The run's state socket is read as datagrams come, while the run goes
 * on: a process of the run that floods it (a child holds it too) only
 * costs this loop reads, and never stops the run's shell from sending its
 * dump as it exits, which would leave a dump its text forged earlier as
 * the last one. */
static void __attribute__((noreturn))
shell_serve(struct shell *sh, int sigfd)
{
	struct signalfd_siginfo si;
	struct pollfd p[4];

	for (;;) {
		p[0] = (struct pollfd){ .fd = SHELLWIRE_FD, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
		p[2] = (struct pollfd){ .fd = sh->spare.state, .events = POLLIN };
		p[3] = (struct pollfd){ .fd = sh->run.started ? sh->run.state : -1, .events = POLLIN };
		if (poll(p, 4, shell_poll_ms(sh)) == -1 && errno != EINTR)
			shell_end(SHELL_EXIT_BROKEN);
		if (p[3].revents != 0 && sh->run.started && p[3].fd == sh->run.state)
			shell_run_on_state(sh);
		if (p[1].revents & POLLIN) {
			while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				;
		}
		/* The broker first: a RUN that came is the run a spare's exit
		 * belongs to. */
		if (p[0].revents != 0)
			shell_on_broker(sh);
		shell_reap(sh);
		if (sh->spare.state != -1 && p[2].revents != 0 && p[2].fd == sh->spare.state)
			shell_spare_on_state(sh);
		shell_on_time(sh);
		shell_run_try_start(sh);
	}
}

int
main(int argc, char **argv)
{
	static struct shell sh;
	uint32_t hello[4];
	sigset_t chld;
	int sigfd;

	if (argc != 2 || shell_setup(&sh, argv[1]) == -1)
		return SHELL_EXIT_BROKEN;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	if ((sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) == -1)
		return SHELL_EXIT_BROKEN;
	shell_zygote_start(&sh);
	hello[0] = SHELLWIRE_VERSION;
	hello[1] = SHELLWIRE_MODE_ZYGOTE;
	hello[2] = (uint32_t)sh.abi;
	hello[3] = sh.abi >= LL_ABI_FULL ? SHELLWIRE_HELLO_SCOPED : 0;
	shell_send_nums(SHELLWIRE_HELLO, hello, 4, -1);
	shell_spare_ask(&sh);
	shell_serve(&sh, sigfd);
}
