/* Loading a policy. Three passes over one document:
 * 1. libyaml's events become a small tree of nodes with their positions;
 *    anchors, aliases, tags, a second document and deep nesting are
 *    refused as they come, so an alias is never expanded.
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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "policy/load.h"
#include "policy/match.h"

#define LOAD_QUOTE_MAX_BYTES 64         /* of a user's text shown in a message */
#define LOAD_WHAT_MAX_BYTES 160         /* "network policy '...'" */
#define LOAD_EXPECTED_MAX_BYTES 160     /* "host, port, ports, ..." */
#define LOAD_PORT_MIN 1
#define LOAD_PORT_MAX 65535
#define LOAD_ID_MAX 4294967294UL        /* the largest uid or gid: (uid_t)-1 means "none" */
#define LOAD_USER_NAME_MAX_BYTES 32     /* a user or group name, as useradd allows */
#define LOAD_READ_CHUNK_BYTES 4096      /* the first buffer for a file of unknown size */
#define LOAD_FIELDS_MAX 8               /* keys in one mapping of the schema */

/* ---- the tree ---- */

enum ynode_type {
	YNODE_NULL = 0,                 /* a plain "", "~" or "null": no value */
	YNODE_SCALAR,
	YNODE_SEQUENCE,
	YNODE_MAPPING,
	YNODE_ALIAS,                    /* an alias, reported when read; stands for nothing */
};

struct ynode {
	enum ynode_type type;
	unsigned line, col;             /* 1-based */
	bool plain;                     /* a plain scalar: may be read as a number or boolean */
	char *text;                     /* a scalar's value, NUL-terminated */
	size_t len;
	struct ynode **kids;            /* a list's items; a mapping's keys and values, alternating */
	size_t nkids, cap;
};

/* One load: the input, where errors go, and how many there were. */
struct load_ctx {
	const char *name;
	const char *data;
	size_t len;
	struct policy_diags *diags;
	size_t nerrors;
	size_t nnodes;
	bool nomem;
	unsigned seen_line;             /* a line whose start is known, to search on from */
	size_t seen_offset;             /* its first byte */
};

/* The tree being built from events. */
struct load_tree {
	struct ynode *root;
	struct ynode *open[POLICY_LOAD_DEPTH_MAX];      /* lists and mappings not yet closed */
	size_t depth;
	unsigned ndocs;
	bool failed;                    /* the tree is unusable: drop it */
	bool done;
};

/* ---- the raw shape: nodes of the tree, by schema field ---- */

struct raw_endpoint {
	const struct ynode *map, *host, *port, *ports, *allowed_ips, *sni_check;
};

struct raw_binary {
	const struct ynode *map, *path;
};

struct raw_rule {
	const struct ynode *key, *map, *name, *endpoints, *binaries;
	struct raw_endpoint *eps;
	size_t neps;
	struct raw_binary *bins;
	size_t nbins;
};

struct raw_policy {
	const struct ynode *root, *version, *filesystem, *read_only, *read_write;
	const struct ynode *landlock, *compatibility, *process, *run_as_user, *run_as_group;
	const struct ynode *network, *write_guard, *allowed_root, *deny_reason;
	struct raw_rule *rules;
	size_t nrules;
};

/* One key a mapping of the schema may hold: its node type, where its node
 * goes in the raw structure, and, for a required key, what to say when it
 * is missing (NULL: optional). */
struct load_field {
	const char *key;
	enum ynode_type type;
	size_t offset;
	const char *missing;
};

#define LOAD_NFIELDS(t) (sizeof(t) / sizeof((t)[0]))
#define LOAD_FIELD_BIT(i) (1u << (i))

static const struct load_field load_policy_fields[] = {
	{ "version", YNODE_SCALAR, offsetof(struct raw_policy, version), NULL },
	{ "filesystem_policy", YNODE_MAPPING, offsetof(struct raw_policy, filesystem), NULL },
	{ "landlock", YNODE_MAPPING, offsetof(struct raw_policy, landlock), NULL },
	{ "process", YNODE_MAPPING, offsetof(struct raw_policy, process), NULL },
	{ "network_policies", YNODE_MAPPING, offsetof(struct raw_policy, network), NULL },
	{ "write_guard", YNODE_MAPPING, offsetof(struct raw_policy, write_guard), NULL },
};

static const struct load_field load_filesystem_fields[] = {
	{ "read_only", YNODE_SEQUENCE, offsetof(struct raw_policy, read_only), NULL },
	{ "read_write", YNODE_SEQUENCE, offsetof(struct raw_policy, read_write), NULL },
};

static const struct load_field load_landlock_fields[] = {
	{ "compatibility", YNODE_SCALAR, offsetof(struct raw_policy, compatibility), NULL },
};

static const struct load_field load_process_fields[] = {
	{ "run_as_user", YNODE_SCALAR, offsetof(struct raw_policy, run_as_user), NULL },
	{ "run_as_group", YNODE_SCALAR, offsetof(struct raw_policy, run_as_group), NULL },
};

static const struct load_field load_write_guard_fields[] = {
	{ "allowed_root", YNODE_SCALAR, offsetof(struct raw_policy, allowed_root), NULL },
	{ "deny_reason", YNODE_SCALAR, offsetof(struct raw_policy, deny_reason), NULL },
};

static const struct load_field load_rule_fields[] = {
	{ "name", YNODE_SCALAR, offsetof(struct raw_rule, name), NULL },
	{ "endpoints", YNODE_SEQUENCE, offsetof(struct raw_rule, endpoints),
	  "required: the hosts and ports it lets through" },
	{ "binaries", YNODE_SEQUENCE, offsetof(struct raw_rule, binaries),
	  "required: the programs it lets through, [{path: \"/**\"}] for any, [] for none" },
};

/* The indexes of port and ports, which exclude each other. */
enum { LOAD_ENDPOINT_PORT = 1, LOAD_ENDPOINT_PORTS = 2 };

static const struct load_field load_endpoint_fields[] = {
	{ "host", YNODE_SCALAR, offsetof(struct raw_endpoint, host), "required" },
	[LOAD_ENDPOINT_PORT] = { "port", YNODE_SCALAR, offsetof(struct raw_endpoint, port), NULL },
	[LOAD_ENDPOINT_PORTS] = { "ports", YNODE_SEQUENCE, offsetof(struct raw_endpoint, ports), NULL },
	{ "allowed_ips", YNODE_SEQUENCE, offsetof(struct raw_endpoint, allowed_ips), NULL },
	{ "sni_check", YNODE_SCALAR, offsetof(struct raw_endpoint, sni_check), NULL },
};

static const struct load_field load_binary_fields[] = {
	{ "path", YNODE_SCALAR, offsetof(struct raw_binary, path), "required" },
};

_Static_assert(LOAD_NFIELDS(load_policy_fields) <= LOAD_FIELDS_MAX, "too many fields");
_Static_assert(LOAD_NFIELDS(load_endpoint_fields) <= LOAD_FIELDS_MAX, "too many fields");

/* ---- positions and errors ---- */

/* The length of the line break at S (N > 0 bytes left), as libyaml counts
 * lines: CR LF, CR, LF, NEL, LS, PS; 0 when there is none. */
static size_t
load_break_len(const char *s, size_t n)
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

/* Finds line LINE (1-based) of the input: its start, and its length up to
 * what a diagnostic keeps. Errors come mostly in document order, so the
 * search goes on from the last line found rather than from the top. */
static void
load_find_line(struct load_ctx *ctx, unsigned line, size_t *start, size_t *len)
{
	size_t i = 0, b;
	unsigned cur = 1;

	if (ctx->seen_line > 0 && ctx->seen_line <= line) {
		cur = ctx->seen_line;
		i = ctx->seen_offset;
	}
	while (i < ctx->len && cur < line) {
		b = load_break_len(ctx->data + i, ctx->len - i);
		cur += b > 0;
		i += b > 0 ? b : 1;
	}
	ctx->seen_line = cur;
	ctx->seen_offset = i;
	*start = i;
	while (i < ctx->len && i - *start < POLICY_DIAG_SOURCE_MAX_BYTES &&
	    load_break_len(ctx->data + i, ctx->len - i) == 0)
		i++;
	*len = i - *start;
}

/* The line and column (1-based, in characters) of byte OFFSET. */
static void
load_locate(const struct load_ctx *ctx, size_t offset, unsigned *line, unsigned *col)
{
	size_t i = 0, b;

	*line = 1;
	*col = 1;
	while (i < offset && i < ctx->len) {
		b = load_break_len(ctx->data + i, ctx->len - i);
		if (b > 0) {
			(*line)++;
			*col = 1;
			i += b;
			continue;
		}
		if (((unsigned char)ctx->data[i] & 0xc0) != 0x80)
			(*col)++;
		i++;
	}
	if (i > offset)
		*col = 1;
}

static void load_verror(struct load_ctx *ctx, unsigned line, unsigned col,
    const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
static void load_error(struct load_ctx *ctx, unsigned line, unsigned col,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void load_error_at(struct load_ctx *ctx, const struct ynode *n,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Counts one error and records it, with its source line, when the caller
 * keeps diagnostics. */
static void
load_verror(struct load_ctx *ctx, unsigned line, unsigned col, const char *fmt, va_list ap)
{
	char message[POLICY_DIAG_MESSAGE_MAX_BYTES];
	const char *source = NULL;
	size_t start = 0, len = 0;

	ctx->nerrors++;
	/* Past the cap nothing more is kept: skip the work of formatting. */
	if (ctx->diags == NULL || ctx->diags->truncated)
		return;
	vsnprintf(message, sizeof(message), fmt, ap);
	if (line > 0 && ctx->data != NULL) {
		load_find_line(ctx, line, &start, &len);
		source = ctx->data + start;
	}
	policy_diags_add(ctx->diags, ctx->name, line, col, source, len, "%s", message);
}

static void
load_error(struct load_ctx *ctx, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	load_verror(ctx, line, col, fmt, ap);
	va_end(ap);
}

static void
load_error_at(struct load_ctx *ctx, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	load_verror(ctx, n->line, n->col, fmt, ap);
	va_end(ap);
}

/* Running out of memory is reported once, and makes the load fail. */
static void
load_nomem(struct load_ctx *ctx)
{
	if (ctx->nomem) {
		ctx->nerrors++;
		return;
	}
	ctx->nomem = true;
	load_error(ctx, 0, 0, "out of memory");
}

/* A user's text made safe and short for a message: control characters,
 * quotes and backslashes escaped as \xNN, cut at LOAD_QUOTE_MAX_BYTES. */
struct load_quoted {
	char text[LOAD_QUOTE_MAX_BYTES * 4 + 4];
};

static const char *
load_quote(const char *s, struct load_quoted *q)
{
	size_t o = 0;

	for (size_t i = 0; s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == LOAD_QUOTE_MAX_BYTES) {
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
ynode_free(struct ynode *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		ynode_free(n->kids[i]);
	free(n->kids);
	free(n->text);
	free(n);
}

/* True for a plain scalar YAML reads as null. */
static bool
load_is_null(const char *text, size_t len)
{
	return len == 0 || strcmp(text, "~") == 0 || strcmp(text, "null") == 0 ||
	    strcmp(text, "Null") == 0 || strcmp(text, "NULL") == 0;
}

/* Adds N under the innermost open list or mapping, or as the root; -1
 * (N not added) if out of memory. */
static int
load_tree_attach(struct load_tree *t, struct ynode *n)
{
	struct ynode *parent, **kids;
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
		kids = reallocarray(parent->kids, cap, sizeof(*kids));
		if (kids == NULL)
			return -1;
		parent->kids = kids;
		parent->cap = cap;
	}
	parent->kids[parent->nkids++] = n;
	return 0;
}

/* A new node of TYPE at MARK, added to the tree; NULL (and the tree marked
 * failed) when there are too many nodes or memory runs out. */
static struct ynode *
load_tree_node(struct load_ctx *ctx, struct load_tree *t, enum ynode_type type,
    const yaml_mark_t *mark)
{
	struct ynode *n;

	if (++ctx->nnodes > POLICY_LOAD_NODES_MAX) {
		load_error(ctx, (unsigned)mark->line + 1, (unsigned)mark->column + 1,
		    "more than %d values in one policy", POLICY_LOAD_NODES_MAX);
		t->failed = true;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (n == NULL || load_tree_attach(t, n) == -1) {
		free(n);
		load_nomem(ctx);
		t->failed = true;
		return NULL;
	}
	n->type = type;
	n->line = (unsigned)mark->line + 1;
	n->col = (unsigned)mark->column + 1;
	return n;
}

/* Refuses an anchor or a tag on a node. Anchors are refused, not merely
 * unused: a policy must say what it means where it says it, and with no
 * anchors no alias can point anywhere. */
static void
load_tree_props(struct load_ctx *ctx, const yaml_mark_t *mark,
    const yaml_char_t *anchor, const yaml_char_t *tag)
{
	struct load_quoted q;
	unsigned line = (unsigned)mark->line + 1, col = (unsigned)mark->column + 1;

	if (anchor != NULL)
		load_error(ctx, line, col, "anchors are not allowed (&%s): write the value out in full",
		    load_quote((const char *)anchor, &q));
	if (tag != NULL)
		load_error(ctx, line, col, "tags are not allowed (%s): remove it",
		    load_quote((const char *)tag, &q));
}

/* An alias is refused and stands for nothing: never expanded, so a
 * "billion laughs" document costs no more than its own size. */
static void
load_tree_alias(struct load_ctx *ctx, struct load_tree *t, const yaml_event_t *ev)
{
	struct load_quoted q;

	load_error(ctx, (unsigned)ev->start_mark.line + 1, (unsigned)ev->start_mark.column + 1,
	    "aliases are not allowed (*%s): write the value out in full",
	    load_quote((const char *)ev->data.alias.anchor, &q));
	load_tree_node(ctx, t, YNODE_ALIAS, &ev->start_mark);
}

static void
load_tree_scalar(struct load_ctx *ctx, struct load_tree *t, const yaml_event_t *ev)
{
	const char *value = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	struct ynode *n;

	load_tree_props(ctx, &ev->start_mark, ev->data.scalar.anchor, ev->data.scalar.tag);
	n = load_tree_node(ctx, t, YNODE_SCALAR, &ev->start_mark);
	if (n == NULL)
		return;
	if ((n->text = malloc(len + 1)) == NULL) {
		load_nomem(ctx);
		t->failed = true;
		return;
	}
	memcpy(n->text, value, len);
	n->text[len] = '\0';
	n->len = len;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if (n->plain && load_is_null(n->text, len))
		n->type = YNODE_NULL;
	/* "\0" in a quoted scalar: C strings would silently cut the value.
	 * Refused here; the value is cut at it so later checks agree. */
	if (memchr(value, '\0', len) != NULL) {
		load_error_at(ctx, n, "a NUL character (\\0) is not allowed in a value");
		n->len = strlen(n->text);
	}
}

/* Opens a list or mapping, refusing to nest deeper than POLICY_LOAD_DEPTH_MAX. */
static void
load_tree_open(struct load_ctx *ctx, struct load_tree *t, const yaml_event_t *ev,
    enum ynode_type type, const yaml_char_t *anchor, const yaml_char_t *tag)
{
	struct ynode *n;

	load_tree_props(ctx, &ev->start_mark, anchor, tag);
	if (t->depth == POLICY_LOAD_DEPTH_MAX) {
		load_error(ctx, (unsigned)ev->start_mark.line + 1,
		    (unsigned)ev->start_mark.column + 1,
		    "lists and mappings are nested deeper than %d levels", POLICY_LOAD_DEPTH_MAX);
		t->failed = true;
		return;
	}
	n = load_tree_node(ctx, t, type, &ev->start_mark);
	if (n != NULL)
		t->open[t->depth++] = n;
}

static void
load_tree_event(struct load_ctx *ctx, struct load_tree *t, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (t->ndocs++ == 0)
			break;
		load_error(ctx, (unsigned)ev->start_mark.line + 1,
		    (unsigned)ev->start_mark.column + 1,
		    "a second YAML document: a policy is one document");
		t->done = true;
		break;
	case YAML_ALIAS_EVENT:
		load_tree_alias(ctx, t, ev);
		break;
	case YAML_SCALAR_EVENT:
		load_tree_scalar(ctx, t, ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
		load_tree_open(ctx, t, ev, YNODE_SEQUENCE, ev->data.sequence_start.anchor,
		    ev->data.sequence_start.tag);
		break;
	case YAML_MAPPING_START_EVENT:
		load_tree_open(ctx, t, ev, YNODE_MAPPING, ev->data.mapping_start.anchor,
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
load_yaml_error(struct load_ctx *ctx, const yaml_parser_t *parser)
{
	const char *problem = parser->problem != NULL ? parser->problem : "unknown error";
	unsigned line, col;

	if (parser->error == YAML_MEMORY_ERROR) {
		load_nomem(ctx);
		return;
	}
	if (parser->error == YAML_READER_ERROR) {
		load_locate(ctx, parser->problem_offset, &line, &col);
		if (strstr(problem, "UTF-8") != NULL || strstr(problem, "Unicode") != NULL)
			load_error(ctx, line, col, "invalid UTF-8 (%s): a policy must be UTF-8 text",
			    problem);
		else
			load_error(ctx, line, col, "%s (character 0x%x)", problem,
			    (unsigned)parser->problem_value);
		return;
	}
	line = (unsigned)parser->problem_mark.line + 1;
	col = (unsigned)parser->problem_mark.column + 1;
	if (parser->context != NULL)
		load_error(ctx, line, col, "YAML syntax error: %s (%s at line %u, column %u)",
		    problem, parser->context, (unsigned)parser->context_mark.line + 1,
		    (unsigned)parser->context_mark.column + 1);
	else
		load_error(ctx, line, col, "YAML syntax error: %s", problem);
}

/* Pass 1: the input as a tree; NULL when it has none (the errors said why). */
static struct ynode *
load_tree(struct load_ctx *ctx)
{
	struct load_tree t = { 0 };
	yaml_parser_t parser;
	yaml_event_t ev;

	if (!yaml_parser_initialize(&parser)) {
		load_nomem(ctx);
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)ctx->data, ctx->len);
	/* UTF-8 only: a UTF-16 file would make byte offsets and lines disagree. */
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	while (!t.done && !t.failed) {
		if (!yaml_parser_parse(&parser, &ev)) {
			load_yaml_error(ctx, &parser);
			t.failed = true;
			break;
		}
		load_tree_event(ctx, &t, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	if (t.failed) {
		ynode_free(t.root);
		return NULL;
	}
	return t.root;
}

/* ---- pass 2: the tree's shape ---- */

static const char *
load_type_name(enum ynode_type type)
{
	switch (type) {
	case YNODE_NULL:
		return "empty";
	case YNODE_SCALAR:
		return "a single value";
	case YNODE_SEQUENCE:
		return "a list";
	case YNODE_MAPPING:
		return "a mapping";
	default:
		return "an alias";
	}
}

/* True when N is of type WANT; else says that KEY in WHAT is not (an alias
 * was reported when read). */
static bool
load_expect(struct load_ctx *ctx, const struct ynode *n, enum ynode_type want,
    const char *key, const char *what)
{
	if (n->type == want)
		return true;
	if (n->type != YNODE_ALIAS)
		load_error_at(ctx, n, "'%s' in %s must be %s, but it is %s", key, what,
		    load_type_name(want), load_type_name(n->type));
	return false;
}

/* The same for an item of the list KEY. */
static bool
load_expect_item(struct load_ctx *ctx, const struct ynode *n, enum ynode_type want,
    const char *key)
{
	if (n->type == want)
		return true;
	if (n->type != YNODE_ALIAS)
		load_error_at(ctx, n, "each item of '%s' must be %s, but this one is %s", key,
		    load_type_name(want), load_type_name(n->type));
	return false;
}

/* True when the mapping key K is a usable string. */
static bool
load_key_ok(struct load_ctx *ctx, const struct ynode *k, const char *what)
{
	if (k->type == YNODE_SCALAR)
		return true;
	if (k->type != YNODE_ALIAS)
		load_error_at(ctx, k, "a key in %s must be a name, but it is %s", what,
		    load_type_name(k->type));
	return false;
}

/* The keys of FIELDS as "a, b, c", for messages. */
static const char *
load_expected_keys(const struct load_field *fields, size_t nfields, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nfields && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s", i > 0 ? ", " : "", fields[i].key);
	return buf;
}

/* Reports the key K that FIELDS does not know. */
static void
load_unknown_key(struct load_ctx *ctx, const struct ynode *k, const char *what,
    const struct load_field *fields, size_t nfields)
{
	char expected[LOAD_EXPECTED_MAX_BYTES];
	struct load_quoted q;

	load_error_at(ctx, k, "unknown key '%s' in %s (expected %s)", load_quote(k->text, &q),
	    what, load_expected_keys(fields, nfields, expected, sizeof(expected)));
}

static const struct load_field *
load_find_field(const struct load_field *fields, size_t nfields, const char *key)
{
	for (size_t i = 0; i < nfields; i++)
		if (strcmp(fields[i].key, key) == 0)
			return &fields[i];
	return NULL;
}

/* Walks the mapping MAP (WHAT in messages) with its table FIELDS: each
 * known key's node is stored in RAW at the field's offset when it has the
 * field's type; unknown, duplicate and missing required keys are errors.
 * Returns a bit per field that was given. */
static unsigned
load_walk(struct load_ctx *ctx, const struct ynode *map, const char *what,
    const struct load_field *fields, size_t nfields, void *raw)
{
	const struct ynode *seen[LOAD_FIELDS_MAX] = { 0 };
	unsigned given = 0;

	for (size_t i = 0; i + 1 < map->nkids; i += 2) {
		const struct ynode *k = map->kids[i], *v = map->kids[i + 1];
		const struct load_field *f;
		size_t idx;

		if (!load_key_ok(ctx, k, what))
			continue;
		if ((f = load_find_field(fields, nfields, k->text)) == NULL) {
			load_unknown_key(ctx, k, what, fields, nfields);
			continue;
		}
		idx = (size_t)(f - fields);
		if (seen[idx] != NULL) {
			load_error_at(ctx, k, "duplicate key '%s' in %s (first given at line %u, column %u)",
			    f->key, what, seen[idx]->line, seen[idx]->col);
			continue;
		}
		seen[idx] = k;
		given |= LOAD_FIELD_BIT(idx);
		if (load_expect(ctx, v, f->type, f->key, what))
			*(const struct ynode **)((char *)raw + f->offset) = v;
	}
	for (size_t i = 0; i < nfields; i++)
		if (fields[i].missing != NULL && seen[i] == NULL)
			load_error_at(ctx, map, "%s has no '%s' (%s)", what, fields[i].key,
			    fields[i].missing);
	return given;
}

/* Checks that every item of the list L (the key KEY) is of type WANT. */
static void
load_shape_items(struct load_ctx *ctx, const struct ynode *l, enum ynode_type want,
    const char *key)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		load_expect_item(ctx, l->kids[i], want, key);
}

static void
load_shape_endpoint(struct load_ctx *ctx, const struct ynode *map, struct raw_endpoint *e)
{
	unsigned given, port = LOAD_FIELD_BIT(LOAD_ENDPOINT_PORT);
	unsigned ports = LOAD_FIELD_BIT(LOAD_ENDPOINT_PORTS);

	e->map = map;
	given = load_walk(ctx, map, "endpoint", load_endpoint_fields,
	    LOAD_NFIELDS(load_endpoint_fields), e);
	if ((given & port) && (given & ports))
		load_error_at(ctx, map, "endpoint has both 'port' and 'ports': give one of them");
	else if (!(given & (port | ports)))
		load_error_at(ctx, map, "endpoint has no 'port' or 'ports' (required)");
	load_shape_items(ctx, e->ports, YNODE_SCALAR, "ports");
	load_shape_items(ctx, e->allowed_ips, YNODE_SCALAR, "allowed_ips");
}

/* Allocates N zeroed elements of SIZE bytes (NULL for none, or no memory). */
static void *
load_calloc(struct load_ctx *ctx, size_t n, size_t size)
{
	void *p;

	if (n == 0)
		return NULL;
	if ((p = calloc(n, size)) == NULL)
		load_nomem(ctx);
	return p;
}

static void
load_shape_endpoints(struct load_ctx *ctx, struct raw_rule *r)
{
	const struct ynode *l = r->endpoints;

	if (l == NULL || (r->eps = load_calloc(ctx, l->nkids, sizeof(*r->eps))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		if (load_expect_item(ctx, l->kids[i], YNODE_MAPPING, "endpoints"))
			load_shape_endpoint(ctx, l->kids[i], &r->eps[r->neps++]);
}

static void
load_shape_binaries(struct load_ctx *ctx, struct raw_rule *r)
{
	const struct ynode *l = r->binaries;

	if (l == NULL || (r->bins = load_calloc(ctx, l->nkids, sizeof(*r->bins))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++) {
		struct raw_binary *b = &r->bins[r->nbins];

		if (!load_expect_item(ctx, l->kids[i], YNODE_MAPPING, "binaries"))
			continue;
		b->map = l->kids[i];
		load_walk(ctx, b->map, "binary", load_binary_fields,
		    LOAD_NFIELDS(load_binary_fields), b);
		r->nbins++;
	}
}

static void
load_shape_rule(struct load_ctx *ctx, struct raw_rule *r)
{
	char what[LOAD_WHAT_MAX_BYTES];
	struct load_quoted q;

	snprintf(what, sizeof(what), "network policy '%s'", load_quote(r->key->text, &q));
	load_walk(ctx, r->map, what, load_rule_fields, LOAD_NFIELDS(load_rule_fields), r);
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
load_shape_rule_dups(struct load_ctx *ctx, struct raw_policy *raw)
{
	const struct raw_rule **sorted;
	struct load_quoted q;

	if (raw->nrules < 2)
		return;
	if ((sorted = load_calloc(ctx, raw->nrules, sizeof(*sorted))) == NULL)
		return;
	for (size_t i = 0; i < raw->nrules; i++)
		sorted[i] = &raw->rules[i];
	qsort(sorted, raw->nrules, sizeof(*sorted), load_rule_key_compare);
	for (size_t i = 1; i < raw->nrules; i++) {
		const struct ynode *k = sorted[i]->key, *prev = sorted[i - 1]->key;

		if (strcmp(k->text, prev->text) == 0)
			load_error_at(ctx, k, "duplicate key '%s' in network_policies (first given at line %u, column %u)",
			    load_quote(k->text, &q), prev->line, prev->col);
	}
	free(sorted);
}

static void
load_shape_network(struct load_ctx *ctx, struct raw_policy *raw)
{
	const struct ynode *map = raw->network;
	size_t n = map->nkids / 2;

	if ((raw->rules = load_calloc(ctx, n, sizeof(*raw->rules))) == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct ynode *k = map->kids[2 * i], *v = map->kids[2 * i + 1];
		struct raw_rule *r = &raw->rules[raw->nrules];
		struct load_quoted q;

		if (!load_key_ok(ctx, k, "network_policies") ||
		    !load_expect(ctx, v, YNODE_MAPPING, load_quote(k->text, &q), "network_policies"))
			continue;
		r->key = k;
		r->map = v;
		raw->nrules++;
		load_shape_rule(ctx, r);
	}
	load_shape_rule_dups(ctx, raw);
}

/* Pass 2: the shape of the whole document. */
static void
load_shape(struct load_ctx *ctx, const struct ynode *root, struct raw_policy *raw)
{
	raw->root = root;
	load_walk(ctx, root, "the policy", load_policy_fields, LOAD_NFIELDS(load_policy_fields), raw);
	if (raw->filesystem != NULL) {
		load_walk(ctx, raw->filesystem, "filesystem_policy", load_filesystem_fields,
		    LOAD_NFIELDS(load_filesystem_fields), raw);
		load_shape_items(ctx, raw->read_only, YNODE_SCALAR, "read_only");
		load_shape_items(ctx, raw->read_write, YNODE_SCALAR, "read_write");
	}
	if (raw->landlock != NULL)
		load_walk(ctx, raw->landlock, "landlock", load_landlock_fields,
		    LOAD_NFIELDS(load_landlock_fields), raw);
	if (raw->process != NULL)
		load_walk(ctx, raw->process, "process", load_process_fields,
		    LOAD_NFIELDS(load_process_fields), raw);
	if (raw->write_guard != NULL)
		load_walk(ctx, raw->write_guard, "write_guard", load_write_guard_fields,
		    LOAD_NFIELDS(load_write_guard_fields), raw);
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
}

/* ---- pass 3: values ---- */

enum load_num {
	LOAD_NUM_OK = 0,
	LOAD_NUM_NOT_INT,               /* not digits */
	LOAD_NUM_QUOTED,                /* digits, but quoted: a string */
	LOAD_NUM_LEADING_ZERO,          /* "0443": YAML 1.1 reads it as octal */
	LOAD_NUM_RANGE,                 /* negative, or outside MIN-MAX */
};

/* Reads the scalar N as a decimal integer in MIN-MAX, strictly: digits
 * only, no sign, no leading zero, no quotes. */
static enum load_num
load_number(const struct ynode *n, unsigned long min, unsigned long max, unsigned long *out)
{
	const char *s = n->text;
	bool negative = s[0] == '-';
	unsigned long v = 0;
	bool over = false;

	s += negative;
	if (s[0] == '\0')
		return LOAD_NUM_NOT_INT;
	for (const char *p = s; *p != '\0'; p++) {
		unsigned long digit = (unsigned long)(*p - '0');

		if (*p < '0' || *p > '9')
			return LOAD_NUM_NOT_INT;
		if (over || v > (max - digit) / 10)
			over = true;
		else
			v = v * 10 + digit;
	}
	if (!n->plain)
		return LOAD_NUM_QUOTED;
	if (s[0] == '0' && s[1] != '\0')
		return LOAD_NUM_LEADING_ZERO;
	if (negative || over || v < min)
		return LOAD_NUM_RANGE;
	*out = v;
	return LOAD_NUM_OK;
}

/* Says why the scalar N, the WHAT of a policy, is not the number RANGE
 * describes. */
static void
load_number_report(struct load_ctx *ctx, const struct ynode *n, enum load_num err,
    const char *what, const char *range)
{
	struct load_quoted q;
	const char *text = load_quote(n->text, &q);

	if (err == LOAD_NUM_QUOTED)
		load_error_at(ctx, n, "%s \"%s\" is quoted: write it as a plain number", what, text);
	else if (err == LOAD_NUM_LEADING_ZERO)
		load_error_at(ctx, n, "%s %s has a leading zero: write it without", what, text);
	else if (err == LOAD_NUM_RANGE)
		load_error_at(ctx, n, "%s %s is out of range (%s)", what, text, range);
	else
		load_error_at(ctx, n, "%s '%s' is not a number (%s)", what, text, range);
}

/* Reads the port N, or says why it is no port. */
static bool
load_port(struct load_ctx *ctx, const struct ynode *n, uint16_t *out)
{
	unsigned long v = 0;
	enum load_num err = load_number(n, LOAD_PORT_MIN, LOAD_PORT_MAX, &v);

	if (err != LOAD_NUM_OK) {
		load_number_report(ctx, n, err, "port", "1-65535");
		return false;
	}
	*out = (uint16_t)v;
	return true;
}

/* True when the text of N has no control character (tab included): it
 * ends up in messages, logs and rendered YAML. */
static bool
load_text_ok(struct load_ctx *ctx, const struct ynode *n, const char *what)
{
	struct load_quoted q;

	if (n->len == 0) {
		load_error_at(ctx, n, "%s is empty", what);
		return false;
	}
	if (n->len >= POLICY_LOAD_TEXT_MAX_BYTES) {
		load_error_at(ctx, n, "%s is longer than %d bytes", what, POLICY_LOAD_TEXT_MAX_BYTES - 1);
		return false;
	}
	for (size_t i = 0; i < n->len; i++) {
		unsigned char c = (unsigned char)n->text[i];

		if (c < 0x20 || c == 0x7f) {
			load_error_at(ctx, n, "%s '%s' has a control character", what, load_quote(n->text, &q));
			return false;
		}
	}
	return true;
}

/* A copy of N's text into *OUT when it is acceptable text. */
static void
load_text(struct load_ctx *ctx, const struct ynode *n, const char *what, char **out)
{
	if (!load_text_ok(ctx, n, what))
		return;
	if ((*out = strdup(n->text)) == NULL)
		load_nomem(ctx);
}

static void
load_version(struct load_ctx *ctx, const struct ynode *n, struct policy *p)
{
	unsigned long v = 0;
	enum load_num err;

	if (n == NULL)
		return;
	if ((err = load_number(n, 0, INT_MAX, &v)) != LOAD_NUM_OK)
		load_number_report(ctx, n, err, "version", "this corral reads version 1");
	else if (v != POLICY_VERSION)
		load_error_at(ctx, n, "unsupported policy version %lu (this corral reads version %d)",
		    v, POLICY_VERSION);
	else
		p->version = POLICY_VERSION;
}

/* Normalizes the path TEXT into OUT (room for its length + 2): "//"
 * collapsed, "." segments and a trailing '/' dropped. NULL when it is
 * fine, else why not. */
static const char *
load_path_normalize(const char *text, char *out)
{
	size_t i = 0, o = 0;

	if (text[0] != '/')
		return "is not absolute";
	for (const char *s = text; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return "has a control character";
	while (text[i] != '\0') {
		size_t start, len;

		while (text[i] == '/')
			i++;
		for (start = i; text[i] != '\0' && text[i] != '/'; i++)
			;
		len = i - start;
		if (len == 0 || (len == 1 && text[start] == '.'))
			continue;
		/* ".." would let a policy name a folder by a path that is not its own. */
		if (len == 2 && text[start] == '.' && text[start + 1] == '.')
			return "has a '..' segment";
		out[o++] = '/';
		memcpy(out + o, text + start, len);
		o += len;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return NULL;
}

/* Validates the list L of paths into PP, named KEY in messages. Returns
 * the node of each path kept (free() it), for later messages; NULL when
 * none was kept or memory ran out. */
static const struct ynode **
load_paths(struct load_ctx *ctx, const struct ynode *l, const char *key, struct policy_paths *pp)
{
	const struct ynode **nodes;
	struct load_quoted q;

	if (l == NULL || l->nkids == 0)
		return NULL;
	pp->paths = load_calloc(ctx, l->nkids, sizeof(*pp->paths));
	nodes = load_calloc(ctx, l->nkids, sizeof(*nodes));
	for (size_t i = 0; pp->paths != NULL && nodes != NULL && i < l->nkids; i++) {
		const struct ynode *n = l->kids[i];
		const char *why;
		char *path;

		if (n->type != YNODE_SCALAR)
			continue;
		if (n->len >= POLICY_LOAD_PATH_MAX_BYTES) {
			load_error_at(ctx, n, "path in %s is longer than %d bytes", key,
			    POLICY_LOAD_PATH_MAX_BYTES - 1);
			continue;
		}
		if ((path = malloc(n->len + 2)) == NULL) {
			load_nomem(ctx);
			break;
		}
		if ((why = load_path_normalize(n->text, path)) != NULL) {
			load_error_at(ctx, n, "path '%s' in %s %s", load_quote(n->text, &q), key, why);
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
	const struct ynode *node;
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
    const struct ynode **nodes, bool writable)
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
load_paths_overlap(struct load_ctx *ctx, const struct policy *p,
    const struct ynode **ro_nodes, const struct ynode **rw_nodes)
{
	size_t n = 0;
	struct load_path_ref *refs;
	struct load_quoted q;

	if (p->read_only.npaths == 0 || p->read_write.npaths == 0)
		return;
	refs = load_calloc(ctx, p->read_only.npaths + p->read_write.npaths, sizeof(*refs));
	if (refs == NULL)
		return;
	load_path_refs_add(refs, &n, &p->read_only, ro_nodes, false);
	load_path_refs_add(refs, &n, &p->read_write, rw_nodes, true);
	qsort(refs, n, sizeof(*refs), load_path_ref_compare);
	for (size_t i = 1; i < n; i++)
		if (refs[i].writable && !refs[i - 1].writable &&
		    strcmp(refs[i].path, refs[i - 1].path) == 0)
			load_error_at(ctx, refs[i].node,
			    "path '%s' is in both read_only (line %u) and read_write: keep it in one",
			    load_quote(refs[i].path, &q), refs[i - 1].node->line);
	free(refs);
}

/* Both path lists of RAW into P. */
static void
load_filesystem(struct load_ctx *ctx, const struct raw_policy *raw, struct policy *p)
{
	const struct ynode **ro_nodes, **rw_nodes;

	ro_nodes = load_paths(ctx, raw->read_only, "read_only", &p->read_only);
	rw_nodes = load_paths(ctx, raw->read_write, "read_write", &p->read_write);
	if (ro_nodes != NULL && rw_nodes != NULL)
		load_paths_overlap(ctx, p, ro_nodes, rw_nodes);
	free(ro_nodes);
	free(rw_nodes);
}

static void
load_landlock(struct load_ctx *ctx, const struct ynode *n, struct policy *p)
{
	struct load_quoted q;

	if (n == NULL)
		return;
	if (strcmp(n->text, "hard_requirement") == 0)
		p->landlock = POLICY_LANDLOCK_HARD_REQUIREMENT;
	else if (strcmp(n->text, "best_effort") == 0)
		p->landlock = POLICY_LANDLOCK_BEST_EFFORT;
	else
		load_error_at(ctx, n, "unknown landlock compatibility '%s' (expected hard_requirement or best_effort)",
		    load_quote(n->text, &q));
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
	/* Never uid or gid 0 inside a sandbox (DESIGN 2: "never uid 0 inside"). */
	if (v == 0)
		return "is root, and sandboxes never run as root";
	return NULL;
}

/* Validates run_as_user or run_as_group (KEY): an id, quoted or not ("1000"
 * is the usual form), or a user or group name. */
static void
load_run_as(struct load_ctx *ctx, const struct ynode *n, const char *key, char **out)
{
	struct load_quoted q;
	const char *why = NULL;

	if (n->len > 0 && strspn(n->text, "0123456789") == n->len)
		why = load_id_check(n->text);
	else if (!load_user_name_ok(n->text, n->len))
		why = "is neither a number nor a user name";
	else if (strcmp(n->text, "root") == 0)
		why = "is root, and sandboxes never run as root";
	if (why != NULL) {
		load_error_at(ctx, n, "%s '%s' %s", key, load_quote(n->text, &q), why);
		return;
	}
	if ((*out = strdup(n->text)) == NULL)
		load_nomem(ctx);
}

static void
load_process(struct load_ctx *ctx, const struct raw_policy *raw, struct policy *p)
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
load_write_guard(struct load_ctx *ctx, const struct raw_policy *raw, struct policy *p)
{
	struct load_quoted q;

	if (raw->write_guard == NULL)
		return;
	p->has_write_guard = true;
	if (raw->allowed_root != NULL && strcmp(raw->allowed_root->text, "workspace") != 0)
		load_error_at(ctx, raw->allowed_root, "write_guard allowed_root '%s' is not supported (expected workspace)",
		    load_quote(raw->allowed_root->text, &q));
	if (raw->deny_reason != NULL)
		load_text(ctx, raw->deny_reason, "write_guard deny_reason", &p->write_guard_deny_reason);
}

/* ---- addresses ---- */

/* A range no allowed_ips entry may touch. */
struct load_range {
	int family;
	uint8_t addr[16];
	uint8_t prefix_len;
	const char *what;
};

/* Loopback, link-local and unspecified: never reachable from a sandbox
 * (DESIGN 3, step 4), so an entry naming them says something false. */
static const struct load_range load_forbidden[] = {
	{ AF_INET, { 127 }, 8, "the loopback range 127.0.0.0/8" },
	{ AF_INET, { 169, 254 }, 16, "the link-local range 169.254.0.0/16" },
	{ AF_INET, { 0 }, 32, "the unspecified address 0.0.0.0" },
	{ AF_INET6, { [15] = 1 }, 128, "the loopback address ::1" },
	{ AF_INET6, { 0xfe, 0x80 }, 10, "the link-local range fe80::/10" },
	{ AF_INET6, { 0 }, 128, "the unspecified address ::" },
};

/* The first 96 bits of the IPv6 forms that carry an IPv4 address:
 * v4-mapped (::ffff:0:0/96), v4-compatible (::/96), NAT64 (64:ff9b::/96). */
static const uint8_t load_v4_in_v6[][12] = {
	{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff },
	{ 0 },
	{ 0, 0x64, 0xff, 0x9b },
};

/* True when A and B agree on their first BITS bits. */
static bool
load_bits_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
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
load_ranges_overlap(const uint8_t *a, unsigned alen, const uint8_t *b, unsigned blen)
{
	return load_bits_equal(a, b, alen < blen ? alen : blen);
}

/* The forbidden IPv4 range R as carried inside IPv6 by the form EMBED. */
static void
load_range_in_v6(const struct load_range *r, const uint8_t *embed, uint8_t *addr)
{
	memcpy(addr, embed, 12);
	memcpy(addr + 12, r->addr, 4);
}

/* The forbidden range C touches, or NULL; its own family first, so that
 * "::/128" is named as itself and not as IPv4's 0.0.0.0 inside IPv6. */
static const char *
load_cidr_forbidden(const struct policy_cidr *c)
{
	size_t nranges = sizeof(load_forbidden) / sizeof(load_forbidden[0]);
	size_t nforms = sizeof(load_v4_in_v6) / sizeof(load_v4_in_v6[0]);
	uint8_t addr[16];

	for (size_t i = 0; i < nranges; i++)
		if (load_forbidden[i].family == c->family &&
		    load_ranges_overlap(c->addr, c->prefix_len, load_forbidden[i].addr,
		    load_forbidden[i].prefix_len))
			return load_forbidden[i].what;
	for (size_t i = 0; c->family == AF_INET6 && i < nranges; i++) {
		if (load_forbidden[i].family != AF_INET)
			continue;
		for (size_t k = 0; k < nforms; k++) {
			load_range_in_v6(&load_forbidden[i], load_v4_in_v6[k], addr);
			if (load_ranges_overlap(c->addr, c->prefix_len, addr,
			    96u + load_forbidden[i].prefix_len))
				return load_forbidden[i].what;
		}
	}
	return NULL;
}

enum load_cidr_err {
	LOAD_CIDR_OK = 0,
	LOAD_CIDR_FORM,                 /* no '/' */
	LOAD_CIDR_ADDRESS,              /* inet_pton refused the address */
	LOAD_CIDR_PREFIX,               /* not digits, a leading zero, or too long for the family */
	LOAD_CIDR_HOST_BITS,            /* bits set past the prefix */
};

/* Reads the prefix length at S (at most MAX), strictly: digits only, no
 * leading zero; -1 when it is not one. */
static int
load_prefix_len(const char *s, unsigned max)
{
	unsigned v = 0;
	size_t len = strlen(s);

	if (len == 0 || len > 3 || strspn(s, "0123456789") != len || (s[0] == '0' && len > 1))
		return -1;
	for (size_t i = 0; i < len; i++)
		v = v * 10 + (unsigned)(s[i] - '0');
	return v <= max ? (int)v : -1;
}

/* Parses TEXT ("10.0.0.0/8", "fd00::/8") into OUT. */
static enum load_cidr_err
load_cidr_parse(const char *text, struct policy_cidr *out)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = strchr(text, '/');
	size_t alen;
	int prefix;

	memset(out, 0, sizeof(*out));
	if (slash == NULL)
		return LOAD_CIDR_FORM;
	alen = (size_t)(slash - text);
	if (alen == 0 || alen >= sizeof(addr))
		return LOAD_CIDR_ADDRESS;
	memcpy(addr, text, alen);
	addr[alen] = '\0';
	out->family = memchr(addr, ':', alen) != NULL ? AF_INET6 : AF_INET;
	if (inet_pton(out->family, addr, out->addr) != 1)
		return LOAD_CIDR_ADDRESS;
	if ((prefix = load_prefix_len(slash + 1, out->family == AF_INET ? 32 : 128)) < 0)
		return LOAD_CIDR_PREFIX;
	out->prefix_len = (uint8_t)prefix;
	for (unsigned bit = (unsigned)prefix; bit < (out->family == AF_INET ? 32u : 128u); bit++)
		if (out->addr[bit / 8] & (0x80 >> (bit % 8)))
			return LOAD_CIDR_HOST_BITS;
	return LOAD_CIDR_OK;
}

/* Says why the allowed_ips entry N does not parse. */
static void
load_cidr_report(struct load_ctx *ctx, const struct ynode *n, enum load_cidr_err err,
    struct policy_cidr *c)
{
	char net[INET6_ADDRSTRLEN];
	struct load_quoted q;
	const char *text = load_quote(n->text, &q);
	unsigned bits = c->family == AF_INET ? 32u : 128u;

	if (err == LOAD_CIDR_FORM)
		load_error_at(ctx, n, "allowed_ips '%s' is not ADDRESS/PREFIX (e.g. 10.0.0.0/8)", text);
	else if (err == LOAD_CIDR_ADDRESS)
		load_error_at(ctx, n, "allowed_ips '%s' has no valid IPv4 or IPv6 address before the '/'", text);
	else if (err == LOAD_CIDR_PREFIX)
		load_error_at(ctx, n, "allowed_ips '%s' has a bad prefix length (0-%u)", text, bits);
	if (err != LOAD_CIDR_HOST_BITS)
		return;
	for (unsigned bit = c->prefix_len; bit < bits; bit++)
		c->addr[bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
	inet_ntop(c->family, c->addr, net, sizeof(net));
	load_error_at(ctx, n, "allowed_ips '%s' has bits set past its prefix length (the network is %s/%u)",
	    text, net, c->prefix_len);
}

/* Validates one allowed_ips entry into OUT. */
static bool
load_cidr(struct load_ctx *ctx, const struct ynode *n, struct policy_cidr *out)
{
	enum load_cidr_err err = load_cidr_parse(n->text, out);
	struct load_quoted q;
	const char *what;

	if (err != LOAD_CIDR_OK) {
		load_cidr_report(ctx, n, err, out);
		return false;
	}
	if (out->prefix_len == 0) {
		load_error_at(ctx, n, "allowed_ips '%s' covers every address: name only the internal ranges the entry needs",
		    load_quote(n->text, &q));
		return false;
	}
	if ((what = load_cidr_forbidden(out)) != NULL) {
		load_error_at(ctx, n, "allowed_ips '%s' overlaps %s, which a sandbox may never reach",
		    load_quote(n->text, &q), what);
		return false;
	}
	return true;
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
load_endpoint_ports(struct load_ctx *ctx, const struct raw_endpoint *r, struct policy_endpoint *e)
{
	const struct ynode *l = r->ports;

	if (r->port != NULL && r->ports == NULL) {
		if ((e->ports = load_calloc(ctx, 1, sizeof(*e->ports))) != NULL &&
		    load_port(ctx, r->port, &e->ports[0]))
			e->nports = 1;
		return;
	}
	if (l == NULL || r->port != NULL)
		return;
	if (l->nkids == 0) {
		load_error_at(ctx, l, "'ports' is empty: list at least one port");
		return;
	}
	if ((e->ports = load_calloc(ctx, l->nkids, sizeof(*e->ports))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		if (l->kids[i]->type == YNODE_SCALAR && load_port(ctx, l->kids[i], &e->ports[e->nports]))
			e->nports++;
	load_ports_sort(e);
}

static void
load_endpoint_sni(struct load_ctx *ctx, const struct ynode *n, struct policy_endpoint *e)
{
	struct load_quoted q;
	const char *s = n->text;

	e->sni_check = true;
	if (n->plain && (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0))
		return;
	if (n->plain && (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0)) {
		e->sni_check = false;
		return;
	}
	load_error_at(ctx, n, "'sni_check' must be true or false, not '%s'", load_quote(s, &q));
}

static void
load_endpoint(struct load_ctx *ctx, const struct raw_endpoint *r, struct policy_endpoint *e)
{
	const struct ynode *l = r->allowed_ips;
	struct load_quoted q;
	enum match_err err;

	e->line = r->map->line;
	e->col = r->map->col;
	e->sni_check = true;
	if (r->host != NULL && (err = match_host_parse(r->host->text, &e->host)) != MATCH_OK) {
		if (err == MATCH_ERR_NOMEM)
			load_nomem(ctx);
		else
			load_error_at(ctx, r->host, "host '%s': %s", load_quote(r->host->text, &q),
			    match_strerror(err));
	}
	load_endpoint_ports(ctx, r, e);
	if (r->sni_check != NULL)
		load_endpoint_sni(ctx, r->sni_check, e);
	if (l == NULL || (e->allowed_ips = load_calloc(ctx, l->nkids, sizeof(*e->allowed_ips))) == NULL)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		if (l->kids[i]->type == YNODE_SCALAR &&
		    load_cidr(ctx, l->kids[i], &e->allowed_ips[e->nallowed_ips]))
			e->nallowed_ips++;
}

static void
load_binaries(struct load_ctx *ctx, const struct raw_rule *r, struct policy_rule *rule)
{
	struct load_quoted q;
	enum match_err err;

	if ((rule->binaries = load_calloc(ctx, r->nbins, sizeof(*rule->binaries))) == NULL)
		return;
	for (size_t i = 0; i < r->nbins; i++) {
		const struct ynode *n = r->bins[i].path;

		if (n == NULL)
			continue;
		if ((err = match_binary_check(n->text)) != MATCH_OK) {
			load_error_at(ctx, n, "binary '%s': %s", load_quote(n->text, &q), match_strerror(err));
			continue;
		}
		if ((rule->binaries[rule->nbinaries].path = strdup(n->text)) == NULL) {
			load_nomem(ctx);
			return;
		}
		rule->nbinaries++;
		/* The glob of every program: the decision needs no identification. */
		if (strcmp(n->text, MATCH_ANY_BINARY_GLOB) == 0)
			rule->any_binary = true;
	}
}

static void
load_rule(struct load_ctx *ctx, const struct raw_rule *r, struct policy_rule *rule)
{
	load_text(ctx, r->key, "network policy key", &rule->key);
	if (r->name != NULL)
		load_text(ctx, r->name, "network policy name", &rule->name);
	else if (rule->key != NULL && (rule->name = strdup(rule->key)) == NULL)
		load_nomem(ctx);
	if ((rule->endpoints = load_calloc(ctx, r->neps, sizeof(*rule->endpoints))) != NULL) {
		for (size_t i = 0; i < r->neps; i++)
			load_endpoint(ctx, &r->eps[i], &rule->endpoints[i]);
		rule->nendpoints = r->neps;
	}
	load_binaries(ctx, r, rule);
}

/* Pass 3: every value of RAW into P. */
static void
load_validate(struct load_ctx *ctx, const struct raw_policy *raw, struct policy *p)
{
	load_version(ctx, raw->version, p);
	load_filesystem(ctx, raw, p);
	load_landlock(ctx, raw->compatibility, p);
	load_process(ctx, raw, p);
	load_write_guard(ctx, raw, p);
	if ((p->rules = load_calloc(ctx, raw->nrules, sizeof(*p->rules))) == NULL)
		return;
	p->nrules = raw->nrules;
	for (size_t i = 0; i < raw->nrules; i++)
		load_rule(ctx, &raw->rules[i], &p->rules[i]);
}

/* ---- entry points ---- */

/* Parses and validates CTX's input into P, reporting every error. */
static void
load_document(struct load_ctx *ctx, struct policy *p)
{
	struct raw_policy raw = { 0 };
	struct ynode *root;

	if ((root = load_tree(ctx)) == NULL) {
		if (ctx->nerrors == 0)
			load_error(ctx, 1, 1, "the policy is empty: expected a mapping with at least 'version: 1'");
		return;
	}
	if (root->type != YNODE_MAPPING) {
		if (root->type == YNODE_NULL)
			load_error_at(ctx, root, "the policy is empty: expected a mapping with at least 'version: 1'");
		else if (root->type != YNODE_ALIAS)
			load_error_at(ctx, root, "the policy must be a mapping (version, filesystem_policy, ...), but it is %s",
			    load_type_name(root->type));
		ynode_free(root);
		return;
	}
	load_shape(ctx, root, &raw);
	load_validate(ctx, &raw, p);
	load_raw_clear(&raw);
	ynode_free(root);
}

int
policy_load_buffer(const char *name, const char *data, size_t len,
    struct policy **out, struct policy_diags *diags)
{
	struct load_ctx ctx = { .name = name, .data = data, .len = len, .diags = diags };
	size_t first = diags != NULL ? diags->count : 0;
	struct policy *p;

	*out = NULL;
	if (len > POLICY_FILE_MAX_BYTES) {
		load_error(&ctx, 0, 0, "the policy is %zu bytes, over the limit of %d bytes",
		    len, POLICY_FILE_MAX_BYTES);
		return -1;
	}
	if ((p = policy_new()) == NULL) {
		load_nomem(&ctx);
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

/* Refuses a file that is not a regular file, that others could write, or
 * that is too big; true when refused. */
static bool
load_file_refused(struct load_ctx *ctx, const struct stat *st)
{
	uid_t me = geteuid();

	if (!S_ISREG(st->st_mode)) {
		load_error(ctx, 0, 0, "refused: not a regular file (a policy is read from a plain file)");
		return true;
	}
	/* Whoever can write the policy decides what the sandbox may reach. */
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		load_error(ctx, 0, 0, "refused: the file is writable by %s (mode %04o); a policy may be writable by its owner only: chmod go-w it",
		    (st->st_mode & S_IWOTH) ? "every user" : "its group",
		    (unsigned)(st->st_mode & 07777));
		return true;
	}
	if (st->st_uid != 0 && st->st_uid != me) {
		load_error(ctx, 0, 0, "refused: the file belongs to uid %u, which is neither root nor the user loading it (uid %u)",
		    (unsigned)st->st_uid, (unsigned)me);
		return true;
	}
	if (st->st_size > POLICY_FILE_MAX_BYTES) {
		load_error(ctx, 0, 0, "refused: the file is %lld bytes, over the limit of %d bytes",
		    (long long)st->st_size, POLICY_FILE_MAX_BYTES);
		return true;
	}
	return false;
}

/* Reads FD to its end into *DATA (*LEN bytes), starting with room for
 * HINT bytes, never more than POLICY_FILE_MAX_BYTES: a file may have grown
 * since fstat(), and a pipe has no size to check first. */
static int
load_read_all(struct load_ctx *ctx, int fd, size_t hint, char **data, size_t *len)
{
	size_t cap = hint + 1 < LOAD_READ_CHUNK_BYTES ? LOAD_READ_CHUNK_BYTES : hint + 1, got = 0;
	char *buf = malloc(cap), *bigger;
	ssize_t n;

	while (buf != NULL) {
		if (got == cap) {
			if (cap > POLICY_FILE_MAX_BYTES) {
				load_error(ctx, 0, 0, "refused: the input is over the limit of %d bytes",
				    POLICY_FILE_MAX_BYTES);
				goto fail;
			}
			cap = cap * 2 > POLICY_FILE_MAX_BYTES + 1 ? POLICY_FILE_MAX_BYTES + 1 : cap * 2;
			if ((bigger = realloc(buf, cap)) == NULL)
				break;
			buf = bigger;
		}
		n = read(fd, buf + got, cap - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			load_error(ctx, 0, 0, "cannot read the file: %s", strerror(errno));
			goto fail;
		}
		if (n == 0) {
			*data = buf;
			*len = got;
			return 0;
		}
		got += (size_t)n;
	}
	load_nomem(ctx);
fail:
	free(buf);
	return -1;
}

int
policy_load_fd(int fd, const char *name, struct policy **out, struct policy_diags *diags)
{
	struct load_ctx ctx = { .name = name, .diags = diags };
	struct stat st;
	char *data = NULL;
	size_t len = 0;
	int rc = -1;

	*out = NULL;
	if (fstat(fd, &st) == -1) {
		load_error(&ctx, 0, 0, "cannot read the file: %s", strerror(errno));
		goto out;
	}
	if (load_file_refused(&ctx, &st) ||
	    load_read_all(&ctx, fd, (size_t)st.st_size, &data, &len) == -1)
		goto out;
	rc = policy_load_buffer(name, data, len, out, diags);
out:
	free(data);
	return rc;
}

int
policy_load_stream(int fd, const char *name, struct policy **out, struct policy_diags *diags)
{
	struct load_ctx ctx = { .name = name, .diags = diags };
	char *data = NULL;
	size_t len = 0;
	int rc = -1;

	*out = NULL;
	if (load_read_all(&ctx, fd, 0, &data, &len) == 0)
		rc = policy_load_buffer(name, data, len, out, diags);
	free(data);
	return rc;
}

int
policy_load_file(const char *path, struct policy **out, struct policy_diags *diags)
{
	struct load_ctx ctx = { .name = path, .diags = diags };
	int fd, rc;

	*out = NULL;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		load_error(&ctx, 0, 0, "cannot open the file: %s", strerror(errno));
		return -1;
	}
	rc = policy_load_fd(fd, path, out, diags);
	close(fd);
	return rc;
}
