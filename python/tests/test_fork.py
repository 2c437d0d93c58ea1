"""tally in processes forked after the parent used it (multiprocessing's 'fork' start method,
Linux's default before Python 3.14). Before, the child's first multithreaded CPU call waited
forever: GNU libgomp's thread pool does not survive fork. Now the child runs the CPU loops
on one thread, with the same bits."""
import multiprocessing as mp
import sys

import numpy as np
import pytest

import tally

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork start method: Linux")


def _work(seed):
    x = np.random.default_rng(seed).standard_normal(1 << 21)
    m = x.reshape(-1, 512)
    return (tally.sum(x), tally.var(x, ddof=1), tally.argmax(x),
            tally.sum(m, axis=0).tolist())


def test_forked_workers_finish_with_the_parents_bits():
    parent = [_work(s) for s in range(3)]  # OpenMP threads started in this process first
    with mp.get_context("fork").Pool(2) as pool:
        result = pool.map_async(_work, range(3))
        children = result.get(timeout=120)  # (a hang is a multiprocessing.TimeoutError)
    assert children == parent
