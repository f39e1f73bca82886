/* Unit tests for CIDR parsing, containment and the never-reachable rule
 * (policy/cidr.c). */
#include "config.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "policy/cidr.h"

/* Parses TEXT, which must be a valid CIDR. */
static struct policy_cidr
cidr(const char *text)
{
	struct policy_cidr c;

	assert_int_equal(policy_cidr_parse(text, &c), POLICY_CIDR_OK);
	return c;
}

/* The range an allow list naming TEXT would touch, or NULL. */
static const char *
unreachable(const char *text)
{
	struct policy_cidr c = cidr(text);
	const char *range = NULL;

	if (policy_cidr_forbidden(&c, &range) != POLICY_CIDR_UNREACHABLE)
		return NULL;
	return range;
}

static void
test_parse_reads_ipv4(void **state)
{
	struct policy_cidr c = cidr("10.1.0.0/16");
	const uint8_t want[4] = { 10, 1, 0, 0 };

	(void)state;
	assert_int_equal(c.family, AF_INET);
	assert_int_equal(c.prefix_len, 16);
	assert_memory_equal(c.addr, want, sizeof(want));
}

static void
test_parse_reads_ipv6(void **state)
{
	struct policy_cidr c = cidr("fd00::/8");

	(void)state;
	assert_int_equal(c.family, AF_INET6);
	assert_int_equal(c.prefix_len, 8);
	assert_int_equal(c.addr[0], 0xfd);
}

static void
test_parse_requires_a_prefix(void **state)
{
	struct policy_cidr c;

	(void)state;
	assert_int_equal(policy_cidr_parse("10.0.0.0", &c), POLICY_CIDR_ERR_FORM);
}

static void
test_parse_refuses_loose_ipv4_forms(void **state)
{
	const char *bad[] = { "10/8", "10.0.0/24", "010.0.0.0/8", "10.0.0.256/32",
		" 10.0.0.0/8", "/8", "0x0a.0.0.0/8" };
	struct policy_cidr c;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(policy_cidr_parse(bad[i], &c), POLICY_CIDR_ERR_ADDRESS);
}

static void
test_parse_refuses_an_ipv6_zone(void **state)
{
	struct policy_cidr c;

	(void)state;
	assert_int_equal(policy_cidr_parse("fe80::%eth0/64", &c), POLICY_CIDR_ERR_ADDRESS);
}

static void
test_parse_refuses_prefix_that_is_not_plain_digits(void **state)
{
	const char *bad[] = { "10.0.0.0/", "10.0.0.0/08", "10.0.0.0/+8", "10.0.0.0/-1",
		"10.0.0.0/8 ", "10.0.0.0/1000", "10.0.0.0/8/8" };
	struct policy_cidr c;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(policy_cidr_parse(bad[i], &c), POLICY_CIDR_ERR_PREFIX);
}

static void
test_parse_refuses_prefix_longer_than_the_family(void **state)
{
	struct policy_cidr c;

	(void)state;
	assert_int_equal(policy_cidr_parse("10.0.0.0/33", &c), POLICY_CIDR_ERR_PREFIX_RANGE);
	assert_int_equal(c.family, AF_INET);
	assert_int_equal(policy_cidr_parse("::/129", &c), POLICY_CIDR_ERR_PREFIX_RANGE);
	assert_int_equal(c.family, AF_INET6);
	assert_int_equal(policy_cidr_parse("::/128", &c), POLICY_CIDR_OK);
}

static void
test_host_bits_are_refused_and_mask_gives_the_network(void **state)
{
	struct policy_cidr c;
	char text[INET6_ADDRSTRLEN];

	(void)state;
	assert_int_equal(policy_cidr_parse("10.1.2.3/16", &c), POLICY_CIDR_ERR_HOST_BITS);
	assert_int_equal(c.prefix_len, 16);
	policy_cidr_mask(&c);
	assert_non_null(inet_ntop(AF_INET, c.addr, text, sizeof(text)));
	assert_string_equal(text, "10.1.0.0");
}

static void
test_parse_address_is_a_full_length_prefix(void **state)
{
	struct policy_cidr c;

	(void)state;
	assert_int_equal(policy_cidr_parse_address("192.0.2.7", &c), POLICY_CIDR_OK);
	assert_int_equal(c.prefix_len, 32);
	assert_int_equal(policy_cidr_parse_address("2001:db8::1", &c), POLICY_CIDR_OK);
	assert_int_equal(c.prefix_len, 128);
	assert_int_equal(policy_cidr_parse_address("192.0.2.7/32", &c), POLICY_CIDR_ERR_ADDRESS);
}

static void
test_contains_checks_the_prefix_bits(void **state)
{
	struct policy_cidr c = cidr("172.16.0.0/12");
	const uint8_t in[4] = { 172, 31, 255, 255 }, out[4] = { 172, 32, 0, 0 };

	(void)state;
	assert_true(policy_cidr_contains(&c, AF_INET, in));
	assert_false(policy_cidr_contains(&c, AF_INET, out));
}

static void
test_contains_is_false_across_families_and_for_null(void **state)
{
	struct policy_cidr c = cidr("::/0");
	const uint8_t v4[16] = { 10 };

	(void)state;
	assert_false(policy_cidr_contains(&c, AF_INET, v4));
	assert_false(policy_cidr_contains(NULL, AF_INET6, v4));
	assert_true(policy_cidr_contains(&c, AF_INET6, v4));
}

static void
test_slash_zero_is_every_address(void **state)
{
	struct policy_cidr c = cidr("0.0.0.0/0");
	const char *range = "unset";

	(void)state;
	assert_int_equal(policy_cidr_forbidden(&c, &range), POLICY_CIDR_EVERYTHING);
	assert_null(range);
}

static void
test_loopback_link_local_and_unspecified_are_unreachable(void **state)
{
	(void)state;
	assert_string_equal(unreachable("127.1.0.0/16"), "the loopback range 127.0.0.0/8");
	assert_string_equal(unreachable("169.254.169.254/32"), "the link-local range 169.254.0.0/16");
	assert_string_equal(unreachable("0.0.0.0/32"), "the unspecified address 0.0.0.0");
	assert_string_equal(unreachable("::1/128"), "the loopback address ::1");
	assert_string_equal(unreachable("fe80::/64"), "the link-local range fe80::/10");
}

static void
test_a_range_holding_a_forbidden_one_is_unreachable(void **state)
{
	(void)state;
	assert_string_equal(unreachable("96.0.0.0/3"), "the loopback range 127.0.0.0/8");
	assert_string_equal(unreachable("fe80::/9"), "the link-local range fe80::/10");
}

static void
test_ipv4_in_ipv6_forms_are_unreachable(void **state)
{
	(void)state;
	assert_string_equal(unreachable("::ffff:127.0.0.0/104"), "the loopback range 127.0.0.0/8");
	assert_string_equal(unreachable("::7f00:0/104"), "the loopback range 127.0.0.0/8");
	assert_string_equal(unreachable("64:ff9b::a9fe:0/112"), "the link-local range 169.254.0.0/16");
}

static void
test_ipv6_unspecified_is_named_as_itself(void **state)
{
	(void)state;
	assert_string_equal(unreachable("::/128"), "the unspecified address ::");
}

static void
test_private_ranges_are_allowed(void **state)
{
	const char *ok[] = { "10.0.0.0/8", "192.168.1.0/24", "fd00::/8", "::ffff:10.0.0.0/104" };
	const char *range = "unset";

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct policy_cidr c = cidr(ok[i]);

		assert_int_equal(policy_cidr_forbidden(&c, &range), POLICY_CIDR_ALLOWED);
		assert_null(range);
	}
}

static void
test_touches_reads_the_callers_table(void **state)
{
	static const struct policy_cidr_range table[] = {
		{ { AF_INET, { 224 }, 3 }, "multicast" },
	};
	struct policy_cidr in = cidr("239.0.0.0/8"), out = cidr("10.0.0.0/8");

	(void)state;
	assert_string_equal(policy_cidr_touches(&in, table, 1), "multicast");
	assert_null(policy_cidr_touches(&out, table, 1));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_reads_ipv4),
		cmocka_unit_test(test_parse_reads_ipv6),
		cmocka_unit_test(test_parse_requires_a_prefix),
		cmocka_unit_test(test_parse_refuses_loose_ipv4_forms),
		cmocka_unit_test(test_parse_refuses_an_ipv6_zone),
		cmocka_unit_test(test_parse_refuses_prefix_that_is_not_plain_digits),
		cmocka_unit_test(test_parse_refuses_prefix_longer_than_the_family),
		cmocka_unit_test(test_host_bits_are_refused_and_mask_gives_the_network),
		cmocka_unit_test(test_parse_address_is_a_full_length_prefix),
		cmocka_unit_test(test_contains_checks_the_prefix_bits),
		cmocka_unit_test(test_contains_is_false_across_families_and_for_null),
		cmocka_unit_test(test_slash_zero_is_every_address),
		cmocka_unit_test(test_loopback_link_local_and_unspecified_are_unreachable),
		cmocka_unit_test(test_a_range_holding_a_forbidden_one_is_unreachable),
		cmocka_unit_test(test_ipv4_in_ipv6_forms_are_unreachable),
		cmocka_unit_test(test_ipv6_unspecified_is_named_as_itself),
		cmocka_unit_test(test_private_ranges_are_allowed),
		cmocka_unit_test(test_touches_reads_the_callers_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
