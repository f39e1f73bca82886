/* A sandbox's limit hits, from its cgroups' event counts. See limitwatch.h. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/limitwatch.h"

#define LIMITWATCH_FILE_MAX_BYTES 512   /* memory.events is ~120 bytes */

static const char *const limitwatch_keys[LIMITWATCH_KINDS] = {
	[LIMITWATCH_MEMORY] = "oom_kill",
	[LIMITWATCH_PIDS] = "max",
};

static const char *const limitwatch_reasons[LIMITWATCH_KINDS] = {
	[LIMITWATCH_MEMORY] = "memory_limit",
	[LIMITWATCH_PIDS] = "pids_limit",
};

struct limitwatch {
	struct event *timer;
	int fd[LIMITWATCH_KINDS];
	uint64_t seen[LIMITWATCH_KINDS];
	limitwatch_fn fn;
	void *arg;
};

uint64_t
limitwatch_parse(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *line = text; line != NULL && *line != '\0'; ) {
		if (strncmp(line, key, n) == 0 && line[n] == ' ')
			return strtoull(line + n + 1, NULL, 10);
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	return 0;
}

const char *
limitwatch_reason(enum limitwatch_kind kind)
{
	return limitwatch_reasons[kind];
}

/* KIND's count now, from its file; false when it cannot be read. */
static bool
limitwatch_read(const struct limitwatch *w, enum limitwatch_kind kind, uint64_t *count)
{
	char text[LIMITWATCH_FILE_MAX_BYTES];
	ssize_t n;

	do
		n = pread(w->fd[kind], text, sizeof(text) - 1, 0);
	while (n == -1 && errno == EINTR);
	if (n < 0)
		return false;
	text[n] = '\0';
	*count = limitwatch_parse(text, limitwatch_keys[kind]);
	return true;
}

/* Reports what grew since the last look. */
static void
limitwatch_look(struct limitwatch *w)
{
	uint64_t now;

	for (int k = 0; k < LIMITWATCH_KINDS; k++) {
		if (w->fd[k] == -1 || !limitwatch_read(w, (enum limitwatch_kind)k, &now) ||
		    now <= w->seen[k])
			continue;
		w->fn((enum limitwatch_kind)k, now - w->seen[k], w->arg);
		w->seen[k] = now;
	}
}

static void
limitwatch_on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	limitwatch_look(arg);
}

struct limitwatch *
limitwatch_new(struct event_base *base, int memory_fd, int pids_fd, limitwatch_fn fn,
    void *arg)
{
	struct timeval every = { LIMITWATCH_INTERVAL_MS / 1000, (LIMITWATCH_INTERVAL_MS % 1000) * 1000 };
	struct limitwatch *w;

	if ((memory_fd == -1 && pids_fd == -1) || (w = calloc(1, sizeof(*w))) == NULL) {
		if (memory_fd != -1)
			close(memory_fd);
		if (pids_fd != -1)
			close(pids_fd);
		return NULL;
	}
	w->fd[LIMITWATCH_MEMORY] = memory_fd;
	w->fd[LIMITWATCH_PIDS] = pids_fd;
	w->fn = fn;
	w->arg = arg;
	/* What a count held before the watch began is no hit of this sandbox. */
	for (int k = 0; k < LIMITWATCH_KINDS; k++)
		if (w->fd[k] != -1 && !limitwatch_read(w, (enum limitwatch_kind)k, &w->seen[k]))
			w->seen[k] = 0;
	w->timer = event_new(base, -1, EV_PERSIST, limitwatch_on_timer, w);
	if (w->timer == NULL || event_add(w->timer, &every) == -1) {
		limitwatch_free(w);
		return NULL;
	}
	return w;
}

uint64_t
limitwatch_seen(const struct limitwatch *w, enum limitwatch_kind kind)
{
	return w != NULL ? w->seen[kind] : 0;
}

bool
limitwatch_grew(struct limitwatch *w, enum limitwatch_kind kind, uint64_t mark)
{
	if (w == NULL || w->fd[kind] == -1)
		return false;
	limitwatch_look(w);
	return w->seen[kind] > mark;
}

void
limitwatch_free(struct limitwatch *w)
{
	if (w == NULL)
		return;
	if (w->timer != NULL) {
		limitwatch_look(w);
		event_free(w->timer);
	}
	for (int k = 0; k < LIMITWATCH_KINDS; k++)
		if (w->fd[k] != -1)
			close(w->fd[k]);
	free(w);
}
