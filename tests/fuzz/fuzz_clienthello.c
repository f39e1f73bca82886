/* Fuzz target for egress-proxy/tls: reads the input as a whole and again
 * in chunks whose sizes come from the input itself, and aborts when the
 * two readings disagree or a found name breaks the reader's promises. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress-proxy/tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHUNK_MAX_BYTES 64

/* A small generator seeded from the input, so a crash replays exactly. */
static uint32_t
fuzz_seed(const uint8_t *data, size_t size)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < size && i < 16; i++)
		h = (h ^ data[i]) * 16777619u;
	return h;
}

static size_t
fuzz_next_chunk(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return 1 + (*state >> 16) % FUZZ_CHUNK_MAX_BYTES;
}

/* Feeds DATA to a reader in chunks; returns the final status. */
static enum tls_status
fuzz_feed_chunked(const uint8_t *data, size_t size, struct tls_hello_info *info)
{
	struct tls_reader *r = tls_reader_new();
	enum tls_status st = TLS_NEED_MORE;
	uint32_t state = fuzz_seed(data, size);
	size_t off = 0, n;

	if (r == NULL)
		abort();
	memset(info, 0, sizeof(*info));
	while (off < size) {
		n = fuzz_next_chunk(&state);
		n = n < size - off ? n : size - off;
		st = tls_reader_feed(r, data + off, n, info);
		off += n;
	}
	tls_reader_free(r);
	return st;
}

/* A found name is non-empty, at most 253 bytes, lower case, in the allowed set. */
static void
fuzz_check_name(const struct tls_hello_info *info)
{
	if (info->name_len == 0 || info->name_len > TLS_SNI_NAME_MAX_BYTES ||
	    strlen(info->name) != info->name_len || info->name[info->name_len - 1] == '.')
		abort();
	for (size_t i = 0; i < info->name_len; i++)
		if (strchr("abcdefghijklmnopqrstuvwxyz0123456789-._", info->name[i]) == NULL)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tls_hello_info whole, chunked;
	enum tls_status a, b;

	a = tls_parse_hello(data, size, &whole);
	b = fuzz_feed_chunked(data, size, &chunked);
	if (size > 0 && (a != b || whole.error != chunked.error ||
	    strcmp(whole.name, chunked.name) != 0 || whole.ech_present != chunked.ech_present))
		abort();
	if ((a == TLS_ERROR) != (whole.error != TLS_ERR_NONE))
		abort();
	if (a == TLS_FOUND)
		fuzz_check_name(&whole);
	else if (whole.name_len != 0)
		abort();
	return 0;
}
