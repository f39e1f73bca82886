/* Method and path rules of a terminated endpoint (httprule.h). */
#include "config.h"

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "common/hex.h"
#include "policy/httprule.h"
#include "policy/match.h"

#define HTTPRULE_PATH_MAX_BYTES 4096

/* The methods the proxy's request parser reads: any other is refused
 * before a rule is asked, so a rule naming it could never match. */
static const char *const httprule_methods[] = { "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH",
	"OPTIONS" };

const char *
httprule_method_error(const char *text)
{
	for (size_t i = 0; i < sizeof(httprule_methods) / sizeof(httprule_methods[0]); i++)
		if (strcmp(text, httprule_methods[i]) == 0)
			return NULL;
	return "is not a method the proxy reads (GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS)";
}

static bool httprule_glob_encodings_ok(const char *glob);

const char *
httprule_path_error(const char *text)
{
	if (strcmp(text, "/") == 0)
		return NULL;
	if (text[0] != '/')
		return "is not absolute (it starts with '/')";
	if (strchr(text, '?') != NULL || strchr(text, '#') != NULL)
		return "holds '?' or '#': rules judge the path, never the query";
	if (match_binary_check(text) != MATCH_OK)
		return "has an empty, '.' or '..' segment, a trailing '/', or '**' inside a segment";
	if (!httprule_glob_encodings_ok(text))
		return "has a '%' that is not, in capitals, the encoding of a character that must "
		    "stay encoded (write letters, digits and -._~ as they are)";
	return NULL;
}

/* Letters, digits and "-._~": their encoded form means the same (RFC
 * 3986, 2.3), and is decoded before matching. */
static bool
httprule_unreserved(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '-' || c == '.' || c == '_' || c == '~';
}

/* True when no segment of PATH (absolute) is empty, "." or "..". */
static bool
httprule_segments_ok(const char *path)
{
	const char *seg = path + 1, *end;

	if (path[1] == '\0')
		return true;
	for (;;) {
		size_t len;

		end = strchr(seg, '/');
		len = end != NULL ? (size_t)(end - seg) : strlen(seg);
		if (len == 0 || (len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' &&
		    seg[1] == '.'))
			return false;
		if (end == NULL)
			return true;
		seg = end + 1;
	}
}

/* True for a byte no decoded path may hold: '/' and '\' (another
 * segment), ';' and '#' (see httprule_path), NUL, '%' (an encoding
 * encoded, which a server that decodes twice reads otherwise), and the
 * lead bytes of overlong UTF-8 (0xc0, 0xc1: "%c0%ae" is '.' to some). */
static bool
httprule_decoded_bad(unsigned char c)
{
	return c == '/' || c == '\\' || c == ';' || c == '#' || c == '\0' || c == '%' ||
	    c == 0xc0 || c == 0xc1;
}

/* True when every '%' of GLOB begins an encoding as requests are matched:
 * two hex digits in capitals, of a character that stays encoded. */
static bool
httprule_glob_encodings_ok(const char *glob)
{
	for (const char *p = strchr(glob, '%'); p != NULL; p = strchr(p + 1, '%')) {
		int hi = hex_digit(p[1]), lo = hi < 0 ? -1 : hex_digit(p[2]);
		char c = (char)(hi * 16 + lo);

		if (lo < 0 || islower((unsigned char)p[1]) || islower((unsigned char)p[2]) ||
		    httprule_unreserved(c) || httprule_decoded_bad((unsigned char)c))
			return false;
	}
	return true;
}

/* The path of TARGET into OUT (SIZE bytes) as the upstream will read it:
 * up to the query, unreserved characters decoded, other encodings kept in
 * capitals; one trailing '/' is left out and said in *TRAILING. False when
 * it could name another path once decoded, or where servers disagree: a
 * '#' (never valid in a target, kept in the path by some), a ';' (path
 * parameters: "/public/..;/admin" is "/admin" to some servers), a '\'. */
static bool
httprule_path(const char *target, char *out, size_t size, bool *trailing)
{
	static const char digits[] = "0123456789ABCDEF";
	size_t o = 0;

	if (target[0] != '/')
		return false;           /* "*", or a form no origin server is sent */
	for (const char *p = target; *p != '\0' && *p != '?'; p++) {
		int hi, lo;
		char c = *p;

		if (o + 4 > size || c == '\\' || c == ';' || c == '#')
			return false;
		if (c != '%') {
			out[o++] = c;
			continue;
		}
		if ((hi = hex_digit(p[1])) < 0 || (lo = hex_digit(p[2])) < 0)
			return false;
		c = (char)(hi * 16 + lo);
		if (httprule_decoded_bad((unsigned char)c))
			return false;
		if (httprule_unreserved(c)) {
			out[o++] = c;
		} else {
			out[o++] = '%';
			out[o++] = digits[hi];
			out[o++] = digits[lo];
		}
		p += 2;
	}
	/* "/a/" is judged as "/a", by folder rules only; "//" keeps its
	 * empty segment. */
	*trailing = o > 2 && out[o - 1] == '/' && out[o - 2] != '/';
	if (*trailing)
		o--;
	out[o] = '\0';
	return httprule_segments_ok(out);
}

static bool
httprule_has(const struct policy_paths *list, const char *s)
{
	for (size_t i = 0; i < list->npaths; i++)
		if (strcmp(list->paths[i], s) == 0)
			return true;
	return false;
}

/* True when PATH matches a glob of GLOBS. A glob that ends in a slash and
 * two stars matches its folder itself too (a collection and what is under
 * it), which a binary glob would not; a path sent with a trailing slash
 * (TRAILING) is a folder, and only such a glob matches it. */
static bool
httprule_path_matches(const struct policy_paths *globs, const char *path, bool trailing)
{
	for (size_t i = 0; i < globs->npaths; i++) {
		const char *g = globs->paths[i];
		size_t len = strlen(g);

		if (trailing && (len < 3 || strcmp(g + len - 3, "/**") != 0))
			continue;
		if (strcmp(g, "/") == 0 ? strcmp(path, "/") == 0 : match_binary(g, path))
			return true;
		if (len > 3 && strcmp(g + len - 3, "/**") == 0 && strncmp(path, g, len - 3) == 0 &&
		    path[len - 3] == '\0')
			return true;
	}
	return false;
}

const char *
httprule_judge(const struct policy_endpoint *e, const char *method, const char *target)
{
	char path[HTTPRULE_PATH_MAX_BYTES];
	bool method_named = false, trailing;

	if (e->nhttp_rules == 0)
		return NULL;
	if (!httprule_path(target, path, sizeof(path), &trailing))
		return "path_not_canonical";
	for (size_t i = 0; i < e->nhttp_rules; i++) {
		const struct policy_http_rule *r = &e->http_rules[i];

		if (r->methods.npaths > 0 && !httprule_has(&r->methods, method))
			continue;
		method_named = true;
		if (r->paths.npaths == 0 || httprule_path_matches(&r->paths, path, trailing))
			return NULL;
	}
	return method_named ? "path_not_allowed" : "method_not_allowed";
}
