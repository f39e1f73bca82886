/* The caller's opener. See opener.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/monitor/opener.h"
#include "common/reason.h"
#include "common/seqmsg.h"
#include "common/xmalloc.h"

#define OPENER_ASK 202                  /* the monitor's request */
#define OPENER_OPENED 200               /* the child's answers: the descriptors, */
#define OPENER_REFUSED 201              /* or why not */
#define OPENER_SOCK_FD 3                /* the child's one descriptor past stdio */
#define OPENER_ENDED_MAX 8              /* children answered, not yet reaped */

/* The child forked ahead, and those that answered since the last reaping. */
static struct {
	pid_t pid;                      /* -1: none */
	int sock;
	pid_t ended[OPENER_ENDED_MAX];
	size_t nended;
} opener_spare = { -1, -1, { 0 }, 0 };

int
opener_path(const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

/* ---- The child ---------------------------------------------------------- */

/* Root R, with this thread's file-system identity, checked for its use. */
static int
opener_root(const struct opener_item *r, char **err)
{
	int fd, mode = R_OK | X_OK | (r->read_only ? 0 : W_OK);

	if ((fd = opener_path(r->path)) == -1)
		return reason_set(err, "root %s refused: %s%s", r->path, strerror(errno),
		    errno == ELOOP ? " (a symlink is on the path: name the folder it leads to)" : "");
	/* AT_EACCESS: the check uses fsuid and fsgid, the caller's. */
	if (syscall(SYS_faccessat2, fd, "", mode, AT_EACCESS | AT_EMPTY_PATH) == -1) {
		close(fd);
		return reason_set(err, "root %s refused: you may not %s it", r->path,
		    r->read_only ? "read" : "read and write");
	}
	/* A root holding ~/.gnupg would show the gpg agent's socket. */
	if (faccessat(fd, ".gnupg", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		close(fd);
		return reason_set(err, "root %s refused: it holds .gnupg, whose agent socket "
		    "the sandbox could reach; name a folder inside it", r->path);
	}
	return fd;
}

static int
opener_dir(const struct opener_item *d, char **err)
{
	int fd = opener_path(d->path);

	if (fd == -1)
		return reason_set(err, "%s: %s%s", d->path, strerror(errno), errno == ELOOP ?
		    " (a symlink is on the path: name the folder it leads to)" : "");
	return fd;
}

/* A host socket the caller may connect to: one it may write. */
static int
opener_socket(const struct opener_item *u, char **err)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct stat st;
	int fd;

	fd = (int)syscall(SYS_openat2, AT_FDCWD, u->path, &how, sizeof(how));
	if (fd == -1)
		return reason_set(err, "unix socket %s refused: %s%s", u->path, strerror(errno),
		    errno == ELOOP ? " (a symlink is on the path: name the socket it leads to)" : "");
	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		return reason_set(err, "unix socket %s refused: it is not a socket", u->path);
	}
	/* AT_EACCESS: the check uses fsuid and fsgid, the caller's. */
	if (syscall(SYS_faccessat2, fd, "", W_OK, AT_EACCESS | AT_EMPTY_PATH) == -1) {
		close(fd);
		return reason_set(err, "unix socket %s refused: you may not connect to it",
		    u->path);
	}
	return fd;
}

/* Takes WHO's file-system identity: fsuid, fsgid and groups (which also
 * drops the capabilities that bypass file permissions). */
static int
opener_become(const struct opener_who *who, char **err)
{
	if (syscall(SYS_setgroups, who->ngroups, who->groups) == -1)
		return reason_set(err, "setgroups: %s", strerror(errno));
	setfsgid(who->gid);
	setfsuid(who->uid);
	if ((uid_t)setfsuid((uid_t)-1) != who->uid || (gid_t)setfsgid((gid_t)-1) != who->gid)
		return reason_set(err, "could not take the caller's file-system identity");
	return 0;
}

/* A request of M into WHO (GROUPS its storage), KIND, ITEMS and N; -1
 * when it is malformed. */
static int
opener_decode(struct seqmsg *m, struct opener_who *who, gid_t *groups, uint32_t *kind,
    struct opener_item *items, uint32_t *n)
{
	uint32_t uid, gid, ngroups, ro;

	if (m->type != OPENER_ASK || seqmsg_get_u32(m, &uid) == -1 ||
	    seqmsg_get_u32(m, &gid) == -1 || seqmsg_get_u32(m, &ngroups) == -1 ||
	    ngroups > OPENER_GROUPS_MAX)
		return -1;
	for (uint32_t i = 0; i < ngroups; i++)
		if (seqmsg_get_u32(m, &groups[i]) == -1)
			return -1;
	if (seqmsg_get_u32(m, kind) == -1 || *kind > OPENER_SOCKET ||
	    seqmsg_get_u32(m, n) == -1 || *n > OPENER_ITEMS_MAX)
		return -1;
	for (uint32_t i = 0; i < *n; i++) {
		if (seqmsg_get_str(m, &items[i].path) == -1 || seqmsg_get_u32(m, &ro) == -1)
			return -1;
		items[i].read_only = ro != 0;
	}
	*who = (struct opener_who){ uid, gid, groups, ngroups };
	return seqmsg_get_end(m, 0);
}

/* Opens what the request of M asks into FDS; -1 with *ERR. */
static int
opener_serve_one(struct seqmsg *m, int *fds, uint32_t *n, char **err)
{
	static int (*const open_kind[])(const struct opener_item *, char **) = {
		[OPENER_ROOT] = opener_root, [OPENER_DIR] = opener_dir,
		[OPENER_SOCKET] = opener_socket,
	};
	struct opener_item items[OPENER_ITEMS_MAX];
	gid_t groups[OPENER_GROUPS_MAX];
	struct opener_who who;
	uint32_t kind;

	if (opener_decode(m, &who, groups, &kind, items, n) == -1)
		return reason_set(err, "a malformed request to open");
	if (opener_become(&who, err) == -1)
		return -1;
	for (uint32_t i = 0; i < *n; i++)
		if ((fds[i] = open_kind[kind](&items[i], err)) == -1)
			return -1;
	return 0;
}

/* The child: waits for one request on OPENER_SOCK_FD, answers, ends. */
static void __attribute__((noreturn))
opener_child(void)
{
	struct seqmsg *m = malloc(sizeof(*m));
	int fds[OPENER_ITEMS_MAX];
	char *err = NULL;
	uint32_t n = 0;

	if (m == NULL)
		_exit(1);
	seqmsg_init(m, 0);
	if (seqmsg_recv(OPENER_SOCK_FD, m) != 1)
		_exit(1);
	if (opener_serve_one(m, fds, &n, &err) == 0) {
		seqmsg_init(m, OPENER_OPENED);
		for (uint32_t i = 0; i < n; i++)
			seqmsg_put_fd(m, fds[i]);
	} else {
		seqmsg_init(m, OPENER_REFUSED);
		seqmsg_put_str(m, err != NULL ? err : "cannot open");
	}
	_exit(seqmsg_send(OPENER_SOCK_FD, m) == 0 ? 0 : 1);
}

/* ---- The monitor's side ------------------------------------------------- */

/* Forks the child that waits; -1 with errno. */
static int
opener_fork(void)
{
	pid_t parent = getpid(), pid;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		/* Nothing of the monitor's stays open here: a sandbox's
		 * namespace or channel held by this child would outlive its
		 * delete. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent ||
		    (sv[1] != OPENER_SOCK_FD && dup3(sv[1], OPENER_SOCK_FD, 0) == -1) ||
		    syscall(SYS_close_range, OPENER_SOCK_FD + 1, ~0U, 0) == -1)
			_exit(1);
		opener_child();
	}
	close(sv[1]);
	opener_spare.pid = pid;
	opener_spare.sock = sv[0];
	return 0;
}

/* Waits for the child PID to end (it was answered or killed). */
static void
opener_reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
}

void
opener_prepare(void)
{
	for (size_t i = 0; i < opener_spare.nended; i++)
		opener_reap(opener_spare.ended[i]);
	opener_spare.nended = 0;
	if (opener_spare.pid == -1)
		(void)opener_fork();    /* else the next open forks its own */
}

void
opener_end(void)
{
	if (opener_spare.pid != -1) {
		close(opener_spare.sock);
		kill(opener_spare.pid, SIGKILL);
		opener_reap(opener_spare.pid);
		opener_spare.pid = -1;
	}
	opener_prepare();
}

/* The request: WHO, KIND and the N ITEMS. */
static void
opener_encode(struct seqmsg *m, const struct opener_who *who, enum opener_kind kind,
    const struct opener_item *items, size_t n)
{
	seqmsg_init(m, OPENER_ASK);
	seqmsg_put_u32(m, who->uid);
	seqmsg_put_u32(m, who->gid);
	seqmsg_put_u32(m, (uint32_t)who->ngroups);
	for (size_t i = 0; i < who->ngroups; i++)
		seqmsg_put_u32(m, who->groups[i]);
	seqmsg_put_u32(m, kind);
	seqmsg_put_u32(m, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		seqmsg_put_str(m, items[i].path);
		seqmsg_put_u32(m, items[i].read_only);
	}
}

/* The child's answer in M on SOCK, waited for with the deadline; N
 * descriptors into FDS. */
static int
opener_answer(int sock, struct seqmsg *m, int *fds, size_t n, char **err)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	const char *text;
	int rc = -1;

	seqmsg_clear(m);
	if (poll(&p, 1, OPENER_TIMEOUT_MS) != 1)
		reason_set(err, "opening the folders as the caller took more than %d ms "
		    "(a file system that does not answer?)", OPENER_TIMEOUT_MS);
	else if (seqmsg_recv(sock, m) != 1)
		reason_set(err, "the folders could not be opened as the caller");
	else if (m->type == OPENER_REFUSED && seqmsg_get_str(m, &text) == 0)
		reason_set(err, "%s", text);
	else if (m->type != OPENER_OPENED || seqmsg_get_end(m, n) == -1)
		reason_set(err, "the folders could not be opened as the caller");
	else
		rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++)
		fds[i] = seqmsg_take_fd(m, i);
	return rc;
}

int
opener_open(const struct opener_who *who, enum opener_kind kind,
    const struct opener_item *items, size_t n, int *fds, char **err)
{
	struct seqmsg *m;
	pid_t pid;
	int sock, rc = -1;

	if (n > OPENER_ITEMS_MAX || who->ngroups > OPENER_GROUPS_MAX)
		return reason_set(err, "at most %d paths and %d groups are opened at once",
		    OPENER_ITEMS_MAX, OPENER_GROUPS_MAX);
	if (opener_spare.pid == -1 && opener_fork() == -1)
		return reason_set(err, "fork: %s", strerror(errno));
	pid = opener_spare.pid;
	sock = opener_spare.sock;
	opener_spare.pid = -1;          /* one request each */
	m = xmalloc(sizeof(*m));
	opener_encode(m, who, kind, items, n);
	if (m->overflow)
		reason_set(err, "the paths are too long to open at once (%d bytes together at most)",
		    SEQMSG_MAX_BYTES);
	else if (seqmsg_send(sock, m) == -1)
		reason_set(err, "the opening child is gone: %s", strerror(errno));
	else
		rc = opener_answer(sock, m, fds, n, err);
	seqmsg_clear(m);
	free(m);
	close(sock);
	/* Answered, it is ending: reaped by the next opener_prepare. A child
	 * past its deadline is killed and waited for now. */
	if (rc == 0 && opener_spare.nended < OPENER_ENDED_MAX) {
		opener_spare.ended[opener_spare.nended++] = pid;
	} else {
		kill(pid, SIGKILL);
		opener_reap(pid);
	}
	return rc;
}
