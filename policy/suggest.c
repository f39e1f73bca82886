/* Policy suggestions from refusals (suggest.h). */
#include "config.h"

#include <libpsl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/match.h"
#include "policy/suggest.h"

#define SUGGEST_WILDCARD_MIN_NAMES 2    /* names under one domain before a wildcard */

bool
suggest_applies(const struct suggest_denial *d)
{
	return d->port != 0 && d->host != NULL && d->host[0] != '\0' && d->reason != NULL &&
	    (strcmp(d->reason, "host_not_allowed") == 0 ||
	    strcmp(d->reason, "binary_not_allowed") == 0);
}

static const char *
suggest_binary(const struct suggest_denial *d)
{
	return d->binary != NULL ? d->binary : "";
}

/* The registrable domain of HOST ("b.example.co.uk": "example.co.uk"), or
 * NULL when it has none or is one (a public suffix has none). */
static const char *
suggest_domain(const char *host)
{
	const psl_ctx_t *psl = psl_builtin();
	const char *dom = psl != NULL ? psl_registrable_domain(psl, host) : NULL;

	return dom != NULL && strcmp(dom, host) != 0 ? dom : NULL;
}

/* The suggestion in OUT[0..N) for HOST, PORT and BINARY, or NULL. */
static struct suggestion *
suggest_find(struct suggestion *out, size_t n, const char *host, uint16_t port,
    const char *binary)
{
	for (size_t i = 0; i < n; i++)
		if (out[i].port == port && strcmp(out[i].host, host) == 0 &&
		    strcmp(out[i].binary, binary) == 0)
			return &out[i];
	return NULL;
}

/* The refusals, with each one's registrable domain looked up once (the
 * grouping compares them pairwise: the PSL is not asked n^2 times). */
struct suggest_set {
	const struct suggest_denial *d;
	const char **domain;            /* suggest_domain of each host, or NULL */
	size_t n;
};

/* Whether refusal I of SET belongs to the wildcard group of ONE: a name
 * strictly under the same registrable domain, refused alike. */
static bool
suggest_in_group(const struct suggest_set *set, size_t i, size_t one)
{
	const struct suggest_denial *d = &set->d[i], *o = &set->d[one];

	return suggest_applies(d) && d->port == o->port &&
	    strcmp(suggest_binary(d), suggest_binary(o)) == 0 && set->domain[i] != NULL &&
	    strcmp(set->domain[i], set->domain[one]) == 0;
}

/* The number of labels of NAME. */
static size_t
suggest_labels(const char *name)
{
	size_t n = 1;

	for (; *name != '\0'; name++)
		n += *name == '.';
	return n;
}

/* Cuts SUFFIX (a name) to the labels it shares, from the right, with NAME. */
static void
suggest_common_suffix(char *suffix, const char *name)
{
	size_t a = strlen(suffix), b = strlen(name);

	while (a > 0 && b > 0 && suffix[a - 1] == name[b - 1]) {
		a--;
		b--;
	}
	/* Back to a whole label: the shared part starts after a dot, or is all of one side. */
	while (a < strlen(suffix) && !((a == 0 || suffix[a - 1] == '.') && (b == 0 || name[b - 1] == '.'))) {
		a++;
		b++;
	}
	memmove(suffix, suffix + a, strlen(suffix + a) + 1);
}

/* The wildcard for the group of refusal ONE of SET: the narrowest that
 * covers every name of the group ("*." when each is one label under the
 * names' common suffix, else "**."), into HOST; false when the group holds
 * fewer than SUGGEST_WILDCARD_MIN_NAMES names. */
static bool
suggest_wildcard(const struct suggest_set *set, size_t one, char *host, size_t size)
{
	char suffix[POLICY_HOST_MAX_BYTES + 1];
	size_t others = 0, depth;
	bool one_deep = true;

	snprintf(suffix, sizeof(suffix), "%s", set->d[one].host);
	for (size_t i = 0; i < set->n; i++) {
		if (!suggest_in_group(set, i, one))
			continue;
		others += strcmp(set->d[i].host, set->d[one].host) != 0;
		suggest_common_suffix(suffix, set->d[i].host);
	}
	if (others + 1 < SUGGEST_WILDCARD_MIN_NAMES ||
	    suggest_labels(suffix) < suggest_labels(set->domain[one]))
		return false;
	depth = suggest_labels(suffix);
	for (size_t i = 0; i < set->n; i++)
		if (suggest_in_group(set, i, one) && suggest_labels(set->d[i].host) != depth + 1)
			one_deep = false;
	snprintf(host, size, "%s.%s", one_deep ? "*" : "**", suffix);
	return true;
}

/* The host an entry would name for refusal ONE of SET: a wildcard (above)
 * when several names under its registrable domain were refused alike and
 * the policy takes it, else the name itself. The apex of the names is
 * never under their wildcard: it stays its own entry. */
static void
suggest_host_for(const struct suggest_set *set, size_t one, char *host, size_t size,
    bool *wildcard)
{
	struct policy_host parsed;

	*wildcard = false;
	snprintf(host, size, "%s", set->d[one].host);
	if (set->domain[one] == NULL || !suggest_wildcard(set, one, host, size))
		return;
	/* The policy's own check: never a wildcard over a public suffix. */
	if (match_host_parse(host, &parsed) != MATCH_OK) {
		snprintf(host, size, "%s", set->d[one].host);
		return;
	}
	free(parsed.name);
	*wildcard = true;
}

static void
suggest_risk(struct suggestion *s)
{
	if (s->wildcard)
		snprintf(s->risk, sizeof(s->risk), "every name %sunder %s on port %u",
		    s->host[1] == '*' ? "at any depth " : "one label ", strchr(s->host, '.') + 1,
		    (unsigned)s->port);
	else if (s->binary[0] == '\0')
		snprintf(s->risk, sizeof(s->risk), "any program of the sandbox, to this host only");
	else
		snprintf(s->risk, sizeof(s->risk), "this host and port, for this program only");
}

size_t
suggest_make(const struct suggest_denial *d, size_t n, struct suggestion *out, size_t max)
{
	struct suggest_set set = { .d = d, .n = n, .domain = calloc(n > 0 ? n : 1,
	    sizeof(*set.domain)) };
	char host[sizeof(out->host)];
	struct suggestion *s;
	size_t made = 0;
	bool wildcard;

	if (set.domain == NULL)
		return 0;
	for (size_t i = 0; i < n; i++)
		set.domain[i] = suggest_applies(&d[i]) ? suggest_domain(d[i].host) : NULL;
	for (size_t i = 0; i < n; i++) {
		if (!suggest_applies(&d[i]))
			continue;
		suggest_host_for(&set, i, host, sizeof(host), &wildcard);
		if ((s = suggest_find(out, made, host, d[i].port, suggest_binary(&d[i]))) == NULL) {
			if (made == max)
				continue;
			s = &out[made++];
			*s = (struct suggestion){ .port = d[i].port, .wildcard = wildcard };
			snprintf(s->host, sizeof(s->host), "%s", host);
			snprintf(s->binary, sizeof(s->binary), "%s", suggest_binary(&d[i]));
			suggest_risk(s);
		}
		s->denials += d[i].count;
	}
	free(set.domain);
	return made;
}
