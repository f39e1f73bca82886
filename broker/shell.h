/* Persistent shells (PROTOCOL.md section 5; ARCHITECTURE.md, "Sessions:
 * shells and files"): named shells per sandbox that keep their working
 * folder and exported environment across runs. Each shell is a supervisor,
 * corral-shell, started through the exec channel with one more descriptor,
 * its link (common/shellwire.h); each run is a fresh clone of a pristine
 * bash in the sandbox, whose exit status the kernel gives the supervisor.
 * The broker keeps the state (a dump the run's shell writes as it exits
 * normally, read strictly by shellproto.c) and puts the code that applies
 * it before each run's text. A run's output is a pipe of its own, read
 * here: up to its result, and after it, as the run's late output, until
 * every writer closed it.
 *
 * Runs in one shell are serialised: a run that comes while another is in
 * the shell waits in the shell's queue (SHELL_QUEUE_MAX, then refused). A
 * timeout or an interrupt sends SIGINT to the run's process group (its own
 * session); if the run has not ended after SHELL_INTERRUPT_GRACE_S,
 * SIGKILL; if it still has not after SHELL_KILL_JOB_GRACE_S, the
 * supervisor is killed through corral-init and the result says respawned;
 * the next run gets a new supervisor with the same state. The wire side is
 * api-run.c. */
#ifndef CORRAL_SHELL_H
#define CORRAL_SHELL_H

#include <stdbool.h>

#include "broker/runtab.h"

#define SHELL_NAME_DEFAULT "main"
#define SHELL_PER_SANDBOX_MAX 8         /* named shells in one sandbox */
#define SHELL_QUEUE_MAX 16              /* runs waiting for one shell */
#define SHELL_TIMEOUT_DEFAULT_S 120
#define SHELL_TIMEOUT_MAX_S 600
#define SHELL_INTERRUPT_GRACE_S 2       /* after SIGINT, before SIGKILL to the run's group */
#define SHELL_KILL_JOB_GRACE_S 1        /* after SIGKILL, before the supervisor is killed */
#define SHELL_KILL_GRACE_S 2            /* after the supervisor is killed, before the run is given up */
#define SHELL_START_TIMEOUT_S 10        /* a new supervisor says HELLO */
#define SHELL_PIPES_MAX 32              /* output pipes a sandbox's runs hold open; then the oldest closes */

struct daemon;
struct sandbox;
struct shell_host;

/* SB's shells and runs; made when CREATE, else NULL when it has none. */
struct shell_host *shell_host_of(struct daemon *d, struct sandbox *sb, bool create);
/* The host's runs (to find, list and acknowledge). */
struct runtab *shell_host_runs(struct shell_host *h);
/* Queues R (just added to the host's table) on the shell it names; -1
 * with a one-line reason in *WHY (malloc'd) when that shell cannot take
 * it (too many shells, a full queue). */
int shell_submit(struct shell_host *h, struct run *r, char **why);
/* Interrupts R: a queued run ends at once (exit 130); a running one gets
 * SIGINT, then SIGKILL, then its supervisor is killed, each after its grace. */
void shell_interrupt(struct shell_host *h, struct run *r);
/* SB is being deleted: its shells go, and runs in flight end with an
 * error. The hook for sandbox_delete(); safe when SB has no shells. */
void shell_sandbox_gone(struct sandbox *sb);
/* True while a run of SB is in one of its shells. */
bool shell_sandbox_running(const struct sandbox *sb);
/* The request id of SB's run whose shell is PID (in SB's pid namespace),
 * or NULL. Neither frees anything: the proxy asks during a decision. */
const char *shell_run_of(const struct sandbox *sb, pid_t pid);

#endif
