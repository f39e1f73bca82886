/* Fuzz target for policy/httprule: the input is a method, a NUL, and a
 * request target, judged by fixed rules. Aborts when a target passes that
 * an upstream could read as a path outside them: one with an encoded '/'
 * or '\', a '\', ';' or '#', an encoded '%', an overlong UTF-8 lead byte, a
 * "." or ".." segment (plain or encoded), or a path that does not start
 * with an allowed prefix. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/httprule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char m_get[] = "GET", p_acme[] = "/repos/acme/**", p_zen[] = "/zen", p_root[] = "/";
static char *get[] = { m_get }, *acme[] = { p_acme }, *zen[] = { p_zen, p_root };
static struct policy_http_rule rules[] = {
	{ { get, 1 }, { acme, 1 }, 0, 0 },
	{ { NULL, 0 }, { zen, 2 }, 0, 0 },
};
static const struct policy_endpoint endpoint = { .tls = POLICY_TLS_TERMINATE,
	.http_rules = rules, .nhttp_rules = 2 };

/* True when TARGET's path (up to '?' or '#') holds S, case aside. */
static bool
fuzz_path_holds(const char *target, const char *s)
{
	size_t end = strcspn(target, "?#"), len = strlen(s);

	for (size_t i = 0; i + len <= end; i++)
		if (strncasecmp(target + i, s, len) == 0)
			return true;
	return false;
}

static bool
fuzz_dot_segment(const char *target)
{
	static const char *const dots[] = { "/./", "/../", "/%2e/", "/%2e%2e/", "/.%2e/", "/%2e./" };
	size_t end = strcspn(target, "?#");
	char path[4096];

	if (end + 2 > sizeof(path))
		return false;
	/* The path with a '/' at its end, so that a last segment counts too. */
	memcpy(path, target, end);
	path[end] = '/';
	path[end + 1] = '\0';
	for (size_t i = 0; i < sizeof(dots) / sizeof(dots[0]); i++)
		if (fuzz_path_holds(path, dots[i]))
			return true;
	return false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *method, *target;
	char *copy;

	if (size > 4096 || (copy = malloc(size + 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	method = copy;
	target = memchr(copy, '\0', size) != NULL && strlen(copy) < size ?
	    copy + strlen(copy) + 1 : "";
	if (httprule_judge(&endpoint, method, target) == NULL) {
		if (fuzz_path_holds(target, "%2f") || fuzz_path_holds(target, "%5c") ||
		    fuzz_path_holds(target, "\\") || fuzz_path_holds(target, "//") ||
		    fuzz_path_holds(target, ";") || fuzz_path_holds(target, "%3b") ||
		    fuzz_path_holds(target, "%23") || fuzz_path_holds(target, "%25") ||
		    fuzz_path_holds(target, "%c0") || fuzz_path_holds(target, "%c1") ||
		    fuzz_dot_segment(target))
			abort();
		if (strncmp(target, "/repos/acme", 11) != 0 && strncmp(target, "/repos/%61cme", 13) != 0 &&
		    strncasecmp(target, "/zen", 4) != 0 && strcspn(target, "?#") != 1 &&
		    target[0] != '/')
			abort();
	}
	free(copy);
	return 0;
}
