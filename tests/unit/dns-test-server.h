/* tests/unit/dns-test-server.h: a tiny DNS server on a loopback UDP socket,
 * served from the test's own libevent loop, for the tests of the resolver
 * and the DNS stub. It answers A and AAAA questions from a fixed zone table
 * (NODATA for other types), NXDOMAIN for names not in it, and remembers
 * every name it is asked. No test leaves the machine. */
#ifndef CORRAL_TESTS_DNS_TEST_SERVER_H
#define CORRAL_TESTS_DNS_TEST_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event;
struct event_base;

#define DNS_TEST_ZONE_ADDRS_MAX 10
#define DNS_TEST_NAME_MAX_BYTES 256
#define DNS_TEST_LOG_MAX 512            /* names the server remembers */
#define DNS_TEST_ADDRESS_MAX_BYTES 32

enum dns_test_mode {
	DNS_TEST_ANSWER = 0,            /* addresses, or NODATA when none of the type */
	DNS_TEST_SILENT,                /* never answers */
	DNS_TEST_SERVFAIL,
};

/* What the server knows about one name. A NAME of "*.SUFFIX" stands for
 * every name of one label under SUFFIX. */
struct dns_test_zone {
	const char *name;
	enum dns_test_mode mode;
	uint32_t ttl_a, ttl_aaaa;
	const char *a[DNS_TEST_ZONE_ADDRS_MAX + 1];     /* NULL-terminated */
	const char *aaaa[DNS_TEST_ZONE_ADDRS_MAX + 1];
};

/* Embedded in a test's fixture; the tests read queries, address and asked. */
struct dns_test_server {
	int fd;
	struct event *ev;
	const struct dns_test_zone *zones;
	size_t nzones;
	char address[DNS_TEST_ADDRESS_MAX_BYTES];       /* "127.0.0.1:PORT" */
	int queries;                                    /* well-formed queries received */
	char asked[DNS_TEST_LOG_MAX][DNS_TEST_NAME_MAX_BYTES];  /* their names */
};

/* Binds S to an ephemeral port of 127.0.0.1 and serves ZONES (which must
 * outlive it) from BASE; -1 on failure, after which dns_test_server_clear
 * still applies. */
int dns_test_server_init(struct dns_test_server *s, struct event_base *base,
    const struct dns_test_zone *zones, size_t nzones);

/* Stops serving and closes the socket; safe after any dns_test_server_init,
 * whatever it returned. */
void dns_test_server_clear(struct dns_test_server *s);

/* True when the server was ever asked about NAME (case aside). */
bool dns_test_server_was_asked(const struct dns_test_server *s, const char *name);

#endif
