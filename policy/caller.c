/* Checks a non-root caller's policy against the roots it was given. */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/caller.h"

#define CALLER_RUNTIME_DEFAULT LIBEXECDIR "/corral"

/* The system directories every sandbox sees: a caller may name them, since
 * the mounts make them read-only or private anyway (corral-policy(5),
 * "RENDERED POLICIES"). */
static const char *const caller_baseline[] = {
	"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
	"/etc", "/opt", "/tmp", "/dev", "/proc",
};
#define CALLER_BASELINE_COUNT (sizeof(caller_baseline) / sizeof(caller_baseline[0]))

bool
caller_path_within(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	if (dir[0] != '/' || path[0] != '/')
		return false;           /* only absolute paths can be within */
	while (len > 0 && dir[len - 1] == '/')
		len--;
	if (len == 0)
		return true;            /* "/" holds every absolute path */
	if (strncmp(path, dir, len) != 0)
		return false;
	return path[len] == '\0' || path[len] == '/';
}

void
caller_report_clear(struct caller_report *report)
{
	size_t i;

	for (i = 0; i < report->nmessages; i++)
		free(report->messages[i]);
	free(report->messages);
	report->messages = NULL;
	report->nmessages = 0;
}

static int caller_add(struct caller_report *report, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends one formatted message; -1 when memory runs out. */
static int
caller_add(struct caller_report *report, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL, **grown;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	grown = reallocarray(report->messages, report->nmessages + 1, sizeof(*grown));
	if (grown == NULL) {
		free(msg);
		return -1;
	}
	grown[report->nmessages++] = msg;
	report->messages = grown;
	return 0;
}

/* True when PATH lies within a root, the baseline or the runtime. */
static bool
caller_path_allowed(const char *path, const char *const *roots, size_t nroots,
    const char *runtime_dir)
{
	size_t i;

	for (i = 0; i < nroots; i++)
		if (caller_path_within(path, roots[i]))
			return true;
	for (i = 0; i < CALLER_BASELINE_COUNT; i++)
		if (caller_path_within(path, caller_baseline[i]))
			return true;
	return caller_path_within(path, runtime_dir);
}

/* Adds a message for every path of LIST (named KEY) outside what is allowed. */
static int
caller_check_paths(const struct policy_paths *list, const char *key,
    const char *const *roots, size_t nroots, const char *runtime_dir,
    struct caller_report *report)
{
	size_t i;

	for (i = 0; i < list->npaths; i++) {
		if (caller_path_allowed(list->paths[i], roots, nroots, runtime_dir))
			continue;
		/* A path outside the roots would show the caller files its
		 * sandbox was not given: the roots are the whole grant. */
		if (caller_add(report, "filesystem_policy.%s: %s is outside the "
		    "sandbox's roots and the system directories (a policy from a "
		    "non-root caller may name only paths within its roots)",
		    key, list->paths[i]) < 0)
			return -1;
	}
	return 0;
}

/* Where a non-root caller may not name a socket: the kernel's and other
 * processes' objects (/proc/PID/fd/N, /proc/PID/root/...), whose reach is
 * not the caller's own file access, and corral's runtime. */
static const char *const caller_socket_refused[] = { "/proc", "/sys", "/dev" };
#define CALLER_SOCKET_REFUSED_COUNT (sizeof(caller_socket_refused) / sizeof(caller_socket_refused[0]))

/* Adds a message for every listed socket of P a non-root caller may not
 * name. Whether the caller may connect to the rest is checked when the
 * sandbox is made, by opening each with the caller's rights. */
static int
caller_check_sockets(const struct policy *p, const char *runtime_dir,
    struct caller_report *report)
{
	for (size_t i = 0; i < p->nunix_sockets; i++) {
		const char *path = p->unix_sockets[i].path, *where = NULL;

		for (size_t j = 0; j < CALLER_SOCKET_REFUSED_COUNT && where == NULL; j++)
			if (caller_path_within(path, caller_socket_refused[j]))
				where = caller_socket_refused[j];
		if (where == NULL && caller_path_within(path, runtime_dir))
			where = runtime_dir;
		if (where != NULL && caller_add(report, "filesystem_policy.unix_sockets: %s is "
		    "within %s (a policy from a non-root caller may name only sockets it "
		    "reaches through its own files)", path, where) < 0)
			return -1;
	}
	return 0;
}

enum caller_result
caller_check(const struct policy *p, const char *const *roots, size_t nroots,
    const char *runtime_dir, struct caller_report *report)
{
	const char *runtime = runtime_dir != NULL ? runtime_dir : CALLER_RUNTIME_DEFAULT;

	caller_report_clear(report);
	/* A non-root caller's sandbox runs as the caller; process: would
	 * let it pick another user. */
	if (p->has_process && caller_add(report, "process: a policy from a "
	    "non-root caller may not set process (the sandbox runs as the "
	    "caller); remove the section") < 0)
		goto nomem;
	if (caller_check_paths(&p->read_only, "read_only", roots, nroots,
	    runtime, report) < 0)
		goto nomem;
	if (caller_check_paths(&p->read_write, "read_write", roots, nroots,
	    runtime, report) < 0)
		goto nomem;
	if (caller_check_sockets(p, runtime, report) < 0)
		goto nomem;
	return report->nmessages > 0 ? CALLER_REFUSED : CALLER_OK;
nomem:
	caller_report_clear(report);
	return CALLER_ERR_NOMEM;
}
