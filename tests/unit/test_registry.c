/* Tests of broker/registry: rows, the cap, liveness of servers, and the
 * database staying consistent under concurrent and killed writers. */
#include "config.h"

#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "broker/registry.h"
#include "common/proc.h"
#include "common/xmalloc.h"

#define TEST_WRITER_ROWS 200            /* rows each concurrent writer reserves */
#define TEST_WRITERS 2
#define TEST_GHOST_ROWS 300             /* enough to spill uncommitted pages into the WAL */
#define TEST_GHOST_PAD_BYTES 2000
#define TEST_BIG_CAP 100000
/* A child that waits to be killed dies after this anyway, so a failed
 * assertion in the parent cannot leave it behind. */
#define TEST_CHILD_TIMEOUT_S 10

struct fixture {
	char dir[PATH_MAX];
	char path[PATH_MAX + 16];
	struct registry *reg;
};

static int
teardown(void **state)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	struct fixture *fx = *state;
	char file[PATH_MAX + 32];
	int ret;

	registry_close(fx->reg);
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(file, sizeof(file), "%s%s", fx->path, suffixes[i]);
		unlink(file);
	}
	ret = rmdir(fx->dir);
	free(fx);
	return ret;
}

static int
setup(void **state)
{
	struct fixture *fx = xcalloc(1, sizeof(*fx));
	const char *tmp = getenv("TMPDIR");
	char *err = NULL;

	snprintf(fx->dir, sizeof(fx->dir), "%s/test_registry.XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(fx->dir) == NULL)
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/registry.db", fx->dir);
	fx->reg = registry_open(fx->path, &err);
	if (fx->reg == NULL) {
		fprintf(stderr, "# %s\n", err);
		free(err);
		*state = fx;
		teardown(state);
		return -1;
	}
	*state = fx;
	return 0;
}

/* A row with NAME, SESSION and AGENT and otherwise plain values. */
static void
test_row_init(struct registry_sandbox *sb, const char *name, const char *session,
    const char *agent)
{
	memset(sb, 0, sizeof(*sb));
	sb->name = xstrdup(name);
	sb->provider = xstrdup("corral");
	sb->session_id = session != NULL ? xstrdup(session) : NULL;
	sb->agent = agent != NULL ? xstrdup(agent) : NULL;
	sb->profile = xstrdup("strict");
	sb->net_slot = REGISTRY_NET_SLOT_NONE;
	sb->owner_uid = 1000;
}

/* Reserves NAME for OWNER under CAPS; 0, or -1 with *ERR. */
static int
test_reserve_as(struct registry *reg, const char *name, uid_t owner,
    const struct registry_caps *caps, char **err)
{
	struct registry_sandbox sb;
	int rc;

	test_row_init(&sb, name, "s", "a");
	sb.owner_uid = owner;
	rc = registry_reserve(reg, &sb, caps, err);
	registry_sandbox_clear(&sb);
	return rc;
}

/* Reserves NAME for root under CAP (the machine's cap alone), failing the
 * test on refusal. */
static void
test_reserve(struct registry *reg, const char *name, const char *session,
    const char *agent, unsigned cap)
{
	struct registry_sandbox sb;
	char *err = NULL;

	test_row_init(&sb, name, session, agent);
	sb.owner_uid = 0;
	if (registry_reserve(reg, &sb, &(struct registry_caps){ cap, cap }, &err) == -1)
		fail_msg("reserve %s: %s", name, err);
	registry_sandbox_clear(&sb);
}

static unsigned
test_count(struct registry *reg)
{
	unsigned n = 0;

	assert_int_equal(registry_count(reg, &n, NULL), 0);
	return n;
}

/* Rewrites NAME's server identity, as if another process had reserved it. */
static void
test_set_server(struct registry *reg, const char *name, pid_t pid,
    uint64_t start, const char *boot_id)
{
	struct registry_sandbox *sb = NULL;
	char *err = NULL;

	assert_int_equal(registry_get(reg, name, &sb, NULL), 0);
	assert_non_null(sb);
	sb->server_pid = pid;
	sb->server_start = start;
	snprintf(sb->boot_id, sizeof(sb->boot_id), "%s", boot_id);
	if (registry_update(reg, sb, &err) == -1)
		fail_msg("update %s: %s", name, err);
	registry_sandbox_free(sb);
}

/* The names of the dead rows, joined with ','. */
static char *
test_dead_names(struct registry *reg)
{
	struct registry_list dead;
	char *names = xstrdup(""), *next;

	assert_int_equal(registry_dead_rows(reg, &dead, NULL), 0);
	for (size_t i = 0; i < dead.len; i++) {
		xasprintf(&next, "%s%s%s", names, i > 0 ? "," : "", dead.rows[i].name);
		free(names);
		names = next;
	}
	registry_list_clear(&dead);
	return names;
}

/* SQLite keeps per-file lock state in process memory that fork() copies,
 * so no child may open a file its parent has open: the fixture's
 * connection is closed before a child touches the registry and reopened
 * after. */
static void
test_fixture_close(struct fixture *fx)
{
	registry_close(fx->reg);
	fx->reg = NULL;
}

static void
test_fixture_reopen(struct fixture *fx)
{
	char *err = NULL;

	fx->reg = registry_open(fx->path, &err);
	if (fx->reg == NULL)
		fail_msg("reopen: %s", err);
}

static void
test_two_reserves_count_two(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(test_count(fx->reg), 0);
	test_reserve(fx->reg, "one", "s1", "a1", 20);
	test_reserve(fx->reg, "two", "s1", "a1", 20);
	assert_int_equal(test_count(fx->reg), 2);
}

static void
test_find_matches_session_and_agent(void **state)
{
	struct fixture *fx = *state;
	struct registry_list found;

	test_reserve(fx->reg, "a", "s1", "agent1", 20);
	test_reserve(fx->reg, "b", "s1", "agent2", 20);
	test_reserve(fx->reg, "c", "s2", "agent1", 20);
	test_reserve(fx->reg, "d", "s1", "agent1", 20);
	assert_int_equal(registry_find(fx->reg, "s1", "agent1", &found, NULL), 0);
	assert_int_equal(found.len, 2);
	assert_string_equal(found.rows[0].name, "a");
	assert_string_equal(found.rows[1].name, "d");
	registry_list_clear(&found);
	assert_int_equal(registry_find(fx->reg, "s3", "agent1", &found, NULL), 0);
	assert_int_equal(found.len, 0);
	registry_list_clear(&found);
}

/* Roots and labels go out as JSON and come back byte for byte, whatever
 * quotes, control characters or non-ASCII text they hold. */
static void
test_list_round_trips_roots_and_labels(void **state)
{
	static const char *const paths[] = { "/home/u/\"quoted\" dir", "/data/é日本\nline" };
	static const char *const keys[] = { "team", "no\"te\n", "ünï", "ctl" };
	static const char *const values[] = { "say \"hi\"\\", "line1\nline2\ttab", "日本語", "\x01\x1f" };
	struct fixture *fx = *state;
	struct registry_sandbox sb;
	struct registry_list all;
	struct registry_sandbox *got;

	test_row_init(&sb, "rt", "s", "a");
	sb.roots_len = 2;
	sb.roots = xcalloc(2, sizeof(*sb.roots));
	for (size_t i = 0; i < 2; i++) {
		sb.roots[i].path = xstrdup(paths[i]);
		sb.roots[i].writable = i == 0;
	}
	sb.labels_len = 4;
	sb.labels = xcalloc(4, sizeof(*sb.labels));
	for (size_t i = 0; i < 4; i++) {
		sb.labels[i].key = xstrdup(keys[i]);
		sb.labels[i].value = xstrdup(values[i]);
	}
	assert_int_equal(registry_reserve(fx->reg, &sb, &(struct registry_caps){ 20, 20 }, NULL), 0);
	registry_sandbox_clear(&sb);
	assert_int_equal(registry_list(fx->reg, &all, NULL), 0);
	assert_int_equal(all.len, 1);
	got = &all.rows[0];
	assert_int_equal(got->roots_len, 2);
	assert_string_equal(got->roots[0].path, paths[0]);
	assert_true(got->roots[0].writable);
	assert_string_equal(got->roots[1].path, paths[1]);
	assert_false(got->roots[1].writable);
	assert_int_equal(got->labels_len, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(got->labels[i].key, keys[i]);
		assert_string_equal(got->labels[i].value, values[i]);
	}
	registry_list_clear(&all);
}

/* A reserved row is "creating", owned by this process, and stamped now. */
static void
test_reserve_stamps_owner_state_and_times(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox *got = NULL;
	char boot[BOOT_ID_BYTES];
	uint64_t start;

	assert_int_equal(proc_boot_id(boot), 0);
	assert_int_equal(proc_start_time(getpid(), &start), 0);
	assert_int_equal(test_reserve_as(fx->reg, "x", 1000, &(struct registry_caps){ 20, 20 },
	    NULL), 0);
	assert_int_equal(registry_get(fx->reg, "x", &got, NULL), 0);
	assert_non_null(got);
	assert_int_equal(got->state, REGISTRY_STATE_CREATING);
	assert_int_equal(got->server_pid, getpid());
	assert_true(got->server_start == start);
	assert_string_equal(got->boot_id, boot);
	assert_string_equal(got->provider, "corral");
	assert_string_equal(got->profile, "strict");
	assert_null(got->enforcement);
	assert_int_equal(got->init_pid, 0);
	assert_int_equal(got->net_slot, REGISTRY_NET_SLOT_NONE);
	assert_int_equal(got->owner_uid, 1000);
	assert_true(got->created_at_us > 0);
	assert_true(got->last_used_at_us == got->created_at_us);
	registry_sandbox_free(got);
}

static void
test_machine_id_defaults_to_local(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox *got = NULL;

	test_reserve(fx->reg, "m", "s", "a", 20);
	assert_int_equal(registry_get(fx->reg, "m", &got, NULL), 0);
	assert_non_null(got);
	assert_string_equal(got->machine_id, "local");
	registry_sandbox_free(got);
}

static void
test_machine_id_given_is_kept(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox sb, *got = NULL;

	test_row_init(&sb, "m", "s", "a");
	sb.machine_id = xstrdup("builder-7");
	assert_int_equal(registry_reserve(fx->reg, &sb, &(struct registry_caps){ 20, 20 }, NULL), 0);
	registry_sandbox_clear(&sb);
	assert_int_equal(registry_get(fx->reg, "m", &got, NULL), 0);
	assert_non_null(got);
	assert_string_equal(got->machine_id, "builder-7");
	registry_sandbox_free(got);
}

static void
test_cap_refuses_with_exact_message(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox sb;
	char *err = NULL;

	test_reserve(fx->reg, "one", "s", "a", 2);
	test_reserve(fx->reg, "two", "s", "a", 2);
	test_row_init(&sb, "three", "s", "a");
	sb.owner_uid = 0;
	assert_int_equal(registry_reserve(fx->reg, &sb, &(struct registry_caps){ 2, 2 }, &err), -1);
	registry_sandbox_clear(&sb);
	assert_non_null(err);
	assert_string_equal(err, "2 sandboxes are already running on this machine "
	    "(the limit is 2; set CORRAL_SANDBOX_MAX to change it)");
	free(err);
	assert_int_equal(test_count(fx->reg), 2);
}

static void
test_remove_makes_room(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox sb;

	test_reserve(fx->reg, "one", "s", "a", 2);
	test_reserve(fx->reg, "two", "s", "a", 2);
	test_row_init(&sb, "three", "s", "a");
	sb.owner_uid = 0;
	assert_int_equal(registry_reserve(fx->reg, &sb, &(struct registry_caps){ 2, 2 }, NULL), -1);
	assert_int_equal(registry_remove(fx->reg, "one", NULL), 0);
	assert_int_equal(registry_reserve(fx->reg, &sb, &(struct registry_caps){ 2, 2 }, NULL), 0);
	registry_sandbox_clear(&sb);
	assert_int_equal(test_count(fx->reg), 2);
}

static void
test_a_user_is_held_to_its_share(void **state)
{
	static const struct registry_caps caps = { 20, 2 };
	struct fixture *fx = *state;
	char *err = NULL;

	assert_int_equal(test_reserve_as(fx->reg, "a1", 1000, &caps, NULL), 0);
	assert_int_equal(test_reserve_as(fx->reg, "a2", 1000, &caps, NULL), 0);
	assert_int_equal(test_reserve_as(fx->reg, "a3", 1000, &caps, &err), -1);
	assert_string_equal(err, "user 1000 already has 2 sandboxes (the limit per user is 2: "
	    "max_sandboxes_per_user in corrald.yaml); delete one first");
	free(err);
	/* Another user, and root, still get theirs. */
	assert_int_equal(test_reserve_as(fx->reg, "b1", 1001, &caps, NULL), 0);
	assert_int_equal(test_reserve_as(fx->reg, "r1", 0, &caps, NULL), 0);
	assert_int_equal(test_reserve_as(fx->reg, "r2", 0, &caps, NULL), 0);
	assert_int_equal(test_count(fx->reg), 5);
}

static void
test_the_last_slot_is_roots(void **state)
{
	static const struct registry_caps caps = { 3, 3 };
	struct fixture *fx = *state;
	char *err = NULL;

	assert_int_equal(test_reserve_as(fx->reg, "a1", 1000, &caps, NULL), 0);
	assert_int_equal(test_reserve_as(fx->reg, "b1", 1001, &caps, NULL), 0);
	assert_int_equal(test_reserve_as(fx->reg, "a2", 1000, &caps, &err), -1);
	assert_non_null(strstr(err, "the last slot is kept for root"));
	free(err);
	assert_int_equal(test_reserve_as(fx->reg, "r1", 0, &caps, NULL), 0);
	assert_int_equal(test_reserve_as(fx->reg, "r2", 0, &caps, NULL), -1);
}

static void
test_remove_of_absent_name_succeeds(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(registry_remove(fx->reg, "nobody", NULL), 0);
}

static void
test_duplicate_name_refused(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox sb;
	char *err = NULL;

	test_reserve(fx->reg, "dup", "s", "a", 20);
	test_row_init(&sb, "dup", "other", "agent");
	assert_int_equal(registry_reserve(fx->reg, &sb, &(struct registry_caps){ 20, 20 }, &err), -1);
	registry_sandbox_clear(&sb);
	assert_non_null(err);
	assert_string_equal(err, "a sandbox named 'dup' already exists; delete it "
	    "or choose another name");
	free(err);
	assert_int_equal(test_count(fx->reg), 1);
}

static void
test_reserve_without_name_refused(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox sb;
	char *err = NULL;

	test_row_init(&sb, "x", "s", "a");
	free(sb.name);
	sb.name = NULL;
	assert_int_equal(registry_reserve(fx->reg, &sb, &(struct registry_caps){ 20, 20 }, &err), -1);
	registry_sandbox_clear(&sb);
	assert_non_null(err);
	assert_string_equal(err, "a sandbox needs a name");
	free(err);
	assert_int_equal(test_count(fx->reg), 0);
}

static void
test_mark_ready_sets_state_init_and_enforcement(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox *got = NULL;

	test_reserve(fx->reg, "r", "s", "a", 20);
	assert_int_equal(registry_mark_ready(fx->reg, "r", 4242, "partial", NULL), 0);
	assert_int_equal(registry_get(fx->reg, "r", &got, NULL), 0);
	assert_non_null(got);
	assert_int_equal(got->state, REGISTRY_STATE_READY);
	assert_int_equal(got->init_pid, 4242);
	assert_string_equal(got->enforcement, "partial");
	registry_sandbox_free(got);
}

static void
test_mark_ready_of_absent_name_fails(void **state)
{
	struct fixture *fx = *state;
	char *err = NULL;

	assert_int_equal(registry_mark_ready(fx->reg, "ghost", 1, "full", &err), -1);
	assert_non_null(err);
	assert_string_equal(err, "no sandbox named 'ghost'");
	free(err);
}

static void
test_update_replaces_fields(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox *got = NULL;
	int64_t created;

	test_reserve(fx->reg, "u", "s", "a", 20);
	assert_int_equal(registry_get(fx->reg, "u", &got, NULL), 0);
	assert_non_null(got);
	created = got->created_at_us;
	free(got->profile);
	got->profile = xstrdup("open");
	got->net_slot = 7;
	got->created_at_us = 1;
	assert_int_equal(registry_update(fx->reg, got, NULL), 0);
	registry_sandbox_free(got);
	assert_int_equal(registry_get(fx->reg, "u", &got, NULL), 0);
	assert_non_null(got);
	assert_string_equal(got->profile, "open");
	assert_int_equal(got->net_slot, 7);
	assert_true(got->created_at_us == created);
	registry_sandbox_free(got);
}

static void
test_touch_advances_last_used_at(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox *got = NULL;

	test_reserve(fx->reg, "t", "s", "a", 20);
	usleep(2000);
	assert_int_equal(registry_touch(fx->reg, "t", NULL), 0);
	assert_int_equal(registry_get(fx->reg, "t", &got, NULL), 0);
	assert_non_null(got);
	assert_true(got->last_used_at_us > got->created_at_us);
	registry_sandbox_free(got);
	assert_int_equal(registry_touch(fx->reg, "absent", NULL), -1);
}

static void
test_get_of_absent_name_gives_null(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox *got = (struct registry_sandbox *)&got;

	assert_int_equal(registry_get(fx->reg, "absent", &got, NULL), 0);
	assert_null(got);
}

static void
test_list_orders_by_creation(void **state)
{
	struct fixture *fx = *state;
	struct registry_list all;

	test_reserve(fx->reg, "zeta", "s", "a", 20);
	usleep(1000);
	test_reserve(fx->reg, "alpha", "s", "a", 20);
	assert_int_equal(registry_list(fx->reg, &all, NULL), 0);
	assert_int_equal(all.len, 2);
	assert_string_equal(all.rows[0].name, "zeta");
	assert_string_equal(all.rows[1].name, "alpha");
	registry_list_clear(&all);
}

/* A child's row, recorded while it ran and reaped since, is dead; rows of
 * this live process are not. */
static void
test_dead_rows_include_reaped_server(void **state)
{
	struct fixture *fx = *state;
	char boot[BOOT_ID_BYTES], *names;
	uint64_t start;
	siginfo_t info;
	pid_t pid;
	int status;

	assert_int_equal(proc_boot_id(boot), 0);
	test_fixture_close(fx);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
	assert_int_equal(proc_start_time(pid, &start), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	test_fixture_reopen(fx);
	test_reserve(fx->reg, "live", "s", "a", 20);
	test_reserve(fx->reg, "dead", "s", "a", 20);
	test_set_server(fx->reg, "dead", pid, start, boot);
	names = test_dead_names(fx->reg);
	assert_string_equal(names, "dead");
	free(names);
}

static void
test_dead_rows_exclude_live_server(void **state)
{
	struct fixture *fx = *state;
	char *names;

	test_reserve(fx->reg, "one", "s", "a", 20);
	test_reserve(fx->reg, "two", "s", "a", 20);
	names = test_dead_names(fx->reg);
	assert_string_equal(names, "");
	free(names);
}

/* The right pid with another start time is a reused pid: dead. */
static void
test_dead_rows_include_reused_pid(void **state)
{
	struct fixture *fx = *state;
	char boot[BOOT_ID_BYTES], *names;
	uint64_t start;

	assert_int_equal(proc_boot_id(boot), 0);
	assert_int_equal(proc_start_time(getpid(), &start), 0);
	test_reserve(fx->reg, "live", "s", "a", 20);
	test_reserve(fx->reg, "reused", "s", "a", 20);
	test_set_server(fx->reg, "reused", getpid(), start + 1, boot);
	names = test_dead_names(fx->reg);
	assert_string_equal(names, "reused");
	free(names);
}

static void
test_dead_rows_include_other_boot(void **state)
{
	struct fixture *fx = *state;
	char boot[BOOT_ID_BYTES], *names;
	uint64_t start;

	assert_int_equal(proc_boot_id(boot), 0);
	assert_int_equal(proc_start_time(getpid(), &start), 0);
	boot[0] = boot[0] == '0' ? '1' : '0';
	test_reserve(fx->reg, "live", "s", "a", 20);
	test_reserve(fx->reg, "rebooted", "s", "a", 20);
	test_set_server(fx->reg, "rebooted", getpid(), start, boot);
	names = test_dead_names(fx->reg);
	assert_string_equal(names, "rebooted");
	free(names);
}

/* Returns the cap for CONFIG_MAX with CORRAL_SANDBOX_MAX set to TEXT (NULL:
 * unset), or 0 when refused, with the message in *ERR. */
static unsigned
test_cap(const char *text, unsigned config_max, char **err)
{
	unsigned cap = 0;

	if (text == NULL)
		assert_int_equal(unsetenv(REGISTRY_SANDBOX_MAX_ENV), 0);
	else
		assert_int_equal(setenv(REGISTRY_SANDBOX_MAX_ENV, text, 1), 0);
	if (registry_cap_from_env(config_max, &cap, err) == -1)
		cap = 0;
	unsetenv(REGISTRY_SANDBOX_MAX_ENV);
	return cap;
}

static void
test_cap_unset_env_uses_config_or_default(void **state)
{
	assert_int_equal(test_cap(NULL, 35, NULL), 35);
	assert_int_equal(test_cap(NULL, 0, NULL), 20);
	assert_int_equal(REGISTRY_SANDBOX_MAX_DEFAULT, 20);
}

static void
test_cap_valid_env_overrides_config(void **state)
{
	assert_int_equal(test_cap("7", 35, NULL), 7);
	assert_int_equal(test_cap("1", 0, NULL), 1);
	assert_int_equal(test_cap("4294967295", 35, NULL), 4294967295u);
}

static void
test_cap_zero_env_refused(void **state)
{
	char *err = NULL;

	assert_int_equal(test_cap("0", 35, &err), 0);
	assert_non_null(err);
	assert_string_equal(err, "CORRAL_SANDBOX_MAX is '0': it must be a positive "
	    "whole number of sandboxes");
	free(err);
}

static void
test_cap_garbage_env_refused(void **state)
{
	static const char *const bad[] = {
		"abc", "12abc", "-3", "+3", " 5", "5 ", "", "4294967296",
		"99999999999999999999999",
	};
	char *err = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (test_cap(bad[i], 35, &err) != 0)
			fail_msg("CORRAL_SANDBOX_MAX='%s' was accepted", bad[i]);
		assert_non_null(err);
		assert_non_null(strstr(err, "CORRAL_SANDBOX_MAX"));
		free(err);
		err = NULL;
	}
}

/* One concurrent writer: reserves TEST_WRITER_ROWS rows named PREFIX-i and
 * removes the odd ones. Exits 0 when every call succeeded. */
static void __attribute__((noreturn))
test_writer_child(const char *path, int id)
{
	struct registry *reg = registry_open(path, NULL);
	struct registry_sandbox sb;
	char name[32];
	int ok = reg != NULL;

	for (int i = 0; ok && i < TEST_WRITER_ROWS; i++) {
		snprintf(name, sizeof(name), "w%d-%d", id, i);
		test_row_init(&sb, name, "s", "a");
		sb.session_id[0] = (char)('0' + id);
		ok = registry_reserve(reg, &sb, &(struct registry_caps){ TEST_BIG_CAP, TEST_BIG_CAP }, NULL) == 0 &&
		    (i % 2 == 0 || registry_remove(reg, name, NULL) == 0);
		registry_sandbox_clear(&sb);
	}
	registry_close(reg);
	_exit(ok ? 0 : 1);
}

/* Runs PRAGMA integrity_check on PATH through a separate connection. */
static void
test_assert_integrity(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void
test_concurrent_writers_keep_db_consistent(void **state)
{
	struct fixture *fx = *state;
	struct registry_list found;
	pid_t pids[TEST_WRITERS];
	int status;

	test_fixture_close(fx);
	for (int w = 0; w < TEST_WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] != -1);
		if (pids[w] == 0)
			test_writer_child(fx->path, w);
	}
	for (int w = 0; w < TEST_WRITERS; w++) {
		assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	test_assert_integrity(fx->path);
	test_fixture_reopen(fx);
	assert_int_equal(test_count(fx->reg), TEST_WRITERS * TEST_WRITER_ROWS / 2);
	assert_int_equal(registry_find(fx->reg, "0", "a", &found, NULL), 0);
	assert_int_equal(found.len, TEST_WRITER_ROWS / 2);
	registry_list_clear(&found);
}

/* The killed writer: opens its own connection with a tiny page cache,
 * inserts TEST_GHOST_ROWS rows in one transaction, tells the parent, and
 * waits to be killed before it can commit. */
static void __attribute__((noreturn))
test_ghost_writer(const char *path, int ready_fd)
{
	static const char sql[] = "INSERT INTO sandboxes (name, provider, state,"
	    " server_pid, server_start, boot_id, owner_uid, created_at, last_used_at)"
	    " VALUES (printf('ghost-%d', ?1), ?2, 'creating', 1, 1, 'x', 0, 0, 0)";
	char pad[TEST_GHOST_PAD_BYTES + 1];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;

	alarm(TEST_CHILD_TIMEOUT_S);
	memset(pad, 'p', TEST_GHOST_PAD_BYTES);
	pad[TEST_GHOST_PAD_BYTES] = '\0';
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA cache_size = 4; BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		_exit(1);
	for (int i = 0; i < TEST_GHOST_ROWS; i++) {
		sqlite3_bind_int(st, 1, i);
		sqlite3_bind_text(st, 2, pad, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			_exit(1);
		sqlite3_reset(st);
	}
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static off_t
test_file_size(const char *path, const char *suffix)
{
	char file[PATH_MAX + 32];
	struct stat st;

	snprintf(file, sizeof(file), "%s%s", path, suffix);
	return stat(file, &st) == 0 ? st.st_size : 0;
}

static void
test_killed_writer_leaves_db_consistent(void **state)
{
	struct fixture *fx = *state;
	struct registry_sandbox *got = (struct registry_sandbox *)&got;
	int ready[2], status;
	off_t wal_before;
	char c;
	pid_t pid;

	test_reserve(fx->reg, "keep", "s", "a", 20);
	assert_int_equal(pipe(ready), 0);
	test_fixture_close(fx);
	wal_before = test_file_size(fx->path, "-wal");
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		test_ghost_writer(fx->path, ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	/* Uncommitted pages reached the WAL file: the kill leaves them behind. */
	assert_true(test_file_size(fx->path, "-wal") > wal_before);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	close(ready[0]);
	close(ready[1]);
	test_assert_integrity(fx->path);
	test_fixture_reopen(fx);
	assert_int_equal(registry_get(fx->reg, "ghost-0", &got, NULL), 0);
	assert_null(got);
	assert_int_equal(test_count(fx->reg), 1);
	test_reserve(fx->reg, "after", "s", "a", 20);
	assert_int_equal(test_count(fx->reg), 2);
}

/* A second connection opened on an existing registry sees its rows. */
static void
test_reopen_keeps_rows(void **state)
{
	struct fixture *fx = *state;
	struct registry *again;
	char *err = NULL;
	unsigned n = 0;

	test_reserve(fx->reg, "kept", "s", "a", 20);
	again = registry_open(fx->path, &err);
	if (again == NULL)
		fail_msg("reopen: %s", err);
	assert_int_equal(registry_count(again, &n, NULL), 0);
	assert_int_equal(n, 1);
	registry_close(again);
}

static void
test_open_refuses_newer_schema(void **state)
{
	struct fixture *fx = *state;
	struct registry *again;
	sqlite3 *db = NULL;
	char *err = NULL;

	assert_int_equal(sqlite3_open_v2(fx->path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	again = registry_open(fx->path, &err);
	assert_null(again);
	assert_non_null(err);
	assert_non_null(strstr(err, "schema version 99"));
	free(err);
}

static void
test_db_file_is_private(void **state)
{
	struct fixture *fx = *state;
	struct stat st;

	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_two_reserves_count_two),
		T(test_find_matches_session_and_agent),
		T(test_list_round_trips_roots_and_labels),
		T(test_reserve_stamps_owner_state_and_times),
		T(test_machine_id_defaults_to_local),
		T(test_machine_id_given_is_kept),
		T(test_cap_refuses_with_exact_message),
		T(test_remove_makes_room),
		T(test_a_user_is_held_to_its_share),
		T(test_the_last_slot_is_roots),
		T(test_remove_of_absent_name_succeeds),
		T(test_duplicate_name_refused),
		T(test_reserve_without_name_refused),
		T(test_mark_ready_sets_state_init_and_enforcement),
		T(test_mark_ready_of_absent_name_fails),
		T(test_update_replaces_fields),
		T(test_touch_advances_last_used_at),
		T(test_get_of_absent_name_gives_null),
		T(test_list_orders_by_creation),
		T(test_dead_rows_include_reaped_server),
		T(test_dead_rows_exclude_live_server),
		T(test_dead_rows_include_reused_pid),
		T(test_dead_rows_include_other_boot),
		cmocka_unit_test(test_cap_unset_env_uses_config_or_default),
		cmocka_unit_test(test_cap_valid_env_overrides_config),
		cmocka_unit_test(test_cap_zero_env_refused),
		cmocka_unit_test(test_cap_garbage_env_refused),
		T(test_concurrent_writers_keep_db_consistent),
		T(test_killed_writer_leaves_db_consistent),
		T(test_reopen_keeps_rows),
		T(test_open_refuses_newer_schema),
		T(test_db_file_is_private),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
