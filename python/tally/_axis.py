"""Reductions along axes of N-D arrays (the ``axis=`` and ``keepdims=`` of tally.sum, mean,
min, max, argmin, argmax, the nan forms, norm, var and std), over the C++ shape layer
(tally/shapes.hpp) and the 1-D functions (tally/core.hpp).

Axes follow NumPy: an int or a tuple of distinct ints (argmin/argmax: one int), negative ones
counted from the end, None for the whole array; an axis out of range is numpy's AxisError (a
ValueError and IndexError), a repeated one a ValueError ("duplicate value in 'axis'").

How an N-D reduction is laid out (elements strides, any sign, 0 allowed):
- length-1 axes are dropped; the kept axes are merged, in order, where their strides allow it
  (stride[i] == stride[i+1] * shape[i+1]) into kept extents (m_1, t_1), ..., (m_k, t_k);
- the reduced axes are merged in any order into ONE strided extent (n, s) when their strides
  allow it (e.g. all the axes of a dense block, or any single axis). When they do not (say axes
  0 and 2 of a C-order 3-D array), the array is copied once, in its own library on its current
  stream, with the reduced axes moved last and made C-contiguous. So every output is ONE
  reduction of its n elements: an exact sum over a tuple of axes is the correctly rounded sum
  of all of them (one rounding), never a sum of rounded partial sums.
- sum, mean, min, max (and arg/nan forms): one C++ matrix call, rows = a kept extent (the
  longest; the last one on ties), cols = (n, s), reduced along its axis 1 (each output as the
  1-D operation of its slice), repeated for every index of the other kept extents (one C++
  loop, without the GIL; on CUDA arrays one stream synchronisation per matrix).
- norm, var, std: the slices must be contiguous (s == 1; otherwise the copy above), and each
  output is one call of the 1-D function on its slice (exactly the bits tally.norm / var / std
  give for that slice). On CUDA arrays that is one stream synchronisation per output (the
  results are gathered on the host and copied to the device once): fine for a few thousand
  outputs, slow for millions of short slices.

Zero copy otherwise: arrays of all thirteen element types (float16, bfloat16, float32,
float64, int8-int64, uint8-uint64, bool) and any strides (C order, Fortran order, transposes,
``x[::2, 1::3]``, negative NumPy/CuPy strides, broadcast zero strides) go to the C++ shape
layer as they are, for sum, mean, min, max and the arg/nan forms. The C++ layer reads float32,
float64, int32 and int64 in place; the narrow types too on the CUDA backend (rows, columns and
segments of float16, bfloat16, int8, uint8 and bool, converted exactly as they are loaded);
otherwise it widens them exactly into a compact copy of its own first (docs/types.md, "Per
row, per column, per segment"), which costs time and memory but gives the same values. uint64
sums are exact (uint64 results; an output past 2^64 - 1 is an OverflowError). A copy (in the
array's own library, on its current stream) is made here for
- norm of integers (converted to float64: exact up to 2^53 in magnitude, int64/uint64
  elements beyond it rounded) and, for ord 1 and inf, of 16-bit floats (to float32, exactly);
  exact var/std of CUDA arrays of float16/bfloat16 (to float32), bool and integers up to 32
  bits (to float64), both exact (tally._exact_gpu_var_type);
- NumPy data in big-endian byte order, or with byte strides that are not a multiple of the
  item size (views into structured arrays): np.ascontiguousarray.

Results: a new C-contiguous array of the input's library (NumPy in, NumPy out; CuPy in, CuPy
out on its device; torch in, torch out on its device; lists: NumPy), allocated on the
library's current stream like tally.add's result, of the kept axes' shape (keepdims: the
reduced axes kept with length 1). A reduction over every axis without keepdims is the
whole-array one and returns a Python scalar.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from . import _tally
from ._arrays import Arg, _check_dtype, _cupy_stream, _strides, as_numpy, finish, library, numpy_view

try:
    _AxisError = np.exceptions.AxisError
except AttributeError:  # NumPy < 1.25
    _AxisError = np.AxisError

# The element types the C++ shape layer takes (tally/shapes.hpp: all thirteen of tally::dtype).
SHAPE_TYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
               "uint32", "uint64", "bool")


def ndim_of(x) -> int:
    lib = library(x)
    if lib == "cai":
        return len(x.__cuda_array_interface__["shape"])
    if lib in ("numpy", "other"):
        return np.ndim(x)
    return len(getattr(x, "shape", ()))


def normalize(x, axis, fn: str, single: bool = False, keepdims=False, scalar_axis: bool = False) -> Optional[Tuple[int, ...]]:
    """axis (None, an int or a tuple of ints) as a tuple of distinct axes in [0, ndim), in the
    order given; None for axis=None. single: only an int is allowed (argmin, argmax).
    scalar_axis: NumPy's rule for its ufunc-style reductions (sum, min, max, argmin, argmax and
    their nan forms, not mean, var, std or norm): on a 0-d array, the int axis 0 or -1 means
    the whole array (numpy.sum(numpy.array(5.0), axis=0) is 5.0), returned as ().
    AxisError (a ValueError and IndexError, as NumPy) when out of range; ValueError for a
    repeated axis; TypeError otherwise. keepdims: checked to be a bool or an integer (NumPy's
    rule: a TypeError for None, a string, a float, ...)."""
    try:
        operator.index(keepdims)
    except TypeError:
        raise TypeError(f"tally.{fn}: keepdims must be a bool, not {type(keepdims).__name__}") from None
    if axis is None:
        return None
    if isinstance(axis, tuple):
        if single:
            raise TypeError(f"tally.{fn}: axis must be one integer or None, not the tuple {axis!r} (like "
                            f"numpy.{fn}, {fn} reduces a single axis)")
        items = axis
    else:
        items = (axis,)
    ndim = ndim_of(x)
    if scalar_axis and ndim == 0 and not isinstance(axis, (tuple, bool, np.bool_)):
        try:
            if operator.index(axis) in (0, -1):
                return ()
        except TypeError:
            pass  # (the loop below names the type)
    axes: List[int] = []
    for a in items:
        what = "one integer or None" if single else "an integer, a tuple of integers or None"
        if isinstance(a, (bool, np.bool_)):
            raise TypeError(f"tally.{fn}: axis must be {what}, not {type(a).__name__}")
        try:
            ax = operator.index(a)
        except TypeError:
            raise TypeError(f"tally.{fn}: axis must be {what}, not {type(a).__name__}") from None
        if not -ndim <= ax < ndim:
            raise _AxisError(ax, ndim, f"tally.{fn}")
        axes.append(ax % ndim)
    if len(set(axes)) != len(axes):
        dup = next(a for a in axes if axes.count(a) > 1)
        raise ValueError(f"tally.{fn}: duplicate value in 'axis': {axis!r} names axis {dup} more than once")
    return tuple(axes)


def is_whole(x, axes: Optional[Tuple[int, ...]]) -> bool:
    """Whether the reduction is over every axis (the whole-array one)."""
    return axes is None or len(axes) == ndim_of(x)


def _library(x, fn: str):
    """(lib, array) with lib in numpy / cupy / torch, or TypeError."""
    lib = library(x)
    if lib in ("numpy", "other"):
        return "numpy", as_numpy(x, fn)
    if lib == "torch":
        return lib, x.detach()
    if lib == "cupy":
        return lib, x
    raise TypeError(f"tally.{fn}: axis reductions return an array of the input's library, and this input is not a "
                    "NumPy, CuPy or torch array (convert it, e.g. with cupy.asarray or torch.from_dlpack)")


def _name(lib: str, a) -> str:
    return str(a.dtype)[len("torch."):] if lib == "torch" else a.dtype.name


def _astype(lib: str, a, name: str):
    if lib == "torch":
        import torch
        return a.to(getattr(torch, name))
    if lib == "cupy":
        with a.device:
            return a.astype(name)
    return a.astype(name)


def _permute(lib: str, a, perm):
    return a.permute(*perm) if lib == "torch" else a.transpose(perm)


def _contiguous(lib: str, a):
    if lib == "torch":
        return a.contiguous()
    if lib == "cupy":
        import cupy
        with a.device:
            return cupy.ascontiguousarray(a)
    return np.ascontiguousarray(a)


def _new(lib: str, like, shape, dtype: str):
    """A new C-contiguous array of `shape` and `dtype` in lib, on like's device (CuPy and torch
    allocate on their current stream)."""
    if lib == "numpy":
        return np.empty(shape, dtype=dtype)
    if lib == "cupy":
        import cupy
        with like.device:
            return cupy.empty(shape, dtype=dtype)
    import torch
    return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)


def _from_host(lib: str, like, h: np.ndarray):
    """Host array h as an array of lib on like's device (one copy, on the current stream)."""
    if lib == "numpy":
        return h
    if lib == "cupy":
        import cupy
        with like.device:
            return cupy.asarray(h)
    import torch
    return torch.from_numpy(h).to(like.device)


def _merge_kept(extents):
    """Adjacent (length, stride) extents merged in order where C order allows it."""
    out: List[Tuple[int, int]] = []
    for m, t in extents:
        if out and out[-1][1] == t * m:
            out[-1] = (out[-1][0] * m, t)
        else:
            out.append((m, t))
    return out


def _merge_reduced(extents, ordered: bool = False) -> Optional[Tuple[int, int]]:
    """The reduced (length, stride) extents (in C order) as one (n, s) extent, or None: in any
    order, or (ordered) only in the order given, so that the extent meets the elements in C
    order."""
    if not extents:
        return 1, 1
    ext = list(extents) if ordered else _memory_order(extents)
    n, s = ext[0]
    for m, t in ext[1:]:
        if s != t * m:
            return None
        n, s = n * m, t
    return n, s


def _memory_order(extents):
    """(length, stride) extents from the largest stride to the smallest (in size)."""
    return sorted(extents, key=lambda e: -abs(e[1]))


class Plan:
    """An N-D reduction laid out for the C++ layer (see the module docstring). reordered: the
    reduced extent meets each output's elements in memory order, not C order."""

    __slots__ = ("lib", "arg", "name", "work", "kept", "n", "s", "out_shape", "keep_shape", "outputs", "copied",
                 "matrix", "reordered")


def plan(x, axes: Tuple[int, ...], fn: str, widen: Callable[[str], Optional[str]], contiguous: bool = False,
         c_order: bool = False) -> Plan:
    """Lays out the reduction of x over `axes`. widen(dtype name) -> the name of the exact
    conversion to make first, or None (it raises TypeError for types it refuses).
    contiguous: the reduced elements of each output must be one contiguous slice (norm, var).
    c_order: each output meets its elements in C order (else a copy)."""
    lib, a = _library(x, fn)
    name = _name(lib, a)
    _check_dtype(name, fn, "x")
    try:
        target = widen(name)
    except TypeError as e:
        raise TypeError(f"tally.{fn}: {e}") from None
    work = _astype(lib, a, target) if target else a
    if lib == "numpy" and (not work.dtype.isnative or _strides(work, "numpy") is None):
        work = np.ascontiguousarray(work, dtype=work.dtype.newbyteorder("="))
    shape = tuple(work.shape)
    ndim = len(shape)
    kept_axes = [i for i in range(ndim) if i not in axes]
    p = Plan()
    p.lib, p.name, p.copied, p.reordered = lib, name, False, False
    p.matrix = is_matrix(x)
    p.out_shape = tuple(shape[i] for i in kept_axes)
    p.keep_shape = tuple(1 if i in axes else shape[i] for i in range(ndim))
    p.outputs = math.prod(p.out_shape)
    n = math.prod(shape[i] for i in axes)
    if p.outputs == 0 or n == 0:  # nothing to read: strides do not matter
        kept, red = ([(p.outputs, 0)] if p.outputs > 1 else []), (n, 0)
    else:
        st = _strides(work, lib)
        kept = _merge_kept([(shape[i], st[i]) for i in kept_axes if shape[i] > 1])
        red_ext = [(shape[i], st[i]) for i in sorted(axes) if shape[i] > 1]
        red = _merge_reduced(red_ext, ordered=c_order)
        p.reordered = red is not None and _memory_order(red_ext) != red_ext
        if red is None or (contiguous and red[0] > 1 and red[1] != 1):
            work = _contiguous(lib, _permute(lib, work, kept_axes + sorted(axes)))
            p.copied, p.reordered = True, False
            kept, red = ([(p.outputs, n)] if p.outputs > 1 else []), (n, 1)
    p.work, p.kept, (p.n, p.s) = work, kept, red
    wname = _name(lib, work)
    if lib == "numpy":
        p.arg = Arg("numpy", x, work, numpy_view(work), wname, shape, work.size, False, 0)
    elif lib == "torch":
        cuda = work.device.type == "cuda"
        stream = 0
        if cuda:
            import torch
            stream = int(torch.cuda.current_stream(work.device).cuda_stream)
        p.arg = Arg("torch", a, work, None, wname, shape, work.numel(), cuda, stream)
    else:
        p.arg = Arg("cupy", a, work, None, wname, shape, work.size, True, _cupy_stream(work))
    return p


def _offsets(extents) -> np.ndarray:
    """Element offsets of every index of `extents` ((length, stride) pairs), in C order."""
    off = np.zeros(1, dtype=np.int64)
    for m, t in extents:
        off = (off[:, None] + np.arange(m, dtype=np.int64)[None, :] * t).reshape(-1)
    return off


def is_matrix(x) -> bool:
    """Whether x is a numpy.matrix, whose reductions along axes NumPy returns as matrices (see
    as_matrix)."""
    return isinstance(x, np.matrix)


def as_matrix(r):
    """An axis result of a numpy.matrix input as NumPy gives it: a matrix, the reduced axis
    kept with length 1 (shape (1, n) for axis 0, (m, 1) for axis 1, (1, 1) for both), as
    np.sum / min / max / argmin / argmax / mean / var / std (and their nan forms) return for
    matrices (numpy.linalg.norm returns plain arrays: norm is not wrapped)."""
    return np.asmatrix(r)


def _shaped(p: Plan, r, keepdims: bool):
    if p.matrix:
        return as_matrix(r.reshape(p.keep_shape))
    return r.reshape(p.keep_shape if keepdims else p.out_shape)


def _run_batches(p: Plan, kind: str, values_dtype: Optional[str], want_index: bool, accuracy: str = "exact"):
    """The matrix calls of a sum / mean / min / max reduction: (values, indices), each a flat
    C-contiguous array of p.outputs elements in output (C) order, or None."""
    values = _new(p.lib, p.work, (p.outputs,), values_dtype) if values_dtype else None
    indices = _new(p.lib, p.work, (p.outputs,), "int64") if want_index else None
    if p.outputs == 0:
        return values, indices
    kept = p.kept
    if not kept:
        rows, rs, others, j = 1, 0, [], None
    else:
        big = max(m for m, _ in kept)
        j = max(i for i, (m, _) in enumerate(kept) if m == big)  # the longest kept extent (the last on ties)
        rows, rs = kept[j]
        others = kept[:j] + kept[j + 1:]
    offsets = _offsets(others)
    outs = [r for r in (values, indices) if r is not None]
    views = [Arg(p.lib, r, r, numpy_view(r, writable=True) if p.lib == "numpy" else None, _name(p.lib, r),
                 (p.outputs,), p.outputs, p.arg.cuda, p.arg.stream) for r in outs]
    backend, stream = finish(p.arg, *views)
    v = views.pop(0).view if values is not None else None
    i = views.pop(0).view if indices is not None else None
    _tally.axis_batches(kind, p.arg.view, rows, p.n, rs, p.s, offsets, v, i, accuracy, backend, stream)
    if j is not None and j != len(kept) - 1:
        # matrix b wrote the outputs of extent j contiguously: back to C order over the kept extents
        ext = [m for m, _ in others] + [rows]
        perm = list(range(j)) + [len(kept) - 1] + list(range(j, len(kept) - 1))
        values, indices = ((None if r is None else _contiguous(p.lib, _permute(p.lib, r.reshape(ext), perm)).reshape(-1))
                           for r in (values, indices))
    return values, indices


def sum(x, axes, result_of, accuracy: str, keepdims: bool) -> Any:
    """Sums over `axes`; result_of(x's dtype name) -> the result's dtype name (float32 or
    float64 for floating x, int64 for signed integers and bool, uint64 for unsigned ones)."""
    p = plan(x, axes, "sum", _as_stored)
    r, _ = _run_batches(p, "sum", result_of(p.name), False, accuracy)
    return _shaped(p, r, keepdims)


def mean(x, axes, result_of, keepdims: bool) -> Any:
    p = plan(x, axes, "mean", _as_stored)
    r, _ = _run_batches(p, "mean", result_of(p.name), False)
    return _shaped(p, r, keepdims)


def _as_stored(name: str) -> Optional[str]:
    """The conversion `plan` makes first for sum, mean and the extremes: none (the C++ shape
    layer takes every element type)."""
    if name not in SHAPE_TYPES:
        raise TypeError(f"axis reductions of {name} arrays are not available "
                        "(float16, bfloat16, float32, float64, int8-int64, uint8-uint64 and bool are)")
    return None


def _describe(p: Plan, axes, k: int) -> str:
    """Which output k is, for messages: 'row 3' / 'column 3' of a 2-D x, else its index."""
    if len(p.keep_shape) == 2 and len(axes) == 1:
        return f"{'column' if axes[0] == 0 else 'row'} {k}"
    idx = tuple(int(i) for i in np.unravel_index(k, p.out_shape))
    return f"the slice at output index {idx}"


def extreme(x, axes, is_max: bool, skip_nan: bool, want_index: bool, fn: str, keepdims: bool) -> Any:
    """min/max values (want_index False: x's dtype) or first indices along the axis (int64)."""
    p = plan(x, axes, fn, _as_stored)
    if want_index and p.n == 0 and p.outputs > 0:
        raise ValueError(f"tally.{fn}: axis {axes[0]} has length 0 (shape {tuple(p.work.shape)}), so there is no "
                         "index to return (NumPy: attempt to get an arg-extreme of an empty sequence)")
    kind = ("nan" if skip_nan else "") + ("max" if is_max else "min")
    values, indices = _run_batches(p, kind, None if want_index else p.name, want_index)
    if not want_index and p.reordered and p.name in ("float16", "bfloat16", "float32", "float64") \
            and _any_zero(p.lib, values):
        # a -0.0 / +0.0 tie met in memory order: again in C order, for the sign of the first zero
        p = plan(x, axes, fn, _as_stored, c_order=True)
        values, _ = _run_batches(p, kind, p.name, False)
    if want_index:
        if p.outputs > 0:
            k = int(indices.argmin())  # -1 (a slice of only NaN) is below every index
            if int(indices[k]) < 0:
                raise ValueError(f"tally.{fn}: {_describe(p, axes, k)} holds only NaN, so there is no index to "
                                 "return (NumPy: All-NaN slice encountered)")
        return _shaped(p, indices, keepdims)
    return _shaped(p, values, keepdims)


def _any_zero(lib: str, values) -> bool:
    """Whether an output value is a zero (of either sign)."""
    if lib == "torch":
        return bool((values == 0).any().item())
    return bool((values == 0).any())


def per_slice(x, axes, kind: str, fn: str, widen, out_dtype: Callable[[str], str], accuracy: str, keepdims: bool,
              ddof: int = 0) -> Any:
    """norm (kind norm1, norm2, norminf), var, std over `axes`: one 1-D call per output on its
    contiguous slice (see the module docstring). out_dtype(the converted dtype name) -> the
    result's dtype."""
    p = plan(x, axes, fn, widen, contiguous=True)
    p.matrix = p.matrix and fn != "norm"  # (numpy.linalg.norm of a matrix along an axis: a plain array)
    result = out_dtype(p.arg.dtype)
    host = np.empty(p.outputs, dtype=result)
    offsets = _offsets(p.kept) if p.outputs > 0 else np.zeros(0, dtype=np.int64)
    backend, stream = finish(p.arg)
    _tally.slices(kind, p.arg.view, p.n, offsets, int(ddof), host, accuracy, backend, stream)
    return _shaped(p, _from_host(p.lib, p.work, host), keepdims)


def whole(x, value, dtype: str, fn: str, keepdims: bool, axes: Optional[Tuple[int, ...]] = None) -> Any:
    """A whole-array result: `value` itself, or (keepdims) an array of x's library, on x's
    device, of shape (1,) * x.ndim and `dtype` holding it. A numpy.matrix x reduced over an
    axis tuple naming every axis (`axes` not None), or with keepdims, gives a (1, 1) matrix
    as NumPy does (axis=None without keepdims: the scalar); not for norm (numpy.linalg.norm
    returns plain arrays)."""
    if is_matrix(x) and fn != "norm" and (keepdims or axes is not None):
        return as_matrix(np.full((1, 1), value, dtype=dtype))
    if not keepdims:
        return value
    lib, a = _library(x, fn)
    if lib == "numpy" and len(a.shape) == 0:  # (a 0-d NumPy input keeps no axis: a scalar, as NumPy)
        return value
    shape = (1,) * len(a.shape)
    if lib == "torch":
        import torch
        return torch.full(shape, value, dtype=getattr(torch, dtype), device=a.device)
    if lib == "cupy":
        import cupy
        with a.device:
            return cupy.full(shape, value, dtype=dtype)
    return np.full(shape, value, dtype=dtype)


def dtype_of(x) -> str:
    """x's element type as NumPy names it (np.asarray for lists and scalars)."""
    lib = library(x)
    if lib == "torch":
        return str(x.dtype)[len("torch."):]
    if lib == "cupy":
        return x.dtype.name
    if lib == "cai":
        return np.dtype(x.__cuda_array_interface__["typestr"]).name
    if lib == "dlpack":
        return np.dtype(getattr(x, "dtype", "float64")).name
    return np.asarray(x).dtype.name
