"""The client's schema against common/corral.proto, PROTOCOL.md's test
vectors, and the codec's edges. Needs no daemon."""

import os
import re

import pytest

from corral import _wire

PROTO = os.path.join(os.path.dirname(__file__), "..", "..", "..", "common", "corral.proto")
SCALARS = {"string", "bytes", "bool", "uint32", "uint64", "int32", "int64"}


def proto_messages():
    """{message: {field: (number, kind, repeated)}} as corral.proto declares them."""
    text = re.sub(r"//[^\n]*", "", open(PROTO).read())
    out = {}
    for m in re.finditer(r"message\s+(\w+)\s*\{", text):
        depth, at = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[at], 0)
            at += 1
        body = text[m.end():at - 1]
        fields = {}
        for f in re.finditer(r"(repeated\s+)?(map<string,\s*string>|\w+)\s+(\w+)\s*=\s*(\d+)\s*;",
                             body):
            kind = "map" if f.group(2).startswith("map<") else f.group(2)
            fields[f.group(3)] = (int(f.group(4)), kind, bool(f.group(1)))
        out[m.group(1)] = fields
    return out


def test_every_field_the_client_knows_is_the_protos():
    proto = proto_messages()
    for message, fields in _wire.SCHEMA.items():
        assert message in proto, message
        for name, spec in fields.items():
            assert proto[message].get(name) == spec, (message, name, spec, proto[message].get(name))


def test_every_message_field_it_names_is_described():
    for fields in _wire.SCHEMA.values():
        for number, kind, repeated in fields.values():
            assert kind in SCALARS or kind == "map" or kind in _wire.SCHEMA, kind


# PROTOCOL.md, "The exec stream": payloads without the frame header.
@pytest.mark.parametrize("message,value,hexbytes", [
    ("ExecSandboxInput", {"start": {"sandbox_id": "abc", "command": ["bash", "-c"]}},
     "0a0f0a0361626312046261736812022d63"),
    ("ExecSandboxInput", {"stdin": b"hi\n"}, "120368690a"),
    ("ExecSandboxEvent", {"stdout": {"data": b"hello"}}, "0a070a0568656c6c6f"),
    ("ExecSandboxEvent", {"stderr": {"data": b"err"}}, "12050a03657272"),
    ("ExecSandboxEvent", {"exit": {"exit_code": 3}}, "1a020803"),
    ("ExecSandboxEvent", {"exit": {"exit_code": 0}}, "1a00"),
])
def test_the_protocols_test_vectors(message, value, hexbytes):
    assert _wire.encode(message, value).hex() == hexbytes
    back = _wire.decode(message, bytes.fromhex(hexbytes))
    member = next(iter(value))
    assert member in back


def test_an_empty_stdin_frame_is_sent_when_asked():
    assert _wire.encode("ExecSandboxInput", {"stdin": b""}) == b""
    assert _wire.encode("ExecSandboxInput", {"stdin": b""}, keep=("stdin",)) == b"\x12\x00"


def test_round_trips_negative_numbers_maps_and_repeats():
    value = {"sandbox_id": "s", "command": ["a", "é", ""], "environment": {"K": "v", "E": ""},
             "timeout_seconds": 7, "stdin": b"\x00\xff", "tty": True}
    back = _wire.decode("ExecSandboxRequest", _wire.encode("ExecSandboxRequest", value))
    assert back == dict(value, workdir="")
    for n in (-1, -(1 << 31), (1 << 31) - 1):
        assert _wire.decode("Exit", _wire.encode("Exit", {"exit_code": n}))["exit_code"] == n


def test_unknown_fields_are_skipped_and_defaults_filled():
    data = bytes.fromhex("a806017a0178") + _wire.encode("Error", {"code": "x"})
    assert _wire.decode("Error", data) == {"code": "x", "message": ""}


@pytest.mark.parametrize("data", ["0a05616263", "08", "0b", "0a80808080808080808001"])
def test_cut_or_bad_bytes_raise(data):
    with pytest.raises(_wire.WireError):
        _wire.decode("Error", bytes.fromhex(data))


def test_a_field_the_message_lacks_is_refused():
    with pytest.raises(KeyError):
        _wire.encode("Error", {"nope": 1})
