/* UTF-8 as the ledger, JSON output and policy files take it: no overlong
 * form, no surrogate (U+D800..U+DFFF), nothing past U+10FFFF. */
#ifndef CORRAL_UTF8_H
#define CORRAL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The length of the valid sequence of two or more bytes at S (LEN bytes
 * left), or 0 when S does not start one. */
size_t utf8_sequence(const unsigned char *s, size_t len);
/* True when the NUL-ended S is UTF-8 throughout. */
bool utf8_valid(const char *s);

#endif
