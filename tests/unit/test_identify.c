/* Tests of egress-proxy/identify: the BPF program attached to a real
 * cgroup v2, real processes connecting from it, and the answers of
 * identify_lookup. They need root, a cgroup v2 hierarchy and a kernel that
 * lets root load BPF; without them the whole program is skipped (a TAP
 * "1..0 # SKIP", since automake counts cmocka's "not ok # SKIP" as FAIL). Each run makes the cgroup
 * corral-test-identify-<pid> and removes it at the end, failures included. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/magic.h>
#include <netinet/in.h>

#include <bpf/bpf.h>
#include <cmocka.h>

#include "broker/monitor/bpfload.h"
#include "common/sock.h"
#include "egress-proxy/exetrust.h"
#include "egress-proxy/identify.h"

#define TEST_KIDS_MAX 16
#define TEST_TIMEOUT_MS 5000            /* for a child to connect or answer */
#define TEST_LINE_MAX_BYTES 64
#define TEST_CHAIN_DEPTH 20             /* shells nested under the connecting python */
#define TEST_NOBODY 65534
#define TEST_PYTHON "/usr/bin/python3"
#define TEST_SH "/bin/sh"

/* execve takes char *const argv[]: the words it gets, as mutable arrays. */
static char arg_python[] = TEST_PYTHON;
static char arg_sh[] = TEST_SH;
static char arg_c[] = "-c";
static char arg_v4[] = "127.0.0.1";
static char arg_v6[] = "::1";
static char mode_wait[] = "wait";
static char mode_exit[] = "exit";
static char mode_exec[] = "exec";

/* Connects to argv[1]:argv[2], sends its pid, then per argv[3]: "wait"
 * for the test to close, "exit" at once, "exec" into sleep (the pid and
 * start time stay, the executable changes). */
static char test_client_py[] =
    "import os, socket, sys\n"
    "s = socket.create_connection((sys.argv[1], int(sys.argv[2])))\n"
    "s.sendall(b'%d\\n' % os.getpid())\n"
    "if sys.argv[3] == 'exec': os.execv('/bin/sleep', ['sleep', '30'])\n"
    "if sys.argv[3] == 'wait': s.recv(1)\n";

/* Runs python under one shell that stays its parent. */
static char test_sh_script[] = TEST_PYTHON " -c \"$0\" \"$@\"; exit $?";

/* Each shell starts the next until D reaches 0, then runs python. */
static char test_chain_script[] =
    "D=$((D-1)); if [ $D -gt 0 ]; then " TEST_SH " -c \"$S\" \"$0\" \"$@\"; "
    "else " TEST_PYTHON " -c \"$0\" \"$@\"; fi; exit $?";

/* The identify.bpf.c record layout, for forging records in the map. */
struct test_record {
	uint32_t tgid;
	uint32_t tid;
	uint64_t start_boottime_ns;
	uint64_t exe_ino;
	uint32_t exe_dev;
	uint32_t n_ancestors;
	struct {
		uint32_t tgid;
		uint32_t exe_dev;
		uint64_t exe_ino;
	} ancestors[IDENTIFY_ANCESTORS_MAX];
};

struct test_env {
	char cgroup[PATH_MAX];
	int cgroup_fd;
	struct bpfload *bpf;
	struct bpfload_attachment *attachment;
	int diag_fd;
	int listen4, listen6;
	char port4[8], port6[8];
	pid_t kids[TEST_KIDS_MAX];
	size_t n_kids;
};

static struct test_env env = { .cgroup_fd = -1, .diag_fd = -1, .listen4 = -1, .listen6 = -1 };

/* The cgroup v2 mount: /sys/fs/cgroup on a pure v2 host, its unified
 * folder on a hybrid one; NULL when there is none. */
static const char *
test_cgroup2_root(void)
{
	static const char *const candidates[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct statfs sf;
	size_t i;

	for (i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (statfs(candidates[i], &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
			return candidates[i];
	return NULL;
}

/* A listening TCP socket on the loopback address of FAMILY; its port as text. */
static int
test_listen(int family, char port[8])
{
	struct sockaddr_storage ss = { .ss_family = (sa_family_t)family };
	socklen_t len = sizeof(ss);
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	if (fd == -1 || bind(fd, (struct sockaddr *)&ss, sizeof(ss)) != 0 || listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	snprintf(port, 8, "%u", ntohs(((struct sockaddr_in *)&ss)->sin_port));
	return fd;
}

static int
test_group_setup(void **state)
{
	const char *root = test_cgroup2_root();

	if (root == NULL)
		return -1;
	snprintf(env.cgroup, sizeof(env.cgroup), "%s/corral-test-identify-%ld", root, (long)getpid());
	if (mkdir(env.cgroup, 0755) != 0)
		return -1;
	env.cgroup_fd = open(env.cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (env.cgroup_fd == -1 || (env.bpf = bpfload_open()) == NULL ||
	    (env.attachment = bpfload_attach(env.bpf, env.cgroup_fd)) == NULL)
		return -1;
	env.diag_fd = sock_diag_open();
	env.listen4 = test_listen(AF_INET, env.port4);
	env.listen6 = test_listen(AF_INET6, env.port6);
	if (env.diag_fd == -1 || env.listen4 == -1 || env.listen6 == -1)
		return -1;
	return 0;
}

/* Kills and reaps every child still running. */
static void
test_reap_kids(void)
{
	size_t i;

	for (i = 0; i < env.n_kids; i++) {
		kill(env.kids[i], SIGKILL);
		waitpid(env.kids[i], NULL, 0);
	}
	env.n_kids = 0;
}

/* Kills every process in the test cgroup, orphans of a failed test included. */
static void
test_kill_cgroup(void)
{
	char path[PATH_MAX + 16];
	int fd;

	if (env.cgroup[0] == '\0')
		return;
	snprintf(path, sizeof(path), "%s/cgroup.kill", env.cgroup);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd == -1)
		return;
	if (write(fd, "1", 1) != 1)
		fprintf(stderr, "# could not kill %s: %s\n", env.cgroup, strerror(errno));
	close(fd);
}

/* Removes the test cgroup once its last process is gone. */
static void
test_remove_cgroup(void)
{
	int tries;

	if (env.cgroup[0] == '\0')
		return;
	for (tries = 0; tries < 100; tries++) {
		if (rmdir(env.cgroup) == 0 || errno == ENOENT)
			return;
		usleep(10000);
	}
	fprintf(stderr, "# could not remove %s: %s\n", env.cgroup, strerror(errno));
}

/* After each test, passed or failed: nothing it started survives. */
static int
test_teardown(void **state)
{
	test_kill_cgroup();
	test_reap_kids();
	return 0;
}

static int
test_group_teardown(void **state)
{
	test_kill_cgroup();
	test_reap_kids();
	bpfload_detach(env.attachment);
	bpfload_close(env.bpf);
	if (env.cgroup_fd != -1)
		close(env.cgroup_fd);
	if (env.diag_fd != -1)
		close(env.diag_fd);
	if (env.listen4 != -1)
		close(env.listen4);
	if (env.listen6 != -1)
		close(env.listen6);
	test_remove_cgroup();
	return 0;
}

/* Moves the calling process into the test cgroup. */
static int
test_join_cgroup(void)
{
	char path[PATH_MAX + 16];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", env.cgroup);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	ok = write(fd, "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* Starts ARGV with ENVP in a child, inside the cgroup when IN_CGROUP, as
 * UID when it is not 0; returns its pid. */
static pid_t
test_spawn(char *const argv[], char *const envp[], bool in_cgroup, uid_t uid)
{
	pid_t pid = fork();

	assert_true(pid != -1);
	if (pid == 0) {
		if (in_cgroup && test_join_cgroup() != 0)
			_exit(126);
		if (uid != 0 && (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0))
			_exit(126);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	assert_true(env.n_kids < TEST_KIDS_MAX);
	env.kids[env.n_kids++] = pid;
	return pid;
}

/* Starts the python client directly: FAMILY picks the listener. */
static pid_t
test_spawn_python(int family, char *mode, bool in_cgroup, uid_t uid)
{
	char *argv[] = { arg_python, arg_c, test_client_py, family == AF_INET ? arg_v4 : arg_v6,
		family == AF_INET ? env.port4 : env.port6, mode, NULL };
	char *envp[] = { NULL };

	return test_spawn(argv, envp, in_cgroup, uid);
}

/* Starts the python client under one /bin/sh; returns the shell's pid. */
static pid_t
test_spawn_sh_python(char *mode)
{
	char *argv[] = { arg_sh, arg_c, test_sh_script, test_client_py, arg_v4, env.port4, mode,
		NULL };
	char *envp[] = { NULL };

	return test_spawn(argv, envp, true, 0);
}

/* Accepts one connection from LFD, waiting at most TEST_TIMEOUT_MS. */
static int
test_accept(int lfd)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int fd;

	assert_int_equal(poll(&p, 1, TEST_TIMEOUT_MS), 1);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(fd != -1);
	return fd;
}

/* Reads the pid line the python client sends first. */
static pid_t
test_read_pid(int fd)
{
	char line[TEST_LINE_MAX_BYTES];
	size_t used = 0;
	ssize_t n;

	while (used < sizeof(line) - 1 && memchr(line, '\n', used) == NULL) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		assert_int_equal(poll(&p, 1, TEST_TIMEOUT_MS), 1);
		n = read(fd, line + used, sizeof(line) - 1 - used);
		assert_true(n > 0);
		used += (size_t)n;
	}
	line[used] = '\0';
	return (pid_t)atol(line);
}

/* The client's view of the accepted connection FD. */
static void
test_tuple_of(int fd, struct identify_tuple *t)
{
	socklen_t len = sizeof(t->local);

	memset(t, 0, sizeof(*t));
	assert_int_equal(getpeername(fd, (struct sockaddr *)&t->local, &len), 0);
	len = sizeof(t->remote);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&t->remote, &len), 0);
}

static enum identify_err
test_lookup_trusting(int fd, pid_t boundary, const struct exetrust *trust,
    struct identify_owner *out)
{
	struct identify_boundary b = { .n = 1, .pids = { boundary } };
	struct identify_tuple t;

	test_tuple_of(fd, &t);
	return identify_lookup(env.diag_fd, bpfload_map_fd(env.bpf), &t, &b, trust, out);
}

static enum identify_err
test_lookup(int fd, pid_t boundary, struct identify_owner *out)
{
	return test_lookup_trusting(fd, boundary, NULL, out);
}

static void
test_assert_exe(const char *got, const char *link)
{
	char want[PATH_MAX];

	assert_non_null(realpath(link, want));
	assert_string_equal(got, want);
}

static void
test_identifies_the_process_that_connected(void **state)
{
	static struct identify_owner o;
	struct stat st;
	pid_t sh, py;
	int fd;

	sh = test_spawn_sh_python(mode_wait);
	fd = test_accept(env.listen4);
	py = test_read_pid(fd);
	assert_int_equal(test_lookup(fd, getpid(), &o), IDENTIFY_OK);
	assert_int_equal(o.pid, py);
	assert_int_equal(o.tid, py);
	assert_true(o.start_time > 0);
	test_assert_exe(o.exe, TEST_PYTHON);
	assert_int_equal(stat(TEST_PYTHON, &st), 0);
	assert_true(o.exe_dev == st.st_dev && o.exe_ino == st.st_ino);
	assert_int_equal(o.n_ancestors, 1);
	assert_int_equal(o.ancestor_pids[0], sh);
	test_assert_exe(o.ancestors[0], TEST_SH);
	assert_false(o.ancestors_truncated);
	close(fd);
}

/* The mount id statx gives for PATH. */
static uint32_t
test_mount_of(const char *path)
{
	struct statx sx;

	assert_int_equal(statx(AT_FDCWD, path, 0, STATX_MNT_ID, &sx), 0);
	assert_true(sx.stx_mask & STATX_MNT_ID);
	return (uint32_t)sx.stx_mnt_id;
}

static void
test_trust_marks_what_the_user_could_write(void **state)
{
	static struct identify_owner o;
	struct exetrust trusted = { .n = 1 }, elsewhere = { .n = 0 };
	int fd;

	trusted.mounts[0] = test_mount_of(TEST_PYTHON);
	test_spawn_sh_python(mode_wait);
	fd = test_accept(env.listen4);
	test_read_pid(fd);
	assert_int_equal(test_lookup_trusting(fd, getpid(), &trusted, &o), IDENTIFY_OK);
	assert_false(o.exe_writable);
	assert_int_equal(o.n_ancestors, 1);
	assert_int_equal(o.ancestor_writable[0], test_mount_of(TEST_SH) != trusted.mounts[0]);
	assert_int_equal(test_lookup_trusting(fd, getpid(), &elsewhere, &o), IDENTIFY_OK);
	assert_true(o.exe_writable && o.ancestor_writable[0]);
	assert_int_equal(test_lookup(fd, getpid(), &o), IDENTIFY_OK);
	assert_false(o.exe_writable || o.ancestor_writable[0]);
	close(fd);
}

static void
test_ancestors_stop_before_the_boundary(void **state)
{
	static struct identify_owner o;
	pid_t sh;
	int fd;

	sh = test_spawn_sh_python(mode_wait);
	fd = test_accept(env.listen4);
	test_read_pid(fd);
	assert_int_equal(test_lookup(fd, sh, &o), IDENTIFY_OK);
	assert_int_equal(o.n_ancestors, 0);
	assert_false(o.ancestors_truncated);
	close(fd);
}

static void
test_ancestors_stop_at_the_cap(void **state)
{
	static struct identify_owner o;
	char depth[16], script[sizeof(test_chain_script) + 2];
	char *argv[] = { arg_sh, arg_c, test_chain_script, test_client_py, arg_v4, env.port4,
		mode_wait, NULL };
	char *envp[] = { depth, script, NULL };
	size_t i;
	int fd;

	snprintf(depth, sizeof(depth), "D=%d", TEST_CHAIN_DEPTH);
	snprintf(script, sizeof(script), "S=%s", test_chain_script);
	test_spawn(argv, envp, true, 0);
	fd = test_accept(env.listen4);
	test_read_pid(fd);
	assert_int_equal(test_lookup(fd, getpid(), &o), IDENTIFY_OK);
	assert_int_equal(o.n_ancestors, IDENTIFY_ANCESTORS_MAX);
	assert_true(o.ancestors_truncated);
	for (i = 0; i < o.n_ancestors; i++)
		test_assert_exe(o.ancestors[i], TEST_SH);
	close(fd);
}

static void
test_ipv6_connection_is_identified(void **state)
{
	static struct identify_owner o;
	pid_t py;
	int fd;

	py = test_spawn_python(AF_INET6, mode_wait, true, 0);
	fd = test_accept(env.listen6);
	assert_int_equal(test_read_pid(fd), py);
	assert_int_equal(test_lookup(fd, getpid(), &o), IDENTIFY_OK);
	assert_int_equal(o.pid, py);
	test_assert_exe(o.exe, TEST_PYTHON);
	close(fd);
}

static void
test_connection_from_outside_the_cgroup_has_no_record(void **state)
{
	static struct identify_owner o;
	int fd;

	test_spawn_python(AF_INET, mode_wait, false, 0);
	fd = test_accept(env.listen4);
	test_read_pid(fd);
	assert_int_equal(test_lookup(fd, getpid(), &o), IDENTIFY_ERR_NO_RECORD);
	close(fd);
}

static void
test_unknown_tuple_has_no_socket(void **state)
{
	static struct identify_owner o;
	struct identify_tuple t;
	struct sockaddr_in *l = (struct sockaddr_in *)&t.local;
	struct sockaddr_in *r = (struct sockaddr_in *)&t.remote;

	memset(&t, 0, sizeof(t));
	l->sin_family = r->sin_family = AF_INET;
	l->sin_addr.s_addr = r->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l->sin_port = htons(1);
	r->sin_port = htons((uint16_t)atoi(env.port4));
	assert_int_equal(identify_lookup(env.diag_fd, bpfload_map_fd(env.bpf), &t, NULL, NULL, &o),
	    IDENTIFY_ERR_NO_SOCKET);
}

/* The listener shares the client's local address family and port space:
 * asking for the listener's own address must not answer with it. */
static void
test_listener_is_not_taken_for_a_client(void **state)
{
	static struct identify_owner o;
	struct identify_tuple t;
	struct sockaddr_in *l = (struct sockaddr_in *)&t.local;
	struct sockaddr_in *r = (struct sockaddr_in *)&t.remote;

	memset(&t, 0, sizeof(t));
	l->sin_family = r->sin_family = AF_INET;
	l->sin_addr.s_addr = r->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l->sin_port = htons((uint16_t)atoi(env.port4));
	r->sin_port = htons(2);
	assert_int_equal(identify_lookup(env.diag_fd, bpfload_map_fd(env.bpf), &t, NULL, NULL, &o),
	    IDENTIFY_ERR_NO_SOCKET);
}

static void
test_exited_process_is_gone(void **state)
{
	static struct identify_owner o;
	pid_t py;
	int fd;

	py = test_spawn_python(AF_INET, mode_exit, true, 0);
	fd = test_accept(env.listen4);
	test_read_pid(fd);
	assert_int_equal(waitpid(py, NULL, 0), py);
	env.n_kids = 0;
	assert_int_equal(test_lookup(fd, getpid(), &o), IDENTIFY_ERR_GONE);
	close(fd);
}

static void
test_process_that_execed_since_is_refused(void **state)
{
	static struct identify_owner o;
	enum identify_err e;
	int fd, tries;

	test_spawn_python(AF_INET, mode_exec, true, 0);
	fd = test_accept(env.listen4);
	test_read_pid(fd);
	/* The pid line comes before the exec: wait until it has happened. */
	for (tries = 0; tries < 500; tries++) {
		e = test_lookup(fd, getpid(), &o);
		if (e != IDENTIFY_OK)
			break;
		usleep(10000);
	}
	assert_int_equal(e, IDENTIFY_ERR_EXECED);
	close(fd);
}

/* A record whose start time is not the running process's (forged here in
 * the map: a real pid reuse cannot be arranged in a test). */
static void
test_reused_pid_is_refused(void **state)
{
	static struct identify_owner o;
	struct test_record rec = { .tgid = (uint32_t)getpid(), .tid = (uint32_t)getpid(),
		.start_boottime_ns = 1 };
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint64_t cookie;
	socklen_t len = sizeof(cookie);
	int c, fd;

	sin.sin_port = htons((uint16_t)atoi(env.port4));
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockopt(c, SOL_SOCKET, SO_COOKIE, &cookie, &len), 0);
	assert_int_equal(bpf_map_update_elem(bpfload_map_fd(env.bpf), &cookie, &rec, BPF_ANY), 0);
	fd = test_accept(env.listen4);
	assert_int_equal(test_lookup(fd, getpid(), &o), IDENTIFY_ERR_REUSED);
	close(fd);
	close(c);
}

/* Runs identify_lookup as TEST_NOBODY without capabilities on the
 * connection FD; returns its result. */
static enum identify_err
test_lookup_unprivileged(int fd)
{
	static struct identify_owner o;
	pid_t me = getpid(), pid;
	int status;

	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setgid(TEST_NOBODY) != 0 || setuid(TEST_NOBODY) != 0)
			_exit(100);
		_exit((int)test_lookup(fd, me, &o));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return (enum identify_err)WEXITSTATUS(status);
}

static void
test_lookup_needs_no_privilege_for_the_same_user(void **state)
{
	int fd;

	test_spawn_python(AF_INET, mode_wait, true, TEST_NOBODY);
	fd = test_accept(env.listen4);
	test_read_pid(fd);
	assert_int_equal(test_lookup_unprivileged(fd), IDENTIFY_OK);
	close(fd);
}

/* /proc/PID/exe of another user's process needs CAP_SYS_PTRACE: without
 * it the answer is an error, never a guess. */
static void
test_unprivileged_lookup_of_another_user_fails_closed(void **state)
{
	int fd;

	test_spawn_python(AF_INET, mode_wait, true, 0);
	fd = test_accept(env.listen4);
	test_read_pid(fd);
	assert_int_equal(test_lookup_unprivileged(fd), IDENTIFY_ERR_SYSTEM);
	close(fd);
}

static void
test_detach_stops_recording(void **state)
{
	static struct identify_owner o;
	struct bpfload_attachment *a;
	struct bpfload *second;
	struct identify_tuple t;
	int fd;

	assert_non_null(second = bpfload_open());
	assert_non_null(a = bpfload_attach(second, env.cgroup_fd));
	bpfload_detach(a);
	test_spawn_python(AF_INET, mode_wait, true, 0);
	fd = test_accept(env.listen4);
	test_read_pid(fd);
	test_tuple_of(fd, &t);
	assert_int_equal(identify_lookup(env.diag_fd, bpfload_map_fd(second), &t, NULL, NULL, &o),
	    IDENTIFY_ERR_NO_RECORD);
	assert_int_equal(identify_lookup(env.diag_fd, bpfload_map_fd(env.bpf), &t, NULL, NULL, &o),
	    IDENTIFY_OK);
	bpfload_close(second);
	close(fd);
}

/* The parent recorded at connect time exited since: its executable can no
 * longer be checked, so the ancestors end there, marked truncated. */
static void
test_ancestor_gone_since_truncates(void **state)
{
	static struct identify_owner o;
	pid_t sh, py;
	int fd;

	sh = test_spawn_sh_python(mode_wait);
	fd = test_accept(env.listen4);
	py = test_read_pid(fd);
	assert_int_equal(kill(sh, SIGKILL), 0);
	assert_int_equal(waitpid(sh, NULL, 0), sh);
	env.n_kids = 0;
	assert_int_equal(test_lookup(fd, getpid(), &o), IDENTIFY_OK);
	assert_int_equal(o.pid, py);
	assert_int_equal(o.n_ancestors, 0);
	assert_true(o.ancestors_truncated);
	close(fd);
}

static void
test_bad_tuple_is_invalid(void **state)
{
	static struct identify_owner o;
	struct identify_tuple t;

	memset(&t, 0, sizeof(t));
	t.local.ss_family = AF_INET;
	t.remote.ss_family = AF_INET6;
	assert_int_equal(identify_lookup(-1, -1, &t, NULL, NULL, &o), IDENTIFY_ERR_INVALID);
	t.local.ss_family = AF_UNIX;
	t.remote.ss_family = AF_UNIX;
	assert_int_equal(identify_lookup(-1, -1, &t, NULL, NULL, &o), IDENTIFY_ERR_INVALID);
}

static void
test_every_error_has_a_message(void **state)
{
	int e;

	for (e = IDENTIFY_OK; e <= IDENTIFY_ERR_TOO_LONG; e++)
		assert_string_not_equal(identify_strerror((enum identify_err)e),
		    "unknown identification error");
	assert_string_equal(identify_strerror((enum identify_err)99), "unknown identification error");
}

/* Why these tests cannot run here, or NULL when they can. */
static const char *
test_cannot_run(void)
{
	struct bpfload *b;

	if (geteuid() != 0)
		return "needs root";
	if (test_cgroup2_root() == NULL)
		return "needs a cgroup v2 hierarchy";
	if ((b = bpfload_open()) == NULL)
		return "this kernel does not let root load the BPF program";
	bpfload_close(b);
	return NULL;
}

int
main(void)
{
	const char *why = test_cannot_run();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_identifies_the_process_that_connected, test_teardown),
		cmocka_unit_test_teardown(test_trust_marks_what_the_user_could_write, test_teardown),
		cmocka_unit_test_teardown(test_ancestors_stop_before_the_boundary, test_teardown),
		cmocka_unit_test_teardown(test_ancestors_stop_at_the_cap, test_teardown),
		cmocka_unit_test_teardown(test_ipv6_connection_is_identified, test_teardown),
		cmocka_unit_test_teardown(test_connection_from_outside_the_cgroup_has_no_record, test_teardown),
		cmocka_unit_test_teardown(test_unknown_tuple_has_no_socket, test_teardown),
		cmocka_unit_test_teardown(test_listener_is_not_taken_for_a_client, test_teardown),
		cmocka_unit_test_teardown(test_exited_process_is_gone, test_teardown),
		cmocka_unit_test_teardown(test_process_that_execed_since_is_refused, test_teardown),
		cmocka_unit_test_teardown(test_reused_pid_is_refused, test_teardown),
		cmocka_unit_test_teardown(test_lookup_needs_no_privilege_for_the_same_user, test_teardown),
		cmocka_unit_test_teardown(test_unprivileged_lookup_of_another_user_fails_closed, test_teardown),
		cmocka_unit_test_teardown(test_detach_stops_recording, test_teardown),
		cmocka_unit_test_teardown(test_ancestor_gone_since_truncates, test_teardown),
		cmocka_unit_test_teardown(test_bad_tuple_is_invalid, test_teardown),
		cmocka_unit_test_teardown(test_every_error_has_a_message, test_teardown),
	};

	if (why != NULL) {
		printf("1..0 # SKIP %s\n", why);
		return 0;
	}
	return cmocka_run_group_tests(tests, test_group_setup, test_group_teardown);
}
