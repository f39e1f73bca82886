/* KEY=VALUE option values (--label, --env, --selector) gathered into a
 * protobuf map<string,string> field, whatever the field's entry type. */
#ifndef CORRAL_CLI_MAP_H
#define CORRAL_CLI_MAP_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#define CLI_MAP_MAX 64                  /* pairs in one map */

/* The entries of one map field; each entry owns its key and value. */
struct cli_map {
	const ProtobufCMessageDescriptor *entry_desc;   /* e.g. ..._labels_entry__descriptor */
	ProtobufCMessage *entries[CLI_MAP_MAX];
	size_t n;
};

/* An empty map whose entries are messages of ENTRY_DESC, a map<string,string> entry. */
void cli_map_init(struct cli_map *m, const ProtobufCMessageDescriptor *entry_desc);
/* Frees every entry. */
void cli_map_clear(struct cli_map *m);

/* Adds ARG, KEY=VALUE, for the option named OPTION. 0, or CLI_EXIT_FAILED
 * with the reason printed (no '=', empty key, a key given twice, too many). */
int cli_map_add(struct cli_map *m, const char *arg, const char *option);
/* Adds each pair of LIST, K=V,K=V,... */
int cli_map_add_list(struct cli_map *m, const char *list, const char *option);

/* The entries, to assign to the field's pointer array (n_FIELD = m->n). */
void *cli_map_entries(struct cli_map *m);

#endif
