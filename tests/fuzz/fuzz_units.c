/* Fuzz target for common/units, the sizes, shares and CPU counts of the
 * command line and the configuration (corral sandbox create --memory,
 * corrald.yaml's limits). The input, cut at its first NUL, is read by
 * each parser; each answer is checked against a plain reading of the
 * header's grammar, done here in wider arithmetic:
 * - a size is decimal digits and at most one of K, M, G, T (either case),
 *   above 0 and at most 2^64 - 1 bytes;
 * - a share is 1 to 100 digits' worth of percent of the whole, rounded
 *   down, and refused when that is 0;
 * - a CPU count has at most three decimals, above 0, at most 4096 CPUs.
 * units_format_size() must fit UNITS_SIZE_TEXT_MAX_BYTES, and a size
 * below 2^53 it writes without a decimal must read back as the same
 * bytes. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_TEXT_MAX_BYTES 256
#define FUZZ_SHARE_MAX 100
#define FUZZ_EXACT_DOUBLE (1ull << 53)        /* every integer below is a double */

typedef unsigned __int128 fuzz_u128;

/* The shift of a size suffix, -1 for none known. */
static int
fuzz_shift(char c)
{
	const char *units = "KkMmGgTt", *p;

	if (c == '\0')
		return 0;
	p = strchr(units, c);
	return p != NULL ? 10 * (int)(1 + (p - units) / 2) : -1;
}

/* Reads the leading digits of S into *V (saturating above 2^64) and
 * returns the first byte after them. */
static const char *
fuzz_digits(const char *s, fuzz_u128 *v)
{
	*v = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		*v = *v * 10 + (fuzz_u128)(*s - '0');
		if (*v > UINT64_MAX)
			*v = (fuzz_u128)UINT64_MAX + 1;
	}
	return s;
}

/* The header's grammar for a size: true and *BYTES when TEXT is one. */
static bool
fuzz_ref_size(const char *text, uint64_t *bytes)
{
	fuzz_u128 v;
	const char *end = fuzz_digits(text, &v);
	int shift;

	if (end == text || (end[0] != '\0' && end[1] != '\0'))
		return false;
	shift = fuzz_shift(end[0]);
	if (shift < 0 || v == 0 || v > UINT64_MAX || (v << shift) > UINT64_MAX)
		return false;
	*bytes = (uint64_t)(v << shift);
	return true;
}

/* The same for a size or "N%" of WHOLE. */
static bool
fuzz_ref_share(const char *text, uint64_t whole, uint64_t *bytes)
{
	fuzz_u128 v;
	const char *end = fuzz_digits(text, &v);

	if (end == text || end[0] != '%' || end[1] != '\0')
		return fuzz_ref_size(text, bytes);
	if (v == 0 || v > FUZZ_SHARE_MAX || whole == 0)
		return false;
	*bytes = (uint64_t)((fuzz_u128)whole * v / FUZZ_SHARE_MAX);
	return *bytes > 0;
}

/* The same for a CPU count, into thousandths. */
static bool
fuzz_ref_cpus(const char *text, uint32_t *milli)
{
	fuzz_u128 whole, frac = 0;
	const char *end = fuzz_digits(text, &whole), *dot = end;
	size_t decimals = 0;

	if (*end == '.') {
		dot = fuzz_digits(end + 1, &frac);
		decimals = (size_t)(dot - end - 1);
	}
	if (*dot != '\0' || (end == text && decimals == 0) || decimals > UNITS_CPU_DECIMALS)
		return false;
	for (size_t i = decimals; i < UNITS_CPU_DECIMALS; i++)
		frac *= 10;
	if (whole > UNITS_CPU_MAX_MILLI)
		return false;
	whole = whole * 1000 + frac;
	if (whole == 0 || whole > UNITS_CPU_MAX_MILLI)
		return false;
	*milli = (uint32_t)whole;
	return true;
}

/* Formats BYTES and reads it back when it has no decimal. */
static void
fuzz_check_format(uint64_t bytes)
{
	char out[UNITS_SIZE_TEXT_MAX_BYTES + 16];
	uint64_t again = 0;

	memset(out, 'x', sizeof(out));
	units_format_size(bytes, out, sizeof(out));
	if (memchr(out, '\0', sizeof(out)) == NULL || strlen(out) >= UNITS_SIZE_TEXT_MAX_BYTES)
		abort();
	/* Exactly: below 2^53 the division by powers of 1024 in a double is
	 * exact (above it the text is rounded, as a display may be). */
	if (bytes > 0 && bytes < FUZZ_EXACT_DOUBLE && strchr(out, '.') == NULL &&
	    (!units_parse_size(out, &again) || again != bytes))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t wholes[] = { 1, 99, 100, 8ull << 30, UINT64_MAX };
	char text[FUZZ_TEXT_MAX_BYTES + 1];
	uint64_t got = 0, want = 0;
	uint32_t milli = 0, want_milli = 0;
	size_t n = size < FUZZ_TEXT_MAX_BYTES ? size : FUZZ_TEXT_MAX_BYTES;
	bool ok;

	memcpy(text, data, n);
	text[n] = '\0';
	ok = units_parse_size(text, &got);
	if (ok != fuzz_ref_size(text, &want) || (ok && got != want))
		abort();
	if (ok)
		fuzz_check_format(got);
	for (size_t i = 0; i < sizeof(wholes) / sizeof(wholes[0]); i++) {
		ok = units_parse_size_or_share(text, wholes[i], &got);
		if (ok != fuzz_ref_share(text, wholes[i], &want) || (ok && got != want))
			abort();
	}
	ok = units_parse_cpus(text, &milli);
	if (ok != fuzz_ref_cpus(text, &want_milli) || (ok && milli != want_milli))
		abort();
	/* Any number formats; the input's first eight bytes make one. */
	if (size >= sizeof(got)) {
		memcpy(&got, data, sizeof(got));
		fuzz_check_format(got);
	}
	return 0;
}
