"""tests/bench/terminate_client.py MODE HOST CAFILE N [FLAG]: the client of
run-terminate-bench, inside a sandbox, straight to HOST:443 (through the
fence, as a program that ignores proxy variables would go).

  keep  N requests of GET /zen on one kept-alive connection
  new   N connections of one request each (a TLS handshake each)
  hold  N connections of one request each, kept open until FLAG.done
        exists (FLAG is made once all are open)

Prints "p50 MS p90 MS rps R" (keep, new) from the first byte written to
the response read."""
import http.client
import os
import ssl
import sys
import time


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
        conn = http.client.HTTPSConnection(host, context=ctx, timeout=10)
        one(conn)
        start = time.perf_counter()
        for _ in range(n):
            t = time.perf_counter()
            one(conn)
            times.append(time.perf_counter() - t)
        summary(times, time.perf_counter() - start)
    elif mode == "new":
        one(http.client.HTTPSConnection(host, context=ctx, timeout=10))
        start = time.perf_counter()
        for _ in range(n):
            t = time.perf_counter()
            conn = http.client.HTTPSConnection(host, context=ctx, timeout=10)
            one(conn)
            times.append(time.perf_counter() - t)
            conn.close()
        summary(times, time.perf_counter() - start)
    else:
        flag = sys.argv[5]
        held = []
        for _ in range(n):
            conn = http.client.HTTPSConnection(host, context=ctx, timeout=30)
            one(conn)
            held.append(conn)
        open(flag, "w").close()
        for _ in range(1200):
            if os.path.exists(flag + ".done"):
                break
            time.sleep(0.1)


main()
