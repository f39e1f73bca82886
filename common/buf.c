/* Bounded byte buffers: a maximum fixed at creation, geometric growth up to
 * it, a NUL always after the data, and wiping for buffers that hold secrets. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

#define BUF_INITIAL_BYTES 64            /* first allocation, NUL included */
#define BUF_MAX_LIMIT_BYTES (SIZE_MAX / 2)      /* largest maximum buf_new() takes */

struct buf {
	char *data;                     /* LEN bytes, then a NUL; never NULL */
	size_t len;                     /* bytes held, the NUL not counted */
	size_t cap;                     /* bytes allocated at DATA, NUL included */
	size_t max;                     /* LEN never passes this */
	bool secret;                    /* wipe DATA before it is freed, reset or moved */
};

/* Allocates an empty data area for B, sized for a buffer of maximum B->max. */
static int
buf_alloc_empty(struct buf *b)
{
	size_t cap = b->max + 1 < BUF_INITIAL_BYTES ? b->max + 1 : BUF_INITIAL_BYTES;
	char *data = malloc(cap);

	if (data == NULL)
		return -1;
	data[0] = '\0';
	b->data = data;
	b->len = 0;
	b->cap = cap;
	return 0;
}

struct buf *
buf_new(size_t max_bytes)
{
	struct buf *b;

	if (max_bytes > BUF_MAX_LIMIT_BYTES) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return NULL;
	b->max = max_bytes;
	if (buf_alloc_empty(b) == -1) {
		free(b);
		return NULL;
	}
	return b;
}

/* Frees B's data area, wiping all of it first when B holds a secret. */
static void
buf_release_data(struct buf *b)
{
	if (b->secret)
		explicit_bzero(b->data, b->cap);
	free(b->data);
	b->data = NULL;
}

void
buf_free(struct buf *b)
{
	if (b == NULL)
		return;
	buf_release_data(b);
	free(b);
}

void
buf_set_secret(struct buf *b)
{
	b->secret = true;
}

/* The capacity to allocate so that NEED bytes fit: doubling, never past max + 1. */
static size_t
buf_next_cap(const struct buf *b, size_t need)
{
	size_t limit = b->max + 1;
	size_t cap = b->cap;

	while (cap < need)
		cap = cap > limit / 2 ? limit : cap * 2;
	return cap;
}

/* Moves B's data into an area of NEW_CAP bytes. A secret buffer never uses
 * realloc(): realloc may leave a copy of the secret in freed memory. */
static int
buf_move_to(struct buf *b, size_t new_cap)
{
	char *data;

	if (!b->secret) {
		data = realloc(b->data, new_cap);
		if (data == NULL)
			return -1;
	} else {
		data = malloc(new_cap);
		if (data == NULL)
			return -1;
		memcpy(data, b->data, b->len + 1);
		buf_release_data(b);
	}
	b->data = data;
	b->cap = new_cap;
	return 0;
}

/* Makes room for ADD more bytes and the NUL; -1 (B unchanged) past the maximum. */
static int
buf_reserve(struct buf *b, size_t add)
{
	if (add > b->max - b->len) {
		errno = ENOBUFS;
		return -1;
	}
	if (b->len + add + 1 <= b->cap)
		return 0;
	return buf_move_to(b, buf_next_cap(b, b->len + add + 1));
}

int
buf_append(struct buf *b, const void *data, size_t len)
{
	if (buf_reserve(b, len) == -1)
		return -1;
	if (len > 0)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int
buf_append_str(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

/* Measures the text first, so a refused append writes nothing at all. */
int
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list measure;
	int n;

	va_copy(measure, ap);
	n = vsnprintf(NULL, 0, fmt, measure);
	va_end(measure);
	if (n < 0 || buf_reserve(b, (size_t)n) == -1)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

const char *
buf_data(const struct buf *b)
{
	return b->data;
}

size_t
buf_len(const struct buf *b)
{
	return b->len;
}

size_t
buf_max(const struct buf *b)
{
	return b->max;
}

void
buf_consume(struct buf *b, size_t n)
{
	size_t old_len = b->len;

	if (n > b->len)
		n = b->len;
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
	if (b->secret)
		explicit_bzero(b->data + b->len, old_len - b->len);
}

void
buf_reset(struct buf *b)
{
	if (b->secret)
		explicit_bzero(b->data, b->cap);
	b->len = 0;
	b->data[0] = '\0';
}

char *
buf_steal(struct buf *b, size_t *len)
{
	char *data = b->data;
	size_t data_len = b->len;

	if (buf_alloc_empty(b) == -1) {
		b->data = data;
		return NULL;
	}
	if (len != NULL)
		*len = data_len;
	return data;
}
