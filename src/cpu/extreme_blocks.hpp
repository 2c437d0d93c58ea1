// CPU backend: min / max and their first index over a contiguous run, by value first (used by
// the 1-D extremes, src/cpu/extremes.cpp, and the shape layer's rows, src/cpu/shapes.cpp).
// The reducer is ops::extreme_reducer: the results are the reducer's, element by element.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <immintrin.h>
#include <limits>
#include <type_traits>

#include "cpu/isa.hpp"
#include "tally/ops/extremes.hpp"

namespace tally::cpu::extreme_blocks {

constexpr int kLanes = 8;
constexpr std::int64_t kBlock = 2048;  // elements a block is scanned by value
constexpr std::int64_t kAheadBytes = 4096;  // bytes after a range prefetched before its rescan
// Rows of the shape layer up to this many bytes have the row after next prefetched by its
// engine (src/cpu/shapes.cpp, prefetch_after); fold_range prefetches after longer ranges only.
constexpr std::int64_t kRowAheadBytes = 4096;

// Element by element in eight interleaved lanes (the reducer's rules; indices are x's own).
template <class R, class T> typename R::acc_t fold_lanes(const T* __restrict x, std::int64_t begin, std::int64_t end) {
  typename R::acc_t lane[kLanes];
  for (auto& l : lane) l = R::identity();
  std::int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes)
    for (int j = 0; j < kLanes; ++j) R::accumulate(lane[j], x[i + j], i + j);
  for (; i < end; ++i) R::accumulate(lane[0], x[i], i);
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] = R::combine(lane[j], lane[j + w]);
  return lane[0];
}

// The best value of x[begin, end), or a NaN when the block holds one: four VB-byte GCC /
// Clang vectors a step (compare, compare, select), built for SSE2 and AVX2 below and chosen at
// run time. x > m is false for a NaN, which enters m by the second test and then
// stays, since nothing compares greater than it.
template <int VB, class R, class T>
[[gnu::always_inline]] inline T block_best_v(const T* __restrict x, std::int64_t begin, std::int64_t end) {
  constexpr int L = VB / sizeof(T), K = 4;
  typedef T vec __attribute__((vector_size(VB)));
  auto pick = [](T v, T m) { return ((R::is_max ? v > m : v < m) || ops::is_nan(v)) ? v : m; };
  T r = x[begin];
  std::int64_t i = begin;
  if (end - begin >= K * L) {
    vec m[K];
    std::memcpy(m, x + begin, sizeof m);  // (the block's first elements: candidates themselves)
    for (i = begin + K * L; i + K * L <= end; i += K * L)
      for (int k = 0; k < K; ++k) {
        vec v;
        std::memcpy(&v, x + i + k * L, sizeof v);
        if constexpr (std::numeric_limits<T>::is_integer) m[k] = (R::is_max ? v > m[k] : v < m[k]) ? v : m[k];
        else m[k] = ((R::is_max ? v > m[k] : v < m[k]) | (v != v)) ? v : m[k];
      }
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < L; ++j) r = ops::is_nan(r) ? r : pick(m[k][j], r);
  }
  for (; i < end; ++i) r = ops::is_nan(r) ? r : pick(x[i], r);
  return r;
}
template <class R, class T> [[gnu::target("avx2")]] T block_best_avx2(const T* x, std::int64_t b, std::int64_t e) {
  return block_best_v<32, R>(x, b, e);
}

// Floating types with AVX-512: the vector max / min instructions, one operation a vector
// (which zero of -0 == +0 they keep does not matter: the rescan finds the first element equal
// to the best, and blocks are compared by < and >), with NaNs seen by unordered compares of
// pairs of vectors (true where either is NaN) OR-ed over the block: a block holding one returns
// NaN, as block_best_v does. Four vectors a step, from the identity (-inf / +inf).
// (Intrinsics in wrappers that are always_inline with the target: GCC 12 compiles a function
// without the target attribute for the baseline, lambdas in a target function included.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // (GCC 12's own _mm512_max_pd / _min_pd)
#define TALLY_512 gnu::always_inline, gnu::target("avx512f,avx512vl")
template <class T> struct fp512;
template <> struct fp512<double> {
  using V = __m512d;
  [[TALLY_512]] static inline V load(const double* p) { return _mm512_loadu_pd(p); }
  [[TALLY_512]] static inline V set1(double v) { return _mm512_set1_pd(v); }
  [[TALLY_512]] static inline V max(V a, V b) { return _mm512_max_pd(a, b); }
  [[TALLY_512]] static inline V min(V a, V b) { return _mm512_min_pd(a, b); }
  [[TALLY_512]] static inline unsigned unord(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_UNORD_Q); }
  [[TALLY_512]] static inline void store(double* p, V v) { _mm512_storeu_pd(p, v); }
};
template <> struct fp512<float> {
  using V = __m512;
  [[TALLY_512]] static inline V load(const float* p) { return _mm512_loadu_ps(p); }
  [[TALLY_512]] static inline V set1(float v) { return _mm512_set1_ps(v); }
  [[TALLY_512]] static inline V max(V a, V b) { return _mm512_max_ps(a, b); }
  [[TALLY_512]] static inline V min(V a, V b) { return _mm512_min_ps(a, b); }
  [[TALLY_512]] static inline unsigned unord(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
  [[TALLY_512]] static inline void store(float* p, V v) { _mm512_storeu_ps(p, v); }
};
#undef TALLY_512
template <bool MAX, class T>
[[gnu::target("avx512f,avx512vl")]] T block_best_fp512(const T* __restrict x, std::int64_t begin, std::int64_t end) {
  using F = fp512<T>;
  using V = typename F::V;
  constexpr int L = 64 / static_cast<int>(sizeof(T)), K = 4;
  const T id = MAX ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  T r = id;
  std::int64_t i = begin;
  if (end - begin >= K * L) {
    V m[K];
    for (int k = 0; k < K; ++k) m[k] = F::set1(id);
    unsigned un = 0;
    for (; i + K * L <= end; i += K * L) {
      V v[K];
      for (int k = 0; k < K; ++k) v[k] = F::load(x + i + k * L);
      for (int k = 0; k < K; k += 2) un |= F::unord(v[k], v[k + 1]);
      for (int k = 0; k < K; ++k) m[k] = MAX ? F::max(m[k], v[k]) : F::min(m[k], v[k]);
    }
    if (un) return std::numeric_limits<T>::quiet_NaN();
    for (int k = 1; k < K; ++k) m[0] = MAX ? F::max(m[0], m[k]) : F::min(m[0], m[k]);
    T lanes[L];
    F::store(lanes, m[0]);
    for (int j = 0; j < L; ++j) r = (MAX ? lanes[j] > r : lanes[j] < r) ? lanes[j] : r;
  }
  for (; i < end; ++i) {
    if (ops::is_nan(x[i])) return std::numeric_limits<T>::quiet_NaN();
    r = (MAX ? x[i] > r : x[i] < r) ? x[i] : r;
  }
  return r;
}
#pragma GCC diagnostic pop

template <class R, class T> T block_best(const T* x, std::int64_t b, std::int64_t e) {
  if constexpr (std::is_floating_point_v<T>)
    if (cpu_has_avx512()) return block_best_fp512<R::is_max>(x, b, e);
  // (Integers: no AVX-512 form, since GCC 12 breaks 64-byte vector comparisons into scalars.)
  return cpu_has_avx2() ? block_best_avx2<R>(x, b, e) : block_best_v<16, R>(x, b, e);
}

// The first i in [begin, end) with x[i] == v (v is there; -0 == +0): with AVX-512 a vector
// compare a step (eight or sixteen elements) while whole vectors fit, then element by element.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <class T>
[[gnu::target("avx512f,avx512vl")]] std::int64_t find_equal512(const T* __restrict x, std::int64_t i,
                                                                         std::int64_t end, T v) {
  constexpr int L = 64 / static_cast<int>(sizeof(T));
  for (; i + L <= end; i += L) {
    std::uint32_t hit;
    if constexpr (std::is_same_v<T, double>) hit = _mm512_cmp_pd_mask(_mm512_loadu_pd(x + i), _mm512_set1_pd(v), _CMP_EQ_OQ);
    else if constexpr (std::is_same_v<T, float>) hit = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), _mm512_set1_ps(v), _CMP_EQ_OQ);
    else if constexpr (sizeof(T) == 8) hit = _mm512_cmpeq_epi64_mask(_mm512_loadu_si512(x + i), _mm512_set1_epi64(v));
    else hit = _mm512_cmpeq_epi32_mask(_mm512_loadu_si512(x + i), _mm512_set1_epi32(v));
    if (hit) return i + __builtin_ctz(hit);
  }
  while (!(x[i] == v)) ++i;
  return i;
}
#pragma GCC diagnostic pop
template <class T> std::int64_t find_equal(const T* __restrict x, std::int64_t begin, std::int64_t end, T v) {
  if constexpr (sizeof(T) >= 4)
    if (cpu_has_avx512()) return find_equal512(x, begin, end, v);
  while (!(x[begin] == v)) ++begin;
  return begin;
}

// x[begin, end) by value first: blocks of kBlock scanned for their best value alone (no index),
// only the block whose best first beats the others' kept, and that one block scanned again at
// the end for the first index holding the value. A block holding a NaN is folded element by
// element by the reducer (the NaN rule); with NaNs propagated, the blocks after it are not
// read (its first NaN wins). Indices are x's own.
// Without IDX (no index asked for) the best value's block stands for its index, and the
// rescan is left out unless the best is a zero (whose sign is the first one's).
template <class R, class T, bool IDX = true>
typename R::acc_t fold_range(const T* __restrict x, std::int64_t begin, std::int64_t end) {
  using acc = typename R::acc_t;
  acc mine = R::identity();
  T best{};
  std::int64_t best_block = -1;
  for (std::int64_t b = begin; b < end; b += kBlock) {
    const std::int64_t e = std::min(end, b + kBlock);
    const T v = block_best<R>(x, b, e);
    if (ops::is_nan(v)) {
      mine = R::combine(mine, fold_lanes<R, T>(x, b, e));
      if (!R::skip_nan) break;  // a NaN: later elements cannot change the result (its first NaN wins)
      continue;
    }
    if (best_block < 0 || (R::is_max ? v > best : v < best)) {
      best = v;
      best_block = b;
    }
  }
  if (best_block >= 0) {
    // (What follows ends in mispredicted branches: the memory after x[end), the next row of a
    // row-major matrix, is prefetched first, so that its loads are not held up behind them;
    // shorter rows have had it done by the shape engine already.)
    if ((end - begin) * static_cast<std::int64_t>(sizeof(T)) > kRowAheadBytes)
      for (std::int64_t b = 0; b < kAheadBytes; b += 64) __builtin_prefetch(reinterpret_cast<const char*>(x + end) + b);
    if (!IDX && !(best == T(0))) {  // (no index asked for: the value alone; a zero's sign is its first one's)
      acc a = R::identity();
      R::accumulate(a, best, best_block);
      return R::combine(mine, a);
    }
    const std::int64_t i = find_equal(x, best_block, std::min(end, best_block + kBlock), best);  // (the block holds best, and no NaN)
    acc a = R::identity();
    R::accumulate(a, x[i], i);
    mine = R::combine(mine, a);
  }
  return mine;
}


// One column tile, by value first: the outputs b < ob of rows k < kl, element (k, b) at
// p[k * row_stride + b] (adjacent outputs contiguous), into out[b] with row indices k0 + k.
// Row by row, each row read whole and in order (the hardware prefetchers follow it, and the
// rows kAhead ahead are prefetched in software, since consecutive rows are far apart): each
// output's best value so far and the row it came from (an integer of the element's width:
// k < 2^31) are kept in two arrays of ob elements (L1: ob <= kTileOut), updated a vector of
// outputs at a time. A row replaces an output's value only when strictly better, so the first
// row of equals stays. NaNs, propagated: the first one replaces a number and then stays
// (nothing beats it; a later NaN does not replace it); omitted: a number replaces a NaN (an
// output's start, row 0) and a NaN never enters. When the lanes do not divide ob, the last
// vector overlaps the one before it: an output updated twice by the same row is unchanged the
// second time (its value then equals the row's, or is already its NaN), so this is exact.
// Tiles narrower than one vector go element by element through the reducer, row by row.
// Without IDX (min / max whose indices nobody asked for) the rows are not kept: each output's
// index is then k0, and its NaN's index too (the values are the same either way, so merging
// tiles gives the same values).
constexpr std::int64_t kTileOut = 512;  // outputs of a column tile at most (two arrays in L1)
constexpr std::int64_t kAhead = 8;      // rows prefetched ahead in a column tile
template <int VB, bool IDX, class R, class T>
[[gnu::always_inline]] inline void fold_columns_v(typename R::acc_t* out, const T* __restrict p, std::int64_t ob,
                                                  std::int64_t kl, std::int64_t row_stride, std::int64_t k0) {
  using I = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;
  typedef T vt __attribute__((vector_size(VB)));
  typedef I vi __attribute__((vector_size(VB)));
  constexpr int L = VB / sizeof(T);
  if (ob < L) {
    typename R::acc_t a[L];
    for (std::int64_t b = 0; b < ob; ++b) a[b] = R::identity();
    for (std::int64_t k = 0; k < kl; ++k)
      for (std::int64_t b = 0; b < ob; ++b) R::accumulate(a[b], p[k * row_stride + b], k0 + k);
    for (std::int64_t b = 0; b < ob; ++b) out[b] = a[b];
    return;
  }
  alignas(64) T best[kTileOut];
  alignas(64) I row_of[kTileOut];
  std::memcpy(best, p, static_cast<std::size_t>(ob) * sizeof(T));
  if constexpr (IDX) std::memset(row_of, 0, static_cast<std::size_t>(ob) * sizeof(I));
  const std::int64_t last = ob - L;  // the last vector's first output
  const std::int64_t line = 64 / static_cast<std::int64_t>(sizeof(T));
  auto step = [&](const T* __restrict row, std::int64_t b, const vi& kk) __attribute__((always_inline)) {
    vt x, v;
    vi at{};
    std::memcpy(&x, row + b, sizeof x);
    std::memcpy(&v, best + b, sizeof v);
    if constexpr (IDX) std::memcpy(&at, row_of + b, sizeof at);
    vi take;
    if constexpr (std::numeric_limits<T>::is_integer) take = R::is_max ? x > v : x < v;
    else if constexpr (R::skip_nan) take = (R::is_max ? x > v : x < v) | ((v != v) & (x == x));
    else take = (R::is_max ? x > v : x < v) | ((x != x) & (v == v));
    v = take ? x : v;
    std::memcpy(best + b, &v, sizeof v);
    if constexpr (IDX) {
      at = take ? kk : at;
      std::memcpy(row_of + b, &at, sizeof at);
    }
  };
  for (std::int64_t k = 1; k < kl; ++k) {
    const T* __restrict row = p + k * row_stride;
    if (k + kAhead < kl)
    {
      const T* ahead = row + kAhead * row_stride;
      for (std::int64_t b = 0; b < ob; b += line) __builtin_prefetch(ahead + b);
      __builtin_prefetch(ahead + ob - 1);
    }
    const vi kk = vi{} + static_cast<I>(k);
    std::int64_t b = 0;
    for (; b < last; b += L) step(row, b, kk);
    step(row, last, kk);
  }
  for (std::int64_t b = 0; b < ob; ++b) {
    typename R::acc_t a = R::identity();
    const T val = best[b];
    const std::int64_t row = k0 + (IDX ? static_cast<std::int64_t>(row_of[b]) : 0);
    if (!ops::is_nan(val)) {
      a.value = val;
      a.index = row;
    } else if (!R::skip_nan) {
      a.nan_index = row;
    }
    out[b] = a;
  }
}
template <bool IDX, class R, class T>
[[gnu::target("avx2")]] void fold_columns_avx2(typename R::acc_t* out, const T* p, std::int64_t ob, std::int64_t kl,
                                               std::int64_t row_stride, std::int64_t k0) {
  fold_columns_v<32, IDX, R>(out, p, ob, kl, row_stride, k0);
}
// min / max values of a column tile of a floating type (no indices: fold_columns_v without
// IDX) with AVX-512: best = max(x, best) a vector of outputs at a time (the instruction keeps
// its second operand, the earlier row, on equals and on NaN), NaNs seen by unordered compares
// of pairs of vectors OR-ed over the tile. A tile holding a NaN is left to fold_columns_v
// (false: nothing written); otherwise the same values (the first row's zero of -0 == +0 too).
// ob >= one vector (the last vector overlaps the one before: max is idempotent).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <bool MAX, class A, class T>
[[gnu::target("avx512f,avx512vl")]] bool fold_columns_fp512(A* out, const T* __restrict p, std::int64_t ob,
                                                                      std::int64_t kl, std::int64_t row_stride,
                                                                      std::int64_t k0) {
  using F = fp512<T>;
  using V = typename F::V;
  constexpr int L = 64 / static_cast<int>(sizeof(T));
  alignas(64) T best[kTileOut];
  std::memcpy(best, p, static_cast<std::size_t>(ob) * sizeof(T));
  const std::int64_t last = ob - L, line = 64 / static_cast<std::int64_t>(sizeof(T));
  unsigned un = 0;
  {
    std::int64_t b = 0;  // (row 0's NaNs)
    for (; b < last; b += L) un |= F::unord(F::load(best + b), F::load(best + b));
    un |= F::unord(F::load(best + last), F::load(best + last));
  }
  for (std::int64_t k = 1; k < kl; ++k) {
    const T* __restrict row = p + k * row_stride;
    if (k + kAhead < kl) {
      const T* ahead = row + kAhead * row_stride;
      for (std::int64_t b = 0; b < ob; b += line) __builtin_prefetch(ahead + b);
      __builtin_prefetch(ahead + ob - 1);
    }
    std::int64_t b = 0;
    for (; b + L < last; b += 2 * L) {
      const V x0 = F::load(row + b), x1 = F::load(row + b + L);
      un |= F::unord(x0, x1);
      F::store(best + b, MAX ? F::max(x0, F::load(best + b)) : F::min(x0, F::load(best + b)));
      F::store(best + b + L, MAX ? F::max(x1, F::load(best + b + L)) : F::min(x1, F::load(best + b + L)));
    }
    for (; b < last; b += L) {
      const V x = F::load(row + b);
      un |= F::unord(x, x);
      F::store(best + b, MAX ? F::max(x, F::load(best + b)) : F::min(x, F::load(best + b)));
    }
    const V x = F::load(row + last);
    un |= F::unord(x, x);
    F::store(best + last, MAX ? F::max(x, F::load(best + last)) : F::min(x, F::load(best + last)));
  }
  if (un) return false;
  for (std::int64_t b = 0; b < ob; ++b) {
    out[b].value = best[b];
    out[b].index = k0;
    out[b].nan_index = ops::kNoIndex;
  }
  return true;
}
#pragma GCC diagnostic pop

/// See fold_columns_v (kl >= 1, ob <= kTileOut).
template <bool IDX, class R, class T>
void fold_columns(typename R::acc_t* out, const T* p, std::int64_t ob, std::int64_t kl, std::int64_t row_stride,
                  std::int64_t k0) {
  if constexpr (!IDX && std::is_floating_point_v<T>)
    if (cpu_has_avx512() && ob >= 64 / static_cast<std::int64_t>(sizeof(T)) &&
        fold_columns_fp512<R::is_max>(out, p, ob, kl, row_stride, k0))
      return;
  if (cpu_has_avx2()) fold_columns_avx2<IDX, R>(out, p, ob, kl, row_stride, k0);
  else fold_columns_v<16, IDX, R>(out, p, ob, kl, row_stride, k0);
}

}  // namespace tally::cpu::extreme_blocks
