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

#endif
