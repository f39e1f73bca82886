/* The file API's result format, written inside the sandbox and read by
 * the broker; see fsproto.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsproto.h"

#define FSOP_OUT_CHUNK_BYTES 4096

void
fsproto_out_init(struct fsproto_out *o)
{
	memset(o, 0, sizeof(*o));
}

void
fsproto_out_clear(struct fsproto_out *o)
{
	free(o->data);
	fsproto_out_init(o);
}

static void
fsproto_put(struct fsproto_out *o, const void *p, size_t n)
{
	size_t cap = o->cap == 0 ? FSOP_OUT_CHUNK_BYTES : o->cap;
	unsigned char *grown;

	if (o->overflow || n > FSPROTO_OUT_MAX_BYTES - o->len) {
		o->overflow = true;
		return;
	}
	while (cap < o->len + n)
		cap *= 2;
	if (cap > o->cap) {
		grown = realloc(o->data, cap);
		if (grown == NULL) {
			o->overflow = true;
			return;
		}
		o->data = grown;
		o->cap = cap;
	}
	memcpy(o->data + o->len, p, n);
	o->len += n;
}

void
fsproto_put_u32(struct fsproto_out *o, uint32_t v)
{
	fsproto_put(o, &v, sizeof(v));
}

void
fsproto_put_u64(struct fsproto_out *o, uint64_t v)
{
	fsproto_put(o, &v, sizeof(v));
}

void
fsproto_put_bytes(struct fsproto_out *o, const void *p, size_t n)
{
	fsproto_put_u32(o, (uint32_t)n);
	fsproto_put(o, p, n);
}

int
fsproto_out_write(const struct fsproto_out *out, int fd)
{
	size_t done = 0;
	ssize_t n;

	if (out->overflow) {
		errno = EMSGSIZE;
		return -1;
	}
	while (done < out->len) {
		n = write(fd, out->data + done, out->len - done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* A cursor over a result being decoded. */
struct fsproto_reader {
	const unsigned char *p;
	size_t len, off;
	bool bad;
};

/* The next SIZE bytes, consumed; NULL (and R marked bad) when fewer are left. */
static const unsigned char *
fsproto_take(struct fsproto_reader *r, size_t size)
{
	const unsigned char *p;

	if (r->bad || r->len - r->off < size) {
		r->bad = true;
		return NULL;
	}
	p = r->p + r->off;
	r->off += size;
	return p;
}

static uint32_t
fsproto_get_u32(struct fsproto_reader *r)
{
	const unsigned char *p = fsproto_take(r, sizeof(uint32_t));
	uint32_t v = 0;

	if (p != NULL)
		memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t
fsproto_get_u64(struct fsproto_reader *r)
{
	const unsigned char *p = fsproto_take(r, sizeof(uint64_t));
	uint64_t v = 0;

	if (p != NULL)
		memcpy(&v, p, sizeof(v));
	return v;
}

static const char *
fsproto_get_bytes(struct fsproto_reader *r, size_t *n)
{
	uint32_t len = fsproto_get_u32(r);
	const unsigned char *p = fsproto_take(r, len);

	*n = p != NULL ? len : 0;
	return p != NULL ? (const char *)p : "";
}

/* The N records of a list; N was checked against what is left. */
static int
fsproto_decode_list(struct fsproto_reader *rd, struct fsproto_result *r)
{
	uint32_t n = fsproto_get_u32(rd), t;
	size_t i;

	if (rd->bad || n > FSPROTO_LIST_ENTRIES_MAX)
		return -1;
	r->entries = calloc(n > 0 ? n : 1, sizeof(*r->entries));
	if (r->entries == NULL)
		return -1;
	r->n_entries = n;
	for (i = 0; i < n && !rd->bad; i++) {
		r->entries[i].name = fsproto_get_bytes(rd, &r->entries[i].name_len);
		t = fsproto_get_u32(rd);
		r->entries[i].type = t <= FSPROTO_TYPE_OTHER ? (enum fsproto_type)t : FSPROTO_TYPE_OTHER;
		r->entries[i].size = fsproto_get_u64(rd);
		rd->bad |= t > FSPROTO_TYPE_OTHER;
	}
	return 0;
}

static int
fsproto_decode_grep(struct fsproto_reader *rd, struct fsproto_result *r)
{
	uint32_t n;
	size_t i;

	r->count = fsproto_get_u32(rd);
	n = fsproto_get_u32(rd);
	if (rd->bad || n > FSPROTO_GREP_MATCHES_MAX || n > r->count)
		return -1;
	r->matches = calloc(n > 0 ? n : 1, sizeof(*r->matches));
	if (r->matches == NULL)
		return -1;
	r->n_matches = n;
	for (i = 0; i < n && !rd->bad; i++) {
		r->matches[i].path = fsproto_get_bytes(rd, &r->matches[i].path_len);
		r->matches[i].line = fsproto_get_u32(rd);
		r->matches[i].text = fsproto_get_bytes(rd, &r->matches[i].text_len);
	}
	return 0;
}

/* The body of a successful result of OP. */
static int
fsproto_decode_ok(struct fsproto_reader *rd, enum fsproto_op op, struct fsproto_result *r)
{
	uint32_t flag;

	switch (op) {
	case FSPROTO_READ:
		flag = fsproto_get_u32(rd);
		r->truncated = flag == 1;
		r->content = fsproto_get_bytes(rd, &r->content_len);
		return flag > 1 ? -1 : 0;
	case FSPROTO_WRITE:
	case FSPROTO_EDIT:
		r->bytes_written = fsproto_get_u64(rd);
		flag = fsproto_get_u32(rd);
		r->created = flag == 1;
		return flag > 1 ? -1 : 0;
	case FSPROTO_LIST:
		return fsproto_decode_list(rd, r);
	case FSPROTO_GREP:
		return fsproto_decode_grep(rd, r);
	}
	return -1;
}

int
fsproto_result_decode(const void *data, size_t len, enum fsproto_op op, struct fsproto_result *r)
{
	struct fsproto_reader rd = { .p = data, .len = len };
	uint32_t status;
	int rc;

	memset(r, 0, sizeof(*r));
	status = fsproto_get_u32(&rd);
	if (rd.bad || status > FSPROTO_STATUS_MAX)
		goto bad;
	r->status = (enum fsproto_status)status;
	if (status != FSPROTO_OK) {
		r->message = fsproto_get_bytes(&rd, &r->message_len);
		rc = 0;
	} else {
		rc = fsproto_decode_ok(&rd, op, r);
	}
	if (rc == 0 && !rd.bad && rd.off == rd.len)
		return 0;
bad:
	fsproto_result_clear(r);
	errno = EBADMSG;
	return -1;
}

void
fsproto_result_clear(struct fsproto_result *r)
{
	free(r->entries);
	free(r->matches);
	memset(r, 0, sizeof(*r));
}

const char *
fsproto_type_name(enum fsproto_type t)
{
	static const char *const names[] = {
		[FSPROTO_TYPE_FILE] = "file",
		[FSPROTO_TYPE_DIR] = "dir",
		[FSPROTO_TYPE_SYMLINK] = "symlink",
		[FSPROTO_TYPE_OTHER] = "other",
	};

	return (unsigned)t <= FSPROTO_TYPE_OTHER ? names[t] : "other";
}
