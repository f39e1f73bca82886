/* corral-init: pid 1 of a sandbox (ARCHITECTURE.md, "A sandbox's life").
 *
 * It starts as root in new mount, pid, network, UTS and IPC namespaces
 * with nothing open but its exec channel on INITPROTO_FD. It reads the
 * spec, builds the sandbox's file system (mounts.c), names the host, brings
 * up lo, drops to run_as for good (drop.c), puts itself under its own
 * Landlock layer, and only then answers READY. From there it starts the
 * commands the daemon sends, each under a nested Landlock layer and the
 * seccomp filter, reaps every process that ends (orphans included: it is
 * pid 1) and reports each command's exit. When the monitor put the kernel's
 * Unix socket guard on the sandbox, it also supervises every connect() of
 * its workloads (sockguard.c), whose filters hand their listeners to it. It exits when the channel closes,
 * and the kernel then kills everything left in the pid namespace.
 *
 * What protects corral-init from its workloads: the pid namespace (the
 * kernel drops signals from inside to an init that has no handler for
 * them, SIGKILL and SIGSTOP included); the workloads' Landlock layer,
 * nested below init's, with the signal scope (kill(1, ...) fails with
 * EPERM) and Landlock's own rule that a process cannot ptrace one outside
 * its domain; init being non-dumpable (no ptrace, no /proc/1/mem, no
 * pidfd_getfd without CAP_SYS_PTRACE, which nobody inside has); and the
 * workload seccomp filter (ptrace, process_vm_*, prlimit64, setpriority
 * and sched_setaffinity on another process refused). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "broker/init/drop.h"
#include "broker/init/fsop.h"
#include "common/initproto.h"
#include "broker/init/landlock.h"
#include "broker/init/mounts.h"
#include "broker/init/seccomp.h"
#include "broker/init/sockguard.h"

#define INIT_CHILDREN_MAX 4096          /* commands running at once */
#define INIT_FORK_QUIET_MS 20           /* the guard threads settle before a fork */
#define INIT_HOSTNAME_MAX_BYTES 63      /* a sandbox name's longest */
#define INIT_SIGNAL_MAX 64
#define INIT_EXTRA_FD 3                 /* where a command finds its extra descriptor */
#define INIT_PLACED_FDS_MAX 2           /* descriptors placed from INIT_EXTRA_FD on */
#define INIT_FSOP_OUT_FD INIT_EXTRA_FD  /* a file operation's result, in its child */
#define INIT_FSOP_IN_FD (INIT_EXTRA_FD + 1)     /* its input (write, edit) */
#define INIT_FSOP_IN_MAX_BYTES (2 * FSPROTO_WRITE_MAX_BYTES + 8)  /* an edit's old and new */
#define INIT_FSOP_EXIT_OK 0             /* the result says done */
#define INIT_FSOP_EXIT_REFUSED 1        /* the result holds a refusal */
#define INIT_FSOP_EXIT_BROKEN 127       /* no result could be written */
#define INIT_EXIT_NOT_FOUND 127         /* a command's program is not there, as in a shell */
#define INIT_EXIT_CANNOT_RUN 126        /* ... is there and cannot be run */

extern char **environ;

/* One command that runs: the daemon's id for it and its pid here. */
struct init_child {
	uint32_t id;
	pid_t pid;
};

/* What a failed command start reports through its close-on-exec pipe. */
enum init_step {
	INIT_STEP_CHDIR,
	INIT_STEP_DROP,
	INIT_STEP_LANDLOCK,
	INIT_STEP_SECCOMP,
	INIT_STEP_EXEC,
	INIT_STEP_LISTENER,     /* no failure: the filter's listener comes with it */
};

struct init_fail {
	int step;
	int err;
};

struct init_state {
	int chan;
	struct initproto_spec spec;
	struct seqmsg *spec_msg; /* the spec's text lives in it */
	struct ll_ruleset *rs;          /* NULL without Landlock */
	struct sockguard *guard;        /* connect()'s supervisor; NULL: none (no kernel guard) */
	struct init_child children[INIT_CHILDREN_MAX];
	size_t n_children;
	struct seqmsg *msg;      /* the message being read */
	struct mounts *mounts;          /* built before the spec came */
};

static const char *const init_step_names[] = {
	[INIT_STEP_CHDIR] = "chdir",
	[INIT_STEP_DROP] = "dropping privileges",
	[INIT_STEP_LANDLOCK] = "Landlock",
	[INIT_STEP_SECCOMP] = "seccomp",
	[INIT_STEP_EXEC] = "exec",
	[INIT_STEP_LISTENER] = "supervising connect()",
};

/* Tells the daemon why the sandbox cannot be, then exits. */
static void __attribute__((noreturn))
init_refuse(int chan, const char *why)
{
	initproto_send_text(chan, INITPROTO_ERROR, 0, why);
	_exit(1);
}

/* Descriptors 0 to 2 on /dev/null, so that nothing received lands there
 * and nothing written to them goes anywhere. */
static void
init_stdio(void)
{
	int fd;

	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd == -1)
		_exit(1);
	while (fd <= 2) {
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (fd == -1)
			_exit(1);
	}
	if (dup2(fd, 0) == -1 || dup2(fd, 1) == -1 || dup2(fd, 2) == -1)
		_exit(1);
	close(fd);
}

/* The checks corral-init makes again, whatever the daemon checked: text
 * that reaches files or the kernel must be what it claims to be. */
static const char *
init_check_spec(const struct initproto_spec *s)
{
	unsigned char addr[sizeof(struct in6_addr)];
	size_t i, n = strlen(s->hostname);

	if (s->uid == 0 || s->gid == 0)
		return "run_as uid or gid 0 refused: a sandbox never runs as root; "
		    "name a regular user with --run-as";
	if (n == 0 || n > INIT_HOSTNAME_MAX_BYTES)
		return "the sandbox name must have 1 to 63 characters";
	for (i = 0; i < n; i++) {
		if (!((s->hostname[i] >= 'a' && s->hostname[i] <= 'z') ||
		    (s->hostname[i] >= '0' && s->hostname[i] <= '9') || s->hostname[i] == '-'))
			return "the sandbox name may hold only a-z, 0-9 and -";
	}
	if (inet_pton(AF_INET, s->gateway, addr) != 1 &&
	    inet_pton(AF_INET6, s->gateway, addr) != 1)
		return "the gateway is not an IP address";
	if (s->home[0] != '/' || s->workdir[0] != '/')
		return "HOME and the working folder must be absolute paths";
	return NULL;
}

/* Reads the spec; any other first message is refused. */
static void
init_read_spec(struct init_state *st)
{
	const char *why;

	st->spec_msg = malloc(sizeof(*st->spec_msg));
	if (st->spec_msg == NULL)
		init_refuse(st->chan, "corral-init: out of memory");
	if (seqmsg_recv(st->chan, st->spec_msg) != 1)
		_exit(1);
	if (initproto_spec_decode(st->spec_msg, &st->spec) == -1) {
		seqmsg_clear(st->spec_msg);
		init_refuse(st->chan, "corral-init: the first message is not a valid spec");
	}
	why = init_check_spec(&st->spec);
	if (why != NULL)
		init_refuse(st->chan, why);
}

/* Brings up the namespace's loopback, so local servers work inside. */
static int
init_loopback(void)
{
	struct ifreq ifr;
	int s, rc = -1;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s == -1)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		rc = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
	return rc;
}

/* Grants ACCESS beneath PATH when PATH exists. */
static int
init_allow(struct ll_ruleset *rs, const char *path, enum ll_access access)
{
	if (ll_allow_path(rs, path, access) == -1 && errno != ENOENT)
		return -1;
	return 0;
}

/* The rules of corral-init's layer and of every workload's: read-only
 * everywhere, read-write in the writable roots, HOME, /tmp and /dev/shm, the
 * device nodes, the terminals. Read-only starts at / rather than at each
 * system folder: the mount namespace already shows nothing but the system
 * folders, the roots and corral-init's own tmpfs skeleton, and tools must be
 * able to list / and the folders above a root. */
static int
init_rules(struct ll_ruleset *rs, const struct initproto_spec *s)
{
	char path[64];
	size_t i;
	int rc = 0;

	rc |= init_allow(rs, "/", LL_READ_ONLY);
	for (i = 0; mounts_dev_nodes[i] != NULL; i++) {
		snprintf(path, sizeof(path), "/dev/%s", mounts_dev_nodes[i]);
		rc |= init_allow(rs, path, strcmp(mounts_dev_nodes[i], "tty") == 0 ?
		    LL_TERMINAL : LL_DEV);
	}
	rc |= init_allow(rs, "/dev/pts", LL_TERMINAL);
	for (i = 0; i < s->n_roots; i++) {
		if (!s->root_ro[i])
			rc |= init_allow(rs, s->root_path[i], LL_READ_WRITE);
	}
	rc |= init_allow(rs, s->home, LL_READ_WRITE);
	rc |= init_allow(rs, "/tmp", LL_READ_WRITE);
	rc |= init_allow(rs, "/dev/shm", LL_READ_WRITE);
	return rc == 0 ? 0 : -1;
}

/* corral-init's own Landlock layer, kept to be applied again, nested, in
 * each workload. Without Landlock in the kernel, none: READY says so and
 * the daemon decides (hard_requirement refuses the sandbox). */
static void
init_landlock(struct init_state *st)
{
	char why[INITPROTO_ERR_MAX_BYTES];
	int abi = landlock_abi();

	if (abi < 1)
		return;
	st->rs = ll_new(abi);
	/* Scopes: a workload can neither signal corral-init nor reach an
	 * abstract socket outside its layer. */
	if (st->rs == NULL || init_rules(st->rs, &st->spec) == -1 ||
	    (abi >= LL_ABI_FULL &&
	    ll_scope(st->rs, LL_SCOPE_SIGNAL | LL_SCOPE_ABSTRACT_UNIX) == -1) ||
	    ll_restrict_self(st->rs) == -1) {
		snprintf(why, sizeof(why), "corral-init: Landlock: %s", strerror(errno));
		init_refuse(st->chan, why);
	}
}

/* connect()'s supervisor, when the monitor put the kernel guard on the
 * sandbox's cgroup (without it, a supervisor would be a wall with a door:
 * the monitor reports the guard missing instead). Its threads start with
 * the first command. */
static void
init_sockguard(struct init_state *st)
{
	char why[SOCKGUARD_ERR_MAX_BYTES];
	struct sockguard_config cfg;

	if (!st->spec.unix_guard)
		return;
	if (sockguard_config_read(&st->spec, st->chan, &cfg, why, sizeof(why)) == -1)
		init_refuse(st->chan, why);
	if ((st->guard = sockguard_new(&cfg)) == NULL)
		init_refuse(st->chan, "corral-init: the unix socket supervisor cannot start");
}

/* Everything between the spec and READY. */
static void
init_setup(struct init_state *st)
{
	char why[INITPROTO_ERR_MAX_BYTES];
	uint32_t flags = 0;
	int abi;

	if (mounts_build(st->mounts, &st->spec, why, sizeof(why)) == -1)
		init_refuse(st->chan, why);
	init_sockguard(st);
	if (sethostname(st->spec.hostname, strlen(st->spec.hostname)) == -1)
		init_refuse(st->chan, "corral-init: sethostname failed");
	if (init_loopback() == -1)
		init_refuse(st->chan, "corral-init: bringing up lo failed");
	if (drop_to(st->spec.uid, st->spec.gid, why, sizeof(why)) == -1)
		init_refuse(st->chan, why);
	/* Nobody inside may ptrace corral-init or read its memory. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		init_refuse(st->chan, "corral-init: PR_SET_DUMPABLE failed");
	init_landlock(st);
	if (chdir(st->spec.workdir) == -1 && chdir(st->spec.home) == -1)
		init_refuse(st->chan, "corral-init: neither the working folder nor HOME exists");
	abi = st->rs != NULL ? landlock_abi() : 0;
	if (seccomp_unavailable() == NULL)
		flags |= INITPROTO_READY_SECCOMP;
	if (initproto_send_nums(st->chan, INITPROTO_READY, flags, (uint32_t)abi, -1) == -1)
		_exit(1);
}

/* Reports a failed step of a command's start to corral-init and exits. */
static void __attribute__((noreturn))
init_child_fail(int pipefd, enum init_step step)
{
	struct init_fail f = { .step = step, .err = errno };

	if (write(pipefd, &f, sizeof(f)) != (ssize_t)sizeof(f))
		_exit(126);
	_exit(127);
}

/* In a forked child: puts the N (at most INIT_PLACED_FDS_MAX) descriptors
 * FDS at INIT_EXTRA_FD, INIT_EXTRA_FD + 1, ..., open across exec. Each is
 * first copied above them all, so placing one never overwrites another
 * still to be placed; the copies are closed with the rest. */
static int
init_place_fds(const int *fds, size_t n)
{
	int high[INIT_PLACED_FDS_MAX];
	size_t i;

	if (n > INIT_PLACED_FDS_MAX)
		return -1;
	for (i = 0; i < n; i++) {
		high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, INIT_EXTRA_FD + (int)n);
		if (high[i] == -1)
			return -1;
	}
	for (i = 0; i < n; i++) {
		if (dup2(high[i], INIT_EXTRA_FD + (int)i) == -1)
			return -1;
	}
	return 0;
}

/* In a forked child: enters the layers every workload gets, in CWD; with
 * LISTENER, its connect() calls go to corral-init's supervisor, whose
 * listener lands there. -1 with the step that failed in *STEP (errno set). */
static int
init_enter_layers(struct init_state *st, const char *cwd, enum init_step *step, int *listener)
{
	char why[DROP_ERR_MAX_BYTES];

	*step = INIT_STEP_CHDIR;
	if (chdir(cwd[0] != '\0' ? cwd : st->spec.workdir) == -1)
		return -1;
	*step = INIT_STEP_DROP;
	if (drop_verify(why, sizeof(why)) == -1)
		return -1;
	/* A layer of its own under corral-init's: same paths, and the scopes
	 * now keep corral-init out of the command's reach. */
	*step = INIT_STEP_LANDLOCK;
	if (st->rs != NULL && ll_restrict_self(st->rs) == -1)
		return -1;
	*step = INIT_STEP_SECCOMP;
	return seccomp_apply_workload(listener);
}

/* In a forked child: hands LISTENER to corral-init on PIPEFD (sendmsg is
 * no supervised call) and closes its own copy; failing, exits as a failed
 * step would. */
static void
init_child_hand_listener(int pipefd, int listener)
{
	struct init_fail f = { .step = INIT_STEP_LISTENER };
	struct iovec iov = { &f, sizeof(f) };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
	    .msg_controllen = sizeof(ctl.buf) };

	memset(&ctl, 0, sizeof(ctl));
	ctl.align.cmsg_level = SOL_SOCKET;
	ctl.align.cmsg_type = SCM_RIGHTS;
	ctl.align.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&ctl.align), &listener, sizeof(int));
	if (sendmsg(pipefd, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(f))
		init_child_fail(pipefd, INIT_STEP_SECCOMP);
	close(listener);
}

/* The command's program could not be run, every layer in place: it ends
 * as a shell's command would, its reason on its own stderr and 127 (not
 * found) or 126 (found, not runnable). The start itself took: the pipe
 * closes with nothing on it, so the client gets the output and the exit. */
static void __attribute__((noreturn))
init_child_exec_failed(int pipefd, const char *program)
{
	int err = errno;

	close(pipefd);
	dprintf(STDERR_FILENO, "corral: %s: %s\n", program, strerror(err));
	_exit(err == ENOENT || err == ENOTDIR ? INIT_EXIT_NOT_FOUND : INIT_EXIT_CANNOT_RUN);
}

/* In the forked child: becomes the command. Never returns. */
static void __attribute__((noreturn))
init_child(struct init_state *st, const struct initproto_exec *e, int pipefd)
{
	enum init_step step;
	sigset_t none;
	int i, listener = -1;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	if (e->tty && ioctl(e->stdio[0], TIOCSCTTY, 0) == -1)
		init_child_fail(pipefd, INIT_STEP_EXEC);
	for (i = 0; i < 3; i++) {
		if (dup2(e->stdio[i], i) == -1)
			init_child_fail(pipefd, INIT_STEP_EXEC);
	}
	if (e->extra_fd != -1 && init_place_fds(&e->extra_fd, 1) == -1)
		init_child_fail(pipefd, INIT_STEP_EXEC);
	/* Nothing of corral-init's reaches the command: only 0, 1 and 2, and
	 * 3 when the daemon gave one. */
	close_range(e->extra_fd != -1 ? INIT_EXTRA_FD + 1 : INIT_EXTRA_FD, ~0U,
	    CLOSE_RANGE_CLOEXEC);
	if (init_enter_layers(st, e->cwd, &step, st->guard != NULL ? &listener : NULL) == -1)
		init_child_fail(pipefd, step);
	if (st->guard != NULL)
		init_child_hand_listener(pipefd, listener);
	environ = (char **)(uintptr_t)e->envp;
	execvp(e->argv[0], (char *const *)(uintptr_t)e->argv);
	init_child_exec_failed(pipefd, e->argv[0]);
}

/* A pty of the sandbox's own devpts sized ROWS x COLS: the master in
 * *MASTER, the peer in every slot of STDIO. */
static int
init_pty(const struct initproto_exec *e, int *master, int stdio[3])
{
	struct winsize ws = { .ws_row = (unsigned short)e->rows,
	    .ws_col = (unsigned short)e->cols };
	int unlock = 0, slave;

	*master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master == -1)
		return -1;
	if (ioctl(*master, TIOCSPTLCK, &unlock) == -1 ||
	    ioctl(*master, TIOCSWINSZ, &ws) == -1)
		goto fail;
	slave = ioctl(*master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave == -1)
		goto fail;
	stdio[0] = stdio[1] = stdio[2] = slave;
	return 0;
fail:
	close(*master);
	*master = -1;
	return -1;
}

/* Closes the descriptors of a command's stdio (a pty peer only once) and
 * its extra descriptor: corral-init keeps none of them, so no later
 * command can inherit them. */
static void
init_close_stdio(struct initproto_exec *e)
{
	int i;

	if (e->extra_fd != -1)
		close(e->extra_fd);
	e->extra_fd = -1;

	for (i = 0; i < 3; i++) {
		if (e->stdio[i] != -1 && (i == 0 || e->stdio[i] != e->stdio[i - 1]))
			close(e->stdio[i]);
		e->stdio[i] = -1;
	}
}

/* Reads what a command's child says before it execs: its filter's listener
 * first (given to the supervisor), then a failure or nothing. Returns the
 * bytes of the failure in *F, or 0 at exec. */
static ssize_t
init_read_start(struct init_state *st, int sock, struct init_fail *f)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { f, sizeof(*f) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;
	int fd;

	for (;;) {
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		do {
			n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
		} while (n == -1 && errno == EINTR);
		c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
		fd = -1;
		if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
		if (n != (ssize_t)sizeof(*f) || f->step != INIT_STEP_LISTENER) {
			if (fd != -1)
				close(fd);
			return n == -1 ? 0 : n;
		}
		/* A listener the supervisor cannot take is closed: the command's
		 * connect() calls then fail (ENOSYS), never go unchecked. */
		if (fd != -1 && st->guard != NULL)
			sockguard_add(st->guard, fd);
		else if (fd != -1)
			close(fd);
	}
}

/* Forks the command of E; reports STARTED or FAILED. */
static void
init_start(struct init_state *st, struct initproto_exec *e)
{
	char why[INITPROTO_ERR_MAX_BYTES];
	struct init_fail f;
	int pipefd[2], master = -1;
	pid_t pid = -1;
	ssize_t n;

	if (st->n_children == INIT_CHILDREN_MAX) {
		errno = EAGAIN;
		snprintf(why, sizeof(why), "%d commands already run", INIT_CHILDREN_MAX);
		goto failed;
	}
	/* A datagram pair, not a pipe: the child's filter listener comes on it. */
	if ((e->tty && init_pty(e, &master, e->stdio) == -1) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pipefd) == -1) {
		snprintf(why, sizeof(why), "%s: %s", e->tty ? "pty" : "socketpair", strerror(errno));
		goto failed;
	}
	sockguard_quiesce(st->guard, INIT_FORK_QUIET_MS);
	pid = fork();
	if (pid == 0)
		init_child(st, e, pipefd[1]);
	close(pipefd[1]);
	init_close_stdio(e);
	/* It closes at exec (nothing read), or carries why the start failed,
	 * after the listener when there is one. */
	n = pid == -1 ? 0 : init_read_start(st, pipefd[0], &f);
	close(pipefd[0]);
	if (pid == -1 || n == (ssize_t)sizeof(f)) {
		snprintf(why, sizeof(why), "%s: %s: %s", e->argv[0],
		    pid == -1 ? "fork" : init_step_names[f.step],
		    strerror(pid == -1 ? errno : f.err));
		goto failed;
	}
	st->children[st->n_children++] = (struct init_child){ e->id, pid };
	if (initproto_send_nums(st->chan, INITPROTO_STARTED, e->id, (uint32_t)pid, master) == -1)
		_exit(1);
	if (master != -1)
		close(master);
	return;
failed:
	init_close_stdio(e);
	if (master != -1)
		close(master);
	if (initproto_send_text(st->chan, INITPROTO_FAILED, e->id, why) == -1)
		_exit(1);
}

/* The input file of a write or an edit (the daemon's), whole; NULL when
 * it is larger than INIT_FSOP_IN_MAX_BYTES or unreadable. */
static char *
init_fsop_input(int fd, size_t *len)
{
	struct stat sb;
	char *data;
	ssize_t n;

	if (fstat(fd, &sb) == -1 || sb.st_size < 0 || sb.st_size > INIT_FSOP_IN_MAX_BYTES)
		return NULL;
	data = malloc((size_t)sb.st_size + 1);
	if (data == NULL)
		return NULL;
	n = pread(fd, data, (size_t)sb.st_size, 0);
	if (n != (ssize_t)sb.st_size) {
		free(data);
		return NULL;
	}
	*len = (size_t)n;
	return data;
}

/* An edit's input: a u64 length, the old text, then the new text. */
static int
init_fsop_edit(int ws, const struct initproto_fsop *f, const char *in, size_t len,
    struct fsproto_out *out)
{
	uint64_t old_len;

	if (len < sizeof(old_len))
		return fsop_out_fail(out, FSPROTO_INVALID, "the edit's input is malformed");
	memcpy(&old_len, in, sizeof(old_len));
	if (old_len > len - sizeof(old_len))
		return fsop_out_fail(out, FSPROTO_INVALID, "the edit's input is malformed");
	return fsop_edit(ws, f->path, in + sizeof(old_len), (size_t)old_len,
	    in + sizeof(old_len) + old_len, len - sizeof(old_len) - (size_t)old_len, out);
}

/* Runs F, already under the workload's layers: relative paths beneath the
 * workspace, absolute ones (read, list, grep) from / where Landlock is the
 * wall; writes and edits take relative paths only. */
static int
init_fsop_run(struct init_state *st, const struct initproto_fsop *f, struct fsproto_out *out)
{
	int ws = open(st->spec.workdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *in = NULL;
	size_t len = 0;

	if (ws == -1 || root == -1)
		return fsop_out_fail(out, FSPROTO_FAILED, "the workspace cannot be opened");
	if (f->in_fd != -1 && (in = init_fsop_input(INIT_FSOP_IN_FD, &len)) == NULL)
		return fsop_out_fail(out, FSPROTO_LIMIT, "the input cannot be read or is too large");
	switch (f->op) {
	case FSPROTO_READ:
		return fsop_read(ws, root, f->path, out);
	case FSPROTO_WRITE:
		return fsop_write(ws, f->path, in != NULL ? in : "", len, out);
	case FSPROTO_EDIT:
		return init_fsop_edit(ws, f, in != NULL ? in : "", len, out);
	case FSPROTO_LIST:
		return fsop_list(ws, root, f->path, out);
	case FSPROTO_GREP:
		return fsop_grep(ws, root, f->pattern, f->path, out);
	}
	return fsop_out_fail(out, FSPROTO_INVALID, "unknown file operation");
}

/* In the forked child: runs the file operation F under exactly the layers
 * a workload gets (the same code as a command's start), writes its result
 * and exits. Never returns. */
static void __attribute__((noreturn))
init_fsop_child(struct init_state *st, const struct initproto_fsop *f)
{
	char why[FSPROTO_MESSAGE_MAX_BYTES];
	const int fds[INIT_PLACED_FDS_MAX] = { f->out_fd, f->in_fd };
	struct fsproto_out out;
	enum init_step step;
	sigset_t none;
	int rc;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	/* The result's and the input's files only, placed as a command's
	 * extra descriptor is: the channel (3) goes now; the rest of
	 * corral-init's (the Landlock ruleset among them) once the layers
	 * are on. */
	if (init_place_fds(fds, f->in_fd != -1 ? 2 : 1) == -1)
		_exit(INIT_FSOP_EXIT_BROKEN);
	fsproto_out_init(&out);
	/* corral-init's own code makes no connect(): nothing to supervise. */
	if (init_enter_layers(st, "", &step, NULL) == -1) {
		snprintf(why, sizeof(why), "the file operation could not start: %s: %s",
		    init_step_names[step], strerror(errno));
		rc = fsop_out_fail(&out, FSPROTO_FAILED, why);
	} else {
		close_range(f->in_fd != -1 ? INIT_FSOP_IN_FD + 1 : INIT_FSOP_OUT_FD + 1, ~0U, 0);
		rc = init_fsop_run(st, f, &out);
	}
	if (fsproto_out_write(&out, INIT_FSOP_OUT_FD) == -1)
		_exit(INIT_FSOP_EXIT_BROKEN);
	_exit(rc == 0 ? INIT_FSOP_EXIT_OK : INIT_FSOP_EXIT_REFUSED);
}

/* Forks the file operation F; reports STARTED or FAILED, then EXITED
 * comes as for a command. */
static void
init_fsop_start(struct init_state *st, struct initproto_fsop *f)
{
	char why[INITPROTO_ERR_MAX_BYTES];
	pid_t pid = -1;

	sockguard_quiesce(st->guard, INIT_FORK_QUIET_MS);
	if (st->n_children < INIT_CHILDREN_MAX && (pid = fork()) == 0)
		init_fsop_child(st, f);
	close(f->out_fd);
	if (f->in_fd != -1)
		close(f->in_fd);
	if (pid == -1) {
		snprintf(why, sizeof(why), "file operation: %s", st->n_children ==
		    INIT_CHILDREN_MAX ? "too many commands run" : strerror(errno));
		if (initproto_send_text(st->chan, INITPROTO_FAILED, f->id, why) == -1)
			_exit(1);
		return;
	}
	st->children[st->n_children++] = (struct init_child){ f->id, pid };
	if (initproto_send_nums(st->chan, INITPROTO_STARTED, f->id, (uint32_t)pid, -1) == -1)
		_exit(1);
}

/* Signals the process group of the command ID (its session leader's). */
static void
init_kill(struct init_state *st, uint32_t id, uint32_t sig)
{
	size_t i;

	if (sig == 0 || sig > INIT_SIGNAL_MAX)
		return;
	for (i = 0; i < st->n_children; i++) {
		if (st->children[i].id != id)
			continue;
		if (kill(-st->children[i].pid, (int)sig) == -1)
			kill(st->children[i].pid, (int)sig);
	}
}

/* Handles one message from the daemon; anything unexpected ends the
 * sandbox (the daemon never sends it). */
static void
init_dispatch(struct init_state *st)
{
	struct initproto_exec *e;
	struct initproto_fsop f;
	uint32_t id, sig;
	int rc;

	rc = seqmsg_recv(st->chan, st->msg);
	if (rc == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (rc != 1)
		_exit(rc == 0 ? 0 : 1);
	if (st->msg->type == INITPROTO_KILL) {
		if (seqmsg_get_u32(st->msg, &id) == -1 ||
		    seqmsg_get_u32(st->msg, &sig) == -1 || seqmsg_get_end(st->msg, 0) == -1)
			_exit(1);
		init_kill(st, id, sig);
		return;
	}
	if (st->msg->type == INITPROTO_FSOP) {
		if (initproto_fsop_decode(st->msg, &f) == -1)
			_exit(1);
		init_fsop_start(st, &f);
		seqmsg_clear(st->msg);
		return;
	}
	e = malloc(sizeof(*e));
	if (e == NULL || initproto_exec_decode(st->msg, e) == -1)
		_exit(1);
	init_start(st, e);
	free(e);
	seqmsg_clear(st->msg);
}

/* The exit code a shell would show: the status, or 128 + the signal. */
static uint32_t
init_exit_code(int status)
{
	if (WIFSIGNALED(status))
		return 128 + (uint32_t)WTERMSIG(status);
	return (uint32_t)WEXITSTATUS(status);
}

/* Reaps every ended child; reports those that were commands. */
static void
init_reap(struct init_state *st)
{
	size_t i;
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < st->n_children; i++) {
			if (st->children[i].pid != pid)
				continue;
			if (initproto_send_nums(st->chan, INITPROTO_EXITED, st->children[i].id,
			    init_exit_code(status), -1) == -1)
				_exit(1);
			st->children[i] = st->children[--st->n_children];
			break;
		}
	}
}

/* Serves the channel until it closes. */
static void __attribute__((noreturn))
init_serve(struct init_state *st, int sigfd)
{
	struct signalfd_siginfo si;
	struct pollfd p[2] = {
		{ .fd = st->chan, .events = POLLIN },
		{ .fd = sigfd, .events = POLLIN },
	};

	for (;;) {
		if (poll(p, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (p[1].revents & POLLIN) {
			while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				;
			init_reap(st);
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
			init_dispatch(st);
	}
}

int
main(void)
{
	static struct init_state st = { .chan = INITPROTO_FD };
	struct stat sb;
	sigset_t chld;
	int sigfd, sig;

	if (fstat(INITPROTO_FD, &sb) == -1 || !S_ISSOCK(sb.st_mode) || getpid() != 1)
		return 1;
	init_stdio();
	fcntl(INITPROTO_FD, F_SETFD, FD_CLOEXEC);
	umask(022);
	st.msg = malloc(sizeof(*st.msg));
	if (st.msg == NULL)
		init_refuse(st.chan, "corral-init: out of memory");
	/* Dispositions the daemon ignored (SIGPIPE) would pass to workloads. */
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	/* The spawner kept every signal blocked through exec: only SIGCHLD
	 * stays blocked, for the signalfd. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_SETMASK, &chld, NULL);
	sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd == -1)
		init_refuse(st.chan, "corral-init: signalfd failed");
	/* Built while the monitor wires the network (or while a warm sandbox
	 * waits to be claimed): the part of the tree no spec changes. */
	st.mounts = mounts_prepare();
	init_read_spec(&st);
	init_setup(&st);
	init_serve(&st, sigfd);
}
