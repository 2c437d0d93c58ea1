"""out= of the reductions (NumPy arrays, the CPU backend): the result written into a given
array, which is returned; the same values as without out (exact: the same bits, cast by NumPy
when out's dtype differs); clear errors for a wrong shape, library or dtype."""
import math

import numpy as np
import pytest

tally = pytest.importorskip("tally")


def wide(rng, shape):
    return rng.standard_normal(shape) * np.exp2(rng.integers(-40, 40, shape))


FUNCS = ["sum", "mean", "min", "max", "nanmin", "nanmax", "var", "std", "norm"]
INDEX = ["argmin", "argmax", "nanargmin", "nanargmax"]


@pytest.mark.parametrize("fn", FUNCS + INDEX)
@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2), None])
def test_out_receives_exactly_the_result(fn, axis):
    rng = np.random.default_rng(5)
    x = wide(rng, (4, 5, 6))
    if fn in INDEX and isinstance(axis, tuple):
        pytest.skip("argmin/argmax take one axis")
    if fn == "norm" and isinstance(axis, tuple):
        pytest.skip("vector norms take one axis")
    f = getattr(tally, fn)
    want = f(x, axis=axis)
    if axis is None:
        out = np.empty((), dtype=np.int64 if fn in INDEX else np.float64)
    else:
        out = np.full(np.shape(want), -7, dtype=np.int64 if fn in INDEX else np.float64)
    got = f(x, axis=axis, out=out)
    assert got is out
    np.testing.assert_array_equal(out, want)  # the same bits (exact results) / indices
    if axis is None and fn == "sum":
        assert float(out) == math.fsum(x.ravel())


def test_out_with_keepdims_dot_and_a_narrower_float_dtype():
    rng = np.random.default_rng(6)
    x = wide(rng, (3, 7))
    k = np.empty((3, 1))
    assert tally.sum(x, axis=1, keepdims=True, out=k) is k
    np.testing.assert_array_equal(k, tally.sum(x, axis=1, keepdims=True))
    d = np.empty(())
    assert tally.dot(x, x, out=d) is d and float(d) == tally.dot(x, x)
    # float64 results into float32: NumPy's same_kind cast (one more rounding, by NumPy)
    o32 = np.empty(7, dtype=np.float32)
    tally.sum(x, axis=0, out=o32)
    np.testing.assert_array_equal(o32, tally.sum(x, axis=0).astype(np.float32))
    # integer sums into a wider or float array
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    of = np.empty(4)
    tally.sum(i, axis=0, out=of)
    assert of.tolist() == [12.0, 15.0, 18.0, 21.0]


def test_out_errors_name_the_problem():
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(ValueError, match=r"out has shape \(3,\), but the result has shape \(4,\)"):
        tally.sum(x, axis=0, out=np.empty(3))
    with pytest.raises(ValueError, match=r"shape \(\)"):
        tally.sum(x, out=np.empty(1))
    with pytest.raises(TypeError, match="same_kind"):
        tally.mean(x, axis=0, out=np.empty(4, dtype=np.int64))
    with pytest.raises(TypeError, match="NumPy, CuPy or torch array"):
        tally.max(x, axis=0, out=[0.0] * 4)
    # a failed call leaves out as it was
    o = np.full(4, 3.0)
    with pytest.raises(ValueError, match="result has shape"):
        tally.sum(x, axis=1, out=o)
    assert o.tolist() == [3.0] * 4


@pytest.mark.parametrize("fn", INDEX)
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16, np.complex128, np.uint64, np.bool_])
def test_index_results_need_an_integer_out_as_numpy(fn, dt):
    # numpy.argmin(..., out=) refuses an out that does not cast safely to intp: TypeError
    # ("Cannot cast ... according to the rule 'safe'"); tally names out's dtype the same way
    x = np.array([[1.0, 5.0], [7.0, 2.0]])
    name = np.dtype(dt).name
    for kw, shape in ((dict(axis=0), (2,)), (dict(), ()), (dict(axis=1, keepdims=True), (2, 1))):
        out = np.full(shape, 3, dtype=dt)
        before = out.copy()
        if dt is not np.bool_:  # (NumPy takes a bool out and writes True for every index but 0)
            with pytest.raises(TypeError) as numpy_error:
                getattr(np, fn)(x, out=out, **kw)
            assert "Cannot cast" in str(numpy_error.value)
        with pytest.raises(TypeError) as e:
            getattr(tally, fn)(x, out=out, **kw)
        assert str(e.value) == (
            f"tally.{fn}: out has dtype {name}, but {fn} gives integer indices (int64): out must be an integer array "
            f"(int64, NumPy's intp; int8-int32 and uint8-uint32 when the indices fit), as numpy.{fn} requires (it "
            f"cannot cast {name} to int64 under the 'safe' rule)")
        assert np.array_equal(out, before)  # left as it was


@pytest.mark.parametrize("fn", INDEX)
def test_index_results_into_integer_outs(fn):
    x = np.array([[1.0, 5.0, 0.5], [7.0, 2.0, 9.0]])
    for dt in (np.int64, np.intp, np.int32, np.int8, np.uint8, np.uint32):
        o = np.full(3, -1 if np.dtype(dt).kind == "i" else 7, dtype=dt)
        assert getattr(tally, fn)(x, axis=0, out=o) is o
        assert o.tolist() == getattr(np, fn)(x, axis=0).tolist() and o.dtype == dt
        s = np.zeros((), dtype=dt)
        assert getattr(tally, fn)(x, out=s) is s and int(s) == int(getattr(np, fn)(x))
    # an index that does not fit a narrow out: OverflowError (NumPy would wrap it)
    big = np.zeros(300)
    big[299] = 1.0 if fn.endswith("max") else -1.0
    with pytest.raises(OverflowError, match=r"the result 299 does not fit the int8 out"):
        getattr(tally, fn)(big, out=np.zeros((), np.int8))


def test_integer_results_never_wrap_into_a_narrower_out():
    x = np.full((3, 2), 2**40)
    for kw in (dict(out=np.zeros((), np.int32)), dict(keepdims=True, out=np.zeros((1, 1), np.int32)),
               dict(axis=0, out=np.zeros(2, np.int32))):
        with pytest.raises(OverflowError, match=r"tally\.sum: the result .*does not fit the int32 out"):
            tally.sum(x, **kw)
    with pytest.raises(OverflowError, match="int64 out"):
        tally.sum(np.array([2**63], np.uint64), out=np.zeros((), np.int64))
    with pytest.raises(OverflowError, match=r"at \(1,\)"):  # the first output that does not fit
        tally.sum(np.array([[1, 2], [200, 1]], np.int64), axis=1, out=np.zeros(2, np.int8))
    # results that fit are written
    assert tally.sum(np.array([[5, 6]]), axis=1, out=np.zeros(1, np.int8)).tolist() == [11]
    assert int(tally.sum(np.array([2**62, 2**62], np.uint64), out=np.zeros((), np.uint64))) == 2**63
    assert tally.min(np.array([[-5, 3]], np.int8), axis=1, out=np.zeros(1, np.int8)).tolist() == [-5]
