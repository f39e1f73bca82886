/* The control socket's framing: flag byte, big-endian length, payload. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/frame.h"

/* The first allocation for a payload; it doubles as bytes arrive. */
#define FRAME_GROW_MIN_BYTES ((size_t)4096)
/* Room for the decoder's one-line error message. */
#define FRAME_ERROR_MAX_BYTES 128

struct frame_decoder {
	enum frame_status status;	/* NEED_MORE, READY, or the error it failed with */
	uint8_t hdr[FRAME_HEADER_BYTES];	/* the header being collected */
	size_t hdr_len;			/* header bytes collected so far */
	size_t payload_len;		/* what the header announced (once hdr_len is 5) */
	uint8_t *payload;		/* payload bytes collected so far; NULL before the first */
	size_t have;			/* payload bytes collected */
	size_t cap;			/* bytes allocated at payload */
	char error[FRAME_ERROR_MAX_BYTES];	/* why it failed; empty until then */
};

const char *
frame_strerror(enum frame_status status)
{
	switch (status) {
	case FRAME_NEED_MORE:
		return "incomplete frame";
	case FRAME_READY:
		return "frame ready";
	case FRAME_ERR_FLAG:
		return "frame flag byte is not 0";
	case FRAME_ERR_TOO_LARGE:
		return "frame is over the 4 MiB limit";
	case FRAME_ERR_NOMEM:
		return "out of memory";
	}
	return "unknown frame status";
}

enum frame_status
frame_header_parse(const uint8_t *data, size_t len, size_t *payload_len)
{
	uint32_t n;

	if (len < FRAME_HEADER_BYTES)
		return FRAME_NEED_MORE;
	n = (uint32_t)data[1] << 24 | (uint32_t)data[2] << 16 |
	    (uint32_t)data[3] << 8 | (uint32_t)data[4];
	*payload_len = n;
	/* A set flag means compression in gRPC's framing; corral never
	 * compresses, so any flag is a peer speaking something else. */
	if (data[0] != 0)
		return FRAME_ERR_FLAG;
	if (n > FRAME_MAX_BYTES)
		return FRAME_ERR_TOO_LARGE;
	return FRAME_READY;
}

int
frame_header_encode(uint8_t hdr[FRAME_HEADER_BYTES], size_t payload_len)
{
	if (payload_len > FRAME_MAX_BYTES)
		return -1;
	hdr[0] = 0;
	hdr[1] = (uint8_t)(payload_len >> 24);
	hdr[2] = (uint8_t)(payload_len >> 16);
	hdr[3] = (uint8_t)(payload_len >> 8);
	hdr[4] = (uint8_t)payload_len;
	return 0;
}

size_t
frame_encode(const void *payload, size_t payload_len, uint8_t *out, size_t out_len)
{
	if (payload_len > FRAME_MAX_BYTES || out_len < FRAME_HEADER_BYTES + payload_len)
		return 0;
	frame_header_encode(out, payload_len);
	if (payload_len > 0)
		memcpy(out + FRAME_HEADER_BYTES, payload, payload_len);
	return FRAME_HEADER_BYTES + payload_len;
}

struct frame_decoder *
frame_decoder_new(void)
{
	struct frame_decoder *d = calloc(1, sizeof(*d));

	if (d != NULL)
		d->status = FRAME_NEED_MORE;
	return d;
}

/* Frees what a payload held, wiped first: a frame may carry a secret's
 * value (a create's --secret), and freed heap is no place for one. */
static void
frame_decoder_drop_payload(struct frame_decoder *d)
{
	if (d->payload != NULL)
		explicit_bzero(d->payload, d->cap);
	free(d->payload);
	d->payload = NULL;
	d->cap = 0;
}

void
frame_decoder_free(struct frame_decoder *d)
{
	if (d == NULL)
		return;
	frame_decoder_drop_payload(d);
	free(d);
}

/* Puts D in its failed state with STATUS; later feeds take nothing. */
static void
frame_decoder_fail(struct frame_decoder *d, enum frame_status status)
{
	d->status = status;
	switch (status) {
	case FRAME_ERR_FLAG:
		snprintf(d->error, sizeof(d->error),
		    "frame flag byte is 0x%02x, expected 0", d->hdr[0]);
		break;
	case FRAME_ERR_TOO_LARGE:
		snprintf(d->error, sizeof(d->error),
		    "frame announces %zu bytes, over the %zu-byte limit",
		    d->payload_len, FRAME_MAX_BYTES);
		break;
	default:
		snprintf(d->error, sizeof(d->error),
		    "out of memory collecting a %zu-byte frame", d->payload_len);
		break;
	}
}

/* Collects header bytes; once the header is whole, checks it. Returns the bytes taken. */
static size_t
frame_decoder_take_header(struct frame_decoder *d, const uint8_t *data, size_t len)
{
	size_t n = FRAME_HEADER_BYTES - d->hdr_len;
	enum frame_status st;

	if (n > len)
		n = len;
	if (n > 0)
		memcpy(d->hdr + d->hdr_len, data, n);
	d->hdr_len += n;
	st = frame_header_parse(d->hdr, d->hdr_len, &d->payload_len);
	if (st == FRAME_ERR_FLAG || st == FRAME_ERR_TOO_LARGE)
		frame_decoder_fail(d, st);
	else if (st == FRAME_READY && d->payload_len == 0)
		d->status = FRAME_READY;
	return n;
}

/* Makes room for WANT payload bytes in all. The buffer grows with what
 * has arrived, not with what the header announced: a peer cannot make the
 * daemon hold 4 MiB by sending a 5-byte header and then nothing. */
static int
frame_decoder_reserve(struct frame_decoder *d, size_t want)
{
	size_t cap = d->cap == 0 ? FRAME_GROW_MIN_BYTES : d->cap;
	uint8_t *p;

	if (want <= d->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	if (cap > d->payload_len)
		cap = d->payload_len;
	/* Not realloc: the old block is wiped before it goes. */
	if ((p = malloc(cap)) == NULL)
		return -1;
	if (d->have > 0)
		memcpy(p, d->payload, d->have);
	frame_decoder_drop_payload(d);
	d->payload = p;
	d->cap = cap;
	return 0;
}

/* Collects payload bytes until the announced length. Returns the bytes taken. */
static size_t
frame_decoder_take_payload(struct frame_decoder *d, const uint8_t *data, size_t len)
{
	size_t n = d->payload_len - d->have;

	if (n > len)
		n = len;
	if (n == 0)
		return 0;
	if (frame_decoder_reserve(d, d->have + n) == -1) {
		frame_decoder_fail(d, FRAME_ERR_NOMEM);
		return 0;
	}
	memcpy(d->payload + d->have, data, n);
	d->have += n;
	if (d->have == d->payload_len)
		d->status = FRAME_READY;
	return n;
}

enum frame_status
frame_decoder_feed(struct frame_decoder *d, const uint8_t *data, size_t len, size_t *used)
{
	size_t off = 0;

	*used = 0;
	if (d->status != FRAME_NEED_MORE || len == 0)
		return d->status;
	if (d->hdr_len < FRAME_HEADER_BYTES)
		off = frame_decoder_take_header(d, data, len);
	if (d->status == FRAME_NEED_MORE && d->hdr_len == FRAME_HEADER_BYTES)
		off += frame_decoder_take_payload(d, data + off, len - off);
	*used = off;
	return d->status;
}

const uint8_t *
frame_decoder_payload(const struct frame_decoder *d, size_t *len)
{
	if (d->status != FRAME_READY)
		return NULL;
	*len = d->payload_len;
	return d->payload != NULL ? d->payload : d->hdr;
}

void
frame_decoder_next(struct frame_decoder *d)
{
	if (d->status != FRAME_READY)
		return;
	frame_decoder_drop_payload(d);
	d->have = 0;
	d->hdr_len = 0;
	d->payload_len = 0;
	d->status = FRAME_NEED_MORE;
}

enum frame_status
frame_decoder_status(const struct frame_decoder *d)
{
	return d->status;
}

const char *
frame_decoder_error(const struct frame_decoder *d)
{
	return d->error[0] != '\0' ? d->error : NULL;
}

size_t
frame_decoder_held(const struct frame_decoder *d)
{
	return d != NULL ? d->cap : 0;
}
