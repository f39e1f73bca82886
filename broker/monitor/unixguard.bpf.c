/* unixguard.bpf.c: the kernel's wall around host Unix sockets. A cgroup
 * BPF program attached to a sandbox's cgroup v2 leaf at connect_unix and
 * sendmsg_unix (BPF_CGROUP_UNIX_CONNECT and BPF_CGROUP_UNIX_SENDMSG,
 * Linux 6.7), next to the identification program.
 *
 * It runs on the address the kernel already copied in, before the path is
 * looked up, for every connect() and addressed send on an AF_UNIX socket
 * made in the sandbox. It lets through:
 * - calls by the sandbox's corral-init (its tgid, in supervisors[]): it
 *   resolved the path once, checked the inode it opened, and connects
 *   through /proc/self/fd/N (broker/init/sockguard.c);
 * - unnamed addresses (addrlen <= 2: autobind) and abstract ones
 *   (sun_path[0] == 0): abstract names belong to the network namespace,
 *   so only the sandbox's own can be reached;
 * - the exact paths of the sockets the policy bound in, keyed by the
 *   sandbox's cgroup (/run/corral/sockets/NAME, in a folder the sandbox
 *   cannot write).
 * Every other pathname connect or send by a workload gets EPERM. So
 * corral-init may answer SECCOMP_USER_NOTIF_FLAG_CONTINUE for whatever is
 * not a Unix pathname: a workload that swaps the descriptor or the address
 * after the check meets this program, which reads what the kernel uses.
 *
 * Built like identify.bpf.c (clang -target bpf, CO-RE, no vmlinux.h). The
 * sections say connect4 and connect6 because libbpf 1.1 knows no
 * cgroup/connect_unix: bpfload.c sets the expected attach types. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define UNIXGUARD_SANDBOXES_MAX 16384   /* sandboxes one daemon runs (its /30 slots) */
#define UNIXGUARD_PATHS_MAX 16384       /* listed sockets of all of them */
#define UNIXGUARD_PATH_KEY_BYTES 128    /* a listed path, NUL-padded: sun_path (108) fits */
#define UNIXGUARD_LISTED_MAX_BYTES 100  /* listed paths are shorter (the policy checks) */
#define UNIXGUARD_READ_MASK 0x7f        /* bounds the read for the verifier: < key size */
#define UNIXGUARD_SUN_PATH_OFFSET 2     /* offsetof(struct sockaddr_un, sun_path) */
#define UNIXGUARD_ALLOW 1
#define UNIXGUARD_REFUSE 0              /* the kernel answers EPERM */

/* Only the fields read; CO-RE relocates them against the kernel's BTF. */
struct sockaddr {
	unsigned short sa_family;
} __attribute__((preserve_access_index));

struct bpf_sock_addr_kern {
	struct sockaddr *uaddr;
	__u32 uaddrlen;
} __attribute__((preserve_access_index));

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

/* A listed path of one sandbox; bpfload.c builds the same layout. */
struct unixguard_path_key {
	__u64 cgroup_id;
	char path[UNIXGUARD_PATH_KEY_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNIXGUARD_SANDBOXES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);             /* the sandbox's cgroup v2 id */
	__type(value, __u32);           /* its corral-init's tgid, host pid namespace */
} unixguard_supervisors SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNIXGUARD_PATHS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct unixguard_path_key);
	__type(value, __u8);
} unixguard_paths SEC(".maps");

/* The key is built here: too big for the program's stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unixguard_path_key);
} unixguard_scratch SEC(".maps");

/* True when the path at NAME (LEN bytes after the family) is listed for
 * the cgroup CG. The kernel's path is sun_path cut at LEN or at the first
 * NUL; a path longer than any listed one, or a read cut short, is never
 * compared. */
static __always_inline int
listed(__u64 cg, const char *name, __u32 len)
{
	struct unixguard_path_key *key;
	__u32 zero = 0, n;
	long r;

	key = bpf_map_lookup_elem(&unixguard_scratch, &zero);
	if (key == NULL)
		return 0;
	__builtin_memset(key, 0, sizeof(*key));
	key->cgroup_id = cg;
	n = (len > UNIXGUARD_LISTED_MAX_BYTES ? UNIXGUARD_LISTED_MAX_BYTES : len) + 1;
	/* On the register passed, so that the verifier sees the bound. */
	asm volatile("%0 &= %1" : "+r"(n) : "i"(UNIXGUARD_READ_MASK));
	r = bpf_probe_read_kernel_str(key->path, n, name);
	if (r < 0 || (r == n && len > n - 1))
		return 0;
	return bpf_map_lookup_elem(&unixguard_paths, key) != NULL;
}

static __always_inline int
judge(struct bpf_sock_addr *ctx)
{
	struct bpf_sock_addr_kern *k = bpf_cast_to_kern_ctx(ctx);
	__u64 cg = bpf_get_current_cgroup_id();
	__u32 *sup = bpf_map_lookup_elem(&unixguard_supervisors, &cg), len;
	const char *name;
	char first = 0;

	if (sup != NULL && *sup == (__u32)(bpf_get_current_pid_tgid() >> 32))
		return UNIXGUARD_ALLOW;         /* corral-init checked it */
	len = BPF_CORE_READ(k, uaddrlen);
	if (len <= UNIXGUARD_SUN_PATH_OFFSET)
		return UNIXGUARD_ALLOW;         /* unnamed */
	name = (const char *)BPF_CORE_READ(k, uaddr) + UNIXGUARD_SUN_PATH_OFFSET;
	if (bpf_probe_read_kernel(&first, 1, name) != 0)
		return UNIXGUARD_REFUSE;
	if (first == 0)
		return UNIXGUARD_ALLOW;         /* abstract: the namespace's own */
	if (listed(cg, name, len - UNIXGUARD_SUN_PATH_OFFSET))
		return UNIXGUARD_ALLOW;
	return UNIXGUARD_REFUSE;
}

SEC("cgroup/connect4")
int unixguard_connect(struct bpf_sock_addr *ctx)
{
	return judge(ctx);
}

SEC("cgroup/connect6")
int unixguard_sendmsg(struct bpf_sock_addr *ctx)
{
	return judge(ctx);
}

char LICENSE[] SEC("license") = "GPL";
