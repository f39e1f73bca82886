/* corral-init's supervisor of connect(); see sockguard.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "broker/init/sockguard.h"

#define SOCKGUARD_STACK_BYTES (256 * 1024)      /* each thread's */
#define SOCKGUARD_DIAG_BUF_BYTES (32 * 1024)    /* one read of a sock_diag dump */
#define SOCKGUARD_PROC_PATH_MAX_BYTES 64        /* "/proc/<tid>/status" and the like */
#define SOCKGUARD_STATUS_MAX_BYTES 4096 /* the part of /proc/TID/status read */
#define SOCKGUARD_TMPFS_MAGIC 0x01021994        /* linux/magic.h */
#define SOCKGUARD_MOUNTINFO "/proc/self/mountinfo"
#define SOCKGUARD_MOUNTINFO_LINE_MAX_BYTES 8192
/* PIDFD_THREAD (Linux 6.9): a pidfd of one thread, which a notification names. */
#define SOCKGUARD_PIDFD_THREAD O_EXCL
/* The kernel's dev_t, as sock_diag reports it: major << 20 | minor. */
#define SOCKGUARD_KDEV(d) ((uint32_t)((major(d) << 20) | minor(d)))
#define SOCKGUARD_SUN_PATH_OFFSET offsetof(struct sockaddr_un, sun_path)

/* A listener and the calls in flight on it: closed when both are done. */
struct sockguard_listener {
	int fd;
	unsigned refs;                  /* epoll's, plus one per call being served */
};

/* One call received, and the listener it came from. */
struct sockguard_job {
	struct seccomp_notif n;
	struct sockguard_listener *l;
	struct sockaddr_un addr;        /* as read, once */
	socklen_t len;
};

struct sockguard {
	struct sockguard_config cfg;
	int epfd;
	bool started;
	pthread_mutex_t lock;           /* the threads, the refs, the rate */
	size_t threads;                 /* started, under LOCK */
	atomic_size_t idle;             /* waiting on the listeners */
	atomic_size_t in_connect;       /* inside a connect() made for a caller */
	atomic_uint unreported;         /* reports dropped: over the rate, or a full channel */
	time_t report_second;           /* the rate's window, under LOCK */
	unsigned reports;               /* reports sent in it */
};

/* What became of one pathname connect. */
enum sockguard_verdict {
	SOCKGUARD_OWN,                  /* the sandbox's own: connected, not reported */
	SOCKGUARD_LISTED,               /* a listed socket: connected, reported */
	SOCKGUARD_REFUSED,              /* a host socket: EACCES, reported */
	SOCKGUARD_OTHER,                /* no socket there, or an error: not reported */
};

/* ---- the sandbox's facts ---- */

/* True when the mount at PATH is a whole tmpfs (its root is the file
 * system's, not a bind of a folder of it): one made for this sandbox. */
static bool
sockguard_whole_tmpfs(const char *path)
{
	char line[SOCKGUARD_MOUNTINFO_LINE_MAX_BYTES], point[PATH_MAX], root[PATH_MAX],
	    type[32];
	struct statfs sf;
	bool whole = false;
	FILE *f;

	if (statfs(path, &sf) == -1 || sf.f_type != SOCKGUARD_TMPFS_MAGIC ||
	    (f = fopen(SOCKGUARD_MOUNTINFO, "re")) == NULL)
		return false;
	/* id parent major:minor root point options [optional...] - type ... */
	while (fgets(line, sizeof(line), f) != NULL) {
		const char *dash = strstr(line, " - ");

		if (dash == NULL || sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
		    sscanf(dash + 3, "%31s", type) != 1 || strcmp(point, path) != 0)
			continue;
		/* The last mount at the point is the one seen there. */
		whole = strcmp(root, "/") == 0 && strcmp(type, "tmpfs") == 0;
	}
	fclose(f);
	return whole;
}

/* Adds PATH's file system to CFG's own ones. */
static int
sockguard_add_own(struct sockguard_config *cfg, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st) == -1) {
		snprintf(err, errlen, "corral-init: unix sockets: %s: %s", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < cfg->n_own; i++)
		if (cfg->own[i] == st.st_dev)
			return 0;
	if (cfg->n_own < SOCKGUARD_OWN_MAX)
		cfg->own[cfg->n_own++] = st.st_dev;
	return 0;
}

int
sockguard_config_read(const struct initproto_spec *spec, int chan,
    struct sockguard_config *cfg, char *err, size_t errlen)
{
	static const char *const own[] = { "/tmp", "/dev/shm", "/run" };
	char path[PATH_MAX];
	struct stat st;

	memset(cfg, 0, sizeof(*cfg));
	cfg->chan = chan;
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (sockguard_add_own(cfg, own[i], err, errlen) == -1)
			return -1;
	/* HOME only when it is a tmpfs of its own, never a bind of a host folder. */
	if (sockguard_whole_tmpfs(spec->home) &&
	    sockguard_add_own(cfg, spec->home, err, errlen) == -1)
		return -1;
	for (size_t i = 0; i < spec->n_sockets && i < INITPROTO_SOCKETS_MAX; i++) {
		snprintf(path, sizeof(path), "%s/%s", INITPROTO_SOCKETS_DIR, spec->socket_name[i]);
		if (stat(path, &st) == -1 || !S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "corral-init: unix sockets: %s is not a socket",
			    path);
			return -1;
		}
		cfg->listed[i].dev = st.st_dev;
		cfg->listed[i].ino = st.st_ino;
		cfg->listed[i].name = spec->socket_name[i];
		cfg->n_listed++;
	}
	return 0;
}

/* ---- answers ---- */

/* Answers call ID of listener FD: ERR, or 0 for done. */
static void
sockguard_answer(int fd, uint64_t id, int err)
{
	struct seccomp_notif_resp r = { .id = id, .error = err != 0 ? -err : 0 };

	/* ENOENT: the caller is gone (a fatal signal); nothing to do. */
	(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

/* The kernel does the call itself, in the caller's task. */
static void
sockguard_continue(int fd, uint64_t id)
{
	struct seccomp_notif_resp r = { .id = id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };

	(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

/* Lets go of L; the last one closes it. */
static void
sockguard_unref(struct sockguard *g, struct sockguard_listener *l)
{
	bool last;

	pthread_mutex_lock(&g->lock);
	last = --l->refs == 0;
	pthread_mutex_unlock(&g->lock);
	if (last) {
		close(l->fd);
		free(l);
	}
}

/* ---- reports ---- */

/* The thread group of TID, from /proc/TID/status; TID when unreadable. */
static pid_t
sockguard_tgid(pid_t tid)
{
	char path[SOCKGUARD_PROC_PATH_MAX_BYTES], buf[SOCKGUARD_STATUS_MAX_BYTES];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return tid;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return tid;
	buf[n] = '\0';
	if ((p = strstr(buf, "\nTgid:")) == NULL)
		return tid;
	return (pid_t)strtol(p + sizeof("\nTgid:") - 1, NULL, 10);
}

/* Reads the link /proc/TID/WHAT into OUT ("" when unreadable). */
static void
sockguard_proc_link(pid_t tid, const char *what, char *out, size_t size)
{
	char path[SOCKGUARD_PROC_PATH_MAX_BYTES];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)tid, what);
	n = readlink(path, out, size - 1);
	out[n > 0 ? n : 0] = '\0';
}

/* True when one more report fits this second's SOCKGUARD_REPORTS_PER_S:
 * a workload that loops on a refused connect must not flood the ledger. */
static bool
sockguard_report_due(struct sockguard *g)
{
	struct timespec t;
	bool due;

	clock_gettime(CLOCK_MONOTONIC, &t);
	pthread_mutex_lock(&g->lock);
	if (t.tv_sec != g->report_second) {
		g->report_second = t.tv_sec;
		g->reports = 0;
	}
	due = g->reports < SOCKGUARD_REPORTS_PER_S;
	g->reports += due;
	pthread_mutex_unlock(&g->lock);
	return due;
}

/* A report in the making: what it says of the process is read while the
 * process still waits for the answer. */
struct sockguard_report {
	struct initproto_unix u;
	char abs[PATH_MAX + 1 + sizeof(((struct sockaddr_un *)0)->sun_path)];
	char exe[PATH_MAX];
};

/* Fills R about one connect of TID to PATH (NAME: the listed socket's);
 * false when none is to be sent. Only refusals and listed sockets are
 * reported. */
static bool
sockguard_report_take(struct sockguard *g, enum sockguard_verdict v, pid_t tid,
    const char *path, const char *name, struct sockguard_report *r)
{
	char cwd[PATH_MAX];

	if (g->cfg.chan < 0 || (v != SOCKGUARD_REFUSED && v != SOCKGUARD_LISTED))
		return false;
	if (!sockguard_report_due(g)) {
		atomic_fetch_add(&g->unreported, 1);
		return false;
	}
	r->u = (struct initproto_unix){ .decision = v == SOCKGUARD_LISTED ? INITPROTO_UNIX_ALLOW :
	    INITPROTO_UNIX_DENY, .path = path, .listed = name != NULL ? name : "",
	    .binary = r->exe };
	if (path[0] != '/') {
		sockguard_proc_link(tid, "cwd", cwd, sizeof(cwd));
		snprintf(r->abs, sizeof(r->abs), "%s/%s", cwd, path);
		r->u.path = r->abs;
	}
	sockguard_proc_link(tid, "exe", r->exe, sizeof(r->exe));
	r->u.pidfd = (int)syscall(SYS_pidfd_open, sockguard_tgid(tid), 0);
	return true;
}

/* Sends R to the daemon, with the count of those dropped before it. */
static void
sockguard_report_send(struct sockguard *g, struct sockguard_report *r)
{
	r->u.unreported = atomic_exchange(&g->unreported, 0);
	if (initproto_unix_send(g->cfg.chan, &r->u) == -1)
		atomic_fetch_add(&g->unreported, r->u.unreported + 1);
	if (r->u.pidfd != -1)
		close(r->u.pidfd);
}

/* ---- the decision ---- */

/* True when a Unix socket of this network namespace is bound to the file
 * (DEV, INO): one the sandbox made, wherever its path. DIAG is the
 * thread's NETLINK_SOCK_DIAG socket, BUF its reading buffer. The kernel
 * reports 32 bits of the inode; the device is compared too. */
static bool
sockguard_bound_here(int diag, char *buf, dev_t dev, ino_t ino)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		    .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = ~0U, .udiag_show = UDIAG_SHOW_VFS },
	};
	bool found = false, done = false;
	ssize_t n;

	if (send(diag, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		return false;
	/* The whole dump is read, found or not: the socket serves the next. */
	while (!done && (n = recv(diag, buf, SOCKGUARD_DIAG_BUF_BYTES, 0)) > 0) {
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		    h = NLMSG_NEXT(h, n)) {
			struct unix_diag_msg *m = NLMSG_DATA(h);
			struct rtattr *a = (struct rtattr *)(m + 1);
			int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));

			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
				struct unix_diag_vfs *v = RTA_DATA(a);

				if (a->rta_type == UNIX_DIAG_VFS &&
				    v->udiag_vfs_ino == (uint32_t)ino &&
				    v->udiag_vfs_dev == SOCKGUARD_KDEV(dev))
					found = true;
			}
		}
	}
	return found;
}

/* What the socket file ST is to the sandbox; *NAME the listed one's. */
static enum sockguard_verdict
sockguard_judge(const struct sockguard *g, const struct stat *st, int diag, char *buf,
    const char **name)
{
	for (size_t i = 0; i < g->cfg.n_own; i++)
		if (st->st_dev == g->cfg.own[i])
			return SOCKGUARD_OWN;
	for (size_t i = 0; i < g->cfg.n_listed; i++)
		if (st->st_dev == g->cfg.listed[i].dev && st->st_ino == g->cfg.listed[i].ino) {
			*name = g->cfg.listed[i].name;
			return SOCKGUARD_LISTED;
		}
	/* Not cached: an inode number may be reused by a later host socket. */
	if (diag != -1 && sockguard_bound_here(diag, buf, st->st_dev, st->st_ino))
		return SOCKGUARD_OWN;
	return SOCKGUARD_REFUSED;
}

/* The path of J's address, as the kernel reads it: sun_path cut at the
 * length or at the first NUL. */
static void
sockguard_path(const struct sockguard_job *j, char *out)
{
	size_t n = (size_t)j->len - SOCKGUARD_SUN_PATH_OFFSET;

	memcpy(out, j->addr.sun_path, n);
	out[n] = '\0';
}

/* Opens PATH (O_PATH, following links as connect() does) as TID names it:
 * from its cwd when relative. -1 with errno. */
static int
sockguard_open(pid_t tid, const char *path)
{
	char cwd[SOCKGUARD_PROC_PATH_MAX_BYTES];
	int base = AT_FDCWD, fd, saved;

	if (path[0] != '/') {
		snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", (int)tid);
		if ((base = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
			return -1;
	}
	fd = openat(base, path, O_PATH | O_CLOEXEC);
	saved = errno;
	if (base != AT_FDCWD)
		close(base);
	errno = saved;
	return fd;
}

/* Decides J's connect and makes it on SOCK (the workload's socket); the
 * errno to answer in *ERR. */
static enum sockguard_verdict
sockguard_decide(struct sockguard *g, const struct sockguard_job *j, int sock,
    int diag, char *buf, int *err, const char **name)
{
	char path[sizeof(j->addr.sun_path) + 1];
	struct sockaddr_un via = { .sun_family = AF_UNIX };
	enum sockguard_verdict v;
	struct stat st;
	int fd;

	sockguard_path(j, path);
	if ((fd = sockguard_open((pid_t)j->n.pid, path)) == -1) {
		*err = errno;
		return SOCKGUARD_OTHER;
	}
	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		*err = ECONNREFUSED;    /* what connect() says of a file that is no socket */
		return SOCKGUARD_OTHER;
	}
	v = sockguard_judge(g, &st, diag, buf, name);
	if (v == SOCKGUARD_REFUSED) {
		close(fd);
		*err = EACCES;
		return v;
	}
	/* The inode checked is the inode connected: through the descriptor. */
	snprintf(via.sun_path, sizeof(via.sun_path), "/proc/self/fd/%d", fd);
	atomic_fetch_add(&g->in_connect, 1);
	*err = connect(sock, (struct sockaddr *)&via, sizeof(via)) == -1 ? errno : 0;
	atomic_fetch_sub(&g->in_connect, 1);
	close(fd);
	return v;
}

/* Takes J's socket from its process: -1 when the call is gone (nothing to
 * answer), -2 when it should go on in the kernel, else the descriptor.
 * *PIDFD: the thread's. */
static int
sockguard_take_socket(const struct sockguard_job *j, int *pidfd)
{
	int sock, domain = 0;
	socklen_t dl = sizeof(domain);

	*pidfd = (int)syscall(SYS_pidfd_open, (pid_t)j->n.pid, SOCKGUARD_PIDFD_THREAD);
	if (*pidfd == -1 && errno == EINVAL)    /* before Linux 6.9: a leader only */
		*pidfd = (int)syscall(SYS_pidfd_open, (pid_t)j->n.pid, 0);
	/* Checked after the pidfd: the pid is the caller's, not a reused one. */
	if (ioctl(j->l->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &j->n.id) == -1)
		return -1;
	if (*pidfd == -1)
		return -2;
	sock = (int)syscall(SYS_pidfd_getfd, *pidfd, (int)j->n.data.args[0], 0);
	if (sock == -1)
		return -2;      /* a bad descriptor: the kernel says EBADF */
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &dl) == -1 || domain != AF_UNIX) {
		close(sock);
		return -2;      /* the kernel refuses a Unix address on it */
	}
	return sock;
}

/* One pathname connect, answered. */
static void
sockguard_serve(struct sockguard *g, const struct sockguard_job *j, int diag, char *buf)
{
	char path[sizeof(j->addr.sun_path) + 1];
	struct sockguard_report r;
	const char *name = NULL;
	enum sockguard_verdict v;
	int pidfd, sock, err = 0;
	bool report;

	sock = sockguard_take_socket(j, &pidfd);
	if (sock == -2)
		sockguard_continue(j->l->fd, j->n.id);
	if (sock >= 0) {
		v = sockguard_decide(g, j, sock, diag, buf, &err, &name);
		sockguard_path(j, path);
		report = sockguard_report_take(g, v, (pid_t)j->n.pid, path, name, &r);
		sockguard_answer(j->l->fd, j->n.id, err);
		if (report)
			sockguard_report_send(g, &r);
		close(sock);
	}
	if (pidfd != -1)
		close(pidfd);
}

/* ---- threads ----
 *
 * Every idle thread waits in epoll_wait on the listeners, each armed for
 * one event at a time (EPOLLONESHOT): the thread that gets it receives the
 * call, arms the listener again and serves the call itself, while the
 * others go on waiting. So no call waits for a hand-over between threads.
 * A thread about to serve a pathname call (its connect may block) first
 * starts another when none waits; when nearly every thread is held in a
 * connect(), the call gets EAGAIN. */

void
sockguard_quiesce(struct sockguard *g, int max_ms)
{
	const struct timespec step = { 0, 100 * 1000 };         /* 100 us */

	for (int i = 0; g != NULL && i < max_ms * 10; i++) {
		bool quiet;

		pthread_mutex_lock(&g->lock);
		quiet = atomic_load(&g->idle) + atomic_load(&g->in_connect) >= g->threads;
		pthread_mutex_unlock(&g->lock);
		if (quiet)
			return;
		nanosleep(&step, NULL);
	}
}

/* Starts FN(G) as a thread that takes no signal. */
static int
sockguard_thread(struct sockguard *g, void *(*fn)(void *))
{
	sigset_t all, saved;
	pthread_attr_t at;
	pthread_t t;
	int rc;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, SOCKGUARD_STACK_BYTES);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	rc = pthread_create(&t, &at, fn, g);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	pthread_attr_destroy(&at);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

static void *sockguard_main(void *arg);

/* Before a pathname call is served: another thread should wait on the
 * listeners; one is started when none does. A thread busy with anything but
 * a connect() is back soon; false only when nearly every one is held in a
 * connect() (the call gets EAGAIN). Else J's listener is held for the call. */
static bool
sockguard_take_call(struct sockguard *g, struct sockguard_job *j)
{
	bool spawn = false;

	pthread_mutex_lock(&g->lock);
	if (atomic_load(&g->idle) == 0 && g->threads < SOCKGUARD_WORKERS_MAX) {
		g->threads++;
		spawn = true;
	} else if (atomic_load(&g->idle) == 0 &&
	    atomic_load(&g->in_connect) >= SOCKGUARD_WORKERS_MAX - 1) {
		pthread_mutex_unlock(&g->lock);
		return false;
	}
	j->l->refs++;
	pthread_mutex_unlock(&g->lock);
	/* A thread that cannot start: calls wait in the kernel for this one. */
	if (spawn && sockguard_thread(g, sockguard_main) == -1) {
		pthread_mutex_lock(&g->lock);
		g->threads--;
		pthread_mutex_unlock(&g->lock);
	}
	return true;
}

/* True when the address of LEN bytes is a Unix pathname. */
static bool
sockguard_is_pathname(const struct sockaddr_un *a, socklen_t len)
{
	return a->sun_family == AF_UNIX && len > SOCKGUARD_SUN_PATH_OFFSET &&
	    a->sun_path[0] != '\0';
}

/* Arms L for its next event. */
static void
sockguard_arm(struct sockguard *g, struct sockguard_listener *l, int op)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = l };

	(void)epoll_ctl(g->epfd, op, l->fd, &ev);
}

/* One notification of L: a non-Unix call goes on at once; a pathname call
 * is left in *J for the caller to serve (true). L is armed again. */
static bool
sockguard_receive(struct sockguard *g, struct sockguard_listener *l, struct sockguard_job *j)
{
	struct iovec local, remote;
	uint64_t len;
	int rc;

	memset(j, 0, sizeof(*j));
	j->l = l;
	rc = ioctl(l->fd, SECCOMP_IOCTL_NOTIF_RECV, &j->n);
	sockguard_arm(g, l, EPOLL_CTL_MOD);
	if (rc == -1)
		return false;   /* ENOENT: the caller went between the wake-up and here */
	if (j->n.data.nr != SYS_connect || j->n.data.arch != AUDIT_ARCH_X86_64) {
		sockguard_answer(l->fd, j->n.id, ENOSYS);
		return false;
	}
	len = j->n.data.args[2] & UINT32_MAX;   /* socklen_t: the low 32 bits */
	/* Longer than any Unix address: the kernel refuses or it is no Unix one. */
	if (len > sizeof(j->addr)) {
		sockguard_continue(l->fd, j->n.id);
		return false;
	}
	j->len = (socklen_t)len;
	local = (struct iovec){ &j->addr, len };
	remote = (struct iovec){ (void *)(uintptr_t)j->n.data.args[1], len };
	/* Unreadable (a non-dumpable process, a bad pointer) or no Unix
	 * pathname: the kernel decides, the guard refuses any pathname. */
	if (len == 0 || process_vm_readv((pid_t)j->n.pid, &local, 1, &remote, 1, 0) !=
	    (ssize_t)len || !sockguard_is_pathname(&j->addr, j->len)) {
		sockguard_continue(l->fd, j->n.id);
		return false;
	}
	if (sockguard_take_call(g, j))
		return true;
	sockguard_answer(l->fd, j->n.id, EAGAIN);
	return false;
}

/* Waits for one event of a listener and handles it; a pathname call is
 * left in *J (true). */
static bool
sockguard_wait(struct sockguard *g, struct sockguard_job *j)
{
	struct epoll_event ev;
	struct sockguard_listener *l;
	int n;

	atomic_fetch_add(&g->idle, 1);
	n = epoll_wait(g->epfd, &ev, 1, -1);
	atomic_fetch_sub(&g->idle, 1);
	if (n != 1)
		return false;
	l = ev.data.ptr;
	if (ev.events & EPOLLIN)
		return sockguard_receive(g, l, j);
	/* No process uses the filter any more. */
	epoll_ctl(g->epfd, EPOLL_CTL_DEL, l->fd, NULL);
	sockguard_unref(g, l);
	return false;
}

static void *
sockguard_main(void *arg)
{
	struct sockguard *g = arg;
	char *buf = malloc(SOCKGUARD_DIAG_BUF_BYTES);
	int diag = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	struct sockguard_job j;

	for (;;) {
		if (!sockguard_wait(g, &j))
			continue;
		/* Without memory or a diag socket only the fast checks decide. */
		sockguard_serve(g, &j, buf != NULL ? diag : -1, buf);
		sockguard_unref(g, j.l);
	}
	return NULL;
}

struct sockguard *
sockguard_new(const struct sockguard_config *cfg)
{
	struct sockguard *g = calloc(1, sizeof(*g));

	if (g == NULL)
		return NULL;
	g->cfg = *cfg;
	if ((g->epfd = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		free(g);
		return NULL;
	}
	pthread_mutex_init(&g->lock, NULL);
	atomic_init(&g->unreported, 0);
	atomic_init(&g->idle, 0);
	atomic_init(&g->in_connect, 0);
	return g;
}

/* The first thread, the first leader. */
static int
sockguard_start(struct sockguard *g)
{
	pthread_mutex_lock(&g->lock);
	g->threads = 1;
	pthread_mutex_unlock(&g->lock);
	if (sockguard_thread(g, sockguard_main) == 0)
		return 0;
	pthread_mutex_lock(&g->lock);
	g->threads = 0;
	pthread_mutex_unlock(&g->lock);
	return -1;
}

int
sockguard_add(struct sockguard *g, int fd)
{
	struct sockguard_listener *l = calloc(1, sizeof(*l));
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	int saved;

	if (l == NULL) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	l->fd = fd;
	l->refs = 1;
	ev.data.ptr = l;
	if (!g->started && sockguard_start(g) == -1)
		goto fail;
	g->started = true;
	if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &ev) == -1)
		goto fail;
	return 0;
fail:
	saved = errno;
	close(fd);
	free(l);
	errno = saved;
	return -1;
}
