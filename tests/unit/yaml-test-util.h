/* tests/unit/yaml-test-util.h: the diagnostic assertions shared by the
 * tests of the YAML loaders (the policy loader and corrald's configuration
 * loader). Each prints every diagnostic before it fails, so a failing test
 * shows what was reported. */
#ifndef CORRAL_TESTS_YAML_TEST_UTIL_H
#define CORRAL_TESTS_YAML_TEST_UTIL_H

#include <stddef.h>

struct policy_diags;

/* Prints every diagnostic of D, one line each. */
void yaml_test_dump_diags(const struct policy_diags *d);

/* Asserts that diagnostic I of D is in FILE at LINE:COL and that its
 * message holds NEEDLE. */
void yaml_test_assert_diag(const struct policy_diags *d, size_t i, const char *file,
    unsigned line, unsigned col, const char *needle);

/* Asserts that D holds exactly one diagnostic, in FILE at LINE:COL, whose
 * message holds NEEDLE. */
void yaml_test_assert_one_diag(const struct policy_diags *d, const char *file,
    unsigned line, unsigned col, const char *needle);

#endif
