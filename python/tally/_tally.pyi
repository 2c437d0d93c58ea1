"""tally's compiled layer; use the functions of the tally package"""

from typing import Annotated

from numpy.typing import NDArray


def sum(x: Annotated[NDArray, dict(order='C', device='cpu', writable=False)], out_dtype: str = '', accuracy: str = 'exact', backend: str = 'auto') -> object: ...

def dot(x: Annotated[NDArray, dict(order='C', device='cpu', writable=False)], y: Annotated[NDArray, dict(order='C', device='cpu', writable=False)], out_dtype: str = '', accuracy: str = 'exact', backend: str = 'auto') -> object: ...

def add(x: Annotated[NDArray, dict(order='C', device='cpu', writable=False)], y: Annotated[NDArray, dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray, dict(order='C', device='cpu')], backend: str = 'auto') -> None: ...

def cuda_available() -> bool: ...
