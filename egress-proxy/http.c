/* The proxy request head parser: one pass over the buffer, line by line,
 * each line checked byte by byte before its structure is looked at. */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "egress-proxy/addr.h"
#include "egress-proxy/http.h"
#include "policy/match.h"

#define HTTP_PORT_MAX_DIGITS 5          /* "65535" */
#define HTTP_PORT_MAX 65535
#define HTTP_IPV6_TEXT_MAX_BYTES 46     /* INET6_ADDRSTRLEN, with its NUL */
#define HTTP_VERSION_BYTES 8            /* "HTTP/1.1" */
#define HTTP_SCHEME_SEPARATOR "://"
#define HTTP_SCHEME_HTTP "http"

#define HTTP_NELEM(a) (sizeof(a) / sizeof((a)[0]))

_Static_assert(PROXY_HEADER_MAX_BYTES < UINT32_MAX, "spans hold head offsets in 32 bits");
_Static_assert(HTTP_HOST_TEXT_MAX_BYTES >= HTTP_IPV6_TEXT_MAX_BYTES, "host holds IPv6 text");
_Static_assert(PROXY_HEADER_MAX_BYTES == 8192 && HTTP_HEADERS_MAX == 64,
    "the texts of HTTP_ERR_TOO_LARGE and HTTP_ERR_TOO_MANY_HEADERS name these limits");

/* A parsed host[:port]. */
struct http_authority {
	enum http_target_kind kind;
	char host[HTTP_HOST_TEXT_MAX_BYTES];
	uint8_t addr[16];
	bool has_port;
	uint16_t port;
};

struct http_err_info {
	int status;
	const char *reason;
	const char *text;
};

static const struct http_err_info http_errors[] = {
	[HTTP_OK] = { 0, "ok", "no error" },
	[HTTP_NEED_MORE] = { 0, "need_more", "the request head is not complete yet" },
	[HTTP_ERR_TOO_LARGE] = { 431, "head_too_large",
	    "the request head is over 8192 bytes" },
	[HTTP_ERR_TOO_MANY_HEADERS] = { 431, "too_many_headers",
	    "the request has more than 64 header lines" },
	[HTTP_ERR_BARE_LF] = { 400, "bare_lf", "a line ends with LF alone; lines must end with CRLF" },
	[HTTP_ERR_BARE_CR] = { 400, "bare_cr", "a CR is not followed by LF" },
	[HTTP_ERR_CONTROL_CHAR] = { 400, "control_char",
	    "the request head holds a NUL, DEL or other control byte" },
	[HTTP_ERR_REQUEST_LINE] = { 400, "bad_request_line",
	    "the request line is not METHOD SP TARGET SP HTTP/1.x" },
	[HTTP_ERR_METHOD] = { 405, "method_not_supported",
	    "only CONNECT, and GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS with http:// targets are supported" },
	[HTTP_ERR_VERSION] = { 505, "http_version", "only HTTP/1.0 and HTTP/1.1 are supported" },
	[HTTP_ERR_TARGET_FORM] = { 400, "bad_target_form",
	    "CONNECT takes host:port; other methods take an absolute http:// URL" },
	[HTTP_ERR_SCHEME] = { 400, "scheme_not_supported",
	    "only http:// URLs are forwarded; use CONNECT for https" },
	[HTTP_ERR_USERINFO] = { 400, "userinfo", "the target has userinfo ('@'), which is refused" },
	[HTTP_ERR_PERCENT] = { 400, "percent_encoding",
	    "the target host has percent-encoding ('%'), which is refused" },
	[HTTP_ERR_ZONE_ID] = { 400, "zone_id", "the IPv6 target has a zone id, which is refused" },
	[HTTP_ERR_PORT_MISSING] = { 400, "port_missing", "CONNECT needs host:port" },
	[HTTP_ERR_PORT] = { 400, "bad_port",
	    "the port must be decimal 1-65535 without sign or leading zeros" },
	[HTTP_ERR_HOST] = { 400, "bad_host",
	    "the host is not a valid DNS name (A-labels only, at most 253 bytes)" },
	[HTTP_ERR_IP_NONCANONICAL] = { 400, "ip_noncanonical",
	    "the host is an IPv4 address in a non-canonical spelling; write it as a dotted quad like 192.0.2.1" },
	[HTTP_ERR_IPV6] = { 400, "bad_ipv6", "an IPv6 address must be valid and in brackets" },
	[HTTP_ERR_PATH] = { 400, "bad_path", "the URL has a fragment ('#')" },
	[HTTP_ERR_HEADER] = { 400, "bad_header", "a header line is not \"name: value\" with a token name" },
	[HTTP_ERR_OBS_FOLD] = { 400, "obs_fold", "a header line starts with a space or tab (line folding)" },
	[HTTP_ERR_HOST_DUPLICATE] = { 400, "host_duplicate", "the request has more than one Host header" },
	[HTTP_ERR_HOST_HEADER] = { 400, "host_header_mismatch",
	    "the Host header is invalid or names another host or port than the target" },
	[HTTP_ERR_CONNECT_BODY] = { 400, "connect_body",
	    "CONNECT must not carry Content-Length or Transfer-Encoding" },
	[HTTP_ERR_BODY_FRAMING] = { 400, "body_framing",
	    "Content-Length must be digits and given once, Transfer-Encoding only \"chunked\" "
	    "and given once, and never both" },
};

static const char *const http_method_names[] = {
	[HTTP_METHOD_CONNECT] = "CONNECT",
	[HTTP_METHOD_GET] = "GET",
	[HTTP_METHOD_HEAD] = "HEAD",
	[HTTP_METHOD_POST] = "POST",
	[HTTP_METHOD_PUT] = "PUT",
	[HTTP_METHOD_DELETE] = "DELETE",
	[HTTP_METHOD_PATCH] = "PATCH",
	[HTTP_METHOD_OPTIONS] = "OPTIONS",
};

static const struct http_err_info *
http_err_info(enum http_err err)
{
	if ((size_t)err >= HTTP_NELEM(http_errors) || http_errors[err].reason == NULL)
		return NULL;
	return &http_errors[err];
}

const char *
http_strerror(enum http_err err)
{
	const struct http_err_info *i = http_err_info(err);

	return i != NULL ? i->text : "unknown request error";
}

const char *
http_err_reason(enum http_err err)
{
	const struct http_err_info *i = http_err_info(err);

	return i != NULL ? i->reason : "unknown";
}

int
http_err_status(enum http_err err)
{
	const struct http_err_info *i = http_err_info(err);

	return i != NULL ? i->status : 400;
}

const char *
http_method_name(enum http_method m)
{
	if ((size_t)m >= HTTP_NELEM(http_method_names))
		return "UNKNOWN";
	return http_method_names[m];
}

/* RFC 9110 tchar. */
static bool
http_is_tchar(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool
http_is_token(const uint8_t *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!http_is_tchar(s[i]))
			return false;
	return true;
}

static struct http_span
http_span_make(size_t off, size_t len)
{
	return (struct http_span){ .off = (uint32_t)off, .len = (uint32_t)len };
}

/* Finds the CRLF ending the line that starts at POS, reading no further
 * than LIMIT; *EOL is the CR's offset. Every byte on the way is checked:
 * controls other than HTAB, bare CR and bare LF are errors. CAPPED says
 * LIMIT is the head maximum, so running into it is HTTP_ERR_TOO_LARGE. */
static enum http_err
http_line_scan(const uint8_t *buf, size_t pos, size_t limit, bool capped, size_t *eol)
{
	for (size_t i = pos; i < limit; i++) {
		uint8_t c = buf[i];

		if (c == '\r') {
			if (i + 1 == limit)
				break;
			if (buf[i + 1] != '\n')
				return HTTP_ERR_BARE_CR;
			*eol = i;
			return HTTP_OK;
		}
		if (c == '\n')
			return HTTP_ERR_BARE_LF;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return HTTP_ERR_CONTROL_CHAR;
	}
	return capped ? HTTP_ERR_TOO_LARGE : HTTP_NEED_MORE;
}

/* Parses the decimal port of N bytes at S: 1-65535, no sign, no leading zero. */
static enum http_err
http_port_parse(const char *s, size_t n, uint16_t *port)
{
	unsigned v = 0;

	if (n == 0 || n > HTTP_PORT_MAX_DIGITS || s[0] == '0')
		return HTTP_ERR_PORT;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return HTTP_ERR_PORT;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > HTTP_PORT_MAX)
		return HTTP_ERR_PORT;
	*port = (uint16_t)v;
	return HTTP_OK;
}

/* Parses the unbracketed host of N bytes at S: a strict dotted quad or a
 * name that match_host_normalize() accepts. */
static enum http_err
http_host_parse(const char *s, size_t n, struct http_authority *a)
{
	char copy[POLICY_HOST_MAX_BYTES + 2];

	if (addr_parse_ipv4(s, n, a->addr)) {
		a->kind = HTTP_TARGET_IPV4;
		memcpy(a->host, s, n);
		a->host[n] = '\0';
		return HTTP_OK;
	}
	if (n == 0 || n >= sizeof(copy) || memchr(s, '\0', n) != NULL)
		return HTTP_ERR_HOST;
	memcpy(copy, s, n);
	copy[n] = '\0';
	switch (match_host_normalize(copy, a->host)) {
	case MATCH_OK:
		a->kind = HTTP_TARGET_NAME;
		return HTTP_OK;
	case MATCH_ERR_IP_LITERAL:
		/* Why: "127.1", "2130706433", "0x7f.0.0.1" are loopback to
		 * resolvers but a name to a naive matcher; refuse them. */
		return HTTP_ERR_IP_NONCANONICAL;
	default:
		return HTTP_ERR_HOST;
	}
}

/* Parses "[v6]" or "[v6]:port" of N bytes at S (S[0] is '['). */
static enum http_err
http_authority_v6(const char *s, size_t n, struct http_authority *a)
{
	const char *close = memchr(s, ']', n);
	char text[HTTP_IPV6_TEXT_MAX_BYTES];
	struct in6_addr in6;
	size_t inner;

	if (close == NULL)
		return HTTP_ERR_IPV6;
	inner = (size_t)(close - s) - 1;
	/* Why: a zone id names an interface of the proxy's host; it has no
	 * meaning for a remote peer. */
	if (memchr(s + 1, '%', inner) != NULL)
		return HTTP_ERR_ZONE_ID;
	if (inner == 0 || inner >= sizeof(text))
		return HTTP_ERR_IPV6;
	memcpy(text, s + 1, inner);
	text[inner] = '\0';
	if (inet_pton(AF_INET6, text, &in6) != 1)
		return HTTP_ERR_IPV6;
	a->kind = HTTP_TARGET_IPV6;
	memcpy(a->addr, in6.s6_addr, sizeof(in6.s6_addr));
	if (inet_ntop(AF_INET6, &in6, a->host, sizeof(a->host)) == NULL)
		return HTTP_ERR_IPV6;
	if (close + 1 == s + n)
		return HTTP_OK;
	if (close[1] != ':')
		return HTTP_ERR_IPV6;
	a->has_port = true;
	return http_port_parse(close + 2, (size_t)(s + n - close - 2), &a->port);
}

/* Parses the authority host[:port] of N bytes at S (no scheme, no path). */
static enum http_err
http_authority_parse(const char *s, size_t n, struct http_authority *a)
{
	const char *colon;
	size_t host_len = n;
	enum http_err e;

	memset(a, 0, sizeof(*a));
	/* Why: "allowed.com@evil.com" reads as two different hosts to two
	 * different parsers; no proxy client needs userinfo. */
	if (memchr(s, '@', n) != NULL)
		return HTTP_ERR_USERINFO;
	if (n > 0 && s[0] == '[')
		return http_authority_v6(s, n, a);
	if (memchr(s, '%', n) != NULL)
		return HTTP_ERR_PERCENT;
	if ((colon = memchr(s, ':', n)) != NULL) {
		if (memchr(colon + 1, ':', (size_t)(s + n - colon - 1)) != NULL)
			return HTTP_ERR_IPV6;
		host_len = (size_t)(colon - s);
	}
	if ((e = http_host_parse(s, host_len, a)) != HTTP_OK)
		return e;
	if (colon == NULL)
		return HTTP_OK;
	a->has_port = true;
	return http_port_parse(colon + 1, (size_t)(s + n - colon - 1), &a->port);
}

static void
http_target_set(struct http_request *req, const struct http_authority *a)
{
	req->kind = a->kind;
	memcpy(req->host, a->host, sizeof(req->host));
	memcpy(req->addr, a->addr, sizeof(req->addr));
}

/* CONNECT's authority-form target: host:port and nothing else. */
static enum http_err
http_target_connect(const char *t, size_t n, struct http_request *req)
{
	struct http_authority a;
	enum http_err e;

	if (memchr(t, '/', n) != NULL || memchr(t, '?', n) != NULL || memchr(t, '#', n) != NULL)
		return HTTP_ERR_TARGET_FORM;
	if ((e = http_authority_parse(t, n, &a)) != HTTP_OK)
		return e;
	if (!a.has_port)
		return HTTP_ERR_PORT_MISSING;
	http_target_set(req, &a);
	req->port = a.port;
	return HTTP_OK;
}

/* True when the N bytes at S form a URI scheme: ALPHA *(ALPHA / DIGIT / + - .). */
static bool
http_is_scheme(const char *s, size_t n)
{
	if (n == 0 || !((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z'))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];

		if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') &&
		    c != '+' && c != '-' && c != '.')
			return false;
	}
	return true;
}

/* The absolute-form target http://authority[/path][?query] at offset OFF. */
static enum http_err
http_target_absolute(const uint8_t *buf, size_t off, size_t n, struct http_request *req)
{
	const char *t = (const char *)buf + off;
	const char *sep = memmem(t, n, HTTP_SCHEME_SEPARATOR, strlen(HTTP_SCHEME_SEPARATOR));
	const char *auth, *end;
	struct http_authority a;
	enum http_err e;

	if (sep == NULL || !http_is_scheme(t, (size_t)(sep - t)))
		return HTTP_ERR_TARGET_FORM;
	if ((size_t)(sep - t) != strlen(HTTP_SCHEME_HTTP) ||
	    strncasecmp(t, HTTP_SCHEME_HTTP, strlen(HTTP_SCHEME_HTTP)) != 0)
		return HTTP_ERR_SCHEME;
	if (memchr(t, '#', n) != NULL)
		return HTTP_ERR_PATH;
	auth = sep + strlen(HTTP_SCHEME_SEPARATOR);
	for (end = auth; end < t + n && *end != '/' && *end != '?'; end++)
		;
	if ((e = http_authority_parse(auth, (size_t)(end - auth), &a)) != HTTP_OK)
		return e;
	http_target_set(req, &a);
	req->port = a.has_port ? a.port : HTTP_DEFAULT_PORT;
	req->path = http_span_make(off + (size_t)(end - t), (size_t)(t + n - end));
	return HTTP_OK;
}

/* Looks the method of N bytes at S up, case-sensitively (RFC 9110 9.1). */
static enum http_err
http_method_find(const uint8_t *s, size_t n, enum http_method *m)
{
	for (size_t i = 0; i < HTTP_NELEM(http_method_names); i++) {
		if (strlen(http_method_names[i]) == n && memcmp(s, http_method_names[i], n) == 0) {
			*m = (enum http_method)i;
			return HTTP_OK;
		}
	}
	return HTTP_ERR_METHOD;
}

/* Checks the version of N bytes at S: HTTP/1.0 or HTTP/1.1. */
static enum http_err
http_version_parse(const uint8_t *s, size_t n, unsigned *minor)
{
	if (n != HTTP_VERSION_BYTES || memcmp(s, "HTTP/", 5) != 0 ||
	    s[5] < '0' || s[5] > '9' || s[6] != '.' || s[7] < '0' || s[7] > '9')
		return HTTP_ERR_REQUEST_LINE;
	if (s[5] != '1' || (s[7] != '0' && s[7] != '1'))
		return HTTP_ERR_VERSION;
	*minor = (unsigned)(s[7] - '0');
	return HTTP_OK;
}

/* Parses the request line, the EOL bytes at BUF; ORIGIN takes the
 * origin form ("/path") a client sends to a server it thinks it reached. */
static enum http_err
http_request_line(const uint8_t *buf, size_t eol, struct http_request *req, bool origin)
{
	const uint8_t *sp1 = memchr(buf, ' ', eol), *sp2;
	size_t toff, tlen;
	enum http_err e;

	if (sp1 == NULL || !http_is_token(buf, (size_t)(sp1 - buf)))
		return HTTP_ERR_REQUEST_LINE;
	toff = (size_t)(sp1 - buf) + 1;
	if ((sp2 = memchr(buf + toff, ' ', eol - toff)) == NULL)
		return HTTP_ERR_REQUEST_LINE;
	tlen = (size_t)(sp2 - buf) - toff;
	if (tlen == 0)
		return HTTP_ERR_REQUEST_LINE;
	for (size_t i = toff; i < toff + tlen; i++)
		if (buf[i] < 0x21 || buf[i] > 0x7e)
			return HTTP_ERR_REQUEST_LINE;
	if ((e = http_version_parse(sp2 + 1, (size_t)(buf + eol - sp2 - 1), &req->version_minor)) != HTTP_OK)
		return e;
	if ((e = http_method_find(buf, (size_t)(sp1 - buf), &req->method)) != HTTP_OK)
		return e;
	req->target = http_span_make(toff, tlen);
	if (origin) {
		if (req->method == HTTP_METHOD_CONNECT || buf[toff] != '/')
			return HTTP_ERR_TARGET_FORM;
		req->path = req->target;
		return HTTP_OK;
	}
	if (req->method == HTTP_METHOD_CONNECT)
		return http_target_connect((const char *)buf + toff, tlen, req);
	return http_target_absolute(buf, toff, tlen, req);
}

static bool
http_name_is(const uint8_t *buf, struct http_span s, const char *name)
{
	return s.len == strlen(name) && strncasecmp((const char *)buf + s.off, name, s.len) == 0;
}

/* Content-Length: decimal digits only, given once. */
static enum http_err
http_content_length(const uint8_t *buf, struct http_span v, struct http_request *req)
{
	uint64_t n = 0;

	if (req->has_content_length || v.len == 0 || v.len > HTTP_CONTENT_LENGTH_MAX_DIGITS)
		return HTTP_ERR_BODY_FRAMING;
	for (uint32_t i = 0; i < v.len; i++) {
		uint8_t c = buf[v.off + i];

		if (c < '0' || c > '9')
			return HTTP_ERR_BODY_FRAMING;
		n = n * 10 + (uint64_t)(c - '0');
	}
	req->has_content_length = true;
	req->content_length = n;
	return HTTP_OK;
}

/* Records what the proxy must know of header H: Host, and the body framing. */
static enum http_err
http_header_note(const uint8_t *buf, const struct http_header *h, struct http_request *req)
{
	bool cl = http_name_is(buf, h->name, "content-length");
	bool te = http_name_is(buf, h->name, "transfer-encoding");

	if (http_name_is(buf, h->name, "host")) {
		if (req->has_host_header)
			return HTTP_ERR_HOST_DUPLICATE;
		req->has_host_header = true;
		req->host_header = h->value;
		return HTTP_OK;
	}
	/* Why: a CONNECT has no body; bytes after its head are tunnel data,
	 * and a length header only invites the two ends to disagree. */
	if ((cl || te) && req->method == HTTP_METHOD_CONNECT)
		return HTTP_ERR_CONNECT_BODY;
	if (cl)
		return http_content_length(buf, h->value, req);
	if (!te)
		return HTTP_OK;
	if (req->chunked || !http_name_is(buf, h->value, "chunked"))
		return HTTP_ERR_BODY_FRAMING;
	req->chunked = true;
	return HTTP_OK;
}

/* Parses the header line from START to EOL (a CR). */
static enum http_err
http_header_line(const uint8_t *buf, size_t start, size_t eol, struct http_request *req)
{
	const uint8_t *colon;
	size_t vs, ve;
	struct http_header *h;

	/* Why: a folded line joins the header above for one reader and is a
	 * header of its own for another. */
	if (buf[start] == ' ' || buf[start] == '\t')
		return HTTP_ERR_OBS_FOLD;
	if (req->nheaders == HTTP_HEADERS_MAX)
		return HTTP_ERR_TOO_MANY_HEADERS;
	colon = memchr(buf + start, ':', eol - start);
	if (colon == NULL || !http_is_token(buf + start, (size_t)(colon - buf) - start))
		return HTTP_ERR_HEADER;
	vs = (size_t)(colon - buf) + 1;
	ve = eol;
	while (vs < ve && (buf[vs] == ' ' || buf[vs] == '\t'))
		vs++;
	while (ve > vs && (buf[ve - 1] == ' ' || buf[ve - 1] == '\t'))
		ve--;
	h = &req->headers[req->nheaders++];
	h->name = http_span_make(start, (size_t)(colon - buf) - start);
	h->value = http_span_make(vs, ve - vs);
	return http_header_note(buf, h, req);
}

/* Checks the Host header against the target. */
static enum http_err
http_host_header_check(const uint8_t *buf, const struct http_request *req)
{
	struct http_authority a;
	uint16_t want;

	if (!req->has_host_header)
		return HTTP_OK;
	if (http_authority_parse((const char *)buf + req->host_header.off, req->host_header.len,
	    &a) != HTTP_OK)
		return HTTP_ERR_HOST_HEADER;
	if (a.kind != req->kind || strcmp(a.host, req->host) != 0)
		return HTTP_ERR_HOST_HEADER;
	/* CONNECT clients differ on whether Host carries the port. */
	if (!a.has_port && req->method == HTTP_METHOD_CONNECT)
		return HTTP_OK;
	want = a.has_port ? a.port : HTTP_DEFAULT_PORT;
	return want == req->port ? HTTP_OK : HTTP_ERR_HOST_HEADER;
}

/* The origin form names its host only in Host: that is the target. */
static enum http_err
http_origin_target(const uint8_t *buf, struct http_request *req)
{
	struct http_authority a;

	if (!req->has_host_header)
		return HTTP_ERR_HOST_HEADER;
	if (http_authority_parse((const char *)buf + req->host_header.off, req->host_header.len,
	    &a) != HTTP_OK)
		return HTTP_ERR_HOST_HEADER;
	http_target_set(req, &a);
	req->port = a.has_port ? a.port : HTTP_DEFAULT_PORT;
	return HTTP_OK;
}

static enum http_err
http_parse_form(const uint8_t *buf, size_t len, struct http_request *req, bool origin)
{
	size_t limit = len < PROXY_HEADER_MAX_BYTES ? len : PROXY_HEADER_MAX_BYTES;
	bool capped = len >= PROXY_HEADER_MAX_BYTES;
	size_t pos, eol = 0;
	enum http_err e;

	memset(req, 0, sizeof(*req));
	if ((e = http_line_scan(buf, 0, limit, capped, &eol)) != HTTP_OK)
		return e;
	if ((e = http_request_line(buf, eol, req, origin)) != HTTP_OK)
		return e;
	pos = eol + 2;
	req->fields.off = (uint32_t)pos;
	for (;;) {
		if ((e = http_line_scan(buf, pos, limit, capped, &eol)) != HTTP_OK)
			return e;
		if (eol == pos)
			break;
		if ((e = http_header_line(buf, pos, eol, req)) != HTTP_OK)
			return e;
		pos = eol + 2;
	}
	req->fields.len = (uint32_t)(pos - req->fields.off);
	req->head_len = pos + 2;
	if (req->has_content_length && req->chunked)
		return HTTP_ERR_BODY_FRAMING;
	if (origin)
		return http_origin_target(buf, req);
	return http_host_header_check(buf, req);
}

enum http_err
http_parse(const uint8_t *buf, size_t len, struct http_request *req)
{
	return http_parse_form(buf, len, req, false);
}

enum http_err
http_parse_origin(const uint8_t *buf, size_t len, struct http_request *req)
{
	return http_parse_form(buf, len, req, true);
}
