/* Secrets swapped in at the proxy (secretsub.h). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "common/buf.h"
#include "egress-proxy/secretsub.h"

#define SECRETSUB_BASIC "Basic "
#define SECRETSUB_BASIC_LEN (sizeof(SECRETSUB_BASIC) - 1)

/* --- Placeholders ------------------------------------------------------- */

/* A random character of ALPHABET (N of them), unbiased. */
static int
secretsub_random_of(const char *alphabet, unsigned n, char *out)
{
	unsigned char b;

	do {
		if (RAND_bytes(&b, 1) != 1)
			return -1;
	} while (b >= 256 / n * n);
	*out = alphabet[b % n];
	return 0;
}

/* A random character of C's kind: a digit, a lower or upper-case letter, or
 * a symbol. The separators token formats are built of ('-', '_', '.': a
 * JWT's dots, a Slack token's dashes) stay where they are; every other
 * symbol is drawn from symbols that need no quoting in a header or a
 * variable, so a placeholder tells nothing of the value's own. */
static int
secretsub_random_like(char c, char *out)
{
	static const char symbols[] = "!#$%&*+=?@^~";

	if (c >= '0' && c <= '9')
		return secretsub_random_of("0123456789", 10, out);
	if (c >= 'A' && c <= 'Z')
		return secretsub_random_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 26, out);
	if (c >= 'a' && c <= 'z')
		return secretsub_random_of("abcdefghijklmnopqrstuvwxyz", 26, out);
	if (c == '-' || c == '_' || c == '.') {
		*out = c;
		return 0;
	}
	return secretsub_random_of(symbols, sizeof(symbols) - 1, out);
}

/* The prefixes kept as they are: token formats tools check, and that say
 * nothing of the value. Any other leading text is the value's own and is
 * replaced like the rest (a password's first word is not a prefix). */
static const char *const secretsub_prefixes[] = {
	"github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "glpat-", "npm_", "pypi-",
	"xoxb-", "xoxp-", "sk-", "hf_",
};

static size_t
secretsub_prefix(const char *value)
{
	for (size_t i = 0; i < sizeof(secretsub_prefixes) / sizeof(secretsub_prefixes[0]); i++)
		if (strncmp(value, secretsub_prefixes[i], strlen(secretsub_prefixes[i])) == 0)
			return strlen(secretsub_prefixes[i]);
	return 0;
}

static bool
secretsub_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

int
secretsub_placeholder(const char *value, char *out, size_t size)
{
	size_t len = strlen(value), pre = secretsub_prefix(value), o, randoms = 0;

	if (len == 0 || len > SECRETSUB_VALUE_MAX_BYTES)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (value[i] < 0x21 || value[i] > 0x7e)
			return -1;
		randoms += i >= pre && secretsub_alnum(value[i]);
	}
	if (size < len + (randoms < SECRETSUB_RANDOM_MIN ? SECRETSUB_RANDOM_MIN - randoms : 0) + 1)
		return -1;
	memcpy(out, value, pre);
	for (o = pre; o < len; o++)
		if (secretsub_random_like(value[o], &out[o]) == -1)
			return -1;
	/* Too few random characters to be told from traffic: more. */
	for (; randoms < SECRETSUB_RANDOM_MIN; o++, randoms++)
		if (secretsub_random_of("abcdefghijklmnopqrstuvwxyz0123456789", 36, &out[o]) == -1)
			return -1;
	out[o] = '\0';
	return 0;
}

/* --- The head ------------------------------------------------------------ */

static bool
secretsub_listed(const char *const *list, size_t n, const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && strncasecmp(list[i], s, len) == 0)
			return true;
	return false;
}

/* Whether secret S may go in header NAME (LEN bytes) toward HOST. */
static bool
secretsub_allowed(const struct secretsub_secret *s, const char *host, const char *name,
    size_t len)
{
	return secretsub_listed(s->hosts, s->nhosts, host, strlen(host)) &&
	    secretsub_listed(s->headers, s->nheaders, name, len);
}

/* Appends DATA with every placeholder of the secrets in MASK replaced. */
static int
secretsub_put_swapped(struct buf *out, const struct secretsub_secret *s, size_t n,
    uint32_t mask, const char *data, size_t len)
{
	size_t at = 0;

	while (at < len) {
		size_t best = len, which = 0;

		for (size_t i = 0; i < n; i++) {
			const char *p;

			if (!(mask & (1u << i)))
				continue;
			p = memmem(data + at, len - at, s[i].placeholder, strlen(s[i].placeholder));
			if (p != NULL && (size_t)(p - data) < best) {
				best = (size_t)(p - data);
				which = i;
			}
		}
		if (buf_append(out, data + at, best - at) == -1)
			return -1;
		if (best == len)
			break;
		if (buf_append_str(out, s[which].value) == -1)
			return -1;
		at = best + strlen(s[which].placeholder);
	}
	return 0;
}

/* The secrets whose placeholder DATA holds, as a mask. */
static uint32_t
secretsub_present(const struct secretsub_secret *s, size_t n, const char *data, size_t len)
{
	uint32_t mask = 0;

	for (size_t i = 0; i < n; i++)
		if (memmem(data, len, s[i].placeholder, strlen(s[i].placeholder)) != NULL)
			mask |= 1u << i;
	return mask;
}

/* What a header (NAME: VALUE) may carry: the secrets of MASK that may go
 * there, or a misuse (the first secret that may not, in *BAD). */
static bool
secretsub_judge(const struct secretsub_secret *s, size_t n, const char *host, const char *name,
    size_t name_len, uint32_t mask, const char **bad)
{
	for (size_t i = 0; i < n; i++)
		if ((mask & (1u << i)) && !secretsub_allowed(&s[i], host, name, name_len)) {
			*bad = s[i].name;
			return false;
		}
	return true;
}

/* A Basic credential's token (VALUE after "Basic "), decoded into DEC
 * (secret-marked); -1 when it is not base64. */
static int
secretsub_basic_decode(const char *token, size_t len, struct buf *dec)
{
	unsigned char *raw;
	int n, pad = 0;

	if (len == 0 || len % 4 != 0 || len > SECRETSUB_HEAD_MAX_BYTES)
		return -1;
	if ((raw = malloc(len / 4 * 3 + 1)) == NULL)
		return -1;
	n = EVP_DecodeBlock(raw, (const unsigned char *)token, (int)len);
	pad = (token[len - 1] == '=') + (token[len - 2] == '=');
	if (n < pad || buf_append(dec, raw, (size_t)(n - pad)) == -1) {
		OPENSSL_cleanse(raw, len / 4 * 3 + 1);
		free(raw);
		return -1;
	}
	OPENSSL_cleanse(raw, len / 4 * 3 + 1);
	free(raw);
	return 0;
}

/* Appends the Basic credential of PLAIN (LEN bytes), base64-encoded. */
static int
secretsub_basic_encode(struct buf *out, const char *plain, size_t len)
{
	size_t size = (len + 2) / 3 * 4 + 1;
	unsigned char *enc = malloc(size);
	int n, rc = -1;

	if (enc == NULL)
		return -1;
	n = EVP_EncodeBlock(enc, (const unsigned char *)plain, (int)len);
	if (n >= 0)
		rc = buf_append(out, enc, (size_t)n);
	OPENSSL_cleanse(enc, size);
	free(enc);
	return rc;
}

struct secretsub_line {
	const struct secretsub_secret *s;
	size_t n;
	const char *host;
	struct buf *out;
	const char **which;
	uint32_t *used;
};

#define SECRETSUB_NOT_BASIC (-1)       /* secretsub_basic: nothing of a secret in a Basic credential */

/* A header whose value is a Basic credential: its decoded text judged and
 * swapped too. A result, or SECRETSUB_NOT_BASIC when it is no Basic
 * credential or none holds a placeholder. */
static int
secretsub_basic(struct secretsub_line *l, const char *name, size_t name_len,
    const char *value, size_t value_len)
{
	struct buf *dec;
	uint32_t mask;
	int rc = SECRETSUB_NOT_BASIC;

	if (value_len <= SECRETSUB_BASIC_LEN ||
	    strncasecmp(value, SECRETSUB_BASIC, SECRETSUB_BASIC_LEN) != 0 ||
	    (dec = buf_new(SECRETSUB_HEAD_MAX_BYTES)) == NULL)
		return SECRETSUB_NOT_BASIC;
	buf_set_secret(dec);
	if (secretsub_basic_decode(value + SECRETSUB_BASIC_LEN, value_len - SECRETSUB_BASIC_LEN,
	    dec) == -1 || (mask = secretsub_present(l->s, l->n, buf_data(dec), buf_len(dec))) == 0)
		goto out;
	if (!secretsub_judge(l->s, l->n, l->host, name, name_len, mask, l->which)) {
		rc = SECRETSUB_MISUSE;
		goto out;
	}
	{
		struct buf *swapped = buf_new(SECRETSUB_HEAD_MAX_BYTES);

		rc = SECRETSUB_TOO_BIG;
		if (swapped != NULL) {
			buf_set_secret(swapped);
			if (secretsub_put_swapped(swapped, l->s, l->n, mask, buf_data(dec),
			    buf_len(dec)) == 0 && buf_append(l->out, name, name_len) == 0 &&
			    buf_append_str(l->out, ": " SECRETSUB_BASIC) == 0 &&
			    secretsub_basic_encode(l->out, buf_data(swapped), buf_len(swapped)) == 0) {
				*l->used |= mask;
				rc = SECRETSUB_OK;
			}
			buf_free(swapped);
		}
	}
out:
	buf_free(dec);
	return rc;
}

/* One header line (no line end) into L's output. */
static int
secretsub_header(struct secretsub_line *l, const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len), *value;
	size_t name_len, value_len;
	uint32_t mask;
	int rc;

	if (colon == NULL)
		return SECRETSUB_MALFORMED;
	name_len = (size_t)(colon - line);
	value = colon + 1;
	while (value < line + len && (*value == ' ' || *value == '\t'))
		value++;
	value_len = (size_t)(line + len - value);
	if ((rc = secretsub_basic(l, line, name_len, value, value_len)) != SECRETSUB_NOT_BASIC)
		return rc;
	if ((mask = secretsub_present(l->s, l->n, line, len)) == 0)
		return buf_append(l->out, line, len) == 0 ? SECRETSUB_OK : SECRETSUB_TOO_BIG;
	/* In the name, or toward a host or in a header it may not go to. */
	if (secretsub_present(l->s, l->n, line, name_len) != 0 ||
	    !secretsub_judge(l->s, l->n, l->host, line, name_len, mask, l->which)) {
		if (*l->which == NULL)
			*l->which = l->s[__builtin_ctz(mask)].name;
		return SECRETSUB_MISUSE;
	}
	*l->used |= mask;
	return secretsub_put_swapped(l->out, l->s, l->n, mask, line, len) == 0 ? SECRETSUB_OK :
	    SECRETSUB_TOO_BIG;
}

static int secretsub_put_escaped_char(struct buf *b, char c, unsigned style);

/* Appends VALUE percent-encoded but its unreserved characters (RFC 3986
 * section 2.3): a value's '&', '+' or '#' would end or change the query. */
static int
secretsub_put_encoded(struct buf *out, const char *value)
{
	for (const char *c = value; *c != '\0'; c++)
		if (secretsub_put_escaped_char(out, *c, 0) == -1)
			return -1;
	return 0;
}

/* The hex digit C's value, or -1. */
static int
secretsub_hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	    c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* TEXT (LEN bytes) percent-decoded into OUT (SIZE bytes, NUL-terminated):
 * its length, or -1 when it does not fit or is no such encoding. */
static ssize_t
secretsub_decode(const char *text, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++, o++) {
		if (o + 1 >= size)
			return -1;
		if (text[i] != '%') {
			out[o] = text[i];
			continue;
		}
		if (i + 2 >= len || secretsub_hex(text[i + 1]) < 0 || secretsub_hex(text[i + 2]) < 0)
			return -1;
		out[o] = (char)(secretsub_hex(text[i + 1]) << 4 | secretsub_hex(text[i + 2]));
		i += 2;
	}
	out[o] = '\0';
	return (ssize_t)o;
}

/* One query parameter (NAME=VALUE, LEN bytes) into L's output: a
 * placeholder may be its whole value (as sent, or percent-encoded: a
 * placeholder's symbols may need it), when its secret names the
 * parameter and may go to L's host. */
static int
secretsub_param(struct secretsub_line *l, const char *param, size_t len)
{
	const char *eq = memchr(param, '=', len);
	size_t name_len = eq != NULL ? (size_t)(eq - param) : len;
	char value[SECRETSUB_PLACEHOLDER_MAX_BYTES];

	if (eq == NULL || secretsub_decode(eq + 1, len - name_len - 1, value, sizeof(value)) < 0)
		return buf_append(l->out, param, len) == 0 ? SECRETSUB_OK : SECRETSUB_TOO_BIG;
	for (size_t i = 0; i < l->n; i++) {
		const struct secretsub_secret *s = &l->s[i];

		if (strcmp(value, s->placeholder) != 0)
			continue;
		if (!secretsub_listed(s->hosts, s->nhosts, l->host, strlen(l->host)) ||
		    !secretsub_listed(s->query, s->nquery, param, name_len)) {
			*l->which = s->name;
			return SECRETSUB_MISUSE;
		}
		*l->used |= 1u << i;
		return buf_append(l->out, param, name_len + 1) == 0 &&
		    secretsub_put_encoded(l->out, s->value) == 0 ? SECRETSUB_OK : SECRETSUB_TOO_BIG;
	}
	return buf_append(l->out, param, len) == 0 ? SECRETSUB_OK : SECRETSUB_TOO_BIG;
}

/* The request line (no line end) into L's output, each query parameter's
 * placeholder swapped where its secret allows (secretsub_param). What is
 * written must then hold no placeholder: one anywhere else is misuse. */
static int
secretsub_request_line(struct secretsub_line *l, const char *line, size_t len)
{
	const char *target = memchr(line, ' ', len), *version = memrchr(line, ' ', len);
	const char *query = target != NULL ? memchr(target, '?', (size_t)(version - target)) : NULL;
	size_t start = buf_len(l->out);
	uint32_t mask;
	int rc = SECRETSUB_OK;

	mask = secretsub_present(l->s, l->n, line, len);
	if (query == NULL || query > version || l->n == 0) {
		if (mask == 0)
			return buf_append(l->out, line, len) == 0 ? SECRETSUB_OK : SECRETSUB_TOO_BIG;
		*l->which = l->s[__builtin_ctz(mask)].name;
		return SECRETSUB_MISUSE;
	}
	if (buf_append(l->out, line, (size_t)(query - line) + 1) == -1)
		return SECRETSUB_TOO_BIG;
	for (const char *p = query + 1; p < version && rc == SECRETSUB_OK;) {
		const char *amp = memchr(p, '&', (size_t)(version - p));
		const char *end = amp != NULL ? amp : version;

		rc = secretsub_param(l, p, (size_t)(end - p));
		if (rc == SECRETSUB_OK && amp != NULL && buf_append(l->out, "&", 1) == -1)
			rc = SECRETSUB_TOO_BIG;
		p = end + (amp != NULL);
	}
	if (rc != SECRETSUB_OK)
		return rc;
	if (buf_append(l->out, version, (size_t)(line + len - version)) == -1)
		return SECRETSUB_TOO_BIG;
	mask = secretsub_present(l->s, l->n, buf_data(l->out) + start, buf_len(l->out) - start);
	if (mask != 0) {
		*l->which = l->s[__builtin_ctz(mask)].name;
		return SECRETSUB_MISUSE;
	}
	return SECRETSUB_OK;
}

/* Whether the head can be read line by line: no bare CR, no NUL, no
 * folded header line, and every value of S fit for a header. */
static bool
secretsub_readable(const struct secretsub_secret *s, size_t n, const char *head, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (head[i] == '\0' || (head[i] == '\r' && (i + 1 == len || head[i + 1] != '\n')))
			return false;
		if (head[i] == '\n' && i + 1 < len && (head[i + 1] == ' ' || head[i + 1] == '\t'))
			return false;
	}
	for (size_t i = 0; i < n; i++)
		if (strpbrk(s[i].value, "\r\n") != NULL || s[i].placeholder[0] == '\0')
			return false;
	return n <= SECRETSUB_MAX;
}

enum secretsub_result
secretsub_head(const struct secretsub_secret *s, size_t n, const char *host, const char *head,
    size_t len, struct buf *out, const char **which, uint32_t *used)
{
	struct secretsub_line l = { s, n, host, out, which, used };
	size_t at = 0;
	bool first = true;

	*which = NULL;
	*used = 0;
	if (!secretsub_readable(s, n, head, len))
		return SECRETSUB_MALFORMED;
	buf_set_secret(out);
	while (at < len) {
		const char *nl = memchr(head + at, '\n', len - at);
		size_t end = nl != NULL ? (size_t)(nl - head) : len, body = end;
		int rc = SECRETSUB_OK;

		if (body > at && head[body - 1] == '\r')
			body--;
		/* The request line, then each header line; the blank line is empty. */
		if (first)
			rc = secretsub_request_line(&l, head + at, body - at);
		else if (body > at)
			rc = secretsub_header(&l, head + at, body - at);
		if (rc != SECRETSUB_OK)
			return (enum secretsub_result)rc;
		if (buf_append(out, head + body, end - body + (nl != NULL)) == -1)
			return SECRETSUB_TOO_BIG;
		first = false;
		at = end + (nl != NULL);
	}
	return SECRETSUB_OK;
}

const char *
secretsub_find(const struct secretsub_secret *s, size_t n, const void *data, size_t len)
{
	uint32_t mask = secretsub_present(s, n, data, len);

	return mask != 0 ? s[__builtin_ctz(mask)].name : NULL;
}

struct secretsub_scan {
	size_t size;                    /* the longest placeholder's length, less one */
	size_t len;                     /* the stream's last bytes, kept at the start of tail */
	unsigned char tail[];           /* 2 * size: those, then the next piece's start */
};

struct secretsub_scan *
secretsub_scan_new(const struct secretsub_secret *s, size_t n)
{
	struct secretsub_scan *sc;
	size_t longest = 1;

	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(s[i].placeholder);

		longest = len > longest ? len : longest;
	}
	if ((sc = malloc(sizeof(*sc) + 2 * (longest - 1) + 1)) == NULL)
		return NULL;
	sc->size = longest - 1;
	sc->len = 0;
	return sc;
}

void
secretsub_scan_free(struct secretsub_scan *sc)
{
	free(sc);
}

void
secretsub_scan_reset(struct secretsub_scan *sc)
{
	sc->len = 0;
}

/* Keeps the last SC->size bytes of what SC kept and LEN more at DATA. */
static void
secretsub_scan_keep(struct secretsub_scan *sc, const unsigned char *data, size_t len)
{
	size_t old;

	if (len >= sc->size) {
		memcpy(sc->tail, data + len - sc->size, sc->size);
		sc->len = sc->size;
		return;
	}
	old = sc->len < sc->size - len ? sc->len : sc->size - len;
	memmove(sc->tail, sc->tail + sc->len - old, old);
	memcpy(sc->tail + old, data, len);
	sc->len = old + len;
}

const char *
secretsub_scan_next(struct secretsub_scan *sc, const struct secretsub_secret *s, size_t n,
    const void *data, size_t len)
{
	const char *which;

	if (len == 0 || n == 0)
		return NULL;
	if ((which = secretsub_find(s, n, data, len)) != NULL)
		return which;
	/* One that began in an earlier piece ends within this one's first
	 * SIZE bytes: the kept end and those, joined, hold it whole. */
	if (sc->len > 0) {
		size_t head = len < sc->size ? len : sc->size;

		memcpy(sc->tail + sc->len, data, head);
		if ((which = secretsub_find(s, n, sc->tail, sc->len + head)) != NULL)
			return which;
	}
	secretsub_scan_keep(sc, data, len);
	return NULL;
}

/* Appends C as the escape STYLE of secretsub_echo_form (4 + STYLE). */
static int
secretsub_put_escaped_char(struct buf *b, char c, unsigned style)
{
	static const char hex[] = "0123456789ABCDEF", lower[] = "0123456789abcdef";
	bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    strchr("-._~", c) != NULL;
	char e[8];

	if (style <= 1 && !plain) {
		const char *h = style == 0 ? hex : lower;

		e[0] = '%';
		e[1] = h[(unsigned char)c >> 4];
		e[2] = h[(unsigned char)c & 15];
		return buf_append(b, e, 3);
	}
	if (style >= 2 && (c == '"' || c == '\\' || (style == 4 && c == '/'))) {
		e[0] = '\\';
		e[1] = c;
		return buf_append(b, e, 2);
	}
	if (style == 3 && (c == '<' || c == '>' || c == '&')) {
		snprintf(e, sizeof(e), "\\u%04x", (unsigned)c);
		return buf_append(b, e, 6);
	}
	return buf_append(b, &c, 1);
}

/* VALUE escaped in STYLE into OUT (SIZE bytes): its length, or 0 when the
 * escape leaves it as it is or does not fit. */
static size_t
secretsub_escaped_form(const char *value, unsigned style, char *out, size_t size)
{
	size_t vlen = strlen(value), n = 0;
	struct buf *b = buf_new(SECRETSUB_ECHO_FORM_BYTES(vlen));
	bool ok = b != NULL && style <= 4;

	if (b != NULL)
		buf_set_secret(b);
	for (const char *c = value; ok && *c != '\0'; c++)
		ok = secretsub_put_escaped_char(b, *c, style) == 0;
	if (ok && (buf_len(b) != vlen || memcmp(buf_data(b), value, vlen) != 0) &&
	    buf_len(b) + 1 <= size) {
		n = buf_len(b);
		memcpy(out, buf_data(b), n);
		out[n] = '\0';
	}
	buf_free(b);
	return n;
}

size_t
secretsub_echo_form(const char *value, unsigned i, char *out, size_t size)
{
	size_t vlen = strlen(value), skip, n;

	if (i == 0) {
		if (vlen + 1 > size)
			return 0;
		memcpy(out, value, vlen + 1);
		return vlen;
	}
	if (i >= 4)
		return secretsub_escaped_form(value, i - 4, out, size);
	skip = i - 1;
	n = vlen > skip ? (vlen - skip) / 3 * 3 : 0;
	if (i >= SECRETSUB_ECHO_FORMS || n == 0 || n / 3 * 4 + 1 > size)
		return 0;
	return (size_t)EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)value + skip,
	    (int)n);
}
