/* Dropping every privilege for good, and checking that it stayed dropped. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "broker/init/drop.h"

/* Capability numbers the kernel may know; PR_CAPBSET_* says EINVAL past
 * the last one, so a later kernel's extra ones are still covered. */
#define DROP_CAP_NUMBERS_MAX 64

/* Every bit set, and locked: uid 0 gets no capabilities from execve, a
 * change of uid neither grants nor strips them (we strip them ourselves),
 * and nothing, in any later process, can turn that back. */
#define DROP_SECUREBITS (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | \
	SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED | \
	SECBIT_KEEP_CAPS | SECBIT_KEEP_CAPS_LOCKED | \
	SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

/* Writes "WHAT: strerror(errno)" to ERR and returns -1, errno kept. */
static int
drop_fail(char *err, size_t errlen, const char *what)
{
	int saved = errno;

	snprintf(err, errlen, "%s: %s", what, strerror(saved));
	errno = saved;
	return -1;
}

/* Empties the bounding set, so no execve can hand a capability back. */
static int
drop_bounding(void)
{
	int cap;

	for (cap = 0; cap < DROP_CAP_NUMBERS_MAX; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1) {
			if (errno == EINVAL)
				return 0;
			return -1;
		}
	}
	return 0;
}

/* Empties the effective, permitted and inheritable sets. */
static int
drop_capsets(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	return (int)syscall(SYS_capset, &hdr, data);
}

int
drop_to(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	/* uid 0 reads root's files and writes what root may write, with or
	 * without capabilities: it still owns root's files. */
	if (uid == 0 || gid == 0) {
		errno = EPERM;
		snprintf(err, errlen, "run_as %u:%u refused: a sandbox never runs as "
		    "uid or gid 0; name a regular user with --run-as", uid, gid);
		return -1;
	}
	if (drop_bounding() == -1)
		return drop_fail(err, errlen, "emptying the capability bounding set");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1)
		return drop_fail(err, errlen, "clearing ambient capabilities");
	if (prctl(PR_SET_SECUREBITS, DROP_SECUREBITS, 0, 0, 0) == -1)
		return drop_fail(err, errlen, "locking securebits");
	if (setgroups(1, &gid) == -1)
		return drop_fail(err, errlen, "setgroups");
	if (setresgid(gid, gid, gid) == -1)
		return drop_fail(err, errlen, "setresgid");
	if (setresuid(uid, uid, uid) == -1)
		return drop_fail(err, errlen, "setresuid");
	if (drop_capsets() == -1)
		return drop_fail(err, errlen, "clearing capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return drop_fail(err, errlen, "setting no_new_privs");
	return drop_verify(err, errlen);
}

/* True when no capability is in the effective, permitted or inheritable
 * set, nor in the bounding or ambient set. */
static bool
drop_no_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	int cap, i;

	if (syscall(SYS_capget, &hdr, data) == -1)
		return false;
	for (i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return false;
	}
	for (cap = 0; cap < DROP_CAP_NUMBERS_MAX; cap++) {
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) > 0 ||
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) > 0)
			return false;
	}
	return true;
}

int
drop_verify(char *err, size_t errlen)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1)
		return drop_fail(err, errlen, "reading the process's ids");
	errno = EPERM;
	if (ru == 0 || eu == 0 || su == 0 || rg == 0 || eg == 0 || sg == 0) {
		snprintf(err, errlen, "the drop left an id 0 (uid %u, gid %u)", ru, rg);
		return -1;
	}
	if (!drop_no_caps()) {
		snprintf(err, errlen, "the drop left a capability");
		return -1;
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 ||
	    (prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) & DROP_SECUREBITS) != DROP_SECUREBITS) {
		snprintf(err, errlen, "no_new_privs or the securebits are not set");
		return -1;
	}
	return 0;
}
