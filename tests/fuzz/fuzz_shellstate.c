/* Fuzz target for the state a persistent shell's run dumps as it exits
 * (broker/shellproto.c): bytes from a run's shell, read strictly, then
 * turned into the next run's script. Checks, besides the sanitizers: a
 * dump that is read is written back (cwd, then each entry) into one that
 * reads the same; a refused dump leaves the state as it was; the script
 * ends with the text, and every byte of the state in it is quoted. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/shellproto.h"
#include "common/shellwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_TEXT "true"

/* The dump that ST reads back from; its length in *LEN. */
static char *
fuzz_dump_of(const struct shellproto_state *st, size_t *len)
{
	size_t n = strlen(st->cwd) + 1;
	char *d;

	for (size_t i = 0; i < st->nenv; i++)
		n += strlen(st->env[i]) + 1;
	if ((d = malloc(n)) == NULL)
		abort();
	*len = 0;
	memcpy(d, st->cwd, strlen(st->cwd) + 1);
	*len = strlen(st->cwd) + 1;
	for (size_t i = 0; i < st->nenv; i++) {
		memcpy(d + *len, st->env[i], strlen(st->env[i]) + 1);
		*len += strlen(st->env[i]) + 1;
	}
	return d;
}

/* Aborts unless every byte between the block's braces is one that bash
 * reads as itself in the generated code: the quoting leaves no other. */
static void
fuzz_check_script(const char *s, size_t len)
{
	static const char bare[] = "unset -v " SHELLWIRE_SCRIPT_VAR "\n" FUZZ_TEXT;
	const char *end = strstr(s, "} 2>/dev/null\n");

	if (len < strlen(FUZZ_TEXT) || strcmp(s + len - strlen(FUZZ_TEXT), FUZZ_TEXT) != 0)
		abort();
	if (end == NULL) {
		/* Nothing to apply: no block at all. */
		if (strcmp(s, bare) != 0)
			abort();
		return;
	}
	for (const char *p = s; p < end; p++) {
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f || *p == '`' ||
		    *p == '"' || *p == '(' || *p == '|' || *p == '&' || *p == '<' || *p == '>')
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const base[] = { "PATH=/usr/bin:/bin", "HOME=/home/u", "GONE=1",
	    NULL };
	struct shellproto_state st, again;
	size_t len;
	char *d, *s;

	shellproto_state_init(&st);
	shellproto_state_init(&again);
	if (shellproto_state_parse((const char *)data, size, &st) == -1) {
		if (st.cwd != NULL || st.nenv != 0)
			abort();
		return 0;
	}
	d = fuzz_dump_of(&st, &len);
	if (shellproto_state_parse(d, len, &again) == -1 || again.nenv != st.nenv ||
	    strcmp(again.cwd, st.cwd) != 0)
		abort();
	for (size_t i = 0; i < st.nenv; i++) {
		if (strcmp(st.env[i], again.env[i]) != 0)
			abort();
	}
	free(d);
	if ((s = shellproto_script(&st, base, "/work", FUZZ_TEXT, &len)) == NULL)
		abort();
	fuzz_check_script(s, len);
	free(s);
	shellproto_state_clear(&st);
	shellproto_state_clear(&again);
	return 0;
}
