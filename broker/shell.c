/* Persistent shells: corral-shell in the sandbox, driven through its link,
 * and each run's output pipe (shell.h, common/shellwire.h). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/daemon.h"
#include "broker/exec.h"
#include "broker/limitwatch.h"
#include "broker/metrics.h"
#include "broker/sandbox.h"
#include "broker/shell.h"
#include "broker/shellproto.h"
#include "common/log.h"
#include "common/seqmsg.h"
#include "common/shellwire.h"
#include "common/sock.h"
#include "common/xmalloc.h"
#include "egress-proxy/proxy.h"

#define SHELL_READ_CHUNK_BYTES (64 * 1024)      /* one read of an output pipe */
#define SHELL_READS_PER_EVENT 16                /* then the loop serves others */
#define SHELL_EXIT_SIGNALLED 128                /* a shell's status for signal N: 128 + N */
#define SHELL_SIGNAL_MAX 64
#define SHELL_EXIT_INTERRUPTED 130              /* what bash shows for SIGINT */
#define SHELL_ENV_MAX (SANDBOX_ENV_MAX + 8)
#define SHELL_PROGRAM "corral-shell"            /* in the runtime folder, beside corral-init */
#define SHELL_BUILTIN "corral-shell.so"
#define SHELL_PATH_MAX_BYTES 4096
#define SHELL_MSG_NUMS_MAX 4                    /* numbers in one message to the supervisor */

/* The shell's life; a run is in it only in SHELL_BUSY. */
enum shell_state {
	SHELL_DOWN,             /* no supervisor: the next run starts one */
	SHELL_STARTING,         /* started, its HELLO not yet come */
	SHELL_IDLE,             /* waiting for a run */
	SHELL_BUSY,             /* a run is in it */
};

/* How far an interrupt went. */
enum shell_stage {
	SHELL_STAGE_NONE,
	SHELL_STAGE_SIGINT,     /* SIGINT sent to the run's process group */
	SHELL_STAGE_SIGKILL,    /* then SIGKILL to that group */
	SHELL_STAGE_KILLED,     /* the supervisor itself killed, through corral-init */
};

/* A run's output pipe: read into the run while it is in the shell, then
 * into its late output until every writer has closed it. */
struct shell_pipe {
	struct shell_host *host;
	int fd;
	struct event *ev;
	uint64_t serial;        /* the run's (runtab_find_serial) */
	bool late;              /* the run has its result */
	uint64_t dropped;       /* late bytes whose run the table no longer holds */
	struct shell_pipe *next;
};

/* One datagram waiting for the link to take it. */
struct shell_out {
	size_t len;
	int fd;                         /* sent with it (a copy, closed then), or -1 */
	struct shell_out *next;
	uint8_t data[];
};

struct shell {
	struct shell_host *host;
	char *name;
	enum shell_state state;
	struct exec_proc *proc;         /* corral-shell */
	int link;                       /* our end of its fd 3 */
	struct event *link_ev;
	struct event *out_ev;           /* the link can take more */
	struct shell_out *out, **out_tail;
	struct seqmsg *msg;
	char **env;                     /* the environment it started with: the state's base */
	struct shellproto_state kept;   /* cwd and exported variables, across supervisors */
	char *why;                      /* what its FAILED said */
	struct run *run;                /* in the shell (SHELL_BUSY) */
	uint32_t run_no;                /* the link's number for it */
	pid_t run_pid;                  /* its shell, in the sandbox's pid namespace; 0: not known */
	uint32_t next_no;
	struct shell_pipe *pipe;        /* its output */
	bool last_dump_ok;              /* the last dump this supervisor sent was kept */
	struct run *queue[SHELL_QUEUE_MAX];
	size_t nqueue;
	struct event *timer;            /* start, run timeout, interrupt grace */
	enum shell_stage stage;
	bool timed_out;
	bool interrupted;               /* corral interrupt reached the run */
	uint64_t marks[2];              /* the sandbox's limit hits seen as the run began */
	struct shell *next;
};

struct shell_host {
	struct daemon *d;
	struct sandbox *sb;             /* valid only while shell_host_valid() */
	char *name;
	struct exec_channel *channel;   /* the sandbox's, when the host was made */
	struct runtab runs;
	struct shell *shells;
	struct shell_pipe *pipes;       /* newest first */
	size_t npipes;
	struct shell_host *next;
};

/* Every sandbox's shells; one daemon per process. */
static struct shell_host *shell_hosts;

static void shell_pump(struct shell *sh);
static void shell_host_free(struct shell_host *h, const char *why);
static void shell_teardown(struct shell *sh);

/* The sandbox is still the one the host was made for. Until sandbox.c
 * calls shell_sandbox_gone(), a deleted sandbox is noticed here, by its
 * name and channel, before anything of it is touched. */
static bool
shell_host_valid(const struct shell_host *h)
{
	struct sandbox *sb = sandbox_find(h->d, h->name);

	return sb != NULL && sb == h->sb && sb->channel == h->channel;
}

/* Frees the hosts whose sandbox is gone. */
static void
shell_hosts_sweep(void)
{
	struct shell_host *h = shell_hosts, *next;

	for (; h != NULL; h = next) {
		next = h->next;
		if (!shell_host_valid(h))
			shell_host_free(h, "the sandbox was deleted");
	}
}

struct shell_host *
shell_host_of(struct daemon *d, struct sandbox *sb, bool create)
{
	struct shell_host *h;

	shell_hosts_sweep();
	for (h = shell_hosts; h != NULL; h = h->next) {
		if (h->sb == sb)
			return h;
	}
	if (!create)
		return NULL;
	h = xcalloc(1, sizeof(*h));
	h->d = d;
	h->sb = sb;
	h->name = xstrdup(sb->name);
	h->channel = sb->channel;
	runtab_init(&h->runs);
	h->next = shell_hosts;
	shell_hosts = h;
	return h;
}

struct runtab *
shell_host_runs(struct shell_host *h)
{
	return &h->runs;
}

/* The folder the sandbox's commands start in, as `sandbox get` shows it. */
static const char *
shell_workdir(const struct sandbox *sb)
{
	if (sb->cwd[0] != '\0')
		return sb->cwd;
	return sb->nroots > 0 ? sb->roots[0] : sb->home;
}

/* ---- output pipes ---- */

static void
shell_pipe_free(struct shell_pipe *p)
{
	struct shell_pipe **pp;

	for (pp = &p->host->pipes; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			p->host->npipes--;
			break;
		}
	}
	if (p->dropped > 0)
		log_info("sandbox %s: %llu late output bytes of an acknowledged run dropped",
		    p->host->name, (unsigned long long)p->dropped);
	event_free(p->ev);
	close(p->fd);
	free(p);
}

/* Reads P: into its run's output, or its late output once it has a
 * result. -1 at end of file (every writer closed it). */
static int
shell_pipe_read(struct shell_pipe *p)
{
	uint8_t buf[SHELL_READ_CHUNK_BYTES];
	struct run *r;
	ssize_t got;

	for (int i = 0; i < SHELL_READS_PER_EVENT; i++) {
		got = read(p->fd, buf, sizeof(buf));
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (got <= 0)
			return -1;
		r = runtab_find_serial(&p->host->runs, p->serial);
		if (r == NULL)
			p->dropped += (uint64_t)got;
		else if (p->late)
			run_late_append(r, buf, (size_t)got);
		else
			run_output_append(r, buf, (size_t)got);
	}
	return 0;
}

static void
shell_on_pipe(evutil_socket_t fd, short what, void *arg)
{
	struct shell_pipe *p = arg;

	/* At end of file it stays readable for ever: it goes now. */
	if (shell_pipe_read(p) == -1) {
		for (struct shell *sh = p->host->shells; sh != NULL; sh = sh->next) {
			if (sh->pipe == p)
				sh->pipe = NULL;
		}
		shell_pipe_free(p);
	}
}

/* A new pipe FD (taken) for the run SERIAL of H; the oldest late one
 * goes when H holds too many. */
static struct shell_pipe *
shell_pipe_new(struct shell_host *h, int fd, uint64_t serial)
{
	struct shell_pipe *p = xcalloc(1, sizeof(*p)), *oldest = NULL;

	if (h->npipes >= SHELL_PIPES_MAX) {
		for (struct shell_pipe *q = h->pipes; q != NULL; q = q->next) {
			if (q->late)
				oldest = q;
		}
		if (oldest != NULL) {
			log_warnx("sandbox %s: %d output pipes open; the oldest run's is closed "
			    "(its writers get EPIPE)", h->name, SHELL_PIPES_MAX);
			shell_pipe_free(oldest);
		}
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	p->host = h;
	p->fd = fd;
	p->serial = serial;
	p->ev = event_new(h->d->base, fd, EV_READ | EV_PERSIST, shell_on_pipe, p);
	event_add(p->ev, NULL);
	p->next = h->pipes;
	h->pipes = p;
	h->npipes++;
	return p;
}

/* ---- the link ---- */

/* Sends DATA (LEN bytes) with FD (when not -1) as one datagram; -1 with
 * errno. */
static ssize_t
shell_send_now(int link, const void *data, size_t len, int fd)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)data, .iov_len = len };

	return sock_send_fd(link, &iov, 1, fd, MSG_DONTWAIT);
}

/* Sends the datagram DATA (LEN bytes) with FD (not taken; -1: none), or
 * queues it behind others. */
static void
shell_send(struct shell *sh, const void *data, size_t len, int fd)
{
	struct shell_out *o;

	if (sh->link == -1)
		return;
	if (sh->out == NULL) {
		if (shell_send_now(sh->link, data, len, fd) >= 0)
			return;
		if (errno != EAGAIN) {
			log_warnx("sandbox %s: shell %s: its link: %s", sh->host->name, sh->name,
			    strerror(errno));
			return;         /* its exit is near and ends the run */
		}
	}
	o = xmalloc(sizeof(*o) + len);
	o->len = len;
	o->fd = fd != -1 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	o->next = NULL;
	memcpy(o->data, data, len);
	*sh->out_tail = o;
	sh->out_tail = &o->next;
	event_add(sh->out_ev, NULL);
}

static void
shell_out_free(struct shell_out *o)
{
	if (o->fd != -1)
		close(o->fd);
	free(o);
}

static void
shell_out_clear(struct shell *sh)
{
	struct shell_out *o;

	while ((o = sh->out) != NULL) {
		sh->out = o->next;
		shell_out_free(o);
	}
	sh->out_tail = &sh->out;
}

static void
shell_on_writable(evutil_socket_t fd, short what, void *arg)
{
	struct shell *sh = arg;
	struct shell_out *o;

	while ((o = sh->out) != NULL) {
		if (shell_send_now(sh->link, o->data, o->len, o->fd) == -1 && errno == EAGAIN) {
			event_add(sh->out_ev, NULL);
			return;
		}
		sh->out = o->next;
		shell_out_free(o);
	}
	sh->out_tail = &sh->out;
}

/* Sends a message of TYPE: the N numbers NUMS, then TEXT (LEN bytes, its
 * NUL added) when it is not NULL, as seqmsg lays them out, and FD when it
 * is not -1. */
static void
shell_send_msg(struct shell *sh, enum shellwire_type type, const uint32_t *nums, size_t n,
    const char *text, size_t len, int fd)
{
	size_t words = 1 + n + (text != NULL ? 1 : 0), size = words * sizeof(uint32_t);
	uint8_t *buf = xmalloc(size + (text != NULL ? len + 1 : 0));
	uint32_t head[SHELL_MSG_NUMS_MAX + 2];

	if (n > SHELL_MSG_NUMS_MAX) {
		free(buf);
		return;
	}
	head[0] = (uint32_t)type;
	memcpy(head + 1, nums, n * sizeof(*nums));
	if (text != NULL)
		head[1 + n] = (uint32_t)len + 1;
	memcpy(buf, head, size);
	if (text != NULL) {
		memcpy(buf + size, text, len);
		buf[size + len] = '\0';
		size += len + 1;
	}
	shell_send(sh, buf, size, fd);
	free(buf);
}

/* ---- runs ---- */

/* How a run ended, besides its status. */
struct shell_end {
	bool timed_out;
	bool saved;
	bool respawned;
};

/* What ended the run in SH that ended with CODE or signal SIG, if not
 * itself: its timeout, an interrupt, or a limit of the sandbox hit while it
 * ran (the kernel's OOM kill ends a process with SIGKILL; a refused fork
 * fails what asked). Only a run that did not end well looks at the limits. */
static const char *
shell_ended_by(struct shell *sh, int code, int sig, bool timed_out)
{
	struct limitwatch *w = shell_host_valid(sh->host) ? sh->host->sb->limit_watch : NULL;

	if (timed_out)
		return "timeout";
	if (sh->interrupted)
		return "interrupt";
	/* The shell itself, or the command it waited for (bash exits 128 + 9). */
	if ((sig == SIGKILL || code == SHELL_EXIT_SIGNALLED + SIGKILL) &&
	    limitwatch_grew(w, LIMITWATCH_MEMORY, sh->marks[LIMITWATCH_MEMORY]))
		return limitwatch_reason(LIMITWATCH_MEMORY);
	if ((code != 0 || sig != 0) &&
	    limitwatch_grew(w, LIMITWATCH_PIDS, sh->marks[LIMITWATCH_PIDS]))
		return limitwatch_reason(LIMITWATCH_PIDS);
	return NULL;
}

/* Ends R with the kernel's word on it (CODE, or signal SIG when not 0). */
static void
shell_finish_run(struct shell *sh, struct run *r, int code, int sig, struct shell_end how)
{
	struct run_result res = { .exit_code = code, .timed_out = how.timed_out,
	    .respawned = how.respawned, .state_saved = how.saved,
	    .ended_by = shell_ended_by(sh, code, sig, how.timed_out) };

	if (sig > 0 && sig <= SHELL_SIGNAL_MAX) {
		res.signal = sig;
		res.exit_code = SHELL_EXIT_SIGNALLED + sig;
	}
	res.cwd = xstrdup(sh->kept.cwd != NULL ? sh->kept.cwd : shell_workdir(sh->host->sb));
	metrics_run_done(sh->host->d, how.timed_out ? "timed_out" : res.signal != 0 ? "signaled" :
	    "exited");
	run_finish(r, &res, NULL);
	runtab_trim(&sh->host->runs);
}

/* The run in the shell is over: its pipe goes on as late output. */
static struct run *
shell_run_out(struct shell *sh)
{
	struct run *r = sh->run;

	evtimer_del(sh->timer);
	if (sh->pipe != NULL) {
		/* Every byte it wrote before its exit is in the pipe now. */
		if (shell_pipe_read(sh->pipe) == -1)
			shell_pipe_free(sh->pipe);
		else
			sh->pipe->late = true;
	}
	sh->pipe = NULL;
	sh->run = NULL;
	sh->run_pid = 0;
	sh->stage = SHELL_STAGE_NONE;
	return r;
}

/* Ends every queued run with WHY. */
static void
shell_fail_queue(struct shell *sh, const char *why)
{
	while (sh->nqueue > 0) {
		struct run *r = sh->queue[0];

		memmove(sh->queue, sh->queue + 1, --sh->nqueue * sizeof(sh->queue[0]));
		run_finish(r, NULL, why);
	}
}

/* Kills a supervisor that is out of step or stuck; its exit ends the run. */
static void
shell_kill(struct shell *sh, const char *why)
{
	log_warnx("sandbox %s: shell %s: %s; killing it", sh->host->name, sh->name, why);
	sh->stage = SHELL_STAGE_KILLED;
	if (sh->proc == NULL || exec_kill(sh->proc, SIGKILL) == -1)
		log_warnx("sandbox %s: shell %s: cannot be signalled", sh->host->name, sh->name);
}

/* HELLO: the supervisor is up. */
static int
shell_on_hello(struct shell *sh, struct seqmsg *m)
{
	uint32_t version, mode, abi, flags;

	if (seqmsg_get_u32(m, &version) == -1 || seqmsg_get_u32(m, &mode) == -1 ||
	    seqmsg_get_u32(m, &abi) == -1 || seqmsg_get_u32(m, &flags) == -1 ||
	    seqmsg_get_end(m, 0) == -1 || sh->state != SHELL_STARTING ||
	    version != SHELLWIRE_VERSION || mode != SHELLWIRE_MODE_ZYGOTE)
		return -1;
	if (!(flags & SHELLWIRE_HELLO_SCOPED))
		log_info("sandbox %s: shell %s: Landlock ABI %u has no scopes: runs can signal "
		    "the shell's supervisor", sh->host->name, sh->name, abi);
	evtimer_del(sh->timer);
	sh->state = SHELL_IDLE;
	return 0;
}

/* The dump in the rest of M (its NUL-ended fields) is kept as the shell's
 * state when it reads strictly; -1 when M is malformed. */
static int
shell_take_dump(struct shell *sh, struct seqmsg *m, bool *kept)
{
	char *dump = xmalloc(SHELLWIRE_STATE_MAX_BYTES);
	size_t len = 0, n;
	const char *field;
	int rc = -1;

	while (m->off < m->len) {
		if (seqmsg_get_str(m, &field) == -1 ||
		    (n = strlen(field) + 1) > SHELLWIRE_STATE_MAX_BYTES - len)
			goto out;
		memcpy(dump + len, field, n);
		len += n;
	}
	rc = 0;
	*kept = shellproto_state_parse(dump, len, &sh->kept) == 0;
	if (!*kept)
		log_warnx("sandbox %s: shell %s: run %s: its state is malformed and was not kept",
		    sh->host->name, sh->name, sh->run->id);
out:
	free(dump);
	return rc;
}

/* EXITED: the kernel's word on the run's shell, and its dump; the run ends. */
static int
shell_on_run_exited(struct shell *sh, struct seqmsg *m)
{
	uint32_t no, how, code, dump;
	bool saved = false;
	struct run *r;

	if (seqmsg_get_u32(m, &no) == -1 || seqmsg_get_u32(m, &how) == -1 ||
	    seqmsg_get_u32(m, &code) == -1 || seqmsg_get_u32(m, &dump) == -1 ||
	    sh->run == NULL || no != sh->run_no || dump > SHELLWIRE_DUMP_SAME ||
	    how > SHELLWIRE_EXIT_SIGNAL || (how == SHELLWIRE_EXIT_CODE && code > 255) ||
	    (how == SHELLWIRE_EXIT_SIGNAL && (code == 0 || code > SHELL_SIGNAL_MAX)))
		return -1;
	if (dump == SHELLWIRE_DUMP_SENT && shell_take_dump(sh, m, &saved) == -1)
		return -1;
	if (seqmsg_get_end(m, 0) == -1)
		return -1;
	if (dump == SHELLWIRE_DUMP_SENT)
		sh->last_dump_ok = saved;
	else if (dump == SHELLWIRE_DUMP_SAME)
		saved = sh->last_dump_ok;       /* the state it gave is the state kept */
	else if (dump == SHELLWIRE_DUMP_TOO_BIG)
		log_info("sandbox %s: shell %s: run %s exported more than %d bytes; its state "
		    "was not kept", sh->host->name, sh->name, sh->run->id, SHELLWIRE_STATE_MAX_BYTES);
	r = shell_run_out(sh);
	sh->state = SHELL_IDLE;
	shell_finish_run(sh, r, how == SHELLWIRE_EXIT_CODE ? (int)code : 0,
	    how == SHELLWIRE_EXIT_SIGNAL ? (int)code : 0,
	    (struct shell_end){ .timed_out = sh->timed_out, .saved = saved });
	return 0;
}

/* STARTED: the pid of the run's shell, for the ledger's run field. */
static int
shell_on_started(struct shell *sh, struct seqmsg *m)
{
	uint32_t no, pid;

	if (seqmsg_get_u32(m, &no) == -1 || seqmsg_get_u32(m, &pid) == -1 ||
	    seqmsg_get_end(m, 0) == -1 || sh->run == NULL || no != sh->run_no || pid == 0 ||
	    pid > INT32_MAX)
		return -1;
	sh->run_pid = (pid_t)pid;
	return 0;
}

/* SB's shell host, found without sweeping the hosts of deleted
 * sandboxes: asked from inside the proxy's decision, which must not free
 * anything. */
static struct shell_host *
shell_host_find(const struct sandbox *sb)
{
	for (struct shell_host *h = shell_hosts; h != NULL; h = h->next)
		if (h->sb == sb && shell_host_valid(h))
			return h;
	return NULL;
}

bool
shell_sandbox_running(const struct sandbox *sb)
{
	const struct shell_host *h = shell_host_find(sb);

	for (struct shell *sh = h != NULL ? h->shells : NULL; sh != NULL; sh = sh->next)
		if (sh->run != NULL && sh->run_pid != 0)
			return true;
	return false;
}

const char *
shell_run_of(const struct sandbox *sb, pid_t pid)
{
	const struct shell_host *h = shell_host_find(sb);

	for (struct shell *sh = h != NULL ? h->shells : NULL; sh != NULL; sh = sh->next)
		if (sh->run != NULL && sh->run_pid != 0 && sh->run_pid == pid)
			return sh->run->id;
	return NULL;
}

/* FAILED: no process could be made for the run (0: for any run). */
static int
shell_on_failed(struct shell *sh, struct seqmsg *m)
{
	const char *why;
	uint32_t no;

	if (seqmsg_get_u32(m, &no) == -1 || seqmsg_get_str(m, &why) == -1 ||
	    seqmsg_get_end(m, 0) == -1)
		return -1;
	log_warnx("sandbox %s: shell %s: %s", sh->host->name, sh->name, why);
	if (no == 0) {
		free(sh->why);
		sh->why = xstrdup(why);
		return 0;       /* it exits: its exit fails what waits */
	}
	if (sh->run == NULL || no != sh->run_no)
		return -1;
	metrics_run_done(sh->host->d, "failed");
	run_finish(shell_run_out(sh), NULL, why);
	sh->state = SHELL_IDLE;
	return 0;
}

static int
shell_on_note(struct shell *sh, struct seqmsg *m)
{
	const char *text;

	if (seqmsg_get_str(m, &text) == -1 || seqmsg_get_end(m, 0) == -1)
		return -1;
	log_info("sandbox %s: shell %s: %s", sh->host->name, sh->name, text);
	return 0;
}

/* One message from the supervisor; -1 when it is out of step. */
static int
shell_dispatch(struct shell *sh, struct seqmsg *m)
{
	switch (m->type) {
	case SHELLWIRE_HELLO:
		return shell_on_hello(sh, m);
	case SHELLWIRE_EXITED:
		return shell_on_run_exited(sh, m);
	case SHELLWIRE_FAILED:
		return shell_on_failed(sh, m);
	case SHELLWIRE_NOTE:
		return shell_on_note(sh, m);
	case SHELLWIRE_STARTED:
		return shell_on_started(sh, m);
	default:
		return -1;
	}
}

/* Handles what the supervisor sent; -1 once its end closed or it is out
 * of step (then killed), and the link is read no more. */
static int
shell_link_drain(struct shell *sh)
{
	int n, rc;

	for (;;) {
		n = seqmsg_recv(sh->link, sh->msg);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n != 1) {
			/* Its end closed: its exit, through corral-init, ends
			 * the run. */
			event_del(sh->link_ev);
			return -1;
		}
		rc = shell_dispatch(sh, sh->msg);
		seqmsg_clear(sh->msg);
		if (rc == -1) {
			event_del(sh->link_ev);
			shell_kill(sh, "its link is out of step");
			return -1;
		}
	}
}

static void
shell_on_link(evutil_socket_t fd, short what, void *arg)
{
	struct shell *sh = arg;
	struct shell_host *h = sh->host;

	if (shell_link_drain(sh) == -1 && !shell_host_valid(h)) {
		shell_host_free(h, "the sandbox was deleted");
		return;
	}
	shell_pump(sh);
}

/* ---- the supervisor's life ---- */

/* Closes what the supervisor used; the shell is down after it. */
static void
shell_teardown(struct shell *sh)
{
	if (sh->proc != NULL)
		exec_kill(sh->proc, SIGKILL);
	exec_proc_free(sh->proc);
	sh->proc = NULL;
	if (sh->link_ev != NULL)
		event_free(sh->link_ev);
	if (sh->out_ev != NULL)
		event_free(sh->out_ev);
	sh->link_ev = sh->out_ev = NULL;
	shell_out_clear(sh);
	if (sh->link != -1)
		close(sh->link);
	sh->link = -1;
	exec_env_free(sh->env);
	sh->env = NULL;
	evtimer_del(sh->timer);
	sh->state = SHELL_DOWN;
	sh->stage = SHELL_STAGE_NONE;
}

static void
shell_free(struct shell *sh, const char *why)
{
	shell_teardown(sh);
	if (sh->run != NULL)
		run_finish(shell_run_out(sh), NULL, why);
	shell_fail_queue(sh, why);
	event_free(sh->timer);
	shellproto_state_clear(&sh->kept);
	free(sh->msg);
	free(sh->why);
	free(sh->name);
	free(sh);
}

static void
shell_host_free(struct shell_host *h, const char *why)
{
	struct shell_host **pp;
	struct shell *sh;

	for (pp = &shell_hosts; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	while ((sh = h->shells) != NULL) {
		h->shells = sh->next;
		shell_free(sh, why);
	}
	while (h->pipes != NULL)
		shell_pipe_free(h->pipes);
	runtab_clear(&h->runs);
	free(h->name);
	free(h);
}

void
shell_sandbox_gone(struct sandbox *sb)
{
	struct shell_host *h;

	for (h = shell_hosts; h != NULL; h = h->next) {
		if (h->sb == sb) {
			shell_host_free(h, "the sandbox was deleted");
			return;
		}
	}
}

static void
shell_on_proc_started(struct exec_proc *p, const char *why, void *arg)
{
	struct shell *sh = arg;

	if (why == NULL)
		return;
	log_warnx("sandbox %s: shell %s: %s", sh->host->name, sh->name, why);
	sh->proc = NULL;
	exec_proc_free(p);
	shell_teardown(sh);
	shell_fail_queue(sh, why);
}

/* The supervisor ended. A run still in it ends as given up: the result
 * says respawned, and the next run gets a new supervisor with the same
 * state. */
static void
shell_on_proc_exited(struct exec_proc *p, int code, void *arg)
{
	struct shell *sh = arg;
	bool starting = sh->state == SHELL_STARTING, killed = sh->stage == SHELL_STAGE_KILLED;
	struct run *r;
	char *why;

	/* What it said before it went. */
	if (sh->link_ev != NULL && event_pending(sh->link_ev, EV_READ, NULL))
		(void)shell_link_drain(sh);
	r = sh->run != NULL ? shell_run_out(sh) : NULL;
	shell_teardown(sh);
	if (r != NULL && code == -1)
		run_finish(r, NULL, "the sandbox ended");
	else if (r != NULL && killed)
		shell_finish_run(sh, r, 0, SIGKILL,
		    (struct shell_end){ .timed_out = sh->timed_out, .respawned = true });
	else if (r != NULL && sh->why != NULL)
		run_finish(r, NULL, sh->why);
	else if (r != NULL)
		run_finish(r, NULL, "the shell's supervisor ended before the run did; the run's "
		    "status is unknown (the next run starts a new one, with the same state)");
	if (starting || sh->why != NULL) {
		xasprintf(&why, "the shell could not start: %s", sh->why != NULL ? sh->why :
		    "corral-shell exited as it started");
		shell_fail_queue(sh, why);
		free(why);
		free(sh->why);
		sh->why = NULL;
	} else {
		shell_pump(sh);
	}
}

/* The environment of a shell: the sandbox's command environment, a dumb
 * terminal and no pager (nobody reads a pager's prompt). */
static char **
shell_env(const struct sandbox *sb)
{
	static const char *const fixed[] = { "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat",
	    "SYSTEMD_PAGER=", NULL };
	const char *extra[SHELL_ENV_MAX + 1];
	char gw[INET_ADDRSTRLEN];
	size_t n = 0;

	for (size_t i = 0; i < sb->nenv && i < SANDBOX_ENV_MAX; i++)
		extra[n++] = sb->env[i];
	for (size_t i = 0; fixed[i] != NULL; i++)
		extra[n++] = fixed[i];
	extra[n] = NULL;
	inet_ntop(AF_INET, &sb->gateway, gw, sizeof(gw));
	return exec_env_new(gw, sb->home, extra);
}

/* The environment corral-shell and its zygote start with: the shell's,
 * less what would make either load a file a run could write (shellproto.h);
 * runs get all of it, through the state, which starts as the whole. */
static char **
shell_zygote_env(struct shell *sh)
{
	char **full = shell_env(sh->host->sb), **env;
	size_t n = 0, k = 0;

	if (sh->kept.cwd == NULL && sh->kept.nenv == 0)
		shellproto_state_start(&sh->kept, (const char *const *)full);
	while (full[n] != NULL)
		n++;
	env = xcalloc(n + 1, sizeof(*env));
	for (size_t i = 0; i < n; i++) {
		if (shellproto_zygote_may_have(full[i]))
			env[k++] = full[i];
		else
			free(full[i]);
	}
	free(full);
	return env;
}

/* Starts corral-shell from the runtime folder; its fd 3 is our link. -1
 * with a reason in *WHY (malloc'd) when it cannot be sent. */
static int
shell_spawn(struct shell *sh, char **why_out)
{
	static const struct exec_callbacks cb = { shell_on_proc_started, shell_on_proc_exited };
	struct timeval limit = { SHELL_START_TIMEOUT_S, 0 };
	const char *runtime = sh->host->d->runtime_dir;
	char prog[SHELL_PATH_MAX_BYTES], so[SHELL_PATH_MAX_BYTES], *why = NULL;
	const char *argv[] = { prog, so, NULL };
	struct exec_request er = { .argv = argv, .extra_fd = -1 };
	int sp[2];

	if (runtime == NULL) {
		*why_out = xstrdup("corral-shell is in a folder sandboxes cannot see (below one "
		    "they have their own of, such as /tmp): install corral, or run corrald from "
		    "a build folder elsewhere");
		return -1;
	}
	snprintf(prog, sizeof(prog), "%s/%s", runtime, SHELL_PROGRAM);
	snprintf(so, sizeof(so), "%s/%s", runtime, SHELL_BUILTIN);
	/* Only the broker's end is non-blocking: the supervisor's blocks, so
	 * what it sends is never lost to EAGAIN. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1) {
		xasprintf(why_out, "socketpair: %s", strerror(errno));
		return -1;
	}
	if (fcntl(sp[0], F_SETFL, fcntl(sp[0], F_GETFL) | O_NONBLOCK) == -1) {
		xasprintf(why_out, "fcntl: %s", strerror(errno));
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	sh->env = shell_zygote_env(sh);
	er.envp = (const char *const *)sh->env;
	er.extra_fd = sp[1];
	sh->proc = exec_start(sh->host->sb->channel, &er, &cb, sh, &why);
	close(sp[1]);
	if (sh->proc == NULL) {
		*why_out = why;
		close(sp[0]);
		exec_env_free(sh->env);
		sh->env = NULL;
		return -1;
	}
	/* Nothing is read from it: it writes nothing there. */
	exec_close_stdin(sh->proc);
	sh->link = sp[0];
	sh->link_ev = event_new(sh->host->d->base, sh->link, EV_READ | EV_PERSIST, shell_on_link, sh);
	sh->out_ev = event_new(sh->host->d->base, sh->link, EV_WRITE, shell_on_writable, sh);
	event_add(sh->link_ev, NULL);
	sh->state = SHELL_STARTING;
	sh->timed_out = false;
	sh->last_dump_ok = false;
	evtimer_add(sh->timer, &limit);
	return 0;
}

/* Sends R's script to the idle shell (the state applied, then its text)
 * with the write end of a new pipe for its output, whose read end is ours. */
static void
shell_begin(struct shell *sh, struct run *r)
{
	struct timeval limit = { r->timeout_s, 0 };
	uint32_t nums[2];
	size_t len, at, n;
	char *script;
	int out[2];

	script = shellproto_script(&sh->kept, (const char *const *)sh->env,
	    shell_workdir(sh->host->sb), r->command, &len);
	if (script == NULL || len > SHELLWIRE_SCRIPT_MAX_BYTES) {
		free(script);
		run_finish(r, NULL, "the run's script is too large for its shell (the command "
		    "and the exported variables it starts with)");
		return;
	}
	if (pipe2(out, O_CLOEXEC) == -1) {
		free(script);
		run_finish(r, NULL, "no pipe could be made for the run's output");
		return;
	}
	sh->timed_out = false;
	sh->interrupted = false;
	sh->marks[LIMITWATCH_MEMORY] = limitwatch_seen(sh->host->sb->limit_watch, LIMITWATCH_MEMORY);
	sh->marks[LIMITWATCH_PIDS] = limitwatch_seen(sh->host->sb->limit_watch, LIMITWATCH_PIDS);
	sh->stage = SHELL_STAGE_NONE;
	sh->run = r;
	sh->run_no = ++sh->next_no != 0 ? sh->next_no : ++sh->next_no;
	sh->pipe = shell_pipe_new(sh->host, out[0], r->serial);
	r->state = RUN_RUNNING;
	sh->state = SHELL_BUSY;
	n = len < SHELLWIRE_CHUNK_MAX_BYTES ? len : SHELLWIRE_CHUNK_MAX_BYTES;
	nums[0] = sh->run_no;
	nums[1] = (uint32_t)len;
	shell_send_msg(sh, SHELLWIRE_RUN, nums, 2, script, n, out[1]);
	close(out[1]);
	for (at = n; at < len; at += n) {
		n = len - at < SHELLWIRE_CHUNK_MAX_BYTES ? len - at : SHELLWIRE_CHUNK_MAX_BYTES;
		shell_send_msg(sh, SHELLWIRE_MORE, nums, 1, script + at, n, -1);
	}
	free(script);
	evtimer_add(sh->timer, &limit);
}

/* Starts the next queued run, or the supervisor it needs. */
static void
shell_pump(struct shell *sh)
{
	char *why = NULL, *msg;
	struct run *r;

	while (sh->nqueue > 0) {
		if (sh->state == SHELL_DOWN && shell_spawn(sh, &why) == -1) {
			xasprintf(&msg, "the shell cannot be started in this sandbox: %s", why);
			log_warnx("sandbox %s: shell %s: %s", sh->host->name, sh->name, why);
			shell_fail_queue(sh, msg);
			free(msg);
			free(why);
			return;
		}
		if (sh->state != SHELL_IDLE)
			return;
		r = sh->queue[0];
		memmove(sh->queue, sh->queue + 1, --sh->nqueue * sizeof(sh->queue[0]));
		shell_begin(sh, r);
	}
}

/* SIG to the run's process group, then a wait of GRACE_S at STAGE. */
static void
shell_signal_run(struct shell *sh, uint32_t sig, enum shell_stage stage, int grace_s)
{
	struct timeval grace = { grace_s, 0 };
	uint32_t nums[2] = { sh->run_no, sig };

	sh->stage = stage;
	shell_send_msg(sh, SHELLWIRE_SIGNAL, nums, 2, NULL, 0, -1);
	evtimer_add(sh->timer, &grace);
}

/* Not even killing the supervisor ended the run: it is given up. */
static void
shell_give_up(struct shell *sh)
{
	struct run *r = shell_run_out(sh);

	shell_teardown(sh);
	shell_finish_run(sh, r, 0, SIGKILL,
	    (struct shell_end){ .timed_out = sh->timed_out, .respawned = true });
	shell_pump(sh);
}

/* A lifecycle record of SH's sandbox about run R (corral-ledger(5)):
 * WHAT is run_timeout or run_interrupted. The run goes on ending whether
 * the ledger takes it or not: the record says why, it decides nothing. */
static void
shell_record(struct shell *sh, const struct run *r, const char *what)
{
	struct shell_host *h = sh->host;

	if (r != NULL && shell_host_valid(h) && h->sb->tenant != NULL)
		(void)proxy_tenant_record_lifecycle(h->sb->tenant, what, r->id);
}

/* The run timeout, a step of the interrupt, or a start that never answered. */
static void
shell_on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct shell *sh = arg;
	struct timeval grace = { SHELL_KILL_GRACE_S, 0 };

	if (sh->state == SHELL_STARTING) {
		shell_kill(sh, "it did not answer as it started");
		return;
	}
	if (sh->state != SHELL_BUSY)
		return;
	switch (sh->stage) {
	case SHELL_STAGE_NONE:
		sh->timed_out = true;
		shell_record(sh, sh->run, "run_timeout");
		shell_signal_run(sh, SIGINT, SHELL_STAGE_SIGINT, SHELL_INTERRUPT_GRACE_S);
		break;
	case SHELL_STAGE_SIGINT:
		shell_signal_run(sh, SIGKILL, SHELL_STAGE_SIGKILL, SHELL_KILL_JOB_GRACE_S);
		break;
	case SHELL_STAGE_SIGKILL:
		/* The run's shell outlived SIGKILL (a read that cannot be
		 * interrupted): the supervisor goes, and the next run gets a
		 * new one with the same state. */
		shell_kill(sh, "the run outlived SIGINT and SIGKILL");
		evtimer_add(sh->timer, &grace);
		break;
	case SHELL_STAGE_KILLED:
		shell_give_up(sh);
		break;
	}
}

static struct shell *
shell_find(struct shell_host *h, const char *name, size_t *count)
{
	struct shell *sh;

	*count = 0;
	for (sh = h->shells; sh != NULL; sh = sh->next, (*count)++) {
		if (strcmp(sh->name, name) == 0)
			return sh;
	}
	return NULL;
}

static struct shell *
shell_new(struct shell_host *h, const char *name)
{
	struct shell *sh = xcalloc(1, sizeof(*sh));

	sh->host = h;
	sh->name = xstrdup(name);
	sh->link = -1;
	sh->out_tail = &sh->out;
	sh->msg = xmalloc(sizeof(*sh->msg));
	seqmsg_init(sh->msg, 0);
	shellproto_state_init(&sh->kept);
	sh->timer = evtimer_new(h->d->base, shell_on_timer, sh);
	sh->next = h->shells;
	h->shells = sh;
	return sh;
}

int
shell_submit(struct shell_host *h, struct run *r, char **why)
{
	size_t count;
	struct shell *sh = shell_find(h, r->shell, &count);

	if (sh == NULL && count >= SHELL_PER_SANDBOX_MAX) {
		xasprintf(why, "sandbox %s already has %d shells (the limit); use one of them "
		    "with --shell", h->name, SHELL_PER_SANDBOX_MAX);
		return -1;
	}
	if (sh == NULL)
		sh = shell_new(h, r->shell);
	if (sh->nqueue == SHELL_QUEUE_MAX) {
		xasprintf(why, "shell %s of sandbox %s already has %d runs waiting (the limit); "
		    "wait for them or use another --shell", sh->name, h->name, SHELL_QUEUE_MAX);
		return -1;
	}
	sh->queue[sh->nqueue++] = r;
	shell_pump(sh);
	return 0;
}

void
shell_interrupt(struct shell_host *h, struct run *r)
{
	size_t count, i;
	struct shell *sh = shell_find(h, r->shell, &count);

	if (sh == NULL || r->state == RUN_DONE)
		return;
	shell_record(sh, r, "run_interrupted");
	if (sh->run == r) {
		sh->interrupted = true;
		if (sh->stage == SHELL_STAGE_NONE)
			shell_signal_run(sh, SIGINT, SHELL_STAGE_SIGINT, SHELL_INTERRUPT_GRACE_S);
		return;
	}
	for (i = 0; i < sh->nqueue && sh->queue[i] != r; i++)
		;
	if (i == sh->nqueue)
		return;
	memmove(sh->queue + i, sh->queue + i + 1, (sh->nqueue - i - 1) * sizeof(sh->queue[0]));
	sh->nqueue--;
	shell_finish_run(sh, r, SHELL_EXIT_INTERRUPTED, 0, (struct shell_end){ 0 });
}
