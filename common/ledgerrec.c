/* One field of an egress-ledger record; see ledgerrec.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/ledgerrec.h"

#define LEDGERREC_UTF8_MAX_BYTES 4
#define LEDGERREC_REPLACEMENT "\xef\xbf\xbd"    /* U+FFFD */

/* Where a decoded value goes: SIZE bytes with the NUL; CUT once something
 * did not fit (nothing more is written then). */
struct ledgerrec_out {
	char *buf;
	size_t size;
	size_t len;
	bool cut;
};

/* Appends the N bytes at BYTES whole, or nothing (and marks the cut). */
static void
ledgerrec_put(struct ledgerrec_out *o, const char *bytes, size_t n)
{
	if (o == NULL || o->cut)
		return;
	if (o->len + n >= o->size) {
		o->cut = true;
		return;
	}
	memcpy(o->buf + o->len, bytes, n);
	o->len += n;
}

/* Ends O's text; a cut that split a character copied raw drops its start. */
static void
ledgerrec_finish(struct ledgerrec_out *o)
{
	size_t lead = o->len, tail = 0, need;
	unsigned char c;

	while (o->cut && tail < LEDGERREC_UTF8_MAX_BYTES && lead > 0 &&
	    ((unsigned char)o->buf[lead - 1] & 0xc0) == 0x80) {
		lead--;
		tail++;
	}
	if (o->cut && lead > 0 && (c = (unsigned char)o->buf[lead - 1]) >= 0xc0) {
		need = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;      /* continuation bytes */
		if (tail < need)
			o->len = lead - 1;
	}
	o->buf[o->len] = '\0';
}

static void
ledgerrec_put_code_point(struct ledgerrec_out *o, unsigned cp)
{
	char utf8[LEDGERREC_UTF8_MAX_BYTES];
	size_t n;

	if (cp < 0x80) {
		utf8[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		utf8[0] = (char)(0xc0 | cp >> 6);
		utf8[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		utf8[0] = (char)(0xe0 | cp >> 12);
		utf8[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		utf8[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		utf8[0] = (char)(0xf0 | cp >> 18);
		utf8[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		utf8[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		utf8[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	ledgerrec_put(o, utf8, n);
}

static const char *
ledgerrec_skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/* The four hex digits at P as *CP; NULL when they are not. */
static const char *
ledgerrec_hex4(const char *p, const char *end, unsigned *cp)
{
	*cp = 0;
	if (end - p < 4)
		return NULL;
	for (int i = 0; i < 4; i++, p++) {
		unsigned c = (unsigned char)*p, digit;

		if (c >= '0' && c <= '9')
			digit = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			digit = (c | 0x20) - 'a' + 10;
		else
			return NULL;
		*cp = *cp << 4 | digit;
	}
	return p;
}

/* A \u escape whose four digits start at P: a surrogate pair is joined,
 * a lone surrogate and NUL become U+FFFD. The byte after it, or NULL. */
static const char *
ledgerrec_unicode(const char *p, const char *end, struct ledgerrec_out *o)
{
	unsigned cp, low;
	const char *next;

	if ((p = ledgerrec_hex4(p, end, &cp)) == NULL)
		return NULL;
	if (cp >= 0xd800 && cp <= 0xdbff && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
	    (next = ledgerrec_hex4(p + 2, end, &low)) != NULL && low >= 0xdc00 && low <= 0xdfff) {
		ledgerrec_put_code_point(o, 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00));
		return next;
	}
	if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))
		ledgerrec_put(o, LEDGERREC_REPLACEMENT, sizeof(LEDGERREC_REPLACEMENT) - 1);
	else
		ledgerrec_put_code_point(o, cp);
	return p;
}

/* One escape, P just after its backslash; the byte after it, or NULL. */
static const char *
ledgerrec_escape(const char *p, const char *end, struct ledgerrec_out *o)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *at;

	if (p == end)
		return NULL;
	if (*p == 'u')
		return ledgerrec_unicode(p + 1, end, o);
	if (*p == '\0' || (at = strchr(from, *p)) == NULL)
		return NULL;
	ledgerrec_put(o, &to[at - from], 1);
	return p + 1;
}

/* The string whose opening quote is just before P, decoded into O (NULL:
 * only skipped); the byte after its closing quote, or NULL when malformed. */
static const char *
ledgerrec_string(const char *p, const char *end, struct ledgerrec_out *o)
{
	while (p < end) {
		unsigned char c = (unsigned char)*p;

		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;    /* JSON has no raw control bytes in strings */
		if (c == '\\') {
			if ((p = ledgerrec_escape(p + 1, end, o)) == NULL)
				return NULL;
			continue;
		}
		ledgerrec_put(o, (const char *)p, 1);
		p++;
	}
	return NULL;
}

static const char *
ledgerrec_digits(const char *p, const char *end)
{
	const char *start = p;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > start ? p : NULL;
}

/* A JSON number at P: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; the
 * byte after it, or NULL. */
static const char *
ledgerrec_number(const char *p, const char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if ((p = ledgerrec_digits(p, end)) == NULL)
		return NULL;
	if (p < end && *p == '.' && (p = ledgerrec_digits(p + 1, end)) == NULL)
		return NULL;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if ((p = ledgerrec_digits(p, end)) == NULL)
			return NULL;
	}
	return p;
}

/* The literal WORD at P; the byte after it, or NULL. */
static const char *
ledgerrec_literal(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

/* The value at P, into O (NULL: only skipped), its kind in *KIND; the
 * byte after it, or NULL when it is malformed or not flat. */
static const char *
ledgerrec_value(const char *p, const char *end, struct ledgerrec_out *o,
    enum ledgerrec_kind *kind)
{
	const char *after;

	if (p == end)
		return NULL;
	if (*p == '"') {
		*kind = LEDGERREC_STRING;
		return ledgerrec_string(p + 1, end, o);
	}
	if ((after = ledgerrec_literal(p, end, "null")) != NULL) {
		*kind = LEDGERREC_NULL;
		return after;
	}
	if ((after = ledgerrec_literal(p, end, "true")) == NULL)
		after = ledgerrec_literal(p, end, "false");
	if (after == NULL) {
		*kind = LEDGERREC_NUMBER;
		after = ledgerrec_number(p, end);
	} else {
		*kind = LEDGERREC_BOOL;
	}
	if (after != NULL)
		ledgerrec_put(o, p, (size_t)(after - p));
	return after;
}

/* The field of FIELDS (N) the member's key at P (its opening quote)
 * names that is still to find, in *WANTED (NULL: none); the byte after
 * the key, or NULL. */
static const char *
ledgerrec_key(const char *p, const char *end, struct ledgerrec_field *fields, size_t n,
    struct ledgerrec_field **wanted)
{
	char name[LEDGERREC_KEY_MAX_BYTES + 1];
	struct ledgerrec_out o = { name, sizeof(name), 0, false };

	*wanted = NULL;
	if (p == end || *p != '"' || (p = ledgerrec_string(p + 1, end, &o)) == NULL)
		return NULL;
	ledgerrec_finish(&o);
	for (size_t i = 0; i < n && !o.cut; i++)
		if (fields[i].kind == LEDGERREC_ABSENT && strcmp(name, fields[i].key) == 0) {
			*wanted = &fields[i];
			break;
		}
	return p;
}

/* The value at P into F (NULL: only skipped); the byte after it, or NULL. */
static const char *
ledgerrec_member_value(const char *p, const char *end, struct ledgerrec_field *f)
{
	struct ledgerrec_out o = { f != NULL ? f->out : NULL, f != NULL ? f->size : 0, 0, false };
	enum ledgerrec_kind kind = LEDGERREC_MALFORMED;

	p = ledgerrec_value(p, end, f != NULL ? &o : NULL, &kind);
	if (f == NULL || p == NULL)
		return p;
	ledgerrec_finish(&o);
	f->kind = o.cut ? LEDGERREC_TOO_LONG : kind;
	return p;
}

/* Marks the fields not found MALFORMED; false. */
static bool
ledgerrec_malformed(struct ledgerrec_field *fields, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fields[i].kind == LEDGERREC_ABSENT) {
			fields[i].kind = LEDGERREC_MALFORMED;
			fields[i].out[0] = '\0';
		}
	return false;
}

bool
ledgerrec_scan(const char *rec, size_t len, struct ledgerrec_field *fields, size_t n)
{
	const char *end = rec + len, *p = ledgerrec_skip_space(rec, end);
	struct ledgerrec_field *f;
	size_t found = 0;

	for (size_t i = 0; i < n; i++) {
		fields[i].kind = LEDGERREC_ABSENT;
		fields[i].out[0] = '\0';
	}
	if (p == end || *p++ != '{')
		return ledgerrec_malformed(fields, n);
	if ((p = ledgerrec_skip_space(p, end)) < end && *p == '}')
		return true;
	for (;;) {
		if ((p = ledgerrec_key(p, end, fields, n, &f)) == NULL)
			return ledgerrec_malformed(fields, n);
		p = ledgerrec_skip_space(p, end);
		if (p == end || *p++ != ':')
			return ledgerrec_malformed(fields, n);
		p = ledgerrec_member_value(ledgerrec_skip_space(p, end), end, f);
		/* A value counts only once what follows it is a comma or the end. */
		if (p != NULL)
			p = ledgerrec_skip_space(p, end);
		if (p == NULL || p == end || (*p != ',' && *p != '}')) {
			if (f != NULL)
				f->kind = LEDGERREC_ABSENT;
			return ledgerrec_malformed(fields, n);
		}
		found += f != NULL;
		if (*p == '}' || found == n)
			return true;
		p = ledgerrec_skip_space(p + 1, end);
	}
}

enum ledgerrec_kind
ledgerrec_get(const char *rec, size_t len, const char *key, char *out, size_t size)
{
	struct ledgerrec_field f = { key, out, size, LEDGERREC_ABSENT };

	ledgerrec_scan(rec, len, &f, 1);
	return f.kind;
}

bool
ledgerrec_number_int(const char *text, enum ledgerrec_kind kind, int64_t *value)
{
	char *stop;
	long long n;

	if (kind != LEDGERREC_NUMBER || strpbrk(text, ".eE") != NULL)
		return false;
	errno = 0;
	n = strtoll(text, &stop, 10);
	if (errno != 0 || *stop != '\0' || stop == text)
		return false;
	*value = n;
	return true;
}

bool
ledgerrec_int(const char *rec, size_t len, const char *key, int64_t *value)
{
	char text[LEDGERREC_NUMBER_MAX_BYTES];

	return ledgerrec_number_int(text, ledgerrec_get(rec, len, key, text, sizeof(text)), value);
}
