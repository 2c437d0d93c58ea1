// The kernels: thin bodies over the thread and block layers.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/block.cuh"
#include "cuda/thread.cuh"
#include "tally/ops/exact.hpp"
#include "tally/ops/extremes.hpp"
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

/// Whether indexed_kernel may fold R over whole vectors (see there): the extreme reducers of
/// ops/extremes.hpp on arithmetic elements compared as themselves (not 16-bit floats).
template <class R, class T>
inline constexpr bool vector_extremes = requires {
  R::is_max;
  R::skip_nan;
  typename R::value_type;
} && std::is_same_v<typename R::value_type, T> && std::is_arithmetic_v<T>;

/// Whether indexed_kernel may fold R over whole vectors: ops::minmax_reducer on arithmetic
/// elements (both extremes kept in the one read, as vector_extremes keeps one).
template <class R, class T>
inline constexpr bool vector_minmax = requires {
  typename R::min_r;
  typename R::max_r;
  R::skip_nan;
  typename R::value_type;
} && std::is_same_v<typename R::value_type, T> && std::is_arithmetic_v<T>;

/// The sides (minimum, maximum) a vector fold of R keeps: both for minmax (BOTH).
template <class R, bool BOTH> struct extreme_sides {
  static constexpr bool lo = true, hi = true;
};
template <class R> struct extreme_sides<R, false> {
  static constexpr bool lo = !R::is_max, hi = R::is_max;
};

/// The best of two elements for a min or max that skips NaN (fmin / fmax: a NaN loses to a
/// number; two NaNs give NaN); signed zeros may come out either way (they compare equal).
template <bool MAX, class T> __device__ __forceinline__ T pick(T a, T b) {
  if constexpr (std::is_same_v<T, float>) return MAX ? fmaxf(a, b) : fminf(a, b);
  else if constexpr (std::is_floating_point_v<T>) return MAX ? fmax(a, b) : fmin(a, b);
  else return MAX ? (b > a ? b : a) : (b < a ? b : a);
}

/// One-launch reduction whose reducer needs each element's index (min/max and their first
/// index: ops/extremes.hpp): R::accumulate(acc, x[i], i). Loads as in reduce_kernel (scalar
/// head, 16-byte vectors with UNROLL in flight, scalar tail); the order of accumulation does
/// not matter (R::combine breaks ties by index).
/// For the extreme reducers on arithmetic types (vector_extremes, and both sides of minmax:
/// vector_minmax) the body is folded a vector
/// at a time with no per-element index work: each thread meets its vectors in increasing
/// order and keeps the best value (fmin / fmax of the vector, replaced only when strictly
/// better) and the first vector that holds it, and the first vector holding a NaN; at the end
/// it reads those two vectors again and takes the first element equal to the best value (its
/// own bits: -0.0 or +0.0) and the first NaN. That is the same (value, first index) as
/// element-wise accumulation, with 3-4 instructions per element instead of ~12 (64-bit index
/// arithmetic and compares), which bound float32 min/max below the read bandwidth.
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
  if constexpr (vector_extremes<R, T> || vector_minmax<R, T>) {
    constexpr bool BOTH = vector_minmax<R, T>;  // minmax: both sides in the one read
    constexpr bool LO = extreme_sides<R, BOTH>::lo, HI = extreme_sides<R, BOTH>::hi, SKIP = R::skip_nan;
    using lo_r = ops::extreme_reducer<T, false, SKIP>;
    using hi_r = ops::extreme_reducer<T, true, SKIP>;
    T lo = lo_r::empty_value(), hi = hi_r::empty_value();
    std::int64_t lo_vec = -1, hi_vec = -1, nan_vec = -1;  // in this thread's (increasing) visiting order
    auto visit = [&](const vec_t& a, std::int64_t vid) {
      T mlo = a.v[0], mhi = a.v[0];
      bool nan = ops::is_nan(a.v[0]);
#pragma unroll
      for (int k = 1; k < V; ++k) {
        if constexpr (LO) mlo = pick<false>(mlo, a.v[k]);
        if constexpr (HI) mhi = pick<true>(mhi, a.v[k]);
        nan |= ops::is_nan(a.v[k]);
      }
      if (!SKIP && nan && nan_vec < 0) nan_vec = vid;
      // strictly better; or the first number at all (all +inf for min gives +inf, index 0)
      if constexpr (LO) {
        if (mlo < lo || (lo_vec < 0 && !ops::is_nan(mlo))) {
          lo = mlo;
          lo_vec = vid;
        }
      }
      if constexpr (HI) {
        if (mhi > hi || (hi_vec < 0 && !ops::is_nan(mhi))) {
          hi = mhi;
          hi_vec = vid;
        }
      }
    };
    for (; i + (UNROLL - 1) * stride < nvec; i += UNROLL * stride) {
      vec_t a[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) a[u] = load(xv + i + u * stride);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) visit(a[u], i + u * stride);
    }
    for (; i < nvec; i += stride) visit(load(xv + i), i);
    std::int64_t nan_index = ops::kNoIndex;
    if (nan_vec >= 0) {
      const vec_t a = load(xv + nan_vec);
      for (int k = V - 1; k >= 0; --k)
        if (ops::is_nan(a.v[k])) nan_index = head + nan_vec * V + k;
    }
    // A side's value and index: the first element of its vector equal to its best (it has
    // one; its own bits, -0.0 or +0.0), and the first NaN.
    auto locate = [&](auto& side, T best, std::int64_t vid) {
      side.nan_index = nan_index;
      if (vid < 0) return;
      const vec_t a = load(xv + vid);
      for (int k = V - 1; k >= 0; --k)
        if (!ops::is_nan(a.v[k]) && a.v[k] == best) {
          side.value = a.v[k];
          side.index = head + vid * V + k;
        }
    };
    typename R::acc_t body = R::identity();
    if constexpr (BOTH) {
      locate(body.min, lo, lo_vec);
      locate(body.max, hi, hi_vec);
    } else if constexpr (HI) {
      locate(body, hi, hi_vec);
    } else {
      locate(body, lo, lo_vec);
    }
    acc = R::combine(acc, body);
  } else {
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
  }
  const std::int64_t tail = head + nvec * V;
  if (tid < n - tail) R::accumulate(acc, x[tail + tid], tail + tid);
  grid_finish<R, BLOCK>(acc, partials, counter, out);
}

}  // namespace tally::cuda
