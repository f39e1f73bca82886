/* Unit tests for egress-proxy/mitm (a terminated HTTP/1.1 connection):
 * real TLS on both sides, over socketpairs, with a client and an upstream
 * in threads of their own (OpenSSL, blocking) and the mitm on a libevent
 * loop. The client trusts the sandbox's CA only; the upstream's
 * certificate comes from another CA, which the mitm's upstream context
 * trusts by file (as egress.upstream_ca_file).
 *
 * Checked: the client's view verifies for the host; the upstream sees the
 * secret's real value where the client sent its placeholder; a request the
 * judge refuses gets a 403 in its place and the next request on the same
 * connection passes; a placeholder where it may not go is refused and
 * never reaches the upstream; chunked bodies both ways; an upstream whose
 * certificate does not verify is a 502 naming it; h2 alone gets HTTP/1.1;
 * the value echoed back (plain, cut across two records or two chunks, or
 * as a Basic credential's base64) ends the connection with none of it
 * delivered; a secret's host is asked for bodies as they are and a coded
 * one is refused; a
 * response that never comes is a 504; an idle connection is closed. */
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "egress-proxy/mitm.h"
#include "egress-proxy/secretsub.h"
#include "egress-proxy/tlsca.h"

#define HOST "api.example.test"
#define VALUE "gho_REALVALUEREALVALUEREALVALUEREALVALUE"
/* base64 of "x:" VALUE */
#define VALUE_BASIC "eDpnaG9fUkVBTFZBTFVFUkVBTFZBTFVFUkVBTFZBTFVFUkVBTFZBTFVF"
#define SEEN_MAX 8
#define TEXT_MAX 8192
#define MITM_TEST_LONG 3000             /* a target past what is judged (2048) */

static const char *const hosts[] = { HOST ":443" };
static const char *const auth[] = { "Authorization" };

/* What one test sets up and what its peers saw. */
struct bed {
	struct tlsca *sandbox_ca, *public_ca, *rogue_ca;
	char ca_file[64];
	SSL_CTX *server_ctx, *upstream_ctx;
	char placeholder[SECRETSUB_PLACEHOLDER_MAX_BYTES];
	struct secretsub_secret secret;
	struct mitm_config cfg;
	struct event_base *base;
	struct mitm *m;
	int client_fd, upstream_fd;     /* the peers' ends */
	bool upstream_trusted;          /* its leaf from the CA the mitm trusts */
	const char *client_alpn;        /* what the client offers, wire format */
	/* the client's script: requests, one answer read after each */
	const char *requests[SEEN_MAX];
	size_t nrequests;
	char answers[SEEN_MAX][TEXT_MAX];
	long client_verify;
	char client_alpn_got[16];
	/* the upstream's record */
	char seen[SEEN_MAX][TEXT_MAX];
	size_t nseen;
	const char *done_why;
	bool done;
	unsigned requests_told, refused_told;
	char misused[16];               /* the secret a misuse named */
	bool client_rests;              /* with no requests: waits for the mitm's close */
	bool ledger_full;               /* the request hook cannot record a passed request */
	bool hello_read_first;          /* the ClientHello is read before the mitm starts */
	bool read_to_end;               /* after its requests the client reads to the end */
	int end_err;                    /* how that ended (SSL_get_error) */
	char tail[TEXT_MAX];
	SSL_CTX *upstream_server_ctx;   /* kept across runs: its tickets resume */
	uint16_t port;                  /* the connection's (443) */
	bool upstream_resumed;          /* the upstream's handshake resumed a session */
	const char *request_tail;       /* the rest of requests[0], sent 100 ms later */
	bool upstream_early;            /* it answers a request's head at once, then reads on */
};

static struct bed bed;

static int
fcntl_blocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	return flags == -1 ? -1 : fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

static const char *
judge(void *arg, const char *method, const char *target)
{
	(void)arg;
	(void)method;
	return strncmp(target, "/denied", 7) == 0 ? "path_not_allowed" : NULL;
}

static int
on_request(void *arg, const struct mitm_request *r)
{
	struct bed *b = arg;

	b->requests_told++;
	b->refused_told += r->refused != NULL;
	if (r->secret != NULL)
		snprintf(b->misused, sizeof(b->misused), "%s", r->secret);
	return b->ledger_full && r->refused == NULL ? -1 : 0;
}

static void
on_done(void *arg, const char *why, uint64_t up, uint64_t down)
{
	struct bed *b = arg;

	(void)up;
	(void)down;
	b->done = true;
	b->done_why = why;
	event_base_loopbreak(b->base);
}

/* Reads one HTTP/1.1 message (head, and a Content-Length or chunked body)
 * from SSL into OUT; false at the end of the connection. */
static bool
read_message(SSL *ssl, char *out, size_t size)
{
	size_t n = 0;
	char *end = NULL;

	while ((end = strstr(out, "\r\n\r\n")) == NULL) {
		int r = SSL_read(ssl, out + n, (int)(size - n - 1));

		if (r <= 0)
			return false;
		n += (size_t)r;
		out[n] = '\0';
	}
	for (;;) {
		const char *cl = strcasestr(out, "Content-Length: ");
		size_t head = (size_t)(end + 4 - out), want = head;

		if (cl != NULL && cl < end)
			want += strtoul(cl + 16, NULL, 10);
		else if (strstr(out, "chunked") != NULL && strstr(end, "\r\n0\r\n\r\n") == NULL)
			want = n + 1;
		if (n >= want)
			return true;
		int r = SSL_read(ssl, out + n, (int)(size - n - 1));

		if (r <= 0)
			return false;
		n += (size_t)r;
		out[n] = '\0';
		end = strstr(out, "\r\n\r\n");
	}
}

static void *
client_main(void *arg)
{
	struct bed *b = arg;
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl;

	X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), tlsca_cert(b->sandbox_ca));
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	ssl = SSL_new(ctx);
	SSL_set_tlsext_host_name(ssl, HOST);
	SSL_set1_host(ssl, HOST);
	if (b->client_alpn != NULL)
		SSL_set_alpn_protos(ssl, (const unsigned char *)b->client_alpn,
		    (unsigned)strlen(b->client_alpn));
	SSL_set_fd(ssl, b->client_fd);
	if (SSL_connect(ssl) == 1) {
		const unsigned char *proto;
		unsigned len;

		b->client_verify = SSL_get_verify_result(ssl);
		SSL_get0_alpn_selected(ssl, &proto, &len);
		snprintf(b->client_alpn_got, sizeof(b->client_alpn_got), "%.*s", (int)len, proto);
		for (size_t i = 0; i < b->nrequests; i++) {
			SSL_write(ssl, b->requests[i], (int)strlen(b->requests[i]));
			if (i == 0 && b->request_tail != NULL) {
				usleep(100000);
				SSL_write(ssl, b->request_tail, (int)strlen(b->request_tail));
			}
			if (!read_message(ssl, b->answers[i], TEXT_MAX))
				break;
		}
		if (b->client_rests)
			(void)SSL_read(ssl, b->answers[0], 1);
		if (b->read_to_end) {
			size_t n = 0;
			int r;

			while ((r = SSL_read(ssl, b->tail + n, (int)(TEXT_MAX - n - 1))) > 0)
				n += (size_t)r;
			b->tail[n] = '\0';
			b->end_err = SSL_get_error(ssl, r);
		}
	} else {
		b->client_verify = SSL_get_verify_result(ssl);
	}
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	shutdown(b->client_fd, SHUT_RDWR);
	close(b->client_fd);
	return NULL;
}

static void __attribute__((format(printf, 2, 3)))
upstream_write(SSL *ssl, const char *fmt, ...)
{
	char text[TEXT_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	SSL_write(ssl, text, n);
}

/* The upstream: answers each request with a 200 whose body is "ok", or a
 * chunked one for a path that asks for it; /echo and /echo64 send the
 * secret's value back, /silent nothing. */
/* The upstream of an early answer: the first request's head read, 200
 * at once, then whatever else comes, into seen[1], to the end. */
static void
upstream_answer_early(SSL *ssl, struct bed *b)
{
	size_t n = 0;
	int r;

	while (strstr(b->seen[0], "\r\n\r\n") == NULL &&
	    (r = SSL_read(ssl, b->seen[0] + n, (int)(TEXT_MAX - n - 1))) > 0) {
		n += (size_t)r;
		b->seen[0][n] = '\0';
	}
	b->nseen = 1;
	upstream_write(ssl, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
	n = 0;
	while ((r = SSL_read(ssl, b->seen[1] + n, (int)(TEXT_MAX - n - 1))) > 0) {
		n += (size_t)r;
		b->seen[1][n] = '\0';
	}
}

static void *
upstream_main(void *arg)
{
	struct bed *b = arg;
	struct tlsca *issuer = b->upstream_trusted ? b->public_ca : b->rogue_ca;
	SSL_CTX *ctx = b->upstream_server_ctx != NULL ? b->upstream_server_ctx :
	    SSL_CTX_new(TLS_server_method());
	char *err = NULL;
	SSL *ssl;

	if (b->upstream_server_ctx == NULL) {
		SSL_CTX_use_certificate(ctx, tlsca_leaf(issuer, HOST, &err));
		SSL_CTX_use_PrivateKey(ctx, tlsca_leaf_key(issuer));
	}
	ssl = SSL_new(ctx);
	SSL_set_fd(ssl, b->upstream_fd);
	if (SSL_accept(ssl) == 1 && b->upstream_early) {
		upstream_answer_early(ssl, b);
	} else if (SSL_is_init_finished(ssl)) {
		b->upstream_resumed = SSL_session_reused(ssl) == 1;
		while (b->nseen < SEEN_MAX && read_message(ssl, b->seen[b->nseen], TEXT_MAX)) {
			const char *seen = b->seen[b->nseen++];

			if (strstr(seen, " /silent ") != NULL)
				continue;
			if (strncmp(seen, "HEAD ", 5) == 0) {
				upstream_write(ssl, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
				continue;
			}
			if (strstr(seen, " /untilclose ") != NULL) {
				upstream_write(ssl, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhello-");
				usleep(50000);
				upstream_write(ssl, "world");
				SSL_shutdown(ssl);
				break;
			}
			if (strstr(seen, " /echo ") != NULL) {
				/* The value cut in two records: its first half must not
				 * get through while the second is awaited. */
				upstream_write(ssl, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n"
				    "saw %.20s", strlen("saw " VALUE), VALUE);
				usleep(50000);
				upstream_write(ssl, "%s", VALUE + 20);
				continue;
			}
			if (strstr(seen, " /echosplit ") != NULL) {
				/* The value cut by a chunk boundary: its halves never
				 * touch in the bytes as framed. */
				upstream_write(ssl, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				    "%zx\r\nsaw %.20s\r\n", strlen("saw ") + 20, VALUE);
				usleep(50000);
				upstream_write(ssl, "%zx\r\n%s\r\n0\r\n\r\n", strlen(VALUE + 20),
				    VALUE + 20);
				continue;
			}
			if (strstr(seen, " /gzip ") != NULL) {
				upstream_write(ssl, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
				    "Content-Length: 4\r\n\r\n\x1f\x8b\x08\x01");
				continue;
			}
			if (strstr(seen, " /echo64 ") != NULL) {
				/* base64("x:" VALUE), as a Basic credential echoed back */
				upstream_write(ssl, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s",
				    strlen(VALUE_BASIC), VALUE_BASIC);
				continue;
			}
			upstream_write(ssl, "%s", strstr(seen, " /chunked ") != NULL ?
			    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			    "3\r\nabc\r\n0\r\n\r\n" : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
		}
	}
	SSL_free(ssl);
	if (b->upstream_server_ctx == NULL)
		SSL_CTX_free(ctx);
	close(b->upstream_fd);
	return NULL;
}

static int
setup(void **state)
{
	char *err = NULL;
	char *pem;
	FILE *f;
	int fd;

	(void)state;
	memset(&bed, 0, sizeof(bed));
	assert_non_null(bed.sandbox_ca = tlsca_new("sb", &err));
	assert_non_null(bed.public_ca = tlsca_new("public", &err));
	assert_non_null(bed.rogue_ca = tlsca_new("rogue", &err));
	snprintf(bed.ca_file, sizeof(bed.ca_file), "/tmp/test_mitm.XXXXXX");
	assert_true((fd = mkstemp(bed.ca_file)) != -1);
	assert_non_null(f = fdopen(fd, "w"));
	assert_non_null(pem = tlsca_cert_pem(bed.public_ca));
	fputs(pem, f);
	fclose(f);
	free(pem);
	assert_non_null(bed.server_ctx = mitm_server_ctx_new(&err));
	assert_non_null(bed.upstream_ctx = mitm_upstream_ctx_new(bed.ca_file, &err));
	assert_int_equal(secretsub_placeholder(VALUE, bed.placeholder, sizeof(bed.placeholder)), 0);
	bed.secret = (struct secretsub_secret){ "gh", VALUE, bed.placeholder, hosts, 1, auth, 1 };
	bed.cfg = (struct mitm_config){ bed.sandbox_ca, bed.server_ctx, bed.upstream_ctx,
	    &bed.secret, 1 };
	bed.upstream_trusted = true;
	bed.port = 443;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(bed.ca_file);
	SSL_CTX_free(bed.server_ctx);
	SSL_CTX_free(bed.upstream_ctx);
	tlsca_free(bed.sandbox_ca);
	tlsca_free(bed.public_ca);
	tlsca_free(bed.rogue_ca);
	return 0;
}

/* Runs the client's requests through a mitm to the upstream. */
static void
run(void)
{
	struct mitm_hooks hooks = { judge, on_request, on_done, &bed };
	pthread_t client, upstream;
	int c[2], u[2];
	char *err = NULL, early[4096];
	ssize_t early_len = 0;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, c), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, u), 0);
	/* The peers block; the mitm's ends stay non-blocking. */
	bed.client_fd = c[1];
	bed.upstream_fd = u[1];
	assert_int_equal(fcntl_blocking(c[1]), 0);
	assert_int_equal(fcntl_blocking(u[1]), 0);
	assert_non_null(bed.base = event_base_new());
	pthread_create(&client, NULL, client_main, &bed);
	if (bed.hello_read_first) {
		/* As the transparent listener does: the bytes are the mitm's first. */
		struct pollfd p = { .fd = c[0], .events = POLLIN };

		assert_int_equal(poll(&p, 1, 5000), 1);
		assert_true((early_len = recv(c[0], early, sizeof(early), 0)) > 0);
	}
	bed.m = mitm_start(bed.base, &bed.cfg, HOST, bed.port, c[0], early, (size_t)early_len, u[0],
	    &hooks, &err);
	if (bed.m == NULL)
		fail_msg("mitm_start: %s", err);
	pthread_create(&upstream, NULL, upstream_main, &bed);
	event_base_dispatch(bed.base);
	mitm_free(bed.m);
	/* libevent finishes freeing a bufferevent from its loop. */
	event_base_loop(bed.base, EVLOOP_NONBLOCK);
	pthread_join(client, NULL);
	pthread_join(upstream, NULL);
	event_base_free(bed.base);
}

/* A request's head with the placeholder in its Authorization header. */
static char *
request_with(const char *path, const char *header)
{
	char *r;

	assert_true(asprintf(&r, "GET %s HTTP/1.1\r\nHost: " HOST "\r\n%s: Bearer %s\r\n\r\n", path,
	    header, bed.placeholder) > 0);
	return r;
}

static void
test_the_upstream_gets_the_value_and_the_client_a_verified_leaf(void **state)
{
	char *allowed = request_with("/user", "Authorization");

	(void)state;
	bed.requests[0] = allowed;
	bed.nrequests = 1;
	run();
	assert_true(bed.done);
	assert_null(bed.done_why);
	assert_int_equal(bed.client_verify, X509_V_OK);
	assert_int_equal(bed.nseen, 1);
	assert_non_null(strstr(bed.seen[0], "Authorization: Bearer " VALUE "\r\n"));
	assert_null(strstr(bed.seen[0], bed.placeholder));
	assert_true(strncmp(bed.answers[0], "HTTP/1.1 200 OK\r\n", 17) == 0);
	assert_non_null(strstr(bed.answers[0], "\r\n\r\nok"));
	free(allowed);
}

static void
test_a_refused_request_is_answered_in_its_place(void **state)
{
	char *first = request_with("/a", "Authorization"), *denied = request_with("/denied/x",
	    "Authorization"), *last = request_with("/b", "Authorization");

	(void)state;
	bed.requests[0] = first;
	bed.requests[1] = denied;
	bed.requests[2] = last;
	bed.nrequests = 3;
	run();
	assert_int_equal(bed.nseen, 2);
	assert_true(strncmp(bed.seen[0], "GET /a ", 7) == 0);
	assert_true(strncmp(bed.seen[1], "GET /b ", 7) == 0);
	assert_true(strncmp(bed.answers[1], "HTTP/1.1 403 Forbidden\r\n", 24) == 0);
	assert_non_null(strstr(bed.answers[1], "\"reason\":\"path_not_allowed\""));
	assert_non_null(strstr(bed.answers[1], "\"path\":\"/denied/x\""));
	assert_true(strncmp(bed.answers[2], "HTTP/1.1 200 OK\r\n", 17) == 0);
	assert_int_equal(bed.requests_told, 3);
	assert_int_equal(bed.refused_told, 1);
	free(first);
	free(denied);
	free(last);
}

static void
test_a_misused_placeholder_never_reaches_the_upstream(void **state)
{
	char *misused = request_with("/a", "X-Token"), *after = request_with("/b", "Authorization");

	(void)state;
	bed.requests[0] = misused;
	bed.requests[1] = after;
	bed.nrequests = 2;
	run();
	assert_int_equal(bed.nseen, 1);
	assert_true(strncmp(bed.seen[0], "GET /b ", 7) == 0);
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"secret_misuse\""));
	assert_string_equal(bed.misused, "gh");
	free(misused);
	free(after);
}

static void
test_a_placeholder_in_a_body_is_refused_before_it_goes(void **state)
{
	char *post;

	(void)state;
	assert_true(asprintf(&post, "POST /upload HTTP/1.1\r\nHost: " HOST "\r\n"
	    "Content-Length: %zu\r\n\r\ntoken=%s", strlen("token=") + strlen(bed.placeholder),
	    bed.placeholder) > 0);
	bed.requests[0] = post;
	bed.nrequests = 1;
	run();
	/* The head went (and was recorded as passed); the body never did. */
	assert_int_equal(bed.nseen, 0);
	assert_null(strstr(bed.seen[0], bed.placeholder));
	assert_true(strncmp(bed.answers[0], "HTTP/1.1 403 Forbidden\r\n", 24) == 0);
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"secret_misuse\""));
	assert_non_null(strstr(bed.answers[0], "Connection: close"));
	assert_string_equal(bed.misused, "gh");
	assert_int_equal(bed.requests_told, 2);
	assert_int_equal(bed.refused_told, 1);
	assert_string_equal(bed.done_why, "secret_misuse");
	free(post);
}

static void
test_a_placeholder_cut_by_chunk_framing_is_refused(void **state)
{
	size_t half = strlen(bed.placeholder) / 2;
	char *post;

	(void)state;
	assert_true(asprintf(&post, "POST /upload HTTP/1.1\r\nHost: " HOST "\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n%zx\r\n%.*s\r\n%zx\r\n%s\r\n0\r\n\r\n", half,
	    (int)half, bed.placeholder, strlen(bed.placeholder + half),
	    bed.placeholder + half) > 0);
	bed.requests[0] = post;
	bed.nrequests = 1;
	run();
	assert_int_equal(bed.nseen, 0);
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"secret_misuse\""));
	assert_string_equal(bed.misused, "gh");
	free(post);
}

/* A POST whose body's end comes 100 ms after its head, to an upstream
 * that answers the head at once: TAIL ends the body. */
static char *
late_body_request(const char *tail, char **rest)
{
	char *head;

	assert_true(asprintf(&head, "POST /late HTTP/1.1\r\nHost: " HOST "\r\n"
	    "Content-Length: %zu\r\n\r\nfirst=1&", strlen("first=1&") + strlen(tail)) > 0);
	*rest = strdup(tail);
	return head;
}

/* Runs the late-body POST whose body ends with TAIL against an upstream
 * that answers its head at once. */
static void
run_late_body(const char *tail)
{
	char *rest, *head = late_body_request(tail, &rest);

	bed.upstream_early = true;
	bed.requests[0] = head;
	bed.request_tail = rest;
	bed.nrequests = 1;
	run();
	free(head);
	free(rest);
}

static void
test_an_early_answer_waits_for_the_body_s_end(void **state)
{
	(void)state;
	run_late_body("last=2");
	/* The upstream's answer, once the body ended. */
	assert_true(strncmp(bed.answers[0], "HTTP/1.1 200 OK\r\n", 17) == 0);
	assert_non_null(strstr(bed.seen[1], "last=2"));
}

static void
test_a_placeholder_in_a_late_body_is_refused_for_all_the_early_answer(void **state)
{
	char *ph;

	(void)state;
	assert_true(asprintf(&ph, "token=%s", bed.placeholder) > 0);
	run_late_body(ph);
	/* The upstream answered 200 before the placeholder came: the sandbox
	 * reads the refusal, never that 200. */
	assert_true(strncmp(bed.answers[0], "HTTP/1.1 403 Forbidden\r\n", 24) == 0);
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"secret_misuse\""));
	assert_null(strstr(bed.seen[1], bed.placeholder));
	assert_string_equal(bed.done_why, "secret_misuse");
	free(ph);
}

static void
test_chunked_bodies_both_ways(void **state)
{
	static const char post[] = "POST /chunked HTTP/1.1\r\nHost: " HOST "\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
	static const char next[] = "GET /n HTTP/1.1\r\nHost: " HOST "\r\n\r\n";

	(void)state;
	bed.requests[0] = post;
	bed.requests[1] = next;
	bed.nrequests = 2;
	run();
	assert_int_equal(bed.nseen, 2);
	assert_non_null(strstr(bed.seen[0], "\r\n\r\n5\r\nhello\r\n0\r\n\r\n"));
	assert_non_null(strstr(bed.answers[0], "3\r\nabc\r\n0\r\n\r\n"));
	assert_non_null(strstr(bed.answers[1], "\r\n\r\nok"));
}

static void
test_another_host_behind_the_name_is_refused(void **state)
{
	static const char fronted[] = "GET / HTTP/1.1\r\nHost: other.example.test\r\n\r\n";

	(void)state;
	bed.requests[0] = fronted;
	bed.nrequests = 1;
	run();
	assert_int_equal(bed.nseen, 0);
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"host_mismatch\""));
}

static void
test_an_unverified_upstream_is_a_502(void **state)
{
	static const char get[] = "GET / HTTP/1.1\r\nHost: " HOST "\r\n\r\n";

	(void)state;
	bed.upstream_trusted = false;
	bed.requests[0] = get;
	bed.nrequests = 1;
	run();
	assert_int_equal(bed.nseen, 0);
	if (strncmp(bed.answers[0], "HTTP/1.1 502 Bad Gateway\r\n", 26) != 0)
		fail_msg("answer: [%s] done: %s", bed.answers[0], bed.done_why ? bed.done_why : "(null)");
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"upstream_certificate\""));
	assert_string_equal(bed.done_why, "upstream_certificate");
}

static void
test_h2_alone_gets_http_1_1(void **state)
{
	static const char get[] = "GET / HTTP/1.1\r\nHost: " HOST "\r\n\r\n";

	(void)state;
	bed.client_alpn = "\x02h2";
	bed.requests[0] = get;
	bed.nrequests = 1;
	run();
	assert_string_equal(bed.client_alpn_got, "");
	assert_non_null(strstr(bed.answers[0], "\r\n\r\nok"));
	bed.client_alpn = "\x02h2\x08http/1.1";
	bed.nseen = 0;
	run();
	assert_string_equal(bed.client_alpn_got, "http/1.1");
}

static void
test_requests_no_judge_could_follow_are_refused(void **state)
{
	static const char h2c[] = "GET / HTTP/1.1\r\nHost: " HOST "\r\nUpgrade: h2c\r\n\r\n";
	static const char ok[] = "GET /ok HTTP/1.1\r\nHost: " HOST "\r\n\r\n";
	static const char old[] = "POST / HTTP/1.0\r\nHost: " HOST "\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
	char *long_target = malloc(MITM_TEST_LONG + 80);

	(void)state;
	memcpy(long_target, "GET /", 5);
	memset(long_target + 5, 'a', MITM_TEST_LONG);
	snprintf(long_target + 5 + MITM_TEST_LONG, 70, " HTTP/1.1\r\nHost: " HOST "\r\n\r\n");
	bed.requests[0] = h2c;
	bed.requests[1] = long_target;
	bed.requests[2] = ok;
	bed.requests[3] = old;
	bed.nrequests = 4;
	run();
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"upgrade_not_allowed\""));
	if (strstr(bed.answers[1], "\"reason\":\"target_too_long\"") == NULL)
		fail_msg("answer 1: %.300s", bed.answers[1]);
	assert_non_null(strstr(bed.answers[2], "\r\n\r\nok"));
	assert_true(strncmp(bed.answers[3], "HTTP/1.1 400 ", 13) == 0);
	assert_non_null(strstr(bed.answers[3], "http_1_0_chunked"));
	assert_int_equal(bed.nseen, 1);
	free(long_target);
}

static void
test_a_value_echoed_back_never_reaches_the_client(void **state)
{
	char *echo = request_with("/echo", "Authorization");

	(void)state;
	bed.requests[0] = echo;
	bed.nrequests = 1;
	run();
	assert_string_equal(bed.done_why, "secret_echoed");
	assert_int_equal(bed.nseen, 1);
	/* Not even the half that came first. */
	assert_null(strstr(bed.answers[0], "REALVALUE"));
	free(echo);
}

/* A secret goes to its host on its port alone: the same name on another
 * port the policy terminates is another place, and the value never goes. */
static void
test_a_secret_goes_to_its_hosts_port_alone(void **state)
{
	char *r;

	(void)state;
	assert_true(asprintf(&r, "GET /user HTTP/1.1\r\nHost: " HOST ":8443\r\n"
	    "Authorization: Bearer %s\r\n\r\n", bed.placeholder) > 0);
	bed.port = 8443;
	bed.requests[0] = r;
	bed.nrequests = 1;
	run();
	assert_int_equal(bed.nseen, 0);
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"secret_misuse\""));
	assert_string_equal(bed.misused, "gh");
	free(r);
}

/* A second connection to the host resumes the first one's upstream session
 * (one handshake less), from the sandbox's own cache. */
static void
test_a_second_connection_resumes_the_upstream_session(void **state)
{
	static const char get[] = "GET /n HTTP/1.1\r\nHost: " HOST "\r\n\r\n";
	char *err = NULL;

	(void)state;
	assert_non_null(bed.cfg.sessions = mitm_sessions_new());
	assert_non_null(bed.upstream_server_ctx = SSL_CTX_new(TLS_server_method()));
	SSL_CTX_use_certificate(bed.upstream_server_ctx, tlsca_leaf(bed.public_ca, HOST, &err));
	SSL_CTX_use_PrivateKey(bed.upstream_server_ctx, tlsca_leaf_key(bed.public_ca));
	bed.requests[0] = get;
	bed.nrequests = 1;
	run();
	assert_false(bed.upstream_resumed);
	assert_null(bed.done_why);
	bed.nseen = 0;
	run();
	assert_true(bed.upstream_resumed);
	assert_int_equal(bed.nseen, 1);
	assert_non_null(strstr(bed.answers[0], "\r\n\r\nok"));
	/* Without the cache, no resumption. */
	mitm_sessions_free(bed.cfg.sessions);
	bed.cfg.sessions = NULL;
	bed.nseen = 0;
	run();
	assert_false(bed.upstream_resumed);
	SSL_CTX_free(bed.upstream_server_ctx);
}

static void
test_a_value_cut_by_a_chunk_boundary_never_reaches_the_client(void **state)
{
	char *echo = request_with("/echosplit", "Authorization");

	(void)state;
	bed.requests[0] = echo;
	bed.nrequests = 1;
	run();
	assert_string_equal(bed.done_why, "secret_echoed");
	assert_null(strstr(bed.answers[0], "REALVALUE"));
	free(echo);
}

/* A chunked body searched as its content still reaches the client whole,
 * framed anew. */
static void
test_a_chunked_body_from_a_secret_host_is_framed_anew(void **state)
{
	/* The test's upstream reads "chunked" in a head as a chunked body's
	 * sign: a length of 0 says there is none. */
	static const char get[] = "GET /chunked HTTP/1.1\r\nHost: " HOST "\r\n"
	    "Content-Length: 0\r\n\r\n";

	(void)state;
	bed.requests[0] = get;
	bed.nrequests = 1;
	run();
	assert_non_null(strstr(bed.answers[0], "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"
	    "0\r\n\r\n"));
}

static void
test_a_secret_host_is_asked_for_bodies_as_they_are(void **state)
{
	static const char get[] = "GET /n HTTP/1.1\r\nHost: " HOST "\r\n"
	    "Accept-Encoding: gzip, br\r\naccept-encoding: zstd\r\n"
	    "Sec-WebSocket-Extensions: permessage-deflate\r\nX-After: 1\r\n\r\n";

	(void)state;
	bed.requests[0] = get;
	bed.nrequests = 1;
	run();
	assert_int_equal(bed.nseen, 1);
	assert_null(strstr(bed.seen[0], "deflate"));
	assert_null(strstr(bed.seen[0], "gzip"));
	assert_null(strstr(bed.seen[0], "zstd"));
	assert_non_null(strstr(bed.seen[0], "X-After: 1\r\nAccept-Encoding: identity\r\n\r\n"));
	assert_non_null(strstr(bed.answers[0], "\r\n\r\nok"));
}

static void
test_a_coded_body_from_a_secret_host_is_refused(void **state)
{
	static const char get[] = "GET /gzip HTTP/1.1\r\nHost: " HOST "\r\n\r\n";

	(void)state;
	bed.requests[0] = get;
	bed.nrequests = 1;
	run();
	assert_non_null(strstr(bed.answers[0], "HTTP/1.1 502 "));
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"upstream_body_encoded\""));
	assert_null(strstr(bed.answers[0], "\x1f\x8b\x08\x01"));
	assert_string_equal(bed.done_why, "upstream_body_encoded");
}

static void
test_a_value_echoed_as_base64_never_reaches_the_client(void **state)
{
	char *echo = request_with("/echo64", "Authorization");

	(void)state;
	bed.requests[0] = echo;
	bed.nrequests = 1;
	run();
	assert_string_equal(bed.done_why, "secret_echoed");
	assert_null(strstr(bed.answers[0], "eDpnaG9f"));
	free(echo);
}

static void
test_a_response_that_never_comes_is_a_504(void **state)
{
	char *silent = request_with("/silent", "Authorization");

	(void)state;
	bed.cfg.response_ms = 200;
	bed.requests[0] = silent;
	bed.nrequests = 1;
	run();
	assert_true(strncmp(bed.answers[0], "HTTP/1.1 504 ", 13) == 0);
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"upstream_response_timeout\""));
	assert_string_equal(bed.done_why, "upstream_response_timeout");
	free(silent);
}

static void
test_a_request_the_ledger_cannot_record_does_not_go(void **state)
{
	char *r = request_with("/a", "Authorization");

	(void)state;
	bed.ledger_full = true;
	bed.requests[0] = r;
	bed.nrequests = 1;
	run();
	assert_int_equal(bed.nseen, 0);
	assert_true(strncmp(bed.answers[0], "HTTP/1.1 403 ", 13) == 0);
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"ledger_unavailable\""));
	free(r);
}

static void
test_a_host_with_another_port_is_refused(void **state)
{
	const char *other = "GET /a HTTP/1.1\r\nHost: " HOST ":8443\r\n\r\n";
	const char *same = "GET /b HTTP/1.1\r\nHost: " HOST ":443\r\n\r\n";

	(void)state;
	bed.requests[0] = other;
	bed.requests[1] = same;
	bed.nrequests = 2;
	run();
	assert_non_null(strstr(bed.answers[0], "\"reason\":\"host_mismatch\""));
	assert_true(strncmp(bed.answers[1], "HTTP/1.1 200 ", 13) == 0);
	assert_int_equal(bed.nseen, 1);
}

static void
test_a_refused_request_that_waits_for_100_closes(void **state)
{
	const char *held = "POST /denied HTTP/1.1\r\nHost: " HOST "\r\nExpect: 100-continue\r\n"
	    "Content-Length: 5\r\n\r\n";
	const char *next = "GET /b HTTP/1.1\r\nHost: " HOST "\r\n\r\n";

	(void)state;
	bed.requests[0] = held;
	bed.requests[1] = next;
	bed.nrequests = 2;
	run();
	assert_true(strncmp(bed.answers[0], "HTTP/1.1 403 ", 13) == 0);
	assert_non_null(strstr(bed.answers[0], "Connection: close"));
	/* What follows could be its body or the next request: none is read. */
	assert_int_equal(bed.nseen, 0);
}

static void
test_a_client_hello_read_before_is_the_handshake_s_start(void **state)
{
	char *r = request_with("/user", "Authorization");

	(void)state;
	bed.hello_read_first = true;
	bed.requests[0] = r;
	bed.nrequests = 1;
	run();
	assert_int_equal(bed.client_verify, X509_V_OK);
	assert_int_equal(bed.nseen, 1);
	assert_true(strncmp(bed.answers[0], "HTTP/1.1 200 OK\r\n", 17) == 0);
	free(r);
}

static void
test_a_body_read_to_the_close_ends_with_close_notify(void **state)
{
	const char *r = "GET /untilclose HTTP/1.1\r\nHost: " HOST "\r\n\r\n";

	(void)state;
	bed.requests[0] = r;
	bed.nrequests = 1;
	bed.read_to_end = true;
	run();
	/* With the head or after it (a short end waits for what follows). */
	assert_true(strstr(bed.tail, "world") != NULL || strstr(bed.answers[0], "hello-world") != NULL);
	/* TLS's own end, not a cut: the body is whole. */
	assert_int_equal(bed.end_err, SSL_ERROR_ZERO_RETURN);
}

static void
test_an_answer_after_a_head_request_has_its_body(void **state)
{
	const char *head = "HEAD /a HTTP/1.1\r\nHost: " HOST "\r\n\r\n";
	const char *bad = "GET /a HTTP/1.1\r\nHost: " HOST "\r\nX: y\r\n folded\r\n\r\n";

	(void)state;
	bed.requests[0] = head;
	bed.requests[1] = bad;
	bed.nrequests = 2;
	run();
	assert_true(strncmp(bed.answers[1], "HTTP/1.1 400 ", 13) == 0);
	assert_non_null(strstr(bed.answers[1], "\"reason\""));
}

static void
test_an_idle_connection_is_closed(void **state)
{
	(void)state;
	bed.cfg.idle_ms = 200;
	bed.client_rests = true;
	run();
	assert_string_equal(bed.done_why, "idle_timeout");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_the_upstream_gets_the_value_and_the_client_a_verified_leaf,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_refused_request_is_answered_in_its_place, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_a_misused_placeholder_never_reaches_the_upstream,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunked_bodies_both_ways, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_placeholder_in_a_body_is_refused_before_it_goes,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_placeholder_cut_by_chunk_framing_is_refused,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_an_early_answer_waits_for_the_body_s_end,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_placeholder_in_a_late_body_is_refused_for_all_the_early_answer,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_another_host_behind_the_name_is_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_an_unverified_upstream_is_a_502, setup, teardown),
		cmocka_unit_test_setup_teardown(test_h2_alone_gets_http_1_1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_requests_no_judge_could_follow_are_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_a_value_echoed_back_never_reaches_the_client,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_secret_goes_to_its_hosts_port_alone, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_a_second_connection_resumes_the_upstream_session,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_value_cut_by_a_chunk_boundary_never_reaches_the_client,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_chunked_body_from_a_secret_host_is_framed_anew,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_secret_host_is_asked_for_bodies_as_they_are,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_coded_body_from_a_secret_host_is_refused,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_value_echoed_as_base64_never_reaches_the_client,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_response_that_never_comes_is_a_504, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_an_idle_connection_is_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_body_read_to_the_close_ends_with_close_notify,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_an_answer_after_a_head_request_has_its_body,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_client_hello_read_before_is_the_handshake_s_start,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_request_the_ledger_cannot_record_does_not_go,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_host_with_another_port_is_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_a_refused_request_that_waits_for_100_closes,
		    setup, teardown),
	};

	/* A test whose connection never ends fails, not hangs; a peer gone
	 * is a write error, as in corrald, not a signal. */
	alarm(60);
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
