/* Diagnostics: a capped list of file:line:col errors and its formatter. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/utf8.h"
#include "policy/diag.h"

/* The most text one entry can format to: file name, message, two lines. */
#define DIAG_FORMAT_ENTRY_MAX_BYTES (4096 + POLICY_DIAG_MESSAGE_MAX_BYTES + \
	4 * POLICY_DIAG_SOURCE_MAX_BYTES + 64)
#define DIAG_FILE_MAX_BYTES 4096        /* a file name kept in an entry, NUL included */

void
policy_diags_init(struct policy_diags *d)
{
	memset(d, 0, sizeof(*d));
}

void
policy_diags_clear(struct policy_diags *d)
{
	for (size_t i = 0; i < d->count; i++) {
		free(d->items[i].file);
		free(d->items[i].message);
		free(d->items[i].source);
	}
	free(d->items);
	policy_diags_init(d);
}

/* The length of the valid UTF-8 character at S (N bytes left), or 0. */
static size_t
diag_utf8_len(const unsigned char *s, size_t n)
{
	return s[0] < 0x80 ? 1 : utf8_sequence(s, n);
}

/* True for a character a terminal would act on rather than show: the
 * controls (tab aside), the line separators among them. */
static bool
diag_is_control(const unsigned char *s, size_t len)
{
	return !(len == 1 && s[0] == '\t') && utf8_is_control(s, len);
}

/* A printable copy of the LEN bytes at S, at most MAX - 1 bytes long: what
 * comes from a file is shown to a person, so no escape sequence or broken
 * UTF-8 may reach their terminal. NULL if out of memory. */
static char *
diag_printable(const char *s, size_t len, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	char *out;
	size_t i = 0, o = 0;

	if (len > max - 1)
		len = max - 1;
	if ((out = malloc(len + 1)) == NULL)
		return NULL;
	while (i < len) {
		size_t n = diag_utf8_len(u + i, len - i);

		if (n == 0 || diag_is_control(u + i, n)) {
			out[o++] = '?';
			i += n == 0 ? 1 : n;
			continue;
		}
		memcpy(out + o, u + i, n);
		o += n;
		i += n;
	}
	out[o] = '\0';
	return out;
}

/* Fills E; -1 (E half-filled, to be freed by the caller) if out of memory. */
static int
diag_fill(struct policy_diag *e, const char *file, unsigned line, unsigned col,
    const char *source, size_t source_len, const char *message)
{
	e->line = line;
	e->col = col;
	e->file = diag_printable(file, strlen(file), DIAG_FILE_MAX_BYTES);
	e->message = diag_printable(message, strlen(message), POLICY_DIAG_MESSAGE_MAX_BYTES);
	if (source != NULL)
		e->source = diag_printable(source, source_len, POLICY_DIAG_SOURCE_MAX_BYTES);
	if (e->file == NULL || e->message == NULL || (source != NULL && e->source == NULL))
		return -1;
	return 0;
}

/* Appends one entry holding MESSAGE. */
static int
diag_append(struct policy_diags *d, const char *file, unsigned line, unsigned col,
    const char *source, size_t source_len, const char *message)
{
	struct policy_diag *items, *e;

	items = realloc(d->items, (d->count + 1) * sizeof(*items));
	if (items == NULL)
		goto fail;
	d->items = items;
	e = &items[d->count];
	memset(e, 0, sizeof(*e));
	if (diag_fill(e, file, line, col, source, source_len, message) == -1) {
		free(e->file);
		free(e->message);
		free(e->source);
		goto fail;
	}
	d->count++;
	return 0;
fail:
	d->nomem = true;
	return -1;
}

int
policy_diags_add(struct policy_diags *d, const char *file, unsigned line,
    unsigned col, const char *source, size_t source_len, const char *fmt, ...)
{
	char message[POLICY_DIAG_MESSAGE_MAX_BYTES];
	va_list ap;

	if (d->truncated)
		return 0;
	if (d->count >= POLICY_DIAGS_MAX) {
		d->truncated = true;
		snprintf(message, sizeof(message),
		    "too many errors; stopping after %d", POLICY_DIAGS_MAX);
		return diag_append(d, file, 0, 0, NULL, 0, message);
	}
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	return diag_append(d, file, line, col, source, source_len, message);
}

/* True when A belongs after B: by line, then column. */
static bool
diag_after(const struct policy_diag *a, const struct policy_diag *b)
{
	return a->line > b->line || (a->line == b->line && a->col > b->col);
}

void
policy_diags_sort(struct policy_diags *d, size_t from)
{
	size_t end = d->truncated ? d->count - 1 : d->count;

	/* Insertion sort: stable, and the list is capped at a hundred entries. */
	for (size_t i = from + 1; i < end; i++) {
		struct policy_diag e = d->items[i];
		size_t j = i;

		for (; j > from && diag_after(&d->items[j - 1], &e); j--)
			d->items[j] = d->items[j - 1];
		d->items[j] = e;
	}
}

/* Appends the caret line for COL under SOURCE: a tab where the source has
 * one, so the caret lines up, else a space per character. */
static int
diag_format_caret(struct buf *b, const char *source, unsigned col)
{
	const char *s = source;
	unsigned chars = 0;

	if (buf_append_str(b, "  ") == -1)
		return -1;
	while (col > 1 && chars < col - 1 && chars <= POLICY_DIAG_SOURCE_MAX_BYTES) {
		char c = *s == '\t' ? '\t' : ' ';

		if (buf_append(b, &c, 1) == -1)
			return -1;
		chars++;
		if (*s == '\0')
			continue;
		s++;
		while (((unsigned char)*s & 0xc0) == 0x80)
			s++;
	}
	return buf_append_str(b, "^\n");
}

/* Appends entry E in STYLE. */
static int
diag_format_one(struct buf *b, const struct policy_diag *e, enum policy_diag_style style)
{
	int rc;

	if (e->line == 0)
		rc = buf_printf(b, "%s: %s\n", e->file, e->message);
	else
		rc = buf_printf(b, "%s:%u:%u: %s\n", e->file, e->line, e->col, e->message);
	if (rc == -1 || style != POLICY_DIAG_VERBOSE || e->source == NULL)
		return rc;
	if (buf_printf(b, "  %s\n", e->source) == -1)
		return -1;
	return diag_format_caret(b, e->source, e->col);
}

char *
policy_diags_format(const struct policy_diags *d, enum policy_diag_style style)
{
	struct buf *b;
	char *text = NULL;

	b = buf_new((d->count + 2) * DIAG_FORMAT_ENTRY_MAX_BYTES);
	if (b == NULL)
		return NULL;
	for (size_t i = 0; i < d->count; i++)
		if (diag_format_one(b, &d->items[i], style) == -1)
			goto out;
	if (d->nomem && buf_append_str(b, "(some errors were lost: out of memory)\n") == -1)
		goto out;
	text = buf_steal(b, NULL);
out:
	buf_free(b);
	return text;
}
