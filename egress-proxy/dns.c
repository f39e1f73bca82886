/* DNS messages for the stub resolver: a strict query parser (one question,
 * class IN, at most an OPT record beside it) and the reply builders. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "egress-proxy/dns.h"

#define DNS_FLAG_QR 0x80		/* in header byte 2 */
#define DNS_FLAG_RD 0x01		/* in header byte 2 */
#define DNS_FLAG_TC 0x02		/* in header byte 2 */
#define DNS_FLAG_RA 0x80		/* in header byte 3 */
#define DNS_OPCODE_QUERY 0
#define DNS_LABEL_POINTER 0xc0		/* the two high bits of a compression pointer */
#define DNS_QUESTION_TAIL_BYTES 4	/* QTYPE, QCLASS */
#define DNS_RR_FIXED_BYTES 10		/* TYPE, CLASS, TTL, RDLENGTH */
#define DNS_A_RECORD_BYTES (2 + DNS_RR_FIXED_BYTES + 4)	/* pointer name, fixed part, IPv4 */
#define DNS_OPT_RECORD_BYTES (1 + DNS_RR_FIXED_BYTES)	/* root name, no options */
#define DNS_ESCAPE_MAX_BYTES 4		/* "\DDD" */

/* A name as decoded from the wire. */
struct dns_name {
	size_t wire_len;
	uint8_t wire[DNS_NAME_MAX_BYTES];
	size_t text_len;
	char text[DNS_NAME_TEXT_MAX_BYTES + 1];
	bool is_hostname;
};

/* Where name decoding is: the read position, the lowest byte read so far
 * (a pointer must go below it, so no byte is read twice), follows so far. */
struct dns_name_walk {
	size_t at;
	size_t floor;
	unsigned follows;
	size_t end;			/* where the name ends in the message; 0 until known */
};

/* Bounded writing of a reply. */
struct dns_writer {
	uint8_t *out;
	size_t cap;
	size_t len;
};

static uint16_t
dns_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static bool
dns_byte_is_ldh(uint8_t b)
{
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
	    (b >= '0' && b <= '9') || b == '-' || b == '_';
}

/* Appends one label byte to the text form, escaped unless it is LDH or '_'.
 * Backslash is always escaped, so escapes cannot be forged. */
static void
name_text_byte(struct dns_name *n, uint8_t b)
{
	char *t = n->text + n->text_len;

	if (dns_byte_is_ldh(b)) {
		t[0] = (char)(b >= 'A' && b <= 'Z' ? b | 0x20 : b);
		n->text_len++;
		return;
	}
	n->is_hostname = false;
	if (b == '.' || b == '\\') {
		t[0] = '\\';
		t[1] = (char)b;
		n->text_len += 2;
	} else {
		snprintf(t, DNS_ESCAPE_MAX_BYTES + 1, "\\%03u", b);
		n->text_len += DNS_ESCAPE_MAX_BYTES;
	}
}

/* Appends the label of LEN bytes at P (LEN 0: the root) to both forms. */
static enum dns_error
name_add_label(struct dns_name *n, const uint8_t *p, uint8_t len)
{
	if (n->wire_len + 1 + len > DNS_NAME_MAX_BYTES)
		return DNS_ERR_NAME_TOO_LONG;
	n->wire[n->wire_len++] = len;
	memcpy(n->wire + n->wire_len, p, len);
	n->wire_len += len;
	if (len > 0 && n->text_len > 0)
		n->text[n->text_len++] = '.';
	for (uint8_t i = 0; i < len; i++)
		name_text_byte(n, p[i]);
	n->text[n->text_len] = '\0';
	return DNS_ERR_NONE;
}

/* Follows the compression pointer at W->at. It must point backwards, below
 * every byte of this name read so far, and outside the header: so each
 * follow reads new bytes and a loop is impossible, not merely capped. */
static enum dns_error
name_follow_pointer(const uint8_t *msg, size_t len, struct dns_name_walk *w)
{
	size_t target;

	if (w->at + 1 >= len)
		return DNS_ERR_TRUNCATED;
	target = (size_t)(msg[w->at] & ~DNS_LABEL_POINTER) << 8 | msg[w->at + 1];
	if (target > w->at)
		return DNS_ERR_POINTER_FORWARD;
	if (target >= w->floor)
		return DNS_ERR_POINTER_LOOP;
	if (target < DNS_HEADER_BYTES)
		return DNS_ERR_POINTER_HEADER;
	if (++w->follows > DNS_POINTER_MAX_FOLLOWS)
		return DNS_ERR_POINTER_LIMIT;
	if (w->end == 0)
		w->end = w->at + 2;
	w->at = target;
	w->floor = target;
	return DNS_ERR_NONE;
}

/* Decodes the name at *POS into N and moves *POS past it. */
static enum dns_error
name_decode(const uint8_t *msg, size_t len, size_t *pos, struct dns_name *n)
{
	struct dns_name_walk w = { *pos, *pos, 0, 0 };
	enum dns_error e;
	uint8_t b;

	memset(n, 0, sizeof(*n));
	n->is_hostname = true;
	for (;;) {
		if (w.at >= len)
			return DNS_ERR_TRUNCATED;
		b = msg[w.at];
		if ((b & DNS_LABEL_POINTER) == DNS_LABEL_POINTER) {
			if ((e = name_follow_pointer(msg, len, &w)) != DNS_ERR_NONE)
				return e;
			continue;
		}
		/* Length bytes 64-191 are the reserved label types of RFC 6891. */
		if (b > DNS_LABEL_MAX_BYTES)
			return DNS_ERR_LABEL_TOO_LONG;
		if (len - w.at - 1 < b)
			return DNS_ERR_TRUNCATED;
		if ((e = name_add_label(n, msg + w.at + 1, b)) != DNS_ERR_NONE)
			return e;
		w.at += 1 + (size_t)b;
		if (b == 0)
			break;
	}
	if (n->text_len == 0) {
		memcpy(n->text, ".", 2);
		n->text_len = 1;
		n->is_hostname = false;
	}
	*pos = w.end != 0 ? w.end : w.at;
	return DNS_ERR_NONE;
}

/* Checks the OPT record's options: each must fit in the record. */
static enum dns_error
opt_options_check(const uint8_t *p, size_t len)
{
	size_t optlen;

	while (len > 0) {
		if (len < 4)
			return DNS_ERR_BAD_OPT;
		optlen = dns_get16(p + 2);
		if (len - 4 < optlen)
			return DNS_ERR_BAD_OPT;
		p += 4 + optlen;
		len -= 4 + optlen;
	}
	return DNS_ERR_NONE;
}

/* Parses the one additional record, which must be an EDNS OPT record. */
static enum dns_error
opt_parse(const uint8_t *msg, size_t len, size_t *pos, struct dns_query *q)
{
	struct dns_name name;
	const uint8_t *rr;
	enum dns_error e;
	size_t rdlen;

	if ((e = name_decode(msg, len, pos, &name)) != DNS_ERR_NONE)
		return e;
	if (len - *pos < DNS_RR_FIXED_BYTES)
		return DNS_ERR_TRUNCATED;
	rr = msg + *pos;
	rdlen = dns_get16(rr + 8);
	if (len - *pos - DNS_RR_FIXED_BYTES < rdlen)
		return DNS_ERR_TRUNCATED;
	*pos += DNS_RR_FIXED_BYTES + rdlen;
	if (dns_get16(rr) != DNS_TYPE_OPT)
		return DNS_ERR_ADDITIONAL_NOT_OPT;
	if (name.wire_len != 1)
		return DNS_ERR_BAD_OPT;
	/* TTL holds extended RCODE, then the version: only version 0 exists. */
	if (rr[5] != 0)
		return DNS_ERR_EDNS_VERSION;
	if ((e = opt_options_check(rr + DNS_RR_FIXED_BYTES, rdlen)) != DNS_ERR_NONE)
		return e;
	q->edns = true;
	q->edns_udp_bytes = dns_get16(rr + 2);
	return DNS_ERR_NONE;
}

/* Reads the header into Q and checks that this is a plain query. */
static enum dns_error
header_parse(const uint8_t *msg, size_t len, enum dns_transport transport, struct dns_query *q)
{
	if (len < DNS_HEADER_BYTES)
		return DNS_ERR_SHORT_HEADER;
	q->header_ok = true;
	q->id = dns_get16(msg);
	q->opcode = (msg[2] >> 3) & 0x0f;
	q->rd = (msg[2] & DNS_FLAG_RD) != 0;
	q->reply_max_bytes = transport == DNS_TRANSPORT_TCP ? DNS_TCP_MAX_BYTES : DNS_UDP_MAX_BYTES;
	/* Answering a response could start a loop between two resolvers. */
	if (msg[2] & DNS_FLAG_QR)
		return DNS_ERR_NOT_QUERY;
	if (q->opcode != DNS_OPCODE_QUERY)
		return DNS_ERR_OPCODE;
	if (dns_get16(msg + 4) != 1)
		return DNS_ERR_QDCOUNT;
	if (dns_get16(msg + 6) != 0 || dns_get16(msg + 8) != 0 || dns_get16(msg + 10) > 1)
		return DNS_ERR_SECTION_COUNT;
	return DNS_ERR_NONE;
}

/* Reads the question at *POS into Q. */
static enum dns_error
question_parse(const uint8_t *msg, size_t len, size_t *pos, struct dns_query *q)
{
	struct dns_name name;
	enum dns_error e;

	if ((e = name_decode(msg, len, pos, &name)) != DNS_ERR_NONE)
		return e;
	if (len - *pos < DNS_QUESTION_TAIL_BYTES)
		return DNS_ERR_TRUNCATED;
	q->qtype = dns_get16(msg + *pos);
	q->qclass = dns_get16(msg + *pos + 2);
	*pos += DNS_QUESTION_TAIL_BYTES;
	memcpy(q->qname_wire, name.wire, name.wire_len);
	q->qname_wire_len = name.wire_len;
	memcpy(q->name, name.text, name.text_len + 1);
	q->name_len = name.text_len;
	q->name_is_hostname = name.is_hostname;
	q->question_ok = true;
	return DNS_ERR_NONE;
}

enum dns_error
dns_parse_query(const uint8_t *msg, size_t len, enum dns_transport transport,
    struct dns_query *q)
{
	size_t pos = DNS_HEADER_BYTES;
	enum dns_error e;

	memset(q, 0, sizeof(*q));
	if ((e = header_parse(msg, len, transport, q)) != DNS_ERR_NONE)
		return e;
	if ((e = question_parse(msg, len, &pos, q)) != DNS_ERR_NONE)
		return e;
	if (dns_get16(msg + 10) == 1 && (e = opt_parse(msg, len, &pos, q)) != DNS_ERR_NONE)
		return e;
	if (pos != len)
		return DNS_ERR_TRAILING_BYTES;
	if (q->edns && transport == DNS_TRANSPORT_UDP) {
		q->reply_max_bytes = q->edns_udp_bytes;
		if (q->reply_max_bytes < DNS_UDP_MAX_BYTES)
			q->reply_max_bytes = DNS_UDP_MAX_BYTES;
		if (q->reply_max_bytes > DNS_EDNS_MAX_BYTES)
			q->reply_max_bytes = DNS_EDNS_MAX_BYTES;
	}
	/* Other classes (CHAOS "version.bind" and the like) are not ours to answer. */
	return q->qclass == DNS_CLASS_IN ? DNS_ERR_NONE : DNS_ERR_QCLASS;
}

bool
dns_error_rcode(enum dns_error e, enum dns_rcode *rcode)
{
	switch (e) {
	case DNS_ERR_NONE:
	case DNS_ERR_SHORT_HEADER:
	case DNS_ERR_NOT_QUERY:
	case DNS_ERR_NO_HEADER:
	case DNS_ERR_NO_SPACE:
		return false;
	case DNS_ERR_OPCODE:
		*rcode = DNS_RCODE_NOTIMP;
		return true;
	case DNS_ERR_QCLASS:
		*rcode = DNS_RCODE_REFUSED;
		return true;
	default:
		/* EDNS version too: BADVERS would need the extended RCODE. */
		*rcode = DNS_RCODE_FORMERR;
		return true;
	}
}

enum dns_tcp_frame
dns_tcp_frame(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *msg_len,
    size_t *frame_len)
{
	size_t n;

	if (len < DNS_TCP_PREFIX_BYTES)
		return DNS_TCP_NEED_MORE;
	n = dns_get16(buf);
	if (n < DNS_HEADER_BYTES)
		return DNS_TCP_BAD_LENGTH;
	if (len - DNS_TCP_PREFIX_BYTES < n)
		return DNS_TCP_NEED_MORE;
	*msg = buf + DNS_TCP_PREFIX_BYTES;
	*msg_len = n;
	*frame_len = DNS_TCP_PREFIX_BYTES + n;
	return DNS_TCP_MESSAGE;
}

void
dns_tcp_put_length(uint8_t out[DNS_TCP_PREFIX_BYTES], size_t msg_len)
{
	out[0] = (uint8_t)(msg_len >> 8);
	out[1] = (uint8_t)msg_len;
}

static bool
writer_bytes(struct dns_writer *w, const void *p, size_t n)
{
	if (w->cap - w->len < n)
		return false;
	memcpy(w->out + w->len, p, n);
	w->len += n;
	return true;
}

static bool
writer_u16(struct dns_writer *w, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	return writer_bytes(w, b, sizeof(b));
}

static bool
writer_u32(struct dns_writer *w, uint32_t v)
{
	return writer_u16(w, (uint16_t)(v >> 16)) && writer_u16(w, (uint16_t)v);
}

/* The header of a reply to Q with ANCOUNT answers; TC when some were left out. */
static bool
reply_header(struct dns_writer *w, const struct dns_query *q, enum dns_rcode rcode,
    uint16_t ancount, bool tc)
{
	uint8_t flags2 = (uint8_t)(DNS_FLAG_QR | q->opcode << 3 | (q->rd ? DNS_FLAG_RD : 0) |
	    (tc ? DNS_FLAG_TC : 0));
	uint8_t flags3 = (uint8_t)(DNS_FLAG_RA | rcode);

	return writer_u16(w, q->id) && writer_bytes(w, &flags2, 1) && writer_bytes(w, &flags3, 1) &&
	    writer_u16(w, q->question_ok ? 1 : 0) && writer_u16(w, ancount) &&
	    writer_u16(w, 0) && writer_u16(w, q->edns ? 1 : 0);
}

static bool
reply_question(struct dns_writer *w, const struct dns_query *q)
{
	if (!q->question_ok)
		return true;
	return writer_bytes(w, q->qname_wire, q->qname_wire_len) && writer_u16(w, q->qtype) &&
	    writer_u16(w, q->qclass);
}

/* Our OPT record: root name, our payload size, version 0, no options. */
static bool
reply_opt(struct dns_writer *w, const struct dns_query *q)
{
	if (!q->edns)
		return true;
	return writer_bytes(w, "", 1) && writer_u16(w, DNS_TYPE_OPT) &&
	    writer_u16(w, DNS_EDNS_MAX_BYTES) && writer_u32(w, 0) && writer_u16(w, 0);
}

/* One A record naming the question by a pointer to offset 12. */
static bool
reply_a_record(struct dns_writer *w, const uint8_t addr[4], uint32_t ttl_s)
{
	return writer_u16(w, (uint16_t)(DNS_LABEL_POINTER << 8 | DNS_HEADER_BYTES)) &&
	    writer_u16(w, DNS_TYPE_A) && writer_u16(w, DNS_CLASS_IN) && writer_u32(w, ttl_s) &&
	    writer_u16(w, 4) && writer_bytes(w, addr, 4);
}

/* A writer over OUT limited to what both the caller and Q allow. */
static struct dns_writer
reply_writer(const struct dns_query *q, uint8_t *out, size_t cap)
{
	struct dns_writer w = { out, cap, 0 };

	if (w.cap > q->reply_max_bytes)
		w.cap = q->reply_max_bytes;
	return w;
}

/* Writes the whole reply: header, question, answers that fit, OPT. */
static enum dns_error
reply_write(const struct dns_query *q, enum dns_rcode rcode, const uint8_t (*addrs)[4],
    size_t naddrs, uint32_t ttl_s, uint8_t *out, size_t cap, size_t *out_len)
{
	struct dns_writer w = reply_writer(q, out, cap);
	size_t fixed, room, n;

	if (!q->header_ok)
		return DNS_ERR_NO_HEADER;
	fixed = DNS_HEADER_BYTES + (q->edns ? DNS_OPT_RECORD_BYTES : 0) +
	    (q->question_ok ? q->qname_wire_len + DNS_QUESTION_TAIL_BYTES : 0);
	if (fixed > w.cap)
		return DNS_ERR_NO_SPACE;
	room = (w.cap - fixed) / DNS_A_RECORD_BYTES;
	n = naddrs < room ? naddrs : room;
	reply_header(&w, q, rcode, (uint16_t)n, n < naddrs);
	reply_question(&w, q);
	for (size_t i = 0; i < n; i++)
		reply_a_record(&w, addrs[i], ttl_s);
	reply_opt(&w, q);
	*out_len = w.len;
	return DNS_ERR_NONE;
}

enum dns_error
dns_build_a(const struct dns_query *q, const uint8_t (*addrs)[4], size_t naddrs,
    uint32_t ttl_s, uint8_t *out, size_t cap, size_t *out_len)
{
	return reply_write(q, DNS_RCODE_NOERROR, addrs, naddrs, ttl_s, out, cap, out_len);
}

enum dns_error
dns_build_rcode(const struct dns_query *q, enum dns_rcode rcode, uint8_t *out, size_t cap,
    size_t *out_len)
{
	return reply_write(q, rcode, NULL, 0, 0, out, cap, out_len);
}

const char *
dns_strerror(enum dns_error e)
{
	switch (e) {
	case DNS_ERR_NONE: return "no error";
	case DNS_ERR_SHORT_HEADER: return "message shorter than a DNS header";
	case DNS_ERR_NOT_QUERY: return "message is a response, not a query";
	case DNS_ERR_OPCODE: return "opcode is not QUERY";
	case DNS_ERR_QDCOUNT: return "question count is not 1";
	case DNS_ERR_SECTION_COUNT: return "query carries answers, authority, or extra records";
	case DNS_ERR_TRUNCATED: return "a field runs past the end of the message";
	case DNS_ERR_LABEL_TOO_LONG: return "label longer than 63 bytes";
	case DNS_ERR_NAME_TOO_LONG: return "name longer than 255 bytes";
	case DNS_ERR_POINTER_FORWARD: return "compression pointer points forward";
	case DNS_ERR_POINTER_LOOP: return "compression pointer loops back into the name";
	case DNS_ERR_POINTER_HEADER: return "compression pointer points into the header";
	case DNS_ERR_POINTER_LIMIT: return "too many compression pointers in one name";
	case DNS_ERR_QCLASS: return "query class is not IN";
	case DNS_ERR_ADDITIONAL_NOT_OPT: return "additional record is not EDNS OPT";
	case DNS_ERR_BAD_OPT: return "EDNS OPT record is malformed";
	case DNS_ERR_EDNS_VERSION: return "EDNS version is not 0";
	case DNS_ERR_TRAILING_BYTES: return "bytes after the end of the query";
	case DNS_ERR_NO_HEADER: return "no header to answer";
	case DNS_ERR_NO_SPACE: return "reply does not fit in the buffer";
	}
	return "unknown DNS error";
}
