/* Sandbox names: ^[a-z0-9][a-z0-9-]{0,62}$, checked by hand. A name becomes
 * part of paths (<state-dir>/sandboxes/<name>), cgroup names and messages,
 * so nothing outside that set may pass. */
#ifndef CORRAL_POLICY_NAME_H
#define CORRAL_POLICY_NAME_H

#include <stdbool.h>

#define POLICY_NAME_MAX_BYTES 63

/* True when NAME matches ^[a-z0-9][a-z0-9-]{0,62}$; NULL is not a name. */
bool policy_name_valid(const char *name);

/* NULL when NAME is valid, else a static one-line reason
 * ("is longer than 63 characters"), meant to follow the quoted name. */
const char *policy_name_error(const char *name);

#endif
