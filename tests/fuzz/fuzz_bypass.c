/* Fuzz target for the bypass log's parser (broker/bypass.h): one datagram
 * of the NFLOG socket, whose packets a sandbox wrote. Besides the
 * sanitizers it aborts when a packet it reports is not one a record may
 * carry: an address that is not text of its family, a port out of range,
 * a reason that is not a lower-case word ending in _not_allowed, or more
 * packets than the datagram could hold. */
#include "config.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/bypass.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_SMALLEST_MESSAGE 20        /* a header and an nfgenmsg */

static void
fuzz_check(const struct bypass_packet *pk, void *arg)
{
	size_t *n = arg;
	unsigned char addr[sizeof(struct in6_addr)];
	size_t len = strnlen(pk->reason, sizeof(pk->reason));
	const char *tail = "_not_allowed";

	(*n)++;
	if (inet_pton(AF_INET, pk->ip, addr) != 1 && inet_pton(AF_INET6, pk->ip, addr) != 1)
		abort();
	if (pk->port < -1 || pk->port > 65535)
		abort();
	if (len == sizeof(pk->reason) || len <= strlen(tail) ||
	    strcmp(pk->reason + len - strlen(tail), tail) != 0 ||
	    strspn(pk->reason, "abcdefghijklmnopqrstuvwxyz0123456789_") != len)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy exactly as long as the input, so a read past it is caught. */
	uint8_t *copy = malloc(size > 0 ? size : 1);
	size_t n = 0;

	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	(void)bypass_parse(copy, size, fuzz_check, &n);
	if (n > size / FUZZ_SMALLEST_MESSAGE)
		abort();
	free(copy);
	return 0;
}
