"""axis= on N-D arrays (up to 4-D), tuple axes and keepdims for tally.sum, mean, min, max,
argmin, argmax, the nan forms, norm, var and std on NumPy arrays (the CPU backend): every
output against an exact reference bit for bit (math.fsum, fractions.Fraction rounded
correctly) or against NumPy (shapes, extremes, indices), on random shapes, strides,
transposes and axes (hypothesis); that reduced axes which merge into one strided extent are
read in place and the others copied once; that an exact sum over several axes is rounded
once; and the errors (AxisError, duplicate axes, tuple axes for argmin/argmax, matrix norms)."""
import math
from fractions import Fraction

import numpy as np
import pytest

tally = pytest.importorskip("tally")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

from exact_ref import fraction_sum, fraction_var, round_f32, round_f64, round_sqrt_f64  # noqa: E402
from tally import _axis  # noqa: E402

AxisError = np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError


def bits(a) -> list:
    """The bit patterns of a float array (so -0.0 != 0.0 and NaN == NaN of the same payload)."""
    a = np.ascontiguousarray(a)
    return a.view(np.int64 if a.dtype == np.float64 else np.int32).reshape(-1).tolist()


def norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    t = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % ndim for a in t)


def out_slices(x, axis):
    """The reduced elements of every output, in output (C) order: x with the reduced axes moved
    last, as rows."""
    axes = norm_axes(axis, x.ndim)
    kept = [i for i in range(x.ndim) if i not in axes]
    y = np.transpose(x, kept + sorted(axes))
    n = math.prod(x.shape[i] for i in axes)
    return list(np.ascontiguousarray(y).reshape(math.prod(x.shape[i] for i in kept), n))


def exact_sum_f64(c) -> float:
    """The correctly rounded float64 sum (math.fsum), -0.0 for a sum of only negative zeros."""
    s = math.fsum(c)
    if s == 0 and len(c) > 0 and all(v == 0 and math.copysign(1, v) < 0 for v in c):
        return -0.0
    return s


def wide(rng, shape, dtype=np.float64):
    """Values over a wide exponent range with cancellation."""
    x = rng.standard_normal(shape) * np.exp2(rng.integers(-40, 40, shape))
    flat = x.reshape(-1)
    flat[::7] = 1e16 if dtype == np.float64 else 1e8
    flat[3::7] = -1e16 if dtype == np.float64 else -1e8
    return x.astype(dtype)


def layouts(base, rng):
    """(name, view) pairs over the values of `base` (the same logical array): C order, Fortran
    order, a random axis permutation read back, sliced with steps and negative steps, padded."""
    nd = base.ndim
    out = [("C", base), ("F", np.asfortranarray(base))]
    perm = list(rng.permutation(nd))
    out.append(("permuted", np.transpose(np.ascontiguousarray(np.transpose(base, perm)), np.argsort(perm))))
    steps = [int(rng.choice([1, 2, -1, -2, 3])) for _ in range(nd)]
    big = np.zeros(tuple(abs(s) * n + 1 for s, n in zip(steps, base.shape)), dtype=base.dtype)
    idx = tuple(slice(1, 1 + abs(s) * n, abs(s)) if s > 0 else slice(abs(s) * n, 0, s)
                for s, n in zip(steps, base.shape))
    view = big[idx]
    if view.shape == base.shape:
        view[...] = base
        out.append(("strided " + str(steps), view))
    return out


AXES_4D = [0, 1, 2, 3, -1, -3, (0, 1), (1, 2), (2, 3), (0, 2), (1, 3), (0, 3), (3, 0), (0, 1, 2), (1, 2, 3),
           (0, 1, 3), (0, 2, 3), (0, 1, 2, 3), ()]


def test_layout_is_read_in_place_when_the_reduced_axes_merge():
    x = np.zeros((3, 4, 5, 6))
    for axes, copied in (((0,), False), ((3,), False), ((1, 2), False), ((2, 3), False), ((1, 2, 3), False),
                         ((0, 1, 2, 3), False), ((0, 2), True), ((1, 3), True), ((0, 3), True)):
        p = _axis.plan(x, axes, "sum", _axis._as_stored)
        assert p.copied == copied, axes
        if not copied:
            assert p.arg.view is x
    # merged in any order, with any sign and broadcast strides
    assert not _axis.plan(x[::-1, ::-2], (0, 1), "sum", _axis._as_stored).copied
    assert not _axis.plan(np.transpose(x, (2, 0, 3, 1)), (1, 3), "sum", _axis._as_stored).copied
    b = np.broadcast_to(np.arange(5.0)[:, None, None], (5, 7, 9))
    assert not _axis.plan(b, (1, 2), "sum", _axis._as_stored).copied  # both strides 0: one extent
    # norm / var / std need each output's elements contiguous
    assert not _axis.plan(x, (3,), "var", lambda n: None, contiguous=True).copied
    assert not _axis.plan(x, (2, 3), "var", lambda n: None, contiguous=True).copied
    assert _axis.plan(x, (0,), "var", lambda n: None, contiguous=True).copied
    assert not _axis.plan(np.asfortranarray(x), (0,), "var", lambda n: None, contiguous=True).copied


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sums_and_means_over_every_axis_and_tuple_are_correctly_rounded(dtype):
    rng = np.random.default_rng(31)
    base = wide(rng, (3, 4, 5, 6), dtype)
    rnd = round_f64 if dtype == np.float64 else round_f32
    for name, v in layouts(base, rng):
        for axis in AXES_4D:
            s = tally.sum(v, axis=axis)
            want = np.sum(base, axis=axis)
            if axis == (0, 1, 2, 3):  # every axis: the whole-array sum, a Python float
                assert isinstance(s, float)
                s = np.array(s, dtype=dtype)
            assert isinstance(s, np.ndarray) and s.dtype == dtype and s.shape == want.shape, (name, axis)
            sl = out_slices(base, axis)
            refs = [fraction_sum(c) for c in sl]
            assert bits(s) == bits(np.array([rnd(q) for q in refs], dtype=dtype)), (name, axis)
            if dtype == np.float64:  # one rounding over all the reduced axes: math.fsum's bits
                assert bits(s) == bits(np.array([exact_sum_f64(c) for c in sl])), (name, axis)
            else:
                s64 = tally.sum(v, axis=axis, dtype=np.float64)
                assert bits(s64) == bits(np.array([math.fsum(c.astype(np.float64)) for c in sl]))
            m = np.asarray(tally.mean(v, axis=axis), dtype=dtype)
            assert m.dtype == dtype and m.shape == want.shape
            assert bits(m) == bits(np.array([rnd(q / len(c)) for q, c in zip(refs, sl)], dtype=dtype)), (name, axis)
            k = tally.sum(v, axis=axis, keepdims=True)
            assert k.shape == np.sum(base, axis=axis, keepdims=True).shape and bits(k) == bits(s)
            assert tally.mean(v, axis=axis, keepdims=True).shape == k.shape
            # fast: a float64 tree per output, within (n - 1) 2^-53 sum |x| of the exact sum
            f = tally.sum(v, axis=axis, accuracy="fast", dtype=np.float64)
            for got, c in zip(np.asarray(f).reshape(-1).tolist(), sl):
                c64 = c.astype(np.float64)
                assert abs(got - math.fsum(c64)) <= max(len(c) - 1, 0) * 2.0**-53 * float(np.abs(c64).sum())


def test_a_sum_over_two_axes_is_rounded_once_not_twice():
    # per row: 1, 2^-53, 2^-53 (sum 1 + 2^-52, exactly representable). Axis by axis would round
    # 1 + 2^-53 to 1 first (ties to even) and lose the two halves.
    x = np.zeros((2, 3, 4))
    x[:, 0, 0] = 1.0
    x[:, 1, 1] = 2.0**-53
    x[:, 2, 3] = 2.0**-53
    for axes in ((1, 2), (2, 1)):
        for v in (x, np.asfortranarray(x), x[:, ::-1, ::-1][:, ::-1, ::-1]):
            assert tally.sum(v, axis=axes).tolist() == [1 + 2.0**-52] * 2
    y = np.moveaxis(x, 1, 0)  # reduced axes 0 and 2 of a C-order array: copied, then one rounding
    assert _axis.plan(np.ascontiguousarray(y), (0, 2), "sum", _axis._as_stored).copied
    assert tally.sum(np.ascontiguousarray(y), axis=(0, 2)).tolist() == [1 + 2.0**-52] * 2
    assert tally.mean(x, axis=(1, 2)).tolist() == [float(Fraction(1 + 2.0**-52) / 12)] * 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.int8, np.float16])
def test_extremes_over_every_axis_match_numpy(dtype):
    rng = np.random.default_rng(32)
    base = rng.integers(-4, 4, (4, 3, 5, 2)).astype(dtype)  # many ties: the first index must win
    if np.issubdtype(dtype, np.floating):
        base[1, 2, 3, 0] = base[2, 0, 1, 1] = np.nan
        base[3, 1, :, :] = np.nan
    for name, v in layouts(base, rng):
        for axis in AXES_4D:
            for f in ("min", "max", "nanmin", "nanmax"):
                with np.errstate(all="ignore"), _quiet():
                    want = getattr(np, f)(base, axis=axis)
                    wk = getattr(np, f)(base, axis=axis, keepdims=True)
                got = getattr(tally, f)(v, axis=axis)
                if axis == (0, 1, 2, 3):
                    assert not isinstance(got, np.ndarray)
                    assert (math.isnan(got) and np.isnan(want)) or got == want
                    continue
                assert got.dtype == dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want, err_msg=f"{name} {f} {axis}")
                np.testing.assert_array_equal(getattr(tally, f)(v, axis=axis, keepdims=True), wk)
            if isinstance(axis, tuple):
                continue
            for f in ("argmin", "argmax"):
                got, want = getattr(tally, f)(v, axis=axis), getattr(np, f)(base, axis=axis)
                assert got.dtype == np.int64 and got.shape == want.shape
                np.testing.assert_array_equal(got, want, err_msg=f"{name} {f} {axis}")
                np.testing.assert_array_equal(getattr(tally, f)(v, axis=axis, keepdims=True),
                                              getattr(np, f)(base, axis=axis, keepdims=True))
            ok = np.nan_to_num(base, nan=0) if np.issubdtype(dtype, np.floating) else base
            ok = ok.copy()
            if np.issubdtype(dtype, np.floating):
                ok[0, 0, 0, 0] = np.nan
            for f in ("nanargmin", "nanargmax"):
                np.testing.assert_array_equal(getattr(tally, f)(ok, axis=axis), getattr(np, f)(ok, axis=axis))


class _quiet:
    def __enter__(self):
        import warnings
        self._c = warnings.catch_warnings()
        self._c.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *a):
        return self._c.__exit__(*a)


def test_nanargmin_names_the_all_nan_slice():
    x = np.zeros((2, 3, 4))
    x[1, :, 2] = np.nan
    with pytest.raises(ValueError, match=r"slice at output index \(1, 2\) holds only NaN"):
        tally.nanargmax(x, axis=1)
    with pytest.raises(ValueError):
        np.nanargmax(x, axis=1)


def test_norm_var_std_per_output_are_the_one_dimensional_bits():
    rng = np.random.default_rng(33)
    base = wide(rng, (3, 4, 5, 6))
    base[0, 0, 0, :] = 0.0
    for name, v in layouts(base, rng):
        for axis in (0, 1, 2, 3, -1, (2,), (-4,)):
            sl = out_slices(base, axis)
            want_shape = np.linalg.norm(base, axis=axis).shape
            for ord_, ref in ((2, lambda c: round_sqrt_f64(sum((Fraction(float(t)) ** 2 for t in c), Fraction(0)))),
                              (1, lambda c: round_f64(sum((abs(Fraction(float(t))) for t in c), Fraction(0)))),
                              (np.inf, lambda c: float(np.max(np.abs(c))))):
                r = tally.norm(v, ord_, axis=axis)
                assert r.dtype == np.float64 and r.shape == want_shape, (name, axis, ord_)
                assert bits(r) == bits(np.array([ref(c) for c in sl])), (name, axis, ord_)
                assert bits(r) == bits(np.array([tally.norm(c, ord_) for c in sl]))
                np.testing.assert_allclose(r, np.linalg.norm(base, ord_, axis=axis), rtol=1e-12)
                assert tally.norm(v, ord_, axis=axis, keepdims=True).shape == \
                    np.linalg.norm(base, ord_, axis=axis, keepdims=True).shape
        for axis in (0, 1, 2, 3, (0, 1), (1, 3), (0, 2, 3), (3, 0, 1, 2)):
            sl = out_slices(base, axis)
            for ddof in (0, 1):
                r = np.asarray(tally.var(v, axis=axis, ddof=ddof))  # (every axis: a Python float)
                assert r.shape == np.var(base, axis=axis).shape
                assert bits(r) == bits(np.array([round_f64(fraction_var(c, ddof)) for c in sl])), (name, axis, ddof)
                sd = tally.std(v, axis=axis, ddof=ddof, keepdims=True)
                assert sd.shape == np.std(base, axis=axis, keepdims=True).shape
                assert bits(sd) == bits(np.array([round_sqrt_f64(fraction_var(c, ddof)) for c in sl])), (name, axis)
                assert bits(sd) == bits(np.array([tally.std(c, ddof=ddof) for c in sl]))
            f = np.asarray(tally.var(v, axis=axis, accuracy="fast"))
            np.testing.assert_allclose(f, np.var(base, axis=axis), rtol=1e-9)


def test_norm_var_std_dtypes_and_conversions():
    rng = np.random.default_rng(34)
    x32 = rng.standard_normal((4, 5, 6)).astype(np.float32)
    for axis in (0, 2, (0, 2)):
        sl = out_slices(x32, axis)
        r = tally.var(x32, axis=axis)
        assert r.dtype == np.float32
        assert bits(r) == bits(np.array([round_f32(fraction_var(c)) for c in sl], dtype=np.float32))
        r64 = tally.std(x32, axis=axis, dtype=np.float64)
        assert r64.dtype == np.float64 and bits(r64) == bits(np.array([round_sqrt_f64(fraction_var(c)) for c in sl]))
    for axis in (0, 1, 2):
        n = tally.norm(x32, axis=axis)
        assert n.dtype == np.float32 and bits(n) == bits(np.array([tally.norm(c) for c in out_slices(x32, axis)],
                                                                   dtype=np.float32))
        assert tally.norm(x32, 1, axis=axis, dtype=np.float64).dtype == np.float64
    h = rng.standard_normal((3, 7)).astype(np.float16)
    for o in (1, 2, np.inf):
        r = tally.norm(h, o, axis=1)
        assert r.dtype == np.float32 and r.tolist() == [tally.norm(row, o) for row in h]
    ints = rng.integers(-2**40, 2**40, (5, 6), dtype=np.int64)
    r = tally.norm(ints, 1, axis=0)
    assert r.dtype == np.float64 and r.tolist() == [round_f64(sum(abs(Fraction(int(t))) for t in c)) for c in ints.T]
    v = tally.var(ints.astype(np.int16), axis=1)
    assert v.dtype == np.float64
    assert v.tolist() == [round_f64(fraction_var(c)) for c in ints.astype(np.int16)]
    # uint64 (values near 2^64) and bool along an axis: exact per output, as the 1-D call gives
    u = np.array([[2**64 - 1, 2**64 - 3, 5], [7, 2**63, 1]], dtype=np.uint64)
    for axis in (0, 1):
        want = [round_f64(fraction_var(c)) for c in (u.T if axis == 0 else u)]
        assert tally.var(u, axis=axis).tolist() == want
    b = np.array([[True, False, True], [True, True, False]])
    assert tally.var(b, axis=1, ddof=1).tolist() == [round_f64(fraction_var(c, 1)) for c in b]
    with pytest.raises(TypeError, match="float32 or float64"):
        tally.std(ints, axis=0, dtype=np.int64)
    # n - ddof <= 0 and empty slices: NaN per output; the norm of nothing is 0
    e = np.zeros((3, 0))
    assert all(math.isnan(t) for t in tally.var(e, axis=1).tolist())
    assert tally.norm(e, axis=1).tolist() == [0.0] * 3
    assert tally.var(e, axis=0).shape == (0,)
    assert all(math.isnan(t) for t in tally.std(np.ones((2, 3)), axis=1, ddof=3).tolist())


def test_integer_sums_and_overflow_over_tuple_axes():
    x = np.full((4, 5, 6), 2**31 - 1, dtype=np.int32)
    x[:, :, 1] = -2**31
    for axis in ((0, 1), (1, 0), (0, 2), 1, ()):
        s = tally.sum(x, axis=axis)
        assert s.dtype == np.int64 and s.tolist() == np.sum(x.astype(np.int64), axis=axis).tolist()
        assert tally.mean(x, axis=axis).tolist() == np.mean(x.astype(np.float64), axis=axis).tolist()
    u = np.arange(60, dtype=np.uint16).reshape(3, 4, 5)
    s = tally.sum(u, axis=(0, 2))
    assert s.dtype == np.uint64 and s.tolist() == np.sum(u, axis=(0, 2)).tolist()
    # partial sums past int64 that come back are fine; an output outside int64 is an OverflowError
    y = np.zeros((2, 2, 3), dtype=np.int64)
    y[:, 0, :] = [2**62, 2**62, 2**62]
    y[:, 1, :] = [-2**62, -2**62, 0]
    assert tally.sum(y, axis=(1, 2)).tolist() == [2**62, 2**62]
    with pytest.raises(OverflowError):
        tally.sum(y, axis=(0, 1))


def test_kept_extents_that_do_not_merge_and_reordered_outputs():
    rng = np.random.default_rng(35)
    for shape, axis in (((50, 3, 2), 1), ((2, 3, 50), 1), ((7, 2, 9, 3), (1, 3)), ((3, 40, 2, 5), 2),
                        ((6, 1, 5, 1), 0), ((1, 1, 1, 8), 3)):
        base = wide(rng, shape)
        for name, v in layouts(base, rng):
            s = tally.sum(v, axis=axis)
            assert s.shape == np.sum(base, axis=axis).shape
            assert bits(s) == bits(np.array([exact_sum_f64(c) for c in out_slices(base, axis)])), (shape, name)
            assert s.flags.c_contiguous
            if not isinstance(axis, tuple):
                np.testing.assert_array_equal(tally.argmax(v, axis=axis), np.argmax(base, axis=axis))


def test_empty_shapes():
    for shape in ((0, 3, 4), (2, 0, 4), (2, 3, 0), (0, 0, 0)):
        x = np.zeros(shape)
        for axis in (0, 1, 2, (0, 1), (1, 2), (0, 2), (0, 1, 2)):
            want = np.sum(x, axis=axis)
            s = tally.sum(x, axis=axis)
            if axis == (0, 1, 2):
                assert s == 0.0
                continue
            assert s.shape == want.shape and s.tolist() == want.tolist()
            m = tally.mean(x, axis=axis)
            assert m.shape == want.shape and all(math.isnan(t) for t in m.reshape(-1).tolist())
            assert tally.min(x, axis=axis).reshape(-1).tolist() == [math.inf] * want.size  # NumPy raises
            assert tally.norm(x, axis=axis if isinstance(axis, int) else axis[:1]).shape == \
                np.linalg.norm(x, axis=axis if isinstance(axis, int) else axis[:1]).shape
            if isinstance(axis, int):
                if x.shape[axis] == 0 and want.size > 0:
                    with pytest.raises(ValueError, match="length 0"):
                        tally.argmin(x, axis=axis)
                else:
                    assert tally.argmin(x, axis=axis).shape == want.shape


def test_whole_array_with_axis_tuples_and_keepdims():
    rng = np.random.default_rng(36)
    x = wide(rng, (3, 4, 5))
    s = tally.sum(x, axis=(0, 1, 2))
    assert isinstance(s, float) and s == math.fsum(x.reshape(-1)) == tally.sum(x)
    for f in ("sum", "mean", "min", "max", "nanmin", "nanmax", "var", "std", "norm", "argmin", "argmax"):
        k = getattr(tally, f)(x, keepdims=True)
        assert isinstance(k, np.ndarray) and k.shape == (1, 1, 1), f
        assert k.reshape(-1)[0] == getattr(tally, f)(x), f
    assert tally.argmax(x, keepdims=True).dtype == np.int64
    assert tally.sum(np.arange(6, dtype=np.int32).reshape(2, 3), keepdims=True, axis=(1, 0)).tolist() == [[15]]
    assert tally.min(np.arange(6, dtype=np.float16), keepdims=True).dtype == np.float16
    assert tally.sum(x[0, 0], axis=0) == math.fsum(x[0, 0])  # a 1-D array's only axis: the whole array
    r = tally.sum(x, axis=())  # no axis reduced: every element "summed" alone
    assert r.shape == x.shape and bits(r) == bits(x)
    assert tally.var(x, axis=()).tolist() == np.zeros(x.shape).tolist()
    assert tally.sum(np.float64(2.5), axis=()) == 2.5


def test_axis_errors():
    x = np.ones((2, 3, 4))
    for f in ("sum", "mean", "min", "max", "nanmax", "var", "std", "norm", "argmin", "nanargmax"):
        fn = getattr(tally, f)
        with pytest.raises(AxisError, match="axis 3 is out of bounds for array of dimension 3"):
            fn(x, axis=3)
        with pytest.raises(AxisError):
            fn(x, axis=-4)
        with pytest.raises(IndexError):
            fn(x, axis=-4)
        with pytest.raises(TypeError, match="axis must be"):
            fn(x, axis=1.0)
        with pytest.raises(TypeError, match="axis must be"):
            fn(x, axis=[0, 1])
    for f in ("sum", "mean", "min", "max", "var", "std"):
        with pytest.raises(ValueError, match="duplicate value in 'axis': .* names axis 2 more than once"):
            getattr(tally, f)(x, axis=(2, -1))
        with pytest.raises(AxisError):
            getattr(tally, f)(x, axis=(0, 5))
        with pytest.raises(ValueError):
            getattr(np, f)(x, axis=(2, -1))
    for f in ("argmin", "argmax", "nanargmin", "nanargmax"):
        with pytest.raises(TypeError, match=f"tally.{f}: axis must be one integer or None, not the tuple"):
            getattr(tally, f)(x, axis=(0, 1))
        with pytest.raises(TypeError):
            getattr(np, f)(x, axis=(0, 1))
    with pytest.raises(ValueError, match="matrix norms"):
        tally.norm(x, axis=(0, 1))
    with pytest.raises(ValueError, match="matrix norms"):
        tally.norm(x, axis=())
    assert tally.norm(x, axis=(1,)).tolist() == np.linalg.norm(x, axis=(1,)).tolist()
    for bad in (-np.inf, 0, 3, "fro", -1, 1.5):
        with pytest.raises(ValueError, match=f"ord must be 1, 2 .* not {bad!r}"):
            tally.norm(x, bad, axis=1)
    assert tally.norm(x, None, axis=1).tolist() == tally.norm(x, 2, axis=1).tolist()
    with pytest.raises(TypeError, match="ddof must be an integer"):
        tally.var(x, axis=0, ddof=1.0)
    with pytest.raises(ValueError, match="accuracy"):
        tally.std(x, axis=0, accuracy="sloppy")
    with pytest.raises(TypeError, match="complex128"):
        tally.sum(np.ones((2, 2, 2), dtype=np.complex128), axis=(0, 1))
    assert tally.sum(np.float64(1.0), axis=0) == 1.0  # (NumPy: a 0-d input takes axis 0 or -1 here)
    with pytest.raises(AxisError):
        tally.sum(np.float64(1.0), axis=(0,))


# --- property tests: random shapes up to 4-D, strides, transposes, axes -----------------------

@st.composite
def nd_case(draw):
    nd = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=nd, max_size=nd)))
    steps = tuple(draw(st.lists(st.sampled_from([1, 2, 3, -1, -2]), min_size=nd, max_size=nd)))
    perm = tuple(draw(st.permutations(range(nd))))
    kind = draw(st.sampled_from(["int", "tuple", "none"]))
    if kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    elif kind == "tuple":
        axes = draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd))
        axis = tuple(a - nd if draw(st.booleans()) else a for a in axes)
    else:
        axis = None
    seed = draw(st.integers(0, 2**32 - 1))
    keepdims = draw(st.booleans())
    return shape, steps, perm, axis, seed, keepdims


def make_view(shape, steps, perm, seed, dtype=np.float64):
    """A view of logical shape `shape` after the permutation `perm`, read through steps."""
    rng = np.random.default_rng(seed)
    base = wide(rng, shape, dtype) if np.issubdtype(dtype, np.floating) else \
        rng.integers(-2**31, 2**31, shape).astype(dtype)
    big_shape = tuple(abs(s) * n + 2 for s, n in zip(steps, shape))
    big = np.zeros(big_shape, dtype=dtype)
    idx = tuple(slice(1, 1 + s * n, s) if s > 0 else slice(abs(s) * n, 0, s) for s, n in zip(steps, shape))
    v = big[idx]
    assert v.shape == shape
    v[...] = base
    return np.transpose(v, perm), np.transpose(base, perm)


@settings(max_examples=250, deadline=None)
@given(nd_case())
def test_property_nd_sum_mean_extremes_float64(case):
    shape, steps, perm, axis, seed, keepdims = case
    v, base = make_view(shape, steps, perm, seed)
    sl = out_slices(base, axis)
    whole = axis is None or len(norm_axes(axis, v.ndim)) == v.ndim
    want_shape = np.sum(base, axis=axis, keepdims=keepdims).shape
    s = tally.sum(v, axis=axis, keepdims=keepdims)
    ref = np.array([exact_sum_f64(c) for c in sl])
    if whole and not keepdims:
        assert bits(np.array([s])) == bits(ref)
    else:
        assert s.shape == want_shape and bits(s) == bits(ref)
    m = tally.mean(v, axis=axis, keepdims=keepdims)
    mref = np.array([round_f64(fraction_sum(c) / len(c)) if len(c) else math.nan for c in sl])
    np.testing.assert_array_equal(np.asarray(m).reshape(-1), mref)
    if base.size and all(len(c) for c in sl):
        for f in ("min", "max"):
            np.testing.assert_array_equal(getattr(tally, f)(v, axis=axis, keepdims=keepdims),
                                          getattr(np, f)(base, axis=axis, keepdims=keepdims))
    if isinstance(axis, int) and base.shape[axis] > 0:
        for f in ("argmin", "argmax"):
            np.testing.assert_array_equal(getattr(tally, f)(v, axis=axis, keepdims=keepdims),
                                          getattr(np, f)(base, axis=axis, keepdims=keepdims))


@settings(max_examples=150, deadline=None)
@given(nd_case(), st.integers(0, 1))
def test_property_nd_var_std_norm(case, ddof):
    shape, steps, perm, axis, seed, keepdims = case
    v, base = make_view(shape, steps, perm, seed)
    sl = out_slices(base, axis)
    whole = axis is None or len(norm_axes(axis, v.ndim)) == v.ndim
    r = np.asarray(tally.var(v, axis=axis, ddof=ddof, keepdims=keepdims))
    ref = np.array([round_f64(fraction_var(c, ddof)) if len(c) > ddof else math.nan for c in sl])
    if not whole or keepdims:
        assert r.shape == np.var(base, axis=axis, keepdims=keepdims).shape
    np.testing.assert_array_equal(r.reshape(-1), ref)
    sd = np.asarray(tally.std(v, axis=axis, ddof=ddof, keepdims=keepdims))
    ref = np.array([round_sqrt_f64(fraction_var(c, ddof)) if len(c) > ddof else math.nan for c in sl])
    np.testing.assert_array_equal(sd.reshape(-1), ref)
    if isinstance(axis, int):
        n = np.asarray(tally.norm(v, axis=axis, keepdims=keepdims))
        if not whole or keepdims:
            assert n.shape == np.linalg.norm(base, axis=axis, keepdims=keepdims).shape
        ref = [round_sqrt_f64(sum((Fraction(float(t)) ** 2 for t in c), Fraction(0))) for c in sl]
        assert bits(n) == bits(np.array(ref, dtype=np.float64))


@settings(max_examples=100, deadline=None)
@given(nd_case(), st.sampled_from([np.float32, np.int32, np.int64]))
def test_property_nd_float32_and_integers(case, dtype):
    shape, steps, perm, axis, seed, keepdims = case
    v, base = make_view(shape, steps, perm, seed, dtype)
    sl = out_slices(base, axis)
    s = np.asarray(tally.sum(v, axis=axis, keepdims=keepdims), dtype=np.float32 if dtype == np.float32 else None)
    s = s.reshape(-1)  # (a whole-array sum is a Python scalar: exactly the float32 value)
    if dtype == np.float32:
        assert bits(s) == bits(np.array([round_f32(fraction_sum(c)) for c in sl], dtype=np.float32))
        s64 = np.asarray(tally.sum(v, axis=axis, dtype=np.float64)).reshape(-1)
        assert bits(s64) == bits(np.array([math.fsum(c.astype(np.float64)) for c in sl]))
    else:
        assert s.tolist() == [sum(int(t) for t in c) for c in sl]
    if base.size and all(len(c) for c in sl):
        np.testing.assert_array_equal(tally.max(v, axis=axis, keepdims=keepdims),
                                      np.max(base, axis=axis, keepdims=keepdims))
