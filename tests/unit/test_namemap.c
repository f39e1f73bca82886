/* Unit tests for egress-proxy/namemap: the per-sandbox map from an address
 * the DNS stub gave out to the names it gave it for, with expiry and a
 * bound. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "egress-proxy/namemap.h"

#define TEST_ENTRIES 8
#define TEST_NAMES_MAX NAMEMAP_LOOKUP_MAX_NAMES
#define NS_PER_S INT64_C(1000000000)
#define T0_NS (1000 * NS_PER_S)

/* The 4 bytes of the dotted quad TEXT (in a static buffer per slot). */
static const uint8_t *
v4(const char *text)
{
	static uint8_t slots[4][4];
	static unsigned next;
	uint8_t *out = slots[next++ % 4];

	assert_int_equal(inet_pton(AF_INET, text, out), 1);
	return out;
}

static const uint8_t *
v6(const char *text)
{
	static uint8_t out[16];

	assert_int_equal(inet_pton(AF_INET6, text, out), 1);
	return out;
}

static int
setup_map(void **state)
{
	*state = namemap_new(TEST_ENTRIES);
	return *state == NULL ? -1 : 0;
}

static int
teardown_map(void **state)
{
	namemap_free(*state);
	return 0;
}

static size_t
lookup4(const struct namemap *m, const char *addr, int64_t now_ns, const char **names)
{
	return namemap_lookup(m, AF_INET, v4(addr), now_ns, names, TEST_NAMES_MAX);
}

static void
test_added_name_is_found_for_its_address(void **state)
{
	struct namemap *m = *state;
	const char *names[TEST_NAMES_MAX];

	assert_int_equal(namemap_add(m, AF_INET, v4("198.51.100.7"), "github.com", 60, T0_NS), 0);
	assert_int_equal(lookup4(m, "198.51.100.7", T0_NS, names), 1);
	assert_string_equal(names[0], "github.com");
	assert_int_equal(lookup4(m, "198.51.100.8", T0_NS, names), 0);
}

static void
test_name_expires_with_its_ttl(void **state)
{
	struct namemap *m = *state;
	const char *names[TEST_NAMES_MAX];

	assert_int_equal(namemap_add(m, AF_INET, v4("198.51.100.7"), "a.example", 30, T0_NS), 0);
	assert_int_equal(lookup4(m, "198.51.100.7", T0_NS + 30 * NS_PER_S - 1, names), 1);
	assert_int_equal(lookup4(m, "198.51.100.7", T0_NS + 30 * NS_PER_S, names), 0);
}

static void
test_expire_drops_only_expired_pairs(void **state)
{
	struct namemap *m = *state;
	const char *names[TEST_NAMES_MAX];

	namemap_add(m, AF_INET, v4("198.51.100.1"), "short.example", 5, T0_NS);
	namemap_add(m, AF_INET, v4("198.51.100.2"), "long.example", 500, T0_NS);
	assert_int_equal(namemap_count(m), 2);
	assert_int_equal(namemap_expire(m, T0_NS + 10 * NS_PER_S), 1);
	assert_int_equal(namemap_count(m), 1);
	assert_int_equal(lookup4(m, "198.51.100.2", T0_NS + 10 * NS_PER_S, names), 1);
	assert_string_equal(names[0], "long.example");
}

static void
test_names_sharing_an_address_are_all_found_newest_first(void **state)
{
	struct namemap *m = *state;
	const char *names[TEST_NAMES_MAX];

	namemap_add(m, AF_INET, v4("198.51.100.9"), "one.example", 60, T0_NS);
	namemap_add(m, AF_INET, v4("198.51.100.9"), "two.example", 60, T0_NS);
	namemap_add(m, AF_INET, v4("198.51.100.9"), "three.example", 60, T0_NS);
	assert_int_equal(lookup4(m, "198.51.100.9", T0_NS, names), 3);
	assert_string_equal(names[0], "three.example");
	assert_string_equal(names[1], "two.example");
	assert_string_equal(names[2], "one.example");
}

static void
test_lookup_gives_the_newest_names_when_more_than_max(void **state)
{
	struct namemap *m = *state;
	const char *names[2];

	namemap_add(m, AF_INET, v4("198.51.100.9"), "one.example", 60, T0_NS);
	namemap_add(m, AF_INET, v4("198.51.100.9"), "two.example", 60, T0_NS);
	namemap_add(m, AF_INET, v4("198.51.100.9"), "three.example", 60, T0_NS);
	namemap_add(m, AF_INET, v4("198.51.100.9"), "one.example", 60, T0_NS);
	assert_int_equal(namemap_lookup(m, AF_INET, v4("198.51.100.9"), T0_NS, names, 2), 2);
	assert_string_equal(names[0], "one.example");
	assert_string_equal(names[1], "three.example");
}

static void
test_readding_a_pair_keeps_the_later_expiry(void **state)
{
	struct namemap *m = *state;
	const char *names[TEST_NAMES_MAX];

	namemap_add(m, AF_INET, v4("198.51.100.3"), "a.example", 300, T0_NS);
	namemap_add(m, AF_INET, v4("198.51.100.3"), "a.example", 5, T0_NS + NS_PER_S);
	assert_int_equal(namemap_count(m), 1);
	assert_int_equal(lookup4(m, "198.51.100.3", T0_NS + 200 * NS_PER_S, names), 1);
	namemap_add(m, AF_INET, v4("198.51.100.3"), "a.example", 300, T0_NS + 100 * NS_PER_S);
	assert_int_equal(lookup4(m, "198.51.100.3", T0_NS + 350 * NS_PER_S, names), 1);
}

static void
test_full_map_drops_the_least_recently_answered(void **state)
{
	struct namemap *m = *state;
	const char *names[TEST_NAMES_MAX];
	char addr[32];

	for (int i = 0; i < TEST_ENTRIES; i++) {
		snprintf(addr, sizeof(addr), "198.51.100.%d", i + 1);
		assert_int_equal(namemap_add(m, AF_INET, v4(addr), "n.example", 60, T0_NS), 0);
	}
	/* Answered again: now the newest, so .2 is the oldest. */
	namemap_add(m, AF_INET, v4("198.51.100.1"), "n.example", 60, T0_NS);
	assert_int_equal(namemap_add(m, AF_INET, v4("198.51.100.200"), "n.example", 60, T0_NS), 0);
	assert_int_equal(namemap_count(m), TEST_ENTRIES);
	assert_int_equal(lookup4(m, "198.51.100.2", T0_NS, names), 0);
	assert_int_equal(lookup4(m, "198.51.100.1", T0_NS, names), 1);
	assert_int_equal(lookup4(m, "198.51.100.200", T0_NS, names), 1);
}

static void
test_families_do_not_mix(void **state)
{
	struct namemap *m = *state;
	const char *names[TEST_NAMES_MAX];
	uint8_t zero16[16] = { 0 };

	namemap_add(m, AF_INET6, v6("2001:db8::1"), "six.example", 60, T0_NS);
	assert_int_equal(namemap_lookup(m, AF_INET6, v6("2001:db8::1"), T0_NS, names,
	    TEST_NAMES_MAX), 1);
	assert_string_equal(names[0], "six.example");
	/* The first 4 bytes of 2001:db8::1 as an IPv4 address are another key. */
	assert_int_equal(namemap_lookup(m, AF_INET, v6("2001:db8::1"), T0_NS, names,
	    TEST_NAMES_MAX), 0);
	assert_int_equal(namemap_lookup(m, AF_INET6, zero16, T0_NS, names, TEST_NAMES_MAX), 0);
}

static void
test_bad_arguments_are_refused(void **state)
{
	struct namemap *m = *state;
	char long_name[NAMEMAP_NAME_MAX_BYTES + 2];

	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	errno = 0;
	assert_int_equal(namemap_add(m, AF_UNIX, v4("198.51.100.1"), "x.example", 60, T0_NS), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(namemap_add(m, AF_INET, v4("198.51.100.1"), "", 60, T0_NS), -1);
	assert_int_equal(namemap_add(m, AF_INET, v4("198.51.100.1"), long_name, 60, T0_NS), -1);
	long_name[NAMEMAP_NAME_MAX_BYTES] = '\0';
	assert_int_equal(namemap_add(m, AF_INET, v4("198.51.100.1"), long_name, 60, T0_NS), 0);
	assert_int_equal(namemap_count(m), 1);
}

static void
test_zero_ttl_records_nothing(void **state)
{
	struct namemap *m = *state;

	assert_int_equal(namemap_add(m, AF_INET, v4("198.51.100.1"), "x.example", 0, T0_NS), 0);
	assert_int_equal(namemap_count(m), 0);
}

static void
test_zero_entries_is_refused(void **state)
{
	(void)state;
	assert_null(namemap_new(0));
}

/* Many addresses through a small map, expiring as they go: every slot is
 * reused many times and lookups stay exact. */
static void
test_churn_keeps_lookups_exact(void **state)
{
	struct namemap *m = *state;
	const char *names[TEST_NAMES_MAX];
	uint8_t addr[4] = { 198, 51, 0, 0 };
	char name[64];
	size_t held;

	for (int i = 0; i < 1000; i++) {
		addr[2] = (uint8_t)(i >> 8);
		addr[3] = (uint8_t)i;
		snprintf(name, sizeof(name), "h%d.example", i);
		assert_int_equal(namemap_add(m, AF_INET, addr, name, 1 + i % 3,
		    T0_NS + i * NS_PER_S), 0);
		if (i % 7 == 0)
			namemap_expire(m, T0_NS + i * NS_PER_S);
		assert_int_equal(namemap_lookup(m, AF_INET, addr, T0_NS + i * NS_PER_S, names,
		    TEST_NAMES_MAX), 1);
		assert_string_equal(names[0], name);
		assert_true(namemap_count(m) <= TEST_ENTRIES);
	}
	held = namemap_count(m);
	assert_true(held > 0);
	assert_int_equal(namemap_expire(m, INT64_MAX), held);
	assert_int_equal(namemap_count(m), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup_map, teardown_map)
		T(test_added_name_is_found_for_its_address),
		T(test_name_expires_with_its_ttl),
		T(test_expire_drops_only_expired_pairs),
		T(test_names_sharing_an_address_are_all_found_newest_first),
		T(test_lookup_gives_the_newest_names_when_more_than_max),
		T(test_readding_a_pair_keeps_the_later_expiry),
		T(test_full_map_drops_the_least_recently_answered),
		T(test_families_do_not_mix),
		T(test_bad_arguments_are_refused),
		T(test_zero_ttl_records_nothing),
		T(test_churn_keeps_lookups_exact),
		cmocka_unit_test(test_zero_entries_is_refused),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
