"""tally's compiled layer; use the functions of the tally package.

Arrays here are anything nanobind's device-agnostic ndarray accepts (a NumPy array, a DLPack
capsule, an object with __dlpack__), C-contiguous (the *_strided and *_axis functions: any
strides, 1-D and 2-D; axis_batches and slices: any ndim), on the CPU or a CUDA device; `stream` is a
CUDA stream handle as an integer (0: the legacy default stream). Written from
`python -m nanobind.stubgen -m tally._tally`, with the array and result types made precise.
"""

from typing import Any, Annotated, Optional, Union

from numpy.typing import NDArray

# A read-only array view (NumPy array, DLPack capsule, __dlpack__ object, any device).
ArrayIn = Union[Annotated[NDArray, dict(writable=False)], Any]
# A writable one.
ArrayOut = Union[NDArray, Any]


def sum(x: ArrayIn, out_dtype: str = '', accuracy: str = 'exact', backend: str = 'auto', stream: int = 0) -> Union[float, int]: ...

def dot(x: ArrayIn, y: ArrayIn, out_dtype: str = '', accuracy: str = 'exact', backend: str = 'auto', stream: int = 0) -> Union[float, int]: ...

def add(x: ArrayIn, y: ArrayIn, out: ArrayOut, backend: str = 'auto', stream: int = 0) -> None: ...

def mean(x: ArrayIn, out_dtype: str = 'float64', backend: str = 'auto', stream: int = 0) -> float: ...

def norm2(x: ArrayIn, out_dtype: str = 'float64', backend: str = 'auto', stream: int = 0) -> float: ...

def extreme(is_max: bool, skip_nan: bool, x: ArrayIn, backend: str = 'auto', stream: int = 0) -> tuple[Union[float, int], int]: ...
def minmax(skip_nan: bool, x: ArrayIn, backend: str = 'auto', stream: int = 0) -> tuple[Union[float, int], int, Union[float, int], int]: ...

def from_cuda_array_interface(obj: object) -> Any:
    """A zero-copy ndarray (device type CUDA) over an object's __cuda_array_interface__."""

def bfloat16_view(x: Annotated[NDArray, dict(dtype='uint16', device='cpu')], writable: bool) -> Any:
    """x (a NumPy uint16 array, any shape and strides) as an array of element type bfloat16 (an
    nb_ndarray over the same memory, zero copy, keeping x alive): how the Python layer passes
    ml_dtypes.bfloat16 arrays, which NumPy cannot export. writable: an array tally writes."""

def norm_ord(x: ArrayIn, ord: str, out_dtype: str = 'float64', accuracy: str = 'exact', backend: str = 'auto', stream: int = 0) -> float: ...

def var(x: ArrayIn, ddof: int, take_sqrt: bool, out_dtype: str = 'float64', accuracy: str = 'exact', backend: str = 'auto', stream: int = 0) -> float: ...

def count_nonzero(x: ArrayIn, backend: str = 'auto', stream: int = 0) -> int: ...

def axpy(a_float: float, a_int: int, x: ArrayIn, y: ArrayOut, backend: str = 'auto', stream: int = 0) -> None: ...

def scale(a_float: float, a_int: int, x: ArrayOut, backend: str = 'auto', stream: int = 0) -> None: ...

def cuda_available() -> bool: ...

# Strided 1-D views (tally/shapes.hpp: reduce, mean, extreme over a strided_ref): x is 1-D
# with any element stride (negative and 0 too); float32, float64, int32, int64.
def sum_strided(x: ArrayIn, out_dtype: str = '', accuracy: str = 'exact', backend: str = 'auto', stream: int = 0) -> Union[float, int]: ...

def mean_strided(x: ArrayIn, out_dtype: str = 'float64', backend: str = 'auto', stream: int = 0) -> float: ...

def extreme_strided(is_max: bool, skip_nan: bool, x: ArrayIn, backend: str = 'auto', stream: int = 0) -> tuple[Union[float, int], int]: ...

# Along axis 0 (per column) or 1 (per row) of a 2-D x with any row and column strides
# (tally::reduce_axis, mean_axis, extreme_axis), into C-contiguous 1-D results made by the
# caller: out float32/float64 (int64 for integer sums), values x's dtype, indices int64 (None:
# not written). Blocking.
def sum_axis(x: ArrayIn, axis: int, out: ArrayOut, accuracy: str = 'exact', backend: str = 'auto', stream: int = 0) -> None: ...

def mean_axis(x: ArrayIn, axis: int, out: ArrayOut, backend: str = 'auto', stream: int = 0) -> None: ...

def extreme_axis(is_max: bool, skip_nan: bool, x: ArrayIn, axis: int, values: Optional[ArrayOut], indices: Optional[ArrayOut], backend: str = 'auto', stream: int = 0) -> None: ...

# N-D axis reductions (python/tally/_axis.py). axis_batches: along axis 1 of offsets.shape[0]
# matrices (rows, cols) with element strides (row_stride, col_stride) at element offsets
# offsets[b] from x's data (x: any ndim and strides); matrix b writes out/indices[b*rows :
# (b+1)*rows] (C-contiguous 1-D results made by the caller; None: not written). kind: 'sum',
# 'mean', 'min', 'max', 'nanmin', 'nanmax'. One C++ call per matrix. Blocking.
def axis_batches(kind: str, x: ArrayIn, rows: int, cols: int, row_stride: int, col_stride: int, offsets: Annotated[NDArray, dict(dtype='int64', shape=(None,), order='C', device='cpu')], out: Optional[ArrayOut], indices: Optional[ArrayOut], accuracy: str = 'exact', backend: str = 'auto', stream: int = 0) -> None: ...

# slices: out[i] = the 1-D function of the n contiguous elements at element offset offsets[i]
# from x's data; kind 'norm1', 'norm2', 'norminf', 'var', 'std' (ddof); out a host float32 or
# float64 array of offsets.shape[0] elements. One C++ call (one stream synchronisation on the
# CUDA backend) per output. Blocking.
def slices(kind: str, x: ArrayIn, n: int, offsets: Annotated[NDArray, dict(dtype='int64', shape=(None,), order='C', device='cpu')], ddof: int, out: ArrayOut, accuracy: str = 'exact', backend: str = 'auto', stream: int = 0) -> None: ...
