/* The monitor process: corrald's root half. It answers the broker's
 * requests one at a time with the closed list of privop.h, and ends (after
 * tearing everything down) on anything it does not expect; see monitor.h. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/monitor/fwcheck.h"
#include "broker/monitor/monitor-wire.h"
#include "broker/monitor/monitor.h"
#include "broker/monitor/opener.h"
#include "broker/monitor/privop.h"
#include "common/log.h"
#include "common/xmalloc.h"

#define MONITOR_PEER_GROUPS_MAX 64      /* a caller's groups read from its connection */
#define MONITOR_FIREWALL_LINE_MAX_BYTES (FWCHECK_REASON_MAX_BYTES + 32)
#define MONITOR_EXIT_BROKEN_LINK 3      /* the broker sent what no broker sends */
#define MONITOR_CA_TIMEOUT_MS 5000      /* for a create's CREATE_CA, sent right after it */

/* The monitor's state: its link and what it built. */
struct monitor {
	int fd;                         /* the link to the broker */
	struct privop *op;              /* NULL: its set-up failed (hello.why) */
	const struct monitor_setup *setup;
	struct seqmsg *in, *out;
	struct seqmsg *ca;              /* a create's CREATE_CA */
	bool ca_pending;                /* ... sent, not read yet */
};

/* Who is on a client's connection, as the kernel says. */
struct monitor_peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	gid_t groups[MONITOR_PEER_GROUPS_MAX];
	size_t ngroups;
};

/* Everything the monitor built goes, then the control socket (the broker
 * cannot remove it: its folder is root's). */
static void __attribute__((noreturn))
monitor_exit(struct monitor *mon, int status)
{
	struct stat st;

	opener_end();
	privop_free(mon->op);
	if (mon->setup->socket_path != NULL && lstat(mon->setup->socket_path, &st) == 0 &&
	    S_ISSOCK(st.st_mode))
		unlink(mon->setup->socket_path);
	_exit(status);
}

/* The broker sent something no working broker sends: a malformed message,
 * a type that is not a request, a request it was not entitled to make.
 * It is broken or subverted, so nothing more it asks is done. */
static void __attribute__((noreturn))
monitor_broken(struct monitor *mon, const char *what)
{
	log_error("monitor: the broker sent %s: tearing everything down", what);
	monitor_exit(mon, MONITOR_EXIT_BROKEN_LINK);
}

static void
monitor_send(struct monitor *mon)
{
	/* A lost answer leaves the broker waiting: it times out and says so. */
	if (seqmsg_send(mon->fd, mon->out) == -1)
		log_error("monitor: cannot answer the broker: %s", strerror(errno));
	/* Attached descriptors are the sender's, not the message's. */
	mon->out->n_fds = 0;
	seqmsg_clear(mon->out);
}

static void
monitor_send_text(struct monitor *mon, enum monitor_wire_type type, const char *text)
{
	monitor_wire_text_encode(mon->out, type, text, -1);
	monitor_send(mon);
}

/* True when FD is a connection accepted on the control socket at PATH:
 * its local name is that path. A socket the broker connected elsewhere
 * (to a root daemon's socket, say) would name root as its peer; it has
 * another local name, or none. */
static bool
monitor_from_control_socket(int fd, const char *path)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);
	int type = 0;
	socklen_t tlen = sizeof(type);

	if (path == NULL || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == -1 ||
	    type != SOCK_STREAM || getsockname(fd, (struct sockaddr *)&sun, &len) == -1 ||
	    sun.sun_family != AF_UNIX || len <= offsetof(struct sockaddr_un, sun_path))
		return false;
	return strncmp(sun.sun_path, path, sizeof(sun.sun_path)) == 0;
}

/* Who is on the client connection FD; -1 unless FD is a connection to the
 * control socket at PATH. */
static int
monitor_peer(int fd, const char *path, struct monitor_peer *who)
{
	struct ucred cred;
	socklen_t len = sizeof(cred), glen = sizeof(who->groups);

	memset(who, 0, sizeof(*who));
	if (fd == -1 || !monitor_from_control_socket(fd, path) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, who->groups, &glen) == -1)
		return -1;
	who->uid = cred.uid;
	who->gid = cred.gid;
	who->pid = cred.pid;
	who->ngroups = glen / sizeof(who->groups[0]);
	return 0;
}

/* The caller's identity from its own connection, and run_as held to the
 * rules again: a subverted broker cannot pick another user's rights or
 * groups. NULL, or why the request is refused. */
static const char *
monitor_identify(struct monitor_wire_create *w, const char *path, struct monitor_peer *who)
{
	struct monitor_create *r = &w->req;
	const struct passwd *pw;

	if (monitor_peer(r->caller_fd, path, who) == -1)
		return "refused: that is not a connection to the control socket";
	r->caller_uid = who->uid;
	r->caller_gid = who->gid;
	r->caller_groups = who->groups;
	r->n_caller_groups = who->ngroups;
	if (who->uid != 0 && r->uid != who->uid)
		return "refused: a caller other than root runs its sandbox as itself";
	pw = getpwuid(r->uid);
	if (pw != NULL ? r->gid != pw->pw_gid : who->uid != 0 && r->gid != who->gid)
		return "refused: run_as's group is its primary group only";
	return NULL;
}

/* The CREATE_CA that follows every CREATE: read when the spec is about to
 * go (privop_on_ca), or after a create that failed before. */
static const char *
monitor_read_ca(void *arg, const char **why)
{
	struct monitor *mon = arg;
	struct pollfd p = { .fd = mon->fd, .events = POLLIN };
	const char *pem;
	int rc;

	if (!mon->ca_pending) {
		*why = "no CA follows this create";
		return NULL;
	}
	mon->ca_pending = false;
	seqmsg_clear(mon->ca);
	do {
		rc = poll(&p, 1, MONITOR_CA_TIMEOUT_MS);
	} while (rc == -1 && errno == EINTR);
	if (rc != 1)
		monitor_broken(mon, "a create whose CA did not follow");
	if ((rc = seqmsg_recv(mon->fd, mon->ca)) == 0)
		monitor_exit(mon, 0);
	if (rc != 1 || monitor_wire_text_decode(mon->ca, MONITOR_CREATE_CA, &pem, NULL) == -1 ||
	    strlen(pem) > MONITOR_CA_PEM_MAX_BYTES)
		monitor_broken(mon, "a create whose CA did not follow");
	if (pem[0] == '\0') {
		*why = "the create was given up (no CA)";
		return NULL;
	}
	return pem;
}

/* CREATE: builds the sandbox as the caller on the handed-over connection
 * may have it; answers BUILT with its descriptors, or FAILED. */
static void
monitor_answer_create(struct monitor *mon)
{
	struct monitor_wire_create *req = xmalloc(sizeof(*req));
	struct monitor_peer who;
	struct monitor_built b;
	const char *refusal, *ca_why;
	char *err = NULL;

	if (monitor_wire_create_decode(mon->in, req) == -1)
		monitor_broken(mon, "a malformed create request");
	mon->ca_pending = true;
	refusal = monitor_identify(req, mon->setup->socket_path, &who);
	if (refusal == NULL && mon->op == NULL)
		refusal = "sandboxes cannot be built here";
	else if (refusal != NULL && mon->op != NULL && req->req.warm)
		privop_warm_refused(mon->op, req->req.slot);
	else if (refusal == NULL && privop_create(mon->op, &req->req, &b, &err) == -1)
		refusal = err != NULL ? err : "the sandbox failed";
	if (refusal != NULL) {
		/* A CA that still follows is read first: answers keep order. */
		if (mon->ca_pending)
			(void)monitor_read_ca(mon, &ca_why);
		monitor_send_text(mon, MONITOR_FAILED, refusal);
	} else {
		monitor_wire_built_encode(mon->out, &b);
		monitor_send(mon);
		/* The broker has its copies now. */
		monitor_built_close(&b);
		monitor_grants_free(b.creds);
	}
	close(req->req.caller_fd);
	free(err);
	free(req);
}

/* DESTROY: tears a sandbox down (idempotent); answers DONE, "" or why. */
static void
monitor_answer_destroy(struct monitor *mon)
{
	const char *name;
	char *err = NULL;

	if (monitor_wire_text_decode(mon->in, MONITOR_DESTROY, &name, NULL) == -1)
		monitor_broken(mon, "a malformed destroy request");
	if (mon->op != NULL && privop_destroy(mon->op, name, &err) == -1)
		monitor_send_text(mon, MONITOR_DONE, err != NULL ? err : "teardown failed");
	else
		monitor_send_text(mon, MONITOR_DONE, "");
	free(err);
}

/* WARM: builds a warm sandbox in the slot given; answers DONE, "" or why. */
static void
monitor_answer_warm(struct monitor *mon)
{
	char *err = NULL;
	unsigned slot;

	if (monitor_wire_warm_decode(mon->in, &slot) == -1)
		monitor_broken(mon, "a malformed warm request");
	if (slot >= MONITOR_SLOTS_MAX)
		monitor_send_text(mon, MONITOR_DONE, "refused: not an address slot");
	else if (mon->op == NULL)
		monitor_send_text(mon, MONITOR_DONE, "sandboxes cannot be built here");
	else if (privop_warm(mon->op, slot, &err) == -1)
		monitor_send_text(mon, MONITOR_DONE, err != NULL ? err : "the warm sandbox failed");
	else
		monitor_send_text(mon, MONITOR_DONE, "");
	free(err);
}

struct monitor_names {
	const char *v[MONITOR_WIRE_LIVE_MAX];
	char *owned[MONITOR_WIRE_REAPED_MAX];
	size_t n;
};

static void
monitor_collect_live(const char *name, void *arg)
{
	struct monitor_names *names = arg;

	names->v[names->n++] = name;
}

static void
monitor_collect_removed(const char *what, void *arg)
{
	struct monitor_names *names = arg;

	if (names->n < MONITOR_WIRE_REAPED_MAX)
		names->owned[names->n++] = xstrdup(what);
}

/* REAP: removes what none of the live names owns; answers REAPED. */
static void
monitor_answer_reap(struct monitor *mon)
{
	struct monitor_names *live = xcalloc(1, sizeof(*live));
	struct monitor_names *gone = xcalloc(1, sizeof(*gone));
	uint32_t count = 0;

	if (monitor_wire_list_decode(mon->in, MONITOR_REAP, MONITOR_WIRE_LIVE_MAX, &count,
	    monitor_collect_live, live) == -1)
		monitor_broken(mon, "a malformed reap request");
	count = mon->op == NULL ? 0 : (uint32_t)privop_reap(mon->op, live->v, live->n,
	    monitor_collect_removed, gone);
	monitor_wire_list_encode(mon->out, MONITOR_REAPED, count,
	    (const char *const *)gone->owned, gone->n);
	monitor_send(mon);
	for (size_t i = 0; i < gone->n; i++)
		free(gone->owned[i]);
	free(live);
	free(gone);
}

/* OWNER: the owner of a path a root caller named. Opened by root, so this
 * tells nothing a root caller could not see; links are not followed. */
static void
monitor_answer_owner(struct monitor *mon)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct monitor_peer who;
	const char *path;
	struct stat st;
	int fd, conn = -1;

	if (monitor_wire_text_decode(mon->in, MONITOR_OWNER, &path, &conn) == -1 ||
	    path[0] != '/') {
		if (conn != -1)
			close(conn);
		monitor_broken(mon, "a malformed owner request");
	}
	/* Root's question only: the kernel says who is on that connection.
	 * A client may have gone since, so this is a refusal, not a breach. */
	if (monitor_peer(conn, mon->setup->socket_path, &who) == -1 || who.uid != 0) {
		close(conn);
		monitor_send_text(mon, MONITOR_FAILED, "refused: only root's requests may ask");
		return;
	}
	close(conn);
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd == -1 || fstat(fd, &st) == -1) {
		monitor_send_text(mon, MONITOR_FAILED, strerror(errno));
	} else {
		monitor_wire_owned_encode(mon->out, st.st_uid, st.st_gid);
		monitor_send(mon);
	}
	if (fd != -1)
		close(fd);
}

/* FIREWALL: does the host's firewall let the fence work? Listed and
 * judged now: an operator may have changed it since the start. */
static void
monitor_answer_firewall(struct monitor *mon)
{
	char line[MONITOR_FIREWALL_LINE_MAX_BYTES];
	const char *text;

	if (monitor_wire_text_decode(mon->in, MONITOR_FIREWALL, &text, NULL) == -1 ||
	    text[0] != '\0')
		monitor_broken(mon, "a malformed firewall request");
	if (mon->op == NULL)
		snprintf(line, sizeof(line), "unknown: the monitor is not set up");
	else
		privop_firewall(mon->op, line, sizeof(line));
	monitor_send_text(mon, MONITOR_FIREWALL_IS, line);
}

/* NETSOCK: a TCP socket in a sandbox's network, for corral forward: the
 * kernel names the caller on the handed-over connection, and only the
 * sandbox's creator or root gets one. */
static void
monitor_answer_netsock(struct monitor *mon)
{
	struct monitor_peer who;
	const char *name;
	char *err = NULL;
	int conn = -1, fd = -1;

	if (monitor_wire_text_decode(mon->in, MONITOR_NETSOCK, &name, &conn) == -1) {
		if (conn != -1)
			close(conn);
		monitor_broken(mon, "a malformed netsock request");
	}
	if (monitor_peer(conn, mon->setup->socket_path, &who) == -1)
		monitor_send_text(mon, MONITOR_FAILED,
		    "refused: that is not a connection to the control socket");
	else if (mon->op == NULL)
		monitor_send_text(mon, MONITOR_FAILED, "sandboxes are not served here");
	else if (privop_sandbox_socket(mon->op, name, who.uid, &fd, &err) == -1)
		monitor_send_text(mon, MONITOR_FAILED, err != NULL ? err : "no socket");
	else {
		monitor_wire_text_encode(mon->out, MONITOR_NETSOCK_IS, "", fd);
		monitor_send(mon);
		close(fd);
	}
	close(conn);
	free(err);
}

/* One request; anything but the seven requests ends the monitor. */
static void
monitor_dispatch(struct monitor *mon)
{
	switch (mon->in->type) {
	case MONITOR_CREATE:
		monitor_answer_create(mon);
		break;
	case MONITOR_DESTROY:
		monitor_answer_destroy(mon);
		break;
	case MONITOR_REAP:
		monitor_answer_reap(mon);
		break;
	case MONITOR_OWNER:
		monitor_answer_owner(mon);
		break;
	case MONITOR_FIREWALL:
		monitor_answer_firewall(mon);
		break;
	case MONITOR_NETSOCK:
		monitor_answer_netsock(mon);
		break;
	case MONITOR_WARM:
		monitor_answer_warm(mon);
		break;
	default:
		monitor_broken(mon, "a message that is not a monitor request");
	}
}

/* Sets up and says so in a HELLO: a failed set-up still answers (the
 * broker then serves host mode only and says why). */
static void
monitor_hello(struct monitor *mon)
{
	const struct monitor_setup *setup = mon->setup;
	struct monitor_hello h = { .map_fd = -1, .bypass_fd = -1 };
	const char *bypass_why;
	char *why = NULL;

	if ((mon->op = privop_new(setup, &why)) == NULL) {
		snprintf(h.why, sizeof(h.why), "%s", why != NULL ? why : "set-up failed");
	} else {
		h.sandboxes = true;
		snprintf(h.instance, sizeof(h.instance), "%s", privop_instance(mon->op));
		h.map_fd = privop_map_fd(mon->op);
		h.bypass_fd = privop_take_bypass_fd(mon->op, &bypass_why);
		snprintf(h.bypass_why, sizeof(h.bypass_why), "%s", bypass_why);
	}
	free(why);
	why = NULL;
	if (setup->host_cgroup != NULL && mon->op == NULL)
		snprintf(h.host_why, sizeof(h.host_why), "the monitor is not set up: %.400s", h.why);
	else if (setup->host_cgroup != NULL &&
	    privop_watch_host(mon->op, setup->host_cgroup, &why) == -1)
		snprintf(h.host_why, sizeof(h.host_why), "%s", why != NULL ? why : "failed");
	else
		h.host_watched = setup->host_cgroup != NULL;
	free(why);
	monitor_wire_hello_encode(mon->out, &h);
	monitor_send(mon);
	if (h.bypass_fd != -1)
		close(h.bypass_fd);     /* the broker's now: the monitor never reads it */
}

/* Closes every descriptor above 2 but A and B. */
static void
monitor_close_except(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a, from = 3;

	if (lo >= from) {
		if (lo > from)
			syscall(SYS_close_range, from, lo - 1, 0);
		from = lo + 1;
	}
	if (hi >= from && hi != lo) {
		if (hi > from)
			syscall(SYS_close_range, from, hi - 1, 0);
		from = hi + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

void
monitor_run(int fd, const struct monitor_setup *setup)
{
	/* It ends when the broker does, never on a signal meant for it. */
	static const int ignored[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE };
	struct monitor mon = { .fd = fd, .setup = setup };
	int rc;

	monitor_close_except(fd, setup->lock_fd);
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	prctl(PR_SET_NAME, MONITOR_PROCESS_NAME, 0, 0, 0);
	mon.in = xmalloc(sizeof(*mon.in));
	mon.out = xmalloc(sizeof(*mon.out));
	mon.ca = xmalloc(sizeof(*mon.ca));
	seqmsg_init(mon.in, 0);
	seqmsg_init(mon.out, 0);
	seqmsg_init(mon.ca, 0);
	monitor_hello(&mon);
	if (mon.op != NULL)
		privop_on_ca(mon.op, monitor_read_ca, &mon);
	opener_prepare();
	for (;;) {
		rc = seqmsg_recv(fd, mon.in);
		if (rc == 0)
			monitor_exit(&mon, 0);
		if (rc == -1 && errno == EBADMSG)
			monitor_broken(&mon, "a malformed message");
		if (rc == -1 && errno != EINTR)
			monitor_exit(&mon, 0);
		if (rc == 1)
			monitor_dispatch(&mon);
		seqmsg_clear(mon.in);
		/* Answered: the next create's opener is forked now, off its path. */
		opener_prepare();
	}
}
