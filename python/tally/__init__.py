"""tally: parallel reductions with exact (correctly rounded) results, for NumPy, CuPy and
PyTorch arrays.

    >>> import numpy as np, tally
    >>> x = np.full(2**24 + 1, 1.0, dtype=np.float32)
    >>> tally.sum(x, dtype=np.float64)      # numpy's float32 sum would give 16777216.0
    16777217.0

Arrays (any shape, read flattened in C order; element types float16, bfloat16, float32,
float64, int8-int64, uint8-uint64 and bool; axpy and scale: not bool):

- NumPy arrays (and lists, scalars) and CPU torch tensors run on the CPU backend (OpenMP).
  NumPy has no bfloat16 of its own: NumPy bfloat16 arrays are ``ml_dtypes.bfloat16`` ones
  (the ``ml_dtypes`` package, which JAX and TensorFlow use), read zero copy as bfloat16; an
  array result of their type (add, axpy/scale in place, min/max along axes) is an
  ``ml_dtypes.bfloat16`` array.
- CuPy arrays and CUDA torch tensors run on the CUDA backend, zero copy (DLPack), on the
  library's *current* stream: ``cupy.cuda.get_current_stream()``,
  ``torch.cuda.current_stream(x.device)``. Other DLPack producers with CUDA data run on the
  legacy default stream; objects that only have ``__cuda_array_interface__`` on the stream it
  names. The arrays of one call must all be CUDA arrays or all host arrays.
- C-contiguous arrays are never copied. sum, mean, norm and min/max read any dense layout
  (``x.T``, Fortran order) in place; sum, mean, min, max, argmin, argmax and the nan forms
  read strided 1-D views (``x[::3]``, ``x[::-1]``) of float32, float64, int32 and int64 in
  place (host and CUDA arrays). Other layouts are
  copied to a contiguous array in their own library (numpy / cupy / torch, on the current
  stream) before the call. ``add``'s ``out`` is never copied (it must be C-contiguous).

Axis reductions (``axis=`` and ``keepdims=`` of sum, mean, min, max, argmin, argmax, the nan
forms, norm, var and std; NumPy's semantics): an int, a tuple of distinct ints (not for argmin,
argmax and norm, which take one int), negative axes, None for the whole array, on arrays of any
number of dimensions. Each output reduces all its elements at once: an exact sum or mean over a
tuple of axes is the correctly rounded value of all of them (one rounding, never a sum of
rounded partial sums); norm, var and std give, per output, the bits the whole-array function
gives for that slice. float32, float64, int32 and int64 data of any strides (C order, Fortran
order, transposes, ``x[::2, 1::3]``, negative strides, broadcasts) are read in place whenever
the reduced axes merge into one strided extent (any single axis; several when their strides
allow it); sum, mean, min, max and the arg/nan forms pass every element type (uint64
included) to the C++ layer as it is (which widens the narrow types exactly itself where it
does not read them in place: docs/types.md). Copies (in the array's own library, on its current stream) are made only for
reduced axes that do not merge (e.g. axes (0, 2) of a C-order 3-D array: one copy with them
moved last), for norm / var / std when the reduced elements of an output are not contiguous,
for norm of integers (converted to float64: exact up to 2^53 in magnitude) and, for ord 1 and
inf, of 16-bit floats (to float32, exactly), for exact var / std of CUDA arrays of 16-bit
floats, bool and integers up to 32 bits (converted exactly: see var), and for NumPy arrays in
big-endian byte order or with byte strides that are not a multiple of the item size. CUDA
arrays: every axis reduction runs on the GPU (exact sums and means with the CPU backend's
bits; norm, var and std: one call, so one stream synchronisation, per output; exact var/std
of int64/uint64 data: ValueError).
python/tally/_axis.py describes the layout.

Results: Python ``float`` / ``int`` for whole-array reductions (the call blocks until the
value is on the host); ``add`` and the axis reductions return an array of the input's library
(NumPy in, NumPy out; CuPy in, CuPy out; torch in, torch out; lists: NumPy), on the input's
device and allocated on the library's current stream, or ``add``'s ``out``. Axis results
have the whole-array result's dtype: sum float32 (float16, bfloat16, float32 x), float64,
int64 or uint64 (or ``dtype=``; never a 16-bit float, where NumPy gives float16), mean, norm,
var and std float32 or float64, min/max x's dtype (NumPy bfloat16 data: an
``ml_dtypes.bfloat16`` array), argmin/argmax int64. They block until written.
``numpy.matrix`` input gives a matrix along axes, as NumPy does: the reduced axis kept with
length 1 (``tally.sum(m, axis=0)`` has shape (1, n), ``axis=1`` (m, 1), ``axis=(0, 1)``
(1, 1); axis=None: a scalar), for every reduction but norm (numpy.linalg.norm returns plain
arrays; so does tally.norm).

Errors (tally::errc -> Python): unsupported dtype or device, or host and CUDA arrays mixed
(wrong_memory), NumPy masked arrays (their masked-out values would be read), values that are
not arrays of a supported type (an int outside the int64 and uint64 ranges, an iterator),
NumPy scalars where an array is written in place: TypeError naming the function and the
dtype or value. Length or shape mismatch, bad arguments (invalid_argument,
length_mismatch, null_pointer), argmin/argmax of nothing (empty_input): ValueError, with the
C++ message. Integer overflow (overflow): OverflowError. CUDA failures and the CUDA backend
without a GPU (cuda_error, no_gpu): RuntimeError. An axis out of range: AxisError (a
ValueError and IndexError, as NumPy); a repeated axis: ValueError; a tuple axis for argmin,
argmax (and the nan forms): TypeError; a tuple of more than one axis for norm (NumPy's matrix
norms): ValueError.
"""

from typing import Any, Literal, Optional, Tuple, Union

import numpy as np

from . import _axis, _tally
from ._out import check_index_out as _check_index_out
from ._out import into as _into
from ._arrays import empty_like, finish, prepare, prepare_out, dtype_name
from ._arrays import article as _article
from ._arrays import library as _library

__all__ = ["sum", "dot", "add", "mean", "norm", "min", "max", "minmax", "argmin", "argmax", "nanmin", "nanmax",
           "nanminmax", "nanargmin", "nanargmax", "var", "std", "count_nonzero", "any", "all", "axpy", "scale",
           "cuda_available"]

Accuracy = Literal["exact", "fast"]


def _out_dtype(dtype, name: str, fn: str) -> str:
    if dtype is None:
        return ""
    out = dtype_name(dtype)
    floating = name.startswith("float") or name == "bfloat16"
    integer = "uint64" if name.startswith("uint") else "int64"  # (bool: int64, the count of trues)
    if (floating and out not in ("float32", "float64")) or (not floating and out != integer):
        allowed = "float32 or float64" if floating else integer
        raise TypeError(f"tally.{fn}: {_article(name)} {name} {fn} can give {allowed}, not {out}")
    return out


def _accuracy(accuracy, fn: str) -> str:
    if accuracy not in ("exact", "fast"):
        raise ValueError(f"tally.{fn}: accuracy must be 'exact' or 'fast', not {accuracy!r}")
    return accuracy


def _sum_default(name: str) -> str:
    if name in ("float16", "bfloat16", "float32"):
        return "float32"
    if name == "float64":
        return "float64"
    return "uint64" if name.startswith("uint") else "int64"


def _mean_dtype(dtype, name: str) -> str:
    if dtype is None:
        return "float32" if name in ("float32", "float16", "bfloat16") else "float64"
    out = dtype_name(dtype)
    if out not in ("float32", "float64"):
        raise TypeError(f"tally.mean: the mean is float32 or float64, not {out}")
    return out


Axis = Union[None, int, Tuple[int, ...]]


def sum(x, *, dtype=None, accuracy: Accuracy = "exact", axis: Axis = None, keepdims: bool = False, out=None) -> Any:
    """Sum of all elements of `x`, or along `axis` (numpy.sum's axis and keepdims).

    x: array of any shape (read flattened for axis=None), element type float32, float64, int32
        or int64 (others: see below): NumPy (CPU backend), CuPy or CUDA torch (CUDA backend,
        on the current stream), CPU torch, any DLPack or __cuda_array_interface__ array, or
        a list.
    dtype: result / accumulator type: float32 or float64 for floating x; the default is
        float64 for float64 x and float32 for float32, float16 and bfloat16 x (there is no
        16-bit result: dtype=float16 or bfloat16 is a TypeError, unlike numpy.sum, which
        returns float16 for float16 data); float32 data with dtype=float64 give the correctly
        rounded float64 sum. int64 for signed integer and bool x, uint64 for unsigned x (the
        only choice and the default; accumulated exactly in 128 bits).
    accuracy: "exact" (default): the exact sum rounded once to `dtype`, to nearest with ties to
        even: correctly rounded, so the same bits on every backend, GPU, launch shape and thread
        count (float32 in float64 exponent bins: Demmel, Hida, SIAM J. Sci. Comput. 25(4),
        2003; float64 by error-free extraction into anchored levels: Demmel, Nguyen, IEEE
        Trans. Computers 64(7), 2015; a Kulisch superaccumulator behind them). "fast": a
        float64 accumulator tree, within the error bound documented in tally.hpp; the bits may
        differ between backends.
    axis: None (default): the whole array. An int (negative: from the end) or a tuple of
        distinct ints: one sum per index of the other axes, over all the elements of the
        given axes at once, with the accumulator and rounding of the whole-array sum (exact:
        each output correctly rounded, ONE rounding even over several axes; it equals
        math.fsum of those elements for float64). float32/float64/int32/int64 data of any
        strides are read in place when the reduced axes merge into one strided extent (a
        single axis always does); otherwise the array is copied once, in its library, with the
        reduced axes moved last. Every element type goes to the C++ layer as it is (the
        narrow ones widened exactly there where not read in place; uint64 sums exact, an
        output past 2^64 - 1 an OverflowError). Returns an
        array of x's library (NumPy, CuPy or torch, on x's device, allocated on the
        library's current stream) of `dtype` and the kept axes' shape; each output empty
        (a length-0 axis) is 0. CUDA arrays are reduced on the GPU (exact sums: the CPU
        backend's bits). Axes covering every dimension: the whole-array sum.
    keepdims: keep the reduced axes with length 1 (the result broadcasts against x); with
        axis=None an array of shape (1,) * x.ndim.

    Returns a Python float (floating x) or int (integer x) for the whole array. Empty x: 0.0 (0
    for integers); a sum of negative zeros is -0.0; NaN and infinities follow IEEE. Blocks until
    the value (or every output) is written (after the work queued before it on the stream).
    Raises TypeError (unsupported dtype, a non-integer axis), ValueError (bad accuracy, a
    repeated axis), OverflowError (the exact integer sum, or one per output, does not fit in
    int64, uint64 for unsigned x), AxisError (a ValueError and IndexError, as NumPy) for an axis out of range.
    out: None (default), or an array to write the result into, returned instead of a new one
        (numpy.sum's out): of the result's library and device (NumPy for host x; CuPy or torch
        on x's device), of the result's shape (() for a whole-array sum), and of a dtype the
        result casts to under NumPy's 'same_kind' rule (stricter than numpy.sum, which casts
        into out unsafely: a float result into an integer out is refused, not truncated). The result is computed as without out
        and then copied in by out's library (not zero copy). Wrong library, device, shape or
        dtype: TypeError or ValueError naming it.
    """
    acc = _accuracy(accuracy, "sum")
    axes = _axis.normalize(x, axis, "sum", keepdims=keepdims, scalar_axis=True)
    if not _axis.is_whole(x, axes):
        return _into(out, _axis.sum(x, axes, lambda name: _out_dtype(dtype, name, "sum") or _sum_default(name), acc, keepdims), x, "sum")
    floating = ("float32", "float64")
    a = prepare(x, "sum", order_free=True,
                strided_ok=lambda cuda, name: True)
    rt = _out_dtype(dtype, a.dtype, "sum")
    backend, stream = finish(a)
    if a.strided:
        value = _tally.sum_strided(a.view, rt, acc, backend, stream)
    else:
        value = _tally.sum(a.view, rt, acc, backend, stream)
    rt = rt or _sum_default(a.dtype)
    return _into(out, _axis.whole(x, value, rt, "sum", keepdims, axes), x, "sum", rt)


def _plain(v) -> bool:
    """A Python list, tuple or scalar (no array of its own: NumPy picks its dtype)."""
    return isinstance(v, (list, tuple, int, float, bool))


def _together(x, y):
    """dot's and add's x and y, with Python lists, tuples and scalars converted by NumPy's
    promotion: both plain, to their common type (tally.dot([1.5, 2], [3, 4]) is 12.5, as
    numpy.dot); one plain beside a NumPy array, to the array's dtype when NumPy's 'same_kind'
    rule allows it ([1, 2] beside float32 data). Arrays themselves are never converted: two
    arrays of different dtypes stay an error."""
    if _plain(x) and _plain(y):
        px, py = np.asarray(x), np.asarray(y)
        t = np.result_type(px, py)
        if px.dtype == object or py.dtype == object or t == object:
            return x, y  # (prepare names what NumPy could not convert)
        return np.asarray(x, dtype=t), np.asarray(y, dtype=t)
    for plain, other, first in ((x, y, True), (y, x, False)):
        if _plain(plain) and isinstance(other, np.ndarray):
            p = np.asarray(plain)
            if p.dtype != other.dtype and p.dtype != object and np.can_cast(p.dtype, other.dtype, casting="same_kind"):
                p = np.asarray(plain, dtype=other.dtype)
            return (p, y) if first else (x, p)
    return x, y


def dot(x, y, *, dtype=None, accuracy: Accuracy = "exact", out=None) -> Union[float, int]:
    """Dot product: the sum of x[i] * y[i] over the flattened arrays.

    x, y: arrays of n elements each (any shapes with the same element count, read flattened
        in C order), of one element type (any supported one), both host or both CUDA arrays
        (the CUDA call runs on x's library's current stream).
    dtype, accuracy: as in `sum`. In exact mode every product is exact too (TwoProduct: Ogita,
        Rump, Oishi, SIAM J. Sci. Comput. 26(6), 2005), so the result is the correctly rounded
        exact dot product at any condition number; integer dot products are exact (192-bit
        accumulator for int64).

    Returns, by element type (the result type is the default of dtype=, as for `sum`):
        float64: a Python float, the float64 result (dtype=float32: rounded once to float32);
        float32, float16, bfloat16: a Python float holding a float32 result (dtype=float64:
            the correctly rounded float64 dot product; no 16-bit result);
        int8, int16, int32, int64: a Python int, the exact int64 result;
        uint8, uint16, uint32, uint64: a Python int, the exact uint64 result;
        bool: a Python int (int64), the number of indices where x and y are both True:
            tally.dot([True, True], [True, True]) is 2, where numpy.dot gives True (NumPy's
            bool dot is a logical or of ands); compare with 0 for NumPy's answer.
    0.0 (0) for empty inputs. Blocks until the value is on the host. Deterministic in exact
    mode (the same bits everywhere).
    Python lists, tuples and scalars are converted by NumPy's promotion (both plain: their
    common type, so tally.dot([1.5, 2], [3, 4]) is 12.5; one beside a NumPy array: the
    array's dtype where NumPy's 'same_kind' rule allows); two arrays are never converted.
    Raises ValueError when the lengths or element types differ, TypeError for unsupported
    dtypes or host and CUDA arrays mixed, OverflowError when the exact integer result does
    not fit in int64 (uint64 for unsigned data).
    out: an array to write the result into (returned), as `sum`'s out.
    """
    x, y = _together(x, y)
    a, b = prepare(x, "dot", "x"), prepare(y, "dot", "y")
    if a.dtype != b.dtype:
        raise ValueError(f"tally.dot: element type mismatch: x is {a.dtype}, y is {b.dtype}")
    if a.size != b.size:
        raise ValueError(f"tally.dot: length mismatch: x has {a.size} elements, y has {b.size}")
    rt = _out_dtype(dtype, a.dtype, "dot")
    acc = _accuracy(accuracy, "dot")
    backend, stream = finish(a, b)
    return _into(out, _tally.dot(a.view, b.view, rt, acc, backend, stream), x, "dot", rt or _sum_default(a.dtype))


def add(x, y, *, out: Optional[Any] = None) -> Any:
    """Element-wise x + y; returns `out`, or a new array of x's library, shape and dtype.

    x, y: arrays of one shape (no broadcasting) and one element type (any: float16 / bfloat16
        sums rounded once from the exact sum; integers checked; bool: logical or, as
        numpy.add), both host or both CUDA arrays. Python lists, tuples and scalars are
        converted as `dot` converts them; two arrays are never converted.
    out: optional C-contiguous array of that shape and dtype, written in place (it may be x
        or y itself; partial overlap is a ValueError). Without it the result is a new NumPy,
        CuPy or torch array (CuPy / torch: on x's device, allocated on the current stream);
        other array types need out=.

    Floating CUDA arrays: the add is queued on the current stream and not waited for, like the
    library's own `+`. Integer CUDA arrays and host arrays: blocks until done. Each element is
    correctly rounded (IEEE addition), so the result is the same on every backend.
    Raises ValueError (shape or dtype mismatch, bad out), TypeError (unsupported dtype, mixed
    host and CUDA arrays), OverflowError (an integer element overflowed; out then holds
    wrapped values).
    """
    x, y = _together(x, y)
    a, b = prepare(x, "add", "x"), prepare(y, "add", "y")
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"tally.add: shape mismatch: x has shape {tuple(a.shape)}, y has shape {tuple(b.shape)}")
    if a.dtype != b.dtype:
        raise ValueError(f"tally.add: element type mismatch: x is {a.dtype}, y is {b.dtype}")
    result = out if out is not None else empty_like(a)
    o = prepare_out(result, a)
    backend, stream = finish(a, b, o)
    _tally.add(a.view, b.view, o.view, backend, stream)
    if out is None and isinstance(x, np.matrix) and isinstance(result, np.ndarray):
        return result.view(np.matrix)  # (numpy.add of matrices is a matrix, as the axis results are)
    return result


def mean(x, *, dtype=None, axis: Axis = None, keepdims: bool = False, out=None) -> Any:
    """Arithmetic mean of all elements of `x` (any shape, read flattened), or along `axis`:
    the exact sum divided by n, correctly rounded to `dtype` (one rounding: the same bits on
    every backend and thread count; an exact long division of the superaccumulator). The
    exact sum is `sum`'s (float32 in float64 exponent bins: Demmel, Hida, SIAM J. Sci. Comput.
    25(4), 2003; float64 by error-free extraction into anchored levels: Demmel, Nguyen, IEEE
    Trans. Computers 64(7), 2015; a Kulisch superaccumulator behind them).

    x: array of any supported dtype: NumPy (CPU backend), CuPy or CUDA torch (CUDA backend, on
        the array library's current stream). A strided 1-D view is read in place.
    dtype: float32 or float64; default float32 for float16, bfloat16 and float32 x, float64
        otherwise. Empty x: NaN (NumPy warns and returns NaN). Blocks.
    axis: None (default): a Python float. An int or a tuple of distinct ints (numpy.mean's
        axis): an array of x's library of `dtype` and the kept axes' shape, each output the
        exact sum of ALL its elements divided by their count, correctly rounded (NaN for an
        empty one); layouts, copies and element types as `sum`. CUDA arrays: on the GPU, with
        the CPU backend's bits.
    keepdims: keep the reduced axes with length 1.
    Raises TypeError for unsupported dtypes, AxisError for an axis out of range, ValueError for
    a repeated axis.
    out: an array to write the result into (returned), as `sum`'s out.
    """
    axes = _axis.normalize(x, axis, "mean", keepdims=keepdims)
    if not _axis.is_whole(x, axes):
        return _into(out, _axis.mean(x, axes, lambda name: _mean_dtype(dtype, name), keepdims), x, "mean")
    a = prepare(x, "mean", order_free=True,
                strided_ok=lambda cuda, name: True)
    rt = _mean_dtype(dtype, a.dtype)
    backend, stream = finish(a)
    if a.strided:
        value = _tally.mean_strided(a.view, rt, backend, stream)
    else:
        value = _tally.mean(a.view, rt, backend, stream)
    return _into(out, _axis.whole(x, value, rt, "mean", keepdims, axes), x, "mean")


_CORE = ("float32", "float64", "int32", "int64")


def _as_core(a, fn: str):
    """`a` converted, in its own library, to the nearest core type that holds every value exactly
    (16-bit floats to float32, small integers and bool to int64), for the operations whose C++
    layer takes only float32, float64, int32 and int64; uint64 has no such type (TypeError)."""
    if a.dtype in _CORE:
        return a
    if a.dtype == "uint64":
        raise TypeError(f"tally.{fn}: uint64 is not supported here (float32, float64, int32, int64, and the "
                        "smaller types that convert to them exactly)")
    return _converted(a, "float32" if a.dtype in ("float16", "bfloat16") else "int64", fn)



def _float_out(dtype, fn: str, what: str) -> str:
    out = dtype_name(dtype)
    if out not in ("float32", "float64"):
        raise TypeError(f"tally.{fn}: {what} is float32 or float64, not {out}")
    return out


def _norm_ord(ord) -> str:
    if not (ord is None or isinstance(ord, (str, int, float, np.integer, np.floating))):
        raise TypeError(f"tally.norm: ord must be 1, 2 (or None) or inf, not {type(ord).__name__} {ord!r}")
    if isinstance(ord, str) and ord == "inf" or (not isinstance(ord, str) and ord == np.inf):
        return "inf"
    if ord is None or (not isinstance(ord, (str, bool, np.bool_)) and ord in (1, 2)):
        return "2" if ord is None else str(int(ord))
    raise ValueError(f"tally.norm: ord must be 1, 2 (or None) or inf, not {ord!r} (tally computes the L1, L2 and max "
                     "vector norms only)")


def norm(x, ord=2, *, dtype=None, accuracy: Accuracy = "exact", axis: Union[None, int, Tuple[int]] = None,
         keepdims: bool = False, out=None) -> Any:
    """Vector norm of all elements of `x` (any shape, read flattened), or of each slice along
    one axis (numpy.linalg.norm's vector norms), correctly rounded to `dtype` (float32 or
    float64; default float64 for float64 x, float32 for the other floating types). Integer x
    is converted to float64 first (in its own library), which is exact for elements of
    magnitude up to 2^53 (every type but int64 and uint64 is always exact); int64/uint64
    elements beyond that are rounded to float64 there, so the result is the correctly
    rounded norm of the rounded values and can be 1 ulp off the correctly rounded norm of the
    true values (ord=inf stays exact: rounding keeps the order).

    ord=2 (default; None is the same): Euclidean norm, the square root of the exact sum of
        squares, rounded once; no overflow or underflow on the way: norm([1e200, 1e200]) is
        1.414...e200 (numpy.linalg.norm: inf). Always exact (accuracy is not consulted): the
        exact dot of x with itself (a float64 square as its rounded value and TwoProduct
        error term: Ogita, Rump, Oishi, SIAM J. Sci. Comput. 26(6), 2005; narrower squares are
        exact in float64; all summed exactly as `sum` does), then the correctly rounded square
        root of that exact value.
    ord=1: sum |x|, the exact sum rounded once (accuracy="fast": a float64 accumulator).
    ord=inf (np.inf or "inf"): max |x|, exact; NaN anywhere gives NaN.
    Other ords (-inf, 0, 3, "fro", ...): ValueError naming the ord.
    x: NumPy (CPU backend), CuPy or CUDA torch (CUDA backend, on the array library's current
        stream). The norm of nothing is 0. NaN gives NaN; an infinity gives inf. Blocks; exact
        results are the same bits on every backend.
    axis: None (default): the whole array, a Python float. An int (or a 1-tuple): an array of
        x's library, of `dtype` and the kept axes' shape, each output exactly the bits
        tally.norm gives for its slice x[..., i, ...]. Each output is one 1-D call on its
        slice, read in place when the slices are contiguous (the axis has stride 1, e.g. the
        last axis of a C-order array), else after one copy with the axis moved last (in x's
        library). On CUDA arrays: one stream synchronisation per output (the results are
        gathered on the host and copied to the device once). A tuple of two or more axes
        (numpy's matrix norms): ValueError.
    keepdims: keep the reduced axis with length 1.
    Raises ValueError for another ord or a matrix-norm axis, TypeError for unsupported dtypes,
    AxisError for an axis out of range.
    out: an array to write the result into (returned), as `sum`'s out.
    """
    o = _norm_ord(ord)
    acc = _accuracy(accuracy, "norm")
    if isinstance(axis, tuple) and len(axis) != 1:
        raise ValueError(f"tally.norm: axis={axis!r}: numpy.linalg.norm computes matrix norms over a 2-tuple of axes; "
                         "tally computes vector norms only: give one axis (or axis=None for the flattened array)")
    rt = _float_out(dtype, "norm", "the norm") if dtype is not None else None
    axes = _axis.normalize(x, axis, "norm", keepdims=keepdims)
    if not _axis.is_whole(x, axes):
        def widen(name):
            if not name.startswith("float") and name != "bfloat16":
                return "float64"
            return "float32" if o != "2" and name in ("float16", "bfloat16") else None
        r = _axis.per_slice(x, axes, {"1": "norm1", "2": "norm2", "inf": "norminf"}[o], "norm", widen,
                            lambda name: rt or ("float64" if name == "float64" else "float32"), acc, keepdims)
        return _into(out, r, x, "norm")
    a = prepare(x, "norm", order_free=True)
    if not a.dtype.startswith("float") and a.dtype != "bfloat16":  # integers: float64, in their own library
        f = a.flat
        a = prepare(f.double() if hasattr(f, "double") else f.astype("float64"), "norm")
    rt = rt or ("float64" if a.dtype == "float64" else "float32")
    if o != "2":  # (the L1 and max norms take float32 and float64; 16-bit floats convert exactly)
        a = _as_core(a, "norm")
    backend, stream = finish(a)
    return _into(out, _axis.whole(x, _tally.norm_ord(a.view, o, rt, acc, backend, stream), rt, "norm", keepdims), x, "norm")


def _on_gpu(x) -> bool:
    """Whether x is CUDA data (CuPy, CUDA torch, a CUDA DLPack or __cuda_array_interface__ object)."""
    lib = _library(x)
    if lib == "torch":
        return x.device.type == "cuda"
    if lib in ("cupy", "cai"):
        return True
    if lib == "dlpack":
        return int(x.__dlpack_device__()[0]) in (2, 13)  # kDLCUDA, kDLCUDAManaged
    return False


def _exact_gpu_var_type(name: str) -> Optional[str]:
    """The exact conversion for an exact var/std of GPU data (None: none). The GPU's exact states
    take float32/float64: 16-bit floats become float32, bool and integers up to 32 bits float64
    (exact); int64 and uint64 go as they are, and the C++ layer refuses them by name. (The C++
    layer widens the other types itself too, all to a float64 copy on the device; converting
    here first gives the same bits, with 4-byte copies of the 16-bit floats.)"""
    if name in ("float16", "bfloat16"):
        return "float32"
    if name in ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32"):
        return "float64"
    return None


def _converted(a, target: str, fn: str):
    """`a` converted to dtype `target` in its own library (one copy), prepared again."""
    f = a.flat
    if a.lib == "torch":
        import torch
        return prepare(f.to(getattr(torch, target)), fn)
    return prepare(f.astype(target), fn)


def _var(x, ddof, dtype, accuracy, take_sqrt: bool, axis, keepdims: bool) -> Any:
    fn = "std" if take_sqrt else "var"
    if isinstance(ddof, bool) or not isinstance(ddof, (int, np.integer)):
        raise TypeError(f"tally.{fn}: ddof must be an integer, not {type(ddof).__name__}")
    if not -2**63 <= int(ddof) < 2**63:  # (the C++ layer's int64; nanobind would list signatures)
        raise ValueError(f"tally.{fn}: ddof = {ddof} does not fit in int64")
    acc = _accuracy(accuracy, fn)
    out = _float_out(dtype, fn, "the result") if dtype is not None else None
    axes = _axis.normalize(x, axis, fn, keepdims=keepdims)
    if not _axis.is_whole(x, axes):
        # The C++ layer takes every dtype on the cpu backend and in fast mode; exact var on the
        # GPU takes float32/float64 (the others widened exactly; int64/uint64 refused there).
        exact_gpu = acc == "exact" and _on_gpu(x)
        return _axis.per_slice(x, axes, fn, fn, lambda name: _exact_gpu_var_type(name) if exact_gpu else None,
                               lambda name: out or ("float32" if name in ("float32", "float16", "bfloat16") else
                                                    "float64"), acc, keepdims, int(ddof))
    a = prepare(x, fn, order_free=True)
    small_float = a.dtype in ("float32", "float16", "bfloat16")
    target = _exact_gpu_var_type(a.dtype) if a.cuda and acc == "exact" else None
    if target is not None:  # (the C++ layer takes every dtype on the cpu backend and in fast mode)
        a = _converted(a, target, fn)
    out = out or ("float32" if small_float else "float64")
    backend, stream = finish(a)
    return _axis.whole(x, _tally.var(a.view, int(ddof), take_sqrt, out, acc, backend, stream), out, fn, keepdims, axes)


def var(x, *, ddof: int = 0, dtype=None, accuracy: Accuracy = "exact", axis: Axis = None,
        keepdims: bool = False, out=None) -> Any:
    """Variance of all elements of `x` (read flattened), or along `axis`: sum (x - mean)^2 /
    (n - ddof), NumPy's ddof. accuracy="exact" (default): (n S2 - S1^2) / (n (n - ddof)) from
    the exact sums of x and x^2, formed exactly and rounded once (correctly rounded; no
    overflow or underflow on the way; the same bits on both backends; int64 and uint64 CUDA
    arrays raise ValueError naming the cuda backend in this version). accuracy="fast":
    Welford per thread merged by Chan et al. (1979), both backends.
    dtype: float32 or float64 (default float32 for float16, bfloat16 and float32 x, float64
        otherwise). Every dtype (float16, bfloat16, int8-uint64 up to 2**64 - 1, bool as 0/1) is
        read as it is on the host and in fast mode. Exact var of CUDA arrays: float16 /
        bfloat16 are converted to float32 and bool and integers up to 32 bits to float64 first
        (exactly, one copy on the GPU, so the same bits as on the host); int64 and uint64 are
        refused (ValueError: use accuracy="fast" or host data).
    n - ddof <= 0 gives NaN (NumPy: NaN or inf, with a warning); NaN or an infinity in x gives
    NaN. Blocks.
    axis: None (default): a Python float. An int or a tuple of distinct ints (numpy.var's
        axis): an array of x's library, of `dtype` and the kept axes' shape, each output
        exactly the bits tally.var gives for the flattened elements of its slice (one
        rounding over all its axes). Each output is one 1-D call on its slice, read in place
        when the slice is contiguous (e.g. the last axes of a C-order array), else after one
        copy with the reduced axes moved last (in x's library). On CUDA arrays: one stream
        synchronisation per output (results gathered on the host, copied to the device once).
    keepdims: keep the reduced axes with length 1.
    Raises TypeError (an unsupported dtype; a non-integer ddof or axis), AxisError,
    ValueError (a repeated axis, bad accuracy; int64 or uint64 in exact mode on a CUDA array).
    out: an array to write the result into (returned), as `sum`'s out.
    """
    return _into(out, _var(x, ddof, dtype, accuracy, False, axis, keepdims), x, "var")


def std(x, *, ddof: int = 0, dtype=None, accuracy: Accuracy = "exact", axis: Axis = None,
        keepdims: bool = False, out=None) -> Any:
    """Standard deviation: the square root of `var` (same arguments, axis and keepdims
    included); in exact mode the correctly rounded square root of the exact variance (one
    rounding in all), per output along an axis."""
    return _into(out, _var(x, ddof, dtype, accuracy, True, axis, keepdims), x, "std")


def count_nonzero(x) -> int:
    """Number of elements of `x` that are not zero, as numpy.count_nonzero(x) with no axis.

    x: array of any shape and any supported dtype (float16, bfloat16, float32, float64,
        int8-int64, uint8-uint64, bool), any strides: NumPy (CPU backend), CuPy or CUDA torch
        (CUDA backend, on the library's current stream), or a list. A NaN is nonzero; -0.0 is
        zero; a bool's byte counts when nonzero, as NumPy reads it.
    Returns a Python int: the exact count (accumulated in 64 bits), the same on every backend
    and launch shape. Empty x: 0. Blocks until the count is known.
    Raises TypeError (an unsupported dtype or object, a masked array), RuntimeError (a CUDA
    failure, or CUDA arrays without a usable GPU).
    """
    a = prepare(x, "count_nonzero", order_free=True)
    backend, stream = finish(a)
    return int(_tally.count_nonzero(a.view, backend, stream))


def any(x) -> bool:
    """Whether some element of `x` is nonzero, as numpy.any(x) with no axis (count_nonzero(x)
    > 0: every element is read, there is no early exit).

    x: as count_nonzero (any shape, dtype and strides; NumPy, CuPy, CUDA torch, a list). A NaN
        is nonzero; -0.0 is zero.
    Returns a Python bool; False for an empty array. The same on every backend. Blocks.
    Raises as count_nonzero: TypeError (unsupported dtype or object), RuntimeError (CUDA).
    """
    return count_nonzero(x) > 0


def all(x) -> bool:
    """Whether every element of `x` is nonzero, as numpy.all(x) with no axis (the exact count
    of nonzero elements equals x.size: every element is read, there is no early exit).

    x: as count_nonzero (any shape, dtype and strides; NumPy, CuPy, CUDA torch, a list). A NaN
        is nonzero; -0.0 is zero.
    Returns a Python bool; True for an empty array. The same on every backend. Blocks.
    Raises as count_nonzero: TypeError (unsupported dtype or object), RuntimeError (CUDA).
    """
    a = prepare(x, "all", order_free=True)
    backend, stream = finish(a)
    return int(_tally.count_nonzero(a.view, backend, stream)) == a.size


def _scalar(a, dtype: str, fn: str):
    """(a_float, a_int) for _tally.axpy/scale: a as x's dtype, or ValueError if it does not fit.
    (float16 / bfloat16: the C++ layer rounds a_float once to the type, as NumPy converts a
    Python float; uint64: a_int carries a's 64 bits.)"""
    if dtype == "bool":
        return 0.0, 0  # (the C++ layer refuses bool by name)
    # float() would parse a string ("2") and drop a NumPy complex's imaginary part: refused
    kind = getattr(getattr(a, "dtype", None), "kind", None)
    if (isinstance(a, (str, bytes, bytearray, complex)) or kind not in (None, "b", "i", "u", "f")
            or not (isinstance(a, (int, float, np.integer, np.floating, np.bool_)) or getattr(a, "ndim", None) == 0)):
        raise TypeError(f"tally.{fn}: a must be a real number (a Python or NumPy scalar), not {type(a).__name__}"
                        + (f" of dtype {a.dtype}" if kind is not None else ""))
    if dtype.startswith("float") or dtype == "bfloat16":
        try:
            return float(a), 0
        except OverflowError:
            raise OverflowError(f"tally.{fn}: a = {a} is too large for a float") from None
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
        raise TypeError(f"tally.{fn}: a must be an integer for {dtype} arrays, not {type(a).__name__}")
    info = np.iinfo(dtype)
    if not info.min <= int(a) <= info.max:
        raise ValueError(f"tally.{fn}: a = {a} does not fit in {dtype}")
    return 0.0, int(a) - (1 << 64) if int(a) >= 1 << 63 else int(a)


def axpy(a, x, y):
    """y = a * x + y in place (BLAS axpy); returns y. x, y: arrays of one library, shape and
    dtype (any dtype but bool; y C-contiguous and writable: NumPy, CuPy or CUDA torch).
    Floating: fma(a, x, y), rounded once (the same bits on every backend); float16 / bfloat16:
    a is rounded to the type (as NumPy does), then the exact a*x + y rounded once to it.
    Integers (int8-uint64): exact; OverflowError naming the first index whose result does not
    fit (y then holds the wrapped values). bool: ValueError (NumPy would change the type). y
    may be x itself. On CUDA arrays it runs on the library's current stream and blocks.
    """
    xa = prepare(x, "axpy")
    ya = prepare_out(y, xa, "axpy", "y")
    af, ai = _scalar(a, xa.dtype, "axpy")
    backend, stream = finish(xa, ya)
    _tally.axpy(af, ai, xa.view, ya.view, backend, stream)
    return y


def scale(a, x):
    """x = a * x in place (BLAS scal); returns x.

    a: a Python or NumPy real scalar, converted to x's dtype (floating x: rounded once to the
        type, as NumPy converts a Python float; integer x: a must be an integer that fits the
        dtype: a float a is a TypeError, an integer out of range a ValueError).
    x: C-contiguous, writable array of any shape, element type float16, bfloat16, float32,
        float64 or int8-uint64 (not bool: ValueError, NumPy would change the type): NumPy (CPU
        backend), CuPy or CUDA torch (CUDA backend, on the library's current stream).
    Each element becomes a * x[i] rounded once to x's dtype (float16 / bfloat16: the exact
    product rounded once), so the same bits on every backend; integers exactly. Empty x: returned
    unchanged. Blocks until x is written.
    Raises TypeError (a not a real scalar, a float a for integer x, an unsupported dtype or
    object), ValueError (bool x, a read-only or non-contiguous x, a out of the integer dtype's
    range), OverflowError
    (an integer product that does not fit, naming the first such index; x then holds the wrapped
    values, as axpy's y), RuntimeError (a CUDA failure, or CUDA arrays without a GPU).
    """
    xa = prepare(x, "scale")
    xo = prepare_out(x, xa, "scale", "x")
    af, ai = _scalar(a, xa.dtype, "scale")
    backend, stream = finish(xo)
    _tally.scale(af, ai, xo.view, backend, stream)
    return x


def _extreme(x, is_max: bool, skip_nan: bool, fn: str, order_free: bool):
    a = prepare(x, fn, order_free=order_free, strided_ok=lambda cuda, name: True)
    backend, stream = finish(a)
    if a.strided:
        value, index = _tally.extreme_strided(is_max, skip_nan, a.view, backend, stream)
    else:
        value, index = _tally.extreme(is_max, skip_nan, a.view, backend, stream)
    return value, index, a


def _value(x, is_max: bool, skip_nan: bool, fn: str, axis, keepdims: bool, out):
    axes = _axis.normalize(x, axis, fn, keepdims=keepdims, scalar_axis=True)
    if not _axis.is_whole(x, axes):
        return _into(out, _axis.extreme(x, axes, is_max, skip_nan, False, fn, keepdims), x, fn)
    value, _, a = _extreme(x, is_max, skip_nan, fn, True)
    if a.reordered and isinstance(value, float) and value == 0:
        # a -0.0 / +0.0 tie met in memory order: the first zero in C order gives the sign
        value, _, a = _extreme(x, is_max, skip_nan, fn, False)
    return _into(out, _axis.whole(x, value, a.dtype, fn, keepdims, axes), x, fn, a.dtype)


def _index(x, is_max: bool, skip_nan: bool, fn: str, axis, keepdims: bool):
    axes = _axis.normalize(x, axis, fn, single=True, keepdims=keepdims, scalar_axis=True)
    if not _axis.is_whole(x, axes):
        return _axis.extreme(x, axes, is_max, skip_nan, True, fn, keepdims)
    _, index, a = _extreme(x, is_max, skip_nan, fn, False)
    if index < 0:
        raise ValueError(f"tally.{fn}: " + ("x is empty" if a.size == 0 else "x holds only NaN")
                         + ", so there is no index to return")
    return _axis.whole(x, index, "int64", fn, keepdims, axes)


def min(x, *, axis: Axis = None, keepdims: bool = False, out=None) -> Any:
    """Smallest element of `x` (any shape, read flattened; host or CUDA array), as a Python
    float or int of x's type; or along `axis` (numpy.min's axis and keepdims).

    NaN rule (NumPy's): a NaN anywhere gives NaN (see nanmin). Empty x gives +inf (integers:
    the type's largest value; NumPy raises instead). Exact (comparisons only) and
    deterministic: the same answer on every backend. Blocks until the value is on the host.
    Signed zeros: -0.0 and +0.0 compare equal, so when they tie for the minimum the FIRST of
    them (in C order; per output along an axis) is returned with its own sign, the element
    argmin points to: tally.min([0.0, -0.0]) is 0.0 and tally.min([-0.0, 0.0]) is -0.0
    (numpy.min's choice between them differs; compare with math.copysign if it matters). The
    same for max and the nan forms.
    A strided 1-D view (x[::3], x[::-1]) is read in place.
    axis: None (default): the whole array, a Python scalar. An int or a tuple of distinct ints:
        an array of x's library and dtype (NumPy, CuPy or torch, on x's device, allocated on
        the library's current stream) of the kept axes' shape, each output the min of all the
        elements of its slice under the same NaN rule; an empty slice gives +inf (the integer
        types' largest value; NumPy raises). Both backends. Layouts and copies as `sum` (any
        strides of every element type passed to the C++ layer as they are when the reduced
        axes merge into one strided extent).
    keepdims: keep the reduced axes with length 1.
    Raises TypeError for unsupported dtypes, AxisError (ValueError,
    IndexError) for an axis out of range, ValueError for a repeated axis.
    out: an array to write the result into (returned), as `sum`'s out.
    """
    return _value(x, False, False, "min", axis, keepdims, out)


def max(x, *, axis: Axis = None, keepdims: bool = False, out=None) -> Any:
    """Largest element of `x`; NaN if x holds one; -inf (integers: the type's smallest value)
    when empty. A tie between -0.0 and +0.0 gives the first of them (tally.max([0.0, -0.0])
    is 0.0; NumPy's choice differs), the element argmax points to. As `min` otherwise (axis,
    keepdims included)."""
    return _value(x, True, False, "max", axis, keepdims, out)


def nanmin(x, *, axis: Axis = None, keepdims: bool = False, out=None) -> Any:
    """Smallest element of `x` ignoring NaN; NaN when x holds nothing else (per output with
    axis: a slice of only NaN gives NaN); +inf when empty. As `min` otherwise."""
    return _value(x, False, True, "nanmin", axis, keepdims, out)


def nanmax(x, *, axis: Axis = None, keepdims: bool = False, out=None) -> Any:
    """Largest element of `x` ignoring NaN; NaN when x holds nothing else; -inf when empty.
    As `min` otherwise."""
    return _value(x, True, True, "nanmax", axis, keepdims, out)


def _minmax(x, skip_nan: bool, fn: str, axis, keepdims: bool):
    axes = _axis.normalize(x, axis, fn, keepdims=keepdims, scalar_axis=True)
    if _axis.is_whole(x, axes):
        a = prepare(x, fn, order_free=True)
        if not a.strided:  # (one call: tally::minmax, one read of x)
            backend, stream = finish(a)
            lo, _, hi, _ = _tally.minmax(skip_nan, a.view, backend, stream)
            if a.reordered and isinstance(lo, float) and (lo == 0 or hi == 0):
                # a -0.0 / +0.0 tie met in memory order: again in C order (a copy), for the
                # sign of the first zero
                a = prepare(x, fn)
                backend, stream = finish(a)
                lo, _, hi, _ = _tally.minmax(skip_nan, a.view, backend, stream)
            return (_axis.whole(x, lo, a.dtype, fn, keepdims, axes), _axis.whole(x, hi, a.dtype, fn, keepdims, axes))
    return (_value(x, False, skip_nan, fn, axis, keepdims, None), _value(x, True, skip_nan, fn, axis, keepdims, None))


def minmax(x, *, axis: Axis = None, keepdims: bool = False) -> Tuple[Any, Any]:
    """(smallest, largest) element of `x` together: (tally.min(x), tally.max(x)) with the same
    axis and keepdims, so every rule of `min` and `max` holds for each (NaN if x holds one;
    +inf and -inf, integers: the type's limits, when empty; of a -0.0 / +0.0 tie the first,
    with its sign; per output along an axis). The whole array in one call (tally::minmax: one
    read of x on either backend); along an axis, `min` and then
    `max` (two reads). Returns a tuple of two Python scalars (axis=None) or two arrays of x's
    library. Raises as `min` (the messages name minmax)."""
    return _minmax(x, False, "minmax", axis, keepdims)


def nanminmax(x, *, axis: Axis = None, keepdims: bool = False) -> Tuple[Any, Any]:
    """(nanmin(x), nanmax(x)): as `minmax`, ignoring NaN (NaN for an input, or a slice, of only
    NaN)."""
    return _minmax(x, True, "nanminmax", axis, keepdims)


def argmin(x, *, axis: Optional[int] = None, keepdims: bool = False, out=None) -> Any:
    """Index (into the flattened array, C order) of the first smallest element of `x`, or of
    the first NaN if x holds one (NumPy's rule). Ties go to the first index, on every backend
    and launch shape. Host or CUDA array; blocks. A strided 1-D view is read in place.
    axis: None (default): a Python int. One int (negative: from the end; a tuple is a
        TypeError, as numpy.argmin): an int64 array of x's library (on x's device, allocated
        on the current stream) of the kept axes' shape, holding the index along `axis` of
        each slice's first extreme, the same rules per output; any strides read in place
        (other element types: see `min`).
    keepdims: keep the reduced axis with length 1 (with axis=None: shape (1,) * x.ndim).
    Raises ValueError when x is empty, or (axis) when the reduced axis has length 0 and there
    are outputs (NumPy: "attempt to get argmin of an empty sequence"); TypeError for
    unsupported dtypes or a tuple axis; AxisError for an axis out of range.
    out: an array to write the result into (returned), as `sum`'s out, but of an integer dtype
        as numpy.argmin requires: int64 (intp), or int8-int32 / uint8-uint32 when the indices
        fit (OverflowError otherwise); uint64, floating, complex or bool: TypeError naming
        out's dtype, before anything is computed. The same for argmax and the nan forms.
    """
    _check_index_out(out, "argmin")
    return _into(out, _index(x, False, False, "argmin", axis, keepdims), x, "argmin", index=True)


def argmax(x, *, axis: Optional[int] = None, keepdims: bool = False, out=None) -> Any:
    """Index of the first largest element of `x` (of the first NaN if x holds one); ValueError
    when x is empty. As `argmin` otherwise."""
    _check_index_out(out, "argmax")
    return _into(out, _index(x, True, False, "argmax", axis, keepdims), x, "argmax", index=True)


def nanargmin(x, *, axis: Optional[int] = None, keepdims: bool = False, out=None) -> Any:
    """Index of the first smallest element of `x` ignoring NaN; ValueError when x is empty or
    holds only NaN (with axis: when a slice holds only NaN; the message names the first such
    one). As `argmin` otherwise."""
    _check_index_out(out, "nanargmin")
    return _into(out, _index(x, False, True, "nanargmin", axis, keepdims), x, "nanargmin", index=True)


def nanargmax(x, *, axis: Optional[int] = None, keepdims: bool = False, out=None) -> Any:
    """Index of the first largest element of `x` ignoring NaN; ValueError when x is empty or
    holds only NaN. As `argmin` otherwise."""
    _check_index_out(out, "nanargmax")
    return _into(out, _index(x, True, True, "nanargmax", axis, keepdims), x, "nanargmax", index=True)


def cuda_available() -> bool:
    """True when this build has the CUDA backend and a GPU is usable."""
    return bool(_tally.cuda_available())
