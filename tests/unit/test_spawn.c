/* Tests of broker/spawn, broker/exec and corral-init: real sandboxes (root
 * only; skipped otherwise) over a temporary folder owned by a regular uid,
 * and what a workload inside can and cannot do. Each case names what it
 * tries; the figures (spawn to ready, exec round trip) print as TAP
 * comments. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "broker/exec.h"
#include "broker/monitor/opener.h"
#include "broker/monitor/spawn.h"
#include "common/initproto.h"

#define TEST_TMPFS_BYTES (64ull * 1024 * 1024)   /* /tmp and /dev/shm inside */

#define TEST_UID 1000                   /* a regular user: the roots' owner and run_as */
#define TEST_GID 1000
#define TEST_GATEWAY "10.231.0.1"
#define TEST_RUN_TIMEOUT_S 20           /* for one command, so a hang fails */
#define TEST_READ_CHUNK_BYTES 65536
#define TEST_STDIN_BYTES 300000         /* more than any pipe buffer */
#define TEST_BIG_OUTPUT_BYTES 70000     /* needs a three-byte varint on the wire */
#define TEST_TTY_ROWS 33
#define TEST_TTY_COLS 101
#define TEST_BENCH_RUNS 50
#define TEST_SPAWN_BUDGET_MS 20         /* the budget of a whole create */
#define TEST_HELLO "hello from the root\n"

struct sandbox {
	char dir[PATH_MAX];             /* the temporary folder holding everything */
	char rw[PATH_MAX + 8], ro[PATH_MAX + 8], home[PATH_MAX + 8], locked[PATH_MAX + 8];
	char init_path[PATH_MAX];
	int cgroup_fd;                  /* the cgroup corral-init starts in, or -1 */
	struct monitor_root roots[2];
	struct spawn_spec spec;
	char *mountinfo_before;
	struct event_base *base;
	struct spawn *sp;
	pid_t pid;
	struct exec_channel *ch;
	char **env;
};

/* One command's run: what it printed and how it ended. */
struct run {
	struct event_base *base;
	struct exec_proc *p;
	const char *in;
	size_t n_in, in_off;
	struct event *ev[4];            /* stdin, stdout, stderr, tty */
	char *out, *err;
	size_t n_out, n_err;
	int streams;                    /* output streams not yet at their end */
	bool ended;
	int code;
	char *why;
};

static char *
read_file(const char *path)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return NULL;
	if (getdelim(&s, &n, '\0', f) == -1) {
		free(s);
		s = strdup("");
	}
	fclose(f);
	return s;
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void
append(char **buf, size_t *n, const char *p, size_t len)
{
	*buf = realloc(*buf, *n + len + 1);
	assert_non_null(*buf);
	memcpy(*buf + *n, p, len);
	*n += len;
	(*buf)[*n] = '\0';
}

static void
run_maybe_done(struct run *r)
{
	if (r->ended && r->streams == 0)
		event_base_loopbreak(r->base);
}

/* Reads one of the command's outputs (stdout, stderr or the tty). */
static void
run_on_output(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;
	char buf[TEST_READ_CHUNK_BYTES];
	bool is_err = r->p != NULL && fd == exec_stderr(r->p);
	ssize_t n;

	for (;;) {
		n = read((int)fd, buf, sizeof(buf));
		if (n > 0) {
			if (is_err)
				append(&r->err, &r->n_err, buf, (size_t)n);
			else
				append(&r->out, &r->n_out, buf, (size_t)n);
			continue;
		}
		if (n == -1 && errno == EAGAIN)
			return;
		/* End of file, or EIO from a master whose terminal closed. */
		break;
	}
	event_del(r->ev[is_err ? 2 : fd == exec_stdout(r->p) ? 1 : 3]);
	r->streams--;
	run_maybe_done(r);
}

static void
run_on_stdin(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;
	ssize_t n;

	while (r->in_off < r->n_in) {
		n = write((int)fd, r->in + r->in_off, r->n_in - r->in_off);
		if (n == -1) {
			if (errno != EAGAIN)
				break;
			return;
		}
		r->in_off += (size_t)n;
	}
	event_del(r->ev[0]);
	exec_close_stdin(r->p);
}

static void
run_started(struct exec_proc *p, const char *why, void *arg)
{
	struct run *r = arg;

	if (why != NULL) {
		r->why = strdup(why);
		r->ended = true;
		r->code = -1;
		r->streams = 0;
		event_base_loopbreak(r->base);
		return;
	}
	if (exec_tty(p) != -1) {
		fcntl(exec_tty(p), F_SETFL, O_NONBLOCK);
		r->ev[3] = event_new(r->base, exec_tty(p), EV_READ | EV_PERSIST, run_on_output, r);
		event_add(r->ev[3], NULL);
		r->streams = 1;
	}
}

static void
run_exited(struct exec_proc *p, int code, void *arg)
{
	struct run *r = arg;

	r->ended = true;
	r->code = code;
	run_maybe_done(r);
}

/* Runs ARGV in SB (IN as its stdin, or a tty), to its end. */
static void
run_full(struct sandbox *sb, const char *const *argv, const char *in, size_t n_in,
    bool tty, struct run *r)
{
	struct exec_request req = { .argv = argv, .envp = (const char *const *)sb->env,
		.tty = tty, .rows = TEST_TTY_ROWS, .cols = TEST_TTY_COLS };
	struct exec_callbacks cb = { run_started, run_exited };
	struct timeval limit = { TEST_RUN_TIMEOUT_S, 0 };
	char *err = NULL;
	int i;

	memset(r, 0, sizeof(*r));
	r->base = sb->base;
	r->in = in;
	r->n_in = n_in;
	r->p = exec_start(sb->ch, &req, &cb, r, &err);
	if (r->p == NULL)
		fail_msg("exec_start: %s", err);
	if (!tty) {
		r->ev[0] = event_new(sb->base, exec_stdin(r->p), EV_WRITE | EV_PERSIST, run_on_stdin, r);
		r->ev[1] = event_new(sb->base, exec_stdout(r->p), EV_READ | EV_PERSIST, run_on_output, r);
		r->ev[2] = event_new(sb->base, exec_stderr(r->p), EV_READ | EV_PERSIST, run_on_output, r);
		for (i = 0; i < 3; i++)
			event_add(r->ev[i], NULL);
		r->streams = 2;
	}
	event_base_loopexit(sb->base, &limit);
	event_base_dispatch(sb->base);
	for (i = 0; i < 4; i++) {
		if (r->ev[i] != NULL)
			event_free(r->ev[i]);
	}
	exec_proc_free(r->p);
	r->p = NULL;
	if (!r->ended)
		fail_msg("%s did not end within %d s", argv[0], TEST_RUN_TIMEOUT_S);
}

static void
run_clear(struct run *r)
{
	free(r->out);
	free(r->err);
	free(r->why);
}

/* Runs "sh -c SCRIPT" without input; returns its exit code, output in R. */
static int
sh(struct sandbox *sb, const char *script, struct run *r)
{
	const char *argv[] = { "sh", "-c", script, NULL };

	run_full(sb, argv, NULL, 0, false, r);
	return r->code;
}

static void
make_dir(const char *path, uid_t uid, mode_t mode)
{
	assert_int_equal(mkdir(path, mode), 0);
	assert_int_equal(chown(path, uid, uid), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static void
make_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chown(path, TEST_UID, TEST_GID), 0);
}

/* The folders and the spec: rw and ro roots and HOME owned by TEST_UID,
 * and a folder TEST_UID cannot enter. */
static void
sandbox_prepare(struct sandbox *sb)
{
	static const gid_t groups[] = { TEST_GID };
	const char *bd = getenv("top_builddir");

	snprintf(sb->dir, sizeof(sb->dir), "/tmp/corral-spawn-XXXXXX");
	assert_non_null(mkdtemp(sb->dir));
	assert_int_equal(chmod(sb->dir, 0755), 0);
	snprintf(sb->rw, sizeof(sb->rw), "%s/rw", sb->dir);
	snprintf(sb->ro, sizeof(sb->ro), "%s/ro", sb->dir);
	snprintf(sb->home, sizeof(sb->home), "%s/home", sb->dir);
	snprintf(sb->locked, sizeof(sb->locked), "%s/locked", sb->dir);
	make_dir(sb->rw, TEST_UID, 0755);
	make_dir(sb->ro, TEST_UID, 0755);
	make_dir(sb->home, TEST_UID, 0700);
	make_dir(sb->locked, 0, 0700);
	make_file(sb->rw, "hello.txt", TEST_HELLO);
	make_file(sb->ro, "readme", "read only\n");
	snprintf(sb->init_path, sizeof(sb->init_path), "%s/corral-init",
	    getenv("CORRAL_INIT_DIR") ? getenv("CORRAL_INIT_DIR") : bd ? bd : ".");
	sb->roots[0] = (struct monitor_root){ sb->rw, false };
	sb->roots[1] = (struct monitor_root){ sb->ro, true };
	sb->spec = (struct spawn_spec){ .name = "t-spawn", .uid = TEST_UID, .gid = TEST_GID,
		.caller_uid = TEST_UID, .caller_gid = TEST_GID, .caller_groups = groups,
		.n_caller_groups = 1, .roots = sb->roots, .n_roots = 2, .home = sb->home, .home_fd = -1,
		.gateway = TEST_GATEWAY, .tmpfs_bytes = TEST_TMPFS_BYTES };
	sb->cgroup_fd = -1;
	sb->env = exec_env_new(TEST_GATEWAY, sb->home, NULL);
	sb->base = event_base_new();
	assert_non_null(sb->base);
}

/* Spawns SB's sandbox and opens its channel; fails the test on error. */
static void
sandbox_up(struct sandbox *sb)
{
	char *err = NULL;

	sb->sp = spawn_launch(sb->init_path, sb->cgroup_fd, &err);
	if (sb->sp == NULL)
		fail_msg("spawn_launch: %s", err);
	sb->pid = spawn_pid(sb->sp);
	if (spawn_prepare(sb->sp, &sb->spec, &err) == -1)
		fail_msg("spawn_prepare: %s", err);
	if (spawn_ready(sb->sp, SPAWN_READY_TIMEOUT_MS, &err) == -1)
		fail_msg("spawn_ready: %s", err);
	sb->ch = exec_channel_new(sb->base, spawn_take_channel(sb->sp), NULL, NULL);
	assert_non_null(sb->ch);
}

/* Ends SB's sandbox: closing the channel ends corral-init. */
static void
sandbox_down(struct sandbox *sb)
{
	exec_channel_free(sb->ch);
	sb->ch = NULL;
	spawn_free(sb->sp);
	sb->sp = NULL;
	if (sb->pid > 0)
		waitpid(sb->pid, NULL, 0);
	sb->pid = 0;
}

/* True when the system calls spawning needs answer (valgrind 3.19 knows
 * neither clone3 nor openat2 and says ENOSYS). */
static bool
kernel_calls_available(void)
{
	errno = 0;
	if (syscall(SYS_clone3, NULL, 0) == -1 && errno == ENOSYS)
		return false;
	errno = 0;
	if (syscall(SYS_openat2, -1, "", NULL, 0) == -1 && errno == ENOSYS)
		return false;
	return true;
}

static int
group_setup(void **state)
{
	struct sandbox *sb;

	*state = NULL;
	if (geteuid() != 0 || !kernel_calls_available()) {
		printf("# real sandboxes need root, clone3 and openat2: skipped\n");
		return 0;
	}
	sb = calloc(1, sizeof(*sb));
	sandbox_prepare(sb);
	sb->mountinfo_before = read_file("/proc/self/mountinfo");
	sandbox_up(sb);
	*state = sb;
	return 0;
}

static int
group_teardown(void **state)
{
	struct sandbox *sb = *state;

	if (sb == NULL)
		return 0;
	if (sb->sp != NULL || sb->ch != NULL)
		sandbox_down(sb);
	nftw(sb->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	exec_env_free(sb->env);
	event_base_free(sb->base);
	free(sb->mountinfo_before);
	free(sb);
	return 0;
}

static struct sandbox *
need_sandbox(void **state)
{
	if (*state == NULL)
		skip();
	return *state;
}

static void
test_cat_prints_a_file_of_the_root(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	const char *argv[] = { "cat", "hello.txt", NULL };
	struct run r;

	run_full(sb, argv, NULL, 0, false, &r);
	assert_int_equal(r.code, 0);
	assert_string_equal(r.out, TEST_HELLO);
	run_clear(&r);
}

static void
test_exit_code_is_the_commands(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	assert_int_equal(sh(sb, "exit 3", &r), 3);
	run_clear(&r);
}

static void
test_killed_by_signal_exits_128_plus_it(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	assert_int_equal(sh(sb, "kill -9 $$", &r), 137);
	run_clear(&r);
}

static void
test_stdin_streams_through_cat(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	const char *argv[] = { "cat", NULL };
	char *in = malloc(TEST_STDIN_BYTES);
	struct run r;
	size_t i;

	for (i = 0; i < TEST_STDIN_BYTES; i++)
		in[i] = (char)('a' + i % 26);
	run_full(sb, argv, in, TEST_STDIN_BYTES, false, &r);
	assert_int_equal(r.code, 0);
	assert_int_equal(r.n_out, TEST_STDIN_BYTES);
	assert_memory_equal(r.out, in, TEST_STDIN_BYTES);
	free(in);
	run_clear(&r);
}

static void
test_large_output_passes_whole(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	char script[128];
	struct run r;

	snprintf(script, sizeof(script), "head -c %d /dev/zero | tr '\\0' x; echo err >&2",
	    TEST_BIG_OUTPUT_BYTES);
	assert_int_equal(sh(sb, script, &r), 0);
	assert_int_equal(r.n_out, TEST_BIG_OUTPUT_BYTES);
	assert_int_equal(strspn(r.out, "x"), TEST_BIG_OUTPUT_BYTES);
	assert_string_equal(r.err, "err\n");
	run_clear(&r);
}

static void
test_tty_is_a_pts_of_its_own_with_the_size_set(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	const char *argv[] = { "sh", "-c", "tty; stty size", NULL };
	char want[32];
	struct run r;

	run_full(sb, argv, NULL, 0, true, &r);
	assert_int_equal(r.code, 0);
	assert_non_null(r.out);
	snprintf(want, sizeof(want), "%d %d", TEST_TTY_ROWS, TEST_TTY_COLS);
	assert_non_null(strstr(r.out, "/dev/pts/0"));
	assert_non_null(strstr(r.out, want));
	run_clear(&r);
}

static void
test_runs_as_the_regular_uid(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	assert_int_equal(sh(sb, "id -u; id -g; id -G", &r), 0);
	assert_string_equal(r.out, "1000\n1000\n1000\n");
	run_clear(&r);
}

static void
test_no_capabilities_no_new_privs_and_seccomp(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	assert_int_equal(sh(sb, "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' "
	    "/proc/self/status", &r), 0);
	assert_string_equal(r.out, "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
	    "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n"
	    "CapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n");
	run_clear(&r);
}

static void
test_nothing_of_the_real_home_is_visible(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	/* The host has /home/cloudsdk (uid 1000's) and the test's own folder. */
	assert_int_equal(access("/home", F_OK), 0);
	assert_int_not_equal(sh(sb, "ls -a /home", &r), 0);
	run_clear(&r);
	assert_int_equal(sh(sb, "ls /tmp", &r), 0);
	assert_true(strncmp(r.out, strrchr(sb->dir, '/') + 1, strlen(strrchr(sb->dir, '/') + 1)) == 0);
	assert_int_equal(strchr(r.out, '\n') - r.out, strlen(strrchr(sb->dir, '/') + 1));
	assert_int_equal(r.n_out, strlen(strrchr(sb->dir, '/') + 1) + 1);
	run_clear(&r);
	assert_int_not_equal(sh(sb, "ls /root /run/netns /var/lib", &r), 0);
	run_clear(&r);
}

static void
test_write_in_writable_root_shows_on_host_owned_by_uid(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	char path[PATH_MAX * 2];
	struct stat st;
	struct run r;

	assert_int_equal(sh(sb, "echo made > made.txt", &r), 0);
	snprintf(path, sizeof(path), "%s/made.txt", sb->rw);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, TEST_UID);
	assert_int_equal(st.st_size, 5);
	run_clear(&r);
}

static void
test_read_only_root_refuses_a_write(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	char script[PATH_MAX * 2], path[PATH_MAX * 2];
	struct run r;

	snprintf(script, sizeof(script), "echo x > %s/new.txt", sb->ro);
	assert_int_not_equal(sh(sb, script, &r), 0);
	snprintf(path, sizeof(path), "%s/new.txt", sb->ro);
	assert_int_equal(access(path, F_OK), -1);
	run_clear(&r);
}

static void
test_proc_sys_is_read_only(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	/* Which of sys, sysrq-trigger, irq and bus exist depends on the kernel. */
	assert_int_equal(sh(sb, "grep -E ' /proc/[a-z-]+ ' /proc/self/mountinfo "
	    "| cut -d' ' -f5,6 | cut -d, -f1", &r), 0);
	assert_non_null(strstr(r.out, "/proc/sys ro\n"));
	assert_null(strstr(r.out, " rw\n"));
	run_clear(&r);
	assert_int_not_equal(sh(sb, "echo 1 > /proc/sys/kernel/ns_last_pid", &r), 0);
	run_clear(&r);
}

static void
test_mount_inside_fails(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	assert_int_not_equal(sh(sb, "mount -t tmpfs none /tmp", &r), 0);
	run_clear(&r);
	assert_int_equal(sh(sb, "grep -c ' /tmp ' /proc/self/mountinfo", &r), 0);
	assert_string_equal(r.out, "1\n");
	run_clear(&r);
}

static void
test_workload_holds_only_stdio_descriptors(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	/* 3 is the folder ls itself opened to list. */
	assert_int_equal(sh(sb, "exec ls /proc/self/fd", &r), 0);
	assert_string_equal(r.out, "0\n1\n2\n3\n");
	run_clear(&r);
}

static void
test_killing_init_fails_and_init_keeps_answering(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	assert_int_not_equal(sh(sb, "kill -9 1", &r), 0);
	run_clear(&r);
	assert_int_not_equal(sh(sb, "kill -STOP 1", &r), 0);
	run_clear(&r);
	assert_int_equal(sh(sb, "true", &r), 0);
	run_clear(&r);
}

static void
test_nested_user_namespace_fails(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	assert_int_not_equal(sh(sb, "unshare -U true", &r), 0);
	run_clear(&r);
}

static void
test_hostname_is_the_sandbox_name_and_lo_is_up(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	assert_int_equal(sh(sb, "hostname; ip -o link show", &r), 0);
	assert_true(strncmp(r.out, "t-spawn\n", 8) == 0);
	/* Only lo, and up. */
	assert_non_null(strstr(r.out, "lo: <LOOPBACK,UP,LOWER_UP>"));
	assert_null(strstr(r.out, "2: "));
	run_clear(&r);
}

/* The trust bundle inside: the system's and the sandbox CA's certificate
 * (the system's part written before the spec came); none without a CA. */
static void
test_trust_bundle_holds_the_system_and_the_ca(void **state)
{
	static const char pem[] = "-----BEGIN CERTIFICATE-----\nTESTCA\n-----END CERTIFICATE-----\n";
	struct sandbox *sb = need_sandbox(state);
	struct sandbox other = *sb;
	char *host = read_file("/etc/ssl/certs/ca-certificates.crt");
	struct run r;

	assert_int_equal(sh(sb, "test -e " INITPROTO_CA_BUNDLE_PATH " && echo there; "
	    "cat /etc/ssl/certs/ca-certificates.crt | grep -c TESTCA", &r), 1);
	assert_string_equal(r.out, "0\n");
	run_clear(&r);
	other.spec.name = "t-bundle";
	other.spec.ca_pem = pem;
	sandbox_up(&other);
	assert_int_equal(sh(&other, "tail -3 " INITPROTO_CA_BUNDLE_PATH "; "
	    "cmp " INITPROTO_CA_BUNDLE_PATH " /etc/ssl/certs/ca-certificates.crt && echo same; "
	    "wc -c < " INITPROTO_CA_BUNDLE_PATH, &r), 0);
	assert_non_null(strstr(r.out, pem));
	assert_non_null(strstr(r.out, "same\n"));
	if (host != NULL) {
		/* The system's whole, a newline, then the CA's. */
		char want[32];

		snprintf(want, sizeof(want), "\n%zu\n", strlen(host) + 1 + strlen(pem));
		assert_non_null(strstr(r.out, want));
	}
	run_clear(&r);
	sandbox_down(&other);
	free(host);
}

/* A root below /etc does not lift the masks over what /etc holds of the
 * host: they are laid again over the roots that hide them. */
static void
test_a_root_in_etc_keeps_the_host_masks(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct sandbox other = *sb;
	struct monitor_root roots[2] = { { sb->rw, false }, { "/etc/ssl", true } };
	struct stat st;
	struct run r;

	if (stat("/etc/ssl/private", &st) == -1)
		skip();
	other.spec.name = "t-etcroot";
	other.spec.roots = roots;
	other.spec.n_roots = 2;
	sandbox_up(&other);
	assert_int_equal(sh(&other, "stat -c '%U %a' /etc/ssl/private; ls -A /etc/ssl/private | wc -l; "
	    "grep -c ' /etc/ssl ' /proc/self/mountinfo", &r), 0);
	assert_string_equal(r.out, "root 555\n0\n1\n");
	run_clear(&r);
	sandbox_down(&other);
}

static void
test_resolv_conf_names_only_the_gateway(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct run r;

	assert_int_equal(sh(sb, "cat /etc/resolv.conf", &r), 0);
	assert_string_equal(r.out, "nameserver " TEST_GATEWAY "\n");
	run_clear(&r);
}

static void
test_missing_command_reports_why(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	const char *argv[] = { "no-such-command", NULL };
	struct run r;

	/* As in a shell: the start takes, the program is not there, 127 and
	 * the reason on its own stderr. */
	run_full(sb, argv, NULL, 0, false, &r);
	assert_int_equal(r.code, 127);
	assert_non_null(r.err);
	assert_non_null(strstr(r.err, "corral: no-such-command: No such file or directory"));
	run_clear(&r);
}

/* Refused specs: each says what was refused. */
static void
expect_refused(struct sandbox *sb, const char *what)
{
	struct spawn *sp;
	char *err = NULL;

	sp = spawn_launch(sb->init_path, -1, &err);
	assert_non_null(sp);
	assert_int_equal(spawn_prepare(sp, &sb->spec, &err), -1);
	assert_non_null(err);
	if (strstr(err, what) == NULL)
		fail_msg("refusal \"%s\" does not say \"%s\"", err, what);
	free(err);
	spawn_free(sp);
}

/* corral-init takes one spec, and none is sent before it is prepared. */
static void
test_spec_is_given_once_and_before_ready(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct spawn *sp;
	char *err = NULL;

	sp = spawn_launch(sb->init_path, -1, &err);
	assert_non_null(sp);
	assert_int_equal(spawn_ready(sp, SPAWN_READY_TIMEOUT_MS, &err), -1);
	assert_non_null(strstr(err, "no spec"));
	free(err);
	err = NULL;
	assert_int_equal(spawn_prepare(sp, &sb->spec, &err), 0);
	assert_int_equal(spawn_prepare(sp, &sb->spec, &err), -1);
	assert_non_null(strstr(err, "a spec already"));
	free(err);
	spawn_free(sp);
}

/* The child the opener forks ahead holds nothing of ours but its socket
 * (a sandbox's namespace or channel held there would outlive its delete),
 * serves one open as the caller, and the next open forks its own. */
static void
test_opener_forked_ahead_holds_only_its_socket(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct opener_who who = { TEST_UID, TEST_GID, NULL, 0 };
	struct opener_item items[2] = { { sb->rw, false }, { sb->locked, true } };
	char path[PATH_MAX], *stat, *ppid;
	int held[2], fds[2], children = 0;
	char *err = NULL;
	DIR *d;
	struct dirent *e;

	assert_int_equal(pipe2(held, O_CLOEXEC), 0);
	opener_prepare();
	assert_non_null(d = opendir("/proc"));
	while ((e = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || (stat = read_file(path)) == NULL)
			continue;
		ppid = strrchr(stat, ')');
		if (ppid != NULL && atoi(ppid + 4) == (int)getpid() &&
		    strstr(stat, "(test_spawn)") != NULL) {
			children++;
			/* It closes them once forked: give it a moment. */
			snprintf(path, sizeof(path), "/proc/%s/fd/%d", e->d_name, held[0]);
			for (int i = 0; i < 100 && access(path, F_OK) == 0; i++)
				usleep(10000);
			assert_int_equal(access(path, F_OK), -1);
			snprintf(path, sizeof(path), "/proc/%s/fd/3", e->d_name);
			assert_int_equal(access(path, F_OK), 0);
			snprintf(path, sizeof(path), "/proc/%s/fd/4", e->d_name);
			assert_int_equal(access(path, F_OK), -1);
		}
		free(stat);
	}
	closedir(d);
	assert_int_equal(children, 1);
	assert_int_equal(opener_open(&who, OPENER_ROOT, items, 1, fds, &err), 0);
	close(fds[0]);
	/* No child waits now: this one is forked on demand, and refuses. */
	assert_int_equal(opener_open(&who, OPENER_ROOT, items, 2, fds, &err), -1);
	assert_non_null(strstr(err, "refused"));
	free(err);
	opener_end();
	close(held[0]);
	close(held[1]);
}

/* A corral-init that is not where it is said to be: the launch says so. */
static void
test_launch_of_a_missing_init_is_refused(void **state)
{
	char *err = NULL;

	(void)need_sandbox(state);      /* skips where clone3 is missing (valgrind) */
	assert_null(spawn_launch("/nonexistent/corral-init", -1, &err));
	assert_non_null(strstr(err, "exec"));
	free(err);
	err = NULL;
	assert_null(spawn_launch("corral-init", -1, &err));
	assert_non_null(strstr(err, "absolute"));
	free(err);
}

static void
test_spec_with_uid_0_is_refused(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct spawn_spec saved = sb->spec;

	sb->spec.uid = 0;
	expect_refused(sb, "uid or gid 0");
	sb->spec = saved;
}

static void
test_root_the_caller_cannot_reach_is_refused(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct monitor_root saved = sb->roots[1];
	char inner[PATH_MAX * 2];

	snprintf(inner, sizeof(inner), "%s/inner", sb->locked);
	mkdir(inner, 0777);
	sb->roots[1] = (struct monitor_root){ inner, true };
	expect_refused(sb, "Permission denied");
	sb->roots[1] = saved;
}

static void
test_root_through_a_symlink_is_refused(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct monitor_root saved = sb->roots[1];
	char link[PATH_MAX * 2];

	snprintf(link, sizeof(link), "%s/link", sb->dir);
	assert_int_equal(symlink(sb->ro, link), 0);
	sb->roots[1] = (struct monitor_root){ link, true };
	expect_refused(sb, "symlink");
	sb->roots[1] = saved;
	unlink(link);
}

static void
test_root_under_run_is_refused(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct monitor_root saved = sb->roots[1];

	sb->roots[1] = (struct monitor_root){ "/run/user/1000", true };
	expect_refused(sb, "/run");
	sb->roots[1] = saved;
}

#define TEST_CGROUP_V2 "/sys/fs/cgroup/unified"

static void
test_init_and_workloads_are_in_the_cgroup_given(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct sandbox other = *sb;
	char dir[PATH_MAX], want[PATH_MAX + 8], path[64], *got;
	struct run r;

	snprintf(dir, sizeof(dir), TEST_CGROUP_V2 "/corral-spawn-test-%d", (int)getpid());
	if (mkdir(dir, 0755) == -1)
		skip();
	other.spec.name = "t-cgroup";
	other.cgroup_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(other.cgroup_fd >= 0);
	sandbox_up(&other);
	snprintf(want, sizeof(want), "0::%s\n", dir + strlen(TEST_CGROUP_V2));
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)other.pid);
	got = read_file(path);
	assert_non_null(got);
	assert_non_null(strstr(got, want));
	free(got);
	/* Inside, the cgroup namespace shows the sandbox's cgroup as its root:
	 * no host path. */
	assert_int_equal(sh(&other, "grep ^0:: /proc/self/cgroup", &r), 0);
	assert_string_equal(r.out, "0::/\n");
	run_clear(&r);
	sandbox_down(&other);
	close(other.cgroup_fd);
	assert_int_equal(rmdir(dir), 0);
}

static double
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
test_exec_true_round_trip_figure(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	const char *argv[] = { "true", NULL };
	double ms[TEST_BENCH_RUNS];
	struct timespec t0;
	struct run r;
	int i;

	for (i = 0; i < TEST_BENCH_RUNS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		run_full(sb, argv, NULL, 0, false, &r);
		ms[i] = ms_since(&t0);
		assert_int_equal(r.code, 0);
		run_clear(&r);
	}
	qsort(ms, TEST_BENCH_RUNS, sizeof(ms[0]), cmp_double);
	printf("# exec of true, round trip: p50 %.2f ms, p90 %.2f ms (%d runs)\n",
	    ms[TEST_BENCH_RUNS / 2], ms[TEST_BENCH_RUNS * 9 / 10], TEST_BENCH_RUNS);
}

static void
test_spawn_to_ready_is_within_budget(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	struct sandbox other;
	double ms[TEST_BENCH_RUNS];
	struct timespec t0;
	int i;

	other = *sb;
	other.spec.name = "t-bench";
	for (i = 0; i < TEST_BENCH_RUNS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		sandbox_up(&other);
		ms[i] = ms_since(&t0);
		sandbox_down(&other);
	}
	qsort(ms, TEST_BENCH_RUNS, sizeof(ms[0]), cmp_double);
	printf("# spawn to ready: p50 %.2f ms, p90 %.2f ms (%d spawns)\n",
	    ms[TEST_BENCH_RUNS / 2], ms[TEST_BENCH_RUNS * 9 / 10], TEST_BENCH_RUNS);
#if !defined(__SANITIZE_ADDRESS__)
	/* An ASan corral-init maps its shadow at every start: no budget then. */
	assert_true(ms[TEST_BENCH_RUNS / 2] < TEST_SPAWN_BUDGET_MS);
#endif
}

/* The mount point of one mountinfo LINE (its fifth field) into POINT. */
static void
mount_point_of(const char *line, char *point, size_t size)
{
	const char *p = line;

	for (int field = 0; field < 4 && p != NULL; field++)
		if ((p = strchr(p, ' ')) != NULL)
			p++;
	snprintf(point, size, "%.*s", p != NULL ? (int)strcspn(p, " ") : 0, p != NULL ? p : "");
}

/* True when a mount at POINT is one a sandbox of SB could have leaked to
 * the host: under its folders, or at a place corral-init mounts inside.
 * Others (another test bed's network namespaces, say) are not ours. */
static bool
mount_is_sandboxs(const struct sandbox *sb, const char *point)
{
	static const char *const inside[] = { "/", "/usr", "/lib", "/lib32", "/lib64",
	    "/libx32", "/bin", "/sbin", "/etc", "/opt", "/tmp", "/run", "/dev", "/dev/pts",
	    "/dev/shm", "/dev/mqueue", "/proc", "/proc/sys", "/home", "/root" };
	size_t n = strlen(sb->dir);

	if (strncmp(point, sb->dir, n) == 0 && (point[n] == '\0' || point[n] == '/'))
		return true;
	for (size_t i = 0; i < sizeof(inside) / sizeof(inside[0]); i++)
		if (strcmp(point, inside[i]) == 0)
			return true;
	return false;
}

/* Last: the host's mount table gained nothing a sandbox could have put
 * there since the first spawn (mounts made meanwhile by others are
 * ignored: the table is compared line by line, and only our places count). */
static void
test_host_mount_table_gains_nothing(void **state)
{
	struct sandbox *sb = need_sandbox(state);
	char point[PATH_MAX];
	char *now, *line, *save = NULL;

	sandbox_down(sb);
	now = read_file("/proc/self/mountinfo");
	assert_non_null(now);
	for (line = strtok_r(now, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *at = strstr(sb->mountinfo_before, line);

		/* A line of before, whole: an old mount. */
		if (at != NULL && (at == sb->mountinfo_before || at[-1] == '\n') &&
		    (at[strlen(line)] == '\n' || at[strlen(line)] == '\0'))
			continue;
		mount_point_of(line, point, sizeof(point));
		if (mount_is_sandboxs(sb, point))
			fail_msg("the host gained a mount at %s: %s", point, line);
	}
	free(now);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cat_prints_a_file_of_the_root),
		cmocka_unit_test(test_exit_code_is_the_commands),
		cmocka_unit_test(test_killed_by_signal_exits_128_plus_it),
		cmocka_unit_test(test_stdin_streams_through_cat),
		cmocka_unit_test(test_large_output_passes_whole),
		cmocka_unit_test(test_tty_is_a_pts_of_its_own_with_the_size_set),
		cmocka_unit_test(test_runs_as_the_regular_uid),
		cmocka_unit_test(test_no_capabilities_no_new_privs_and_seccomp),
		cmocka_unit_test(test_nothing_of_the_real_home_is_visible),
		cmocka_unit_test(test_write_in_writable_root_shows_on_host_owned_by_uid),
		cmocka_unit_test(test_read_only_root_refuses_a_write),
		cmocka_unit_test(test_proc_sys_is_read_only),
		cmocka_unit_test(test_mount_inside_fails),
		cmocka_unit_test(test_workload_holds_only_stdio_descriptors),
		cmocka_unit_test(test_killing_init_fails_and_init_keeps_answering),
		cmocka_unit_test(test_nested_user_namespace_fails),
		cmocka_unit_test(test_hostname_is_the_sandbox_name_and_lo_is_up),
		cmocka_unit_test(test_resolv_conf_names_only_the_gateway),
		cmocka_unit_test(test_trust_bundle_holds_the_system_and_the_ca),
		cmocka_unit_test(test_a_root_in_etc_keeps_the_host_masks),
		cmocka_unit_test(test_missing_command_reports_why),
		cmocka_unit_test(test_spec_with_uid_0_is_refused),
		cmocka_unit_test(test_spec_is_given_once_and_before_ready),
		cmocka_unit_test(test_launch_of_a_missing_init_is_refused),
		cmocka_unit_test(test_opener_forked_ahead_holds_only_its_socket),
		cmocka_unit_test(test_root_the_caller_cannot_reach_is_refused),
		cmocka_unit_test(test_root_through_a_symlink_is_refused),
		cmocka_unit_test(test_root_under_run_is_refused),
		cmocka_unit_test(test_init_and_workloads_are_in_the_cgroup_given),
		cmocka_unit_test(test_exec_true_round_trip_figure),
		cmocka_unit_test(test_spawn_to_ready_is_within_budget),
		cmocka_unit_test(test_host_mount_table_gains_nothing),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
