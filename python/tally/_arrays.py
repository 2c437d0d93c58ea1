"""How tally's Python functions take arrays: library detection, flattening, stream choice and
zero-copy export to the compiled layer (tally._tally), which reads contiguous 1-D data.

- NumPy arrays (and lists, scalars, anything np.asarray takes): the CPU backend.
- CuPy arrays and torch tensors: exported with DLPack (``__dlpack__(stream=...)``) to the CPU
  or CUDA backend by their device; CUDA work runs on the library's *current* stream
  (cupy.cuda.get_current_stream(), torch.cuda.current_stream(device)), which is also the stream
  passed to ``__dlpack__``, so the producer has nothing to synchronise and nothing races.
- Other objects with ``__dlpack__`` and ``__dlpack_device__``: CUDA data on the legacy default
  stream (DLPack stream 1: the producer orders its work before it).
- Objects with only ``__cuda_array_interface__`` (v2/v3): zero copy through an ndarray made in
  C++; the work runs on the stream the interface names (its ``stream`` entry), else on the
  legacy default stream.

Any shape is read flattened in C order. C-contiguous data is never copied; other layouts
(``x[::3]``, ``x.T``) are made contiguous first *in the array's own library* (numpy / cupy /
torch, on the current stream), except that reductions whose value does not depend on the
order (sum, mean, norm, min, max) read any dense layout (a transpose, Fortran order) in place,
and that callers passing ``strided_ok`` get strided 1-D views as they are (Arg.strided: for
_tally's *_strided functions). Axis reductions of N-D arrays: tally/_axis.py.
"""
from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any, Optional

import numpy as np

from . import _tally

SUPPORTED = ("float32", "float64", "int32", "int64", "float16", "bfloat16", "int8", "int16", "uint8", "uint16", "uint32",
             "uint64", "bool")

# DLPack device types
_CPU, _CUDA, _CUDA_HOST, _CUDA_MANAGED = 1, 2, 3, 13


class Arg:
    """One prepared input: `view` goes to _tally; `flat` keeps the (maybe copied) data alive."""

    __slots__ = ("lib", "obj", "flat", "view", "dtype", "shape", "size", "cuda", "stream", "strided", "reordered")

    def __init__(self, lib, obj, flat, view, dtype, shape, size, cuda, stream, strided=False, reordered=False):
        self.lib, self.obj, self.flat, self.view = lib, obj, flat, view
        self.dtype, self.shape, self.size, self.cuda, self.stream = dtype, shape, size, cuda, stream
        self.strided = strided  # flat is a strided 1-D view (for _tally's *_strided functions)
        # flat holds x's elements in memory order, not C order (order_free: a permuted view)
        self.reordered = reordered


def library(x) -> str:
    """'numpy', 'cupy', 'torch', 'dlpack' (another DLPack producer), 'cai' (only
    __cuda_array_interface__) or 'other' (converted with np.asarray)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return "numpy"
    root = type(x).__module__.split(".", 1)[0]
    if root == "cupy" and hasattr(x, "__dlpack__"):
        return "cupy"
    if root == "torch" and "torch" in sys.modules and isinstance(x, sys.modules["torch"].Tensor):
        return "torch"
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return "dlpack"
    if hasattr(x, "__cuda_array_interface__"):
        return "cai"
    return "other"


_NAMES: dict = {}


def _name(dt) -> str:
    """dt.name for a NumPy dtype, cached: NumPy builds the name in Python on every access (about
    3 us, four times a call before: half of a small call's time)."""
    try:
        return _NAMES[dt]
    except KeyError:
        n = _NAMES[dt] = dt.name
        return n
    except TypeError:  # (an unhashable dtype)
        return dt.name


def dtype_name(dt) -> str:
    """A dtype-like (NumPy dtype, type or string; torch.dtype) as NumPy names it."""
    s = str(dt)
    if s.startswith("torch."):
        return s[len("torch."):]
    return _name(np.dtype(dt))


def is_bfloat16(dt) -> bool:
    """Whether a NumPy dtype is a bfloat16 one: ml_dtypes.bfloat16 (NumPy has none of its own;
    ml_dtypes and the libraries built on it register it under that name, 2 bytes)."""
    return _name(dt) == "bfloat16" and dt.itemsize == 2


def numpy_view(a: np.ndarray, writable: bool = False) -> Any:
    """What _tally gets for the NumPy array `a`: `a` itself, or for bfloat16 data (which
    NumPy's buffer protocol and DLPack export cannot describe) a's bits viewed as uint16 and
    handed over with the element type bfloat16 (_tally.bfloat16_view: the same memory, shape
    and strides, zero copy). writable: an array tally writes."""
    if is_bfloat16(a.dtype):
        return _tally.bfloat16_view(a.view(np.uint16), writable)
    return a


_SUPPORTED_TEXT = "float16, bfloat16, float32, float64, int8-int64, uint8-uint64 and bool are supported"


def article(name: str) -> str:
    """The article before a dtype name in messages, as it is read aloud: 'an int64', 'a uint8'
    ("you-int"), 'a float32'."""
    return "an" if name[:1] in "aeio" else "a"


def _check_dtype(name: str, fn: str, what: str) -> None:
    if name not in SUPPORTED:
        raise TypeError(f"tally.{fn}: {what} has unsupported dtype {name} ({_SUPPORTED_TEXT})")


def _not_an_array(x, a: np.ndarray, what: str) -> str:
    """What a value that is not an array (x, which NumPy made into `a`) is, for messages."""
    if isinstance(x, int) and not isinstance(x, bool):
        return f"{x} is an int outside the int64 and uint64 ranges"
    if isinstance(x, Iterator):
        return (f"it is an iterator ({type(x).__name__}), which NumPy does not read as an array: pass list({what}) "
                f"or np.fromiter({what}, dtype)")
    if a.dtype == object:
        why = (": an element is an int outside the int64 and uint64 ranges, None, or not a number"
               if isinstance(x, (list, tuple)) else "")
        return f"NumPy converts this {type(x).__name__} only to an array of Python objects (dtype object{why})"
    return f"NumPy converts this {type(x).__name__} to dtype {a.dtype.name}"


def as_numpy(x, fn: str, what: str = "x") -> np.ndarray:
    """np.asarray(x) for NumPy arrays and what NumPy converts (lists, scalars), checked: a
    masked array or an unsupported dtype is a TypeError; a value that is not an array (a
    Python int outside the int64 and uint64 ranges, an iterator) is named as such, not by the
    dtype NumPy gives it (object). Bool bytes other than 0 and 1 go as they are: the C++ layer
    reads any nonzero byte as True, as NumPy does (before, they were copied as `a != 0` here,
    one more read of every bool array)."""
    refuse_masked(x, fn, what)
    a = np.asarray(x)
    name = _name(a.dtype)
    if name not in SUPPORTED and not isinstance(x, (np.ndarray, np.generic)):
        raise TypeError(f"tally.{fn}: {what} is not an array of a supported type ({_SUPPORTED_TEXT}): "
                        f"{_not_an_array(x, a, what)}")
    _check_dtype(name, fn, what)
    return a


def _dense_order(x, lib: str):
    """x with its axes permuted into memory order when that makes it C-contiguous (a view),
    else None. Used by reductions whose value does not depend on the element order."""
    if lib == "torch":
        strides = x.stride()
    else:
        strides = x.strides
    if x.ndim < 2 or any(s < 0 for s in strides):
        return None
    perm = sorted(range(x.ndim), key=lambda i: -strides[i])
    y = x.permute(*perm) if lib == "torch" else x.transpose(perm)
    contiguous = y.is_contiguous() if lib == "torch" else y.flags.c_contiguous
    return y if contiguous else None


def _cupy_stream(x) -> int:
    import cupy  # the input is a cupy array, so cupy is importable
    try:
        return int(cupy.cuda.get_current_stream(x.device.id).ptr)
    except TypeError:  # CuPy without the device argument
        with x.device:
            return int(cupy.cuda.get_current_stream().ptr)


def _dlpack_stream(ptr: int) -> int:
    # DLPack's stream argument for CUDA: 1 is the legacy default stream (0 is not allowed).
    return 1 if ptr == 0 else ptr


# The element types the C++ shape layer (strided views, axis reductions) reads in place.
STRIDED_TYPES = ("float32", "float64", "int32", "int64")

# The supported dtypes in native byte order that NumPy's buffer protocol describes (bfloat16
# is not one: numpy_view): prepare's fast path hands these arrays to _tally as they are.
_NATIVE = {np.dtype(n): n for n in SUPPORTED if n != "bfloat16"}


def _strides(x, lib: str):
    """x's strides in elements, or None when a byte stride is not a multiple of the item size."""
    if lib == "torch":
        return tuple(x.stride())
    size = x.dtype.itemsize
    if any(s % size for s in x.strides):
        return None
    return tuple(s // size for s in x.strides)


def _zero_copy_1d(x, lib: str, name: str, strided_ok) -> bool:
    """Whether a non-contiguous 1-D x goes to the strided functions as it is."""
    return (strided_ok is not None and x.ndim == 1 and name in STRIDED_TYPES and _strides(x, lib) is not None
            and strided_ok(lib == "torch" and x.device.type == "cuda" or lib == "cupy", name))


def refuse_masked(x, fn: str, what: str = "x") -> None:
    """TypeError for a NumPy masked array: its data would be read with the masked-out values
    in it (NumPy's own reductions skip them). __cuda_array_interface__ masks are refused too."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"tally.{fn}: {what} is a masked array (numpy.ma), and tally would read its masked-out "
                        f"values too: pass {what}.compressed() (the unmasked values) or {what}.filled(value)")


def prepare(x, fn: str, what: str = "x", order_free: bool = False, strided_ok=None) -> Arg:
    """Flatten `x` into a contiguous 1-D view for _tally (see the module docstring).
    strided_ok(cuda, dtype) -> bool: whether a non-contiguous 1-D x may be read in place by
    the strided functions (Arg.strided; None: never)."""
    if type(x) is np.ndarray and x.flags.c_contiguous:  # (the common case, without the checks below)
        name = _NATIVE.get(x.dtype)
        if name is not None:
            flat = x if x.ndim == 1 else x.reshape(-1)
            return Arg("numpy", x, flat, flat, name, x.shape, flat.size, False, 0)
    lib = library(x)
    if lib in ("numpy", "other"):
        a = as_numpy(x, fn, what)
        if not a.dtype.isnative:  # big-endian data: converted to native byte order (a copy)
            a = a.astype(a.dtype.newbyteorder("="))
        if not a.flags.c_contiguous and _zero_copy_1d(a, "numpy", _name(a.dtype), strided_ok):
            return Arg("numpy", x, a, a, _name(a.dtype), a.shape, a.size, False, 0, True)
        d = None
        if not a.flags.c_contiguous:
            d = _dense_order(a, "numpy") if order_free else None
            a = d if d is not None else np.ascontiguousarray(a)
        flat = a.reshape(-1)
        return Arg("numpy", x, flat, numpy_view(flat), _name(a.dtype), a.shape, flat.size, False, 0,
                   reordered=d is not None)

    if lib == "cai":
        nd = _tally.from_cuda_array_interface(x)
        cai = x.__cuda_array_interface__
        name = np.dtype(cai["typestr"]).name
        _check_dtype(name, fn, what)
        shape = tuple(cai["shape"])
        size = int(np.prod(shape)) if shape else 1
        s = cai.get("stream")
        # the producer's stream (its data is ready there); None: ready for any stream
        stream = None if s is None else (0 if s == 1 else int(s))
        strides = cai.get("strides")
        strided = (strides is not None and len(shape) == 1 and shape[0] > 1 and strides[0] != np.dtype(name).itemsize
                   and strided_ok is not None and name in STRIDED_TYPES and strided_ok(True, name))
        return Arg("cai", x, nd, nd, name, shape, size, True, stream, strided)

    if lib == "torch":
        t = x.detach()  # DLPack refuses tensors that require grad; the data is the same
        name = dtype_name(t.dtype)
        _check_dtype(name, fn, what)
        if not t.is_contiguous() and _zero_copy_1d(t, "torch", name, strided_ok):
            cuda = t.device.type == "cuda"
            stream = 0
            if cuda:
                import torch
                stream = int(torch.cuda.current_stream(t.device).cuda_stream)
            return Arg("torch", x, t, None, name, tuple(x.shape), t.numel(), cuda, stream, True)
        d = None
        if not t.is_contiguous():
            d = _dense_order(t, "torch") if order_free else None
            t = d if d is not None else t.contiguous()
        flat = t.reshape(-1)
        cuda = flat.device.type == "cuda"
        stream = 0
        if cuda:
            import torch
            stream = int(torch.cuda.current_stream(flat.device).cuda_stream)
        return Arg("torch", x, flat, None, name, tuple(x.shape), flat.numel(), cuda, stream, reordered=d is not None)

    if lib == "cupy":
        import cupy
        name = _name(x.dtype)
        _check_dtype(name, fn, what)
        a = x
        if not a.flags.c_contiguous and _zero_copy_1d(a, "cupy", name, strided_ok):
            return Arg("cupy", x, a, None, name, tuple(x.shape), a.size, True, _cupy_stream(a), True)
        d = None
        if not a.flags.c_contiguous:
            d = _dense_order(a, "cupy") if order_free else None
            if d is not None:
                a = d
            else:
                with a.device:
                    a = cupy.ascontiguousarray(a)
        flat = a.reshape(-1)
        return Arg("cupy", x, flat, None, name, tuple(x.shape), flat.size, True, _cupy_stream(flat),
                   reordered=d is not None)

    # another DLPack producer: no copies (we do not know its library), legacy default stream
    dev_type, _ = x.__dlpack_device__()
    cuda = int(dev_type) in (_CUDA, _CUDA_MANAGED)
    shape = tuple(getattr(x, "shape", ()))
    name = dtype_name(getattr(x, "dtype", "float64"))
    return Arg("dlpack", x, x, None, name, shape, int(np.prod(shape)) if shape else 1, cuda, 0)


def empty_like(a: Arg) -> Any:
    """A new C-contiguous array of a's shape and dtype in a's library and on a's device (CuPy
    and torch allocate on their current stream), or TypeError when a's library is unknown."""
    return new_array(a, a.shape, a.dtype, "add", "pass out=")


def new_array(a: Arg, shape, dtype: str, fn: str, remedy: str) -> Any:
    """A new C-contiguous array of `shape` and `dtype` (NumPy's name) in a's library and on a's
    device (CuPy and torch allocate on their current stream), or TypeError when a's library is
    not NumPy, CuPy or torch."""
    if a.lib == "numpy":
        return np.empty(shape, dtype=dtype)
    if a.lib == "cupy":
        import cupy
        with a.obj.device:
            return cupy.empty(shape, dtype=dtype)
    if a.lib == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype), device=a.obj.device)
    raise TypeError(f"tally.{fn}: the inputs are not NumPy, CuPy or torch arrays, so tally cannot make the "
                    f"result array: {remedy}")


def prepare_out(out, x: Arg, fn: str = "add", what: str = "out") -> Arg:
    """A writable zero-copy view of `out` (C-contiguous, x's shape and dtype, native byte
    order) or ValueError; `what` names it in messages (add's out, axpy's y, scale's x)."""
    lib = library(out)
    if lib == "other":
        raise TypeError(f"tally.{fn}: {what} must be an array, not {type(out).__name__}")
    if isinstance(out, np.generic):
        raise TypeError(f"tally.{fn}: {what} is a NumPy scalar ({type(out).__name__}), not a writable array: {fn} "
                        f"writes {what} in place (pass an array, e.g. np.array([...]))")
    if lib == "numpy" and not out.flags.writeable:
        raise ValueError(f"tally.{fn}: {what} is read-only")
    if lib == "numpy" and not out.dtype.isnative:
        # (nanobind would refuse it with a list of signatures; written as native data it would
        # hold garbage)
        raise ValueError(f"tally.{fn}: {what} has dtype {out.dtype.str}, in non-native (big-endian) byte order; tally "
                         f"writes it in place in native byte order: convert it first "
                         f"({what}.astype({what}.dtype.newbyteorder('=')))")
    cai = out.__cuda_array_interface__ if lib == "cai" else None
    shape = tuple(cai["shape"]) if cai is not None else tuple(out.shape)
    name = np.dtype(cai["typestr"]).name if cai is not None else dtype_name(out.dtype)
    if shape != tuple(x.shape) or name != x.dtype:
        raise ValueError(f"tally.{fn}: {what} has shape {shape} and dtype {name}; "
                         f"it must have x's shape {tuple(x.shape)} and dtype {x.dtype}")
    if lib == "numpy":
        ok = out.flags.c_contiguous
    elif lib == "cupy":
        ok = out.flags.c_contiguous
    elif lib == "torch":
        ok = out.is_contiguous()
    else:
        ok = True  # checked by _tally
    if not ok:
        raise ValueError(f"tally.{fn}: {what} must be C-contiguous (tally writes it in place, never through a copy)")
    if lib == "numpy":
        flat = out.reshape(-1)
        return Arg(lib, out, flat, numpy_view(flat, writable=True), name, shape, flat.size, False, 0)
    if lib == "cai":
        nd = _tally.from_cuda_array_interface(out)
        return Arg(lib, out, nd, nd, name, shape, x.size, True, 0)
    if lib == "torch":
        if out.requires_grad:
            raise ValueError(f"tally.{fn}: {what} requires grad; tally does not record autograd history")
        flat = out.reshape(-1)
        return Arg(lib, out, flat, None, name, shape, flat.numel(), flat.device.type == "cuda", x.stream)
    if lib == "cupy":
        flat = out.reshape(-1)
        return Arg(lib, out, flat, None, name, shape, flat.size, True, x.stream)
    dev_type, _ = out.__dlpack_device__()
    cuda = int(dev_type) in (_CUDA, _CUDA_MANAGED)
    return Arg(lib, out, out, None, name, shape, x.size, cuda, x.stream)


def finish(*args: Arg) -> tuple:
    """Exports every argument for one call and returns (backend, stream): 'cuda' when all are
    CUDA data, 'cpu' when none is (mixing is a TypeError). The call runs on the first CUDA
    argument's stream, and every DLPack producer is told that stream (``__dlpack__(stream=)``),
    so each orders its pending work before the call and nothing races; an argument that only
    has __cuda_array_interface__ naming another stream is a ValueError (tally does not
    synchronise streams itself)."""
    for a in args:
        if a.cuda or a.view is None:
            break
    else:  # (host arrays, all exported already)
        return "cpu", 0
    kinds = {a.cuda for a in args}
    if len(kinds) > 1:
        raise TypeError("tally: the arrays of one call must all be CUDA arrays or all host arrays; "
                        "these are mixed (copy them to one side)")
    cuda = args[0].cuda
    stream = next((a.stream for a in args if a.lib != "dlpack" and a.stream is not None), 0) if cuda else 0
    for a in args:
        if a.view is not None:
            if a.lib == "cai" and a.stream is not None and a.stream != stream:
                raise ValueError(f"tally: an array's __cuda_array_interface__ names stream {a.stream:#x}, but the "
                                 f"call runs on stream {stream:#x}; synchronise them first")
            continue
        if a.lib == "cupy" and any(st < 0 for st in a.flat.strides):
            # CuPy's DLPack export divides a negative byte stride by an unsigned item size and
            # hands out strides near 2^62 (cupy/cupy#10172, fixed by cupy/cupy#10228): read a
            # negatively strided CuPy array through __cuda_array_interface__ instead. Its data
            # is ready on CuPy's current stream, which is the stream this call runs on.
            a.view = _tally.from_cuda_array_interface(a.flat)
            continue
        a.view = a.flat.__dlpack__(stream=_dlpack_stream(stream)) if cuda else a.flat.__dlpack__()
    return ("cuda" if cuda else "cpu"), stream

