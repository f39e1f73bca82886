/* The egress ledger: one JSON object per line (DESIGN section 10), written
 * without blocking the event loop by a writer thread behind a bounded
 * queue. When the queue is full the caller refuses new connections: a
 * connection the ledger cannot record does not happen (fail closed). */
#ifndef CORRAL_LEDGER_H
#define CORRAL_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ledger;

#define LEDGER_QUEUE_MAX_BYTES (4u * 1024 * 1024)       /* lines waiting for the writer */
#define LEDGER_RECORD_MAX_BYTES 8192                    /* one line; longer strings are cut */

enum ledger_event {
	LEDGER_EVENT_CONNECT = 0,       /* a decision, allow or deny, when a connection opens */
	LEDGER_EVENT_CLOSE,             /* an allowed connection ended: bytes and duration */
	LEDGER_EVENT_DNS,               /* a DNS stub decision */
	LEDGER_EVENT_BYPASS,            /* what the fence rejected outright, counted */
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
	uint64_t id;                    /* the same for a connection's connect and close */
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
};

/* A record with every field null, of EVENT. */
void ledger_record_init(struct ledger_record *rec, enum ledger_event event);

/* Opens (creating, mode 0640, appending) the ledger at PATH and starts its
 * writer. NULL with a malloc'd reason in *ERR. */
struct ledger *ledger_open(const char *path, char **err);
/* Writes what is queued, stops the writer, closes the file; NULL is fine. */
void ledger_close(struct ledger *l);
/* Asks the writer to reopen the file at its path (after log rotation, on
 * SIGUSR1); returns at once. */
void ledger_reopen(struct ledger *l);

/* Queues REC as one line. -1 when the queue is full or the writer failed:
 * the caller must refuse the connection the record is about. */
int ledger_write(struct ledger *l, const struct ledger_record *rec);
/* True while the ledger can take records (the queue has room, the writer works). */
bool ledger_ok(const struct ledger *l);
/* Blocks until everything queued so far is written (tests, shutdown). */
void ledger_flush(struct ledger *l);

/* Formats REC as one JSON line with its newline into OUT (SIZE bytes);
 * returns the length, or -1 when it does not fit. */
int ledger_format(const struct ledger_record *rec, char *out, size_t size);

/* A unique connection id for this process. */
uint64_t ledger_next_id(void);

#endif
