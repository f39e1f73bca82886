/* The warm pool. See warm.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "broker/conf.h"
#include "broker/daemon.h"
#include "broker/monitor/monitor-wire.h"
#include "broker/privsep.h"
#include "broker/sandbox.h"
#include "broker/warm.h"
#include "common/log.h"
#include "common/reason.h"
#include "common/xmalloc.h"
#include "policy/name.h"
#include "policy/profile.h"

/* One warm sandbox, as the broker knows it. */
struct warm_sandbox {
	struct daemon *d;
	char profile[POLICY_NAME_MAX_BYTES + 1];
	unsigned slot;
	bool ready;                     /* built; else the monitor is building it */
	struct warm_sandbox *next;      /* d->warm */
};

static unsigned
warm_wanted(const struct daemon *d, const char *profile)
{
	for (size_t i = 0; i < d->cfg->nwarm_pool; i++)
		if (strcmp(d->cfg->warm_pool[i].profile, profile) == 0)
			return d->cfg->warm_pool[i].count;
	return 0;
}

unsigned
warm_wanted_total(const struct daemon *d)
{
	unsigned n = 0;

	for (size_t i = 0; i < d->cfg->nwarm_pool; i++)
		n += d->cfg->warm_pool[i].count;
	return n;
}

unsigned
warm_count(const struct daemon *d, const char *profile, bool ready)
{
	unsigned n = 0;

	for (const struct warm_sandbox *w = d->warm; w != NULL; w = w->next)
		n += (profile == NULL || strcmp(w->profile, profile) == 0) && (!ready || w->ready);
	return n;
}

unsigned
warm_building(const struct daemon *d)
{
	return warm_count(d, NULL, false) - warm_count(d, NULL, true);
}

bool
warm_slot_taken(const struct daemon *d, unsigned slot)
{
	for (const struct warm_sandbox *w = d->warm; w != NULL; w = w->next)
		if (w->slot == slot)
			return true;
	return false;
}

static void
warm_unlink(struct daemon *d, struct warm_sandbox *w)
{
	for (struct warm_sandbox **pp = &d->warm; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			return;
		}
}

static struct warm_sandbox *
warm_add(struct daemon *d, const char *profile, unsigned slot, bool ready)
{
	struct warm_sandbox *w = xcalloc(1, sizeof(*w));

	w->d = d;
	snprintf(w->profile, sizeof(w->profile), "%s", profile);
	w->slot = slot;
	w->ready = ready;
	w->next = d->warm;
	d->warm = w;
	return w;
}

static void
warm_on_retry(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	d->warm_held = false;
	warm_fill(d);
}

/* A warm build failed: the next waits WARM_RETRY_S, so that a machine
 * that cannot build one is not asked again and again. */
static void
warm_hold(struct daemon *d)
{
	struct timeval later = { WARM_RETRY_S, 0 };

	if (d->warm_timer == NULL && (d->warm_timer = evtimer_new(d->base, warm_on_retry,
	    d)) == NULL)
		return;         /* then the next create's refill tries again */
	d->warm_held = true;
	evtimer_add(d->warm_timer, &later);
}

static void
warm_on_built(const char *why, void *arg)
{
	struct warm_sandbox *w = arg;
	struct daemon *d = w->d;

	if (why == NULL) {
		w->ready = true;
		warm_fill(d);           /* the count may have been lowered meanwhile */
		return;
	}
	warm_unlink(d, w);
	if (!d->closing && !privsep_gone(d->privsep)) {
		log_warnx("warm pool: a sandbox of profile %s could not be built (next try in "
		    "%d s): %s", w->profile, WARM_RETRY_S, why);
		warm_hold(d);
	}
	free(w);
}

/* Asks the monitor for one more warm sandbox of PROFILE; -1 when it
 * cannot (logged). */
static int
warm_start(struct daemon *d, const char *profile)
{
	struct warm_sandbox *w;
	char *err = NULL;
	int slot = sandbox_free_slot(d);

	if (slot == -1)
		return -1;
	w = warm_add(d, profile, (unsigned)slot, false);
	if (privsep_warm_async(d->privsep, (unsigned)slot, warm_on_built, w, &err) == -1) {
		log_warnx("warm pool: %s", err);
		free(err);
		warm_unlink(d, w);
		free(w);
		return -1;
	}
	return 0;
}

/* Whether one more warm sandbox leaves max_sandboxes room for the
 * sandboxes, when ONE_MORE; else whether the pool is over it. */
static bool
warm_room(const struct daemon *d, bool one_more)
{
	unsigned held = sandbox_count(d) + sandbox_creating_count(d) + warm_count(d, NULL, false);

	return one_more ? held < d->cfg->max_sandboxes : held <= d->cfg->max_sandboxes;
}

/* Discards ready warm sandboxes of profiles holding more than is wanted,
 * and gives way to sandboxes past max_sandboxes. */
static void
warm_trim(struct daemon *d)
{
	char name[64];
	struct warm_sandbox *w, *next;

	for (w = d->warm; w != NULL; w = next) {
		next = w->next;
		if (!w->ready || (warm_room(d, false) &&
		    warm_count(d, w->profile, false) <= warm_wanted(d, w->profile)))
			continue;
		snprintf(name, sizeof(name), MONITOR_WARM_PREFIX "%u", w->slot);
		sandbox_destroy(d, name, NULL, NULL);
		warm_unlink(d, w);
		free(w);
	}
}

/* Builds toward each profile's count, while there is room, one warm
 * sandbox at a time: the monitor serves its requests in turn, and a
 * create that comes meanwhile waits behind every build asked before it
 * (the next starts when this one is built, warm_on_built). */
static void
warm_grow(struct daemon *d)
{
	if (warm_building(d) > 0)
		return;
	for (size_t i = 0; i < d->cfg->nwarm_pool; i++) {
		const struct config_warm *c = &d->cfg->warm_pool[i];

		if (profile_set_find(d->profiles, d->cfg->profiles_dir, c->profile, NULL) == NULL)
			continue;       /* warm_check said so at the start or reload */
		if (warm_count(d, c->profile, false) < c->count && warm_room(d, true)) {
			(void)warm_start(d, c->profile);
			return;
		}
	}
}

void
warm_fill(struct daemon *d)
{
	if (d->privsep == NULL || !d->sandboxes_ok || d->closing || privsep_gone(d->privsep) ||
	    d->warm_busy)
		return;
	/* A synchronous call of warm_trim may run callbacks (the monitor
	 * lost): none of them runs this again meanwhile. */
	d->warm_busy = true;
	warm_trim(d);
	if (!d->warm_held)
		warm_grow(d);
	d->warm_busy = false;
}

int
warm_claim(struct daemon *d, const char *profile)
{
	int slot;

	for (struct warm_sandbox *w = d->warm; w != NULL; w = w->next) {
		if (!w->ready || strcmp(w->profile, profile) != 0)
			continue;
		slot = (int)w->slot;
		warm_unlink(d, w);
		free(w);
		return slot;
	}
	return -1;
}

void
warm_unclaim(struct daemon *d, const char *profile, unsigned slot)
{
	warm_add(d, profile, slot, true);
}

void
warm_forget(struct daemon *d)
{
	struct warm_sandbox *w, *next;

	for (w = d->warm; w != NULL; w = next) {
		next = w->next;
		if (!w->ready)
			continue;       /* its answer comes (or "gone") and frees it */
		warm_unlink(d, w);
		free(w);
	}
	if (d->warm_timer != NULL)
		event_free(d->warm_timer);
	d->warm_timer = NULL;
	d->warm_held = false;
}

int
warm_check(const struct config *cfg, const struct profile_set *set, char **message)
{
	char *why = NULL;

	for (size_t i = 0; i < cfg->nwarm_pool; i++) {
		if (profile_set_find(set, cfg->profiles_dir, cfg->warm_pool[i].profile, &why) != NULL)
			continue;
		reason_set(message, "warm_pool: %s", why != NULL ? why : "unknown profile");
		free(why);
		return -1;
	}
	return 0;
}
