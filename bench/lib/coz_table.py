#!/usr/bin/env python3
"""Real Coz's profile beside ccc's, as a Markdown table (bench/coz.sh).

    coz_table.py profile.coz ccc-causal.json [TOP]

Coz's side follows how its viewer reads a profile: experiments are pooled
per selected line and speedup (deltas and durations summed); the period is
duration / delta; a line's gain at speedup s is (period(0) - period(s)) /
period(0), against that line's own 0% experiments. Lines are ranked by the
viewer's "impact" (the largest area under the curve over the speedup
range, normalised by it). Experiments whose duration wrapped (Coz 0.2.2
sometimes writes an unsigned underflow) are dropped and counted. The gains
shown at 25% and 50% are pooled over speedups within 5 points of each.

ccc's side is the summary of `ccc causal --json-out`: each site's median change
in progress rate at 25% and 50%.
"""

import json
import sys
from collections import defaultdict

WRAPPED = 1 << 62


def parse_coz(path, point):
    pooled = defaultdict(lambda: [0, 0, 0])  # (line, speedup) -> delta, ns, n
    dropped = 0
    experiment = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            parts = raw.rstrip("\n").split("\t")
            fields = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
            if parts[0] == "experiment":
                experiment = fields
            elif parts[0] in ("throughput-point", "progress-point") and experiment:
                if fields.get("name") != point:
                    continue
                duration = int(experiment["duration"])
                if duration <= 0 or duration >= WRAPPED:
                    dropped += 1
                    continue
                key = (experiment["selected"], round(float(experiment["speedup"]), 2))
                cell = pooled[key]
                cell[0] += int(fields.get("delta", 0))
                cell[1] += duration
                cell[2] += 1
    return pooled, dropped


def coz_curves(pooled):
    by_line = defaultdict(dict)
    for (line, speedup), (delta, ns, n) in pooled.items():
        by_line[line][speedup] = (delta, ns, n)
    curves = {}
    for line, points in by_line.items():
        base = points.get(0.0)
        if not base or base[0] == 0:
            continue
        period0 = base[1] / base[0]
        curve = {}
        for s, (delta, ns, n) in points.items():
            if delta > 0:
                curve[s] = ((period0 - ns / delta) / period0, n)
        curves[line] = curve
    return curves


def impact(curve):
    xs = sorted(curve)
    best, area = 0.0, 0.0
    for a, b in zip(xs, xs[1:]):
        area += (curve[a][0] + curve[b][0]) / 2 * (b - a)
        if b > 0:
            best = max(best, area / b)
    return best


def near(curve, target):
    picked = [(g, n) for s, (g, n) in curve.items() if abs(s - target) <= 0.05 + 1e-9]
    n = sum(n for _, n in picked)
    if not n:
        return None, 0
    return sum(g * n for g, n in picked) / n, n


MIN_SPEEDUPS = 4


def short(path):
    """A source line without the build machine's prefixes."""
    for marker, label in (("/library/", "std "), ("/index.crates.io-", "crate "), ("/src/", "ccc src/")):
        i = path.find(marker)
        if i < 0:
            continue
        rest = path[i + len(marker):]
        if label == "crate ":
            rest = rest.split("/", 1)[1]
        return label + rest
    return path


def pct(x):
    return "—" if x is None else f"{x * 100:+.1f}%"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    coz_path, ccc_path = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    pooled, dropped = parse_coz(coz_path, "asset-served")
    curves = coz_curves(pooled)
    experiments = sum(n for (_, _), (_, _, n) in pooled.items())
    print(f"## Real Coz: {len(curves)} lines with a 0% baseline "
          f"(ranked: those seen at {MIN_SPEEDUPS}+ speedups), "
          f"{experiments} experiments used, {dropped} with a wrapped duration dropped\n")
    print("| rank | line | impact | gain at 25% (n) | gain at 50% (n) | speedups |")
    print("|--:|---|--:|--:|--:|--:|")
    # Like the viewer's minimum-points setting: a line seen at too few
    # speedups has no curve to rank.
    ranked = sorted(
        ((line, c) for line, c in curves.items() if len(c) >= MIN_SPEEDUPS),
        key=lambda kv: impact(kv[1]),
        reverse=True,
    )
    for i, (line, curve) in enumerate(ranked[:top], 1):
        g25, n25 = near(curve, 0.25)
        g50, n50 = near(curve, 0.5)
        print(f"| {i} | `{short(line)}` | {impact(curve) * 100:.1f}% | {pct(g25)} ({n25}) "
              f"| {pct(g50)} ({n50}) | {len(curve)} |")
    try:
        with open(ccc_path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(f"\n(no ccc causal report to set beside it: {e})")
        return
    print(f"\n## ccc causal: baseline {report['summary']['baseline_rate']:.0f}/s\n")
    print("| site | gain at 25% | gain at 50% |")
    print("|---|--:|--:|")
    sites = defaultdict(dict)
    for line in report["summary"]["lines"]:
        sites[line["site"]][line["speedup_pct"]] = line.get("change_median")
    ordered = sorted(sites.items(), key=lambda kv: -(kv[1].get(50) or -1e9))
    for site, by_pct in ordered:
        print(f"| {site} | {pct(by_pct.get(25))} | {pct(by_pct.get(50))} |")


if __name__ == "__main__":
    main()
