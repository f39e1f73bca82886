/* Unit tests for egress-proxy/dns: query parsing (names, pointers, counts,
 * classes, EDNS, TCP framing) and byte-exact replies. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "egress-proxy/dns.h"

#define TEST_MSG_MAX_BYTES 2048
#define TEST_OUT_MAX_BYTES DNS_TCP_MAX_BYTES
#define TEST_ADDRS_MAX 200
#define FLAGS_RD 0x0100
#define FLAGS_QR 0x8000
#define TYPE_CNAME 5

/* The query under construction. */
static struct {
	uint8_t b[TEST_MSG_MAX_BYTES];
	size_t len;
} M;

static uint8_t out[TEST_OUT_MAX_BYTES];

static void
put_u16(uint16_t v)
{
	M.b[M.len++] = (uint8_t)(v >> 8);
	M.b[M.len++] = (uint8_t)v;
}

static void
put_raw(const void *p, size_t n)
{
	memcpy(M.b + M.len, p, n);
	M.len += n;
}

static void
put_header(uint16_t id, uint16_t flags, uint16_t qd, uint16_t an, uint16_t ns, uint16_t ar)
{
	M.len = 0;
	put_u16(id);
	put_u16(flags);
	put_u16(qd);
	put_u16(an);
	put_u16(ns);
	put_u16(ar);
}

/* A dotted name as labels, ending with the root. */
static void
put_name(const char *name)
{
	const char *dot;
	size_t n;

	while (*name != '\0') {
		dot = strchr(name, '.');
		n = dot != NULL ? (size_t)(dot - name) : strlen(name);
		M.b[M.len++] = (uint8_t)n;
		put_raw(name, n);
		name += n + (dot != NULL);
	}
	M.b[M.len++] = 0;
}

/* An OPT record: root name, payload size, version, no options. */
static void
put_opt(uint16_t udp_bytes, uint8_t version)
{
	const uint8_t ttl[4] = { 0, version, 0, 0 };

	M.b[M.len++] = 0;
	put_u16(DNS_TYPE_OPT);
	put_u16(udp_bytes);
	put_raw(ttl, sizeof(ttl));
	put_u16(0);
}

/* A standard recursive query for NAME, QTYPE, class IN. */
static void
make_query(const char *name, uint16_t qtype)
{
	put_header(0x1234, FLAGS_RD, 1, 0, 0, 0);
	put_name(name);
	put_u16(qtype);
	put_u16(DNS_CLASS_IN);
}

static enum dns_error
parse(struct dns_query *q)
{
	return dns_parse_query(M.b, M.len, DNS_TRANSPORT_UDP, q);
}

static void
assert_error(enum dns_error got, enum dns_error want)
{
	assert_string_equal(dns_strerror(got), dns_strerror(want));
}

static void
test_a_query_is_decoded(void **state)
{
	struct dns_query q;

	(void)state;
	make_query("api.example.com", DNS_TYPE_A);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_int_equal(q.id, 0x1234);
	assert_true(q.rd);
	assert_int_equal(q.qtype, DNS_TYPE_A);
	assert_int_equal(q.qclass, DNS_CLASS_IN);
	assert_string_equal(q.name, "api.example.com");
	assert_int_equal(q.name_len, 15);
	assert_true(q.name_is_hostname);
	assert_false(q.edns);
	assert_int_equal(q.reply_max_bytes, DNS_UDP_MAX_BYTES);
}

static void
test_aaaa_and_txt_types_are_decoded(void **state)
{
	struct dns_query q;

	(void)state;
	make_query("secret.evil.example", DNS_TYPE_AAAA);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_int_equal(q.qtype, DNS_TYPE_AAAA);
	make_query("secret.evil.example", DNS_TYPE_TXT);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_int_equal(q.qtype, DNS_TYPE_TXT);
	assert_string_equal(q.name, "secret.evil.example");
}

static void
test_upper_case_name_is_lowered_but_echoed_as_sent(void **state)
{
	struct dns_query q;

	(void)state;
	make_query("ApI.ExAmPlE.cOm", DNS_TYPE_A);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_string_equal(q.name, "api.example.com");
	assert_memory_equal(q.qname_wire, "\3ApI\7ExAmPlE\3cOm", 17);
}

static void
test_root_name_is_dot_and_not_a_hostname(void **state)
{
	struct dns_query q;

	(void)state;
	make_query("", DNS_TYPE_NS);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_string_equal(q.name, ".");
	assert_false(q.name_is_hostname);
}

static void
test_dot_inside_label_is_escaped_and_not_a_hostname(void **state)
{
	struct dns_query q;

	(void)state;
	put_header(1, 0, 1, 0, 0, 0);
	put_raw("\x0b" "allowed.com\x04" "evil\0", 18);
	put_u16(DNS_TYPE_A);
	put_u16(DNS_CLASS_IN);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_string_equal(q.name, "allowed\\.com.evil");
	assert_false(q.name_is_hostname);
}

static void
test_nul_and_high_bytes_are_escaped(void **state)
{
	struct dns_query q;

	(void)state;
	put_header(1, 0, 1, 0, 0, 0);
	put_raw("\x05" "a\0b\xff\\" "\x03" "com\0", 11);
	put_u16(DNS_TYPE_A);
	put_u16(DNS_CLASS_IN);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_string_equal(q.name, "a\\000b\\255\\\\.com");
	assert_int_equal(q.name_len, strlen("a\\000b\\255\\\\.com"));
	assert_false(q.name_is_hostname);
}

static void
test_compression_pointer_to_itself_is_refused(void **state)
{
	struct dns_query q;

	(void)state;
	put_header(1, 0, 1, 0, 0, 0);
	put_raw("\xc0\x0c", 2);
	put_u16(DNS_TYPE_A);
	put_u16(DNS_CLASS_IN);
	assert_error(parse(&q), DNS_ERR_POINTER_LOOP);
}

static void
test_compression_loop_through_earlier_label_is_refused(void **state)
{
	struct dns_query q;

	(void)state;
	put_header(1, 0, 1, 0, 0, 0);
	put_raw("\x01" "a\xc0\x0c", 4);
	put_u16(DNS_TYPE_A);
	put_u16(DNS_CLASS_IN);
	assert_error(parse(&q), DNS_ERR_POINTER_LOOP);
}

static void
test_forward_pointer_is_refused(void **state)
{
	struct dns_query q;

	(void)state;
	put_header(1, 0, 1, 0, 0, 0);
	put_raw("\xc0\x12", 2);
	put_u16(DNS_TYPE_A);
	put_u16(DNS_CLASS_IN);
	put_raw("\x01" "a\0", 3);
	assert_error(parse(&q), DNS_ERR_POINTER_FORWARD);
}

static void
test_pointer_into_header_is_refused(void **state)
{
	struct dns_query q;

	(void)state;
	put_header(1, 0, 1, 0, 0, 0);
	put_raw("\xc0\x04", 2);
	put_u16(DNS_TYPE_A);
	put_u16(DNS_CLASS_IN);
	assert_error(parse(&q), DNS_ERR_POINTER_HEADER);
}

static void
test_backward_pointer_in_opt_name_is_followed(void **state)
{
	struct dns_query q;

	(void)state;
	/* The OPT owner name points at the question's root byte: still the root. */
	put_header(1, 0, 1, 0, 0, 1);
	put_name("a.example");
	put_u16(DNS_TYPE_A);
	put_u16(DNS_CLASS_IN);
	put_raw("\xc0\x16", 2);
	put_u16(DNS_TYPE_OPT);
	put_u16(1232);
	put_raw("\0\0\0\0\0\0", 6);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_true(q.edns);
}

static void
test_label_of_64_bytes_is_refused(void **state)
{
	char label[65];
	struct dns_query q;

	(void)state;
	memset(label, 'x', 64);
	label[64] = '\0';
	make_query(label, DNS_TYPE_A);
	assert_error(parse(&q), DNS_ERR_LABEL_TOO_LONG);
	label[63] = '\0';
	make_query(label, DNS_TYPE_A);
	assert_error(parse(&q), DNS_ERR_NONE);
}

/* A name whose wire form is WIRE_LEN bytes: labels of 63 and a last one. */
static void
make_long_query(size_t wire_len)
{
	char name[300];
	size_t n = 0, content = wire_len - 1, label;

	while (content > 0) {
		label = content - 1 > 63 ? 63 : content - 1;
		if (n > 0)
			name[n++] = '.';
		memset(name + n, 'a', label);
		n += label;
		content -= label + 1;
	}
	name[n] = '\0';
	make_query(name, DNS_TYPE_A);
}

static void
test_name_of_255_bytes_is_accepted_and_256_refused(void **state)
{
	struct dns_query q;

	(void)state;
	make_long_query(255);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_int_equal(q.qname_wire_len, 255);
	assert_int_equal(q.name_len, 253);
	make_long_query(256);
	assert_error(parse(&q), DNS_ERR_NAME_TOO_LONG);
}

static void
test_longest_escaped_name_fits_its_text(void **state)
{
	struct dns_query q;

	(void)state;
	put_header(1, 0, 1, 0, 0, 0);
	for (int i = 0; i < 4; i++) {
		M.b[M.len++] = i < 3 ? 63 : 61;
		memset(M.b + M.len, 0x01, i < 3 ? 63 : 61);
		M.len += i < 3 ? 63 : 61;
	}
	M.b[M.len++] = 0;
	put_u16(DNS_TYPE_A);
	put_u16(DNS_CLASS_IN);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_int_equal(q.name_len, 250 * 4 + 3);
	assert_int_equal(strlen(q.name), q.name_len);
}

static void
test_question_count_other_than_one_is_formerr(void **state)
{
	struct dns_query q;
	enum dns_rcode rcode;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	M.b[5] = 0;
	assert_error(parse(&q), DNS_ERR_QDCOUNT);
	assert_true(dns_error_rcode(DNS_ERR_QDCOUNT, &rcode));
	assert_int_equal(rcode, DNS_RCODE_FORMERR);
	M.b[5] = 2;
	assert_error(parse(&q), DNS_ERR_QDCOUNT);
}

static void
test_opcode_other_than_query_is_notimp(void **state)
{
	struct dns_query q;
	enum dns_rcode rcode;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	M.b[2] |= 1 << 3;	/* IQUERY */
	assert_error(parse(&q), DNS_ERR_OPCODE);
	assert_true(dns_error_rcode(DNS_ERR_OPCODE, &rcode));
	assert_int_equal(rcode, DNS_RCODE_NOTIMP);
	assert_int_equal(q.opcode, 1);
}

static void
test_response_is_refused_and_never_answered(void **state)
{
	struct dns_query q;
	enum dns_rcode rcode;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	M.b[2] |= 0x80;
	assert_error(parse(&q), DNS_ERR_NOT_QUERY);
	assert_false(dns_error_rcode(DNS_ERR_NOT_QUERY, &rcode));
}

static void
test_short_header_is_never_answered(void **state)
{
	struct dns_query q;
	enum dns_rcode rcode;
	size_t len;

	(void)state;
	assert_error(dns_parse_query((const uint8_t *)"\x12\x34\x01", 3, DNS_TRANSPORT_UDP, &q),
	    DNS_ERR_SHORT_HEADER);
	assert_false(q.header_ok);
	assert_false(dns_error_rcode(DNS_ERR_SHORT_HEADER, &rcode));
	assert_error(dns_build_rcode(&q, DNS_RCODE_FORMERR, out, sizeof(out), &len),
	    DNS_ERR_NO_HEADER);
}

static void
test_class_other_than_in_is_refused(void **state)
{
	struct dns_query q;
	enum dns_rcode rcode;

	(void)state;
	put_header(1, 0, 1, 0, 0, 0);
	put_name("version.bind");
	put_u16(DNS_TYPE_TXT);
	put_u16(3);	/* CHAOS */
	assert_error(parse(&q), DNS_ERR_QCLASS);
	assert_true(q.question_ok);
	assert_true(dns_error_rcode(DNS_ERR_QCLASS, &rcode));
	assert_int_equal(rcode, DNS_RCODE_REFUSED);
}

static void
test_answer_or_authority_records_are_refused(void **state)
{
	struct dns_query q;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	M.b[7] = 1;
	assert_error(parse(&q), DNS_ERR_SECTION_COUNT);
	make_query("a.example", DNS_TYPE_A);
	M.b[9] = 1;
	assert_error(parse(&q), DNS_ERR_SECTION_COUNT);
	make_query("a.example", DNS_TYPE_A);
	M.b[11] = 2;
	assert_error(parse(&q), DNS_ERR_SECTION_COUNT);
}

static void
test_edns_opt_record_is_tolerated(void **state)
{
	struct dns_query q;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	M.b[11] = 1;
	put_opt(4096, 0);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_true(q.edns);
	assert_int_equal(q.edns_udp_bytes, 4096);
	assert_int_equal(q.reply_max_bytes, DNS_EDNS_MAX_BYTES);
	make_query("a.example", DNS_TYPE_A);
	M.b[11] = 1;
	put_opt(100, 0);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_int_equal(q.reply_max_bytes, DNS_UDP_MAX_BYTES);
}

static void
test_edns_options_are_checked_against_the_record(void **state)
{
	struct dns_query q;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	M.b[11] = 1;
	put_opt(1232, 0);
	M.b[M.len - 1] = 8;	/* RDLENGTH: one COOKIE option of 4 bytes */
	put_raw("\x00\x0a\x00\x04" "abcd", 8);
	assert_error(parse(&q), DNS_ERR_NONE);
	M.b[M.len - 5] = 5;	/* the option now claims more than the record holds */
	assert_error(parse(&q), DNS_ERR_BAD_OPT);
}

static void
test_edns_version_other_than_zero_is_refused(void **state)
{
	struct dns_query q;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	M.b[11] = 1;
	put_opt(1232, 1);
	assert_error(parse(&q), DNS_ERR_EDNS_VERSION);
}

static void
test_additional_record_other_than_opt_is_refused(void **state)
{
	struct dns_query q;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	M.b[11] = 1;
	put_name("key.example");
	put_u16(250);	/* TSIG */
	put_u16(255);
	put_raw("\0\0\0\0\0\0", 6);
	assert_error(parse(&q), DNS_ERR_ADDITIONAL_NOT_OPT);
}

static void
test_opt_with_a_name_is_refused(void **state)
{
	struct dns_query q;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	M.b[11] = 1;
	put_name("x");
	put_u16(DNS_TYPE_OPT);
	put_u16(1232);
	put_raw("\0\0\0\0\0\0", 6);
	assert_error(parse(&q), DNS_ERR_BAD_OPT);
}

static void
test_trailing_bytes_are_refused(void **state)
{
	struct dns_query q;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	put_raw("x", 1);
	assert_error(parse(&q), DNS_ERR_TRAILING_BYTES);
}

static void
test_truncated_question_is_refused(void **state)
{
	struct dns_query q;
	size_t full;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	full = M.len;
	for (M.len = DNS_HEADER_BYTES; M.len < full; M.len++)
		assert_error(parse(&q), DNS_ERR_TRUNCATED);
}

static void
test_tcp_length_prefix_frames_one_message(void **state)
{
	uint8_t stream[TEST_MSG_MAX_BYTES + 4];
	const uint8_t *msg;
	size_t msg_len, frame_len;
	struct dns_query q;

	(void)state;
	make_query("a.example", DNS_TYPE_A);
	dns_tcp_put_length(stream, M.len);
	memcpy(stream + 2, M.b, M.len);
	memcpy(stream + 2 + M.len, "\0\x0c", 2);	/* the next frame starts */
	assert_int_equal(dns_tcp_frame(stream, 1, &msg, &msg_len, &frame_len), DNS_TCP_NEED_MORE);
	assert_int_equal(dns_tcp_frame(stream, M.len + 1, &msg, &msg_len, &frame_len),
	    DNS_TCP_NEED_MORE);
	assert_int_equal(dns_tcp_frame(stream, M.len + 4, &msg, &msg_len, &frame_len),
	    DNS_TCP_MESSAGE);
	assert_ptr_equal(msg, stream + 2);
	assert_int_equal(msg_len, M.len);
	assert_int_equal(frame_len, M.len + 2);
	assert_error(dns_parse_query(msg, msg_len, DNS_TRANSPORT_TCP, &q), DNS_ERR_NONE);
	assert_int_equal(q.reply_max_bytes, DNS_TCP_MAX_BYTES);
}

static void
test_tcp_length_below_a_header_is_refused(void **state)
{
	const uint8_t *msg;
	size_t msg_len, frame_len;

	(void)state;
	assert_int_equal(dns_tcp_frame((const uint8_t *)"\0\x0b", 2, &msg, &msg_len, &frame_len),
	    DNS_TCP_BAD_LENGTH);
	assert_int_equal(dns_tcp_frame((const uint8_t *)"\0\0", 2, &msg, &msg_len, &frame_len),
	    DNS_TCP_BAD_LENGTH);
}

/* The reply header and question every example.com reply shares. */
#define REPLY_QUESTION "\7example\3com\0\0\1\0\1"

static void
test_a_reply_is_byte_exact(void **state)
{
	const uint8_t addrs[2][4] = { { 93, 184, 216, 34 }, { 192, 0, 2, 1 } };
	const uint8_t want[] = "\x12\x34\x81\x80\0\1\0\2\0\0\0\0" REPLY_QUESTION
	    "\xc0\x0c\0\1\0\1\0\0\0\x3c\0\4\x5d\xb8\xd8\x22"
	    "\xc0\x0c\0\1\0\1\0\0\0\x3c\0\4\xc0\0\2\1";
	struct dns_query q;
	size_t len;

	(void)state;
	make_query("example.com", DNS_TYPE_A);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_error(dns_build_a(&q, addrs, 2, 60, out, sizeof(out), &len), DNS_ERR_NONE);
	assert_int_equal(len, sizeof(want) - 1);
	assert_memory_equal(out, want, len);
}

static void
test_nodata_reply_is_byte_exact(void **state)
{
	const uint8_t want[] = "\x12\x34\x81\x80\0\1\0\0\0\0\0\0" "\7example\3com\0\0\x1c\0\1";
	struct dns_query q;
	size_t len;

	(void)state;
	make_query("example.com", DNS_TYPE_AAAA);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_error(dns_build_rcode(&q, DNS_RCODE_NOERROR, out, sizeof(out), &len), DNS_ERR_NONE);
	assert_int_equal(len, sizeof(want) - 1);
	assert_memory_equal(out, want, len);
}

/* NXDOMAIN, REFUSED, SERVFAIL: same shape, the rcode in the fourth byte. */
static void
test_rcode_replies_are_byte_exact(void **state)
{
	const enum dns_rcode rcodes[] = { DNS_RCODE_NXDOMAIN, DNS_RCODE_REFUSED,
	    DNS_RCODE_SERVFAIL, DNS_RCODE_FORMERR };
	uint8_t want[] = "\x12\x34\x81\x80\0\1\0\0\0\0\0\0" REPLY_QUESTION;
	struct dns_query q;
	size_t len;

	(void)state;
	make_query("example.com", DNS_TYPE_A);
	assert_error(parse(&q), DNS_ERR_NONE);
	for (size_t i = 0; i < sizeof(rcodes) / sizeof(rcodes[0]); i++) {
		want[3] = (uint8_t)(0x80 | rcodes[i]);
		assert_error(dns_build_rcode(&q, rcodes[i], out, sizeof(out), &len), DNS_ERR_NONE);
		assert_int_equal(len, sizeof(want) - 1);
		assert_memory_equal(out, want, len);
	}
}

static void
test_reply_without_rd_clears_rd(void **state)
{
	struct dns_query q;
	size_t len;

	(void)state;
	make_query("example.com", DNS_TYPE_A);
	M.b[2] = 0;
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_error(dns_build_rcode(&q, DNS_RCODE_NXDOMAIN, out, sizeof(out), &len), DNS_ERR_NONE);
	assert_int_equal(out[2], 0x80);
	assert_int_equal(out[3], 0x83);
}

static void
test_formerr_for_unparsed_question_has_no_question(void **state)
{
	const uint8_t want[] = "\x12\x34\x81\x81\0\0\0\0\0\0\0\0";
	struct dns_query q;
	size_t len;

	(void)state;
	put_header(0x1234, FLAGS_RD, 1, 0, 0, 0);
	put_raw("\x40", 1);
	assert_error(parse(&q), DNS_ERR_LABEL_TOO_LONG);
	assert_error(dns_build_rcode(&q, DNS_RCODE_FORMERR, out, sizeof(out), &len), DNS_ERR_NONE);
	assert_int_equal(len, DNS_HEADER_BYTES);
	assert_memory_equal(out, want, len);
}

static void
test_notimp_reply_echoes_the_opcode(void **state)
{
	struct dns_query q;
	size_t len;

	(void)state;
	make_query("example.com", DNS_TYPE_A);
	M.b[2] = (uint8_t)(4 << 3 | 1);	/* NOTIFY, RD */
	assert_error(parse(&q), DNS_ERR_OPCODE);
	assert_error(dns_build_rcode(&q, DNS_RCODE_NOTIMP, out, sizeof(out), &len), DNS_ERR_NONE);
	assert_int_equal(len, DNS_HEADER_BYTES);
	assert_int_equal(out[2], 0x80 | 4 << 3 | 1);
	assert_int_equal(out[3], 0x84);
}

static void
test_edns_reply_ends_with_opt_record(void **state)
{
	const uint8_t addr[1][4] = { { 10, 0, 0, 1 } };
	const uint8_t opt[] = "\0\0\x29\x04\xd0\0\0\0\0\0\0";
	struct dns_query q;
	size_t len;

	(void)state;
	make_query("example.com", DNS_TYPE_A);
	M.b[11] = 1;
	put_opt(4096, 0);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_error(dns_build_a(&q, addr, 1, 30, out, sizeof(out), &len), DNS_ERR_NONE);
	assert_int_equal(out[11], 1);
	assert_int_equal(len, DNS_HEADER_BYTES + 17 + 16 + 11);
	assert_memory_equal(out + len - 11, opt, 11);
}

static void
test_udp_reply_never_exceeds_512_bytes_and_sets_tc(void **state)
{
	uint8_t addrs[TEST_ADDRS_MAX][4];
	struct dns_query q;
	size_t len;

	(void)state;
	memset(addrs, 7, sizeof(addrs));
	make_query("example.com", DNS_TYPE_A);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_error(dns_build_a(&q, (const uint8_t (*)[4])addrs, TEST_ADDRS_MAX, 60, out,
	    sizeof(out), &len), DNS_ERR_NONE);
	assert_true(len <= DNS_UDP_MAX_BYTES);
	assert_int_equal(out[2] & 0x02, 0x02);
	assert_int_equal(out[7], (DNS_UDP_MAX_BYTES - 12 - 17) / 16);
	assert_int_equal(len, 12 + 17 + 16 * out[7]);
}

static void
test_edns_reply_never_exceeds_1232_bytes(void **state)
{
	uint8_t addrs[TEST_ADDRS_MAX][4];
	struct dns_query q;
	size_t len;

	(void)state;
	memset(addrs, 7, sizeof(addrs));
	make_query("example.com", DNS_TYPE_A);
	M.b[11] = 1;
	put_opt(65535, 0);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_error(dns_build_a(&q, (const uint8_t (*)[4])addrs, TEST_ADDRS_MAX, 60, out,
	    sizeof(out), &len), DNS_ERR_NONE);
	assert_true(len <= DNS_EDNS_MAX_BYTES);
	assert_true(len > DNS_EDNS_MAX_BYTES - 16);
	assert_int_equal(out[2] & 0x02, 0x02);
}

static void
test_reply_fits_a_small_caller_buffer_or_is_refused(void **state)
{
	const uint8_t addrs[3][4] = { { 1, 1, 1, 1 }, { 2, 2, 2, 2 }, { 3, 3, 3, 3 } };
	struct dns_query q;
	size_t len = 0;

	(void)state;
	make_query("example.com", DNS_TYPE_A);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_error(dns_build_a(&q, addrs, 3, 60, out, 12 + 17 + 16, &len), DNS_ERR_NONE);
	assert_int_equal(len, 12 + 17 + 16);
	assert_int_equal(out[7], 1);
	assert_int_equal(out[2] & 0x02, 0x02);
	assert_error(dns_build_a(&q, addrs, 3, 60, out, 12 + 16, &len), DNS_ERR_NO_SPACE);
	assert_error(dns_build_rcode(&q, DNS_RCODE_NXDOMAIN, out, 0, &len), DNS_ERR_NO_SPACE);
}

static void
test_all_addresses_fit_without_tc(void **state)
{
	const uint8_t addrs[3][4] = { { 1, 1, 1, 1 }, { 2, 2, 2, 2 }, { 3, 3, 3, 3 } };
	struct dns_query q;
	size_t len;

	(void)state;
	make_query("example.com", DNS_TYPE_A);
	assert_error(parse(&q), DNS_ERR_NONE);
	assert_error(dns_build_a(&q, addrs, 3, 60, out, sizeof(out), &len), DNS_ERR_NONE);
	assert_int_equal(out[7], 3);
	assert_int_equal(out[2] & 0x02, 0);
	assert_memory_equal(out + len - 4, addrs[2], 4);
}

static void
test_every_error_has_its_own_text(void **state)
{
	(void)state;
	for (int a = DNS_ERR_NONE; a <= DNS_ERR_NO_SPACE; a++) {
		assert_string_not_equal(dns_strerror((enum dns_error)a), "unknown DNS error");
		for (int b = a + 1; b <= DNS_ERR_NO_SPACE; b++)
			assert_string_not_equal(dns_strerror((enum dns_error)a),
			    dns_strerror((enum dns_error)b));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_query_is_decoded),
		cmocka_unit_test(test_aaaa_and_txt_types_are_decoded),
		cmocka_unit_test(test_upper_case_name_is_lowered_but_echoed_as_sent),
		cmocka_unit_test(test_root_name_is_dot_and_not_a_hostname),
		cmocka_unit_test(test_dot_inside_label_is_escaped_and_not_a_hostname),
		cmocka_unit_test(test_nul_and_high_bytes_are_escaped),
		cmocka_unit_test(test_compression_pointer_to_itself_is_refused),
		cmocka_unit_test(test_compression_loop_through_earlier_label_is_refused),
		cmocka_unit_test(test_forward_pointer_is_refused),
		cmocka_unit_test(test_pointer_into_header_is_refused),
		cmocka_unit_test(test_backward_pointer_in_opt_name_is_followed),
		cmocka_unit_test(test_label_of_64_bytes_is_refused),
		cmocka_unit_test(test_name_of_255_bytes_is_accepted_and_256_refused),
		cmocka_unit_test(test_longest_escaped_name_fits_its_text),
		cmocka_unit_test(test_question_count_other_than_one_is_formerr),
		cmocka_unit_test(test_opcode_other_than_query_is_notimp),
		cmocka_unit_test(test_response_is_refused_and_never_answered),
		cmocka_unit_test(test_short_header_is_never_answered),
		cmocka_unit_test(test_class_other_than_in_is_refused),
		cmocka_unit_test(test_answer_or_authority_records_are_refused),
		cmocka_unit_test(test_edns_opt_record_is_tolerated),
		cmocka_unit_test(test_edns_options_are_checked_against_the_record),
		cmocka_unit_test(test_edns_version_other_than_zero_is_refused),
		cmocka_unit_test(test_additional_record_other_than_opt_is_refused),
		cmocka_unit_test(test_opt_with_a_name_is_refused),
		cmocka_unit_test(test_trailing_bytes_are_refused),
		cmocka_unit_test(test_truncated_question_is_refused),
		cmocka_unit_test(test_tcp_length_prefix_frames_one_message),
		cmocka_unit_test(test_tcp_length_below_a_header_is_refused),
		cmocka_unit_test(test_a_reply_is_byte_exact),
		cmocka_unit_test(test_nodata_reply_is_byte_exact),
		cmocka_unit_test(test_rcode_replies_are_byte_exact),
		cmocka_unit_test(test_reply_without_rd_clears_rd),
		cmocka_unit_test(test_formerr_for_unparsed_question_has_no_question),
		cmocka_unit_test(test_notimp_reply_echoes_the_opcode),
		cmocka_unit_test(test_edns_reply_ends_with_opt_record),
		cmocka_unit_test(test_udp_reply_never_exceeds_512_bytes_and_sets_tc),
		cmocka_unit_test(test_edns_reply_never_exceeds_1232_bytes),
		cmocka_unit_test(test_reply_fits_a_small_caller_buffer_or_is_refused),
		cmocka_unit_test(test_all_addresses_fit_without_tc),
		cmocka_unit_test(test_every_error_has_its_own_text),
	};

	return cmocka_run_group_tests_name("dns", tests, NULL, NULL);
}
