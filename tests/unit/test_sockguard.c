/* Tests of corral-init's connect() supervisor (broker/init/sockguard.c)
 * with real processes: the test is the supervisor, a forked child the
 * workload under the workload filter (broker/init/seccomp.c). The "host"
 * sockets are bound before the test moves into a network namespace of its
 * own, the child's after, so sock_diag tells them apart as in a sandbox.
 * It needs root (a network namespace) and seccomp; without them it is
 * skipped, and under valgrind too (it does not know seccomp's calls). No
 * kernel guard is attached here: what it adds is tested by test_unixguard
 * and the end-to-end tests. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <net/if.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "broker/init/seccomp.h"
#include "broker/init/sockguard.h"
#include "common/initproto.h"
#include "common/seqmsg.h"
#include "common/sock.h"
#include "tests/unit/child-probe.h"

#define TEST_WAIT_MS 5000               /* for a child's answer or a report */
#define TEST_DIR_MAX_BYTES 64

struct test_env {
	char dir[TEST_DIR_MAX_BYTES];
	char host[TEST_DIR_MAX_BYTES * 2], listed[TEST_DIR_MAX_BYTES * 2];
	char own[TEST_DIR_MAX_BYTES * 2], link[TEST_DIR_MAX_BYTES * 2], file[TEST_DIR_MAX_BYTES * 2];
	int host_fd, listed_fd, tcp_fd;
	uint16_t tcp_port;
	int chan[2];                    /* reports: [0] read here, [1] the guard's */
	struct sockguard *g;
	struct seqmsg *m;
};

static struct test_env env = { .host_fd = -1, .listed_fd = -1, .tcp_fd = -1,
	.chan = { -1, -1 } };

/* What the workload child tries: 0 or its errno. */
typedef int (*test_attempt_fn)(void);

static int
test_listen_unix(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (s == -1 || bind(s, (struct sockaddr *)&a, sizeof(a)) == -1 || listen(s, 16) == -1)
		return -1;
	return s;
}

/* Brings up lo in the test's network namespace. */
static int
test_loopback(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;

	if (s != -1 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		rc = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	if (s != -1)
		close(s);
	return rc;
}

static int
test_tcp_listener(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	env.tcp_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (env.tcp_fd == -1 || bind(env.tcp_fd, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    listen(env.tcp_fd, 16) == -1 || getsockname(env.tcp_fd, (struct sockaddr *)&a, &len) == -1)
		return -1;
	env.tcp_port = ntohs(a.sin_port);
	return 0;
}

static int
test_group_setup(void **state)
{
	struct sockguard_config cfg = { .chan = -1 };
	struct stat st;
	int fd;

	snprintf(env.dir, sizeof(env.dir), "/tmp/corral-test-sockguard-%ld", (long)getpid());
	snprintf(env.host, sizeof(env.host), "%s/host.sock", env.dir);
	snprintf(env.listed, sizeof(env.listed), "%s/listed.sock", env.dir);
	snprintf(env.own, sizeof(env.own), "%s/own.sock", env.dir);
	snprintf(env.link, sizeof(env.link), "%s/link.sock", env.dir);
	snprintf(env.file, sizeof(env.file), "%s/file", env.dir);
	if (mkdir(env.dir, 0755) == -1 || (env.host_fd = test_listen_unix(env.host)) == -1 ||
	    (env.listed_fd = test_listen_unix(env.listed)) == -1 || symlink(env.host, env.link) == -1 ||
	    (fd = open(env.file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) == -1)
		return -1;
	close(fd);
	/* From here on the test is the sandbox: the sockets above are the host's. */
	if (unshare(CLONE_NEWNET) == -1 || test_loopback() == -1 || test_tcp_listener() == -1 ||
	    stat(env.listed, &st) == -1 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, env.chan) == -1)
		return -1;
	cfg.listed[0].dev = st.st_dev;
	cfg.listed[0].ino = st.st_ino;
	cfg.listed[0].name = "listed";
	cfg.n_listed = 1;
	cfg.chan = env.chan[1];
	env.m = malloc(sizeof(*env.m));
	env.g = sockguard_new(&cfg);
	return env.g == NULL || env.m == NULL ? -1 : 0;
}

static int
test_group_teardown(void **state)
{
	const char *files[] = { env.host, env.listed, env.own, env.link, env.file };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	rmdir(env.dir);
	free(env.m);
	/* The guard's threads live until the process ends. */
	return 0;
}

/* Sends FD over SOCK by SCM_RIGHTS. */
static int
test_send_fd(int sock, int fd)
{
	char byte = 'l';
	struct iovec iov = { &byte, 1 };

	return sock_send_fd(sock, &iov, 1, fd, 0) == 1 ? 0 : -1;
}

static int
test_recv_fd(int sock)
{
	struct pollfd p = { sock, POLLIN, 0 };
	char byte;
	struct iovec iov = { &byte, 1 };
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } ctl;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
	    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	int fd = -1;

	if (poll(&p, 1, TEST_WAIT_MS) != 1 || recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1 ||
	    (c = CMSG_FIRSTHDR(&mh)) == NULL)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* FN's result in a child under the supervised filter, this process its
 * supervisor. */
static int
test_run(test_attempt_fn fn)
{
	struct pollfd p;
	int sv[2], err = -1, listener = -1, status;
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		close(sv[0]);
		if (seccomp_apply_workload(&listener) == -1 || test_send_fd(sv[1], listener) == -1)
			_exit(1);
		close(listener);
		err = fn();
		_exit(write(sv[1], &err, sizeof(err)) == (ssize_t)sizeof(err) ? 0 : 1);
	}
	close(sv[1]);
	listener = test_recv_fd(sv[0]);
	assert_true(listener >= 0);
	assert_int_equal(sockguard_add(env.g, listener), 0);
	p = (struct pollfd){ sv[0], POLLIN, 0 };
	if (poll(&p, 1, TEST_WAIT_MS) != 1 || read(sv[0], &err, sizeof(err)) != sizeof(err))
		err = -1;
	close(sv[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return err;
}

/* The next report on the channel, decoded into U (its texts in env.m). */
static void
test_report(struct initproto_unix *u)
{
	struct pollfd p = { env.chan[0], POLLIN, 0 };

	assert_int_equal(poll(&p, 1, TEST_WAIT_MS), 1);
	assert_int_equal(seqmsg_recv(env.chan[0], env.m), 1);
	assert_int_equal(initproto_unix_decode(env.m, u), 0);
}

/* No report is waiting. */
static void
test_no_report(void)
{
	struct pollfd p = { env.chan[0], POLLIN, 0 };

	assert_int_equal(poll(&p, 1, 100), 0);
}

static int
test_result(long rc)
{
	return rc == -1 ? errno : 0;
}

static int
test_connect_unix(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	rc = test_result(connect(s, (struct sockaddr *)&a,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1)));
	close(s);
	return rc;
}

static int try_host(void) { return test_connect_unix(env.host); }
static int try_link(void) { return test_connect_unix(env.link); }
static int try_listed(void) { return test_connect_unix(env.listed); }
static int try_missing(void) { return test_connect_unix("/nonexistent/corral.sock"); }
static int try_file(void) { return test_connect_unix(env.file); }

static int
try_relative_host(void)
{
	if (chdir(env.dir) == -1)
		return 20000 + errno;
	return test_connect_unix("host.sock");
}

/* A listener of its own (in the sandbox's network namespace), anywhere. */
static int
try_own(void)
{
	int s, rc;

	unlink(env.own);
	if ((s = test_listen_unix(env.own)) == -1)
		return 20000 + errno;
	rc = test_connect_unix(env.own);
	close(s);
	return rc;
}

static int
try_tcp(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(env.tcp_port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	rc = test_result(connect(s, (struct sockaddr *)&a, sizeof(a)));
	close(s);
	return rc;
}

/* A Unix address on a TCP socket: the kernel's own answer (EINVAL or
 * EAFNOSUPPORT), not the supervisor's. */
static int
try_unix_address_on_tcp(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	memcpy(a.sun_path, env.host, strnlen(env.host, sizeof(a.sun_path) - 1));
	rc = test_result(connect(s, (struct sockaddr *)&a, sizeof(a)));
	close(s);
	return rc == EAFNOSUPPORT || rc == EINVAL ? 0 : 30000 + rc;
}

static int
try_bad_descriptor(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = "/x" };

	return test_result(connect(1000, (struct sockaddr *)&a, sizeof(a)));
}

#define TEST_THREADS 8                  /* connecting at once in one workload */
#define TEST_CONNECTS 100               /* each, to its own socket and to the host's */

static void *
test_hammer(void *arg)
{
	long bad = 0;

	(void)arg;
	for (int i = 0; i < TEST_CONNECTS; i++) {
		bad += test_connect_unix(env.own) != 0;
		bad += test_connect_unix(env.host) != EACCES;
	}
	return (void *)bad;
}

static void *
test_accept_all(void *arg)
{
	int s = *(int *)arg, c;

	while ((c = accept(s, NULL, NULL)) >= 0)
		close(c);
	return NULL;
}

/* Many calls at once: the supervisor's threads share them, each answered. */
static int
try_many_at_once(void)
{
	pthread_t t[TEST_THREADS], acceptor;
	long bad = 0;
	void *r;
	static int s;

	unlink(env.own);
	if ((s = test_listen_unix(env.own)) == -1 ||
	    pthread_create(&acceptor, NULL, test_accept_all, &s) != 0)
		return 20000 + errno;
	for (int i = 0; i < TEST_THREADS; i++)
		if (pthread_create(&t[i], NULL, test_hammer, NULL) != 0)
			return 20001;
	for (int i = 0; i < TEST_THREADS; i++) {
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	return bad == 0 ? 0 : 30000 + (int)bad;
}

static void
need_trial(void)
{
	if (child_probe_under_valgrind())
		skip();
}

static void
test_host_socket_is_refused_and_reported(void **s)
{
	struct initproto_unix u;

	need_trial();
	assert_int_equal(test_run(try_host), EACCES);
	test_report(&u);
	assert_int_equal(u.decision, INITPROTO_UNIX_DENY);
	assert_string_equal(u.path, env.host);
	assert_string_equal(u.listed, "");
	assert_non_null(strstr(u.binary, "test_sockguard"));
	assert_true(u.pidfd >= 0);
	close(u.pidfd);
}

static void
test_symlink_to_a_host_socket_is_refused(void **s)
{
	struct initproto_unix u;

	need_trial();
	assert_int_equal(test_run(try_link), EACCES);
	test_report(&u);
	assert_string_equal(u.path, env.link);
	if (u.pidfd >= 0)
		close(u.pidfd);
}

static void
test_relative_path_is_read_from_the_callers_folder(void **s)
{
	struct initproto_unix u;

	need_trial();
	assert_int_equal(test_run(try_relative_host), EACCES);
	test_report(&u);
	/* Reported made absolute, with the caller's folder. */
	assert_string_equal(u.path, env.host);
	if (u.pidfd >= 0)
		close(u.pidfd);
}

static void
test_listed_socket_connects_and_is_reported(void **s)
{
	struct initproto_unix u;

	need_trial();
	assert_int_equal(test_run(try_listed), 0);
	test_report(&u);
	assert_int_equal(u.decision, INITPROTO_UNIX_ALLOW);
	assert_string_equal(u.listed, "listed");
	if (u.pidfd >= 0)
		close(u.pidfd);
}

static void
test_own_socket_connects_unreported(void **s)
{
	need_trial();
	assert_int_equal(test_run(try_own), 0);
	test_no_report();
}

static void
test_tcp_goes_on_in_the_kernel(void **s)
{
	need_trial();
	assert_int_equal(test_run(try_tcp), 0);
	test_no_report();
}

static void test_unix_address_on_a_tcp_socket_is_the_kernels(void **s) { need_trial(); assert_int_equal(test_run(try_unix_address_on_tcp), 0); }
static void test_missing_path_says_enoent(void **s) { need_trial(); assert_int_equal(test_run(try_missing), ENOENT); }
static void test_a_file_that_is_no_socket_says_econnrefused(void **s) { need_trial(); assert_int_equal(test_run(try_file), ECONNREFUSED); }
static void test_a_bad_descriptor_says_ebadf(void **s) { need_trial(); assert_int_equal(test_run(try_bad_descriptor), EBADF); }

/* Last: its refusals are reported at most SOCKGUARD_REPORTS_PER_S a
 * second; what came is read out, the rest counted in the next report. */
static void
test_many_calls_at_once_are_each_answered(void **s)
{
	struct initproto_unix u;
	struct pollfd p = { env.chan[0], POLLIN, 0 };
	int reports = 0;

	need_trial();
	assert_int_equal(test_run(try_many_at_once), 0);
	while (poll(&p, 1, 100) == 1 && seqmsg_recv(env.chan[0], env.m) == 1) {
		assert_int_equal(initproto_unix_decode(env.m, &u), 0);
		if (u.pidfd >= 0)
			close(u.pidfd);
		reports++;
	}
	assert_true(reports > 0 && reports <= SOCKGUARD_REPORTS_PER_S * 2);
}

static const char *
test_cannot_run(void)
{
	if (geteuid() != 0)
		return "needs root (a network namespace of its own)";
	if (seccomp_unavailable() != NULL)
		return "needs seccomp";
	return NULL;
}

int
main(void)
{
	const char *why = test_cannot_run();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_socket_is_refused_and_reported),
		cmocka_unit_test(test_symlink_to_a_host_socket_is_refused),
		cmocka_unit_test(test_relative_path_is_read_from_the_callers_folder),
		cmocka_unit_test(test_listed_socket_connects_and_is_reported),
		cmocka_unit_test(test_own_socket_connects_unreported),
		cmocka_unit_test(test_tcp_goes_on_in_the_kernel),
		cmocka_unit_test(test_unix_address_on_a_tcp_socket_is_the_kernels),
		cmocka_unit_test(test_missing_path_says_enoent),
		cmocka_unit_test(test_a_file_that_is_no_socket_says_econnrefused),
		cmocka_unit_test(test_a_bad_descriptor_says_ebadf),
		cmocka_unit_test(test_many_calls_at_once_are_each_answered),
	};

	if (why != NULL) {
		printf("1..0 # SKIP %s\n", why);
		return 0;
	}
	return cmocka_run_group_tests(tests, test_group_setup, test_group_teardown);
}
