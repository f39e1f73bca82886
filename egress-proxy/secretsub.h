/* Secrets swapped in at the proxy (corral(1), "--secret"): a sandbox sees
 * a placeholder of each secret's shape, and the proxy, which terminates
 * TLS toward the secret's hosts, puts the real value in place of the
 * placeholder in a request's head only where the secret may go: in one of
 * its headers (a Basic credential's decoded text too), toward one of its
 * hosts. A placeholder anywhere else is misuse: the request is refused.
 *
 * The real value never leaves the daemon but toward its hosts; a
 * placeholder sent elsewhere leaks nothing, and the refusal says the
 * sandbox tried. Bodies are never rewritten: a host that stores what it
 * is sent (an issue, a gist) would publish the value. Nor is a query,
 * unless the secret names the parameter it may be the value of (an API
 * that takes its token so; the upstream's access log then holds it).
 * A body is searched instead (secretsub_scan), piece by piece as it
 * passes: a placeholder in it is misuse too.
 *
 * Pure functions over bytes, fuzzed (tests/fuzz/fuzz_secretsub.c); the
 * caller keeps the values in memory that is wiped (common/buf.h). */
#ifndef CORRAL_SECRETSUB_H
#define CORRAL_SECRETSUB_H

#include <stddef.h>
#include <stdint.h>

struct buf;

#define SECRETSUB_MAX 16                        /* secrets of one sandbox */
#define SECRETSUB_VALUE_MAX_BYTES 4096
#define SECRETSUB_RANDOM_MIN 24                 /* random characters in a placeholder, at least */
#define SECRETSUB_PLACEHOLDER_MAX_BYTES (SECRETSUB_VALUE_MAX_BYTES + SECRETSUB_RANDOM_MIN + 1)
#define SECRETSUB_PREFIX_MAX 16                 /* "github_pat_", "gho_", "pypi-": kept */
#define SECRETSUB_HEAD_MAX_BYTES (64 * 1024)    /* a request head, rewritten */

/* One secret of a sandbox. */
struct secretsub_secret {
	const char *name;                       /* "gh" */
	const char *value;                      /* the real one */
	const char *placeholder;                /* what the sandbox holds */
	const char *const *hosts;               /* where it may go, as the caller names a
						 * connection (the proxy: "host:port") */
	size_t nhosts;
	const char *const *headers;             /* in which request headers ("Authorization") */
	size_t nheaders;
	/* The forms an echo of the value takes (secretsub_echo_form), kept
	 * with the value in locked memory (secretstore.h); NULL: whoever
	 * searches for them makes its own. */
	const char *const *echoes;
	const size_t *echo_lens;
	size_t nechoes;
	/* The query parameters whose value it may be ("private_token"):
	 * none, the default, keeps it out of every request line. */
	const char *const *query;
	size_t nquery;
};

#define SECRETSUB_ECHO_FORMS 9          /* the value, its base64 at 3 alignments,
					 * and 5 textual escapes of it */
#define SECRETSUB_ECHO_FORM_BYTES(vlen) ((vlen) * 6 + 8)        /* room for any form */

/* Echo form I of VALUE into OUT (SIZE bytes): 0 is the value itself; 1-3
 * its base64 where its byte I-1 starts a 3-byte group of a longer text (a
 * Basic credential's "user:VALUE"), the characters that depend on VALUE's
 * bytes alone, to its last whole group; then the escapes a host that
 * reflects what it got is likely to apply: 4 percent-encoded as it goes
 * into a query (an echoed request line), 5 the same in lower-case hex, 6
 * a JSON string's ('"' and '\\'), 7 Go's JSON (and '<', '>', '&' as
 * \u00XX), 8 PHP's ('/' as '\\/'). Any other encoding a host applies is
 * not searched for. Its length (0: none: the value is too short, or the
 * escape leaves it as it is; SIZE must be SECRETSUB_ECHO_FORM_BYTES of
 * its length). */
size_t secretsub_echo_form(const char *value, unsigned i, char *out, size_t size);

/* A placeholder of VALUE's shape into OUT (SIZE bytes): its prefix when it
 * is a known token format's ("gho_", "github_pat_", "pypi-"; any other
 * leading text is the value's own), then for each character a random one
 * of its kind (digit, lower, upper, symbol; the separators '-', '_' and
 * '.' kept), at least
 * SECRETSUB_RANDOM_MIN random ones (a shorter value gets a longer
 * placeholder). -1 when VALUE is empty, over the maximum, or holds bytes
 * outside printable ASCII. */
int secretsub_placeholder(const char *value, char *out, size_t size);

enum secretsub_result {
	SECRETSUB_OK = 0,
	SECRETSUB_MISUSE,                       /* a placeholder where its secret may not go */
	SECRETSUB_MALFORMED,                    /* not a head this reads (folded lines, bare CR) */
	SECRETSUB_TOO_BIG,                      /* the rewritten head would pass the maximum */
};

/* Rewrites the request head HEAD (LEN bytes: the request line, the header
 * lines, the blank line) bound for HOST into OUT: every placeholder of a
 * secret whose hosts hold HOST, in one of its headers or as the value of
 * one of its query parameters (percent-encoded there), becomes its value.
 * Any other placeholder (another host, another header, elsewhere in the
 * request line) is SECRETSUB_MISUSE with the secret's name in *WHICH. *USED gets a bit
 * per secret swapped in (bit i: S[i]). N is at most SECRETSUB_MAX. */
enum secretsub_result secretsub_head(const struct secretsub_secret *s, size_t n,
    const char *host, const char *head, size_t len, struct buf *out, const char **which,
    uint32_t *used);

/* The name of the first secret whose placeholder DATA holds (bytes the
 * proxy sees but does not rewrite: a tunnel's, a body), or NULL. */
const char *secretsub_find(const struct secretsub_secret *s, size_t n, const void *data,
    size_t len);

/* A search for placeholders in a stream read piece by piece (a request's
 * body): it keeps the stream's last bytes, as many as the longest
 * placeholder less one, so that one cut across two pieces or more is
 * found once its last byte comes, before that piece goes anywhere. */
struct secretsub_scan;

/* A search for the placeholders of S (N secrets), or NULL out of memory. */
struct secretsub_scan *secretsub_scan_new(const struct secretsub_secret *s, size_t n);
void secretsub_scan_free(struct secretsub_scan *sc);
/* Forgets what was read: the next piece starts a new stream. */
void secretsub_scan_reset(struct secretsub_scan *sc);
/* Reads the stream's next LEN bytes at DATA: the name of the first secret
 * whose placeholder the stream holds through them, or NULL. */
const char *secretsub_scan_next(struct secretsub_scan *sc, const struct secretsub_secret *s,
    size_t n, const void *data, size_t len);

#endif
