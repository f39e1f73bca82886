/* What the ledger says each sandbox did (`corral report`): the hosts it
 * reached (allowed connections) with their counts and bytes up and down
 * (from the close records, matched to their connect by id), its refusals
 * by reason and by host, and the binaries that connected. Fed one record
 * at a time. Bounded: each table keeps at most its cap of distinct keys;
 * what comes past a cap is counted under "other", and the report says so.
 * Never exits on bad input, never logs. */
#ifndef CORRAL_REPORT_H
#define CORRAL_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REPORT_SANDBOXES_MAX 256        /* sandboxes (and host mode) */
#define REPORT_HOSTS_MAX 256            /* per sandbox: hosts reached, and as many refused */
#define REPORT_REASONS_MAX 64           /* per sandbox: reasons of refusals */
#define REPORT_BINARIES_MAX 64          /* per sandbox */
#define REPORT_OPEN_MAX 65536           /* allowed connections waiting for their close, in all */
#define REPORT_JSON_SANDBOX_MAX_BYTES (4 * 1024 * 1024)        /* one sandbox's object */

struct report;

/* The window the records were asked for (0: no bound), for the header. */
struct report_window {
	int64_t since_us;
	int64_t until_us;
};

/* An empty report; exits when out of memory, as the CLI's allocators do. */
struct report *report_new(void);
void report_free(struct report *r);

/* Counts the ledger record REC (one line, LEN bytes); one that cannot be
 * read is counted as such and otherwise left out. */
void report_add(struct report *r, const char *rec, size_t len);

/* Writes the report for people, values made safe for a terminal; -1 when
 * OUT fails. */
int report_write_text(const struct report *r, const struct report_window *w, FILE *out);
/* Writes the report as one JSON object (corral(1), report); -1 when OUT fails. */
int report_write_json(const struct report *r, const struct report_window *w, FILE *out);

#endif
