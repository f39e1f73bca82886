/* Text from others made safe to print; see visible.h. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/visible.h"

char *
visible_copy(const char *in, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (size == 0)
		return out;
	for (const unsigned char *p = (const unsigned char *)(in != NULL ? in : ""); *p != '\0'; p++) {
		char esc[VISIBLE_EXPANSION + 1];
		size_t n;

		if (*p < 0x20 || *p == 0x7f) {
			esc[0] = '\\'; esc[1] = 'x'; esc[2] = hex[*p >> 4]; esc[3] = hex[*p & 15];
			n = 4;
		} else if (*p == '\\') {
			esc[0] = esc[1] = '\\';
			n = 2;
		} else {
			esc[0] = (char)*p;
			n = 1;
		}
		if (o + n >= size)
			break;
		memcpy(out + o, esc, n);
		o += n;
	}
	out[o] = '\0';
	return out;
}
