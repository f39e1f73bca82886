/* Listening sockets: what sock_check accepts from a hand-over, and not. */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/sock.h"

static struct sockaddr_in
loopback_any_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sin;
}

static void
test_bound_tcp_listener_passes_and_has_a_port(void **state)
{
	struct sockaddr_in sin = loopback_any_port();
	int fd = sock_bind((struct sockaddr *)&sin, sizeof(sin), SOCK_STREAM);

	assert_true(fd >= 0);
	assert_int_not_equal(sock_port(fd), 0);
	assert_int_equal(sock_check(fd, AF_INET, SOCK_STREAM), 0);
	close(fd);
}

static void
test_udp_socket_is_refused_as_tcp(void **state)
{
	struct sockaddr_in sin = loopback_any_port();
	int fd = sock_bind((struct sockaddr *)&sin, sizeof(sin), SOCK_DGRAM);

	assert_true(fd >= 0);
	assert_int_equal(sock_check(fd, AF_INET, SOCK_DGRAM), 0);
	assert_int_equal(sock_check(fd, AF_INET, SOCK_STREAM), -1);
	assert_int_equal(errno, EPROTOTYPE);
	close(fd);
}

static void
test_unbound_or_not_listening_socket_is_refused(void **state)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_int_equal(sock_check(fd, AF_INET, SOCK_STREAM), -1);
	assert_int_equal(errno, EINVAL);
	close(fd);
}

static void
test_wrong_family_is_refused(void **state)
{
	struct sockaddr_in sin = loopback_any_port();
	int fd = sock_bind((struct sockaddr *)&sin, sizeof(sin), SOCK_STREAM);

	assert_int_equal(sock_check(fd, AF_INET6, SOCK_STREAM), -1);
	close(fd);
}

static void
test_pipe_is_not_a_socket(void **state)
{
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(sock_check(fds[0], AF_INET, SOCK_STREAM), -1);
	assert_int_equal(errno, ENOTSOCK);
	close(fds[0]);
	close(fds[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_tcp_listener_passes_and_has_a_port),
		cmocka_unit_test(test_udp_socket_is_refused_as_tcp),
		cmocka_unit_test(test_unbound_or_not_listening_socket_is_refused),
		cmocka_unit_test(test_wrong_family_is_refused),
		cmocka_unit_test(test_pipe_is_not_a_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
