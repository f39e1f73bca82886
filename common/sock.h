/* Listening sockets, made where the privilege to bind is (the monitor, or
 * the broker for unprivileged ports) and served wherever they are handed. */
#ifndef CORRAL_SOCK_H
#define CORRAL_SOCK_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define SOCK_LISTEN_BACKLOG 1024        /* pending accepts per TCP listener */

/* A non-blocking, close-on-exec socket of TYPE (SOCK_STREAM: listening,
 * SO_REUSEADDR; SOCK_DGRAM: bound) at ADDR. -1 with errno. */
int sock_bind(const struct sockaddr *addr, socklen_t len, int type);
struct iovec;
/* Sends IOV (N parts) as one message on SOCK, with FD as SCM_RIGHTS when
 * it is not -1 (not taken), FLAGS or'd with MSG_NOSIGNAL; EINTR is tried
 * again. What sendmsg(2) returns. */
ssize_t sock_send_fd(int sock, struct iovec *iov, size_t n, int fd, int flags);
/* The local port FD is bound to; 0 when it cannot be read. */
uint16_t sock_port(int fd);
/* The address family FD is bound in (AF_INET, AF_INET6); 0 when unknown. */
int sock_family(int fd);
/* A NETLINK_SOCK_DIAG socket in the calling thread's network namespace
 * (inet_diag finds a connection's cookie by its 4-tuple); -1 with errno. */
int sock_diag_open(void);
/* Checks that FD is a socket of TYPE and FAMILY, bound, and (for TCP)
 * listening, and makes it non-blocking. 0, or -1 with errno (ENOTSOCK,
 * EPROTOTYPE, EINVAL): a handed-over descriptor is checked before use. */
int sock_check(int fd, int family, int type);

#endif
