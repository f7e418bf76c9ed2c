#!/usr/bin/env python3
"""Two callgrind dumps compared function by function, per request.

    python3 bench/lib/callgrind_self.py A.dump REQUESTS_A B.dump REQUESTS_B [EVENT] [ROWS]

Sums each function's own cost (not what it calls) of EVENT (default DLmw,
last-level write misses; any event the dumps name: Ir, DLmr, ...) in each
dump, divides by the requests served in it, and prints the functions
whose per-request cost differs most, A minus B. The dumps must be written
with --compress-strings=no (bench/instructions.sh with CACHE_SIM=1).
"""
import collections
import sys


def own_costs(path):
    events, costs, function, call_line = None, collections.Counter(), None, False
    width = 0
    with open(path, errors="replace") as dump:
        for line in dump:
            if line.startswith("events:"):
                events = line.split()[1:]
                width = len(events)
                costs = collections.defaultdict(lambda: [0] * width)
            elif line.startswith("fn="):
                function = line[3:].strip()
            elif line.startswith("calls="):
                call_line = True  # the next cost line is the call's, not the function's own
            elif line[:1].isdigit() or line[:1] in "+-*":
                if call_line:
                    call_line = False
                    continue
                for i, value in enumerate(line.split()[1:]):
                    costs[function][i] += int(value)
    return events, costs


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    events, a = own_costs(sys.argv[1])
    _, b = own_costs(sys.argv[3])
    requests_a, requests_b = int(sys.argv[2]), int(sys.argv[4])
    event = sys.argv[5] if len(sys.argv) > 5 else "DLmw"
    rows = int(sys.argv[6]) if len(sys.argv) > 6 else 20
    k = events.index(event)
    total_a = sum(c[k] for c in a.values()) / requests_a
    total_b = sum(c[k] for c in b.values()) / requests_b
    print(f"{event} per request: A {total_a:.2f}, B {total_b:.2f}, A - B {total_a - total_b:+.2f}")
    diffs = []
    for function in set(a) | set(b):
        per_a = a[function][k] / requests_a if function in a else 0.0
        per_b = b[function][k] / requests_b if function in b else 0.0
        diffs.append((per_a - per_b, per_a, per_b, function))
    diffs.sort(key=lambda d: -abs(d[0]))
    for diff, per_a, per_b, function in diffs[:rows]:
        print(f"{diff:+8.2f} {per_a:8.2f} {per_b:8.2f}  {function[:110]}")


if __name__ == "__main__":
    main()
