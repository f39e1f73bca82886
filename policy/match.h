/* Host and binary matching: parsing host patterns, normalizing names,
 * matching a name against a pattern and a path against a binary glob. */
#ifndef CORRAL_POLICY_MATCH_H
#define CORRAL_POLICY_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

#define MATCH_LABEL_MAX_BYTES 63         /* one DNS label */
#define MATCH_BINARY_MAX_BYTES 4096      /* a binary glob or path, with its NUL (PATH_MAX) */
#define MATCH_BINARY_MAX_SEGMENTS 64     /* '/'-separated parts of a binary glob */
/* The glob that matches every binary: a rule listing it needs no
 * identification. */
#define MATCH_ANY_BINARY_GLOB "/**"

enum match_err {
	MATCH_OK = 0,
	MATCH_ERR_EMPTY,                /* the host is empty */
	MATCH_ERR_TOO_LONG,             /* over 253 bytes, or a label over 63 */
	MATCH_ERR_BAD_CHAR,             /* not a letter, digit, '-' or '.' (or '_' inside a label) */
	MATCH_ERR_EMPTY_LABEL,          /* "a..b", a leading dot */
	MATCH_ERR_BAD_HYPHEN,           /* a label starting or ending with '-' */
	MATCH_ERR_WILDCARD_PLACE,       /* '*' anywhere but a whole leading "*." or "**." label */
	MATCH_ERR_WILDCARD_TOO_WIDE,    /* bare "*", "*.com", "**.co.uk": a public suffix */
	MATCH_ERR_IP_LITERAL,           /* an address where a name belongs */
	MATCH_ERR_BAD_BINARY,           /* a binary glob that is not absolute, or has "..", or is empty */
	MATCH_ERR_NOMEM,
};

/* A one-line description of ERR, for messages. */
const char *match_strerror(enum match_err err);

/* Normalizes the name IN (a host a client asked for): lower case, one
 * trailing dot dropped, checked as an LDH name. Writes it to OUT
 * (POLICY_HOST_MAX_BYTES + 1 bytes). Only A-labels pass: a caller holding
 * a U-label ("bücher.de") must convert it to "xn--bcher-kva.de" first.
 * Addresses in any spelling (127.1, 0x7f.0.0.1, 2130706433, [::1]) are
 * MATCH_ERR_IP_LITERAL. On error OUT holds an empty string. */
enum match_err match_host_normalize(const char *in, char *out);

/* Parses a policy host pattern ("github.com", "*.example.com",
 * "**.example.com") into OUT, whose name the caller frees. A wildcard
 * whose suffix is a public suffix (ICANN or private section of the PSL,
 * so "*.com" and "**.github.io" alike) is MATCH_ERR_WILDCARD_TOO_WIDE.
 * On error OUT->name is NULL. */
enum match_err match_host_parse(const char *text, struct policy_host *out);

/* True when the normalized NAME matches PATTERN. */
bool match_host(const struct policy_host *pattern, const char *name);

/* Checks a binary glob from a policy: absolute, no "." or ".." or empty
 * segment, "**" only as a whole segment, under MATCH_BINARY_MAX_BYTES and
 * MATCH_BINARY_MAX_SEGMENTS. '?' and '[' are literal characters. */
enum match_err match_binary_check(const char *glob);

/* True when the absolute PATH matches GLOB ('*' within a segment, '**'
 * across segments: zero or more whole segments, MATCH_ANY_BINARY_GLOB
 * everything). A path
 * that is not canonical (relative, "." or ".." or empty segment) matches
 * nothing. Time is linear in the path for each glob segment, never
 * exponential. */
bool match_binary(const char *glob, const char *path);

#endif
