/* Credential grants: which files of the caller's home a grant copies into
 * the sandbox's private home, which hosts it adds to the policy's
 * "credentials" entry, and which variables it sets in every command's
 * environment. Some are built into corral; the operator adds others in
 * corrald.yaml (corrald.yaml(5), "credentials"). */
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

/* A grant as the broker checks it and the monitor applies it: built-in
 * (pointing into static data) or the operator's (into the configuration). */
struct grant {
	const char *name;
	const char *const *paths;       /* relative to the home, no "..", no leading "/" */
	size_t npaths;
	const char *const *hosts;       /* "host:port" */
	size_t nhosts;
	const char *const *env;         /* "NAME=VALUE", VALUE may hold ${HOME} */
	size_t nenv;
};

/* Finds NAME among the built-in grants, then among EXTRA (NEXTRA of them),
 * into *OUT. -1 when there is no such grant. */
int grant_find(const char *name, const struct grant *extra, size_t nextra, struct grant *out);
/* The names grant_find knows, comma-separated, into BUF (cut to SIZE). */
void grant_names(const struct grant *extra, size_t nextra, char *buf, size_t size);

/* The built-in grant called NAME; NULL when there is none. */
const struct grant_def *grant_builtin(const char *name);
/* The built-in grants' names, comma-separated, for messages ("ssh, gh, aws, kube"). */
const char *grant_builtin_names(void);

#endif
