/* A JSON writer into a bounded buffer. Strings are escaped so that untrusted
 * text (SNI, Host, paths, argv) cannot break a record: control characters
 * become \uXXXX (\n, \t, \r, \b, \f in short form), U+2028 and U+2029
 * become \u2028 and \u2029, and each byte of invalid UTF-8 (bad lead bytes,
 * truncated sequences, overlongs, surrogates, past U+10FFFF) becomes \ufffd.
 * Misuse (a value where a key is due, an unbalanced end, nesting past the
 * depth cap, a second top-level value) fails the document like an overflow. */
#ifndef CORRAL_JSON_H
#define CORRAL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json;

/* A writer whose output never exceeds MAX_BYTES; NULL if out of memory. */
struct json *json_new(size_t max_bytes);
void json_free(struct json *j);

void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
/* Writes an object key; the next value call writes its value. */
void json_key(struct json *j, const char *key);
/* Not json_string or json_null: libnftables calls jansson's by those names,
 * and corrald's own would stand in for them. */
void json_str(struct json *j, const char *s);          /* NULL writes null */
void json_str_n(struct json *j, const char *s, size_t len);
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
void json_bool(struct json *j, bool v);
void json_null_value(struct json *j);

/* key + value in one call */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_int(struct json *j, const char *key, int64_t v);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_bool(struct json *j, const char *key, bool v);
void json_kv_null(struct json *j, const char *key);

/* True when everything written so far fit and nesting was balanced at every step. */
bool json_ok(const struct json *j);
/* The text written so far (NUL-terminated); NULL unless json_ok(), a value
 * was written, and every object and array is closed. */
const char *json_text(const struct json *j, size_t *len);
/* Empties the writer for the next document, keeping its maximum. */
void json_reset(struct json *j);

/* Writes S escaped as a JSON string body (no quotes) to OUT, of OUT_SIZE
 * bytes, NUL-terminated; returns the length written without the NUL, or -1
 * (OUT empty when OUT_SIZE > 0) when it did not fit. */
int json_escape(const char *s, size_t len, char *out, size_t out_size);

#endif
