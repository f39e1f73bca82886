/* The proxy benchmarks' load tool (tests/bench/run-proxy-bench): opens
 * CONNECT tunnels through an HTTP proxy to a target that sends one byte on
 * accept (tests/bench/upstream.c), or reads bulk data through one tunnel.
 * With -s NAME, the rate, latency and idle modes open transparent tunnels
 * instead: no CONNECT, the first bytes sent are a TLS ClientHello naming
 * NAME (server_name), for a proxy that picks the upstream from the SNI
 * (corrald's transparent listener, haproxy's req.ssl_sni, sniproxy).
 * One thread, epoll, non-blocking sockets; every run is bounded in count and
 * in time. Prints one line of key=value pairs.
 *
 *   loadgen rate    -x PROXY -t HOST:PORT [-c CONC] [-d SECONDS] [-n MAX]
 *       CONC clients loop connect, CONNECT, 200, one byte, close for SECONDS
 *       (at most MAX tunnels); tunnels per second, and latency under load;
 *       with -p PID, the proxy's CPU time per tunnel too.
 *   loadgen latency -x PROXY -t HOST:PORT [-n COUNT] [-d SECONDS]
 *       one tunnel at a time; p50 and p99 from connect() to the first byte.
 *   loadgen idle    -x PROXY -t HOST:PORT -p PID [-n COUNT] [-c CONC] [-w SETTLE_S]
 *                   [-W LATER_S]
 *       opens COUNT tunnels (CONC at a time) and keeps them open; the
 *       proxy's memory (/proc/PID/smaps_rollup) before, SETTLE_S after the
 *       last one opened, and again LATER_S after it (a proxy may hold more
 *       while it waits for a client's first bytes), per tunnel.
 *   loadgen bulk    -x PROXY -t HOST:PORT -p PID [-b BYTES] [-d SECONDS]
 *       reads BYTES through one tunnel from a target that sends without end;
 *       MB/s, and the proxy's CPU time (/proc/PID/stat) per GB relayed.
 *
 * PROXY is IPv4:PORT. -p may be given up to LG_PIDS_MAX times: the figures
 * are summed over those processes.
 *
 *   loadgen rate|latency|idle -x ADDR:PORT -s NAME [options as above, no -t]
 *       a transparent tunnel: connect to ADDR:PORT (the proxy's transparent
 *       port, or an address a netfilter redirect sends to it), send a
 *       ClientHello naming NAME, wait for the upstream's first byte (the SNI
 *       proxy must read the hello before it dials, so that byte proves the
 *       tunnel open), close. No TLS handshake follows: the upstream is not a
 *       TLS server, and the hello is never answered. */
#define _GNU_SOURCE
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LG_REQUEST_MAX_BYTES 512       /* a CONNECT head, or a ClientHello */
#define LG_REPLY_MAX_BYTES 512          /* the proxy's answer header, at most */
#define LG_EVENTS_MAX 256
#define LG_WAIT_MS 100                  /* epoll_wait timeout: deadlines are checked */
#define LG_PIDS_MAX 8
#define LG_TUNNELS_MAX 100000           /* -n of idle and latency */
#define LG_RATE_TUNNELS_MAX 10000000    /* -n of rate (8 bytes each of latency) */
#define LG_CONC_MAX 10000               /* -c */
#define LG_SECONDS_MAX 600              /* -d */
#define LG_GRACE_S 5                    /* in-flight tunnels get this long after -d */
#define LG_ERRORS_MAX 1000              /* a run stops after this many failures */
#define LG_BULK_CHUNK_BYTES (1 << 20)
#define LG_BULK_TIMEOUT_S 10            /* one read of the bulk run, at most */
#define LG_SNI_NAME_MAX_BYTES 253       /* a DNS name, at most */
#define LG_UPSTREAM_BYTE 'x'            /* what tests/bench/upstream sends on accept */
#define NS_PER_S 1000000000LL
#define NS_PER_US 1000LL

enum lg_mode { LG_RATE, LG_LATENCY, LG_IDLE, LG_BULK };

enum lg_state {
	LG_FREE,                        /* no socket */
	LG_CONNECTING,                  /* connect() to the proxy in progress */
	LG_REPLY,                       /* CONNECT sent, reading the proxy's answer */
	LG_BYTE,                        /* answer read (or ClientHello sent), waiting
	                                 * for the target's byte */
	LG_OPEN,                        /* done, kept open (idle mode) */
};

struct lg_tunnel {
	enum lg_state state;
	int fd;
	int64_t start_ns;
	size_t len;
	char reply[LG_REPLY_MAX_BYTES];
};

struct lg_opts {
	enum lg_mode mode;
	struct sockaddr_in proxy;
	const char *target;             /* HOST:PORT of CONNECT; NULL with -s */
	const char *sni;                /* -s: transparent tunnels naming this host */
	long conc, count, seconds, settle_s, later_s, bulk_bytes;
	pid_t pids[LG_PIDS_MAX];
	int npids;
};

/* The state of one run of the tunnel engine (rate, latency, idle). */
struct lg_run {
	const struct lg_opts *o;
	int epfd;
	struct lg_tunnel *slots;
	long nslots;
	char request[LG_REQUEST_MAX_BYTES]; /* sent on connect: CONNECT or ClientHello */
	size_t request_len;
	long started, done, errors, in_flight;
	int64_t *lat_ns;                /* one per finished tunnel */
	int64_t t0_ns, deadline_ns, last_done_ns;
};

static int64_t
lg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void
lg_die(const char *what)
{
	fprintf(stderr, "loadgen: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- the proxy's process: CPU time and memory ---- */

/* utime + stime of PID, in seconds; -1 when unreadable. */
static double
lg_cpu_s(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ut, st;
	FILE *f;
	size_t n;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
	    &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double
lg_cpu_total_s(const struct lg_opts *o)
{
	double sum = 0;

	for (int i = 0; i < o->npids; i++)
		sum += lg_cpu_s(o->pids[i]);
	return sum;
}

struct lg_mem {
	long rss_kib, pss_kib, anon_kib;
};

/* Adds PID's Rss, Pss and Anonymous (smaps_rollup) to M. */
static void
lg_mem_add(pid_t pid, struct lg_mem *m)
{
	char path[64], line[256];
	long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if (!(f = fopen(path, "r")))
		lg_die(path);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Rss: %ld kB", &v) == 1)
			m->rss_kib += v;
		else if (sscanf(line, "Pss: %ld kB", &v) == 1)
			m->pss_kib += v;
		else if (sscanf(line, "Anonymous: %ld kB", &v) == 1)
			m->anon_kib += v;
	}
	fclose(f);
}

static struct lg_mem
lg_mem_total(const struct lg_opts *o)
{
	struct lg_mem m = { 0, 0, 0 };

	for (int i = 0; i < o->npids; i++)
		lg_mem_add(o->pids[i], &m);
	return m;
}

/* ---- a transparent client's first bytes: a TLS ClientHello ---- */

#define TLS_RECORD_HANDSHAKE 0x16
#define TLS_HANDSHAKE_CLIENT_HELLO 0x01
#define TLS_EXTENSION_SERVER_NAME 0x0000
#define TLS_SERVER_NAME_HOST 0x00
#define TLS_RANDOM_BYTES 32
/* The hello's bytes besides the name: record header 5, handshake header 4,
 * version 2, random 32, session id 1, suites 6, compression 2, extensions'
 * length 2, server_name's type and length 4, its list's length 2, the
 * name's type and length 3. */
#define LG_HELLO_FIXED_BYTES 63
_Static_assert(LG_HELLO_FIXED_BYTES + LG_SNI_NAME_MAX_BYTES <= LG_REQUEST_MAX_BYTES,
    "the longest hello fits the request buffer");

/* A hello being written into a buffer the caller sized for it. */
struct lg_hello_writer {
	uint8_t *p;
	size_t len;
};

static void
lg_put_u8(struct lg_hello_writer *w, unsigned v)
{
	w->p[w->len++] = (uint8_t)v;
}

static void
lg_put_u16(struct lg_hello_writer *w, unsigned v)
{
	lg_put_u8(w, v >> 8);
	lg_put_u8(w, v & 0xff);
}

/* Opens a field prefixed by its length in WIDTH bytes; returns where the
 * length goes, for lg_end_vector once the field is written. */
static size_t
lg_begin_vector(struct lg_hello_writer *w, int width)
{
	size_t at = w->len;

	for (int i = 0; i < width; i++)
		lg_put_u8(w, 0);
	return at;
}

static void
lg_end_vector(struct lg_hello_writer *w, size_t at, int width)
{
	size_t n = w->len - at - (size_t)width;

	for (int i = width - 1; i >= 0; i--, n >>= 8)
		w->p[at + (size_t)i] = (uint8_t)(n & 0xff);
}

/* A minimal, well-formed TLS 1.2 ClientHello in one record whose only
 * extension is server_name = NAME: what every SNI proxy must read before it
 * dials (haproxy's req.ssl_hello_type and req.ssl_sni, sniproxy's tls
 * parser, corrald's egress-proxy/tls.c all take it), and no more, so that
 * the proxies are compared on their work and not on parsing a browser's
 * 500 bytes. The random is fixed: no TLS server ever sees it. Writes into
 * OUT (at least LG_REQUEST_MAX_BYTES) and returns the length. */
static size_t
lg_client_hello(char *out, const char *name)
{
	struct lg_hello_writer w = { (uint8_t *)out, 0 };
	size_t record, handshake, extensions, extension, names, name_len = strlen(name);

	lg_put_u8(&w, TLS_RECORD_HANDSHAKE);
	lg_put_u16(&w, 0x0301);                 /* record version, as clients send it */
	record = lg_begin_vector(&w, 2);
	lg_put_u8(&w, TLS_HANDSHAKE_CLIENT_HELLO);
	handshake = lg_begin_vector(&w, 3);
	lg_put_u16(&w, 0x0303);                 /* client_version: TLS 1.2 */
	for (int i = 0; i < TLS_RANDOM_BYTES; i++)
		lg_put_u8(&w, 0x5a);
	lg_put_u8(&w, 0);                       /* session_id: none */
	lg_put_u16(&w, 4);                      /* cipher_suites: */
	lg_put_u16(&w, 0x1301);                 /*   TLS_AES_128_GCM_SHA256 */
	lg_put_u16(&w, 0xc02f);                 /*   ECDHE_RSA_WITH_AES_128_GCM_SHA256 */
	lg_put_u8(&w, 1);                       /* compression_methods: */
	lg_put_u8(&w, 0);                       /*   null */
	extensions = lg_begin_vector(&w, 2);
	lg_put_u16(&w, TLS_EXTENSION_SERVER_NAME);
	extension = lg_begin_vector(&w, 2);
	names = lg_begin_vector(&w, 2);         /* server_name_list */
	lg_put_u8(&w, TLS_SERVER_NAME_HOST);
	lg_put_u16(&w, (unsigned)name_len);
	memcpy(w.p + w.len, name, name_len);
	w.len += name_len;
	lg_end_vector(&w, names, 2);
	lg_end_vector(&w, extension, 2);
	lg_end_vector(&w, extensions, 2);
	lg_end_vector(&w, handshake, 3);
	lg_end_vector(&w, record, 2);
	return w.len;
}

/* ---- the tunnel engine ---- */

static void
lg_watch(struct lg_run *r, long i, int op, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = (uint64_t)i };

	if (epoll_ctl(r->epfd, op, r->slots[i].fd, &ev) != 0)
		lg_die("epoll_ctl");
}

static void
lg_fail(struct lg_run *r, long i)
{
	close(r->slots[i].fd);
	r->slots[i].state = LG_FREE;
	r->errors++;
	r->in_flight--;
}

/* Starts tunnel I: a non-blocking connect to the proxy. */
static void
lg_start(struct lg_run *r, long i)
{
	struct lg_tunnel *t = &r->slots[i];
	int one = 1;

	t->start_ns = lg_now_ns();
	t->len = 0;
	t->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->fd < 0)
		lg_die("socket");
	setsockopt(t->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	r->started++;
	r->in_flight++;
	t->state = LG_CONNECTING;
	if (connect(t->fd, (const struct sockaddr *)&r->o->proxy, sizeof(r->o->proxy)) != 0 &&
	    errno != EINPROGRESS) {
		t->state = LG_FREE;
		close(t->fd);
		r->errors++;
		r->in_flight--;
		return;
	}
	lg_watch(r, i, EPOLL_CTL_ADD, EPOLLOUT);
}

/* Whether another tunnel may start now. */
static bool
lg_may_start(const struct lg_run *r)
{
	return r->started < r->o->count && r->errors < LG_ERRORS_MAX &&
	    lg_now_ns() < r->deadline_ns;
}

/* Tunnel I got its byte: count it; close it, or keep it open (idle). */
static void
lg_finish(struct lg_run *r, long i)
{
	struct lg_tunnel *t = &r->slots[i];
	int64_t now = lg_now_ns();

	r->lat_ns[r->done++] = now - t->start_ns;
	r->last_done_ns = now;
	r->in_flight--;
	if (r->o->mode == LG_IDLE) {
		epoll_ctl(r->epfd, EPOLL_CTL_DEL, t->fd, NULL);
		t->state = LG_OPEN;
		return;
	}
	close(t->fd);
	t->state = LG_FREE;
}

static void
lg_connected(struct lg_run *r, long i)
{
	struct lg_tunnel *t = &r->slots[i];
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0 ||
	    send(t->fd, r->request, r->request_len, MSG_NOSIGNAL) != (ssize_t)r->request_len) {
		lg_fail(r, i);
		return;
	}
	/* A transparent proxy has no answer of its own: the next byte is
	 * the upstream's. */
	t->state = r->o->sni ? LG_BYTE : LG_REPLY;
	lg_watch(r, i, EPOLL_CTL_MOD, EPOLLIN);
}

/* Reads the proxy's answer; a 200 followed by at least one byte finishes
 * the tunnel. Returns -1 on a refusal or an error. */
static int
lg_read_reply(struct lg_tunnel *t)
{
	ssize_t n = recv(t->fd, t->reply + t->len, sizeof(t->reply) - 1 - t->len, 0);
	char *end;

	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0)
		return -1;
	t->len += (size_t)n;
	t->reply[t->len] = '\0';
	end = strstr(t->reply, "\r\n\r\n");
	if (!end)
		return t->len < sizeof(t->reply) - 1 ? 0 : -1;
	if (strncmp(t->reply, "HTTP/1.", 7) != 0 || strncmp(t->reply + 8, " 200", 4) != 0)
		return -1;
	t->state = (size_t)(end + 4 - t->reply) < t->len ? LG_OPEN : LG_BYTE;
	return 0;
}

/* The target's byte. A transparent proxy that refuses may answer in the
 * tunnel's place (sniproxy sends a TLS alert, 0x15...): with -s only the
 * upstream's own byte counts. */
static int
lg_read_byte(struct lg_tunnel *t, bool upstream_byte_only)
{
	char c;
	ssize_t n = recv(t->fd, &c, 1, 0);

	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n != 1 || (upstream_byte_only && c != LG_UPSTREAM_BYTE))
		return -1;
	t->state = LG_OPEN;
	return 0;
}

static void
lg_event(struct lg_run *r, long i, uint32_t events)
{
	struct lg_tunnel *t = &r->slots[i];
	int rc = 0;

	if (t->state == LG_CONNECTING) {
		lg_connected(r, i);
		return;
	}
	if (t->state == LG_REPLY)
		rc = lg_read_reply(t);
	else if (t->state == LG_BYTE)
		rc = lg_read_byte(t, r->o->sni != NULL);
	if (rc == 0 && t->state == LG_BYTE && (events & EPOLLIN))
		rc = lg_read_byte(t, r->o->sni != NULL); /* the byte may already be there */
	if (rc < 0)
		lg_fail(r, i);
	else if (t->state == LG_OPEN)
		lg_finish(r, i);
}

/* The slot to start next: in idle mode every tunnel has its own slot and
 * keeps it; otherwise a free one. -1 when none. */
static long
lg_next_slot(const struct lg_run *r, long hint)
{
	if (r->o->mode == LG_IDLE)
		return r->started < r->nslots ? r->started : -1;
	return r->slots[hint].state == LG_FREE ? hint : -1;
}

/* Refills freed slots (slot HINT first) while the run may go on. */
static void
lg_refill(struct lg_run *r, long hint)
{
	long i;

	while (r->in_flight < r->o->conc && lg_may_start(r) &&
	    (i = lg_next_slot(r, hint)) >= 0)
		lg_start(r, i);
}

static void
lg_loop(struct lg_run *r)
{
	struct epoll_event evs[LG_EVENTS_MAX];
	int64_t hard_ns = r->deadline_ns + LG_GRACE_S * NS_PER_S;

	for (long i = 0; i < r->o->conc && i < r->nslots; i++)
		if (lg_may_start(r))
			lg_start(r, r->o->mode == LG_IDLE ? r->started : i);
	while (r->in_flight > 0 && lg_now_ns() < hard_ns) {
		int n = epoll_wait(r->epfd, evs, LG_EVENTS_MAX, LG_WAIT_MS);

		for (int k = 0; k < n; k++) {
			long i = (long)evs[k].data.u64;

			lg_event(r, i, evs[k].events);
			lg_refill(r, i);
		}
	}
}

static void
lg_run_init(struct lg_run *r, const struct lg_opts *o)
{
	memset(r, 0, sizeof(*r));
	r->o = o;
	r->nslots = o->mode == LG_IDLE ? o->count : o->conc;
	r->slots = calloc((size_t)r->nslots, sizeof(*r->slots));
	r->lat_ns = calloc((size_t)o->count, sizeof(*r->lat_ns));
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!r->slots || !r->lat_ns || r->epfd < 0)
		lg_die("setup");
	if (o->sni)
		r->request_len = lg_client_hello(r->request, o->sni);
	else
		r->request_len = (size_t)snprintf(r->request, sizeof(r->request),
		    "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", o->target, o->target);
	r->t0_ns = lg_now_ns();
	r->deadline_ns = r->t0_ns + o->seconds * NS_PER_S;
}

static void
lg_close_all(struct lg_run *r)
{
	for (long i = 0; i < r->nslots; i++)
		if (r->slots[i].state != LG_FREE)
			close(r->slots[i].fd);
	close(r->epfd);
	free(r->slots);
	free(r->lat_ns);
}

static int
lg_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The P-th percentile (0-100) of the sorted latencies, in microseconds. */
static double
lg_pct_us(const struct lg_run *r, double p)
{
	long k;

	if (r->done == 0)
		return 0;
	k = (long)((double)(r->done - 1) * p / 100.0 + 0.5);
	return (double)r->lat_ns[k] / (double)NS_PER_US;
}

static void
lg_print_latency(struct lg_run *r)
{
	qsort(r->lat_ns, (size_t)r->done, sizeof(*r->lat_ns), lg_cmp_i64);
	printf(" p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f", lg_pct_us(r, 50),
	    lg_pct_us(r, 90), lg_pct_us(r, 99), lg_pct_us(r, 100));
}

/* Transparent runs say so at the end of their line; CONNECT runs' lines
 * are as they always were. */
static void
lg_print_sni(const struct lg_opts *o)
{
	if (o->sni)
		printf(" sni=%s", o->sni);
}

static int
lg_tunnels(const struct lg_opts *o)
{
	struct lg_run r;
	double secs, cpu0 = lg_cpu_total_s(o), cpu;

	lg_run_init(&r, o);
	lg_loop(&r);
	secs = (double)((r.last_done_ns ? r.last_done_ns : lg_now_ns()) - r.t0_ns) / NS_PER_S;
	cpu = lg_cpu_total_s(o) - cpu0;
	printf("mode=%s tunnels=%ld errors=%ld unfinished=%ld seconds=%.3f rate=%.1f",
	    o->mode == LG_RATE ? "rate" : "latency", r.done, r.errors, r.in_flight, secs,
	    secs > 0 ? (double)r.done / secs : 0);
	lg_print_latency(&r);
	/* The proxy's own CPU per tunnel: less moved by the machine's other
	 * work than the rate (the clock tick, 10 ms, bounds its precision). */
	if (o->npids > 0 && r.done > 0)
		printf(" proxy_cpu_us_per_tunnel=%.1f", cpu * 1e6 / (double)r.done);
	lg_print_sni(o);
	printf("\n");
	lg_close_all(&r);
	return r.done > 0 && r.errors == 0 && r.in_flight == 0 ? 0 : 1;
}

/* Prints the growth from BEFORE to AFTER per tunnel, keys with SUFFIX. */
static void
lg_print_mem(const char *suffix, const struct lg_mem *before, const struct lg_mem *after,
    long tunnels)
{
	double n = tunnels > 0 ? (double)tunnels : 1;

	printf(" rss%s_kib=%ld rss%s_kib_per_tunnel=%.2f pss%s_kib_per_tunnel=%.2f "
	    "anon%s_kib_per_tunnel=%.2f", suffix, after->rss_kib, suffix,
	    (double)(after->rss_kib - before->rss_kib) / n, suffix,
	    (double)(after->pss_kib - before->pss_kib) / n, suffix,
	    (double)(after->anon_kib - before->anon_kib) / n);
}

static int
lg_idle(const struct lg_opts *o)
{
	struct lg_run r;
	struct lg_mem before = lg_mem_total(o), after, later;
	struct timespec settle = { .tv_sec = o->settle_s };
	struct timespec rest = { .tv_sec = o->later_s - o->settle_s };

	lg_run_init(&r, o);
	lg_loop(&r);
	nanosleep(&settle, NULL);
	after = lg_mem_total(o);
	printf("mode=idle tunnels=%ld errors=%ld unfinished=%ld rss_before_kib=%ld", r.done,
	    r.errors, r.in_flight, before.rss_kib);
	lg_print_mem("", &before, &after, r.done);
	if (o->later_s > o->settle_s) {
		nanosleep(&rest, NULL);
		later = lg_mem_total(o);
		lg_print_mem("_later", &before, &later, r.done);
	}
	lg_print_sni(o);
	printf("\n");
	lg_close_all(&r);
	return r.done == o->count ? 0 : 1;
}

/* ---- bulk: one blocking tunnel ---- */

/* A blocking tunnel through the proxy, its answer read; the count of body
 * bytes that came with the answer in *EXTRA. -1 on failure. */
static int
lg_bulk_open(const struct lg_opts *o, size_t *extra)
{
	struct lg_tunnel t = { .state = LG_REPLY };
	struct timeval tv = { .tv_sec = LG_BULK_TIMEOUT_S };
	char req[LG_REQUEST_MAX_BYTES];
	int len = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
	    o->target, o->target);
	char *end;

	t.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (t.fd < 0 || setsockopt(t.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(t.fd, (const struct sockaddr *)&o->proxy, sizeof(o->proxy)) != 0 ||
	    send(t.fd, req, (size_t)len, MSG_NOSIGNAL) != len)
		lg_die("bulk: connect");
	while (t.state == LG_REPLY)
		if (lg_read_reply(&t) < 0)
			lg_die("bulk: proxy answer");
	end = strstr(t.reply, "\r\n\r\n");
	*extra = t.len - (size_t)(end + 4 - t.reply);
	return t.fd;
}

static int
lg_bulk(const struct lg_opts *o)
{
	static char sink[LG_BULK_CHUNK_BYTES];
	size_t extra;
	int fd = lg_bulk_open(o, &extra);
	long long got = (long long)extra;
	double cpu0 = lg_cpu_total_s(o), cpu1, secs, cpu;
	int64_t t0 = lg_now_ns(), deadline = t0 + o->seconds * NS_PER_S;

	while (got < o->bulk_bytes && lg_now_ns() < deadline) {
		/* MSG_TRUNC: TCP drops the bytes without copying them here. */
		ssize_t n = recv(fd, sink, sizeof(sink), MSG_TRUNC);

		if (n <= 0)
			break;
		got += n;
	}
	secs = (double)(lg_now_ns() - t0) / NS_PER_S;
	cpu1 = lg_cpu_total_s(o);
	cpu = cpu1 - cpu0;
	close(fd);
	printf("mode=bulk bytes=%lld seconds=%.3f mb_per_s=%.1f proxy_cpu_s=%.2f "
	    "cpu_s_per_gb=%.3f\n", got, secs, (double)got / 1e6 / secs, cpu,
	    cpu / ((double)got / 1e9));
	return got >= o->bulk_bytes ? 0 : 1;
}

/* ---- options ---- */

static void
lg_usage(void)
{
	fprintf(stderr, "usage: loadgen rate|latency|idle|bulk -x PROXY_IP:PORT -t HOST:PORT\n"
	    "\t[-c CONC] [-d SECONDS] [-n COUNT] [-p PID]... [-w SETTLE_S] [-W LATER_S] [-b BYTES]\n"
	    "       loadgen rate|latency|idle -x IP:PORT -s SNI_NAME [the same options]\n");
	exit(2);
}

static long
lg_number(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		fprintf(stderr, "loadgen: %s: not a number in [%ld, %ld]\n", s, min, max);
		exit(2);
	}
	return v;
}

static void
lg_parse_proxy(struct lg_opts *o, const char *arg)
{
	char ip[INET_ADDRSTRLEN];
	const char *colon = strrchr(arg, ':');

	if (!colon || (size_t)(colon - arg) >= sizeof(ip))
		lg_usage();
	memcpy(ip, arg, (size_t)(colon - arg));
	ip[colon - arg] = '\0';
	o->proxy.sin_family = AF_INET;
	o->proxy.sin_port = htons((uint16_t)lg_number(colon + 1, 1, 65535));
	if (inet_pton(AF_INET, ip, &o->proxy.sin_addr) != 1)
		lg_usage();
}

static void
lg_parse_mode(struct lg_opts *o, const char *m)
{
	static const char *const names[] = { "rate", "latency", "idle", "bulk" };

	for (int i = 0; i < 4; i++)
		if (strcmp(m, names[i]) == 0)
			o->mode = (enum lg_mode)i;
	if (strcmp(m, names[o->mode]) != 0)
		lg_usage();
	o->conc = o->mode == LG_RATE ? 50 : o->mode == LG_IDLE ? 100 : 1;
	o->count = o->mode == LG_IDLE ? 5000 : o->mode == LG_LATENCY ? 2000 : 1000000;
	if (o->mode == LG_BULK)
		o->count = 1;
	o->seconds = o->mode == LG_RATE ? 5 : 60;
}

static void
lg_parse(struct lg_opts *o, int argc, char **argv)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->settle_s = 1;
	o->bulk_bytes = 1L << 30;
	if (argc < 2)
		lg_usage();
	lg_parse_mode(o, argv[1]);
	optind = 2;
	while ((c = getopt(argc, argv, "x:t:s:c:d:n:p:w:W:b:")) != -1) {
		switch (c) {
		case 'x': lg_parse_proxy(o, optarg); break;
		case 't': o->target = optarg; break;
		case 's': o->sni = optarg; break;
		case 'c': o->conc = lg_number(optarg, 1, LG_CONC_MAX); break;
		case 'd': o->seconds = lg_number(optarg, 1, LG_SECONDS_MAX); break;
		case 'n': o->count = lg_number(optarg, 1, o->mode == LG_RATE ?
		    LG_RATE_TUNNELS_MAX : LG_TUNNELS_MAX); break;
		case 'w': o->settle_s = lg_number(optarg, 0, 60); break;
		case 'W': o->later_s = lg_number(optarg, 0, 60); break;
		case 'b': o->bulk_bytes = lg_number(optarg, 1, 1L << 40); break;
		case 'p':
			if (o->npids == LG_PIDS_MAX)
				lg_usage();
			o->pids[o->npids++] = (pid_t)lg_number(optarg, 1, 1 << 30);
			break;
		default: lg_usage();
		}
	}
	if (!o->proxy.sin_port || ((o->mode == LG_IDLE || o->mode == LG_BULK) && o->npids == 0))
		lg_usage();
	/* A tunnel is named one way: by CONNECT's target or by the hello's
	 * SNI (bulk reads through a CONNECT tunnel only). */
	if (o->sni ? o->target || o->mode == LG_BULK || strlen(o->sni) == 0 ||
	    strlen(o->sni) > LG_SNI_NAME_MAX_BYTES : !o->target || strlen(o->target) > 200)
		lg_usage();
	if (o->mode == LG_LATENCY)
		o->conc = 1;
}

int
main(int argc, char **argv)
{
	struct lg_opts o;

	lg_parse(&o, argc, argv);
	alarm((unsigned)(o.seconds + o.settle_s + o.later_s + 2 * LG_GRACE_S + 30));
	switch (o.mode) {
	case LG_BULK: return lg_bulk(&o);
	case LG_IDLE: return lg_idle(&o);
	default: return lg_tunnels(&o);
	}
}
