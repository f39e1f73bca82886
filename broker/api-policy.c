/* The control socket's policy requests: get, set, update, and denials. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "broker/api.h"
#include "broker/daemon.h"
#include "broker/sandbox.h"
#include "common/xmalloc.h"
#include "egress-proxy/proxy.h"
#include "policy/edit.h"
#include "policy/load.h"
#include "policy/policy.h"
#include "policy/render.h"

#define API_DENIALS_MAX DENIAL_RING_DEFAULT_ENTRIES

/* The tenant a request names, checked against the caller: a sandbox of
 * the caller's (root: any), or host mode's "host" (root only); NULL with
 * an error in RESP otherwise. Others' sandboxes read as absent. */
static struct proxy_tenant *
api_tenant(struct daemon *d, const struct sandbox_caller *caller, const char *name,
    Corral__Response *resp)
{
	struct sandbox *sb = sandbox_find(d, name);
	struct proxy_tenant *t;

	if (sb != NULL && sandbox_visible(sb, caller))
		return sb->tenant;
	if (sb == NULL && (t = daemon_tenant(d, name)) != NULL) {
		if (daemon_may_manage(d, t, caller->uid))
			return t;
		api_error(resp, WIRE_ERR_PERMISSION, "'%s' is host mode's proxy: root only", name);
		return NULL;
	}
	api_error(resp, WIRE_ERR_NOT_FOUND, "no sandbox named '%s'", name);
	return NULL;
}

static void
api_policy_reply(Corral__Response *resp, const struct policy *p)
{
	Corral__PolicyReply *r;
	char *yaml = NULL;

	if (render_yaml(p, &yaml, NULL) != RENDER_OK) {
		api_error(resp, WIRE_ERR_INTERNAL, "cannot render the policy");
		return;
	}
	r = xmalloc(sizeof(*r));
	corral__policy_reply__init(r);
	r->yaml = yaml;
	resp->response_case = CORRAL__RESPONSE__RESPONSE_POLICY;
	resp->policy = r;
}

int
api_policy_get(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp)
{
	struct proxy_tenant *t = api_tenant(d, caller, req->policy_get->sandbox, resp);

	if (t != NULL)
		api_policy_reply(resp, proxy_tenant_policy(t));
	return 0;
}

/* Loads TEXT as NAME; NULL with every FILE:LINE:COL error in RESP. */
static struct policy *
api_load_policy(const char *name, const char *text, Corral__Response *resp)
{
	struct policy_diags diags;
	struct policy *p = NULL;
	char *errors;

	policy_diags_init(&diags);
	if (policy_load_buffer(name, text, strlen(text), &p, &diags) == -1) {
		errors = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE);
		api_error(resp, WIRE_ERR_INVALID, "%s", errors != NULL ? errors : "invalid policy");
		free(errors);
	}
	policy_diags_clear(&diags);
	return p;
}

/* Puts NEXT in force for T (sandbox NAME's, or host mode's) and answers
 * with it. The sandbox's policy is its caller's now: a reload of its
 * profile leaves it be. */
static void
api_commit(struct daemon *d, const char *name, struct proxy_tenant *t, struct policy *next,
    bool close_revoked, Corral__Response *resp)
{
	struct sandbox *sb;

	if (proxy_tenant_set_policy(t, next, close_revoked, NULL) == -1) {
		api_error(resp, WIRE_ERR_INTERNAL, "out of memory; the policy is unchanged");
		return;
	}
	if ((sb = sandbox_find(d, name)) != NULL)
		sb->policy_edited = true;
	api_policy_reply(resp, proxy_tenant_policy(t));
}

/* Swaps the parts of A and B a running sandbox's policy may change: the
 * network entries and the write guard (and the version they came with). */
static void
api_swap_network(struct policy *a, struct policy *b)
{
	struct policy t = *a;

	a->version = b->version, b->version = t.version;
	a->rules = b->rules, b->rules = t.rules;
	a->nrules = b->nrules, b->nrules = t.nrules;
	a->has_write_guard = b->has_write_guard, b->has_write_guard = t.has_write_guard;
	a->write_guard_allowed_root = b->write_guard_allowed_root;
	b->write_guard_allowed_root = t.write_guard_allowed_root;
	a->write_guard_deny_reason = b->write_guard_deny_reason;
	b->write_guard_deny_reason = t.write_guard_deny_reason;
}

/* True when P's parts fixed at create are those of REF (with REF's own
 * network part: P is looked at through a shallow copy, never freed). */
static bool
api_fixed_equal(const struct policy *p, const struct policy *ref)
{
	struct policy view = *p, net = *ref;

	api_swap_network(&view, &net);
	return policy_equal(&view, ref);
}

/* What a running sandbox cannot change was applied when it was made: its
 * file system and Landlock's mode, its user, its Unix sockets. NEXT may
 * leave those out (it then keeps the ones in force) or repeat them as they
 * are. Returns the policy to put in force (NEXT is taken), or NULL with the
 * reason in RESP when NEXT names others: `policy get` must never show what
 * is not enforced. */
static struct policy *
api_keep_fixed(const struct policy *cur, struct policy *next, Corral__Response *resp)
{
	struct policy *empty = policy_new(), *merged = NULL;

	if (empty == NULL || (merged = policy_dup(cur)) == NULL) {
		api_error(resp, WIRE_ERR_INTERNAL, "out of memory; the policy is unchanged");
	} else if (!api_fixed_equal(next, empty) && !api_fixed_equal(next, cur)) {
		api_error(resp, WIRE_ERR_INVALID, "filesystem_policy, landlock, process and "
		    "unix_sockets were fixed when the sandbox was made and cannot change: leave "
		    "them out, or give them as `corral policy get` shows them; the policy is "
		    "unchanged");
		policy_free(merged);
		merged = NULL;
	} else {
		api_swap_network(merged, next);
	}
	policy_free(next);
	policy_free(empty);
	return merged;
}

int
api_policy_set(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp)
{
	const Corral__PolicySet *ps = req->policy_set;
	struct proxy_tenant *t = api_tenant(d, caller, ps->sandbox, resp);
	struct policy *next;

	if (t == NULL)
		return 0;
	if ((next = api_load_policy("<policy set>", ps->content, resp)) == NULL)
		return 0;
	/* Host mode's proxy has no sandbox: only its network part means anything. */
	if (sandbox_find(d, ps->sandbox) != NULL &&
	    (next = api_keep_fixed(proxy_tenant_policy(t), next, resp)) == NULL)
		return 0;
	api_commit(d, ps->sandbox, t, next, ps->close_revoked, resp);
	return 0;
}

/* Applies the update's additions and removals to P; -1 with the error in RESP. */
static int
api_apply_update(struct policy *p, const Corral__PolicyUpdate *pu, Corral__Response *resp)
{
	const char *rule = pu->rule[0] != '\0' ? pu->rule : EDIT_RULE_DEFAULT;
	enum edit_err e;

	for (size_t i = 0; i < pu->n_add_endpoints; i++) {
		e = policy_edit_add_endpoint(p, rule, pu->add_endpoints[i],
		    (const char *const *)pu->binaries, pu->n_binaries);
		if (e != EDIT_OK) {
			api_error(resp, WIRE_ERR_INVALID, "--add-endpoint %s: %s",
			    pu->add_endpoints[i], edit_strerror(e));
			return -1;
		}
	}
	for (size_t i = 0; i < pu->n_remove_endpoints; i++) {
		if ((e = policy_edit_remove_endpoint(p, pu->remove_endpoints[i], NULL)) != EDIT_OK) {
			api_error(resp, WIRE_ERR_INVALID, "--remove-endpoint %s: %s",
			    pu->remove_endpoints[i], edit_strerror(e));
			return -1;
		}
	}
	return 0;
}

int
api_policy_update(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp)
{
	const Corral__PolicyUpdate *pu = req->policy_update;
	struct proxy_tenant *t = api_tenant(d, caller, pu->sandbox, resp);
	struct policy *edited, *next = NULL;
	char *yaml = NULL;

	if (t == NULL)
		return 0;
	if ((edited = policy_dup(proxy_tenant_policy(t))) == NULL) {
		api_error(resp, WIRE_ERR_INTERNAL, "out of memory; the policy is unchanged");
		return 0;
	}
	/* The edited policy goes through the same loader as a file: what
	 * could not be written by hand cannot be put in force by an update. */
	if (api_apply_update(edited, pu, resp) == 0) {
		if (render_yaml(edited, &yaml, NULL) != RENDER_OK)
			api_error(resp, WIRE_ERR_INTERNAL, "cannot render the updated policy");
		else
			next = api_load_policy("<policy update>", yaml, resp);
	}
	if (next != NULL)
		api_commit(d, pu->sandbox, t, next, pu->close_revoked, resp);
	free(yaml);
	policy_free(edited);
	return 0;
}

static Corral__Denial *
api_denial_message(const struct denial *src)
{
	Corral__Denial *m = xmalloc(sizeof(*m));

	corral__denial__init(m);
	m->ts_us = src->ts_us;
	m->host = xstrdup(src->host);
	m->port = src->port;
	m->binary = xstrdup(src->binary);
	m->pid = (int32_t)src->pid;
	m->reason = xstrdup(src->reason);
	m->count = src->count;
	return m;
}

int
api_denials(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp)
{
	struct proxy_tenant *t = api_tenant(d, caller, req->denials->sandbox, resp);
	struct denial *found;
	Corral__DenialsReply *r;
	size_t n;

	if (t == NULL)
		return 0;
	found = xcalloc(API_DENIALS_MAX, sizeof(*found));
	n = proxy_tenant_denials(t, req->denials->since_us, found, API_DENIALS_MAX);
	r = xmalloc(sizeof(*r));
	corral__denials_reply__init(r);
	r->n_denials = n;
	r->denials = n > 0 ? xcalloc(n, sizeof(*r->denials)) : NULL;
	for (size_t i = 0; i < n; i++)
		r->denials[i] = api_denial_message(&found[i]);
	free(found);
	resp->response_case = CORRAL__RESPONSE__RESPONSE_DENIALS;
	resp->denials = r;
	return 0;
}
