/* Where a message ends on a terminated HTTP/1.1 connection (h1body.h). */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "common/hex.h"
#include "egress-proxy/h1body.h"

/* --- The chunked coding ------------------------------------------------- */

enum {
	H1C_SIZE,               /* hex digits of a chunk's size */
	H1C_EXT,                /* after ';': an extension, to the CR */
	H1C_SIZE_LF,            /* the size line's LF */
	H1C_DATA,
	H1C_DATA_CR,
	H1C_DATA_LF,
	H1C_TRAILER,            /* at the start of a trailer line, or the final CRLF */
	H1C_TRAILER_LINE,
	H1C_TRAILER_LF,
	H1C_LAST_LF,            /* the LF of the final CRLF */
	H1C_DONE,
	H1C_BROKEN,
};

void
h1_chunked_init(struct h1_chunked *c)
{
	memset(c, 0, sizeof(*c));
	c->state = H1C_SIZE;
}

bool
h1_chunked_done(const struct h1_chunked *c)
{
	return c->state == H1C_DONE;
}

/* A byte a line may hold: printable, HTAB, or 0x80 and above. */
static bool
h1_line_byte(uint8_t b)
{
	return b == '\t' || (b >= 0x20 && b != 0x7f);
}

/* One byte of framing (not data) in state C; false when it breaks it. */
static bool
h1_chunked_byte(struct h1_chunked *c, uint8_t b)
{
	int h;

	switch (c->state) {
	case H1C_SIZE:
		if ((h = hex_digit(b)) >= 0 && c->digits < H1_CHUNK_SIZE_MAX_DIGITS) {
			c->left = c->left * 16 + (uint64_t)h;
			c->digits++;
			return true;
		}
		if (c->digits == 0 || h >= 0)
			return false;
		if (b == ';')
			c->state = H1C_EXT;
		else if (b == '\r')
			c->state = H1C_SIZE_LF;
		else
			return false;
		return true;
	case H1C_EXT:
		if (b == '\r')
			c->state = H1C_SIZE_LF;
		return b == '\r' || h1_line_byte(b);
	case H1C_SIZE_LF:
		if (b != '\n')
			return false;
		c->state = c->left == 0 ? H1C_TRAILER : H1C_DATA;
		c->line = 0;
		return true;
	case H1C_DATA_CR:
		c->state = H1C_DATA_LF;
		return b == '\r';
	case H1C_DATA_LF:
		c->state = H1C_SIZE;
		c->digits = 0;
		c->line = 0;
		return b == '\n';
	case H1C_TRAILER:
		c->state = b == '\r' ? H1C_LAST_LF : H1C_TRAILER_LINE;
		return b == '\r' || (h1_line_byte(b) && b != ' ' && b != '\t');
	case H1C_TRAILER_LINE:
		if (b == '\r')
			c->state = H1C_TRAILER_LF;
		return b == '\r' || h1_line_byte(b);
	case H1C_TRAILER_LF:
		c->state = H1C_TRAILER;
		return b == '\n';
	case H1C_LAST_LF:
		c->state = H1C_DONE;
		return b == '\n';
	default:
		return false;
	}
}

ssize_t
h1_chunked_feed(struct h1_chunked *c, const uint8_t *data, size_t len)
{
	size_t i = 0, off, n;
	ssize_t got;

	while (i < len && c->state != H1C_DONE) {
		if ((got = h1_chunked_feed_data(c, data + i, len - i, &off, &n)) < 0)
			return -1;
		i += (size_t)got;
	}
	return (ssize_t)i;
}

ssize_t
h1_chunked_feed_data(struct h1_chunked *c, const uint8_t *data, size_t len, size_t *off,
    size_t *n)
{
	size_t i = 0;

	*off = *n = 0;
	while (i < len && c->state != H1C_DONE) {
		if (c->state == H1C_DATA) {
			size_t k = len - i < c->left ? len - i : (size_t)c->left;

			*off = i;
			*n = k;
			i += k;
			if ((c->left -= k) == 0)
				c->state = H1C_DATA_CR;
			return (ssize_t)i;      /* one run of data at a time */
		}
		/* Lines are bounded: a size line, or the trailers all told. */
		if (++c->line > (c->state >= H1C_TRAILER ? H1_TRAILERS_MAX_BYTES :
		    H1_CHUNK_LINE_MAX_BYTES) || !h1_chunked_byte(c, data[i])) {
			c->state = H1C_BROKEN;
			return -1;
		}
		i++;
	}
	return c->state == H1C_BROKEN ? -1 : (ssize_t)i;
}

/* --- Response heads ----------------------------------------------------- */

/* The end of the line starting at P (before END): the CR of its CRLF, or
 * NULL when it is not there yet; *BAD when a bare CR or LF, or a NUL,
 * comes first. */
static const uint8_t *
h1_line_end(const uint8_t *p, const uint8_t *end, bool *bad)
{
	for (; p < end; p++) {
		if (*p == '\r')
			return p + 1 < end ? (p[1] == '\n' ? p : (*bad = true, NULL)) : NULL;
		if (*p == '\n' || *p == '\0') {
			*bad = true;
			return NULL;
		}
	}
	return NULL;
}

/* "HTTP/1.x NNN[ reason]" in the N bytes at P. */
static bool
h1_status_line(const uint8_t *p, size_t n, struct h1_response *out)
{
	if (n < 12 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1') || p[8] != ' ')
		return false;
	for (int i = 9; i < 12; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	if (p[9] == '0' || (n > 12 && p[12] != ' '))
		return false;
	for (size_t i = 13; i < n; i++)
		if (!h1_line_byte(p[i]))
			return false;
	out->version_minor = (unsigned)(p[7] - '0');
	out->status = (unsigned)((p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0'));
	return true;
}

static bool
h1_token_byte(uint8_t b)
{
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
	    (b != 0 && strchr("!#$%&'*+-.^_`|~", b) != NULL);
}

/* The next element of the comma list V (N bytes), read from *I on: its
 * first byte at *START and its length, without the blanks around it (empty
 * elements are skipped). false at the end of the list. */
static bool
h1_list_next(const uint8_t *v, size_t n, size_t *i, size_t *start, size_t *len)
{
	size_t stop;

	while (*i < n && (v[*i] == ' ' || v[*i] == '\t' || v[*i] == ','))
		(*i)++;
	if (*i == n)
		return false;
	*start = *i;
	while (*i < n && v[*i] != ',')
		(*i)++;
	stop = *i;
	while (stop > *start && (v[stop - 1] == ' ' || v[stop - 1] == '\t'))
		stop--;
	*len = stop - *start;
	return true;
}

/* Whether the element of V at START, LEN bytes long, is TOKEN (T bytes). */
static bool
h1_element_is(const uint8_t *v, size_t start, size_t len, const char *token, size_t t)
{
	return len == t && strncasecmp((const char *)v + start, token, t) == 0;
}

/* Whether the value V (N bytes) is a comma list holding TOKEN. */
static bool
h1_list_has(const uint8_t *v, size_t n, const char *token)
{
	size_t t = strlen(token), i = 0, start, len;

	while (h1_list_next(v, n, &i, &start, &len))
		if (h1_element_is(v, start, len, token, t))
			return true;
	return false;
}

/* Whether every element of the comma list V (N bytes) is TOKEN (an empty
 * list too). */
static bool
h1_list_only(const uint8_t *v, size_t n, const char *token)
{
	size_t t = strlen(token), i = 0, start, len;

	while (h1_list_next(v, n, &i, &start, &len))
		if (!h1_element_is(v, start, len, token, t))
			return false;
	return true;
}

/* Whether the last coding of a Transfer-Encoding value is chunked. */
static bool
h1_last_is_chunked(const uint8_t *v, size_t n)
{
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return n >= 7 && strncasecmp((const char *)v + n - 7, "chunked", 7) == 0 &&
	    (n == 7 || v[n - 8] == ',' || v[n - 8] == ' ' || v[n - 8] == '\t');
}

struct h1_fields {
	bool length, te, chunked, close, keep_alive, encoded;
	uint64_t content_length;
};

/* One header line (N bytes at P, no CRLF) into F. */
static enum h1_status
h1_field(const uint8_t *p, size_t n, struct h1_fields *f)
{
	const uint8_t *colon = memchr(p, ':', n), *v;
	size_t name, vn;

	if (colon == NULL || colon == p || p[0] == ' ' || p[0] == '\t')
		return H1_ERR_MALFORMED;
	name = (size_t)(colon - p);
	for (size_t i = 0; i < name; i++)
		if (!h1_token_byte(p[i]))
			return H1_ERR_MALFORMED;
	for (v = colon + 1; v < p + n && (*v == ' ' || *v == '\t'); v++)
		;
	vn = (size_t)(p + n - v);
	for (size_t i = 0; i < vn; i++)
		if (!h1_line_byte(v[i]))
			return H1_ERR_MALFORMED;
	while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
		vn--;
	if (name == 14 && strncasecmp((const char *)p, "Content-Length", 14) == 0) {
		uint64_t cl = 0;

		if (vn == 0 || vn > 18)
			return H1_ERR_FRAMING;
		for (size_t i = 0; i < vn; i++) {
			if (v[i] < '0' || v[i] > '9')
				return H1_ERR_FRAMING;
			cl = cl * 10 + (uint64_t)(v[i] - '0');
		}
		if (f->length && cl != f->content_length)
			return H1_ERR_FRAMING;
		f->length = true;
		f->content_length = cl;
	} else if (name == 17 && strncasecmp((const char *)p, "Transfer-Encoding", 17) == 0) {
		if (f->te)
			return H1_ERR_FRAMING;
		f->te = true;
		f->chunked = h1_last_is_chunked(v, vn);
		f->encoded |= !h1_list_only(v, vn, "chunked");
	} else if (name == 16 && strncasecmp((const char *)p, "Content-Encoding", 16) == 0) {
		f->encoded |= !h1_list_only(v, vn, "identity");
	} else if (name == 10 && strncasecmp((const char *)p, "Connection", 10) == 0) {
		f->close |= h1_list_has(v, vn, "close");
		f->keep_alive |= h1_list_has(v, vn, "keep-alive");
	}
	return H1_OK;
}

/* The body's framing from the status and the fields (RFC 9112 section 6.3). */
static enum h1_status
h1_framing(struct h1_response *out, const struct h1_fields *f, bool head_request)
{
	if (f->te && f->length)
		return H1_ERR_FRAMING;
	out->interim = out->status >= 100 && out->status < 200 && out->status != 101;
	out->close = f->close || (out->version_minor == 0 && !f->keep_alive);
	if (head_request || (out->status >= 100 && out->status < 200) || out->status == 204 ||
	    out->status == 304)
		out->body = H1_BODY_NONE;
	else if (f->te)
		out->body = f->chunked ? H1_BODY_CHUNKED : H1_BODY_UNTIL_CLOSE;
	else if (f->length)
		out->body = f->content_length > 0 ? H1_BODY_LENGTH : H1_BODY_NONE;
	else
		out->body = H1_BODY_UNTIL_CLOSE;
	out->length = out->body == H1_BODY_LENGTH ? f->content_length : 0;
	out->encoded = f->encoded && out->body != H1_BODY_NONE;
	if (out->body == H1_BODY_UNTIL_CLOSE)
		out->close = true;
	return H1_OK;
}

enum h1_status
h1_response_parse(const uint8_t *buf, size_t len, bool head_request, struct h1_response *out)
{
	const uint8_t *p = buf, *end = buf + (len < H1_RESPONSE_HEAD_MAX_BYTES ? len :
	    H1_RESPONSE_HEAD_MAX_BYTES), *eol;
	struct h1_fields f = { 0 };
	unsigned nfields = 0;
	bool bad = false;
	enum h1_status st;

	memset(out, 0, sizeof(*out));
	if ((eol = h1_line_end(p, end, &bad)) == NULL)
		return bad ? H1_ERR_MALFORMED : len >= H1_RESPONSE_HEAD_MAX_BYTES ?
		    H1_ERR_TOO_LARGE : H1_NEED_MORE;
	if (!h1_status_line(p, (size_t)(eol - p), out))
		return H1_ERR_MALFORMED;
	for (p = eol + 2;; p = eol + 2) {
		if ((eol = h1_line_end(p, end, &bad)) == NULL)
			return bad ? H1_ERR_MALFORMED : len >= H1_RESPONSE_HEAD_MAX_BYTES ?
			    H1_ERR_TOO_LARGE : H1_NEED_MORE;
		if (eol == p)
			break;
		if (++nfields > H1_RESPONSE_HEADERS_MAX)
			return H1_ERR_TOO_LARGE;
		if ((st = h1_field(p, (size_t)(eol - p), &f)) != H1_OK)
			return st;
	}
	out->head_len = (size_t)(eol + 2 - buf);
	return h1_framing(out, &f, head_request);
}
