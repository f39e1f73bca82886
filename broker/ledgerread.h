/* The egress ledger read back (corral-ledger(5)): its files in a log
 * folder, oldest first, one whole line at a time. The rotated files (any
 * regular file named "egress.jsonl.<something>" or "egress.jsonl-<something>":
 * logrotate's egress.jsonl.1, egress.jsonl.2.gz, dateext names), ordered by
 * modification time, then the live egress.jsonl; gzip and plain files
 * alike (zlib). Lines longer than a record may be are skipped whole, never
 * split. Following, the reader stays at the end of the live file and reads
 * what is appended, and when the file is rotated it finishes the old one
 * before it reads the new. Each call does a bounded amount of work (at
 * most LEDGERREAD_STEPS_PER_CALL reads of LEDGERREAD_CHUNK_BYTES or opens),
 * so a caller in an event loop reads a few lines per turn. Blocking file
 * I/O: local files only. */
#ifndef CORRAL_LEDGERREAD_H
#define CORRAL_LEDGERREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress-proxy/ledger.h"          /* LEDGER_FILE_NAME: the live file */

#define LEDGERREAD_CHUNK_BYTES (64 * 1024)      /* one read */
#define LEDGERREAD_STEPS_PER_CALL 4             /* reads and opens before a call says BUSY */
#define LEDGERREAD_FILES_MAX 1024               /* rotated files; past it, the oldest are left out */

struct ledgerread;

enum ledgerread_status {
	LEDGERREAD_LINE,        /* a whole line, without its newline */
	LEDGERREAD_BUSY,        /* this call's work is done and found no line yet: call again */
	LEDGERREAD_WAIT,        /* following: at the end of the live file; call again later */
	LEDGERREAD_END,         /* every file read (never when following) */
};

/* Lists the ledger's files in DIR, leaving out the rotated ones last
 * modified before SINCE_US (microseconds since the epoch; 0: none), and
 * opens the live file as it is now. With FOLLOW the reader never ends: it
 * follows the live file as it grows and across its rotations. NULL with
 * errno when DIR cannot be read. */
struct ledgerread *ledgerread_open(const char *dir, int64_t since_us, bool follow);

/* The next line: *LINE (NUL-terminated, LEDGERREAD_LINE only) stays valid
 * until the next call; *LEN is its length. A file that cannot be read is
 * logged and left behind; a partial last line is left out, except at the
 * end of a followed live file, where it waits for the rest. */
enum ledgerread_status ledgerread_next(struct ledgerread *r, const char **line, size_t *len);

/* Lines left out so far for being longer than LEDGER_RECORD_MAX_BYTES. */
uint64_t ledgerread_skipped(const struct ledgerread *r);

/* Closes every file; NULL is fine. */
void ledgerread_free(struct ledgerread *r);

#endif
