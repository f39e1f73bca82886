/* The registry of sandboxes: one SQLite database (WAL) at
 * <state-dir>/registry.db with one row per sandbox, shared safely by every
 * process that opens it. It never logs: each failing call returns -1 (or
 * NULL) and, when ERR_MSG is not NULL, a message in *ERR_MSG for the caller
 * to free. SQLite keeps lock state in process memory that fork() copies:
 * a child must neither use nor open a registry its parent has open. */
#ifndef CORRAL_REGISTRY_H
#define CORRAL_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/proc.h"

#define REGISTRY_SANDBOX_MAX_DEFAULT 20         /* sandboxes per machine */
#define REGISTRY_SANDBOX_MAX_ENV "CORRAL_SANDBOX_MAX"
#define REGISTRY_MACHINE_ID_DEFAULT "local"
#define REGISTRY_NET_SLOT_NONE (-1)

struct registry;

enum registry_state {
	REGISTRY_STATE_CREATING,        /* reserved; being built */
	REGISTRY_STATE_READY,           /* built; init_pid and enforcement known */
};

struct registry_root {
	char *path;
	bool writable;
};

struct registry_label {
	char *key;
	char *value;
};

/* The C view of one row. Strings are owned by the struct; NULL stands for
 * SQL NULL (every string but name, machine_id and boot_id may be NULL).
 * Times are microseconds since the epoch, UTC (callers format RFC 3339). */
struct registry_sandbox {
	char *name;
	char *provider;
	char *machine_id;               /* NULL when written: "local" */
	char *session_id;
	char *agent;
	struct registry_root *roots;
	size_t roots_len;
	char *profile;
	char *enforcement;              /* "full", "partial"; NULL while creating */
	enum registry_state state;
	pid_t server_pid;               /* the broker that owns the sandbox */
	uint64_t server_start;          /* its start time, clock ticks since boot */
	char boot_id[BOOT_ID_BYTES];    /* the boot it ran in */
	pid_t init_pid;                 /* 0 until ready */
	int net_slot;                   /* REGISTRY_NET_SLOT_NONE when none */
	struct registry_label *labels;
	size_t labels_len;
	uid_t owner_uid;
	int64_t created_at_us;
	int64_t last_used_at_us;
};

struct registry_list {
	struct registry_sandbox *rows;
	size_t len;
};

/* Opens (creating if missing) the registry at PATH, mode 0600. */
struct registry *registry_open(const char *path, char **err_msg);
void registry_close(struct registry *reg);

/* How many sandboxes the machine holds: TOTAL in all, of which a user
 * other than root holds at most PER_USER, and never the last free slot
 * (root can always create one). */
struct registry_caps {
	unsigned total;
	unsigned per_user;
};

/* Inserts ROW in state "creating", owned by this process (its pid, start
 * time and boot id replace ROW's), with created_at = last_used_at = now.
 * Refuses a name already present, and refuses over CAPS (for ROW's
 * owner_uid); the check and the insert are one transaction. */
int registry_reserve(struct registry *reg, const struct registry_sandbox *row,
    const struct registry_caps *caps, char **err_msg);
/* Moves NAME to "ready" with its init's pid and the enforcement reached. */
int registry_mark_ready(struct registry *reg, const char *name, pid_t init_pid,
    const char *enforcement, char **err_msg);
/* Replaces every column of the row named ROW->name but created_at. */
int registry_update(struct registry *reg, const struct registry_sandbox *row,
    char **err_msg);
/* Sets NAME's last_used_at to now. */
int registry_touch(struct registry *reg, const char *name, char **err_msg);
/* Deletes NAME; deleting a name that is absent succeeds. */
int registry_remove(struct registry *reg, const char *name, char **err_msg);

/* Sets *OUT to NAME's row (free with registry_sandbox_free), or to NULL
 * when there is none. */
int registry_get(struct registry *reg, const char *name,
    struct registry_sandbox **out, char **err_msg);
/* Fills OUT with the rows of SESSION_ID and AGENT, ordered like registry_list. */
int registry_find(struct registry *reg, const char *session_id, const char *agent,
    struct registry_list *out, char **err_msg);
/* Fills OUT with every row, ordered by created_at, then name. */
int registry_list(struct registry *reg, struct registry_list *out, char **err_msg);
int registry_count(struct registry *reg, unsigned *count, char **err_msg);
/* Fills OUT with the rows whose server is gone: its pid does not run now
 * with the recorded start time, or the row is from another boot. */
int registry_dead_rows(struct registry *reg, struct registry_list *out,
    char **err_msg);

/* The sandbox cap: CORRAL_SANDBOX_MAX when set (a positive integer, else an
 * error), else CONFIG_MAX when not 0, else REGISTRY_SANDBOX_MAX_DEFAULT. */
int registry_cap_from_env(unsigned config_max, unsigned *cap, char **err_msg);

void registry_sandbox_clear(struct registry_sandbox *sb);
void registry_sandbox_free(struct registry_sandbox *sb);
void registry_list_clear(struct registry_list *list);

#endif
