/* Tests of egress-proxy/exetrust: which mounts of a sandbox's mount table
 * its binary rules may match, and which files on them. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "egress-proxy/exetrust.h"

/* A sandbox's table, as corral-init leaves it: the system folders
 * read-only, a writable and a read-only root on the same disk, a root
 * below /opt, HOME, /tmp, and a mount whose point holds a space. */
static const char test_table[] =
    "300 299 0:40 / / rw,nosuid,nodev - tmpfs corral rw\n"
    "301 300 254:1 /usr /usr ro,nosuid,nodev,relatime master:1 - ext4 /dev/vda1 rw\n"
    "302 300 254:1 /etc /etc ro,nosuid,nodev,relatime - ext4 /dev/vda1 rw\n"
    "303 302 0:41 / /etc/corral ro,nosuid,nodev - tmpfs mask ro\n"
    "304 300 254:1 /home/u/ws /home/u/ws rw,nosuid,nodev,relatime - ext4 /dev/vda1 rw\n"
    "305 300 254:1 /home/u/ref /home/u/ref ro,nosuid,nodev,relatime - ext4 /dev/vda1 rw\n"
    "306 300 254:1 /opt/proj /opt/proj ro,nosuid,nodev - ext4 /dev/vda1 rw\n"
    "307 300 0:42 / /home/u rw,nosuid,nodev - tmpfs home rw,size=1024m\n"
    "308 300 0:43 / /tmp rw,nosuid,nodev - tmpfs tmp rw\n"
    "309 300 254:1 /opt /opt ro,nosuid,nodev - ext4 /dev/vda1 rw\n"
    "310 300 254:1 /opt/my\\040app /opt/my\\040app ro - ext4 /dev/vda1 rw\n"
    "311 301 0:44 / /usr/local rw,nosuid - tmpfs local rw\n"
    "312 300 254:1 /usrlocal /usrlocal ro - ext4 /dev/vda1 rw\n";

static const char *const test_excluded[] = {
	"/home/u/ws", "/home/u/ref", "/opt/proj", "/opt/my app", "/home/u",
};

static bool
test_holds(const struct exetrust *t, uint32_t id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->mounts[i] == id)
			return true;
	return false;
}

static void
test_only_read_only_system_mounts_outside_the_roots(void **state)
{
	struct exetrust t;
	const char *why = NULL;

	(void)state;
	assert_int_equal(exetrust_parse(&t, test_table, test_excluded, 5, &why), 0);
	assert_int_equal(t.n, 4);
	assert_true(test_holds(&t, 301) && test_holds(&t, 302) && test_holds(&t, 303));
	assert_true(test_holds(&t, 309));
	/* A read-only root, one below /opt, one with a space: the user's. */
	assert_false(test_holds(&t, 305) || test_holds(&t, 306) || test_holds(&t, 310));
	/* Writable: a root, HOME, /tmp, a writable mount below /usr. */
	assert_false(test_holds(&t, 304) || test_holds(&t, 307) || test_holds(&t, 308));
	assert_false(test_holds(&t, 311));
	/* /usrlocal is not below /usr. */
	assert_false(test_holds(&t, 312));
}

static void
test_an_unreadable_table_is_refused(void **state)
{
	static const char *const bad[] = {
		"301 300 254:1 /usr\n",
		"x 300 254:1 /usr /usr ro - ext4 /dev/vda1 rw\n",
		"0 300 254:1 /usr /usr ro - ext4 /dev/vda1 rw\n",
		"301 300 254:1 /usr usr ro - ext4 /dev/vda1 rw\n",
		"99999999999 300 254:1 /usr /usr ro - ext4 /dev/vda1 rw\n",
		"\n",
	};
	struct exetrust t;
	const char *why = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(exetrust_parse(&t, bad[i], NULL, 0, &why), -1);
		assert_string_equal(why, "a line of its mount table cannot be read");
	}
	assert_int_equal(exetrust_parse(&t, "", NULL, 0, &why), 0);
	assert_int_equal(t.n, 0);
}

static void
test_too_many_trusted_mounts_are_refused(void **state)
{
	static char table[(EXETRUST_MOUNTS_MAX + 1) * 64];
	struct exetrust t;
	const char *why = NULL;
	size_t used = 0;

	(void)state;
	for (int i = 0; i <= EXETRUST_MOUNTS_MAX; i++)
		used += (size_t)snprintf(table + used, sizeof(table) - used,
		    "%d 300 254:1 /usr /usr/m%d ro - ext4 /dev/vda1 rw\n", 400 + i, i);
	assert_int_equal(exetrust_parse(&t, table, NULL, 0, &why), -1);
	assert_string_equal(why, "its system folders hold too many mounts");
}

static void
test_files_the_user_could_change_are_not_trusted(void **state)
{
	struct exetrust t = { .n = 1, .mounts = { 301 } };
	struct exetrust_file f = { .mnt_id = 301, .uid = 0, .mode = S_IFREG | 0755 };
	struct exetrust_file g;

	(void)state;
	assert_true(exetrust_allows(&t, &f));
	g = f, g.mnt_id = 304;
	assert_false(exetrust_allows(&t, &g));
	g = f, g.uid = 1000;
	assert_false(exetrust_allows(&t, &g));
	g = f, g.mode = S_IFREG | 0775;
	assert_false(exetrust_allows(&t, &g));
	g = f, g.mode = S_IFREG | 0757;
	assert_false(exetrust_allows(&t, &g));
	g = f, g.acl = true;
	assert_false(exetrust_allows(&t, &g));
	g = f, g.uid = 2000;    /* another user's: they could change it */
	assert_false(exetrust_allows(&t, &g));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_read_only_system_mounts_outside_the_roots),
		cmocka_unit_test(test_an_unreadable_table_is_refused),
		cmocka_unit_test(test_too_many_trusted_mounts_are_refused),
		cmocka_unit_test(test_files_the_user_could_change_are_not_trusted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
