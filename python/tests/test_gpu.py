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
    # minmax: both in the one launch (NaN wins both sides; nanminmax skips it)
    lo, hi = tally.minmax(x)
    assert math.isnan(lo) and math.isnan(hi)
    assert tally.nanminmax(x) == (np.nanmin(h), np.nanmax(h))
    for dt in (np.float32, np.int8, np.uint8, np.int64, np.float16):
        v = (np.clip(np.nan_to_num(h) * 20, -120, 120) + (120 if dt == np.uint8 else 0)).astype(dt)
        got = tally.minmax(lib.array(v)[1:])  # (one element in: a scalar head before the vectors)
        assert got == (np.min(v[1:]), np.max(v[1:])), dt
    # a transposed view is read in memory order; a -0.0 / +0.0 tie still gives C order's first zero
    t = lib.array(np.array([[1.0, 0.0], [-0.0, 1.0]])).T
    assert math.copysign(1.0, tally.min(t)) == -1.0 and math.copysign(1.0, tally.minmax(t)[0]) == -1.0
    assert tally.argmin(t) == 1


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


def test_count_nonzero_any_all_of_every_type_read_directly(lib):
    # each dtype read as it is on the GPU (no conversion in Python): NaN counts, -0.0 does not
    rng = np.random.default_rng(5)
    for dt in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
               "uint32", "uint64", "bool"):
        h = rng.integers(0, 3, 100_003).astype(dt)
        if dt.startswith("float"):
            h[::7] = np.array(-0.0, dtype=dt)
            h[5] = np.nan
        try:
            x = lib.array(h)
        except (TypeError, RuntimeError):
            assert lib.name == "torch" and dt in ("uint16", "uint32", "uint64"), dt
            continue  # (older torch versions have no such CUDA tensors)
        assert tally.count_nonzero(x) == np.count_nonzero(h), dt
        assert tally.any(x) == bool(np.any(h)) and tally.all(x) == bool(np.all(h)), dt
        ones = lib.array(np.ones(1000, dtype=dt))
        assert tally.all(ones) and tally.count_nonzero(ones) == 1000, dt


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


# --- axis= and strided 1-D views on the GPU (never run on a GPU yet: written for the H200) ---

def _name(r):
    """An array's dtype as NumPy names it (cupy or torch)."""
    s = str(r.dtype)
    return s[len("torch."):] if s.startswith("torch.") else np.dtype(r.dtype).name


def _same_device(r, x):
    return r.device == x.device


def test_axis_results_are_arrays_of_the_library_on_its_device(lib):
    rng = np.random.default_rng(21)
    for shape in ((37, 1000), (1000, 37), (1, 5), (5, 1), (3, 70_001)):
        h = rng.standard_normal(shape) * np.exp2(rng.integers(-30, 30, shape))
        h[0, 0] = h.max() + 1.0  # a tie below: the first index wins
        h[-1, -1] = h[0, 0]
        x = lib.array(h)
        hviews = [(x, h), (x.T, h.T), (x[:, ::3], h[:, ::3])]
        if lib.name == "cupy":
            hviews.append((x[::-1, ::-2], h[::-1, ::-2]))  # torch has no negative steps
        for v, hv in hviews:
            for axis in (0, 1, -1, -2):
                cols = [hv[:, j] for j in range(hv.shape[1])] if axis % 2 == 0 else list(hv)
                # fast sums run on the GPU: a float64 tree per output, within (len - 1) 2^-53 sum|x|
                s = tally.sum(v, axis=axis, accuracy="fast")
                assert lib.is_mine(s) and _same_device(s, x) and _name(s) == "float64"
                for got, c in zip(lib.host(s).tolist(), cols):
                    assert abs(got - math.fsum(c)) <= max(len(c) - 1, 0) * 2.0**-53 * float(np.abs(c).sum())
                # exact sums and means along an axis run on the GPU: the bits of the CPU backend's
                # (NumPy input), which are those of the whole-array sum / mean of each column / row
                for f in ("sum", "mean"):
                    for dt in (None, "float32"):
                        g = getattr(tally, f)(v, axis=axis, dtype=dt)
                        assert lib.is_mine(g) and _same_device(g, x)
                        want = getattr(tally, f)(np.ascontiguousarray(hv), axis=axis, dtype=dt)
                        np.testing.assert_array_equal(lib.host(g).view(np.uint8), want.view(np.uint8))
                        for got, c in zip(lib.host(g).tolist(), cols):
                            assert got == getattr(tally, f)(np.ascontiguousarray(c), dtype=dt)
                # extremes: the same answers as the CPU backend and NumPy (first index on ties)
                for f in ("min", "max", "argmin", "argmax"):
                    r = getattr(tally, f)(v, axis=axis)
                    assert lib.is_mine(r) and _same_device(r, x)
                    assert _name(r) == ("int64" if f.startswith("arg") else "float64")
                    np.testing.assert_array_equal(lib.host(r), getattr(np, f)(hv, axis=axis))


def test_axis_integer_sums_and_means_on_the_gpu(lib):
    h = np.full((37, 6), 2**31 - 1, dtype=np.int32)
    h[:, 1] = -2**31
    h[5, 2] = 7
    x = lib.array(h)
    for v, hv in ((x, h), (x.T, h.T)):
        for axis in (0, 1):
            s = tally.sum(v, axis=axis)
            assert lib.is_mine(s) and _name(s) == "int64"
            want = [sum(int(i) for i in c) for c in (hv.T if axis == 0 else hv)]
            assert lib.host(s).tolist() == want  # partial sums past 2^31, exact
            m = tally.mean(v, axis=axis)
            assert _name(m) == "float64"
            np.testing.assert_array_equal(lib.host(m), tally.mean(np.ascontiguousarray(hv), axis=axis))
    with pytest.raises(OverflowError):
        tally.sum(lib.array(np.array([[2**62], [2**62]], dtype=np.int64)), axis=0)
    # small types go to the library as they are and come back in their own dtype
    h8 = np.arange(-60, 60, dtype=np.int8).reshape(8, 15)
    r = tally.max(lib.array(h8), axis=1)
    assert _name(r) == "int8" and lib.host(r).tolist() == h8.max(axis=1).tolist()
    h16 = np.linspace(-3, 3, 40).astype(np.float16).reshape(5, 8)
    r = tally.argmin(lib.array(h16).T, axis=0)
    assert lib.host(r).tolist() == np.argmin(h16.T, axis=0).tolist()
    assert _name(tally.min(lib.array(h16), axis=0)) == "float16"


def test_axis_reductions_of_every_element_type_match_the_cpu_bits(lib):
    # every type along rows and columns (C order, transposed, strided), passed to the library as
    # it is (the GPU reads float16 / int8 / uint8 / bool in place, widens the others exactly):
    # exact sums, means, min/max and first indices with the CPU backend's bits; sums past 2^31
    rng = np.random.default_rng(31)
    for dt in ("float16", "int8", "int16", "uint8", "uint16", "uint32", "uint64", "bool"):
        if dt == "float16":
            h = (rng.standard_normal((67, 300)) * 1000).astype(dt)
            h[5, 7], h[:, 3] = np.nan, 0.0
        elif dt == "bool":
            h = rng.integers(0, 2, (67, 300)).astype(dt)
        else:
            info = np.iinfo(dt)
            top = 2**64 // 400 if dt == "uint64" else int(info.max) + 1
            h = rng.integers(int(info.min), top, (67, 300), dtype=np.uint64 if dt == "uint64" else np.int64).astype(dt)
            h[:, 2] = top - 1 if dt == "uint64" else info.max  # ties: the first index
        try:
            x = lib.array(h)
        except (TypeError, RuntimeError):
            assert lib.name == "torch" and dt in ("uint16", "uint32", "uint64"), dt
            continue  # (older torch versions have no such CUDA tensors)
        for v, hv in ((x, h), (x.T, h.T), (x[1::2, ::3], h[1::2, ::3])):
            for axis in (0, 1):
                s = tally.sum(v, axis=axis)
                want = tally.sum(np.ascontiguousarray(hv), axis=axis)
                assert _name(s) == want.dtype.name, (dt, axis)
                if want.dtype == np.uint64 and lib.name == "torch":
                    s = s.view(lib.m.int64)
                    want = want.view(np.int64)
                np.testing.assert_array_equal(lib.host(s), want)
                np.testing.assert_array_equal(lib.host(tally.mean(v, axis=axis)),
                                              tally.mean(np.ascontiguousarray(hv), axis=axis))
                for f in ("min", "max", "nanmin", "argmin", "argmax", "nanargmax"):
                    if f.startswith("nanarg") and dt == "float16" and np.isnan(hv).all(axis=axis).any():
                        continue
                    r, w = getattr(tally, f)(v, axis=axis), getattr(tally, f)(np.ascontiguousarray(hv), axis=axis)
                    assert _name(r) == w.dtype.name, (dt, f)
                    if w.dtype == np.uint64 and lib.name == "torch":
                        r, w = r.view(lib.m.int64), w.view(np.int64)
                    np.testing.assert_array_equal(lib.host(r), w, err_msg=f"{dt} {f} axis {axis}")


def test_axis_empty_nan_and_streams_on_the_gpu(lib):
    e = lib.array(np.zeros((0, 4)))
    assert lib.host(tally.sum(e, axis=0, accuracy="fast")).tolist() == [0.0] * 4
    with pytest.raises(ValueError, match="length 0"):
        tally.argmax(e, axis=0)
    assert tuple(tally.argmax(e, axis=1).shape) == (0,)
    h = np.arange(12.0).reshape(3, 4)
    h[1, :] = np.nan
    with pytest.raises(ValueError, match="row 1 holds only NaN"):
        tally.nanargmin(lib.array(h), axis=1)
    assert np.isnan(lib.host(tally.nanmax(lib.array(h), axis=1))[1])
    # data made on a non-blocking stream and reduced at once: tally runs (and allocates) there
    s = lib.new_stream()
    with lib.use(s):
        n = 2**22
        x = lib.m.zeros((4, n), dtype=lib.m.float64) if lib.name == "cupy" else \
            lib.m.zeros((4, n), dtype=lib.m.float64, device="cuda")
        for _ in range(10):
            x += 1.0
        r = tally.max(x, axis=1)
        total = tally.sum(x, axis=1, accuracy="fast")
        assert lib.host(r).tolist() == [10.0] * 4 and lib.host(total).tolist() == [10.0 * n] * 4
    lib.sync()


def test_strided_1d_views_on_the_gpu(lib):
    from tally import _arrays
    h = np.random.default_rng(23).standard_normal(30_001)
    x = lib.array(h)
    views = [(x[::3], h[::3]), (x[5::7], h[5::7])]
    if lib.name == "cupy":
        views.append((x[::-2], h[::-2]))
    for v, hv in views:
        assert _arrays.prepare(v, "max", strided_ok=lambda cuda, name: True).strided  # read in place
        for f in ("min", "max", "argmin", "argmax"):
            assert getattr(tally, f)(v) == getattr(np, f)(hv)
        assert tally.sum(v) == math.fsum(hv)  # exact, read in place on the GPU (strided shape kernels)
        assert tally.mean(v) == tally.mean(np.ascontiguousarray(hv))
        assert tally.sum(v, dtype="float32") == tally.sum(np.ascontiguousarray(hv), dtype="float32")
        assert abs(tally.sum(v, accuracy="fast") - math.fsum(hv)) <= len(hv) * 2.0**-53 * float(np.abs(hv).sum())
    hi = np.arange(100_000, dtype=np.int64) * 3
    xi = lib.array(hi)
    assert tally.sum(xi[::5]) == int(hi[::5].sum()) and tally.mean(xi[::5]) == tally.mean(hi[::5])


def test_axis_on_cpu_torch_tensors():
    torch = pytest.importorskip("torch")
    h = np.random.default_rng(24).standard_normal((9, 13))
    t = torch.from_numpy(h.copy())
    for v, hv in ((t, h), (t.T, h.T), (t[:, ::2], h[:, ::2])):
        for axis in (0, 1):
            s = tally.sum(v, axis=axis)
            assert isinstance(s, torch.Tensor) and s.dtype == torch.float64 and s.device.type == "cpu"
            cols = hv.T if axis == 0 else hv
            assert s.tolist() == [math.fsum(c) for c in cols]
            a = tally.argmax(v, axis=axis)
            assert a.dtype == torch.int64 and a.tolist() == np.argmax(hv, axis=axis).tolist()
    assert tally.sum(torch.ones(4, 3, dtype=torch.uint8), axis=0).dtype == torch.uint64


def test_var_std_same_bits_as_cpu(lib):
    rng = np.random.default_rng(12)
    for n in (2, 1001, 1_000_003):
        h = rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))
        for dt in (np.float64, np.float32):
            hx = h.astype(dt)
            x = lib.array(hx)
            assert tally.var(x) == tally.var(hx)  # exact: the GPU's two states, rounded together
            assert tally.std(x, ddof=1) == tally.std(hx, ddof=1)
            f = tally.var(x, accuracy="fast")
            assert abs(f - tally.var(hx)) <= 1e-10 * abs(tally.var(hx))
    with pytest.raises(ValueError, match="not available on the cuda backend"):
        tally.var(lib.array(np.arange(10, dtype=np.int64)))
    # The smaller types: widened exactly (bool and integers to float64, 16-bit floats to
    # float32) and through the GPU's exact states: the CPU backend's bits, whole and per axis.
    for dt in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.bool_, np.float16):
        if lib.name == "torch" and dt in (np.uint16, np.uint32):
            continue  # (torch has no arithmetic on these)
        h = rng.integers(0, 2 if dt == np.bool_ else 100, (37, 41)).astype(dt)
        x = lib.array(h)
        assert tally.var(x) == tally.var(h), np.dtype(dt).name
        assert tally.std(x, ddof=1) == tally.std(h, ddof=1), np.dtype(dt).name
        np.testing.assert_array_equal(lib.host(tally.var(x, axis=1)), tally.var(h, axis=1))


# --- N-D axis reductions, tuple axes, keepdims, norm/var/std along axes on the GPU (never run on
# a GPU yet: written for the H200). Every result is compared with NumPy or with tally's CPU
# backend on the host copy (exact results have the same bits on both backends).

ND_AXES = [0, 1, 2, 3, -1, -3, (0, 1), (2, 3), (1, 2, 3), (0, 2), (1, 3), (3, 0), ()]


def _perm(lib, x, perm):
    return x.transpose(perm) if lib.name == "cupy" else x.permute(*perm)


def _nd_views(lib, h):
    """(device view, host copy of the same view) pairs over a 4-D array h."""
    x = lib.array(h)
    out = [(x, h), (_perm(lib, x, (2, 0, 3, 1)), np.transpose(h, (2, 0, 3, 1))),
           (x[:, ::2, :, 1::2], h[:, ::2, :, 1::2])]
    if lib.name == "cupy":
        out.append((x[::-1, :, ::-2], h[::-1, :, ::-2]))  # torch has no negative steps
    return out


def _slices(h, axis):
    axes = tuple(a % h.ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
    kept = [i for i in range(h.ndim) if i not in axes]
    n = int(np.prod([h.shape[i] for i in axes]))
    return list(np.ascontiguousarray(np.transpose(h, kept + sorted(axes))).reshape(-1, n))


def test_nd_axis_sums_and_extremes_on_the_gpu(lib):
    rng = np.random.default_rng(41)
    h = rng.standard_normal((5, 6, 7, 8)) * np.exp2(rng.integers(-30, 30, (5, 6, 7, 8)))
    h[1, 2, 3, 4] = h.max() + 1.0
    h[4, 5, 6, 7] = h[1, 2, 3, 4]  # ties: the first index wins
    for v, hv in _nd_views(lib, h):
        for axis in ND_AXES:
            want = np.sum(hv, axis=axis)
            s = tally.sum(v, axis=axis, accuracy="fast")
            assert lib.is_mine(s) and _same_device(s, v) and _name(s) == "float64"
            assert tuple(s.shape) == want.shape, axis
            for got, c in zip(lib.host(s).reshape(-1).tolist(), _slices(hv, axis)):
                assert abs(got - math.fsum(c)) <= max(len(c) - 1, 0) * 2.0**-53 * float(np.abs(c).sum())
            k = tally.sum(v, axis=axis, accuracy="fast", keepdims=True)
            assert tuple(k.shape) == np.sum(hv, axis=axis, keepdims=True).shape
            # exact sums and means along the axes: on the GPU, the CPU backend's bits
            hc = np.ascontiguousarray(hv)
            np.testing.assert_array_equal(lib.host(tally.sum(v, axis=axis)), tally.sum(hc, axis=axis))
            np.testing.assert_array_equal(lib.host(tally.mean(v, axis=axis, keepdims=True)),
                                          tally.mean(hc, axis=axis, keepdims=True))
            for f in ("min", "max", "nanmin", "nanmax"):
                r = getattr(tally, f)(v, axis=axis, keepdims=True)
                assert lib.is_mine(r) and _same_device(r, v) and _name(r) == "float64"
                np.testing.assert_array_equal(lib.host(r), getattr(np, f)(hv, axis=axis, keepdims=True))
            if not isinstance(axis, tuple):
                for f in ("argmin", "argmax", "nanargmin", "nanargmax"):
                    r = getattr(tally, f)(v, axis=axis)
                    assert lib.is_mine(r) and _name(r) == "int64"
                    np.testing.assert_array_equal(lib.host(r), getattr(np, f)(hv, axis=axis))
    with pytest.raises(TypeError, match="one integer or None"):
        tally.argmax(lib.array(h), axis=(0, 1))


def test_nd_axis_integer_sums_and_means_on_the_gpu(lib):
    rng = np.random.default_rng(42)
    for dt in (np.int32, np.int64, np.int8, np.uint8):
        info = np.iinfo(dt)
        h = rng.integers(max(info.min, -2**31), min(int(info.max), 2**31 - 1) + 1, (4, 5, 6, 7)).astype(dt)
        for v, hv in _nd_views(lib, h):
            for axis in ND_AXES:
                s = tally.sum(v, axis=axis)
                assert lib.is_mine(s) and _name(s) == ("uint64" if dt == np.uint8 else "int64")
                if _name(s) == "uint64":  # (the values are below 2^63; torch's uint64 has few operations)
                    s = s.view(lib.m.int64)
                assert lib.host(s).tolist() == np.sum(hv.astype(np.int64), axis=axis).tolist(), (dt, axis)
                m = tally.mean(v, axis=axis, keepdims=True)
                assert _name(m) == "float64"
                np.testing.assert_array_equal(lib.host(m), tally.mean(np.ascontiguousarray(hv), axis=axis, keepdims=True))
                r = tally.max(v, axis=axis)
                assert _name(r) == np.dtype(dt).name
                np.testing.assert_array_equal(lib.host(r), np.max(hv, axis=axis))
    with pytest.raises(OverflowError):
        tally.sum(lib.array(np.full((2, 2, 2), 2**62, dtype=np.int64)), axis=(0, 1))


def test_nd_norm_var_std_along_axes_same_bits_as_cpu(lib):
    rng = np.random.default_rng(43)
    for dt in (np.float64, np.float32):
        h = (rng.standard_normal((4, 5, 6, 7)) * np.exp2(rng.integers(-20, 20, (4, 5, 6, 7)))).astype(dt)
        for v, hv in _nd_views(lib, h):
            hc = np.ascontiguousarray(hv)
            for axis in (0, 1, 2, 3, -1):
                for o in (1, 2, np.inf):
                    r = tally.norm(v, o, axis=axis)
                    assert lib.is_mine(r) and _same_device(r, v) and _name(r) == np.dtype(dt).name
                    want = tally.norm(hc, o, axis=axis)  # the CPU backend: exact, the same bits
                    np.testing.assert_array_equal(lib.host(r), want)
                    np.testing.assert_allclose(lib.host(r), np.linalg.norm(hv.astype(np.float64), o, axis=axis),
                                               rtol=1e-5 if dt == np.float32 else 1e-12)
                assert tuple(tally.norm(v, axis=axis, keepdims=True).shape) == \
                    np.linalg.norm(hv, axis=axis, keepdims=True).shape
            for axis in (0, 3, (1, 2), (0, 3), (0, 1, 2)):
                for ddof in (0, 1):
                    r = tally.var(v, axis=axis, ddof=ddof)
                    assert lib.is_mine(r) and _name(r) == np.dtype(dt).name
                    np.testing.assert_array_equal(lib.host(r), tally.var(hc, axis=axis, ddof=ddof))
                    sd = tally.std(v, axis=axis, ddof=ddof, keepdims=True, dtype=np.float64)
                    assert _name(sd) == "float64"
                    np.testing.assert_array_equal(lib.host(sd), tally.std(hc, axis=axis, ddof=ddof, keepdims=True,
                                                                          dtype=np.float64))
                f = tally.var(v, axis=axis, accuracy="fast")
                np.testing.assert_allclose(lib.host(f), np.var(hv.astype(np.float64), axis=axis),
                                           rtol=1e-4 if dt == np.float32 else 1e-10)
    with pytest.raises(ValueError, match="not available on the cuda backend"):
        tally.var(lib.array(np.arange(12, dtype=np.int64).reshape(3, 4)), axis=1)


def test_nd_keepdims_whole_array_and_empty_on_the_gpu(lib):
    h = np.arange(24.0).reshape(2, 3, 4)
    x = lib.array(h)
    for f in ("sum", "mean", "min", "max", "argmax", "norm", "var"):
        r = getattr(tally, f)(x, keepdims=True)
        assert lib.is_mine(r) and _same_device(r, x) and tuple(r.shape) == (1, 1, 1)
        assert lib.host(r).reshape(-1)[0] == getattr(tally, f)(h), f
    assert tally.sum(x, axis=(0, 1, 2)) == 276.0  # every axis: the whole-array sum, a Python float
    e = lib.array(np.zeros((3, 0, 4)))
    assert lib.host(tally.sum(e, axis=1, accuracy="fast")).tolist() == [[0.0] * 4] * 3
    assert tuple(tally.max(e, axis=(0, 2)).shape) == (0,)
    assert lib.host(tally.norm(e, axis=1)).tolist() == [[0.0] * 4] * 3
    with pytest.raises(ValueError, match="length 0"):
        tally.argmin(e, axis=1)
    # a reduction on a non-blocking stream: tally allocates and runs there
    s = lib.new_stream()
    with lib.use(s):
        y = lib.m.zeros((3, 4, 2**18), dtype=lib.m.float64) if lib.name == "cupy" else \
            lib.m.zeros((3, 4, 2**18), dtype=lib.m.float64, device="cuda")
        for _ in range(5):
            y += 1.0
        assert lib.host(tally.max(y, axis=(0, 2))).tolist() == [5.0] * 4
        assert lib.host(tally.norm(y, 1, axis=2)).tolist() == [[5.0 * 2**18] * 4] * 3
    lib.sync()


def test_nd_axis_on_cpu_torch_tensors():
    torch = pytest.importorskip("torch")
    h = np.random.default_rng(44).standard_normal((3, 4, 5))
    t = torch.from_numpy(h.copy())
    for v, hv in ((t, h), (t.permute(2, 0, 1), np.transpose(h, (2, 0, 1))), (t[:, ::2, 1:], h[:, ::2, 1:])):
        for axis in (0, 1, 2, (0, 2), (1, 2)):
            s = tally.sum(v, axis=axis, keepdims=True)
            assert isinstance(s, torch.Tensor) and s.dtype == torch.float64 and s.device.type == "cpu"
            np.testing.assert_array_equal(s.numpy(), tally.sum(np.ascontiguousarray(hv), axis=axis, keepdims=True))
            np.testing.assert_array_equal(tally.var(v, axis=axis).numpy(), tally.var(hv, axis=axis))
        a = tally.argmax(v, axis=1)
        assert a.dtype == torch.int64 and a.tolist() == np.argmax(hv, axis=1).tolist()
        assert tally.norm(v, axis=2).tolist() == tally.norm(hv, axis=2).tolist()


def test_out_on_the_gpu(lib):
    # out= receives exactly the result (an array of the input's library on its device), for
    # axis and whole-array reductions; a host out for a GPU result is a clear error
    rng = np.random.default_rng(77)
    h = rng.standard_normal((6, 9)) * np.exp2(rng.integers(-30, 30, (6, 9)))
    x = lib.array(h)
    for fn in ("sum", "mean", "max", "argmax", "norm", "var"):
        f = getattr(tally, fn)
        want = lib.host(f(x, axis=1))
        o = lib.array(np.full(6, -1, dtype=np.int64 if fn == "argmax" else np.float64))
        assert f(x, axis=1, out=o) is o
        np.testing.assert_array_equal(lib.host(o), want)
        z = lib.array(np.zeros((), dtype=np.int64 if fn == "argmax" else np.float64))
        assert f(x, out=z) is z
        assert lib.host(z).item() == f(h)  # the cpu backend's bits (exact) / index
    with pytest.raises(TypeError, match="array like the result"):
        tally.sum(x, axis=1, out=np.empty(6))
