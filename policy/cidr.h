/* CIDR ranges as corral's files and the proxy write them ("10.0.0.0/8",
 * "fd00::/8"): strict parsing, the ranges no allow list may name, and
 * containment. Pure functions over bytes: no allocation, no I/O. */
#ifndef CORRAL_POLICY_CIDR_H
#define CORRAL_POLICY_CIDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

#define POLICY_CIDR_V4_BITS 32
#define POLICY_CIDR_V6_BITS 128

enum policy_cidr_err {
	POLICY_CIDR_OK = 0,
	POLICY_CIDR_ERR_FORM,           /* no '/' */
	POLICY_CIDR_ERR_ADDRESS,        /* no dotted-quad IPv4 or IPv6 address (zone ids refused) */
	POLICY_CIDR_ERR_PREFIX,         /* the prefix is not 1-3 digits without a leading zero */
	POLICY_CIDR_ERR_PREFIX_RANGE,   /* the prefix is over 32 (IPv4) or 128 (IPv6) */
	POLICY_CIDR_ERR_HOST_BITS,      /* bits set past the prefix */
};

/* Why an allow list may not name a range (policy_cidr_forbidden()). */
enum policy_cidr_verdict {
	POLICY_CIDR_ALLOWED = 0,
	POLICY_CIDR_EVERYTHING,         /* a /0: every address, internal ones included */
	POLICY_CIDR_UNREACHABLE,        /* loopback, link-local or unspecified, in any form */
};

/* A named range, for tables of ranges some key may not touch. */
struct policy_cidr_range {
	struct policy_cidr cidr;
	const char *what;               /* "the loopback range 127.0.0.0/8" */
};

/* 32 for AF_INET, 128 for anything else. */
unsigned policy_cidr_bits(int family);
/* Parses TEXT, "ADDRESS/PREFIX", into OUT strictly (the family is IPv6
 * when the address has a ':'). On an error OUT keeps what was read: the
 * family from ERR_ADDRESS on, the address and prefix length with
 * ERR_HOST_BITS. */
enum policy_cidr_err policy_cidr_parse(const char *text, struct policy_cidr *out);
/* Parses TEXT, a single address, into OUT as a /32 or /128: OK or ERR_ADDRESS. */
enum policy_cidr_err policy_cidr_parse_address(const char *text, struct policy_cidr *out);
/* Clears the bits of C's address past its prefix: its network. */
void policy_cidr_mask(struct policy_cidr *c);
/* True when A and B agree on their first BITS bits. */
bool policy_cidr_prefix_equal(const uint8_t *a, const uint8_t *b, unsigned bits);
/* True when the address of FAMILY at BYTES (4 or 16 bytes, network order)
 * lies inside CIDR (NULL: false). A family mismatch is false. */
bool policy_cidr_contains(const struct policy_cidr *cidr, int family, const uint8_t *bytes);
/* The WHAT of the first of the N RANGES that C shares an address with, or
 * NULL. IPv4 ranges are also matched in the IPv6 forms that carry an IPv4
 * address: v4-mapped, v4-compatible and NAT64 (64:ff9b::/96). */
const char *policy_cidr_touches(const struct policy_cidr *c,
    const struct policy_cidr_range *ranges, size_t n);
/* Whether an allow list (allowed_ips, egress.allow_cidrs) may name C: a
 * /0 never, nor a range that touches loopback, link-local or unspecified
 * addresses, which a sandbox can never reach; *RANGE then names it. */
enum policy_cidr_verdict policy_cidr_forbidden(const struct policy_cidr *c, const char **range);

#endif
