/* Sandboxes, as the broker sees them: checking a create request, building
 * it through the monitor, giving it a proxy tenant and an exec channel,
 * and deleting it. */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdarg.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "broker/api.h"
#include "broker/conf.h"
#include "broker/daemon.h"
#include "broker/exec.h"
#include "broker/limits.h"
#include "broker/limitwatch.h"
#include "broker/monitor/monitor-wire.h"
#include "broker/privsep.h"
#include "broker/registry.h"
#include "broker/sandbox.h"
#include "broker/warm.h"
#include "broker/secrets.h"
#include "common/initproto.h"
#include "common/log.h"
#include "common/reason.h"
#include "common/timeutil.h"
#include "common/xmalloc.h"
#include "egress-proxy/exetrust.h"
#include "egress-proxy/proxy.h"
#include "egress-proxy/secretstore.h"
#include "egress-proxy/tlsca.h"
#include "policy/caller.h"
#include "policy/load.h"
#include "policy/name.h"
#include "policy/profile.h"
#include "policy/render.h"

#define SANDBOX_NAME_RANDOM_BYTES 4
#define SANDBOX_FDINFO_MAX_BYTES 512    /* a pidfd's /proc/self/fdinfo: Pid: is near the top */

/* A request being checked: what sandbox_create gathers before building. */
struct sandbox_plan {
	const Corral__SandboxCreate *req;
	const struct sandbox_caller *caller;
	char name[64];
	uid_t uid;
	gid_t gid;
	struct monitor_root roots[CORRAL_ROOTS_MAX];
	size_t nroots;
	struct policy *policy;
	int slot;
	char grant_home[PATH_MAX];      /* where --grant copies from */
	struct tlsca *ca;               /* its CA, until its tenant takes it */
	char *ca_pem;                   /* the CA's certificate, trusted inside */
	struct render_grant grants[CORRAL_GRANTS_MAX + SECRETSUB_MAX];  /* and the secrets' hosts */
	size_t ngrants;
	struct secrets_plan secrets;    /* --secret: the values in locked memory */
	struct limits_value limits[LIMITS_N];
	struct monitor_socket sockets[MONITOR_SOCKETS_MAX];     /* the policy's, for the monitor */
	bool name_taken;                /* refused for its name alone: already_exists */
	bool warm;                      /* SLOT holds a warm sandbox it claimed */
	/* A root caller's run_as by default: the owner of its first writable
	 * root, which the monitor tells; the plan is made again once known. */
	bool owner_wanted;              /* not known yet: ask for roots[owner_root]'s */
	size_t owner_root;
	bool owner_known;
	uid_t owner;
	gid_t owner_group;
};

/* A create in flight: its own copy of the request, and the plan. */
struct sandbox_creating {
	struct daemon *d;
	struct sandbox_caller caller;
	Corral__SandboxCreate *req;
	struct sandbox_plan plan;
	bool reserved;                  /* its registry row exists */
	bool sent;                      /* the monitor has the request */
	int kept_fd;                    /* caller.fd duplicated while a create waits, or -1 */
	char *ca_why;                   /* why its CA could not be made (it then fails) */
	sandbox_created_fn done;
	void *arg;
	struct sandbox_creating *next;  /* d->creating */
};

struct sandbox *
sandbox_find(struct daemon *d, const char *name)
{
	for (struct sandbox *sb = d->sandboxes; sb != NULL; sb = sb->next)
		if (strcmp(sb->name, name) == 0)
			return sb;
	return NULL;
}

bool
sandbox_visible(const struct sandbox *sb, const struct sandbox_caller *caller)
{
	return caller->uid == 0 || caller->uid == sb->owner;
}

unsigned
sandbox_count(const struct daemon *d)
{
	unsigned n = 0;

	for (const struct sandbox *sb = d->sandboxes; sb != NULL; sb = sb->next)
		n++;
	return n;
}

unsigned
sandbox_creating_count(const struct daemon *d)
{
	unsigned n = 0;

	for (const struct sandbox_creating *c = d->creating; c != NULL; c = c->next)
		n++;
	return n;
}

static bool
sandbox_creating_named(const struct daemon *d, const char *name)
{
	for (const struct sandbox_creating *c = d->creating; c != NULL; c = c->next)
		if (strcmp(c->plan.name, name) == 0)
			return true;
	return false;
}

/* The name asked for, or a fresh "sb-xxxxxxxx". */
static int
sandbox_plan_name(struct daemon *d, struct sandbox_plan *p, char **err)
{
	const char *why;

	if (p->req->name[0] == '\0') {
		uint32_t r = (uint32_t)time_now_us() ^ (uint32_t)getpid() ^ (uint32_t)random();

		snprintf(p->name, sizeof(p->name), "sb-%08x", r);
	} else if ((why = policy_name_error(p->req->name)) != NULL) {
		reason_set(err, "sandbox name '%s': %s", p->req->name, why);
		return -1;
	} else {
		snprintf(p->name, sizeof(p->name), "%s", p->req->name);
	}
	if (sandbox_find(d, p->name) != NULL || sandbox_creating_named(d, p->name)) {
		p->name_taken = true;
		reason_set(err, "a sandbox named '%s' already exists", p->name);
		return -1;
	}
	return 0;
}

/* Why TEXT may not be a label, session id or agent (shown to people and
 * written in the registry): a control byte would let it forge lines or
 * send escapes to a terminal; NULL when it may. */
static const char *
sandbox_text_refusal(const char *text, size_t max)
{
	size_t n = strlen(text);

	if (n > max)
		return "is too long";
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			return "holds a control character (a newline, an escape, ...)";
	return NULL;
}

/* The create's texts: labels ("key=value", the key not empty and without
 * '=' or ','), the session id and the agent, free of control bytes. */
static int
sandbox_plan_texts(const Corral__SandboxCreate *req, char **err)
{
	const char *why;

	if ((why = sandbox_text_refusal(req->session_id, SANDBOX_TEXT_MAX_BYTES)) != NULL)
		return reason_set(err, "--session %s", why);
	if ((why = sandbox_text_refusal(req->agent, SANDBOX_TEXT_MAX_BYTES)) != NULL)
		return reason_set(err, "--agent %s", why);
	for (size_t i = 0; i < req->n_labels; i++) {
		const char *k = req->labels[i]->key, *v = req->labels[i]->value;

		if (k[0] == '\0' || strpbrk(k, "=,") != NULL)
			return reason_set(err, "a label's key must be a word without '=' or ','");
		if ((why = sandbox_text_refusal(k, SANDBOX_TEXT_MAX_BYTES)) != NULL ||
		    (why = sandbox_text_refusal(v, SANDBOX_TEXT_MAX_BYTES)) != NULL)
			return reason_set(err, "label %zu %s", i + 1, why);
	}
	return 0;
}

/* True when PATH lies strictly inside folder DIR. */
static bool
sandbox_path_inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1)
		return path[1] != '\0';
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* Landlock rights add up down the tree: a read-only root inside a writable
 * one is protected by its read-only mount alone, so the request must say it
 * knows (corral(1), --allow-nested-readonly). */
static int
sandbox_plan_nesting(struct sandbox_plan *p, char **err)
{
	for (size_t i = 0; i < p->nroots; i++)
		for (size_t j = 0; j < p->nroots && p->roots[i].read_only; j++)
			if (!p->roots[j].read_only && !p->req->allow_nested_readonly &&
			    sandbox_path_inside(p->roots[i].path, p->roots[j].path)) {
				reason_set(err, "the read-only root %s lies inside the writable "
				    "root %s, where only its read-only mount protects it; pass "
				    "--allow-nested-readonly if that is meant", p->roots[i].path,
				    p->roots[j].path);
				return -1;
			}
	return 0;
}

static int
sandbox_plan_roots(struct sandbox_plan *p, char **err)
{
	const Corral__SandboxCreate *req = p->req;

	if (req->n_roots == 0 || req->n_roots > CORRAL_ROOTS_MAX) {
		reason_set(err, "a sandbox needs 1 to %d roots (--root PATH[:ro])",
		    CORRAL_ROOTS_MAX);
		return -1;
	}
	for (size_t i = 0; i < req->n_roots; i++) {
		if (req->roots[i]->path[0] != '/') {
			reason_set(err, "root '%s' is not an absolute path", req->roots[i]->path);
			return -1;
		}
		p->roots[i].path = req->roots[i]->path;
		p->roots[i].read_only = !req->roots[i]->writable;
	}
	p->nroots = req->n_roots;
	return sandbox_plan_nesting(p, err);
}

/* run_as for a root caller: --run-as USER, else the owner of the first
 * writable root when a regular user. Never uid 0 inside (a root workload
 * could write /proc/sys/kernel/core_pattern). */
static int
sandbox_plan_run_as_root(struct daemon *d, struct sandbox_plan *p, char **err)
{
	const struct passwd *pw;

	if (p->req->run_as[0] != '\0') {
		if ((pw = getpwnam(p->req->run_as)) == NULL) {
			reason_set(err, "--run-as %s: no such user", p->req->run_as);
			return -1;
		}
		p->uid = pw->pw_uid;
		p->gid = pw->pw_gid;
		return 0;
	}
	for (size_t i = 0; i < p->nroots; i++) {
		if (p->roots[i].read_only)
			continue;
		/* The broker cannot look into root's folders: the monitor can. */
		if (!d->sandboxes_ok)
			return reason_set(err, "root %s: %s", p->roots[i].path, d->monitor_why);
		if (!p->owner_known) {
			p->owner_wanted = true;
			p->owner_root = i;
			return -1;
		}
		if (p->owner < SANDBOX_MIN_REGULAR_UID)
			break;
		p->uid = p->owner;
		pw = getpwuid(p->owner);
		p->gid = pw != NULL ? pw->pw_gid : p->owner_group;
		return 0;
	}
	reason_set(err, "the first writable root does not belong to a regular user, and a "
	    "sandbox never runs as root or a system account: pass --run-as USER");
	return -1;
}

static int
sandbox_plan_run_as(struct daemon *d, struct sandbox_plan *p, char **err)
{
	const struct passwd *pw;

	if (p->caller->uid == 0) {
		if (sandbox_plan_run_as_root(d, p, err) == -1)
			return -1;
	} else {
		/* A non-root caller's sandbox runs as the caller. */
		pw = p->req->run_as[0] != '\0' ? getpwnam(p->req->run_as) : NULL;
		if (p->req->run_as[0] != '\0' && (pw == NULL || pw->pw_uid != p->caller->uid)) {
			reason_set(err, "--run-as %s: only root may run a sandbox as another user",
			    p->req->run_as);
			return -1;
		}
		/* Its primary group, not whatever group it runs under now. */
		pw = getpwuid(p->caller->uid);
		p->uid = p->caller->uid;
		p->gid = pw != NULL ? pw->pw_gid : p->caller->gid;
	}
	if (p->uid == 0 || p->gid == 0) {
		reason_set(err, "a sandbox never runs as root (uid or gid 0)");
		return -1;
	}
	return 0;
}

/* The policy given as content, held to a non-root caller's limits. */
static struct policy *
sandbox_policy_given(struct sandbox_plan *p, char **err)
{
	struct policy_diags diags;
	struct caller_report report = { 0 };
	const char *paths[CORRAL_ROOTS_MAX];
	struct policy *pol = NULL;
	char *text;

	policy_diags_init(&diags);
	if (policy_load_buffer("<policy>", p->req->policy, strlen(p->req->policy), &pol,
	    &diags) == -1) {
		text = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE);
		reason_set(err, "%s", text != NULL ? text : "the policy does not load");
		free(text);
	} else if (p->caller->uid != 0) {
		for (size_t i = 0; i < p->nroots; i++)
			paths[i] = p->roots[i].path;
		if (caller_check(pol, paths, p->nroots, render_runtime_default(), &report) !=
		    CALLER_OK) {
			reason_set(err, "%s", report.nmessages > 0 ? report.messages[0] :
			    "the policy says what only root may say");
			policy_free(pol);
			pol = NULL;
		}
		caller_report_clear(&report);
	}
	policy_diags_clear(&diags);
	return pol;
}

/* The profile's network entries around the sandbox's roots and run_as. */
static struct policy *
sandbox_policy_profile(struct daemon *d, struct sandbox_plan *p, char **err)
{
	const char *name = p->req->profile[0] != '\0' ? p->req->profile : PROFILE_DEFAULT_NAME;
	struct render_root roots[CORRAL_ROOTS_MAX];
	struct policy *pol = NULL;
	struct render_spec spec = { .roots = roots, .nroots = p->nroots, .uid = p->uid,
	    .gid = p->gid, .grants = p->grants, .ngrants = p->ngrants };
	char *message = NULL;
	enum render_err e;

	/* The profiles corrald loaded last, all good: an edit that does not
	 * load never reaches a create (a reload keeps the old set). */
	if ((spec.profile = profile_set_find(d->profiles, d->cfg->profiles_dir, name,
	    &message)) == NULL) {
		reason_set(err, "%s", message != NULL ? message : "cannot load the profile");
		free(message);
		return NULL;
	}
	for (size_t i = 0; i < p->nroots; i++) {
		roots[i].path = p->roots[i].path;
		roots[i].writable = !p->roots[i].read_only;
	}
	if ((e = render_policy(&spec, &pol)) != RENDER_OK)
		reason_set(err, "cannot render the policy: %s", render_strerror(e));
	return pol;
}

int
sandbox_follow_profile(struct daemon *d, struct sandbox *sb, const struct policy *profile,
    bool close_revoked, size_t *closed, char **err)
{
	struct render_root roots[CORRAL_ROOTS_MAX];
	struct render_grant grants[CORRAL_GRANTS_MAX + SECRETSUB_MAX];
	struct render_spec spec = { .roots = roots, .nroots = sb->nroots, .uid = sb->uid,
	    .gid = sb->gid, .grants = grants, .profile = profile };
	const struct secretstore *store = proxy_tenant_secrets(sb->tenant);
	size_t nsecrets;
	const struct monitor_grants *creds = sb->creds;
	struct policy *pol = NULL;
	size_t n = 0;
	enum render_err e;

	(void)d;
	for (size_t i = 0; i < sb->nroots && i < CORRAL_ROOTS_MAX; i++)
		roots[i] = (struct render_root){ .path = sb->roots[i], .writable = sb->writable[i] };
	/* The hosts the grants added at the create, as sandbox_plan_regrant
	 * rendered them. */
	for (size_t i = 0; creds != NULL && i < creds->ngrants && n < CORRAL_GRANTS_MAX; i++)
		if (creds->grants[i].nhosts > 0)
			grants[n++] = (struct render_grant){ creds->grants[i].name,
			    (const char *const *)creds->grants[i].hosts, creds->grants[i].nhosts };
	/* And its secrets' hosts, as sandbox_plan_secret_hosts added them. */
	(void)secretstore_secrets(store, &nsecrets);
	for (size_t i = 0; i < nsecrets && n < CORRAL_GRANTS_MAX + SECRETSUB_MAX; i++) {
		grants[n] = (struct render_grant){ sb->secrets[i].name, NULL, 0 };
		grants[n].hosts = secretstore_hosts(store, i, &grants[n].nhosts);
		n++;
	}
	spec.ngrants = n;
	if ((e = render_policy(&spec, &pol)) != RENDER_OK) {
		reason_set(err, "cannot render the policy: %s", render_strerror(e));
		return -1;
	}
	if (proxy_tenant_set_policy(sb->tenant, pol, close_revoked, closed) == -1) {
		reason_set(err, "out of memory");
		return -1;
	}
	return 0;
}

int
sandbox_free_slot(struct daemon *d)
{
	char ifname[IF_NAMESIZE];

	for (unsigned slot = 0; slot < MONITOR_SLOTS_MAX; slot++) {
		bool used = warm_slot_taken(d, slot);

		for (struct sandbox *sb = d->sandboxes; sb != NULL && !used; sb = sb->next)
			used = sb->slot == slot;
		for (struct sandbox_creating *c = d->creating; c != NULL && !used; c = c->next)
			used = c->plan.slot == (int)slot;
		snprintf(ifname, sizeof(ifname), "crs%uh", slot);
		if (!used && if_nametoindex(ifname) == 0)
			return (int)slot;
	}
	return -1;
}

/* The profile a create of P runs, or NULL when it gives its own policy. */
static const char *
sandbox_plan_profile(const struct sandbox_plan *p)
{
	if (p->req->policy[0] != '\0')
		return NULL;
	return p->req->profile[0] != '\0' ? p->req->profile : PROFILE_DEFAULT_NAME;
}

/* P's slot: a warm sandbox's of its profile when the pool has one (the
 * monitor builds on it; a create refused before the monitor sees it
 * gives it back, sandbox_creating_end), else a free one. */
static int
sandbox_plan_slot(struct daemon *d, struct sandbox_plan *p, char **err)
{
	const char *profile = sandbox_plan_profile(p);

	if (profile != NULL && (p->slot = warm_claim(d, profile)) != -1) {
		p->warm = true;
		return 0;
	}
	if ((p->slot = sandbox_free_slot(d)) != -1)
		return 0;
	reason_set(err, "no address left in the sandbox pool");
	return -1;
}

/* The registry's row type holds plain char pointers; it only reads them. */
static char *
sandbox_unconst(const char *s)
{
	return (char *)(uintptr_t)s;
}

/* A registry row for the plan (state creating): the reservation that the
 * cap is checked against. */
static int
sandbox_reserve(struct daemon *d, struct sandbox_plan *p, char **err)
{
	struct registry_root roots[CORRAL_ROOTS_MAX];
	struct registry_sandbox row = {
		.name = p->name, .provider = sandbox_unconst("corral"), .machine_id = d->cfg->machine_id,
		.session_id = p->req->session_id[0] != '\0' ? p->req->session_id : NULL,
		.agent = p->req->agent[0] != '\0' ? p->req->agent : NULL,
		.roots = roots, .roots_len = p->nroots,
		.profile = p->req->policy[0] != '\0' ? NULL : sandbox_unconst(
		    p->req->profile[0] != '\0' ? p->req->profile : PROFILE_DEFAULT_NAME),
		.net_slot = p->slot, .owner_uid = p->caller->uid,
	};
	struct registry_caps caps = { .per_user = d->cfg->max_sandboxes_per_user };

	for (size_t i = 0; i < p->nroots; i++) {
		roots[i].path = sandbox_unconst(p->roots[i].path);
		roots[i].writable = !p->roots[i].read_only;
	}
	if (registry_cap_from_env(d->cfg->max_sandboxes, &caps.total, err) == -1)
		return -1;
	return registry_reserve(d->registry, &row, &caps, err);
}

static char **
sandbox_strv(size_t n)
{
	return xcalloc(n + 1, sizeof(char *));
}

/* The broker's record of a built sandbox. */
static struct sandbox *
sandbox_record(struct sandbox_plan *p, struct monitor_built *b)
{
	const Corral__SandboxCreate *req = p->req;
	struct sandbox *sb = xcalloc(1, sizeof(*sb));

	sb->name = xstrdup(p->name);
	sb->owner = p->caller->uid;
	sb->uid = p->uid;
	sb->gid = p->gid;
	sb->profile = req->policy[0] != '\0' ? NULL :
	    xstrdup(req->profile[0] != '\0' ? req->profile : PROFILE_DEFAULT_NAME);
	sb->session_id = xstrdup(req->session_id);
	sb->agent = xstrdup(req->agent);
	sb->cwd = xstrdup(req->cwd);
	sb->home = xstrdup(b->home);
	sb->roots = sandbox_strv(p->nroots);
	sb->writable = xcalloc(p->nroots + 1, sizeof(bool));
	for (size_t i = 0; i < p->nroots; i++) {
		sb->roots[i] = xstrdup(p->roots[i].path);
		sb->writable[i] = !p->roots[i].read_only;
	}
	sb->nroots = p->nroots;
	sb->labels = sandbox_strv(req->n_labels);
	for (size_t i = 0; i < req->n_labels; i++)
		xasprintf(&sb->labels[sb->nlabels++], "%s=%s", req->labels[i]->key,
		    req->labels[i]->value);
	/* The grants' variables first, then the secrets' placeholders: the
	 * caller's --env may override them. */
	sb->creds = b->creds;
	b->creds = NULL;
	sb->env = sandbox_strv((sb->creds != NULL ? sb->creds->nenv : 0));
	for (size_t i = 0; sb->creds != NULL && i < sb->creds->nenv; i++)
		sb->env[sb->nenv++] = xstrdup(sb->creds->env[i]);
	secrets_env(&p->secrets, b->home, &sb->env, &sb->nenv);
	sb->env = xreallocarray(sb->env, sb->nenv + req->n_env + 1, sizeof(char *));
	for (size_t i = 0; i < req->n_env; i++)
		xasprintf(&sb->env[sb->nenv++], "%s=%s", req->env[i]->key, req->env[i]->value);
	sb->env[sb->nenv] = NULL;
	secrets_shown_make(&p->secrets, &sb->secrets, &sb->nsecrets);
	sb->missing = sandbox_strv(b->n_missing);
	for (size_t i = 0; i < b->n_missing; i++)
		sb->missing[sb->nmissing++] = xstrdup(b->missing[i]);
	sb->partial = b->n_missing > 0;
	for (size_t i = 0; i < SANDBOX_CGROUP_LIMITS; i++)
		sb->limit_source[i] = xstrdup(b->limit_source[i] != NULL ? b->limit_source[i] : "none");
	memcpy(sb->limits, p->limits, sizeof(sb->limits));
	sb->slot = (unsigned)p->slot;
	sb->gateway = b->gateway;
	sb->address = b->address;
	sb->host_ifindex = b->host_ifindex;
	sb->landlock_abi = b->landlock_abi;
	sb->init_pid = b->init_pid;
	sb->created_us = time_now_us();
	return sb;
}

/* What the sandbox's binary rules may match: the executables of its
 * read-only system mounts (exetrust.h), read from corral-init's mount
 * table now that it is built. Without it the sandbox does not start. */
static int
sandbox_exetrust(struct sandbox *sb, char **err)
{
	const char *excluded[CORRAL_ROOTS_MAX + 1];
	struct exetrust trust;
	const char *why;
	size_t n = 0;

	for (size_t i = 0; i < sb->nroots && n < CORRAL_ROOTS_MAX; i++)
		excluded[n++] = sb->roots[i];
	excluded[n++] = sb->home;
	if (exetrust_load(&trust, sb->init_pid, excluded, n, &why) == -1)
		return reason_set(err, "cannot tell which executables binary rules may match: %s",
		    why);
	if (proxy_tenant_set_exetrust(sb->tenant, &trust) == -1)
		return reason_set(err, "out of memory");
	return 0;
}

/* The proxy's question, for the ledger's run field. */
static const char *
sandbox_run_of(void *arg, pid_t pid, const pid_t *ancestors, size_t n)
{
	struct sandbox *sb = arg;
	struct daemon *d = sb->daemon;

	return d != NULL && d->run_of != NULL ? d->run_of(d, sb, pid, ancestors, n) : NULL;
}

/* The sandbox's proxy: its policy (taken, whatever happens), its
 * identification (the diag socket, taken), its three listeners on the
 * gateway, clients only from the sandbox's own address. */
static int
sandbox_tenant(struct daemon *d, struct sandbox *sb, struct policy *policy,
    struct sandbox_plan *p, struct monitor_built *b, char **err)
{
	struct proxy_tenant_info info = { .name = sb->name, .ca = p->ca,
	    .session_id = sb->session_id[0] != '\0' ? sb->session_id : NULL,
	    .agent = sb->agent[0] != '\0' ? sb->agent : NULL, .owner = sb->owner,
	    .owner_tunnels = sb->owner == 0 ? 0 : d->cfg->shares.tunnels,
	    .run_of = sandbox_run_of, .run_of_arg = sb };
	struct sockaddr_in client = { .sin_family = AF_INET, .sin_addr = sb->address };
	const struct sockaddr *cl = (const struct sockaddr *)&client;
	pid_t boundary[1] = { b->init_pid };
	int rc;

	sb->daemon = d;
	p->ca = NULL;           /* the tenant's, whatever happens */
	if ((sb->tenant = proxy_tenant_new(d->proxy, &info, policy)) == NULL) {
		reason_set(err, "out of memory");
		return -1;
	}
	proxy_tenant_set_secrets(sb->tenant, p->secrets.store);
	p->secrets.store = NULL;
	proxy_tenant_set_identity(sb->tenant, b->diag_fd, b->map_fd, boundary, 1);
	b->diag_fd = -1;
	if (sandbox_exetrust(sb, err) == -1)
		return -1;
	/* The tenant takes every descriptor, also when one is refused. */
	rc = proxy_tenant_adopt_connect(sb->tenant, b->connect_fd, cl, 32);
	rc |= proxy_tenant_adopt_transparent(sb->tenant, b->transparent_fd, cl, 32);
	rc |= proxy_tenant_adopt_dns(sb->tenant, b->dns_udp_fd, b->dns_tcp_fd, cl, 32);
	b->connect_fd = b->transparent_fd = b->dns_udp_fd = b->dns_tcp_fd = -1;
	if (rc != 0)
		reason_set(err, "cannot serve the sandbox's gateway: %s", strerror(errno));
	return rc != 0 ? -1 : 0;
}

/* corral-init's channel closed under a live sandbox: it died (the kernel
 * then ended everything in its namespace). Logged; delete cleans up. */
static void
sandbox_on_channel_lost(void *arg)
{
	struct sandbox *sb = arg;

	log_warnx("sandbox %s: its init process is gone", sb->name);
}

static void
sandbox_free(struct sandbox *sb)
{
	char **lists[] = { sb->roots, sb->labels, sb->env, sb->missing };

	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		for (size_t i = 0; lists[l] != NULL && lists[l][i] != NULL; i++)
			free(lists[l][i]);
		free(lists[l]);
	}
	for (size_t i = 0; i < 3; i++)
		free(sb->limit_source[i]);
	free(sb->writable);
	free(sb->name);
	free(sb->profile);
	free(sb->session_id);
	free(sb->agent);
	free(sb->cwd);
	free(sb->home);
	monitor_grants_free(sb->creds);
	secrets_shown_free(sb->secrets, sb->nsecrets);
	free(sb);
}

/* The grants asked (corral(1), "--grant"): known names, and the home they are
 * copied from: --home, else the caller's own (run_as's for a root
 * caller, whose /root run_as could not read). The monitor opens it with
 * the caller's rights and copies as run_as. */
static int
sandbox_plan_grants(struct daemon *d, struct sandbox_plan *p, char **err)
{
	const struct passwd *pw;
	char known[SANDBOX_GRANT_NAMES_MAX_BYTES];
	struct grant g;

	if (p->req->n_grants == 0) {
		/* --secret reads its sources there too (the CLI does). */
		if (p->req->home[0] == '\0' || p->req->n_secrets > 0)
			return 0;
		reason_set(err, "--home names where --grant copies from: give --grant too");
		return -1;
	}
	if (p->req->n_grants > CORRAL_GRANTS_MAX) {
		reason_set(err, "at most %d --grant options", CORRAL_GRANTS_MAX);
		return -1;
	}
	if (p->req->home[0] != '\0' && p->req->home[0] != '/') {
		reason_set(err, "--home must be an absolute path");
		return -1;
	}
	for (size_t i = 0; i < p->req->n_grants; i++) {
		if (grant_find(p->req->grants[i], d->cfg->grants, d->cfg->ncredentials, &g) == -1) {
			grant_names(d->cfg->grants, d->cfg->ncredentials, known, sizeof(known));
			reason_set(err, "unknown grant '%s' (known: %s)", p->req->grants[i], known);
			return -1;
		}
		p->grants[p->ngrants++] = (struct render_grant){ g.name, g.hosts, g.nhosts };
	}
	pw = p->req->home[0] != '\0' ? NULL : getpwuid(p->caller->uid == 0 ? p->uid : p->caller->uid);
	if (p->req->home[0] == '\0' && (pw == NULL || pw->pw_dir[0] != '/')) {
		reason_set(err, "--grant: no home to copy from; give --home DIR");
		return -1;
	}
	snprintf(p->grant_home, sizeof(p->grant_home), "%s", pw != NULL ? pw->pw_dir : p->req->home);
	return 0;
}

/* The secrets' hosts join the policy's credentials entry, as a grant's:
 * the proxy terminates them and swaps each value in toward them alone. */
static void
sandbox_plan_secret_hosts(struct sandbox_plan *p)
{
	for (size_t i = 0; i < p->secrets.n; i++)
		p->grants[p->ngrants++] = p->secrets.hosts[i];
}

/* After the copy, the hosts the grants really add (a kubeconfig names its
 * clusters): the profile's policy is rendered again with them. */
static int
sandbox_plan_regrant(struct daemon *d, struct sandbox_plan *p,
    const struct monitor_grants *creds, char **err)
{
	struct policy *pol;

	if (creds == NULL || p->req->policy[0] != '\0')
		return 0;
	p->ngrants = 0;
	for (size_t i = 0; i < creds->ngrants && p->ngrants < CORRAL_GRANTS_MAX; i++)
		if (creds->grants[i].nhosts > 0)
			p->grants[p->ngrants++] = (struct render_grant){ creds->grants[i].name,
			    (const char *const *)creds->grants[i].hosts, creds->grants[i].nhosts };
	sandbox_plan_secret_hosts(p);
	if ((pol = sandbox_policy_profile(d, p, err)) == NULL)
		return -1;
	policy_free(p->policy);
	p->policy = pol;
	return 0;
}

/* Checks the request; fills P (its policy is the caller's to free). */
static int
sandbox_plan(struct daemon *d, struct sandbox_plan *p, char **err)
{
	if (sandbox_plan_name(d, p, err) == -1 || sandbox_plan_texts(p->req, err) == -1 ||
	    sandbox_plan_roots(p, err) == -1 ||
	    limits_resolve(&d->cfg->limits, p->req->pids, p->req->memory_bytes,
	    p->req->milli_cpus, p->limits, err) == -1 ||
	    sandbox_plan_run_as(d, p, err) == -1 || sandbox_plan_slot(d, p, err) == -1)
		return -1;
	if (sandbox_plan_grants(d, p, err) == -1 ||
	    secrets_plan(d->cfg, p->req, &p->secrets, err) == -1)
		return -1;
	sandbox_plan_secret_hosts(p);
	if (p->req->policy[0] != '\0' && p->req->profile[0] != '\0') {
		reason_set(err, "give --profile or --policy, not both");
		return -1;
	}
	p->policy = p->req->policy[0] != '\0' ? sandbox_policy_given(p, err) :
	    sandbox_policy_profile(d, p, err);
	return p->policy != NULL ? 0 : -1;
}

/* The monitor's request for plan P. */
static void
sandbox_monitor_request(struct daemon *d, const struct sandbox_plan *p,
    struct monitor_create *mc)
{
	const Corral__SandboxCreate *req = p->req;

	memset(mc, 0, sizeof(*mc));
	mc->caller_fd = p->caller->fd;
	mc->name = p->name;
	mc->uid = p->uid;
	mc->gid = p->gid;
	mc->roots = p->roots;
	mc->n_roots = p->nroots;
	mc->workdir = req->cwd[0] != '\0' ? req->cwd : NULL;
	mc->slot = (unsigned)p->slot;
	mc->pids = p->limits[LIMITS_PIDS].value;
	mc->memory_bytes = p->limits[LIMITS_MEMORY].value;
	mc->cpu_milli = (uint32_t)p->limits[LIMITS_CPUS].value;
	mc->tmpfs_bytes = p->limits[LIMITS_TMPFS].value;
	mc->home_bytes = p->limits[LIMITS_HOME].value;
	mc->hard_requirement = p->policy->landlock == POLICY_LANDLOCK_HARD_REQUIREMENT;
	mc->warm = p->warm;
	mc->grant_home = req->n_grants > 0 ? p->grant_home : NULL;
	mc->grants = (const char *const *)req->grants;
	mc->n_grants = req->n_grants;
	/* The CA is made while the monitor builds (sandbox_send_ca). */
	mc->files = p->secrets.files;
	mc->n_files = p->secrets.nfiles;
}

_Static_assert(POLICY_UNIX_SOCKETS_MAX <= MONITOR_SOCKETS_MAX &&
    POLICY_UNIX_SOCKET_NAME_MAX_BYTES <= INITPROTO_SOCKET_NAME_MAX_BYTES,
    "a policy's unix sockets fit the monitor's request");

/* The policy's host Unix sockets, for the monitor to open as the caller
 * (their storage is P's). */
static void
sandbox_monitor_sockets(struct sandbox_plan *p, struct monitor_create *mc)
{
	const struct policy *pol = p->policy;

	mc->n_sockets = 0;
	for (size_t i = 0; i < pol->nunix_sockets && i < MONITOR_SOCKETS_MAX; i++)
		p->sockets[mc->n_sockets++] = (struct monitor_socket){ pol->unix_sockets[i].path,
		    pol->unix_sockets[i].name };
	mc->sockets = p->sockets;
}

/* The variables the policy's sockets name (SSH_AUTH_SOCK=...), first in
 * SB's environment: the caller's --env may override them. */
static void
sandbox_socket_env(struct sandbox *sb, const struct policy *pol)
{
	size_t n = 0, k = 0;
	char **env;

	for (size_t i = 0; i < pol->nunix_sockets; i++)
		n += pol->unix_sockets[i].env != NULL;
	if (n == 0)
		return;
	env = sandbox_strv(n + sb->nenv);
	for (size_t i = 0; i < pol->nunix_sockets; i++)
		if (pol->unix_sockets[i].env != NULL)
			xasprintf(&env[k++], "%s=%s/%s", pol->unix_sockets[i].env,
			    INITPROTO_SOCKETS_DIR, pol->unix_sockets[i].name);
	for (size_t i = 0; i < sb->nenv; i++)
		env[k++] = sb->env[i];
	free(sb->env);
	sb->env = env;
	sb->nenv = k;
}

/* The host pid of the process of PIDFD (its fdinfo is read in our pid
 * namespace), or -1. */
static int64_t
sandbox_pidfd_pid(int pidfd)
{
	char path[64], buf[SANDBOX_FDINFO_MAX_BYTES];
	const char *p;
	long pid = -1;
	ssize_t n;
	int fd;

	if (pidfd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strstr(buf, "\nPid:")) != NULL)
		pid = strtol(p + sizeof("\nPid:") - 1, NULL, 10);
	return pid > 0 ? pid : -1;
}

/* corral-init refused a host Unix socket or connected a listed one: the
 * ledger and the denials say so. */
static void
sandbox_on_unix(const struct initproto_unix *u, void *arg)
{
	struct sandbox *sb = arg;
	struct proxy_unix_event e = { .allowed = u->decision == INITPROTO_UNIX_ALLOW,
	    .path = u->path, .listed = u->listed[0] != '\0' ? u->listed : NULL,
	    .binary = u->binary[0] != '\0' ? u->binary : NULL, .pid = sandbox_pidfd_pid(u->pidfd) };

	if (u->unreported > 0)
		log_warnx("sandbox %s: %u unix socket decisions went unrecorded (its channel "
		    "was full)", sb->name, (unsigned)u->unreported);
	proxy_tenant_record_unix(sb->tenant, &e);
}

/* SB hit a limit (COUNT times since the last look): a lifecycle record,
 * and the log, so that a run killed at its memory limit is explained. */
static void
sandbox_on_limit(enum limitwatch_kind kind, uint64_t count, void *arg)
{
	struct sandbox *sb = arg;

	log_warnx("sandbox %s: held to its %s (%llu time%s)", sb->name,
	    kind == LIMITWATCH_MEMORY ? "memory limit, a process was killed" : "pids limit",
	    (unsigned long long)count, count == 1 ? "" : "s");
	if (proxy_tenant_record_lifecycle(sb->tenant, limitwatch_reason(kind), NULL) == -1)
		log_warnx("sandbox %s: the ledger could not record a limit hit", sb->name);
}

/* The broker's part of a built sandbox: its record, proxy tenant and exec
 * channel. NULL with the reason in *ERR (the monitor's part then goes). */
static struct sandbox *
sandbox_adopt(struct daemon *d, struct sandbox_plan *p, struct monitor_built *b, char **err)
{
	struct policy *policy;
	struct sandbox *sb = NULL;

	if (sandbox_plan_regrant(d, p, b->creds, err) == -1)
		goto fail;
	sb = sandbox_record(p, b);
	sandbox_socket_env(sb, p->policy);
	policy = p->policy;
	p->policy = NULL;       /* the tenant takes it */
	if (sandbox_tenant(d, sb, policy, p, b, err) == -1)
		goto fail;
	sb->channel = exec_channel_new(d->base, b->channel_fd, sandbox_on_channel_lost, sb);
	b->channel_fd = -1;
	if (sb->channel == NULL) {
		reason_set(err, "cannot serve the sandbox's exec channel");
		goto fail;
	}
	exec_channel_on_unix(sb->channel, sandbox_on_unix, sb);
	sb->limit_watch = limitwatch_new(d->base, b->memory_events_fd, b->pids_events_fd,
	    sandbox_on_limit, sb);
	b->memory_events_fd = b->pids_events_fd = -1;
	if (proxy_tenant_record_lifecycle(sb->tenant, "created", NULL) == -1) {
		reason_set(err, "the egress ledger cannot record the sandbox");
		goto fail;
	}
	return sb;
fail:
	monitor_built_close(b);
	monitor_grants_free(b->creds);
	b->creds = NULL;
	if (sb != NULL) {
		limitwatch_free(sb->limit_watch);
		exec_channel_free(sb->channel);
		proxy_tenant_free(sb->tenant);
	}
	sandbox_destroy(d, p->name, NULL, NULL);
	sandbox_free(sb);
	return NULL;
}

static void
sandbox_creating_unlink(struct sandbox_creating *c)
{
	struct sandbox_creating **pp;

	for (pp = &c->d->creating; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			return;
		}
}

/* Tells the requester and forgets C; a failed create leaves no row. */
static void
sandbox_creating_end(struct sandbox_creating *c, struct sandbox *sb, const char *code,
    const char *err)
{
	struct daemon *d = c->d;

	if (sb == NULL && c->reserved)
		registry_remove(c->d->registry, c->plan.name, NULL);
	/* Refused before the monitor saw it: the warm sandbox stays warm. */
	if (c->plan.warm && !c->sent)
		warm_unclaim(c->d, sandbox_plan_profile(&c->plan), (unsigned)c->plan.slot);
	c->done(c->d, sb, code, err != NULL ? err : "the sandbox could not be created", c->arg);
	policy_free(c->plan.policy);
	secrets_plan_clear(&c->plan.secrets);
	tlsca_free(c->plan.ca);
	free(c->plan.ca_pem);
	corral__sandbox_create__free_unpacked(c->req, NULL);
	free(c->ca_why);
	if (c->kept_fd != -1)
		close(c->kept_fd);
	free(c);
	/* After the create it served (or refused): a refill never delays a
	 * claim, and a claimed warm sandbox is replaced. */
	warm_fill(d);
}

/* The monitor's answer: the sandbox it built (B), or why not. */
/* The wire's code of a build the monitor did not make: its refusals of
 * what the caller may not have (a folder, a home, run_as) are
 * permission_denied; anything else is the machine's failure. */
static const char *
sandbox_failure_code(const char *why)
{
	return why != NULL && monitor_wire_refusal(why) ? WIRE_ERR_PERMISSION :
	    WIRE_ERR_UNAVAILABLE;
}

static void
sandbox_on_built(struct monitor_built *b, const char *why, void *arg)
{
	struct sandbox_creating *c = arg;
	struct daemon *d = c->d;
	struct sandbox *sb;
	char *err = NULL;

	sandbox_creating_unlink(c);
	if (b != NULL && d->closing) {
		/* The monitor tears it down with everything else as it exits. */
		monitor_built_close(b);
		monitor_grants_free(b->creds);
		b = NULL;
		why = "corrald is stopping";
	}
	if (b == NULL) {
		if (c->ca_why != NULL)
			why = c->ca_why;
		sandbox_creating_end(c, NULL, sandbox_failure_code(why), why);
		return;
	}
	if ((sb = sandbox_adopt(d, &c->plan, b, &err)) == NULL) {
		sandbox_creating_end(c, NULL, WIRE_ERR_UNAVAILABLE, err);
		free(err);
		return;
	}
	registry_mark_ready(d->registry, sb->name, sb->init_pid,
	    sb->partial ? "partial" : "full", NULL);
	sb->next = d->sandboxes;
	d->sandboxes = sb;
	log_info("sandbox %s created for uid %u, running as %u (%s%s)", sb->name,
	    (unsigned)c->caller.uid, (unsigned)sb->uid, sb->partial ? "partial" : "full",
	    c->plan.warm ? ", from the warm pool" : "");
	sandbox_creating_end(c, sb, NULL, NULL);
}

/* REQ copied whole: the frame it came in is gone before the monitor answers. */
static Corral__SandboxCreate *
sandbox_request_copy(const Corral__SandboxCreate *req)
{
	size_t len = corral__sandbox_create__get_packed_size(req);
	uint8_t *buf = xmalloc(len + 1);
	Corral__SandboxCreate *copy;

	corral__sandbox_create__pack(req, buf);
	copy = corral__sandbox_create__unpack(NULL, len, buf);
	explicit_bzero(buf, len);       /* it held the secrets' values */
	free(buf);
	if (copy == NULL)
		fatalx("%s: out of memory", __func__);
	return copy;
}

/* C's CA, for the endpoints the proxy terminates (the certificate goes
 * into the trust bundle inside, the key stays here), made while the
 * monitor builds: it reads the certificate only when the spec goes. One
 * that cannot be made gives the create up (the monitor answers FAILED,
 * and C's reason is told). */
static void
sandbox_send_ca(struct daemon *d, struct sandbox_creating *c)
{
	char *err = NULL;

	if ((c->plan.ca = tlsca_new(c->plan.name, &c->ca_why)) == NULL ||
	    (c->plan.ca_pem = tlsca_cert_pem(c->plan.ca)) == NULL) {
		if (c->ca_why == NULL)
			c->ca_why = xstrdup("out of memory");
	}
	if (privsep_send_ca(d->privsep, c->ca_why == NULL ? c->plan.ca_pem : "", &err) == -1) {
		/* The link is broken: every create in flight hears it. */
		log_error("sandbox %s: %s", c->plan.name, err);
		free(err);
	}
}

static void sandbox_create_planned(struct sandbox_creating *c);

/* The owner of a root caller's first writable root, as the monitor told:
 * the plan is made again with it. */
static void
sandbox_on_owner(uid_t uid, gid_t gid, const char *why, void *arg)
{
	struct sandbox_creating *c = arg;
	char *err = NULL;

	if (why != NULL) {
		secrets_wipe_request(c->req);
		reason_set(&err, "root %s: %s", c->plan.roots[c->plan.owner_root].path, why);
		sandbox_creating_end(c, NULL, WIRE_ERR_INVALID, err);
		free(err);
		return;
	}
	c->plan = (struct sandbox_plan){ .req = c->req, .caller = &c->caller, .slot = -1,
	    .owner_known = true, .owner = uid, .owner_group = gid };
	sandbox_create_planned(c);
}

/* Asks the monitor for the owner the plan wants, in turn after what it
 * was asked before, while the loop goes on. The client's connection is
 * kept open meanwhile: the monitor reads the caller from it, now and
 * for the create, and a number that closed could name another's. */
static int
sandbox_ask_owner(struct sandbox_creating *c, char **err)
{
	const char *path = c->plan.roots[c->plan.owner_root].path;
	char *why = NULL;

	if ((c->kept_fd = fcntl(c->caller.fd, F_DUPFD_CLOEXEC, 0)) == -1)
		return reason_set(err, "cannot keep the connection: %s", strerror(errno));
	c->caller.fd = c->kept_fd;
	if (privsep_owner_async(c->d->privsep, c->caller.fd, path, sandbox_on_owner, c,
	    &why) == -1) {
		reason_set(err, "root %s: %s", path, why);
		free(why);
		return -1;
	}
	return 0;
}

/* Plans C's request, reserves its row and sends it to the monitor; or
 * asks the owner the plan needs first, and comes back. */
static void
sandbox_create_planned(struct sandbox_creating *c)
{
	struct daemon *d = c->d;
	struct monitor_create mc;
	char *err = NULL;
	const char *code = WIRE_ERR_INVALID;

	if (sandbox_plan(d, &c->plan, &err) == -1) {
		if (c->plan.owner_wanted && err == NULL) {
			if (sandbox_ask_owner(c, &err) == 0)
				return;
			code = WIRE_ERR_UNAVAILABLE;
		}
		secrets_wipe_request(c->req);
		if (c->plan.name_taken)
			code = WIRE_ERR_EXISTS;
		goto refused;
	}
	/* The values are in the plan's locked memory now, and nowhere else. */
	secrets_wipe_request(c->req);
	code = WIRE_ERR_LIMIT;
	if (sandbox_reserve(d, &c->plan, &err) == -1)
		goto refused;
	c->reserved = true;
	code = WIRE_ERR_UNAVAILABLE;
	if (!d->sandboxes_ok) {
		reason_set(&err, "sandboxes cannot be built here: %s", d->monitor_why);
		goto refused;
	}
	sandbox_monitor_request(d, &c->plan, &mc);
	sandbox_monitor_sockets(&c->plan, &mc);
	/* Root is served whatever others have asked for. */
	if (privsep_create_async(d->privsep, &mc, c->caller.uid == 0, sandbox_on_built, c,
	    &err) == -1)
		goto refused;
	c->sent = true;
	c->next = d->creating;
	d->creating = c;
	sandbox_send_ca(d, c);
	return;
refused:
	sandbox_creating_end(c, NULL, code, err);
	free(err);
}

void
sandbox_create(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__SandboxCreate *req, sandbox_created_fn done, void *arg)
{
	struct sandbox_creating *c = xcalloc(1, sizeof(*c));

	c->d = d;
	c->caller = *caller;
	c->kept_fd = -1;
	c->req = sandbox_request_copy(req);
	c->plan = (struct sandbox_plan){ .req = c->req, .caller = &c->caller, .slot = -1 };
	c->done = done;
	c->arg = arg;
	sandbox_create_planned(c);
}

void
sandbox_on_gone(struct daemon *d, sandbox_gone_fn fn)
{
	if (d->ngone_hooks == SANDBOX_GONE_HOOKS_MAX)
		fatalx("%s: too many hooks", __func__);
	d->gone_hooks[d->ngone_hooks++] = fn;
}

/* Unlinks SB and ends what the broker holds of it: its users let go first,
 * then the tunnels, then corral-init (its channel). */
static void
sandbox_end(struct daemon *d, struct sandbox *sb, const char *why)
{
	struct sandbox **pp;

	for (pp = &d->sandboxes; *pp != NULL; pp = &(*pp)->next)
		if (*pp == sb) {
			*pp = sb->next;
			break;
		}
	for (size_t i = 0; i < d->ngone_hooks; i++)
		d->gone_hooks[i](sb);
	/* Its last limit hits, then its end, are recorded while it has a tenant. */
	limitwatch_free(sb->limit_watch);
	sb->limit_watch = NULL;
	(void)proxy_tenant_record_lifecycle(sb->tenant, why, NULL);
	proxy_tenant_free(sb->tenant);
	exec_channel_free(sb->channel);
}

void
sandbox_abandon(struct daemon *d, struct sandbox *sb)
{
	sandbox_end(d, sb, "abandoned");
	log_warnx("sandbox %s ended without the monitor: its cgroups and home wait for "
	    "the next start's reaping", sb->name);
	sandbox_free(sb);
}

/* One who waits for a teardown. */
struct sandbox_waiter {
	sandbox_destroyed_fn done;
	void *arg;
};

/* A sandbox the monitor is tearing down, and who waits for it: its
 * delete, and the deletes of the same name that came meanwhile. */
struct sandbox_destroying {
	struct daemon *d;
	char *name;
	uid_t owner;                    /* its caller's (root's: the pool's, a reap's) */
	struct sandbox_waiter *waiters;
	size_t nwaiters;
	struct sandbox_destroying *next;        /* d->destroying */
};

static void
sandbox_destroying_wait(struct sandbox_destroying *del, sandbox_destroyed_fn done, void *arg)
{
	if (done == NULL)
		return;
	del->waiters = xreallocarray(del->waiters, del->nwaiters + 1, sizeof(*del->waiters));
	del->waiters[del->nwaiters++] = (struct sandbox_waiter){ done, arg };
}

static void
sandbox_on_destroyed(const char *why, void *arg)
{
	struct sandbox_destroying *del = arg, **pp;

	for (pp = &del->d->destroying; *pp != NULL; pp = &(*pp)->next)
		if (*pp == del) {
			*pp = del->next;
			break;
		}
	/* At shutdown the monitor tears down whatever is left by itself. */
	if (why != NULL && !del->d->closing)
		log_error("sandbox %s: %s", del->name, why);
	for (size_t i = 0; i < del->nwaiters; i++)
		del->waiters[i].done(del->name, why, del->waiters[i].arg);
	free(del->waiters);
	free(del->name);
	free(del);
}

/* Tears NAME down for OWNER. */
static void
sandbox_destroy_for(struct daemon *d, const char *name, uid_t owner, sandbox_destroyed_fn done,
    void *arg)
{
	struct sandbox_destroying *del = xcalloc(1, sizeof(*del));
	char *err = NULL;

	del->d = d;
	del->name = xstrdup(name);
	del->owner = owner;
	sandbox_destroying_wait(del, done, arg);
	del->next = d->destroying;
	d->destroying = del;
	if (privsep_destroy_async(d->privsep, name, sandbox_on_destroyed, del, &err) == -1) {
		sandbox_on_destroyed(err, del);
		free(err);
	}
}

void
sandbox_destroy(struct daemon *d, const char *name, sandbox_destroyed_fn done, void *arg)
{
	sandbox_destroy_for(d, name, 0, done, arg);
}

size_t
sandbox_await_teardowns(struct daemon *d, const char *name, const struct sandbox_caller *caller,
    sandbox_destroyed_fn done, void *arg)
{
	size_t n = 0;

	for (struct sandbox_destroying *del = d->destroying; del != NULL; del = del->next) {
		if ((name != NULL && strcmp(del->name, name) != 0) ||
		    (caller->uid != 0 && caller->uid != del->owner))
			continue;
		sandbox_destroying_wait(del, done, arg);
		n++;
	}
	return n;
}

void
sandbox_delete(struct daemon *d, struct sandbox *sb, sandbox_destroyed_fn done, void *arg)
{
	/* What the broker holds goes first, then what the monitor holds. A
	 * create of the same name that follows is built after this teardown:
	 * the monitor serves in order. */
	sandbox_end(d, sb, "deleted");
	registry_remove(d->registry, sb->name, NULL);
	log_info("sandbox %s deleted", sb->name);
	sandbox_destroy_for(d, sb->name, sb->owner, done, arg);
	sandbox_free(sb);
	warm_fill(d);           /* it made room */
}

static Corral__Mount *
sandbox_mount(const char *source, const char *target, bool read_only)
{
	Corral__Mount *m = xmalloc(sizeof(*m));

	corral__mount__init(m);
	m->type = xstrdup("bind");
	m->source = xstrdup(source);
	m->target = xstrdup(target);
	m->read_only = read_only;
	return m;
}

/* Every bind mount of SB: the system folders present here, read-only,
 * the roots at their own paths, HOME and the corral runtime. */
static void
sandbox_info_mounts(const struct sandbox *sb, Corral__SandboxInfo *info)
{
	static const char *const system_dirs[] = { "/usr", "/lib", "/lib32", "/lib64",
	    "/libx32", "/bin", "/sbin", "/etc", "/opt" };
	size_t max = sizeof(system_dirs) / sizeof(system_dirs[0]) + sb->nroots + 2, n = 0;
	struct stat st;

	info->mounts = xcalloc(max, sizeof(*info->mounts));
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (lstat(system_dirs[i], &st) == 0 && S_ISDIR(st.st_mode))
			info->mounts[n++] = sandbox_mount(system_dirs[i], system_dirs[i], true);
	for (size_t i = 0; i < sb->nroots; i++)
		info->mounts[n++] = sandbox_mount(sb->roots[i], sb->roots[i], !sb->writable[i]);
	info->mounts[n++] = sandbox_mount(sb->home, sb->home, false);
	info->mounts[n++] = sandbox_mount(render_runtime_default(), render_runtime_default(), true);
	info->n_mounts = n;
}

static void
sandbox_info_roots(const struct sandbox *sb, Corral__SandboxInfo *info)
{
	info->roots = xcalloc(sb->nroots, sizeof(*info->roots));
	for (size_t i = 0; i < sb->nroots; i++) {
		Corral__Root *r = xmalloc(sizeof(*r));

		corral__root__init(r);
		r->path = xstrdup(sb->roots[i]);
		r->writable = sb->writable[i];
		info->roots[i] = r;
	}
	info->n_roots = sb->nroots;
}

static void
sandbox_info_labels(const struct sandbox *sb, Corral__SandboxInfo *info)
{
	info->labels = xcalloc(sb->nlabels, sizeof(*info->labels));
	for (size_t i = 0; i < sb->nlabels; i++) {
		Corral__SandboxInfo__LabelsEntry *e = xmalloc(sizeof(*e));
		const char *eq = strchr(sb->labels[i], '=');

		corral__sandbox_info__labels_entry__init(e);
		e->key = xstrndup(sb->labels[i], (size_t)(eq - sb->labels[i]));
		e->value = xstrdup(eq + 1);
		info->labels[i] = e;
	}
	info->n_labels = sb->nlabels;
}

static void
sandbox_info_runner(const struct sandbox *sb, Corral__SandboxInfo *info)
{
	char gw[INET_ADDRSTRLEN];
	struct utsname u;

	info->runner = xmalloc(sizeof(*info->runner));
	corral__runner__init(info->runner);
	info->runner->os = xstrdup("Linux");
	info->runner->kernel = xstrdup(uname(&u) == 0 ? u.release : "");
	info->runner->landlock_abi = (uint32_t)sb->landlock_abi;
	inet_ntop(AF_INET, &sb->gateway, gw, sizeof(gw));
	info->network = xmalloc(sizeof(*info->network));
	corral__network__init(info->network);
	info->network->gateway = xstrdup(gw);
	xasprintf(&info->network->proxy, "http://%s:%d", gw, GATEWAY_CONNECT_PORT);
	info->network->dns = xstrdup(gw);
}

/* Each limit: its value, where it came from (default, config, request)
 * and what enforces it (the v1 or v2 controller, or tmpfs's size). */
static void
sandbox_info_limits(const struct sandbox *sb, Corral__SandboxInfo *info)
{
	info->limits = xcalloc(LIMITS_N, sizeof(*info->limits));
	for (size_t i = 0; i < LIMITS_N; i++) {
		Corral__Limit *l = xmalloc(sizeof(*l));

		corral__limit__init(l);
		l->name = xstrdup(limits_name((enum limits_kind)i));
		l->value = sb->limits[i].value;
		l->source = xstrdup(limits_origin_name(sb->limits[i].origin));
		l->controller = xstrdup(i < SANDBOX_CGROUP_LIMITS ? sb->limit_source[i] : "tmpfs");
		info->limits[i] = l;
	}
	info->n_limits = LIMITS_N;
}

static char **
sandbox_strv_dup(const char *const *v, size_t n)
{
	char **out = sandbox_strv(n);

	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

/* What each grant copied, skipped and adds to the policy. */
static void
sandbox_info_credentials(const struct sandbox *sb, Corral__SandboxInfo *info)
{
	size_t n = sb->creds != NULL ? sb->creds->ngrants : 0;

	info->credentials = xcalloc(n + 1, sizeof(*info->credentials));
	for (size_t i = 0; i < n; i++) {
		const struct monitor_grant_applied *a = &sb->creds->grants[i];
		Corral__Credential *c = xmalloc(sizeof(*c));

		corral__credential__init(c);
		c->name = xstrdup(a->name);
		c->hosts = sandbox_strv_dup((const char *const *)a->hosts, c->n_hosts = a->nhosts);
		c->copied = sandbox_strv_dup((const char *const *)a->copied, c->n_copied = a->ncopied);
		c->skipped = xcalloc(a->nskipped + 1, sizeof(*c->skipped));
		for (; c->n_skipped < a->nskipped; c->n_skipped++) {
			Corral__CredentialSkip *k = xmalloc(sizeof(*k));

			corral__credential_skip__init(k);
			k->path = xstrdup(a->skipped[c->n_skipped].path);
			k->reason = xstrdup(a->skipped[c->n_skipped].reason);
			c->skipped[c->n_skipped] = k;
		}
		info->credentials[info->n_credentials++] = c;
	}
}

/* Each secret's name, hosts, variables and files: never its value. */
static void
sandbox_info_secrets(const struct sandbox *sb, Corral__SandboxInfo *info)
{
	const struct secretstore *store = proxy_tenant_secrets(sb->tenant);

	info->secrets = xcalloc(sb->nsecrets + 1, sizeof(*info->secrets));
	for (size_t i = 0; i < sb->nsecrets; i++) {
		Corral__SecretInfo *si = xmalloc(sizeof(*si));
		const char *const *hosts;
		size_t nhosts;

		corral__secret_info__init(si);
		si->name = xstrdup(sb->secrets[i].name);
		hosts = secretstore_hosts(store, i, &nhosts);
		si->hosts = sandbox_strv_dup(hosts, si->n_hosts = nhosts);
		si->env = sandbox_strv_dup((const char *const *)sb->secrets[i].env,
		    si->n_env = sb->secrets[i].nenv);
		si->files = sandbox_strv_dup((const char *const *)sb->secrets[i].files,
		    si->n_files = sb->secrets[i].nfiles);
		info->secrets[info->n_secrets++] = si;
	}
}

Corral__SandboxInfo *
sandbox_info(const struct daemon *d, const struct sandbox *sb)
{
	Corral__SandboxInfo *info = xmalloc(sizeof(*info));
	struct passwd *pw = getpwuid(sb->uid);

	corral__sandbox_info__init(info);
	info->name = xstrdup(sb->name);
	info->state = xstrdup("ready");
	info->enforcement = xstrdup(sb->partial ? "partial" : "full");
	info->missing_layers = xcalloc(sb->nmissing + 1, sizeof(char *));
	for (size_t i = 0; i < sb->nmissing; i++)
		info->missing_layers[i] = xstrdup(sb->missing[i]);
	info->n_missing_layers = sb->nmissing;
	info->profile = xstrdup(sb->profile != NULL ? sb->profile : "");
	info->session_id = xstrdup(sb->session_id);
	info->agent = xstrdup(sb->agent);
	info->machine_id = xstrdup(d->cfg->machine_id);
	info->created_at_us = sb->created_us;
	if (pw != NULL)
		info->run_as = xstrdup(pw->pw_name);
	else
		xasprintf(&info->run_as, "%u", (unsigned)sb->uid);
	info->cwd = xstrdup(sb->cwd[0] != '\0' ? sb->cwd : sb->nroots > 0 ? sb->roots[0] : "");
	info->home = xstrdup(sb->home);
	sandbox_info_roots(sb, info);
	sandbox_info_mounts(sb, info);
	sandbox_info_labels(sb, info);
	sandbox_info_runner(sb, info);
	sandbox_info_limits(sb, info);
	sandbox_info_credentials(sb, info);
	sandbox_info_secrets(sb, info);
	return info;
}
