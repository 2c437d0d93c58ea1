#!/usr/bin/env python3
"""Compares two sets of tally_bench tables (A and B: the files of one build's runs each), case by
case at each case's largest n: the median GB/s of A's runs and of B's, and B/A.
usage: scripts/ab-compare.py 'A_GLOB' 'B_GLOB' [--only REGEX]"""
import argparse, glob, re, statistics, sys

def table(path):
    """{(case, column): GB/s} at the largest n of each case of one tally_bench output."""
    rows, head, cols = {}, None, None
    for line in open(path):
        if re.match(r"^[a-z][\w-]* ", line) and "(GB/s" in line:
            head = " ".join(line.split()[:2])
        elif line.strip().startswith("n ") and head:
            cols = line.replace("tally us", "tally_us").split("rel.")[0].split()[1:]
        elif head and cols and re.match(r"^\s*\d+\s", line):
            for c, x in zip(cols, line.split()[1:]):
                if "/" not in c and c != "tally_us":
                    try:
                        rows[(head, c)] = float(x)
                    except ValueError:
                        pass
    return rows

ap = argparse.ArgumentParser()
ap.add_argument("a"); ap.add_argument("b"); ap.add_argument("--only", default="")
o = ap.parse_args()
runs = {}
for k, pat in (("A", o.a), ("B", o.b)):
    files = sorted(glob.glob(pat))
    if not files:
        sys.exit(f"ab-compare: no file matches {pat}")
    runs[k] = [table(f) for f in files]
keys = sorted(set().union(*[set(t) for t in runs["A"] + runs["B"]]))
print(f"{'case':40s} {'column':24s} {'A':>8s} {'B':>8s} {'B/A':>6s}  (median of {len(runs['A'])} and {len(runs['B'])} runs, GB/s)")
ratios = []
for k in keys:
    if o.only and not re.search(o.only, " ".join(k)):
        continue
    a = [t[k] for t in runs["A"] if k in t]
    b = [t[k] for t in runs["B"] if k in t]
    if not a or not b:
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    r = mb / ma if ma else float("nan")
    ratios.append(r)
    print(f"{k[0]:40s} {k[1]:24s} {ma:8.1f} {mb:8.1f} {r:6.3f}")
if ratios:
    print(f"geometric mean of B/A over {len(ratios)} figures: {statistics.geometric_mean(ratios):.3f}")
