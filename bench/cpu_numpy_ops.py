#!/usr/bin/env python3
"""tally's CPU backend (through the Python module) beside NumPy, operation by operation.

Whole-array reductions (sum exact and fast, max, argmax, mean, var, norm, dot) at several
lengths, and axis reductions (sum exact and fast, max, argmax, mean) of row-major float64
matrices along both axes. Each figure is the median of --repeat timeit runs (each run as many
calls as take about 0.1 s, at least one), tally and NumPy on the same array in the same
process, after one warm-up call each. The ratio is tally's time over NumPy's (below 1: tally
is faster). Both return the same kind of result; tally's exact results are correctly
rounded, NumPy's are not, so this compares the cost of tally's guarantees too.

    PYTHONPATH=build/python python3 bench/cpu_numpy_ops.py [--repeat 7] [--quick] [--csv F]

OMP_NUM_THREADS sets tally's thread count (NumPy's reductions run on one thread).
"""
import argparse
import csv
import os
import statistics
import sys
import timeit

import numpy as np

import tally


def median_seconds(f, repeat):
    f()  # warm-up (first-touch, thread pool start)
    t = timeit.timeit(f, number=1)
    number = max(1, int(0.1 / max(t, 1e-7)))
    return statistics.median(timeit.repeat(f, number=number, repeat=repeat)) / number


def whole_cases(x):
    return [
        ("sum", lambda: tally.sum(x), lambda: np.sum(x)),
        ("sum fast", lambda: tally.sum(x, accuracy="fast"), lambda: np.sum(x)),
        ("max", lambda: tally.max(x), lambda: np.max(x)),
        ("argmax", lambda: tally.argmax(x), lambda: np.argmax(x)),
        ("mean", lambda: tally.mean(x), lambda: np.mean(x)),
        ("var", lambda: tally.var(x), lambda: np.var(x)),
        ("norm", lambda: tally.norm(x), lambda: np.linalg.norm(x)),
        ("dot", lambda: tally.dot(x, x), lambda: np.dot(x, x)),
    ]


def axis_cases(x, ax):
    return [
        ("sum", lambda: tally.sum(x, axis=ax), lambda: np.sum(x, axis=ax)),
        ("sum fast", lambda: tally.sum(x, axis=ax, accuracy="fast"), lambda: np.sum(x, axis=ax)),
        ("max", lambda: tally.max(x, axis=ax), lambda: np.max(x, axis=ax)),
        ("argmax", lambda: tally.argmax(x, axis=ax), lambda: np.argmax(x, axis=ax)),
        ("mean", lambda: tally.mean(x, axis=ax), lambda: np.mean(x, axis=ax)),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    ap.add_argument("--csv", help="also write the table as CSV")
    a = ap.parse_args()
    rng = np.random.default_rng(7)
    lengths = [1000, 100_000] if a.quick else [1000, 100_000, 10_000_000]
    shapes = [(100, 1000)] if a.quick else [(1000, 10_000), (100_000, 100), (10_000_000, 1)]
    rows = []
    print(f"tally CPU backend vs NumPy {np.__version__}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}")
    print(f"{'case':34s} {'tally':>12s} {'numpy':>12s} {'ratio':>7s}")
    for n in lengths:
        x = rng.random(n)
        for name, f, g in whole_cases(x):
            rows.append((f"n={n} {name}", median_seconds(f, a.repeat), median_seconds(g, a.repeat)))
            print(f"{rows[-1][0]:34s} {rows[-1][1] * 1e6:10.1f}us {rows[-1][2] * 1e6:10.1f}us {rows[-1][1] / rows[-1][2]:7.2f}",
                  flush=True)
    for shape in shapes:
        x = rng.random(shape)
        for ax in (0, 1):
            for name, f, g in axis_cases(x, ax):
                rows.append((f"{shape} axis={ax} {name}", median_seconds(f, a.repeat), median_seconds(g, a.repeat)))
                print(f"{rows[-1][0]:34s} {rows[-1][1] * 1e6:10.1f}us {rows[-1][2] * 1e6:10.1f}us "
                      f"{rows[-1][1] / rows[-1][2]:7.2f}", flush=True)
    if a.csv:
        with open(a.csv, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["case", "tally_s", "numpy_s", "ratio"])
            for c, t, u in rows:
                w.writerow([c, f"{t:.9g}", f"{u:.9g}", f"{t / u:.4g}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
