/* tests/unit/child-probe.h: the harness of the tests that try what a
 * kernel narrowing layer forbids (Landlock, seccomp). The test forks a
 * middle process, which prepares itself (drops to nobody, say) and forks
 * the attempt; the attempt reports 0 or an errno through a pipe and the
 * middle process relays that with the attempt's wait status. So the
 * attempting process's parent is a process of the same identity, as
 * corral-init is to a workload, and whatever the attempt does to itself
 * (a layer, a filter, a fatal signal) never reaches the test runner. */
#ifndef CORRAL_TESTS_CHILD_PROBE_H
#define CORRAL_TESTS_CHILD_PROBE_H

#include <stdbool.h>

/* The uid and gid the attempts run as when the tests run as root. */
#define CHILD_PROBE_NOBODY_ID 65534

/* How one attempt ended. */
struct child_probe_outcome {
	int reported;   /* the attempt returned and reported ERR */
	int err;        /* 0: what it tried worked; else its errno */
	int status;     /* the attempting process's wait status */
};

/* Run in the middle process, before the attempt is forked: 0, or -1 to
 * give up (the probe then fails the test). */
typedef int (*child_probe_prepare_fn)(void *arg);
/* Run in the attempting process: 0, or the errno of what it tried. */
typedef int (*child_probe_attempt_fn)(void *arg);

/* Runs ATTEMPT two processes down, PREPARE (may be NULL) in the middle one,
 * both with ARG and with cmocka's signal handlers reset, so that a fatal
 * signal kills the process instead of jumping back into the test runner.
 * Fails the test unless the middle process relayed an outcome. */
struct child_probe_outcome child_probe_run(child_probe_prepare_fn prepare,
    child_probe_attempt_fn attempt, void *arg);

/* In a child: becomes CHILD_PROBE_NOBODY_ID (no capabilities) when root;
 * -1 on failure. */
int child_probe_become_nobody(void);

/* True under valgrind, which does not know the Landlock and seccomp calls. */
bool child_probe_under_valgrind(void);

#endif
