/* bench_run SOCKET SANDBOX [N [R]]: persistent-shell round trips through the
 * client library (broker/client-run), against a running corrald.
 * 1. N runs of `true` in the sandbox's main shell, each on a fresh
 *    connection: connect, RunStart, the result. p50, p90, max.
 * 2. Resume: a run prints 1 MiB in lines and ends while its client is
 *    away (the client reads a first chunk, then drops the connection);
 *    the time from reconnecting (connect + RunResume from the offset it
 *    had) to the result, with every remaining byte. p50 and max over R
 *    rounds (default N / 10, at least 5; 0 skips this part).
 * Run it by tests/bench/run-shell-bench, which sets up the test bed. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "broker/cli/client-run.h"
#include "broker/cli/client.h"
#include "common/wire.h"

#define BENCH_WHY_BYTES 512
#define BENCH_RUNS_DEFAULT 1000
#define BENCH_RESUME_MIN_ROUNDS 5
#define BENCH_RESUME_OUTPUT_BYTES (1024 * 1024)
#define BENCH_RESUME_AWAY_US 1500000    /* the run ends while the client is away */
#define BENCH_ID_BYTES 64

/* Where a resumed run's client got to. */
struct bench_follow {
	uint64_t next;                  /* the offset after the last byte received */
	bool stop_early;                /* drop the connection after the first chunk */
};

static int64_t
bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int
bench_output(void *arg, uint64_t offset, const uint8_t *data, size_t len)
{
	struct bench_follow *f = arg;

	if (offset + len > f->next)
		f->next = offset + len;
	return f->stop_early ? 1 : 0;
}

/* One RunStart (or RunResume from FROM when RESUME) on a fresh connection;
 * the way it ended. */
static enum client_run_end
bench_run(const char *sock, const char *sandbox, const char *id, const char *command,
    bool resume, uint64_t from, struct bench_follow *f)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__RunStart start = CORRAL__RUN_START__INIT;
	Corral__RunResume res = CORRAL__RUN_RESUME__INIT;
	Corral__RunResult *result = NULL;
	char why[BENCH_WHY_BYTES];
	struct client_run_error err;
	enum client_run_end end;
	int fd = client_connect(sock, why, sizeof(why));

	if (fd == -1) {
		fprintf(stderr, "bench_run: %s\n", err.why);
		exit(1);
	}
	if (resume) {
		res.sandbox = (char *)(uintptr_t)sandbox;
		res.request_id = (char *)(uintptr_t)id;
		res.from_offset = from;
		req.request_case = CORRAL__REQUEST__REQUEST_RUN_RESUME;
		req.run_resume = &res;
	} else {
		start.sandbox = (char *)(uintptr_t)sandbox;
		start.request_id = (char *)(uintptr_t)id;
		start.command = (char *)(uintptr_t)command;
		req.request_case = CORRAL__REQUEST__REQUEST_RUN_START;
		req.run_start = &start;
	}
	end = client_run(fd, &req, bench_output, f, &result, &err);
	if (end == CLIENT_RUN_REFUSED || end == CLIENT_RUN_LOST) {
		fprintf(stderr, "bench_run: %s\n", err.why);
		exit(1);
	}
	if (result != NULL)
		corral__run_result__free_unpacked(result, NULL);
	close(fd);
	return end;
}

static int
bench_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void
bench_report(const char *name, int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp);
	printf("%-34s n %4d  p50 %8.3f ms  p90 %8.3f ms  max %8.3f ms\n", name, n,
	    (double)v[n / 2] / 1000, (double)v[n * 9 / 10] / 1000, (double)v[n - 1] / 1000);
}

int
main(int argc, char **argv)
{
	int n = argc > 3 ? atoi(argv[3]) : BENCH_RUNS_DEFAULT;
	int rounds = argc > 4 ? atoi(argv[4]) :
	    n / 10 > BENCH_RESUME_MIN_ROUNDS ? n / 10 : BENCH_RESUME_MIN_ROUNDS;
	char id[BENCH_ID_BYTES], cmd[128];
	int64_t *v, t0;

	if (argc < 3 || n <= 0) {
		fprintf(stderr, "usage: bench_run SOCKET SANDBOX [N [RESUME_ROUNDS]]\n");
		return 2;
	}
	v = calloc((size_t)n, sizeof(*v));
	bench_run(argv[1], argv[2], "warm-up", "true", false, 0, &(struct bench_follow){ 0 });
	for (int i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "bench-true-%d-%d", (int)getpid(), i);
		t0 = bench_now_us();
		bench_run(argv[1], argv[2], id, "true", false, 0, &(struct bench_follow){ 0 });
		v[i] = bench_now_us() - t0;
	}
	bench_report("run `true` (connect to result)", v, n);
	if (rounds <= 0) {
		free(v);
		return 0;
	}
	/* 1 MiB: 65536 lines of 16 bytes. */
	snprintf(cmd, sizeof(cmd), "sleep 0.2; seq -f %%015g 1 %d", BENCH_RESUME_OUTPUT_BYTES / 16);
	for (int i = 0; i < rounds; i++) {
		struct bench_follow f = { .stop_early = true };

		snprintf(id, sizeof(id), "bench-resume-%d-%d", (int)getpid(), i);
		bench_run(argv[1], argv[2], id, cmd, false, 0, &f);
		usleep(BENCH_RESUME_AWAY_US);
		f.stop_early = false;
		t0 = bench_now_us();
		if (bench_run(argv[1], argv[2], id, NULL, true, f.next, &f) != CLIENT_RUN_RESULT ||
		    f.next != BENCH_RESUME_OUTPUT_BYTES) {
			fprintf(stderr, "bench_run: the resumed run ended at %llu bytes\n",
			    (unsigned long long)f.next);
			return 1;
		}
		v[i] = bench_now_us() - t0;
	}
	bench_report("resume: reconnect to result", v, rounds);
	free(v);
	return 0;
}
