/* The per-sandbox ring of refusals: a fixed array of entries, the oldest
 * overwritten first, equal refusals in a row merged into one that keeps
 * the time of each (up to DENIAL_TIMES_MAX, then a new entry starts), so
 * that "since T" counts exactly what happened since T. Used only from the
 * event loop's thread, so it takes no lock. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress-proxy/denials.h"

#define DENIAL_UTF8_TAIL_MAX 3          /* continuation bytes after a lead byte */
#define DENIAL_TIMES_MAX 32             /* occurrences one entry holds */

/* Equal refusals in a row: D says what and how many (D.count, the size of
 * TIMES), TIMES when each happened, in the order they came. */
struct denial_entry {
	struct denial d;
	int64_t times[DENIAL_TIMES_MAX];
};

struct denial_ring {
	struct denial_entry *entries;
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
static struct denial_entry *
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
	struct denial_entry *e = denial_ring_newest(r);

	denial_copy_text(d.host, host);
	denial_copy_text(d.binary, binary);
	denial_copy_text(d.reason, reason);
	if (e != NULL && denial_same(&e->d, &d) && e->d.count < DENIAL_TIMES_MAX) {
		e->times[e->d.count++] = ts_us;
		e->d.ts_us = ts_us;
		e->d.pid = pid;
		return;
	}
	e = &r->entries[r->next];
	e->d = d;
	e->times[0] = ts_us;
	r->next = (r->next + 1) % r->size;
	if (r->used < r->size)
		r->used++;
}

/* What of entry E happened at or after SINCE_US, into *OUT: its count,
 * its first time since then. False when nothing did. */
static bool
denial_entry_since(const struct denial_entry *e, int64_t since_us, struct denial *out)
{
	*out = e->d;
	out->count = 0;
	for (uint32_t i = 0; i < e->d.count; i++) {
		if (e->times[i] < since_us)
			continue;
		if (out->count++ == 0)
			out->first_ts_us = e->times[i];
	}
	return out->count > 0;
}

/* Adds D (newer than all of OUT's N) to OUT: into the last one when they
 * are equal (entries split only to keep their times), else as a new one,
 * dropping the oldest when MAX are there. Returns the new N. */
static size_t
denial_out_add(struct denial *out, size_t n, size_t max, const struct denial *d)
{
	struct denial *last = n > 0 ? &out[n - 1] : NULL;

	if (last != NULL && denial_same(last, d)) {
		last->count = last->count > UINT32_MAX - d->count ? UINT32_MAX :
		    last->count + d->count;
		last->ts_us = d->ts_us;
		last->pid = d->pid;
		return n;
	}
	if (n == max) {
		/* More than MAX: the newest MAX are the ones worth answering with. */
		memmove(out, out + 1, (max - 1) * sizeof(*out));
		n--;
	}
	out[n] = *d;
	return n + 1;
}

size_t
denial_ring_since(const struct denial_ring *r, int64_t since_us, struct denial *out,
    size_t max)
{
	size_t oldest = (r->next + r->size - r->used) % r->size, n = 0;
	struct denial d;

	if (max == 0)
		return 0;
	for (size_t i = 0; i < r->used; i++)
		if (denial_entry_since(&r->entries[(oldest + i) % r->size], since_us, &d))
			n = denial_out_add(out, n, max, &d);
	return n;
}
