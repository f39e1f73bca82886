/* identify.bpf.c: the cgroup BPF program that records, for every TCP
 * connect() made from the watched cgroup, which process made it.
 *
 * Attached to a sandbox's cgroup at cgroup/connect4 and cgroup/connect6. It
 * runs in the connecting task's context, before the kernel connects, and
 * always lets the connect go on: it records, it never decides. The record
 * (the process, its executable, and its parents' pids and executables at
 * that moment) is keyed by the socket cookie, the same number inet_diag
 * reports as idiag_cookie, so the proxy can find it from the 4-tuple of
 * the connection it accepted (see identify.c). One program and one map
 * serve every sandbox: cookies are unique across network namespaces.
 *
 * Built with `clang -O2 -g -target bpf -c`; the kernel structures it reads
 * are declared below with only the fields used, and libbpf relocates their
 * offsets against the running kernel's BTF (CO-RE), so no vmlinux.h and no
 * bpftool are needed. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define IDENTIFY_MAP_ENTRIES 16384	/* records kept; least recently used go first */
#define IDENTIFY_ANCESTORS_MAX 16	/* parents recorded per connect */
#define SOCK_STREAM_TYPE 1		/* SOCK_STREAM, without the libc headers */

/* One ancestor: its process id and its executable's device and inode. */
struct identify_link {
	__u32 tgid;
	__u32 exe_dev;		/* the kernel's dev_t encoding */
	__u64 exe_ino;
};

/* What is recorded per connect; identify.c declares the same layout. An
 * executable that cannot be read is recorded as inode 0, which matches no
 * file, so the lookup refuses it. */
struct identify_record {
	__u32 tgid;		/* process id in the initial pid namespace */
	__u32 tid;		/* the thread that called connect() */
	__u64 start_boottime_ns;	/* the process's start, ns since boot */
	__u64 exe_ino;		/* its executable at connect time */
	__u32 exe_dev;
	__u32 n_ancestors;	/* entries of ancestors[] filled, parent first */
	struct identify_link ancestors[IDENTIFY_ANCESTORS_MAX];
};

/* Only the fields this program reads; preserve_access_index makes each
 * access a CO-RE relocation resolved against the kernel's BTF at load. */
struct super_block {
	__u32 s_dev;
} __attribute__((preserve_access_index));

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct mm_struct {
	struct file *exe_file;
} __attribute__((preserve_access_index));

struct task_struct {
	int tgid;
	struct task_struct *group_leader;
	struct task_struct *real_parent;
	struct mm_struct *mm;
	__u64 start_boottime;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, IDENTIFY_MAP_ENTRIES);
	__type(key, __u64);
	__type(value, struct identify_record);
} identify_owners SEC(".maps");

/* Reads TASK's executable's device and inode; they stay 0 when a pointer
 * on the way is NULL (a task without an mm has no executable). */
static __always_inline void
read_exe(struct task_struct *task, __u32 *dev, __u64 *ino)
{
	struct file *exe = BPF_CORE_READ(task, mm, exe_file);
	struct inode *inode;

	if (exe == NULL)
		return;
	inode = BPF_CORE_READ(exe, f_inode);
	if (inode == NULL)
		return;
	*ino = BPF_CORE_READ(inode, i_ino);
	*dev = BPF_CORE_READ(inode, i_sb, s_dev);
}

/* Records the parent processes of LEADER, nearest first, up to the cap or
 * pid 1 (the walk in /proc later would find them reparented or gone). */
static __always_inline void
record_ancestors(struct task_struct *leader, struct identify_record *rec)
{
	struct task_struct *t = leader;
	__u32 i;

	for (i = 0; i < IDENTIFY_ANCESTORS_MAX; i++) {
		t = BPF_CORE_READ(t, real_parent, group_leader);
		if (t == NULL)
			return;
		rec->ancestors[i].tgid = (__u32)BPF_CORE_READ(t, tgid);
		if (rec->ancestors[i].tgid <= 1)
			return;
		read_exe(t, &rec->ancestors[i].exe_dev, &rec->ancestors[i].exe_ino);
		rec->n_ancestors = i + 1;
	}
}

/* Records the current task as the owner of the socket being connected.
 * Only stream sockets: UDP connects are cheap to repeat, and a flood of them
 * would only push TCP records out of the map. */
static __always_inline void
record_owner(struct bpf_sock_addr *ctx)
{
	struct identify_record rec = {};
	struct task_struct *leader;
	__u64 id, cookie;

	if (ctx->type != SOCK_STREAM_TYPE)
		return;
	id = bpf_get_current_pid_tgid();
	rec.tgid = (__u32)(id >> 32);
	rec.tid = (__u32)id;
	leader = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), group_leader);
	rec.start_boottime_ns = BPF_CORE_READ(leader, start_boottime);
	read_exe(leader, &rec.exe_dev, &rec.exe_ino);
	record_ancestors(leader, &rec);
	cookie = bpf_get_socket_cookie(ctx);
	bpf_map_update_elem(&identify_owners, &cookie, &rec, BPF_ANY);
}

SEC("cgroup/connect4")
int identify_connect4(struct bpf_sock_addr *ctx)
{
	record_owner(ctx);
	return 1;	/* let the connect go on: recording is not deciding */
}

SEC("cgroup/connect6")
int identify_connect6(struct bpf_sock_addr *ctx)
{
	record_owner(ctx);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
