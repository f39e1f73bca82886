/* What the daemon and a persistent bash say to each other (shellproto.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/shellproto.h"
#include "common/xmalloc.h"

#define SHELLPROTO_MARK_BYTE '\037'
#define SHELLPROTO_MARK_PREFIX "corral-"
#define SHELLPROTO_CODE_MAX_BYTES 12

/* PS1..PS4 empty, so nothing but the command writes to the terminal; no
 * history file; no core files in the user's folders; the hook writes the
 * marker to the terminal first, then the status to the socket (fd 0). */
static const char shellproto_script[] =
    "PS1= PS2= PS0= PS4=; set +o history; unset HISTFILE MAILCHECK PROMPT_DIRTRIM; "
    "ulimit -c 0 2>/dev/null; "
    "__corral_status() { local __s=$?; "
    "printf '\\037" SHELLPROTO_MARK_PREFIX "%s\\037' \"$__corral_n\" >/dev/tty; "
    "printf '%s\\0%d\\0%s\\0' \"$__corral_n\" \"$__s\" \"$PWD\" >&0; }; "
    "PROMPT_COMMAND=__corral_status; __corral_n=";

char *
shellproto_init_script(const char *nonce)
{
	size_t n = strlen(nonce);
	char *s = xmalloc(sizeof(shellproto_script) + n + 1);

	memcpy(s, shellproto_script, sizeof(shellproto_script) - 1);
	memcpy(s + sizeof(shellproto_script) - 1, nonce, n);
	memcpy(s + sizeof(shellproto_script) - 1 + n, "\n", 2);
	return s;
}

/* Appends C to OUT as bash's $'...' quoting reads it back. */
static size_t
shellproto_quote_byte(unsigned char c, char *out)
{
	static const char hex[] = "0123456789abcdef";

	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == ' ' || c == '_' || c == '-' || c == '.' || c == '/' || c == '=' || c == ',') {
		out[0] = (char)c;
		return 1;
	}
	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
	return 4;
}

char *
shellproto_run_line(const char *nonce, const char *command, size_t len, size_t *out_len)
{
	static const char tail[] = "' </dev/null\n";
	size_t head_len = strlen(nonce) + 32, n;
	char *line = xmalloc(head_len + 4 * len + sizeof(tail));

	n = (size_t)snprintf(line, head_len, "__corral_n=%s; eval $'", nonce);
	for (size_t i = 0; i < len; i++)
		n += shellproto_quote_byte((unsigned char)command[i], line + n);
	memcpy(line + n, tail, sizeof(tail));
	*out_len = n + sizeof(tail) - 1;
	return line;
}

/* The NUL-terminated field at DATA: its length, or -1 when none ends
 * within LEN bytes (or MAX). */
static long
shellproto_field(const uint8_t *data, size_t len, size_t max)
{
	const uint8_t *nul = memchr(data, '\0', len < max ? len : max);

	return nul == NULL ? -1 : (long)(nul - data);
}

int
shellproto_status_parse(const uint8_t *data, size_t len, struct shellproto_status *st,
    size_t *used)
{
	size_t maxes[3] = { sizeof(st->nonce), SHELLPROTO_CODE_MAX_BYTES, sizeof(st->cwd) };
	char code[SHELLPROTO_CODE_MAX_BYTES], *dst[3] = { st->nonce, code, st->cwd }, *end;
	size_t at = 0;
	long n, v;

	for (int f = 0; f < 3; f++) {
		n = shellproto_field(data + at, len - at, maxes[f]);
		if (n == -1)
			return len - at >= maxes[f] ? -1 : 0;
		memcpy(dst[f], data + at, (size_t)n);
		dst[f][n] = '\0';
		at += (size_t)n + 1;
	}
	v = strtol(code, &end, 10);
	if (code[0] == '\0' || *end != '\0' || v < 0 || v > 255)
		return -1;
	st->code = (int)v;
	*used = at;
	return 1;
}

void
shellproto_marker_init(struct shellproto_marker *m, const char *nonce)
{
	int n = snprintf(m->pat, sizeof(m->pat), "%c" SHELLPROTO_MARK_PREFIX "%s%c",
	    SHELLPROTO_MARK_BYTE, nonce, SHELLPROTO_MARK_BYTE);

	m->plen = n > 0 && (size_t)n < sizeof(m->pat) ? (size_t)n : 0;
	m->matched = 0;
	m->found = false;
}

/* The marker byte appears in the pattern only first and last, so after a
 * mismatch the held-back bytes are output, and the mismatching byte starts
 * a new match only if it is the marker byte itself. */
size_t
shellproto_marker_feed(struct shellproto_marker *m, const uint8_t *in, size_t len,
    uint8_t *out, size_t *out_len)
{
	size_t i, o = 0;

	for (i = 0; i < len && !m->found; i++) {
		if ((char)in[i] == m->pat[m->matched]) {
			if (++m->matched == m->plen)
				m->found = true;
			continue;
		}
		memcpy(out + o, m->pat, m->matched);
		o += m->matched;
		m->matched = (char)in[i] == m->pat[0] ? 1 : 0;
		if (m->matched == 0)
			out[o++] = in[i];
	}
	*out_len = o;
	return i;
}
