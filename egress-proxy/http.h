/* The proxy request head parser of the CONNECT entry: a pure, strict parser
 * of the bytes a sandbox sends to gateway:3128. No I/O, no allocation, no
 * logging; the result lives in the caller's struct and points into the
 * caller's buffer with offsets.
 *
 * What is accepted:
 * - CONNECT host:port HTTP/1.x: a tunnel. The target is authority-form
 *   only: no scheme, path, userinfo or percent-encoding; an IPv6 literal
 *   in brackets without a zone id; a decimal port 1-65535 without sign or
 *   leading zeros. Content-Length and Transfer-Encoding are refused.
 * - GET, HEAD, POST, PUT, DELETE, PATCH and OPTIONS with an absolute-form
 *   target http://host[:port][/path][?query]: plain HTTP forwarding, one
 *   request per connection; the port defaults to 80. The https scheme is
 *   refused (HTTPS goes through CONNECT), as is any other scheme, an
 *   origin-form ("/path") or authority-form target, and a fragment.
 * - Any other method (TRACE, lower-case "connect", ...) is HTTP_ERR_METHOD.
 *
 * Strictness, and why:
 * - Lines end with CRLF. A bare LF or a bare CR anywhere is refused: the
 *   proxy and the upstream server must never disagree on where the head
 *   ends or a header begins (request smuggling, header injection).
 * - The request line is exactly METHOD SP TARGET SP HTTP/1.0|HTTP/1.1; no
 *   leading empty lines.
 * - Header lines are "name: value" with a token name and no space before
 *   the colon; obs-fold (a line starting with SP or HTAB) is refused; no
 *   control characters but HTAB in values (bytes 0x80-0xff are allowed in
 *   values, nowhere else).
 * - At most one Host header (RFC 9112 section 3.2); when present it must
 *   name the target's host (and, for the absolute form, its port, 80 when
 *   it gives none; for CONNECT a port is optional since clients vary).
 *   The absolute form needs this because the upstream picks its virtual
 *   host by Host: a different one would be domain fronting.
 * - Absolute form: Content-Length must be decimal digits and given once;
 *   Transfer-Encoding must be exactly "chunked" and given once; never both.
 * - Hosts: a name is normalized by match_host_normalize() (lower case,
 *   trailing dot dropped, A-labels only). An IPv4 literal must be a strict
 *   dotted quad (addr_parse_ipv4()); any other numeric spelling (127.1,
 *   2130706433, 0x7f.0.0.1, 0177.0.0.1, "127.0.0.1.") is refused with
 *   HTTP_ERR_IP_NONCANONICAL rather than decoded: it has no honest use,
 *   and refusing it leaves nothing for resolvers to read differently.
 *
 * Statuses: 400 for malformed requests, 405 for a method the proxy does
 * not support, 431 when the head is too large or has too many headers,
 * 505 for an HTTP version other than 1.0 and 1.1.
 *
 * Cost: http_parse() reads the whole buffer each call, so it is linear in
 * the bytes passed; a caller calls it once per read (or only when a read
 * brought a '\n'), which bounds the work per connection by
 * PROXY_HEADER_MAX_BYTES times the number of reads. A caller with a lower
 * configured limit passes at most that many bytes: NEED_MORE with a full
 * buffer then means "too large". */
#ifndef CORRAL_EGRESS_HTTP_H
#define CORRAL_EGRESS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

#define PROXY_HEADER_MAX_BYTES (8 * 1024)      /* whole head, request line to final CRLF */
#define HTTP_HEADERS_MAX 64                     /* header lines, count */
#define HTTP_HOST_TEXT_MAX_BYTES (POLICY_HOST_MAX_BYTES + 1) /* normalized host with its NUL (covers IPv6 text) */
#define HTTP_CONTENT_LENGTH_MAX_DIGITS 18       /* Content-Length digits (below 2^63) */
#define HTTP_DEFAULT_PORT 80                    /* absolute form without a port */

enum http_err {
	HTTP_OK = 0,                    /* a complete head: REQ is filled in */
	HTTP_NEED_MORE,                 /* no error yet, the head is not complete */
	HTTP_ERR_TOO_LARGE,             /* 431: no end of head within PROXY_HEADER_MAX_BYTES */
	HTTP_ERR_TOO_MANY_HEADERS,      /* 431: over HTTP_HEADERS_MAX header lines */
	HTTP_ERR_BARE_LF,               /* 400: LF without CR before it */
	HTTP_ERR_BARE_CR,               /* 400: CR without LF after it */
	HTTP_ERR_CONTROL_CHAR,          /* 400: NUL, DEL or another control byte */
	HTTP_ERR_REQUEST_LINE,          /* 400: not METHOD SP TARGET SP VERSION */
	HTTP_ERR_METHOD,                /* 405: a method the proxy does not support */
	HTTP_ERR_VERSION,               /* 505: not HTTP/1.0 or HTTP/1.1 */
	HTTP_ERR_TARGET_FORM,           /* 400: CONNECT without host:port, or another method without http:// */
	HTTP_ERR_SCHEME,                /* 400: absolute form with a scheme other than http */
	HTTP_ERR_USERINFO,              /* 400: '@' in the authority */
	HTTP_ERR_PERCENT,               /* 400: '%' in the authority */
	HTTP_ERR_ZONE_ID,               /* 400: an IPv6 zone id ("[fe80::1%eth0]") */
	HTTP_ERR_PORT_MISSING,          /* 400: CONNECT without a port */
	HTTP_ERR_PORT,                  /* 400: a port that is empty, 0, over 65535, signed or zero-padded */
	HTTP_ERR_HOST,                  /* 400: a host that is not a valid name */
	HTTP_ERR_IP_NONCANONICAL,       /* 400: an IPv4 address in a non-canonical spelling */
	HTTP_ERR_IPV6,                  /* 400: a bad or unbracketed IPv6 literal */
	HTTP_ERR_PATH,                  /* 400: a URL with a fragment ('#') */
	HTTP_ERR_HEADER,                /* 400: a header line that is not "token: value" */
	HTTP_ERR_OBS_FOLD,              /* 400: a header line starting with SP or HTAB */
	HTTP_ERR_HOST_DUPLICATE,        /* 400: more than one Host header */
	HTTP_ERR_HOST_HEADER,           /* 400: a Host header that is invalid or names another host */
	HTTP_ERR_CONNECT_BODY,          /* 400: Content-Length or Transfer-Encoding on CONNECT */
	HTTP_ERR_BODY_FRAMING,          /* 400: bad, repeated or conflicting body length headers */
};

enum http_method {
	HTTP_METHOD_CONNECT = 0,        /* tunnel */
	HTTP_METHOD_GET,                /* the rest: absolute-form plain HTTP */
	HTTP_METHOD_HEAD,
	HTTP_METHOD_POST,
	HTTP_METHOD_PUT,
	HTTP_METHOD_DELETE,
	HTTP_METHOD_PATCH,
	HTTP_METHOD_OPTIONS,
};

enum http_target_kind {
	HTTP_TARGET_NAME = 0,           /* host is a normalized DNS name */
	HTTP_TARGET_IPV4,               /* host is a dotted quad, addr holds 4 bytes */
	HTTP_TARGET_IPV6,               /* host is inet_ntop() text (no brackets), addr holds 16 bytes */
};

/* LEN bytes at offset OFF of the buffer given to http_parse(). */
struct http_span {
	uint32_t off;
	uint32_t len;
};

/* One header line: the name as sent, the value without surrounding SP/HTAB. */
struct http_header {
	struct http_span name;
	struct http_span value;
};

struct http_request {
	enum http_method method;
	unsigned version_minor;         /* 0 or 1: HTTP/1.0 or HTTP/1.1 */
	enum http_target_kind kind;
	char host[HTTP_HOST_TEXT_MAX_BYTES];
	uint8_t addr[16];               /* IPV4/IPV6 targets, network order; zero for names */
	uint16_t port;                  /* 1-65535 */
	struct http_span target;        /* the request-target as sent */
	struct http_span path;          /* absolute form: path and query as sent (empty, or
	                                 * starting with '?', means the caller prefixes "/");
	                                 * CONNECT: empty */
	struct http_span fields;        /* every header line with its CRLF, not the final CRLF */
	struct http_header headers[HTTP_HEADERS_MAX];
	size_t nheaders;
	bool has_host_header;           /* false: a forwarder writes Host itself */
	struct http_span host_header;   /* the Host value, when has_host_header */
	bool has_content_length;
	uint64_t content_length;
	bool chunked;                   /* Transfer-Encoding: chunked */
	size_t head_len;                /* bytes of the head, through the final CRLF: bytes
	                                 * after it (a ClientHello, a body) belong to the caller */
};

/* Parses the proxy request head at the start of the LEN bytes at BUF.
 * HTTP_OK: REQ is filled in and REQ->head_len bytes were the head; bytes
 * after it are not looked at. HTTP_NEED_MORE: nothing wrong so far, call
 * again with more bytes. Any other value: refuse the request with
 * http_err_status() and http_err_reason(); REQ's contents are then
 * unspecified. Bytes past PROXY_HEADER_MAX_BYTES are never read. */
enum http_err http_parse(const uint8_t *buf, size_t len, struct http_request *req);

/* The same for the origin form a client sends to the server it thinks it
 * reached ("GET /path HTTP/1.1" and a Host header, which is required and
 * names the target; port 80 when it gives none): the transparent entry. */
enum http_err http_parse_origin(const uint8_t *buf, size_t len, struct http_request *req);

/* A one-line description of ERR, for messages and 4xx bodies. */
const char *http_strerror(enum http_err err);
/* A short token for ERR, for ledgers and JSON ("bare_lf", "userinfo", ...). */
const char *http_err_reason(enum http_err err);
/* The HTTP status the proxy answers ERR with (400, 405, 431, 505); 0 for
 * HTTP_OK and HTTP_NEED_MORE. */
int http_err_status(enum http_err err);
/* The method's name as it appears on the request line. */
const char *http_method_name(enum http_method m);

#endif
