/* DNS messages for the stub resolver (RFC 1035, 6891): parses one query as
 * it arrives over UDP or TCP and builds the few answers the stub gives.
 * Pure: no I/O, no logging, no allocation, no recursion.
 *
 * The query name is decoded to text with every byte that is not a letter,
 * digit, '-' or '_' escaped (RFC 1035 master-file style: "\." for a dot
 * inside a label, "\000" for NUL), so two different names never give the
 * same text; name_is_hostname says whether the name needed no escape.
 *
 * NODATA is a NOERROR answer with no records and no SOA in the authority
 * section, and NXDOMAIN has no SOA either: the stub's clients are stub
 * resolvers that do not cache negative answers anyway (RFC 2308 section 5
 * only lets a cache keep one without an SOA for a short while). */
#ifndef CORRAL_DNS_H
#define CORRAL_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER_BYTES 12
/* A name's wire form: labels, their length bytes and the root byte. */
#define DNS_NAME_MAX_BYTES 255
#define DNS_LABEL_MAX_BYTES 63
/* Compression pointers followed while decoding one name; each must also
 * point before the previous one, so this only cuts long chains short. */
#define DNS_POINTER_MAX_FOLLOWS 16
/* The text form: at most 253 label bytes, each escaped as at most "\DDD". */
#define DNS_NAME_TEXT_MAX_BYTES (4 * (DNS_NAME_MAX_BYTES - 2))
/* A UDP reply without EDNS. */
#define DNS_UDP_MAX_BYTES 512
/* The most a UDP reply may grow to when EDNS asks for more (DNS flag day
 * 2020: avoids IP fragmentation); also the size the stub advertises. */
#define DNS_EDNS_MAX_BYTES 1232
/* A reply over TCP: the 2-byte length prefix's limit. */
#define DNS_TCP_MAX_BYTES 65535
#define DNS_TCP_PREFIX_BYTES 2

#define DNS_TYPE_A 1
#define DNS_TYPE_NS 2
#define DNS_TYPE_SOA 6
#define DNS_TYPE_TXT 16
#define DNS_TYPE_AAAA 28
#define DNS_TYPE_OPT 41
#define DNS_TYPE_ANY 255
#define DNS_CLASS_IN 1

enum dns_transport {
	DNS_TRANSPORT_UDP,
	DNS_TRANSPORT_TCP,	/* the message without its length prefix */
};

enum dns_rcode {
	DNS_RCODE_NOERROR = 0,
	DNS_RCODE_FORMERR = 1,
	DNS_RCODE_SERVFAIL = 2,
	DNS_RCODE_NXDOMAIN = 3,
	DNS_RCODE_NOTIMP = 4,
	DNS_RCODE_REFUSED = 5,
};

/* Why a message was refused or a reply could not be built. */
enum dns_error {
	DNS_ERR_NONE,
	DNS_ERR_SHORT_HEADER,
	DNS_ERR_NOT_QUERY,		/* QR set: a response, never answered */
	DNS_ERR_OPCODE,
	DNS_ERR_QDCOUNT,
	DNS_ERR_SECTION_COUNT,		/* answers, authority, or more than one additional */
	DNS_ERR_TRUNCATED,		/* a field runs past the end of the message */
	DNS_ERR_LABEL_TOO_LONG,
	DNS_ERR_NAME_TOO_LONG,
	DNS_ERR_POINTER_FORWARD,
	DNS_ERR_POINTER_LOOP,
	DNS_ERR_POINTER_HEADER,
	DNS_ERR_POINTER_LIMIT,
	DNS_ERR_QCLASS,
	DNS_ERR_ADDITIONAL_NOT_OPT,
	DNS_ERR_BAD_OPT,
	DNS_ERR_EDNS_VERSION,
	DNS_ERR_TRAILING_BYTES,
	DNS_ERR_NO_HEADER,		/* building a reply to a message without a header */
	DNS_ERR_NO_SPACE,
};

/* A parsed query; the header fields are filled in as soon as they were
 * read, so a refusal can still be answered (see dns_error_rcode). */
struct dns_query {
	bool header_ok;			/* id, opcode, rd are valid */
	bool question_ok;		/* the question below is valid */
	uint16_t id;
	uint8_t opcode;
	bool rd;
	uint16_t qtype;
	uint16_t qclass;
	size_t qname_wire_len;
	uint8_t qname_wire[DNS_NAME_MAX_BYTES];	/* uncompressed, case as sent */
	size_t name_len;
	char name[DNS_NAME_TEXT_MAX_BYTES + 1];	/* lower case, escaped, no trailing dot; "." for the root */
	bool name_is_hostname;		/* letters, digits, '-', '_' only; not the root */
	bool edns;			/* an OPT record came with the query */
	uint16_t edns_udp_bytes;	/* the payload size it advertised */
	size_t reply_max_bytes;		/* the largest reply this query may get */
};

/* Parses one query message (for TCP, without its length prefix) into Q.
 * On error Q says as much as was read before it. */
enum dns_error dns_parse_query(const uint8_t *msg, size_t len, enum dns_transport transport,
    struct dns_query *q);
/* The answer a failed parse deserves; false when none must be sent (no
 * header, or a response that an answer could loop with). */
bool dns_error_rcode(enum dns_error e, enum dns_rcode *rcode);

/* The outcome of looking for one length-prefixed message in a TCP stream. */
enum dns_tcp_frame {
	DNS_TCP_NEED_MORE,	/* keep reading */
	DNS_TCP_MESSAGE,	/* *msg, *msg_len: one message; *frame_len: bytes to drop */
	DNS_TCP_BAD_LENGTH,	/* the prefix announces less than a header: close */
};
enum dns_tcp_frame dns_tcp_frame(const uint8_t *buf, size_t len, const uint8_t **msg,
    size_t *msg_len, size_t *frame_len);
/* Writes MSG_LEN (at most DNS_TCP_MAX_BYTES) as the 2-byte prefix into OUT. */
void dns_tcp_put_length(uint8_t out[DNS_TCP_PREFIX_BYTES], size_t msg_len);

/* Builds into OUT (CAP bytes) an answer to Q with the IPv4 addresses ADDRS
 * (4 bytes each, network order) and TTL_S; the question is echoed and each
 * answer names it by a compression pointer. Records that would pass
 * min(CAP, Q's reply_max_bytes) are left out and TC is set. */
enum dns_error dns_build_a(const struct dns_query *q, const uint8_t (*addrs)[4], size_t naddrs,
    uint32_t ttl_s, uint8_t *out, size_t cap, size_t *out_len);
/* Builds a reply with no records and RCODE: NOERROR is NODATA; NXDOMAIN,
 * REFUSED, SERVFAIL, FORMERR, NOTIMP as they say. The question is echoed
 * when Q has one. */
enum dns_error dns_build_rcode(const struct dns_query *q, enum dns_rcode rcode, uint8_t *out,
    size_t cap, size_t *out_len);

/* A short English description of E. */
const char *dns_strerror(enum dns_error e);

#endif
