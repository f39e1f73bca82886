/* Unit tests for broker/ledgerread: the ledger's files in order (rotated
 * by modification time, then the live one), gzip and plain, partial and
 * overlong lines, since, and following across a rotation. Each test works
 * in a folder of its own under /tmp. */
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "broker/ledgerread.h"
#include "egress-proxy/ledger.h"

#define TEST_PATH_BYTES 512
#define TEST_DIR_BYTES 64
#define TEST_LINES_MAX 64
#define TEST_CALLS_MAX 100000
#define TEST_NOW_S 1764439111           /* 2025-11-29T17:58:31Z */

struct dir {
	char path[TEST_DIR_BYTES];
};

static int
setup_dir(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	snprintf(d->path, sizeof(d->path), "/tmp/test_ledgerread.XXXXXX");
	if (mkdtemp(d->path) == NULL)
		return -1;
	*state = d;
	return 0;
}

static int
teardown_dir(void **state)
{
	struct dir *d = *state;
	char cmd[TEST_DIR_BYTES + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
	if (system(cmd) != 0)
		return -1;
	free(d);
	return 0;
}

static void
path_of(const struct dir *d, const char *name, char out[TEST_PATH_BYTES])
{
	snprintf(out, TEST_PATH_BYTES, "%s/%s", d->path, name);
}

/* Appends TEXT to NAME (made when missing). */
static void
append(const struct dir *d, const char *name, const char *text)
{
	char path[TEST_PATH_BYTES];
	FILE *f;

	path_of(d, name, path);
	assert_non_null(f = fopen(path, "a"));
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/* Writes TEXT to NAME gzip-compressed, in MEMBERS gzip members. */
static void
write_gzip(const struct dir *d, const char *name, const char *text, int members)
{
	char path[TEST_PATH_BYTES];
	size_t len = strlen(text), part = len / (size_t)members;

	path_of(d, name, path);
	for (int i = 0; i < members; i++) {
		size_t n = i == members - 1 ? len - part * (size_t)i : part;
		gzFile g = gzopen(path, i == 0 ? "wb" : "ab");

		assert_non_null(g);
		assert_int_equal(gzwrite(g, text + part * (size_t)i, (unsigned)n), (int)n);
		assert_int_equal(gzclose(g), Z_OK);
	}
}

/* Sets NAME's modification time to TEST_NOW_S + OFFSET_S. */
static void
set_mtime(const struct dir *d, const char *name, long offset_s)
{
	char path[TEST_PATH_BYTES];
	struct timespec t[2] = { { TEST_NOW_S + offset_s, 0 }, { TEST_NOW_S + offset_s, 0 } };

	path_of(d, name, path);
	assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* What a run of calls gave: the lines, and how it stopped. */
struct lines {
	char *line[TEST_LINES_MAX];
	size_t n;
	unsigned busy;
	enum ledgerread_status last;
};

static void
lines_clear(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->line[i]);
	memset(l, 0, sizeof(*l));
}

/* Calls until END or WAIT, keeping the lines. */
static void
read_all(struct ledgerread *r, struct lines *l)
{
	const char *line;
	size_t len;

	for (int calls = 0; calls < TEST_CALLS_MAX; calls++) {
		enum ledgerread_status st = ledgerread_next(r, &line, &len);

		if (st == LEDGERREAD_LINE) {
			assert_int_equal(strlen(line), len);
			assert_true(l->n < TEST_LINES_MAX);
			l->line[l->n++] = strdup(line);
			continue;
		}
		if (st == LEDGERREAD_BUSY) {
			l->busy++;
			continue;
		}
		l->last = st;
		return;
	}
	fail_msg("the reader never ended");
}

/* The lines joined by spaces, for one comparison. */
static const char *
joined(const struct lines *l)
{
	static char out[4096];
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < l->n; i++)
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s", i > 0 ? " " : "", l->line[i]);
	return out;
}

static void
expect(struct ledgerread *r, const char *want, enum ledgerread_status how)
{
	struct lines l = { .n = 0 };

	read_all(r, &l);
	assert_string_equal(joined(&l), want);
	assert_int_equal(l.last, how);
	lines_clear(&l);
}

static void
test_rotated_files_come_oldest_first_then_the_live_one(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	write_gzip(d, "egress.jsonl.3.gz", "a1\na2\n", 1);
	append(d, "egress.jsonl-20251128", "b1\n");
	write_gzip(d, "egress.jsonl.2.gz", "c1\n", 1);
	append(d, "egress.jsonl.1", "d1\nd2\n");
	append(d, "egress.jsonl", "e1\n");
	set_mtime(d, "egress.jsonl.3.gz", -400);
	set_mtime(d, "egress.jsonl-20251128", -300);
	set_mtime(d, "egress.jsonl.2.gz", -200);
	set_mtime(d, "egress.jsonl.1", -100);
	assert_non_null(r = ledgerread_open(d->path, 0, false));
	expect(r, "a1 a2 b1 c1 d1 d2 e1", LEDGERREAD_END);
	ledgerread_free(r);
}

static void
test_gzip_of_several_members_reads_whole(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	write_gzip(d, "egress.jsonl.1.gz", "one\ntwo\nthree\nfour\n", 3);
	assert_non_null(r = ledgerread_open(d->path, 0, false));
	expect(r, "one two three four", LEDGERREAD_END);
	ledgerread_free(r);
}

static void
test_other_names_and_kinds_are_left_out(void **state)
{
	struct dir *d = *state;
	char target[TEST_PATH_BYTES], link[TEST_PATH_BYTES];
	struct ledgerread *r;

	append(d, "egress.jsonl.", "no-suffix\n");
	append(d, "egress.jsonlx", "other-name\n");
	append(d, "proxy.log", "other-file\n");
	append(d, "egress.jsonl.9", "kept\n");
	path_of(d, "egress.jsonl.9", target);
	path_of(d, "egress.jsonl.8", link);
	assert_int_equal(symlink(target, link), 0);
	path_of(d, "egress.jsonl.d", target);
	assert_int_equal(mkdir(target, 0700), 0);
	assert_non_null(r = ledgerread_open(d->path, 0, false));
	expect(r, "kept", LEDGERREAD_END);
	ledgerread_free(r);
}

/* logrotate compresses X into X.gz, then removes X: meanwhile X is read. */
static void
test_gzip_beside_its_source_is_left_out(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	append(d, "egress.jsonl.1", "whole1\nwhole2\n");
	write_gzip(d, "egress.jsonl.1.gz", "whole1\n", 1);
	assert_non_null(r = ledgerread_open(d->path, 0, false));
	expect(r, "whole1 whole2", LEDGERREAD_END);
	ledgerread_free(r);
}

static void
test_partial_last_line_is_left_out(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	append(d, "egress.jsonl.1", "old1\nfragm");
	set_mtime(d, "egress.jsonl.1", -10);
	append(d, "egress.jsonl", "new1\nhalf");
	assert_non_null(r = ledgerread_open(d->path, 0, false));
	expect(r, "old1 new1", LEDGERREAD_END);
	ledgerread_free(r);
}

static void
test_partial_line_of_a_followed_file_waits_for_its_rest(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	append(d, "egress.jsonl", "a\nhal");
	assert_non_null(r = ledgerread_open(d->path, 0, true));
	expect(r, "a", LEDGERREAD_WAIT);
	append(d, "egress.jsonl", "f\nb\n");
	expect(r, "half b", LEDGERREAD_WAIT);
	ledgerread_free(r);
}

static void
test_overlong_line_is_skipped_whole(void **state)
{
	struct dir *d = *state;
	char *big = malloc(3 * LEDGER_RECORD_MAX_BYTES + 2);
	struct ledgerread *r;

	memset(big, 'x', 3 * LEDGER_RECORD_MAX_BYTES);
	strcpy(big + 3 * LEDGER_RECORD_MAX_BYTES, "\n");
	append(d, "egress.jsonl", "before\n");
	append(d, "egress.jsonl", big);
	/* One byte over: a line and its newline take LEDGER_RECORD_MAX_BYTES at most. */
	big[LEDGER_RECORD_MAX_BYTES] = '\n';
	big[LEDGER_RECORD_MAX_BYTES + 1] = '\0';
	append(d, "egress.jsonl", big);
	append(d, "egress.jsonl", "after\n");
	assert_non_null(r = ledgerread_open(d->path, 0, false));
	expect(r, "before after", LEDGERREAD_END);
	assert_int_equal(ledgerread_skipped(r), 2);
	ledgerread_free(r);
	free(big);
}

static void
test_line_of_the_largest_size_is_kept(void **state)
{
	struct dir *d = *state;
	char *big = malloc(LEDGER_RECORD_MAX_BYTES + 1);
	const char *line;
	struct ledgerread *r;
	size_t len;

	memset(big, 'y', LEDGER_RECORD_MAX_BYTES - 1);
	strcpy(big + LEDGER_RECORD_MAX_BYTES - 1, "\n");
	append(d, "egress.jsonl", big);
	assert_non_null(r = ledgerread_open(d->path, 0, false));
	while (ledgerread_next(r, &line, &len) == LEDGERREAD_BUSY)
		;
	assert_int_equal(len, LEDGER_RECORD_MAX_BYTES - 1);
	assert_int_equal(ledgerread_skipped(r), 0);
	ledgerread_free(r);
	free(big);
}

/* A huge line without a newline is worked through a chunk per call. */
static void
test_work_per_call_is_bounded(void **state)
{
	struct dir *d = *state;
	size_t size = 64 * LEDGERREAD_CHUNK_BYTES;
	char *big = malloc(size + 1);
	struct lines l = { .n = 0 };
	struct ledgerread *r;

	memset(big, 'z', size);
	big[size] = '\0';
	append(d, "egress.jsonl", big);
	append(d, "egress.jsonl", "\nlast\n");
	assert_non_null(r = ledgerread_open(d->path, 0, false));
	read_all(r, &l);
	assert_string_equal(joined(&l), "last");
	assert_true(l.busy >= 64 / LEDGERREAD_STEPS_PER_CALL - 1);
	lines_clear(&l);
	ledgerread_free(r);
	free(big);
}

static void
test_empty_lines_are_left_out(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	append(d, "egress.jsonl", "\n\na\n\nb\n");
	assert_non_null(r = ledgerread_open(d->path, 0, false));
	expect(r, "a b", LEDGERREAD_END);
	ledgerread_free(r);
}

static void
test_files_changed_before_since_are_skipped_whole(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	append(d, "egress.jsonl.2", "old\n");
	write_gzip(d, "egress.jsonl.1.gz", "recent\n", 1);
	append(d, "egress.jsonl", "live\n");
	set_mtime(d, "egress.jsonl.2", -100);
	set_mtime(d, "egress.jsonl.1.gz", -10);
	/* The live file is never skipped: it is being written. */
	set_mtime(d, "egress.jsonl", -1000);
	assert_non_null(r = ledgerread_open(d->path, (int64_t)(TEST_NOW_S - 50) * 1000000, false));
	expect(r, "recent live", LEDGERREAD_END);
	ledgerread_free(r);
}

static void
test_no_ledger_yet_is_an_empty_read(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	assert_non_null(r = ledgerread_open(d->path, 0, false));
	expect(r, "", LEDGERREAD_END);
	ledgerread_free(r);
}

static void
test_missing_folder_fails(void **state)
{
	struct dir *d = *state;
	char path[TEST_PATH_BYTES];

	path_of(d, "none", path);
	assert_null(ledgerread_open(path, 0, false));
}

static void
test_follow_reads_what_is_appended(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	append(d, "egress.jsonl", "a\n");
	assert_non_null(r = ledgerread_open(d->path, 0, true));
	expect(r, "a", LEDGERREAD_WAIT);
	expect(r, "", LEDGERREAD_WAIT);
	append(d, "egress.jsonl", "b\nc\n");
	expect(r, "b c", LEDGERREAD_WAIT);
	ledgerread_free(r);
}

static void
test_follow_waits_for_a_live_file_to_appear(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	assert_non_null(r = ledgerread_open(d->path, 0, true));
	expect(r, "", LEDGERREAD_WAIT);
	append(d, "egress.jsonl", "first\n");
	expect(r, "first", LEDGERREAD_WAIT);
	ledgerread_free(r);
}

static void
rename_in(const struct dir *d, const char *from, const char *to)
{
	char a[TEST_PATH_BYTES], b[TEST_PATH_BYTES];

	path_of(d, from, a);
	path_of(d, to, b);
	assert_int_equal(rename(a, b), 0);
}

/* corral-ledger(5) ROTATION: rename, then the writer reopens. Until it
 * has written to the new file, what it writes goes to the old one. */
static void
test_follow_across_a_rotation_finishes_the_old_file_first(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	append(d, "egress.jsonl", "a\n");
	assert_non_null(r = ledgerread_open(d->path, 0, true));
	expect(r, "a", LEDGERREAD_WAIT);
	rename_in(d, "egress.jsonl", "egress.jsonl.1");
	append(d, "egress.jsonl.1", "b\n");             /* the writer, before its reopen */
	expect(r, "b", LEDGERREAD_WAIT);
	append(d, "egress.jsonl", "");                  /* logrotate's create: empty */
	append(d, "egress.jsonl.1", "c\npart");
	expect(r, "c", LEDGERREAD_WAIT);
	append(d, "egress.jsonl.1", "ial\n");           /* the last line before the reopen */
	append(d, "egress.jsonl", "d\n");               /* the first after it */
	expect(r, "partial d", LEDGERREAD_WAIT);
	append(d, "egress.jsonl", "e\n");
	expect(r, "e", LEDGERREAD_WAIT);
	ledgerread_free(r);
}

/* The old file's cut last line is whole in the new one: left out. */
static void
test_follow_drops_a_fragment_left_in_the_rotated_file(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	append(d, "egress.jsonl", "a\nfrag");
	assert_non_null(r = ledgerread_open(d->path, 0, true));
	expect(r, "a", LEDGERREAD_WAIT);
	rename_in(d, "egress.jsonl", "egress.jsonl.1");
	append(d, "egress.jsonl", "fragment\nb\n");
	expect(r, "fragment b", LEDGERREAD_WAIT);
	ledgerread_free(r);
}

/* logrotate shifts .1 to .2 while a reader is at an older file. */
static void
test_rotated_file_renamed_after_the_listing_is_still_read(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	append(d, "egress.jsonl.1", "one\n");
	append(d, "egress.jsonl", "live\n");
	set_mtime(d, "egress.jsonl.1", -10);
	assert_non_null(r = ledgerread_open(d->path, 0, false));
	rename_in(d, "egress.jsonl.1", "egress.jsonl.2");
	expect(r, "one live", LEDGERREAD_END);
	ledgerread_free(r);
}

/* The live file renamed after the open is read once, as the live file. */
static void
test_live_file_rotated_after_the_open_is_read_once(void **state)
{
	struct dir *d = *state;
	struct ledgerread *r;

	append(d, "egress.jsonl", "live\n");
	assert_non_null(r = ledgerread_open(d->path, 0, false));
	rename_in(d, "egress.jsonl", "egress.jsonl.1");
	append(d, "egress.jsonl", "after\n");
	expect(r, "live", LEDGERREAD_END);
	ledgerread_free(r);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_dir, teardown_dir)
	const struct CMUnitTest tests[] = {
		T(test_rotated_files_come_oldest_first_then_the_live_one),
		T(test_gzip_of_several_members_reads_whole),
		T(test_other_names_and_kinds_are_left_out),
		T(test_gzip_beside_its_source_is_left_out),
		T(test_partial_last_line_is_left_out),
		T(test_partial_line_of_a_followed_file_waits_for_its_rest),
		T(test_overlong_line_is_skipped_whole),
		T(test_line_of_the_largest_size_is_kept),
		T(test_work_per_call_is_bounded),
		T(test_empty_lines_are_left_out),
		T(test_files_changed_before_since_are_skipped_whole),
		T(test_no_ledger_yet_is_an_empty_read),
		T(test_missing_folder_fails),
		T(test_follow_reads_what_is_appended),
		T(test_follow_waits_for_a_live_file_to_appear),
		T(test_follow_across_a_rotation_finishes_the_old_file_first),
		T(test_follow_drops_a_fragment_left_in_the_rotated_file),
		T(test_rotated_file_renamed_after_the_listing_is_still_read),
		T(test_live_file_rotated_after_the_open_is_read_once),
	};
#undef T

	return cmocka_run_group_tests_name("ledgerread", tests, NULL, NULL);
}
