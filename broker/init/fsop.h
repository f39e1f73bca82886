/* The file API's operations, as corral-init runs them inside a sandbox in
 * a child under a workload's layers; each leaves its result in the format
 * of common/fsproto.h.
 *
 * Each operation takes the workspace's folder descriptor WS and, for those
 * that may name absolute paths (read, list, grep), ROOT: the descriptor of
 * "/" or -1 to refuse absolute paths. A relative path is opened with
 * openat2(WS, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so neither ".." nor
 * a symbolic link leads out of the workspace; an absolute one with
 * openat2(ROOT, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), where Landlock is
 * the wall. Writes and edits take relative paths only.
 * Library-like: nothing here logs or exits. */
#ifndef CORRAL_FSOP_H
#define CORRAL_FSOP_H

#include <stddef.h>

#include "common/fsproto.h"

#define FSOP_GREP_TEXT_MAX_BYTES 512            /* a matching line's text, kept */
#define FSOP_GREP_FILE_MAX_BYTES (16 * 1024 * 1024)     /* larger files are skipped */
#define FSOP_GREP_BINARY_PROBE_BYTES 8192       /* a NUL in these: binary, skipped */
#define FSOP_GREP_DEPTH_MAX 64                  /* folders below the start */

/* The operations: 0 with the result in OUT, or -1 with an error result in
 * OUT (its status and one-line message). */
int fsop_read(int ws, int root, const char *path, struct fsproto_out *out);
/* Creates missing parent folders (beneath WS too); created says whether
 * the file itself is new. */
int fsop_write(int ws, const char *path, const void *data, size_t len, struct fsproto_out *out);
/* Replaces OLD (which must occur exactly once) by NEW. */
int fsop_edit(int ws, const char *path, const char *old, size_t old_len,
    const char *new_text, size_t new_len, struct fsproto_out *out);
/* PATH "" is the workspace. Entries sorted by name. */
int fsop_list(int ws, int root, const char *path, struct fsproto_out *out);
/* PATTERN is a POSIX extended regular expression; PATH ("" : the
 * workspace) a file or a folder searched recursively, binary files and
 * symbolic links skipped. */
int fsop_grep(int ws, int root, const char *pattern, const char *path, struct fsproto_out *out);

/* Replaces what OUT holds by an error result of STATUS and MESSAGE (cut
 * to FSPROTO_MESSAGE_MAX_BYTES, control bytes shown as '?'); returns -1. */
int fsop_out_fail(struct fsproto_out *out, enum fsproto_status status, const char *message);

#endif
