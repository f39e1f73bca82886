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
}

static void
run_free(struct run *r)
{
	free(r->id);
	free(r->shell);
	free(r->command);
	free(r->result.cwd);
	free(r->error);
	free(r->ring);
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

size_t
runtab_kept_bytes(const struct runtab *t)
{
	size_t n = 0;

	for (const struct run *r = t->head; r != NULL; r = r->next)
		n += r->ring_len;
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

/* Makes R's ring hold NEED bytes (up to the cap), oldest first at 0. */
static void
run_ring_grow(struct run *r, size_t need)
{
	size_t size = r->ring_size > 0 ? r->ring_size : RUN_RING_FIRST_BYTES;
	uint8_t *ring;

	while (size < need && size < RUN_OUTPUT_KEEP_BYTES)
		size *= 2;
	if (size > RUN_OUTPUT_KEEP_BYTES)
		size = RUN_OUTPUT_KEEP_BYTES;
	ring = xmalloc(size);
	for (size_t i = 0; i < r->ring_len; i++)
		ring[i] = r->ring[(r->ring_head + i) % r->ring_size];
	free(r->ring);
	r->ring = ring;
	r->ring_size = size;
	r->ring_head = 0;
}

/* Copies LEN bytes into the ring, overwriting the oldest once it is full. */
static void
run_ring_put(struct run *r, const uint8_t *data, size_t len)
{
	size_t tail, n, over;

	if (len > RUN_OUTPUT_KEEP_BYTES) {
		data += len - RUN_OUTPUT_KEEP_BYTES;
		len = RUN_OUTPUT_KEEP_BYTES;
	}
	if (r->ring_len + len > r->ring_size && r->ring_size < RUN_OUTPUT_KEEP_BYTES)
		run_ring_grow(r, r->ring_len + len);
	while (len > 0) {
		tail = (r->ring_head + r->ring_len) % r->ring_size;
		n = r->ring_size - tail < len ? r->ring_size - tail : len;
		memcpy(r->ring + tail, data, n);
		data += n;
		len -= n;
		r->ring_len += n;
		if (r->ring_len > r->ring_size) {
			over = r->ring_len - r->ring_size;
			r->ring_head = (r->ring_head + over) % r->ring_size;
			r->ring_len = r->ring_size;
		}
	}
}

void
run_output_append(struct run *r, const uint8_t *data, size_t len)
{
	struct run_watcher *w, *next;
	uint64_t at = r->total;

	if (len == 0)
		return;
	run_ring_put(r, data, len);
	r->total += len;
	for (w = r->watchers; w != NULL; w = next) {
		next = w->next;         /* W may unwatch itself */
		w->on_output(w, at, data, len);
	}
}

uint64_t
run_output_first(const struct run *r)
{
	return r->total - r->ring_len;
}

bool
run_truncated(const struct run *r)
{
	return r->total > r->ring_len;
}

size_t
run_output_read(const struct run *r, uint64_t from, uint8_t *dst, size_t max, uint64_t *at)
{
	size_t skip, n, start, first;

	if (from < run_output_first(r))
		from = run_output_first(r);
	*at = from;
	if (from >= r->total)
		return 0;
	skip = (size_t)(from - run_output_first(r));
	n = r->ring_len - skip < max ? r->ring_len - skip : max;
	/* At most two spans: up to the ring's end, then from its start. */
	start = (r->ring_head + skip) % r->ring_size;
	first = r->ring_size - start < n ? r->ring_size - start : n;
	memcpy(dst, r->ring + start, first);
	memcpy(dst + first, r->ring, n - first);
	return n;
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
