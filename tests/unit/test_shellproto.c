/* Unit tests for broker/shellproto: the run line's quoting, the status
 * record parser, the marker scanner, and the whole script against a real
 * bash on a pty (no sandbox needed). */
#define _GNU_SOURCE
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker/shellproto.h"

#define NONCE "0123456789abcdef"
#define TEST_WAIT_MS 5000

static void
test_status_record_parses(void **state)
{
	static const uint8_t rec[] = NONCE "\0" "3\0/tmp/a b\0rest";
	struct shellproto_status st;
	size_t used = 0;

	assert_int_equal(shellproto_status_parse(rec, sizeof(rec) - 1, &st, &used), 1);
	assert_string_equal(st.nonce, NONCE);
	assert_int_equal(st.code, 3);
	assert_string_equal(st.cwd, "/tmp/a b");
	assert_int_equal(used, sizeof(rec) - 1 - 4);
}

static void
test_a_partial_status_record_needs_more(void **state)
{
	static const uint8_t rec[] = NONCE "\0" "3\0/tm";
	struct shellproto_status st;
	size_t used = 0;

	assert_int_equal(shellproto_status_parse(rec, sizeof(rec) - 1, &st, &used), 0);
	assert_int_equal(shellproto_status_parse(rec, 3, &st, &used), 0);
}

static void
test_a_status_code_that_is_not_a_number_is_refused(void **state)
{
	static const uint8_t rec[] = NONCE "\0" "x\0/\0";
	static const uint8_t big[] = NONCE "\0" "256\0/\0";
	struct shellproto_status st;
	size_t used;

	assert_int_equal(shellproto_status_parse(rec, sizeof(rec) - 1, &st, &used), -1);
	assert_int_equal(shellproto_status_parse(big, sizeof(big) - 1, &st, &used), -1);
}

static void
test_an_overlong_nonce_is_refused(void **state)
{
	static const uint8_t rec[] = NONCE "00\0" "0\0/\0";
	struct shellproto_status st;
	size_t used;

	assert_int_equal(shellproto_status_parse(rec, sizeof(rec) - 1, &st, &used), -1);
}

/* Feeds TEXT in chunks of STEP; returns what came out before the marker. */
static char *
feed(struct shellproto_marker *m, const char *text, size_t step, size_t *taken)
{
	size_t len = strlen(text), at = 0, n;
	char *out = calloc(1, len + SHELLPROTO_MARKER_MAX_BYTES + 1);
	size_t o = 0;

	while (at < len && !m->found) {
		size_t chunk = len - at < step ? len - at : step;

		at += shellproto_marker_feed(m, (const uint8_t *)text + at, chunk,
		    (uint8_t *)out + o, &n);
		o += n;
	}
	*taken = at;
	return out;
}

static void
test_the_marker_ends_the_output_in_any_chunking(void **state)
{
	const char *text = "a\037b\037corral-" NONCE "x\037corral-" NONCE "\037after";
	struct shellproto_marker m;
	size_t taken;

	for (size_t step = 1; step < 40; step++) {
		char *out;

		shellproto_marker_init(&m, NONCE);
		out = feed(&m, text, step, &taken);
		assert_true(m.found);
		assert_string_equal(out, "a\037b\037corral-" NONCE "x");
		assert_int_equal(taken, strlen(text) - strlen("after"));
		free(out);
	}
}

/* Another nonce's marker is plain output. */
static void
test_another_nonce_is_output(void **state)
{
	const char *text = "\037corral-fedcba9876543210\037";
	struct shellproto_marker m;
	size_t taken;
	char *out;

	shellproto_marker_init(&m, NONCE);
	out = feed(&m, text, 5, &taken);
	assert_false(m.found);
	/* The last byte could start the marker: it is held back, not lost. */
	assert_int_equal(m.matched, 1);
	assert_memory_equal(out, text, strlen(text) - 1);
	assert_int_equal(strlen(out), strlen(text) - 1);
	free(out);
}

static void
test_the_run_line_quotes_every_special_byte(void **state)
{
	const char cmd[] = "echo '$x' \"a\" `b` \\ \n;|&";
	size_t len;
	char *line = shellproto_run_line(NONCE, cmd, sizeof(cmd) - 1, &len);

	assert_int_equal(strlen(line), len);
	assert_non_null(strstr(line, "__corral_n=" NONCE "; eval $'"));
	size_t quotes = 0;

	for (size_t i = 0; i < len; i++)
		quotes += line[i] == '\'';
	assert_int_equal(quotes, 2);    /* the $'...' around the command, nothing inside */
	assert_ptr_equal(strchr(line, '\n'), line + len - 1);
	assert_null(strchr(line, '`'));
	assert_null(strchr(line, '"'));
	free(line);
}

/* A bash on a pty, reading its commands from a socket, as the daemon runs it. */
struct bash {
	pid_t pid;
	int master, sock;
};

static void
bash_start(struct bash *b)
{
	int sp[2], slave;
	struct termios tio;
	char *script;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	b->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(b->master >= 0 && grantpt(b->master) == 0 && unlockpt(b->master) == 0);
	b->pid = fork();
	if (b->pid == 0) {
		setsid();
		slave = open(ptsname(b->master), O_RDWR);
		ioctl(slave, TIOCSCTTY, 0);
		dup2(slave, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		dup2(sp[1], 3);
		close_range(4, ~0U, 0);        /* what the test runner left open */
		execlp("bash", "bash", "--noprofile", "--norc", "-c",
		    "exec bash --noprofile --norc --noediting -i 0<&3 3<&-", (char *)NULL);
		_exit(127);
	}
	close(sp[1]);
	b->sock = sp[0];
	/* As the daemon does: no output processing, so "\n" stays "\n". */
	assert_int_equal(tcgetattr(b->master, &tio), 0);
	tio.c_oflag &= ~(tcflag_t)OPOST;
	assert_int_equal(tcsetattr(b->master, TCSANOW, &tio), 0);
	script = shellproto_init_script("00000000000000a0");
	assert_int_equal(write(b->sock, script, strlen(script)), (ssize_t)strlen(script));
	free(script);
}

/* Reads the terminal until NONCE's marker and the socket until its status. */
static char *
bash_collect(struct bash *b, const char *nonce, struct shellproto_status *st)
{
	struct shellproto_marker m;
	uint8_t in[4096], stbuf[SHELLPROTO_STATUS_MAX_BYTES];
	char *out = calloc(1, 1 << 16);
	size_t o = 0, slen = 0, used, n, k;
	bool have_status = false;
	ssize_t r;

	shellproto_marker_init(&m, nonce);
	while (!m.found || !have_status) {
		struct pollfd p[2] = { { b->master, POLLIN, 0 }, { b->sock, POLLIN, 0 } };

		assert_true(poll(p, 2, TEST_WAIT_MS) > 0);
		if (p[0].revents && !m.found && (r = read(b->master, in, sizeof(in))) > 0) {
			for (k = 0; k < (size_t)r && !m.found; k += n) {
				n = shellproto_marker_feed(&m, in + k, (size_t)r - k,
				    (uint8_t *)out + o, &used);
				o += used;
			}
		}
		if (p[1].revents && (r = read(b->sock, stbuf + slen, sizeof(stbuf) - slen)) > 0) {
			slen += (size_t)r;
			have_status = shellproto_status_parse(stbuf, slen, st, &used) == 1;
		}
	}
	return out;
}

static char *
bash_run(struct bash *b, const char *nonce, const char *cmd, struct shellproto_status *st)
{
	size_t len;
	char *line = shellproto_run_line(nonce, cmd, strlen(cmd), &len), *out;

	assert_int_equal(write(b->sock, line, len), (ssize_t)len);
	free(line);
	out = bash_collect(b, nonce, st);
	assert_string_equal(st->nonce, nonce);
	return out;
}

/* The script keeps state, cuts output at the marker, and the command can
 * neither read the socket nor fake the status by printing a record. */
static void
test_a_real_bash_keeps_state_and_reports_status(void **state)
{
	struct shellproto_status st;
	struct bash b;
	char *out;
	int status;

	bash_start(&b);
	free(bash_collect(&b, "00000000000000a0", &st));
	free(bash_run(&b, "00000000000000a1", "cd /tmp && export KEEP=yes", &st));
	assert_int_equal(st.code, 0);
	out = bash_run(&b, "00000000000000a2", "echo $KEEP $PWD; cat; exit_fake=1", &st);
	assert_string_equal(out, "yes /tmp\n");
	free(out);
	out = bash_run(&b, "00000000000000a3",
	    "printf '00000000000000a3\\0000\\000/fake\\000'; false", &st);
	assert_int_equal(st.code, 1);
	assert_string_equal(st.cwd, "/tmp");
	free(out);
	out = bash_run(&b, "00000000000000a4", "ls /proc/self/fd | wc -l", &st);
	assert_string_equal(out, "4\n");        /* 0, 1, 2 and ls's own listing */
	free(out);
	close(b.sock);
	close(b.master);
	waitpid(b.pid, &status, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_record_parses),
		cmocka_unit_test(test_a_partial_status_record_needs_more),
		cmocka_unit_test(test_a_status_code_that_is_not_a_number_is_refused),
		cmocka_unit_test(test_an_overlong_nonce_is_refused),
		cmocka_unit_test(test_the_marker_ends_the_output_in_any_chunking),
		cmocka_unit_test(test_another_nonce_is_output),
		cmocka_unit_test(test_the_run_line_quotes_every_special_byte),
		cmocka_unit_test(test_a_real_bash_keeps_state_and_reports_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
