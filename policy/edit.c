/* Adding and removing endpoints of a policy in memory. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "policy/edit.h"
#include "policy/match.h"

#define EDIT_RULE_MAX_BYTES 63

static const char *const edit_messages[] = {
	[EDIT_OK] = "no error",
	[EDIT_ERR_NOMEM] = "out of memory",
	[EDIT_ERR_ENDPOINT] = "not HOST:PORT",
	[EDIT_ERR_HOST] = "not a valid host or host pattern",
	[EDIT_ERR_PORT] = "the port is not a number from 1 to 65535",
	[EDIT_ERR_BINARY] = "a binary must be an absolute path or glob without '..', in UTF-8",
	[EDIT_ERR_RULE] = "an entry name must be 1 to 63 bytes of UTF-8",
	[EDIT_ERR_NOT_FOUND] = "no entry of the policy has that endpoint",
};

const char *
edit_strerror(enum edit_err err)
{
	return (size_t)err < sizeof(edit_messages) / sizeof(edit_messages[0]) ?
	    edit_messages[err] : "unknown error";
}

enum edit_err
edit_parse_endpoint(const char *text, struct policy_host *out, uint16_t *port)
{
	const char *colon = strrchr(text, ':');
	char host[POLICY_HOST_MAX_BYTES + 4];
	unsigned long v;
	char *end;

	if (colon == NULL || colon == text || (size_t)(colon - text) >= sizeof(host))
		return EDIT_ERR_ENDPOINT;
	/* Decimal digits only: no sign, no leading zero, no spaces. */
	if (colon[1] < '1' || colon[1] > '9')
		return EDIT_ERR_PORT;
	errno = 0;
	v = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || errno != 0 || v > 65535)
		return EDIT_ERR_PORT;
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = '\0';
	if (match_host_parse(host, out) != MATCH_OK)
		return EDIT_ERR_HOST;
	*port = (uint16_t)v;
	return EDIT_OK;
}

static bool
edit_same_host(const struct policy_host *a, const struct policy_host *b)
{
	return a->kind == b->kind && strcmp(a->name, b->name) == 0;
}

static struct policy_rule *
edit_find_rule(struct policy *p, const char *key)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (strcmp(p->rules[i].key, key) == 0)
			return &p->rules[i];
	return NULL;
}

/* Appends an empty entry keyed KEY; NULL if out of memory. */
static struct policy_rule *
edit_new_rule(struct policy *p, const char *key)
{
	struct policy_rule *rules = realloc(p->rules, (p->nrules + 1) * sizeof(*rules));
	struct policy_rule *r;

	if (rules == NULL)
		return NULL;
	p->rules = rules;
	r = &rules[p->nrules];
	memset(r, 0, sizeof(*r));
	r->key = strdup(key);
	r->name = strdup(key);
	if (r->key == NULL || r->name == NULL) {
		free(r->key);
		free(r->name);
		return NULL;
	}
	p->nrules++;
	return r;
}

static enum edit_err
edit_add_binary(struct policy_rule *r, const char *glob)
{
	struct policy_binary *bins;

	/* What an update adds is rendered to YAML and loaded again: text no
	 * policy file could hold is the caller's mistake, refused here. */
	if (match_binary_check(glob) != MATCH_OK || !utf8_valid(glob))
		return EDIT_ERR_BINARY;
	for (size_t i = 0; i < r->nbinaries; i++)
		if (strcmp(r->binaries[i].path, glob) == 0)
			return EDIT_OK;
	if ((bins = realloc(r->binaries, (r->nbinaries + 1) * sizeof(*bins))) == NULL)
		return EDIT_ERR_NOMEM;
	r->binaries = bins;
	if ((bins[r->nbinaries].path = strdup(glob)) == NULL)
		return EDIT_ERR_NOMEM;
	r->nbinaries++;
	if (strcmp(glob, MATCH_ANY_BINARY_GLOB) == 0)
		r->any_binary = true;
	return EDIT_OK;
}

/* Inserts PORT in E's sorted port list unless it is there. */
static enum edit_err
edit_add_port(struct policy_endpoint *e, uint16_t port)
{
	size_t i = 0;
	uint16_t *ports;

	while (i < e->nports && e->ports[i] < port)
		i++;
	if (i < e->nports && e->ports[i] == port)
		return EDIT_OK;
	if ((ports = realloc(e->ports, (e->nports + 1) * sizeof(*ports))) == NULL)
		return EDIT_ERR_NOMEM;
	memmove(ports + i + 1, ports + i, (e->nports - i) * sizeof(*ports));
	ports[i] = port;
	e->ports = ports;
	e->nports++;
	return EDIT_OK;
}

/* Adds HOST:PORT to R, taking HOST's name when it makes a new endpoint. */
static enum edit_err
edit_rule_add_endpoint(struct policy_rule *r, struct policy_host *host, uint16_t port)
{
	struct policy_endpoint *eps;

	for (size_t i = 0; i < r->nendpoints; i++)
		if (edit_same_host(&r->endpoints[i].host, host))
			return edit_add_port(&r->endpoints[i], port);
	if ((eps = realloc(r->endpoints, (r->nendpoints + 1) * sizeof(*eps))) == NULL)
		return EDIT_ERR_NOMEM;
	r->endpoints = eps;
	memset(&eps[r->nendpoints], 0, sizeof(eps[0]));
	eps[r->nendpoints].sni_check = true;
	if (edit_add_port(&eps[r->nendpoints], port) != EDIT_OK)
		return EDIT_ERR_NOMEM;
	eps[r->nendpoints].host = *host;
	host->name = NULL;
	r->nendpoints++;
	return EDIT_OK;
}

enum edit_err
policy_edit_add_endpoint(struct policy *p, const char *rule, const char *endpoint,
    const char *const *binaries, size_t nbinaries)
{
	static const char *const any[] = { MATCH_ANY_BINARY_GLOB };
	struct policy_host host = { 0 };
	struct policy_rule *r;
	enum edit_err e;
	uint16_t port;

	if (rule == NULL || rule[0] == '\0' || strlen(rule) > EDIT_RULE_MAX_BYTES ||
	    !utf8_valid(rule))
		return EDIT_ERR_RULE;
	if ((e = edit_parse_endpoint(endpoint, &host, &port)) != EDIT_OK)
		return e;
	if (nbinaries == 0) {
		binaries = any;
		nbinaries = 1;
	}
	r = edit_find_rule(p, rule);
	if (r == NULL && (r = edit_new_rule(p, rule)) == NULL)
		e = EDIT_ERR_NOMEM;
	for (size_t i = 0; e == EDIT_OK && i < nbinaries; i++)
		e = edit_add_binary(r, binaries[i]);
	if (e == EDIT_OK)
		e = edit_rule_add_endpoint(r, &host, port);
	free(host.name);
	return e;
}

/* Drops PORT from E; true when it was there. */
static bool
edit_drop_port(struct policy_endpoint *e, uint16_t port)
{
	for (size_t i = 0; i < e->nports; i++) {
		if (e->ports[i] != port)
			continue;
		memmove(e->ports + i, e->ports + i + 1, (e->nports - i - 1) * sizeof(e->ports[0]));
		e->nports--;
		return true;
	}
	return false;
}

/* Removes HOST:PORT from R; returns the ports removed. */
static size_t
edit_rule_remove(struct policy_rule *r, const struct policy_host *host, uint16_t port)
{
	size_t removed = 0, i = 0;

	while (i < r->nendpoints) {
		struct policy_endpoint *e = &r->endpoints[i];

		if (!edit_same_host(&e->host, host) || !edit_drop_port(e, port)) {
			i++;
			continue;
		}
		removed++;
		if (e->nports > 0) {
			i++;
			continue;
		}
		policy_endpoint_clear(e);
		memmove(e, e + 1, (r->nendpoints - i - 1) * sizeof(*e));
		r->nendpoints--;
	}
	return removed;
}

enum edit_err
policy_edit_remove_endpoint(struct policy *p, const char *endpoint, size_t *removed)
{
	struct policy_host host = { 0 };
	size_t count = 0, i = 0;
	enum edit_err e;
	uint16_t port;

	if ((e = edit_parse_endpoint(endpoint, &host, &port)) != EDIT_OK)
		return e;
	while (i < p->nrules) {
		struct policy_rule *r = &p->rules[i];

		count += edit_rule_remove(r, &host, port);
		if (r->nendpoints > 0) {
			i++;
			continue;
		}
		/* An entry without endpoints allows nothing: it goes too. */
		policy_rule_clear(r);
		memmove(r, r + 1, (p->nrules - i - 1) * sizeof(*r));
		p->nrules--;
	}
	free(host.name);
	if (removed != NULL)
		*removed = count;
	return count > 0 ? EDIT_OK : EDIT_ERR_NOT_FOUND;
}
