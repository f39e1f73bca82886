/* The YAML machinery of corral's loaders: libyaml's events into a tree,
 * errors with their positions and source lines, the walk of a mapping
 * with its key table, strict numbers and paths, file checks and capped
 * reading. The words that differ between documents come from their
 * struct yamltree_doc. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "policy/yamltree.h"

#define YAMLTREE_EXPECTED_MAX_BYTES 256 /* "socket, state_dir, ..." */
#define YAMLTREE_READ_CHUNK_BYTES 4096  /* the first buffer for an input of unknown size */
#define YAMLTREE_KIDS_FIRST 4           /* the first room for a node's kids */

/* The tree being built from events. */
struct yamltree_build {
	struct yamltree_node *root;
	struct yamltree_node *open[YAMLTREE_DEPTH_MAX]; /* lists and mappings not yet closed */
	size_t depth;
	unsigned ndocs;
	bool failed;                    /* the tree is unusable: drop it */
	bool done;
};

/* ---- positions and errors ---- */

/* The length of the line break at S (N > 0 bytes left), as libyaml counts
 * lines: CR LF, CR, LF, NEL, LS, PS; 0 when there is none. */
static size_t
yamltree_break_len(const char *s, size_t n)
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
yamltree_find_line(struct yamltree_ctx *ctx, unsigned line, size_t *start, size_t *len)
{
	size_t i = 0, b;
	unsigned cur = 1;

	if (ctx->seen_line > 0 && ctx->seen_line <= line) {
		cur = ctx->seen_line;
		i = ctx->seen_offset;
	}
	while (i < ctx->len && cur < line) {
		b = yamltree_break_len(ctx->data + i, ctx->len - i);
		cur += b > 0;
		i += b > 0 ? b : 1;
	}
	ctx->seen_line = cur;
	ctx->seen_offset = i;
	*start = i;
	while (i < ctx->len && i - *start < POLICY_DIAG_SOURCE_MAX_BYTES &&
	    yamltree_break_len(ctx->data + i, ctx->len - i) == 0)
		i++;
	*len = i - *start;
}

/* The line and column (1-based, in characters) of byte OFFSET. */
static void
yamltree_locate(const struct yamltree_ctx *ctx, size_t offset, unsigned *line, unsigned *col)
{
	size_t i = 0, b;

	*line = 1;
	*col = 1;
	while (i < offset && i < ctx->len) {
		b = yamltree_break_len(ctx->data + i, ctx->len - i);
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

/* Counts one error and records it, with its source line, when the caller
 * keeps diagnostics. */
static void __attribute__((format(printf, 4, 0)))
yamltree_verror(struct yamltree_ctx *ctx, unsigned line, unsigned col, const char *fmt,
    va_list ap)
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
		yamltree_find_line(ctx, line, &start, &len);
		source = ctx->data + start;
	}
	policy_diags_add(ctx->diags, ctx->name, line, col, source, len, "%s", message);
}

void
yamltree_error(struct yamltree_ctx *ctx, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	yamltree_verror(ctx, line, col, fmt, ap);
	va_end(ap);
}

void
yamltree_error_at(struct yamltree_ctx *ctx, const struct yamltree_node *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	yamltree_verror(ctx, n->line, n->col, fmt, ap);
	va_end(ap);
}

void
yamltree_nomem(struct yamltree_ctx *ctx)
{
	if (ctx->nomem) {
		ctx->nerrors++;
		return;
	}
	ctx->nomem = true;
	yamltree_error(ctx, 0, 0, "out of memory");
}

void *
yamltree_calloc(struct yamltree_ctx *ctx, size_t n, size_t size)
{
	void *p;

	if (n == 0)
		return NULL;
	if ((p = calloc(n, size)) == NULL)
		yamltree_nomem(ctx);
	return p;
}

const char *
yamltree_quote(const char *s, struct yamltree_quoted *q)
{
	size_t o = 0;

	for (size_t i = 0; s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == YAMLTREE_QUOTE_MAX_BYTES) {
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

/* ---- events into a tree ---- */

void
yamltree_free(struct yamltree_node *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		yamltree_free(n->kids[i]);
	free(n->kids);
	free(n->text);
	free(n);
}

/* True for a plain scalar YAML reads as null. */
static bool
yamltree_is_null(const char *text, size_t len)
{
	return len == 0 || strcmp(text, "~") == 0 || strcmp(text, "null") == 0 ||
	    strcmp(text, "Null") == 0 || strcmp(text, "NULL") == 0;
}

/* The 1-based line and column of libyaml's MARK. */
static void
yamltree_mark(const yaml_mark_t *mark, unsigned *line, unsigned *col)
{
	*line = (unsigned)mark->line + 1;
	*col = (unsigned)mark->column + 1;
}

/* Adds N under the innermost open list or mapping, or as the root; -1
 * (N not added) if out of memory. */
static int
yamltree_attach(struct yamltree_build *t, struct yamltree_node *n)
{
	struct yamltree_node *parent, **kids;
	size_t cap;

	if (t->depth == 0) {
		if (t->root != NULL)
			return -1;
		t->root = n;
		return 0;
	}
	parent = t->open[t->depth - 1];
	if (parent->nkids == parent->cap) {
		cap = parent->cap == 0 ? YAMLTREE_KIDS_FIRST : parent->cap * 2;
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
static struct yamltree_node *
yamltree_node_new(struct yamltree_ctx *ctx, struct yamltree_build *t, enum yamltree_type type,
    const yaml_mark_t *mark)
{
	struct yamltree_node *n;
	unsigned line, col;

	yamltree_mark(mark, &line, &col);
	if (++ctx->nnodes > ctx->doc->nodes_max) {
		yamltree_error(ctx, line, col, "more than %zu values in %s", ctx->doc->nodes_max,
		    ctx->doc->within);
		t->failed = true;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (n == NULL || yamltree_attach(t, n) == -1) {
		free(n);
		yamltree_nomem(ctx);
		t->failed = true;
		return NULL;
	}
	n->type = type;
	n->line = line;
	n->col = col;
	return n;
}

/* Refuses an anchor or a tag on a node. Anchors are refused, not merely
 * unused: a document must say what it means where it says it, and with
 * no anchors no alias can point anywhere. */
static void
yamltree_props(struct yamltree_ctx *ctx, const yaml_mark_t *mark,
    const yaml_char_t *anchor, const yaml_char_t *tag)
{
	struct yamltree_quoted q;
	unsigned line, col;

	yamltree_mark(mark, &line, &col);
	if (anchor != NULL)
		yamltree_error(ctx, line, col, "anchors are not allowed (&%s): write the value out in full",
		    yamltree_quote((const char *)anchor, &q));
	if (tag != NULL)
		yamltree_error(ctx, line, col, "tags are not allowed (%s): remove it",
		    yamltree_quote((const char *)tag, &q));
}

/* An alias is refused and stands for nothing: never expanded, so a
 * "billion laughs" document costs no more than its own size. */
static void
yamltree_alias(struct yamltree_ctx *ctx, struct yamltree_build *t, const yaml_event_t *ev)
{
	struct yamltree_quoted q;
	unsigned line, col;

	yamltree_mark(&ev->start_mark, &line, &col);
	yamltree_error(ctx, line, col, "aliases are not allowed (*%s): write the value out in full",
	    yamltree_quote((const char *)ev->data.alias.anchor, &q));
	yamltree_node_new(ctx, t, YAMLTREE_ALIAS, &ev->start_mark);
}

static void
yamltree_scalar(struct yamltree_ctx *ctx, struct yamltree_build *t, const yaml_event_t *ev)
{
	const char *value = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	struct yamltree_node *n;

	yamltree_props(ctx, &ev->start_mark, ev->data.scalar.anchor, ev->data.scalar.tag);
	if ((n = yamltree_node_new(ctx, t, YAMLTREE_SCALAR, &ev->start_mark)) == NULL)
		return;
	if ((n->text = malloc(len + 1)) == NULL) {
		yamltree_nomem(ctx);
		t->failed = true;
		return;
	}
	memcpy(n->text, value, len);
	n->text[len] = '\0';
	n->len = len;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if (n->plain && yamltree_is_null(n->text, len))
		n->type = YAMLTREE_NULL;
	/* "\0" in a quoted scalar: C strings would silently cut the value.
	 * Refused here; the value is cut at it so later checks agree. */
	if (memchr(value, '\0', len) != NULL) {
		yamltree_error_at(ctx, n, "a NUL character (\\0) is not allowed in a value");
		n->len = strlen(n->text);
	}
}

/* Opens a list or mapping, refusing to nest deeper than the document allows. */
static void
yamltree_open(struct yamltree_ctx *ctx, struct yamltree_build *t, const yaml_event_t *ev,
    enum yamltree_type type, const yaml_char_t *anchor, const yaml_char_t *tag)
{
	struct yamltree_node *n;
	unsigned line, col;

	yamltree_props(ctx, &ev->start_mark, anchor, tag);
	if (t->depth == ctx->doc->depth_max || t->depth == YAMLTREE_DEPTH_MAX) {
		yamltree_mark(&ev->start_mark, &line, &col);
		yamltree_error(ctx, line, col, "lists and mappings are nested deeper than %zu levels",
		    t->depth);
		t->failed = true;
		return;
	}
	if ((n = yamltree_node_new(ctx, t, type, &ev->start_mark)) != NULL)
		t->open[t->depth++] = n;
}

/* A document after the first ends the tree: it is refused, not read. */
static void
yamltree_document(struct yamltree_ctx *ctx, struct yamltree_build *t, const yaml_event_t *ev)
{
	unsigned line, col;

	if (t->ndocs++ == 0)
		return;
	yamltree_mark(&ev->start_mark, &line, &col);
	yamltree_error(ctx, line, col, "a second YAML document: %s is one document",
	    ctx->doc->subject);
	t->done = true;
}

static void
yamltree_event(struct yamltree_ctx *ctx, struct yamltree_build *t, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		yamltree_document(ctx, t, ev);
		break;
	case YAML_ALIAS_EVENT:
		yamltree_alias(ctx, t, ev);
		break;
	case YAML_SCALAR_EVENT:
		yamltree_scalar(ctx, t, ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
		yamltree_open(ctx, t, ev, YAMLTREE_SEQUENCE, ev->data.sequence_start.anchor,
		    ev->data.sequence_start.tag);
		break;
	case YAML_MAPPING_START_EVENT:
		yamltree_open(ctx, t, ev, YAMLTREE_MAPPING, ev->data.mapping_start.anchor,
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
yamltree_yaml_error(struct yamltree_ctx *ctx, const yaml_parser_t *parser)
{
	const char *problem = parser->problem != NULL ? parser->problem : "unknown error";
	unsigned line, col, cline, ccol;

	if (parser->error == YAML_MEMORY_ERROR) {
		yamltree_nomem(ctx);
		return;
	}
	if (parser->error == YAML_READER_ERROR) {
		yamltree_locate(ctx, parser->problem_offset, &line, &col);
		if (strstr(problem, "UTF-8") != NULL || strstr(problem, "Unicode") != NULL)
			yamltree_error(ctx, line, col, "invalid UTF-8 (%s): %s must be UTF-8 text",
			    problem, ctx->doc->subject);
		else
			yamltree_error(ctx, line, col, "%s (character 0x%x)", problem,
			    (unsigned)parser->problem_value);
		return;
	}
	yamltree_mark(&parser->problem_mark, &line, &col);
	yamltree_mark(&parser->context_mark, &cline, &ccol);
	if (parser->context != NULL)
		yamltree_error(ctx, line, col, "YAML syntax error: %s (%s at line %u, column %u)",
		    problem, parser->context, cline, ccol);
	else
		yamltree_error(ctx, line, col, "YAML syntax error: %s", problem);
}

struct yamltree_node *
yamltree_parse(struct yamltree_ctx *ctx)
{
	struct yamltree_build t = { 0 };
	yaml_parser_t parser;
	yaml_event_t ev;

	if (!yaml_parser_initialize(&parser)) {
		yamltree_nomem(ctx);
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)ctx->data, ctx->len);
	/* UTF-8 only: a UTF-16 file would make byte offsets and lines disagree. */
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	while (!t.done && !t.failed) {
		if (!yaml_parser_parse(&parser, &ev)) {
			yamltree_yaml_error(ctx, &parser);
			t.failed = true;
			break;
		}
		yamltree_event(ctx, &t, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	if (t.failed) {
		yamltree_free(t.root);
		return NULL;
	}
	return t.root;
}

/* ---- the tree's shape ---- */

const char *
yamltree_type_name(enum yamltree_type type)
{
	switch (type) {
	case YAMLTREE_NULL:
		return "empty";
	case YAMLTREE_SCALAR:
		return "a single value";
	case YAMLTREE_SEQUENCE:
		return "a list";
	case YAMLTREE_MAPPING:
		return "a mapping";
	default:
		return "an alias";
	}
}

bool
yamltree_expect(struct yamltree_ctx *ctx, const struct yamltree_node *n, enum yamltree_type want,
    const char *key, const char *what)
{
	if (n->type == want)
		return true;
	if (n->type != YAMLTREE_ALIAS)
		yamltree_error_at(ctx, n, "'%s' in %s must be %s, but it is %s", key, what,
		    yamltree_type_name(want), yamltree_type_name(n->type));
	return false;
}

bool
yamltree_expect_item(struct yamltree_ctx *ctx, const struct yamltree_node *n,
    enum yamltree_type want, const char *key)
{
	if (n->type == want)
		return true;
	if (n->type != YAMLTREE_ALIAS)
		yamltree_error_at(ctx, n, "each item of '%s' must be %s, but this one is %s", key,
		    yamltree_type_name(want), yamltree_type_name(n->type));
	return false;
}

bool
yamltree_key_ok(struct yamltree_ctx *ctx, const struct yamltree_node *k, const char *what)
{
	if (k->type == YAMLTREE_SCALAR)
		return true;
	if (k->type != YAMLTREE_ALIAS)
		yamltree_error_at(ctx, k, "a key in %s must be a name, but it is %s", what,
		    yamltree_type_name(k->type));
	return false;
}

/* The keys of FIELDS as "a, b, c", for messages. */
static const char *
yamltree_expected_keys(const struct yamltree_field *fields, size_t nfields, char *buf,
    size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nfields && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s", i > 0 ? ", " : "", fields[i].key);
	return buf;
}

/* The field of FIELDS named by the key K, or NULL after saying why K is
 * not one. */
static const struct yamltree_field *
yamltree_find_field(struct yamltree_ctx *ctx, const struct yamltree_node *k, const char *what,
    const struct yamltree_field *fields, size_t nfields)
{
	char expected[YAMLTREE_EXPECTED_MAX_BYTES];
	struct yamltree_quoted q;

	if (!yamltree_key_ok(ctx, k, what))
		return NULL;
	for (size_t i = 0; i < nfields; i++)
		if (strcmp(fields[i].key, k->text) == 0)
			return &fields[i];
	yamltree_error_at(ctx, k, "unknown key '%s' in %s (expected %s)", yamltree_quote(k->text, &q),
	    what, yamltree_expected_keys(fields, nfields, expected, sizeof(expected)));
	return NULL;
}

/* True when the value V fits the field F (of WHAT), else says why not. */
static bool
yamltree_field_fits(struct yamltree_ctx *ctx, const struct yamltree_node *v,
    const struct yamltree_field *f, const char *what)
{
	if (v->type == YAMLTREE_NULL && f->nullable)
		return true;
	return yamltree_expect(ctx, v, f->type, f->key, what);
}

unsigned
yamltree_walk(struct yamltree_ctx *ctx, const struct yamltree_node *map, const char *what,
    const struct yamltree_field *fields, size_t nfields, void *raw)
{
	const struct yamltree_node *seen[YAMLTREE_FIELDS_MAX] = { 0 };
	unsigned given = 0;

	if (map == NULL || map->type != YAMLTREE_MAPPING || nfields > YAMLTREE_FIELDS_MAX)
		return 0;
	for (size_t i = 0; i + 1 < map->nkids; i += 2) {
		const struct yamltree_node *k = map->kids[i], *v = map->kids[i + 1];
		const struct yamltree_field *f;
		size_t idx;

		if ((f = yamltree_find_field(ctx, k, what, fields, nfields)) == NULL)
			continue;
		idx = (size_t)(f - fields);
		if (seen[idx] != NULL) {
			yamltree_error_at(ctx, k, "duplicate key '%s' in %s (first given at line %u, column %u)",
			    f->key, what, seen[idx]->line, seen[idx]->col);
			continue;
		}
		seen[idx] = k;
		given |= YAMLTREE_FIELD_BIT(idx);
		if (yamltree_field_fits(ctx, v, f, what))
			*(const struct yamltree_node **)((char *)raw + f->offset) = v;
	}
	for (size_t i = 0; i < nfields; i++)
		if (fields[i].missing != NULL && seen[i] == NULL)
			yamltree_error_at(ctx, map, "%s has no '%s' (%s)", what, fields[i].key,
			    fields[i].missing);
	return given;
}

void
yamltree_check_items(struct yamltree_ctx *ctx, const struct yamltree_node *l,
    enum yamltree_type want, const char *key)
{
	if (l == NULL || l->type != YAMLTREE_SEQUENCE)
		return;
	for (size_t i = 0; i < l->nkids; i++)
		yamltree_expect_item(ctx, l->kids[i], want, key);
}

/* ---- numbers and paths ---- */

enum yamltree_num
yamltree_number(const char *text, bool plain, unsigned long min, unsigned long max,
    unsigned long *out)
{
	const char *s = text + (text[0] == '-');
	unsigned long v = 0;
	bool over = false;

	if (s[0] == '\0' || strspn(s, "0123456789") != strlen(s))
		return YAMLTREE_NUM_NOT_INT;
	for (const char *p = s; *p != '\0'; p++) {
		unsigned long digit = (unsigned long)(*p - '0');

		/* digit > max first: max - digit would wrap (max 3, "4"). */
		if (over || digit > max || v > (max - digit) / 10)
			over = true;
		else
			v = v * 10 + digit;
	}
	if (!plain)
		return YAMLTREE_NUM_QUOTED;
	if (s[0] == '0' && s[1] != '\0')
		return YAMLTREE_NUM_LEADING_ZERO;
	if (s != text || over || v < min)
		return YAMLTREE_NUM_RANGE;
	*out = v;
	return YAMLTREE_NUM_OK;
}

void
yamltree_number_report(struct yamltree_ctx *ctx, const struct yamltree_node *n,
    enum yamltree_num err, const char *what, const char *range)
{
	struct yamltree_quoted q;
	const char *text = yamltree_quote(n->text, &q);

	if (err == YAMLTREE_NUM_QUOTED)
		yamltree_error_at(ctx, n, "%s \"%s\" is quoted: write it as a plain number", what, text);
	else if (err == YAMLTREE_NUM_LEADING_ZERO)
		yamltree_error_at(ctx, n, "%s %s has a leading zero: write it without", what, text);
	else if (err == YAMLTREE_NUM_RANGE)
		yamltree_error_at(ctx, n, "%s %s is out of range (%s)", what, text, range);
	else
		yamltree_error_at(ctx, n, "%s '%s' is not a number (%s)", what, text, range);
}

bool
yamltree_has_control(const char *text)
{
	for (const unsigned char *s = (const unsigned char *)text; *s != '\0'; s++)
		if (*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

const char *
yamltree_path_normalize(const char *text, bool absolute, char *out)
{
	size_t i = 0, o = 0;

	if ((text[0] == '/') != absolute)
		return absolute ? "is not absolute" : "is absolute: give it relative to the home";
	if (yamltree_has_control(text))
		return "has a control character";
	while (text[i] != '\0') {
		size_t start, len;

		while (text[i] == '/')
			i++;
		for (start = i; text[i] != '\0' && text[i] != '/'; i++)
			;
		if ((len = i - start) == 0 || (len == 1 && text[start] == '.'))
			continue;
		/* ".." would let a document name a file by a path that is not its own. */
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

/* ---- files ---- */

bool
yamltree_file_refused(struct yamltree_ctx *ctx, const struct stat *st)
{
	uid_t me = geteuid();

	if (!S_ISREG(st->st_mode)) {
		yamltree_error(ctx, 0, 0, "refused: not a regular file%s", ctx->doc->not_regular);
		return true;
	}
	/* Whoever can write the file decides what it says: what a sandbox may
	 * reach, where corrald listens, which files grants copy. */
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		yamltree_error(ctx, 0, 0, "refused: the file is writable by %s (mode %04o); %s may be writable by its owner only: chmod go-w it",
		    (st->st_mode & S_IWOTH) ? "every user" : "its group",
		    (unsigned)(st->st_mode & 07777), ctx->doc->subject);
		return true;
	}
	if (st->st_uid != 0 && st->st_uid != me) {
		yamltree_error(ctx, 0, 0, "refused: the file belongs to uid %u, which is neither root nor the user loading it (uid %u)",
		    (unsigned)st->st_uid, (unsigned)me);
		return true;
	}
	if (st->st_size > 0 && (unsigned long long)st->st_size > ctx->doc->bytes_max) {
		yamltree_error(ctx, 0, 0, "refused: the file is %lld bytes, over the limit of %zu bytes",
		    (long long)st->st_size, ctx->doc->bytes_max);
		return true;
	}
	return false;
}

/* Makes room in *BUF (*CAP bytes, all used) for more, up to one byte over
 * MAX so that an input over it is seen; -1 when it is already over (the
 * error is said) or memory ran out (*BUF left as it is, NOMEM set). */
static int
yamltree_grow(struct yamltree_ctx *ctx, char **buf, size_t *cap, bool *nomem)
{
	size_t max = ctx->doc->bytes_max, bigger = *cap * 2 > max + 1 ? max + 1 : *cap * 2;
	char *p;

	if (*cap > max) {
		yamltree_error(ctx, 0, 0, "refused: the %s is over the limit of %zu bytes",
		    ctx->doc->input, max);
		return -1;
	}
	if ((p = realloc(*buf, bigger)) == NULL) {
		*nomem = true;
		return -1;
	}
	*buf = p;
	*cap = bigger;
	return 0;
}

int
yamltree_read_all(struct yamltree_ctx *ctx, int fd, size_t hint, char **data, size_t *len)
{
	size_t cap = hint + 1 < YAMLTREE_READ_CHUNK_BYTES ? YAMLTREE_READ_CHUNK_BYTES : hint + 1;
	size_t got = 0;
	char *buf;
	bool nomem;
	ssize_t n;

	/* At most one byte over the limit, so that an input over it is seen. */
	if (cap > ctx->doc->bytes_max + 1)
		cap = ctx->doc->bytes_max + 1;
	nomem = (buf = malloc(cap)) == NULL;
	while (!nomem) {
		if (got == cap && yamltree_grow(ctx, &buf, &cap, &nomem) == -1)
			break;
		if ((n = read(fd, buf + got, cap - got)) == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			yamltree_error(ctx, 0, 0, "cannot read the file: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			*data = buf;
			*len = got;
			return 0;
		}
		got += (size_t)n;
	}
	if (nomem)
		yamltree_nomem(ctx);
	free(buf);
	return -1;
}
