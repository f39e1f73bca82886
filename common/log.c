/* Logging: one line per message, escaped, to stderr or syslog. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "common/log.h"

#define LOG_LINE_MAX_BYTES 2048

static const char *log_ident = "corral";
static int log_to_stderr = 1;
static enum log_level log_max_level = LOG_LEVEL_INFO;

static const int log_syslog_priority[] = {
	[LOG_LEVEL_ERROR] = LOG_ERR,
	[LOG_LEVEL_WARN] = LOG_WARNING,
	[LOG_LEVEL_INFO] = LOG_INFO,
	[LOG_LEVEL_DEBUG] = LOG_DEBUG,
};

static const char *const log_level_name[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warning",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

void
log_init(const char *ident, int to_stderr, enum log_level level)
{
	log_ident = ident;
	log_to_stderr = to_stderr;
	log_max_level = level;
	if (!to_stderr)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_set_level(enum log_level level)
{
	log_max_level = level;
}

/* Replaces control characters so that a logged name cannot forge a line. */
static void
log_escape_controls(char *line)
{
	for (unsigned char *p = (unsigned char *)line; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
}

void
log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX_BYTES];
	int saved_errno = errno;

	if (level > log_max_level)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	log_escape_controls(line);
	if (log_to_stderr)
		fprintf(stderr, "%s: %s%s%s\n", log_ident,
		    level == LOG_LEVEL_INFO ? "" : log_level_name[level],
		    level == LOG_LEVEL_INFO ? "" : ": ", line);
	else
		syslog(log_syslog_priority[level], "%s", line);
	errno = saved_errno;
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	char line[LOG_LINE_MAX_BYTES];
	int saved_errno = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_msg(LOG_LEVEL_ERROR, "fatal: %s: %s", line, strerror(saved_errno));
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LEVEL_ERROR, fmt, ap);
	va_end(ap);
	exit(1);
}
