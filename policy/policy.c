/* The policy model's lifecycle: new, free, deep copy and comparison. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/policy.h"

#define POLICY_WRITE_GUARD_ROOT_DEFAULT "workspace"

struct policy *
policy_new(void)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->version = POLICY_VERSION;
	p->landlock = POLICY_LANDLOCK_HARD_REQUIREMENT;
	p->write_guard_allowed_root = strdup(POLICY_WRITE_GUARD_ROOT_DEFAULT);
	if (p->write_guard_allowed_root == NULL) {
		free(p);
		return NULL;
	}
	return p;
}

static void
policy_paths_clear(struct policy_paths *pp)
{
	for (size_t i = 0; i < pp->npaths; i++)
		free(pp->paths[i]);
	free(pp->paths);
	pp->paths = NULL;
	pp->npaths = 0;
}

void
policy_endpoint_clear(struct policy_endpoint *e)
{
	free(e->host.name);
	free(e->ports);
	free(e->allowed_ips);
	for (size_t i = 0; i < e->nhttp_rules; i++) {
		policy_paths_clear(&e->http_rules[i].methods);
		policy_paths_clear(&e->http_rules[i].paths);
	}
	free(e->http_rules);
}

void
policy_rule_clear(struct policy_rule *r)
{
	free(r->key);
	free(r->name);
	for (size_t i = 0; i < r->nendpoints; i++)
		policy_endpoint_clear(&r->endpoints[i]);
	free(r->endpoints);
	for (size_t i = 0; i < r->nbinaries; i++)
		free(r->binaries[i].path);
	free(r->binaries);
}

static void
policy_unix_sockets_clear(struct policy *p)
{
	for (size_t i = 0; i < p->nunix_sockets; i++) {
		free(p->unix_sockets[i].path);
		free(p->unix_sockets[i].name);
		free(p->unix_sockets[i].env);
	}
	free(p->unix_sockets);
	p->unix_sockets = NULL;
	p->nunix_sockets = 0;
}

void
policy_free(struct policy *p)
{
	if (p == NULL)
		return;
	policy_unix_sockets_clear(p);
	policy_paths_clear(&p->read_only);
	policy_paths_clear(&p->read_write);
	free(p->run_as_user);
	free(p->run_as_group);
	for (size_t i = 0; i < p->nrules; i++)
		policy_rule_clear(&p->rules[i]);
	free(p->rules);
	free(p->write_guard_allowed_root);
	free(p->write_guard_deny_reason);
	free(p);
}

/* A copy of S in *DST (NULL stays NULL); -1 if out of memory. */
static int
policy_copy_str(char **dst, const char *s)
{
	if (s == NULL)
		return 0;
	*dst = strdup(s);
	return *dst == NULL ? -1 : 0;
}

/* A zeroed array of N elements of SIZE bytes; NULL when N is 0 or memory
 * runs out (the caller tells them apart by N). */
static void *
policy_copy_alloc(size_t n, size_t size)
{
	return n == 0 ? NULL : calloc(n, size);
}

/* Each copy function below fills a zeroed DST from SRC; on failure DST
 * holds only what was copied, with counts to match, so the matching clear
 * or free function releases it. */
static int
policy_paths_copy(struct policy_paths *dst, const struct policy_paths *src)
{
	dst->paths = policy_copy_alloc(src->npaths, sizeof(*dst->paths));
	if (src->npaths > 0 && dst->paths == NULL)
		return -1;
	dst->npaths = src->npaths;
	for (size_t i = 0; i < src->npaths; i++)
		if (policy_copy_str(&dst->paths[i], src->paths[i]) == -1)
			return -1;
	return 0;
}

static int
policy_endpoint_copy(struct policy_endpoint *dst, const struct policy_endpoint *src)
{
	*dst = *src;
	dst->host.name = NULL;
	dst->ports = policy_copy_alloc(src->nports, sizeof(*dst->ports));
	dst->allowed_ips = policy_copy_alloc(src->nallowed_ips, sizeof(*dst->allowed_ips));
	dst->http_rules = policy_copy_alloc(src->nhttp_rules, sizeof(*dst->http_rules));
	dst->nhttp_rules = 0;
	if (policy_copy_str(&dst->host.name, src->host.name) == -1 ||
	    (src->nports > 0 && dst->ports == NULL) ||
	    (src->nallowed_ips > 0 && dst->allowed_ips == NULL) ||
	    (src->nhttp_rules > 0 && dst->http_rules == NULL))
		return -1;
	for (size_t i = 0; i < src->nhttp_rules; i++) {
		struct policy_http_rule *d = &dst->http_rules[i];

		dst->nhttp_rules++;
		d->line = src->http_rules[i].line;
		d->col = src->http_rules[i].col;
		if (policy_paths_copy(&d->methods, &src->http_rules[i].methods) == -1 ||
		    policy_paths_copy(&d->paths, &src->http_rules[i].paths) == -1)
			return -1;
	}
	if (src->nports > 0)
		memcpy(dst->ports, src->ports, src->nports * sizeof(*src->ports));
	if (src->nallowed_ips > 0)
		memcpy(dst->allowed_ips, src->allowed_ips,
		    src->nallowed_ips * sizeof(*src->allowed_ips));
	return 0;
}

static int
policy_rule_copy(struct policy_rule *dst, const struct policy_rule *src)
{
	dst->any_binary = src->any_binary;
	if (policy_copy_str(&dst->key, src->key) == -1 ||
	    policy_copy_str(&dst->name, src->name) == -1)
		return -1;
	dst->endpoints = policy_copy_alloc(src->nendpoints, sizeof(*dst->endpoints));
	if (src->nendpoints > 0 && dst->endpoints == NULL)
		return -1;
	dst->nendpoints = src->nendpoints;
	for (size_t i = 0; i < src->nendpoints; i++)
		if (policy_endpoint_copy(&dst->endpoints[i], &src->endpoints[i]) == -1)
			return -1;
	dst->binaries = policy_copy_alloc(src->nbinaries, sizeof(*dst->binaries));
	if (src->nbinaries > 0 && dst->binaries == NULL)
		return -1;
	dst->nbinaries = src->nbinaries;
	for (size_t i = 0; i < src->nbinaries; i++)
		if (policy_copy_str(&dst->binaries[i].path, src->binaries[i].path) == -1)
			return -1;
	return 0;
}

static int
policy_unix_sockets_copy(struct policy *dst, const struct policy *src)
{
	dst->unix_sockets = policy_copy_alloc(src->nunix_sockets, sizeof(*dst->unix_sockets));
	if (src->nunix_sockets > 0 && dst->unix_sockets == NULL)
		return -1;
	dst->nunix_sockets = src->nunix_sockets;
	for (size_t i = 0; i < src->nunix_sockets; i++) {
		const struct policy_unix_socket *u = &src->unix_sockets[i];

		dst->unix_sockets[i].line = u->line;
		dst->unix_sockets[i].col = u->col;
		if (policy_copy_str(&dst->unix_sockets[i].path, u->path) == -1 ||
		    policy_copy_str(&dst->unix_sockets[i].name, u->name) == -1 ||
		    policy_copy_str(&dst->unix_sockets[i].env, u->env) == -1)
			return -1;
	}
	return 0;
}

static int
policy_copy(struct policy *dst, const struct policy *src)
{
	dst->version = src->version;
	dst->landlock = src->landlock;
	dst->has_process = src->has_process;
	dst->has_write_guard = src->has_write_guard;
	if (policy_paths_copy(&dst->read_only, &src->read_only) == -1 ||
	    policy_paths_copy(&dst->read_write, &src->read_write) == -1 ||
	    policy_copy_str(&dst->run_as_user, src->run_as_user) == -1 ||
	    policy_copy_str(&dst->run_as_group, src->run_as_group) == -1 ||
	    policy_copy_str(&dst->write_guard_allowed_root, src->write_guard_allowed_root) == -1 ||
	    policy_copy_str(&dst->write_guard_deny_reason, src->write_guard_deny_reason) == -1 ||
	    policy_unix_sockets_copy(dst, src) == -1)
		return -1;
	dst->rules = policy_copy_alloc(src->nrules, sizeof(*dst->rules));
	if (src->nrules > 0 && dst->rules == NULL)
		return -1;
	dst->nrules = src->nrules;
	for (size_t i = 0; i < src->nrules; i++)
		if (policy_rule_copy(&dst->rules[i], &src->rules[i]) == -1)
			return -1;
	return 0;
}

struct policy *
policy_dup(const struct policy *p)
{
	struct policy *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	if (policy_copy(c, p) == -1) {
		policy_free(c);
		return NULL;
	}
	return c;
}

/* True when A and B are both NULL or hold the same text. */
static bool
policy_str_equal(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool
policy_paths_equal(const struct policy_paths *a, const struct policy_paths *b)
{
	if (a->npaths != b->npaths)
		return false;
	for (size_t i = 0; i < a->npaths; i++)
		if (!policy_str_equal(a->paths[i], b->paths[i]))
			return false;
	return true;
}

static bool
policy_cidr_equal(const struct policy_cidr *a, const struct policy_cidr *b)
{
	size_t len = a->family == AF_INET ? 4 : 16;

	return a->family == b->family && a->prefix_len == b->prefix_len &&
	    memcmp(a->addr, b->addr, len) == 0;
}

/* Compares two endpoints, their positions in their files aside. */
static bool
policy_endpoint_equal(const struct policy_endpoint *a, const struct policy_endpoint *b)
{
	if (a->host.kind != b->host.kind || !policy_str_equal(a->host.name, b->host.name) ||
	    a->sni_check != b->sni_check || a->nports != b->nports ||
	    a->nallowed_ips != b->nallowed_ips || a->tls != b->tls ||
	    a->nhttp_rules != b->nhttp_rules)
		return false;
	for (size_t i = 0; i < a->nhttp_rules; i++)
		if (!policy_paths_equal(&a->http_rules[i].methods, &b->http_rules[i].methods) ||
		    !policy_paths_equal(&a->http_rules[i].paths, &b->http_rules[i].paths))
			return false;
	if (a->nports > 0 && memcmp(a->ports, b->ports, a->nports * sizeof(*a->ports)) != 0)
		return false;
	for (size_t i = 0; i < a->nallowed_ips; i++)
		if (!policy_cidr_equal(&a->allowed_ips[i], &b->allowed_ips[i]))
			return false;
	return true;
}

static bool
policy_rule_equal(const struct policy_rule *a, const struct policy_rule *b)
{
	if (!policy_str_equal(a->key, b->key) || !policy_str_equal(a->name, b->name) ||
	    a->nendpoints != b->nendpoints || a->nbinaries != b->nbinaries ||
	    a->any_binary != b->any_binary)
		return false;
	for (size_t i = 0; i < a->nendpoints; i++)
		if (!policy_endpoint_equal(&a->endpoints[i], &b->endpoints[i]))
			return false;
	for (size_t i = 0; i < a->nbinaries; i++)
		if (!policy_str_equal(a->binaries[i].path, b->binaries[i].path))
			return false;
	return true;
}

/* Compares the listed sockets, their positions aside. */
static bool
policy_unix_sockets_equal(const struct policy *a, const struct policy *b)
{
	if (a->nunix_sockets != b->nunix_sockets)
		return false;
	for (size_t i = 0; i < a->nunix_sockets; i++) {
		const struct policy_unix_socket *x = &a->unix_sockets[i], *y = &b->unix_sockets[i];

		if (!policy_str_equal(x->path, y->path) || !policy_str_equal(x->name, y->name) ||
		    !policy_str_equal(x->env, y->env))
			return false;
	}
	return true;
}

bool
policy_equal(const struct policy *a, const struct policy *b)
{
	if (a->version != b->version || a->landlock != b->landlock ||
	    a->has_process != b->has_process || a->has_write_guard != b->has_write_guard ||
	    a->nrules != b->nrules ||
	    !policy_paths_equal(&a->read_only, &b->read_only) ||
	    !policy_paths_equal(&a->read_write, &b->read_write) ||
	    !policy_str_equal(a->run_as_user, b->run_as_user) ||
	    !policy_str_equal(a->run_as_group, b->run_as_group) ||
	    !policy_str_equal(a->write_guard_allowed_root, b->write_guard_allowed_root) ||
	    !policy_str_equal(a->write_guard_deny_reason, b->write_guard_deny_reason) ||
	    !policy_unix_sockets_equal(a, b))
		return false;
	for (size_t i = 0; i < a->nrules; i++)
		if (!policy_rule_equal(&a->rules[i], &b->rules[i]))
			return false;
	return true;
}
