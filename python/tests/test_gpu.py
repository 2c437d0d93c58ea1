"""tally on CuPy arrays and CUDA torch tensors (the CUDA backend, zero copy, on the library's
current stream), against NumPy / CuPy / torch results and exact references. Every test skips
where the library is missing, where there is no CUDA device, or where tally was built
without its CUDA backend; they run on the GPU machine."""
import math

import numpy as np
import pytest

tally = pytest.importorskip("tally")

from exact_ref import fraction_dot, fraction_sum, round_f32, round_f64  # noqa: E402


class Lib:
    """What a test needs from one array library."""

    def __init__(self, name):
        self.name = name
        if name == "cupy":
            import cupy as m
            if m.cuda.runtime.getDeviceCount() == 0:
                pytest.skip("cupy: no CUDA device")
        else:
            import torch as m
            if not m.cuda.is_available():
                pytest.skip("torch: no CUDA device")
        if not tally.cuda_available():
            pytest.skip("this build of tally has no CUDA backend (or sees no GPU)")
        self.m = m

    def array(self, a):
        a = np.asarray(a)
        return self.m.asarray(a) if self.name == "cupy" else self.m.from_numpy(a.copy()).cuda()

    def host(self, x):
        return self.m.asnumpy(x) if self.name == "cupy" else x.cpu().numpy()

    def is_mine(self, x):
        return isinstance(x, self.m.ndarray if self.name == "cupy" else self.m.Tensor)

    def new_stream(self):
        return self.m.cuda.Stream(non_blocking=True) if self.name == "cupy" else self.m.cuda.Stream()

    def use(self, s):
        return s if self.name == "cupy" else self.m.cuda.stream(s)

    def sync(self):
        if self.name == "cupy":
            self.m.cuda.Device().synchronize()
        else:
            self.m.cuda.synchronize()


@pytest.fixture(params=["cupy", "torch"])
def lib(request):
    pytest.importorskip(request.param)
    return Lib(request.param)


def test_sum_dot_against_exact_and_library(lib):
    rng = np.random.default_rng(7)
    for dt in (np.float32, np.float64):
        for n in (0, 1, 7, 1000, 2**20 + 3):
            h = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))).astype(dt)
            g = rng.standard_normal(n).astype(dt)
            x, y = lib.array(h), lib.array(g)
            q = fraction_sum(h) if n <= 4096 else None
            if dt == np.float64:
                assert tally.sum(x) == math.fsum(h)
            else:
                assert tally.sum(x, dtype=np.float64) == math.fsum(h.astype(np.float64))
                if q is not None:
                    assert tally.sum(x) == round_f32(q)
            if n <= 4096:
                qd = fraction_dot(h, g)
                assert tally.dot(x, y) == (round_f32(qd) if dt == np.float32 else round_f64(qd))
            # the library's own (not correctly rounded) float64 sum is close
            ours = tally.sum(x, dtype=np.float64)
            theirs = float(x.sum(dtype=lib.m.float64))
            assert abs(ours - theirs) <= 1e-12 * float(np.abs(h.astype(np.float64)).sum()) + 1e-300
            fast = tally.sum(x, accuracy="fast", dtype=np.float64)
            assert abs(fast - math.fsum(h.astype(np.float64))) <= n * 2.0**-52 * np.abs(h.astype(np.float64)).sum()
    ints = rng.integers(-2**31, 2**31, 100_000, dtype=np.int64).astype(np.int32)
    assert tally.sum(lib.array(ints)) == int(ints.astype(object).sum())
    with pytest.raises(OverflowError):
        tally.sum(lib.array(np.array([2**62, 2**62], dtype=np.int64)))


def test_extremes_match_library(lib):
    h = np.random.default_rng(3).standard_normal(100_003)
    h[[5, 77, 90_000]] = h.max() + 1.0  # ties: the first index
    x = lib.array(h)
    assert tally.max(x) == h.max() and tally.argmax(x) == 5
    assert tally.min(x) == h.min() and tally.argmin(x) == int(np.argmin(h))
    h[40] = np.nan
    x = lib.array(h)
    assert math.isnan(tally.max(x)) and tally.argmax(x) == 40
    assert tally.nanmax(x) == np.nanmax(h) and tally.nanargmax(x) == 5


def test_strided_and_2d_views(lib):
    h = np.arange(3 * 1000, dtype=np.float64).reshape(3, 1000) * 0.1
    x = lib.array(h)
    views = [(x[:, ::3], h[:, ::3]), (x.T, h.T), (x[1], h[1])]
    if lib.name == "cupy":
        views.append((x[:, ::-1], h[:, ::-1]))  # torch has no negative steps
    for v, hv in views:
        assert tally.sum(v) == math.fsum(hv.ravel())
        assert tally.argmax(v) == int(np.argmax(hv))
        assert tally.dot(v, v) == round_f64(fraction_dot(hv.ravel(), hv.ravel()))
        assert np.array_equal(lib.host(tally.add(v, v)), hv + hv)


def test_add_returns_the_input_library(lib):
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    x, y = lib.array(h), lib.array(np.ones_like(h))
    z = tally.add(x, y)
    assert lib.is_mine(z) and tuple(z.shape) == (4, 6)
    lib.sync()
    assert np.array_equal(lib.host(z), h + 1)
    out = lib.array(np.zeros_like(h))
    assert tally.add(x, y, out=out) is out
    tally.add(x, y, out=x)  # in place
    lib.sync()
    assert np.array_equal(lib.host(x), h + 1) and np.array_equal(lib.host(out), h + 1)
    with pytest.raises(OverflowError):
        tally.add(lib.array(np.array([2**31 - 1], dtype=np.int32)), lib.array(np.array([1], dtype=np.int32)))


def test_work_on_a_non_default_stream(lib):
    # Data written on a non-blocking stream and read by tally right away, with no
    # synchronisation: correct only if tally runs on (or after) that stream.
    n = 2**26
    s = lib.new_stream()
    with lib.use(s):
        x = lib.m.zeros(n, dtype=lib.m.float64) if lib.name == "cupy" else lib.m.zeros(n, dtype=lib.m.float64, device="cuda")
        for _ in range(20):  # a long queue of work on s
            x += 1.0
        assert tally.sum(x) == 20.0 * n
        y = x * 2
        z = tally.add(x, y)  # queued on s, not waited for
        total = float(z.sum())  # the library's own reduction, ordered after it on s
    assert total == 60.0 * n
    lib.sync()


def test_mean_and_norm_same_bits_as_cpu(lib):
    rng = np.random.default_rng(11)
    for n in (1, 1000, 1_000_003):
        h = rng.standard_normal(n) * np.exp2(rng.integers(-40, 40, n))
        for dt in (np.float64, np.float32):
            hx = h.astype(dt)
            x = lib.array(hx)
            assert tally.mean(x) == tally.mean(hx)
            assert tally.norm(x) == tally.norm(hx)
            assert tally.mean(x, dtype=np.float64) == tally.mean(hx, dtype=np.float64)
        hi = rng.integers(-2**40, 2**40, n)
        assert tally.mean(lib.array(hi)) == tally.mean(hi)
        assert tally.norm(lib.array(hi[:1000] % 1000)) == tally.norm(hi[:1000] % 1000)
    assert tally.norm(lib.array(np.array([1e200, 1e200]))) == math.sqrt(2.0) * 1e200


def test_mixed_and_unsupported(lib):
    x = lib.array(np.ones(4))
    with pytest.raises(TypeError, match="CUDA arrays or all host arrays"):
        tally.dot(x, np.ones(4))
    with pytest.raises(TypeError, match="unsupported dtype"):
        tally.sum(lib.array(np.ones(4, dtype=np.complex64)))
    # float16 and small integers read on the GPU as well (docs/types.md)
    assert tally.sum(lib.array(np.ones(2049, dtype=np.float16))) == 2049.0
    assert tally.sum(lib.array(np.ones(256, dtype=np.uint8))) == 256


def test_torch_requires_grad_and_cpu_tensors():
    torch = pytest.importorskip("torch")
    t = torch.arange(10, dtype=torch.float64, requires_grad=True)
    assert tally.sum(t) == 45.0  # CPU tensor: the CPU backend
    z = tally.add(t.detach(), t.detach())
    assert isinstance(z, torch.Tensor) and z.device.type == "cpu" and z.tolist() == [2.0 * i for i in range(10)]
    if torch.cuda.is_available() and tally.cuda_available():
        assert tally.sum(t.cuda()) == 45.0


def test_cuda_array_interface_only():
    cupy = pytest.importorskip("cupy")
    Lib("cupy")

    class CAIOnly:
        def __init__(self, a):
            self._a = a
            self.__cuda_array_interface__ = a.__cuda_array_interface__

    h = np.random.default_rng(5).standard_normal(12345)
    a = cupy.asarray(h)
    assert tally.sum(CAIOnly(a)) == math.fsum(h)
    out = cupy.empty_like(a)
    tally.add(CAIOnly(a), CAIOnly(a), out=CAIOnly(out))
    cupy.cuda.Device().synchronize()
    assert np.array_equal(cupy.asnumpy(out), h + h)
