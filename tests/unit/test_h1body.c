/* Unit tests for egress-proxy/h1body: response framing (length, chunked,
 * to the close; the statuses and requests without a body; Connection) and
 * the chunked reader (whole or a byte at a time, trailers, where it ends,
 * and every broken framing refused). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "egress-proxy/h1body.h"

static struct h1_response resp;

static enum h1_status
parse(const char *head, bool head_request)
{
	return h1_response_parse((const uint8_t *)head, strlen(head), head_request, &resp);
}

static void
test_a_length_body(void **state)
{
	static const char r[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: x\r\n\r\nhello";

	(void)state;
	assert_int_equal(parse(r, false), H1_OK);
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.body, H1_BODY_LENGTH);
	assert_int_equal(resp.length, 5);
	assert_int_equal(resp.head_len, strlen(r) - 5);
	assert_false(resp.close);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false), H1_OK);
	assert_int_equal(resp.body, H1_BODY_NONE);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n",
	    false), H1_OK);
}

static void
test_chunked_and_until_close(void **state)
{
	(void)state;
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false), H1_OK);
	assert_int_equal(resp.body, H1_BODY_CHUNKED);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", false),
	    H1_OK);
	assert_int_equal(resp.body, H1_BODY_CHUNKED);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false), H1_OK);
	assert_int_equal(resp.body, H1_BODY_UNTIL_CLOSE);
	assert_true(resp.close);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\n\r\n", false), H1_OK);
	assert_int_equal(resp.body, H1_BODY_UNTIL_CLOSE);
	assert_true(resp.close);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: notchunked\r\n\r\n", false), H1_OK);
	assert_int_equal(resp.body, H1_BODY_UNTIL_CLOSE);
}

static void
test_no_body_for_head_and_some_statuses(void **state)
{
	static const unsigned none[] = { 204, 304, 100, 103, 101 };
	char head[128];

	(void)state;
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 900\r\n\r\n", true), H1_OK);
	assert_int_equal(resp.body, H1_BODY_NONE);
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		snprintf(head, sizeof(head), "HTTP/1.1 %u X\r\nContent-Length: 9\r\n\r\n", none[i]);
		assert_int_equal(parse(head, false), H1_OK);
		assert_int_equal(resp.body, H1_BODY_NONE);
		assert_int_equal(resp.interim, none[i] < 200 && none[i] != 101);
	}
}

static void
test_connection_close_and_http_1_0(void **state)
{
	(void)state;
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\n"
	    "Content-Length: 1\r\n\r\n", false), H1_OK);
	assert_true(resp.close);
	assert_int_equal(parse("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", false), H1_OK);
	assert_true(resp.close);
	assert_int_equal(parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n",
	    false), H1_OK);
	assert_false(resp.close);
	assert_int_equal(parse("HTTP/1.1 200\r\nContent-Length: 1\r\n\r\n", false), H1_OK);
	assert_int_equal(resp.status, 200);
}

static void
test_conflicting_framing_is_refused(void **state)
{
	static const char *const bad[] = {
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999999\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], false) != H1_ERR_FRAMING)
			fail_msg("framing accepted: %s", bad[i]);
}

static void
test_malformed_heads_are_refused(void **state)
{
	static const char *const bad[] = {
		"HTTP/1.1 200 OK\nContent-Length: 1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n",
		"HTTP/2 200 OK\r\n\r\n",
		"HTTP/1.1 200OK\r\n\r\n",
		"HTTP/1.1 099 X\r\n\r\n",
		"HTTP/1.1 200 OK\r\nNo colon\r\n\r\n",
		"HTTP/1.1 200 OK\r\nBad name: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX : y\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: \x01\r\n\r\n",
		"http/1.1 200 OK\r\n\r\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], false) != H1_ERR_MALFORMED)
			fail_msg("malformed head accepted: %s", bad[i]);
}

static void
test_partial_and_too_large_heads(void **state)
{
	size_t n = H1_RESPONSE_HEAD_MAX_BYTES + 16;
	char *big = malloc(n + 1);

	(void)state;
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Len", false), H1_NEED_MORE);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\n\r", false), H1_NEED_MORE);
	assert_int_equal(parse("", false), H1_NEED_MORE);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	memset(big + 20, 'a', n - 20);
	big[n] = '\0';
	assert_int_equal(h1_response_parse((uint8_t *)big, n, false, &resp), H1_ERR_TOO_LARGE);
	free(big);
}

/* Feeds TEXT whole, then a byte at a time: both must agree on BODY, the
 * bytes that belong to the body, and on DONE. */
static void
assert_chunked(const char *text, ssize_t body, bool done)
{
	struct h1_chunked c;
	size_t len = strlen(text);
	ssize_t total = 0, n = 0;

	h1_chunked_init(&c);
	assert_int_equal(h1_chunked_feed(&c, (const uint8_t *)text, len), body);
	assert_int_equal(h1_chunked_done(&c), done);
	h1_chunked_init(&c);
	for (size_t i = 0; i < len && !h1_chunked_done(&c); i++) {
		if ((n = h1_chunked_feed(&c, (const uint8_t *)text + i, 1)) == -1)
			break;
		total += n;
	}
	assert_int_equal(n == -1 ? -1 : total, body);
	assert_int_equal(h1_chunked_done(&c), done);
}

static void
test_chunked_bodies_end_where_they_end(void **state)
{
	static const char one[] = "5\r\nhello\r\n0\r\n\r\n";
	static const char ext[] = "5;name=v\r\nhello\r\nA\r\n0123456789\r\n0;x\r\n\r\n";
	static const char trailers[] = "1\r\nx\r\n0\r\nX-Sum: 1\r\nY: 2\r\n\r\n";
	char next[64];

	(void)state;
	assert_chunked(one, (ssize_t)strlen(one), true);
	assert_chunked(ext, (ssize_t)strlen(ext), true);
	assert_chunked(trailers, (ssize_t)strlen(trailers), true);
	snprintf(next, sizeof(next), "%sGET / HTTP/1.1\r\n", one);
	assert_chunked(next, (ssize_t)strlen(one), true);
	assert_chunked("5\r\nhel", 6, false);
}

static void
test_broken_chunked_framing_is_refused(void **state)
{
	static const char *const bad[] = {
		"5\nhello\r\n0\r\n\r\n", "g\r\n", "\r\n", "5\r\nhelloX\r\n", "5\r\nhello\rX",
		"5 \r\nhello\r\n", "0\r\n X: y\r\n\r\n", "0\r\nX: y\n\r\n", "0\r\n\rX",
		"1234567890abcdef0\r\n", "-5\r\n", "5;\x01\r\n",
	};
	char ext[H1_CHUNK_LINE_MAX_BYTES + 16];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_chunked(bad[i], -1, false);
	memset(ext, 'e', sizeof(ext) - 1);
	ext[0] = '1';
	ext[1] = ';';
	ext[sizeof(ext) - 1] = '\0';
	assert_chunked(ext, -1, false);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_length_body),
		cmocka_unit_test(test_chunked_and_until_close),
		cmocka_unit_test(test_no_body_for_head_and_some_statuses),
		cmocka_unit_test(test_connection_close_and_http_1_0),
		cmocka_unit_test(test_conflicting_framing_is_refused),
		cmocka_unit_test(test_malformed_heads_are_refused),
		cmocka_unit_test(test_partial_and_too_large_heads),
		cmocka_unit_test(test_chunked_bodies_end_where_they_end),
		cmocka_unit_test(test_broken_chunked_framing_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
