/* Tests of the Unix socket guard (broker/monitor/unixguard.bpf.c, loaded
 * by bpfload.c): real processes in a real cgroup v2 connect to and send to
 * pathname sockets the test made outside it. They need root, a cgroup v2
 * hierarchy and a kernel with the connect_unix hooks (Linux 6.7); without
 * them the whole program is skipped (a TAP "1..0 # SKIP"). Each run makes
 * the cgroup corral-test-unixguard-<pid> and the folder
 * /tmp/corral-test-unixguard-<pid>, and removes both at the end. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include <cmocka.h>

#include "broker/monitor/bpfload.h"

#define TEST_WAIT_MS 5000               /* for a child's answer */
#define TEST_ABSTRACT_NAME "corral-test-unixguard"

#define TEST_DIR_MAX_BYTES 64           /* /tmp/corral-test-unixguard-<pid> */

struct test_env {
	char cgroup[PATH_MAX];
	char dir[TEST_DIR_MAX_BYTES];
	char host_path[PATH_MAX];       /* a stream listener of the host */
	char dgram_path[PATH_MAX];      /* a datagram socket of the host */
	char listed_path[PATH_MAX];     /* a stream listener the guard lists */
	int cgroup_fd;
	int host, dgram, listed, abstract;
	struct bpfload_unix *u;
};

static struct test_env env = { .cgroup_fd = -1, .host = -1, .dgram = -1, .listed = -1,
	.abstract = -1 };

/* What a child tries: 0, or its errno. */
typedef int (*test_attempt_fn)(void);

static const char *
test_cgroup2_root(void)
{
	static const char *const candidates[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct statfs sf;

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (statfs(candidates[i], &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
			return candidates[i];
	return NULL;
}

/* The address of PATH, or of the abstract NAME when PATH is NULL; its length in *LEN. */
static struct sockaddr_un
test_addr(const char *path, socklen_t *len)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	if (path != NULL) {
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
	} else {
		memcpy(a.sun_path + 1, TEST_ABSTRACT_NAME, strlen(TEST_ABSTRACT_NAME));
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
		    strlen(TEST_ABSTRACT_NAME));
	}
	return a;
}

/* A socket of TYPE bound at PATH (NULL: the abstract name), listening
 * unless a datagram socket. */
static int
test_bind(const char *path, int type)
{
	socklen_t len;
	struct sockaddr_un a = test_addr(path, &len);
	int s = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	if (s == -1 || bind(s, (struct sockaddr *)&a, len) == -1 ||
	    (type != SOCK_DGRAM && listen(s, 16) == -1)) {
		if (s != -1)
			close(s);
		return -1;
	}
	return s;
}

static int
test_group_setup(void **state)
{
	const char *root = test_cgroup2_root();

	snprintf(env.cgroup, sizeof(env.cgroup), "%s/corral-test-unixguard-%ld", root,
	    (long)getpid());
	snprintf(env.dir, sizeof(env.dir), "/tmp/corral-test-unixguard-%ld", (long)getpid());
	snprintf(env.host_path, sizeof(env.host_path), "%s/host.sock", env.dir);
	snprintf(env.dgram_path, sizeof(env.dgram_path), "%s/dgram.sock", env.dir);
	snprintf(env.listed_path, sizeof(env.listed_path), "%s/listed.sock", env.dir);
	if (mkdir(env.cgroup, 0755) != 0 || mkdir(env.dir, 0755) != 0)
		return -1;
	env.cgroup_fd = open(env.cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	env.host = test_bind(env.host_path, SOCK_STREAM);
	env.dgram = test_bind(env.dgram_path, SOCK_DGRAM);
	env.listed = test_bind(env.listed_path, SOCK_STREAM);
	env.abstract = test_bind(NULL, SOCK_STREAM);
	env.u = bpfload_unix_open();
	if (env.cgroup_fd == -1 || env.host == -1 || env.dgram == -1 || env.listed == -1 ||
	    env.abstract == -1 || env.u == NULL)
		return -1;
	return 0;
}

static int
test_group_teardown(void **state)
{
	int fds[] = { env.cgroup_fd, env.host, env.dgram, env.listed, env.abstract };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] != -1)
			close(fds[i]);
	bpfload_unix_close(env.u);
	unlink(env.host_path);
	unlink(env.dgram_path);
	unlink(env.listed_path);
	rmdir(env.dir);
	for (int tries = 0; tries < 100 && rmdir(env.cgroup) == -1 && errno == EBUSY; tries++)
		usleep(10000);
	return 0;
}

/* Moves the calling process into the test cgroup. */
static int
test_join(void)
{
	char path[PATH_MAX + 16];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", env.cgroup);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	ok = write(fd, "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* A child: joins the cgroup when IN_CGROUP, waits for the go on GO (so the
 * parent can name it as supervisor first), runs FN; its result back on
 * REPORT. *PID for the parent. */
static void
test_fork(test_attempt_fn fn, bool in_cgroup, int *go, int *report, pid_t *pid)
{
	int g[2], r[2], err;
	char c;

	assert_int_equal(pipe2(g, O_CLOEXEC), 0);
	assert_int_equal(pipe2(r, O_CLOEXEC), 0);
	*pid = fork();
	assert_true(*pid != -1);
	if (*pid == 0) {
		err = in_cgroup && test_join() == -1 ? 10000 + errno : 0;
		if (read(g[0], &c, 1) != 1)
			_exit(1);
		if (err == 0)
			err = fn();
		_exit(write(r[1], &err, sizeof(err)) == (ssize_t)sizeof(err) ? 0 : 1);
	}
	close(g[0]);
	close(r[1]);
	*go = g[1];
	*report = r[0];
}

/* Lets the child go and takes its result; -1 when none came in time. */
static int
test_finish(pid_t pid, int go, int report)
{
	struct pollfd p = { report, POLLIN, 0 };
	int err = -1;

	if (write(go, "g", 1) != 1 || poll(&p, 1, TEST_WAIT_MS) != 1 ||
	    read(report, &err, sizeof(err)) != (ssize_t)sizeof(err))
		err = -1;
	close(go);
	close(report);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return err;
}

/* FN's result in a child, in the cgroup when IN_CGROUP, with the guard on
 * (listing the listed path) and its supervisor another process. */
static int
test_run(test_attempt_fn fn, bool in_cgroup)
{
	const char *paths[] = { env.listed_path };
	struct bpfload_unix_guard *g;
	int go, report, err;
	pid_t pid;

	g = bpfload_unix_attach(env.u, env.cgroup_fd, getpid(), paths, 1);
	assert_non_null(g);
	test_fork(fn, in_cgroup, &go, &report, &pid);
	err = test_finish(pid, go, report);
	bpfload_unix_detach(g);
	return err;
}

/* 0 when RC is not -1, else errno. */
static int
test_result(long rc)
{
	return rc == -1 ? errno : 0;
}

/* connect() of a socket of TYPE to PATH (NULL: the abstract name). */
static int
test_connect(const char *path, int type)
{
	socklen_t len;
	struct sockaddr_un a = test_addr(path, &len);
	int s = socket(AF_UNIX, type | SOCK_CLOEXEC, 0), rc;

	rc = test_result(connect(s, (struct sockaddr *)&a, len));
	close(s);
	return rc;
}

static int try_host_stream(void) { return test_connect(env.host_path, SOCK_STREAM); }
static int try_host_seqpacket(void) { return test_connect(env.host_path, SOCK_SEQPACKET); }
static int try_host_dgram_connect(void) { return test_connect(env.dgram_path, SOCK_DGRAM); }
static int try_listed(void) { return test_connect(env.listed_path, SOCK_STREAM); }
static int try_abstract(void) { return test_connect(NULL, SOCK_STREAM); }

static int
try_host_sendto(void)
{
	socklen_t len;
	struct sockaddr_un a = test_addr(env.dgram_path, &len);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	rc = test_result(sendto(s, "x", 1, 0, (struct sockaddr *)&a, len));
	close(s);
	return rc;
}

static int
try_host_sendmsg(void)
{
	socklen_t len;
	struct sockaddr_un a = test_addr(env.dgram_path, &len);
	struct iovec iov = { (void *)(uintptr_t)"x", 1 };
	struct msghdr mh = { .msg_name = &a, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1 };
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	rc = test_result(sendmsg(s, &mh, 0));
	close(s);
	return rc;
}

static int
try_socketpair(void)
{
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == -1)
		return errno;
	rc = test_result(send(sv[0], "x", 1, 0));
	close(sv[0]);
	close(sv[1]);
	return rc;
}

static void test_host_stream_connect_is_refused(void **s) { assert_int_equal(test_run(try_host_stream, true), EPERM); }
static void test_host_seqpacket_connect_is_refused(void **s) { assert_int_equal(test_run(try_host_seqpacket, true), EPERM); }
static void test_host_datagram_connect_is_refused(void **s) { assert_int_equal(test_run(try_host_dgram_connect, true), EPERM); }
static void test_host_sendto_is_refused(void **s) { assert_int_equal(test_run(try_host_sendto, true), EPERM); }
static void test_host_sendmsg_is_refused(void **s) { assert_int_equal(test_run(try_host_sendmsg, true), EPERM); }
static void test_listed_path_connects(void **s) { assert_int_equal(test_run(try_listed, true), 0); }
static void test_abstract_name_connects(void **s) { assert_int_equal(test_run(try_abstract, true), 0); }
static void test_socketpair_sends(void **s) { assert_int_equal(test_run(try_socketpair, true), 0); }
static void test_outside_the_cgroup_nothing_is_refused(void **s) { assert_int_equal(test_run(try_host_stream, false), 0); }

/* The supervisor's own calls go through: the child is named as it. */
static void
test_the_supervisor_connects(void **s)
{
	struct bpfload_unix_guard *g;
	int go, report;
	pid_t pid;

	test_fork(try_host_stream, true, &go, &report, &pid);
	g = bpfload_unix_attach(env.u, env.cgroup_fd, pid, NULL, 0);
	assert_non_null(g);
	assert_int_equal(test_finish(pid, go, report), 0);
	bpfload_unix_detach(g);
}

/* Taken off, the guard leaves nothing: connects work, a new one attaches. */
static void
test_detach_leaves_nothing(void **s)
{
	struct bpfload_unix_guard *g;
	int go, report;
	pid_t pid;

	assert_int_equal(test_run(try_host_stream, true), EPERM);
	test_fork(try_host_stream, true, &go, &report, &pid);
	assert_int_equal(test_finish(pid, go, report), 0);
	g = bpfload_unix_attach(env.u, env.cgroup_fd, getpid(), NULL, 0);
	assert_non_null(g);
	bpfload_unix_detach(g);
}

/* One guard per cgroup; a second attach fails and spoils nothing. */
static void
test_second_guard_on_a_cgroup_fails(void **s)
{
	struct bpfload_unix_guard *g, *h;
	int go, report;
	pid_t pid;

	test_fork(try_host_stream, true, &go, &report, &pid);
	g = bpfload_unix_attach(env.u, env.cgroup_fd, pid, NULL, 0);
	assert_non_null(g);
	h = bpfload_unix_attach(env.u, env.cgroup_fd, getpid(), NULL, 0);
	assert_null(h);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(test_finish(pid, go, report), 0);
	bpfload_unix_detach(g);
}

static void
test_long_listed_path_is_refused(void **s)
{
	char path[BPFLOAD_UNIX_LISTED_MAX_BYTES + 2];
	const char *paths[] = { path };

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_null(bpfload_unix_attach(env.u, env.cgroup_fd, getpid(), paths, 1));
	assert_int_equal(errno, ENAMETOOLONG);
	/* Nothing of it stayed: a good attach follows. */
	bpfload_unix_detach(bpfload_unix_attach(env.u, env.cgroup_fd, getpid(), NULL, 0));
}

static const char *
test_cannot_run(void)
{
	struct bpfload_unix *u;

	if (geteuid() != 0)
		return "needs root";
	if (test_cgroup2_root() == NULL)
		return "needs a cgroup v2 hierarchy";
	if ((u = bpfload_unix_open()) == NULL)
		return "this kernel has no connect_unix hook (Linux 6.7) or refuses the program";
	bpfload_unix_close(u);
	return NULL;
}

int
main(void)
{
	const char *why = test_cannot_run();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_stream_connect_is_refused),
		cmocka_unit_test(test_host_seqpacket_connect_is_refused),
		cmocka_unit_test(test_host_datagram_connect_is_refused),
		cmocka_unit_test(test_host_sendto_is_refused),
		cmocka_unit_test(test_host_sendmsg_is_refused),
		cmocka_unit_test(test_listed_path_connects),
		cmocka_unit_test(test_abstract_name_connects),
		cmocka_unit_test(test_socketpair_sends),
		cmocka_unit_test(test_outside_the_cgroup_nothing_is_refused),
		cmocka_unit_test(test_the_supervisor_connects),
		cmocka_unit_test(test_detach_leaves_nothing),
		cmocka_unit_test(test_second_guard_on_a_cgroup_fails),
		cmocka_unit_test(test_long_listed_path_is_refused),
	};

	if (why != NULL) {
		printf("1..0 # SKIP %s\n", why);
		return 0;
	}
	return cmocka_run_group_tests(tests, test_group_setup, test_group_teardown);
}
