/* Method and path rules of a terminated endpoint (corral-policy(5),
 * "rules"): checking a policy's, and judging a request by them. */
#ifndef CORRAL_POLICY_HTTPRULE_H
#define CORRAL_POLICY_HTTPRULE_H

#include <stdbool.h>

#include "policy/policy.h"

#define HTTPRULE_MAX 64                 /* rules of one endpoint */
#define HTTPRULE_ITEMS_MAX 64           /* methods or paths of one rule */

/* NULL when TEXT is a method a rule may name (one the proxy's request
 * parser reads: GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS), else why
 * not. */
const char *httprule_method_error(const char *text);
/* NULL when TEXT is a path glob a rule may name ("/", or absolute with
 * '*' within a segment and "**" as a whole one, no "." or ".." or empty
 * segment), else why not. */
const char *httprule_path_error(const char *text);

/* Judges the request METHOD TARGET (origin form, as sent) by the rules of
 * E: NULL when it passes, else the reason it is refused:
 * "path_not_canonical" for a target whose path could name another once
 * the upstream decodes it (an encoded '/' or '\', a '\', ';' or '#',
 * plain or encoded, "." or ".." segments after decoding), "method_not_allowed" when no rule names the
 * method, "path_not_allowed" when none that does matches the path. The
 * query is not judged. An endpoint without rules passes everything. */
const char *httprule_judge(const struct policy_endpoint *e, const char *method,
    const char *target);

#endif
