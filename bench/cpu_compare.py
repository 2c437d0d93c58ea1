#!/usr/bin/env python3
"""tally's CPU backend beside numpy.sum and std::reduce on this machine, same sizes, same run.

Runs build/bench/tally_cpu_bench (Google Benchmark, JSON out), times numpy.sum with the same
data sizes (median of timeit repeats), prints a table and writes CSV.
    bench/cpu_compare.py [--bench build/bench/tally_cpu_bench] [--csv out.csv] [--quick]
"""
import argparse
import json
import os
import statistics
import subprocess
import timeit

import numpy as np


def numpy_gbps(dtype, n, repeat):
    x = np.random.default_rng(7).random(n).astype(dtype)
    number = max(1, int(2e7 // n))
    t = timeit.repeat(lambda: x.sum(), number=number, repeat=repeat)
    return x.nbytes / (statistics.median(t) / number) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="build/bench/tally_cpu_bench")
    ap.add_argument("--csv")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    args = [a.bench, "--benchmark_format=json"]
    if a.quick:
        args += ["--benchmark_min_time=0.01", "--benchmark_filter=/65536$"]
    else:
        args += ["--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true"]
    out = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    rows = {}
    for b in out["benchmarks"]:
        if b.get("aggregate_name", "median") != "median":
            continue
        name, n = b["run_name"].split("/")[:2] if "run_name" in b else b["name"].split("/")[:2]
        rows[(name, int(n))] = b["bytes_per_second"] / 1e9
    sizes = sorted({n for (_, n) in rows})
    print(f"CPU: {os.cpu_count()} cores, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'all')}")
    print(f"{'dtype':8} {'n':>10} {'exact GB/s':>11} {'fast GB/s':>10} {'numpy GB/s':>11} {'std::reduce':>12}"
          f" {'exact/numpy':>12} {'fast/numpy':>11}")
    lines = ["dtype,n,tally_exact_gbps,tally_fast_gbps,numpy_gbps,std_reduce_gbps"]
    for dt, np_dt in (("float", np.float32), ("double", np.float64)):
        for n in sizes:
            t = rows.get((f"tally_sum<{dt}>", n))
            fa = rows.get((f"tally_sum_fast<{dt}>", n), float("nan"))
            s = rows.get((f"std_reduce<{dt}>", n))
            if t is None:
                continue
            npg = numpy_gbps(np_dt, n, 3 if a.quick else 15)
            name = np.dtype(np_dt).name
            print(f"{name:8} {n:>10} {t:>11.1f} {fa:>10.1f} {npg:>11.1f} {s or float('nan'):>12.1f}"
                  f" {t / npg:>12.2f} {fa / npg:>11.2f}")
            lines.append(f"{name},{n},{t:.3f},{fa:.3f},{npg:.3f},{(s or float('nan')):.3f}")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
