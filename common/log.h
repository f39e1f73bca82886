/* Logging for the daemon and the CLI: stderr in the foreground, syslog otherwise. */
#ifndef CORRAL_LOG_H
#define CORRAL_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/* Sets the program name, the destination and the most verbose level kept. */
void log_init(const char *ident, int to_stderr, enum log_level level);

/* Changes the most verbose level kept. */
void log_set_level(enum log_level level);

/* Writes one line at LEVEL; control characters in the result are escaped. */
void log_msg(enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level level, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warnx(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

/* Logs a broken invariant or a failed privileged step, then exits 1.
 * fatal() appends strerror(errno); fatalx() does not. */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
