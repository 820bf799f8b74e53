#!/usr/bin/env python3
"""How often each level's steady-throughput interval holds the mean of many runs of one
configuration: the runs' own spread against the intervals they reported.

    benchmarks/interval_coverage.py DIR...

DIR holds bundles of throughput sweeps of one configuration, each a run with its own seed, as
`benchmarks/verdict_pairs.sh same N` leaves them (every pair's `a/` and `b/`). Per level: the
runs, their spread (1.96 standard deviations, in per cent of their mean: what a 95 % interval
of one run should reach), the mean half-width the runs reported, the share of runs whose
interval holds the mean of all of them (95 % intervals should hold it about 95 times in 100),
and how many ended flagged `imprecise` or `capped`. A level that was interrupted or had failed
requests (a campaign stopped by hand) is left out and counted. Not run by the tests or CI: see
BENCHMARKS.md.
"""

import collections
import json
import pathlib
import statistics
import sys


def levels(path):
    """(concurrency, steady tok/s, its ± per cent, flags) of each measured level of a bundle."""
    try:
        bundle = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    for sweep in bundle.get("sweeps") or []:
        if sweep.get("kind") != "throughput":
            continue
        for point in sweep.get("points") or []:
            summary = point.get("summary") or {}
            value, pm = summary.get("steady_tok_s"), summary.get("steady_pm_pct")
            if value is None or pm is None:
                continue
            flags = {f.get("kind") for f in point.get("flags") or []}
            yield point["concurrency"], value, pm, flags


def main(dirs):
    if not dirs:
        sys.exit(__doc__)
    by_level = collections.defaultdict(list)
    left_out = 0
    files = [f for d in dirs for f in sorted(pathlib.Path(d).rglob("*.json"))]
    for f in files:
        for c, value, pm, flags in levels(f):
            if flags & {"interrupted", "failed"}:
                left_out += 1
                continue
            by_level[c].append((value, pm, flags))
    if not by_level:
        sys.exit(f"no throughput levels with an interval in {len(files)} files under {dirs}")
    print("   C |  runs | runs' spread | mean ± | holds the mean | imprecise | capped")
    for c in sorted(by_level):
        runs = by_level[c]
        values = [v for v, _, _ in runs]
        mean = statistics.fmean(values)
        spread = 1.96 * statistics.stdev(values) / mean * 100 if len(values) > 1 else float("nan")
        held = sum(1 for v, pm, _ in runs if abs(v - mean) / mean * 100 <= pm)
        print(
            f"{c:4d} | {len(runs):5d} | {spread:10.2f} % | {statistics.fmean(pm for _, pm, _ in runs):4.2f} % "
            f"| {held / len(runs) * 100:12.1f} % | {sum('imprecise' in f for _, _, f in runs):9d} "
            f"| {sum('capped' in f for _, _, f in runs):6d}"
        )
    print(f"{left_out} levels interrupted or with failed requests left out")


if __name__ == "__main__":
    main(sys.argv[1:])
