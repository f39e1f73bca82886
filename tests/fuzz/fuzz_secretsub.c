/* Fuzz target for egress-proxy/secretsub: the input's first byte picks the
 * host, the rest is a request head. Aborts when a swap breaks its
 * promises: a head judged fit keeps no placeholder; a head toward a host
 * no secret may reach, or with nothing swapped, comes out byte for byte; a
 * value appears only where its secret was swapped in; a misuse names a
 * secret. The same bytes read as a stream in pieces (secretsub_scan) hold
 * a placeholder exactly when they hold one whole. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "egress-proxy/secretsub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Fixed placeholders, so that a crash replays exactly. */
static const char *const gh_hosts[] = { "api.github.com", "github.com" };
static const char *const npm_hosts[] = { "registry.npmjs.org" };
static const char *const auth[] = { "Authorization", "Proxy-Authorization" };
static const char *const npm_query[] = { "token" };
static const struct secretsub_secret secrets[] = {
	{ "gh", "gho_REALVALUEREALVALUEREALVALUEREALVALUE", "gho_PH0PH0PH0PH0PH0PH0PH0PH0PH0PH0PH0P",
	    gh_hosts, 2, auth, 2 },
	{ "npm", "npm_realvaluerealvaluerealvaluerealvalue", "npm_ph1ph1ph1ph1ph1ph1ph1ph1ph1ph1ph1p",
	    npm_hosts, 1, auth, 1, .query = npm_query, .nquery = 1 },
};
#define FUZZ_NSECRETS (sizeof(secrets) / sizeof(secrets[0]))
static const char *const hosts[] = { "api.github.com", "registry.npmjs.org", "evil.example" };

static void
fuzz_check_ok(const char *host, const uint8_t *head, size_t len, const struct buf *out,
    uint32_t used)
{
	const char *o = buf_data(out);
	size_t olen = buf_len(out);

	for (size_t i = 0; i < FUZZ_NSECRETS; i++) {
		if (secretsub_find(&secrets[i], 1, o, olen) != NULL)
			abort();
		if (!(used & (1u << i)) && memmem(o, olen, secrets[i].value,
		    strlen(secrets[i].value)) != NULL && memmem(head, len, secrets[i].value,
		    strlen(secrets[i].value)) == NULL)
			abort();
	}
	if ((used == 0 || strcmp(host, "evil.example") == 0) &&
	    (olen != len || memcmp(o, head, len) != 0))
		abort();
}

/* The stream search finds a placeholder in LEN bytes at DATA, read in
 * pieces of STEP, exactly when the whole holds one. */
static void
fuzz_check_stream(const uint8_t *data, size_t len, size_t step)
{
	struct secretsub_scan *sc = secretsub_scan_new(secrets, FUZZ_NSECRETS);
	bool found = false;

	if (sc == NULL)
		return;
	for (size_t at = 0; at < len && !found; at += step)
		found = secretsub_scan_next(sc, secrets, FUZZ_NSECRETS, data + at,
		    len - at < step ? len - at : step) != NULL;
	if (found != (secretsub_find(secrets, FUZZ_NSECRETS, data, len) != NULL))
		abort();
	secretsub_scan_free(sc);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf *out;
	const char *host, *which;
	uint32_t used;
	enum secretsub_result rc;

	if (size == 0 || size > SECRETSUB_HEAD_MAX_BYTES)
		return 0;
	host = hosts[data[0] % (sizeof(hosts) / sizeof(hosts[0]))];
	if ((out = buf_new(SECRETSUB_HEAD_MAX_BYTES)) == NULL)
		return 0;
	rc = secretsub_head(secrets, FUZZ_NSECRETS, host, (const char *)data + 1, size - 1, out,
	    &which, &used);
	if (rc == SECRETSUB_OK)
		fuzz_check_ok(host, data + 1, size - 1, out, used);
	else if (rc == SECRETSUB_MISUSE && (which == NULL || (strcmp(which, "gh") != 0 &&
	    strcmp(which, "npm") != 0)))
		abort();
	buf_free(out);
	fuzz_check_stream(data + 1, size - 1, (size_t)(data[0] >> 2) % 13 + 1);
	return 0;
}
