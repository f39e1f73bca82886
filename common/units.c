/* The units people write for limits; see units.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/units.h"

#define UNITS_SHARE_MAX 100             /* "100%" */

/* The power of two a size suffix stands for (K, M, G, T); -1 for none known. */
static int
units_shift(char suffix)
{
	switch (suffix) {
	case '\0': return 0;
	case 'K': case 'k': return 10;
	case 'M': case 'm': return 20;
	case 'G': case 'g': return 30;
	case 'T': case 't': return 40;
	default: return -1;
	}
}

bool
units_parse_size(const char *text, uint64_t *bytes)
{
	unsigned long long v;
	char *end;
	int shift;

	if (text == NULL || text[0] < '0' || text[0] > '9')
		return false;
	errno = 0;
	v = strtoull(text, &end, 10);
	shift = end[0] != '\0' && end[1] != '\0' ? -1 : units_shift(end[0]);
	if (errno != 0 || shift < 0 || v == 0 || v > (UINT64_MAX >> shift))
		return false;
	*bytes = (uint64_t)v << shift;
	return true;
}

bool
units_parse_size_or_share(const char *text, uint64_t whole, uint64_t *bytes)
{
	unsigned long v;
	char *end;

	if (text == NULL || text[0] < '0' || text[0] > '9')
		return false;
	errno = 0;
	v = strtoul(text, &end, 10);
	if (end[0] == '%' && end[1] == '\0') {
		if (errno != 0 || v == 0 || v > UNITS_SHARE_MAX || whole == 0)
			return false;
		*bytes = whole / UNITS_SHARE_MAX * v + whole % UNITS_SHARE_MAX * v / UNITS_SHARE_MAX;
		return *bytes > 0;
	}
	return units_parse_size(text, bytes);
}

bool
units_parse_cpus(const char *text, uint32_t *milli)
{
	uint64_t v = 0;
	int decimals = -1, digits = 0;

	if (text == NULL)
		return false;
	for (const char *p = text; *p != '\0'; p++) {
		if (*p == '.' && decimals < 0) {
			decimals = 0;
			continue;
		}
		if (*p < '0' || *p > '9' || decimals == UNITS_CPU_DECIMALS ||
		    v > UNITS_CPU_MAX_MILLI)
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
		digits++;
		decimals += decimals >= 0;
	}
	for (decimals = decimals < 0 ? 0 : decimals; decimals < UNITS_CPU_DECIMALS; decimals++)
		v *= 10;
	if (digits == 0 || v == 0 || v > UNITS_CPU_MAX_MILLI)
		return false;
	*milli = (uint32_t)v;
	return true;
}

void
units_format_size(uint64_t bytes, char *out, size_t size)
{
	static const char units[] = "KMGT";
	int i = -1;
	double v = (double)bytes;

	while (v >= 1024 && i < 3) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(out, size, "%llu", (unsigned long long)bytes);
	else if (v == (double)(uint64_t)v)
		snprintf(out, size, "%llu%c", (unsigned long long)v, units[i]);
	else
		snprintf(out, size, "%.1f%c", v, units[i]);
}
