/* The YAML machinery that corral's loaders share (policy/load.c for
 * policies, broker/config.c for corrald's configuration): one document
 * read by libyaml into a small tree of nodes that keep their positions,
 * mappings walked with a table of the keys they may hold, strict numbers
 * and paths, the checks on a file before it is read, and every error
 * appended to a policy_diags list with file:line:col and its source line.
 * Nothing here prints, logs or exits.
 *
 * Refused while the tree is built, so no caller ever sees them: anchors
 * and aliases (an alias is never expanded: an alias bomb costs nothing),
 * tags, a second document, nesting deeper than the document's depth_max,
 * more than its nodes_max nodes, invalid UTF-8 and NUL characters. */
#ifndef CORRAL_POLICY_YAMLTREE_H
#define CORRAL_POLICY_YAMLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "policy/diag.h"

#define YAMLTREE_DEPTH_MAX 32           /* nested lists and mappings any document may allow */
#define YAMLTREE_FIELDS_MAX 24          /* keys in one mapping's table */
#define YAMLTREE_QUOTE_MAX_BYTES 64     /* of a user's text shown in a message */

enum yamltree_type {
	YAMLTREE_NULL = 0,              /* a plain "", "~" or "null": no value */
	YAMLTREE_SCALAR,
	YAMLTREE_SEQUENCE,
	YAMLTREE_MAPPING,
	YAMLTREE_ALIAS,                 /* an alias, reported when read; stands for nothing */
};

struct yamltree_node {
	enum yamltree_type type;
	unsigned line, col;             /* 1-based */
	bool plain;                     /* a plain scalar: may be read as a number or boolean */
	char *text;                     /* a scalar's value, NUL-terminated */
	size_t len;                     /* of TEXT, up to its first NUL */
	struct yamltree_node **kids;    /* a list's items; a mapping's keys and values, alternating */
	size_t nkids, cap;
};

/* What a loader reads: its limits, and the words its messages use. */
struct yamltree_doc {
	const char *subject;            /* "a policy": "%s must be UTF-8 text" */
	const char *within;             /* "one policy": "more than N values in %s" */
	const char *not_regular;        /* said after "refused: not a regular file" ("" for nothing) */
	const char *input;              /* "input": "the %s is over the limit" while reading */
	unsigned depth_max;             /* at most YAMLTREE_DEPTH_MAX */
	size_t nodes_max;
	size_t bytes_max;               /* of the input */
};

/* One load. The caller sets DOC, NAME, DIAGS and, once read, DATA and LEN;
 * the other fields start zeroed and belong to this module. */
struct yamltree_ctx {
	const struct yamltree_doc *doc;
	const char *name;               /* the input, as diagnostics call it */
	const char *data;               /* the input; NULL before it is read */
	size_t len;
	struct policy_diags *diags;     /* NULL: errors are only counted */
	size_t nerrors;                 /* errors so far: the load fails unless 0 */
	size_t nnodes;
	bool nomem;
	unsigned seen_line;             /* a line whose start is known, to search on from */
	size_t seen_offset;             /* its first byte */
};

/* One key a mapping may hold: its node type, where its node goes in the
 * caller's raw structure, whether an empty value ("key:" alone) is
 * accepted too, and, for a required key, what to say when it is missing
 * (NULL: optional). */
struct yamltree_field {
	const char *key;
	enum yamltree_type type;
	size_t offset;
	bool nullable;
	const char *missing;
};

#define YAMLTREE_NFIELDS(t) (sizeof(t) / sizeof((t)[0]))
#define YAMLTREE_FIELD_BIT(i) (1u << (i))

/* The outcome of yamltree_number(). */
enum yamltree_num {
	YAMLTREE_NUM_OK = 0,
	YAMLTREE_NUM_NOT_INT,           /* not digits */
	YAMLTREE_NUM_QUOTED,            /* digits, but quoted: a string */
	YAMLTREE_NUM_LEADING_ZERO,      /* "0443": YAML 1.1 reads it as octal */
	YAMLTREE_NUM_RANGE,             /* negative, or outside MIN-MAX */
};

/* A user's text made safe and short for a message. */
struct yamltree_quoted {
	char text[YAMLTREE_QUOTE_MAX_BYTES * 4 + 4];
};

/* Counts an error at LINE:COL (0:0: the whole input) and, when CTX keeps
 * diagnostics, appends it with its source line. */
void yamltree_error(struct yamltree_ctx *ctx, unsigned line, unsigned col,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The same at the node N. */
void yamltree_error_at(struct yamltree_ctx *ctx, const struct yamltree_node *n,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Reports running out of memory (once; later calls only count). */
void yamltree_nomem(struct yamltree_ctx *ctx);
/* N zeroed elements of SIZE bytes; NULL for none, or when out of memory (reported). */
void *yamltree_calloc(struct yamltree_ctx *ctx, size_t n, size_t size);
/* S with control characters, quotes and backslashes as \xNN, cut after
 * YAMLTREE_QUOTE_MAX_BYTES bytes with "...": Q's text, for messages. */
const char *yamltree_quote(const char *s, struct yamltree_quoted *q);

/* Parses CTX's input into a tree (yamltree_free() it); NULL when there is
 * none (an empty input) or it is unusable (the errors said why). */
struct yamltree_node *yamltree_parse(struct yamltree_ctx *ctx);
/* Frees N and everything under it; NULL is fine. */
void yamltree_free(struct yamltree_node *n);

/* "empty", "a single value", "a list", "a mapping" or "an alias". */
const char *yamltree_type_name(enum yamltree_type type);
/* True when N is of type WANT; else says that KEY in WHAT is not (an
 * alias was reported when read, and is not reported again). */
bool yamltree_expect(struct yamltree_ctx *ctx, const struct yamltree_node *n,
    enum yamltree_type want, const char *key, const char *what);
/* The same for N, an item of the list KEY. */
bool yamltree_expect_item(struct yamltree_ctx *ctx, const struct yamltree_node *n,
    enum yamltree_type want, const char *key);
/* True when the mapping key K (in WHAT) is a name, else says why not. */
bool yamltree_key_ok(struct yamltree_ctx *ctx, const struct yamltree_node *k, const char *what);
/* Walks MAP (WHAT in messages; nothing when it is no mapping) with FIELDS
 * (at most YAMLTREE_FIELDS_MAX): each known key's value is stored in RAW
 * at its field's offset when it has the field's type; unknown keys (the
 * message lists the known ones), duplicates, wrong types and missing
 * required keys are errors. Returns YAMLTREE_FIELD_BIT(i) for each field
 * i given. */
unsigned yamltree_walk(struct yamltree_ctx *ctx, const struct yamltree_node *map,
    const char *what, const struct yamltree_field *fields, size_t nfields, void *raw);
/* Checks that every item of L, the list KEY (nothing when L is NULL or no
 * list), is of type WANT. */
void yamltree_check_items(struct yamltree_ctx *ctx, const struct yamltree_node *l,
    enum yamltree_type want, const char *key);

/* Reads TEXT as a decimal integer in MIN-MAX into *OUT, strictly: digits
 * only, no sign, no leading zero; PLAIN false (a quoted scalar) is refused. */
enum yamltree_num yamltree_number(const char *text, bool plain, unsigned long min,
    unsigned long max, unsigned long *out);
/* Says why the scalar N, the WHAT of the document, is not the number that
 * RANGE ("1-65535") describes. */
void yamltree_number_report(struct yamltree_ctx *ctx, const struct yamltree_node *n,
    enum yamltree_num err, const char *what, const char *range);
/* True when TEXT has a control character (tab included). */
bool yamltree_has_control(const char *text);
/* Normalizes the path TEXT into OUT (room for its length + 2): "//"
 * collapsed, "." segments and a trailing '/' dropped. ABSOLUTE says which
 * kind it must be. NULL when it is fine, else why not ("is not absolute"). */
const char *yamltree_path_normalize(const char *text, bool absolute, char *out);

/* Refuses, with an error, a file (of fstat() ST) that is not a regular
 * file, that its group or others can write, that a user other than root
 * and the one loading it owns, or that is over the document's bytes_max;
 * true when refused. */
bool yamltree_file_refused(struct yamltree_ctx *ctx, const struct stat *st);
/* Reads FD to its end into *DATA (free() it; *LEN bytes), starting with
 * room for HINT bytes, never more than the document's bytes_max: a file
 * may have grown since fstat(), and a pipe has no size to check first.
 * -1 with an error, else 0. */
int yamltree_read_all(struct yamltree_ctx *ctx, int fd, size_t hint, char **data, size_t *len);

#endif
