// CUDA backend: y = a*x + y and x = a*x (ops/elementwise.hpp): a grid-stride loop, one element
// per step (x and y may be the same array, so plain loads and stores), integer overflow
// reported through a status word in pinned mapped host memory; the call synchronises.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "backends_ops.hpp"
#include "cuda/check.hpp"
#include "cuda/tuning.hpp"
#include "cuda/workspace.hpp"
#include "tally/ops/elementwise.hpp"

namespace tally::cuda {
namespace {

constexpr int kBlock = tuning::block_threads;

template <class T> __global__ void __launch_bounds__(kBlock) axpy_kernel(T a, const T* x, T* y, std::int64_t n, int* status) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  int bad = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride)
    y[i] = ops::axpy_checked<T>(a, x[i], y[i], bad);
  if (bad) *status = 1;
}

template <class T> __global__ void __launch_bounds__(kBlock) scale_kernel(T a, T* x, std::int64_t n, int* status) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  int bad = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride)
    x[i] = ops::scale_checked<T>(a, x[i], bad);
  if (bad) *status = 1;
}

// Runs launch(grid, stream, status) under the workspace's blocking lock and returns status.
template <class F> void blocking(std::int64_t n, int& status, stream_t s, int device, F&& launch) {
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(s);
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  std::lock_guard<std::mutex> lock(ws.blocking);
  *ws.host_status = 0;
  unsigned grid = static_cast<unsigned>(std::clamp<std::int64_t>((n + kBlock - 1) / kBlock, 1, ws.max_grid));
  launch(grid, stream, ws.host_status);
  TALLY_CUDA(cudaGetLastError());
  TALLY_CUDA(cudaStreamSynchronize(stream));
  status = *ws.host_status;
}

template <class T> void axpy_t(const void* av, const void* x, void* y, std::int64_t n, int& status, stream_t s, int dev) {
  T a;
  std::memcpy(&a, av, sizeof a);
  blocking(n, status, s, dev, [&](unsigned g, cudaStream_t st, int* stat) {
    axpy_kernel<T><<<g, kBlock, 0, st>>>(a, static_cast<const T*>(x), static_cast<T*>(y), n, stat);
  });
}

template <class T> void scale_t(const void* av, void* x, std::int64_t n, int& status, stream_t s, int dev) {
  T a;
  std::memcpy(&a, av, sizeof a);
  blocking(n, status, s, dev, [&](unsigned g, cudaStream_t st, int* stat) {
    scale_kernel<T><<<g, kBlock, 0, st>>>(a, static_cast<T*>(x), n, stat);
  });
}

}  // namespace

void axpy(dtype t, const void* a, const void* x, void* y, std::int64_t n, int& status, stream_t stream, int device) {
  switch (t) {
    case dtype::float32: return axpy_t<float>(a, x, y, n, status, stream, device);
    case dtype::float64: return axpy_t<double>(a, x, y, n, status, stream, device);
    case dtype::int32: return axpy_t<std::int32_t>(a, x, y, n, status, stream, device);
    case dtype::int64: return axpy_t<std::int64_t>(a, x, y, n, status, stream, device);
  }
}

void scale(dtype t, const void* a, void* x, std::int64_t n, int& status, stream_t stream, int device) {
  switch (t) {
    case dtype::float32: return scale_t<float>(a, x, n, status, stream, device);
    case dtype::float64: return scale_t<double>(a, x, n, status, stream, device);
    case dtype::int32: return scale_t<std::int32_t>(a, x, n, status, stream, device);
    case dtype::int64: return scale_t<std::int64_t>(a, x, n, status, stream, device);
  }
}

}  // namespace tally::cuda
