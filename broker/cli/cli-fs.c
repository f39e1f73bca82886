/* corral fs read|write|edit|list|grep: the file API (corral(1)).
 * Relative paths are taken from the sandbox's workspace; the daemon runs
 * each operation inside the sandbox, under the write guard. */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/cli/cli.h"
#include "common/fsproto.h"
#include "common/buf.h"
#include "common/corral.pb-c.h"
#include "common/json.h"

#define CLI_FS_JSON_MAX_BYTES (8 * 1024 * 1024)        /* a read of 1 MiB, escaped */
#define CLI_FS_STDIN_CHUNK_BYTES 8192

/* What a verb was given: its positional words and options. */
struct cli_fs_args {
	const char *words[3];
	int n_words;
	bool json;
	const char *content;            /* write: --content, else stdin */
	const char *old_text, *new_text;        /* edit */
};

/* Parses VERB's options and 1 to MAX positional words (MIN at least). */
static int
cli_fs_parse(int argc, char **argv, const char *verb, int min, int max, struct cli_fs_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "content", required_argument, NULL, 'c' },
		{ "old", required_argument, NULL, 'o' },
		{ "new", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_cmd *cmd = cli_find(verb);
	int opt;

	memset(a, 0, sizeof(*a));
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'j': a->json = true; break;
		case 'c': a->content = optarg; break;
		case 'o': a->old_text = optarg; break;
		case 'n': a->new_text = optarg; break;
		default: return cli_usage(cmd);
		}
	}
	/* Each verb takes only the options its usage names. */
	if ((a->content != NULL && strstr(cmd->usage, "--content") == NULL) ||
	    (a->old_text != NULL && strstr(cmd->usage, "--old") == NULL) ||
	    (a->new_text != NULL && strstr(cmd->usage, "--new") == NULL))
		return cli_usage(cmd);
	a->n_words = argc - optind;
	if (a->n_words < min || a->n_words > max)
		return cli_usage(cmd);
	for (int i = 0; i < a->n_words; i++)
		a->words[i] = argv[optind + i];
	return cli_check_name(a->words[0]);
}

/* Prints an answer of the kind its verb asked for, plainly or as JSON. */
typedef int (*cli_fs_print_fn)(const Corral__Response *resp, bool json);

/* Sends REQ, checks the answer is of the kind WANT and prints it with PRINT. */
static int
cli_fs_run(struct cli *cli, const Corral__Request *req, Corral__Response__ResponseCase want,
    cli_fs_print_fn print, bool json)
{
	Corral__Response *resp;
	int rc = cli_call(cli, req, &resp);

	if (rc != CLI_EXIT_OK)
		return rc;
	if (resp->response_case != want)
		rc = cli_fail("corrald sent an unexpected answer");
	else
		rc = print(resp, json);
	corral__response__free_unpacked(resp, NULL);
	return rc;
}

/* The content read, as is, or JSON; a note when it was cut short. */
static int
cli_fs_print_read(const Corral__Response *resp, bool json)
{
	const Corral__FsReadReply *r = resp->fs_read;
	struct json *j;

	if (!json) {
		fwrite(r->content.data, 1, r->content.len, stdout);
		if (r->truncated)
			fprintf(stderr, "corral: %s: only the first %zu bytes were read\n",
			    r->path, r->content.len);
		return CLI_EXIT_OK;
	}
	j = json_new(CLI_FS_JSON_MAX_BYTES);
	json_object_begin(j);
	json_kv_string(j, "path", r->path);
	json_key(j, "content");
	json_str_n(j, (const char *)r->content.data, r->content.len);
	json_kv_bool(j, "truncated", r->truncated);
	json_object_end(j);
	return cli_print_json(j);
}

int
cli_fs_read(struct cli *cli, int argc, char **argv)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__FsRead rd = CORRAL__FS_READ__INIT;
	struct cli_fs_args a;
	int rc;

	if ((rc = cli_fs_parse(argc, argv, "fs read", 2, 2, &a)) != 0)
		return rc;
	rd.sandbox = (char *)(uintptr_t)a.words[0];
	rd.path = (char *)(uintptr_t)a.words[1];
	req.request_case = CORRAL__REQUEST__REQUEST_FS_READ;
	req.fs_read = &rd;
	return cli_fs_run(cli, &req, CORRAL__RESPONSE__RESPONSE_FS_READ, cli_fs_print_read, a.json);
}

/* Standard input, whole, up to FSPROTO_WRITE_MAX_BYTES; NULL (said why) when
 * larger or unreadable. */
static char *
cli_fs_stdin(size_t *len)
{
	struct buf *b = buf_new(FSPROTO_WRITE_MAX_BYTES);
	char chunk[CLI_FS_STDIN_CHUNK_BYTES];
	char *data = NULL;
	size_t n;
	bool ok = true;

	while (ok && (n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
		ok = buf_append(b, chunk, n) == 0;
	if (!ok)
		cli_fail("standard input: larger than a write may hold (%d bytes)",
		    FSPROTO_WRITE_MAX_BYTES);
	else if (ferror(stdin))
		cli_fail("standard input: read error");
	else
		data = buf_steal(b, len);
	buf_free(b);
	return data;
}

/* The answer of a write or an edit, as VERB ("wrote", "edited"). */
static int
cli_fs_print_written(const Corral__FsWriteReply *w, bool json, const char *verb)
{
	struct json *j;

	if (!json) {
		printf("%s %s: %llu bytes%s\n", verb, cli_text(w->path),
		    (unsigned long long)w->bytes_written, w->created ? " (created)" : "");
		return CLI_EXIT_OK;
	}
	j = json_new(CLI_FS_JSON_MAX_BYTES);
	json_object_begin(j);
	json_kv_string(j, "path", w->path);
	json_kv_uint(j, "bytes_written", w->bytes_written);
	json_kv_bool(j, "created", w->created);
	json_object_end(j);
	return cli_print_json(j);
}

static int
cli_fs_print_wrote(const Corral__Response *resp, bool json)
{
	return cli_fs_print_written(resp->fs_write, json, "wrote");
}

static int
cli_fs_print_edited(const Corral__Response *resp, bool json)
{
	return cli_fs_print_written(resp->fs_write, json, "edited");
}

int
cli_fs_write(struct cli *cli, int argc, char **argv)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__FsWrite wr = CORRAL__FS_WRITE__INIT;
	struct cli_fs_args a;
	char *in = NULL;
	size_t len = 0;
	int rc;

	if ((rc = cli_fs_parse(argc, argv, "fs write", 2, 2, &a)) != 0)
		return rc;
	if (a.content == NULL && (in = cli_fs_stdin(&len)) == NULL)
		return CLI_EXIT_FAILED;
	wr.sandbox = (char *)(uintptr_t)a.words[0];
	wr.path = (char *)(uintptr_t)a.words[1];
	wr.content.data = (uint8_t *)(uintptr_t)(in != NULL ? in : a.content);
	wr.content.len = in != NULL ? len : strlen(a.content);
	req.request_case = CORRAL__REQUEST__REQUEST_FS_WRITE;
	req.fs_write = &wr;
	rc = cli_fs_run(cli, &req, CORRAL__RESPONSE__RESPONSE_FS_WRITE, cli_fs_print_wrote, a.json);
	free(in);
	return rc;
}

int
cli_fs_edit(struct cli *cli, int argc, char **argv)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__FsEdit ed = CORRAL__FS_EDIT__INIT;
	struct cli_fs_args a;
	int rc;

	if ((rc = cli_fs_parse(argc, argv, "fs edit", 2, 2, &a)) != 0)
		return rc;
	if (a.old_text == NULL || a.new_text == NULL)
		return cli_usage(cli_find("fs edit"));
	ed.sandbox = (char *)(uintptr_t)a.words[0];
	ed.path = (char *)(uintptr_t)a.words[1];
	ed.old_text = (char *)(uintptr_t)a.old_text;
	ed.new_text = (char *)(uintptr_t)a.new_text;
	req.request_case = CORRAL__REQUEST__REQUEST_FS_EDIT;
	req.fs_edit = &ed;
	return cli_fs_run(cli, &req, CORRAL__RESPONSE__RESPONSE_FS_WRITE, cli_fs_print_edited,
	    a.json);
}

/* The entries: one per line (a folder's name ends with '/'), or JSON. */
static int
cli_fs_print_list(const Corral__Response *resp, bool json)
{
	const Corral__FsListReply *l = resp->fs_list;
	struct json *j;
	size_t i;

	if (!json) {
		for (i = 0; i < l->n_entries; i++)
			printf("%s%s\n", cli_text(l->entries[i]->name),
			    strcmp(l->entries[i]->type, "dir") == 0 ? "/" : "");
		return CLI_EXIT_OK;
	}
	j = json_new(CLI_FS_JSON_MAX_BYTES);
	json_array_begin(j);
	for (i = 0; i < l->n_entries; i++) {
		json_object_begin(j);
		json_kv_string(j, "name", l->entries[i]->name);
		json_kv_string(j, "type", l->entries[i]->type);
		json_kv_uint(j, "size", l->entries[i]->size);
		json_object_end(j);
	}
	json_array_end(j);
	return cli_print_json(j);
}

int
cli_fs_list(struct cli *cli, int argc, char **argv)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__FsList ls = CORRAL__FS_LIST__INIT;
	struct cli_fs_args a;
	int rc;

	if ((rc = cli_fs_parse(argc, argv, "fs list", 1, 2, &a)) != 0)
		return rc;
	ls.sandbox = (char *)(uintptr_t)a.words[0];
	ls.path = (char *)(uintptr_t)(a.n_words > 1 ? a.words[1] : "");
	req.request_case = CORRAL__REQUEST__REQUEST_FS_LIST;
	req.fs_list = &ls;
	return cli_fs_run(cli, &req, CORRAL__RESPONSE__RESPONSE_FS_LIST, cli_fs_print_list, a.json);
}

/* The matches as path:line:text, or JSON; a note when some were left out. */
static int
cli_fs_print_grep(const Corral__Response *resp, bool json)
{
	const Corral__FsGrepReply *g = resp->fs_grep;
	struct json *j;
	size_t i;

	if (!json) {
		for (i = 0; i < g->n_matches; i++)
			printf("%s:%u:%s\n", cli_text(g->matches[i]->path), g->matches[i]->line,
			    cli_text(g->matches[i]->text));
		if (g->count > g->n_matches)
			fprintf(stderr, "corral: %u matches; the first %zu shown\n", g->count,
			    g->n_matches);
		return CLI_EXIT_OK;
	}
	j = json_new(CLI_FS_JSON_MAX_BYTES);
	json_object_begin(j);
	json_kv_uint(j, "count", g->count);
	json_key(j, "matches");
	json_array_begin(j);
	for (i = 0; i < g->n_matches; i++) {
		json_object_begin(j);
		json_kv_string(j, "path", g->matches[i]->path);
		json_kv_uint(j, "line", g->matches[i]->line);
		json_kv_string(j, "text", g->matches[i]->text);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
	return cli_print_json(j);
}

int
cli_fs_grep(struct cli *cli, int argc, char **argv)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__FsGrep gr = CORRAL__FS_GREP__INIT;
	struct cli_fs_args a;
	int rc;

	if ((rc = cli_fs_parse(argc, argv, "fs grep", 2, 3, &a)) != 0)
		return rc;
	gr.sandbox = (char *)(uintptr_t)a.words[0];
	gr.pattern = (char *)(uintptr_t)a.words[1];
	gr.path = (char *)(uintptr_t)(a.n_words > 2 ? a.words[2] : "");
	req.request_case = CORRAL__REQUEST__REQUEST_FS_GREP;
	req.fs_grep = &gr;
	return cli_fs_run(cli, &req, CORRAL__RESPONSE__RESPONSE_FS_GREP, cli_fs_print_grep, a.json);
}
