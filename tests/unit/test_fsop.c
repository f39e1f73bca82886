/* Tests of broker/init/fsop: each file operation on a temporary folder
 * (a workspace, and a folder outside it holding a secret), the escapes
 * RESOLVE_BENEATH refuses, and the result's decoding. Where openat2 is
 * unknown (valgrind says ENOSYS) the tests that need it are skipped. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker/init/fsop.h"

#define SECRET "the secret outside\n"

struct fixture {
	char dir[64];                   /* the temporary folder */
	char ws_path[96];               /* dir/ws: the workspace */
	int ws, root;
	struct fsproto_out out;
	struct fsproto_result r;
};

/* Writes the LEN bytes of DATA to DIR/NAME. */
static void
put_bytes(const char *dir, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void
put_file(const char *dir, const char *name, const char *text)
{
	put_bytes(dir, name, text, strlen(text));
}

/* DIR/NAME, in a static buffer. */
static const char *
in(const char *dir, const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static bool
openat2_known(void)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_BENEATH };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how));

	if (fd != -1)
		close(fd);
	return fd != -1 || errno != ENOSYS;
}

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char path[PATH_MAX];

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test-fsop-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->ws_path, sizeof(f->ws_path), "%s/ws", f->dir);
	snprintf(path, sizeof(path), "%s/outside", f->dir);
	if (mkdir(f->ws_path, 0755) == -1 || mkdir(path, 0755) == -1)
		return -1;
	put_file(path, "secret", SECRET);
	put_file(f->dir, "x", "beside the workspace\n");
	f->ws = open(f->ws_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	f->root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	fsproto_out_init(&f->out);
	*state = f;
	return f->ws == -1 || f->root == -1 ? -1 : 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	close(f->ws);
	close(f->root);
	fsproto_out_clear(&f->out);
	fsproto_result_clear(&f->r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

/* The fixture, or a skip where openat2 is unknown. */
static struct fixture *
need(void **state)
{
	if (!openat2_known())
		skip();
	return *state;
}

/* Decodes what the last operation of OP left in F's output. */
static struct fsproto_result *
result(struct fixture *f, enum fsproto_op op)
{
	fsproto_result_clear(&f->r);
	assert_int_equal(fsproto_result_decode(f->out.data, f->out.len, op, &f->r), 0);
	f->out.len = 0;
	return &f->r;
}

/* The content of the workspace's file NAME as the host sees it. */
static char *
host_read(struct fixture *f, const char *name)
{
	static char buf[4096];
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", f->ws_path, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void
test_write_creates_the_file_and_its_folders(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;

	assert_int_equal(fsop_write(f->ws, "notes/deep/a.md", "hello\n", 6, &f->out), 0);
	r = result(f, FSPROTO_WRITE);
	assert_int_equal(r->status, FSPROTO_OK);
	assert_int_equal(r->bytes_written, 6);
	assert_true(r->created);
	assert_string_equal(host_read(f, "notes/deep/a.md"), "hello\n");
}

static void
test_write_over_a_file_replaces_it_and_is_not_created(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;

	put_file(f->ws_path, "a.txt", "a longer first content\n");
	assert_int_equal(fsop_write(f->ws, "a.txt", "short", 5, &f->out), 0);
	r = result(f, FSPROTO_WRITE);
	assert_false(r->created);
	assert_int_equal(r->bytes_written, 5);
	assert_string_equal(host_read(f, "a.txt"), "short");
}

static void
test_write_over_the_cap_is_refused(void **state)
{
	struct fixture *f = need(state);
	static char big[FSPROTO_WRITE_MAX_BYTES + 1];

	assert_int_equal(fsop_write(f->ws, "big", big, sizeof(big), &f->out), -1);
	assert_int_equal(result(f, FSPROTO_WRITE)->status, FSPROTO_LIMIT);
	assert_null(host_read(f, "big"));
}

static void
test_read_gives_the_content(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;

	put_file(f->ws_path, "r.txt", "line one\nline two\n");
	assert_int_equal(fsop_read(f->ws, -1, "r.txt", &f->out), 0);
	r = result(f, FSPROTO_READ);
	assert_int_equal(r->content_len, 18);
	assert_memory_equal(r->content, "line one\nline two\n", 18);
	assert_false(r->truncated);
}

static void
test_read_over_the_cap_is_truncated_at_it(void **state)
{
	struct fixture *f = need(state);
	static char big[FSPROTO_READ_MAX_BYTES + 10];
	struct fsproto_result *r;

	memset(big, 'a', sizeof(big));
	put_bytes(f->ws_path, "big", big, sizeof(big));
	assert_int_equal(fsop_read(f->ws, -1, "big", &f->out), 0);
	r = result(f, FSPROTO_READ);
	assert_true(r->truncated);
	assert_int_equal(r->content_len, FSPROTO_READ_MAX_BYTES);
}

static void
test_read_of_a_folder_is_not_a_regular_file(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;

	assert_int_equal(mkdir(in(f->ws_path, "d"), 0755), 0);
	assert_int_equal(fsop_read(f->ws, -1, "d", &f->out), -1);
	r = result(f, FSPROTO_READ);
	assert_int_equal(r->status, FSPROTO_INVALID);
	assert_non_null(memmem(r->message, r->message_len, "not a regular file", 18));
}

static void
test_read_of_a_missing_file_is_not_found(void **state)
{
	struct fixture *f = need(state);

	assert_int_equal(fsop_read(f->ws, -1, "nope.txt", &f->out), -1);
	assert_int_equal(result(f, FSPROTO_READ)->status, FSPROTO_NOT_FOUND);
}

static void
test_error_message_is_one_line_whatever_the_path(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;

	assert_int_equal(fsop_read(f->ws, -1, "a\nb\tc", &f->out), -1);
	r = result(f, FSPROTO_READ);
	assert_int_equal(r->status, FSPROTO_NOT_FOUND);
	assert_null(memchr(r->message, '\n', r->message_len));
	assert_non_null(memmem(r->message, r->message_len, "a?b?c", 5));
}

static void
test_dotdot_out_of_the_workspace_is_refused(void **state)
{
	struct fixture *f = need(state);

	assert_int_equal(fsop_read(f->ws, f->root, "../x", &f->out), -1);
	assert_int_equal(result(f, FSPROTO_READ)->status, FSPROTO_PERMISSION);
	assert_int_equal(fsop_write(f->ws, "../y", "z", 1, &f->out), -1);
	assert_int_equal(result(f, FSPROTO_WRITE)->status, FSPROTO_PERMISSION);
	assert_int_equal(fsop_write(f->ws, "sub/../../y", "z", 1, &f->out), -1);
	assert_int_equal(result(f, FSPROTO_WRITE)->status, FSPROTO_PERMISSION);
	assert_int_equal(access(in(f->dir, "y"), F_OK), -1);
}

static void
test_absolute_path_is_refused_without_a_root(void **state)
{
	struct fixture *f = need(state);
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/outside/secret", f->dir);
	assert_int_equal(fsop_read(f->ws, -1, path, &f->out), -1);
	assert_int_equal(result(f, FSPROTO_READ)->status, FSPROTO_PERMISSION);
	assert_int_equal(fsop_write(f->ws, path, "owned", 5, &f->out), -1);
	assert_int_equal(result(f, FSPROTO_WRITE)->status, FSPROTO_PERMISSION);
	assert_int_equal(fsop_list(f->ws, -1, "/", &f->out), -1);
	assert_int_equal(result(f, FSPROTO_LIST)->status, FSPROTO_PERMISSION);
}

static void
test_absolute_path_is_read_from_the_root_given(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/outside/secret", f->dir);
	assert_int_equal(fsop_read(f->ws, f->root, path, &f->out), 0);
	r = result(f, FSPROTO_READ);
	assert_memory_equal(r->content, SECRET, strlen(SECRET));
}

static void
test_symlink_pointing_outside_is_refused(void **state)
{
	struct fixture *f = need(state);
	char target[PATH_MAX], link[PATH_MAX];

	snprintf(target, sizeof(target), "%s/outside", f->dir);
	snprintf(link, sizeof(link), "%s/out", f->ws_path);
	assert_int_equal(symlink(target, link), 0);
	snprintf(link, sizeof(link), "%s/rel", f->ws_path);
	assert_int_equal(symlink("../outside/secret", link), 0);
	assert_int_equal(fsop_read(f->ws, f->root, "out/secret", &f->out), -1);
	assert_int_equal(result(f, FSPROTO_READ)->status, FSPROTO_PERMISSION);
	assert_int_equal(fsop_read(f->ws, f->root, "rel", &f->out), -1);
	assert_int_equal(result(f, FSPROTO_READ)->status, FSPROTO_PERMISSION);
	assert_int_equal(fsop_write(f->ws, "rel", "owned", 5, &f->out), -1);
	assert_int_equal(result(f, FSPROTO_WRITE)->status, FSPROTO_PERMISSION);
	assert_int_equal(fsop_write(f->ws, "out/new", "owned", 5, &f->out), -1);
	assert_int_equal(result(f, FSPROTO_WRITE)->status, FSPROTO_PERMISSION);
	assert_int_equal(fsop_list(f->ws, f->root, "out", &f->out), -1);
	assert_int_equal(result(f, FSPROTO_LIST)->status, FSPROTO_PERMISSION);
	snprintf(target, sizeof(target), "%s/outside/new", f->dir);
	assert_int_equal(access(target, F_OK), -1);
	snprintf(target, sizeof(target), "%s/outside/secret", f->dir);
	assert_int_equal(fsop_read(f->ws, f->root, target, &f->out), 0);
	assert_memory_equal(result(f, FSPROTO_READ)->content, SECRET, strlen(SECRET));
}

static void
test_symlink_inside_the_workspace_is_followed(void **state)
{
	struct fixture *f = need(state);
	char link[PATH_MAX];

	put_file(f->ws_path, "real.txt", "real\n");
	snprintf(link, sizeof(link), "%s/alias", f->ws_path);
	assert_int_equal(symlink("real.txt", link), 0);
	assert_int_equal(fsop_read(f->ws, -1, "alias", &f->out), 0);
	assert_memory_equal(result(f, FSPROTO_READ)->content, "real\n", 5);
}

static void
test_edit_replaces_the_one_occurrence(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;

	put_file(f->ws_path, "e.txt", "alpha beta gamma\n");
	assert_int_equal(fsop_edit(f->ws, "e.txt", "beta", 4, "BETA!", 5, &f->out), 0);
	r = result(f, FSPROTO_EDIT);
	assert_int_equal(r->bytes_written, 18);
	assert_false(r->created);
	assert_string_equal(host_read(f, "e.txt"), "alpha BETA! gamma\n");
}

static void
test_edit_with_no_occurrence_is_refused(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;

	put_file(f->ws_path, "e.txt", "alpha\n");
	assert_int_equal(fsop_edit(f->ws, "e.txt", "zeta", 4, "x", 1, &f->out), -1);
	r = result(f, FSPROTO_EDIT);
	assert_int_equal(r->status, FSPROTO_INVALID);
	assert_non_null(memmem(r->message, r->message_len, "occurs 0 times", 14));
	assert_string_equal(host_read(f, "e.txt"), "alpha\n");
}

static void
test_edit_with_two_occurrences_is_refused(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;

	put_file(f->ws_path, "e.txt", "ab ab\n");
	assert_int_equal(fsop_edit(f->ws, "e.txt", "ab", 2, "x", 1, &f->out), -1);
	r = result(f, FSPROTO_EDIT);
	assert_int_equal(r->status, FSPROTO_INVALID);
	assert_non_null(memmem(r->message, r->message_len, "occurs 2 times", 14));
	assert_string_equal(host_read(f, "e.txt"), "ab ab\n");
}

static void
test_list_gives_names_types_and_sizes_by_name(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;
	char link[PATH_MAX];

	put_file(f->ws_path, "b.txt", "12345");
	put_file(f->ws_path, "a.txt", "1");
	snprintf(link, sizeof(link), "%s/c", f->ws_path);
	assert_int_equal(mkdir(link, 0755), 0);
	snprintf(link, sizeof(link), "%s/d", f->ws_path);
	assert_int_equal(symlink("a.txt", link), 0);
	assert_int_equal(fsop_list(f->ws, -1, "", &f->out), 0);
	r = result(f, FSPROTO_LIST);
	assert_int_equal(r->n_entries, 4);
	assert_memory_equal(r->entries[0].name, "a.txt", 5);
	assert_int_equal(r->entries[0].size, 1);
	assert_memory_equal(r->entries[1].name, "b.txt", 5);
	assert_int_equal(r->entries[1].size, 5);
	assert_int_equal(r->entries[1].type, FSPROTO_TYPE_FILE);
	assert_int_equal(r->entries[2].type, FSPROTO_TYPE_DIR);
	assert_int_equal(r->entries[3].type, FSPROTO_TYPE_SYMLINK);
}

static void
test_grep_counts_every_match_with_path_and_line(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;

	put_file(f->ws_path, "b.txt", "TODO first\nno\nTODO again\n");
	assert_int_equal(fsop_write(f->ws, "notes/a.md", "one\nTODO two\nthree\n", 19, &f->out), 0);
	f->out.len = 0;
	assert_int_equal(fsop_grep(f->ws, -1, "TO+DO", "", &f->out), 0);
	r = result(f, FSPROTO_GREP);
	assert_int_equal(r->count, 3);
	assert_int_equal(r->n_matches, 3);
	assert_memory_equal(r->matches[0].path, "b.txt", 5);
	assert_int_equal(r->matches[0].line, 1);
	assert_int_equal(r->matches[1].line, 3);
	assert_int_equal(r->matches[2].path_len, strlen("notes/a.md"));
	assert_memory_equal(r->matches[2].path, "notes/a.md", 10);
	assert_int_equal(r->matches[2].line, 2);
	assert_memory_equal(r->matches[2].text, "TODO two", 8);
	assert_int_equal(fsop_grep(f->ws, -1, "TODO", "notes", &f->out), 0);
	r = result(f, FSPROTO_GREP);
	assert_int_equal(r->count, 1);
	assert_memory_equal(r->matches[0].path, "notes/a.md", 10);
}

static void
test_grep_under_an_absolute_folder_shows_absolute_paths(void **state)
{
	struct fixture *f = need(state);
	struct fsproto_result *r;
	char path[PATH_MAX], want[PATH_MAX];

	snprintf(path, sizeof(path), "%s/outside/", f->dir);
	snprintf(want, sizeof(want), "%s/outside/secret", f->dir);
	assert_int_equal(fsop_grep(f->ws, f->root, "secret", path, &f->out), 0);
	r = result(f, FSPROTO_GREP);
	assert_int_equal(r->count, 1);
	assert_int_equal(r->matches[0].path_len, strlen(want));
	assert_memory_equal(r->matches[0].path, want, strlen(want));
}

static void
test_grep_skips_binary_files_and_symlinks(void **state)
{
	struct fixture *f = need(state);
	char link[PATH_MAX], target[PATH_MAX];

	assert_int_equal(fsop_write(f->ws, "bin", "secret\0\1\2", 9, &f->out), 0);
	snprintf(target, sizeof(target), "%s/outside", f->dir);
	snprintf(link, sizeof(link), "%s/out", f->ws_path);
	assert_int_equal(symlink(target, link), 0);
	f->out.len = 0;
	assert_int_equal(fsop_grep(f->ws, -1, "secret", "", &f->out), 0);
	assert_int_equal(result(f, FSPROTO_GREP)->count, 0);
}

static void
test_grep_keeps_the_first_matches_and_counts_all(void **state)
{
	struct fixture *f = need(state);
	static char text[(FSPROTO_GREP_MATCHES_MAX + 5) * 2];
	struct fsproto_result *r;
	size_t i;

	for (i = 0; i < FSPROTO_GREP_MATCHES_MAX + 5; i++)
		memcpy(text + 2 * i, "m\n", 2);
	assert_int_equal(fsop_write(f->ws, "many", text, sizeof(text), &f->out), 0);
	f->out.len = 0;
	assert_int_equal(fsop_grep(f->ws, -1, "m", "many", &f->out), 0);
	r = result(f, FSPROTO_GREP);
	assert_int_equal(r->count, FSPROTO_GREP_MATCHES_MAX + 5);
	assert_int_equal(r->n_matches, FSPROTO_GREP_MATCHES_MAX);
	assert_memory_equal(r->matches[0].path, "many", 4);
}

static void
test_grep_with_a_bad_pattern_is_refused(void **state)
{
	struct fixture *f = need(state);

	assert_int_equal(fsop_grep(f->ws, -1, "a(", "", &f->out), -1);
	assert_int_equal(result(f, FSPROTO_GREP)->status, FSPROTO_INVALID);
}

/* The codec needs no openat2: these run under valgrind too. */
static void
test_result_cut_short_is_refused(void **state)
{
	struct fixture *f = *state;
	uint32_t words[] = { FSPROTO_OK, 0, 10, 0 };     /* read: 10 bytes announced, 4 there */

	assert_int_equal(fsproto_result_decode(words, sizeof(words), FSPROTO_READ, &f->r), -1);
	assert_int_equal(errno, EBADMSG);
}

static void
test_result_with_more_kept_than_counted_is_refused(void **state)
{
	struct fixture *f = *state;
	uint32_t words[] = { FSPROTO_OK, 0, 1 };  /* grep: count 0, one kept */

	assert_int_equal(fsproto_result_decode(words, sizeof(words), FSPROTO_GREP, &f->r), -1);
}

static void
test_result_with_an_unknown_status_is_refused(void **state)
{
	struct fixture *f = *state;
	uint32_t words[] = { FSPROTO_STATUS_MAX + 1, 0 };

	assert_int_equal(fsproto_result_decode(words, sizeof(words), FSPROTO_READ, &f->r), -1);
}

static void
test_error_result_carries_its_message(void **state)
{
	struct fixture *f = *state;
	unsigned char bytes[12] = { 0 };
	uint32_t status = FSPROTO_NOT_FOUND, n = 4;

	memcpy(bytes, &status, 4);
	memcpy(bytes + 4, &n, 4);
	memcpy(bytes + 8, "gone", 4);
	assert_int_equal(fsproto_result_decode(bytes, sizeof(bytes), FSPROTO_LIST, &f->r), 0);
	assert_int_equal(f->r.status, FSPROTO_NOT_FOUND);
	assert_memory_equal(f->r.message, "gone", 4);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_write_creates_the_file_and_its_folders),
		T(test_write_over_a_file_replaces_it_and_is_not_created),
		T(test_write_over_the_cap_is_refused),
		T(test_read_gives_the_content),
		T(test_read_over_the_cap_is_truncated_at_it),
		T(test_read_of_a_folder_is_not_a_regular_file),
		T(test_read_of_a_missing_file_is_not_found),
		T(test_error_message_is_one_line_whatever_the_path),
		T(test_dotdot_out_of_the_workspace_is_refused),
		T(test_absolute_path_is_refused_without_a_root),
		T(test_absolute_path_is_read_from_the_root_given),
		T(test_symlink_pointing_outside_is_refused),
		T(test_symlink_inside_the_workspace_is_followed),
		T(test_edit_replaces_the_one_occurrence),
		T(test_edit_with_no_occurrence_is_refused),
		T(test_edit_with_two_occurrences_is_refused),
		T(test_list_gives_names_types_and_sizes_by_name),
		T(test_grep_counts_every_match_with_path_and_line),
		T(test_grep_under_an_absolute_folder_shows_absolute_paths),
		T(test_grep_skips_binary_files_and_symlinks),
		T(test_grep_keeps_the_first_matches_and_counts_all),
		T(test_grep_with_a_bad_pattern_is_refused),
		T(test_result_cut_short_is_refused),
		T(test_result_with_more_kept_than_counted_is_refused),
		T(test_result_with_an_unknown_status_is_refused),
		T(test_error_result_carries_its_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
