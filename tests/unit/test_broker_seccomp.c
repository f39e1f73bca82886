/* Tests of the broker's seccomp filter, each in a child process that
 * installs it: what the broker needs still works, what it must never do
 * fails (an allow-list: anything unlisted is ENOSYS). */
#include "config.h"

#include <errno.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker/broker-seccomp.h"
#include "tests/unit/child-probe.h"

/* Runs PROBE in a child under the filter; its exit code (PROBE returns
 * 0 when the call went as expected). */
static int
under_filter(int (*probe)(void))
{
	int status;
	pid_t pid;

	/* valgrind 3.19 does not know seccomp(2). */
	if (child_probe_under_valgrind())
		skip();
	pid = fork();

	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 || broker_seccomp_install() == -1)
			_exit(100);
		_exit(probe());
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int
probe_inet_socket_works(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	return fd >= 0 && close(fd) == 0 ? 0 : 1;
}

static int
probe_packet_socket_fails(void)
{
	return socket(AF_PACKET, SOCK_RAW, 0) == -1 ? 0 : 1;
}

static int
probe_execve_fails(void)
{
	static char name[] = "true";
	char *const argv[] = { name, NULL };

	execve("/bin/true", argv, argv + 1);
	return errno == ENOSYS || errno == EPERM ? 0 : 1;
}

static int
probe_bpf_prog_load_fails(void)
{
	union bpf_attr attr = { 0 };

	return syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr)) == -1 &&
	    (errno == ENOSYS || errno == EPERM) ? 0 : 1;
}

static int
probe_fork_fails(void)
{
	pid_t pid = (pid_t)syscall(SYS_fork);

	if (pid == 0)
		_exit(0);
	return pid == -1 ? 0 : 1;
}

static int
probe_io_uring_fails(void)
{
	return syscall(__NR_io_uring_setup, 1, NULL) == -1 &&
	    (errno == ENOSYS || errno == EPERM) ? 0 : 1;
}

static int
probe_unshare_fails(void)
{
	return syscall(SYS_unshare, 0x10000000 /* CLONE_NEWUSER */) == -1 ? 0 : 1;
}

static void
test_inet_socket_works(void **state)
{
	assert_int_equal(under_filter(probe_inet_socket_works), 0);
}

static void
test_packet_socket_fails(void **state)
{
	/* A sanitizer build's deny-list leaves the families alone. */
	if (!broker_seccomp_is_allow_list())
		skip();
	assert_int_equal(under_filter(probe_packet_socket_fails), 0);
}

static void
test_execve_fails(void **state)
{
	assert_int_equal(under_filter(probe_execve_fails), 0);
}

static void
test_bpf_other_than_map_lookup_fails(void **state)
{
	assert_int_equal(under_filter(probe_bpf_prog_load_fails), 0);
}

static void
test_new_process_fails(void **state)
{
	if (!broker_seccomp_is_allow_list())
		skip();
	assert_int_equal(under_filter(probe_fork_fails), 0);
}

static void
test_io_uring_fails(void **state)
{
	assert_int_equal(under_filter(probe_io_uring_fails), 0);
}

static void
test_new_user_namespace_fails(void **state)
{
	assert_int_equal(under_filter(probe_unshare_fails), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inet_socket_works),
		cmocka_unit_test(test_packet_socket_fails),
		cmocka_unit_test(test_execve_fails),
		cmocka_unit_test(test_bpf_other_than_map_lookup_fails),
		cmocka_unit_test(test_new_process_fails),
		cmocka_unit_test(test_io_uring_fails),
		cmocka_unit_test(test_new_user_namespace_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
