/* The built-in credential grants. */
#include "config.h"

#include <stdio.h>
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

/* How many entries of the NULL-terminated V (at most MAX). */
static size_t
grant_count(const char *const *v, size_t max)
{
	size_t n = 0;

	while (n < max && v[n] != NULL)
		n++;
	return n;
}

int
grant_find(const char *name, const struct grant *extra, size_t nextra, struct grant *out)
{
	const struct grant_def *d = grant_builtin(name);

	if (d != NULL) {
		*out = (struct grant){ d->name, d->paths, grant_count(d->paths, GRANT_MAX_PATHS),
		    d->hosts, d->nhosts, d->env, grant_count(d->env, GRANT_MAX_ENV) };
		return 0;
	}
	for (size_t i = 0; i < nextra; i++)
		if (extra[i].name != NULL && strcmp(extra[i].name, name) == 0) {
			*out = extra[i];
			return 0;
		}
	return -1;
}

void
grant_names(const struct grant *extra, size_t nextra, char *buf, size_t size)
{
	size_t len;

	snprintf(buf, size, "%s", grant_builtin_names());
	for (size_t i = 0; i < nextra; i++) {
		len = strlen(buf);
		if (extra[i].name != NULL && len < size)
			snprintf(buf + len, size - len, ", %s", extra[i].name);
	}
}
