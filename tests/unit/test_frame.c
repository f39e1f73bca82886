/* Unit tests for common/frame: the header, the 4 MiB cap, the incremental
 * decoder. realloc is wrapped (-Wl,--wrap=realloc) so the tests can see
 * what the decoder allocates and make an allocation fail. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/frame.h"

/* The decoder grows a payload with malloc (the old block is wiped, never
 * realloc'd): each growth is one call here. */
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);

static size_t realloc_calls;		/* growths since the last counting_reset() */
static size_t realloc_largest;		/* the largest size asked for since then */
static int realloc_fail_next;		/* make the next growth fail */

void *
__wrap_malloc(size_t size)
{
	realloc_calls++;
	if (size > realloc_largest)
		realloc_largest = size;
	if (realloc_fail_next) {
		realloc_fail_next = 0;
		return NULL;
	}
	return __real_malloc(size);
}

static void
counting_reset(void)
{
	realloc_calls = 0;
	realloc_largest = 0;
	realloc_fail_next = 0;
}

static int
setup_decoder(void **state)
{
	counting_reset();
	*state = frame_decoder_new();
	return *state == NULL ? -1 : 0;
}

static int
teardown_decoder(void **state)
{
	frame_decoder_free(*state);
	return 0;
}

/* Makes the header for PAYLOAD_LEN, which the test knows to be within the cap. */
static void
make_header(uint8_t hdr[FRAME_HEADER_BYTES], size_t payload_len)
{
	assert_int_equal(frame_header_encode(hdr, payload_len), 0);
}

static void
test_header_encode_is_flag_then_big_endian_length(void **state)
{
	const uint8_t want[FRAME_HEADER_BYTES] = { 0x00, 0x00, 0x01, 0x11, 0x78 };
	uint8_t hdr[FRAME_HEADER_BYTES];

	make_header(hdr, 70008);
	assert_memory_equal(hdr, want, sizeof(want));
}

static void
test_header_round_trips_every_boundary_length(void **state)
{
	const size_t lens[] = { 0, 1, 255, 256, 65535, 65536, FRAME_MAX_BYTES - 1, FRAME_MAX_BYTES };
	uint8_t hdr[FRAME_HEADER_BYTES];

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t got = 12345;

		make_header(hdr, lens[i]);
		assert_int_equal(frame_header_parse(hdr, sizeof(hdr), &got), FRAME_READY);
		assert_int_equal(got, lens[i]);
	}
}

static void
test_header_parse_needs_five_bytes(void **state)
{
	const uint8_t hdr[FRAME_HEADER_BYTES] = { 0, 0, 0, 0, 3 };
	size_t got = 0;

	for (size_t len = 0; len < FRAME_HEADER_BYTES; len++)
		assert_int_equal(frame_header_parse(hdr, len, &got), FRAME_NEED_MORE);
	assert_int_equal(frame_header_parse(hdr, sizeof(hdr), &got), FRAME_READY);
	assert_int_equal(got, 3);
}

static void
test_header_parse_refuses_nonzero_flag(void **state)
{
	const uint8_t flags[] = { 0x01, 0x02, 0x80, 0xff };
	uint8_t hdr[FRAME_HEADER_BYTES] = { 0, 0, 0, 0, 1 };
	size_t got;

	for (size_t i = 0; i < sizeof(flags); i++) {
		hdr[0] = flags[i];
		assert_int_equal(frame_header_parse(hdr, sizeof(hdr), &got), FRAME_ERR_FLAG);
	}
}

static void
test_header_parse_accepts_exactly_4_mib(void **state)
{
	const uint8_t hdr[FRAME_HEADER_BYTES] = { 0x00, 0x00, 0x40, 0x00, 0x00 };
	size_t got = 0;

	assert_int_equal(frame_header_parse(hdr, sizeof(hdr), &got), FRAME_READY);
	assert_int_equal(got, 4 * 1024 * 1024);
}

static void
test_header_parse_refuses_4_mib_plus_one(void **state)
{
	const uint8_t hdr[FRAME_HEADER_BYTES] = { 0x00, 0x00, 0x40, 0x00, 0x01 };
	size_t got = 0;

	assert_int_equal(frame_header_parse(hdr, sizeof(hdr), &got), FRAME_ERR_TOO_LARGE);
	assert_int_equal(got, 4 * 1024 * 1024 + 1);
}

static void
test_header_parse_refuses_largest_length(void **state)
{
	const uint8_t hdr[FRAME_HEADER_BYTES] = { 0x00, 0xff, 0xff, 0xff, 0xff };
	size_t got = 0;

	assert_int_equal(frame_header_parse(hdr, sizeof(hdr), &got), FRAME_ERR_TOO_LARGE);
	assert_int_equal(got, 0xffffffffu);
}

static void
test_header_encode_refuses_over_4_mib(void **state)
{
	uint8_t hdr[FRAME_HEADER_BYTES] = { 7, 7, 7, 7, 7 };
	const uint8_t untouched[FRAME_HEADER_BYTES] = { 7, 7, 7, 7, 7 };

	assert_int_equal(frame_header_encode(hdr, FRAME_MAX_BYTES + 1), -1);
	assert_memory_equal(hdr, untouched, sizeof(hdr));
}

static void
test_encode_writes_header_and_payload(void **state)
{
	const uint8_t want[] = { 0x00, 0x00, 0x00, 0x00, 0x02, 0x1a, 0x00 };
	uint8_t out[16];

	assert_int_equal(frame_encode("\x1a\x00", 2, out, sizeof(out)), sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
}

static void
test_encode_refuses_too_small_buffer(void **state)
{
	uint8_t out[6];

	assert_int_equal(frame_encode("\x1a\x00", 2, out, sizeof(out)), 0);
}

static void
test_decoder_returns_whole_frame_fed_at_once(void **state)
{
	struct frame_decoder *d = *state;
	const uint8_t in[] = { 0, 0, 0, 0, 4, 0x1a, 0x02, 0x08, 0x03 };
	const uint8_t *p;
	size_t used = 0, len = 0;

	assert_int_equal(frame_decoder_feed(d, in, sizeof(in), &used), FRAME_READY);
	assert_int_equal(used, sizeof(in));
	p = frame_decoder_payload(d, &len);
	assert_non_null(p);
	assert_int_equal(len, 4);
	assert_memory_equal(p, in + FRAME_HEADER_BYTES, 4);
	assert_null(frame_decoder_error(d));
}

static void
test_decoder_reassembles_frames_fed_one_byte_at_a_time(void **state)
{
	struct frame_decoder *d = *state;
	const uint8_t in[] = { 0, 0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 0, 2, 'd', 'e' };
	const char *want[] = { "abc", "de" };
	size_t frames = 0;

	for (size_t i = 0; i < sizeof(in); i++) {
		size_t used = 0, len = 0;
		const uint8_t *p;

		if (frame_decoder_feed(d, in + i, 1, &used) != FRAME_READY) {
			assert_int_equal(used, 1);
			continue;
		}
		assert_int_equal(used, 1);
		p = frame_decoder_payload(d, &len);
		assert_true(frames < 2);
		assert_int_equal(len, strlen(want[frames]));
		assert_memory_equal(p, want[frames], len);
		frames++;
		frame_decoder_next(d);
	}
	assert_int_equal(frames, 2);
	assert_int_equal(frame_decoder_status(d), FRAME_NEED_MORE);
}

static void
test_decoder_stops_at_the_end_of_a_frame(void **state)
{
	struct frame_decoder *d = *state;
	const uint8_t in[] = { 0, 0, 0, 0, 1, 'x', 0, 0, 0, 0, 1, 'y' };
	const uint8_t *p;
	size_t used = 0, len = 0;

	assert_int_equal(frame_decoder_feed(d, in, sizeof(in), &used), FRAME_READY);
	assert_int_equal(used, 6);
	assert_int_equal(frame_decoder_feed(d, in + used, sizeof(in) - used, &used), FRAME_READY);
	assert_int_equal(used, 0);
	p = frame_decoder_payload(d, &len);
	assert_int_equal(p[0], 'x');
	frame_decoder_next(d);
	assert_int_equal(frame_decoder_feed(d, in + 6, 6, &used), FRAME_READY);
	assert_int_equal(used, 6);
	p = frame_decoder_payload(d, &len);
	assert_int_equal(p[0], 'y');
}

static void
test_decoder_accepts_zero_length_frame(void **state)
{
	struct frame_decoder *d = *state;
	const uint8_t in[FRAME_HEADER_BYTES] = { 0, 0, 0, 0, 0 };
	size_t used = 0, len = 99;

	assert_int_equal(frame_decoder_feed(d, in, sizeof(in), &used), FRAME_READY);
	assert_int_equal(used, FRAME_HEADER_BYTES);
	assert_non_null(frame_decoder_payload(d, &len));
	assert_int_equal(len, 0);
	assert_int_equal(realloc_calls, 0);
}

static void
test_decoder_payload_is_null_while_incomplete(void **state)
{
	struct frame_decoder *d = *state;
	const uint8_t in[] = { 0, 0, 0, 0, 2, 'a' };
	size_t used = 0, len = 0;

	assert_int_equal(frame_decoder_feed(d, in, sizeof(in), &used), FRAME_NEED_MORE);
	assert_int_equal(used, sizeof(in));
	assert_null(frame_decoder_payload(d, &len));
}

static void
test_decoder_refuses_nonzero_flag_for_good(void **state)
{
	struct frame_decoder *d = *state;
	const uint8_t bad[] = { 0x01, 0, 0, 0, 1, 'x' };
	const uint8_t good[] = { 0, 0, 0, 0, 1, 'x' };
	size_t used = 0;

	assert_int_equal(frame_decoder_feed(d, bad, sizeof(bad), &used), FRAME_ERR_FLAG);
	assert_int_equal(used, FRAME_HEADER_BYTES);
	assert_string_equal(frame_decoder_error(d), "frame flag byte is 0x01, expected 0");
	assert_int_equal(frame_decoder_feed(d, good, sizeof(good), &used), FRAME_ERR_FLAG);
	assert_int_equal(used, 0);
	assert_int_equal(frame_decoder_status(d), FRAME_ERR_FLAG);
}

static void
test_decoder_refuses_4_mib_plus_one_without_allocating(void **state)
{
	struct frame_decoder *d = *state;
	const uint8_t in[] = { 0x00, 0x00, 0x40, 0x00, 0x01, 'x', 'y' };
	size_t used = 0;

	assert_int_equal(frame_decoder_feed(d, in, sizeof(in), &used), FRAME_ERR_TOO_LARGE);
	assert_int_equal(used, FRAME_HEADER_BYTES);
	assert_int_equal(realloc_calls, 0);
	assert_string_equal(frame_decoder_error(d),
	    "frame announces 4194305 bytes, over the 4194304-byte limit");
}

static void
test_decoder_grows_with_arrived_bytes_not_announced_length(void **state)
{
	struct frame_decoder *d = *state;
	const uint8_t in[] = { 0x00, 0x00, 0x40, 0x00, 0x00, 'x' };
	size_t used = 0;

	assert_int_equal(frame_decoder_feed(d, in, sizeof(in), &used), FRAME_NEED_MORE);
	assert_int_equal(used, sizeof(in));
	assert_int_equal(realloc_calls, 1);
	assert_true(realloc_largest <= 4096);
}

static void
test_decoder_accepts_exactly_4_mib_frame(void **state)
{
	struct frame_decoder *d = *state;
	const size_t chunk = 65536;
	uint8_t hdr[FRAME_HEADER_BYTES];
	uint8_t *payload = malloc(FRAME_MAX_BYTES);
	const uint8_t *p;
	size_t used = 0, len = 0;
	enum frame_status st = FRAME_NEED_MORE;

	assert_non_null(payload);
	for (size_t i = 0; i < FRAME_MAX_BYTES; i++)
		payload[i] = (uint8_t)(i * 7);
	make_header(hdr, FRAME_MAX_BYTES);
	assert_int_equal(frame_decoder_feed(d, hdr, sizeof(hdr), &used), FRAME_NEED_MORE);
	for (size_t off = 0; off < FRAME_MAX_BYTES; off += chunk)
		st = frame_decoder_feed(d, payload + off, chunk, &used);
	assert_int_equal(st, FRAME_READY);
	p = frame_decoder_payload(d, &len);
	assert_int_equal(len, FRAME_MAX_BYTES);
	assert_memory_equal(p, payload, FRAME_MAX_BYTES);
	assert_int_equal(realloc_largest, FRAME_MAX_BYTES);
	free(payload);
}

static void
test_decoder_fails_cleanly_when_memory_runs_out(void **state)
{
	struct frame_decoder *d = *state;
	const uint8_t in[] = { 0, 0, 0, 0, 3, 'a', 'b', 'c' };
	size_t used = 0;

	realloc_fail_next = 1;
	assert_int_equal(frame_decoder_feed(d, in, sizeof(in), &used), FRAME_ERR_NOMEM);
	assert_int_equal(used, FRAME_HEADER_BYTES);
	assert_string_equal(frame_decoder_error(d), "out of memory collecting a 3-byte frame");
}

static void
test_decoder_next_without_frame_changes_nothing(void **state)
{
	struct frame_decoder *d = *state;
	const uint8_t in[] = { 0, 0, 0 };
	const uint8_t rest[] = { 0, 1, 'z' };
	const uint8_t *p;
	size_t used = 0, len = 0;

	assert_int_equal(frame_decoder_feed(d, in, sizeof(in), &used), FRAME_NEED_MORE);
	frame_decoder_next(d);
	assert_int_equal(frame_decoder_feed(d, rest, sizeof(rest), &used), FRAME_READY);
	p = frame_decoder_payload(d, &len);
	assert_int_equal(len, 1);
	assert_int_equal(p[0], 'z');
}

static void
test_strerror_names_every_status(void **state)
{
	assert_string_equal(frame_strerror(FRAME_ERR_FLAG), "frame flag byte is not 0");
	assert_string_equal(frame_strerror(FRAME_ERR_TOO_LARGE), "frame is over the 4 MiB limit");
	assert_string_equal(frame_strerror(FRAME_ERR_NOMEM), "out of memory");
	assert_string_equal(frame_strerror(FRAME_NEED_MORE), "incomplete frame");
}

#define DECODER_TEST(f) cmocka_unit_test_setup_teardown(f, setup_decoder, teardown_decoder)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_encode_is_flag_then_big_endian_length),
		cmocka_unit_test(test_header_round_trips_every_boundary_length),
		cmocka_unit_test(test_header_parse_needs_five_bytes),
		cmocka_unit_test(test_header_parse_refuses_nonzero_flag),
		cmocka_unit_test(test_header_parse_accepts_exactly_4_mib),
		cmocka_unit_test(test_header_parse_refuses_4_mib_plus_one),
		cmocka_unit_test(test_header_parse_refuses_largest_length),
		cmocka_unit_test(test_header_encode_refuses_over_4_mib),
		cmocka_unit_test(test_encode_writes_header_and_payload),
		cmocka_unit_test(test_encode_refuses_too_small_buffer),
		DECODER_TEST(test_decoder_returns_whole_frame_fed_at_once),
		DECODER_TEST(test_decoder_reassembles_frames_fed_one_byte_at_a_time),
		DECODER_TEST(test_decoder_stops_at_the_end_of_a_frame),
		DECODER_TEST(test_decoder_accepts_zero_length_frame),
		DECODER_TEST(test_decoder_payload_is_null_while_incomplete),
		DECODER_TEST(test_decoder_refuses_nonzero_flag_for_good),
		DECODER_TEST(test_decoder_refuses_4_mib_plus_one_without_allocating),
		DECODER_TEST(test_decoder_grows_with_arrived_bytes_not_announced_length),
		DECODER_TEST(test_decoder_accepts_exactly_4_mib_frame),
		DECODER_TEST(test_decoder_fails_cleanly_when_memory_runs_out),
		DECODER_TEST(test_decoder_next_without_frame_changes_nothing),
		cmocka_unit_test(test_strerror_names_every_status),
	};

	return cmocka_run_group_tests_name("frame", tests, NULL, NULL);
}
