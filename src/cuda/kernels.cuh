// The kernels: thin bodies over the thread and block layers.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/block.cuh"
#include "cuda/thread.cuh"
#include "tally/ops/exact.hpp"
#include "tally/ops/reducers.hpp"

namespace tally::cuda {

/// One-launch reduction of x (and y for dot) of n elements.
///
/// The first `head` elements (< V) are read one by one so that the body starts on a V-element
/// (16-byte) boundary; the body is read as 16-byte vectors in a grid-stride loop with UNROLL
/// independent loads in flight per input; the tail (< V elements) one by one again. All
/// indices are 64-bit. Any grid size >= 1 is valid. MIN_BLOCKS asks the compiler to fit that
/// many blocks per SM (a register cap), see tuning::full_occupancy.
template <class R, class T, bool DOT, int V, int BLOCK, int UNROLL, int MIN_BLOCKS = 1>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
reduce_kernel(const T* __restrict__ x,  // (n,)
              const T* __restrict__ y,  // (n,) for dot, else unused
              std::int64_t n, std::int64_t head,
              typename R::acc_t* partials,  // (gridDim.x,)
              unsigned* counter, result_sink<typename R::result_t> out) {
  using acc_t = typename R::acc_t;
  using vec_t = vec<T, V>;
  acc_t acc = R::identity();
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * BLOCK + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * BLOCK;

  auto one = [&](std::int64_t i) {
    if constexpr (DOT) R::accumulate(acc, x[i], y[i]);
    else R::accumulate(acc, x[i]);
  };
  if (tid < head) one(tid);

  const std::int64_t nvec = (n - head) / V;
  const vec_t* xv = reinterpret_cast<const vec_t*>(x + head);
  const vec_t* yv = reinterpret_cast<const vec_t*>(DOT ? y + head : x + head);
  std::int64_t i = tid;
  for (; i + (UNROLL - 1) * stride < nvec; i += UNROLL * stride) {
    vec_t a[UNROLL], b[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      a[u] = load(xv + i + u * stride);
      if constexpr (DOT) b[u] = load(yv + i + u * stride);
    }
    // The UNROLL * V elements of one tile are combined as a pairwise tree (short dependency
    // chains, and the longest serial run of additions becomes the number of tiles, which the
    // error bound in tally.hpp counts), then added to the running accumulator.
    acc_t t[UNROLL * V];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int k = 0; k < V; ++k) {
        t[u * V + k] = R::identity();
        if constexpr (DOT) R::accumulate(t[u * V + k], a[u].v[k], b[u].v[k]);
        else R::accumulate(t[u * V + k], a[u].v[k]);
      }
#pragma unroll
    for (int w = 1; w < UNROLL * V; w *= 2)
#pragma unroll
      for (int j = 0; j + w < UNROLL * V; j += 2 * w) t[j] = R::combine(t[j], t[j + w]);
    acc = R::combine(acc, t[0]);
  }
  for (; i < nvec; i += stride) {
    vec_t a = load(xv + i), b;
    if constexpr (DOT) b = load(yv + i);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if constexpr (DOT) R::accumulate(acc, a.v[k], b.v[k]);
      else R::accumulate(acc, a.v[k]);
    }
  }
  const std::int64_t tail = head + nvec * V;
  if (tid < n - tail) one(tail + tid);

  grid_finish<R, BLOCK>(acc, partials, counter, out);
}

/// Element-wise out = x + y, n elements; vectors of V as in reduce_kernel (all three arrays
/// share the same misalignment). `status`, if not null, is set to 1 on integer overflow
/// (it must be 0 on entry; it is never cleared here).
template <class T, int V, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
add_kernel(const T* x, const T* y, T* out, std::int64_t n, std::int64_t head, int* status) {
  using vec_t = vec<T, V>;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * BLOCK + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * BLOCK;
  int bad = 0;
  if (tid < head) out[tid] = ops::add_checked(x[tid], y[tid], bad);
  const std::int64_t nvec = (n - head) / V;
  const vec_t* xv = reinterpret_cast<const vec_t*>(x + head);
  const vec_t* yv = reinterpret_cast<const vec_t*>(y + head);
  vec_t* ov = reinterpret_cast<vec_t*>(out + head);
  std::int64_t i = tid;
  for (; i + (UNROLL - 1) * stride < nvec; i += UNROLL * stride) {
    vec_t a[UNROLL], b[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      a[u] = xv[i + u * stride];  // plain loads: out may alias x or y exactly
      b[u] = yv[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int k = 0; k < V; ++k) a[u].v[k] = ops::add_checked(a[u].v[k], b[u].v[k], bad);
      ov[i + u * stride] = a[u];
    }
  }
  for (; i < nvec; i += stride) {
    vec_t a = xv[i], b = yv[i];
#pragma unroll
    for (int k = 0; k < V; ++k) a.v[k] = ops::add_checked(a.v[k], b.v[k], bad);
    ov[i] = a;
  }
  const std::int64_t tail = head + nvec * V;
  if (tid < n - tail) out[tail + tid] = ops::add_checked(x[tail + tid], y[tail + tid], bad);
  if (bad && status) *status = 1;
}

/// One-launch reduction whose reducer needs each element's index (min/max and their first
/// index: ops/extremes.hpp): R::accumulate(acc, x[i], i). Loads as in reduce_kernel (scalar
/// head, 16-byte vectors with UNROLL in flight, scalar tail); the order of accumulation does
/// not matter (R::combine breaks ties by index).
template <class R, class T, int V, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
indexed_kernel(const T* __restrict x,  // (n,)
               std::int64_t n, std::int64_t head,
               typename R::acc_t* partials,  // (gridDim.x,)
               unsigned* counter, result_sink<typename R::result_t> out) {
  using vec_t = vec<T, V>;
  typename R::acc_t acc = R::identity();
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * BLOCK + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * BLOCK;
  if (tid < head) R::accumulate(acc, x[tid], tid);
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
      for (int k = 0; k < V; ++k) R::accumulate(acc, a[u].v[k], head + (i + u * stride) * V + k);
  }
  for (; i < nvec; i += stride) {
    vec_t a = load(xv + i);
#pragma unroll
    for (int k = 0; k < V; ++k) R::accumulate(acc, a.v[k], head + i * V + k);
  }
  const std::int64_t tail = head + nvec * V;
  if (tid < n - tail) R::accumulate(acc, x[tail + tid], tail + tid);
  grid_finish<R, BLOCK>(acc, partials, counter, out);
}

}  // namespace tally::cuda
