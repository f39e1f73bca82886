/* Persistent shells: bash on the sandbox's own pty, driven through a
 * socket it takes as its fd 0 (shell.h, shellproto.h). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "broker/daemon.h"
#include "broker/exec.h"
#include "broker/sandbox.h"
#include "broker/shell.h"
#include "broker/shellproto.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "common/xmalloc.h"

#define SHELL_READ_CHUNK_BYTES (64 * 1024)      /* one read of the terminal */
#define SHELL_READS_PER_EVENT 16                /* then the loop serves others */
#define SHELL_SIGNAL_MAX 64
#define SHELL_EXIT_INTERRUPTED 130              /* what bash shows for SIGINT */
#define SHELL_ENV_MAX (SANDBOX_ENV_MAX + 8)

/* The shell's life; a run is in it only in SHELL_BUSY. */
enum shell_state {
	SHELL_DOWN,             /* no bash: the next run starts one */
	SHELL_STARTING,         /* bash started, its first marker not yet seen */
	SHELL_IDLE,             /* waiting for a run */
	SHELL_BUSY,             /* a run's command is in it */
};

/* How far an interrupt went. */
enum shell_stage {
	SHELL_STAGE_NONE,
	SHELL_STAGE_SIGINT,     /* SIGINT sent to the foreground group */
	SHELL_STAGE_SIGKILL,    /* then SIGKILL to that group, through corral-init */
	SHELL_STAGE_KILLED,     /* the shell itself killed */
};

struct shell {
	struct shell_host *host;
	char *name;
	enum shell_state state;
	struct exec_proc *proc;
	struct bufferevent *ctl;        /* our end of bash's fd 0 */
	int master;                     /* the terminal (owned by proc) */
	struct event *tty_ev;
	char nonce[SHELLPROTO_NONCE_BYTES + 1];
	struct shellproto_marker marker;
	bool have_status;
	struct shellproto_status status;
	struct run *run;                /* in the shell (SHELL_BUSY) */
	struct run *queue[SHELL_QUEUE_MAX];
	size_t nqueue;
	struct event *timer;            /* start, run timeout, interrupt grace */
	struct event *settle;           /* the marker's wait after the status */
	enum shell_stage stage;
	bool timed_out;
	struct shell *next;
};

struct shell_host {
	struct daemon *d;
	struct sandbox *sb;             /* valid only while shell_host_valid() */
	char *name;
	struct exec_channel *channel;   /* the sandbox's, when the host was made */
	struct runtab runs;
	struct shell *shells;
	struct shell_host *next;
};

/* Every sandbox's shells; one daemon per process. */
static struct shell_host *shell_hosts;

static void shell_pump(struct shell *sh);
static void shell_host_free(struct shell_host *h, const char *why);

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

static void
shell_new_nonce(char nonce[SHELLPROTO_NONCE_BYTES + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t raw[SHELLPROTO_NONCE_BYTES / 2];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		fatal("%s: getrandom failed", __func__);
	for (size_t i = 0; i < sizeof(raw); i++) {
		nonce[2 * i] = hex[raw[i] >> 4];
		nonce[2 * i + 1] = hex[raw[i] & 15];
	}
	nonce[SHELLPROTO_NONCE_BYTES] = '\0';
}

/* Ends R with STATUS as bash reported it. */
static void
shell_finish_run(struct shell_host *h, struct run *r, int code, const char *cwd,
    bool timed_out, bool respawned)
{
	struct run_result res = { .exit_code = code, .timed_out = timed_out,
	    .respawned = respawned };

	if (code > 128 && code <= 128 + SHELL_SIGNAL_MAX)
		res.signal = code - 128;
	res.cwd = cwd != NULL ? xstrdup(cwd) : NULL;
	run_finish(r, &res, NULL);
	runtab_trim(&h->runs);
}

/* Closes what the running bash used; the shell is down after it. */
static void
shell_teardown(struct shell *sh)
{
	if (sh->proc != NULL)
		exec_kill(sh->proc, SIGKILL);
	if (sh->tty_ev != NULL)
		event_free(sh->tty_ev);
	sh->tty_ev = NULL;
	if (sh->ctl != NULL)
		bufferevent_free(sh->ctl);
	sh->ctl = NULL;
	exec_proc_free(sh->proc);
	sh->proc = NULL;
	sh->master = -1;
	evtimer_del(sh->timer);
	evtimer_del(sh->settle);
	sh->state = SHELL_DOWN;
	sh->stage = SHELL_STAGE_NONE;
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

static void
shell_free(struct shell *sh, const char *why)
{
	shell_teardown(sh);
	if (sh->run != NULL)
		run_finish(sh->run, NULL, why);
	shell_fail_queue(sh, why);
	event_free(sh->timer);
	event_free(sh->settle);
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

/* The run in the shell has its status and the end of its output. */
static void
shell_run_done(struct shell *sh)
{
	struct run *r = sh->run;

	evtimer_del(sh->timer);
	evtimer_del(sh->settle);
	sh->run = NULL;
	sh->state = SHELL_IDLE;
	sh->stage = SHELL_STAGE_NONE;
	shell_finish_run(sh->host, r, sh->status.code, sh->status.cwd, sh->timed_out, false);
	shell_pump(sh);
}

/* Both halves of a marker (status and output end) decide what comes next. */
static void
shell_check(struct shell *sh)
{
	struct timeval wait = { 0, SHELL_MARKER_WAIT_MS * 1000 };

	if (!sh->have_status)
		return;
	if (!sh->marker.found) {
		/* The status is in; the terminal's last bytes may lag behind. */
		if (!evtimer_pending(sh->settle, NULL))
			evtimer_add(sh->settle, &wait);
		return;
	}
	if (sh->state == SHELL_STARTING) {
		evtimer_del(sh->timer);
		evtimer_del(sh->settle);
		sh->state = SHELL_IDLE;
		shell_pump(sh);
	} else if (sh->state == SHELL_BUSY) {
		shell_run_done(sh);
	}
}

static void
shell_on_settle(evutil_socket_t fd, short what, void *arg)
{
	struct shell *sh = arg;

	sh->marker.found = true;
	shell_check(sh);
}

/* Reads the terminal: the run's output up to the marker; anything else
 * (bash's start-up, a background job's late lines) is dropped. */
static int
shell_read_tty(struct shell *sh)
{
	uint8_t in[SHELL_READ_CHUNK_BYTES], out[SHELL_READ_CHUNK_BYTES + SHELLPROTO_MARKER_MAX_BYTES];
	size_t at, n, olen;
	ssize_t got;

	for (int i = 0; i < SHELL_READS_PER_EVENT && sh->master != -1; i++) {
		got = read(sh->master, in, sizeof(in));
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (got <= 0)
			return -1;      /* EIO: every process holding the terminal is gone */
		for (at = 0; at < (size_t)got && !sh->marker.found; at += n) {
			n = shellproto_marker_feed(&sh->marker, in + at, (size_t)got - at, out, &olen);
			if (sh->state == SHELL_BUSY && sh->run != NULL)
				run_output_append(sh->run, out, olen);
		}
	}
	return 0;
}

static void
shell_on_tty(evutil_socket_t fd, short what, void *arg)
{
	struct shell *sh = arg;
	struct shell_host *h = sh->host;

	if (shell_read_tty(sh) == -1) {
		event_del(sh->tty_ev);
		if (!shell_host_valid(h)) {
			shell_host_free(h, "the sandbox was deleted");
			return;
		}
	}
	shell_check(sh);
}

/* Kills a shell that is out of step or stuck; its exit ends the run. */
static void
shell_kill(struct shell *sh, const char *why)
{
	log_warnx("sandbox %s: shell %s: %s; killing it", sh->host->name, sh->name, why);
	sh->stage = SHELL_STAGE_KILLED;
	if (sh->proc == NULL || exec_kill(sh->proc, SIGKILL) == -1)
		log_warnx("sandbox %s: shell %s: cannot be signalled", sh->host->name, sh->name);
}

/* The status records bash writes to its fd 0. */
static void
shell_on_ctl_read(struct bufferevent *bev, void *arg)
{
	struct shell *sh = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len = evbuffer_get_length(in), used;
	const uint8_t *data;
	int rc;

	if (len > SHELLPROTO_STATUS_MAX_BYTES + 64)
		len = SHELLPROTO_STATUS_MAX_BYTES + 64;
	data = evbuffer_pullup(in, (ssize_t)len);
	rc = shellproto_status_parse(data, len, &sh->status, &used);
	if (rc == 0)
		return;
	if (rc == -1 || sh->have_status || strcmp(sh->status.nonce, sh->nonce) != 0) {
		evbuffer_drain(in, evbuffer_get_length(in));
		shell_kill(sh, "its status record is out of step");
		return;
	}
	evbuffer_drain(in, used);
	sh->have_status = true;
	shell_check(sh);
}

static void
shell_on_ctl_event(struct bufferevent *bev, short what, void *arg)
{
	struct shell *sh = arg;
	struct shell_host *h = sh->host;

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	bufferevent_disable(bev, EV_READ);
	if (!shell_host_valid(h))
		shell_host_free(h, "the sandbox was deleted");
}

static void
shell_on_started(struct exec_proc *p, const char *why, void *arg)
{
	struct shell *sh = arg;
	struct termios tio;

	if (why != NULL) {
		log_warnx("sandbox %s: shell %s: %s", sh->host->name, sh->name, why);
		sh->proc = NULL;
		exec_proc_free(p);
		shell_teardown(sh);
		shell_fail_queue(sh, why);
		return;
	}
	sh->master = exec_tty(p);
	fcntl(sh->master, F_SETFL, fcntl(sh->master, F_GETFL) | O_NONBLOCK);
	/* No output processing: the run's "\n" stays "\n", not "\r\n". */
	if (tcgetattr(sh->master, &tio) == 0) {
		tio.c_oflag &= ~(tcflag_t)OPOST;
		tcsetattr(sh->master, TCSANOW, &tio);
	}
	sh->tty_ev = event_new(sh->host->d->base, sh->master, EV_READ | EV_PERSIST, shell_on_tty, sh);
	event_add(sh->tty_ev, NULL);
}

/* Bash ended: a run in it ends with bash's own status, and says respawned. */
static void
shell_on_exited(struct exec_proc *p, int code, void *arg)
{
	struct shell *sh = arg;
	struct shell_host *h = sh->host;
	struct run *r = sh->run;
	bool starting = sh->state == SHELL_STARTING, timed_out = sh->timed_out;

	if (sh->master != -1)
		(void)shell_read_tty(sh);       /* its last words */
	sh->run = NULL;
	shell_teardown(sh);
	if (r != NULL && code == -1)
		run_finish(r, NULL, "the sandbox ended");
	else if (r != NULL)
		shell_finish_run(h, r, code, NULL, timed_out, true);
	if (starting)
		shell_fail_queue(sh, "the shell exited as it started");
	else
		shell_pump(sh);
}

/* The environment of a shell: the sandbox's command environment, a dumb
 * terminal and no pager (nobody reads a pager's prompt). */
static char **
shell_env(const struct sandbox *sb)
{
	static const char *const fixed[] = { "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat",
	    "SYSTEMD_PAGER=", "PS1=", NULL };
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

/* Starts bash. Its fd 3 (our socket) becomes its fd 0, where it reads
 * commands and writes status records; the terminal is its 1 and 2. */
static int
shell_spawn(struct shell *sh)
{
	static const struct exec_callbacks cb = { shell_on_started, shell_on_exited };
	static const char *const argv[] = { "bash", "--noprofile", "--norc", "-c",
	    "exec bash --noprofile --norc --noediting -i 0<&3 3<&-", NULL };
	struct timeval limit = { SHELL_START_TIMEOUT_S, 0 };
	struct exec_request er = { .argv = argv, .tty = true, .rows = SHELL_ROWS,
	    .cols = SHELL_COLS, .extra_fd = -1 };
	char **env = shell_env(sh->host->sb), *why = NULL, *script;
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sp) == -1) {
		exec_env_free(env);
		log_error("%s: socketpair: %s", __func__, strerror(errno));
		return -1;
	}
	er.envp = (const char *const *)env;
	er.extra_fd = sp[1];
	sh->proc = exec_start(sh->host->sb->channel, &er, &cb, sh, &why);
	exec_env_free(env);
	close(sp[1]);
	if (sh->proc == NULL) {
		log_warnx("sandbox %s: shell %s: %s", sh->host->name, sh->name, why);
		free(why);
		close(sp[0]);
		return -1;
	}
	sh->ctl = bufferevent_socket_new(sh->host->d->base, sp[0], BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(sh->ctl, shell_on_ctl_read, NULL, shell_on_ctl_event, sh);
	bufferevent_enable(sh->ctl, EV_READ | EV_WRITE);
	shell_new_nonce(sh->nonce);
	shellproto_marker_init(&sh->marker, sh->nonce);
	sh->have_status = false;
	script = shellproto_init_script(sh->nonce);
	bufferevent_write(sh->ctl, script, strlen(script));
	free(script);
	sh->state = SHELL_STARTING;
	sh->timed_out = false;
	evtimer_add(sh->timer, &limit);
	return 0;
}

/* Sends R's command to the idle shell. */
static void
shell_begin(struct shell *sh, struct run *r)
{
	struct timeval limit = { r->timeout_s, 0 };
	size_t len;
	char *line;

	shell_new_nonce(sh->nonce);
	shellproto_marker_init(&sh->marker, sh->nonce);
	sh->have_status = false;
	sh->timed_out = false;
	sh->stage = SHELL_STAGE_NONE;
	sh->run = r;
	r->state = RUN_RUNNING;
	sh->state = SHELL_BUSY;
	line = shellproto_run_line(sh->nonce, r->command, strlen(r->command), &len);
	bufferevent_write(sh->ctl, line, len);
	free(line);
	evtimer_add(sh->timer, &limit);
}

/* Starts the next queued run, or the shell it needs. */
static void
shell_pump(struct shell *sh)
{
	struct run *r;

	if (sh->nqueue == 0)
		return;
	if (sh->state == SHELL_DOWN && shell_spawn(sh) == -1) {
		shell_fail_queue(sh, "the shell cannot be started in this sandbox");
		return;
	}
	if (sh->state != SHELL_IDLE)
		return;
	r = sh->queue[0];
	memmove(sh->queue, sh->queue + 1, --sh->nqueue * sizeof(sh->queue[0]));
	shell_begin(sh, r);
}

/* SIG to the terminal's foreground process group, then a wait of GRACE_S
 * at STAGE. TIOCSIG on the master needs no permission over the processes
 * (they run as run_as, the broker does not), and it only takes SIGINT,
 * SIGQUIT and SIGTSTP. */
static void
shell_signal_foreground(struct shell *sh, int sig, enum shell_stage stage, int grace_s)
{
	struct timeval grace = { grace_s, 0 };

	sh->stage = stage;
	if (sh->master == -1 || ioctl(sh->master, TIOCSIG, sig) == -1)
		log_error("sandbox %s: shell %s: TIOCSIG: %s", sh->host->name, sh->name,
		    strerror(errno));
	evtimer_add(sh->timer, &grace);
}

/* SIGKILL to the foreground job: only corral-init may signal run_as's
 * processes (a terminal passes SIGINT, never SIGKILL). */
static void
shell_kill_foreground(struct shell *sh)
{
	struct timeval grace = { SHELL_KILL_JOB_GRACE_S, 0 };

	sh->stage = SHELL_STAGE_SIGKILL;
	if (sh->proc == NULL || exec_kill_foreground(sh->proc, SIGKILL) == -1)
		log_error("sandbox %s: shell %s: cannot kill its foreground job: %s",
		    sh->host->name, sh->name, strerror(errno));
	evtimer_add(sh->timer, &grace);
}

/* Not even killing the shell ended the run: it is given up. */
static void
shell_give_up(struct shell *sh)
{
	struct shell_host *h = sh->host;
	struct run *r = sh->run;
	bool timed_out = sh->timed_out;

	sh->run = NULL;
	shell_teardown(sh);
	shell_finish_run(h, r, 128 + SIGKILL, NULL, timed_out, true);
	shell_pump(sh);
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
		shell_signal_foreground(sh, SIGINT, SHELL_STAGE_SIGINT, SHELL_INTERRUPT_GRACE_S);
		break;
	case SHELL_STAGE_SIGINT:
		shell_kill_foreground(sh);
		break;
	case SHELL_STAGE_SIGKILL:
		/* The job survived SIGKILL (it left the foreground, or stopped
		 * the shell from reading): the shell goes, and its terminal's
		 * hangup takes the job with it. */
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
	sh->master = -1;
	sh->timer = evtimer_new(h->d->base, shell_on_timer, sh);
	sh->settle = evtimer_new(h->d->base, shell_on_settle, sh);
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
	if (sh->run == r) {
		if (sh->stage == SHELL_STAGE_NONE)
			shell_signal_foreground(sh, SIGINT, SHELL_STAGE_SIGINT,
			    SHELL_INTERRUPT_GRACE_S);
		return;
	}
	for (i = 0; i < sh->nqueue && sh->queue[i] != r; i++)
		;
	if (i == sh->nqueue)
		return;
	memmove(sh->queue + i, sh->queue + i + 1, (sh->nqueue - i - 1) * sizeof(sh->queue[0]));
	sh->nqueue--;
	shell_finish_run(h, r, SHELL_EXIT_INTERRUPTED, NULL, false, false);
}
