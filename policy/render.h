/* Rendering: the policy a sandbox gets for its roots, and any policy as
 * plain YAML text (no anchors, no aliases; keys in the schema's order). The
 * rendered policy does not depend on the machine: the system directories
 * are listed whether or not they exist here, and corral-init skips the
 * absent ones when it applies them. */
#ifndef CORRAL_POLICY_RENDER_H
#define CORRAL_POLICY_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "policy/policy.h"

/* The most YAML text one policy may render to. */
#define RENDER_YAML_MAX_BYTES (4u * 1024 * 1024)
/* The key (and name) of the entry that holds the grants' hosts. */
#define RENDER_CREDENTIALS_KEY "credentials"
/* The binary glob that matches every executable. */
#define RENDER_ANY_BINARY "/" "**"

enum render_err {
	RENDER_OK = 0,
	RENDER_ERR_NOMEM,
	RENDER_ERR_BAD_PATH,            /* a root or HOME not absolute, or with "." or ".." */
	RENDER_ERR_ROOT_ID,             /* uid or gid 0: never root inside */
	RENDER_ERR_GRANT_HOST,          /* a grant's host is not a valid host pattern */
	RENDER_ERR_GRANT_PORT,          /* a grant's endpoint has no port, or one outside 1-65535 */
	RENDER_ERR_KEY_TAKEN,           /* the profile already has a "credentials" entry */
	RENDER_ERR_EMIT,                /* libyaml refused to write the text */
	RENDER_ERR_TOO_BIG,             /* over RENDER_YAML_MAX_BYTES, or over the caller's buffer */
};

/* One root of a sandbox: an absolute path, read-write or read-only. */
struct render_root {
	const char *path;
	bool writable;
};

/* One credential grant's hosts, each "host:port" ("github.com:22"). */
struct render_grant {
	const char *name;
	const char *const *hosts;
	size_t nhosts;
};

/* What a sandbox's policy is rendered from. */
struct render_spec {
	const struct render_root *roots;
	size_t nroots;
	const struct policy *profile;   /* its network_policies are copied; NULL: none */
	uid_t uid;                      /* run_as; never 0 */
	gid_t gid;
	const char *home;               /* the private HOME, read-write; NULL: none listed */
	const char *runtime_dir;        /* NULL: LIBEXECDIR "/corral" */
	const struct render_grant *grants;
	size_t ngrants;
};

/* A one-line description of ERR, for messages. */
const char *render_strerror(enum render_err err);

/* The corral runtime folder (corral-init and its files): LIBEXECDIR "/corral". */
const char *render_runtime_default(void);

/* Builds the policy for SPEC into *OUT (policy_free() it): every writable
 * root (and HOME, and /tmp) in read_write, every other root, the system
 * directories and the runtime in read_only, nothing else; landlock
 * hard_requirement; process run_as uid:gid; the profile's network entries,
 * plus a "credentials" entry (binaries: RENDER_ANY_BINARY) holding the
 * grants' hosts. */
enum render_err render_policy(const struct render_spec *spec, struct policy **out);

/* Writes P as YAML into a malloc'd, NUL-terminated *OUT of *LEN bytes
 * (LEN may be NULL). Loading the text gives a policy equal to P. */
enum render_err render_yaml(const struct policy *p, char **out, size_t *len);

/* Writes TEXT as one YAML comment line, "# TEXT\n", into DST (SIZE bytes,
 * NUL included), cut to fit: each control byte (a newline among them)
 * becomes '?', so no text, a path for instance, can end the comment and
 * start YAML of its own. */
void render_comment(const char *text, char *dst, size_t size);

/* The same into DST (SIZE bytes, NUL included); RENDER_ERR_TOO_BIG when it
 * does not fit, DST then holding an empty string. */
enum render_err render_yaml_buffer(const struct policy *p, char *dst, size_t size,
    size_t *len);

#endif
