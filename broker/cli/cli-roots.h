/* --root PATH[:ro] arguments of the CLI, as absolute paths: shared by
 * `policy render` and `sandbox create`. */
#ifndef CORRAL_CLI_ROOTS_H
#define CORRAL_CLI_ROOTS_H

#include <stdbool.h>

#include "common/limits.h"


/* An absolute spelling of PATH (free() it): resolved when it exists, else
 * joined to the current folder, so that paths that do not exist yet still
 * render. NULL when the current folder cannot be named. */
char *cli_absolute_path(const char *path);

/* Parses ARG, PATH[:ro|:rw], into a new absolute path in *PATH (free() it)
 * and *WRITABLE (true unless ":ro"). 0, or CLI_EXIT_FAILED with the reason
 * printed. */
int cli_root_parse(const char *arg, char **path, bool *writable);

#endif
