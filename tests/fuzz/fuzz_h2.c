/* Fuzz target for egress-proxy/mitm-h2.c: HTTP/2 frames from both peers of
 * a terminated connection, through nghttp2 and the proxy's callbacks (no
 * TLS: the two sides are socketpairs whose output is never sent). The
 * input's first two bytes say how many of the rest are the sandbox's (sent
 * after the client preface); the others are the upstream's. A secret may
 * go to the host, so requests are swapped and responses searched.
 * Aborts when a promise breaks: the bodies the sandbox is sent never hold
 * the secret's value, unless the sandbox sent it itself (the headers go
 * HPACK-coded: their search is h2_headers_echo's, and tls-h2.sh's). */
#include "config.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "egress-proxy/mitm-int.h"
#include "egress-proxy/secretsub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_HOST "api.github.com"
#define FUZZ_VALUE "gho_REALVALUEREALVALUEREALVALUEREALVALUE"
#define FUZZ_PLACEHOLDER "gho_PH0PH0PH0PH0PH0PH0PH0PH0PH0PH0PH0P"
#define FUZZ_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define FUZZ_INPUT_MAX_BYTES (256 * 1024)

static const char *const hosts[] = { FUZZ_HOST ":443" };
static const char *const auth[] = { "Authorization" };
static const struct secretsub_secret secret = { "gh", FUZZ_VALUE, FUZZ_PLACEHOLDER, hosts, 1,
	auth, 1, NULL, NULL, 0 };

static const char *
fuzz_judge(void *arg, const char *method, const char *target)
{
	(void)arg;
	(void)method;
	return strncmp(target, "/denied", 7) == 0 ? "path_not_allowed" : NULL;
}

static int
fuzz_request(void *arg, const struct mitm_request *r)
{
	(void)arg;
	return r->target[0] == '\0' ? -1 : 0;
}

static void
fuzz_on_finish(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

static void
fuzz_done(void *arg, const char *why, uint64_t up, uint64_t down)
{
	(void)arg;
	(void)why;
	(void)up;
	(void)down;
}

/* A bufferevent on one end of a new socketpair (the other closed: no byte
 * is ever sent, the output only grows). */
static struct bufferevent *
fuzz_side(struct event_base *base)
{
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == -1)
		abort();
	close(sp[1]);
	return bufferevent_socket_new(base, sp[0], BEV_OPT_CLOSE_ON_FREE);
}

/* DATA (LEN bytes) as if B's socket had read it: an input buffer's end
 * is libevent's own, unfrozen for this. */
static void
fuzz_arrive(struct bufferevent *b, const void *data, size_t len)
{
	struct evbuffer *in = bufferevent_get_input(b);

	evbuffer_unfreeze(in, 0);
	evbuffer_add(in, data, len);
	evbuffer_freeze(in, 0);
}

/* True when the DATA frames B was sent (their payloads joined in order)
 * hold NEEDLE: headers go HPACK-coded, and a Huffman code may spell
 * anything. */
static bool
fuzz_data_holds(struct bufferevent *b, const char *needle)
{
	struct evbuffer *out = bufferevent_get_output(b);
	size_t len = evbuffer_get_length(out), at = 0, n = 0;
	const uint8_t *p = len > 0 ? evbuffer_pullup(out, -1) : NULL;
	uint8_t *data = malloc(len + 1);
	bool held;

	while (data != NULL && at + 9 <= len) {
		size_t flen = (size_t)p[at] << 16 | (size_t)p[at + 1] << 8 | p[at + 2];

		if (at + 9 + flen > len)
			break;
		if (p[at + 3] == 0) {           /* DATA, never padded by the proxy */
			memcpy(data + n, p + at + 9, flen);
			n += flen;
		}
		at += 9 + flen;
	}
	held = data != NULL && n > 0 && memmem(data, n, needle, strlen(needle)) != NULL;
	free(data);
	return held;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event_base *base;
	static struct mitm_config cfg = { .secrets = &secret, .nsecrets = 1 };
	struct mitm m = { 0 };
	size_t client_len;

	if (size < 2 || size > FUZZ_INPUT_MAX_BYTES)
		return 0;
	if (base == NULL) {
		signal(SIGPIPE, SIG_IGN);
		base = event_base_new();
	}
	client_len = ((size_t)data[0] << 8 | data[1]) % (size - 1);
	m.base = base;
	m.cfg = &cfg;
	m.hooks = (struct mitm_hooks){ fuzz_judge, fuzz_request, fuzz_done, NULL };
	strcpy(m.host, FUZZ_HOST);
	m.port = 443;
	m.upstream_fd = -1;
	m.echo[0] = FUZZ_VALUE;
	m.echo_len[0] = strlen(FUZZ_VALUE);
	m.nechoes = 1;
	m.hold_bytes = SECRETSUB_ECHO_FORM_BYTES(strlen(FUZZ_VALUE)) - 1;
	/* As mitm_echo_learn makes it: where a form across what passed and
	 * what comes is searched for. */
	m.junction = malloc(2 * m.hold_bytes);
	m.client = fuzz_side(base);
	m.upstream = fuzz_side(base);
	m.finish = evtimer_new(base, fuzz_on_finish, &m);
	m.client_wire = evbuffer_new();
	m.client_up = m.upstream_up = m.h2 = true;
	if (mitm_h2_start(&m) == 0) {
		fuzz_arrive(m.client, FUZZ_PREFACE, strlen(FUZZ_PREFACE));
		fuzz_arrive(m.client, data + 2, client_len);
		mitm_h2_client_turn(&m);
		fuzz_arrive(m.upstream, data + 2 + client_len, size - 2 - client_len);
		mitm_h2_upstream_turn(&m);
		mitm_h2_client_turn(&m);
		/* The proxy's own answers name the path it refused: a value the
		 * sandbox sent itself may come back, no other. */
		if (memmem(data + 2, client_len, FUZZ_VALUE, strlen(FUZZ_VALUE)) == NULL &&
		    fuzz_data_holds(m.client, FUZZ_VALUE))
			abort();
	}
	mitm_h2_free(m.h2s);
	bufferevent_free(m.client);
	bufferevent_free(m.upstream);
	event_free(m.finish);
	evbuffer_free(m.client_wire);
	free(m.junction);
	/* libevent finishes freeing a bufferevent from its loop. */
	event_base_loop(base, EVLOOP_NONBLOCK);
	return 0;
}
