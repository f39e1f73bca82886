/* Fuzz target for egress-proxy/h1body: the input's first byte says
 * whether the request was HEAD and how to cut the rest; the rest is a
 * response head and what follows it. Aborts when the head's promises
 * break (a head that ends with its blank line, no body for HEAD) or when
 * the chunked reader fed whole and fed in pieces disagrees. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress-proxy/h1body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The body bytes the reader takes from DATA, fed in pieces of STEP bytes
 * (0: whole); -1 when it refused them. */
static ssize_t
fuzz_chunked(const uint8_t *data, size_t size, size_t step, bool *done)
{
	struct h1_chunked c;
	ssize_t total = 0;

	h1_chunked_init(&c);
	for (size_t at = 0; at < size && !h1_chunked_done(&c);) {
		size_t n = step == 0 || size - at < step ? size - at : step;
		ssize_t got = h1_chunked_feed(&c, data + at, n);

		if (got < 0)
			return -1;
		if ((size_t)got > n || (got < (ssize_t)n && !h1_chunked_done(&c)))
			abort();
		total += got;
		at += n;
	}
	*done = h1_chunked_done(&c);
	return total;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct h1_response r;
	bool head_request, done_a = false, done_b = false;
	ssize_t a, b;

	if (size == 0)
		return 0;
	head_request = data[0] & 1;
	if (h1_response_parse(data + 1, size - 1, head_request, &r) == H1_OK) {
		if (r.head_len < 4 || r.head_len > size - 1 ||
		    memcmp(data + 1 + r.head_len - 4, "\r\n\r\n", 4) != 0 ||
		    (head_request && r.body != H1_BODY_NONE) ||
		    (r.body == H1_BODY_LENGTH && r.length == 0) ||
		    (r.body == H1_BODY_UNTIL_CLOSE && !r.close))
			abort();
	}
	a = fuzz_chunked(data + 1, size - 1, 0, &done_a);
	b = fuzz_chunked(data + 1, size - 1, 1 + (data[0] >> 1) % 7, &done_b);
	if (a != b || done_a != done_b)
		abort();
	return 0;
}
