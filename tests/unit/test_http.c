/* Unit tests for egress-proxy/http: the proxy request head parser. */
#include "config.h"

#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "egress-proxy/addr.h"
#include "egress-proxy/http.h"

static struct http_request req;

static enum http_err
parse(const char *s)
{
	return http_parse((const uint8_t *)s, strlen(s), &req);
}

/* The bytes of span S of the last parsed string, as a fresh string. */
static char span_text[PROXY_HEADER_MAX_BYTES + 1];

static const char *
span(const char *s, struct http_span sp)
{
	memcpy(span_text, s + sp.off, sp.len);
	span_text[sp.len] = '\0';
	return span_text;
}

/* "CONNECT TARGET HTTP/1.1\r\n\r\n" parsed. */
static enum http_err
parse_connect(const char *target)
{
	char line[512];

	snprintf(line, sizeof(line), "CONNECT %s HTTP/1.1\r\n\r\n", target);
	return parse(line);
}

/* "GET TARGET HTTP/1.1\r\n\r\n" parsed. */
static enum http_err
parse_get(const char *target)
{
	char line[512];

	snprintf(line, sizeof(line), "GET %s HTTP/1.1\r\n\r\n", target);
	return parse(line);
}

/* A CONNECT with the header line HEADER (without CRLF). */
static enum http_err
parse_connect_header(const char *header)
{
	char text[1024];

	snprintf(text, sizeof(text), "CONNECT example.com:443 HTTP/1.1\r\n%s\r\n\r\n", header);
	return parse(text);
}

/* A GET http://example.com/ with the header lines HEADERS (each with CRLF). */
static enum http_err
parse_get_headers(const char *headers)
{
	char text[1024];

	snprintf(text, sizeof(text), "GET http://example.com/ HTTP/1.1\r\n%s\r\n", headers);
	return parse(text);
}

/* --- CONNECT: what is accepted --- */

static void
test_connect_name_is_parsed(void **state)
{
	const char *s = "CONNECT github.com:443 HTTP/1.1\r\nHost: github.com:443\r\n\r\n";

	assert_int_equal(parse(s), HTTP_OK);
	assert_int_equal(req.method, HTTP_METHOD_CONNECT);
	assert_int_equal(req.version_minor, 1);
	assert_int_equal(req.kind, HTTP_TARGET_NAME);
	assert_string_equal(req.host, "github.com");
	assert_int_equal(req.port, 443);
	assert_int_equal(req.head_len, strlen(s));
	assert_string_equal(span(s, req.target), "github.com:443");
	assert_int_equal(req.path.len, 0);
}

static void
test_connect_name_is_lowercased_and_loses_trailing_dot(void **state)
{
	assert_int_equal(parse_connect("GitHub.COM.:443"), HTTP_OK);
	assert_string_equal(req.host, "github.com");
}

static void
test_connect_http10_is_accepted(void **state)
{
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.0\r\n\r\n"), HTTP_OK);
	assert_int_equal(req.version_minor, 0);
}

static void
test_connect_ipv4_literal_is_an_address_target(void **state)
{
	const uint8_t want[4] = { 192, 0, 2, 1 };

	assert_int_equal(parse_connect("192.0.2.1:8443"), HTTP_OK);
	assert_int_equal(req.kind, HTTP_TARGET_IPV4);
	assert_string_equal(req.host, "192.0.2.1");
	assert_memory_equal(req.addr, want, 4);
	assert_int_equal(req.port, 8443);
}

static void
test_connect_ipv6_literal_is_an_address_target_in_canonical_text(void **state)
{
	uint8_t want[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

	assert_int_equal(parse_connect("[2001:DB8:0:0::1]:443"), HTTP_OK);
	assert_int_equal(req.kind, HTTP_TARGET_IPV6);
	assert_string_equal(req.host, "2001:db8::1");
	assert_memory_equal(req.addr, want, 16);
	assert_int_equal(req.port, 443);
}

static void
test_connect_v4_mapped_ipv6_is_judged_as_loopback(void **state)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };

	assert_int_equal(parse_connect("[::ffff:127.0.0.1]:443"), HTTP_OK);
	assert_int_equal(req.kind, HTTP_TARGET_IPV6);
	memcpy(sin6.sin6_addr.s6_addr, req.addr, 16);
	assert_int_equal(addr_classify((struct sockaddr *)&sin6), ADDR_CLASS_LOOPBACK);
}

static void
test_connect_port_1_and_65535_are_accepted(void **state)
{
	assert_int_equal(parse_connect("example.com:1"), HTTP_OK);
	assert_int_equal(req.port, 1);
	assert_int_equal(parse_connect("example.com:65535"), HTTP_OK);
	assert_int_equal(req.port, 65535);
}

static void
test_connect_host_header_without_port_is_accepted(void **state)
{
	assert_int_equal(parse_connect_header("Host: EXAMPLE.com"), HTTP_OK);
	assert_true(req.has_host_header);
}

static void
test_headers_are_recorded_with_trimmed_values(void **state)
{
	const char *s = "CONNECT example.com:443 HTTP/1.1\r\nUser-Agent:  curl/8 \t\r\n"
	    "X-Tab:\ta\tb\r\n\r\n";

	assert_int_equal(parse(s), HTTP_OK);
	assert_int_equal(req.nheaders, 2);
	assert_string_equal(span(s, req.headers[0].name), "User-Agent");
	assert_string_equal(span(s, req.headers[0].value), "curl/8");
	assert_string_equal(span(s, req.headers[1].value), "a\tb");
	assert_string_equal(span(s, req.fields), "User-Agent:  curl/8 \t\r\nX-Tab:\ta\tb\r\n");
}

static void
test_header_value_with_high_bytes_is_accepted(void **state)
{
	assert_int_equal(parse_connect_header("X-Name: caf\xc3\xa9"), HTTP_OK);
}

static void
test_empty_header_value_is_accepted(void **state)
{
	assert_int_equal(parse_connect_header("X-Empty:"), HTTP_OK);
	assert_int_equal(req.headers[0].value.len, 0);
}

/* --- CONNECT: the target's refusals --- */

static void
test_connect_userinfo_is_refused(void **state)
{
	assert_int_equal(parse_connect("allowed.com@evil.com:443"), HTTP_ERR_USERINFO);
}

static void
test_connect_percent_encoding_is_refused(void **state)
{
	assert_int_equal(parse_connect("ex%61mple.com:443"), HTTP_ERR_PERCENT);
}

static void
test_connect_ipv6_zone_id_is_refused(void **state)
{
	assert_int_equal(parse_connect("[fe80::1%25eth0]:443"), HTTP_ERR_ZONE_ID);
	assert_int_equal(parse_connect("[fe80::1%eth0]:443"), HTTP_ERR_ZONE_ID);
}

static void
test_connect_port_with_leading_zero_is_refused(void **state)
{
	assert_int_equal(parse_connect("example.com:0443"), HTTP_ERR_PORT);
}

static void
test_connect_port_0_is_refused(void **state)
{
	assert_int_equal(parse_connect("example.com:0"), HTTP_ERR_PORT);
}

static void
test_connect_port_65536_is_refused(void **state)
{
	assert_int_equal(parse_connect("example.com:65536"), HTTP_ERR_PORT);
	assert_int_equal(parse_connect("example.com:100000"), HTTP_ERR_PORT);
}

static void
test_connect_signed_port_is_refused(void **state)
{
	assert_int_equal(parse_connect("example.com:+443"), HTTP_ERR_PORT);
	assert_int_equal(parse_connect("example.com:-1"), HTTP_ERR_PORT);
}

static void
test_connect_empty_port_is_refused(void **state)
{
	assert_int_equal(parse_connect("example.com:"), HTTP_ERR_PORT);
}

static void
test_connect_missing_port_is_refused(void **state)
{
	assert_int_equal(parse_connect("example.com"), HTTP_ERR_PORT_MISSING);
	assert_int_equal(parse_connect("[2001:db8::1]"), HTTP_ERR_PORT_MISSING);
}

static void
test_connect_short_ipv4_127_1_is_refused(void **state)
{
	assert_int_equal(parse_connect("127.1:443"), HTTP_ERR_IP_NONCANONICAL);
}

static void
test_connect_decimal_ipv4_2130706433_is_refused(void **state)
{
	assert_int_equal(parse_connect("2130706433:443"), HTTP_ERR_IP_NONCANONICAL);
}

static void
test_connect_hex_ipv4_0x7f_0_0_1_is_refused(void **state)
{
	assert_int_equal(parse_connect("0x7f.0.0.1:443"), HTTP_ERR_IP_NONCANONICAL);
	assert_int_equal(parse_connect("0X7F.0.0.1:443"), HTTP_ERR_IP_NONCANONICAL);
}

static void
test_connect_octal_ipv4_0177_0_0_1_is_refused(void **state)
{
	assert_int_equal(parse_connect("0177.0.0.1:443"), HTTP_ERR_IP_NONCANONICAL);
}

static void
test_connect_ipv4_with_trailing_dot_is_refused(void **state)
{
	assert_int_equal(parse_connect("127.0.0.1.:443"), HTTP_ERR_IP_NONCANONICAL);
}

static void
test_connect_ipv4_part_over_255_is_refused(void **state)
{
	assert_int_equal(parse_connect("127.0.0.256:443"), HTTP_ERR_IP_NONCANONICAL);
}

static void
test_connect_unbracketed_ipv6_is_refused(void **state)
{
	assert_int_equal(parse_connect("::1:443"), HTTP_ERR_IPV6);
	assert_int_equal(parse_connect("2001:db8::1:443"), HTTP_ERR_IPV6);
}

static void
test_connect_bad_ipv6_literal_is_refused(void **state)
{
	assert_int_equal(parse_connect("[2001:db8::g]:443"), HTTP_ERR_IPV6);
	assert_int_equal(parse_connect("[::1:443"), HTTP_ERR_IPV6);
	assert_int_equal(parse_connect("[]:443"), HTTP_ERR_IPV6);
	assert_int_equal(parse_connect("[::1]443"), HTTP_ERR_IPV6);
}

static void
test_connect_bad_host_name_is_refused(void **state)
{
	assert_int_equal(parse_connect("exa_mple!.com:443"), HTTP_ERR_HOST);
	assert_int_equal(parse_connect("a..b:443"), HTTP_ERR_HOST);
	assert_int_equal(parse_connect(":443"), HTTP_ERR_HOST);
}

static void
test_connect_host_over_253_bytes_is_refused(void **state)
{
	char target[300];

	memset(target, 'a', sizeof(target));
	for (size_t i = 63; i < 260; i += 64)
		target[i] = '.';
	strcpy(target + 260, ":443");
	assert_int_equal(parse_connect(target), HTTP_ERR_HOST);
}

static void
test_connect_with_path_is_refused(void **state)
{
	assert_int_equal(parse_connect("example.com:443/path"), HTTP_ERR_TARGET_FORM);
}

static void
test_connect_with_scheme_is_refused(void **state)
{
	assert_int_equal(parse_connect("https://example.com:443"), HTTP_ERR_TARGET_FORM);
}

static void
test_connect_with_content_length_is_refused(void **state)
{
	assert_int_equal(parse_connect_header("Content-Length: 0"), HTTP_ERR_CONNECT_BODY);
}

static void
test_connect_with_transfer_encoding_is_refused(void **state)
{
	assert_int_equal(parse_connect_header("transfer-encoding: chunked"), HTTP_ERR_CONNECT_BODY);
}

static void
test_connect_host_header_naming_another_host_is_refused(void **state)
{
	assert_int_equal(parse_connect_header("Host: evil.com:443"), HTTP_ERR_HOST_HEADER);
}

static void
test_connect_host_header_naming_another_port_is_refused(void **state)
{
	assert_int_equal(parse_connect_header("Host: example.com:22"), HTTP_ERR_HOST_HEADER);
}

/* --- Line and byte strictness --- */

static void
test_bare_lf_ending_the_request_line_is_refused(void **state)
{
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.1\n\r\n"), HTTP_ERR_BARE_LF);
}

static void
test_bare_lf_ending_a_header_is_refused(void **state)
{
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\n\r\n"),
	    HTTP_ERR_BARE_LF);
}

static void
test_bare_lf_ending_the_head_is_refused(void **state)
{
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.1\r\n\n"), HTTP_ERR_BARE_LF);
}

static void
test_bare_cr_inside_a_header_is_refused(void **state)
{
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.1\r\nX-A: a\rb\r\n\r\n"),
	    HTTP_ERR_BARE_CR);
}

static void
test_cr_as_last_byte_needs_more(void **state)
{
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.1\r"), HTTP_NEED_MORE);
}

static void
test_nul_in_a_header_value_is_refused(void **state)
{
	const char s[] = "CONNECT example.com:443 HTTP/1.1\r\nX-A: a\0b\r\n\r\n";

	assert_int_equal(http_parse((const uint8_t *)s, sizeof(s) - 1, &req), HTTP_ERR_CONTROL_CHAR);
}

static void
test_nul_in_the_target_is_refused(void **state)
{
	const char s[] = "CONNECT example.com\0.evil:443 HTTP/1.1\r\n\r\n";

	assert_int_equal(http_parse((const uint8_t *)s, sizeof(s) - 1, &req), HTTP_ERR_CONTROL_CHAR);
}

static void
test_del_and_escape_are_refused(void **state)
{
	assert_int_equal(parse_connect_header("X-A: a\x7f"), HTTP_ERR_CONTROL_CHAR);
	assert_int_equal(parse_connect_header("X-A: \x1b[31m"), HTTP_ERR_CONTROL_CHAR);
}

static void
test_obs_fold_is_refused(void **state)
{
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n"),
	    HTTP_ERR_OBS_FOLD);
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n"),
	    HTTP_ERR_OBS_FOLD);
}

static void
test_header_without_colon_is_refused(void **state)
{
	assert_int_equal(parse_connect_header("X-A a"), HTTP_ERR_HEADER);
}

static void
test_space_before_header_colon_is_refused(void **state)
{
	assert_int_equal(parse_connect_header("Host : example.com"), HTTP_ERR_HEADER);
}

static void
test_empty_header_name_is_refused(void **state)
{
	assert_int_equal(parse_connect_header(": value"), HTTP_ERR_HEADER);
}

static void
test_leading_empty_line_is_refused(void **state)
{
	assert_int_equal(parse("\r\nCONNECT example.com:443 HTTP/1.1\r\n\r\n"), HTTP_ERR_REQUEST_LINE);
}

static void
test_double_space_in_request_line_is_refused(void **state)
{
	assert_int_equal(parse("CONNECT  example.com:443 HTTP/1.1\r\n\r\n"), HTTP_ERR_REQUEST_LINE);
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.1 \r\n\r\n"), HTTP_ERR_REQUEST_LINE);
}

static void
test_tab_as_request_line_separator_is_refused(void **state)
{
	assert_int_equal(parse("CONNECT\texample.com:443 HTTP/1.1\r\n\r\n"), HTTP_ERR_REQUEST_LINE);
}

static void
test_request_line_without_version_is_refused(void **state)
{
	assert_int_equal(parse("CONNECT example.com:443\r\n\r\n"), HTTP_ERR_REQUEST_LINE);
}

static void
test_http2_version_is_refused_with_505(void **state)
{
	assert_int_equal(parse("CONNECT example.com:443 HTTP/2.0\r\n\r\n"), HTTP_ERR_VERSION);
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.2\r\n\r\n"), HTTP_ERR_VERSION);
	assert_int_equal(http_err_status(HTTP_ERR_VERSION), 505);
}

static void
test_lower_case_version_is_refused(void **state)
{
	assert_int_equal(parse("CONNECT example.com:443 http/1.1\r\n\r\n"), HTTP_ERR_REQUEST_LINE);
}

static void
test_unknown_method_is_refused_with_405(void **state)
{
	assert_int_equal(parse("TRACE http://example.com/ HTTP/1.1\r\n\r\n"), HTTP_ERR_METHOD);
	assert_int_equal(http_err_status(HTTP_ERR_METHOD), 405);
}

static void
test_lower_case_connect_is_an_unknown_method(void **state)
{
	assert_int_equal(parse("connect example.com:443 HTTP/1.1\r\n\r\n"), HTTP_ERR_METHOD);
}

static void
test_every_listed_method_is_accepted_in_absolute_form(void **state)
{
	static const char *const methods[] = { "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS" };
	char line[128];

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		snprintf(line, sizeof(line), "%s http://example.com/ HTTP/1.1\r\n\r\n", methods[i]);
		assert_int_equal(parse(line), HTTP_OK);
		assert_string_equal(http_method_name(req.method), methods[i]);
	}
}

/* --- Limits --- */

/* Builds a CONNECT head of exactly TOTAL bytes in OUT (padding one header). */
static size_t
build_head_of(char *out, size_t total)
{
	const char *start = "CONNECT example.com:443 HTTP/1.1\r\nX-Pad: ";
	size_t n = strlen(start);

	memcpy(out, start, n);
	memset(out + n, 'p', total - n - 4);
	memcpy(out + total - 4, "\r\n\r\n", 4);
	return total;
}

static void
test_head_of_exactly_the_maximum_is_accepted(void **state)
{
	static char s[PROXY_HEADER_MAX_BYTES + 16];
	size_t n = build_head_of(s, PROXY_HEADER_MAX_BYTES);

	assert_int_equal(http_parse((uint8_t *)s, n, &req), HTTP_OK);
	assert_int_equal(req.head_len, PROXY_HEADER_MAX_BYTES);
}

static void
test_head_one_byte_over_the_maximum_is_refused_with_431(void **state)
{
	static char s[PROXY_HEADER_MAX_BYTES + 16];
	size_t n = build_head_of(s, PROXY_HEADER_MAX_BYTES + 1);

	assert_int_equal(http_parse((uint8_t *)s, n, &req), HTTP_ERR_TOO_LARGE);
	assert_int_equal(http_err_status(HTTP_ERR_TOO_LARGE), 431);
}

static void
test_endless_header_line_is_refused_at_the_maximum(void **state)
{
	static char s[PROXY_HEADER_MAX_BYTES];

	memset(s, 'a', sizeof(s));
	memcpy(s, "CONNECT example.com:443 HTTP/1.1\r\nX: ", 37);
	assert_int_equal(http_parse((uint8_t *)s, sizeof(s) - 1, &req), HTTP_NEED_MORE);
	assert_int_equal(http_parse((uint8_t *)s, sizeof(s), &req), HTTP_ERR_TOO_LARGE);
}

/* Parses a CONNECT with N header lines. */
static enum http_err
parse_with_headers(size_t n)
{
	static char s[PROXY_HEADER_MAX_BYTES];
	size_t len = (size_t)snprintf(s, sizeof(s), "CONNECT example.com:443 HTTP/1.1\r\n");

	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, sizeof(s) - len, "X-%zu: v\r\n", i);
	len += (size_t)snprintf(s + len, sizeof(s) - len, "\r\n");
	return http_parse((uint8_t *)s, len, &req);
}

static void
test_maximum_header_count_is_accepted(void **state)
{
	assert_int_equal(parse_with_headers(HTTP_HEADERS_MAX), HTTP_OK);
	assert_int_equal(req.nheaders, HTTP_HEADERS_MAX);
}

static void
test_too_many_headers_are_refused_with_431(void **state)
{
	assert_int_equal(parse_with_headers(HTTP_HEADERS_MAX + 1), HTTP_ERR_TOO_MANY_HEADERS);
	assert_int_equal(http_err_status(HTTP_ERR_TOO_MANY_HEADERS), 431);
}

/* --- Feeding and what follows the head --- */

static void
test_byte_at_a_time_needs_more_until_complete(void **state)
{
	const char *s = "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n";
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		assert_int_equal(http_parse((const uint8_t *)s, i, &req), HTTP_NEED_MORE);
	assert_int_equal(http_parse((const uint8_t *)s, n, &req), HTTP_OK);
	assert_int_equal(req.head_len, n);
}

static void
test_empty_input_needs_more(void **state)
{
	assert_int_equal(http_parse(NULL, 0, &req), HTTP_NEED_MORE);
}

static void
test_bytes_after_the_head_are_not_consumed(void **state)
{
	const char head[] = "CONNECT example.com:443 HTTP/1.1\r\n\r\n";
	const char s[] = "CONNECT example.com:443 HTTP/1.1\r\n\r\n\x16\x03\x01\0\x05\r\n\n";

	assert_int_equal(http_parse((const uint8_t *)s, sizeof(s) - 1, &req), HTTP_OK);
	assert_int_equal(req.head_len, sizeof(head) - 1);
}

static void
test_pipelined_request_after_the_head_is_not_parsed(void **state)
{
	const char *s = "GET http://example.com/ HTTP/1.1\r\n\r\nGET http://evil.com/ HTTP/1.1\r\n\r\n";

	assert_int_equal(parse(s), HTTP_OK);
	assert_string_equal(req.host, "example.com");
	assert_int_equal(req.head_len, strlen("GET http://example.com/ HTTP/1.1\r\n\r\n"));
}

/* --- Absolute form --- */

static void
test_absolute_form_gets_default_port_80(void **state)
{
	const char *s = "GET http://Example.com/a/b?c=d HTTP/1.1\r\nHost: example.com\r\n\r\n";

	assert_int_equal(parse(s), HTTP_OK);
	assert_int_equal(req.method, HTTP_METHOD_GET);
	assert_string_equal(req.host, "example.com");
	assert_int_equal(req.port, 80);
	assert_string_equal(span(s, req.path), "/a/b?c=d");
}

static void
test_absolute_form_with_explicit_port(void **state)
{
	assert_int_equal(parse_get("http://example.com:8080/x"), HTTP_OK);
	assert_int_equal(req.port, 8080);
}

static void
test_absolute_form_without_path_has_empty_path(void **state)
{
	assert_int_equal(parse_get("http://example.com"), HTTP_OK);
	assert_int_equal(req.path.len, 0);
}

static void
test_absolute_form_with_query_only_keeps_query(void **state)
{
	const char *s = "GET http://example.com?q HTTP/1.1\r\n\r\n";

	assert_int_equal(parse(s), HTTP_OK);
	assert_string_equal(req.host, "example.com");
	assert_string_equal(span(s, req.path), "?q");
}

static void
test_absolute_form_scheme_is_case_insensitive(void **state)
{
	assert_int_equal(parse_get("HTTP://example.com/"), HTTP_OK);
}

static void
test_absolute_form_ipv6_literal(void **state)
{
	assert_int_equal(parse_get("http://[2001:db8::2]/"), HTTP_OK);
	assert_int_equal(req.kind, HTTP_TARGET_IPV6);
	assert_int_equal(req.port, 80);
}

static void
test_absolute_form_https_scheme_is_refused(void **state)
{
	assert_int_equal(parse_get("https://example.com/"), HTTP_ERR_SCHEME);
}

static void
test_absolute_form_other_scheme_is_refused(void **state)
{
	assert_int_equal(parse_get("ftp://example.com/"), HTTP_ERR_SCHEME);
}

static void
test_origin_form_is_refused(void **state)
{
	assert_int_equal(parse_get("/index.html"), HTTP_ERR_TARGET_FORM);
}

static void
test_authority_form_with_get_is_refused(void **state)
{
	assert_int_equal(parse_get("example.com:80"), HTTP_ERR_TARGET_FORM);
}

static void
test_absolute_form_fragment_is_refused(void **state)
{
	assert_int_equal(parse_get("http://example.com/#frag"), HTTP_ERR_PATH);
}

static void
test_absolute_form_userinfo_is_refused(void **state)
{
	assert_int_equal(parse_get("http://allowed.com@evil.com/"), HTTP_ERR_USERINFO);
}

static void
test_absolute_form_empty_host_is_refused(void **state)
{
	assert_int_equal(parse_get("http:///path"), HTTP_ERR_HOST);
}

static void
test_absolute_form_noncanonical_ipv4_is_refused(void **state)
{
	assert_int_equal(parse_get("http://2130706433/"), HTTP_ERR_IP_NONCANONICAL);
}

static void
test_absolute_form_host_header_naming_another_host_is_refused(void **state)
{
	assert_int_equal(parse_get_headers("Host: evil.com\r\n"), HTTP_ERR_HOST_HEADER);
}

static void
test_absolute_form_host_header_naming_another_port_is_refused(void **state)
{
	assert_int_equal(parse_get_headers("Host: example.com:8080\r\n"), HTTP_ERR_HOST_HEADER);
}

static void
test_absolute_form_host_header_without_port_needs_port_80(void **state)
{
	assert_int_equal(parse("GET http://example.com:8080/ HTTP/1.1\r\nHost: example.com\r\n\r\n"),
	    HTTP_ERR_HOST_HEADER);
	assert_int_equal(parse_get_headers("Host: example.com:80\r\n"), HTTP_OK);
}

static void
test_invalid_host_header_is_refused(void **state)
{
	assert_int_equal(parse_get_headers("Host: \r\n"), HTTP_ERR_HOST_HEADER);
	assert_int_equal(parse_get_headers("Host: a@example.com\r\n"), HTTP_ERR_HOST_HEADER);
}

static void
test_duplicate_host_header_is_refused_even_when_equal(void **state)
{
	assert_int_equal(parse_get_headers("Host: example.com\r\nHost: evil.com\r\n"),
	    HTTP_ERR_HOST_DUPLICATE);
	assert_int_equal(parse_get_headers("Host: example.com\r\nhost: example.com\r\n"),
	    HTTP_ERR_HOST_DUPLICATE);
}

static void
test_content_length_is_recorded(void **state)
{
	assert_int_equal(parse_get_headers("Content-Length: 42\r\n"), HTTP_OK);
	assert_true(req.has_content_length);
	assert_int_equal(req.content_length, 42);
}

static void
test_content_length_and_transfer_encoding_together_are_refused(void **state)
{
	assert_int_equal(parse_get_headers("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n"),
	    HTTP_ERR_BODY_FRAMING);
}

static void
test_non_decimal_content_length_is_refused(void **state)
{
	assert_int_equal(parse_get_headers("Content-Length: 3,3\r\n"), HTTP_ERR_BODY_FRAMING);
	assert_int_equal(parse_get_headers("Content-Length: -1\r\n"), HTTP_ERR_BODY_FRAMING);
	assert_int_equal(parse_get_headers("Content-Length: 1234567890123456789\r\n"),
	    HTTP_ERR_BODY_FRAMING);
}

static void
test_repeated_content_length_is_refused(void **state)
{
	assert_int_equal(parse_get_headers("Content-Length: 3\r\nContent-Length: 3\r\n"),
	    HTTP_ERR_BODY_FRAMING);
}

static void
test_transfer_encoding_other_than_chunked_is_refused(void **state)
{
	assert_int_equal(parse_get_headers("Transfer-Encoding: gzip, chunked\r\n"),
	    HTTP_ERR_BODY_FRAMING);
	assert_int_equal(parse_get_headers("Transfer-Encoding: Chunked\r\n"), HTTP_OK);
	assert_true(req.chunked);
}

/* --- Error texts --- */

static void
test_every_error_has_a_status_reason_and_text(void **state)
{
	for (int e = HTTP_ERR_TOO_LARGE; e <= HTTP_ERR_BODY_FRAMING; e++) {
		int status = http_err_status((enum http_err)e);

		assert_true(status == 400 || status == 405 || status == 431 || status == 505);
		assert_string_not_equal(http_err_reason((enum http_err)e), "unknown");
		assert_string_not_equal(http_strerror((enum http_err)e), "unknown request error");
	}
	assert_int_equal(http_err_status(HTTP_ERR_USERINFO), 400);
	assert_string_equal(http_err_reason(HTTP_ERR_BARE_LF), "bare_lf");
	assert_int_equal(http_err_status(HTTP_OK), 0);
	assert_string_equal(http_err_reason((enum http_err)999), "unknown");
}

static enum http_err
parse_origin(const char *s)
{
	return http_parse_origin((const uint8_t *)s, strlen(s), &req);
}

static void
test_origin_form_takes_its_target_from_host(void **state)
{
	const char *s = "GET /zen?x=1 HTTP/1.1\r\nHost: GitHub.com\r\nAccept: */*\r\n\r\n";

	(void)state;
	assert_int_equal(parse_origin(s), HTTP_OK);
	assert_int_equal(req.kind, HTTP_TARGET_NAME);
	assert_string_equal(req.host, "github.com");
	assert_int_equal(req.port, 80);
	assert_string_equal(span(s, req.path), "/zen?x=1");
	assert_int_equal(req.head_len, strlen(s));
}

static void
test_origin_form_host_port_is_kept(void **state)
{
	(void)state;
	assert_int_equal(parse_origin("POST / HTTP/1.1\r\nHost: example.com:8080\r\n"
	    "Content-Length: 2\r\n\r\nhi"), HTTP_OK);
	assert_int_equal(req.port, 8080);
	assert_true(req.has_content_length);
}

static void
test_origin_form_without_host_is_refused(void **state)
{
	(void)state;
	assert_int_equal(parse_origin("GET / HTTP/1.1\r\n\r\n"), HTTP_ERR_HOST_HEADER);
	assert_int_equal(parse_origin("GET / HTTP/1.1\r\nHost: 127.1\r\n\r\n"),
	    HTTP_ERR_HOST_HEADER);
}

static void
test_origin_parser_refuses_proxy_forms(void **state)
{
	(void)state;
	assert_int_equal(parse_origin("GET http://github.com/ HTTP/1.1\r\nHost: github.com\r\n\r\n"),
	    HTTP_ERR_TARGET_FORM);
	assert_int_equal(parse_origin("CONNECT github.com:443 HTTP/1.1\r\n\r\n"),
	    HTTP_ERR_TARGET_FORM);
	assert_int_equal(parse("GET /zen HTTP/1.1\r\nHost: github.com\r\n\r\n"),
	    HTTP_ERR_TARGET_FORM);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_name_is_parsed),
		cmocka_unit_test(test_connect_name_is_lowercased_and_loses_trailing_dot),
		cmocka_unit_test(test_connect_http10_is_accepted),
		cmocka_unit_test(test_connect_ipv4_literal_is_an_address_target),
		cmocka_unit_test(test_connect_ipv6_literal_is_an_address_target_in_canonical_text),
		cmocka_unit_test(test_connect_v4_mapped_ipv6_is_judged_as_loopback),
		cmocka_unit_test(test_connect_port_1_and_65535_are_accepted),
		cmocka_unit_test(test_connect_host_header_without_port_is_accepted),
		cmocka_unit_test(test_headers_are_recorded_with_trimmed_values),
		cmocka_unit_test(test_header_value_with_high_bytes_is_accepted),
		cmocka_unit_test(test_empty_header_value_is_accepted),
		cmocka_unit_test(test_connect_userinfo_is_refused),
		cmocka_unit_test(test_connect_percent_encoding_is_refused),
		cmocka_unit_test(test_connect_ipv6_zone_id_is_refused),
		cmocka_unit_test(test_connect_port_with_leading_zero_is_refused),
		cmocka_unit_test(test_connect_port_0_is_refused),
		cmocka_unit_test(test_connect_port_65536_is_refused),
		cmocka_unit_test(test_connect_signed_port_is_refused),
		cmocka_unit_test(test_connect_empty_port_is_refused),
		cmocka_unit_test(test_connect_missing_port_is_refused),
		cmocka_unit_test(test_connect_short_ipv4_127_1_is_refused),
		cmocka_unit_test(test_connect_decimal_ipv4_2130706433_is_refused),
		cmocka_unit_test(test_connect_hex_ipv4_0x7f_0_0_1_is_refused),
		cmocka_unit_test(test_connect_octal_ipv4_0177_0_0_1_is_refused),
		cmocka_unit_test(test_connect_ipv4_with_trailing_dot_is_refused),
		cmocka_unit_test(test_connect_ipv4_part_over_255_is_refused),
		cmocka_unit_test(test_connect_unbracketed_ipv6_is_refused),
		cmocka_unit_test(test_connect_bad_ipv6_literal_is_refused),
		cmocka_unit_test(test_connect_bad_host_name_is_refused),
		cmocka_unit_test(test_connect_host_over_253_bytes_is_refused),
		cmocka_unit_test(test_connect_with_path_is_refused),
		cmocka_unit_test(test_connect_with_scheme_is_refused),
		cmocka_unit_test(test_connect_with_content_length_is_refused),
		cmocka_unit_test(test_connect_with_transfer_encoding_is_refused),
		cmocka_unit_test(test_connect_host_header_naming_another_host_is_refused),
		cmocka_unit_test(test_connect_host_header_naming_another_port_is_refused),
		cmocka_unit_test(test_bare_lf_ending_the_request_line_is_refused),
		cmocka_unit_test(test_bare_lf_ending_a_header_is_refused),
		cmocka_unit_test(test_bare_lf_ending_the_head_is_refused),
		cmocka_unit_test(test_bare_cr_inside_a_header_is_refused),
		cmocka_unit_test(test_cr_as_last_byte_needs_more),
		cmocka_unit_test(test_nul_in_a_header_value_is_refused),
		cmocka_unit_test(test_nul_in_the_target_is_refused),
		cmocka_unit_test(test_del_and_escape_are_refused),
		cmocka_unit_test(test_obs_fold_is_refused),
		cmocka_unit_test(test_header_without_colon_is_refused),
		cmocka_unit_test(test_space_before_header_colon_is_refused),
		cmocka_unit_test(test_empty_header_name_is_refused),
		cmocka_unit_test(test_leading_empty_line_is_refused),
		cmocka_unit_test(test_double_space_in_request_line_is_refused),
		cmocka_unit_test(test_tab_as_request_line_separator_is_refused),
		cmocka_unit_test(test_request_line_without_version_is_refused),
		cmocka_unit_test(test_http2_version_is_refused_with_505),
		cmocka_unit_test(test_lower_case_version_is_refused),
		cmocka_unit_test(test_unknown_method_is_refused_with_405),
		cmocka_unit_test(test_lower_case_connect_is_an_unknown_method),
		cmocka_unit_test(test_every_listed_method_is_accepted_in_absolute_form),
		cmocka_unit_test(test_head_of_exactly_the_maximum_is_accepted),
		cmocka_unit_test(test_head_one_byte_over_the_maximum_is_refused_with_431),
		cmocka_unit_test(test_endless_header_line_is_refused_at_the_maximum),
		cmocka_unit_test(test_maximum_header_count_is_accepted),
		cmocka_unit_test(test_too_many_headers_are_refused_with_431),
		cmocka_unit_test(test_byte_at_a_time_needs_more_until_complete),
		cmocka_unit_test(test_empty_input_needs_more),
		cmocka_unit_test(test_bytes_after_the_head_are_not_consumed),
		cmocka_unit_test(test_pipelined_request_after_the_head_is_not_parsed),
		cmocka_unit_test(test_absolute_form_gets_default_port_80),
		cmocka_unit_test(test_absolute_form_with_explicit_port),
		cmocka_unit_test(test_absolute_form_without_path_has_empty_path),
		cmocka_unit_test(test_absolute_form_with_query_only_keeps_query),
		cmocka_unit_test(test_absolute_form_scheme_is_case_insensitive),
		cmocka_unit_test(test_absolute_form_ipv6_literal),
		cmocka_unit_test(test_absolute_form_https_scheme_is_refused),
		cmocka_unit_test(test_absolute_form_other_scheme_is_refused),
		cmocka_unit_test(test_origin_form_is_refused),
		cmocka_unit_test(test_authority_form_with_get_is_refused),
		cmocka_unit_test(test_absolute_form_fragment_is_refused),
		cmocka_unit_test(test_absolute_form_userinfo_is_refused),
		cmocka_unit_test(test_absolute_form_empty_host_is_refused),
		cmocka_unit_test(test_absolute_form_noncanonical_ipv4_is_refused),
		cmocka_unit_test(test_absolute_form_host_header_naming_another_host_is_refused),
		cmocka_unit_test(test_absolute_form_host_header_naming_another_port_is_refused),
		cmocka_unit_test(test_absolute_form_host_header_without_port_needs_port_80),
		cmocka_unit_test(test_invalid_host_header_is_refused),
		cmocka_unit_test(test_duplicate_host_header_is_refused_even_when_equal),
		cmocka_unit_test(test_content_length_is_recorded),
		cmocka_unit_test(test_content_length_and_transfer_encoding_together_are_refused),
		cmocka_unit_test(test_non_decimal_content_length_is_refused),
		cmocka_unit_test(test_repeated_content_length_is_refused),
		cmocka_unit_test(test_transfer_encoding_other_than_chunked_is_refused),
		cmocka_unit_test(test_every_error_has_a_status_reason_and_text),
		cmocka_unit_test(test_origin_form_takes_its_target_from_host),
		cmocka_unit_test(test_origin_form_host_port_is_kept),
		cmocka_unit_test(test_origin_form_without_host_is_refused),
		cmocka_unit_test(test_origin_parser_refuses_proxy_forms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
