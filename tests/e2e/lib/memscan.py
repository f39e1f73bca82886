"""tests/e2e/lib/memscan.py PID NEEDLE...: how many times each NEEDLE is in
the readable memory of process PID (as root), one count per line. What a
test uses to show that a secret's value is nowhere in a process."""
import re
import sys


def main():
    pid, needles = sys.argv[1], [n.encode() for n in sys.argv[2:]]
    counts = [0] * len(needles)
    with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:
        for line in maps:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
            if m is None or "[vvar" in line or "[vsyscall]" in line:
                continue
            start, end = int(m.group(1), 16), int(m.group(2), 16)
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except OSError:
                continue
            for i, n in enumerate(needles):
                counts[i] += data.count(n)
    for c in counts:
        print(c)


main()
