"""tally: parallel reductions with exact (correctly rounded) results, for NumPy arrays.

    >>> import numpy as np, tally
    >>> x = np.full(2**24 + 1, 1.0, dtype=np.float32)
    >>> tally.sum(x, dtype=np.float64)      # numpy's float32 sum would give 16777216.0
    16777217.0

This version of the Python module runs on the CPU backend over NumPy arrays (any shape,
read flattened in C order): sum, dot, add, min, max, argmin, argmax and their nan forms.
GPU arrays (CuPy, PyTorch) are not accepted yet.
"""
from __future__ import annotations

from typing import Literal, Optional, Union

import numpy as np

from . import _tally

__all__ = ["sum", "dot", "add", "mean", "norm", "min", "max", "argmin", "argmax", "nanmin", "nanmax", "nanargmin",
           "nanargmax", "var", "std", "count_nonzero", "any", "all", "axpy", "scale", "cuda_available"]

Accuracy = Literal["exact", "fast"]
_SUPPORTED = (np.float32, np.float64, np.int32, np.int64)


def _host(a, fn: str) -> np.ndarray:
    """A C-contiguous NumPy view (or copy) of `a`, or TypeError for GPU arrays and bad dtypes."""
    if hasattr(a, "__cuda_array_interface__") or getattr(getattr(a, "device", None), "type", "cpu") == "cuda":
        raise TypeError(f"tally.{fn}: GPU arrays are not supported by this version of the Python module")
    arr = np.asarray(a)
    if arr.dtype.type not in _SUPPORTED:
        raise TypeError(f"tally.{fn}: unsupported dtype {arr.dtype} (float32, float64, int32 and int64 are supported)")
    if not arr.dtype.isnative:  # big-endian data: converted to native byte order (a copy)
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return np.require(arr, requirements="C")  # keeps 0-d arrays 0-d


def _out_dtype(dtype, a: np.ndarray, fn: str) -> str:
    if dtype is None:
        return ""
    name = np.dtype(dtype).name
    floating = a.dtype.kind == "f"
    if (floating and name not in ("float32", "float64")) or (not floating and name != "int64"):
        allowed = "float32 or float64" if floating else "int64"
        raise TypeError(f"tally.{fn}: a {a.dtype} {fn} can give {allowed}, not {name}")
    return name


def _accuracy(accuracy, fn: str) -> str:
    if accuracy not in ("exact", "fast"):
        raise ValueError(f"tally.{fn}: accuracy must be 'exact' or 'fast', not {accuracy!r}")
    return accuracy


def sum(x, *, dtype=None, accuracy: Accuracy = "exact", axis: Optional[int] = None) -> Union[float, int]:
    """Sum of all elements of `x` (any shape, read flattened).

    x: array-like of float32, float64, int32 or int64 (NumPy; lists are converted).
    dtype: result type; float32 or float64 for floating x (default: x's type), int64 for
        integer x (the default). float32 data with dtype=float64 give the correctly rounded
        float64 sum.
    accuracy: "exact" (default): the exact sum rounded once to `dtype`, to nearest, ties to
        even (correctly rounded: the same bits on every backend); "fast": a float64
        accumulator tree with the error bound documented in include/tally/tally.hpp.
    Returns a Python float (floating x) or int (integer x). The sum of nothing is 0.
    Integer sums are exact; OverflowError when the exact sum does not fit in int64.
    Raises TypeError for unsupported dtypes or GPU arrays, ValueError for bad arguments,
    NotImplementedError for `axis` (whole-array reductions only, for now).
    """
    if axis is not None:
        raise NotImplementedError("tally.sum: axis reductions are not supported yet")
    a = _host(x, "sum")
    return _tally.sum(a.reshape(-1), _out_dtype(dtype, a, "sum"), _accuracy(accuracy, "sum"), "cpu")


def dot(x, y, *, dtype=None, accuracy: Accuracy = "exact") -> Union[float, int]:
    """Dot product sum(x[i] * y[i]) of two arrays with the same number of elements.

    x, y: array-likes of one dtype (float32, float64, int32 or int64), flattened.
    dtype, accuracy: as in `sum`; in exact mode every product is exact too, so the result is
        the correctly rounded exact dot product at any condition number.
    Raises ValueError when the lengths or dtypes differ; OverflowError for an int64
    overflow of the exact integer result; TypeError for unsupported dtypes.
    """
    a, b = _host(x, "dot"), _host(y, "dot")
    if a.dtype != b.dtype:
        raise ValueError(f"tally.dot: element type mismatch: x is {a.dtype}, y is {b.dtype}")
    if a.size != b.size:
        raise ValueError(f"tally.dot: length mismatch: x has {a.size} elements, y has {b.size}")
    return _tally.dot(a.reshape(-1), b.reshape(-1), _out_dtype(dtype, a, "dot"), _accuracy(accuracy, "dot"), "cpu")


def add(x, y, *, out: Optional[np.ndarray] = None) -> np.ndarray:
    """Element-wise x + y of two arrays of the same shape and dtype; returns `out`.

    out: optional C-contiguous array of the same shape and dtype (may be x or y: in place).
    Integer overflow raises OverflowError (out then holds wrapped values).
    """
    a, b = _host(x, "add"), _host(y, "add")
    if a.shape != b.shape:
        raise ValueError(f"tally.add: shape mismatch: x has shape {a.shape}, y has shape {b.shape}")
    if a.dtype != b.dtype:
        raise ValueError(f"tally.add: element type mismatch: x is {a.dtype}, y is {b.dtype}")
    if out is None:
        out = np.empty_like(a)
    elif not isinstance(out, np.ndarray):
        raise TypeError(f"tally.add: out must be a NumPy array, not {type(out).__name__}")
    elif out.shape != a.shape or out.dtype != a.dtype or not out.flags.c_contiguous:
        raise ValueError("tally.add: out must be C-contiguous with the shape and dtype of x")
    elif not out.flags.writeable:
        raise ValueError("tally.add: out is read-only")
    _tally.add(a.reshape(-1), b.reshape(-1), out.reshape(-1), "cpu")
    return out


def mean(x, *, dtype=None) -> float:
    """Arithmetic mean of all elements of `x`: the exact sum divided by the count, correctly
    rounded to `dtype` (one rounding: the same bits whatever the backend or thread count).

    dtype: float32 or float64; by default x's type for floating x, float64 for integers
        (NumPy's rule). The mean of nothing is NaN (NumPy warns and returns NaN).
    Raises TypeError for unsupported dtypes or GPU arrays.
    """
    a = _host(x, "mean")
    if dtype is None:
        out = "float32" if a.dtype == np.float32 else "float64"
    else:
        out = np.dtype(dtype).name
        if out not in ("float32", "float64"):
            raise TypeError(f"tally.mean: the mean is float32 or float64, not {out}")
    return _tally.mean(a.reshape(-1), out)


def norm(x, ord=2, *, dtype=None, accuracy: Accuracy = "exact") -> float:
    """Vector norm of all elements of `x` (read flattened), correctly rounded to `dtype`
    (float32 or float64; default x's type, float64 for integer x, which are converted exactly
    below 2^53).

    ord=2 (default): Euclidean norm, the square root of the exact sum of squares, rounded once;
        no overflow or underflow on the way: norm([1e200, 1e200]) is 1.414...e200
        (numpy.linalg.norm: inf).
    ord=1: sum |x|, the exact sum rounded once (accuracy="fast": a float64 accumulator).
    ord=inf (np.inf or "inf"): max |x|, exact; NaN anywhere gives NaN.
    The norm of nothing is 0. NaN gives NaN; an infinity gives inf.
    Raises ValueError for another ord, TypeError for unsupported dtypes or GPU arrays.
    """
    if isinstance(ord, str) and ord == "inf" or (not isinstance(ord, str) and ord == np.inf):
        o = "inf"
    elif not isinstance(ord, str) and ord in (1, 2):
        o = str(int(ord))
    else:
        raise ValueError(f"tally.norm: ord must be 1, 2 or inf, not {ord!r}")
    a = _host(x, "norm")
    if a.dtype.kind != "f":
        a = a.astype(np.float64)
    out = np.dtype(dtype).name if dtype is not None else a.dtype.name
    if out not in ("float32", "float64"):
        raise TypeError(f"tally.norm: the norm is float32 or float64, not {out}")
    return _tally.norm_ord(a.reshape(-1), o, out, _accuracy(accuracy, "norm"))


def _var(x, ddof, dtype, accuracy, take_sqrt: bool) -> float:
    fn = "std" if take_sqrt else "var"
    a = _host(x, fn)
    if isinstance(ddof, bool) or not isinstance(ddof, (int, np.integer)):
        raise TypeError(f"tally.{fn}: ddof must be an integer, not {type(ddof).__name__}")
    if dtype is None:
        out = "float32" if a.dtype == np.float32 else "float64"
    else:
        out = np.dtype(dtype).name
        if out not in ("float32", "float64"):
            raise TypeError(f"tally.{fn}: the result is float32 or float64, not {out}")
    return _tally.var(a.reshape(-1), int(ddof), take_sqrt, out, _accuracy(accuracy, fn))


def var(x, *, ddof: int = 0, dtype=None, accuracy: Accuracy = "exact") -> float:
    """Variance of all elements of `x` (read flattened): sum (x - mean)^2 / (n - ddof), NumPy's
    ddof. accuracy="exact" (default): (n S2 - S1^2) / (n (n - ddof)) from the exact sums of x and
    x^2, formed exactly and rounded once (correctly rounded; no overflow or underflow on the
    way). accuracy="fast": Welford/Chan in float64. dtype: float32 or float64 (default x's type
    for floating x, float64 for integers). n - ddof <= 0 gives NaN (NumPy: NaN or inf, with a
    warning); NaN or an infinity in x gives NaN.
    """
    return _var(x, ddof, dtype, accuracy, False)


def std(x, *, ddof: int = 0, dtype=None, accuracy: Accuracy = "exact") -> float:
    """Standard deviation: the square root of `var` (same arguments); in exact mode the correctly
    rounded square root of the exact variance (one rounding in all)."""
    return _var(x, ddof, dtype, accuracy, True)


def count_nonzero(x) -> int:
    """Number of elements of `x` that are not zero (NaN counts, -0.0 does not)."""
    return int(_tally.count_nonzero(_host(x, "count_nonzero").reshape(-1)))


def any(x) -> bool:
    """Whether some element of `x` is nonzero (NaN is, -0.0 is not); False for an empty array."""
    return count_nonzero(x) > 0


def all(x) -> bool:
    """Whether every element of `x` is nonzero (NaN is, -0.0 is not); True for an empty array."""
    a = _host(x, "all")
    return int(_tally.count_nonzero(a.reshape(-1))) == a.size


def _scalar(a, dtype: np.dtype, fn: str):
    """(a_float, a_int) for _tally.axpy/scale: a as x's dtype, or ValueError if it does not fit."""
    if dtype.kind == "f":
        return float(a), 0
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
        raise TypeError(f"tally.{fn}: a must be an integer for {dtype} arrays, not {type(a).__name__}")
    info = np.iinfo(dtype)
    if not info.min <= int(a) <= info.max:
        raise ValueError(f"tally.{fn}: a = {a} does not fit in {dtype}")
    return 0.0, int(a)


def _inplace(y, fn: str, name: str) -> np.ndarray:
    if not isinstance(y, np.ndarray):
        raise TypeError(f"tally.{fn}: {name} must be a NumPy array (it is updated in place), not {type(y).__name__}")
    if y.dtype.type not in _SUPPORTED or not y.dtype.isnative:
        raise TypeError(f"tally.{fn}: unsupported dtype {y.dtype} for {name} (native float32, float64, int32, int64)")
    if not y.flags.c_contiguous:
        raise ValueError(f"tally.{fn}: {name} must be C-contiguous")
    if not y.flags.writeable:
        raise ValueError(f"tally.{fn}: {name} is read-only")
    return y


def axpy(a, x, y) -> np.ndarray:
    """y = a * x + y in place (BLAS axpy); returns y. x, y: arrays of one shape and dtype (y a
    writable C-contiguous NumPy array). Floating: fma(a, x, y), rounded once. Integers: exact;
    OverflowError if an element does not fit (y then holds the wrapped values). y may be x itself.
    """
    b = _inplace(y, "axpy", "y")
    xa = _host(x, "axpy")
    if xa.shape != b.shape:
        raise ValueError(f"tally.axpy: shape mismatch: x has shape {xa.shape}, y has shape {b.shape}")
    if xa.dtype != b.dtype:
        raise ValueError(f"tally.axpy: element type mismatch: x is {xa.dtype}, y is {b.dtype}")
    af, ai = _scalar(a, b.dtype, "axpy")
    _tally.axpy(af, ai, xa.reshape(-1), b.reshape(-1))
    return y


def scale(a, x) -> np.ndarray:
    """x = a * x in place (BLAS scal); returns x (a writable C-contiguous NumPy array).
    Integers: exact; OverflowError if an element does not fit."""
    b = _inplace(x, "scale", "x")
    af, ai = _scalar(a, b.dtype, "scale")
    _tally.scale(af, ai, b.reshape(-1))
    return x


def _extreme(x, is_max: bool, skip_nan: bool, fn: str):
    a = _host(x, fn)
    return _tally.extreme(is_max, skip_nan, a.reshape(-1), "cpu")


def _index(x, is_max: bool, skip_nan: bool, fn: str) -> int:
    value, index = _extreme(x, is_max, skip_nan, fn)
    if index < 0:
        raise ValueError(f"tally.{fn}: " + ("x is empty" if np.size(x) == 0 else "x holds only NaN")
                         + ", so there is no index to return")
    return index


def min(x) -> Union[float, int]:
    """Smallest element of `x` (any shape, read flattened), of x's type (float or int).

    NaN rule (NumPy's): a NaN anywhere gives NaN (see nanmin). Empty x gives +inf (integers:
    the type's largest value; NumPy raises instead). Exact: comparisons only; the same answer
    on every backend. Raises TypeError for unsupported dtypes or GPU arrays.
    """
    return _extreme(x, False, False, "min")[0]


def max(x) -> Union[float, int]:
    """Largest element of `x`; NaN if x holds one; -inf (integers: the type's smallest value)
    when empty. As `min` otherwise."""
    return _extreme(x, True, False, "max")[0]


def nanmin(x) -> Union[float, int]:
    """Smallest element of `x` ignoring NaN; NaN when x holds nothing else; +inf when empty."""
    return _extreme(x, False, True, "nanmin")[0]


def nanmax(x) -> Union[float, int]:
    """Largest element of `x` ignoring NaN; NaN when x holds nothing else; -inf when empty."""
    return _extreme(x, True, True, "nanmax")[0]


def argmin(x) -> int:
    """Index (flattened, C order) of the first smallest element of `x`, or of the first NaN
    if x holds one (NumPy's rule). Ties go to the first index on every backend. Raises
    ValueError when x is empty."""
    return _index(x, False, False, "argmin")


def argmax(x) -> int:
    """Index of the first largest element of `x` (of the first NaN if x holds one); ValueError
    when x is empty."""
    return _index(x, True, False, "argmax")


def nanargmin(x) -> int:
    """Index of the first smallest element of `x` ignoring NaN; ValueError when x is empty or
    holds only NaN."""
    return _index(x, False, True, "nanargmin")


def nanargmax(x) -> int:
    """Index of the first largest element of `x` ignoring NaN; ValueError when x is empty or
    holds only NaN."""
    return _index(x, True, True, "nanargmax")


def cuda_available() -> bool:
    """True when this build has the CUDA backend and a GPU is usable."""
    return bool(_tally.cuda_available())
