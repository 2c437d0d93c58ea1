// CUDA kernels of the element types added after the first four: exact float16 sums in
// fixed point (include/tally/ops/small.hpp). The other new types reuse the existing kernels
// with widening loads (reduce_kernel with the integer reducers; the float32 reducers and the
// float32 exact accumulators read the 16-bit floats through ops::half_in / ops::bhalf_in).
#pragma once

#include <cstdint>

#include "cuda/block.cuh"
#include "cuda/thread.cuh"
#include "tally/ops/small.hpp"

namespace tally::cuda {

/// The exact sum of n float16 elements, rounded once to Out, in one launch. Each thread
/// folds its grid-stride share into an int64 count of 2^-24 (every float16 is at most 2^40
/// of them, so this is exact for up to ops::f16_int64_terms elements per thread: the launch
/// checks it) and the special-value flags; the block and the grid combine those in 128 bits
/// (ops::f16_exact_sum_reducer), and the last block rounds. Loads as in reduce_kernel: the
/// unaligned head one by one, 16-byte vectors of V = 8 with UNROLL in flight, the tail one
/// by one. Integer addition is associative: the result does not depend on the launch shape.
template <class Out, int V, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
f16_sum_kernel(const ops::half_in* __restrict__ x,  // (n,)
               std::int64_t n, std::int64_t head,
               ops::f16_fixed* partials,  // (gridDim.x,)
               unsigned* counter, result_sink<Out> out) {
  using vec_t = vec<ops::half_in, V>;
  std::int64_t s = 0;
  unsigned flags = 0;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * BLOCK + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * BLOCK;
  if (tid < head) s += ops::f16_units(x[tid].bits, flags);
  const std::int64_t nvec = (n - head) / V;
  const vec_t* xv = reinterpret_cast<const vec_t*>(x + head);
  std::int64_t i = tid;
  for (; i + (UNROLL - 1) * stride < nvec; i += UNROLL * stride) {
    vec_t a[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) a[u] = load(xv + i + u * stride);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int k = 0; k < V; ++k) s += ops::f16_units(a[u].v[k].bits, flags);
  }
  for (; i < nvec; i += stride) {
    vec_t a = load(xv + i);
#pragma unroll
    for (int k = 0; k < V; ++k) s += ops::f16_units(a.v[k].bits, flags);
  }
  const std::int64_t tail = head + nvec * V;
  if (tid < n - tail) s += ops::f16_units(x[tail + tid].bits, flags);
  grid_finish<ops::f16_exact_sum_reducer<Out>, BLOCK>(ops::f16_fixed{s, flags}, partials, counter, out);
}

}  // namespace tally::cuda
