/* Where a message ends on an HTTP/1.1 connection whose TLS the proxy
 * terminates (corral-policy(5), "tls: terminate"): a response head's
 * framing, and the chunked coding tracked byte by byte. The bytes pass
 * through unchanged; only their boundaries are found, so that the proxy
 * judges each request of a kept-alive connection and puts an answer of its
 * own (a 403) in its place among the responses.
 *
 * Strict where a lenient reading could let the proxy and a peer disagree
 * on where a message ends (request smuggling): CRLF only, no obs-fold, one
 * Content-Length, never with Transfer-Encoding. Pure: no I/O, no
 * allocation, no logging; fuzzed (tests/fuzz/fuzz_h1body.c). Requests'
 * heads are http.h's (http_parse_origin). */
#ifndef CORRAL_H1BODY_H
#define CORRAL_H1BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define H1_RESPONSE_HEAD_MAX_BYTES (64 * 1024)  /* a response head (Set-Cookie adds up) */
#define H1_RESPONSE_HEADERS_MAX 256
#define H1_CHUNK_LINE_MAX_BYTES 1024            /* a chunk's size line, extensions included */
#define H1_TRAILERS_MAX_BYTES (8 * 1024)        /* the trailer section */
#define H1_CHUNK_SIZE_MAX_DIGITS 15             /* hex digits: below 2^60 */

enum h1_status {
	H1_OK = 0,                      /* a whole head, read */
	H1_NEED_MORE,                   /* nothing wrong yet */
	H1_ERR_TOO_LARGE,               /* past the head's limits */
	H1_ERR_MALFORMED,               /* not a response head this reads */
	H1_ERR_FRAMING,                 /* bad, repeated or conflicting length headers */
};

/* How a message's body is delimited. */
enum h1_body {
	H1_BODY_NONE = 0,               /* no body: HEAD, 1xx, 204, 304, a length of 0 */
	H1_BODY_LENGTH,                 /* Content-Length bytes */
	H1_BODY_CHUNKED,                /* the chunked coding, to its last chunk */
	H1_BODY_UNTIL_CLOSE,            /* a response with neither: to the end of the connection */
};

struct h1_response {
	unsigned version_minor;         /* HTTP/1.0 or 1.1 */
	unsigned status;                /* 100-999 */
	size_t head_len;                /* through the blank line */
	enum h1_body body;
	uint64_t length;                /* H1_BODY_LENGTH */
	bool close;                     /* Connection: close, or HTTP/1.0 without keep-alive */
	bool interim;                   /* 1xx but 101: the final response follows */
	bool encoded;                   /* its body is compressed or otherwise coded
					 * (Content-Encoding, or a transfer coding but chunked) */
};

/* Parses the response head at the start of BUF (LEN bytes) to a request
 * that was HEAD when HEAD_REQUEST. H1_OK fills OUT; bytes after
 * OUT->head_len are not looked at. */
enum h1_status h1_response_parse(const uint8_t *buf, size_t len, bool head_request,
    struct h1_response *out);

/* The chunked coding's reader (RFC 9112 section 7.1). */
struct h1_chunked {
	int state;
	uint64_t left;                  /* the current chunk's data bytes still to come */
	unsigned digits;
	size_t line;                    /* bytes of the current size line or of the trailers */
};

void h1_chunked_init(struct h1_chunked *c);
/* Reads LEN bytes at DATA: the count that belongs to the body (all of
 * them, or those through its end, which h1_chunked_done then says), or -1
 * when the framing is broken. */
ssize_t h1_chunked_feed(struct h1_chunked *c, const uint8_t *data, size_t len);
bool h1_chunked_done(const struct h1_chunked *c);
/* The same, up to the end of the first run of the body's data: *OFF and
 * *N say where that run is among the bytes read (*N 0: none), so that a
 * reader of the content alone can take it out of its framing. */
ssize_t h1_chunked_feed_data(struct h1_chunked *c, const uint8_t *data, size_t len,
    size_t *off, size_t *n);

#endif
