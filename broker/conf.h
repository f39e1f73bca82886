/* broker/conf.h, not broker/config.h: a quoted "config.h" in broker/ must
 * find autoconf's header, not this one. */
/* corrald's configuration (corrald.yaml(5)): SYSCONFDIR/corral/corrald.yaml
 * or --config, YAML, every key optional, unknown keys refused with
 * FILE:LINE:COL. Loaded whole and validated before anything uses it. */
#ifndef CORRAL_CONF_H
#define CORRAL_CONF_H

#include <stdbool.h>
#include <stddef.h>

#include "broker/limits.h"
#include "egress-proxy/proxy.h"
#include "policy/diag.h"
#include "policy/grant.h"
#include "policy/policy.h"
#include "policy/secret.h"

/* The folders configure chose (Makefile.am passes them): /etc, /var and
 * /run unless told otherwise, so that the installed unit, logrotate file
 * and man pages name the same paths. */
#define CONFIG_PATH_DEFAULT SYSCONFDIR "/corral/corrald.yaml"
#define CONFIG_SOCKET_DEFAULT RUNSTATEDIR "/corral/corrald.sock"
#define CONFIG_STATE_DIR_DEFAULT LOCALSTATEDIR "/lib/corral"
#define CONFIG_LOG_DIR_DEFAULT LOCALSTATEDIR "/log/corral"
#define CONFIG_PROFILES_DIR_DEFAULT SYSCONFDIR "/corral/profiles"
/* sun_path holds 108 bytes, the terminating NUL included. */
_Static_assert(sizeof(CONFIG_SOCKET_DEFAULT) <= 108,
    "configure --runstatedir is too long: the control socket's path must fit a Unix socket address");
#define CONFIG_MACHINE_ID_DEFAULT "local"
#define CONFIG_USER_DEFAULT "corral"         /* the broker runs as this account */
#define CONFIG_USER_MAX_BYTES 32
#define CONFIG_MAX_SANDBOXES_DEFAULT 20
#define CONFIG_WARM_POOL_PROFILES_MAX 16        /* profiles warm_pool names */
#define CONFIG_POOL_DEFAULT "10.231.0.0/16"
#define CONFIG_DNS_UPSTREAM_MAX 8
#define CONFIG_ALLOW_CIDRS_MAX 256

/* An extra credential grant defined by the operator. */
struct config_credential {
	char *name;
	char **paths;                   /* relative to the caller's home */
	size_t npaths;
	char **hosts;                   /* "host:port" */
	size_t nhosts;
	char **env;                     /* "NAME=VALUE", VALUE may hold ${HOME} */
	size_t nenv;
};

/* A secret defined by the operator (corrald.yaml(5), "secrets"). */
struct config_secret {
	char *name;
	char *from;                     /* env:NAME, file:PATH or gh-hosts: read by the CLI */
	char **hosts;                   /* "host:port", exact names */
	size_t nhosts;
	char **env;                     /* variables that hold the placeholder */
	size_t nenv;
	char **headers;                 /* where it may go; none: Authorization */
	size_t nheaders;
	char **query;                   /* query parameters it may be; none: no query */
	size_t nquery;
};

/* What one user of the control socket other than root may hold at once,
 * so that no user starves the others (root is always served). */
struct config_shares {
	unsigned connections;           /* control connections not yet answered */
	unsigned streams;               /* exec, run and logs streams open */
	uint64_t buffered_bytes;        /* bytes of requests read but not yet whole */
	unsigned tunnels;               /* egress tunnels, over all their sandboxes */
};

/* The proxy for the host's own processes (no sandbox): loopback only. */
struct config_host_proxy {
	bool enabled;
	char *listen;                   /* "127.0.0.1:3128" or "[::1]:3128" */
	char *transparent;              /* loopback ADDRESS:PORT for redirected connections, or NULL */
	char *dns;                      /* loopback ADDRESS:PORT of a DNS stub, or NULL */
	char *policy;                   /* a policy file, or NULL for PROFILE */
	char *profile;                  /* a profile name (default strict) */
	char *cgroup;                   /* clients identified when in this cgroup (v2 path), or NULL */
};

/* warm_pool: how many sandboxes of a profile are kept built ahead. */
struct config_warm {
	char *profile;
	unsigned count;                 /* 0 to max_sandboxes */
};

struct config {
	char *socket;
	char *state_dir;
	char *log_dir;
	char *profiles_dir;
	char *machine_id;
	char *user;                     /* the broker's account (default corral) */
	char *ledger_group;             /* a group that may read the ledger, or NULL */
	unsigned max_sandboxes;
	unsigned max_sandboxes_per_user;        /* a non-root user's; root is never held to it */
	struct limits_conf limits;              /* each sandbox's defaults and maximum */
	struct config_shares shares;            /* what one non-root user may hold */
	struct policy_cidr pool;
	char **dns_upstream;            /* "ip[:port]"; none: the machine's resolv.conf */
	size_t ndns_upstream;
	struct policy_cidr *allow_cidrs;
	size_t nallow_cidrs;
	struct proxy_limits egress;     /* egress: its timeouts, header and tunnel limits */
	char *upstream_ca_file;         /* egress.upstream_ca_file: PEM trusted for upstreams too, or NULL */
	struct config_credential *credentials;
	size_t ncredentials;
	struct grant *grants;           /* the same, as grant_find reads them */
	struct config_secret *secrets;
	size_t nsecrets;
	struct secret_kind *secret_kinds;       /* the same, as secret_find reads them */
	struct config_host_proxy host_proxy;
	char *metrics_listen;           /* loopback ADDRESS:PORT of the metrics listener, or NULL */
	struct config_warm *warm_pool;  /* in the file's order */
	size_t nwarm_pool;
};

/* A configuration holding every default; NULL if out of memory. */
struct config *config_new_default(void);
/* Frees C; NULL is fine. */
void config_free(struct config *c);
/* Frees C's warm_pool (and empties it). */
void config_warm_pool_free(struct config *c);

/* Loads PATH over the defaults into *OUT. A missing file at the default
 * path is no error (every key is optional); a missing file named
 * explicitly is. -1 with every error found in DIAGS. */
int config_load(const char *path, bool explicit_path, struct config **out,
    struct policy_diags *diags);

#endif
