#!/usr/bin/env python3
"""TCP probes of a relay (the egress proxy's tunnels, corral forward).

  tcpprobe.py twice-server HOST PORT
      serves forever: each byte a client sends is answered by two small
      writes 2 ms apart ("head", "tail"), TCP_NODELAY set as a TLS server
      sets it (its handshake flight may come so)
  tcpprobe.py rounds ADDR [--connect HOST:PORT]
      15 rounds of one byte out, the 8-byte answer back; prints the median
      round in whole milliseconds
  tcpprobe.py echo-whole ADDR BYTES [--connect HOST:PORT]
      sends BYTES bytes while reading, then half-closes and reads to the
      end; prints the bytes that came back and whether they were the same,
      after the proxy's status line with --connect

ADDR is HOST:PORT; --connect first asks the proxy at ADDR for HOST:PORT.
"""
import argparse
import socket
import statistics
import sys
import threading
import time

ROUNDS = 15
ANSWER = (b"head", b"tail")
GAP_S = 0.002
READ_BYTES = 65536
TIMEOUT_S = 20


def serve_twice(conn):
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with conn:
        while conn.recv(1):
            conn.sendall(ANSWER[0])
            time.sleep(GAP_S)
            conn.sendall(ANSWER[1])


def twice_server(host, port):
    srv = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, port))
    srv.listen(8)
    while True:
        threading.Thread(target=serve_twice, args=(srv.accept()[0],), daemon=True).start()


def split_addr(addr):
    host, port = addr.rsplit(":", 1)
    return host.strip("[]"), int(port)


def open_stream(addr, connect):
    """A connection to ADDR, through its CONNECT to CONNECT when given;
    the proxy's status line too (None without)."""
    sock = socket.create_connection(split_addr(addr), timeout=TIMEOUT_S)
    if connect is None:
        return sock, None
    sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (connect, connect)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            sys.exit("tcpprobe.py: the proxy closed before its answer")
        head += chunk
    return sock, head.split(b"\r\n")[0].decode()


def read_exactly(sock, count):
    got = b""
    while len(got) < count:
        chunk = sock.recv(READ_BYTES)
        if not chunk:
            sys.exit("tcpprobe.py: the stream ended")
        got += chunk
    return got


def rounds(addr, connect):
    sock, _ = open_stream(addr, connect)
    times = []
    for _ in range(ROUNDS):
        start = time.monotonic()
        sock.sendall(b"q")
        read_exactly(sock, sum(len(a) for a in ANSWER))
        times.append(time.monotonic() - start)
    print("%d" % (statistics.median(times) * 1000))


def echo_whole(addr, count, connect):
    sock, status = open_stream(addr, connect)
    data = bytes(range(256)) * (count // 256) + bytes(count % 256)

    def send():
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)

    threading.Thread(target=send, daemon=True).start()
    got = bytearray()
    while True:
        chunk = sock.recv(READ_BYTES)
        if not chunk:
            break
        got += chunk
    words = [status] if status is not None else []
    print(" ".join(words + [str(len(got)), str(bytes(got) == data)]))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("twice-server")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p = sub.add_parser("rounds")
    p.add_argument("addr")
    p.add_argument("--connect")
    p = sub.add_parser("echo-whole")
    p.add_argument("addr")
    p.add_argument("bytes", type=int)
    p.add_argument("--connect")
    args = parser.parse_args()
    if args.what == "twice-server":
        twice_server(args.host, args.port)
    elif args.what == "rounds":
        rounds(args.addr, args.connect)
    else:
        echo_whole(args.addr, args.bytes, args.connect)


if __name__ == "__main__":
    main()
