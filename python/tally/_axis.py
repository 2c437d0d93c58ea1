"""Reductions along one axis of a 2-D array (the ``axis=`` of tally.sum, mean, min, max, argmin,
argmax and the nan forms), over the C++ shape layer (tally/shapes.hpp: reduce_axis, mean_axis,
extreme_axis), which reads any row and column strides.

Zero copy: float32, float64, int32 and int64 arrays of any strides (C order, Fortran order,
``x.T``, ``x[::2, 1::3]``, negative NumPy/CuPy strides, broadcast zero strides) are read in
place. A copy (in the array's own library, on its current stream) is made only for
- the other element types, converted exactly to a type the C++ layer reads (float16 and
  bfloat16 to float32; int8, int16, uint8, uint16 and bool to int32; uint32 to int64; min and
  max values are converted back, exactly);
- NumPy data in big-endian byte order, or with byte strides that are not a multiple of the
  item size (views into structured arrays): np.ascontiguousarray.
uint64 has no exact conversion here: axis reductions of uint64 are a TypeError.

Results: a new 1-D array of the input's library (NumPy in, NumPy out; CuPy in, CuPy out on its
device; torch in, torch out on its device; lists: NumPy), allocated on the library's current
stream like tally.add's result; shape (cols,) for axis 0 and (rows,) for axis 1.
"""
from __future__ import annotations

import operator
from typing import Any, Optional

import numpy as np

from . import _tally
from ._arrays import STRIDED_TYPES, Arg, _check_dtype, _cupy_stream, _strides, finish, library, new_array

try:
    _AxisError = np.exceptions.AxisError
except AttributeError:  # NumPy < 1.25
    _AxisError = np.AxisError

# Exact widenings for the element types the shape layer does not read.
_WIDER = {"float16": "float32", "bfloat16": "float32", "int8": "int32", "int16": "int32", "uint8": "int32",
          "uint16": "int32", "bool": "int32", "uint32": "int64"}


def normalize(x, axis, fn: str) -> Optional[int]:
    """axis as 0 or 1 for a 2-D x; None when the reduction is the whole-array one (a 1-D x with
    axis 0 or -1). AxisError (a ValueError and IndexError, as NumPy) when out of range;
    NotImplementedError for tuples and for more than two dimensions; TypeError otherwise."""
    if isinstance(axis, (tuple, list)):
        raise NotImplementedError(f"tally.{fn}: axis={axis!r}: one axis at a time in this version (or axis=None "
                                  "for the whole array)")
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"tally.{fn}: axis must be an integer or None, not {type(axis).__name__}")
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"tally.{fn}: axis must be an integer or None, not {type(axis).__name__}") from None
    lib = library(x)
    if lib == "cai":
        ndim = len(x.__cuda_array_interface__["shape"])
    elif lib in ("numpy", "other"):
        ndim = np.ndim(x)
    else:
        ndim = len(getattr(x, "shape", ()))
    if ndim > 2:
        raise NotImplementedError(f"tally.{fn}: axis={ax} on a {ndim}-D array: axis reductions take 1-D and 2-D "
                                  "arrays in this version (reshape first, e.g. x.reshape(-1, x.shape[-1]) to "
                                  "reduce the last axis)")
    if not -ndim <= ax < ndim:
        raise _AxisError(ax, ndim, f"tally.{fn}")
    if ndim == 1:
        return None
    return ax % 2


def _library_2d(x, fn: str):
    """(lib, array) with lib in numpy / cupy / torch, or TypeError."""
    lib = library(x)
    if lib in ("numpy", "other"):
        return "numpy", np.asarray(x)
    if lib == "torch":
        return lib, x.detach()
    if lib == "cupy":
        return lib, x
    raise TypeError(f"tally.{fn}: axis reductions return an array of the input's library, and this input is not a "
                    "NumPy, CuPy or torch array (convert it, e.g. with cupy.asarray or torch.from_dlpack)")


def _astype(lib: str, a, name: str):
    if lib == "torch":
        import torch
        return a.to(getattr(torch, name))
    if lib == "cupy":
        with a.device:
            return a.astype(name)
    return a.astype(name)


def prepare_2d(x, fn: str):
    """(Arg over a 2-D view for _tally's *_axis functions, the input's dtype name). The view is
    x itself where the C++ layer can read it (see the module docstring), else a copy."""
    lib, a = _library_2d(x, fn)
    name = str(a.dtype)[len("torch."):] if lib == "torch" else a.dtype.name
    _check_dtype(name, fn, "x")
    work = a
    if name in _WIDER:
        work = _astype(lib, a, _WIDER[name])
    elif name not in STRIDED_TYPES:
        raise TypeError(f"tally.{fn}: axis reductions of {name} arrays are not available in this version "
                        "(float16, bfloat16, float32, float64, int8-int64, uint8-uint32 and bool are)")
    if lib == "numpy" and (not work.dtype.isnative or _strides(work, "numpy") is None):
        work = np.ascontiguousarray(work, dtype=work.dtype.newbyteorder("="))
    wname = str(work.dtype)[len("torch."):] if lib == "torch" else work.dtype.name
    shape = tuple(work.shape)
    if lib == "numpy":
        arg = Arg("numpy", x, work, work, wname, shape, work.size, False, 0)
    elif lib == "torch":
        cuda = work.device.type == "cuda"
        stream = 0
        if cuda:
            import torch
            stream = int(torch.cuda.current_stream(work.device).cuda_stream)
        arg = Arg("torch", a, work, None, wname, shape, work.numel(), cuda, stream)
    else:
        arg = Arg("cupy", a, work, None, wname, shape, work.size, True, _cupy_stream(work))
    return arg, name


def _out(a: Arg, n: int, dtype: str, fn: str) -> tuple:
    """(result array, its Arg for finish())."""
    r = new_array(a, (n,), dtype, fn, "")
    view = r if a.lib == "numpy" else None
    return r, Arg(a.lib, r, r, view, dtype, (n,), n, a.cuda, a.stream)


def _view_as(lib: str, r, name: str):
    """r's bits as dtype `name` (int64 sums of unsigned data as uint64: the values are >= 0)."""
    if lib == "torch":
        import torch
        return r.view(getattr(torch, name))
    return r.view(name)


def _outputs(a: Arg, axis: int) -> int:
    return a.shape[1] if axis == 0 else a.shape[0]


def sum(x, axis: int, result_of, accuracy: str) -> Any:
    """Sums along axis; result_of(x's dtype name) -> the result's dtype name (the C++ layer
    writes int64 for integer data; unsigned data gets its bits viewed as uint64)."""
    a, name = prepare_2d(x, "sum")
    result = result_of(name)
    computed = "int64" if result in ("int64", "uint64") else result
    r, o = _out(a, _outputs(a, axis), computed, "sum")
    if o.size == 0:
        return _view_as(a.lib, r, result) if result != computed else r
    backend, stream = finish(a, o)
    _tally.sum_axis(a.view, axis, o.view, accuracy, backend, stream)
    return _view_as(a.lib, r, result) if result != computed else r


def mean(x, axis: int, result_of) -> Any:
    a, name = prepare_2d(x, "mean")
    result = result_of(name)
    r, o = _out(a, _outputs(a, axis), result, "mean")
    if o.size == 0:
        return r
    backend, stream = finish(a, o)
    _tally.mean_axis(a.view, axis, o.view, backend, stream)
    return r


def extreme(x, axis: int, is_max: bool, skip_nan: bool, want_index: bool, fn: str) -> Any:
    """min/max values (want_index False: x's dtype) or first indices (int64) along axis."""
    a, name = prepare_2d(x, fn)
    n = _outputs(a, axis)
    length = a.shape[axis]
    if want_index and length == 0 and n > 0:
        raise ValueError(f"tally.{fn}: axis {axis} has length 0 (shape {a.shape}), so there is no index to return "
                         "(NumPy: attempt to get an arg-extreme of an empty sequence)")
    r, o = _out(a, n, "int64" if want_index else a.dtype, fn)
    if n == 0:  # nothing to compute (and an empty CuPy array has a null data pointer)
        return r if want_index or name == a.dtype else _astype(a.lib, r, name)
    backend, stream = finish(a, o)
    values, indices = (None, o.view) if want_index else (o.view, None)
    _tally.extreme_axis(is_max, skip_nan, a.view, axis, values, indices, backend, stream)
    if want_index:
        if n > 0:
            k = int(r.argmin())  # -1 (a slice of only NaN) is below every index
            if int(r[k]) < 0:
                raise ValueError(f"tally.{fn}: {'column' if axis == 0 else 'row'} {k} holds only NaN, so there is "
                                 "no index to return (NumPy: All-NaN slice encountered)")
        return r
    return _astype(a.lib, r, name) if name != a.dtype else r
