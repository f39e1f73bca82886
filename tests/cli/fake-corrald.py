#!/usr/bin/env python3
"""A stand-in for corrald on a Unix socket, for the CLI's shell tests.

Speaks the framing of PROTOCOL.md with a hand-written protobuf encoder (no
protobuf module needed), answers the lifecycle requests with fixed
sandboxes, and plays scripted exec and logs streams chosen by the sandbox name.
Every request it decodes is written, as JSON, to the file named by its
second argument, so a test can check what the CLI sent. It stops by itself
after LIFETIME_S seconds.

usage: fake-corrald.py SOCKET REQUEST-LOG
"""
import json
import os
import socket
import sys
import threading
import time

LIFETIME_S = 60
BIG_OUTPUT_BYTES = 70000        # needs a three-byte length varint


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def ld(field, data):
    return varint(field << 3 | 2) + varint(len(data)) + data


def s(field, text):
    return ld(field, text.encode()) if text else b""


def u(field, n):
    return varint(field << 3) + varint(n) if n else b""


def decode(data):
    """Field number -> list of values (ints for varints, bytes otherwise)."""
    fields, i = {}, 0
    while i < len(data):
        key, i = read_varint(data, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            val, i = read_varint(data, i)
        elif wt == 2:
            n, i = read_varint(data, i)
            val, i = data[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        fields.setdefault(field, []).append(val)
    return fields


def read_varint(data, i):
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def text(f, n):
    return f.get(n, [b""])[0].decode()


def strings(f, n):
    return [v.decode() for v in f.get(n, [])]


def mapping(f, n):
    return {text(decode(e), 1): text(decode(e), 2) for e in f.get(n, [])}


def sandbox_info(name, label="red"):
    return b"".join([
        s(1, name), s(2, "ready"), s(3, "partial"), s(4, "landlock abi 6"),
        s(5, "strict"),
        ld(6, s(1, "/srv/app") + u(2, 1)), ld(6, s(1, "/srv/ref")),
        ld(7, s(1, "bind") + s(2, "/usr") + s(3, "/usr") + u(4, 1)),
        ld(8, s(1, "team") + s(2, label)),
        s(9, "s-1"), s(10, "agent-7"), s(11, "local"),
        ld(12, s(1, "linux") + s(2, "6.1.0") + u(3, 3)),
        ld(13, s(1, "10.231.0.1") + s(2, "http://10.231.0.1:3128") + s(3, "10.231.0.1")),
        ld(14, s(1, "gh") + s(2, "api.github.com:443") + s(2, "github.com:443")),
        u(15, 1764439111123456), s(16, "1000"), s(17, "/srv/app"),
        s(18, "/var/lib/corral/sandboxes/%s/home" % name),
        ld(19, s(1, "pids") + u(2, 512) + s(3, "request") + s(4, "v1")),
        ld(19, s(1, "memory") + u(2, 3 << 30) + s(3, "default") + s(4, "v1")),
        ld(19, s(1, "tmpfs") + u(2, 768 << 20) + s(3, "default") + s(4, "tmpfs")),
    ])


def frame(payload):
    return b"\0" + len(payload).to_bytes(4, "big") + payload


def error(message):
    return frame(ld(4, s(1, "not_found") + s(2, message)))


def read_frame(conn):
    head = read_exact(conn, 5)
    if head is None:
        return None
    return read_exact(conn, int.from_bytes(head[1:], "big"))


def read_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def log_request(path, record):
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def create(f, log):
    roots = [{"path": text(decode(r), 1), "writable": bool(decode(r).get(2, [0])[0])}
             for r in f.get(1, [])]
    log_request(log, {"request": "create", "roots": roots, "cwd": text(f, 2),
                      "profile": text(f, 3), "policy": text(f, 4), "run_as": text(f, 5),
                      "grants": strings(f, 6), "home": text(f, 7),
                      "labels": mapping(f, 8), "env": mapping(f, 9),
                      "pids": f.get(10, [0])[0], "memory_bytes": f.get(11, [0])[0],
                      "milli_cpus": f.get(12, [0])[0], "session_id": text(f, 13),
                      "agent": text(f, 14), "name": text(f, 15),
                      "allow_nested_readonly": bool(f.get(16, [0])[0])})
    return frame(ld(7, sandbox_info(text(f, 15) or "box-1")))


def answer(field, f, log):
    if field == 9:
        return create(f, log)
    if field == 10:
        name = text(f, 1)
        log_request(log, {"request": "get", "name": name})
        if name == "missing":
            return error("no sandbox named 'missing' (see `corral sandbox list`)")
        if name == "hostile":
            return frame(ld(7, sandbox_info(name, "red\x1b]0;pwned\x07\nState:       forged")))
        return frame(ld(7, sandbox_info(name)))
    if field == 11:
        log_request(log, {"request": "list", "selector": mapping(f, 1)})
        return frame(ld(8, ld(1, sandbox_info("alpha")) + ld(1, sandbox_info("beta"))))
    if field == 12:
        names = strings(f, 1)
        log_request(log, {"request": "delete", "names": names, "all": bool(f.get(2, [0])[0])})
        deleted = ["alpha", "beta"] if f.get(2) else [n for n in names if n != "ghost"]
        return frame(ld(9, b"".join(s(1, n) for n in deleted)))
    if field == 14:
        log_request(log, {"request": "reap"})
        return frame(ld(19, s(1, "old-box") + s(2, "veth crs3h")))
    return error("this fake corrald does not answer request %d" % field)


def exec_stream(conn, start, log):
    """Plays the stream the sandbox's name asks for."""
    name = text(start, 1)
    log_request(log, {"request": "exec", "sandbox": name, "command": strings(start, 2),
                      "workdir": text(start, 3), "environment": mapping(start, 4),
                      "timeout_seconds": start.get(5, [0])[0],
                      "tty": bool(start.get(7, [0])[0])})
    if name == "missing":
        conn.sendall(error("no sandbox named 'missing'"))
        return
    if name == "gone":
        return
    if name == "tty":
        first = decode(read_frame(conn))
        size = decode(first[3][0]) if 3 in first else {}
        msg = "resize %dx%d\n" % (size.get(1, [0])[0], size.get(2, [0])[0])
        conn.sendall(frame(ld(1, ld(1, msg.encode()))) + frame(ld(3, b"")))
        return
    echo(conn)


def echo(conn):
    """Echoes stdin as stdout until the empty stdin frame, then a large
    output split across many small writes, one stderr line, and exit 3."""
    while True:
        msg = read_frame(conn)
        if msg is None:
            return
        data = decode(msg).get(2, [b""])[0]
        if not data:
            break
        conn.sendall(frame(ld(1, ld(1, data))))
    big = frame(ld(1, ld(1, b"x" * BIG_OUTPUT_BYTES)))
    for i in range(0, len(big), 4093):     # partial frames reach the reader
        conn.sendall(big[i:i + 4093])
        time.sleep(0.001)
    conn.sendall(frame(ld(2, ld(1, b"err\n"))) + frame(ld(3, u(1, 3))))


def record(event, sandbox, host, port, decision=None, reason=None, binary=None,
           up=None, down=None, ts="2026-11-29T17:58:31.123456Z", ident=7, raw=False):
    """One ledger line, fields in the ledger's order (corral-ledger(5)); with
    raw, non-ASCII characters as UTF-8 bytes, as corrald writes them."""
    return json.dumps({
        "ts": ts, "event": event, "id": ident, "sandbox": sandbox, "session_id": None,
        "agent": None, "run": None, "pid": None, "binary": binary, "mode": "connect",
        "host": host, "port": port, "ip": None, "decision": decision, "policy": None,
        "reason": reason, "bytes_up": up, "bytes_down": down,
        "duration_ms": None if up is None else 12}, separators=(",", ":"),
        ensure_ascii=not raw)


def logs_frame(records, end):
    return frame(ld(14, b"".join(s(1, r) for r in records) + u(2, 1 if end else 0)))


def logs_stream(conn, f, log):
    """Answers a Logs request; the sandbox's name picks the script."""
    name = text(f, 1)
    log_request(log, {"request": "logs", "sandbox": name,
                      "denied_only": bool(f.get(2, [0])[0]), "since_us": f.get(3, [0])[0],
                      "follow": bool(f.get(4, [0])[0]), "until_us": f.get(5, [0])[0]})
    if name == "missing":
        conn.sendall(error("no sandbox named 'missing'"))
        return
    first = [record("connect", "web", "example.com", 443, "allow", binary="/usr/bin/curl"),
             record("close", "web", "example.com", 443, binary="/usr/bin/curl",
                    up=517, down=1048576)]
    if name == "cut":
        conn.sendall(logs_frame(first, False))
        return
    if name == "follow":
        conn.sendall(logs_frame(first[:1], False))
        time.sleep(0.3)
        conn.sendall(logs_frame(first[1:], False))
        conn.settimeout(10)
        conn.recv(1)            # until the client closes
        return
    if name == "c1":            # C1 controls (U+009B is CSI) and DEL, raw in JSON strings
        conn.sendall(logs_frame([record("connect", "c1", "\x9b" "31mred.evil.com", 443, "deny",
                                        "host_not_allowed", "/tmp/\x7f\x85x", raw=True)], True))
        return
    if name == "big":
        line = record("connect", "big", "x" * 900 + ".example.com", 443, "allow")
        for _ in range(3):      # 3 frames of 2,000 records: 5.5 MB in all
            conn.sendall(logs_frame([line] * 2000, False))
        conn.sendall(logs_frame([], True))
        return
    second = [record("connect", None, "pypi.org", 443, "allow"),
              record("connect", "web", "evil.com", 443, "deny", "host_not_allowed",
                     "/tmp/x\x1b]0;pwned\x07"),
              record("dns", "web", "secret.evil.com", None, "deny", "dns_name_not_allowed"),
              record("connect", "web", "::1", 80, "deny", "loopback")]
    conn.sendall(logs_frame(first, False)[:7])   # a frame split across writes
    time.sleep(0.05)
    conn.sendall(logs_frame(first, False)[7:] + logs_frame(second, True))


def serve(conn, log):
    with conn:
        first = read_frame(conn)
        if first is None:
            return
        req = decode(first)
        field = next(iter(req))
        body = decode(req[field][0])
        if field == 1:
            exec_stream(conn, body, log)
        elif field == 19:
            logs_stream(conn, body, log)
        else:
            conn.sendall(answer(field, body, log))


def main():
    path, log = sys.argv[1], sys.argv[2]
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(8)
    srv.settimeout(1)
    print("ready", flush=True)
    end = time.time() + LIFETIME_S
    while time.time() < end:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(conn, log), daemon=True).start()
    os.unlink(path)


if __name__ == "__main__":
    main()
