/* The benchmarks' upstream server (tests/bench/run-proxy-bench): one thread,
 * epoll, two listeners on ADDR.
 *   BYTE_PORT:   sends one byte on accept, then waits for the peer to close.
 *   SOURCE_PORT: sends bytes (from a memfd, with sendfile) until the peer
 *                closes or resets.
 * It exits by itself after UPSTREAM_LIFETIME_S, so a crashed script cannot
 * leave it running for long.
 *   upstream ADDR BYTE_PORT SOURCE_PORT */
#define _GNU_SOURCE
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#define UPSTREAM_LIFETIME_S 3600        /* hard stop, whatever happens */
#define UPSTREAM_BACKLOG 4096
#define UPSTREAM_EVENTS_MAX 256         /* events taken per epoll_wait */
#define UPSTREAM_SOURCE_BYTES (1 << 20) /* size of the memfd sent round */
#define UPSTREAM_SEND_CHUNK_BYTES (256 << 10)
#define UPSTREAM_DRAIN_BYTES 4096

enum upstream_kind { UP_BYTE_LISTEN, UP_SOURCE_LISTEN, UP_BYTE_CONN, UP_SOURCE_CONN };

static int upstream_epfd = -1;
static int upstream_memfd = -1;

static uint64_t
upstream_key(enum upstream_kind kind, int fd)
{
	return ((uint64_t)kind << 32) | (uint32_t)fd;
}

/* A listening, non-blocking TCP socket on ADDR:PORT; exits on failure. */
static int
upstream_listen(const char *addr, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	sin.sin_port = htons((uint16_t)atoi(port));
	if (fd < 0 || inet_pton(AF_INET, addr, &sin.sin_addr) != 1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(fd, UPSTREAM_BACKLOG) != 0) {
		fprintf(stderr, "upstream: listen %s:%s: %s\n", addr, port, strerror(errno));
		exit(1);
	}
	return fd;
}

static void
upstream_watch(int fd, enum upstream_kind kind, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = upstream_key(kind, fd) };

	if (epoll_ctl(upstream_epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		perror("upstream: epoll_ctl");
		exit(1);
	}
}

/* Takes every pending connection of listener FD; a byte connection gets its
 * byte at once. */
static void
upstream_accept(int fd, enum upstream_kind listener)
{
	int c;

	while ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (listener == UP_BYTE_LISTEN) {
			if (send(c, "x", 1, MSG_NOSIGNAL) != 1) {
				close(c);
				continue;
			}
			upstream_watch(c, UP_BYTE_CONN, EPOLLIN);
		} else {
			upstream_watch(c, UP_SOURCE_CONN, EPOLLIN | EPOLLOUT);
		}
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED)
		fprintf(stderr, "upstream: accept: %s\n", strerror(errno));
}

/* Reads what the peer sent; 0 when it closed or failed. */
static int
upstream_drain(int fd)
{
	char buf[UPSTREAM_DRAIN_BYTES];
	ssize_t n = recv(fd, buf, sizeof(buf), 0);

	return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
}

/* Sends the next chunk of the memfd; 0 when the peer is gone. */
static int
upstream_source(int fd)
{
	static off_t off;
	ssize_t n;

	if (off >= UPSTREAM_SOURCE_BYTES)
		off = 0;
	n = sendfile(fd, upstream_memfd, &off, UPSTREAM_SEND_CHUNK_BYTES);
	return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
}

static void
upstream_event(const struct epoll_event *ev)
{
	int fd = (int)(uint32_t)ev->data.u64;
	enum upstream_kind kind = (enum upstream_kind)(ev->data.u64 >> 32);
	int alive = 1;

	if (kind == UP_BYTE_LISTEN || kind == UP_SOURCE_LISTEN) {
		upstream_accept(fd, kind);
		return;
	}
	if (ev->events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		alive = upstream_drain(fd);
	if (alive && kind == UP_SOURCE_CONN && (ev->events & EPOLLOUT))
		alive = upstream_source(fd);
	if (!alive)
		close(fd);              /* close also takes it out of the epoll set */
}

static void
upstream_make_source(void)
{
	upstream_memfd = memfd_create("upstream-source", MFD_CLOEXEC);
	if (upstream_memfd < 0 || ftruncate(upstream_memfd, UPSTREAM_SOURCE_BYTES) != 0) {
		perror("upstream: memfd");
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	struct epoll_event evs[UPSTREAM_EVENTS_MAX];

	if (argc != 4) {
		fprintf(stderr, "usage: upstream ADDR BYTE_PORT SOURCE_PORT\n");
		return 2;
	}
	alarm(UPSTREAM_LIFETIME_S);
	upstream_make_source();
	upstream_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (upstream_epfd < 0) {
		perror("upstream: epoll_create1");
		return 1;
	}
	upstream_watch(upstream_listen(argv[1], argv[2]), UP_BYTE_LISTEN, EPOLLIN);
	upstream_watch(upstream_listen(argv[1], argv[3]), UP_SOURCE_LISTEN, EPOLLIN);
	for (;;) {
		int n = epoll_wait(upstream_epfd, evs, UPSTREAM_EVENTS_MAX, -1);

		for (int i = 0; i < n; i++)
			upstream_event(&evs[i]);
	}
}
