/* A sandbox's secrets as the broker takes them (secrets.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/conf.h"
#include "broker/secrets.h"
#include "common/reason.h"
#include "common/xmalloc.h"
#include "egress-proxy/secretstore.h"
#include "policy/name.h"

#define SECRETS_NAMES_MAX_BYTES 1024    /* "known: ..." in a refusal */

_Static_assert(SECRET_PER_SANDBOX_MAX == SECRETSUB_MAX,
    "the CLI's bound on --secret is the proxy's");

/* The names of every kind CFG knows, comma-separated, into BUF. */
static void
secrets_known(const struct config *cfg, char *buf, size_t size)
{
	size_t len;

	snprintf(buf, size, "%s", secret_builtin_names());
	for (size_t i = 0; i < cfg->nsecrets; i++) {
		len = strlen(buf);
		if (cfg->secrets[i].name != NULL && len < size)
			snprintf(buf + len, size - len, ", %s", cfg->secrets[i].name);
	}
}

/* True when REQ asks for the grant NAME. */
static bool
secrets_granted(const Corral__SandboxCreate *req, const char *name)
{
	for (size_t i = 0; i < req->n_grants; i++)
		if (strcmp(req->grants[i], name) == 0)
			return true;
	return false;
}

/* Secret I of REQ: its kind into P, its value checked and copied into
 * *VALUE (malloc'd: the caller wipes it). */
static int
secrets_take_one(const struct config *cfg, const Corral__SandboxCreate *req, size_t i,
    struct secrets_plan *p, char **value, char **err)
{
	const Corral__SecretValue *v = req->secrets[i];
	char known[SECRETS_NAMES_MAX_BYTES];
	const char *why;

	/* A name is checked before it is quoted back to anyone. */
	if (policy_name_error(v->name) != NULL)
		return reason_set(err, "a secret's name must be lower-case letters, digits and '-' "
		    "(--secret NAME)");
	if (secret_find(v->name, cfg->secret_kinds, cfg->nsecrets, &p->kinds[i]) == -1) {
		secrets_known(cfg, known, sizeof(known));
		return reason_set(err, "unknown secret '%s' (known: %s)", v->name, known);
	}
	for (size_t k = 0; k < i; k++)
		if (strcmp(req->secrets[k]->name, v->name) == 0)
			return reason_set(err, "--secret %s is given twice", v->name);
	if ((why = secret_value_check((const char *)v->value.data, v->value.len)) != NULL)
		return reason_set(err, "secret %s: its value %s", v->name, why);
	/* A grant of the same name would copy the real value in beside it. */
	if (p->kinds[i].builtin && secrets_granted(req, v->name))
		return reason_set(err, "--secret %s keeps the token out of the sandbox and --grant %s "
		    "copies it in: give one of them", v->name, v->name);
	*value = xmalloc(v->value.len + 1);
	memcpy(*value, v->value.data, v->value.len);
	(*value)[v->value.len] = '\0';
	return 0;
}

/* The files the built-in kinds write, with their placeholders. */
static int
secrets_files(struct secrets_plan *p, char **err)
{
	size_t n;
	const struct secretsub_secret *s = secretstore_secrets(p->store, &n);

	for (size_t i = 0; i < n; i++) {
		struct secret_file made[SECRET_FILES_MAX];
		int k = secret_files(s[i].name, s[i].placeholder, made);

		if (k < 0)
			return reason_set(err, "out of memory");
		for (int f = 0; f < k; f++) {
			if (p->nfiles == MONITOR_FILES_MAX) {
				secret_files_clear(made + f, (size_t)(k - f));
				return reason_set(err, "the secrets write more than %d files",
				    MONITOR_FILES_MAX);
			}
			p->made[p->nfiles] = made[f];
			p->file_owner[p->nfiles] = i;
			p->files[p->nfiles] = (struct monitor_file){ made[f].path, made[f].content };
			p->nfiles++;
		}
	}
	return 0;
}

int
secrets_plan(const struct config *cfg, const Corral__SandboxCreate *req,
    struct secrets_plan *p, char **err)
{
	struct secretstore_entry entries[SECRETSUB_MAX];
	char *values[SECRETSUB_MAX] = { NULL };
	int rc = -1;

	if (req->n_secrets == 0)
		return 0;
	if (req->n_secrets > SECRETSUB_MAX)
		return reason_set(err, "at most %d --secret options", SECRETSUB_MAX);
	for (size_t i = 0; i < req->n_secrets; i++) {
		if (secrets_take_one(cfg, req, i, p, &values[i], err) == -1)
			goto done;
		entries[i] = (struct secretstore_entry){ p->kinds[i].name, values[i],
		    p->kinds[i].hosts, p->kinds[i].nhosts, p->kinds[i].headers, p->kinds[i].nheaders,
		    p->kinds[i].query, p->kinds[i].nquery };
		p->hosts[i] = (struct render_grant){ p->kinds[i].name, p->kinds[i].hosts,
		    p->kinds[i].nhosts };
	}
	if ((p->store = secretstore_new(entries, req->n_secrets, err)) == NULL)
		goto done;
	p->n = req->n_secrets;
	rc = secrets_files(p, err);
done:
	for (size_t i = 0; i < req->n_secrets && i < SECRETSUB_MAX; i++) {
		if (values[i] != NULL)
			explicit_bzero(values[i], strlen(values[i]));
		free(values[i]);
	}
	return rc;
}

void
secrets_plan_clear(struct secrets_plan *p)
{
	secretstore_free(p->store);
	p->store = NULL;
	secret_files_clear(p->made, p->nfiles);
	p->nfiles = 0;
}

void
secrets_wipe_request(Corral__SandboxCreate *req)
{
	for (size_t i = 0; req != NULL && i < req->n_secrets; i++)
		if (req->secrets[i]->value.data != NULL)
			explicit_bzero(req->secrets[i]->value.data, req->secrets[i]->value.len);
}

/* *ENV with one more entry E (taken). */
static void
secrets_env_add(char ***env, size_t *nenv, char *e)
{
	*env = xreallocarray(*env, *nenv + 2, sizeof(**env));
	(*env)[(*nenv)++] = e;
	(*env)[*nenv] = NULL;
}

/* TEMPLATE with "${HOME}" as HOME, malloc'd. */
static char *
secrets_expand_home(const char *template, const char *home)
{
	const char *at = strstr(template, "${HOME}");
	char *out;

	if (at == NULL)
		return xstrdup(template);
	xasprintf(&out, "%.*s%s%s", (int)(at - template), template, home, at + strlen("${HOME}"));
	return out;
}

void
secrets_env(const struct secrets_plan *p, const char *home, char ***env, size_t *nenv)
{
	size_t n;
	const struct secretsub_secret *s = secretstore_secrets(p->store, &n);
	char *e;

	for (size_t i = 0; i < n; i++) {
		const char *const *extra = secret_extra_env(p->kinds[i].name);

		for (size_t k = 0; k < p->kinds[i].nenv; k++) {
			xasprintf(&e, "%s=%s", p->kinds[i].env[k], s[i].placeholder);
			secrets_env_add(env, nenv, e);
		}
		for (size_t k = 0; p->kinds[i].builtin && extra[k] != NULL; k++)
			secrets_env_add(env, nenv, secrets_expand_home(extra[k], home));
	}
}

void
secrets_shown_make(const struct secrets_plan *p, struct secrets_shown **out, size_t *n)
{
	struct secrets_shown *s = xcalloc(p->n + 1, sizeof(*s));

	for (size_t i = 0; i < p->n; i++) {
		s[i].name = xstrdup(p->kinds[i].name);
		s[i].env = xcalloc(p->kinds[i].nenv + 1, sizeof(char *));
		for (size_t e = 0; e < p->kinds[i].nenv; e++)
			s[i].env[s[i].nenv++] = xstrdup(p->kinds[i].env[e]);
		s[i].files = xcalloc(p->nfiles + 1, sizeof(char *));
		for (size_t f = 0; f < p->nfiles; f++)
			if (p->file_owner[f] == i)
				s[i].files[s[i].nfiles++] = xstrdup(p->made[f].path);
	}
	*out = s;
	*n = p->n;
}

void
secrets_shown_free(struct secrets_shown *s, size_t n)
{
	for (size_t i = 0; s != NULL && i < n; i++) {
		free(s[i].name);
		for (size_t k = 0; k < s[i].nenv; k++)
			free(s[i].env[k]);
		free(s[i].env);
		for (size_t k = 0; k < s[i].nfiles; k++)
			free(s[i].files[k]);
		free(s[i].files);
	}
	free(s);
}
