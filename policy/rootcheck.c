/* Which folders a sandbox's root may not be; see rootcheck.h. */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "policy/rootcheck.h"

#define ROOTCHECK_PATH_MAX_BYTES PATH_MAX

/* Nothing inside these may be a root: the kernel's views of the host and
 * the folders of its services' sockets. */
static const char *const rootcheck_trees[] = { "/proc", "/sys", "/dev", "/run", "/var/run" };
/* These may not be a root themselves, nor may an ancestor of them. */
static const char *const rootcheck_system[] = { "/", "/proc", "/sys", "/dev", "/run",
	"/var/run", "/var", "/var/lib", "/tmp", "/var/tmp", "/etc", "/boot", "/home", "/root",
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt" };

static const char *const rootcheck_phrases[] = {
	[ROOTCHECK_OK] = "is allowed",
	[ROOTCHECK_NOT_CANONICAL] = "is not an absolute path without \".\", \"..\" or empty parts",
	[ROOTCHECK_KERNEL_TREE] = "lies in a folder of the host's kernel or sockets",
	[ROOTCHECK_SYSTEM] = "is a system or shared folder; name a folder of your own inside it",
	[ROOTCHECK_HOLDS_SYSTEM] = "holds a system or shared folder",
	[ROOTCHECK_CORRALD] = "reaches corrald's own folder",
	[ROOTCHECK_OTHER_HOME] = "reaches another user's home",
};

const char *
rootcheck_strerror(enum rootcheck_rule rule)
{
	if ((size_t)rule >= sizeof(rootcheck_phrases) / sizeof(rootcheck_phrases[0]))
		return "is refused";
	return rootcheck_phrases[rule];
}

bool
rootcheck_path_canonical(const char *path)
{
	const char *p = path;
	size_t n;

	if (path == NULL || path[0] != '/' || strlen(path) >= ROOTCHECK_PATH_MAX_BYTES)
		return false;
	if (path[1] == '\0')
		return true;
	while (*p == '/') {
		p++;
		n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
	}
	return true;
}

/* True when PATH is TREE or lies beneath it. */
static bool
rootcheck_under(const char *path, const char *tree)
{
	size_t n = strlen(tree);

	if (n == 1 && tree[0] == '/')
		return true;
	return strncmp(path, tree, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* True when the two trees meet: one is the other or lies beneath it. */
static bool
rootcheck_overlap(const char *a, const char *b)
{
	return rootcheck_under(a, b) || rootcheck_under(b, a);
}

/* The first of LIST (N) that PATH meets as MATCH says, or NULL. */
static const char *
rootcheck_find(const char *path, const char *const *list, size_t n,
    bool (*match)(const char *, const char *))
{
	for (size_t i = 0; i < n; i++)
		if (list[i] != NULL && list[i][0] == '/' && match(path, list[i]))
			return list[i];
	return NULL;
}

/* True when PATH is F or an ancestor of F. */
static bool
rootcheck_holds(const char *path, const char *f)
{
	return rootcheck_under(f, path);
}

static bool
rootcheck_same(const char *path, const char *f)
{
	return strcmp(path, f) == 0;
}

enum rootcheck_rule
rootcheck_judge(const char *path, const struct rootcheck_context *ctx, const char **what)
{
	static const size_t ntrees = sizeof(rootcheck_trees) / sizeof(rootcheck_trees[0]);
	static const size_t nsystem = sizeof(rootcheck_system) / sizeof(rootcheck_system[0]);
	const char *found = NULL;
	enum rootcheck_rule rule = ROOTCHECK_OK;

	if (!rootcheck_path_canonical(path))
		rule = ROOTCHECK_NOT_CANONICAL;
	else if ((found = rootcheck_find(path, rootcheck_system, nsystem, rootcheck_same)) != NULL)
		rule = ROOTCHECK_SYSTEM;
	else if ((found = rootcheck_find(path, rootcheck_trees, ntrees, rootcheck_under)) != NULL)
		rule = ROOTCHECK_KERNEL_TREE;
	else if ((found = rootcheck_find(path, rootcheck_system, nsystem, rootcheck_holds)) != NULL)
		rule = ROOTCHECK_HOLDS_SYSTEM;
	else if (ctx != NULL && (found = rootcheck_find(path, ctx->own, ctx->nown,
	    rootcheck_overlap)) != NULL)
		rule = ROOTCHECK_CORRALD;
	else if (ctx != NULL && (found = rootcheck_find(path, ctx->homes, ctx->nhomes,
	    rootcheck_overlap)) != NULL)
		rule = ROOTCHECK_OTHER_HOME;
	if (what != NULL)
		*what = found;
	return rule;
}
