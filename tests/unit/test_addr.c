/* Unit tests for egress-proxy/addr: address classes and the dial decision. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <cmocka.h>

#include "egress-proxy/addr.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct class_case {
	const char *text;
	enum addr_class cls;
};

/* A socket address for TEXT (IPv4 or IPv6); the test fails on bad TEXT. */
static struct sockaddr_storage
sockaddr_of(const char *text)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		return ss;
	}
	if (inet_pton(AF_INET6, text, &sin6->sin6_addr) != 1)
		fail_msg("bad test address %s", text);
	sin6->sin6_family = AF_INET6;
	return ss;
}

static enum addr_class
classify(const char *text)
{
	struct sockaddr_storage ss = sockaddr_of(text);

	return addr_classify((struct sockaddr *)&ss);
}

static void
check_classes(const struct class_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		enum addr_class got = classify(cases[i].text);

		if (got != cases[i].cls)
			fail_msg("%s: got %s, want %s", cases[i].text, addr_class_name(got),
			    addr_class_name(cases[i].cls));
	}
}

static struct policy_cidr
cidr(const char *text)
{
	struct policy_cidr c;

	if (addr_cidr_parse(text, &c) != ADDR_OK)
		fail_msg("bad test CIDR %s", text);
	return c;
}

static enum addr_verdict
check(const struct addr_policy *ap, const char *text, const struct policy_cidr *allowed, size_t n)
{
	struct sockaddr_storage ss = sockaddr_of(text);

	return addr_check(ap, (struct sockaddr *)&ss, allowed, n);
}

/* --- Classes: first and last address of each range, and the neighbours --- */

static void
test_ipv4_always_refused_ranges_and_their_edges(void **state)
{
	static const struct class_case cases[] = {
		{ "0.0.0.0", ADDR_CLASS_UNSPECIFIED },
		{ "126.255.255.255", ADDR_CLASS_PUBLIC },
		{ "127.0.0.0", ADDR_CLASS_LOOPBACK },
		{ "127.0.0.1", ADDR_CLASS_LOOPBACK },
		{ "127.255.255.255", ADDR_CLASS_LOOPBACK },
		{ "128.0.0.0", ADDR_CLASS_PUBLIC },
		{ "169.253.255.255", ADDR_CLASS_PUBLIC },
		{ "169.254.0.0", ADDR_CLASS_LINK_LOCAL },
		{ "169.254.169.253", ADDR_CLASS_LINK_LOCAL },
		{ "169.254.169.254", ADDR_CLASS_METADATA },
		{ "169.254.169.255", ADDR_CLASS_LINK_LOCAL },
		{ "169.254.255.255", ADDR_CLASS_LINK_LOCAL },
		{ "169.255.0.0", ADDR_CLASS_PUBLIC },
		{ "223.255.255.255", ADDR_CLASS_PUBLIC },
		{ "224.0.0.0", ADDR_CLASS_MULTICAST },
		{ "239.255.255.255", ADDR_CLASS_MULTICAST },
		{ "255.255.255.254", ADDR_CLASS_RESERVED },
		{ "255.255.255.255", ADDR_CLASS_BROADCAST },
	};

	check_classes(cases, NELEM(cases));
}

static void
test_ipv4_internal_ranges_and_their_edges(void **state)
{
	static const struct class_case cases[] = {
		{ "0.0.0.1", ADDR_CLASS_THIS_NETWORK },
		{ "0.255.255.255", ADDR_CLASS_THIS_NETWORK },
		{ "1.0.0.0", ADDR_CLASS_PUBLIC },
		{ "9.255.255.255", ADDR_CLASS_PUBLIC },
		{ "10.0.0.0", ADDR_CLASS_PRIVATE },
		{ "10.255.255.255", ADDR_CLASS_PRIVATE },
		{ "11.0.0.0", ADDR_CLASS_PUBLIC },
		{ "100.63.255.255", ADDR_CLASS_PUBLIC },
		{ "100.64.0.0", ADDR_CLASS_SHARED },
		{ "100.127.255.255", ADDR_CLASS_SHARED },
		{ "100.128.0.0", ADDR_CLASS_PUBLIC },
		{ "172.15.255.255", ADDR_CLASS_PUBLIC },
		{ "172.16.0.0", ADDR_CLASS_PRIVATE },
		{ "172.31.255.255", ADDR_CLASS_PRIVATE },
		{ "172.32.0.0", ADDR_CLASS_PUBLIC },
		{ "191.255.255.255", ADDR_CLASS_PUBLIC },
		{ "192.0.0.0", ADDR_CLASS_IETF_PROTOCOL },
		{ "192.0.0.255", ADDR_CLASS_IETF_PROTOCOL },
		{ "192.0.1.0", ADDR_CLASS_PUBLIC },
		{ "192.0.1.255", ADDR_CLASS_PUBLIC },
		{ "192.0.2.0", ADDR_CLASS_DOCUMENTATION },
		{ "192.0.2.255", ADDR_CLASS_DOCUMENTATION },
		{ "192.0.3.0", ADDR_CLASS_PUBLIC },
		{ "192.167.255.255", ADDR_CLASS_PUBLIC },
		{ "192.168.0.0", ADDR_CLASS_PRIVATE },
		{ "192.168.255.255", ADDR_CLASS_PRIVATE },
		{ "192.169.0.0", ADDR_CLASS_PUBLIC },
		{ "198.17.255.255", ADDR_CLASS_PUBLIC },
		{ "198.18.0.0", ADDR_CLASS_BENCHMARK },
		{ "198.19.255.255", ADDR_CLASS_BENCHMARK },
		{ "198.20.0.0", ADDR_CLASS_PUBLIC },
		{ "198.51.99.255", ADDR_CLASS_PUBLIC },
		{ "198.51.100.0", ADDR_CLASS_DOCUMENTATION },
		{ "198.51.100.255", ADDR_CLASS_DOCUMENTATION },
		{ "198.51.101.0", ADDR_CLASS_PUBLIC },
		{ "203.0.112.255", ADDR_CLASS_PUBLIC },
		{ "203.0.113.0", ADDR_CLASS_DOCUMENTATION },
		{ "203.0.113.255", ADDR_CLASS_DOCUMENTATION },
		{ "203.0.114.0", ADDR_CLASS_PUBLIC },
		{ "240.0.0.0", ADDR_CLASS_RESERVED },
		{ "8.8.8.8", ADDR_CLASS_PUBLIC },
	};

	check_classes(cases, NELEM(cases));
}

static void
test_ipv6_always_refused_ranges_and_their_edges(void **state)
{
	static const struct class_case cases[] = {
		{ "::", ADDR_CLASS_UNSPECIFIED },
		{ "::1", ADDR_CLASS_LOOPBACK },
		{ "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_RESERVED },
		{ "fe80::", ADDR_CLASS_LINK_LOCAL },
		{ "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_LINK_LOCAL },
		{ "fd00:ec2::253", ADDR_CLASS_ULA },
		{ "fd00:ec2::254", ADDR_CLASS_METADATA },
		{ "fd00:ec2::255", ADDR_CLASS_ULA },
		{ "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_SITE_LOCAL },
		{ "ff00::", ADDR_CLASS_MULTICAST },
		{ "ff02::1", ADDR_CLASS_MULTICAST },
		{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_MULTICAST },
	};

	check_classes(cases, NELEM(cases));
}

static void
test_ipv6_internal_ranges_and_their_edges(void **state)
{
	static const struct class_case cases[] = {
		{ "::8.8.8.8", ADDR_CLASS_V4_COMPAT },
		{ "::255.255.255.254", ADDR_CLASS_RESERVED },
		{ "::1:0:0", ADDR_CLASS_RESERVED },
		{ "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_RESERVED },
		{ "64:ff9b::8.8.8.8", ADDR_CLASS_NAT64 },
		{ "64:ff9b::1:0:0", ADDR_CLASS_RESERVED },
		{ "64:ff9b:1::", ADDR_CLASS_NAT64 },
		{ "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_NAT64 },
		{ "64:ff9b:2::", ADDR_CLASS_RESERVED },
		{ "100::", ADDR_CLASS_DISCARD },
		{ "100::ffff:ffff:ffff:ffff", ADDR_CLASS_DISCARD },
		{ "100:0:0:1::", ADDR_CLASS_RESERVED },
		{ "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_RESERVED },
		{ "2000::", ADDR_CLASS_PUBLIC },
		{ "2001::", ADDR_CLASS_TEREDO },
		{ "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_TEREDO },
		{ "2001:1::", ADDR_CLASS_PUBLIC },
		{ "2001:2::", ADDR_CLASS_BENCHMARK },
		{ "2001:2:0:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_BENCHMARK },
		{ "2001:2:1::", ADDR_CLASS_PUBLIC },
		{ "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_PUBLIC },
		{ "2001:db8::", ADDR_CLASS_DOCUMENTATION },
		{ "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_DOCUMENTATION },
		{ "2001:db9::", ADDR_CLASS_PUBLIC },
		{ "2001:4860:4860::8888", ADDR_CLASS_PUBLIC },
		{ "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_PUBLIC },
		{ "2002:808:808::", ADDR_CLASS_6TO4 },
		{ "2003::", ADDR_CLASS_PUBLIC },
		{ "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_PUBLIC },
		{ "4000::", ADDR_CLASS_RESERVED },
		{ "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_RESERVED },
		{ "fc00::", ADDR_CLASS_ULA },
		{ "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_ULA },
		{ "fe00::", ADDR_CLASS_RESERVED },
		{ "fec0::", ADDR_CLASS_SITE_LOCAL },
	};

	check_classes(cases, NELEM(cases));
}

static void
test_embedded_ipv4_forms_take_the_embedded_class(void **state)
{
	static const struct class_case cases[] = {
		{ "::ffff:8.8.8.8", ADDR_CLASS_PUBLIC },
		{ "::ffff:127.0.0.1", ADDR_CLASS_LOOPBACK },
		{ "::ffff:10.0.0.1", ADDR_CLASS_PRIVATE },
		{ "::ffff:169.254.169.254", ADDR_CLASS_METADATA },
		{ "::ffff:0.0.0.0", ADDR_CLASS_UNSPECIFIED },
		{ "::ffff:255.255.255.255", ADDR_CLASS_BROADCAST },
		{ "::fffe:ffff:ffff", ADDR_CLASS_RESERVED },
		{ "::127.0.0.1", ADDR_CLASS_LOOPBACK },
		{ "::0.0.0.2", ADDR_CLASS_THIS_NETWORK },
		{ "2002::", ADDR_CLASS_UNSPECIFIED },
		{ "2002:7f00:1::", ADDR_CLASS_LOOPBACK },
		{ "2002:a9fe:a9fe::", ADDR_CLASS_METADATA },
		{ "2002:c0a8:101::1", ADDR_CLASS_PRIVATE },
		{ "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_CLASS_BROADCAST },
		{ "64:ff9b::a00:1", ADDR_CLASS_PRIVATE },
		{ "64:ff9b::7f00:1", ADDR_CLASS_LOOPBACK },
		{ "64:ff9b::e000:1", ADDR_CLASS_MULTICAST },
	};

	check_classes(cases, NELEM(cases));
}

static void
test_non_inet_family_is_invalid(void **state)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	assert_int_equal(addr_classify((struct sockaddr *)&sun), ADDR_CLASS_INVALID);
	assert_int_equal(addr_classify(NULL), ADDR_CLASS_INVALID);
	assert_int_equal(addr_check(NULL, (struct sockaddr *)&sun, NULL, 0), ADDR_DENY_INVALID);
	assert_int_equal(addr_check(NULL, NULL, NULL, 0), ADDR_DENY_INVALID);
}

/* --- The decision --- */

static void
test_public_address_is_allowed(void **state)
{
	assert_int_equal(check(NULL, "8.8.8.8", NULL, 0), ADDR_ALLOW_PUBLIC);
	assert_int_equal(check(NULL, "2606:4700::1111", NULL, 0), ADDR_ALLOW_PUBLIC);
	assert_int_equal(check(NULL, "::ffff:8.8.8.8", NULL, 0), ADDR_ALLOW_PUBLIC);
}

static void
test_internal_address_is_refused_without_allow_lists(void **state)
{
	assert_int_equal(check(NULL, "10.0.0.1", NULL, 0), ADDR_DENY_INTERNAL);
	assert_int_equal(check(NULL, "fd12::1", NULL, 0), ADDR_DENY_INTERNAL);
	assert_int_equal(check(NULL, "64:ff9b::8.8.8.8", NULL, 0), ADDR_DENY_INTERNAL);
	assert_string_equal(addr_verdict_reason(ADDR_DENY_INTERNAL), "internal");
}

static void
test_entry_allowed_ips_let_an_internal_address_through(void **state)
{
	struct policy_cidr allowed[] = { cidr("10.0.0.0/8"), cidr("fd12::/16") };

	assert_int_equal(check(NULL, "10.1.2.3", allowed, 2), ADDR_ALLOW_LISTED);
	assert_int_equal(check(NULL, "fd12::1", allowed, 2), ADDR_ALLOW_LISTED);
	assert_int_equal(check(NULL, "172.16.0.1", allowed, 2), ADDR_DENY_INTERNAL);
	assert_int_equal(check(NULL, "fd13::1", allowed, 2), ADDR_DENY_INTERNAL);
}

static void
test_operator_allow_cidrs_let_an_internal_address_through(void **state)
{
	struct addr_policy *ap = addr_policy_new();
	struct policy_cidr c = cidr("192.168.0.0/16");

	assert_non_null(ap);
	assert_int_equal(check(ap, "192.168.5.5", NULL, 0), ADDR_DENY_INTERNAL);
	assert_int_equal(addr_policy_add_allow(ap, &c), ADDR_OK);
	assert_int_equal(check(ap, "192.168.5.5", NULL, 0), ADDR_ALLOW_LISTED);
	assert_int_equal(check(ap, "100.64.0.1", NULL, 0), ADDR_DENY_INTERNAL);
	addr_policy_free(ap);
}

static void
test_allow_lists_never_open_the_always_refused_classes(void **state)
{
	static const struct {
		const char *text;
		enum addr_verdict v;
	} cases[] = {
		{ "127.0.0.1", ADDR_DENY_LOOPBACK },
		{ "::1", ADDR_DENY_LOOPBACK },
		{ "::ffff:127.0.0.1", ADDR_DENY_LOOPBACK },
		{ "2002:7f00:1::", ADDR_DENY_LOOPBACK },
		{ "64:ff9b::7f00:1", ADDR_DENY_LOOPBACK },
		{ "169.254.1.1", ADDR_DENY_LINK_LOCAL },
		{ "fe80::1", ADDR_DENY_LINK_LOCAL },
		{ "169.254.169.254", ADDR_DENY_METADATA },
		{ "fd00:ec2::254", ADDR_DENY_METADATA },
		{ "0.0.0.0", ADDR_DENY_UNSPECIFIED },
		{ "::", ADDR_DENY_UNSPECIFIED },
		{ "255.255.255.255", ADDR_DENY_BROADCAST },
		{ "224.0.0.1", ADDR_DENY_MULTICAST },
		{ "ff02::1", ADDR_DENY_MULTICAST },
	};
	struct policy_cidr everything[] = { cidr("0.0.0.0/0"), cidr("::/0") };
	struct addr_policy *ap = addr_policy_new();

	assert_non_null(ap);
	assert_int_equal(addr_policy_add_allow(ap, &everything[0]), ADDR_OK);
	assert_int_equal(addr_policy_add_allow(ap, &everything[1]), ADDR_OK);
	for (size_t i = 0; i < NELEM(cases); i++) {
		enum addr_verdict v = check(ap, cases[i].text, everything, 2);

		if (v != cases[i].v)
			fail_msg("%s: got %s", cases[i].text, addr_verdict_reason(v));
		assert_false(addr_verdict_allowed(v));
	}
	assert_int_equal(check(ap, "10.0.0.1", everything, 2), ADDR_ALLOW_LISTED);
	addr_policy_free(ap);
}

static void
test_sandbox_pool_is_refused_even_when_allowed(void **state)
{
	struct addr_policy *ap = addr_policy_new();
	struct policy_cidr pool = cidr("10.231.0.0/16"), wide = cidr("10.0.0.0/8");

	assert_non_null(ap);
	assert_int_equal(addr_policy_add_pool(ap, &pool), ADDR_OK);
	assert_int_equal(addr_policy_add_allow(ap, &wide), ADDR_OK);
	assert_int_equal(check(ap, "10.231.3.1", &wide, 1), ADDR_DENY_SANDBOX_POOL);
	assert_int_equal(check(ap, "10.231.255.255", &wide, 1), ADDR_DENY_SANDBOX_POOL);
	assert_int_equal(check(ap, "10.232.0.0", &wide, 1), ADDR_ALLOW_LISTED);
	assert_int_equal(check(ap, "10.230.255.255", &wide, 1), ADDR_ALLOW_LISTED);
	assert_string_equal(addr_verdict_reason(ADDR_DENY_SANDBOX_POOL), "sandbox_pool");
	addr_policy_free(ap);
}

static void
test_embedded_forms_of_the_pool_are_refused(void **state)
{
	struct addr_policy *ap = addr_policy_new();
	struct policy_cidr pool = cidr("10.231.0.0/16");
	struct policy_cidr wide[] = { cidr("0.0.0.0/0"), cidr("::/0") };

	assert_non_null(ap);
	assert_int_equal(addr_policy_add_pool(ap, &pool), ADDR_OK);
	assert_int_equal(check(ap, "::ffff:10.231.0.1", wide, 2), ADDR_DENY_SANDBOX_POOL);
	assert_int_equal(check(ap, "2002:ae7:1::", wide, 2), ADDR_DENY_SANDBOX_POOL);
	assert_int_equal(check(ap, "64:ff9b::ae7:1", wide, 2), ADDR_DENY_SANDBOX_POOL);
	addr_policy_free(ap);
}

static void
test_host_address_is_refused_even_when_public_or_allowed(void **state)
{
	struct addr_policy *ap = addr_policy_new();
	struct policy_cidr own4 = cidr("192.168.1.10"), own_pub = cidr("8.8.4.4/32");
	struct policy_cidr own6 = cidr("2001:db8::10/128"), wide[] = { cidr("0.0.0.0/0"), cidr("::/0") };

	assert_non_null(ap);
	assert_int_equal(addr_policy_add_local(ap, &own4), ADDR_OK);
	assert_int_equal(addr_policy_add_local(ap, &own_pub), ADDR_OK);
	assert_int_equal(addr_policy_add_local(ap, &own6), ADDR_OK);
	assert_int_equal(check(ap, "192.168.1.10", wide, 2), ADDR_DENY_HOST_ADDRESS);
	assert_int_equal(check(ap, "8.8.4.4", NULL, 0), ADDR_DENY_HOST_ADDRESS);
	assert_int_equal(check(ap, "2001:db8::10", wide, 2), ADDR_DENY_HOST_ADDRESS);
	assert_int_equal(check(ap, "::ffff:8.8.4.4", NULL, 0), ADDR_DENY_HOST_ADDRESS);
	assert_int_equal(check(ap, "192.168.1.11", wide, 2), ADDR_ALLOW_LISTED);
	assert_string_equal(addr_verdict_reason(ADDR_DENY_HOST_ADDRESS), "host_address");
	addr_policy_free(ap);
}

static void
test_v4_mapped_address_matches_an_ipv4_allow_list(void **state)
{
	struct policy_cidr allowed = cidr("10.0.0.0/8");

	assert_int_equal(check(NULL, "::ffff:10.0.0.1", &allowed, 1), ADDR_ALLOW_LISTED);
}

static void
test_6to4_form_is_not_opened_by_an_ipv4_allow_list(void **state)
{
	struct policy_cidr v4 = cidr("10.0.0.0/8"), sixtofour = cidr("2002::/16");

	assert_int_equal(check(NULL, "2002:a00:1::", &v4, 1), ADDR_DENY_INTERNAL);
	assert_int_equal(check(NULL, "2002:a00:1::", &sixtofour, 1), ADDR_ALLOW_LISTED);
}

/* --- Parsing and the policy's capacity --- */

static void
test_strict_ipv4_parse_accepts_only_dotted_quads(void **state)
{
	static const char *const bad[] = {
		"127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1", "127.0.0.1.", "1.2.3.4.5",
		"256.0.0.1", "1.2.3", "+1.2.3.4", "1.2.3.04", "", "1..2.3", " 1.2.3.4", "1.2.3.4 ",
	};
	uint8_t out[4];

	assert_true(addr_parse_ipv4("0.0.0.0", 7, out));
	assert_true(addr_parse_ipv4("255.255.255.255", 15, out));
	assert_int_equal(out[3], 255);
	assert_true(addr_parse_ipv4("10.20.30.40:443", 11, out));
	assert_int_equal(out[3], 40);
	for (size_t i = 0; i < NELEM(bad); i++)
		if (addr_parse_ipv4(bad[i], strlen(bad[i]), out))
			fail_msg("accepted %s", bad[i]);
}

static void
test_cidr_parse_reads_addresses_and_prefixes(void **state)
{
	struct policy_cidr c;

	assert_int_equal(addr_cidr_parse("10.0.0.0/8", &c), ADDR_OK);
	assert_int_equal(c.family, AF_INET);
	assert_int_equal(c.prefix_len, 8);
	assert_int_equal(c.addr[0], 10);
	assert_int_equal(addr_cidr_parse("192.0.2.7", &c), ADDR_OK);
	assert_int_equal(c.prefix_len, 32);
	assert_int_equal(addr_cidr_parse("2001:db8::/32", &c), ADDR_OK);
	assert_int_equal(c.family, AF_INET6);
	assert_int_equal(c.prefix_len, 32);
	assert_int_equal(addr_cidr_parse("::/0", &c), ADDR_OK);
	assert_int_equal(c.prefix_len, 0);
}

static void
test_cidr_parse_refuses_bad_text(void **state)
{
	struct policy_cidr c;

	assert_int_equal(addr_cidr_parse("10.0.0.1/8", &c), ADDR_ERR_HOST_BITS);
	assert_int_equal(addr_cidr_parse("2001:db8::1/32", &c), ADDR_ERR_HOST_BITS);
	assert_int_equal(addr_cidr_parse("10.0.0.0/33", &c), ADDR_ERR_PREFIX);
	assert_int_equal(addr_cidr_parse("::/129", &c), ADDR_ERR_PREFIX);
	assert_int_equal(addr_cidr_parse("10.0.0.0/08", &c), ADDR_ERR_SYNTAX);
	assert_int_equal(addr_cidr_parse("10.0.0.0/", &c), ADDR_ERR_SYNTAX);
	assert_int_equal(addr_cidr_parse("10/8", &c), ADDR_ERR_SYNTAX);
	assert_int_equal(addr_cidr_parse("fe80::1%eth0", &c), ADDR_ERR_SYNTAX);
	assert_int_equal(addr_cidr_parse("example.com", &c), ADDR_ERR_SYNTAX);
	assert_int_equal(addr_cidr_parse(NULL, &c), ADDR_ERR_SYNTAX);
	assert_int_equal(addr_cidr_parse("1111:2222:3333:4444:5555:6666:7777:8888/128/128/128", &c),
	    ADDR_ERR_SYNTAX);
}

static void
test_policy_refuses_entries_past_its_capacity(void **state)
{
	struct addr_policy *ap = addr_policy_new();
	struct policy_cidr c = cidr("10.231.0.0/16");

	assert_non_null(ap);
	for (size_t i = 0; i < ADDR_POLICY_POOL_MAX; i++)
		assert_int_equal(addr_policy_add_pool(ap, &c), ADDR_OK);
	assert_int_equal(addr_policy_add_pool(ap, &c), ADDR_ERR_FULL);
	addr_policy_free(ap);
}

static void
test_policy_refuses_bad_family_and_prefix(void **state)
{
	struct addr_policy *ap = addr_policy_new();
	struct policy_cidr c = { .family = AF_UNIX };

	assert_non_null(ap);
	assert_int_equal(addr_policy_add_local(ap, &c), ADDR_ERR_FAMILY);
	c.family = AF_INET;
	c.prefix_len = 33;
	assert_int_equal(addr_policy_add_local(ap, &c), ADDR_ERR_PREFIX);
	addr_policy_free(ap);
}

static void
test_every_class_and_verdict_has_a_name(void **state)
{
	for (int c = ADDR_CLASS_PUBLIC; c < ADDR_CLASS_INVALID; c++)
		assert_string_not_equal(addr_class_name((enum addr_class)c), "invalid");
	for (int v = ADDR_DENY_LOOPBACK; v < ADDR_DENY_INVALID; v++)
		assert_string_not_equal(addr_verdict_reason((enum addr_verdict)v), "invalid_address");
	assert_string_equal(addr_class_name(ADDR_CLASS_METADATA), "metadata");
	assert_string_equal(addr_verdict_reason(ADDR_DENY_LINK_LOCAL), "link_local");
	assert_string_not_equal(addr_strerror(ADDR_ERR_FULL), "unknown address error");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_always_refused_ranges_and_their_edges),
		cmocka_unit_test(test_ipv4_internal_ranges_and_their_edges),
		cmocka_unit_test(test_ipv6_always_refused_ranges_and_their_edges),
		cmocka_unit_test(test_ipv6_internal_ranges_and_their_edges),
		cmocka_unit_test(test_embedded_ipv4_forms_take_the_embedded_class),
		cmocka_unit_test(test_non_inet_family_is_invalid),
		cmocka_unit_test(test_public_address_is_allowed),
		cmocka_unit_test(test_internal_address_is_refused_without_allow_lists),
		cmocka_unit_test(test_entry_allowed_ips_let_an_internal_address_through),
		cmocka_unit_test(test_operator_allow_cidrs_let_an_internal_address_through),
		cmocka_unit_test(test_allow_lists_never_open_the_always_refused_classes),
		cmocka_unit_test(test_sandbox_pool_is_refused_even_when_allowed),
		cmocka_unit_test(test_embedded_forms_of_the_pool_are_refused),
		cmocka_unit_test(test_host_address_is_refused_even_when_public_or_allowed),
		cmocka_unit_test(test_v4_mapped_address_matches_an_ipv4_allow_list),
		cmocka_unit_test(test_6to4_form_is_not_opened_by_an_ipv4_allow_list),
		cmocka_unit_test(test_strict_ipv4_parse_accepts_only_dotted_quads),
		cmocka_unit_test(test_cidr_parse_reads_addresses_and_prefixes),
		cmocka_unit_test(test_cidr_parse_refuses_bad_text),
		cmocka_unit_test(test_policy_refuses_entries_past_its_capacity),
		cmocka_unit_test(test_policy_refuses_bad_family_and_prefix),
		cmocka_unit_test(test_every_class_and_verdict_has_a_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
