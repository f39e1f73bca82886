/* A sandbox's secrets in locked memory (secretstore.h). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/reason.h"
#include "egress-proxy/secretstore.h"

#define SECRETSTORE_DEFAULT_HEADER "Authorization"

/* One secret's parts that are not its value: plain heap memory. */
struct secretstore_item {
	char *name;
	char *placeholder;
	char *hostports[SECRETSTORE_HOSTS_MAX];         /* "host:port" as given */
	char *hostnames[SECRETSTORE_HOSTS_MAX];         /* the names alone, for secretsub */
	uint16_t ports[SECRETSTORE_HOSTS_MAX];
	size_t nhosts;
	char *headers[SECRETSTORE_HEADERS_MAX];
	size_t nheaders;
	char *query[SECRETSTORE_QUERY_MAX];
	size_t nquery;
	const char *echoes[SECRETSUB_ECHO_FORMS];       /* into the mapping */
	size_t echo_lens[SECRETSUB_ECHO_FORMS];
	size_t nechoes;
};

struct secretstore {
	char *values;                   /* the mapping: each value and its echo forms, NUL-ended */
	size_t values_len;
	struct secretstore_item items[SECRETSUB_MAX];
	struct secretsub_secret view[SECRETSUB_MAX];
	size_t n;
};

static void
secretstore_item_clear(struct secretstore_item *it)
{
	free(it->name);
	free(it->placeholder);
	for (size_t h = 0; h < it->nhosts; h++) {
		free(it->hostports[h]);
		free(it->hostnames[h]);
	}
	for (size_t h = 0; h < it->nheaders; h++)
		free(it->headers[h]);
	for (size_t q = 0; q < it->nquery; q++)
		free(it->query[q]);
}

void
secretstore_free(struct secretstore *s)
{
	if (s == NULL)
		return;
	if (s->values != NULL) {
		explicit_bzero(s->values, s->values_len);
		munlock(s->values, s->values_len);
		munmap(s->values, s->values_len);
	}
	for (size_t i = 0; i < s->n; i++)
		secretstore_item_clear(&s->items[i]);
	free(s);
}

/* The room one value and its echo forms take in the mapping. */
static size_t
secretstore_form_bytes(const char *value)
{
	return SECRETSUB_ECHO_FORM_BYTES(strlen(value));
}

static size_t
secretstore_entry_bytes(const char *value)
{
	return SECRETSUB_ECHO_FORMS * secretstore_form_bytes(value);
}

/* The mapping for N entries' values: locked, out of core dumps. */
static int
secretstore_map(struct secretstore *s, const struct secretstore_entry *e, size_t n, char **err)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += secretstore_entry_bytes(e[i].value);
	len = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	s->values = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->values == MAP_FAILED) {
		s->values = NULL;
		return reason_set(err, "cannot map memory for the secrets: %s", strerror(errno));
	}
	s->values_len = len;
	if (mlock(s->values, len) == -1)
		return reason_set(err, "cannot lock memory for the secrets (%s): raise corrald's "
		    "RLIMIT_MEMLOCK (LimitMEMLOCK= in its unit)", strerror(errno));
	/* Its pages are never in a core dump, and a fork never copies them. */
	(void)madvise(s->values, len, MADV_DONTDUMP);
	(void)madvise(s->values, len, MADV_DONTFORK);
	return 0;
}

/* A lower-case copy of S (host names compare so). */
static char *
secretstore_lower(const char *s)
{
	char *c = strdup(s);

	for (char *p = c; p != NULL && *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p | 0x20);
	return c;
}

/* "host:port" of entry E's host H into IT. */
static int
secretstore_host(struct secretstore_item *it, const char *hostport, char **err)
{
	const char *colon = strrchr(hostport, ':');
	char *end;
	unsigned long port;

	if (colon == NULL || colon == hostport)
		return reason_set(err, "secret host '%s' is not HOST:PORT", hostport);
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || port == 0 || port > 65535)
		return reason_set(err, "secret host '%s' has no port 1-65535", hostport);
	if ((it->hostports[it->nhosts] = secretstore_lower(hostport)) == NULL ||
	    (it->hostnames[it->nhosts] = strndup(hostport, (size_t)(colon - hostport))) == NULL) {
		free(it->hostports[it->nhosts]);
		return reason_set(err, "out of memory");
	}
	it->ports[it->nhosts++] = (uint16_t)port;
	return 0;
}

/* Entry E's parts but its value into IT, and its placeholder. */
static int
secretstore_item(struct secretstore_item *it, const struct secretstore_entry *e, char **err)
{
	size_t plen = strlen(e->value) + SECRETSUB_RANDOM_MIN + 1;

	if (e->nhosts == 0 || e->nhosts > SECRETSTORE_HOSTS_MAX ||
	    e->nheaders > SECRETSTORE_HEADERS_MAX || e->nquery > SECRETSTORE_QUERY_MAX)
		return reason_set(err, "secret %s: 1 to %d hosts, at most %d headers and %d query "
		    "parameters", e->name, SECRETSTORE_HOSTS_MAX, SECRETSTORE_HEADERS_MAX,
		    SECRETSTORE_QUERY_MAX);
	if ((it->name = strdup(e->name)) == NULL || (it->placeholder = malloc(plen)) == NULL)
		return reason_set(err, "out of memory");
	if (secretsub_placeholder(e->value, it->placeholder, plen) == -1)
		return reason_set(err, "secret %s: its value is not printable ASCII of 1 to %d bytes",
		    e->name, SECRETSUB_VALUE_MAX_BYTES);
	for (size_t h = 0; h < e->nhosts; h++)
		if (secretstore_host(it, e->hosts[h], err) == -1)
			return -1;
	for (size_t h = 0; h < (e->nheaders > 0 ? e->nheaders : 1); h++) {
		if ((it->headers[h] = strdup(e->nheaders > 0 ? e->headers[h] :
		    SECRETSTORE_DEFAULT_HEADER)) == NULL)
			return reason_set(err, "out of memory");
		it->nheaders++;
	}
	for (size_t q = 0; q < e->nquery; q++) {
		if ((it->query[q] = strdup(e->query[q])) == NULL)
			return reason_set(err, "out of memory");
		it->nquery++;
	}
	return 0;
}

/* VALUE and its echo forms into the mapping at *AT (form 0, the value
 * itself, always first). */
static void
secretstore_forms(struct secretstore_item *it, const char *value, char *map, size_t *at)
{
	size_t room = secretstore_form_bytes(value), len;

	for (unsigned f = 0; f < SECRETSUB_ECHO_FORMS; f++) {
		len = secretsub_echo_form(value, f, map + *at, room);
		if (f > 0 && len == 0)
			continue;
		it->echoes[it->nechoes] = map + *at;
		it->echo_lens[it->nechoes++] = len;
		map[*at + len] = '\0';
		*at += room;
	}
}

struct secretstore *
secretstore_new(const struct secretstore_entry *e, size_t n, char **err)
{
	struct secretstore *s = calloc(1, sizeof(*s));
	size_t at = 0;

	if (s == NULL) {
		reason_set(err, "out of memory");
		return NULL;
	}
	if (n > SECRETSUB_MAX) {
		reason_set(err, "at most %d secrets a sandbox", SECRETSUB_MAX);
		goto fail;
	}
	if (n > 0 && secretstore_map(s, e, n, err) == -1)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		struct secretstore_item *it = &s->items[i];

		s->n = i + 1;
		if (secretstore_item(it, &e[i], err) == -1)
			goto fail;
		secretstore_forms(it, e[i].value, s->values, &at);
		/* A secret goes to its hosts on their ports alone: the proxy
		 * names a connection's "host:port" (mitm.h). */
		s->view[i] = (struct secretsub_secret){ it->name, it->echoes[0], it->placeholder,
		    (const char *const *)it->hostports, it->nhosts,
		    (const char *const *)it->headers, it->nheaders,
		    it->echoes, it->echo_lens, it->nechoes,
		    (const char *const *)it->query, it->nquery };
	}
	return s;
fail:
	secretstore_free(s);
	return NULL;
}

const struct secretsub_secret *
secretstore_secrets(const struct secretstore *s, size_t *n)
{
	*n = s != NULL ? s->n : 0;
	return s != NULL ? s->view : NULL;
}

bool
secretstore_covers(const struct secretstore *s, const char *host, uint16_t port)
{
	for (size_t i = 0; s != NULL && host != NULL && i < s->n; i++)
		for (size_t h = 0; h < s->items[i].nhosts; h++)
			if (s->items[i].ports[h] == port &&
			    strcasecmp(s->items[i].hostnames[h], host) == 0)
				return true;
	return false;
}

const char *const *
secretstore_hosts(const struct secretstore *s, size_t i, size_t *n)
{
	*n = i < s->n ? s->items[i].nhosts : 0;
	return i < s->n ? (const char *const *)s->items[i].hostports : NULL;
}
