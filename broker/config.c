/* corrald's configuration file (DESIGN section 7). Three passes over one
 * document, in the manner of policy/load.c:
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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <yaml.h>

#include "broker/conf.h"
#include "policy/grant.h"
#include "policy/match.h"
#include "policy/name.h"
#include "policy/profile.h"

#define CONFIG_FILE_MAX_BYTES (256 * 1024)      /* the configuration file */
#define CONFIG_READ_CHUNK_BYTES 4096            /* the first buffer when the size is unknown */
#define CONFIG_DEPTH_MAX 8                      /* nested mappings and lists (4 are used) */
#define CONFIG_NODES_MAX 20000                  /* YAML nodes in the document */
#define CONFIG_FIELDS_MAX 16                    /* keys in one mapping of the schema */
#define CONFIG_PATH_MAX_BYTES 4096              /* a path, NUL included */
#define CONFIG_SOCKET_PATH_MAX_BYTES sizeof(((struct sockaddr_un *)NULL)->sun_path)
#define CONFIG_TEXT_MAX_BYTES 1024              /* a host, an env entry, NUL included */
#define CONFIG_MACHINE_ID_MAX_BYTES 63
#define CONFIG_QUOTE_MAX_BYTES 64               /* of a user's text shown in a message */
#define CONFIG_EXPECTED_MAX_BYTES 256           /* "socket, state_dir, ..." */
#define CONFIG_CGROUP_ROOT "/sys/fs/cgroup/"
#define CONFIG_HOST_PROXY_LISTEN_DEFAULT "127.0.0.1:3128"

#define CONFIG_MAX_SANDBOXES_MIN 1
#define CONFIG_MAX_SANDBOXES_MAX 10000
#define CONFIG_POOL_PREFIX_MIN 8                /* the widest pool */
#define CONFIG_POOL_PREFIX_MAX 28               /* the narrowest: four sandboxes */
#define CONFIG_SANDBOX_PREFIX 30                /* each sandbox takes a /30 of the pool */
#define CONFIG_CONNECT_TIMEOUT_DEFAULT_MS 10000
#define CONFIG_HANDSHAKE_TIMEOUT_DEFAULT_MS 10000
#define CONFIG_TIMEOUT_MIN_MS 100
#define CONFIG_TIMEOUT_MAX_MS 600000
#define CONFIG_IDLE_TIMEOUT_DEFAULT_S 300
#define CONFIG_IDLE_TIMEOUT_MIN_S 1
#define CONFIG_IDLE_TIMEOUT_MAX_S 86400
#define CONFIG_TUNNELS_PER_SANDBOX_DEFAULT 512
#define CONFIG_TUNNELS_PER_SANDBOX_MAX 100000
#define CONFIG_HEADER_DEFAULT_BYTES 8192
#define CONFIG_HEADER_MIN_BYTES 1024
#define CONFIG_HEADER_MAX_BYTES 8192
#define CONFIG_TUNNELS_DEFAULT 8192
#define CONFIG_TUNNELS_MAX 1000000
#define CONFIG_CREDENTIALS_MAX 64               /* credential definitions */
#define CONFIG_CREDENTIAL_ITEMS_MAX 32          /* paths, hosts or env entries of one */
#define CONFIG_PORT_MAX 65535

/* ---- the tree ---- */

enum cnode_type {
	CNODE_NULL = 0,                 /* a plain "", "~" or "null": no value */
	CNODE_SCALAR,
	CNODE_SEQUENCE,
	CNODE_MAPPING,
	CNODE_ALIAS,                    /* an alias, reported when read; stands for nothing */
};

struct cnode {
	enum cnode_type type;
	unsigned line, col;             /* 1-based */
	bool plain;                     /* a plain scalar: may be read as a number */
	char *text;                     /* a scalar's value, NUL-terminated */
	size_t len;
	struct cnode **kids;            /* a list's items; a mapping's keys and values, alternating */
	size_t nkids, cap;
};

/* One load: the input, where errors go, and how many there were. */
struct config_ctx {
	const char *name;
	const char *data;
	size_t len;
	struct policy_diags *diags;
	size_t nerrors;
	size_t nnodes;
	bool nomem;
};

/* The tree being built from events. */
struct config_tree {
	struct cnode *root;
	struct cnode *open[CONFIG_DEPTH_MAX];   /* lists and mappings not yet closed */
	size_t depth;
	unsigned ndocs;
	bool failed;                    /* the tree is unusable: drop it */
	bool done;
};

/* ---- the raw shape: nodes of the tree, by schema key ---- */

struct raw_credential {
	const struct cnode *map, *name, *paths, *hosts, *env;
};

struct raw_config {
	const struct cnode *root, *socket, *state_dir, *log_dir, *profiles_dir;
	const struct cnode *machine_id, *max_sandboxes;
	const struct cnode *network, *pool, *dns, *upstream;
	const struct cnode *egress, *allow_cidrs, *connect_timeout, *idle_timeout;
	const struct cnode *tunnels_per_sandbox, *handshake_timeout, *header_max, *tunnels;
	const struct cnode *credentials;
	const struct cnode *host_proxy, *listen, *policy, *profile, *cgroup;
	struct raw_credential *creds;
	size_t ncreds;
};

/* One key a mapping of the schema may hold: its node type, where its node
 * goes in the raw structure, whether an empty value ("key:" alone) stands
 * for an empty list or mapping, and, for a required key, what to say when
 * it is missing (NULL: optional). */
struct config_field {
	const char *key;
	enum cnode_type type;
	size_t offset;
	bool nullable;
	const char *missing;
};

#define CONFIG_NFIELDS(t) (sizeof(t) / sizeof((t)[0]))
#define RAW(field) offsetof(struct raw_config, field)

static const struct config_field config_top_fields[] = {
	{ "socket", CNODE_SCALAR, RAW(socket), false, NULL },
	{ "state_dir", CNODE_SCALAR, RAW(state_dir), false, NULL },
	{ "log_dir", CNODE_SCALAR, RAW(log_dir), false, NULL },
	{ "profiles_dir", CNODE_SCALAR, RAW(profiles_dir), false, NULL },
	{ "machine_id", CNODE_SCALAR, RAW(machine_id), false, NULL },
	{ "max_sandboxes", CNODE_SCALAR, RAW(max_sandboxes), false, NULL },
	{ "network", CNODE_MAPPING, RAW(network), true, NULL },
	{ "dns", CNODE_MAPPING, RAW(dns), true, NULL },
	{ "egress", CNODE_MAPPING, RAW(egress), true, NULL },
	{ "credentials", CNODE_SEQUENCE, RAW(credentials), true, NULL },
	{ "host_proxy", CNODE_MAPPING, RAW(host_proxy), true, NULL },
};

static const struct config_field config_network_fields[] = {
	{ "pool", CNODE_SCALAR, RAW(pool), false, NULL },
};

static const struct config_field config_dns_fields[] = {
	{ "upstream", CNODE_SEQUENCE, RAW(upstream), true, NULL },
};

static const struct config_field config_egress_fields[] = {
	{ "allow_cidrs", CNODE_SEQUENCE, RAW(allow_cidrs), true, NULL },
	{ "connect_timeout_ms", CNODE_SCALAR, RAW(connect_timeout), false, NULL },
	{ "idle_timeout_s", CNODE_SCALAR, RAW(idle_timeout), false, NULL },
	{ "max_tunnels_per_sandbox", CNODE_SCALAR, RAW(tunnels_per_sandbox), false, NULL },
	{ "handshake_timeout_ms", CNODE_SCALAR, RAW(handshake_timeout), false, NULL },
	{ "header_max_bytes", CNODE_SCALAR, RAW(header_max), false, NULL },
	{ "max_tunnels", CNODE_SCALAR, RAW(tunnels), false, NULL },
};

static const struct config_field config_host_proxy_fields[] = {
	{ "listen", CNODE_SCALAR, RAW(listen), false, NULL },
	{ "policy", CNODE_SCALAR, RAW(policy), false, NULL },
	{ "profile", CNODE_SCALAR, RAW(profile), false, NULL },
	{ "cgroup", CNODE_SCALAR, RAW(cgroup), false, NULL },
};

static const struct config_field config_credential_fields[] = {
	{ "name", CNODE_SCALAR, offsetof(struct raw_credential, name), false,
	  "required: the name --grant uses" },
	{ "paths", CNODE_SEQUENCE, offsetof(struct raw_credential, paths), true, NULL },
	{ "hosts", CNODE_SEQUENCE, offsetof(struct raw_credential, hosts), true, NULL },
	{ "env", CNODE_SEQUENCE, offsetof(struct raw_credential, env), true, NULL },
};

_Static_assert(CONFIG_NFIELDS(config_top_fields) <= CONFIG_FIELDS_MAX, "too many fields");
_Static_assert(CONFIG_NFIELDS(config_egress_fields) <= CONFIG_FIELDS_MAX, "too many fields");

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
	{ "egress.connect_timeout_ms", RAW(connect_timeout), CFG(connect_timeout_ms),
	  CONFIG_TIMEOUT_MIN_MS, CONFIG_TIMEOUT_MAX_MS },
	{ "egress.idle_timeout_s", RAW(idle_timeout), CFG(idle_timeout_s),
	  CONFIG_IDLE_TIMEOUT_MIN_S, CONFIG_IDLE_TIMEOUT_MAX_S },
	{ "egress.max_tunnels_per_sandbox", RAW(tunnels_per_sandbox), CFG(max_tunnels_per_sandbox),
	  1, CONFIG_TUNNELS_PER_SANDBOX_MAX },
	{ "egress.handshake_timeout_ms", RAW(handshake_timeout), CFG(handshake_timeout_ms),
	  CONFIG_TIMEOUT_MIN_MS, CONFIG_TIMEOUT_MAX_MS },
	{ "egress.header_max_bytes", RAW(header_max), CFG(header_max_bytes),
	  CONFIG_HEADER_MIN_BYTES, CONFIG_HEADER_MAX_BYTES },
	{ "egress.max_tunnels", RAW(tunnels), CFG(max_tunnels), 1, CONFIG_TUNNELS_MAX },
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
};

/* ---- errors ---- */

/* The length of the line break at S (N > 0 bytes left), as libyaml counts
 * lines: CR LF, CR, LF, NEL, LS, PS; 0 when there is none. */
static size_t
config_break_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	if (u[0] == '\r')
		return n > 1 && u[1] == '\n' ? 2 : 1;
	if (u[0] == '\n')
		return 1;
	if (n >= 2 && u[0] == 0xc2 && u[1] == 0x85)
		return 2;
	if (n >= 3 && u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
		return 3;
	return 0;
}

/* Finds line LINE (1-based) of the input: its first byte and its length.
 * The file is small (CONFIG_FILE_MAX_BYTES) and errors are capped, so a
 * scan from the top each time costs little. */
static void
config_find_line(const struct config_ctx *ctx, unsigned line, size_t *start, size_t *len)
{
	size_t i = 0, b;
	unsigned cur = 1;

	while (i < ctx->len && cur < line) {
		b = config_break_len(ctx->data + i, ctx->len - i);
		cur += b > 0;
		i += b > 0 ? b : 1;
	}
	*start = i;
	while (i < ctx->len && i - *start < POLICY_DIAG_SOURCE_MAX_BYTES &&
	    config_break_len(ctx->data + i, ctx->len - i) == 0)
		i++;
	*len = i - *start;
}

/* The line and column (1-based, in characters) of byte OFFSET. */
static void
config_locate(const struct config_ctx *ctx, size_t offset, unsigned *line, unsigned *col)
{
	size_t i = 0, b;

	*line = 1;
	*col = 1;
	while (i < offset && i < ctx->len) {
		if ((b = config_break_len(ctx->data + i, ctx->len - i)) > 0) {
			(*line)++;
			*col = 1;
			i += b;
			continue;
		}
		if (((unsigned char)ctx->data[i] & 0xc0) != 0x80)
			(*col)++;
		i++;
	}
}

static void config_error(struct config_ctx *ctx, unsigned line, unsigned col,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void config_error_at(struct config_ctx *ctx, const struct cnode *n,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Counts one error and records it, with its source line, when the caller
 * keeps diagnostics. */
static void __attribute__((format(printf, 4, 0)))
config_verror(struct config_ctx *ctx, unsigned line, unsigned col, const char *fmt, va_list ap)
{
	char message[POLICY_DIAG_MESSAGE_MAX_BYTES];
	const char *source = NULL;
	size_t start = 0, len = 0;

	ctx->nerrors++;
	if (ctx->diags == NULL || ctx->diags->truncated)
		return;
	vsnprintf(message, sizeof(message), fmt, ap);
	if (line > 0 && ctx->data != NULL) {
		config_find_line(ctx, line, &start, &len);
		source = ctx->data + start;
	}
	policy_diags_add(ctx->diags, ctx->name, line, col, source, len, "%s", message);
}

static void
config_error(struct config_ctx *ctx, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	config_verror(ctx, line, col, fmt, ap);
	va_end(ap);
}

static void
config_error_at(struct config_ctx *ctx, const struct cnode *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	config_verror(ctx, n->line, n->col, fmt, ap);
	va_end(ap);
}

/* Running out of memory is reported once, and makes the load fail. */
static void
config_nomem(struct config_ctx *ctx)
{
	if (ctx->nomem) {
		ctx->nerrors++;
		return;
	}
	ctx->nomem = true;
	config_error(ctx, 0, 0, "out of memory");
}

/* A user's text made safe and short for a message: control characters,
 * quotes and backslashes escaped as \xNN, cut at CONFIG_QUOTE_MAX_BYTES. */
struct config_quoted {
	char text[CONFIG_QUOTE_MAX_BYTES * 4 + 4];
};

static const char *
config_quote(const char *s, struct config_quoted *q)
{
	size_t o = 0;

	for (size_t i = 0; s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == CONFIG_QUOTE_MAX_BYTES) {
			memcpy(q->text + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\')
			o += (size_t)snprintf(q->text + o, 5, "\\x%02x", c);
		else
			q->text[o++] = (char)c;
	}
	q->text[o] = '\0';
	return q->text;
}

/* ---- pass 1: events into a tree ---- */

static void
cnode_free(struct cnode *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		cnode_free(n->kids[i]);
	free(n->kids);
	free(n->text);
	free(n);
}

/* True for a plain scalar YAML reads as null. */
static bool
config_is_null(const char *text, size_t len)
{
	return len == 0 || strcmp(text, "~") == 0 || strcmp(text, "null") == 0 ||
	    strcmp(text, "Null") == 0 || strcmp(text, "NULL") == 0;
}

/* Adds N under the innermost open list or mapping, or as the root; -1
 * (N not added) if out of memory. */
static int
config_tree_attach(struct config_tree *t, struct cnode *n)
{
	struct cnode *parent, **kids;
	size_t cap;

	if (t->depth == 0) {
		if (t->root != NULL)
			return -1;
		t->root = n;
		return 0;
	}
	parent = t->open[t->depth - 1];
	if (parent->nkids == parent->cap) {
		cap = parent->cap == 0 ? 4 : parent->cap * 2;
		if ((kids = reallocarray(parent->kids, cap, sizeof(*kids))) == NULL)
			return -1;
		parent->kids = kids;
		parent->cap = cap;
	}
	parent->kids[parent->nkids++] = n;
	return 0;
}

/* A new node of TYPE at MARK, added to the tree; NULL (and the tree marked
 * failed) when there are too many nodes or memory runs out. */
static struct cnode *
config_tree_node(struct config_ctx *ctx, struct config_tree *t, enum cnode_type type,
    const yaml_mark_t *mark)
{
	struct cnode *n;

	if (++ctx->nnodes > CONFIG_NODES_MAX) {
		config_error(ctx, (unsigned)mark->line + 1, (unsigned)mark->column + 1,
		    "more than %d values in the configuration", CONFIG_NODES_MAX);
		t->failed = true;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (n == NULL || config_tree_attach(t, n) == -1) {
		free(n);
		config_nomem(ctx);
		t->failed = true;
		return NULL;
	}
	n->type = type;
	n->line = (unsigned)mark->line + 1;
	n->col = (unsigned)mark->column + 1;
	return n;
}

/* Refuses an anchor or a tag on a node: with no anchors, no alias can
 * point anywhere, and the file says what it means where it says it. */
static void
config_tree_props(struct config_ctx *ctx, const yaml_mark_t *mark,
    const yaml_char_t *anchor, const yaml_char_t *tag)
{
	struct config_quoted q;
	unsigned line = (unsigned)mark->line + 1, col = (unsigned)mark->column + 1;

	if (anchor != NULL)
		config_error(ctx, line, col, "anchors are not allowed (&%s): write the value out in full",
		    config_quote((const char *)anchor, &q));
	if (tag != NULL)
		config_error(ctx, line, col, "tags are not allowed (%s): remove it",
		    config_quote((const char *)tag, &q));
}

/* An alias is refused and stands for nothing: never expanded. */
static void
config_tree_alias(struct config_ctx *ctx, struct config_tree *t, const yaml_event_t *ev)
{
	struct config_quoted q;

	config_error(ctx, (unsigned)ev->start_mark.line + 1, (unsigned)ev->start_mark.column + 1,
	    "aliases are not allowed (*%s): write the value out in full",
	    config_quote((const char *)ev->data.alias.anchor, &q));
	config_tree_node(ctx, t, CNODE_ALIAS, &ev->start_mark);
}

static void
config_tree_scalar(struct config_ctx *ctx, struct config_tree *t, const yaml_event_t *ev)
{
	const char *value = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	struct cnode *n;

	config_tree_props(ctx, &ev->start_mark, ev->data.scalar.anchor, ev->data.scalar.tag);
	if ((n = config_tree_node(ctx, t, CNODE_SCALAR, &ev->start_mark)) == NULL)
		return;
	if ((n->text = malloc(len + 1)) == NULL) {
		config_nomem(ctx);
		t->failed = true;
		return;
	}
	memcpy(n->text, value, len);
	n->text[len] = '\0';
	n->len = len;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if (n->plain && config_is_null(n->text, len))
		n->type = CNODE_NULL;
	/* "\0" in a quoted scalar: C strings would silently cut the value. */
	if (memchr(value, '\0', len) != NULL) {
		config_error_at(ctx, n, "a NUL character (\\0) is not allowed in a value");
		n->len = strlen(n->text);
	}
}

/* Opens a list or mapping, refusing to nest deeper than CONFIG_DEPTH_MAX. */
static void
config_tree_open(struct config_ctx *ctx, struct config_tree *t, const yaml_event_t *ev,
    enum cnode_type type, const yaml_char_t *anchor, const yaml_char_t *tag)
{
	struct cnode *n;

	config_tree_props(ctx, &ev->start_mark, anchor, tag);
	if (t->depth == CONFIG_DEPTH_MAX) {
		config_error(ctx, (unsigned)ev->start_mark.line + 1,
		    (unsigned)ev->start_mark.column + 1,
		    "lists and mappings are nested deeper than %d levels", CONFIG_DEPTH_MAX);
		t->failed = true;
		return;
	}
	if ((n = config_tree_node(ctx, t, type, &ev->start_mark)) != NULL)
		t->open[t->depth++] = n;
}

static void
config_tree_event(struct config_ctx *ctx, struct config_tree *t, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (t->ndocs++ == 0)
			break;
		config_error(ctx, (unsigned)ev->start_mark.line + 1,
		    (unsigned)ev->start_mark.column + 1,
		    "a second YAML document: the configuration is one document");
		t->done = true;
		break;
	case YAML_ALIAS_EVENT:
		config_tree_alias(ctx, t, ev);
		break;
	case YAML_SCALAR_EVENT:
		config_tree_scalar(ctx, t, ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
		config_tree_open(ctx, t, ev, CNODE_SEQUENCE, ev->data.sequence_start.anchor,
		    ev->data.sequence_start.tag);
		break;
	case YAML_MAPPING_START_EVENT:
		config_tree_open(ctx, t, ev, CNODE_MAPPING, ev->data.mapping_start.anchor,
		    ev->data.mapping_start.tag);
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (t->depth > 0)
			t->depth--;
		break;
	case YAML_STREAM_END_EVENT:
	case YAML_NO_EVENT:
		t->done = true;
		break;
	default:
		break;
	}
}

/* Reports libyaml's own error: bad UTF-8 and control characters from its
 * reader (at a byte offset), syntax errors from its scanner and parser. */
static void
config_yaml_error(struct config_ctx *ctx, const yaml_parser_t *parser)
{
	const char *problem = parser->problem != NULL ? parser->problem : "unknown error";
	unsigned line, col;

	if (parser->error == YAML_MEMORY_ERROR) {
		config_nomem(ctx);
		return;
	}
	if (parser->error == YAML_READER_ERROR) {
		config_locate(ctx, parser->problem_offset, &line, &col);
		if (strstr(problem, "UTF-8") != NULL || strstr(problem, "Unicode") != NULL)
			config_error(ctx, line, col, "invalid UTF-8 (%s): the configuration must be UTF-8 text",
			    problem);
		else
			config_error(ctx, line, col, "%s (character 0x%x)", problem,
			    (unsigned)parser->problem_value);
		return;
	}
	line = (unsigned)parser->problem_mark.line + 1;
	col = (unsigned)parser->problem_mark.column + 1;
	if (parser->context != NULL)
		config_error(ctx, line, col, "YAML syntax error: %s (%s at line %u, column %u)",
		    problem, parser->context, (unsigned)parser->context_mark.line + 1,
		    (unsigned)parser->context_mark.column + 1);
	else
		config_error(ctx, line, col, "YAML syntax error: %s", problem);
}

/* Pass 1: the input as a tree; NULL when it has none (an empty file) or
 * cannot be read (the errors said why). */
static struct cnode *
config_tree(struct config_ctx *ctx)
{
	struct config_tree t = { 0 };
	yaml_parser_t parser;
	yaml_event_t ev;

	if (!yaml_parser_initialize(&parser)) {
		config_nomem(ctx);
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)ctx->data, ctx->len);
	/* UTF-8 only: a UTF-16 file would make byte offsets and lines disagree. */
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	while (!t.done && !t.failed) {
		if (!yaml_parser_parse(&parser, &ev)) {
			config_yaml_error(ctx, &parser);
			t.failed = true;
			break;
		}
		config_tree_event(ctx, &t, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	if (t.failed) {
		cnode_free(t.root);
		return NULL;
	}
	return t.root;
}

/* ---- pass 2: the tree's shape ---- */

static const char *
config_type_name(enum cnode_type type)
{
	switch (type) {
	case CNODE_NULL:
		return "empty";
	case CNODE_SCALAR:
		return "a single value";
	case CNODE_SEQUENCE:
		return "a list";
	case CNODE_MAPPING:
		return "a mapping";
	default:
		return "an alias";
	}
}

/* True when the value V of field F in WHAT has the field's type (or is
 * empty where that is allowed); else says what it should be. */
static bool
config_expect(struct config_ctx *ctx, const struct cnode *v, const struct config_field *f,
    const char *what)
{
	if (v->type == f->type || (v->type == CNODE_NULL && f->nullable))
		return true;
	if (v->type != CNODE_ALIAS)
		config_error_at(ctx, v, "'%s' in %s must be %s, but it is %s", f->key, what,
		    config_type_name(f->type), config_type_name(v->type));
	return false;
}

/* The same for an item of the list KEY. */
static bool
config_expect_item(struct config_ctx *ctx, const struct cnode *n, enum cnode_type want,
    const char *key)
{
	if (n->type == want)
		return true;
	if (n->type != CNODE_ALIAS)
		config_error_at(ctx, n, "each item of '%s' must be %s, but this one is %s", key,
		    config_type_name(want), config_type_name(n->type));
	return false;
}

/* The keys of FIELDS as "a, b, c", for messages. */
static const char *
config_expected_keys(const struct config_field *fields, size_t nfields, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nfields && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s", i > 0 ? ", " : "", fields[i].key);
	return buf;
}

/* The field of FIELDS named by the key K, or NULL after saying why K is
 * not one. */
static const struct config_field *
config_find_field(struct config_ctx *ctx, const struct cnode *k, const char *what,
    const struct config_field *fields, size_t nfields)
{
	char expected[CONFIG_EXPECTED_MAX_BYTES];
	struct config_quoted q;

	if (k->type != CNODE_SCALAR) {
		if (k->type != CNODE_ALIAS)
			config_error_at(ctx, k, "a key in %s must be a name, but it is %s", what,
			    config_type_name(k->type));
		return NULL;
	}
	for (size_t i = 0; i < nfields; i++)
		if (strcmp(fields[i].key, k->text) == 0)
			return &fields[i];
	config_error_at(ctx, k, "unknown key '%s' in %s (expected %s)", config_quote(k->text, &q),
	    what, config_expected_keys(fields, nfields, expected, sizeof(expected)));
	return NULL;
}

/* Walks the mapping MAP (WHAT in messages) with its table FIELDS: each
 * known key's node is stored in RAW at the field's offset when it has the
 * field's type; unknown, duplicate and missing required keys are errors. */
static void
config_walk(struct config_ctx *ctx, const struct cnode *map, const char *what,
    const struct config_field *fields, size_t nfields, void *raw)
{
	const struct cnode *seen[CONFIG_FIELDS_MAX] = { 0 };

	for (size_t i = 0; i + 1 < map->nkids; i += 2) {
		const struct cnode *k = map->kids[i], *v = map->kids[i + 1];
		const struct config_field *f;
		size_t idx;

		if ((f = config_find_field(ctx, k, what, fields, nfields)) == NULL)
			continue;
		idx = (size_t)(f - fields);
		if (seen[idx] != NULL) {
			config_error_at(ctx, k, "duplicate key '%s' in %s (first given at line %u, column %u)",
			    f->key, what, seen[idx]->line, seen[idx]->col);
			continue;
		}
		seen[idx] = k;
		if (config_expect(ctx, v, f, what))
			*(const struct cnode **)((char *)raw + f->offset) = v;
	}
	for (size_t i = 0; i < nfields; i++)
		if (fields[i].missing != NULL && seen[i] == NULL)
			config_error_at(ctx, map, "%s has no '%s' (%s)", what, fields[i].key,
			    fields[i].missing);
}

/* Walks the mapping N, when it is one, with FIELDS. */
static void
config_walk_map(struct config_ctx *ctx, const struct cnode *n, const char *what,
    const struct config_field *fields, size_t nfields, void *raw)
{
	if (n != NULL && n->type == CNODE_MAPPING)
		config_walk(ctx, n, what, fields, nfields, raw);
}

/* Checks that every item of the list L (the key KEY), when given, is a
 * single value. */
static void
config_shape_scalars(struct config_ctx *ctx, const struct cnode *l, const char *key)
{
	if (l == NULL || l->type != CNODE_SEQUENCE)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		config_expect_item(ctx, l->kids[i], CNODE_SCALAR, key);
}

/* Allocates N zeroed elements of SIZE bytes (NULL for none, or no memory). */
static void *
config_calloc(struct config_ctx *ctx, size_t n, size_t size)
{
	void *p;

	if (n == 0)
		return NULL;
	if ((p = calloc(n, size)) == NULL)
		config_nomem(ctx);
	return p;
}

static void
config_shape_credential(struct config_ctx *ctx, struct raw_credential *c)
{
	config_walk(ctx, c->map, "a credential", config_credential_fields,
	    CONFIG_NFIELDS(config_credential_fields), c);
	config_shape_scalars(ctx, c->paths, "paths");
	config_shape_scalars(ctx, c->hosts, "hosts");
	config_shape_scalars(ctx, c->env, "env");
}

static void
config_shape_credentials(struct config_ctx *ctx, struct raw_config *raw)
{
	const struct cnode *l = raw->credentials;

	if (l == NULL || l->type != CNODE_SEQUENCE)
		return;
	if (l->nkids > CONFIG_CREDENTIALS_MAX) {
		config_error_at(ctx, l, "credentials defines %zu grants, over the limit of %d",
		    l->nkids, CONFIG_CREDENTIALS_MAX);
		return;
	}
	if ((raw->creds = config_calloc(ctx, l->nkids, sizeof(*raw->creds))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++) {
		if (!config_expect_item(ctx, l->kids[i], CNODE_MAPPING, "credentials"))
			continue;
		raw->creds[raw->ncreds].map = l->kids[i];
		config_shape_credential(ctx, &raw->creds[raw->ncreds++]);
	}
}

/* Pass 2: the shape of the whole document. */
static void
config_shape(struct config_ctx *ctx, const struct cnode *root, struct raw_config *raw)
{
	raw->root = root;
	config_walk(ctx, root, "the configuration", config_top_fields,
	    CONFIG_NFIELDS(config_top_fields), raw);
	config_walk_map(ctx, raw->network, "network", config_network_fields,
	    CONFIG_NFIELDS(config_network_fields), raw);
	config_walk_map(ctx, raw->dns, "dns", config_dns_fields,
	    CONFIG_NFIELDS(config_dns_fields), raw);
	config_walk_map(ctx, raw->egress, "egress", config_egress_fields,
	    CONFIG_NFIELDS(config_egress_fields), raw);
	config_walk_map(ctx, raw->host_proxy, "host_proxy", config_host_proxy_fields,
	    CONFIG_NFIELDS(config_host_proxy_fields), raw);
	config_shape_scalars(ctx, raw->upstream, "upstream");
	config_shape_scalars(ctx, raw->allow_cidrs, "allow_cidrs");
	config_shape_credentials(ctx, raw);
}

/* ---- pass 3: numbers, paths and names ---- */

enum config_num {
	CONFIG_NUM_OK = 0,
	CONFIG_NUM_NOT_INT,             /* not digits */
	CONFIG_NUM_QUOTED,              /* digits, but quoted: a string */
	CONFIG_NUM_LEADING_ZERO,        /* "0443": YAML 1.1 reads it as octal */
	CONFIG_NUM_RANGE,               /* negative, or outside MIN-MAX */
};

/* Reads TEXT as a decimal integer in MIN-MAX, strictly: digits only, no
 * sign, no leading zero; PLAIN false (a quoted scalar) is refused. */
static enum config_num
config_number_parse(const char *text, bool plain, unsigned long min, unsigned long max,
    unsigned long *out)
{
	const char *s = text + (text[0] == '-');
	unsigned long v = 0;
	bool over = false;

	if (s[0] == '\0' || strspn(s, "0123456789") != strlen(s))
		return CONFIG_NUM_NOT_INT;
	for (const char *p = s; *p != '\0'; p++) {
		unsigned long digit = (unsigned long)(*p - '0');

		if (over || v > (max - digit) / 10)
			over = true;
		else
			v = v * 10 + digit;
	}
	if (!plain)
		return CONFIG_NUM_QUOTED;
	if (s[0] == '0' && s[1] != '\0')
		return CONFIG_NUM_LEADING_ZERO;
	if (s != text || over || v < min)
		return CONFIG_NUM_RANGE;
	*out = v;
	return CONFIG_NUM_OK;
}

/* Reads the number N, WHAT in messages, in MIN-MAX into *OUT, or says
 * why it is not one. */
static void
config_number(struct config_ctx *ctx, const struct cnode *n, const char *what,
    unsigned long min, unsigned long max, unsigned *out)
{
	struct config_quoted q;
	const char *text = config_quote(n->text, &q);
	unsigned long v = 0;

	switch (config_number_parse(n->text, n->plain, min, max, &v)) {
	case CONFIG_NUM_OK:
		*out = (unsigned)v;
		break;
	case CONFIG_NUM_QUOTED:
		config_error_at(ctx, n, "%s \"%s\" is quoted: write it as a plain number", what, text);
		break;
	case CONFIG_NUM_LEADING_ZERO:
		config_error_at(ctx, n, "%s %s has a leading zero: write it without", what, text);
		break;
	case CONFIG_NUM_RANGE:
		config_error_at(ctx, n, "%s %s is out of range (%lu-%lu)", what, text, min, max);
		break;
	default:
		config_error_at(ctx, n, "%s '%s' is not a number (%lu-%lu)", what, text, min, max);
		break;
	}
}

static void
config_numbers_all(struct config_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	for (size_t i = 0; i < CONFIG_NFIELDS(config_numbers); i++) {
		const struct config_number *d = &config_numbers[i];
		const struct cnode *n = *(const struct cnode *const *)((const char *)raw + d->raw_offset);

		if (n != NULL)
			config_number(ctx, n, d->what, d->min, d->max,
			    (unsigned *)((char *)cfg + d->offset));
	}
}

/* Stores a copy of TEXT in *SLOT, freeing what was there. */
static void
config_set(struct config_ctx *ctx, char **slot, const char *text)
{
	char *copy = strdup(text);

	if (copy == NULL) {
		config_nomem(ctx);
		return;
	}
	free(*slot);
	*slot = copy;
}

/* True when TEXT has a control character (tab included). */
static bool
config_has_control(const char *text)
{
	for (const unsigned char *s = (const unsigned char *)text; *s != '\0'; s++)
		if (*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* Normalizes the path TEXT into OUT (room for its length + 2): "//"
 * collapsed, "." segments and a trailing '/' dropped. ABSOLUTE says which
 * kind it must be. NULL when it is fine, else why not. */
static const char *
config_path_normalize(const char *text, bool absolute, char *out)
{
	size_t i = 0, o = 0;

	if ((text[0] == '/') != absolute)
		return absolute ? "is not absolute" : "is absolute: give it relative to the home";
	if (config_has_control(text))
		return "has a control character";
	while (text[i] != '\0') {
		size_t start, len;

		while (text[i] == '/')
			i++;
		for (start = i; text[i] != '\0' && text[i] != '/'; i++)
			;
		if ((len = i - start) == 0 || (len == 1 && text[start] == '.'))
			continue;
		/* ".." would name a file outside the place the path is meant to be in. */
		if (len == 2 && text[start] == '.' && text[start + 1] == '.')
			return "has a '..' segment";
		if (o > 0 || absolute)
			out[o++] = '/';
		memcpy(out + o, text + start, len);
		o += len;
	}
	if (o == 0 && absolute)
		out[o++] = '/';
	out[o] = '\0';
	return o == 0 ? "names no file (the home itself)" : NULL;
}

/* Checks the path N (WHAT in messages; ABSOLUTE or relative, under MAX
 * bytes with its NUL) and returns its normalized copy; NULL when refused. */
static char *
config_path(struct config_ctx *ctx, const struct cnode *n, const char *what, bool absolute,
    size_t max)
{
	struct config_quoted q;
	const char *why;
	char *path;

	if (n->len == 0 || n->len >= max) {
		config_error_at(ctx, n, "%s is %s (at most %zu bytes)", what,
		    n->len == 0 ? "empty" : "too long", max - 1);
		return NULL;
	}
	if ((path = malloc(n->len + 2)) == NULL) {
		config_nomem(ctx);
		return NULL;
	}
	if ((why = config_path_normalize(n->text, absolute, path)) != NULL) {
		config_error_at(ctx, n, "%s '%s' %s", what, config_quote(n->text, &q), why);
		free(path);
		return NULL;
	}
	return path;
}

static void
config_paths_all(struct config_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	for (size_t i = 0; i < CONFIG_NFIELDS(config_path_keys); i++) {
		const struct config_path_key *d = &config_path_keys[i];
		const struct cnode *n = *(const struct cnode *const *)((const char *)raw + d->raw_offset);
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
config_machine_id(struct config_ctx *ctx, const struct cnode *n, struct config *cfg)
{
	struct config_quoted q;
	size_t i;

	if (n == NULL)
		return;
	for (i = 0; i < n->len && config_id_char(n->text[i]); i++)
		;
	if (n->len == 0 || n->len > CONFIG_MACHINE_ID_MAX_BYTES || i < n->len) {
		config_error_at(ctx, n, "machine_id '%s' must be 1-%d letters, digits, '.', '_' or '-'",
		    config_quote(n->text, &q), CONFIG_MACHINE_ID_MAX_BYTES);
		return;
	}
	config_set(ctx, &cfg->machine_id, n->text);
}

/* ---- pass 3: addresses ---- */

enum config_cidr_err {
	CONFIG_CIDR_OK = 0,
	CONFIG_CIDR_FORM,               /* no '/' */
	CONFIG_CIDR_ADDRESS,            /* inet_pton refused the address */
	CONFIG_CIDR_PREFIX,             /* not digits, a leading zero, or too long for the family */
	CONFIG_CIDR_HOST_BITS,          /* bits set past the prefix */
};

/* Reads the prefix length S (at most MAX) strictly; -1 when it is not one. */
static int
config_prefix_len(const char *s, unsigned max)
{
	unsigned long v = 0;

	if (config_number_parse(s, true, 0, max, &v) != CONFIG_NUM_OK)
		return -1;
	return (int)v;
}

/* Parses TEXT ("10.0.0.0/8", "fd00::/8") into OUT. */
static enum config_cidr_err
config_cidr_parse(const char *text, struct policy_cidr *out)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = strchr(text, '/');
	size_t alen;
	unsigned bits;
	int prefix;

	memset(out, 0, sizeof(*out));
	if (slash == NULL)
		return CONFIG_CIDR_FORM;
	if ((alen = (size_t)(slash - text)) == 0 || alen >= sizeof(addr))
		return CONFIG_CIDR_ADDRESS;
	memcpy(addr, text, alen);
	addr[alen] = '\0';
	out->family = memchr(addr, ':', alen) != NULL ? AF_INET6 : AF_INET;
	bits = out->family == AF_INET ? 32 : 128;
	if (inet_pton(out->family, addr, out->addr) != 1)
		return CONFIG_CIDR_ADDRESS;
	if ((prefix = config_prefix_len(slash + 1, bits)) < 0)
		return CONFIG_CIDR_PREFIX;
	out->prefix_len = (uint8_t)prefix;
	for (unsigned bit = (unsigned)prefix; bit < bits; bit++)
		if (out->addr[bit / 8] & (0x80 >> (bit % 8)))
			return CONFIG_CIDR_HOST_BITS;
	return CONFIG_CIDR_OK;
}

/* Parses the CIDR N (WHAT in messages) into OUT, or says why it is not one. */
static bool
config_cidr(struct config_ctx *ctx, const struct cnode *n, const char *what,
    struct policy_cidr *out)
{
	struct config_quoted q;
	const char *text = config_quote(n->text, &q);

	switch (config_cidr_parse(n->text, out)) {
	case CONFIG_CIDR_OK:
		return true;
	case CONFIG_CIDR_FORM:
		config_error_at(ctx, n, "%s '%s' is not ADDRESS/PREFIX (e.g. 10.0.0.0/8)", what, text);
		break;
	case CONFIG_CIDR_ADDRESS:
		config_error_at(ctx, n, "%s '%s' has no valid IPv4 or IPv6 address before the '/'",
		    what, text);
		break;
	case CONFIG_CIDR_PREFIX:
		config_error_at(ctx, n, "%s '%s' has a bad prefix length (0-%u)", what, text,
		    out->family == AF_INET ? 32u : 128u);
		break;
	default:
		config_error_at(ctx, n, "%s '%s' has bits set past its prefix length", what, text);
		break;
	}
	return false;
}

/* A range some key may not touch. */
struct config_range {
	int family;
	uint8_t addr[16];
	uint8_t prefix_len;
	const char *what;
};

/* Loopback, link-local and unspecified: never reachable from a sandbox
 * (DESIGN 3, step 4), so an allow list naming them says something false.
 * The same rule as a policy's allowed_ips (policy/load.c). */
static const struct config_range config_never_reachable[] = {
	{ AF_INET, { 127 }, 8, "the loopback range 127.0.0.0/8" },
	{ AF_INET, { 169, 254 }, 16, "the link-local range 169.254.0.0/16" },
	{ AF_INET, { 0 }, 32, "the unspecified address 0.0.0.0" },
	{ AF_INET6, { [15] = 1 }, 128, "the loopback address ::1" },
	{ AF_INET6, { 0xfe, 0x80 }, 10, "the link-local range fe80::/10" },
	{ AF_INET6, { 0 }, 128, "the unspecified address ::" },
};

/* Where the sandboxes' addresses cannot come from: ranges the host treats
 * specially, which veths numbered from them would break or shadow. */
static const struct config_range config_pool_refused[] = {
	{ AF_INET, { 0 }, 8, "the 'this network' range 0.0.0.0/8" },
	{ AF_INET, { 127 }, 8, "the loopback range 127.0.0.0/8" },
	{ AF_INET, { 169, 254 }, 16, "the link-local range 169.254.0.0/16" },
	{ AF_INET, { 224 }, 3, "the multicast and reserved ranges 224.0.0.0/3" },
};

/* The first 96 bits of the IPv6 forms that carry an IPv4 address:
 * v4-mapped (::ffff:0:0/96), v4-compatible (::/96), NAT64 (64:ff9b::/96). */
static const uint8_t config_v4_in_v6[][12] = {
	{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff },
	{ 0 },
	{ 0, 0x64, 0xff, 0x9b },
};

/* True when A and B agree on their first BITS bits. */
static bool
config_bits_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned full = bits / 8, rest = bits % 8;
	uint8_t mask;

	if (memcmp(a, b, full) != 0)
		return false;
	if (rest == 0)
		return true;
	mask = (uint8_t)(0xff << (8 - rest));
	return (a[full] & mask) == (b[full] & mask);
}

/* True when two ranges of one family share an address: one holds the other. */
static bool
config_overlap(const uint8_t *a, unsigned alen, const uint8_t *b, unsigned blen)
{
	return config_bits_equal(a, b, alen < blen ? alen : blen);
}

/* The range of RANGES (N of them) that C touches, or NULL; IPv4 ranges
 * are also checked in their IPv6 forms. */
static const char *
config_cidr_touches(const struct policy_cidr *c, const struct config_range *ranges, size_t n)
{
	uint8_t addr[16];

	for (size_t i = 0; i < n; i++)
		if (ranges[i].family == c->family &&
		    config_overlap(c->addr, c->prefix_len, ranges[i].addr, ranges[i].prefix_len))
			return ranges[i].what;
	for (size_t i = 0; c->family == AF_INET6 && i < n; i++) {
		for (size_t k = 0; ranges[i].family == AF_INET && k < CONFIG_NFIELDS(config_v4_in_v6); k++) {
			memcpy(addr, config_v4_in_v6[k], 12);
			memcpy(addr + 12, ranges[i].addr, 4);
			if (config_overlap(c->addr, c->prefix_len, addr, 96u + ranges[i].prefix_len))
				return ranges[i].what;
		}
	}
	return NULL;
}

/* The pool: an IPv4 range, /8 to /28, out of the ranges the host keeps. */
static void
config_pool(struct config_ctx *ctx, const struct cnode *n, struct config *cfg)
{
	struct config_quoted q;
	struct policy_cidr c;
	const char *what;

	if (n == NULL || !config_cidr(ctx, n, "network.pool", &c))
		return;
	if (c.family != AF_INET)
		config_error_at(ctx, n, "network.pool '%s' is IPv6: the pool is an IPv4 range",
		    config_quote(n->text, &q));
	else if (c.prefix_len < CONFIG_POOL_PREFIX_MIN || c.prefix_len > CONFIG_POOL_PREFIX_MAX)
		config_error_at(ctx, n, "network.pool '%s' is too %s: its prefix must be /%d to /%d (each sandbox takes a /%d)",
		    config_quote(n->text, &q), c.prefix_len > CONFIG_POOL_PREFIX_MAX ? "small" : "wide",
		    CONFIG_POOL_PREFIX_MIN, CONFIG_POOL_PREFIX_MAX, CONFIG_SANDBOX_PREFIX);
	else if ((what = config_cidr_touches(&c, config_pool_refused,
	    CONFIG_NFIELDS(config_pool_refused))) != NULL)
		config_error_at(ctx, n, "network.pool '%s' overlaps %s: choose a private range such as %s",
		    config_quote(n->text, &q), what, CONFIG_POOL_DEFAULT);
	else
		cfg->pool = c;
}

/* Every sandbox takes a /30 of the pool: it must hold max_sandboxes of them. */
static void
config_pool_capacity(struct config_ctx *ctx, const struct raw_config *raw, const struct config *cfg)
{
	unsigned long slots = 1ul << (CONFIG_SANDBOX_PREFIX - cfg->pool.prefix_len);
	const struct cnode *at = raw->pool != NULL ? raw->pool : raw->max_sandboxes;
	char net[INET_ADDRSTRLEN];
	unsigned long v;

	/* A max_sandboxes already refused has been reported: no second error. */
	if (raw->max_sandboxes != NULL && config_number_parse(raw->max_sandboxes->text,
	    raw->max_sandboxes->plain, CONFIG_MAX_SANDBOXES_MIN, CONFIG_MAX_SANDBOXES_MAX, &v) != CONFIG_NUM_OK)
		return;
	if (slots >= cfg->max_sandboxes || at == NULL)
		return;
	inet_ntop(AF_INET, cfg->pool.addr, net, sizeof(net));
	config_error_at(ctx, at, "network.pool %s/%u holds %lu sandboxes (a /%d each), fewer than max_sandboxes %u: widen the pool or lower max_sandboxes",
	    net, cfg->pool.prefix_len, slots, CONFIG_SANDBOX_PREFIX, cfg->max_sandboxes);
}

/* Reads the allow list L into CFG. */
static void
config_allow_cidrs(struct config_ctx *ctx, const struct cnode *l, struct config *cfg)
{
	struct config_quoted q;
	const char *what;

	if (l == NULL || l->type != CNODE_SEQUENCE || l->nkids == 0)
		return;
	if (l->nkids > CONFIG_ALLOW_CIDRS_MAX) {
		config_error_at(ctx, l, "egress.allow_cidrs has %zu ranges, over the limit of %d",
		    l->nkids, CONFIG_ALLOW_CIDRS_MAX);
		return;
	}
	if ((cfg->allow_cidrs = config_calloc(ctx, l->nkids, sizeof(*cfg->allow_cidrs))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++) {
		const struct cnode *n = l->kids[i];
		struct policy_cidr *c = &cfg->allow_cidrs[cfg->nallow_cidrs];

		if (n->type != CNODE_SCALAR || !config_cidr(ctx, n, "egress.allow_cidrs", c))
			continue;
		if (c->prefix_len == 0)
			config_error_at(ctx, n, "egress.allow_cidrs '%s' covers every address: name only the internal ranges sandboxes need",
			    config_quote(n->text, &q));
		else if ((what = config_cidr_touches(c, config_never_reachable,
		    CONFIG_NFIELDS(config_never_reachable))) != NULL)
			config_error_at(ctx, n, "egress.allow_cidrs '%s' overlaps %s, which a sandbox may never reach",
			    config_quote(n->text, &q), what);
		else
			cfg->nallow_cidrs++;
	}
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
	if (s[0] != ':' || config_number_parse(s + 1, true, 0, CONFIG_PORT_MAX, &v) != CONFIG_NUM_OK)
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
config_upstream_one(struct config_ctx *ctx, const struct cnode *n, struct config *cfg)
{
	struct config_hostport hp;
	struct config_quoted q;
	const char *why = config_hostport_parse(n->text, &hp);

	if (why == NULL && hp.port == 0)
		why = "has port 0";
	else if (why == NULL && config_unspecified(&hp))
		why = "is the unspecified address, which is no server";
	if (why != NULL) {
		config_error_at(ctx, n, "dns.upstream '%s' %s (expected IP, IP:PORT or [IPv6]:PORT)",
		    config_quote(n->text, &q), why);
		return;
	}
	if ((cfg->dns_upstream[cfg->ndns_upstream] = strdup(n->text)) == NULL)
		config_nomem(ctx);
	else
		cfg->ndns_upstream++;
}

static void
config_upstream(struct config_ctx *ctx, const struct cnode *l, struct config *cfg)
{
	if (l == NULL || l->type != CNODE_SEQUENCE || l->nkids == 0)
		return;
	if (l->nkids > CONFIG_DNS_UPSTREAM_MAX) {
		config_error_at(ctx, l, "dns.upstream lists %zu servers, over the limit of %d",
		    l->nkids, CONFIG_DNS_UPSTREAM_MAX);
		return;
	}
	if ((cfg->dns_upstream = config_calloc(ctx, l->nkids, sizeof(*cfg->dns_upstream))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		if (l->kids[i]->type == CNODE_SCALAR)
			config_upstream_one(ctx, l->kids[i], cfg);
}

/* ---- pass 3: credentials ---- */

/* Checks one text of a credential's list (NULL: fine, else why not). It
 * may rewrite the text into BUF (as long as the text plus two bytes),
 * which is then what is kept. */
typedef const char *config_item_check(const char *text, char *buf);

/* The checked copy of the list entry E (WHAT in messages); NULL when refused. */
static char *
config_item(struct config_ctx *ctx, const struct cnode *e, const char *what,
    config_item_check *check)
{
	struct config_quoted q;
	const char *why;
	char *buf;

	if ((buf = malloc(e->len + 2)) == NULL) {
		config_nomem(ctx);
		return NULL;
	}
	memcpy(buf, e->text, e->len + 1);
	why = e->len >= CONFIG_TEXT_MAX_BYTES ? "is too long" : check(e->text, buf);
	if (why != NULL) {
		config_error_at(ctx, e, "%s '%s' %s", what, config_quote(e->text, &q), why);
		free(buf);
		return NULL;
	}
	return buf;
}

/* The entries of the list L, each checked by CHECK, into *OUT (*N of them). */
static void
config_items(struct config_ctx *ctx, const struct cnode *l, const char *what,
    config_item_check *check, char ***out, size_t *n)
{
	if (l == NULL || l->type != CNODE_SEQUENCE || l->nkids == 0)
		return;
	if (l->nkids > CONFIG_CREDENTIAL_ITEMS_MAX) {
		config_error_at(ctx, l, "%s has %zu entries, over the limit of %d", what, l->nkids,
		    CONFIG_CREDENTIAL_ITEMS_MAX);
		return;
	}
	if ((*out = config_calloc(ctx, l->nkids, sizeof(**out))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		if (l->kids[i]->type == CNODE_SCALAR &&
		    ((*out)[*n] = config_item(ctx, l->kids[i], what, check)) != NULL)
			(*n)++;
}

/* A file or folder of the caller's home: relative, no "..". */
static const char *
config_check_home_path(const char *text, char *buf)
{
	if (text[0] == '\0')
		return "is empty";
	return config_path_normalize(text, false, buf);
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
	    config_number_parse(colon + 1, true, 1, CONFIG_PORT_MAX, &port) != CONFIG_NUM_OK)
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
	if (config_has_control(eq + 1))
		return "has a control character in its value";
	return NULL;
}

/* The name of credential R: a grant name that the built-in grants and the
 * credentials before it (the first I of CFG) do not already use. */
static void
config_credential_name(struct config_ctx *ctx, const struct raw_credential *r,
    const struct config *cfg, size_t i, struct config_credential *c)
{
	const struct cnode *n = r->name;
	struct config_quoted q;
	const char *why;

	if (n == NULL)
		return;
	if ((why = policy_name_error(n->text)) != NULL) {
		config_error_at(ctx, n, "credential name '%s' %s", config_quote(n->text, &q), why);
		return;
	}
	/* --grant NAME must mean one thing: never shadow a built-in grant. */
	if (grant_builtin(n->text) != NULL) {
		config_error_at(ctx, n, "credential name '%s' is a built-in grant (%s): choose another name",
		    config_quote(n->text, &q), grant_builtin_names());
		return;
	}
	for (size_t k = 0; k < i; k++)
		if (cfg->credentials[k].name != NULL && strcmp(cfg->credentials[k].name, n->text) == 0) {
			config_error_at(ctx, n, "credential name '%s' is defined twice: keep one",
			    config_quote(n->text, &q));
			return;
		}
	if ((c->name = strdup(n->text)) == NULL)
		config_nomem(ctx);
}

/* True when L is a list with at least one item. */
static bool
config_list_given(const struct cnode *l)
{
	return l != NULL && l->type == CNODE_SEQUENCE && l->nkids > 0;
}

static void
config_credential(struct config_ctx *ctx, const struct raw_credential *r, struct config *cfg,
    size_t i)
{
	struct config_credential *c = &cfg->credentials[i];

	config_credential_name(ctx, r, cfg, i, c);
	config_items(ctx, r->paths, "credential path", config_check_home_path, &c->paths, &c->npaths);
	config_items(ctx, r->hosts, "credential host", config_check_host, &c->hosts, &c->nhosts);
	config_items(ctx, r->env, "credential env", config_check_env, &c->env, &c->nenv);
	if (!config_list_given(r->paths) && !config_list_given(r->hosts) && !config_list_given(r->env))
		config_error_at(ctx, r->map, "a credential grants nothing: give it paths, hosts or env");
}

static void
config_credentials(struct config_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	if (raw->ncreds == 0)
		return;
	if ((cfg->credentials = config_calloc(ctx, raw->ncreds, sizeof(*cfg->credentials))) == NULL)
		return;
	cfg->ncredentials = raw->ncreds;
	for (size_t i = 0; i < raw->ncreds; i++)
		config_credential(ctx, &raw->creds[i], cfg, i);
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

/* host_proxy.listen: ADDRESS:PORT on loopback (port 0: the kernel picks). */
static void
config_listen(struct config_ctx *ctx, const struct cnode *n, struct config *cfg)
{
	struct config_hostport hp;
	struct config_quoted q;
	const char *why = config_hostport_parse(n->text, &hp);

	if (why == NULL && hp.port < 0)
		why = "has no port (e.g. 127.0.0.1:3128)";
	if (why != NULL) {
		config_error_at(ctx, n, "host_proxy.listen '%s' %s (expected 127.0.0.1:PORT or [::1]:PORT)",
		    config_quote(n->text, &q), why);
		return;
	}
	/* Host mode has no sandbox and no fence: every client that can reach
	 * the listener uses the host's policy, so only the host's own
	 * processes may reach it. */
	if (!config_loopback(&hp)) {
		config_error_at(ctx, n, "host_proxy.listen '%s' is not a loopback address: host mode serves loopback only (127.0.0.0/8 or [::1])",
		    config_quote(n->text, &q));
		return;
	}
	config_set(ctx, &cfg->host_proxy.listen, n->text);
}

/* host_proxy.cgroup: an absolute path in the cgroup v2 hierarchy. */
static void
config_cgroup_place(struct config_ctx *ctx, const struct cnode *n, const struct config *cfg)
{
	const char *cg = cfg->host_proxy.cgroup;
	struct config_quoted q;

	if (n == NULL || cg == NULL || strncmp(cg, CONFIG_CGROUP_ROOT, strlen(CONFIG_CGROUP_ROOT)) == 0)
		return;
	config_error_at(ctx, n, "host_proxy.cgroup '%s' is not under %s (the cgroup v2 hierarchy)",
	    config_quote(n->text, &q), CONFIG_CGROUP_ROOT);
}

static void
config_profile(struct config_ctx *ctx, const struct cnode *n, struct config *cfg)
{
	struct config_quoted q;
	const char *why;

	if ((why = policy_name_error(n->text)) != NULL) {
		config_error_at(ctx, n, "host_proxy.profile '%s' %s", config_quote(n->text, &q), why);
		return;
	}
	config_set(ctx, &cfg->host_proxy.profile, n->text);
}

/* Host mode is on when the key is there (empty: every default). Its paths
 * were read with the others. */
static void
config_host_proxy(struct config_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	if (raw->host_proxy == NULL)
		return;
	cfg->host_proxy.enabled = true;
	if (raw->listen != NULL)
		config_listen(ctx, raw->listen, cfg);
	if (raw->profile != NULL)
		config_profile(ctx, raw->profile, cfg);
	config_cgroup_place(ctx, raw->cgroup, cfg);
	if (raw->policy != NULL && raw->profile != NULL)
		config_error_at(ctx, raw->host_proxy, "host_proxy has both 'policy' and 'profile': give one of them");
	else if (raw->policy != NULL) {
		free(cfg->host_proxy.profile);
		cfg->host_proxy.profile = NULL;
	}
}

/* Pass 3: every value of RAW into CFG, then the keys that constrain each
 * other. */
static void
config_validate(struct config_ctx *ctx, const struct raw_config *raw, struct config *cfg)
{
	size_t before;

	config_paths_all(ctx, raw, cfg);
	config_machine_id(ctx, raw->machine_id, cfg);
	config_numbers_all(ctx, raw, cfg);
	before = ctx->nerrors;
	config_pool(ctx, raw->pool, cfg);
	if (ctx->nerrors == before)
		config_pool_capacity(ctx, raw, cfg);
	config_upstream(ctx, raw->upstream, cfg);
	config_allow_cidrs(ctx, raw->allow_cidrs, cfg);
	config_credentials(ctx, raw, cfg);
	config_host_proxy(ctx, raw, cfg);
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
	c->host_proxy.listen = strdup(CONFIG_HOST_PROXY_LISTEN_DEFAULT);
	c->host_proxy.profile = strdup(PROFILE_DEFAULT_NAME);
	c->max_sandboxes = CONFIG_MAX_SANDBOXES_DEFAULT;
	c->connect_timeout_ms = CONFIG_CONNECT_TIMEOUT_DEFAULT_MS;
	c->handshake_timeout_ms = CONFIG_HANDSHAKE_TIMEOUT_DEFAULT_MS;
	c->idle_timeout_s = CONFIG_IDLE_TIMEOUT_DEFAULT_S;
	c->header_max_bytes = CONFIG_HEADER_DEFAULT_BYTES;
	c->max_tunnels_per_sandbox = CONFIG_TUNNELS_PER_SANDBOX_DEFAULT;
	c->max_tunnels = CONFIG_TUNNELS_DEFAULT;
	if (c->socket == NULL || c->state_dir == NULL || c->log_dir == NULL ||
	    c->profiles_dir == NULL || c->machine_id == NULL || c->host_proxy.listen == NULL ||
	    c->host_proxy.profile == NULL || config_cidr_parse(CONFIG_POOL_DEFAULT, &c->pool) != CONFIG_CIDR_OK) {
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
config_free(struct config *c)
{
	if (c == NULL)
		return;
	free(c->socket);
	free(c->state_dir);
	free(c->log_dir);
	free(c->profiles_dir);
	free(c->machine_id);
	config_strings_free(c->dns_upstream, c->ndns_upstream);
	free(c->allow_cidrs);
	for (size_t i = 0; i < c->ncredentials; i++) {
		free(c->credentials[i].name);
		config_strings_free(c->credentials[i].paths, c->credentials[i].npaths);
		config_strings_free(c->credentials[i].hosts, c->credentials[i].nhosts);
		config_strings_free(c->credentials[i].env, c->credentials[i].nenv);
	}
	free(c->credentials);
	free(c->host_proxy.listen);
	free(c->host_proxy.policy);
	free(c->host_proxy.profile);
	free(c->host_proxy.cgroup);
	free(c);
}

/* ---- entry points ---- */

/* Parses and validates CTX's input over the defaults in CFG. */
static void
config_document(struct config_ctx *ctx, struct config *cfg)
{
	struct raw_config raw = { 0 };
	struct cnode *root = config_tree(ctx);

	/* No document, or an empty one: every key keeps its default. */
	if (root == NULL || root->type == CNODE_NULL)
		goto out;
	if (root->type != CNODE_MAPPING) {
		if (root->type != CNODE_ALIAS)
			config_error_at(ctx, root, "the configuration must be a mapping (socket, state_dir, ...), but it is %s",
			    config_type_name(root->type));
		goto out;
	}
	config_shape(ctx, root, &raw);
	config_validate(ctx, &raw, cfg);
	free(raw.creds);
out:
	cnode_free(root);
}

/* Refuses a file that is not a regular file, that others could write, or
 * that is too big; true when refused. */
static bool
config_file_refused(struct config_ctx *ctx, const struct stat *st)
{
	uid_t me = geteuid();

	if (!S_ISREG(st->st_mode)) {
		config_error(ctx, 0, 0, "refused: not a regular file");
		return true;
	}
	/* Whoever can write the configuration chooses where corrald listens,
	 * which internal ranges every sandbox may reach and which files
	 * grants copy: only its owner may. */
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		config_error(ctx, 0, 0, "refused: the file is writable by %s (mode %04o); the configuration may be writable by its owner only: chmod go-w it",
		    (st->st_mode & S_IWOTH) ? "every user" : "its group", (unsigned)(st->st_mode & 07777));
		return true;
	}
	if (st->st_uid != 0 && st->st_uid != me) {
		config_error(ctx, 0, 0, "refused: the file belongs to uid %u, which is neither root nor the user loading it (uid %u)",
		    (unsigned)st->st_uid, (unsigned)me);
		return true;
	}
	if (st->st_size > CONFIG_FILE_MAX_BYTES) {
		config_error(ctx, 0, 0, "refused: the file is %lld bytes, over the limit of %d bytes",
		    (long long)st->st_size, CONFIG_FILE_MAX_BYTES);
		return true;
	}
	return false;
}

/* Reads FD to its end into *DATA (*LEN bytes), never more than
 * CONFIG_FILE_MAX_BYTES: the file may have grown since fstat(). */
static int
config_read_all(struct config_ctx *ctx, int fd, char **data, size_t *len)
{
	size_t cap = CONFIG_READ_CHUNK_BYTES, got = 0;
	char *buf = malloc(cap), *bigger;
	ssize_t n;

	while (buf != NULL) {
		if (got == cap) {
			if (cap > CONFIG_FILE_MAX_BYTES) {
				config_error(ctx, 0, 0, "refused: the file is over the limit of %d bytes",
				    CONFIG_FILE_MAX_BYTES);
				goto fail;
			}
			cap = cap * 2 > CONFIG_FILE_MAX_BYTES + 1 ? CONFIG_FILE_MAX_BYTES + 1 : cap * 2;
			if ((bigger = realloc(buf, cap)) == NULL)
				break;
			buf = bigger;
		}
		if ((n = read(fd, buf + got, cap - got)) == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			config_error(ctx, 0, 0, "cannot read the file: %s", strerror(errno));
			goto fail;
		}
		if (n == 0) {
			*data = buf;
			*len = got;
			return 0;
		}
		got += (size_t)n;
	}
	config_nomem(ctx);
fail:
	free(buf);
	return -1;
}

/* Opens PATH for reading into *FD; 1 when it is absent and that is fine
 * (the default path, not named explicitly), -1 on error, else 0. */
static int
config_open(struct config_ctx *ctx, const char *path, bool explicit_path, int *fd)
{
	struct stat st;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it. */
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (*fd == -1 && errno == ENOENT && !explicit_path)
		return 1;
	if (*fd == -1) {
		config_error(ctx, 0, 0, "cannot open the configuration file: %s%s", strerror(errno),
		    errno == ENOENT ? " (--config and CORRAL_CONFIG must name a file that exists)" : "");
		return -1;
	}
	if (fstat(*fd, &st) == -1) {
		config_error(ctx, 0, 0, "cannot read the file: %s", strerror(errno));
		return -1;
	}
	return config_file_refused(ctx, &st) ? -1 : 0;
}

int
config_load(const char *path, bool explicit_path, struct config **out,
    struct policy_diags *diags)
{
	struct config_ctx ctx = { .name = path != NULL ? path : CONFIG_PATH_DEFAULT, .diags = diags };
	size_t first = diags != NULL ? diags->count : 0;
	struct config *cfg = config_new_default();
	char *data = NULL;
	int fd = -1, rc;

	*out = NULL;
	if (cfg == NULL) {
		config_nomem(&ctx);
		return -1;
	}
	if ((rc = config_open(&ctx, ctx.name, explicit_path, &fd)) == 0 &&
	    config_read_all(&ctx, fd, &data, &ctx.len) == 0) {
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
