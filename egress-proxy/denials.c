/* The per-sandbox ring of refusals: a fixed array of entries, the oldest
 * overwritten first, equal refusals in a row merged into one. Used only
 * from the event loop's thread, so it takes no lock. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress-proxy/denials.h"

#define DENIAL_UTF8_TAIL_MAX 3          /* continuation bytes after a lead byte */

struct denial_ring {
	struct denial *entries;
	size_t size;                    /* entries allocated */
	size_t used;                    /* entries holding a refusal, up to SIZE */
	size_t next;                    /* where the next new entry goes */
};

struct denial_ring *
denial_ring_new(size_t entries)
{
	struct denial_ring *r;

	if (entries == 0)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->entries = calloc(entries, sizeof(*r->entries));
	if (r->entries == NULL) {
		free(r);
		return NULL;
	}
	r->size = entries;
	return r;
}

void
denial_ring_free(struct denial_ring *r)
{
	if (r == NULL)
		return;
	free(r->entries);
	free(r);
}

/* Where to cut S, of more than MAX bytes, to at most MAX bytes without
 * splitting a UTF-8 sequence: MAX, or the start of the sequence that the
 * byte at MAX continues. */
static size_t
denial_utf8_cut(const char *s, size_t max)
{
	size_t cut = max;

	for (size_t i = 0; i < DENIAL_UTF8_TAIL_MAX && cut > 0 &&
	    ((unsigned char)s[cut] & 0xc0) == 0x80; i++)
		cut--;
	/* Only a lead byte starts a sequence; other bytes are not UTF-8 and are kept. */
	return (unsigned char)s[cut] >= 0xc0 ? cut : max;
}

/* Copies S (NULL: "") into OUT, NUL-terminated, cut to fit. */
static void
denial_copy_text(char out[DENIAL_TEXT_MAX_BYTES], const char *s)
{
	size_t len = s == NULL ? 0 : strnlen(s, DENIAL_TEXT_MAX_BYTES);

	if (len == DENIAL_TEXT_MAX_BYTES)
		len = denial_utf8_cut(s, DENIAL_TEXT_MAX_BYTES - 1);
	if (len > 0)
		memcpy(out, s, len);
	out[len] = '\0';
}

/* The newest entry, or NULL when the ring is empty. */
static struct denial *
denial_ring_newest(struct denial_ring *r)
{
	if (r->used == 0)
		return NULL;
	return &r->entries[(r->next + r->size - 1) % r->size];
}

static bool
denial_same(const struct denial *a, const struct denial *b)
{
	return a->port == b->port && strcmp(a->host, b->host) == 0 &&
	    strcmp(a->binary, b->binary) == 0 && strcmp(a->reason, b->reason) == 0;
}

void
denial_ring_add(struct denial_ring *r, int64_t ts_us, const char *host, uint16_t port,
    const char *binary, int64_t pid, const char *reason)
{
	struct denial d = { .ts_us = ts_us, .first_ts_us = ts_us, .port = port, .pid = pid,
		.count = 1 };
	struct denial *newest = denial_ring_newest(r);

	denial_copy_text(d.host, host);
	denial_copy_text(d.binary, binary);
	denial_copy_text(d.reason, reason);
	if (newest != NULL && denial_same(newest, &d)) {
		newest->ts_us = ts_us;
		newest->pid = pid;
		if (newest->count < UINT32_MAX)
			newest->count++;
		return;
	}
	r->entries[r->next] = d;
	r->next = (r->next + 1) % r->size;
	if (r->used < r->size)
		r->used++;
}

size_t
denial_ring_since(const struct denial_ring *r, int64_t since_us, struct denial *out,
    size_t max)
{
	size_t oldest = (r->next + r->size - r->used) % r->size;
	size_t matching = 0, skip, n = 0;

	for (size_t i = 0; i < r->used; i++)
		if (r->entries[(oldest + i) % r->size].ts_us >= since_us)
			matching++;
	/* More than MAX: the newest MAX are the ones worth answering with. */
	skip = matching > max ? matching - max : 0;
	for (size_t i = 0; i < r->used && n < max; i++) {
		const struct denial *d = &r->entries[(oldest + i) % r->size];

		if (d->ts_us < since_us)
			continue;
		if (skip > 0)
			skip--;
		else
			out[n++] = *d;
	}
	return n;
}
