/* One-line reasons; see reason.h. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/reason.h"

int
reason_set(char **reason, const char *fmt, ...)
{
	va_list ap;

	if (reason == NULL)
		return -1;
	free(*reason);
	va_start(ap, fmt);
	if (vasprintf(reason, fmt, ap) == -1)
		*reason = NULL;
	va_end(ap);
	return -1;
}
