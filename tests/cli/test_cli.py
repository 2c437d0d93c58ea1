"""Tests of the `tally` command-line tool: run the binary on files written by numpy, compare.

The binary is $TALLY_BIN (CTest sets it), else build/tools/cli/tally. Exact comparisons are used
only where the answer is exact (sums of exactly representable values, integers, element-wise
adds); other floating results are checked against math.fsum with a relative bound.
"""
import gzip
import json
import math
import os
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("TALLY_BIN") or str(ROOT / "build" / "tools" / "cli" / "tally")


# ---- helpers ----------------------------------------------------------------------------------


# The exact float32 rounding the Python tests use (no double rounding through float64).
sys.path.insert(0, str(ROOT / "python" / "tests"))
from exact_ref import round_f32  # noqa: E402


def run(*args):
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=120)


def ok(*args):
    """Runs tally, expects success and no stderr; returns stdout without the newline."""
    r = run(*args)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    return r.stdout.rstrip("\n")


def bad(*args, code=2, words=()):
    """Runs tally, expects exit `code`, nothing on stdout and one 'tally: ...' line on stderr
    containing each of `words` (case-insensitive); returns that line."""
    r = run(*args)
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("tally: ")
    for w in words:
        assert str(w).lower() in lines[0].lower(), (w, lines[0])
    return lines[0]


def js(*args):
    return json.loads(ok(*args, "--json"))


def save(tmp_path, name, arr, fortran=False):
    p = tmp_path / name
    np.save(p, np.asfortranarray(arr) if fortran else arr)
    return p


def close(value, exact, scale, rel):
    """|value - exact| <= rel * scale (scale: sum of magnitudes, the error bound's unit)."""
    return abs(value - exact) <= rel * scale


def gpu_present():
    return js("sum", _one_file(), "--backend", "auto")["backend"] == "cuda"


_ONE = []


def _one_file():
    if not _ONE:
        import tempfile
        d = tempfile.mkdtemp()
        p = os.path.join(d, "one.npy")
        np.save(p, np.ones(3))
        _ONE.append(p)
    return _ONE[0]


def no_temp_files(folder):
    return [p.name for p in Path(folder).iterdir() if ".tmp" in p.name] == []


# ---- sum of .npy files ------------------------------------------------------------------------

@pytest.mark.parametrize("values", [
    np.arange(1, 11),
    [0.1], [0.5, 0.25], [1e16], [1.5e-05], [1e-4], [123456789012345678.0],
    [1e15, 0.5], [-2.5, 1.0], [1e300, 1e300], [5e-324],
    [np.inf], [-np.inf], [np.nan], [np.inf, -np.inf],
])
def test_sum_float64_exact(tmp_path, values):
    a = np.asarray(values, dtype="f8")
    with np.errstate(invalid="ignore"):
        want = repr(float(np.sum(a)))
    assert ok("sum", save(tmp_path, "a.npy", a)) == want


def test_sum_negative_zeros(tmp_path):
    # IEEE: -0.0 + -0.0 is -0.0 (numpy's np.sum starts from +0.0 and says 0.0).
    assert ok("sum", save(tmp_path, "a.npy", np.array([-0.0, -0.0]))) == "-0.0"
    assert ok("sum", save(tmp_path, "s.npy", np.array([-0.0]))) == "-0.0"
    assert ok("sum", save(tmp_path, "f.npy", np.array([-0.0], dtype="f4"))) == "-0.0"
    assert ok("sum", save(tmp_path, "b.npy", np.array([-0.0, 0.0]))) == "0.0"


def test_sum_float64_random_positive(tmp_path):
    a = np.random.default_rng(1).random(300_001)  # above the CPU backend's parallel threshold
    v = float(ok("sum", save(tmp_path, "a.npy", a)))
    exact = math.fsum(a)
    assert close(v, exact, exact, 1e-12)


def test_sum_float64_random_signed(tmp_path):
    a = np.random.default_rng(2).normal(size=50_000) * 1e3
    v = float(ok("sum", save(tmp_path, "a.npy", a)))
    assert close(v, math.fsum(a), math.fsum(np.abs(a)), 1e-12)


@pytest.mark.parametrize("values", [
    [0.5, 0.25, 1.0], [0.1], [1e6], [999999.5], [123456789.0], [1e-4], [1.5e-05], [3.0e38],
    [np.inf], [np.nan],
])
def test_sum_float32_exact(tmp_path, values):
    a = np.asarray(values, dtype="f4")
    assert ok("sum", save(tmp_path, "a.npy", a)) == str(np.sum(a, dtype="f8").astype("f4"))


def test_sum_float32_random(tmp_path):
    a = np.random.default_rng(3).random(100_000).astype("f4")
    out = ok("sum", save(tmp_path, "a.npy", a))
    exact = math.fsum(a.astype("f8"))
    assert close(float(out), exact, exact, 1e-6)
    assert str(np.float32(out)) == out  # printed as numpy prints a float32
    assert js("sum", tmp_path / "a.npy")["dtype"] == "float32"


@pytest.mark.parametrize("dt", ["i4", "i8", ">i4", ">i8"])
def test_sum_int_exact(tmp_path, dt):
    a = np.random.default_rng(4).integers(-2**31, 2**31 - 1, size=10_000).astype(dt)
    p = save(tmp_path, "a.npy", a)
    assert ok("sum", p) == str(sum(int(x) for x in a))
    assert js("sum", p)["dtype"] == "int64"


def test_sum_int32_beyond_int32(tmp_path):
    a = np.full(3, 2**31 - 1, dtype="i4")
    assert ok("sum", save(tmp_path, "a.npy", a)) == str(3 * (2**31 - 1))


@pytest.mark.parametrize("dt", [">f8", ">f4", "<f8", "<f4"])
def test_sum_byte_orders(tmp_path, dt):
    a = np.array([1.5, -2.25, 1024.0, 0.125], dtype=dt)
    out = ok("sum", save(tmp_path, "a.npy", a))
    want = 1.5 - 2.25 + 1024.0 + 0.125
    assert out == (repr(want) if dt[1:] == "f8" else str(np.float32(want)))


def test_sum_zero_d(tmp_path):
    p = save(tmp_path, "a.npy", np.array(2.5))
    assert ok("sum", p) == "2.5"
    assert js("sum", p)["n"] == 1


@pytest.mark.parametrize("dt,shape,want", [
    ("f8", (0,), "0.0"), ("f4", (0,), "0.0"), ("i4", (0,), "0"), ("i8", (2, 0), "0"),
    ("f8", (3, 0, 2), "0.0"),
])
def test_sum_empty(tmp_path, dt, shape, want):
    p = save(tmp_path, "a.npy", np.zeros(shape, dtype=dt))
    assert ok("sum", p) == want
    assert js("sum", p)["n"] == 0


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_npy_format_versions(tmp_path, version):
    a = np.arange(10, dtype="f8")
    p = tmp_path / "a.npy"
    with open(p, "wb") as f:
        np.lib.format.write_array(f, a, version=version)
    assert ok("sum", p) == "45.0"


# ---- dot --------------------------------------------------------------------------------------

def test_dot_int_exact(tmp_path):
    rng = np.random.default_rng(5)
    a = rng.integers(-2**31, 2**31, size=20_000, dtype="i8")
    b = rng.integers(-2**16, 2**16, size=20_000, dtype="i8")
    want = sum(int(x) * int(y) for x, y in zip(a, b))
    assert -2**63 <= want < 2**63
    assert ok("dot", save(tmp_path, "a.npy", a), save(tmp_path, "b.npy", b)) == str(want)


def test_dot_float64(tmp_path):
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=70_000), rng.normal(size=70_000)
    v = float(ok("dot", save(tmp_path, "a.npy", a), save(tmp_path, "b.npy", b)))
    prods = [float(x) * float(y) for x, y in zip(a, b)]  # not exact; the bound covers it
    assert close(v, math.fsum(prods), math.fsum(np.abs(a * b)), 1e-12)
    assert close(v, float(np.dot(a, b)), math.fsum(np.abs(a * b)), 1e-12)


def test_dot_float32(tmp_path):
    rng = np.random.default_rng(7)
    a, b = rng.random(10_000).astype("f4"), rng.random(10_000).astype("f4")
    out = ok("dot", save(tmp_path, "a.npy", a), save(tmp_path, "b.npy", b))
    exact = math.fsum(a.astype("f8") * b.astype("f8"))  # float32 products are exact in float64
    assert close(float(out), exact, exact, 1e-6)
    assert str(np.float32(out)) == out


def test_dot_fortran_pairs_elements_in_c_order(tmp_path):
    a = np.arange(24, dtype="i4").reshape(2, 3, 4)
    b = (np.arange(24, dtype="i4") * 7 - 50).reshape(2, 3, 4)
    pa = save(tmp_path, "a.npy", a, fortran=True)
    pb = save(tmp_path, "b.npy", b)
    assert ok("dot", pa, pb) == str(int(np.dot(a.ravel().astype("i8"), b.ravel().astype("i8"))))


def test_dot_same_size_other_shape(tmp_path):
    a = np.arange(6, dtype="f8")
    pa, pb = save(tmp_path, "a.npy", a), save(tmp_path, "b.npy", a.reshape(2, 3))
    assert ok("dot", pa, pb) == "55.0"


@pytest.mark.parametrize("da,db,want", [
    ("f4", "f8", "float64"), ("i4", "i8", "int64"), ("i4", "f4", "float64"),
    ("i8", "f4", "float64"), ("i4", "f8", "float64"), ("i8", "f8", "float64"),
    ("f4", "f4", "float32"), ("i4", "i4", "int64"),
])
def test_dot_promotion(tmp_path, da, db, want):
    a = np.arange(1, 6).astype(da)
    b = np.arange(2, 7).astype(db)
    r = js("dot", save(tmp_path, "a.npy", a), save(tmp_path, "b.npy", b))
    assert r["dtype"] == want
    assert r["value"] == 70 and r["n"] == 5


# ---- add --------------------------------------------------------------------------------------

def load_out(p):
    raw = Path(p).read_bytes()
    assert raw[:8] == b"\x93NUMPY\x01\x00"  # format 1.0
    hlen = int.from_bytes(raw[8:10], "little")
    assert (10 + hlen) % 64 == 0
    return np.load(p)


@pytest.mark.parametrize("dt", ["f8", "f4", "i4", "i8", ">f8", ">i4"])
def test_add_exact(tmp_path, dt):
    rng = np.random.default_rng(8)
    a = (rng.normal(size=(50, 7)) * 1e6).astype(dt)
    b = (rng.normal(size=(50, 7)) * 1e6).astype(dt)
    out = tmp_path / "out.npy"
    assert ok("add", save(tmp_path, "a.npy", a), save(tmp_path, "b.npy", b), "-o", out) == ""
    got, want = load_out(out), a + b
    assert got.dtype == want.dtype.newbyteorder("<") and got.shape == want.shape
    assert np.array_equal(got, want)
    assert no_temp_files(tmp_path)


def test_add_fortran(tmp_path):
    a = np.arange(60, dtype="f8").reshape(3, 4, 5) / 8
    b = np.arange(60, dtype="f8").reshape(3, 4, 5) * 3
    out = tmp_path / "out.npy"
    ok("add", save(tmp_path, "a.npy", a, fortran=True), save(tmp_path, "b.npy", b, fortran=True),
       "-o", out)
    assert np.array_equal(load_out(out), a + b)


def test_add_zero_d_and_empty(tmp_path):
    out = tmp_path / "out.npy"
    p = save(tmp_path, "a.npy", np.array(1.25))
    ok("add", p, p, "-o", out)
    got = load_out(out)
    assert got.shape == () and got == 2.5
    e = save(tmp_path, "e.npy", np.zeros((2, 0), dtype="i4"))
    ok("add", e, e, "-o", out)
    got = load_out(out)
    assert got.shape == (2, 0) and got.dtype == np.int32


@pytest.mark.parametrize("da,db", [("i4", "f4"), ("i8", "f4"), ("f4", "f8"), ("i4", "i8"), ("i8", "f8")])
def test_add_promotion(tmp_path, da, db):
    a = (np.arange(12) * 1.5 - 7).astype(da)
    b = (np.arange(12) * 2.25 + 3).astype(db)
    out = tmp_path / "out.npy"
    ok("add", save(tmp_path, "a.npy", a), save(tmp_path, "b.npy", b), "-o", out)
    got, want = load_out(out), a + b
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_add_replaces_existing_output(tmp_path):
    out = tmp_path / "out.npy"
    out.write_bytes(b"old")
    a = np.arange(4, dtype="i8")
    ok("add", save(tmp_path, "a.npy", a), tmp_path / "a.npy", "-o", out)
    assert np.array_equal(load_out(out), 2 * a)
    assert no_temp_files(tmp_path)


def test_add_json(tmp_path):
    out = tmp_path / "out.npy"
    a = save(tmp_path, "a.npy", np.arange(4, dtype="i4"))
    r = js("add", a, a, "-o", out, "--backend", "cpu")
    assert r == {"value": str(out), "dtype": "int32", "n": 4, "backend": "cpu",
                 "seconds": r["seconds"]}


# ---- CSV --------------------------------------------------------------------------------------

CSV = "sepal,petal_width\n1.5,2\n-2.5,1e3\n+4, inf\n 7 ,nan\n"


@pytest.mark.parametrize("col,want", [("sepal", "10.0"), ("0", "10.0"), ("petal_width", "nan"),
                                      ("1", "nan")])
def test_csv_header_by_name_and_index(tmp_path, col, want):
    p = tmp_path / "d.csv"
    p.write_text(CSV)
    assert ok("sum", p, "--column", col) == want


def test_csv_gzip(tmp_path):
    p = tmp_path / "d.csv.gz"
    with gzip.open(p, "wt") as f:
        f.write("x,y\n" + "".join(f"{i},{i * 0.5}\n" for i in range(1000)))
    assert ok("sum", p, "--column", "y") == repr(float(sum(i * 0.5 for i in range(1000))))
    assert ok("sum", p, "-c", "0") == "499500.0"


def test_csv_no_header(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,10\n2,20\n3.5,30\n")
    assert ok("sum", p, "--column", "0") == "6.5"
    assert ok("sum", p, "--column", "1") == "60.0"
    assert js("sum", p, "--column", "1")["n"] == 3


def test_csv_single_column_needs_no_option(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("value\n0.25\n0.5\n\n0.125\n")  # blank lines are skipped
    assert ok("sum", p) == "0.875"


@pytest.mark.parametrize("delim,sep", [(";", ";"), ("tab", "\t"), ("space", "  "), ("|", "|")])
def test_csv_delimiters(tmp_path, delim, sep):
    p = tmp_path / "d.txt"
    p.write_text("".join(f"{i}{sep}{i * i}\r\n" for i in range(10)))
    assert ok("sum", p, "--column", "1", "--delimiter", delim) == "285.0"


def test_csv_quoted_and_skip_rows(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text('# produced by something\n"a, b","c"\n"1",2\n"3",4\n')
    assert ok("sum", p, "--skip-rows", "1", "--column", "a, b") == "4.0"


def test_csv_dot_columns_of_one_file(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,2,3\n4,5,6\n")
    assert ok("dot", p, p, "--column", "0", "--column-b", "2") == "27.0"
    assert ok("dot", p, p, "--column", "1") == "29.0"


def test_csv_with_npy(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1\n2\n3\n")
    n = save(tmp_path, "b.npy", np.array([1, 1, 2], dtype="i4"))
    r = js("dot", p, n)
    assert r["value"] == 9.0 and r["dtype"] == "float64"
    out = tmp_path / "out.npy"
    ok("add", n, p, "-o", out)
    assert np.array_equal(load_out(out), np.array([2.0, 3.0, 5.0]))


@pytest.mark.parametrize("opt", [["--column", "0"], ["-c", "x"], ["--delimiter", ";"], ["-d", "tab"],
                                 ["--skip-rows", "0"], ["--skip-rows", "3"]])
@pytest.mark.parametrize("cmd", ["sum", "mean", "norm", "var", "std", "min", "argmax"])
def test_csv_options_with_npy_input_are_usage_errors(tmp_path, opt, cmd):
    # they used to be ignored silently; even a default value given explicitly is refused
    p = save(tmp_path, "a.npy", np.arange(4.0))
    name = {"-c": "--column", "-d": "--delimiter"}.get(opt[0], opt[0])
    assert bad(cmd, p, *opt) == f"tally: {p}: {name} applies only to CSV/text input, not .npy files (leave it out)"


def test_csv_options_with_two_inputs(tmp_path):
    a, b = save(tmp_path, "a.npy", np.arange(3.0)), save(tmp_path, "b.npy", np.ones(3))
    c = tmp_path / "c.csv"
    c.write_text("x;y\n1;2\n3;4\n5;6\n")
    out = tmp_path / "o.npy"
    for cmd in (["dot", a, b], ["add", a, b, "-o", out]):
        for opt in ("--delimiter", "--skip-rows", "--column"):
            val = {"--delimiter": ",", "--skip-rows": "1", "--column": "0"}[opt]
            line = bad(*cmd, opt, val)
            assert line == f"tally: {a} and {b}: {opt} applies only to CSV/text input, not .npy files (leave it out)"
        line = bad(*cmd, "--column-b", "1")
        assert line == f"tally: {b}: --column-b applies only to CSV/text input, not .npy files (leave it out)"
    assert not out.exists()
    # one CSV input uses them: no error (A's column, and B's unless --column-b)
    assert ok("dot", c, b, "--delimiter", ";", "--column", "y") == "12.0"
    assert ok("dot", a, c, "--delimiter", ";", "--column", "x") == "13.0"
    assert ok("dot", c, c, "--delimiter", ";", "--column", "x", "--column-b", "y") == "44.0"
    # --column for the .npy A only, --column-b taking B's: --column serves nothing
    line = bad("dot", a, c, "--delimiter", ";", "--column", "x", "--column-b", "y")
    assert line == f"tally: {a}: --column applies only to CSV/text input, not .npy files (leave it out)"
    # the same .npy file twice is named once
    assert bad("dot", a, a, "--skip-rows", 1) == \
        f"tally: {a}: --skip-rows applies only to CSV/text input, not .npy files (leave it out)"


def test_csv_options_are_checked_for_npy_content_not_just_the_name(tmp_path):
    # a file starting with the .npy magic is read as .npy whatever its name
    p = tmp_path / "data.csv"
    np.save(p.open("wb"), np.arange(3.0))
    assert ok("sum", p) == "3.0"
    bad("sum", p, "--column", "0", words=["data.csv", "--column", "only to CSV/text input"])


def test_csv_options_with_distributed_are_usage_errors(tmp_path):
    p = save(tmp_path, "a.npy", np.arange(3.0))
    r = run("sum", p, "--distributed", "--delimiter", ";")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == "tally: --delimiter applies only to CSV/text input, and --distributed reads .npy files only\n"


# ---- --json and output formats ---------------------------------------------------------------

def test_json_keys_and_types(tmp_path):
    p = save(tmp_path, "a.npy", np.arange(10, dtype="f8"))
    r = js("sum", p)
    assert list(r) == ["value", "dtype", "n", "backend", "seconds"]
    assert r["value"] == 45.0 and isinstance(r["value"], float)
    assert r["dtype"] == "float64" and r["n"] == 10
    assert r["backend"] in ("cpu", "cuda")
    assert isinstance(r["seconds"], float) and 0 <= r["seconds"] < 60
    assert js("sum", p, "--backend", "cpu")["backend"] == "cpu"
    i = js("sum", save(tmp_path, "i.npy", np.arange(10, dtype="i4")))
    assert i["value"] == 45 and isinstance(i["value"], int) and i["dtype"] == "int64"


@pytest.mark.parametrize("values,want", [([np.nan], "nan"), ([np.inf], "inf"), ([-np.inf], "-inf")])
def test_json_non_finite(tmp_path, values, want):
    r = js("sum", save(tmp_path, "a.npy", np.array(values)))
    assert r["value"] == want


# ---- bad input: one line on stderr naming the file and the problem -------------------------

def test_missing_file(tmp_path):
    for name in ("nope.npy", "nope.csv", "nope.csv.gz"):
        bad("sum", tmp_path / name, words=[name, "no such file"])


def test_bad_magic(tmp_path):
    p = tmp_path / "x.npy"
    p.write_bytes(b"PK\x03\x04 not numpy at all")
    bad("sum", p, words=["x.npy", "magic"])


def test_truncated_data(tmp_path):
    p = save(tmp_path, "t.npy", np.arange(100, dtype="f8"))
    p.write_bytes(p.read_bytes()[:-9])
    bad("sum", p, words=["t.npy", "truncated", "100 elements"])


def test_truncated_header(tmp_path):
    p = save(tmp_path, "t.npy", np.arange(100, dtype="f8"))
    p.write_bytes(p.read_bytes()[:40])
    bad("sum", p, words=["t.npy", "truncated"])


@pytest.mark.parametrize("arr", [
    np.zeros(3, dtype="<c16"), np.zeros(3, dtype="<f16"), np.zeros(3, dtype="M8[s]"),
    np.array([1, "a", None], dtype=object),
    np.zeros(3, dtype=[("a", "<f8"), ("b", "<i4")]), np.array(["ab"]),
])
def test_unsupported_dtype(tmp_path, arr):
    p = tmp_path / "u.npy"
    np.save(p, arr, allow_pickle=True)
    bad("sum", p, words=["u.npy", "dtype"])


def npy_with_header(path, header, data=b"", version=1):
    h = header.encode("latin1")
    h += b" " * (63 - (10 + len(h)) % 64) + b"\n"
    ln = len(h).to_bytes(2 if version == 1 else 4, "little")
    path.write_bytes(b"\x93NUMPY" + bytes([version, 0]) + ln + h + data)
    return path


@pytest.mark.parametrize("header", [
    "{'descr': '<f8', 'fortran_order': False, 'shape': (3,}",
    "{'descr': '<f8', 'fortran_order': False}",
    "{'descr': '<f8', 'fortran_order': 0, 'shape': (3,)}",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (-3,)}",
    "{'descr': '<f8', 'fortran_order': False, 'shape': 3}",
    "['descr', '<f8']",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)} trailing",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999)}",
    "garbage",
])
def test_malformed_header(tmp_path, header):
    p = npy_with_header(tmp_path / "m.npy", header, b"\0" * 24)
    bad("sum", p, words=["m.npy", "header"])


def test_header_length_beyond_the_file(tmp_path):
    p = tmp_path / "l.npy"
    p.write_bytes(b"\x93NUMPY\x02\x00" + (0xFFFFFFF0).to_bytes(4, "little") + b"{'descr': '<f8'}" + b" " * 30)
    assert bad("sum", p) == (f"tally: {p}: malformed or truncated header: its length field says 4294967280 bytes,"
                             " which exceeds the file size (58 bytes)")


@pytest.mark.parametrize("dim,why", [
    ("12345678901234567890", "dimension 12345678901234567890 in 'shape' is too large"),
    ("1000000000000000000", "dimension 1000000000000000000 in 'shape' is too large"),
    ("9" * 60, "dimension " + "9" * 37 + "... in 'shape' is too large"),
    ("-3", "negative dimension -3 in 'shape'"),
])
def test_bad_dimensions_are_named(tmp_path, dim, why):
    p = npy_with_header(tmp_path / "d.npy", f"{{'descr': '<f8', 'fortran_order': False, 'shape': ({dim},), }}", b"\0" * 8)
    assert bad("sum", p) == f"tally: {p}: malformed header: {why}"


@pytest.mark.parametrize("shape,why", [
    ("(2)", "not a tuple: in Python (2) is the number 2; a 1-D shape is written (2,)"),
    ("((2))", "not a tuple: in Python (2) is the number 2; a 1-D shape is written (2,)"),
    ("[2]", "a list, not a tuple (NumPy writes a tuple: (2,) or (2, 3))"),
    ("[2, 1]", "a list, not a tuple (NumPy writes a tuple: (2,) or (2, 3))"),
    ("2", "not a tuple (NumPy writes a tuple: (), (2,) or (2, 3))"),
])
def test_shape_must_be_a_tuple_as_numpy_reads_it(tmp_path, shape, why):
    # np.load refuses these too ("shape is not valid"): (2) is the int 2 in Python, [2] a list
    data = np.array([1.0, 2.0]).tobytes()
    p = npy_with_header(tmp_path / "s.npy", f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}", data)
    assert bad("sum", p) == f"tally: {p}: malformed header: 'shape' is {shape}, {why}"


@pytest.mark.parametrize("shape,want", [
    ("()", "2.5"), ("(1,)", "2.5"), ("(1, 1)", "2.5"), ("(1,1)", "2.5"), ("( 1 , )", "2.5"), ("((1,))", "2.5"),
])
def test_shape_tuples_are_read(tmp_path, shape, want):
    p = npy_with_header(tmp_path / "t.npy", f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}",
                        np.array([2.5]).tobytes())
    assert ok("sum", p) == want
    assert js("sum", p)["n"] == 1
    two = npy_with_header(tmp_path / "u.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,3), }",
                          np.arange(6.0).tobytes())
    assert ok("sum", two) == "15.0"
    assert ok("max", two, "--axis", 0) == "3.0\n4.0\n5.0"


def test_hand_written_header_ok(tmp_path):
    # Python-2-era files: a 'L' suffix on dimensions and no trailing comma.
    data = np.array([1.0, 2.0, 4.0]).tobytes()
    p = npy_with_header(tmp_path / "h.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (3L,)}", data)
    assert ok("sum", p) == "7.0"


def test_unsupported_version(tmp_path):
    p = npy_with_header(tmp_path / "v.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                        b"\0" * 8, version=4)
    bad("sum", p, words=["v.npy", "version"])


def test_dot_length_mismatch(tmp_path):
    a = save(tmp_path, "a.npy", np.ones(3))
    b = save(tmp_path, "b.npy", np.ones(4))
    bad("dot", a, b, words=["b.npy", "mismatch", "4", "3"])


@pytest.mark.parametrize("shape_b", [(6,), (3, 2), (5,)])
def test_add_shape_mismatch_leaves_no_output(tmp_path, shape_b):
    a = save(tmp_path, "a.npy", np.ones((2, 3)))
    b = save(tmp_path, "b.npy", np.ones(shape_b))
    out = tmp_path / "out.npy"
    bad("add", a, b, "-o", out, words=["b.npy", "shape", "mismatch"])
    assert not out.exists() and no_temp_files(tmp_path)


@pytest.mark.parametrize("name", ["out.csv", "out", "out.npy.gz"])
def test_add_output_must_be_npy(tmp_path, name):
    a = save(tmp_path, "a.npy", np.ones(3))
    out = tmp_path / name
    r = run("add", a, a, "-o", out)  # (a CLI11 option check: its message format, exit 2)
    assert r.returncode == 2 and r.stdout == "" and "--output" in r.stderr and "*.npy" in r.stderr, r.stderr
    assert not out.exists() and no_temp_files(tmp_path)
    ok("add", a, a, "-o", tmp_path / "OUT.NPY")  # (the suffix in any case)


def test_add_error_keeps_existing_output(tmp_path):
    out = tmp_path / "out.npy"
    out.write_bytes(b"precious")
    a = save(tmp_path, "a.npy", np.ones(3))
    t = tmp_path / "t.npy"
    t.write_bytes(a.read_bytes()[:-1])
    bad("add", a, t, "-o", out, words=["t.npy", "truncated"])
    bad("add", a, tmp_path / "missing.npy", "-o", out, words=["missing.npy"])
    assert out.read_bytes() == b"precious" and no_temp_files(tmp_path)


def test_add_keeps_the_permissions_of_the_file_it_replaces(tmp_path):
    a = save(tmp_path, "a.npy", np.arange(3, dtype="i4"))
    out = tmp_path / "out.npy"
    # (0o444: replaced only where open(2) would write it, as root; a user's write-protected
    # file is refused: test_add_refuses_a_write_protected_file)
    for mode in (0o600, 0o640) + ((0o444,) if os.geteuid() == 0 else ()):
        out.write_bytes(b"old")
        os.chmod(out, mode)
        ok("add", a, a, "-o", out)
        assert stat.S_IMODE(os.stat(out).st_mode) == mode and np.array_equal(np.load(out), [0, 2, 4])
        os.chmod(out, 0o600)
        out.unlink()
    # through a symbolic link: the target's bits, the link kept
    out.write_bytes(b"old")
    os.chmod(out, 0o600)
    link = tmp_path / "link.npy"
    link.symlink_to(out)
    ok("add", a, a, "-o", link)
    assert link.is_symlink() and stat.S_IMODE(os.stat(out).st_mode) == 0o600
    # a new file: 0666 & ~umask, as before
    new = tmp_path / "new.npy"
    mask = os.umask(0o027)
    try:
        ok("add", a, a, "-o", new)
    finally:
        os.umask(mask)
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o640
    assert no_temp_files(tmp_path)


def test_add_refuses_a_write_protected_file(tmp_path):
    # The rename needs only the directory's write permission; a file its owner made read-only
    # is refused as np.save and cp refuse it, and left as it was (root may write any file)
    if os.geteuid() == 0:
        pytest.skip("root may write a file whatever its mode")
    a = save(tmp_path, "a.npy", np.arange(3, dtype="i4"))
    out = tmp_path / "out.npy"
    out.write_bytes(b"precious")
    os.chmod(out, 0o444)
    bad("add", a, a, "-o", out, words=["out.npy", "write-protected"])
    assert out.read_bytes() == b"precious" and stat.S_IMODE(os.stat(out).st_mode) == 0o444
    assert no_temp_files(tmp_path)


def test_a_result_that_cannot_be_written_is_an_error(tmp_path):
    # A full disk (/dev/full) or a closed stdout: the buffered result fails only at the flush
    # before exit, which must then say so and exit nonzero
    a = save(tmp_path, "a.npy", np.arange(5.0))
    if os.path.exists("/dev/full"):
        for args in (("sum", a), ("sum", a, "--json"), ("max", a)):
            with open("/dev/full", "w") as full:
                r = subprocess.run([BIN, *map(str, args)], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
            assert r.returncode == 1 and "cannot write the result to standard output" in r.stderr, (args, r)
    r = subprocess.run([BIN, "sum", str(a)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=60,
                       preexec_fn=lambda: os.close(1))
    assert r.returncode == 1 and "standard output" in r.stderr, r


def test_add_keeps_the_owner_of_the_file_it_replaces(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a file another owner needs root")
    a = save(tmp_path, "a.npy", np.arange(3, dtype="i4"))
    out = tmp_path / "out.npy"
    out.write_bytes(b"old")
    os.chown(out, 12345, 23456)
    os.chmod(out, 0o640)
    ok("add", a, a, "-o", out)
    st = os.stat(out)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (12345, 23456, 0o640)


def test_add_unwritable_output(tmp_path):
    a = save(tmp_path, "a.npy", np.ones(3))
    bad("add", a, a, "-o", tmp_path / "no_dir" / "out.npy", words=["out.npy", "temporary"])
    d = tmp_path / "adir.npy"
    d.mkdir()
    bad("add", a, a, "-o", d, words=["adir.npy", "cannot write"])
    assert no_temp_files(tmp_path)


def test_csv_not_a_number(tmp_path):
    p = tmp_path / "iris.csv"
    p.write_text("sepal,petal_width\n" + "1,2\n" * 5 + "1,abc\n")
    line = bad("sum", p, "--column", "petal_width", words=["iris.csv"])
    assert line.endswith("row 7, column 'petal_width': 'abc' is not a number")
    line = bad("sum", p.with_name("iris.csv"), "--column", "1")
    assert "row 7, column 'petal_width'" in line


def test_csv_not_a_number_without_header(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,2\n3,x4\n")
    assert bad("sum", p, "-c", "1").endswith("d.csv: row 2, column 2: 'x4' is not a number")


def test_csv_empty_cell(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("a,b\n1,2\n,3\n")
    bad("sum", p, "--column", "a", words=["d.csv", "row 3", "column 'a'", "empty"])


def test_csv_short_row(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("a,b\n1,2\n3\n")
    bad("sum", p, "--column", "b", words=["d.csv", "row 3", "missing"])


def test_csv_wider_row_than_the_first(tmp_path):
    # A decimal comma ("1,5") in a comma-separated file: the rows are wider than the header,
    # and the file is refused, never read by the header's one column with the rest dropped
    p = tmp_path / "d.csv"
    p.write_text("a\n1,5\n2,5\n")
    for cmd in ("sum", "mean", "max"):
        bad(cmd, p, words=["d.csv", "row 2", "2 cells", "first row", "has 1"])
    p.write_text("a,b\n1,2,3\n4,5\n")
    bad("sum", p, "--column", "b", words=["d.csv", "row 2", "3 cells"])
    # a quoted decimal comma is one cell
    p.write_text('a\n"1,5"\n2\n')
    bad("sum", p, words=["d.csv", "row 2", "not a number"])
    p.write_text("a;b\n1,5;2\n")
    bad("sum", p, "--delimiter", ";", "--column", "a", words=["row 2", "not a number"])
    # a trailing delimiter (empty cells past the first row's width) is not data
    p.write_text("a,b\n1,2,\n3,4, ,\n")
    assert ok("sum", p, "--column", "b") == "6.0"
    p.write_text("a,b\n1,2,,7\n")
    bad("sum", p, "--column", "b", words=["row 2", "4 cells"])


def test_csv_unknown_column(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("a,b\n1,2\n")
    bad("sum", p, "--column", "zz", words=["d.csv", "no column named 'zz'", "'a'"])
    bad("sum", p, "--column", "2", words=["d.csv", "index 2", "out of range"])
    bad("sum", p, "--column", "-1", words=["d.csv", "out of range"])


def test_csv_needs_column_choice(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,2\n3,4\n")
    bad("sum", p, words=["d.csv", "2 columns", "--column"])


def test_csv_name_needs_header(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,2\n3,4\n")
    bad("sum", p, "--column", "a", words=["d.csv", "no column named 'a'"])


def test_csv_guessed_header_that_could_be_data_is_noted(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("0x10\n1\n")
    r = run("sum", p)
    assert r.returncode == 0 and r.stdout == "1.0\n"
    assert r.stderr == (f"tally: note: {p}: line 1 is taken as a header, as its cell '0x10' (column 1) is not a number"
                        " (name the column to confirm the header; fix the cell if it is data)\n")
    assert ok("sum", p, "--column", "0x10") == "1.0"  # named: a header, no note
    p.write_text("# made by hand\nb, 1.5.2 \n2,3\n")  # the line number counts skipped lines
    r = run("sum", p, "--skip-rows", 1, "--column", 1)
    assert r.stdout == "3.0\n" and "line 2 is taken as a header, as its cell '1.5.2' (column 2)" in r.stderr
    p.write_text(",x\n4,5\n")  # an empty cell
    r = run("sum", p, "--column", 0)
    assert r.stdout == "4.0\n" and "line 1 is taken as a header, as its cell '' (column 1)" in r.stderr
    p.write_text("value\n0.5\n")  # a plain name: no note
    assert ok("sum", p) == "0.5"


@pytest.mark.parametrize("text", ["1\r2\r3\r", "1\r2\r3", "x\r\n1\r2\n3\n", "1\r\r2\r\n\r\n3"])
def test_csv_cr_line_endings(tmp_path, text):
    p = tmp_path / "d.csv"
    p.write_bytes(text.encode())
    assert ok("sum", p) == "6.0"
    assert js("sum", p)["n"] == 3


def test_csv_cr_line_numbers(tmp_path):
    p = tmp_path / "d.csv"
    p.write_bytes(b"a\r1\rx\r")
    bad("sum", p, words=["row 3, column 'a': 'x' is not a number"])


@pytest.mark.parametrize("text,where", [
    ('1\n"3\n', "row 2, column 1"),        # never closed
    ('1\n"3', "row 2, column 1"),
    ('a,b\n1,"2\n', "row 2, column 2"),
    ('a,b\n"x\ny",2\n', "row 2, column 1"),  # a line break inside quotes
    ('"a,b\n1,2\n', "row 1, column 1"),      # in the header
])
def test_csv_quote_not_closed_on_its_line(tmp_path, text, where):
    p = tmp_path / "d.csv"
    p.write_text(text)
    line = bad("sum", p, "--column", "0")
    assert line == (f"tally: {p}: {where}: a quoted cell is not closed on its line (a missing closing quote, or a"
                    " line break inside quotes, which tally does not read)")


def test_csv_quoted_cells_that_close(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text('a,b\n"1","x,""y"""\n"2",z\n')
    assert ok("sum", p, "--column", "a") == "3.0"


def test_csv_duplicate_header_name_is_ambiguous(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("x,a,a\n1,2,3\n")
    assert bad("sum", p, "--column", "a") == (f"tally: {p}: the column name 'a' is ambiguous: columns 2 and 3 of line 1"
                                              " both have it (pick one by 0-based index, e.g. --column 1)")
    assert ok("sum", p, "--column", "2") == "3.0"
    assert ok("sum", p, "--column", "x") == "1.0"


def test_csv_numeric_header_names(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("2018,2019\n1,2\n3,4\n")
    assert ok("sum", p, "--column", "name:2019") == "6.0"
    assert ok("sum", p, "--column", "name:2018") == "4.0"
    assert js("sum", p, "--column", "name:2019")["n"] == 2
    # digits are an index, always: 1 is the second column, whose first row (2019) is data then
    assert ok("sum", p, "--column", "1") == "2025.0"
    assert bad("sum", p, "--column", "2019") == (
        f"tally: {p}: column index 2019 is out of range (the first row has 2 columns; indexes start at 0); to pick the"
        " column named '2019', say --column name:2019")
    bad("sum", p, "--column", "name:2020", words=["no column named '2020'", "'2018', '2019'"])
    q = tmp_path / "e.csv"
    q.write_text("name:x,y\n1,2\n")  # name: is stripped once
    assert ok("sum", q, "--column", "name:name:x") == "1.0"
    assert ok("dot", p, p, "--column", "name:2018", "--column-b", "name:2019") == "14.0"


def test_binary_file_is_not_csv(tmp_path):
    p = tmp_path / "blob.bin"
    p.write_bytes(bytes(range(256)))
    bad("sum", p, words=["blob.bin", "neither a .npy file nor csv"])


def test_csv_control_characters_are_escaped(tmp_path):
    p = tmp_path / "d.csv"
    p.write_bytes(b"a\n1\n\x1b[31m\r\n")
    bad("sum", p, words=["d.csv", "row 3", "'\\x1b[31m' is not a number"])


def test_csv_corrupt_gzip(tmp_path):
    p = tmp_path / "d.csv.gz"
    p.write_bytes(gzip.compress(b"1\n2\n3\n" * 1000)[:-20])
    bad("sum", p, words=["d.csv.gz", "cannot read"])


# ---- backends and library errors (exit 1) ----------------------------------------------------

def test_backend_cuda(tmp_path):
    p = save(tmp_path, "a.npy", np.arange(10, dtype="i8"))
    if gpu_present():
        assert js("sum", p, "--backend", "cuda")["backend"] == "cuda"
        assert ok("sum", p, "--backend", "cuda") == "45"
    else:
        line = bad("sum", p, "--backend", "cuda", code=1)
        assert "gpu" in line.lower() or "cuda" in line.lower()
        out = tmp_path / "out.npy"
        bad("add", p, p, "-o", out, "--backend", "cuda", code=1)
        assert not out.exists()


def test_backend_auto_matches_cpu(tmp_path):
    a = np.random.default_rng(9).integers(-1000, 1000, size=100_000)
    p = save(tmp_path, "a.npy", a)
    assert ok("sum", p, "--backend", "auto") == ok("sum", p, "--backend", "cpu") == str(int(a.sum()))
    out1, out2 = tmp_path / "o1.npy", tmp_path / "o2.npy"
    ok("add", p, p, "-o", out1)
    ok("add", p, p, "-o", out2, "--backend", "cpu")
    assert np.array_equal(load_out(out1), load_out(out2))


def test_int64_sum_overflow(tmp_path):
    p = save(tmp_path, "a.npy", np.array([2**62, 2**62], dtype="i8"))
    bad("sum", p, code=1, words=["overflow"])


def test_int64_sum_excursion_is_fine(tmp_path):
    p = save(tmp_path, "a.npy", np.array([2**62, 2**62, -2**62, -2**62 + 5], dtype="i8"))
    assert ok("sum", p) == "5"


def test_int_dot_overflow(tmp_path):
    p = save(tmp_path, "a.npy", np.array([2**32, 2**32], dtype="i8"))
    bad("dot", p, p, code=1, words=["overflow"])


def test_overflow_errors_name_the_operation_and_the_files(tmp_path):
    p = save(tmp_path, "big.npy", np.array([2**62, 2**62, 2**62], dtype="i8"))
    u = save(tmp_path, "u.npy", np.array([2**64 - 1, 1], dtype="u8"))
    tail = "the exact int64 result does not fit in int64 (integer overflow)"
    assert bad("sum", p, code=1) == f"tally: sum: {p}: {tail}"
    assert bad("dot", p, p, code=1) == f"tally: dot: {p} and {p}: {tail}"
    assert bad("sum", u, code=1) == f"tally: sum: {u}: the exact uint64 result does not fit in uint64 (integer overflow)"
    m = save(tmp_path, "m.npy", np.array([[2**62, 1], [2**62, 1]], dtype="i8"))
    assert bad("sum", m, "--axis", 0, code=1) == \
        f"tally: sum (axis): {m}: the exact int64 sum of output 0 does not fit in int64 (integer overflow)"
    out = tmp_path / "out.npy"
    line = bad("add", p, p, "-o", out, "--backend", "cpu", code=1)
    assert line.startswith(f"tally: add: {p} and {p}: the exact int64 sum x[0] + y[0] does not fit in int64")
    assert line.endswith(f"; {out} was not written")


def test_int32_add_overflow_writes_nothing(tmp_path):
    a = save(tmp_path, "a.npy", np.array([2**31 - 1], dtype="i4"))
    b = save(tmp_path, "b.npy", np.array([1], dtype="i4"))
    out = tmp_path / "out.npy"
    bad("add", a, b, "-o", out, code=1, words=["overflow", "was not written"])
    assert not out.exists() and no_temp_files(tmp_path)


# ---- usage ------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    [], ["mul", "a.npy"], ["sum"], ["dot", "a.npy"], ["add", "a.npy", "a.npy"],
    ["sum", "a.npy", "--backend", "tpu"], ["sum", "a.npy", "--delimiter", "ab"],
    ["sum", "a.npy", "--skip-rows", "-1"], ["sum", "a.npy", "--bogus"],
])
def test_usage_errors(args):
    r = run(*args)
    assert r.returncode == 2 and r.stdout == "" and r.stderr


@pytest.mark.parametrize("args", [["bogus"], ["bogus", "a.npy", "--json"], ["Sum", "a.npy"]])
def test_an_unknown_command_is_named(args):
    line = bad(*args)
    assert line == (f"tally: unknown command '{args[0]}' (the commands: sum, dot, add, mean, norm, var, std, min, max, "
                    "argmin, argmax, minmax; see tally --help)")


def test_option_checks_name_the_option_once():
    r = run("sum", "a.npy", "--skip-rows", "-1")
    assert r.returncode == 2 and r.stderr.splitlines()[0] == "--skip-rows: takes a count of lines, 0 to 2^63 - 1, not '-1'"


def test_help_states_empty_extremes_and_ddof_beyond_n():
    out = run("--help").stdout
    assert "empty input: inf / -inf for\n" in out and "the type's highest / lowest value for integers" in out
    assert "(int8: 127 / -128; bool: 1 / 0)" in out
    assert "ddof >= n (empty input included) gives nan, where" in out
    assert "NumPy warns and gives inf (nan for empty or constant\n" in out
    assert "ddof >= n gives nan (NumPy: inf, or nan for empty or constant data)" in run("var", "--help").stdout
    # what the help says of NumPy is what NumPy does
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isinf(np.var(np.array([1.0, 2.0]), ddof=2)) and np.isinf(np.std(np.array([1.0, 2.0]), ddof=3))
        assert np.isnan(np.var(np.array([3.0, 3.0]), ddof=2)) and np.isnan(np.var(np.array([]), ddof=0))


def test_help_and_version():
    r = run("--help")
    assert r.returncode == 0 and "tally sum FILE" in r.stdout and "--column-b" in r.stdout
    assert run("--version").returncode == 0
    assert run("add", "--help").returncode == 0


# ---- scikit-learn's bundled data sets --------------------------------------------------------

def sklearn_data():
    sklearn = pytest.importorskip("sklearn")
    return Path(sklearn.__file__).parent / "datasets" / "data"


@pytest.mark.parametrize("col", [0, 1, 2, 3])
def test_sklearn_iris_columns(col):
    f = sklearn_data() / "iris.csv"
    x = np.loadtxt(f, delimiter=",", skiprows=1, usecols=col)
    v = float(ok("sum", f, "--column", col, "--skip-rows", 1))
    exact = math.fsum(x)
    assert close(v, exact, exact, 1e-12)
    assert js("sum", f, "--column", col, "--skip-rows", 1)["n"] == 150


def test_sklearn_iris_first_line_is_not_data():
    # iris.csv starts with "150,4,setosa,...": without --skip-rows 1 it is read as data.
    f = sklearn_data() / "iris.csv"
    with_line = float(ok("sum", f, "--column", 0))
    without = float(ok("sum", f, "--column", 0, "--skip-rows", 1))
    assert math.isclose(with_line - without, 150.0, rel_tol=1e-12)


def test_sklearn_iris_dot_of_two_columns():
    f = sklearn_data() / "iris.csv"
    x = np.loadtxt(f, delimiter=",", skiprows=1, usecols=(0, 2))
    v = float(ok("dot", f, f, "--skip-rows", 1, "--column", 0, "--column-b", 2))
    exact = math.fsum(x[:, 0] * x[:, 1])
    assert close(v, exact, exact, 1e-12)


@pytest.mark.parametrize("name,cols", [("wine_data.csv", 13), ("breast_cancer.csv", 30)])
def test_sklearn_other_csvs(name, cols):
    f = sklearn_data() / name
    x = np.loadtxt(f, delimiter=",", skiprows=1)
    for col in (0, cols // 2, cols - 1):
        v = float(ok("sum", f, "--column", col, "--skip-rows", 1))
        exact = math.fsum(x[:, col])
        assert close(v, exact, exact, 1e-12)


def test_sklearn_diabetes_gzip_space_separated():
    f = sklearn_data() / "diabetes_data_raw.csv.gz"
    x = np.loadtxt(f)
    for col in range(x.shape[1]):
        v = float(ok("sum", f, "--column", col, "--delimiter", "space"))
        exact = math.fsum(x[:, col])
        assert close(v, exact, exact, 1e-12)


def test_sklearn_digits_exact():
    f = sklearn_data() / "digits.csv.gz"
    x = np.loadtxt(f, delimiter=",")
    for col in (10, 64):  # small integers: the float64 sums are exact
        assert ok("sum", f, "--column", col) == repr(float(x[:, col].sum()))


# ---- only regular files in, only regular files replaced --------------------------------

def test_non_regular_inputs_are_refused(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # never opened: a read would block, and its data would be sniffed away
    bad("sum", fifo, words=["pipe.csv", "not a regular file"])
    bad("sum", fifo, "--column", "0", "--delimiter", ";", words=["pipe.csv", "not a regular file"])
    bad("sum", "/dev/zero", words=["/dev/zero", "not a regular file"])
    bad("sum", tmp_path, words=[str(tmp_path.name), "not a regular file"])


def test_add_refuses_to_replace_non_regular_targets(tmp_path):
    a = save(tmp_path, "a.npy", np.ones(3))
    fifo = tmp_path / "out.npy"
    os.mkfifo(fifo)
    bad("add", a, a, "-o", fifo, words=["out.npy", "not a regular file"])
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert no_temp_files(tmp_path)


def test_add_writes_through_symlinks(tmp_path):
    a = save(tmp_path, "a.npy", np.arange(3.0))
    link = tmp_path / "link.npy"
    os.symlink("real.npy", link)
    r = run("add", a, a, "-o", link)
    assert r.returncode == 0, r.stderr
    assert os.path.islink(link)
    assert np.array_equal(np.load(tmp_path / "real.npy"), np.arange(3.0) * 2)


def test_csv_without_data_rows_is_an_error(tmp_path):
    p = tmp_path / "few.csv"
    p.write_text("a\n1\n2\n")
    bad("sum", p, "--skip-rows", "5", words=["few.csv", "no data rows"])
    h = tmp_path / "header.csv"
    h.write_text("a,b\n")
    bad("sum", h, "--column", "b", words=["header.csv", "no data rows"])
    e = tmp_path / "empty.csv"
    e.write_text("")
    bad("sum", e, words=["empty.csv", "no data rows"])


# ---- min, max, argmin, argmax ------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["<f4", "<f8", "<i4", "<i8", ">f8"])
def test_extremes_against_numpy(tmp_path, dt):
    rng = np.random.default_rng(11)
    a = rng.integers(-40, 40, size=(300, 7)).astype(dt)  # few distinct values: many ties
    p = save(tmp_path, "a.npy", a)
    for cmd, fn in [("min", np.min), ("max", np.max), ("argmin", np.argmin), ("argmax", np.argmax)]:
        got = js(cmd, p)
        assert got["value"] == fn(a).item(), cmd
        assert got["n"] == a.size
    assert js("min", p)["dtype"] == np.dtype(dt).newbyteorder("=").name


def test_extremes_nan_rule(tmp_path):
    a = np.array([3.0, -1.5, 7.25, 7.25, np.nan, -1.5, np.nan])
    p = save(tmp_path, "a.npy", a)
    assert ok("min", p) == "nan" and ok("max", p) == "nan"
    assert ok("argmin", p) == str(np.argmin(a)) == "4"
    assert ok("argmax", p) == str(np.argmax(a))
    assert float(ok("min", p, "--skip-nan")) == np.nanmin(a)
    assert float(ok("max", p, "--skip-nan")) == np.nanmax(a)
    assert ok("argmin", p, "--skip-nan") == str(np.nanargmin(a)) == "1"
    assert ok("argmax", p, "--skip-nan") == str(np.nanargmax(a)) == "2"


def test_minmax_prints_both_extremes(tmp_path):
    a = np.array([[3.0, -1.5, 7.25], [7.25, np.nan, -1.5]])
    p = save(tmp_path, "a.npy", a)
    assert ok("minmax", p) == "nan nan"
    assert ok("minmax", p, "--skip-nan") == f"{float(np.nanmin(a))!r} {float(np.nanmax(a))!r}" == "-1.5 7.25"
    got = js("minmax", p, "--skip-nan")
    assert got["value"] == [-1.5, 7.25] and got["n"] == 6 and got["dtype"] == "float64"
    assert ok("minmax", p, "--axis", "0") == "3.0 7.25\nnan nan\n-1.5 7.25"
    assert ok("minmax", p, "--axis", "1", "--skip-nan") == "-1.5 7.25\n-1.5 7.25"
    assert js("minmax", p, "--axis", "0", "--skip-nan")["value"] == [[3.0, 7.25], [-1.5, -1.5], [-1.5, 7.25]]
    i = save(tmp_path, "i.npy", np.array([3, -4, 9, 9, -4], dtype=np.int32))
    assert ok("minmax", i) == "-4 9"
    z = save(tmp_path, "z.npy", np.array([1.0, -0.0, 0.0, 2.0]))
    assert ok("minmax", z) == "-0.0 2.0"
    e = save(tmp_path, "e.npy", np.zeros(0))
    assert ok("minmax", e) == "inf -inf"
    r = run("minmax", i, "--distributed")
    assert r.returncode == 2 and "not var, std or minmax" in r.stderr


def test_minmax_backend_cuda_same_as_cpu(tmp_path):
    # the GPU's one-launch minmax prints what the CPU prints (every dtype, NaN, -0.0 first);
    # no GPU: exit 1 with the no-GPU message
    rng = np.random.default_rng(12)
    h = rng.standard_normal(300_001) * 40
    h[[7, 250_000]] = -0.0
    cases = {dt: (np.clip(h, -120, 120) + (120 if dt[0] == "u" else 0)).astype(dt)
             for dt in ("float16", "float32", "int8", "uint16", "int64")}
    cases["nan"] = np.where(np.arange(h.size) == 1000, np.nan, h)
    cases["zeros"] = np.array([0.0, -0.0, 0.0, -0.0] * 9)
    for name, a in cases.items():
        p = save(tmp_path, f"{name}.npy", a)
        if gpu_present():
            for extra in ((), ("--skip-nan",)):
                assert ok("minmax", p, "--backend", "cuda", *extra) == ok("minmax", p, "--backend", "cpu", *extra), name
        else:
            bad("minmax", p, "--backend", "cuda", code=1, words=["cuda"])


def test_extremes_signed_zero_first_wins(tmp_path):
    p = save(tmp_path, "z.npy", np.array([1.0, -0.0, 0.0]))
    assert ok("min", p) == "-0.0"
    assert ok("argmin", p) == "1"


def test_extremes_empty_and_all_nan(tmp_path):
    e = save(tmp_path, "e.npy", np.zeros(0))
    assert js("min", e)["value"] == "inf"
    assert js("max", e)["value"] == "-inf"
    bad("argmin", e, words=["empty", "no index"])
    # integers and bool: the type's highest / lowest (as --help says)
    assert [ok(c, save(tmp_path, "i.npy", np.zeros(0, dtype="i1"))) for c in ("min", "max")] == ["127", "-128"]
    assert [ok(c, save(tmp_path, "b.npy", np.zeros(0, dtype="?"))) for c in ("min", "max")] == ["1", "0"]
    n = save(tmp_path, "n.npy", np.full(5, np.nan))
    assert ok("argmax", n) == "0"
    bad("argmax", n, "--skip-nan", words=["only nan"])
    assert ok("min", n, "--skip-nan") == "nan"


def test_extremes_csv_column(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("a,b\n1,9\n5,-3\n5,2\n")
    assert ok("max", p, "--column", "a") == "5.0"
    assert ok("argmax", p, "--column", "a") == "1"
    assert ok("argmin", p, "--column", "b") == "1"


def test_extremes_large_int_exact(tmp_path):
    a = np.array([2**62 + 1, 2**62 + 3, -(2**63)], dtype=np.int64)
    p = save(tmp_path, "big.npy", a)
    assert ok("max", p) == str(2**62 + 3)
    assert ok("min", p) == str(-(2**63))


# ---- mean ------------------------------------------------------------------------------------

def test_mean_exact_against_fractions(tmp_path):
    from fractions import Fraction
    rng = np.random.default_rng(5)
    for a in (np.array([0.1, 0.2, 0.3, 1e16, -1e16]), rng.standard_normal(10001) * 10.0 ** rng.integers(-8, 8, 10001)):
        p = save(tmp_path, "m.npy", a)
        want = float(sum(Fraction(float(v)) for v in a) / len(a))
        assert float(ok("mean", p)) == want
    i = save(tmp_path, "i.npy", np.array([2**62, 2**62, 3], dtype=np.int64))
    from fractions import Fraction
    assert js("mean", i)["value"] == float(Fraction(2**63 + 3, 3)) and js("mean", i)["dtype"] == "float64"
    f = save(tmp_path, "f.npy", np.arange(5, dtype=np.float32))
    assert js("mean", f)["dtype"] == "float32"
    # The cuda backend gives the same bits (the mean is correctly rounded everywhere).
    m = save(tmp_path, "w.npy", rng.standard_normal(300001) * 10.0 ** rng.integers(-30, 30, 300001))
    if gpu_present():
        assert ok("mean", m, "--backend", "cuda") == ok("mean", m, "--backend", "cpu")
        assert ok("norm", m, "--backend", "cuda") == ok("norm", m, "--backend", "cpu")
        assert js("mean", f, "--backend", "cuda")["backend"] == "cuda"
    else:
        bad("mean", f, "--backend", "cuda", code=1, words=["cuda"])
        bad("norm", f, "--backend", "cuda", code=1, words=["cuda"])


@pytest.mark.parametrize("ord_", ["1", "2", "inf"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int32", "int64", "uint64", "bool"])
def test_norm_backend_cuda_every_ord_and_type(tmp_path, ord_, dtype):
    # --backend cuda insists on the GPU for every command (README): the L1 / L2 norms of integer
    # data and the L1 / max norms of any data ran on the CPU anyway (without a GPU: exit 0 and
    # "backend": "cpu"); the messages named the library's norm1 / norm2 / norm_inf, not the command
    p = save(tmp_path, "a.npy", np.array([3, 4, 0, 1], dtype=dtype))
    if gpu_present():
        r = js("norm", p, "--ord", ord_, "--backend", "cuda")
        assert r["backend"] == "cuda" and r["value"] == js("norm", p, "--ord", ord_, "--backend", "cpu")["value"]
    else:
        line = bad("norm", p, "--ord", ord_, "--backend", "cuda", code=1)
        assert line.startswith("tally: norm: the CUDA backend was requested but "), line
        assert js("norm", p, "--ord", ord_)["backend"] == "cpu"  # auto: the CPU without a GPU


def test_norm_exact_no_overflow(tmp_path):
    from fractions import Fraction
    import decimal

    def exact_norm(a):  # sqrt of the exact sum of squares at 80 digits, then one rounding
        decimal.getcontext().prec = 80
        s = sum(Fraction(float(v)) ** 2 for v in a)
        return float((decimal.Decimal(s.numerator) / decimal.Decimal(s.denominator)).sqrt())

    big = np.array([1e200, 1e200, -1e-200])  # numpy.linalg.norm overflows to inf here
    assert float(ok("norm", save(tmp_path, "n.npy", big))) == exact_norm(big)
    a = np.random.default_rng(9).standard_normal(5001)
    assert float(ok("norm", save(tmp_path, "a.npy", a))) == exact_norm(a)
    assert js("norm", save(tmp_path, "i.npy", np.array([3, 4], dtype=np.int32)))["value"] == 5.0


# ---- --axis (2-D input) ------------------------------------------------------------------------

def axis_values(path, cmd, axis, *extra):
    return js(cmd, path, "--axis", axis, *extra)["value"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("shape", [(7, 5), (1, 9), (9, 1), (300, 2), (2, 300)])
@pytest.mark.parametrize("fortran", [False, True])
def test_axis_against_numpy(tmp_path, dtype, shape, fortran):
    rng = np.random.default_rng(sum(shape))
    a = rng.integers(-50, 50, size=shape).astype(dtype)  # few values: ties; sums exact in any order
    p = save(tmp_path, "a.npy", a, fortran=fortran)
    for axis in (0, 1):
        assert axis_values(p, "sum", axis) == a.sum(axis=axis).tolist()
        assert axis_values(p, "min", axis) == a.min(axis=axis).tolist()
        assert axis_values(p, "max", axis) == a.max(axis=axis).tolist()
        assert axis_values(p, "argmin", axis) == a.argmin(axis=axis).tolist()
        assert axis_values(p, "argmax", axis) == a.argmax(axis=axis).tolist()
        # mean: the correctly rounded exact mean (numpy's float64 mean of these is exact or
        # within an ulp; the fraction is the reference)
        from fractions import Fraction
        want = []
        for row in (a.T if axis == 0 else a):
            q = Fraction(int(sum(int(v) for v in row)), len(row))
            want.append(float(np.float32(float(q))) if dtype == np.float32 else float(q))
        got = axis_values(p, "mean", axis)
        if dtype == np.float32:
            assert [float(np.float32(g)) for g in got] == want
        else:
            assert got == want
    # text output: one value per line
    assert ok("sum", p, "--axis", 1).splitlines() == [str(v) for v in js("sum", p, "--axis", 1)["value"]]


def test_axis_float64_sums_are_correctly_rounded(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 1000)) * 10.0 ** rng.integers(-20, 20, size=(40, 1000))
    p = save(tmp_path, "a.npy", a)
    assert axis_values(p, "sum", 1) == [math.fsum(r) for r in a]
    assert axis_values(p, "sum", 0) == [math.fsum(c) for c in a.T]


def test_axis_nan_rules_and_empty_axes(tmp_path):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -1.0]])
    p = save(tmp_path, "a.npy", a)
    assert axis_values(p, "max", 0)[1] == "nan"
    assert axis_values(p, "argmax", 0) == np.argmax(a, axis=0).tolist()
    assert axis_values(p, "argmax", 1, "--skip-nan") == np.nanargmax(a, axis=1).tolist()
    assert axis_values(p, "max", 1, "--skip-nan") == np.nanmax(a, axis=1).tolist()
    e = save(tmp_path, "e.npy", np.zeros((0, 3)))
    assert axis_values(e, "sum", 0) == [0.0, 0.0, 0.0]
    assert axis_values(e, "mean", 0) == ["nan", "nan", "nan"]
    assert axis_values(e, "sum", 1) == []
    bad("argmax", e, "--axis", 0, words=["column 0", "empty"])
    allnan = save(tmp_path, "n.npy", np.full((2, 2), np.nan))
    bad("argmin", allnan, "--axis", 1, "--skip-nan", words=["row 0", "only NaN"])


def test_axis_errors(tmp_path):
    p1 = save(tmp_path, "v.npy", np.arange(5.0))
    bad("sum", p1, "--axis", 0, words=["2-D", "(5,)"])
    p2 = save(tmp_path, "m.npy", np.ones((2, 2)))
    r = run("sum", p2, "--axis", 2)
    assert r.returncode == 2
    big = save(tmp_path, "big.npy", np.full((2, 3), 2**62, dtype=np.int64))
    bad("sum", big, "--axis", 1, code=1, words=["overflow", "output 0"])


# ---- the element types added after the first four (docs/types.md) ---------------------------

@pytest.mark.parametrize("dt", ["<i1", "<i2", "|u1", "<u2", "<u4", "<u8", ">u2", ">i2", "|b1"])
def test_small_integer_sum_dot_min_max(tmp_path, dt):
    rng = np.random.default_rng(5)
    info = np.iinfo(np.dtype(dt).newbyteorder("=")) if dt != "|b1" else None
    if info is None:
        a = rng.integers(0, 2, 10007).astype(bool)
    else:
        hi = min(int(info.max), 2**40) + 1
        a = rng.integers(int(info.min), hi, 10007, dtype=np.int64).astype(dt)
    p = save(tmp_path, "a.npy", a)
    exact = sum(int(v) for v in a)
    r = js("sum", p)
    assert int(r["value"]) == exact
    assert r["dtype"] == ("uint64" if dt[1] == "u" else "int64")
    assert int(ok("max", p)) == int(a.max())
    assert int(ok("argmin", p)) == int(np.argmin(a))
    if dt[1] != "u" or dt in ("|u1", "<u2", ">u2"):
        assert int(ok("dot", p, p)) == sum(int(v) * int(v) for v in a)
    assert float(ok("mean", p)) == float(np.mean(a.astype(np.float64))) or abs(float(ok("mean", p)) - exact / a.size) <= 1e-15 * abs(exact / a.size)


def test_uint8_ones_do_not_wrap(tmp_path):
    p = save(tmp_path, "ones.npy", np.ones(256, dtype=np.uint8))
    assert ok("sum", p) == "256"
    q = save(tmp_path, "i8.npy", np.ones(2**16 + 1, dtype=np.int8))
    assert ok("sum", q) == str(2**16 + 1)


def test_uint64_overflow_is_an_error(tmp_path):
    p = save(tmp_path, "u.npy", np.array([2**64 - 1, 1], dtype=np.uint64))
    bad("sum", p, code=1, words=["overflow", "uint64"])
    q = save(tmp_path, "v.npy", np.array([2**64 - 2, 1], dtype=np.uint64))
    assert ok("sum", q) == str(2**64 - 1)


def test_bool_sum_counts_trues(tmp_path):
    a = np.arange(1000) % 3 == 0
    p = save(tmp_path, "b.npy", a)
    assert ok("sum", p) == str(int(a.sum()))
    assert ok("argmax", p) == "0"
    assert ok("argmin", p) == "1"


@pytest.mark.parametrize("order", ["<f2", ">f2"])
def test_float16_sum_is_the_exact_sum_rounded(tmp_path, order):
    rng = np.random.default_rng(8)
    bits = rng.integers(0, 2**16, 20000, dtype=np.uint16)
    a = bits.view(np.float16)
    a = a[np.isfinite(a)].astype(order)
    p = save(tmp_path, "h.npy", a)
    from fractions import Fraction
    exact = sum(Fraction(float(v)) for v in a)
    r = js("sum", p)
    assert r["dtype"] == "float32"
    assert np.float32(float(r["value"])) == np.float32(round_f32(exact))  # rounded once, exactly
    m = js("mean", p)
    assert np.float32(float(m["value"])) == np.float32(round_f32(exact / a.size))
    assert np.float16(float(ok("max", p))) == a.max()
    assert int(ok("argmin", p)) == int(np.argmin(a))


def test_float16_nan_and_skip_nan(tmp_path):
    a = np.array([1.0, np.nan, 3.0, -2.0, 3.0], dtype=np.float16)
    p = save(tmp_path, "n.npy", a)
    assert ok("max", p) == "nan"
    assert ok("argmax", p) == "1"
    assert float(ok("max", p, "--skip-nan")) == 3.0
    assert ok("argmax", p, "--skip-nan") == "2"
    assert ok("sum", p) == "nan"


def test_mixed_small_types_promote(tmp_path):
    a = save(tmp_path, "a.npy", np.array([200, 100], dtype=np.uint8))
    b = save(tmp_path, "b.npy", np.array([-3, 2], dtype=np.int8))
    r = js("dot", a, b)
    assert r["dtype"] == "int64" and r["value"] == -400


def test_norm_ord(tmp_path):
    from fractions import Fraction
    a = np.array([1e200, -1e200, 3.0, -0.5, 1e-300])
    p = save(tmp_path, "o.npy", a)
    assert float(ok("norm", p, "--ord", "1")) == float(sum(Fraction(abs(float(v))) for v in a))
    assert float(ok("norm", p, "--ord", "inf")) == 1e200
    assert float(ok("norm", p, "--ord", "2")) == float(ok("norm", p))
    f = save(tmp_path, "f.npy", np.array([-1.5, 2.5, np.nan], dtype=np.float32))
    assert js("norm", f, "--ord", "inf")["dtype"] == "float32"
    assert ok("norm", f, "--ord", "inf") == "nan"
    assert float(ok("norm", save(tmp_path, "i.npy", np.array([3, -4], dtype=np.int32)), "--ord", "1")) == 7.0
    r = run("norm", p, "--ord", "3")
    assert r.returncode != 0 and "ord" in r.stderr.lower()


@pytest.mark.parametrize("dt", ["<i8", "<u8", "<i4", "|i1", "|b1"])
def test_integer_norms_are_rounded_once_from_the_exact_value(tmp_path, dt):
    # above 2^53 converting each |x| to float64 first would round twice
    from decimal import Decimal, getcontext
    getcontext().prec = 100
    vals = {"<i8": [2**53 + 1] * 3 + [1, -2**63, 2**62 + 3], "<u8": [2**64 - 1, 2**63 + 12345, 7, 2**53 + 1],
            "<i4": [-2**31, 2**31 - 1, 5], "|i1": [-128, 127, -1], "|b1": [1, 0, 1, 1]}[dt]
    p = save(tmp_path, "i.npy", np.array(vals, dtype=dt))
    assert float(ok("norm", p, "--ord", "1")) == float(sum(abs(v) for v in vals))
    assert float(ok("norm", p)) == float(Decimal(sum(v * v for v in vals)).sqrt())
    assert float(ok("norm", p, "--ord", "inf")) == float(max(abs(v) for v in vals))
    assert js("norm", p, "--ord", "1")["dtype"] == "float64"


def test_float16_norms_of_every_ord(tmp_path):
    from fractions import Fraction
    a = np.array([0.1, -0.2, 65504, np.float16(6e-8)], dtype=np.float16)
    p = save(tmp_path, "h.npy", a)
    assert np.float32(ok("norm", p, "--ord", "1")) == np.float32(round_f32(sum(Fraction(float(v)) for v in np.abs(a))))
    assert float(ok("norm", p, "--ord", "inf")) == 65504.0
    assert js("norm", p, "--ord", "inf")["dtype"] == "float32"


# ---- add of the element types after the first four (float16, int8-uint64, bool) -----------------

@pytest.mark.parametrize("dt", ["<f2", ">f2", "|i1", "<i2", "|u1", "<u2", "<u4", "<u8"])
def test_add_small_types_in_their_own_type(tmp_path, dt):
    rng = np.random.default_rng(21)
    if dt.endswith("f2"):  # every float16 pattern against random ones: NumPy's float16 add
        a = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(dt)
        b = rng.integers(0, 2**16, 2**16, dtype=np.uint16).view(np.float16).astype(dt)
    else:  # small enough that nothing overflows
        info = np.iinfo(np.dtype(dt))
        a = rng.integers(info.min // 2, info.max // 2, 1000, dtype=np.dtype(dt).newbyteorder("="), endpoint=True)
        b = rng.integers(info.min // 2, info.max // 2, 1000, dtype=np.dtype(dt).newbyteorder("="), endpoint=True)
        a, b = a.astype(dt), b.astype(dt)
    out = tmp_path / "out.npy"
    ok("add", save(tmp_path, "a.npy", a), save(tmp_path, "b.npy", b), "-o", out, "--backend", "cpu")
    got = load_out(out)
    with np.errstate(over="ignore", invalid="ignore"):
        want = a + b
    assert got.dtype == want.dtype.newbyteorder("<") and got.shape == want.shape
    same = (got == want) | (np.isnan(got) & np.isnan(want)) if dt.endswith("f2") else got == want
    assert same.all()
    if dt.endswith("f2"):  # signed zeros too
        assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()


def test_add_small_integer_overflow_names_the_index(tmp_path):
    a = save(tmp_path, "a.npy", np.array([1, 100, 27, 120], dtype=np.int8))
    out = tmp_path / "out.npy"
    line = bad("add", a, a, "-o", out, "--backend", "cpu", code=1, words=["int8", "overflow", "index 1"])
    assert "add" in line and not out.exists()
    u = save(tmp_path, "u.npy", np.array([2**64 - 1, 0], dtype=np.uint64))
    one = save(tmp_path, "one.npy", np.array([0, 1], dtype=np.uint64))
    ok("add", u, one, "-o", out, "--backend", "cpu")
    assert load_out(out).tolist() == [2**64 - 1, 1]
    bad("add", u, u, "-o", out, "--backend", "cpu", code=1, words=["uint64", "index 0"])


def test_add_bool_is_logical_or(tmp_path):
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    out = tmp_path / "out.npy"
    ok("add", save(tmp_path, "a.npy", a), save(tmp_path, "b.npy", b), "-o", out)
    got = load_out(out)
    assert got.dtype == np.bool_ and got.tolist() == np.add(a, b).tolist()


def test_var_and_std_exact_against_fractions(tmp_path):
    from fractions import Fraction

    from exact_ref import round_sqrt_f64

    def exact_var(a, ddof):
        x = [Fraction(int(v)) if a.dtype.kind in "iub" else Fraction(float(v)) for v in a]
        m = sum(x) / len(x)
        return sum((v - m) ** 2 for v in x) / (len(x) - ddof)

    rng = np.random.default_rng(12)
    cases = [np.array([1e16, 1.0, -1e16, 3.0, 5.0]),  # numpy.var: 3.9999999999999994e+31
             rng.standard_normal(5001) * 10.0 ** rng.integers(-8, 8, 5001),
             np.array([2**62, -2**62, 7, 2**40], dtype=np.int64),
             np.array([True, False, False, True, True])]
    for a in cases:
        p = save(tmp_path, "v.npy", a)
        for ddof in (0, 1):
            want = exact_var(a, ddof)
            r = js("var", p, "--ddof", ddof)
            assert r["value"] == float(want) and r["dtype"] == "float64" and r["backend"] == "cpu"
            assert js("std", p, "--ddof", ddof)["value"] == round_sqrt_f64(want)
            fast = js("var", p, "--ddof", ddof, "--accuracy", "fast")["value"]
            if a.size > 5:  # (the first case cancels catastrophically: fast mode may lose it all)
                assert abs(fast - float(want)) <= 1e-9 * float(want)
    f16 = save(tmp_path, "h.npy", np.arange(10, dtype=np.float16))
    r = js("var", f16)
    assert r["value"] == 8.25 and r["dtype"] == "float32"
    one = save(tmp_path, "one.npy", np.array([3.0]))
    assert js("var", one, "--ddof", 1)["value"] == "nan"  # n - ddof <= 0: NaN (JSON: "nan"; NumPy: nan here, inf for non-constant data)
    r = run("var", one, "--ddof", "-1")  # a usage error (CLI11): exit 2, the message on stderr, the option named once
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines()[0] == "--ddof: takes a whole number, 0 to 2^63 - 1, not '-1'"
    # --backend cuda calls the library as the other commands do (no GPU: exit 1, the no-GPU message)
    if gpu_present():
        assert js("std", one, "--backend", "cuda")["value"] == 0.0
    else:
        bad("std", one, "--backend", "cuda", code=1, words=["std: the CUDA backend was requested"])
    bad("var", one, "--distributed", words=["not var, std or minmax"])


# ---- regressions found by breaking the tool on purpose (branch cliqa) ---------------------------

@pytest.mark.parametrize("descr,words", [
    ("<f8", ["header", "(1073741824, 1073741824)"]),  # 2^60 elements x 8 bytes: past int64
    ("<f4", ["truncated", "1152921504606846976 elements"]),  # 2^62 bytes: fits, but the file is short
])
def test_shape_whose_byte_count_overflows(tmp_path, descr, words):
    # Before: "tally: cannot create std::vector larger than max_size()", exit 1, no file named.
    p = npy_with_header(tmp_path / "huge.npy",
                        f"{{'descr': '{descr}', 'fortran_order': False, 'shape': (1073741824, 1073741824), }}",
                        b"\0" * 64)
    for cmd in ("sum", "max"):
        bad(cmd, p, words=["huge.npy", *words])


def test_repeated_header_key_last_wins_as_numpy(tmp_path):
    # A dict literal keeps the last value of a repeated key; np.load reads int8 here.
    p = npy_with_header(tmp_path / "dup.npy",
                        "{'descr': '<f8', 'descr': '|i1', 'fortran_order': False, 'shape': (2,), }",
                        b"\x01\x02" + b"\0" * 14)
    want = np.load(p)
    assert want.dtype == np.int8
    assert ok("sum", p) == str(int(want.sum())) == "3"
    assert js("max", p)["dtype"] == "int8"


AXIS_TYPES = ["i1", "i2", "u1", "u2", "u4", "u8", "f2", "b1"]


@pytest.mark.parametrize("dt", AXIS_TYPES)
def test_axis_takes_every_dtype(tmp_path, dt):
    # Before: exit 1 "x is int16; strided, axis and segmented reductions read float32, ...".
    rng = np.random.default_rng(5)
    a = (rng.random((4, 5)) > 0.5) if dt == "b1" else rng.integers(0 if dt[0] in "ub" else -60, 60, (4, 5)).astype(dt)
    p = save(tmp_path, "m.npy", a, fortran=True)
    for axis in (0, 1):
        exact = a.astype(np.float64)
        sums = [float(v) for v in ok("sum", p, "--axis", axis).split()]
        assert sums == list(exact.sum(axis=axis))
        means = [float(v) for v in ok("mean", p, "--axis", axis).split()]
        assert np.allclose(means, exact.mean(axis=axis), rtol=1e-6)
        for cmd in ("min", "max", "argmin", "argmax"):
            got = [float(v) for v in ok(cmd, p, "--axis", axis).split()]
            assert got == list(getattr(np, cmd)(a, axis=axis).astype(np.float64)), cmd
    assert js("max", p, "--axis", 0)["dtype"] == np.dtype(dt).name
    assert js("sum", p, "--axis", 0)["dtype"] == ("uint64" if dt[0] == "u" else "float32" if dt == "f2" else "int64")


def test_axis_uint64_above_int64(tmp_path):
    # Before: an input error ("above 2^63 - 1, which --axis does not take"); the library now
    # reads uint64 whole (widened with a bias of -2^63, undone exactly in the results).
    a = np.array([[1, 2], [2**63, 3], [2**64 - 1, 0]], dtype="u8")
    p = save(tmp_path, "m.npy", a[:2])
    r = js("sum", p, "--axis", 0)
    assert r["dtype"] == "uint64" and r["value"] == [2**63 + 1, 5]
    assert axis_values(p, "max", 0) == [2**63, 3]
    assert axis_values(p, "argmax", 0) == [1, 1]
    assert axis_values(p, "min", 1) == [1, 3]
    means = [float(v) for v in ok("mean", p, "--axis", 1).split()]
    assert means == [1.5, float((2**63 + 3) / 2)]
    q = save(tmp_path, "n.npy", a)
    bad("sum", q, "--axis", 0, code=1, words=["overflow", "uint64", "output 0"])


def test_corrupt_gzip_names_the_file_once(tmp_path):
    p = tmp_path / "d.csv.gz"
    p.write_bytes(gzip.compress(b"1\n2\n3\n" * 1000)[:-20])
    line = bad("sum", p, words=["d.csv.gz", "unexpected end of file"])
    assert line.count("d.csv.gz") == 1, line


def test_add_empty_output_path(tmp_path):
    a = save(tmp_path, "a.npy", np.arange(3.0))
    r = subprocess.run([BIN, "add", str(a), str(a), "-o", ""], capture_output=True, text=True, timeout=60,
                       cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "" and "empty" in r.stderr, r.stderr
    assert no_temp_files(tmp_path)


@pytest.mark.parametrize("opt", ["--ddof", "--skip-rows"])
def test_counts_beyond_int64_are_refused_not_clamped(tmp_path, opt):
    p = tmp_path / "x.csv"
    p.write_text("1\n2\n3\n")
    cmd = "var" if opt == "--ddof" else "sum"
    r = run(cmd, p, opt, str(2**63))  # (CLI11 alone would clamp it to 2^63 - 1)
    assert r.returncode == 2 and r.stdout == "" and opt in r.stderr and "2^63 - 1" in r.stderr, r.stderr
    ok(cmd, p, opt, "0")


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_while_writing_leaves_no_temporary_file(tmp_path, sig):
    # add writes to a hidden temporary file next to the output and renames it at the end; a
    # signal in between removes it (and the output is not created)
    import signal
    import time
    big = tmp_path / "big.npy"
    np.save(big, np.ones(40_000_000))
    out = tmp_path / "o.npy"
    for attempt in range(20):
        p = subprocess.Popen([BIN, "add", str(big), str(big), "-o", str(out), "--backend", "cpu"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        t0 = time.time()
        while p.poll() is None and not list(tmp_path.glob(".o.npy.tmp*")) and time.time() - t0 < 20:
            time.sleep(0.002)
        if p.poll() is not None:  # finished before its temporary file was seen: try again
            out.unlink(missing_ok=True)
            continue
        p.send_signal(getattr(signal, sig))
        rc = p.wait(timeout=60)
        if rc == 0:  # the signal came after the rename
            out.unlink()
            continue
        assert rc == -getattr(signal, sig)
        assert list(tmp_path.glob(".o.npy.tmp*")) == [] and not out.exists()
        return
    pytest.skip("the write never stayed open long enough to be interrupted")


def test_bool_bytes_other_than_0_and_1_read_as_true(tmp_path):
    # NumPy reads any nonzero byte of a '|b1' array as True
    p = npy_with_header(tmp_path / "b.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", bytes([2, 255, 1]))
    assert ok("sum", p) == "3" and ok("mean", p) == "1.0" and ok("argmin", p) == "0" and ok("var", p) == "0.0"
    out = tmp_path / "o.npy"
    ok("add", p, p, "-o", out)
    assert np.load(out).view(np.uint8).tolist() == [1, 1, 1]


def test_bytes_from_the_file_are_escaped_in_messages(tmp_path):
    for descr, shown in (("<f8\x1b[2J", "\\x1b[2J"), ("<f8\x00x", "\\x00x")):
        p = npy_with_header(tmp_path / "c.npy", "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,), }",
                            bytes(8))
        r = run("sum", p)
        assert r.returncode == 2 and "\x1b" not in r.stderr and "\x00" not in r.stderr and shown in r.stderr, r.stderr
        assert r.stderr.rstrip().endswith("bfloat16 has no NumPy dtype)"), r.stderr


def test_data_too_large_for_memory_is_named(tmp_path):
    # (only where the kernel refuses such an allocation outright: with overcommit_memory = 1
    # it would succeed and the zero-filling would run the machine out of memory)
    try:
        if Path("/proc/sys/vm/overcommit_memory").read_text().strip() == "1":
            pytest.skip("vm.overcommit_memory = 1: a 2 TB allocation would not fail")
    except OSError:
        pytest.skip("no /proc/sys/vm/overcommit_memory")
    p = npy_with_header(tmp_path / "huge.npy", "{'descr': '|i1', 'fortran_order': False, 'shape': (2000000000000,), }")
    with open(p, "r+b") as f:  # a sparse file as long as the header says
        f.truncate(p.stat().st_size + 2000000000000)
    r = run("sum", p)
    assert r.returncode == 2 and "needs 2000000000000 bytes of memory" in r.stderr, r.stderr
