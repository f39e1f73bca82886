/* The identification program, on the monitor's side: loading the cgroup
 * BPF program (broker/monitor/identify.bpf.c, embedded in the daemon) and
 * attaching it to cgroups. It records, for every TCP connect() in a
 * watched cgroup, which process made it, keyed by the socket's cookie; the
 * broker reads the map through the descriptor handed to it
 * (egress-proxy/identify.h).
 *
 * Privilege: loading and attaching need CAP_BPF, CAP_PERFMON (the program
 * reads task fields) and CAP_NET_ADMIN (cgroup sock hooks), i.e. root.
 * Cost: loading takes ~20 ms (libbpf parses the kernel's BTF), so the
 * program is loaded once and attached to each sandbox's cgroup (cheap).
 * Nothing here logs: failures return -1 with errno. */
#ifndef CORRAL_BPFLOAD_H
#define CORRAL_BPFLOAD_H

#include <stdbool.h>
#include <sys/types.h>

/* The loaded program and its map (opaque); one per daemon. */
struct bpfload;
/* The program attached to one cgroup (opaque). */
struct bpfload_attachment;

/* Loads the embedded program and creates its map; NULL with errno. */
struct bpfload *bpfload_open(void);
/* The map's descriptor, to hand to the broker (it stays owned by B). */
int bpfload_map_fd(const struct bpfload *b);
/* Attaches B's program (connect4 and connect6) to the cgroup v2 directory
 * CGROUP_FD, which covers its descendants too; NULL with errno. */
struct bpfload_attachment *bpfload_attach(struct bpfload *b, int cgroup_fd);
/* Detaches and frees A; accepts NULL. */
void bpfload_detach(struct bpfload_attachment *a);
/* Frees B; accepts NULL. Attachments stay in force until detached, and a
 * map descriptor duplicated earlier keeps the map alive. */
void bpfload_close(struct bpfload *b);

/* The Unix socket guard (broker/monitor/unixguard.bpf.c, Linux 6.7): on a
 * sandbox's cgroup it refuses (EPERM) every connect() and addressed send
 * to a Unix pathname by a workload, except the calls of the sandbox's
 * corral-init, unnamed and abstract addresses, and the exact paths
 * listed. Loaded once, attached to each sandbox's cgroup. */
#define BPFLOAD_UNIX_PATHS_MAX 16       /* listed paths of one sandbox */
#define BPFLOAD_UNIX_LISTED_MAX_BYTES 100       /* a listed path's length, NUL excluded, is below */

/* The loaded guard and its maps (opaque); one per daemon. */
struct bpfload_unix;
/* The guard on one sandbox's cgroup (opaque). */
struct bpfload_unix_guard;

/* Loads the embedded guard; NULL with errno (a kernel before 6.7 refuses
 * the attach types). */
struct bpfload_unix *bpfload_unix_open(void);
/* Puts the guard on the cgroup v2 folder CGROUP_FD: SUPERVISOR (a tgid,
 * the host's pid namespace) is the sandbox's corral-init, PATHS (at most
 * BPFLOAD_UNIX_PATHS_MAX, each shorter than BPFLOAD_UNIX_LISTED_MAX_BYTES)
 * the paths a workload may reach itself. NULL with errno; nothing stays
 * of a failed attach. */
struct bpfload_unix_guard *bpfload_unix_attach(struct bpfload_unix *u, int cgroup_fd,
    pid_t supervisor, const char *const *paths, size_t npaths);
/* Takes the guard off and its entries out of the maps; accepts NULL. */
void bpfload_unix_detach(struct bpfload_unix_guard *g);
/* Frees U; accepts NULL. Guards still attached stay in force until detached. */
void bpfload_unix_close(struct bpfload_unix *u);

#endif
