/* Host and binary matching. Names are checked as LDH names and compared as
 * normalized strings; binary globs are matched segment by segment with a
 * greedy algorithm whose work is bounded (no backtracking blow-up). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libpsl.h>

#include "policy/match.h"

/* Pattern prefixes for the two wildcard kinds. */
#define MATCH_ONE_LABEL_PREFIX "*."
#define MATCH_ANY_DEPTH_PREFIX "**."

static const char *const match_errors[] = {
	[MATCH_OK] = "no error",
	[MATCH_ERR_EMPTY] = "the host is empty",
	[MATCH_ERR_TOO_LONG] = "the host is over 253 bytes or has a label over 63",
	[MATCH_ERR_BAD_CHAR] = "the host has a character other than a-z, 0-9, '-', '_' or '.' "
	    "(internationalized names must be given as xn-- A-labels)",
	[MATCH_ERR_EMPTY_LABEL] = "the host has an empty label",
	[MATCH_ERR_BAD_HYPHEN] = "a label of the host starts or ends with '-'",
	[MATCH_ERR_WILDCARD_PLACE] = "'*' may only be a whole leading \"*.\" or \"**.\" label",
	[MATCH_ERR_WILDCARD_TOO_WIDE] = "the wildcard covers a public suffix (like *.com or *.github.io)",
	[MATCH_ERR_IP_LITERAL] = "the host is an IP address, not a name",
	[MATCH_ERR_BAD_BINARY] = "the binary must be an absolute path or glob without '.', '..' "
	    "or empty segments, with '**' only as a whole segment",
	[MATCH_ERR_NOMEM] = "out of memory",
};

const char *
match_strerror(enum match_err err)
{
	if ((size_t)err >= sizeof(match_errors) / sizeof(match_errors[0]) ||
	    match_errors[err] == NULL)
		return "unknown match error";
	return match_errors[err];
}

static bool
match_is_ldh_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static char
match_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Checks one lower-cased label of LEN bytes at L. */
static enum match_err
match_label_check(const char *l, size_t len)
{
	size_t i;

	if (len == 0)
		return MATCH_ERR_EMPTY_LABEL;
	if (len > MATCH_LABEL_MAX_BYTES)
		return MATCH_ERR_TOO_LONG;
	for (i = 0; i < len; i++)
		if (!match_is_ldh_char(l[i]))
			return MATCH_ERR_BAD_CHAR;
	if (l[0] == '-' || l[len - 1] == '-')
		return MATCH_ERR_BAD_HYPHEN;
	return MATCH_OK;
}

/* True when the label L of LEN bytes reads as a number to inet_aton():
 * decimal or octal digits, or 0x and hex digits. */
static bool
match_label_numeric(const char *l, size_t len)
{
	size_t i = 0;
	bool hex = len >= 2 && l[0] == '0' && l[1] == 'x';

	if (hex)
		i = 2;
	for (; i < len; i++) {
		char c = l[i];
		bool digit = c >= '0' && c <= '9';

		if (!digit && !(hex && c >= 'a' && c <= 'f'))
			return false;
	}
	return true;
}

/* Lower-cases the LEN bytes at IN into OUT (NUL-terminated) and checks
 * every label. */
static enum match_err
match_labels_check(const char *in, size_t len, char *out)
{
	size_t i, start = 0;
	enum match_err e;

	for (i = 0; i < len; i++)
		out[i] = match_lower(in[i]);
	out[len] = '\0';
	for (i = 0; i < len; i++) {
		if (out[i] != '.')
			continue;
		if ((e = match_label_check(out + start, i - start)) != MATCH_OK)
			return e;
		start = i + 1;
	}
	if ((e = match_label_check(out + start, len - start)) != MATCH_OK)
		return e;
	/* Why: resolvers read "127.1", "2130706433", "0x7f.0.0.1" and
	 * "0177.0.0.1" as addresses. No top-level domain is numeric, so a
	 * numeric last label is always an address in disguise. */
	if (match_label_numeric(out + start, len - start))
		return MATCH_ERR_IP_LITERAL;
	return MATCH_OK;
}

enum match_err
match_host_normalize(const char *in, char *out)
{
	size_t len;
	enum match_err e;

	out[0] = '\0';
	if (in == NULL)
		return MATCH_ERR_EMPTY;
	len = strnlen(in, POLICY_HOST_MAX_BYTES + 2);
	if (len > 0 && in[len - 1] == '.')
		len--;
	if (len == 0)
		return MATCH_ERR_EMPTY;
	if (len > POLICY_HOST_MAX_BYTES)
		return MATCH_ERR_TOO_LONG;
	/* Why: ':' and brackets only appear in IPv6 literals and host:port
	 * forms; say "address" rather than "bad character". */
	if (memchr(in, ':', len) != NULL || memchr(in, '[', len) != NULL ||
	    memchr(in, ']', len) != NULL)
		return MATCH_ERR_IP_LITERAL;
	e = match_labels_check(in, len, out);
	if (e != MATCH_OK)
		out[0] = '\0';
	return e;
}

/* True when SUFFIX is a public suffix: ICANN ("com", "co.uk") or private
 * ("github.io", "s3.amazonaws.com"), and names the PSL's '*' rule covers
 * (any unlisted top-level domain). */
static bool
match_public_suffix(const char *suffix)
{
	const psl_ctx_t *builtin = psl_builtin();
	psl_ctx_t *loaded = NULL;
	bool is_public;

	if (builtin == NULL)
		builtin = loaded = psl_latest(NULL);
	/* Why: without suffix data nothing can be shown to be narrow, so
	 * every wildcard is refused (fail closed). */
	if (builtin == NULL)
		return true;
	is_public = psl_is_public_suffix2(builtin, suffix, PSL_TYPE_ANY) != 0;
	psl_free(loaded);
	return is_public;
}

/* Splits TEXT into a kind and the text after the wildcard label. */
static enum match_err
match_host_kind(const char *text, enum policy_host_kind *kind, const char **rest)
{
	*kind = POLICY_HOST_EXACT;
	*rest = text;
	if (strcmp(text, "*") == 0 || strcmp(text, "**") == 0)
		return MATCH_ERR_WILDCARD_TOO_WIDE;
	if (strncmp(text, MATCH_ANY_DEPTH_PREFIX, strlen(MATCH_ANY_DEPTH_PREFIX)) == 0) {
		*kind = POLICY_HOST_ANY_DEPTH;
		*rest = text + strlen(MATCH_ANY_DEPTH_PREFIX);
	} else if (strncmp(text, MATCH_ONE_LABEL_PREFIX, strlen(MATCH_ONE_LABEL_PREFIX)) == 0) {
		*kind = POLICY_HOST_ONE_LABEL;
		*rest = text + strlen(MATCH_ONE_LABEL_PREFIX);
	}
	if (strchr(*rest, '*') != NULL)
		return MATCH_ERR_WILDCARD_PLACE;
	if (*kind != POLICY_HOST_EXACT && (**rest == '\0' || strcmp(*rest, ".") == 0))
		return MATCH_ERR_WILDCARD_TOO_WIDE;
	return MATCH_OK;
}

enum match_err
match_host_parse(const char *text, struct policy_host *out)
{
	char name[POLICY_HOST_MAX_BYTES + 1];
	const char *rest;
	enum match_err e;

	out->kind = POLICY_HOST_EXACT;
	out->name = NULL;
	if (text == NULL || *text == '\0')
		return MATCH_ERR_EMPTY;
	if ((e = match_host_kind(text, &out->kind, &rest)) != MATCH_OK)
		return e;
	if ((e = match_host_normalize(rest, name)) != MATCH_OK)
		return e;
	/* Why: "*.com", "*.co.uk" and "**.github.io" (a private-section
	 * public suffix: every user's site lives under it) would let an
	 * agent reach hosts that anyone can register. */
	if (out->kind != POLICY_HOST_EXACT && match_public_suffix(name))
		return MATCH_ERR_WILDCARD_TOO_WIDE;
	if ((out->name = strdup(name)) == NULL)
		return MATCH_ERR_NOMEM;
	return MATCH_OK;
}

bool
match_host(const struct policy_host *pattern, const char *name)
{
	const char *dot;
	size_t nlen, slen;

	if (pattern == NULL || pattern->name == NULL || name == NULL)
		return false;
	switch (pattern->kind) {
	case POLICY_HOST_EXACT:
		return strcmp(pattern->name, name) == 0;
	case POLICY_HOST_ONE_LABEL:
		dot = strchr(name, '.');
		return dot != NULL && dot != name && strcmp(dot + 1, pattern->name) == 0;
	case POLICY_HOST_ANY_DEPTH:
		nlen = strlen(name);
		slen = strlen(pattern->name);
		/* At least one non-empty label before the suffix: never the apex. */
		return nlen >= slen + 2 && name[nlen - slen - 1] == '.' &&
		    memcmp(name + nlen - slen, pattern->name, slen) == 0;
	}
	return false;
}

/* One '/'-separated segment of a binary glob or path. */
struct match_span {
	uint16_t off;                   /* its first byte, after the '/' */
	uint16_t len;
	uint16_t literal;               /* its bytes other than '*' */
	uint16_t first, last;           /* offsets of its first and last '*' within it */
	bool star;                      /* it holds a '*' */
	bool any_depth;                 /* it is exactly "**" */
};

/* A canonical path's most segments: "/a" repeated. */
#define MATCH_PATH_MAX_SEGMENTS (MATCH_BINARY_MAX_BYTES / 2)

/* Fills SP with the segment of LEN bytes at OFF in S; false when it is
 * empty, "." or "..". */
static bool
match_span_set(struct match_span *sp, const char *s, size_t off, size_t len)
{
	size_t i, stars = 0, first = 0, last = 0;

	if (len == 0 || (len == 1 && s[off] == '.') ||
	    (len == 2 && s[off] == '.' && s[off + 1] == '.'))
		return false;
	for (i = 0; i < len; i++) {
		if (s[off + i] != '*')
			continue;
		if (stars++ == 0)
			first = i;
		last = i;
	}
	*sp = (struct match_span){ (uint16_t)off, (uint16_t)len, (uint16_t)(len - stars),
	    (uint16_t)first, (uint16_t)last, stars > 0, len == 2 && stars == 2 };
	return true;
}

/* Splits the absolute S into at most MAX segments, into OUT and *N. False
 * when S is relative, not under MATCH_BINARY_MAX_BYTES, has more segments,
 * or has an empty, "." or ".." one. "/" has no segment. */
static bool
match_split(const char *s, struct match_span *out, size_t max, size_t *n)
{
	size_t len, i, start = 1;

	*n = 0;
	if (s == NULL || s[0] != '/' || (len = strnlen(s, MATCH_BINARY_MAX_BYTES)) >= MATCH_BINARY_MAX_BYTES)
		return false;
	if (len == 1)
		return true;
	for (i = 1; i <= len; i++) {
		if (i < len && s[i] != '/')
			continue;
		if (*n == max || !match_span_set(&out[*n], s, start, i - start))
			return false;
		(*n)++;
		start = i + 1;
	}
	return true;
}

enum match_err
match_binary_check(const char *glob)
{
	struct match_span segs[MATCH_BINARY_MAX_SEGMENTS];
	size_t n, i;

	if (!match_split(glob, segs, MATCH_BINARY_MAX_SEGMENTS, &n) || n == 0)
		return MATCH_ERR_BAD_BINARY;
	/* "**" inside a segment (like "bin**") reads as across segments but
	 * could only mean '*': refuse it rather than guess. */
	for (i = 0; i < n; i++)
		if (segs[i].star && !segs[i].any_depth &&
		    memmem(glob + segs[i].off, segs[i].len, "**", 2) != NULL)
			return MATCH_ERR_BAD_BINARY;
	return MATCH_OK;
}

/* Finds the '*'-separated chunks between the stars FIRST and LAST of a
 * glob segment in the LEN bytes at P, in order. Taking each chunk's
 * leftmost occurrence is optimal, so no backtracking is needed and the
 * work is linear (memmem is two-way in glibc). */
static bool
match_seg_chunks(const char *first, const char *last, const char *p, size_t len)
{
	const char *g = first, *next, *hit;
	size_t clen;

	while (g < last) {
		next = memchr(g + 1, '*', (size_t)(last - g));
		clen = (size_t)(next - g - 1);
		if (clen > 0) {
			hit = clen == 1 ? memchr(p, g[1], len) : memmem(p, len, g + 1, clen);
			if (hit == NULL)
				return false;
			len -= (size_t)(hit - p) + clen;
			p = hit + clen;
		}
		g = next;
	}
	return true;
}

/* True when glob segment GS of GLOB ('*' within it) matches path segment
 * PS of PATH. */
static bool
match_seg(const char *glob, const struct match_span *gs, const char *path,
    const struct match_span *ps)
{
	const char *g = glob + gs->off, *p = path + ps->off;
	size_t head = gs->first, tail = (size_t)(gs->len - gs->last - 1);

	if (!gs->star)
		return gs->len == ps->len && memcmp(g, p, ps->len) == 0;
	if (gs->literal > ps->len)
		return false;
	if ((head > 0 && memcmp(g, p, head) != 0) ||
	    (tail > 0 && memcmp(g + gs->last + 1, p + ps->len - tail, tail) != 0))
		return false;
	return gs->first == gs->last ||
	    match_seg_chunks(g + gs->first, g + gs->last, p + head, ps->len - head - tail);
}

/* Matches the NP path segments PS against the NG glob segments GS, "**"
 * taking zero or more whole segments. The greedy walk keeps only the
 * latest "**" to fall back to (every other glob segment takes exactly one
 * path segment, so that is enough), so it compares at most NG x NP
 * segment pairs. */
static bool
match_walk(const char *glob, const struct match_span *gs, size_t ng,
    const char *path, const struct match_span *ps, size_t np)
{
	size_t g = 0, p = 0, star_g = 0, star_p = 0;
	bool fallback = false;

	while (p < np) {
		if (g < ng && gs[g].any_depth) {
			star_g = ++g;
			star_p = p;
			fallback = true;
		} else if (g < ng && match_seg(glob, &gs[g], path, &ps[p])) {
			g++;
			p++;
		} else if (fallback) {
			g = star_g;
			p = ++star_p;
		} else {
			return false;
		}
	}
	while (g < ng && gs[g].any_depth)
		g++;
	return g == ng;
}

/* A quick necessary condition: the glob's literal text before its first
 * '*' starts PATH and the text after its last '*' ends it; with no '*',
 * the two must be equal. Most mismatches stop here within a few bytes. */
static bool
match_literal_ends(const char *glob, const char *path)
{
	size_t i, plen, tail;
	const char *last;

	for (i = 0; glob[i] != '*'; i++) {
		if (glob[i] != path[i])
			return false;
		if (glob[i] == '\0')
			return true;
	}
	last = strrchr(glob + i, '*');
	tail = strlen(last + 1);
	plen = i + strlen(path + i);
	return plen >= tail && memcmp(path + plen - tail, last + 1, tail) == 0;
}

bool
match_binary(const char *glob, const char *path)
{
	struct match_span gs[MATCH_BINARY_MAX_SEGMENTS], ps[MATCH_PATH_MAX_SEGMENTS];
	size_t ng, np;

	if (glob == NULL || path == NULL || glob[0] != '/' || !match_literal_ends(glob, path))
		return false;
	/* Why: a glob like "usr/bin/<star>" must not match /usr/bin/../../tmp/x;
	 * the kernel gives canonical paths, so anything else is refused. A
	 * glob over the limits or with such a segment matches nothing. */
	if (!match_split(glob, gs, MATCH_BINARY_MAX_SEGMENTS, &ng) ||
	    !match_split(path, ps, MATCH_PATH_MAX_SEGMENTS, &np))
		return false;
	return match_walk(glob, gs, ng, path, ps, np);
}
