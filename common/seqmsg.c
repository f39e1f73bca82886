/* The datagram codec of corrald's process links; see seqmsg.h. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/seqmsg.h"

#define SEQMSG_TYPE_BYTES sizeof(uint32_t)

void
seqmsg_init(struct seqmsg *m, uint32_t type)
{
	m->type = (uint32_t)type;
	m->len = 0;
	m->off = 0;
	m->overflow = false;
	m->n_fds = 0;
}

void
seqmsg_clear(struct seqmsg *m)
{
	size_t i;

	for (i = 0; i < m->n_fds; i++) {
		if (m->fds[i] != -1)
			close(m->fds[i]);
	}
	seqmsg_init(m, m->type);
}

static void
seqmsg_put_bytes(struct seqmsg *m, const void *p, size_t n)
{
	if (m->overflow || n > sizeof(m->body) - SEQMSG_TYPE_BYTES - m->len) {
		m->overflow = true;
		return;
	}
	memcpy(m->body + m->len, p, n);
	m->len += n;
}

void
seqmsg_put_u32(struct seqmsg *m, uint32_t v)
{
	seqmsg_put_bytes(m, &v, sizeof(v));
}

void
seqmsg_put_str(struct seqmsg *m, const char *s)
{
	size_t n = strlen(s) + 1;

	if (n > UINT32_MAX) {
		m->overflow = true;
		return;
	}
	seqmsg_put_u32(m, (uint32_t)n);
	seqmsg_put_bytes(m, s, n);
}

void
seqmsg_put_fd(struct seqmsg *m, int fd)
{
	if (m->n_fds == SEQMSG_FDS_MAX || fd < 0) {
		m->overflow = true;
		return;
	}
	m->fds[m->n_fds++] = fd;
}

int
seqmsg_get_u32(struct seqmsg *m, uint32_t *v)
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
seqmsg_get_str(struct seqmsg *m, const char **s)
{
	uint32_t n;
	const char *p;

	if (seqmsg_get_u32(m, &n) == -1)
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
seqmsg_get_end(const struct seqmsg *m, size_t n_fds)
{
	if (m->off != m->len || m->n_fds != n_fds) {
		errno = EBADMSG;
		return -1;
	}
	return 0;
}

int
seqmsg_take_fd(struct seqmsg *m, size_t i)
{
	int fd;

	if (i >= m->n_fds)
		return -1;
	fd = m->fds[i];
	m->fds[i] = -1;
	return fd;
}

int
seqmsg_send_raw(int sock, uint32_t type, const void *body, size_t len, const int *fds,
    size_t n_fds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * SEQMSG_FDS_MAX)];
	} ctl;
	struct iovec iov[2] = {
		{ .iov_base = &type, .iov_len = sizeof(type) },
		{ .iov_base = (void *)(uintptr_t)body, .iov_len = len },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	struct cmsghdr *c;

	if (len > SEQMSG_MAX_BYTES || n_fds > SEQMSG_FDS_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	if (n_fds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		c = &ctl.align;
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	while (sendmsg(sock, &mh, MSG_NOSIGNAL) == -1) {
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

int
seqmsg_send(int sock, const struct seqmsg *m)
{
	if (m->overflow) {
		errno = EMSGSIZE;
		return -1;
	}
	return seqmsg_send_raw(sock, m->type, m->body, m->len, m->fds, m->n_fds);
}

/* Takes every descriptor of MH's control data into M; false when the
 * control data is not one SCM_RIGHTS of at most SEQMSG_FDS_MAX. */
static bool
seqmsg_collect_fds(struct seqmsg *m, struct msghdr *mh)
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
		if (n > SEQMSG_FDS_MAX - m->n_fds) {
			/* Cannot happen with our buffer; never keep fewer than came. */
			ok = false;
			n = SEQMSG_FDS_MAX - m->n_fds;
		}
		memcpy(m->fds + m->n_fds, CMSG_DATA(c), n * sizeof(int));
		m->n_fds += n;
	}
	return ok && (mh->msg_flags & MSG_CTRUNC) == 0;
}

int
seqmsg_recv(int sock, struct seqmsg *m)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * SEQMSG_FDS_MAX)];
	} ctl;
	struct iovec iov[2] = {
		{ .iov_base = &m->type, .iov_len = sizeof(m->type) },
		{ .iov_base = m->body, .iov_len = sizeof(m->body) - SEQMSG_TYPE_BYTES },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2,
	    .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	ssize_t n;

	seqmsg_init(m, 0);
	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n == -1 && errno == EINTR);
	if (n == -1)
		return -1;
	/* Descriptors first, whatever the length: a datagram of no bytes
	 * reads as 0, like the peer's close, yet its SCM_RIGHTS are already
	 * in this process, and would stay open in it for good. Such a
	 * datagram is no message (every one starts with its type). */
	if (!seqmsg_collect_fds(m, &mh) || (mh.msg_flags & MSG_TRUNC) ||
	    (n == 0 && m->n_fds > 0) ||
	    (n > 0 && ((size_t)n < SEQMSG_TYPE_BYTES || m->type == 0 ||
	    m->type > SEQMSG_TYPE_MAX))) {
		seqmsg_clear(m);
		errno = EBADMSG;
		return -1;
	}
	if (n == 0)
		return 0;
	m->len = (size_t)n - SEQMSG_TYPE_BYTES;
	return 1;
}
