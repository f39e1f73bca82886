/* UTF-8 as the ledger, JSON output and policy files take it: no overlong
 * form, no surrogate (U+D800..U+DFFF), nothing past U+10FFFF. */
#ifndef CORRAL_UTF8_H
#define CORRAL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The length of the valid sequence of two or more bytes at S (LEN bytes
 * left), or 0 when S does not start one. */
size_t utf8_sequence(const unsigned char *s, size_t len);
/* True when the character at S (N bytes, ASCII or a valid sequence) is a
 * control: C0, DEL, C1 (U+0080..U+009F, NEL among them), or one of the
 * line and paragraph separators U+2028 and U+2029 that some readers
 * (YAML, JavaScript) take for line breaks. */
bool utf8_is_control(const unsigned char *s, size_t n);
/* True when the NUL-ended S is UTF-8 throughout. */
bool utf8_valid(const char *s);

#endif
