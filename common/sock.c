/* Listening sockets: bind, read back the port, check a handed-over one. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "common/sock.h"

int
sock_bind(const struct sockaddr *addr, socklen_t len, int type)
{
	int one = 1, saved, fd = socket(addr->sa_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd == -1)
		return -1;
	if (type == SOCK_STREAM)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, addr, len) == -1 ||
	    (type == SOCK_STREAM && listen(fd, SOCK_LISTEN_BACKLOG) == -1)) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

uint16_t
sock_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

static int
sock_option(int fd, int name);

int
sock_family(int fd)
{
	int family = sock_option(fd, SO_DOMAIN);

	return family == -1 ? 0 : family;
}

static int
sock_option(int fd, int name)
{
	int v = -1;
	socklen_t len = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, name, &v, &len) == -1 ? -1 : v;
}

int
sock_check(int fd, int family, int type)
{
	int flags;

	if (sock_option(fd, SO_DOMAIN) != family || sock_option(fd, SO_TYPE) != type) {
		errno = sock_option(fd, SO_TYPE) == -1 ? ENOTSOCK : EPROTOTYPE;
		return -1;
	}
	if (sock_port(fd) == 0 || (type == SOCK_STREAM && sock_option(fd, SO_ACCEPTCONN) != 1)) {
		errno = EINVAL;
		return -1;
	}
	if ((flags = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1)
		return -1;
	return 0;
}

int
sock_diag_open(void)
{
	return socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
}

ssize_t
sock_send_fd(int sock, struct iovec *iov, size_t n, int fd, int flags)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = n };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct cmsghdr *c;
	ssize_t rc;

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
		rc = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	} while (rc == -1 && errno == EINTR);
	return rc;
}
