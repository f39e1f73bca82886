/* --root PATH[:ro] arguments, made absolute before anything is sent or rendered. */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/cli/cli.h"
#include "broker/cli/cli-roots.h"
#include "common/xmalloc.h"

#define CLI_ROOT_SUFFIX_BYTES 3         /* ":ro" or ":rw" */

char *
cli_absolute_path(const char *path)
{
	char resolved[PATH_MAX], cwd[PATH_MAX];
	char *joined;

	if (realpath(path, resolved) != NULL)
		return xstrdup(resolved);
	if (path[0] == '/')
		return xstrdup(path);
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return NULL;
	xasprintf(&joined, "%s/%s", cwd, path);
	return joined;
}

int
cli_root_parse(const char *arg, char **path, bool *writable)
{
	size_t len = strlen(arg);
	char *copy;

	copy = xstrdup(arg);
	*writable = true;
	if (len > CLI_ROOT_SUFFIX_BYTES && (strcmp(arg + len - 3, ":ro") == 0 ||
	    strcmp(arg + len - 3, ":rw") == 0)) {
		*writable = strcmp(arg + len - 3, ":rw") == 0;
		copy[len - CLI_ROOT_SUFFIX_BYTES] = '\0';
	}
	*path = copy[0] != '\0' ? cli_absolute_path(copy) : NULL;
	free(copy);
	if (*path == NULL)
		return cli_fail("--root %s: not a usable path", arg);
	return 0;
}
