/* The file API's operations (DESIGN sections 4 and 6), as corral-init runs
 * them inside a sandbox under a workload's layers, and the compact result
 * they leave for the daemon.
 *
 * Each operation takes the workspace's folder descriptor WS and, for those
 * that may name absolute paths (read, list, grep), ROOT: the descriptor of
 * "/" or -1 to refuse absolute paths. A relative path is opened with
 * openat2(WS, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so neither ".." nor
 * a symbolic link leads out of the workspace; an absolute one with
 * openat2(ROOT, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), where Landlock is
 * the wall. Writes and edits take relative paths only.
 *
 * An operation writes its whole result into a struct fsop_out: a status,
 * then either its one-line error or what it found. The result format
 * (host order, one machine) is:
 *   u32 status; status != FSOP_OK: bytes message
 *   read:        u32 truncated, bytes content
 *   write, edit: u64 bytes_written, u32 created
 *   list:        u32 n, n x (bytes name, u32 type, u64 size)
 *   grep:        u32 count, u32 n, n x (bytes path, u32 line, bytes text)
 * where bytes is a u32 length and that many bytes (no NUL).
 * Library-like: nothing here logs or exits. */
#ifndef CORRAL_FSOP_H
#define CORRAL_FSOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FSOP_READ_MAX_BYTES (1024 * 1024)       /* read: the rest is cut (truncated) */
#define FSOP_WRITE_MAX_BYTES (1024 * 1024)      /* write, and an edit's file before and after */
#define FSOP_PATTERN_MAX_BYTES 4096             /* grep's pattern */
#define FSOP_GREP_MATCHES_MAX 1000              /* matches kept; count goes on */
#define FSOP_GREP_TEXT_MAX_BYTES 512            /* a matching line's text, kept */
#define FSOP_GREP_FILE_MAX_BYTES (16 * 1024 * 1024)     /* larger files are skipped */
#define FSOP_GREP_BINARY_PROBE_BYTES 8192       /* a NUL in these: binary, skipped */
#define FSOP_GREP_DEPTH_MAX 64                  /* folders below the start */
#define FSOP_LIST_ENTRIES_MAX 8192              /* list: the first ones by name */
#define FSOP_OUT_MAX_BYTES (3 * 1024 * 1024)    /* a whole result, under the wire's 4 MiB */
#define FSOP_MESSAGE_MAX_BYTES 512              /* an error's text */

enum fsop_op {
	FSOP_READ = 1,
	FSOP_WRITE,
	FSOP_EDIT,
	FSOP_LIST,
	FSOP_GREP,
	FSOP_OP_MAX = FSOP_GREP,
};

/* How an operation ended; each refusal maps to one wire error code. */
enum fsop_status {
	FSOP_OK = 0,
	FSOP_NOT_FOUND,                 /* no such file or folder */
	FSOP_INVALID,                   /* wrong kind of file, bad pattern, edit count */
	FSOP_PERMISSION,                /* outside the workspace, Landlock, read-only */
	FSOP_LIMIT,                     /* a cap was reached */
	FSOP_FAILED,                    /* anything else */
	FSOP_STATUS_MAX = FSOP_FAILED,
};

enum fsop_type {
	FSOP_TYPE_FILE = 0,
	FSOP_TYPE_DIR,
	FSOP_TYPE_SYMLINK,
	FSOP_TYPE_OTHER,
};

/* A result being written, at most FSOP_OUT_MAX_BYTES. */
struct fsop_out {
	unsigned char *data;
	size_t len, cap;
	bool overflow;                  /* a put did not fit */
};

/* One list entry or grep match of a decoded result; text points into the
 * result's bytes and is not NUL-terminated. */
struct fsop_entry {
	const char *name;
	size_t name_len;
	enum fsop_type type;
	uint64_t size;
};

struct fsop_match {
	const char *path;
	size_t path_len;
	uint32_t line;
	const char *text;
	size_t text_len;
};

/* A decoded result. Arrays are malloc'd (fsop_result_clear frees them). */
struct fsop_result {
	enum fsop_status status;
	const char *message;            /* status != FSOP_OK */
	size_t message_len;
	bool truncated;                 /* read */
	const char *content;
	size_t content_len;
	uint64_t bytes_written;         /* write, edit */
	bool created;
	size_t n_entries;               /* list */
	struct fsop_entry *entries;
	uint32_t count;                 /* grep: every match */
	size_t n_matches;               /* the first ones, kept */
	struct fsop_match *matches;
};

void fsop_out_init(struct fsop_out *o);
void fsop_out_clear(struct fsop_out *o);

/* The operations: 0 with the result in OUT, or -1 with an error result in
 * OUT (its status and one-line message). */
int fsop_read(int ws, int root, const char *path, struct fsop_out *out);
/* Creates missing parent folders (beneath WS too); created says whether
 * the file itself is new. */
int fsop_write(int ws, const char *path, const void *data, size_t len, struct fsop_out *out);
/* Replaces OLD (which must occur exactly once) by NEW. */
int fsop_edit(int ws, const char *path, const char *old, size_t old_len,
    const char *new_text, size_t new_len, struct fsop_out *out);
/* PATH "" is the workspace. Entries sorted by name. */
int fsop_list(int ws, int root, const char *path, struct fsop_out *out);
/* PATTERN is a POSIX extended regular expression; PATH ("" : the
 * workspace) a file or a folder searched recursively, binary files and
 * symbolic links skipped. */
int fsop_grep(int ws, int root, const char *pattern, const char *path, struct fsop_out *out);

/* Replaces what OUT holds by an error result of STATUS and MESSAGE
 * (cut to FSOP_MESSAGE_MAX_BYTES); returns -1. */
int fsop_out_fail(struct fsop_out *out, enum fsop_status status, const char *message);
/* Writes all of OUT to FD. 0, or -1 with errno. */
int fsop_out_write(const struct fsop_out *out, int fd);

/* Decodes the result of OP in DATA (which must outlive R). 0, or -1
 * (EBADMSG) when it is malformed. */
int fsop_result_decode(const void *data, size_t len, enum fsop_op op, struct fsop_result *r);
void fsop_result_clear(struct fsop_result *r);
/* The type's name on the wire: "file", "dir", "symlink", "other". */
const char *fsop_type_name(enum fsop_type t);

#endif
