"""tests/bench/terminate_client.py MODE HOST CAFILE N [FLAG]: the client of
run-terminate-bench, inside a sandbox, straight to HOST:443 (through the
fence, as a program that ignores proxy variables would go).

  keep  N requests of GET /zen on one kept-alive connection
  new   N connections of one request each (a TLS handshake each)
  hold  N connections of one request each, kept open until FLAG.done
        exists (FLAG is made once all are open)
  hold2 the same over HTTP/2 (ALPN h2; frames written by hand: the
        standard library has no HTTP/2)

Prints "p50 MS p90 MS rps R" (keep, new) from the first byte written to
the response read. CONNECT_TO=ADDR:PORT in the environment connects there
instead of to HOST:443 (a peer proxy), HOST still the name asked and
verified."""
import http.client
import os
import socket
import ssl
import sys
import time

CONNECT_TO = os.environ.get("CONNECT_TO")


def connection(host, ctx, timeout):
    conn = http.client.HTTPSConnection(host, context=ctx, timeout=timeout)
    if CONNECT_TO:
        addr, port = CONNECT_TO.rsplit(":", 1)
        conn._create_connection = lambda _a, t=timeout, s=None: socket.create_connection(
            (addr, int(port)), t, s)
    return conn


def one(conn):
    conn.request("GET", "/zen")
    r = conn.getresponse()
    r.read()
    if r.status != 200:
        sys.exit("status %d" % r.status)


def h2_frame(kind, flags, stream, payload):
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + \
        stream.to_bytes(4, "big") + payload


def h2_literal(name, value):
    """An HPACK literal without indexing, no Huffman (names and values short)."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def h2_one(host, ctx):
    """An HTTP/2 connection with one GET /zen answered, left open."""
    ctx.set_alpn_protocols(["h2"])
    raw = socket.create_connection((CONNECT_TO.rsplit(":", 1)[0], int(CONNECT_TO.rsplit(":", 1)[1]))
                                   if CONNECT_TO else (host, 443), 30)
    tls = ctx.wrap_socket(raw, server_hostname=host)
    if tls.selected_alpn_protocol() != "h2":
        sys.exit("no h2")
    head = b"".join(h2_literal(n, v) for n, v in ((b":method", b"GET"), (b":scheme", b"https"),
                                                  (b":path", b"/zen"),
                                                  (b":authority", host.encode())))
    tls.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0, b"") +
                h2_frame(1, 0x5, 1, head))
    got = b""
    while b"\x00\x01\x00\x00\x00\x01" not in got:     # a DATA frame ending stream 1
        chunk = tls.recv(65536)
        if not chunk:
            sys.exit("closed")
        got += chunk
    return tls


def summary(times, wall):
    times.sort()
    n = len(times)
    print("p50 %.3f p90 %.3f rps %.0f" % (times[n // 2] * 1e3, times[n * 9 // 10] * 1e3,
                                          n / wall))


def main():
    mode, host, cafile, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    ctx = ssl.create_default_context(cafile=cafile)
    times = []
    if mode == "keep":
        conn = connection(host, ctx, 10)
        one(conn)
        start = time.perf_counter()
        for _ in range(n):
            t = time.perf_counter()
            one(conn)
            times.append(time.perf_counter() - t)
        summary(times, time.perf_counter() - start)
    elif mode == "new":
        one(connection(host, ctx, 10))
        start = time.perf_counter()
        for _ in range(n):
            t = time.perf_counter()
            conn = connection(host, ctx, 10)
            one(conn)
            times.append(time.perf_counter() - t)
            conn.close()
        summary(times, time.perf_counter() - start)
    else:
        flag = sys.argv[5]
        held = []
        for _ in range(n):
            if mode == "hold2":
                held.append(h2_one(host, ctx))
                continue
            conn = connection(host, ctx, 30)
            one(conn)
            held.append(conn)
        open(flag, "w").close()
        for _ in range(1200):
            if os.path.exists(flag + ".done"):
                break
            time.sleep(0.1)


main()
