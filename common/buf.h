/* Bounded byte buffers: every buffer that holds network or file input has
 * a maximum size fixed when it is made, and refuses to grow past it. */
#ifndef CORRAL_BUF_H
#define CORRAL_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf;

/* A new empty buffer that will never hold more than MAX_BYTES; NULL if out of memory. */
struct buf *buf_new(size_t max_bytes);
/* Frees B (NULL is fine); the old contents are wiped when buf_set_secret() was called. */
void buf_free(struct buf *b);
/* Marks B as holding a secret: its memory is wiped when freed, reset or grown. */
void buf_set_secret(struct buf *b);

/* Appends LEN bytes; -1 (B unchanged) when that would pass the maximum or memory runs out. */
int buf_append(struct buf *b, const void *data, size_t len);
/* Appends a NUL-free string. */
int buf_append_str(struct buf *b, const char *s);
/* Appends formatted text; -1 (B unchanged) when it would pass the maximum. */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* The bytes held; always followed by a NUL byte not counted in buf_len(). */
const char *buf_data(const struct buf *b);
size_t buf_len(const struct buf *b);
size_t buf_max(const struct buf *b);
/* Drops the first N bytes (all of them when N >= length). */
void buf_consume(struct buf *b, size_t n);
/* Empties B, keeping its maximum. */
void buf_reset(struct buf *b);
/* Hands the contents to the caller as a NUL-terminated string (free() it) and empties B; NULL if out of memory.
 * The returned memory is no longer wiped by B: a caller stealing a secret wipes it itself. */
char *buf_steal(struct buf *b, size_t *len);

#endif
