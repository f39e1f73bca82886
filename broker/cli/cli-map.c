/* KEY=VALUE option values into protobuf map fields, through protobuf-c's
 * descriptors: every map<string,string> entry is {key = 1; value = 2}. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "broker/cli/cli.h"
#include "broker/cli/cli-map.h"
#include "common/xmalloc.h"

void
cli_map_init(struct cli_map *m, const ProtobufCMessageDescriptor *entry_desc)
{
	memset(m, 0, sizeof(*m));
	m->entry_desc = entry_desc;
}

/* The string field number ID of entry E (1: key, 2: value). */
static char **
cli_map_field(const struct cli_map *m, ProtobufCMessage *e, unsigned id)
{
	const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(m->entry_desc, id);

	return (char **)(void *)((char *)e + f->offset);
}

void
cli_map_clear(struct cli_map *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(*cli_map_field(m, m->entries[i], 1));
		free(*cli_map_field(m, m->entries[i], 2));
		free(m->entries[i]);
	}
	m->n = 0;
}

/* True when KEY is already in M. */
static int
cli_map_has(const struct cli_map *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(*cli_map_field(m, m->entries[i], 1), key) == 0)
			return 1;
	return 0;
}

/* Adds the pair PAIR (LEN bytes, not NUL-terminated) of ARG. */
static int
cli_map_add_n(struct cli_map *m, const char *pair, size_t len, const char *arg,
    const char *option)
{
	const char *eq = memchr(pair, '=', len);
	ProtobufCMessage *e;
	char *key;

	if (eq == NULL || eq == pair)
		return cli_fail("%s %s: expected KEY=VALUE with a non-empty KEY", option, arg);
	if (m->n == CLI_MAP_MAX)
		return cli_fail("too many %s pairs (at most %d)", option, CLI_MAP_MAX);
	key = xstrndup(pair, (size_t)(eq - pair));
	if (cli_map_has(m, key)) {
		cli_fail("%s %s: the key '%s' is given twice", option, arg, key);
		free(key);
		return CLI_EXIT_FAILED;
	}
	e = xcalloc(1, m->entry_desc->sizeof_message);
	protobuf_c_message_init(m->entry_desc, e);
	*cli_map_field(m, e, 1) = key;
	*cli_map_field(m, e, 2) = xstrndup(eq + 1, len - (size_t)(eq - pair) - 1);
	m->entries[m->n++] = e;
	return 0;
}

int
cli_map_add(struct cli_map *m, const char *arg, const char *option)
{
	return cli_map_add_n(m, arg, strlen(arg), arg, option);
}

int
cli_map_add_list(struct cli_map *m, const char *list, const char *option)
{
	const char *p = list, *comma;
	int rc;

	for (;;) {
		comma = strchr(p, ',');
		rc = cli_map_add_n(m, p, comma != NULL ? (size_t)(comma - p) : strlen(p), list,
		    option);
		if (rc != 0 || comma == NULL)
			return rc;
		p = comma + 1;
	}
}

void *
cli_map_entries(struct cli_map *m)
{
	return m->entries;
}
