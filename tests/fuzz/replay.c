/* Replays a fuzz target's committed corpus without libFuzzer, so that
 * `make check` runs every seed through the parser under the sanitizers.
 * Prints TAP: one result per corpus file. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_INPUT_MAX_BYTES (8 * 1024 * 1024)

static int
replay_names_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads PATH whole into a fresh buffer; NULL on failure. */
static uint8_t *
replay_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data;

	if (f == NULL)
		return NULL;
	data = malloc(REPLAY_INPUT_MAX_BYTES);
	if (data != NULL)
		*len = fread(data, 1, REPLAY_INPUT_MAX_BYTES, f);
	fclose(f);
	return data;
}

int
main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir");
	char dir[4096], path[8192];
	char **names = NULL;
	size_t nnames = 0, failed = 0;
	struct dirent *de;
	DIR *d;

	if (argc > 1)
		snprintf(dir, sizeof(dir), "%s", argv[1]);
	else
		snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/%s",
		    top != NULL ? top : ".", FUZZ_CORPUS_NAME);
	if ((d = opendir(dir)) == NULL) {
		printf("Bail out! cannot open corpus %s\n", dir);
		return 1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (nnames + 1) * sizeof(*names));
		names[nnames++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, nnames, sizeof(*names), replay_names_compare);
	printf("1..%zu\n", nnames);
	for (size_t i = 0; i < nnames; i++) {
		size_t len = 0;
		uint8_t *data;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		data = replay_read_file(path, &len);
		if (data == NULL) {
			printf("not ok %zu - %s (unreadable)\n", i + 1, names[i]);
			failed++;
		} else {
			LLVMFuzzerTestOneInput(data, len);
			printf("ok %zu - %s/%s\n", i + 1, FUZZ_CORPUS_NAME, names[i]);
		}
		free(data);
		free(names[i]);
	}
	free(names);
	return failed == 0 ? 0 : 1;
}
