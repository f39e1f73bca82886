/* Fuzz target for `corral policy update` (policy/edit.h): the endpoints,
 * entry name and binaries come from any user of the control socket, and
 * are applied to a copy of a sandbox's policy that is then rendered and
 * loaded again (broker/api-policy.c). The input is records, one a line:
 * "+RULE<TAB>HOST:PORT[<TAB>BINARY]..." adds, "-HOST:PORT" removes, and
 * any other line is a bare endpoint that is only parsed. Besides the
 * sanitizers it aborts when:
 * - a parsed endpoint has no name or port 0, or an error has no text;
 * - an endpoint that was added cannot be removed, or adding it twice
 *   changes more than adding it once;
 * - after a removal that found the endpoint, a second one finds it too,
 *   or a removal that found nothing changed the policy;
 * - the edited policy does not render, or its rendering loads into a
 *   policy other than the one rendered (render.h: "loading the text gives
 *   a policy equal to P"). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/diag.h"
#include "policy/edit.h"
#include "policy/load.h"
#include "policy/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_RECORDS_MAX 32
#define FUZZ_BINARIES_MAX 8
#define FUZZ_INPUT_MAX_BYTES 8192

/* A sandbox's policy as a profile renders it, with one entry of each kind. */
static const char fuzz_base_yaml[] =
    "version: 1\n"
    "filesystem_policy:\n"
    "  read_only: [/usr, /lib, /etc]\n"
    "  read_write: [/tmp, /home/sam/code]\n"
    "landlock:\n"
    "  compatibility: hard_requirement\n"
    "process:\n"
    "  run_as_user: \"1000\"\n"
    "  run_as_group: \"1000\"\n"
    "network_policies:\n"
    "  code_hosts:\n"
    "    name: code-hosts\n"
    "    endpoints:\n"
    "      - {host: github.com, port: 443}\n"
    "      - host: \"*.example.net\"\n"
    "        ports: [443, 80]\n"
    "        sni_check: false\n"
    "    binaries:\n"
    "      - {path: /usr/bin/git}\n"
    "  added:\n"
    "    name: added\n"
    "    endpoints:\n"
    "      - {host: \"**.pypi.org\", port: 443}\n"
    "    binaries:\n"
    "      - {path: \"/**\"}\n";

static struct policy *fuzz_base;

static void
fuzz_setup(void)
{
	struct policy_diags diags;

	if (fuzz_base != NULL)
		return;
	policy_diags_init(&diags);
	if (policy_load_buffer("base.yaml", fuzz_base_yaml, sizeof(fuzz_base_yaml) - 1,
	    &fuzz_base, &diags) != 0)
		abort();
	policy_diags_clear(&diags);
}

static struct policy *
fuzz_dup(const struct policy *p)
{
	struct policy *q = policy_dup(p);

	if (q == NULL)
		abort();
	return q;
}

/* Parses ENDPOINT alone: a name and a port, or an error with a text. */
static void
fuzz_parse(const char *endpoint)
{
	struct policy_host h = { 0 };
	uint16_t port = 0;
	enum edit_err e = edit_parse_endpoint(endpoint, &h, &port);

	if (edit_strerror(e) == NULL || (e == EDIT_OK && (h.name == NULL || port == 0)))
		abort();
	free(h.name);
}

/* Adds ENDPOINT to RULE of *PP with BINS, and checks the add against
 * copies. A refused add leaves *PP as it was before: the broker drops an
 * update at its first refusal, so nothing goes on from what it left. */
static void
fuzz_add(struct policy **pp, const char *rule, const char *endpoint, const char *const *bins,
    size_t nbins)
{
	struct policy *p = *pp, *once, *probe;
	size_t removed = 0;

	once = fuzz_dup(p);
	if (policy_edit_add_endpoint(p, rule, endpoint, bins, nbins) != EDIT_OK) {
		policy_free(p);
		*pp = once;
		return;
	}
	policy_free(once);
	once = fuzz_dup(p);
	if (policy_edit_add_endpoint(p, rule, endpoint, bins, nbins) != EDIT_OK ||
	    !policy_equal(p, once))
		abort();
	probe = fuzz_dup(p);
	if (policy_edit_remove_endpoint(probe, endpoint, &removed) != EDIT_OK || removed == 0)
		abort();
	policy_free(probe);
	policy_free(once);
}

/* Removes ENDPOINT from P; a second removal finds nothing and changes nothing. */
static void
fuzz_remove(struct policy *p, const char *endpoint)
{
	struct policy *before = fuzz_dup(p);
	size_t removed = 0;
	enum edit_err e = policy_edit_remove_endpoint(p, endpoint, &removed);

	if ((e == EDIT_OK) != (removed > 0) || (e != EDIT_OK && !policy_equal(p, before)))
		abort();
	policy_free(before);
	if (e != EDIT_OK)
		return;
	before = fuzz_dup(p);
	if (policy_edit_remove_endpoint(p, endpoint, &removed) != EDIT_ERR_NOT_FOUND ||
	    removed != 0 || !policy_equal(p, before))
		abort();
	policy_free(before);
}

/* Applies one record of the input (NUL-terminated, tabs between fields) to *P. */
static void
fuzz_record(struct policy **p, char *rec)
{
	const char *bins[FUZZ_BINARIES_MAX];
	char *rule, *endpoint, *next;
	size_t nbins = 0;

	if (rec[0] == '-') {
		fuzz_remove(*p, rec + 1);
		return;
	}
	if (rec[0] != '+') {
		fuzz_parse(rec);
		return;
	}
	rule = rec + 1;
	if ((endpoint = strchr(rule, '\t')) == NULL)
		return;
	*endpoint++ = '\0';
	for (next = strchr(endpoint, '\t'); next != NULL && nbins < FUZZ_BINARIES_MAX;
	    next = strchr(next, '\t')) {
		*next++ = '\0';
		bins[nbins++] = next;
	}
	fuzz_add(p, rule, endpoint, bins, nbins);
}

/* Renders P and loads the text: what loads must be P. */
static void
fuzz_render_reload(const struct policy *p)
{
	struct policy_diags diags;
	struct policy *again = NULL;
	char *yaml = NULL;
	size_t len = 0;
	enum render_err e = render_yaml(p, &yaml, &len);

	if (e != RENDER_OK) {
		if (e != RENDER_ERR_NOMEM && e != RENDER_ERR_TOO_BIG)
			abort();
		return;
	}
	policy_diags_init(&diags);
	if (policy_load_buffer("<policy update>", yaml, len, &again, &diags) == 0 &&
	    !policy_equal(p, again))
		abort();
	policy_free(again);
	policy_diags_clear(&diags);
	free(yaml);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[FUZZ_INPUT_MAX_BYTES + 1];
	struct policy *p;
	char *rec, *nl;
	size_t n = size < FUZZ_INPUT_MAX_BYTES ? size : FUZZ_INPUT_MAX_BYTES;

	fuzz_setup();
	memcpy(text, data, n);
	text[n] = '\0';
	p = fuzz_dup(fuzz_base);
	rec = text;
	for (size_t i = 0; rec != NULL && i < FUZZ_RECORDS_MAX; i++) {
		if ((nl = strchr(rec, '\n')) != NULL)
			*nl++ = '\0';
		fuzz_record(&p, rec);
		rec = nl;
	}
	fuzz_render_reload(p);
	policy_free(p);
	return 0;
}
