"""`tally ... --axis 0|1` on the cuda backend: the matrix is copied to the GPU once and reduced
there by the shape layer. Every answer the GPU gives must be the CPU's, text for text (exact and
integer sums and means, min/max/argmin/argmax are the same bits on every backend; fast float
sums are compared on integer-valued data, where every order of addition is exact). Each CLI
process initialises CUDA, so the JSON reports are compared for every case and the text output
once per file (the printing code is shared by both backends).

The GPU tests skip without a GPU (detected as test_cli does: `--backend auto` reports "cuda");
the no-GPU tests skip on a GPU machine.
"""
import json

import numpy as np
import pytest

from test_cli import bad, gpu_present, js, ok, run, save


@pytest.fixture(scope="module")
def gpu():
    if not gpu_present():
        pytest.skip("no CUDA GPU (or this build of tally has no CUDA backend)")


@pytest.fixture(scope="module")
def no_gpu():
    if gpu_present():
        pytest.skip("a CUDA GPU is present (the GPU tests cover this case)")


CMDS = ["sum", "mean", "min", "max", "argmin", "argmax"]


def both(path, cmd, axis, *extra):
    """The JSON reports of the cpu and cuda backends for one command."""
    cpu = js(cmd, path, "--axis", axis, "--backend", "cpu", *extra)
    r = run(cmd, path, "--axis", axis, "--backend", "cuda", "--json", *extra)
    return cpu, r


# Every shape in both memory orders, the four types in turn (each type meets four shapes, in
# both orders):
# 16 cases of about 30 CLI processes each. The full product (64 cases) took over 5 minutes on
# the GPU machine, where every process initialises CUDA.
_DTYPES = [np.float32, np.float64, np.int32, np.int64]
_SHAPES = [(7, 5), (1, 9), (9, 1), (300, 2), (2, 300), (0, 3), (3, 0), (1, 1)]
_CASES = [(_DTYPES[(i + 2 * f) % 4], shape, bool(f)) for i, shape in enumerate(_SHAPES) for f in (0, 1)]


@pytest.mark.parametrize("dtype,shape,fortran", _CASES)
def test_axis_cuda_gives_the_cpu_answer(gpu, tmp_path, dtype, shape, fortran):
    rng = np.random.default_rng(sum(shape) + 11)
    a = rng.integers(-50, 50, size=shape).astype(dtype)  # integer-valued: fast sums are exact too
    p = save(tmp_path, "a.npy", a, fortran=fortran)
    for axis in (0, 1):
        for cmd in CMDS:
            extras = [()] + ([("--accuracy", "fast")] if cmd == "sum" else [])
            for extra in extras:
                if cmd.startswith("arg") and a.shape[axis] == 0 and a.size == 0 and a.shape[1 - axis] > 0:
                    # an empty column/row has no index: the same input error on both backends
                    line = bad(cmd, p, "--axis", axis, "--backend", "cuda", words=["empty"])
                    assert line == bad(cmd, p, "--axis", axis, "--backend", "cpu")
                    continue
                cpu, r = both(p, cmd, axis, *extra)
                assert r.returncode == 0 and r.stderr == "", r.stderr
                got = json.loads(r.stdout)
                assert got["backend"] == "cuda"
                assert got["value"] == cpu["value"], (cmd, axis, extra)
                assert got["dtype"] == cpu["dtype"] and got["n"] == cpu["n"] and got["axis"] == axis
    # the text output too, line for line
    for cmd in ("sum", "argmax") if a.shape[1] > 0 else ("sum",):
        assert ok(cmd, p, "--axis", 1, "--backend", "cuda") == ok(cmd, p, "--axis", 1, "--backend", "cpu")


def test_axis_cuda_large_matrix_against_numpy(gpu, tmp_path):
    # 2.1 M elements: long rows and tall columns (tiles split across blocks on the GPU).
    rng = np.random.default_rng(4)
    a = rng.integers(-2**40, 2**40, size=(3001, 701), dtype=np.int64)
    a[1234, 17] = a.min() - 5  # a unique minimum
    a[:, 3] = 7                # a column of ties: argmin/argmax give 0
    p = save(tmp_path, "big.npy", a)
    for axis in (0, 1):
        assert js("sum", p, "--axis", axis, "--backend", "cuda")["value"] == a.sum(axis=axis).tolist()
        assert js("min", p, "--axis", axis, "--backend", "cuda")["value"] == a.min(axis=axis).tolist()
        assert js("argmin", p, "--axis", axis, "--backend", "cuda")["value"] == a.argmin(axis=axis).tolist()
        assert js("argmax", p, "--axis", axis, "--backend", "cuda")["value"] == a.argmax(axis=axis).tolist()
        # integer means are exact on the GPU: the cpu's bits
        assert js("mean", p, "--axis", axis, "--backend", "cuda")["value"] == \
            js("mean", p, "--axis", axis, "--backend", "cpu")["value"]
    f = rng.standard_normal((1500, 1400)) * 10.0 ** rng.integers(-20, 20, size=(1500, 1400))
    pf = save(tmp_path, "f.npy", f.astype(np.float32))
    for axis in (0, 1):
        for cmd in ("max", "argmax", "min", "argmin"):
            assert js(cmd, pf, "--axis", axis, "--backend", "cuda")["value"] == \
                js(cmd, pf, "--axis", axis, "--backend", "cpu")["value"]
        # fast float32 sums of wide data: within the fast bound of the exact sums, per output
        fast = js("sum", pf, "--axis", axis, "--backend", "cuda", "--accuracy", "fast")["value"]
        exact = js("sum", pf, "--axis", axis, "--backend", "cpu")["value"]
        mags = np.abs(f.astype(np.float32).astype(np.float64)).sum(axis=axis)
        assert len(fast) == len(exact)
        for g, e, m in zip(fast, exact, mags):
            # two float32 roundings (half an ulp each) plus the float64 tree's error (n * 2^-53 * sum|x|
            # at most, 1500 terms: below 1e-12 of the magnitudes)
            assert abs(g - e) <= 2.0 ** -24 * (abs(g) + abs(e)) + 1e-12 * m, (g, e, m)


def test_axis_cuda_nan_rules(gpu, tmp_path):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -1.0], [np.nan, np.nan, np.nan]])
    p = save(tmp_path, "a.npy", a)
    for axis in (0, 1):
        for cmd in ("min", "max", "argmin", "argmax"):
            assert js(cmd, p, "--axis", axis, "--backend", "cuda")["value"] == \
                js(cmd, p, "--axis", axis, "--backend", "cpu")["value"]
    assert js("max", p, "--axis", 0, "--backend", "cuda", "--skip-nan")["value"] == [4.0, 5.0, 3.0]
    assert js("argmax", p, "--axis", 0, "--backend", "cuda", "--skip-nan")["value"] == [1, 1, 0]
    bad("argmin", p, "--axis", 1, "--skip-nan", "--backend", "cuda", words=["row 2", "only NaN"])


def test_axis_cuda_errors_are_clear(gpu, tmp_path):
    big = save(tmp_path, "big.npy", np.full((2, 3), 2**62, dtype=np.int64))
    bad("sum", big, "--axis", 1, "--backend", "cuda", code=1, words=["overflow", "output 0"])
    bad("sum", save(tmp_path, "v.npy", np.arange(5.0)), "--axis", 0, "--backend", "cuda", words=["2-D", "(5,)"])
    # small integer types are read on the GPU too (once refused here), summed in 64 bits: the
    # cpu's answer and numpy's, past what uint8 holds
    u8 = save(tmp_path, "u8.npy", np.full((300, 2), 255, dtype=np.uint8))
    r = run("sum", u8, "--axis", 0, "--backend", "cuda")
    assert r.returncode == 0 and r.stdout == ok("sum", u8, "--axis", 0, "--backend", "cpu") + "\n", \
        (r.returncode, r.stdout, r.stderr)
    assert r.stdout.split() == ["76500", "76500"]
    # exact floating sums / means per output of wide-range data: the cpu's bits
    rng = np.random.default_rng(2)
    f = save(tmp_path, "f.npy", rng.standard_normal((50, 60)) * 10.0 ** rng.integers(-30, 30, (50, 60)))
    for cmd in ("sum", "mean"):
        for axis in (0, 1):
            r = run(cmd, f, "--axis", axis, "--backend", "cuda")
            assert r.returncode == 0 and r.stdout == ok(cmd, f, "--axis", axis, "--backend", "cpu") + "\n", \
                (r.returncode, r.stdout, r.stderr)


def test_axis_auto_uses_the_gpu(gpu, tmp_path):
    i = save(tmp_path, "i.npy", np.arange(60, dtype=np.int32).reshape(6, 10))
    r = js("sum", i, "--axis", 0)  # auto: the GPU, as the 1-D commands choose
    assert r["backend"] == "cuda" and r["value"] == np.arange(60).reshape(6, 10).sum(axis=0).tolist()
    f = np.random.default_rng(8).standard_normal((40, 30)) * 1e10
    p = save(tmp_path, "f.npy", f)
    for cmd in ("sum", "mean"):
        for axis in (0, 1):
            auto = js(cmd, p, "--axis", axis)  # exact per output on the GPU: the cpu's bits
            assert auto["backend"] == "cuda"
            assert auto["value"] == js(cmd, p, "--axis", axis, "--backend", "cpu")["value"]


def test_axis_cuda_without_a_gpu_is_a_clear_error(no_gpu, tmp_path):
    p = save(tmp_path, "a.npy", np.arange(12, dtype=np.int64).reshape(3, 4))
    for cmd in CMDS:
        line = bad(cmd, p, "--axis", 0, "--backend", "cuda", code=1)
        assert "cuda" in line.lower() and ("gpu" in line.lower() or "support" in line.lower()), line
    # auto: the cpu, with the numbers numpy gives
    r = js("sum", p, "--axis", 1)
    assert r["backend"] == "cpu" and r["value"] == [6, 22, 38]
    assert js("argmax", p, "--axis", 0, "--backend", "auto")["value"] == [2, 2, 2, 2]


def test_axis_with_no_outputs_is_an_empty_list(tmp_path):
    # (0, 3) along axis 1 and (3, 0) along axis 0: no rows / columns, so no results (NumPy: [])
    for shape, axis in (((0, 3), 1), ((3, 0), 0)):
        p = save(tmp_path, "e.npy", np.zeros(shape))
        for cmd in CMDS:
            assert js(cmd, p, "--axis", axis, "--backend", "cpu")["value"] == []
            assert ok(cmd, p, "--axis", axis, "--backend", "cpu") == ""


# ---- 1-D extremes and var/std on --backend cuda ---------------------------------------------------

def test_extremes_cuda_without_a_gpu_name_the_command(no_gpu, tmp_path):
    # The library names its operation (min / max); the message names the command typed.
    p = save(tmp_path, "a.npy", np.array([3.0, 1.0, 2.0]))
    for cmd in ("min", "max", "argmin", "argmax"):
        line = bad(cmd, p, "--backend", "cuda", code=1)
        assert line.startswith(f"tally: {cmd}: the CUDA backend was requested but "), line
        line = bad(cmd, p, "--backend", "cuda", "--skip-nan", code=1)
        assert line.startswith(f"tally: nan{cmd}: the CUDA backend was requested but "), line
    m = save(tmp_path, "m.npy", np.arange(6.0).reshape(2, 3))
    for cmd in ("min", "argmin", "argmax"):
        line = bad(cmd, m, "--axis", 1, "--backend", "cuda", code=1)
        assert line.startswith(f"tally: {cmd} (axis): the CUDA backend was requested but "), line
    line = bad("argmax", m, "--axis", 0, "--backend", "cuda", "--skip-nan", code=1)
    assert line.startswith("tally: nanargmax (axis): the CUDA backend was requested but "), line


def test_var_std_cuda_without_a_gpu_is_the_no_gpu_error(no_gpu, tmp_path):
    # exit 1 (a library error: no GPU), as every other command; not a usage error (exit 2)
    for name, a in (("f.npy", np.arange(10.0)), ("i.npy", np.arange(10, dtype=np.int64))):
        p = save(tmp_path, name, a)
        for cmd in ("var", "std"):
            for extra in ((), ("--accuracy", "fast"), ("--ddof", "1")):
                line = bad(cmd, p, "--backend", "cuda", *extra, code=1)
                assert line.startswith(f"tally: {cmd}: the CUDA backend was requested but "), line
                assert "no usable CUDA GPU" in line or "no CUDA support" in line, line
    # auto: the cpu
    r = js("var", save(tmp_path, "g.npy", np.arange(10.0)))
    assert r["backend"] == "cpu" and r["value"] == 8.25


def test_var_std_cuda_give_the_cpu_bits(gpu, tmp_path):
    rng = np.random.default_rng(21)
    cases = {"f8.npy": rng.standard_normal(100_001) * 10.0 ** rng.integers(-20, 20, 100_001),
             "f4.npy": rng.standard_normal(5001).astype(np.float32),
             "f2.npy": np.arange(10, dtype=np.float16),
             "i4.npy": rng.integers(-2**31, 2**31, 7001).astype(np.int32),
             "u1.npy": rng.integers(0, 256, 999).astype(np.uint8),
             "b1.npy": np.array([True, False, True, True])}
    for name, a in cases.items():
        p = save(tmp_path, name, a)
        for cmd in ("var", "std"):
            for ddof in (0, 1):
                cpu = js(cmd, p, "--ddof", ddof, "--backend", "cpu")
                gpu_r = js(cmd, p, "--ddof", ddof, "--backend", "cuda")
                assert gpu_r["backend"] == "cuda" and gpu_r["value"] == cpu["value"], (name, cmd, ddof)
                assert gpu_r["dtype"] == cpu["dtype"]
                assert js(cmd, p, "--ddof", ddof)["backend"] == "cpu"  # auto keeps the CPU for var/std
    assert js("var", save(tmp_path, "h.npy", np.arange(10, dtype=np.float16)), "--backend", "cuda")["value"] == 8.25


def test_var_cuda_of_int64_exact_is_refused(gpu, tmp_path):
    a = np.array([2**62, -2**62, 7, 2**40], dtype=np.int64)
    p = save(tmp_path, "i8.npy", a)
    for cmd in ("var", "std"):
        line = bad(cmd, p, "--backend", "cuda", code=1)
        assert line == (f"tally: {cmd}: {p}: the exact {'standard deviation' if cmd == 'std' else 'variance'} of "
                        "int64 data is not available on the cuda backend in this version (use --accuracy fast, or "
                        "--backend cpu or auto)")
        r = js(cmd, p)  # auto: the cpu backend
        assert r["backend"] == "cpu" and r["value"] == js(cmd, p, "--backend", "cpu")["value"]
    fast = js("var", p, "--backend", "cuda", "--accuracy", "fast")
    assert fast["backend"] == "cuda"
    from fractions import Fraction
    m = Fraction(sum(int(v) for v in a), len(a))
    want = float(sum((int(v) - m) ** 2 for v in a) / len(a))
    assert abs(fast["value"] - want) <= 1e-9 * want
