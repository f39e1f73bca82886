/* CIDR ranges: strict parsing with inet_pton(), bit-prefix comparison, and
 * the ranges the proxy's address check never lets through. */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/cidr.h"

#define CIDR_PREFIX_MAX_DIGITS 3        /* "128" */
#define CIDR_EMBED_BYTES 12             /* the IPv6 bytes before an embedded IPv4 address */
#define CIDR_EMBED_BITS 96
#define CIDR_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Loopback, link-local and unspecified: never reachable from a sandbox
 * (corral-policy(5), "ADDRESSES"), so an allow list naming them says
 * something false. */
static const struct policy_cidr_range cidr_unreachable[] = {
	{ { AF_INET, { 127 }, 8 }, "the loopback range 127.0.0.0/8" },
	{ { AF_INET, { 169, 254 }, 16 }, "the link-local range 169.254.0.0/16" },
	{ { AF_INET, { 0 }, 32 }, "the unspecified address 0.0.0.0" },
	{ { AF_INET6, { [15] = 1 }, 128 }, "the loopback address ::1" },
	{ { AF_INET6, { 0xfe, 0x80 }, 10 }, "the link-local range fe80::/10" },
	{ { AF_INET6, { 0 }, 128 }, "the unspecified address ::" },
};

/* The first 96 bits of the IPv6 forms that carry an IPv4 address:
 * v4-mapped (::ffff:0:0/96), v4-compatible (::/96), NAT64 (64:ff9b::/96). */
static const uint8_t cidr_v4_in_v6[][CIDR_EMBED_BYTES] = {
	{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff },
	{ 0 },
	{ 0, 0x64, 0xff, 0x9b },
};

unsigned
policy_cidr_bits(int family)
{
	return family == AF_INET ? POLICY_CIDR_V4_BITS : POLICY_CIDR_V6_BITS;
}

/* Parses the LEN bytes at TEXT as an address into OUT (zeroed first): a
 * ':' makes it IPv6, else it must be a dotted quad. */
static enum policy_cidr_err
cidr_address(const char *text, size_t len, struct policy_cidr *out)
{
	char addr[INET6_ADDRSTRLEN];

	memset(out, 0, sizeof(*out));
	if (len == 0 || len >= sizeof(addr))
		return POLICY_CIDR_ERR_ADDRESS;
	memcpy(addr, text, len);
	addr[len] = '\0';
	out->family = memchr(addr, ':', len) != NULL ? AF_INET6 : AF_INET;
	if (inet_pton(out->family, addr, out->addr) != 1)
		return POLICY_CIDR_ERR_ADDRESS;
	return POLICY_CIDR_OK;
}

/* Reads the prefix length TEXT, at most MAX, strictly: digits only, no
 * sign, no leading zero. */
static enum policy_cidr_err
cidr_prefix(const char *text, unsigned max, uint8_t *out)
{
	size_t len = strlen(text);
	unsigned v = 0;

	if (len == 0 || len > CIDR_PREFIX_MAX_DIGITS || strspn(text, "0123456789") != len ||
	    (text[0] == '0' && len > 1))
		return POLICY_CIDR_ERR_PREFIX;
	for (size_t i = 0; i < len; i++)
		v = v * 10 + (unsigned)(text[i] - '0');
	if (v > max)
		return POLICY_CIDR_ERR_PREFIX_RANGE;
	*out = (uint8_t)v;
	return POLICY_CIDR_OK;
}

enum policy_cidr_err
policy_cidr_parse(const char *text, struct policy_cidr *out)
{
	const char *slash = strchr(text, '/');
	enum policy_cidr_err err;
	unsigned bits;

	memset(out, 0, sizeof(*out));
	if (slash == NULL)
		return POLICY_CIDR_ERR_FORM;
	if ((err = cidr_address(text, (size_t)(slash - text), out)) != POLICY_CIDR_OK)
		return err;
	bits = policy_cidr_bits(out->family);
	if ((err = cidr_prefix(slash + 1, bits, &out->prefix_len)) != POLICY_CIDR_OK)
		return err;
	for (unsigned bit = out->prefix_len; bit < bits; bit++)
		if (out->addr[bit / 8] & (0x80 >> (bit % 8)))
			return POLICY_CIDR_ERR_HOST_BITS;
	return POLICY_CIDR_OK;
}

enum policy_cidr_err
policy_cidr_parse_address(const char *text, struct policy_cidr *out)
{
	enum policy_cidr_err err = cidr_address(text, strlen(text), out);

	if (err == POLICY_CIDR_OK)
		out->prefix_len = (uint8_t)policy_cidr_bits(out->family);
	return err;
}

void
policy_cidr_mask(struct policy_cidr *c)
{
	for (unsigned bit = c->prefix_len; bit < policy_cidr_bits(c->family); bit++)
		c->addr[bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
}

bool
policy_cidr_prefix_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned full = bits / 8, rest = bits % 8;
	uint8_t mask;

	if (memcmp(a, b, full) != 0)
		return false;
	if (rest == 0)
		return true;
	mask = (uint8_t)(0xffu << (8 - rest));
	return (a[full] & mask) == (b[full] & mask);
}

bool
policy_cidr_contains(const struct policy_cidr *cidr, int family, const uint8_t *bytes)
{
	if (cidr == NULL || cidr->family != family || cidr->prefix_len > policy_cidr_bits(family))
		return false;
	return policy_cidr_prefix_equal(bytes, cidr->addr, cidr->prefix_len);
}

/* True when two ranges of one family share an address: one holds the other. */
static bool
cidr_overlap(const uint8_t *a, unsigned alen, const uint8_t *b, unsigned blen)
{
	return policy_cidr_prefix_equal(a, b, alen < blen ? alen : blen);
}

/* True when the IPv6 range C shares an address with the IPv4 range R in
 * one of the forms that carry an IPv4 address. */
static bool
cidr_touches_embedded(const struct policy_cidr *c, const struct policy_cidr *r)
{
	uint8_t addr[16];

	for (size_t k = 0; k < CIDR_NELEM(cidr_v4_in_v6); k++) {
		memcpy(addr, cidr_v4_in_v6[k], CIDR_EMBED_BYTES);
		memcpy(addr + CIDR_EMBED_BYTES, r->addr, 4);
		if (cidr_overlap(c->addr, c->prefix_len, addr, CIDR_EMBED_BITS + r->prefix_len))
			return true;
	}
	return false;
}

const char *
policy_cidr_touches(const struct policy_cidr *c, const struct policy_cidr_range *ranges, size_t n)
{
	/* Its own family first, so that "::/128" is named as itself and not
	 * as IPv4's 0.0.0.0 inside IPv6. */
	for (size_t i = 0; i < n; i++)
		if (ranges[i].cidr.family == c->family &&
		    cidr_overlap(c->addr, c->prefix_len, ranges[i].cidr.addr, ranges[i].cidr.prefix_len))
			return ranges[i].what;
	for (size_t i = 0; c->family == AF_INET6 && i < n; i++)
		if (ranges[i].cidr.family == AF_INET && cidr_touches_embedded(c, &ranges[i].cidr))
			return ranges[i].what;
	return NULL;
}

enum policy_cidr_verdict
policy_cidr_forbidden(const struct policy_cidr *c, const char **range)
{
	*range = NULL;
	if (c->prefix_len == 0)
		return POLICY_CIDR_EVERYTHING;
	*range = policy_cidr_touches(c, cidr_unreachable, CIDR_NELEM(cidr_unreachable));
	return *range != NULL ? POLICY_CIDR_UNREACHABLE : POLICY_CIDR_ALLOWED;
}
