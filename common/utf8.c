#include "config.h"

#include <string.h>

#include "common/utf8.h"

size_t
utf8_sequence(const unsigned char *s, size_t len)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (len == 0)
		return 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;              /* below: overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;              /* above: surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;              /* below: overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;              /* above: past U+10FFFF */
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

bool
utf8_is_control(const unsigned char *s, size_t n)
{
	if (n == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	if (n == 2)
		return s[0] == 0xc2 && s[1] <= 0x9f;
	return n == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9);
}

bool
utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s), n;

	while (left > 0) {
		if (*p < 0x80)
			n = 1;
		else if ((n = utf8_sequence(p, left)) == 0)
			return false;
		p += n;
		left -= n;
	}
	return true;
}
