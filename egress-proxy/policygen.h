/* A generation of a tenant's network policy: the policy and its decision
 * index, numbered, shared by the tenant (its current one) and by every
 * connection and DNS query decided under it, and freed when the last of
 * them lets go. A policy change makes a new generation; what was decided
 * under the old one keeps it (and --close-revoked re-judges it). */
#ifndef CORRAL_POLICYGEN_H
#define CORRAL_POLICYGEN_H

#include <stdint.h>

struct policy;
struct policy_index;

struct policy_gen {
	unsigned refs;
	uint64_t number;                /* 1, 2, ...: per proxy, in order of creation */
	struct policy *policy;
	struct policy_index *index;
};

/* A generation of POLICY (taken) numbered NUMBER, with one reference; NULL
 * if out of memory (POLICY is then still the caller's). */
struct policy_gen *policy_gen_new(struct policy *policy, uint64_t number);
/* Takes one more reference to G; returns G. */
struct policy_gen *policy_gen_ref(struct policy_gen *g);
/* Drops a reference; the last frees G, its index and its policy. NULL is fine. */
void policy_gen_unref(struct policy_gen *g);

#endif
