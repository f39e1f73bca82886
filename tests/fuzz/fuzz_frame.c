/* Fuzz target for the control socket's input path: bytes from a peer go
 * through the frame decoder, and every whole frame is unpacked as the
 * first-frame Request and as a later ExecSandboxInput. Checks, besides the
 * sanitizers: feeding in odd-sized chunks gives the same frames as feeding
 * everything at once, and a message that unpacked packs and unpacks again. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/frame.h"
#include "common/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The most frames one input is decoded into; past it the rest is ignored. */
#define FUZZ_FRAMES_MAX 64

/* Aborts unless a packed copy of MSG unpacks again. */
static void
fuzz_repack(const ProtobufCMessage *msg, int is_request)
{
	const char *why = NULL;
	size_t len = 0;
	uint8_t *frame = wire_pack(msg, &len);
	Corral__Request *req;
	Corral__ExecSandboxInput *in;

	if (frame == NULL)
		abort();
	if (is_request) {
		if ((req = wire_request_unpack(frame + FRAME_HEADER_BYTES,
		    len - FRAME_HEADER_BYTES, &why)) == NULL)
			abort();
		corral__request__free_unpacked(req, NULL);
	} else {
		if ((in = wire_exec_input_unpack(frame + FRAME_HEADER_BYTES,
		    len - FRAME_HEADER_BYTES, &why)) == NULL)
			abort();
		corral__exec_sandbox_input__free_unpacked(in, NULL);
	}
	free(frame);
}

/* Unpacks one frame's payload the two ways a daemon reads client frames. */
static void
fuzz_unpack(const uint8_t *payload, size_t len)
{
	const char *why = NULL;
	Corral__Request *req = wire_request_unpack(payload, len, &why);
	Corral__ExecSandboxInput *in = wire_exec_input_unpack(payload, len, &why);

	if (req != NULL) {
		fuzz_repack(&req->base, 1);
		corral__request__free_unpacked(req, NULL);
	} else if (why == NULL) {
		abort();
	}
	if (in != NULL) {
		fuzz_repack(&in->base, 0);
		corral__exec_sandbox_input__free_unpacked(in, NULL);
	}
}

/* Feeds DATA to D, whole when SEED is 0, else in chunks of 1 to 256 bytes
 * whose sizes come from SEED. Records each frame's length in LENS, unpacks
 * it when UNPACK is set, and returns the number of frames. */
static size_t
fuzz_decode(struct frame_decoder *d, const uint8_t *data, size_t size, unsigned seed,
    size_t lens[FUZZ_FRAMES_MAX], int unpack)
{
	size_t off = 0, nframes = 0, chunk = seed;

	while (off < size && nframes < FUZZ_FRAMES_MAX) {
		size_t n = seed == 0 || size - off < chunk ? size - off : chunk;
		size_t used = 0, len = 0;
		enum frame_status st = frame_decoder_feed(d, data + off, n, &used);
		const uint8_t *payload;

		off += used;
		chunk = (chunk * 31 + seed) % 256 + 1;
		if (st != FRAME_READY) {
			if (st != FRAME_NEED_MORE || used != n)
				break;
			continue;
		}
		payload = frame_decoder_payload(d, &len);
		lens[nframes++] = len;
		if (unpack)
			fuzz_unpack(payload, len);
		frame_decoder_next(d);
	}
	return nframes;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_decoder *whole = frame_decoder_new();
	struct frame_decoder *chunked = frame_decoder_new();
	size_t lens_whole[FUZZ_FRAMES_MAX], lens_chunked[FUZZ_FRAMES_MAX];
	size_t n_whole, n_chunked;

	if (whole == NULL || chunked == NULL || size == 0)
		goto out;
	/* The chunk sizes come from the input itself, so corpus files are
	 * plain byte streams. */
	n_whole = fuzz_decode(whole, data, size, 0, lens_whole, 1);
	n_chunked = fuzz_decode(chunked, data, size, 1 + (data[size - 1] ^ (size & 0xff)),
	    lens_chunked, 0);
	/* Chunking must change nothing: the same frames, the same end state. */
	if (n_whole != n_chunked ||
	    memcmp(lens_whole, lens_chunked, n_whole * sizeof(lens_whole[0])) != 0)
		abort();
	if (n_whole < FUZZ_FRAMES_MAX &&
	    frame_decoder_status(whole) != frame_decoder_status(chunked))
		abort();
out:
	frame_decoder_free(whole);
	frame_decoder_free(chunked);
	return 0;
}
