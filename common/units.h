/* The units people write for limits: sizes ("512M", "2G", bytes), CPU
 * counts ("0.5", "2", thousandths inside) and shares of a whole ("25%").
 * One parser for the command line and the configuration, so both read a
 * value the same way. Pure: no I/O, no logging. */
#ifndef CORRAL_UNITS_H
#define CORRAL_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UNITS_CPU_DECIMALS 3            /* --cpus 0.125 is 125 thousandths */
#define UNITS_CPU_MAX_MILLI (4096 * 1000)       /* 4096 CPUs */
#define UNITS_SIZE_TEXT_MAX_BYTES 24    /* "1023.9G" and its NUL, with room */

/* A size: decimal digits, then nothing (bytes) or one of K, M, G, T
 * (powers of 1024, either case). 0 and overflow are refused. */
bool units_parse_size(const char *text, uint64_t *bytes);
/* A size, or a share "N%" (1 to 100) of WHOLE bytes. */
bool units_parse_size_or_share(const char *text, uint64_t whole, uint64_t *bytes);
/* A CPU count with at most UNITS_CPU_DECIMALS decimals, into thousandths;
 * above 0 and at most UNITS_CPU_MAX_MILLI. */
bool units_parse_cpus(const char *text, uint32_t *milli);
/* BYTES as the largest unit that keeps one decimal ("11.8G", "64M", "512"). */
void units_format_size(uint64_t bytes, char *out, size_t size);

#endif
