/* Fuzz target for corrald's configuration loader (broker/config.c,
 * corrald.yaml(5)): the operator's file, read as root before the broker
 * drops, so a crash there is a daemon that never starts, or worse. The
 * loader reads a path, so the input goes into a memfd (mode 0600, this
 * user's, as a configuration file must be) and config_load() reads it
 * through /proc/self/fd. Besides the sanitizers it aborts when:
 * - a configuration that loads breaks what corrald.yaml(5) and conf.h
 *   promise (paths absolute, names in their character sets and lengths,
 *   counts within their caps, the socket path fitting sun_path);
 * - a refusal says nothing, or its diagnostics do not format. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/conf.h"
#include "policy/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* broker/config.c's caps, which conf.h does not export. */
#define FUZZ_MAX_SANDBOXES_MAX 10000
#define FUZZ_MACHINE_ID_MAX_BYTES 63
#define FUZZ_CREDENTIALS_MAX 64
#define FUZZ_CREDENTIAL_ITEMS_MAX 32
#define FUZZ_PATH_BYTES 32

static int fuzz_fd = -1;
static char fuzz_path[FUZZ_PATH_BYTES];

/* Makes the memfd the inputs go through, once. */
static void
fuzz_setup(void)
{
	if (fuzz_fd != -1)
		return;
	if ((fuzz_fd = memfd_create("fuzz-corrald.yaml", MFD_CLOEXEC)) == -1 ||
	    fchmod(fuzz_fd, 0600) == -1)
		abort();
	snprintf(fuzz_path, sizeof(fuzz_path), "/proc/self/fd/%d", fuzz_fd);
}

/* Replaces the memfd's content with the input. */
static void
fuzz_write(const uint8_t *data, size_t size)
{
	size_t done = 0;
	ssize_t n;

	if (ftruncate(fuzz_fd, 0) == -1)
		abort();
	while (done < size) {
		if ((n = pwrite(fuzz_fd, data + done, size - done, (off_t)done)) <= 0)
			abort();
		done += (size_t)n;
	}
}

static bool
fuzz_absolute(const char *path)
{
	return path != NULL && path[0] == '/';
}

/* True when S is 1 to MAX bytes of [A-Za-z0-9._-] (no '.' unless DOT). */
static bool
fuzz_word(const char *s, size_t max, bool dot)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n == 0 || n > max)
		return false;
	return strspn(s, dot ? "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-" :
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

/* Checks what a configuration that loaded promises. */
static void
fuzz_check_config(const struct config *c)
{
	if (!fuzz_absolute(c->socket) || strlen(c->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path) ||
	    !fuzz_absolute(c->state_dir) || !fuzz_absolute(c->log_dir) ||
	    !fuzz_absolute(c->profiles_dir))
		abort();
	if (!fuzz_word(c->machine_id, FUZZ_MACHINE_ID_MAX_BYTES, true) ||
	    !fuzz_word(c->user, CONFIG_USER_MAX_BYTES, false) || c->user[0] == '-')
		abort();
	if (c->max_sandboxes == 0 || c->max_sandboxes > FUZZ_MAX_SANDBOXES_MAX ||
	    c->ndns_upstream > CONFIG_DNS_UPSTREAM_MAX || c->nallow_cidrs > CONFIG_ALLOW_CIDRS_MAX ||
	    c->ncredentials > FUZZ_CREDENTIALS_MAX)
		abort();
	for (size_t i = 0; i < c->ndns_upstream; i++)
		if (c->dns_upstream[i] == NULL || c->dns_upstream[i][0] == '\0')
			abort();
	for (size_t i = 0; i < c->ncredentials; i++) {
		const struct config_credential *cr = &c->credentials[i];

		if (cr->name == NULL || cr->name[0] == '\0' || cr->npaths > FUZZ_CREDENTIAL_ITEMS_MAX ||
		    cr->nhosts > FUZZ_CREDENTIAL_ITEMS_MAX || cr->nenv > FUZZ_CREDENTIAL_ITEMS_MAX ||
		    cr->npaths + cr->nhosts + cr->nenv == 0)
			abort();
		for (size_t j = 0; j < cr->nenv; j++)
			if (strchr(cr->env[j], '=') == NULL || cr->env[j][0] == '=')
				abort();
		for (size_t j = 0; j < cr->nhosts; j++)
			if (strrchr(cr->hosts[j], ':') == NULL)
				abort();
	}
	if (c->host_proxy.enabled && c->host_proxy.listen == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_diags diags;
	struct config *c = NULL;

	fuzz_setup();
	fuzz_write(data, size);
	policy_diags_init(&diags);
	if (config_load(fuzz_path, true, &c, &diags) == 0) {
		if (c == NULL)
			abort();
		fuzz_check_config(c);
	} else if (c != NULL || (diags.count == 0 && !diags.nomem)) {
		/* A refusal hands nothing out and always says why. */
		abort();
	}
	free(policy_diags_format(&diags, POLICY_DIAG_ONE_LINE));
	free(policy_diags_format(&diags, POLICY_DIAG_VERBOSE));
	config_free(c);
	policy_diags_clear(&diags);
	return 0;
}
