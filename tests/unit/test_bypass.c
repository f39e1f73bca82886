/* broker/bypass.c: NFLOG packet messages, as the kernel's nfnetlink_log
 * sends them, to bypass packets; malformed ones skipped and counted. */
#include "config.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "broker/bypass.h"

#define TEST_BUF_BYTES 4096
#define TEST_SEEN_MAX 4
#define TEST_IFINDEX 17

struct seen {
	struct bypass_packet pk[TEST_SEEN_MAX];
	size_t n;
};

static void
on_packet(const struct bypass_packet *pk, void *arg)
{
	struct seen *s = arg;

	if (s->n < TEST_SEEN_MAX)
		s->pk[s->n] = *pk;
	s->n++;
}

/* An IPv4 header of PROTO to DST (dotted) with LEN total, fragment offset
 * FRAG, then PORT as the transport's destination port, into P. The bytes
 * written. */
static size_t
ip4(uint8_t *p, uint8_t proto, const char *dst, uint16_t len, uint16_t frag, uint16_t port)
{
	memset(p, 0, 28);
	p[0] = 0x45;
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	p[6] = (uint8_t)(frag >> 8);
	p[7] = (uint8_t)frag;
	p[8] = 64;
	p[9] = proto;
	inet_pton(AF_INET, "10.231.0.2", p + 12);
	inet_pton(AF_INET, dst, p + 16);
	p[20] = 0x9c;
	p[22] = (uint8_t)(port >> 8);
	p[23] = (uint8_t)port;
	return 28;
}

/* Appends one packet message to BUF at *AT: TYPE, the input interface
 * when IFINDEX is not 0, and PAYLOAD. */
static void
put_message(char *buf, size_t *at, uint16_t type, uint32_t ifindex, const void *payload,
    size_t len)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + *at);
	struct nfgenmsg *g;
	struct nfulnl_msg_packet_hdr ph = { .hw_protocol = htons(0x0800), .hook = 0 };

	nlh->nlmsg_type = type;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = AF_INET;
	mnl_attr_put(nlh, NFULA_PACKET_HDR, sizeof(ph), &ph);
	if (ifindex != 0)
		mnl_attr_put_u32(nlh, NFULA_IFINDEX_INDEV, htonl(ifindex));
	mnl_attr_put(nlh, NFULA_PAYLOAD, len, payload);
	*at += nlh->nlmsg_len;
}

static const uint16_t packet_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET;

static void
test_udp_names_address_port_bytes_and_interface(void **state)
{
	char buf[TEST_BUF_BYTES];
	uint8_t ip[64];
	size_t at = 0;
	struct seen s = { 0 };

	(void)state;
	put_message(buf, &at, packet_type, TEST_IFINDEX, ip,
	    ip4(ip, IPPROTO_UDP, "198.18.1.1", 41, 0, 9));
	assert_int_equal(bypass_parse(buf, at, on_packet, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.pk[0].ifindex, TEST_IFINDEX);
	assert_string_equal(s.pk[0].ip, "198.18.1.1");
	assert_int_equal(s.pk[0].port, 9);
	assert_int_equal(s.pk[0].bytes, 41);
	assert_string_equal(s.pk[0].reason, "udp_not_allowed");
}

static void
test_icmp_and_later_fragments_have_no_port(void **state)
{
	char buf[TEST_BUF_BYTES];
	uint8_t a[64], b[64];
	size_t at = 0;
	struct seen s = { 0 };

	(void)state;
	put_message(buf, &at, packet_type, TEST_IFINDEX, a,
	    ip4(a, IPPROTO_ICMP, "198.18.0.1", 84, 0, 7));
	put_message(buf, &at, packet_type, TEST_IFINDEX, b,
	    ip4(b, IPPROTO_UDP, "198.18.0.1", 1500, 185, 53));
	assert_int_equal(bypass_parse(buf, at, on_packet, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.pk[0].port, -1);
	assert_string_equal(s.pk[0].reason, "icmp_not_allowed");
	assert_int_equal(s.pk[1].port, -1);
	assert_string_equal(s.pk[1].reason, "udp_not_allowed");
}

static void
test_protocols_are_named_or_numbered(void **state)
{
	char buf[TEST_BUF_BYTES];
	uint8_t a[64], b[64];
	size_t at = 0;
	struct seen s = { 0 };

	(void)state;
	put_message(buf, &at, packet_type, TEST_IFINDEX, a, ip4(a, IPPROTO_GRE, "1.2.3.4", 40, 0, 0));
	put_message(buf, &at, packet_type, TEST_IFINDEX, b, ip4(b, 200, "1.2.3.4", 40, 0, 0));
	assert_int_equal(bypass_parse(buf, at, on_packet, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.pk[0].reason, "gre_not_allowed");
	assert_string_equal(s.pk[1].reason, "protocol_200_not_allowed");
}

static void
test_ipv6_udp(void **state)
{
	char buf[TEST_BUF_BYTES];
	uint8_t ip[48] = { 0x60 };
	size_t at = 0;
	struct seen s = { 0 };

	(void)state;
	ip[5] = 12;             /* payload length */
	ip[6] = IPPROTO_UDP;
	inet_pton(AF_INET6, "2001:db8::1", ip + 24);
	ip[42] = 0x01;          /* destination port 443 */
	ip[43] = 0xbb;
	put_message(buf, &at, packet_type, TEST_IFINDEX, ip, sizeof(ip));
	assert_int_equal(bypass_parse(buf, at, on_packet, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.pk[0].ip, "2001:db8::1");
	assert_int_equal(s.pk[0].port, 443);
	assert_int_equal(s.pk[0].bytes, 52);
}

static void
test_malformed_messages_are_skipped_and_counted(void **state)
{
	char buf[TEST_BUF_BYTES];
	uint8_t ip[64], bad_hl[28];
	size_t at = 0;
	struct seen s = { 0 };

	(void)state;
	ip4(ip, IPPROTO_UDP, "198.18.1.1", 41, 0, 9);
	memcpy(bad_hl, ip, sizeof(bad_hl));
	bad_hl[0] = 0x4f;       /* a 60-byte header in 28 bytes */
	put_message(buf, &at, packet_type, 0, ip, 28);          /* no interface */
	put_message(buf, &at, packet_type, TEST_IFINDEX, ip, 10);       /* a cut header */
	put_message(buf, &at, packet_type, TEST_IFINDEX, bad_hl, sizeof(bad_hl));
	put_message(buf, &at, packet_type, TEST_IFINDEX, "\x70 not ip at all ...", 20);
	put_message(buf, &at, packet_type, TEST_IFINDEX, ip, 28);       /* and a good one */
	assert_int_equal(bypass_parse(buf, at, on_packet, &s), 4);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.pk[0].port, 9);
}

static void
test_other_messages_and_cut_buffers(void **state)
{
	char buf[TEST_BUF_BYTES];
	uint8_t ip[64];
	size_t at = 0, first;
	struct seen s = { 0 };

	(void)state;
	ip4(ip, IPPROTO_UDP, "198.18.1.1", 41, 0, 9);
	put_message(buf, &at, NLMSG_ERROR, TEST_IFINDEX, ip, 28);  /* not a packet: ignored */
	assert_int_equal(bypass_parse(buf, at, on_packet, &s), 0);
	assert_int_equal(s.n, 0);
	at = 0;
	put_message(buf, &at, packet_type, TEST_IFINDEX, ip, 28);
	first = at;
	put_message(buf, &at, packet_type, TEST_IFINDEX, ip, 28);
	/* A datagram cut inside its second message: the first is read, the
	 * rest is not trusted. */
	assert_int_equal(bypass_parse(buf, first + 20, on_packet, &s), 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(bypass_parse(buf, 3, on_packet, &s), 0);
	assert_int_equal(s.n, 1);
}

/* Lengths the fuzzer found: past INT_MAX, past the buffer, too short, or
 * unaligned at the end. Each ends the walk as one malformed message. */
static void
test_lengths_that_do_not_fit_end_the_walk(void **state)
{
	static const uint32_t lengths[] = { 0, 8, 0xffffffffu, 0xfffffffcu, 0x80000000u, 4096 };
	char buf[TEST_BUF_BYTES];
	uint8_t ip[64];
	size_t at = 0;
	struct seen s = { 0 };

	(void)state;
	put_message(buf, &at, packet_type, TEST_IFINDEX, ip,
	    ip4(ip, IPPROTO_UDP, "198.18.1.1", 41, 0, 9));
	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		memcpy(buf, &lengths[i], sizeof(lengths[i]));
		assert_int_equal(bypass_parse(buf, at, on_packet, &s), 1);
	}
	assert_int_equal(s.n, 0);
	/* An unaligned length whose padding is not in the datagram. */
	at = 0;
	put_message(buf, &at, packet_type, TEST_IFINDEX, ip, 27);
	assert_int_equal(bypass_parse(buf, at - 1, on_packet, &s), 1);
	assert_int_equal(s.n, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_names_address_port_bytes_and_interface),
		cmocka_unit_test(test_icmp_and_later_fragments_have_no_port),
		cmocka_unit_test(test_protocols_are_named_or_numbered),
		cmocka_unit_test(test_ipv6_udp),
		cmocka_unit_test(test_malformed_messages_are_skipped_and_counted),
		cmocka_unit_test(test_other_messages_and_cut_buffers),
		cmocka_unit_test(test_lengths_that_do_not_fit_end_the_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
