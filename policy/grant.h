/* Credential grants built into corral (DESIGN section 9): which files of
 * the caller's home each copies into the sandbox's private home, and which
 * hosts it adds to the policy's "credentials" entry. */
#ifndef CORRAL_POLICY_GRANT_H
#define CORRAL_POLICY_GRANT_H

#include <stddef.h>

#define GRANT_MAX_HOSTS 4
#define GRANT_MAX_PATHS 4

struct grant_def {
	const char *name;
	const char *paths[GRANT_MAX_PATHS];     /* relative to the home; NULL-terminated */
	const char *hosts[GRANT_MAX_HOSTS];     /* "host:port"; NULL-terminated */
	size_t nhosts;
};

/* The built-in grant called NAME; NULL when there is none. */
const struct grant_def *grant_builtin(const char *name);
/* The built-in grants' names, comma-separated, for messages ("ssh, gh, aws, kube"). */
const char *grant_builtin_names(void);

#endif
