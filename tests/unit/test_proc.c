/* Tests of common/proc: start times, the boot id, and telling a live
 * process from a dead, reused or earlier-boot one. */
#include "config.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/proc.h"

/* A comm that a parser counting from the first ')' would misread. */
#define TEST_TRICKY_COMM ") 1 2 ) (x y"
/* A child that waits for its parent dies after this, so a failed assertion
 * in the parent cannot leave it behind. */
#define TEST_CHILD_TIMEOUT_S 10

/* Forks a child that exits at once and returns its pid, not yet reaped. */
static pid_t
test_spawn_exiting_child(void)
{
	pid_t pid = fork();

	assert_true(pid != -1);
	if (pid == 0)
		_exit(0);
	return pid;
}

/* Waits until PID has exited, leaving it a zombie (not reaped). */
static void
test_wait_zombie(pid_t pid)
{
	siginfo_t info;

	assert_int_equal(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
}

static void
test_reap(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
}

static void
test_start_time_of_self_is_positive_and_stable(void **state)
{
	uint64_t a = 0, b = 0;

	assert_int_equal(proc_start_time(getpid(), &a), 0);
	assert_int_equal(proc_start_time(getpid(), &b), 0);
	assert_true(a > 0);
	assert_true(a == b);
}

static void
test_start_time_of_reaped_child_fails(void **state)
{
	pid_t pid = test_spawn_exiting_child();
	uint64_t start;

	test_reap(pid);
	assert_int_equal(proc_start_time(pid, &start), -1);
}

static void
test_start_time_of_invalid_pid_fails(void **state)
{
	uint64_t start;

	assert_int_equal(proc_start_time(0, &start), -1);
	assert_int_equal(proc_start_time(-1, &start), -1);
}

/* This process's own numbers: as many as the pid namespaces it is in,
 * the innermost its own getpid(); none for a pid that is gone. */
static void
test_ns_pids_of_self_and_of_a_gone_pid(void **state)
{
	pid_t ids[PROC_NS_DEPTH_MAX], pid;
	int n = proc_ns_pids(0, ids, PROC_NS_DEPTH_MAX);

	assert_true(n >= 1);
	assert_int_equal(ids[n - 1], getpid());
	assert_int_equal(proc_ns_pids(getpid(), ids, PROC_NS_DEPTH_MAX), n);
	assert_int_equal(proc_ns_pid(getpid()), getpid());
	pid = test_spawn_exiting_child();

	test_reap(pid);
	assert_int_equal(proc_ns_pids(pid, ids, PROC_NS_DEPTH_MAX), -1);
	assert_int_equal(proc_ns_pid(pid), -1);
}

/* The child reports its start time, renames itself to TEST_TRICKY_COMM,
 * and waits; the parent must read the same start time through the new name. */
static void
test_start_time_counts_fields_after_last_paren(void **state)
{
	int to_parent[2], to_child[2];
	uint64_t before = 0, after = 0;
	char comm[32] = "", path[64];
	FILE *f;
	pid_t pid;

	assert_int_equal(pipe(to_parent), 0);
	assert_int_equal(pipe(to_child), 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		char c;

		alarm(TEST_CHILD_TIMEOUT_S);
		if (proc_start_time(getpid(), &before) == -1 ||
		    prctl(PR_SET_NAME, TEST_TRICKY_COMM) == -1)
			_exit(1);
		if (write(to_parent[1], &before, sizeof(before)) != sizeof(before))
			_exit(1);
		_exit(read(to_child[0], &c, 1) == 1 ? 0 : 1);
	}
	assert_int_equal(read(to_parent[0], &before, sizeof(before)), sizeof(before));
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	assert_non_null(f = fopen(path, "r"));
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	assert_string_equal(comm, TEST_TRICKY_COMM "\n");
	assert_int_equal(proc_start_time(pid, &after), 0);
	assert_true(after == before);
	assert_int_equal(write(to_child[1], "x", 1), 1);
	test_reap(pid);
	close(to_parent[0]); close(to_parent[1]);
	close(to_child[0]); close(to_child[1]);
}

static void
test_boot_id_is_a_stable_uuid(void **state)
{
	char a[BOOT_ID_BYTES], b[BOOT_ID_BYTES];

	assert_int_equal(proc_boot_id(a), 0);
	assert_int_equal(proc_boot_id(b), 0);
	assert_int_equal(strlen(a), BOOT_ID_BYTES - 1);
	assert_true(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-');
	assert_int_equal(strspn(a, "0123456789abcdef-"), BOOT_ID_BYTES - 1);
	assert_string_equal(a, b);
}

static void
test_same_process_true_for_self(void **state)
{
	char boot[BOOT_ID_BYTES];
	uint64_t start;

	assert_int_equal(proc_boot_id(boot), 0);
	assert_int_equal(proc_start_time(getpid(), &start), 0);
	assert_int_equal(proc_is_same_process(getpid(), start, boot), 1);
}

static void
test_same_process_false_for_other_start_time(void **state)
{
	char boot[BOOT_ID_BYTES];
	uint64_t start;

	assert_int_equal(proc_boot_id(boot), 0);
	assert_int_equal(proc_start_time(getpid(), &start), 0);
	assert_int_equal(proc_is_same_process(getpid(), start + 1, boot), 0);
}

static void
test_same_process_false_for_other_boot(void **state)
{
	char boot[BOOT_ID_BYTES];
	uint64_t start;

	assert_int_equal(proc_boot_id(boot), 0);
	assert_int_equal(proc_start_time(getpid(), &start), 0);
	boot[0] = boot[0] == '0' ? '1' : '0';
	assert_int_equal(proc_is_same_process(getpid(), start, boot), 0);
	assert_int_equal(proc_is_same_process(getpid(), start, NULL), 0);
}

static void
test_same_process_false_for_reaped_child(void **state)
{
	pid_t pid = test_spawn_exiting_child();
	char boot[BOOT_ID_BYTES];
	uint64_t start;

	assert_int_equal(proc_boot_id(boot), 0);
	test_wait_zombie(pid);
	assert_int_equal(proc_start_time(pid, &start), 0);
	test_reap(pid);
	assert_int_equal(proc_is_same_process(pid, start, boot), 0);
}

/* A zombie still shows in /proc with its start time, but it has exited. */
static void
test_same_process_false_for_zombie(void **state)
{
	pid_t pid = test_spawn_exiting_child();
	char boot[BOOT_ID_BYTES];
	uint64_t start;

	assert_int_equal(proc_boot_id(boot), 0);
	test_wait_zombie(pid);
	assert_int_equal(proc_start_time(pid, &start), 0);
	assert_int_equal(proc_is_same_process(pid, start, boot), 0);
	test_reap(pid);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_time_of_self_is_positive_and_stable),
		cmocka_unit_test(test_start_time_of_reaped_child_fails),
		cmocka_unit_test(test_start_time_of_invalid_pid_fails),
		cmocka_unit_test(test_ns_pids_of_self_and_of_a_gone_pid),
		cmocka_unit_test(test_start_time_counts_fields_after_last_paren),
		cmocka_unit_test(test_boot_id_is_a_stable_uuid),
		cmocka_unit_test(test_same_process_true_for_self),
		cmocka_unit_test(test_same_process_false_for_other_start_time),
		cmocka_unit_test(test_same_process_false_for_other_boot),
		cmocka_unit_test(test_same_process_false_for_reaped_child),
		cmocka_unit_test(test_same_process_false_for_zombie),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
