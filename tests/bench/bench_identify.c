/* Benchmark of egress-proxy/identify, run by hand as root on a host with
 * cgroup v2: 100 sleeping processes in a test cgroup, a client in it that
 * connects again and again, and the time of the full identification of
 * each accepted connection (inet_diag query, map lookup, /proc reads).
 * Also: the cost of bpfload_open and bpfload_attach, the cost the program adds to connect(),
 * and a client outside the cgroup (diag and map lookup only).
 *
 *   bench_identify [CONNECTIONS]     (default 5000; the budget is p99 <= 100 us) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/magic.h>
#include <netinet/in.h>

#include "broker/monitor/bpfload.h"
#include "common/sock.h"
#include "egress-proxy/exetrust.h"
#include "egress-proxy/identify.h"

#define BENCH_SLEEPERS 100              /* idle processes in the cgroup */
#define BENCH_CONNECTIONS_DEFAULT 5000
#define BENCH_WARMUP 100                /* first samples not counted */
#define BENCH_BUDGET_P99_NS 100000
#define BENCH_LOADS 20                  /* bpfload_open calls timed */

/* What a sandbox's proxy trusts: here the mount of this program (which
 * the client runs), so that every check of the trust is paid, the ACL's
 * too, as for a system binary in a sandbox. */
static struct exetrust bench_trust = { .n = 1 };

struct bench {
	char cgroup[PATH_MAX];
	int cgroup_fd;
	int listen_fd;
	struct sockaddr_in addr;
	pid_t sleepers[BENCH_SLEEPERS];
	size_t n_sleepers;
};

static uint64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
bench_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Sorts the N samples of T and prints their percentiles under NAME. */
static uint64_t
bench_report(const char *name, uint64_t *t, size_t n)
{
	qsort(t, n, sizeof(*t), bench_cmp);
	printf("%-44s n=%zu p50=%.1f us p90=%.1f us p99=%.1f us max=%.1f us\n", name, n,
	    t[n / 2] / 1e3, t[n * 9 / 10] / 1e3, t[n * 99 / 100] / 1e3, t[n - 1] / 1e3);
	return t[n * 99 / 100];
}

static const char *
bench_cgroup2_root(void)
{
	static const char *const candidates[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct statfs sf;
	size_t i;

	for (i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (statfs(candidates[i], &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
			return candidates[i];
	return NULL;
}

/* Writes TEXT to the file NAME of the bench cgroup; -1 on failure. */
static int
bench_cgroup_write(const struct bench *b, const char *name, const char *text)
{
	char path[PATH_MAX + 32];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", b->cgroup, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

static void
bench_spawn_sleepers(struct bench *b)
{
	while (b->n_sleepers < BENCH_SLEEPERS) {
		pid_t pid = fork();

		if (pid == -1)
			return;
		if (pid == 0) {
			if (bench_cgroup_write(b, "cgroup.procs", "0") != 0)
				_exit(1);
			execl("/bin/sleep", "sleep", "3600", (char *)NULL);
			_exit(127);
		}
		b->sleepers[b->n_sleepers++] = pid;
	}
}

/* The client: N connections one after another, each held until the
 * bench closes its end; prints what its connect() calls cost. */
static void
bench_client(const struct bench *b, size_t n, bool in_cgroup, const char *label)
{
	uint64_t *t = calloc(n, sizeof(*t)), t0;
	char c;
	size_t i;
	int fd;

	if (t == NULL || (in_cgroup && bench_cgroup_write(b, "cgroup.procs", "0") != 0))
		_exit(1);
	for (i = 0; i < n; i++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		t0 = bench_now_ns();
		if (fd == -1 || connect(fd, (const struct sockaddr *)&b->addr, sizeof(b->addr)) != 0)
			_exit(1);
		t[i] = bench_now_ns() - t0;
		while (read(fd, &c, 1) > 0)
			;
		close(fd);
	}
	if (label != NULL)
		bench_report(label, t, n);
	free(t);
	fflush(stdout);
	_exit(0);
}

static pid_t
bench_start_client(const struct bench *b, size_t n, bool in_cgroup, const char *label)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		bench_client(b, n, in_cgroup, label);
	return pid;
}

/* Accepts N connections and times identify_lookup on each; EXPECT is the
 * answer every one must get. Returns the p99 in ns, 0 on failure. */
static uint64_t
bench_identify(struct bench *b, int diag_fd, int map_fd, size_t n, bool in_cgroup,
    const struct identify_boundary *boundary, enum identify_err expect, const char *name)
{
	static struct identify_owner o;
	struct identify_tuple tu;
	uint64_t *t = calloc(n, sizeof(*t)), t0, p99 = 0;
	pid_t client = bench_start_client(b, n, in_cgroup, NULL);
	socklen_t len;
	size_t i;
	enum identify_err e;
	int fd;

	for (i = 0; t != NULL && client > 0 && i < n; i++) {
		fd = accept4(b->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		memset(&tu, 0, sizeof(tu));
		len = sizeof(tu.local);
		getpeername(fd, (struct sockaddr *)&tu.local, &len);
		len = sizeof(tu.remote);
		getsockname(fd, (struct sockaddr *)&tu.remote, &len);
		t0 = bench_now_ns();
		e = identify_lookup(diag_fd, map_fd, &tu, boundary, &bench_trust, &o);
		t[i] = bench_now_ns() - t0;
		close(fd);
		if (e != expect) {
			fprintf(stderr, "%s: connection %zu: %s\n", name, i, identify_strerror(e));
			goto out;
		}
	}
	if (i == n && n > BENCH_WARMUP) {
		printf("  (owner %s, %zu ancestors)\n", expect == IDENTIFY_OK ? o.exe : "-",
		    o.n_ancestors);
		p99 = bench_report(name, t + BENCH_WARMUP, n - BENCH_WARMUP);
	}
out:
	if (client > 0) {
		kill(client, SIGKILL);
		waitpid(client, NULL, 0);
	}
	free(t);
	return p99;
}

/* Runs a client of N connections that prints what its connect() calls
 * cost, accepting and closing each connection at once. */
static void
bench_connect_cost(struct bench *b, size_t n, const char *label)
{
	pid_t client = bench_start_client(b, n, true, label);
	size_t i;
	int fd;

	for (i = 0; client > 0 && i < n; i++) {
		fd = accept4(b->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd != -1)
			close(fd);
	}
	if (client > 0)
		waitpid(client, NULL, 0);
}

/* Times bpfload_open (once per daemon) and bpfload_attach (per sandbox). */
static void
bench_load(struct bench *b)
{
	uint64_t load[BENCH_LOADS], attach[BENCH_LOADS], t0;
	struct bpfload_attachment *a;
	struct bpfload *bpf;
	size_t i;

	for (i = 0; i < BENCH_LOADS; i++) {
		t0 = bench_now_ns();
		if ((bpf = bpfload_open()) == NULL)
			return;
		load[i] = bench_now_ns() - t0;
		t0 = bench_now_ns();
		if ((a = bpfload_attach(bpf, b->cgroup_fd)) == NULL)
			return;
		attach[i] = bench_now_ns() - t0;
		bpfload_detach(a);
		bpfload_close(bpf);
	}
	bench_report("bpfload_open (once per daemon)", load, BENCH_LOADS);
	bench_report("bpfload_attach (per sandbox)", attach, BENCH_LOADS);
}

/* Runs every measurement; 0 when the budget was met. */
static int
bench_run(struct bench *b, size_t n)
{
	struct identify_boundary parent = { .n = 1, .pids = { getpid() } };
	struct bpfload_attachment *att = NULL;
	struct bpfload *bpf = NULL;
	uint64_t p99;
	int diag_fd = sock_diag_open(), rc = 1;
	struct statx sx;

	if (statx(AT_FDCWD, "/proc/self/exe", 0, STATX_MNT_ID, &sx) != 0)
		return 1;
	bench_trust.mounts[0] = (uint32_t)sx.stx_mnt_id;
	bench_connect_cost(b, n, "connect() in the cgroup, no program");
	bench_load(b);
	if (diag_fd == -1 || (bpf = bpfload_open()) == NULL ||
	    (att = bpfload_attach(bpf, b->cgroup_fd)) == NULL)
		goto out;
	bench_connect_cost(b, n, "connect() in the cgroup, program attached");
	p99 = bench_identify(b, diag_fd, bpfload_map_fd(bpf), n, true, &parent, IDENTIFY_OK,
	    "identify, walk stops at the parent");
	if (p99 == 0)
		goto out;
	bench_identify(b, diag_fd, bpfload_map_fd(bpf), n, true, NULL, IDENTIFY_OK,
	    "identify, walk up to pid 1");
	bench_identify(b, diag_fd, bpfload_map_fd(bpf), n, false, NULL, IDENTIFY_ERR_NO_RECORD,
	    "identify, client outside the cgroup (no record)");
	printf("budget p99 <= %.0f us: %s\n", BENCH_BUDGET_P99_NS / 1e3,
	    p99 <= BENCH_BUDGET_P99_NS ? "met" : "MISSED");
	rc = p99 <= BENCH_BUDGET_P99_NS ? 0 : 1;
out:
	bpfload_detach(att);
	bpfload_close(bpf);
	if (diag_fd != -1)
		close(diag_fd);
	return rc;
}

static int
bench_setup(struct bench *b, const char *root)
{
	socklen_t len = sizeof(b->addr);

	snprintf(b->cgroup, sizeof(b->cgroup), "%s/corral-bench-identify-%ld", root, (long)getpid());
	if (mkdir(b->cgroup, 0755) != 0)
		return -1;
	b->cgroup_fd = open(b->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	b->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	b->addr.sin_family = AF_INET;
	b->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (b->cgroup_fd == -1 || b->listen_fd == -1 ||
	    bind(b->listen_fd, (struct sockaddr *)&b->addr, sizeof(b->addr)) != 0 ||
	    listen(b->listen_fd, 128) != 0 ||
	    getsockname(b->listen_fd, (struct sockaddr *)&b->addr, &len) != 0)
		return -1;
	bench_spawn_sleepers(b);
	return b->n_sleepers == BENCH_SLEEPERS ? 0 : -1;
}

/* Kills what the bench started and removes its cgroup. */
static void
bench_teardown(struct bench *b)
{
	size_t i;
	int tries;

	if (b->cgroup[0] == '\0')
		return;
	bench_cgroup_write(b, "cgroup.kill", "1");
	for (i = 0; i < b->n_sleepers; i++)
		waitpid(b->sleepers[i], NULL, 0);
	if (b->cgroup_fd != -1)
		close(b->cgroup_fd);
	if (b->listen_fd != -1)
		close(b->listen_fd);
	for (tries = 0; tries < 100 && rmdir(b->cgroup) != 0 && errno == EBUSY; tries++)
		usleep(10000);
}

int
main(int argc, char **argv)
{
	struct bench b = { .cgroup_fd = -1, .listen_fd = -1 };
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : BENCH_CONNECTIONS_DEFAULT;
	const char *root = bench_cgroup2_root();
	int rc = 1;

	if (geteuid() != 0 || root == NULL || n <= BENCH_WARMUP) {
		fprintf(stderr, "bench_identify: needs root, cgroup v2 and more than %d connections\n",
		    BENCH_WARMUP);
		return 77;
	}
	if (bench_setup(&b, root) != 0)
		perror("bench_identify: setup");
	else
		rc = bench_run(&b, n);
	bench_teardown(&b);
	return rc;
}
