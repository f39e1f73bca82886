/* Rendering: a sandbox's policy from its roots and profile, and any policy
 * as plain YAML text through libyaml's emitter. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <yaml.h>

#include "common/buf.h"
#include "common/utf8.h"
#include "policy/match.h"
#include "policy/render.h"

#define RENDER_RUNTIME_DEFAULT LIBEXECDIR "/corral"
#define RENDER_ID_MAX_BYTES 24          /* a decimal uid_t or gid_t, with NUL */
#define RENDER_CIDR_MAX_BYTES (INET6_ADDRSTRLEN + 4)

/* The system directories every sandbox reads (corral-policy(5),
 * "RENDERED POLICIES"). /lib32 and /libx32 are left out: corral-init binds
 * the /lib* that exist, and the common ones are enough for the policy to say
 * what is meant. */
static const char *const render_system_ro[] = {
	"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/opt",
};
/* A private tmpfs in every sandbox, so writable everywhere. */
static const char *const render_system_rw[] = { "/tmp" };

#define RENDER_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const render_errors[] = {
	[RENDER_OK] = "no error",
	[RENDER_ERR_NOMEM] = "out of memory",
	[RENDER_ERR_BAD_PATH] = "a root or home path is not absolute, or has a '.' or '..' segment",
	[RENDER_ERR_ROOT_ID] = "run_as may not be uid or gid 0: a sandbox never runs as root",
	[RENDER_ERR_GRANT_HOST] = "a grant's host is not a valid host name",
	[RENDER_ERR_GRANT_PORT] = "a grant's endpoint needs a port from 1 to 65535 (host:port)",
	[RENDER_ERR_KEY_TAKEN] = "the profile already has an entry named credentials",
	[RENDER_ERR_EMIT] = "the YAML emitter failed",
	[RENDER_ERR_TOO_BIG] = "the rendered policy is too large",
};

const char *
render_strerror(enum render_err err)
{
	if ((size_t)err >= RENDER_COUNT(render_errors) || render_errors[err] == NULL)
		return "unknown render error";
	return render_errors[err];
}

const char *
render_runtime_default(void)
{
	return RENDER_RUNTIME_DEFAULT;
}

/* ---- building the policy ---- */

/* True when PATH (already normalized) is in LIST. */
static bool
render_paths_has(const struct policy_paths *list, const char *path)
{
	size_t i;

	for (i = 0; i < list->npaths; i++)
		if (strcmp(list->paths[i], path) == 0)
			return true;
	return false;
}

/* Normalizes an absolute PATH into a malloc'd copy: repeated and trailing
 * slashes dropped. "." and ".." segments are refused, not resolved: the
 * policy must name what the caller named. NULL with *ERR set on failure. */
static char *
render_path_normalize(const char *path, enum render_err *err)
{
	char *out;
	size_t i, o = 0, seg;

	*err = RENDER_ERR_BAD_PATH;
	if (path == NULL || path[0] != '/')
		return NULL;
	if ((out = malloc(strlen(path) + 1)) == NULL) {
		*err = RENDER_ERR_NOMEM;
		return NULL;
	}
	for (i = 0; path[i] != '\0'; i += seg) {
		if (path[i] == '/') {
			seg = 1;
			continue;
		}
		seg = strcspn(path + i, "/");
		if ((seg == 1 && path[i] == '.') ||
		    (seg == 2 && path[i] == '.' && path[i + 1] == '.')) {
			free(out);
			return NULL;
		}
		out[o++] = '/';
		memcpy(out + o, path + i, seg);
		o += seg;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

/* Appends a normalized copy of PATH to LIST unless it is there already. */
static enum render_err
render_paths_add(struct policy_paths *list, const char *path)
{
	enum render_err err;
	char *norm, **grown;

	if ((norm = render_path_normalize(path, &err)) == NULL)
		return err;
	if (render_paths_has(list, norm)) {
		free(norm);
		return RENDER_OK;
	}
	grown = reallocarray(list->paths, list->npaths + 1, sizeof(*grown));
	if (grown == NULL) {
		free(norm);
		return RENDER_ERR_NOMEM;
	}
	grown[list->npaths++] = norm;
	list->paths = grown;
	return RENDER_OK;
}

/* Drops from RO every path that RW lists: a writable root the system also
 * lists (/opt given as a writable root) is read-write, and only that. */
static void
render_paths_drop_writable(struct policy_paths *ro, const struct policy_paths *rw)
{
	size_t i, kept = 0;

	for (i = 0; i < ro->npaths; i++) {
		if (render_paths_has(rw, ro->paths[i]))
			free(ro->paths[i]);
		else
			ro->paths[kept++] = ro->paths[i];
	}
	ro->npaths = kept;
}

/* Adds the roots whose writability is WRITABLE to LIST. */
static enum render_err
render_add_roots(struct policy_paths *list, const struct render_spec *spec,
    bool writable)
{
	enum render_err err;
	size_t i;

	for (i = 0; i < spec->nroots; i++) {
		if (spec->roots[i].writable != writable)
			continue;
		if ((err = render_paths_add(list, spec->roots[i].path)) != RENDER_OK)
			return err;
	}
	return RENDER_OK;
}

/* Fills read_write and read_only for SPEC. */
static enum render_err
render_filesystem(struct policy *p, const struct render_spec *spec)
{
	const char *runtime = spec->runtime_dir != NULL ? spec->runtime_dir :
	    RENDER_RUNTIME_DEFAULT;
	enum render_err err = RENDER_OK;
	size_t i;

	for (i = 0; err == RENDER_OK && i < RENDER_COUNT(render_system_rw); i++)
		err = render_paths_add(&p->read_write, render_system_rw[i]);
	if (err == RENDER_OK && spec->home != NULL)
		err = render_paths_add(&p->read_write, spec->home);
	if (err == RENDER_OK)
		err = render_add_roots(&p->read_write, spec, true);
	for (i = 0; err == RENDER_OK && i < RENDER_COUNT(render_system_ro); i++)
		err = render_paths_add(&p->read_only, render_system_ro[i]);
	if (err == RENDER_OK)
		err = render_paths_add(&p->read_only, runtime);
	if (err == RENDER_OK)
		err = render_add_roots(&p->read_only, spec, false);
	if (err == RENDER_OK)
		render_paths_drop_writable(&p->read_only, &p->read_write);
	return err;
}

/* Sets process: run_as to UID and GID as decimal strings. */
static enum render_err
render_process(struct policy *p, uid_t uid, gid_t gid)
{
	char text[RENDER_ID_MAX_BYTES];

	/* Never root inside: refuse rather than render a policy that would be
	 * refused later with a vaguer message. */
	if (uid == 0 || gid == 0)
		return RENDER_ERR_ROOT_ID;
	p->has_process = true;
	snprintf(text, sizeof(text), "%lu", (unsigned long)uid);
	if ((p->run_as_user = strdup(text)) == NULL)
		return RENDER_ERR_NOMEM;
	snprintf(text, sizeof(text), "%lu", (unsigned long)gid);
	if ((p->run_as_group = strdup(text)) == NULL)
		return RENDER_ERR_NOMEM;
	return RENDER_OK;
}

/* Moves a deep copy of PROFILE's network entries and listed sockets into P. */
static enum render_err
render_copy_rules(struct policy *p, const struct policy *profile)
{
	struct policy *copy;

	if (profile == NULL || (profile->nrules == 0 && profile->nunix_sockets == 0))
		return RENDER_OK;
	if ((copy = policy_dup(profile)) == NULL)
		return RENDER_ERR_NOMEM;
	p->rules = copy->rules;
	p->nrules = copy->nrules;
	copy->rules = NULL;
	copy->nrules = 0;
	p->unix_sockets = copy->unix_sockets;
	p->nunix_sockets = copy->nunix_sockets;
	copy->unix_sockets = NULL;
	copy->nunix_sockets = 0;
	policy_free(copy);
	return RENDER_OK;
}

/* Parses the decimal port after the last ':' of TEXT; 0 when invalid. */
static uint16_t
render_parse_port(const char *text)
{
	const char *colon = strrchr(text, ':');
	unsigned long v;
	char *end;

	if (colon == NULL || colon[1] < '0' || colon[1] > '9')
		return 0;
	errno = 0;
	v = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || v > UINT16_MAX)
		return 0;
	return (uint16_t)v;
}

/* Adds PORT to E's sorted, duplicate-free port list. */
static enum render_err
render_endpoint_add_port(struct policy_endpoint *e, uint16_t port)
{
	uint16_t *grown;
	size_t i = 0;

	while (i < e->nports && e->ports[i] < port)
		i++;
	if (i < e->nports && e->ports[i] == port)
		return RENDER_OK;
	grown = reallocarray(e->ports, e->nports + 1, sizeof(*grown));
	if (grown == NULL)
		return RENDER_ERR_NOMEM;
	memmove(grown + i + 1, grown + i, (e->nports - i) * sizeof(*grown));
	grown[i] = port;
	e->ports = grown;
	e->nports++;
	return RENDER_OK;
}

/* The endpoint of R for HOST, appended (without ports) when R has none. */
static struct policy_endpoint *
render_rule_endpoint(struct policy_rule *r, struct policy_host *host)
{
	struct policy_endpoint *grown;
	size_t i;

	for (i = 0; i < r->nendpoints; i++) {
		if (r->endpoints[i].host.kind == host->kind &&
		    strcmp(r->endpoints[i].host.name, host->name) == 0) {
			free(host->name);
			host->name = NULL;
			return &r->endpoints[i];
		}
	}
	grown = reallocarray(r->endpoints, r->nendpoints + 1, sizeof(*grown));
	if (grown == NULL)
		return NULL;
	r->endpoints = grown;
	memset(&grown[r->nendpoints], 0, sizeof(*grown));
	grown[r->nendpoints].host = *host;
	grown[r->nendpoints].sni_check = true;
	host->name = NULL;
	return &grown[r->nendpoints++];
}

/* Adds "host:port" TEXT to R, merging ports of the same host. */
static enum render_err
render_rule_add_hostport(struct policy_rule *r, const char *text)
{
	struct policy_host host = { 0 };
	struct policy_endpoint *e;
	uint16_t port = render_parse_port(text);
	char *name;

	if (port == 0)
		return RENDER_ERR_GRANT_PORT;
	if ((name = strndup(text, (size_t)(strrchr(text, ':') - text))) == NULL)
		return RENDER_ERR_NOMEM;
	if (match_host_parse(name, &host) != MATCH_OK) {
		free(name);
		return RENDER_ERR_GRANT_HOST;
	}
	free(name);
	if ((e = render_rule_endpoint(r, &host)) == NULL) {
		free(host.name);
		return RENDER_ERR_NOMEM;
	}
	return render_endpoint_add_port(e, port);
}

/* A new empty rule at the end of P's list, keyed and named KEY. */
static struct policy_rule *
render_rule_append(struct policy *p, const char *key)
{
	struct policy_rule *grown, *r;

	grown = reallocarray(p->rules, p->nrules + 1, sizeof(*grown));
	if (grown == NULL)
		return NULL;
	p->rules = grown;
	r = &grown[p->nrules];
	memset(r, 0, sizeof(*r));
	p->nrules++;
	r->key = strdup(key);
	r->name = strdup(key);
	r->binaries = calloc(1, sizeof(*r->binaries));
	if (r->key == NULL || r->name == NULL || r->binaries == NULL)
		return NULL;
	if ((r->binaries[0].path = strdup(RENDER_ANY_BINARY)) == NULL)
		return NULL;
	r->nbinaries = 1;
	r->any_binary = true;
	return r;
}

static bool
render_has_key(const struct policy *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->nrules; i++)
		if (strcmp(p->rules[i].key, key) == 0)
			return true;
	return false;
}

/* Adds the "credentials" entry holding every grant's hosts. Its binaries
 * match any executable: the granted tools (ssh, gh, git) are many and
 * spawn others. */
static enum render_err
render_grants(struct policy *p, const struct render_spec *spec)
{
	struct policy_rule *r = NULL;
	enum render_err err;
	size_t i, j;

	for (i = 0; i < spec->ngrants; i++) {
		for (j = 0; j < spec->grants[i].nhosts; j++) {
			if (r == NULL && render_has_key(p, RENDER_CREDENTIALS_KEY))
				return RENDER_ERR_KEY_TAKEN;
			if (r == NULL &&
			    (r = render_rule_append(p, RENDER_CREDENTIALS_KEY)) == NULL)
				return RENDER_ERR_NOMEM;
			err = render_rule_add_hostport(r, spec->grants[i].hosts[j]);
			if (err != RENDER_OK)
				return err;
		}
	}
	return RENDER_OK;
}

enum render_err
render_policy(const struct render_spec *spec, struct policy **out)
{
	struct policy *p;
	enum render_err err;

	*out = NULL;
	if ((p = policy_new()) == NULL)
		return RENDER_ERR_NOMEM;
	p->landlock = POLICY_LANDLOCK_HARD_REQUIREMENT;
	if ((err = render_filesystem(p, spec)) != RENDER_OK)
		goto fail;
	if ((err = render_process(p, spec->uid, spec->gid)) != RENDER_OK)
		goto fail;
	if ((err = render_copy_rules(p, spec->profile)) != RENDER_OK)
		goto fail;
	if ((err = render_grants(p, spec)) != RENDER_OK)
		goto fail;
	*out = p;
	return RENDER_OK;
fail:
	policy_free(p);
	return err;
}

/* ---- writing YAML ---- */

/* The emitter and where it writes. Once FAILED is set every later call is
 * a no-op, so a writer checks once at the end. */
struct render_out {
	yaml_emitter_t emitter;
	struct buf *text;
	bool failed;
};

static int
render_write_handler(void *data, unsigned char *bytes, size_t size)
{
	struct render_out *o = data;

	return buf_append(o->text, bytes, size) == 0;
}

/* Emits EV (initialized when OK is true), recording a failure. */
static void
render_emit(struct render_out *o, yaml_event_t *ev, int ok)
{
	if (o->failed) {
		if (ok)
			yaml_event_delete(ev);
		return;
	}
	if (!ok || !yaml_emitter_emit(&o->emitter, ev))
		o->failed = true;
}

/* A scalar in STYLE; plain when libyaml finds that unambiguous. */
static void
render_scalar_styled(struct render_out *o, const char *text, yaml_scalar_style_t style)
{
	yaml_event_t ev;
	int ok;

	ok = yaml_scalar_event_initialize(&ev, NULL, NULL,
	    (yaml_char_t *)(uintptr_t)text, (int)strlen(text), 1, 1, style);
	render_emit(o, &ev, ok);
}

static void
render_scalar(struct render_out *o, const char *text)
{
	render_scalar_styled(o, text, YAML_ANY_SCALAR_STYLE);
}

static void
render_uint(struct render_out *o, unsigned long v)
{
	char text[RENDER_ID_MAX_BYTES];

	snprintf(text, sizeof(text), "%lu", v);
	render_scalar_styled(o, text, YAML_PLAIN_SCALAR_STYLE);
}

static void
render_map_start(struct render_out *o, yaml_mapping_style_t style)
{
	yaml_event_t ev;

	render_emit(o, &ev, yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, style));
}

static void
render_map_end(struct render_out *o)
{
	yaml_event_t ev;

	render_emit(o, &ev, yaml_mapping_end_event_initialize(&ev));
}

static void
render_seq_start(struct render_out *o, yaml_sequence_style_t style)
{
	yaml_event_t ev;

	render_emit(o, &ev, yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, style));
}

static void
render_seq_end(struct render_out *o)
{
	yaml_event_t ev;

	render_emit(o, &ev, yaml_sequence_end_event_initialize(&ev));
}

/* KEY: a block list of the paths (or [] when empty). */
static void
render_path_list(struct render_out *o, const char *key, const struct policy_paths *list)
{
	size_t i;

	render_scalar(o, key);
	render_seq_start(o, list->npaths == 0 ? YAML_FLOW_SEQUENCE_STYLE :
	    YAML_BLOCK_SEQUENCE_STYLE);
	for (i = 0; i < list->npaths; i++)
		render_scalar(o, list->paths[i]);
	render_seq_end(o);
}

/* unix_sockets:, when the policy lists any; each with its name. */
static void
render_unix_sockets(struct render_out *o, const struct policy *p)
{
	if (p->nunix_sockets == 0)
		return;
	render_scalar(o, "unix_sockets");
	render_seq_start(o, YAML_BLOCK_SEQUENCE_STYLE);
	for (size_t i = 0; i < p->nunix_sockets; i++) {
		render_map_start(o, YAML_BLOCK_MAPPING_STYLE);
		render_scalar(o, "path");
		render_scalar(o, p->unix_sockets[i].path);
		render_scalar(o, "name");
		render_scalar(o, p->unix_sockets[i].name);
		if (p->unix_sockets[i].env != NULL) {
			render_scalar(o, "env");
			render_scalar(o, p->unix_sockets[i].env);
		}
		render_map_end(o);
	}
	render_seq_end(o);
}

static void
render_filesystem_section(struct render_out *o, const struct policy *p)
{
	render_scalar(o, "filesystem_policy");
	render_map_start(o, YAML_BLOCK_MAPPING_STYLE);
	render_path_list(o, "read_only", &p->read_only);
	render_path_list(o, "read_write", &p->read_write);
	render_unix_sockets(o, p);
	render_map_end(o);
}

static void
render_landlock_section(struct render_out *o, const struct policy *p)
{
	render_scalar(o, "landlock");
	render_map_start(o, YAML_BLOCK_MAPPING_STYLE);
	render_scalar(o, "compatibility");
	render_scalar(o, p->landlock == POLICY_LANDLOCK_BEST_EFFORT ?
	    "best_effort" : "hard_requirement");
	render_map_end(o);
}

/* process:, when the policy has one; ids quoted, as strings. */
static void
render_process_section(struct render_out *o, const struct policy *p)
{
	if (!p->has_process)
		return;
	render_scalar(o, "process");
	render_map_start(o, YAML_BLOCK_MAPPING_STYLE);
	if (p->run_as_user != NULL) {
		render_scalar(o, "run_as_user");
		render_scalar_styled(o, p->run_as_user, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	}
	if (p->run_as_group != NULL) {
		render_scalar(o, "run_as_group");
		render_scalar_styled(o, p->run_as_group, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	}
	render_map_end(o);
}

/* The host pattern as written in a policy ("*.example.com"). */
static void
render_host(struct render_out *o, const struct policy_host *h)
{
	const char *prefix = h->kind == POLICY_HOST_ONE_LABEL ? "*." :
	    h->kind == POLICY_HOST_ANY_DEPTH ? "**." : "";
	char text[POLICY_HOST_MAX_BYTES + 4];

	snprintf(text, sizeof(text), "%s%s", prefix, h->name);
	render_scalar(o, text);
}

/* port: N for one port, ports: [N, ...] for several. */
static void
render_ports(struct render_out *o, const struct policy_endpoint *e)
{
	size_t i;

	if (e->nports == 1) {
		render_scalar(o, "port");
		render_uint(o, e->ports[0]);
		return;
	}
	render_scalar(o, "ports");
	render_seq_start(o, YAML_FLOW_SEQUENCE_STYLE);
	for (i = 0; i < e->nports; i++)
		render_uint(o, e->ports[i]);
	render_seq_end(o);
}

/* allowed_ips: [cidr, ...], when the endpoint has any. */
static void
render_allowed_ips(struct render_out *o, const struct policy_endpoint *e)
{
	char addr[INET6_ADDRSTRLEN], text[RENDER_CIDR_MAX_BYTES];
	size_t i;

	if (e->nallowed_ips == 0)
		return;
	render_scalar(o, "allowed_ips");
	render_seq_start(o, YAML_FLOW_SEQUENCE_STYLE);
	for (i = 0; i < e->nallowed_ips; i++) {
		const struct policy_cidr *c = &e->allowed_ips[i];

		if (inet_ntop(c->family, c->addr, addr, sizeof(addr)) == NULL) {
			o->failed = true;
			return;
		}
		snprintf(text, sizeof(text), "%s/%u", addr, (unsigned)c->prefix_len);
		render_scalar(o, text);
	}
	render_seq_end(o);
}

/* KEY: [item, ...], when LIST has any. */
static void
render_list(struct render_out *o, const char *key, const struct policy_paths *list)
{
	if (list->npaths == 0)
		return;
	render_scalar(o, key);
	render_seq_start(o, YAML_FLOW_SEQUENCE_STYLE);
	for (size_t i = 0; i < list->npaths; i++)
		render_scalar(o, list->paths[i]);
	render_seq_end(o);
}

/* tls: terminate and its rules, when the endpoint is terminated. */
static void
render_tls(struct render_out *o, const struct policy_endpoint *e)
{
	if (e->tls != POLICY_TLS_TERMINATE)
		return;
	render_scalar(o, "tls");
	render_scalar(o, "terminate");
	if (e->nhttp_rules == 0)
		return;
	render_scalar(o, "rules");
	render_seq_start(o, YAML_FLOW_SEQUENCE_STYLE);
	for (size_t i = 0; i < e->nhttp_rules; i++) {
		render_map_start(o, YAML_FLOW_MAPPING_STYLE);
		render_list(o, "methods", &e->http_rules[i].methods);
		render_list(o, "paths", &e->http_rules[i].paths);
		render_map_end(o);
	}
	render_seq_end(o);
}

static void
render_endpoint(struct render_out *o, const struct policy_endpoint *e)
{
	render_map_start(o, YAML_FLOW_MAPPING_STYLE);
	render_scalar(o, "host");
	render_host(o, &e->host);
	render_ports(o, e);
	if (!e->sni_check) {
		render_scalar(o, "sni_check");
		render_scalar(o, "false");
	}
	render_allowed_ips(o, e);
	render_tls(o, e);
	render_map_end(o);
}

static void
render_rule(struct render_out *o, const struct policy_rule *r)
{
	size_t i;

	render_scalar(o, r->key);
	render_map_start(o, YAML_BLOCK_MAPPING_STYLE);
	render_scalar(o, "name");
	render_scalar(o, r->name != NULL ? r->name : r->key);
	render_scalar(o, "endpoints");
	render_seq_start(o, YAML_BLOCK_SEQUENCE_STYLE);
	for (i = 0; i < r->nendpoints; i++)
		render_endpoint(o, &r->endpoints[i]);
	render_seq_end(o);
	render_scalar(o, "binaries");
	render_seq_start(o, r->nbinaries == 0 ? YAML_FLOW_SEQUENCE_STYLE :
	    YAML_BLOCK_SEQUENCE_STYLE);
	for (i = 0; i < r->nbinaries; i++) {
		render_map_start(o, YAML_FLOW_MAPPING_STYLE);
		render_scalar(o, "path");
		render_scalar(o, r->binaries[i].path);
		render_map_end(o);
	}
	render_seq_end(o);
	render_map_end(o);
}

static void
render_network_section(struct render_out *o, const struct policy *p)
{
	size_t i;

	if (p->nrules == 0)
		return;
	render_scalar(o, "network_policies");
	render_map_start(o, YAML_BLOCK_MAPPING_STYLE);
	for (i = 0; i < p->nrules; i++)
		render_rule(o, &p->rules[i]);
	render_map_end(o);
}

static void
render_write_guard_section(struct render_out *o, const struct policy *p)
{
	if (!p->has_write_guard)
		return;
	render_scalar(o, "write_guard");
	render_map_start(o, YAML_BLOCK_MAPPING_STYLE);
	if (p->write_guard_allowed_root != NULL) {
		render_scalar(o, "allowed_root");
		render_scalar(o, p->write_guard_allowed_root);
	}
	if (p->write_guard_deny_reason != NULL) {
		render_scalar(o, "deny_reason");
		render_scalar(o, p->write_guard_deny_reason);
	}
	render_map_end(o);
}

/* The whole document: stream, one implicit document, the top mapping. */
static void
render_document(struct render_out *o, const struct policy *p)
{
	yaml_event_t ev;

	render_emit(o, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
	render_emit(o, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
	render_map_start(o, YAML_BLOCK_MAPPING_STYLE);
	render_scalar(o, "version");
	render_uint(o, (unsigned long)p->version);
	render_filesystem_section(o, p);
	render_landlock_section(o, p);
	render_process_section(o, p);
	render_network_section(o, p);
	render_write_guard_section(o, p);
	render_map_end(o);
	render_emit(o, &ev, yaml_document_end_event_initialize(&ev, 1));
	render_emit(o, &ev, yaml_stream_end_event_initialize(&ev));
	if (!o->failed && !yaml_emitter_flush(&o->emitter))
		o->failed = true;
}

enum render_err
render_yaml(const struct policy *p, char **out, size_t *len)
{
	struct render_out o = { .failed = false };
	enum render_err err = RENDER_ERR_EMIT;

	*out = NULL;
	if ((o.text = buf_new(RENDER_YAML_MAX_BYTES)) == NULL)
		return RENDER_ERR_NOMEM;
	if (!yaml_emitter_initialize(&o.emitter)) {
		buf_free(o.text);
		return RENDER_ERR_NOMEM;
	}
	yaml_emitter_set_output(&o.emitter, render_write_handler, &o);
	yaml_emitter_set_unicode(&o.emitter, 1);
	/* No folding: a long deny_reason stays on one line. */
	yaml_emitter_set_width(&o.emitter, -1);
	render_document(&o, p);
	if (o.failed && o.emitter.error == YAML_WRITER_ERROR)
		err = RENDER_ERR_TOO_BIG;
	else if (!o.failed && (*out = buf_steal(o.text, len)) == NULL)
		err = RENDER_ERR_NOMEM;
	else if (!o.failed)
		err = RENDER_OK;
	yaml_emitter_delete(&o.emitter);
	buf_free(o.text);
	return err;
}

void
render_comment(const char *text, char *dst, size_t size)
{
	static const char head[] = "# ", tail[] = "\n";
	const unsigned char *t = (const unsigned char *)text;
	size_t n, k;

	if (size < sizeof(head) + sizeof(tail) - 1) {
		if (size > 0)
			dst[0] = '\0';
		return;
	}
	memcpy(dst, head, sizeof(head) - 1);
	n = sizeof(head) - 1;
	/* A whole character or none: YAML text is UTF-8, comments too. What
	 * YAML would take for a line break (NEL, U+2028, U+2029), or refuse
	 * (other controls), is shown as '?': the comment never ends early. */
	while (*t != '\0') {
		k = *t < 0x80 ? 1 : utf8_sequence(t, strnlen((const char *)t, 4));
		if (n + (k > 0 ? k : 1) + sizeof(tail) > size)
			break;
		if (k == 0 || utf8_is_control(t, k)) {
			/* A byte of no character, or a whole control character. */
			dst[n++] = '?';
			t += k > 0 ? k : 1;
		} else {
			memcpy(dst + n, t, k);
			n += k;
			t += k;
		}
	}
	memcpy(dst + n, tail, sizeof(tail));
}

enum render_err
render_yaml_buffer(const struct policy *p, char *dst, size_t size, size_t *len)
{
	enum render_err err;
	size_t n = 0;
	char *text;

	if (size > 0)
		dst[0] = '\0';
	if ((err = render_yaml(p, &text, &n)) != RENDER_OK)
		return err;
	if (n >= size) {
		free(text);
		return RENDER_ERR_TOO_BIG;
	}
	memcpy(dst, text, n + 1);
	free(text);
	if (len != NULL)
		*len = n;
	return RENDER_OK;
}
