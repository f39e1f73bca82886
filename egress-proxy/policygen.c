/* Generations of a tenant's policy; see policygen.h. */
#include "config.h"

#include <stdlib.h>

#include "egress-proxy/policygen.h"
#include "policy/index.h"
#include "policy/policy.h"

struct policy_gen *
policy_gen_new(struct policy *policy, uint64_t number)
{
	struct policy_gen *g = calloc(1, sizeof(*g));

	if (g == NULL)
		return NULL;
	g->refs = 1;
	g->number = number;
	g->policy = policy;
	if ((g->index = policy_index_new(policy)) == NULL) {
		free(g);
		return NULL;
	}
	return g;
}

struct policy_gen *
policy_gen_ref(struct policy_gen *g)
{
	g->refs++;
	return g;
}

void
policy_gen_unref(struct policy_gen *g)
{
	if (g == NULL || --g->refs > 0)
		return;
	policy_index_free(g->index);
	policy_free(g->policy);
	free(g);
}
