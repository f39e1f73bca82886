/* The system folders a sandbox sees. See sysdirs.h. */
#include "config.h"

#include <string.h>

#include "common/sysdirs.h"

const char *const sysdirs_shown[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc", "/opt", NULL
};

bool
sysdirs_path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strncmp(path, dir, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/' || (n > 0 && dir[n - 1] == '/');
}
