/* Text from others made safe to print on a terminal: every control byte
 * (below 0x20, and DEL) becomes \xHH and a backslash \\, so a label, a
 * session id or a path cannot break a line, forge one, or send escapes
 * to the terminal of the person reading it. Bytes from 0x80 up pass as
 * they are (UTF-8). Pure. */
#ifndef CORRAL_VISIBLE_H
#define CORRAL_VISIBLE_H

#include <stddef.h>

#define VISIBLE_EXPANSION 4             /* a byte takes at most four: \xHH */

/* Writes IN into OUT (SIZE bytes, NUL included), escaped; what does not
 * fit is cut, never half an escape. Returns OUT. */
char *visible_copy(const char *in, char *out, size_t size);

#endif
