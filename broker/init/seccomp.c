/* The workload filter, in two seccomp programs the kernel runs together
 * (the strictest answer wins): a hand-written gate for what libseccomp 2.5
 * cannot say (the architecture and x32 bit, the highest known number, and
 * "this argument must be one of"), then libseccomp's deny list. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/netlink.h>

#include "broker/init/seccomp.h"

#if defined(__x86_64__) && !defined(__ILP32__)
#define SECCOMP_HAVE_TABLE 1
#define SECCOMP_NATIVE_ARCH AUDIT_ARCH_X86_64
/* x86_64 numbers of calls newer than Linux 5.0, hard-coded so the filter
 * does not depend on the build machine's headers or libseccomp's table
 * (2.5.4 stops at futex_waitv). From arch/x86/entry/syscalls/syscall_64.tbl. */
#define X86_64_NR_io_uring_setup 425
#define X86_64_NR_io_uring_enter 426
#define X86_64_NR_io_uring_register 427
#define X86_64_NR_open_tree 428
#define X86_64_NR_move_mount 429
#define X86_64_NR_fsopen 430
#define X86_64_NR_fsconfig 431
#define X86_64_NR_fsmount 432
#define X86_64_NR_fspick 433
#define X86_64_NR_clone3 435
#define X86_64_NR_pidfd_getfd 438
#define X86_64_NR_mount_setattr 442
#define X86_64_NR_quotactl_fd 443
#define X86_64_NR_statmount 457             /* Linux 6.8 */
#define X86_64_NR_listmount 458             /* Linux 6.8 */
#define X86_64_NR_lsm_set_self_attr 460     /* Linux 6.8 */
#define X86_64_NR_open_tree_attr 467        /* Linux 6.15 */
/* The highest number the filter knows: file_setattr (Linux 6.17), the
 * highest of Linux 6.18. Anything above fails with ENOSYS, so a call added
 * later (perhaps another mount call) cannot slip past the deny list. */
#define SECCOMP_NR_MAX_KNOWN 469
/* The bit x32 numbers carry on x86_64 (same audit arch, other table). */
#define SECCOMP_X32_SYSCALL_BIT 0x40000000U
#else
#define SECCOMP_HAVE_TABLE 0
#endif

/* The most instructions of the gate program. */
#define SECCOMP_GATE_MAX_INSNS 160
/* The most values one "argument must be one of" check lists. */
#define SECCOMP_SET_MAX_VALUES 4
/* struct seccomp_data offsets of an argument's low and high 32 bits. */
#define SECCOMP_ARG_LO(i) ((uint32_t)(offsetof(struct seccomp_data, args) + 8 * (i)))
/* ioprio_set's "which" for a single process (linux/ioprio.h). */
#define SECCOMP_IOPRIO_WHO_PROCESS 1
/* personality(): Linux's own, and the value that only asks. */
#define SECCOMP_PER_LINUX 0U
#define SECCOMP_PER_QUERY 0xffffffffU
/* The type bits of socket()'s second argument (SOCK_NONBLOCK etc. aside). */
#define SECCOMP_SOCK_TYPE_MASK 0xfU
/* Compare an int argument the way the kernel reads it: low 32 bits. */
#define SECCOMP_LOW32 0xffffffffULL
/* memfd_create flags of Linux 6.3 (Debian 12's headers stop before them). */
#define SECCOMP_MFD_NOEXEC_SEAL 0x0008U
#define SECCOMP_MFD_EXEC 0x0010U
/* The caller's pid namespace's vm.memfd_noexec (Linux 6.3): at 1 or more,
 * a memfd asked for without MFD_EXEC is made non-executable and sealed. */
#define SECCOMP_MEMFD_NOEXEC_PATH "/proc/sys/vm/memfd_noexec"
#define SECCOMP_MEMFD_NOEXEC_SEAL_SCOPE 1
#define SECCOMP_MEMFD_NOEXEC_TEXT_MAX_BYTES 16
/* How the gate is loaded when connect() is supervised: with a listener
 * (Linux 5.0), and so that once the supervisor holds a call only a fatal
 * signal interrupts it (5.19): a connect made for the workload never
 * half-happens behind an EINTR. */
#define SECCOMP_NOTIFY_FLAGS (SECCOMP_FILTER_FLAG_NEW_LISTENER | \
	SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)

#if SECCOMP_HAVE_TABLE
struct gate {
	struct sock_filter insn[SECCOMP_GATE_MAX_INSNS];
	size_t n;
	int overflow;
};

/* One "argument must be one of" check: any other value gets ERRNO. */
struct gate_set {
	int nr;
	unsigned int arg;
	uint32_t values[SECCOMP_SET_MAX_VALUES];
	size_t n_values;
	int errno_value;
};

static void
gate_emit(struct gate *g, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
	if (g->n == SECCOMP_GATE_MAX_INSNS) {
		g->overflow = 1;
		return;
	}
	g->insn[g->n++] = (struct sock_filter)BPF_JUMP(code, k, jt, jf);
}

/* The gate's head: another architecture or an x32 number kills (no
 * workload of ours makes them, and a confused process must not go on); a
 * number above the highest known fails with ENOSYS. */
static void
gate_head(struct gate *g)
{
	gate_emit(g, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch), 0, 0);
	gate_emit(g, BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_NATIVE_ARCH, 1, 0);
	gate_emit(g, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS, 0, 0);
	gate_emit(g, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
	gate_emit(g, BPF_JMP | BPF_JSET | BPF_K, SECCOMP_X32_SYSCALL_BIT, 0, 1);
	gate_emit(g, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS, 0, 0);
	gate_emit(g, BPF_JMP | BPF_JGT | BPF_K, SECCOMP_NR_MAX_KNOWN, 0, 1);
	gate_emit(g, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS, 0, 0);
}

/* Appends S: if the call is S->nr and the low 32 bits of its argument (all
 * the kernel reads of an int) are none of S->values, fail with S's errno.
 * Layout: ld nr; jeq nr else skip; ld arg; jeq v1..vn to the end; ret. */
static void
gate_set(struct gate *g, const struct gate_set *s)
{
	size_t n = s->n_values, k;

	gate_emit(g, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
	gate_emit(g, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)s->nr, 0, (uint8_t)(n + 2));
	gate_emit(g, BPF_LD | BPF_W | BPF_ABS, SECCOMP_ARG_LO(s->arg), 0, 0);
	for (k = 0; k < n; k++)
		gate_emit(g, BPF_JMP | BPF_JEQ | BPF_K, s->values[k], (uint8_t)(n - k), 0);
	gate_emit(g, BPF_RET | BPF_K,
	    SECCOMP_RET_ERRNO | ((uint32_t)s->errno_value & SECCOMP_RET_DATA), 0, 0);
}

/* connect() to corral-init's supervisor (broker/init/sockguard.h): the
 * filter sees neither the socket's family nor the address, so every call
 * goes there; the supervisor lets all but Unix pathnames go on at once. */
static void
gate_notify_connect(struct gate *g)
{
	gate_emit(g, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
	gate_emit(g, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)SCMP_SYS(connect), 0, 1);
	gate_emit(g, BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF, 0, 0);
}

/* The gate for a workload whose pid is SELF; NOTIFY: connect() is
 * supervised. */
static void
gate_build(struct gate *g, uint32_t self, bool notify)
{
	/* Calls that name a process: only the caller itself, so a workload
	 * cannot starve, renice, pin or slow corral-init or its siblings. */
	const struct gate_set sets[] = {
		{ SCMP_SYS(socket), 0, { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK }, 4, EAFNOSUPPORT },
		{ SCMP_SYS(socketpair), 0, { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK }, 4, EAFNOSUPPORT },
		{ SCMP_SYS(personality), 0, { SECCOMP_PER_LINUX, SECCOMP_PER_QUERY }, 2, EPERM },
		{ SCMP_SYS(prlimit64), 0, { 0, self }, 2, EPERM },
		{ SCMP_SYS(sched_setaffinity), 0, { 0, self }, 2, EPERM },
		{ SCMP_SYS(sched_setscheduler), 0, { 0, self }, 2, EPERM },
		{ SCMP_SYS(sched_setparam), 0, { 0, self }, 2, EPERM },
		{ SCMP_SYS(sched_setattr), 0, { 0, self }, 2, EPERM },
		{ SCMP_SYS(setpriority), 0, { PRIO_PROCESS }, 1, EPERM },
		{ SCMP_SYS(setpriority), 1, { 0, self }, 2, EPERM },
		{ SCMP_SYS(ioprio_set), 0, { SECCOMP_IOPRIO_WHO_PROCESS }, 1, EPERM },
		{ SCMP_SYS(ioprio_set), 1, { 0, self }, 2, EPERM },
	};
	size_t i;

	gate_head(g);
	for (i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		gate_set(g, &sets[i]);
	if (notify)
		gate_notify_connect(g);
	gate_emit(g, BPF_RET | BPF_K, SECCOMP_RET_ALLOW, 0, 0);
}

/* Calls refused outright with EPERM: mounts and namespaces (the way out
 * through the files), kernel surface (bpf, perf, userfaultfd, keys,
 * modules, kexec, io_uring), other processes' memory and descriptors, and
 * host-wide state (time, swap, accounting, reboot, the kernel log). */
static const int refused_eperm[] = {
	SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root),
	X86_64_NR_open_tree, X86_64_NR_move_mount, X86_64_NR_fsopen,
	X86_64_NR_fsconfig, X86_64_NR_fsmount, X86_64_NR_fspick,
	X86_64_NR_mount_setattr, X86_64_NR_open_tree_attr,
	SCMP_SYS(setns), SCMP_SYS(unshare),
	SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd),
	SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
	SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
	X86_64_NR_pidfd_getfd,
	SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load),
	SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(delete_module),
	X86_64_NR_io_uring_setup, X86_64_NR_io_uring_enter, X86_64_NR_io_uring_register,
	SCMP_SYS(acct), SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(reboot),
	SCMP_SYS(settimeofday), SCMP_SYS(clock_settime), SCMP_SYS(adjtimex),
	SCMP_SYS(clock_adjtime), SCMP_SYS(syslog), SCMP_SYS(quotactl),
	X86_64_NR_quotactl_fd, SCMP_SYS(name_to_handle_at),
	SCMP_SYS(open_by_handle_at), SCMP_SYS(lookup_dcookie), SCMP_SYS(vhangup),
	/* Kernel surface no workload needs: LDT entries (Wine, DOSEMU), a.out
	 * libraries, comparing other processes' kernel objects, file-system
	 * event watches (which would show the host's activity), setting an
	 * LSM's label. */
	SCMP_SYS(modify_ldt), SCMP_SYS(uselib), SCMP_SYS(kcmp), SCMP_SYS(fanotify_init),
	X86_64_NR_lsm_set_self_attr,
};

/* Refused with ENOSYS, as on a kernel without them, so that callers take
 * their fallback: libmount reads /proc/self/mountinfo instead. */
static const int refused_enosys[] = {
	X86_64_NR_statmount, X86_64_NR_listmount,
};

/* clone() flag bits that make a namespace. CLONE_NEWTIME is left out: in
 * clone()'s flags its bit is part of the exit signal, and clone() cannot
 * make a time namespace (clone3 and unshare, both refused, can). */
static const unsigned long clone_namespace_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

/* Adds the refusals that need no argument. */
static int
deny_plain(scmp_filter_ctx ctx)
{
	size_t i;

	for (i = 0; i < sizeof(refused_eperm) / sizeof(refused_eperm[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), refused_eperm[i], 0) < 0)
			return -1;
	for (i = 0; i < sizeof(refused_enosys) / sizeof(refused_enosys[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), refused_enosys[i], 0) < 0)
			return -1;
	/* ENOSYS, not EPERM: glibc then falls back to clone(), whose flags
	 * are a register the filter can read; clone3's are in memory. */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), X86_64_NR_clone3, 0) < 0)
		return -1;
	return 0;
}

/* clone() with any namespace flag, and exec of a descriptor (memfd). */
static int
deny_clone_exec(scmp_filter_ctx ctx)
{
	size_t i;
	unsigned long flag;

	for (i = 0; i < sizeof(clone_namespace_flags) / sizeof(clone_namespace_flags[0]); i++) {
		flag = clone_namespace_flags[i];
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) < 0)
			return -1;
	}
	/* Running code by descriptor, whatever the descriptor is. */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(execveat), 1,
	    SCMP_A4(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH)) < 0)
		return -1;
	return 0;
}

/* The effective vm.memfd_noexec of the caller's pid namespace (the
 * strictest of it and its parents'); 0 when unreadable (before Linux 6.3,
 * or no /proc), which makes the filter strict. No allocation: this runs in
 * a forked child. */
static int
memfd_noexec_scope(void)
{
	char text[SECCOMP_MEMFD_NOEXEC_TEXT_MAX_BYTES] = { 0 };
	int fd = open(SECCOMP_MEMFD_NOEXEC_PATH, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd == -1)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0 || text[0] < '0' || text[0] > '9')
		return 0;
	return text[0] - '0';
}

/* Code that exists on no file, run from a memfd through /proc/self/fd/N
 * (execve, not execveat, so the rule above does not see it). Landlock
 * cannot stop it: a memfd lives on the kernel's internal shmem mount, which
 * Landlock lets through. So no memfd may be executable: MFD_EXEC is refused
 * (EACCES, the kernel's own answer under vm.memfd_noexec=2), and unless the
 * sandbox's pid namespace already makes every other memfd MFD_NOEXEC_SEAL
 * (vm.memfd_noexec >= 1, which corral-init can set), a memfd asked for with
 * neither flag is refused with ENOSYS, as on a kernel without memfd_create:
 * callers then take their old fallback (a file in /dev/shm or /tmp, where
 * the workload may run what it writes anyway), and callers that ask for
 * MFD_NOEXEC_SEAL, the one way that cannot be made executable (its exec
 * bits are sealed), keep working. */
static int
deny_memfd_exec(scmp_filter_ctx ctx, int noexec_scope)
{
	const uint64_t both = SECCOMP_MFD_EXEC | SECCOMP_MFD_NOEXEC_SEAL;

	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(memfd_create), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_MFD_EXEC, SECCOMP_MFD_EXEC)) < 0)
		return -1;
	if (noexec_scope >= SECCOMP_MEMFD_NOEXEC_SEAL_SCOPE)
		return 0;
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(memfd_create), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, both, 0)) < 0)
		return -1;
	return 0;
}

/* Terminal injection: TIOCSTI and TIOCLINUX on the low 32 bits, since the
 * kernel reads the request as an unsigned int and ignores the rest. */
static int
deny_ioctl(scmp_filter_ctx ctx)
{
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_LOW32, TIOCSTI)) < 0)
		return -1;
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_LOW32, TIOCLINUX)) < 0)
		return -1;
	return 0;
}

/* Netlink other than NETLINK_ROUTE, and raw or packet IP sockets (they
 * need CAP_NET_RAW, which the workload lacks: refused twice over). */
static int
deny_socket(scmp_filter_ctx ctx)
{
	static const int families[] = { AF_INET, AF_INET6 };
	static const int types[] = { SOCK_RAW, SOCK_PACKET };
	size_t f, t;

	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, SECCOMP_LOW32, AF_NETLINK),
	    SCMP_A2(SCMP_CMP_NE, NETLINK_ROUTE)) < 0)
		return -1;
	for (f = 0; f < 2; f++)
		for (t = 0; t < 2; t++)
			if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
			    SCMP_A0(SCMP_CMP_MASKED_EQ, SECCOMP_LOW32, families[f]),
			    SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_SOCK_TYPE_MASK, types[t])) < 0)
				return -1;
	return 0;
}

/* libseccomp's deny list: allow by default, native architecture only;
 * MEMFD_SCOPE is the caller's vm.memfd_noexec. */
static scmp_filter_ctx
deny_list_new(int memfd_scope)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (ctx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0 ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1) < 0 ||
	    deny_plain(ctx) == -1 || deny_clone_exec(ctx) == -1 ||
	    deny_memfd_exec(ctx, memfd_scope) == -1 ||
	    deny_ioctl(ctx) == -1 || deny_socket(ctx) == -1) {
		seccomp_release(ctx);
		errno = EINVAL;
		return NULL;
	}
	return ctx;
}

/* Installs PROG; with LISTENER, connect() is supervised and *LISTENER
 * gets the listener (close-on-exec, as the kernel makes it). */
static int
gate_load(const struct sock_fprog *prog, int *listener)
{
	long fd;

	if (listener == NULL)
		return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog);
	fd = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_NOTIFY_FLAGS, prog);
	if (fd == -1)
		return -1;
	*listener = (int)fd;
	return 0;
}

int
seccomp_apply_workload(int *listener)
{
	struct gate g = { .n = 0 };
	struct sock_fprog prog;
	scmp_filter_ctx ctx;
	int rc = -1, lrc;

	/* Both programs are built before either is installed. */
	gate_build(&g, (uint32_t)getpid(), listener != NULL);
	if (g.overflow) {
		errno = E2BIG;
		return -1;
	}
	ctx = deny_list_new(memfd_noexec_scope());
	if (ctx == NULL)
		return -1;
	prog.len = (unsigned short)g.n;
	prog.filter = g.insn;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 || gate_load(&prog, listener) == -1)
		goto out;
	lrc = seccomp_load(ctx);
	if (lrc < 0) {
		errno = -lrc;
		if (listener != NULL) {
			close(*listener);
			*listener = -1;
		}
		goto out;
	}
	rc = 0;
out:
	seccomp_release(ctx);
	return rc;
}

const char *
seccomp_unavailable(void)
{
	uint32_t action = SECCOMP_RET_KILL_PROCESS;

	/* PR_GET_SECCOMP answers EINVAL on a kernel built without seccomp. */
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == -1 && errno == EINVAL)
		return "seccomp: the kernel has no seccomp";
	if (syscall(__NR_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == -1)
		return "seccomp: the kernel cannot kill the process from a filter (before Linux 4.14)";
	return NULL;
}

#else /* !SECCOMP_HAVE_TABLE */

int
seccomp_apply_workload(int *listener)
{
	(void)listener;
	/* Refuse rather than guess another architecture's numbers. */
	errno = ENOTSUP;
	return -1;
}

const char *
seccomp_unavailable(void)
{
	return "seccomp: no workload filter for this architecture (x86_64 only)";
}

#endif
