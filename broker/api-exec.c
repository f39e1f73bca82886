/* The exec stream (PROTOCOL.md section 4): a control connection whose first
 * frame started a command becomes a two-way stream of ExecSandboxInput
 * frames in and ExecSandboxEvent frames out, until the exit event. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "broker/api.h"
#include "broker/daemon.h"
#include "broker/exec.h"
#include "broker/limitwatch.h"
#include "broker/sandbox.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "egress-proxy/proxy.h"

#define EXEC_CLIENT_BUFFER_MAX_BYTES (1024 * 1024)     /* output queued for a slow client */
/* stdin queued for a command that does not read it: past it the client's
 * frames wait in the kernel, so a stream holds this much and one frame. */
#define EXEC_STDIN_BUFFER_MAX_BYTES (1024 * 1024)
#define EXEC_READ_CHUNK_BYTES (64 * 1024)               /* one output event, at most */
#define EXEC_KILL_GRACE_S 2                             /* SIGTERM, then SIGKILL */
#define EXEC_DRAIN_AFTER_EXIT_S 2                       /* output a grandchild keeps open */
#define EXEC_ENV_MAX 256

struct exec_stream {
	struct daemon *d;
	struct sandbox *sb;             /* NULL once the sandbox is gone */
	struct bufferevent *client;
	struct frame_decoder *frames;
	struct api_slot *slot;
	struct exec_proc *proc;
	bool tty;
	struct bufferevent *out;        /* stdout, or the terminal */
	struct bufferevent *err;        /* stderr (pipes mode) */
	struct bufferevent *in;         /* stdin, or the terminal */
	bool stdin_closing;             /* an empty stdin frame came: close once written */
	bool stdin_paused;              /* stdin is full: the client is not read */
	struct evbuffer *early_in;      /* stdin that came before the command started */
	bool started;
	bool exited;
	int code;
	bool done;                      /* the exit (or error) event is queued: close after it */
	unsigned timeout_s;
	struct event *timer;            /* the command's timeout, then the kill grace */
	bool killing;
	bool timed_out;                 /* the timeout ended it, before its own exit */
	uint64_t marks[LIMITWATCH_KINDS];       /* the sandbox's limit hits seen as it started */
	struct exec_stream *next;       /* the sandbox's streams */
};

static void exec_stream_maybe_finish(struct exec_stream *st);

/* Queues one ExecSandboxEvent frame for the client. */
static void
exec_stream_send(struct exec_stream *st, const Corral__ExecSandboxEvent *ev)
{
	size_t len;
	uint8_t *frame = wire_pack(&ev->base, &len);

	if (frame == NULL)
		return;
	bufferevent_write(st->client, frame, len);
	free(frame);
}

static void
exec_stream_send_output(struct exec_stream *st, bool is_stderr, const void *data, size_t len)
{
	Corral__ExecSandboxEvent ev = CORRAL__EXEC_SANDBOX_EVENT__INIT;
	Corral__Output out = CORRAL__OUTPUT__INIT;

	out.data.data = (uint8_t *)(uintptr_t)data;
	out.data.len = len;
	if (is_stderr) {
		ev.payload_case = CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDERR;
		ev.stderr = &out;
	} else {
		ev.payload_case = CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDOUT;
		ev.stdout = &out;
	}
	exec_stream_send(st, &ev);
}

/* The one event that ends a stream that never ran (or lost its sandbox). */
static void
exec_stream_send_error(struct exec_stream *st, const char *code, const char *message)
{
	Corral__ExecSandboxEvent ev = CORRAL__EXEC_SANDBOX_EVENT__INIT;
	Corral__Error e = CORRAL__ERROR__INIT;

	e.code = (char *)(uintptr_t)code;
	e.message = (char *)(uintptr_t)message;
	ev.payload_case = CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_ERROR;
	ev.error = &e;
	exec_stream_send(st, &ev);
	st->done = true;
}

/* What ended ST's command, if not itself: its timeout, or a limit of the
 * sandbox hit while it ran (the kernel's OOM kill is a SIGKILL: 137; a
 * refused fork fails what asked), as a shell run's ended_by says. */
static const char *
exec_stream_ended_by(struct exec_stream *st)
{
	struct limitwatch *w = st->sb != NULL ? st->sb->limit_watch : NULL;

	if (st->timed_out)
		return "timeout";
	if (st->code == 128 + SIGKILL &&
	    limitwatch_grew(w, LIMITWATCH_MEMORY, st->marks[LIMITWATCH_MEMORY]))
		return limitwatch_reason(LIMITWATCH_MEMORY);
	if (st->code != 0 && limitwatch_grew(w, LIMITWATCH_PIDS, st->marks[LIMITWATCH_PIDS]))
		return limitwatch_reason(LIMITWATCH_PIDS);
	return "";
}

static void
exec_stream_send_exit(struct exec_stream *st)
{
	Corral__ExecSandboxEvent ev = CORRAL__EXEC_SANDBOX_EVENT__INIT;
	Corral__Exit ex = CORRAL__EXIT__INIT;

	ex.exit_code = st->code;
	ex.timed_out = st->timed_out;
	ex.ended_by = (char *)(uintptr_t)exec_stream_ended_by(st);
	ev.payload_case = CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_EXIT;
	ev.exit = &ex;
	exec_stream_send(st, &ev);
	st->done = true;
}

static void
exec_stream_unlink(struct exec_stream *st)
{
	struct exec_stream **pp;

	if (st->sb == NULL)
		return;
	for (pp = &st->sb->streams; *pp != NULL; pp = &(*pp)->next)
		if (*pp == st) {
			*pp = st->next;
			break;
		}
	st->sb = NULL;
}

static void
exec_stream_free(struct exec_stream *st)
{
	exec_stream_unlink(st);
	if (st->proc != NULL && !st->exited)
		exec_kill(st->proc, SIGKILL);   /* an exec stream does not outlive its client */
	if (st->out != NULL)
		bufferevent_free(st->out);
	if (st->err != NULL)
		bufferevent_free(st->err);
	if (st->in != NULL && st->in != st->out)
		bufferevent_free(st->in);
	exec_proc_free(st->proc);
	if (st->timer != NULL)
		event_free(st->timer);
	if (st->client != NULL)
		bufferevent_free(st->client);
	frame_decoder_free(st->frames);
	if (st->early_in != NULL)
		evbuffer_free(st->early_in);
	api_slot_release(st->slot);
	free(st);
}

/* Closes the stream once its last event is written. */
static void
exec_stream_on_client_write(struct bufferevent *bev, void *arg)
{
	struct exec_stream *st = arg;

	if (st->done) {
		exec_stream_free(st);
		return;
	}
	/* The client caught up: read the command's output again. */
	if (st->out != NULL)
		bufferevent_enable(st->out, EV_READ);
	if (st->err != NULL)
		bufferevent_enable(st->err, EV_READ);
}

/* Back-pressure: output stops being read while the client is behind. */
static bool
exec_stream_client_full(struct exec_stream *st)
{
	return evbuffer_get_length(bufferevent_get_output(st->client)) >=
	    EXEC_CLIENT_BUFFER_MAX_BYTES;
}

static void
exec_stream_on_output(struct bufferevent *bev, void *arg)
{
	struct exec_stream *st = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	bool is_stderr = bev == st->err;
	uint8_t chunk[EXEC_READ_CHUNK_BYTES];
	int n;

	while ((n = evbuffer_remove(in, chunk, sizeof(chunk))) > 0)
		exec_stream_send_output(st, is_stderr, chunk, (size_t)n);
	if (exec_stream_client_full(st))
		bufferevent_disable(bev, EV_READ);
}

/* The command's side of a pipe (or the terminal) ended. */
static void
exec_stream_on_output_event(struct bufferevent *bev, short what, void *arg)
{
	struct exec_stream *st = arg;
	bool was_stdin = bev == st->in;

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	exec_stream_on_output(bev, st);
	if (bev == st->in)
		st->in = NULL;
	if (bev == st->out)
		st->out = NULL;
	else if (bev == st->err)
		st->err = NULL;
	bufferevent_free(bev);
	/* What stdin held is dropped with it: a paused client goes on. */
	if (was_stdin && st->stdin_paused && !st->done) {
		st->stdin_paused = false;
		bufferevent_enable(st->client, EV_READ);
	}
	exec_stream_maybe_finish(st);
}

/* The exit event goes last, after every byte of output. */
static void
exec_stream_maybe_finish(struct exec_stream *st)
{
	if (!st->exited || st->done)
		return;
	if ((st->out != NULL || st->err != NULL) && !st->killing)
		return;
	exec_stream_send_exit(st);
}

static void exec_stream_on_client_read(struct bufferevent *bev, void *arg);

/* Bytes of stdin the broker holds for the command. */
static size_t
exec_stream_stdin_queued(const struct exec_stream *st)
{
	return evbuffer_get_length(st->early_in) +
	    (st->in != NULL ? evbuffer_get_length(bufferevent_get_output(st->in)) : 0);
}

/* The command took what stdin held (or the terminal's input): a client
 * paused for it is read again. */
static void
exec_stream_on_stdin_written(struct bufferevent *bev, void *arg)
{
	struct exec_stream *st = arg;

	if (st->stdin_paused) {
		st->stdin_paused = false;
		bufferevent_enable(st->client, EV_READ);
		exec_stream_on_client_read(st->client, st);
		return;
	}
	if (!st->stdin_closing || st->tty)
		return;
	bufferevent_free(st->in);
	st->in = NULL;
	exec_close_stdin(st->proc);
}

/* Closes the command's stdin once all that was written to it is taken. */
static void
exec_stream_flush_stdin(struct exec_stream *st)
{
	if (st->in != NULL && st->stdin_closing &&
	    evbuffer_get_length(bufferevent_get_output(st->in)) == 0)
		exec_stream_on_stdin_written(st->in, st);
}

/* One ExecSandboxInput from the client. */
static int
exec_stream_input(struct exec_stream *st, const uint8_t *payload, size_t len)
{
	const char *why = NULL;
	Corral__ExecSandboxInput *in = wire_exec_input_unpack(payload, len, &why);
	int rc = 0;

	if (in == NULL)
		return -1;
	if (in->payload_case == CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD_STDIN) {
		if (in->stdin.len == 0)
			st->stdin_closing = !st->tty;
		else if (st->in != NULL)
			bufferevent_write(st->in, in->stdin.data, in->stdin.len);
		else if (!st->started)
			evbuffer_add(st->early_in, in->stdin.data, in->stdin.len);
		exec_stream_flush_stdin(st);
	} else if (in->payload_case == CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD_RESIZE) {
		if (st->proc != NULL)
			exec_resize(st->proc, in->resize->rows, in->resize->cols);
	} else if (in->payload_case != CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD_STDIN) {
		rc = -1;        /* a second start, or anything else: a protocol error */
	}
	corral__exec_sandbox_input__free_unpacked(in, NULL);
	return rc;
}

static void
exec_stream_on_client_read(struct bufferevent *bev, void *arg)
{
	struct exec_stream *st = arg;
	struct evbuffer *buf = bufferevent_get_input(bev);
	const uint8_t *payload;
	enum frame_status fs;
	size_t len;

	while (!st->done && !st->stdin_paused &&
	    (fs = api_read_frame(buf, st->frames)) != FRAME_NEED_MORE) {
		payload = fs == FRAME_READY ? frame_decoder_payload(st->frames, &len) : NULL;
		if (payload == NULL || exec_stream_input(st, payload, len) == -1) {
			exec_stream_send_error(st, WIRE_ERR_PROTOCOL, "expected ExecSandboxInput "
			    "frames (stdin or resize)");
			break;
		}
		frame_decoder_next(st->frames);
		/* A command that does not read its stdin holds the client back,
		 * not the broker's memory. */
		if (exec_stream_stdin_queued(st) >= EXEC_STDIN_BUFFER_MAX_BYTES) {
			st->stdin_paused = true;
			bufferevent_disable(bev, EV_READ);
		}
	}
}

/* The client went away: the command is killed with it. */
static void
exec_stream_on_client_event(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		exec_stream_free(arg);
}

static struct bufferevent *
exec_stream_pipe(struct exec_stream *st, int fd, bool reading)
{
	struct bufferevent *bev = bufferevent_socket_new(st->d->base, fd, 0);

	if (bev == NULL)
		return NULL;
	if (reading) {
		bufferevent_setcb(bev, exec_stream_on_output, NULL, exec_stream_on_output_event, st);
		bufferevent_enable(bev, EV_READ);
	} else {
		bufferevent_setcb(bev, NULL, exec_stream_on_stdin_written,
		    exec_stream_on_output_event, st);
		bufferevent_enable(bev, EV_WRITE);
	}
	return bev;
}

static void
exec_stream_on_started(struct exec_proc *p, const char *why, void *arg)
{
	struct exec_stream *st = arg;

	if (why != NULL) {
		exec_stream_send_error(st, WIRE_ERR_INVALID, why);
		return;
	}
	st->started = true;
	for (enum limitwatch_kind k = 0; k < LIMITWATCH_KINDS; k++)
		st->marks[k] = limitwatch_seen(st->sb != NULL ? st->sb->limit_watch : NULL, k);
	if (st->tty) {
		st->out = st->in = exec_stream_pipe(st, exec_tty(p), true);
		if (st->out != NULL)
			bufferevent_setcb(st->out, exec_stream_on_output, exec_stream_on_stdin_written,
			    exec_stream_on_output_event, st);
	} else {
		st->out = exec_stream_pipe(st, exec_stdout(p), true);
		st->err = exec_stream_pipe(st, exec_stderr(p), true);
		st->in = exec_stream_pipe(st, exec_stdin(p), false);
	}
	/* What the client sent before the command was there goes first. */
	if (st->in != NULL)
		bufferevent_write_buffer(st->in, st->early_in);
	exec_stream_flush_stdin(st);
}

/* corrald shuts down: the stream ends with it. */
static void
exec_stream_close(void *arg)
{
	exec_stream_free(arg);
}

/* The timer ends what runs too long: SIGTERM, then after a grace SIGKILL;
 * after the exit it stops waiting for output a grandchild holds open. */
static void
exec_stream_on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct exec_stream *st = arg;
	struct timeval grace = { EXEC_KILL_GRACE_S, 0 };

	if (st->exited) {
		st->killing = true;
		exec_stream_maybe_finish(st);
		return;
	}
	/* Why the command died, for the auditor and the client; it dies
	 * whatever the ledger says. */
	st->timed_out = true;
	if (!st->killing && st->sb != NULL && st->sb->tenant != NULL)
		(void)proxy_tenant_record_lifecycle(st->sb->tenant, "exec_timeout", NULL);
	exec_kill(st->proc, st->killing ? SIGKILL : SIGTERM);
	st->killing = true;
	evtimer_add(st->timer, &grace);
}

static void
exec_stream_on_exited(struct exec_proc *p, int code, void *arg)
{
	struct exec_stream *st = arg;
	struct timeval drain = { EXEC_DRAIN_AFTER_EXIT_S, 0 };

	st->exited = true;
	st->code = code;
	evtimer_add(st->timer, &drain);
	exec_stream_maybe_finish(st);
}

/* The command's environment: corral's own, then the sandbox's --env, then
 * the request's. */
static char **
exec_stream_env(const struct sandbox *sb, const Corral__ExecSandboxRequest *req)
{
	const char *extra[EXEC_ENV_MAX + 1];
	char gw[INET_ADDRSTRLEN];
	size_t n = 0;
	char **env, **pairs = xcalloc(req->n_environment + 1, sizeof(*pairs));

	for (size_t i = 0; i < sb->nenv && n < EXEC_ENV_MAX; i++)
		extra[n++] = sb->env[i];
	for (size_t i = 0; i < req->n_environment && n < EXEC_ENV_MAX; i++) {
		xasprintf(&pairs[i], "%s=%s", req->environment[i]->key, req->environment[i]->value);
		extra[n++] = pairs[i];
	}
	extra[n] = NULL;
	inet_ntop(AF_INET, &sb->gateway, gw, sizeof(gw));
	env = exec_env_new(gw, sb->home, extra);
	for (size_t i = 0; i < req->n_environment; i++)
		free(pairs[i]);
	free(pairs);
	return env;
}

/* Starts the command of REQ in SB; the error in *WHY when it cannot. */
static int
exec_stream_start(struct exec_stream *st, struct sandbox *sb,
    const Corral__ExecSandboxRequest *req, char **why)
{
	static const struct exec_callbacks cb = { exec_stream_on_started, exec_stream_on_exited };
	const char **argv = xcalloc(req->n_command + 1, sizeof(*argv));
	struct exec_request er = { .argv = argv, .tty = req->tty, .rows = 24, .cols = 80, .extra_fd = -1 };
	char **env = exec_stream_env(sb, req);

	for (size_t i = 0; i < req->n_command; i++)
		argv[i] = req->command[i];
	er.envp = (const char *const *)env;
	er.cwd = req->workdir[0] != '\0' ? req->workdir : NULL;
	st->proc = exec_start(sb->channel, &er, &cb, st, why);
	exec_env_free(env);
	free(argv);
	return st->proc != NULL ? 0 : -1;
}

/* Checks the request before anything runs; an error message, or NULL. */
static const char *
exec_stream_check(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__ExecSandboxRequest *req, struct sandbox **sb, const char **code)
{
	static char msg[256];

	*code = WIRE_ERR_INVALID;
	if (req->n_command == 0 || req->command[0][0] == '\0')
		return "the command is empty (give it after --)";
	*sb = sandbox_find(d, req->sandbox_id);
	if (*sb == NULL || !sandbox_visible(*sb, caller)) {
		*code = WIRE_ERR_NOT_FOUND;
		snprintf(msg, sizeof(msg), "no sandbox named '%s'", req->sandbox_id);
		return msg;
	}
	return NULL;
}

void
api_exec_attach(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *top, struct bufferevent *bev, struct frame_decoder *frames,
    struct api_slot *slot)
{
	const Corral__ExecSandboxRequest *req = top->exec_start;
	struct exec_stream *st = xcalloc(1, sizeof(*st));
	struct timeval limit = { req->timeout_seconds, 0 };
	struct sandbox *sb = NULL;
	const char *problem, *code;
	char *why = NULL;

	st->d = d;
	st->client = bev;
	st->frames = frames;
	st->slot = slot;
	api_slot_on_close(slot, exec_stream_close, st);
	st->tty = req->tty;
	st->early_in = evbuffer_new();
	/* The start's own stdin goes first, as if sent in a stdin frame
	 * (PROTOCOL.md, "The exec stream"). */
	if (req->stdin.len > 0)
		evbuffer_add(st->early_in, req->stdin.data, req->stdin.len);
	st->timer = evtimer_new(d->base, exec_stream_on_timer, st);
	bufferevent_setcb(bev, exec_stream_on_client_read, exec_stream_on_client_write,
	    exec_stream_on_client_event, st);
	bufferevent_set_timeouts(bev, NULL, NULL);
	if ((problem = exec_stream_check(d, caller, req, &sb, &code)) != NULL) {
		exec_stream_send_error(st, code, problem);
		return;
	}
	if (exec_stream_start(st, sb, req, &why) == -1) {
		exec_stream_send_error(st, WIRE_ERR_UNAVAILABLE, why != NULL ? why : "cannot start");
		free(why);
		return;
	}
	st->sb = sb;
	st->next = sb->streams;
	sb->streams = st;
	if (req->timeout_seconds > 0)
		evtimer_add(st->timer, &limit);
	/* Frames the client sent right behind its start wait in the buffer. */
	exec_stream_on_client_read(bev, st);
}

const char *
api_exec_run_of(const struct sandbox *sb, pid_t pid, char *buf, size_t size)
{
	for (const struct exec_stream *st = sb->streams; st != NULL; st = st->next)
		if (st->proc != NULL && !st->exited && exec_pid(st->proc) == pid) {
			snprintf(buf, size, "exec:%d", (int)pid);
			return buf;
		}
	return NULL;
}

void
api_exec_sandbox_gone(struct sandbox *sb)
{
	struct exec_stream *st;

	while ((st = sb->streams) != NULL) {
		exec_stream_unlink(st);
		exec_proc_free(st->proc);
		st->proc = NULL;
		st->exited = true;
		if (!st->done)
			exec_stream_send_error(st, WIRE_ERR_NOT_FOUND, "the sandbox was deleted");
	}
}
