/* Fuzz target for the policy loader: any bytes go through
 * policy_load_buffer(); a policy that loads must copy and compare equal to
 * its copy, and the diagnostics must format in both styles. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "policy/diag.h"
#include "policy/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_diags diags;
	struct policy *p = NULL, *copy;
	char *text;

	policy_diags_init(&diags);
	if (policy_load_buffer("fuzz.yaml", (const char *)data, size, &p, &diags) == 0) {
		/* A loaded policy and its copy must say the same thing. */
		copy = policy_dup(p);
		if (copy != NULL && !policy_equal(p, copy))
			abort();
		policy_free(copy);
	} else if (diags.count == 0 && !diags.nomem) {
		/* A refusal always says why. */
		abort();
	}
	free(policy_diags_format(&diags, POLICY_DIAG_ONE_LINE));
	text = policy_diags_format(&diags, POLICY_DIAG_VERBOSE);
	free(text);
	policy_free(p);
	policy_diags_clear(&diags);
	return 0;
}
