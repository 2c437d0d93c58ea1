// v2 of the shape layer's row / segment reads (tuning::shapes_vector_loads,
// src/cuda/shapes_tuning.hpp; default on): the vector folds that the v3 kernels
// (src/cuda/shapes_v3.cuh) read contiguous outputs with. Same ops and geometry as
// src/cuda/shapes.cuh; only for outputs whose elements are contiguous (CSR segments, or rows
// with unit element stride) and an element-aligned base.
//
//  - fold_contig: elements [k0, k1) of one contiguous output, read from its first 16-byte
//    boundary in 16-byte vectors (uint4: 4 float/int32 or 2 double/int64 elements), lanes
//    strided by vectors, kUnroll2 vectors in flight per lane (the lane's last < U vectors
//    too: one predicated round, not one load at a time); the head before the boundary and
//    the tail after the last whole vector are read scalarly. Each lane meets its elements in
//    increasing index order (as in v1), so the first-index rules of min/max/arg hold.
//  (v2's own kernels, tile_kernel and group_kernel, two launches a call, replaced by the fused v3
//  launch and reached only with TALLY_SHAPES_V3=0, were removed in the
//  forty-sixth session to shorten the build: docs/performance.md.)
#pragma once

#include <cstdint>

#include "cuda/shapes.cuh"

namespace tally::cuda::shapes_k::v2 {

inline constexpr int kUnroll2 = 2;

/// Shuffle down within groups of `width` lanes, of an accumulator made of 32-bit words.
template <class A> __device__ __forceinline__ A shfl_down_w(const A& v, int d, int width) {
  static_assert(sizeof(A) % 4 == 0);
  constexpr int N = sizeof(A) / 4;
  unsigned w[N];
  words_of(v, w);
#pragma unroll
  for (int i = 0; i < N; ++i) w[i] = __shfl_down_sync(0xffffffffu, w[i], d, width);
  return from_words<A>(w);
}

/// Folds one 16-byte vector v of elements kb, kb + 1, ... into a: by the op's
/// accumulate_vector where it has one (the certified pass: four float32 terms as one exact
/// term), else element by element.
template <class Op, class T, int V>
__device__ __forceinline__ void fold_vector(typename Op::acc& a, const T (&v)[V], std::int64_t kb) {
  if constexpr (requires(typename Op::acc& x) { Op::accumulate_vector(x, v); }) {
    Op::accumulate_vector(a, v);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) Op::accumulate(a, v[e], kb + e);
  }
}

/// Folds one 16-byte vector, as loaded, into a: by the op's accumulate_words where it has one
/// (the byte types' integer sums: dp4a on the four words, src/cuda/shapes_narrow.cu), else by
/// fold_vector on its elements. (The words go straight to dp4a: through a byte array, NVVM kept
/// a local copy of every vector, 16 bytes written to local memory per 16 read; run 117's ncu:
/// int8 rows at the speed of float16 rows with half their bytes, L1 hit rate 57%.)
template <class Op>
__device__ __forceinline__ void fold_words(typename Op::acc& a, const uint4& w, std::int64_t kb) {
  if constexpr (requires(typename Op::acc& x) { Op::accumulate_words_at(x, w, kb); }) {
    Op::accumulate_words_at(a, w, kb);  // (the byte extremes: the vector's elements kb, kb + 1, ...)
  } else if constexpr (requires(typename Op::acc& x) { Op::accumulate_words(x, w); }) {
    Op::accumulate_words(a, w);
  } else {
    using T = typename Op::elem;
    constexpr int V = 16 / static_cast<int>(sizeof(T));
    T v[V];
    __builtin_memcpy(v, &w, 16);
    fold_vector<Op>(a, v, kb);
  }
}

/// Whether Op has accumulate_vectors (the certified pass over float32: Op::vector_terms).
template <class Op> __host__ __device__ constexpr bool takes_vectors() {
  if constexpr (requires { Op::vector_terms; }) return Op::vector_terms;
  else return false;
}

/// A 16-byte copy from global to shared memory that does not wait (cp.async, bypassing L1;
/// a plain load and store before sm_80), and its group commit and wait.
__device__ __forceinline__ void copy_async16(uint4* dst, const void* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))),
               "l"(src)
               : "memory");
#else
  *dst = __ldg(static_cast<const uint4*>(src));
#endif
}
__device__ __forceinline__ void copy_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void copy_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

/// Whether Op takes a lane's U vectors in flight at once, with their elements' indices
/// (accumulate_words_round_at, accumulate_keys_round_at: the byte min / max, one state update
/// a round of U vectors).
template <class Op, int U> __host__ __device__ constexpr bool takes_rounds_at() {
  return requires(typename Op::acc& a, const uint4 (&w)[U]) { Op::template accumulate_words_round_at<U>(a, w, std::int64_t(0), std::int64_t(0)); };
}

/// Folds U whole 16-byte vectors w[u] = pv[j + u step] (elements kb + (j + u step) V on) into
/// a: by the op's accumulate_vectors where it has one (the certified pass: the U V float32
/// elements as one exact term when their exponents allow, one state update instead of U; when
/// they do not, the vectors are read again, one at a time, and folded by fold_vector: that rare
/// path then holds no registers in the common one), else vector by vector (fold_vector), in
/// order.
template <class Op, int U>
__device__ __forceinline__ void fold_vectors(typename Op::acc& a, const uint4 (&w)[U], const uint4* pv,
                                             std::int64_t kb, std::int64_t j, int step) {
  using T = typename Op::elem;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  if constexpr (takes_vectors<Op>()) {
    T v[U * V];
    __builtin_memcpy(v, w, sizeof v);
    if (Op::template accumulate_vectors<U * V>(a, v)) return;
#pragma unroll 1
    for (int u = 0; u < U; ++u) {
      const uint4 r = __ldg(pv + j + static_cast<std::int64_t>(u) * step);
      T e[V];
      __builtin_memcpy(e, &r, 16);
      fold_vector<Op>(a, e, kb + (j + static_cast<std::int64_t>(u) * step) * V);
    }
  } else if constexpr (takes_rounds_at<Op, U>()) {
    Op::template accumulate_words_round_at<U>(a, w, kb + j * V, static_cast<std::int64_t>(step) * V);
  } else {
#pragma unroll
    for (int u = 0; u < U; ++u) fold_words<Op>(a, w[u], kb + (j + static_cast<std::int64_t>(u) * step) * V);
  }
}

/// A lane's 16-byte vectors pv[j], pv[j + step], ... below nv, U in flight: whole rounds of U
/// go to round(w, j) (w[u] = pv[j + u step]), then this lane's last (< U) vectors, all loaded
/// together, to one(w[u], j + u step) in order. Returns nothing; fold_contig and fold_span
/// share it.
template <int U, class Round, class One>
__device__ __forceinline__ void walk_vectors(const uint4* pv, std::int64_t nv, std::int64_t j, int step, Round&& round,
                                             One&& one) {
  for (; j + (U - 1) * static_cast<std::int64_t>(step) < nv; j += U * step) {
    uint4 w[U];
#pragma unroll
    for (int u = 0; u < U; ++u) w[u] = __ldg(pv + j + static_cast<std::int64_t>(u) * step);
    round(w, j);
  }
  if (j < nv) {
    uint4 w[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t ju = j + static_cast<std::int64_t>(u) * step;
      w[u] = ju < nv ? __ldg(pv + ju) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t ju = j + static_cast<std::int64_t>(u) * step;
      if (ju >= nv) break;
      one(w[u], ju);
    }
  }
}

/// Folds p[k], k in [k0, k1), into a: this lane is `first` of `step` lanes; U vectors in flight.
/// (Loads with the L2 256-byte prefetch hint, ld .L2::256B, measured 2-6% slower on segments
/// of 1024 to 32Ki elements and on the uneven case, 2% faster on segments of 200: run 45.)
/// STAGES > 0 and `stage` not null: the groups of U vectors staged through shared memory by
/// cp.async, STAGES - 1 groups in flight while one is folded, without registers held for
/// them (twentieth session); `stage` is this thread's STAGES U slots, kBlock uint4 apart
/// (the thread reads back only the slots it filled: its own wait_group orders them). The
/// same groups folded in the same order, so the same bits.
template <class Op, int U = kUnroll2, int STAGES = 0>
__device__ __forceinline__ void fold_contig(typename Op::acc& a, const typename Op::elem* p, std::int64_t k0,
                                            std::int64_t k1, int first, int step, uint4* stage = nullptr) {
  using T = typename Op::elem;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  static_assert(V * sizeof(T) == 16);
  if (k0 >= k1) return;
  const auto addr = reinterpret_cast<std::uintptr_t>(p + k0);
  const std::int64_t head = static_cast<std::int64_t>(((16 - addr % 16) % 16) / sizeof(T));
  const std::int64_t kh = k0 + head < k1 ? k0 + head : k1;
  for (std::int64_t k = k0 + first; k < kh; k += step) Op::accumulate(a, __ldg(p + k), k);
  const std::int64_t nv = (k1 - kh) / V;
  const uint4* pv = reinterpret_cast<const uint4*>(p + kh);
  std::int64_t j = first;
  if constexpr (STAGES > 0) {
    if (stage != nullptr) {
      const std::int64_t span = static_cast<std::int64_t>(U) * step;  // vectors a group advances
      const std::int64_t groups = nv - j - (U - 1) * static_cast<std::int64_t>(step) > 0
                                      ? (nv - j - (U - 1) * static_cast<std::int64_t>(step) + span - 1) / span
                                      : 0;
      auto issue = [&](const std::int64_t i, const int s) {
        if (i < groups) {
#pragma unroll
          for (int u = 0; u < U; ++u) copy_async16(stage + (s * U + u) * kBlock, pv + j + i * span + static_cast<std::int64_t>(u) * step);
        }
        copy_async_commit();
      };
#pragma unroll
      for (int i = 0; i < STAGES - 1; ++i) issue(i, i);
      int s_read = 0, s_fill = STAGES - 1;
      for (std::int64_t i = 0; i < groups; ++i) {
        issue(i + STAGES - 1, s_fill);
        copy_async_wait<STAGES - 1>();
        uint4 w[U];
#pragma unroll
        for (int u = 0; u < U; ++u) w[u] = stage[(s_read * U + u) * kBlock];
        fold_vectors<Op>(a, w, pv, kh, j + i * span, step);
        s_read = s_read == STAGES - 1 ? 0 : s_read + 1;
        s_fill = s_fill == STAGES - 1 ? 0 : s_fill + 1;
      }
      copy_async_wait<0>();
      j += groups * span;
    }
  }
  // (this lane's last < U vectors: all in flight together, in the same order)
  walk_vectors<U>(pv, nv, j, step, [&](const uint4(&w)[U], std::int64_t jr) { fold_vectors<Op>(a, w, pv, kh, jr, step); },
                  [&](const uint4& w, std::int64_t ju) { fold_words<Op>(a, w, kh + ju * V); });
  for (std::int64_t k = kh + nv * V + first; k < k1; k += step) Op::accumulate(a, __ldg(p + k), k);
}

/// Whether Op is the certified pass over bfloat16 with exact runs of terms
/// (narrow_k::narrow_op::certified_terms: the columns' kBf16Runs, v3::cols_body).
template <class Op> __host__ __device__ constexpr bool takes_certified_terms() {
  if constexpr (requires { Op::certified_terms; }) return Op::certified_terms;
  else return false;
}
/// Whether Op's result is the same whatever order its elements are met in and has
/// accumulate_words_masked (exact sums and means of bytes, float16 sums in fixed point), so
/// that fold_span may read a span's partial first and last 16-byte vectors whole, masked.
template <class Op> __host__ __device__ constexpr bool takes_masked() {
  return requires(typename Op::acc& a, const uint4& w) { Op::accumulate_words_masked(a, w, 0, 1); };
}
/// Whether Op has accumulate_words_masked_at (the integer min / max of the narrow types: a vector's elements [from,
/// to) at their indices; the extreme and its first index do not depend on the order the
/// elements are met in), so that fold_span may read their partial vectors whole, masked, too.
template <class Op> __host__ __device__ constexpr bool takes_masked_at() {
  return requires(typename Op::acc& a, const uint4& w) { Op::accumulate_words_masked_at(a, w, 0, 1, std::int64_t(0)); };
}

/// A 16-byte vector's elements of B bytes at positions [from, to) (0 <= from < to <= 16 / B),
/// the others' bytes set to those of `fill` (a word of the fill element repeated).
template <int B> __device__ __forceinline__ uint4 keep_elements(const uint4& w, int from, int to, unsigned fill) {
  const unsigned __int128 all = ~static_cast<unsigned __int128>(0);
  const unsigned __int128 m = (all << (8 * B * from)) & (all >> (8 * (16 - B * to)));
  unsigned q[4];
  words_of(m, q);
  return make_uint4((w.x & q[0]) | (fill & ~q[0]), (w.y & q[1]) | (fill & ~q[1]), (w.z & q[2]) | (fill & ~q[2]),
                    (w.w & q[3]) | (fill & ~q[3]));
}

/// The bytes [from, to) of a 16-byte vector kept (0 <= from < to <= 16), the others zeroed: a
/// 64-bit mask a half (fold_span_sum: fewer instructions and registers than keep_elements'
/// 128-bit masks).
__device__ __forceinline__ uint4 keep_bytes(const uint4& w, int from, int to) {
  auto half = [&](int h) {
    const int lo = min(max(from - 8 * h, 0), 8), hi = min(max(to - 8 * h, 0), 8);
    const unsigned long long up = hi >= 8 ? ~0ull : (1ull << (8 * hi)) - 1, down = lo >= 8 ? 0ull : ~0ull << (8 * lo);
    return up & down;
  };
  const unsigned long long m0 = half(0), m1 = half(1);
  return make_uint4(w.x & static_cast<unsigned>(m0), w.y & static_cast<unsigned>(m0 >> 32), w.z & static_cast<unsigned>(m1),
                    w.w & static_cast<unsigned>(m1 >> 32));
}

/// Whether Op's sums may be taken as 64-bit lane partials (narrow_k::narrow_op::lane_sums: the
/// exact integer sums and means of bytes, bool, 16-bit integers and uint32, whose 128-bit
/// state only adds; Op::vector_sum and Op::value_of give a vector's and an element's exact
/// value). A lane's partial over a span of at most 2^31 elements of at most 2^32 each stays
/// below 2^63.
template <class Op> __host__ __device__ constexpr bool takes_lane_sums() {
  if constexpr (requires { Op::lane_sums; }) return Op::lane_sums;
  else return false;
}

/// The exact sum of x[at + k], k in [0, len), k = first, first + step, ... in this lane's
/// share (as fold_span's: the aligned 16-byte vectors that hold the span, lane j the vectors
/// j, j + step, ..., U in flight, the first and last masked to the span's bytes, where those
/// vectors lie inside x's first n elements; else element by element), as a 64-bit integer
/// (takes_lane_sums; len < 2^31). Fifty-eighth session: the group items' 128-bit state
/// (an add with carry chain a vector, 4-word shuffles) and keep_elements' 128-bit masks cost
/// int8 segments of 200 15% against this (run 206, bench/experiments/narrow_seg_probe.cu "lean").
template <class Op, int U>
__device__ __forceinline__ std::int64_t fold_span_sum(const typename Op::elem* x, std::int64_t n, std::int64_t at,
                                                      std::int64_t len, int first, int step) {
  using T = typename Op::elem;
  std::int64_t p = 0;
  if (len <= 0) return p;
  const auto s = reinterpret_cast<std::uintptr_t>(x + at), e = reinterpret_cast<std::uintptr_t>(x + at + len);
  const std::uintptr_t vb = s & ~std::uintptr_t(15), ve = (e + 15) & ~std::uintptr_t(15);
  if (vb >= reinterpret_cast<std::uintptr_t>(x) && ve <= reinterpret_cast<std::uintptr_t>(x + n)) {
    const uint4* pv = reinterpret_cast<const uint4*>(vb);
    const int nv = static_cast<int>((ve - vb) / 16);
    const int from0 = static_cast<int>(s - vb), to_last = 16 - static_cast<int>(ve - e);  // (bytes)
    for (int j = first; j < nv; j += U * step) {
      uint4 r[U];
#pragma unroll
      for (int u = 0; u < U; ++u) r[u] = j + u * step < nv ? __ldg(pv + j + u * step) : make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int k = j + u * step;
        uint4 w = r[u];
        if (k == 0 || k == nv - 1) w = keep_bytes(w, k == 0 ? from0 : 0, k == nv - 1 ? to_last : 16);
        p += Op::vector_sum(w);  // (past nv: zeros)
      }
    }
    return p;
  }
  for (std::int64_t k = first; k < len; k += step) p += Op::value_of(__ldg(x + at + k));
  return p;
}

/// Folds x[at + k], k in [0, len), into a, this lane `first` of `step` (as fold_contig(a, x +
/// at, 0, len, ...)). For the ops of takes_masked and takes_masked_at: the span read as the
/// aligned 16-byte vectors that hold it, lane j the vectors j, j + step, ..., U in flight, the
/// first and last masked to the span's elements; so a head or tail off the 16-byte boundaries
/// costs no scalar loads (a round trip each, after the vectors': ncu run 125, int8 segments of
/// 200, half of them starting 8 bytes past a boundary, spent a quarter of their instructions
/// there). Only where those vectors lie inside x's first n elements (else, and for every other
/// op, fold_contig). The order differs from fold_contig's; these ops' results (exact sums, the
/// extreme and its first index) do not depend on it, so the bits do not.
template <class Op, int U = kUnroll2, int STAGES = 0>
__device__ __forceinline__ void fold_span(typename Op::acc& a, const typename Op::elem* x, std::int64_t n,
                                          std::int64_t at, std::int64_t len, int first, int step,
                                          uint4* stage = nullptr) {
  using T = typename Op::elem;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  if constexpr (takes_masked<Op>() || takes_masked_at<Op>()) {
    if (len <= 0) return;
    const auto s = reinterpret_cast<std::uintptr_t>(x + at), e = reinterpret_cast<std::uintptr_t>(x + at + len);
    const std::uintptr_t vb = s & ~std::uintptr_t(15), ve = (e + 15) & ~std::uintptr_t(15);
    if (vb >= reinterpret_cast<std::uintptr_t>(x) && ve <= reinterpret_cast<std::uintptr_t>(x + n)) {
      const uint4* pv = reinterpret_cast<const uint4*>(vb);
      const std::int64_t nv = static_cast<std::int64_t>((ve - vb) / 16);
      const int from0 = static_cast<int>((s - vb) / sizeof(T));            // the first vector's first element
      const int to_last = static_cast<int>((e - (ve - 16)) / sizeof(T));  // the last vector's end
      auto fold_at = [&](const uint4& w, std::int64_t j) {
        if constexpr (takes_masked_at<Op>()) {
          const std::int64_t kb = j * V - from0;  // (the index in the span of the vector's element 0)
          if (j == 0 || j == nv - 1) Op::accumulate_words_masked_at(a, w, j == 0 ? from0 : 0, j == nv - 1 ? to_last : V, kb);
          else Op::accumulate_words_at(a, w, kb);
        } else {
          if (j == 0 || j == nv - 1) Op::accumulate_words_masked(a, w, j == 0 ? from0 : 0, j == nv - 1 ? to_last : V);
          else Op::accumulate_words(a, w);
        }
      };
      if constexpr (takes_rounds_at<Op, U>()) {
        // (the byte min / max: every round of U vectors one state update, whole
        // vectors as loaded; a round that holds the span's first or last vector or runs past
        // its end with those vectors' bytes outside the span masked: forty-eighth session,
        // where such rounds went vector by vector, as the 1-lane segments of 200 bytes
        // did with 5-6 of their 13-14 vectors. 32-bit vector counts: a span here is at most
        // the plan's seg_split, 2^30 elements)
        const int nvi = static_cast<int>(nv);
        for (int jr = first; jr < nvi; jr += U * step) {
          uint4 w[U];
#pragma unroll
          for (int u = 0; u < U; ++u) {
            const int ju = jr + u * step;
            w[u] = ju < nvi ? __ldg(pv + ju) : make_uint4(0, 0, 0, 0);
          }
          if (jr != 0 && jr + (U - 1) * step < nvi - 1)
            Op::template accumulate_words_round_at<U>(a, w, static_cast<std::int64_t>(jr) * V - from0, static_cast<std::int64_t>(step) * V);
          else
            Op::template accumulate_words_round_span_at<U>(a, w, jr, step, nvi, from0, to_last);
        }
      } else {
        walk_vectors<U>(
            pv, nv, first, step,
            [&](const uint4(&w)[U], std::int64_t jr) {
#pragma unroll
              for (int u = 0; u < U; ++u) fold_at(w[u], jr + static_cast<std::int64_t>(u) * step);
            },
            fold_at);
      }
      return;
    }
  }
  fold_contig<Op, U, STAGES>(a, x + at, 0, len, first, step, stage);
}

}  // namespace tally::cuda::shapes_k::v2
