/* Address classification for the egress proxy's address check
 * (corral-policy(5), "ADDRESSES"): which addresses the proxy may dial. Pure
 * functions over bytes: no I/O, no allocation outside addr_policy_new(), no
 * logging.
 *
 * Three tiers:
 * - always refused, whatever any allow list says: loopback, unspecified,
 *   link-local, metadata, broadcast, multicast, the host's own addresses
 *   and the sandbox pool (these two registered at run time);
 * - internal, refused unless the entry's allowed_ips or the operator's
 *   egress.allow_cidrs name them: RFC 1918, CGNAT, 0/8, 240/4,
 *   198.18/15, documentation, 192.0.0/24, ULA, site-local, NAT64, 6to4,
 *   Teredo, discard, v4-compatible, and every IPv6 address outside
 *   2000::/3 that no other rule names;
 * - public: everything else.
 * IPv6 forms that embed an IPv4 address (v4-mapped, v4-compatible, 6to4,
 * NAT64 64:ff9b::/96) take the embedded address's class when it is not
 * public; a v4-mapped address is judged exactly as the IPv4 address it is. */
#ifndef CORRAL_EGRESS_ADDR_H
#define CORRAL_EGRESS_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "policy/policy.h"

#define ADDR_POLICY_LOCAL_MAX 1024      /* host addresses/prefixes, count */
#define ADDR_POLICY_POOL_MAX 16         /* sandbox pool prefixes, count */
#define ADDR_POLICY_ALLOW_MAX 256       /* operator egress.allow_cidrs, count */
#define ADDR_CIDR_TEXT_MAX_BYTES 49     /* "ffff:...:255.255.255.255/128" with its NUL */

enum addr_class {
	ADDR_CLASS_PUBLIC = 0,
	/* Always refused. */
	ADDR_CLASS_LOOPBACK,            /* 127/8, ::1 */
	ADDR_CLASS_UNSPECIFIED,         /* 0.0.0.0, :: */
	ADDR_CLASS_LINK_LOCAL,          /* 169.254/16, fe80::/10 */
	ADDR_CLASS_METADATA,            /* 169.254.169.254, fd00:ec2::254 */
	ADDR_CLASS_BROADCAST,           /* 255.255.255.255 */
	ADDR_CLASS_MULTICAST,           /* 224/4, ff00::/8 */
	/* Internal: refused unless an allow list names them. */
	ADDR_CLASS_THIS_NETWORK,        /* 0/8 */
	ADDR_CLASS_PRIVATE,             /* 10/8, 172.16/12, 192.168/16 */
	ADDR_CLASS_SHARED,              /* 100.64/10 (CGNAT) */
	ADDR_CLASS_IETF_PROTOCOL,       /* 192.0.0/24 */
	ADDR_CLASS_BENCHMARK,           /* 198.18/15, 2001:2::/48 */
	ADDR_CLASS_DOCUMENTATION,       /* 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32 */
	ADDR_CLASS_RESERVED,            /* 240/4; IPv6 outside 2000::/3 not named below */
	ADDR_CLASS_ULA,                 /* fc00::/7 */
	ADDR_CLASS_SITE_LOCAL,          /* fec0::/10 */
	ADDR_CLASS_NAT64,               /* 64:ff9b::/96, 64:ff9b:1::/48 */
	ADDR_CLASS_6TO4,                /* 2002::/16 */
	ADDR_CLASS_TEREDO,              /* 2001::/32 */
	ADDR_CLASS_DISCARD,             /* 100::/64 */
	ADDR_CLASS_V4_COMPAT,           /* ::/96 (deprecated v4-compatible) */
	ADDR_CLASS_INVALID,             /* not AF_INET or AF_INET6 */
};

/* The outcome of addr_check(); the DENY_* values say why. */
enum addr_verdict {
	ADDR_ALLOW_PUBLIC = 0,          /* a public address */
	ADDR_ALLOW_LISTED,              /* internal, but an allow list names it */
	ADDR_DENY_LOOPBACK,
	ADDR_DENY_UNSPECIFIED,
	ADDR_DENY_LINK_LOCAL,
	ADDR_DENY_METADATA,
	ADDR_DENY_BROADCAST,
	ADDR_DENY_MULTICAST,
	ADDR_DENY_HOST_ADDRESS,         /* one of the host's own addresses */
	ADDR_DENY_SANDBOX_POOL,         /* inside the sandbox pool */
	ADDR_DENY_INTERNAL,             /* internal and no allow list names it */
	ADDR_DENY_INVALID,              /* not an IPv4 or IPv6 socket address */
};

enum addr_err {
	ADDR_OK = 0,
	ADDR_ERR_FAMILY,                /* not AF_INET or AF_INET6 */
	ADDR_ERR_PREFIX,                /* prefix length over 32 (IPv4) or 128 (IPv6) */
	ADDR_ERR_HOST_BITS,             /* text CIDR with bits set past the prefix */
	ADDR_ERR_SYNTAX,                /* text that is not ADDRESS[/PREFIX] */
	ADDR_ERR_FULL,                  /* the policy holds its maximum of that kind */
	ADDR_ERR_NOMEM,
};

/* The run-time part of the address policy: the host's own addresses, the
 * sandbox pool, the operator's egress.allow_cidrs. Opaque; fixed capacity. */
struct addr_policy;

/* A one-line description of ERR, for messages. */
const char *addr_strerror(enum addr_err err);
/* A short name of CLS for ledgers ("loopback", "private", "nat64", ...). */
const char *addr_class_name(enum addr_class cls);
/* True for the classes no allow list can open. */
bool addr_class_always_refused(enum addr_class cls);
/* A short reason for V for ledgers and 403 bodies ("loopback",
 * "sandbox_pool", "internal", ...; "allowed" for the ALLOW values). */
const char *addr_verdict_reason(enum addr_verdict v);
/* True for ADDR_ALLOW_PUBLIC and ADDR_ALLOW_LISTED. */
bool addr_verdict_allowed(enum addr_verdict v);

/* Class of an IPv4 address (network byte order). */
enum addr_class addr_classify_v4(const struct in_addr *a);
/* Class of an IPv6 address; embedded IPv4 forms as described above. */
enum addr_class addr_classify_v6(const struct in6_addr *a);
/* Class of an AF_INET or AF_INET6 socket address; ADDR_CLASS_INVALID otherwise. */
enum addr_class addr_classify(const struct sockaddr *sa);

/* Parses TEXT of LEN bytes as a strict dotted-quad IPv4 address: exactly
 * four decimal parts, each 0-255, no leading zeros, no sign, nothing else.
 * "127.1", "2130706433", "0x7f.0.0.1" and "0177.0.0.1" are refused. */
bool addr_parse_ipv4(const char *text, size_t len, uint8_t out[4]);
/* Parses "ADDRESS" or "ADDRESS/PREFIX" (IPv4 strict as above, or IPv6
 * without zone id) into OUT, with policy_cidr_parse() (policy/cidr.h), the
 * parser of allowed_ips and egress.allow_cidrs; no prefix means a single
 * address. Bits set past the prefix are ADDR_ERR_HOST_BITS; OUT is zeroed
 * on any error. */
enum addr_err addr_cidr_parse(const char *text, struct policy_cidr *out);
/* True when the address of FAMILY at BYTES (4 or 16 bytes, network
 * order) lies inside CIDR: policy_cidr_contains(). A family mismatch is
 * false. */
bool addr_cidr_contains(const struct policy_cidr *cidr, int family, const uint8_t *bytes);

/* An empty address policy; NULL if out of memory. */
struct addr_policy *addr_policy_new(void);
/* Frees AP; NULL is fine. */
void addr_policy_free(struct addr_policy *ap);
/* Registers an address or prefix the host routes locally (its own). */
enum addr_err addr_policy_add_local(struct addr_policy *ap, const struct policy_cidr *c);
/* Registers a sandbox pool prefix (10.231.0.0/16 by default). */
enum addr_err addr_policy_add_pool(struct addr_policy *ap, const struct policy_cidr *c);
/* Registers one of the operator's egress.allow_cidrs. */
enum addr_err addr_policy_add_allow(struct addr_policy *ap, const struct policy_cidr *c);

/* Decides whether the proxy may dial SA. The always-refused classes, the
 * host's addresses and the sandbox pool are refused first, whatever
 * ALLOWED (the entry's allowed_ips, N of them; NULL when N is 0) or the
 * operator's list say; then an internal address passes only when one of
 * those lists contains it. A v4-mapped IPv6 address is judged, and
 * matched against the lists, as its IPv4 address. AP may be NULL (no
 * host addresses, no pool, no operator list). */
enum addr_verdict addr_check(const struct addr_policy *ap, const struct sockaddr *sa,
    const struct policy_cidr *allowed, size_t n);

#endif
