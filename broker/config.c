/* corrald's configuration file (corrald.yaml(5)). Three passes over one
 * document, with the YAML machinery of policy/load.c (policy/yamltree.h):
 * 1. libyaml's events become a small tree of nodes with their positions;
 *    anchors, aliases, tags, a second document and deep nesting are refused
 *    as they come, so an alias is never expanded.
 * 2. The tree's shape is checked against one table per mapping (unknown,
 *    duplicate and missing keys, wrong node types); what fits lands in a
 *    "raw" structure pointing at the tree's nodes.
 * 3. Each raw value is validated and converted over the defaults, then the
 *    keys that constrain each other are checked together.
 * Errors in any pass go to the diagnostics and the passes go on, so one run
 * reports them all; the configuration is handed out only when there are
 * none. Nothing here prints, logs or exits. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/conf.h"
#include "broker/limits.h"
#include "common/units.h"
#include "egress-proxy/http.h"
#include "egress-proxy/proxy.h"
#include "policy/cidr.h"
#include "policy/grant.h"
#include "policy/match.h"
#include "policy/name.h"
#include "policy/profile.h"
#include "policy/secret.h"
#include "policy/yamltree.h"

#define CONFIG_FILE_MAX_BYTES (256 * 1024)      /* the configuration file */
#define CONFIG_DEPTH_MAX 8                      /* nested mappings and lists (4 are used) */
#define CONFIG_NODES_MAX 20000                  /* YAML nodes in the document */
#define CONFIG_PATH_MAX_BYTES 4096              /* a path, NUL included */
#define CONFIG_SOCKET_PATH_MAX_BYTES sizeof(((struct sockaddr_un *)NULL)->sun_path)
#define CONFIG_TEXT_MAX_BYTES 1024              /* a host, an env entry, NUL included */
#define CONFIG_MACHINE_ID_MAX_BYTES 63
#define CONFIG_RANGE_MAX_BYTES 48               /* "100-600000", for messages */
#define CONFIG_CGROUP_ROOT "/sys/fs/cgroup/"
#define CONFIG_HOST_PROXY_LISTEN_DEFAULT "127.0.0.1:3128"

#define CONFIG_MAX_SANDBOXES_MIN 1
#define CONFIG_MAX_SANDBOXES_MAX 10000
#define CONFIG_POOL_PREFIX_MIN 8                /* the widest pool */
#define CONFIG_POOL_PREFIX_MAX 28               /* the narrowest: four sandboxes */
#define CONFIG_SANDBOX_PREFIX 30                /* each sandbox takes a /30 of the pool */
#define CONFIG_TIMEOUT_MIN_MS 100
#define CONFIG_TIMEOUT_MAX_MS 600000
#define CONFIG_IDLE_TIMEOUT_MIN_S 1
#define CONFIG_IDLE_TIMEOUT_MAX_S 86400
#define CONFIG_TUNNELS_PER_SANDBOX_MAX 100000
#define CONFIG_HEADER_MIN_BYTES 1024
#define CONFIG_TUNNELS_MAX 1000000
#define CONFIG_CREDENTIALS_MAX 64               /* credential definitions */
#define CONFIG_CREDENTIAL_ITEMS_MAX 32          /* paths, hosts or env entries of one */
#define CONFIG_PORT_MAX 65535
#define CONFIG_SHARE_CONNECTIONS_MAX 10000
#define CONFIG_SHARE_CONNECTIONS_DEFAULT 32     /* control connections of one user */
#define CONFIG_SHARE_STREAMS_MAX 10000
#define CONFIG_SHARE_STREAMS_DEFAULT 32         /* exec, run and logs streams of one user */
#define CONFIG_SHARE_BYTES_DEFAULT (64ull * 1024 * 1024)  /* half-read requests of one user */
#define CONFIG_SHARE_TUNNELS_DIVISOR 4  /* one user's tunnels: a quarter of egress.max_tunnels */
#define CONFIG_SHARE_BYTES_MIN (64ull * 1024)
#define CONFIG_PIDS_MAX 4194304                 /* the kernel's pid_max ceiling */

#define CONFIG_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The egress defaults are the proxy's own (egress-proxy/proxy.h, and
 * http.h for the head): each must lie in the range this file accepts. */
_Static_assert(PROXY_CONNECT_TIMEOUT_DEFAULT_MS >= CONFIG_TIMEOUT_MIN_MS &&
    PROXY_CONNECT_TIMEOUT_DEFAULT_MS <= CONFIG_TIMEOUT_MAX_MS, "connect timeout default");
_Static_assert(PROXY_HANDSHAKE_TIMEOUT_DEFAULT_MS >= CONFIG_TIMEOUT_MIN_MS &&
    PROXY_HANDSHAKE_TIMEOUT_DEFAULT_MS <= CONFIG_TIMEOUT_MAX_MS, "handshake timeout default");
_Static_assert(PROXY_IDLE_TIMEOUT_DEFAULT_S >= CONFIG_IDLE_TIMEOUT_MIN_S &&
    PROXY_IDLE_TIMEOUT_DEFAULT_S <= CONFIG_IDLE_TIMEOUT_MAX_S, "idle timeout default");
_Static_assert(PROXY_TUNNELS_PER_TENANT_DEFAULT <= CONFIG_TUNNELS_PER_SANDBOX_MAX,
    "tunnels per sandbox default");
_Static_assert(PROXY_TUNNELS_DEFAULT <= CONFIG_TUNNELS_MAX, "tunnels default");
_Static_assert(PROXY_HEADER_MAX_BYTES >= CONFIG_HEADER_MIN_BYTES, "header bytes");

/* What the configuration is to the YAML machinery: its limits and words. */
static const struct yamltree_doc config_doc = {
	.subject = "the configuration",
	.within = "the configuration",
	.not_regular = "",
	.input = "file",
	.depth_max = CONFIG_DEPTH_MAX,
	.nodes_max = CONFIG_NODES_MAX,
	.bytes_max = CONFIG_FILE_MAX_BYTES,
};

/* ---- the raw shape: nodes of the tree, by schema key ---- */

struct raw_credential {
	const struct yamltree_node *map, *name, *paths, *hosts, *env;
};

struct raw_secret {
	const struct yamltree_node *map, *name, *from, *hosts, *env, *headers, *query;
};

struct raw_config {
	const struct yamltree_node *root, *socket, *state_dir, *log_dir, *profiles_dir;
	const struct yamltree_node *machine_id, *max_sandboxes, *user, *ledger_group;
	const struct yamltree_node *network, *pool, *dns, *upstream;
	const struct yamltree_node *egress, *allow_cidrs, *connect_timeout, *idle_timeout;
	const struct yamltree_node *upstream_ca_file;
	const struct yamltree_node *tunnels_per_sandbox, *handshake_timeout, *header_max, *tunnels;
	const struct yamltree_node *credentials;
	const struct yamltree_node *per_user, *limits, *lim[LIMITS_N], *lim_max, *max[LIMITS_N];
	const struct yamltree_node *shares, *share_conns, *share_streams, *share_bytes,
	    *share_tunnels;
	const struct yamltree_node *host_proxy, *listen, *transparent, *dns_listen, *policy, *profile,
	    *cgroup;
	const struct yamltree_node *metrics, *metrics_listen;
	const struct yamltree_node *warm_pool;
	struct raw_credential *creds;
	size_t ncreds;
	const struct yamltree_node *secrets;
	struct raw_secret *secs;
	size_t nsecs;
};

#define RAW(field) offsetof(struct raw_config, field)

static const struct yamltree_field config_top_fields[] = {
	{ "socket", YAMLTREE_SCALAR, RAW(socket), false, NULL },
	{ "state_dir", YAMLTREE_SCALAR, RAW(state_dir), false, NULL },
	{ "log_dir", YAMLTREE_SCALAR, RAW(log_dir), false, NULL },
	{ "profiles_dir", YAMLTREE_SCALAR, RAW(profiles_dir), false, NULL },
	{ "machine_id", YAMLTREE_SCALAR, RAW(machine_id), false, NULL },
	{ "max_sandboxes", YAMLTREE_SCALAR, RAW(max_sandboxes), false, NULL },
	{ "max_sandboxes_per_user", YAMLTREE_SCALAR, RAW(per_user), false, NULL },
	{ "user", YAMLTREE_SCALAR, RAW(user), false, NULL },
	{ "ledger_group", YAMLTREE_SCALAR, RAW(ledger_group), false, NULL },
	{ "limits", YAMLTREE_MAPPING, RAW(limits), true, NULL },
	{ "shares", YAMLTREE_MAPPING, RAW(shares), true, NULL },
	{ "network", YAMLTREE_MAPPING, RAW(network), true, NULL },
	{ "dns", YAMLTREE_MAPPING, RAW(dns), true, NULL },
	{ "egress", YAMLTREE_MAPPING, RAW(egress), true, NULL },
	{ "credentials", YAMLTREE_SEQUENCE, RAW(credentials), true, NULL },
	{ "secrets", YAMLTREE_SEQUENCE, RAW(secrets), true, NULL },
	{ "host_proxy", YAMLTREE_MAPPING, RAW(host_proxy), true, NULL },
	{ "metrics", YAMLTREE_MAPPING, RAW(metrics), true, NULL },
	{ "warm_pool", YAMLTREE_MAPPING, RAW(warm_pool), true, NULL },
};

static const struct yamltree_field config_metrics_fields[] = {
	{ "listen", YAMLTREE_SCALAR, RAW(metrics_listen), false, NULL },
};

static const struct yamltree_field config_network_fields[] = {
	{ "pool", YAMLTREE_SCALAR, RAW(pool), false, NULL },
};

static const struct yamltree_field config_dns_fields[] = {
	{ "upstream", YAMLTREE_SEQUENCE, RAW(upstream), true, NULL },
};

static const struct yamltree_field config_egress_fields[] = {
	{ "allow_cidrs", YAMLTREE_SEQUENCE, RAW(allow_cidrs), true, NULL },
	{ "connect_timeout_ms", YAMLTREE_SCALAR, RAW(connect_timeout), false, NULL },
	{ "idle_timeout_s", YAMLTREE_SCALAR, RAW(idle_timeout), false, NULL },
	{ "max_tunnels_per_sandbox", YAMLTREE_SCALAR, RAW(tunnels_per_sandbox), false, NULL },
	{ "handshake_timeout_ms", YAMLTREE_SCALAR, RAW(handshake_timeout), false, NULL },
	{ "header_max_bytes", YAMLTREE_SCALAR, RAW(header_max), false, NULL },
	{ "max_tunnels", YAMLTREE_SCALAR, RAW(tunnels), false, NULL },
	{ "upstream_ca_file", YAMLTREE_SCALAR, RAW(upstream_ca_file), false, NULL },
};

static const struct yamltree_field config_limits_fields[] = {
	{ "pids", YAMLTREE_SCALAR, RAW(lim[LIMITS_PIDS]), false, NULL },
	{ "memory", YAMLTREE_SCALAR, RAW(lim[LIMITS_MEMORY]), false, NULL },
	{ "cpus", YAMLTREE_SCALAR, RAW(lim[LIMITS_CPUS]), false, NULL },
	{ "tmpfs", YAMLTREE_SCALAR, RAW(lim[LIMITS_TMPFS]), false, NULL },
	{ "home", YAMLTREE_SCALAR, RAW(lim[LIMITS_HOME]), false, NULL },
	{ "max", YAMLTREE_MAPPING, RAW(lim_max), true, NULL },
};

static const struct yamltree_field config_limits_max_fields[] = {
	{ "pids", YAMLTREE_SCALAR, RAW(max[LIMITS_PIDS]), false, NULL },
	{ "memory", YAMLTREE_SCALAR, RAW(max[LIMITS_MEMORY]), false, NULL },
	{ "cpus", YAMLTREE_SCALAR, RAW(max[LIMITS_CPUS]), false, NULL },
};

static const struct yamltree_field config_shares_fields[] = {
	{ "connections", YAMLTREE_SCALAR, RAW(share_conns), false, NULL },
	{ "streams", YAMLTREE_SCALAR, RAW(share_streams), false, NULL },
	{ "buffered_bytes", YAMLTREE_SCALAR, RAW(share_bytes), false, NULL },
	{ "tunnels", YAMLTREE_SCALAR, RAW(share_tunnels), false, NULL },
};

static const struct yamltree_field config_host_proxy_fields[] = {
	{ "listen", YAMLTREE_SCALAR, RAW(listen), false, NULL },
	{ "transparent", YAMLTREE_SCALAR, RAW(transparent), false, NULL },
	{ "dns", YAMLTREE_SCALAR, RAW(dns_listen), false, NULL },
	{ "policy", YAMLTREE_SCALAR, RAW(policy), false, NULL },
	{ "profile", YAMLTREE_SCALAR, RAW(profile), false, NULL },
	{ "cgroup", YAMLTREE_SCALAR, RAW(cgroup), false, NULL },
};

static const struct yamltree_field config_credential_fields[] = {
	{ "name", YAMLTREE_SCALAR, offsetof(struct raw_credential, name), false,
	  "required: the name --grant uses" },
	{ "paths", YAMLTREE_SEQUENCE, offsetof(struct raw_credential, paths), true, NULL },
	{ "hosts", YAMLTREE_SEQUENCE, offsetof(struct raw_credential, hosts), true, NULL },
	{ "env", YAMLTREE_SEQUENCE, offsetof(struct raw_credential, env), true, NULL },
};

static const struct yamltree_field config_secret_fields[] = {
	{ "name", YAMLTREE_SCALAR, offsetof(struct raw_secret, name), false,
	  "required: the name --secret uses" },
	{ "from", YAMLTREE_SCALAR, offsetof(struct raw_secret, from), false,
	  "required: where the CLI reads the value (env:NAME or file:PATH)" },
	{ "hosts", YAMLTREE_SEQUENCE, offsetof(struct raw_secret, hosts), false,
	  "required: the HOST:PORT endpoints the value may go to" },
	{ "env", YAMLTREE_SEQUENCE, offsetof(struct raw_secret, env), true, NULL },
	{ "headers", YAMLTREE_SEQUENCE, offsetof(struct raw_secret, headers), true, NULL },
	{ "query", YAMLTREE_SEQUENCE, offsetof(struct raw_secret, query), true, NULL },
};

_Static_assert(YAMLTREE_NFIELDS(config_top_fields) <= YAMLTREE_FIELDS_MAX, "too many fields");
_Static_assert(YAMLTREE_NFIELDS(config_egress_fields) <= YAMLTREE_FIELDS_MAX, "too many fields");

/* A number of the schema: where its node is, where its value goes, its range. */
struct config_number {
	const char *what;
	size_t raw_offset;
	size_t offset;                  /* of an unsigned in struct config */
	unsigned long min, max;
};

#define CFG(field) offsetof(struct config, field)

static const struct config_number config_numbers[] = {
	{ "max_sandboxes", RAW(max_sandboxes), CFG(max_sandboxes),
	  CONFIG_MAX_SANDBOXES_MIN, CONFIG_MAX_SANDBOXES_MAX },
	{ "egress.connect_timeout_ms", RAW(connect_timeout), CFG(egress.connect_timeout_ms),
	  CONFIG_TIMEOUT_MIN_MS, CONFIG_TIMEOUT_MAX_MS },
	{ "egress.idle_timeout_s", RAW(idle_timeout), CFG(egress.idle_timeout_s),
	  CONFIG_IDLE_TIMEOUT_MIN_S, CONFIG_IDLE_TIMEOUT_MAX_S },
	{ "egress.max_tunnels_per_sandbox", RAW(tunnels_per_sandbox), CFG(egress.max_tunnels_per_tenant),
	  1, CONFIG_TUNNELS_PER_SANDBOX_MAX },
	{ "egress.handshake_timeout_ms", RAW(handshake_timeout), CFG(egress.handshake_timeout_ms),
	  CONFIG_TIMEOUT_MIN_MS, CONFIG_TIMEOUT_MAX_MS },
	{ "egress.header_max_bytes", RAW(header_max), CFG(egress.header_max_bytes),
	  CONFIG_HEADER_MIN_BYTES, PROXY_HEADER_MAX_BYTES },
	{ "egress.max_tunnels", RAW(tunnels), CFG(egress.max_tunnels), 1, CONFIG_TUNNELS_MAX },
	{ "max_sandboxes_per_user", RAW(per_user), CFG(max_sandboxes_per_user),
	  CONFIG_MAX_SANDBOXES_MIN, CONFIG_MAX_SANDBOXES_MAX },
	{ "shares.connections", RAW(share_conns), CFG(shares.connections), 1,
	  CONFIG_SHARE_CONNECTIONS_MAX },
	{ "shares.streams", RAW(share_streams), CFG(shares.streams), 1, CONFIG_SHARE_STREAMS_MAX },
	{ "shares.tunnels", RAW(share_tunnels), CFG(shares.tunnels), 1, CONFIG_TUNNELS_MAX },
};

/* An absolute path of the schema: where its node is, where its copy goes,
 * the most bytes it may hold (NUL included). */
struct config_path_key {
	const char *what;
	size_t raw_offset;
	size_t offset;                  /* of a char * in struct config */
	size_t max;
};

static const struct config_path_key config_path_keys[] = {
	/* A Unix socket's path must fit sun_path, or bind() fails at start. */
	{ "socket", RAW(socket), CFG(socket), CONFIG_SOCKET_PATH_MAX_BYTES },
	{ "state_dir", RAW(state_dir), CFG(state_dir), CONFIG_PATH_MAX_BYTES },
	{ "log_dir", RAW(log_dir), CFG(log_dir), CONFIG_PATH_MAX_BYTES },
	{ "profiles_dir", RAW(profiles_dir), CFG(profiles_dir), CONFIG_PATH_MAX_BYTES },
	{ "host_proxy.policy", RAW(policy), CFG(host_proxy.policy), CONFIG_PATH_MAX_BYTES },
	{ "host_proxy.cgroup", RAW(cgroup), CFG(host_proxy.cgroup), CONFIG_PATH_MAX_BYTES },
	{ "egress.upstream_ca_file", RAW(upstream_ca_file), CFG(upstream_ca_file),
	  CONFIG_PATH_MAX_BYTES },
};

/* ---- pass 2: the tree's shape (pass 1 is yamltree_parse()) ---- */

static void
config_shape_credential(struct yamltree_ctx *ctx, struct raw_credential *c)
{
	yamltree_walk(ctx, c->map, "a credential", config_credential_fields,
	    YAMLTREE_NFIELDS(config_credential_fields), c);
	yamltree_check_items(ctx, c->paths, YAMLTREE_SCALAR, "paths");
	yamltree_check_items(ctx, c->hosts, YAMLTREE_SCALAR, "hosts");
	yamltree_check_items(ctx, c->env, YAMLTREE_SCALAR, "env");
}

static void
config_shape_credentials(struct yamltree_ctx *ctx, struct raw_config *raw)
{
	const struct yamltree_node *l = raw->credentials;

	if (l == NULL || l->type != YAMLTREE_SEQUENCE)
		return;
	if (l->nkids > CONFIG_CREDENTIALS_MAX) {
		yamltree_error_at(ctx, l, "credentials defines %zu grants, over the limit of %d",
		    l->nkids, CONFIG_CREDENTIALS_MAX);
		return;
	}
	if ((raw->creds = yamltree_calloc(ctx, l->nkids, sizeof(*raw->creds))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++) {
		if (!yamltree_expect_item(ctx, l->kids[i], YAMLTREE_MAPPING, "credentials"))
			continue;
		raw->creds[raw->ncreds].map = l->kids[i];
		config_shape_credential(ctx, &raw->creds[raw->ncreds++]);
	}
}

static void
config_shape_secrets(struct yamltree_ctx *ctx, struct raw_config *raw)
{
	const struct yamltree_node *l = raw->secrets;

	if (l == NULL || l->type != YAMLTREE_SEQUENCE)
		return;
	if (l->nkids > SECRET_KINDS_MAX) {
		yamltree_error_at(ctx, l, "secrets defines %zu secrets, over the limit of %d",
		    l->nkids, SECRET_KINDS_MAX);
		return;
	}
	if ((raw->secs = yamltree_calloc(ctx, l->nkids, sizeof(*raw->secs))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++) {
		struct raw_secret *r = &raw->secs[raw->nsecs];

		if (!yamltree_expect_item(ctx, l->kids[i], YAMLTREE_MAPPING, "secrets"))
			continue;
		r->map = l->kids[i];
		raw->nsecs++;
		yamltree_walk(ctx, r->map, "a secret", config_secret_fields,
		    YAMLTREE_NFIELDS(config_secret_fields), r);
		yamltree_check_items(ctx, r->hosts, YAMLTREE_SCALAR, "hosts");
		yamltree_check_items(ctx, r->env, YAMLTREE_SCALAR, "env");
		yamltree_check_items(ctx, r->headers, YAMLTREE_SCALAR, "headers");
		yamltree_check_items(ctx, r->query, YAMLTREE_SCALAR, "query");
	}
}

/* Pass 2: the shape of the whole document. */
static void
config_shape(struct yamltree_ctx *ctx, const struct yamltree_node *root, struct raw_config *raw)
{
	raw->root = root;
	yamltree_walk(ctx, root, "the configuration", config_top_fields,
	    YAMLTREE_NFIELDS(config_top_fields), raw);
	yamltree_walk(ctx, raw->network, "network", config_network_fields,
	    YAMLTREE_NFIELDS(config_network_fields), raw);
	yamltree_walk(ctx, raw->dns, "dns", config_dns_fields,
	    YAMLTREE_NFIELDS(config_dns_fields), raw);
	yamltree_walk(ctx, raw->egress, "egress", config_egress_fields,
	    YAMLTREE_NFIELDS(config_egress_fields), raw);
	yamltree_walk(ctx, raw->limits, "limits", config_limits_fields,
	    YAMLTREE_NFIELDS(config_limits_fields), raw);
	yamltree_walk(ctx, raw->lim_max, "limits.max", config_limits_max_fields,
	    YAMLTREE_NFIELDS(config_limits_max_fields), raw);
	yamltree_walk(ctx, raw->shares, "shares", config_shares_fields,
	    YAMLTREE_NFIELDS(config_shares_fields), raw);
	yamltree_walk(ctx, raw->host_proxy, "host_proxy", config_host_proxy_fields,
	    YAMLTREE_NFIELDS(config_host_proxy_fields), raw);
	yamltree_walk(ctx, raw->metrics, "metrics", config_metrics_fields,
	    YAMLTREE_NFIELDS(config_metrics_fields), raw);
	yamltree_check_items(ctx, raw->upstream, YAMLTREE_SCALAR, "upstream");
	yamltree_check_items(ctx, raw->allow_cidrs, YAMLTREE_SCALAR, "allow_cidrs");
	config_shape_credentials(ctx, raw);
	config_shape_secrets(ctx, raw);
}

/* ---- pass 3: numbers, paths and names ---- */

/* Reads the number N, WHAT in messages, in MIN-MAX into *OUT, or says
 * why it is not one. */
static void
config_number(struct yamltree_ctx *ctx, const struct yamltree_node *n, const char *what,
    unsigned long min, unsigned long max, unsigned *out)
{
	char range[CONFIG_RANGE_MAX_BYTES];
	unsigned long v = 0;
	enum yamltree_num err = yamltree_number(n->text, n->plain, min, max, &v);

	if (err == YAMLTREE_NUM_OK) {
		*out = (unsigned)v;
		return;
	}
	snprintf(range, sizeof(range), "%lu-%lu", min, max);
	yamltree_number_report(ctx, n, err, what, range);
}

static void
config_numbers_all(struct yamltree_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	for (size_t i = 0; i < CONFIG_NELEM(config_numbers); i++) {
		const struct config_number *d = &config_numbers[i];
		const struct yamltree_node *n = *(const struct yamltree_node *const *)((const char *)raw + d->raw_offset);

		if (n != NULL)
			config_number(ctx, n, d->what, d->min, d->max,
			    (unsigned *)((char *)cfg + d->offset));
	}
}

/* Stores a copy of TEXT in *SLOT, freeing what was there. */
static void
config_set(struct yamltree_ctx *ctx, char **slot, const char *text)
{
	char *copy = strdup(text);

	if (copy == NULL) {
		yamltree_nomem(ctx);
		return;
	}
	free(*slot);
	*slot = copy;
}

/* Checks the path N (WHAT in messages; ABSOLUTE or relative, under MAX
 * bytes with its NUL) and returns its normalized copy; NULL when refused. */
static char *
config_path(struct yamltree_ctx *ctx, const struct yamltree_node *n, const char *what, bool absolute,
    size_t max)
{
	struct yamltree_quoted q;
	const char *why;
	char *path;

	if (n->len == 0 || n->len >= max) {
		yamltree_error_at(ctx, n, "%s is %s (at most %zu bytes)", what,
		    n->len == 0 ? "empty" : "too long", max - 1);
		return NULL;
	}
	if ((path = malloc(n->len + 2)) == NULL) {
		yamltree_nomem(ctx);
		return NULL;
	}
	if ((why = yamltree_path_normalize(n->text, absolute, path)) != NULL) {
		yamltree_error_at(ctx, n, "%s '%s' %s", what, yamltree_quote(n->text, &q), why);
		free(path);
		return NULL;
	}
	return path;
}

static void
config_paths_all(struct yamltree_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	for (size_t i = 0; i < CONFIG_NELEM(config_path_keys); i++) {
		const struct config_path_key *d = &config_path_keys[i];
		const struct yamltree_node *n = *(const struct yamltree_node *const *)((const char *)raw + d->raw_offset);
		char **slot = (char **)((char *)cfg + d->offset);
		char *path;

		if (n == NULL || (path = config_path(ctx, n, d->what, true, d->max)) == NULL)
			continue;
		free(*slot);
		*slot = path;
	}
}

/* True for a character of a machine id: [A-Za-z0-9._-]. */
static bool
config_id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '.' || c == '_' || c == '-';
}

/* The machine id goes into every registry row and JSON answer: a closed
 * character set keeps it a plain word. */
static void
config_machine_id(struct yamltree_ctx *ctx, const struct yamltree_node *n, struct config *cfg)
{
	struct yamltree_quoted q;
	size_t i;

	if (n == NULL)
		return;
	for (i = 0; i < n->len && config_id_char(n->text[i]); i++)
		;
	if (n->len == 0 || n->len > CONFIG_MACHINE_ID_MAX_BYTES || i < n->len) {
		yamltree_error_at(ctx, n, "machine_id '%s' must be 1-%d letters, digits, '.', '_' or '-'",
		    yamltree_quote(n->text, &q), CONFIG_MACHINE_ID_MAX_BYTES);
		return;
	}
	config_set(ctx, &cfg->machine_id, n->text);
}

/* The broker's user or the ledger's group (KEY): a plain account name,
 * looked up when corrald starts. */
static void
config_account(struct yamltree_ctx *ctx, const struct yamltree_node *n, const char *key,
    char **out)
{
	struct yamltree_quoted q;
	size_t i;

	if (n == NULL)
		return;
	for (i = 0; i < n->len && (config_id_char(n->text[i]) && n->text[i] != '.'); i++)
		;
	if (n->len == 0 || n->len > CONFIG_USER_MAX_BYTES || i < n->len || n->text[0] == '-') {
		yamltree_error_at(ctx, n, "%s '%s' must be an account name: 1-%d letters, digits, "
		    "'_' or '-', not starting with '-'", key, yamltree_quote(n->text, &q),
		    CONFIG_USER_MAX_BYTES);
		return;
	}
	config_set(ctx, out, n->text);
}

/* ---- pass 3: addresses ---- */

/* Parses the CIDR N (WHAT in messages) into OUT, or says why it is not one. */
static bool
config_cidr(struct yamltree_ctx *ctx, const struct yamltree_node *n, const char *what,
    struct policy_cidr *out)
{
	struct yamltree_quoted q;
	const char *text = yamltree_quote(n->text, &q);

	switch (policy_cidr_parse(n->text, out)) {
	case POLICY_CIDR_OK:
		return true;
	case POLICY_CIDR_ERR_FORM:
		yamltree_error_at(ctx, n, "%s '%s' is not ADDRESS/PREFIX (e.g. 10.0.0.0/8)", what, text);
		break;
	case POLICY_CIDR_ERR_ADDRESS:
		yamltree_error_at(ctx, n, "%s '%s' has no valid IPv4 or IPv6 address before the '/'",
		    what, text);
		break;
	case POLICY_CIDR_ERR_PREFIX:
	case POLICY_CIDR_ERR_PREFIX_RANGE:
		yamltree_error_at(ctx, n, "%s '%s' has a bad prefix length (0-%u)", what, text,
		    policy_cidr_bits(out->family));
		break;
	default:
		yamltree_error_at(ctx, n, "%s '%s' has bits set past its prefix length", what, text);
		break;
	}
	return false;
}

/* Where the sandboxes' addresses cannot come from: ranges the host treats
 * specially, which veths numbered from them would break or shadow. */
static const struct policy_cidr_range config_pool_refused[] = {
	{ { AF_INET, { 0 }, 8 }, "the 'this network' range 0.0.0.0/8" },
	{ { AF_INET, { 127 }, 8 }, "the loopback range 127.0.0.0/8" },
	{ { AF_INET, { 169, 254 }, 16 }, "the link-local range 169.254.0.0/16" },
	{ { AF_INET, { 224 }, 3 }, "the multicast and reserved ranges 224.0.0.0/3" },
};

/* The pool: an IPv4 range, /8 to /28, out of the ranges the host keeps. */
static void
config_pool(struct yamltree_ctx *ctx, const struct yamltree_node *n, struct config *cfg)
{
	struct yamltree_quoted q;
	struct policy_cidr c;
	const char *what;

	if (n == NULL || !config_cidr(ctx, n, "network.pool", &c))
		return;
	if (c.family != AF_INET)
		yamltree_error_at(ctx, n, "network.pool '%s' is IPv6: the pool is an IPv4 range",
		    yamltree_quote(n->text, &q));
	else if (c.prefix_len < CONFIG_POOL_PREFIX_MIN || c.prefix_len > CONFIG_POOL_PREFIX_MAX)
		yamltree_error_at(ctx, n, "network.pool '%s' is too %s: its prefix must be /%d to /%d (each sandbox takes a /%d)",
		    yamltree_quote(n->text, &q), c.prefix_len > CONFIG_POOL_PREFIX_MAX ? "small" : "wide",
		    CONFIG_POOL_PREFIX_MIN, CONFIG_POOL_PREFIX_MAX, CONFIG_SANDBOX_PREFIX);
	else if ((what = policy_cidr_touches(&c, config_pool_refused,
	    CONFIG_NELEM(config_pool_refused))) != NULL)
		yamltree_error_at(ctx, n, "network.pool '%s' overlaps %s: choose a private range such as %s",
		    yamltree_quote(n->text, &q), what, CONFIG_POOL_DEFAULT);
	else
		cfg->pool = c;
}

/* Every sandbox takes a /30 of the pool: it must hold max_sandboxes of them. */
static void
config_pool_capacity(struct yamltree_ctx *ctx, const struct raw_config *raw, const struct config *cfg)
{
	unsigned long slots = 1ul << (CONFIG_SANDBOX_PREFIX - cfg->pool.prefix_len);
	const struct yamltree_node *at = raw->pool != NULL ? raw->pool : raw->max_sandboxes;
	char net[INET_ADDRSTRLEN];
	unsigned long v;

	/* A max_sandboxes already refused has been reported: no second error. */
	if (raw->max_sandboxes != NULL && yamltree_number(raw->max_sandboxes->text,
	    raw->max_sandboxes->plain, CONFIG_MAX_SANDBOXES_MIN, CONFIG_MAX_SANDBOXES_MAX,
	    &v) != YAMLTREE_NUM_OK)
		return;
	if (slots >= cfg->max_sandboxes || at == NULL)
		return;
	inet_ntop(AF_INET, cfg->pool.addr, net, sizeof(net));
	yamltree_error_at(ctx, at, "network.pool %s/%u holds %lu sandboxes (a /%d each), fewer than max_sandboxes %u: widen the pool or lower max_sandboxes",
	    net, cfg->pool.prefix_len, slots, CONFIG_SANDBOX_PREFIX, cfg->max_sandboxes);
}

/* True when the allow list entry N is a range sandboxes may be let into
 * (parsed into *C), else says why not. */
static bool
config_allow_cidr(struct yamltree_ctx *ctx, const struct yamltree_node *n, struct policy_cidr *c)
{
	struct yamltree_quoted q;
	const char *what;

	if (n->type != YAMLTREE_SCALAR || !config_cidr(ctx, n, "egress.allow_cidrs", c))
		return false;
	switch (policy_cidr_forbidden(c, &what)) {
	case POLICY_CIDR_EVERYTHING:
		yamltree_error_at(ctx, n, "egress.allow_cidrs '%s' covers every address: name only the internal ranges sandboxes need",
		    yamltree_quote(n->text, &q));
		return false;
	case POLICY_CIDR_UNREACHABLE:
		yamltree_error_at(ctx, n, "egress.allow_cidrs '%s' overlaps %s, which a sandbox may never reach",
		    yamltree_quote(n->text, &q), what);
		return false;
	default:
		return true;
	}
}

/* Reads the allow list L into CFG. */
static void
config_allow_cidrs(struct yamltree_ctx *ctx, const struct yamltree_node *l, struct config *cfg)
{
	if (l == NULL || l->type != YAMLTREE_SEQUENCE || l->nkids == 0)
		return;
	if (l->nkids > CONFIG_ALLOW_CIDRS_MAX) {
		yamltree_error_at(ctx, l, "egress.allow_cidrs has %zu ranges, over the limit of %d",
		    l->nkids, CONFIG_ALLOW_CIDRS_MAX);
		return;
	}
	if ((cfg->allow_cidrs = yamltree_calloc(ctx, l->nkids, sizeof(*cfg->allow_cidrs))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		if (config_allow_cidr(ctx, l->kids[i], &cfg->allow_cidrs[cfg->nallow_cidrs]))
			cfg->nallow_cidrs++;
}

/* An address with an optional port, as in "10.0.0.1", "10.0.0.1:53",
 * "fd00::1", "[fd00::1]" and "[fd00::1]:53". */
struct config_hostport {
	int family;
	uint8_t addr[16];
	long port;                      /* -1 when none was given */
};

/* Reads the port after the address; NULL when fine, else why not. */
static const char *
config_hostport_port(const char *s, struct config_hostport *hp)
{
	unsigned long v = 0;

	if (s[0] == '\0')
		return NULL;
	if (s[0] != ':' || yamltree_number(s + 1, true, 0, CONFIG_PORT_MAX, &v) != YAMLTREE_NUM_OK)
		return "has a bad port (0-65535 after the last ':')";
	hp->port = (long)v;
	return NULL;
}

/* Parses TEXT into HP; NULL when fine, else why not. */
static const char *
config_hostport_parse(const char *text, struct config_hostport *hp)
{
	char addr[INET6_ADDRSTRLEN];
	const char *end, *colon = strchr(text, ':');
	bool bracket = text[0] == '[';
	size_t alen;

	memset(hp, 0, sizeof(*hp));
	hp->port = -1;
	hp->family = bracket || (colon != NULL && strchr(colon + 1, ':') != NULL) ? AF_INET6 : AF_INET;
	if (bracket && (end = strchr(text, ']')) == NULL)
		return "has no ']' after the IPv6 address";
	if (!bracket)
		end = hp->family == AF_INET && colon != NULL ? colon : text + strlen(text);
	alen = (size_t)(end - text) - bracket;
	if (alen == 0 || alen >= sizeof(addr))
		return "has no IPv4 or IPv6 address";
	memcpy(addr, text + bracket, alen);
	addr[alen] = '\0';
	if (inet_pton(hp->family, addr, hp->addr) != 1)
		return "has no valid IPv4 or IPv6 address (names are not allowed here)";
	return config_hostport_port(end + bracket, hp);
}

/* True for 0.0.0.0 and ::. */
static bool
config_unspecified(const struct config_hostport *hp)
{
	static const uint8_t zero[16];

	return memcmp(hp->addr, zero, hp->family == AF_INET ? 4 : 16) == 0;
}

/* Checks one DNS server N and adds it to CFG. */
static void
config_upstream_one(struct yamltree_ctx *ctx, const struct yamltree_node *n, struct config *cfg)
{
	struct config_hostport hp;
	struct yamltree_quoted q;
	const char *why = config_hostport_parse(n->text, &hp);

	if (why == NULL && hp.port == 0)
		why = "has port 0";
	else if (why == NULL && config_unspecified(&hp))
		why = "is the unspecified address, which is no server";
	if (why != NULL) {
		yamltree_error_at(ctx, n, "dns.upstream '%s' %s (expected IP, IP:PORT or [IPv6]:PORT)",
		    yamltree_quote(n->text, &q), why);
		return;
	}
	if ((cfg->dns_upstream[cfg->ndns_upstream] = strdup(n->text)) == NULL)
		yamltree_nomem(ctx);
	else
		cfg->ndns_upstream++;
}

static void
config_upstream(struct yamltree_ctx *ctx, const struct yamltree_node *l, struct config *cfg)
{
	if (l == NULL || l->type != YAMLTREE_SEQUENCE || l->nkids == 0)
		return;
	if (l->nkids > CONFIG_DNS_UPSTREAM_MAX) {
		yamltree_error_at(ctx, l, "dns.upstream lists %zu servers, over the limit of %d",
		    l->nkids, CONFIG_DNS_UPSTREAM_MAX);
		return;
	}
	if ((cfg->dns_upstream = yamltree_calloc(ctx, l->nkids, sizeof(*cfg->dns_upstream))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		if (l->kids[i]->type == YAMLTREE_SCALAR)
			config_upstream_one(ctx, l->kids[i], cfg);
}

/* ---- pass 3: credentials ---- */

/* Checks one text of a credential's list (NULL: fine, else why not). It
 * may rewrite the text into BUF (as long as the text plus two bytes),
 * which is then what is kept. */
typedef const char *config_item_check(const char *text, char *buf);

/* The checked copy of the list entry E (WHAT in messages); NULL when refused. */
static char *
config_item(struct yamltree_ctx *ctx, const struct yamltree_node *e, const char *what,
    config_item_check *check)
{
	struct yamltree_quoted q;
	const char *why;
	char *buf;

	if ((buf = malloc(e->len + 2)) == NULL) {
		yamltree_nomem(ctx);
		return NULL;
	}
	memcpy(buf, e->text, e->len + 1);
	why = e->len >= CONFIG_TEXT_MAX_BYTES ? "is too long" : check(e->text, buf);
	if (why != NULL) {
		yamltree_error_at(ctx, e, "%s '%s' %s", what, yamltree_quote(e->text, &q), why);
		free(buf);
		return NULL;
	}
	return buf;
}

/* The entries of the list L, each checked by CHECK, into *OUT (*N of them). */
static void
config_items(struct yamltree_ctx *ctx, const struct yamltree_node *l, const char *what,
    config_item_check *check, char ***out, size_t *n)
{
	if (l == NULL || l->type != YAMLTREE_SEQUENCE || l->nkids == 0)
		return;
	if (l->nkids > CONFIG_CREDENTIAL_ITEMS_MAX) {
		yamltree_error_at(ctx, l, "%s has %zu entries, over the limit of %d", what, l->nkids,
		    CONFIG_CREDENTIAL_ITEMS_MAX);
		return;
	}
	if ((*out = yamltree_calloc(ctx, l->nkids, sizeof(**out))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		if (l->kids[i]->type == YAMLTREE_SCALAR &&
		    ((*out)[*n] = config_item(ctx, l->kids[i], what, check)) != NULL)
			(*n)++;
}

/* A file or folder of the caller's home: relative, no "..". */
static const char *
config_check_home_path(const char *text, char *buf)
{
	if (text[0] == '\0')
		return "is empty";
	return yamltree_path_normalize(text, false, buf);
}

/* "host:port", the host as a policy endpoint's (the grant's hosts join the
 * sandbox's policy). */
static const char *
config_check_host(const char *text, char *buf)
{
	const char *colon = strrchr(text, ':');
	struct policy_host h = { 0 };
	unsigned long port = 0;
	enum match_err err;

	if (colon == NULL ||
	    yamltree_number(colon + 1, true, 1, CONFIG_PORT_MAX, &port) != YAMLTREE_NUM_OK)
		return "is not HOST:PORT (a port 1-65535)";
	buf[colon - text] = '\0';
	err = match_host_parse(buf, &h);
	free(h.name);
	strcpy(buf, text);
	return err == MATCH_OK ? NULL : match_strerror(err);
}

/* True for a character of an environment variable's name: [A-Za-z0-9_]. */
static bool
config_env_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* "NAME=VALUE": a shell variable name, a value without control characters. */
static const char *
config_check_env(const char *text, char *buf)
{
	const char *eq = strchr(text, '=');
	size_t len = eq != NULL ? (size_t)(eq - text) : 0;

	(void)buf;
	if (len == 0 || (text[0] >= '0' && text[0] <= '9'))
		return "is not NAME=VALUE (a name of letters, digits and '_', not starting with a digit)";
	for (size_t i = 0; i < len; i++)
		if (!config_env_char(text[i]))
			return "is not NAME=VALUE (a name of letters, digits and '_', not starting with a digit)";
	if (yamltree_has_control(eq + 1))
		return "has a control character in its value";
	return NULL;
}

/* What makes the name of a credential or a secret. */
struct config_name_kind {
	const char *what;               /* "credential" */
	const char *builtin_what;       /* what a built-in one is: "grant" */
	const char *builtins;           /* the built-in names, listed */
};

/* A copy of N, the name of a K, when it is a valid name, not a built-in
 * one (BUILTIN) and not TAKEN by one before it; NULL after the error. */
static char *
config_new_name(struct yamltree_ctx *ctx, const struct yamltree_node *n,
    const struct config_name_kind *k, bool builtin, bool taken)
{
	struct yamltree_quoted q;
	const char *why;
	char *copy;

	if ((why = policy_name_error(n->text)) != NULL) {
		yamltree_error_at(ctx, n, "%s name '%s' %s", k->what, yamltree_quote(n->text, &q), why);
		return NULL;
	}
	if (builtin) {
		yamltree_error_at(ctx, n, "%s name '%s' is a built-in %s (%s): choose another name",
		    k->what, yamltree_quote(n->text, &q), k->builtin_what, k->builtins);
		return NULL;
	}
	if (taken) {
		yamltree_error_at(ctx, n, "%s name '%s' is defined twice: keep one", k->what,
		    yamltree_quote(n->text, &q));
		return NULL;
	}
	if ((copy = strdup(n->text)) == NULL)
		yamltree_nomem(ctx);
	return copy;
}

/* The name of credential R: a grant name that the built-in grants and the
 * credentials before it (the first I of CFG) do not already use. */
static void
config_credential_name(struct yamltree_ctx *ctx, const struct raw_credential *r,
    const struct config *cfg, size_t i, struct config_credential *c)
{
	const struct config_name_kind kind = { "credential", "grant", grant_builtin_names() };
	bool taken = false;

	if (r->name == NULL)
		return;
	for (size_t k = 0; k < i && !taken; k++)
		taken = cfg->credentials[k].name != NULL &&
		    strcmp(cfg->credentials[k].name, r->name->text) == 0;
	/* --grant NAME must mean one thing: never shadow a built-in grant. */
	c->name = config_new_name(ctx, r->name, &kind, grant_builtin(r->name->text) != NULL, taken);
}

/* True when L is a list with at least one item. */
static bool
config_list_given(const struct yamltree_node *l)
{
	return l != NULL && l->type == YAMLTREE_SEQUENCE && l->nkids > 0;
}

static void
config_credential(struct yamltree_ctx *ctx, const struct raw_credential *r, struct config *cfg,
    size_t i)
{
	struct config_credential *c = &cfg->credentials[i];

	config_credential_name(ctx, r, cfg, i, c);
	config_items(ctx, r->paths, "credential path", config_check_home_path, &c->paths, &c->npaths);
	config_items(ctx, r->hosts, "credential host", config_check_host, &c->hosts, &c->nhosts);
	config_items(ctx, r->env, "credential env", config_check_env, &c->env, &c->nenv);
	if (!config_list_given(r->paths) && !config_list_given(r->hosts) && !config_list_given(r->env))
		yamltree_error_at(ctx, r->map, "a credential grants nothing: give it paths, hosts or env");
}

/* The credentials as struct grant views (policy/grant.h), for grant_find. */
static void
config_grant_views(struct yamltree_ctx *ctx, struct config *cfg)
{
	const struct config_credential *c;

	if ((cfg->grants = yamltree_calloc(ctx, cfg->ncredentials, sizeof(*cfg->grants))) == NULL)
		return;
	for (size_t i = 0; i < cfg->ncredentials; i++) {
		c = &cfg->credentials[i];
		cfg->grants[i] = (struct grant){ c->name, (const char *const *)c->paths, c->npaths,
		    (const char *const *)c->hosts, c->nhosts, (const char *const *)c->env, c->nenv };
	}
}

static void
config_credentials(struct yamltree_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	if (raw->ncreds == 0)
		return;
	if ((cfg->credentials = yamltree_calloc(ctx, raw->ncreds, sizeof(*cfg->credentials))) == NULL)
		return;
	cfg->ncredentials = raw->ncreds;
	for (size_t i = 0; i < raw->ncreds; i++)
		config_credential(ctx, &raw->creds[i], cfg, i);
	config_grant_views(ctx, cfg);
}

/* ---- pass 3: secrets ---- */

/* "host:port" as a grant's, and an exact name: the proxy swaps a value
 * toward the very hosts it names. */
static const char *
config_check_secret_host(const char *text, char *buf)
{
	const char *why = config_check_host(text, buf), *colon;
	size_t name;

	if (why == NULL && strchr(text, '*') != NULL)
		return "is a wildcard: a secret goes to exact host names only";
	if (why != NULL)
		return why;
	/* Kept as the proxy names a connection's host: lower case, no
	 * trailing dot; else the secret would never be swapped in. */
	colon = strrchr(buf, ':');
	name = (size_t)(colon - buf);
	for (size_t i = 0; i < name; i++)
		if (buf[i] >= 'A' && buf[i] <= 'Z')
			buf[i] = (char)(buf[i] | 0x20);
	if (name > 1 && buf[name - 1] == '.')
		memmove(buf + name - 1, buf + name, strlen(buf + name) + 1);
	return NULL;
}

/* A variable the placeholder is put in: a name, and none that the
 * sandbox's commands need for themselves. */
static const char *
config_check_secret_env(const char *text, char *buf)
{
	/* What every command needs for itself: its home and shell, the
	 * proxy it is told to use, the bundle that trusts the sandbox's CA. */
	static const char *const reserved[] = { "HOME", "PATH", "SHELL", "USER", "ENV", "BASH_ENV",
		"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy",
		"NO_PROXY", "no_proxy", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
		"GIT_SSL_CAINFO", "CURL_CA_BUNDLE", "PIP_CERT", "CARGO_HTTP_CAINFO", "AWS_CA_BUNDLE" };

	(void)buf;
	if (text[0] == '\0' || (text[0] >= '0' && text[0] <= '9'))
		return "is not a variable name (letters, digits and '_', not starting with a digit)";
	for (const char *p = text; *p != '\0'; p++)
		if (!config_env_char(*p))
			return "is not a variable name (letters, digits and '_', not starting with a digit)";
	if (strncmp(text, "LD_", 3) == 0)
		return "is the dynamic loader's: choose another variable";
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strcmp(text, reserved[i]) == 0)
			return "is one the sandbox's commands need: choose another variable";
	return NULL;
}

/* A request header the value may go in: a token, and none that frames
 * or routes the request. */
/* True when TEXT is one or more letters, digits and characters of EXTRA. */
static bool
config_word_of(const char *text, const char *extra)
{
	if (text[0] == '\0')
		return false;
	for (const char *p = text; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr(extra, *p) != NULL))
			return false;
	return true;
}

static const char *
config_check_secret_header(const char *text, char *buf)
{
	static const char *const framing[] = { "Host", "Content-Length", "Transfer-Encoding",
		"Connection", "Upgrade", "Expect", "TE", "Trailer" };

	(void)buf;
	if (text[0] == '\0')
		return "is empty";
	if (!config_word_of(text, "!#$%&'*+-.^_`|~"))
		return "is not a header name";
	for (size_t i = 0; i < sizeof(framing) / sizeof(framing[0]); i++)
		if (strcasecmp(text, framing[i]) == 0)
			return "frames or routes the request: a secret may not go in it";
	return NULL;
}

/* A query parameter's name a secret may be the value of: the characters
 * a query's name holds unencoded but its separators. */
static const char *
config_check_secret_query(const char *text, char *buf)
{
	(void)buf;
	if (text[0] == '\0')
		return "is empty";
	return config_word_of(text, "-._~!$'()*,;:@/") ? NULL : "is not a query parameter's name";
}

/* The name of secret R: one that the built-in kinds and the secrets
 * before it (the first I of CFG) do not already use. */
static void
config_secret_name(struct yamltree_ctx *ctx, const struct raw_secret *r, struct config *cfg,
    size_t i, struct config_secret *c)
{
	const struct config_name_kind kind = { "secret", "secret", secret_builtin_names() };
	bool taken = false;

	if (r->name == NULL)
		return;
	for (size_t k = 0; k < i && !taken; k++)
		taken = cfg->secrets[k].name != NULL && strcmp(cfg->secrets[k].name, r->name->text) == 0;
	c->name = config_new_name(ctx, r->name, &kind, secret_is_builtin(r->name->text), taken);
}

static void
config_secret_from(struct yamltree_ctx *ctx, const struct yamltree_node *n,
    struct config_secret *c)
{
	struct secret_source src;
	struct yamltree_quoted q;
	const char *why;

	if (n == NULL)
		return;
	if ((why = secret_source_parse(n->text, &src)) != NULL) {
		yamltree_error_at(ctx, n, "secret source '%s' %s", yamltree_quote(n->text, &q), why);
		return;
	}
	if ((c->from = strdup(n->text)) == NULL)
		yamltree_nomem(ctx);
}

static void
config_secret(struct yamltree_ctx *ctx, const struct raw_secret *r, struct config *cfg, size_t i)
{
	struct config_secret *c = &cfg->secrets[i];

	config_secret_name(ctx, r, cfg, i, c);
	config_secret_from(ctx, r->from, c);
	config_items(ctx, r->hosts, "secret host", config_check_secret_host, &c->hosts, &c->nhosts);
	config_items(ctx, r->env, "secret env", config_check_secret_env, &c->env, &c->nenv);
	config_items(ctx, r->headers, "secret header", config_check_secret_header, &c->headers,
	    &c->nheaders);
	config_items(ctx, r->query, "secret query parameter", config_check_secret_query, &c->query,
	    &c->nquery);
	if (r->hosts != NULL && r->hosts->type == YAMLTREE_SEQUENCE &&
	    (r->hosts->nkids == 0 || r->hosts->nkids > SECRET_HOSTS_MAX))
		yamltree_error_at(ctx, r->hosts, "a secret names 1 to %d hosts", SECRET_HOSTS_MAX);
	if (c->nenv > SECRET_ENV_MAX || c->nheaders > SECRET_HEADERS_MAX ||
	    c->nquery > SECRET_QUERY_MAX)
		yamltree_error_at(ctx, r->map, "a secret names at most %d env variables, %d headers "
		    "and %d query parameters", SECRET_ENV_MAX, SECRET_HEADERS_MAX, SECRET_QUERY_MAX);
}

/* The secrets as struct secret_kind views, for secret_find. */
static void
config_secret_views(struct yamltree_ctx *ctx, struct config *cfg)
{
	const struct config_secret *c;

	if ((cfg->secret_kinds = yamltree_calloc(ctx, cfg->nsecrets,
	    sizeof(*cfg->secret_kinds))) == NULL)
		return;
	for (size_t i = 0; i < cfg->nsecrets; i++) {
		c = &cfg->secrets[i];
		cfg->secret_kinds[i] = (struct secret_kind){ c->name, c->from,
		    (const char *const *)c->hosts, c->nhosts, (const char *const *)c->env, c->nenv,
		    (const char *const *)c->headers, c->nheaders, false,
		    (const char *const *)c->query, c->nquery };
	}
}

static void
config_secrets(struct yamltree_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	if (raw->nsecs == 0)
		return;
	if ((cfg->secrets = yamltree_calloc(ctx, raw->nsecs, sizeof(*cfg->secrets))) == NULL)
		return;
	cfg->nsecrets = raw->nsecs;
	for (size_t i = 0; i < raw->nsecs; i++)
		config_secret(ctx, &raw->secs[i], cfg, i);
	config_secret_views(ctx, cfg);
}

/* ---- pass 3: host mode ---- */

/* True for 127.0.0.0/8 and ::1. */
static bool
config_loopback(const struct config_hostport *hp)
{
	static const uint8_t v6_loopback[16] = { [15] = 1 };

	if (hp->family == AF_INET)
		return hp->addr[0] == 127;
	return memcmp(hp->addr, v6_loopback, sizeof(v6_loopback)) == 0;
}

/* KEY (e.g. host_proxy.listen): ADDRESS:PORT on loopback (port 0: the
 * kernel picks), into *OUT; WHO serves loopback only, in the error. */
static void
config_listen(struct yamltree_ctx *ctx, const struct yamltree_node *n, const char *key,
    const char *who, char **out)
{
	struct config_hostport hp;
	struct yamltree_quoted q;
	const char *why = config_hostport_parse(n->text, &hp);

	if (why == NULL && hp.port < 0)
		why = "has no port (e.g. 127.0.0.1:3128)";
	if (why != NULL) {
		yamltree_error_at(ctx, n, "%s '%s' %s (expected 127.0.0.1:PORT or [::1]:PORT)",
		    key, yamltree_quote(n->text, &q), why);
		return;
	}
	if (!config_loopback(&hp)) {
		yamltree_error_at(ctx, n, "%s '%s' is not a loopback address: %s serves loopback only (127.0.0.0/8 or [::1])",
		    key, yamltree_quote(n->text, &q), who);
		return;
	}
	config_set(ctx, out, n->text);
}

/* host_proxy.cgroup: an absolute path in the cgroup v2 hierarchy. */
static void
config_cgroup_place(struct yamltree_ctx *ctx, const struct yamltree_node *n, const struct config *cfg)
{
	const char *cg = cfg->host_proxy.cgroup;
	struct yamltree_quoted q;

	if (n == NULL || cg == NULL || strncmp(cg, CONFIG_CGROUP_ROOT, strlen(CONFIG_CGROUP_ROOT)) == 0)
		return;
	yamltree_error_at(ctx, n, "host_proxy.cgroup '%s' is not under %s (the cgroup v2 hierarchy)",
	    yamltree_quote(n->text, &q), CONFIG_CGROUP_ROOT);
}

static void
config_profile(struct yamltree_ctx *ctx, const struct yamltree_node *n, struct config *cfg)
{
	struct yamltree_quoted q;
	const char *why;

	if ((why = policy_name_error(n->text)) != NULL) {
		yamltree_error_at(ctx, n, "host_proxy.profile '%s' %s", yamltree_quote(n->text, &q), why);
		return;
	}
	config_set(ctx, &cfg->host_proxy.profile, n->text);
}

/* Host mode is on when the key is there (empty: every default). Its paths
 * were read with the others. */
static void
config_host_proxy(struct yamltree_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	if (raw->host_proxy == NULL)
		return;
	cfg->host_proxy.enabled = true;
	/* Host mode has no sandbox and no fence: every client that can reach
	 * a listener uses the host's policy, so only the host's own processes
	 * may reach it. */
	if (raw->listen != NULL)
		config_listen(ctx, raw->listen, "host_proxy.listen", "host mode",
		    &cfg->host_proxy.listen);
	if (raw->transparent != NULL)
		config_listen(ctx, raw->transparent, "host_proxy.transparent", "host mode",
		    &cfg->host_proxy.transparent);
	if (raw->dns_listen != NULL)
		config_listen(ctx, raw->dns_listen, "host_proxy.dns", "host mode",
		    &cfg->host_proxy.dns);
	if (raw->profile != NULL)
		config_profile(ctx, raw->profile, cfg);
	config_cgroup_place(ctx, raw->cgroup, cfg);
	if (raw->policy != NULL && raw->profile != NULL)
		yamltree_error_at(ctx, raw->host_proxy, "host_proxy has both 'policy' and 'profile': give one of them");
	else if (raw->policy != NULL) {
		free(cfg->host_proxy.profile);
		cfg->host_proxy.profile = NULL;
	}
}

/* A limit's value N (KIND; MAX: a key of limits.max) into *OUT: a count of
 * pids, a size or a share of RAM ("50%"), a CPU count. */
static bool
config_limit(struct yamltree_ctx *ctx, const struct yamltree_node *n, enum limits_kind kind,
    bool max, uint64_t ram, uint64_t *out)
{
	struct yamltree_quoted q;
	unsigned long pids;
	uint32_t milli;
	bool ok;

	if (kind == LIMITS_PIDS) {
		ok = yamltree_number(n->text, n->plain, 1, CONFIG_PIDS_MAX, &pids) == YAMLTREE_NUM_OK;
		*out = pids;
	} else if (kind == LIMITS_CPUS) {
		ok = units_parse_cpus(n->text, &milli);
		*out = milli;
	} else {
		ok = units_parse_size_or_share(n->text, ram, out);
	}
	if (!ok)
		yamltree_error_at(ctx, n, "limits.%s%s '%s' is not %s", max ? "max." : "",
		    limits_name(kind), yamltree_quote(n->text, &q),
		    kind == LIMITS_PIDS ? "a count from 1 to 4194304" : kind == LIMITS_CPUS ?
		    "a number of CPUs with at most 3 decimals (0.5, 2)" :
		    "a size (512M, 4G) or a share of the machine's memory (25%)");
	return ok;
}

/* limits and limits.max; a default over its maximum is an error. */
static void
config_limits(struct yamltree_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	uint64_t ram = limits_machine_ram(), v;
	bool bad = false;

	for (int k = 0; k < LIMITS_N; k++) {
		if (raw->max[k] != NULL && !config_limit(ctx, raw->max[k], (enum limits_kind)k, true,
		    ram, &v))
			bad = true;
		else if (raw->max[k] != NULL)
			cfg->limits.max[k] = v;
		if (raw->lim[k] != NULL && !config_limit(ctx, raw->lim[k], (enum limits_kind)k, false,
		    ram, &v)) {
			bad = true;
		} else if (raw->lim[k] != NULL) {
			/* tmpfs sizes go in whole MiB. */
			if (k == LIMITS_TMPFS || k == LIMITS_HOME)
				v = v < LIMITS_FS_MIN_BYTES ? LIMITS_FS_MIN_BYTES :
				    v / LIMITS_MIB * LIMITS_MIB;
			cfg->limits.dflt[k] = (struct limits_value){ v, LIMITS_CONFIG };
		}
	}
	for (int k = 0; k < LIMITS_N && !bad; k++)
		if (raw->lim[k] != NULL && cfg->limits.max[k] != 0 &&
		    cfg->limits.dflt[k].value > cfg->limits.max[k])
			yamltree_error_at(ctx, raw->lim[k], "limits.%s is over limits.max.%s",
			    limits_name((enum limits_kind)k), limits_name((enum limits_kind)k));
}

/* shares.buffered_bytes, and the defaults that follow other keys. */
static void
config_shares(struct yamltree_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	struct yamltree_quoted q;
	const struct yamltree_node *n = raw->share_bytes;

	if (n != NULL && (!units_parse_size(n->text, &cfg->shares.buffered_bytes) ||
	    cfg->shares.buffered_bytes < CONFIG_SHARE_BYTES_MIN))
		yamltree_error_at(ctx, n, "shares.buffered_bytes '%s' is not a size of at least 64K",
		    yamltree_quote(n->text, &q));
	if (raw->share_tunnels == NULL)
		cfg->shares.tunnels = cfg->egress.max_tunnels / CONFIG_SHARE_TUNNELS_DIVISOR > 0 ?
		    cfg->egress.max_tunnels / CONFIG_SHARE_TUNNELS_DIVISOR : 1;
	if (raw->per_user == NULL)
		cfg->max_sandboxes_per_user = cfg->max_sandboxes > 1 ?
		    (cfg->max_sandboxes + 1) / 2 : 1;
}

/* warm_pool: PROFILE: COUNT pairs, each profile once; together at most
 * max_sandboxes (a warm sandbox takes an address slot and a sandbox's
 * kernel objects). Whether each profile exists is checked with the
 * profiles (warm_check). */
static void
config_warm_pool(struct yamltree_ctx *ctx, const struct yamltree_node *map, struct config *cfg)
{
	struct yamltree_quoted q;
	unsigned count, total = 0;
	char what[POLICY_NAME_MAX_BYTES + 16];
	const char *why;

	if (map == NULL)
		return;
	if ((cfg->warm_pool = calloc(map->nkids / 2 + 1, sizeof(*cfg->warm_pool))) == NULL) {
		yamltree_nomem(ctx);
		return;
	}
	for (size_t i = 0; i + 1 < map->nkids; i += 2) {
		const struct yamltree_node *k = map->kids[i], *v = map->kids[i + 1];

		if (!yamltree_key_ok(ctx, k, "warm_pool"))
			continue;
		if ((why = policy_name_error(k->text)) != NULL) {
			yamltree_error_at(ctx, k, "warm_pool: profile '%s' %s",
			    yamltree_quote(k->text, &q), why);
			continue;
		}
		if (!yamltree_expect(ctx, v, YAMLTREE_SCALAR, k->text, "warm_pool"))
			continue;
		count = 0;
		snprintf(what, sizeof(what), "warm_pool.%s", k->text);
		config_number(ctx, v, what, 0, cfg->max_sandboxes, &count);
		for (size_t j = 0; j < cfg->nwarm_pool; j++)
			if (strcmp(cfg->warm_pool[j].profile, k->text) == 0)
				yamltree_error_at(ctx, k, "warm_pool: profile '%s' is given twice",
				    yamltree_quote(k->text, &q));
		if (cfg->nwarm_pool == CONFIG_WARM_POOL_PROFILES_MAX) {
			yamltree_error_at(ctx, k, "warm_pool: at most %d profiles",
			    CONFIG_WARM_POOL_PROFILES_MAX);
			return;
		}
		cfg->warm_pool[cfg->nwarm_pool].count = count;
		config_set(ctx, &cfg->warm_pool[cfg->nwarm_pool++].profile, k->text);
		total += count;
	}
	if (total > cfg->max_sandboxes)
		yamltree_error_at(ctx, map, "warm_pool: %u warm sandboxes in all, more than "
		    "max_sandboxes (%u)", total, cfg->max_sandboxes);
}

/* Pass 3: every value of RAW into CFG, then the keys that constrain each
 * other. */
static void
config_validate(struct yamltree_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	size_t before;

	config_paths_all(ctx, raw, cfg);
	config_machine_id(ctx, raw->machine_id, cfg);
	config_account(ctx, raw->user, "user", &cfg->user);
	config_account(ctx, raw->ledger_group, "ledger_group", &cfg->ledger_group);
	config_numbers_all(ctx, raw, cfg);
	before = ctx->nerrors;
	config_pool(ctx, raw->pool, cfg);
	if (ctx->nerrors == before)
		config_pool_capacity(ctx, raw, cfg);
	config_upstream(ctx, raw->upstream, cfg);
	config_allow_cidrs(ctx, raw->allow_cidrs, cfg);
	config_credentials(ctx, raw, cfg);
	config_secrets(ctx, raw, cfg);
	config_host_proxy(ctx, raw, cfg);
	/* Metrics tell what every sandbox does: the host's own processes only. */
	if (raw->metrics_listen != NULL)
		config_listen(ctx, raw->metrics_listen, "metrics.listen", "the metrics listener",
		    &cfg->metrics_listen);
	config_limits(ctx, raw, cfg);
	config_shares(ctx, raw, cfg);
	config_warm_pool(ctx, raw->warm_pool, cfg);
}

/* ---- defaults and lifecycle ---- */

struct config *
config_new_default(void)
{
	struct config *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->socket = strdup(CONFIG_SOCKET_DEFAULT);
	c->state_dir = strdup(CONFIG_STATE_DIR_DEFAULT);
	c->log_dir = strdup(CONFIG_LOG_DIR_DEFAULT);
	c->profiles_dir = strdup(CONFIG_PROFILES_DIR_DEFAULT);
	c->machine_id = strdup(CONFIG_MACHINE_ID_DEFAULT);
	c->user = strdup(CONFIG_USER_DEFAULT);
	c->host_proxy.listen = strdup(CONFIG_HOST_PROXY_LISTEN_DEFAULT);
	c->host_proxy.profile = strdup(PROFILE_DEFAULT_NAME);
	c->max_sandboxes = CONFIG_MAX_SANDBOXES_DEFAULT;
	c->max_sandboxes_per_user = (CONFIG_MAX_SANDBOXES_DEFAULT + 1) / 2;
	proxy_limits_default(&c->egress);
	limits_conf_default(&c->limits, limits_machine_ram(), limits_machine_cpus());
	c->shares.connections = CONFIG_SHARE_CONNECTIONS_DEFAULT;
	c->shares.streams = CONFIG_SHARE_STREAMS_DEFAULT;
	c->shares.buffered_bytes = CONFIG_SHARE_BYTES_DEFAULT;
	c->shares.tunnels = c->egress.max_tunnels / CONFIG_SHARE_TUNNELS_DIVISOR;
	if (c->socket == NULL || c->state_dir == NULL || c->log_dir == NULL ||
	    c->profiles_dir == NULL || c->machine_id == NULL || c->user == NULL ||
	    c->host_proxy.listen == NULL ||
	    c->host_proxy.profile == NULL ||
	    policy_cidr_parse(CONFIG_POOL_DEFAULT, &c->pool) != POLICY_CIDR_OK) {
		config_free(c);
		return NULL;
	}
	return c;
}

static void
config_strings_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
config_warm_pool_free(struct config *c)
{
	for (size_t i = 0; i < c->nwarm_pool; i++)
		free(c->warm_pool[i].profile);
	free(c->warm_pool);
	c->warm_pool = NULL;
	c->nwarm_pool = 0;
}

void
config_free(struct config *c)
{
	if (c == NULL)
		return;
	free(c->socket);
	free(c->upstream_ca_file);
	free(c->state_dir);
	free(c->log_dir);
	free(c->profiles_dir);
	free(c->machine_id);
	free(c->ledger_group);
	free(c->user);
	config_strings_free(c->dns_upstream, c->ndns_upstream);
	free(c->allow_cidrs);
	for (size_t i = 0; i < c->ncredentials; i++) {
		free(c->credentials[i].name);
		config_strings_free(c->credentials[i].paths, c->credentials[i].npaths);
		config_strings_free(c->credentials[i].hosts, c->credentials[i].nhosts);
		config_strings_free(c->credentials[i].env, c->credentials[i].nenv);
	}
	free(c->credentials);
	free(c->grants);
	for (size_t i = 0; i < c->nsecrets; i++) {
		free(c->secrets[i].name);
		free(c->secrets[i].from);
		config_strings_free(c->secrets[i].hosts, c->secrets[i].nhosts);
		config_strings_free(c->secrets[i].env, c->secrets[i].nenv);
		config_strings_free(c->secrets[i].headers, c->secrets[i].nheaders);
		config_strings_free(c->secrets[i].query, c->secrets[i].nquery);
	}
	free(c->secrets);
	free(c->secret_kinds);
	free(c->host_proxy.listen);
	free(c->host_proxy.transparent);
	free(c->host_proxy.dns);
	free(c->host_proxy.policy);
	free(c->host_proxy.profile);
	free(c->host_proxy.cgroup);
	config_warm_pool_free(c);
	free(c->metrics_listen);
	free(c);
}

/* ---- entry points ---- */

/* Parses and validates CTX's input over the defaults in CFG. */
static void
config_document(struct yamltree_ctx *ctx, struct config *cfg)
{
	struct raw_config raw = { 0 };
	struct yamltree_node *root = yamltree_parse(ctx);

	/* No document, or an empty one: every key keeps its default. */
	if (root == NULL || root->type == YAMLTREE_NULL)
		goto out;
	if (root->type != YAMLTREE_MAPPING) {
		if (root->type != YAMLTREE_ALIAS)
			yamltree_error_at(ctx, root, "the configuration must be a mapping (socket, state_dir, ...), but it is %s",
			    yamltree_type_name(root->type));
		goto out;
	}
	config_shape(ctx, root, &raw);
	config_validate(ctx, &raw, cfg);
	free(raw.creds);
	free(raw.secs);
out:
	yamltree_free(root);
}

/* Opens PATH for reading into *FD; 1 when it is absent and that is fine
 * (the default path, not named explicitly), -1 on error, else 0. */
static int
config_open(struct yamltree_ctx *ctx, const char *path, bool explicit_path, int *fd)
{
	struct stat st;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it. */
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (*fd == -1 && errno == ENOENT && !explicit_path)
		return 1;
	if (*fd == -1) {
		yamltree_error(ctx, 0, 0, "cannot open the configuration file: %s%s", strerror(errno),
		    errno == ENOENT ? " (--config and CORRAL_CONFIG must name a file that exists)" : "");
		return -1;
	}
	if (fstat(*fd, &st) == -1) {
		yamltree_error(ctx, 0, 0, "cannot read the file: %s", strerror(errno));
		return -1;
	}
	return yamltree_file_refused(ctx, &st) ? -1 : 0;
}

int
config_load(const char *path, bool explicit_path, struct config **out,
    struct policy_diags *diags)
{
	struct yamltree_ctx ctx = { .doc = &config_doc, .diags = diags,
		.name = path != NULL ? path : CONFIG_PATH_DEFAULT };
	size_t first = diags != NULL ? diags->count : 0;
	struct config *cfg = config_new_default();
	char *data = NULL;
	int fd = -1, rc;

	*out = NULL;
	if (cfg == NULL) {
		yamltree_nomem(&ctx);
		return -1;
	}
	if ((rc = config_open(&ctx, ctx.name, explicit_path, &fd)) == 0 &&
	    yamltree_read_all(&ctx, fd, 0, &data, &ctx.len) == 0) {
		ctx.data = data;
		config_document(&ctx, cfg);
	}
	if (fd != -1)
		close(fd);
	free(data);
	if (diags != NULL)
		policy_diags_sort(diags, first);
	if (ctx.nerrors > 0) {
		config_free(cfg);
		return -1;
	}
	*out = cfg;
	return 0;
}
