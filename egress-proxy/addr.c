/* Address classification: tables of special ranges, most specific first,
 * and the allow/deny decision of the address check (corral-policy(5),
 * "ADDRESSES"). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "egress-proxy/addr.h"
#include "policy/cidr.h"

#define ADDR_V4_BYTES 4
#define ADDR_V6_BYTES 16
#define ADDR_V4_BITS 32
#define ADDR_V6_BITS 128
#define ADDR_V4_PART_MAX_DIGITS 3       /* "255" */
#define ADDR_V4_PARTS 4
#define ADDR_NO_EMBED (-1)              /* a v6 range without an embedded IPv4 address */

/* One IPv4 range, host byte order. */
struct addr_range4 {
	uint32_t net;
	uint8_t bits;
	enum addr_class cls;
};

/* One IPv6 range. EMBED is the byte offset of an embedded IPv4 address
 * (ADDR_NO_EMBED for none); such a range takes the embedded address's
 * class when that is not public, else CLS (PUBLIC: purely the embedded one). */
struct addr_range6 {
	uint8_t net[ADDR_V6_BYTES];
	uint8_t bits;
	int embed;
	enum addr_class cls;
};

struct addr_policy {
	struct policy_cidr local[ADDR_POLICY_LOCAL_MAX];
	size_t nlocal;
	struct policy_cidr pool[ADDR_POLICY_POOL_MAX];
	size_t npool;
	struct policy_cidr allow[ADDR_POLICY_ALLOW_MAX];
	size_t nallow;
};

/* First match wins: exact addresses before the ranges that hold them. */
static const struct addr_range4 addr_ranges4[] = {
	{ 0xa9fea9feu, 32, ADDR_CLASS_METADATA },      /* 169.254.169.254 */
	{ 0xffffffffu, 32, ADDR_CLASS_BROADCAST },     /* 255.255.255.255 */
	{ 0x00000000u, 32, ADDR_CLASS_UNSPECIFIED },   /* 0.0.0.0 */
	{ 0x7f000000u, 8, ADDR_CLASS_LOOPBACK },       /* 127/8 */
	{ 0xa9fe0000u, 16, ADDR_CLASS_LINK_LOCAL },    /* 169.254/16 */
	{ 0xe0000000u, 4, ADDR_CLASS_MULTICAST },      /* 224/4 */
	{ 0x00000000u, 8, ADDR_CLASS_THIS_NETWORK },   /* 0/8 */
	{ 0x0a000000u, 8, ADDR_CLASS_PRIVATE },        /* 10/8 */
	{ 0xac100000u, 12, ADDR_CLASS_PRIVATE },       /* 172.16/12 */
	{ 0xc0a80000u, 16, ADDR_CLASS_PRIVATE },       /* 192.168/16 */
	{ 0x64400000u, 10, ADDR_CLASS_SHARED },        /* 100.64/10 */
	{ 0xc0000200u, 24, ADDR_CLASS_DOCUMENTATION }, /* 192.0.2/24 */
	{ 0xc6336400u, 24, ADDR_CLASS_DOCUMENTATION }, /* 198.51.100/24 */
	{ 0xcb007100u, 24, ADDR_CLASS_DOCUMENTATION }, /* 203.0.113/24 */
	{ 0xc0000000u, 24, ADDR_CLASS_IETF_PROTOCOL }, /* 192.0.0/24 */
	{ 0xc6120000u, 15, ADDR_CLASS_BENCHMARK },     /* 198.18/15 */
	{ 0xf0000000u, 4, ADDR_CLASS_RESERVED },       /* 240/4 */
};

static const struct addr_range6 addr_ranges6[] = {
	{ { 0 }, 128, ADDR_NO_EMBED, ADDR_CLASS_UNSPECIFIED },                  /* :: */
	{ { [15] = 1 }, 128, ADDR_NO_EMBED, ADDR_CLASS_LOOPBACK },              /* ::1 */
	{ { 0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02 }, 128,
	    ADDR_NO_EMBED, ADDR_CLASS_METADATA },                               /* fd00:ec2::254 */
	{ { [10] = 0xff, [11] = 0xff }, 96, 12, ADDR_CLASS_PUBLIC },            /* ::ffff:0:0/96 */
	{ { 0 }, 96, 12, ADDR_CLASS_V4_COMPAT },                                /* ::/96 */
	{ { 0x00, 0x64, 0xff, 0x9b }, 96, 12, ADDR_CLASS_NAT64 },               /* 64:ff9b::/96 */
	{ { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, ADDR_NO_EMBED,
	    ADDR_CLASS_NAT64 },                                                 /* 64:ff9b:1::/48 */
	{ { 0x01, 0x00 }, 64, ADDR_NO_EMBED, ADDR_CLASS_DISCARD },              /* 100::/64 */
	{ { 0x20, 0x01, 0x00, 0x02, 0x00, 0x00 }, 48, ADDR_NO_EMBED,
	    ADDR_CLASS_BENCHMARK },                                             /* 2001:2::/48 */
	{ { 0x20, 0x01, 0x00, 0x00 }, 32, ADDR_NO_EMBED, ADDR_CLASS_TEREDO },   /* 2001::/32 */
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, ADDR_NO_EMBED,
	    ADDR_CLASS_DOCUMENTATION },                                         /* 2001:db8::/32 */
	{ { 0x20, 0x02 }, 16, 2, ADDR_CLASS_6TO4 },                             /* 2002::/16 */
	{ { 0xfc }, 7, ADDR_NO_EMBED, ADDR_CLASS_ULA },                         /* fc00::/7 */
	{ { 0xfe, 0x80 }, 10, ADDR_NO_EMBED, ADDR_CLASS_LINK_LOCAL },           /* fe80::/10 */
	{ { 0xfe, 0xc0 }, 10, ADDR_NO_EMBED, ADDR_CLASS_SITE_LOCAL },           /* fec0::/10 */
	{ { 0xff }, 8, ADDR_NO_EMBED, ADDR_CLASS_MULTICAST },                   /* ff00::/8 */
	/* Why: only 2000::/3 is allocated for global unicast; anything
	 * else not named above is not a host on the internet (fail closed). */
	{ { 0x20 }, 3, ADDR_NO_EMBED, ADDR_CLASS_PUBLIC },                      /* 2000::/3 */
	{ { 0 }, 0, ADDR_NO_EMBED, ADDR_CLASS_RESERVED },                       /* ::/0 */
};

static const char *const addr_errors[] = {
	[ADDR_OK] = "no error",
	[ADDR_ERR_FAMILY] = "the address family is neither IPv4 nor IPv6",
	[ADDR_ERR_PREFIX] = "the prefix length is over 32 (IPv4) or 128 (IPv6)",
	[ADDR_ERR_HOST_BITS] = "the CIDR has address bits set past its prefix length",
	[ADDR_ERR_SYNTAX] = "not an IPv4 or IPv6 address with an optional /prefix",
	[ADDR_ERR_FULL] = "too many addresses of that kind",
	[ADDR_ERR_NOMEM] = "out of memory",
};

static const char *const addr_class_names[] = {
	[ADDR_CLASS_PUBLIC] = "public",
	[ADDR_CLASS_LOOPBACK] = "loopback",
	[ADDR_CLASS_UNSPECIFIED] = "unspecified",
	[ADDR_CLASS_LINK_LOCAL] = "link_local",
	[ADDR_CLASS_METADATA] = "metadata",
	[ADDR_CLASS_BROADCAST] = "broadcast",
	[ADDR_CLASS_MULTICAST] = "multicast",
	[ADDR_CLASS_THIS_NETWORK] = "this_network",
	[ADDR_CLASS_PRIVATE] = "private",
	[ADDR_CLASS_SHARED] = "shared_cgnat",
	[ADDR_CLASS_IETF_PROTOCOL] = "ietf_protocol",
	[ADDR_CLASS_BENCHMARK] = "benchmarking",
	[ADDR_CLASS_DOCUMENTATION] = "documentation",
	[ADDR_CLASS_RESERVED] = "reserved",
	[ADDR_CLASS_ULA] = "unique_local",
	[ADDR_CLASS_SITE_LOCAL] = "site_local",
	[ADDR_CLASS_NAT64] = "nat64",
	[ADDR_CLASS_6TO4] = "6to4",
	[ADDR_CLASS_TEREDO] = "teredo",
	[ADDR_CLASS_DISCARD] = "discard",
	[ADDR_CLASS_V4_COMPAT] = "v4_compatible",
	[ADDR_CLASS_INVALID] = "invalid",
};

static const char *const addr_verdict_reasons[] = {
	[ADDR_ALLOW_PUBLIC] = "allowed",
	[ADDR_ALLOW_LISTED] = "allowed",
	[ADDR_DENY_LOOPBACK] = "loopback",
	[ADDR_DENY_UNSPECIFIED] = "unspecified",
	[ADDR_DENY_LINK_LOCAL] = "link_local",
	[ADDR_DENY_METADATA] = "metadata",
	[ADDR_DENY_BROADCAST] = "broadcast",
	[ADDR_DENY_MULTICAST] = "multicast",
	[ADDR_DENY_HOST_ADDRESS] = "host_address",
	[ADDR_DENY_SANDBOX_POOL] = "sandbox_pool",
	[ADDR_DENY_INTERNAL] = "internal",
	[ADDR_DENY_INVALID] = "invalid_address",
};

#define ADDR_NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *
addr_strerror(enum addr_err err)
{
	if ((size_t)err >= ADDR_NELEM(addr_errors) || addr_errors[err] == NULL)
		return "unknown address error";
	return addr_errors[err];
}

const char *
addr_class_name(enum addr_class cls)
{
	if ((size_t)cls >= ADDR_NELEM(addr_class_names) || addr_class_names[cls] == NULL)
		return "invalid";
	return addr_class_names[cls];
}

bool
addr_class_always_refused(enum addr_class cls)
{
	return cls >= ADDR_CLASS_LOOPBACK && cls <= ADDR_CLASS_MULTICAST;
}

const char *
addr_verdict_reason(enum addr_verdict v)
{
	if ((size_t)v >= ADDR_NELEM(addr_verdict_reasons) || addr_verdict_reasons[v] == NULL)
		return "invalid_address";
	return addr_verdict_reasons[v];
}

bool
addr_verdict_allowed(enum addr_verdict v)
{
	return v == ADDR_ALLOW_PUBLIC || v == ADDR_ALLOW_LISTED;
}

static uint32_t
addr_v4_host_order(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Class of the IPv4 address in the 4 bytes at B. */
static enum addr_class
addr_classify_v4_bytes(const uint8_t *b)
{
	uint32_t a = addr_v4_host_order(b);

	for (size_t i = 0; i < ADDR_NELEM(addr_ranges4); i++) {
		const struct addr_range4 *r = &addr_ranges4[i];
		uint32_t mask = r->bits == 0 ? 0 : 0xffffffffu << (ADDR_V4_BITS - r->bits);

		if ((a & mask) == r->net)
			return r->cls;
	}
	return ADDR_CLASS_PUBLIC;
}

enum addr_class
addr_classify_v4(const struct in_addr *a)
{
	return addr_classify_v4_bytes((const uint8_t *)&a->s_addr);
}

/* The range of addr_ranges6 that holds the 16 bytes at B (the last one,
 * ::/0, holds everything). */
static const struct addr_range6 *
addr_range6_find(const uint8_t *b)
{
	size_t i;

	for (i = 0; i < ADDR_NELEM(addr_ranges6) - 1; i++)
		if (policy_cidr_prefix_equal(b, addr_ranges6[i].net, addr_ranges6[i].bits))
			break;
	return &addr_ranges6[i];
}

static enum addr_class
addr_classify_v6_bytes(const uint8_t *b)
{
	const struct addr_range6 *r = addr_range6_find(b);
	enum addr_class inner;

	if (r->embed == ADDR_NO_EMBED)
		return r->cls;
	/* Why: 2002:7f00:1:: and 64:ff9b::a00:1 reach (or name) 127.0.0.1
	 * and 10.0.0.1; judge them by the address they carry. */
	inner = addr_classify_v4_bytes(b + r->embed);
	return inner != ADDR_CLASS_PUBLIC ? inner : r->cls;
}

enum addr_class
addr_classify_v6(const struct in6_addr *a)
{
	return addr_classify_v6_bytes(a->s6_addr);
}

enum addr_class
addr_classify(const struct sockaddr *sa)
{
	if (sa == NULL)
		return ADDR_CLASS_INVALID;
	if (sa->sa_family == AF_INET)
		return addr_classify_v4(&((const struct sockaddr_in *)(const void *)sa)->sin_addr);
	if (sa->sa_family == AF_INET6)
		return addr_classify_v6(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
	return ADDR_CLASS_INVALID;
}

/* Parses one decimal part of a dotted quad: 1-3 digits, no leading zero,
 * at most 255. Returns the bytes used, 0 when it is not such a part. */
static size_t
addr_parse_v4_part(const char *s, size_t len, uint8_t *out)
{
	unsigned v = 0;
	size_t i;

	for (i = 0; i < len && i < ADDR_V4_PART_MAX_DIGITS + 1; i++) {
		if (s[i] < '0' || s[i] > '9')
			break;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (i == 0 || i > ADDR_V4_PART_MAX_DIGITS || v > 255 || (s[0] == '0' && i > 1))
		return 0;
	*out = (uint8_t)v;
	return i;
}

bool
addr_parse_ipv4(const char *text, size_t len, uint8_t out[4])
{
	size_t pos = 0, used;
	uint8_t b[ADDR_V4_BYTES];

	for (int part = 0; part < ADDR_V4_PARTS; part++) {
		if (part > 0) {
			if (pos >= len || text[pos] != '.')
				return false;
			pos++;
		}
		used = addr_parse_v4_part(text + pos, len - pos, &b[part]);
		if (used == 0)
			return false;
		pos += used;
	}
	if (pos != len)
		return false;
	memcpy(out, b, sizeof(b));
	return true;
}

/* The address error for the shared parser's ERR. */
static enum addr_err
addr_cidr_err(enum policy_cidr_err err)
{
	switch (err) {
	case POLICY_CIDR_OK:
		return ADDR_OK;
	case POLICY_CIDR_ERR_PREFIX_RANGE:
		return ADDR_ERR_PREFIX;
	case POLICY_CIDR_ERR_HOST_BITS:
		return ADDR_ERR_HOST_BITS;
	default:
		return ADDR_ERR_SYNTAX;
	}
}

enum addr_err
addr_cidr_parse(const char *text, struct policy_cidr *out)
{
	enum addr_err e;

	memset(out, 0, sizeof(*out));
	if (text == NULL || strnlen(text, ADDR_CIDR_TEXT_MAX_BYTES) == ADDR_CIDR_TEXT_MAX_BYTES)
		return ADDR_ERR_SYNTAX;
	if (strchr(text, '/') != NULL)
		e = addr_cidr_err(policy_cidr_parse(text, out));
	else
		e = addr_cidr_err(policy_cidr_parse_address(text, out));
	if (e != ADDR_OK)
		memset(out, 0, sizeof(*out));
	return e;
}

bool
addr_cidr_contains(const struct policy_cidr *cidr, int family, const uint8_t *bytes)
{
	return policy_cidr_contains(cidr, family, bytes);
}

struct addr_policy *
addr_policy_new(void)
{
	return calloc(1, sizeof(struct addr_policy));
}

void
addr_policy_free(struct addr_policy *ap)
{
	free(ap);
}

/* Appends C to the array ARR of N entries, at most MAX. */
static enum addr_err
addr_policy_append(struct policy_cidr *arr, size_t *n, size_t max, const struct policy_cidr *c)
{
	if (c->family != AF_INET && c->family != AF_INET6)
		return ADDR_ERR_FAMILY;
	if (c->prefix_len > (c->family == AF_INET ? ADDR_V4_BITS : ADDR_V6_BITS))
		return ADDR_ERR_PREFIX;
	if (*n >= max)
		return ADDR_ERR_FULL;
	arr[(*n)++] = *c;
	return ADDR_OK;
}

enum addr_err
addr_policy_add_local(struct addr_policy *ap, const struct policy_cidr *c)
{
	return addr_policy_append(ap->local, &ap->nlocal, ADDR_POLICY_LOCAL_MAX, c);
}

enum addr_err
addr_policy_add_pool(struct addr_policy *ap, const struct policy_cidr *c)
{
	return addr_policy_append(ap->pool, &ap->npool, ADDR_POLICY_POOL_MAX, c);
}

enum addr_err
addr_policy_add_allow(struct addr_policy *ap, const struct policy_cidr *c)
{
	return addr_policy_append(ap->allow, &ap->nallow, ADDR_POLICY_ALLOW_MAX, c);
}

/* An address as the proxy would dial it: family and bytes, with a
 * v4-mapped IPv6 address turned into the IPv4 address it is, and the IPv4
 * address that a 6to4, NAT64 or v4-compatible form carries. */
struct addr_view {
	int family;
	uint8_t bytes[ADDR_V6_BYTES];
	bool has_embedded;
	uint8_t embedded[ADDR_V4_BYTES];
};

/* Fills V from SA; false when SA is not IPv4 or IPv6. */
static bool
addr_view_init(struct addr_view *v, const struct sockaddr *sa)
{
	const struct addr_range6 *r;

	memset(v, 0, sizeof(*v));
	if (sa == NULL)
		return false;
	if (sa->sa_family == AF_INET) {
		v->family = AF_INET;
		memcpy(v->bytes, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, ADDR_V4_BYTES);
		return true;
	}
	if (sa->sa_family != AF_INET6)
		return false;
	v->family = AF_INET6;
	memcpy(v->bytes, ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr, ADDR_V6_BYTES);
	r = addr_range6_find(v->bytes);
	if (r->embed != ADDR_NO_EMBED && r->cls == ADDR_CLASS_PUBLIC) {
		/* v4-mapped: the kernel dials it as the IPv4 address. */
		v->family = AF_INET;
		memmove(v->bytes, v->bytes + r->embed, ADDR_V4_BYTES);
		memset(v->bytes + ADDR_V4_BYTES, 0, ADDR_V6_BYTES - ADDR_V4_BYTES);
	} else if (r->embed != ADDR_NO_EMBED) {
		v->has_embedded = true;
		memcpy(v->embedded, v->bytes + r->embed, ADDR_V4_BYTES);
	}
	return true;
}

/* True when one of the N CIDRs at ARR contains V (or, with EMBEDDED, the
 * IPv4 address V carries). */
static bool
addr_view_in(const struct addr_view *v, const struct policy_cidr *arr, size_t n, bool embedded)
{
	for (size_t i = 0; i < n; i++) {
		if (addr_cidr_contains(&arr[i], v->family, v->bytes))
			return true;
		if (embedded && v->has_embedded && addr_cidr_contains(&arr[i], AF_INET, v->embedded))
			return true;
	}
	return false;
}

static enum addr_verdict
addr_class_verdict(enum addr_class cls)
{
	switch (cls) {
	case ADDR_CLASS_LOOPBACK: return ADDR_DENY_LOOPBACK;
	case ADDR_CLASS_UNSPECIFIED: return ADDR_DENY_UNSPECIFIED;
	case ADDR_CLASS_LINK_LOCAL: return ADDR_DENY_LINK_LOCAL;
	case ADDR_CLASS_METADATA: return ADDR_DENY_METADATA;
	case ADDR_CLASS_BROADCAST: return ADDR_DENY_BROADCAST;
	case ADDR_CLASS_MULTICAST: return ADDR_DENY_MULTICAST;
	case ADDR_CLASS_PUBLIC: return ADDR_ALLOW_PUBLIC;
	case ADDR_CLASS_INVALID: return ADDR_DENY_INVALID;
	default: return ADDR_DENY_INTERNAL;
	}
}

enum addr_verdict
addr_check(const struct addr_policy *ap, const struct sockaddr *sa,
    const struct policy_cidr *allowed, size_t n)
{
	struct addr_view v;
	enum addr_class cls;

	if (!addr_view_init(&v, sa))
		return ADDR_DENY_INVALID;
	cls = addr_classify(sa);
	if (addr_class_always_refused(cls))
		return addr_class_verdict(cls);
	/* Why: the host's own addresses and the pool (other sandboxes and
	 * their gateways) turn the proxy into a springboard; no allow list
	 * opens them, and an embedded IPv4 form of them counts too. */
	if (ap != NULL && addr_view_in(&v, ap->local, ap->nlocal, true))
		return ADDR_DENY_HOST_ADDRESS;
	if (ap != NULL && addr_view_in(&v, ap->pool, ap->npool, true))
		return ADDR_DENY_SANDBOX_POOL;
	if (cls == ADDR_CLASS_PUBLIC)
		return ADDR_ALLOW_PUBLIC;
	/* The lists must name the address itself (after v4-mapped
	 * unwrapping), never just the IPv4 address a 6to4 form carries. */
	if ((allowed != NULL && addr_view_in(&v, allowed, n, false)) ||
	    (ap != NULL && addr_view_in(&v, ap->allow, ap->nallow, false)))
		return ADDR_ALLOW_LISTED;
	return ADDR_DENY_INTERNAL;
}
