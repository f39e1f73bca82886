/* What a non-root caller's policy may say. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/caller.h"

/* Outside the system folders, so that only the runtime rule can allow it. */
#define RUNTIME "/srv/corral-runtime"

static const char *const roots[] = { "/home/sam/code", "/home/sam/reference" };
#define NROOTS (sizeof(roots) / sizeof(roots[0]))

/* A malloc'd copy of the N strings of LIST, as a policy holds them. */
static char **
dup_list(const char *const *list, size_t n)
{
	char **out = calloc(n + 1, sizeof(*out));
	size_t i;

	assert_non_null(out);
	for (i = 0; i < n; i++)
		assert_non_null(out[i] = strdup(list[i]));
	return out;
}

static void
free_list(char **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* Checks a policy with the given path lists and process flag. */
static enum caller_result
check(const char *const *ro, size_t nro, const char *const *rw, size_t nrw,
    bool process, struct caller_report *report)
{
	enum caller_result result;
	struct policy p;

	memset(&p, 0, sizeof(p));
	p.version = 1;
	p.read_only.paths = dup_list(ro, nro);
	p.read_only.npaths = nro;
	p.read_write.paths = dup_list(rw, nrw);
	p.read_write.npaths = nrw;
	p.has_process = process;
	result = caller_check(&p, roots, NROOTS, RUNTIME, report);
	free_list(p.read_only.paths, nro);
	free_list(p.read_write.paths, nrw);
	return result;
}

static void
test_process_section_is_refused(void **state)
{
	struct caller_report report = { 0 };

	assert_int_equal(check(NULL, 0, NULL, 0, true, &report), CALLER_REFUSED);
	assert_int_equal(report.nmessages, 1);
	assert_non_null(strstr(report.messages[0], "may not set process"));
	caller_report_clear(&report);
}

static void
test_path_outside_roots_is_refused(void **state)
{
	const char *const rw[] = { "/home/sam/.ssh" };
	struct caller_report report = { 0 };

	assert_int_equal(check(NULL, 0, rw, 1, false, &report), CALLER_REFUSED);
	assert_int_equal(report.nmessages, 1);
	assert_non_null(strstr(report.messages[0], "read_write: /home/sam/.ssh is outside"));
	caller_report_clear(&report);
}

static void
test_sibling_prefix_path_is_refused(void **state)
{
	const char *const ro[] = { "/home/sam/code-evil" };
	struct caller_report report = { 0 };

	assert_int_equal(check(ro, 1, NULL, 0, false, &report), CALLER_REFUSED);
	assert_int_equal(report.nmessages, 1);
	assert_non_null(strstr(report.messages[0], "read_only: /home/sam/code-evil is outside"));
	caller_report_clear(&report);
}

static void
test_paths_within_roots_are_allowed(void **state)
{
	const char *const ro[] = { "/home/sam/reference", "/home/sam/reference/docs" };
	const char *const rw[] = { "/home/sam/code", "/home/sam/code/app/build" };
	struct caller_report report = { 0 };

	assert_int_equal(check(ro, 2, rw, 2, false, &report), CALLER_OK);
	assert_int_equal(report.nmessages, 0);
}

static void
test_baseline_is_allowed(void **state)
{
	const char *const ro[] = { "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin",
	    "/sbin", "/etc", "/opt/tool", "/proc", RUNTIME "/init" };
	const char *const rw[] = { "/tmp", "/tmp/cache", "/dev/shm", "/dev" };
	struct caller_report report = { 0 };

	assert_int_equal(check(ro, 11, rw, 4, false, &report), CALLER_OK);
}

static void
test_baseline_sibling_prefix_is_refused(void **state)
{
	const char *const ro[] = { "/usr2", "/etcetera", RUNTIME "-other" };
	struct caller_report report = { 0 };

	assert_int_equal(check(ro, 3, NULL, 0, false, &report), CALLER_REFUSED);
	assert_int_equal(report.nmessages, 3);
	caller_report_clear(&report);
}

static void
test_root_directory_is_refused(void **state)
{
	const char *const ro[] = { "/" };
	struct caller_report report = { 0 };

	assert_int_equal(check(ro, 1, NULL, 0, false, &report), CALLER_REFUSED);
	caller_report_clear(&report);
}

static void
test_every_violation_is_reported(void **state)
{
	const char *const ro[] = { "/home/other", "/usr" };
	const char *const rw[] = { "/root", "/home/sam/code/x", "/var/lib" };
	struct caller_report report = { 0 };

	assert_int_equal(check(ro, 2, rw, 3, true, &report), CALLER_REFUSED);
	assert_int_equal(report.nmessages, 4);
	assert_non_null(strstr(report.messages[1], "/home/other"));
	assert_non_null(strstr(report.messages[2], "/root"));
	assert_non_null(strstr(report.messages[3], "/var/lib"));
	caller_report_clear(&report);
	assert_null(report.messages);
}

/* Checks a policy listing the sockets PATHS (N of them) and nothing else. */
static enum caller_result
check_sockets(const char *const *paths, size_t n, struct caller_report *report)
{
	struct policy_unix_socket socks[POLICY_UNIX_SOCKETS_MAX];
	enum caller_result result;
	struct policy p;

	memset(&p, 0, sizeof(p));
	memset(socks, 0, sizeof(socks));
	p.version = 1;
	for (size_t i = 0; i < n; i++)
		socks[i].path = (char *)(uintptr_t)paths[i];
	p.unix_sockets = socks;
	p.nunix_sockets = n;
	result = caller_check(&p, roots, NROOTS, RUNTIME, report);
	return result;
}

/* The caller's own sockets may be anywhere it reaches: the monitor checks
 * that reach with the caller's rights. */
static void
test_sockets_outside_the_roots_are_allowed(void **state)
{
	const char *const paths[] = { "/run/user/1000/ssh-agent.socket", "/tmp/ssh-x/agent.1",
	    "/home/sam/.cache/clangd.sock", "/var/run/docker.sock" };
	struct caller_report report = { 0 };

	assert_int_equal(check_sockets(paths, 4, &report), CALLER_OK);
	assert_int_equal(report.nmessages, 0);
}

static void
test_sockets_of_the_kernel_and_the_runtime_are_refused(void **state)
{
	const char *const paths[] = { "/proc/1/root/run/x.sock", "/sys/fs/s", "/dev/log",
	    RUNTIME "/corrald.sock", "/devices/ok.sock" };
	struct caller_report report = { 0 };

	assert_int_equal(check_sockets(paths, 5, &report), CALLER_REFUSED);
	assert_int_equal(report.nmessages, 4);
	assert_non_null(strstr(report.messages[0], "unix_sockets: /proc/1/root/run/x.sock is within /proc"));
	assert_non_null(strstr(report.messages[2], "/dev/log is within /dev"));
	assert_non_null(strstr(report.messages[3], "is within " RUNTIME));
	caller_report_clear(&report);
}

static void
test_within_is_by_whole_segments(void **state)
{
	assert_true(caller_path_within("/home/sam/code", "/home/sam/code"));
	assert_true(caller_path_within("/home/sam/code/a", "/home/sam/code"));
	assert_true(caller_path_within("/home/sam/code/a", "/home/sam/code/"));
	assert_false(caller_path_within("/home/sam/code-evil", "/home/sam/code"));
	assert_false(caller_path_within("/home/sam/cod", "/home/sam/code"));
	assert_false(caller_path_within("/home/sam/code", ""));
	assert_true(caller_path_within("/anything", "/"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_process_section_is_refused),
		cmocka_unit_test(test_path_outside_roots_is_refused),
		cmocka_unit_test(test_sibling_prefix_path_is_refused),
		cmocka_unit_test(test_paths_within_roots_are_allowed),
		cmocka_unit_test(test_baseline_is_allowed),
		cmocka_unit_test(test_baseline_sibling_prefix_is_refused),
		cmocka_unit_test(test_root_directory_is_refused),
		cmocka_unit_test(test_every_violation_is_reported),
		cmocka_unit_test(test_within_is_by_whole_segments),
		cmocka_unit_test(test_sockets_outside_the_roots_are_allowed),
		cmocka_unit_test(test_sockets_of_the_kernel_and_the_runtime_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
