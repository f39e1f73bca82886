/* --secret NAME[=SOURCE]: values read with the caller's rights (cli-secrets.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/cli/cli.h"
#include "broker/cli/cli-secrets.h"
#include "broker/cli/client.h"
#include "common/xmalloc.h"
#include "policy/name.h"
#include "policy/secret.h"

#define CLI_SECRETS_GH_HOSTS ".config/gh/hosts.yml"

int
cli_secrets_add(struct cli_secrets *s, const char *spec)
{
	const char *eq = strchr(spec, '=');
	size_t len = eq != NULL ? (size_t)(eq - spec) : strlen(spec);
	char name[64];

	if (s->n == SECRET_PER_SANDBOX_MAX)
		return cli_fail("too many --secret options (at most %d)", SECRET_PER_SANDBOX_MAX);
	if (len == 0 || len >= sizeof(name))
		return cli_fail("--secret needs a secret's name (gh, or one of the daemon's "
		    "configured secrets: see `corral help sandbox create`)");
	memcpy(name, spec, len);
	name[len] = '\0';
	if (policy_name_error(name) != NULL)
		return cli_fail("--secret %s: not a secret's name (letters, digits and '-')",
		    cli_text(name));
	s->specs[s->n] = spec;
	s->names[s->n++] = xstrdup(name);
	return 0;
}

/* The caller's home: HOME when given, else its account's, else $HOME. */
static const char *
cli_secrets_home(const char *home)
{
	const struct passwd *pw;

	if (home != NULL && home[0] != '\0')
		return home;
	if ((pw = getpwuid(getuid())) != NULL && pw->pw_dir[0] == '/')
		return pw->pw_dir;
	return getenv("HOME");
}

/* Reads the regular file PATH whole, at most MAX bytes, into *OUT
 * (malloc'd, NUL-ended; wipe it) and *LEN. -1 with why in WHY. */
static int
cli_secrets_read_file(const char *path, size_t max, char **out, size_t *len, char *why,
    size_t why_size)
{
	int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	*out = NULL;
	if (fd == -1 || fstat(fd, &st) == -1) {
		snprintf(why, why_size, "cannot read %s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		snprintf(why, why_size, "%s is %s", path, !S_ISREG(st.st_mode) ?
		    "not a regular file" : "too large for a secret");
		close(fd);
		return -1;
	}
	*out = xmalloc((size_t)st.st_size + 1);
	*len = 0;
	while (*len <= (size_t)st.st_size &&
	    (n = read(fd, *out + *len, (size_t)st.st_size + 1 - *len)) > 0)
		*len += (size_t)n;
	close(fd);
	if (*len > (size_t)st.st_size) {
		snprintf(why, why_size, "%s grew while it was read", path);
		explicit_bzero(*out, *len);
		free(*out);
		*out = NULL;
		return -1;
	}
	(*out)[*len] = '\0';
	return 0;
}

/* The value of SRC into *VALUE (malloc'd), or -1 with why in WHY. */
static int
cli_secrets_from(const struct secret_source *src, const char *home, char **value, char *why,
    size_t why_size)
{
	char path[4096], *text = NULL;
	const char *env, *err;
	size_t len;
	int rc;

	*value = NULL;
	switch (src->from) {
	case SECRET_FROM_ENV:
		if ((env = getenv(src->arg)) == NULL) {
			snprintf(why, why_size, "the variable %s is not set", src->arg);
			return -1;
		}
		*value = xstrdup(env);
		return 0;
	case SECRET_FROM_FILE:
		if (strncmp(src->arg, SECRET_HOME_PREFIX, strlen(SECRET_HOME_PREFIX)) == 0)
			snprintf(path, sizeof(path), "%s/%s", home != NULL ? home : "",
			    src->arg + strlen(SECRET_HOME_PREFIX));
		else
			snprintf(path, sizeof(path), "%s", src->arg);
		if (cli_secrets_read_file(path, SECRET_VALUE_MAX_BYTES + 2, value, &len, why,
		    why_size) == -1)
			return -1;
		(*value)[secret_value_trim(*value, len)] = '\0';
		return 0;
	case SECRET_FROM_GH_HOSTS:
		snprintf(path, sizeof(path), "%s/" CLI_SECRETS_GH_HOSTS, home != NULL ? home : "");
		if (cli_secrets_read_file(path, SECRET_GH_HOSTS_MAX_BYTES, &text, &len, why,
		    why_size) == -1)
			return -1;
		rc = secret_gh_token(text, len, value, &err);
		if (rc == -1)
			snprintf(why, why_size, "%.256s: %s", path, err);
		explicit_bzero(text, len);
		free(text);
		return rc;
	}
	return -1;
}

/* The kinds corrald knows, once asked; NULL with the error printed. */
static Corral__Response *
cli_secrets_ask_kinds(const struct cli *cli)
{
	Corral__SecretList list = CORRAL__SECRET_LIST__INIT;
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Response *resp;

	req.request_case = CORRAL__REQUEST__REQUEST_SECRET_LIST;
	req.secret_list = &list;
	if (cli_call(cli, &req, &resp) != 0)
		return NULL;
	if (resp->response_case != CORRAL__RESPONSE__RESPONSE_SECRET_LIST) {
		corral__response__free_unpacked(resp, NULL);
		cli_fail("corrald answered something else than its secrets");
		return NULL;
	}
	return resp;
}

/* Says NAME is none of the kinds LIST names, and which those are. */
static void
cli_unknown_secret(const char *name, const Corral__SecretListReply *list)
{
	char known[1024];
	size_t len = 0;

	known[0] = '\0';
	for (size_t i = 0; i < list->n_secrets && len < sizeof(known); i++)
		len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", i > 0 ? ", " : "",
		    list->secrets[i]->name);
	cli_fail("unknown secret '%s' (known: %s)", cli_text(name), cli_text(known));
}

/* NAME's default source: a built-in kind's, else corrald's word (asked
 * once into *KINDS). NULL with the error printed. */
static const char *
cli_secrets_default(const struct cli *cli, const char *name, Corral__Response **kinds)
{
	struct secret_kind k;

	if (secret_find(name, NULL, 0, &k) == 0)
		return k.from;
	if (*kinds == NULL && (*kinds = cli_secrets_ask_kinds(cli)) == NULL)
		return NULL;
	for (size_t i = 0; i < (*kinds)->secret_list->n_secrets; i++)
		if (strcmp((*kinds)->secret_list->secrets[i]->name, name) == 0)
			return (*kinds)->secret_list->secrets[i]->from;
	cli_unknown_secret(name, (*kinds)->secret_list);
	return NULL;
}

/* Reads secret I of S. Exit status. */
static int
cli_secrets_read_one(const struct cli *cli, struct cli_secrets *s, size_t i, const char *home,
    Corral__Response **kinds)
{
	const char *eq = strchr(s->specs[i], '='), *text, *why;
	struct secret_source src;
	char reason[512];

	if ((text = eq != NULL ? eq + 1 : cli_secrets_default(cli, s->names[i], kinds)) == NULL)
		return CLI_EXIT_FAILED;
	if ((why = secret_source_parse(text, &src)) != NULL)
		return cli_fail("--secret %s: source '%s' %s", cli_text(s->names[i]), cli_text(text),
		    why);
	if (cli_secrets_from(&src, home, &s->values[i], reason, sizeof(reason)) == -1)
		return cli_fail("--secret %s: %s", cli_text(s->names[i]), cli_text(reason));
	if ((why = secret_value_check(s->values[i], strlen(s->values[i]))) != NULL)
		return cli_fail("--secret %s: the value from %s %s", cli_text(s->names[i]),
		    cli_text(text), why);
	corral__secret_value__init(&s->msgs[i]);
	s->msgs[i].name = s->names[i];
	s->msgs[i].value.data = (uint8_t *)s->values[i];
	s->msgs[i].value.len = strlen(s->values[i]);
	s->ptrs[i] = &s->msgs[i];
	return 0;
}

int
cli_secrets_read(const struct cli *cli, struct cli_secrets *s, const char *home,
    Corral__SandboxCreate *msg)
{
	Corral__Response *kinds = NULL;
	int rc = 0;

	home = cli_secrets_home(home);
	for (size_t i = 0; i < s->n && rc == 0; i++)
		rc = cli_secrets_read_one(cli, s, i, home, &kinds);
	if (kinds != NULL)
		corral__response__free_unpacked(kinds, NULL);
	if (rc == 0) {
		msg->secrets = s->ptrs;
		msg->n_secrets = s->n;
	}
	return rc;
}

void
cli_secrets_clear(struct cli_secrets *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->values[i] != NULL)
			explicit_bzero(s->values[i], strlen(s->values[i]));
		free(s->values[i]);
		free(s->names[i]);
	}
	s->n = 0;
}

void
cli_secrets_print_kinds(const struct cli *cli)
{
	Corral__SecretList list = CORRAL__SECRET_LIST__INIT;
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Response *resp = NULL;
	char why[256];
	struct secret_kind k;

	req.request_case = CORRAL__REQUEST__REQUEST_SECRET_LIST;
	req.secret_list = &list;
	printf("\nsecrets (--secret NAME[=env:VAR|file:PATH|gh-hosts]):\n");
	if (client_request(cli->socket_path, &req, &resp, why, sizeof(why)) == 0 &&
	    resp->response_case == CORRAL__RESPONSE__RESPONSE_SECRET_LIST) {
		for (size_t i = 0; i < resp->secret_list->n_secrets; i++) {
			const Corral__SecretKind *sk = resp->secret_list->secrets[i];

			printf("  %-12s from %s, to", cli_text(sk->name), cli_text(sk->from));
			for (size_t h = 0; h < sk->n_hosts; h++)
				printf("%s %s", h > 0 ? "," : "", cli_text(sk->hosts[h]));
			printf("%s\n", sk->builtin ? " (built in)" : "");
		}
		corral__response__free_unpacked(resp, NULL);
		return;
	}
	if (resp != NULL)
		corral__response__free_unpacked(resp, NULL);
	for (size_t i = 0; secret_builtin_at(i, &k) == 0; i++) {
		printf("  %-12s from %s, to", k.name, k.from);
		for (size_t h = 0; h < k.nhosts; h++)
			printf("%s %s", h > 0 ? "," : "", k.hosts[h]);
		printf(" (built in)\n");
	}
	printf("  (corrald did not answer: the secrets of its corrald.yaml are not listed)\n");
}
