/* The warm pool (corrald.yaml(5), warm_pool; ARCHITECTURE.md, "Warm
 * sandboxes"): sandboxes of a profile built ahead by the monitor (cgroup,
 * corral-init waiting with the tree no spec changes, veth, gateway
 * sockets, identification), which a create of that profile claims. The
 * claim makes the rest as a cold create does (limits, home, grants, roots
 * as the caller, the spec, every layer and check); the pool is refilled
 * in the background, after the create it served.
 *
 * The broker keeps which slots hold warm sandboxes and of which profile;
 * the monitor holds the sandboxes. A warm sandbox is not a sandbox: no
 * registry row, no tenant, no share of a user's; it counts toward
 * max_sandboxes only in that the pool never fills past it. */
#ifndef CORRAL_WARM_H
#define CORRAL_WARM_H

#include <stdbool.h>

struct config;
struct daemon;
struct profile_set;

#define WARM_RETRY_S 5          /* after a warm build failed, before the next */

/* Builds what D's warm_pool asks and the machine has room for; discards
 * warm sandboxes past it (a reload lowered a count). Idempotent. */
void warm_fill(struct daemon *d);
/* Takes a warm sandbox of PROFILE off the pool: its slot, or -1 when none
 * is ready. The create that took it gives it to the monitor, or back. */
int warm_claim(struct daemon *d, const char *profile);
/* Puts SLOT, claimed for PROFILE by a create refused before the monitor
 * saw it, back in the pool. */
void warm_unclaim(struct daemon *d, const char *profile, unsigned slot);
/* Whether a warm sandbox holds SLOT (built or being built). */
bool warm_slot_taken(const struct daemon *d, unsigned slot);
/* The warm sandboxes warm_pool asks for, over every profile. */
unsigned warm_wanted_total(const struct daemon *d);
/* Warm sandboxes of PROFILE (NULL: every profile), READY ones or all. */
unsigned warm_count(const struct daemon *d, const char *profile, bool ready);
/* Warm sandboxes the monitor is building: one at a time (warm_fill). */
unsigned warm_building(const struct daemon *d);
/* Forgets the ready warm sandboxes (the monitor went, or corrald stops:
 * the monitor tears them down). */
void warm_forget(struct daemon *d);
/* Checks that every profile CFG's warm_pool names is in SET: -1 with a
 * one-line *MESSAGE (malloc'd) naming the first that is not. */
int warm_check(const struct config *cfg, const struct profile_set *set, char **message);

#endif
