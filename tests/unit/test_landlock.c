/* Landlock layers, tried: a process (nobody, when the tests run as root)
 * applies a layer over a scratch tree and attempts what it grants and what
 * it forbids. Each forbidden attempt is first shown to work without the
 * layer in the same process, so a refusal can only come from Landlock. The
 * attempting process's parent is of the same uid, as corral-init is to a
 * workload, and listens on an abstract Unix socket for the scope tests. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "broker/init/landlock.h"
#include "tests/unit/child-probe.h"

/* The most file descriptors nftw keeps open while removing the tree. */
#define TREE_NFTW_FDS 16
/* An attempt's answer when the same step failed without the layer. */
#define CONTROL_FAILED 10000

/* The scratch tree: ro/ and rw/ are granted, out/ never is. */
struct tree {
	char base[PATH_MAX];
	char ro[PATH_MAX], rw[PATH_MAX], out[PATH_MAX];
	char pts[PATH_MAX];   /* a pseudo-terminal's slave, for ioctl tests */
	int ptmx;
};

/* One attempt: 0 or the errno of the step under test. */
typedef int (*attempt_fn)(const struct tree *t);

/* PATH (PATH_MAX bytes) made of DIR, a slash and NAME. */
static void
join(char *path, const char *dir, const char *name)
{
	int n = snprintf(path, PATH_MAX, "%s/%s", dir, name);

	assert_true(n > 0 && n < PATH_MAX);
}

static void
make_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	int fd;

	join(path, dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	assert_true(fd != -1);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int
chown_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return lchown(path, CHILD_PROBE_NOBODY_ID, CHILD_PROBE_NOBODY_ID);
}

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* A pseudo-terminal the attempting process may open. */
static void
make_pty(struct tree *t)
{
	t->ptmx = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(t->ptmx != -1);
	assert_int_equal(grantpt(t->ptmx), 0);
	assert_int_equal(unlockpt(t->ptmx), 0);
	assert_int_equal(ptsname_r(t->ptmx, t->pts, sizeof(t->pts)), 0);
	if (geteuid() == 0)
		assert_int_equal(chown(t->pts, CHILD_PROBE_NOBODY_ID, CHILD_PROBE_NOBODY_ID), 0);
}

static int
tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	snprintf(t->base, sizeof(t->base), "/tmp/corral-landlock-XXXXXX");
	assert_non_null(mkdtemp(t->base));
	join(t->ro, t->base, "ro");
	join(t->rw, t->base, "rw");
	join(t->out, t->base, "out");
	assert_int_equal(mkdir(t->ro, 0755), 0);
	assert_int_equal(mkdir(t->rw, 0755), 0);
	assert_int_equal(mkdir(t->out, 0755), 0);
	make_file(t->ro, "f", "hello");
	make_file(t->rw, "f", "hello");
	make_file(t->out, "f", "outside");
	if (geteuid() == 0)
		assert_int_equal(nftw(t->base, chown_entry, TREE_NFTW_FDS, FTW_PHYS), 0);
	make_pty(t);
	*state = t;
	return 0;
}

static int
tree_teardown(void **state)
{
	struct tree *t = *state;

	close(t->ptmx);
	nftw(t->base, remove_entry, TREE_NFTW_FDS, FTW_DEPTH | FTW_PHYS);
	free(t);
	return 0;
}

/* The abstract socket name the parent of process PID listens on. */
static socklen_t
abstract_name(struct sockaddr_un *sun, pid_t pid)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, "corral-landlock-%d", (int)pid);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sun->sun_path + 1));
}

static int
listen_abstract(void)
{
	struct sockaddr_un sun;
	socklen_t len = abstract_name(&sun, getpid());
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd == -1 || bind(fd, (struct sockaddr *)&sun, len) == -1 || listen(fd, 4) == -1)
		return -1;
	return fd;
}

/* One trial: the tree and what to attempt under it. */
struct trial_args {
	const struct tree *t;
	attempt_fn fn;
};

/* The outside process: nobody, listening. */
static int
outsider_prepare(void *arg)
{
	(void)arg;
	return child_probe_become_nobody() == -1 || listen_abstract() == -1 ? -1 : 0;
}

static int
trial_attempt(void *arg)
{
	const struct trial_args *a = arg;

	return a->fn(a->t);
}

/* Runs FN under the tree T; its answer (-1 when it gave none). */
static int
trial(const struct tree *t, attempt_fn fn)
{
	struct trial_args a = { t, fn };
	struct child_probe_outcome o = child_probe_run(outsider_prepare, trial_attempt, &a);

	return o.reported ? o.err : -1;
}

/* Skips a trial on a kernel (or under a tool) below ABI: valgrind (3.19)
 * does not know the Landlock calls, so under it rulesets can be built and
 * freed, not applied. */
static void
need_abi(int abi)
{
	if (child_probe_under_valgrind() || landlock_abi() < abi)
		skip();
}

static void need_landlock(void) { need_abi(1); }
static void need_scopes(void) { need_abi(LL_ABI_FULL); }

/* Applies one layer: ro/ read-only and rw/ read-write, at ABI. */
static int
apply_layer_at(const struct tree *t, int abi)
{
	struct ll_ruleset *rs = ll_new(abi);
	int rc = -1;

	if (rs != NULL && ll_allow_path(rs, t->ro, LL_READ_ONLY) == 0 &&
	    ll_allow_path(rs, t->rw, LL_READ_WRITE) == 0)
		rc = ll_restrict_self(rs);
	ll_free(rs);
	return rc;
}

static int
apply_layer(const struct tree *t)
{
	return apply_layer_at(t, landlock_abi());
}

/* 0 when PATH opens with FLAGS (and is closed), else errno. */
static int
open_errno(const char *dir, const char *name, int flags)
{
	char path[PATH_MAX];
	int fd;

	join(path, dir, name);
	fd = open(path, flags | O_CLOEXEC, 0644);
	if (fd == -1)
		return errno;
	close(fd);
	return 0;
}

static int
rename_errno(const char *from_dir, const char *from, const char *to_dir, const char *to)
{
	char a[PATH_MAX], b[PATH_MAX];

	join(a, from_dir, from);
	join(b, to_dir, to);
	return rename(a, b) == -1 ? errno : 0;
}

static int
unlink_errno(const char *dir, const char *name)
{
	char path[PATH_MAX];

	join(path, dir, name);
	return unlink(path) == -1 ? errno : 0;
}

/* Read-only folders. */
static int
try_read_ro(const struct tree *t)
{
	char buf[8] = { 0 }, path[PATH_MAX];
	int fd;

	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	join(path, t->ro, "f");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return errno;
	if (read(fd, buf, sizeof(buf) - 1) != 5)
		return EIO;
	close(fd);
	return strcmp(buf, "hello") == 0 ? open_errno(t->ro, ".", O_RDONLY | O_DIRECTORY) : EIO;
}

static int
try_write_ro(const struct tree *t)
{
	if (open_errno(t->ro, "f", O_WRONLY) != 0)
		return CONTROL_FAILED;
	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	return open_errno(t->ro, "f", O_WRONLY);
}

static int
try_create_ro(const struct tree *t)
{
	if (open_errno(t->ro, "control", O_WRONLY | O_CREAT) != 0)
		return CONTROL_FAILED;
	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	return open_errno(t->ro, "new", O_WRONLY | O_CREAT);
}

static int
try_rename_ro(const struct tree *t)
{
	if (rename_errno(t->ro, "f", t->ro, "g") != 0 || rename_errno(t->ro, "g", t->ro, "f") != 0)
		return CONTROL_FAILED;
	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	return rename_errno(t->ro, "f", t->ro, "g");
}

static int
try_unlink_ro(const struct tree *t)
{
	if (open_errno(t->ro, "victim", O_WRONLY | O_CREAT) != 0)
		return CONTROL_FAILED;
	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	return unlink_errno(t->ro, "victim");
}

/* truncate(2) by path: TRUNCATE (ABI 3) is handled, so refused here. */
static int
try_truncate_ro(const struct tree *t)
{
	char path[PATH_MAX];

	join(path, t->ro, "f");
	if (truncate(path, 5) == -1)
		return CONTROL_FAILED;
	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	return truncate(path, 0) == -1 ? errno : 0;
}

static void
test_read_only_dir_refuses_truncating(void **s)
{
	need_abi(3);
	assert_int_equal(trial(*s, try_truncate_ro), EACCES);
}

static void test_read_only_dir_can_be_read(void **s) { need_landlock(); assert_int_equal(trial(*s, try_read_ro), 0); }
static void test_read_only_dir_refuses_writing_a_file(void **s) { need_landlock(); assert_int_equal(trial(*s, try_write_ro), EACCES); }
static void test_read_only_dir_refuses_creating_a_file(void **s) { need_landlock(); assert_int_equal(trial(*s, try_create_ro), EACCES); }
static void test_read_only_dir_refuses_renaming(void **s) { need_landlock(); assert_int_equal(trial(*s, try_rename_ro), EACCES); }
static void test_read_only_dir_refuses_unlinking(void **s) { need_landlock(); assert_int_equal(trial(*s, try_unlink_ro), EACCES); }

/* Read-write folders. */
static int
try_create_write_unlink_rw(const struct tree *t)
{
	char path[PATH_MAX];
	int fd, rc;

	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	join(path, t->rw, "new");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd == -1)
		return errno;
	rc = write(fd, "data", 4) == 4 ? 0 : errno;
	close(fd);
	if (rc == 0 && mkdir(path, 0755) == -1 && errno != EEXIST)
		rc = errno;
	return rc != 0 ? rc : unlink_errno(t->rw, "new");
}

/* The shell's `>`: open with O_TRUNC (TRUNCATE, ABI 3). */
static int
try_truncate_rw(const struct tree *t)
{
	char path[PATH_MAX];
	struct stat st;
	int rc;

	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	rc = open_errno(t->rw, "f", O_WRONLY | O_TRUNC);
	join(path, t->rw, "f");
	if (rc == 0 && stat(path, &st) == 0 && st.st_size != 0)
		rc = EIO;
	return rc;
}

/* A rename from one folder to another (REFER, ABI 2). */
static int
rename_across(const struct tree *t, int abi)
{
	char s1[PATH_MAX], s2[PATH_MAX];

	join(s1, t->rw, "s1");
	join(s2, t->rw, "s2");
	if (mkdir(s1, 0755) == -1 || mkdir(s2, 0755) == -1 ||
	    open_errno(s1, "f", O_WRONLY | O_CREAT) != 0)
		return CONTROL_FAILED;
	if (apply_layer_at(t, abi) == -1)
		return CONTROL_FAILED + errno;
	return rename_errno(s1, "f", s2, "f");
}

static int try_rename_across_rw(const struct tree *t) { return rename_across(t, landlock_abi()); }
static int try_rename_across_abi1(const struct tree *t) { return rename_across(t, 1); }

static void test_read_write_dir_allows_create_write_unlink(void **s) { need_landlock(); assert_int_equal(trial(*s, try_create_write_unlink_rw), 0); }
static void test_read_write_dir_allows_truncating_open(void **s) { need_landlock(); assert_int_equal(trial(*s, try_truncate_rw), 0); }
static void test_read_write_dir_allows_rename_across_folders(void **s) { need_landlock(); assert_int_equal(trial(*s, try_rename_across_rw), 0); }
static void test_abi1_layer_refuses_rename_across_folders(void **s) { need_landlock(); assert_int_equal(trial(*s, try_rename_across_abi1), EXDEV); }

/* What is not granted. */
static int
try_open_out(const struct tree *t)
{
	if (open_errno(t->out, "f", O_RDONLY) != 0)
		return CONTROL_FAILED;
	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	return open_errno(t->out, "f", O_RDONLY);
}

/* A symlink in rw/ pointing at out/: no writing through it. */
static int
try_symlink_out(const struct tree *t)
{
	char target[PATH_MAX], link[PATH_MAX];

	join(target, t->out, "f");
	join(link, t->rw, "link");
	if (symlink(target, link) == -1 || open_errno(t->rw, "link", O_WRONLY) != 0)
		return CONTROL_FAILED;
	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	return open_errno(t->rw, "link", O_WRONLY);
}

/* Nor creating a file outside through a dangling one. */
static int
try_symlink_out_creates(const struct tree *t)
{
	char target[PATH_MAX], link[PATH_MAX];

	join(target, t->out, "new");
	join(link, t->rw, "dangling");
	if (symlink(target, link) == -1)
		return CONTROL_FAILED;
	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	return open_errno(t->rw, "dangling", O_WRONLY | O_CREAT);
}

/* A hard link from out/ into rw/: a host file brought into a root. */
static int
try_link_in(const struct tree *t)
{
	char from[PATH_MAX], to[PATH_MAX];

	join(from, t->out, "f");
	join(to, t->rw, "linked");
	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	return link(from, to) == -1 ? errno : 0;
}

static void test_path_not_granted_cannot_be_opened(void **s) { need_landlock(); assert_int_equal(trial(*s, try_open_out), EACCES); }
static void test_symlink_in_writable_dir_cannot_write_outside(void **s) { need_landlock(); assert_int_equal(trial(*s, try_symlink_out), EACCES); }
static void test_symlink_in_writable_dir_cannot_create_outside(void **s) { need_landlock(); assert_int_equal(trial(*s, try_symlink_out_creates), EACCES); }
static void test_hard_link_from_outside_is_refused(void **s) { need_landlock(); assert_int_equal(trial(*s, try_link_in), EXDEV); }

/* A rule on a file (not a folder) gets the file rights only. */
static int
try_file_rule(const struct tree *t)
{
	char path[PATH_MAX];
	struct ll_ruleset *rs = ll_new(landlock_abi());
	int rc;

	join(path, t->out, "f");
	if (rs == NULL || ll_allow_path(rs, path, LL_READ_WRITE) == -1 || ll_restrict_self(rs) == -1)
		rc = CONTROL_FAILED + errno;
	else if ((rc = open_errno(t->out, "f", O_WRONLY | O_TRUNC)) == 0)
		rc = open_errno(t->out, "sibling", O_WRONLY | O_CREAT) == EACCES ? 0 : EIO;
	ll_free(rs);
	return rc;
}

static void test_file_rule_grants_that_file_only(void **s) { need_landlock(); assert_int_equal(trial(*s, try_file_rule), 0); }

/* Device nodes: a terminal's ioctls need LL_TERMINAL (IOCTL_DEV, ABI 5). */
static int
winsize_with(const struct tree *t, enum ll_access access)
{
	struct ll_ruleset *rs = ll_new(landlock_abi());
	struct winsize ws;
	int fd, rc;

	if (rs == NULL || ll_allow_path(rs, t->pts, access) == -1 || ll_restrict_self(rs) == -1) {
		ll_free(rs);
		return CONTROL_FAILED + errno;
	}
	ll_free(rs);
	fd = open(t->pts, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd == -1)
		return CONTROL_FAILED + errno;
	rc = ioctl(fd, TIOCGWINSZ, &ws) == -1 ? errno : 0;
	close(fd);
	return rc;
}

static int try_terminal_ioctl(const struct tree *t) { return winsize_with(t, LL_TERMINAL); }
static int try_dev_ioctl(const struct tree *t) { return winsize_with(t, LL_DEV); }

static int
try_dev_null_truncating_open(const struct tree *t)
{
	struct ll_ruleset *rs = ll_new(landlock_abi());
	int rc;

	if (rs == NULL || ll_allow_path(rs, "/dev/null", LL_DEV) == -1 || ll_restrict_self(rs) == -1)
		rc = CONTROL_FAILED + errno;
	else
		rc = open_errno("/dev", "null", O_WRONLY | O_TRUNC);
	ll_free(rs);
	return rc;
}

static void
test_terminal_node_allows_ioctl(void **s)
{
	need_landlock();
	assert_int_equal(trial(*s, try_terminal_ioctl), 0);
}

static void
test_dev_node_refuses_ioctl(void **s)
{
	need_abi(5);
	assert_int_equal(trial(*s, try_dev_ioctl), EACCES);
}

static void test_dev_node_allows_truncating_open(void **s) { need_landlock(); assert_int_equal(trial(*s, try_dev_null_truncating_open), 0); }

/* Scopes (ABI 6): the layer cannot signal or reach the outside. */
static int
apply_scoped(const struct tree *t, unsigned int scopes)
{
	struct ll_ruleset *rs = ll_new(landlock_abi());
	int rc = -1;

	if (rs != NULL && ll_allow_path(rs, t->rw, LL_READ_WRITE) == 0 && ll_scope(rs, scopes) == 0)
		rc = ll_restrict_self(rs);
	ll_free(rs);
	return rc;
}

static int
connect_parent(void)
{
	struct sockaddr_un sun;
	socklen_t len = abstract_name(&sun, getppid());
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd == -1)
		return CONTROL_FAILED + errno;
	rc = connect(fd, (struct sockaddr *)&sun, len) == -1 ? errno : 0;
	close(fd);
	return rc;
}

static int
try_signal_out(const struct tree *t)
{
	if (kill(getppid(), 0) == -1)
		return CONTROL_FAILED;
	if (apply_scoped(t, LL_SCOPE_SIGNAL) == -1)
		return CONTROL_FAILED + errno;
	return kill(getppid(), 0) == -1 ? errno : 0;
}

/* Signals inside the layer (a workload and its own children) still work. */
static int
try_signal_in(const struct tree *t)
{
	pid_t pid;
	int rc;

	if (apply_scoped(t, LL_SCOPE_SIGNAL) == -1)
		return CONTROL_FAILED + errno;
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	rc = kill(pid, SIGKILL) == -1 ? errno : 0;
	waitpid(pid, NULL, 0);
	return rc;
}

static int
try_abstract_out(const struct tree *t)
{
	if (connect_parent() != 0)
		return CONTROL_FAILED;
	if (apply_scoped(t, LL_SCOPE_ABSTRACT_UNIX) == -1)
		return CONTROL_FAILED + errno;
	return connect_parent();
}

static void test_signal_scope_refuses_signal_outside(void **s) { need_scopes(); assert_int_equal(trial(*s, try_signal_out), EPERM); }
static void test_signal_scope_allows_signal_inside(void **s) { need_scopes(); assert_int_equal(trial(*s, try_signal_in), 0); }
static void test_abstract_unix_scope_refuses_connect_outside(void **s) { need_scopes(); assert_int_equal(trial(*s, try_abstract_out), EPERM); }

/* Nesting: a second layer narrows and never widens. */
static int
layer_one(const char *dir, enum ll_access access)
{
	struct ll_ruleset *rs = ll_new(landlock_abi());
	int rc = -1;

	if (rs != NULL && ll_allow_path(rs, dir, access) == 0)
		rc = ll_restrict_self(rs);
	ll_free(rs);
	return rc;
}

static int
try_nested_narrows(const struct tree *t)
{
	if (layer_one(t->rw, LL_READ_WRITE) == -1 || open_errno(t->rw, "f", O_WRONLY) != 0)
		return CONTROL_FAILED;
	if (layer_one(t->rw, LL_READ_ONLY) == -1)
		return CONTROL_FAILED + errno;
	return open_errno(t->rw, "f", O_WRONLY);
}

static int
try_nested_cannot_widen(const struct tree *t)
{
	if (layer_one(t->rw, LL_READ_ONLY) == -1 || open_errno(t->rw, "f", O_RDONLY) != 0)
		return CONTROL_FAILED;
	if (layer_one(t->rw, LL_READ_WRITE) == -1)
		return CONTROL_FAILED + errno;
	return open_errno(t->rw, "f", O_WRONLY);
}

static void test_nested_layer_narrows(void **s) { need_landlock(); assert_int_equal(trial(*s, try_nested_narrows), EACCES); }
static void test_nested_layer_cannot_widen(void **s) { need_landlock(); assert_int_equal(trial(*s, try_nested_cannot_widen), EACCES); }

/* no_new_privs comes with the layer. */
static int
try_no_new_privs(const struct tree *t)
{
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 0)
		return CONTROL_FAILED;
	if (apply_layer(t) == -1)
		return CONTROL_FAILED + errno;
	return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : EIO;
}

static void test_restrict_self_sets_no_new_privs(void **s) { need_landlock(); assert_int_equal(trial(*s, try_no_new_privs), 0); }

/* The builder's own checks, with no layer applied. */
static void
test_new_refuses_abi_0(void **s)
{
	errno = 0;
	assert_null(ll_new(0));
	assert_int_equal(errno, EOPNOTSUPP);
}

static void
test_scope_below_abi_6_is_refused(void **s)
{
	struct ll_ruleset *rs = ll_new(5);

	assert_non_null(rs);
	assert_int_equal(ll_scope(rs, LL_SCOPE_SIGNAL), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	ll_free(rs);
}

static void
test_allow_path_refuses_missing_path(void **s)
{
	struct ll_ruleset *rs = ll_new(1);

	assert_non_null(rs);
	assert_int_equal(ll_allow_path(rs, "/nonexistent/corral", LL_READ_ONLY), -1);
	assert_int_equal(errno, ENOENT);
	ll_free(rs);
}

static void
test_ruleset_holds_at_most_the_rule_limit(void **s)
{
	struct ll_ruleset *rs = ll_new(1);
	int i;

	assert_non_null(rs);
	for (i = 0; i < LL_RULES_MAX; i++)
		assert_int_equal(ll_allow_path(rs, "/", LL_READ_ONLY), 0);
	assert_int_equal(ll_allow_path(rs, "/", LL_READ_ONLY), -1);
	assert_int_equal(errno, ENOSPC);
	ll_free(rs);
}

static void
test_abi_of_this_kernel_is_detected(void **s)
{
	/* The development and CI kernels have Landlock ABI 6 or later. */
	if (child_probe_under_valgrind())
		skip();
	assert_true(landlock_abi() >= LL_ABI_FULL);
}

static void
test_status_names_missing_scopes_below_abi_6(void **s)
{
	struct ll_status st;

	ll_status(5, &st);
	assert_int_equal(st.n_missing, 1);
	assert_string_equal(st.missing[0], "Landlock ABI 5 < 6 (scopes)");
	ll_status(1, &st);
	assert_string_equal(st.missing[0], "Landlock ABI 1 < 6 (scopes)");
}

static void
test_status_has_nothing_missing_from_abi_6(void **s)
{
	struct ll_status st;

	ll_status(6, &st);
	assert_int_equal(st.n_missing, 0);
	ll_status(7, &st);
	assert_int_equal(st.n_missing, 0);
}

static void
test_status_names_absent_landlock(void **s)
{
	struct ll_status st;

	ll_status(0, &st);
	assert_int_equal(st.n_missing, 1);
	assert_non_null(strstr(st.missing[0], "Landlock unavailable"));
}

#define TREE_TEST(f) cmocka_unit_test_setup_teardown(f, tree_setup, tree_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi_of_this_kernel_is_detected),
		cmocka_unit_test(test_status_names_missing_scopes_below_abi_6),
		cmocka_unit_test(test_status_has_nothing_missing_from_abi_6),
		cmocka_unit_test(test_status_names_absent_landlock),
		cmocka_unit_test(test_new_refuses_abi_0),
		cmocka_unit_test(test_scope_below_abi_6_is_refused),
		cmocka_unit_test(test_allow_path_refuses_missing_path),
		cmocka_unit_test(test_ruleset_holds_at_most_the_rule_limit),
		TREE_TEST(test_read_only_dir_can_be_read),
		TREE_TEST(test_read_only_dir_refuses_writing_a_file),
		TREE_TEST(test_read_only_dir_refuses_creating_a_file),
		TREE_TEST(test_read_only_dir_refuses_renaming),
		TREE_TEST(test_read_only_dir_refuses_unlinking),
		TREE_TEST(test_read_only_dir_refuses_truncating),
		TREE_TEST(test_read_write_dir_allows_create_write_unlink),
		TREE_TEST(test_read_write_dir_allows_truncating_open),
		TREE_TEST(test_read_write_dir_allows_rename_across_folders),
		TREE_TEST(test_abi1_layer_refuses_rename_across_folders),
		TREE_TEST(test_path_not_granted_cannot_be_opened),
		TREE_TEST(test_symlink_in_writable_dir_cannot_write_outside),
		TREE_TEST(test_symlink_in_writable_dir_cannot_create_outside),
		TREE_TEST(test_hard_link_from_outside_is_refused),
		TREE_TEST(test_file_rule_grants_that_file_only),
		TREE_TEST(test_terminal_node_allows_ioctl),
		TREE_TEST(test_dev_node_refuses_ioctl),
		TREE_TEST(test_dev_node_allows_truncating_open),
		TREE_TEST(test_signal_scope_refuses_signal_outside),
		TREE_TEST(test_signal_scope_allows_signal_inside),
		TREE_TEST(test_abstract_unix_scope_refuses_connect_outside),
		TREE_TEST(test_nested_layer_narrows),
		TREE_TEST(test_nested_layer_cannot_widen),
		TREE_TEST(test_restrict_self_sets_no_new_privs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
