/* corrald --check-config: what a start would load, loaded and judged, with
 * nothing started (like nginx -t): the configuration file, every profile
 * of its profiles folder, and host mode's policy file or profile. */
#ifndef CORRAL_CHECKCONF_H
#define CORRAL_CHECKCONF_H

#include <stdio.h>

/* Loads PATH (NULL: the default file, which may be missing) and what it
 * names. Every error goes to ERR as FILE:LINE:COL: message (or a line
 * naming the file); a one-line verdict to OUT when all loaded. Returns 0
 * when all loaded, 1 otherwise: corrald's exit status. */
int checkconf_run(const char *path, FILE *out, FILE *err);

#endif
