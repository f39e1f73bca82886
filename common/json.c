/* A JSON writer into a bounded buffer: commas and nesting are tracked, any
 * misuse or overflow poisons the document, and strings are escaped so that
 * untrusted bytes can neither end a string nor forge a line. */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/utf8.h"

#define JSON_DEPTH_MAX 32               /* objects and arrays open at once */
#define JSON_NUMBER_MAX_BYTES 24        /* "-9223372036854775808" and its NUL */
#define JSON_ESCAPE_MAX_BYTES 7         /* "\u00XX" and its NUL */

enum json_frame {
	JSON_FRAME_OBJECT,
	JSON_FRAME_ARRAY,
};

struct json {
	struct buf *out;
	bool failed;                    /* overflow or misuse: the text is never handed out */
	bool top_done;                  /* the document's one top-level value is complete */
	bool after_key;                 /* a key was written; its value comes next */
	size_t depth;                   /* open objects and arrays */
	enum json_frame frame[JSON_DEPTH_MAX];
	bool has_members[JSON_DEPTH_MAX];       /* the frame needs a comma before its next member */
};

/* Where escaped text goes: PUT appends LEN bytes to CTX, -1 when they do not fit. */
typedef int (*json_put_fn)(void *ctx, const char *text, size_t len);

struct json *
json_new(size_t max_bytes)
{
	struct json *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->out = buf_new(max_bytes);
	if (j->out == NULL) {
		free(j);
		return NULL;
	}
	return j;
}

void
json_free(struct json *j)
{
	if (j == NULL)
		return;
	buf_free(j->out);
	free(j);
}

/* Appends raw text; a refusal poisons the document. */
static void
json_raw(struct json *j, const char *text, size_t len)
{
	if (!j->failed && buf_append(j->out, text, len) == -1)
		j->failed = true;
}

/* Checks that a value may come now and writes the comma it needs; false
 * (and the document poisoned) when a value is out of place. */
static bool
json_value_begin(struct json *j)
{
	if (j->failed)
		return false;
	if (j->depth == 0) {
		if (j->top_done)
			j->failed = true;
	} else if (j->frame[j->depth - 1] == JSON_FRAME_OBJECT) {
		if (!j->after_key)
			j->failed = true;
	} else if (j->has_members[j->depth - 1]) {
		json_raw(j, ",", 1);
	}
	return !j->failed;
}

/* Records that a value (scalar, or a closed object or array) was completed. */
static void
json_value_end(struct json *j)
{
	j->after_key = false;
	if (j->depth == 0)
		j->top_done = true;
	else
		j->has_members[j->depth - 1] = true;
}

/* Opens an object or array, refusing to nest deeper than JSON_DEPTH_MAX. */
static void
json_open(struct json *j, enum json_frame frame, char c)
{
	if (!json_value_begin(j))
		return;
	if (j->depth == JSON_DEPTH_MAX) {
		j->failed = true;
		return;
	}
	json_raw(j, &c, 1);
	j->frame[j->depth] = frame;
	j->has_members[j->depth] = false;
	j->after_key = false;
	j->depth++;
}

/* Closes the innermost frame when it is FRAME and no key waits for a value. */
static void
json_close(struct json *j, enum json_frame frame, char c)
{
	if (j->failed)
		return;
	if (j->depth == 0 || j->frame[j->depth - 1] != frame || j->after_key) {
		j->failed = true;
		return;
	}
	json_raw(j, &c, 1);
	j->depth--;
	json_value_end(j);
}

void
json_object_begin(struct json *j)
{
	json_open(j, JSON_FRAME_OBJECT, '{');
}

void
json_object_end(struct json *j)
{
	json_close(j, JSON_FRAME_OBJECT, '}');
}

void
json_array_begin(struct json *j)
{
	json_open(j, JSON_FRAME_ARRAY, '[');
}

void
json_array_end(struct json *j)
{
	json_close(j, JSON_FRAME_ARRAY, ']');
}

/* Writes into ESC the escape for the ASCII byte C, or leaves ESC alone when
 * C goes out as is. DEL and '/' need no escape. */
static void
json_escape_ascii(unsigned char c, char esc[JSON_ESCAPE_MAX_BYTES])
{
	static const char *const short_forms[0x20] = {
		['\b'] = "\\b", ['\t'] = "\\t", ['\n'] = "\\n",
		['\f'] = "\\f", ['\r'] = "\\r",
	};

	if (c == '"' || c == '\\')
		snprintf(esc, JSON_ESCAPE_MAX_BYTES, "\\%c", c);
	else if (c < 0x20 && short_forms[c] != NULL)
		snprintf(esc, JSON_ESCAPE_MAX_BYTES, "%s", short_forms[c]);
	else if (c < 0x20)
		snprintf(esc, JSON_ESCAPE_MAX_BYTES, "\\u%04x", c);
}

/* Reads one character at S: returns how many bytes it takes (at least 1),
 * with ESC empty when they go out unchanged (plain ASCII, valid UTF-8) or
 * holding their escape. Invalid UTF-8 is one \ufffd per offending byte. */
static size_t
json_escape_next(const unsigned char *s, size_t len, char esc[JSON_ESCAPE_MAX_BYTES])
{
	size_t n;

	esc[0] = '\0';
	if (s[0] < 0x80) {
		json_escape_ascii(s[0], esc);
		return 1;
	}
	n = utf8_sequence(s, len);
	if (n == 0) {
		snprintf(esc, JSON_ESCAPE_MAX_BYTES, "\\ufffd");
		return 1;
	}
	/* U+2028 and U+2029 end a line in JavaScript: a record embedded in a
	 * script must not be split by them. */
	if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9))
		snprintf(esc, JSON_ESCAPE_MAX_BYTES, "\\u%s", s[2] == 0xa8 ? "2028" : "2029");
	return n;
}

/* Sends S escaped to PUT, in runs of unchanged bytes and single escapes. */
static int
json_escape_to(const char *s, size_t len, json_put_fn put, void *ctx)
{
	const unsigned char *u = (const unsigned char *)s;
	char esc[JSON_ESCAPE_MAX_BYTES];
	size_t run = 0, i = 0, n;

	while (i < len) {
		n = json_escape_next(u + i, len - i, esc);
		if (esc[0] == '\0') {
			run += n;
		} else {
			if ((run > 0 && put(ctx, s + i - run, run) == -1) ||
			    put(ctx, esc, strlen(esc)) == -1)
				return -1;
			run = 0;
		}
		i += n;
	}
	return run > 0 ? put(ctx, s + i - run, run) : 0;
}

static int
json_put_writer(void *ctx, const char *text, size_t len)
{
	struct json *j = ctx;

	json_raw(j, text, len);
	return j->failed ? -1 : 0;
}

/* Writes S as a quoted, escaped string (a value or a key). */
static void
json_quoted(struct json *j, const char *s, size_t len)
{
	json_raw(j, "\"", 1);
	if (!j->failed)
		json_escape_to(s, len, json_put_writer, j);
	json_raw(j, "\"", 1);
}

void
json_key(struct json *j, const char *key)
{
	if (j->failed)
		return;
	if (j->depth == 0 || j->frame[j->depth - 1] != JSON_FRAME_OBJECT || j->after_key) {
		j->failed = true;
		return;
	}
	if (j->has_members[j->depth - 1])
		json_raw(j, ",", 1);
	json_quoted(j, key, strlen(key));
	json_raw(j, ":", 1);
	j->after_key = true;
}

/* Writes a value whose text needs no escaping (numbers, true, false, null). */
static void
json_literal(struct json *j, const char *text)
{
	if (!json_value_begin(j))
		return;
	json_raw(j, text, strlen(text));
	json_value_end(j);
}

void
json_str_n(struct json *j, const char *s, size_t len)
{
	if (s == NULL) {
		json_null_value(j);
		return;
	}
	if (!json_value_begin(j))
		return;
	json_quoted(j, s, len);
	json_value_end(j);
}

void
json_str(struct json *j, const char *s)
{
	json_str_n(j, s, s == NULL ? 0 : strlen(s));
}

void
json_int(struct json *j, int64_t v)
{
	char text[JSON_NUMBER_MAX_BYTES];

	snprintf(text, sizeof(text), "%" PRId64, v);
	json_literal(j, text);
}

void
json_uint(struct json *j, uint64_t v)
{
	char text[JSON_NUMBER_MAX_BYTES];

	snprintf(text, sizeof(text), "%" PRIu64, v);
	json_literal(j, text);
}

void
json_bool(struct json *j, bool v)
{
	json_literal(j, v ? "true" : "false");
}

void
json_null_value(struct json *j)
{
	json_literal(j, "null");
}

void
json_kv_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_str(j, s);
}

void
json_kv_int(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_int(j, v);
}

void
json_kv_uint(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_uint(j, v);
}

void
json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

void
json_kv_null(struct json *j, const char *key)
{
	json_key(j, key);
	json_null_value(j);
}

bool
json_ok(const struct json *j)
{
	return !j->failed;
}

const char *
json_text(const struct json *j, size_t *len)
{
	if (j->failed || j->depth != 0 || !j->top_done)
		return NULL;
	if (len != NULL)
		*len = buf_len(j->out);
	return buf_data(j->out);
}

void
json_reset(struct json *j)
{
	buf_reset(j->out);
	j->failed = false;
	j->top_done = false;
	j->after_key = false;
	j->depth = 0;
}

/* A fixed-size output area for json_escape(). */
struct json_array_sink {
	char *out;
	size_t size;
	size_t used;
};

static int
json_put_array(void *ctx, const char *text, size_t len)
{
	struct json_array_sink *sink = ctx;

	/* Keep one byte for the NUL. */
	if (len >= sink->size - sink->used)
		return -1;
	memcpy(sink->out + sink->used, text, len);
	sink->used += len;
	return 0;
}

int
json_escape(const char *s, size_t len, char *out, size_t out_size)
{
	struct json_array_sink sink = { out, out_size, 0 };

	if (out_size == 0)
		return -1;
	if (json_escape_to(s, len, json_put_array, &sink) == -1 || sink.used > INT_MAX) {
		out[0] = '\0';
		return -1;
	}
	out[sink.used] = '\0';
	return (int)sink.used;
}
