/* tests/unit/yaml-test-util.c: the YAML loaders' shared diagnostic
 * assertions (see yaml-test-util.h). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/diag.h"
#include "tests/unit/yaml-test-util.h"

void
yaml_test_dump_diags(const struct policy_diags *d)
{
	char *text = policy_diags_format(d, POLICY_DIAG_ONE_LINE);

	print_message("%s", text != NULL ? text : "(no memory)\n");
	free(text);
}

void
yaml_test_assert_diag(const struct policy_diags *d, size_t i, const char *file,
    unsigned line, unsigned col, const char *needle)
{
	if (i >= d->count || d->items[i].line != line || d->items[i].col != col ||
	    strstr(d->items[i].message, needle) == NULL) {
		print_message("wanted #%zu at %u:%u with \"%s\"; got:\n", i, line, col, needle);
		yaml_test_dump_diags(d);
	}
	assert_true(i < d->count);
	assert_string_equal(d->items[i].file, file);
	assert_int_equal(d->items[i].line, line);
	assert_int_equal(d->items[i].col, col);
	assert_non_null(strstr(d->items[i].message, needle));
}

void
yaml_test_assert_one_diag(const struct policy_diags *d, const char *file,
    unsigned line, unsigned col, const char *needle)
{
	yaml_test_assert_diag(d, 0, file, line, col, needle);
	if (d->count != 1)
		yaml_test_dump_diags(d);
	assert_int_equal(d->count, 1);
}
