#!/usr/bin/env python3
"""Summarises an ncu source page exported as CSV (`ncu -i R --page source --csv --print-source
sass`, scripts/ncu-source.sh): the kernel's warp instructions and stall samples, then its runs of
consecutive SASS lines with the same execution count (a basic block or a straight stretch),
largest first, as instructions per `unit` executions (e.g. a work item's count) and samples.

usage: scripts/sass-regions.py FILE.csv [--unit N] [--top K]"""
import argparse
import csv

ap = argparse.ArgumentParser()
ap.add_argument("csv")
ap.add_argument("--unit", type=float, default=0, help="divide instruction counts by this (0: the most common count)")
ap.add_argument("--top", type=int, default=25)
a = ap.parse_args()
rows = list(csv.reader(open(a.csv)))
hdr, data = rows[1], rows[2:]
ie = hdr.index("Instructions Executed")
ss = hdr.index("Warp Stall Sampling (All Samples)")
cnt = [float(r[ie] or 0) for r in data]
smp = [float(r[ss] or 0) for r in data]
total, samples = sum(cnt), sum(smp)
unit = a.unit
if unit <= 0:
    from collections import Counter
    unit = Counter(c for c in cnt if c > 0).most_common(1)[0][0]
print(f"{rows[0][1][:160]}")
print(f"warp instructions {total:.0f} ({total / unit:.1f} per {unit:.0f}), stall samples {samples:.0f}")
runs = []
for i, (c, s) in enumerate(zip(cnt, smp)):
    if runs and runs[-1][2] == c:
        runs[-1][1] = i
        runs[-1][3] += s
    else:
        runs.append([i, i, c, s])
runs.sort(key=lambda r: -r[2] * (r[1] - r[0] + 1))
print(f"{'lines':>13} {'count':>9} {'n':>4} {'instr/unit':>10} {'share':>6} {'samples':>8} {'share':>6}  first instruction")
for b, e, c, s in runs[: a.top]:
    n = e - b + 1
    print(f"{b:6}-{e:6} {c:9.0f} {n:4} {c * n / unit:10.1f} {c * n / total:6.1%} {s:8.0f} {s / samples:6.1%}  {data[b][1].strip()[:60]}")
