// CPU backend: min / max and their first index over a contiguous run, by value first (used by
// the 1-D extremes, src/cpu/extremes.cpp, and the shape layer's rows, src/cpu/shapes.cpp).
// The reducer is ops::extreme_reducer: the results are the reducer's, element by element.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/isa.hpp"
#include "tally/ops/extremes.hpp"

namespace tally::cpu::extreme_blocks {

constexpr int kLanes = 8;
constexpr std::int64_t kBlock = 2048;  // elements a block is scanned by value

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
template <class R, class T> T block_best(const T* x, std::int64_t b, std::int64_t e) {
  // (No AVX-512 form: GCC 12 breaks 64-byte vector comparisons into scalars, 5x slower.)
  return cpu_has_avx2() ? block_best_avx2<R>(x, b, e) : block_best_v<16, R>(x, b, e);
}

// x[begin, end) by value first: blocks of kBlock scanned for their best value alone (no index),
// only the block whose best first beats the others' kept, and that one block scanned again at
// the end for the first index holding the value. A block holding a NaN is folded element by
// element by the reducer (the NaN rule); with NaNs propagated, the blocks after it are not
// read (its first NaN wins). Indices are x's own.
template <class R, class T> typename R::acc_t fold_range(const T* __restrict x, std::int64_t begin, std::int64_t end) {
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
    std::int64_t i = best_block;
    while (!(x[i] == best)) ++i;  // (the block holds best, and no NaN)
    acc a = R::identity();
    R::accumulate(a, x[i], i);
    mine = R::combine(mine, a);
  }
  return mine;
}


// One column tile, by value first: the outputs b < ob of rows k < kl, element (k, b) at
// p[k * row_stride + b] (adjacent outputs contiguous), into out[b] with row indices k0 + k.
// Each vector lane holds one output's best value so far and the row it came from (an integer
// of the element's width: k < 2^31); a row replaces a lane's value only when strictly better,
// so the first row of equals stays. NaNs, propagated: the first one replaces a number and then
// stays (nothing beats it; a later NaN does not replace it); omitted: a number replaces a NaN
// (a lane's start, row 0) and a NaN never enters. The outputs past the last whole group of
// vectors go element by element through the reducer.
template <int VB, class R, class T>
[[gnu::always_inline]] inline void fold_columns_v(typename R::acc_t* out, const T* __restrict p, std::int64_t ob,
                                                  std::int64_t kl, std::int64_t row_stride, std::int64_t k0) {
  using I = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;
  typedef T vt __attribute__((vector_size(VB)));
  typedef I vi __attribute__((vector_size(VB)));
  constexpr int L = VB / sizeof(T), G = 4;
  std::int64_t b0 = 0;
  for (; b0 + G * L <= ob; b0 += G * L) {
    vt v[G];
    vi at[G];
    for (int g = 0; g < G; ++g) {
      std::memcpy(&v[g], p + b0 + g * L, sizeof(vt));
      at[g] = vi{};
    }
    for (std::int64_t k = 1; k < kl; ++k) {
      const T* row = p + k * row_stride + b0;
      const vi kk = vi{} + static_cast<I>(k);
      for (int g = 0; g < G; ++g) {
        vt x;
        std::memcpy(&x, row + g * L, sizeof x);
        vi take;
        if constexpr (std::numeric_limits<T>::is_integer) take = R::is_max ? x > v[g] : x < v[g];
        else if constexpr (R::skip_nan) take = (R::is_max ? x > v[g] : x < v[g]) | ((v[g] != v[g]) & (x == x));
        else take = (R::is_max ? x > v[g] : x < v[g]) | ((x != x) & (v[g] == v[g]));
        v[g] = take ? x : v[g];
        at[g] = take ? kk : at[g];
      }
    }
    for (int g = 0; g < G; ++g)
      for (int j = 0; j < L; ++j) {
        typename R::acc_t a = R::identity();
        const T val = v[g][j];
        const std::int64_t row = k0 + static_cast<std::int64_t>(at[g][j]);
        if (!ops::is_nan(val)) {
          a.value = val;
          a.index = row;
        } else if (!R::skip_nan) {
          a.nan_index = row;
        }
        out[b0 + g * L + j] = a;
      }
  }
  for (; b0 < ob; ++b0) {
    typename R::acc_t a = R::identity();
    for (std::int64_t k = 0; k < kl; ++k) R::accumulate(a, p[k * row_stride + b0], k0 + k);
    out[b0] = a;
  }
}
template <class R, class T>
[[gnu::target("avx2")]] void fold_columns_avx2(typename R::acc_t* out, const T* p, std::int64_t ob, std::int64_t kl,
                                               std::int64_t row_stride, std::int64_t k0) {
  fold_columns_v<32, R>(out, p, ob, kl, row_stride, k0);
}
/// See fold_columns_v (kl >= 1).
template <class R, class T>
void fold_columns(typename R::acc_t* out, const T* p, std::int64_t ob, std::int64_t kl, std::int64_t row_stride,
                  std::int64_t k0) {
  if (cpu_has_avx2()) fold_columns_avx2<R>(out, p, ob, kl, row_stride, k0);
  else fold_columns_v<16, R>(out, p, ob, kl, row_stride, k0);
}

}  // namespace tally::cpu::extreme_blocks
