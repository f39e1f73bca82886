/* Tests of broker/monitor-wire: the monitor's messages round-trip over a
 * real SOCK_SEQPACKET pair with their descriptors, and what a hostile
 * broker could send (too many groups or roots, no roots, a flag that is
 * not 0 or 1, a missing field, a descriptor too many) is refused whole. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker/monitor/credcopy.h"
#include "broker/monitor/monitor-wire.h"

struct pair {
	int a, b;
	struct seqmsg *out, *in;
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
	p->out = malloc(sizeof(*p->out));
	p->in = malloc(sizeof(*p->in));
	seqmsg_init(p->out, 0);
	seqmsg_init(p->in, 0);
	*state = p;
	return p->out == NULL || p->in == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	struct pair *p = *state;

	seqmsg_clear(p->in);
	close(p->a);
	close(p->b);
	free(p->out);
	free(p->in);
	free(p);
	return 0;
}

/* Sends OUT from one end and receives it at the other. */
static void
carry(struct pair *p)
{
	assert_false(p->out->overflow);
	assert_int_equal(seqmsg_send(p->a, p->out), 0);
	assert_int_equal(seqmsg_recv(p->b, p->in), 1);
}

static const gid_t test_groups[] = { 1000, 27 };
static const struct monitor_root test_roots[] = { { "/srv/work", false }, { "/srv/ref", true } };

static struct monitor_create
sample_create(void)
{
	static int conn = -1;
	struct monitor_create r = {
		.caller_fd = -1, .name = "demo", .uid = 1000, .gid = 1000, .caller_uid = 1000, .caller_gid = 1000,
		.caller_groups = test_groups, .n_caller_groups = 2, .roots = test_roots,
		.n_roots = 2, .workdir = "/srv/work", .slot = 7, .pids = 512,
		.memory_bytes = 5ull << 32, .cpu_milli = 1500, .hard_requirement = true,
	};

	/* Stands for the client's connection: any descriptor travels. */
	if (conn == -1)
		conn = open("/dev/null", O_RDONLY | O_CLOEXEC);
	r.caller_fd = conn;
	return r;
}

static void
test_create_round_trips_every_field(void **state)
{
	struct pair *p = *state;
	struct monitor_create r = sample_create();
	struct monitor_wire_create *got = malloc(sizeof(*got));

	monitor_wire_create_encode(p->out, &r);
	carry(p);
	assert_int_equal(monitor_wire_create_decode(p->in, got), 0);
	assert_true(got->req.caller_fd >= 0);
	close(got->req.caller_fd);
	assert_string_equal(got->req.name, "demo");
	assert_int_equal(got->req.n_caller_groups, 0);  /* read from the connection */
	assert_int_equal(got->req.n_roots, 2);
	assert_string_equal(got->req.roots[1].path, "/srv/ref");
	assert_true(got->req.roots[1].read_only);
	assert_false(got->req.roots[0].read_only);
	assert_string_equal(got->req.workdir, "/srv/work");
	assert_int_equal(got->req.slot, 7);
	assert_int_equal(got->req.memory_bytes, 5ull << 32);
	assert_int_equal(got->req.cpu_milli, 1500);
	assert_true(got->req.hard_requirement);
	assert_false(got->req.warm);
	free(got);
}

/* A claim of the warm sandbox of the request's slot travels as a flag. */
static void
test_create_warm_flag_round_trips(void **state)
{
	struct pair *p = *state;
	struct monitor_create r = sample_create();
	struct monitor_wire_create *got = malloc(sizeof(*got));

	r.warm = true;
	monitor_wire_create_encode(p->out, &r);
	carry(p);
	assert_int_equal(monitor_wire_create_decode(p->in, got), 0);
	close(got->req.caller_fd);
	assert_true(got->req.warm);
	assert_int_equal(got->req.slot, 7);
	free(got);
}

static void
test_create_without_workdir_decodes_null(void **state)
{
	struct pair *p = *state;
	struct monitor_create r = sample_create();
	struct monitor_wire_create *got = malloc(sizeof(*got));

	r.workdir = NULL;
	monitor_wire_create_encode(p->out, &r);
	carry(p);
	assert_int_equal(monitor_wire_create_decode(p->in, got), 0);
	assert_null(got->req.workdir);
	free(got);
}

static void
test_create_with_no_root_is_refused(void **state)
{
	struct pair *p = *state;
	struct monitor_create r = sample_create();
	struct monitor_wire_create *got = malloc(sizeof(*got));

	r.n_roots = 0;
	monitor_wire_create_encode(p->out, &r);
	carry(p);
	assert_int_equal(monitor_wire_create_decode(p->in, got), -1);
	free(got);
}

/* hard_requirement is a flag: 2 is not "true", it is a malformed message. */
static void
test_create_flag_other_than_0_or_1_is_refused(void **state)
{
	struct pair *p = *state;
	struct monitor_create r = sample_create();
	struct monitor_wire_create *got = malloc(sizeof(*got));

	monitor_wire_create_encode(p->out, &r);
	p->out->len -= 4;
	seqmsg_put_u32(p->out, 2);
	carry(p);
	assert_int_equal(monitor_wire_create_decode(p->in, got), -1);
	free(got);
}

static void
test_create_with_a_descriptor_is_refused(void **state)
{
	struct pair *p = *state;
	struct monitor_create r = sample_create();
	struct monitor_wire_create *got = malloc(sizeof(*got));
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	monitor_wire_create_encode(p->out, &r);
	seqmsg_put_fd(p->out, fd);
	carry(p);
	assert_int_equal(monitor_wire_create_decode(p->in, got), -1);
	close(fd);
	free(got);
}

static void
test_create_carries_grants_and_their_home(void **state)
{
	struct pair *p = *state;
	struct monitor_create r = sample_create();
	const char *grants[] = { "ssh", "gh" };
	struct monitor_wire_create *got = malloc(sizeof(*got));

	r.grant_home = "/home/alice";
	r.grants = grants;
	r.n_grants = 2;
	monitor_wire_create_encode(p->out, &r);
	carry(p);
	assert_int_equal(monitor_wire_create_decode(p->in, got), 0);
	assert_string_equal(got->req.grant_home, "/home/alice");
	assert_int_equal(got->req.n_grants, 2);
	assert_string_equal(got->req.grants[1], "gh");
	free(got);
}

static void
test_create_carries_the_unix_sockets(void **state)
{
	struct pair *p = *state;
	struct monitor_create r = sample_create();
	const struct monitor_socket socks[] = { { "/run/user/1000/agent", "ssh-agent" },
		{ "/home/alice/.cache/ls.sock", "ls.sock" } };
	struct monitor_wire_create *got = malloc(sizeof(*got));

	r.sockets = socks;
	r.n_sockets = 2;
	monitor_wire_create_encode(p->out, &r);
	carry(p);
	assert_int_equal(monitor_wire_create_decode(p->in, got), 0);
	assert_int_equal(got->req.n_sockets, 2);
	assert_string_equal(got->req.sockets[0].path, "/run/user/1000/agent");
	assert_string_equal(got->req.sockets[1].name, "ls.sock");
	close(got->req.caller_fd);
	free(got);
}

/* A count over the bound is a malformed message, never a longer list. */
static void
test_create_with_too_many_sockets_is_refused(void **state)
{
	struct pair *p = *state;
	struct monitor_create r = sample_create();
	struct monitor_socket socks[MONITOR_SOCKETS_MAX + 1];
	struct monitor_wire_create *got = malloc(sizeof(*got));

	for (size_t i = 0; i < MONITOR_SOCKETS_MAX + 1; i++)
		socks[i] = (struct monitor_socket){ "/run/s", "s" };
	r.sockets = socks;
	r.n_sockets = MONITOR_SOCKETS_MAX + 1;
	monitor_wire_create_encode(p->out, &r);
	p->out->overflow = false;       /* sent anyway, as a broken broker would */
	carry(p);
	assert_int_equal(monitor_wire_create_decode(p->in, got), -1);
	free(got);
}

/* The files a create writes into the home (secrets' placeholders). */
static void
test_create_carries_the_files(void **state)
{
	struct pair *p = *state;
	struct monitor_create r = sample_create();
	const struct monitor_file files[] = { { ".config/gh/hosts.yml", "github.com:\n" },
		{ ".netrc", "machine github.com\n" } };
	struct monitor_wire_create *got = malloc(sizeof(*got));

	r.files = files;
	r.n_files = 2;
	monitor_wire_create_encode(p->out, &r);
	carry(p);
	assert_int_equal(monitor_wire_create_decode(p->in, got), 0);
	assert_int_equal(got->req.n_files, 2);
	assert_string_equal(got->req.files[0].path, ".config/gh/hosts.yml");
	assert_string_equal(got->req.files[1].content, "machine github.com\n");
	close(got->req.caller_fd);
	free(got);
}

static void
test_create_with_too_many_files_is_refused(void **state)
{
	struct pair *p = *state;
	struct monitor_create r = sample_create();
	struct monitor_wire_create *got = malloc(sizeof(*got));

	monitor_wire_create_encode(p->out, &r);
	p->out->len -= 4;       /* the files' count is the message's last field */
	seqmsg_put_u32(p->out, MONITOR_FILES_MAX + 1);
	carry(p);
	assert_int_equal(monitor_wire_create_decode(p->in, got), -1);
	free(got);
}

static void
test_built_carries_what_the_grants_copied(void **state)
{
	struct pair *p = *state;
	char host[] = "github.com:22", file[] = ".ssh/id_ed25519";
	char var[] = "GIT_SSH_COMMAND=ssh -F /h/.ssh/config";
	char name[] = "ssh", link[] = ".ssh/id_link", why[] = "a symbolic link";
	char *hosts[] = { host }, *copied[] = { file }, *env[] = { var };
	struct monitor_grant_skip skip = { link, why };
	struct monitor_grant_applied a = { name, hosts, 1, copied, 1, &skip, 1 };
	struct monitor_grants r = { &a, 1, env, 1 };
	struct monitor_built b = { .creds = &r, .limit_source = { "v2", "v2", "v2" } };
	struct monitor_built got;
	int fds[2];

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	b.channel_fd = b.diag_fd = b.connect_fd = fds[0];
	b.transparent_fd = b.dns_udp_fd = b.dns_tcp_fd = fds[1];
	b.memory_events_fd = b.pids_events_fd = -1;
	monitor_wire_built_encode(p->out, &b);
	carry(p);
	assert_int_equal(monitor_wire_built_decode(p->in, &got), 0);
	assert_non_null(got.creds);
	assert_int_equal(got.creds->ngrants, 1);
	assert_string_equal(got.creds->grants[0].hosts[0], "github.com:22");
	assert_string_equal(got.creds->grants[0].skipped[0].reason, "a symbolic link");
	assert_string_equal(got.creds->env[0], "GIT_SSH_COMMAND=ssh -F /h/.ssh/config");
	monitor_grants_free(got.creds);
	monitor_built_close(&got);
	close(fds[0]);
	close(fds[1]);
}

static void
test_built_round_trips_with_its_descriptors(void **state)
{
	struct pair *p = *state;
	struct monitor_built b = { .init_pid = 4242, .landlock_abi = 6, .seccomp = true,
	    .n_missing = 1, .missing = { "nftables fence" },
	    .limit_source = { "v2", "none", "v1" } };
	struct monitor_built got;
	int pipes[3][2];

	for (int i = 0; i < 3; i++)
		assert_int_equal(pipe2(pipes[i], O_CLOEXEC), 0);
	b.channel_fd = pipes[0][0];
	b.diag_fd = pipes[0][1];
	b.connect_fd = pipes[1][0];
	b.transparent_fd = pipes[1][1];
	b.dns_udp_fd = pipes[2][0];
	b.dns_tcp_fd = pipes[2][1];
	b.memory_events_fd = -1;
	b.pids_events_fd = pipes[0][0];         /* only the pids count: a v1 memory without one */
	b.gateway.s_addr = htonl(0x0ae70001);
	b.host_ifindex = 31;
	snprintf(b.home, sizeof(b.home), "/var/lib/corral/sandboxes/demo/home");
	monitor_wire_built_encode(p->out, &b);
	carry(p);
	assert_int_equal(monitor_wire_built_decode(p->in, &got), 0);
	assert_int_equal(got.init_pid, 4242);
	assert_int_equal(got.gateway.s_addr, b.gateway.s_addr);
	assert_int_equal(got.host_ifindex, 31);
	assert_string_equal(got.home, b.home);
	assert_int_equal(got.n_missing, 1);
	assert_string_equal(got.missing[0], "nftables fence");
	assert_string_equal(got.limit_source[2], "v1");
	assert_true(got.seccomp);
	assert_true(got.channel_fd >= 0 && got.dns_tcp_fd >= 0);
	assert_int_equal(got.memory_events_fd, -1);
	assert_true(got.pids_events_fd >= 0);
	assert_int_equal(got.map_fd, -1);
	monitor_built_close(&got);
	assert_int_equal(got.channel_fd, -1);
	for (int i = 0; i < 3; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
}

static void
count_text(const char *text, void *arg)
{
	(*(int *)arg)++;
	assert_non_null(text);
}

static void
test_reap_list_over_its_bound_is_refused(void **state)
{
	struct pair *p = *state;
	const char *names[] = { "a", "b", "c" };
	uint32_t count;
	int seen = 0;

	monitor_wire_list_encode(p->out, MONITOR_REAPED, 3, names, 3);
	carry(p);
	assert_int_equal(monitor_wire_list_decode(p->in, MONITOR_REAPED, 2, &count,
	    count_text, &seen), -1);
	assert_int_equal(seen, 0);
}

static void
test_reap_list_round_trips(void **state)
{
	struct pair *p = *state;
	const char *names[] = { "cgroup a", "home b" };
	uint32_t count = 0;
	int seen = 0;

	monitor_wire_list_encode(p->out, MONITOR_REAPED, 9, names, 2);
	carry(p);
	assert_int_equal(monitor_wire_list_decode(p->in, MONITOR_REAPED, 8, &count, count_text,
	    &seen), 0);
	assert_int_equal(count, 9);
	assert_int_equal(seen, 2);
}

static void
test_text_of_another_type_is_refused(void **state)
{
	struct pair *p = *state;
	const char *text;

	monitor_wire_text_encode(p->out, MONITOR_DESTROY, "demo", -1);
	carry(p);
	assert_int_equal(monitor_wire_text_decode(p->in, MONITOR_OWNER, &text, NULL), -1);
}

static void
test_hello_carries_the_map_descriptor(void **state)
{
	struct pair *p = *state;
	struct monitor_hello h = { .sandboxes = true, .instance = "i0123abcd",
	    .host_watched = false, .host_why = "no cgroup", .bypass_fd = -1,
	    .bypass_why = "NFLOG group 1: binding the group: Device or resource busy" };
	struct monitor_hello got;

	h.map_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	monitor_wire_hello_encode(p->out, &h);
	carry(p);
	assert_int_equal(monitor_wire_hello_decode(p->in, &got), 0);
	assert_true(got.sandboxes);
	assert_string_equal(got.instance, "i0123abcd");
	assert_string_equal(got.host_why, "no cgroup");
	assert_string_equal(got.bypass_why, h.bypass_why);
	assert_true(got.map_fd >= 0);
	assert_int_equal(got.bypass_fd, -1);
	close(got.map_fd);
	close(h.map_fd);
}

/* Either descriptor may come alone: each lands in its own field. */
static void
test_hello_carries_the_bypass_log_alone_or_with_the_map(void **state)
{
	struct pair *p = *state;
	struct monitor_hello h = { .sandboxes = true, .instance = "i1", .map_fd = -1 };
	struct monitor_hello got;
	struct stat want, have;

	h.bypass_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	assert_int_equal(fstat(h.bypass_fd, &want), 0);
	monitor_wire_hello_encode(p->out, &h);
	carry(p);
	assert_int_equal(monitor_wire_hello_decode(p->in, &got), 0);
	assert_int_equal(got.map_fd, -1);
	assert_int_equal(fstat(got.bypass_fd, &have), 0);
	assert_true(have.st_rdev == want.st_rdev);
	close(got.bypass_fd);
	h.map_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	monitor_wire_hello_encode(p->out, &h);
	carry(p);
	assert_int_equal(monitor_wire_hello_decode(p->in, &got), 0);
	assert_int_equal(fstat(got.bypass_fd, &have), 0);
	assert_true(have.st_rdev == want.st_rdev);
	assert_int_equal(fstat(got.map_fd, &have), 0);
	assert_true(have.st_rdev != want.st_rdev);
	close(got.bypass_fd);
	close(got.map_fd);
	close(h.map_fd);
	close(h.bypass_fd);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_create_round_trips_every_field),
		T(test_create_warm_flag_round_trips),
		T(test_create_without_workdir_decodes_null),
		T(test_create_with_no_root_is_refused),
		T(test_create_flag_other_than_0_or_1_is_refused),
		T(test_create_with_a_descriptor_is_refused),
		T(test_create_carries_grants_and_their_home),
		T(test_create_carries_the_unix_sockets),
		T(test_create_with_too_many_sockets_is_refused),
		T(test_create_carries_the_files),
		T(test_create_with_too_many_files_is_refused),
		T(test_built_carries_what_the_grants_copied),
		T(test_built_round_trips_with_its_descriptors),
		T(test_reap_list_over_its_bound_is_refused),
		T(test_reap_list_round_trips),
		T(test_text_of_another_type_is_refused),
		T(test_hello_carries_the_map_descriptor),
		T(test_hello_carries_the_bypass_log_alone_or_with_the_map),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
