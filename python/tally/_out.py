"""``out=`` of the reductions (numpy.sum(..., out=) and friends): the result, computed as
without ``out``, is written into a given array, which is returned.

The array must be of the result's library and device (NumPy for host input and Python
scalars' host results; CuPy or torch on x's device for CUDA input), of the result's shape
(``()`` for a whole-array reduction without keepdims), and of a dtype the result can be cast
to under NumPy's 'same_kind' rule (float64 into float32 is allowed, float into an integer
array is not). That is stricter than numpy.sum and the other NumPy reductions, which cast
into out unsafely (a float sum truncated into an int64 out): a deliberate difference, as a
correctly rounded result truncated on the way out would no longer be one. Index results (argmin, argmax and the nan forms) need an integer array, as
NumPy's do (check_index_out): int64, or a narrower integer type the indices fit. The write is
one copy by the array's library on its current stream (CuPy, torch) after tally's call has
finished: not zero copy, and exactly the values tally returns, cast by the library when out's
dtype differs.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ._arrays import article, dtype_name, library


def _result_dtype(result) -> str:
    if isinstance(result, bool):
        return "bool"
    if isinstance(result, int):
        return "int64"
    if isinstance(result, float):
        return "float64"
    return dtype_name(result.dtype)


def into(out, result, x, fn: str, dtype: Optional[str] = None, index: bool = False) -> Any:
    """Writes `result` (a Python scalar, or an array of x's library) into `out` and returns
    out; returns result as it is when out is None. dtype: the NumPy name of a scalar result's
    type (a Python int does not say whether it is a uint64 sum or an int8 minimum; without it
    an int is taken as int64, a float as float64). index: the result holds indices (argmin,
    argmax, the nan forms): out's dtype follows check_index_out instead of 'same_kind'."""
    if out is None:
        return result
    lib = library(out)
    if isinstance(out, np.generic):
        raise TypeError(f"tally.{fn}: out is a NumPy scalar ({type(out).__name__}), not a writable array (for a "
                        f"whole-array result, pass a 0-d array: np.empty((), dtype))")
    if lib not in ("numpy", "cupy", "torch"):
        raise TypeError(f"tally.{fn}: out must be a NumPy, CuPy or torch array, not {type(out).__name__}")
    scalar = not hasattr(result, "shape")
    want_shape = () if scalar else tuple(result.shape)
    if tuple(out.shape) != want_shape:
        raise ValueError(f"tally.{fn}: out has shape {tuple(out.shape)}, but the result has shape {want_shape}")
    if scalar:
        xlib = library(x)
        host = xlib in ("numpy", "other") or (xlib == "torch" and x.device.type == "cpu")
        if host and lib != "numpy" and not (lib == "torch" and out.device.type == "cpu"):
            raise TypeError(f"tally.{fn}: x is a host array, so out must be a host array (NumPy or CPU torch), "
                            f"not a {lib} array on the GPU")
        if not host and (lib != xlib or (lib == "torch" and out.device != x.device)
                         or (lib == "cupy" and out.device != x.device)):
            raise TypeError(f"tally.{fn}: out must be a {xlib} array on x's device")
    else:
        rlib = library(result)
        if lib != rlib:
            raise TypeError(f"tally.{fn}: out must be a {rlib} array like the result, not a {lib} array")
        # (NumPy arrays are on the host; ndarray.device exists only from NumPy 2.0)
        if lib != "numpy" and out.device != result.device:
            raise ValueError(f"tally.{fn}: out is on {out.device}, the result on {result.device}")
    if scalar and dtype:  # (bfloat16, which NumPy does not name, holds only float32 values)
        src = "float32" if dtype == "bfloat16" else dtype
    else:
        src = _result_dtype(result)
    if lib == "numpy" and not out.flags.writeable:
        raise ValueError(f"tally.{fn}: out is read-only")
    dst = dtype_name(out.dtype)
    if index:
        check_index_out(out, fn)
    elif not np.can_cast(src, dst, casting="same_kind"):
        raise TypeError(f"tally.{fn}: cannot write the {src} result into {article(dst)} {dst} out array "
                        "(tally casts into out by NumPy's 'same_kind' rule; numpy.sum would cast unsafely, "
                        "truncating: pass a float out, or convert the result yourself)")
    if _is_int(src) and _is_int(dst) and src != dst:
        _check_fits(result, dst, scalar, fn)
    if lib == "torch":
        if scalar:
            out.fill_(result)
        else:
            out.copy_(result)
    else:
        out[...] = result
    return out


# The out dtypes an index result (argmin, argmax and the nan forms) may be written into: as
# NumPy, integer types that convert safely to intp (int64); uint64 does not, and floating and
# complex arrays do not either. (NumPy also takes bool, writing True for every index but 0;
# tally refuses it: such an out would not hold the index.)
_INDEX_OUT = ("int64", "int32", "int16", "int8", "uint32", "uint16", "uint8")


def check_index_out(out, fn: str) -> None:
    """TypeError naming out's dtype unless `out` (when given) is an integer array an index
    can be written into: numpy.argmin(..., out=) needs an integer (intp) out and refuses a
    floating one ("Cannot cast array data from dtype('float64') to dtype('int64') according
    to the rule 'safe'"). Narrower integer types are taken as by NumPy; an index that does not
    fit is an OverflowError when written (into). Objects without a dtype are left to into."""
    if out is None or not hasattr(out, "dtype"):
        return
    try:
        name = dtype_name(out.dtype)
    except TypeError:
        name = str(out.dtype)
    if name not in _INDEX_OUT:
        raise TypeError(f"tally.{fn}: out has dtype {name}, but {fn} gives integer indices (int64): out must be an "
                        f"integer array (int64, NumPy's intp; int8-int32 and uint8-uint32 when the indices fit), "
                        f"as numpy.{fn} requires (it cannot cast {name} to int64 under the 'safe' rule)")


def _is_int(name: str) -> bool:
    return name.startswith("int") or name.startswith("uint")


def _check_fits(result, dst: str, scalar: bool, fn: str) -> None:
    """OverflowError when an integer result does not fit the integer out array's type (tally's
    integer results are exact: they are never wrapped into a narrower type)."""
    info = np.iinfo(dst)
    if scalar:
        if not info.min <= int(result) <= info.max:
            raise OverflowError(f"tally.{fn}: the result {int(result)} does not fit the {dst} out array "
                                f"([{info.min}, {info.max}])")
        return
    if result.size == 0:
        return
    lo, hi = int(result.min()), int(result.max())
    if lo < info.min or hi > info.max:  # (the error path: find the first such output exactly, on the host)
        host = result.get() if hasattr(result, "get") else (result.cpu().numpy() if hasattr(result, "cpu") else result)
        flat = np.asarray(host).astype(object).ravel()
        k = next(i for i, v in enumerate(flat) if v < info.min or v > info.max)
        first = tuple(int(i) for i in np.unravel_index(k, tuple(result.shape)))
        raise OverflowError(f"tally.{fn}: the result at {first} ({flat[k]}) does not fit the {dst} out array "
                            f"([{info.min}, {info.max}])")
