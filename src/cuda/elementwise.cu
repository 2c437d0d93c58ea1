// CUDA backend: y = a*x + y and x = a*x (ops/elementwise.hpp): a grid-stride loop, one element
// per step (x and y may be the same array, so plain loads and stores), integer overflow
// reported through a status word in pinned mapped host memory and the first overflowing index
// through an atomicMin in device memory; the call synchronises.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "backends_ops.hpp"
#include "cuda/check.hpp"
#include "cuda/tuning.hpp"
#include "cuda/workspace.hpp"
#include "tally/ops/elementwise.hpp"

namespace tally::cuda {
namespace {

constexpr int kBlock = tuning::block_threads;

// Each overflowing element (integers only) sets *status (pinned mapped host memory) and
// lowers *first (device memory, UINT64_MAX before the launch) to its index by atomicMin.
template <class T>
__global__ void __launch_bounds__(kBlock) axpy_kernel(T a, const T* x, T* y, std::int64_t n, int* status,
                                                      unsigned long long* first) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  int any = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) {
    int bad = 0;
    y[i] = ops::axpy_checked<T>(a, x[i], y[i], bad);
    if (bad) {
      atomicMin(first, static_cast<unsigned long long>(i));
      any = 1;
    }
  }
  if (any) *status = 1;
}

template <class T>
__global__ void __launch_bounds__(kBlock) scale_kernel(T a, T* x, std::int64_t n, int* status, unsigned long long* first) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  int any = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) {
    int bad = 0;
    x[i] = ops::scale_checked<T>(a, x[i], bad);
    if (bad) {
      atomicMin(first, static_cast<unsigned long long>(i));
      any = 1;
    }
  }
  if (any) *status = 1;
}

// Runs launch(grid, stream, status, first) under the workspace's blocking lock; first_bad is
// the smallest overflowing index (copied back only when the status word says there is one).
template <class F> void blocking(std::int64_t n, std::int64_t& first_bad, stream_t s, int device, F&& launch) {
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(s);
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  std::lock_guard<std::mutex> lock(ws.blocking);
  *ws.host_status = 0;
  auto* first = static_cast<unsigned long long*>(ws.partials);  // (free under the lock; >= 8 bytes)
  TALLY_CUDA(cudaMemsetAsync(first, 0xff, sizeof *first, stream));
  unsigned grid = static_cast<unsigned>(std::clamp<std::int64_t>((n + kBlock - 1) / kBlock, 1, ws.max_grid));
  launch(grid, stream, ws.host_status, first);
  TALLY_CUDA(cudaGetLastError());
  TALLY_CUDA(cudaStreamSynchronize(stream));
  first_bad = -1;
  if (*ws.host_status) {
    unsigned long long f = 0;
    TALLY_CUDA(cudaMemcpy(&f, first, sizeof f, cudaMemcpyDeviceToHost));
    first_bad = f < static_cast<unsigned long long>(n) ? static_cast<std::int64_t>(f) : 0;
  }
}

template <class T>
void axpy_t(const void* av, const void* x, void* y, std::int64_t n, std::int64_t& first_bad, stream_t s, int dev) {
  T a;
  std::memcpy(&a, av, sizeof a);
  blocking(n, first_bad, s, dev, [&](unsigned g, cudaStream_t st, int* stat, unsigned long long* first) {
    axpy_kernel<T><<<g, kBlock, 0, st>>>(a, static_cast<const T*>(x), static_cast<T*>(y), n, stat, first);
  });
}

template <class T> void scale_t(const void* av, void* x, std::int64_t n, std::int64_t& first_bad, stream_t s, int dev) {
  T a;
  std::memcpy(&a, av, sizeof a);
  blocking(n, first_bad, s, dev, [&](unsigned g, cudaStream_t st, int* stat, unsigned long long* first) {
    scale_kernel<T><<<g, kBlock, 0, st>>>(a, static_cast<T*>(x), n, stat, first);
  });
}

}  // namespace

// Every element type but bool (refused by src/dispatch_ops.cpp): the same templates, with
// ops::axpy_checked / scale_checked forwarding the 16-bit floats and the small integers to
// ops/elementwise_small.hpp.
void axpy(dtype t, const void* a, const void* x, void* y, std::int64_t n, std::int64_t& first_bad, stream_t stream,
          int device) {
  first_bad = -1;
  tally::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) axpy_t<T>(a, x, y, n, first_bad, stream, device);
  });
}

void scale(dtype t, const void* a, void* x, std::int64_t n, std::int64_t& first_bad, stream_t stream, int device) {
  first_bad = -1;
  tally::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) scale_t<T>(a, x, n, first_bad, stream, device);
  });
}

}  // namespace tally::cuda
