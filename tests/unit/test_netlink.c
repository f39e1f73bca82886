/* Tests of broker/netlink in real network namespaces (root only; skipped
 * otherwise). The program first moves itself into a private network
 * namespace, which plays the host: nothing it does touches the machine's
 * own network, and every namespace it makes is held only by a descriptor,
 * so all of them vanish with the process, even if it is killed. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker/monitor/netlink.h"

/* The sandboxes' interface group in these tests. */
#define TEST_GROUP 51
/* How long the kernel may take to tear a dead namespace's links down. */
#define TEST_DELLINK_WAIT_MS 10000
/* Sandbox setups timed, and the budget of a whole create. */
#define TEST_BENCH_ITERATIONS 200
#define TEST_BENCH_ITERATIONS_SLOW 10
#define TEST_BENCH_BUDGET_US 20000
#define TEST_OUTPUT_MAX_BYTES 8192
#define TEST_UDP_WAIT_MS 1000
#define TEST_UDP_TRIES 5

/* Opens a new network namespace and returns its descriptor, leaving the
 * calling thread where it was. */
static int
test_netns_new(void)
{
	int here = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int fd;

	assert_true(here != -1);
	assert_int_equal(unshare(CLONE_NEWNET), 0);
	fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_int_equal(setns(here, CLONE_NEWNET), 0);
	close(here);
	assert_true(fd != -1);
	return fd;
}

/* Runs the shell command CMD inside NETNS_FD (-1: here) and returns its
 * output (a static buffer). */
static const char *
test_output(int netns_fd, const char *cmd)
{
	static char out[TEST_OUTPUT_MAX_BYTES];
	int pipefd[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		if (netns_fd != -1 && setns(netns_fd, CLONE_NEWNET) == -1)
			_exit(127);
		dup2(pipefd[1], 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while (len < sizeof(out) - 1 && (n = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return out;
}

/* Reads the first bytes of the file PATH inside NETNS_FD. */
static const char *
test_read_in(int netns_fd, const char *path)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "cat %s", path);
	return test_output(netns_fd, cmd);
}

/* Makes a socket of TYPE that lives in NETNS_FD. */
static int
test_socket_in(int netns_fd, int type)
{
	int here = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int fd;

	assert_true(here != -1);
	assert_int_equal(setns(netns_fd, CLONE_NEWNET), 0);
	fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	assert_int_equal(setns(here, CLONE_NEWNET), 0);
	close(here);
	assert_true(fd != -1);
	return fd;
}

static struct in_addr
test_addr(const char *text)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, text, &a), 1);
	return a;
}

/* The /30 of SLOT in 10.231.0.0/16: HOST_SIDE picks .1, else .2. */
static struct in_addr
test_slot_addr(int slot, int host_side)
{
	struct in_addr a;

	a.s_addr = htonl((10U << 24) | (231U << 16) | (uint32_t)(slot * 4 + (host_side ? 1 : 2)));
	return a;
}

/* Everything a create does to the network for SLOT: the veth into NETNS_FD,
 * IPv6 off on both ends, addresses, links up (the sandbox's lo too), default
 * route. */
static int
test_sandbox_net(struct nl *host, int netns_fd, int slot)
{
	char hname[IFNAMSIZ], sname[IFNAMSIZ];
	struct in_addr h = test_slot_addr(slot, 1), s = test_slot_addr(slot, 0);
	struct nl *in;
	int hidx, sidx, ok;

	snprintf(hname, sizeof(hname), "crs%dh", slot);
	snprintf(sname, sizeof(sname), "crs%ds", slot);
	if (nl_veth_create(host, hname, sname, netns_fd, TEST_GROUP, &hidx) == -1 ||
	    nl_ipv6_disable(-1, hname) == -1 || nl_ipv6_disable(netns_fd, sname) == -1 ||
	    nl_addr_add(host, hidx, AF_INET, &h, 30) == -1 || nl_link_up(host, hidx) == -1)
		return -1;
	in = nl_open_in_netns(netns_fd);
	if (in == NULL)
		return -1;
	ok = (sidx = nl_ifindex(in, sname)) > 0 && nl_addr_add(in, sidx, AF_INET, &s, 30) == 0 &&
	    nl_link_up(in, sidx) == 0 && nl_link_up(in, 1) == 0 &&
	    nl_route_add_default(in, sidx, &h) == 0;
	if (!ok)
		fprintf(stderr, "# %s\n", nl_reason(in));
	nl_close(in);
	return ok ? 0 : -1;
}

static void
test_veth_puts_peer_in_namespace_and_host_end_in_group(void **state)
{
	struct nl *host;
	int ns, hidx;

	ns = test_netns_new();
	host = nl_open();
	assert_non_null(host);
	assert_int_equal(nl_veth_create(host, "crs1h", "crs1s", ns, TEST_GROUP, &hidx), 0);
	assert_true(hidx > 0);
	assert_int_equal(nl_ifindex(host, "crs1h"), hidx);
	assert_int_equal(nl_ifindex(host, "crs1s"), -1);
	assert_int_equal(errno, ENODEV);
	assert_non_null(strstr(test_output(-1, "ip -o link show dev crs1h"), "group 51"));
	assert_non_null(strstr(test_output(ns, "ip -o link show"), "crs1s@"));
	nl_close(host);
	close(ns);
}

static void
test_veth_refuses_name_longer_than_ifnamsiz(void **state)
{
	struct nl *host;
	int ns, hidx;

	ns = test_netns_new();
	host = nl_open();
	assert_non_null(host);
	assert_int_equal(nl_veth_create(host, "crs1234567890abh", "crs1s", ns, TEST_GROUP, &hidx), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(nl_reason(host), "veth names"));
	assert_int_equal(nl_veth_create(host, "../x", "crs1s", ns, TEST_GROUP, &hidx), -1);
	nl_close(host);
	close(ns);
}

static void
test_veth_existing_name_fails_with_kernel_reason(void **state)
{
	struct nl *host;
	int ns, hidx;

	ns = test_netns_new();
	host = nl_open();
	assert_non_null(host);
	assert_int_equal(nl_veth_create(host, "crs2h", "crs2s", ns, TEST_GROUP, &hidx), 0);
	assert_int_equal(nl_veth_create(host, "crs2h", "crs3s", ns, TEST_GROUP, &hidx), -1);
	assert_int_equal(errno, EEXIST);
	assert_non_null(strstr(nl_reason(host), "creating the veth pair: File exists"));
	assert_int_equal(nl_link_del(host, nl_ifindex(host, "crs2h")), 0);
	nl_close(host);
	close(ns);
}

static void
test_addr_on_missing_link_fails_with_reason(void **state)
{
	struct nl *host;
	struct in_addr a = test_addr("10.231.255.1");

	host = nl_open();
	assert_non_null(host);
	assert_int_equal(nl_addr_add(host, 999999, AF_INET, &a, 30), -1);
	assert_int_equal(errno, ENODEV);
	assert_non_null(strstr(nl_reason(host), "adding an address"));
	assert_int_equal(nl_addr_add(host, 1, AF_INET, &a, 33), -1);
	assert_int_equal(errno, EINVAL);
	nl_close(host);
}

static void
test_sandbox_side_gets_address_link_and_default_route(void **state)
{
	struct nl *host;
	const char *out;
	int ns;

	ns = test_netns_new();
	host = nl_open();
	assert_non_null(host);
	assert_int_equal(test_sandbox_net(host, ns, 4), 0);
	out = test_output(ns, "ip -o -4 addr show dev crs4s");
	assert_non_null(strstr(out, "inet 10.231.0.18/30"));
	out = test_output(ns, "ip route show default");
	assert_non_null(strstr(out, "default via 10.231.0.17 dev crs4s"));
	assert_non_null(strstr(test_output(ns, "ip -o link show dev crs4s"), "state UP"));
	assert_non_null(strstr(test_output(-1, "ip -o -4 addr show dev crs4h"), "inet 10.231.0.17/30"));
	nl_close(host);
	close(ns);
}

/* Sends a datagram from the sandbox end of slot 5 to its host end. */
static void
test_packet_crosses_veth(void **state)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9999) };
	struct pollfd pfd;
	struct nl *host;
	char buf[8];
	int ns, rx, tx;

	ns = test_netns_new();
	host = nl_open();
	assert_non_null(host);
	assert_int_equal(test_sandbox_net(host, ns, 5), 0);
	to.sin_addr = test_slot_addr(5, 1);
	rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(rx, (struct sockaddr *)&to, sizeof(to)), 0);
	tx = test_socket_in(ns, SOCK_DGRAM);
	pfd = (struct pollfd){ .fd = rx, .events = POLLIN };
	/* A link just brought up may drop the first datagrams while its
	 * carrier settles (seen under load): a few tries, then it must pass. */
	for (int i = 0; i < TEST_UDP_TRIES; i++) {
		assert_int_equal(sendto(tx, "ping", 4, 0, (struct sockaddr *)&to, sizeof(to)), 4);
		if (poll(&pfd, 1, TEST_UDP_WAIT_MS / TEST_UDP_TRIES) == 1)
			break;
	}
	assert_int_equal(poll(&pfd, 1, TEST_UDP_WAIT_MS), 1);
	assert_int_equal(recv(rx, buf, sizeof(buf), 0), 4);
	assert_memory_equal(buf, "ping", 4);
	close(rx);
	close(tx);
	nl_close(host);
	close(ns);
}

static void
test_ipv6_off_on_veth_only_and_loopback_keeps_it(void **state)
{
	struct nl *host;
	int ns;

	ns = test_netns_new();
	host = nl_open();
	assert_non_null(host);
	assert_int_equal(test_sandbox_net(host, ns, 6), 0);
	assert_string_equal(test_read_in(ns, "/proc/sys/net/ipv6/conf/crs6s/disable_ipv6"), "1\n");
	assert_string_equal(test_read_in(-1, "/proc/sys/net/ipv6/conf/crs6h/disable_ipv6"), "1\n");
	assert_string_equal(test_read_in(ns, "/proc/sys/net/ipv6/conf/lo/disable_ipv6"), "0\n");
	assert_string_equal(test_read_in(ns, "/proc/sys/net/ipv6/conf/all/disable_ipv6"), "0\n");
	assert_non_null(strstr(test_output(ns, "ip -6 -o addr show dev lo"), "inet6 ::1/128"));
	assert_null(strstr(test_output(ns, "ip -6 -o addr show dev crs6s"), "inet6"));
	nl_close(host);
	close(ns);
}

static void
test_ipv6_disable_refuses_path_characters(void **state)
{
	assert_int_equal(nl_ipv6_disable(-1, "../all"), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(nl_ipv6_disable(-1, ".."), -1);
	assert_int_equal(nl_ipv6_disable(-1, "nosuchlink0"), -1);
	assert_int_equal(errno, ENOENT);
}

static void
test_link_del_removes_both_ends(void **state)
{
	struct nl *host, *in;
	int ns, hidx;

	ns = test_netns_new();
	host = nl_open();
	in = nl_open_in_netns(ns);
	assert_non_null(host);
	assert_non_null(in);
	assert_int_equal(nl_veth_create(host, "crs7h", "crs7s", ns, TEST_GROUP, &hidx), 0);
	assert_true(nl_ifindex(in, "crs7s") > 0);
	assert_int_equal(nl_link_del(host, hidx), 0);
	assert_int_equal(nl_ifindex(host, "crs7h"), -1);
	assert_int_equal(nl_ifindex(in, "crs7s"), -1);
	assert_int_equal(errno, ENODEV);
	nl_close(in);
	nl_close(host);
	close(ns);
}

/* Remembers whether the deleted link named in ARG went by. */
static void
test_note_dellink(const char *ifname, int ifindex, void *arg)
{
	if (strcmp(ifname, "crs8h") == 0)
		*(int *)arg = ifindex;
}

static void
test_dellink_seen_when_namespace_dies(void **state)
{
	struct nl *host, *watch;
	struct timespec start, now;
	int ns, hidx, seen = 0;
	long waited_ms = 0;

	ns = test_netns_new();
	host = nl_open();
	watch = nl_watch_open();
	assert_non_null(host);
	assert_non_null(watch);
	assert_int_equal(nl_veth_create(host, "crs8h", "crs8s", ns, TEST_GROUP, &hidx), 0);
	assert_int_equal(nl_watch_read(watch, test_note_dellink, &seen), 0);
	assert_int_equal(seen, 0);
	close(ns);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (seen == 0 && waited_ms < TEST_DELLINK_WAIT_MS) {
		struct pollfd pfd = { .fd = nl_fd(watch), .events = POLLIN };

		(void)poll(&pfd, 1, 100);
		assert_true(nl_watch_read(watch, test_note_dellink, &seen) >= 0);
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
	}
	assert_int_equal(seen, hidx);
	assert_int_equal(nl_ifindex(host, "crs8h"), -1);
	printf("# RTM_DELLINK for the host end came %ld ms after the namespace's last descriptor closed\n",
	    waited_ms);
	nl_close(watch);
	nl_close(host);
}

static int
test_cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static long
test_elapsed_us(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000L + (b->tv_nsec - a->tv_nsec) / 1000;
}

/* Whether this run is slowed down by valgrind. */
static int
test_under_valgrind(void)
{
	const char *preload = getenv("LD_PRELOAD");

	return preload != NULL && strstr(preload, "vgpreload") != NULL;
}

/* Times the network setup for fresh namespaces and reports p50 and p90. */
static void
test_sandbox_network_p50_within_budget(void **state)
{
	static long setup_us[TEST_BENCH_ITERATIONS], netns_us[TEST_BENCH_ITERATIONS];
	int n = test_under_valgrind() ? TEST_BENCH_ITERATIONS_SLOW : TEST_BENCH_ITERATIONS;
	struct timespec t0, t1, t2;
	struct nl *host;
	int i, ns;

	host = nl_open();
	assert_non_null(host);
	for (i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ns = test_netns_new();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		assert_int_equal(test_sandbox_net(host, ns, 100 + i), 0);
		clock_gettime(CLOCK_MONOTONIC, &t2);
		close(ns);
		netns_us[i] = test_elapsed_us(&t0, &t1);
		setup_us[i] = test_elapsed_us(&t1, &t2);
	}
	qsort(setup_us, (size_t)n, sizeof(long), test_cmp_long);
	qsort(netns_us, (size_t)n, sizeof(long), test_cmp_long);
	printf("# sandbox network over %d runs: p50 %ld us, p90 %ld us, max %ld us"
	    " (new netns alone: p50 %ld us)\n", n, setup_us[n / 2], setup_us[n * 9 / 10],
	    setup_us[n - 1], netns_us[n / 2]);
	if (!test_under_valgrind())
		assert_true(setup_us[n / 2] < TEST_BENCH_BUDGET_US);
	nl_close(host);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_veth_puts_peer_in_namespace_and_host_end_in_group),
		cmocka_unit_test(test_veth_refuses_name_longer_than_ifnamsiz),
		cmocka_unit_test(test_veth_existing_name_fails_with_kernel_reason),
		cmocka_unit_test(test_addr_on_missing_link_fails_with_reason),
		cmocka_unit_test(test_sandbox_side_gets_address_link_and_default_route),
		cmocka_unit_test(test_packet_crosses_veth),
		cmocka_unit_test(test_ipv6_off_on_veth_only_and_loopback_keeps_it),
		cmocka_unit_test(test_ipv6_disable_refuses_path_characters),
		cmocka_unit_test(test_link_del_removes_both_ends),
		cmocka_unit_test(test_dellink_seen_when_namespace_dies),
		cmocka_unit_test(test_sandbox_network_p50_within_budget),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* cmocka 1.1 prints a skipped test as "not ok # SKIP", a failure to
	 * automake's TAP driver: skip the whole plan instead. */
	if (geteuid() != 0) {
		printf("1..0 # SKIP making network namespaces needs root\n");
		return 0;
	}
	/* The private namespace plays the host, so no link, address or route
	 * these tests make can reach the machine's own network. */
	if (unshare(CLONE_NEWNET) == -1) {
		perror("unshare(CLONE_NEWNET)");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
