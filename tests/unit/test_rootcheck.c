/* Tests of policy/rootcheck: which folders a sandbox's root may not be. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "policy/rootcheck.h"

static const char *const own[] = { "/var/lib/corral", "/var/log/corral", "/run/corral",
	"/etc/corral/profiles" };
static const char *const homes[] = { "/home/bob", "/srv/users/carol", "/root" };
static const struct rootcheck_context ctx = { own, 4, homes, 3 };

static enum rootcheck_rule
judge(const char *path)
{
	return rootcheck_judge(path, &ctx, NULL);
}

static void
test_system_and_shared_trees_are_refused(void **state)
{
	static const char *const refused[] = { "/", "/proc", "/sys", "/dev", "/run", "/var/run",
	    "/var", "/var/lib", "/tmp", "/var/tmp", "/etc", "/boot", "/home", "/root", "/usr",
	    "/bin", "/opt" };

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		assert_int_equal(judge(refused[i]), ROOTCHECK_SYSTEM);
}

static void
test_anything_inside_the_kernel_trees_is_refused(void **state)
{
	(void)state;
	assert_int_equal(judge("/proc/self"), ROOTCHECK_KERNEL_TREE);
	assert_int_equal(judge("/sys/fs/cgroup"), ROOTCHECK_KERNEL_TREE);
	assert_int_equal(judge("/dev/shm"), ROOTCHECK_KERNEL_TREE);
	assert_int_equal(judge("/run/user/1000"), ROOTCHECK_KERNEL_TREE);
	assert_int_equal(judge("/var/run/docker"), ROOTCHECK_KERNEL_TREE);
}

static void
test_a_users_own_folder_in_a_shared_tree_is_allowed(void **state)
{
	(void)state;
	assert_int_equal(judge("/tmp/work"), ROOTCHECK_OK);
	assert_int_equal(judge("/var/www/site"), ROOTCHECK_OK);
	assert_int_equal(judge("/home/sam/code/app"), ROOTCHECK_OK);
	assert_int_equal(judge("/home/sam"), ROOTCHECK_OK);
	assert_int_equal(judge("/var/tmp/build"), ROOTCHECK_OK);
}

static void
test_corralds_folders_are_refused_inside_and_above(void **state)
{
	const char *what = NULL;

	(void)state;
	assert_int_equal(rootcheck_judge("/var/lib/corral/sandboxes/x/home", &ctx, &what),
	    ROOTCHECK_CORRALD);
	assert_string_equal(what, "/var/lib/corral");
	assert_int_equal(judge("/var/log/corral"), ROOTCHECK_CORRALD);
	assert_int_equal(judge("/etc/corral"), ROOTCHECK_CORRALD);
	/* The runtime folder is inside /run: the kernel-tree rule speaks first. */
	assert_int_equal(judge("/run/corral"), ROOTCHECK_KERNEL_TREE);
}

static void
test_another_users_home_is_refused_inside_and_above(void **state)
{
	const char *what = NULL;

	(void)state;
	assert_int_equal(rootcheck_judge("/home/bob/src", &ctx, &what), ROOTCHECK_OTHER_HOME);
	assert_string_equal(what, "/home/bob");
	assert_int_equal(rootcheck_judge("/srv", &ctx, &what), ROOTCHECK_OTHER_HOME);
	assert_string_equal(what, "/srv/users/carol");
	assert_int_equal(judge("/root/project"), ROOTCHECK_OTHER_HOME);
	/* A name that only starts like a home is not in it. */
	assert_int_equal(judge("/home/bobby"), ROOTCHECK_OK);
}

static void
test_paths_with_dots_or_empty_parts_are_refused(void **state)
{
	(void)state;
	assert_int_equal(judge("relative/path"), ROOTCHECK_NOT_CANONICAL);
	assert_int_equal(judge("/home/sam/../bob"), ROOTCHECK_NOT_CANONICAL);
	assert_int_equal(judge("/home/sam/./x"), ROOTCHECK_NOT_CANONICAL);
	assert_int_equal(judge("/home//sam"), ROOTCHECK_NOT_CANONICAL);
	assert_int_equal(judge("/home/sam/"), ROOTCHECK_NOT_CANONICAL);
	assert_int_equal(rootcheck_judge(NULL, &ctx, NULL), ROOTCHECK_NOT_CANONICAL);
}

static void
test_without_a_context_only_the_fixed_rules_apply(void **state)
{
	(void)state;
	assert_int_equal(rootcheck_judge("/home/bob/src", NULL, NULL), ROOTCHECK_OK);
	assert_int_equal(rootcheck_judge("/var", NULL, NULL), ROOTCHECK_SYSTEM);
}

static void
test_every_rule_has_a_phrase(void **state)
{
	(void)state;
	for (int r = ROOTCHECK_OK; r <= ROOTCHECK_OTHER_HOME; r++)
		assert_true(strlen(rootcheck_strerror((enum rootcheck_rule)r)) > 0);
	assert_string_equal(rootcheck_strerror((enum rootcheck_rule)99), "is refused");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_system_and_shared_trees_are_refused),
		cmocka_unit_test(test_anything_inside_the_kernel_trees_is_refused),
		cmocka_unit_test(test_a_users_own_folder_in_a_shared_tree_is_allowed),
		cmocka_unit_test(test_corralds_folders_are_refused_inside_and_above),
		cmocka_unit_test(test_another_users_home_is_refused_inside_and_above),
		cmocka_unit_test(test_paths_with_dots_or_empty_parts_are_refused),
		cmocka_unit_test(test_without_a_context_only_the_fixed_rules_apply),
		cmocka_unit_test(test_every_rule_has_a_phrase),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
