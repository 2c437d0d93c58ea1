#!/usr/bin/env python3
"""tally from Python on the GPU against CuPy and PyTorch: sum and dot of float32 / float64
vectors of 2^20 .. 2^28 elements; max, argmax, norm, mean and var from 2^24 up (host values
on both sides: tally returns a Python scalar).

Each call is timed with CUDA events on the current stream around that one call (after a
warm-up), the median of --runs (>= 20) calls is kept, and GB/s counts the input bytes read
(dot: both inputs). Successive calls read different slices of a >= 1 GiB pool, so small sizes
are measured from HBM, not from L2. tally returns a Python scalar (the call waits for the
value on the host), so the libraries are timed both ways: their device result (asynchronous)
and the value on the host (float(...) / .item()).

    python bench/python_bench.py [--quick] [--runs N] [--csv FILE] [--md FILE]

Writes a CSV and a markdown table. Without a GPU, CuPy / torch, or tally's CUDA backend it says
so and exits with status 0.
"""
import argparse
import statistics
import sys


def no_gpu(why: str) -> None:
    print(f"python_bench: no GPU: {why}; nothing measured")
    sys.exit(0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=30, help="timed calls per case (>= 20; default 30)")
    p.add_argument("--quick", action="store_true", help="2^20 and 2^24 only, 20 runs")
    p.add_argument("--csv", default="python_bench.csv")
    p.add_argument("--md", default="python_bench.md")
    args = p.parse_args()
    runs = 20 if args.quick else max(20, args.runs)
    exps = [20, 24] if args.quick else [20, 22, 24, 26, 28]

    try:
        import tally
    except ImportError as e:
        no_gpu(f"the tally module is not importable ({e})")
    libs = {}
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            libs["cupy"] = cupy
    except Exception:
        pass
    try:
        import torch
        if torch.cuda.is_available():
            libs["torch"] = torch
    except Exception:
        pass
    if not libs:
        no_gpu("neither CuPy nor PyTorch with a CUDA device is available")
    if not tally.cuda_available():
        no_gpu("this build of tally has no CUDA backend or sees no GPU")

    rows = []
    for dt_name in ("float32", "float64"):
        for e in exps:
            n = 1 << e
            item = 4 if dt_name == "float32" else 8
            nbytes = n * item
            slices = max(1, min(64, (1 << 30) // nbytes))
            for lib_name, m in libs.items():
                if lib_name == "cupy":
                    pool = m.random.standard_normal(n * slices + n, dtype=m.float32).astype(dt_name)
                    ev = lambda: m.cuda.Event()  # noqa: E731
                    sync = m.cuda.Device().synchronize
                    cases = {
                        "tally.sum (exact)": lambda x, y: tally.sum(x),
                        "tally.sum (fast)": lambda x, y: tally.sum(x, accuracy="fast"),
                        "cupy.sum (device result)": lambda x, y: x.sum(),
                        "float(cupy.sum) (host value)": lambda x, y: float(x.sum()),
                        "tally.dot (exact)": lambda x, y: tally.dot(x, y),
                        "tally.dot (fast)": lambda x, y: tally.dot(x, y, accuracy="fast"),
                        "cupy.dot (device result)": lambda x, y: m.dot(x, y),
                        "float(cupy.dot) (host value)": lambda x, y: float(m.dot(x, y)),
                    }
                    if e >= 24:  # the other reductions, host values on both sides
                        cases.update({
                            "max: tally.max": lambda x, y: tally.max(x),
                            "max: float(cupy.max)": lambda x, y: float(x.max()),
                            "argmax: tally.argmax": lambda x, y: tally.argmax(x),
                            "argmax: int(cupy.argmax)": lambda x, y: int(x.argmax()),
                            "norm: tally.norm (exact)": lambda x, y: tally.norm(x),
                            "norm: float(cupy.linalg.norm)": lambda x, y: float(m.linalg.norm(x)),
                            "mean: tally.mean (exact)": lambda x, y: tally.mean(x),
                            "mean: float(cupy.mean)": lambda x, y: float(x.mean()),
                            "var: tally.var (exact)": lambda x, y: tally.var(x),
                            "var: tally.var (fast)": lambda x, y: tally.var(x, accuracy="fast"),
                            "var: float(cupy.var)": lambda x, y: float(x.var()),
                        })
                else:
                    pool = m.randn(n * slices + n, device="cuda", dtype=getattr(m, dt_name))
                    ev = lambda: m.cuda.Event(enable_timing=True)  # noqa: E731
                    sync = m.cuda.synchronize
                    cases = {
                        "tally.sum (exact), torch input": lambda x, y: tally.sum(x),
                        "torch.sum (device result)": lambda x, y: x.sum(),
                        "torch.sum().item() (host value)": lambda x, y: x.sum().item(),
                        "tally.dot (exact), torch input": lambda x, y: tally.dot(x, y),
                        "torch.dot (device result)": lambda x, y: m.dot(x, y),
                        "torch.dot().item() (host value)": lambda x, y: m.dot(x, y).item(),
                    }
                    if e >= 24:
                        cases.update({
                            "max: tally.max, torch input": lambda x, y: tally.max(x),
                            "max: torch.max().item()": lambda x, y: x.max().item(),
                            "argmax: tally.argmax, torch input": lambda x, y: tally.argmax(x),
                            "argmax: torch.argmax().item()": lambda x, y: x.argmax().item(),
                            "norm: tally.norm (exact), torch input": lambda x, y: tally.norm(x),
                            "norm: torch.linalg.vector_norm().item()": lambda x, y: m.linalg.vector_norm(x).item(),
                            "mean: tally.mean (exact), torch input": lambda x, y: tally.mean(x),
                            "mean: torch.mean().item()": lambda x, y: x.mean().item(),
                            "var: tally.var (exact), torch input": lambda x, y: tally.var(x),
                            "var: torch.var(correction=0).item()": lambda x, y: m.var(x, correction=0).item(),
                        })
                views = [pool[i * n:(i + 1) * n] for i in range(slices + 1)]
                for name, f in cases.items():
                    op = name.split(":")[0] if ":" in name else ("dot" if "dot" in name else "sum")
                    for w in range(3):  # warm-up: JIT, workspaces, allocator pools
                        f(views[w % len(views)], views[(w + 1) % len(views)])
                    sync()
                    times = []
                    for r in range(runs):
                        x, y = views[r % slices], views[(r % slices) + 1]
                        start, end = ev(), ev()
                        start.record()
                        f(x, y)
                        end.record()
                        end.synchronize()
                        ms = m.cuda.get_elapsed_time(start, end) if lib_name == "cupy" else start.elapsed_time(end)
                        times.append(ms * 1e-3)
                    t = statistics.median(times)
                    read = nbytes * (2 if op == "dot" else 1)
                    rows.append({"library": lib_name, "case": name, "op": op, "dtype": dt_name, "n": n,
                                 "median_us": t * 1e6, "GB/s": read / t / 1e9, "runs": runs})
                    print(f"{dt_name} 2^{e:<2} {name:34s} {t * 1e6:10.1f} us {read / t / 1e9:8.1f} GB/s", flush=True)
                del views, pool
                sync()

    import csv
    with open(args.csv, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(args.md, "w") as fh:
        fh.write("GB/s of input read (dot: both inputs), median of %d calls timed with CUDA events, "
                 "from Python.\n" % runs)
        for dt_name in ("float32", "float64"):
            for op in ("sum", "dot", "max", "argmax", "norm", "mean", "var"):
                sel = [r for r in rows if r["dtype"] == dt_name and r["op"] == op]
                if not sel:
                    continue
                ns = sorted({r["n"] for r in sel})
                fh.write(f"\n| {dt_name} {op}, n | " + " | ".join(f"2^{n.bit_length() - 1}" for n in ns) + " |\n")
                fh.write("|---" * (len(ns) + 1) + "|\n")
                for case in dict.fromkeys(r["case"] for r in sel):
                    cells = {r["n"]: r["GB/s"] for r in sel if r["case"] == case}
                    fh.write(f"| {case} | " + " | ".join(f"{cells[n]:.0f}" if n in cells else "" for n in ns) + " |\n")
    print(f"python_bench: wrote {args.csv} and {args.md}")


if __name__ == "__main__":
    main()
