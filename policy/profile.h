/* Network profiles: named policies in a folder, <dir>/<name>.yaml
 * ("strict", "standard"). The folder is chosen by the caller: --profiles-dir,
 * else CORRAL_PROFILES_DIR, else the config's profiles_dir, else
 * profile_dir_default(). */
#ifndef CORRAL_POLICY_PROFILE_H
#define CORRAL_POLICY_PROFILE_H

#include <stddef.h>

#include "policy/diag.h"
#include "policy/policy.h"

#define PROFILE_SUFFIX ".yaml"
#define PROFILE_LIST_MAX 1000           /* profiles listed in one folder */
#define PROFILE_DEFAULT_NAME "strict"

enum profile_err {
	PROFILE_OK = 0,
	PROFILE_ERR_NOMEM,
	PROFILE_ERR_BAD_NAME,           /* not a valid profile name (see name.h) */
	PROFILE_ERR_UNKNOWN,            /* no such profile in the folder */
	PROFILE_ERR_DIR,                /* the folder cannot be read */
	PROFILE_ERR_LOAD,               /* the file does not load: see the diagnostics */
};

/* The profiles of a folder, sorted by name. */
struct profile_list {
	char **names;
	size_t count;
};

/* SYSCONFDIR "/corral/profiles": where profiles are installed. */
const char *profile_dir_default(void);

/* A one-line description of ERR. */
const char *profile_strerror(enum profile_err err);

/* Lists the profiles of DIR: the regular files named <name>.yaml whose
 * name is a valid profile name. OUT is emptied first. */
enum profile_err profile_list(const char *dir, struct profile_list *out);

/* Frees what LIST holds and empties it. */
void profile_list_clear(struct profile_list *list);

/* Loads profile NAME from DIR into *OUT (policy_free() it). On failure
 * *OUT is NULL and, when MESSAGE is not NULL, *MESSAGE is a malloc'd
 * one-line reason, e.g. "unknown profile 'wide-open' (known: standard,
 * strict)"; a file that does not load also appends the loader's errors,
 * each with FILE:LINE:COL, to DIAGS (which may be NULL). */
enum profile_err profile_load(const char *dir, const char *name, struct policy **out,
    struct policy_diags *diags, char **message);

/* Every profile of a folder, loaded at once (corrald holds one: creates
 * take their profile from it, and a reload replaces it only whole). */
struct profile_set {
	struct profile_list names;      /* sorted */
	struct policy **policies;       /* one a name */
};

/* Loads every profile of DIR into *OUT (profile_set_free() it): all of
 * them, or none. On failure *OUT is NULL, *MESSAGE (when not NULL) a
 * malloc'd one-line reason, and each loader error, with FILE:LINE:COL,
 * is appended to DIAGS (which may be NULL). */
enum profile_err profile_set_load(const char *dir, struct profile_set **out,
    struct policy_diags *diags, char **message);
/* Profile NAME of SET, or NULL with *MESSAGE (when not NULL) a malloc'd
 * one-line reason as profile_load() gives. DIR names the folder in it. */
const struct policy *profile_set_find(const struct profile_set *set, const char *dir,
    const char *name, char **message);
void profile_set_free(struct profile_set *set);

#endif
