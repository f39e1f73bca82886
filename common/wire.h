/* Protobuf messages in and out of frames: pack a message behind its frame
 * header, and unpack a frame's payload into the message the protocol
 * expects at that point, refusing anything else (PROTOCOL.md). Never exits,
 * never logs. Free unpacked messages with their generated
 * corral__*__free_unpacked(msg, NULL). */
#ifndef CORRAL_WIRE_H
#define CORRAL_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "common/corral.pb-c.h"

/* Error.code values (PROTOCOL.md, "Errors"). */
#define WIRE_ERR_PROTOCOL "protocol"			/* bad frame or unexpected message */
#define WIRE_ERR_INVALID "invalid_argument"		/* a field's value is refused */
#define WIRE_ERR_NOT_FOUND "not_found"			/* no such sandbox, run, file */
#define WIRE_ERR_PERMISSION "permission_denied"		/* not the caller's to touch */
#define WIRE_ERR_EXISTS "already_exists"		/* name or request id taken */
#define WIRE_ERR_LIMIT "limit"				/* a cap was reached */
#define WIRE_ERR_UNAVAILABLE "unavailable"		/* a layer or resource is missing */
#define WIRE_ERR_INTERNAL "internal"			/* the daemon failed */

/* Packs MSG behind a frame header into a new buffer (free() it) and sets
 * *LEN to its size; NULL with errno EMSGSIZE when the message is over
 * FRAME_MAX_BYTES, ENOMEM when memory runs out. */
uint8_t *wire_pack(const ProtobufCMessage *msg, size_t *len);

/* Packs an Error frame. Response.error and ExecSandboxEvent.error are both
 * field 4, so the same bytes answer any client, whatever it asked. */
uint8_t *wire_pack_error(const char *code, const char *message, size_t *len);

/* Unpacks a connection's first frame. NULL, with *WHY a fixed sentence,
 * when the payload is not a Request, sets the reserved field 2 or 3, or
 * names no request this build knows. */
Corral__Request *wire_request_unpack(const uint8_t *data, size_t len, const char **why);

/* Unpacks a client's later frame on an exec stream; NULL with *WHY when it
 * is not an ExecSandboxInput or has no payload set. */
Corral__ExecSandboxInput *wire_exec_input_unpack(const uint8_t *data, size_t len,
    const char **why);

/* Unpacks the daemon's frame on an exec stream; NULL with *WHY when it is
 * not an ExecSandboxEvent or has no payload set. */
Corral__ExecSandboxEvent *wire_exec_event_unpack(const uint8_t *data, size_t len,
    const char **why);

/* Unpacks the daemon's answer to any other request; NULL with *WHY when it
 * is not a Response or holds no response this build knows. */
Corral__Response *wire_response_unpack(const uint8_t *data, size_t len, const char **why);

#endif
