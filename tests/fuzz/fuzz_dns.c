/* Fuzz target for egress-proxy/dns: parses the input as a UDP query and as
 * a TCP stream; builds every reply kind for what parses, and aborts when a
 * reply passes its cap or does not echo the query's id. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress-proxy/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ADDRS_MAX 200

static uint8_t fuzz_out[DNS_TCP_MAX_BYTES];

/* Checks one built reply against Q and the cap it was given. */
static void
fuzz_check_reply(const struct dns_query *q, enum dns_error e, size_t len, size_t cap)
{
	if (e != DNS_ERR_NONE)
		return;
	if (len > cap || len > q->reply_max_bytes || len < DNS_HEADER_BYTES)
		abort();
	if (fuzz_out[0] != (uint8_t)(q->id >> 8) || fuzz_out[1] != (uint8_t)q->id ||
	    (fuzz_out[2] & 0x80) == 0)
		abort();
}

/* Builds each reply kind for Q into a buffer of CAP bytes. */
static void
fuzz_build_all(const struct dns_query *q, size_t cap, size_t naddrs)
{
	static const enum dns_rcode rcodes[] = { DNS_RCODE_NOERROR, DNS_RCODE_FORMERR,
	    DNS_RCODE_SERVFAIL, DNS_RCODE_NXDOMAIN, DNS_RCODE_NOTIMP, DNS_RCODE_REFUSED };
	uint8_t addrs[FUZZ_ADDRS_MAX][4];
	enum dns_error e;
	size_t len = 0;

	for (size_t i = 0; i < naddrs; i++)
		memset(addrs[i], (int)i, 4);
	e = dns_build_a(q, (const uint8_t (*)[4])addrs, naddrs, 60, fuzz_out, cap, &len);
	fuzz_check_reply(q, e, len, cap);
	for (size_t i = 0; i < sizeof(rcodes) / sizeof(rcodes[0]); i++) {
		e = dns_build_rcode(q, rcodes[i], fuzz_out, cap, &len);
		fuzz_check_reply(q, e, len, cap);
	}
}

static void
fuzz_one(const uint8_t *msg, size_t len, enum dns_transport t, size_t cap, size_t naddrs)
{
	struct dns_query q;
	enum dns_rcode rcode;
	enum dns_error e;
	size_t out_len = 0;

	e = dns_parse_query(msg, len, t, &q);
	if (q.question_ok && strlen(q.name) != q.name_len)
		abort();
	if (e == DNS_ERR_NONE) {
		fuzz_build_all(&q, cap, naddrs);
	} else if (dns_error_rcode(e, &rcode)) {
		if (!q.header_ok)
			abort();
		e = dns_build_rcode(&q, rcode, fuzz_out, cap, &out_len);
		fuzz_check_reply(&q, e, out_len, cap);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *msg;
	size_t msg_len, frame_len, cap, naddrs;

	cap = size > 0 ? (size_t)data[0] * 8 : DNS_UDP_MAX_BYTES;
	naddrs = size > 1 ? data[1] % FUZZ_ADDRS_MAX : 1;
	fuzz_one(data, size, DNS_TRANSPORT_UDP, cap, naddrs);
	fuzz_one(data, size, DNS_TRANSPORT_UDP, sizeof(fuzz_out), naddrs);
	if (dns_tcp_frame(data, size, &msg, &msg_len, &frame_len) == DNS_TCP_MESSAGE) {
		if (frame_len != msg_len + DNS_TCP_PREFIX_BYTES || frame_len > size)
			abort();
		fuzz_one(msg, msg_len, DNS_TRANSPORT_TCP, sizeof(fuzz_out), naddrs);
	}
	return 0;
}
