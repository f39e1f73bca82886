/* Unit tests for the schema and common/wire: PROTOCOL.md's exec vectors in
 * both directions, the top-level Request's reserved fields, error frames,
 * and the field numbers PROTOCOL.md promises. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/frame.h"
#include "common/wire.h"

/* The longest vector a test writes in hex. */
#define TEST_HEX_MAX_BYTES 256

/* The test vectors of PROTOCOL.md section 4. */
#define VEC_START_ABC_BASH_C "0a0f0a0361626312046261736812022d63"
#define VEC_STDIN_HI "120368690a"
#define VEC_STDOUT_HELLO "0a070a0568656c6c6f"
#define VEC_STDERR_ERR "12050a03657272"
#define VEC_EXIT_3 "1a020803"
#define VEC_EXIT_0 "1a00"

/* protobuf-c's string fields are char *; packing only reads them. */
static char *
mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

struct hex {
	uint8_t bytes[TEST_HEX_MAX_BYTES];
	size_t len;
};

static int
hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	fail_msg("bad hex digit %c", c);
	return 0;
}

/* The bytes a lower-case hex string spells. */
static struct hex
hex(const char *s)
{
	struct hex h = { .len = strlen(s) / 2 };

	assert_true(h.len <= sizeof(h.bytes));
	for (size_t i = 0; i < h.len; i++)
		h.bytes[i] = (uint8_t)(hex_nibble(s[2 * i]) << 4 | hex_nibble(s[2 * i + 1]));
	return h;
}

/* Packs MSG into a frame, checks its header, and compares the payload with WANT_HEX. */
static void
assert_packs_to(const ProtobufCMessage *msg, const char *want_hex)
{
	struct hex want = hex(want_hex);
	size_t len = 0, payload_len = 0;
	uint8_t *frame = wire_pack(msg, &len);

	assert_non_null(frame);
	assert_int_equal(len, FRAME_HEADER_BYTES + want.len);
	assert_int_equal(frame_header_parse(frame, len, &payload_len), FRAME_READY);
	assert_int_equal(payload_len, want.len);
	assert_memory_equal(frame + FRAME_HEADER_BYTES, want.bytes, want.len);
	free(frame);
}

static void
assert_start_abc_bash_c(const Corral__ExecSandboxRequest *start)
{
	assert_non_null(start);
	assert_string_equal(start->sandbox_id, "abc");
	assert_int_equal(start->n_command, 2);
	assert_string_equal(start->command[0], "bash");
	assert_string_equal(start->command[1], "-c");
	assert_string_equal(start->workdir, "");
	assert_int_equal(start->n_environment, 0);
	assert_int_equal(start->timeout_seconds, 0);
	assert_int_equal(start->stdin.len, 0);
	assert_false(start->tty);
}

static char bash[] = "bash", dash_c[] = "-c";
static char *bash_c[] = { bash, dash_c };

static void
test_exec_start_request_packs_to_protocol_vector(void **state)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__ExecSandboxRequest start = CORRAL__EXEC_SANDBOX_REQUEST__INIT;

	start.sandbox_id = mut("abc");
	start.n_command = 2;
	start.command = bash_c;
	req.request_case = CORRAL__REQUEST__REQUEST_EXEC_START;
	req.exec_start = &start;
	assert_packs_to(&req.base, VEC_START_ABC_BASH_C);
}

static void
test_exec_start_input_packs_to_protocol_vector(void **state)
{
	Corral__ExecSandboxInput in = CORRAL__EXEC_SANDBOX_INPUT__INIT;
	Corral__ExecSandboxRequest start = CORRAL__EXEC_SANDBOX_REQUEST__INIT;

	start.sandbox_id = mut("abc");
	start.n_command = 2;
	start.command = bash_c;
	in.payload_case = CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD_START;
	in.start = &start;
	assert_packs_to(&in.base, VEC_START_ABC_BASH_C);
}

static void
test_exec_start_vector_unpacks_as_request(void **state)
{
	struct hex v = hex(VEC_START_ABC_BASH_C);
	const char *why = NULL;
	Corral__Request *req = wire_request_unpack(v.bytes, v.len, &why);

	assert_non_null(req);
	assert_null(why);
	assert_int_equal(req->request_case, CORRAL__REQUEST__REQUEST_EXEC_START);
	assert_start_abc_bash_c(req->exec_start);
	corral__request__free_unpacked(req, NULL);
}

static void
test_exec_start_vector_unpacks_as_input(void **state)
{
	struct hex v = hex(VEC_START_ABC_BASH_C);
	const char *why = NULL;
	Corral__ExecSandboxInput *in = wire_exec_input_unpack(v.bytes, v.len, &why);

	assert_non_null(in);
	assert_int_equal(in->payload_case, CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD_START);
	assert_start_abc_bash_c(in->start);
	corral__exec_sandbox_input__free_unpacked(in, NULL);
}

static void
test_stdin_packs_to_protocol_vector(void **state)
{
	Corral__ExecSandboxInput in = CORRAL__EXEC_SANDBOX_INPUT__INIT;

	in.payload_case = CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD_STDIN;
	in.stdin.data = (uint8_t *)(uintptr_t)"hi\n";
	in.stdin.len = 3;
	assert_packs_to(&in.base, VEC_STDIN_HI);
}

static void
test_stdin_vector_unpacks_as_input(void **state)
{
	struct hex v = hex(VEC_STDIN_HI);
	const char *why = NULL;
	Corral__ExecSandboxInput *in = wire_exec_input_unpack(v.bytes, v.len, &why);

	assert_non_null(in);
	assert_int_equal(in->payload_case, CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD_STDIN);
	assert_int_equal(in->stdin.len, 3);
	assert_memory_equal(in->stdin.data, "hi\n", 3);
	corral__exec_sandbox_input__free_unpacked(in, NULL);
}

static void
test_empty_stdin_is_a_set_payload(void **state)
{
	Corral__ExecSandboxInput in = CORRAL__EXEC_SANDBOX_INPUT__INIT;
	Corral__ExecSandboxInput *back;
	const char *why = NULL;
	const uint8_t close_stdin[] = { 0x12, 0x00 };

	in.payload_case = CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD_STDIN;
	assert_packs_to(&in.base, "1200");
	back = wire_exec_input_unpack(close_stdin, sizeof(close_stdin), &why);
	assert_non_null(back);
	assert_int_equal(back->payload_case, CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD_STDIN);
	assert_int_equal(back->stdin.len, 0);
	corral__exec_sandbox_input__free_unpacked(back, NULL);
}

/* Packs an ExecSandboxEvent with CASE and OUT or EXIT. */
static void
assert_event_packs_to(Corral__ExecSandboxEvent__PayloadCase pcase, const char *data,
    int32_t exit_code, const char *want_hex)
{
	Corral__ExecSandboxEvent ev = CORRAL__EXEC_SANDBOX_EVENT__INIT;
	Corral__Output out = CORRAL__OUTPUT__INIT;
	Corral__Exit ex = CORRAL__EXIT__INIT;

	out.data.data = (uint8_t *)(uintptr_t)data;
	out.data.len = data != NULL ? strlen(data) : 0;
	ex.exit_code = exit_code;
	ev.payload_case = pcase;
	if (pcase == CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDOUT)
		ev.stdout = &out;
	else if (pcase == CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDERR)
		ev.stderr = &out;
	else
		ev.exit = &ex;
	assert_packs_to(&ev.base, want_hex);
}

static void
test_output_and_exit_events_pack_to_protocol_vectors(void **state)
{
	assert_event_packs_to(CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDOUT, "hello", 0,
	    VEC_STDOUT_HELLO);
	assert_event_packs_to(CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDERR, "err", 0,
	    VEC_STDERR_ERR);
	assert_event_packs_to(CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_EXIT, NULL, 3, VEC_EXIT_3);
	assert_event_packs_to(CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_EXIT, NULL, 0, VEC_EXIT_0);
}

/* Unpacks WANT_HEX as an ExecSandboxEvent and checks its case is PCASE. */
static Corral__ExecSandboxEvent *
event_from_hex(const char *want_hex, Corral__ExecSandboxEvent__PayloadCase pcase)
{
	struct hex v = hex(want_hex);
	const char *why = NULL;
	Corral__ExecSandboxEvent *ev = wire_exec_event_unpack(v.bytes, v.len, &why);

	assert_non_null(ev);
	assert_int_equal(ev->payload_case, pcase);
	return ev;
}

static void
test_protocol_event_vectors_unpack_to_their_fields(void **state)
{
	Corral__ExecSandboxEvent *ev;

	ev = event_from_hex(VEC_STDOUT_HELLO, CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDOUT);
	assert_int_equal(ev->stdout->data.len, 5);
	assert_memory_equal(ev->stdout->data.data, "hello", 5);
	corral__exec_sandbox_event__free_unpacked(ev, NULL);
	ev = event_from_hex(VEC_STDERR_ERR, CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDERR);
	assert_int_equal(ev->stderr->data.len, 3);
	assert_memory_equal(ev->stderr->data.data, "err", 3);
	corral__exec_sandbox_event__free_unpacked(ev, NULL);
	ev = event_from_hex(VEC_EXIT_3, CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_EXIT);
	assert_int_equal(ev->exit->exit_code, 3);
	corral__exec_sandbox_event__free_unpacked(ev, NULL);
	ev = event_from_hex(VEC_EXIT_0, CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_EXIT);
	assert_int_equal(ev->exit->exit_code, 0);
	corral__exec_sandbox_event__free_unpacked(ev, NULL);
}

static void
test_70000_byte_stdout_has_three_byte_length_varints(void **state)
{
	/* Header for 70008 bytes, then field 1 with length 70004, then Output's
	 * field 1 with length 70000: both lengths take three varint bytes. */
	const uint8_t want[] = { 0x00, 0x00, 0x01, 0x11, 0x78,
	    0x0a, 0xf4, 0xa2, 0x04, 0x0a, 0xf0, 0xa2, 0x04 };
	Corral__ExecSandboxEvent ev = CORRAL__EXEC_SANDBOX_EVENT__INIT, *back;
	Corral__Output out = CORRAL__OUTPUT__INIT;
	uint8_t *data = malloc(70000), *frame;
	const char *why = NULL;
	size_t len = 0;

	assert_non_null(data);
	memset(data, 'x', 70000);
	out.data.data = data;
	out.data.len = 70000;
	ev.payload_case = CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDOUT;
	ev.stdout = &out;
	frame = wire_pack(&ev.base, &len);
	assert_non_null(frame);
	assert_int_equal(len, sizeof(want) + 70000);
	assert_memory_equal(frame, want, sizeof(want));
	back = wire_exec_event_unpack(frame + FRAME_HEADER_BYTES, len - FRAME_HEADER_BYTES, &why);
	assert_non_null(back);
	assert_int_equal(back->stdout->data.len, 70000);
	assert_memory_equal(back->stdout->data.data, data, 70000);
	corral__exec_sandbox_event__free_unpacked(back, NULL);
	free(frame);
	free(data);
}

/* Asserts HEX_BYTES is refused as a first frame with a reason containing WANT. */
static void
assert_request_refused(const char *hex_bytes, const char *want)
{
	struct hex v = hex(hex_bytes);
	const char *why = NULL;

	assert_null(wire_request_unpack(v.bytes, v.len, &why));
	assert_non_null(why);
	assert_non_null(strstr(why, want));
}

static void
test_request_with_stdin_field_2_is_refused(void **state)
{
	assert_request_refused(VEC_STDIN_HI, "field 2");
}

static void
test_request_with_resize_field_3_is_refused(void **state)
{
	/* resize{cols: 80, rows: 24} */
	assert_request_refused("1a0408501018", "field 3");
}

static void
test_request_with_start_and_stdin_is_refused(void **state)
{
	assert_request_refused(VEC_START_ABC_BASH_C VEC_STDIN_HI, "field 2");
}

static void
test_empty_request_is_refused(void **state)
{
	assert_request_refused("", "no request");
}

static void
test_unknown_request_field_is_refused(void **state)
{
	/* field 100, length-delimited, empty: a request from a newer client. */
	assert_request_refused("a20600", "no request");
}

static void
test_garbage_is_not_a_request(void **state)
{
	assert_request_refused("0aff", "not a valid Request");
}

static void
test_zero_tag_is_refused_at_any_depth(void **state)
{
	/* 80 00 is field number 0 in a two-byte varint: not protobuf, though
	 * protobuf-c's decoder lets it through as an unknown field. */
	struct hex top = hex("1200800000");
	struct hex nested = hex("0a03800000");
	const char *why = NULL;

	assert_null(wire_exec_input_unpack(top.bytes, top.len, &why));
	assert_string_equal(why, "the frame is not a valid ExecSandboxInput message");
	assert_request_refused("0a03800000", "not a valid Request");
	assert_null(wire_exec_input_unpack(nested.bytes, nested.len, &why));
}

/* A NUL in a string would cut it short in C: refused at any depth; a
 * bytes field (stdin) may hold NUL. */
static void
test_nul_in_a_string_is_refused(void **state)
{
	/* sandbox_create { name: "a\0b" }, then "abc" */
	struct hex cut = hex("4a057a03610062");
	struct hex whole = hex("4a057a03616263");
	/* start { sandbox: "a\0c", argv: "bash", "-c" } */
	struct hex start = hex("0a0f0a0361006312046261736812022d63");
	struct hex stdin_nul = hex("120100");
	Corral__ExecSandboxInput *in;
	Corral__Request *req;
	const char *why = NULL;

	(void)state;
	assert_null(wire_request_unpack(cut.bytes, cut.len, &why));
	assert_non_null(strstr(why, "NUL"));
	assert_non_null(req = wire_request_unpack(whole.bytes, whole.len, &why));
	assert_string_equal(req->sandbox_create->name, "abc");
	corral__request__free_unpacked(req, NULL);
	why = NULL;
	assert_null(wire_exec_input_unpack(start.bytes, start.len, &why));
	assert_non_null(strstr(why, "NUL"));
	assert_non_null(in = wire_exec_input_unpack(stdin_nul.bytes, stdin_nul.len, &why));
	assert_int_equal(in->stdin.len, 1);
	corral__exec_sandbox_input__free_unpacked(in, NULL);
}

static void
test_exec_input_without_payload_is_refused(void **state)
{
	const char *why = NULL;

	assert_null(wire_exec_input_unpack((const uint8_t *)"", 0, &why));
	assert_string_equal(why, "the ExecSandboxInput frame has no payload set");
}

static void
test_exec_event_without_payload_is_refused(void **state)
{
	const char *why = NULL;

	assert_null(wire_exec_event_unpack((const uint8_t *)"", 0, &why));
	assert_non_null(strstr(why, "no payload"));
}

static void
test_response_without_response_is_refused(void **state)
{
	struct hex v = hex(VEC_STDOUT_HELLO);
	const char *why = NULL;

	/* An exec stdout event is not a Response: its field 1 is reserved there. */
	assert_null(wire_response_unpack(v.bytes, v.len, &why));
	assert_non_null(strstr(why, "no response"));
}

static void
test_error_frame_reads_as_response_and_as_exec_event(void **state)
{
	size_t len = 0;
	uint8_t *frame = wire_pack_error(WIRE_ERR_NOT_FOUND, "no sandbox abc", &len);
	const uint8_t *payload = frame + FRAME_HEADER_BYTES;
	const char *why = NULL;
	Corral__Response *resp;
	Corral__ExecSandboxEvent *ev;

	assert_non_null(frame);
	assert_int_equal(payload[0], 0x22);
	resp = wire_response_unpack(payload, len - FRAME_HEADER_BYTES, &why);
	assert_non_null(resp);
	assert_int_equal(resp->response_case, CORRAL__RESPONSE__RESPONSE_ERROR);
	assert_string_equal(resp->error->code, "not_found");
	assert_string_equal(resp->error->message, "no sandbox abc");
	ev = wire_exec_event_unpack(payload, len - FRAME_HEADER_BYTES, &why);
	assert_non_null(ev);
	assert_int_equal(ev->payload_case, CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_ERROR);
	assert_string_equal(ev->error->message, "no sandbox abc");
	corral__exec_sandbox_event__free_unpacked(ev, NULL);
	corral__response__free_unpacked(resp, NULL);
	free(frame);
}

static void
test_environment_map_is_repeated_key_value_entries(void **state)
{
	/* ExecSandboxRequest{environment: {A: b}} written as the repeated
	 * message {key = 1, value = 2} that a map is on the wire. */
	const char *entries_hex = "22060a0141120162";
	Corral__ExecSandboxRequest start = CORRAL__EXEC_SANDBOX_REQUEST__INIT, *back;
	Corral__ExecSandboxRequest__EnvironmentEntry e =
	    CORRAL__EXEC_SANDBOX_REQUEST__ENVIRONMENT_ENTRY__INIT;
	Corral__ExecSandboxRequest__EnvironmentEntry *env[] = { &e };
	struct hex v = hex(entries_hex);

	e.key = mut("A");
	e.value = mut("b");
	start.n_environment = 1;
	start.environment = env;
	assert_packs_to(&start.base, entries_hex);
	back = corral__exec_sandbox_request__unpack(NULL, v.len, v.bytes);
	assert_non_null(back);
	assert_int_equal(back->n_environment, 1);
	assert_string_equal(back->environment[0]->key, "A");
	assert_string_equal(back->environment[0]->value, "b");
	corral__exec_sandbox_request__free_unpacked(back, NULL);
}

/* Packs REQ, checks its first byte is FIRST_BYTE, and unpacks it again. */
static Corral__Request *
request_round_trip(const Corral__Request *req, uint8_t first_byte)
{
	size_t len = 0;
	uint8_t *frame = wire_pack(&req->base, &len);
	const char *why = NULL;
	Corral__Request *back;

	assert_non_null(frame);
	assert_int_equal(frame[FRAME_HEADER_BYTES], first_byte);
	back = wire_request_unpack(frame + FRAME_HEADER_BYTES, len - FRAME_HEADER_BYTES, &why);
	free(frame);
	assert_non_null(back);
	assert_int_equal(back->request_case, req->request_case);
	return back;
}

static void
test_run_start_round_trips_as_field_4(void **state)
{
	Corral__Request req = CORRAL__REQUEST__INIT, *back;
	Corral__RunStart run = CORRAL__RUN_START__INIT;

	run.sandbox = mut("abc");
	run.shell = mut("main");
	run.command = mut("cd /tmp && ls");
	run.timeout_seconds = 30;
	run.request_id = mut("r-1");
	req.request_case = CORRAL__REQUEST__REQUEST_RUN_START;
	req.run_start = &run;
	back = request_round_trip(&req, 0x22);
	assert_string_equal(back->run_start->sandbox, "abc");
	assert_string_equal(back->run_start->shell, "main");
	assert_string_equal(back->run_start->command, "cd /tmp && ls");
	assert_int_equal(back->run_start->timeout_seconds, 30);
	assert_string_equal(back->run_start->request_id, "r-1");
	corral__request__free_unpacked(back, NULL);
}

static void
test_sandbox_create_round_trips_roots_and_maps(void **state)
{
	Corral__Request req = CORRAL__REQUEST__INIT, *back;
	Corral__SandboxCreate c = CORRAL__SANDBOX_CREATE__INIT;
	Corral__Root r0 = CORRAL__ROOT__INIT, r1 = CORRAL__ROOT__INIT;
	Corral__Root *roots[] = { &r0, &r1 };
	Corral__SandboxCreate__LabelsEntry l = CORRAL__SANDBOX_CREATE__LABELS_ENTRY__INIT;
	Corral__SandboxCreate__LabelsEntry *labels[] = { &l };

	r0.path = mut("/home/u/proj");
	r0.writable = 1;
	r1.path = mut("/srv/data");
	l.key = mut("team");
	l.value = mut("blue");
	c.n_roots = 2;
	c.roots = roots;
	c.n_labels = 1;
	c.labels = labels;
	c.policy = mut("version: 1\n");
	c.milli_cpus = 1500;
	c.memory_bytes = (uint64_t)8 << 30;
	c.name = mut("abc");
	req.request_case = CORRAL__REQUEST__REQUEST_SANDBOX_CREATE;
	req.sandbox_create = &c;
	back = request_round_trip(&req, 0x4a);
	assert_int_equal(back->sandbox_create->n_roots, 2);
	assert_string_equal(back->sandbox_create->roots[0]->path, "/home/u/proj");
	assert_true(back->sandbox_create->roots[0]->writable);
	assert_false(back->sandbox_create->roots[1]->writable);
	assert_string_equal(back->sandbox_create->labels[0]->value, "blue");
	assert_string_equal(back->sandbox_create->policy, "version: 1\n");
	assert_int_equal(back->sandbox_create->milli_cpus, 1500);
	assert_int_equal(back->sandbox_create->memory_bytes, (uint64_t)8 << 30);
	corral__request__free_unpacked(back, NULL);
}

static void
test_empty_status_request_round_trips(void **state)
{
	Corral__Request req = CORRAL__REQUEST__INIT, *back;
	Corral__Status st = CORRAL__STATUS__INIT;

	req.request_case = CORRAL__REQUEST__REQUEST_STATUS;
	req.status = &st;
	assert_packs_to(&req.base, "6a00");
	back = request_round_trip(&req, 0x6a);
	corral__request__free_unpacked(back, NULL);
}

static void
test_pack_refuses_message_over_4_mib(void **state)
{
	Corral__ExecSandboxEvent ev = CORRAL__EXEC_SANDBOX_EVENT__INIT;
	Corral__Output out = CORRAL__OUTPUT__INIT;
	uint8_t *data = calloc(1, FRAME_MAX_BYTES);
	size_t len = 0;

	assert_non_null(data);
	out.data.data = data;
	out.data.len = FRAME_MAX_BYTES;
	ev.payload_case = CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD_STDOUT;
	ev.stdout = &out;
	errno = 0;
	assert_null(wire_pack(&ev.base, &len));
	assert_int_equal(errno, EMSGSIZE);
	free(data);
}

struct field_number {
	const char *name;
	unsigned number;
};

/* Asserts DESC has exactly the fields of WANT (N of them) at those numbers. */
static void
assert_field_numbers(const ProtobufCMessageDescriptor *desc, const struct field_number *want,
    size_t n)
{
	assert_int_equal(desc->n_fields, n);
	for (size_t i = 0; i < n; i++) {
		const ProtobufCFieldDescriptor *f =
		    protobuf_c_message_descriptor_get_field_by_name(desc, want[i].name);

		if (f == NULL)
			fail_msg("%s has no field %s", desc->name, want[i].name);
		else if (f->id != want[i].number)
			fail_msg("%s.%s is %u, PROTOCOL.md says %u", desc->name,
			    want[i].name, f->id, want[i].number);
	}
}

static void
test_request_field_numbers_match_protocol_md(void **state)
{
	const struct field_number want[] = {
		{ "exec_start", 1 }, { "run_start", 4 }, { "run_ack", 5 },
		{ "run_resume", 6 }, { "run_interrupt", 7 }, { "run_list", 8 },
		{ "sandbox_create", 9 }, { "sandbox_get", 10 }, { "sandbox_list", 11 },
		{ "sandbox_delete", 12 }, { "status", 13 }, { "reap", 14 },
		{ "policy_get", 15 }, { "policy_set", 16 }, { "policy_update", 17 },
		{ "denials", 18 }, { "logs", 19 }, { "fs_read", 20 }, { "fs_write", 21 },
		{ "fs_edit", 22 }, { "fs_list", 23 }, { "fs_grep", 24 }, { "metrics", 25 },
		{ "reload", 26 }, { "forward_open", 27 }, { "forward_connect", 28 },
		{ "forward_list", 29 }, { "secret_list", 30 },
	};

	assert_field_numbers(&corral__request__descriptor, want, sizeof(want) / sizeof(want[0]));
}

static void
test_response_field_numbers_match_protocol_md(void **state)
{
	const struct field_number want[] = {
		{ "error", 4 }, { "ok", 5 }, { "status", 6 }, { "sandbox", 7 },
		{ "sandbox_list", 8 }, { "sandbox_delete", 9 }, { "run_event", 10 },
		{ "run_list", 11 }, { "policy", 12 }, { "denials", 13 }, { "logs", 14 },
		{ "fs_write", 15 }, { "fs_read", 16 }, { "fs_list", 17 }, { "fs_grep", 18 },
		{ "reap", 19 }, { "metrics", 20 }, { "reload", 21 }, { "forward_list", 22 },
		{ "secret_list", 23 },
	};

	assert_field_numbers(&corral__response__descriptor, want, sizeof(want) / sizeof(want[0]));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_start_request_packs_to_protocol_vector),
		cmocka_unit_test(test_exec_start_input_packs_to_protocol_vector),
		cmocka_unit_test(test_exec_start_vector_unpacks_as_request),
		cmocka_unit_test(test_exec_start_vector_unpacks_as_input),
		cmocka_unit_test(test_stdin_packs_to_protocol_vector),
		cmocka_unit_test(test_stdin_vector_unpacks_as_input),
		cmocka_unit_test(test_empty_stdin_is_a_set_payload),
		cmocka_unit_test(test_output_and_exit_events_pack_to_protocol_vectors),
		cmocka_unit_test(test_protocol_event_vectors_unpack_to_their_fields),
		cmocka_unit_test(test_70000_byte_stdout_has_three_byte_length_varints),
		cmocka_unit_test(test_request_with_stdin_field_2_is_refused),
		cmocka_unit_test(test_request_with_resize_field_3_is_refused),
		cmocka_unit_test(test_request_with_start_and_stdin_is_refused),
		cmocka_unit_test(test_empty_request_is_refused),
		cmocka_unit_test(test_unknown_request_field_is_refused),
		cmocka_unit_test(test_garbage_is_not_a_request),
		cmocka_unit_test(test_zero_tag_is_refused_at_any_depth),
		cmocka_unit_test(test_nul_in_a_string_is_refused),
		cmocka_unit_test(test_exec_input_without_payload_is_refused),
		cmocka_unit_test(test_exec_event_without_payload_is_refused),
		cmocka_unit_test(test_response_without_response_is_refused),
		cmocka_unit_test(test_error_frame_reads_as_response_and_as_exec_event),
		cmocka_unit_test(test_environment_map_is_repeated_key_value_entries),
		cmocka_unit_test(test_run_start_round_trips_as_field_4),
		cmocka_unit_test(test_sandbox_create_round_trips_roots_and_maps),
		cmocka_unit_test(test_empty_status_request_round_trips),
		cmocka_unit_test(test_pack_refuses_message_over_4_mib),
		cmocka_unit_test(test_request_field_numbers_match_protocol_md),
		cmocka_unit_test(test_response_field_numbers_match_protocol_md),
	};

	return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
