/* The egress ledger: a record is formatted into a JSON line on the
 * caller's stack, copied into a bounded queue under a mutex, and written
 * to the file in batches by one writer thread, so the event loop never
 * waits for the disk. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "common/xmalloc.h"
#include "egress-proxy/ledger.h"

#define LEDGER_FILE_MODE 0640
#define LEDGER_NUMBER_MAX_BYTES 24      /* "-9223372036854775808" and room */
#define LEDGER_NS_PER_MS INT64_C(1000000)
#define LEDGER_NS_PER_S INT64_C(1000000000)
#define LEDGER_UTF8_TAIL_MAX 3          /* continuation bytes after a lead byte */
#define LEDGER_US_PER_S INT64_C(1000000)
#define LEDGER_TS_SECOND_CHARS 20       /* "2026-11-29T17:58:31." */
#define LEDGER_TS_FRACTION_DIGITS 6
#define LEDGER_TS_CACHE_MAX_S INT64_C(253402300799)     /* 9999-12-31T23:59:59Z */
/* Keys, punctuation, the timestamp and nine numbers at their longest. */
#define LEDGER_FIXED_MAX_BYTES 640
#define LEDGER_STRINGS_MAX_BYTES (5 * (LEDGER_NAME_MAX_BYTES + 2) + \
	LEDGER_BINARY_MAX_BYTES + 2 + LEDGER_HOST_MAX_BYTES + 2 + LEDGER_IP_MAX_BYTES + 2 + \
	LEDGER_POLICY_MAX_BYTES + 2 + LEDGER_REASON_MAX_BYTES + 2 + \
	LEDGER_METHOD_MAX_BYTES + 2 + LEDGER_PATH_MAX_BYTES + 2)
#define LEDGER_FIELD_MAX_BYTES LEDGER_BINARY_MAX_BYTES  /* the largest cap */

_Static_assert(LEDGER_FIXED_MAX_BYTES + LEDGER_STRINGS_MAX_BYTES < LEDGER_RECORD_MAX_BYTES,
    "a record at its caps must fit LEDGER_RECORD_MAX_BYTES");
_Static_assert(LEDGER_QUEUE_RESERVE_BYTES + LEDGER_RECORD_MAX_BYTES < LEDGER_QUEUE_MAX_BYTES,
    "the reserve must leave room for records");

struct ledger {
	char *path;
	int fd;                         /* the writer thread's, after ledger_open() */
	pthread_t writer;
	pthread_mutex_t mu;             /* guards everything below but ok; the batch
	                                 * fields are touched by the writer thread only */
	pthread_cond_t wake;            /* to the writer: lines, reopen or close */
	pthread_cond_t progress;        /* to flushers: a write finished or failed */
	char *queue;                    /* whole lines waiting, LEDGER_QUEUE_MAX_BYTES */
	size_t queued;
	uint64_t enqueued_total;        /* bytes ever queued */
	uint64_t written_total;         /* bytes ever written (or dropped at close) */
	bool reopen_wanted;
	unsigned flush_waiters;          /* ledger_flush() callers waiting: write at once */
	uint64_t reopen_mark;           /* enqueued_total when ledger_reopen() was called */
	bool failed;                    /* the last write failed */
	bool stopping;
	uint64_t refused_total;         /* records ledger_write() could not take */
	ledger_observer_fn observer;    /* told of every record, in ledger_write()'s thread */
	void *observer_arg;
	char *batch;                    /* the writer's: the lines it is writing */
	size_t batch_len;
	size_t batch_done;
	atomic_bool ok;
};

/* A line being formatted into a fixed buffer; the first overflow fails it. */
struct ledger_line {
	char *out;
	size_t size;
	size_t len;
	bool failed;
};

/* An enumerated value's name as the line has it: quoted, with its length. */
struct ledger_name {
	const char *json;               /* NULL: written as null */
	size_t len;
};

#define LEDGER_NAME(s) { "\"" s "\"", sizeof("\"" s "\"") - 1 }

static const struct ledger_name ledger_event_names[] = {
	[LEDGER_EVENT_CONNECT] = LEDGER_NAME("connect"),
	[LEDGER_EVENT_CLOSE] = LEDGER_NAME("close"),
	[LEDGER_EVENT_DNS] = LEDGER_NAME("dns"),
	[LEDGER_EVENT_BYPASS] = LEDGER_NAME("bypass"),
	[LEDGER_EVENT_UNIX] = LEDGER_NAME("unix"),
	[LEDGER_EVENT_LIFECYCLE] = LEDGER_NAME("lifecycle"),
	[LEDGER_EVENT_INBOUND] = LEDGER_NAME("inbound"),
	[LEDGER_EVENT_REQUEST] = LEDGER_NAME("request"),
};

static const struct ledger_name ledger_mode_names[] = {
	[LEDGER_MODE_NONE] = { NULL, 0 },
	[LEDGER_MODE_CONNECT] = LEDGER_NAME("connect"),
	[LEDGER_MODE_FORWARD] = LEDGER_NAME("forward"),
	[LEDGER_MODE_SNI] = LEDGER_NAME("sni"),
	[LEDGER_MODE_HTTP] = LEDGER_NAME("http"),
	[LEDGER_MODE_TCP] = LEDGER_NAME("tcp"),
	[LEDGER_MODE_DNS] = LEDGER_NAME("dns"),
};

static const struct ledger_name ledger_decision_names[] = {
	[LEDGER_DECISION_NONE] = { NULL, 0 },
	[LEDGER_DECISION_ALLOW] = LEDGER_NAME("allow"),
	[LEDGER_DECISION_DENY] = LEDGER_NAME("deny"),
};

#define LEDGER_NAME_OF(table, v) \
	((size_t)(v) < sizeof(table) / sizeof((table)[0]) ? &(table)[(v)] : NULL)

void
ledger_record_init(struct ledger_record *rec, enum ledger_event event)
{
	memset(rec, 0, sizeof(*rec));
	rec->event = event;
	rec->pid = LEDGER_NULL_INT;
	rec->port = LEDGER_NULL_INT;
	rec->bytes_up = LEDGER_NULL_INT;
	rec->bytes_down = LEDGER_NULL_INT;
	rec->status = LEDGER_NULL_INT;
	rec->duration_ms = LEDGER_NULL_INT;
}

/* Appends N bytes, keeping one byte free for the NUL. */
static void
ledger_line_raw(struct ledger_line *ln, const char *s, size_t n)
{
	if (ln->failed || n >= ln->size - ln->len) {
		ln->failed = true;
		return;
	}
	memcpy(ln->out + ln->len, s, n);
	ln->len += n;
}

#define LEDGER_LINE_LIT(ln, lit) ledger_line_raw((ln), (lit), sizeof(lit) - 1)

static void
ledger_line_uint(struct ledger_line *ln, uint64_t v)
{
	char digits[LEDGER_NUMBER_MAX_BYTES];
	char *p = digits + sizeof(digits);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	ledger_line_raw(ln, p, (size_t)(digits + sizeof(digits) - p));
}

/* Writes V, or null for LEDGER_NULL_INT. */
static void
ledger_line_int(struct ledger_line *ln, int64_t v)
{
	if (v == LEDGER_NULL_INT) {
		LEDGER_LINE_LIT(ln, "null");
		return;
	}
	if (v < 0) {
		LEDGER_LINE_LIT(ln, "-");
		ledger_line_uint(ln, -(uint64_t)v);
		return;
	}
	ledger_line_uint(ln, (uint64_t)v);
}

/* The bytes that stop the scan for plain strings: the NUL, and every byte
 * a JSON string cannot hold as it is (controls, quote, backslash) or that
 * a cut could split (non-ASCII). */
static const bool ledger_scan_stop[256] = {
	[0x00 ... 0x1f] = true, ['"'] = true, ['\\'] = true, [0x80 ... 0xff] = true,
};

/* The length of S, counted up to CAP + 1 bytes, and in *PLAIN whether
 * those bytes go into a JSON string unchanged (almost every string does):
 * one pass, one table look-up per byte. */
static size_t
ledger_scan(const char *s, size_t cap, bool *plain)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i <= cap && !ledger_scan_stop[u[i]])
		i++;
	*plain = i > cap || u[i] == '\0';
	if (*plain)
		return i;
	return i + strnlen(s + i, cap + 1 - i);
}

/* Where to cut S, of at least MAX bytes, to at most MAX bytes without
 * splitting a UTF-8 sequence: MAX, or the start of the sequence that the
 * byte at MAX continues. */
static size_t
ledger_utf8_cut(const char *s, size_t max)
{
	size_t cut = max;

	for (size_t i = 0; i < LEDGER_UTF8_TAIL_MAX && cut > 0 &&
	    ((unsigned char)s[cut] & 0xc0) == 0x80; i++)
		cut--;
	/* Only a lead byte starts a sequence; other bytes are not UTF-8 and are kept. */
	return (unsigned char)s[cut] >= 0xc0 ? cut : max;
}

/* Escapes the longest prefix of the LEN bytes at S whose escaped form fits
 * OUT (CAP bytes and the NUL), ending it at a character boundary when it
 * is cut; returns the escaped length. The search runs over prefixes cut at
 * a boundary: their escaped forms grow with them, so halving finds the
 * longest. Only strings that need escaping come here. */
static size_t
ledger_escape_cut(const char *s, size_t len, char *out, size_t cap)
{
	size_t lo = 0, hi = len;
	int n = json_escape(s, len, out, cap + 1);

	if (n >= 0)
		return (size_t)n;
	while (hi - lo > 1) {           /* the prefix at LO fits, the one at HI does not */
		size_t mid = lo + (hi - lo) / 2;

		if (json_escape(s, ledger_utf8_cut(s, mid), out, cap + 1) >= 0)
			lo = mid;
		else
			hi = mid;
	}
	n = json_escape(s, ledger_utf8_cut(s, lo), out, cap + 1);
	return n < 0 ? 0 : (size_t)n;
}

/* Writes the LEN bytes at S that need escaping, cut to CAP escaped bytes.
 * Apart, so that the common case does not set up its buffer. */
static __attribute__((noinline)) void
ledger_line_escaped(struct ledger_line *ln, const char *s, size_t len, size_t cap)
{
	char escaped[LEDGER_FIELD_MAX_BYTES + 1];

	ledger_line_raw(ln, escaped, ledger_escape_cut(s, len, escaped, cap));
}

/* Writes S as a JSON string (null for NULL) whose escaped body takes at
 * most CAP bytes: longer strings are cut. */
static void
ledger_line_string(struct ledger_line *ln, const char *s, size_t cap)
{
	size_t len;
	bool plain;

	if (s == NULL) {
		LEDGER_LINE_LIT(ln, "null");
		return;
	}
	len = ledger_scan(s, cap, &plain);
	LEDGER_LINE_LIT(ln, "\"");
	if (plain) {
		/* The common case: nothing to escape, so no cut splits a character. */
		ledger_line_raw(ln, s, len > cap ? cap : len);
	} else {
		ledger_line_escaped(ln, s, len, cap);
	}
	LEDGER_LINE_LIT(ln, "\"");
}

/* Writes the name of an enumerated value, or null (NULL, or a value
 * without a name). */
static void
ledger_line_name(struct ledger_line *ln, const struct ledger_name *name)
{
	if (name == NULL || name->json == NULL) {
		LEDGER_LINE_LIT(ln, "null");
		return;
	}
	ledger_line_raw(ln, name->json, name->len);
}

/* The second a thread formatted last, in RFC 3339 up to its dot: records
 * come by the thousand per second, and the calendar (gmtime_r, which takes
 * the time zone lock) is worked out once per second and thread. */
static _Thread_local int64_t ledger_ts_second = -1;
static _Thread_local char ledger_ts_prefix[RFC3339_US_BYTES];

/* US as time_format_rfc3339_us() writes it, into TS; returns its length. */
static size_t
ledger_format_ts(int64_t us, char ts[RFC3339_US_BYTES])
{
	int64_t second = us / LEDGER_US_PER_S;
	int frac = (int)(us % LEDGER_US_PER_S);

	if (us < 0 || second > LEDGER_TS_CACHE_MAX_S) {
		time_format_rfc3339_us(us, ts);
		return strlen(ts);
	}
	if (second != ledger_ts_second) {
		time_format_rfc3339_us(us, ledger_ts_prefix);
		ledger_ts_second = second;
	}
	memcpy(ts, ledger_ts_prefix, LEDGER_TS_SECOND_CHARS);
	for (int i = LEDGER_TS_FRACTION_DIGITS; i > 0; i--, frac /= 10)
		ts[LEDGER_TS_SECOND_CHARS + i - 1] = (char)('0' + frac % 10);
	ts[LEDGER_TS_SECOND_CHARS + LEDGER_TS_FRACTION_DIGITS] = 'Z';
	return LEDGER_TS_SECOND_CHARS + LEDGER_TS_FRACTION_DIGITS + 1;
}

/* ts, event, id: when and what. */
static void
ledger_format_head(struct ledger_line *ln, const struct ledger_record *rec)
{
	char ts[RFC3339_US_BYTES];
	size_t len = ledger_format_ts(rec->ts_us != 0 ? rec->ts_us : time_now_us(), ts);

	LEDGER_LINE_LIT(ln, "{\"ts\":\"");
	ledger_line_raw(ln, ts, len);
	LEDGER_LINE_LIT(ln, "\",\"event\":");
	ledger_line_name(ln, LEDGER_NAME_OF(ledger_event_names, rec->event));
	LEDGER_LINE_LIT(ln, ",\"id\":");
	if (rec->id == 0)
		LEDGER_LINE_LIT(ln, "null");
	else
		ledger_line_uint(ln, rec->id);
}

/* sandbox, session_id, agent, run, pid, binary: who. */
static void
ledger_format_who(struct ledger_line *ln, const struct ledger_record *rec)
{
	LEDGER_LINE_LIT(ln, ",\"sandbox\":");
	ledger_line_string(ln, rec->sandbox, LEDGER_NAME_MAX_BYTES);
	LEDGER_LINE_LIT(ln, ",\"session_id\":");
	ledger_line_string(ln, rec->session_id, LEDGER_NAME_MAX_BYTES);
	LEDGER_LINE_LIT(ln, ",\"agent\":");
	ledger_line_string(ln, rec->agent, LEDGER_NAME_MAX_BYTES);
	LEDGER_LINE_LIT(ln, ",\"run\":");
	ledger_line_string(ln, rec->run, LEDGER_NAME_MAX_BYTES);
	LEDGER_LINE_LIT(ln, ",\"pid\":");
	ledger_line_int(ln, rec->pid);
	LEDGER_LINE_LIT(ln, ",\"binary\":");
	ledger_line_string(ln, rec->binary, LEDGER_BINARY_MAX_BYTES);
}

/* mode, host, port, ip: where to. */
static void
ledger_format_where(struct ledger_line *ln, const struct ledger_record *rec)
{
	LEDGER_LINE_LIT(ln, ",\"mode\":");
	ledger_line_name(ln, LEDGER_NAME_OF(ledger_mode_names, rec->mode));
	LEDGER_LINE_LIT(ln, ",\"host\":");
	ledger_line_string(ln, rec->host, LEDGER_HOST_MAX_BYTES);
	LEDGER_LINE_LIT(ln, ",\"port\":");
	ledger_line_int(ln, rec->port);
	LEDGER_LINE_LIT(ln, ",\"ip\":");
	ledger_line_string(ln, rec->ip, LEDGER_IP_MAX_BYTES);
}

/* decision, policy, reason, bytes_up, bytes_down, duration_ms: the outcome. */
static void
ledger_format_outcome(struct ledger_line *ln, const struct ledger_record *rec)
{
	LEDGER_LINE_LIT(ln, ",\"decision\":");
	ledger_line_name(ln, LEDGER_NAME_OF(ledger_decision_names, rec->decision));
	LEDGER_LINE_LIT(ln, ",\"policy\":");
	ledger_line_string(ln, rec->policy, LEDGER_POLICY_MAX_BYTES);
	LEDGER_LINE_LIT(ln, ",\"reason\":");
	ledger_line_string(ln, rec->reason, LEDGER_REASON_MAX_BYTES);
	LEDGER_LINE_LIT(ln, ",\"bytes_up\":");
	ledger_line_int(ln, rec->bytes_up);
	LEDGER_LINE_LIT(ln, ",\"bytes_down\":");
	ledger_line_int(ln, rec->bytes_down);
	LEDGER_LINE_LIT(ln, ",\"duration_ms\":");
	ledger_line_int(ln, rec->duration_ms);
}

/* method, path, status, secrets: a terminated connection's request, on
 * request records only (every other record's line is as it always was). */
static void
ledger_format_request(struct ledger_line *ln, const struct ledger_record *rec)
{
	if (rec->event != LEDGER_EVENT_REQUEST) {
		LEDGER_LINE_LIT(ln, "}\n");
		return;
	}
	LEDGER_LINE_LIT(ln, ",\"method\":");
	ledger_line_string(ln, rec->method, LEDGER_METHOD_MAX_BYTES);
	LEDGER_LINE_LIT(ln, ",\"path\":");
	ledger_line_string(ln, rec->path, LEDGER_PATH_MAX_BYTES);
	LEDGER_LINE_LIT(ln, ",\"status\":");
	ledger_line_int(ln, rec->status);
	LEDGER_LINE_LIT(ln, ",\"secrets\":");
	ledger_line_string(ln, rec->secrets, LEDGER_NAME_MAX_BYTES);
	LEDGER_LINE_LIT(ln, "}\n");
}

int
ledger_format(const struct ledger_record *rec, char *out, size_t size)
{
	struct ledger_line ln = { out, size, 0, size == 0 };

	ledger_format_head(&ln, rec);
	ledger_format_who(&ln, rec);
	ledger_format_where(&ln, rec);
	ledger_format_outcome(&ln, rec);
	ledger_format_request(&ln, rec);
	if (ln.failed) {
		if (size > 0)
			out[0] = '\0';
		return -1;
	}
	out[ln.len] = '\0';
	return (int)ln.len;
}

static pthread_once_t ledger_id_once = PTHREAD_ONCE_INIT;
static uint64_t ledger_id_base;
static atomic_uint_fast64_t ledger_id_count;

static void
ledger_id_init(void)
{
	ledger_id_base = (uint64_t)time_now_us();
}

uint64_t
ledger_next_id(void)
{
	pthread_once(&ledger_id_once, ledger_id_init);
	return ledger_id_base + atomic_fetch_add(&ledger_id_count, 1) + 1;
}

/* Recomputes ledger_ok(); called with the mutex held after every change. */
static void
ledger_update_ok(struct ledger *l)
{
	bool ok = !l->failed && LEDGER_QUEUE_MAX_BYTES - l->queued > LEDGER_QUEUE_RESERVE_BYTES;

	atomic_store(&l->ok, ok);
}

bool
ledger_ok(const struct ledger *l)
{
	return atomic_load(&l->ok);
}

int
ledger_write(struct ledger *l, const struct ledger_record *rec)
{
	char line[LEDGER_RECORD_MAX_BYTES];
	int len = ledger_format(rec, line, sizeof(line));
	ledger_observer_fn observer;
	void *observer_arg;
	int ret = -1;

	pthread_mutex_lock(&l->mu);
	/* Fail closed: a record the writer cannot take is refused, never
	 * waited for, so the caller can refuse the connection instead. */
	if (len < 0 || l->failed || l->stopping ||
	    (size_t)len > LEDGER_QUEUE_MAX_BYTES - l->queued)
		goto out;
	memcpy(l->queue + l->queued, line, (size_t)len);
	if (l->queued == 0)
		pthread_cond_signal(&l->wake);
	l->queued += (size_t)len;
	l->enqueued_total += (size_t)len;
	ret = 0;
out:
	if (ret != 0)
		l->refused_total++;
	ledger_update_ok(l);
	observer = l->observer;
	observer_arg = l->observer_arg;
	pthread_mutex_unlock(&l->mu);
	if (observer != NULL)
		observer(rec, ret == 0, observer_arg);
	return ret;
}

void
ledger_observe(struct ledger *l, ledger_observer_fn fn, void *arg)
{
	pthread_mutex_lock(&l->mu);
	l->observer = fn;
	l->observer_arg = arg;
	pthread_mutex_unlock(&l->mu);
}

void
ledger_stats(struct ledger *l, struct ledger_stats *out)
{
	pthread_mutex_lock(&l->mu);
	out->queued_bytes = (size_t)(l->enqueued_total - l->written_total);
	out->written_bytes = l->written_total;
	out->refused_records = l->refused_total;
	out->failed = l->failed;
	pthread_mutex_unlock(&l->mu);
}

void
ledger_flush(struct ledger *l)
{
	uint64_t target;

	pthread_mutex_lock(&l->mu);
	target = l->enqueued_total;
	l->flush_waiters++;
	pthread_cond_signal(&l->wake);
	while (l->written_total < target && !l->failed)
		pthread_cond_wait(&l->progress, &l->mu);
	l->flush_waiters--;
	pthread_mutex_unlock(&l->mu);
}

void
ledger_reopen(struct ledger *l)
{
	pthread_mutex_lock(&l->mu);
	l->reopen_wanted = true;
	l->reopen_mark = l->enqueued_total;
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->mu);
}

/* Opens PATH to append, making it when missing. A file made in a
 * set-group-ID folder (corrald.yaml's ledger_group) is readable by the
 * folder's group whatever the umask: that group is the auditors'. A file
 * that was there keeps the mode it has. */
static int
ledger_open_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, LEDGER_FILE_MODE);
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (fd == -1)
		return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, LEDGER_FILE_MODE);
	if (slash == NULL || (size_t)(slash - path) >= sizeof(dir))
		return fd;
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (stat(dir, &st) == 0 && (st.st_mode & S_ISGID) != 0)
		(void)fchmod(fd, LEDGER_FILE_MODE);
	return fd;
}

/* Whether the writer has anything to do; with the mutex held. */
static bool
ledger_writer_has_work(const struct ledger *l)
{
	return l->stopping || l->queued > 0 || l->batch_len > 0 || l->reopen_wanted;
}

/* Makes the queued lines the writer's batch; with the mutex held. */
static void
ledger_take_queue(struct ledger *l)
{
	char *spare = l->batch;

	l->batch = l->queue;
	l->batch_len = l->queued;
	l->batch_done = 0;
	l->queue = spare;
	l->queued = 0;
	ledger_update_ok(l);
}

/* Reopens the path, keeping the old file when that fails; with the mutex
 * held, released around the open. When the writer failed mid-line, the
 * new file starts at the beginning of that line, so that it is whole there. */
static void
ledger_reopen_now(struct ledger *l)
{
	int fd;

	if (l->failed && l->batch_done > 0) {
		const char *nl = memrchr(l->batch, '\n', l->batch_done);
		size_t start = nl == NULL ? 0 : (size_t)(nl - l->batch) + 1;

		l->written_total -= l->batch_done - start;
		l->batch_done = start;
	}
	l->reopen_wanted = false;
	pthread_mutex_unlock(&l->mu);
	fd = ledger_open_file(l->path);
	if (fd == -1) {
		log_error("%s: reopen %s: %s; still writing the old file", __func__, l->path,
		    strerror(errno));
	} else {
		if (close(l->fd) == -1)
			log_warnx("%s: close of the old %s: %s", __func__, l->path, strerror(errno));
		l->fd = fd;
	}
	pthread_mutex_lock(&l->mu);
}

/* How much of the batch to write now: up to the reopen mark, when there is
 * one in the batch, so that the lines before it go to the old file. */
static size_t
ledger_batch_end(const struct ledger *l)
{
	uint64_t batch_start = l->written_total - l->batch_done;

	if (l->reopen_wanted && l->reopen_mark - batch_start < l->batch_len)
		return (size_t)(l->reopen_mark - batch_start);
	return l->batch_len;
}

/* Notes a write's outcome (N bytes, or -1 and ERRNO); with the mutex held. */
static void
ledger_note_write(struct ledger *l, ssize_t n, int error)
{
	if (n <= 0) {
		if (!l->failed)
			log_error("%s: write %s: %s; refusing connections until it works",
			    __func__, l->path, n == 0 ? "nothing written" : strerror(error));
		l->failed = true;
	} else {
		if (l->failed)
			log_info("%s: %s is written again", __func__, l->path);
		l->failed = false;
		l->batch_done += (size_t)n;
		l->written_total += (uint64_t)n;
		if (l->batch_done == l->batch_len)
			l->batch_len = l->batch_done = 0;
	}
	ledger_update_ok(l);
	pthread_cond_broadcast(&l->progress);
}

/* Writes part of the batch, or reopens the file when that is due; with the
 * mutex held, released around the I/O. -1 when a write failed. */
static int
ledger_writer_step(struct ledger *l)
{
	size_t from, end;
	ssize_t n;
	int error;

	if (l->reopen_wanted && (l->written_total >= l->reopen_mark || l->failed)) {
		ledger_reopen_now(l);
		return 0;
	}
	if (l->batch_len == 0 && l->queued > 0)
		ledger_take_queue(l);
	if (l->batch_len == 0)
		return 0;
	from = l->batch_done;
	end = ledger_batch_end(l);
	pthread_mutex_unlock(&l->mu);
	do {
		n = write(l->fd, l->batch + from, end - from);
	} while (n == -1 && errno == EINTR);
	error = errno;
	pthread_mutex_lock(&l->mu);
	ledger_note_write(l, n, error);
	return n > 0 ? 0 : -1;
}

/* Waits MS milliseconds on the writer's wake-up condition, with the mutex held. */
static void
ledger_wait_ms(struct ledger *l, int64_t ms)
{
	struct timespec deadline;
	int64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	ns = deadline.tv_nsec + ms * LEDGER_NS_PER_MS;
	deadline.tv_sec += (time_t)(ns / LEDGER_NS_PER_S);
	deadline.tv_nsec = (long)(ns % LEDGER_NS_PER_S);
	pthread_cond_timedwait(&l->wake, &l->mu, &deadline);
}

/* Waits LEDGER_RETRY_MS, less when ledger_reopen() or ledger_close() wakes
 * the writer; with the mutex held. */
static void
ledger_wait_retry(struct ledger *l)
{
	ledger_wait_ms(l, LEDGER_RETRY_MS);
}

/* At close, when the last write failed: drops what is left, saying how much. */
static void
ledger_give_up(struct ledger *l)
{
	log_error("%s: %s: dropping %" PRIu64 " bytes of records at close", __func__,
	    l->path, l->enqueued_total - l->written_total);
	l->batch_len = l->batch_done = 0;
	l->queued = 0;
	l->written_total = l->enqueued_total;
	pthread_cond_broadcast(&l->progress);
}

/* The writer thread: takes the queue, writes it, retries after errors,
 * reopens on request, and ends once closing and everything is written. */
static void *
ledger_writer_main(void *arg)
{
	struct ledger *l = arg;

	pthread_mutex_lock(&l->mu);
	for (;;) {
		while (!ledger_writer_has_work(l))
			pthread_cond_wait(&l->wake, &l->mu);
		/* Gather more lines before writing, unless someone waits: one
		 * write and one wake-up serve many connections. */
		if (!l->stopping && !l->reopen_wanted && l->batch_len == 0 &&
		    l->flush_waiters == 0 && l->queued < LEDGER_QUEUE_MAX_BYTES / 4)
			ledger_wait_ms(l, LEDGER_BATCH_DELAY_MS);
		if (l->stopping && l->queued == 0 && l->batch_len == 0)
			break;
		if (ledger_writer_step(l) == 0)
			continue;
		if (l->stopping)
			ledger_give_up(l);
		else
			ledger_wait_retry(l);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

static void
ledger_sync_init(struct ledger *l)
{
	pthread_condattr_t attr;

	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&l->wake, &attr);
	pthread_condattr_destroy(&attr);
	pthread_cond_init(&l->progress, NULL);
}

static void
ledger_free(struct ledger *l)
{
	if (l->fd != -1 && close(l->fd) == -1)
		log_warnx("%s: close %s: %s", __func__, l->path, strerror(errno));
	pthread_cond_destroy(&l->progress);
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->mu);
	free(l->batch);
	free(l->queue);
	free(l->path);
	free(l);
}

static int
ledger_start_writer(struct ledger *l, char **err)
{
	sigset_t all, old;
	int error;

	/* Signals belong to the event loop's thread: the writer blocks them
	 * all, so a handler never runs on it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	error = pthread_create(&l->writer, NULL, ledger_writer_main, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (error != 0) {
		xasprintf(err, "ledger writer thread: %s", strerror(error));
		return -1;
	}
	return 0;
}

struct ledger *
ledger_open(const char *path, char **err)
{
	struct ledger *l = xcalloc(1, sizeof(*l));

	*err = NULL;
	l->path = xstrdup(path);
	l->queue = xmalloc(LEDGER_QUEUE_MAX_BYTES);
	l->batch = xmalloc(LEDGER_QUEUE_MAX_BYTES);
	atomic_init(&l->ok, true);
	ledger_sync_init(l);
	l->fd = ledger_open_file(path);
	if (l->fd == -1) {
		xasprintf(err, "open %s: %s", path, strerror(errno));
		goto fail;
	}
	if (ledger_start_writer(l, err) == -1)
		goto fail;
	return l;
fail:
	ledger_free(l);
	return NULL;
}

void
ledger_close(struct ledger *l)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	l->stopping = true;
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->writer, NULL);
	ledger_free(l);
}
