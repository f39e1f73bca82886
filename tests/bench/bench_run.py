#!/usr/bin/python3
"""tests/bench/bench_run.py SOCKET SANDBOX [N]: bench_run's first part
through the Python client (clients/python): N runs of `true` in the
sandbox's main shell, each on a fresh connection, from the call to the
result; p50, p90, max in bench_run's format. Run by run-shell-bench."""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "clients", "python"))
import corral  # noqa: E402


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    n = int(argv[3]) if len(argv) > 3 else 1000
    sb = corral.connect(argv[1]).get(argv[2])
    sb.run("true", id="py-warm-up-%d" % os.getpid())
    v = []
    for i in range(n):
        t0 = time.monotonic()
        sb.run("true", id="py-bench-true-%d-%d" % (os.getpid(), i))
        v.append(time.monotonic() - t0)
    v.sort()
    print("%-34s n %4d  p50 %8.3f ms  p90 %8.3f ms  max %8.3f ms" % (
        "python: run `true`", n, v[n // 2] * 1000, v[n * 9 // 10] * 1000, v[-1] * 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
