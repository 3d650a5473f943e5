#!/usr/bin/env python3
"""Write the stream shapes of scripts/bench's issue 17 rows as cdclog JSON Lines.

  bigtime N     times 0-4 empty, then one time (5) holding N distinct updates
                (objects {"id":k,"name":"row-k%97"}), about a third of them
                twice, shuffled, its progress statement in the middle: a table
                snapshot at one time
  payload N S   the seed-like stream of N messages (four keys, about 30% of
                them with an update at a time, one progress statement per
                time, a quarter of the messages twice, reordered within four
                times) whose update data are JSON objects of about S bytes

Usage: bench_shapes.py bigtime N > FILE | bench_shapes.py payload N S > FILE.
Both are deterministic (fixed seeds).
"""
import random
import sys


def bigtime(n, out):
    rng = random.Random(7)
    lines = []
    for k in range(n):
        line = '{"update":{"data":{"id":%d,"name":"row-%d"},"time":5,"diff":1}}\n' % (k, k % 97)
        lines.append(line)
        if rng.random() < 1 / 3:
            lines.append(line)
    rng.shuffle(lines)
    out.write('{"progress":{"lower":0,"upper":5,"counts":[]}}\n')
    mid = len(lines) // 2
    out.writelines(lines[:mid])
    out.write('{"progress":{"lower":5,"upper":6,"counts":[{"time":5,"count":%d}]}}\n' % n)
    out.writelines(lines[mid:])


def payload(n, size, out):
    rng = random.Random(7)
    pad = "x" * max(0, size - 40)
    window, emitted, t = [], 0, 0
    while emitted < n:
        lines, count = [], 0
        for k in range(4):
            if rng.random() < 0.3:
                lines.append('{"update":{"data":{"id":%d,"pad":"%s","t":%d},"time":%d,"diff":1}}\n' % (k, pad, t, t))
                count += 1
        counts = '{"time":%d,"count":%d}' % (t, count) if count else ""
        lines.append('{"progress":{"lower":%d,"upper":%d,"counts":[%s]}}\n' % (t, t + 1, counts))
        for line in lines:
            for _ in range(2 if rng.random() < 0.25 else 1):
                window.append((t + rng.randrange(4), line))
        keep = []
        for at, line in window:
            if at <= t and emitted < n:
                out.write(line)
                emitted += 1
            else:
                keep.append((at, line))
        window = keep
        t += 1


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "bigtime":
        bigtime(int(args[1]), sys.stdout)
    elif len(args) == 3 and args[0] == "payload":
        payload(int(args[1]), int(args[2]), sys.stdout)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
