/* One sandbox as JSON: the object agent frameworks read from `sandbox get --json`. */
#include "config.h"

#include <stddef.h>

#include "broker/cli/cli-sandbox-json.h"
#include "common/timeutil.h"

/* KEY: S, or null when S is absent or empty. */
static void
cli_json_opt(struct json *j, const char *key, const char *s)
{
	json_kv_string(j, key, s != NULL && s[0] != '\0' ? s : NULL);
}

static void
cli_json_strings(struct json *j, const char *key, char **v, size_t n)
{
	json_key(j, key);
	json_array_begin(j);
	for (size_t i = 0; i < n; i++)
		json_str(j, v[i]);
	json_array_end(j);
}

static void
cli_json_roots(struct json *j, Corral__Root **roots, size_t n)
{
	json_key(j, "roots");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		json_kv_string(j, "path", roots[i]->path);
		json_kv_bool(j, "writable", roots[i]->writable);
		json_object_end(j);
	}
	json_array_end(j);
}

static void
cli_json_mounts(struct json *j, Corral__Mount **mounts, size_t n)
{
	json_key(j, "mounts");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		/* Every mount the daemon lists is a bind mount (corral(1)). */
		json_kv_string(j, "type", mounts[i]->type[0] != '\0' ? mounts[i]->type : "bind");
		json_kv_string(j, "source", mounts[i]->source);
		json_kv_string(j, "target", mounts[i]->target);
		json_kv_bool(j, "read_only", mounts[i]->read_only);
		json_object_end(j);
	}
	json_array_end(j);
}

static void
cli_json_labels(struct json *j, Corral__SandboxInfo__LabelsEntry **labels, size_t n)
{
	json_key(j, "labels");
	json_object_begin(j);
	for (size_t i = 0; i < n; i++)
		json_kv_string(j, labels[i]->key, labels[i]->value);
	json_object_end(j);
}

/* runner and network: objects whose fields are null when the daemon sent none. */
static void
cli_json_runner(struct json *j, const Corral__Runner *r)
{
	json_key(j, "runner");
	json_object_begin(j);
	cli_json_opt(j, "os", r != NULL ? r->os : NULL);
	cli_json_opt(j, "kernel", r != NULL ? r->kernel : NULL);
	if (r != NULL && r->landlock_abi > 0)
		json_kv_uint(j, "landlock_abi", r->landlock_abi);
	else
		json_kv_null(j, "landlock_abi");
	json_object_end(j);
}

static void
cli_json_network(struct json *j, const Corral__Network *n)
{
	json_key(j, "network");
	json_object_begin(j);
	cli_json_opt(j, "gateway", n != NULL ? n->gateway : NULL);
	cli_json_opt(j, "proxy", n != NULL ? n->proxy : NULL);
	cli_json_opt(j, "dns", n != NULL ? n->dns : NULL);
	json_object_end(j);
}

/* What a grant did not copy, and why. */
static void
cli_json_skips(struct json *j, Corral__CredentialSkip **skips, size_t n)
{
	json_key(j, "skipped");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		json_kv_string(j, "path", skips[i]->path);
		json_kv_string(j, "reason", skips[i]->reason);
		json_object_end(j);
	}
	json_array_end(j);
}

static void
cli_json_credentials(struct json *j, Corral__Credential **creds, size_t n)
{
	json_key(j, "credentials");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		json_kv_string(j, "name", creds[i]->name);
		cli_json_strings(j, "hosts", creds[i]->hosts, creds[i]->n_hosts);
		cli_json_strings(j, "copied", creds[i]->copied, creds[i]->n_copied);
		cli_json_skips(j, creds[i]->skipped, creds[i]->n_skipped);
		json_object_end(j);
	}
	json_array_end(j);
}

/* Each secret's name, hosts, variables and files: corrald never sends a value. */
static void
cli_json_secrets(struct json *j, Corral__SecretInfo **secrets, size_t n)
{
	json_key(j, "secrets");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		json_kv_string(j, "name", secrets[i]->name);
		cli_json_strings(j, "hosts", secrets[i]->hosts, secrets[i]->n_hosts);
		cli_json_strings(j, "env", secrets[i]->env, secrets[i]->n_env);
		cli_json_strings(j, "files", secrets[i]->files, secrets[i]->n_files);
		json_object_end(j);
	}
	json_array_end(j);
}

static void
cli_json_limits(struct json *j, Corral__Limit **limits, size_t n)
{
	json_key(j, "limits");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		json_kv_string(j, "name", limits[i]->name);
		json_kv_uint(j, "value", limits[i]->value);
		cli_json_opt(j, "source", limits[i]->source);
		cli_json_opt(j, "controller", limits[i]->controller);
		json_object_end(j);
	}
	json_array_end(j);
}

static void
cli_json_time(struct json *j, const char *key, int64_t us)
{
	char ts[RFC3339_US_BYTES];

	if (us <= 0) {
		json_kv_null(j, key);
		return;
	}
	time_format_rfc3339_us(us, ts);
	json_kv_string(j, key, ts);
}

void
cli_sandbox_json(struct json *j, const Corral__SandboxInfo *s)
{
	json_object_begin(j);
	json_kv_string(j, "name", s->name);
	cli_json_opt(j, "state", s->state);
	cli_json_opt(j, "enforcement", s->enforcement);
	cli_json_strings(j, "missing_layers", s->missing_layers, s->n_missing_layers);
	cli_json_opt(j, "profile", s->profile);
	cli_json_roots(j, s->roots, s->n_roots);
	cli_json_mounts(j, s->mounts, s->n_mounts);
	cli_json_labels(j, s->labels, s->n_labels);
	cli_json_opt(j, "session_id", s->session_id);
	cli_json_opt(j, "agent", s->agent);
	cli_json_opt(j, "machine_id", s->machine_id);
	cli_json_runner(j, s->runner);
	cli_json_network(j, s->network);
	cli_json_credentials(j, s->credentials, s->n_credentials);
	cli_json_secrets(j, s->secrets, s->n_secrets);
	cli_json_time(j, "created_at", s->created_at_us);
	cli_json_opt(j, "run_as", s->run_as);
	cli_json_opt(j, "cwd", s->cwd);
	cli_json_opt(j, "home", s->home);
	cli_json_limits(j, s->limits, s->n_limits);
	json_object_end(j);
}
