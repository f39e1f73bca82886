/* corrald --check-config. See checkconf.h. */
#include "config.h"

#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "broker/checkconf.h"
#include "broker/conf.h"
#include "policy/diag.h"
#include "policy/load.h"
#include "policy/profile.h"

/* Every profile of CFG's folder, each loaded: the loader's errors go to
 * DIAGS (they carry FILE:LINE:COL), any other trouble to ERR. Returns how
 * many loaded, -1 when one did not or the folder cannot be listed. */
static int
checkconf_profiles(const struct config *cfg, struct policy_diags *diags, FILE *err)
{
	struct profile_list list = { 0 };
	enum profile_err e;
	int loaded = 0, failed = 0;

	if ((e = profile_list(cfg->profiles_dir, &list)) != PROFILE_OK) {
		fprintf(err, "%s: %s\n", cfg->profiles_dir, profile_strerror(e));
		return -1;
	}
	for (size_t i = 0; i < list.count; i++) {
		struct policy *p = NULL;
		char *message = NULL;

		e = profile_load(cfg->profiles_dir, list.names[i], &p, diags, &message);
		if (e == PROFILE_OK)
			loaded++;
		else
			failed++;
		if (e != PROFILE_OK && e != PROFILE_ERR_LOAD)
			fprintf(err, "%s: %s\n", list.names[i], message != NULL ? message :
			    profile_strerror(e));
		policy_free(p);
		free(message);
	}
	profile_list_clear(&list);
	return failed > 0 ? -1 : loaded;
}

/* Host mode's policy: its file, or its profile (which must be one of the
 * folder's). 0 when it loads or host mode is off. */
static int
checkconf_host_policy(const struct config *cfg, struct policy_diags *diags, FILE *err)
{
	const struct config_host_proxy *hp = &cfg->host_proxy;
	struct policy *p = NULL;
	char *message = NULL;
	int rc = 0;

	if (!hp->enabled)
		return 0;
	if (hp->policy != NULL) {
		rc = policy_load_file(hp->policy, &p, diags) == 0 ? 0 : -1;
	} else if (profile_load(cfg->profiles_dir, hp->profile != NULL ? hp->profile :
	    PROFILE_DEFAULT_NAME, &p, NULL, &message) != PROFILE_OK) {
		fprintf(err, "host_proxy.profile: %s\n", message != NULL ? message :
		    "cannot be loaded");
		rc = -1;
	}
	policy_free(p);
	free(message);
	return rc;
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
	int profiles = -1, host = -1, accounts = -1;
	char *text;
	bool ok;

	policy_diags_init(&diags);
	if (config_load(name, path != NULL, &cfg, &diags) == 0) {
		profiles = checkconf_profiles(cfg, &diags, err);
		host = checkconf_host_policy(cfg, &diags, err);
		accounts = checkconf_accounts(cfg, err);
	}
	if (diags.count > 0 && (text = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE)) != NULL) {
		fputs(text, err);
		free(text);
	}
	ok = cfg != NULL && diags.count == 0 && profiles >= 0 && host == 0 && accounts == 0;
	if (ok)
		fprintf(out, "%s: configuration ok, %d profile%s in %s\n", name, profiles,
		    profiles == 1 ? "" : "s", cfg->profiles_dir);
	else if (cfg == NULL && diags.count == 0)
		fprintf(err, "%s: cannot be loaded (out of memory)\n", name);
	config_free(cfg);
	policy_diags_clear(&diags);
	return ok ? 0 : 1;
}
