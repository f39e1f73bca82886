/* The decision index: a policy's endpoints arranged for the egress proxy's
 * per-connection question "does some entry allow this host, port and
 * binary?" in well under a microsecond. Built once per policy generation;
 * read-only afterwards, so several threads may share one index. */
#ifndef CORRAL_POLICY_INDEX_H
#define CORRAL_POLICY_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/match.h"
#include "policy/policy.h"

enum policy_verdict {
	POLICY_ALLOW = 0,               /* an entry allows it; the match says which */
	POLICY_DENY_NO_RULE,            /* no entry names this host:port */
	POLICY_DENY_BINARY,             /* entries name host:port, but none allows these binaries */
	POLICY_NEED_BINARY,             /* entries name host:port, all scoped to binaries: identify first */
};

/* What allowed a connection. */
struct policy_match {
	const struct policy_rule *rule;
	const struct policy_endpoint *endpoint;
	const char *binary;             /* the exe or ancestor that matched; NULL for MATCH_ANY_BINARY_GLOB */
};

struct policy_index;

/* Builds the index of P, which must outlive it and not change while it
 * lives. Endpoint names must be normalized (match_host_parse). NULL when
 * out of memory. */
struct policy_index *policy_index_new(const struct policy *p);

/* Frees IDX; NULL is fine. */
void policy_index_free(struct policy_index *idx);

/* Decides a connection to NAME (normalized, see match_host_normalize) on
 * PORT by one process:
 * - BINARIES holds its executable's path and its ancestors' up to the run's
 *   boundary (NBINARIES of them); an entry allows when any of them matches
 *   any of its globs, or when it lists MATCH_ANY_BINARY_GLOB (no identification needed).
 * - BINARIES == NULL means "not identified yet": when every entry naming
 *   host:port is binary-scoped, or a binary-scoped entry whose TLS is
 *   terminated would decide over the one that allows, the answer is
 *   POLICY_NEED_BINARY, and the caller identifies the process and asks
 *   again. A non-NULL BINARIES with
 *   NBINARIES == 0 means "identification found no record": binary-scoped
 *   entries then refuse (POLICY_DENY_BINARY). NEED_BINARY is never the
 *   answer when BINARIES is non-NULL.
 * - A socket with several owners is allowed only if every owner is: the
 *   caller asks once per owner and requires POLICY_ALLOW from each.
 * On POLICY_ALLOW, OUT (when non-NULL) names the first allowing entry in
 * policy order (rules, then their endpoints); otherwise OUT is zeroed. */
enum policy_verdict policy_index_decide(const struct policy_index *idx, const char *name,
    uint16_t port, const char *const *binaries, size_t nbinaries, struct policy_match *out);

/* True when some entry that can allow anything names the normalized NAME
 * on some port: the DNS stub answers such names and no others. */
bool policy_index_name_allowed(const struct policy_index *idx, const char *name);

/* A short, stable reason for the ledger and denials ("host_not_allowed",
 * "binary_not_allowed", "binary_not_identified", "allowed"). */
const char *policy_verdict_reason(enum policy_verdict verdict);

#endif
