/* corrald --check-config. See checkconf.h. */
#include "config.h"

#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "broker/checkconf.h"
#include "broker/conf.h"
#include "broker/reload.h"
#include "broker/warm.h"
#include "policy/diag.h"
#include "policy/load.h"
#include "policy/profile.h"

/* Every profile of CFG's folder, loaded as corrald's start and reloads
 * load them (profile_set_load): the loader's errors go to DIAGS (they
 * carry FILE:LINE:COL), any other trouble to ERR. Host mode's policy too
 * (reload_host_policy). Returns how many profiles loaded, -1 when any of
 * it did not. */
static int
checkconf_profiles(const struct config *cfg, struct policy_diags *diags, FILE *err)
{
	struct profile_set *set = NULL;
	struct policy *host = NULL;
	char *message = NULL;
	size_t before = diags->count;
	int loaded = -1;

	if (profile_set_load(cfg->profiles_dir, &set, diags, &message) != PROFILE_OK) {
		/* A file that does not load has its positions in DIAGS already. */
		if (message != NULL && diags->count == before)
			fprintf(err, "%s\n", message);
	} else if (warm_check(cfg, set, &message) == -1) {
		fprintf(err, "%s\n", message);
	} else if (cfg->host_proxy.enabled &&
	    (host = reload_host_policy(cfg, set, diags, &message)) == NULL) {
		if (message != NULL && diags->count == before)
			fprintf(err, "host_proxy: %s\n", message);
	} else {
		loaded = (int)set->names.count;
	}
	policy_free(host);
	profile_set_free(set);
	free(message);
	return loaded;
}

/* The accounts the file names exist here, as a start needs them. */
static int
checkconf_accounts(const struct config *cfg, FILE *err)
{
	if (cfg->ledger_group != NULL && getgrnam(cfg->ledger_group) == NULL) {
		fprintf(err, "ledger_group: '%s' is not a group of this machine\n",
		    cfg->ledger_group);
		return -1;
	}
	return 0;
}

int
checkconf_run(const char *path, FILE *out, FILE *err)
{
	const char *name = path != NULL ? path : CONFIG_PATH_DEFAULT;
	struct policy_diags diags;
	struct config *cfg = NULL;
	int profiles = -1, accounts = -1;
	char *text;
	bool ok;

	policy_diags_init(&diags);
	if (config_load(name, path != NULL, &cfg, &diags) == 0) {
		profiles = checkconf_profiles(cfg, &diags, err);
		accounts = checkconf_accounts(cfg, err);
	}
	if (diags.count > 0 && (text = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE)) != NULL) {
		fputs(text, err);
		free(text);
	}
	ok = cfg != NULL && diags.count == 0 && profiles >= 0 && accounts == 0;
	if (ok)
		fprintf(out, "%s: configuration ok, %d profile%s in %s\n", name, profiles,
		    profiles == 1 ? "" : "s", cfg->profiles_dir);
	else if (cfg == NULL && diags.count == 0)
		fprintf(err, "%s: cannot be loaded (out of memory)\n", name);
	config_free(cfg);
	policy_diags_clear(&diags);
	return ok ? 0 : 1;
}
