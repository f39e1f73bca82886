"""tests/bench/terminate_client.py MODE HOST CAFILE N [FLAG]: the client of
run-terminate-bench, inside a sandbox, straight to HOST:443 (through the
fence, as a program that ignores proxy variables would go).

  keep  N requests of GET /zen on one kept-alive connection
  new   N connections of one request each (a TLS handshake each)
  hold  N connections of one request each, kept open until FLAG.done
        exists (FLAG is made once all are open)

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
            conn = connection(host, ctx, 30)
            one(conn)
            held.append(conn)
        open(flag, "w").close()
        for _ in range(1200):
            if os.path.exists(flag + ".done"):
                break
            time.sleep(0.1)


main()
