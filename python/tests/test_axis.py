"""axis= of tally.sum, mean, min, max, argmin, argmax and the nan forms on NumPy arrays (the
CPU backend), and strided 1-D views read in place: every output against an exact reference
(math.fsum, fractions.Fraction per row / column) or NumPy, on C and Fortran order, transposed,
sliced, negative-stride, broadcast and padded views; length-1 and empty axes; NaN rules;
int32 partial sums past 2^31; result dtypes and libraries; the errors. Hypothesis property
tests draw random 2-D shapes, strides and axes."""
import math
from fractions import Fraction

import numpy as np
import pytest

tally = pytest.importorskip("tally")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from exact_ref import fraction_sum, round_f32, round_f64  # noqa: E402
from tally import _arrays, _axis  # noqa: E402

AXES = (0, 1, -1, -2)


def slices(x, axis):
    """The 1-D slices (columns for axis 0, rows for axis 1) of a 2-D array, in output order."""
    ax = axis % 2
    return [x[:, j] for j in range(x.shape[1])] if ax == 0 else [x[i, :] for i in range(x.shape[0])]


def views(base):
    """Layouts of one 2-D array (name, view): all read in place by the axis reductions."""
    big = np.zeros((base.shape[0] + 3, 2 * base.shape[1] + 5), dtype=base.dtype)
    big[1:1 + base.shape[0], 2:2 + 2 * base.shape[1]:2] = base
    return [
        ("C", base),
        ("F", np.asfortranarray(base)),
        ("T", np.ascontiguousarray(base.T).T),
        ("sliced", np.repeat(np.repeat(base, 2, axis=0), 3, axis=1)[::2, 1::3]),
        ("negative rows", np.ascontiguousarray(base[::-1])[::-1]),
        ("negative both", np.ascontiguousarray(base[::-1, ::-1])[::-1, ::-1]),
        ("F, negative cols", np.asfortranarray(base[:, ::-1])[:, ::-1]),
        ("padded", big[1:1 + base.shape[0], 2:2 + 2 * base.shape[1]:2]),
    ]


def wide(rng, shape, dtype=np.float64):
    """Values over a wide exponent range with cancellation (numpy's pairwise sum errs here)."""
    x = rng.standard_normal(shape) * np.exp2(rng.integers(-40, 40, shape))
    flat = x.reshape(-1)
    flat[::7] = 1e16 if dtype == np.float64 else 1e8
    flat[3::7] = -1e16 if dtype == np.float64 else -1e8
    return x.astype(dtype)


def test_layouts_are_read_in_place():
    base = wide(np.random.default_rng(1), (13, 17))
    for name, v in views(base):
        for axes in ((0,), (1,)):
            p = _axis.plan(v, axes, "sum", _axis._as_stored)
            assert p.arg.view is v and not p.copied, name  # the view itself goes to the C++ layer: no copy
    x = np.arange(100.0)
    for v in (x[::3], x[::-1], x[90:5:-7], np.broadcast_to(np.float64(2.5), (9,))):
        a = _arrays.prepare(v, "sum", strided_ok=lambda cuda, name: True)
        assert a.strided and a.flat is v
    # every element type goes to the C++ layer as it is (no copy here)
    for dt in (np.float16, np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64, np.bool_):
        v = np.ones((4, 6), dtype=dt)[::-1, ::2]
        p = _axis.plan(v, (0,), "sum", _axis._as_stored)
        assert p.arg.view is v and not p.copied and p.arg.dtype == np.dtype(dt).name


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sum_along_each_axis_is_correctly_rounded(dtype):
    rng = np.random.default_rng(2)
    for shape in ((13, 17), (1, 40), (40, 1), (1, 1), (3, 1000)):
        base = wide(rng, shape, dtype)
        for name, v in views(base):
            for axis in AXES:
                s = tally.sum(v, axis=axis)
                assert isinstance(s, np.ndarray) and s.dtype == dtype and s.shape == (v.shape[1 - axis % 2],)
                refs = [fraction_sum(c) for c in slices(base, axis)]
                expect = [round_f64(q) if dtype == np.float64 else round_f32(q) for q in refs]
                assert s.tolist() == expect, (name, shape, axis)
                if dtype == np.float64:
                    assert s.tolist() == [math.fsum(c) for c in slices(base, axis)]
                else:  # float32 data into a correctly rounded float64 sum
                    s64 = tally.sum(v, axis=axis, dtype=np.float64)
                    assert s64.dtype == np.float64 and s64.tolist() == [round_f64(q) for q in refs]
                # fast mode: a float64 tree per output, within (len - 1) 2^-53 sum|x| (+ the float32 rounding)
                f = tally.sum(v, axis=axis, accuracy="fast", dtype=np.float64)
                for got, c in zip(f.tolist(), slices(base, axis)):
                    c64 = c.astype(np.float64)
                    bound = max(len(c) - 1, 0) * 2.0**-53 * float(np.abs(c64).sum())
                    assert abs(got - math.fsum(c64)) <= bound


def test_sum_float64_data_into_float32_is_rounded_once():
    rng = np.random.default_rng(3)
    base = wide(rng, (9, 31))
    for axis in AXES:
        s = tally.sum(base.T, axis=axis, dtype=np.float32)
        assert s.dtype == np.float32
        assert s.tolist() == [round_f32(fraction_sum(c)) for c in slices(base.T, axis)]


def test_mean_along_each_axis_is_correctly_rounded():
    rng = np.random.default_rng(4)
    for dtype in (np.float64, np.float32):
        base = wide(rng, (11, 23), dtype)
        for name, v in views(base):
            for axis in AXES:
                m = tally.mean(v, axis=axis)
                assert m.dtype == dtype
                cols = slices(base, axis)
                rnd = round_f64 if dtype == np.float64 else round_f32
                assert m.tolist() == [rnd(fraction_sum(c) / len(c)) for c in cols], (name, axis)
                m64 = tally.mean(v, axis=axis, dtype=np.float64)
                assert m64.dtype == np.float64 and m64.tolist() == [round_f64(fraction_sum(c) / len(c)) for c in cols]
    ints = rng.integers(-2**62, 2**62, (7, 5), dtype=np.int64)
    for axis in AXES:
        m = tally.mean(ints.T, axis=axis)
        assert m.dtype == np.float64
        assert m.tolist() == [float(Fraction(sum(int(i) for i in c), len(c))) for c in slices(ints.T, axis)]
        assert tally.mean(ints, axis=axis, dtype=np.float32).dtype == np.float32
    with pytest.raises(TypeError, match="float32 or float64"):
        tally.mean(ints, axis=0, dtype=np.int64)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64])
def test_extremes_along_each_axis_match_numpy(dtype):
    rng = np.random.default_rng(5)
    base = rng.integers(-5, 5, (19, 14)).astype(dtype)  # many ties: the first index must win
    if np.issubdtype(dtype, np.floating):
        base[3, 4] = base[7, 4] = np.nan
        base[11, :] = np.nan  # a row of only NaN
        base[:, 9] = np.nan  # a column of only NaN
        base[0, 0] = -0.0
    for name, v in views(base):
        for axis in AXES:
            for f in ("min", "max", "argmin", "argmax"):
                got, want = getattr(tally, f)(v, axis=axis), getattr(np, f)(v, axis=axis)
                assert got.dtype == (np.int64 if f.startswith("arg") else dtype)
                np.testing.assert_array_equal(got, want, err_msg=f"{name} {f} axis={axis}")
            for f in ("nanmin", "nanmax"):
                with _quiet():
                    want = getattr(np, f)(v, axis=axis)
                np.testing.assert_array_equal(getattr(tally, f)(v, axis=axis), want)
            for f in ("nanargmin", "nanargmax"):
                all_nan = np.issubdtype(dtype, np.floating)
                if all_nan:
                    with pytest.raises(ValueError, match="holds only NaN"):
                        getattr(tally, f)(v, axis=axis)
                    with pytest.raises(ValueError):
                        getattr(np, f)(v, axis=axis)
                else:
                    np.testing.assert_array_equal(getattr(tally, f)(v, axis=axis), getattr(np, f)(v, axis=axis))
    if np.issubdtype(dtype, np.floating):  # without the all-NaN row and column: NumPy's indices
        ok = np.delete(np.delete(base, 11, axis=0), 9, axis=1)
        for axis in AXES:
            for f in ("nanargmin", "nanargmax"):
                np.testing.assert_array_equal(getattr(tally, f)(ok.T, axis=axis), getattr(np, f)(ok.T, axis=axis))
        # -0.0 and 0.0 compare equal: the first index wins, and min keeps the element's sign
        z = np.array([[0.0, -0.0], [-0.0, 0.0]], dtype=dtype)
        assert tally.argmin(z, axis=1).tolist() == [0, 0]
        assert [math.copysign(1, v) for v in tally.min(z, axis=1).tolist()] == [1, -1]


class _quiet:
    def __enter__(self):
        import warnings
        self._c = warnings.catch_warnings()
        self._c.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *a):
        return self._c.__exit__(*a)


def test_empty_axes():
    for shape in ((0, 5), (5, 0), (0, 0)):
        x = np.zeros(shape)
        xi = np.zeros(shape, dtype=np.int32)
        for axis in AXES:
            n = shape[1 - axis % 2]
            length = shape[axis % 2]
            s = tally.sum(x, axis=axis)
            assert s.dtype == np.float64 and s.tolist() == [0.0] * n
            assert all(math.copysign(1, v) == 1 for v in s.tolist())  # +0
            assert tally.sum(xi, axis=axis).dtype == np.int64
            assert tally.sum(xi, axis=axis).tolist() == np.sum(xi, axis=axis).tolist()
            m = tally.mean(x, axis=axis)
            assert m.shape == (n,) and all(math.isnan(v) for v in m.tolist())
            if length == 0 and n > 0:
                assert tally.min(x, axis=axis).tolist() == [math.inf] * n  # NumPy raises here
                assert tally.max(x, axis=axis).tolist() == [-math.inf] * n
                assert tally.min(xi, axis=axis).tolist() == [2**31 - 1] * n
                for f in ("argmin", "argmax", "nanargmin", "nanargmax"):
                    with pytest.raises(ValueError, match="length 0"):
                        getattr(tally, f)(x, axis=axis)
                    with pytest.raises(ValueError):
                        getattr(np, f)(x, axis=axis)
            else:
                for f in ("min", "argmin", "nanargmax"):
                    r = getattr(tally, f)(x, axis=axis)
                    assert r.shape == (0,) and r.dtype == (np.float64 if f == "min" else np.int64)


def test_integer_sums_past_two_to_the_31_and_overflow():
    x = np.full((37, 5), 2**31 - 1, dtype=np.int32)
    x[:, 1] = -2**31
    for v in (x, np.asfortranarray(x), x[::-1]):
        s = tally.sum(v, axis=0)
        assert s.dtype == np.int64 and s.tolist() == [37 * (2**31 - 1), -37 * 2**31, 37 * (2**31 - 1),
                                                      37 * (2**31 - 1), 37 * (2**31 - 1)]
        assert tally.sum(v.T, axis=1).tolist() == s.tolist()
        assert tally.mean(v, axis=0).tolist() == [2**31 - 1, -2**31, 2**31 - 1, 2**31 - 1, 2**31 - 1]
    # int64: partial sums may leave int64 and come back; a total outside int64 is an OverflowError
    y = np.array([[2**62, 2**62, -2**62], [2**62, -2**62, 2**62]], dtype=np.int64)
    with pytest.raises(OverflowError, match="output 0"):  # 2^63 in column 0
        tally.sum(y, axis=0)
    assert tally.sum(y[:, 1:], axis=0).tolist() == [0, 0]
    z = np.array([[2**62, 2**62, -2**62]], dtype=np.int64)  # 2^63 on the way, 2^62 at the end
    assert tally.sum(z, axis=1).tolist() == [2**62]
    with pytest.raises(OverflowError):
        tally.sum(np.array([[2**62, 2**62], [2**62, 2**62]], dtype=np.int64), axis=1)


def test_other_element_types_are_exact():
    rng = np.random.default_rng(6)
    for dtype, sum_dtype, mean_dtype in ((np.float16, np.float32, np.float32), (np.int8, np.int64, np.float64),
                                         (np.int16, np.int64, np.float64), (np.uint8, np.uint64, np.float64),
                                         (np.uint16, np.uint64, np.float64), (np.uint32, np.uint64, np.float64),
                                         (np.uint64, np.uint64, np.float64),
                                         (np.bool_, np.int64, np.float64)):
        if dtype == np.float16:
            base = (rng.standard_normal((9, 12)) * 100).astype(dtype)
            base[2, 3] = np.nan
        elif dtype == np.bool_:
            base = rng.integers(0, 2, (9, 12)).astype(dtype)
        else:
            info = np.iinfo(dtype)
            if dtype == np.uint64:  # sums of up to 12 past 2^63, below 2^64
                base = rng.integers(0, 2**64 // 12, (9, 12), dtype=np.uint64)
                base[::3, ::2] = 2**63 // 5 + base[::3, ::2] // 3
            else:
                base = rng.integers(info.min, int(info.max) + 1, (9, 12), dtype=np.int64).astype(dtype)
        for v in (base, base.T, base[::-2, 1::2]):
            for axis in AXES:
                s = tally.sum(v, axis=axis)
                assert s.dtype == sum_dtype
                if dtype == np.float16:
                    expect = [math.nan if np.isnan(c).any() else round_f32(fraction_sum(c)) for c in slices(v, axis)]
                    np.testing.assert_array_equal(s, np.array(expect, dtype=np.float32))
                else:
                    assert s.tolist() == [sum(int(i) for i in c) for c in slices(v, axis)]
                m = tally.mean(v, axis=axis)
                assert m.dtype == mean_dtype
                rnd = round_f32 if mean_dtype == np.float32 else round_f64
                # integers as Python ints: float(v) would round uint64 values above 2^53
                exact = (lambda c: fraction_sum(c)) if dtype == np.float16 else (lambda c: Fraction(sum(int(i) for i in c)))
                expect = [rnd(exact(c) / len(c)) if not np.isnan(c.astype(np.float64)).any() else math.nan
                          for c in slices(v, axis)]
                np.testing.assert_array_equal(m, np.array(expect, dtype=mean_dtype))
                for f in ("min", "max", "argmin", "argmax"):
                    got, want = getattr(tally, f)(v, axis=axis), getattr(np, f)(v, axis=axis)
                    assert got.dtype == want.dtype
                    np.testing.assert_array_equal(got, want)
    # uint64: exact past 2^63 (uint64 results), an output past 2^64 - 1 is an OverflowError naming it
    u = np.array([[2**64 - 1, 0, 2**63], [0, 1, 2**63 - 1]], dtype=np.uint64)
    assert tally.sum(u, axis=0).tolist() == [2**64 - 1, 1, 2**64 - 1]
    assert tally.max(u, axis=1).tolist() == [2**64 - 1, 2**63 - 1] and tally.argmin(u, axis=1).tolist() == [1, 0]
    assert tally.mean(u, axis=0).tolist() == [round_f64(Fraction(2**64 - 1, 2)), 0.5, round_f64(Fraction(2**64 - 1, 2))]
    with pytest.raises(OverflowError, match="uint64"):
        tally.sum(u, axis=1)
    # empty slices: the type's own limits (min: its highest; max: its lowest; bool: True / False)
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64, np.bool_, np.float16):
        e = np.zeros((3, 0), dtype=dt)
        hi, lo = ((True, False) if dt == np.bool_ else (np.inf, -np.inf) if dt == np.float16
                  else (np.iinfo(dt).max, np.iinfo(dt).min))
        mn, mx = tally.min(e, axis=1), tally.max(e, axis=1)
        assert mn.dtype == dt and mx.dtype == dt and mn.tolist() == [hi] * 3 and mx.tolist() == [lo] * 3


def test_one_dimensional_and_scalar_inputs():
    x = wide(np.random.default_rng(7), (101,))
    for axis in (0, -1):
        assert tally.sum(x, axis=axis) == math.fsum(x)
        assert tally.argmax(x, axis=axis) == int(np.argmax(x))
        assert tally.mean(x, axis=axis) == tally.mean(x)
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError):
        tally.sum(x, axis=1)
    # a 0-d input (a NumPy scalar too): the int axis 0 or -1 is the whole array for the
    # ufunc-style reductions, as NumPy; any other axis, and mean's axis 0, are out of bounds
    assert tally.min(np.float64(3.0), axis=0) == 3.0 == np.min(np.float64(3.0), axis=0)
    with pytest.raises(ValueError, match="out of bounds"):
        tally.min(np.float64(3.0), axis=1)
    with pytest.raises(ValueError, match="out of bounds"):
        tally.mean(np.float64(3.0), axis=0)
    with pytest.raises(IndexError):
        tally.argmin(np.ones((2, 2)), axis=-3)
    # lists give NumPy arrays
    r = tally.sum([[1, 2, 3], [4, 5, 6]], axis=0)
    assert isinstance(r, np.ndarray) and r.dtype == np.int64 and r.tolist() == [5, 7, 9]


def test_argument_errors():
    x = np.ones((3, 4))
    with pytest.raises(TypeError, match="axis must be an integer"):
        tally.sum(x, axis=True)
    with pytest.raises(TypeError, match="axis must be an integer"):
        tally.max(x, axis=0.0)
    with pytest.raises(TypeError, match="axis must be an integer, a tuple of integers or None, not list"):
        tally.mean(x, axis=[0, 1])  # as numpy: a list is not an axis
    with pytest.raises(TypeError, match="axis must be one integer or None, not the tuple"):
        tally.argmax(np.ones((2, 3, 4)), axis=(0, 1))
    with pytest.raises(ValueError, match="accuracy"):
        tally.sum(x, axis=0, accuracy="sloppy")
    with pytest.raises(TypeError, match="float32 or float64"):
        tally.sum(x, axis=0, dtype=np.int64)
    with pytest.raises(TypeError, match="unsupported dtype"):
        tally.sum(np.ones((2, 2), dtype=np.complex128), axis=0)
    assert tally.sum(np.arange(6, dtype=np.int32).reshape(2, 3), axis=1, dtype=np.int64).tolist() == [3, 12]

    class DLPackOnly:
        def __init__(self, a):
            self._a, self.shape, self.dtype = a, a.shape, a.dtype

        def __dlpack__(self, stream=None, **kw):
            return self._a.__dlpack__()

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    with pytest.raises(TypeError, match="not a NumPy, CuPy or torch array"):
        tally.sum(DLPackOnly(x), axis=0)


def test_byte_order_and_odd_strides_are_copied_and_right():
    x = wide(np.random.default_rng(8), (6, 7))
    big = x.astype(">f8")
    for axis in AXES:
        assert tally.sum(big, axis=axis).tolist() == [math.fsum(c) for c in slices(x, axis)]
    rec = np.zeros((6, 7), dtype=[("a", np.int8), ("v", np.float64)])  # byte strides of 9
    rec["v"] = x
    assert rec["v"].strides[1] == 9
    for axis in AXES:
        assert tally.sum(rec["v"], axis=axis).tolist() == [math.fsum(c) for c in slices(x, axis)]
        np.testing.assert_array_equal(tally.argmin(rec["v"], axis=axis), np.argmin(x, axis=axis))


def test_strided_1d_views_in_place():
    rng = np.random.default_rng(9)
    for dtype in (np.float64, np.float32, np.int32, np.int64):
        x = (wide(rng, (1000,)) if np.issubdtype(dtype, np.floating) else rng.integers(-2**30, 2**30, 1000)).astype(dtype)
        for v in (x[::3], x[::-1], x[990:5:-7], x[1::2][::5], np.broadcast_to(x[4], (33,))):
            assert _arrays.prepare(v, "sum", strided_ok=lambda c, n: True).strided
            q = fraction_sum(v)
            if dtype == np.float64:
                assert tally.sum(v) == math.fsum(v)
                assert tally.mean(v) == round_f64(q / len(v))
            elif dtype == np.float32:
                assert tally.sum(v) == round_f32(q) and tally.sum(v, dtype=np.float64) == round_f64(q)
                assert tally.mean(v) == round_f32(q / len(v))
            else:
                assert tally.sum(v) == int(q) and tally.mean(v) == round_f64(q / len(v))
            for f in ("min", "max", "argmin", "argmax"):
                assert getattr(tally, f)(v) == getattr(np, f)(v), f
    y = np.arange(20.0)
    y[[4, 10]] = np.nan
    v = y[::-2]  # 19, 17, ..., 1: no NaN; y[::2] holds both
    assert tally.nanargmax(y[::2]) == np.nanargmax(y[::2]) and tally.argmax(y[::2]) == 2
    assert math.isnan(tally.max(y[::2])) and tally.nanmax(y[::2]) == 18.0 and tally.max(v) == 19.0
    assert math.isnan(tally.mean(y[::2])) and tally.mean(v) == 10.0
    with pytest.raises(ValueError, match="empty"):
        tally.argmin(np.arange(10.0)[5:5:2])
    with pytest.raises(OverflowError):
        tally.sum(np.array([2**62, 0, 2**62, 0], dtype=np.int64)[::2])


# --- property tests: random 2-D shapes, strides and axes against math.fsum --------------------

finite64 = st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e300, max_value=1e300)
finite32 = st.floats(allow_nan=False, allow_infinity=False, width=32)
layouts2d = st.tuples(st.integers(0, 2), st.sampled_from([1, 2, 3, -1, -2]),   # rows: offset, step
                      st.integers(0, 2), st.sampled_from([1, 2, 3, -1, -3]),   # cols: offset, step
                      st.booleans(), st.sampled_from(AXES))                    # transpose, axis


def view2d(x, layout):
    r0, rs, c0, cs, transpose, axis = layout
    v = x[r0::rs, c0::cs] if rs > 0 and cs > 0 else x[::rs, ::cs][r0:, c0:]
    return (v.T if transpose else v), axis


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(0, 14), st.integers(0, 14)), elements=finite64), layouts2d)
def test_property_float64_axis_sum_is_fsum(x, layout):
    v, axis = view2d(x, layout)
    s = tally.sum(v, axis=axis)
    assert s.tolist() == [math.fsum(c) for c in slices(v, axis)]
    m = tally.mean(v, axis=axis)
    for got, c in zip(m.tolist(), slices(v, axis)):
        assert (math.isnan(got) and len(c) == 0) or got == round_f64(fraction_sum(c) / len(c))


@settings(max_examples=100, deadline=None)
@given(hnp.arrays(np.float32, st.tuples(st.integers(0, 12), st.integers(0, 12)), elements=finite32), layouts2d)
def test_property_float32_axis_sum_is_fraction(x, layout):
    v, axis = view2d(x, layout)
    refs = [fraction_sum(c) for c in slices(v, axis)]
    assert tally.sum(v, axis=axis).tolist() == [round_f32(q) for q in refs]
    assert tally.sum(v, axis=axis, dtype=np.float64).tolist() == [math.fsum(c.astype(np.float64)) for c in slices(v, axis)]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([np.int32, np.int64, np.float64]).flatmap(
    lambda t: hnp.arrays(t, st.tuples(st.integers(0, 10), st.integers(0, 10)),
                         elements=st.integers(-2**31, 2**31 - 1) if t != np.float64 else
                         st.floats(allow_infinity=False, width=64))), layouts2d)
def test_property_extremes_and_integer_sums(x, layout):
    v, axis = view2d(x, layout)
    ax = axis % 2
    if v.dtype != np.float64:
        exact = [sum(int(i) for i in c) for c in slices(v, axis)]
        if all(-2**63 <= e < 2**63 for e in exact):
            assert tally.sum(v, axis=axis).tolist() == exact
    np.testing.assert_array_equal(tally.max(v, axis=axis), np.max(v, axis=axis) if v.shape[ax] else
                                  np.full(v.shape[1 - ax], -np.inf if v.dtype == np.float64 else np.iinfo(v.dtype).min,
                                          dtype=v.dtype))
    if v.shape[ax] == 0:
        if v.shape[1 - ax] > 0:
            with pytest.raises(ValueError, match="length 0"):
                tally.argmin(v, axis=axis)
        else:
            assert tally.argmin(v, axis=axis).shape == (0,)
    else:
        np.testing.assert_array_equal(tally.argmin(v, axis=axis), np.argmin(v, axis=axis))
        np.testing.assert_array_equal(tally.argmax(v, axis=axis), np.argmax(v, axis=axis))


@pytest.mark.parametrize("dt", ["int8", "int16", "uint8", "uint16", "uint32", "int32", "int64", "bool"])
def test_empty_slices_of_narrow_types_give_their_own_limits(dt):
    # min/max along an empty axis: the type's highest / lowest value (bool: True / False), as
    # the whole-array forms, not a wider type's limits wrapped into the narrow one
    z = np.zeros((3, 0), dt)
    hi, lo = (True, False) if dt == "bool" else (np.iinfo(dt).max, np.iinfo(dt).min)
    mn, mx = tally.min(z, axis=1), tally.max(z, axis=1)
    assert mn.dtype == np.dtype(dt) and mx.dtype == np.dtype(dt)
    assert mn.tolist() == [hi] * 3 and mx.tolist() == [lo] * 3
    assert tally.min(np.zeros(0, dt)) == hi and tally.max(np.zeros(0, dt)) == lo


def test_fast_variance_of_overflowing_finite_data():
    x = np.array([1e308, -1e308])
    assert tally.var(x, accuracy="fast") == math.inf == tally.var(x)
    assert tally.std(x, accuracy="fast") == 1e308 == tally.std(x)
    assert tally.var(x[None], axis=1, accuracy="fast").tolist() == [math.inf]


# ---- numpy.matrix input: axis results are matrices, as NumPy returns them -----------------------

MATRIX_FUNCS = ["sum", "mean", "min", "max", "nanmin", "nanmax", "var", "std", "argmin", "argmax", "nanargmin",
                "nanargmax"]


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.parametrize("fn", MATRIX_FUNCS)
@pytest.mark.parametrize("axis", [0, 1, -2, (0,), (1,), (0, 1), None])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_matrix_input_gives_a_matrix_as_numpy(fn, axis, dtype):
    m = np.matrix([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8]], dtype=dtype)
    if fn.startswith(("arg", "nanarg")) and isinstance(axis, tuple):
        pytest.skip("argmin/argmax take one axis (a tuple is a TypeError, as NumPy)")
    if fn.startswith("nan") and dtype == np.int32:
        pytest.skip("(the nan forms of integer data are the plain ones)")
    # (numpy.matrix.argmin refuses negative axes, "unsupported axis": NumPy's answer for -2 is axis 0's)
    want = getattr(np, fn)(m, axis=axis % 2 if isinstance(axis, int) else axis)
    got = getattr(tally, fn)(m, axis=axis)
    if axis is None:  # the whole array: a scalar, as NumPy's
        assert not isinstance(got, np.ndarray)
        assert got == pytest.approx(float(want), rel=1e-15)
        return
    assert type(got) is np.matrix, type(got)
    assert got.shape == want.shape == ({0: (1, 4), 1: (3, 1)}.get(np.atleast_1d(axis)[0] % 2) if len(
        np.atleast_1d(axis)) == 1 else (1, 1))
    assert got.dtype == want.dtype
    if fn in ("mean", "var", "std"):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-15)
    else:
        assert got.tolist() == want.tolist()


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_matrix_input_more_cases():
    m = np.matrix([[3.0, 1.0, 4.0], [1.0, 5.0, 9.0]])
    # axis=-1 is axis 1 (numpy.matrix.argmin refuses -1 with "unsupported axis"; tally does not)
    r = tally.argmax(m, axis=-1)
    assert type(r) is np.matrix and r.tolist() == [[2], [2]] == np.argmax(m, axis=1).tolist()
    # keepdims: the same matrix (NumPy's matrix.argmin takes it; matrix.sum refuses the keyword)
    k = tally.argmin(m, axis=0, keepdims=True)
    assert type(k) is np.matrix and k.tolist() == np.argmin(m, axis=0, keepdims=True).tolist() == [[1, 0, 0]]
    s = tally.sum(m, keepdims=True)
    assert type(s) is np.matrix and s.tolist() == [[23.0]]
    assert tally.sum(m) == 23.0 and not isinstance(tally.sum(m), np.ndarray)
    # exact per output, as for arrays
    w = np.matrix([[1e16, 1.0], [1.0, 1.0], [-1e16, 1.0]])
    assert tally.sum(w, axis=0).tolist() == [[1.0, 3.0]]
    # out= takes the matrix's shape
    o = np.empty((1, 3))
    assert tally.max(m, axis=0, out=o) is o and o.tolist() == [[3.0, 5.0, 9.0]]
    with pytest.raises(ValueError, match=r"out has shape \(3,\), but the result has shape \(1, 3\)"):
        tally.max(m, axis=0, out=np.empty(3))
    # numpy.linalg.norm of a matrix along an axis is a plain 1-D array: so is tally.norm's
    n = tally.norm(m, axis=0)
    assert type(n) is np.ndarray and n.shape == (3,)
    np.testing.assert_allclose(n, np.linalg.norm(m, axis=0), rtol=1e-15)
    # a matrix subclass of ndarray is never a problem for the whole-array path
    assert tally.argmin(m) == 1 and tally.var(m) == pytest.approx(float(np.var(m)), rel=1e-15)
