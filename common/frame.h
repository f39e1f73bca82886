/* The control socket's framing: 1 flag byte (always 0), a 4-byte big-endian
 * payload length, then the payload (one protobuf message). Works over plain
 * byte arrays, so a caller can feed it from read(2) or a libevent evbuffer.
 * Never exits, never logs: errors are returned as enum frame_status. */
#ifndef CORRAL_FRAME_H
#define CORRAL_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* Flag byte and length: the bytes before every payload. */
#define FRAME_HEADER_BYTES 5
/* The largest payload accepted or produced; a header announcing more is refused. */
#define FRAME_MAX_BYTES ((size_t)4 * 1024 * 1024)

enum frame_status {
	FRAME_NEED_MORE = 0,	/* not enough bytes yet for a header or a frame */
	FRAME_READY,		/* a whole header (or frame) is there */
	FRAME_ERR_FLAG,		/* the flag byte is not 0 */
	FRAME_ERR_TOO_LARGE,	/* the length is over FRAME_MAX_BYTES */
	FRAME_ERR_NOMEM,	/* out of memory while collecting a payload */
};

/* A fixed English phrase for STATUS. */
const char *frame_strerror(enum frame_status status);

/* Inspects the first LEN bytes of a stream: FRAME_NEED_MORE when LEN < 5,
 * FRAME_READY with *PAYLOAD_LEN set when DATA starts with a valid header,
 * else FRAME_ERR_FLAG or FRAME_ERR_TOO_LARGE (*PAYLOAD_LEN set to what the
 * header announced). Looks at no byte past the header. */
enum frame_status frame_header_parse(const uint8_t *data, size_t len, size_t *payload_len);

/* Writes the header for a PAYLOAD_LEN-byte payload into HDR; -1 (HDR
 * untouched) when PAYLOAD_LEN is over FRAME_MAX_BYTES. */
int frame_header_encode(uint8_t hdr[FRAME_HEADER_BYTES], size_t payload_len);

/* Writes header and payload into OUT (OUT_LEN bytes); returns the bytes
 * written, or 0 when the payload is too large or OUT too small. */
size_t frame_encode(const void *payload, size_t payload_len, uint8_t *out, size_t out_len);

/* An incremental decoder: bytes go in in arbitrary chunks, whole frames
 * come out one at a time. A bad header puts it in a failed state for good:
 * the connection it reads from is to be closed. */
struct frame_decoder;

/* A new decoder; NULL if out of memory. */
struct frame_decoder *frame_decoder_new(void);
/* Frees D (NULL is fine) and any payload it holds. */
void frame_decoder_free(struct frame_decoder *d);

/* Takes bytes from DATA (LEN of them) and sets *USED to how many it took.
 * It stops at the end of a frame: FRAME_READY means a frame is waiting
 * (frame_decoder_payload(), then frame_decoder_next() before feeding more;
 * feeding a ready decoder takes nothing); FRAME_NEED_MORE means every byte
 * was taken and no frame is complete; an error means D has failed
 * (frame_decoder_error() says why) and takes nothing more. */
enum frame_status frame_decoder_feed(struct frame_decoder *d, const uint8_t *data, size_t len,
    size_t *used);

/* The waiting frame's payload and its length (a zero-length payload gives a
 * non-NULL pointer); NULL when no frame is waiting. Valid until frame_decoder_next(). */
const uint8_t *frame_decoder_payload(const struct frame_decoder *d, size_t *len);

/* Drops the waiting frame, so that feeding can go on. */
void frame_decoder_next(struct frame_decoder *d);

/* The decoder's state: FRAME_READY when a frame waits, an error once it failed, else FRAME_NEED_MORE. */
enum frame_status frame_decoder_status(const struct frame_decoder *d);

/* Bytes D holds now (the payload allocated so far): a peer's half-sent
 * frame costs this much memory. */
size_t frame_decoder_held(const struct frame_decoder *d);

/* Why D failed, in one line with the numbers ("frame flag byte is 0x80,
 * expected 0"); NULL while it has not failed. */
const char *frame_decoder_error(const struct frame_decoder *d);

#endif
