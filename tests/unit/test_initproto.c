/* Tests of broker/init/initproto: messages that round-trip over a real
 * SOCK_SEQPACKET pair with their descriptors, and the malformed ones each
 * side must refuse whole (short, long, bad text, wrong descriptor count,
 * type out of range), without keeping any descriptor that came with them. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fsproto.h"
#include "common/initproto.h"

struct pair {
	int a, b;
	struct seqmsg *m;
};

static int
setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	int sv[2];

	if (p == NULL || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	p->a = sv[0];
	p->b = sv[1];
	p->m = malloc(sizeof(*p->m));
	*state = p;
	return p->m == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	struct pair *p = *state;

	close(p->a);
	close(p->b);
	free(p->m);
	free(p);
	return 0;
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d != NULL && readdir(d) != NULL)
		n++;
	if (d != NULL)
		closedir(d);
	return n;
}

/* Sends the LEN raw bytes (a type word, then the body) with FDS. */
static void
send_raw(int sock, const void *bytes, size_t len, const int *fds, size_t n_fds)
{
	static struct seqmsg m;

	seqmsg_init(&m, 0);
	memcpy(&m.type, bytes, sizeof(m.type));
	memcpy(m.body, (const char *)bytes + sizeof(m.type), len - sizeof(m.type));
	m.len = len - sizeof(m.type);
	if (n_fds > 0)
		memcpy(m.fds, fds, n_fds * sizeof(int));
	m.n_fds = n_fds;
	assert_int_equal(seqmsg_send(sock, &m), 0);
}

/* Sends P's message from one end and receives it whole at the other. */
static void
pass(struct pair *p)
{
	assert_int_equal(seqmsg_send(p->a, p->m), 0);
	assert_int_equal(seqmsg_recv(p->b, p->m), 1);
}

/* Sends E with its flags word (the one after the id) set to FLAGS; checks
 * the exec is refused as malformed and no descriptor of it is kept. */
static void
exec_with_flags_is_refused(struct pair *p, const struct initproto_exec *e, unsigned char flags)
{
	static struct initproto_exec got;
	int before = count_fds();

	initproto_exec_encode(p->m, e);
	p->m->body[4] = flags;
	pass(p);
	assert_int_equal(initproto_exec_decode(p->m, &got), -1);
	assert_int_equal(errno, EBADMSG);
	seqmsg_clear(p->m);
	assert_int_equal(count_fds(), before);
}

/* Sends the error message RAW (an id, then a text); checks the text is
 * refused. */
static void
text_is_refused(struct pair *p, const unsigned char *raw, size_t len)
{
	const char *s;
	uint32_t id;

	send_raw(p->a, raw, len, NULL, 0);
	assert_int_equal(seqmsg_recv(p->b, p->m), 1);
	assert_int_equal(seqmsg_get_u32(p->m, &id), 0);
	assert_int_equal(seqmsg_get_str(p->m, &s), -1);
}

static void
test_spec_round_trips_with_its_trees(void **state)
{
	struct pair *p = *state;
	struct initproto_spec s = { .uid = 1000, .gid = 1001, .hostname = "box",
		.gateway = "10.231.0.1", .home = "/var/lib/corral/h", .workdir = "/w",
		.runtime = "", .tmp_mib = 3072, .n_roots = 2, .root_path = { "/w", "/r" },
		.root_ro = { false, true } };
	struct initproto_spec got;
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	s.root_fd[0] = fds[0];
	s.root_fd[1] = fds[1];
	s.home_fd = fds[0];
	initproto_spec_encode(p->m, &s);
	pass(p);
	assert_int_equal(initproto_spec_decode(p->m, &got), 0);
	assert_int_equal(got.uid, 1000);
	assert_int_equal(got.gid, 1001);
	assert_string_equal(got.hostname, "box");
	assert_int_equal(got.tmp_mib, 3072);
	assert_string_equal(got.root_path[1], "/r");
	assert_true(got.root_ro[1]);
	assert_false(got.root_ro[0]);
	assert_int_equal(write(fds[1], "x", 1), 1);
	close(got.root_fd[1]);
	close(got.home_fd);
	assert_true(got.root_fd[0] >= 0);
	close(got.root_fd[0]);
	close(fds[0]);
	close(fds[1]);
}

static void
test_exec_round_trips_in_pipes_and_tty_mode(void **state)
{
	struct pair *p = *state;
	static struct initproto_exec e, got;
	int i;

	e = (struct initproto_exec){ .id = 7, .cwd = "", .argc = 2,
		.argv = { "sh", "-c" }, .envc = 1, .envp = { "A=b" },
		.stdio = { 0, 1, 2 }, .extra_fd = -1 };
	initproto_exec_encode(p->m, &e);
	pass(p);
	assert_int_equal(initproto_exec_decode(p->m, &got), 0);
	assert_int_equal(got.id, 7);
	assert_string_equal(got.argv[1], "-c");
	assert_null(got.argv[2]);
	assert_string_equal(got.envp[0], "A=b");
	assert_null(got.envp[1]);
	for (i = 0; i < 3; i++) {
		assert_true(got.stdio[i] > 2);
		close(got.stdio[i]);
	}
	e.tty = true;
	e.rows = 24;
	e.cols = 80;
	initproto_exec_encode(p->m, &e);
	pass(p);
	assert_int_equal(initproto_exec_decode(p->m, &got), 0);
	assert_true(got.tty);
	assert_int_equal(got.cols, 80);
	assert_int_equal(got.stdio[0], -1);
	assert_int_equal(got.extra_fd, -1);
}

/* Sends E with a pipe's write end as its extra descriptor; checks that the
 * received one is that pipe (bytes written to it come out) and that
 * stdio holds what the mode says. */
static void
exec_extra_fd_round_trip(struct pair *p, struct initproto_exec *e)
{
	static struct initproto_exec got;
	char c = 0;
	int fds[2], i;

	assert_int_equal(pipe(fds), 0);
	e->extra_fd = fds[1];
	initproto_exec_encode(p->m, e);
	assert_int_equal(seqmsg_send(p->a, p->m), 0);
	close(fds[1]);
	assert_int_equal(seqmsg_recv(p->b, p->m), 1);
	assert_int_equal(initproto_exec_decode(p->m, &got), 0);
	assert_true(got.extra_fd > 2);
	assert_int_equal(write(got.extra_fd, "s", 1), 1);
	close(got.extra_fd);
	assert_int_equal(read(fds[0], &c, 1), 1);
	assert_int_equal(c, 's');
	close(fds[0]);
	for (i = 0; i < 3; i++) {
		if (e->tty)
			assert_int_equal(got.stdio[i], -1);
		else
			close(got.stdio[i]);
	}
}

static void
test_exec_carries_the_extra_descriptor_in_pipes_and_tty_mode(void **state)
{
	struct pair *p = *state;
	static struct initproto_exec e;

	e = (struct initproto_exec){ .id = 3, .cwd = "", .argc = 1, .argv = { "true" },
		.stdio = { 0, 1, 2 } };
	exec_extra_fd_round_trip(p, &e);
	e.tty = true;
	e.stdio[0] = e.stdio[1] = e.stdio[2] = -1;
	exec_extra_fd_round_trip(p, &e);
}

static void
test_exec_with_the_extra_flag_but_no_descriptor_is_refused(void **state)
{
	static const struct initproto_exec e = { .id = 1, .cwd = "", .argc = 1,
		.argv = { "true" }, .stdio = { 0, 1, 2 }, .extra_fd = -1 };

	/* The extra flag with only stdio attached. */
	exec_with_flags_is_refused(*state, &e, 2);
}

static void
test_exec_with_an_unknown_flag_is_refused(void **state)
{
	static const struct initproto_exec e = { .id = 1, .tty = true, .cwd = "", .argc = 1,
		.argv = { "true" }, .stdio = { -1, -1, -1 }, .extra_fd = -1 };

	exec_with_flags_is_refused(*state, &e, 5);
}

static void
test_exec_with_descriptors_in_tty_mode_is_refused(void **state)
{
	static const struct initproto_exec e = { .id = 1, .tty = false, .cwd = "", .argc = 1,
		.argv = { "true" }, .stdio = { 0, 1, 2 }, .extra_fd = -1 };

	/* The tty flag with the fds still attached. */
	exec_with_flags_is_refused(*state, &e, 1);
}

static void
test_fsop_round_trips_with_its_descriptors(void **state)
{
	struct pair *p = *state;
	struct initproto_fsop f = { .id = 9, .op = FSPROTO_GREP, .path = "notes",
		.pattern = "TO+DO", .in_fd = -1 }, got;
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	f.out_fd = fds[1];
	initproto_fsop_encode(p->m, &f);
	pass(p);
	assert_int_equal(initproto_fsop_decode(p->m, &got), 0);
	assert_int_equal(got.id, 9);
	assert_int_equal(got.op, FSPROTO_GREP);
	assert_string_equal(got.path, "notes");
	assert_string_equal(got.pattern, "TO+DO");
	assert_int_equal(got.in_fd, -1);
	assert_true(got.out_fd > 2);
	close(got.out_fd);
	f.op = FSPROTO_WRITE;
	f.in_fd = fds[0];
	initproto_fsop_encode(p->m, &f);
	pass(p);
	assert_int_equal(initproto_fsop_decode(p->m, &got), 0);
	assert_true(got.in_fd > 2 && got.out_fd > 2);
	close(got.in_fd);
	close(got.out_fd);
	close(fds[0]);
	close(fds[1]);
}

static void
test_fsop_with_an_unknown_op_is_refused_and_its_fds_closed(void **state)
{
	struct pair *p = *state;
	struct initproto_fsop f = { .id = 1, .op = FSPROTO_OP_MAX + 1, .path = "",
		.pattern = "", .in_fd = -1 }, got;
	int before = count_fds();

	f.out_fd = 1;
	initproto_fsop_encode(p->m, &f);
	pass(p);
	assert_int_equal(initproto_fsop_decode(p->m, &got), -1);
	seqmsg_clear(p->m);
	assert_int_equal(count_fds(), before);
}

static void
test_fsop_with_the_input_flag_but_one_descriptor_is_refused(void **state)
{
	struct pair *p = *state;
	struct initproto_fsop f = { .id = 1, .op = FSPROTO_WRITE, .path = "a",
		.pattern = "", .out_fd = 1, .in_fd = -1 }, got;

	initproto_fsop_encode(p->m, &f);
	p->m->body[8] = 1;      /* the flags word, after id and op */
	pass(p);
	assert_int_equal(initproto_fsop_decode(p->m, &got), -1);
	seqmsg_clear(p->m);
}

/* A raw message being written by hand. */
struct raw {
	unsigned char b[512];
	size_t n;
};

static void
raw_u32(struct raw *r, uint32_t w)
{
	memcpy(r->b + r->n, &w, sizeof(w));
	r->n += sizeof(w);
}

static void
raw_str(struct raw *r, const char *s)
{
	raw_u32(r, (uint32_t)strlen(s) + 1);
	memcpy(r->b + r->n, s, strlen(s) + 1);
	r->n += strlen(s) + 1;
}

static void
test_exec_without_arguments_is_refused(void **state)
{
	struct pair *p = *state;
	static struct initproto_exec got;
	struct raw r = { .n = 0 };

	raw_u32(&r, INITPROTO_EXEC);
	raw_u32(&r, 1);         /* id */
	raw_u32(&r, 1);         /* tty */
	raw_u32(&r, 24);
	raw_u32(&r, 80);
	raw_str(&r, "");        /* cwd */
	raw_u32(&r, 0);         /* argc */
	raw_u32(&r, 0);         /* envc */
	send_raw(p->a, r.b, r.n, NULL, 0);
	assert_int_equal(seqmsg_recv(p->b, p->m), 1);
	assert_int_equal(initproto_exec_decode(p->m, &got), -1);
}

static void
test_text_without_its_nul_is_refused(void **state)
{
	static const unsigned char raw[] = { INITPROTO_ERROR, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 'a', 'b', 'c' };

	text_is_refused(*state, raw, sizeof(raw));
}

static void
test_text_with_a_nul_inside_is_refused(void **state)
{
	static const unsigned char raw[] = { INITPROTO_ERROR, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 'a', 0, 0 };

	text_is_refused(*state, raw, sizeof(raw));
}

static void
test_text_longer_than_the_message_is_refused(void **state)
{
	static const unsigned char raw[] = { INITPROTO_ERROR, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 'a', 0 };

	text_is_refused(*state, raw, sizeof(raw));
}

static void
test_trailing_bytes_are_refused(void **state)
{
	struct pair *p = *state;
	uint32_t words[] = { INITPROTO_EXITED, 4, 0, 99 };
	uint32_t id, code;

	send_raw(p->a, words, sizeof(words), NULL, 0);
	assert_int_equal(seqmsg_recv(p->b, p->m), 1);
	assert_int_equal(seqmsg_get_u32(p->m, &id), 0);
	assert_int_equal(seqmsg_get_u32(p->m, &code), 0);
	assert_int_equal(seqmsg_get_end(p->m, 0), -1);
}

static void
test_type_out_of_range_is_refused_and_its_fds_closed(void **state)
{
	struct pair *p = *state;
	uint32_t words[] = { SEQMSG_TYPE_MAX + 1, 0 };
	int before = count_fds(), fds[2];

	assert_int_equal(pipe(fds), 0);
	send_raw(p->a, words, sizeof(words), fds, 2);
	close(fds[0]);
	close(fds[1]);
	assert_int_equal(seqmsg_recv(p->b, p->m), -1);
	assert_int_equal(errno, EBADMSG);
	assert_int_equal(count_fds(), before);
}

static void
test_spec_with_too_many_roots_is_refused(void **state)
{
	struct pair *p = *state;
	static struct initproto_spec got;
	const char *texts[] = { "b", "10.0.0.1", "/h", "/w", "" };
	struct raw r = { .n = 0 };
	size_t i;

	raw_u32(&r, INITPROTO_SPEC);
	raw_u32(&r, 1000);
	raw_u32(&r, 1000);
	for (i = 0; i < 5; i++)
		raw_str(&r, texts[i]);
	raw_u32(&r, CORRAL_ROOTS_MAX + 1);
	send_raw(p->a, r.b, r.n, NULL, 0);
	assert_int_equal(seqmsg_recv(p->b, p->m), 1);
	assert_int_equal(initproto_spec_decode(p->m, &got), -1);
}

static void
test_message_over_the_limit_is_not_sent(void **state)
{
	struct pair *p = *state;
	static char big[SEQMSG_MAX_BYTES];

	memset(big, 'a', sizeof(big) - 1);
	seqmsg_init(p->m, INITPROTO_ERROR);
	seqmsg_put_u32(p->m, 0);
	seqmsg_put_str(p->m, big);
	assert_int_equal(seqmsg_send(p->a, p->m), -1);
	assert_int_equal(errno, EMSGSIZE);
}

/* The spec's host sockets: the guard flag, the names, a tree each, after HOME's. */
static void
test_spec_carries_the_sockets_and_the_guard(void **state)
{
	struct pair *p = *state;
	struct initproto_spec s = { .uid = 1000, .gid = 1000, .hostname = "box",
		.gateway = "10.231.0.1", .home = "/h", .workdir = "/w", .runtime = "",
		.tmp_mib = 1, .n_roots = 1, .root_path = { "/w" }, .unix_guard = true,
		.n_sockets = 2, .socket_name = { "ssh-agent", "clangd.sock" } };
	struct initproto_spec got;
	int fds[2], sock[2];

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(pipe(sock), 0);
	s.root_fd[0] = s.home_fd = fds[0];
	s.socket_fd[0] = sock[0];
	s.socket_fd[1] = sock[1];
	initproto_spec_encode(p->m, &s);
	pass(p);
	assert_int_equal(initproto_spec_decode(p->m, &got), 0);
	assert_true(got.unix_guard);
	assert_int_equal(got.n_sockets, 2);
	assert_string_equal(got.socket_name[1], "clangd.sock");
	/* The second socket's tree is the pipe's write end: it writes. */
	assert_int_equal(write(got.socket_fd[1], "x", 1), 1);
	close(got.root_fd[0]);
	close(got.home_fd);
	close(got.socket_fd[0]);
	close(got.socket_fd[1]);
	close(fds[0]);
	close(fds[1]);
	close(sock[0]);
	close(sock[1]);
}

static void
test_spec_with_a_socket_name_of_a_path_is_refused(void **state)
{
	struct pair *p = *state;
	struct initproto_spec s = { .uid = 1000, .gid = 1000, .hostname = "box",
		.gateway = "10.231.0.1", .home = "/h", .workdir = "/w", .runtime = "",
		.tmp_mib = 1, .n_roots = 1, .root_path = { "/w" }, .n_sockets = 1,
		.socket_name = { "../etc" } };
	static struct initproto_spec got;
	int fds[2], before = count_fds();

	assert_int_equal(pipe(fds), 0);
	s.root_fd[0] = s.home_fd = s.socket_fd[0] = fds[0];
	initproto_spec_encode(p->m, &s);
	pass(p);
	assert_int_equal(initproto_spec_decode(p->m, &got), -1);
	seqmsg_clear(p->m);
	close(fds[0]);
	close(fds[1]);
	assert_int_equal(count_fds(), before);
}

/* A UNIX report round-trips with its pidfd; texts too long are cut. */
static void
test_unix_report_round_trips(void **state)
{
	struct pair *p = *state;
	static char long_path[INITPROTO_UNIX_TEXT_MAX_BYTES + 10];
	struct initproto_unix u = { .decision = INITPROTO_UNIX_DENY, .unreported = 3,
		.path = long_path, .listed = "", .binary = "/usr/bin/ssh", .pidfd = -1 };
	struct initproto_unix got;
	int fds[2];

	memset(long_path, 'p', sizeof(long_path) - 1);
	long_path[0] = '/';
	assert_int_equal(pipe(fds), 0);
	u.pidfd = fds[0];
	assert_int_equal(initproto_unix_send(p->a, &u), 0);
	assert_int_equal(seqmsg_recv(p->b, p->m), 1);
	assert_int_equal(initproto_unix_decode(p->m, &got), 0);
	assert_int_equal(got.decision, INITPROTO_UNIX_DENY);
	assert_int_equal(got.unreported, 3);
	assert_int_equal(strlen(got.path), INITPROTO_UNIX_TEXT_MAX_BYTES - 1);
	assert_string_equal(got.listed, "");
	assert_string_equal(got.binary, "/usr/bin/ssh");
	assert_true(got.pidfd >= 0);
	close(got.pidfd);
	u.pidfd = -1;
	u.decision = INITPROTO_UNIX_ALLOW;
	u.path = "/run/corral/sockets/agent";
	u.listed = "/run/user/1000/agent";
	assert_int_equal(initproto_unix_send(p->a, &u), 0);
	assert_int_equal(seqmsg_recv(p->b, p->m), 1);
	assert_int_equal(initproto_unix_decode(p->m, &got), 0);
	assert_int_equal(got.pidfd, -1);
	assert_string_equal(got.listed, "/run/user/1000/agent");
	close(fds[0]);
	close(fds[1]);
}

static void
test_unix_report_with_an_unknown_decision_is_refused(void **state)
{
	struct pair *p = *state;
	static struct initproto_unix got;
	struct raw r = { .n = 0 };

	raw_u32(&r, INITPROTO_UNIX);
	raw_u32(&r, 7);
	raw_u32(&r, 0);
	raw_str(&r, "/x");
	raw_str(&r, "");
	raw_str(&r, "");
	send_raw(p->a, r.b, r.n, NULL, 0);
	assert_int_equal(seqmsg_recv(p->b, p->m), 1);
	assert_int_equal(initproto_unix_decode(p->m, &got), -1);
}

static void
test_peer_close_reads_as_zero(void **state)
{
	struct pair *p = *state;

	close(p->a);
	p->a = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_int_equal(seqmsg_recv(p->b, p->m), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spec_round_trips_with_its_trees, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_round_trips_in_pipes_and_tty_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_with_descriptors_in_tty_mode_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_carries_the_extra_descriptor_in_pipes_and_tty_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_with_the_extra_flag_but_no_descriptor_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_with_an_unknown_flag_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_without_arguments_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsop_round_trips_with_its_descriptors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsop_with_an_unknown_op_is_refused_and_its_fds_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsop_with_the_input_flag_but_one_descriptor_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_without_its_nul_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_with_a_nul_inside_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_longer_than_the_message_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trailing_bytes_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_type_out_of_range_is_refused_and_its_fds_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_with_too_many_roots_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_message_over_the_limit_is_not_sent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peer_close_reads_as_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_carries_the_sockets_and_the_guard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_with_a_socket_name_of_a_path_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unix_report_round_trips, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unix_report_with_an_unknown_decision_is_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
