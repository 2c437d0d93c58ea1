// CUDA backend: L1 and max norms, fast-mode variance, count of nonzeros. Each is one launch
// of reduce_kernel (src/cuda/kernels.cuh: 16-byte vector loads, a per-thread fold, CUB block
// reduction, the last block combining the block partials) with a reducer of
// ops/moments.hpp; the value goes to pinned mapped host memory and the call synchronises the
// stream. count_nonzero takes every element type; widen_to_f64 feeds the exact variance of
// the small types (src/dispatch_ops.cpp). Exact L1 norm: the exact sum kernel reading |x|
// (cuda::norm1_exact, src/cuda/launch.cu; until 2026-11-30 it was |x| into a temporary and
// the exact sum: 0.11-0.2x cuBLAS asum).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "backends.hpp"
#include "backends_ops.hpp"
#include "cuda/check.hpp"
#include "cuda/kernels.cuh"
#include "cuda/tuning.hpp"
#include "cuda/workspace.hpp"
#include "tally/ops/moments.hpp"
#include "tally/ops/small.hpp"

namespace tally::cuda {
namespace {

constexpr int kBlock = tuning::block_threads;

// Runs reducer R over x[0, n) (n > 0) and copies its result_t to `result_host`.
template <class R, class T>
void run(const T* x, std::int64_t n, void* result_host, stream_t s, int device) {
  static_assert(sizeof(typename R::acc_t) <= tuning::max_acc_bytes && sizeof(typename R::result_t) <= 32);
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(s);
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  std::lock_guard<std::mutex> lock(ws.blocking);
  constexpr int V = 16 / sizeof(T);
  constexpr int U = tuning::reduce_unroll;
  auto* partials = static_cast<typename R::acc_t*>(ws.partials);
  result_sink<typename R::result_t> res{static_cast<typename R::result_t*>(ws.host_result), nullptr, nullptr, 0};
  auto grid = [&](std::int64_t units) {
    std::int64_t per_block = static_cast<std::int64_t>(kBlock) * U;
    return static_cast<unsigned>(std::clamp<std::int64_t>((units + per_block - 1) / per_block, 1, ws.max_grid));
  };
  if (reinterpret_cast<std::uintptr_t>(x) % sizeof(T) == 0) {
    std::int64_t head = std::min<std::int64_t>(head_count<T, V>(x), n);
    reduce_kernel<R, T, false, V, kBlock, U><<<grid((n - head) / V), kBlock, 0, stream>>>(x, x, n, head, partials,
                                                                                          ws.counter, res);
  } else {
    reduce_kernel<R, T, false, 1, kBlock, U><<<grid(n), kBlock, 0, stream>>>(x, x, n, 0, partials, ws.counter, res);
  }
  TALLY_CUDA(cudaGetLastError());
  TALLY_CUDA(cudaStreamSynchronize(stream));
  std::memcpy(result_host, ws.host_result, sizeof(typename R::result_t));
}

// out[i] = x[i] as float64 (exact for every storage type it is used with).
template <class S> __global__ void widen_kernel(const S* __restrict__ x, double* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = static_cast<double>(x[i]);
}

template <class R, class T> void run_any(const void* x, std::int64_t n, void* r, stream_t s, int dev) {
  run<R, T>(static_cast<const T*>(x), n, r, s, dev);
}

}  // namespace

void norm1(dtype t, dtype out, accuracy acc, const void* x, std::int64_t n, void* result_host, stream_t stream,
           int device) {
  bool f64 = out == dtype::float64;
  if (acc == accuracy::exact) {
    return norm1_exact(t, out, x, n, result_host, stream, device);
  }
  if (t == dtype::float32)
    return f64 ? run_any<ops::abs_sum_reducer<float, double>, float>(x, n, result_host, stream, device)
               : run_any<ops::abs_sum_reducer<float, float>, float>(x, n, result_host, stream, device);
  return f64 ? run_any<ops::abs_sum_reducer<double, double>, double>(x, n, result_host, stream, device)
             : run_any<ops::abs_sum_reducer<double, float>, double>(x, n, result_host, stream, device);
}

void norm_inf(dtype t, dtype out, const void* x, std::int64_t n, void* result_host, stream_t stream, int device) {
  bool f64 = out == dtype::float64;
  if (t == dtype::float32)
    return f64 ? run_any<ops::max_abs_reducer<float, double>, float>(x, n, result_host, stream, device)
               : run_any<ops::max_abs_reducer<float, float>, float>(x, n, result_host, stream, device);
  return f64 ? run_any<ops::max_abs_reducer<double, double>, double>(x, n, result_host, stream, device)
             : run_any<ops::max_abs_reducer<double, float>, double>(x, n, result_host, stream, device);
}

void var(dtype t, dtype out, accuracy acc, const void* x, std::int64_t n, std::uint64_t m2, bool take_sqrt,
         void* result_host, stream_t stream, int device) {
  if (acc == accuracy::exact)
    throw error(errc::invalid_argument, "tally::var: exact mode is not available on the cuda backend yet");
  ops::moments m{};
  // Every element type through the same reducer: the 16-bit floats read as their storage
  // types (ops::storage_t: exact float32 values), integers and bool converted to float64.
  tally::visit(t, [&](auto tag) {
    using S = ops::storage_t<typename decltype(tag)::type>;
    run_any<ops::welford_reducer<S>, S>(x, n, &m, stream, device);
  });
  double v = ops::finish_variance(m, m2, take_sqrt);
  if (out == dtype::float32) {
    float f = static_cast<float>(v);
    std::memcpy(result_host, &f, sizeof f);
  } else {
    std::memcpy(result_host, &v, sizeof v);
  }
}

std::shared_ptr<const double> widen_to_f64(dtype t, const void* x, std::int64_t n, stream_t s, int device) {
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(s);
  device_guard guard(device);
  void* p = nullptr;
  TALLY_CUDA(cudaMallocAsync(&p, static_cast<std::size_t>(n) * sizeof(double), stream));
  std::shared_ptr<const double> out(static_cast<const double*>(p), [stream, device](const double* q) {
    device_guard g(device);
    cudaFreeAsync(const_cast<double*>(q), stream);  // (a destructor: an error here cannot be reported)
  });
  constexpr int kThreads = 256;
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 8192));
  tally::visit(t, [&](auto tag) {
    using S = ops::storage_t<typename decltype(tag)::type>;
    widen_kernel<S><<<grid, kThreads, 0, stream>>>(static_cast<const S*>(x), static_cast<double*>(p), n);
  });
  TALLY_CUDA(cudaGetLastError());
  return out;
}

std::int64_t count_nonzero(dtype t, const void* x, std::int64_t n, stream_t stream, int device) {
  // Every element type, read as its storage type (the 16-bit floats test their bits: not +-0).
  std::int64_t c = 0;
  tally::visit(t, [&](auto tag) {
    using S = ops::storage_t<typename decltype(tag)::type>;
    run_any<ops::count_nonzero_reducer<S>, S>(x, n, &c, stream, device);
  });
  return c;
}

}  // namespace tally::cuda
