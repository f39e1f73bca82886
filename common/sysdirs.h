/* The host's system folders that every sandbox sees, read-only, at their
 * own paths: what corral-init binds, and where identification looks for
 * executables the sandbox cannot have written. */
#ifndef CORRAL_SYSDIRS_H
#define CORRAL_SYSDIRS_H

#include <stdbool.h>

/* NULL-terminated; each absolute, without a trailing slash. corral-init
 * binds those that exist (a symlink, as on merged-/usr systems, is copied
 * as a symlink). */
extern const char *const sysdirs_shown[];

/* True when PATH is DIR or lies below it ("/usr/bin" is below "/usr",
 * "/usrx" is not). */
bool sysdirs_path_within(const char *path, const char *dir);

#endif
