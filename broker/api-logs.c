/* The control socket's logs stream (PROTOCOL.md section 6): egress ledger
 * records of one sandbox, of host mode, or of all the caller may see,
 * filtered, read from the ledger's files oldest first (broker/ledgerread.h)
 * and sent as LogsReply frames. The next frame is made only while the
 * client takes the last one (two at most are queued), and a turn of the
 * loop reads a bounded number of lines, so a large ledger neither stalls
 * the loop nor fills the memory; with follow the end of the live file is
 * polled every second until the client leaves. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "broker/api.h"
#include "broker/conf.h"
#include "broker/daemon.h"
#include "broker/ledgerread.h"
#include "broker/sandbox.h"
#include "common/ledgerrec.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "common/xmalloc.h"
#include "egress-proxy/ledger.h"
#include "policy/name.h"

#define LOGS_FRAME_RECORDS_MAX 1000             /* records in one frame */
#define LOGS_FRAME_MAX_BYTES (256 * 1024)       /* of records in one frame: well under FRAME_MAX_BYTES */
#define LOGS_TURN_LINES_MAX 512                 /* lines read in one turn of the loop */
#define LOGS_TURN_SCAN_BYTES (256 * 1024)       /* and their bytes, kept or not */
#define LOGS_POLL_INTERVAL_MS 1000              /* following, at the end of the live file */
/* While a scan finds nothing, an empty frame this often tells the client
 * the stream is alive (its wait for a frame is bounded). */
#define LOGS_KEEPALIVE_NS (10LL * 1000 * 1000 * 1000)
#define LOGS_WRITE_TIMEOUT_S 60                 /* a client that takes nothing this long is dropped */
/* Following with until_us: how long after it a record may still be written
 * (it is stamped before the writer thread writes it). */
#define LOGS_UNTIL_GRACE_US (2 * 1000000)
/* Each stream holds two frames and a reader (about 700 KiB) at most. */
#define LOGS_STREAMS_MAX 32                     /* logs streams open at once */
#define LOGS_ROOT_STREAMS 4                     /* of those, kept for root */
#define LOGS_USER_STREAMS_MAX 4                 /* of one user other than root */
#define LOGS_TS_BYTES 28                        /* "2026-11-29T17:58:31.123456Z" and its NUL */
#define LOGS_MESSAGE_MAX_BYTES 256

/* Which records a request wants, and from when to when. */
struct logs_filter {
	enum {
		LOGS_ALL,               /* every record the caller may see */
		LOGS_SANDBOX,           /* the sandbox named NAME */
		LOGS_HOST_MODE,         /* host mode's: "sandbox" is null */
	} which;
	char name[LEDGER_NAME_MAX_BYTES + 1];
	bool denied_only;
	char since[RFC3339_US_BYTES];   /* as the ledger writes ts; "": no bound */
	char until[RFC3339_US_BYTES];   /* records before it only; "": no bound */
	int64_t until_us;
};

enum logs_state {
	LOGS_READING,           /* more to read now: a turn once the last frame is written */
	LOGS_WAITING,           /* following, at the end of the live file: polled */
	LOGS_ENDING,            /* the frame with end set is queued: close once written */
};

/* What one turn of reading came to. */
enum logs_step {
	LOGS_STEP_MORE,         /* the turn's budget, or a full frame: more to read */
	LOGS_STEP_WAIT,         /* following: nothing more for now */
	LOGS_STEP_END,          /* no more records: the last frame */
};

enum logs_verdict {
	LOGS_SKIP,
	LOGS_KEEP,
	LOGS_PAST_UNTIL,        /* at or after until: the answer ends */
};

/* Whether the caller may see the sandbox seen last, and from when: asked
 * once per name and turn (a sandbox may go between turns). */
struct logs_seen {
	char name[LEDGER_NAME_MAX_BYTES + 1];
	bool known, visible;
	char created[RFC3339_US_BYTES];         /* the sandbox's creation, as ts */
};

struct logs_stream {
	struct daemon *d;
	struct sandbox_caller caller;
	struct bufferevent *client;
	struct frame_decoder *frames;
	struct api_slot *slot;
	struct ledgerread *reader;
	struct event *timer;            /* the next turn, or the follow poll */
	enum logs_state state;
	struct logs_filter filter;
	char *batch[LOGS_FRAME_RECORDS_MAX];    /* the next frame's records */
	size_t nbatch, batch_bytes;
	int64_t sent_ns;                /* CLOCK_MONOTONIC of the last frame queued */
	struct logs_stream *next;       /* every logs stream, for the caps */
};

static struct logs_stream *logs_streams;

static void logs_stream_turn(struct logs_stream *st);
static void logs_stream_free(struct logs_stream *st);

/* corrald shuts down: the stream ends with it. */
static void
logs_stream_close(void *arg)
{
	logs_stream_free(arg);
}

static void
logs_stream_free(struct logs_stream *st)
{
	struct logs_stream **pp;

	for (pp = &logs_streams; *pp != NULL; pp = &(*pp)->next)
		if (*pp == st) {
			*pp = st->next;
			break;
		}
	for (size_t i = 0; i < st->nbatch; i++)
		free(st->batch[i]);
	ledgerread_free(st->reader);
	if (st->timer != NULL)
		event_free(st->timer);
	bufferevent_free(st->client);
	frame_decoder_free(st->frames);
	api_slot_release(st->slot);
	free(st);
}

/* May the caller read the record of sandbox NAME (NULL: host mode) made
 * at TS? Root reads everything; others the records of their own live
 * sandboxes made since each was created; host mode's records are root's
 * (or the daemon's own user's, who runs host mode only). */
static bool
logs_visible(const struct logs_stream *st, struct logs_seen *seen, const char *name,
    const char *ts)
{
	struct sandbox *sb;

	if (st->caller.uid == 0)
		return true;
	if (name == NULL)
		return daemon_may_manage(st->d, st->d->host, st->caller.uid);
	if (!seen->known || strcmp(seen->name, name) != 0) {
		sb = sandbox_find(st->d, name);
		snprintf(seen->name, sizeof(seen->name), "%s", name);
		seen->known = true;
		seen->visible = sb != NULL && sandbox_visible(sb, &st->caller);
		if (seen->visible)
			time_format_rfc3339_us(sb->created_us, seen->created);
	}
	/* Names are reused once a sandbox is deleted: records from before
	 * this sandbox was created are an earlier one's, maybe another
	 * user's. Both times are fixed-width UTC text, so text order is
	 * time order. */
	return seen->visible && strcmp(ts, seen->created) >= 0;
}

/* A ts as the ledger writes it: fixed width, so that text order is time order. */
static bool
logs_ts_valid(const struct ledgerrec_field *ts)
{
	return ts->kind == LEDGERREC_STRING && strlen(ts->out) == LOGS_TS_BYTES - 1 &&
	    ts->out[LOGS_TS_BYTES - 2] == 'Z';
}

/* The ledger escapes every control byte below 0x20: a line with one is
 * not its own, and is never passed on to be printed. */
static bool
logs_line_clean(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20)
			return false;
	return true;
}

/* Keeps LINE or not; records at or after until end the answer. */
static enum logs_verdict
logs_judge(const struct logs_stream *st, struct logs_seen *seen, const char *line, size_t len)
{
	const struct logs_filter *f = &st->filter;
	char ts[LOGS_TS_BYTES], name[LEDGER_NAME_MAX_BYTES + 1], decision[16];
	struct ledgerrec_field want[] = {
		{ "ts", ts, sizeof(ts), LEDGERREC_ABSENT },
		{ "sandbox", name, sizeof(name), LEDGERREC_ABSENT },
		{ "decision", decision, sizeof(decision), LEDGERREC_ABSENT },
	};
	bool host_mode;

	if (!logs_line_clean(line, len))
		return LOGS_SKIP;
	(void)ledgerrec_scan(line, len, want, f->denied_only ? 3 : 2);
	if (!logs_ts_valid(&want[0]))
		return LOGS_SKIP;
	if (f->until[0] != '\0' && strcmp(ts, f->until) >= 0)
		return LOGS_PAST_UNTIL;
	if (f->since[0] != '\0' && strcmp(ts, f->since) < 0)
		return LOGS_SKIP;
	if (want[1].kind != LEDGERREC_STRING && want[1].kind != LEDGERREC_NULL)
		return LOGS_SKIP;
	host_mode = want[1].kind == LEDGERREC_NULL;
	if ((f->which == LOGS_HOST_MODE && !host_mode) ||
	    (f->which == LOGS_SANDBOX && (host_mode || strcmp(name, f->name) != 0)))
		return LOGS_SKIP;
	if (!logs_visible(st, seen, host_mode ? NULL : name, ts))
		return LOGS_SKIP;
	if (f->denied_only && (want[2].kind != LEDGERREC_STRING || strcmp(decision, "deny") != 0))
		return LOGS_SKIP;
	return LOGS_KEEP;
}

static bool
logs_batch_full(const struct logs_stream *st)
{
	return st->nbatch == LOGS_FRAME_RECORDS_MAX ||
	    st->batch_bytes + LEDGER_RECORD_MAX_BYTES > LOGS_FRAME_MAX_BYTES;
}

/* Following with until_us: the time has passed it, with the grace. */
static bool
logs_until_passed(const struct logs_stream *st)
{
	return st->filter.until_us > 0 && time_now_us() > st->filter.until_us + LOGS_UNTIL_GRACE_US;
}

/* Reads the ledger into the next frame's batch, for one turn at most: a
 * number of lines and of bytes, or a call that found no line in its reads
 * (an overlong line being skipped), whichever comes first. */
static enum logs_step
logs_stream_read(struct logs_stream *st)
{
	struct logs_seen seen = { .known = false };
	enum ledgerread_status rs;
	size_t len, scanned = 0;
	const char *line;

	for (size_t lines = 0; lines < LOGS_TURN_LINES_MAX && scanned < LOGS_TURN_SCAN_BYTES &&
	    !logs_batch_full(st); lines++) {
		rs = ledgerread_next(st->reader, &line, &len);
		if (rs == LEDGERREAD_WAIT)
			return logs_until_passed(st) ? LOGS_STEP_END : LOGS_STEP_WAIT;
		if (rs == LEDGERREAD_END)
			return LOGS_STEP_END;
		if (rs == LEDGERREAD_BUSY)
			break;
		scanned += len + 1;
		switch (logs_judge(st, &seen, line, len)) {
		case LOGS_PAST_UNTIL:
			return LOGS_STEP_END;
		case LOGS_KEEP:
			st->batch[st->nbatch++] = xstrndup(line, len);
			st->batch_bytes += len;
			break;
		case LOGS_SKIP:
			break;
		}
	}
	return LOGS_STEP_MORE;
}

static void
logs_frame_unref(const void *data, size_t len, void *arg)
{
	free((void *)(uintptr_t)data);
}

/* Queues the batch as one frame (END: the answer's last); -1 when it
 * cannot be packed (then the stream is to end). */
static int
logs_stream_send(struct logs_stream *st, bool end)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	Corral__LogsReply reply = CORRAL__LOGS_REPLY__INIT;
	uint8_t *frame;
	size_t len;

	reply.records = st->batch;
	reply.n_records = st->nbatch;
	reply.end = end;
	resp.response_case = CORRAL__RESPONSE__RESPONSE_LOGS;
	resp.logs = &reply;
	frame = wire_pack(&resp.base, &len);
	for (size_t i = 0; i < st->nbatch; i++)
		free(st->batch[i]);
	st->nbatch = st->batch_bytes = 0;
	if (frame == NULL) {
		log_error("%s: cannot pack a logs frame: %s", __func__, strerror(errno));
		return -1;
	}
	/* The frame is handed over, not copied: it is freed once written. */
	if (evbuffer_add_reference(bufferevent_get_output(st->client), frame, len,
	    logs_frame_unref, NULL) == -1) {
		free(frame);
		return -1;
	}
	st->sent_ns = time_mono_ns();
	return 0;
}

/* Bytes still to be written to the client. */
static size_t
logs_stream_queued(const struct logs_stream *st)
{
	return evbuffer_get_length(bufferevent_get_output(st->client));
}

static void
logs_stream_schedule(struct logs_stream *st, int delay_ms)
{
	struct timeval tv = { delay_ms / 1000, (delay_ms % 1000) * 1000 };

	evtimer_add(st->timer, &tv);
}

/* One turn: reads, sends what it found, and says what comes next. At
 * most one frame waits for the client here, so two at most after it. */
static void
logs_stream_turn(struct logs_stream *st)
{
	enum logs_step step = logs_stream_read(st);
	bool end = step == LOGS_STEP_END;
	bool quiet = step == LOGS_STEP_MORE && time_mono_ns() - st->sent_ns > LOGS_KEEPALIVE_NS;

	if ((st->nbatch > 0 || end || quiet) && logs_stream_send(st, end) == -1) {
		logs_stream_free(st);
		return;
	}
	if (end) {
		st->state = LOGS_ENDING;
		return;
	}
	if (step == LOGS_STEP_WAIT) {
		st->state = LOGS_WAITING;
		logs_stream_schedule(st, LOGS_POLL_INTERVAL_MS);
		return;
	}
	st->state = LOGS_READING;
	/* Nothing found in this turn's budget: the next turn comes after the
	 * loop has served the others (a timer, unlike an active event, waits
	 * for the next poll of the descriptors). */
	if (logs_stream_queued(st) == 0)
		logs_stream_schedule(st, 0);
}

/* Called once no more than a frame waits (the low watermark): the next
 * frame is made while the client takes that one; or, all written, the end. */
static void
logs_stream_on_write(struct bufferevent *bev, void *arg)
{
	struct logs_stream *st = arg;

	if (st->state == LOGS_ENDING) {
		if (logs_stream_queued(st) == 0)
			logs_stream_free(st);
		return;
	}
	if (st->state == LOGS_READING && !evtimer_pending(st->timer, NULL))
		logs_stream_turn(st);
}

static void
logs_stream_on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct logs_stream *st = arg;

	/* A client still behind: its write callback goes on. */
	if (logs_stream_queued(st) > LOGS_FRAME_MAX_BYTES) {
		st->state = LOGS_READING;
		return;
	}
	logs_stream_turn(st);
}

/* Nothing is expected from the client after its request: what comes is
 * dropped. It stops a stream by closing. */
static void
logs_stream_on_read(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);

	evbuffer_drain(in, evbuffer_get_length(in));
}

/* The client left, failed, or took nothing for LOGS_WRITE_TIMEOUT_S. */
static void
logs_stream_on_event(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		logs_stream_free(arg);
}

/* The sandbox filter of NAME for CALLER; a refusal's message, or NULL. */
static const char *
logs_check_name(struct daemon *d, const struct sandbox_caller *caller, const char *name,
    struct logs_filter *f, const char **code)
{
	static char msg[LOGS_MESSAGE_MAX_BYTES];
	struct sandbox *sb;

	if (name[0] == '\0')
		return NULL;
	if (!policy_name_valid(name)) {
		*code = WIRE_ERR_INVALID;
		snprintf(msg, sizeof(msg), "'%.64s' is not a sandbox name: %s", name,
		    policy_name_error(name));
		return msg;
	}
	sb = sandbox_find(d, name);
	/* "host" is host mode's records, unless a sandbox has that name. */
	if (sb == NULL && strcmp(name, DAEMON_HOST_TENANT) == 0) {
		f->which = LOGS_HOST_MODE;
		if (daemon_may_manage(d, d->host, caller->uid))
			return NULL;
		*code = WIRE_ERR_PERMISSION;
		return "'host' is host mode's records: root only";
	}
	f->which = LOGS_SANDBOX;
	snprintf(f->name, sizeof(f->name), "%s", name);
	/* Root may read the records of sandboxes that are gone. */
	if (caller->uid == 0 || (sb != NULL && sandbox_visible(sb, caller)))
		return NULL;
	*code = WIRE_ERR_NOT_FOUND;
	snprintf(msg, sizeof(msg), "no sandbox named '%s'", name);
	return msg;
}

/* Fills F from LQ for CALLER; a refusal's message (and *CODE), or NULL. */
static const char *
logs_check(struct daemon *d, const struct sandbox_caller *caller, const Corral__Logs *lq,
    struct logs_filter *f, const char **code)
{
	*code = WIRE_ERR_INVALID;
	if (lq->since_us < 0 || lq->until_us < 0)
		return "since_us and until_us are microseconds since the epoch, never negative";
	if (lq->until_us > 0 && lq->since_us >= lq->until_us)
		return "the window is empty: since must come before until";
	f->which = LOGS_ALL;
	f->denied_only = lq->denied_only;
	f->until_us = lq->until_us;
	if (lq->since_us > 0)
		time_format_rfc3339_us(lq->since_us, f->since);
	if (lq->until_us > 0)
		time_format_rfc3339_us(lq->until_us, f->until);
	return logs_check_name(d, caller, lq->sandbox, f, code);
}

/* A refusal when UID holds its share of logs streams, or all are taken:
 * each holds memory and a file, and a follow lasts as long as its client. */
static const char *
logs_check_share(uid_t uid)
{
	static char msg[LOGS_MESSAGE_MAX_BYTES];
	unsigned all = 0, mine = 0;

	for (const struct logs_stream *st = logs_streams; st != NULL; st = st->next) {
		all++;
		mine += st->caller.uid == uid;
	}
	if (all >= LOGS_STREAMS_MAX || (uid != 0 && all >= LOGS_STREAMS_MAX - LOGS_ROOT_STREAMS))
		snprintf(msg, sizeof(msg), "corrald serves %u logs streams, its most%s; try again "
		    "once one has ended", all, uid != 0 ? " for users other than root" : "");
	else if (uid != 0 && mine >= LOGS_USER_STREAMS_MAX)
		snprintf(msg, sizeof(msg), "you already hold %u logs streams, the most a user may; "
		    "end one (a corral logs --follow)", mine);
	else
		return NULL;
	return msg;
}

void
api_logs_attach(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct bufferevent *bev, struct frame_decoder *frames,
    struct api_slot *slot)
{
	const Corral__Logs *lq = req->logs;
	struct timeval write_timeout = { LOGS_WRITE_TIMEOUT_S, 0 };
	struct logs_filter filter;
	char msg[LOGS_MESSAGE_MAX_BYTES];
	struct ledgerread *reader;
	struct logs_stream *st;
	const char *problem, *code = WIRE_ERR_LIMIT;

	memset(&filter, 0, sizeof(filter));
	if ((problem = logs_check_share(caller->uid)) != NULL ||
	    (problem = logs_check(d, caller, lq, &filter, &code)) != NULL) {
		api_slot_release(slot);
		api_stream_refuse(bev, frames, code, problem);
		return;
	}
	if ((reader = ledgerread_open(d->cfg->log_dir, lq->since_us, lq->follow)) == NULL) {
		snprintf(msg, sizeof(msg), "cannot read the ledger's folder %s: %s",
		    d->cfg->log_dir, strerror(errno));
		api_slot_release(slot);
		api_stream_refuse(bev, frames, WIRE_ERR_UNAVAILABLE, msg);
		return;
	}
	st = xcalloc(1, sizeof(*st));
	if ((st->timer = evtimer_new(d->base, logs_stream_on_timer, st)) == NULL) {
		ledgerread_free(reader);
		free(st);
		api_slot_release(slot);
		api_stream_refuse(bev, frames, WIRE_ERR_INTERNAL, "out of memory");
		return;
	}
	st->d = d;
	st->caller = *caller;
	st->client = bev;
	st->frames = frames;
	st->slot = slot;
	api_slot_on_close(slot, logs_stream_close, st);
	st->reader = reader;
	st->filter = filter;
	st->next = logs_streams;
	logs_streams = st;
	bufferevent_setcb(bev, logs_stream_on_read, logs_stream_on_write, logs_stream_on_event, st);
	bufferevent_setwatermark(bev, EV_WRITE, LOGS_FRAME_MAX_BYTES, 0);
	bufferevent_set_timeouts(bev, NULL, &write_timeout);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	st->sent_ns = time_mono_ns();
	logs_stream_schedule(st, 0);
}
