/* The built-in credential grants. */
#include "config.h"

#include <string.h>

#include "policy/grant.h"

/* The env values point the tools at the copies by name, so they work
 * whatever HOME a tool trusts (ssh takes the home from the password file,
 * not from $HOME: hence the config block and -F).
 * kube has no fixed hosts: its cluster's address is read from the copied
 * kubeconfig when the grant is applied to a sandbox. */
static const struct grant_def grant_table[] = {
	{ "ssh", { ".ssh", NULL }, { "github.com:22", "gitlab.com:22", NULL }, 2,
	    { "GIT_SSH_COMMAND=ssh -F " GRANT_HOME_VAR "/.ssh/config", NULL } },
	{ "gh", { ".config/gh", NULL },
	    { "api.github.com:443", "github.com:443", NULL }, 2,
	    { "GH_CONFIG_DIR=" GRANT_HOME_VAR "/.config/gh", NULL } },
	{ "aws", { ".aws", NULL }, { "**.amazonaws.com:443", NULL }, 1,
	    { "AWS_CONFIG_FILE=" GRANT_HOME_VAR "/.aws/config",
	      "AWS_SHARED_CREDENTIALS_FILE=" GRANT_HOME_VAR "/.aws/credentials", NULL } },
	{ "kube", { ".kube", NULL }, { NULL }, 0,
	    { "KUBECONFIG=" GRANT_HOME_VAR "/.kube/config", NULL } },
};

const struct grant_def *
grant_builtin(const char *name)
{
	for (size_t i = 0; i < sizeof(grant_table) / sizeof(grant_table[0]); i++)
		if (strcmp(grant_table[i].name, name) == 0)
			return &grant_table[i];
	return NULL;
}

const char *
grant_builtin_names(void)
{
	return "ssh, gh, aws, kube";
}
