"""The Python examples of the docs, run as written.

- The docstrings of the tally package (doctest: the `>>>` examples).
- README.md's ```python blocks: each block is run, and every `print(...)` line whose comment
  starts with the printed text followed by a colon (`print(x)  # 16777217.0: why`) must print
  that text. README's block uses CuPy; where CuPy (or a GPU) is missing it runs with NumPy in
  CuPy's place, as the README says that NumPy takes the same calls (the CPU backend).
"""
import contextlib
import doctest
import importlib
import io
import re
import sys
from pathlib import Path

import numpy as np
import pytest

tally = pytest.importorskip("tally")

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


@pytest.mark.parametrize("module", ["tally", "tally._axis", "tally._arrays", "tally._out"])
def test_docstring_examples(module):
    m = importlib.import_module(module)
    r = doctest.testmod(m, optionflags=doctest.ELLIPSIS)
    assert r.failed == 0
    if module == "tally":
        assert r.attempted > 0  # the package docstring's example


def _cupy_or_numpy():
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0 and tally.cuda_available():
            return cupy
    except Exception:  # no CuPy, no GPU, no driver
        pass
    return np


def readme_blocks():
    return FENCE.findall((ROOT / "README.md").read_text())


def test_readme_has_python_examples():
    assert readme_blocks()


@pytest.mark.parametrize("source", readme_blocks())
def test_readme_python_block(source, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", _cupy_or_numpy())
    # what each print line must print (None: not stated), in order; one line each
    expected = []
    for line in source.splitlines():
        if re.match(r"\s*print\(", line):
            m = re.search(r"\)\s*#\s*([^:\s][^:]*?):", line)
            expected.append(m.group(1).strip() if m else None)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "README.md", "exec"), {"__name__": "readme_example"})
    printed = out.getvalue().splitlines()
    assert len(printed) == len(expected), (printed, expected)
    for got, want in zip(printed, expected):
        if want is not None:
            assert got == want, (got, want)
