/* Tests of broker/cgroup. Discovery runs on fake trees in a temporary
 * folder and needs nothing. The rest makes real cgroups and needs root and
 * a cgroup v2 hierarchy; without them those tests are skipped. Everything
 * real lives under the instances test<pid> and test<pid>-b, removed at the
 * end, failures included; leftovers of earlier runs whose process is gone
 * are swept first. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sched.h>

#include <cmocka.h>

#include "broker/monitor/cgroup.h"

#define TEST_PIDS_LIMIT 20
#define TEST_MEMORY_LIMIT_BYTES (64ULL << 20)
#define TEST_CPU_MILLI 500
#define TEST_FORK_TRIES 200
#define TEST_HOG_BYTES (200UL << 20)
#define TEST_PAGE_BYTES 4096
#define TEST_GONE_WAIT_MS 1000          /* for a killed process to finish exiting */
#define TEST_WAIT_MS 5000               /* for a child to end */
#define TEST_RUN_MS 20                  /* how long a forking tree runs before the kill */
#define TEST_BENCH_RUNS 100
#define TEST_BUDGET_US 20000            /* a whole sandbox's create-to-ready */
#define TEST_TEXT_MAX_BYTES 4096
#define TEST_NAMES_MAX 16

static struct cgroup_host host;
static bool ready;                      /* root and a v2 hierarchy */
static char inst[32], inst_b[32];
static const struct cgroup_limits test_limits = {
	TEST_PIDS_LIMIT, TEST_MEMORY_LIMIT_BYTES, TEST_CPU_MILLI
};

/* Text of DIR/FILE with trailing newlines cut, in BUF; "" when unreadable. */
static const char *
read_text(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, buf, size - 1);
		close(fd);
	}
	buf[n < 0 ? 0 : n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return buf;
}

static void
write_text(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static bool
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder of sandbox NAME of INSTANCE in HIER, into OUT (PATH_MAX). */
static void
leaf_path(char *out, const struct cgroup_hier *hier, const char *instance, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s/corral-%s/%s", hier->base, instance, name);

	assert_true(n > 0 && n < PATH_MAX);
}

/* The folder where RES of sandbox NAME is limited; "" when nowhere. */
static void
limit_dir(char *out, enum cgroup_resource res, const char *name)
{
	enum cgroup_source src = cgroup_host_source(&host, res);

	out[0] = '\0';
	if (src != CGROUP_SOURCE_NONE)
		leaf_path(out, src == CGROUP_SOURCE_V2 ? &host.v2 : &host.v1[res], inst, name);
}

/* --- fake trees for discovery --- */

#define TEST_FAKE_DIR_MAX_BYTES 256

struct fake {
	char dir[TEST_FAKE_DIR_MAX_BYTES];
	char mountinfo[TEST_TEXT_MAX_BYTES];
};

static int
fake_setup(void **state)
{
	struct fake *fk = calloc(1, sizeof(*fk));
	const char *tmp = getenv("TMPDIR");

	if (fk == NULL)
		return -1;
	snprintf(fk->dir, sizeof(fk->dir), "%s/test_cgroup.XXXXXX", tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(fk->dir) == NULL)
		return -1;
	*state = fk;
	return 0;
}

static int
fake_teardown(void **state)
{
	struct fake *fk = *state;
	char cmd[PATH_MAX + 16];
	int ret;

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fk->dir);
	ret = system(cmd);
	free(fk);
	return ret == 0 ? 0 : -1;
}

/* Makes DIR/SUB (and its parents) and, when CONTROLLERS is not NULL, a
 * cgroup.controllers holding it, an empty subtree_control and PROCS. */
static void
fake_cgroup(struct fake *fk, const char *sub, const char *controllers, const char *procs)
{
	char path[PATH_MAX], cmd[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/%s", fk->dir, sub);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	if (controllers == NULL)
		return;
	write_text(path, "cgroup.controllers", controllers);
	write_text(path, "cgroup.subtree_control", "");
	write_text(path, "cgroup.procs", procs);
}

/* Adds a mountinfo line mounting FSTYPE with SUPER options at DIR/SUB. */
static void
fake_mount(struct fake *fk, const char *root, const char *sub, const char *fstype, const char *super)
{
	size_t len = strlen(fk->mountinfo);

	snprintf(fk->mountinfo + len, sizeof(fk->mountinfo) - len,
	    "%zu 31 0:%zu %s %s/%s rw,relatime shared:9 - %s %s %s\n", 40 + len % 50, len % 50, root,
	    fk->dir, sub, fstype, fstype, super);
}

static void
test_hybrid_host_takes_every_limit_from_v1(void **state)
{
	struct fake *fk = *state;
	struct cgroup_host h;
	char want[PATH_MAX];

	fake_cgroup(fk, "unified", "hugetlb\n", "1\n");
	fake_mount(fk, "/", "cpu", "cgroup", "rw,cpu");
	fake_mount(fk, "/", "memory", "cgroup", "rw,memory");
	fake_mount(fk, "/", "pids", "cgroup", "rw,pids");
	fake_mount(fk, "/", "unified", "cgroup2", "rw");
	assert_int_equal(cgroup_host_discover_from(&h, fk->mountinfo,
	    "8:pids:/\n4:memory:/process_api/x\n1:cpu:/\n0::/\n", NULL), 0);
	snprintf(want, sizeof(want), "%s/unified", fk->dir);
	assert_string_equal(h.v2.base, want);
	snprintf(want, sizeof(want), "%s/memory/process_api/x", fk->dir);
	assert_string_equal(h.v1[CGROUP_MEMORY].base, want);
	assert_string_equal(h.v1[CGROUP_MEMORY].rel, "/process_api/x");
	for (int r = 0; r < CGROUP_RESOURCES; r++)
		assert_int_equal(cgroup_host_source(&h, r), CGROUP_SOURCE_V1);
	assert_false(h.v2_needs_leaf);
}

static void
test_pure_v2_host_with_processes_in_base_needs_a_leaf(void **state)
{
	struct fake *fk = *state;
	struct cgroup_host h;
	char want[PATH_MAX];

	fake_cgroup(fk, "cg", "cpu memory pids\n", "1\n");
	fake_cgroup(fk, "cg/system.slice/corrald.service", "cpu memory pids\n", "4242\n");
	fake_mount(fk, "/", "cg", "cgroup2", "rw,nsdelegate");
	assert_int_equal(cgroup_host_discover_from(&h, fk->mountinfo,
	    "0::/system.slice/corrald.service\n", NULL), 0);
	snprintf(want, sizeof(want), "%s/cg/system.slice/corrald.service", fk->dir);
	assert_string_equal(h.v2.base, want);
	for (int r = 0; r < CGROUP_RESOURCES; r++)
		assert_int_equal(cgroup_host_source(&h, r), CGROUP_SOURCE_V2);
	assert_true(h.v2_needs_leaf);
}

static void
test_pure_v2_host_with_empty_base_needs_no_leaf(void **state)
{
	struct fake *fk = *state;
	struct cgroup_host h;

	fake_cgroup(fk, "cg/svc", "cpu memory pids\n", "");
	fake_mount(fk, "/", "cg", "cgroup2", "rw");
	assert_int_equal(cgroup_host_discover_from(&h, fk->mountinfo, "0::/svc\n", NULL), 0);
	assert_int_equal(cgroup_host_source(&h, CGROUP_PIDS), CGROUP_SOURCE_V2);
	assert_false(h.v2_needs_leaf);
}

static void
test_root_cgroup_needs_no_leaf(void **state)
{
	struct fake *fk = *state;
	struct cgroup_host h;

	fake_cgroup(fk, "cg", "cpu memory pids\n", "1\n2\n");
	fake_mount(fk, "/", "cg", "cgroup2", "rw");
	assert_int_equal(cgroup_host_discover_from(&h, fk->mountinfo, "0::/\n", NULL), 0);
	assert_int_equal(cgroup_host_source(&h, CGROUP_MEMORY), CGROUP_SOURCE_V2);
	assert_false(h.v2_needs_leaf);
}

static void
test_daemon_leaf_makes_its_parent_the_base(void **state)
{
	struct fake *fk = *state;
	struct cgroup_host h;
	char want[PATH_MAX];

	fake_cgroup(fk, "cg/svc", "cpu memory pids\n", "");
	fake_mount(fk, "/", "cg", "cgroup2", "rw");
	assert_int_equal(cgroup_host_discover_from(&h, fk->mountinfo, "0::/svc/corrald-main\n", NULL), 0);
	snprintf(want, sizeof(want), "%s/cg/svc", fk->dir);
	assert_string_equal(h.v2.base, want);
	assert_string_equal(h.v2.rel, "/svc");
}

static void
test_limit_without_any_controller_is_not_enforced(void **state)
{
	struct fake *fk = *state;
	struct cgroup_host h;

	fake_cgroup(fk, "cg", "memory pids\n", "");
	fake_mount(fk, "/", "cg", "cgroup2", "rw");
	assert_int_equal(cgroup_host_discover_from(&h, fk->mountinfo, "0::/\n", NULL), 0);
	assert_int_equal(cgroup_host_source(&h, CGROUP_MEMORY), CGROUP_SOURCE_V2);
	assert_int_equal(cgroup_host_source(&h, CGROUP_CPU), CGROUP_SOURCE_NONE);
}

static void
test_comounted_cpu_is_found_and_cpuset_is_not_cpu(void **state)
{
	struct fake *fk = *state;
	struct cgroup_host h;
	char want[PATH_MAX];

	fake_cgroup(fk, "unified", "", "");
	fake_cgroup(fk, "cpu set", NULL, NULL);
	fake_mount(fk, "/", "cpu\\040set", "cgroup", "rw,cpuset");
	fake_mount(fk, "/", "unified", "cgroup2", "rw");
	assert_int_equal(cgroup_host_discover_from(&h, fk->mountinfo, "3:cpuset:/\n0::/\n", NULL), 0);
	assert_int_equal(cgroup_host_source(&h, CGROUP_CPU), CGROUP_SOURCE_NONE);
	fake_mount(fk, "/", "cpu,cpuacct", "cgroup", "rw,cpu,cpuacct");
	assert_int_equal(cgroup_host_discover_from(&h, fk->mountinfo,
	    "3:cpuset:/\n2:cpu,cpuacct:/a\n0::/\n", NULL), 0);
	assert_int_equal(cgroup_host_source(&h, CGROUP_CPU), CGROUP_SOURCE_V1);
	snprintf(want, sizeof(want), "%s/cpu,cpuacct/a", fk->dir);
	assert_string_equal(h.v1[CGROUP_CPU].base, want);
}

static void
test_mount_point_escapes_are_undone(void **state)
{
	struct fake *fk = *state;
	struct cgroup_host h;
	char want[PATH_MAX];

	fake_cgroup(fk, "my cg", "pids\n", "");
	fake_mount(fk, "/", "my\\040cg", "cgroup2", "rw");
	assert_int_equal(cgroup_host_discover_from(&h, fk->mountinfo, "0::/\n", NULL), 0);
	snprintf(want, sizeof(want), "%s/my cg", fk->dir);
	assert_string_equal(h.v2.base, want);
	assert_int_equal(cgroup_host_source(&h, CGROUP_PIDS), CGROUP_SOURCE_V2);
}

static void
test_bind_mounted_subtree_is_not_used(void **state)
{
	struct fake *fk = *state;
	struct cgroup_host h;

	fake_cgroup(fk, "cg", "pids\n", "");
	fake_mount(fk, "/sub", "cg", "cgroup2", "rw");
	assert_int_equal(cgroup_host_discover_from(&h, fk->mountinfo, "0::/sub\n", NULL), 0);
	assert_string_equal(h.v2.base, "");
	assert_int_equal(cgroup_host_source(&h, CGROUP_PIDS), CGROUP_SOURCE_NONE);
}

static void
test_create_without_v2_is_refused(void **state)
{
	struct cgroup_host h;
	struct cgroup_sandbox *sb = NULL;
	char *err = NULL;

	memset(&h, 0, sizeof(h));
	assert_int_equal(cgroup_sandbox_create(&h, "inst", "box", &test_limits, &sb, &err), -1);
	assert_null(sb);
	assert_non_null(strstr(err, "no cgroup v2"));
	free(err);
}

static void
test_names_that_are_not_sandbox_names_are_refused(void **state)
{
	static const char *const bad[] = { "../etc", "", "A", "a/b", "-a", "." };
	struct cgroup_host h;
	struct cgroup_sandbox *sb = NULL;
	char *err = NULL;

	memset(&h, 0, sizeof(h));
	snprintf(h.v2.base, sizeof(h.v2.base), "/nonexistent");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(cgroup_sandbox_create(&h, "inst", bad[i], &test_limits, &sb, &err), -1);
		assert_non_null(strstr(err, "sandbox name"));
		free(err);
		err = NULL;
		assert_int_equal(cgroup_remove_by_name(&h, bad[i], "box", &err), -1);
		assert_non_null(strstr(err, "instance id"));
		free(err);
		err = NULL;
	}
}

/* A warm sandbox's leaf is "warm_" and a slot: no sandbox can be named
 * so, and nothing else passes as one. */
static void
test_warm_leaf_names_are_their_own(void **state)
{
	static const char *const good[] = { "warm_0", "warm_16383", "box", "a-1" };
	static const char *const bad[] = { "warm_", "warm_x", "warm_1/..", "warm_123456",
		"warm-1_", "_warm1", "warm_-1", "warm_1 " };

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(cgroup_leaf_name_valid(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(cgroup_leaf_name_valid(bad[i]));
}

static void
test_cpu_limit_below_the_kernel_floor_is_refused(void **state)
{
	struct cgroup_limits lim = { 0, 0, CGROUP_CPU_MIN_MILLI - 1 };
	struct cgroup_host h;
	struct cgroup_sandbox *sb = NULL;
	char *err = NULL;

	memset(&h, 0, sizeof(h));
	snprintf(h.v2.base, sizeof(h.v2.base), "/nonexistent");
	assert_int_equal(cgroup_sandbox_create(&h, "inst", "box", &lim, &sb, &err), -1);
	assert_non_null(strstr(err, "milli-CPUs"));
	free(err);
}

/* --- real cgroups --- */

/* Removes instances test<pid>... of earlier runs whose process is gone. */
static void
sweep_hier(const struct cgroup_hier *hier)
{
	struct dirent *de;
	DIR *d = hier->base[0] == '\0' ? NULL : opendir(hier->base);
	char *end;
	long pid;

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "corral-test", 11) != 0)
			continue;
		pid = strtol(de->d_name + 11, &end, 10);
		if (end == de->d_name + 11 || (*end != '\0' && *end != '-') || pid <= 0 ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		printf("# sweeping %s/%s, left by an earlier run\n", hier->base, de->d_name);
		cgroup_instance_remove(&host, de->d_name + strlen("corral-"), NULL);
	}
	if (d != NULL)
		closedir(d);
}

static int
real_setup(void **state)
{
	char *err = NULL;

	snprintf(inst, sizeof(inst), "test%ld", (long)getpid());
	snprintf(inst_b, sizeof(inst_b), "test%ld-b", (long)getpid());
	if (geteuid() != 0)
		return 0;
	if (cgroup_host_discover(&host, &err) == -1) {
		printf("# %s\n", err);
		free(err);
		return -1;
	}
	if (host.v2.base[0] == '\0')
		return 0;
	sweep_hier(&host.v2);
	for (int r = 0; r < CGROUP_RESOURCES; r++)
		sweep_hier(&host.v1[r]);
	ready = true;
	return 0;
}

static int
real_teardown(void **state)
{
	char *err = NULL;
	int ret = 0;

	if (!ready)
		return 0;
	if (cgroup_instance_remove(&host, inst, &err) == -1 ||
	    cgroup_instance_remove(&host, inst_b, &err) == -1) {
		printf("# cleanup: %s\n", err);
		free(err);
		ret = -1;
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return ret;
}

/* After each real test, failed ones included: nothing of it stays. */
static int
real_test_teardown(void **state)
{
	return real_teardown(state);
}

static void
require_real(void)
{
	if (!ready)
		skip();
}

/* Creates sandbox NAME of instance INSTANCE with LIM, asserting success. */
static struct cgroup_sandbox *
make_sandbox(const char *instance, const char *name, const struct cgroup_limits *lim)
{
	struct cgroup_sandbox *sb = NULL;
	char *err = NULL;

	if (cgroup_sandbox_create(&host, instance, name, lim, &sb, &err) == -1)
		fail_msg("create %s: %s", name, err);
	return sb;
}

static void
drop_sandbox(struct cgroup_sandbox *sb)
{
	char *err = NULL;

	if (cgroup_sandbox_remove(sb, &err) == -1)
		fail_msg("remove: %s", err);
	cgroup_sandbox_free(sb);
}

/* A child started the way corral-init must be: it waits until the parent
 * has joined it to every cgroup of SB, then runs FN(REPORT). */
static pid_t
spawn(struct cgroup_sandbox *sb, void (*fn)(int report), int *report)
{
	int go[2], rep[2];
	char byte = 0, *err = NULL;
	pid_t pid;

	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		close(go[1]);
		close(rep[0]);
		if (read(go[0], &byte, 1) != 1)
			_exit(127);
		fn(rep[1]);
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	if (cgroup_sandbox_join(sb, pid, &err) == -1)
		fail_msg("join: %s", err);
	assert_int_equal(write(go[1], &byte, 1), 1);
	close(go[1]);
	*report = rep[0];
	return pid;
}

/* Reaps child PID, failing instead of hanging when it does not end within
 * TEST_WAIT_MS (a kill that did nothing). */
static void
wait_kid(pid_t pid, int *status)
{
	for (int ms = 0; ms < TEST_WAIT_MS; ms++) {
		pid_t got = waitpid(pid, status, WNOHANG);

		assert_true(got == 0 || got == pid);
		if (got == pid)
			return;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	fail_msg("child %ld still runs after %d ms", (long)pid, TEST_WAIT_MS);
}

/* Sleeps until killed. */
static void
kid_sleep(int report)
{
	for (;;)
		pause();
}

static void
test_limits_are_written_and_their_sources_reported(void **state)
{
	struct cgroup_sandbox *sb;
	char dir[PATH_MAX], text[TEST_TEXT_MAX_BYTES];
	static const char *const name[] = { "v2", "v1", "none" };
	enum cgroup_source src;

	require_real();
	sb = make_sandbox(inst, "limits", &test_limits);
	for (int r = 0; r < CGROUP_RESOURCES; r++) {
		src = cgroup_host_source(&host, r);
		assert_string_equal(cgroup_limit_source(sb, r),
		    name[src == CGROUP_SOURCE_V2 ? 0 : src == CGROUP_SOURCE_V1 ? 1 : 2]);
	}
	printf("# limits: pids %s, memory %s, cpu %s\n", cgroup_limit_source(sb, CGROUP_PIDS),
	    cgroup_limit_source(sb, CGROUP_MEMORY), cgroup_limit_source(sb, CGROUP_CPU));
	limit_dir(dir, CGROUP_PIDS, "limits");
	if (dir[0] != '\0')
		assert_string_equal(read_text(dir, "pids.max", text, sizeof(text)), "20");
	limit_dir(dir, CGROUP_MEMORY, "limits");
	if (cgroup_host_source(&host, CGROUP_MEMORY) == CGROUP_SOURCE_V2)
		assert_string_equal(read_text(dir, "memory.max", text, sizeof(text)), "67108864");
	else if (dir[0] != '\0')
		assert_string_equal(read_text(dir, "memory.limit_in_bytes", text, sizeof(text)), "67108864");
	limit_dir(dir, CGROUP_CPU, "limits");
	if (cgroup_host_source(&host, CGROUP_CPU) == CGROUP_SOURCE_V2)
		assert_string_equal(read_text(dir, "cpu.max", text, sizeof(text)), "50000 100000");
	else if (dir[0] != '\0') {
		assert_string_equal(read_text(dir, "cpu.cfs_quota_us", text, sizeof(text)), "50000");
		assert_string_equal(read_text(dir, "cpu.cfs_period_us", text, sizeof(text)), "100000");
	}
	drop_sandbox(sb);
}

static void
test_memory_limit_excludes_swap(void **state)
{
	struct cgroup_sandbox *sb;
	char dir[PATH_MAX], path[PATH_MAX + 32], text[TEST_TEXT_MAX_BYTES];
	bool v2 = cgroup_host_source(&host, CGROUP_MEMORY) == CGROUP_SOURCE_V2;
	const char *file = v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes";

	require_real();
	sb = make_sandbox(inst, "swap", &test_limits);
	limit_dir(dir, CGROUP_MEMORY, "swap");
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (dir[0] == '\0' || access(path, F_OK) != 0) {
		drop_sandbox(sb);
		skip();
	}
	assert_string_equal(read_text(dir, file, text, sizeof(text)), v2 ? "0" : "67108864");
	drop_sandbox(sb);
}

/* Forks up to TEST_FORK_TRIES sleeping children; reports how many forks
 * worked and the errno of the first that did not. */
static void
kid_fork_bomb(int report)
{
	int msg[2] = { 0, 0 };
	pid_t pid;

	for (int i = 0; i < TEST_FORK_TRIES; i++) {
		if ((pid = fork()) == 0) {
			pause();
			_exit(0);
		}
		if (pid == -1) {
			msg[1] = errno;
			break;
		}
		msg[0]++;
	}
	if (write(report, msg, sizeof(msg)) != sizeof(msg))
		_exit(1);
	for (;;)
		pause();
}

static void
test_fork_bomb_stops_at_the_pids_limit(void **state)
{
	struct cgroup_sandbox *sb;
	int report, msg[2], status;
	char *err = NULL;
	pid_t pid;

	require_real();
	if (cgroup_host_source(&host, CGROUP_PIDS) == CGROUP_SOURCE_NONE)
		skip();
	sb = make_sandbox(inst, "forkbomb", &test_limits);
	pid = spawn(sb, kid_fork_bomb, &report);
	assert_int_equal(read(report, msg, sizeof(msg)), sizeof(msg));
	close(report);
	assert_int_equal(msg[0], TEST_PIDS_LIMIT - 1);
	assert_int_equal(msg[1], EAGAIN);
	if (cgroup_sandbox_kill(sb, &err) == -1)
		fail_msg("kill: %s", err);
	wait_kid(pid, &status);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	drop_sandbox(sb);
}

/* Allocates TEST_HOG_BYTES and touches every page. */
static void
kid_memory_hog(int report)
{
	char *p = mmap(NULL, TEST_HOG_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(2);
	for (size_t off = 0; off < TEST_HOG_BYTES; off += TEST_PAGE_BYTES)
		p[off] = 1;
	_exit(0);
}

static void
test_memory_hog_is_oom_killed(void **state)
{
	struct cgroup_sandbox *sb;
	int report, status;
	pid_t pid;

	require_real();
	if (cgroup_host_source(&host, CGROUP_MEMORY) == CGROUP_SOURCE_NONE)
		skip();
	sb = make_sandbox(inst, "hog", &test_limits);
	pid = spawn(sb, kid_memory_hog, &report);
	close(report);
	wait_kid(pid, &status);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	drop_sandbox(sb);
}

/* State and start time of PID from /proc/PID/stat; 0 when it is gone. */
static char
proc_state(pid_t pid, unsigned long long *start)
{
	char path[64], text[TEST_TEXT_MAX_BYTES], *p;
	int field = 3;

	snprintf(path, sizeof(path), "/proc/%ld", (long)pid);
	read_text(path, "stat", text, sizeof(text));
	if ((p = strrchr(text, ')')) == NULL || strlen(p) < 3)
		return 0;
	for (char *q = p + 2; *q != '\0' && field < 22; q++)
		if (*q == ' ' && ++field == 22)
			*start = strtoull(q + 1, NULL, 10);
	return p[2];
}

/* True while the process PID that started at START runs (a zombie does not). */
static bool
still_running(pid_t pid, unsigned long long start)
{
	unsigned long long now = 0;
	char state = proc_state(pid, &now);

	return state != 0 && state != 'Z' && state != 'X' && now == start;
}

/* Waits up to TEST_GONE_WAIT_MS for PID to stop running. */
static bool
gone(pid_t pid, unsigned long long start)
{
	for (int ms = 0; ms < TEST_GONE_WAIT_MS; ms++) {
		if (!still_running(pid, start))
			return true;
		usleep(1000);
	}
	return false;
}

/* Double-forks a daemon in its own session that reports its pid; exits. */
static void
kid_daemonize(int report)
{
	pid_t pid = fork(), me;

	if (pid == 0) {
		setsid();
		if (fork() == 0) {
			me = getpid();
			if (write(report, &me, sizeof(me)) != sizeof(me))
				_exit(1);
			for (;;)
				pause();
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

static void
test_kill_ends_a_double_forked_setsid_daemon(void **state)
{
	struct cgroup_sandbox *sb;
	unsigned long long start = 0;
	int report, status;
	pid_t pid, daemon;
	char *err = NULL;

	require_real();
	sb = make_sandbox(inst, "daemon", &test_limits);
	pid = spawn(sb, kid_daemonize, &report);
	assert_int_equal(read(report, &daemon, sizeof(daemon)), sizeof(daemon));
	close(report);
	wait_kid(pid, &status);
	assert_true(WIFEXITED(status));
	assert_true(proc_state(daemon, &start) != 0);
	assert_true(still_running(daemon, start));
	assert_int_not_equal(getsid(daemon), getsid(0));
	if (cgroup_sandbox_kill(sb, &err) == -1)
		fail_msg("kill: %s", err);
	assert_int_equal(cgroup_sandbox_procs(sb, NULL, 0, NULL), 0);
	assert_true(gone(daemon, start));
	drop_sandbox(sb);
}

/* Forks and exits in a loop, so that its pid keeps changing. */
static void
kid_runner(int report)
{
	pid_t pid;

	close(report);
	for (;;) {
		pid = fork();
		if (pid > 0)
			_exit(0);
		if (pid == -1)
			usleep(100);
	}
}

static void
test_kill_without_cgroup_kill_freezes_a_running_tree(void **state)
{
	struct cgroup_sandbox *sb;
	char dir[PATH_MAX], text[TEST_TEXT_MAX_BYTES], *err = NULL;
	int report;
	pid_t pids[4];

	require_real();
	host.kill_by_signals = true;
	sb = make_sandbox(inst, "runner", &test_limits);
	host.kill_by_signals = false;
	for (int i = 0; i < 3; i++) {
		spawn(sb, kid_runner, &report);
		close(report);
	}
	usleep(TEST_RUN_MS * 1000);
	assert_true(cgroup_sandbox_procs(sb, pids, 4, NULL) > 0);
	if (cgroup_sandbox_kill(sb, &err) == -1)
		fail_msg("kill: %s", err);
	assert_int_equal(cgroup_sandbox_procs(sb, pids, 4, NULL), 0);
	leaf_path(dir, &host.v2, inst, "runner");
	assert_string_equal(read_text(dir, "cgroup.freeze", text, sizeof(text)), "0");
	drop_sandbox(sb);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void
test_procs_lists_every_process_of_the_sandbox(void **state)
{
	struct cgroup_sandbox *sb;
	pid_t kid[3], pids[8];
	int report;
	ssize_t n;

	require_real();
	sb = make_sandbox(inst, "procs", &test_limits);
	for (int i = 0; i < 3; i++) {
		kid[i] = spawn(sb, kid_sleep, &report);
		close(report);
	}
	n = cgroup_sandbox_procs(sb, pids, 8, NULL);
	assert_int_equal(n, 3);
	for (int i = 0; i < 3; i++) {
		bool found = false;

		for (ssize_t j = 0; j < n; j++)
			found |= pids[j] == kid[i];
		assert_true(found);
	}
	assert_int_equal(cgroup_sandbox_procs(sb, pids, 1, NULL), 3);
	drop_sandbox(sb);
	for (int i = 0; i < 3; i++)
		wait_kid(kid[i], NULL);
}

static void
test_remove_leaves_no_directory_in_any_hierarchy(void **state)
{
	struct cgroup_sandbox *sb;
	char path[CGROUP_RESOURCES + 1][PATH_MAX];
	int report, status;
	pid_t pid;

	require_real();
	sb = make_sandbox(inst, "gone", &test_limits);
	pid = spawn(sb, kid_sleep, &report);
	close(report);
	leaf_path(path[0], &host.v2, inst, "gone");
	assert_true(is_dir(path[0]));
	for (int r = 0; r < CGROUP_RESOURCES; r++) {
		limit_dir(path[r + 1], r, "gone");
		assert_true(path[r + 1][0] == '\0' || is_dir(path[r + 1]));
	}
	drop_sandbox(sb);
	wait_kid(pid, &status);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	for (int r = 0; r < CGROUP_RESOURCES; r++)
		if (host.v1[r].base[0] != '\0') {
			leaf_path(path[r + 1], &host.v1[r], inst, "gone");
			assert_false(is_dir(path[r + 1]));
		}
	assert_false(is_dir(path[0]));
}

/* The cgroup of PID in the hierarchy named KEY ("" for v2) in OUT. */
static const char *
cgroup_of(pid_t pid, const char *key, char *out, size_t size)
{
	char dir[64], text[TEST_TEXT_MAX_BYTES], *save = NULL, *line;
	size_t klen = strlen(key);

	snprintf(dir, sizeof(dir), "/proc/%ld", (long)pid);
	read_text(dir, "cgroup", text, sizeof(text));
	out[0] = '\0';
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *ctl = strchr(line, ':');

		if (ctl != NULL && strncmp(ctl + 1, key, klen) == 0 && ctl[1 + klen] == ':')
			snprintf(out, size, "%s", ctl + 2 + klen);
	}
	return out;
}

static void
test_clone_into_cgroup_places_the_child_from_its_first_instruction(void **state)
{
	struct clone_args args;
	struct cgroup_sandbox *sb;
	char want[PATH_MAX], got[PATH_MAX], *err = NULL;
	const char *rel = strcmp(host.v2.rel, "/") == 0 ? "" : host.v2.rel;
	int status;
	pid_t pid;

	require_real();
	sb = make_sandbox(inst, "clone", &test_limits);
	memset(&args, 0, sizeof(args));
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)cgroup_sandbox_v2_fd(sb);
	pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) {
		/* Raw system calls only: glibc does not know this child. */
		syscall(SYS_kill, syscall(SYS_getpid), SIGSTOP);
		syscall(SYS_exit, 0);
	}
	if (pid == -1 && errno == ENOSYS) {
		drop_sandbox(sb);
		skip();         /* no clone3: before 5.3, or under valgrind */
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
	assert_true(WIFSTOPPED(status));
	assert_true(snprintf(want, sizeof(want), "%s/corral-%s/clone", rel, inst) < PATH_MAX);
	assert_string_equal(cgroup_of(pid, "", got, sizeof(got)), want);
	if (cgroup_limit_source(sb, CGROUP_MEMORY)[1] == '1') {
		rel = strcmp(host.v1[CGROUP_MEMORY].rel, "/") == 0 ? "" : host.v1[CGROUP_MEMORY].rel;
		assert_true(snprintf(want, sizeof(want), "%s/corral-%s/clone", rel, inst) < PATH_MAX);
		assert_string_not_equal(cgroup_of(pid, "memory", got, sizeof(got)), want);
		if (cgroup_sandbox_join(sb, pid, &err) == -1)
			fail_msg("join: %s", err);
		assert_string_equal(cgroup_of(pid, "memory", got, sizeof(got)), want);
	}
	drop_sandbox(sb);
	wait_kid(pid, &status);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

struct names {
	char name[TEST_NAMES_MAX][64];
	size_t len;
};

static void
names_add(const char *name, void *arg)
{
	struct names *names = arg;

	if (names->len < TEST_NAMES_MAX)
		snprintf(names->name[names->len++], sizeof(names->name[0]), "%s", name);
}

static struct names
list_of(const char *instance)
{
	struct names names = { .len = 0 };
	char *err = NULL;

	if (cgroup_list_sandboxes(&host, instance, names_add, &names, &err) == -1)
		fail_msg("list: %s", err);
	return names;
}

static void
test_reaper_finds_and_removes_a_leftover(void **state)
{
	struct cgroup_sandbox *sb;
	struct names names;
	char path[PATH_MAX], *err = NULL;
	int report, status;
	pid_t pid;

	require_real();
	sb = make_sandbox(inst, "leftover", &test_limits);
	pid = spawn(sb, kid_sleep, &report);
	close(report);
	cgroup_sandbox_free(sb);        /* the broker died: the cgroups stay */
	names = list_of(inst);
	assert_int_equal(names.len, 1);
	assert_string_equal(names.name[0], "leftover");
	if (cgroup_remove_by_name(&host, inst, "leftover", &err) == -1)
		fail_msg("remove_by_name: %s", err);
	wait_kid(pid, &status);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_equal(list_of(inst).len, 0);
	leaf_path(path, &host.v2, inst, "leftover");
	assert_false(is_dir(path));
	assert_int_equal(cgroup_remove_by_name(&host, inst, "leftover", NULL), 0);
}

static void
test_instances_do_not_see_each_other(void **state)
{
	struct cgroup_sandbox *a, *b1, *b2;
	struct names names;
	char path[PATH_MAX];

	require_real();
	a = make_sandbox(inst, "alpha", &test_limits);
	b1 = make_sandbox(inst_b, "alpha", &test_limits);
	b2 = make_sandbox(inst_b, "beta", &test_limits);
	names = list_of(inst);
	assert_int_equal(names.len, 1);
	assert_string_equal(names.name[0], "alpha");
	names = list_of(inst_b);
	assert_int_equal(names.len, 2);
	assert_string_equal(names.name[0], "alpha");
	assert_string_equal(names.name[1], "beta");
	assert_int_equal(cgroup_remove_by_name(&host, inst, "alpha", NULL), 0);
	leaf_path(path, &host.v2, inst_b, "alpha");
	assert_true(is_dir(path));
	cgroup_sandbox_free(a);
	drop_sandbox(b1);
	drop_sandbox(b2);
}

static void
test_create_refuses_an_existing_sandbox(void **state)
{
	struct cgroup_sandbox *sb, *again = NULL;
	char *err = NULL;

	require_real();
	sb = make_sandbox(inst, "twice", &test_limits);
	assert_int_equal(cgroup_sandbox_create(&host, inst, "twice", &test_limits, &again, &err), -1);
	assert_null(again);
	assert_non_null(strstr(err, "File exists"));
	free(err);
	assert_true(cgroup_sandbox_v2_fd(sb) >= 0);
	drop_sandbox(sb);
}

static void
test_pure_v2_host_limits_come_from_v2(void **state)
{
	struct cgroup_sandbox *sb;
	char dir[PATH_MAX], text[TEST_TEXT_MAX_BYTES], *err = NULL;

	require_real();
	for (int r = 0; r < CGROUP_RESOURCES; r++)
		if (!host.v2_controller[r])
			skip();         /* not a pure v2 host */
	if (cgroup_host_enter_leaf(&host, inst, &err) == -1) {
		printf("# %s\n", err);
		free(err);
		skip();
	}
	sb = make_sandbox(inst, "purev2", &test_limits);
	for (int r = 0; r < CGROUP_RESOURCES; r++)
		assert_string_equal(cgroup_limit_source(sb, r), "v2");
	leaf_path(dir, &host.v2, inst, "purev2");
	assert_string_equal(read_text(dir, "pids.max", text, sizeof(text)), "20");
	assert_string_equal(read_text(dir, "memory.max", text, sizeof(text)), "67108864");
	assert_string_equal(read_text(dir, "cpu.max", text, sizeof(text)), "50000 100000");
	drop_sandbox(sb);
}

static int
long_compare(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static void
test_create_and_remove_fit_the_budget(void **state)
{
	long us[TEST_BENCH_RUNS], t;

	require_real();
	for (int i = 0; i < TEST_BENCH_RUNS; i++) {
		t = now_us();
		drop_sandbox(make_sandbox(inst, "bench", &test_limits));
		us[i] = now_us() - t;
	}
	qsort(us, TEST_BENCH_RUNS, sizeof(us[0]), long_compare);
	printf("# create+remove over %d runs: p50 %ld us, p90 %ld us, max %ld us\n", TEST_BENCH_RUNS,
	    us[TEST_BENCH_RUNS / 2], us[TEST_BENCH_RUNS * 9 / 10], us[TEST_BENCH_RUNS - 1]);
	assert_true(us[TEST_BENCH_RUNS / 2] < TEST_BUDGET_US);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hybrid_host_takes_every_limit_from_v1, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_pure_v2_host_with_processes_in_base_needs_a_leaf, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_pure_v2_host_with_empty_base_needs_no_leaf, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_root_cgroup_needs_no_leaf, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_daemon_leaf_makes_its_parent_the_base, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_limit_without_any_controller_is_not_enforced, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_comounted_cpu_is_found_and_cpuset_is_not_cpu, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_mount_point_escapes_are_undone, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_bind_mounted_subtree_is_not_used, fake_setup, fake_teardown),
		cmocka_unit_test(test_create_without_v2_is_refused),
		cmocka_unit_test(test_warm_leaf_names_are_their_own),
		cmocka_unit_test(test_names_that_are_not_sandbox_names_are_refused),
		cmocka_unit_test(test_cpu_limit_below_the_kernel_floor_is_refused),
		cmocka_unit_test_teardown(test_limits_are_written_and_their_sources_reported, real_test_teardown),
		cmocka_unit_test_teardown(test_memory_limit_excludes_swap, real_test_teardown),
		cmocka_unit_test_teardown(test_fork_bomb_stops_at_the_pids_limit, real_test_teardown),
		cmocka_unit_test_teardown(test_memory_hog_is_oom_killed, real_test_teardown),
		cmocka_unit_test_teardown(test_kill_ends_a_double_forked_setsid_daemon, real_test_teardown),
		cmocka_unit_test_teardown(test_kill_without_cgroup_kill_freezes_a_running_tree, real_test_teardown),
		cmocka_unit_test_teardown(test_procs_lists_every_process_of_the_sandbox, real_test_teardown),
		cmocka_unit_test_teardown(test_remove_leaves_no_directory_in_any_hierarchy, real_test_teardown),
		cmocka_unit_test_teardown(test_clone_into_cgroup_places_the_child_from_its_first_instruction, real_test_teardown),
		cmocka_unit_test_teardown(test_reaper_finds_and_removes_a_leftover, real_test_teardown),
		cmocka_unit_test_teardown(test_instances_do_not_see_each_other, real_test_teardown),
		cmocka_unit_test_teardown(test_create_refuses_an_existing_sandbox, real_test_teardown),
		cmocka_unit_test_teardown(test_pure_v2_host_limits_come_from_v2, real_test_teardown),
		cmocka_unit_test_teardown(test_create_and_remove_fit_the_budget, real_test_teardown),
	};

	return cmocka_run_group_tests(tests, real_setup, real_teardown);
}
