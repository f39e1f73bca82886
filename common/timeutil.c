/* Clocks, RFC 3339 formatting, and parsing of --since arguments. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "common/timeutil.h"

#define TIME_US_PER_S INT64_C(1000000)
#define TIME_NS_PER_US INT64_C(1000)
#define TIME_NS_PER_S INT64_C(1000000000)
#define TIME_FRACTION_MAX_DIGITS 9      /* nanoseconds; kept to microseconds */
#define TIME_DURATION_MAX_DIGITS 18     /* any larger count overflows microseconds anyway */
/* RFC 3339 years have four digits: formatting clamps to 0000..9999. */
#define TIME_RFC3339_MIN_S INT64_C(-62167219200)        /* 0000-01-01T00:00:00Z */
#define TIME_RFC3339_MAX_S INT64_C(253402300799)        /* 9999-12-31T23:59:59Z */

int64_t
time_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * TIME_US_PER_S + ts.tv_nsec / TIME_NS_PER_US;
}

int64_t
time_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * TIME_NS_PER_S + ts.tv_nsec;
}

/* Writes V as exactly WIDTH decimal digits at P; returns the end. */
static char *
time_put_digits(char *p, int v, int width)
{
	for (int i = width - 1; i >= 0; i--) {
		p[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return p + width;
}

/* Splits US into whole seconds and microseconds, rounding toward the past,
 * and clamps it to the four-digit years RFC 3339 can write. */
static void
time_split_us(int64_t us, time_t *secs, int *frac_us)
{
	int64_t s = us / TIME_US_PER_S, f = us % TIME_US_PER_S;

	if (f < 0) {
		f += TIME_US_PER_S;
		s--;
	}
	if (s < TIME_RFC3339_MIN_S) {
		s = TIME_RFC3339_MIN_S;
		f = 0;
	} else if (s > TIME_RFC3339_MAX_S) {
		s = TIME_RFC3339_MAX_S;
		f = TIME_US_PER_S - 1;
	}
	*secs = (time_t)s;
	*frac_us = (int)f;
}

void
time_format_rfc3339_us(int64_t us, char out[RFC3339_US_BYTES])
{
	struct tm tm = { 0 };
	time_t secs;
	int frac_us;
	char *p = out;

	time_split_us(us, &secs, &frac_us);
	gmtime_r(&secs, &tm);
	const struct {
		int value, width;
		char sep;
	} field[] = {
		{ tm.tm_year + 1900, 4, '-' }, { tm.tm_mon + 1, 2, '-' },
		{ tm.tm_mday, 2, 'T' }, { tm.tm_hour, 2, ':' }, { tm.tm_min, 2, ':' },
		{ tm.tm_sec, 2, '.' }, { frac_us, 6, 'Z' },
	};
	for (size_t i = 0; i < sizeof(field) / sizeof(field[0]); i++) {
		p = time_put_digits(p, field[i].value, field[i].width);
		*p++ = field[i].sep;
	}
	*p = '\0';
}

/* Reads exactly N decimal digits at *P into *OUT and advances *P. */
static bool
time_digits(const char **p, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return false;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return true;
}

/* Consumes the character C at *P. */
static bool
time_expect(const char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

static bool
time_is_leap_year(int year)
{
	return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

static int
time_days_in_month(int year, int month)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return month == 2 && time_is_leap_year(year) ? 29 : days[month - 1];
}

/* "YYYY-MM-DD", with the day checked against its month. */
static bool
time_parse_date(const char **p, struct tm *tm)
{
	int year, month, day;

	if (!time_digits(p, 4, &year) || !time_expect(p, '-') ||
	    !time_digits(p, 2, &month) || !time_expect(p, '-') ||
	    !time_digits(p, 2, &day))
		return false;
	if (month < 1 || month > 12 || day < 1 || day > time_days_in_month(year, month))
		return false;
	tm->tm_year = year - 1900;
	tm->tm_mon = month - 1;
	tm->tm_mday = day;
	return true;
}

/* "HH:MM:SS"; a leap second (60) is allowed, as RFC 3339 allows it. */
static bool
time_parse_clock(const char **p, struct tm *tm)
{
	int hour, min, sec;

	if (!time_digits(p, 2, &hour) || !time_expect(p, ':') ||
	    !time_digits(p, 2, &min) || !time_expect(p, ':') ||
	    !time_digits(p, 2, &sec))
		return false;
	if (hour > 23 || min > 59 || sec > 60)
		return false;
	tm->tm_hour = hour;
	tm->tm_min = min;
	tm->tm_sec = sec;
	return true;
}

/* An optional ".D..." of 1 to 9 digits, as microseconds (extra digits dropped). */
static bool
time_parse_fraction(const char **p, int64_t *frac_us)
{
	int64_t scale = TIME_US_PER_S / 10;
	int digits = 0;

	*frac_us = 0;
	if (!time_expect(p, '.'))
		return true;
	for (; **p >= '0' && **p <= '9'; (*p)++, digits++) {
		*frac_us += (**p - '0') * scale;
		scale /= 10;
	}
	return digits >= 1 && digits <= TIME_FRACTION_MAX_DIGITS;
}

/* "Z" (or "z") or "+HH:MM" / "-HH:MM", as seconds east of UTC. */
static bool
time_parse_offset(const char **p, int64_t *offset_s)
{
	int sign, hour, min;

	*offset_s = 0;
	if (time_expect(p, 'Z') || time_expect(p, 'z'))
		return true;
	if (time_expect(p, '+'))
		sign = 1;
	else if (time_expect(p, '-'))
		sign = -1;
	else
		return false;
	if (!time_digits(p, 2, &hour) || !time_expect(p, ':') ||
	    !time_digits(p, 2, &min) || hour > 23 || min > 59)
		return false;
	*offset_s = sign * (hour * 3600 + min * 60);
	return true;
}

/* An RFC 3339 date-time, e.g. "2026-11-29T17:58:31.5+01:00", as microseconds since the epoch. */
static int
time_parse_rfc3339(const char *text, int64_t *out_us)
{
	const char *p = text;
	struct tm tm = { 0 };
	int64_t frac_us, offset_s;
	time_t t;

	if (!time_parse_date(&p, &tm) || !(time_expect(&p, 'T') || time_expect(&p, 't')) ||
	    !time_parse_clock(&p, &tm) || !time_parse_fraction(&p, &frac_us) ||
	    !time_parse_offset(&p, &offset_s) || *p != '\0')
		return -1;
	t = timegm(&tm);
	*out_us = ((int64_t)t - offset_s) * TIME_US_PER_S + frac_us;
	return 0;
}

/* The microseconds in one UNIT of a duration; 0 for an unknown unit. */
static int64_t
time_unit_us(char unit)
{
	switch (unit) {
	case 's':
		return TIME_US_PER_S;
	case 'm':
		return 60 * TIME_US_PER_S;
	case 'h':
		return 3600 * TIME_US_PER_S;
	case 'd':
		return 86400 * TIME_US_PER_S;
	default:
		return 0;
	}
}

/* A duration back from NOW_US: a positive count of digits and one unit
 * ("30s", "5m", "2h", "1d"); no sign, no spaces, no overflow. */
static int
time_parse_duration(const char *text, int64_t now_us, int64_t *out_us)
{
	size_t ndigits = strspn(text, "0123456789");
	int64_t count = 0, unit_us, back_us;

	if (ndigits == 0 || ndigits > TIME_DURATION_MAX_DIGITS)
		return -1;
	unit_us = time_unit_us(text[ndigits]);
	if (unit_us == 0 || text[ndigits + 1] != '\0')
		return -1;
	for (size_t i = 0; i < ndigits; i++)
		count = count * 10 + (text[i] - '0');
	if (count == 0 || __builtin_mul_overflow(count, unit_us, &back_us) ||
	    __builtin_sub_overflow(now_us, back_us, out_us))
		return -1;
	return 0;
}

int
time_parse_since(const char *text, int64_t now_us, int64_t *out_us)
{
	int64_t us;

	if (text == NULL || *text == '\0')
		return -1;
	if (time_parse_duration(text, now_us, &us) == -1 &&
	    time_parse_rfc3339(text, &us) == -1)
		return -1;
	*out_us = us;
	return 0;
}
