#!/usr/bin/env python3
"""Turns tally_bench's CSV into a Markdown table and a plot (matplotlib).

    bench/report.py bench.csv --png docs/benchmarks/h200.png --md docs/benchmarks/h200.md \
        [--title "NVIDIA H200, driver 580.159.04, 2026-11-30"]

Plot: GB/s against elements (log x), one panel per (op, dtype), one line per library; the
read-kernel ceiling (for add: cudaMemcpy) is dashed.
"""
import argparse
import csv
import math
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CEILINGS = {"read-kernel", "memcpy-d2d"}
ORDER = ["tally", "tally-fast", "cub", "cub+memcpy", "cub-2pass", "cub-2pass+memcpy", "cublas", "cublas+memcpy",
         "thrust", "read-kernel", "memcpy-d2d"]


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            r["n"] = int(r["n"])
            for k in ("us_per_call", "gbps", "rel_check"):
                r[k] = float(r[k]) if r[k] not in ("", "nan", "-nan") else math.nan
            rows.append(r)
    return rows


def panels(rows):
    p = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        p[(r["op"], r["dtype"])][r["library"]][r["n"]] = r
    return p


def exp2(n):
    e = int(math.log2(n))
    return f"2^{e}" if 2**e == n else str(n)


def markdown(rows, title):
    out = [f"# tally benchmark: {title}", ""]
    for (op, dt), libs in sorted(panels(rows).items()):
        names = sorted(libs, key=lambda x: ORDER.index(x) if x in ORDER else 99)
        sizes = sorted({n for lib in libs.values() for n in lib})
        latency = op.endswith("latency")
        unit = "us end to end (value in host memory)" if latency else "GB/s"
        out.append(f"## {op} {dt} ({unit})")
        out.append("")
        ref = "cub+memcpy" if latency else ("memcpy-d2d" if op == "add" else "cub")
        # Rows of blocking tally calls (min, argmax, norms, mean, var, ...): against the
        # anchor whose value is copied to host memory too.
        with_copy = [lib for lib in names if lib.endswith("+memcpy")]
        if with_copy and not latency:
            ref = with_copy[0]
        if op == "minmax" and "thrust" in names:  # the one blocking minmax call there is
            ref = "thrust"
        head = ["n"] + names + [f"tally/{ref}" if not latency else f"tally time / {ref} time"]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for n in sizes:
            cells = [exp2(n)]
            for lib in names:
                r = libs[lib].get(n)
                v = r["us_per_call"] if (r and latency) else (r["gbps"] if r else math.nan)
                cells.append("" if math.isnan(v) else f"{v:.1f}")
            t, c = libs.get("tally", {}).get(n), libs.get(ref, {}).get(n)
            if t and c:
                ratio = t["us_per_call"] / c["us_per_call"] if latency else t["gbps"] / c["gbps"]
                cells.append(f"{ratio:.2f}")
            else:
                cells.append("")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def plot(rows, path, title):
    p = {k: v for k, v in panels(rows).items() if not k[0].endswith(("latency", "-exact"))}
    keys = sorted(p)
    if not keys:  # only exact-mode or latency rows: nothing to plot
        return
    cols = 3
    nrows = math.ceil(len(keys) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        libs = p[key]
        for lib in sorted(libs, key=lambda x: ORDER.index(x) if x in ORDER else 99):
            pts = sorted(libs[lib].items())
            xs = [n for n, _ in pts]
            ys = [r["gbps"] for _, r in pts]
            style = "--" if lib in CEILINGS else "-"
            floating = not key[1].startswith("int")
            label = {"tally": "tally (exact, default)" if floating else "tally",
                     "tally-fast": "tally (fast)"}.get(lib, lib)
            ax.plot(xs, ys, style, marker="o", ms=3, label=label, lw=2.2 if lib == "tally" else 1.2)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{key[0]} {key[1]}" + (" (3 streams; memcpy: 2)" if key[0] == "add" else ""))
        ax.set_xlabel("elements")
        ax.set_ylabel("GB/s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--png")
    ap.add_argument("--md")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    rows = load(a.csv)
    if a.md:
        with open(a.md, "w") as f:
            f.write(markdown(rows, a.title) + "\n")
    if a.png:
        plot(rows, a.png, a.title)


if __name__ == "__main__":
    main()
