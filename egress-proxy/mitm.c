/* A connection whose TLS the proxy terminates, HTTP/1.1 (mitm.h). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/reason.h"
#include "common/wipe.h"
#include "egress-proxy/h1body.h"
#include "egress-proxy/http.h"
#include "egress-proxy/mitm.h"
#include "egress-proxy/mitm-int.h"
#include "egress-proxy/secretsub.h"
#include "egress-proxy/tls.h"
#include "egress-proxy/tlsca.h"

static int mitm_on_new_session(SSL *ssl, SSL_SESSION *session);

static struct timeval
mitm_ms(unsigned ms)
{
	return (struct timeval){ ms / 1000, (suseconds_t)(ms % 1000) * 1000 };
}

/* --- Contexts ------------------------------------------------------------ */

static int
mitm_ssl_fail(char **err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256];

	ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return reason_set(err, "%s: %s", what, e != 0 ? buf : "failed");
}

/* The sandbox speaks what the upstream chose: h2 when both did, else
 * http/1.1; a client that offers neither gets no ALPN and speaks HTTP/1.1,
 * as TLS lets it. */
static int
mitm_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	const struct mitm *m = SSL_get_app_data(ssl);
	const char *want = m != NULL && m->h2 ? "h2" : "http/1.1";
	size_t wlen = strlen(want);

	(void)arg;
	for (unsigned i = 0; i < inlen; i += 1u + in[i])
		if (in[i] == wlen && i + 1 + wlen <= inlen && memcmp(in + i + 1, want, wlen) == 0) {
			*out = in + i + 1;
			*outlen = (unsigned char)wlen;
			return SSL_TLSEXT_ERR_OK;
		}
	return SSL_TLSEXT_ERR_NOACK;
}

/* True when SSL's connection chose the protocol PROTO by ALPN. */
static bool
mitm_alpn_is(SSL *ssl, const char *proto)
{
	const unsigned char *p = NULL;
	unsigned int n = 0;

	if (ssl != NULL)
		SSL_get0_alpn_selected(ssl, &p, &n);
	return p != NULL && n == strlen(proto) && memcmp(p, proto, n) == 0;
}

SSL_CTX *
mitm_server_ctx_new(char **err)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (ctx == NULL || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
		mitm_ssl_fail(err, "the TLS context toward sandboxes");
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_alpn_select_cb(ctx, mitm_alpn_select, NULL);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	return ctx;
}

SSL_CTX *
mitm_upstream_ctx_new(const char *extra_ca_file, char **err)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	if (ctx == NULL || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_default_verify_paths(ctx) != 1 ||
	    SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)MITM_ALPN,
	    sizeof(MITM_ALPN) - 1) != 0) {
		mitm_ssl_fail(err, "the TLS context toward upstreams");
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (extra_ca_file != NULL && SSL_CTX_load_verify_locations(ctx, extra_ca_file, NULL) != 1) {
		mitm_ssl_fail(err, extra_ca_file);
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	/* Sessions are kept by sandbox (mitm_sessions), never in the context. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(ctx, mitm_on_new_session);
	return ctx;
}

/* --- Memory that held a secret ---------------------------------------------- */

static void *
mitm_ossl_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return wipe_malloc(n);
}

static void *
mitm_ossl_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return wipe_realloc(p, n);
}

static void
mitm_ossl_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	wipe_free(p);
}

int
mitm_wipe_openssl_memory(void)
{
	return CRYPTO_set_mem_functions(mitm_ossl_malloc, mitm_ossl_realloc, mitm_ossl_free) == 1 ?
	    0 : -1;
}

void
mitm_wipe_input(struct bufferevent *b)
{
	struct evbuffer *in = b != NULL ? bufferevent_get_input(b) : NULL;
	size_t len = in != NULL ? evbuffer_get_length(in) : 0;
	uint8_t *data;

	if (len > 0 && (data = evbuffer_pullup(in, -1)) != NULL)
		explicit_bzero(data, len);
}

/* --- Upstream sessions --------------------------------------------------- */

struct mitm_session {
	char key[TLSCA_HOST_MAX_BYTES + 8];     /* "host:port" */
	SSL_SESSION *session;
	uint64_t used;                          /* when it came: the oldest goes first */
};

struct mitm_sessions {
	struct mitm_session v[MITM_SESSIONS_MAX];
	uint64_t clock;
};

struct mitm_sessions *
mitm_sessions_new(void)
{
	return calloc(1, sizeof(struct mitm_sessions));
}

void
mitm_sessions_free(struct mitm_sessions *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < MITM_SESSIONS_MAX; i++)
		SSL_SESSION_free(c->v[i].session);
	free(c);
}

static void
mitm_session_key(const struct mitm *m, char *key, size_t size)
{
	snprintf(key, size, "%s", m->hostport);
}

/* The session M's upstream may resume, taken out of the cache (each is
 * used once); NULL when there is none. */
static SSL_SESSION *
mitm_session_take(const struct mitm *m)
{
	struct mitm_sessions *c = m->cfg->sessions;
	char key[TLSCA_HOST_MAX_BYTES + 8];
	SSL_SESSION *s;

	mitm_session_key(m, key, sizeof(key));
	for (size_t i = 0; c != NULL && i < MITM_SESSIONS_MAX; i++)
		if (c->v[i].session != NULL && strcmp(c->v[i].key, key) == 0) {
			s = c->v[i].session;
			c->v[i].session = NULL;
			return s;
		}
	return NULL;
}

/* OpenSSL's word that an upstream gave a session (a TLS 1.3 ticket, after
 * the handshake): kept for the connection's sandbox, in the place of the
 * host's last one or the oldest. 1: the cache holds it now. */
static int
mitm_on_new_session(SSL *ssl, SSL_SESSION *session)
{
	const struct mitm *m = SSL_get_app_data(ssl);
	struct mitm_sessions *c = m != NULL && !m->ended ? m->cfg->sessions : NULL;
	char key[TLSCA_HOST_MAX_BYTES + 8];
	size_t at = 0;

	if (c == NULL || !SSL_SESSION_is_resumable(session))
		return 0;
	mitm_session_key(m, key, sizeof(key));
	for (size_t i = 0; i < MITM_SESSIONS_MAX; i++) {
		if (c->v[i].session != NULL && strcmp(c->v[i].key, key) == 0) {
			at = i;
			break;
		}
		if (c->v[i].session == NULL || c->v[i].used < c->v[at].used)
			at = i;
	}
	SSL_SESSION_free(c->v[at].session);
	snprintf(c->v[at].key, sizeof(c->v[at].key), "%s", key);
	c->v[at].session = session;
	c->v[at].used = ++c->clock;
	return 1;
}

/* --- The end ------------------------------------------------------------- */

static void
mitm_on_finish(evutil_socket_t fd, short what, void *arg)
{
	struct mitm *m = arg;

	(void)fd;
	(void)what;
	m->hooks.done(m->hooks.arg, m->end, m->up, m->down);
}

/* Neither side of M is read or written again. */
static void
mitm_quiet(struct mitm *m)
{
	if (m->client != NULL)
		bufferevent_disable(m->client, EV_READ | EV_WRITE);
	if (m->upstream != NULL)
		bufferevent_disable(m->upstream, EV_READ | EV_WRITE);
	if (m->under != NULL)
		bufferevent_disable(m->under, EV_READ | EV_WRITE);
}

void
mitm_end(struct mitm *m, const char *why)
{
	if (m->ended)
		return;
	m->ended = true;
	m->end = why;
	mitm_quiet(m);
	event_active(m->finish, EV_TIMEOUT, 0);
}

/* Whether all that was written to the client has left: the plain text
 * through TLS, and TLS's records to the socket. */
static bool
mitm_client_flushed(const struct mitm *m)
{
	return m->client == NULL || (evbuffer_get_length(bufferevent_get_output(m->client)) == 0 &&
	    evbuffer_get_length(m->client_wire) == 0);
}

/* Everything written to the sandbox has left: a close_notify follows it,
 * so that a body read to the close ends as TLS ends rather than as a cut,
 * and once that has left too, M ends. */
static void
mitm_finish_close(struct mitm *m)
{
	SSL *ssl;

	if (!m->notified && m->client_up && (ssl = bufferevent_openssl_get_ssl(m->client)) != NULL) {
		m->notified = true;
		(void)SSL_shutdown(ssl);
		ERR_clear_error();
	}
	if (evbuffer_get_length(m->client_wire) == 0)
		mitm_end(m, m->end);
}

void
mitm_close_after_write(struct mitm *m, const char *why)
{
	if (m->ended)
		return;         /* already ended, and why is kept */
	if (m->client == NULL || m->upstream == NULL) {
		mitm_end(m, why);
		return;
	}
	m->stage = MITM_CLOSING;
	m->end = why;
	bufferevent_disable(m->client, EV_READ);
	bufferevent_disable(m->upstream, EV_READ);
	if (mitm_client_flushed(m))
		mitm_finish_close(m);
}

static void
mitm_on_wire_drained(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct mitm *m = arg;

	(void)buf;
	if (info->n_deleted > 0 && !m->ended && m->stage == MITM_CLOSING && mitm_client_flushed(m))
		mitm_finish_close(m);
}

void
mitm_stop(struct mitm *m)
{
	if (m == NULL)
		return;
	m->ended = true;
	mitm_quiet(m);
	if (m->finish != NULL)
		event_del(m->finish);
	if (m->idle != NULL)
		evtimer_del(m->idle);
	if (m->hold != NULL)
		evtimer_del(m->hold);
}

void
mitm_bytes(const struct mitm *m, uint64_t *up, uint64_t *down)
{
	*up = m->up;
	*down = m->down;
}

void
mitm_free(struct mitm *m)
{
	SSL *ssl;

	if (m == NULL)
		return;
	/* A close_notify: a body read to the close ends cleanly. */
	if (m->client != NULL && (ssl = bufferevent_openssl_get_ssl(m->client)) != NULL &&
	    m->client_up)
		(void)SSL_shutdown(ssl);
	/* And to the upstream after a normal end: OpenSSL drops the session of
	 * a connection it sees cut, and the next one could not resume it. */
	if (m->upstream != NULL && (ssl = bufferevent_openssl_get_ssl(m->upstream)) != NULL &&
	    m->upstream_up && m->end == NULL) {
		SSL_set_app_data(ssl, NULL);
		(void)SSL_shutdown(ssl);
	}
	ERR_clear_error();
	if (m->wire_cb != NULL)
		evbuffer_remove_cb_entry(m->client_wire, m->wire_cb);
	if (m->client != NULL)
		bufferevent_free(m->client);
	if (m->upstream != NULL)
		bufferevent_free(m->upstream);
	if (m->under != NULL)
		bufferevent_free(m->under);
	if (m->upstream_fd != -1)
		close(m->upstream_fd);
	mitm_h2_free(m->h2s);
	if (m->finish != NULL)
		event_free(m->finish);
	if (m->idle != NULL)
		event_free(m->idle);
	if (m->hold != NULL)
		event_free(m->hold);
	if (m->scan != NULL)
		evbuffer_free(m->scan);
	free(m->junction);
	mitm_passed_free(&m->passed);
	secretsub_scan_free(m->body_scan);
	for (size_t i = 0; i < m->nechoes; i++) {
		if (!m->echo_owned[i])
			continue;
		OPENSSL_cleanse((void *)(uintptr_t)m->echo[i], m->echo_len[i]);
		free((void *)(uintptr_t)m->echo[i]);
	}
	free(m);
}

/* --- Echoes of secrets -------------------------------------------------- */

/* Keeps FORM (LEN bytes) among the forms searched for; OWNED: malloc'd
 * here, wiped and freed with M (else it lives in the secret store). */
static int
mitm_echo_add(struct mitm *m, const char *form, size_t len, bool owned)
{
	if (len == 0 || m->nechoes == MITM_ECHO_MAX) {
		if (owned)
			free((void *)(uintptr_t)form);
		return 0;
	}
	m->echo[m->nechoes] = form;
	m->echo_owned[m->nechoes] = owned;
	m->echo_len[m->nechoes++] = len;
	return 0;
}

/* SEC's echo forms: its store's, or made here. */
static int
mitm_echo_of(struct mitm *m, const struct secretsub_secret *sec)
{
	size_t size = SECRETSUB_ECHO_FORM_BYTES(strlen(sec->value)), len;
	char *form;

	if (sec->echoes != NULL) {
		for (size_t f = 0; f < sec->nechoes; f++)
			mitm_echo_add(m, sec->echoes[f], sec->echo_lens[f], false);
		return 0;
	}
	for (unsigned f = 0; f < SECRETSUB_ECHO_FORMS; f++) {
		if ((form = malloc(size)) == NULL)
			return -1;
		len = secretsub_echo_form(sec->value, f, form, size);
		mitm_echo_add(m, form, len, true);      /* freed there when not kept */
	}
	return 0;
}

/* The forms of every secret that may go to M's host; -1 out of memory. */
static int
mitm_echo_learn(struct mitm *m)
{
	const struct mitm_config *cfg = m->cfg;

	for (size_t i = 0; i < cfg->nsecrets; i++) {
		const struct secretsub_secret *sec = &cfg->secrets[i];
		bool here = false;

		for (size_t h = 0; h < sec->nhosts && !here; h++)
			here = strcasecmp(sec->hosts[h], m->hostport) == 0;
		if (here && mitm_echo_of(m, sec) == -1)
			return -1;
		/* The hold covers the largest form any value of this length could
		 * take: its own forms' lengths would tell how many of its bytes
		 * an escape changes. */
		if (here && SECRETSUB_ECHO_FORM_BYTES(strlen(sec->value)) - 1 > m->hold_bytes)
			m->hold_bytes = SECRETSUB_ECHO_FORM_BYTES(strlen(sec->value)) - 1;
	}
	if (m->nechoes > 0 && ((m->scan = evbuffer_new()) == NULL ||
	    (m->junction = malloc(2 * m->hold_bytes)) == NULL))
		return -1;
	return 0;
}

bool
mitm_echo_in(const struct mitm *m, const void *data, size_t len)
{
	for (size_t i = 0; i < m->nechoes; i++)
		if (memmem(data, len, m->echo[i], m->echo_len[i]) != NULL)
			return true;
	return false;
}

bool
mitm_echo_after(struct mitm *m, const struct mitm_passed *p, const void *data, size_t len)
{
	size_t head = len < m->hold_bytes ? len : m->hold_bytes;
	bool found;

	if (mitm_echo_in(m, data, len))
		return true;
	if (p->len == 0 || head == 0)
		return false;
	/* A form is at most hold_bytes + 1 long: one across the junction lies
	 * within the last hold_bytes passed and the first hold_bytes here. */
	memcpy(m->junction, p->bytes, p->len);
	memcpy(m->junction + p->len, data, head);
	found = mitm_echo_in(m, m->junction, p->len + head);
	explicit_bzero(m->junction, p->len + head);
	return found;
}

int
mitm_passed_add(struct mitm *m, struct mitm_passed *p, const void *data, size_t n)
{
	size_t room = m->hold_bytes, kept;

	if (room == 0 || n == 0)
		return 0;
	if (p->bytes == NULL && (p->bytes = malloc(room)) == NULL)
		return -1;
	if (n >= room) {
		memcpy(p->bytes, (const unsigned char *)data + n - room, room);
		p->len = room;
		return 0;
	}
	kept = p->len < room - n ? p->len : room - n;
	memmove(p->bytes, p->bytes + p->len - kept, kept);
	memcpy(p->bytes + kept, data, n);
	p->len = kept + n;
	return 0;
}

void
mitm_passed_free(struct mitm_passed *p)
{
	free(p->bytes);
	p->bytes = NULL;
	p->len = 0;
}

bool
mitm_within_hold(struct mitm *m, const struct timeval *when)
{
	struct timeval now, since;

	event_base_gettimeofday_cached(m->base, &now);
	timersub(&now, when, &since);
	return since.tv_sec * 1000 + since.tv_usec / 1000 < MITM_HOLD_MS;
}

void
mitm_hold_again(struct mitm *m)
{
	struct timeval tv = mitm_ms(MITM_HOLD_MS);

	if (m->hold != NULL)
		evtimer_add(m->hold, &tv);
}

size_t
mitm_hold(struct mitm *m, size_t len)
{
	size_t keep = m->hold_bytes;
	struct timeval tv = mitm_ms(MITM_HOLD_MS);

	keep = keep < len ? keep : len;
	/* From the last bytes that came: a stream that flows releases its end
	 * by what follows, never mid-flow by the clock. */
	if (keep > 0 && m->hold != NULL)
		evtimer_add(m->hold, &tv);
	return keep;
}

/* Passes what the upstream sent, searched, to the sandbox; unless FINAL
 * (the message ended) its end waits (mitm_hold). False when a
 * value was found: the connection ends and those bytes never go. */
static bool
mitm_scan_push(struct mitm *m, bool final)
{
	const unsigned char *data;
	size_t len, keep;

	if (m->scan == NULL || (len = evbuffer_get_length(m->scan)) == 0)
		return !m->ended;
	if ((data = evbuffer_pullup(m->scan, -1)) == NULL) {
		mitm_end(m, "out_of_memory");
		return false;
	}
	if (mitm_echo_after(m, &m->passed, data, len)) {
		/* Neither the echo nor what came with it stays in freed memory. */
		explicit_bzero((void *)(uintptr_t)data, len);
		evbuffer_drain(m->scan, len);
		mitm_wipe_input(m->upstream);
		mitm_end(m, "secret_echoed");
		return false;
	}
	keep = final ? 0 : mitm_hold(m, len);
	if (mitm_passed_add(m, &m->passed, data, len - keep) == -1) {
		mitm_end(m, "out_of_memory");
		return false;
	}
	/* A chunked body searched as its content goes on in chunks of ours. */
	if (m->rechunk && len > keep)
		evbuffer_add_printf(bufferevent_get_output(m->client), "%zx\r\n", len - keep);
	evbuffer_remove_buffer(m->scan, bufferevent_get_output(m->client), len - keep);
	if (m->rechunk && len > keep)
		evbuffer_add(bufferevent_get_output(m->client), "\r\n", 2);
	return true;
}

/* Where the upstream's bytes go: searched first when a secret may be here. */
static struct evbuffer *
mitm_down(const struct mitm *m)
{
	return m->scan != NULL ? m->scan : bufferevent_get_output(m->client);
}

/* --- The proxy's own answers --------------------------------------------- */

/* The status line's text of the proxy's own answers. */
static const char *
mitm_status_text(int status)
{
	return status == 403 ? "Forbidden" : status == 502 ? "Bad Gateway" :
	    status == 504 ? "Gateway Timeout" : status == 431 ? "Request Header Fields Too Large" :
	    "Bad Request";
}

char *
mitm_answer_body(const struct mitm *m, int status, const char *reason, const char *method,
    const char *target, size_t *len)
{
	struct json *j = json_new(MITM_ANSWER_MAX_BYTES);
	char message[1024], shown[MITM_TARGET_SHOWN_BYTES + 1];
	const char *text;
	char *body = NULL;

	*len = 0;
	if (j == NULL)
		return NULL;
	/* The answer names the target, cut: it fits a small body whatever was sent. */
	snprintf(shown, sizeof(shown), "%s", target);
	snprintf(message, sizeof(message), "%s %s to %s refused (%s)", method, shown, m->host,
	    reason);
	json_object_begin(j);
	json_kv_string(j, "error", status == 403 ? "policy_denied" : status == 502 ||
	    status == 504 ? "upstream_failed" : "bad_request");
	json_kv_string(j, "host", m->host);
	json_kv_string(j, "method", method);
	json_kv_string(j, "path", shown);
	json_kv_string(j, "reason", reason);
	json_kv_string(j, "message", message);
	json_object_end(j);
	if ((text = json_text(j, len)) != NULL && (body = malloc(*len + 1)) != NULL)
		memcpy(body, text, *len + 1);
	json_free(j);
	return body;
}

/* Queues an answer of STATUS for REASON to the sandbox, keeping the
 * connection unless CLOSE. */
static void
mitm_answer(struct mitm *m, int status, const char *reason, const char *method,
    const char *target, bool close)
{
	size_t len = 0;
	char *body;

	/* What came back before it goes first (and may end the connection). */
	if (!mitm_scan_push(m, true))
		return;
	body = mitm_answer_body(m, status, reason, method, target, &len);
	evbuffer_add_printf(bufferevent_get_output(m->client), "HTTP/1.1 %d %s\r\n"
	    "%sContent-Length: %zu\r\nCache-Control: no-store\r\n%s\r\n", status,
	    mitm_status_text(status), body != NULL ? "Content-Type: application/json\r\n" : "",
	    body != NULL ? len : 0, close ? "Connection: close\r\n" : "");
	if (body != NULL && !m->head_request)
		evbuffer_add(bufferevent_get_output(m->client), body, len);
	free(body);
}

int
mitm_tell(struct mitm *m, const char *method, const char *target, const char *refused,
    const char *secret, int status, uint32_t used)
{
	struct mitm_request r = { method, target, refused, secret, status, used };

	return m->hooks.request != NULL ? m->hooks.request(m->hooks.arg, &r) : 0;
}

/* --- Moving bytes -------------------------------------------------------- */

/* How many of the bytes FROM holds belong to the message body B, its
 * state moved past them; *BROKEN when its framing is. With M, a chunked
 * body's content (not its framing, which could cut a placeholder in two)
 * is searched for placeholders on the way: *WHICH names one found. */
static size_t
mitm_body_take(struct mitm_body *b, struct evbuffer *from, bool *broken, struct mitm *m,
    const char **which)
{
	size_t avail = evbuffer_get_length(from), n = 0;

	if (b->kind == H1_BODY_LENGTH) {
		n = avail < b->left ? avail : (size_t)b->left;
		b->left -= n;
	} else if (b->kind == H1_BODY_UNTIL_CLOSE) {
		n = avail;
	} else if (b->kind == H1_BODY_CHUNKED) {
		struct evbuffer_iovec v[8];
		int nv = evbuffer_peek(from, (ev_ssize_t)avail, NULL, v, 8);

		for (int i = 0; i < nv && i < 8 && !h1_chunked_done(&b->chunked); i++) {
			const uint8_t *p = v[i].iov_base;
			size_t left = v[i].iov_len;

			while (left > 0 && !h1_chunked_done(&b->chunked)) {
				size_t off, run;
				ssize_t got = h1_chunked_feed_data(&b->chunked, p, left, &off, &run);
				bool failed = false;

				if (got < 0) {
					*broken = true;
					return 0;
				}
				if (m != NULL && run > 0 && *which == NULL)
					*which = mitm_body_misuse(m, &m->body_scan, p + off, run, &failed);
				if (failed) {
					*broken = true;
					return 0;
				}
				n += (size_t)got;
				p += got;
				left -= (size_t)got;
			}
		}
	}
	return n;
}

/* True once the message body B has ended. */
static bool
mitm_body_done(const struct mitm_body *b)
{
	return b->kind == H1_BODY_NONE || (b->kind == H1_BODY_LENGTH && b->left == 0) ||
	    (b->kind == H1_BODY_CHUNKED && h1_chunked_done(&b->chunked));
}

/* Moves N bytes of FROM to TO (NULL: dropped), counted in *COUNT. */
static void
mitm_move(struct evbuffer *from, struct evbuffer *to, size_t n, uint64_t *count)
{
	if (to != NULL)
		evbuffer_remove_buffer(from, to, n);
	else
		evbuffer_drain(from, n);
	*count += n;
}

/* Moves the bytes of the message body B that FROM holds to TO. True once
 * the body has ended; *BROKEN when its framing is. */
static bool
mitm_move_body(struct mitm_body *b, struct evbuffer *from, struct evbuffer *to,
    uint64_t *count, bool *broken)
{
	const char *which = NULL;
	size_t n = mitm_body_take(b, from, broken, NULL, &which);

	if (*broken)
		return false;
	mitm_move(from, to, n, count);
	return mitm_body_done(b);
}

const char *
mitm_body_misuse(struct mitm *m, struct secretsub_scan **sc, const void *data, size_t len,
    bool *failed)
{
	if (m->cfg->nsecrets == 0 || len == 0)
		return NULL;
	if (*sc == NULL && (*sc = secretsub_scan_new(m->cfg->secrets, m->cfg->nsecrets)) == NULL) {
		*failed = true;
		mitm_end(m, "out_of_memory");
		return NULL;
	}
	return secretsub_scan_next(*sc, m->cfg->secrets, m->cfg->nsecrets, data, len);
}

/* Searches the first N bytes of IN, the request's body, for placeholders
 * before they go (*WHICH: what mitm_body_take found in a chunked body's
 * content, which it searched itself): false when one was there (the
 * request is refused, the connection closes: the upstream has its head
 * already) or memory ran out. */
static bool
mitm_body_clean(struct mitm *m, struct evbuffer *in, size_t n, const char *which)
{
	struct evbuffer_ptr at;
	struct evbuffer_iovec v;
	bool failed = false;

	if (m->cfg->nsecrets == 0 || (n == 0 && which == NULL))
		return true;
	evbuffer_ptr_set(in, &at, 0, EVBUFFER_PTR_SET);
	while (m->body.kind != H1_BODY_CHUNKED && n > 0 && which == NULL && !failed &&
	    evbuffer_peek(in, (ev_ssize_t)n, &at, &v, 1) >= 1) {
		size_t len = v.iov_len < n ? v.iov_len : n;

		which = mitm_body_misuse(m, &m->body_scan, v.iov_base, len, &failed);
		n -= len;
		if (evbuffer_ptr_set(in, &at, len, EVBUFFER_PTR_ADD) == -1)
			break;
	}
	if (which == NULL)
		return !failed;
	(void)mitm_tell(m, m->method, m->target, "secret_misuse", which, 403, 0);
	if (m->answered) {
		mitm_end(m, "secret_misuse");
		return false;
	}
	mitm_answer(m, 403, "secret_misuse", m->method, m->target, true);
	mitm_close_after_write(m, "secret_misuse");
	return false;
}

/* Moves the content of the chunked body the upstream's input IN holds
 * into M's scan, its framing (and trailers) dropped: mitm_scan_push frames
 * what it lets go anew. True once the body has ended; *BROKEN when its
 * framing is. */
static bool
mitm_move_content(struct mitm *m, struct evbuffer *in, bool *broken)
{
	struct h1_chunked *c = &m->body.chunked;

	while (!h1_chunked_done(c) && evbuffer_get_length(in) > 0) {
		size_t avail = evbuffer_get_contiguous_space(in), off, n;
		const uint8_t *p = evbuffer_pullup(in, (ev_ssize_t)avail);
		ssize_t got = h1_chunked_feed_data(c, p, avail, &off, &n);

		if (got < 0) {
			*broken = true;
			return false;
		}
		if (n > 0 && evbuffer_add(m->scan, p + off, n) == -1) {
			*broken = true;
			return false;
		}
		evbuffer_drain(in, (size_t)got);
		m->down += (uint64_t)got;
	}
	return h1_chunked_done(c);
}

static void
mitm_body_set(struct mitm_body *b, enum h1_body kind, uint64_t length)
{
	b->kind = kind;
	b->left = length;
	h1_chunked_init(&b->chunked);
}

/* Reads the upstream again. When it was paused, the time: a hold counts
 * from then (mitm_on_hold), the upstream's window reopening after it. */
static void
mitm_read_upstream(struct mitm *m)
{
	if (!(bufferevent_get_enabled(m->upstream) & EV_READ))
		event_base_gettimeofday_cached(m->base, &m->resumed);
	bufferevent_enable(m->upstream, EV_READ);
}

/* Pauses reading FROM while TO holds too much for its peer. */
static void
mitm_pace(struct bufferevent *from, struct bufferevent *to)
{
	if (evbuffer_get_length(bufferevent_get_output(to)) > MITM_BUFFER_MAX_BYTES)
		bufferevent_disable(from, EV_READ);
}

/* --- Requests ------------------------------------------------------------ */

void
mitm_wipe_free(const void *data, size_t len, void *arg)
{
	(void)arg;
	OPENSSL_cleanse((void *)(uintptr_t)data, len);
	free((void *)(uintptr_t)data);
}

/* Queues the rewritten head OUT (it may hold secrets' values) toward the
 * upstream by reference, so that the only copy is wiped once written. */
static int
mitm_send_wiped(struct bufferevent *to, struct buf *out)
{
	size_t len = buf_len(out);
	char *copy = malloc(len > 0 ? len : 1);

	if (copy == NULL)
		return -1;
	memcpy(copy, buf_data(out), len);
	if (evbuffer_add_reference(bufferevent_get_output(to), copy, len, mitm_wipe_free,
	    NULL) == -1) {
		mitm_wipe_free(copy, len, NULL);
		return -1;
	}
	return 0;
}

/* Why REQ may not go on at all, before any judge: NULL when it may. An
 * HTTP/1.0 request with Transfer-Encoding is faulty framing a peer may
 * read otherwise; an upgrade other than WebSocket's would carry requests
 * no one judges; a target past what is judged and recorded is cut nowhere. */
static const char *
mitm_unfit(const uint8_t *head, const struct http_request *req, bool *websocket)
{
	*websocket = false;
	if (req->version_minor == 0 && req->chunked)
		return "http_1_0_chunked";
	if (req->target.len >= MITM_TARGET_MAX_BYTES)
		return "target_too_long";
	for (size_t i = 0; i < req->nheaders; i++) {
		const struct http_header *h = &req->headers[i];

		if (h->name.len != 7 || strncasecmp((const char *)head + h->name.off, "Upgrade", 7) != 0)
			continue;
		if (req->method != HTTP_METHOD_GET || h->value.len != 9 ||
		    strncasecmp((const char *)head + h->value.off, "websocket", 9) != 0)
			return "upgrade_not_allowed";
		*websocket = true;
	}
	return NULL;
}

static void mitm_client_turn(struct mitm *m);
static void mitm_upstream_turn(struct mitm *m);
static void mitm_client_accept(struct mitm *m);

/* True when REQ's Host is the connection's: its name, and its port when it
 * gives one (none means the connection's own, 443 for TLS). */
static bool
mitm_host_is_ours(const struct mitm *m, const uint8_t *head, const struct http_request *req)
{
	const char *v = (const char *)head + req->host_header.off;
	const char *bracket = memrchr(v, ']', req->host_header.len);
	const char *colon = memrchr(v, ':', req->host_header.len);
	bool explicit_port = colon != NULL && (bracket == NULL || colon > bracket);

	return strcasecmp(req->host, m->host) == 0 && (!explicit_port || req->port == m->port);
}

bool
mitm_authority_is_ours(const struct mitm *m, const char *name, size_t len)
{
	const char *bracket = memrchr(name, ']', len), *colon = memrchr(name, ':', len);
	size_t hlen = len;
	unsigned long port;
	char *end, digits[8];

	if (colon != NULL && (bracket == NULL || colon > bracket)) {
		hlen = (size_t)(colon - name);
		if (len - hlen - 1 == 0 || len - hlen - 1 >= sizeof(digits))
			return false;
		memcpy(digits, colon + 1, len - hlen - 1);
		digits[len - hlen - 1] = '\0';
		port = strtoul(digits, &end, 10);
		if (*end != '\0' || digits[0] < '0' || digits[0] > '9' || port != m->port)
			return false;
	}
	/* An IPv6 literal in brackets is the host without them. */
	if (hlen >= 2 && name[0] == '[' && name[hlen - 1] == ']') {
		name++;
		hlen -= 2;
	}
	return hlen == strlen(m->host) && strncasecmp(name, m->host, hlen) == 0;
}

/* True when REQ waits for a 100 before it sends its body (Expect). */
static bool
mitm_expects_continue(const uint8_t *head, const struct http_request *req)
{
	for (size_t i = 0; i < req->nheaders; i++) {
		const struct http_header *h = &req->headers[i];

		if (h->name.len == 6 && strncasecmp((const char *)head + h->name.off, "Expect", 6) == 0)
			return true;
	}
	return false;
}

/* Why REQ may not go on, before its head is rewritten; NULL when it may. */
static const char *
mitm_refusal(struct mitm *m, const uint8_t *head, const struct http_request *req,
    const char *method, const char *target)
{
	const char *why;

	/* The name asked in TLS is the one allowed: no other behind it. */
	if (!mitm_host_is_ours(m, head, req))
		return "host_mismatch";
	if ((why = mitm_unfit(head, req, &m->upgrade)) != NULL)
		return why;
	return m->hooks.judge != NULL ? m->hooks.judge(m->hooks.arg, method, target) : NULL;
}

/* The head in OUT asks for the body as it is, when what comes back is
 * searched for the secrets' values (a compressed body would hide them):
 * every Accept-Encoding line goes, and one asking for identity takes their
 * place; a WebSocket's extensions go too (permessage-deflate would hide
 * them in its frames). -1 when it does not fit. */
static int
mitm_ask_identity(struct buf *out)
{
	static const char ask[] = "Accept-Encoding: identity\r\n\r\n";
	const char *line = buf_data(out), *end = line + buf_len(out), *eol;
	struct buf *b = buf_new(buf_max(out));
	int rc = -1;

	if (b == NULL)
		return -1;
	buf_set_secret(b);
	for (; line < end; line = eol + 2) {
		if ((eol = memmem(line, (size_t)(end - line), "\r\n", 2)) == NULL)
			goto done;      /* a head secretsub_head wrote always ends so */
		if (eol == line) {
			rc = buf_append(b, ask, sizeof(ask) - 1);
			break;
		}
		if (((size_t)(eol - line) >= 16 && strncasecmp(line, "Accept-Encoding:", 16) == 0) ||
		    ((size_t)(eol - line) >= 25 &&
		    strncasecmp(line, "Sec-WebSocket-Extensions:", 25) == 0))
			continue;
		if (buf_append(b, line, (size_t)(eol - line) + 2) == -1)
			goto done;
	}
	if (rc == 0) {
		buf_reset(out);
		rc = buf_append(out, buf_data(b), buf_len(b));
	}
done:
	buf_free(b);
	return rc;
}

/* REQ's head rewritten with the secrets, recorded, then sent: NULL, or why
 * it was not (*WHICH: a misused secret). A request the ledger cannot
 * record does not go. */
static const char *
mitm_pass(struct mitm *m, const uint8_t *head, const struct http_request *req,
    const char *method, const char *target, const char **which)
{
	struct buf *out = buf_new(SECRETSUB_HEAD_MAX_BYTES);
	const char *why = NULL;
	enum secretsub_result sr;
	uint32_t used = 0;

	if (out == NULL)
		return "out_of_memory";
	buf_set_secret(out);            /* it holds the values swapped in */
	sr = secretsub_head(m->cfg->secrets, m->cfg->nsecrets, m->hostport, (const char *)head,
	    req->head_len, out, which, &used);
	if (sr != SECRETSUB_OK)
		why = sr == SECRETSUB_MISUSE ? "secret_misuse" : "request_head_unreadable";
	else if (m->scan != NULL && mitm_ask_identity(out) == -1)
		why = "request_head_too_large";
	else if (mitm_tell(m, method, target, NULL, NULL, 0, used) == -1)
		why = "ledger_unavailable";
	else if (mitm_send_wiped(m->upstream, out) == -1)
		mitm_end(m, "out_of_memory");   /* recorded as passed: no second record */
	else
		m->up += req->head_len;
	buf_free(out);
	return why;
}

/* Answers a refused request in its place (403, or 400 for a body whose
 * end cannot be trusted). False when the connection then closes: nothing
 * after such a body, or after a body the client HELD back for a 100, can
 * be told from it. */
static bool
mitm_refuse(struct mitm *m, const char *method, const char *target, const char *why,
    const char *which, bool held)
{
	bool framing = strcmp(why, "http_1_0_chunked") == 0;
	int status = framing ? 400 : 403;

	mitm_answer(m, status, why, method, target, framing || held);
	(void)mitm_tell(m, method, target, why, strcmp(why, "secret_misuse") == 0 ? which : NULL,
	    status, 0);
	if (framing || held) {
		mitm_close_after_write(m, why);
		return false;
	}
	m->stage = MITM_SKIP_BODY;
	return true;
}

/* The request REQ at the head of the client's input (HEAD, its bytes):
 * refused, answered, or passed on. False when the turn must stop. */
static bool
mitm_request(struct mitm *m, const uint8_t *head, const struct http_request *req)
{
	char method[MITM_METHOD_MAX_BYTES], target[MITM_TARGET_MAX_BYTES];
	const char *refused, *which = NULL;
	bool held;

	snprintf(method, sizeof(method), "%s", http_method_name(req->method));
	snprintf(target, sizeof(target), "%.*s", (int)req->target.len, head + req->target.off);
	m->head_request = req->method == HTTP_METHOD_HEAD;
	if (m->upstream_failed != NULL) {
		mitm_answer(m, 502, m->upstream_failed, method, target, true);
		(void)mitm_tell(m, method, target, m->upstream_failed, NULL, 502, 0);
		mitm_close_after_write(m, m->upstream_failed);
		return false;
	}
	if (!m->upstream_up)
		return false;           /* the upstream's handshake first */
	if ((refused = mitm_refusal(m, head, req, method, target)) == NULL)
		refused = mitm_pass(m, head, req, method, target, &which);

	if (m->ended)
		return false;
	mitm_body_set(&m->body, req->chunked ? H1_BODY_CHUNKED : req->has_content_length &&
	    req->content_length > 0 ? H1_BODY_LENGTH : H1_BODY_NONE, req->content_length);
	held = m->body.kind != H1_BODY_NONE && mitm_expects_continue(head, req);
	/* HEAD is the input's: nothing reads it after this. */
	evbuffer_drain(bufferevent_get_input(m->client), req->head_len);
	if (refused != NULL)
		return mitm_refuse(m, method, target, refused, which, held);
	m->stage = MITM_REQ_BODY;
	if (m->body_scan != NULL)
		secretsub_scan_reset(m->body_scan);
	m->answered = false;
	snprintf(m->method, sizeof(m->method), "%s", method);
	snprintf(m->target, sizeof(m->target), "%.*s", MITM_TARGET_SHOWN_BYTES, target);
	return true;
}

/* The request's body is sent: its response must start coming within the
 * response time. */
static void
mitm_await_response(struct mitm *m)
{
	struct timeval tv = mitm_ms(m->cfg->response_ms);

	m->stage = MITM_RESP_HEAD;
	if (m->cfg->response_ms > 0)
		bufferevent_set_timeouts(m->upstream, &tv, NULL);
	/* A final answer that came early was held for now (mitm_upstream_turn). */
	if (m->cfg->nsecrets > 0) {
		mitm_read_upstream(m);
		if (evbuffer_get_length(bufferevent_get_input(m->upstream)) > 0)
			mitm_upstream_turn(m);
	}
}

/* The client's turn: as much of its input as the stage takes. */
static void
mitm_client_turn(struct mitm *m)
{
	struct evbuffer *in = bufferevent_get_input(m->client);
	struct http_request *req;
	enum http_err e;
	bool broken = false;

	if (!m->client_up || m->ended)
		return;
	for (;;) {
		size_t len = evbuffer_get_length(in);

		switch (m->stage) {
		case MITM_REQ_HEAD: {
			size_t n = len < PROXY_HEADER_MAX_BYTES ? len : PROXY_HEADER_MAX_BYTES;
			const uint8_t *head;

			if (len == 0)
				return;
			/* The sandbox reads what waits for it before it asks again,
			 * else pipelined requests the proxy answers itself (a 403
			 * each) would pile its answers up without bound. The TLS
			 * filter's own bytes are bounded by their watermark. */
			if (evbuffer_get_length(bufferevent_get_output(m->client)) >
			    MITM_BUFFER_MAX_BYTES) {
				bufferevent_disable(m->client, EV_READ);
				m->client_paced = true;
				return;
			}
			head = evbuffer_pullup(in, (ev_ssize_t)n);
			if ((req = malloc(sizeof(*req))) == NULL) {
				mitm_end(m, "out_of_memory");
				return;
			}
			e = http_parse_origin(head, n, req);
			if (e == HTTP_NEED_MORE && n < PROXY_HEADER_MAX_BYTES) {
				free(req);
				return;
			}
			if (e != HTTP_OK) {
				int status = e == HTTP_NEED_MORE ? 431 : http_err_status(e);
				const char *why = e == HTTP_NEED_MORE ? "head_too_large" :
				    http_err_reason(e);

				free(req);
				m->head_request = false;        /* not the last request's */
				mitm_answer(m, status, why, "-", "-", true);
				(void)mitm_tell(m, "-", "-", why, NULL, status, 0);
				mitm_close_after_write(m, "bad_request");
				return;
			}
			if (!mitm_request(m, head, req)) {
				free(req);
				return;
			}
			free(req);
			break;
		}
		case MITM_REQ_BODY:
		case MITM_SKIP_BODY: {
			bool skip = m->stage == MITM_SKIP_BODY;
			uint64_t ignored = 0;
			const char *which = NULL;
			size_t n = mitm_body_take(&m->body, in, &broken,
			    skip || m->cfg->nsecrets == 0 ? NULL : m, &which);

			if (broken) {
				mitm_end(m, "request_body_framing");
				return;
			}
			if (!skip && !mitm_body_clean(m, in, n, which))
				return;
			mitm_move(in, skip ? NULL : bufferevent_get_output(m->upstream), n,
			    skip ? &ignored : &m->up);
			mitm_pace(m->client, m->upstream);
			if (!mitm_body_done(&m->body))
				return;
			if (!skip) {
				mitm_await_response(m);
				return;         /* its response, before the next request */
			}
			m->stage = MITM_REQ_HEAD;
			break;
		}
		case MITM_RAW:
			m->up += len;
			evbuffer_add_buffer(bufferevent_get_output(m->upstream), in);
			mitm_pace(m->client, m->upstream);
			return;
		default:
			return;                 /* a response is being read: the next request waits */
		}
	}
}

/* --- Responses ----------------------------------------------------------- */

/* The response has ended: the next request, or the close it asked for. */
static void
mitm_response_done(struct mitm *m)
{
	/* One request at a time: a byte past its response is no answer to
	 * anything, and read as the next one's it would answer the wrong
	 * request (a desync). */
	if (evbuffer_get_length(bufferevent_get_input(m->upstream)) > 0) {
		mitm_close_after_write(m, "upstream_desync");
		return;
	}
	if (m->close_after) {
		mitm_close_after_write(m, NULL);
		return;
	}
	bufferevent_set_timeouts(m->upstream, NULL, NULL);
	m->stage = MITM_REQ_HEAD;
	bufferevent_enable(m->client, EV_READ);
	mitm_client_turn(m);
}

static void
mitm_upstream_turn(struct mitm *m)
{
	struct evbuffer *in = bufferevent_get_input(m->upstream);
	struct evbuffer *out = mitm_down(m);
	bool broken = false;

	while (!m->ended) {
		size_t len = evbuffer_get_length(in);

		if (m->stage == MITM_RESP_HEAD || (m->stage == MITM_REQ_BODY && len > 0)) {
			/* In REQ_BODY, a response before the request's body ended: a
			 * 100, or an early final answer, after which it closes. */
			bool early = m->stage == MITM_REQ_BODY;
			size_t n = len < H1_RESPONSE_HEAD_MAX_BYTES ? len : H1_RESPONSE_HEAD_MAX_BYTES;
			struct h1_response r;
			enum h1_status st;

			if (len == 0)
				return;
			st = h1_response_parse(evbuffer_pullup(in, (ev_ssize_t)n), n, m->head_request,
			    &r);
			if (st == H1_NEED_MORE)
				return;
			if (st != H1_OK) {
				mitm_answer(m, 502, "upstream_response_unreadable", "-", "-", true);
				mitm_close_after_write(m, "upstream_response_unreadable");
				return;
			}
			/* A coded body hides what the search must see: refused. */
			if (m->scan != NULL && r.encoded) {
				mitm_answer(m, 502, "upstream_body_encoded", m->method, m->target, true);
				mitm_close_after_write(m, "upstream_body_encoded");
				return;
			}
			/* A final answer before the body ended waits for its end when
			 * a placeholder may be in it: the sandbox must not read a
			 * success for a request refused at its body's last byte. */
			if (early && !r.interim && m->cfg->nsecrets > 0) {
				bufferevent_disable(m->upstream, EV_READ);
				return;
			}
			m->down += r.head_len;
			evbuffer_remove_buffer(in, out, r.head_len);
			if (r.interim) {
				if (!mitm_scan_push(m, true))
					return;
				continue;
			}
			m->answered = true;
			if (!early && r.status == 101 && m->upgrade) {
				if (!mitm_scan_push(m, true))
					return;
				m->stage = MITM_RAW;
				bufferevent_set_timeouts(m->upstream, NULL, NULL);
				bufferevent_enable(m->client, EV_READ);
				mitm_client_turn(m);
				continue;
			}
			m->close_after = early || r.close;
			mitm_body_set(&m->body, r.body, r.length);
			m->stage = MITM_RESP_BODY;
			/* A chunked body is searched as its content, framed anew. */
			if (m->scan != NULL && r.body == H1_BODY_CHUNKED) {
				if (!mitm_scan_push(m, true))
					return;
				m->rechunk = true;
			}
		} else if (m->stage == MITM_RESP_BODY) {
			bool whole = m->rechunk ? mitm_move_content(m, in, &broken) :
			    mitm_move_body(&m->body, in, out, &m->down, &broken);

			if (broken) {
				mitm_end(m, "upstream_body_framing");
				return;
			}
			if (!mitm_scan_push(m, whole))
				return;
			if (whole && m->rechunk) {
				evbuffer_add(bufferevent_get_output(m->client), "0\r\n\r\n", 5);
				m->rechunk = false;
			}
			mitm_pace(m->upstream, m->client);
			if (!whole)
				return;
			mitm_response_done(m);
			return;
		} else if (m->stage == MITM_RAW) {
			m->down += len;
			evbuffer_add_buffer(out, in);
			if (!mitm_scan_push(m, false))
				return;
			mitm_pace(m->upstream, m->client);
			return;
		} else {
			if (len > 0 && (m->stage == MITM_REQ_HEAD || m->stage == MITM_SKIP_BODY))
				mitm_close_after_write(m, "upstream_desync");
			return;                 /* nothing is asked of it now */
		}
	}
}

/* --- Events -------------------------------------------------------------- */

void
mitm_touch(struct mitm *m)
{
	event_base_gettimeofday_cached(m->base, &m->active);
}

static void
mitm_on_client_read(struct bufferevent *bev, void *arg)
{
	struct mitm *m = arg;

	(void)bev;
	mitm_touch(m);
	if (m->h2)
		mitm_h2_client_turn(m);
	else
		mitm_client_turn(m);
}

static void
mitm_on_upstream_read(struct bufferevent *bev, void *arg)
{
	struct mitm *m = arg;

	(void)bev;
	mitm_touch(m);
	if (m->h2)
		mitm_h2_upstream_turn(m);
	else
		mitm_upstream_turn(m);
}

/* Whether the sandbox's pace may have held the upstream back within the
 * last hold: the proxy's reading of it paused (mitm_pace) or full (its
 * watermark), or resumed less than MITM_HOLD_MS ago. */
static bool
mitm_upstream_paced(struct mitm *m)
{
	return !(bufferevent_get_enabled(m->upstream) & EV_READ) ||
	    evbuffer_get_length(bufferevent_get_input(m->upstream)) >= MITM_BUFFER_MAX_BYTES ||
	    mitm_within_hold(m, &m->resumed);
}

/* The hold timer: nothing followed what the search held back, which
 * therefore goes on as it is (searched already); unless the upstream
 * could not send more because the proxy stopped reading it while the
 * sandbox did not read (mitm_pace): that pause is the sandbox's to make,
 * and would cut a value where the sandbox chose. */
static void
mitm_on_hold(evutil_socket_t fd, short what, void *arg)
{
	struct mitm *m = arg;

	(void)fd;
	(void)what;
	if (m->ended)
		return;
	if (m->h2)
		mitm_h2_release(m);
	else if (mitm_upstream_paced(m))
		mitm_hold_again(m);
	else
		(void)mitm_scan_push(m, true);
}

/* The idle timer: ends M when neither side moved a byte for idle_ms,
 * else waits for the rest of that time. */
static void
mitm_on_idle(evutil_socket_t fd, short what, void *arg)
{
	struct mitm *m = arg;
	struct timeval now, idle = mitm_ms(m->cfg->idle_ms), due, left;

	(void)fd;
	(void)what;
	event_base_gettimeofday_cached(m->base, &now);
	timeradd(&m->active, &idle, &due);
	if (!timercmp(&now, &due, <)) {
		mitm_end(m, "idle_timeout");
		return;
	}
	timersub(&due, &now, &left);
	evtimer_add(m->idle, &left);
}

/* A side drained what it held: the other may be read again. */
static void
mitm_on_client_write(struct bufferevent *bev, void *arg)
{
	struct mitm *m = arg;

	(void)bev;
	if (m->stage == MITM_CLOSING) {
		if (mitm_client_flushed(m))
			mitm_finish_close(m);
		return;
	}
	if (m->client_paced) {
		/* Its answers are read: its next requests are. */
		m->client_paced = false;
		bufferevent_enable(m->client, EV_READ);
		if (!m->h2)
			mitm_client_turn(m);
		if (m->ended || m->stage == MITM_CLOSING)
			return;
	}
	if (m->upstream_failed == NULL)
		mitm_read_upstream(m);
	if (m->h2)
		mitm_h2_upstream_turn(m);
	else
		mitm_upstream_turn(m);
}

static void
mitm_on_upstream_write(struct bufferevent *bev, void *arg)
{
	struct mitm *m = arg;

	(void)bev;
	if (m->stage == MITM_CLOSING || m->client == NULL)
		return;
	bufferevent_enable(m->client, EV_READ);
	if (m->h2) {
		mitm_h2_upstream_drained(m);
		mitm_h2_client_turn(m);
	} else {
		mitm_client_turn(m);
	}
}

static void
mitm_on_client_event(struct bufferevent *bev, short what, void *arg)
{
	struct mitm *m = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		/* The handshake's deadline only: a kept-alive connection may rest. */
		bufferevent_set_timeouts(m->client, NULL, NULL);
		m->client_up = true;
		if (m->h2 && mitm_h2_start(m) == -1)
			mitm_end(m, "out_of_memory");
		else if (m->h2)
			mitm_h2_client_turn(m);
		else
			mitm_client_turn(m);
		return;
	}
	/* Closing already: it ends for the reason it was closing for. */
	if (m->stage == MITM_CLOSING) {
		mitm_end(m, m->end);
		return;
	}
	/* The sandbox closed: between requests that is the normal end. */
	mitm_end(m, (what & BEV_EVENT_EOF) && m->stage == MITM_REQ_HEAD ? NULL :
	    m->client_up ? "sandbox_closed" : "sandbox_tls_failed");
}

static void
mitm_on_upstream_event(struct bufferevent *bev, short what, void *arg)
{
	struct mitm *m = arg;
	SSL *ssl = bufferevent_openssl_get_ssl(bev);

	if (m->stage == MITM_CLOSING && !(what & BEV_EVENT_CONNECTED))
		return;         /* what the sandbox is sent now is all it gets */
	if (what & BEV_EVENT_CONNECTED) {
		/* The handshake's deadline only: each response has its own. */
		bufferevent_set_timeouts(bev, NULL, NULL);
		m->upstream_up = true;
		if (m->client == NULL) {
			/* The sandbox waited to hear which protocol it speaks. */
			m->h2 = mitm_alpn_is(ssl, "h2");
			mitm_client_accept(m);
			return;
		}
		mitm_client_turn(m);
		return;
	}
	if (!m->upstream_up) {
		/* Said to the sandbox in its protocol, at its first request. */
		m->upstream_failed = (what & BEV_EVENT_TIMEOUT) ? "upstream_handshake_timeout" :
		    ssl != NULL && SSL_get_verify_result(ssl) != X509_V_OK ?
		    "upstream_certificate" : "upstream_tls_failed";
		ERR_clear_error();
		bufferevent_disable(bev, EV_READ | EV_WRITE);
		if (m->client == NULL)
			mitm_client_accept(m);  /* in HTTP/1.1, to be told so */
		else
			mitm_client_turn(m);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		/* A response that never began is answered; one cut short ends. */
		if (!m->answered && (m->stage == MITM_RESP_HEAD || m->stage == MITM_REQ_BODY)) {
			mitm_answer(m, 504, "upstream_response_timeout", m->method, m->target, true);
			mitm_close_after_write(m, "upstream_response_timeout");
		} else {
			mitm_end(m, "upstream_response_timeout");
		}
		return;
	}
	if ((what & BEV_EVENT_EOF) && (m->stage == MITM_RAW || (m->stage == MITM_RESP_BODY &&
	    m->body.kind == H1_BODY_UNTIL_CLOSE))) {
		/* The end of what it sends: all of it reaches the sandbox first. */
		mitm_upstream_turn(m);
		if (mitm_scan_push(m, true))
			mitm_close_after_write(m, NULL);
		return;
	}
	if ((what & BEV_EVENT_EOF) && m->stage == MITM_REQ_HEAD) {
		mitm_close_after_write(m, NULL);        /* it closed a kept-alive connection */
		return;
	}
	mitm_end(m, "upstream_closed");
}

/* --- Start --------------------------------------------------------------- */

static SSL *
mitm_client_ssl(const struct mitm_config *cfg, const char *host, char **err)
{
	SSL *ssl = SSL_new(cfg->server_ctx);
	X509 *leaf = tlsca_leaf(cfg->ca, host, err);

	if (ssl == NULL || leaf == NULL || SSL_use_certificate(ssl, leaf) != 1 ||
	    SSL_use_PrivateKey(ssl, tlsca_leaf_key(cfg->ca)) != 1) {
		if (leaf != NULL)
			mitm_ssl_fail(err, "the sandbox's side");
		SSL_free(ssl);
		return NULL;
	}
	return ssl;
}

/* HOST is M's own copy: OpenSSL's SNI macro takes it as non-const. */
static SSL *
mitm_upstream_ssl(const struct mitm_config *cfg, char *host, char **err)
{
	SSL *ssl = SSL_new(cfg->upstream_ctx);
	X509_VERIFY_PARAM *param;
	ASN1_OCTET_STRING *ip = a2i_IPADDRESS(host);
	bool ok;

	if (ssl == NULL) {
		ASN1_OCTET_STRING_free(ip);
		mitm_ssl_fail(err, "the upstream's side");
		return NULL;
	}
	param = SSL_get0_param(ssl);
	/* The name the proxy allowed is the one the certificate must hold. */
	ok = ip != NULL ? X509_VERIFY_PARAM_set1_ip_asc(param, host) == 1 :
	    SSL_set_tlsext_host_name(ssl, host) == 1 && SSL_set1_host(ssl, host) == 1;
	ASN1_OCTET_STRING_free(ip);
	if (!ok) {
		mitm_ssl_fail(err, "the upstream's name");
		SSL_free(ssl);
		return NULL;
	}
	return ssl;
}

/* The bytes read before (EARLY_LEN at EARLY) at the start of UNDER's input,
 * whose end libevent keeps frozen for the socket's reads alone. */
static int
mitm_put_early(struct bufferevent *under, const void *early, size_t early_len)
{
	struct evbuffer *in = bufferevent_get_input(under);
	int rc;

	if (early_len == 0)
		return 0;
	evbuffer_unfreeze(in, 0);
	rc = evbuffer_add(in, early, early_len);
	evbuffer_freeze(in, 0);
	return rc;
}

/* The sandbox's side: its TLS accepted (the bytes already read are its
 * first), speaking what M->h2 says. Ends M when it cannot. */
static void
mitm_client_accept(struct mitm *m)
{
	struct timeval handshake = { MITM_HANDSHAKE_TIMEOUT_S, 0 };
	char *err = NULL;
	SSL *cs;

	if ((cs = mitm_client_ssl(m->cfg, m->host, &err)) == NULL) {
		free(err);
		mitm_end(m, "tls_terminate_failed");
		return;
	}
	SSL_set_app_data(cs, m);
	bufferevent_setcb(m->under, NULL, NULL, NULL, NULL);
	m->client_wire = bufferevent_get_output(m->under);
	if ((m->wire_cb = evbuffer_add_cb(m->client_wire, mitm_on_wire_drained, m)) == NULL) {
		SSL_free(cs);
		mitm_end(m, "out_of_memory");
		return;
	}
	/* Handed over whatever comes of it: on failure libevent may already
	 * have freed them, and a leak when memory runs out beats a double free. */
	m->client = bufferevent_openssl_filter_new(m->base, m->under, cs,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	m->under = NULL;
	if (m->client == NULL) {
		m->wire_cb = NULL;
		mitm_end(m, "out_of_memory");
		return;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(m->client, 1);
	bufferevent_setwatermark(m->client, EV_READ, 0, MITM_BUFFER_MAX_BYTES);
	/* The TLS filter encrypts only while the socket's side holds less than
	 * this: past it the plain text waits in the client's output, which
	 * mitm_pace and h2_send measure. Without it a sandbox that does not
	 * read had the proxy buffer all the upstream sent. */
	bufferevent_setwatermark(bufferevent_get_underlying(m->client), EV_WRITE, 0,
	    MITM_BUFFER_MAX_BYTES);
	bufferevent_setcb(m->client, mitm_on_client_read, mitm_on_client_write,
	    mitm_on_client_event, m);
	bufferevent_set_timeouts(m->client, &handshake, NULL);
	bufferevent_enable(m->client, EV_READ | EV_WRITE);
}

/* The upstream's side: its TLS made, offering what the sandbox offered of
 * h2 and http/1.1. -1 with *ERR. */
static int
mitm_upstream_open(struct mitm *m, char **err)
{
	static const unsigned char both[] = "\x02h2\x08http/1.1";
	struct timeval handshake = { MITM_HANDSHAKE_TIMEOUT_S, 0 };
	SSL *us = mitm_upstream_ssl(m->cfg, m->host, err);
	SSL_SESSION *resumed;

	if (us == NULL)
		return -1;
	if (m->offers_h2 && SSL_set_alpn_protos(us, both, sizeof(both) - 1) != 0) {
		SSL_free(us);
		return reason_set(err, "the upstream's ALPN");
	}
	SSL_set_app_data(us, m);
	if ((resumed = mitm_session_take(m)) != NULL) {
		(void)SSL_set_session(us, resumed);
		SSL_SESSION_free(resumed);
	}
	m->upstream = bufferevent_openssl_socket_new(m->base, m->upstream_fd, us,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
	m->upstream_fd = -1;
	if (m->upstream == NULL)
		return reason_set(err, "out of memory");
	bufferevent_openssl_set_allow_dirty_shutdown(m->upstream, 1);
	bufferevent_setwatermark(m->upstream, EV_READ, 0, MITM_BUFFER_MAX_BYTES);
	bufferevent_setcb(m->upstream, mitm_on_upstream_read, mitm_on_upstream_write,
	    mitm_on_upstream_event, m);
	bufferevent_set_timeouts(m->upstream, &handshake, &handshake);
	bufferevent_enable(m->upstream, EV_READ | EV_WRITE);
	return 0;
}

/* The sandbox's ClientHello is read (STATUS, INFO): the upstream's TLS
 * starts, offering h2 only when the sandbox did; the sandbox's starts at
 * once, or, when it offered h2, once the upstream chose, so that both
 * sides speak one protocol. */
static void
mitm_hello_known(struct mitm *m, enum tls_status status, const struct tls_hello_info *info)
{
	char *err = NULL;

	m->hello_read = true;
	m->offers_h2 = (status == TLS_FOUND || status == TLS_NO_SNI) && info->alpn_h2;
	if (mitm_upstream_open(m, &err) == -1) {
		free(err);
		mitm_end(m, "tls_terminate_failed");
		return;
	}
	if (!m->offers_h2)
		mitm_client_accept(m);
}

/* Bytes of the sandbox before its TLS is accepted: its ClientHello, read
 * where it lies (the TLS layer reads the same bytes after). */
static void
mitm_on_hello(struct bufferevent *bev, void *arg)
{
	struct mitm *m = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len = evbuffer_get_length(in);
	struct tls_hello_info info;
	enum tls_status st;

	mitm_touch(m);
	st = tls_parse_hello(evbuffer_pullup(in, (ev_ssize_t)len), len, &info);
	if (st == TLS_NEED_MORE && len < TLS_INPUT_MAX_BYTES)
		return;
	bufferevent_disable(bev, EV_READ);
	mitm_hello_known(m, st, &info);
}

static void
mitm_on_hello_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	mitm_end(arg, (what & BEV_EVENT_TIMEOUT) ? "sandbox_tls_failed" : "sandbox_closed");
}

struct mitm *
mitm_start(struct event_base *base, const struct mitm_config *cfg, const char *host,
    uint16_t port, int client_fd, const void *early, size_t early_len, int upstream_fd,
    const struct mitm_hooks *hooks, char **err)
{
	struct mitm *m = calloc(1, sizeof(*m));
	struct timeval handshake = { MITM_HANDSHAKE_TIMEOUT_S, 0 };

	if (m != NULL)
		m->upstream_fd = -1;
	if (m == NULL || strlen(host) > TLSCA_HOST_MAX_BYTES) {
		reason_set(err, m == NULL ? "out of memory" : "the host's name is too long");
		goto fail;
	}
	m->base = base;
	m->cfg = cfg;
	m->hooks = *hooks;
	m->upstream_fd = upstream_fd;
	upstream_fd = -1;
	snprintf(m->host, sizeof(m->host), "%s", host);
	snprintf(m->hostport, sizeof(m->hostport), "%s:%u", host, (unsigned)port);
	m->port = port;
	if ((m->finish = evtimer_new(base, mitm_on_finish, m)) == NULL ||
	    (cfg->idle_ms > 0 && (m->idle = evtimer_new(base, mitm_on_idle, m)) == NULL) ||
	    mitm_echo_learn(m) == -1 ||
	    (m->nechoes > 0 && (m->hold = evtimer_new(base, mitm_on_hold, m)) == NULL))
		goto fail_nomem;
	/* The bytes already read (a ClientHello) are the TLS layer's first. */
	if ((m->under = bufferevent_socket_new(base, client_fd, BEV_OPT_CLOSE_ON_FREE)) == NULL)
		goto fail_nomem;
	client_fd = -1;
	if (mitm_put_early(m->under, early, early_len) == -1)
		goto fail_nomem;
	if (m->idle != NULL) {
		struct timeval idle = mitm_ms(cfg->idle_ms);

		mitm_touch(m);
		evtimer_add(m->idle, &idle);
	}
	/* Which protocols the sandbox offers, from its ClientHello, before
	 * either side's TLS starts. */
	bufferevent_setcb(m->under, mitm_on_hello, NULL, mitm_on_hello_event, m);
	bufferevent_set_timeouts(m->under, &handshake, NULL);
	bufferevent_enable(m->under, EV_READ);
	if (early_len > 0)
		mitm_on_hello(m->under, m);
	return m;
fail_nomem:
	reason_set(err, "out of memory");
fail:
	if (client_fd != -1)
		close(client_fd);
	if (upstream_fd != -1)
		close(upstream_fd);
	mitm_free(m);
	return NULL;
}
