/* The file API (`corral fs` in corral(1), write_guard in corral-policy(5)):
 * FsRead, FsWrite, FsEdit, FsList and FsGrep. The broker checks who asks and
 * the write guard, then hands the operation to the sandbox's corral-init,
 * which runs it in a child under exactly a workload's layers
 * (broker/init/fsop.c); the broker never opens a path of the sandbox itself.
 * The input and the result travel in memfds: nothing is streamed, and the
 * result is read once the child has exited. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/api.h"
#include "broker/daemon.h"
#include "broker/exec.h"
#include "common/fsproto.h"
#include "broker/sandbox.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "egress-proxy/proxy.h"
#include "policy/guard.h"
#include "policy/policy.h"

#define API_FS_TIMEOUT_S 30             /* a file operation that runs longer is killed */
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U         /* Linux 6.3; Debian 12's headers stop before it */
#endif

/* One file operation in flight. */
struct api_fs_op {
	struct api_pending *pending;
	struct exec_proc *proc;
	struct event *timer;
	enum fsproto_op op;
	char *path;                     /* as the caller gave it */
	int out_fd;                     /* the result's memfd */
};

/* What one request asks, whatever its kind. */
struct api_fs_ask {
	enum fsproto_op op;
	const char *sandbox;
	const char *path;
	const char *pattern;
	const void *content;            /* write */
	size_t content_len;
	const char *old_text, *new_text;        /* edit */
};

/* Reads REQ's fields into ASK; -1 for a request that is no file operation. */
static int
api_fs_ask(const Corral__Request *req, struct api_fs_ask *ask)
{
	memset(ask, 0, sizeof(*ask));
	switch (req->request_case) {
	case CORRAL__REQUEST__REQUEST_FS_READ:
		*ask = (struct api_fs_ask){ FSPROTO_READ, req->fs_read->sandbox, req->fs_read->path };
		return 0;
	case CORRAL__REQUEST__REQUEST_FS_WRITE:
		*ask = (struct api_fs_ask){ FSPROTO_WRITE, req->fs_write->sandbox, req->fs_write->path,
			.content = req->fs_write->content.data,
			.content_len = req->fs_write->content.len };
		return 0;
	case CORRAL__REQUEST__REQUEST_FS_EDIT:
		*ask = (struct api_fs_ask){ FSPROTO_EDIT, req->fs_edit->sandbox, req->fs_edit->path,
			.old_text = req->fs_edit->old_text, .new_text = req->fs_edit->new_text };
		return 0;
	case CORRAL__REQUEST__REQUEST_FS_LIST:
		*ask = (struct api_fs_ask){ FSPROTO_LIST, req->fs_list->sandbox, req->fs_list->path };
		return 0;
	case CORRAL__REQUEST__REQUEST_FS_GREP:
		*ask = (struct api_fs_ask){ FSPROTO_GREP, req->fs_grep->sandbox, req->fs_grep->path,
			req->fs_grep->pattern };
		return 0;
	default:
		return -1;
	}
}

/* The workspace: --cwd, else the first writable root, else HOME (what
 * corral-init takes as the working folder). */
static const char *
api_fs_workspace(const struct sandbox *sb)
{
	size_t i;

	if (sb->cwd != NULL && sb->cwd[0] != '\0')
		return sb->cwd;
	for (i = 0; i < sb->nroots; i++) {
		if (sb->writable[i])
			return sb->roots[i];
	}
	return sb->home;
}

/* The write guard (corral-policy(5)), before anything reaches the
 * sandbox: a clear refusal on top of the wall (openat2 beneath the
 * workspace, and Landlock), which stands even if this check were wrong. */
static int
api_fs_guard(const struct sandbox *sb, const struct api_fs_ask *ask, Corral__Response *resp)
{
	const struct policy *pol = sb->tenant != NULL ? proxy_tenant_policy(sb->tenant) : NULL;
	const char *reason = pol != NULL && pol->has_write_guard ?
	    pol->write_guard_deny_reason : NULL;
	enum guard_verdict v = guard_check(ask->path);
	char *msg;

	if (v == GUARD_ALLOW)
		return 0;
	msg = guard_message(v, reason, api_fs_workspace(sb), ask->path);
	api_error(resp, v == GUARD_REFUSE_ABSOLUTE || v == GUARD_REFUSE_DOTDOT ?
	    WIRE_ERR_PERMISSION : WIRE_ERR_INVALID, "%s",
	    msg != NULL ? msg : GUARD_DENY_REASON_DEFAULT);
	free(msg);
	return -1;
}

/* The checks made before anything is sent; -1 with the refusal in RESP. */
static int
api_fs_check(struct daemon *d, const struct sandbox_caller *caller,
    const struct api_fs_ask *ask, struct sandbox **sb, Corral__Response *resp)
{
	*sb = sandbox_find(d, ask->sandbox);
	/* Another user's sandbox reads as unknown, as for exec. */
	if (*sb == NULL || !sandbox_visible(*sb, caller)) {
		api_error(resp, WIRE_ERR_NOT_FOUND, "no sandbox named '%s'", ask->sandbox);
		return -1;
	}
	if ((*sb)->channel == NULL) {
		api_error(resp, WIRE_ERR_UNAVAILABLE, "sandbox '%s' is not running", ask->sandbox);
		return -1;
	}
	if ((ask->op == FSPROTO_WRITE || ask->op == FSPROTO_EDIT) && api_fs_guard(*sb, ask, resp) == -1)
		return -1;
	if (ask->op == FSPROTO_GREP && (ask->pattern[0] == '\0' ||
	    strlen(ask->pattern) > FSPROTO_PATTERN_MAX_BYTES)) {
		api_error(resp, WIRE_ERR_INVALID, "the pattern must have 1 to %d bytes",
		    FSPROTO_PATTERN_MAX_BYTES);
		return -1;
	}
	if (ask->content_len > FSPROTO_WRITE_MAX_BYTES || (ask->op == FSPROTO_EDIT &&
	    strlen(ask->old_text) + strlen(ask->new_text) > FSPROTO_WRITE_MAX_BYTES)) {
		api_error(resp, WIRE_ERR_LIMIT, "%s: a write or an edit may hold at most %d "
		    "bytes", ask->path, FSPROTO_WRITE_MAX_BYTES);
		return -1;
	}
	return 0;
}

/* A memfd for an operation's input or result. It goes into the sandbox:
 * sealed against exec where the kernel can (6.3 on), though only the
 * operation's own child, which execs nothing, ever holds it there. */
static int
api_fs_memfd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_NOEXEC_SEAL);

	if (fd == -1 && errno == EINVAL)
		fd = memfd_create(name, MFD_CLOEXEC);
	return fd;
}

/* Appends N bytes of P to the memfd FD. */
static int
api_fs_put(int fd, const void *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/* The input memfd of a write (the content) or an edit (a u64 length, the
 * old text, the new text) in *FD; -1 there for the other operations. 0,
 * or -1 (errno set) when it cannot be made. */
static int
api_fs_input(const struct api_fs_ask *ask, int *fd)
{
	uint64_t old_len;
	int rc;

	*fd = -1;
	if (ask->op != FSPROTO_WRITE && ask->op != FSPROTO_EDIT)
		return 0;
	if ((*fd = api_fs_memfd("corral-fs-in")) == -1)
		return -1;
	if (ask->op == FSPROTO_WRITE) {
		rc = api_fs_put(*fd, ask->content, ask->content_len);
	} else {
		old_len = strlen(ask->old_text);
		rc = api_fs_put(*fd, &old_len, sizeof(old_len)) | api_fs_put(*fd, ask->old_text,
		    old_len) | api_fs_put(*fd, ask->new_text, strlen(ask->new_text));
	}
	if (rc == -1) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}

static void
api_fs_op_free(struct api_fs_op *op)
{
	exec_proc_free(op->proc);
	if (op->timer != NULL)
		event_free(op->timer);
	if (op->out_fd != -1)
		close(op->out_fd);
	free(op->path);
	free(op);
}

/* Sends RESP to the client and ends OP. */
static void
api_fs_finish(struct api_fs_op *op, Corral__Response *resp)
{
	api_pending_reply(op->pending, resp);
	api_response_clear(resp);
	api_fs_op_free(op);
}

static void
api_fs_fail(struct api_fs_op *op, const char *code, const char *why)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;

	api_error(&resp, code, "%s", why);
	api_fs_finish(op, &resp);
}

/* The wire code of a refusal the sandbox reported. */
static const char *
api_fs_code(enum fsproto_status s)
{
	switch (s) {
	case FSPROTO_NOT_FOUND:
		return WIRE_ERR_NOT_FOUND;
	case FSPROTO_INVALID:
		return WIRE_ERR_INVALID;
	case FSPROTO_PERMISSION:
		return WIRE_ERR_PERMISSION;
	case FSPROTO_LIMIT:
		return WIRE_ERR_LIMIT;
	default:
		return WIRE_ERR_INTERNAL;
	}
}

/* A malloc'd copy of N bytes of P, NUL-terminated (for protobuf strings). */
static char *
api_fs_text(const char *p, size_t n)
{
	char *s = xmalloc(n + 1);

	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

static void
api_fs_reply_read(struct api_fs_op *op, const struct fsproto_result *r, Corral__Response *resp)
{
	Corral__FsReadReply *rr = xmalloc(sizeof(*rr));

	corral__fs_read_reply__init(rr);
	rr->path = xstrdup(op->path);
	rr->content.data = (uint8_t *)api_fs_text(r->content, r->content_len);
	rr->content.len = r->content_len;
	rr->truncated = r->truncated;
	resp->response_case = CORRAL__RESPONSE__RESPONSE_FS_READ;
	resp->fs_read = rr;
}

static void
api_fs_reply_write(struct api_fs_op *op, const struct fsproto_result *r, Corral__Response *resp)
{
	Corral__FsWriteReply *wr = xmalloc(sizeof(*wr));

	corral__fs_write_reply__init(wr);
	wr->path = xstrdup(op->path);
	wr->bytes_written = r->bytes_written;
	wr->created = r->created;
	resp->response_case = CORRAL__RESPONSE__RESPONSE_FS_WRITE;
	resp->fs_write = wr;
}

/* N fresh messages of DESC's kind in a NULL-ended array, as a reply's
 * repeated field holds them (freed with the reply). */
static void *
api_fs_messages(const ProtobufCMessageDescriptor *desc, size_t n)
{
	void **v = xcalloc(n + 1, sizeof(*v));
	size_t i;

	for (i = 0; i < n; i++) {
		v[i] = xmalloc(desc->sizeof_message);
		protobuf_c_message_init(desc, v[i]);
	}
	return v;
}

static void
api_fs_reply_list(const struct fsproto_result *r, Corral__Response *resp)
{
	Corral__FsListReply *lr = xmalloc(sizeof(*lr));
	size_t i;

	corral__fs_list_reply__init(lr);
	lr->n_entries = r->n_entries;
	lr->entries = api_fs_messages(&corral__fs_entry__descriptor, r->n_entries);
	for (i = 0; i < r->n_entries; i++) {
		lr->entries[i]->name = api_fs_text(r->entries[i].name, r->entries[i].name_len);
		lr->entries[i]->type = xstrdup(fsproto_type_name(r->entries[i].type));
		lr->entries[i]->size = r->entries[i].size;
	}
	resp->response_case = CORRAL__RESPONSE__RESPONSE_FS_LIST;
	resp->fs_list = lr;
}

static void
api_fs_reply_grep(const struct fsproto_result *r, Corral__Response *resp)
{
	Corral__FsGrepReply *gr = xmalloc(sizeof(*gr));
	size_t i;

	corral__fs_grep_reply__init(gr);
	gr->count = r->count;
	gr->n_matches = r->n_matches;
	gr->matches = api_fs_messages(&corral__grep_match__descriptor, r->n_matches);
	for (i = 0; i < r->n_matches; i++) {
		gr->matches[i]->path = api_fs_text(r->matches[i].path, r->matches[i].path_len);
		gr->matches[i]->line = r->matches[i].line;
		gr->matches[i]->text = api_fs_text(r->matches[i].text, r->matches[i].text_len);
	}
	resp->response_case = CORRAL__RESPONSE__RESPONSE_FS_GREP;
	resp->fs_grep = gr;
}

/* The result file, whole; NULL when it is missing, too large or unreadable. */
static char *
api_fs_read_result(int fd, size_t *len)
{
	struct stat st;
	char *data;

	if (fstat(fd, &st) == -1 || st.st_size <= 0 || st.st_size > FSPROTO_OUT_MAX_BYTES)
		return NULL;
	data = xmalloc((size_t)st.st_size);
	if (pread(fd, data, (size_t)st.st_size, 0) != st.st_size) {
		free(data);
		return NULL;
	}
	*len = (size_t)st.st_size;
	return data;
}

/* Turns the result the sandbox left (its child exited with CODE) into the
 * reply. */
static void
api_fs_reply(struct api_fs_op *op, int code)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	struct fsproto_result r;
	size_t len = 0;
	char *data = api_fs_read_result(op->out_fd, &len);
	char *msg;

	if (data == NULL || fsproto_result_decode(data, len, op->op, &r) == -1) {
		log_warnx("%s: the file operation exited %d with no valid result", __func__, code);
		free(data);
		xasprintf(&msg, "the file operation ended without a result (exit status %d%s)",
		    code, code > 128 ? ": killed by a signal" : "");
		api_fs_fail(op, WIRE_ERR_INTERNAL, msg);
		free(msg);
		return;
	}
	if (r.status != FSPROTO_OK)
		api_error(&resp, api_fs_code(r.status), "%.*s", (int)r.message_len, r.message);
	else if (op->op == FSPROTO_READ)
		api_fs_reply_read(op, &r, &resp);
	else if (op->op == FSPROTO_WRITE || op->op == FSPROTO_EDIT)
		api_fs_reply_write(op, &r, &resp);
	else if (op->op == FSPROTO_LIST)
		api_fs_reply_list(&r, &resp);
	else
		api_fs_reply_grep(&r, &resp);
	fsproto_result_clear(&r);
	free(data);
	api_fs_finish(op, &resp);
}

static void
api_fs_on_started(struct exec_proc *p, const char *why, void *arg)
{
	struct api_fs_op *op = arg;
	char *msg;

	if (why == NULL)
		return;
	/* FAILED: the proc hears nothing more; it is freed with OP. */
	xasprintf(&msg, "the file operation could not start: %s", why);
	api_fs_fail(op, WIRE_ERR_UNAVAILABLE, msg);
	free(msg);
}

static void
api_fs_on_exited(struct exec_proc *p, int code, void *arg)
{
	struct api_fs_op *op = arg;

	if (code == -1) {
		api_fs_fail(op, WIRE_ERR_UNAVAILABLE,
		    "the sandbox ended during the file operation");
		return;
	}
	api_fs_reply(op, code);
}

/* Too long: the operation is killed and the client told. */
static void
api_fs_on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct api_fs_op *op = arg;
	char *msg;

	exec_kill(op->proc, SIGKILL);
	xasprintf(&msg, "the file operation did not end within %d s; it was stopped",
	    API_FS_TIMEOUT_S);
	api_fs_fail(op, WIRE_ERR_UNAVAILABLE, msg);
	free(msg);
}

/* Sends ASK to SB's corral-init; -1 with the refusal in RESP. */
static int
api_fs_start(struct daemon *d, struct sandbox *sb, const struct api_fs_ask *ask,
    struct api_fs_op *op, Corral__Response *resp)
{
	static const struct exec_callbacks cb = { api_fs_on_started, api_fs_on_exited };
	struct exec_fsop_request er = { .op = ask->op, .path = ask->path,
		.pattern = ask->pattern };
	struct timeval limit = { API_FS_TIMEOUT_S, 0 };
	char *why = NULL;

	op->out_fd = api_fs_memfd("corral-fs-out");
	if (op->out_fd == -1 || api_fs_input(ask, &er.in_fd) == -1) {
		api_error(resp, WIRE_ERR_INTERNAL, "memfd: %s", strerror(errno));
		return -1;
	}
	er.out_fd = op->out_fd;
	op->proc = exec_fsop_start(sb->channel, &er, &cb, op, &why);
	/* corral-init has its copy (or none, on failure): ours goes. */
	if (er.in_fd != -1)
		close(er.in_fd);
	if (op->proc == NULL) {
		api_error(resp, WIRE_ERR_UNAVAILABLE, "%s", why != NULL ? why : "cannot start");
		free(why);
		return -1;
	}
	op->timer = evtimer_new(d->base, api_fs_on_timeout, op);
	if (op->timer != NULL)
		evtimer_add(op->timer, &limit);
	return 0;
}

void
api_fs(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    struct api_pending *p)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	struct api_fs_op *op = xcalloc(1, sizeof(*op));
	struct api_fs_ask ask;
	struct sandbox *sb;

	op->pending = p;
	op->out_fd = -1;
	if (api_fs_ask(req, &ask) == -1) {
		api_fs_fail(op, WIRE_ERR_PROTOCOL, "not a file operation");
		return;
	}
	op->op = ask.op;
	op->path = xstrdup(ask.path);
	if (api_fs_check(d, caller, &ask, &sb, &resp) == -1 ||
	    api_fs_start(d, sb, &ask, op, &resp) == -1) {
		api_fs_finish(op, &resp);
		return;
	}
}
