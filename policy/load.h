/* Loading a policy from YAML (the schema of corral-policy(5)) into the
 * model of policy.h. Loading is three steps: parse (YAML into a tree, then
 * the tree's shape checked against the schema: unknown keys, wrong node
 * types, duplicate keys, missing keys), validate (every value checked and
 * converted: paths, hosts, ports, CIDRs, binaries), then commit (the new
 * policy handed to the caller). Every error found on the way is appended to
 * the caller's diagnostics with its file:line:col, and loading goes on as
 * far as it can so that all of them are reported together; nothing is
 * committed unless there are none. Nothing here prints or exits.
 *
 * Refused outright, whatever else the document says: anchors and aliases
 * (so an alias bomb costs nothing), tags, more than one document, an empty
 * document, nesting deeper than POLICY_LOAD_DEPTH_MAX, input over
 * POLICY_FILE_MAX_BYTES, invalid UTF-8 and NUL characters. */
#ifndef CORRAL_POLICY_LOAD_H
#define CORRAL_POLICY_LOAD_H

#include <stddef.h>

#include "policy/diag.h"
#include "policy/policy.h"

#define POLICY_FILE_MAX_BYTES (1024 * 1024)     /* a policy or profile file */
#define POLICY_LOAD_DEPTH_MAX 32                /* nested mappings and lists */
#define POLICY_LOAD_NODES_MAX 200000            /* YAML nodes in one document */
#define POLICY_LOAD_PATH_MAX_BYTES 4096         /* a file-system path, NUL included */
#define POLICY_LOAD_TEXT_MAX_BYTES 1024         /* a name, key, user or reason, NUL included */

/* Loads the LEN bytes at DATA (no NUL needed) as a policy. NAME is what
 * diagnostics call the input (a file name, "<stdin>", "profile strict").
 * Returns 0 and a new policy in *OUT (policy_free() it), or -1, *OUT NULL,
 * with every error appended to DIAGS in the order of their positions
 * (DIAGS may be NULL when the caller only wants the verdict; entries
 * already in it are left as they are). Running out of memory is an error
 * like the others. */
int policy_load_buffer(const char *name, const char *data, size_t len,
    struct policy **out, struct policy_diags *diags);

/* Loads the file PATH as policy_load_buffer() does, naming it PATH in
 * DIAGS. Refused before reading: a file that is not a regular file, that
 * its group or others can write, that is owned by a user other than root
 * and the one loading it, or that is over POLICY_FILE_MAX_BYTES. A
 * symlink is followed: the file it leads to is what is checked. */
int policy_load_file(const char *path, struct policy **out, struct policy_diags *diags);

/* The same for the open descriptor FD (which stays open; it is read from
 * its current offset), named NAME in DIAGS: for callers that open
 * files themselves, e.g. with openat() in a profile folder. */
int policy_load_fd(int fd, const char *name, struct policy **out,
    struct policy_diags *diags);

/* Reads FD (a pipe, a socket, a terminal: any descriptor) to its end and
 * loads what it held, named NAME in DIAGS. No file checks, as the content
 * is handed over by the caller (standard input of `corral policy check -`),
 * but more than POLICY_FILE_MAX_BYTES is refused as soon as it is read. */
int policy_load_stream(int fd, const char *name, struct policy **out,
    struct policy_diags *diags);

#endif
