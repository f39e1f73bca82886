"""The control socket's wire (PROTOCOL.md): frames, and the protobuf
encoding of the messages of common/corral.proto this client uses.

A message is a dict; SCHEMA names each message's fields by their number
and kind, as corral.proto declares them (tests/test_wire.py checks the two
agree). Kinds: "string", "bytes", "bool", "uint32", "uint64", "int32",
"int64", "map" (map<string, string>) and a message's name. A field is
(number, kind, repeated)."""

import struct

FRAME_HEADER = struct.Struct(">BI")
FRAME_MAX_BYTES = 4 * 1024 * 1024

SCHEMA = {
    "ExecSandboxRequest": {
        "sandbox_id": (1, "string", False), "command": (2, "string", True),
        "workdir": (3, "string", False), "environment": (4, "map", False),
        "timeout_seconds": (5, "uint32", False), "stdin": (6, "bytes", False),
        "tty": (7, "bool", False),
    },
    "ExecSandboxInput": {
        "start": (1, "ExecSandboxRequest", False), "stdin": (2, "bytes", False),
    },
    "Output": {"data": (1, "bytes", False)},
    "Exit": {"exit_code": (1, "int32", False), "timed_out": (2, "bool", False),
             "ended_by": (3, "string", False)},
    "ExecSandboxEvent": {
        "stdout": (1, "Output", False), "stderr": (2, "Output", False),
        "exit": (3, "Exit", False), "error": (4, "Error", False),
    },
    "Error": {"code": (1, "string", False), "message": (2, "string", False)},
    "Request": {
        "exec_start": (1, "ExecSandboxRequest", False),
        "run_start": (4, "RunStart", False), "run_ack": (5, "RunAck", False),
        "run_resume": (6, "RunResume", False), "run_interrupt": (7, "RunInterrupt", False),
        "run_list": (8, "RunList", False), "sandbox_create": (9, "SandboxCreate", False),
        "sandbox_get": (10, "SandboxGet", False), "sandbox_list": (11, "SandboxList", False),
        "sandbox_delete": (12, "SandboxDelete", False), "status": (13, "Status", False),
        "policy_get": (15, "PolicyGet", False), "policy_update": (17, "PolicyUpdate", False),
        "denials": (18, "Denials", False), "fs_read": (20, "FsRead", False),
        "fs_write": (21, "FsWrite", False), "fs_list": (23, "FsList", False),
        "fs_grep": (24, "FsGrep", False),
    },
    "RunStart": {
        "sandbox": (1, "string", False), "shell": (2, "string", False),
        "command": (3, "string", False), "timeout_seconds": (4, "uint32", False),
        "request_id": (5, "string", False),
    },
    "RunAck": {"sandbox": (1, "string", False), "request_id": (2, "string", False)},
    "RunResume": {
        "sandbox": (1, "string", False), "request_id": (2, "string", False),
        "from_offset": (3, "uint64", False), "late": (4, "bool", False),
    },
    "RunInterrupt": {"sandbox": (1, "string", False), "request_id": (2, "string", False)},
    "RunList": {"sandbox": (1, "string", False)},
    "Root": {"path": (1, "string", False), "writable": (2, "bool", False)},
    "SandboxCreate": {
        "roots": (1, "Root", True), "cwd": (2, "string", False),
        "profile": (3, "string", False), "policy": (4, "string", False),
        "run_as": (5, "string", False), "grants": (6, "string", True),
        "home": (7, "string", False), "labels": (8, "map", False), "env": (9, "map", False),
        "pids": (10, "uint32", False), "memory_bytes": (11, "uint64", False),
        "milli_cpus": (12, "uint32", False), "session_id": (13, "string", False),
        "agent": (14, "string", False), "name": (15, "string", False),
        "allow_nested_readonly": (16, "bool", False), "secrets": (17, "SecretValue", True),
    },
    "SecretValue": {"name": (1, "string", False), "value": (2, "bytes", False)},
    "SandboxGet": {"name": (1, "string", False)},
    "SandboxList": {"selector": (1, "map", False)},
    "SandboxDelete": {"names": (1, "string", True), "all": (2, "bool", False)},
    "Status": {},
    "PolicyGet": {"sandbox": (1, "string", False)},
    "PolicyUpdate": {
        "sandbox": (1, "string", False), "rule": (2, "string", False),
        "add_endpoints": (3, "string", True), "binaries": (4, "string", True),
        "remove_endpoints": (5, "string", True), "close_revoked": (6, "bool", False),
    },
    "Denials": {"sandbox": (1, "string", False), "since_us": (2, "int64", False)},
    "FsRead": {"sandbox": (1, "string", False), "path": (2, "string", False)},
    "FsWrite": {
        "sandbox": (1, "string", False), "path": (2, "string", False),
        "content": (3, "bytes", False),
    },
    "FsList": {"sandbox": (1, "string", False), "path": (2, "string", False)},
    "FsGrep": {
        "sandbox": (1, "string", False), "pattern": (2, "string", False),
        "path": (3, "string", False),
    },
    "Response": {
        "error": (4, "Error", False), "ok": (5, "Ok", False),
        "status": (6, "StatusReply", False), "sandbox": (7, "SandboxInfo", False),
        "sandbox_list": (8, "SandboxListReply", False),
        "sandbox_delete": (9, "SandboxDeleteReply", False),
        "run_event": (10, "RunEvent", False), "run_list": (11, "RunListReply", False),
        "policy": (12, "PolicyReply", False), "denials": (13, "DenialsReply", False),
        "fs_write": (15, "FsWriteReply", False), "fs_read": (16, "FsReadReply", False),
        "fs_list": (17, "FsListReply", False), "fs_grep": (18, "FsGrepReply", False),
    },
    "Ok": {},
    "StatusReply": {
        "version": (1, "string", False), "sandboxes": (2, "uint32", False),
        "layers": (3, "string", True), "started_at_us": (4, "int64", False),
        "ledger_ok": (6, "bool", False), "firewall": (9, "string", False),
        "profiles_version": (13, "uint64", False),
    },
    "Mount": {
        "type": (1, "string", False), "source": (2, "string", False),
        "target": (3, "string", False), "read_only": (4, "bool", False),
    },
    "Runner": {
        "os": (1, "string", False), "kernel": (2, "string", False),
        "landlock_abi": (3, "uint32", False),
    },
    "Network": {
        "gateway": (1, "string", False), "proxy": (2, "string", False),
        "dns": (3, "string", False),
    },
    "Limit": {
        "name": (1, "string", False), "value": (2, "uint64", False),
        "source": (3, "string", False), "controller": (4, "string", False),
    },
    "CredentialSkip": {"path": (1, "string", False), "reason": (2, "string", False)},
    "Credential": {
        "name": (1, "string", False), "hosts": (2, "string", True),
        "copied": (3, "string", True), "skipped": (4, "CredentialSkip", True),
    },
    "SandboxInfo": {
        "name": (1, "string", False), "state": (2, "string", False),
        "enforcement": (3, "string", False), "missing_layers": (4, "string", True),
        "profile": (5, "string", False), "roots": (6, "Root", True),
        "mounts": (7, "Mount", True), "labels": (8, "map", False),
        "session_id": (9, "string", False), "agent": (10, "string", False),
        "machine_id": (11, "string", False), "runner": (12, "Runner", False),
        "network": (13, "Network", False), "credentials": (14, "Credential", True),
        "created_at_us": (15, "int64", False),
        "run_as": (16, "string", False), "cwd": (17, "string", False),
        "home": (18, "string", False), "limits": (19, "Limit", True),
        "secrets": (20, "SecretInfo", True),
    },
    "SecretInfo": {
        "name": (1, "string", False), "hosts": (2, "string", True),
        "env": (3, "string", True), "files": (4, "string", True),
    },
    "SandboxListReply": {"sandboxes": (1, "SandboxInfo", True)},
    "SandboxDeleteReply": {"deleted": (1, "string", True)},
    "RunOutput": {"offset": (1, "uint64", False), "data": (2, "bytes", False)},
    "RunResult": {
        "exit_code": (1, "int32", False), "signal": (2, "int32", False),
        "cwd": (3, "string", False), "timed_out": (4, "bool", False),
        "truncated": (5, "bool", False), "respawned": (6, "bool", False),
        "state_saved": (7, "bool", False), "ended_by": (8, "string", False),
    },
    "RunEvent": {"output": (1, "RunOutput", False), "result": (2, "RunResult", False)},
    "RunInfo": {
        "request_id": (1, "string", False), "shell": (2, "string", False),
        "command": (3, "string", False), "started_at_us": (4, "int64", False),
        "output_bytes": (5, "uint64", False), "result": (6, "RunResult", False),
        "late_bytes": (7, "uint64", False),
    },
    "RunListReply": {"runs": (1, "RunInfo", True)},
    "PolicyReply": {"yaml": (1, "string", False)},
    "Denial": {
        "ts_us": (1, "int64", False), "host": (2, "string", False),
        "port": (3, "uint32", False), "binary": (4, "string", False),
        "pid": (5, "int32", False), "reason": (6, "string", False),
        "count": (7, "uint32", False),
    },
    "DenialsReply": {"denials": (1, "Denial", True)},
    "FsWriteReply": {
        "path": (1, "string", False), "bytes_written": (2, "uint64", False),
        "created": (3, "bool", False),
    },
    "FsReadReply": {
        "path": (1, "string", False), "content": (2, "bytes", False),
        "truncated": (3, "bool", False),
    },
    "FsEntry": {
        "name": (1, "string", False), "type": (2, "string", False),
        "size": (3, "uint64", False),
    },
    "FsListReply": {"entries": (1, "FsEntry", True)},
    "GrepMatch": {
        "path": (1, "string", False), "line": (2, "uint32", False),
        "text": (3, "string", False),
    },
    "FsGrepReply": {"count": (1, "uint32", False), "matches": (2, "GrepMatch", True)},
}

_VARINT_KINDS = {"bool", "uint32", "uint64", "int32", "int64"}
_SCALAR_DEFAULTS = {"string": "", "bytes": b"", "bool": False, "uint32": 0, "uint64": 0,
                    "int32": 0, "int64": 0}


class WireError(ValueError):
    """Bytes that are not the message they should be."""


def _varint(n):
    if n < 0:
        n += 1 << 64            # negative int32 and int64: ten bytes, as protobuf does
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(number, wire_type):
    return _varint(number << 3 | wire_type)


def _encode_scalar(kind, value):
    if kind in _VARINT_KINDS:
        return _varint(int(value))
    data = value.encode("utf-8") if kind == "string" else bytes(value)
    return _varint(len(data)) + data


def _encode_field(number, kind, value):
    if kind == "map":
        out = b""
        for k, v in value.items():
            entry = _encode_field(1, "string", k) + _encode_field(2, "string", v)
            out += _key(number, 2) + _varint(len(entry)) + entry
        return out
    if kind in SCHEMA:
        body = encode(kind, value)
        return _key(number, 2) + _varint(len(body)) + body
    return _key(number, 0 if kind in _VARINT_KINDS else 2) + _encode_scalar(kind, value)


def encode(message, value, keep=()):
    """The protobuf bytes of VALUE (a dict) as MESSAGE; fields at their
    default are left out, as proto3 does, but a message field given (even
    empty) is sent: a oneof member names the request. So are the scalar
    fields named in KEEP (a oneof's empty bytes: the exec stream's end of
    stdin)."""
    fields = SCHEMA[message]
    unknown = set(value) - set(fields)
    if unknown:
        raise KeyError("%s has no field %s" % (message, ", ".join(sorted(unknown))))
    out = b""
    for name, (number, kind, repeated) in sorted(fields.items(), key=lambda f: f[1][0]):
        if name not in value or value[name] is None:
            continue
        v = value[name]
        if repeated:
            for item in v:
                out += _encode_field(number, kind, item)
        elif kind in SCHEMA or kind == "map" or v != _SCALAR_DEFAULTS[kind] or name in keep:
            out += _encode_field(number, kind, v)
    return out


def _read_varint(data, at):
    n = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise WireError("a varint runs past its message")
        b = data[at]
        at += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, at


def _fields(data):
    """(number, wire type, value) of each field of DATA; a length-delimited
    value is bytes, a varint an int; fixed-width ones are skipped."""
    at = 0
    while at < len(data):
        key, at = _read_varint(data, at)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, at = _read_varint(data, at)
        elif wire_type == 2:
            size, at = _read_varint(data, at)
            if size > len(data) - at:
                raise WireError("a field runs past its message")
            value, at = bytes(data[at:at + size]), at + size
        elif wire_type in (1, 5):
            at += 8 if wire_type == 1 else 4
            if at > len(data):
                raise WireError("a field runs past its message")
            continue
        else:
            raise WireError("wire type %d" % wire_type)
        yield number, wire_type, value


def _decode_value(kind, wire_type, value):
    if kind in _VARINT_KINDS:
        if wire_type != 0:
            raise WireError("a %s that is not a varint" % kind)
        if kind == "bool":
            return value != 0
        if kind in ("int32", "int64") and value >= 1 << 63:
            value -= 1 << 64
        if kind in ("int32", "uint32"):
            value &= 0xFFFFFFFF
            if kind == "int32" and value >= 1 << 31:
                value -= 1 << 32
        return value
    if wire_type != 2:
        raise WireError("a %s that is not length-delimited" % kind)
    if kind == "string":
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as e:
            raise WireError("a string that is not UTF-8") from e
    if kind == "bytes":
        return value
    return decode(kind, value)


def decode(message, data):
    """MESSAGE's fields in DATA as a dict: every field, at its default when
    absent, except message fields, which are there only when set (so a
    oneof's member is the one key present). Unknown fields are skipped."""
    fields = SCHEMA[message]
    by_number = {number: (name, kind, repeated)
                 for name, (number, kind, repeated) in fields.items()}
    out = {}
    for name, (number, kind, repeated) in fields.items():
        if repeated:
            out[name] = []
        elif kind == "map":
            out[name] = {}
        elif kind not in SCHEMA:
            out[name] = _SCALAR_DEFAULTS[kind]
    for number, wire_type, value in _fields(data):
        if number not in by_number:
            continue
        name, kind, repeated = by_number[number]
        if kind == "map":
            entry = {"key": "", "value": ""}
            for n, wt, v in _fields(value):
                if n in (1, 2):
                    entry["key" if n == 1 else "value"] = _decode_value("string", wt, v)
            out[name][entry["key"]] = entry["value"]
        elif repeated:
            out[name].append(_decode_value(kind, wire_type, value))
        else:
            out[name] = _decode_value(kind, wire_type, value)
    return out


def frame(payload):
    """One frame: flag 0, the length, the payload."""
    if len(payload) > FRAME_MAX_BYTES:
        raise WireError("a frame over %d bytes" % FRAME_MAX_BYTES)
    return FRAME_HEADER.pack(0, len(payload)) + payload


def read_frame(sock):
    """The next frame's payload from SOCK, or None at the end of the stream."""
    header = _read_exactly(sock, FRAME_HEADER.size)
    if header is None:
        return None
    flag, size = FRAME_HEADER.unpack(header)
    if flag != 0 or size > FRAME_MAX_BYTES:
        raise WireError("a frame header that is not corral's (flag %d, %d bytes)" % (flag, size))
    payload = _read_exactly(sock, size)
    if payload is None:
        raise WireError("the stream ended inside a frame")
    return payload


def _read_exactly(sock, size):
    buf = bytearray()
    while len(buf) < size:
        chunk = sock.recv(size - len(buf))
        if not chunk:
            if not buf:
                return None if size > 0 else b""
            raise WireError("the stream ended inside a frame")
        buf += chunk
    return bytes(buf)
