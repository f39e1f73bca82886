/* Policy suggestions (corral(1), `policy suggest`; the page of "FROM
 * INSIDE"): from a sandbox's refusals, the smallest additions that would
 * have allowed them. One per host, port and binary refused by name; a
 * wildcard `*.DOMAIN` only where two or more names under one registrable
 * domain were refused on the same port for the same binary, and never over
 * a public suffix (the PSL, as the policy's own wildcard check). */
#ifndef CORRAL_SUGGEST_H
#define CORRAL_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

#define SUGGEST_TEXT_MAX_BYTES 256      /* a host or a binary, as a denial holds it */
#define SUGGEST_RISK_MAX_BYTES 160

/* One refusal, as the denials ring keeps it. */
struct suggest_denial {
	const char *host;
	uint16_t port;                  /* 0: none (a DNS refusal) */
	const char *binary;             /* "" or NULL: unknown */
	const char *reason;
	uint32_t count;
};

/* One addition: HOST (a name or "*.DOMAIN") on PORT for BINARY ("": any). */
struct suggestion {
	char host[POLICY_HOST_MAX_BYTES + 3];
	uint16_t port;
	char binary[SUGGEST_TEXT_MAX_BYTES];
	bool wildcard;
	uint64_t denials;               /* the refusals it answers, counted */
	char risk[SUGGEST_RISK_MAX_BYTES];      /* a sentence: what else it lets through */
};

/* Whether refusal D is one an added entry would have allowed: a name
 * refused for itself or for its binary (not an address, a socket, a
 * packet the fence rejected). */
bool suggest_applies(const struct suggest_denial *d);

/* The suggestions for the N refusals at D, into OUT (up to MAX, in the
 * order of their first refusal); the number written (0 also when out of
 * memory). Each host's registrable domain is looked up once: the page
 * inside serves this on the broker's loop. */
size_t suggest_make(const struct suggest_denial *d, size_t n, struct suggestion *out, size_t max);

#endif
