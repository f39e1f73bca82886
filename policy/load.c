/* Loading a policy. Three passes over one document:
 * 1. libyaml's events become a small tree of nodes with their positions
 *    (policy/yamltree.c); anchors, aliases, tags, a second document and
 *    deep nesting are refused as they come, so an alias is never expanded.
 * 2. The tree's shape is checked against one table per mapping of the
 *    schema (unknown, duplicate and missing keys, wrong node types); what
 *    fits lands in "raw" structures that point at the tree's nodes.
 * 3. Each raw value is validated and converted into a struct policy.
 * Errors in any pass go to the diagnostics and the passes go on, so one
 * run reports them all; the policy is handed out only when there are none. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/cidr.h"
#include "policy/httprule.h"
#include "policy/load.h"
#include "policy/match.h"
#include "policy/yamltree.h"

#define LOAD_WHAT_MAX_BYTES 160         /* "network policy '...'" */
#define LOAD_PORT_MIN 1
#define LOAD_PORT_MAX 65535
#define LOAD_ID_MAX 4294967294UL        /* the largest uid or gid: (uid_t)-1 means "none" */
#define LOAD_USER_NAME_MAX_BYTES 32     /* a user or group name, as useradd allows */

_Static_assert(POLICY_LOAD_DEPTH_MAX <= YAMLTREE_DEPTH_MAX, "the tree cannot nest that deep");

/* What a policy is to the YAML machinery: its limits and its words. */
static const struct yamltree_doc load_doc = {
	.subject = "a policy",
	.within = "one policy",
	.not_regular = " (a policy is read from a plain file)",
	.input = "input",
	.depth_max = POLICY_LOAD_DEPTH_MAX,
	.nodes_max = POLICY_LOAD_NODES_MAX,
	.bytes_max = POLICY_FILE_MAX_BYTES,
};

/* ---- the raw shape: nodes of the tree, by schema field ---- */

struct raw_endpoint {
	const struct yamltree_node *map, *host, *port, *ports, *allowed_ips, *sni_check;
	const struct yamltree_node *tls, *rules;
};

struct raw_http_rule {
	const struct yamltree_node *map, *methods, *paths;
};

struct raw_binary {
	const struct yamltree_node *map, *path;
};

struct raw_rule {
	const struct yamltree_node *key, *map, *name, *endpoints, *binaries;
	struct raw_endpoint *eps;
	size_t neps;
	struct raw_binary *bins;
	size_t nbins;
};

struct raw_socket {
	const struct yamltree_node *map, *path, *name, *env;
};

struct raw_policy {
	const struct yamltree_node *root, *version, *filesystem, *read_only, *read_write;
	const struct yamltree_node *landlock, *compatibility, *process, *run_as_user, *run_as_group;
	const struct yamltree_node *network, *write_guard, *allowed_root, *deny_reason;
	struct raw_rule *rules;
	size_t nrules;
	const struct yamltree_node *unix_sockets;
	struct raw_socket *socks;
	size_t nsocks;
};

#define RAW(field) offsetof(struct raw_policy, field)
#define RAW_RULE(field) offsetof(struct raw_rule, field)
#define RAW_ENDPOINT(field) offsetof(struct raw_endpoint, field)

static const struct yamltree_field load_policy_fields[] = {
	{ "version", YAMLTREE_SCALAR, RAW(version), false, NULL },
	{ "filesystem_policy", YAMLTREE_MAPPING, RAW(filesystem), false, NULL },
	{ "landlock", YAMLTREE_MAPPING, RAW(landlock), false, NULL },
	{ "process", YAMLTREE_MAPPING, RAW(process), false, NULL },
	{ "network_policies", YAMLTREE_MAPPING, RAW(network), false, NULL },
	{ "write_guard", YAMLTREE_MAPPING, RAW(write_guard), false, NULL },
};

static const struct yamltree_field load_filesystem_fields[] = {
	{ "read_only", YAMLTREE_SEQUENCE, RAW(read_only), false, NULL },
	{ "read_write", YAMLTREE_SEQUENCE, RAW(read_write), false, NULL },
	{ "unix_sockets", YAMLTREE_SEQUENCE, RAW(unix_sockets), false, NULL },
};

static const struct yamltree_field load_socket_fields[] = {
	{ "path", YAMLTREE_SCALAR, offsetof(struct raw_socket, path), false,
	  "required: the host's socket" },
	{ "name", YAMLTREE_SCALAR, offsetof(struct raw_socket, name), false, NULL },
	{ "env", YAMLTREE_SCALAR, offsetof(struct raw_socket, env), false, NULL },
};

static const struct yamltree_field load_landlock_fields[] = {
	{ "compatibility", YAMLTREE_SCALAR, RAW(compatibility), false, NULL },
};

static const struct yamltree_field load_process_fields[] = {
	{ "run_as_user", YAMLTREE_SCALAR, RAW(run_as_user), false, NULL },
	{ "run_as_group", YAMLTREE_SCALAR, RAW(run_as_group), false, NULL },
};

static const struct yamltree_field load_write_guard_fields[] = {
	{ "allowed_root", YAMLTREE_SCALAR, RAW(allowed_root), false, NULL },
	{ "deny_reason", YAMLTREE_SCALAR, RAW(deny_reason), false, NULL },
};

static const struct yamltree_field load_rule_fields[] = {
	{ "name", YAMLTREE_SCALAR, RAW_RULE(name), false, NULL },
	{ "endpoints", YAMLTREE_SEQUENCE, RAW_RULE(endpoints), false,
	  "required: the hosts and ports it lets through" },
	{ "binaries", YAMLTREE_SEQUENCE, RAW_RULE(binaries), false,
	  "required: the programs it lets through, [{path: \"/**\"}] for any, [] for none" },
};

/* The indexes of port and ports, which exclude each other. */
enum { LOAD_ENDPOINT_PORT = 1, LOAD_ENDPOINT_PORTS = 2 };

static const struct yamltree_field load_endpoint_fields[] = {
	{ "host", YAMLTREE_SCALAR, RAW_ENDPOINT(host), false, "required" },
	[LOAD_ENDPOINT_PORT] = { "port", YAMLTREE_SCALAR, RAW_ENDPOINT(port), false, NULL },
	[LOAD_ENDPOINT_PORTS] = { "ports", YAMLTREE_SEQUENCE, RAW_ENDPOINT(ports), false, NULL },
	{ "allowed_ips", YAMLTREE_SEQUENCE, RAW_ENDPOINT(allowed_ips), false, NULL },
	{ "sni_check", YAMLTREE_SCALAR, RAW_ENDPOINT(sni_check), false, NULL },
	{ "tls", YAMLTREE_SCALAR, RAW_ENDPOINT(tls), false, NULL },
	{ "rules", YAMLTREE_SEQUENCE, RAW_ENDPOINT(rules), false, NULL },
};

static const struct yamltree_field load_http_rule_fields[] = {
	{ "methods", YAMLTREE_SEQUENCE, offsetof(struct raw_http_rule, methods), false, NULL },
	{ "paths", YAMLTREE_SEQUENCE, offsetof(struct raw_http_rule, paths), false, NULL },
};

static const struct yamltree_field load_binary_fields[] = {
	{ "path", YAMLTREE_SCALAR, offsetof(struct raw_binary, path), false, "required" },
};

_Static_assert(YAMLTREE_NFIELDS(load_policy_fields) <= YAMLTREE_FIELDS_MAX, "too many fields");
_Static_assert(YAMLTREE_NFIELDS(load_endpoint_fields) <= YAMLTREE_FIELDS_MAX, "too many fields");

/* ---- pass 2: the tree's shape ---- */

static void
load_shape_endpoint(struct yamltree_ctx *ctx, const struct yamltree_node *map,
    struct raw_endpoint *e)
{
	unsigned given, port = YAMLTREE_FIELD_BIT(LOAD_ENDPOINT_PORT);
	unsigned ports = YAMLTREE_FIELD_BIT(LOAD_ENDPOINT_PORTS);

	e->map = map;
	given = yamltree_walk(ctx, map, "endpoint", load_endpoint_fields,
	    YAMLTREE_NFIELDS(load_endpoint_fields), e);
	if ((given & port) && (given & ports))
		yamltree_error_at(ctx, map, "endpoint has both 'port' and 'ports': give one of them");
	else if (!(given & (port | ports)))
		yamltree_error_at(ctx, map, "endpoint has no 'port' or 'ports' (required)");
	yamltree_check_items(ctx, e->ports, YAMLTREE_SCALAR, "ports");
	yamltree_check_items(ctx, e->allowed_ips, YAMLTREE_SCALAR, "allowed_ips");
	yamltree_check_items(ctx, e->rules, YAMLTREE_MAPPING, "rules");
}

static void
load_shape_endpoints(struct yamltree_ctx *ctx, struct raw_rule *r)
{
	const struct yamltree_node *l = r->endpoints;

	if (l == NULL || (r->eps = yamltree_calloc(ctx, l->nkids, sizeof(*r->eps))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		if (yamltree_expect_item(ctx, l->kids[i], YAMLTREE_MAPPING, "endpoints"))
			load_shape_endpoint(ctx, l->kids[i], &r->eps[r->neps++]);
}

static void
load_shape_binaries(struct yamltree_ctx *ctx, struct raw_rule *r)
{
	const struct yamltree_node *l = r->binaries;

	if (l == NULL || (r->bins = yamltree_calloc(ctx, l->nkids, sizeof(*r->bins))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++) {
		struct raw_binary *b = &r->bins[r->nbins];

		if (!yamltree_expect_item(ctx, l->kids[i], YAMLTREE_MAPPING, "binaries"))
			continue;
		b->map = l->kids[i];
		yamltree_walk(ctx, b->map, "binary", load_binary_fields,
		    YAMLTREE_NFIELDS(load_binary_fields), b);
		r->nbins++;
	}
}

static void
load_shape_rule(struct yamltree_ctx *ctx, struct raw_rule *r)
{
	char what[LOAD_WHAT_MAX_BYTES];
	struct yamltree_quoted q;

	snprintf(what, sizeof(what), "network policy '%s'", yamltree_quote(r->key->text, &q));
	yamltree_walk(ctx, r->map, what, load_rule_fields, YAMLTREE_NFIELDS(load_rule_fields), r);
	load_shape_endpoints(ctx, r);
	load_shape_binaries(ctx, r);
}

/* Orders rule keys by text, then by position, for finding duplicates. */
static int
load_rule_key_compare(const void *a, const void *b)
{
	const struct raw_rule *ra = *(const struct raw_rule *const *)a;
	const struct raw_rule *rb = *(const struct raw_rule *const *)b;
	int c = strcmp(ra->key->text, rb->key->text);

	if (c != 0)
		return c;
	return ra < rb ? -1 : ra > rb;
}

/* Duplicate keys under network_policies, found by sorting: a document may
 * hold many entries, and comparing every pair would be quadratic. */
static void
load_shape_rule_dups(struct yamltree_ctx *ctx, struct raw_policy *raw)
{
	const struct raw_rule **sorted;
	struct yamltree_quoted q;

	if (raw->nrules < 2)
		return;
	if ((sorted = yamltree_calloc(ctx, raw->nrules, sizeof(*sorted))) == NULL)
		return;
	for (size_t i = 0; i < raw->nrules; i++)
		sorted[i] = &raw->rules[i];
	qsort(sorted, raw->nrules, sizeof(*sorted), load_rule_key_compare);
	for (size_t i = 1; i < raw->nrules; i++) {
		const struct yamltree_node *k = sorted[i]->key, *prev = sorted[i - 1]->key;

		if (strcmp(k->text, prev->text) == 0)
			yamltree_error_at(ctx, k, "duplicate key '%s' in network_policies (first given at line %u, column %u)",
			    yamltree_quote(k->text, &q), prev->line, prev->col);
	}
	free(sorted);
}

static void
load_shape_network(struct yamltree_ctx *ctx, struct raw_policy *raw)
{
	const struct yamltree_node *map = raw->network;
	size_t n = map->nkids / 2;

	if ((raw->rules = yamltree_calloc(ctx, n, sizeof(*raw->rules))) == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct yamltree_node *k = map->kids[2 * i], *v = map->kids[2 * i + 1];
		struct raw_rule *r = &raw->rules[raw->nrules];
		struct yamltree_quoted q;

		if (!yamltree_key_ok(ctx, k, "network_policies") ||
		    !yamltree_expect(ctx, v, YAMLTREE_MAPPING, yamltree_quote(k->text, &q), "network_policies"))
			continue;
		r->key = k;
		r->map = v;
		raw->nrules++;
		load_shape_rule(ctx, r);
	}
	load_shape_rule_dups(ctx, raw);
}

/* filesystem_policy.unix_sockets: a list of mappings. */
static void
load_shape_sockets(struct yamltree_ctx *ctx, struct raw_policy *raw)
{
	const struct yamltree_node *l = raw->unix_sockets;

	if (l == NULL)
		return;
	if (l->nkids > POLICY_UNIX_SOCKETS_MAX) {
		yamltree_error_at(ctx, l, "unix_sockets lists %zu sockets: at most %d",
		    l->nkids, POLICY_UNIX_SOCKETS_MAX);
		return;
	}
	if ((raw->socks = yamltree_calloc(ctx, l->nkids, sizeof(*raw->socks))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++) {
		struct raw_socket *u = &raw->socks[raw->nsocks];

		if (!yamltree_expect_item(ctx, l->kids[i], YAMLTREE_MAPPING, "unix_sockets"))
			continue;
		u->map = l->kids[i];
		yamltree_walk(ctx, u->map, "unix socket", load_socket_fields,
		    YAMLTREE_NFIELDS(load_socket_fields), u);
		raw->nsocks++;
	}
}

/* Pass 2: the shape of the whole document. */
static void
load_shape(struct yamltree_ctx *ctx, const struct yamltree_node *root, struct raw_policy *raw)
{
	raw->root = root;
	yamltree_walk(ctx, root, "the policy", load_policy_fields,
	    YAMLTREE_NFIELDS(load_policy_fields), raw);
	/* A walk or check of a key not given (NULL) does nothing. */
	yamltree_walk(ctx, raw->filesystem, "filesystem_policy", load_filesystem_fields,
	    YAMLTREE_NFIELDS(load_filesystem_fields), raw);
	yamltree_check_items(ctx, raw->read_only, YAMLTREE_SCALAR, "read_only");
	yamltree_check_items(ctx, raw->read_write, YAMLTREE_SCALAR, "read_write");
	load_shape_sockets(ctx, raw);
	yamltree_walk(ctx, raw->landlock, "landlock", load_landlock_fields,
	    YAMLTREE_NFIELDS(load_landlock_fields), raw);
	yamltree_walk(ctx, raw->process, "process", load_process_fields,
	    YAMLTREE_NFIELDS(load_process_fields), raw);
	yamltree_walk(ctx, raw->write_guard, "write_guard", load_write_guard_fields,
	    YAMLTREE_NFIELDS(load_write_guard_fields), raw);
	if (raw->network != NULL)
		load_shape_network(ctx, raw);
}

static void
load_raw_clear(struct raw_policy *raw)
{
	for (size_t i = 0; i < raw->nrules; i++) {
		free(raw->rules[i].eps);
		free(raw->rules[i].bins);
	}
	free(raw->rules);
	free(raw->socks);
}

/* ---- pass 3: values ---- */

/* Reads the port N, or says why it is no port. */
static bool
load_port(struct yamltree_ctx *ctx, const struct yamltree_node *n, uint16_t *out)
{
	unsigned long v = 0;
	enum yamltree_num err;

	err = yamltree_number(n->text, n->plain, LOAD_PORT_MIN, LOAD_PORT_MAX, &v);

	if (err != YAMLTREE_NUM_OK) {
		yamltree_number_report(ctx, n, err, "port", "1-65535");
		return false;
	}
	*out = (uint16_t)v;
	return true;
}

/* True when the text of N has no control character (tab included): it
 * ends up in messages, logs and rendered YAML. */
static bool
load_text_ok(struct yamltree_ctx *ctx, const struct yamltree_node *n, const char *what)
{
	struct yamltree_quoted q;

	if (n->len == 0) {
		yamltree_error_at(ctx, n, "%s is empty", what);
		return false;
	}
	if (n->len >= POLICY_LOAD_TEXT_MAX_BYTES) {
		yamltree_error_at(ctx, n, "%s is longer than %d bytes", what, POLICY_LOAD_TEXT_MAX_BYTES - 1);
		return false;
	}
	if (yamltree_has_control(n->text)) {
		yamltree_error_at(ctx, n, "%s '%s' has a control character", what,
		    yamltree_quote(n->text, &q));
		return false;
	}
	return true;
}

/* A copy of N's text into *OUT when it is acceptable text. */
static void
load_text(struct yamltree_ctx *ctx, const struct yamltree_node *n, const char *what, char **out)
{
	if (!load_text_ok(ctx, n, what))
		return;
	if ((*out = strdup(n->text)) == NULL)
		yamltree_nomem(ctx);
}

static void
load_version(struct yamltree_ctx *ctx, const struct yamltree_node *n, struct policy *p)
{
	unsigned long v = 0;
	enum yamltree_num err;

	if (n == NULL)
		return;
	if ((err = yamltree_number(n->text, n->plain, 0, INT_MAX, &v)) != YAMLTREE_NUM_OK)
		yamltree_number_report(ctx, n, err, "version", "this corral reads version 1");
	else if (v != POLICY_VERSION)
		yamltree_error_at(ctx, n, "unsupported policy version %lu (this corral reads version %d)",
		    v, POLICY_VERSION);
	else
		p->version = POLICY_VERSION;
}

/* Validates the list L of paths into PP, named KEY in messages. Returns
 * the node of each path kept (free() it), for later messages; NULL when
 * none was kept or memory ran out. */
static const struct yamltree_node **
load_paths(struct yamltree_ctx *ctx, const struct yamltree_node *l, const char *key, struct policy_paths *pp)
{
	const struct yamltree_node **nodes;
	struct yamltree_quoted q;

	if (l == NULL || l->nkids == 0)
		return NULL;
	pp->paths = yamltree_calloc(ctx, l->nkids, sizeof(*pp->paths));
	nodes = yamltree_calloc(ctx, l->nkids, sizeof(*nodes));
	for (size_t i = 0; pp->paths != NULL && nodes != NULL && i < l->nkids; i++) {
		const struct yamltree_node *n = l->kids[i];
		const char *why;
		char *path;

		if (n->type != YAMLTREE_SCALAR)
			continue;
		if (n->len >= POLICY_LOAD_PATH_MAX_BYTES) {
			yamltree_error_at(ctx, n, "path in %s is longer than %d bytes", key,
			    POLICY_LOAD_PATH_MAX_BYTES - 1);
			continue;
		}
		if ((path = malloc(n->len + 2)) == NULL) {
			yamltree_nomem(ctx);
			break;
		}
		if ((why = yamltree_path_normalize(n->text, true, path)) != NULL) {
			yamltree_error_at(ctx, n, "path '%s' in %s %s", yamltree_quote(n->text, &q), key, why);
			free(path);
			continue;
		}
		nodes[pp->npaths] = n;
		pp->paths[pp->npaths++] = path;
	}
	return nodes;
}

/* One path of either list, for finding those in both. */
struct load_path_ref {
	const char *path;
	const struct yamltree_node *node;
	bool writable;
};

static int
load_path_ref_compare(const void *a, const void *b)
{
	const struct load_path_ref *pa = a, *pb = b;
	int c = strcmp(pa->path, pb->path);

	return c != 0 ? c : (int)pa->writable - (int)pb->writable;
}

static void
load_path_refs_add(struct load_path_ref *refs, size_t *n, const struct policy_paths *pp,
    const struct yamltree_node **nodes, bool writable)
{
	for (size_t i = 0; i < pp->npaths; i++) {
		refs[*n].path = pp->paths[i];
		refs[*n].node = nodes[i];
		refs[(*n)++].writable = writable;
	}
}

/* A path in both read_only and read_write is a contradiction: refused
 * rather than guessed at. Found by sorting, as lists can be long. */
static void
load_paths_overlap(struct yamltree_ctx *ctx, const struct policy *p,
    const struct yamltree_node **ro_nodes, const struct yamltree_node **rw_nodes)
{
	size_t n = 0;
	struct load_path_ref *refs;
	struct yamltree_quoted q;

	if (p->read_only.npaths == 0 || p->read_write.npaths == 0)
		return;
	refs = yamltree_calloc(ctx, p->read_only.npaths + p->read_write.npaths, sizeof(*refs));
	if (refs == NULL)
		return;
	load_path_refs_add(refs, &n, &p->read_only, ro_nodes, false);
	load_path_refs_add(refs, &n, &p->read_write, rw_nodes, true);
	qsort(refs, n, sizeof(*refs), load_path_ref_compare);
	for (size_t i = 1; i < n; i++)
		if (refs[i].writable && !refs[i - 1].writable &&
		    strcmp(refs[i].path, refs[i - 1].path) == 0)
			yamltree_error_at(ctx, refs[i].node,
			    "path '%s' is in both read_only (line %u) and read_write: keep it in one",
			    yamltree_quote(refs[i].path, &q), refs[i - 1].node->line);
	free(refs);
}

/* Both path lists of RAW into P. */
static void
load_filesystem(struct yamltree_ctx *ctx, const struct raw_policy *raw, struct policy *p)
{
	const struct yamltree_node **ro_nodes, **rw_nodes;

	ro_nodes = load_paths(ctx, raw->read_only, "read_only", &p->read_only);
	rw_nodes = load_paths(ctx, raw->read_write, "read_write", &p->read_write);
	if (ro_nodes != NULL && rw_nodes != NULL)
		load_paths_overlap(ctx, p, ro_nodes, rw_nodes);
	free(ro_nodes);
	free(rw_nodes);
}

static void
load_landlock(struct yamltree_ctx *ctx, const struct yamltree_node *n, struct policy *p)
{
	struct yamltree_quoted q;

	if (n == NULL)
		return;
	if (strcmp(n->text, "hard_requirement") == 0)
		p->landlock = POLICY_LANDLOCK_HARD_REQUIREMENT;
	else if (strcmp(n->text, "best_effort") == 0)
		p->landlock = POLICY_LANDLOCK_BEST_EFFORT;
	else
		yamltree_error_at(ctx, n, "unknown landlock compatibility '%s' (expected hard_requirement or best_effort)",
		    yamltree_quote(n->text, &q));
}

/* True when S is a user or group name as useradd accepts it. */
static bool
load_user_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > LOAD_USER_NAME_MAX_BYTES || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < len; i++) {
		char c = s[i];

		if (c == '$' && i == len - 1)
			break;
		if (!(c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/* Why the decimal uid or gid TEXT is refused, or NULL. */
static const char *
load_id_check(const char *text)
{
	unsigned long long v = 0;
	size_t len = strlen(text);

	if (text[0] == '0' && len > 1)
		return "has a leading zero";
	if (len > 10)
		return "is out of range";
	for (size_t i = 0; i < len; i++)
		v = v * 10 + (unsigned)(text[i] - '0');
	if (v > LOAD_ID_MAX)
		return "is out of range";
	/* Never uid or gid 0 inside a sandbox. */
	if (v == 0)
		return "is root, and sandboxes never run as root";
	return NULL;
}

/* Validates run_as_user or run_as_group (KEY): an id, quoted or not ("1000"
 * is the usual form), or a user or group name. */
static void
load_run_as(struct yamltree_ctx *ctx, const struct yamltree_node *n, const char *key, char **out)
{
	struct yamltree_quoted q;
	const char *why = NULL;

	if (n->len > 0 && strspn(n->text, "0123456789") == n->len)
		why = load_id_check(n->text);
	else if (!load_user_name_ok(n->text, n->len))
		why = "is neither a number nor a user name";
	else if (strcmp(n->text, "root") == 0)
		why = "is root, and sandboxes never run as root";
	if (why != NULL) {
		yamltree_error_at(ctx, n, "%s '%s' %s", key, yamltree_quote(n->text, &q), why);
		return;
	}
	if ((*out = strdup(n->text)) == NULL)
		yamltree_nomem(ctx);
}

static void
load_process(struct yamltree_ctx *ctx, const struct raw_policy *raw, struct policy *p)
{
	if (raw->process == NULL)
		return;
	p->has_process = true;
	if (raw->run_as_user != NULL)
		load_run_as(ctx, raw->run_as_user, "run_as_user", &p->run_as_user);
	if (raw->run_as_group != NULL)
		load_run_as(ctx, raw->run_as_group, "run_as_group", &p->run_as_group);
}

static void
load_write_guard(struct yamltree_ctx *ctx, const struct raw_policy *raw, struct policy *p)
{
	struct yamltree_quoted q;

	if (raw->write_guard == NULL)
		return;
	p->has_write_guard = true;
	if (raw->allowed_root != NULL && strcmp(raw->allowed_root->text, "workspace") != 0)
		yamltree_error_at(ctx, raw->allowed_root, "write_guard allowed_root '%s' is not supported (expected workspace)",
		    yamltree_quote(raw->allowed_root->text, &q));
	if (raw->deny_reason != NULL)
		load_text(ctx, raw->deny_reason, "write_guard deny_reason", &p->write_guard_deny_reason);
}

/* ---- host Unix sockets ---- */

/* True when NAME (LEN bytes) can name a socket in POLICY_UNIX_SOCKETS_DIR:
 * one file name of letters, digits, '.', '_' and '-', not hidden. */
static bool
load_socket_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > POLICY_UNIX_SOCKET_NAME_MAX_BYTES || name[0] == '.')
		return false;
	return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-") == len;
}

/* Why the variable NAME may not name a socket, or NULL: a shell name, and
 * none that corral sets itself or that steers the dynamic loader. */
static const char *
load_env_refusal(const char *name, size_t len)
{
	static const char *const taken[] = { "HOME", "PATH", "LANG", "NO_PROXY", "no_proxy" };
	size_t proxy = sizeof("_proxy") - 1;

	if (len == 0 || len > POLICY_ENV_NAME_MAX_BYTES || (name[0] >= '0' && name[0] <= '9') ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != len)
		return "is not a variable name (letters, digits and _, at most 64)";
	for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
		if (strcmp(name, taken[i]) == 0)
			return "is set by corral itself";
	if (len >= proxy && strcasecmp(name + len - proxy, "_proxy") == 0)
		return "is set by corral itself";
	if (strncmp(name, "LD_", 3) == 0)
		return "steers the dynamic loader";
	return NULL;
}

/* The host path of R into U; false when refused. */
static bool
load_socket_path(struct yamltree_ctx *ctx, const struct raw_socket *r, struct policy_unix_socket *u)
{
	const struct yamltree_node *n = r->path;
	struct yamltree_quoted q;
	const char *why;

	if (n->len >= POLICY_LOAD_PATH_MAX_BYTES) {
		yamltree_error_at(ctx, n, "unix socket path is longer than %d bytes",
		    POLICY_LOAD_PATH_MAX_BYTES - 1);
		return false;
	}
	if ((u->path = malloc(n->len + 2)) == NULL) {
		yamltree_nomem(ctx);
		return false;
	}
	if ((why = yamltree_path_normalize(n->text, true, u->path)) != NULL ||
	    (why = strcmp(u->path, "/") == 0 ? "is the root folder, not a socket" : NULL) != NULL) {
		yamltree_error_at(ctx, n, "unix socket path '%s' %s", yamltree_quote(n->text, &q), why);
		free(u->path);
		u->path = NULL;
		return false;
	}
	return true;
}

/* The name inside: R's name:, else the path's last component. */
static void
load_socket_name(struct yamltree_ctx *ctx, const struct raw_socket *r, struct policy_unix_socket *u)
{
	const char *name = r->name != NULL ? r->name->text : strrchr(u->path, '/') + 1;
	struct yamltree_quoted q;

	if (!load_socket_name_ok(name, strlen(name))) {
		yamltree_error_at(ctx, r->name != NULL ? r->name : r->path,
		    "unix socket name '%s' %s: it must be a file name of letters, digits, "
		    "'.', '_' and '-', at most %d, not starting with '.'%s",
		    yamltree_quote(name, &q), r->name != NULL ? "is refused" :
		    "(the path's last component) is refused", POLICY_UNIX_SOCKET_NAME_MAX_BYTES,
		    r->name != NULL ? "" : "; give name:");
		return;
	}
	if ((u->name = strdup(name)) == NULL)
		yamltree_nomem(ctx);
}

static void
load_socket_env(struct yamltree_ctx *ctx, const struct raw_socket *r, struct policy_unix_socket *u)
{
	struct yamltree_quoted q;
	const char *why;

	if (r->env == NULL)
		return;
	if ((why = load_env_refusal(r->env->text, r->env->len)) != NULL) {
		yamltree_error_at(ctx, r->env, "unix socket env '%s' %s",
		    yamltree_quote(r->env->text, &q), why);
		return;
	}
	if ((u->env = strdup(r->env->text)) == NULL)
		yamltree_nomem(ctx);
}

/* True when A and B are both given and the same. */
static bool
load_same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* What B repeats of A ("path", "name", "env"), its text in *TEXT; NULL: nothing. */
static const char *
load_socket_clash(const struct policy_unix_socket *a, const struct policy_unix_socket *b,
    const char **text)
{
	if (load_same(a->path, b->path))
		return (*text = b->path, "path");
	if (load_same(a->name, b->name))
		return (*text = b->name, "name");
	if (load_same(a->env, b->env))
		return (*text = b->env, "env");
	return NULL;
}

/* A path, name or variable given by two entries: each must be one socket's. */
static void
load_sockets_dups(struct yamltree_ctx *ctx, const struct policy *p)
{
	struct yamltree_quoted q;
	const char *what, *text;

	for (size_t i = 1; i < p->nunix_sockets; i++)
		for (size_t j = 0; j < i; j++) {
			const struct policy_unix_socket *a = &p->unix_sockets[j], *b = &p->unix_sockets[i];

			if ((what = load_socket_clash(a, b, &text)) == NULL)
				continue;
			yamltree_error(ctx, b->line, b->col, "unix socket %s '%s' is given twice (first "
			    "at line %u, column %u)", what, yamltree_quote(text, &q), a->line, a->col);
			break;
		}
}

/* filesystem_policy.unix_sockets of RAW into P. */
static void
load_sockets(struct yamltree_ctx *ctx, const struct raw_policy *raw, struct policy *p)
{
	if (raw->nsocks == 0)
		return;
	if ((p->unix_sockets = yamltree_calloc(ctx, raw->nsocks, sizeof(*p->unix_sockets))) == NULL)
		return;
	for (size_t i = 0; i < raw->nsocks; i++) {
		const struct raw_socket *r = &raw->socks[i];
		struct policy_unix_socket *u = &p->unix_sockets[p->nunix_sockets++];

		u->line = r->map->line;
		u->col = r->map->col;
		if (r->path == NULL || !load_socket_path(ctx, r, u))
			continue;
		load_socket_name(ctx, r, u);
		load_socket_env(ctx, r, u);
	}
	load_sockets_dups(ctx, p);
}

/* ---- addresses ---- */

/* Says why the allowed_ips entry N does not parse. */
static void
load_cidr_report(struct yamltree_ctx *ctx, const struct yamltree_node *n,
    enum policy_cidr_err err, struct policy_cidr *c)
{
	char net[INET6_ADDRSTRLEN];
	struct yamltree_quoted q;
	const char *text = yamltree_quote(n->text, &q);

	if (err == POLICY_CIDR_ERR_FORM)
		yamltree_error_at(ctx, n, "allowed_ips '%s' is not ADDRESS/PREFIX (e.g. 10.0.0.0/8)", text);
	else if (err == POLICY_CIDR_ERR_ADDRESS)
		yamltree_error_at(ctx, n, "allowed_ips '%s' has no valid IPv4 or IPv6 address before the '/'", text);
	else if (err == POLICY_CIDR_ERR_PREFIX || err == POLICY_CIDR_ERR_PREFIX_RANGE)
		yamltree_error_at(ctx, n, "allowed_ips '%s' has a bad prefix length (0-%u)", text,
		    policy_cidr_bits(c->family));
	if (err != POLICY_CIDR_ERR_HOST_BITS)
		return;
	policy_cidr_mask(c);
	inet_ntop(c->family, c->addr, net, sizeof(net));
	yamltree_error_at(ctx, n, "allowed_ips '%s' has bits set past its prefix length (the network is %s/%u)",
	    text, net, c->prefix_len);
}

/* Validates one allowed_ips entry into OUT. */
static bool
load_cidr(struct yamltree_ctx *ctx, const struct yamltree_node *n, struct policy_cidr *out)
{
	enum policy_cidr_err err = policy_cidr_parse(n->text, out);
	struct yamltree_quoted q;
	const char *what;

	if (err != POLICY_CIDR_OK) {
		load_cidr_report(ctx, n, err, out);
		return false;
	}
	switch (policy_cidr_forbidden(out, &what)) {
	case POLICY_CIDR_EVERYTHING:
		yamltree_error_at(ctx, n, "allowed_ips '%s' covers every address: name only the internal ranges the entry needs",
		    yamltree_quote(n->text, &q));
		return false;
	case POLICY_CIDR_UNREACHABLE:
		yamltree_error_at(ctx, n, "allowed_ips '%s' overlaps %s, which a sandbox may never reach",
		    yamltree_quote(n->text, &q), what);
		return false;
	default:
		return true;
	}
}

/* ---- network policies ---- */

static int
load_port_compare(const void *a, const void *b)
{
	uint16_t pa = *(const uint16_t *)a, pb = *(const uint16_t *)b;

	return (pa > pb) - (pa < pb);
}

/* Sorts E's ports and drops repeats. */
static void
load_ports_sort(struct policy_endpoint *e)
{
	size_t o = 0;

	if (e->nports == 0)
		return;
	qsort(e->ports, e->nports, sizeof(*e->ports), load_port_compare);
	for (size_t i = 1; i < e->nports; i++)
		if (e->ports[i] != e->ports[o])
			e->ports[++o] = e->ports[i];
	e->nports = o + 1;
}

static void
load_endpoint_ports(struct yamltree_ctx *ctx, const struct raw_endpoint *r, struct policy_endpoint *e)
{
	const struct yamltree_node *l = r->ports;

	if (r->port != NULL && r->ports == NULL) {
		if ((e->ports = yamltree_calloc(ctx, 1, sizeof(*e->ports))) != NULL &&
		    load_port(ctx, r->port, &e->ports[0]))
			e->nports = 1;
		return;
	}
	if (l == NULL || r->port != NULL)
		return;
	if (l->nkids == 0) {
		yamltree_error_at(ctx, l, "'ports' is empty: list at least one port");
		return;
	}
	if ((e->ports = yamltree_calloc(ctx, l->nkids, sizeof(*e->ports))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		if (l->kids[i]->type == YAMLTREE_SCALAR && load_port(ctx, l->kids[i], &e->ports[e->nports]))
			e->nports++;
	load_ports_sort(e);
}

static void
load_endpoint_sni(struct yamltree_ctx *ctx, const struct yamltree_node *n, struct policy_endpoint *e)
{
	struct yamltree_quoted q;
	const char *s = n->text;

	e->sni_check = true;
	if (n->plain && (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0))
		return;
	if (n->plain && (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0)) {
		e->sni_check = false;
		return;
	}
	yamltree_error_at(ctx, n, "'sni_check' must be true or false, not '%s'", yamltree_quote(s, &q));
}

static void
load_endpoint_tls(struct yamltree_ctx *ctx, const struct yamltree_node *n, struct policy_endpoint *e)
{
	struct yamltree_quoted q;

	if (n->plain && strcmp(n->text, "terminate") == 0)
		e->tls = POLICY_TLS_TERMINATE;
	else if (n->plain && strcmp(n->text, "passthrough") == 0)
		e->tls = POLICY_TLS_PASSTHROUGH;
	else
		yamltree_error_at(ctx, n, "'tls' must be terminate or passthrough, not '%s'",
		    yamltree_quote(n->text, &q));
}

/* One list of a rule (methods or paths, named WHAT) into OUT, each item
 * checked by CHECK. */
static void
load_http_list(struct yamltree_ctx *ctx, const struct yamltree_node *l, const char *what,
    const char *(*check)(const char *), struct policy_paths *out)
{
	struct yamltree_quoted q;
	const char *why;

	if (l == NULL)
		return;
	if (l->nkids == 0 || l->nkids > HTTPRULE_ITEMS_MAX) {
		yamltree_error_at(ctx, l, "'%ss' lists %zu items: give 1 to %d, or leave it out to "
		    "match any %s", what, l->nkids, HTTPRULE_ITEMS_MAX, what);
		return;
	}
	if ((out->paths = yamltree_calloc(ctx, l->nkids, sizeof(*out->paths))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++) {
		const struct yamltree_node *n = l->kids[i];

		if (n->type != YAMLTREE_SCALAR)
			continue;
		if ((why = check(n->text)) != NULL) {
			yamltree_error_at(ctx, n, "%s '%s' %s", what, yamltree_quote(n->text, &q), why);
			continue;
		}
		if ((out->paths[out->npaths] = strdup(n->text)) == NULL) {
			yamltree_nomem(ctx);
			return;
		}
		out->npaths++;
	}
}

/* The endpoint's method and path rules (corral-policy(5), "rules"). */
static void
load_endpoint_rules(struct yamltree_ctx *ctx, const struct yamltree_node *l,
    struct policy_endpoint *e)
{
	if (e->tls != POLICY_TLS_TERMINATE) {
		yamltree_error_at(ctx, l, "'rules' needs 'tls: terminate': the proxy reads the "
		    "requests only of connections it terminates");
		return;
	}
	if (l->nkids == 0 || l->nkids > HTTPRULE_MAX) {
		yamltree_error_at(ctx, l, "'rules' lists %zu rules: give 1 to %d, or leave it out to "
		    "let every request through", l->nkids, HTTPRULE_MAX);
		return;
	}
	if ((e->http_rules = yamltree_calloc(ctx, l->nkids, sizeof(*e->http_rules))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++) {
		struct policy_http_rule *rule = &e->http_rules[e->nhttp_rules];
		struct raw_http_rule raw = { .map = l->kids[i] };

		if (raw.map->type != YAMLTREE_MAPPING)
			continue;
		yamltree_walk(ctx, raw.map, "rule", load_http_rule_fields,
		    YAMLTREE_NFIELDS(load_http_rule_fields), &raw);
		yamltree_check_items(ctx, raw.methods, YAMLTREE_SCALAR, "methods");
		yamltree_check_items(ctx, raw.paths, YAMLTREE_SCALAR, "paths");
		rule->line = raw.map->line;
		rule->col = raw.map->col;
		e->nhttp_rules++;
		load_http_list(ctx, raw.methods, "method", httprule_method_error, &rule->methods);
		load_http_list(ctx, raw.paths, "path", httprule_path_error, &rule->paths);
	}
}

static void
load_endpoint(struct yamltree_ctx *ctx, const struct raw_endpoint *r, struct policy_endpoint *e)
{
	const struct yamltree_node *l = r->allowed_ips;
	struct yamltree_quoted q;
	enum match_err err;

	e->line = r->map->line;
	e->col = r->map->col;
	e->sni_check = true;
	if (r->host != NULL && (err = match_host_parse(r->host->text, &e->host)) != MATCH_OK) {
		if (err == MATCH_ERR_NOMEM)
			yamltree_nomem(ctx);
		else
			yamltree_error_at(ctx, r->host, "host '%s': %s", yamltree_quote(r->host->text, &q),
			    match_strerror(err));
	}
	load_endpoint_ports(ctx, r, e);
	if (r->sni_check != NULL)
		load_endpoint_sni(ctx, r->sni_check, e);
	if (r->tls != NULL)
		load_endpoint_tls(ctx, r->tls, e);
	if (r->rules != NULL)
		load_endpoint_rules(ctx, r->rules, e);
	if (l == NULL || (e->allowed_ips = yamltree_calloc(ctx, l->nkids, sizeof(*e->allowed_ips))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		if (l->kids[i]->type == YAMLTREE_SCALAR &&
		    load_cidr(ctx, l->kids[i], &e->allowed_ips[e->nallowed_ips]))
			e->nallowed_ips++;
}

static void
load_binaries(struct yamltree_ctx *ctx, const struct raw_rule *r, struct policy_rule *rule)
{
	struct yamltree_quoted q;
	enum match_err err;

	if ((rule->binaries = yamltree_calloc(ctx, r->nbins, sizeof(*rule->binaries))) == NULL)
		return;
	for (size_t i = 0; i < r->nbins; i++) {
		const struct yamltree_node *n = r->bins[i].path;

		if (n == NULL)
			continue;
		if ((err = match_binary_check(n->text)) != MATCH_OK) {
			yamltree_error_at(ctx, n, "binary '%s': %s", yamltree_quote(n->text, &q), match_strerror(err));
			continue;
		}
		if ((rule->binaries[rule->nbinaries].path = strdup(n->text)) == NULL) {
			yamltree_nomem(ctx);
			return;
		}
		rule->nbinaries++;
		/* The glob of every program: the decision needs no identification. */
		if (strcmp(n->text, MATCH_ANY_BINARY_GLOB) == 0)
			rule->any_binary = true;
	}
}

static void
load_rule(struct yamltree_ctx *ctx, const struct raw_rule *r, struct policy_rule *rule)
{
	load_text(ctx, r->key, "network policy key", &rule->key);
	if (r->name != NULL)
		load_text(ctx, r->name, "network policy name", &rule->name);
	else if (rule->key != NULL && (rule->name = strdup(rule->key)) == NULL)
		yamltree_nomem(ctx);
	if ((rule->endpoints = yamltree_calloc(ctx, r->neps, sizeof(*rule->endpoints))) != NULL) {
		for (size_t i = 0; i < r->neps; i++)
			load_endpoint(ctx, &r->eps[i], &rule->endpoints[i]);
		rule->nendpoints = r->neps;
	}
	load_binaries(ctx, r, rule);
}

/* Pass 3: every value of RAW into P. */
static void
load_validate(struct yamltree_ctx *ctx, const struct raw_policy *raw, struct policy *p)
{
	load_version(ctx, raw->version, p);
	load_filesystem(ctx, raw, p);
	load_sockets(ctx, raw, p);
	load_landlock(ctx, raw->compatibility, p);
	load_process(ctx, raw, p);
	load_write_guard(ctx, raw, p);
	if ((p->rules = yamltree_calloc(ctx, raw->nrules, sizeof(*p->rules))) == NULL)
		return;
	p->nrules = raw->nrules;
	for (size_t i = 0; i < raw->nrules; i++)
		load_rule(ctx, &raw->rules[i], &p->rules[i]);
}

/* ---- entry points ---- */

/* Parses and validates CTX's input into P, reporting every error. */
static void
load_document(struct yamltree_ctx *ctx, struct policy *p)
{
	struct raw_policy raw = { 0 };
	struct yamltree_node *root;

	if ((root = yamltree_parse(ctx)) == NULL) {
		if (ctx->nerrors == 0)
			yamltree_error(ctx, 1, 1, "the policy is empty: expected a mapping with at least 'version: 1'");
		return;
	}
	if (root->type != YAMLTREE_MAPPING) {
		if (root->type == YAMLTREE_NULL)
			yamltree_error_at(ctx, root, "the policy is empty: expected a mapping with at least 'version: 1'");
		else if (root->type != YAMLTREE_ALIAS)
			yamltree_error_at(ctx, root, "the policy must be a mapping (version, filesystem_policy, ...), but it is %s",
			    yamltree_type_name(root->type));
		yamltree_free(root);
		return;
	}
	load_shape(ctx, root, &raw);
	load_validate(ctx, &raw, p);
	load_raw_clear(&raw);
	yamltree_free(root);
}

int
policy_load_buffer(const char *name, const char *data, size_t len,
    struct policy **out, struct policy_diags *diags)
{
	struct yamltree_ctx ctx = { .doc = &load_doc, .name = name, .data = data, .len = len,
		.diags = diags };
	size_t first = diags != NULL ? diags->count : 0;
	struct policy *p;

	*out = NULL;
	if (len > POLICY_FILE_MAX_BYTES) {
		yamltree_error(&ctx, 0, 0, "the policy is %zu bytes, over the limit of %d bytes",
		    len, POLICY_FILE_MAX_BYTES);
		return -1;
	}
	if ((p = policy_new()) == NULL) {
		yamltree_nomem(&ctx);
		return -1;
	}
	load_document(&ctx, p);
	if (diags != NULL)
		policy_diags_sort(diags, first);
	if (ctx.nerrors > 0) {
		policy_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int
policy_load_fd(int fd, const char *name, struct policy **out, struct policy_diags *diags)
{
	struct yamltree_ctx ctx = { .doc = &load_doc, .name = name, .diags = diags };
	struct stat st;
	char *data = NULL;
	size_t len = 0;
	int rc = -1;

	*out = NULL;
	if (fstat(fd, &st) == -1) {
		yamltree_error(&ctx, 0, 0, "cannot read the file: %s", strerror(errno));
		goto out;
	}
	if (yamltree_file_refused(&ctx, &st) ||
	    yamltree_read_all(&ctx, fd, (size_t)st.st_size, &data, &len) == -1)
		goto out;
	rc = policy_load_buffer(name, data, len, out, diags);
out:
	free(data);
	return rc;
}

int
policy_load_stream(int fd, const char *name, struct policy **out, struct policy_diags *diags)
{
	struct yamltree_ctx ctx = { .doc = &load_doc, .name = name, .diags = diags };
	char *data = NULL;
	size_t len = 0;
	int rc = -1;

	*out = NULL;
	if (yamltree_read_all(&ctx, fd, 0, &data, &len) == 0)
		rc = policy_load_buffer(name, data, len, out, diags);
	free(data);
	return rc;
}

int
policy_load_file(const char *path, struct policy **out, struct policy_diags *diags)
{
	struct yamltree_ctx ctx = { .doc = &load_doc, .name = path, .diags = diags };
	int fd, rc;

	*out = NULL;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		yamltree_error(&ctx, 0, 0, "cannot open the file: %s", strerror(errno));
		return -1;
	}
	rc = policy_load_fd(fd, path, out, diags);
	close(fd);
	return rc;
}
