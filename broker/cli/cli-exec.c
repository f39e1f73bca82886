/* corral exec: one command in a sandbox. Our stdin goes to it as
 * ExecSandboxInput frames, its stdout and stderr come back as
 * ExecSandboxEvent frames, and its exit status becomes ours. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "broker/cli/cli.h"
#include "broker/cli/cli-map.h"
#include "broker/cli/client.h"
#include "common/buf.h"
#include "common/frame.h"
#include "common/wire.h"

#define CLI_EXEC_CHUNK_BYTES (64 * 1024)        /* one read from the socket or stdin */
#define CLI_EXEC_QUEUE_MAX_BYTES (FRAME_HEADER_BYTES + FRAME_MAX_BYTES) /* frames not yet sent */
#define CLI_EXEC_EXIT_MASK 0xff                 /* what of an exit code a parent sees */
#define CLI_EXEC_WHY_BYTES 512

/* What `corral exec` was asked for; req points into the other fields. */

struct cli_exec_args {
	Corral__ExecSandboxRequest req;
	struct cli_map env;
};

/* One exec stream, from the start frame to the exit event. */
struct cli_exec {
	int sock;                       /* the connection to corrald */
	struct frame_decoder *dec;      /* reassembles the daemon's frames */
	struct buf *queue;              /* packed frames waiting to be sent */
	bool stdin_open;                /* our stdin is still copied to the command */
	bool send_broken;               /* the daemon stopped reading: send nothing more */
	int sigfd;                      /* SIGWINCH and ending signals with --tty, else -1 */
	bool done;                      /* an exit or error event came, or the stream failed */
	int status;                     /* our exit status once done */
};

/* The terminal's settings before raw mode, restored on every way out. */
static struct termios cli_exec_saved_tty;
static bool cli_exec_raw;

/* Ending signals that must restore the terminal before they end us. */
static const int cli_exec_end_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void
cli_exec_restore_tty(void)
{
	if (cli_exec_raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &cli_exec_saved_tty);
	cli_exec_raw = false;
}

/* Puts the local terminal in raw mode, so keys (^C too) reach the command. */
static void
cli_exec_raw_tty(void)
{
	struct termios raw;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &cli_exec_saved_tty) == -1)
		return;
	raw = cli_exec_saved_tty;
	cfmakeraw(&raw);
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0)
		cli_exec_raw = true;
}

/* Blocks SIGWINCH and the ending signals and reads them from a signalfd, so
 * the loop handles them: a resize frame, or the terminal restored first. */
static int
cli_exec_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGWINCH);
	for (size_t i = 0; i < sizeof(cli_exec_end_signals) / sizeof(int); i++)
		sigaddset(&set, cli_exec_end_signals[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		return -1;
	/* Output to a closed terminal is an error to report, not a silent death in raw mode. */
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Ends us with SIG as if it had never been blocked, after restoring the terminal. */
static int
cli_exec_die(int sig)
{
	sigset_t set;

	cli_exec_restore_tty();
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return 128 + sig;
}

/* Packs MSG behind a frame header at the end of the send queue. */
static int
cli_exec_queue(struct cli_exec *x, const ProtobufCMessage *msg)
{
	uint8_t *frame;
	size_t len;
	int rc;

	if (x->send_broken)
		return 0;
	if ((frame = wire_pack(msg, &len)) == NULL)
		return cli_fail("the request is too large to send (at most %zu bytes)",
		    FRAME_MAX_BYTES);
	rc = buf_append(x->queue, frame, len);
	free(frame);
	return rc == 0 ? 0 : cli_fail("too much input waiting to be sent to corrald");
}

static int
cli_exec_queue_stdin(struct cli_exec *x, uint8_t *data, size_t len)
{
	Corral__ExecSandboxInput in = CORRAL__EXEC_SANDBOX_INPUT__INIT;

	in.payload_case = CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD_STDIN;
	in.stdin.data = data;
	in.stdin.len = len;
	return cli_exec_queue(x, &in.base);
}

/* Queues the local terminal's size; nothing when stdin is not a terminal. */
static int
cli_exec_queue_resize(struct cli_exec *x)
{
	Corral__ExecSandboxInput in = CORRAL__EXEC_SANDBOX_INPUT__INIT;
	Corral__WindowResize size = CORRAL__WINDOW_RESIZE__INIT;
	struct winsize ws;

	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == -1 || ws.ws_col == 0)
		return 0;
	size.cols = ws.ws_col;
	size.rows = ws.ws_row;
	in.payload_case = CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD_RESIZE;
	in.resize = &size;
	return cli_exec_queue(x, &in.base);
}

/* Ends the stream with STATUS. */
static void
cli_exec_finish(struct cli_exec *x, int status)
{
	x->done = true;
	x->status = status;
}

/* Sends what the queue holds, as much as the socket takes now. */
static void
cli_exec_flush(struct cli_exec *x)
{
	ssize_t n = send(x->sock, buf_data(x->queue), buf_len(x->queue),
	    MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n > 0) {
		buf_consume(x->queue, (size_t)n);
	} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
		/* Keep reading: an error event may say why the daemon stopped listening. */
		x->send_broken = true;
		x->stdin_open = false;
		buf_reset(x->queue);
	}
}

/* Copies one read of our stdin to the command; at end of file an empty
 * stdin frame closes the command's stdin. */
static void
cli_exec_stdin(struct cli_exec *x)
{
	uint8_t chunk[CLI_EXEC_CHUNK_BYTES];
	ssize_t n = read(STDIN_FILENO, chunk, sizeof(chunk));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0)
		x->stdin_open = false;
	if (cli_exec_queue_stdin(x, chunk, n > 0 ? (size_t)n : 0) != 0)
		cli_exec_finish(x, CLI_EXIT_FAILED);
}

/* Writes all LEN bytes at DATA to FD (our stdout or stderr). */
static int
cli_exec_write_all(int fd, const uint8_t *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes one output event to our stdout or stderr. */
static void
cli_exec_output(struct cli_exec *x, int fd, const Corral__Output *o)
{
	if (cli_exec_write_all(fd, o->data.data, o->data.len) == -1) {
		cli_exec_restore_tty();
		cli_exec_finish(x, cli_fail("writing the command's output failed: %s",
		    strerror(errno)));
	}
}

/* Acts on one event frame: output written out, or the stream's end. */
static void
cli_exec_event(struct cli_exec *x, const uint8_t *payload, size_t len)
{
	const char *why = NULL;
	Corral__ExecSandboxEvent *ev = wire_exec_event_unpack(payload, len, &why);

	if (ev == NULL) {
		cli_exec_restore_tty();
		cli_exec_finish(x, cli_fail("corrald sent a frame that is not an exec event: %s",
		    why != NULL ? why : "unreadable"));
		return;
	}
	switch (ev->payload_case) {
	case CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDOUT:
		cli_exec_output(x, STDOUT_FILENO, ev->stdout);
		break;
	case CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDERR:
		cli_exec_output(x, STDERR_FILENO, ev->stderr);
		break;
	case CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_EXIT:
		/* A limit that ended it is said, as a shell says "Killed". */
		if (ev->exit->ended_by[0] != '\0' && !ev->exit->timed_out)
			fprintf(stderr, "corral: exec: ended by the sandbox's %s\n",
			    strcmp(ev->exit->ended_by, "memory_limit") == 0 ?
			    "memory limit (out-of-memory kill)" : strcmp(ev->exit->ended_by,
			    "pids_limit") == 0 ? "pids limit (a fork was refused)" :
			    cli_text(ev->exit->ended_by));
		/* As timeout(1) reports the end it made. */
		cli_exec_finish(x, ev->exit->timed_out ? CLI_EXIT_TIMEOUT :
		    ev->exit->exit_code & CLI_EXEC_EXIT_MASK);
		break;
	case CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_ERROR:
		cli_exec_restore_tty();
		cli_exec_finish(x, cli_error(ev->error->code, "%s", ev->error->message));
		break;
	default:
		cli_exec_finish(x, cli_fail("corrald sent an exec event this corral does not know"));
		break;
	}
	corral__exec_sandbox_event__free_unpacked(ev, NULL);
}

/* Feeds N received bytes to the decoder and acts on each whole frame. */
static void
cli_exec_feed(struct cli_exec *x, const uint8_t *data, size_t n)
{
	const uint8_t *payload;
	enum frame_status st;
	size_t used, len;

	while (n > 0 && !x->done) {
		st = frame_decoder_feed(x->dec, data, n, &used);
		data += used;
		n -= used;
		if (st == FRAME_READY) {
			payload = frame_decoder_payload(x->dec, &len);
			cli_exec_event(x, payload, len);
			frame_decoder_next(x->dec);
		} else if (st != FRAME_NEED_MORE) {
			cli_exec_restore_tty();
			cli_exec_finish(x, cli_fail("corrald sent a bad frame: %s",
			    frame_decoder_error(x->dec)));
		}
	}
}

static void
cli_exec_receive(struct cli_exec *x)
{
	uint8_t chunk[CLI_EXEC_CHUNK_BYTES];
	ssize_t n = recv(x->sock, chunk, sizeof(chunk), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		cli_exec_restore_tty();
		cli_exec_finish(x, cli_fail("connection to corrald lost"));
		return;
	}
	cli_exec_feed(x, chunk, (size_t)n);
}

/* Handles the signals read from the signalfd. */
static void
cli_exec_signal(struct cli_exec *x)
{
	struct signalfd_siginfo si;

	while (read(x->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo != SIGWINCH)
			cli_exec_finish(x, cli_exec_die((int)si.ssi_signo));
		else if (cli_exec_queue_resize(x) != 0)
			cli_exec_finish(x, CLI_EXIT_FAILED);
	}
}

/* Runs the stream until the exit event, an error event, or a lost connection. */
static int
cli_exec_loop(struct cli_exec *x)
{
	struct pollfd p[3];

	while (!x->done) {
		bool pending = buf_len(x->queue) > 0;

		p[0] = (struct pollfd){ .fd = x->sock, .events = POLLIN | (pending ? POLLOUT : 0) };
		/* Back-pressure: no more stdin is read while a frame waits to be sent. */
		p[1] = (struct pollfd){ .fd = x->stdin_open && !pending ? STDIN_FILENO : -1,
		    .events = POLLIN };
		p[2] = (struct pollfd){ .fd = x->sigfd, .events = POLLIN };
		if (poll(p, 3, -1) == -1) {
			if (errno != EINTR)
				cli_exec_finish(x, cli_fail("poll: %s", strerror(errno)));
			continue;
		}
		if (p[2].revents != 0)
			cli_exec_signal(x);
		if (!x->done && (p[0].revents & POLLOUT))
			cli_exec_flush(x);
		if (!x->done && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			cli_exec_receive(x);
		if (!x->done && p[1].revents != 0)
			cli_exec_stdin(x);
	}
	return x->status;
}

/* Parses --timeout S: whole seconds, 0 for none. */
static int
cli_exec_parse_timeout(const char *text, uint32_t *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || v > UINT32_MAX)
		return cli_fail("--timeout %s: expected whole seconds (0: none)", text);
	*out = (uint32_t)v;
	return 0;
}

/* Parses NAME [options] -- CMD...: the command is whatever follows the
 * first "--", so none of its words is ever taken for an option of ours. */
static int
cli_exec_parse(int argc, char **argv, struct cli_exec_args *a)
{
	static const struct option opts[] = {
		{ "workdir", required_argument, NULL, 'w' },
		{ "env", required_argument, NULL, 'e' },
		{ "timeout", required_argument, NULL, 't' },
		{ "tty", no_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	int dashes = 1, opt, rc = 0;

	while (dashes < argc && strcmp(argv[dashes], "--") != 0)
		dashes++;
	if (dashes >= argc - 1)
		return cli_usage(cli_find("exec"));
	while (rc == 0 && (opt = getopt_long(dashes, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'w': a->req.workdir = optarg; break;
		case 'e': rc = cli_map_add(&a->env, optarg, "--env"); break;
		case 't': rc = cli_exec_parse_timeout(optarg, &a->req.timeout_seconds); break;
		case 'T': a->req.tty = 1; break;
		default: return cli_usage(cli_find("exec"));
		}
	}
	if (rc != 0)
		return rc;
	if (dashes - optind != 1)
		return cli_usage(cli_find("exec"));
	a->req.sandbox_id = argv[optind];
	a->req.command = argv + dashes + 1;
	a->req.n_command = (size_t)(argc - dashes - 1);
	a->req.environment = cli_map_entries(&a->env);
	a->req.n_environment = a->env.n;
	return cli_check_name(a->req.sandbox_id);
}

/* Connects and queues the start (and, with a terminal, its size). */
static int
cli_exec_start(struct cli *cli, struct cli_exec *x, Corral__ExecSandboxRequest *start)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	char why[CLI_EXEC_WHY_BYTES];
	int rc;

	if ((x->sock = client_connect(cli->socket_path, why, sizeof(why))) == -1)
		return cli_unreachable(why);
	req.request_case = CORRAL__REQUEST__REQUEST_EXEC_START;
	req.exec_start = start;
	if ((rc = cli_exec_queue(x, &req.base)) != 0 || !start->tty)
		return rc;
	if ((x->sigfd = cli_exec_signals()) == -1)
		return cli_fail("signalfd: %s", strerror(errno));
	cli_exec_raw_tty();
	return cli_exec_queue_resize(x);
}

int
cli_exec(struct cli *cli, int argc, char **argv)
{
	struct cli_exec_args a = { .req = CORRAL__EXEC_SANDBOX_REQUEST__INIT };
	struct cli_exec x = { .sock = -1, .sigfd = -1, .stdin_open = true };
	int rc;

	cli_map_init(&a.env, &corral__exec_sandbox_request__environment_entry__descriptor);
	if ((rc = cli_exec_parse(argc, argv, &a)) != 0)
		goto out;
	x.dec = frame_decoder_new();
	x.queue = buf_new(CLI_EXEC_QUEUE_MAX_BYTES);
	if (x.dec == NULL || x.queue == NULL)
		rc = cli_fail("out of memory");
	else if ((rc = cli_exec_start(cli, &x, &a.req)) == 0)
		rc = cli_exec_loop(&x);
	cli_exec_restore_tty();
out:
	if (x.sock != -1)
		close(x.sock);
	if (x.sigfd != -1)
		close(x.sigfd);
	frame_decoder_free(x.dec);
	buf_free(x.queue);
	cli_map_clear(&a.env);
	return cli_command_status(rc);
}
