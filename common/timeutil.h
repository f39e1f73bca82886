/* Clocks and time formats shared by the daemon, the CLI and the ledger. */
#ifndef CORRAL_TIMEUTIL_H
#define CORRAL_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>

#define RFC3339_US_BYTES 32     /* "2026-11-29T17:58:31.123456Z" and its NUL */

/* Microseconds since the epoch (CLOCK_REALTIME). */
int64_t time_now_us(void);
/* Nanoseconds of CLOCK_MONOTONIC, for durations and deadlines. */
int64_t time_mono_ns(void);

/* Formats US (microseconds since the epoch) as RFC 3339 UTC with microseconds;
 * times outside the years 0000..9999 are clamped to them. */
void time_format_rfc3339_us(int64_t us, char out[RFC3339_US_BYTES]);

/* Parses a --since argument: an RFC 3339 time ("2026-11-29T17:58:31Z",
 * 'T' or 't', a fraction of up to 9 digits kept to microseconds, 'Z' or 'z'
 * or "+HH:MM"/"-HH:MM") or a duration back from NOW_US: a positive count and
 * one unit of s, m, h or d ("30s", "5m", "2h", "1d"). Returns 0 and sets
 * *OUT_US, or -1 (*OUT_US untouched) when TEXT is neither or overflows. */
int time_parse_since(const char *text, int64_t now_us, int64_t *out_us);

#endif
