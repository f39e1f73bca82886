/* Text from others made safe to print; see visible.h. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/utf8.h"
#include "common/visible.h"

/* Writes into ESC how the character at P is shown and returns how many
 * bytes of P it takes; *SHOWN is the length of ESC. */
static size_t
visible_next(const unsigned char *p, char esc[VISIBLE_EXPANSION * 4], size_t *shown)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 1;

	if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
		esc[0] = (char)*p;
		*shown = 1;
		return 1;
	}
	if (*p == '\\') {
		esc[0] = esc[1] = '\\';
		*shown = 2;
		return 1;
	}
	if (*p >= 0x80 && (n = utf8_sequence(p, strnlen((const char *)p, 4))) != 0) {
		/* U+0080..U+009F are the C1 controls: a terminal may obey them
		 * (U+009B is CSI, as ESC [ is). Everything else goes as it is. */
		if (!(n == 2 && p[0] == 0xc2 && p[1] <= 0x9f)) {
			memcpy(esc, p, n);
			*shown = n;
			return n;
		}
	} else {
		n = 1;                  /* C0, DEL, or a byte of no well-formed sequence */
	}
	for (size_t i = 0; i < n; i++) {
		esc[4 * i] = '\\';
		esc[4 * i + 1] = 'x';
		esc[4 * i + 2] = hex[p[i] >> 4];
		esc[4 * i + 3] = hex[p[i] & 15];
	}
	*shown = 4 * n;
	return n;
}

char *
visible_copy(const char *in, char *out, size_t size)
{
	const unsigned char *p = (const unsigned char *)(in != NULL ? in : "");
	size_t o = 0;

	if (size == 0)
		return out;
	while (*p != '\0') {
		char esc[VISIBLE_EXPANSION * 4];
		size_t shown, n = visible_next(p, esc, &shown);

		if (o + shown >= size)
			break;
		memcpy(out + o, esc, shown);
		o += shown;
		p += n;
	}
	out[o] = '\0';
	return out;
}

int
visible_json_write(const char *s, size_t len, FILE *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t run = 0, i = 0;

	while (i < len) {
		unsigned int c;
		size_t n;

		if (u[i] == 0x7f) {
			c = 0x7f;
			n = 1;
		} else if (u[i] == 0xc2 && i + 1 < len && u[i + 1] >= 0x80 && u[i + 1] <= 0x9f) {
			c = u[i + 1];
			n = 2;
		} else {
			run++;
			i++;
			continue;
		}
		if (run > 0 && fwrite(s + i - run, 1, run, out) != run)
			return -1;
		run = 0;
		if (fprintf(out, "\\u%04x", c) < 0)
			return -1;
		i += n;
	}
	if (run > 0 && fwrite(s + i - run, 1, run, out) != run)
		return -1;
	return ferror(out) ? -1 : 0;
}
