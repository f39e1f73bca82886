/* Shell runs on the wire (PROTOCOL.md section 5):
 * RunStart and RunResume become a stream of run_event frames (output,
 * then one result); RunAck, RunInterrupt and RunList are answered at
 * once. The shells themselves are shell.c's. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "broker/api.h"
#include "broker/runtab.h"
#include "broker/sandbox.h"
#include "broker/shell.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "common/xmalloc.h"

#define RUN_STREAM_CHUNK_BYTES (256 * 1024)             /* kept output per frame */
#define RUN_STREAM_BUFFER_MAX_BYTES (4 * 1024 * 1024)   /* queued for a slow client: then cut */
#define RUN_ID_RANDOM_BYTES 8                           /* of an id the daemon chooses */
#define RUN_MSG_BYTES 512

/* One client following one run. */
struct run_stream {
	struct run_watcher w;           /* first: the watcher is the stream */
	struct bufferevent *client;
	struct frame_decoder *frames;
	struct api_slot *slot;
	struct run *run;                /* NULL once the run ended or was let go */
	bool done;                      /* the last frame is queued: close after it */
};

static void
run_stream_send(struct run_stream *st, Corral__RunEvent *ev)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	uint8_t *frame;
	size_t len;

	resp.response_case = CORRAL__RESPONSE__RESPONSE_RUN_EVENT;
	resp.run_event = ev;
	if ((frame = wire_pack(&resp.base, &len)) == NULL)
		return;
	bufferevent_write(st->client, frame, len);
	free(frame);
}

static void
run_stream_send_output(struct run_stream *st, uint64_t offset, const uint8_t *data, size_t len)
{
	Corral__RunEvent ev = CORRAL__RUN_EVENT__INIT;
	Corral__RunOutput out = CORRAL__RUN_OUTPUT__INIT;

	out.offset = offset;
	out.data.data = (uint8_t *)(uintptr_t)data;
	out.data.len = len;
	ev.event_case = CORRAL__RUN_EVENT__EVENT_OUTPUT;
	ev.output = &out;
	run_stream_send(st, &ev);
}

/* R as RunResult; cwd and ended_by point into R or to constants: a
 * message the response frees copies them (run_info). */
static void
run_result_fill(const struct run *r, Corral__RunResult *res)
{
	res->exit_code = r->result.exit_code;
	res->signal = r->result.signal;
	res->cwd = r->result.cwd != NULL ? r->result.cwd : (char *)(uintptr_t)"";
	res->timed_out = r->result.timed_out;
	res->truncated = run_truncated(r);
	res->respawned = r->result.respawned;
	res->state_saved = r->result.state_saved;
	res->ended_by = (char *)(uintptr_t)(r->result.ended_by != NULL ? r->result.ended_by : "");
}

/* The last frame: the result, or the error that ended the run. */
static void
run_stream_send_end(struct run_stream *st, const struct run *r)
{
	Corral__RunEvent ev = CORRAL__RUN_EVENT__INIT;
	Corral__RunResult res = CORRAL__RUN_RESULT__INIT;
	uint8_t *frame;
	size_t len;

	st->done = true;
	if (r->error != NULL) {
		if ((frame = wire_pack_error(WIRE_ERR_UNAVAILABLE, r->error, &len)) != NULL)
			bufferevent_write(st->client, frame, len);
		free(frame);
		return;
	}
	run_result_fill(r, &res);
	ev.event_case = CORRAL__RUN_EVENT__EVENT_RESULT;
	ev.result = &res;
	run_stream_send(st, &ev);
}

static void
run_stream_free(struct run_stream *st)
{
	if (st->run != NULL)
		run_unwatch(st->run, &st->w);
	bufferevent_free(st->client);
	frame_decoder_free(st->frames);
	api_slot_release(st->slot);
	free(st);
}

/* corrald shuts down: the stream ends with it (the run went with its sandbox). */
static void
run_stream_close(void *arg)
{
	run_stream_free(arg);
}

/* A chunk of the run's output, as it comes. A client too slow to take it
 * is cut (it may resume from its offset); the run goes on. */
static void
run_stream_on_output(struct run_watcher *w, uint64_t offset, const uint8_t *data, size_t len)
{
	struct run_stream *st = (struct run_stream *)w;

	if (evbuffer_get_length(bufferevent_get_output(st->client)) > RUN_STREAM_BUFFER_MAX_BYTES) {
		run_stream_free(st);
		return;
	}
	run_stream_send_output(st, offset, data, len);
}

static void
run_stream_on_done(struct run_watcher *w, struct run *r)
{
	struct run_stream *st = (struct run_stream *)w;

	st->run = NULL;
	run_stream_send_end(st, r);
}

static void
run_stream_on_write(struct bufferevent *bev, void *arg)
{
	struct run_stream *st = arg;

	if (st->done && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		run_stream_free(st);
}

/* Nothing is expected from the client until the result; whatever comes is
 * dropped. A client that leaves lets the run go on without it. */
static void
run_stream_on_read(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);

	evbuffer_drain(in, evbuffer_get_length(in));
}

static void
run_stream_on_event(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		run_stream_free(arg);
}

/* Sends R's kept output (its late output when LATE) from FROM on, then
 * its end if it has ended, else follows it. */
static void
run_stream_follow(struct run_stream *st, struct run *r, uint64_t from, bool late)
{
	uint8_t *chunk = xmalloc(RUN_STREAM_CHUNK_BYTES);
	uint64_t at;
	size_t n;

	while ((n = (late ? run_late_read : run_output_read)(r, from, chunk,
	    RUN_STREAM_CHUNK_BYTES, &at)) > 0) {
		run_stream_send_output(st, at, chunk, n);
		from = at + n;
	}
	free(chunk);
	if (r->state == RUN_DONE) {
		run_stream_send_end(st, r);
		return;
	}
	st->run = r;
	run_watch(r, &st->w);
}

/* The sandbox NAME if CALLER may use it; else an error message in MSG. */
static struct sandbox *
run_sandbox(struct daemon *d, const struct sandbox_caller *caller, const char *name,
    char msg[RUN_MSG_BYTES])
{
	struct sandbox *sb = sandbox_find(d, name);

	/* Another user's sandbox looks the same as none at all. */
	if (sb == NULL || !sandbox_visible(sb, caller)) {
		snprintf(msg, RUN_MSG_BYTES, "no sandbox named '%s'", name);
		return NULL;
	}
	return sb;
}

/* Checks a RunStart's fields; NULL, or what is wrong. */
static const char *
run_start_check(const Corral__RunStart *req, char msg[RUN_MSG_BYTES])
{
	const char *shell = req->shell[0] != '\0' ? req->shell : SHELL_NAME_DEFAULT;
	size_t n = strlen(shell);

	if (req->command[0] == '\0')
		return "the command is empty (give it after --)";
	if (strlen(req->command) > RUN_COMMAND_MAX_BYTES) {
		snprintf(msg, RUN_MSG_BYTES, "the command is longer than %d bytes",
		    RUN_COMMAND_MAX_BYTES);
		return msg;
	}
	if (req->timeout_seconds > SHELL_TIMEOUT_MAX_S) {
		snprintf(msg, RUN_MSG_BYTES, "timeout %u s is over the limit of %d s",
		    req->timeout_seconds, SHELL_TIMEOUT_MAX_S);
		return msg;
	}
	if (req->request_id[0] != '\0' && !run_id_valid(req->request_id)) {
		snprintf(msg, RUN_MSG_BYTES, "request id '%.64s' is not 1 to %d characters of "
		    "A-Z a-z 0-9 . _ : -", req->request_id, RUN_ID_MAX_BYTES);
		return msg;
	}
	if (n > 63 || strspn(shell, "abcdefghijklmnopqrstuvwxyz0123456789-") != n ||
	    shell[0] == '-')
		return "a shell name is 1 to 63 of a-z 0-9 and -, not starting with -";
	return NULL;
}

/* An id for a run whose client chose none (it cannot resume it). */
static void
run_random_id(char *out, size_t size)
{
	uint8_t raw[RUN_ID_RANDOM_BYTES];
	size_t o;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		fatal("%s: getrandom failed", __func__);
	o = (size_t)snprintf(out, size, "run-");
	for (size_t i = 0; i < sizeof(raw) && o + 2 < size; i++)
		o += (size_t)snprintf(out + o, size - o, "%02x", raw[i]);
}

/* The run RunStart names: the one it already started (same command and
 * shell), or a new one queued on its shell; NULL with *CODE and MSG. */
static struct run *
run_start(struct shell_host *h, const Corral__RunStart *req, const char **code,
    char msg[RUN_MSG_BYTES])
{
	const char *shell = req->shell[0] != '\0' ? req->shell : SHELL_NAME_DEFAULT;
	char idbuf[RUN_ID_MAX_BYTES + 1];
	const char *id = req->request_id;
	struct run *r;
	char *why = NULL;

	if (id[0] == '\0') {
		run_random_id(idbuf, sizeof(idbuf));
		id = idbuf;
	}
	if ((r = runtab_find(shell_host_runs(h), id)) != NULL) {
		if (strcmp(r->command, req->command) == 0 && strcmp(r->shell, shell) == 0)
			return r;       /* the same run asked again: never a second run */
		*code = WIRE_ERR_EXISTS;
		snprintf(msg, RUN_MSG_BYTES, "request id '%s' was used for another command in "
		    "this sandbox; choose a new id", id);
		return NULL;
	}
	r = runtab_add(shell_host_runs(h), id, shell, req->command,
	    req->timeout_seconds > 0 ? req->timeout_seconds : SHELL_TIMEOUT_DEFAULT_S,
	    time_now_us());
	*code = WIRE_ERR_LIMIT;
	if (r == NULL) {
		snprintf(msg, RUN_MSG_BYTES, "this sandbox already keeps %d runs in flight or "
		    "followed; acknowledge or wait for some", RUNTAB_RUNS_MAX);
		return NULL;
	}
	if (shell_submit(h, r, &why) == -1) {
		snprintf(msg, RUN_MSG_BYTES, "%s", why);
		free(why);
		runtab_remove(shell_host_runs(h), r);
		return NULL;
	}
	return r;
}

/* The run a RunStart or RunResume attaches to, and the offset to send
 * from; NULL with *CODE and MSG. */
static struct run *
run_attach_find(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *top, uint64_t *from, const char **code, char msg[RUN_MSG_BYTES])
{
	bool start = top->request_case == CORRAL__REQUEST__REQUEST_RUN_START;
	const char *name = start ? top->run_start->sandbox : top->run_resume->sandbox;
	struct sandbox *sb;
	struct shell_host *h;
	struct run *r;
	const char *bad;

	*code = WIRE_ERR_INVALID;
	if (start && (bad = run_start_check(top->run_start, msg)) != NULL) {
		if (bad != msg)
			snprintf(msg, RUN_MSG_BYTES, "%s", bad);
		return NULL;
	}
	*code = WIRE_ERR_NOT_FOUND;
	if ((sb = run_sandbox(d, caller, name, msg)) == NULL)
		return NULL;
	*from = start ? 0 : top->run_resume->from_offset;
	h = shell_host_of(d, sb, start);
	if (start)
		return run_start(h, top->run_start, code, msg);
	r = h != NULL ? runtab_find(shell_host_runs(h), top->run_resume->request_id) : NULL;
	if (r == NULL) {
		snprintf(msg, RUN_MSG_BYTES, "sandbox %s holds no run '%.128s' (never started, "
		    "acknowledged, or dropped as the oldest)", name, top->run_resume->request_id);
	} else if (top->run_resume->late && r->state != RUN_DONE) {
		*code = WIRE_ERR_INVALID;
		snprintf(msg, RUN_MSG_BYTES, "run '%s' is still in flight; its late output is "
		    "what its jobs write after its result", r->id);
		return NULL;
	}
	return r;
}

void
api_run_attach(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *top, struct bufferevent *bev, struct frame_decoder *frames,
    struct api_slot *slot)
{
	char msg[RUN_MSG_BYTES];
	const char *code = WIRE_ERR_INVALID;
	struct run_stream *st;
	uint64_t from = 0;
	struct run *r = run_attach_find(d, caller, top, &from, &code, msg);

	if (r == NULL) {
		api_slot_release(slot);
		api_stream_refuse(bev, frames, code, msg);
		return;
	}
	st = xcalloc(1, sizeof(*st));
	st->slot = slot;
	api_slot_on_close(slot, run_stream_close, st);
	st->w.on_output = run_stream_on_output;
	st->w.on_done = run_stream_on_done;
	st->client = bev;
	st->frames = frames;
	bufferevent_setcb(bev, run_stream_on_read, run_stream_on_write, run_stream_on_event, st);
	bufferevent_set_timeouts(bev, NULL, NULL);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	run_stream_follow(st, r, from, top->request_case == CORRAL__REQUEST__REQUEST_RUN_RESUME &&
	    top->run_resume->late);
}

/* The run ID of sandbox NAME for a table request; NULL with RESP set. */
static struct run *
run_lookup(struct daemon *d, const struct sandbox_caller *caller, const char *name,
    const char *id, struct shell_host **hp, Corral__Response *resp)
{
	char msg[RUN_MSG_BYTES];
	struct sandbox *sb = run_sandbox(d, caller, name, msg);
	struct run *r = NULL;

	*hp = sb != NULL ? shell_host_of(d, sb, false) : NULL;
	if (*hp != NULL)
		r = runtab_find(shell_host_runs(*hp), id);
	if (sb == NULL)
		api_error(resp, WIRE_ERR_NOT_FOUND, "%s", msg);
	else if (r == NULL)
		api_error(resp, WIRE_ERR_NOT_FOUND, "sandbox %s holds no run '%.128s'", name, id);
	return r;
}

static void
api_run_ok(Corral__Response *resp)
{
	Corral__Ok *ok = xmalloc(sizeof(*ok));

	corral__ok__init(ok);
	resp->response_case = CORRAL__RESPONSE__RESPONSE_OK;
	resp->ok = ok;
}

int
api_run_ack(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp)
{
	struct shell_host *h;
	struct run *r = run_lookup(d, caller, req->run_ack->sandbox, req->run_ack->request_id,
	    &h, resp);

	if (r == NULL)
		return 0;
	if (r->state != RUN_DONE) {
		api_error(resp, WIRE_ERR_INVALID, "run '%s' is still in flight; wait for its "
		    "result or interrupt it first", r->id);
		return 0;
	}
	runtab_remove(shell_host_runs(h), r);
	api_run_ok(resp);
	return 0;
}

int
api_run_interrupt(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp)
{
	struct shell_host *h;
	struct run *r = run_lookup(d, caller, req->run_interrupt->sandbox,
	    req->run_interrupt->request_id, &h, resp);

	if (r == NULL)
		return 0;
	shell_interrupt(h, r);
	api_run_ok(resp);
	return 0;
}

/* One run as RunInfo, every string a copy (the response frees them). */
static Corral__RunInfo *
run_info(const struct run *r)
{
	Corral__RunInfo *info = xmalloc(sizeof(*info));

	corral__run_info__init(info);
	info->request_id = xstrdup(r->id);
	info->shell = xstrdup(r->shell);
	info->command = xstrdup(r->command);
	info->started_at_us = r->started_us;
	info->output_bytes = r->out.total;
	info->late_bytes = r->late.total;
	if (r->state == RUN_DONE && r->error == NULL) {
		info->result = xmalloc(sizeof(*info->result));
		corral__run_result__init(info->result);
		run_result_fill(r, info->result);
		info->result->cwd = xstrdup(info->result->cwd);
		info->result->ended_by = xstrdup(info->result->ended_by);
	}
	return info;
}

int
api_run_list(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp)
{
	char msg[RUN_MSG_BYTES];
	struct sandbox *sb = run_sandbox(d, caller, req->run_list->sandbox, msg);
	Corral__RunListReply *list;
	struct shell_host *h;
	size_t i = 0;

	if (sb == NULL) {
		api_error(resp, WIRE_ERR_NOT_FOUND, "%s", msg);
		return 0;
	}
	list = xmalloc(sizeof(*list));
	corral__run_list_reply__init(list);
	h = shell_host_of(d, sb, false);
	if (h != NULL && shell_host_runs(h)->count > 0) {
		list->runs = xcalloc(shell_host_runs(h)->count, sizeof(*list->runs));
		for (struct run *r = shell_host_runs(h)->head; r != NULL; r = r->next)
			list->runs[i++] = run_info(r);
	}
	list->n_runs = i;
	resp->response_case = CORRAL__RESPONSE__RESPONSE_RUN_LIST;
	resp->run_list = list;
	return 0;
}
