/* The exec channel's messages: encoding, decoding and SCM_RIGHTS. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/init/fsop.h"
#include "common/initproto.h"

#define INITPROTO_TYPE_BYTES sizeof(uint32_t)
#define INITPROTO_TTY_FLAG 0x1u
#define INITPROTO_EXTRA_FD_FLAG 0x2u    /* EXEC: a descriptor for the command's fd 3 */
#define INITPROTO_EXEC_FLAGS (INITPROTO_TTY_FLAG | INITPROTO_EXTRA_FD_FLAG)
#define INITPROTO_FSOP_INPUT_FLAG 0x1u  /* FSOP: an input descriptor follows the result's */

void
initproto_msg_init(struct initproto_msg *m, enum initproto_type type)
{
	m->type = (uint32_t)type;
	m->len = 0;
	m->off = 0;
	m->overflow = false;
	m->n_fds = 0;
}

void
initproto_msg_clear(struct initproto_msg *m)
{
	size_t i;

	for (i = 0; i < m->n_fds; i++) {
		if (m->fds[i] != -1)
			close(m->fds[i]);
	}
	initproto_msg_init(m, (enum initproto_type)m->type);
}

static void
initproto_put_bytes(struct initproto_msg *m, const void *p, size_t n)
{
	if (m->overflow || n > sizeof(m->body) - INITPROTO_TYPE_BYTES - m->len) {
		m->overflow = true;
		return;
	}
	memcpy(m->body + m->len, p, n);
	m->len += n;
}

void
initproto_put_u32(struct initproto_msg *m, uint32_t v)
{
	initproto_put_bytes(m, &v, sizeof(v));
}

void
initproto_put_str(struct initproto_msg *m, const char *s)
{
	size_t n = strlen(s) + 1;

	if (n > UINT32_MAX) {
		m->overflow = true;
		return;
	}
	initproto_put_u32(m, (uint32_t)n);
	initproto_put_bytes(m, s, n);
}

void
initproto_put_fd(struct initproto_msg *m, int fd)
{
	if (m->n_fds == INITPROTO_FDS_MAX || fd < 0) {
		m->overflow = true;
		return;
	}
	m->fds[m->n_fds++] = fd;
}

int
initproto_get_u32(struct initproto_msg *m, uint32_t *v)
{
	if (m->len - m->off < sizeof(*v)) {
		errno = EBADMSG;
		return -1;
	}
	memcpy(v, m->body + m->off, sizeof(*v));
	m->off += sizeof(*v);
	return 0;
}

int
initproto_get_str(struct initproto_msg *m, const char **s)
{
	uint32_t n;
	const char *p;

	if (initproto_get_u32(m, &n) == -1)
		return -1;
	p = (const char *)m->body + m->off;
	/* One NUL, at the end: text with a NUL inside would read differently
	 * here and wherever it is shown. */
	if (n == 0 || n > m->len - m->off || memchr(p, '\0', n) != p + n - 1) {
		errno = EBADMSG;
		return -1;
	}
	*s = p;
	m->off += n;
	return 0;
}

int
initproto_get_end(const struct initproto_msg *m, size_t n_fds)
{
	if (m->off != m->len || m->n_fds != n_fds) {
		errno = EBADMSG;
		return -1;
	}
	return 0;
}

int
initproto_take_fd(struct initproto_msg *m, size_t i)
{
	int fd;

	if (i >= m->n_fds)
		return -1;
	fd = m->fds[i];
	m->fds[i] = -1;
	return fd;
}

int
initproto_send(int sock, const struct initproto_msg *m)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * INITPROTO_FDS_MAX)];
	} ctl;
	struct iovec iov[2] = {
		{ .iov_base = (void *)(uintptr_t)&m->type, .iov_len = sizeof(m->type) },
		{ .iov_base = (void *)(uintptr_t)m->body, .iov_len = m->len },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	struct cmsghdr *c;

	if (m->overflow) {
		errno = EMSGSIZE;
		return -1;
	}
	if (m->n_fds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * m->n_fds);
		c = &ctl.align;
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * m->n_fds);
		memcpy(CMSG_DATA(c), m->fds, sizeof(int) * m->n_fds);
	}
	while (sendmsg(sock, &mh, MSG_NOSIGNAL) == -1) {
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

/* Takes every descriptor of MH's control data into M; false when the
 * control data is not one SCM_RIGHTS of at most INITPROTO_FDS_MAX. */
static bool
initproto_collect_fds(struct initproto_msg *m, struct msghdr *mh)
{
	struct cmsghdr *c;
	bool ok = true;
	size_t n;

	for (c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			ok = false;
			continue;
		}
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n > INITPROTO_FDS_MAX - m->n_fds) {
			/* Cannot happen with our buffer; never keep fewer than came. */
			ok = false;
			n = INITPROTO_FDS_MAX - m->n_fds;
		}
		memcpy(m->fds + m->n_fds, CMSG_DATA(c), n * sizeof(int));
		m->n_fds += n;
	}
	return ok && (mh->msg_flags & MSG_CTRUNC) == 0;
}

int
initproto_recv(int sock, struct initproto_msg *m)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * INITPROTO_FDS_MAX)];
	} ctl;
	struct iovec iov[2] = {
		{ .iov_base = &m->type, .iov_len = sizeof(m->type) },
		{ .iov_base = m->body, .iov_len = sizeof(m->body) - INITPROTO_TYPE_BYTES },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2,
	    .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	ssize_t n;

	initproto_msg_init(m, 0);
	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n == -1 && errno == EINTR);
	if (n <= 0)
		return (int)n;
	if (!initproto_collect_fds(m, &mh) || (mh.msg_flags & MSG_TRUNC) ||
	    (size_t)n < INITPROTO_TYPE_BYTES || m->type == 0 ||
	    m->type > INITPROTO_TYPE_MAX) {
		initproto_msg_clear(m);
		errno = EBADMSG;
		return -1;
	}
	m->len = (size_t)n - INITPROTO_TYPE_BYTES;
	return 1;
}

void
initproto_spec_encode(struct initproto_msg *m, const struct initproto_spec *s)
{
	size_t i;

	initproto_msg_init(m, INITPROTO_SPEC);
	initproto_put_u32(m, s->uid);
	initproto_put_u32(m, s->gid);
	initproto_put_str(m, s->hostname);
	initproto_put_str(m, s->gateway);
	initproto_put_str(m, s->home);
	initproto_put_str(m, s->workdir);
	initproto_put_str(m, s->runtime);
	initproto_put_u32(m, (uint32_t)s->n_roots);
	for (i = 0; i < s->n_roots; i++) {
		initproto_put_str(m, s->root_path[i]);
		initproto_put_u32(m, s->root_ro[i]);
		initproto_put_fd(m, s->root_fd[i]);
	}
	initproto_put_fd(m, s->home_fd);
}

int
initproto_spec_decode(struct initproto_msg *m, struct initproto_spec *s)
{
	uint32_t n, ro;
	size_t i;

	if (m->type != INITPROTO_SPEC || initproto_get_u32(m, &s->uid) == -1 ||
	    initproto_get_u32(m, &s->gid) == -1 ||
	    initproto_get_str(m, &s->hostname) == -1 ||
	    initproto_get_str(m, &s->gateway) == -1 ||
	    initproto_get_str(m, &s->home) == -1 ||
	    initproto_get_str(m, &s->workdir) == -1 ||
	    initproto_get_str(m, &s->runtime) == -1 ||
	    initproto_get_u32(m, &n) == -1 || n > INITPROTO_ROOTS_MAX)
		goto bad;
	s->n_roots = n;
	for (i = 0; i < n; i++) {
		if (initproto_get_str(m, &s->root_path[i]) == -1 ||
		    initproto_get_u32(m, &ro) == -1 || ro > 1)
			goto bad;
		s->root_ro[i] = ro;
	}
	if (initproto_get_end(m, n + 1) == -1)
		goto bad;
	for (i = 0; i < n; i++)
		s->root_fd[i] = initproto_take_fd(m, i);
	s->home_fd = initproto_take_fd(m, n);
	return 0;
bad:
	errno = EBADMSG;
	return -1;
}

void
initproto_exec_encode(struct initproto_msg *m, const struct initproto_exec *e)
{
	size_t i;

	initproto_msg_init(m, INITPROTO_EXEC);
	initproto_put_u32(m, e->id);
	initproto_put_u32(m, (e->tty ? INITPROTO_TTY_FLAG : 0) |
	    (e->extra_fd != -1 ? INITPROTO_EXTRA_FD_FLAG : 0));
	initproto_put_u32(m, e->rows);
	initproto_put_u32(m, e->cols);
	initproto_put_str(m, e->cwd);
	initproto_put_u32(m, (uint32_t)e->argc);
	for (i = 0; i < e->argc; i++)
		initproto_put_str(m, e->argv[i]);
	initproto_put_u32(m, (uint32_t)e->envc);
	for (i = 0; i < e->envc; i++)
		initproto_put_str(m, e->envp[i]);
	if (e->argc == 0 || e->argc > INITPROTO_ARGS_MAX || e->envc > INITPROTO_ENV_MAX)
		m->overflow = true;
	for (i = 0; !e->tty && i < 3; i++)
		initproto_put_fd(m, e->stdio[i]);
	if (e->extra_fd != -1)
		initproto_put_fd(m, e->extra_fd);
}

/* Reads a count (at most MAX) and that many strings into V, NULL after. */
static int
initproto_get_strv(struct initproto_msg *m, const char **v, size_t max, size_t *count)
{
	uint32_t n;
	size_t i;

	if (initproto_get_u32(m, &n) == -1 || n > max) {
		errno = EBADMSG;
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (initproto_get_str(m, &v[i]) == -1)
			return -1;
	}
	v[n] = NULL;
	*count = n;
	return 0;
}

int
initproto_exec_decode(struct initproto_msg *m, struct initproto_exec *e)
{
	uint32_t flags;
	size_t i, n_stdio;
	bool extra;

	if (m->type != INITPROTO_EXEC || initproto_get_u32(m, &e->id) == -1 ||
	    initproto_get_u32(m, &flags) == -1 || (flags & ~INITPROTO_EXEC_FLAGS) ||
	    initproto_get_u32(m, &e->rows) == -1 ||
	    initproto_get_u32(m, &e->cols) == -1 ||
	    initproto_get_str(m, &e->cwd) == -1 ||
	    initproto_get_strv(m, e->argv, INITPROTO_ARGS_MAX, &e->argc) == -1 ||
	    initproto_get_strv(m, e->envp, INITPROTO_ENV_MAX, &e->envc) == -1 ||
	    e->argc == 0)
		goto bad;
	e->tty = flags & INITPROTO_TTY_FLAG;
	extra = flags & INITPROTO_EXTRA_FD_FLAG;
	n_stdio = e->tty ? 0 : 3;
	if (initproto_get_end(m, n_stdio + (extra ? 1 : 0)) == -1)
		goto bad;
	for (i = 0; i < 3; i++)
		e->stdio[i] = e->tty ? -1 : initproto_take_fd(m, i);
	e->extra_fd = extra ? initproto_take_fd(m, n_stdio) : -1;
	return 0;
bad:
	errno = EBADMSG;
	return -1;
}

void
initproto_fsop_encode(struct initproto_msg *m, const struct initproto_fsop *f)
{
	initproto_msg_init(m, INITPROTO_FSOP);
	initproto_put_u32(m, f->id);
	initproto_put_u32(m, f->op);
	initproto_put_u32(m, f->in_fd != -1 ? INITPROTO_FSOP_INPUT_FLAG : 0);
	initproto_put_str(m, f->path);
	initproto_put_str(m, f->pattern);
	initproto_put_fd(m, f->out_fd);
	if (f->in_fd != -1)
		initproto_put_fd(m, f->in_fd);
}

int
initproto_fsop_decode(struct initproto_msg *m, struct initproto_fsop *f)
{
	uint32_t flags;

	if (m->type != INITPROTO_FSOP || initproto_get_u32(m, &f->id) == -1 ||
	    initproto_get_u32(m, &f->op) == -1 || f->op == 0 || f->op > FSOP_OP_MAX ||
	    initproto_get_u32(m, &flags) == -1 || (flags & ~INITPROTO_FSOP_INPUT_FLAG) ||
	    initproto_get_str(m, &f->path) == -1 || initproto_get_str(m, &f->pattern) == -1 ||
	    initproto_get_end(m, (flags & INITPROTO_FSOP_INPUT_FLAG) ? 2 : 1) == -1) {
		errno = EBADMSG;
		return -1;
	}
	f->out_fd = initproto_take_fd(m, 0);
	f->in_fd = (flags & INITPROTO_FSOP_INPUT_FLAG) ? initproto_take_fd(m, 1) : -1;
	return 0;
}

int
initproto_send_nums(int sock, enum initproto_type type, uint32_t id, uint32_t num, int fd)
{
	/* Small messages need no 128 KiB body: build the datagram by hand. */
	uint32_t words[3] = { (uint32_t)type, id, num };
	struct iovec iov = { .iov_base = words, .iov_len = sizeof(words) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct cmsghdr *c;
	int rc;

	if (fd != -1) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = &ctl.align;
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do {
		rc = (int)sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (rc == -1 && errno == EINTR);
	return rc == -1 ? -1 : 0;
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
