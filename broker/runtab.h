/* A sandbox's shell runs (PROTOCOL.md section 5): each run's request id,
 * command, kept output and result, until the client acknowledges it. The
 * output keeps the newest bytes up to a cap (offsets stay true); so does
 * the late output, what the run's own background jobs wrote after its
 * result, which never joins another run's. The table keeps a bounded
 * number of runs and output bytes, dropping the oldest finished run first.
 * Watchers (open client streams) hear each chunk and the end. Pure logic:
 * no I/O, never logs, never exits. */
#ifndef CORRAL_RUNTAB_H
#define CORRAL_RUNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RUN_OUTPUT_KEEP_BYTES (1024 * 1024)     /* one run's output kept; older bytes dropped */
#define RUN_LATE_KEEP_BYTES (64 * 1024)         /* one run's late output kept */
#define RUNTAB_RUNS_MAX 64                      /* runs kept per sandbox, in flight included */
#define RUNTAB_KEEP_BYTES_MAX (16 * 1024 * 1024) /* output kept per sandbox, all runs */
#define RUN_ID_MAX_BYTES 128
#define RUN_COMMAND_MAX_BYTES (64 * 1024)

struct run;

/* One client stream that follows a run in flight. */
struct run_watcher {
	/* LEN bytes of output at OFFSET (the run's whole-output position); it
	 * may unwatch itself (no other watcher). */
	void (*on_output)(struct run_watcher *w, uint64_t offset, const uint8_t *data, size_t len);
	/* The run ended (result or error set); the watcher is already off the
	 * run's list, and this is its last call. */
	void (*on_done)(struct run_watcher *w, struct run *r);
	struct run_watcher *next;
};

/* A run's end, as RunResult carries it. */
struct run_result {
	int exit_code;
	int signal;
	char *cwd;                      /* NULL: unknown */
	bool timed_out;
	bool respawned;
	bool state_saved;               /* its cwd and environment are the next run's */
	const char *ended_by;           /* what ended it: "timeout", "interrupt",
	                                 * "memory_limit", "pids_limit"; NULL: itself */
};

/* The newest bytes of a stream, up to a cap, circular; offsets are those
 * of the whole stream. */
struct run_ring {
	uint8_t *buf;
	size_t size;                    /* bytes allocated, at most the cap */
	size_t len;                     /* bytes held */
	size_t head;                    /* index of the oldest byte held */
	uint64_t total;                 /* bytes written in all */
};

enum run_state {
	RUN_QUEUED,                     /* waits for its shell */
	RUN_RUNNING,                    /* its command is in the shell */
	RUN_DONE,                       /* result (or error) set, output complete */
};

struct run {
	uint64_t serial;                /* unique in its table, never reused */
	char *id;
	char *shell;
	char *command;
	unsigned timeout_s;
	int64_t started_us;
	enum run_state state;
	struct run_result result;
	char *error;                    /* RUN_DONE without a result: why it never ran */
	struct run_ring out;             /* its output, up to RUN_OUTPUT_KEEP_BYTES */
	struct run_ring late;           /* after its result, up to RUN_LATE_KEEP_BYTES */
	struct run_watcher *watchers;
	struct run *next;               /* the table, oldest first */
};

struct runtab {
	struct run *head;
	size_t count;
	uint64_t next_serial;
};

void runtab_init(struct runtab *t);
/* Frees every run (watchers are not told). */
void runtab_clear(struct runtab *t);
/* The run with ID, or NULL. */
struct run *runtab_find(const struct runtab *t, const char *id);
/* The run with SERIAL, or NULL (it was acknowledged or dropped). */
struct run *runtab_find_serial(const struct runtab *t, uint64_t serial);
/* A new queued run at the end of T, after dropping the oldest finished
 * runs over the bounds; NULL when every kept run is still in flight or
 * watched and the table is full. */
struct run *runtab_add(struct runtab *t, const char *id, const char *shell, const char *command,
    unsigned timeout_s, int64_t now_us);
/* Takes R out of T and frees it. */
void runtab_remove(struct runtab *t, struct run *r);
/* Drops the oldest finished, unwatched runs until T is within its bounds. */
void runtab_trim(struct runtab *t);
/* Output bytes (late output included) T keeps over all runs. */
size_t runtab_kept_bytes(const struct runtab *t);

/* Appends LEN bytes of output to R and tells its watchers. */
void run_output_append(struct run *r, const uint8_t *data, size_t len);
/* The offset of the oldest byte R still holds. */
uint64_t run_output_first(const struct run *r);
/* Copies up to MAX kept bytes from offset FROM (raised to the oldest kept)
 * into DST; the offset they start at in *AT; returns how many. */
size_t run_output_read(const struct run *r, uint64_t from, uint8_t *dst, size_t max,
    uint64_t *at);
/* True when R dropped output to stay within its cap. */
bool run_truncated(const struct run *r);
/* Appends LEN bytes of late output to R (no watcher hears it). */
void run_late_append(struct run *r, const uint8_t *data, size_t len);
/* As run_output_read, for the late output. */
size_t run_late_read(const struct run *r, uint64_t from, uint8_t *dst, size_t max,
    uint64_t *at);
/* Ends R with RESULT (its cwd is taken) or ERROR (copied, when RESULT is
 * NULL), and tells each watcher once. */
void run_finish(struct run *r, const struct run_result *result, const char *error);

void run_watch(struct run *r, struct run_watcher *w);
void run_unwatch(struct run *r, struct run_watcher *w);

/* True when ID is 1 to RUN_ID_MAX_BYTES of [A-Za-z0-9._:-]. */
bool run_id_valid(const char *id);

#endif
