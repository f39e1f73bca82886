/* The exec channel's messages: encoding, decoding and SCM_RIGHTS. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/fsproto.h"
#include "common/initproto.h"
#include "common/sock.h"

_Static_assert(CORRAL_ROOTS_MAX + 1 + INITPROTO_SOCKETS_MAX <= SEQMSG_FDS_MAX,
    "a spec's descriptors (every root, HOME, every socket) fit one message");

#define INITPROTO_TTY_FLAG 0x1u
#define INITPROTO_EXTRA_FD_FLAG 0x2u    /* EXEC: a descriptor for the command's fd 3 */
#define INITPROTO_EXEC_FLAGS (INITPROTO_TTY_FLAG | INITPROTO_EXTRA_FD_FLAG)
#define INITPROTO_FSOP_INPUT_FLAG 0x1u  /* FSOP: an input descriptor follows the result's */

/* The spec's host sockets, after HOME: the guard flag, then each name; the
 * descriptors follow HOME's. */
static void
initproto_spec_encode_sockets(struct seqmsg *m, const struct initproto_spec *s)
{
	seqmsg_put_u32(m, s->unix_guard);
	seqmsg_put_u32(m, (uint32_t)s->n_sockets);
	for (size_t i = 0; i < s->n_sockets; i++) {
		seqmsg_put_str(m, s->socket_name[i]);
		seqmsg_put_fd(m, s->socket_fd[i]);
	}
	if (s->n_sockets > INITPROTO_SOCKETS_MAX)
		m->overflow = true;
}

/* A socket's name: one file name, no "." or "..", short enough. */
static bool
initproto_socket_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= INITPROTO_SOCKET_NAME_MAX_BYTES && name[0] != '.' &&
	    strchr(name, '/') == NULL;
}

static int
initproto_spec_decode_sockets(struct seqmsg *m, struct initproto_spec *s)
{
	uint32_t guard, n;

	if (seqmsg_get_u32(m, &guard) == -1 || guard > 1 || seqmsg_get_u32(m, &n) == -1 ||
	    n > INITPROTO_SOCKETS_MAX)
		return -1;
	s->unix_guard = guard;
	s->n_sockets = n;
	for (size_t i = 0; i < n; i++)
		if (seqmsg_get_str(m, &s->socket_name[i]) == -1 ||
		    !initproto_socket_name_ok(s->socket_name[i]))
			return -1;
	return 0;
}

void
initproto_spec_encode(struct seqmsg *m, const struct initproto_spec *s)
{
	size_t i;

	seqmsg_init(m, INITPROTO_SPEC);
	seqmsg_put_u32(m, s->uid);
	seqmsg_put_u32(m, s->gid);
	seqmsg_put_str(m, s->hostname);
	seqmsg_put_str(m, s->gateway);
	seqmsg_put_str(m, s->home);
	seqmsg_put_str(m, s->workdir);
	seqmsg_put_str(m, s->runtime);
	seqmsg_put_str(m, s->ca_pem != NULL ? s->ca_pem : "");
	seqmsg_put_u32(m, s->tmp_mib);
	seqmsg_put_u32(m, (uint32_t)s->n_roots);
	for (i = 0; i < s->n_roots; i++) {
		seqmsg_put_str(m, s->root_path[i]);
		seqmsg_put_u32(m, s->root_ro[i]);
		seqmsg_put_fd(m, s->root_fd[i]);
	}
	seqmsg_put_fd(m, s->home_fd);
	initproto_spec_encode_sockets(m, s);
}

int
initproto_spec_decode(struct seqmsg *m, struct initproto_spec *s)
{
	uint32_t n, ro;
	size_t i;

	if (m->type != INITPROTO_SPEC || seqmsg_get_u32(m, &s->uid) == -1 ||
	    seqmsg_get_u32(m, &s->gid) == -1 ||
	    seqmsg_get_str(m, &s->hostname) == -1 ||
	    seqmsg_get_str(m, &s->gateway) == -1 ||
	    seqmsg_get_str(m, &s->home) == -1 ||
	    seqmsg_get_str(m, &s->workdir) == -1 ||
	    seqmsg_get_str(m, &s->runtime) == -1 ||
	    seqmsg_get_str(m, &s->ca_pem) == -1 ||
	    seqmsg_get_u32(m, &s->tmp_mib) == -1 || s->tmp_mib == 0 ||
	    seqmsg_get_u32(m, &n) == -1 || n > CORRAL_ROOTS_MAX)
		goto bad;
	s->n_roots = n;
	for (i = 0; i < n; i++) {
		if (seqmsg_get_str(m, &s->root_path[i]) == -1 ||
		    seqmsg_get_u32(m, &ro) == -1 || ro > 1)
			goto bad;
		s->root_ro[i] = ro;
	}
	if (initproto_spec_decode_sockets(m, s) == -1 ||
	    seqmsg_get_end(m, n + 1 + s->n_sockets) == -1)
		goto bad;
	for (i = 0; i < n; i++)
		s->root_fd[i] = seqmsg_take_fd(m, i);
	s->home_fd = seqmsg_take_fd(m, n);
	for (i = 0; i < s->n_sockets; i++)
		s->socket_fd[i] = seqmsg_take_fd(m, n + 1 + i);
	return 0;
bad:
	errno = EBADMSG;
	return -1;
}

void
initproto_exec_encode(struct seqmsg *m, const struct initproto_exec *e)
{
	size_t i;

	seqmsg_init(m, INITPROTO_EXEC);
	seqmsg_put_u32(m, e->id);
	seqmsg_put_u32(m, (e->tty ? INITPROTO_TTY_FLAG : 0) |
	    (e->extra_fd != -1 ? INITPROTO_EXTRA_FD_FLAG : 0));
	seqmsg_put_u32(m, e->rows);
	seqmsg_put_u32(m, e->cols);
	seqmsg_put_str(m, e->cwd);
	seqmsg_put_u32(m, (uint32_t)e->argc);
	for (i = 0; i < e->argc; i++)
		seqmsg_put_str(m, e->argv[i]);
	seqmsg_put_u32(m, (uint32_t)e->envc);
	for (i = 0; i < e->envc; i++)
		seqmsg_put_str(m, e->envp[i]);
	if (e->argc == 0 || e->argc > INITPROTO_ARGS_MAX || e->envc > INITPROTO_ENV_MAX)
		m->overflow = true;
	for (i = 0; !e->tty && i < 3; i++)
		seqmsg_put_fd(m, e->stdio[i]);
	if (e->extra_fd != -1)
		seqmsg_put_fd(m, e->extra_fd);
}

/* Reads a count (at most MAX) and that many strings into V, NULL after. */
static int
initproto_get_strv(struct seqmsg *m, const char **v, size_t max, size_t *count)
{
	uint32_t n;
	size_t i;

	if (seqmsg_get_u32(m, &n) == -1 || n > max) {
		errno = EBADMSG;
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (seqmsg_get_str(m, &v[i]) == -1)
			return -1;
	}
	v[n] = NULL;
	*count = n;
	return 0;
}

int
initproto_exec_decode(struct seqmsg *m, struct initproto_exec *e)
{
	uint32_t flags;
	size_t i, n_stdio;
	bool extra;

	if (m->type != INITPROTO_EXEC || seqmsg_get_u32(m, &e->id) == -1 ||
	    seqmsg_get_u32(m, &flags) == -1 || (flags & ~INITPROTO_EXEC_FLAGS) ||
	    seqmsg_get_u32(m, &e->rows) == -1 ||
	    seqmsg_get_u32(m, &e->cols) == -1 ||
	    seqmsg_get_str(m, &e->cwd) == -1 ||
	    initproto_get_strv(m, e->argv, INITPROTO_ARGS_MAX, &e->argc) == -1 ||
	    initproto_get_strv(m, e->envp, INITPROTO_ENV_MAX, &e->envc) == -1 ||
	    e->argc == 0)
		goto bad;
	e->tty = flags & INITPROTO_TTY_FLAG;
	extra = flags & INITPROTO_EXTRA_FD_FLAG;
	n_stdio = e->tty ? 0 : 3;
	if (seqmsg_get_end(m, n_stdio + (extra ? 1 : 0)) == -1)
		goto bad;
	for (i = 0; i < 3; i++)
		e->stdio[i] = e->tty ? -1 : seqmsg_take_fd(m, i);
	e->extra_fd = extra ? seqmsg_take_fd(m, n_stdio) : -1;
	return 0;
bad:
	errno = EBADMSG;
	return -1;
}

void
initproto_fsop_encode(struct seqmsg *m, const struct initproto_fsop *f)
{
	seqmsg_init(m, INITPROTO_FSOP);
	seqmsg_put_u32(m, f->id);
	seqmsg_put_u32(m, f->op);
	seqmsg_put_u32(m, f->in_fd != -1 ? INITPROTO_FSOP_INPUT_FLAG : 0);
	seqmsg_put_str(m, f->path);
	seqmsg_put_str(m, f->pattern);
	seqmsg_put_fd(m, f->out_fd);
	if (f->in_fd != -1)
		seqmsg_put_fd(m, f->in_fd);
}

int
initproto_fsop_decode(struct seqmsg *m, struct initproto_fsop *f)
{
	uint32_t flags;

	if (m->type != INITPROTO_FSOP || seqmsg_get_u32(m, &f->id) == -1 ||
	    seqmsg_get_u32(m, &f->op) == -1 || f->op == 0 || f->op > FSPROTO_OP_MAX ||
	    seqmsg_get_u32(m, &flags) == -1 || (flags & ~INITPROTO_FSOP_INPUT_FLAG) ||
	    seqmsg_get_str(m, &f->path) == -1 || seqmsg_get_str(m, &f->pattern) == -1 ||
	    seqmsg_get_end(m, (flags & INITPROTO_FSOP_INPUT_FLAG) ? 2 : 1) == -1) {
		errno = EBADMSG;
		return -1;
	}
	f->out_fd = seqmsg_take_fd(m, 0);
	f->in_fd = (flags & INITPROTO_FSOP_INPUT_FLAG) ? seqmsg_take_fd(m, 1) : -1;
	return 0;
}

int
initproto_send_nums(int sock, enum initproto_type type, uint32_t id, uint32_t num, int fd)
{
	/* Small messages need no 128 KiB body: build the datagram by hand. */
	uint32_t words[3] = { (uint32_t)type, id, num };
	struct iovec iov = { .iov_base = words, .iov_len = sizeof(words) };

	return sock_send_fd(sock, &iov, 1, fd, 0) == -1 ? -1 : 0;
}

int
initproto_send_text(int sock, enum initproto_type type, uint32_t id, const char *text)
{
	char cut[INITPROTO_ERR_MAX_BYTES];
	uint32_t head[3], n;
	struct iovec iov[2];
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t rc;

	snprintf(cut, sizeof(cut), "%s", text);
	n = (uint32_t)strlen(cut) + 1;
	head[0] = (uint32_t)type;
	head[1] = id;
	head[2] = n;
	iov[0].iov_base = head;
	iov[0].iov_len = sizeof(head);
	iov[1].iov_base = cut;
	iov[1].iov_len = n;
	do {
		rc = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (rc == -1 && errno == EINTR);
	return rc == -1 ? -1 : 0;
}

/* The length of S cut to at most MAX - 1 bytes, at a UTF-8 character
 * boundary when S is UTF-8. */
static uint32_t
initproto_cut(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n < max)
		return (uint32_t)n;
	n = max - 1;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return (uint32_t)n;
}

int
initproto_unix_send(int sock, const struct initproto_unix *u)
{
	static const uint32_t nul_len = 1;
	const char *texts[3] = { u->path, u->listed, u->binary };
	uint32_t head[3] = { INITPROTO_UNIX, u->decision, u->unreported }, lens[3];
	struct iovec iov[1 + 3 * 3];
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 0 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	ssize_t rc;

	iov[mh.msg_iovlen++] = (struct iovec){ head, sizeof(head) };
	/* Each text: its length with the NUL, its bytes, the NUL. */
	for (size_t i = 0; i < 3; i++) {
		uint32_t n = initproto_cut(texts[i] != NULL ? texts[i] : "",
		    INITPROTO_UNIX_TEXT_MAX_BYTES);

		lens[i] = n + nul_len;
		iov[mh.msg_iovlen++] = (struct iovec){ &lens[i], sizeof(lens[i]) };
		iov[mh.msg_iovlen++] = (struct iovec){ (void *)(uintptr_t)(texts[i] != NULL ?
		    texts[i] : ""), n };
		iov[mh.msg_iovlen++] = (struct iovec){ (void *)(uintptr_t)"", nul_len };
	}
	if (u->pidfd != -1) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		ctl.align.cmsg_level = SOL_SOCKET;
		ctl.align.cmsg_type = SCM_RIGHTS;
		ctl.align.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&ctl.align), &u->pidfd, sizeof(int));
	}
	do {
		rc = sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (rc == -1 && errno == EINTR);
	return rc == -1 ? -1 : 0;
}

int
initproto_unix_decode(struct seqmsg *m, struct initproto_unix *u)
{
	if (m->type != INITPROTO_UNIX || seqmsg_get_u32(m, &u->decision) == -1 ||
	    (u->decision != INITPROTO_UNIX_ALLOW && u->decision != INITPROTO_UNIX_DENY) ||
	    seqmsg_get_u32(m, &u->unreported) == -1 || seqmsg_get_str(m, &u->path) == -1 ||
	    seqmsg_get_str(m, &u->listed) == -1 || seqmsg_get_str(m, &u->binary) == -1 ||
	    strlen(u->path) >= INITPROTO_UNIX_TEXT_MAX_BYTES ||
	    strlen(u->listed) >= INITPROTO_UNIX_TEXT_MAX_BYTES ||
	    strlen(u->binary) >= INITPROTO_UNIX_TEXT_MAX_BYTES ||
	    (m->n_fds != 0 && m->n_fds != 1) || seqmsg_get_end(m, m->n_fds) == -1) {
		errno = EBADMSG;
		return -1;
	}
	u->pidfd = m->n_fds == 1 ? seqmsg_take_fd(m, 0) : -1;
	return 0;
}
