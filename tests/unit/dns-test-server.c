/* tests/unit/dns-test-server.c: the tiny loopback DNS server of the
 * resolver's and the DNS stub's tests (see dns-test-server.h). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "tests/unit/dns-test-server.h"

#define DNS_HEADER_BYTES 12
#define DNS_PACKET_MAX_BYTES 4096
#define DNS_LABEL_MAX_BYTES 63
#define DNS_TYPE_A 1
#define DNS_TYPE_AAAA 28
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3

/* The zone named NAME exactly, else the first "*.SUFFIX" zone it is one
 * label under; NULL when none. */
static const struct dns_test_zone *
zone_find(const struct dns_test_server *s, const char *name)
{
	const char *dot = strchr(name, '.');

	for (size_t i = 0; i < s->nzones; i++)
		if (strcasecmp(s->zones[i].name, name) == 0)
			return &s->zones[i];
	for (size_t i = 0; dot != NULL && i < s->nzones; i++)
		if (strncmp(s->zones[i].name, "*.", 2) == 0 &&
		    strcasecmp(s->zones[i].name + 1, dot) == 0)
			return &s->zones[i];
	return NULL;
}

/* The question of the query PKT: its name, its type and where it ends.
 * -1 when malformed. */
static int
question_parse(const uint8_t *pkt, size_t len, char name[DNS_TEST_NAME_MAX_BYTES],
    uint16_t *qtype, size_t *end)
{
	size_t off = DNS_HEADER_BYTES, out = 0;

	while (off < len && pkt[off] != 0) {
		size_t label = pkt[off++];

		if (label > DNS_LABEL_MAX_BYTES || off + label > len ||
		    out + label + 2 > DNS_TEST_NAME_MAX_BYTES)
			return -1;
		if (out > 0)
			name[out++] = '.';
		memcpy(name + out, pkt + off, label);
		off += label;
		out += label;
	}
	if (off + 5 > len)
		return -1;
	name[out] = '\0';
	*qtype = (uint16_t)(pkt[off + 1] << 8 | pkt[off + 2]);
	*end = off + 5;
	return 0;
}

static size_t
put16(uint8_t *p, size_t off, uint32_t v)
{
	p[off] = (uint8_t)(v >> 8);
	p[off + 1] = (uint8_t)v;
	return off + 2;
}

/* Appends one A or AAAA record for the question's name (a pointer to it). */
static size_t
record_add(uint8_t *pkt, size_t off, uint16_t type, uint32_t ttl, const char *text)
{
	size_t rdlen = type == DNS_TYPE_A ? 4 : 16;

	off = put16(pkt, off, 0xc000 | DNS_HEADER_BYTES);
	off = put16(pkt, off, type);
	off = put16(pkt, off, 1);       /* class IN */
	off = put16(pkt, off, ttl >> 16);
	off = put16(pkt, off, ttl & 0xffff);
	off = put16(pkt, off, (uint32_t)rdlen);
	assert_int_equal(inet_pton(type == DNS_TYPE_A ? AF_INET : AF_INET6, text, pkt + off), 1);
	return off + rdlen;
}

/* Turns the query in PKT (question ending at END) into ZONE's answer
 * (NXDOMAIN when ZONE is NULL); returns its length. */
static size_t
answer_build(uint8_t *pkt, size_t end, const struct dns_test_zone *zone, uint16_t qtype)
{
	const char *const *addrs;
	uint32_t ttl;
	uint16_t n = 0;

	pkt[2] = 0x81;                  /* a response, recursion desired */
	pkt[3] = 0x80;                  /* recursion available, NOERROR */
	memset(pkt + 6, 0, 6);
	if (zone == NULL || zone->mode == DNS_TEST_SERVFAIL) {
		pkt[3] |= zone == NULL ? DNS_RCODE_NXDOMAIN : DNS_RCODE_SERVFAIL;
		return end;
	}
	if (qtype != DNS_TYPE_A && qtype != DNS_TYPE_AAAA)
		return end;
	addrs = qtype == DNS_TYPE_A ? zone->a : zone->aaaa;
	ttl = qtype == DNS_TYPE_A ? zone->ttl_a : zone->ttl_aaaa;
	for (; addrs[n] != NULL; n++)
		end = record_add(pkt, end, qtype, ttl, addrs[n]);
	put16(pkt, 6, n);
	return end;
}

/* Logs and answers one datagram from PEER; silent names get nothing. */
static void
server_answer(struct dns_test_server *s, uint8_t *pkt, size_t len,
    const struct sockaddr_in *peer)
{
	char name[DNS_TEST_NAME_MAX_BYTES];
	const struct dns_test_zone *zone;
	uint16_t qtype;
	size_t end;

	if (len < DNS_HEADER_BYTES || question_parse(pkt, len, name, &qtype, &end) < 0)
		return;
	if (s->queries < DNS_TEST_LOG_MAX)
		snprintf(s->asked[s->queries], DNS_TEST_NAME_MAX_BYTES, "%s", name);
	s->queries++;
	zone = zone_find(s, name);
	if (zone != NULL && zone->mode == DNS_TEST_SILENT)
		return;
	len = answer_build(pkt, end, zone, qtype);
	assert_int_equal(sendto(s->fd, pkt, len, 0, (const struct sockaddr *)peer,
	    sizeof(*peer)), (ssize_t)len);
}

static void
server_read(evutil_socket_t fd, short what, void *arg)
{
	uint8_t pkt[DNS_PACKET_MAX_BYTES];
	struct sockaddr_in peer;
	socklen_t peer_len = sizeof(peer);
	ssize_t n;

	(void)what;
	while ((n = recvfrom(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&peer, &peer_len)) >= 0) {
		server_answer(arg, pkt, (size_t)n, &peer);
		peer_len = sizeof(peer);
	}
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

int
dns_test_server_init(struct dns_test_server *s, struct event_base *base,
    const struct dns_test_zone *zones, size_t nzones)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	memset(s, 0, sizeof(*s));
	s->zones = zones;
	s->nzones = nzones;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(s->fd, (struct sockaddr *)&sin, &len) < 0)
		return -1;
	snprintf(s->address, sizeof(s->address), "127.0.0.1:%u", ntohs(sin.sin_port));
	s->ev = event_new(base, s->fd, EV_READ | EV_PERSIST, server_read, s);
	return s->ev != NULL && event_add(s->ev, NULL) == 0 ? 0 : -1;
}

void
dns_test_server_clear(struct dns_test_server *s)
{
	if (s->ev != NULL)
		event_free(s->ev);
	if (s->fd >= 0)
		close(s->fd);
	s->ev = NULL;
	s->fd = -1;
}

bool
dns_test_server_was_asked(const struct dns_test_server *s, const char *name)
{
	for (int i = 0; i < s->queries && i < DNS_TEST_LOG_MAX; i++)
		if (strcasecmp(s->asked[i], name) == 0)
			return true;
	return false;
}
