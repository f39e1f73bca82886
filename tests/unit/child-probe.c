/* tests/unit/child-probe.c: the narrowing layers' fork-and-report test
 * harness (see child-probe.h). */
#include "config.h"

#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/child-probe.h"

/* cmocka catches these signals; a child must die of them instead of
 * jumping back into the test runner. */
static void
default_signals(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS, SIGABRT };
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
}

/* The attempting process: try, report. */
static void __attribute__((noreturn))
attempter(int report_fd, child_probe_attempt_fn attempt, void *arg)
{
	int err = attempt(arg);

	_exit(write(report_fd, &err, sizeof(err)) == sizeof(err) ? 0 : 3);
}

/* The middle process: prepares, then relays how the attempt ended. */
static void __attribute__((noreturn))
middle(int out_fd, child_probe_prepare_fn prepare, child_probe_attempt_fn attempt,
    void *arg)
{
	struct child_probe_outcome o = { 0 };
	int inner[2];
	pid_t pid;

	default_signals();
	if ((prepare != NULL && prepare(arg) == -1) || pipe2(inner, O_CLOEXEC) == -1)
		_exit(2);
	pid = fork();
	if (pid == -1)
		_exit(2);
	if (pid == 0)
		attempter(inner[1], attempt, arg);
	close(inner[1]);
	if (waitpid(pid, &o.status, 0) == -1)
		_exit(2);
	o.reported = read(inner[0], &o.err, sizeof(o.err)) == sizeof(o.err);
	_exit(write(out_fd, &o, sizeof(o)) == sizeof(o) ? 0 : 2);
}

struct child_probe_outcome
child_probe_run(child_probe_prepare_fn prepare, child_probe_attempt_fn attempt, void *arg)
{
	struct child_probe_outcome o = { 0 };
	int out[2], status;
	pid_t pid;

	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		middle(out[1], prepare, attempt, arg);
	close(out[1]);
	assert_int_equal(read(out[0], &o, sizeof(o)), sizeof(o));
	close(out[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return o;
}

int
child_probe_become_nobody(void)
{
	if (geteuid() == 0 && (setgroups(0, NULL) == -1 ||
	    setgid(CHILD_PROBE_NOBODY_ID) == -1 || setuid(CHILD_PROBE_NOBODY_ID) == -1))
		return -1;
	return 0;
}

bool
child_probe_under_valgrind(void)
{
	const char *preload = getenv("LD_PRELOAD");

	return preload != NULL && strstr(preload, "vgpreload") != NULL;
}
