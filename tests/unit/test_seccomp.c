/* The workload filter, tried: each refused call is made by a process under
 * the filter and must fail with its errno (or kill, for another
 * architecture's calls), and the same call made without the filter must
 * not fail that way, so every test shows it is the filter that refused.
 * Calls that need a capability are tried as root, with arguments the
 * kernel would answer with something else (ENOENT, EBADF, EINVAL) if the
 * filter let them through; calls on another process aim at a process of
 * the same uid, as corral-init is to a workload. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <poll.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/userfaultfd.h>
#include <cmocka.h>

#include "broker/init/seccomp.h"
#include "common/sock.h"
#include "tests/unit/child-probe.h"

/* ioprio_set: one process, best-effort class, level 4 (linux/ioprio.h). */
#define TRIAL_IOPRIO_WHO_PROCESS 1
#define TRIAL_IOPRIO_BE_4 ((2 << 13) | 4)
/* x86_64 numbers the test calls directly. */
#define TRIAL_NR_CLONE3 435
#define TRIAL_NR_OPEN_TREE 428
#define TRIAL_NR_MOVE_MOUNT 429
#define TRIAL_NR_FSOPEN 430
#define TRIAL_NR_FSCONFIG 431
#define TRIAL_NR_FSMOUNT 432
#define TRIAL_NR_FSPICK 433
#define TRIAL_NR_PIDFD_OPEN 434
#define TRIAL_NR_PIDFD_GETFD 438
#define TRIAL_NR_MOUNT_SETATTR 442
#define TRIAL_NR_QUOTACTL_FD 443
#define TRIAL_NR_OPEN_TREE_ATTR 467
#define TRIAL_NR_IO_URING_SETUP 425
#define TRIAL_NR_IO_URING_ENTER 426
#define TRIAL_NR_IO_URING_REGISTER 427
#define TRIAL_NR_STATMOUNT 457
#define TRIAL_NR_LISTMOUNT 458
#define TRIAL_NR_LSM_SET_SELF_ATTR 460
#define TRIAL_NR_MSEAL 462
/* kcmp's "same file" question (linux/kcmp.h). */
#define TRIAL_KCMP_FILE 0
#define TRIAL_X32_BIT 0x40000000L
/* i386's getpid, made through int 0x80. */
#define TRIAL_I386_NR_GETPID 20L
/* A request number with high bits the kernel ignores: TIOCSTI still. */
#define TRIAL_TIOCSTI_HIGH 0xffffffff00005412UL
/* quotactl's QCMD(Q_GETFMT, USRQUOTA), spelled unsigned: glibc's macro
 * shifts an int past its range. */
#define TRIAL_QCMD_GETFMT_USER ((0x800004U << 8) | 0U)
/* memfd_create flags of Linux 6.3 (not in Debian 12's headers). */
#define TRIAL_MFD_NOEXEC_SEAL 0x0008U
#define TRIAL_MFD_EXEC 0x0010U
/* The biggest binary a memfd is filled with. */
#define TRIAL_EXEC_MAX_BYTES (4 * 1024 * 1024)

enum who {
	AS_NOBODY,   /* no capabilities: how a workload runs */
	AS_ROOT,     /* full capabilities: only the filter can refuse */
};

/* One attempt, made with PARENT, a process of the same uid, as the other
 * process to aim at; returns 0 or the errno. */
typedef int (*attempt_fn)(pid_t parent);

static int g_value = 42;   /* what process_vm_* reads in the parent */
static char g_true_name[] = "true";   /* argv[0] of /bin/true */

/* One trial: what to attempt, as whom, and whether under the filter. */
struct trial_args {
	enum who who;
	attempt_fn fn;
	int filtered;
};

/* The parent of the attempt: nobody when asked and root, dumpable and
 * traceable by its children. */
static int
outsider_prepare(void *arg)
{
	const struct trial_args *a = arg;

	if (a->who == AS_NOBODY && child_probe_become_nobody() == -1)
		return -1;
	/* A uid change clears dumpable, which ptrace and process_vm need. */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* The attempting process: filter (when asked), try. */
static int
attacker(void *arg)
{
	const struct trial_args *a = arg;

	if (a->filtered && seccomp_apply_workload(NULL) == -1)
		return 10000 + errno;
	return a->fn(getppid());
}

/* Runs FN as WHO, under the workload filter when FILTERED. */
static struct child_probe_outcome
trial(enum who who, attempt_fn fn, int filtered)
{
	struct trial_args a = { who, fn, filtered };

	return child_probe_run(outsider_prepare, attacker, &a);
}

/* Skips a trial that cannot run here: valgrind (3.19) does not know
 * seccomp(2), so under it the filter cannot be tried, only built. */
static void
need_trial(enum who who)
{
	if (child_probe_under_valgrind() || (who == AS_ROOT && geteuid() != 0))
		skip();
}

/* FN fails with ERR under the filter, and not with ERR without it. */
static void
expect_refused(enum who who, attempt_fn fn, int err)
{
	struct child_probe_outcome f, c;

	need_trial(who);
	f = trial(who, fn, 1);
	assert_true(f.reported);
	assert_int_equal(f.err, err);
	c = trial(who, fn, 0);
	assert_false(c.reported && c.err == err);
}

/* FN kills its process with SIGSYS under the filter, and not without it. */
static void
expect_killed(attempt_fn fn)
{
	struct child_probe_outcome f, c;

	need_trial(AS_NOBODY);
	f = trial(AS_NOBODY, fn, 1);
	assert_false(f.reported);
	assert_true(WIFSIGNALED(f.status));
	assert_int_equal(WTERMSIG(f.status), SIGSYS);
	c = trial(AS_NOBODY, fn, 0);
	assert_false(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGSYS);
}

/* FN gets ERR under the filter, as the kernel answers it without one. */
static void
expect_allowed_with(attempt_fn fn, int err)
{
	struct child_probe_outcome f;

	need_trial(AS_NOBODY);
	f = trial(AS_NOBODY, fn, 1);
	assert_true(f.reported);
	assert_int_equal(f.err, err);
}

/* FN works under the filter. */
static void
expect_allowed(attempt_fn fn)
{
	struct child_probe_outcome f;

	need_trial(AS_NOBODY);
	f = trial(AS_NOBODY, fn, 1);
	assert_true(f.reported);
	assert_int_equal(f.err, 0);
}

/* 0 when RC is not -1, else errno. */
static int
result(long rc)
{
	return rc == -1 ? errno : 0;
}

/* Attempts: the mount family. */
static int try_mount(pid_t p) { return result(mount("none", "/nonexistent/corral", "tmpfs", 0, NULL)); }
static int try_umount2(pid_t p) { return result(umount2("/nonexistent/corral", 0)); }
static int try_pivot_root(pid_t p) { return result(syscall(SYS_pivot_root, "/nonexistent", "/nonexistent")); }
static int try_open_tree(pid_t p) { return result(syscall(TRIAL_NR_OPEN_TREE, AT_FDCWD, "/nonexistent", 0)); }
static int try_move_mount(pid_t p) { return result(syscall(TRIAL_NR_MOVE_MOUNT, -1, "", -1, "", 0)); }
static int try_fsopen(pid_t p) { return result(syscall(TRIAL_NR_FSOPEN, "corral-no-such-fs", 0)); }
static int try_fsconfig(pid_t p) { return result(syscall(TRIAL_NR_FSCONFIG, -1, 0, NULL, NULL, 0)); }
static int try_fsmount(pid_t p) { return result(syscall(TRIAL_NR_FSMOUNT, -1, 0, 0)); }
static int try_fspick(pid_t p) { return result(syscall(TRIAL_NR_FSPICK, AT_FDCWD, "/nonexistent", 0)); }
static int try_mount_setattr(pid_t p) { return result(syscall(TRIAL_NR_MOUNT_SETATTR, AT_FDCWD, "/nonexistent", 0, NULL, 0)); }
static int try_open_tree_attr(pid_t p) { return result(syscall(TRIAL_NR_OPEN_TREE_ATTR, AT_FDCWD, "/nonexistent", 0, NULL, 0)); }

static void test_mount_is_refused(void **s) { expect_refused(AS_ROOT, try_mount, EPERM); }
static void test_umount2_is_refused(void **s) { expect_refused(AS_ROOT, try_umount2, EPERM); }
static void test_pivot_root_is_refused(void **s) { expect_refused(AS_ROOT, try_pivot_root, EPERM); }
static void test_open_tree_is_refused(void **s) { expect_refused(AS_NOBODY, try_open_tree, EPERM); }
static void test_move_mount_is_refused(void **s) { expect_refused(AS_ROOT, try_move_mount, EPERM); }
static void test_fsopen_is_refused(void **s) { expect_refused(AS_ROOT, try_fsopen, EPERM); }
static void test_fsconfig_is_refused(void **s) { expect_refused(AS_NOBODY, try_fsconfig, EPERM); }
static void test_fsmount_is_refused(void **s) { expect_refused(AS_ROOT, try_fsmount, EPERM); }
static void test_fspick_is_refused(void **s) { expect_refused(AS_ROOT, try_fspick, EPERM); }
static void test_mount_setattr_is_refused(void **s) { expect_refused(AS_NOBODY, try_mount_setattr, EPERM); }
static void test_open_tree_attr_is_refused(void **s) { expect_refused(AS_NOBODY, try_open_tree_attr, EPERM); }

/* Namespaces: "unshare -U, then remount" fails at the first step. */
static int try_unshare_user(pid_t p) { return result(unshare(CLONE_NEWUSER)); }
static int try_unshare_files(pid_t p) { return result(unshare(CLONE_FILES)); }
static int try_setns(pid_t p) { return result(setns(-1, 0)); }

/* clone() with FLAGS, fork-like; the child leaves at once. */
static int
clone_with(unsigned long flags)
{
	long pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return result(pid);
}

static int try_clone_newuser(pid_t p) { return clone_with(CLONE_NEWUSER); }
static int try_clone_newns(pid_t p) { return clone_with(CLONE_NEWNS); }
static int try_clone_newnet(pid_t p) { return clone_with(CLONE_NEWNET); }
static int try_clone3(pid_t p) { return result(syscall(TRIAL_NR_CLONE3, NULL, 0)); }

static void test_unshare_user_namespace_is_refused(void **s) { expect_refused(AS_NOBODY, try_unshare_user, EPERM); }
static void test_unshare_without_namespace_flags_is_refused(void **s) { expect_refused(AS_NOBODY, try_unshare_files, EPERM); }
static void test_setns_is_refused(void **s) { expect_refused(AS_NOBODY, try_setns, EPERM); }
static void test_clone_new_user_namespace_is_refused(void **s) { expect_refused(AS_NOBODY, try_clone_newuser, EPERM); }
static void test_clone_new_mount_namespace_is_refused(void **s) { expect_refused(AS_ROOT, try_clone_newns, EPERM); }
static void test_clone_new_net_namespace_is_refused(void **s) { expect_refused(AS_ROOT, try_clone_newnet, EPERM); }
static void test_clone3_answers_enosys(void **s) { expect_refused(AS_NOBODY, try_clone3, ENOSYS); }

/* Kernel surface. */
static int try_bpf(pid_t p) { return result(syscall(SYS_bpf, 0xffff, NULL, 0)); }
static int try_perf_event_open(pid_t p) { return result(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0)); }
static int try_userfaultfd(pid_t p) { return result(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY)); }
static int try_keyctl(pid_t p) { return result(syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -2 /* process */, 0)); }
static int try_add_key(pid_t p) { return result(syscall(SYS_add_key, NULL, NULL, NULL, 0, 0)); }
static int try_request_key(pid_t p) { return result(syscall(SYS_request_key, NULL, NULL, NULL, 0)); }
static int try_kexec_load(pid_t p) { return result(syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL)); }
static int try_kexec_file_load(pid_t p) { return result(syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0xdead0000UL)); }
static int try_init_module(pid_t p) { return result(syscall(SYS_init_module, NULL, 0, "")); }
static int try_finit_module(pid_t p) { return result(syscall(SYS_finit_module, -1, "", 0)); }
static int try_delete_module(pid_t p) { return result(syscall(SYS_delete_module, "corral_no_such_module", O_NONBLOCK)); }
static int try_io_uring_setup(pid_t p) { return result(syscall(TRIAL_NR_IO_URING_SETUP, 1, NULL)); }
static int try_io_uring_enter(pid_t p) { return result(syscall(TRIAL_NR_IO_URING_ENTER, -1, 0, 0, 0, NULL, 0)); }
static int try_io_uring_register(pid_t p) { return result(syscall(TRIAL_NR_IO_URING_REGISTER, -1, 0, NULL, 0)); }

static void test_bpf_is_refused(void **s) { expect_refused(AS_ROOT, try_bpf, EPERM); }
static void test_perf_event_open_is_refused(void **s) { expect_refused(AS_NOBODY, try_perf_event_open, EPERM); }
static void test_userfaultfd_is_refused(void **s) { expect_refused(AS_NOBODY, try_userfaultfd, EPERM); }
static void test_keyctl_is_refused(void **s) { expect_refused(AS_NOBODY, try_keyctl, EPERM); }
static void test_add_key_is_refused(void **s) { expect_refused(AS_NOBODY, try_add_key, EPERM); }
static void test_request_key_is_refused(void **s) { expect_refused(AS_NOBODY, try_request_key, EPERM); }
static void test_kexec_load_is_refused(void **s) { expect_refused(AS_ROOT, try_kexec_load, EPERM); }
static void test_kexec_file_load_is_refused(void **s) { expect_refused(AS_ROOT, try_kexec_file_load, EPERM); }
static void test_init_module_is_refused(void **s) { expect_refused(AS_ROOT, try_init_module, EPERM); }
static void test_finit_module_is_refused(void **s) { expect_refused(AS_ROOT, try_finit_module, EPERM); }
static void test_delete_module_is_refused(void **s) { expect_refused(AS_ROOT, try_delete_module, EPERM); }
static void test_io_uring_setup_is_refused(void **s) { expect_refused(AS_NOBODY, try_io_uring_setup, EPERM); }
static void test_io_uring_enter_is_refused(void **s) { expect_refused(AS_NOBODY, try_io_uring_enter, EPERM); }
static void test_io_uring_register_is_refused(void **s) { expect_refused(AS_NOBODY, try_io_uring_register, EPERM); }

/* Other processes: the parent is of the same uid, as corral-init is. */
static int
try_ptrace_attach(pid_t p)
{
	int status;

	if (ptrace(PTRACE_ATTACH, p, NULL, NULL) == -1)
		return errno;
	waitpid(p, &status, __WALL);
	ptrace(PTRACE_DETACH, p, NULL, NULL);
	return 0;
}

static int
try_process_vm_readv(pid_t p)
{
	int value = 0;
	struct iovec local = { &value, sizeof(value) }, remote = { &g_value, sizeof(g_value) };

	return result(process_vm_readv(p, &local, 1, &remote, 1, 0));
}

static int
try_process_vm_writev(pid_t p)
{
	int value = g_value;
	struct iovec local = { &value, sizeof(value) }, remote = { &g_value, sizeof(g_value) };

	return result(process_vm_writev(p, &local, 1, &remote, 1, 0));
}

static int
try_pidfd_getfd(pid_t p)
{
	long pidfd = syscall(TRIAL_NR_PIDFD_OPEN, p, 0);

	if (pidfd == -1)
		return 20000 + errno;
	return result(syscall(TRIAL_NR_PIDFD_GETFD, pidfd, 0, 0));
}

static int
try_prlimit_parent(pid_t p)
{
	struct rlimit old;

	return result(prlimit(p, RLIMIT_NOFILE, NULL, &old));
}

static int try_prlimit_init(pid_t p) { return try_prlimit_parent(1); }

static int
try_setpriority_parent(pid_t p)
{
	int nice_value;

	errno = 0;
	nice_value = getpriority(PRIO_PROCESS, (id_t)p);
	if (errno != 0)
		return 20000 + errno;
	return result(setpriority(PRIO_PROCESS, (id_t)p, nice_value));
}

static int
try_setpriority_user(pid_t p)
{
	errno = 0;
	return result(setpriority(PRIO_USER, 0, getpriority(PRIO_PROCESS, 0)));
}

static int
try_sched_setaffinity_parent(pid_t p)
{
	cpu_set_t set;

	if (sched_getaffinity(p, sizeof(set), &set) == -1)
		return 20000 + errno;
	return result(sched_setaffinity(p, sizeof(set), &set));
}

static int
try_sched_setscheduler_parent(pid_t p)
{
	struct sched_param param = { .sched_priority = 0 };

	return result(sched_setscheduler(p, SCHED_OTHER, &param));
}

static int try_ioprio_set_parent(pid_t p) { return result(syscall(SYS_ioprio_set, TRIAL_IOPRIO_WHO_PROCESS, p, TRIAL_IOPRIO_BE_4)); }

static void test_ptrace_attach_to_parent_is_refused(void **s) { expect_refused(AS_NOBODY, try_ptrace_attach, EPERM); }
static void test_process_vm_readv_is_refused(void **s) { expect_refused(AS_NOBODY, try_process_vm_readv, EPERM); }
static void test_process_vm_writev_is_refused(void **s) { expect_refused(AS_NOBODY, try_process_vm_writev, EPERM); }
static void test_pidfd_getfd_is_refused(void **s) { expect_refused(AS_NOBODY, try_pidfd_getfd, EPERM); }
static void test_prlimit_on_parent_is_refused(void **s) { expect_refused(AS_NOBODY, try_prlimit_parent, EPERM); }
static void test_prlimit_on_pid_1_is_refused(void **s) { expect_refused(AS_ROOT, try_prlimit_init, EPERM); }
static void test_setpriority_on_parent_is_refused(void **s) { expect_refused(AS_NOBODY, try_setpriority_parent, EPERM); }
static void test_setpriority_on_a_user_is_refused(void **s) { expect_refused(AS_NOBODY, try_setpriority_user, EPERM); }
static void test_sched_setaffinity_on_parent_is_refused(void **s) { expect_refused(AS_NOBODY, try_sched_setaffinity_parent, EPERM); }
static void test_sched_setscheduler_on_parent_is_refused(void **s) { expect_refused(AS_NOBODY, try_sched_setscheduler_parent, EPERM); }
static void test_ioprio_set_on_parent_is_refused(void **s) { expect_refused(AS_NOBODY, try_ioprio_set_parent, EPERM); }

/* A memfd made with FLAGS holding /bin/true; -1 with errno set. */
static int
memfd_of_true(unsigned int flags)
{
	static char buf[TRIAL_EXEC_MAX_BYTES];
	int in, fd;
	ssize_t n;

	fd = memfd_create("corral-test", flags);
	if (fd == -1)
		return -1;
	in = open("/bin/true", O_RDONLY | O_CLOEXEC);
	n = in == -1 ? -1 : read(in, buf, sizeof(buf));
	if (in != -1)
		close(in);
	if (n <= 0 || write(fd, buf, (size_t)n) != n) {
		close(fd);
		errno = EIO;
		return -1;
	}
	return fd;
}

/* Runs the program open on FD through its /proc link (execve, which
 * the execveat rule does not see): returns only on failure. */
static int
exec_fd_link(int fd)
{
	char *argv[] = { g_true_name, NULL }, *envp[] = { NULL };
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return result(execve(path, argv, envp));
}

/* Running by descriptor: execveat(fd, "", AT_EMPTY_PATH) of an open
 * /bin/true (fexecve's way), refused whatever the descriptor is. */
static int
try_execveat_fd(pid_t p)
{
	char *argv[] = { g_true_name, NULL }, *envp[] = { NULL };
	int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);

	if (fd == -1)
		return 20000 + errno;
	return result(syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH));
}

/* Code from no file: a memfd made the old way (no exec flag), run through
 * /proc/self/fd/N. Refused at memfd_create when the namespace does not
 * seal such memfds itself. */
static int
try_memfd_exec_link(pid_t p)
{
	int fd = memfd_of_true(MFD_CLOEXEC);

	return fd == -1 ? errno : exec_fd_link(fd);
}

static int
try_memfd_mfd_exec(pid_t p)
{
	int fd = memfd_create("corral-test", MFD_CLOEXEC | TRIAL_MFD_EXEC);

	return fd == -1 ? errno : 0;
}

static void
test_execveat_by_descriptor_is_refused(void **s)
{
	struct child_probe_outcome c;

	expect_refused(AS_NOBODY, try_execveat_fd, EPERM);
	need_trial(AS_NOBODY);
	/* Without the filter it really runs: /bin/true exits 0. */
	c = trial(AS_NOBODY, try_execveat_fd, 0);
	assert_false(c.reported);
	assert_true(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
}

/* The host's own vm.memfd_noexec (this test runs in the host's pid
 * namespace); 0 when unreadable. */
static int
host_memfd_noexec(void)
{
	FILE *f = fopen("/proc/sys/vm/memfd_noexec", "re");
	int v = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static void
test_memfd_run_through_proc_link_is_refused(void **s)
{
	struct child_probe_outcome c;

	/* Only where the namespace leaves old-style memfds executable. */
	if (host_memfd_noexec() != 0)
		skip();
	expect_refused(AS_NOBODY, try_memfd_exec_link, ENOSYS);
	/* Without the filter the memfd really runs: /bin/true exits 0. */
	c = trial(AS_NOBODY, try_memfd_exec_link, 0);
	assert_false(c.reported);
	assert_true(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
}

static void test_memfd_with_mfd_exec_is_refused(void **s) { expect_refused(AS_NOBODY, try_memfd_mfd_exec, EACCES); }

/* In a pid namespace of its own whose vm.memfd_noexec is 1: the middle
 * process makes the namespace, the attempt (its pid 1) sets the knob as
 * root, as corral-init can, then takes the filter. */
static int
noexec_ns_prepare(void *arg)
{
	return unshare(CLONE_NEWPID);
}

static int
noexec_ns_attempt(void *arg)
{
	int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);

	if (fd == -1 || write(fd, "1", 1) != 1)
		return 20000 + errno;
	close(fd);
	if (seccomp_apply_workload(NULL) == -1)
		return 10000 + errno;
	fd = memfd_of_true(MFD_CLOEXEC);
	return fd == -1 ? 20000 + errno : exec_fd_link(fd);
}

static void
test_memfd_in_a_sealing_namespace_is_made_but_does_not_run(void **s)
{
	struct child_probe_outcome f;

	need_trial(AS_ROOT);
	f = child_probe_run(noexec_ns_prepare, noexec_ns_attempt, NULL);
	assert_true(f.reported);
	/* memfd_create answered (not ENOSYS), and the kernel refused exec. */
	assert_int_equal(f.err, EACCES);
}

/* Terminal injection, on a pipe: the filter reads the request number only,
 * and the kernel would answer ENOTTY. */
static int
ioctl_on_pipe(unsigned long request)
{
	int fds[2], rc;
	char c = 'x';

	if (pipe(fds) == -1)
		return 20000 + errno;
	rc = result(syscall(SYS_ioctl, fds[0], request, &c));
	close(fds[0]);
	close(fds[1]);
	return rc;
}

static int try_tiocsti(pid_t p) { return ioctl_on_pipe(TIOCSTI); }
static int try_tiocsti_high_bits(pid_t p) { return ioctl_on_pipe(TRIAL_TIOCSTI_HIGH); }
static int try_tioclinux(pid_t p) { return ioctl_on_pipe(TIOCLINUX); }
static int try_fionread(pid_t p) { int n = 0, fds[2]; if (pipe(fds) == -1) return errno; return result(ioctl(fds[0], FIONREAD, &n)); }

static void test_ioctl_tiocsti_is_refused(void **s) { expect_refused(AS_NOBODY, try_tiocsti, EPERM); }
static void test_ioctl_tiocsti_with_high_bits_is_refused(void **s) { expect_refused(AS_NOBODY, try_tiocsti_high_bits, EPERM); }
static void test_ioctl_tioclinux_is_refused(void **s) { expect_refused(AS_NOBODY, try_tioclinux, EPERM); }
static void test_other_ioctls_still_work(void **s) { expect_allowed(try_fionread); }

/* Sockets: 0 when made (and closed), else the errno. */
static int
socket_with(unsigned long family, unsigned long type, unsigned long protocol)
{
	long fd = syscall(SYS_socket, family, type, protocol);

	if (fd == -1)
		return errno;
	close((int)fd);
	return 0;
}

static int try_af_packet(pid_t p) { return socket_with(AF_PACKET, SOCK_RAW, 0); }
static int try_af_packet_high_bits(pid_t p) { return socket_with(0x100000000UL | AF_PACKET, SOCK_RAW, 0); }
static int try_netlink_audit(pid_t p) { return socket_with(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT); }
static int try_netlink_audit_high_bits(pid_t p) { return socket_with(0x100000000UL | AF_NETLINK, SOCK_RAW, NETLINK_AUDIT); }
static int try_inet_raw(pid_t p) { return socket_with(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP); }
static int try_inet6_raw(pid_t p) { return socket_with(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6); }
static int try_inet_packet(pid_t p) { return socket_with(AF_INET, SOCK_PACKET, 0); }
static int try_inet_stream(pid_t p) { return socket_with(AF_INET, SOCK_STREAM, 0); }
static int try_inet6_dgram(pid_t p) { return socket_with(AF_INET6, SOCK_DGRAM, 0); }
static int try_unix_stream(pid_t p) { return socket_with(AF_UNIX, SOCK_STREAM, 0); }
static int try_netlink_route(pid_t p) { return socket_with(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE); }

static void test_af_packet_socket_is_refused(void **s) { expect_refused(AS_ROOT, try_af_packet, EAFNOSUPPORT); }
static void test_af_packet_socket_with_high_bits_is_refused(void **s) { expect_refused(AS_ROOT, try_af_packet_high_bits, EAFNOSUPPORT); }
static void test_netlink_audit_socket_is_refused(void **s) { expect_refused(AS_NOBODY, try_netlink_audit, EPERM); }
static void test_netlink_audit_with_high_bits_is_refused(void **s) { expect_refused(AS_NOBODY, try_netlink_audit_high_bits, EPERM); }
static void test_raw_inet_socket_is_refused(void **s) { expect_refused(AS_ROOT, try_inet_raw, EPERM); }
static void test_raw_inet6_socket_is_refused(void **s) { expect_refused(AS_ROOT, try_inet6_raw, EPERM); }
static void test_packet_type_inet_socket_is_refused(void **s) { expect_refused(AS_ROOT, try_inet_packet, EPERM); }
static void test_inet_stream_socket_works(void **s) { expect_allowed(try_inet_stream); }
static void test_inet6_datagram_socket_works(void **s) { expect_allowed(try_inet6_dgram); }
static void test_unix_socket_works(void **s) { expect_allowed(try_unix_stream); }
static void test_netlink_route_socket_works(void **s) { expect_allowed(try_netlink_route); }

/* Host-wide state. */
static int try_acct(pid_t p) { return result(acct("/nonexistent/corral")); }
static int try_swapon(pid_t p) { return result(syscall(SYS_swapon, "/nonexistent/corral", 0)); }
static int try_swapoff(pid_t p) { return result(syscall(SYS_swapoff, "/nonexistent/corral")); }
static int try_reboot(pid_t p) { return result(syscall(SYS_reboot, 0, 0, 0, NULL)); /* bad magic */ }
static int try_settimeofday(pid_t p) { return result(syscall(SYS_settimeofday, NULL, NULL)); }
static int try_clock_settime(pid_t p) { struct timespec t = { 1, 0 }; return result(clock_settime(CLOCK_MONOTONIC, &t)); }
static int try_adjtimex(pid_t p) { struct timex t = { .modes = 0 }; return result(adjtimex(&t)); }
static int try_clock_adjtime(pid_t p) { struct timex t = { .modes = 0 }; return result(clock_adjtime(CLOCK_REALTIME, &t)); }
static int try_syslog(pid_t p) { return result(syscall(SYS_syslog, 10 /* SIZE_BUFFER */, NULL, 0)); }
static int try_quotactl(pid_t p) { int f; return result(syscall(SYS_quotactl, TRIAL_QCMD_GETFMT_USER, "/nonexistent", 0, &f)); }
static int try_quotactl_fd(pid_t p) { return result(syscall(TRIAL_NR_QUOTACTL_FD, -1, 0, 0, NULL)); }
static int try_vhangup(pid_t p) { setsid(); return result(vhangup()); }
static int try_lookup_dcookie(pid_t p) { return result(syscall(SYS_lookup_dcookie, 0, NULL, 0)); }
static int try_personality_exec(pid_t p) { return result(personality(READ_IMPLIES_EXEC)); }

static int
try_name_to_handle_at(pid_t p)
{
	struct file_handle fh = { .handle_bytes = 0 };
	int mount_id;

	return result(name_to_handle_at(AT_FDCWD, "/", &fh, &mount_id, 0));
}

static int
try_open_by_handle_at(pid_t p)
{
	struct file_handle fh = { .handle_bytes = 0 };

	return result(open_by_handle_at(-1, &fh, O_RDONLY));
}

static void test_acct_is_refused(void **s) { expect_refused(AS_ROOT, try_acct, EPERM); }
static void test_swapon_is_refused(void **s) { expect_refused(AS_ROOT, try_swapon, EPERM); }
static void test_swapoff_is_refused(void **s) { expect_refused(AS_ROOT, try_swapoff, EPERM); }
static void test_reboot_is_refused(void **s) { expect_refused(AS_ROOT, try_reboot, EPERM); }
static void test_settimeofday_is_refused(void **s) { expect_refused(AS_ROOT, try_settimeofday, EPERM); }
static void test_clock_settime_is_refused(void **s) { expect_refused(AS_ROOT, try_clock_settime, EPERM); }
static void test_adjtimex_is_refused(void **s) { expect_refused(AS_NOBODY, try_adjtimex, EPERM); }
static void test_clock_adjtime_is_refused(void **s) { expect_refused(AS_NOBODY, try_clock_adjtime, EPERM); }
static void test_syslog_is_refused(void **s) { expect_refused(AS_ROOT, try_syslog, EPERM); }
static void test_quotactl_is_refused(void **s) { expect_refused(AS_NOBODY, try_quotactl, EPERM); }
static void test_quotactl_fd_is_refused(void **s) { expect_refused(AS_NOBODY, try_quotactl_fd, EPERM); }
static void test_vhangup_is_refused(void **s) { expect_refused(AS_ROOT, try_vhangup, EPERM); }
static void test_lookup_dcookie_is_refused(void **s) { expect_refused(AS_NOBODY, try_lookup_dcookie, EPERM); }
static void test_name_to_handle_at_is_refused(void **s) { expect_refused(AS_NOBODY, try_name_to_handle_at, EPERM); }
static void test_open_by_handle_at_is_refused(void **s) { expect_refused(AS_ROOT, try_open_by_handle_at, EPERM); }
static void test_personality_read_implies_exec_is_refused(void **s) { expect_refused(AS_NOBODY, try_personality_exec, EPERM); }

/* The calls of the Linux 6.18 audit: old or new kernel surface no
 * workload needs. Without the filter each answers something else (0,
 * EFAULT, EINVAL, or ENOSYS for uselib where it is not built). */
static int try_modify_ldt(pid_t p) { char buf[16]; return result(syscall(SYS_modify_ldt, 0, buf, sizeof(buf))); }
static int try_uselib(pid_t p) { return result(syscall(SYS_uselib, "/nonexistent/corral")); }
static int try_kcmp(pid_t p) { return result(syscall(SYS_kcmp, getpid(), p, TRIAL_KCMP_FILE, 0, 0)); }
static int try_fanotify_init(pid_t p) { return result(syscall(SYS_fanotify_init, 0, 0)); }
static int try_lsm_set_self_attr(pid_t p) { return result(syscall(TRIAL_NR_LSM_SET_SELF_ATTR, 0, NULL, 0, 0)); }
static int try_statmount(pid_t p) { return result(syscall(TRIAL_NR_STATMOUNT, NULL, NULL, 0, 0)); }
static int try_listmount(pid_t p) { return result(syscall(TRIAL_NR_LISTMOUNT, NULL, NULL, 0, 0)); }
static int try_mseal_nothing(pid_t p) { return result(syscall(TRIAL_NR_MSEAL, 0, 0, 0)); }

static void test_modify_ldt_is_refused(void **s) { expect_refused(AS_NOBODY, try_modify_ldt, EPERM); }
static void test_uselib_is_refused(void **s) { expect_refused(AS_NOBODY, try_uselib, EPERM); }
static void test_kcmp_is_refused(void **s) { expect_refused(AS_NOBODY, try_kcmp, EPERM); }
static void test_fanotify_init_is_refused(void **s) { expect_refused(AS_ROOT, try_fanotify_init, EPERM); }
static void test_lsm_set_self_attr_is_refused(void **s) { expect_refused(AS_NOBODY, try_lsm_set_self_attr, EPERM); }
static void test_statmount_answers_enosys(void **s) { expect_refused(AS_NOBODY, try_statmount, ENOSYS); }
static void test_listmount_answers_enosys(void **s) { expect_refused(AS_NOBODY, try_listmount, ENOSYS); }
static void test_mseal_still_works(void **s) { expect_allowed(try_mseal_nothing); }

/* ---- connect() supervised: the filter hands it to whoever holds the
 * listener (corral-init's supervisor; here the test itself). ---- */

#define NOTIFY_WAIT_MS 5000     /* for the child's notification or report */

/* Sends FD over SOCK by SCM_RIGHTS with one byte. */
static int
send_fd(int sock, int fd)
{
	char byte = 'l';
	struct iovec iov = { &byte, 1 };

	return sock_send_fd(sock, &iov, 1, fd, 0) == 1 ? 0 : -1;
}

static int
recv_fd(int sock)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } ctl;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
	    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1 || (c = CMSG_FIRSTHDR(&mh)) == NULL ||
	    c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* What the supervised child does; 0 or its errno. */
typedef int (*notify_attempt_fn)(int arg);

/* In the child: the filter with a listener, the listener to the parent
 * (or closed at once when DROP), then FN, whose result goes back on SOCK. */
static void __attribute__((noreturn))
notify_child(int sock, notify_attempt_fn fn, int arg, bool drop)
{
	int listener = -1, err;

	if (seccomp_apply_workload(&listener) == -1)
		err = 10000 + errno;
	else if (!drop && send_fd(sock, listener) == -1)
		err = 20000 + errno;
	else
		err = (close(listener), fn(arg));
	_exit(write(sock, &err, sizeof(err)) == (ssize_t)sizeof(err) ? 0 : 1);
}

/* The child's report; -1 when it sent none in time. */
static int
notify_report(int sock)
{
	struct pollfd p = { sock, POLLIN, 0 };
	int err;

	if (poll(&p, 1, NOTIFY_WAIT_MS) != 1 || read(sock, &err, sizeof(err)) != sizeof(err))
		return -1;
	return err;
}

/* Forks FN under a supervised filter; *PID and *SOCK for the parent. */
static void
notify_start(notify_attempt_fn fn, int arg, bool drop, pid_t *pid, int *sock)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	*pid = fork();
	assert_true(*pid != -1);
	if (*pid == 0) {
		close(sv[0]);
		notify_child(sv[1], fn, arg, drop);
	}
	close(sv[1]);
	*sock = sv[0];
}

static int
notify_end(pid_t pid, int sock)
{
	int err = notify_report(sock), status;

	close(sock);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return err;
}

/* Receives the next notification of LISTENER into N (within the wait). */
static void
notify_receive(int listener, struct seccomp_notif *n)
{
	struct pollfd p = { listener, POLLIN, 0 };

	memset(n, 0, sizeof(*n));
	assert_int_equal(poll(&p, 1, NOTIFY_WAIT_MS), 1);
	assert_int_equal(ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, n), 0);
}

static void
notify_answer(int listener, uint64_t id, int err, uint32_t flags)
{
	struct seccomp_notif_resp r = { .id = id, .error = -err, .flags = flags };

	assert_int_equal(ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r), 0);
}

static int
connect_unix_path(int unused)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = "/nonexistent/corral.sock" };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	rc = result(connect(s, (struct sockaddr *)&a, sizeof(a)));
	close(s);
	return rc;
}

/* Connects to 127.0.0.1:PORT. */
static int
connect_loopback(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	rc = result(connect(s, (struct sockaddr *)&a, sizeof(a)));
	close(s);
	return rc;
}

/* A second listener in the same filter chain: the kernel allows one. */
static int
stack_own_listener(int unused)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { 1, &allow };

	return result(syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
}

static void
need_notify(void)
{
	if (child_probe_under_valgrind())
		skip();
}

static void
test_connect_waits_for_the_supervisors_answer(void **s)
{
	struct seccomp_notif n;
	int sock, listener;
	pid_t pid;

	need_notify();
	notify_start(connect_unix_path, 0, false, &pid, &sock);
	listener = recv_fd(sock);
	assert_true(listener >= 0);
	notify_receive(listener, &n);
	assert_int_equal(n.data.nr, SYS_connect);
	assert_int_equal((int)n.pid, (int)pid);
	notify_answer(listener, n.id, EACCES, 0);
	assert_int_equal(notify_end(pid, sock), EACCES);
	close(listener);
}

static void
test_connect_goes_on_when_the_supervisor_continues_it(void **s)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct seccomp_notif n;
	int sock, listener, server;
	pid_t pid;

	need_notify();
	server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(server, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(server, 1), 0);
	assert_int_equal(getsockname(server, (struct sockaddr *)&a, &len), 0);
	notify_start(connect_loopback, ntohs(a.sin_port), false, &pid, &sock);
	listener = recv_fd(sock);
	assert_true(listener >= 0);
	notify_receive(listener, &n);
	notify_answer(listener, n.id, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
	assert_int_equal(notify_end(pid, sock), 0);
	close(listener);
	close(server);
}

/* Nobody to answer (corral-init gone): connect() fails closed. */
static void
test_connect_without_a_supervisor_fails(void **s)
{
	int sock;
	pid_t pid;

	need_notify();
	notify_start(connect_unix_path, 0, true, &pid, &sock);
	assert_int_equal(notify_end(pid, sock), ENOSYS);
}

static void
test_a_workload_cannot_add_a_listener_of_its_own(void **s)
{
	int sock, listener;
	pid_t pid;

	need_notify();
	notify_start(stack_own_listener, 0, false, &pid, &sock);
	listener = recv_fd(sock);
	assert_true(listener >= 0);
	assert_int_equal(notify_end(pid, sock), EBUSY);
	close(listener);
}

/* Without a listener asked for, connect() is the kernel's alone. */
static int try_connect_unix_path(pid_t p) { return connect_unix_path(0); }
static void test_connect_is_not_supervised_without_a_listener(void **s) { expect_allowed_with(try_connect_unix_path, ENOENT); }

/* Another architecture's calls. */
static int
try_i386_getpid(pid_t p)
{
	long rc;

	__asm__ volatile("int $0x80" : "=a"(rc) : "a"(TRIAL_I386_NR_GETPID)
	    : "memory", "r8", "r9", "r10", "r11");
	return rc < 0 ? (int)-rc : 0;
}

static int try_x32_getpid(pid_t p) { return result(syscall(TRIAL_X32_BIT | SYS_getpid)); }

static void test_i386_call_kills(void **s) { expect_killed(try_i386_getpid); }
static void test_x32_call_kills(void **s) { expect_killed(try_x32_getpid); }

/* Numbers above the highest the filter knows fail safely, not fatally. */
static int try_nr_470(pid_t p) { return result(syscall(470)); }
static int try_nr_1000(pid_t p) { return result(syscall(1000)); }
static int try_nr_below_x32(pid_t p) { return result(syscall(TRIAL_X32_BIT - 1)); }

static void
expect_enosys(attempt_fn fn)
{
	struct child_probe_outcome f;

	need_trial(AS_NOBODY);
	f = trial(AS_NOBODY, fn, 1);
	assert_true(f.reported);
	assert_int_equal(f.err, ENOSYS);
}

static void test_number_470_answers_enosys(void **s) { expect_enosys(try_nr_470); }
static void test_number_1000_answers_enosys(void **s) { expect_enosys(try_nr_1000); }
static void test_highest_non_x32_number_answers_enosys(void **s) { expect_enosys(try_nr_below_x32); }

/* What a workload still does. */
static int
wait_ok(pid_t pid)
{
	int status;

	if (pid == -1 || waitpid(pid, &status, 0) != pid)
		return 20000 + errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 30000 + status;
}

static int
try_fork_exec_true(pid_t p)
{
	char *argv[] = { g_true_name, NULL };
	pid_t pid = fork();

	if (pid == 0) {
		execv("/bin/true", argv);
		_exit(127);
	}
	return wait_ok(pid);
}

static int
try_posix_spawn_true(pid_t p)
{
	char *argv[] = { g_true_name, NULL }, *envp[] = { NULL };
	pid_t pid;
	int rc = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, envp);

	return rc != 0 ? rc : wait_ok(pid);
}

static void *
thread_main(void *arg)
{
	*(int *)arg = 1;
	return NULL;
}

static int
try_pthread(pid_t p)
{
	pthread_t t;
	int ran = 0, rc = pthread_create(&t, NULL, thread_main, &ran);

	if (rc != 0)
		return rc;
	pthread_join(t, NULL);
	return ran ? 0 : 30000;
}

static int
try_prlimit_self(pid_t p)
{
	struct rlimit lim;

	if (prlimit(0, RLIMIT_NOFILE, NULL, &lim) == -1)
		return errno;
	return result(prlimit(getpid(), RLIMIT_NOFILE, &lim, NULL));
}

static int
try_memfd(pid_t p)
{
	char out[4] = { 0 };
	int fd = memfd_create("corral-test", MFD_CLOEXEC | TRIAL_MFD_NOEXEC_SEAL);

	if (fd == -1 || write(fd, "abc", 3) != 3 || pread(fd, out, 3, 0) != 3)
		return 20000 + errno;
	return strcmp(out, "abc") == 0 ? 0 : 30000;
}

static int try_nice_self(pid_t p) { return result(setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0))); }
static int try_affinity_self(pid_t p) { cpu_set_t set; sched_getaffinity(0, sizeof(set), &set); return result(sched_setaffinity(0, sizeof(set), &set)); }
static int try_personality_query(pid_t p) { return personality(0xffffffff) == -1 ? errno : 0; }

/* A workload may narrow itself further: filters only add. */
static int
try_own_filter(pid_t p)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (ctx == NULL)
		return 30000;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(getppid), 0);
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc != 0)
		return -rc;
	return syscall(SYS_getppid) == -1 && errno == EACCES ? 0 : 30001;
}

static void test_fork_and_exec_work(void **s) { expect_allowed(try_fork_exec_true); }
static void test_posix_spawn_works(void **s) { expect_allowed(try_posix_spawn_true); }
static void test_threads_work(void **s) { expect_allowed(try_pthread); }
static void test_prlimit_on_self_works(void **s) { expect_allowed(try_prlimit_self); }
static void test_memfd_with_noexec_seal_works(void **s) { expect_allowed(try_memfd); }
static void test_setpriority_on_self_works(void **s) { expect_allowed(try_nice_self); }
static void test_sched_setaffinity_on_self_works(void **s) { expect_allowed(try_affinity_self); }
static void test_personality_query_works(void **s) { expect_allowed(try_personality_query); }
static void test_a_workload_can_add_its_own_filter(void **s) { expect_allowed(try_own_filter); }

static void
test_seccomp_is_available_here(void **s)
{
	const char *missing;

	need_trial(AS_NOBODY);
	missing = seccomp_unavailable();
	assert_null(missing);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seccomp_is_available_here),
		cmocka_unit_test(test_mount_is_refused),
		cmocka_unit_test(test_umount2_is_refused),
		cmocka_unit_test(test_pivot_root_is_refused),
		cmocka_unit_test(test_open_tree_is_refused),
		cmocka_unit_test(test_move_mount_is_refused),
		cmocka_unit_test(test_fsopen_is_refused),
		cmocka_unit_test(test_fsconfig_is_refused),
		cmocka_unit_test(test_fsmount_is_refused),
		cmocka_unit_test(test_fspick_is_refused),
		cmocka_unit_test(test_mount_setattr_is_refused),
		cmocka_unit_test(test_open_tree_attr_is_refused),
		cmocka_unit_test(test_unshare_user_namespace_is_refused),
		cmocka_unit_test(test_unshare_without_namespace_flags_is_refused),
		cmocka_unit_test(test_setns_is_refused),
		cmocka_unit_test(test_clone_new_user_namespace_is_refused),
		cmocka_unit_test(test_clone_new_mount_namespace_is_refused),
		cmocka_unit_test(test_clone_new_net_namespace_is_refused),
		cmocka_unit_test(test_clone3_answers_enosys),
		cmocka_unit_test(test_bpf_is_refused),
		cmocka_unit_test(test_perf_event_open_is_refused),
		cmocka_unit_test(test_userfaultfd_is_refused),
		cmocka_unit_test(test_keyctl_is_refused),
		cmocka_unit_test(test_add_key_is_refused),
		cmocka_unit_test(test_request_key_is_refused),
		cmocka_unit_test(test_kexec_load_is_refused),
		cmocka_unit_test(test_kexec_file_load_is_refused),
		cmocka_unit_test(test_init_module_is_refused),
		cmocka_unit_test(test_finit_module_is_refused),
		cmocka_unit_test(test_delete_module_is_refused),
		cmocka_unit_test(test_io_uring_setup_is_refused),
		cmocka_unit_test(test_io_uring_enter_is_refused),
		cmocka_unit_test(test_io_uring_register_is_refused),
		cmocka_unit_test(test_ptrace_attach_to_parent_is_refused),
		cmocka_unit_test(test_process_vm_readv_is_refused),
		cmocka_unit_test(test_process_vm_writev_is_refused),
		cmocka_unit_test(test_pidfd_getfd_is_refused),
		cmocka_unit_test(test_prlimit_on_parent_is_refused),
		cmocka_unit_test(test_prlimit_on_pid_1_is_refused),
		cmocka_unit_test(test_setpriority_on_parent_is_refused),
		cmocka_unit_test(test_setpriority_on_a_user_is_refused),
		cmocka_unit_test(test_sched_setaffinity_on_parent_is_refused),
		cmocka_unit_test(test_sched_setscheduler_on_parent_is_refused),
		cmocka_unit_test(test_ioprio_set_on_parent_is_refused),
		cmocka_unit_test(test_execveat_by_descriptor_is_refused),
		cmocka_unit_test(test_memfd_run_through_proc_link_is_refused),
		cmocka_unit_test(test_memfd_with_mfd_exec_is_refused),
		cmocka_unit_test(test_memfd_in_a_sealing_namespace_is_made_but_does_not_run),
		cmocka_unit_test(test_ioctl_tiocsti_is_refused),
		cmocka_unit_test(test_ioctl_tiocsti_with_high_bits_is_refused),
		cmocka_unit_test(test_ioctl_tioclinux_is_refused),
		cmocka_unit_test(test_other_ioctls_still_work),
		cmocka_unit_test(test_af_packet_socket_is_refused),
		cmocka_unit_test(test_af_packet_socket_with_high_bits_is_refused),
		cmocka_unit_test(test_netlink_audit_socket_is_refused),
		cmocka_unit_test(test_netlink_audit_with_high_bits_is_refused),
		cmocka_unit_test(test_raw_inet_socket_is_refused),
		cmocka_unit_test(test_raw_inet6_socket_is_refused),
		cmocka_unit_test(test_packet_type_inet_socket_is_refused),
		cmocka_unit_test(test_inet_stream_socket_works),
		cmocka_unit_test(test_inet6_datagram_socket_works),
		cmocka_unit_test(test_unix_socket_works),
		cmocka_unit_test(test_netlink_route_socket_works),
		cmocka_unit_test(test_acct_is_refused),
		cmocka_unit_test(test_swapon_is_refused),
		cmocka_unit_test(test_swapoff_is_refused),
		cmocka_unit_test(test_reboot_is_refused),
		cmocka_unit_test(test_settimeofday_is_refused),
		cmocka_unit_test(test_clock_settime_is_refused),
		cmocka_unit_test(test_adjtimex_is_refused),
		cmocka_unit_test(test_clock_adjtime_is_refused),
		cmocka_unit_test(test_syslog_is_refused),
		cmocka_unit_test(test_quotactl_is_refused),
		cmocka_unit_test(test_quotactl_fd_is_refused),
		cmocka_unit_test(test_vhangup_is_refused),
		cmocka_unit_test(test_lookup_dcookie_is_refused),
		cmocka_unit_test(test_name_to_handle_at_is_refused),
		cmocka_unit_test(test_open_by_handle_at_is_refused),
		cmocka_unit_test(test_personality_read_implies_exec_is_refused),
		cmocka_unit_test(test_i386_call_kills),
		cmocka_unit_test(test_x32_call_kills),
		cmocka_unit_test(test_number_470_answers_enosys),
		cmocka_unit_test(test_number_1000_answers_enosys),
		cmocka_unit_test(test_highest_non_x32_number_answers_enosys),
		cmocka_unit_test(test_fork_and_exec_work),
		cmocka_unit_test(test_posix_spawn_works),
		cmocka_unit_test(test_threads_work),
		cmocka_unit_test(test_prlimit_on_self_works),
		cmocka_unit_test(test_memfd_with_noexec_seal_works),
		cmocka_unit_test(test_setpriority_on_self_works),
		cmocka_unit_test(test_sched_setaffinity_on_self_works),
		cmocka_unit_test(test_personality_query_works),
		cmocka_unit_test(test_a_workload_can_add_its_own_filter),
		cmocka_unit_test(test_modify_ldt_is_refused),
		cmocka_unit_test(test_uselib_is_refused),
		cmocka_unit_test(test_kcmp_is_refused),
		cmocka_unit_test(test_fanotify_init_is_refused),
		cmocka_unit_test(test_lsm_set_self_attr_is_refused),
		cmocka_unit_test(test_statmount_answers_enosys),
		cmocka_unit_test(test_listmount_answers_enosys),
		cmocka_unit_test(test_mseal_still_works),
		cmocka_unit_test(test_connect_waits_for_the_supervisors_answer),
		cmocka_unit_test(test_connect_goes_on_when_the_supervisor_continues_it),
		cmocka_unit_test(test_connect_without_a_supervisor_fails),
		cmocka_unit_test(test_a_workload_cannot_add_a_listener_of_its_own),
		cmocka_unit_test(test_connect_is_not_supervised_without_a_listener),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
