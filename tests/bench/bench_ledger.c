/* Measures the ledger's hot path: ledger_format alone, and ledger_write
 * (format, then queue) with the writer thread draining to a file, in
 * nanoseconds of the calling thread's CPU time per record. Run by hand on
 * an -O2 build:
 *   tests/bench/bench_ledger [PATH]      (default /tmp/bench_ledger.jsonl) */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "egress-proxy/ledger.h"

#define BENCH_RECORDS 200000
#define BENCH_ROUNDS 5                  /* the best round is reported */
#define BENCH_NS_PER_S INT64_C(1000000000)

/* CPU time of this thread: on a loaded machine it leaves out the time the
 * thread waited for a CPU, which wall time would count. */
static int64_t
bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * BENCH_NS_PER_S + ts.tv_nsec;
}

static void
bench_record(struct ledger_record *rec, uint64_t i)
{
	ledger_record_init(rec, i % 2 == 0 ? LEDGER_EVENT_CONNECT : LEDGER_EVENT_CLOSE);
	rec->id = 1000000 + i / 2;
	rec->sandbox = "web-1";
	rec->session_id = "sess-4f1c2a";
	rec->agent = "claude-code";
	rec->run = "run-17";
	rec->pid = 4711;
	rec->binary = "/usr/bin/python3.12";
	rec->mode = LEDGER_MODE_CONNECT;
	rec->host = "files.pythonhosted.org";
	rec->port = 443;
	rec->ip = "151.101.64.223";
	rec->decision = LEDGER_DECISION_ALLOW;
	rec->policy = "*.pythonhosted.org:443";
	if (rec->event == LEDGER_EVENT_CLOSE) {
		rec->bytes_up = 1234;
		rec->bytes_down = 5678901;
		rec->duration_ms = 812;
	}
}

static double
bench_format(void)
{
	struct ledger_record rec;
	char line[LEDGER_RECORD_MAX_BYTES];
	size_t total = 0;
	int64_t start = bench_cpu_ns();

	for (uint64_t i = 0; i < BENCH_RECORDS; i++) {
		bench_record(&rec, i);
		total += (size_t)ledger_format(&rec, line, sizeof(line));
	}
	if (total == 0)
		abort();
	return (double)(bench_cpu_ns() - start) / BENCH_RECORDS;
}

/* ledger_write BENCH_RECORDS times; the time excludes the final flush. */
static double
bench_write(struct ledger *l, size_t *refused)
{
	struct ledger_record rec;
	int64_t start = bench_cpu_ns(), elapsed;

	for (uint64_t i = 0; i < BENCH_RECORDS; i++) {
		bench_record(&rec, i);
		if (ledger_write(l, &rec) == -1)
			(*refused)++;
	}
	elapsed = bench_cpu_ns() - start;
	ledger_flush(l);
	return (double)elapsed / BENCH_RECORDS;
}

int
main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/tmp/bench_ledger.jsonl";
	double best_format = 1e18, best_write = 1e18;
	size_t refused = 0;
	char *error = NULL;
	struct ledger *l = ledger_open(path, &error);

	if (l == NULL) {
		fprintf(stderr, "bench_ledger: %s\n", error);
		return 1;
	}
	for (int round = 0; round < BENCH_ROUNDS; round++) {
		double f = bench_format(), w = bench_write(l, &refused);

		best_format = f < best_format ? f : best_format;
		best_write = w < best_write ? w : best_write;
	}
	ledger_close(l);
	unlink(path);
	printf("ledger_format: %.0f ns/record\n", best_format);
	printf("ledger_write (format + queue, writer draining): %.0f ns/record\n", best_write);
	printf("refused (queue full): %zu of %d\n", refused, BENCH_ROUNDS * BENCH_RECORDS);
	return 0;
}
