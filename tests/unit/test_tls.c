/* Unit tests for egress-proxy/tls: SNI extraction from ClientHellos built
 * here piece by piece (records, extensions, names), and one real hello. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "egress-proxy/tls.h"

#define TEST_EXTS_MAX_BYTES (80 * 1024)
#define TEST_SUITES_MAX 16
#define TEST_WIRE_MAX_BYTES (8 * TLS_INPUT_MAX_BYTES)
#define TEST_REAL_HELLO_MAX_BYTES 4096

#define EXT_SERVER_NAME 0x0000
#define EXT_SUPPORTED_GROUPS 0x000a
#define EXT_ALPN 0x0010
#define EXT_PADDING 0x0015
#define EXT_SUPPORTED_VERSIONS 0x002b
#define EXT_KEY_SHARE 0x0033
#define EXT_ECH 0xfe0d
#define GROUP_X25519 0x001d
#define GROUP_X25519MLKEM768 0x11ec
#define X25519MLKEM768_SHARE_BYTES 1216

/* The hello under construction: cipher suites and extensions; the fixed
 * fields (version 3.3, zero random, 32-byte session id, null compression)
 * are the same for every test. */
static struct {
	uint16_t suites[TEST_SUITES_MAX];
	size_t nsuites;
	uint8_t exts[TEST_EXTS_MAX_BYTES];
	size_t exts_len;
	bool no_ext_block;
	uint16_t version;
	size_t session_id_len;
} H;

static uint8_t msg[TLS_HELLO_MAX_BYTES * 2];
static uint8_t wire[TEST_WIRE_MAX_BYTES];

static size_t
put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return 2;
}

static void
hello_reset(void)
{
	memset(&H, 0, sizeof(H));
	H.suites[H.nsuites++] = 0x1301;
	H.suites[H.nsuites++] = 0x1302;
	H.suites[H.nsuites++] = 0xc02f;
	H.version = 0x0303;
	H.session_id_len = 32;
}

static void
hello_add_ext(uint16_t type, const void *data, size_t len)
{
	assert_true(H.exts_len + 4 + len <= sizeof(H.exts));
	H.exts_len += put16(H.exts + H.exts_len, type);
	H.exts_len += put16(H.exts + H.exts_len, len);
	if (len > 0)
		memcpy(H.exts + H.exts_len, data, len);
	H.exts_len += len;
}

/* Appends one server_name entry (type, name) to the list at LIST. */
static size_t
sni_entry(uint8_t *list, uint8_t type, const void *name, size_t len)
{
	list[0] = type;
	put16(list + 1, len);
	memcpy(list + 3, name, len);
	return 3 + len;
}

/* A server_name extension whose list holds LIST_LEN bytes of entries. */
static void
hello_add_sni_list(const uint8_t *list, size_t list_len)
{
	uint8_t ext[2 + 1024];

	put16(ext, list_len);
	if (list_len > 0)
		memcpy(ext + 2, list, list_len);
	hello_add_ext(EXT_SERVER_NAME, ext, 2 + list_len);
}

static void
hello_add_sni_bytes(const void *name, size_t len)
{
	uint8_t list[1024];

	hello_add_sni_list(list, sni_entry(list, 0, name, len));
}

static void
hello_add_sni(const char *name)
{
	hello_add_sni_bytes(name, strlen(name));
}

/* The handshake message for H into msg; returns its length. */
static size_t
hello_message(void)
{
	size_t n = 4, i;

	n += put16(msg + n, H.version);
	memset(msg + n, 0x5a, 32);
	n += 32;
	msg[n++] = (uint8_t)H.session_id_len;
	memset(msg + n, 0x11, H.session_id_len);
	n += H.session_id_len;
	n += put16(msg + n, 2 * H.nsuites);
	for (i = 0; i < H.nsuites; i++)
		n += put16(msg + n, H.suites[i]);
	msg[n++] = 1;
	msg[n++] = 0;
	if (!H.no_ext_block) {
		n += put16(msg + n, H.exts_len);
		memcpy(msg + n, H.exts, H.exts_len);
		n += H.exts_len;
	}
	msg[0] = 1;
	msg[1] = (uint8_t)((n - 4) >> 16);
	msg[2] = (uint8_t)((n - 4) >> 8);
	msg[3] = (uint8_t)(n - 4);
	return n;
}

/* Wraps LEN message bytes in handshake records of PER_RECORD bytes each. */
static size_t
records(const uint8_t *m, size_t len, size_t per_record)
{
	size_t n = 0, off, chunk;

	for (off = 0; off < len; off += chunk) {
		chunk = len - off < per_record ? len - off : per_record;
		assert_true(n + 5 + chunk <= sizeof(wire));
		wire[n++] = 22;
		wire[n++] = 3;
		wire[n++] = 1;
		n += put16(wire + n, chunk);
		memcpy(wire + n, m + off, chunk);
		n += chunk;
	}
	return n;
}

/* H as the client would send it, in records of PER_RECORD bytes, into wire. */
static size_t
hello_wire(size_t per_record)
{
	return records(msg, hello_message(), per_record);
}

static enum tls_status
parse_wire(size_t len, struct tls_hello_info *info)
{
	return tls_parse_hello(wire, len, info);
}

/* Feeds wire[0..len) to a fresh reader in segments of SEGMENT bytes;
 * every segment but the last must leave it needing more. */
static enum tls_status
feed_segments(size_t len, size_t segment, struct tls_hello_info *info)
{
	struct tls_reader *r = tls_reader_new();
	enum tls_status st = TLS_NEED_MORE;
	size_t off, n;

	assert_non_null(r);
	for (off = 0; off < len; off += n) {
		assert_int_equal(st, TLS_NEED_MORE);
		n = len - off < segment ? len - off : segment;
		st = tls_reader_feed(r, wire + off, n, info);
	}
	tls_reader_free(r);
	return st;
}

static void
assert_found(enum tls_status st, const struct tls_hello_info *info, const char *name)
{
	assert_string_equal(tls_status_name(st), tls_status_name(TLS_FOUND));
	assert_int_equal(info->error, TLS_ERR_NONE);
	assert_string_equal(info->name, name);
	assert_int_equal(info->name_len, strlen(name));
}

static void
assert_refused(enum tls_status st, const struct tls_hello_info *info, enum tls_error e)
{
	assert_string_equal(tls_status_name(st), tls_status_name(TLS_ERROR));
	assert_string_equal(tls_strerror(info->error), tls_strerror(e));
	assert_int_equal(info->name_len, 0);
}

/* Parses a hello carrying the one SNI extension NAME (raw bytes). */
static enum tls_status
parse_sni_bytes(const void *name, size_t len, struct tls_hello_info *info)
{
	hello_reset();
	hello_add_sni_bytes(name, len);
	return parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), info);
}

static enum tls_status
parse_sni(const char *name, struct tls_hello_info *info)
{
	return parse_sni_bytes(name, strlen(name), info);
}

static void
test_plain_sni_is_found(void **state)
{
	struct tls_hello_info info;

	(void)state;
	assert_found(parse_sni("api.example.com", &info), &info, "api.example.com");
	assert_false(info.ech_present);
}

static void
test_real_captured_hello_is_found(void **state)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	uint8_t buf[TEST_REAL_HELLO_MAX_BYTES];
	struct tls_hello_info info;
	size_t len;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/clienthello/real-python-openssl3.bin",
	    top != NULL ? top : ".");
	f = fopen(path, "rb");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_true(len > 200);
	assert_found(tls_parse_hello(buf, len, &info), &info, "real.example.com");
	assert_int_equal(tls_parse_hello(buf, len - 1, &info), TLS_NEED_MORE);
}

static void
test_hello_split_one_byte_per_record_is_found(void **state)
{
	struct tls_hello_info info;

	(void)state;
	hello_reset();
	hello_add_sni("one.byte.example");
	assert_found(parse_wire(hello_wire(1), &info), &info, "one.byte.example");
}

static void
test_every_prefix_of_a_hello_needs_more(void **state)
{
	struct tls_hello_info info;
	size_t len, i;

	(void)state;
	hello_reset();
	hello_add_sni("prefix.example");
	len = hello_wire(7);
	for (i = 0; i < len; i++)
		assert_int_equal(parse_wire(i, &info), TLS_NEED_MORE);
	assert_found(parse_wire(len, &info), &info, "prefix.example");
}

static void
test_hello_fed_one_byte_per_segment_is_found(void **state)
{
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	hello_add_sni("segments.example");
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	assert_found(feed_segments(len, 1, &info), &info, "segments.example");
}

static void
test_hello_split_mid_record_across_segments_is_found(void **state)
{
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	hello_add_sni("mid.record.example");
	len = hello_wire(13);
	assert_found(feed_segments(len, 29, &info), &info, "mid.record.example");
	assert_found(feed_segments(len, 3, &info), &info, "mid.record.example");
}

/* A Chrome-like hello: X25519MLKEM768 and X25519 key shares, ~1,800 bytes. */
static void
test_post_quantum_sized_hello_is_found(void **state)
{
	uint8_t ks[2 + 4 + X25519MLKEM768_SHARE_BYTES + 4 + 32];
	uint8_t groups[] = { 0, 4, 0x11, 0xec, 0x00, 0x1d };
	uint8_t pad[512];
	struct tls_hello_info info;
	size_t n = 2, len;

	(void)state;
	memset(ks, 0x42, sizeof(ks));
	put16(ks, sizeof(ks) - 2);
	n += put16(ks + n, GROUP_X25519MLKEM768);
	n += put16(ks + n, X25519MLKEM768_SHARE_BYTES) + X25519MLKEM768_SHARE_BYTES;
	n += put16(ks + n, GROUP_X25519);
	put16(ks + n, 32);
	memset(pad, 0, sizeof(pad));
	hello_reset();
	hello_add_sni("pq.example");
	hello_add_ext(EXT_SUPPORTED_GROUPS, groups, sizeof(groups));
	hello_add_ext(EXT_KEY_SHARE, ks, sizeof(ks));
	hello_add_ext(EXT_PADDING, pad, sizeof(pad));
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	assert_true(len > 1800);
	assert_found(parse_wire(len, &info), &info, "pq.example");
	assert_found(feed_segments(len, 1448, &info), &info, "pq.example");
}

static void
test_hello_over_16k_split_across_records_is_found(void **state)
{
	static uint8_t pad[20000];
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	hello_add_ext(EXT_PADDING, pad, sizeof(pad));
	hello_add_sni("big.example");
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	assert_true(len > TLS_RECORD_PAYLOAD_MAX_BYTES + 5);
	assert_found(parse_wire(len, &info), &info, "big.example");
	assert_found(feed_segments(len, 1000, &info), &info, "big.example");
}

static void
test_hello_at_the_size_cap_is_found(void **state)
{
	static uint8_t pad[TLS_HELLO_MAX_BYTES];
	struct tls_hello_info info;
	size_t len, padlen;

	(void)state;
	hello_reset();
	hello_add_sni("cap.example");
	/* The body so far is fixed fields + 2-byte block length + exts. */
	padlen = TLS_HELLO_MAX_BYTES - hello_message() - 4;
	hello_add_ext(EXT_PADDING, pad, padlen);
	assert_int_equal(hello_message(), TLS_HELLO_MAX_BYTES);
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	assert_found(parse_wire(len, &info), &info, "cap.example");
}

static void
test_hello_over_the_size_cap_is_refused(void **state)
{
	static uint8_t pad[TLS_HELLO_MAX_BYTES];
	struct tls_hello_info info;

	(void)state;
	hello_reset();
	hello_add_sni("cap.example");
	hello_add_ext(EXT_PADDING, pad, TLS_HELLO_MAX_BYTES - hello_message() - 3);
	assert_int_equal(hello_message(), TLS_HELLO_MAX_BYTES + 1);
	hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	/* Refused from the handshake header alone, before the body arrives. */
	assert_int_equal(parse_wire(5 + 3, &info), TLS_NEED_MORE);
	assert_refused(parse_wire(5 + 4, &info), &info, TLS_ERR_HELLO_TOO_LARGE);
}

static void
test_too_many_raw_bytes_without_a_complete_hello_are_refused(void **state)
{
	static uint8_t pad[30000];
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	hello_add_sni("slow.example");
	hello_add_ext(EXT_PADDING, pad, sizeof(pad));
	len = hello_wire(1);
	assert_true(len > TLS_INPUT_MAX_BYTES);
	assert_int_equal(parse_wire(TLS_INPUT_MAX_BYTES - 1, &info), TLS_NEED_MORE);
	assert_refused(parse_wire(len, &info), &info, TLS_ERR_INPUT_TOO_LARGE);
	assert_refused(feed_segments(TLS_INPUT_MAX_BYTES, 4096, &info), &info,
	    TLS_ERR_INPUT_TOO_LARGE);
}

static void
test_grease_everywhere_is_skipped(void **state)
{
	uint8_t groups[] = { 0, 6, 0x3a, 0x3a, 0x00, 0x1d, 0x00, 0x17 };
	uint8_t versions[] = { 4, 0x8a, 0x8a, 0x03, 0x04 };
	uint8_t ks[] = { 0, 5, 0x3a, 0x3a, 0, 1, 0 };
	struct tls_hello_info info;

	(void)state;
	hello_reset();
	H.suites[H.nsuites++] = 0x0a0a;
	H.suites[0] = 0xfafa;
	hello_add_ext(0x1a1a, NULL, 0);
	hello_add_sni("grease.example");
	hello_add_ext(EXT_SUPPORTED_GROUPS, groups, sizeof(groups));
	hello_add_ext(EXT_SUPPORTED_VERSIONS, versions, sizeof(versions));
	hello_add_ext(EXT_KEY_SHARE, ks, sizeof(ks));
	hello_add_ext(0xdada, "\0", 1);
	assert_found(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), &info,
	    "grease.example");
}

static void
test_hello_without_sni_reports_no_sni(void **state)
{
	uint8_t alpn[] = { 0, 3, 2, 'h', '2' };
	struct tls_hello_info info;

	(void)state;
	hello_reset();
	hello_add_ext(EXT_ALPN, alpn, sizeof(alpn));
	assert_int_equal(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), TLS_NO_SNI);
	assert_int_equal(info.error, TLS_ERR_NONE);
	assert_int_equal(info.name_len, 0);
}

static void
test_hello_without_extension_block_reports_no_sni(void **state)
{
	struct tls_hello_info info;

	(void)state;
	hello_reset();
	H.no_ext_block = true;
	assert_int_equal(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), TLS_NO_SNI);
}

static void
test_two_server_name_extensions_are_refused(void **state)
{
	struct tls_hello_info info;

	(void)state;
	hello_reset();
	hello_add_sni("allowed.example");
	hello_add_sni("evil.example");
	assert_refused(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), &info,
	    TLS_ERR_DUPLICATE_EXTENSION);
}

static void
test_duplicate_extension_of_any_type_is_refused(void **state)
{
	struct tls_hello_info info;

	(void)state;
	hello_reset();
	hello_add_ext(EXT_ALPN, "\0\0", 2);
	hello_add_sni("dup.example");
	hello_add_ext(EXT_ALPN, "\0\0", 2);
	assert_refused(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), &info,
	    TLS_ERR_DUPLICATE_EXTENSION);
}

static void
test_two_names_in_one_list_are_refused(void **state)
{
	uint8_t list[256];
	struct tls_hello_info info;
	size_t n;

	(void)state;
	n = sni_entry(list, 0, "allowed.example", 15);
	n += sni_entry(list + n, 0, "evil.example", 12);
	hello_reset();
	hello_add_sni_list(list, n);
	assert_refused(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), &info,
	    TLS_ERR_SNI_TWO_NAMES);
}

static void
test_name_type_other_than_host_name_is_refused(void **state)
{
	uint8_t list[64];
	struct tls_hello_info info;

	(void)state;
	hello_reset();
	hello_add_sni_list(list, sni_entry(list, 1, "x.example", 9));
	assert_refused(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), &info,
	    TLS_ERR_SNI_NAME_TYPE);
}

static void
test_empty_server_name_list_is_refused(void **state)
{
	struct tls_hello_info info;

	(void)state;
	hello_reset();
	hello_add_sni_list(NULL, 0);
	assert_refused(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), &info,
	    TLS_ERR_SNI_MALFORMED);
	hello_reset();
	hello_add_ext(EXT_SERVER_NAME, NULL, 0);
	assert_refused(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), &info,
	    TLS_ERR_SNI_MALFORMED);
}

static void
test_server_name_entry_past_its_list_is_refused(void **state)
{
	uint8_t list[] = { 0, 0, 20, 'a', '.', 'b' };
	struct tls_hello_info info;

	(void)state;
	hello_reset();
	hello_add_sni_list(list, sizeof(list));
	assert_refused(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), &info,
	    TLS_ERR_SNI_MALFORMED);
}

static void
test_empty_name_is_refused(void **state)
{
	struct tls_hello_info info;

	(void)state;
	assert_refused(parse_sni("", &info), &info, TLS_ERR_SNI_EMPTY);
	assert_refused(parse_sni(".", &info), &info, TLS_ERR_SNI_EMPTY);
}

static void
test_nul_in_name_is_refused(void **state)
{
	struct tls_hello_info info;

	(void)state;
	assert_refused(parse_sni_bytes("allowed.example\0.evil.com", 25, &info), &info,
	    TLS_ERR_SNI_NUL);
	assert_refused(parse_sni_bytes("a\0", 2, &info), &info, TLS_ERR_SNI_NUL);
}

static void
test_byte_outside_ldh_in_name_is_refused(void **state)
{
	const char *bad[] = { "a b.example", "a/b.example", "a\xc3\xa9.example", "a%2e.example",
	    "a:443.example", "a\\.example", "*.example" };
	struct tls_hello_info info;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_refused(parse_sni(bad[i], &info), &info, TLS_ERR_SNI_BAD_BYTE);
}

static void
test_underscore_and_hyphen_are_accepted(void **state)
{
	struct tls_hello_info info;

	(void)state;
	assert_found(parse_sni("_srv.my-host.example", &info), &info, "_srv.my-host.example");
}

/* 253 bytes: four labels of 63, 63, 63, 61 with dots. */
static void
make_long_name(char *name, size_t len)
{
	memset(name, 'a', len);
	name[63] = name[127] = name[191] = '.';
	name[len] = '\0';
}

static void
test_name_of_253_bytes_is_found_and_254_refused(void **state)
{
	char name[300], dotted[300];
	struct tls_hello_info info;

	(void)state;
	make_long_name(name, 253);
	assert_found(parse_sni(name, &info), &info, name);
	snprintf(dotted, sizeof(dotted), "%s.", name);
	assert_found(parse_sni(dotted, &info), &info, name);
	make_long_name(name, 254);
	assert_refused(parse_sni(name, &info), &info, TLS_ERR_SNI_TOO_LONG);
}

static void
test_label_over_63_bytes_is_refused(void **state)
{
	char name[80];
	struct tls_hello_info info;

	(void)state;
	memset(name, 'b', 64);
	strcpy(name + 64, ".example");
	assert_refused(parse_sni(name, &info), &info, TLS_ERR_SNI_BAD_LABEL);
	name[1] = '.';
	assert_found(parse_sni(name, &info), &info, name);
}

static void
test_empty_label_is_refused(void **state)
{
	struct tls_hello_info info;

	(void)state;
	assert_refused(parse_sni("a..example", &info), &info, TLS_ERR_SNI_BAD_LABEL);
	assert_refused(parse_sni(".example", &info), &info, TLS_ERR_SNI_BAD_LABEL);
	assert_refused(parse_sni("example..", &info), &info, TLS_ERR_SNI_BAD_LABEL);
}

static void
test_ip_literal_is_refused(void **state)
{
	const char *ips[] = { "192.0.2.1", "10.0.0.1.", "127.1", "2130706433", "0x7f.1",
	    "1.2.3.0x4", "::1", "[2001:db8::1]", "::ffff:10.0.0.1" };
	struct tls_hello_info info;

	(void)state;
	for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
		assert_refused(parse_sni(ips[i], &info), &info, TLS_ERR_SNI_IP_LITERAL);
}

static void
test_numeric_labels_before_a_real_tld_are_accepted(void **state)
{
	struct tls_hello_info info;

	(void)state;
	assert_found(parse_sni("1.2.3.4.nip.io", &info), &info, "1.2.3.4.nip.io");
	assert_found(parse_sni("0xdead.example", &info), &info, "0xdead.example");
}

static void
test_upper_case_and_trailing_dot_are_normalized(void **state)
{
	struct tls_hello_info info;

	(void)state;
	assert_found(parse_sni("API.Example.COM.", &info), &info, "api.example.com");
}

static void
test_ech_extension_sets_flag_and_outer_sni_is_used(void **state)
{
	uint8_t ech[40];
	struct tls_hello_info info;

	(void)state;
	memset(ech, 0x33, sizeof(ech));
	ech[0] = 0;	/* outer */
	hello_reset();
	hello_add_sni("public.example");
	hello_add_ext(EXT_ECH, ech, sizeof(ech));
	assert_found(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), &info,
	    "public.example");
	assert_true(info.ech_present);
}

static void
test_sslv2_hello_is_refused(void **state)
{
	const uint8_t v2[] = { 0x80, 0x2e, 0x01, 0x03, 0x01, 0x00, 0x15, 0x00, 0x00, 0x00, 0x10 };
	struct tls_hello_info info;

	(void)state;
	assert_refused(tls_parse_hello(v2, sizeof(v2), &info), &info, TLS_ERR_SSLV2_HELLO);
}

static void
test_http_request_is_not_tls(void **state)
{
	const char *req = "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n";
	struct tls_hello_info info;
	enum tls_error e;

	(void)state;
	assert_int_equal(tls_parse_hello((const uint8_t *)req, strlen(req), &info), TLS_NOT_TLS);
	assert_int_equal(tls_parse_hello((const uint8_t *)"C", 1, &info), TLS_NOT_TLS);
	assert_int_equal(tls_classify_first_byte('P', &e), TLS_NOT_TLS);
	assert_int_equal(tls_classify_first_byte(0x16, &e), TLS_NEED_MORE);
}

static void
test_first_record_not_handshake_is_refused(void **state)
{
	const uint8_t appdata[] = { 0x17, 0x03, 0x03, 0x00, 0x01, 0x00 };
	struct tls_hello_info info;

	(void)state;
	assert_refused(tls_parse_hello(appdata, sizeof(appdata), &info), &info,
	    TLS_ERR_RECORD_TYPE);
}

static void
test_record_interleaved_in_hello_is_refused(void **state)
{
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	hello_add_sni("ccs.example");
	len = hello_wire(20);
	wire[25] = 20;	/* the second record becomes change_cipher_spec */
	assert_refused(parse_wire(len, &info), &info, TLS_ERR_RECORD_TYPE);
}

static void
test_implausible_record_version_is_refused(void **state)
{
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	hello_add_sni("v.example");
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	wire[2] = 0x00;	/* SSL 3.0 */
	assert_refused(parse_wire(len, &info), &info, TLS_ERR_RECORD_VERSION);
	wire[2] = 0x05;
	assert_refused(parse_wire(len, &info), &info, TLS_ERR_RECORD_VERSION);
	wire[1] = 0x02;
	wire[2] = 0x01;
	assert_refused(parse_wire(len, &info), &info, TLS_ERR_RECORD_VERSION);
}

static void
test_empty_or_oversized_record_is_refused(void **state)
{
	uint8_t empty[] = { 22, 3, 1, 0, 0 };
	uint8_t big[] = { 22, 3, 1, 0x40, 0x01 };
	struct tls_hello_info info;

	(void)state;
	assert_refused(tls_parse_hello(empty, sizeof(empty), &info), &info, TLS_ERR_RECORD_LENGTH);
	assert_refused(tls_parse_hello(big, sizeof(big), &info), &info, TLS_ERR_RECORD_LENGTH);
}

static void
test_handshake_other_than_client_hello_is_refused(void **state)
{
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	wire[5] = 2;	/* ServerHello */
	assert_refused(parse_wire(len, &info), &info, TLS_ERR_HANDSHAKE_TYPE);
}

static void
test_implausible_hello_version_is_refused(void **state)
{
	struct tls_hello_info info;

	(void)state;
	hello_reset();
	H.version = 0x0300;
	hello_add_sni("v.example");
	assert_refused(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), &info,
	    TLS_ERR_HELLO_VERSION);
}

static void
test_invalid_fixed_fields_are_refused(void **state)
{
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	H.session_id_len = 33;
	assert_refused(parse_wire(hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES), &info), &info,
	    TLS_ERR_FIELD_INVALID);
	hello_reset();
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	wire[5 + 4 + 34 + 33 + 1] = 5;	/* cipher suite list length odd */
	assert_refused(parse_wire(len, &info), &info, TLS_ERR_FIELD_INVALID);
}

static void
test_hello_shorter_than_its_fixed_fields_is_refused(void **state)
{
	uint8_t tiny[] = { 22, 3, 1, 0, 8, 1, 0, 0, 4, 3, 3, 0, 0 };
	struct tls_hello_info info;

	(void)state;
	assert_refused(tls_parse_hello(tiny, sizeof(tiny), &info), &info, TLS_ERR_LENGTH_OVERFLOW);
}

static void
test_extension_length_past_its_block_is_refused(void **state)
{
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	hello_add_ext(EXT_ALPN, "\0\0", 2);
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	wire[len - 3] = 3;	/* ALPN's length now runs one byte past the block */
	assert_refused(parse_wire(len, &info), &info, TLS_ERR_LENGTH_OVERFLOW);
}

static void
test_extension_block_length_past_the_hello_is_refused(void **state)
{
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	hello_add_sni("x.example");
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	put16(wire + len - H.exts_len - 2, H.exts_len + 1);
	assert_refused(parse_wire(len, &info), &info, TLS_ERR_LENGTH_OVERFLOW);
	put16(wire + len - H.exts_len - 2, 0xffff);
	assert_refused(parse_wire(len, &info), &info, TLS_ERR_LENGTH_OVERFLOW);
}

static void
test_bytes_after_the_extension_block_are_refused(void **state)
{
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	hello_add_sni("x.example");
	hello_add_ext(EXT_ALPN, "\0\0", 2);
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	put16(wire + len - H.exts_len - 2, H.exts_len - 6);
	assert_refused(parse_wire(len, &info), &info, TLS_ERR_TRAILING_BYTES);
}

static void
test_handshake_length_short_of_its_record_needs_more(void **state)
{
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	hello_add_sni("x.example");
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	/* Claims one byte more than the record brings: wait for it. */
	wire[8]++;
	assert_int_equal(parse_wire(len, &info), TLS_NEED_MORE);
}

static void
test_reader_keeps_its_final_answer(void **state)
{
	struct tls_reader *r = tls_reader_new();
	struct tls_hello_info info;
	size_t len;

	(void)state;
	hello_reset();
	hello_add_sni("final.example");
	len = hello_wire(TLS_RECORD_PAYLOAD_MAX_BYTES);
	assert_found(tls_reader_feed(r, wire, len, &info), &info, "final.example");
	assert_found(tls_reader_feed(r, (const uint8_t *)"junk", 4, &info), &info, "final.example");
	assert_found(tls_reader_feed(r, NULL, 0, &info), &info, "final.example");
	tls_reader_free(r);
	tls_reader_free(NULL);
}

static void
test_every_error_has_its_own_text(void **state)
{
	(void)state;
	for (int a = TLS_ERR_NONE; a <= TLS_ERR_NOMEM; a++) {
		assert_string_not_equal(tls_strerror((enum tls_error)a), "unknown TLS error");
		for (int b = a + 1; b <= TLS_ERR_NOMEM; b++)
			assert_string_not_equal(tls_strerror((enum tls_error)a),
			    tls_strerror((enum tls_error)b));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_sni_is_found),
		cmocka_unit_test(test_real_captured_hello_is_found),
		cmocka_unit_test(test_hello_split_one_byte_per_record_is_found),
		cmocka_unit_test(test_every_prefix_of_a_hello_needs_more),
		cmocka_unit_test(test_hello_fed_one_byte_per_segment_is_found),
		cmocka_unit_test(test_hello_split_mid_record_across_segments_is_found),
		cmocka_unit_test(test_post_quantum_sized_hello_is_found),
		cmocka_unit_test(test_hello_over_16k_split_across_records_is_found),
		cmocka_unit_test(test_hello_at_the_size_cap_is_found),
		cmocka_unit_test(test_hello_over_the_size_cap_is_refused),
		cmocka_unit_test(test_too_many_raw_bytes_without_a_complete_hello_are_refused),
		cmocka_unit_test(test_grease_everywhere_is_skipped),
		cmocka_unit_test(test_hello_without_sni_reports_no_sni),
		cmocka_unit_test(test_hello_without_extension_block_reports_no_sni),
		cmocka_unit_test(test_two_server_name_extensions_are_refused),
		cmocka_unit_test(test_duplicate_extension_of_any_type_is_refused),
		cmocka_unit_test(test_two_names_in_one_list_are_refused),
		cmocka_unit_test(test_name_type_other_than_host_name_is_refused),
		cmocka_unit_test(test_empty_server_name_list_is_refused),
		cmocka_unit_test(test_server_name_entry_past_its_list_is_refused),
		cmocka_unit_test(test_empty_name_is_refused),
		cmocka_unit_test(test_nul_in_name_is_refused),
		cmocka_unit_test(test_byte_outside_ldh_in_name_is_refused),
		cmocka_unit_test(test_underscore_and_hyphen_are_accepted),
		cmocka_unit_test(test_name_of_253_bytes_is_found_and_254_refused),
		cmocka_unit_test(test_label_over_63_bytes_is_refused),
		cmocka_unit_test(test_empty_label_is_refused),
		cmocka_unit_test(test_ip_literal_is_refused),
		cmocka_unit_test(test_numeric_labels_before_a_real_tld_are_accepted),
		cmocka_unit_test(test_upper_case_and_trailing_dot_are_normalized),
		cmocka_unit_test(test_ech_extension_sets_flag_and_outer_sni_is_used),
		cmocka_unit_test(test_sslv2_hello_is_refused),
		cmocka_unit_test(test_http_request_is_not_tls),
		cmocka_unit_test(test_first_record_not_handshake_is_refused),
		cmocka_unit_test(test_record_interleaved_in_hello_is_refused),
		cmocka_unit_test(test_implausible_record_version_is_refused),
		cmocka_unit_test(test_empty_or_oversized_record_is_refused),
		cmocka_unit_test(test_handshake_other_than_client_hello_is_refused),
		cmocka_unit_test(test_implausible_hello_version_is_refused),
		cmocka_unit_test(test_invalid_fixed_fields_are_refused),
		cmocka_unit_test(test_hello_shorter_than_its_fixed_fields_is_refused),
		cmocka_unit_test(test_extension_length_past_its_block_is_refused),
		cmocka_unit_test(test_extension_block_length_past_the_hello_is_refused),
		cmocka_unit_test(test_bytes_after_the_extension_block_are_refused),
		cmocka_unit_test(test_handshake_length_short_of_its_record_needs_more),
		cmocka_unit_test(test_reader_keeps_its_final_answer),
		cmocka_unit_test(test_every_error_has_its_own_text),
	};

	return cmocka_run_group_tests_name("tls", tests, NULL, NULL);
}
