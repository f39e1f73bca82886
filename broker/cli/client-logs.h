/* The client side of the logs stream (PROTOCOL.md section 6): send a Logs
 * request and take its LogsReply frames, record by record, to the frame
 * with end set (or, following, until the caller stops). Used by `corral
 * logs` and `corral report`. Never exits, never logs. */
#ifndef CORRAL_CLIENT_LOGS_H
#define CORRAL_CLIENT_LOGS_H

#include <stddef.h>

#include "common/wire.h"

/* Called for each record (one ledger line, NUL-terminated, LEN bytes);
 * nonzero stops reading (the connection is then closed). */
typedef int (*client_logs_record_fn)(void *arg, const char *record, size_t len);

/* What client_logs ended with. */
enum client_logs_end {
	CLIENT_LOGS_DONE,               /* the frame with end set came */
	CLIENT_LOGS_REFUSED,            /* the daemon answered an error: WHY says it */
	CLIENT_LOGS_LOST,               /* the connection failed, closed or timed out: WHY */
	CLIENT_LOGS_STOPPED,            /* RECORD asked to stop */
};

/* Sends REQ (a Logs Request) on FD, a fresh connection, and hands every
 * record to RECORD. Without follow it waits at most CLIENT_TIMEOUT_MS for
 * each frame; with follow, as long as the daemon keeps the stream open.
 * WHY (WHY_SIZE bytes) says what went wrong. */
enum client_logs_end client_logs(int fd, const Corral__Request *req,
    client_logs_record_fn record, void *arg, char *why, size_t why_size);

#endif
