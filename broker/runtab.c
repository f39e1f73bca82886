/* A sandbox's shell runs: ids, kept output and results (runtab.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "broker/runtab.h"
#include "common/xmalloc.h"

#define RUN_RING_FIRST_BYTES 4096       /* a run's first ring; it doubles up to the cap */

void
runtab_init(struct runtab *t)
{
	t->head = NULL;
	t->count = 0;
	t->next_serial = 1;
}

static void
run_free(struct run *r)
{
	free(r->id);
	free(r->shell);
	free(r->command);
	free(r->result.cwd);
	free(r->error);
	free(r->out.buf);
	free(r->late.buf);
	free(r);
}

void
runtab_clear(struct runtab *t)
{
	struct run *r;

	while ((r = t->head) != NULL) {
		t->head = r->next;
		run_free(r);
	}
	t->count = 0;
}

struct run *
runtab_find(const struct runtab *t, const char *id)
{
	struct run *r;

	for (r = t->head; r != NULL; r = r->next) {
		if (strcmp(r->id, id) == 0)
			return r;
	}
	return NULL;
}

struct run *
runtab_find_serial(const struct runtab *t, uint64_t serial)
{
	struct run *r;

	for (r = t->head; r != NULL; r = r->next) {
		if (r->serial == serial)
			return r;
	}
	return NULL;
}

size_t
runtab_kept_bytes(const struct runtab *t)
{
	size_t n = 0;

	for (const struct run *r = t->head; r != NULL; r = r->next)
		n += r->out.len + r->late.len;
	return n;
}

void
runtab_remove(struct runtab *t, struct run *r)
{
	struct run **pp;

	for (pp = &t->head; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			t->count--;
			break;
		}
	}
	run_free(r);
}

/* The oldest run that may be forgotten: finished and nobody reading it. */
static struct run *
runtab_oldest_droppable(const struct runtab *t)
{
	for (struct run *r = t->head; r != NULL; r = r->next) {
		if (r->state == RUN_DONE && r->watchers == NULL)
			return r;
	}
	return NULL;
}

void
runtab_trim(struct runtab *t)
{
	struct run *r;

	while ((t->count > RUNTAB_RUNS_MAX || runtab_kept_bytes(t) > RUNTAB_KEEP_BYTES_MAX) &&
	    (r = runtab_oldest_droppable(t)) != NULL)
		runtab_remove(t, r);
}

struct run *
runtab_add(struct runtab *t, const char *id, const char *shell, const char *command,
    unsigned timeout_s, int64_t now_us)
{
	struct run *r, **pp;

	t->count++;             /* room for the new one */
	runtab_trim(t);
	t->count--;
	if (t->count >= RUNTAB_RUNS_MAX)
		return NULL;
	r = xcalloc(1, sizeof(*r));
	r->serial = t->next_serial++;
	r->id = xstrdup(id);
	r->shell = xstrdup(shell);
	r->command = xstrdup(command);
	r->timeout_s = timeout_s;
	r->started_us = now_us;
	r->state = RUN_QUEUED;
	for (pp = &t->head; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = r;
	t->count++;
	return r;
}

/* Makes RING hold NEED bytes (up to CAP), oldest first at 0. */
static void
run_ring_grow(struct run_ring *ring, size_t need, size_t cap)
{
	size_t size = ring->size > 0 ? ring->size : RUN_RING_FIRST_BYTES;
	uint8_t *buf;

	while (size < need && size < cap)
		size *= 2;
	if (size > cap)
		size = cap;
	buf = xmalloc(size);
	for (size_t i = 0; i < ring->len; i++)
		buf[i] = ring->buf[(ring->head + i) % ring->size];
	free(ring->buf);
	ring->buf = buf;
	ring->size = size;
	ring->head = 0;
}

/* Copies LEN bytes into RING (at most CAP), overwriting the oldest once
 * it is full. */
static void
run_ring_put(struct run_ring *ring, const uint8_t *data, size_t len, size_t cap)
{
	size_t tail, n, over;

	ring->total += len;
	if (len > cap) {
		data += len - cap;
		len = cap;
	}
	if (ring->len + len > ring->size && ring->size < cap)
		run_ring_grow(ring, ring->len + len, cap);
	while (len > 0) {
		tail = (ring->head + ring->len) % ring->size;
		n = ring->size - tail < len ? ring->size - tail : len;
		memcpy(ring->buf + tail, data, n);
		data += n;
		len -= n;
		ring->len += n;
		if (ring->len > ring->size) {
			over = ring->len - ring->size;
			ring->head = (ring->head + over) % ring->size;
			ring->len = ring->size;
		}
	}
}

/* The offset of the oldest byte RING holds. */
static uint64_t
run_ring_first(const struct run_ring *ring)
{
	return ring->total - ring->len;
}

/* Copies up to MAX held bytes of RING from offset FROM (raised to the
 * oldest held) into DST; the offset in *AT; how many. */
static size_t
run_ring_read(const struct run_ring *ring, uint64_t from, uint8_t *dst, size_t max,
    uint64_t *at)
{
	size_t skip, n, start, first;

	if (from < run_ring_first(ring))
		from = run_ring_first(ring);
	*at = from;
	if (from >= ring->total)
		return 0;
	skip = (size_t)(from - run_ring_first(ring));
	n = ring->len - skip < max ? ring->len - skip : max;
	/* At most two spans: up to the ring's end, then from its start. */
	start = (ring->head + skip) % ring->size;
	first = ring->size - start < n ? ring->size - start : n;
	memcpy(dst, ring->buf + start, first);
	memcpy(dst + first, ring->buf, n - first);
	return n;
}

void
run_output_append(struct run *r, const uint8_t *data, size_t len)
{
	struct run_watcher *w, *next;
	uint64_t at = r->out.total;

	if (len == 0)
		return;
	run_ring_put(&r->out, data, len, RUN_OUTPUT_KEEP_BYTES);
	for (w = r->watchers; w != NULL; w = next) {
		next = w->next;         /* W may unwatch itself */
		w->on_output(w, at, data, len);
	}
}

uint64_t
run_output_first(const struct run *r)
{
	return run_ring_first(&r->out);
}

bool
run_truncated(const struct run *r)
{
	return r->out.total > r->out.len;
}

size_t
run_output_read(const struct run *r, uint64_t from, uint8_t *dst, size_t max, uint64_t *at)
{
	return run_ring_read(&r->out, from, dst, max, at);
}

void
run_late_append(struct run *r, const uint8_t *data, size_t len)
{
	if (len > 0)
		run_ring_put(&r->late, data, len, RUN_LATE_KEEP_BYTES);
}

size_t
run_late_read(const struct run *r, uint64_t from, uint8_t *dst, size_t max, uint64_t *at)
{
	return run_ring_read(&r->late, from, dst, max, at);
}

void
run_finish(struct run *r, const struct run_result *result, const char *error)
{
	struct run_watcher *w;

	if (r->state == RUN_DONE)
		return;
	r->state = RUN_DONE;
	if (result != NULL)
		r->result = *result;
	else
		r->error = xstrdup(error != NULL ? error : "the run failed");
	while ((w = r->watchers) != NULL) {
		r->watchers = w->next;
		w->next = NULL;
		w->on_done(w, r);
	}
}

void
run_watch(struct run *r, struct run_watcher *w)
{
	w->next = r->watchers;
	r->watchers = w;
}

void
run_unwatch(struct run *r, struct run_watcher *w)
{
	struct run_watcher **pp;

	for (pp = &r->watchers; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			w->next = NULL;
			return;
		}
	}
}

bool
run_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > RUN_ID_MAX_BYTES)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == ':' || c == '-'))
			return false;
	}
	return true;
}
