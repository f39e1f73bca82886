/* The monitor's closed list of privileged operations: set up (the fence,
 * the cgroup roots, the identification program), build a sandbox, tear
 * one down, reap what no live sandbox owns, judge the host's firewall.
 * Each takes a request the broker validated, validates it again, and
 * hands back descriptors and facts; none parses network bytes. Only the
 * monitor process (broker/monitor/monitor.c) calls these. */
#ifndef CORRAL_PRIVOP_H
#define CORRAL_PRIVOP_H

#include <stddef.h>

#include "broker/monitor/monitor-wire.h"
#include "broker/monitor/monitor.h"

struct privop;

/* Sets up the privileged side: instance id, cgroups, the fence, the
 * identification program. NULL with a reason in *ERR. */
struct privop *privop_new(const struct monitor_setup *setup, char **err);
/* Tears down every sandbox P built, removes the fence and this instance's
 * cgroup roots, and frees P. Accepts NULL. */
void privop_free(struct privop *p);
/* Watches CGROUP_PATH (host_proxy.cgroup) with the identification
 * program. -1 with a reason in *ERR. */
int privop_watch_host(struct privop *p, const char *cgroup_path, char **err);
/* Whether the host's firewall lets the fence work, as one line: "ok",
 * "at risk: why" or "unknown: why" (broker/monitor/fwcheck.h). */
void privop_firewall(struct privop *p, char *line, size_t size);
/* The identification map, or -1 when the program is not loaded. */
int privop_map_fd(const struct privop *p);
/* The instance id ("i0123abcd"): names the fence table and cgroups. */
const char *privop_instance(const struct privop *p);
/* The bound NFLOG socket of the bypass records, taken (the caller owns
 * it), or -1 with the reason in *WHY (P's; "" when there is none). */
int privop_take_bypass_fd(struct privop *p, const char **why);

/* Where a create's CA comes from (it follows the request): FN(ARG) waits
 * for it and gives the PEM (the caller's until the next call), or NULL
 * with *WHY when the broker gave the create up. */
typedef const char *(*privop_ca_fn)(void *arg, const char **why);
void privop_on_ca(struct privop *p, privop_ca_fn fn, void *arg);

/* Builds a warm sandbox in SLOT: its cgroup, corral-init waiting with the
 * tree no spec changes, the veth, the gateway's sockets and the
 * identification, for a create of that slot with warm set to claim.
 * DESTROY of CGROUP_WARM_PREFIX<slot> discards it. -1 with the reason in
 * *ERR. */
int privop_warm(struct privop *p, unsigned slot, char **err);
/* A create that claimed SLOT's warm sandbox was refused before
 * privop_create: the warm sandbox goes (the broker builds another). */
void privop_warm_refused(struct privop *p, unsigned slot);
/* Builds sandbox REQ; fills OUT. With REQ's warm, on the warm sandbox of
 * its slot when there is one (else cold). -1 with a one-line reason in
 * *ERR, and nothing of it left behind. */
int privop_create(struct privop *p, const struct monitor_create *req,
    struct monitor_built *out, char **err);
/* A non-blocking TCP socket in sandbox NAME's network namespace, for
 * its loopback (corral forward), into *FD, when CALLER (the kernel's
 * word) made it or is root. -1 with a reason in *ERR. */
int privop_sandbox_socket(struct privop *p, const char *name, uid_t caller, int *fd,
    char **err);
/* Tears down sandbox NAME: kills its processes, removes its cgroups, its
 * home and its namespace (the veth dies with it). Idempotent. */
int privop_destroy(struct privop *p, const char *name, char **err);
/* Removes what no live sandbox owns: cgroups of this instance and homes
 * under the state folder whose names are not in LIVE; REMOVED (may be
 * NULL) hears of each ("cgroup NAME", "home NAME"). Returns the count. */
size_t privop_reap(struct privop *p, const char *const *live, size_t nlive,
    void (*removed)(const char *what, void *arg), void *arg);

#endif
