/* The HTTP/2 half of a terminated connection (mitm.h, mitm-int.h): when
 * the sandbox and the upstream both chose h2, the proxy serves the
 * sandbox's session and is the client of the upstream's, both through
 * nghttp2, and carries each stream across: its request judged by the
 * endpoint's rules, its head's placeholders swapped for the secrets'
 * values (the same secretsub_head as HTTP/1.1, on the head written as
 * HTTP/1.1 text), recorded, then sent; refused ones answered with the
 * proxy's 403 on their stream while the others go on. What comes back is
 * searched for the secrets' values stream by stream, as in HTTP/1.1.
 *
 * Flow control is the peers' own: nghttp2 sends no WINDOW_UPDATE on its
 * own, and a side's window opens again only as the other side takes the
 * bytes (nghttp2_session_consume), so a slow peer slows the fast one and
 * what is held stays within the windows advertised here. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <nghttp2/nghttp2.h>

#include "common/buf.h"
#include "common/wipe.h"
#include "egress-proxy/mitm-int.h"
#include "egress-proxy/secretsub.h"

#define H2_STREAMS_MAX 100              /* the sandbox's concurrent streams */
#define H2_STREAM_WINDOW_BYTES (256 * 1024)     /* each stream's window, both ways */
#define H2_CONNECTION_WINDOW_BYTES (1024 * 1024)
#define H2_HEADERS_MAX_BYTES (64 * 1024)        /* one request's or response's headers */
#define H2_HEADERS_MAX 256
#define H2_METHOD_MAX_BYTES 16
#define H2_TARGET_MAX_BYTES 2048        /* as the ledger keeps it (MITM_TARGET_MAX_BYTES) */
#define H2_STATUS_BYTES 4
/* nghttp2's lists take text as non-const bytes, which they only read. */
#define H2_BYTES(s) ((uint8_t *)(uintptr_t)(s))

struct h2_header {
	char *name, *value;
	size_t nlen, vlen;
};

struct h2_headers {
	struct h2_header *v;
	size_t n, bytes;
};

/* One stream, carried from the sandbox's session to the upstream's. */
struct h2_stream {
	struct mitm_h2 *h;
	int32_t cid;                    /* its id toward the sandbox */
	int32_t uid;                    /* toward the upstream; 0: never sent there */
	struct h2_headers req, resp, trailers;
	bool resp_final;                /* the final response's head came (not a 1xx) */
	bool resp_held;                 /* and waits for the request's body to end */
	bool resp_held_end;             /* it ended the stream */
	struct evbuffer *up;            /* the request's body, for the upstream */
	bool up_end;                    /* the sandbox sent all of it */
	struct evbuffer *scan;          /* the response's body, searched */
	struct mitm_passed passed;      /* the last of it passed on */
	struct evbuffer *down;          /* and then for the sandbox */
	bool down_end;                  /* all of it came */
	bool answered;                  /* by the proxy itself */
	bool body_refused;              /* a placeholder in its body: the rest goes nowhere */
	struct secretsub_scan *body_scan;       /* made at its body's first byte */
	bool head_request;
	bool closed_c, closed_u;        /* each session is done with it */
	struct h2_stream *next;
};

struct mitm_h2 {
	struct mitm *m;
	nghttp2_session *c;             /* toward the sandbox: the proxy serves */
	nghttp2_session *u;             /* toward the upstream: the proxy asks */
	struct h2_stream *streams;
	struct timeval window_given;    /* the last WINDOW_UPDATE toward the upstream */
};

/* --- Streams ------------------------------------------------------------ */

static void
h2_headers_clear(struct h2_headers *hs)
{
	for (size_t i = 0; i < hs->n; i++) {
		free(hs->v[i].name);
		free(hs->v[i].value);
	}
	free(hs->v);
	*hs = (struct h2_headers){ 0 };
}

/* Keeps NAME: VALUE in HS; -1 past the bounds or out of memory. */
static int
h2_headers_add(struct h2_headers *hs, const uint8_t *name, size_t nlen, const uint8_t *value,
    size_t vlen)
{
	struct h2_header *v;

	if (hs->n == H2_HEADERS_MAX || hs->bytes + nlen + vlen > H2_HEADERS_MAX_BYTES)
		return -1;
	if ((v = realloc(hs->v, (hs->n + 1) * sizeof(*v))) == NULL)
		return -1;
	hs->v = v;
	v = &hs->v[hs->n];
	if ((v->name = malloc(nlen + 1)) == NULL || (v->value = malloc(vlen + 1)) == NULL) {
		free(v->name);
		return -1;
	}
	memcpy(v->name, name, nlen);
	v->name[nlen] = '\0';
	memcpy(v->value, value, vlen);
	v->value[vlen] = '\0';
	v->nlen = nlen;
	v->vlen = vlen;
	hs->bytes += nlen + vlen;
	hs->n++;
	return 0;
}

/* The value of NAME in HS, or NULL. */
static const struct h2_header *
h2_headers_get(const struct h2_headers *hs, const char *name)
{
	for (size_t i = 0; i < hs->n; i++)
		if (strcmp(hs->v[i].name, name) == 0)
			return &hs->v[i];
	return NULL;
}

static struct h2_stream *
h2_stream_new(struct mitm_h2 *h, int32_t cid)
{
	struct h2_stream *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return NULL;
	st->h = h;
	st->cid = cid;
	if ((st->up = evbuffer_new()) == NULL || (st->scan = evbuffer_new()) == NULL ||
	    (st->down = evbuffer_new()) == NULL) {
		if (st->up != NULL)
			evbuffer_free(st->up);
		if (st->scan != NULL)
			evbuffer_free(st->scan);
		free(st);
		return NULL;
	}
	st->next = h->streams;
	h->streams = st;
	return st;
}

static void
h2_stream_free(struct h2_stream *st)
{
	h2_headers_clear(&st->req);
	h2_headers_clear(&st->resp);
	h2_headers_clear(&st->trailers);
	evbuffer_free(st->up);
	evbuffer_free(st->scan);
	evbuffer_free(st->down);
	mitm_passed_free(&st->passed);
	secretsub_scan_free(st->body_scan);
	free(st);
}

/* Frees ST once neither session will name it again. */
static void
h2_stream_maybe_free(struct h2_stream *st)
{
	struct h2_stream **pp;

	if (!st->closed_c || (st->uid > 0 && !st->closed_u))
		return;
	for (pp = &st->h->streams; *pp != NULL; pp = &(*pp)->next)
		if (*pp == st) {
			*pp = st->next;
			break;
		}
	h2_stream_free(st);
}

/* --- Sending ------------------------------------------------------------ */

/* Writes what session S has to send into OUT, while OUT holds less than
 * what the slower peer may have waiting; with WIPED (toward an upstream a
 * secret goes to: its header blocks hold the values) by reference, wiped
 * once written. -1 on a session error. */
static int
h2_send(nghttp2_session *s, struct bufferevent *to, bool wiped)
{
	struct evbuffer *out = bufferevent_get_output(to);
	const uint8_t *data;
	uint8_t *copy;
	ssize_t n;

	while (evbuffer_get_length(out) < MITM_BUFFER_MAX_BYTES) {
		if ((n = nghttp2_session_mem_send(s, &data)) < 0)
			return -1;
		if (n == 0)
			break;
		if (!wiped) {
			if (evbuffer_add(out, data, (size_t)n) == -1)
				return -1;
			continue;
		}
		if ((copy = malloc((size_t)n)) == NULL)
			return -1;
		memcpy(copy, data, (size_t)n);
		if (evbuffer_add_reference(out, copy, (size_t)n, mitm_wipe_free, NULL) == -1) {
			mitm_wipe_free(copy, (size_t)n, NULL);
			return -1;
		}
	}
	return 0;
}

/* Both sessions' frames out; the connection ends once the sandbox's
 * session is done, or the upstream's is and the sandbox was told. */
static void
h2_flush(struct mitm_h2 *h)
{
	struct mitm *m = h->m;

	if (m->ended || m->stage == MITM_CLOSING)
		return;
	if (h2_send(h->u, m->upstream, m->cfg->nsecrets > 0) == -1 ||
	    h2_send(h->c, m->client, false) == -1) {
		mitm_end(m, "h2_protocol_error");
		return;
	}
	if (!nghttp2_session_want_read(h->u) && !nghttp2_session_want_write(h->u) &&
	    nghttp2_session_want_read(h->c)) {
		/* The upstream said GOAWAY and finished: so does the sandbox's. */
		nghttp2_session_terminate_session(h->c, NGHTTP2_NO_ERROR);
		if (h2_send(h->c, m->client, false) == -1) {
			mitm_end(m, "h2_protocol_error");
			return;
		}
	}
	if (!nghttp2_session_want_read(h->c) && !nghttp2_session_want_write(h->c))
		mitm_close_after_write(m, NULL);
}

/* --- Bodies --------------------------------------------------------------- */

/* The request's body toward the upstream, as the sandbox sends it; each
 * byte taken opens the sandbox's window by as much. */
static ssize_t
h2_read_up(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
    nghttp2_data_source *source, void *arg)
{
	struct h2_stream *st = source->ptr;
	size_t n = evbuffer_get_length(st->up) < length ? evbuffer_get_length(st->up) : length;

	(void)s;
	(void)id;
	(void)arg;
	if (n > 0) {
		evbuffer_remove(st->up, buf, n);
		nghttp2_session_consume(st->h->c, st->cid, n);
	}
	if (evbuffer_get_length(st->up) == 0 && st->up_end)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	else if (n == 0)
		return NGHTTP2_ERR_DEFERRED;
	return (ssize_t)n;
}

/* Trailers as an nghttp2 list into NV (their storage: HS's). */
static size_t
h2_nv_of(const struct h2_headers *hs, nghttp2_nv *nv, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < hs->n && n < max; i++)
		nv[n++] = (nghttp2_nv){ H2_BYTES(hs->v[i].name), H2_BYTES(hs->v[i].value),
		    hs->v[i].nlen, hs->v[i].vlen, NGHTTP2_NV_FLAG_NONE };
	return n;
}

/* The response's body toward the sandbox, searched already; each byte
 * taken opens the upstream's window by as much. Trailers, when they
 * came, follow the last byte. */
static ssize_t
h2_read_down(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
    nghttp2_data_source *source, void *arg)
{
	struct h2_stream *st = source->ptr;
	size_t n = evbuffer_get_length(st->down) < length ? evbuffer_get_length(st->down) : length;
	nghttp2_nv nv[H2_HEADERS_MAX];

	(void)arg;
	if (n > 0) {
		evbuffer_remove(st->down, buf, n);
		/* A stream the upstream ended still gives its bytes back to
		 * the connection's window, else a few such would stall it. */
		if (st->uid > 0 && !st->closed_u)
			nghttp2_session_consume(st->h->u, st->uid, n);
		else if (st->uid > 0)
			nghttp2_session_consume_connection(st->h->u, n);
	}
	if (evbuffer_get_length(st->down) == 0 && evbuffer_get_length(st->scan) == 0 &&
	    st->down_end) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (st->trailers.n > 0 && nghttp2_submit_trailer(s, id, nv,
		    h2_nv_of(&st->trailers, nv, H2_HEADERS_MAX)) == 0)
			*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
	} else if (n == 0) {
		return NGHTTP2_ERR_DEFERRED;
	}
	return (ssize_t)n;
}

/* Moves what ST's response body holds, searched, toward the sandbox;
 * unless FINAL its end waits (mitm_hold). False when a value
 * was found: the connection ends and those bytes never go. */
static bool
h2_scan_push(struct h2_stream *st, bool final)
{
	struct mitm *m = st->h->m;
	size_t len = evbuffer_get_length(st->scan), keep;
	const uint8_t *data;

	if (len == 0)
		return true;
	if (m->nechoes > 0) {
		if ((data = evbuffer_pullup(st->scan, -1)) == NULL) {
			mitm_end(m, "out_of_memory");
			return false;
		}
		if (mitm_echo_after(m, &st->passed, data, len)) {
			explicit_bzero((void *)(uintptr_t)data, len);
			evbuffer_drain(st->scan, len);
			mitm_end(m, "secret_echoed");
			return false;
		}
		keep = final ? 0 : mitm_hold(m, len);
		if (mitm_passed_add(m, &st->passed, data, len - keep) == -1) {
			mitm_end(m, "out_of_memory");
			return false;
		}
	} else {
		keep = 0;
	}
	evbuffer_remove_buffer(st->scan, st->down, len - keep);
	nghttp2_session_resume_data(st->h->c, st->cid);
	return true;
}

/* Whether the upstream may not have had, for a whole hold, the window to
 * send ST's next bytes. The proxy gives it window only as the sandbox
 * reads, so a pause for want of it is the sandbox's to make, and releasing
 * what the search holds then would cut a value where the sandbox chose.
 * Room for hold_bytes more is room to end any form begun in what is held;
 * room given counts once the WINDOW_UPDATE has left the proxy, and
 * MITM_HOLD_MS after (the sandbox can time when it is given). */
static bool
h2_upstream_starved(const struct h2_stream *st)
{
	struct mitm_h2 *h = st->h;
	nghttp2_session *u = h->u;
	int32_t room = nghttp2_session_get_local_window_size(u);

	if (st->uid > 0 && !st->closed_u) {
		int32_t own = nghttp2_session_get_stream_local_window_size(u, st->uid);

		room = own < room ? own : room;
	}
	return room < 0 || (size_t)room < h->m->hold_bytes || nghttp2_session_want_write(u) ||
	    evbuffer_get_length(bufferevent_get_output(h->m->upstream)) > 0 ||
	    mitm_within_hold(h->m, &h->window_given);
}

void
mitm_h2_upstream_drained(struct mitm *m)
{
	/* A WINDOW_UPDATE that waited in the buffer has left only now. */
	if (m->h2s != NULL)
		event_base_gettimeofday_cached(m->base, &m->h2s->window_given);
}

/* The upstream's session sent a frame: when it gives window, the time. */
static int
h2_u_frame_sent(nghttp2_session *s, const nghttp2_frame *frame, void *arg)
{
	struct mitm_h2 *h = arg;

	(void)s;
	if (frame->hd.type == NGHTTP2_WINDOW_UPDATE)
		event_base_gettimeofday_cached(h->m->base, &h->window_given);
	return 0;
}

void
mitm_h2_release(struct mitm *m)
{
	struct h2_stream *st, *next;
	bool waiting = false;

	if (m->h2s == NULL)
		return;
	for (st = m->h2s->streams; st != NULL && !m->ended; st = next) {
		next = st->next;
		if (st->answered || evbuffer_get_length(st->scan) == 0)
			continue;
		if (h2_upstream_starved(st))
			waiting = true;
		else
			(void)h2_scan_push(st, true);
	}
	if (waiting && !m->ended)
		mitm_hold_again(m);
	h2_flush(m->h2s);
}

/* --- The proxy's own answers -------------------------------------------- */

/* Answers ST itself: STATUS for REASON, the JSON body of HTTP/1.1's. */
static void
h2_answer(struct h2_stream *st, int status, const char *reason, const char *method,
    const char *target)
{
	struct mitm_h2 *h = st->h;
	char code[H2_STATUS_BYTES], length[24];
	nghttp2_data_provider prd = { .source.ptr = st, .read_callback = h2_read_down };
	size_t len = 0;
	char *body = mitm_answer_body(h->m, status, reason, method, target, &len);
	nghttp2_nv nv[] = {
		{ H2_BYTES(":status"), H2_BYTES(code), 7, 3, NGHTTP2_NV_FLAG_NONE },
		{ H2_BYTES("content-type"), H2_BYTES("application/json"), 12, 16,
		  NGHTTP2_NV_FLAG_NONE },
		{ H2_BYTES("cache-control"), H2_BYTES("no-store"), 13, 8, NGHTTP2_NV_FLAG_NONE },
		{ H2_BYTES("content-length"), H2_BYTES(length), 14, 0, NGHTTP2_NV_FLAG_NONE },
	};

	snprintf(code, sizeof(code), "%03d", status);
	snprintf(length, sizeof(length), "%zu", st->head_request || body == NULL ? 0 : len);
	nv[3].valuelen = strlen(length);
	st->answered = true;
	st->down_end = true;
	if (body != NULL && !st->head_request)
		evbuffer_add(st->down, body, len);
	free(body);
	(void)nghttp2_submit_response(h->c, st->cid, nv, sizeof(nv) / sizeof(nv[0]), &prd);
}

/* --- Requests ------------------------------------------------------------- */

/* ST's request as an HTTP/1.1 head (request line, then its headers in
 * order) into OUT, for secretsub_head; -1 when it does not fit. */
static int
h2_head_text(const struct h2_stream *st, const char *method, const char *path, struct buf *out)
{
	if (buf_printf(out, "%s %s HTTP/1.1\r\n", method, path) == -1)
		return -1;
	for (size_t i = 0; i < st->req.n; i++) {
		if (st->req.v[i].name[0] == ':')
			continue;
		if (buf_append(out, st->req.v[i].name, st->req.v[i].nlen) == -1 ||
		    buf_append(out, ": ", 2) == -1 ||
		    buf_append(out, st->req.v[i].value, st->req.v[i].vlen) == -1 ||
		    buf_append(out, "\r\n", 2) == -1)
			return -1;
	}
	return buf_append(out, "\r\n", 2);
}

/* Why ST's request may not go on, before its head is rewritten: NULL when
 * it may. */
static const char *
h2_refusal(struct h2_stream *st, const char *method, const char *path)
{
	static const char *const methods[] = { "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH",
		"OPTIONS" };
	const struct h2_header *authority = h2_headers_get(&st->req, ":authority");
	const struct h2_header *host = h2_headers_get(&st->req, "host");
	const struct h2_header *scheme = h2_headers_get(&st->req, ":scheme");
	struct mitm *m = st->h->m;
	bool known = false;

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		known |= strcmp(method, methods[i]) == 0;
	if (!known)
		return strcmp(method, "CONNECT") == 0 ? "upgrade_not_allowed" : "method_not_supported";
	/* Over TLS the scheme is https; anything else would go on unread. */
	if (path[0] != '/' || scheme == NULL || strcmp(scheme->value, "https") != 0)
		return "request_target_invalid";
	if (strlen(path) >= H2_TARGET_MAX_BYTES)
		return "target_too_long";
	/* The name asked in TLS is the one allowed: no other behind it. */
	if ((authority == NULL && host == NULL) ||
	    (authority != NULL && !mitm_authority_is_ours(m, authority->value, authority->vlen)) ||
	    (host != NULL && !mitm_authority_is_ours(m, host->value, host->vlen)))
		return "host_mismatch";
	return m->hooks.judge != NULL ? m->hooks.judge(m->hooks.arg, method, path) : NULL;
}

/* The rewritten head REWRITTEN (lines in ST's order) as the upstream's
 * request list into NV: the pseudo-headers, then each header, a changed
 * value (a secret's) never indexed by HPACK; toward a host a secret may
 * go to, bodies are asked for as they are. The count, or 0 when the head
 * does not read back. */
static size_t
h2_request_nv(const struct h2_stream *st, const char *rewritten, nghttp2_nv *nv, size_t max)
{
	const bool identity = st->h->m->nechoes > 0;
	const char *line = strstr(rewritten, "\r\n");
	const char *target = strchr(rewritten, ' ');
	const char *version = line != NULL ? memrchr(rewritten, ' ', (size_t)(line - rewritten)) : NULL;
	size_t n = 0;

	if (target == NULL || version == NULL || version <= target)
		return 0;
	target++;
	for (size_t i = 0; i < st->req.n && n < max; i++) {
		const struct h2_header *hd = &st->req.v[i];

		/* :path as rewritten (a query parameter may take a value). */
		if (strcmp(hd->name, ":path") == 0) {
			size_t tlen = (size_t)(version - target);
			bool changed = tlen != hd->vlen || memcmp(target, hd->value, tlen) != 0;

			nv[n++] = (nghttp2_nv){ H2_BYTES(hd->name), H2_BYTES(target), hd->nlen, tlen,
			    changed ? NGHTTP2_NV_FLAG_NO_INDEX : NGHTTP2_NV_FLAG_NONE };
			continue;
		}
		if (hd->name[0] == ':') {
			nv[n++] = (nghttp2_nv){ H2_BYTES(hd->name), H2_BYTES(hd->value), hd->nlen,
			    hd->vlen, NGHTTP2_NV_FLAG_NONE };
			continue;
		}
		if (line == NULL)
			return 0;
		line += 2;
		const char *colon = strstr(line, ": "), *eol = strstr(line, "\r\n");

		if (colon == NULL || eol == NULL || colon > eol ||
		    (size_t)(colon - line) != hd->nlen || memcmp(line, hd->name, hd->nlen) != 0)
			return 0;
		if (!(identity && strcasecmp(hd->name, "accept-encoding") == 0)) {
			size_t vlen = (size_t)(eol - colon - 2);
			bool changed = vlen != hd->vlen || memcmp(colon + 2, hd->value, vlen) != 0;

			nv[n++] = (nghttp2_nv){ H2_BYTES(hd->name), H2_BYTES(colon + 2),
			    hd->nlen, vlen, changed ? NGHTTP2_NV_FLAG_NO_INDEX : NGHTTP2_NV_FLAG_NONE };
		}
		line = eol;
	}
	if (identity && n < max)
		nv[n++] = (nghttp2_nv){ H2_BYTES("accept-encoding"), H2_BYTES("identity"), 15, 8,
		    NGHTTP2_NV_FLAG_NONE };
	return n;
}

/* Swaps ST's placeholders, records it and sends it upstream: NULL, or why
 * not (*WHICH: a misused secret). */
static const char *
h2_pass(struct h2_stream *st, const char *method, const char *path, bool end_stream,
    const char **which)
{
	struct mitm *m = st->h->m;
	struct buf *head = buf_new(H2_HEADERS_MAX_BYTES + H2_TARGET_MAX_BYTES);
	struct buf *out = buf_new(SECRETSUB_HEAD_MAX_BYTES);
	nghttp2_data_provider prd = { .source.ptr = st, .read_callback = h2_read_up };
	nghttp2_nv nv[H2_HEADERS_MAX + 1];
	const char *why = NULL;
	enum secretsub_result sr;
	uint32_t used = 0;
	size_t n = 0;

	if (head == NULL || out == NULL) {
		why = "out_of_memory";
		goto done;
	}
	buf_set_secret(out);            /* it holds the values swapped in */
	if (h2_head_text(st, method, path, head) == -1) {
		why = "request_head_too_large";
		goto done;
	}
	sr = secretsub_head(m->cfg->secrets, m->cfg->nsecrets, m->hostport, buf_data(head),
	    buf_len(head), out, which, &used);
	if (sr != SECRETSUB_OK) {
		why = sr == SECRETSUB_MISUSE ? "secret_misuse" : sr == SECRETSUB_TOO_BIG ?
		    "request_head_too_large" : "request_head_unreadable";
		goto done;
	}
	if (buf_append(out, "", 1) == -1 ||
	    (n = h2_request_nv(st, buf_data(out), nv, sizeof(nv) / sizeof(nv[0]))) == 0) {
		why = "request_head_unreadable";
		goto done;
	}
	if (mitm_tell(m, method, path, NULL, NULL, 0, used) == -1) {
		why = "ledger_unavailable";
		goto done;
	}
	/* nghttp2 copies the list: the values leave with OUT, wiped. */
	st->uid = nghttp2_submit_request(st->h->u, NULL, nv, n, end_stream ? NULL : &prd, st);
	if (st->uid < 0) {
		st->uid = 0;
		why = "upstream_refused_stream";
	}
done:
	buf_free(head);
	buf_free(out);
	return why;
}

/* ST's request head is whole: refused in its place, or passed on. */
static void
h2_request(struct h2_stream *st, bool end_stream)
{
	const struct h2_header *mh = h2_headers_get(&st->req, ":method");
	const struct h2_header *ph = h2_headers_get(&st->req, ":path");
	char method[H2_METHOD_MAX_BYTES], path[H2_TARGET_MAX_BYTES];
	const char *refused, *which = NULL;
	struct mitm *m = st->h->m;

	snprintf(method, sizeof(method), "%s", mh != NULL ? mh->value : "-");
	snprintf(path, sizeof(path), "%s", ph != NULL ? ph->value : "-");
	st->head_request = strcmp(method, "HEAD") == 0;
	st->up_end = end_stream;
	if ((refused = h2_refusal(st, method, path)) == NULL &&
	    (refused = h2_pass(st, method, path, end_stream, &which)) == NULL)
		return;
	(void)mitm_tell(m, method, path, refused, strcmp(refused, "secret_misuse") == 0 ? which :
	    NULL, 403, 0);
	h2_answer(st, 403, refused, method, path);
}

/* --- The sandbox's session ---------------------------------------------- */

static void h2_response_release(struct h2_stream *st);

static int
h2_c_begin_headers(nghttp2_session *s, const nghttp2_frame *frame, void *arg)
{
	struct h2_stream *st;

	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	if ((st = h2_stream_new(arg, frame->hd.stream_id)) == NULL)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(s, frame->hd.stream_id, st);
	return 0;
}

static int
h2_c_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name, size_t nlen,
    const uint8_t *value, size_t vlen, uint8_t flags, void *arg)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);

	(void)flags;
	(void)arg;
	/* A request's trailers are not passed on: no rule could judge them. */
	if (st == NULL || frame->hd.type != NGHTTP2_HEADERS ||
	    frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	if (h2_headers_add(&st->req, name, nlen, value, vlen) == -1)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;   /* resets the stream */
	return 0;
}

static int
h2_c_frame(nghttp2_session *s, const nghttp2_frame *frame, void *arg)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
	bool end = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;

	(void)arg;
	if (st == NULL)
		return 0;
	if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
		h2_request(st, end);
		return 0;
	}
	if ((frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) && end) {
		st->up_end = true;
		if (st->uid > 0 && !st->body_refused)
			nghttp2_session_resume_data(st->h->u, st->uid);
		if (st->resp_held && !st->body_refused)
			h2_response_release(st);
	}
	return 0;
}

/* A placeholder of WHICH in ST's request body, among the bytes not yet
 * sent: the stream is refused, the upstream's cancelled; the connection's
 * other streams go on. */
static void
h2_body_refuse(struct h2_stream *st, const char *which)
{
	const struct h2_header *mh = h2_headers_get(&st->req, ":method");
	const struct h2_header *ph = h2_headers_get(&st->req, ":path");
	const char *method = mh != NULL ? mh->value : "-", *path = ph != NULL ? ph->value : "-";

	size_t held = evbuffer_get_length(st->up);

	st->body_refused = true;
	evbuffer_drain(st->up, held);
	nghttp2_session_consume(st->h->c, st->cid, held);       /* as if sent */
	(void)mitm_tell(st->h->m, method, path, "secret_misuse", which, 403, 0);
	if (!st->closed_u)
		nghttp2_submit_rst_stream(st->h->u, NGHTTP2_FLAG_NONE, st->uid, NGHTTP2_CANCEL);
	if (!st->answered && (!st->resp_final || st->resp_held)) {
		/* Nothing of the upstream's answer went: the proxy's takes its place. */
		evbuffer_drain(st->scan, evbuffer_get_length(st->scan));
		evbuffer_drain(st->down, evbuffer_get_length(st->down));
		st->resp_held = false;
		h2_answer(st, 403, "secret_misuse", method, path);
	}
	else if (!st->closed_c)
		nghttp2_submit_rst_stream(st->h->c, NGHTTP2_FLAG_NONE, st->cid, NGHTTP2_CANCEL);
}

static int
h2_c_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
    void *arg)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);
	const char *which;
	bool failed = false;

	(void)flags;
	(void)arg;
	/* A refused request's body goes nowhere: its window opens at once. */
	if (st == NULL || st->uid <= 0 || st->body_refused) {
		nghttp2_session_consume(s, id, len);
		return 0;
	}
	if ((which = mitm_body_misuse(st->h->m, &st->body_scan, data, len, &failed)) != NULL) {
		nghttp2_session_consume(s, id, len);
		h2_body_refuse(st, which);
		return 0;
	}
	if (failed)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	if (evbuffer_add(st->up, data, len) == -1)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	nghttp2_session_resume_data(st->h->u, st->uid);
	return 0;
}

static int
h2_c_close(nghttp2_session *s, int32_t id, uint32_t code, void *arg)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);

	(void)arg;
	if (st == NULL)
		return 0;
	st->closed_c = true;
	/* The sandbox gave up on it: so does the upstream. */
	if (st->uid > 0 && !st->closed_u && (code != NGHTTP2_NO_ERROR || !st->down_end))
		nghttp2_submit_rst_stream(st->h->u, NGHTTP2_FLAG_NONE, st->uid, NGHTTP2_CANCEL);
	/* What came for it and will never be read goes back to the upstream
	 * connection's window, else a few such resets would stall it. */
	if (st->uid > 0) {
		size_t unread = evbuffer_get_length(st->down) + evbuffer_get_length(st->scan);

		if (unread > 0)
			nghttp2_session_consume_connection(st->h->u, unread);
		evbuffer_drain(st->down, evbuffer_get_length(st->down));
		evbuffer_drain(st->scan, evbuffer_get_length(st->scan));
	}
	h2_stream_maybe_free(st);
	return 0;
}

/* --- The upstream's session ----------------------------------------------- */

static int
h2_u_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name, size_t nlen,
    const uint8_t *value, size_t vlen, uint8_t flags, void *arg)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
	struct h2_headers *to;

	(void)flags;
	(void)arg;
	if (st == NULL || frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	to = st->resp_final ? &st->trailers : &st->resp;
	if (h2_headers_add(to, name, nlen, value, vlen) == -1)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	return 0;
}

/* True when a header of HS holds a secret's value. */
static bool
h2_headers_echo(const struct mitm *m, const struct h2_headers *hs)
{
	for (size_t i = 0; i < hs->n; i++)
		if (mitm_echo_in(m, hs->v[i].value, hs->v[i].vlen))
			return true;
	return false;
}

/* True when the response head HS says its body is coded. */
static bool
h2_coded(const struct h2_headers *hs)
{
	const struct h2_header *ce = h2_headers_get(hs, "content-encoding");

	return ce != NULL && ce->vlen > 0 && strcasecmp(ce->value, "identity") != 0;
}

/* The upstream's response head to ST, on to the sandbox. */
static void
h2_response(struct h2_stream *st, bool end_stream)
{
	struct mitm *m = st->h->m;
	nghttp2_data_provider prd = { .source.ptr = st, .read_callback = h2_read_down };
	const struct h2_header *status = h2_headers_get(&st->resp, ":status");
	nghttp2_nv nv[H2_HEADERS_MAX];
	size_t n;

	if (h2_headers_echo(m, &st->resp)) {
		mitm_end(m, "secret_echoed");
		return;
	}
	if (status != NULL && status->value[0] == '1') {
		/* An interim answer (100, 103) goes on; the final one follows. */
		n = h2_nv_of(&st->resp, nv, H2_HEADERS_MAX);
		(void)nghttp2_submit_headers(st->h->c, NGHTTP2_FLAG_NONE, st->cid, NULL, nv, n, NULL);
		h2_headers_clear(&st->resp);
		return;
	}
	st->resp_final = true;
	/* Before the request's body ended, when a placeholder may be in it,
	 * it waits for that end: the sandbox must not read a success for a
	 * request refused at its body's last byte. */
	if (!st->up_end && m->cfg->nsecrets > 0) {
		st->resp_held = true;
		st->resp_held_end = end_stream;
		return;
	}
	if (m->nechoes > 0 && !end_stream && h2_coded(&st->resp)) {
		nghttp2_submit_rst_stream(st->h->u, NGHTTP2_FLAG_NONE, st->uid, NGHTTP2_CANCEL);
		h2_answer(st, 502, "upstream_body_encoded", "-", "-");
		return;
	}
	/* A held response's body may have ended already. */
	st->down_end = st->down_end || end_stream;
	n = h2_nv_of(&st->resp, nv, H2_HEADERS_MAX);
	(void)nghttp2_submit_response(st->h->c, st->cid, nv, n, end_stream ? NULL : &prd);
}

/* The request's body has ended: the response held for it goes on, with
 * what of its body came meanwhile. */
static void
h2_response_release(struct h2_stream *st)
{
	st->resp_held = false;
	st->resp_final = false;
	h2_response(st, st->resp_held_end);
	if (!st->answered && st->resp_final)
		nghttp2_session_resume_data(st->h->c, st->cid);
}

static int
h2_u_frame(nghttp2_session *s, const nghttp2_frame *frame, void *arg)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
	bool end = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;

	(void)arg;
	if (st == NULL || st->answered)
		return 0;
	if (frame->hd.type == NGHTTP2_HEADERS && !st->resp_final) {
		h2_response(st, end);
		return 0;
	}
	if (frame->hd.type == NGHTTP2_HEADERS && h2_headers_echo(st->h->m, &st->trailers)) {
		mitm_end(st->h->m, "secret_echoed");
		return 0;
	}
	if ((frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) && end) {
		st->down_end = true;
		if (h2_scan_push(st, true))
			nghttp2_session_resume_data(st->h->c, st->cid);
	}
	return 0;
}

static int
h2_u_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
    void *arg)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);

	(void)flags;
	(void)arg;
	if (st == NULL || st->answered) {
		nghttp2_session_consume(s, id, len);
		return 0;
	}
	if (evbuffer_add(st->scan, data, len) == -1)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	(void)h2_scan_push(st, false);
	return 0;
}

static int
h2_u_close(nghttp2_session *s, int32_t id, uint32_t code, void *arg)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);

	(void)arg;
	if (st == NULL)
		return 0;
	st->closed_u = true;
	/* Cut short by the upstream: the sandbox's stream is reset alike. */
	if (!st->closed_c && !st->answered && (code != NGHTTP2_NO_ERROR || !st->down_end))
		nghttp2_submit_rst_stream(st->h->c, NGHTTP2_FLAG_NONE, st->cid,
		    code != NGHTTP2_NO_ERROR ? code : NGHTTP2_INTERNAL_ERROR);
	h2_stream_maybe_free(st);
	return 0;
}

/* --- Sessions ------------------------------------------------------------- */

static void *
h2_mem_malloc(size_t n, void *arg)
{
	(void)arg;
	return wipe_malloc(n);
}

static void
h2_mem_free(void *p, void *arg)
{
	(void)arg;
	wipe_free(p);
}

static void *
h2_mem_calloc(size_t nmemb, size_t size, void *arg)
{
	(void)arg;
	return wipe_calloc(nmemb, size);
}

static void *
h2_mem_realloc(void *p, size_t n, void *arg)
{
	(void)arg;
	return wipe_realloc(p, n);
}

static nghttp2_mem h2_wiping_mem = { NULL, h2_mem_malloc, h2_mem_free, h2_mem_calloc,
	h2_mem_realloc };

static int
h2_session(struct mitm_h2 *h, bool server)
{
	nghttp2_session_callbacks *cbs = NULL;
	nghttp2_option *opt = NULL;
	nghttp2_settings_entry iv[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_STREAMS_MAX },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_STREAM_WINDOW_BYTES },
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
	};
	nghttp2_session **s = server ? &h->c : &h->u;
	int rc = -1;

	if (nghttp2_session_callbacks_new(&cbs) != 0 || nghttp2_option_new(&opt) != 0)
		goto done;
	nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_session_callbacks_set_on_header_callback(cbs, server ? h2_c_header : h2_u_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, server ? h2_c_frame : h2_u_frame);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs,
	    server ? h2_c_data : h2_u_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs,
	    server ? h2_c_close : h2_u_close);
	if (server)
		nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, h2_c_begin_headers);
	else
		nghttp2_session_callbacks_set_on_frame_send_callback(cbs, h2_u_frame_sent);
	/* The upstream's session deflates the headers that carry the values:
	 * what it frees is wiped. */
	if ((server ? nghttp2_session_server_new2(s, cbs, h, opt) :
	    nghttp2_session_client_new3(s, cbs, h, opt, &h2_wiping_mem)) != 0)
		goto done;
	/* A server sends no ENABLE_PUSH setting. */
	if (nghttp2_submit_settings(*s, NGHTTP2_FLAG_NONE, iv, server ? 2 : 3) != 0 ||
	    nghttp2_session_set_local_window_size(*s, NGHTTP2_FLAG_NONE, 0,
	    H2_CONNECTION_WINDOW_BYTES) != 0)
		goto done;
	rc = 0;
done:
	nghttp2_session_callbacks_del(cbs);
	nghttp2_option_del(opt);
	return rc;
}

int
mitm_h2_start(struct mitm *m)
{
	struct mitm_h2 *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return -1;
	h->m = m;
	m->h2s = h;
	if (h2_session(h, true) == -1 || h2_session(h, false) == -1)
		return -1;
	h2_flush(h);
	return 0;
}

/* Feeds what FROM's input holds to session S; with WIPED (an upstream a
 * secret goes to may echo it) each read is wiped before it is freed. */
static int
h2_recv(nghttp2_session *s, struct bufferevent *from, uint64_t *count, bool wiped)
{
	struct evbuffer *in = bufferevent_get_input(from);
	size_t len;

	while ((len = evbuffer_get_contiguous_space(in)) > 0) {
		uint8_t *bytes = evbuffer_pullup(in, (ev_ssize_t)len);
		ssize_t n = nghttp2_session_mem_recv(s, bytes, len);

		if (n < 0)
			return -1;
		if (wiped)
			explicit_bzero(bytes, (size_t)n);
		evbuffer_drain(in, (size_t)n);
		*count += (uint64_t)n;
	}
	return 0;
}

void
mitm_h2_client_turn(struct mitm *m)
{
	struct mitm_h2 *h = m->h2s;

	if (h == NULL || m->ended)
		return;
	if (h2_recv(h->c, m->client, &m->up, false) == -1) {
		mitm_end(m, "h2_protocol_error");
		return;
	}
	h2_flush(h);
}

void
mitm_h2_upstream_turn(struct mitm *m)
{
	struct mitm_h2 *h = m->h2s;

	if (h == NULL || m->ended)
		return;
	if (h2_recv(h->u, m->upstream, &m->down, m->nechoes > 0) == -1) {
		mitm_end(m, "upstream_h2_error");
		return;
	}
	h2_flush(h);
}

void
mitm_h2_free(struct mitm_h2 *h)
{
	struct h2_stream *st, *next;

	if (h == NULL)
		return;
	nghttp2_session_del(h->c);
	nghttp2_session_del(h->u);
	for (st = h->streams; st != NULL; st = next) {
		next = st->next;
		h2_stream_free(st);
	}
	free(h);
}
