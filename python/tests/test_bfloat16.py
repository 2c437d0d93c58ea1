"""NumPy bfloat16 arrays: ml_dtypes.bfloat16 (NumPy has none of its own). NumPy's buffer
protocol and DLPack export cannot describe them, so every call gave nanobind's "incompatible
function arguments" TypeError with a dump of the C++ signatures; the Python layer now passes
their bits as uint16 with the element type bfloat16 (_tally.bfloat16_view, zero copy). Every
bfloat16 value is exact in float32, so each result must be the bits tally gives for the
float32 copy, with the documented result types (array results of x's type: ml_dtypes.bfloat16)."""
import math

import numpy as np
import pytest

tally = pytest.importorskip("tally")
ml_dtypes = pytest.importorskip("ml_dtypes", reason="NumPy bfloat16 arrays are ml_dtypes.bfloat16: "
                                "pip install ml_dtypes")
BF = ml_dtypes.bfloat16


def same(a, b):
    """Equal values (NaN equal to NaN, -0.0 not equal to 0.0 where both are floats) and shapes."""
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a64.shape == b64.shape
    np.testing.assert_array_equal(np.signbit(a64), np.signbit(b64))
    np.testing.assert_array_equal(a64, b64)


def data():
    rng = np.random.default_rng(7)
    h = (rng.standard_normal((5, 6)) * 100).astype(BF)
    h[1, 2] = np.nan
    return h


def test_values_of_a_small_array():
    x = np.array([1.5, -2.0, 3.0, 0.25], dtype=BF)
    assert tally.sum(x) == 2.75 and isinstance(tally.sum(x), float)
    assert tally.mean(x) == 0.6875
    assert (tally.min(x), tally.max(x), tally.argmin(x), tally.argmax(x)) == (-2.0, 3.0, 1, 2)
    assert tally.norm(x, 1) == 6.75 and tally.norm(x, np.inf) == 3.0
    assert tally.norm(x) == float(np.float32(math.sqrt(15.3125)))  # correctly rounded float32
    assert tally.var(x, dtype=np.float64) == np.var(x.astype(np.float64))  # (exact in float64 here)
    assert tally.dot(x, x) == 15.3125
    assert tally.count_nonzero(x) == 4 and tally.all(x) and tally.any(x)


def test_sums_are_exact_not_rounded_to_bfloat16():
    # bfloat16 has 8 significant bits: 256 + 1 is 256 in bfloat16 arithmetic; tally's sum is
    # the exact 260, as float32 (the default result of 16-bit floats), or float64.
    x = np.array([256, 1, 1, 1, 1], dtype=BF)
    assert tally.sum(x) == 260.0
    assert tally.sum(x, dtype=np.float64) == 260.0
    assert tally.mean(x) == 52.0
    np.testing.assert_array_equal(tally.sum(x.reshape(1, 5), axis=1), np.array([260.0], dtype=np.float32))


@pytest.mark.parametrize("fn", ["sum", "mean", "min", "max", "nanmin", "nanmax", "argmin", "argmax", "nanargmin",
                                "nanargmax", "var", "std", "norm", "count_nonzero", "any", "all"])
def test_whole_array_results_equal_the_float32_copys(fn):
    h = data()
    f = getattr(tally, fn)
    for x in (h, h.T, h[::-1, ::2], h.ravel()[::-3]):  # contiguous, transposed, strided (copied)
        r, want = f(x), f(x.astype(np.float32))
        assert type(r) is type(want)
        same(r, want)


@pytest.mark.parametrize("fn", ["sum", "mean", "min", "max", "nanmin", "nanmax", "var", "std"])
@pytest.mark.parametrize("axis", [0, 1, (0, 1), -1])
def test_axis_results_equal_the_float32_copys(fn, axis):
    h = data()
    f = getattr(tally, fn)
    for x in (h, h.T, h[::-1, ::2], np.broadcast_to(h[0], (3, 6))):
        r, want = f(x, axis=axis), f(x.astype(np.float32), axis=axis)
        if axis == (0, 1):
            same(r, want)
            continue
        # min/max keep x's type: ml_dtypes.bfloat16 arrays; the others float32, as documented
        assert r.dtype == (np.dtype(BF) if fn in ("min", "max", "nanmin", "nanmax") else np.float32)
        same(r, want)
        k = f(x, axis=axis, keepdims=True)
        assert k.dtype == r.dtype and k.shape == np.sum(x.astype(np.float32), axis=axis, keepdims=True).shape


@pytest.mark.parametrize("fn", ["argmin", "argmax", "nanargmin", "nanargmax"])
def test_index_along_an_axis(fn):
    h = np.nan_to_num(data().astype(np.float32)).astype(BF)
    for axis in (0, 1):
        r = getattr(tally, fn)(h, axis=axis)
        assert r.dtype == np.int64
        np.testing.assert_array_equal(r, getattr(np, fn)(h.astype(np.float32), axis=axis))


@pytest.mark.parametrize("o", [1, 2, np.inf])
def test_norms(o):
    h = data()
    for axis in (None, 0, 1):
        same(tally.norm(h, o, axis=axis), tally.norm(h.astype(np.float32), o, axis=axis))


def test_keepdims_of_a_whole_array_min_is_a_bfloat16_array():
    h = np.nan_to_num(data().astype(np.float32)).astype(BF)
    r = tally.min(h, keepdims=True)
    assert r.dtype == np.dtype(BF) and r.shape == (1, 1) and float(r[0, 0]) == float(h.astype(np.float32).min())


def test_add_axpy_scale_write_bfloat16_rounded_once():
    x = np.array([1.0, 256.0, 3.0, -0.0], dtype=BF)
    y = np.array([2.0**-8, 1.0, 2.0**-7, -0.0], dtype=BF)
    # the exact sums (1 + 2^-8, 257, 3 + 2^-7: ties; -0) rounded once to bfloat16, ties to even
    want = (x.astype(np.float64) + y.astype(np.float64)).astype(np.float32).astype(BF)
    s = tally.add(x, y)
    assert s.dtype == np.dtype(BF)
    same(s, want)
    assert float(s[0]) == 1.0 and float(s[1]) == 256.0 and float(s[2]) == 3.0 and math.copysign(1, s[3]) == -1
    out = np.empty(4, dtype=BF)
    assert tally.add(x, y, out=out) is out
    same(out, want)
    z = x.copy()
    assert tally.scale(0.5, z) is z  # in place, in the caller's memory
    same(z, x.astype(np.float32) / 2)
    w = y.copy()
    assert tally.axpy(2.0, x, w) is w
    same(w, (2 * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32).astype(BF))


def test_out_arrays_of_bfloat16():
    h = np.nan_to_num(data().astype(np.float32)).astype(BF)
    out = np.empty(6, dtype=BF)
    assert tally.max(h, axis=0, out=out) is out
    same(out, h.astype(np.float32).max(axis=0))
    o = np.empty((), dtype=np.float32)
    assert tally.sum(h, out=o) is o and float(o) == tally.sum(h)


def test_scalars_empty_and_zero_strides():
    assert tally.sum(BF(1.5)) == 1.5 and tally.max(BF(-2.0)) == -2.0
    same(tally.sum(np.zeros((0, 3), dtype=BF), axis=0), np.zeros(3, dtype=np.float32))
    assert tally.sum(np.zeros(0, dtype=BF)) == 0.0
    same(tally.sum(np.broadcast_to(BF(1.5), (4, 3)), axis=0), np.full(3, 6.0, dtype=np.float32))


def test_bfloat16_messages():
    x = np.ones(3, dtype=BF)
    with pytest.raises(TypeError, match=r"^tally.sum: a bfloat16 sum can give float32 or float64, not bfloat16$"):
        tally.sum(x, dtype=BF)
    with pytest.raises(ValueError, match=r"^tally.add: element type mismatch: x is bfloat16, y is float32$"):
        tally.add(x, np.ones(3, dtype=np.float32))
    ro = x.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"^tally.scale: x is read-only$"):
        tally.scale(2.0, ro)
    with pytest.raises(ValueError, match=r"tally.add: out has shape \(3,\) and dtype float32"):
        tally.add(x, x, out=np.empty(3, dtype=np.float32))


OTHER_ML_DTYPES = [n for n in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float4_e2m1fn", "int4", "uint4",
                               "int2", "float6_e2m3fn") if hasattr(ml_dtypes, n)]


@pytest.mark.parametrize("name", OTHER_ML_DTYPES)
def test_other_ml_dtypes_are_refused_by_name_never_by_nanobind(name):
    # "no call surfaces a nanobind signature dump": tally's own TypeError naming the dtype
    x = np.zeros((2, 3), dtype=getattr(ml_dtypes, name))
    calls = [("sum", lambda: tally.sum(x)), ("sum", lambda: tally.sum(x, axis=1)), ("min", lambda: tally.min(x, axis=0)),
             ("argmax", lambda: tally.argmax(x)), ("mean", lambda: tally.mean(x)), ("norm", lambda: tally.norm(x, axis=1)),
             ("var", lambda: tally.var(x)), ("dot", lambda: tally.dot(x, x)), ("add", lambda: tally.add(x, x)),
             ("count_nonzero", lambda: tally.count_nonzero(x)), ("scale", lambda: tally.scale(1.0, x))]
    for fn, call in calls:
        with pytest.raises(TypeError, match=rf"^tally\.{fn}: x has unsupported dtype {name} ") as e:
            call()
        assert "incompatible function arguments" not in str(e.value)
