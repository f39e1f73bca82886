/* Unit tests for the YAML machinery shared by the loaders
 * (policy/yamltree.c), with a document of small limits and its own words. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/yamltree.h"

#define TEST_BYTES_MAX 64
#define TEST_PATH_MAX_BYTES 256

static const struct yamltree_doc doc = {
	.subject = "the thing",
	.within = "one thing",
	.not_regular = " (use a file)",
	.input = "stream",
	.depth_max = 3,
	.nodes_max = 12,
	.bytes_max = TEST_BYTES_MAX,
};

/* The raw shape of the test schema. */
struct raw {
	const struct yamltree_node *name, *list, *map;
};

static const struct yamltree_field fields[] = {
	{ "name", YAMLTREE_SCALAR, offsetof(struct raw, name), false, "required: say who" },
	{ "list", YAMLTREE_SEQUENCE, offsetof(struct raw, list), true, NULL },
	{ "map", YAMLTREE_MAPPING, offsetof(struct raw, map), false, NULL },
};

static struct policy_diags diags;
static struct yamltree_ctx ctx;
static struct yamltree_node *root;

static int
setup(void **state)
{
	(void)state;
	policy_diags_init(&diags);
	ctx = (struct yamltree_ctx){ .doc = &doc, .name = "t.yaml", .diags = &diags };
	root = NULL;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	yamltree_free(root);
	root = NULL;
	policy_diags_clear(&diags);
	return 0;
}

/* Parses the LEN bytes at TEXT into ROOT. */
static struct yamltree_node *
parse_n(const char *text, size_t len)
{
	ctx.data = text;
	ctx.len = len;
	root = yamltree_parse(&ctx);
	return root;
}

static struct yamltree_node *
parse(const char *text)
{
	return parse_n(text, strlen(text));
}

/* Asserts that diagnostic I is at LINE:COL and says TEXT. */
static void
assert_diag(size_t i, unsigned line, unsigned col, const char *text)
{
	assert_true(i < diags.count);
	if (strstr(diags.items[i].message, text) == NULL)
		fail_msg("diagnostic %zu is \"%s\", expected \"%s\"", i, diags.items[i].message, text);
	assert_int_equal(diags.items[i].line, line);
	assert_int_equal(diags.items[i].col, col);
}

/* Walks ROOT, parsed from TEXT, with the test schema into RAW. */
static unsigned
walk(const char *text, struct raw *raw)
{
	memset(raw, 0, sizeof(*raw));
	assert_non_null(parse(text));
	return yamltree_walk(&ctx, root, "the root", fields, YAMLTREE_NFIELDS(fields), raw);
}

static void
test_tree_keeps_positions(void **state)
{
	(void)state;
	assert_non_null(parse("a: 1\nb:\n  - x\n"));
	assert_int_equal(root->type, YAMLTREE_MAPPING);
	assert_int_equal(root->nkids, 4);
	assert_string_equal(root->kids[1]->text, "1");
	assert_int_equal(root->kids[1]->line, 1);
	assert_int_equal(root->kids[1]->col, 4);
	assert_int_equal(root->kids[3]->type, YAMLTREE_SEQUENCE);
	assert_int_equal(root->kids[3]->kids[0]->line, 3);
	assert_int_equal(root->kids[3]->kids[0]->col, 5);
	assert_int_equal(ctx.nerrors, 0);
}

static void
test_plain_null_is_empty_but_quoted_null_is_text(void **state)
{
	(void)state;
	assert_non_null(parse("a: ~\nb: 'null'\n"));
	assert_int_equal(root->kids[1]->type, YAMLTREE_NULL);
	assert_int_equal(root->kids[3]->type, YAMLTREE_SCALAR);
	assert_false(root->kids[3]->plain);
}

static void
test_anchors_and_aliases_are_refused_with_their_lines(void **state)
{
	(void)state;
	assert_non_null(parse("a: &x 1\nb: *x\n"));
	assert_int_equal(diags.count, 2);
	assert_diag(0, 1, 4, "anchors are not allowed (&x)");
	assert_diag(1, 2, 4, "aliases are not allowed (*x)");
	assert_string_equal(diags.items[1].source, "b: *x");
	assert_int_equal(root->kids[3]->type, YAMLTREE_ALIAS);
}

static void
test_tags_are_refused(void **state)
{
	(void)state;
	parse("a: !!str 1\n");
	assert_int_equal(diags.count, 1);
	assert_diag(0, 1, 4, "tags are not allowed (tag:yaml.org,2002:str)");
}

static void
test_second_document_is_refused_in_the_documents_words(void **state)
{
	(void)state;
	parse("a: 1\n---\nb: 2\n");
	assert_int_equal(diags.count, 1);
	assert_diag(0, 2, 1, "a second YAML document: the thing is one document");
}

static void
test_nesting_is_limited_by_the_document(void **state)
{
	(void)state;
	assert_non_null(parse("a: [[1]]\n"));
	assert_int_equal(diags.count, 0);
	yamltree_free(root);
	assert_null(parse("a: [[[1]]]\n"));
	assert_int_equal(diags.count, 1);
	assert_diag(0, 1, 6, "lists and mappings are nested deeper than 3 levels");
}

static void
test_node_count_is_limited_by_the_document(void **state)
{
	(void)state;
	assert_null(parse("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n"));
	assert_diag(0, 1, 37, "more than 12 values in one thing");
}

static void
test_invalid_utf8_is_refused_in_the_documents_words(void **state)
{
	(void)state;
	assert_null(parse("a: ok\nb: \xff\n"));
	assert_int_equal(diags.count, 1);
	assert_diag(0, 2, 4, "the thing must be UTF-8 text");
}

static void
test_nul_in_a_quoted_value_is_refused_and_cut(void **state)
{
	(void)state;
	assert_non_null(parse("a: \"x\\0y\"\n"));
	assert_diag(0, 1, 4, "a NUL character (\\0) is not allowed");
	assert_int_equal(root->kids[1]->len, 1);
	assert_string_equal(root->kids[1]->text, "x");
}

static void
test_syntax_error_names_its_place(void **state)
{
	(void)state;
	assert_null(parse("a: [1\n"));
	assert_int_equal(diags.count, 1);
	assert_diag(0, 2, 1, "YAML syntax error: did not find expected ',' or ']'");
}

static void
test_empty_input_has_no_tree_and_no_error(void **state)
{
	(void)state;
	assert_null(parse(""));
	assert_int_equal(ctx.nerrors, 0);
}

static void
test_walk_stores_known_keys_and_says_which(void **state)
{
	struct raw raw;
	unsigned given = walk("name: n\nmap: {}\n", &raw);

	(void)state;
	assert_int_equal(given, YAMLTREE_FIELD_BIT(0) | YAMLTREE_FIELD_BIT(2));
	assert_string_equal(raw.name->text, "n");
	assert_int_equal(raw.map->type, YAMLTREE_MAPPING);
	assert_null(raw.list);
	assert_int_equal(ctx.nerrors, 0);
}

static void
test_walk_lists_the_accepted_keys_for_an_unknown_one(void **state)
{
	struct raw raw;

	(void)state;
	walk("name: n\nnmae: x\n", &raw);
	assert_int_equal(diags.count, 1);
	assert_diag(0, 2, 1, "unknown key 'nmae' in the root (expected name, list, map)");
}

static void
test_walk_reports_a_duplicate_with_the_first_place(void **state)
{
	struct raw raw;

	(void)state;
	walk("name: a\nname: b\n", &raw);
	assert_int_equal(diags.count, 1);
	assert_diag(0, 2, 1, "duplicate key 'name' in the root (first given at line 1, column 1)");
	assert_string_equal(raw.name->text, "a");
}

static void
test_walk_accepts_empty_only_where_nullable(void **state)
{
	struct raw raw;

	(void)state;
	walk("name: n\nlist:\nmap:\n", &raw);
	assert_int_equal(diags.count, 1);
	assert_non_null(strstr(diags.items[0].message, "'map' in the root must be a mapping, but it is empty"));
	assert_int_equal(raw.list->type, YAMLTREE_NULL);
	assert_null(raw.map);
}

static void
test_walk_reports_a_missing_required_key_at_the_mapping(void **state)
{
	struct raw raw;

	(void)state;
	walk("list: []\n", &raw);
	assert_int_equal(diags.count, 1);
	assert_diag(0, 1, 1, "the root has no 'name' (required: say who)");
}

static void
test_walk_refuses_a_key_that_is_not_a_name(void **state)
{
	struct raw raw;

	(void)state;
	walk("name: n\n? [1]\n: x\n", &raw);
	assert_int_equal(diags.count, 1);
	assert_diag(0, 2, 3, "a key in the root must be a name, but it is a list");
}

static void
test_walk_of_no_mapping_does_nothing(void **state)
{
	struct raw raw = { 0 };

	(void)state;
	assert_int_equal(yamltree_walk(&ctx, NULL, "x", fields, YAMLTREE_NFIELDS(fields), &raw), 0);
	assert_non_null(parse("[1]\n"));
	assert_int_equal(yamltree_walk(&ctx, root, "x", fields, YAMLTREE_NFIELDS(fields), &raw), 0);
	assert_int_equal(ctx.nerrors, 0);
}

static void
test_check_items_reports_each_wrong_item(void **state)
{
	(void)state;
	assert_non_null(parse("- a\n- [b]\n- {c: d}\n"));
	yamltree_check_items(&ctx, root, YAMLTREE_SCALAR, "k");
	assert_int_equal(diags.count, 2);
	assert_diag(0, 2, 3, "each item of 'k' must be a single value, but this one is a list");
	assert_diag(1, 3, 3, "this one is a mapping");
}

static void
test_number_reads_plain_decimal_only(void **state)
{
	unsigned long v = 0;

	(void)state;
	assert_int_equal(yamltree_number("443", true, 1, 65535, &v), YAMLTREE_NUM_OK);
	assert_int_equal(v, 443);
	assert_int_equal(yamltree_number("443", false, 1, 65535, &v), YAMLTREE_NUM_QUOTED);
	assert_int_equal(yamltree_number("0443", true, 1, 65535, &v), YAMLTREE_NUM_LEADING_ZERO);
	assert_int_equal(yamltree_number("1e3", true, 1, 65535, &v), YAMLTREE_NUM_NOT_INT);
	assert_int_equal(yamltree_number("", true, 1, 65535, &v), YAMLTREE_NUM_NOT_INT);
	assert_int_equal(yamltree_number("+1", true, 1, 65535, &v), YAMLTREE_NUM_NOT_INT);
}

static void
test_number_range_covers_negative_overflow_and_bounds(void **state)
{
	unsigned long v = 7;

	(void)state;
	assert_int_equal(yamltree_number("-1", true, 0, 10, &v), YAMLTREE_NUM_RANGE);
	assert_int_equal(yamltree_number("0", true, 1, 10, &v), YAMLTREE_NUM_RANGE);
	assert_int_equal(yamltree_number("11", true, 1, 10, &v), YAMLTREE_NUM_RANGE);
	/* A one-digit number over a one-digit maximum (once it wrapped). */
	assert_int_equal(yamltree_number("4", true, 0, 3, &v), YAMLTREE_NUM_RANGE);
	assert_int_equal(yamltree_number("9", true, 0, 0, &v), YAMLTREE_NUM_RANGE);
	assert_int_equal(yamltree_number("99999999999999999999999", true, 0, 10, &v),
	    YAMLTREE_NUM_RANGE);
	assert_int_equal(v, 7);
	assert_int_equal(yamltree_number("3", true, 0, 3, &v), YAMLTREE_NUM_OK);
	assert_int_equal(v, 3);
}

static void
test_number_report_says_why(void **state)
{
	(void)state;
	assert_non_null(parse("p: 0443\nq: \"8\"\n"));
	yamltree_number_report(&ctx, root->kids[1], YAMLTREE_NUM_LEADING_ZERO, "port", "1-65535");
	yamltree_number_report(&ctx, root->kids[3], YAMLTREE_NUM_QUOTED, "port", "1-65535");
	assert_diag(0, 1, 4, "port 0443 has a leading zero: write it without");
	assert_diag(1, 2, 4, "port \"8\" is quoted: write it as a plain number");
}

static void
test_path_normalize_collapses_slashes_and_dots(void **state)
{
	char out[TEST_PATH_MAX_BYTES];

	(void)state;
	assert_null(yamltree_path_normalize("//a/./b//", true, out));
	assert_string_equal(out, "/a/b");
	assert_null(yamltree_path_normalize("/", true, out));
	assert_string_equal(out, "/");
	assert_null(yamltree_path_normalize("./a//b/", false, out));
	assert_string_equal(out, "a/b");
}

static void
test_path_normalize_says_why_a_path_is_refused(void **state)
{
	char out[TEST_PATH_MAX_BYTES];

	(void)state;
	assert_string_equal(yamltree_path_normalize("a", true, out), "is not absolute");
	assert_string_equal(yamltree_path_normalize("/a", false, out),
	    "is absolute: give it relative to the home");
	assert_string_equal(yamltree_path_normalize("/a/../b", true, out), "has a '..' segment");
	assert_string_equal(yamltree_path_normalize("/a\tb", true, out), "has a control character");
	assert_string_equal(yamltree_path_normalize("./", false, out),
	    "names no file (the home itself)");
}

static void
test_quote_escapes_and_cuts(void **state)
{
	struct yamltree_quoted q;
	char long_text[YAMLTREE_QUOTE_MAX_BYTES + 10];

	(void)state;
	assert_string_equal(yamltree_quote("a'b\\c\n", &q), "a\\x27b\\x5cc\\x0a");
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	yamltree_quote(long_text, &q);
	assert_int_equal(strlen(q.text), YAMLTREE_QUOTE_MAX_BYTES + 3);
	assert_string_equal(q.text + YAMLTREE_QUOTE_MAX_BYTES, "...");
}

static void
test_out_of_memory_is_reported_once(void **state)
{
	(void)state;
	yamltree_nomem(&ctx);
	yamltree_nomem(&ctx);
	assert_int_equal(ctx.nerrors, 2);
	assert_int_equal(diags.count, 1);
	assert_diag(0, 0, 0, "out of memory");
}

/* Reads what a pipe holding LEN bytes of 'x' gives; the read's result. */
static int
read_pipe(size_t len, char **data, size_t *got)
{
	char buf[TEST_BYTES_MAX * 2];
	int fds[2], rc;

	assert_true(len <= sizeof(buf));
	memset(buf, 'x', len);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], buf, len), (ssize_t)len);
	close(fds[1]);
	rc = yamltree_read_all(&ctx, fds[0], 0, data, got);
	close(fds[0]);
	return rc;
}

static void
test_read_all_reads_to_the_end(void **state)
{
	char *data = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(read_pipe(TEST_BYTES_MAX, &data, &len), 0);
	assert_int_equal(len, TEST_BYTES_MAX);
	assert_int_equal(data[0], 'x');
	free(data);
}

static void
test_read_all_refuses_input_over_the_limit(void **state)
{
	char *data = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(read_pipe(TEST_BYTES_MAX + 1, &data, &len), -1);
	assert_null(data);
	assert_diag(0, 0, 0, "refused: the stream is over the limit of 64 bytes");
}

static void
test_file_refused_names_what_is_wrong(void **state)
{
	char path[TEST_PATH_MAX_BYTES];
	struct stat st;
	int fds[2], fd;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(fstat(fds[0], &st), 0);
	assert_true(yamltree_file_refused(&ctx, &st));
	close(fds[0]);
	close(fds[1]);
	snprintf(path, sizeof(path), "%s/test_yamltree.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	assert_true((fd = mkstemp(path)) != -1);
	assert_int_equal(fchmod(fd, 0620), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(yamltree_file_refused(&ctx, &st));
	assert_int_equal(fchmod(fd, 0600), 0);
	assert_int_equal(ftruncate(fd, TEST_BYTES_MAX + 1), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(yamltree_file_refused(&ctx, &st));
	close(fd);
	unlink(path);
	assert_diag(0, 0, 0, "refused: not a regular file (use a file)");
	assert_diag(1, 0, 0, "writable by its group (mode 0620); the thing may be writable by its owner only");
	assert_diag(2, 0, 0, "refused: the file is 65 bytes, over the limit of 64 bytes");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_tree_keeps_positions),
		T(test_plain_null_is_empty_but_quoted_null_is_text),
		T(test_anchors_and_aliases_are_refused_with_their_lines),
		T(test_tags_are_refused),
		T(test_second_document_is_refused_in_the_documents_words),
		T(test_nesting_is_limited_by_the_document),
		T(test_node_count_is_limited_by_the_document),
		T(test_invalid_utf8_is_refused_in_the_documents_words),
		T(test_nul_in_a_quoted_value_is_refused_and_cut),
		T(test_syntax_error_names_its_place),
		T(test_empty_input_has_no_tree_and_no_error),
		T(test_walk_stores_known_keys_and_says_which),
		T(test_walk_lists_the_accepted_keys_for_an_unknown_one),
		T(test_walk_reports_a_duplicate_with_the_first_place),
		T(test_walk_accepts_empty_only_where_nullable),
		T(test_walk_reports_a_missing_required_key_at_the_mapping),
		T(test_walk_refuses_a_key_that_is_not_a_name),
		T(test_walk_of_no_mapping_does_nothing),
		T(test_check_items_reports_each_wrong_item),
		T(test_number_reads_plain_decimal_only),
		T(test_number_range_covers_negative_overflow_and_bounds),
		T(test_number_report_says_why),
		T(test_path_normalize_collapses_slashes_and_dots),
		T(test_path_normalize_says_why_a_path_is_refused),
		T(test_quote_escapes_and_cuts),
		T(test_out_of_memory_is_reported_once),
		T(test_read_all_reads_to_the_end),
		T(test_read_all_refuses_input_over_the_limit),
		T(test_file_refused_names_what_is_wrong),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
