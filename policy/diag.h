/* Diagnostics: the list of errors found while loading a policy or profile,
 * each with the file, the line and column, the message and the offending
 * source line. policy/ never prints: it fills this list and the caller
 * formats and prints it. The list is capped at POLICY_DIAGS_MAX entries,
 * followed by one final "too many errors" entry. */
#ifndef CORRAL_POLICY_DIAG_H
#define CORRAL_POLICY_DIAG_H

#include <stdbool.h>
#include <stddef.h>

#define POLICY_DIAGS_MAX 100                    /* entries kept, the final "too many" one aside */
#define POLICY_DIAG_MESSAGE_MAX_BYTES 512       /* one message, NUL included */
#define POLICY_DIAG_SOURCE_MAX_BYTES 240        /* the source line kept for display */

/* One error. LINE and COL are 1-based (COL counts characters); both are 0
 * for an error about the whole file (unreadable, too big, writable by
 * others). SOURCE is the offending line, made printable (control bytes and
 * invalid UTF-8 shown as '?'), or NULL when there is none. */
struct policy_diag {
	char *file;
	unsigned line;
	unsigned col;
	char *message;
	char *source;
};

/* An embedded list: policy_diags_init() it, policy_diags_clear() it. */
struct policy_diags {
	struct policy_diag *items;
	size_t count;                   /* entries in ITEMS, the final one included */
	bool truncated;                 /* the cap was hit: the last entry says so */
	bool nomem;                     /* an entry was lost for want of memory */
};

enum policy_diag_style {
	POLICY_DIAG_ONE_LINE = 0,       /* "FILE:LINE:COL: message", one line each: for programs */
	POLICY_DIAG_VERBOSE,            /* the same, then the source line and a caret: for people */
};

/* An empty list. */
void policy_diags_init(struct policy_diags *d);
/* Frees every entry and empties D; D may be used again. */
void policy_diags_clear(struct policy_diags *d);

/* Appends an error at FILE:LINE:COL whose source line is the SOURCE_LEN
 * bytes at SOURCE (NULL: none). Past the cap, the first extra call appends
 * the "too many errors" entry and later ones do nothing. -1 when memory
 * ran out (D->nomem is then set), else 0. */
int policy_diags_add(struct policy_diags *d, const char *file, unsigned line,
    unsigned col, const char *source, size_t source_len, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Orders the entries from index FROM on by line and column, keeping the
 * order of those at the same place and the "too many errors" entry last:
 * a loader that checks in several passes still reports top to bottom. */
void policy_diags_sort(struct policy_diags *d, size_t from);

/* Formats every entry in STYLE as one malloc'd, NUL-terminated text, each
 * line ending in '\n' ("" for an empty list); NULL if out of memory. */
char *policy_diags_format(const struct policy_diags *d, enum policy_diag_style style);

#endif
