/* What the verbs that read the ledger share (cli-logs.c, cli-report.c). */
#ifndef CORRAL_CLI_LOGS_H
#define CORRAL_CLI_LOGS_H

#include <stdint.h>

#include "broker/cli/cli.h"
#include "broker/cli/client-logs.h"

/* Parses the time of OPTION (--since, --until): an RFC 3339 time or a
 * duration back from now. 0, or CLI_EXIT_FAILED with the reason printed. */
int cli_logs_time(const char *option, const char *text, int64_t *us);

/* Asks corrald for the records LQ names and hands each to RECORD. The
 * exit status: CLI_EXIT_OK, or CLI_EXIT_FAILED with the reason printed. */
int cli_logs_stream(const struct cli *cli, Corral__Logs *lq, client_logs_record_fn record,
    void *arg);

#endif
