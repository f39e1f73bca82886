"""tests/e2e/lib/memscan.py PID NEEDLE...: how many times each NEEDLE is in
the readable memory of process PID (as root), one count per line. What a
test uses to show that a secret's value is nowhere in a process.

Read in pieces that overlap by the longest needle less one, so that one
across two pieces is counted once. A mapping past RESERVED_MIN is a
sanitizer's shadow (an ASan build reserves terabytes it never touches):
not read, since no heap of a test's daemon is that large."""
import re
import sys

PIECE = 16 << 20
RESERVED_MIN = 64 << 30


def count_in(mem, start, end, needles, counts):
    overlap = max(len(n) for n in needles) - 1
    at = start
    while at < end:
        stop = min(end, at + PIECE)
        try:
            mem.seek(at)
            data = mem.read(stop - at + (overlap if stop < end else 0))
        except OSError:
            return
        for i, n in enumerate(needles):
            # A match that starts in the overlap is the next piece's.
            for m in re.finditer(re.escape(n), data):
                if m.start() < stop - at:
                    counts[i] += 1
        at = stop


def main():
    pid, needles = sys.argv[1], [n.encode() for n in sys.argv[2:]]
    counts = [0] * len(needles)
    with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:
        for line in maps:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
            if m is None or "[vvar" in line or "[vsyscall]" in line:
                continue
            start, end = int(m.group(1), 16), int(m.group(2), 16)
            if end - start >= RESERVED_MIN:
                continue
            count_in(mem, start, end, needles, counts)
    for c in counts:
        print(c)


main()
