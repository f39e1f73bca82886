/* The benchmarks' ceiling (tests/bench/run-proxy-bench): a bare CONNECT
 * relay that does nothing a real proxy must do. It reads
 * "CONNECT a.b.c.d:port ...", dials that address without a check, answers
 * 200 and copies bytes both ways (one thread, epoll, a shared scratch
 * buffer; bytes a peer cannot take yet wait on the heap while their source
 * is not read: back-pressure). Half-closes are passed on. It exits by itself
 * after BR_LIFETIME_S.
 *   bare_relay LISTEN_ADDR PORT */
#define _GNU_SOURCE
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BR_LIFETIME_S 3600              /* hard stop, whatever happens */
#define BR_BACKLOG 4096
#define BR_EVENTS_MAX 256
#define BR_HEADER_MAX_BYTES 1024
#define BR_SCRATCH_BYTES (64 << 10)

static const char br_ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

enum br_state {
	BR_HEADER,                      /* reading the client's CONNECT header */
	BR_DIALING,                     /* upstream connect() in progress */
	BR_RELAY,                       /* copying both ways */
};

struct br_conn;

/* One direction: bytes read from FROM wait in PENDING until TO takes them. */
struct br_dir {
	int from, to;
	char *pending;
	size_t len, off;
	bool eof;                       /* FROM said end of file */
	bool shut;                      /* TO was shut down for writing */
};

/* What an epoll event points at: one socket of a connection. */
struct br_end {
	struct br_conn *conn;
	int fd;
	uint32_t events;                /* what epoll watches now */
};

struct br_conn {
	enum br_state state;
	struct br_end client, upstream;
	struct br_dir up, down;         /* client->upstream, upstream->client */
	char *header;
	size_t header_len;
	bool closing;
	struct br_conn *next_dead;
};

static int br_epfd = -1;
static char br_scratch[BR_SCRATCH_BYTES];
static struct br_conn *br_dead;

static void
br_set_events(struct br_end *e, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = e };

	if (e->fd < 0 || e->events == events)
		return;
	epoll_ctl(br_epfd, EPOLL_CTL_MOD, e->fd, &ev);
	e->events = events;
}

static void
br_add(struct br_end *e, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = e };

	epoll_ctl(br_epfd, EPOLL_CTL_ADD, e->fd, &ev);
	e->events = events;
}

/* Closes both sockets now; the memory goes after this batch of events. */
static void
br_close(struct br_conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	close(c->client.fd);
	if (c->upstream.fd >= 0)
		close(c->upstream.fd);
	c->next_dead = br_dead;
	br_dead = c;
}

static void
br_free_dead(void)
{
	while (br_dead) {
		struct br_conn *c = br_dead;

		br_dead = c->next_dead;
		free(c->up.pending);
		free(c->down.pending);
		free(c->header);
		free(c);
	}
}

/* Writes what D holds; -1 on a write error. */
static int
br_flush(struct br_dir *d)
{
	while (d->off < d->len) {
		ssize_t n = send(d->to, d->pending + d->off, d->len - d->off, MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		d->off += (size_t)n;
	}
	free(d->pending);
	d->pending = NULL;
	d->len = d->off = 0;
	if (d->eof && !d->shut) {
		shutdown(d->to, SHUT_WR);
		d->shut = true;
	}
	return 0;
}

/* Reads once from D's source and passes it on; what the sink does not take
 * now waits in D. -1 on an error. */
static int
br_pump(struct br_dir *d)
{
	ssize_t n = recv(d->from, br_scratch, sizeof(br_scratch), 0);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (n == 0) {
		d->eof = true;
		return br_flush(d);
	}
	d->pending = malloc((size_t)n);
	if (!d->pending)
		return -1;
	memcpy(d->pending, br_scratch, (size_t)n);
	d->len = (size_t)n;
	return br_flush(d);
}

/* Read a source only while its direction is open and holds nothing; watch a
 * sink for writing only while bytes wait for it. */
static void
br_update(struct br_conn *c)
{
	uint32_t ce = 0, ue = 0;

	if (c->up.eof && c->down.eof && !c->up.pending && !c->down.pending) {
		br_close(c);
		return;
	}
	if (!c->up.eof && !c->up.pending)
		ce |= EPOLLIN;
	if (!c->down.eof && !c->down.pending)
		ue |= EPOLLIN;
	if (c->down.pending)
		ce |= EPOLLOUT;
	if (c->up.pending)
		ue |= EPOLLOUT;
	br_set_events(&c->client, ce);
	br_set_events(&c->upstream, ue);
}

static void
br_relay_event(struct br_conn *c, struct br_end *e, uint32_t events)
{
	bool is_client = e == &c->client;
	struct br_dir *in = is_client ? &c->up : &c->down;
	struct br_dir *out = is_client ? &c->down : &c->up;
	/* An error, or a hang-up once its end of file was read: nothing more
	 * can move through this socket. */
	int rc = (events & EPOLLERR) || ((events & EPOLLHUP) && in->eof) ? -1 : 0;

	if (rc == 0 && (events & EPOLLOUT) && out->pending)
		rc = br_flush(out);
	if (rc == 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !in->pending && !in->eof)
		rc = br_pump(in);
	if (rc < 0)
		br_close(c);
	else
		br_update(c);
}

/* The upstream connect() finished: answer the client, start relaying. */
static void
br_dialed(struct br_conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->upstream.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0 ||
	    send(c->client.fd, br_ok, sizeof(br_ok) - 1, MSG_NOSIGNAL) != sizeof(br_ok) - 1) {
		br_close(c);
		return;
	}
	c->state = BR_RELAY;
	if (c->up.pending && br_flush(&c->up) < 0)
		br_close(c);
	else
		br_update(c);
}

/* Starts a non-blocking connect to the address of a complete header. */
static int
br_dial(struct br_conn *c, char *end)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char host[INET_ADDRSTRLEN];
	unsigned port;
	size_t extra = c->header_len - (size_t)(end + 4 - c->header);

	if (sscanf(c->header, "CONNECT %15[0-9.]:%u HTTP/1.", host, &port) != 2 ||
	    port == 0 || port > 65535 || inet_pton(AF_INET, host, &sin.sin_addr) != 1)
		return -1;
	sin.sin_port = htons((uint16_t)port);
	if (extra > 0) {
		c->up.pending = malloc(extra);
		if (!c->up.pending)
			return -1;
		memcpy(c->up.pending, end + 4, extra);
		c->up.len = extra;
	}
	c->upstream.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->upstream.fd < 0 || (connect(c->upstream.fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 &&
	    errno != EINPROGRESS))
		return -1;
	c->up.to = c->down.from = c->upstream.fd;
	br_add(&c->upstream, EPOLLOUT);
	br_set_events(&c->client, 0);
	c->state = BR_DIALING;
	return 0;
}

static void
br_header_event(struct br_conn *c)
{
	ssize_t n = recv(c->client.fd, c->header + c->header_len,
	    BR_HEADER_MAX_BYTES - 1 - c->header_len, 0);
	char *end;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		br_close(c);
		return;
	}
	c->header_len += (size_t)n;
	c->header[c->header_len] = '\0';
	end = strstr(c->header, "\r\n\r\n");
	if (!end && c->header_len < BR_HEADER_MAX_BYTES - 1)
		return;
	if (!end || br_dial(c, end) != 0) {
		br_close(c);
		return;
	}
	free(c->header);
	c->header = NULL;
}

static void
br_event(struct br_end *e, uint32_t events)
{
	struct br_conn *c = e->conn;

	if (c->closing)
		return;
	if (c->state == BR_HEADER)
		br_header_event(c);
	else if (c->state == BR_DIALING && e == &c->upstream)
		br_dialed(c);
	else if (c->state == BR_DIALING)
		br_close(c);            /* the client left (HUP/ERR) while dialing */
	else
		br_relay_event(c, e, events);
}

static void
br_accept(int lfd)
{
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct br_conn *c = calloc(1, sizeof(*c));

		if (!c || !(c->header = malloc(BR_HEADER_MAX_BYTES))) {
			free(c);
			close(fd);
			continue;
		}
		c->client = (struct br_end){ .conn = c, .fd = fd };
		c->upstream = (struct br_end){ .conn = c, .fd = -1 };
		c->up.from = c->down.to = fd;
		br_add(&c->client, EPOLLIN);
	}
}

static int
br_listen(const char *addr, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

	sin.sin_port = htons((uint16_t)atoi(port));
	if (fd < 0 || inet_pton(AF_INET, addr, &sin.sin_addr) != 1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(fd, BR_BACKLOG) != 0 || epoll_ctl(br_epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		fprintf(stderr, "bare_relay: listen %s:%s: %s\n", addr, port, strerror(errno));
		exit(1);
	}
	return fd;
}

int
main(int argc, char **argv)
{
	struct epoll_event evs[BR_EVENTS_MAX];
	int lfd;

	if (argc != 3) {
		fprintf(stderr, "usage: bare_relay LISTEN_ADDR PORT\n");
		return 2;
	}
	alarm(BR_LIFETIME_S);
	br_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (br_epfd < 0) {
		perror("bare_relay: epoll_create1");
		return 1;
	}
	lfd = br_listen(argv[1], argv[2]);
	for (;;) {
		int n = epoll_wait(br_epfd, evs, BR_EVENTS_MAX, -1);

		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr)
				br_event(evs[i].data.ptr, evs[i].events);
			else
				br_accept(lfd);
		}
		br_free_dead();
	}
}
