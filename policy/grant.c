/* The built-in credential grants. */
#include "config.h"

#include <string.h>

#include "policy/grant.h"

/* kube has no fixed hosts: its cluster's address is read from the copied
 * kubeconfig when the grant is applied to a sandbox. */
static const struct grant_def grant_table[] = {
	{ "ssh", { ".ssh", NULL }, { "github.com:22", "gitlab.com:22", NULL }, 2 },
	{ "gh", { ".config/gh", NULL },
	    { "api.github.com:443", "github.com:443", NULL }, 2 },
	{ "aws", { ".aws", NULL }, { "**.amazonaws.com:443", NULL }, 1 },
	{ "kube", { ".kube", NULL }, { NULL }, 0 },
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
