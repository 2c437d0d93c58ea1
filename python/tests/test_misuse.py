"""Misuse of the Python module as a newcomer would try it (NumPy arrays, the CPU backend):
every case gives the right value or a clear Python exception naming the problem, never a
silently wrong number, a cryptic binding error or bytes read as another type."""
import math

import numpy as np
import pytest

tally = pytest.importorskip("tally")


# ---- out= of whole-array results: the result's own dtype decides the cast ----------------------

@pytest.mark.parametrize("dt", ["uint8", "uint16", "uint32", "uint64"])
def test_whole_array_out_of_unsigned_results(dt):
    # An unsigned sum is uint64 and an unsigned min/max has x's type, as in NumPy: an out array
    # of that type takes them (they used to be treated as int64, which 'same_kind' refuses).
    big = np.iinfo(dt).max
    x = np.array([big, 0, 1], dtype=dt)
    out = np.empty((), dtype=np.uint64)
    assert tally.sum(np.array([2**64 - 2, 1], dtype=np.uint64), out=out) is out
    assert int(out) == 2**64 - 1
    assert tally.dot(np.array([2**32], dtype=np.uint64), np.array([2**32 - 1], dtype=np.uint64), out=out) is out
    assert int(out) == 2**64 - 2**32
    for fn, want in (("max", big), ("min", 0), ("nanmax", big), ("nanmin", 0)):
        o = np.empty((), dtype=dt)
        assert getattr(tally, fn)(x, out=o) is o
        assert int(o) == want == int(getattr(np, fn)(x))
        o = np.empty((), dtype=np.uint64)
        getattr(tally, fn)(x, out=o)
        assert int(o) == want


def test_whole_array_out_still_refuses_a_kind_change():
    # int64 results do not go into unsigned arrays, floats not into integers (NumPy's rule)
    with pytest.raises(TypeError, match="int64 result into a uint64"):
        tally.sum(np.array([1, 2], dtype=np.int64), out=np.empty((), dtype=np.uint64))
    with pytest.raises(TypeError, match="float64 result into an int64"):
        tally.max(np.array([1.5]), out=np.empty((), dtype=np.int64))
    o = np.empty((), dtype=np.int8)  # a narrower type of the same kind is allowed, as in NumPy
    assert int(tally.max(np.array([-5, 7], dtype=np.int16), out=o)) == 7


# ---- the scalar a of axpy / scale -------------------------------------------------------------

@pytest.mark.parametrize("a", ["2", b"2", np.complex128(2 + 1j), np.complex64(2), np.array(2 + 0j), np.str_("2"),
                               np.datetime64(2, "s")])
@pytest.mark.parametrize("dt", ["float64", "float32", "float16", "int32"])
def test_axpy_scale_refuse_a_that_is_not_a_real_number(a, dt):
    # float("2") parses a string and float(np.complex128(2 + 1j)) drops the imaginary part:
    # both used to scale silently.
    x, y = np.ones(3, dtype=dt), np.ones(3, dtype=dt)
    with pytest.raises(TypeError, match="a must be"):
        tally.scale(a, x)
    with pytest.raises(TypeError, match="a must be"):
        tally.axpy(a, x, y)
    np.testing.assert_array_equal(x, 1)
    np.testing.assert_array_equal(y, 1)


def test_axpy_scale_take_real_numbers_of_any_kind():
    x = np.ones(3)
    for a in (2, 2.0, np.float32(2), np.int8(2), np.uint64(2), np.array(2.0), True):
        x[:] = 1
        tally.scale(a, x)
        np.testing.assert_array_equal(x, float(a))
    y = np.zeros(3)
    tally.axpy(np.float16(0.5), np.ones(3), y)
    np.testing.assert_array_equal(y, 0.5)


# ---- arrays written in place in non-native byte order ---------------------------------------

def test_big_endian_arrays_written_in_place_are_refused_by_name():
    # add's out, axpy's y and scale's x used to fail in nanobind ("incompatible function
    # arguments" and a list of signatures); now a ValueError naming the array and the fix.
    x, y = np.arange(4.0), np.ones(4)
    with pytest.raises(ValueError, match=r"tally.add: out has dtype >f8, in non-native"):
        tally.add(x, y, out=np.zeros(4, dtype=">f8"))
    yb = np.ones(4, dtype=">f8")
    with pytest.raises(ValueError, match=r"tally.axpy: y has dtype >f8, in non-native"):
        tally.axpy(2.0, x, yb)
    np.testing.assert_array_equal(yb, 1)
    xb = np.arange(4, dtype=">i4")
    with pytest.raises(ValueError, match=r"tally.scale: x has dtype >i4, in non-native"):
        tally.scale(2, xb)
    np.testing.assert_array_equal(xb, np.arange(4))
    # read-only inputs (any byte order) are fine; only the array written is checked
    tally.axpy(2.0, np.arange(4.0).astype(">f8"), y)
    np.testing.assert_array_equal(y, 1 + 2 * np.arange(4.0))
    np.testing.assert_array_equal(tally.add(x.astype(">f8"), np.ones(4, dtype=">f8")), x + 1)


def test_in_place_arrays_are_named_in_messages():
    with pytest.raises(ValueError, match=r"tally.scale: x is read-only"):
        tally.scale(2.0, np.frombuffer(np.ones(3).tobytes()))
    with pytest.raises(ValueError, match=r"tally.axpy: y must be C-contiguous"):
        tally.axpy(2.0, np.ones(3), np.ones(6)[::2])
    with pytest.raises(TypeError, match=r"tally.axpy: y must be an array, not list"):
        tally.axpy(2.0, np.ones(3), [1.0, 1.0, 1.0])


# ---- NumPy masked arrays ----------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["sum", "mean", "min", "max", "argmin", "argmax", "nanmin", "nanmax", "nanargmin",
                                "nanargmax", "norm", "var", "std", "count_nonzero", "any", "all"])
@pytest.mark.parametrize("axis", [None, 0])
def test_masked_arrays_are_refused(fn, axis):
    # np.asarray drops the mask, so tally.sum(np.ma.array([1., 2., 3.], mask=[0, 1, 0])) gave
    # 6.0 where NumPy (and the user) expect 4.0.
    x = np.ma.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], mask=[[0, 1, 0], [0, 0, 1]])
    kw = {} if fn in ("count_nonzero", "any", "all") else {"axis": axis}
    with pytest.raises(TypeError, match="masked array"):
        getattr(tally, fn)(x, **kw)


def test_masked_arrays_are_refused_by_dot_add_axpy_scale():
    m = np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    for call in (lambda: tally.dot(m, np.ones(3)), lambda: tally.dot(np.ones(3), m),
                 lambda: tally.add(m, np.ones(3)), lambda: tally.axpy(2.0, m, np.ones(3)),
                 lambda: tally.scale(2.0, m)):
        with pytest.raises(TypeError, match="masked array"):
            call()
    # what the message suggests works
    assert tally.sum(m.compressed()) == 4.0 == np.sum(m)


# ---- ddof -------------------------------------------------------------------------------------

@pytest.mark.parametrize("ddof", [2**63, 2**70, -2**63 - 1, -2**100])
@pytest.mark.parametrize("axis", [None, 1])
def test_ddof_beyond_int64_is_a_value_error(ddof, axis):
    # used to fail in nanobind: TypeError "incompatible function arguments" and a signature list
    x = np.arange(6.0).reshape(2, 3)
    for f in (tally.var, tally.std):
        with pytest.raises(ValueError, match="ddof = .* does not fit in int64"):
            f(x, ddof=ddof, axis=axis)


def test_ddof_at_the_int64_limits():
    x = np.arange(5.0)
    assert np.isnan(tally.var(x, ddof=2**63 - 1))  # n - ddof <= 0: NaN (documented)
    assert np.isnan(tally.std(x, ddof=np.int64(2**63 - 1), axis=0))
    assert tally.var(x, ddof=-1) == np.var(x, ddof=-1)
    with pytest.raises(ValueError, match="does not fit in int64"):  # n - ddof overflows
        tally.var(x, ddof=-2**63)


# ---- bool arrays holding bytes other than 0 and 1 ----------------------------------------------

def odd_bools():
    # NumPy reads every nonzero byte of a bool array as True; .view(bool) and frombuffer make them
    return np.array([2, 0, 255, 1, 4, 0, 128], dtype=np.uint8).view(np.bool_)


@pytest.mark.parametrize("fn", ["sum", "count_nonzero", "mean", "var", "std", "min", "max", "argmin", "argmax",
                                "nanargmax", "any", "all", "norm"])
def test_bool_bytes_other_than_one_count_as_true(fn):
    # tally.sum and count_nonzero gave 390 (the byte values) where NumPy gives 5; argmax 6, NumPy 0
    b = odd_bools()
    canon = b.view(np.uint8) != 0
    want = getattr(tally, fn)(canon)
    assert getattr(tally, fn)(b) == want
    assert getattr(tally, fn)(b[::-2]) == getattr(tally, fn)(canon[::-2])  # strided views too
    if fn in ("sum", "count_nonzero", "argmin", "argmax", "any", "all", "min", "max"):
        assert want == (np.count_nonzero(b) if fn == "count_nonzero" else getattr(np, fn)(b))


def test_bool_bytes_other_than_one_in_long_arrays_dot_and_add():
    # past the CPU backend's thread threshold, and the two-array operations
    rng = np.random.default_rng(7)
    raw = rng.choice(np.array([0, 0, 1, 2, 128, 255], dtype=np.uint8), size=200003)
    b, c = raw.view(np.bool_), raw[::-1].copy().view(np.bool_)
    bc, cc = raw != 0, raw[::-1] != 0
    for fn in ("sum", "count_nonzero", "mean", "var", "argmin", "argmax", "all", "any"):
        assert getattr(tally, fn)(b) == getattr(tally, fn)(bc), fn
    assert tally.sum(b) == int(np.count_nonzero(raw))
    assert tally.dot(b, c) == int(np.count_nonzero(bc & cc))
    out = tally.add(b, c)
    assert out.dtype == np.bool_ and set(np.unique(out.view(np.uint8))) <= {0, 1}  # written as 0 or 1
    np.testing.assert_array_equal(out, bc | cc)


@pytest.mark.parametrize("fn", ["sum", "mean", "var", "min", "max", "argmax"])
def test_bool_bytes_other_than_one_along_an_axis(fn):
    b = np.concatenate([odd_bools(), odd_bools()[::-1]]).reshape(2, 7)
    canon = b.view(np.uint8) != 0
    for axis in (0, 1):
        np.testing.assert_array_equal(getattr(tally, fn)(b, axis=axis), getattr(tally, fn)(canon, axis=axis))


def test_bool_bytes_other_than_one_in_dot_and_add():
    b = odd_bools()
    assert tally.dot(b, b) == 5 == np.count_nonzero(b)
    s = tally.add(b, np.zeros(b.shape, dtype=np.bool_))
    np.testing.assert_array_equal(s.view(np.uint8), (b.view(np.uint8) != 0).view(np.uint8))  # 0/1 bytes


def test_read_only_out_is_named():
    out = np.zeros(())
    out.flags.writeable = False
    with pytest.raises(ValueError, match=r"tally\.sum: out is read-only"):
        tally.sum(np.arange(3.0), out=out)
    out2 = np.zeros(3)
    out2.flags.writeable = False
    with pytest.raises(ValueError, match=r"tally\.max: out is read-only"):
        tally.max(np.ones((2, 3)), axis=0, out=out2)


def test_bad_ord_and_bad_a_are_named():
    for o in (1 + 0j, np.array([1, 2]), [1]):
        with pytest.raises(TypeError, match="tally.norm: ord must be"):
            tally.norm(np.ones(3), ord=o)
    for a in (None, np.array([1.0, 2.0]), [2.0]):
        with pytest.raises(TypeError, match="tally.axpy: a must be a real number"):
            tally.axpy(a, np.ones(2), np.ones(2))
    with pytest.raises(OverflowError, match="tally.scale: a = 1000.* is too large for a float"):
        tally.scale(10**400, np.ones(2))


# ---- result types and documented differences from NumPy ---------------------------------------

def test_sum_of_16_bit_floats_is_float32_never_float16():
    # documented: the default is float32 for float16 (and bfloat16) data, not x's type (numpy.sum
    # returns float16); the exact 2049 is not a float16
    x = np.array([2048, 1], dtype=np.float16)
    assert tally.sum(x) == 2049.0 and np.sum(x).dtype == np.float16 and float(np.float16(2049)) == 2048.0
    assert tally.sum(x.reshape(1, 2), axis=1).dtype == np.float32
    assert tally.sum(x, dtype=np.float64) == 2049.0
    for fn in (tally.sum, tally.dot):
        name = fn.__name__
        with pytest.raises(TypeError, match=rf"^tally\.{name}: a float16 {name} can give float32 or float64, not "
                                            rf"float16$"):
            fn(*([x] if name == "sum" else [x, x]), dtype=np.float16)


def test_dtype_messages_use_the_right_article():
    # "a int64 sum" read badly: an int64, a uint8 ("you-int"), a float32
    cases = [(np.int64, np.float32, "an int64 sum can give int64, not float32"),
             (np.uint8, np.float32, "a uint8 sum can give uint64, not float32"),
             (np.bool_, np.float64, "a bool sum can give int64, not float64"),
             (np.float32, np.int64, "a float32 sum can give float32 or float64, not int64")]
    for dt, want, msg in cases:
        with pytest.raises(TypeError, match=rf"^tally\.sum: {msg}$"):
            tally.sum(np.ones(2, dtype=dt), dtype=want)
    with pytest.raises(TypeError, match=r"^tally\.dot: an int32 dot can give int64, not float64$"):
        tally.dot(np.ones(2, dtype=np.int32), np.ones(2, dtype=np.int32), dtype=np.float64)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16])
def test_min_max_ties_of_signed_zeros_give_the_first(dt):
    # documented (kept, as argmin/argmax's first index): NumPy's choice between -0.0 and +0.0 differs
    for x, sign in (([0.0, -0.0], 1.0), ([-0.0, 0.0], -1.0)):
        a = np.array(x, dtype=dt)
        for fn in (tally.min, tally.max, tally.nanmin, tally.nanmax):
            r = fn(a)
            assert r == 0.0 and math.copysign(1.0, r) == sign, (fn.__name__, x)
        assert tally.argmin(a) == tally.argmax(a) == 0
    assert math.copysign(1.0, tally.min([0.0, -0.0])) == 1.0  # a list: the documented example
    m = np.array([[0.0, -0.0], [-0.0, 0.0]], dtype=dt)
    for fn in (tally.min, tally.max):
        np.testing.assert_array_equal(np.signbit(fn(m, axis=1)), [False, True])
        np.testing.assert_array_equal(np.signbit(fn(m, axis=0)), [False, True])


def test_dot_result_types_by_element_type():
    # documented per dtype; bool dot products count the indices where both are True
    t = [True, True]
    assert tally.dot(t, t) == 2 and type(tally.dot(t, t)) is int and np.dot(t, t) is np.True_
    assert tally.dot(np.array([True, False, True]), np.array([True, True, False])) == 1
    h = np.array([2048, 1], dtype=np.float16)
    assert tally.dot(h, np.ones(2, dtype=np.float16)) == 2049.0  # float32, not float16
    assert tally.dot(np.full(4, 127, dtype=np.int8), np.full(4, 127, dtype=np.int8)) == 4 * 127 * 127  # exact int64
    u = np.array([2**63, 1], dtype=np.uint64)
    assert tally.dot(u, np.array([1, 1], dtype=np.uint64)) == 2**63 + 1  # exact uint64
    assert type(tally.dot(np.ones(2, dtype=np.float32), np.ones(2, dtype=np.float32))) is float


def test_norm_of_int64_beyond_2_53_is_the_norm_of_the_float64_values():
    # documented: integers are converted to float64 first; exact up to 2^53, so correctly rounded
    # there, and 1 ulp off the true norm's rounding for some int64 data beyond it
    small = np.array([2**53, 1, 1], dtype=np.int64)
    assert tally.norm(small, 1) == float(2**53 + 2)
    x = np.array([702946541293190513, 843488751069501777, 630867603738954859], dtype=np.int64)
    exact = float(sum(int(v) for v in x))  # Python rounds the exact int sum correctly
    got = tally.norm(x, 1)
    assert got == tally.norm(x.astype(np.float64), 1)
    assert abs(got - exact) == math.ulp(exact)
    assert tally.norm(np.array([2**60 + 1], dtype=np.int64), np.inf) == float(2**60 + 1)  # ord=inf: exact


# ---- values that are not arrays, NumPy scalars written in place, other DLPack dtypes -------------

@pytest.mark.parametrize("axis", [None, 0])
def test_ints_outside_int64_and_uint64_are_named(axis):
    # used to say "unsupported dtype object"
    for v in (2**70, -2**63 - 1, 2**64):
        with pytest.raises(TypeError, match=rf"^tally\.sum: x is not an array of a supported type .*: {v} is an int "
                                            r"outside the int64 and uint64 ranges$"):
            tally.sum(v)
    with pytest.raises(TypeError, match=r"^tally\.sum: x is not an array of a supported type .*: NumPy converts this "
                                        r"list only to an array of Python objects \(dtype object: an element is an int "
                                        r"outside the int64 and uint64 ranges"):
        tally.sum([1, 2**70], axis=axis)
    assert tally.sum(2**64 - 1) == 2**64 - 1 and tally.sum(-2**63) == -2**63  # the ends that fit


def test_iterators_are_named():
    for it, name in ((iter([1]), "list_iterator"), ((v for v in [1.0]), "generator")):
        with pytest.raises(TypeError, match=rf"^tally\.max: x is not an array of a supported type .*: it is an "
                                            rf"iterator \({name}\), which NumPy does not read as an array: pass "
                                            r"list\(x\) or np\.fromiter\(x, dtype\)$"):
            tally.max(it)


def test_numpy_scalars_written_in_place_are_named():
    # tally.scale(2, np.float64(3)) said "x is read-only"
    with pytest.raises(TypeError, match=r"^tally\.scale: x is a NumPy scalar \(float64\), not a writable array"):
        tally.scale(2, np.float64(3))
    with pytest.raises(TypeError, match=r"^tally\.axpy: y is a NumPy scalar \(int32\), not a writable array"):
        tally.axpy(2, np.int32(1), np.int32(1))
    with pytest.raises(TypeError, match=r"^tally\.add: out is a NumPy scalar \(float32\)"):
        tally.add(np.float32(1), np.float32(2), out=np.float32(0))
    with pytest.raises(TypeError, match=r"^tally\.sum: out is a NumPy scalar \(float64\), not a writable array"):
        tally.sum([1.0], out=np.float64(0))
    z = np.array(3.0)  # a writable 0-d array is fine
    assert tally.scale(2, z) is z and float(z) == 6.0


class DLPackOnly:
    """A DLPack producer tally does not know (no dtype attribute): its dtype is seen in C++ only."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_unsupported_dlpack_dtypes_are_named():
    # "x has an unsupported dtype" used to leave the type out
    for dt, name in ((np.complex64, "complex64"), (np.complex128, "complex128")):
        with pytest.raises(TypeError, match=rf"^tally\.sum: x has unsupported dtype {name} \(float16, bfloat16"):
            tally.sum(DLPackOnly(np.zeros(3, dtype=dt)))
    assert tally.sum(DLPackOnly(np.arange(4.0))) == 6.0


def test_dot_and_add_convert_python_lists_together():
    # Python lists and scalars take NumPy's promotion (sixty-first session: each list was
    # converted alone, and [1.5, 2] . [3, 4] was a float64 / int64 mismatch)
    assert tally.dot([1.5, 2], [3, 4]) == np.dot([1.5, 2], [3, 4]) == 12.5
    assert tally.dot([1, 2], [3, 4]) == 11 and isinstance(tally.dot([1, 2], [3, 4]), int)
    r = tally.add([1.5, 2], [3, 4])
    assert r.dtype == np.float64 and np.array_equal(r, [4.5, 6.0])
    # one list beside an array: the array's dtype, where 'same_kind' allows
    x32 = np.array([0.5, 0.25], dtype=np.float32)
    assert tally.dot(x32, [2, 4]) == 2.0
    r = tally.add([1, 2], x32)
    assert r.dtype == np.float32 and np.array_equal(r, [1.5, 2.25])
    # a float list beside an int array is not converted, and two arrays never are
    with pytest.raises(ValueError, match="element type mismatch"):
        tally.dot(np.array([1, 2]), [1.5, 2.5])
    with pytest.raises(ValueError, match="element type mismatch"):
        tally.dot(np.array([1.0, 2.0]), np.array([1, 2]))
    # what NumPy cannot convert is still named as before
    with pytest.raises(TypeError, match="not an array of a supported type"):
        tally.dot([2**70, 1], [1, 2])


def test_add_of_matrices_is_a_matrix():
    m = np.matrix([[1.0, 2.0]])
    r = tally.add(m, m)
    assert isinstance(r, np.matrix) and np.array_equal(r, np.add(m, m))
    out = np.empty((1, 2))
    assert tally.add(m, m, out=out) is out


def test_private_layer_refuses_offsets_outside_x():
    # tally._tally's N-D loops take offsets the Python layer computes from x; given others
    # directly they refuse them (before: a segmentation fault or a read past x)
    import tally._tally as t
    x = np.arange(12.0)
    with pytest.raises(ValueError, match="reach outside x"):
        t.axis_batches("sum", x, 30, 4, 4, 1, np.zeros(1, np.int64), np.empty(30), None)
    with pytest.raises(ValueError, match="reach outside x"):
        t.axis_batches("sum", x, 3, 4, 4, 1, np.array([10**9], np.int64), np.empty(3), None)
    with pytest.raises(ValueError, match="reach outside x"):
        t.axis_batches("sum", x, 3, 4, -4, 1, np.zeros(1, np.int64), np.empty(3), None)
    with pytest.raises(ValueError, match="reach outside x"):
        t.slices("norm2", x, 4, np.array([0, 100], np.int64), 0, np.empty(2))
    with pytest.raises(ValueError, match="reach outside x"):
        t.slices("norm2", x, 4, np.array([-1], np.int64), 0, np.empty(1))
    with pytest.raises(ValueError, match="negative extent"):
        t.slices("norm2", x, -4, np.array([0], np.int64), 0, np.empty(1))
    # the offsets x's own shape gives are taken
    out = np.empty(3)
    t.axis_batches("sum", x, 3, 4, 4, 1, np.zeros(1, np.int64), out, None)
    assert np.array_equal(out, x.reshape(3, 4).sum(axis=1))
    o = np.empty(2)
    t.slices("norm1", x, 6, np.array([0, 6], np.int64), 0, o)
    assert np.array_equal(o, [15.0, 51.0])
