/* The daemon's side of the exec channel: commands out, their start and
 * exit back, dispatched from the libevent loop. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/exec.h"
#include "common/initproto.h"
#include "common/xmalloc.h"

#define EXEC_MASTER_TO_COME (-2)        /* tty mode: the pty master comes with STARTED */
struct exec_proc {
	struct exec_channel *ch;        /* NULL once the channel is gone */
	struct exec_proc *next;
	uint32_t id;
	pid_t pid;
	bool started;
	bool fsop;                      /* a file operation: told when the channel is freed */
	int in, out, errfd;             /* pipes mode: our ends */
	int master;                     /* tty mode, after started */
	struct exec_callbacks cb;
	void *arg;
};

struct exec_channel {
	int fd;
	struct event *ev;
	struct exec_proc *procs;        /* every proc not yet freed */
	uint32_t next_id;
	bool lost;
	void (*lost_cb)(void *arg);
	void *arg;
	struct seqmsg *msg;      /* the message being read */
	struct seqmsg *out;      /* the command being sent */
	exec_unix_fn unix_cb;           /* corral-init's Unix socket reports, or NULL */
	void *unix_arg;
};

static struct exec_proc *
exec_find(struct exec_channel *ch, uint32_t id)
{
	struct exec_proc *p;

	for (p = ch->procs; p != NULL; p = p->next) {
		if (p->id == id)
			return p;
	}
	return NULL;
}

/* Takes P off its channel's list. */
static void
exec_unlink(struct exec_proc *p)
{
	struct exec_proc **pp;

	if (p->ch == NULL)
		return;
	for (pp = &p->ch->procs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	p->ch = NULL;
}

/* STARTED: id, pid, and the master in tty mode. */
static int
exec_on_started(struct exec_channel *ch, struct seqmsg *m)
{
	struct exec_proc *p;
	uint32_t id, pid;

	if (seqmsg_get_u32(m, &id) == -1 || seqmsg_get_u32(m, &pid) == -1)
		return -1;
	p = exec_find(ch, id);
	if (p == NULL || p->started || seqmsg_get_end(m, p->master == EXEC_MASTER_TO_COME ? 1 : 0) == -1)
		return p == NULL ? 0 : -1;
	p->started = true;
	p->pid = (pid_t)pid;
	if (p->master == EXEC_MASTER_TO_COME)
		p->master = seqmsg_take_fd(m, 0);
	if (p->cb.started != NULL)
		p->cb.started(p, NULL, p->arg);
	return 0;
}

/* FAILED: id, why. The proc hears nothing after it. */
static int
exec_on_failed(struct exec_channel *ch, struct seqmsg *m)
{
	struct exec_proc *p;
	const char *why;
	uint32_t id;

	if (seqmsg_get_u32(m, &id) == -1 || seqmsg_get_str(m, &why) == -1 ||
	    seqmsg_get_end(m, 0) == -1)
		return -1;
	p = exec_find(ch, id);
	if (p == NULL)
		return 0;
	if (p->started)
		return -1;
	exec_unlink(p);
	if (p->cb.started != NULL)
		p->cb.started(p, why, p->arg);
	return 0;
}

/* EXITED: id, code. */
static int
exec_on_exited(struct exec_channel *ch, struct seqmsg *m)
{
	struct exec_proc *p;
	uint32_t id, code;

	if (seqmsg_get_u32(m, &id) == -1 || seqmsg_get_u32(m, &code) == -1 ||
	    seqmsg_get_end(m, 0) == -1)
		return -1;
	p = exec_find(ch, id);
	if (p == NULL)
		return 0;
	if (!p->started)
		return -1;
	exec_unlink(p);
	if (p->cb.exited != NULL)
		p->cb.exited(p, (int)code, p->arg);
	return 0;
}

/* UNIX: a Unix socket connect corral-init refused or made to a listed
 * socket, for the owner's ledger; its pidfd is closed after. */
static int
exec_on_unix(struct exec_channel *ch, struct seqmsg *m)
{
	struct initproto_unix u;

	if (initproto_unix_decode(m, &u) == -1)
		return -1;
	if (ch->unix_cb != NULL)
		ch->unix_cb(&u, ch->unix_arg);
	if (u.pidfd != -1)
		close(u.pidfd);
	return 0;
}

void
exec_channel_on_unix(struct exec_channel *ch, exec_unix_fn fn, void *arg)
{
	ch->unix_cb = fn;
	ch->unix_arg = arg;
}

/* The channel is gone: every proc hears it once, then the owner. */
static void
exec_lose(struct exec_channel *ch)
{
	struct exec_proc *p;

	ch->lost = true;
	event_del(ch->ev);
	while ((p = ch->procs) != NULL) {
		exec_unlink(p);
		if (p->started && p->cb.exited != NULL)
			p->cb.exited(p, -1, p->arg);
		else if (!p->started && p->cb.started != NULL)
			p->cb.started(p, "the sandbox ended", p->arg);
	}
	if (ch->lost_cb != NULL)
		ch->lost_cb(ch->arg);
}

/* Reads what corral-init sent; anything malformed loses the channel. */
static void
exec_on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct exec_channel *ch = arg;
	int n, rc;

	while (!ch->lost) {
		n = seqmsg_recv((int)fd, ch->msg);
		if (n == -1 && errno == EAGAIN)
			return;
		if (n != 1) {
			exec_lose(ch);
			return;
		}
		switch (ch->msg->type) {
		case INITPROTO_STARTED:
			rc = exec_on_started(ch, ch->msg);
			break;
		case INITPROTO_FAILED:
			rc = exec_on_failed(ch, ch->msg);
			break;
		case INITPROTO_EXITED:
			rc = exec_on_exited(ch, ch->msg);
			break;
		case INITPROTO_UNIX:
			rc = exec_on_unix(ch, ch->msg);
			break;
		default:
			rc = -1;
		}
		seqmsg_clear(ch->msg);
		if (rc == -1) {
			exec_lose(ch);
			return;
		}
	}
}

struct exec_channel *
exec_channel_new(struct event_base *base, int fd, void (*lost)(void *arg), void *arg)
{
	struct exec_channel *ch = xcalloc(1, sizeof(*ch));

	ch->fd = fd;
	ch->lost_cb = lost;
	ch->arg = arg;
	ch->next_id = 1;
	ch->msg = xmalloc(sizeof(*ch->msg));
	ch->out = xmalloc(sizeof(*ch->out));
	seqmsg_init(ch->msg, 0);
	evutil_make_socket_nonblocking(fd);
	ch->ev = event_new(base, fd, EV_READ | EV_PERSIST, exec_on_readable, ch);
	if (ch->ev == NULL || event_add(ch->ev, NULL) == -1) {
		exec_channel_free(ch);
		return NULL;
	}
	return ch;
}

void
exec_channel_free(struct exec_channel *ch)
{
	struct exec_proc *p;

	if (ch == NULL)
		return;
	while ((p = ch->procs) != NULL) {
		exec_unlink(p);
		/* A file operation has no stream its owner could end: it hears
		 * that the sandbox went, once, as when corral-init is lost. */
		if (p->fsop && p->started && p->cb.exited != NULL)
			p->cb.exited(p, -1, p->arg);
		else if (p->fsop && !p->started && p->cb.started != NULL)
			p->cb.started(p, "the sandbox ended", p->arg);
	}
	if (ch->ev != NULL)
		event_free(ch->ev);
	close(ch->fd);
	free(ch->msg);
	free(ch->out);
	free(ch);
}

/* Three pipes: the child's ends in CHILD, ours (non-blocking) in P. */
static int
exec_pipes(struct exec_proc *p, int child[3])
{
	int fds[3][2], i;

	for (i = 0; i < 3; i++) {
		if (pipe2(fds[i], O_CLOEXEC) == -1) {
			while (i-- > 0) {
				close(fds[i][0]);
				close(fds[i][1]);
			}
			return -1;
		}
	}
	child[0] = fds[0][0];
	p->in = fds[0][1];
	child[1] = fds[1][1];
	p->out = fds[1][0];
	child[2] = fds[2][1];
	p->errfd = fds[2][0];
	for (i = 0; i < 3; i++)
		fcntl(i == 0 ? p->in : i == 1 ? p->out : p->errfd, F_SETFL, O_NONBLOCK);
	return 0;
}

/* Fills E from REQ for proc P; the caller sets E's descriptors. */
static int
exec_fill(struct initproto_exec *e, const struct exec_request *req, const struct exec_proc *p)
{
	e->id = p->id;
	e->tty = req->tty;
	e->rows = req->rows;
	e->cols = req->cols;
	e->cwd = req->cwd != NULL ? req->cwd : "";
	/* A request built with designated initialisers and no extra_fd holds
	 * 0: the daemon's own stdio never goes to a command. */
	e->extra_fd = req->extra_fd > STDERR_FILENO ? req->extra_fd : -1;
	for (e->argc = 0; req->argv[e->argc] != NULL; e->argc++) {
		if (e->argc == INITPROTO_ARGS_MAX)
			return -1;
		e->argv[e->argc] = req->argv[e->argc];
	}
	for (e->envc = 0; req->envp[e->envc] != NULL; e->envc++) {
		if (e->envc == INITPROTO_ENV_MAX)
			return -1;
		e->envp[e->envc] = req->envp[e->envc];
	}
	return e->argc == 0 ? -1 : 0;
}

/* Encodes and sends the command of P; -1 with a reason in *ERR. */
static int
exec_send(struct exec_proc *p, const struct exec_request *req, char **err)
{
	struct initproto_exec *e = xcalloc(1, sizeof(*e));
	int child[3] = { -1, -1, -1 }, i, rc = -1;

	if (exec_fill(e, req, p) == -1) {
		xasprintf(err, "the command needs 1 to %d arguments and at most %d "
		    "environment entries", INITPROTO_ARGS_MAX, INITPROTO_ENV_MAX);
		goto out;
	}
	if (!req->tty && exec_pipes(p, child) == -1) {
		xasprintf(err, "pipe: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < 3; i++)
		e->stdio[i] = child[i];
	/* The descriptors are attached, not owned: closed below. */
	initproto_exec_encode(p->ch->out, e);
	if (seqmsg_send(p->ch->fd, p->ch->out) == -1)
		xasprintf(err, "sending the command to corral-init: %s", strerror(errno));
	else
		rc = 0;
out:
	/* corral-init has its copies; ours of the child's ends must go, or
	 * the command's output would never end. */
	for (i = 0; i < 3; i++) {
		if (child[i] != -1)
			close(child[i]);
	}
	free(e);
	return rc;
}

/* A new proc on CH with no descriptors yet; NULL when the channel is gone. */
static struct exec_proc *
exec_proc_new(struct exec_channel *ch, const struct exec_callbacks *cb, void *arg, char **err)
{
	struct exec_proc *p;

	if (ch->lost) {
		*err = xstrdup("the sandbox has ended");
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->ch = ch;
	p->id = ch->next_id++;
	p->pid = -1;
	p->in = p->out = p->errfd = -1;
	p->master = -1;
	p->cb = *cb;
	p->arg = arg;
	return p;
}

/* Puts P on its channel's list once sent (RC 0), else frees it. */
static struct exec_proc *
exec_proc_sent(struct exec_proc *p, int rc)
{
	if (rc == -1) {
		p->ch = NULL;
		exec_proc_free(p);
		return NULL;
	}
	p->next = p->ch->procs;
	p->ch->procs = p;
	return p;
}

struct exec_proc *
exec_start(struct exec_channel *ch, const struct exec_request *req,
    const struct exec_callbacks *cb, void *arg, char **err)
{
	struct exec_proc *p = exec_proc_new(ch, cb, arg, err);

	if (p == NULL)
		return NULL;
	p->master = req->tty ? EXEC_MASTER_TO_COME : -1;
	return exec_proc_sent(p, exec_send(p, req, err));
}

struct exec_proc *
exec_fsop_start(struct exec_channel *ch, const struct exec_fsop_request *req,
    const struct exec_callbacks *cb, void *arg, char **err)
{
	struct initproto_fsop f = { .op = req->op, .path = req->path,
		.pattern = req->pattern != NULL ? req->pattern : "",
		.out_fd = req->out_fd, .in_fd = req->in_fd };
	struct exec_proc *p = exec_proc_new(ch, cb, arg, err);
	int rc = 0;

	if (p == NULL)
		return NULL;
	p->fsop = true;
	f.id = p->id;
	/* The descriptors are attached, not owned: the caller closes them. */
	initproto_fsop_encode(ch->out, &f);
	if (seqmsg_send(ch->fd, ch->out) == -1) {
		xasprintf(err, "sending the file operation to corral-init: %s", strerror(errno));
		rc = -1;
	}
	return exec_proc_sent(p, rc);
}

pid_t
exec_pid(const struct exec_proc *p)
{
	return p->pid;
}

int
exec_stdin(const struct exec_proc *p)
{
	return p->in;
}

int
exec_stdout(const struct exec_proc *p)
{
	return p->out;
}

int
exec_stderr(const struct exec_proc *p)
{
	return p->errfd;
}

int
exec_tty(const struct exec_proc *p)
{
	return p->master >= 0 ? p->master : -1;
}

void
exec_close_stdin(struct exec_proc *p)
{
	if (p->in != -1)
		close(p->in);
	p->in = -1;
}

int
exec_resize(struct exec_proc *p, unsigned int rows, unsigned int cols)
{
	struct winsize ws = { .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };

	if (p->master < 0) {
		errno = ENOTTY;
		return -1;
	}
	return ioctl(p->master, TIOCSWINSZ, &ws);
}

int
exec_kill(struct exec_proc *p, int sig)
{
	if (p->ch == NULL || p->ch->lost || !p->started) {
		errno = ESRCH;
		return -1;
	}
	return initproto_send_nums(p->ch->fd, INITPROTO_KILL, p->id, (uint32_t)sig, -1);
}

void
exec_proc_free(struct exec_proc *p)
{
	if (p == NULL)
		return;
	exec_unlink(p);
	exec_close_stdin(p);
	if (p->out != -1)
		close(p->out);
	if (p->errfd != -1)
		close(p->errfd);
	if (p->master >= 0)
		close(p->master);
	free(p);
}

/* Where tools look for their trust bundle, each: OpenSSL and Python's
 * ssl, requests, node (added to its own), git, curl, pip, cargo, the AWS
 * tools. */
static const char *const exec_ca_vars[] = { "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE",
	"NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "CURL_CA_BUNDLE", "PIP_CERT", "CARGO_HTTP_CAINFO",
	"AWS_CA_BUNDLE" };

char **
exec_env_new(const char *gateway, const char *home, const char *const *extra)
{
	static const char *const proxy_vars[] = { "HTTPS_PROXY", "https_proxy",
		"HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy" };
	char **env;
	size_t i, n = 0, n_extra = 0;
	bool v6 = strchr(gateway, ':') != NULL;

	while (extra != NULL && extra[n_extra] != NULL)
		n_extra++;
	env = xcalloc(EXEC_ENV_BASE_MAX + n_extra + 1, sizeof(*env));
	for (i = 0; i < sizeof(proxy_vars) / sizeof(proxy_vars[0]); i++)
		xasprintf(&env[n++], "%s=http://%s%s%s:%d", proxy_vars[i], v6 ? "[" : "",
		    gateway, v6 ? "]" : "", GATEWAY_CONNECT_PORT);
	env[n++] = xstrdup("NO_PROXY=localhost,127.0.0.1,::1");
	env[n++] = xstrdup("no_proxy=localhost,127.0.0.1,::1");
	xasprintf(&env[n++], "HOME=%s", home);
	env[n++] = xstrdup("PATH=" EXEC_PATH);
	env[n++] = xstrdup("LANG=C.UTF-8");
	/* The trust bundle inside (the system's and the sandbox's CA), for
	 * the tools that read a variable rather than the system's path. */
	for (i = 0; i < sizeof(exec_ca_vars) / sizeof(exec_ca_vars[0]); i++)
		xasprintf(&env[n++], "%s=%s", exec_ca_vars[i], INITPROTO_CA_BUNDLE_PATH);
	for (i = 0; i < n_extra; i++)
		env[n++] = xstrdup(extra[i]);
	return env;
}

void
exec_env_free(char **env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}
