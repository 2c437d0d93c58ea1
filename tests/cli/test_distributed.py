"""`tally ... --distributed` under mpirun: each rank reads its slice of the .npy file(s), and
rank 0 prints the same answer as one process (exact mode: the same bits; the printed repr is
the shortest round-trip text, so equal text means equal values). Skipped when mpirun is
missing or the binary was built without MPI."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from test_cli import BIN

MPIRUN = shutil.which("mpirun")
# (odls_base_sigkill_timeout 0: when a rank exits with a nonzero status, as every rank does
# on an error, mpirun ends the job at once instead of waiting 1 s before its SIGKILL: 2.4 s
# -> 0.4 s a failing run, a minute of this file's time)
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_odls_base_sigkill_timeout="0", OMP_NUM_THREADS="1")


def single(*args):
    r = subprocess.run([BIN, *map(str, args), "--backend", "cpu"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def mpi(np_, *args, code=0):
    r = subprocess.run([MPIRUN, "-np", str(np_), BIN, *map(str, args), "--distributed"],
                       capture_output=True, text=True, timeout=300, env=ENV)
    assert r.returncode == code, (r.stdout, r.stderr)
    return r


def tally_lines(r):
    """The tool's own stderr lines (mpirun adds its notes on a failed rank)."""
    return [ln for ln in r.stderr.splitlines() if ln.startswith("tally: ")]


def single_error(*args, code):
    r = subprocess.run([BIN, *map(str, args), "--backend", "cpu"], capture_output=True, text=True, timeout=120)
    assert r.returncode == code and r.stdout == "", r.stderr
    return r.stderr.splitlines()


@pytest.fixture(scope="module", autouse=True)
def need_mpi(tmp_path_factory):
    if MPIRUN is None:
        pytest.skip("mpirun is not installed")
    p = tmp_path_factory.mktemp("probe") / "one.npy"
    np.save(p, np.ones(3))
    r = subprocess.run([MPIRUN, "-np", "1", BIN, "sum", str(p), "--distributed"], capture_output=True, text=True,
                       timeout=120, env=ENV)
    if "needs MPI" in r.stderr:
        pytest.skip("this build of tally has no MPI")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("dist")
    rng = np.random.default_rng(7)
    n = 100_003
    wide = rng.standard_normal(n) * np.exp2(rng.integers(-50, 50, n))
    wide[10] = 2.0 ** 90
    wide[n - 5] = -(2.0 ** 90)  # cancels across ranks: only an exact merge keeps the rest
    files = {
        "f64": wide,
        "f32": wide.astype(np.float32),
        "y64": rng.standard_normal(n),
        "i64": rng.integers(-2**40, 2**40, n),
        "ties": np.array([3, -1, 5, -1, 5, np.nan, 0, -1, 5], dtype=np.float64),
        "fortran": np.asfortranarray(rng.standard_normal((301, 7))),
        "big_endian": wide.astype(">f8"),
        "tiny": np.array([1.5, -2.0], dtype=np.float64),  # fewer elements than ranks
    }
    paths = {}
    for k, v in files.items():
        paths[k] = d / f"{k}.npy"
        np.save(paths[k], v)
    return paths


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("cmd", ["sum", "mean", "norm", "min", "max", "argmin", "argmax"])
@pytest.mark.parametrize("name", ["f64", "f32", "fortran", "big_endian", "tiny"])
def test_same_answer_as_one_process(data, ranks, cmd, name):
    want = single(cmd, data[name])
    assert mpi(ranks, cmd, data[name]).stdout.strip() == want


@pytest.mark.parametrize("ranks", [2, 3])
def test_dot_integers_and_ties(data, ranks):
    assert mpi(ranks, "dot", data["f64"], data["y64"]).stdout.strip() == single("dot", data["f64"], data["y64"])
    assert mpi(ranks, "sum", data["i64"]).stdout.strip() == str(int(np.load(data["i64"]).sum()))
    assert mpi(ranks, "argmin", data["ties"]).stdout.strip() == "5"  # NaN propagates: its index
    assert mpi(ranks, "argmin", data["ties"], "--skip-nan").stdout.strip() == "1"  # first of the tied -1
    assert mpi(ranks, "argmax", data["ties"], "--skip-nan").stdout.strip() == "2"


def test_exact_sum_matches_math_fsum(data):
    import math
    x = np.load(data["f64"])
    assert float(mpi(3, "sum", data["f64"]).stdout) == math.fsum(x.tolist())  # fsum is correctly rounded


def test_json_reports_ranks_and_global_n(data):
    out = json.loads(mpi(2, "sum", data["f32"], "--json").stdout)
    assert out["ranks"] == 2 and out["n"] == 100_003 and out["dtype"] == "float32"


def test_errors_are_reported_once_and_fail_every_rank(data, tmp_path):
    r = mpi(2, "sum", tmp_path / "missing.npy", code=2)
    assert r.stdout == "" and r.stderr.count("missing.npy") >= 1 and "cannot open" in r.stderr
    csv = tmp_path / "a.csv"
    csv.write_text("1\n2\n")
    r = mpi(2, "sum", csv, code=2)
    assert ".npy files only" in r.stderr
    empty = tmp_path / "empty.npy"
    np.save(empty, np.zeros(0))
    r = mpi(3, "argmin", empty, code=2)
    assert "empty" in r.stderr
    assert mpi(3, "sum", empty).stdout.strip() == "0.0"


def test_refused_options(data):
    r = subprocess.run([BIN, "sum", str(data["fortran"]), "--axis", "0", "--distributed"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "--axis" in r.stderr


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
@pytest.mark.parametrize("cmd", ["min", "max", "argmin", "argmax", "sum", "mean", "norm"])
def test_uint64_above_2_63_as_one_process(tmp_path, ranks, cmd):
    u = tmp_path / "u.npy"
    np.save(u, np.array([2**63 + 7, 5, 2**64 - 1, 2**63, 0, 2**64 - 1, 9], dtype=np.uint64))
    s = tmp_path / "s.npy"  # a sum that fits uint64 but not int64
    np.save(s, np.array([2**63, 2**62, 2**61, 5, 0], dtype=np.uint64))
    e = tmp_path / "e.npy"  # empty: the type's highest / lowest, 0, nan, as one process
    np.save(e, np.zeros(0, dtype=np.uint64))
    known = {"min": "0", "max": "18446744073709551615", "argmin": "4", "argmax": "2"}
    if cmd == "sum":
        want = [f"tally: sum: {u}: the exact uint64 result does not fit in uint64 (integer overflow)"]
        assert single_error(cmd, u, code=1) == want
        assert tally_lines(mpi(ranks, cmd, u, code=1)) == want
        assert mpi(ranks, cmd, s).stdout.strip() == single(cmd, s) == str(2**63 + 2**62 + 2**61 + 5)
    else:
        assert mpi(ranks, cmd, u).stdout.strip() == single(cmd, u) == known.get(cmd, single(cmd, u))
        assert mpi(ranks, cmd, s).stdout.strip() == single(cmd, s)
    if cmd in ("min", "max", "sum"):
        out = json.loads(mpi(ranks, cmd, s, "--json").stdout)
        assert out["dtype"] == "uint64" and out["value"] == int(single(cmd, s))
    if not cmd.startswith("arg"):
        assert mpi(ranks, cmd, e).stdout.strip() == single(cmd, e)


@pytest.mark.parametrize("ranks", [2, 3])
def test_int64_overflow_is_worded_as_one_process(tmp_path, ranks):
    big = tmp_path / "big.npy"
    np.save(big, np.array([2**63 - 1, 2**63 - 1, 2**63 - 1, -5, 3, 1], dtype=np.int64))
    want = [f"tally: sum: {big}: the exact int64 result does not fit in int64 (integer overflow)"]
    assert single_error("sum", big, code=1) == want
    assert tally_lines(mpi(ranks, "sum", big, code=1)) == want
    d = tmp_path / "d.npy"
    np.save(d, np.array([2**32, 2**32, 2**32, 2**32], dtype=np.int64))  # 2^66 (each rank's part too)
    want = [f"tally: dot: {d} and {d}: the exact int64 result does not fit in int64 (integer overflow)"]
    assert single_error("dot", d, d, code=1) == want
    assert tally_lines(mpi(ranks, "dot", d, d, code=1)) == want


@pytest.mark.parametrize("ranks", [2, 4])
def test_int64_sum_whose_parts_overflow_but_not_the_whole(tmp_path, ranks):
    p = tmp_path / "c.npy"
    np.save(p, np.array([2**62, 2**62, 2**62, 2**62, -2**62, -2**62, -2**62, -2**62 + 5], dtype=np.int64))
    for cmd, want in (("sum", "5"), ("mean", repr(5 / 8))):
        assert single(cmd, p) == want
        assert mpi(ranks, cmd, p).stdout.strip() == want


def dot_as_one_process(tmp_path, ranks, x, y, dt, *opts):
    """`tally dot` of x and y (saved as dt) under mpirun: the same stdout (and --json value and
    dtype) as one process, or the same error line and exit status. Returns the printed text."""
    a, b = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(a, np.array(x, dtype=dt))
    np.save(b, np.array(y, dtype=dt))
    r = subprocess.run([BIN, "dot", str(a), str(b), "--backend", "cpu"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        want = r.stderr.splitlines()
        assert r.returncode == 1 and "(integer overflow)" in want[0], r.stderr
        assert tally_lines(mpi(ranks, "dot", a, b, *opts, code=1)) == want, (dt, ranks)
        return None
    assert mpi(ranks, "dot", a, b, *opts).stdout.strip() == r.stdout.strip(), (dt, ranks)
    one = json.loads(subprocess.run([BIN, "dot", str(a), str(b), "--backend", "cpu", "--json"], capture_output=True,
                                    text=True, timeout=120).stdout)
    out = json.loads(mpi(ranks, "dot", a, b, *opts, "--json").stdout)
    assert (out["value"], out["dtype"]) == (one["value"], one["dtype"]), (dt, ranks)
    return r.stdout.strip()


# Each (x, y) pair's first products are large, so a rank's own dot product may not fit the
# result type where the whole one does (2 ranks: the first part is 2^65; 3 ranks: parts
# 2^64, 0, -2^64 + t) or does not (the last pair then pushes the whole just past the limit).
I64_MAX, I64_MIN, U64_MAX = 2**63 - 1, -2**63, 2**64 - 1
LIMITS = {
    "int64 max": ("int64", [2**62, 2**62, -2**62, -2**62, I64_MAX], [4, 4, 4, 4, 1], I64_MAX),
    "int64 min": ("int64", [2**62, 2**62, -2**62, -2**62, I64_MIN], [4, 4, 4, 4, 1], I64_MIN),
    "int64 small": ("int64", [2**62, 2**62, -2**62, -2**62, 5], [4, 4, 4, 4, 1], 5),
    "int64 max + 1": ("int64", [2**62, 2**62, -2**62, -2**62, I64_MAX, 1], [4, 4, 4, 4, 1, 1], None),
    "int64 min - 1": ("int64", [2**62, 2**62, -2**62, -2**62, I64_MIN, -1], [4, 4, 4, 4, 1, 1], None),
    "int64 extremes": ("int64", [I64_MIN, I64_MIN, I64_MIN, I64_MAX], [I64_MIN, I64_MAX, 1, I64_MAX], None),
    "uint64 max": ("uint64", [2**63, 2**62, 2**61, 2**61 - 1], [1, 1, 1, 1], U64_MAX),
    "uint64 above int64": ("uint64", [2**63 + 7, 0, U64_MAX, 3], [1, 9, 0, 2], 2**63 + 13),
    "uint64 max + 1": ("uint64", [2**63, 2**62, 2**61, 2**61], [1, 1, 1, 1], None),
    "uint64 products": ("uint64", [U64_MAX, U64_MAX, 2**63], [U64_MAX, 1, 2], None),
    "int32 parts": ("int32", [-2**31] * 4 + [2**31 - 1] * 4, [-2**31] * 4 + [-(2**31 - 1)] * 4, 4 * (2**32 - 1)),
    "int32 whole": ("int32", [-2**31] * 3, [-2**31] * 3, None),
    "uint32 above int64": ("uint32", [2**32 - 1, 2**32 - 1, 0], [2**32 - 1, 1, 7], (2**32 - 1)**2 + 2**32 - 1),
    "uint32 whole": ("uint32", [2**32 - 1] * 2, [2**32 - 1] * 2, None),
}


@pytest.mark.parametrize("ranks", [1, 2, 3])
@pytest.mark.parametrize("case", LIMITS)
def test_integer_dot_whose_parts_overflow_but_not_the_whole(tmp_path, ranks, case):
    # Before: uint64 elements above 2^63 - 1 were refused (exit 2), and a rank whose own dot
    # product did not fit int64 gave the overflow error where one process printed the result.
    dt, x, y, want = LIMITS[case]
    assert want is None or want == sum(a * b for a, b in zip(x, y))
    printed = dot_as_one_process(tmp_path, ranks, x, y, dt)
    assert printed == (None if want is None else str(want)), (case, printed)


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"])
def test_integer_dot_of_every_type_as_one_process(tmp_path, dt):
    rng = np.random.default_rng(5)
    info = np.iinfo(dt) if dt != "bool" else np.iinfo(np.uint8)
    lo, hi = (0, 1) if dt == "bool" else (int(info.min), int(info.max))
    x = rng.integers(lo, hi, 1001, endpoint=True, dtype=np.uint64 if dt == "uint64" else np.int64)
    y = rng.integers(lo, hi, 1001, endpoint=True, dtype=x.dtype)
    x[:3], y[:3] = lo, hi  # the type's extremes (bool: 0 and 1)
    shift = {"int32": 8, "uint32": 8, "int64": 40, "uint64": 40}.get(dt)
    for ranks in (2, 3):
        if shift:  # random 32- and 64-bit products overflow the whole: the same error; smaller ones fit
            assert dot_as_one_process(tmp_path, ranks, x, y, dt) is None
            assert dot_as_one_process(tmp_path, ranks, x >> shift, y >> shift, dt) is not None
        else:
            assert dot_as_one_process(tmp_path, ranks, x, y, dt) is not None


@pytest.mark.parametrize("types", [("int8", "uint8"), ("uint8", "uint32"), ("bool", "int16"), ("uint16", "bool"),
                                   ("int32", "int64"), ("uint32", "uint64")], ids="-".join)
def test_integer_dot_of_mixed_types_as_one_process(tmp_path, types):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    rng = np.random.default_rng(11)
    np.save(a, rng.integers(0, 100, 501).astype(types[0]))
    np.save(b, rng.integers(0, 100, 501).astype(types[1]))
    one = json.loads(subprocess.run([BIN, "dot", str(a), str(b), "--backend", "cpu", "--json"], capture_output=True,
                                    text=True, timeout=120).stdout)
    out = json.loads(mpi(3, "dot", a, b, "--json").stdout)
    assert (out["value"], out["dtype"]) == (one["value"], one["dtype"])


@pytest.mark.parametrize("dt", ["int8", "int16", "uint8", "uint16", "uint32", "uint64", "bool", "float16"])
@pytest.mark.parametrize("cmd", ["sum", "mean", "min", "max", "argmin", "argmax", "norm"])
def test_the_smaller_types_widen_as_one_process_reads_them(tmp_path, dt, cmd):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 100, 1001).astype(dt) if dt != "float16" else rng.standard_normal(1001).astype(dt)
    p = tmp_path / "a.npy"
    np.save(p, a)
    for ranks in (1, 3):
        assert mpi(ranks, cmd, p).stdout.strip() == single(cmd, p), (dt, cmd, ranks)
    if cmd in ("min", "max"):  # the file's type is reported
        assert json.loads(mpi(2, cmd, p, "--json").stdout)["dtype"] == dt
    if cmd == "sum":  # int64, or uint64 for unsigned data (before: int64 for uint8, uint16, uint32)
        one = subprocess.run([BIN, cmd, str(p), "--backend", "cpu", "--json"], capture_output=True, text=True, timeout=120)
        assert json.loads(mpi(2, cmd, p, "--json").stdout)["dtype"] == json.loads(one.stdout)["dtype"]


# ---- --backend cuda: one GPU per rank (node-local rank modulo the GPU count) ----------------

def gpu_present():
    from test_cli import gpu_present as present
    return present()


@pytest.fixture(scope="module")
def gpu():
    if not gpu_present():
        pytest.skip("no CUDA GPU (or this build of tally has no CUDA backend)")


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("cmd", ["sum", "mean", "norm", "min", "max", "argmin", "argmax"])
@pytest.mark.parametrize("name", ["f64", "f32", "fortran", "big_endian", "tiny"])
def test_cuda_ranks_give_the_one_process_answer(gpu, data, ranks, cmd, name):
    # 2 ranks: one GPU each on a 2-GPU machine, both on GPU 0 on a 1-GPU one; 3 ranks share.
    want = single(cmd, data[name])
    assert mpi(ranks, cmd, data[name], "--backend", "cuda").stdout.strip() == want


@pytest.mark.parametrize("ranks", [2, 3])
def test_cuda_dot_integers_and_ties(gpu, data, ranks):
    cuda = ("--backend", "cuda")
    assert mpi(ranks, "dot", data["f64"], data["y64"], *cuda).stdout.strip() == single("dot", data["f64"], data["y64"])
    assert mpi(ranks, "sum", data["i64"], *cuda).stdout.strip() == str(int(np.load(data["i64"]).sum()))
    assert mpi(ranks, "argmin", data["ties"], *cuda).stdout.strip() == "5"
    assert mpi(ranks, "argmin", data["ties"], "--skip-nan", *cuda).stdout.strip() == "1"
    assert mpi(ranks, "argmax", data["ties"], "--skip-nan", *cuda).stdout.strip() == "2"


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("case", LIMITS)
def test_cuda_integer_dot_whose_parts_overflow_but_not_the_whole(gpu, tmp_path, ranks, case):
    # int32 and int64 parts are reduced on the GPU (tally::partial), and where a part's own dot
    # product does not fit int64, or for uint64, exactly in 192 bits on the host
    dt, x, y, want = LIMITS[case]
    printed = dot_as_one_process(tmp_path, ranks, x, y, dt, "--backend", "cuda")
    assert printed == (None if want is None else str(want)), (case, printed)


def test_cuda_exact_sum_matches_math_fsum_and_reports_cuda(gpu, data):
    import math
    x = np.load(data["f64"])
    assert float(mpi(2, "sum", data["f64"], "--backend", "cuda").stdout) == math.fsum(x.tolist())
    out = json.loads(mpi(2, "sum", data["f32"], "--backend", "cuda", "--json").stdout)
    assert out["backend"] == "cuda" and out["ranks"] == 2 and out["n"] == 100_003 and out["dtype"] == "float32"


def test_cuda_errors_fail_every_rank(gpu, data, tmp_path):
    empty = tmp_path / "empty.npy"
    np.save(empty, np.zeros(0))
    r = mpi(2, "argmin", empty, "--backend", "cuda", code=2)
    assert "empty" in r.stderr
    assert mpi(2, "sum", empty, "--backend", "cuda").stdout.strip() == "0.0"
    # Small integer types are widened as in one process (daaf025): a sum, not an error.
    u8 = tmp_path / "u8.npy"
    np.save(u8, np.arange(10, dtype=np.uint8))
    assert mpi(2, "sum", u8, "--backend", "cuda").stdout.strip() == "45"
    # An int64 sum whose exact result does not fit fails on every rank, named once.
    ov = tmp_path / "ov.npy"
    np.save(ov, np.array([2**62, 2**62, 5], dtype=np.int64))
    r = mpi(2, "sum", ov, "--backend", "cuda", code=1)
    assert r.stdout == ""
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("tally: ")]
    assert len(lines) == 1 and "does not fit in int64" in lines[0], r.stderr


def test_cuda_without_a_gpu_is_a_clear_error(data):
    if gpu_present():
        pytest.skip("a CUDA GPU is present (the cuda tests above cover this case)")
    r = mpi(2, "sum", data["f64"], "--backend", "cuda", code=1)
    assert r.stdout == ""
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("tally: ")]
    assert len(lines) == 1, r.stderr  # printed once (rank 0), not once per rank
    assert "--backend cuda" in lines[0] and "no usable CUDA GPU" in lines[0] and "--backend cpu" in lines[0]


def test_auto_keeps_the_cpu_under_distributed(data):
    out = json.loads(mpi(2, "sum", data["f64"], "--backend", "auto", "--json").stdout)
    assert out["backend"] == "cpu"
    assert out["value"] == float(single("sum", data["f64"]))
