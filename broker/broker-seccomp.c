/* The broker's seccomp allow-list. The list is what the broker was seen
 * to call under the end-to-end suites (strace of the broker's threads
 * after the drop), plus what its libraries call on paths those suites do
 * not take (a reopened ledger, a reload, an aborting assertion). A call
 * not listed fails with ENOSYS, so a library falls back as it would on an
 * older kernel, rather than the broker dying in the middle of tunnels. */
#include "config.h"

#include <errno.h>
#include <linux/bpf.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "broker/broker-seccomp.h"

/* LeakSanitizer stops the world with ptrace and reads /proc at exit, and
 * ASan calls what a shipped broker never does: a sanitizer build (a test
 * build, never shipped) keeps a deny-list instead. */
#if defined(__SANITIZE_ADDRESS__)
#define BROKER_SECCOMP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BROKER_SECCOMP_SANITIZED 1
#endif
#endif
#ifndef BROKER_SECCOMP_SANITIZED
#define BROKER_SECCOMP_SANITIZED 0
#endif

#define BROKER_SECCOMP_LOW32 0xffffffffu

/* Allowed whatever their arguments. */
static const char *const broker_seccomp_allowed[] = {
	/* memory, threads, time */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mlock", "munlock", "futex",
	"set_robust_list",
	"get_robust_list", "rseq", "sched_yield", "sched_getaffinity", "exit", "exit_group",
	"gettid", "getpid", "getppid", "tgkill", "clock_gettime", "clock_getres", "gettimeofday",
	"time", "nanosleep", "clock_nanosleep", "restart_syscall", "getrandom", "uname",
	"membarrier", "getrlimit", "prlimit64", "getrusage", "sysinfo",
	/* signals */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "rt_sigtimedwait",
	/* identity (reads only) */
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "capget",
	/* descriptors and files */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "close",
	"close_range", "dup", "dup2", "dup3", "fcntl", "lseek", "openat", "open", "stat", "fstat",
	"lstat", "newfstatat", "statx", "access", "faccessat", "faccessat2", "readlink",
	"readlinkat", "getdents64", "getcwd", "fsync", "fdatasync", "ftruncate", "fallocate",
	"unlink", "unlinkat", "rename", "renameat", "renameat2", "fstatfs", "statfs", "flock",
	"fchmod", "pipe", "pipe2", "splice", "tee", "memfd_create", "eventfd2", "sendfile",
	"copy_file_range", "umask",
	/* identification: whether an executable has an ACL (egress-proxy/exetrust.h) */
	"getxattr",
	/* waiting */
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll",
	"select", "pselect6", "wait4", "waitid",
	/* sockets (which ones: below) */
	"bind", "listen", "connect", "accept", "accept4", "getsockname", "getpeername",
	"getsockopt", "setsockopt", "shutdown", "sendto", "recvfrom", "sendmsg", "recvmsg",
	"sendmmsg", "recvmmsg", "socketpair",
	/* its own process: names, dumpable, no_new_privs (checked at the drop) */
	"prctl", "seccomp",
	/* the Landlock ABI query of `corral status` (a ruleset only narrows) */
	"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
};

/* Socket families: the control socket and syslog, the proxy and c-ares,
 * inet_diag for identification. */
static const int broker_seccomp_families[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };

static int
broker_seccomp_allow_names(scmp_filter_ctx ctx)
{
	int nr;

	for (size_t i = 0; i < sizeof(broker_seccomp_allowed) / sizeof(broker_seccomp_allowed[0]);
	    i++) {
		/* A name this architecture lacks (open, select on arm64) is skipped. */
		if ((nr = seccomp_syscall_resolve_name(broker_seccomp_allowed[i])) < 0)
			continue;
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) < 0)
			return -1;
	}
	return 0;
}

/* The calls allowed with some arguments only. */
static int
broker_seccomp_narrowed(scmp_filter_ctx ctx)
{
	for (size_t i = 0; i < sizeof(broker_seccomp_families) / sizeof(broker_seccomp_families[0]);
	    i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
		    SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)broker_seccomp_families[i])) < 0)
			return -1;
	/* bpf(): reading the identification map, nothing else. */
	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(bpf), 1,
	    SCMP_A0(SCMP_CMP_EQ, BPF_MAP_LOOKUP_ELEM)) < 0)
		return -1;
	/* Threads (the ledger's writer), never a new process or namespace;
	 * clone3 keeps its flags in memory: "not here", and libc uses clone. */
	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD | CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
	    CLONE_NEWNET, CLONE_THREAD)) < 0)
		return -1;
	/* ioctl: terminals (window size, TIOCSIG, termios) and FIONREAD;
	 * never TIOCSTI or TIOCLINUX, which type into a terminal. */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, BROKER_SECCOMP_LOW32, TIOCSTI)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, BROKER_SECCOMP_LOW32, TIOCLINUX)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 0) < 0)
		return -1;
	return 0;
}

/* A sanitizer build's filter: everything but what a broker must never do. */
static const char *const broker_seccomp_refused[] = {
	"process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "kexec_load",
	"kexec_file_load", "init_module", "finit_module", "delete_module", "mount", "umount2",
	"pivot_root", "chroot", "swapon", "swapoff", "reboot", "setns", "unshare",
	"open_by_handle_at", "keyctl", "add_key", "request_key", "userfaultfd", "perf_event_open",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "execve", "execveat",
};

static int
broker_seccomp_deny_list(scmp_filter_ctx ctx)
{
	int nr;

	for (size_t i = 0; i < sizeof(broker_seccomp_refused) / sizeof(broker_seccomp_refused[0]);
	    i++)
		if ((nr = seccomp_syscall_resolve_name(broker_seccomp_refused[i])) >= 0 &&
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) < 0)
			return -1;
	return 0;
}

bool
broker_seccomp_is_allow_list(void)
{
	return !BROKER_SECCOMP_SANITIZED;
}

int
broker_seccomp_install(void)
{
	scmp_filter_ctx ctx;
	int rc;

	if (BROKER_SECCOMP_SANITIZED) {
		ctx = seccomp_init(SCMP_ACT_ALLOW);
		rc = ctx == NULL ? -1 : broker_seccomp_deny_list(ctx);
		if (rc == 0 && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(bpf), 1,
		    SCMP_A0(SCMP_CMP_NE, BPF_MAP_LOOKUP_ELEM)) < 0)
			rc = -1;
	} else {
		ctx = seccomp_init(SCMP_ACT_ERRNO(ENOSYS));
		rc = ctx == NULL ? -1 : broker_seccomp_allow_names(ctx);
		if (rc == 0)
			rc = broker_seccomp_narrowed(ctx);
	}
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc == 0 ? 0 : -1;
}
