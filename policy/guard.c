/* The write guard: refuse, with a clear message, the paths that name a
 * place outside the workspace. */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/guard.h"

static bool
guard_is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* The offset of the first control byte of PATH, or -1. */
static long
guard_control_offset(const char *path)
{
	size_t i;

	for (i = 0; path[i] != '\0'; i++)
		if (guard_is_control((unsigned char)path[i]))
			return (long)i;
	return -1;
}

/* True when some '/'-separated segment of PATH is exactly "..". */
static bool
guard_has_dotdot(const char *path)
{
	const char *seg = path;
	size_t len;

	for (;;) {
		len = strcspn(seg, "/");
		if (len == 2 && seg[0] == '.' && seg[1] == '.')
			return true;
		if (seg[len] == '\0')
			return false;
		seg += len + 1;
	}
}

enum guard_verdict
guard_check(const char *path)
{
	if (path == NULL || path[0] == '\0')
		return GUARD_REFUSE_EMPTY;
	/* Control bytes first: they would also garble the message. */
	if (guard_control_offset(path) >= 0)
		return GUARD_REFUSE_CONTROL;
	if (path[0] == '/')
		return GUARD_REFUSE_ABSOLUTE;
	if (guard_has_dotdot(path))
		return GUARD_REFUSE_DOTDOT;
	return GUARD_ALLOW;
}

static char *guard_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *
guard_format(const char *fmt, ...)
{
	va_list ap;
	char *out = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&out, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : out;
}

char *
guard_message(enum guard_verdict verdict, const char *deny_reason,
    const char *root, const char *path)
{
	const char *reason = deny_reason != NULL ? deny_reason : GUARD_DENY_REASON_DEFAULT;
	const char *r = root != NULL ? root : "";
	size_t rlen = strlen(r);
	const char *slash = rlen > 0 && r[rlen - 1] == '/' ? "" : "/";
	long bad = path != NULL ? guard_control_offset(path) : -1;

	switch (verdict) {
	case GUARD_ALLOW:
		return NULL;
	case GUARD_REFUSE_EMPTY:
		return guard_format("%s The path is empty.", reason);
	case GUARD_REFUSE_CONTROL:
		/* The path itself is not echoed: it holds control bytes. */
		if (bad < 0)
			return NULL;
		return guard_format("%s The path holds a control character "
		    "(0x%02x at byte %ld).", reason, (unsigned char)path[bad], bad);
	case GUARD_REFUSE_ABSOLUTE:
	case GUARD_REFUSE_DOTDOT:
		break;
	}
	if (path == NULL || bad >= 0)
		return NULL;
	return guard_format("%s outside %s%s: %s", reason, r, slash, path);
}
