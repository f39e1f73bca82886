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

/* Whether refusal D belongs to the wildcard group of DOMAIN, PORT and
 * BINARY: a name strictly under DOMAIN, refused alike. */
static bool
suggest_in_group(const struct suggest_denial *d, const char *domain, uint16_t port,
    const char *binary)
{
	const char *dom;

	return suggest_applies(d) && d->port == port && strcmp(suggest_binary(d), binary) == 0 &&
	    (dom = suggest_domain(d->host)) != NULL && strcmp(dom, domain) == 0;
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

/* The wildcard for the group of ONE in the N refusals at D: the narrowest
 * that covers every name of the group ("*." when each is one label under
 * the names' common suffix, else "**."), into HOST; false when the group
 * holds fewer than SUGGEST_WILDCARD_MIN_NAMES names. */
static bool
suggest_wildcard(const struct suggest_denial *d, size_t n, const struct suggest_denial *one,
    const char *domain, char *host, size_t size)
{
	char suffix[POLICY_HOST_MAX_BYTES + 1];
	size_t names = 0, depth = 0;
	bool one_deep = true;

	snprintf(suffix, sizeof(suffix), "%s", one->host);
	for (size_t i = 0; i < n; i++) {
		if (!suggest_in_group(&d[i], domain, one->port, suggest_binary(one)))
			continue;
		if (strcmp(d[i].host, one->host) != 0)
			names++;
		suggest_common_suffix(suffix, d[i].host);
	}
	if (names + 1 < SUGGEST_WILDCARD_MIN_NAMES || suggest_labels(suffix) <
	    suggest_labels(domain))
		return false;
	depth = suggest_labels(suffix);
	for (size_t i = 0; i < n; i++)
		if (suggest_in_group(&d[i], domain, one->port, suggest_binary(one)) &&
		    suggest_labels(d[i].host) != depth + 1)
			one_deep = false;
	snprintf(host, size, "%s.%s", one_deep ? "*" : "**", suffix);
	return true;
}

/* The host an entry would name for refusal ONE: a wildcard (above) when
 * several names under its registrable domain were refused alike and the
 * policy takes it, else the name itself. The apex of the names is never
 * under their wildcard: it stays its own entry. */
static void
suggest_host_for(const struct suggest_denial *d, size_t n, const struct suggest_denial *one,
    char *host, size_t size, bool *wildcard)
{
	const char *domain = suggest_domain(one->host);
	struct policy_host parsed;

	*wildcard = false;
	snprintf(host, size, "%s", one->host);
	if (domain == NULL || !suggest_wildcard(d, n, one, domain, host, size))
		return;
	/* The policy's own check: never a wildcard over a public suffix. */
	if (match_host_parse(host, &parsed) != MATCH_OK) {
		snprintf(host, size, "%s", one->host);
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
	char host[sizeof(out->host)];
	struct suggestion *s;
	size_t made = 0;
	bool wildcard;

	for (size_t i = 0; i < n; i++) {
		if (!suggest_applies(&d[i]))
			continue;
		suggest_host_for(d, n, &d[i], host, sizeof(host), &wildcard);
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
	return made;
}
