/* Unit tests for broker/cli/forward-spec (corral forward's first
 * argument): the forms it takes, loopback only, and every refusal named. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "broker/cli/forward-spec.h"

static struct forward_spec spec;
static char why[FORWARD_SPEC_REASON_MAX_BYTES];

/* TEXT parses as a TCP forward of ADDR:HOST_PORT to SANDBOX_PORT. */
static void
assert_tcp(const char *text, const char *addr, unsigned host_port, unsigned sandbox_port)
{
	char got[INET6_ADDRSTRLEN];
	unsigned port;

	assert_int_equal(forward_spec_parse(text, &spec, why, sizeof(why)), 0);
	assert_false(spec.unix_socket);
	assert_int_equal(spec.sandbox_port, sandbox_port);
	if (spec.addr.ss_family == AF_INET) {
		const struct sockaddr_in *v4 = (const void *)&spec.addr;

		inet_ntop(AF_INET, &v4->sin_addr, got, sizeof(got));
		port = ntohs(v4->sin_port);
		assert_int_equal(spec.addr_len, sizeof(*v4));
	} else {
		const struct sockaddr_in6 *v6 = (const void *)&spec.addr;

		assert_int_equal(spec.addr.ss_family, AF_INET6);
		inet_ntop(AF_INET6, &v6->sin6_addr, got, sizeof(got));
		port = ntohs(v6->sin6_port);
	}
	assert_string_equal(got, addr);
	assert_int_equal(port, host_port);
}

/* TEXT is refused with a reason holding WORD. */
static void
assert_refused(const char *text, const char *word)
{
	why[0] = '\0';
	assert_int_equal(forward_spec_parse(text, &spec, why, sizeof(why)), -1);
	if (strstr(why, word) == NULL)
		fail_msg("%s: \"%s\" does not say \"%s\"", text, why, word);
}

static void
test_two_ports_listen_on_127_0_0_1(void **state)
{
	(void)state;
	assert_tcp("8080:8000", "127.0.0.1", 8080, 8000);
	assert_tcp("0:80", "127.0.0.1", 0, 80);
}

static void
test_an_address_before_the_ports(void **state)
{
	(void)state;
	assert_tcp("127.0.0.2:9000:3000", "127.0.0.2", 9000, 3000);
	assert_tcp("localhost:9000:3000", "127.0.0.1", 9000, 3000);
	assert_tcp("[::1]:9000:3000", "::1", 9000, 3000);
	assert_tcp("::1:9000:3000", "::1", 9000, 3000);
}

static void
test_a_path_is_a_unix_socket(void **state)
{
	const struct sockaddr_un *un = (const void *)&spec.addr;

	(void)state;
	assert_int_equal(forward_spec_parse("/run/user/1000/app.sock:8000", &spec, why,
	    sizeof(why)), 0);
	assert_true(spec.unix_socket);
	assert_string_equal(un->sun_path, "/run/user/1000/app.sock");
	assert_int_equal(spec.sandbox_port, 8000);
	assert_int_equal(forward_spec_parse("./a:b.sock:1", &spec, why, sizeof(why)), 0);
	assert_string_equal(un->sun_path, "./a:b.sock");
}

static void
test_only_loopback_addresses(void **state)
{
	(void)state;
	assert_refused("0.0.0.0:8080:8000", "loopback");
	assert_refused("192.168.1.5:8080:8000", "loopback");
	assert_refused("[::]:8080:8000", "loopback");
	assert_refused("example.com:8080:8000", "not an IP address");
}

static void
test_bad_ports_are_named(void **state)
{
	char long_path[200];

	(void)state;
	assert_refused("8080", "SANDBOX_PORT");
	assert_refused("8080:0", "SANDBOX_PORT");
	assert_refused("8080:65536", "SANDBOX_PORT");
	assert_refused("8080:80x", "SANDBOX_PORT");
	assert_refused(":80", "HOST_PORT");
	assert_refused("70000:80", "HOST_PORT");
	assert_refused("-1:80", "HOST_PORT");
	assert_refused("127.0.0.1::80", "HOST_PORT");
	memset(long_path, 'a', sizeof(long_path));
	long_path[0] = '/';
	snprintf(long_path + 150, sizeof(long_path) - 150, ":80");
	assert_refused(long_path, "longer than");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_ports_listen_on_127_0_0_1),
		cmocka_unit_test(test_an_address_before_the_ports),
		cmocka_unit_test(test_a_path_is_a_unix_socket),
		cmocka_unit_test(test_only_loopback_addresses),
		cmocka_unit_test(test_bad_ports_are_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
