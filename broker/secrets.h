/* A sandbox's secrets as the broker takes them at its create (corral(1),
 * "--secret"): each value checked against its kind (built in, or
 * corrald.yaml's), moved into locked memory (egress-proxy/secretstore.h)
 * with a placeholder, and what the sandbox gets in its place: the
 * variables that hold the placeholder, the files a built-in kind writes,
 * and the hosts that join its policy. */
#ifndef CORRAL_BROKER_SECRETS_H
#define CORRAL_BROKER_SECRETS_H

#include <stddef.h>

#include "broker/monitor/monitor-wire.h"
#include "common/wire.h"
#include "egress-proxy/secretsub.h"
#include "policy/render.h"
#include "policy/secret.h"

struct config;
struct secretstore;

/* What a sandbox shows of one secret (sandbox get): never its value. */
struct secrets_shown {
	char *name;
	char **env;                     /* variables holding its placeholder */
	size_t nenv;
	char **files;                   /* written in the home, relative to it */
	size_t nfiles;
};

/* The secrets of one create. */
struct secrets_plan {
	struct secretstore *store;      /* until the sandbox's proxy tenant takes it */
	size_t n;
	struct secret_kind kinds[SECRETSUB_MAX];
	struct monitor_file files[MONITOR_FILES_MAX];   /* for the monitor */
	struct secret_file made[MONITOR_FILES_MAX];     /* their contents */
	size_t file_owner[MONITOR_FILES_MAX];           /* the secret each is of */
	size_t nfiles;
	struct render_grant hosts[SECRETSUB_MAX];       /* each secret's hosts, for the policy */
};

/* Takes REQ's secrets (values read from REQ, which the caller wipes) for
 * the daemon's configuration CFG into P. -1 with a one-line reason
 * (malloc'd) in *ERR: an unknown kind, one named twice, a value that is
 * not one word of printable ASCII, --secret gh with --grant gh, or memory
 * that cannot be locked. */
int secrets_plan(const struct config *cfg, const Corral__SandboxCreate *req,
    struct secrets_plan *p, char **err);
/* Frees what P holds (the store too, unless taken); P may be zeroed. */
void secrets_plan_clear(struct secrets_plan *p);
/* Wipes every secret value in REQ (the request's own memory). */
void secrets_wipe_request(Corral__SandboxCreate *req);

/* "NAME=VALUE" for every command: each placeholder in its kind's
 * variables, then the kinds' own (${HOME} is HOME). N more entries are
 * appended to *ENV (xrealloc'd, *NENV counted, NULL-terminated). */
void secrets_env(const struct secrets_plan *p, const char *home, char ***env, size_t *nenv);
/* What P's sandbox shows of its secrets, into *OUT (*N). */
void secrets_shown_make(const struct secrets_plan *p, struct secrets_shown **out, size_t *n);
void secrets_shown_free(struct secrets_shown *s, size_t n);

#endif
