// tally::cuda::transform_reduce: the GPU version of tally::transform_reduce for nvcc users
// (device pointers, a stream), with the same functor types (members marked TALLY_HD).
//
//   struct square { TALLY_HD std::int64_t operator()(std::int32_t v) const { return std::int64_t(v) * v; } };
//   struct plus   { TALLY_HD std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; } };
//   std::int64_t s = tally::cuda::transform_reduce<std::int32_t>({d_x, n}, std::int64_t(0), square{}, plus{}, stream);
//
// Two launches: a grid of G blocks (G from n alone: ceil(n / (256 * 16)) capped at 1024) folds
// a grid-stride range per thread and reduces each block with cub::BlockReduce into a partial;
// one block then reduces the G partials the same way. The partials live in a stream-ordered
// temporary (cudaMallocAsync / cudaFreeAsync).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <string>
#include <type_traits>

#include "tally/transform_reduce.hpp"

namespace tally::cuda {

namespace detail {
inline constexpr int kTransformBlock = 256;
inline constexpr std::int64_t kTransformPerThread = 16;
inline constexpr unsigned kTransformMaxGrid = 1024;

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw error(errc::cuda_error, std::string("tally::cuda::transform_reduce: ") + what + " failed: " +
                                      cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

template <class T, class Acc, class Transform, class Combine, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
transform_reduce_blocks(const T* __restrict__ x, std::int64_t n, Acc identity, Transform transform, Combine combine,
                        Acc* partials) {
  Acc a = identity;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * BLOCK;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += stride)
    a = combine(a, transform(x[i]));
  using block_reduce = cub::BlockReduce<Acc, BLOCK>;
  __shared__ typename block_reduce::TempStorage temp;
  Acc t = block_reduce(temp).Reduce(a, combine);
  if (threadIdx.x == 0) partials[blockIdx.x] = t;
}

template <class Acc, class Combine, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
transform_reduce_final(const Acc* __restrict__ partials, unsigned count, Acc identity, Combine combine, Acc* out) {
  Acc a = identity;
  for (unsigned i = threadIdx.x; i < count; i += BLOCK) a = combine(a, partials[i]);
  using block_reduce = cub::BlockReduce<Acc, BLOCK>;
  __shared__ typename block_reduce::TempStorage temp;
  Acc t = block_reduce(temp).Reduce(a, combine);
  if (threadIdx.x == 0) *out = t;
}

/// Grid of the first launch: a function of n only, so a given input gives the same grouping
/// on every GPU.
inline unsigned transform_grid(std::int64_t n) {
  std::int64_t per_block = kTransformBlock * kTransformPerThread;
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + per_block - 1) / per_block, 1, kTransformMaxGrid));
}
}  // namespace detail

/// Asynchronous GPU transform-reduce: enqueues the work on `stream` and returns; one Acc is
/// written to `result_device` (device-accessible memory) when the stream gets there.
///
/// - Shapes: x (n,) in device (or managed) memory, n >= 0. Types and requirements as
///   tally::transform_reduce: `Acc transform(T)` and `Acc combine(Acc, Acc)` callable on the
///   device (TALLY_HD members), combine associative and commutative with neutral `identity`.
/// - Order: a grid-stride fold per thread, CUB block reductions, then one block over the
///   block partials; fixed for a given n (the grid depends on n alone), so deterministic for
///   a fixed input and launch shape; equal to the CPU version's result only if combine is
///   exact (integer sums, min/max, counts).
/// - Empty x: identity is written.
/// - Errors (tally::error): as tally::transform_reduce, errc::wrong_memory for host data,
///   errc::null_pointer for a null result, errc::invalid_argument for x or the result at an
///   address that is not a multiple of its type's alignment (the GPU would fault),
///   errc::cuda_error for CUDA failures (launches, cudaMallocAsync).
template <class T, class Acc, class Transform, class Combine>
void transform_reduce_async(view<const T> x, Acc identity, Transform transform, Combine combine, Acc* result_device,
                            cudaStream_t stream = nullptr) {
  static_assert(std::is_trivially_copyable_v<Acc>, "tally::cuda::transform_reduce: Acc must be trivially copyable");
  if (result_device == nullptr) throw error(errc::null_pointer, "tally::cuda::transform_reduce: result is a null pointer");
  if (reinterpret_cast<std::uintptr_t>(result_device) % alignof(Acc) != 0)
    throw error(errc::invalid_argument, "tally::cuda::transform_reduce: result is at an address that is not a multiple of its " +
                                            std::to_string(alignof(Acc)) + "-byte type's alignment");
  tally::detail::check_transform_input(x, "cuda::transform_reduce", true);
  constexpr int B = detail::kTransformBlock;
  const unsigned grid = detail::transform_grid(x.size);
  Acc* partials = nullptr;
  detail::check(cudaMallocAsync(reinterpret_cast<void**>(&partials), grid * sizeof(Acc), stream), "cudaMallocAsync");
  detail::transform_reduce_blocks<T, Acc, Transform, Combine, B>
      <<<grid, B, 0, stream>>>(x.data, x.size, identity, transform, combine, partials);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) {
    detail::transform_reduce_final<Acc, Combine, B><<<1, B, 0, stream>>>(partials, grid, identity, combine, result_device);
    e = cudaGetLastError();
  }
  cudaFreeAsync(partials, stream);
  detail::check(e, "a transform_reduce kernel launch");
}

/// Blocking GPU transform-reduce: as transform_reduce_async, then the result is copied to the
/// host and `stream` synchronised.
template <class T, class Acc, class Transform, class Combine>
Acc transform_reduce(view<const T> x, Acc identity, Transform transform, Combine combine, cudaStream_t stream = nullptr) {
  Acc* d = nullptr;
  detail::check(cudaMallocAsync(reinterpret_cast<void**>(&d), sizeof(Acc), stream), "cudaMallocAsync");
  Acc r = identity;
  try {
    transform_reduce_async(x, identity, transform, combine, d, stream);
    detail::check(cudaMemcpyAsync(&r, d, sizeof(Acc), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    detail::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  } catch (...) {
    cudaFreeAsync(d, stream);
    throw;
  }
  cudaFreeAsync(d, stream);
  return r;
}

}  // namespace tally::cuda
