/* The control socket's logs request: egress ledger records of one sandbox
 * (or all the caller may see), filtered, read from the ledger file. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "broker/api.h"
#include "broker/conf.h"
#include "broker/daemon.h"
#include "broker/sandbox.h"
#include "common/timeutil.h"
#include "common/xmalloc.h"

#define API_LOGS_TAIL_MAX_BYTES (64 * 1024 * 1024)     /* of the ledger read, from its end */
#define API_LOGS_RECORDS_MAX 100000                     /* records in one answer */
#define API_LOGS_LINE_MAX_BYTES 16384

/* What a logs request keeps, and for whom. */
struct api_logs_filter {
	const struct daemon *d;
	const struct sandbox_caller *caller;
	const char *sandbox;            /* NULL: every sandbox the caller may see */
	bool denied_only;
	char since[RFC3339_US_BYTES];   /* "" : no bound */
};

/* The value of "sandbox" in LINE, copied into OUT; false for null. Lines
 * are the ledger's own output, so the key appears once, unescaped. */
static bool
api_logs_sandbox_of(const char *line, char *out, size_t size)
{
	const char *p = strstr(line, "\"sandbox\":\"");
	const char *end;

	if (p == NULL)
		return false;
	p += strlen("\"sandbox\":\"");
	if ((end = strchr(p, '"')) == NULL || (size_t)(end - p) >= size)
		return false;
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = '\0';
	return true;
}

/* May the caller read records of sandbox NAME (NULL: host mode)? Others'
 * sandboxes, and host mode, are root's. */
static bool
api_logs_visible(const struct api_logs_filter *f, const char *name)
{
	struct sandbox *sb;

	if (f->caller->uid == 0)
		return true;
	if (name == NULL)
		return false;
	sb = sandbox_find((struct daemon *)(uintptr_t)f->d, name);
	return sb != NULL && sandbox_visible(sb, f->caller);
}

static bool
api_logs_keep(const struct api_logs_filter *f, const char *line)
{
	char name[128];
	bool has = api_logs_sandbox_of(line, name, sizeof(name));

	if (f->sandbox != NULL && (!has || strcmp(name, f->sandbox) != 0))
		return false;
	if (!api_logs_visible(f, has ? name : NULL))
		return false;
	if (f->denied_only && strstr(line, "\"decision\":\"deny\"") == NULL)
		return false;
	/* RFC 3339 UTC with a fixed width sorts as text. */
	return f->since[0] == '\0' || strncmp(line + strlen("{\"ts\":\""), f->since,
	    strlen(f->since)) >= 0;
}

/* Opens the ledger at its last API_LOGS_TAIL_MAX_BYTES, at a line start. */
static FILE *
api_logs_open(const struct daemon *d)
{
	char path[4096], skip[API_LOGS_LINE_MAX_BYTES];
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/egress.jsonl", d->cfg->log_dir);
	if ((f = fopen(path, "re")) == NULL)
		return NULL;
	/* Past the cap, the first (partial) line is dropped. */
	if (fstat(fileno(f), &st) == 0 && st.st_size > API_LOGS_TAIL_MAX_BYTES &&
	    fseeko(f, st.st_size - API_LOGS_TAIL_MAX_BYTES, SEEK_SET) == 0 &&
	    fgets(skip, sizeof(skip), f) == NULL) {
		fclose(f);
		return NULL;
	}
	return f;
}

int
api_logs(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp)
{
	const Corral__Logs *lq = req->logs;
	struct api_logs_filter f = { d, caller, lq->sandbox[0] != '\0' ? lq->sandbox : NULL,
	    lq->denied_only, "" };
	char line[API_LOGS_LINE_MAX_BYTES];
	Corral__LogsReply *r;
	size_t cap = 64;
	FILE *file;

	if (f.sandbox != NULL && !api_logs_visible(&f, f.sandbox)) {
		api_error(resp, WIRE_ERR_NOT_FOUND, "no sandbox named '%s'", f.sandbox);
		return 0;
	}
	if (lq->since_us > 0)
		time_format_rfc3339_us(lq->since_us, f.since);
	r = xmalloc(sizeof(*r));
	corral__logs_reply__init(r);
	r->records = xcalloc(cap, sizeof(*r->records));
	r->end = true;
	if ((file = api_logs_open(d)) != NULL) {
		while (r->n_records < API_LOGS_RECORDS_MAX && fgets(line, sizeof(line), file) != NULL) {
			if (!api_logs_keep(&f, line))
				continue;
			line[strcspn(line, "\n")] = '\0';
			if (r->n_records == cap)
				r->records = xreallocarray(r->records, cap *= 2, sizeof(*r->records));
			r->records[r->n_records++] = xstrdup(line);
		}
		fclose(file);
	}
	resp->response_case = CORRAL__RESPONSE__RESPONSE_LOGS;
	resp->logs = r;
	return 0;
}
