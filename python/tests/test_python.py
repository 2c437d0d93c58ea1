"""tally's Python module against math.fsum / exact rationals and NumPy (CPU backend)."""
import math
from fractions import Fraction

import numpy as np
import pytest

tally = pytest.importorskip("tally")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402


def sum_fr(x, y):
    total = Fraction(0)
    for a, b in zip(x.ravel(), y.ravel()):
        total += Fraction(float(a)) * Fraction(float(b))
    return total


def test_known_values():
    ones = np.ones(2**24 + 1, dtype=np.float32)
    assert tally.sum(ones, dtype=np.float64) == 16777217.0
    assert tally.sum(ones) == 16777216.0
    assert tally.sum(np.array([1e308, 1e308, -1e308])) == 1e308
    assert math.copysign(1.0, tally.sum(np.array([-0.0, -0.0]))) == -1.0
    assert tally.sum(np.array([], dtype=np.float64)) == 0.0
    assert tally.sum(np.arange(100000, dtype=np.int32)) == 4999950000
    assert tally.dot(np.array([1, 2, 3, 4], dtype=np.int64), np.ones(4, dtype=np.int64)) == 10


def test_errors():
    with pytest.raises(TypeError):
        tally.sum(np.ones(3, dtype=np.complex64))
    with pytest.raises(ValueError):
        tally.dot(np.ones(3), np.ones(4))
    with pytest.raises(OverflowError):
        tally.sum(np.array([2**62, 2**62], dtype=np.int64))
    with pytest.raises(ValueError):
        tally.sum(np.ones(3), accuracy="sloppy")
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        tally.sum(np.ones((2, 2, 2)), axis=(0, 0))


def test_shapes_and_strides():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    assert tally.sum(a) == math.fsum(a.ravel())
    f = np.asfortranarray(a)
    assert tally.sum(f) == math.fsum(a.ravel())
    assert tally.sum(a[:, 1, ::2]) == math.fsum(a[:, 1, ::2].ravel())
    out = tally.add(a, a)
    assert np.array_equal(out, a + a)
    tally.add(a, a, out=a)
    assert np.array_equal(a, out)


finite64 = st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e300, max_value=1e300)
finite32 = st.floats(allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 300), elements=finite64))
def test_exact_sum_is_fsum(x):
    assert tally.sum(x) == math.fsum(x)  # both correctly rounded


@settings(max_examples=100, deadline=None)
@given(hnp.arrays(np.float32, st.integers(0, 300), elements=finite32))
def test_exact_float32_sum_to_float64_is_fsum(x):
    assert tally.sum(x, dtype=np.float64) == math.fsum(x.astype(np.float64))


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 200).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float64, n, elements=st.floats(-1e150, 1e150)),
    hnp.arrays(np.float64, n, elements=st.floats(-1e150, 1e150)))))
def test_exact_dot_is_exact(xy):
    x, y = xy
    assert tally.dot(x, y) == float(sum_fr(x, y))


def test_fast_mode_close():
    x = np.random.default_rng(1).random(100001)
    assert tally.sum(x, accuracy="fast") == pytest.approx(math.fsum(x), rel=1e-13)


def test_odd_inputs():
    be = np.arange(5.0).astype(">f8")
    assert tally.sum(be) == 10.0
    assert tally.dot(np.arange(3, dtype=">i4"), np.arange(3, dtype=">i4")) == 5
    assert tally.add(np.array(1.0), np.array(2.0)).shape == ()
    assert tally.sum([1.0, 2.5]) == 3.5
    with pytest.raises(ValueError):
        tally.sum(np.ones(3), accuracy=None)
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        tally.add(np.ones(3), np.ones(3), out=ro)
    with pytest.raises(TypeError):
        tally.add(np.ones(3), np.ones(3), out=[0, 0, 0])
    with pytest.raises(TypeError):
        tally.sum(np.ones(3), dtype=np.int64)
    with pytest.raises(TypeError):
        tally.sum(np.ones(3, dtype=np.int64), dtype=np.float64)


def test_min_max_arg_against_numpy():
    rng = np.random.default_rng(3)
    for dt in (np.float32, np.float64, np.int32, np.int64):
        a = rng.integers(-30, 30, size=(257, 5)).astype(dt)  # many ties: first index wins
        assert tally.min(a) == a.min() and tally.max(a) == a.max()
        assert tally.argmin(a) == a.argmin() and tally.argmax(a) == a.argmax()
        assert type(tally.min(a)) is (float if a.dtype.kind == "f" else int)


def test_min_max_nan_rule():
    a = np.array([2.0, np.nan, -1.0, 5.0, np.nan])
    assert np.isnan(tally.min(a)) and np.isnan(tally.max(a))
    assert tally.argmin(a) == np.argmin(a) == 1
    assert tally.nanmin(a) == np.nanmin(a) and tally.nanmax(a) == np.nanmax(a)
    assert tally.nanargmin(a) == np.nanargmin(a) and tally.nanargmax(a) == np.nanargmax(a)
    with pytest.raises(ValueError, match="only NaN"):
        tally.nanargmax(np.full(3, np.nan))
    with pytest.raises(ValueError, match="empty"):
        tally.argmin(np.zeros(0))
    assert tally.min(np.zeros(0)) == np.inf and tally.max(np.zeros(0)) == -np.inf


def test_minmax_is_min_and_max_together():
    rng = np.random.default_rng(4)
    for dt in (np.float32, np.float64, np.int8, np.uint16, np.int32, np.int64, np.float16):
        a = rng.integers(-30, 30, size=(257, 5)).astype(dt)
        lo, hi = tally.minmax(a)
        assert (lo, hi) == (a.min(), a.max())
        assert type(lo) is type(tally.min(a)) and type(hi) is type(tally.max(a))
        for axis in (0, 1, (0, 1)):
            lo, hi = tally.minmax(a, axis=axis, keepdims=True)
            np.testing.assert_array_equal(lo, a.min(axis=axis, keepdims=True))
            np.testing.assert_array_equal(hi, a.max(axis=axis, keepdims=True))
    b = np.array([2.0, np.nan, -1.0, 5.0, np.nan])
    lo, hi = tally.minmax(b)
    assert np.isnan(lo) and np.isnan(hi)
    assert tally.nanminmax(b) == (np.nanmin(b), np.nanmax(b)) == (-1.0, 5.0)
    assert tally.minmax(np.zeros(0)) == (np.inf, -np.inf)
    lo, hi = tally.nanminmax(np.full(3, np.nan))
    assert np.isnan(lo) and np.isnan(hi)
    z = tally.minmax(np.array([-0.0, 0.0, 1.0, -1.0]))  # ties of zeros: the first, with its sign
    assert z == (-1.0, 1.0)
    lo, hi = tally.minmax(np.array([0.0, -0.0]))
    assert math.copysign(1, lo) == 1 and math.copysign(1, hi) == 1
    with pytest.raises(TypeError, match="minmax"):
        tally.minmax(np.ones(3, dtype=np.complex128))
    s = np.arange(-50.0, 50.0)[::-3]  # a strided view (min and max in turn)
    assert tally.minmax(s) == (s.min(), s.max())
    t = np.array([False, True, False])
    assert tally.minmax(t) == (False, True) and tally.minmax(np.zeros(4, dtype=bool)) == (False, False)
    big = np.random.default_rng(5).integers(-1000, 1000, size=1_000_003).astype(np.float64)
    big[777] = -5000.0
    big[999_999] = 7000.0
    assert tally.minmax(big) == (-5000.0, 7000.0) and tally.nanminmax(big) == (-5000.0, 7000.0)


def test_mean_is_the_rounded_exact_mean():
    a = np.array([0.1, 0.2, 0.3, 1e16, -1e16])
    want = float(sum(Fraction(float(v)) for v in a) / len(a))
    assert tally.mean(a) == want  # numpy: a.mean() == 0.0
    assert tally.mean(np.array([1, 2, 4], dtype=np.int32)) == 7 / 3
    assert isinstance(tally.mean(np.ones(3, dtype=np.float32)), float)
    assert math.isnan(tally.mean(np.zeros(0)))
    with pytest.raises(TypeError):
        tally.mean(np.ones(3), dtype=np.int64)


def test_norm_does_not_overflow():
    assert tally.norm(np.array([1e200, 1e200])) == math.sqrt(2) * 1e200
    assert tally.norm(np.array([3, 4], dtype=np.int64)) == 5.0
    assert tally.norm(np.zeros(0)) == 0.0
    x = np.random.default_rng(4).standard_normal(1000)
    assert abs(tally.norm(x) - math.sqrt(math.fsum(v * v for v in x.tolist()))) <= 2 * math.ulp(tally.norm(x))


def test_float16_int8_uint64_bool():
    from fractions import Fraction
    rng = np.random.default_rng(3)
    h = rng.integers(0, 2**16, 5000, dtype=np.uint16).view(np.float16)
    h = h[np.isfinite(h)]
    exact = sum(Fraction(float(v)) for v in h)
    assert tally.sum(h) == float(np.float32(float(exact)))          # float32 by default
    assert tally.sum(h, dtype=np.float64) == float(exact)           # float(Fraction) rounds once, as tally
    assert tally.mean(h) == float(np.float32(float(exact / h.size)))
    assert tally.max(h) == float(h.max()) and tally.argmin(h) == int(np.argmin(h))
    i8 = np.ones(2**16 + 1, dtype=np.int8)
    assert tally.sum(i8) == 2**16 + 1 and tally.dot(i8, i8) == 2**16 + 1
    assert tally.min(np.array([5, -128, 7], dtype=np.int8)) == -128
    u = np.array([2**64 - 2, 1], dtype=np.uint64)
    assert tally.sum(u) == 2**64 - 1 and tally.max(u) == 2**64 - 2
    with pytest.raises(OverflowError):
        tally.sum(np.array([2**64 - 1, 1], dtype=np.uint64))
    b = np.arange(1000) % 7 == 0
    assert tally.sum(b) == int(b.sum()) and tally.argmax(b) == 0 and tally.argmin(b) == 1
    assert tally.mean(b) == float(np.mean(b))
    assert tally.sum(np.ones(256, dtype=np.uint8)) == 256


# ---- issue 5: norms, variance, logical reductions, axpy/scale --------------------------------

def _var_fr(a, ddof):
    xs = [Fraction(float(v)) if np.asarray(a).dtype.kind == "f" else Fraction(int(v)) for v in np.asarray(a).ravel()]
    m = sum(xs, Fraction(0)) / len(xs)
    return sum(((v - m) ** 2 for v in xs), Fraction(0)) / (len(xs) - ddof)


def _float(f):
    try:
        return float(f)
    except OverflowError:
        return math.inf


def _sqrt_fr(f):
    import decimal
    decimal.getcontext().prec = 100
    return float((decimal.Decimal(f.numerator) / decimal.Decimal(f.denominator)).sqrt())


def test_norm_ord_1_and_inf():
    a = np.array([1e200, -1e200, 3.0, -0.5])
    assert tally.norm(a, 1) == float(sum(Fraction(abs(float(v))) for v in a))
    assert tally.norm(a, ord=np.inf) == 1e200
    assert tally.norm(a, ord="inf") == 1e200
    assert tally.norm(a) == tally.norm(a, ord=2)
    rng = np.random.default_rng(3)
    b = (rng.standard_normal(20001) * 10.0 ** rng.integers(-10, 10, 20001)).astype(np.float32)
    assert tally.norm(b, 1) == np.float32(float(sum(Fraction(abs(float(v))) for v in b)))
    assert tally.norm(b, 1, dtype=np.float64) == float(sum(Fraction(abs(float(v))) for v in b))
    assert tally.norm(b, np.inf) == float(np.max(np.abs(b)))
    assert abs(tally.norm(b, 1, accuracy="fast") - float(np.sum(np.abs(b.astype(np.float64))))) <= 1e-6 * tally.norm(b, 1)
    assert math.isnan(tally.norm(np.array([1.0, np.nan]), np.inf))
    assert tally.norm(np.array([], dtype=np.float64), 1) == 0.0 and tally.norm(np.array([]), np.inf) == 0.0
    assert tally.norm(np.array([3, -4], dtype=np.int64), 1) == 7.0
    with pytest.raises(ValueError):
        tally.norm(a, 3)


def test_var_std_exact_against_fractions():
    rng = np.random.default_rng(4)
    cases = [np.array([1e200, -1e200, 3e199]), np.array([1e-160, 3e-160]), 1e6 + rng.random(1001) * 1e-3,
             rng.integers(-2**62, 2**62, 101, dtype=np.int64), rng.standard_normal(513).astype(np.float32)]
    for a in cases:
        for ddof in (0, 1):
            want = _var_fr(a, ddof)
            got = tally.var(a, ddof=ddof)
            if a.dtype == np.float32:
                assert got == float(np.float32(_float(want)))
            else:
                assert got == _float(want), (a[:3], ddof)
                assert tally.std(a, ddof=ddof) == _sqrt_fr(want)
            if not math.isinf(_float(want)) and abs(a).max() < 1e150:  # fast mode squares in float64
                fast = tally.var(a, ddof=ddof, accuracy="fast")
                assert abs(fast - _float(want)) <= 1e-6 * _float(want)
    assert tally.var(np.array([1.0, 2.0, 3.0, 4.0])) == np.var([1.0, 2.0, 3.0, 4.0])
    assert tally.std(np.array([2, 4, 4, 4, 5, 5, 7, 9]), ddof=0) == 2.0
    assert math.isnan(tally.var(np.array([], dtype=np.float64)))
    assert math.isnan(tally.var(np.array([1.0, 2.0]), ddof=2))
    assert math.isnan(tally.std(np.array([1.0, np.inf])))
    with pytest.raises(TypeError):
        tally.var(np.ones(3), ddof=0.5)


def test_count_nonzero_any_all():
    a = np.array([0.0, -0.0, np.nan, 1.0, -np.inf], dtype=np.float64)
    assert tally.count_nonzero(a) == np.count_nonzero(a) == 3
    assert tally.any(a) and not tally.all(a)
    assert not tally.any(np.array([-0.0, 0.0])) and tally.all(np.array([np.nan, 2.0]))
    assert not tally.any(np.array([], dtype=np.int32)) and tally.all(np.array([], dtype=np.int32))
    b = np.random.default_rng(1).integers(-1, 2, 100003, dtype=np.int32)
    assert tally.count_nonzero(b.reshape(7, -1) if b.size % 7 == 0 else b) == np.count_nonzero(b)


def test_axpy_scale_in_place():
    x = np.arange(10, dtype=np.float64)
    y = np.ones(10)
    r = tally.axpy(0.1, x, y)
    assert r is y and np.array_equal(y, np.array([float(Fraction(0.1) * Fraction(float(v)) + 1) for v in x]))  # fma: rounded once
    s = np.arange(6, dtype=np.int32).reshape(2, 3)
    tally.scale(-3, s)
    assert s.tolist() == [[0, -3, -6], [-9, -12, -15]]
    z = np.array([2**62], dtype=np.int64)
    with pytest.raises(OverflowError):
        tally.scale(2, z)
    with pytest.raises(ValueError):
        tally.scale(2**40, np.ones(2, dtype=np.int32))
    with pytest.raises(TypeError):
        tally.axpy(1.5, np.ones(2, dtype=np.int64), np.ones(2, dtype=np.int64))
    with pytest.raises(ValueError):
        tally.axpy(1.0, np.ones(3), np.ones(4))
    with pytest.raises(TypeError):
        tally.scale(2.0, [1.0, 2.0])
    f = np.ones(4, dtype=np.float32)
    tally.axpy(2, f, f)  # y may be x itself
    assert f.tolist() == [3.0] * 4


def test_new_types_in_var_count_and_norms_convert_or_refuse_clearly():
    from fractions import Fraction
    for dt in (np.int8, np.uint8, np.int16, np.bool_, np.float16):
        a = (np.arange(1, 1001) % 7).astype(dt)
        xs = [Fraction(float(v)) for v in a]
        m = sum(xs) / len(xs)
        want = sum((v - m) ** 2 for v in xs) / len(xs)
        if dt == np.float16:  # float32 result: compare in float64 within half a float32 ulp
            got = tally.var(a)
            assert abs(Fraction(got) - want) <= Fraction(float(np.spacing(np.float32(got)))) / 2
        else:
            assert tally.var(a) == float(want)  # float(Fraction) rounds once, as tally does
        assert tally.count_nonzero(a) == int(np.count_nonzero(a))
        assert tally.any(a) and not tally.all(a)
    h = np.array([0.5, -2.0, 3.0], dtype=np.float16)
    assert tally.norm(h, 1) == 5.5 and tally.norm(h, np.inf) == 3.0
    y8 = np.ones(3, dtype=np.int8)
    tally.axpy(2, np.ones(3, dtype=np.int8), y8)  # (the new types: test_new_types_var_add_axpy_scale)
    assert y8.tolist() == [3, 3, 3]
    assert tally.var(np.ones(3, dtype=np.uint64)) == 0.0


def _half_round(f: Fraction, dt) -> float:
    """The exact rational f rounded once to float16 (nearest, ties to even; overflow to inf)."""
    if f == 0:
        return 0.0
    e = math.floor(math.log2(abs(f)))
    while Fraction(2) ** e > abs(f):
        e -= 1
    while Fraction(2) ** (e + 1) <= abs(f):
        e += 1
    q = Fraction(2) ** (max(e, -14) - 10)
    r = round(f / q) * q  # Python's round: ties to even
    return math.copysign(math.inf, f) if abs(r) >= 65536 else float(r)


def test_new_types_var_add_axpy_scale():
    rng = np.random.default_rng(11)
    cases = [rng.integers(0, 2**64, 1001, dtype=np.uint64), np.array([2**64 - 1, 2**64 - 3, 2**64 - 2], dtype=np.uint64),
             rng.integers(-128, 128, 501, dtype=np.int8), rng.integers(0, 2**32, 300, dtype=np.uint32),
             rng.random(777) < 0.3, (rng.standard_normal(999) * 100).astype(np.float16)]
    for a in cases:
        for ddof in (0, 1):
            xs = [Fraction(float(v)) if a.dtype == np.float16 else Fraction(int(v)) for v in a]
            m = sum(xs, Fraction(0)) / len(xs)
            want = sum(((v - m) ** 2 for v in xs), Fraction(0)) / (len(xs) - ddof)
            got = tally.var(a, ddof=ddof)
            if a.dtype == np.float16:  # float32 result, correctly rounded
                assert abs(Fraction(got) - want) <= Fraction(float(np.spacing(np.float32(got)))) / 2
            else:
                assert got == float(want), (a.dtype, ddof)
                assert tally.std(a, ddof=ddof) == _sqrt_fr(want)
            if want > 0 and m * m < 10**6 * want:  # fast mode (float64 Welford) on well-conditioned data
                fast = tally.var(a, ddof=ddof, accuracy="fast")
                tol = 1.2e-7 if a.dtype == np.float16 else 1e-9  # (float16: a float32 result)
                assert abs(fast - float(want)) <= tol * float(want)
    tf = np.array([True, False, False, True, True])
    assert tally.var(tf) == 0.24 and abs(np.var(tf) - 0.24) < 1e-15  # (NumPy's: 0.24000000000000005)
    assert math.isnan(tally.var(np.array([], dtype=np.uint16))) and math.isnan(tally.var(np.ones(2, np.int8), ddof=2))
    # add / axpy / scale of float16: the exact result rounded once, as NumPy's float16 arithmetic.
    x = np.array([1.0, 1.0009765625, 65504.0, -0.0, np.inf, 2.0**-24], dtype=np.float16)
    y = np.array([2.0**-11, 2.0**-11, 16.0, -0.0, -np.inf, 2.0**-24], dtype=np.float16)
    s = tally.add(x, y)
    with np.errstate(over="ignore", invalid="ignore"):
        ref = x + y  # NumPy's float16 add
    assert s.dtype == np.float16 and s[:4].tobytes() == ref[:4].tobytes() and np.isnan(s[4]) and s[5] == ref[5]
    assert s.tolist()[:3] == [1.0, 1.001953125, np.inf] and np.signbit(s[3])
    a = 2.0**-11 * (1 + 2.0**-10)  # a float16: a x + y is just below a tie for x = 1 - 2^-10, y = 1 + 2^-10
    xx = np.array([1 - 2.0**-10] * 2, dtype=np.float16)
    yy = np.array([1 + 2.0**-10, 3.0], dtype=np.float16)
    want = [_half_round(Fraction(float(np.float16(a))) * Fraction(float(u)) + Fraction(float(v)), np.float16)
            for u, v in zip(xx, yy)]
    tally.axpy(a, xx, yy)
    assert yy.tolist() == want and want[0] == 1 + 2.0**-10  # (a float32 fma would give 1 + 2^-9)
    sc = np.array([65504.0, 3.0, 2.0**-24], dtype=np.float16)
    tally.scale(1.5, sc)
    assert sc.tolist() == [np.inf, 4.5, 2.0**-23]
    # integers: exact, OverflowError naming the first index; bool add is logical or.
    u = np.array([2**63 - 1, 2**63, 5], dtype=np.uint64)
    assert tally.add(u, np.array([0, 2**63 - 1, 1], dtype=np.uint64)).tolist() == [2**63 - 1, 2**64 - 1, 6]
    with pytest.raises(OverflowError, match="index 1"):
        tally.scale(2, u)
    assert u.tolist() == [2**64 - 2, 0, 10]  # wrapped
    with pytest.raises(OverflowError, match="index 2"):
        tally.axpy(2**64 - 1, np.array([0, 1, 2], dtype=np.uint64), np.zeros(3, dtype=np.uint64))
    i8 = np.array([100, -100, 27], dtype=np.int8)
    with pytest.raises(OverflowError, match="index 0"):
        tally.add(i8, i8)
    b = np.array([True, False, True, False])
    r = tally.add(b, np.array([True, True, False, False]))
    assert r.dtype == np.bool_ and r.tolist() == np.add(b, [True, True, False, False]).tolist()
    with pytest.raises(ValueError, match="bool"):
        tally.scale(2, b)
    with pytest.raises(ValueError, match="bool"):
        tally.axpy(True, b, b.copy())


def test_zero_ties_follow_c_order_in_every_layout():
    # -0.0 and +0.0 tie: min / max give the first of them in C order with its sign (the element
    # argmin / argmax name), also when the array is read in memory order (transposes, Fortran
    # order, tuple axes whose strides are not in C order) and for minmax / nan forms.
    def sign(v):
        return math.copysign(1.0, float(v))

    for dt in (np.float64, np.float32, np.float16):
        c = np.array([[1.0, 0.0], [-0.0, 1.0]], dtype=dt)
        for x in (c.T, np.asfortranarray(c), -c.T):
            ref = np.ascontiguousarray(x).ravel()
            lo, hi = tally.minmax(x)
            want_lo, want_hi = ref[int(np.argmin(ref))], ref[int(np.argmax(ref))]
            assert sign(lo) == sign(want_lo) and sign(hi) == sign(want_hi), (dt, x)
            assert sign(tally.min(x)) == sign(want_lo) and sign(tally.max(x)) == sign(want_hi)
            assert sign(tally.nanmin(x)) == sign(want_lo) and sign(tally.nanminmax(x)[1]) == sign(want_hi)
            assert float(lo) == float(want_lo) and float(hi) == float(want_hi)
        z = np.zeros((3, 2, 2), dtype=dt)
        z[0, 0, 0], z[0, 0, 1], z[1, 1, 0] = 1, -0.0, -0.0
        for w in (np.asfortranarray(z), z.transpose(0, 2, 1)):
            for axes in ((1, 2), (0, 1, 2)):
                got = tally.min(w, axis=axes)
                ref = np.ascontiguousarray(w)
                flat = ref.reshape(ref.shape[0], -1) if axes == (1, 2) else ref.reshape(1, -1)
                want = flat[np.arange(flat.shape[0]), np.argmin(flat, axis=1)]
                assert [sign(v) for v in np.ravel(got)] == [sign(v) for v in want], (dt, axes, w.strides)
                lo, hi = tally.minmax(w, axis=axes)
                assert [sign(v) for v in np.ravel(lo)] == [sign(v) for v in want]


def test_keepdims_must_be_a_bool():
    # NumPy's rule (operator.index): bools and integers; None, strings and floats are a TypeError
    # naming the function, for every reduction that takes keepdims
    x = np.arange(6.0).reshape(2, 3)
    fns = (tally.sum, tally.mean, tally.min, tally.nanmax, tally.minmax, tally.argmax, tally.var, tally.std, tally.norm)
    for f in fns:
        for bad in (None, "yes", 1.0, []):
            with pytest.raises(TypeError, match=f"tally.{f.__name__}: keepdims must be a bool"):
                f(x, axis=0, keepdims=bad)
            with pytest.raises(TypeError, match="keepdims"):
                f(x, keepdims=bad)
        r = f(x, axis=0, keepdims=1)
        assert np.shape(r[0] if isinstance(r, tuple) else r) == (1, 3)
    # a 0-d NumPy input keeps no axis: a scalar, as NumPy returns
    z = np.array(2.5)
    for f in (tally.sum, tally.min, tally.max, tally.mean):
        r = f(z, keepdims=True)
        assert np.ndim(r) == 0 and not isinstance(r, np.ndarray) and r == 2.5, f.__name__


def test_zero_d_arrays_take_axis_0_or_minus_1_where_numpy_does():
    # NumPy's ufunc-style reductions take the int axis 0 or -1 on a 0-d array as the whole
    # array (numpy.sum(numpy.array(5.0), axis=0) is 5.0); mean, var, std and norm refuse it
    # (AxisError), as does any other axis, a tuple (0,) included
    for z in (np.array(5.0), np.array(-3, dtype=np.int8), np.array(-0.0), np.array(np.nan)):
        for name in ("sum", "min", "max", "nanmin", "nanmax", "argmin", "argmax"):
            for ax in (0, -1):
                got, whole = getattr(tally, name)(z, axis=ax), getattr(tally, name)(z)
                assert np.ndim(got) == 0, (name, z, ax)
                # the whole-array result, bits and all (a sum of -0.0 alone is -0.0 here, the
                # exact sum's sign; NumPy's axis=0 gives +0.0), and NumPy's value
                assert np.array_equal(got, whole, equal_nan=True) and np.signbit(got) == np.signbit(whole), (name, z, ax, got)
                assert np.array_equal(got, getattr(np, name)(z, axis=ax), equal_nan=True), (name, z, ax, got)
            with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else ValueError):
                getattr(tally, name)(z, axis=1)
            if name not in ("argmin", "argmax"):  # (those take one int: a tuple is a TypeError)
                with pytest.raises(ValueError, match="out of bounds"):
                    getattr(tally, name)(z, axis=(0,))
        lo, hi = tally.minmax(z, axis=0)
        assert np.array_equal(lo, np.min(z), equal_nan=True) and np.array_equal(hi, np.max(z), equal_nan=True)
        for f in (tally.mean, tally.var, tally.std, tally.norm):
            for ax in (0, -1):
                with pytest.raises(ValueError, match="out of bounds"):
                    f(z, axis=ax)
    z = np.array(2.5)
    assert tally.nanargmax(z, axis=0) == 0 and tally.nanargmin(z, axis=-1) == 0
    with pytest.raises(TypeError, match="axis must be"):
        tally.sum(z, axis=True)
