/* Does the host's firewall let the fence work? (ARCHITECTURE.md, "The
 * fence", and `corral status` in corral(1).) In nftables a packet must be
 * accepted by every base chain at a hook, whatever table holds it: another
 * table's input or prerouting chain with policy drop, or an early drop or
 * reject rule (ufw, firewalld, a hand-written table), drops the sandboxes'
 * traffic to their gateway even though corral's own table accepts it.
 *
 * fwcheck reads the ruleset as libnftables' JSON (`list ruleset`, schema
 * of libnftables-json(5)) and follows, in every base chain of the ip and
 * inet families at the hooks the traffic crosses, each flow the fence needs:
 * from a sandbox (saddr in the pool, arriving on a sandbox interface, ct
 * state new) TCP and UDP to the gateway's ports at prerouting and input,
 * TCP to anywhere at prerouting (the transparent path, before NAT), and
 * the gateway's replies (ct state established) at output and postrouting.
 * Jumps and gotos are followed. A match it understands (addresses,
 * ports, protocols, ct state, interface names and groups) is judged
 * against the flow; one it does not is taken as "may match". A drop,
 * reject or drop policy the flow may reach makes the verdict "at risk";
 * a queue, a missing chain or too deep a walk makes it "unknown".
 *
 * fwcheck_judge_json is pure (no I/O, no logging) and is what the unit tests
 * feed canned rulesets to; fwcheck_run lists the ruleset of the calling
 * process's network namespace with libnftables (CAP_NET_ADMIN: the root
 * monitor) and judges it. */
#ifndef CORRAL_FWCHECK_H
#define CORRAL_FWCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most gateway ports of each protocol a target lists. */
#define FWCHECK_PORTS_MAX 4
/* The longest reason, with its NUL. */
#define FWCHECK_REASON_MAX_BYTES 256
/* The largest ruleset text judged; a larger one is "unknown". */
#define FWCHECK_RULESET_MAX_BYTES (64u << 20)

enum fwcheck_verdict {
	FWCHECK_OK,        /* every base chain on the path lets the flows through */
	FWCHECK_AT_RISK,   /* a chain may drop them: the reason names table and chain */
	FWCHECK_UNKNOWN,   /* the ruleset could not be listed or judged: the reason says why */
};

/* What the fence needs to pass. */
struct fwcheck_target {
	uint32_t pool_addr;                  /* the sandbox pool, host byte order */
	unsigned int pool_prefix;            /* its prefix length, 0..32 */
	uint16_t tcp_ports[FWCHECK_PORTS_MAX];  /* the gateway's TCP ports: 1001, 1002, 53 */
	size_t n_tcp_ports;
	uint16_t udp_ports[FWCHECK_PORTS_MAX];  /* its UDP ports: 53 */
	size_t n_udp_ports;
	const char *own_table;               /* corral's table (family inet), not judged */
	const char *ifname_prefix;           /* the sandbox interfaces' name prefix ("crs"), or NULL */
	uint32_t ifgroup;                    /* their interface group, 0 if not known */
};

struct fwcheck_result {
	enum fwcheck_verdict verdict;
	char reason[FWCHECK_REASON_MAX_BYTES];  /* one line; empty when ok */
};

/* Judges JSON (LEN bytes, no NUL needed), the output of `list ruleset` in
 * libnftables' JSON, for target T, into *R. Never fails: a text it cannot
 * read gives FWCHECK_UNKNOWN with the reason. */
void fwcheck_judge_json(const char *json, size_t len, const struct fwcheck_target *t,
    struct fwcheck_result *r);
/* Lists the calling network namespace's ruleset with libnftables and
 * judges it into *R (FWCHECK_UNKNOWN, with nftables' error, when the list
 * fails: it needs CAP_NET_ADMIN). iptables-legacy tables, which nftables
 * cannot see, turn an "ok" into "unknown". */
void fwcheck_run(const struct fwcheck_target *t, struct fwcheck_result *r);
/* fwcheck_run's two halves: the ruleset listed and judged, and the legacy
 * tables' check on that verdict (a file read: cheap, and no notification
 * tells of them). */
void fwcheck_ruleset(const struct fwcheck_target *t, struct fwcheck_result *r);
void fwcheck_legacy(struct fwcheck_result *r);

/* A watch on the calling network namespace's nftables ruleset: a netlink
 * socket in NFNLGRP_NFTABLES, which the kernel tells of every change. A
 * verdict of fwcheck_ruleset stands until the watch sees one, so a status
 * lists nothing while nothing changed. The socket, or -1 (then every
 * check lists the ruleset). */
int fwcheck_watch_open(void);
/* True when the ruleset may have changed since the last call (a
 * notification came, or some were lost), or FD is -1; drains FD. */
bool fwcheck_watch_changed(int fd);
/* "ok", "at risk" or "unknown". */
const char *fwcheck_verdict_name(enum fwcheck_verdict v);

#endif
