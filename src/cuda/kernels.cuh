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

}  // namespace tally::cuda

namespace tally::cuda {

/// The final rounding, kept out of line so that its digit array and loops do not weigh on the
/// register allocation of the kernel's main loop (it runs once per launch, in one thread).
template <class L, class Out> __device__ __noinline__ Out round_digits(long long* sa, unsigned flags) {
  return ops::exact::round_in_place<L, Out>(reinterpret_cast<std::int64_t*>(sa), flags);
}
template <int D> __device__ __noinline__ void normalize_digits(long long* sa) {
  ops::exact::normalize<D>(reinterpret_cast<std::int64_t*>(sa));
}

/// Deposits into a block's shared superaccumulator (64-bit shared atomics). Out of line: they
/// run only when an expansion overflows its two terms, and inlining them into every unrolled
/// term of the main loop took the kernel to 255 registers.
template <class L> __device__ __noinline__ void deposit_shared(long long* sa, double v) {
  ops::exact::deposit<L>(v, [sa](int i, std::int64_t d) {
    atomicAdd(reinterpret_cast<unsigned long long*>(&sa[i]), static_cast<unsigned long long>(d));
  });
}
template <class L> __device__ __noinline__ void deposit_product_shared(long long* sa, double a, double b) {
  ops::exact::deposit_product<L>(a, b, [sa](int i, std::int64_t d) {
    atomicAdd(reinterpret_cast<unsigned long long*>(&sa[i]), static_cast<unsigned long long>(d));
  });
}

/// One-launch exact reduction (see include/tally/ops/exact.hpp): each thread keeps a two-term
/// expansion; what it cannot hold, and finally the expansion itself, is deposited with
/// shared-memory atomics into the block's superaccumulator (L::digits 64-bit digits); each
/// block carry-normalises its digits and adds them to the grid's superaccumulator in global
/// memory with integer atomics (exact, so the order does not matter); the last block to
/// finish rounds the total once to Out and leaves the global digits zero again.
/// Loads are as in reduce_kernel (unaligned head and tail, 16-byte vectors, UNROLL in flight).
/// Exact for fewer than 2^35 elements per block deposit chain (more than a GPU's memory holds).
template <class L, class T, bool DOT, int V, int BLOCK, int UNROLL, class Out>
__global__ void __launch_bounds__(BLOCK)
exact_kernel(const T* __restrict__ x,  // (n,)
             const T* __restrict__ y,  // (n,) for dot
             std::int64_t n, std::int64_t head,
             long long* global_sa,     // (L::digits,) zero on entry; left zero
             unsigned* global_flags,   // zero on entry; left zero
             unsigned* counter, result_sink<Out> out) {
  namespace ex = ops::exact;
  constexpr int D = L::digits;
  constexpr int N = UNROLL * V;
  using vec_t = vec<T, V>;
  __shared__ long long sa[D];
  __shared__ unsigned sflags;
  __shared__ bool is_last;
  for (int i = threadIdx.x; i < D; i += BLOCK) sa[i] = 0;
  if (threadIdx.x == 0) sflags = 0;
  __syncthreads();

  auto flush = [&](double v) { deposit_shared<L>(sa, v); };
  auto dprod = [&](double a, double b) { deposit_product_shared<L>(sa, a, b); };
  ex::expansion f;
  auto term = [&](T a, T b) {
    if constexpr (DOT) {
      if constexpr (std::is_same_v<T, float>) ex::add_product(f, a, b, flush);
      else ex::add_product(f, a, b, flush, dprod);
    } else {
      ex::add_term(f, a, flush);
    }
  };

  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * BLOCK + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * BLOCK;
  if (tid < head) term(x[tid], DOT ? y[tid] : T(0));
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
    bool done = false;
    if constexpr (!DOT && std::is_same_v<T, float>) {
      float v[N];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int k = 0; k < V; ++k) v[u * V + k] = a[u].v[k];
      double t;
      if (ex::tile_exact_f32<N>(v, t, f.flags)) {
        ex::add(f, t, flush);
        done = true;
      }
    }
    if (!done) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int k = 0; k < V; ++k) term(a[u].v[k], DOT ? b[u].v[k] : T(0));
    }
    if constexpr (std::is_same_v<T, double>) {
      if (ex::too_big(f.a[0])) {
        flush(f.a[0]);
        f.a[0] = 0.0;
      }
    }
  }
  for (; i < nvec; i += stride) {
    vec_t a = load(xv + i), b;
    if constexpr (DOT) b = load(yv + i);
#pragma unroll
    for (int k = 0; k < V; ++k) term(a.v[k], DOT ? b.v[k] : T(0));
  }
  const std::int64_t tail = head + nvec * V;
  if (tid < n - tail) term(x[tail + tid], DOT ? y[tail + tid] : T(0));

  // The threads' expansions join the block's digits without atomics: every thread stages its
  // terms in shared memory, then each lane of warp 0 deposits a 32nd of them into a private
  // row of digits, and the rows are summed digit by digit (with the flush digits in sa).
  // (Depositing them with shared atomics instead cost ~16 us per launch: 256 threads hitting
  // the same few digits.)
  __shared__ double stage[ex::kTerms * BLOCK];
  __shared__ long long rows[32][D];
#pragma unroll
  for (int k = 0; k < ex::kTerms; ++k) stage[k * BLOCK + threadIdx.x] = f.a[k];
  unsigned wf = __reduce_or_sync(0xffffffffu, f.flags);
  if ((threadIdx.x & 31) == 0 && wf) atomicOr(&sflags, wf);
  __syncthreads();
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x;
    long long* row = rows[lane];
    for (int k = 0; k < D; ++k) row[k] = 0;
    auto dep_row = [row](int k, std::int64_t v) { row[k] += v; };
    for (int j = lane; j < ex::kTerms * BLOCK; j += 32)
      if (stage[j] != 0.0) ex::deposit<L>(stage[j], dep_row);
    __syncwarp();
    for (int k = lane; k < D; k += 32) {
      long long t = sa[k];
      for (int r = 0; r < 32; ++r) t += rows[r][k];
      sa[k] = t;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) normalize_digits<D>(sa);
  __syncthreads();

  if (gridDim.x == 1) {  // one block: round its own digits
    if (threadIdx.x == 0) {
      *out.value = round_digits<L, Out>(sa, sflags);
      if (out.status) *out.status = 0;
      if (out.done) {
        __threadfence_system();
        *out.done = out.ticket;
      }
    }
    return;
  }
  for (int k = threadIdx.x; k < D; k += BLOCK)
    if (sa[k]) atomicAdd(reinterpret_cast<unsigned long long*>(global_sa + k), static_cast<unsigned long long>(sa[k]));
  if (threadIdx.x == 0 && sflags) atomicOr(global_flags, sflags);
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  for (int k = threadIdx.x; k < D; k += BLOCK) {
    sa[k] = static_cast<long long>(__ldcg(reinterpret_cast<const unsigned long long*>(global_sa + k)));
    global_sa[k] = 0;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned flags = __ldcg(global_flags);
    *global_flags = 0;
    *counter = 0;
    *out.value = round_digits<L, Out>(sa, flags);
    if (out.status) *out.status = 0;
    if (out.done) {
      __threadfence_system();
      *out.done = out.ticket;
    }
  }
}

}  // namespace tally::cuda
