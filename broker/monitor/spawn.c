/* Starting corral-init: the spec's checks, the roots opened with the
 * caller's rights, the clone into new namespaces, and the handshake. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pwd.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/monitor/opener.h"
#include "broker/monitor/spawn.h"
#include "common/initproto.h"
#include "common/reason.h"
#include "common/xmalloc.h"
#include "policy/name.h"
#include "policy/rootcheck.h"

#define SPAWN_MIB (1024ull * 1024)
#define SPAWN_FIRST_REGULAR_UID 1000    /* below: system accounts, whose homes are services' */
#define SPAWN_HOMES_MAX 4096            /* other users' homes a root is checked against */
#define SPAWN_HOMES_STORE_BYTES (256 * 1024)

_Static_assert(OPENER_ITEMS_MAX >= CORRAL_ROOTS_MAX && OPENER_ITEMS_MAX >= INITPROTO_SOCKETS_MAX &&
    OPENER_ITEMS_MAX <= SEQMSG_FDS_MAX,
    "every root, or every socket, is opened in one request");

/* The namespaces of a sandbox. No user namespace: corral-init is real
 * root until it drops, and the workloads are a real uid of the host. */
#define SPAWN_NS_FLAGS (CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC)

struct spawn {
	char *name;
	pid_t pid;
	int pidfd;
	int netns;
	int chan;                       /* our end of the exec channel */
	bool ready;
	int landlock_abi;
	bool seccomp;
	struct initproto_spec ispec;    /* its text borrowed from the caller's spec */
	char *workdir;
	char *ca_pem;
};

/* True when PATH is absolute, below /, and has no "", "." or ".." part. */
static bool
spawn_path_ok(const char *path)
{
	return path != NULL && path[0] == '/' && path[1] != '\0' && rootcheck_path_canonical(path);
}

/* The homes of the machine's users other than UID, into HOMES (their
 * paths in STORE): no root may reach them. Root's home counts; system
 * accounts (below the first regular uid) do not, their "homes" being
 * service folders. */
static size_t
spawn_other_homes(uid_t uid, const char **homes, size_t max, char *store, size_t size)
{
	const struct passwd *pw;
	size_t n = 0, used = 0, len;

	setpwent();
	while (n < max && (pw = getpwent()) != NULL) {
		if (pw->pw_uid == uid || (pw->pw_uid != 0 && pw->pw_uid < SPAWN_FIRST_REGULAR_UID) ||
		    pw->pw_dir == NULL || pw->pw_dir[0] != '/' || pw->pw_dir[1] == '\0')
			continue;
		if ((len = strlen(pw->pw_dir) + 1) > size - used)
			break;
		memcpy(store + used, pw->pw_dir, len);
		homes[n++] = store + used;
		used += len;
	}
	endpwent();
	return n;
}

/* Why root PATH is refused ("it ..."), into WHY; -1 when it is. */
static int
spawn_root_judge(const struct spawn_spec *s, const char *path, const char *const *homes,
    size_t nhomes, char **err)
{
	struct rootcheck_context ctx = { s->own_dirs, s->n_own_dirs, homes, nhomes };
	const char *what = NULL;
	enum rootcheck_rule rule = rootcheck_judge(path, &ctx, &what);

	if (rule == ROOTCHECK_OK)
		return 0;
	if (what != NULL && strcmp(what, path) != 0)
		return reason_set(err, "root %s refused: it %s (%s)", path, rootcheck_strerror(rule),
		    what);
	return reason_set(err, "root %s refused: it %s", path, rootcheck_strerror(rule));
}

/* Checks every root of SPEC by its path: rootcheck's rules, no root twice. */
static int
spawn_check_roots(const struct spawn_spec *s, char **err)
{
	const char *homes[SPAWN_HOMES_MAX];
	char *store = xmalloc(SPAWN_HOMES_STORE_BYTES);
	size_t nhomes = spawn_other_homes(s->uid, homes, SPAWN_HOMES_MAX, store,
	    SPAWN_HOMES_STORE_BYTES);
	int rc = 0;

	for (size_t i = 0; i < s->n_roots && rc == 0; i++) {
		rc = spawn_root_judge(s, s->roots[i].path, homes, nhomes, err);
		for (size_t j = 0; j < i && rc == 0; j++)
			if (strcmp(s->roots[i].path, s->roots[j].path) == 0)
				rc = reason_set(err, "root %s is named twice", s->roots[i].path);
	}
	free(store);
	return rc;
}

/* Checks every field of SPEC that needs no file system. */
static int
spawn_check(const struct spawn_spec *s, char **err)
{
	unsigned char addr[sizeof(struct in6_addr)];

	if (s->name == NULL || !policy_name_valid(s->name))
		return reason_set(err, "sandbox name refused: it must match ^[a-z0-9][a-z0-9-]{0,62}$");
	/* Root inside: uid 0 without capabilities still owns the host's files. */
	if (s->uid == 0 || s->gid == 0)
		return reason_set(err, "run_as %u:%u refused: a sandbox never runs as uid or "
		    "gid 0; use --run-as with a regular user", s->uid, s->gid);
	if (s->n_roots == 0 || s->n_roots > CORRAL_ROOTS_MAX)
		return reason_set(err, "a sandbox needs 1 to %d roots", CORRAL_ROOTS_MAX);
	if (s->n_caller_groups > OPENER_GROUPS_MAX)
		return reason_set(err, "the caller has more than %d groups", OPENER_GROUPS_MAX);
	if (spawn_check_roots(s, err) == -1)
		return -1;
	if (!spawn_path_ok(s->home) || (s->workdir != NULL && !spawn_path_ok(s->workdir)) ||
	    (s->runtime != NULL && !spawn_path_ok(s->runtime)))
		return reason_set(err, "HOME, the working folder and the runtime folder "
		    "must be absolute paths");
	if (s->tmpfs_bytes == 0 || s->tmpfs_bytes / SPAWN_MIB > UINT32_MAX)
		return reason_set(err, "the size of /tmp is not a size from 1 byte to 4 PiB");
	if (s->gateway == NULL || (inet_pton(AF_INET, s->gateway, addr) != 1 &&
	    inet_pton(AF_INET6, s->gateway, addr) != 1))
		return reason_set(err, "the gateway is not an IP address");
	return 0;
}

/* Opens every root of S into FDS as the caller. */
static int
spawn_open_roots(const struct spawn_spec *s, int *fds, char **err)
{
	struct opener_who who = { s->caller_uid, s->caller_gid, s->caller_groups,
	    s->n_caller_groups };
	struct opener_item items[CORRAL_ROOTS_MAX];

	for (size_t i = 0; i < s->n_roots; i++)
		items[i] = (struct opener_item){ s->roots[i].path, s->roots[i].read_only };
	return opener_open(&who, OPENER_ROOT, items, s->n_roots, fds, err);
}

/* Replaces each O_PATH descriptor of FDS by a detached clone of its mount
 * tree. It must happen here: open_tree on a descriptor of another mount
 * namespace fails. */
static int
spawn_clone_trees(int *fds, size_t n, const struct spawn_spec *s, char **err)
{
	size_t i;
	int tree;

	for (i = 0; i < n; i++) {
		tree = open_tree(fds[i], "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
		    AT_RECURSIVE | AT_EMPTY_PATH);
		if (tree == -1)
			return reason_set(err, "cloning the mount tree of %s: %s",
			    i < s->n_roots ? s->roots[i].path : s->home, strerror(errno));
		close(fds[i]);
		fds[i] = tree;
	}
	return 0;
}

/* Which step of the child failed, and how: written to the parent before
 * the child exits (the pipe closes at exec when none did). */
struct spawn_child_failure {
	char step[32];
	int err;
};

/* In the clone, before exec: the channel at INITPROTO_FD, nothing else
 * open (not even 0 to 2; REPORT until exec), an empty environment. Every
 * signal stays blocked until corral-init sets its own mask. */
static void __attribute__((noreturn))
spawn_child(int chan, int report, const char *init_path)
{
	static char *const argv[] = { (char *)(uintptr_t)"corral-init", NULL };
	static char *const envp[] = { NULL };
	struct spawn_child_failure f = { "setting up its channel", 0 };
	/* Out of the way of INITPROTO_FD, close-on-exec; when that fails, the
	 * failure is told on REPORT as it came. */
	int moved = fcntl(report, F_DUPFD_CLOEXEC, INITPROTO_FD + 1);

	if (moved == -1)
		goto fail;
	report = moved;
	if ((chan == INITPROTO_FD ? fcntl(chan, F_SETFD, 0) : dup2(chan, INITPROTO_FD)) == -1)
		goto fail;
	/* What is left past the channel goes at exec, REPORT with it. */
	if (syscall(SYS_close_range, INITPROTO_FD + 1, ~0U, CLOSE_RANGE_CLOEXEC) == -1)
		goto fail;
	close_range(0, INITPROTO_FD - 1, 0);
	snprintf(f.step, sizeof(f.step), "exec");
	execve(init_path, argv, envp);
fail:
	f.err = errno;
	if (report != -1 && write(report, &f, sizeof(f)) != (ssize_t)sizeof(f)) {
		/* Then the parent sees an exit without exec, and says so. */
	}
	_exit(127);
}

/* Starts corral-init in the new namespaces, born in CGROUP_FD's cgroup
 * when >= 0 (CLONE_INTO_CGROUP): no migration, which the kernel makes
 * wait for an RCU grace period (5-15 ms) when none ran lately. A fork-like
 * clone3 copies the monitor's page tables: it stays small (about 7 MB),
 * and this costs about 0.2 ms. The child's exec is waited for: the pipe
 * closes then, or carries why not. */
static pid_t
spawn_clone(struct spawn *sp, int chan, const char *init_path, int cgroup_fd, char **err)
{
	struct clone_args ca = {
		.flags = SPAWN_NS_FLAGS | CLONE_PIDFD | (cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0),
		.pidfd = (uint64_t)(uintptr_t)&sp->pidfd, .exit_signal = SIGCHLD,
		.cgroup = cgroup_fd >= 0 ? (uint64_t)cgroup_fd : 0,
	};
	struct spawn_child_failure f;
	sigset_t all, saved;
	int report[2];
	ssize_t n;
	pid_t pid;

	if (pipe2(report, O_CLOEXEC) == -1)
		return reason_set(err, "pipe: %s", strerror(errno));
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		spawn_child(chan, report[1], init_path);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	close(report[1]);
	if (pid == -1) {
		close(report[0]);
		return reason_set(err, "clone3 of corral-init: %s%s", strerror(errno),
		    errno == ENOSYS || errno == E2BIG ? " (corral needs Linux 5.7 or later)" : "");
	}
	do {
		n = read(report[0], &f, sizeof(f));
	} while (n == -1 && errno == EINTR);
	close(report[0]);
	if (n == 0)
		return pid;
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(f))
		return reason_set(err, "starting corral-init (%s): it ended before exec", init_path);
	f.step[sizeof(f.step) - 1] = '\0';
	return reason_set(err, "starting corral-init (%s): %s: %s", init_path, f.step,
	    strerror(f.err));
}

/* Fills SP's copy of the protocol spec from S and the trees in FDS. */
static void
spawn_fill(struct spawn *sp, const struct spawn_spec *s, const int *fds)
{
	struct initproto_spec *is = &sp->ispec;
	size_t i;

	is->uid = s->uid;
	is->gid = s->gid;
	is->hostname = sp->name;
	is->gateway = s->gateway;
	is->home = s->home;
	is->runtime = s->runtime != NULL ? s->runtime : "";
	is->ca_pem = sp->ca_pem != NULL ? sp->ca_pem : "";
	is->tmp_mib = (uint32_t)((s->tmpfs_bytes + SPAWN_MIB - 1) / SPAWN_MIB);
	is->n_roots = s->n_roots;
	for (i = 0; i < s->n_roots; i++) {
		is->root_path[i] = s->roots[i].path;
		is->root_ro[i] = s->roots[i].read_only;
		is->root_fd[i] = fds[i];
		if (s->workdir == NULL && sp->workdir == NULL && !s->roots[i].read_only)
			sp->workdir = xstrdup(s->roots[i].path);
	}
	is->home_fd = fds[s->n_roots];
	if (s->workdir != NULL)
		sp->workdir = xstrdup(s->workdir);
	else if (sp->workdir == NULL)
		sp->workdir = xstrdup(s->home);
	is->workdir = sp->workdir;
}

struct spawn *
spawn_launch(const char *init_path, int cgroup_fd, char **err)
{
	struct spawn *sp = xcalloc(1, sizeof(*sp));
	char ns[64];
	int sv[2];

	sp->pid = sp->pidfd = sp->netns = sp->chan = sp->ispec.home_fd = -1;
	if (!spawn_path_ok(init_path)) {
		reason_set(err, "corral-init must be an absolute path");
		goto fail;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		reason_set(err, "socketpair: %s", strerror(errno));
		goto fail;
	}
	sp->chan = sv[0];
	sp->pid = spawn_clone(sp, sv[1], init_path, cgroup_fd, err);
	close(sv[1]);
	if (sp->pid == -1)
		goto fail;
	snprintf(ns, sizeof(ns), "/proc/%d/ns/net", (int)sp->pid);
	if ((sp->netns = open(ns, O_RDONLY | O_CLOEXEC)) == -1) {
		reason_set(err, "opening %s: %s", ns, strerror(errno));
		goto fail;
	}
	return sp;
fail:
	spawn_free(sp);
	return NULL;
}

/* True when NAME can name a socket in INITPROTO_SOCKETS_DIR: one file
 * name, not hidden, not too long. */
static bool
spawn_socket_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= INITPROTO_SOCKET_NAME_MAX_BYTES && name[0] != '.' &&
	    strchr(name, '/') == NULL;
}

/* Checks the sockets of S by their paths and names: each name once. */
static int
spawn_check_sockets(const struct spawn_spec *s, char **err)
{
	if (s->n_sockets > INITPROTO_SOCKETS_MAX)
		return reason_set(err, "a sandbox lists at most %d unix sockets",
		    INITPROTO_SOCKETS_MAX);
	for (size_t i = 0; i < s->n_sockets; i++) {
		if (!spawn_path_ok(s->sockets[i].path) || !spawn_socket_name_ok(s->sockets[i].name))
			return reason_set(err, "unix socket %s refused: its path must be absolute "
			    "and its name one file name", s->sockets[i].path);
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->sockets[i].name, s->sockets[j].name) == 0)
				return reason_set(err, "unix socket name %s is given twice",
				    s->sockets[i].name);
	}
	return 0;
}

/* The policy's host sockets of S, opened as the caller and cloned as
 * detached trees into SP's spec, to be bound inside. */
static int
spawn_sockets(struct spawn *sp, const struct spawn_spec *s, char **err)
{
	struct opener_who who = { s->caller_uid, s->caller_gid, s->caller_groups,
	    s->n_caller_groups };
	struct opener_item items[INITPROTO_SOCKETS_MAX];
	int fds[INITPROTO_SOCKETS_MAX], tree, rc = 0;

	if (s->n_sockets == 0)
		return 0;
	if (spawn_check_sockets(s, err) == -1)
		return -1;
	for (size_t i = 0; i < s->n_sockets; i++)
		items[i] = (struct opener_item){ s->sockets[i].path, false };
	if (opener_open(&who, OPENER_SOCKET, items, s->n_sockets, fds, err) == -1)
		return -1;
	for (size_t i = 0; i < s->n_sockets; i++) {
		/* A clone of a file's mount is that file bound anywhere. */
		tree = rc == 0 ? open_tree(fds[i], "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
		    AT_EMPTY_PATH) : -1;
		if (tree == -1 && rc == 0)
			rc = reason_set(err, "cloning the mount of unix socket %s: %s",
			    s->sockets[i].path, strerror(errno));
		close(fds[i]);
		sp->ispec.socket_fd[i] = tree;
		sp->ispec.socket_name[i] = s->sockets[i].name;
		sp->ispec.n_sockets = i + 1;
	}
	return rc;
}

void
spawn_set_ca(struct spawn *sp, const char *pem)
{
	free(sp->ca_pem);
	sp->ca_pem = pem != NULL ? xstrdup(pem) : NULL;
	sp->ispec.ca_pem = sp->ca_pem != NULL ? sp->ca_pem : "";
}

void
spawn_set_unix_guard(struct spawn *sp, bool on)
{
	sp->ispec.unix_guard = on;
}

/* Closes every tree SP still holds. */
static void
spawn_close_trees(struct spawn *sp)
{
	size_t i;

	for (i = 0; i < sp->ispec.n_roots; i++) {
		if (sp->ispec.root_fd[i] != -1)
			close(sp->ispec.root_fd[i]);
		sp->ispec.root_fd[i] = -1;
	}
	if (sp->ispec.home_fd != -1)
		close(sp->ispec.home_fd);
	sp->ispec.home_fd = -1;
	sp->ispec.n_roots = 0;
	for (i = 0; i < sp->ispec.n_sockets; i++) {
		if (sp->ispec.socket_fd[i] != -1)
			close(sp->ispec.socket_fd[i]);
		sp->ispec.socket_fd[i] = -1;
	}
	sp->ispec.n_sockets = 0;
}

int
spawn_prepare(struct spawn *sp, const struct spawn_spec *s, char **err)
{
	int fds[CORRAL_ROOTS_MAX + 1];
	size_t i;

	if (sp->name != NULL)
		return reason_set(err, "corral-init was given a spec already");
	for (i = 0; i <= CORRAL_ROOTS_MAX; i++)
		fds[i] = -1;
	if (spawn_check(s, err) == -1 || spawn_open_roots(s, fds, err) == -1)
		goto fail;
	/* HOME is the daemon's own folder: opened with its rights. */
	fds[s->n_roots] = s->home_fd != -1 ? fcntl(s->home_fd, F_DUPFD_CLOEXEC, 0) :
	    opener_path(s->home);
	if (fds[s->n_roots] == -1) {
		reason_set(err, "HOME %s: %s", s->home, strerror(errno));
		goto fail;
	}
	if (spawn_clone_trees(fds, s->n_roots + 1, s, err) == -1)
		goto fail;
	sp->name = xstrdup(s->name);
	sp->ca_pem = s->ca_pem != NULL ? xstrdup(s->ca_pem) : NULL;
	spawn_fill(sp, s, fds);
	return spawn_sockets(sp, s, err);
fail:
	for (i = 0; i <= CORRAL_ROOTS_MAX; i++) {
		if (fds[i] != -1)
			close(fds[i]);
	}
	return -1;
}

int
spawn_ready(struct spawn *sp, int timeout_ms, char **err)
{
	struct seqmsg *m = xmalloc(sizeof(*m));
	struct pollfd p = { .fd = sp->chan, .events = POLLIN };
	const char *text;
	uint32_t flags, abi;
	int rc = -1, n;

	if (sp->name == NULL) {
		free(m);
		return reason_set(err, "corral-init has no spec to be sent");
	}
	initproto_spec_encode(m, &sp->ispec);
	if (seqmsg_send(sp->chan, m) == -1) {
		reason_set(err, "sandbox %s: sending the spec to corral-init: %s", sp->name,
		    strerror(errno));
		goto out;
	}
	/* corral-init holds its own copies now. */
	spawn_close_trees(sp);
	do {
		n = poll(&p, 1, timeout_ms);
	} while (n == -1 && errno == EINTR);
	if (n == 0) {
		reason_set(err, "sandbox %s: corral-init did not answer within %d ms",
		    sp->name, timeout_ms);
		goto out;
	}
	n = seqmsg_recv(sp->chan, m);
	if (n == 1 && m->type == INITPROTO_READY && seqmsg_get_u32(m, &flags) == 0 &&
	    seqmsg_get_u32(m, &abi) == 0 && seqmsg_get_end(m, 0) == 0) {
		sp->ready = true;
		sp->landlock_abi = (int)abi;
		sp->seccomp = flags & INITPROTO_READY_SECCOMP;
		rc = 0;
	} else if (n == 1 && m->type == INITPROTO_ERROR && seqmsg_get_u32(m, &flags) == 0 &&
	    seqmsg_get_str(m, &text) == 0) {
		reason_set(err, "sandbox %s refused by corral-init: %s", sp->name, text);
	} else {
		reason_set(err, "sandbox %s: corral-init %s", sp->name,
		    n == 0 ? "exited before answering" : "answered something else than READY");
	}
out:
	seqmsg_clear(m);
	free(m);
	return rc;
}

pid_t
spawn_pid(const struct spawn *sp)
{
	return sp->pid;
}

int
spawn_pidfd(const struct spawn *sp)
{
	return sp->pidfd;
}

int
spawn_netns_fd(const struct spawn *sp)
{
	return sp->netns;
}

int
spawn_landlock_abi(const struct spawn *sp)
{
	return sp->landlock_abi;
}

bool
spawn_seccomp(const struct spawn *sp)
{
	return sp->seccomp;
}

int
spawn_take_channel(struct spawn *sp)
{
	int fd = sp->chan;

	if (!sp->ready)
		return -1;
	sp->chan = -1;
	return fd;
}

void
spawn_free(struct spawn *sp)
{
	if (sp == NULL)
		return;
	spawn_close_trees(sp);
	if (sp->chan != -1)
		close(sp->chan);
	/* Ours to end and to reap, ready or not: a sandbox torn down leaves
	 * no zombie behind (its pid would stay charged to its cgroup). */
	if (sp->pid > 0) {
		if (sp->pidfd != -1)
			syscall(SYS_pidfd_send_signal, sp->pidfd, SIGKILL, NULL, 0);
		else
			kill(sp->pid, SIGKILL);
		while (waitpid(sp->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	if (sp->pidfd != -1)
		close(sp->pidfd);
	if (sp->netns != -1)
		close(sp->netns);
	free(sp->workdir);
	free(sp->name);
	free(sp->ca_pem);
	free(sp);
}
