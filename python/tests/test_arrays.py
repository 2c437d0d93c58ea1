"""The Python module's array handling on the CPU backend: layouts and strides, dtype= and
accuracy=, add's out=, the error mapping, other DLPack producers and __cuda_array_interface__
objects, against exact references (fractions.Fraction, math.fsum) and NumPy."""
import math

import numpy as np
import pytest

tally = pytest.importorskip("tally")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from exact_ref import fraction_dot, fraction_sum, round_f32, round_f64  # noqa: E402


class DLPackOnly:
    """A DLPack producer that is neither NumPy, CuPy nor torch (host data)."""

    def __init__(self, a):
        self._a, self.shape, self.dtype = a, a.shape, a.dtype

    def __dlpack__(self, stream=None, **kw):
        assert stream is None  # host data: no stream is passed
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class CAIOnly:
    """An object with only __cuda_array_interface__ (pointing at host memory here)."""

    def __init__(self, a, typestr=None, strides=None, stream=None):
        self._a = a
        self.shape = a.shape
        self.__cuda_array_interface__ = {
            "shape": a.shape, "typestr": typestr or a.dtype.str, "data": (a.ctypes.data, False),
            "strides": strides, "version": 3, "stream": stream}


def test_dtype_keyword():
    x = np.full(2**24 + 1, 1.0, dtype=np.float32)
    assert tally.sum(x, dtype=np.float64) == 16777217.0
    assert tally.sum(x, dtype="float64") == 16777217.0
    assert tally.sum(x, dtype=np.float32) == 16777216.0  # the correctly rounded float32
    assert tally.sum(np.array([2**31 - 1, 2**31 - 1], dtype=np.int32), dtype=np.int64) == 2**32 - 2
    y = np.full(2**24 + 1, 1.0, dtype=np.float32)
    assert tally.dot(x, y, dtype=np.float64) == 16777217.0
    with pytest.raises(TypeError, match="int32 sum can give int64, not float64"):
        tally.sum(np.ones(3, dtype=np.int32), dtype=np.float64)
    with pytest.raises(TypeError, match="float64 sum can give float32 or float64, not int64"):
        tally.sum(np.ones(3), dtype=np.int64)
    assert tally.mean(np.array([1, 2], dtype=np.int64), dtype=np.float32) == 1.5


def test_accuracy_keyword():
    x = np.array([1.0, 1e100, 1.0, -1e100] * 1000)
    assert tally.sum(x) == 2000.0
    assert tally.sum(x, accuracy="exact") == 2000.0
    fast = tally.sum(x, accuracy="fast")  # a float64 tree: within n * eps * sum|x|
    assert abs(fast - 2000.0) <= x.size * 2.0**-52 * np.abs(x).sum()
    r = np.random.default_rng(1).standard_normal(100_000)
    assert abs(tally.dot(r, r, accuracy="fast") - round_f64(fraction_dot(r, r))) <= 1e-9 * np.dot(r, r)
    with pytest.raises(ValueError, match="accuracy must be 'exact' or 'fast'"):
        tally.dot(r, r, accuracy="sloppy")


def test_layouts_no_copy_needed_and_copies():
    a = np.arange(3 * 5 * 7, dtype=np.float64).reshape(3, 5, 7) * 0.1
    ref = math.fsum(a.ravel())
    for v in (a, a.T, np.asfortranarray(a), a.transpose(1, 0, 2), a[::-1], a[:, ::2, 1:]):
        assert tally.sum(v) == math.fsum(v.ravel())
        assert tally.min(v) == v.min() and tally.max(v) == v.max()
        assert tally.argmin(v) == np.argmin(v) and tally.argmax(v) == np.argmax(v)
        assert tally.mean(v) == round_f64(fraction_sum(v.ravel()) / v.size)
    assert tally.sum(a.T) == ref
    b = np.arange(a.size, dtype=np.float64).reshape(a.shape)
    assert tally.dot(a.T, b.T) == round_f64(fraction_dot(a.T.ravel(), b.T.ravel()))
    s = np.arange(20.0)[::3]
    assert tally.add(s, s).tolist() == (s + s).tolist()
    assert tally.sum(np.float64(2.5)) == 2.5  # 0-d
    assert tally.sum([1.0, 2.0]) == 3.0       # a list goes through np.asarray


def test_add_out_and_library():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.ones((3, 4), dtype=np.float32)
    z = tally.add(x, y)
    assert isinstance(z, np.ndarray) and z.shape == (3, 4) and z.dtype == np.float32
    assert np.array_equal(z, x + y)
    out = np.empty_like(x)
    assert tally.add(x, y, out=out) is out and np.array_equal(out, x + y)
    tally.add(x, y, out=x)  # in place
    assert np.array_equal(x, z)
    with pytest.raises(ValueError, match="C-contiguous"):
        tally.add(x, y, out=np.empty((4, 3), dtype=np.float32).T)
    with pytest.raises(ValueError, match="shape"):
        tally.add(x, y, out=np.empty(12, dtype=np.float32))
    with pytest.raises(ValueError, match="dtype"):
        tally.add(x, y, out=np.empty((3, 4)))
    ro = np.empty_like(x)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        tally.add(x, y, out=ro)
    with pytest.raises(ValueError, match="overlaps"):
        buf = np.zeros(13, dtype=np.float32)
        tally.add(buf[:12], buf[:12], out=buf[1:])
    with pytest.raises(OverflowError):
        tally.add(np.array([2**31 - 1], dtype=np.int32), np.array([1], dtype=np.int32))


def test_error_mapping():
    with pytest.raises(TypeError, match="unsupported dtype complex64"):
        tally.sum(np.ones(3, dtype=np.complex64))
    with pytest.raises(TypeError, match="unsupported dtype complex128"):
        tally.dot(np.ones(3, dtype=complex), np.ones(3, dtype=complex))
    with pytest.raises(ValueError, match="length mismatch: x has 3 elements, y has 4"):
        tally.dot(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="element type mismatch"):
        tally.dot(np.ones(3), np.ones(3, dtype=np.float32))
    with pytest.raises(ValueError, match="shape mismatch"):
        tally.add(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(OverflowError, match="int64"):
        tally.dot(np.array([2**62, 2**62], dtype=np.int64), np.array([2, 2], dtype=np.int64))
    with pytest.raises(ValueError, match="x is empty"):
        tally.argmax(np.array([], dtype=np.float64))
    with pytest.raises(ValueError, match="only NaN"):
        tally.nanargmin(np.array([np.nan, np.nan]))
    for f in (tally.sum, tally.mean, tally.min, tally.max, tally.argmin, tally.argmax, tally.nanmin, tally.nanmax,
              tally.nanargmin, tally.nanargmax, tally.norm, tally.var, tally.std):
        with pytest.raises(np.exceptions.AxisError, match="axis 3 is out of bounds for array of dimension 3"):
            f(np.ones((2, 2, 2)), axis=3)
        if "arg" in f.__name__:
            with pytest.raises(TypeError, match="axis must be one integer or None, not the tuple"):
                f(np.ones((2, 2, 2)), axis=(1, -2))
        else:
            with pytest.raises(ValueError, match="duplicate value in 'axis'|matrix norms"):
                f(np.ones((2, 2, 2)), axis=(1, -2))
    # the C++ layer's own checks, with its message (ValueError)
    from tally import _tally
    with pytest.raises(ValueError, match="backend must be"):
        _tally.sum(np.ones(3), "", "exact", "gpu", 0)
    with pytest.raises(ValueError, match="not C-contiguous"):
        _tally.sum(np.ones(6)[::2], "", "exact", "cpu", 0)
    if not tally.cuda_available():
        with pytest.raises(RuntimeError, match="CUDA backend was requested"):
            _tally.sum(np.ones(3), "", "exact", "cuda", 0)
    else:
        with pytest.raises(TypeError, match="host memory"):
            _tally.sum(np.ones(3), "", "exact", "cuda", 0)


def test_other_dlpack_producer():
    a = np.arange(10, dtype=np.float64) * 0.1
    assert tally.sum(DLPackOnly(a)) == math.fsum(a)
    assert tally.dot(DLPackOnly(a), a) == round_f64(fraction_dot(a, a))
    assert tally.argmax(DLPackOnly(a)) == 9
    out = np.empty_like(a)
    assert tally.add(DLPackOnly(a), DLPackOnly(a), out=out) is out and np.array_equal(out, a + a)
    with pytest.raises(TypeError, match="pass out="):
        tally.add(DLPackOnly(a), DLPackOnly(a))


def test_cuda_array_interface_object_is_read_as_device_memory():
    # Host memory behind a __cuda_array_interface__ is caught by the C++ checks: TypeError
    # where the CUDA runtime does not know it as device memory; with no GPU the RuntimeError
    # every CUDA input gets there (an empty one, a DLPack device tensor), no crash.
    a = np.arange(8, dtype=np.float64)
    with pytest.raises(TypeError if tally.cuda_available() else RuntimeError) as e:
        tally.sum(CAIOnly(a))
    assert "device memory" in str(e.value) and ("does not know it" if tally.cuda_available() else "no usable CUDA GPU") in str(e.value)
    if not tally.cuda_available():
        for f in (tally.min, tally.var, tally.norm, tally.count_nonzero):
            with pytest.raises(RuntimeError, match="no usable CUDA GPU"):
                f(CAIOnly(a))
        with pytest.raises(RuntimeError, match="no usable CUDA GPU"):
            tally.sum(CAIOnly(np.zeros(0)))
    with pytest.raises(TypeError, match="unsupported dtype"):
        tally.sum(CAIOnly(a, typestr=">f8"))
    with pytest.raises(TypeError, match="unsupported dtype"):
        tally.sum(CAIOnly(np.ones(4, dtype=np.complex64)))
    with pytest.raises(ValueError, match="not C-contiguous"):
        tally.norm(CAIOnly(np.ones(4), strides=(16,)))
    # a strided 1-D view is read in place by sum (exact and fast), so here the C++ memory check
    with pytest.raises((TypeError, RuntimeError), match="device memory|CUDA"):
        tally.sum(CAIOnly(np.ones(4), strides=(16,)))
    with pytest.raises(TypeError, match="CUDA arrays or all host arrays"):
        tally.dot(CAIOnly(a), a)


def test_help_reads_well():
    doc = tally.sum.__doc__
    for word in ("float32", "int64", "dtype", "accuracy", "correctly rounded", "Empty x", "Raises", "stream"):
        assert word in doc
    assert "Errors (tally::errc -> Python)" in tally.__doc__


# --- property tests: random lengths, dtypes and strided views against exact references ---

finite64 = st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e300, max_value=1e300)
finite32 = st.floats(allow_nan=False, allow_infinity=False, width=32)
layouts = st.tuples(st.integers(0, 3), st.integers(1, 4))  # (offset, step) of x[offset::step]


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 400), elements=finite64), layouts)
def test_strided_float64_sum_is_fsum(x, layout):
    v = x[layout[0]::layout[1]]
    assert tally.sum(v) == math.fsum(v)  # both correctly rounded


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(np.float32, st.integers(0, 400), elements=finite32), layouts)
def test_strided_float32_sum_is_fraction(x, layout):
    v = x[layout[0]::layout[1]]
    q = fraction_sum(v)
    assert tally.sum(v) == round_f32(q)
    assert tally.sum(v, dtype=np.float64) == round_f64(q)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([np.int32, np.int64]).flatmap(
    lambda t: hnp.arrays(t, st.integers(0, 300))), layouts)
def test_strided_integer_sum_is_exact(x, layout):
    v = x[layout[0]::layout[1]]
    exact = builtins_sum(int(i) for i in v)
    if -2**63 <= exact < 2**63:
        assert tally.sum(v) == exact
    else:
        with pytest.raises(OverflowError):
            tally.sum(v)


def builtins_sum(it):
    total = 0
    for i in it:
        total += i
    return total


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([np.float32, np.float64]).flatmap(
    lambda t: st.integers(0, 200).flatmap(lambda n: st.tuples(
        hnp.arrays(t, 2 * n, elements=st.floats(-2.0**50, 2.0**50, width=32 if t == np.float32 else 64)),
        hnp.arrays(t, n, elements=st.floats(-2.0**50, 2.0**50, width=32 if t == np.float32 else 64))))))
def test_strided_dot_is_exact(xy):
    x, y = xy
    v = x[::2]
    q = fraction_dot(v, y)
    expect = round_f32(q) if x.dtype == np.float32 else round_f64(q)
    assert tally.dot(v, y) == expect


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([np.float32, np.float64, np.int32, np.int64]).flatmap(
    lambda t: hnp.arrays(t, st.tuples(st.integers(1, 6), st.integers(1, 6)))), st.booleans())
def test_2d_views_extremes_match_numpy(x, transpose):
    v = x.T if transpose else x[:, ::2]
    if np.issubdtype(v.dtype, np.floating) and np.isnan(v).all():
        return
    for f, g in ((tally.min, np.min), (tally.max, np.max), (tally.argmin, np.argmin), (tally.argmax, np.argmax)):
        got, want = f(v), g(v)
        assert got == want or (isinstance(got, float) and math.isnan(got) and math.isnan(want))
