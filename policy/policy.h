/* The policy model: what a loaded, validated policy holds. Loading (load.h),
 * matching (match.h), the decision index (index.h) and rendering (render.h)
 * all work on these structures. Everything here is plain data: no I/O. */
#ifndef CORRAL_POLICY_H
#define CORRAL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POLICY_VERSION 1
#define POLICY_HOST_MAX_BYTES 253
/* Host Unix sockets a policy may list (filesystem_policy.unix_sockets),
 * each bound inside at POLICY_UNIX_SOCKETS_DIR/NAME, NAME at most
 * POLICY_UNIX_SOCKET_NAME_MAX_BYTES (the inside path stays well under the
 * 100 bytes the kernel guard compares). */
#define POLICY_UNIX_SOCKETS_MAX 16
#define POLICY_UNIX_SOCKET_NAME_MAX_BYTES 64
#define POLICY_UNIX_SOCKETS_DIR "/run/corral/sockets"
#define POLICY_ENV_NAME_MAX_BYTES 64

enum policy_landlock_compat {
	POLICY_LANDLOCK_HARD_REQUIREMENT = 0,   /* a missing layer refuses the sandbox */
	POLICY_LANDLOCK_BEST_EFFORT,            /* start with enforcement: partial */
};

enum policy_host_kind {
	POLICY_HOST_EXACT = 0,          /* github.com */
	POLICY_HOST_ONE_LABEL,          /* *.example.com: exactly one label, not the apex */
	POLICY_HOST_ANY_DEPTH,          /* **.example.com: one or more labels, not the apex */
};

/* A host pattern, normalized: lower case, no trailing dot. For wildcards,
 * NAME is the suffix after "*." or "**." ("example.com"). */
struct policy_host {
	enum policy_host_kind kind;
	char *name;
};

/* An address range an entry may reach although it is internal. */
struct policy_cidr {
	int family;                     /* AF_INET or AF_INET6 */
	uint8_t addr[16];               /* network byte order; 4 bytes used for AF_INET */
	uint8_t prefix_len;
};

/* A list of strings; for filesystem paths: absolute, no ".." segment, no
 * trailing '/' (but "/"). */
struct policy_paths {
	char **paths;
	size_t npaths;
};

/* What the proxy does with an endpoint's TLS. */
enum policy_tls {
	POLICY_TLS_PASSTHROUGH = 0,     /* relayed untouched, read only for its SNI */
	POLICY_TLS_TERMINATE,           /* terminated: each HTTP request is judged (rules) */
};

/* A method and path rule of a terminated endpoint: a request passes when
 * its method is one of METHODS and its path matches one of PATHS (globs,
 * match.h's binary syntax); an empty list matches anything. */
struct policy_http_rule {
	struct policy_paths methods;    /* upper case HTTP tokens */
	struct policy_paths paths;      /* absolute globs, "/" alone too */
	unsigned line, col;
};

struct policy_endpoint {
	struct policy_host host;
	uint16_t *ports;                /* 1-65535, sorted, no duplicates */
	size_t nports;
	bool sni_check;                 /* CONNECT: close when the ClientHello names another host (default true) */
	struct policy_cidr *allowed_ips;
	size_t nallowed_ips;
	enum policy_tls tls;
	struct policy_http_rule *http_rules;    /* with POLICY_TLS_TERMINATE only; none: every request */
	size_t nhttp_rules;
	unsigned line, col;             /* where the entry starts in its file (1-based; 0 when built in code) */
};

/* An absolute path or glob: '*' within one segment, '**' across segments. */
struct policy_binary {
	char *path;
};

/* One entry of network_policies. */
struct policy_rule {
	char *key;                      /* its key under network_policies */
	char *name;                     /* its name: field (the key when absent) */
	struct policy_endpoint *endpoints;
	size_t nendpoints;
	struct policy_binary *binaries;
	size_t nbinaries;
	bool any_binary;                /* some binary is the match-all glob: no identification needed */
};

/* A host Unix socket the sandbox may connect to, bound in read-only. */
struct policy_unix_socket {
	char *path;                     /* on the host: absolute, normalized */
	char *name;                     /* inside: POLICY_UNIX_SOCKETS_DIR "/" NAME */
	char *env;                      /* a variable naming it inside for every command, or NULL */
	unsigned line, col;             /* where the entry starts (1-based; 0 when built in code) */
};

struct policy {
	int version;
	struct policy_paths read_only;
	struct policy_paths read_write;
	enum policy_landlock_compat landlock;
	bool has_process;               /* a process: section was given */
	char *run_as_user;              /* NULL when absent */
	char *run_as_group;
	struct policy_rule *rules;
	size_t nrules;
	bool has_write_guard;
	char *write_guard_allowed_root; /* "workspace" when absent */
	char *write_guard_deny_reason;
	struct policy_unix_socket *unix_sockets;        /* at most POLICY_UNIX_SOCKETS_MAX */
	size_t nunix_sockets;
};

/* An empty policy (version 1, hard_requirement, no rules); NULL if out of memory. */
struct policy *policy_new(void);
/* Frees P and everything it holds; NULL is fine. */
void policy_free(struct policy *p);
/* Frees what E holds (not E itself). */
void policy_endpoint_clear(struct policy_endpoint *e);
/* Frees what R holds (not R itself). */
void policy_rule_clear(struct policy_rule *r);
/* A deep copy of P; NULL if out of memory. */
struct policy *policy_dup(const struct policy *p);
/* True when A and B say the same thing (positions ignored). */
bool policy_equal(const struct policy *a, const struct policy *b);

#endif
