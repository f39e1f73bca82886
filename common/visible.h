/* Text from others made safe to print on a terminal: every control byte
 * (below 0x20, and DEL), every C1 control (U+0080..U+009F, the UTF-8
 * bytes C2 80..C2 9F) and every byte of no well-formed UTF-8 sequence
 * becomes \xHH, and a backslash \\, so a label, a session id, a host name
 * or a path cannot break a line, forge one, or send escapes to the
 * terminal of the person reading it. Other UTF-8 passes as it is. Pure. */
#ifndef CORRAL_VISIBLE_H
#define CORRAL_VISIBLE_H

#include <stddef.h>
#include <stdio.h>

#define VISIBLE_EXPANSION 4             /* a byte takes at most four: \xHH */

/* Writes IN into OUT (SIZE bytes, NUL included), escaped; what does not
 * fit is cut, never half an escape nor half a UTF-8 sequence. Returns OUT. */
char *visible_copy(const char *in, char *out, size_t size);

/* Writes the JSON text S (LEN bytes) to OUT with DEL and the C1 controls
 * written as \u007f and \u0080..\u009f: JSON lets a string hold them as
 * they are, a terminal must not get them, and outside a string they are
 * no JSON anyway. Returns 0, or -1 when the write failed. */
int visible_json_write(const char *s, size_t len, FILE *out);

#endif
