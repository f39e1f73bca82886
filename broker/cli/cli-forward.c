/* corral forward: a service on a sandbox's loopback, reached from the
 * host's loopback (or a Unix socket) while the command runs.
 *
 * The CLI listens and checks who connects (the kernel's word: sock_diag
 * for TCP, SO_PEERCRED for a Unix socket): only the user who runs it. Each
 * connection it lets in gets a child process that opens a control
 * connection with a ForwardConnect and, after corrald's ok, relays bytes
 * between the two. A ForwardOpen held by the parent names the forward for
 * `corral forward --list` and ends it when corrald does. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/cli/cli.h"
#include "broker/cli/client.h"
#include "broker/cli/forward-spec.h"
#include "common/json.h"
#include "common/timeutil.h"

#define CLI_FORWARD_WHY_BYTES 512
#define CLI_FORWARD_LISTEN_BYTES 160            /* "127.0.0.1:65535", "[::1]:1", a path */
#define CLI_FORWARD_RELAY_BYTES (64 * 1024)
#define CLI_FORWARD_BACKLOG 64
#define CLI_FORWARD_JSON_MAX_BYTES (1024 * 1024)
/* Refusals said and recorded a second, at most: another user flooding the
 * listener costs the ledger no more than this. */
#define CLI_FORWARD_REFUSALS_PER_S 10

static volatile sig_atomic_t cli_forward_stop;

static void
cli_forward_on_signal(int sig)
{
	(void)sig;
	cli_forward_stop = 1;
}

/* --- Who connected ----------------------------------------------------- */

/* The uid owning the peer of the TCP connection FD (on this machine's
 * loopback), from inet_diag; -1 when it cannot be told. */
static long
cli_forward_tcp_peer_uid(int fd)
{
	struct sockaddr_storage local, peer;
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req;
	union {
		struct nlmsghdr nlh;
		char buf[8192];
	} ans;
	struct inet_diag_msg *msg;
	long uid = -1;
	ssize_t n;
	int nl;

	if (getsockname(fd, (struct sockaddr *)&local, &llen) == -1 ||
	    getpeername(fd, (struct sockaddr *)&peer, &plen) == -1)
		return -1;
	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = (uint8_t)local.ss_family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	/* The peer's socket: its source is our peer, its destination us. */
	if (local.ss_family == AF_INET) {
		const struct sockaddr_in *l = (void *)&local, *p = (void *)&peer;

		req.r.id.idiag_sport = p->sin_port;
		req.r.id.idiag_dport = l->sin_port;
		memcpy(req.r.id.idiag_src, &p->sin_addr, 4);
		memcpy(req.r.id.idiag_dst, &l->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *l = (void *)&local, *p = (void *)&peer;

		req.r.id.idiag_sport = p->sin6_port;
		req.r.id.idiag_dport = l->sin6_port;
		memcpy(req.r.id.idiag_src, &p->sin6_addr, 16);
		memcpy(req.r.id.idiag_dst, &l->sin6_addr, 16);
	}
	if ((nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) == -1)
		return -1;
	if (send(nl, &req, sizeof(req), 0) == (ssize_t)sizeof(req) &&
	    (n = recv(nl, &ans, sizeof(ans), 0)) >= (ssize_t)NLMSG_LENGTH(sizeof(*msg)) &&
	    NLMSG_OK(&ans.nlh, (size_t)n) && ans.nlh.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
		msg = NLMSG_DATA(&ans.nlh);
		uid = (long)msg->idiag_uid;
	}
	close(nl);
	return uid;
}

/* The uid of the peer of FD, or -1. */
static long
cli_forward_peer_uid(int fd, bool unix_socket)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (!unix_socket)
		return cli_forward_tcp_peer_uid(fd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return -1;
	return (long)cred.uid;
}

/* --- One connection ---------------------------------------------------- */

/* The ForwardConnect of a connection through SPEC (REFUSED_UID: the uid
 * plus one of a peer turned away, 0 for one let in). */
static int
cli_forward_connect(const struct cli *cli, char *name, char *listen,
    const struct forward_spec *spec, unsigned refused_uid, char *why, size_t why_size)
{
	Corral__ForwardConnect fc = CORRAL__FORWARD_CONNECT__INIT;
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Response *resp = NULL;
	int fd;

	fc.sandbox = name;
	fc.port = spec->sandbox_port;
	fc.listen = listen;
	fc.refused_uid = refused_uid;
	req.request_case = CORRAL__REQUEST__REQUEST_FORWARD_CONNECT;
	req.forward_connect = &fc;
	if ((fd = client_connect(cli->socket_path, why, why_size)) == -1)
		return -1;
	if (client_call(fd, &req, &resp, why, why_size) == -1) {
		close(fd);
		return -1;
	}
	if (resp->response_case != CORRAL__RESPONSE__RESPONSE_OK) {
		snprintf(why, why_size, "%s", resp->response_case == CORRAL__RESPONSE__RESPONSE_ERROR ?
		    resp->error->message : "unexpected answer from corrald");
		corral__response__free_unpacked(resp, NULL);
		close(fd);
		return -1;
	}
	corral__response__free_unpacked(resp, NULL);
	return fd;
}

/* Copies FROM to TO until FROM's end, then shuts TO's writing side. */
static void
cli_forward_pump(int from, int to)
{
	static char buf[CLI_FORWARD_RELAY_BYTES];
	ssize_t n, off, w;

	while ((n = read(from, buf, sizeof(buf))) > 0 || (n == -1 && errno == EINTR))
		for (off = 0; n > 0 && off < n; off += w)
			if ((w = send(to, buf + off, (size_t)(n - off), MSG_NOSIGNAL)) <= 0)
				return;
	(void)shutdown(to, SHUT_WR);
}

/* Whether this process dies with PARENT (PR_SET_PDEATHSIG, and the
 * parent was still there once it was set). */
static bool
cli_forward_tied(pid_t parent)
{
	return prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid() == parent;
}

/* Relays between the host's connection A and corrald's B, each direction
 * in a process of its own: a direction that waits for its peer never
 * stops the other (a service that writes as it reads). */
static void
cli_forward_relay(int a, int b)
{
	pid_t self = getpid(), pid = fork();

	if (pid == 0) {
		if (!cli_forward_tied(self))
			_exit(1);
		cli_forward_pump(b, a);
		_exit(0);
	}
	if (pid == -1)
		return;
	cli_forward_pump(a, b);
	(void)waitpid(pid, NULL, 0);
}

/* The child of one connection CONN: relays it through corrald, then exits. */
static void
cli_forward_child(const struct cli *cli, char *name, char *listen,
    const struct forward_spec *spec, int conn, pid_t parent)
{
	char why[CLI_FORWARD_WHY_BYTES];
	int fd;

	/* The forward ends with its command: so do its connections. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	if (!cli_forward_tied(parent))
		_exit(1);
	if ((fd = cli_forward_connect(cli, name, listen, spec, 0, why, sizeof(why))) == -1) {
		fprintf(stderr, "corral: forward %s: a connection was not forwarded: %s\n",
		    listen, cli_text(why));
		_exit(1);
	}
	/* Each side's bytes go on as they come, often small records (a TLS
	 * handshake's): Nagle's wait for an ACK the client delays would add
	 * 40 ms to a handshake. */
	if (!spec->unix_socket)
		(void)setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	cli_forward_relay(conn, fd);
	_exit(0);
}

/* The refusals of this second, and those past the limit not yet said. */
static struct {
	int64_t second;
	unsigned said;
	uint64_t unsaid;
} cli_forward_refusals;

/* Says how many refusals of a past second were not said, once that
 * second is over. */
static void
cli_forward_refusals_flush(const char *listen)
{
	int64_t now = time_mono_ns() / 1000000000;

	if (now == cli_forward_refusals.second)
		return;
	if (cli_forward_refusals.unsaid > 0)
		fprintf(stderr, "corral: forward %s: %llu more connections of other users refused, "
		    "neither said nor recorded\n", listen,
		    (unsigned long long)cli_forward_refusals.unsaid);
	cli_forward_refusals.second = now;
	cli_forward_refusals.said = 0;
	cli_forward_refusals.unsaid = 0;
}

/* Whether a refusal now may be said and recorded. */
static bool
cli_forward_refusal_said(const char *listen)
{
	cli_forward_refusals_flush(listen);
	if (cli_forward_refusals.said >= CLI_FORWARD_REFUSALS_PER_S) {
		cli_forward_refusals.unsaid++;
		return false;
	}
	cli_forward_refusals.said++;
	return true;
}

/* A connection CONN of UID (-1: unknown), not the forward's user: closed,
 * said and recorded (corrald's ledger records every connection), within
 * the limit. */
static void
cli_forward_refuse(const struct cli *cli, char *name, char *listen,
    const struct forward_spec *spec, int conn, long uid)
{
	char why[CLI_FORWARD_WHY_BYTES];
	int fd;

	close(conn);
	if (!cli_forward_refusal_said(listen))
		return;
	fprintf(stderr, "corral: forward %s: refused a connection of %s%ld: only uid %ld may use "
	    "it\n", listen, uid == -1 ? "an unknown user" : "uid ", uid == -1 ? 0L : uid,
	    (long)getuid());
	fd = cli_forward_connect(cli, name, listen, spec, uid == -1 ? UINT32_MAX :
	    (unsigned)uid + 1, why, sizeof(why));
	if (fd != -1)
		close(fd);
}

/* A connection on the listener: let in (a child relays it) or turned away. */
static void
cli_forward_accept(const struct cli *cli, char *name, char *listen,
    const struct forward_spec *spec, int listener, int reg)
{
	int conn = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	pid_t pid, parent = getpid();
	long uid;

	if (conn == -1)
		return;
	uid = cli_forward_peer_uid(conn, spec->unix_socket);
	if (uid != (long)getuid()) {
		cli_forward_refuse(cli, name, listen, spec, conn, uid);
		return;
	}
	if ((pid = fork()) == 0) {
		close(listener);
		close(reg);
		cli_forward_child(cli, name, listen, spec, conn, parent);
	}
	if (pid == -1)
		fprintf(stderr, "corral: forward %s: fork: %s\n", listen, strerror(errno));
	close(conn);
}

/* --- The forward ------------------------------------------------------- */

/* Listens on SPEC's host side; its text in LISTEN (the port the kernel
 * chose, when 0). -1 with the reason printed. */
static int
cli_forward_listen(struct forward_spec *spec, char *text, size_t size)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&spec->addr;
	socklen_t len = sizeof(spec->addr);
	char host[INET6_ADDRSTRLEN];
	int fd, one = 1, rc;
	mode_t mask = 0;

	if ((fd = socket(spec->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		(void)cli_fail("socket: %s", strerror(errno));
		return -1;
	}
	if (!spec->unix_socket)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	else
		mask = umask(0177);     /* mode 0600: only its owner connects (root aside) */
	rc = bind(fd, (const struct sockaddr *)&spec->addr, spec->addr_len);
	if (spec->unix_socket)
		umask(mask);
	if (rc == -1 || listen(fd, CLI_FORWARD_BACKLOG) == -1) {
		(void)cli_fail("cannot listen on %s: %s", spec->unix_socket ?
		    cli_text(un->sun_path) : "that address", strerror(errno));
		close(fd);
		return -1;
	}
	if (spec->unix_socket) {
		snprintf(text, size, "%s", un->sun_path);
		return fd;
	}
	(void)getsockname(fd, (struct sockaddr *)&spec->addr, &len);
	if (spec->addr.ss_family == AF_INET) {
		const struct sockaddr_in *v4 = (const void *)&spec->addr;

		inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
		snprintf(text, size, "%s:%u", host, ntohs(v4->sin_port));
	} else {
		const struct sockaddr_in6 *v6 = (const void *)&spec->addr;

		inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
		snprintf(text, size, "[%s]:%u", host, ntohs(v6->sin6_port));
	}
	return fd;
}

/* The ForwardOpen that names the forward while it runs: its connection,
 * or -1 with the error printed (its exit status in *RC). */
static int
cli_forward_open(const struct cli *cli, char *name, char *listen, uint16_t port,
    int *rc)
{
	Corral__ForwardOpen fo = CORRAL__FORWARD_OPEN__INIT;
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Response *resp = NULL;
	char why[CLI_FORWARD_WHY_BYTES];
	int fd;

	fo.sandbox = name;
	fo.port = port;
	fo.listen = listen;
	req.request_case = CORRAL__REQUEST__REQUEST_FORWARD_OPEN;
	req.forward_open = &fo;
	if ((fd = client_connect(cli->socket_path, why, sizeof(why))) == -1) {
		*rc = cli_unreachable(why);
		return -1;
	}
	if (client_call(fd, &req, &resp, why, sizeof(why)) == -1) {
		*rc = cli_unreachable(why);
		close(fd);
		return -1;
	}
	if (resp->response_case == CORRAL__RESPONSE__RESPONSE_ERROR)
		*rc = cli_error(resp->error->code, "%s", resp->error->message);
	else if (resp->response_case != CORRAL__RESPONSE__RESPONSE_OK)
		*rc = cli_fail("unexpected answer from corrald");
	else
		*rc = CLI_EXIT_OK;
	corral__response__free_unpacked(resp, NULL);
	if (*rc != CLI_EXIT_OK) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Serves the forward until a signal, or corrald ends it (then 6). */
static int
cli_forward_serve(const struct cli *cli, char *name, char *listen,
    const struct forward_spec *spec, int listener, int reg)
{
	struct pollfd p[2] = { { .fd = listener, .events = POLLIN }, { .fd = reg, .events = POLLIN } };

	while (!cli_forward_stop) {
		/* Refusals not said are counted aloud within a second or so. */
		int rc = poll(p, 2, cli_forward_refusals.unsaid > 0 ? 1000 : -1);

		cli_forward_refusals_flush(listen);
		if (rc == -1) {
			if (errno == EINTR)
				continue;
			return cli_fail("poll: %s", strerror(errno));
		}
		if (p[1].revents != 0)
			return cli_error("unavailable", "corrald ended the forward of %s: the sandbox "
			    "was deleted, or corrald stopped", cli_text(name));
		if (p[0].revents & POLLIN)
			cli_forward_accept(cli, name, listen, spec, listener, reg);
	}
	return CLI_EXIT_OK;
}

static void
cli_forward_signals(void)
{
	struct sigaction sa = { .sa_handler = cli_forward_on_signal };
	struct sigaction child = { .sa_handler = SIG_DFL, .sa_flags = SA_NOCLDWAIT };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* The connections' children are never waited for. */
	sigaction(SIGCHLD, &child, NULL);
}

/* corral forward NAME SPEC. */
static int
cli_forward_run(const struct cli *cli, char *name, const char *text)
{
	char why[FORWARD_SPEC_REASON_MAX_BYTES], listen[CLI_FORWARD_LISTEN_BYTES];
	struct forward_spec spec;
	int listener, reg, rc;

	if ((rc = cli_check_name(name)) != 0)
		return rc;
	if (forward_spec_parse(text, &spec, why, sizeof(why)) == -1)
		return cli_error("usage", "%s", why);
	if ((listener = cli_forward_listen(&spec, listen, sizeof(listen))) == -1)
		return CLI_EXIT_FAILED;
	if ((reg = cli_forward_open(cli, name, listen, spec.sandbox_port, &rc)) == -1) {
		if (spec.unix_socket)
			unlink(listen);
		close(listener);
		return rc;
	}
	cli_forward_signals();
	printf("forwarding %s to port %u of sandbox %s\n", cli_text(listen), spec.sandbox_port,
	    cli_text(name));
	fflush(stdout);
	rc = cli_forward_serve(cli, name, listen, &spec, listener, reg);
	if (spec.unix_socket)
		unlink(listen);
	close(listener);
	close(reg);
	return rc;
}

/* --- corral forward --list --------------------------------------------- */

static int
cli_forward_list_json(const Corral__ForwardListReply *r)
{
	struct json *j = json_new(CLI_FORWARD_JSON_MAX_BYTES);
	char when[RFC3339_US_BYTES];

	json_array_begin(j);
	for (size_t i = 0; i < r->n_forwards; i++) {
		const Corral__ForwardInfo *f = r->forwards[i];

		time_format_rfc3339_us(f->opened_at_us, when);
		json_object_begin(j);
		json_kv_string(j, "sandbox", f->sandbox);
		json_kv_string(j, "listen", f->listen);
		json_kv_int(j, "port", f->port);
		json_kv_int(j, "uid", f->uid);
		json_kv_int(j, "pid", f->pid);
		json_kv_string(j, "opened_at", when);
		json_kv_int(j, "connections", (int64_t)f->connections);
		json_kv_int(j, "open_connections", f->open_connections);
		json_kv_int(j, "refused", (int64_t)f->refused);
		json_object_end(j);
	}
	json_array_end(j);
	return cli_print_json(j);
}

static void
cli_forward_list_text(const Corral__ForwardListReply *r)
{
	char when[RFC3339_US_BYTES];

	if (r->n_forwards == 0) {
		printf("no forwards open\n");
		return;
	}
	printf("%-20s %-24s %6s %6s %8s %6s %5s %7s  %s\n", "SANDBOX", "LISTEN", "PORT", "UID",
	    "PID", "CONNS", "OPEN", "REFUSED", "OPENED");
	for (size_t i = 0; i < r->n_forwards; i++) {
		const Corral__ForwardInfo *f = r->forwards[i];

		time_format_rfc3339_us(f->opened_at_us, when);
		printf("%-20s %-24s %6u %6u %8d %6llu %5u %7llu  %s\n", cli_text(f->sandbox),
		    cli_text(f->listen), f->port, f->uid, f->pid,
		    (unsigned long long)f->connections, f->open_connections,
		    (unsigned long long)f->refused, when);
	}
}

static int
cli_forward_list(const struct cli *cli, bool json)
{
	Corral__ForwardList fl = CORRAL__FORWARD_LIST__INIT;
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Response *resp;
	int rc;

	req.request_case = CORRAL__REQUEST__REQUEST_FORWARD_LIST;
	req.forward_list = &fl;
	if ((rc = cli_call(cli, &req, &resp)) != 0 ||
	    (rc = cli_expect(resp, CORRAL__RESPONSE__RESPONSE_FORWARD_LIST)) != 0)
		return rc;
	if (json)
		rc = cli_forward_list_json(resp->forward_list);
	else
		cli_forward_list_text(resp->forward_list);
	corral__response__free_unpacked(resp, NULL);
	return rc;
}

int
cli_forward(struct cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	bool list = false, json = false;
	int c;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (c == 'l')
			list = true;
		else if (c == 'j')
			json = true;
		else
			return cli_usage(cli_find("forward"));
	}
	if (list)
		return optind == argc ? cli_forward_list(cli, json) : cli_usage(cli_find("forward"));
	if (json || argc - optind != 2)
		return cli_usage(cli_find("forward"));
	return cli_forward_run(cli, argv[optind], argv[optind + 1]);
}
