/* Network profiles: listing a folder's profiles and loading one by name. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/reason.h"
#include "policy/load.h"
#include "policy/name.h"
#include "policy/profile.h"

#define PROFILE_DIR_DEFAULT SYSCONFDIR "/corral/profiles"
#define PROFILE_MESSAGE_MAX_BYTES (16u * 1024)
#define PROFILE_NAME_SHOWN_MAX_BYTES 80  /* of an invalid name, in its message */

static const char *const profile_errors[] = {
	[PROFILE_OK] = "no error",
	[PROFILE_ERR_NOMEM] = "out of memory",
	[PROFILE_ERR_BAD_NAME] = "invalid profile name",
	[PROFILE_ERR_UNKNOWN] = "unknown profile",
	[PROFILE_ERR_DIR] = "the profiles folder cannot be read",
	[PROFILE_ERR_LOAD] = "the profile does not load",
};

const char *
profile_dir_default(void)
{
	return PROFILE_DIR_DEFAULT;
}

const char *
profile_strerror(enum profile_err err)
{
	if ((size_t)err >= sizeof(profile_errors) / sizeof(profile_errors[0]))
		return "unknown profile error";
	return profile_errors[err];
}

void
profile_list_clear(struct profile_list *list)
{
	size_t i;

	for (i = 0; i < list->count; i++)
		free(list->names[i]);
	free(list->names);
	list->names = NULL;
	list->count = 0;
}

/* The profile name of directory entry FILE ("strict" for "strict.yaml"),
 * malloc'd, or NULL (with *NOMEM false) when FILE is no profile. */
static char *
profile_entry_name(int dirfd, const char *file, bool *nomem)
{
	size_t len = strlen(file), slen = strlen(PROFILE_SUFFIX);
	struct stat st;
	char *name;

	*nomem = false;
	if (len <= slen || strcmp(file + len - slen, PROFILE_SUFFIX) != 0)
		return NULL;
	if (fstatat(dirfd, file, &st, 0) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	if ((name = strndup(file, len - slen)) == NULL) {
		*nomem = true;
		return NULL;
	}
	/* Only names that could be asked for are listed. */
	if (!policy_name_valid(name)) {
		free(name);
		return NULL;
	}
	return name;
}

static int
profile_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends NAME (taken over) to OUT; -1 when memory runs out. */
static int
profile_list_push(struct profile_list *out, char *name)
{
	char **grown;

	grown = reallocarray(out->names, out->count + 1, sizeof(*grown));
	if (grown == NULL) {
		free(name);
		return -1;
	}
	grown[out->count++] = name;
	out->names = grown;
	return 0;
}

enum profile_err
profile_list(const char *dir, struct profile_list *out)
{
	enum profile_err err = PROFILE_OK;
	struct dirent *de;
	bool nomem = false;
	char *name;
	DIR *d;

	profile_list_clear(out);
	if ((d = opendir(dir)) == NULL)
		return PROFILE_ERR_DIR;
	while (err == PROFILE_OK && out->count < PROFILE_LIST_MAX &&
	    (de = readdir(d)) != NULL) {
		name = profile_entry_name(dirfd(d), de->d_name, &nomem);
		if (nomem || (name != NULL && profile_list_push(out, name) < 0))
			err = PROFILE_ERR_NOMEM;
	}
	closedir(d);
	if (err != PROFILE_OK)
		profile_list_clear(out);
	else if (out->count > 0)
		qsort(out->names, out->count, sizeof(*out->names), profile_name_cmp);
	return err;
}

/* "standard, strict": the names of LIST joined, malloc'd; NULL if out of memory. */
static char *
profile_list_join(const struct profile_list *list)
{
	struct buf *b = buf_new(PROFILE_MESSAGE_MAX_BYTES);
	char *text = NULL;
	size_t i;

	if (b == NULL)
		return NULL;
	for (i = 0; i < list->count; i++) {
		if (buf_printf(b, "%s%s", i > 0 ? ", " : "", list->names[i]) < 0)
			break;  /* a huge list is cut short: it is only a hint */
	}
	text = buf_steal(b, NULL);
	buf_free(b);
	return text;
}

/* True when LIST holds NAME. */
static bool
profile_list_has(const struct profile_list *list, const char *name)
{
	size_t i;

	for (i = 0; i < list->count; i++)
		if (strcmp(list->names[i], name) == 0)
			return true;
	return false;
}

/* The "unknown profile" refusal, naming the profiles DIR does have. */
static enum profile_err
profile_unknown(const char *dir, const char *name, const struct profile_list *known,
    char **message)
{
	char *names;

	if (known->count == 0) {
		reason_set(message, "unknown profile '%s' (there are no "
		    "profiles in %s)", name, dir);
		return PROFILE_ERR_UNKNOWN;
	}
	if ((names = profile_list_join(known)) == NULL)
		return PROFILE_ERR_NOMEM;
	reason_set(message, "unknown profile '%s' (known: %s)", name, names);
	free(names);
	return PROFILE_ERR_UNKNOWN;
}

/* The refusal of an invalid NAME, shown with its unprintable bytes as '?'
 * and cut at PROFILE_NAME_SHOWN_MAX_BYTES: it is untrusted text. */
static void
profile_bad_name(const char *name, const char *why, char **message)
{
	char shown[PROFILE_NAME_SHOWN_MAX_BYTES + 1];
	size_t i;

	for (i = 0; name != NULL && name[i] != '\0' &&
	    i < PROFILE_NAME_SHOWN_MAX_BYTES; i++)
		shown[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
	shown[i] = '\0';
	reason_set(message, "invalid profile name '%s%s': it %s", shown,
	    name != NULL && name[i] != '\0' ? "..." : "", why);
}

/* Loads DIR/NAME.yaml, known to be listed. */
static enum profile_err
profile_load_known(const char *dir, const char *name, struct policy **out,
    struct policy_diags *diags, char **message)
{
	char *path = NULL;

	if (asprintf(&path, "%s/%s%s", dir, name, PROFILE_SUFFIX) < 0)
		return PROFILE_ERR_NOMEM;
	if (policy_load_file(path, out, diags) != 0) {
		reason_set(message, "profile '%s' (%s) does not load", name, path);
		free(path);
		return PROFILE_ERR_LOAD;
	}
	free(path);
	return PROFILE_OK;
}

enum profile_err
profile_load(const char *dir, const char *name, struct policy **out,
    struct policy_diags *diags, char **message)
{
	struct profile_list known = { 0 };
	enum profile_err err;
	const char *why;

	*out = NULL;
	if (message != NULL)
		*message = NULL;
	/* The name becomes part of a path: only the closed name set passes,
	 * so "../x" or "a/b" can never reach a file outside DIR. */
	if ((why = policy_name_error(name)) != NULL) {
		profile_bad_name(name, why, message);
		return PROFILE_ERR_BAD_NAME;
	}
	if ((err = profile_list(dir, &known)) == PROFILE_ERR_DIR)
		reason_set(message, "cannot read the profiles folder %s: %s",
		    dir, strerror(errno));
	else if (err == PROFILE_OK && !profile_list_has(&known, name))
		err = profile_unknown(dir, name, &known, message);
	else if (err == PROFILE_OK)
		err = profile_load_known(dir, name, out, diags, message);
	profile_list_clear(&known);
	return err;
}

void
profile_set_free(struct profile_set *set)
{
	if (set == NULL)
		return;
	for (size_t i = 0; i < set->names.count; i++)
		policy_free(set->policies[i]);
	free(set->policies);
	profile_list_clear(&set->names);
	free(set);
}

enum profile_err
profile_set_load(const char *dir, struct profile_set **out, struct policy_diags *diags,
    char **message)
{
	struct profile_set *set;
	enum profile_err err;
	size_t bad = 0;

	*out = NULL;
	if (message != NULL)
		*message = NULL;
	if ((set = calloc(1, sizeof(*set))) == NULL)
		return PROFILE_ERR_NOMEM;
	if ((err = profile_list(dir, &set->names)) == PROFILE_ERR_DIR)
		reason_set(message, "cannot read the profiles folder %s: %s", dir, strerror(errno));
	if (err == PROFILE_OK && set->names.count > 0 &&
	    (set->policies = calloc(set->names.count, sizeof(*set->policies))) == NULL)
		err = PROFILE_ERR_NOMEM;
	/* Every file is tried, so that one reload shows every error. */
	for (size_t i = 0; err == PROFILE_OK && i < set->names.count; i++) {
		char *why = NULL;

		if (profile_load_known(dir, set->names.names[i], &set->policies[i], diags,
		    &why) != PROFILE_OK && bad++ == 0 && message != NULL)
			*message = why;
		else
			free(why);
	}
	if (err == PROFILE_OK && bad > 0)
		err = PROFILE_ERR_LOAD;
	if (err != PROFILE_OK) {
		profile_set_free(set);
		return err;
	}
	*out = set;
	return PROFILE_OK;
}

const struct policy *
profile_set_find(const struct profile_set *set, const char *dir, const char *name,
    char **message)
{
	static const struct profile_list none = { 0 };
	const char *why;

	if (message != NULL)
		*message = NULL;
	if ((why = policy_name_error(name)) != NULL) {
		profile_bad_name(name, why, message);
		return NULL;
	}
	for (size_t i = 0; set != NULL && i < set->names.count; i++)
		if (strcmp(set->names.names[i], name) == 0)
			return set->policies[i];
	(void)profile_unknown(dir, name, set != NULL ? &set->names : &none, message);
	return NULL;
}
