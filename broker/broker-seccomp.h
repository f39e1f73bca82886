/* The broker's seccomp filter (ARCHITECTURE.md, "Privileges"): an allow-list
 * of the system calls the broker makes, with their arguments narrowed where
 * that matters; everything else fails. */
#ifndef CORRAL_BROKER_SECCOMP_H
#define CORRAL_BROKER_SECCOMP_H

#include <stdbool.h>

/* Installs it on the calling process (after no_new_privs); 0 or -1. */
int broker_seccomp_install(void);
/* False in a sanitizer build, whose filter is a deny-list instead. */
bool broker_seccomp_is_allow_list(void);

#endif
