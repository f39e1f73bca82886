/* Secrets' kinds, sources, values and the files they write (secret.h). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/secret.h"
#include "policy/yamltree.h"

#define SECRET_GH_HOST "github.com"
#define SECRET_GH_YAML_NODES_MAX 4096

/* gh's token, for its API and for HTTPS git: gh reads GH_TOKEN before
 * its hosts.yml; git (through libcurl) reads .netrc. */
static const char *const secret_gh_hosts[] = { "api.github.com:443", "github.com:443" };
static const char *const secret_gh_env[] = { "GH_TOKEN" };
static const char *const secret_gh_headers[] = { SECRET_DEFAULT_HEADER };
static const char *const secret_gh_extra_env[] = { "GH_CONFIG_DIR=${HOME}/.config/gh", NULL };
static const char *const secret_no_extra_env[] = { NULL };

static const struct secret_kind secret_table[] = {
	{ "gh", "gh-hosts", secret_gh_hosts, 2, secret_gh_env, 1, secret_gh_headers, 1, true },
};

#define SECRET_NBUILTIN (sizeof(secret_table) / sizeof(secret_table[0]))

int
secret_builtin_at(size_t i, struct secret_kind *out)
{
	if (i >= SECRET_NBUILTIN)
		return -1;
	*out = secret_table[i];
	return 0;
}

bool
secret_is_builtin(const char *name)
{
	for (size_t i = 0; i < SECRET_NBUILTIN; i++)
		if (strcmp(secret_table[i].name, name) == 0)
			return true;
	return false;
}

const char *
secret_builtin_names(void)
{
	return "gh";
}

int
secret_find(const char *name, const struct secret_kind *extra, size_t nextra,
    struct secret_kind *out)
{
	for (size_t i = 0; i < SECRET_NBUILTIN; i++)
		if (strcmp(secret_table[i].name, name) == 0) {
			*out = secret_table[i];
			return 0;
		}
	for (size_t i = 0; i < nextra; i++)
		if (extra[i].name != NULL && strcmp(extra[i].name, name) == 0) {
			*out = extra[i];
			return 0;
		}
	return -1;
}

/* True for a character of an environment variable's name. */
static bool
secret_env_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    (!first && c >= '0' && c <= '9');
}

const char *
secret_source_parse(const char *text, struct secret_source *out)
{
	if (strlen(text) >= SECRET_FROM_MAX_BYTES)
		return "is too long";
	if (strcmp(text, "gh-hosts") == 0) {
		*out = (struct secret_source){ SECRET_FROM_GH_HOSTS, NULL };
		return NULL;
	}
	if (strncmp(text, "env:", 4) == 0) {
		const char *v = text + 4;

		if (v[0] == '\0')
			return "names no variable (env:NAME)";
		for (size_t i = 0; v[i] != '\0'; i++)
			if (!secret_env_char(v[i], i == 0))
				return "is not env:NAME (a variable of letters, digits and '_')";
		*out = (struct secret_source){ SECRET_FROM_ENV, v };
		return NULL;
	}
	if (strncmp(text, "file:", 5) == 0) {
		if (text[5] == '\0')
			return "names no file (file:PATH)";
		for (const char *p = text + 5; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return "has a control character in its path";
		*out = (struct secret_source){ SECRET_FROM_FILE, text + 5 };
		return NULL;
	}
	return "is not a source (env:NAME, file:PATH or gh-hosts)";
}

size_t
secret_value_trim(const char *value, size_t len)
{
	if (len > 0 && value[len - 1] == '\n')
		len--;
	if (len > 0 && value[len - 1] == '\r')
		len--;
	return len;
}

const char *
secret_value_check(const char *value, size_t len)
{
	if (len == 0)
		return "is empty";
	if (len < SECRET_VALUE_MIN_BYTES)
		return "is shorter than 12 bytes: what a host sends back could not be searched "
		    "for it";
	if (len > SECRET_VALUE_MAX_BYTES)
		return "is longer than 4096 bytes";
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)value[i] <= 0x20 || (unsigned char)value[i] >= 0x7f)
			return "holds a byte that is not printable ASCII (spaces and line breaks "
			    "included): only a token or password of one word can be swapped in";
	return NULL;
}

/* The value of KEY in the mapping MAP; NULL when absent. */
static const struct yamltree_node *
secret_yaml_get(const struct yamltree_node *map, const char *key)
{
	if (map == NULL || map->type != YAMLTREE_MAPPING)
		return NULL;
	for (size_t i = 0; i + 1 < map->nkids; i += 2)
		if (map->kids[i]->type == YAMLTREE_SCALAR && strcmp(map->kids[i]->text, key) == 0)
			return map->kids[i + 1];
	return NULL;
}

/* The scalar text of N, or NULL. */
static const char *
secret_yaml_text(const struct yamltree_node *n)
{
	return n != NULL && n->type == YAMLTREE_SCALAR && n->len > 0 ? n->text : NULL;
}

/* github.com's oauth_token: its own, else its "user"'s under "users"
 * (gh 2.40 and later keep one per account). */
static const char *
secret_gh_pick(const struct yamltree_node *root)
{
	const struct yamltree_node *host = secret_yaml_get(root, SECRET_GH_HOST);
	const char *token = secret_yaml_text(secret_yaml_get(host, "oauth_token"));
	const char *user = secret_yaml_text(secret_yaml_get(host, "user"));

	if (token == NULL && user != NULL)
		token = secret_yaml_text(secret_yaml_get(secret_yaml_get(secret_yaml_get(host,
		    "users"), user), "oauth_token"));
	return token;
}

int
secret_gh_token(const char *text, size_t len, char **token, const char **why)
{
	static const struct yamltree_doc doc = { "gh's hosts.yml", "gh's hosts.yml", "", "file",
		YAMLTREE_DEPTH_MAX, SECRET_GH_YAML_NODES_MAX, SECRET_GH_HOSTS_MAX_BYTES };
	struct yamltree_ctx ctx = { .doc = &doc, .name = "hosts.yml", .data = text, .len = len };
	struct yamltree_node *root = yamltree_parse(&ctx);
	const char *found;

	*token = NULL;
	if (root == NULL || ctx.nerrors > 0) {
		*why = ctx.nomem ? "out of memory" : "it is not YAML that gh wrote";
		yamltree_free(root);
		return -1;
	}
	if ((found = secret_gh_pick(root)) == NULL)
		*why = "it holds no oauth_token for github.com (is the token in a keyring? "
		    "then give --secret gh=env:VAR or file:PATH)";
	else if ((*token = strdup(found)) == NULL)
		*why = "out of memory";
	/* The tree held the token too: wiped before it is freed. */
	if (found != NULL)
		explicit_bzero((char *)(uintptr_t)found, strlen(found));
	yamltree_free(root);
	return *token != NULL ? 0 : -1;
}

/* gh's hosts.yml with the placeholder: gh reads the token from it when
 * GH_TOKEN is unset. */
static char *
secret_gh_hosts_yml(const char *placeholder)
{
	char *s = NULL;

	if (asprintf(&s, "# Written by corral: the token is a placeholder that corrald's proxy\n"
	    "# swaps for the real one toward github.com and api.github.com.\n"
	    SECRET_GH_HOST ":\n    oauth_token: %s\n    git_protocol: https\n", placeholder) == -1)
		return NULL;
	return s;
}

/* .netrc for HTTPS git (git reads it through libcurl) with the placeholder
 * as a Basic password, which the proxy swaps once decoded. */
static char *
secret_gh_netrc(const char *placeholder)
{
	char *s = NULL;

	if (asprintf(&s, "machine github.com login x-access-token password %s\n"
	    "machine api.github.com login x-access-token password %s\n", placeholder,
	    placeholder) == -1)
		return NULL;
	return s;
}

int
secret_files(const char *name, const char *placeholder, struct secret_file *files)
{
	if (strcmp(name, "gh") != 0)
		return 0;
	files[0] = (struct secret_file){ ".config/gh/hosts.yml", secret_gh_hosts_yml(placeholder) };
	files[1] = (struct secret_file){ ".netrc", secret_gh_netrc(placeholder) };
	if (files[0].content == NULL || files[1].content == NULL) {
		secret_files_clear(files, 2);
		return -1;
	}
	return 2;
}

void
secret_files_clear(struct secret_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(files[i].content);
		files[i].content = NULL;
	}
}

const char *const *
secret_extra_env(const char *name)
{
	return strcmp(name, "gh") == 0 ? secret_gh_extra_env : secret_no_extra_env;
}
