/* Secrets that never enter a sandbox (corral(1), "--secret"): the kinds
 * corral knows (built in, and the operator's in corrald.yaml(5),
 * "secrets"), where a kind's value is read from (by the CLI, with the
 * caller's rights), the checks on a value, and the files a built-in kind
 * writes inside with the placeholder in the value's place. The value
 * itself lives only in the broker's locked memory and is swapped in at the
 * proxy (egress-proxy/secretsub.h). Pure: no I/O but the reads a caller
 * asks for, nothing logged. */
#ifndef CORRAL_POLICY_SECRET_H
#define CORRAL_POLICY_SECRET_H

#include <stdbool.h>
#include <stddef.h>

#define SECRET_HOSTS_MAX 8              /* "host:port" of one kind */
#define SECRET_ENV_MAX 4                /* variables that hold its placeholder */
#define SECRET_HEADERS_MAX 4            /* request headers it may go in */
#define SECRET_QUERY_MAX 4              /* query parameters it may be the value of */
#define SECRET_KINDS_MAX 16             /* corrald.yaml's secrets */
#define SECRET_PER_SANDBOX_MAX 16       /* --secret options of one sandbox */
#define SECRET_VALUE_MAX_BYTES 4096     /* as the proxy swaps them (SECRETSUB_VALUE_MAX_BYTES) */
#define SECRET_VALUE_MIN_BYTES 12       /* shorter, its echo (and a Basic credential's
					 * base64 of it) could not be told from other bytes */
#define SECRET_FROM_MAX_BYTES 1024      /* a source's text */
#define SECRET_GH_HOSTS_MAX_BYTES (64 * 1024)   /* gh's hosts.yml, read whole */
#define SECRET_FILE_MAX_BYTES (8 * 1024)        /* a file written inside */
#define SECRET_DEFAULT_HEADER "Authorization"
#define SECRET_HOME_PREFIX "${HOME}/"   /* a file source's path in the grant home */

/* Where a value comes from. */
enum secret_from {
	SECRET_FROM_ENV,                /* "env:NAME": the CLI's environment variable */
	SECRET_FROM_FILE,               /* "file:PATH": a file the caller can read, whole */
	SECRET_FROM_GH_HOSTS,           /* "gh-hosts": github.com's oauth_token in
					 * HOME/.config/gh/hosts.yml */
};

struct secret_source {
	enum secret_from from;
	const char *arg;                /* the variable's name or the path (into the text parsed) */
};

/* A kind of secret: what the proxy swaps, toward which hosts, and what
 * the sandbox holds in its place. */
struct secret_kind {
	const char *name;
	const char *from;                       /* its default source, as secret_source_parse reads */
	const char *const *hosts;               /* "host:port", exact names */
	size_t nhosts;
	const char *const *env;                 /* variables set to the placeholder */
	size_t nenv;
	const char *const *headers;             /* where it may go; none: SECRET_DEFAULT_HEADER */
	size_t nheaders;
	bool builtin;
	const char *const *query;               /* query parameters it may be; none: no query */
	size_t nquery;
};

/* A file a built-in kind writes into the sandbox's private home. */
struct secret_file {
	const char *path;               /* relative to the home */
	char *content;                  /* malloc'd; holds the placeholder, never the value */
};

/* Built-in kinds first, then the operator's EXTRA (NEXTRA): NAME's kind in
 * *OUT, or -1. */
int secret_find(const char *name, const struct secret_kind *extra, size_t nextra,
    struct secret_kind *out);
/* The built-in kinds' names, comma-separated ("gh"). */
const char *secret_builtin_names(void);
/* True when NAME is a built-in kind. */
bool secret_is_builtin(const char *name);
/* The built-in kind I (0 first) in *OUT; -1 past the last. */
int secret_builtin_at(size_t i, struct secret_kind *out);

/* Reads TEXT ("env:NAME", "file:PATH", "gh-hosts") into *OUT, pointing
 * into TEXT; NULL, or why it is not a source. */
const char *secret_source_parse(const char *text, struct secret_source *out);

/* NULL when VALUE (LEN bytes) may be a secret's value: 1 to
 * SECRET_VALUE_MAX_BYTES bytes of printable ASCII (a token, a password);
 * else why not. */
const char *secret_value_check(const char *value, size_t len);
/* LEN without one trailing "\n" or "\r\n" (a file's last line). */
size_t secret_value_trim(const char *value, size_t len);

/* github.com's token from gh's hosts.yml (YAML, LEN bytes at TEXT): the
 * host's oauth_token, else that of its "user" under "users". A malloc'd
 * copy into *TOKEN (wipe it), or -1 with why in *WHY. */
int secret_gh_token(const char *text, size_t len, char **token, const char **why);

/* The files the kind NAME writes inside with PLACEHOLDER, into FILES (at
 * most SECRET_FILES_MAX); how many (0 for a kind that writes none), -1
 * when out of memory. */
#define SECRET_FILES_MAX 2
int secret_files(const char *name, const char *placeholder, struct secret_file *files);
/* Frees what secret_files made. */
void secret_files_clear(struct secret_file *files, size_t n);
/* The variables "NAME=VALUE" a built-in kind sets besides its
 * placeholder's (VALUE may hold ${HOME}); NULL-terminated. */
const char *const *secret_extra_env(const char *name);

#endif
