/* The file API's wire inside corrald: which operation corral-init runs
 * (the FSOP message of common/initproto.h), and the compact result its
 * child leaves in a memfd for the broker to read.
 *
 * The result format (host order, one machine) is:
 *   u32 status; status != FSPROTO_OK: bytes message
 *   read:        u32 truncated, bytes content
 *   write, edit: u64 bytes_written, u32 created
 *   list:        u32 n, n x (bytes name, u32 type, u64 size)
 *   grep:        u32 count, u32 n, n x (bytes path, u32 line, bytes text)
 * where bytes is a u32 length and that many bytes (no NUL). The broker
 * reads it as untrusted: the sandbox's user ran the child that wrote it.
 * Library-like: nothing here logs or exits. */
#ifndef CORRAL_FSPROTO_H
#define CORRAL_FSPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FSPROTO_READ_MAX_BYTES (1024 * 1024)    /* read: the rest is cut (truncated) */
#define FSPROTO_WRITE_MAX_BYTES (1024 * 1024)   /* write, and an edit's file before and after */
#define FSPROTO_PATTERN_MAX_BYTES 4096          /* grep's pattern */
#define FSPROTO_GREP_MATCHES_MAX 1000           /* matches kept; count goes on */
#define FSPROTO_LIST_ENTRIES_MAX 8192           /* list: the first ones by name */
#define FSPROTO_OUT_MAX_BYTES (3 * 1024 * 1024) /* a whole result, under the wire's 4 MiB */
#define FSPROTO_MESSAGE_MAX_BYTES 512           /* an error's text */

enum fsproto_op {
	FSPROTO_READ = 1,
	FSPROTO_WRITE,
	FSPROTO_EDIT,
	FSPROTO_LIST,
	FSPROTO_GREP,
	FSPROTO_OP_MAX = FSPROTO_GREP,
};

/* How an operation ended; each refusal maps to one wire error code. */
enum fsproto_status {
	FSPROTO_OK = 0,
	FSPROTO_NOT_FOUND,              /* no such file or folder */
	FSPROTO_INVALID,                /* wrong kind of file, bad pattern, edit count */
	FSPROTO_PERMISSION,             /* outside the workspace, Landlock, read-only */
	FSPROTO_LIMIT,                  /* a cap was reached */
	FSPROTO_FAILED,                 /* anything else */
	FSPROTO_STATUS_MAX = FSPROTO_FAILED,
};

enum fsproto_type {
	FSPROTO_TYPE_FILE = 0,
	FSPROTO_TYPE_DIR,
	FSPROTO_TYPE_SYMLINK,
	FSPROTO_TYPE_OTHER,
};

/* A result being written, at most FSPROTO_OUT_MAX_BYTES. */
struct fsproto_out {
	unsigned char *data;
	size_t len, cap;
	bool overflow;                  /* a put did not fit */
};

/* One list entry or grep match of a decoded result; text points into the
 * result's bytes and is not NUL-terminated. */
struct fsproto_entry {
	const char *name;
	size_t name_len;
	enum fsproto_type type;
	uint64_t size;
};

struct fsproto_match {
	const char *path;
	size_t path_len;
	uint32_t line;
	const char *text;
	size_t text_len;
};

/* A decoded result. Arrays are malloc'd (fsproto_result_clear frees them). */
struct fsproto_result {
	enum fsproto_status status;
	const char *message;            /* status != FSPROTO_OK */
	size_t message_len;
	bool truncated;                 /* read */
	const char *content;
	size_t content_len;
	uint64_t bytes_written;         /* write, edit */
	bool created;
	size_t n_entries;               /* list */
	struct fsproto_entry *entries;
	uint32_t count;                 /* grep: every match */
	size_t n_matches;               /* the first ones, kept */
	struct fsproto_match *matches;
};

void fsproto_out_init(struct fsproto_out *o);
void fsproto_out_clear(struct fsproto_out *o);
/* Appends a field; a result that overflows is refused by fsproto_out_write. */
void fsproto_put_u32(struct fsproto_out *o, uint32_t v);
void fsproto_put_u64(struct fsproto_out *o, uint64_t v);
void fsproto_put_bytes(struct fsproto_out *o, const void *p, size_t n);
/* Writes all of OUT to FD. 0, or -1 with errno. */
int fsproto_out_write(const struct fsproto_out *out, int fd);

/* Decodes the result of OP in DATA (which must outlive R). 0, or -1
 * (EBADMSG) when it is malformed. */
int fsproto_result_decode(const void *data, size_t len, enum fsproto_op op,
    struct fsproto_result *r);
void fsproto_result_clear(struct fsproto_result *r);
/* The type's name on the wire: "file", "dir", "symlink", "other". */
const char *fsproto_type_name(enum fsproto_type t);

#endif
