/* The egress ledger: one JSON object per line (corral-ledger(5)), written
 * without blocking the event loop by a writer thread behind a bounded
 * queue. When the queue is full the caller refuses new connections: a
 * connection the ledger cannot record does not happen (fail closed). */
#ifndef CORRAL_LEDGER_H
#define CORRAL_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ledger;

/* The live ledger's name in the log folder (corral-ledger(5)); corrald
 * opens it there, and the logs stream (broker/ledgerread.h) reads it and
 * its rotated files, named after it. */
#define LEDGER_FILE_NAME "egress.jsonl"
#define LEDGER_QUEUE_MAX_BYTES (4u * 1024 * 1024)       /* lines waiting for the writer */
/* ledger_ok() turns false while less than this is free in the queue, so
 * that a caller refusing new connections still has room for the close
 * records of the open ones. */
#define LEDGER_QUEUE_RESERVE_BYTES (512u * 1024)
#define LEDGER_RECORD_MAX_BYTES 8192                    /* one line, newline included */
#define LEDGER_RETRY_MS 1000                            /* between attempts after a write error */
#define LEDGER_BATCH_DELAY_MS 5                         /* the writer gathers lines this long before a write */

/* Each string field is cut, at a character boundary, so that its escaped
 * form (quotes not counted) takes at most this many bytes; the caps add up
 * to less than LEDGER_RECORD_MAX_BYTES, so no record is ever refused for
 * its size. */
#define LEDGER_NAME_MAX_BYTES 256       /* sandbox, session_id, agent, run */
#define LEDGER_BINARY_MAX_BYTES 2048
#define LEDGER_HOST_MAX_BYTES 1024
#define LEDGER_IP_MAX_BYTES 64
#define LEDGER_POLICY_MAX_BYTES 1024
#define LEDGER_REASON_MAX_BYTES 512
#define LEDGER_METHOD_MAX_BYTES 32
#define LEDGER_PATH_MAX_BYTES 1024      /* a request's target, query included */

enum ledger_event {
	LEDGER_EVENT_CONNECT = 0,       /* a decision, allow or deny, when a connection opens */
	LEDGER_EVENT_CLOSE,             /* an allowed connection ended: bytes and duration */
	LEDGER_EVENT_DNS,               /* a DNS stub decision */
	LEDGER_EVENT_BYPASS,            /* what the fence rejected outright, counted */
	LEDGER_EVENT_UNIX,              /* a host Unix socket refused, or a listed one connected */
	LEDGER_EVENT_LIFECYCLE,         /* a sandbox made, deleted, or held to a limit */
	LEDGER_EVENT_INBOUND,           /* a connection from the host through corral forward */
	LEDGER_EVENT_REQUEST,           /* an HTTP request on a connection the proxy terminates */
};

enum ledger_mode {
	LEDGER_MODE_NONE = 0,           /* null */
	LEDGER_MODE_CONNECT,
	LEDGER_MODE_FORWARD,
	LEDGER_MODE_SNI,
	LEDGER_MODE_HTTP,
	LEDGER_MODE_TCP,
	LEDGER_MODE_DNS,
};

enum ledger_decision {
	LEDGER_DECISION_NONE = 0,       /* null */
	LEDGER_DECISION_ALLOW,
	LEDGER_DECISION_DENY,
};

#define LEDGER_NULL_INT INT64_MIN       /* an integer field that does not apply: null */

/* One record. NULL strings and LEDGER_NULL_INT integers are written as
 * null; every string is escaped (it may come from a client). */
struct ledger_record {
	enum ledger_event event;
	int64_t ts_us;                  /* 0: now */
	uint64_t id;                    /* the same for a connection's connect and close; 0: null */
	const char *sandbox;
	const char *session_id;
	const char *agent;
	const char *run;
	int64_t pid;
	const char *binary;
	enum ledger_mode mode;
	const char *host;
	int64_t port;
	const char *ip;
	enum ledger_decision decision;
	const char *policy;             /* the entry that decided */
	const char *reason;
	int64_t bytes_up;
	int64_t bytes_down;
	int64_t duration_ms;
	/* request records: the request, the proxy's own answer's status (or
	 * null when the upstream answered), the secrets swapped in or the one
	 * misused (names, comma-separated; never a value) */
	const char *method;
	const char *path;
	int64_t status;
	const char *secrets;
};

/* A record with every field null, of EVENT. */
void ledger_record_init(struct ledger_record *rec, enum ledger_event event);

/*
 * The writer thread takes the whole queue at once and write(2)s it, in as
 * few calls as it can, to a file opened O_WRONLY|O_APPEND; lines are only
 * ever queued whole, so they are never interleaved or torn.
 *
 * Write errors (ENOSPC, EIO, ...): the ledger is failed, ledger_ok() is
 * false and ledger_write() refuses every record (fail closed: the caller
 * refuses the connections). The unwritten lines are kept and the writer
 * tries them again every LEDGER_RETRY_MS, on the same descriptor, from the
 * exact byte where it stopped, and at once after ledger_reopen(); the
 * first write that succeeds ends the failure. A reopen while failed starts
 * the new file at the beginning of the interrupted line, so that line is
 * whole there (the old file, whose disk failed, keeps a fragment).
 *
 * Every function may be called from any thread; none is
 * async-signal-safe (SIGUSR1 is handled as a loop event that calls
 * ledger_reopen()).
 */

/* Opens (creating, mode 0640, appending) the ledger at PATH and starts its
 * writer. NULL with a malloc'd reason in *ERR. */
struct ledger *ledger_open(const char *path, char **err);
/* Writes what is queued, stops the writer, closes the file; NULL is fine.
 * When the last write fails, what is left is dropped and logged. */
void ledger_close(struct ledger *l);
/* Asks the writer to reopen the file at its path (after log rotation, on
 * SIGUSR1); returns at once. Every line queued before the call goes to the
 * old file, every line after to the new one. When the new file cannot be
 * opened the writer logs it and keeps the old one. */
void ledger_reopen(struct ledger *l);

/* Queues REC as one line; never waits for the disk. -1 when the queue is
 * full or the writer failed: the caller must refuse the connection the
 * record is about. */
int ledger_write(struct ledger *l, const struct ledger_record *rec);
/* True while the ledger can take records: the writer works and more than
 * LEDGER_QUEUE_RESERVE_BYTES are free. Check it before accepting a connection. */
bool ledger_ok(const struct ledger *l);
/* Called by ledger_write() for every record, WRITTEN false when it was
 * refused, in the caller's thread, after the ledger's lock is let go: the
 * daemon counts its metrics from the records. */
typedef void (*ledger_observer_fn)(const struct ledger_record *rec, bool written, void *arg);
/* Sets L's observer (NULL: none). The observer runs in each writer's
 * thread: a ledger observed by state of one thread (corrald's metrics)
 * must be written from that thread only, as corrald's loop does. */
void ledger_observe(struct ledger *l, ledger_observer_fn fn, void *arg);

/* How the ledger is doing, for status and metrics. */
struct ledger_stats {
	size_t queued_bytes;            /* taken, not yet on disk */
	uint64_t written_bytes;         /* ever written (or dropped at close) */
	uint64_t refused_records;       /* ever refused: a full queue, or a failed disk */
	bool failed;                    /* the last write failed: records are refused now */
};
void ledger_stats(struct ledger *l, struct ledger_stats *out);

/* Blocks until everything queued so far is written, or the writer has
 * failed (then it returns at once, with lines still queued). */
void ledger_flush(struct ledger *l);

/* Formats REC as one JSON line with its newline into OUT (SIZE bytes),
 * NUL-terminated; returns the length without the NUL, or -1 when it does
 * not fit (never with SIZE >= LEDGER_RECORD_MAX_BYTES). Uses no heap. */
int ledger_format(const struct ledger_record *rec, char *out, size_t size);

/* A connection id unique in this process, never 0, from any thread. Ids
 * count up from the wall clock in microseconds when the process first asks,
 * so two daemon runs do not collide unless one averaged more than an id per
 * microsecond or the clock went back; they stay below 2^53 (exact in jq and
 * JavaScript) until the year 2255. */
uint64_t ledger_next_id(void);

#endif
