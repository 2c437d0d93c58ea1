"""tally's compiled layer; use the functions of the tally package.

Arrays here are anything nanobind's device-agnostic ndarray accepts (a NumPy array, a DLPack
capsule, an object with __dlpack__), C-contiguous, on the CPU or a CUDA device; `stream` is a
CUDA stream handle as an integer (0: the legacy default stream). Written from
`python -m nanobind.stubgen -m tally._tally`, with the array and result types made precise.
"""

from typing import Any, Annotated, Union

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

def from_cuda_array_interface(obj: object) -> Any:
    """A zero-copy ndarray (device type CUDA) over an object's __cuda_array_interface__."""

def norm_ord(x: ArrayIn, ord: str, out_dtype: str = 'float64', accuracy: str = 'exact', backend: str = 'auto', stream: int = 0) -> float: ...

def var(x: ArrayIn, ddof: int, take_sqrt: bool, out_dtype: str = 'float64', accuracy: str = 'exact', backend: str = 'auto', stream: int = 0) -> float: ...

def count_nonzero(x: ArrayIn, backend: str = 'auto', stream: int = 0) -> int: ...

def axpy(a_float: float, a_int: int, x: ArrayIn, y: ArrayOut, backend: str = 'auto', stream: int = 0) -> None: ...

def scale(a_float: float, a_int: int, x: ArrayOut, backend: str = 'auto', stream: int = 0) -> None: ...

def cuda_available() -> bool: ...
