/* Which executables a binary-scoped entry may match: the mounts the
 * sandbox cannot have written, read from corral-init's mount table. See
 * exetrust.h for the contract. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sysdirs.h"
#include "egress-proxy/exetrust.h"

#define EXETRUST_PROC_PATH_BYTES 48     /* "/proc/", a pid, "/mountinfo" */
#define EXETRUST_FIELDS 6               /* id, parent, dev, root, mount point, options */

/* One line of a mount table, as far as trust needs it. */
struct exetrust_line {
	uint32_t id;
	char point[PATH_MAX];           /* the mount point, unescaped */
	bool read_only;                 /* the mount's own options hold "ro" */
};

/* Copies the space-ended field at *P into OUT (SIZE bytes), undoing the
 * kernel's octal escapes (\040 for a space, ...); moves *P past it. */
static int
exetrust_field(const char **p, char *out, size_t size)
{
	const char *s = *p;
	size_t n = 0;

	while (*s != ' ' && *s != '\n' && *s != '\0') {
		char c = *s++;

		if (c == '\\' && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' && s[1] <= '7' &&
		    s[2] >= '0' && s[2] <= '7') {
			c = (char)((s[0] - '0') << 6 | (s[1] - '0') << 3 | (s[2] - '0'));
			s += 3;
		}
		if (n + 1 >= size)
			return -1;
		out[n++] = c;
	}
	out[n] = '\0';
	if (*s == ' ')
		s++;
	*p = s;
	return n > 0 ? 0 : -1;
}

/* True when the comma-separated OPTIONS hold the word "ro". */
static bool
exetrust_has_ro(const char *options)
{
	return strcmp(options, "ro") == 0 || strncmp(options, "ro,", 3) == 0;
}

/* Reads the line at *P into L and moves *P to the next one. */
static int
exetrust_read_line(const char **p, struct exetrust_line *l)
{
	char field[PATH_MAX], *end;
	unsigned long id;

	for (int i = 0; i < EXETRUST_FIELDS; i++) {
		if (exetrust_field(p, i == 4 ? l->point : field,
		    i == 4 ? sizeof(l->point) : sizeof(field)) == -1)
			return -1;
		if (i == 0) {
			errno = 0;
			id = strtoul(field, &end, 10);
			if (errno != 0 || *end != '\0' || id == 0 || id > UINT32_MAX)
				return -1;
			l->id = (uint32_t)id;
		}
		if (i == 5)
			l->read_only = exetrust_has_ro(field);
	}
	if (l->point[0] != '/')
		return -1;
	*p += strcspn(*p, "\n");
	if (**p == '\n')
		(*p)++;
	return 0;
}

/* True when a mount at POINT, read-only, holds only what the sandbox
 * cannot have written. */
static bool
exetrust_point_trusted(const char *point, const char *const *excluded, size_t nexcluded)
{
	bool system = false;

	for (const char *const *d = sysdirs_shown; *d != NULL && !system; d++)
		system = sysdirs_path_within(point, *d);
	for (size_t i = 0; system && i < nexcluded; i++)
		if (sysdirs_path_within(point, excluded[i]))
			system = false;
	return system;
}

int
exetrust_parse(struct exetrust *t, const char *text, const char *const *excluded,
    size_t nexcluded, const char **why)
{
	struct exetrust_line l;
	const char *p = text;

	t->n = 0;
	while (*p != '\0') {
		if (exetrust_read_line(&p, &l) == -1) {
			*why = "a line of its mount table cannot be read";
			return -1;
		}
		if (!l.read_only || !exetrust_point_trusted(l.point, excluded, nexcluded))
			continue;
		if (t->n == EXETRUST_MOUNTS_MAX) {
			*why = "its system folders hold too many mounts";
			return -1;
		}
		t->mounts[t->n++] = l.id;
	}
	return 0;
}

/* Reads PATH whole into a NUL-ended buffer (free() it); NULL on failure. */
static char *
exetrust_read_file(const char *path)
{
	char *text = malloc(EXETRUST_MOUNTINFO_MAX_BYTES + 1);
	size_t used = 0;
	ssize_t n = 1;
	int fd;

	if (text == NULL || (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		free(text);
		return NULL;
	}
	while (n > 0 && used < EXETRUST_MOUNTINFO_MAX_BYTES) {
		n = read(fd, text + used, EXETRUST_MOUNTINFO_MAX_BYTES - used);
		if (n == -1 && errno == EINTR)
			n = 1;
		else if (n > 0)
			used += (size_t)n;
	}
	close(fd);
	if (n == -1 || used == EXETRUST_MOUNTINFO_MAX_BYTES) {
		free(text);
		errno = n == -1 ? errno : EFBIG;
		return NULL;
	}
	text[used] = '\0';
	return text;
}

int
exetrust_load(struct exetrust *t, pid_t init_pid, const char *const *excluded,
    size_t nexcluded, const char **why)
{
	char path[EXETRUST_PROC_PATH_BYTES];
	char *text;
	int rc;

	snprintf(path, sizeof(path), "/proc/%ld/mountinfo", (long)init_pid);
	if ((text = exetrust_read_file(path)) == NULL) {
		*why = "its mount table cannot be read";
		return -1;
	}
	rc = exetrust_parse(t, text, excluded, nexcluded, why);
	free(text);
	return rc;
}

bool
exetrust_allows(const struct exetrust *t, const struct exetrust_file *f)
{
	bool mounted = false;

	for (size_t i = 0; i < t->n && !mounted; i++)
		mounted = t->mounts[i] == f->mnt_id;
	return mounted && f->uid == 0 && (f->mode & (S_IWGRP | S_IWOTH)) == 0 && !f->acl;
}
