#!/usr/bin/env python3
"""A package manager's fetch loop, for tests/bench/run-fetch-bench: N HTTPS
GETs one after the other, each on a new TCP connection with a new TLS
handshake (no session is resumed), the certificate checked against CA.

  fetch_client.py --direct ADDR --count N --host NAME --path P --ca CA
  fetch_client.py --proxy ADDR:PORT --count N --host NAME --path P --ca CA

--direct dials ADDR (the name resolved once, before the loop); --proxy asks
the proxy for NAME:443 with CONNECT each time, so the proxy resolves it.
Prints one line: count=N seconds=S per_fetch_ms=M p50_ms=P errors=E.
"""
import argparse
import socket
import ssl
import statistics
import sys
import time

READ_BYTES = 65536
TIMEOUT_S = 10


def connect_direct(args):
    return socket.create_connection((args.direct, 443), timeout=TIMEOUT_S)


def connect_proxy(args):
    host, port = args.proxy.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
    sock.sendall(("CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" %
                  (args.host, args.host)).encode())
    # The server speaks only after the ClientHello: whatever comes before
    # it is the proxy's answer.
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(READ_BYTES)
        if not chunk:
            raise OSError("the proxy closed before its answer")
        head += chunk
    if not head.startswith(b"HTTP/1.1 200"):
        raise OSError("the proxy answered " + head.split(b"\r\n")[0].decode())
    return sock


def fetch(args, ctx, connect):
    with connect(args) as raw:
        with ctx.wrap_socket(raw, server_hostname=args.host) as tls:
            tls.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" %
                         (args.path, args.host)).encode())
            body = b""
            while True:
                chunk = tls.recv(READ_BYTES)
                if not chunk:
                    break
                body += chunk
    if not body.startswith(b"HTTP/1.1 200"):
        raise OSError("the server answered " + body.split(b"\r\n")[0].decode())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--direct")
    parser.add_argument("--proxy")
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--host", required=True)
    parser.add_argument("--path", default="/")
    parser.add_argument("--ca", required=True)
    args = parser.parse_args()
    if (args.direct is None) == (args.proxy is None):
        sys.exit("fetch_client.py: one of --direct and --proxy")
    connect = connect_direct if args.direct else connect_proxy
    ctx = ssl.create_default_context(cafile=args.ca)
    times, errors = [], 0
    start = time.perf_counter()
    for _ in range(args.count):
        t0 = time.perf_counter()
        try:
            fetch(args, ctx, connect)
        except (OSError, ssl.SSLError) as e:
            errors += 1
            print("fetch_client.py: %s" % e, file=sys.stderr)
        times.append(time.perf_counter() - t0)
    total = time.perf_counter() - start
    print("count=%d seconds=%.3f per_fetch_ms=%.3f p50_ms=%.3f errors=%d" %
          (args.count, total, total * 1000 / args.count,
           statistics.median(times) * 1000, errors))


if __name__ == "__main__":
    main()
