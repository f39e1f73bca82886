/* The registry of sandboxes in SQLite. Every statement is prepared once
 * with bound parameters; no SQL is ever built from data. Roots and labels
 * are written with common/json and read back with SQLite's json_each, so
 * the registry has no JSON parser of its own. Times are stored as integer
 * microseconds since the epoch (UTC): they order exactly and the CLI
 * formats them as RFC 3339. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "broker/registry.h"
#include "common/json.h"
#include "common/proc.h"
#include "common/timeutil.h"
#include "common/xmalloc.h"

#define REGISTRY_SCHEMA_VERSION 1
#define REGISTRY_BUSY_TIMEOUT_MS 5000           /* a writer waits this long for another */
#define REGISTRY_JSON_MAX_BYTES (1024 * 1024)   /* the roots or the labels of one row */
#define REGISTRY_STRINGIFY(x) #x
#define REGISTRY_STR(x) REGISTRY_STRINGIFY(x)

/* Bound as ?1..?18 by registry_bind_row and read in this order by
 * registry_fill_row. */
#define REGISTRY_COLUMNS \
	"name, provider, machine_id, session_id, agent, roots, profile, " \
	"enforcement, state, server_pid, server_start, boot_id, init_pid, " \
	"net_slot, labels, owner_uid, created_at, last_used_at"

enum registry_column {
	COL_NAME = 1, COL_PROVIDER, COL_MACHINE_ID, COL_SESSION_ID, COL_AGENT,
	COL_ROOTS, COL_PROFILE, COL_ENFORCEMENT, COL_STATE, COL_SERVER_PID,
	COL_SERVER_START, COL_BOOT_ID, COL_INIT_PID, COL_NET_SLOT, COL_LABELS,
	COL_OWNER_UID, COL_CREATED_AT, COL_LAST_USED_AT,
};

/* The schema. The CHECKs keep a row readable whoever writes it; net_slot
 * is UNIQUE because two sandboxes on one slot would share addresses. */
static const char registry_schema[] =
	"CREATE TABLE sandboxes ("
	" name TEXT PRIMARY KEY NOT NULL,"
	" provider TEXT,"
	" machine_id TEXT NOT NULL DEFAULT '" REGISTRY_MACHINE_ID_DEFAULT "',"
	" session_id TEXT,"
	" agent TEXT,"
	" roots TEXT NOT NULL DEFAULT '[]'"
	"  CHECK (json_valid(roots) AND json_type(roots) = 'array'),"
	" profile TEXT,"
	" enforcement TEXT,"
	" state TEXT NOT NULL CHECK (state IN ('creating', 'ready')),"
	" server_pid INTEGER NOT NULL,"
	" server_start INTEGER NOT NULL,"
	" boot_id TEXT NOT NULL,"
	" init_pid INTEGER,"
	" net_slot INTEGER UNIQUE,"
	" labels TEXT NOT NULL DEFAULT '{}'"
	"  CHECK (json_valid(labels) AND json_type(labels) = 'object'),"
	" owner_uid INTEGER NOT NULL,"
	" created_at INTEGER NOT NULL,"         /* microseconds since the epoch */
	" last_used_at INTEGER NOT NULL"        /* microseconds since the epoch */
	");"
	"CREATE INDEX sandboxes_by_owner ON sandboxes (session_id, agent);"
	"PRAGMA user_version = " REGISTRY_STR(REGISTRY_SCHEMA_VERSION) ";";

enum registry_stmt {
	STMT_BEGIN, STMT_COMMIT, STMT_ROLLBACK, STMT_USER_VERSION,
	STMT_COUNT, STMT_COUNT_OWNER, STMT_EXISTS, STMT_INSERT, STMT_UPDATE, STMT_MARK_READY,
	STMT_TOUCH, STMT_REMOVE, STMT_GET, STMT_FIND, STMT_LIST,
	STMT_ROOTS, STMT_LABELS,
	STMT_MAX,
};

static const char *const registry_sql[STMT_MAX] = {
	/* IMMEDIATE takes the write lock first, so a writer waits in the busy
	 * handler instead of failing when it upgrades a stale read. */
	[STMT_BEGIN] = "BEGIN IMMEDIATE",
	[STMT_COMMIT] = "COMMIT",
	[STMT_ROLLBACK] = "ROLLBACK",
	[STMT_USER_VERSION] = "PRAGMA user_version",
	[STMT_COUNT] = "SELECT count(*) FROM sandboxes",
	[STMT_COUNT_OWNER] = "SELECT count(*) FROM sandboxes WHERE owner_uid = ?1",
	[STMT_EXISTS] = "SELECT 1 FROM sandboxes WHERE name = ?1",
	[STMT_INSERT] = "INSERT INTO sandboxes (" REGISTRY_COLUMNS ") VALUES "
	    "(?1, ?2, coalesce(?3, '" REGISTRY_MACHINE_ID_DEFAULT "'), ?4, ?5,"
	    " ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
	[STMT_UPDATE] = "UPDATE sandboxes SET provider = ?2,"
	    " machine_id = coalesce(?3, '" REGISTRY_MACHINE_ID_DEFAULT "'),"
	    " session_id = ?4, agent = ?5, roots = ?6, profile = ?7,"
	    " enforcement = ?8, state = ?9, server_pid = ?10, server_start = ?11,"
	    " boot_id = ?12, init_pid = ?13, net_slot = ?14, labels = ?15,"
	    " owner_uid = ?16, last_used_at = ?18 WHERE name = ?1",
	[STMT_MARK_READY] = "UPDATE sandboxes SET state = 'ready',"
	    " init_pid = ?2, enforcement = ?3 WHERE name = ?1",
	[STMT_TOUCH] = "UPDATE sandboxes SET last_used_at = ?2 WHERE name = ?1",
	[STMT_REMOVE] = "DELETE FROM sandboxes WHERE name = ?1",
	[STMT_GET] = "SELECT " REGISTRY_COLUMNS " FROM sandboxes WHERE name = ?1",
	[STMT_FIND] = "SELECT " REGISTRY_COLUMNS " FROM sandboxes"
	    " WHERE session_id IS ?1 AND agent IS ?2 ORDER BY created_at, name",
	[STMT_LIST] = "SELECT " REGISTRY_COLUMNS " FROM sandboxes"
	    " ORDER BY created_at, name",
	/* The last column says the element has the expected type. */
	[STMT_ROOTS] = "SELECT json_extract(value, '$.path'),"
	    " json_extract(value, '$.writable'),"
	    " json_type(value, '$.path') IS 'text' FROM json_each(?1) ORDER BY key",
	[STMT_LABELS] = "SELECT key, value, type IS 'text' FROM json_each(?1)",
};

struct registry {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *stmt[STMT_MAX];
	pid_t pid;                      /* this process: the server of what it reserves */
	uint64_t start;
	char boot_id[BOOT_ID_BYTES];
};

/* Sets *ERR_MSG to "registry PATH: WHAT: SQLite's message". */
static void
registry_db_error(struct registry *reg, char **err_msg, const char *what)
{
	if (err_msg != NULL)
		xasprintf(err_msg, "registry %s: %s: %s", reg->path, what,
		    sqlite3_errmsg(reg->db));
}

/* The prepared statement ID, reset and with its parameters cleared. */
static sqlite3_stmt *
registry_stmt(struct registry *reg, enum registry_stmt id, char **err_msg)
{
	sqlite3_stmt *st = reg->stmt[id];

	if (st == NULL && sqlite3_prepare_v3(reg->db, registry_sql[id], -1,
	    SQLITE_PREPARE_PERSISTENT, &reg->stmt[id], NULL) != SQLITE_OK) {
		registry_db_error(reg, err_msg, "preparing a statement");
		return NULL;
	}
	st = reg->stmt[id];
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

/* Runs ST, which returns no rows, to its end and resets it. */
static int
registry_step_done(struct registry *reg, sqlite3_stmt *st, const char *what,
    char **err_msg)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE)
		registry_db_error(reg, err_msg, what);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Runs the parameterless statement ID. */
static int
registry_run(struct registry *reg, enum registry_stmt id, const char *what,
    char **err_msg)
{
	sqlite3_stmt *st = registry_stmt(reg, id, err_msg);

	if (st == NULL)
		return -1;
	return registry_step_done(reg, st, what, err_msg);
}

/* Rolls back the open transaction, if any; the first error is kept. */
static void
registry_rollback(struct registry *reg)
{
	if (!sqlite3_get_autocommit(reg->db))
		registry_run(reg, STMT_ROLLBACK, "rolling back", NULL);
}

/* Runs ST, which returns one integer, and resets it. */
static int
registry_step_int(struct registry *reg, sqlite3_stmt *st, int64_t *out,
    const char *what, char **err_msg)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else
		registry_db_error(reg, err_msg, what);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* Creates the file, if missing, readable by its owner only: the registry
 * names the users' folders and sessions. SQLite gives its -wal and -shm
 * files the same mode. */
static int
registry_create_file(const char *path, char **err_msg)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd == -1) {
		if (err_msg != NULL)
			xasprintf(err_msg, "registry %s: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* Learns this process's identity, written into every row it reserves. */
static int
registry_identify_self(struct registry *reg, char **err_msg)
{
	reg->pid = getpid();
	if (proc_start_time(reg->pid, &reg->start) == -1 ||
	    proc_boot_id(reg->boot_id) == -1) {
		if (err_msg != NULL)
			xasprintf(err_msg, "registry %s: cannot read this process's "
			    "start time or the boot id from /proc", reg->path);
		return -1;
	}
	return 0;
}

/* WAL lets readers go on while one process writes. synchronous=NORMAL is
 * durable across a crash or SIGKILL of any writer; only a power loss may
 * drop the last commits, and a power loss ends every sandbox anyway: their
 * rows then carry an old boot id and are reaped as dead. */
static int
registry_configure(struct registry *reg, char **err_msg)
{
	sqlite3_stmt *st = NULL;
	int wal;

	sqlite3_extended_result_codes(reg->db, 1);
	sqlite3_busy_timeout(reg->db, REGISTRY_BUSY_TIMEOUT_MS);
	if (sqlite3_exec(reg->db, "PRAGMA synchronous = NORMAL;"
	    "PRAGMA foreign_keys = ON;",
	    NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(reg->db, "PRAGMA journal_mode = WAL", -1, &st,
	    NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
		registry_db_error(reg, err_msg, "configuring");
		sqlite3_finalize(st);
		return -1;
	}
	wal = sqlite3_column_text(st, 0) != NULL &&
	    strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
	sqlite3_finalize(st);
	if (!wal && err_msg != NULL)
		xasprintf(err_msg, "registry %s: cannot use WAL mode", reg->path);
	return wal ? 0 : -1;
}

/* Creates the schema in an empty database; refuses a newer one. */
static int
registry_migrate_locked(struct registry *reg, char **err_msg)
{
	sqlite3_stmt *st = registry_stmt(reg, STMT_USER_VERSION, err_msg);
	int64_t version;

	if (st == NULL ||
	    registry_step_int(reg, st, &version, "reading the schema version", err_msg) == -1)
		return -1;
	if (version == REGISTRY_SCHEMA_VERSION)
		return 0;
	if (version != 0) {
		if (err_msg != NULL)
			xasprintf(err_msg, "registry %s: schema version %lld, but this "
			    "corral knows version %d", reg->path, (long long)version,
			    REGISTRY_SCHEMA_VERSION);
		return -1;
	}
	if (sqlite3_exec(reg->db, registry_schema, NULL, NULL, NULL) != SQLITE_OK) {
		registry_db_error(reg, err_msg, "creating the schema");
		return -1;
	}
	return 0;
}

/* Brings the schema up to date in one transaction, so that two processes
 * opening a new registry at once create it once. */
static int
registry_migrate(struct registry *reg, char **err_msg)
{
	if (registry_run(reg, STMT_BEGIN, "beginning a transaction", err_msg) == -1)
		return -1;
	if (registry_migrate_locked(reg, err_msg) == -1 ||
	    registry_run(reg, STMT_COMMIT, "committing the schema", err_msg) == -1) {
		registry_rollback(reg);
		return -1;
	}
	return 0;
}

struct registry *
registry_open(const char *path, char **err_msg)
{
	struct registry *reg = xcalloc(1, sizeof(*reg));
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW;

	reg->path = xstrdup(path);
	if (registry_identify_self(reg, err_msg) == -1 ||
	    registry_create_file(path, err_msg) == -1)
		goto fail;
	if (sqlite3_open_v2(path, &reg->db, flags, NULL) != SQLITE_OK) {
		registry_db_error(reg, err_msg, "opening");
		goto fail;
	}
	if (registry_configure(reg, err_msg) == -1 ||
	    registry_migrate(reg, err_msg) == -1)
		goto fail;
	return reg;
fail:
	registry_close(reg);
	return NULL;
}

void
registry_close(struct registry *reg)
{
	if (reg == NULL)
		return;
	for (int i = 0; i < STMT_MAX; i++)
		sqlite3_finalize(reg->stmt[i]);
	sqlite3_close(reg->db);
	free(reg->path);
	free(reg);
}

/* Writes ROW's roots as [{"path": .., "writable": ..}]; NULL when a root
 * has no path or the text exceeds REGISTRY_JSON_MAX_BYTES. */
static char *
registry_roots_json(const struct registry_sandbox *row)
{
	struct json *j = json_new(REGISTRY_JSON_MAX_BYTES);
	const char *text;
	char *copy = NULL;

	if (j == NULL)
		return NULL;
	json_array_begin(j);
	for (size_t i = 0; i < row->roots_len; i++) {
		if (row->roots[i].path == NULL)
			goto done;
		json_object_begin(j);
		json_kv_string(j, "path", row->roots[i].path);
		json_kv_bool(j, "writable", row->roots[i].writable);
		json_object_end(j);
	}
	json_array_end(j);
	if ((text = json_text(j, NULL)) != NULL)
		copy = xstrdup(text);
done:
	json_free(j);
	return copy;
}

/* Writes ROW's labels as one object of strings; NULL when a key or a value
 * is missing or the text exceeds REGISTRY_JSON_MAX_BYTES. */
static char *
registry_labels_json(const struct registry_sandbox *row)
{
	struct json *j = json_new(REGISTRY_JSON_MAX_BYTES);
	const char *text;
	char *copy = NULL;

	if (j == NULL)
		return NULL;
	json_object_begin(j);
	for (size_t i = 0; i < row->labels_len; i++) {
		if (row->labels[i].key == NULL || row->labels[i].value == NULL)
			goto done;
		json_kv_string(j, row->labels[i].key, row->labels[i].value);
	}
	json_object_end(j);
	if ((text = json_text(j, NULL)) != NULL)
		copy = xstrdup(text);
done:
	json_free(j);
	return copy;
}

static void
registry_bind_text(sqlite3_stmt *st, int col, const char *s)
{
	if (s == NULL)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_text(st, col, s, -1, SQLITE_TRANSIENT);
}

/* Binds a positive integer, or NULL for the "none" value NONE. */
static void
registry_bind_id(sqlite3_stmt *st, int col, int64_t v, int64_t none)
{
	if (v == none)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, v);
}

/* Binds the scalar columns of ROW to ?1..?18 of ST (see REGISTRY_COLUMNS). */
static void
registry_bind_scalars(sqlite3_stmt *st, const struct registry_sandbox *row)
{
	registry_bind_text(st, COL_NAME, row->name);
	registry_bind_text(st, COL_PROVIDER, row->provider);
	registry_bind_text(st, COL_MACHINE_ID, row->machine_id);
	registry_bind_text(st, COL_SESSION_ID, row->session_id);
	registry_bind_text(st, COL_AGENT, row->agent);
	registry_bind_text(st, COL_PROFILE, row->profile);
	registry_bind_text(st, COL_ENFORCEMENT, row->enforcement);
	registry_bind_text(st, COL_STATE,
	    row->state == REGISTRY_STATE_READY ? "ready" : "creating");
	sqlite3_bind_int64(st, COL_SERVER_PID, row->server_pid);
	sqlite3_bind_int64(st, COL_SERVER_START, (int64_t)row->server_start);
	registry_bind_text(st, COL_BOOT_ID, row->boot_id);
	registry_bind_id(st, COL_INIT_PID, row->init_pid, 0);
	registry_bind_id(st, COL_NET_SLOT, row->net_slot, REGISTRY_NET_SLOT_NONE);
	sqlite3_bind_int64(st, COL_OWNER_UID, row->owner_uid);
	sqlite3_bind_int64(st, COL_CREATED_AT, row->created_at_us);
	sqlite3_bind_int64(st, COL_LAST_USED_AT, row->last_used_at_us);
}

/* Runs the INSERT or UPDATE statement ID with ROW's values. */
static int
registry_write_row(struct registry *reg, enum registry_stmt id,
    const struct registry_sandbox *row, char **err_msg)
{
	char *roots = registry_roots_json(row), *labels = registry_labels_json(row);
	sqlite3_stmt *st;
	int ret = -1;

	if (row->name == NULL) {
		if (err_msg != NULL)
			*err_msg = xstrdup("a sandbox needs a name");
		goto done;
	}
	if (roots == NULL || labels == NULL) {
		if (err_msg != NULL)
			xasprintf(err_msg, "sandbox '%s': a root without a path, a label "
			    "without a key or value, or more than %d bytes of them",
			    row->name, REGISTRY_JSON_MAX_BYTES);
		goto done;
	}
	if ((st = registry_stmt(reg, id, err_msg)) == NULL)
		goto done;
	registry_bind_scalars(st, row);
	sqlite3_bind_text(st, COL_ROOTS, roots, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, COL_LABELS, labels, -1, SQLITE_STATIC);
	ret = registry_step_done(reg, st, "writing a sandbox", err_msg);
	sqlite3_clear_bindings(st);
done:
	free(roots);
	free(labels);
	return ret;
}

/* Refuses NAME when present, and any name when CAP rows exist. Runs inside
 * the reserving transaction, so no other writer slips in between. */
static int
registry_check_room(struct registry *reg, const char *name, uid_t owner,
    const struct registry_caps *caps, char **err_msg)
{
	sqlite3_stmt *st;
	int64_t n, mine;
	unsigned users_cap;
	int rc;

	if ((st = registry_stmt(reg, STMT_EXISTS, err_msg)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		if (rc == SQLITE_ROW && err_msg != NULL)
			xasprintf(err_msg, "a sandbox named '%s' already exists; delete "
			    "it or choose another name", name);
		else
			registry_db_error(reg, err_msg, "looking up a name");
		return -1;
	}
	if ((st = registry_stmt(reg, STMT_COUNT, err_msg)) == NULL ||
	    registry_step_int(reg, st, &n, "counting sandboxes", err_msg) == -1)
		return -1;
	if (n >= (int64_t)caps->total) {
		if (err_msg != NULL)
			xasprintf(err_msg, "%lld sandboxes are already running on this "
			    "machine (the limit is %u; set " REGISTRY_SANDBOX_MAX_ENV
			    " to change it)", (long long)n, caps->total);
		return -1;
	}
	if (owner == 0)
		return 0;
	/* Root can always create one: the last slot is never another user's. */
	users_cap = caps->total > 1 ? caps->total - 1 : caps->total;
	if (n >= (int64_t)users_cap) {
		if (err_msg != NULL)
			xasprintf(err_msg, "%lld sandboxes are already running on this machine "
			    "(the limit is %u, and the last slot is kept for root; set "
			    REGISTRY_SANDBOX_MAX_ENV " to change it)", (long long)n, caps->total);
		return -1;
	}
	if ((st = registry_stmt(reg, STMT_COUNT_OWNER, err_msg)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)owner);
	if (registry_step_int(reg, st, &mine, "counting a user's sandboxes", err_msg) == -1)
		return -1;
	if (mine >= (int64_t)caps->per_user) {
		if (err_msg != NULL)
			xasprintf(err_msg, "user %u already has %lld sandboxes (the limit per user is "
			    "%u: max_sandboxes_per_user in corrald.yaml); delete one first",
			    (unsigned)owner, (long long)mine, caps->per_user);
		return -1;
	}
	return 0;
}

int
registry_reserve(struct registry *reg, const struct registry_sandbox *row,
    const struct registry_caps *caps, char **err_msg)
{
	struct registry_sandbox own = *row;     /* shallow: only scalars change */

	own.state = REGISTRY_STATE_CREATING;
	own.server_pid = reg->pid;
	own.server_start = reg->start;
	memcpy(own.boot_id, reg->boot_id, sizeof(own.boot_id));
	own.created_at_us = own.last_used_at_us = time_now_us();
	if (registry_run(reg, STMT_BEGIN, "beginning a transaction", err_msg) == -1)
		return -1;
	if (registry_check_room(reg, row->name, row->owner_uid, caps, err_msg) == -1 ||
	    registry_write_row(reg, STMT_INSERT, &own, err_msg) == -1 ||
	    registry_run(reg, STMT_COMMIT, "committing", err_msg) == -1) {
		registry_rollback(reg);
		return -1;
	}
	return 0;
}

/* Runs ST (an UPDATE bound by the caller) and refuses when NAME matched no row. */
static int
registry_update_one(struct registry *reg, sqlite3_stmt *st, const char *name,
    char **err_msg)
{
	if (registry_step_done(reg, st, "updating a sandbox", err_msg) == -1)
		return -1;
	if (sqlite3_changes(reg->db) == 0) {
		if (err_msg != NULL)
			xasprintf(err_msg, "no sandbox named '%s'", name);
		return -1;
	}
	return 0;
}

int
registry_mark_ready(struct registry *reg, const char *name, pid_t init_pid,
    const char *enforcement, char **err_msg)
{
	sqlite3_stmt *st = registry_stmt(reg, STMT_MARK_READY, err_msg);

	if (st == NULL)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, init_pid);
	registry_bind_text(st, 3, enforcement);
	return registry_update_one(reg, st, name, err_msg);
}

int
registry_update(struct registry *reg, const struct registry_sandbox *row,
    char **err_msg)
{
	if (registry_write_row(reg, STMT_UPDATE, row, err_msg) == -1)
		return -1;
	if (sqlite3_changes(reg->db) == 0) {
		if (err_msg != NULL)
			xasprintf(err_msg, "no sandbox named '%s'", row->name);
		return -1;
	}
	return 0;
}

int
registry_touch(struct registry *reg, const char *name, char **err_msg)
{
	sqlite3_stmt *st = registry_stmt(reg, STMT_TOUCH, err_msg);

	if (st == NULL)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, time_now_us());
	return registry_update_one(reg, st, name, err_msg);
}

int
registry_remove(struct registry *reg, const char *name, char **err_msg)
{
	sqlite3_stmt *st = registry_stmt(reg, STMT_REMOVE, err_msg);

	if (st == NULL)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	return registry_step_done(reg, st, "removing a sandbox", err_msg);
}

int
registry_count(struct registry *reg, unsigned *count, char **err_msg)
{
	sqlite3_stmt *st = registry_stmt(reg, STMT_COUNT, err_msg);
	int64_t n;

	if (st == NULL ||
	    registry_step_int(reg, st, &n, "counting sandboxes", err_msg) == -1)
		return -1;
	*count = (unsigned)n;
	return 0;
}

/* A copy of column COL of ST's current row; NULL for SQL NULL. */
static char *
registry_column_dup(sqlite3_stmt *st, int col)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	return s == NULL ? NULL : xstrdup((const char *)s);
}

/* Ends a json_each walk that stopped with RC: SQLITE_ROW means it stopped
 * at an element of the wrong type. */
static int
registry_json_done(struct registry *reg, sqlite3_stmt *st, int rc,
    const char *what, char **err_msg)
{
	if (rc == SQLITE_ROW && err_msg != NULL)
		xasprintf(err_msg, "registry %s: malformed %s in a row", reg->path, what);
	else if (rc != SQLITE_DONE)
		registry_db_error(reg, err_msg, what);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Reads the roots JSON TEXT into SB with json_each. */
static int
registry_read_roots(struct registry *reg, const char *text,
    struct registry_sandbox *sb, char **err_msg)
{
	sqlite3_stmt *st = registry_stmt(reg, STMT_ROOTS, err_msg);
	int rc;

	if (st == NULL)
		return -1;
	sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && sqlite3_column_int(st, 2)) {
		struct registry_root *r;

		sb->roots = xreallocarray(sb->roots, sb->roots_len + 1, sizeof(*sb->roots));
		r = &sb->roots[sb->roots_len++];
		r->path = registry_column_dup(st, 0);
		r->writable = sqlite3_column_int(st, 1) != 0;
	}
	return registry_json_done(reg, st, rc, "roots", err_msg);
}

/* Reads the labels JSON TEXT into SB with json_each; values must be strings. */
static int
registry_read_labels(struct registry *reg, const char *text,
    struct registry_sandbox *sb, char **err_msg)
{
	sqlite3_stmt *st = registry_stmt(reg, STMT_LABELS, err_msg);
	int rc;

	if (st == NULL)
		return -1;
	sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && sqlite3_column_int(st, 2)) {
		struct registry_label *l;

		sb->labels = xreallocarray(sb->labels, sb->labels_len + 1,
		    sizeof(*sb->labels));
		l = &sb->labels[sb->labels_len++];
		l->key = registry_column_dup(st, 0);
		l->value = registry_column_dup(st, 1);
	}
	return registry_json_done(reg, st, rc, "labels", err_msg);
}

/* Copies the scalar columns of ST's current row into SB. */
static void
registry_fill_scalars(sqlite3_stmt *st, struct registry_sandbox *sb)
{
	const unsigned char *boot_id = sqlite3_column_text(st, COL_BOOT_ID - 1);
	const unsigned char *state = sqlite3_column_text(st, COL_STATE - 1);

	sb->name = registry_column_dup(st, COL_NAME - 1);
	sb->provider = registry_column_dup(st, COL_PROVIDER - 1);
	sb->machine_id = registry_column_dup(st, COL_MACHINE_ID - 1);
	sb->session_id = registry_column_dup(st, COL_SESSION_ID - 1);
	sb->agent = registry_column_dup(st, COL_AGENT - 1);
	sb->profile = registry_column_dup(st, COL_PROFILE - 1);
	sb->enforcement = registry_column_dup(st, COL_ENFORCEMENT - 1);
	sb->state = state != NULL && strcmp((const char *)state, "ready") == 0 ?
	    REGISTRY_STATE_READY : REGISTRY_STATE_CREATING;
	sb->server_pid = (pid_t)sqlite3_column_int64(st, COL_SERVER_PID - 1);
	sb->server_start = (uint64_t)sqlite3_column_int64(st, COL_SERVER_START - 1);
	/* An over-long boot id is cut short, so it matches no boot: the row is dead. */
	snprintf(sb->boot_id, sizeof(sb->boot_id), "%s",
	    boot_id == NULL ? "" : (const char *)boot_id);
	sb->init_pid = (pid_t)sqlite3_column_int64(st, COL_INIT_PID - 1);
	sb->net_slot = sqlite3_column_type(st, COL_NET_SLOT - 1) == SQLITE_NULL ?
	    REGISTRY_NET_SLOT_NONE : sqlite3_column_int(st, COL_NET_SLOT - 1);
	sb->owner_uid = (uid_t)sqlite3_column_int64(st, COL_OWNER_UID - 1);
	sb->created_at_us = sqlite3_column_int64(st, COL_CREATED_AT - 1);
	sb->last_used_at_us = sqlite3_column_int64(st, COL_LAST_USED_AT - 1);
}

/* Fills SB (zeroed) from ST's current row; cleared again on failure. */
static int
registry_fill_row(struct registry *reg, sqlite3_stmt *st,
    struct registry_sandbox *sb, char **err_msg)
{
	const char *roots = (const char *)sqlite3_column_text(st, COL_ROOTS - 1);
	const char *labels = (const char *)sqlite3_column_text(st, COL_LABELS - 1);

	registry_fill_scalars(st, sb);
	if (registry_read_roots(reg, roots == NULL ? "[]" : roots, sb, err_msg) == -1 ||
	    registry_read_labels(reg, labels == NULL ? "{}" : labels, sb, err_msg) == -1) {
		registry_sandbox_clear(sb);
		return -1;
	}
	return 0;
}

/* Appends every row ST returns to OUT (emptied first); OUT is empty on failure. */
static int
registry_collect(struct registry *reg, sqlite3_stmt *st,
    struct registry_list *out, char **err_msg)
{
	int rc;

	memset(out, 0, sizeof(*out));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		out->rows = xreallocarray(out->rows, out->len + 1, sizeof(*out->rows));
		memset(&out->rows[out->len], 0, sizeof(*out->rows));
		if (registry_fill_row(reg, st, &out->rows[out->len], err_msg) == -1)
			break;
		out->len++;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		registry_db_error(reg, err_msg, "reading sandboxes");
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		registry_list_clear(out);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
registry_get(struct registry *reg, const char *name,
    struct registry_sandbox **out, char **err_msg)
{
	sqlite3_stmt *st = registry_stmt(reg, STMT_GET, err_msg);
	struct registry_list list;

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (registry_collect(reg, st, &list, err_msg) == -1)
		return -1;
	if (list.len > 0) {
		*out = xmalloc(sizeof(**out));
		**out = list.rows[0];           /* the primary key: one row at most */
		list.len = 0;
	}
	registry_list_clear(&list);
	return 0;
}

int
registry_find(struct registry *reg, const char *session_id, const char *agent,
    struct registry_list *out, char **err_msg)
{
	sqlite3_stmt *st = registry_stmt(reg, STMT_FIND, err_msg);

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	registry_bind_text(st, 1, session_id);
	registry_bind_text(st, 2, agent);
	return registry_collect(reg, st, out, err_msg);
}

int
registry_list(struct registry *reg, struct registry_list *out, char **err_msg)
{
	sqlite3_stmt *st = registry_stmt(reg, STMT_LIST, err_msg);

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	return registry_collect(reg, st, out, err_msg);
}

/* A server is alive only if its pid runs now with the same start time in
 * the same boot: kill(pid, 0) alone is fooled by pid reuse and reboots,
 * and a live server's rows must never be reaped. */
int
registry_dead_rows(struct registry *reg, struct registry_list *out,
    char **err_msg)
{
	struct registry_list all;

	memset(out, 0, sizeof(*out));
	if (registry_list(reg, &all, err_msg) == -1)
		return -1;
	for (size_t i = 0; i < all.len; i++) {
		struct registry_sandbox *sb = &all.rows[i];

		if (proc_is_same_process(sb->server_pid, sb->server_start, sb->boot_id)) {
			registry_sandbox_clear(sb);
			continue;
		}
		out->rows = xreallocarray(out->rows, out->len + 1, sizeof(*out->rows));
		out->rows[out->len++] = *sb;
	}
	free(all.rows);
	return 0;
}

int
registry_cap_from_env(unsigned config_max, unsigned *cap, char **err_msg)
{
	const char *text = getenv(REGISTRY_SANDBOX_MAX_ENV);
	unsigned long v;
	char *end;

	if (text == NULL) {
		*cap = config_max != 0 ? config_max : REGISTRY_SANDBOX_MAX_DEFAULT;
		return 0;
	}
	errno = 0;
	v = strtoul(text, &end, 10);
	/* strtoul takes a sign and leading spaces; a cap takes digits only. */
	if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 ||
	    v == 0 || v > UINT_MAX) {
		if (err_msg != NULL)
			xasprintf(err_msg, REGISTRY_SANDBOX_MAX_ENV " is '%s': it must "
			    "be a positive whole number of sandboxes", text);
		return -1;
	}
	*cap = (unsigned)v;
	return 0;
}

void
registry_sandbox_clear(struct registry_sandbox *sb)
{
	if (sb == NULL)
		return;
	for (size_t i = 0; i < sb->roots_len; i++)
		free(sb->roots[i].path);
	for (size_t i = 0; i < sb->labels_len; i++) {
		free(sb->labels[i].key);
		free(sb->labels[i].value);
	}
	free(sb->roots);
	free(sb->labels);
	free(sb->name);
	free(sb->provider);
	free(sb->machine_id);
	free(sb->session_id);
	free(sb->agent);
	free(sb->profile);
	free(sb->enforcement);
	memset(sb, 0, sizeof(*sb));
}

void
registry_sandbox_free(struct registry_sandbox *sb)
{
	registry_sandbox_clear(sb);
	free(sb);
}

void
registry_list_clear(struct registry_list *list)
{
	if (list == NULL)
		return;
	for (size_t i = 0; i < list->len; i++)
		registry_sandbox_clear(&list->rows[i]);
	free(list->rows);
	memset(list, 0, sizeof(*list));
}
