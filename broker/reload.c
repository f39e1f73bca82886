/* Reloads (SIGHUP, corral reload): corrald.yaml and every profile read
 * again and checked whole before anything changes; then the keys that may
 * change while running take their new values, creates take the new
 * profiles, host mode's policy is replaced, and every running sandbox on
 * a profile follows its new version. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/conf.h"
#include "broker/daemon.h"
#include "broker/reload.h"
#include "broker/sandbox.h"
#include "broker/warm.h"
#include "common/log.h"
#include "common/reason.h"
#include "common/timeutil.h"
#include "common/xmalloc.h"
#include "egress-proxy/proxy.h"
#include "policy/load.h"
#include "policy/profile.h"

/* The parts of a reload checked before anything changes. */
struct reload_next {
	struct config *cfg;
	struct profile_set *profiles;
	struct policy *host;            /* host mode's next policy, or NULL */
};

static void
reload_add(char ***list, size_t *n, const char *text)
{
	*list = xreallocarray(*list, *n + 1, sizeof(**list));
	(*list)[(*n)++] = xstrdup(text);
}

/* Every line of DIAGS (FILE:LINE:COL: message) as an error of R. */
static void
reload_add_diags(struct reload_result *r, const struct policy_diags *diags)
{
	char *text = policy_diags_format(diags, POLICY_DIAG_ONE_LINE), *save = NULL;

	for (char *line = text != NULL ? strtok_r(text, "\n", &save) : NULL; line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		reload_add(&r->errors, &r->nerrors, line);
	free(text);
}

struct policy *
reload_host_policy(const struct config *cfg, const struct profile_set *set,
    struct policy_diags *diags, char **message)
{
	const struct config_host_proxy *hp = &cfg->host_proxy;
	struct policy *p = NULL;
	const struct policy *profile;

	if (hp->policy != NULL) {
		if (policy_load_file(hp->policy, &p, diags) != 0)
			reason_set(message, "host proxy: the policy %s does not load", hp->policy);
		return p;
	}
	if ((profile = profile_set_find(set, cfg->profiles_dir, hp->profile != NULL ?
	    hp->profile : PROFILE_DEFAULT_NAME, message)) == NULL)
		return NULL;
	if ((p = policy_dup(profile)) == NULL)
		reason_set(message, "host proxy: out of memory");
	return p;
}

/* Loads what the reload would put in force into NEXT; false with R's
 * errors when any of it does not load. */
static bool
reload_check(struct daemon *d, struct reload_next *next, struct reload_result *r)
{
	struct policy_diags diags;
	char *message = NULL;
	bool ok = false;

	policy_diags_init(&diags);
	if (config_load(d->config_path, d->config_explicit, &next->cfg, &diags) == -1) {
		if (diags.count == 0)
			reload_add(&r->errors, &r->nerrors, "the configuration does not load");
		goto out;
	}
	/* From the folder corrald started with (a new profiles_dir is for the
	 * next start: the monitor's list of corrald's own folders has it). */
	if (profile_set_load(d->cfg->profiles_dir, &next->profiles, &diags, &message) !=
	    PROFILE_OK)
		goto out;
	if (d->host != NULL &&
	    (next->host = reload_host_policy(next->cfg, next->profiles, &diags, &message)) == NULL)
		goto out;
	if (warm_check(next->cfg, next->profiles, &message) == -1)
		goto out;
	ok = true;
out:
	/* The positions first: status shows the first error. */
	reload_add_diags(r, &diags);
	if (message != NULL)
		reload_add(&r->errors, &r->nerrors, message);
	policy_diags_clear(&diags);
	free(message);
	return ok;
}

/* True when texts A and B differ (either may be NULL). */
static bool
reload_differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a != NULL && strcmp(a, b) != 0);
}

/* Names in R the keys NEXT changes that only a restart puts in force. */
static void
reload_restart_keys(const struct config *now, const struct config *next,
    struct reload_result *r)
{
	const struct { const char *key; const char *a, *b; } texts[] = {
		{ "user", now->user, next->user },
		{ "profiles_dir", now->profiles_dir, next->profiles_dir },
		{ "machine_id", now->machine_id, next->machine_id },
		{ "host_proxy.listen", now->host_proxy.listen, next->host_proxy.listen },
		{ "host_proxy.transparent", now->host_proxy.transparent,
		  next->host_proxy.transparent },
		{ "host_proxy.dns", now->host_proxy.dns, next->host_proxy.dns },
		{ "metrics.listen", now->metrics_listen, next->metrics_listen },
		{ "ledger_group", now->ledger_group, next->ledger_group },
		{ "host_proxy.cgroup", now->host_proxy.cgroup, next->host_proxy.cgroup },
	};
	struct proxy_limits a = now->egress, b = next->egress;
	bool dns_same = now->ndns_upstream == next->ndns_upstream;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (reload_differs(texts[i].a, texts[i].b))
			reload_add(&r->restart_keys, &r->nrestart_keys, texts[i].key);
	/* max_tunnels may have been lowered to the descriptor limit at the start. */
	a.max_tunnels = b.max_tunnels = 0;
	if (memcmp(&a, &b, sizeof(a)) != 0)
		reload_add(&r->restart_keys, &r->nrestart_keys, "egress");
	if (now->pool.family != next->pool.family || now->pool.prefix_len != next->pool.prefix_len ||
	    memcmp(now->pool.addr, next->pool.addr, sizeof(now->pool.addr)) != 0)
		reload_add(&r->restart_keys, &r->nrestart_keys, "network.pool");
	/* The descriptor budget was set for it at the start (corrald(8), DESCRIPTORS). */
	if (now->max_sandboxes != next->max_sandboxes)
		reload_add(&r->restart_keys, &r->nrestart_keys, "max_sandboxes");
	for (size_t i = 0; dns_same && i < now->ndns_upstream; i++)
		dns_same = strcmp(now->dns_upstream[i], next->dns_upstream[i]) == 0;
	if (!dns_same)
		reload_add(&r->restart_keys, &r->nrestart_keys, "dns.upstream");
	if (now->nallow_cidrs != next->nallow_cidrs || (now->nallow_cidrs > 0 &&
	    memcmp(now->allow_cidrs, next->allow_cidrs,
	    now->nallow_cidrs * sizeof(*now->allow_cidrs)) != 0))
		reload_add(&r->restart_keys, &r->nrestart_keys, "egress.allow_cidrs");
	if (now->ncredentials != next->ncredentials)
		reload_add(&r->restart_keys, &r->nrestart_keys, "credentials");
	if (now->nsecrets != next->nsecrets)
		reload_add(&r->restart_keys, &r->nrestart_keys, "secrets");
}

/* The keys that change while corrald runs: what the next request is held to. */
static void
reload_take_keys(struct config *now, struct config *next)
{
	now->shares = next->shares;
	now->max_sandboxes_per_user = next->max_sandboxes_per_user;
	now->limits = next->limits;
	/* Taken whole: the pool follows it once the reload is in force. */
	config_warm_pool_free(now);
	now->warm_pool = next->warm_pool;
	now->nwarm_pool = next->nwarm_pool;
	next->warm_pool = NULL;
	next->nwarm_pool = 0;
}

/* Every running sandbox on a profile, its policy not set by hand since,
 * follows that profile's new version; recorded in the ledger. */
static void
reload_follow(struct daemon *d, bool close_revoked, struct reload_result *r)
{
	char version[POLICY_HOST_MAX_BYTES + 32];

	for (struct sandbox *sb = d->sandboxes; sb != NULL; sb = sb->next) {
		const struct policy *profile;
		size_t closed = 0;
		char *err = NULL;

		if (sb->profile == NULL || sb->policy_edited || sb->tenant == NULL)
			continue;
		if ((profile = profile_set_find(d->profiles, d->cfg->profiles_dir, sb->profile,
		    &err)) == NULL ||
		    sandbox_follow_profile(d, sb, profile, close_revoked, &closed, &err) == -1) {
			log_warnx("reload: sandbox %s keeps its policy: %s", sb->name,
			    err != NULL ? err : "its profile is gone");
			free(err);
			continue;
		}
		snprintf(version, sizeof(version), "%s#%llu", sb->profile,
		    (unsigned long long)d->profiles_version);
		(void)proxy_tenant_record_lifecycle_policy(sb->tenant, "policy_updated", version);
		r->sandboxes_updated++;
		r->tunnels_closed += closed;
	}
}

/* Puts NEXT in force (it is taken). */
static void
reload_commit(struct daemon *d, struct reload_next *next, bool close_revoked,
    struct reload_result *r)
{
	size_t closed = 0;

	reload_restart_keys(d->cfg, next->cfg, r);
	reload_take_keys(d->cfg, next->cfg);
	config_free(next->cfg);
	profile_set_free(d->profiles);
	d->profiles = next->profiles;
	d->profiles_version++;
	if (next->host != NULL && proxy_tenant_set_policy(d->host, next->host, close_revoked,
	    &closed) == -1)
		log_error("reload: out of memory; host mode keeps its policy");
	r->tunnels_closed += closed;
	reload_follow(d, close_revoked, r);
	r->version = d->profiles_version;
	warm_fill(d);
}

static void
reload_log(const struct reload_result *r)
{
	if (!r->ok) {
		log_error("reload: nothing changed: %zu error%s", r->nerrors,
		    r->nerrors == 1 ? "" : "s");
		for (size_t i = 0; i < r->nerrors; i++)
			log_error("reload: %s", r->errors[i]);
		return;
	}
	log_info("reload: profiles version %llu in force; %u sandbox%s follow%s it, %zu "
	    "tunnel%s closed", (unsigned long long)r->version, r->sandboxes_updated,
	    r->sandboxes_updated == 1 ? "" : "es", r->sandboxes_updated == 1 ? "s" : "",
	    r->tunnels_closed, r->tunnels_closed == 1 ? "" : "s");
	for (size_t i = 0; i < r->nrestart_keys; i++)
		log_warnx("reload: %s changed: it takes effect at the next start",
		    r->restart_keys[i]);
}

int
daemon_reload(struct daemon *d, bool close_revoked, struct reload_result *r)
{
	struct reload_next next = { 0 };

	memset(r, 0, sizeof(*r));
	r->ok = reload_check(d, &next, r);
	if (r->ok) {
		reload_commit(d, &next, close_revoked, r);
	} else {
		config_free(next.cfg);
		profile_set_free(next.profiles);
		policy_free(next.host);
		r->version = d->profiles_version;
	}
	free(d->reload.error);
	d->reload.error = !r->ok && r->nerrors > 0 ? xstrdup(r->errors[0]) : NULL;
	d->reload.ok = r->ok;
	d->reload.at_us = time_now_us();
	reload_log(r);
	return r->ok ? 0 : -1;
}

void
reload_result_clear(struct reload_result *r)
{
	for (size_t i = 0; i < r->nerrors; i++)
		free(r->errors[i]);
	for (size_t i = 0; i < r->nrestart_keys; i++)
		free(r->restart_keys[i]);
	free(r->errors);
	free(r->restart_keys);
	memset(r, 0, sizeof(*r));
}

int
daemon_profiles_start(struct daemon *d)
{
	struct reload_result r = { 0 };
	struct policy_diags diags;
	char *message = NULL;

	policy_diags_init(&diags);
	if (profile_set_load(d->cfg->profiles_dir, &d->profiles, &diags, &message) != PROFILE_OK) {
		if (message != NULL)
			reload_add(&r.errors, &r.nerrors, message);
		reload_add_diags(&r, &diags);
		for (size_t i = 0; i < r.nerrors; i++)
			log_error("%s", r.errors[i]);
		reload_result_clear(&r);
	} else if (warm_check(d->cfg, d->profiles, &message) == -1) {
		log_error("%s", message);
		profile_set_free(d->profiles);
		d->profiles = NULL;
	} else {
		d->profiles_version = 1;
	}
	policy_diags_clear(&diags);
	free(message);
	return d->profiles != NULL ? 0 : -1;
}
