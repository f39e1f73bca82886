/* The host-side fence (ARCHITECTURE.md, "The fence"): one nftables table,
 * `inet corral_<instance>`, per daemon instance, installed once with static
 * rules that match the sandboxes' interface group, so sandboxes come and
 * go without touching it. Written with libnftables, never an `nft` child.
 *
 * What it enforces, for traffic arriving on an interface of the group:
 * TCP to the gateway's own connect and DNS ports passes; every other TCP is
 * redirected to the transparent port; UDP to port 53 anywhere goes to the
 * DNS stub; everything else is rejected at once (ICMP admin-prohibited or
 * a TCP reset, never a silent drop), counted, and, when a log group is
 * set, copied to it for the ledger. Nothing the host sends
 * reaches a sandbox's address except replies. */
#ifndef CORRAL_FENCE_H
#define CORRAL_FENCE_H

#include <stdint.h>

/* The longest instance id: lower-case letters, digits and '_'. */
#define FENCE_INSTANCE_MAX_CHARS 32
/* The longest reason fence_reason() returns, with its NUL. */
#define FENCE_REASON_MAX_BYTES 256

/* The gateway's listening ports on each sandbox's host address. */
struct fence_ports {
	uint16_t connect;	/* the CONNECT proxy as sandboxes see it, 3128 */
	uint16_t connect_listen;	/* ... where it listens, 1001 */
	uint16_t dns;		/* the DNS stub, 53 */
	uint16_t transparent;	/* the transparent listener, 1002 */
};

struct fence;

/* A fence for the daemon instance INSTANCE (its table is corral_INSTANCE);
 * changes nothing yet. NULL with errno (EINVAL for a bad id). */
struct fence *fence_new(const char *instance);
/* Frees F (NULL is fine); the table stays as it is. */
void fence_free(struct fence *f);

/* Installs the table for interface group GROUP (never 0, the group of
 * every interface) and PORTS, replacing this instance's table atomically
 * if one is there. 0, or -1 with a reason. */
int fence_install(struct fence *f, uint32_t group, const struct fence_ports *ports);
/* From the next fence_install on, rejected packets are also copied to the
 * NFLOG group LOG_GROUP (rate-limited per interface; see fence.c), which
 * the ledger's bypass records are read from. */
void fence_set_log_group(struct fence *f, uint16_t log_group);
/* Removes this instance's table; 0 also when there was none. */
int fence_remove(struct fence *f);
/* 1 when this instance's table is installed, 0 when not, -1 on error. */
int fence_present(struct fence *f);
/* The packets rejected so far (bypass attempts), into *PACKETS. */
int fence_bypass_count(struct fence *f, uint64_t *packets);
/* Why the last failed call failed: one line, never NULL. */
const char *fence_reason(const struct fence *f);
/* The name of F's nftables table (family inet). */
const char *fence_table(const struct fence *f);

#endif
