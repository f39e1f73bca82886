/* Reloads: corrald.yaml and every profile read again, all valid or
 * nothing changes (corrald(8), SIGNALS; corral reload). */
#ifndef CORRAL_RELOAD_H
#define CORRAL_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct config;
struct daemon;
struct policy;
struct policy_diags;
struct profile_set;

/* What a reload did, for its answer and the log. */
struct reload_result {
	bool ok;
	char **errors;                  /* FILE:LINE:COL: lines, or one reason */
	size_t nerrors;
	char **restart_keys;            /* changed, in force at the next start */
	size_t nrestart_keys;
	uint64_t version;               /* the profiles' version in force */
	unsigned sandboxes_updated;
	size_t tunnels_closed;
};

/* Reads corrald.yaml and every profile again; when all of it loads, puts
 * it in force: the keys that may change while running, the profiles for
 * creates, host mode's policy, and the policy of every running sandbox on
 * a profile whose policy was not set by hand (CLOSE_REVOKED closes the
 * tunnels a new policy refuses). Otherwise nothing changes. Fills R
 * (reload_result_clear() it); 0, or -1 when nothing changed. */
int daemon_reload(struct daemon *d, bool close_revoked, struct reload_result *r);
void reload_result_clear(struct reload_result *r);

/* Host mode's policy as CFG and the profiles SET say: its file, else its
 * profile (a copy). NULL with *MESSAGE (malloc'd, may stay NULL) and the
 * loader's errors in DIAGS. */
struct policy *reload_host_policy(const struct config *cfg, const struct profile_set *set,
    struct policy_diags *diags, char **message);

#endif
