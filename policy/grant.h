/* Credential grants built into corral (DESIGN section 9): which files of
 * the caller's home each copies into the sandbox's private home, which
 * hosts it adds to the policy's "credentials" entry, and which variables
 * it sets in every command's environment. */
#ifndef CORRAL_POLICY_GRANT_H
#define CORRAL_POLICY_GRANT_H

#include <stddef.h>

#define GRANT_MAX_HOSTS 4
#define GRANT_MAX_PATHS 4
#define GRANT_MAX_ENV 4
/* What an env value writes for the copy's home (the sandbox's HOME). */
#define GRANT_HOME_VAR "${HOME}"

struct grant_def {
	const char *name;
	const char *paths[GRANT_MAX_PATHS];     /* relative to the home; NULL-terminated */
	const char *hosts[GRANT_MAX_HOSTS];     /* "host:port"; NULL-terminated */
	size_t nhosts;
	const char *env[GRANT_MAX_ENV];         /* "NAME=VALUE", VALUE may hold ${HOME}; NULL-terminated */
};

/* The built-in grant called NAME; NULL when there is none. */
const struct grant_def *grant_builtin(const char *name);
/* The built-in grants' names, comma-separated, for messages ("ssh, gh, aws, kube"). */
const char *grant_builtin_names(void);

#endif
