/* Persistent shells (PROTOCOL.md section 5): named bash sessions per sandbox,
 * each on a terminal of the sandbox's own devpts with job control, that
 * keep cwd and environment across runs. Runs in one shell are serialised:
 * a run that comes while another is in the shell waits in the shell's
 * queue (SHELL_QUEUE_MAX, then refused). A timeout or an interrupt sends
 * SIGINT to the terminal's foreground process group; if the run has not
 * ended after SHELL_INTERRUPT_GRACE_S, SIGQUIT; if it still has not after
 * SHELL_QUIT_GRACE_S, the shell itself is killed (the kernel then hangs up
 * its foreground job) and the next run gets a new one (the result says
 * respawned). The broker cannot send SIGKILL to the job itself: the
 * terminal passes on only SIGINT, SIGQUIT and SIGTSTP, and the job is not
 * the broker's user's. The wire side is api-run.c. */
#ifndef CORRAL_SHELL_H
#define CORRAL_SHELL_H

#include <stdbool.h>

#include "broker/runtab.h"

#define SHELL_NAME_DEFAULT "main"
#define SHELL_PER_SANDBOX_MAX 8         /* named shells in one sandbox */
#define SHELL_QUEUE_MAX 16              /* runs waiting for one shell */
#define SHELL_TIMEOUT_DEFAULT_S 120
#define SHELL_TIMEOUT_MAX_S 600
#define SHELL_INTERRUPT_GRACE_S 2       /* after SIGINT, before SIGKILL to the job */
#define SHELL_KILL_JOB_GRACE_S 1        /* after SIGKILL to the job, before the shell is killed */
#define SHELL_KILL_GRACE_S 2            /* after the shell is killed, before the run is given up */
#define SHELL_START_TIMEOUT_S 10        /* a new bash answers its first marker */
#define SHELL_MARKER_WAIT_MS 500        /* output's end marker, once the status came */
#define SHELL_ROWS 50
#define SHELL_COLS 200

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
 * SIGINT, then the shell is killed after the grace. */
void shell_interrupt(struct shell_host *h, struct run *r);
/* SB is being deleted: its shells go, and runs in flight end with an
 * error. The hook for sandbox_delete(); safe when SB has no shells. */
void shell_sandbox_gone(struct sandbox *sb);

#endif
