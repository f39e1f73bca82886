/* Landlock rulesets built from paths and applied as nested layers, through
 * the raw system calls so the ABI is the running kernel's, not the build
 * machine's headers'. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "broker/init/landlock-abi.h"
#include "broker/init/landlock.h"

/* The rights that apply to a file; Landlock refuses the others on one. */
#define LL_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
	LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
	LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define LL_RIGHTS_READ_ONLY (LANDLOCK_ACCESS_FS_EXECUTE | \
	LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_RIGHTS_DEV (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
	LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_READ_DIR)
/* The ABI that brought each right past ABI 1, and scopes. */
#define LL_ABI_REFER 2
#define LL_ABI_TRUNCATE 3
#define LL_ABI_NET 4
#define LL_ABI_IOCTL_DEV 5
#define LL_ABI_SCOPES 6

struct ll_rule {
	int fd;            /* O_PATH descriptor of the file or folder */
	uint64_t access;   /* LANDLOCK_ACCESS_FS_* granted beneath it */
};

struct ll_ruleset {
	int abi;
	uint64_t scoped;             /* LANDLOCK_SCOPE_* */
	size_t n_rules;
	struct ll_rule rules[LL_RULES_MAX];
};

int
landlock_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);

	/* ENOSYS: not built in; EOPNOTSUPP: built in but not enabled at boot. */
	return abi > 0 ? (int)abi : 0;
}

void
ll_status(int abi, struct ll_status *st)
{
	st->abi = abi;
	st->n_missing = 0;
	if (abi < 1)
		snprintf(st->missing[st->n_missing++], LL_MISSING_TEXT_MAX_BYTES,
		    "Landlock unavailable (kernel without it, or not in lsm=)");
	else if (abi < LL_ABI_FULL)
		snprintf(st->missing[st->n_missing++], LL_MISSING_TEXT_MAX_BYTES,
		    "Landlock ABI %d < %d (scopes)", abi, LL_ABI_FULL);
}

/* Every file-system right ABI knows: the handled set, so none is left open. */
static uint64_t
ll_fs_rights(int abi)
{
	uint64_t rights = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;

	if (abi >= LL_ABI_REFER)
		rights |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= LL_ABI_TRUNCATE)
		rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= LL_ABI_IOCTL_DEV)
		rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return rights;
}

struct ll_ruleset *
ll_new(int abi)
{
	struct ll_ruleset *rs;

	if (abi < 1) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	rs = calloc(1, sizeof(*rs));
	if (rs == NULL)
		return NULL;
	rs->abi = abi > LANDLOCK_ABI_KNOWN ? LANDLOCK_ABI_KNOWN : abi;
	return rs;
}

/* The Landlock rights for ACCESS on a file (IS_DIR 0) or folder, in ABI. */
static uint64_t
ll_rights_for(enum ll_access access, int is_dir, int abi)
{
	uint64_t rights = 0;

	switch (access) {
	case LL_READ_ONLY:
		rights = LL_RIGHTS_READ_ONLY;
		break;
	case LL_READ_WRITE:
		rights = ll_fs_rights(abi);
		break;
	case LL_DEV:
		rights = LL_RIGHTS_DEV;
		break;
	case LL_TERMINAL:
		/* Terminals need their ioctls (window size, job control). */
		rights = LL_RIGHTS_DEV | LANDLOCK_ACCESS_FS_IOCTL_DEV;
		break;
	}
	if (!is_dir)
		rights &= LL_FILE_RIGHTS;
	return rights & ll_fs_rights(abi);
}

int
ll_allow_fd(struct ll_ruleset *rs, int fd, enum ll_access access)
{
	struct stat st;
	int copy;

	if (rs->n_rules == LL_RULES_MAX) {
		errno = ENOSPC;
		return -1;
	}
	if ((unsigned int)access > LL_TERMINAL) {
		errno = EINVAL;
		return -1;
	}
	if (fstat(fd, &st) == -1)
		return -1;
	copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy == -1)
		return -1;
	rs->rules[rs->n_rules].fd = copy;
	rs->rules[rs->n_rules].access = ll_rights_for(access, S_ISDIR(st.st_mode), rs->abi);
	rs->n_rules++;
	return 0;
}

int
ll_allow_path(struct ll_ruleset *rs, const char *path, enum ll_access access)
{
	int fd, rc, saved;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd == -1)
		return -1;
	rc = ll_allow_fd(rs, fd, access);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int
ll_scope(struct ll_ruleset *rs, unsigned int scopes)
{
	if (rs->abi < LL_ABI_SCOPES) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (scopes & ~(LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL)) {
		errno = EINVAL;
		return -1;
	}
	if (scopes & LL_SCOPE_ABSTRACT_UNIX)
		rs->scoped |= LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
	if (scopes & LL_SCOPE_SIGNAL)
		rs->scoped |= LANDLOCK_SCOPE_SIGNAL;
	return 0;
}

/* A ruleset descriptor handling every file-system right of RS's ABI. */
static int
ll_create(const struct ll_ruleset *rs)
{
	struct corral_landlock_ruleset_attr attr = {
		.handled_access_fs = ll_fs_rights(rs->abi),
		.scoped = rs->scoped,
	};
	size_t size = sizeof(attr.handled_access_fs);

	/* Each ABI takes the attribute as long as it knows it, no longer. */
	if (rs->abi >= LL_ABI_SCOPES)
		size = sizeof(attr);
	else if (rs->abi >= LL_ABI_NET)
		size = offsetof(struct corral_landlock_ruleset_attr, scoped);
	return (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0U);
}

/* Adds RS's rules to the ruleset descriptor FD. */
static int
ll_add_rules(const struct ll_ruleset *rs, int fd)
{
	struct corral_landlock_path_beneath_attr beneath;
	size_t i;

	for (i = 0; i < rs->n_rules; i++) {
		beneath.allowed_access = rs->rules[i].access;
		beneath.parent_fd = rs->rules[i].fd;
		if (syscall(__NR_landlock_add_rule, fd,
		    CORRAL_LANDLOCK_RULE_PATH_BENEATH, &beneath, 0U) == -1)
			return -1;
	}
	return 0;
}

int
ll_restrict_self(struct ll_ruleset *rs)
{
	int fd, rc = -1, saved;

	fd = ll_create(rs);
	if (fd == -1)
		return -1;
	if (ll_add_rules(rs, fd) == -1)
		goto out;
	/* Landlock demands it, and a setuid program must not shed the layer. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		goto out;
	if (syscall(__NR_landlock_restrict_self, fd, 0U) == -1)
		goto out;
	rc = 0;
out:
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int
ll_domain_only(int abi, unsigned int scopes)
{
	struct corral_landlock_ruleset_attr attr = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_BLOCK,
	};
	size_t size = sizeof(attr.handled_access_fs);
	int fd, rc = -1, saved;

	if (abi < 1 || (scopes & ~(LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL))) {
		errno = abi < 1 ? EOPNOTSUPP : EINVAL;
		return -1;
	}
	if (abi >= LL_ABI_SCOPES) {
		attr.scoped = ((scopes & LL_SCOPE_ABSTRACT_UNIX) ?
		    LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET : 0) |
		    ((scopes & LL_SCOPE_SIGNAL) ? LANDLOCK_SCOPE_SIGNAL : 0);
		size = sizeof(attr);
	}
	fd = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0U);
	if (fd == -1)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	    syscall(__NR_landlock_restrict_self, fd, 0U) == 0)
		rc = 0;
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

void
ll_free(struct ll_ruleset *rs)
{
	size_t i;

	if (rs == NULL)
		return;
	for (i = 0; i < rs->n_rules; i++)
		close(rs->rules[i].fd);
	free(rs);
}
