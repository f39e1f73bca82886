/* The per-sandbox ring of refusals: answers "what was refused since T"
 * synchronously, from memory, without reading the ledger file. Equal
 * refusals in a row are merged into one entry with a count. A ring is used
 * from the event loop's thread only and takes no lock. */
#ifndef CORRAL_DENIALS_H
#define CORRAL_DENIALS_H

#include <stddef.h>
#include <stdint.h>

struct denial_ring;

#define DENIAL_RING_DEFAULT_ENTRIES 256
/* host, binary and reason are cut to this, NUL included, at a UTF-8
 * character boundary when the text is UTF-8 */
#define DENIAL_TEXT_MAX_BYTES 256

struct denial {
	int64_t ts_us;                  /* the latest occurrence */
	int64_t first_ts_us;            /* the first one merged into this entry */
	char host[DENIAL_TEXT_MAX_BYTES];
	uint16_t port;                  /* 0 when none applies (a DNS refusal) */
	char binary[DENIAL_TEXT_MAX_BYTES];     /* "" when unknown */
	int64_t pid;                    /* of the latest occurrence; -1 when unknown */
	char reason[DENIAL_TEXT_MAX_BYTES];
	uint32_t count;
};

/* A ring keeping the latest ENTRIES refusals; NULL if out of memory or
 * ENTRIES is 0. */
struct denial_ring *denial_ring_new(size_t entries);
void denial_ring_free(struct denial_ring *r);

/* Records a refusal at TS_US (NULL texts are ""). A refusal equal in host,
 * port, binary and reason (as cut) to the newest entry is merged into it,
 * its time kept: count goes up, ts_us and pid become this one's. */
void denial_ring_add(struct denial_ring *r, int64_t ts_us, const char *host, uint16_t port,
    const char *binary, int64_t pid, const char *reason);

/* Copies into OUT (up to MAX entries, oldest first) the refusals at or
 * after SINCE_US, equal ones in a row as one entry: count is exactly how
 * many happened since then, first_ts_us the first of them. Returns how
 * many entries. When more than MAX match, the newest MAX are given. */
size_t denial_ring_since(const struct denial_ring *r, int64_t since_us, struct denial *out,
    size_t max);

#endif
