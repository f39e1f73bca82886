/* Protobuf messages in and out of frames, with the protocol's checks. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/frame.h"
#include "common/wire.h"

/* Request's reserved numbers: ExecSandboxInput's stdin and resize. */
#define WIRE_REQUEST_RESERVED_STDIN 2
#define WIRE_REQUEST_RESERVED_RESIZE 3

uint8_t *
wire_pack(const ProtobufCMessage *msg, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint8_t *out;

	if (n > FRAME_MAX_BYTES) {
		errno = EMSGSIZE;
		return NULL;
	}
	if ((out = malloc(FRAME_HEADER_BYTES + n)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	frame_header_encode(out, n);
	protobuf_c_message_pack(msg, out + FRAME_HEADER_BYTES);
	*len = FRAME_HEADER_BYTES + n;
	return out;
}

uint8_t *
wire_pack_error(const char *code, const char *message, size_t *len)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;
	Corral__Error error = CORRAL__ERROR__INIT;

	/* protobuf-c's string fields are char *; packing only reads them. */
	error.code = (char *)(uintptr_t)code;
	error.message = (char *)(uintptr_t)message;
	resp.response_case = CORRAL__RESPONSE__RESPONSE_ERROR;
	resp.error = &error;
	return wire_pack(&resp.base, len);
}

static int wire_has_zero_tag(const ProtobufCMessage *msg);

/* Whether the sub-message(s) that field F of MSG holds have a zero tag. */
static int
wire_field_has_zero_tag(const ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f)
{
	const char *base = (const char *)msg;
	const ProtobufCMessage *const *subs;
	size_t n = 1;

	if (f->type != PROTOBUF_C_TYPE_MESSAGE)
		return 0;
	if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
	    *(const uint32_t *)(const void *)(base + f->quantifier_offset) != f->id)
		return 0;
	if (f->label == PROTOBUF_C_LABEL_REPEATED) {
		n = *(const size_t *)(const void *)(base + f->quantifier_offset);
		subs = *(const ProtobufCMessage *const *const *)(const void *)(base + f->offset);
	} else {
		subs = (const ProtobufCMessage *const *)(const void *)(base + f->offset);
	}
	for (size_t i = 0; i < n; i++)
		if (subs[i] != NULL && wire_has_zero_tag(subs[i]))
			return 1;
	return 0;
}

/* Whether MSG or a message inside it kept an unknown field numbered 0.
 * protobuf-c accepts a tag of 0 written in two or more varint bytes
 * (80 00), which the protobuf encoding forbids: such bytes are refused as
 * not protobuf, rather than read one way here and another way elsewhere.
 * The schema has no recursive messages, so the depth is bounded. */
static int
wire_has_zero_tag(const ProtobufCMessage *msg)
{
	for (unsigned i = 0; i < msg->n_unknown_fields; i++)
		if (msg->unknown_fields[i].tag == 0)
			return 1;
	for (unsigned i = 0; i < msg->descriptor->n_fields; i++)
		if (wire_field_has_zero_tag(msg, &msg->descriptor->fields[i]))
			return 1;
	return 0;
}

/* Reads the varint at *AT of DATA (LEN bytes) into *V; -1 when cut short. */
static int
wire_varint(const uint8_t *data, size_t len, size_t *at, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *at < len && shift < 64; shift += 7) {
		uint8_t b = data[(*at)++];

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* Whether a string field of the DESC message in DATA (LEN bytes), at any
 * depth, holds a NUL byte. protobuf-c hands strings to C NUL-terminated,
 * so "a\0b" would be read as "a": such bytes are refused, not cut short.
 * Bytes fields may hold anything. Called on bytes protobuf-c has unpacked,
 * so they parse; the schema has no recursive messages. */
static int
wire_has_nul(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len)
{
	const ProtobufCFieldDescriptor *f;
	uint64_t key, n;
	size_t at = 0;

	while (at < len && wire_varint(data, len, &at, &key) == 0) {
		if ((key & 7) == 0 && wire_varint(data, len, &at, &n) == 0)
			continue;
		if ((key & 7) == 1 || (key & 7) == 5) {
			at += (key & 7) == 1 ? 8 : 4;
			continue;
		}
		if ((key & 7) != 2 || wire_varint(data, len, &at, &n) == -1 || n > len - at)
			return 0;
		f = protobuf_c_message_descriptor_get_field(desc, (unsigned)(key >> 3));
		if (f != NULL && f->type == PROTOBUF_C_TYPE_STRING && memchr(data + at, 0, n) != NULL)
			return 1;
		if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE &&
		    wire_has_nul(f->descriptor, data + at, n))
			return 1;
		at += n;
	}
	return 0;
}

/* Unpacks DATA as a DESC message; NULL with *WHY set to BAD when it is not one. */
static ProtobufCMessage *
wire_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
    const char *bad, const char **why)
{
	ProtobufCMessage *msg = NULL;

	if (len > FRAME_MAX_BYTES) {
		*why = "payload is over the 4 MiB frame limit";
		return NULL;
	}
	if ((msg = protobuf_c_message_unpack(desc, NULL, len, data)) != NULL &&
	    wire_has_zero_tag(msg)) {
		protobuf_c_message_free_unpacked(msg, NULL);
		msg = NULL;
	}
	if (msg == NULL) {
		*why = bad;
	} else if (wire_has_nul(desc, data, len)) {
		protobuf_c_message_free_unpacked(msg, NULL);
		msg = NULL;
		*why = "a string field holds a NUL byte (strings are UTF-8 without NUL)";
	}
	return msg;
}

/* The reason to refuse REQ for using a reserved field number, or NULL.
 * Why: a client that sends stdin or resize before the exec start must get
 * an error, never have its bytes read as some other request. */
static const char *
wire_request_reserved(const Corral__Request *req)
{
	for (size_t i = 0; i < req->base.n_unknown_fields; i++) {
		uint32_t tag = req->base.unknown_fields[i].tag;

		if (tag == WIRE_REQUEST_RESERVED_STDIN)
			return "the first frame sets field 2 (exec stdin): "
			    "an exec stream must begin with the start";
		if (tag == WIRE_REQUEST_RESERVED_RESIZE)
			return "the first frame sets field 3 (exec resize): "
			    "an exec stream must begin with the start";
	}
	return NULL;
}

Corral__Request *
wire_request_unpack(const uint8_t *data, size_t len, const char **why)
{
	Corral__Request *req;
	const char *reason;

	req = (Corral__Request *)wire_unpack(&corral__request__descriptor, data, len,
	    "the first frame is not a valid Request message", why);
	if (req == NULL)
		return NULL;
	if ((reason = wire_request_reserved(req)) == NULL &&
	    req->request_case == CORRAL__REQUEST__REQUEST__NOT_SET)
		reason = "the first frame holds no request this daemon knows";
	if (reason != NULL) {
		corral__request__free_unpacked(req, NULL);
		*why = reason;
		return NULL;
	}
	return req;
}

Corral__ExecSandboxInput *
wire_exec_input_unpack(const uint8_t *data, size_t len, const char **why)
{
	Corral__ExecSandboxInput *in;

	in = (Corral__ExecSandboxInput *)wire_unpack(&corral__exec_sandbox_input__descriptor,
	    data, len, "the frame is not a valid ExecSandboxInput message", why);
	if (in != NULL && in->payload_case == CORRAL__EXEC_SANDBOX_INPUT__PAYLOAD__NOT_SET) {
		corral__exec_sandbox_input__free_unpacked(in, NULL);
		*why = "the ExecSandboxInput frame has no payload set";
		return NULL;
	}
	return in;
}

Corral__ExecSandboxEvent *
wire_exec_event_unpack(const uint8_t *data, size_t len, const char **why)
{
	Corral__ExecSandboxEvent *ev;

	ev = (Corral__ExecSandboxEvent *)wire_unpack(&corral__exec_sandbox_event__descriptor,
	    data, len, "the frame is not a valid ExecSandboxEvent message", why);
	if (ev != NULL && ev->payload_case == CORRAL__EXEC_SANDBOX_EVENT__PAYLOAD__NOT_SET) {
		corral__exec_sandbox_event__free_unpacked(ev, NULL);
		*why = "the ExecSandboxEvent frame has no payload set";
		return NULL;
	}
	return ev;
}

Corral__Response *
wire_response_unpack(const uint8_t *data, size_t len, const char **why)
{
	Corral__Response *resp;

	resp = (Corral__Response *)wire_unpack(&corral__response__descriptor, data, len,
	    "the frame is not a valid Response message", why);
	if (resp != NULL && resp->response_case == CORRAL__RESPONSE__RESPONSE__NOT_SET) {
		corral__response__free_unpacked(resp, NULL);
		*why = "the Response frame holds no response this client knows";
		return NULL;
	}
	return resp;
}
