/* One field of an egress-ledger record (corral-ledger(5)): the ledger's
 * own lines are flat JSON objects, and this finds one key's value in one
 * of them without a JSON library. Shared by the broker (the logs filter)
 * and the CLI (logs, report). Bounded: one pass over the record at most,
 * no allocation, no recursion; what is not a flat JSON object (nested
 * values, raw control bytes, bad escapes) is malformed. Pure. */
#ifndef CORRAL_LEDGERREC_H
#define CORRAL_LEDGERREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A key longer than this (decoded) never matches; the ledger's are short. */
#define LEDGERREC_KEY_MAX_BYTES 32
/* A value never decodes longer than its record (escapes only shrink), and
 * a record is at most LEDGER_RECORD_MAX_BYTES: OUT of this size holds any. */
#define LEDGERREC_VALUE_MAX_BYTES 8192

enum ledgerrec_kind {
	LEDGERREC_ABSENT = 0,   /* the object has no such key */
	LEDGERREC_NULL,         /* null; OUT is "" */
	LEDGERREC_STRING,       /* a string, decoded into OUT */
	LEDGERREC_NUMBER,       /* a number, its text in OUT */
	LEDGERREC_BOOL,         /* "true" or "false" in OUT */
	LEDGERREC_TOO_LONG,     /* a string or number longer than OUT: OUT holds a
	                         * prefix, cut at a character boundary */
	LEDGERREC_MALFORMED,    /* not a flat JSON object up to the key; OUT is "" */
};

/* A number's text: "-9223372036854775808" and then some room. */
#define LEDGERREC_NUMBER_MAX_BYTES 32

/* One key to find, where its value goes, and what was found. */
struct ledgerrec_field {
	const char *key;
	char *out;                      /* SIZE bytes, at least 1 */
	size_t size;
	enum ledgerrec_kind kind;       /* set by ledgerrec_scan */
};

/* Finds the N FIELDS in the JSON object REC (LEN bytes, not necessarily
 * NUL-terminated) in one pass, stopping once each has its key's first
 * value; each OUT is always NUL-terminated. Values are written as
 * ledgerrec_get says. False when REC is not a flat JSON object as far as
 * it was read: the fields not found by then are LEDGERREC_MALFORMED. */
bool ledgerrec_scan(const char *rec, size_t len, struct ledgerrec_field *fields, size_t n);

/* Finds the first member named KEY of the JSON object REC (LEN bytes, not
 * necessarily NUL-terminated) and writes its value into OUT (SIZE bytes,
 * at least 1, always NUL-terminated). Strings are decoded: the escapes of
 * JSON, \uXXXX as UTF-8 with surrogate pairs joined; \u0000 and a lone
 * surrogate become U+FFFD, so OUT never holds a NUL. Other bytes are copied
 * as they are (the caller makes them safe to print). */
enum ledgerrec_kind ledgerrec_get(const char *rec, size_t len, const char *key, char *out,
    size_t size);

/* TEXT, a value ledgerrec_scan found of KIND, as an integer: true with
 * *VALUE when it is a number without fraction or exponent that fits. */
bool ledgerrec_number_int(const char *text, enum ledgerrec_kind kind, int64_t *value);

/* KEY's value as an integer: true with *VALUE when it is a number without
 * fraction or exponent that fits an int64_t; false otherwise (absent, null,
 * another kind, malformed). */
bool ledgerrec_int(const char *rec, size_t len, const char *key, int64_t *value);

#endif
