/* A sandbox's secrets in memory of their own (corral(1), "--secret"): one
 * anonymous mapping, locked so that it is never written to swap, left out
 * of core dumps, and wiped before it is unmapped. The values are copied
 * in once, each with a fresh placeholder of its shape; the proxy's view
 * of them (secretsub.h) points into the mapping, so no other copy is kept
 * for as long as the sandbox lives. */
#ifndef CORRAL_SECRETSTORE_H
#define CORRAL_SECRETSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress-proxy/secretsub.h"

#define SECRETSTORE_HOSTS_MAX 8         /* "host:port" of one secret */
#define SECRETSTORE_HEADERS_MAX 4
#define SECRETSTORE_QUERY_MAX 4         /* query parameters it may be the value of */

/* One secret to keep. */
struct secretstore_entry {
	const char *name;
	const char *value;                      /* printable ASCII, NUL-terminated */
	const char *const *hosts;               /* "host:port", exact names */
	size_t nhosts;
	const char *const *headers;             /* none: "Authorization" */
	size_t nheaders;
	const char *const *query;               /* none: never in a query */
	size_t nquery;
};

struct secretstore;

/* Keeps the N entries (at most SECRETSUB_MAX) in locked memory, each with a
 * new placeholder. NULL with a one-line reason in *ERR (malloc'd): memory
 * that cannot be locked refuses the secrets rather than keep them where
 * they could be swapped out. */
struct secretstore *secretstore_new(const struct secretstore_entry *e, size_t n, char **err);
/* Wipes, unlocks and unmaps S; NULL is fine. */
void secretstore_free(struct secretstore *s);

/* The secrets as the proxy swaps them (*N of them); valid while S lives. */
const struct secretsub_secret *secretstore_secrets(const struct secretstore *s, size_t *n);
/* True when some secret of S may go to HOST on PORT: the proxy then
 * terminates the connection's TLS, whatever the policy's entry says. */
bool secretstore_covers(const struct secretstore *s, const char *host, uint16_t port);
/* The "host:port" endpoints of secret I. */
const char *const *secretstore_hosts(const struct secretstore *s, size_t i, size_t *n);

#endif
