/* corrald's privilege split, the broker's side: one binary, two
 * processes.
 *
 * privsep_start(), called by root once the configuration is loaded, forks
 * the monitor (broker/monitor/monitor.h), a root process that sets up,
 * says so in a HELLO, then serves the closed list of
 * broker/monitor/privop.h one request at a time over a socketpair
 * (broker/monitor/monitor-wire.h). The caller then becomes the broker with
 * privsep_drop(): the user `corral`, no capability but CAP_SYS_PTRACE
 * (ARCHITECTURE.md says why), no_new_privs, a seccomp allow-list. Every
 * parser of untrusted bytes runs there. The other functions here are the
 * broker's stubs for the monitor's operations. */
#ifndef CORRAL_PRIVSEP_H
#define CORRAL_PRIVSEP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "broker/monitor/monitor-wire.h"

#define PRIVSEP_REPLY_TIMEOUT_MS 30000  /* the monitor's answer to one request */

struct event_base;
struct monitor_setup;
struct seqmsg;
struct privsep;

/* The answer to an asynchronous request (MSG NULL: the monitor is gone). */
typedef void (*privsep_reply_fn)(struct seqmsg *msg, void *arg);
/* A built sandbox (B: take its descriptors and creds), or NULL and why. */
typedef void (*privsep_built_fn)(struct monitor_built *b, const char *err, void *arg);

/* Forks the monitor (root) and waits for its HELLO. NULL with a reason
 * in *ERR when it cannot even start; a monitor whose sandbox set-up
 * failed still starts (privsep_hello says why). */
struct privsep *privsep_start(const struct monitor_setup *setup, char **err);
/* The monitor's pid. */
pid_t privsep_pid(const struct privsep *ps);
/* The monitor's HELLO. */
const struct monitor_hello *privsep_hello(const struct privsep *ps);
/* The HELLO's bypass log socket, taken (the caller owns it), or -1. */
int privsep_take_bypass_fd(struct privsep *ps);

/* Becomes USER for good, keeping CAP_SYS_PTRACE only, and installs the
 * broker's seccomp filter. -1 with a reason in *ERR (then exit). */
int privsep_drop(const char *user, char **err);
/* Looks USER up: -1 with a reason (how to create it) when it is missing
 * or is root. */
int privsep_user(const char *user, uid_t *uid, gid_t *gid, char **err);

/* Reads the monitor's answers to asynchronous requests from BASE's loop. */
int privsep_attach(struct privsep *ps, struct event_base *base);
/* LOST(ARG) is called once, from the loop, when the monitor's link closes
 * (it exited, was killed, or refused what the broker sent). */
void privsep_on_lost(struct privsep *ps, void (*lost)(void *arg), void *arg);
/* FN hears how long each request to the monitor took, answer in hand
 * (the metrics); NULL: nobody. */
void privsep_on_answer(struct privsep *ps, void (*fn)(double seconds, void *arg), void *arg);
/* True once the monitor's link has closed. */
bool privsep_gone(const struct privsep *ps);
/* Sends a create and returns: BUILT hears the answer from the loop (or
 * from a later synchronous call, which hands earlier answers on first),
 * so tunnels go on while the monitor builds. -1 with *ERR when it cannot
 * even be sent (BUILT is then never called): the monitor is gone, or busy
 * with a backlog of requests, unless the create MUST go (root's). */
int privsep_create_async(struct privsep *ps, const struct monitor_create *req, bool must,
    privsep_built_fn built, void *arg, char **err);
/* Sends the CA that follows every create, right after it (its PEM; "": the
 * create is given up, and fails). No answer of its own. */
int privsep_send_ca(struct privsep *ps, const char *pem, char **err);
/* The answer to a request that only says whether it was done: WHY is
 * NULL when it was, else why not ("the monitor is gone" when it went). */
typedef void (*privsep_done_fn)(const char *why, void *arg);
/* Asks for a warm sandbox in SLOT the same way; DONE hears once it is
 * built. -1 with *ERR when it cannot be sent (DONE is then never called). */
int privsep_warm_async(struct privsep *ps, unsigned slot, privsep_done_fn done, void *arg,
    char **err);
/* Tears sandbox NAME down (its cgroups and every process in them, its
 * namespace, its HOME); DONE hears once it is gone, from the loop, so that
 * a delete never holds every tunnel while the monitor finishes the
 * creates asked before it. -1 with *ERR when it cannot be sent (DONE is
 * then never called): the monitor is gone. */
int privsep_destroy_async(struct privsep *ps, const char *name, privsep_done_fn done,
    void *arg, char **err);

/* What reaping removed: COUNT things, WHAT[N] naming them (at most what
 * one answer lists), or WHY it could not be done; valid during the call. */
typedef void (*privsep_reaped_fn)(size_t count, const char *const *what, size_t n,
    const char *why, void *arg);
/* Has the monitor remove the cgroups and homes that no sandbox it built,
 * and none named in LIVE, owns; DONE hears it from the loop. -1 with *ERR
 * when it cannot be sent (DONE is then never called). */
int privsep_reap_async(struct privsep *ps, const char *const *live, size_t nlive,
    privsep_reaped_fn done, void *arg, char **err);
/* The same, waiting for the answer (bounded): at the start only, before
 * the loop serves anyone. */
void privsep_reap(struct privsep *ps, const char *const *live, size_t nlive,
    privsep_reaped_fn done, void *arg);
/* The owner of PATH, opened by root without following links (run_as of
 * a root caller's sandbox): answered only when CALLER_FD, the client's
 * connection, is root's. DONE(UID, GID, NULL, ARG), or DONE(0, 0, WHY,
 * ARG), from the loop. -1 with *ERR when it cannot be sent (DONE is then
 * never called). */
typedef void (*privsep_owner_fn)(uid_t uid, gid_t gid, const char *why, void *arg);
int privsep_owner_async(struct privsep *ps, int caller_fd, const char *path,
    privsep_owner_fn done, void *arg, char **err);

/* The answer to a socket asked for: FD (the hearer's), or -1 and why. */
typedef void (*privsep_socket_fn)(int fd, const char *err, void *arg);
/* Asks for a non-blocking TCP socket in sandbox NAME's network namespace
 * (for its loopback: corral forward), answered only when CALLER_FD, the
 * client's connection, is its creator's or root's; DONE hears the answer
 * from the loop (a create the monitor is building goes first). -1 with
 * *ERR when it cannot be sent (DONE is then never called). */
int privsep_sandbox_socket_async(struct privsep *ps, int caller_fd, const char *name,
    privsep_socket_fn done, void *arg, char **err);

/* Whether the host's firewall lets the fence work: DONE(LINE, NULL, ARG)
 * hears one line, "ok", "at risk: why" or "unknown: why", or DONE(NULL,
 * WHY, ARG) (both only valid during the call), from the loop, so that a
 * status never waits on the monitor's backlog with every tunnel. -1 with
 * *ERR when it cannot be sent (DONE is then never called). */
typedef void (*privsep_firewall_fn)(const char *line, const char *why, void *arg);
int privsep_firewall_async(struct privsep *ps, privsep_firewall_fn done, void *arg,
    char **err);

/* Closes the link (requests still waiting hear that the monitor is gone)
 * and waits (bounded) for the monitor to finish its teardown. Accepts NULL. */
void privsep_stop(struct privsep *ps);

#endif
