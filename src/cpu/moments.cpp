// CPU backend: L1 and max norms, variance and standard deviation (every element type: the
// 16-bit floats as their exact float32 values, integers and bool exactly in 128 bits),
// count of nonzeros.
//
// Fast reductions use the reducers of ops/moments.hpp over fixed chunks of 2^15 elements:
// each chunk folds its elements in order, the chunk results are combined in chunk order, so
// the result depends on the input alone, never on the thread count (the fast L1 norm, whose
// error bound is `sum`'s, takes the fast sum's lanes and trees instead: cpu/reduce.hpp).
// Exact ones feed each chunk to the exact-mode accumulators (cpu/exact.hpp: anchored levels
// and the Kulisch superaccumulator), merge the threads' digits by integer addition and round
// once.
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backends_ops.hpp"
#include "cpu/exact.hpp"
#include "cpu/reduce.hpp"
#include "tally/ops/certified.hpp"
#include "tally/ops/exact.hpp"
#include "tally/ops/exact_variance.hpp"
#include "tally/ops/small.hpp"
#include "tally/ops/moments.hpp"
#include "tally/threads.hpp"

namespace tally::cpu {
namespace {

namespace ex = ops::exact;

constexpr std::int64_t kChunk = 1 << 15;
constexpr std::int64_t kParallelMin = 1 << 16;

// R over x[0, n): chunk results in chunk order, combined left to right.
template <class R, class T> typename R::acc_t fold_chunks(const T* x, std::int64_t n) {
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<typename R::acc_t> part(static_cast<std::size_t>(chunks), R::identity());
#pragma omp parallel for schedule(static) if ((n >= kParallelMin) && ::tally::detail::cpu_threads_allowed())
  for (std::int64_t c = 0; c < chunks; ++c) {
    typename R::acc_t a = R::identity();
    const std::int64_t end = std::min(n, (c + 1) * kChunk);
    for (std::int64_t i = c * kChunk; i < end; ++i) R::accumulate(a, x[i]);
    part[static_cast<std::size_t>(c)] = a;
  }
  typename R::acc_t total = R::identity();
  for (const auto& p : part) total = R::combine(total, p);
  return total;
}

template <class Out> void put(void* result, Out v) { std::memcpy(result, &v, sizeof v); }

// Exact norm1, var and std of at most this many floating elements try the certified pass
// first (ops/certified.hpp): for short inputs, such as one slice of an axis reduction, the
// superaccumulators' setup costs microseconds a call.
constexpr std::int64_t kCertifiedShort = 256;

template <class T, class Out> void norm1_t(accuracy acc, const void* xv, std::int64_t n, void* result) {
  const T* x = static_cast<const T*>(xv);
  // Fast: the fast sum's tree over |x| (cpu/reduce.cpp), within the error bound of `sum`; a
  // serial fold of each chunk (fold_chunks) erred by up to 2^15 ulps of the sum.
  if (acc == accuracy::fast) return abs_sum_fast(dtype_of<T>(), dtype_of<Out>(), xv, n, result);
  if (n > 0 && n <= kCertifiedShort) {  // short: the certified pass first (the same bits; see var_certified)
    ops::certified::state s;
    for (std::int64_t i = 0; i < n; ++i) ops::certified::add<3>(s, std::fabs(static_cast<double>(x[i])));
    Out r;
    if (ops::certified::round_state<Out>(s, r)) return put(result, r);
  }
  // Exact: |x| chunk by chunk into a thread's buffer, then the exact sum of the buffer.
  using L = std::conditional_t<std::is_same_v<T, float>, ex::f32_sum_layout, ex::f64_sum_layout>;
  std::int64_t total[L::digits] = {};
  unsigned flags = 0;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel if ((n >= kParallelMin) && ::tally::detail::cpu_threads_allowed())
  {
    std::vector<T> buf(static_cast<std::size_t>(std::min(n, kChunk)));
    std::int64_t d[L::digits] = {};
    unsigned f = 0;
#pragma omp for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t b = c * kChunk, len = std::min(kChunk, n - b);
      for (std::int64_t i = 0; i < len; ++i) buf[static_cast<std::size_t>(i)] = std::fabs(x[b + i]);
      exact_fold(reduce_op::sum, dtype_of<T>(), buf.data(), nullptr, len, d, f);
    }
#pragma omp critical(tally_norm1_merge)
    {
      for (int k = 0; k < L::digits; ++k) total[k] += d[k];
      flags |= f;
    }
  }
  put(result, ex::round_to<L, Out>(total, flags));
}

template <class T, class Out> void norm_inf_t(const void* x, std::int64_t n, void* result) {
  int st = 0;
  using R = ops::max_abs_reducer<T, Out>;
  put(result, R::finalize(fold_chunks<R, T>(static_cast<const T*>(x), n), st));
}

// Exact S1 = sum x and S2 = sum x^2 of floating x as magnitudes (S2 >= 0), with their flags.
// float16 and bfloat16 (T = their storage types) take the float32 path: each chunk is
// converted exactly to float32 first.
template <class T>
void float_sums(const T* x, std::int64_t n, ops::big::nat& i1, int& b1, ops::big::nat& i2, int& b2, unsigned& flags) {
  constexpr bool half = ops::is_half_v<T>;
  using F = std::conditional_t<half, float, T>;
  using L1 = std::conditional_t<std::is_same_v<F, float>, ex::f32_sum_layout, ex::f64_sum_layout>;
  using L2 = std::conditional_t<std::is_same_v<F, float>, ex::f32_dot_layout, ex::f64_dot_layout>;
  std::int64_t s1[L1::digits] = {}, s2[L2::digits] = {};
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel if ((n >= kParallelMin) && ::tally::detail::cpu_threads_allowed())
  {
    std::int64_t d1[L1::digits] = {}, d2[L2::digits] = {};
    unsigned f = 0;
    std::vector<float> buf(half ? static_cast<std::size_t>(std::min(n, kChunk)) : 0);
#pragma omp for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t b = c * kChunk, len = std::min(kChunk, n - b);
      const F* p;
      if constexpr (half) {
        for (std::int64_t i = 0; i < len; ++i) buf[static_cast<std::size_t>(i)] = static_cast<float>(x[b + i]);
        p = buf.data();
      } else {
        p = x + b;
      }
      exact_fold(reduce_op::sum, dtype_of<F>(), p, nullptr, len, d1, f);
      exact_fold(reduce_op::dot, dtype_of<F>(), p, p, len, d2, f);
    }
#pragma omp critical(tally_var_merge)
    {
      for (int k = 0; k < L1::digits; ++k) s1[k] += d1[k];
      for (int k = 0; k < L2::digits; ++k) s2[k] += d2[k];
      flags |= f;
    }
  }
  bool neg = false;
  i1 = ops::big::from_digits(s1, L1::digits, neg);
  i2 = ops::big::from_digits(s2, L2::digits, neg);
  b1 = L1::base;
  b2 = L2::base;
}

// Exact S1 (128 bits) and S2 (up to 2^63 squares below 2^128: 191 bits) of integer (or bool:
// 0/1) x. |S1| < 2^63 * 2^64 = 2^127 fits the signed 128-bit accumulator for every type,
// uint64 included; each square |x|^2 < 2^128 is formed in unsigned 128 bits.
template <class T> void int_sums(const T* x, std::int64_t n, ops::big::nat& i1, ops::big::nat& i2) {
  using ops::i128;
  using ops::u128;
  i128 s1 = 0;
  u128 s2 = 0;
  std::uint64_t s2_hi = 0;  // carries out of s2
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel if ((n >= kParallelMin) && ::tally::detail::cpu_threads_allowed())
  {
    i128 a1 = 0;
    u128 a2 = 0;
    std::uint64_t hi = 0;
#pragma omp for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t end = std::min(n, (c + 1) * kChunk);
      for (std::int64_t i = c * kChunk; i < end; ++i) {
        i128 v = static_cast<i128>(x[i]);
        a1 += v;
        u128 m = static_cast<u128>(v < 0 ? -v : v);  // |x| <= 2^64 - 1
        u128 sq = m * m;
        a2 += sq;
        hi += a2 < sq;
      }
    }
#pragma omp critical(tally_var_int_merge)
    {
      s1 += a1;
      s2 += a2;
      s2_hi += hi + (s2 < a2);
    }
  }
  auto limbs = [](u128 lo, std::uint64_t top, ops::big::nat& r) {
    r.limb.clear();
    for (int i = 0; i < 4; ++i) r.limb.push_back(static_cast<std::uint32_t>(lo >> (32 * i)));
    r.limb.push_back(static_cast<std::uint32_t>(top));
    r.limb.push_back(static_cast<std::uint32_t>(top >> 32));
    r.trim();
  };
  limbs(static_cast<u128>(s1 < 0 ? -s1 : s1), 0, i1);
  limbs(s2, s2_hi, i2);
}

// Exact var / std of at most kCertifiedShort floating elements: first by the certified pass
// (ops/certified.hpp, the GPU's: TwoSum states of sum x and sum x^2 with running error
// bounds, variance_certified proving the correctly rounded result), the two superaccumulators
// only where it cannot prove it (constant data, ties, results out of [2^-400, 2^400],
// specials). The same bits either way. For short slices (tally.var along an axis of a
// (200000, 3) array: one call per row) the exact path's setup dominated: ~2.8 us a call.
template <class T, class Out>
bool var_certified(const T* x, std::int64_t n, std::uint64_t m2, bool take_sqrt, Out& r) {
  namespace ce = ops::certified;
  constexpr bool exact_squares = !std::is_same_v<T, double>;  // float32 (and 16-bit) squares are exact in float64
  ce::state s1, s2;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    ce::add<3>(s1, v);
    ce::add_product<3, exact_squares>(s2, v, v);
  }
  const double absolute = exact_squares ? 0.0 : static_cast<double>(n) * 0x1p-1074;  // squares that underflow
  return ce::variance_certified<Out>(ce::finish(s1, 0.0), ce::finish(s2, absolute), static_cast<std::uint64_t>(n), m2,
                                     take_sqrt, r);
}

// T: the storage type (ops::storage_t: half_in / bhalf_in for the 16-bit floats).
template <class T, class Out>
void var_t(accuracy acc, const void* xv, std::int64_t n, std::uint64_t m2, bool take_sqrt, void* result) {
  const T* x = static_cast<const T*>(xv);
  if (acc == accuracy::fast) {
    ops::moments m = fold_chunks<ops::welford_reducer<T>, T>(x, n);
    return put(result, static_cast<Out>(ops::finish_variance(m, m2, take_sqrt)));
  }
  if constexpr (std::is_floating_point_v<T> || ops::is_half_v<T>) {
    Out r;
    if (n > 0 && n <= kCertifiedShort && var_certified<T, Out>(x, n, m2, take_sqrt, r)) return put(result, r);
    if constexpr (std::is_floating_point_v<T>) {  // longer: the vectorised certified sums (float32, float64)
      ops::certified::interval s1, s2;
      if (n > kCertifiedShort && certified_moments(dtype_of<T>(), x, n, s1, s2) &&
          ops::certified::variance_certified<Out>(s1, s2, static_cast<std::uint64_t>(n), m2, take_sqrt, r))
        return put(result, r);
    }
  }
  ops::big::nat i1, i2;
  int b1 = 0, b2 = 0;
  if constexpr (std::is_floating_point_v<T> || ops::is_half_v<T>) {
    unsigned flags = 0;
    float_sums<T>(x, n, i1, b1, i2, b2, flags);
    if (flags & (ex::seen_nan | ex::seen_pos_inf | ex::seen_neg_inf))  // NaN or an infinity: NaN
      return put(result, std::numeric_limits<Out>::quiet_NaN());
  } else {
    int_sums<T>(x, n, i1, i2);
  }
  put(result, ex::variance_round<Out>(i1, b1, i2, b2, static_cast<std::uint64_t>(n), m2, take_sqrt));
}

template <class T> std::int64_t count_t(const void* x, std::int64_t n) {
  return fold_chunks<ops::count_nonzero_reducer<T>, T>(static_cast<const T*>(x), n);
}

}  // namespace

void norm1(dtype t, dtype out, accuracy acc, const void* x, std::int64_t n, void* result) {
  if (t == dtype::float32)
    return out == dtype::float64 ? norm1_t<float, double>(acc, x, n, result) : norm1_t<float, float>(acc, x, n, result);
  return out == dtype::float32 ? norm1_t<double, float>(acc, x, n, result) : norm1_t<double, double>(acc, x, n, result);
}

void norm_inf(dtype t, dtype out, const void* x, std::int64_t n, void* result) {
  if (t == dtype::float32)
    return out == dtype::float64 ? norm_inf_t<float, double>(x, n, result) : norm_inf_t<float, float>(x, n, result);
  return out == dtype::float32 ? norm_inf_t<double, float>(x, n, result) : norm_inf_t<double, double>(x, n, result);
}

void var(dtype t, dtype out, accuracy acc, const void* x, std::int64_t n, std::uint64_t m2, bool take_sqrt,
         void* result) {
  tally::visit(t, [&](auto tag) {
    using S = ops::storage_t<typename decltype(tag)::type>;
    if (out == dtype::float32) var_t<S, float>(acc, x, n, m2, take_sqrt, result);
    else var_t<S, double>(acc, x, n, m2, take_sqrt, result);
  });
}

std::int64_t count_nonzero(dtype t, const void* x, std::int64_t n) {
  return tally::visit(t, [&](auto tag) { return count_t<ops::storage_t<typename decltype(tag)::type>>(x, n); });
}

}  // namespace tally::cpu
