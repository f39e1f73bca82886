/* Tests of broker/credcopy: grants copied into a sandbox's home as run_as.
 * They need root (the copier drops to a made-up user, TEST_UID:TEST_GID,
 * that owns the made-up homes); without it they are skipped. Each test
 * builds a fresh source and destination home under one temporary folder,
 * removed at the end. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker/monitor/credcopy.h"
#include "broker/monitor/monitor-wire.h"

#define TEST_UID 64123
#define TEST_GID 64123
#define TEST_TEXT_MAX_BYTES 8192
#define TEST_KEY "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n" \
	"-----END OPENSSH PRIVATE KEY-----\n"
#define TEST_TOKEN "github.com:\n    oauth_token: gho_testtoken\n"

#define TEST_TOP_MAX_BYTES 64
static char top[TEST_TOP_MAX_BYTES];     /* the temporary folder */
static char src[PATH_MAX], dst[PATH_MAX];
static int src_fd = -1, dst_fd = -1;
static int serial;
static bool ready;                      /* root, and openat2 answers */

/* ---- helpers ---- */

static void
path_in(char *out, const char *dir, const char *rel)
{
	assert_true(snprintf(out, PATH_MAX, "%s/%s", dir, rel) < PATH_MAX);
}

/* A folder REL of DIR, 0700, owned by the test user. */
static void
mk_dir(const char *dir, const char *rel)
{
	char p[PATH_MAX];

	path_in(p, dir, rel);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chown(p, TEST_UID, TEST_GID), 0);
}

/* A file REL of DIR holding TEXT, mode MODE, owned by UID. */
static void
mk_file_as(const char *dir, const char *rel, const char *text, mode_t mode, uid_t uid)
{
	char p[PATH_MAX];
	int fd;

	path_in(p, dir, rel);
	assert_true((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode)) >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchown(fd, uid, uid == 0 ? 0 : TEST_GID), 0);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void
mk_file(const char *dir, const char *rel, const char *text)
{
	mk_file_as(dir, rel, text, 0644, TEST_UID);
}

/* The made-up home: .ssh keys, gh's hosts.yml, .gitconfig. */
static void
mk_home(void)
{
	mk_dir(src, ".ssh");
	mk_file_as(src, ".ssh/id_ed25519", TEST_KEY, 0600, TEST_UID);
	mk_file(src, ".ssh/id_ed25519.pub", "ssh-ed25519 AAAA test\n");
	mk_file(src, ".ssh/known_hosts", "github.com ssh-ed25519 AAAA\n");
	mk_dir(src, ".config");
	mk_dir(src, ".config/gh");
	mk_file(src, ".config/gh/hosts.yml", TEST_TOKEN);
	mk_file(src, ".gitconfig", "[user]\n\tname = Test\n");
}

static void
read_text(const char *dir, const char *rel, char *out)
{
	char p[PATH_MAX];
	ssize_t n;
	int fd;

	path_in(p, dir, rel);
	assert_true((fd = open(p, O_RDONLY)) >= 0);
	assert_true((n = read(fd, out, TEST_TEXT_MAX_BYTES - 1)) >= 0);
	out[n] = '\0';
	close(fd);
}

static bool
exists_in(const char *dir, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	path_in(p, dir, rel);
	return lstat(p, &st) == 0;
}

static void
grant(const char *name, struct grant *g)
{
	assert_int_equal(grant_find(name, NULL, 0, g), 0);
}

static struct credcopy_spec
spec_for(const struct grant *g, size_t n)
{
	struct credcopy_spec s = { .uid = TEST_UID, .gid = TEST_GID, .src_home_fd = src_fd,
	    .dst_home_fd = dst_fd, .dst_home_path = dst, .grants = g, .ngrants = n };

	return s;
}

/* Copies the grants NAMES (NULL-terminated); the result, or NULL with *ERR. */
static struct monitor_grants *
copy_grants(const char *const *names, char **err)
{
	struct grant g[CORRAL_GRANTS_MAX];
	struct monitor_grants *r = NULL;
	struct credcopy_spec s;
	size_t n = 0;

	for (; names[n] != NULL; n++)
		grant(names[n], &g[n]);
	s = spec_for(g, n);
	*err = NULL;
	if (credcopy_copy(&s, &r, err) == -1)
		return NULL;
	return r;
}

static struct monitor_grants *
copy_ok(const char *const *names)
{
	char *err = NULL;
	struct monitor_grants *r = copy_grants(names, &err);

	if (r == NULL) {
		print_error("copy failed: %s\n", err);
		free(err);
	}
	assert_non_null(r);
	return r;
}

/* The failure message of copying NAMES. */
static char *
copy_fails(const char *const *names)
{
	char *err = NULL;
	struct monitor_grants *r = copy_grants(names, &err);

	monitor_grants_free(r);
	assert_null(r);
	assert_non_null(err);
	return err;
}

static const struct monitor_grant_applied *
applied(const struct monitor_grants *r, const char *name)
{
	for (size_t i = 0; i < r->ngrants; i++)
		if (strcmp(r->grants[i].name, name) == 0)
			return &r->grants[i];
	fail_msg("no entry %s", name);
	return NULL;
}

static const char *
skip_reason(const struct monitor_grant_applied *a, const char *path)
{
	for (size_t i = 0; i < a->nskipped; i++)
		if (strcmp(a->skipped[i].path, path) == 0)
			return a->skipped[i].reason;
	return NULL;
}

static bool
was_copied(const struct monitor_grant_applied *a, const char *path)
{
	for (size_t i = 0; i < a->ncopied; i++)
		if (strcmp(a->copied[i], path) == 0)
			return true;
	return false;
}

static const char *
env_of(const struct monitor_grants *r, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < r->nenv; i++)
		if (strncmp(r->env[i], name, len) == 0 && r->env[i][len] == '=')
			return r->env[i] + len + 1;
	return NULL;
}

static void
assert_owned(const char *rel, mode_t mode)
{
	char p[PATH_MAX];
	struct stat st;

	path_in(p, dst, rel);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_uid, TEST_UID);
	assert_int_equal(st.st_gid, TEST_GID);
	assert_int_equal(st.st_mode & 07777, mode);
}

/* Removes PATH and what it holds, as root (the test's own clean-up). */
static void
rm_tree(const char *path)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	(void)!system(cmd);
}

/* ---- fixtures ---- */

static void
need_ready(void)
{
	if (!ready)
		skip();
}

/* The made-up home, and the grants NAMES copied from it; the result. */
static struct monitor_grants *
copy_home(const char *const *names)
{
	need_ready();
	mk_home();
	return copy_ok(names);
}

/* Copies as S says, expecting a failure; its message. */
static char *
spec_fails(const struct credcopy_spec *s)
{
	struct monitor_grants *r = NULL;
	char *err = NULL;

	assert_int_equal(credcopy_copy(s, &r, &err), -1);
	assert_null(r);
	assert_non_null(err);
	return err;
}

/* Checks that the grant NAME did not copy REL and reports it skipped, for a
 * reason that says WHY (NULL: any reason). */
static void
assert_skipped(const struct monitor_grants *r, const char *name, const char *rel,
    const char *why)
{
	const char *reason = skip_reason(applied(r, name), rel);

	assert_false(exists_in(dst, rel));
	assert_non_null(reason);
	if (why != NULL)
		assert_non_null(strstr(reason, why));
}

static int
setup_all(void **state)
{
	(void)state;
	/* valgrind 3.19 does not know openat2 and says ENOSYS. */
	errno = 0;
	if (syscall(SYS_openat2, -1, "", NULL, 0) == -1 && errno == ENOSYS) {
		printf("# openat2 is not available (valgrind?): copying tests skipped\n");
		return 0;
	}
	if (geteuid() != 0) {
		printf("# the copier drops to another user: needs root\n");
		return 0;
	}
	ready = true;
	snprintf(top, sizeof(top), "/tmp/test-credcopy-XXXXXX");
	if (mkdtemp(top) == NULL || chmod(top, 0755) == -1)
		return -1;
	return 0;
}

static int
teardown_all(void **state)
{
	(void)state;
	if (top[0] != '\0' && strncmp(top, "/tmp/test-credcopy-", 19) == 0)
		rm_tree(top);
	return 0;
}

/* A fresh source home (0700) and destination home (0700), both the test user's. */
static int
setup(void **state)
{
	(void)state;
	if (!ready)
		return 0;
	serial++;
	snprintf(src, sizeof(src), "%s/src%d", top, serial);
	snprintf(dst, sizeof(dst), "%s/dst%d", top, serial);
	if (mkdir(src, 0700) == -1 || chown(src, TEST_UID, TEST_GID) == -1 ||
	    mkdir(dst, 0700) == -1 || chown(dst, TEST_UID, TEST_GID) == -1)
		return -1;
	src_fd = open(src, O_PATH | O_DIRECTORY | O_CLOEXEC);
	dst_fd = open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return src_fd >= 0 && dst_fd >= 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	if (src_fd >= 0)
		close(src_fd);
	if (dst_fd >= 0)
		close(dst_fd);
	src_fd = dst_fd = -1;
	return 0;
}

/* ---- copying ---- */

static void
test_copied_files_are_0600_owned_by_run_as(void **state)
{
	static const char *const names[] = { "ssh", "gh", NULL };
	struct monitor_grants *r;
	char text[TEST_TEXT_MAX_BYTES];

	(void)state;
	r = copy_home(names);
	assert_owned(".ssh/id_ed25519", 0600);
	assert_owned(".ssh/id_ed25519.pub", 0600);
	assert_owned(".ssh/known_hosts", 0600);
	assert_owned(".config/gh/hosts.yml", 0600);
	assert_owned(".gitconfig", 0600);
	read_text(dst, ".config/gh/hosts.yml", text);
	assert_string_equal(text, TEST_TOKEN);
	read_text(dst, ".ssh/id_ed25519", text);
	assert_string_equal(text, TEST_KEY);
	monitor_grants_free(r);
}

static void
test_copied_folders_are_0700_owned_by_run_as(void **state)
{
	static const char *const names[] = { "ssh", "gh", NULL };
	struct monitor_grants *r;
	char p[PATH_MAX];

	(void)state;
	need_ready();
	mk_home();
	path_in(p, src, ".config");
	assert_int_equal(chmod(p, 0755), 0);
	r = copy_ok(names);
	assert_owned(".ssh", 0700);
	assert_owned(".config", 0700);
	assert_owned(".config/gh", 0700);
	monitor_grants_free(r);
}

static void
test_ssh_config_names_the_copied_identity_file(void **state)
{
	static const char *const names[] = { "ssh", NULL };
	char text[TEST_TEXT_MAX_BYTES], want[PATH_MAX + 64];
	struct monitor_grants *r;

	(void)state;
	r = copy_home(names);
	read_text(dst, ".ssh/config", text);
	snprintf(want, sizeof(want), "\tIdentityFile %s/.ssh/id_ed25519\n", dst);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "\tUserKnownHostsFile %s/.ssh/known_hosts\n", dst);
	assert_non_null(strstr(text, want));
	/* The public key is no identity. */
	assert_null(strstr(text, "id_ed25519.pub"));
	assert_owned(".ssh/config", 0600);
	monitor_grants_free(r);
}

/* A private key that does not start with a PEM header is known by its
 * .pub twin; a file with neither is no identity. */
static void
test_a_key_without_a_pem_header_is_known_by_its_pub_twin(void **state)
{
	static const char *const names[] = { "ssh", NULL };
	char text[TEST_TEXT_MAX_BYTES], want[PATH_MAX + 64];
	struct monitor_grants *r;

	(void)state;
	need_ready();
	mk_home();
	mk_file_as(src, ".ssh/work_key", "PuTTY-User-Key-File-3: ssh-ed25519\nAAAA\n", 0600,
	    TEST_UID);
	mk_file(src, ".ssh/work_key.pub", "ssh-ed25519 AAAA work\n");
	mk_file(src, ".ssh/notes", "not a key\n");
	mk_file(src, ".ssh/lonely.pub", "ssh-ed25519 AAAA lonely\n");
	r = copy_ok(names);
	read_text(dst, ".ssh/config", text);
	snprintf(want, sizeof(want), "\tIdentityFile %s/.ssh/work_key\n", dst);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "\tIdentityFile %s/.ssh/id_ed25519\n", dst);
	assert_non_null(strstr(text, want));
	assert_null(strstr(text, "notes"));
	assert_null(strstr(text, ".pub"));
	monitor_grants_free(r);
}

static void
test_ssh_config_keeps_the_users_own_after_the_block(void **state)
{
	static const char *const names[] = { "ssh", NULL };
	char text[TEST_TEXT_MAX_BYTES];
	struct monitor_grants *r;
	char *block, *own;

	(void)state;
	need_ready();
	mk_home();
	mk_file(src, ".ssh/config", "Host work\n\tUser git\n");
	r = copy_ok(names);
	read_text(dst, ".ssh/config", text);
	block = strstr(text, "IdentityFile");
	own = strstr(text, "Host work\n\tUser git\n");
	assert_non_null(block);
	assert_non_null(own);
	assert_true(block < own);
	assert_false(exists_in(dst, ".ssh/config.corral-new"));
	monitor_grants_free(r);
}

static void
test_env_has_git_ssh_command_with_f_and_gh_config_dir(void **state)
{
	static const char *const names[] = { "ssh", "gh", NULL };
	char want[PATH_MAX + 64];
	struct monitor_grants *r;

	(void)state;
	r = copy_home(names);
	snprintf(want, sizeof(want), "ssh -F %s/.ssh/config", dst);
	assert_non_null(env_of(r, "GIT_SSH_COMMAND"));
	assert_string_equal(env_of(r, "GIT_SSH_COMMAND"), want);
	snprintf(want, sizeof(want), "%s/.config/gh", dst);
	assert_non_null(env_of(r, "GH_CONFIG_DIR"));
	assert_string_equal(env_of(r, "GH_CONFIG_DIR"), want);
	monitor_grants_free(r);
}

static void
test_each_grant_reports_its_hosts(void **state)
{
	static const char *const names[] = { "ssh", "gh", NULL };
	const struct monitor_grant_applied *a;
	struct monitor_grants *r;

	(void)state;
	r = copy_home(names);
	a = applied(r, "ssh");
	assert_int_equal(a->nhosts, 2);
	assert_string_equal(a->hosts[0], "github.com:22");
	a = applied(r, "gh");
	assert_int_equal(a->nhosts, 2);
	assert_string_equal(a->hosts[0], "api.github.com:443");
	assert_string_equal(a->hosts[1], "github.com:443");
	assert_true(was_copied(a, ".config/gh/hosts.yml"));
	monitor_grants_free(r);
}

static void
test_gitconfig_is_copied_with_any_grant(void **state)
{
	static const char *const names[] = { "gh", NULL };
	char text[TEST_TEXT_MAX_BYTES];
	struct monitor_grants *r;

	(void)state;
	r = copy_home(names);
	read_text(dst, ".gitconfig", text);
	assert_string_equal(text, "[user]\n\tname = Test\n");
	assert_true(was_copied(applied(r, CREDCOPY_GITCONFIG_NAME), ".gitconfig"));
	/* Only what was granted: no .ssh without the ssh grant. */
	assert_false(exists_in(dst, ".ssh"));
	monitor_grants_free(r);
}

static void
test_missing_gitconfig_is_not_reported(void **state)
{
	static const char *const names[] = { "gh", NULL };
	struct monitor_grants *r;

	(void)state;
	need_ready();
	mk_dir(src, ".config");
	mk_dir(src, ".config/gh");
	mk_file(src, ".config/gh/hosts.yml", TEST_TOKEN);
	r = copy_ok(names);
	assert_int_equal(r->ngrants, 1);
	assert_string_equal(r->grants[0].name, "gh");
	monitor_grants_free(r);
}

static void
test_kube_hosts_are_the_kubeconfigs_clusters(void **state)
{
	static const char *const names[] = { "kube", NULL };
	char cfg[TEST_TEXT_MAX_BYTES], want[PATH_MAX + 32];
	const struct monitor_grant_applied *a;
	struct monitor_grants *r;
	size_t off;

	(void)state;
	need_ready();
	off = (size_t)snprintf(cfg, sizeof(cfg), "apiVersion: v1\nclusters:\n- cluster:\n"
	    "    certificate-authority-data: ");
	/* A certificate line longer than the copier reads at once. */
	memset(cfg + off, 'A', 3000);
	off += 3000;
	snprintf(cfg + off, sizeof(cfg) - off, "\n    server: https://k8s.example.com:6443\n"
	    "  name: one\n- cluster:\n    server: \"https://Other.Example.org\"\n"
	    "- cluster:\n    server: https://*.evil.example\n"
	    "- cluster:\n    server: https://k8s.example.com:6443\n");
	mk_dir(src, ".kube");
	mk_file(src, ".kube/config", cfg);
	r = copy_ok(names);
	a = applied(r, "kube");
	assert_int_equal(a->nhosts, 2);
	assert_string_equal(a->hosts[0], "k8s.example.com:6443");
	assert_string_equal(a->hosts[1], "Other.Example.org:443");
	assert_non_null(skip_reason(a, ".kube/config (server *.evil.example:443)"));
	snprintf(want, sizeof(want), "%s/.kube/config", dst);
	assert_string_equal(env_of(r, "KUBECONFIG"), want);
	monitor_grants_free(r);
}

static void
test_symlink_key_pointing_outside_is_skipped_and_reported(void **state)
{
	static const char *const names[] = { "ssh", NULL };
	char outside[PATH_MAX], p[PATH_MAX];
	struct monitor_grants *r;

	(void)state;
	need_ready();
	mk_home();
	/* Readable by run_as, but outside the granted folder. */
	snprintf(outside, sizeof(outside), "%s/outside-key%d", top, serial);
	mk_file_as(top, strrchr(outside, '/') + 1, TEST_KEY, 0644, TEST_UID);
	path_in(p, src, ".ssh/id_rsa");
	assert_int_equal(symlink(outside, p), 0);
	r = copy_ok(names);
	assert_skipped(r, "ssh", ".ssh/id_rsa", "symbolic link");
	monitor_grants_free(r);
}

static void
test_symlink_to_a_file_run_as_cannot_read_is_not_copied(void **state)
{
	static const char *const names[] = { "ssh", NULL };
	char secret[PATH_MAX], p[PATH_MAX];
	struct monitor_grants *r;

	(void)state;
	need_ready();
	mk_home();
	snprintf(secret, sizeof(secret), "secret%d", serial);
	mk_file_as(top, secret, TEST_KEY, 0600, 0);
	path_in(p, top, secret);
	path_in(secret, src, ".ssh/id_secret");
	assert_int_equal(symlink(p, secret), 0);
	r = copy_ok(names);
	assert_skipped(r, "ssh", ".ssh/id_secret", NULL);
	monitor_grants_free(r);
}

static void
test_file_run_as_cannot_read_is_skipped_as_unreadable(void **state)
{
	static const char *const names[] = { "ssh", NULL };
	struct monitor_grants *r;

	(void)state;
	need_ready();
	mk_home();
	/* Root could read it: the copier is not root. */
	mk_file_as(src, ".ssh/id_root", TEST_KEY, 0600, 0);
	r = copy_ok(names);
	assert_skipped(r, "ssh", ".ssh/id_root", "may not read");
	monitor_grants_free(r);
}

static void
test_symlinked_grant_folder_is_not_followed(void **state)
{
	static const char *const names[] = { "gh", NULL };
	char real[PATH_MAX], p[PATH_MAX];
	char *err;

	(void)state;
	need_ready();
	mk_dir(src, "dotfiles");
	mk_dir(src, "dotfiles/gh");
	mk_file(src, "dotfiles/gh/hosts.yml", TEST_TOKEN);
	mk_dir(src, ".config");
	path_in(real, src, "dotfiles/gh");
	path_in(p, src, ".config/gh");
	assert_int_equal(symlink(real, p), 0);
	err = copy_fails(names);
	assert_non_null(strstr(err, "grant gh: nothing to copy"));
	assert_non_null(strstr(err, "symbolic link"));
	assert_false(exists_in(dst, ".config/gh/hosts.yml"));
	free(err);
}

static void
test_fifo_is_skipped(void **state)
{
	static const char *const names[] = { "ssh", NULL };
	struct monitor_grants *r;
	char p[PATH_MAX];

	(void)state;
	need_ready();
	mk_home();
	path_in(p, src, ".ssh/agent.fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(chown(p, TEST_UID, TEST_GID), 0);
	r = copy_ok(names);
	assert_skipped(r, "ssh", ".ssh/agent.fifo", "not a regular file");
	monitor_grants_free(r);
}

static void
test_file_cap_is_enforced(void **state)
{
	struct grant g;
	struct credcopy_spec s;
	char *err;

	(void)state;
	need_ready();
	mk_home();
	grant("ssh", &g);
	s = spec_for(&g, 1);
	s.files_max = 2;
	err = spec_fails(&s);
	assert_non_null(strstr(err, "grant ssh: copies more than 2 files (the limit per grant)"));
	free(err);
}

static void
test_byte_cap_is_enforced(void **state)
{
	struct grant g;
	struct credcopy_spec s;
	char *err;

	(void)state;
	need_ready();
	mk_home();
	grant("gh", &g);
	s = spec_for(&g, 1);
	s.bytes_max = strlen(TEST_TOKEN) - 1;
	err = spec_fails(&s);
	assert_non_null(strstr(err, "grant gh: copies more than"));
	assert_non_null(strstr(err, "bytes (the limit per grant)"));
	free(err);
}

static void
test_depth_cap_is_enforced(void **state)
{
	static const char *const paths[] = { ".deep" };
	struct grant c = { .name = "deep", .paths = paths, .npaths = 1 };
	char rel[PATH_MAX] = ".deep";
	struct grant g;
	struct credcopy_spec s;
	char *err = NULL;

	(void)state;
	need_ready();
	mk_dir(src, rel);
	for (int i = 0; i <= CREDCOPY_DEPTH_MAX; i++) {
		strcat(rel, "/d");
		mk_dir(src, rel);
	}
	strcat(rel, "/f");
	mk_file(src, rel, "deep\n");
	assert_int_equal(grant_find("deep", &c, 1, &g), 0);
	s = spec_for(&g, 1);
	err = spec_fails(&s);
	assert_non_null(strstr(err, "folders deep (the limit)"));
	free(err);
}

static void
test_default_caps_are_named_limits(void **state)
{
	(void)state;
	assert_true(CREDCOPY_FILES_MAX > 0 && CREDCOPY_FILES_MAX <= 1024);
	assert_true(CREDCOPY_GRANT_MAX_BYTES >= 1024 * 1024);
}

static void
test_grant_with_nothing_to_copy_is_refused(void **state)
{
	static const char *const names[] = { "aws", NULL };
	char *err;

	(void)state;
	need_ready();
	mk_home();
	err = copy_fails(names);
	assert_string_equal(err, "grant aws: nothing to copy from the home (.aws: not in the home)");
	free(err);
}

static void
test_unknown_grant_lists_the_known_ones(void **state)
{
	struct grant extra = { .name = "corp" };
	char known[256];
	struct grant g;

	(void)state;
	assert_int_equal(grant_find("nope", &extra, 1, &g), -1);
	grant_names(&extra, 1, known, sizeof(known));
	assert_string_equal(known, "ssh, gh, aws, kube, corp");
}

static void
test_config_grant_copies_its_paths_and_expands_home_in_env(void **state)
{
	static const char *const paths[] = { ".corp/token" };
	static const char *const env[] = { "CORP_TOKEN_FILE=${HOME}/.corp/token" };
	static const char *const hosts[] = { "api.corp.example:443" };
	struct grant c = { .name = "corp", .paths = paths, .npaths = 1, .hosts = hosts,
	    .nhosts = 1, .env = env, .nenv = 1 };
	struct monitor_grants *r = NULL;
	char want[PATH_MAX + 32];
	struct grant g;
	struct credcopy_spec s;
	char *err = NULL;

	(void)state;
	need_ready();
	mk_dir(src, ".corp");
	mk_file(src, ".corp/token", "t0k3n\n");
	mk_file(src, ".corp/other", "not granted\n");
	assert_int_equal(grant_find("corp", &c, 1, &g), 0);
	s = spec_for(&g, 1);
	assert_int_equal(credcopy_copy(&s, &r, &err), 0);
	snprintf(want, sizeof(want), "%s/.corp/token", dst);
	assert_string_equal(env_of(r, "CORP_TOKEN_FILE"), want);
	assert_string_equal(applied(r, "corp")->hosts[0], "api.corp.example:443");
	assert_owned(".corp/token", 0600);
	assert_false(exists_in(dst, ".corp/other"));
	monitor_grants_free(r);
}

static void
test_run_as_root_is_refused(void **state)
{
	struct grant g;
	struct credcopy_spec s;
	char *err;

	(void)state;
	grant("gh", &g);
	s = spec_for(&g, 1);
	s.uid = 0;
	err = spec_fails(&s);
	assert_non_null(strstr(err, "never copied as root"));
	free(err);
	/* -1 is "unchanged" to setresuid(): the child would stay root. */
	s.uid = (uid_t)-1;
	err = spec_fails(&s);
	assert_non_null(strstr(err, "never copied as root"));
	free(err);
}

static void
test_home_run_as_cannot_read_refuses_the_grant(void **state)
{
	static const char *const names[] = { "gh", NULL };
	char *err;

	(void)state;
	need_ready();
	mk_home();
	assert_int_equal(chown(src, 0, 0), 0);
	err = copy_fails(names);
	assert_string_equal(err,
	    "grant gh: nothing to copy from the home (.config/gh: run_as may not read it)");
	free(err);
}

static void
test_result_lists_copied_and_skipped(void **state)
{
	static const char *const names[] = { "gh", NULL };
	const struct monitor_grant_applied *a;
	struct monitor_grants *r;
	char p[PATH_MAX];

	(void)state;
	need_ready();
	mk_home();
	path_in(p, src, ".config/gh/sock");
	assert_int_equal(mkfifo(p, 0600), 0);
	r = copy_ok(names);
	assert_int_equal(r->ngrants, 2);
	a = &r->grants[0];
	assert_string_equal(a->name, "gh");
	assert_int_equal(a->nhosts, 2);
	assert_string_equal(a->hosts[0], "api.github.com:443");
	assert_string_equal(a->hosts[1], "github.com:443");
	assert_int_equal(a->ncopied, 1);
	assert_string_equal(a->copied[0], ".config/gh/hosts.yml");
	assert_int_equal(a->nskipped, 1);
	assert_string_equal(a->skipped[0].path, ".config/gh/sock");
	assert_string_equal(a->skipped[0].reason, "not a regular file (a socket, FIFO or device)");
	a = &r->grants[1];
	assert_string_equal(a->name, "gitconfig");
	assert_int_equal(a->nhosts, 0);
	assert_int_equal(a->ncopied, 1);
	assert_string_equal(a->copied[0], ".gitconfig");
	assert_int_equal(a->nskipped, 0);
	monitor_grants_free(r);
}

/* ---- deleting ---- */

static void
test_clear_removes_everything_and_follows_no_link(void **state)
{
	static const char *const names[] = { "ssh", "gh", NULL };
	char target[PATH_MAX], p[PATH_MAX];
	struct monitor_grants *r;
	char *err = NULL;
	struct stat st;

	(void)state;
	r = copy_home(names);
	monitor_grants_free(r);
	/* What a workload may leave: a link out, a folder it made unreadable. */
	snprintf(target, sizeof(target), "keep%d", serial);
	mk_file(top, target, "keep me\n");
	path_in(p, top, target);
	path_in(target, dst, ".ssh/link-out");
	assert_int_equal(symlink(p, target), 0);
	mk_dir(dst, ".ssh/locked");
	mk_file(dst, ".ssh/locked/f", "x");
	path_in(target, dst, ".ssh/locked");
	assert_int_equal(chmod(target, 0), 0);
	assert_int_equal(credcopy_clear(TEST_UID, TEST_GID, dst_fd, 0, &err), 0);
	assert_null(err);
	assert_false(exists_in(dst, ".ssh"));
	assert_false(exists_in(dst, ".config"));
	assert_false(exists_in(dst, ".gitconfig"));
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 8);
	assert_int_equal(stat(dst, &st), 0);      /* the home itself stays, empty */
}

static void
test_clear_as_root_is_refused(void **state)
{
	char *err = NULL;

	(void)state;
	assert_int_equal(credcopy_clear(0, 0, dst_fd, 0, &err), -1);
	assert_non_null(strstr(err, "never deleted as root"));
	free(err);
}

static void
test_clear_reports_what_it_cannot_remove(void **state)
{
	char p[PATH_MAX];
	char *err = NULL;

	(void)state;
	need_ready();
	/* A file root put in run_as's folder that run_as may not remove:
	 * the folder is root's, so unlinking in it is refused. */
	path_in(p, dst, "rootdir");
	assert_int_equal(mkdir(p, 0755), 0);
	mk_file_as(dst, "rootdir/f", "x", 0644, 0);
	assert_int_equal(credcopy_clear(TEST_UID, TEST_GID, dst_fd, 0, &err), -1);
	assert_non_null(err);
	assert_non_null(strstr(err, "cannot remove"));
	free(err);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_copied_files_are_0600_owned_by_run_as),
		T(test_copied_folders_are_0700_owned_by_run_as),
		T(test_ssh_config_names_the_copied_identity_file),
		T(test_a_key_without_a_pem_header_is_known_by_its_pub_twin),
		T(test_ssh_config_keeps_the_users_own_after_the_block),
		T(test_env_has_git_ssh_command_with_f_and_gh_config_dir),
		T(test_each_grant_reports_its_hosts),
		T(test_gitconfig_is_copied_with_any_grant),
		T(test_missing_gitconfig_is_not_reported),
		T(test_kube_hosts_are_the_kubeconfigs_clusters),
		T(test_symlink_key_pointing_outside_is_skipped_and_reported),
		T(test_symlink_to_a_file_run_as_cannot_read_is_not_copied),
		T(test_file_run_as_cannot_read_is_skipped_as_unreadable),
		T(test_symlinked_grant_folder_is_not_followed),
		T(test_fifo_is_skipped),
		T(test_file_cap_is_enforced),
		T(test_byte_cap_is_enforced),
		T(test_depth_cap_is_enforced),
		cmocka_unit_test(test_default_caps_are_named_limits),
		T(test_grant_with_nothing_to_copy_is_refused),
		cmocka_unit_test(test_unknown_grant_lists_the_known_ones),
		T(test_config_grant_copies_its_paths_and_expands_home_in_env),
		cmocka_unit_test(test_run_as_root_is_refused),
		T(test_home_run_as_cannot_read_refuses_the_grant),
		T(test_result_lists_copied_and_skipped),
		T(test_clear_removes_everything_and_follows_no_link),
		cmocka_unit_test(test_clear_as_root_is_refused),
		T(test_clear_reports_what_it_cannot_remove),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
