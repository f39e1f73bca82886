/* What the daemon says to a persistent shell's runs (shellproto.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "broker/shellproto.h"
#include "common/buf.h"
#include "common/shellwire.h"
#include "common/xmalloc.h"

#define SHELLPROTO_QUOTED_MAX 4         /* bytes one byte becomes: \xHH */
#define SHELLPROTO_OURS "__corral"      /* corral's own variables */

/* Bash's variables that belong to one process, or that bash refuses from
 * the environment or as an assignment: derived, never kept. BASH_XTRACEFD
 * names a descriptor of the shell that set it, which bash would close. */
static const char *const shellproto_not_kept[] = {
	"PWD", "SHLVL", "_", "SHELLOPTS", "BASHOPTS", "IFS", "BASHPID", "PPID", "UID",
	"EUID", "LINENO", "RANDOM", "SRANDOM", "SECONDS", "EPOCHSECONDS", "EPOCHREALTIME",
	"HISTCMD", "BASH_SUBSHELL", "BASH_COMMAND", "BASH_ARGV0", "BASH_XTRACEFD", NULL
};

/* What a supervisor and its zygote are never started with (shellproto.h):
 * glibc's list of the variables it ignores for setuid programs, then
 * bash's own. */
static const char *const shellproto_not_for_zygote[] = {
	"GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN",
	"LOCPATH", "MALLOC_TRACE", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS",
	"TMPDIR", "TZDIR", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", NULL
};
static const char *const shellproto_not_for_zygote_prefix[] = { "LD_", "BASH_FUNC_", NULL };

void
shellproto_state_init(struct shellproto_state *st)
{
	st->cwd = NULL;
	st->env = NULL;
	st->nenv = 0;
}

void
shellproto_state_clear(struct shellproto_state *st)
{
	for (size_t i = 0; i < st->nenv; i++)
		free(st->env[i]);
	free(st->env);
	free(st->cwd);
	shellproto_state_init(st);
}

/* True when S (LEN bytes) is a shell variable's name. */
static bool
shellproto_name_ok(const char *s, size_t len)
{
	if (len == 0 || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') ||
	    (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < len; i++) {
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9')))
			return false;
	}
	return true;
}

bool
shellproto_name_kept(const char *name, size_t len)
{
	size_t ours = strlen(SHELLPROTO_OURS);

	if (!shellproto_name_ok(name, len) || (len >= ours && memcmp(name, SHELLPROTO_OURS, ours) == 0))
		return false;
	for (size_t i = 0; shellproto_not_kept[i] != NULL; i++) {
		if (strlen(shellproto_not_kept[i]) == len &&
		    memcmp(shellproto_not_kept[i], name, len) == 0)
			return false;
	}
	return true;
}

/* The length of the name of the entry E ("NAME=VALUE"). */
static size_t
shellproto_name_len(const char *e)
{
	const char *eq = strchr(e, '=');

	return eq != NULL ? (size_t)(eq - e) : strlen(e);
}

bool
shellproto_zygote_may_have(const char *e)
{
	size_t n = shellproto_name_len(e);

	for (size_t i = 0; shellproto_not_for_zygote_prefix[i] != NULL; i++) {
		if (strncmp(e, shellproto_not_for_zygote_prefix[i],
		    strlen(shellproto_not_for_zygote_prefix[i])) == 0)
			return false;
	}
	for (size_t i = 0; shellproto_not_for_zygote[i] != NULL; i++) {
		if (strlen(shellproto_not_for_zygote[i]) == n &&
		    memcmp(shellproto_not_for_zygote[i], e, n) == 0)
			return false;
	}
	return true;
}

void
shellproto_state_start(struct shellproto_state *st, const char *const *env)
{
	size_t n = 0;

	shellproto_state_clear(st);
	while (env != NULL && env[n] != NULL)
		n++;
	st->env = n > 0 ? xcalloc(n, sizeof(*st->env)) : NULL;
	for (size_t i = 0; i < n; i++) {
		if (strchr(env[i], '=') != NULL && st->nenv < SHELLPROTO_STATE_ENV_MAX &&
		    shellproto_name_kept(env[i], shellproto_name_len(env[i])))
			st->env[st->nenv++] = xstrdup(env[i]);
	}
}

/* Orders entries by name, for the duplicate check. */
static int
shellproto_entry_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t nx = shellproto_name_len(x), ny = shellproto_name_len(y);
	int c = memcmp(x, y, nx < ny ? nx : ny);

	return c != 0 ? c : (nx > ny) - (nx < ny);
}

/* True when two of the N entries E share a name (E is reordered). */
static bool
shellproto_has_twice(const char **e, size_t n)
{
	qsort(e, n, sizeof(*e), shellproto_entry_cmp);
	for (size_t i = 1; i < n; i++) {
		if (shellproto_entry_cmp(&e[i - 1], &e[i]) == 0)
			return true;
	}
	return false;
}

/* The kept entries of the fields from P to END (each NUL-ended) into
 * KEPT (room for SHELLPROTO_STATE_ENV_MAX); their count, or -1. */
static long
shellproto_entries(const char *p, const char *end, const char **kept)
{
	const char *z, *eq;
	long n = 0;

	for (; p < end; p = z + 1) {
		z = memchr(p, '\0', (size_t)(end - p));
		eq = memchr(p, '=', (size_t)(z - p));
		if (z == p || eq == NULL)
			return -1;
		if (!shellproto_name_kept(p, (size_t)(eq - p)))
			continue;
		if (n == SHELLPROTO_STATE_ENV_MAX)
			return -1;
		kept[n++] = p;
	}
	return n;
}

int
shellproto_state_parse(const char *dump, size_t len, struct shellproto_state *st)
{
	const char **kept, **order;
	const char *end = dump + len, *z;
	struct shellproto_state next;
	long n;

	if (len == 0 || len > SHELLWIRE_STATE_MAX_BYTES || dump[len - 1] != '\0')
		return -1;
	z = memchr(dump, '\0', len);
	if (dump[0] != '/' || (size_t)(z - dump) >= SHELLPROTO_CWD_MAX_BYTES)
		return -1;
	kept = xcalloc(SHELLPROTO_STATE_ENV_MAX, sizeof(*kept));
	order = NULL;
	n = shellproto_entries(z + 1, end, kept);
	if (n > 0) {
		order = xcalloc((size_t)n, sizeof(*order));
		memcpy(order, kept, (size_t)n * sizeof(*order));
	}
	if (n == -1 || (n > 0 && shellproto_has_twice(order, (size_t)n))) {
		free(kept);
		free(order);
		return -1;
	}
	next.cwd = xstrdup(dump);
	next.nenv = (size_t)n;
	next.env = n > 0 ? xcalloc((size_t)n, sizeof(*next.env)) : NULL;
	for (long i = 0; i < n; i++)
		next.env[i] = xstrdup(kept[i]);
	free(kept);
	free(order);
	shellproto_state_clear(st);
	*st = next;
	return 0;
}

/* Appends C to OUT as bash's $'...' quoting reads it back. */
static size_t
shellproto_quote_byte(unsigned char c, char *out)
{
	static const char hex[] = "0123456789abcdef";

	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == ' ' || c == '_' || c == '-' || c == '.' || c == '/' || c == '=' || c == ',') {
		out[0] = (char)c;
		return 1;
	}
	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
	return SHELLPROTO_QUOTED_MAX;
}

/* Appends S quoted as $'...'. */
static void
shellproto_put_quoted(struct buf *b, const char *s)
{
	char q[SHELLPROTO_QUOTED_MAX];

	buf_append_str(b, "$'");
	for (; *s != '\0'; s++)
		buf_append(b, q, shellproto_quote_byte((unsigned char)*s, q));
	buf_append_str(b, "'");
}

/* The value of NAME (LEN bytes) in the NULL-terminated or N-long list
 * ENV, or NULL. */
static const char *
shellproto_find(const char *const *env, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n && env[i] != NULL; i++) {
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return env[i] + len + 1;
	}
	return NULL;
}

/* The code that applies ST over BASE in WORKDIR, into B: nothing when
 * there is nothing to apply. */
static void
shellproto_apply(struct buf *b, const struct shellproto_state *st, const char *const *base,
    const char *workdir)
{
	size_t n, nbase = 0;
	const char *was;

	if (st->cwd != NULL && strcmp(st->cwd, workdir) != 0) {
		/* A folder that went away leaves the run in the workdir. */
		buf_append_str(b, "cd -- ");
		shellproto_put_quoted(b, st->cwd);
		buf_append_str(b, "; ");
	}
	for (; base != NULL && base[nbase] != NULL; nbase++) {
		n = shellproto_name_len(base[nbase]);
		if (st->cwd == NULL || !shellproto_name_kept(base[nbase], n) ||
		    shellproto_find((const char *const *)st->env, st->nenv, base[nbase], n) != NULL)
			continue;
		buf_printf(b, "unset -v %.*s; ", (int)n, base[nbase]);
	}
	for (size_t i = 0; i < st->nenv; i++) {
		n = shellproto_name_len(st->env[i]);
		was = shellproto_find(base, nbase, st->env[i], n);
		if (was != NULL && strcmp(was, st->env[i] + n + 1) == 0)
			continue;
		/* export in the run's shell: LD_PRELOAD and BASH_ENV reach its
		 * commands, never the shell that applies them. */
		buf_printf(b, "export %.*s=", (int)n, st->env[i]);
		shellproto_put_quoted(b, st->env[i] + n + 1);
		buf_append_str(b, "; ");
	}
}

char *
shellproto_script(const struct shellproto_state *st, const char *const *base,
    const char *workdir, const char *text, size_t *len)
{
	struct buf *apply = buf_new(SHELLWIRE_SCRIPT_MAX_BYTES * 2);
	struct buf *b = buf_new(SHELLWIRE_SCRIPT_MAX_BYTES * 2);
	char *out = NULL;

	if (apply != NULL && b != NULL) {
		shellproto_apply(apply, st, base, workdir);
		buf_append_str(b, "unset -v " SHELLWIRE_SCRIPT_VAR);
		/* The block starts with ':' (an empty { } would be a syntax
		 * error, and eval would then skip the text); its errors are not
		 * the run's. With nothing to apply there is no block at all:
		 * its redirection would cost the run's shell an open and dups. */
		if (buf_len(apply) > 0) {
			buf_append_str(b, "; { :; ");
			buf_append(b, buf_data(apply), buf_len(apply));
			buf_append_str(b, "} 2>/dev/null");
		}
		buf_append_str(b, "\n");
		buf_append_str(b, text);
		out = buf_steal(b, len);
	}
	buf_free(apply);
	buf_free(b);
	return out;
}
