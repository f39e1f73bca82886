/* TLS ClientHello reader: reassembles the first handshake message from
 * records and segments, checks every length against its container, and
 * takes the one host name of its server_name extension (RFC 8446, 6066). */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "egress-proxy/tls.h"

#define TLS_RECORD_HEADER_BYTES 5
#define TLS_HANDSHAKE_HEADER_BYTES 4
#define TLS_RANDOM_BYTES 32
#define TLS_SESSION_ID_MAX_BYTES 32
/* Handshake body: version, random, empty session id, one suite, one method. */
#define TLS_HELLO_BODY_MIN_BYTES (2 + TLS_RANDOM_BYTES + 1 + 2 + 2 + 1 + 1)
#define TLS_EXTENSION_TYPES 65536

#define TLS_CONTENT_CHANGE_CIPHER_SPEC 20
#define TLS_CONTENT_HEARTBEAT 24
#define TLS_CONTENT_HANDSHAKE 22
#define TLS_HANDSHAKE_CLIENT_HELLO 1
#define TLS_VERSION_MAJOR 3
#define TLS_VERSION_MINOR_MIN 1	/* TLS 1.0 */
#define TLS_VERSION_MINOR_MAX 4	/* TLS 1.3 */
#define TLS_EXT_SERVER_NAME 0x0000
#define TLS_EXT_ENCRYPTED_CLIENT_HELLO 0xfe0d
#define TLS_EXT_ALPN 0x0010
#define TLS_SNI_TYPE_HOST_NAME 0

struct tls_reader {
	enum tls_status status;		/* NEED_MORE until a final answer */
	struct tls_hello_info info;	/* what is known so far */
	size_t input_bytes;		/* raw bytes consumed, at most TLS_INPUT_MAX_BYTES */
	uint8_t rec_hdr[TLS_RECORD_HEADER_BYTES];
	size_t rec_hdr_have;		/* header bytes of the current record; 5: in its payload */
	size_t rec_left;		/* payload bytes of the current record still to come */
	uint8_t hs_hdr[TLS_HANDSHAKE_HEADER_BYTES];
	size_t hs_hdr_have;
	uint8_t *body;			/* the hello body, allocated at its declared length */
	size_t body_len;
	size_t body_have;
};

/* Bounds-checked reading of a byte range. */
struct tls_cursor {
	const uint8_t *p;
	size_t left;
};

static bool
cursor_u8(struct tls_cursor *c, uint8_t *v)
{
	if (c->left < 1)
		return false;
	*v = c->p[0];
	c->p++;
	c->left--;
	return true;
}

static bool
cursor_u16(struct tls_cursor *c, uint16_t *v)
{
	if (c->left < 2)
		return false;
	*v = (uint16_t)(c->p[0] << 8 | c->p[1]);
	c->p += 2;
	c->left -= 2;
	return true;
}

static bool
cursor_skip(struct tls_cursor *c, size_t n)
{
	if (c->left < n)
		return false;
	c->p += n;
	c->left -= n;
	return true;
}

/* Splits off SUB, a vector whose length is a PREFIX_BYTES (1 or 2) prefix;
 * the length must fit in what is left of C, its container. */
static enum tls_error
cursor_vector(struct tls_cursor *c, size_t prefix_bytes, struct tls_cursor *sub)
{
	uint16_t len16 = 0;
	uint8_t len8 = 0;
	size_t len;

	if (prefix_bytes == 1 ? !cursor_u8(c, &len8) : !cursor_u16(c, &len16))
		return TLS_ERR_LENGTH_OVERFLOW;
	len = prefix_bytes == 1 ? len8 : len16;
	sub->p = c->p;
	sub->left = len;
	return cursor_skip(c, len) ? TLS_ERR_NONE : TLS_ERR_LENGTH_OVERFLOW;
}

static bool
tls_version_plausible(uint8_t major, uint8_t minor)
{
	return major == TLS_VERSION_MAJOR && minor >= TLS_VERSION_MINOR_MIN &&
	    minor <= TLS_VERSION_MINOR_MAX;
}

enum tls_status
tls_classify_first_byte(uint8_t first, enum tls_error *error)
{
	*error = TLS_ERR_NONE;
	if (first == TLS_CONTENT_HANDSHAKE)
		return TLS_NEED_MORE;
	/* SSLv2's two-byte record header sets the high bit; it has no SNI. */
	if (first & 0x80) {
		*error = TLS_ERR_SSLV2_HELLO;
		return TLS_ERROR;
	}
	if (first >= TLS_CONTENT_CHANGE_CIPHER_SPEC && first <= TLS_CONTENT_HEARTBEAT) {
		*error = TLS_ERR_RECORD_TYPE;
		return TLS_ERROR;
	}
	return TLS_NOT_TLS;
}

static bool
sni_byte_ok(uint8_t b)
{
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
	    (b >= '0' && b <= '9') || b == '-' || b == '.' || b == '_';
}

static bool
sni_is_hex_digit(uint8_t b)
{
	return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
}

/* True when NAME (no NUL, at most 253 bytes) is an IPv6 literal, bracketed or not. */
static bool
sni_is_ipv6_literal(const uint8_t *name, size_t len)
{
	char text[TLS_SNI_NAME_MAX_BYTES + 1];
	struct in6_addr addr;

	if (memchr(name, ':', len) == NULL)
		return false;
	if (len >= 2 && name[0] == '[' && name[len - 1] == ']') {
		name++;
		len -= 2;
	}
	memcpy(text, name, len);
	text[len] = '\0';
	return inet_pton(AF_INET6, text, &addr) == 1;
}

/* True when the last label is all digits or 0x-hex: no top-level domain
 * looks like that, but every form inet_aton() takes as IPv4 ends so. */
static bool
sni_ends_numeric(const uint8_t *name, size_t len)
{
	size_t start = len, i;
	bool digits = true, hex;

	while (start > 0 && name[start - 1] != '.')
		start--;
	for (i = start; i < len; i++)
		digits = digits && name[i] >= '0' && name[i] <= '9';
	if (digits)
		return true;
	hex = len - start > 2 && name[start] == '0' && (name[start + 1] | 0x20) == 'x';
	for (i = start + 2; hex && i < len; i++)
		hex = sni_is_hex_digit(name[i]);
	return hex;
}

/* Every label is 1 to TLS_SNI_LABEL_MAX_BYTES bytes. */
static enum tls_error
sni_labels_check(const uint8_t *name, size_t len)
{
	size_t label = 0, i;

	for (i = 0; i <= len; i++) {
		if (i < len && name[i] != '.') {
			if (++label > TLS_SNI_LABEL_MAX_BYTES)
				return TLS_ERR_SNI_BAD_LABEL;
			continue;
		}
		if (label == 0)
			return TLS_ERR_SNI_BAD_LABEL;
		label = 0;
	}
	return TLS_ERR_NONE;
}

/* Checks the host name and stores it lower case without its trailing dot.
 * The order of the checks decides which error a name with several faults
 * gets; NUL comes first since it is the classic way to fool a C check. */
static enum tls_error
sni_name_take(const uint8_t *name, size_t len, struct tls_hello_info *info)
{
	enum tls_error e;
	size_t i;

	if (len == 0)
		return TLS_ERR_SNI_EMPTY;
	if (memchr(name, '\0', len) != NULL)
		return TLS_ERR_SNI_NUL;
	if (name[len - 1] == '.')
		len--;
	if (len == 0)
		return TLS_ERR_SNI_EMPTY;
	if (len > TLS_SNI_NAME_MAX_BYTES)
		return TLS_ERR_SNI_TOO_LONG;
	/* RFC 6066 section 3: literal IP addresses are not permitted. */
	if (sni_is_ipv6_literal(name, len))
		return TLS_ERR_SNI_IP_LITERAL;
	for (i = 0; i < len; i++)
		if (!sni_byte_ok(name[i]))
			return TLS_ERR_SNI_BAD_BYTE;
	if ((e = sni_labels_check(name, len)) != TLS_ERR_NONE)
		return e;
	if (sni_ends_numeric(name, len))
		return TLS_ERR_SNI_IP_LITERAL;
	for (i = 0; i < len; i++)
		info->name[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] | 0x20 : name[i]);
	info->name[len] = '\0';
	info->name_len = len;
	return TLS_ERR_NONE;
}

/* Reads the server_name extension: a list holding exactly one host_name. */
static enum tls_error
sni_extension_parse(struct tls_cursor ext, struct tls_hello_info *info)
{
	struct tls_cursor list, name;
	uint8_t type;

	if (cursor_vector(&ext, 2, &list) != TLS_ERR_NONE || ext.left != 0 || list.left == 0)
		return TLS_ERR_SNI_MALFORMED;
	if (!cursor_u8(&list, &type) || cursor_vector(&list, 2, &name) != TLS_ERR_NONE)
		return TLS_ERR_SNI_MALFORMED;
	/* Two names would let the client pick which one the server honours. */
	if (list.left != 0)
		return TLS_ERR_SNI_TWO_NAMES;
	if (type != TLS_SNI_TYPE_HOST_NAME)
		return TLS_ERR_SNI_NAME_TYPE;
	return sni_name_take(name.p, name.left, info);
}

/* Notes whether the ALPN extension EXT offers h2. A malformed list is
 * left to the TLS library to refuse: it only decides what is offered. */
static void
alpn_extension_note(struct tls_cursor ext, struct tls_hello_info *info)
{
	struct tls_cursor list, name;

	if (cursor_vector(&ext, 2, &list) != TLS_ERR_NONE || ext.left != 0)
		return;
	while (list.left > 0 && cursor_vector(&list, 1, &name) == TLS_ERR_NONE)
		if (name.left == 2 && memcmp(name.p, "h2", 2) == 0)
			info->alpn_h2 = true;
}

/* Walks the extension block: refuses any repeated type (GREASE values
 * included: RFC 8701 clients never repeat one), notes ECH, then reads SNI. */
static enum tls_status
extensions_parse(struct tls_cursor exts, struct tls_hello_info *info)
{
	uint8_t seen[TLS_EXTENSION_TYPES / 8];
	struct tls_cursor data, sni = { NULL, 0 };
	bool have_sni = false;
	uint16_t type;

	memset(seen, 0, sizeof(seen));
	while (exts.left > 0) {
		if (!cursor_u16(&exts, &type) || cursor_vector(&exts, 2, &data) != TLS_ERR_NONE) {
			info->error = TLS_ERR_LENGTH_OVERFLOW;
			return TLS_ERROR;
		}
		if (seen[type / 8] & (1u << (type % 8))) {
			info->error = TLS_ERR_DUPLICATE_EXTENSION;
			return TLS_ERROR;
		}
		seen[type / 8] |= (uint8_t)(1u << (type % 8));
		if (type == TLS_EXT_ENCRYPTED_CLIENT_HELLO)
			info->ech_present = true;
		if (type == TLS_EXT_ALPN)
			alpn_extension_note(data, info);
		if (type == TLS_EXT_SERVER_NAME) {
			sni = data;
			have_sni = true;
		}
	}
	if (!have_sni)
		return TLS_NO_SNI;
	info->error = sni_extension_parse(sni, info);
	return info->error == TLS_ERR_NONE ? TLS_FOUND : TLS_ERROR;
}

/* Checks the fixed fields before the extensions; leaves C at the extensions. */
static enum tls_error
hello_fixed_fields(struct tls_cursor *c)
{
	struct tls_cursor v;
	enum tls_error e;

	if (c->left < 2 + TLS_RANDOM_BYTES)
		return TLS_ERR_LENGTH_OVERFLOW;
	if (!tls_version_plausible(c->p[0], c->p[1]))
		return TLS_ERR_HELLO_VERSION;
	cursor_skip(c, 2 + TLS_RANDOM_BYTES);
	if ((e = cursor_vector(c, 1, &v)) != TLS_ERR_NONE)
		return e;
	if (v.left > TLS_SESSION_ID_MAX_BYTES)
		return TLS_ERR_FIELD_INVALID;
	if ((e = cursor_vector(c, 2, &v)) != TLS_ERR_NONE)
		return e;
	if (v.left == 0 || v.left % 2 != 0)
		return TLS_ERR_FIELD_INVALID;
	if ((e = cursor_vector(c, 1, &v)) != TLS_ERR_NONE)
		return e;
	return v.left == 0 ? TLS_ERR_FIELD_INVALID : TLS_ERR_NONE;
}

/* Parses a complete ClientHello body. */
static enum tls_status
hello_parse(const uint8_t *body, size_t len, struct tls_hello_info *info)
{
	struct tls_cursor c = { body, len }, exts;

	if ((info->error = hello_fixed_fields(&c)) != TLS_ERR_NONE)
		return TLS_ERROR;
	if (c.left == 0)
		return TLS_NO_SNI;	/* extensions are optional before TLS 1.3 */
	if ((info->error = cursor_vector(&c, 2, &exts)) != TLS_ERR_NONE)
		return TLS_ERROR;
	if (c.left != 0) {
		info->error = TLS_ERR_TRAILING_BYTES;
		return TLS_ERROR;
	}
	return extensions_parse(exts, info);
}

/* Settles R on a final STATUS and lets go of the hello bytes. */
static void
reader_finish(struct tls_reader *r, enum tls_status status, enum tls_error e)
{
	r->status = status;
	r->info.error = e;
	if (status != TLS_FOUND) {
		r->info.name_len = 0;
		r->info.name[0] = '\0';
	}
	free(r->body);
	r->body = NULL;
}

/* The handshake header is complete: check it and make room for the body. */
static void
reader_handshake_header(struct tls_reader *r)
{
	const uint8_t *h = r->hs_hdr;
	size_t len = (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];

	if (h[0] != TLS_HANDSHAKE_CLIENT_HELLO)
		reader_finish(r, TLS_ERROR, TLS_ERR_HANDSHAKE_TYPE);
	else if (len > TLS_HELLO_MAX_BYTES - TLS_HANDSHAKE_HEADER_BYTES)
		reader_finish(r, TLS_ERROR, TLS_ERR_HELLO_TOO_LARGE);
	else if (len < TLS_HELLO_BODY_MIN_BYTES)
		reader_finish(r, TLS_ERROR, TLS_ERR_LENGTH_OVERFLOW);
	else if ((r->body = malloc(len)) == NULL)
		reader_finish(r, TLS_ERROR, TLS_ERR_NOMEM);
	else
		r->body_len = len;
}

/* The hello is whole: parse it and settle on the answer. */
static void
reader_conclude(struct tls_reader *r)
{
	enum tls_status status = hello_parse(r->body, r->body_len, &r->info);

	reader_finish(r, status, r->info.error);
}

/* Takes handshake bytes out of record payloads until the hello is whole. */
static void
reader_absorb(struct tls_reader *r, const uint8_t *data, size_t len)
{
	size_t n;

	while (len > 0 && r->status == TLS_NEED_MORE) {
		if (r->hs_hdr_have < TLS_HANDSHAKE_HEADER_BYTES) {
			n = TLS_HANDSHAKE_HEADER_BYTES - r->hs_hdr_have;
			n = n < len ? n : len;
			memcpy(r->hs_hdr + r->hs_hdr_have, data, n);
			if ((r->hs_hdr_have += n) == TLS_HANDSHAKE_HEADER_BYTES)
				reader_handshake_header(r);
		} else {
			n = r->body_len - r->body_have;
			n = n < len ? n : len;
			memcpy(r->body + r->body_have, data, n);
			if ((r->body_have += n) == r->body_len)
				reader_conclude(r);
		}
		data += n;
		len -= n;
	}
}

/* The record header is complete: only handshake records, of a plausible
 * version and a length within the protocol's limit, may carry the hello. */
static void
reader_record_header(struct tls_reader *r)
{
	const uint8_t *h = r->rec_hdr;
	size_t len = (size_t)h[3] << 8 | h[4];

	if (h[0] != TLS_CONTENT_HANDSHAKE)
		reader_finish(r, TLS_ERROR, TLS_ERR_RECORD_TYPE);
	else if (!tls_version_plausible(h[1], h[2]))
		reader_finish(r, TLS_ERROR, TLS_ERR_RECORD_VERSION);
	/* RFC 8446 5.1: no empty handshake fragments, none over 2^14. */
	else if (len == 0 || len > TLS_RECORD_PAYLOAD_MAX_BYTES)
		reader_finish(r, TLS_ERROR, TLS_ERR_RECORD_LENGTH);
	else
		r->rec_left = len;
}

/* Consumes up to LEN bytes of record framing or payload; returns how many. */
static size_t
reader_step(struct tls_reader *r, const uint8_t *data, size_t len)
{
	size_t n;

	if (r->rec_hdr_have < TLS_RECORD_HEADER_BYTES) {
		n = TLS_RECORD_HEADER_BYTES - r->rec_hdr_have;
		n = n < len ? n : len;
		memcpy(r->rec_hdr + r->rec_hdr_have, data, n);
		if ((r->rec_hdr_have += n) == TLS_RECORD_HEADER_BYTES)
			reader_record_header(r);
		return n;
	}
	n = r->rec_left < len ? r->rec_left : len;
	reader_absorb(r, data, n);
	if ((r->rec_left -= n) == 0)
		r->rec_hdr_have = 0;
	return n;
}

static void
reader_init(struct tls_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->status = TLS_NEED_MORE;
}

struct tls_reader *
tls_reader_new(void)
{
	struct tls_reader *r = malloc(sizeof(*r));

	if (r != NULL)
		reader_init(r);
	return r;
}

void
tls_reader_free(struct tls_reader *r)
{
	if (r == NULL)
		return;
	free(r->body);
	free(r);
}

enum tls_status
tls_reader_feed(struct tls_reader *r, const uint8_t *data, size_t len,
    struct tls_hello_info *info)
{
	enum tls_status first;
	enum tls_error e;
	size_t n;

	if (r->status == TLS_NEED_MORE && len > 0 && r->input_bytes == 0) {
		first = tls_classify_first_byte(data[0], &e);
		if (first != TLS_NEED_MORE)
			reader_finish(r, first, e);
	}
	/* Bytes past the input cap are never looked at. */
	if (len > TLS_INPUT_MAX_BYTES - r->input_bytes)
		len = TLS_INPUT_MAX_BYTES - r->input_bytes;
	while (len > 0 && r->status == TLS_NEED_MORE) {
		n = reader_step(r, data, len);
		data += n;
		len -= n;
		r->input_bytes += n;
	}
	if (r->status == TLS_NEED_MORE && r->input_bytes == TLS_INPUT_MAX_BYTES)
		reader_finish(r, TLS_ERROR, TLS_ERR_INPUT_TOO_LARGE);
	*info = r->info;
	return r->status;
}

enum tls_status
tls_parse_hello(const uint8_t *data, size_t len, struct tls_hello_info *info)
{
	struct tls_reader r;
	enum tls_status status;

	reader_init(&r);
	status = tls_reader_feed(&r, data, len, info);
	free(r.body);
	return status;
}

const char *
tls_strerror(enum tls_error e)
{
	switch (e) {
	case TLS_ERR_NONE: return "no error";
	case TLS_ERR_SSLV2_HELLO: return "SSLv2-style hello (no server name possible)";
	case TLS_ERR_RECORD_TYPE: return "TLS record is not a handshake record";
	case TLS_ERR_RECORD_VERSION: return "TLS record version is not 3.1 to 3.4";
	case TLS_ERR_RECORD_LENGTH: return "TLS record is empty or longer than 16384 bytes";
	case TLS_ERR_HANDSHAKE_TYPE: return "first handshake message is not a ClientHello";
	case TLS_ERR_HELLO_TOO_LARGE: return "ClientHello is larger than 64 KiB";
	case TLS_ERR_INPUT_TOO_LARGE: return "no complete ClientHello within 128 KiB";
	case TLS_ERR_HELLO_VERSION: return "ClientHello version is not 3.1 to 3.4";
	case TLS_ERR_LENGTH_OVERFLOW: return "a ClientHello length runs past its container";
	case TLS_ERR_TRAILING_BYTES: return "bytes after the ClientHello extensions";
	case TLS_ERR_FIELD_INVALID: return "ClientHello session id, cipher suites or compression invalid";
	case TLS_ERR_DUPLICATE_EXTENSION: return "ClientHello repeats an extension";
	case TLS_ERR_SNI_MALFORMED: return "server_name extension is malformed";
	case TLS_ERR_SNI_NAME_TYPE: return "server_name entry is not a host name";
	case TLS_ERR_SNI_TWO_NAMES: return "server_name lists more than one name";
	case TLS_ERR_SNI_EMPTY: return "server name is empty";
	case TLS_ERR_SNI_NUL: return "server name contains a NUL byte";
	case TLS_ERR_SNI_BAD_BYTE: return "server name has a byte other than letters, digits, '-', '_', '.'";
	case TLS_ERR_SNI_TOO_LONG: return "server name is longer than 253 bytes";
	case TLS_ERR_SNI_BAD_LABEL: return "server name has an empty label or one over 63 bytes";
	case TLS_ERR_SNI_IP_LITERAL: return "server name is an IP address (RFC 6066 forbids it)";
	case TLS_ERR_NOMEM: return "out of memory reading the ClientHello";
	}
	return "unknown TLS error";
}

const char *
tls_status_name(enum tls_status s)
{
	switch (s) {
	case TLS_NEED_MORE: return "need-more";
	case TLS_FOUND: return "found";
	case TLS_NO_SNI: return "no-sni";
	case TLS_NOT_TLS: return "not-tls";
	case TLS_ERROR: return "error";
	}
	return "unknown";
}
