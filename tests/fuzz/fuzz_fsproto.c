/* Fuzz target for the file API's results (common/fsproto.h), which the
 * broker reads from a memfd that a child of the sandbox's user wrote. The
 * input's first byte picks the operation (read, write, edit, list, grep,
 * or one that does not exist); the rest is the result. Besides the
 * sanitizers it aborts when:
 * - a decoded result breaks the header's bounds (status, counts, caps,
 *   types, a match count below the matches kept), or a text it points to
 *   is not inside the input;
 * - the result written again with fsproto_put_*() is not the input (the
 *   decoder takes nothing more and nothing less than the format);
 * - a refused result keeps anything. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_OPS (FSPROTO_OP_MAX + 1)

static const uint8_t *fuzz_data;
static size_t fuzz_size;

/* Aborts unless the N bytes at P lie inside the input. */
static void
fuzz_check_span(const char *p, size_t n)
{
	uintptr_t u = (uintptr_t)p, lo = (uintptr_t)fuzz_data;

	if (n == 0)
		return;
	if (u < lo || u > lo + fuzz_size || n > lo + fuzz_size - u)
		abort();
}

/* Writes R, a decoded result of OP, back in the format. */
static void
fuzz_encode(const struct fsproto_result *r, enum fsproto_op op, struct fsproto_out *o)
{
	fsproto_put_u32(o, (uint32_t)r->status);
	if (r->status != FSPROTO_OK) {
		fsproto_put_bytes(o, r->message, r->message_len);
		return;
	}
	if (op == FSPROTO_READ) {
		fsproto_put_u32(o, r->truncated);
		fsproto_put_bytes(o, r->content, r->content_len);
	} else if (op == FSPROTO_WRITE || op == FSPROTO_EDIT) {
		fsproto_put_u64(o, r->bytes_written);
		fsproto_put_u32(o, r->created);
	} else if (op == FSPROTO_LIST) {
		fsproto_put_u32(o, (uint32_t)r->n_entries);
		for (size_t i = 0; i < r->n_entries; i++) {
			fsproto_put_bytes(o, r->entries[i].name, r->entries[i].name_len);
			fsproto_put_u32(o, (uint32_t)r->entries[i].type);
			fsproto_put_u64(o, r->entries[i].size);
		}
	} else if (op == FSPROTO_GREP) {
		fsproto_put_u32(o, r->count);
		fsproto_put_u32(o, (uint32_t)r->n_matches);
		for (size_t i = 0; i < r->n_matches; i++) {
			fsproto_put_bytes(o, r->matches[i].path, r->matches[i].path_len);
			fsproto_put_u32(o, r->matches[i].line);
			fsproto_put_bytes(o, r->matches[i].text, r->matches[i].text_len);
		}
	}
}

/* Checks the bounds the header promises of a decoded result. */
static void
fuzz_check_result(const struct fsproto_result *r, enum fsproto_op op)
{
	if ((unsigned)r->status > FSPROTO_STATUS_MAX)
		abort();
	if (r->status != FSPROTO_OK) {
		fuzz_check_span(r->message, r->message_len);
		if (r->n_entries != 0 || r->n_matches != 0)
			abort();
		return;
	}
	if (op < FSPROTO_READ || op > FSPROTO_OP_MAX)
		abort();
	fuzz_check_span(r->content, r->content_len);
	if (r->n_entries > FSPROTO_LIST_ENTRIES_MAX || r->n_matches > FSPROTO_GREP_MATCHES_MAX ||
	    r->n_matches > r->count)
		abort();
	for (size_t i = 0; i < r->n_entries; i++) {
		fuzz_check_span(r->entries[i].name, r->entries[i].name_len);
		if ((unsigned)r->entries[i].type > FSPROTO_TYPE_OTHER ||
		    fsproto_type_name(r->entries[i].type) == NULL)
			abort();
	}
	for (size_t i = 0; i < r->n_matches; i++) {
		fuzz_check_span(r->matches[i].path, r->matches[i].path_len);
		fuzz_check_span(r->matches[i].text, r->matches[i].text_len);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fsproto_result r;
	struct fsproto_out o;
	enum fsproto_op op;

	if (size == 0)
		return 0;
	op = (enum fsproto_op)(data[0] % FUZZ_OPS);
	if (op == 0)
		op = (enum fsproto_op)(FSPROTO_OP_MAX + 1);
	fuzz_data = data + 1;
	fuzz_size = size - 1;
	if (fsproto_result_decode(fuzz_data, fuzz_size, op, &r) == -1) {
		if (errno != EBADMSG || r.entries != NULL || r.matches != NULL ||
		    r.n_entries != 0 || r.n_matches != 0)
			abort();
		return 0;
	}
	fuzz_check_result(&r, op);
	fsproto_out_init(&o);
	fuzz_encode(&r, op, &o);
	if (o.overflow || o.len != fuzz_size || (o.len > 0 && memcmp(o.data, fuzz_data, o.len) != 0))
		abort();
	fsproto_out_clear(&o);
	fsproto_result_clear(&r);
	return 0;
}
