/* Host and binary matching: parsing host patterns, normalizing names,
 * matching a name against a pattern and a path against a binary glob. */
#ifndef CORRAL_POLICY_MATCH_H
#define CORRAL_POLICY_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

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
 * (POLICY_HOST_MAX_BYTES + 1 bytes). */
enum match_err match_host_normalize(const char *in, char *out);

/* Parses a policy host pattern ("github.com", "*.example.com",
 * "**.example.com") into OUT, whose name the caller frees. */
enum match_err match_host_parse(const char *text, struct policy_host *out);

/* True when the normalized NAME matches PATTERN. */
bool match_host(const struct policy_host *pattern, const char *name);

/* Checks a binary glob from a policy: absolute, no "." or ".." segment. */
enum match_err match_binary_check(const char *glob);

/* True when the absolute PATH matches GLOB ('*' within a segment, '**'
 * across segments, "/**" everything). */
bool match_binary(const char *glob, const char *path);

#endif
