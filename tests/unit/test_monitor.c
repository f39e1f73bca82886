/* Tests of broker/monitor/monitor: the monitor process, run in a child on
 * a real SOCK_SEQPACKET pair, ends at once (status 3, after its teardown)
 * on anything a working broker never sends: a message that is not a
 * request, a malformed request, bytes that are no message at all. Requests
 * it expects are answered. Its set-up is made to fail (the state folder
 * does not exist), so no fence, cgroup or program is touched: the monitor
 * then still serves, and says why it cannot build. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker/monitor/monitor-wire.h"
#include "broker/monitor/monitor.h"

#define TEST_EXIT_BROKEN_LINK 3         /* monitor.c's status for a broken broker */

struct running {
	pid_t pid;
	int fd;
	struct seqmsg *msg;
};

/* Starts a monitor in a child and reads its HELLO. */
static void
start(struct running *r)
{
	static const struct monitor_setup setup = {
		.state_dir = "/nonexistent/corral-test-monitor",
		.init_path = "/nonexistent/corral-init", .lock_fd = -1,
	};
	struct monitor_hello h;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	r->pid = fork();
	assert_true(r->pid != -1);
	if (r->pid == 0) {
		close(sv[0]);
		monitor_run(sv[1], &setup);
	}
	close(sv[1]);
	r->fd = sv[0];
	r->msg = malloc(sizeof(*r->msg));
	assert_non_null(r->msg);
	assert_int_equal(seqmsg_recv(r->fd, r->msg), 1);
	assert_int_equal(monitor_wire_hello_decode(r->msg, &h), 0);
	assert_false(h.sandboxes);
	assert_non_null(strstr(h.why, "/nonexistent/corral-test-monitor"));
	seqmsg_clear(r->msg);
}

/* Waits for the monitor's end; its exit status. */
static int
end_status(struct running *r)
{
	int status;

	assert_int_equal(waitpid(r->pid, &status, 0), r->pid);
	close(r->fd);
	free(r->msg);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* The monitor closes the link without answering. */
static void
assert_hung_up(struct running *r)
{
	assert_int_equal(seqmsg_recv(r->fd, r->msg), 0);
	assert_int_equal(end_status(r), TEST_EXIT_BROKEN_LINK);
}

static void
test_a_firewall_request_is_answered(void **state)
{
	struct running r;
	const char *line;

	(void)state;
	start(&r);
	monitor_wire_text_encode(r.msg, MONITOR_FIREWALL, "", -1);
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	assert_int_equal(seqmsg_recv(r.fd, r.msg), 1);
	assert_int_equal(monitor_wire_text_decode(r.msg, MONITOR_FIREWALL_IS, &line, NULL), 0);
	assert_string_equal(line, "unknown: the monitor is not set up");
	seqmsg_clear(r.msg);
	/* The link closing is the normal end. */
	shutdown(r.fd, SHUT_WR);
	assert_int_equal(end_status(&r), 0);
}

static void
test_an_answer_sent_as_a_request_ends_the_monitor(void **state)
{
	struct running r;

	(void)state;
	start(&r);
	monitor_wire_owned_encode(r.msg, 0, 0);
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	assert_hung_up(&r);
}

static void
test_an_unknown_type_ends_the_monitor(void **state)
{
	struct running r;

	(void)state;
	start(&r);
	seqmsg_init(r.msg, 1);  /* the exec channel's SPEC: not the monitor's */
	seqmsg_put_u32(r.msg, 0);
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	assert_hung_up(&r);
}

static void
test_a_malformed_destroy_ends_the_monitor(void **state)
{
	struct running r;

	(void)state;
	start(&r);
	seqmsg_init(r.msg, MONITOR_DESTROY);
	seqmsg_put_u32(r.msg, 7);       /* a number where its name should be */
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	assert_hung_up(&r);
}

static void
test_a_create_without_its_connection_ends_the_monitor(void **state)
{
	static const struct monitor_root root = { "/tmp", false };
	struct monitor_create c = { .caller_fd = -1, .name = "x", .uid = 1000, .gid = 1000,
	    .roots = &root, .n_roots = 1 };
	struct running r;

	(void)state;
	start(&r);
	/* caller_fd -1 attaches nothing: one descriptor short. */
	monitor_wire_create_encode(r.msg, &c);
	r.msg->overflow = false;
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	assert_hung_up(&r);
}

/* Sends R a create (its CA follows it), on a connection (one end of SV)
 * that is not one to the control socket: the monitor refuses it. */
static void
send_create(struct running *r, int sv[2])
{
	static const struct monitor_root root = { "/tmp", false };
	struct monitor_create c = { .name = "x", .uid = 1000, .gid = 1000,
	    .roots = &root, .n_roots = 1 };

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	c.caller_fd = sv[0];
	monitor_wire_create_encode(r->msg, &c);
	assert_int_equal(seqmsg_send(r->fd, r->msg), 0);
}

/* A create whose CA follows: the monitor reads the CA even when it
 * refuses the create, so the next request is read as one. */
static void
test_a_refused_create_still_takes_its_ca(void **state)
{
	struct running r;
	const char *text;
	int sv[2];

	(void)state;
	start(&r);
	send_create(&r, sv);
	monitor_wire_text_encode(r.msg, MONITOR_CREATE_CA, "-----BEGIN CERTIFICATE-----", -1);
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	monitor_wire_text_encode(r.msg, MONITOR_FIREWALL, "", -1);
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	assert_int_equal(seqmsg_recv(r.fd, r.msg), 1);
	assert_int_equal(monitor_wire_text_decode(r.msg, MONITOR_FAILED, &text, NULL), 0);
	assert_non_null(strstr(text, "not a connection to the control socket"));
	seqmsg_clear(r.msg);
	assert_int_equal(seqmsg_recv(r.fd, r.msg), 1);
	assert_int_equal(monitor_wire_text_decode(r.msg, MONITOR_FIREWALL_IS, &text, NULL), 0);
	seqmsg_clear(r.msg);
	shutdown(r.fd, SHUT_WR);
	assert_int_equal(end_status(&r), 0);
	close(sv[0]);
	close(sv[1]);
}

/* What no broker sends: a CA with no create before it, a create whose
 * CA does not come next, or a CA larger than any certificate. */
static void
test_a_ca_out_of_place_ends_the_monitor(void **state)
{
	char *huge = malloc(MONITOR_CA_PEM_MAX_BYTES + 2);
	struct running r;
	int sv[2];

	(void)state;
	start(&r);
	monitor_wire_text_encode(r.msg, MONITOR_CREATE_CA, "pem", -1);
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	assert_hung_up(&r);
	start(&r);
	send_create(&r, sv);
	monitor_wire_text_encode(r.msg, MONITOR_FIREWALL, "", -1);
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	assert_hung_up(&r);
	close(sv[0]);
	close(sv[1]);
	assert_non_null(huge);
	memset(huge, 'A', MONITOR_CA_PEM_MAX_BYTES + 1);
	huge[MONITOR_CA_PEM_MAX_BYTES + 1] = '\0';
	start(&r);
	send_create(&r, sv);
	monitor_wire_text_encode(r.msg, MONITOR_CREATE_CA, huge, -1);
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	assert_hung_up(&r);
	close(sv[0]);
	close(sv[1]);
	free(huge);
}

/* WARM: a slot, answered DONE with why not; a slot as text is no WARM. */
static void
test_a_warm_request_is_answered(void **state)
{
	static const unsigned asked[] = { 3, MONITOR_SLOTS_MAX, 99999999 };
	static const char *const told[] = { "sandboxes cannot be built here",
		"refused: not an address slot", "refused: not an address slot" };
	struct running r;
	const char *text;

	(void)state;
	start(&r);
	for (size_t i = 0; i < sizeof(asked) / sizeof(asked[0]); i++) {
		monitor_wire_warm_encode(r.msg, asked[i]);
		assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
		assert_int_equal(seqmsg_recv(r.fd, r.msg), 1);
		assert_int_equal(monitor_wire_text_decode(r.msg, MONITOR_DONE, &text, NULL), 0);
		assert_string_equal(text, told[i]);
		seqmsg_clear(r.msg);
	}
	shutdown(r.fd, SHUT_WR);
	assert_int_equal(end_status(&r), 0);
	start(&r);
	monitor_wire_text_encode(r.msg, MONITOR_WARM, "3", -1);
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	assert_hung_up(&r);
}

static void
test_bytes_that_are_no_message_end_the_monitor(void **state)
{
	static const char junk[2] = { 'h', 'i' };
	struct running r;

	(void)state;
	start(&r);
	/* Shorter than a message's type. */
	assert_int_equal(send(r.fd, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	assert_hung_up(&r);
}

static void
test_a_firewall_request_with_text_ends_the_monitor(void **state)
{
	struct running r;

	(void)state;
	start(&r);
	monitor_wire_text_encode(r.msg, MONITOR_FIREWALL, "please", -1);
	assert_int_equal(seqmsg_send(r.fd, r.msg), 0);
	assert_hung_up(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_firewall_request_is_answered),
		cmocka_unit_test(test_an_answer_sent_as_a_request_ends_the_monitor),
		cmocka_unit_test(test_an_unknown_type_ends_the_monitor),
		cmocka_unit_test(test_a_malformed_destroy_ends_the_monitor),
		cmocka_unit_test(test_a_create_without_its_connection_ends_the_monitor),
		cmocka_unit_test(test_bytes_that_are_no_message_end_the_monitor),
		cmocka_unit_test(test_a_refused_create_still_takes_its_ca),
		cmocka_unit_test(test_a_ca_out_of_place_ends_the_monitor),
		cmocka_unit_test(test_a_warm_request_is_answered),
		cmocka_unit_test(test_a_firewall_request_with_text_ends_the_monitor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
