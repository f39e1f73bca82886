/* The drop to run_as (ARCHITECTURE.md, "A sandbox's life"), done by
 * corral-init once its mounts are in place and checked again in each workload
 * before exec. Library-like: returns -1 with errno and a reason in ERR, never
 * logs. */
#ifndef CORRAL_DROP_H
#define CORRAL_DROP_H

#include <stddef.h>
#include <sys/types.h>

#define DROP_ERR_MAX_BYTES 256

/* Becomes UID:GID for good: supplementary groups GID only, every
 * capability set empty (bounding and ambient included), securebits NOROOT,
 * NO_SETUID_FIXUP and KEEP_CAPS each locked, no_new_privs. Refuses uid or
 * gid 0. Then checks that the result holds (drop_verify). */
int drop_to(uid_t uid, gid_t gid, char *err, size_t errlen);
/* Checks that the calling process has no way back to privilege: no uid or
 * gid 0 among real, effective and saved, no capability in any set,
 * no_new_privs set. */
int drop_verify(char *err, size_t errlen);

#endif
