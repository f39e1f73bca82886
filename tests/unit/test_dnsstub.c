/* Unit tests for egress-proxy/dnsstub: a real proxy and tenant, a real
 * resolver pointed at a tiny DNS server on a loopback UDP socket that this
 * file serves from the same loop (it logs every name it is asked, so a
 * refused name can be shown never to reach it), a real ledger in a
 * temporary file, and clients on loopback: hand-built UDP and TCP queries
 * and the real dig. No test leaves the machine. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "common/timeutil.h"
#include "egress-proxy/addr.h"
#include "egress-proxy/denials.h"
#include "egress-proxy/dnsstub.h"
#include "egress-proxy/ledger.h"
#include "egress-proxy/namemap.h"
#include "egress-proxy/proxy.h"
#include "egress-proxy/resolve.h"
#include "policy/load.h"
#include "tests/unit/dns-test-server.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define T_HEADER_BYTES 12
#define T_PACKET_MAX_BYTES 4096
#define T_NAME_MAX_BYTES 256
#define T_TYPE_A 1
#define T_TYPE_TXT 16
#define T_TYPE_AAAA 28
#define T_RCODE_NOERROR 0
#define T_RCODE_FORMERR 1
#define T_RCODE_SERVFAIL 2
#define T_RCODE_NXDOMAIN 3
#define T_ANSWERS_MAX 16
#define T_DENIALS_MAX 16
#define WAIT_MAX_MS 5000                /* a test waiting longer has failed */
#define LOOP_SLICE_MS 2
#define QUIET_MS 150                    /* how long "nothing comes" is watched */
#define DIG_OUTPUT_MAX_BYTES 8192
#define NS_PER_S INT64_C(1000000000)

static const char test_policy[] =
    "version: 1\n"
    "network_policies:\n"
    "  code:\n"
    "    name: code-hosts\n"
    "    endpoints:\n"
    "      - {host: github.com, port: 443}\n"
    "      - {host: \"*.example.org\", ports: [80, 443]}\n"
    "      - host: db.corp.example.net\n"
    "        port: 5432\n"
    "        allowed_ips: [10.9.0.0/16]\n"
    "    binaries: [{path: \"/**\"}]\n";

/* What the test server knows; other names are NXDOMAIN. */
static const struct dns_test_zone zones[] = {
	{ "github.com", DNS_TEST_ANSWER, 60, 0, { "140.82.112.3" }, { NULL } },
	{ "www.example.org", DNS_TEST_ANSWER, 120, 0,
	  { "93.184.216.34", "93.184.216.35" }, { NULL } },
	{ "loop.example.org", DNS_TEST_ANSWER, 60, 0, { "127.0.0.1" }, { NULL } },
	{ "mixed.example.org", DNS_TEST_ANSWER, 60, 0,
	  { "127.0.0.1", "93.184.216.36" }, { NULL } },
	{ "private.example.org", DNS_TEST_ANSWER, 60, 0, { "10.1.2.3" }, { NULL } },
	{ "db.corp.example.net", DNS_TEST_ANSWER, 60, 0, { "10.9.1.1" }, { NULL } },
	{ "short.example.org", DNS_TEST_ANSWER, 1, 0, { "93.184.216.40" }, { NULL } },
	{ "silent.example.org", DNS_TEST_SILENT, 0, 0, { NULL }, { NULL } },
	/* Would answer, were it ever asked: the stub must not ask. */
	{ "secret-data.evil.com", DNS_TEST_ANSWER, 60, 0, { "203.0.113.66" }, { NULL } },
};

struct fixture {
	struct event_base *base;
	struct dns_test_server dns;                     /* the upstream */
	struct resolver *resolver;
	struct ledger *ledger;
	char ledger_path[64];
	struct addr_policy *addrs;
	struct proxy *proxy;
	struct proxy_tenant *tenant;
	struct dnsstub *stub;
	struct sockaddr_in stub_addr;
	int client_fd;                                  /* a UDP client of the stub */
};

/* A reply as a client reads it. */
struct reply {
	uint16_t id;
	uint8_t flags2;                 /* the second flag byte: RA, RCODE */
	unsigned rcode;
	bool tc;
	size_t nanswers;                /* every answer record */
	size_t na;                      /* the A records among them */
	char a[T_ANSWERS_MAX][INET_ADDRSTRLEN];
	uint32_t ttl[T_ANSWERS_MAX];
};

static size_t
put16(uint8_t *p, size_t off, uint32_t v)
{
	p[off] = (uint8_t)(v >> 8);
	p[off + 1] = (uint8_t)v;
	return off + 2;
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static int
udp_socket_on_loopback(struct sockaddr_in *sin)
{
	socklen_t len = sizeof(*sin);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)sin, sizeof(*sin)) < 0 ||
	    getsockname(fd, (struct sockaddr *)sin, &len) < 0)
		return -1;
	return fd;
}

/* ---- fixture ---- */

static int
fixture_proxy(struct fixture *f, const char *ledger_path)
{
	struct proxy_tenant_info info = { "sb1", "sess-1", "agent-x" };
	struct proxy_limits limits;
	struct policy *pol = NULL;
	char *err = NULL;

	f->ledger = ledger_open(ledger_path, &err);
	if (f->ledger == NULL) {
		fprintf(stderr, "ledger_open: %s\n", err != NULL ? err : "?");
		free(err);
		return -1;
	}
	proxy_limits_default(&limits);
	if ((f->addrs = addr_policy_new()) == NULL ||
	    (f->proxy = proxy_new(f->base, f->resolver, f->ledger, f->addrs, &limits)) == NULL ||
	    policy_load_buffer("test", test_policy, strlen(test_policy), &pol, NULL) != 0)
		return -1;
	if ((f->tenant = proxy_tenant_new(f->proxy, &info, pol)) == NULL)
		return -1;
	memset(&f->stub_addr, 0, sizeof(f->stub_addr));
	f->stub_addr.sin_family = AF_INET;
	f->stub_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->stub = dnsstub_new(f->tenant, (struct sockaddr *)&f->stub_addr, sizeof(f->stub_addr));
	if (f->stub == NULL)
		return -1;
	f->stub_addr.sin_port = htons(dnsstub_port(f->stub));
	return 0;
}

/* Everything but the ledger's file. */
static struct fixture *
fixture_new(void)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_in sin;
	const char *servers[1];
	char *err = NULL;

	if (f == NULL || (f->base = event_base_new()) == NULL)
		return NULL;
	f->client_fd = -1;
	if (dns_test_server_init(&f->dns, f->base, zones, NELEM(zones)) < 0)
		return NULL;
	servers[0] = f->dns.address;
	if ((f->resolver = resolver_new(f->base, servers, 1, &err)) == NULL) {
		fprintf(stderr, "resolver_new: %s\n", err != NULL ? err : "?");
		free(err);
		return NULL;
	}
	if ((f->client_fd = udp_socket_on_loopback(&sin)) < 0)
		return NULL;
	return f;
}

static int
setup(void **state)
{
	struct fixture *f = fixture_new();
	int fd;

	if (f == NULL)
		return -1;
	snprintf(f->ledger_path, sizeof(f->ledger_path), "/tmp/test_dnsstub.XXXXXX");
	if ((fd = mkstemp(f->ledger_path)) < 0)
		return -1;
	close(fd);
	*state = f;
	return fixture_proxy(f, f->ledger_path);
}

/* The ledger on a file whose every write fails (ENOSPC). */
static int
setup_full_disk(void **state)
{
	struct fixture *f = fixture_new();

	if (f == NULL)
		return -1;
	*state = f;
	return fixture_proxy(f, "/dev/full");
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	dnsstub_free(f->stub);
	proxy_free(f->proxy);
	resolver_free(f->resolver);
	ledger_close(f->ledger);
	addr_policy_free(f->addrs);
	dns_test_server_clear(&f->dns);
	if (f->client_fd >= 0)
		close(f->client_fd);
	event_base_free(f->base);
	if (f->ledger_path[0] != '\0')
		unlink(f->ledger_path);
	free(f);
	return 0;
}

static void
run_for_ms(struct fixture *f, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(f->base, &tv);
	event_base_dispatch(f->base);
}

/* ---- clients ---- */

/* A query for NAME of QTYPE with ID into PKT; returns its length. */
static size_t
query_build(uint8_t *pkt, uint16_t id, const char *name, uint16_t qtype)
{
	size_t off = T_HEADER_BYTES;
	const char *label = name;

	memset(pkt, 0, T_HEADER_BYTES);
	put16(pkt, 0, id);
	pkt[2] = 0x01;                  /* RD */
	put16(pkt, 4, 1);
	while (*label != '\0') {
		const char *dot = strchr(label, '.');
		size_t n = dot != NULL ? (size_t)(dot - label) : strlen(label);

		pkt[off++] = (uint8_t)n;
		memcpy(pkt + off, label, n);
		off += n;
		label += n + (dot != NULL);
	}
	pkt[off++] = 0;
	off = put16(pkt, off, qtype);
	return put16(pkt, off, 1);
}

/* Skips the name at OFF (labels or a pointer); the offset after it. */
static size_t
name_skip(const uint8_t *pkt, size_t len, size_t off)
{
	while (off < len) {
		if ((pkt[off] & 0xc0) == 0xc0)
			return off + 2;
		if (pkt[off] == 0)
			return off + 1;
		off += 1 + pkt[off];
	}
	return len + 1;
}

/* Reads the reply PKT into R; -1 when malformed. */
static int
reply_parse(const uint8_t *pkt, size_t len, struct reply *r)
{
	size_t off;

	memset(r, 0, sizeof(*r));
	if (len < T_HEADER_BYTES || (pkt[2] & 0x80) == 0)
		return -1;
	r->id = get16(pkt);
	r->tc = (pkt[2] & 0x02) != 0;
	r->flags2 = pkt[3];
	r->rcode = pkt[3] & 0x0f;
	r->nanswers = get16(pkt + 6);
	off = get16(pkt + 4) == 1 ? name_skip(pkt, len, T_HEADER_BYTES) + 4 : T_HEADER_BYTES;
	for (size_t i = 0; i < r->nanswers && i < T_ANSWERS_MAX; i++) {
		off = name_skip(pkt, len, off);
		if (off + 10 > len)
			return -1;
		uint16_t type = get16(pkt + off), rdlen = get16(pkt + off + 8);
		uint32_t ttl = (uint32_t)get16(pkt + off + 4) << 16 | get16(pkt + off + 6);

		off += 10;
		if (off + rdlen > len)
			return -1;
		if (type == T_TYPE_A && rdlen == 4) {
			inet_ntop(AF_INET, pkt + off, r->a[r->na], INET_ADDRSTRLEN);
			r->ttl[r->na++] = ttl;
		}
		off += rdlen;
	}
	return 0;
}

static void
udp_send_raw(struct fixture *f, const uint8_t *pkt, size_t len)
{
	assert_int_equal(sendto(f->client_fd, pkt, len, 0, (struct sockaddr *)&f->stub_addr,
	    sizeof(f->stub_addr)), (ssize_t)len);
}

static void
udp_send_query(struct fixture *f, uint16_t id, const char *name, uint16_t qtype)
{
	uint8_t pkt[T_PACKET_MAX_BYTES];

	udp_send_raw(f, pkt, query_build(pkt, id, name, qtype));
}

/* Runs the loop until a reply reaches the UDP client or WAIT_MS pass;
 * 0 with the reply in R, or -1. */
static int
udp_receive(struct fixture *f, struct reply *r, int wait_ms)
{
	int64_t deadline = time_mono_ns() + (int64_t)wait_ms * 1000000;
	uint8_t pkt[T_PACKET_MAX_BYTES];
	ssize_t n;

	do {
		n = recv(f->client_fd, pkt, sizeof(pkt), MSG_DONTWAIT);
		if (n >= 0) {
			assert_int_equal(reply_parse(pkt, (size_t)n, r), 0);
			return 0;
		}
		run_for_ms(f, LOOP_SLICE_MS);
	} while (time_mono_ns() < deadline);
	return -1;
}

/* Asks the stub NAME of QTYPE over UDP and waits for its reply. */
static void
ask_udp(struct fixture *f, const char *name, uint16_t qtype, struct reply *r)
{
	static uint16_t next_id = 0x1000;
	uint16_t id = next_id++;

	udp_send_query(f, id, name, qtype);
	assert_int_equal(udp_receive(f, r, WAIT_MAX_MS), 0);
	assert_int_equal(r->id, id);
}

static int
tcp_connect(const struct fixture *f)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (const struct sockaddr *)&f->stub_addr,
	    sizeof(f->stub_addr)), 0);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	return fd;
}

/* Appends one length-prefixed query to OUT at OFF; the offset after it. */
static size_t
tcp_frame(uint8_t *out, size_t off, uint16_t id, const char *name, uint16_t qtype)
{
	size_t len = query_build(out + off + 2, id, name, qtype);

	put16(out, off, (uint32_t)len);
	return off + 2 + len;
}

/* Runs the loop until FD has a whole length-prefixed reply; 0 with it in
 * R, 1 when FD reached its end first, -1 after WAIT_MAX_MS. */
static int
tcp_receive(struct fixture *f, int fd, struct reply *r)
{
	static uint8_t buf[T_PACKET_MAX_BYTES];
	static size_t have;
	int64_t deadline = time_mono_ns() + (int64_t)WAIT_MAX_MS * 1000000;
	ssize_t n;
	size_t len;

	for (;;) {
		if (have >= 2 && have >= 2 + (len = get16(buf))) {
			assert_int_equal(reply_parse(buf + 2, len, r), 0);
			memmove(buf, buf + 2 + len, have - 2 - len);
			have -= 2 + len;
			return 0;
		}
		n = recv(fd, buf + have, sizeof(buf) - have, MSG_DONTWAIT);
		if (n == 0) {
			have = 0;
			return 1;
		}
		if (n > 0) {
			have += (size_t)n;
			continue;
		}
		if (time_mono_ns() >= deadline) {
			have = 0;
			return -1;
		}
		run_for_ms(f, LOOP_SLICE_MS);
	}
}

/* Runs dig with ARGS against the stub while the loop runs; its output
 * into OUT. Skips the test when dig is not installed. */
static void
run_dig(struct fixture *f, const char *const *args, char *out, size_t cap)
{
	char port[16], server[32];
	const char *argv[16] = { "dig" };
	size_t argc = 1, have = 0;
	int pipefd[2], status;
	pid_t pid;
	ssize_t n;

	if (access("/usr/bin/dig", X_OK) != 0)
		skip();
	snprintf(port, sizeof(port), "%u", dnsstub_port(f->stub));
	snprintf(server, sizeof(server), "@127.0.0.1");
	argv[argc++] = server;
	argv[argc++] = "-p";
	argv[argc++] = port;
	argv[argc++] = "+tries=1";
	argv[argc++] = "+time=4";
	for (; *args != NULL && argc < NELEM(argv) - 1; args++)
		argv[argc++] = *args;
	argv[argc] = NULL;
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		execv("/usr/bin/dig", (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	assert_true(pid > 0);
	close(pipefd[1]);
	assert_int_equal(fcntl(pipefd[0], F_SETFL, O_NONBLOCK), 0);
	for (;;) {
		n = read(pipefd[0], out + have, cap - 1 - have);
		if (n == 0)
			break;
		if (n > 0)
			have += (size_t)n;
		else
			run_for_ms(f, LOOP_SLICE_MS);
		assert_true(have < cap - 1);
	}
	out[have] = '\0';
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "dig said:\n%s\n", out);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The ledger's whole text, once every queued record is written. */
static char *
ledger_text(struct fixture *f)
{
	static char text[65536];
	FILE *fp;
	size_t n;

	ledger_flush(f->ledger);
	assert_non_null(fp = fopen(f->ledger_path, "r"));
	n = fread(text, 1, sizeof(text) - 1, fp);
	text[n] = '\0';
	fclose(fp);
	return text;
}

/* The ledger line that mentions NEEDLE; NULL when none does. */
static const char *
ledger_line(struct fixture *f, const char *needle, char *line, size_t cap)
{
	const char *text = ledger_text(f), *hit = strstr(text, needle);
	const char *start, *end;

	if (hit == NULL)
		return NULL;
	for (start = hit; start > text && start[-1] != '\n'; start--)
		;
	end = strchr(hit, '\n');
	snprintf(line, cap, "%.*s", (int)(end != NULL ? end - start : (ptrdiff_t)strlen(start)),
	    start);
	return line;
}

static const uint8_t *
v4(const char *text)
{
	static uint8_t out[4];

	assert_int_equal(inet_pton(AF_INET, text, out), 1);
	return out;
}

/* ---- tests ---- */

static void
test_allowed_name_gets_the_upstream_address(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	ask_udp(f, "github.com", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_NOERROR);
	assert_int_equal(r.na, 1);
	assert_string_equal(r.a[0], "140.82.112.3");
	assert_int_equal(r.ttl[0], 60);
	assert_int_equal(f->dns.queries, 1);
}

static void
test_allowed_answer_is_recorded_in_the_ledger(void **state)
{
	struct fixture *f = *state;
	char line[LEDGER_RECORD_MAX_BYTES];
	struct reply r;

	ask_udp(f, "github.com", T_TYPE_A, &r);
	assert_non_null(ledger_line(f, "\"host\":\"github.com\"", line, sizeof(line)));
	assert_non_null(strstr(line, "\"event\":\"dns\""));
	assert_non_null(strstr(line, "\"mode\":\"dns\""));
	assert_non_null(strstr(line, "\"decision\":\"allow\""));
	/* corral-ledger(5): no ip in dns records, no reason on an answer. */
	assert_non_null(strstr(line, "\"ip\":null"));
	assert_non_null(strstr(line, "\"reason\":null"));
	assert_non_null(strstr(line, "\"port\":null"));
	assert_non_null(strstr(line, "\"id\":null"));
	assert_non_null(strstr(line, "\"policy\":\"code-hosts\""));
	assert_non_null(strstr(line, "\"sandbox\":\"sb1\""));
	assert_non_null(strstr(line, "\"session_id\":\"sess-1\""));
	assert_non_null(strstr(line, "\"agent\":\"agent-x\""));
}

static void
test_second_query_is_answered_from_the_cache(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	ask_udp(f, "github.com", T_TYPE_A, &r);
	ask_udp(f, "GitHub.COM", T_TYPE_A, &r);
	assert_int_equal(r.na, 1);
	assert_string_equal(r.a[0], "140.82.112.3");
	assert_int_equal(f->dns.queries, 1);
}

static void
test_aaaa_of_allowed_name_is_nodata(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	ask_udp(f, "github.com", T_TYPE_AAAA, &r);
	assert_int_equal(r.rcode, T_RCODE_NOERROR);
	assert_int_equal(r.nanswers, 0);
	assert_int_equal(f->dns.queries, 0);
}

static void
test_unknown_name_is_nxdomain_recorded_and_never_sent_upstream(void **state)
{
	struct fixture *f = *state;
	struct denial d[T_DENIALS_MAX];
	char line[LEDGER_RECORD_MAX_BYTES];
	struct reply r;

	ask_udp(f, "unknown.example.com", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_NXDOMAIN);
	assert_int_equal(r.nanswers, 0);
	assert_int_equal(f->dns.queries, 0);
	assert_non_null(ledger_line(f, "\"host\":\"unknown.example.com\"", line, sizeof(line)));
	assert_non_null(strstr(line, "\"event\":\"dns\""));
	assert_non_null(strstr(line, "\"mode\":\"dns\""));
	assert_non_null(strstr(line, "\"decision\":\"deny\""));
	assert_non_null(strstr(line, "\"reason\":\"dns_name_not_allowed\""));
	assert_non_null(strstr(line, "\"policy\":null"));
	assert_int_equal(proxy_tenant_denials(f->tenant, 0, d, T_DENIALS_MAX), 1);
	assert_string_equal(d[0].host, "unknown.example.com");
	assert_int_equal(d[0].port, 0);
	assert_string_equal(d[0].reason, "dns_name_not_allowed");
}

static void
test_txt_for_refused_data_label_never_goes_upstream(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	ask_udp(f, "secret-data.evil.com", T_TYPE_TXT, &r);
	assert_int_equal(r.rcode, T_RCODE_NXDOMAIN);
	ask_udp(f, "secret-data.evil.com", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_NXDOMAIN);
	/* Let any stray upstream query arrive before looking. */
	run_for_ms(f, QUIET_MS);
	assert_int_equal(f->dns.queries, 0);
	assert_false(dns_test_server_was_asked(&f->dns, "secret-data.evil.com"));
}

static void
test_wildcard_allows_one_label_only(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	ask_udp(f, "www.example.org", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_NOERROR);
	assert_int_equal(r.na, 2);
	assert_string_equal(r.a[0], "93.184.216.34");
	assert_string_equal(r.a[1], "93.184.216.35");
	/* "*.example.org" names neither the apex nor two labels below it. */
	ask_udp(f, "example.org", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_NXDOMAIN);
	ask_udp(f, "a.www.example.org", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_NXDOMAIN);
	assert_int_equal(f->dns.queries, 1);
}

static void
test_name_resolving_to_loopback_gets_no_address(void **state)
{
	struct fixture *f = *state;
	struct denial d[T_DENIALS_MAX];
	char line[LEDGER_RECORD_MAX_BYTES];
	struct reply r;

	ask_udp(f, "loop.example.org", T_TYPE_A, &r);
	/* NODATA, not NXDOMAIN: the name exists, it only gets no address. */
	assert_int_equal(r.rcode, T_RCODE_NOERROR);
	assert_int_equal(r.nanswers, 0);
	assert_non_null(ledger_line(f, "\"host\":\"loop.example.org\"", line, sizeof(line)));
	assert_non_null(strstr(line, "\"decision\":\"deny\""));
	assert_non_null(strstr(line, "\"reason\":\"loopback\""));
	assert_non_null(strstr(line, "\"policy\":null"));
	assert_int_equal(proxy_tenant_denials(f->tenant, 0, d, T_DENIALS_MAX), 1);
	assert_string_equal(d[0].reason, "loopback");
}

static void
test_refused_addresses_are_left_out_of_a_mixed_answer(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	ask_udp(f, "mixed.example.org", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_NOERROR);
	assert_int_equal(r.na, 1);
	assert_string_equal(r.a[0], "93.184.216.36");
}

static void
test_internal_address_needs_allowed_ips(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	ask_udp(f, "private.example.org", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_NOERROR);
	assert_int_equal(r.nanswers, 0);
	ask_udp(f, "db.corp.example.net", T_TYPE_A, &r);
	assert_int_equal(r.na, 1);
	assert_string_equal(r.a[0], "10.9.1.1");
}

static void
test_upstream_nxdomain_is_passed_on(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	ask_udp(f, "missing.example.org", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_NXDOMAIN);
	assert_int_equal(f->dns.queries, 1);
}

static void
test_ttl_is_raised_to_the_minimum(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	ask_udp(f, "short.example.org", T_TYPE_A, &r);
	assert_int_equal(r.na, 1);
	assert_int_equal(r.ttl[0], DNSSTUB_TTL_MIN_S);
}

static void
test_namemap_records_answered_addresses_and_expires_them(void **state)
{
	struct fixture *f = *state;
	const char *names[NAMEMAP_LOOKUP_MAX_NAMES];
	struct namemap *m = dnsstub_namemap(f->stub);
	struct reply r;
	int64_t now;

	ask_udp(f, "www.example.org", T_TYPE_A, &r);
	ask_udp(f, "mixed.example.org", T_TYPE_A, &r);
	now = time_mono_ns();
	assert_int_equal(namemap_lookup(m, AF_INET, v4("93.184.216.34"), now, names, 4), 1);
	assert_string_equal(names[0], "www.example.org");
	assert_int_equal(namemap_lookup(m, AF_INET, v4("93.184.216.35"), now, names, 4), 1);
	assert_int_equal(namemap_lookup(m, AF_INET, v4("93.184.216.36"), now, names, 4), 1);
	assert_string_equal(names[0], "mixed.example.org");
	/* The refused address was never given out. */
	assert_int_equal(namemap_lookup(m, AF_INET, v4("127.0.0.1"), now, names, 4), 0);
	/* Both answers had a 120 s and 60 s TTL. */
	now += 61 * NS_PER_S;
	assert_int_equal(namemap_lookup(m, AF_INET, v4("93.184.216.36"), now, names, 4), 0);
	assert_int_equal(namemap_lookup(m, AF_INET, v4("93.184.216.34"), now, names, 4), 1);
	assert_int_equal(namemap_expire(m, now + 60 * NS_PER_S), 3);
	assert_int_equal(namemap_count(m), 0);
}

static void
test_tcp_query_is_answered(void **state)
{
	struct fixture *f = *state;
	uint8_t out[T_PACKET_MAX_BYTES];
	struct reply r;
	int fd = tcp_connect(f);
	size_t len = tcp_frame(out, 0, 0x4242, "github.com", T_TYPE_A);

	assert_int_equal(send(fd, out, len, 0), (ssize_t)len);
	assert_int_equal(tcp_receive(f, fd, &r), 0);
	assert_int_equal(r.id, 0x4242);
	assert_int_equal(r.na, 1);
	assert_string_equal(r.a[0], "140.82.112.3");
	close(fd);
}

static void
test_tcp_pipelined_queries_are_answered_in_order(void **state)
{
	struct fixture *f = *state;
	uint8_t out[T_PACKET_MAX_BYTES];
	struct reply r;
	int fd = tcp_connect(f);
	size_t len = tcp_frame(out, 0, 1, "www.example.org", T_TYPE_A);

	len = tcp_frame(out, len, 2, "nope.example.com", T_TYPE_A);
	len = tcp_frame(out, len, 3, "github.com", T_TYPE_AAAA);
	assert_int_equal(send(fd, out, len, 0), (ssize_t)len);
	assert_int_equal(tcp_receive(f, fd, &r), 0);
	assert_int_equal(r.id, 1);
	assert_int_equal(r.na, 2);
	assert_int_equal(tcp_receive(f, fd, &r), 0);
	assert_int_equal(r.id, 2);
	assert_int_equal(r.rcode, T_RCODE_NXDOMAIN);
	assert_int_equal(tcp_receive(f, fd, &r), 0);
	assert_int_equal(r.id, 3);
	assert_int_equal(r.rcode, T_RCODE_NOERROR);
	assert_int_equal(r.nanswers, 0);
	close(fd);
}

static void
test_tcp_client_sending_garbage_is_closed(void **state)
{
	struct fixture *f = *state;
	static const uint8_t garbage[] = { 0x00, 0x04, 0xde, 0xad, 0xbe, 0xef };
	struct reply r;
	int fd = tcp_connect(f);

	assert_int_equal(send(fd, garbage, sizeof(garbage), 0), (ssize_t)sizeof(garbage));
	assert_int_equal(tcp_receive(f, fd, &r), 1);
	close(fd);
	/* And the stub serves the next client. */
	fd = tcp_connect(f);
	uint8_t out[T_PACKET_MAX_BYTES];
	size_t len = tcp_frame(out, 0, 7, "github.com", T_TYPE_A);

	assert_int_equal(send(fd, out, len, 0), (ssize_t)len);
	assert_int_equal(tcp_receive(f, fd, &r), 0);
	assert_int_equal(r.na, 1);
	close(fd);
}

static void
test_tcp_clients_over_the_cap_are_closed(void **state)
{
	struct fixture *f = *state;
	int fds[DNSSTUB_TCP_CONNS_MAX + 1];
	uint8_t byte;
	int closed = 0;

	for (size_t i = 0; i < NELEM(fds); i++) {
		fds[i] = tcp_connect(f);
		run_for_ms(f, LOOP_SLICE_MS);
	}
	run_for_ms(f, QUIET_MS);
	for (size_t i = 0; i < NELEM(fds); i++) {
		if (recv(fds[i], &byte, 1, MSG_DONTWAIT) == 0)
			closed++;
		close(fds[i]);
	}
	assert_int_equal(closed, 1);
}

static void
test_malformed_packets_are_ignored_and_the_stub_keeps_answering(void **state)
{
	struct fixture *f = *state;
	static const uint8_t short_header[] = { 0x12, 0x34, 0x01 };
	uint8_t pkt[T_PACKET_MAX_BYTES];
	struct reply r;
	size_t len;

	udp_send_raw(f, short_header, sizeof(short_header));
	/* A response (QR set) is never answered: answers could loop. */
	len = query_build(pkt, 0x5555, "github.com", T_TYPE_A);
	pkt[2] |= 0x80;
	udp_send_raw(f, pkt, len);
	/* A name running past the end of the message. */
	len = query_build(pkt, 0x6666, "github.com", T_TYPE_A);
	udp_send_raw(f, pkt, len - 6);
	assert_int_equal(udp_receive(f, &r, QUIET_MS), 0);
	assert_int_equal(r.id, 0x6666);
	assert_int_equal(r.rcode, T_RCODE_FORMERR);
	assert_int_equal(udp_receive(f, &r, QUIET_MS), -1);
	assert_int_equal(f->dns.queries, 0);
	ask_udp(f, "github.com", T_TYPE_A, &r);
	assert_int_equal(r.na, 1);
}

static void
test_names_that_are_no_host_names_are_refused(void **state)
{
	struct fixture *f = *state;
	uint8_t pkt[T_PACKET_MAX_BYTES];
	struct reply r;
	size_t len;

	/* An address literal, as a name. */
	ask_udp(f, "127.0.0.1", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_NXDOMAIN);
	/* "github.com" with a dot inside its first label: not the allowed name. */
	len = query_build(pkt, 0x7777, "github.com", T_TYPE_A);
	pkt[T_HEADER_BYTES] = 10;       /* one label "github.com" */
	memcpy(pkt + T_HEADER_BYTES + 1, "github.com", 10);
	pkt[T_HEADER_BYTES + 11] = 0;
	len = put16(pkt, T_HEADER_BYTES + 12, T_TYPE_A);
	len = put16(pkt, len, 1);
	udp_send_raw(f, pkt, len);
	assert_int_equal(udp_receive(f, &r, WAIT_MAX_MS), 0);
	assert_int_equal(r.id, 0x7777);
	assert_int_equal(r.rcode, T_RCODE_NXDOMAIN);
	assert_int_equal(f->dns.queries, 0);
}

static void
test_concurrent_queries_for_a_pending_name_are_all_answered(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	bool seen[3] = { false };

	udp_send_query(f, 0, "www.example.org", T_TYPE_A);
	udp_send_query(f, 1, "www.example.org", T_TYPE_A);
	udp_send_query(f, 2, "github.com", T_TYPE_A);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(udp_receive(f, &r, WAIT_MAX_MS), 0);
		assert_true(r.id < 3);
		seen[r.id] = true;
		assert_int_equal(r.na, r.id == 2 ? 1 : 2);
	}
	assert_true(seen[0] && seen[1] && seen[2]);
}

static void
test_pending_queries_over_the_cap_get_servfail(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	uint16_t id;

	/* The upstream never answers these: each stays pending. */
	for (id = 0; id <= DNSSTUB_PENDING_MAX; id++) {
		udp_send_query(f, id, "silent.example.org", T_TYPE_A);
		if (id % 16 == 15)
			run_for_ms(f, LOOP_SLICE_MS);
	}
	assert_int_equal(udp_receive(f, &r, WAIT_MAX_MS), 0);
	assert_int_equal(r.id, DNSSTUB_PENDING_MAX);
	assert_int_equal(r.rcode, T_RCODE_SERVFAIL);
	assert_int_equal(udp_receive(f, &r, QUIET_MS), -1);
}

static void
test_policy_change_applies_to_the_next_query(void **state)
{
	struct fixture *f = *state;
	static const char narrower[] =
	    "version: 1\n"
	    "network_policies:\n"
	    "  only:\n"
	    "    endpoints: [{host: www.example.org, port: 443}]\n"
	    "    binaries: [{path: \"/**\"}]\n";
	struct policy *pol = NULL;
	struct reply r;

	assert_int_equal(policy_load_buffer("next", narrower, strlen(narrower), &pol, NULL), 0);
	assert_int_equal(proxy_tenant_set_policy(f->tenant, pol, false, NULL), 0);
	ask_udp(f, "github.com", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_NXDOMAIN);
	ask_udp(f, "www.example.org", T_TYPE_A, &r);
	assert_int_equal(r.na, 2);
	assert_false(dns_test_server_was_asked(&f->dns, "github.com"));
}

static void
test_clients_outside_the_client_net_are_ignored(void **state)
{
	struct fixture *f = *state;
	struct sockaddr_in net = { .sin_family = AF_INET };
	struct reply r;

	inet_pton(AF_INET, "10.231.0.2", &net.sin_addr);
	dnsstub_set_client_net(f->stub, (struct sockaddr *)&net, 32);
	udp_send_query(f, 9, "github.com", T_TYPE_A);
	assert_int_equal(udp_receive(f, &r, QUIET_MS), -1);
	inet_pton(AF_INET, "127.0.0.0", &net.sin_addr);
	dnsstub_set_client_net(f->stub, (struct sockaddr *)&net, 8);
	ask_udp(f, "github.com", T_TYPE_A, &r);
	assert_int_equal(r.na, 1);
}

static void
test_failed_ledger_turns_answers_into_servfail(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	int64_t deadline = time_mono_ns() + (int64_t)WAIT_MAX_MS * 1000000;

	/* The first record makes the writer meet the full disk. */
	ask_udp(f, "nope.example.com", T_TYPE_A, &r);
	while (ledger_ok(f->ledger) && time_mono_ns() < deadline)
		run_for_ms(f, LOOP_SLICE_MS);
	assert_false(ledger_ok(f->ledger));
	ask_udp(f, "nope.example.com", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_SERVFAIL);
	ask_udp(f, "github.com", T_TYPE_A, &r);
	assert_int_equal(r.rcode, T_RCODE_SERVFAIL);
	assert_int_equal(r.nanswers, 0);
	/* What could not be recorded did not leave the host either. */
	assert_int_equal(f->dns.queries, 0);
}

static void
test_dig_gets_an_allowed_answer_over_udp(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = { "+short", "github.com", "A", NULL };
	char out[DIG_OUTPUT_MAX_BYTES];

	run_dig(f, args, out, sizeof(out));
	assert_string_equal(out, "140.82.112.3\n");
}

static void
test_dig_gets_an_allowed_answer_over_tcp(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = { "+tcp", "+short", "www.example.org", "A", NULL };
	char out[DIG_OUTPUT_MAX_BYTES];

	run_dig(f, args, out, sizeof(out));
	assert_non_null(strstr(out, "93.184.216.34\n"));
	assert_non_null(strstr(out, "93.184.216.35\n"));
}

static void
test_dig_sees_nxdomain_for_a_refused_name(void **state)
{
	struct fixture *f = *state;
	static const char *const udp[] = { "secret-data.evil.com", "TXT", NULL };
	static const char *const tcp[] = { "+tcp", "secret-data.evil.com", "A", NULL };
	char out[DIG_OUTPUT_MAX_BYTES];

	run_dig(f, udp, out, sizeof(out));
	assert_non_null(strstr(out, "status: NXDOMAIN"));
	run_dig(f, tcp, out, sizeof(out));
	assert_non_null(strstr(out, "status: NXDOMAIN"));
	assert_int_equal(f->dns.queries, 0);
}

static void
test_dig_sees_nodata_for_aaaa(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = { "github.com", "AAAA", NULL };
	char out[DIG_OUTPUT_MAX_BYTES];

	run_dig(f, args, out, sizeof(out));
	assert_non_null(strstr(out, "status: NOERROR"));
	assert_non_null(strstr(out, "ANSWER: 0"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_allowed_name_gets_the_upstream_address),
		T(test_allowed_answer_is_recorded_in_the_ledger),
		T(test_second_query_is_answered_from_the_cache),
		T(test_aaaa_of_allowed_name_is_nodata),
		T(test_unknown_name_is_nxdomain_recorded_and_never_sent_upstream),
		T(test_txt_for_refused_data_label_never_goes_upstream),
		T(test_wildcard_allows_one_label_only),
		T(test_name_resolving_to_loopback_gets_no_address),
		T(test_refused_addresses_are_left_out_of_a_mixed_answer),
		T(test_internal_address_needs_allowed_ips),
		T(test_upstream_nxdomain_is_passed_on),
		T(test_ttl_is_raised_to_the_minimum),
		T(test_namemap_records_answered_addresses_and_expires_them),
		T(test_tcp_query_is_answered),
		T(test_tcp_pipelined_queries_are_answered_in_order),
		T(test_tcp_client_sending_garbage_is_closed),
		T(test_tcp_clients_over_the_cap_are_closed),
		T(test_malformed_packets_are_ignored_and_the_stub_keeps_answering),
		T(test_names_that_are_no_host_names_are_refused),
		T(test_concurrent_queries_for_a_pending_name_are_all_answered),
		T(test_pending_queries_over_the_cap_get_servfail),
		T(test_policy_change_applies_to_the_next_query),
		T(test_clients_outside_the_client_net_are_ignored),
		T(test_dig_gets_an_allowed_answer_over_udp),
		T(test_dig_gets_an_allowed_answer_over_tcp),
		T(test_dig_sees_nxdomain_for_a_refused_name),
		T(test_dig_sees_nodata_for_aaaa),
#undef T
		cmocka_unit_test_setup_teardown(test_failed_ledger_turns_answers_into_servfail,
		    setup_full_disk, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
