/* The client side of shell runs (PROTOCOL.md section 5): start or resume
 * a run and follow its output to the result. Used by `corral run` and the
 * run benchmark. Never exits, never logs. */
#ifndef CORRAL_CLIENT_RUN_H
#define CORRAL_CLIENT_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"

/* Called for each output chunk at OFFSET; nonzero stops following (the
 * connection is closed: the run goes on and may be resumed). */
typedef int (*client_run_output_fn)(void *arg, uint64_t offset, const uint8_t *data,
    size_t len);

/* What client_run ended with. */
enum client_run_end {
	CLIENT_RUN_RESULT,              /* *RESULT is set */
	CLIENT_RUN_REFUSED,             /* the daemon answered an error: WHY says it */
	CLIENT_RUN_LOST,                /* the connection failed or closed: resumable */
	CLIENT_RUN_STOPPED,             /* OUTPUT asked to stop */
};

/* Why a run was not followed to its result. */
#define CLIENT_RUN_WHY_BYTES 512
struct client_run_error {
	char code[32];                  /* the daemon's error code (REFUSED), else "unavailable" */
	char why[CLIENT_RUN_WHY_BYTES];
};

/* Sends REQ (a RunStart or RunResume Request) on FD, a fresh connection,
 * and follows the run: OUTPUT for each chunk, then *RESULT (free it with
 * corral__run_result__free_unpacked). *ERR says what went wrong for the
 * other ends. */
enum client_run_end client_run(int fd, const Corral__Request *req, client_run_output_fn output,
    void *arg, Corral__RunResult **result, struct client_run_error *err);

#endif
