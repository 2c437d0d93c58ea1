// Exact mode, first pass (v5): the certified kernel (tally/ops/certified.hpp) and the gate
// that lets the exact kernel behind it run only when the certificate fails.
//
// A call in exact mode enqueues two kernels: certified_kernel reads the data once, carries
// each thread's sum in hi/mid/lo doubles with a running error bound, and its last block
// either proves the correctly rounded result (and writes it, with the completion ticket) or
// sets the gate. The exact kernel is enqueued behind it with programmatic dependent launch
// (sm_90): its blocks start while the certified kernel drains, wait for it to complete
// (griddepcontrol.wait), read the gate, and return at once when it is 0.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/block.cuh"
#include "cuda/thread.cuh"
#include "tally/ops/certified.hpp"

namespace tally::cuda::certified {

namespace oc = ops::certified;

/// The reducer shape grid_total wants: identity, combine.
template <int K> struct merge_reducer {
  using acc_t = oc::state;
  __device__ static acc_t identity() { return acc_t{}; }
  __device__ static acc_t combine(const acc_t& a, const acc_t& b) { return oc::merge<K>(a, b); }
};

/// The gate word the certified kernel's last block writes: the call's number (31 bits, from 1)
/// and whether the exact kernel must run (bit 0). A gated exact kernel that polls waits until
/// the word carries its own call's number; its last block to read the word resets it to 0
/// (pending), so neither an earlier call's verdict nor an earlier execution of the same call
/// (a replayed CUDA graph) is ever read as this one's.
__host__ __device__ constexpr unsigned gate_word(unsigned seq, bool run_exact) {
  return (seq << 1) | (run_exact ? 1u : 0u);
}

/// MOMENTS: the states of sum x and sum x^2 together (one read of x for a variance).
struct moments {
  oc::state s, q;
};
template <int K> struct moments_reducer {
  using acc_t = moments;
  __device__ static acc_t identity() { return acc_t{}; }
  __device__ static acc_t combine(const acc_t& a, const acc_t& b) {
    return acc_t{oc::merge<K>(a.s, b.s), oc::merge<K>(a.q, b.q)};
  }
};

/// Lets the dependent (gated exact) grid begin launching: called once a block has read all
/// of its inputs. No effect before sm_90.
__device__ __forceinline__ void allow_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
/// One pass over x (and y): the certified sum (DOT: dot product; SQUARE: sum of squares of
/// x) of n elements, K levels (2 or 3; ops::certified::add), P independent states per thread
/// (shorter dependency chains), 16-byte vectors of V elements after `head` leading ones,
/// UNROLL vectors per input per tile, PREFETCH: the next tile loaded during this one's work,
/// TAIL: the vectors left after the last full tile loaded together as one partial tile (else
/// one at a time). ORDERED: the error-free additions by Fast2Sum on the operands ordered by
/// magnitude (ops::certified::two_sum_ordered: 3 float64 additions and a compare where TwoSum
/// takes 6), the same states.
///
/// ROUND: the last block certifies the rounding to Out on the device; when it holds it
/// writes value, status 0 and the ticket to `out` (else nothing: the gated exact kernel
/// writes them), then, last, gate_word(seq, failed) to *gate. !ROUND (Out = double): the last
/// block writes the finished ops::certified::interval (4 doubles) to out.value and the
/// ticket, for the host to certify a mean or a square root. MOMENTS (!DOT, !ROUND): sum x and
/// sum x^2 in one pass (P states of each per thread); the last block writes both finished
/// intervals (8 doubles: sum x's, then sum x^2's) for the host's variance certificate.
template <class T, bool DOT, bool SQUARE, int K, int P, int V, int BLOCK, int UNROLL, bool ROUND, class Out,
          bool PREFETCH = false, bool MOMENTS = false, bool TAIL = false, bool ORDERED = false>
__global__ void __launch_bounds__(BLOCK)
certified_kernel(const T* __restrict__ x,  // (n,)
                 const T* __restrict__ y,  // (n,) for DOT && !SQUARE
                 std::int64_t n, std::int64_t head,
                 oc::state* partials,      // (gridDim.x,) device scratch (MOMENTS: pairs of states)
                 unsigned* counter,        // 0 on entry, left 0
                 unsigned* gate,           // ROUND: set to gate_word(seq, verdict) last
                 unsigned seq,             // ROUND: this call's number (workspace::gate_seq)
                 result_sink<Out> out) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  static_assert(!SQUARE || DOT);
  static_assert(!MOMENTS || (!DOT && !ROUND && std::is_same_v<Out, double>));
  constexpr bool EXACT_PRODUCTS = std::is_same_v<T, float>;  // float32 products are exact in float64
  constexpr bool LOAD_Y = DOT && !SQUARE;
  using vec_t = vec<T, V>;
  oc::state s[P];
  oc::state q[MOMENTS ? P : 1];  // MOMENTS: sum x^2
  auto accumulate = [&](int j, T a, T b) {
    if constexpr (DOT) {
      oc::add_product<K, EXACT_PRODUCTS, ORDERED>(s[j], double(a), double(b));
    } else {
      oc::add<K, ORDERED>(s[j], double(a));
      if constexpr (MOMENTS) oc::add_product<K, EXACT_PRODUCTS, ORDERED>(q[j], double(a), double(a));
    }
  };
  auto put = [&](T a, T b) { accumulate(0, a, b); };  // the few elements outside the main loop
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * BLOCK + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * BLOCK;
  if (tid < head) put(x[tid], LOAD_Y ? y[tid] : x[tid]);
  const std::int64_t nvec = (n - head) / V;
  const vec_t* xv = reinterpret_cast<const vec_t*>(x + head);
  const vec_t* yv = reinterpret_cast<const vec_t*>(LOAD_Y ? y + head : x + head);
  std::int64_t i = tid;
  auto fetch = [&](std::int64_t at, vec_t (&a)[UNROLL], vec_t (&b)[UNROLL]) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      a[u] = load(xv + at + u * stride);
      if constexpr (LOAD_Y) b[u] = load(yv + at + u * stride);
      else b[u] = a[u];
    }
  };
  // Vector u of a tile goes to state u % P (known at compile time): the elements of one
  // vector share a state, so terms that cancel their neighbour (a, -a + tiny) cancel
  // error-free inside one state rather than at the final merge.
  auto work = [&](const vec_t (&a)[UNROLL], const vec_t (&b)[UNROLL]) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int k = 0; k < V; ++k) {
        accumulate(u % P, a[u].v[k], b[u].v[k]);
      }
  };
  auto full = [&](std::int64_t at) { return at + (UNROLL - 1) * stride < nvec; };
  if constexpr (PREFETCH) {
    // The next tile's loads are issued before the current tile is accumulated, so a thread
    // keeps its loads in flight while it computes.
    if (full(i)) {
      vec_t a[UNROLL], b[UNROLL];
      fetch(i, a, b);
      while (true) {
        const std::int64_t next = i + UNROLL * stride;
        const bool more = full(next);
        vec_t na[UNROLL], nb[UNROLL];
        if (more) fetch(next, na, nb);
        work(a, b);
        i = next;
        if (!more) break;
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          a[u] = na[u];
          b[u] = nb[u];
        }
      }
    }
  } else {
    for (; full(i); i += UNROLL * stride) {
      vec_t a[UNROLL], b[UNROLL];
      fetch(i, a, b);
      work(a, b);
    }
  }
  if constexpr (TAIL) {
    // What is left (fewer than UNROLL vectors) as one partial tile: its loads go out
    // together, so the thread waits for one memory round trip, not one per vector.
    if (i < nvec) {
      vec_t a[UNROLL], b[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
        if (i + u * stride < nvec) {
          a[u] = load(xv + i + u * stride);
          if constexpr (LOAD_Y) b[u] = load(yv + i + u * stride);
          else b[u] = a[u];
        }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
        if (i + u * stride < nvec)
#pragma unroll
          for (int k = 0; k < V; ++k) accumulate(u % P, a[u].v[k], b[u].v[k]);
    }
  } else {
    for (; i < nvec; i += stride) {
      vec_t a = load(xv + i), b;
      if constexpr (LOAD_Y) b = load(yv + i);
      else b = a;
#pragma unroll
      for (int k = 0; k < V; ++k) put(a.v[k], b.v[k]);
    }
  }
  const std::int64_t tail = head + nvec * V;
  if (tid < n - tail) put(x[tail + tid], LOAD_Y ? y[tail + tid] : x[tail + tid]);
  allow_dependents();

#pragma unroll
  for (int j = 1; j < P; ++j) {
    s[0] = oc::merge<K>(s[0], s[j]);
    if constexpr (MOMENTS) q[0] = oc::merge<K>(q[0], q[j]);
  }
  if constexpr (MOMENTS) {
    moments both;
    if (!grid_total<moments_reducer<K>, BLOCK, true>(moments{s[0], q[0]}, reinterpret_cast<moments*>(partials),
                                                      counter, both))
      return;
    // Squares of float64 inputs that underflow lose up to 2^-1075 each (FMA's error term).
    const double absolute = EXACT_PRODUCTS ? 0.0 : static_cast<double>(n) * 0x1p-1074;
    const oc::interval v = oc::finish(both.s, 0.0), w = oc::finish(both.q, absolute);
    const double words[8] = {v.H, v.L, v.B, v.finite, w.H, w.L, w.B, w.finite};
#pragma unroll
    for (int k = 0; k < 8; ++k) out.value[k] = words[k];
    if (out.status) *out.status = 0;
    if (out.done) {
      __threadfence_system();  // value and status reach the host before the ticket
      *out.done = out.ticket;
    }
    return;
  }
  oc::state total;
  if (!grid_total<merge_reducer<K>, BLOCK, true>(s[0], partials, counter, total)) return;
  // Products of float64 inputs that underflow lose up to 2^-1075 each (FMA's error term).
  const double absolute = DOT && !EXACT_PRODUCTS ? static_cast<double>(n) * 0x1p-1074 : 0.0;
  const oc::interval v = oc::finish(total, absolute);
  if constexpr (ROUND) {
    Out r;
    const bool held = oc::round_certified<Out>(v, r);
    if (held) {
      *out.value = r;
      if (out.status) *out.status = 0;
      if (out.done) {
        __threadfence_system();  // value and status reach the host before the ticket
        *out.done = out.ticket;
      }
    }
    // The verdict goes last: a gated exact kernel that polls it (gate mode 2) may let the
    // stream go on as soon as it reads "held", so the result is written before it.
    __threadfence();
    *reinterpret_cast<volatile unsigned*>(gate) = gate_word(seq, !held);
  } else {
    static_assert(std::is_same_v<Out, double>);
    out.value[0] = v.H;
    out.value[1] = v.L;
    out.value[2] = v.B;
    out.value[3] = v.finite;
    if (out.status) *out.status = 0;
    if (out.done) {
      __threadfence_system();  // value and status reach the host before the ticket
      *out.done = out.ticket;
    }
  }
}

}  // namespace tally::cuda::certified
