/* The control socket's sandbox requests: create, get, list, delete, reap. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/api.h"
#include "broker/daemon.h"
#include "broker/metrics.h"
#include "broker/monitor/monitor-wire.h"
#include "broker/conf.h"
#include "broker/sandbox.h"
#include "broker/secrets.h"
#include "common/reason.h"
#include "common/timeutil.h"
#include "common/wire.h"
#include "common/xmalloc.h"

/* A copy of V (N strings), NULL-terminated. */
static char **
api_strv(const char *const *v, size_t n)
{
	char **out = xcalloc(n + 1, sizeof(char *));

	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

static void
api_sandbox_reply(Corral__Response *resp, Corral__SandboxInfo *info)
{
	resp->response_case = CORRAL__RESPONSE__RESPONSE_SANDBOX;
	resp->sandbox = info;
}

/* A create in flight: its answer's way back, and when it was asked. */
struct api_create {
	struct api_pending *pending;
	int64_t asked_us;
};

/* A create's result for the metrics: the daemon failing it (a layer or the
 * machine) is "failed", everything else said no is "refused". */
static const char *
api_create_result(const struct sandbox *sb, const char *code)
{
	if (sb != NULL)
		return "created";
	return strcmp(code, WIRE_ERR_INTERNAL) == 0 || strcmp(code, WIRE_ERR_UNAVAILABLE) == 0 ?
	    "failed" : "refused";
}

static void
api_sandbox_created(struct daemon *d, struct sandbox *sb, const char *code, const char *err,
    void *arg)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	struct api_create *c = arg;

	metrics_create_done(d, api_create_result(sb, code),
	    (double)(time_now_us() - c->asked_us) / 1e6);
	if (sb == NULL)
		api_error(&resp, code, "%s", err);
	else
		api_sandbox_reply(&resp, sandbox_info(d, sb));
	api_pending_reply(c->pending, &resp);
	api_response_clear(&resp);
	free(c);
}

void
api_sandbox_create(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct api_pending *p)
{
	struct api_create *c = xmalloc(sizeof(*c));

	c->pending = p;
	c->asked_us = time_now_us();
	sandbox_create(d, caller, req->sandbox_create, api_sandbox_created, c);
	/* The request is ours: its values live on in the sandbox's locked memory only. */
	secrets_wipe_request((Corral__SandboxCreate *)(uintptr_t)req->sandbox_create);
}

/* Every secret kind corrald knows, built in first (corral(1), "--secret"). */
int
api_secret_list(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp)
{
	Corral__SecretListReply *r = xmalloc(sizeof(*r));
	size_t nb = 0, n;
	struct secret_kind k;

	(void)caller;
	(void)req;
	while (secret_builtin_at(nb, &k) == 0)
		nb++;
	n = nb + d->cfg->nsecrets;
	corral__secret_list_reply__init(r);
	r->secrets = xcalloc(n + 1, sizeof(*r->secrets));
	for (size_t i = 0; i < n; i++) {
		Corral__SecretKind *o = xmalloc(sizeof(*o));

		if (i < nb)
			secret_builtin_at(i, &k);
		else
			k = d->cfg->secret_kinds[i - nb];
		corral__secret_kind__init(o);
		o->name = xstrdup(k.name);
		o->from = xstrdup(k.from);
		o->hosts = api_strv(k.hosts, o->n_hosts = k.nhosts);
		o->env = api_strv(k.env, o->n_env = k.nenv);
		o->headers = k.nheaders > 0 ? api_strv(k.headers, o->n_headers = k.nheaders) :
		    api_strv((const char *const []){ SECRET_DEFAULT_HEADER }, o->n_headers = 1);
		o->builtin = k.builtin;
		r->secrets[r->n_secrets++] = o;
	}
	resp->response_case = CORRAL__RESPONSE__RESPONSE_SECRET_LIST;
	resp->secret_list = r;
	return 0;
}

/* The sandbox NAME if CALLER may see it; an error in RESP otherwise (the
 * same for "not yours" and "none": names of others' sandboxes stay theirs). */
static struct sandbox *
api_visible_sandbox(struct daemon *d, const struct sandbox_caller *caller, const char *name,
    Corral__Response *resp)
{
	struct sandbox *sb = sandbox_find(d, name);

	if (sb == NULL || !sandbox_visible(sb, caller)) {
		api_error(resp, WIRE_ERR_NOT_FOUND, "no sandbox named '%s'", name);
		return NULL;
	}
	return sb;
}

int
api_sandbox_get(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp)
{
	struct sandbox *sb = api_visible_sandbox(d, caller, req->sandbox_get->name, resp);

	if (sb != NULL)
		api_sandbox_reply(resp, sandbox_info(d, sb));
	return 0;
}

/* True when SB has every label of the selector. */
static bool
api_selected(const struct sandbox *sb, const Corral__SandboxList *sel)
{
	for (size_t i = 0; i < sel->n_selector; i++) {
		bool found = false;
		size_t klen = strlen(sel->selector[i]->key);

		for (size_t j = 0; j < sb->nlabels && !found; j++)
			found = strncmp(sb->labels[j], sel->selector[i]->key, klen) == 0 &&
			    sb->labels[j][klen] == '=' &&
			    strcmp(sb->labels[j] + klen + 1, sel->selector[i]->value) == 0;
		if (!found)
			return false;
	}
	return true;
}

int
api_sandbox_list(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp)
{
	Corral__SandboxListReply *r = xmalloc(sizeof(*r));
	size_t n = 0;

	corral__sandbox_list_reply__init(r);
	r->sandboxes = xcalloc(sandbox_count(d) + 1, sizeof(*r->sandboxes));
	for (struct sandbox *sb = d->sandboxes; sb != NULL; sb = sb->next)
		if (sandbox_visible(sb, caller) && api_selected(sb, req->sandbox_list))
			r->sandboxes[n++] = sandbox_info(d, sb);
	r->n_sandboxes = n;
	resp->response_case = CORRAL__RESPONSE__RESPONSE_SANDBOX_LIST;
	resp->sandbox_list = r;
	return 0;
}

/* A delete's answer, sent once the monitor has torn down every sandbox
 * it names (their cgroups, namespaces and homes are gone when the client
 * hears it); the sandboxes left the broker at once. A teardown the
 * monitor could not confirm (it died, or the cgroups stayed) makes the
 * answer an error: the daemon never says "deleted" for what it cannot
 * vouch for. */
struct api_deleting {
	struct api_pending *pending;
	Corral__SandboxDeleteReply *reply;
	size_t waiting;                 /* teardowns not done yet, and one for the loop */
	char *failed;                   /* the first teardown not confirmed, and why */
};

static void
api_delete_done(const char *name, const char *why, void *arg)
{
	struct api_deleting *del = arg;
	Corral__Response resp = CORRAL__RESPONSE__INIT;

	if (why != NULL && del->failed == NULL)
		reason_set(&del->failed, "sandbox %s is stopped, but its teardown is not confirmed "
		    "(%s): corral reap, or the next start of corrald, removes what is left",
		    name, why);
	if (--del->waiting > 0)
		return;
	if (del->failed != NULL) {
		api_error(&resp, WIRE_ERR_UNAVAILABLE, "%s", del->failed);
		corral__sandbox_delete_reply__free_unpacked(del->reply, NULL);
	} else {
		resp.response_case = CORRAL__RESPONSE__RESPONSE_SANDBOX_DELETE;
		resp.sandbox_delete = del->reply;
	}
	api_pending_reply(del->pending, &resp);
	api_response_clear(&resp);
	free(del->failed);
	free(del);
}

/* Deletes SB, adding its name to the reply. */
static void
api_delete_one(struct daemon *d, struct sandbox *sb, struct api_deleting *del)
{
	del->reply->deleted[del->reply->n_deleted++] = xstrdup(sb->name);
	del->waiting++;
	sandbox_delete(d, sb, api_delete_done, del);
}

void
api_sandbox_delete(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct api_pending *p)
{
	const Corral__SandboxDelete *del = req->sandbox_delete;
	struct api_deleting *deleting = xmalloc(sizeof(*deleting));
	struct sandbox *sb, *next;

	deleting->pending = p;
	deleting->waiting = 1;
	deleting->failed = NULL;
	deleting->reply = xmalloc(sizeof(*deleting->reply));
	corral__sandbox_delete_reply__init(deleting->reply);
	deleting->reply->deleted = xcalloc(sandbox_count(d) + 1, sizeof(char *));
	/* A teardown asked for before and not done yet is waited for too
	 * (not listed: that delete did): a delete answers when it is gone. */
	if (del->all)
		deleting->waiting += sandbox_await_teardowns(d, NULL, caller, api_delete_done,
		    deleting);
	for (sb = d->sandboxes; del->all && sb != NULL; sb = next) {
		next = sb->next;
		if (sandbox_visible(sb, caller))
			api_delete_one(d, sb, deleting);
	}
	/* Idempotent: a name that is gone (or not the caller's) is no error. */
	for (size_t i = 0; !del->all && i < del->n_names; i++) {
		deleting->waiting += sandbox_await_teardowns(d, del->names[i], caller,
		    api_delete_done, deleting);
		if ((sb = sandbox_find(d, del->names[i])) != NULL && sandbox_visible(sb, caller))
			api_delete_one(d, sb, deleting);
	}
	api_delete_done(NULL, NULL, deleting);
}

/* A reap's answer, sent once the monitor has removed what no sandbox
 * owns: the registry rows it removed, then the objects. */
struct api_reaping {
	struct api_pending *pending;
	char **rows, **objects;
	size_t nrows, nobjects, rows_cap, objects_cap;
};

static void
api_reap_add(char ***items, size_t *n, size_t *cap, const char *what)
{
	if (*n == *cap) {
		*cap = *cap == 0 ? 16 : *cap * 2;
		*items = xreallocarray(*items, *cap, sizeof(**items));
	}
	(*items)[(*n)++] = xstrdup(what);
}

static void
api_reap_row(const char *what, void *arg)
{
	struct api_reaping *r = arg;

	api_reap_add(&r->rows, &r->nrows, &r->rows_cap, what);
}

static void
api_reap_object(const char *what, void *arg)
{
	struct api_reaping *r = arg;

	api_reap_add(&r->objects, &r->nobjects, &r->objects_cap, what);
}

static void
api_reaped(size_t removed, void *arg)
{
	struct api_reaping *r = arg;
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	Corral__ReapReply *reply = xmalloc(sizeof(*reply));

	(void)removed;
	corral__reap_reply__init(reply);
	reply->sandboxes = r->rows;
	reply->n_sandboxes = r->nrows;
	reply->objects = r->objects;
	reply->n_objects = r->nobjects;
	resp.response_case = CORRAL__RESPONSE__RESPONSE_REAP;
	resp.reap = reply;
	api_pending_reply(r->pending, &resp);
	api_response_clear(&resp);
	free(r);
}

void
api_reap(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    struct api_pending *p)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	struct api_reaping *r;

	(void)req;
	if (caller->uid != 0) {
		api_error(&resp, WIRE_ERR_PERMISSION, "only root may reap (it touches every "
		    "user's leftovers)");
		api_pending_reply(p, &resp);
		api_response_clear(&resp);
		return;
	}
	r = xcalloc(1, sizeof(*r));
	r->pending = p;
	/* The loop goes on while the monitor reaches it. */
	daemon_reap(d, false, api_reap_row, api_reap_object, api_reaped, r);
}
