// tally::ops: the reducers shared by the CPU and CUDA backends, as small host/device functions.
//
// A reducer R for element type T (the Kokkos reducer idea) provides:
//   using acc_t;                                   the accumulator
//   static acc_t identity();                       the neutral element of combine
//   static void accumulate(acc_t&, T x [, T y]);   fold one element (one pair for dot) in
//   static acc_t combine(acc_t a, acc_t b);        merge two accumulators (associative)
//   static result finalize(acc_t a, int& status);  round / narrow to the result type; status 1
//                                                  means the exact result does not fit it
// Each backend folds elements into per-thread accumulators in its own order, then merges
// them with `combine`; the reducers make the arithmetic identical on both sides.
// Floating identities are -0.0, the IEEE additive identity (-0.0 + x == x for every x,
// +0.0 included), so a sum of negative zeros keeps its sign. The backends return +0.0 for
// empty input without reducing (NumPy's sum of nothing is 0.0).
#pragma once

#include <cstdint>

#include "tally/ops/elementwise_small.hpp"  // add_checked of the types after the first four

#if defined(__CUDACC__)
#define TALLY_HD __host__ __device__ __forceinline__
#define TALLY_UNROLL _Pragma("unroll")
#define TALLY_NO_UNROLL _Pragma("unroll 1")
#else
#define TALLY_HD inline
#define TALLY_UNROLL _Pragma("GCC unroll 16")
#define TALLY_NO_UNROLL _Pragma("GCC unroll 1")
#endif

namespace tally::ops {

using i128 = __int128;
using u128 = unsigned __int128;

/// A 192-bit two's-complement integer: enough to hold the exact dot product of any int64
/// vectors of up to 2^63 elements (each product is below 2^126 in magnitude).
struct i192 {
  std::uint64_t lo = 0, mid = 0;
  std::int64_t hi = 0;
};

TALLY_HD i192 make_i192(i128 v) {
  i192 r;
  r.lo = static_cast<std::uint64_t>(static_cast<u128>(v));
  r.mid = static_cast<std::uint64_t>(static_cast<u128>(v) >> 64);
  r.hi = v < 0 ? -1 : 0;
  return r;
}

TALLY_HD i192 add(i192 a, i192 b) {
  i192 r;
  r.lo = a.lo + b.lo;
  std::uint64_t c0 = r.lo < a.lo;
  std::uint64_t m = a.mid + b.mid;
  std::uint64_t c1 = m < a.mid;
  r.mid = m + c0;
  c1 += r.mid < m;
  r.hi = static_cast<std::int64_t>(static_cast<std::uint64_t>(a.hi) + static_cast<std::uint64_t>(b.hi) + c1);
  return r;
}

/// Narrow an exact 128-bit integer to int64: status = 1 when it does not fit.
TALLY_HD std::int64_t narrow_i64(i128 v, int& status) {
  if (v > static_cast<i128>(INT64_MAX) || v < static_cast<i128>(INT64_MIN)) {
    status = 1;
    return 0;
  }
  status = 0;
  return static_cast<std::int64_t>(v);
}

TALLY_HD std::int64_t narrow_i64(i192 v, int& status) {
  // Fits iff hi and mid are the sign extension of lo.
  std::int64_t ext = static_cast<std::int64_t>(v.lo) < 0 ? -1 : 0;
  if (v.hi != ext || v.mid != static_cast<std::uint64_t>(ext)) {
    status = 1;
    return 0;
  }
  status = 0;
  return static_cast<std::int64_t>(v.lo);
}

/// a * b + c: fused on the GPU and on CPUs built with FMA; elsewhere a separate multiply and
/// add (a software fma call would make the CPU dot product 4x slower). Both are within the
/// documented error bound of the fast dot product.
TALLY_HD double fma_(double a, double b, double c) {
#if defined(__CUDA_ARCH__) || defined(__FMA__)
  return __builtin_fma(a, b, c);
#else
  return a * b + c;
#endif
}

// ---- sum --------------------------------------------------------------------------------

template <class T> struct sum_reducer;

/// float32 sum: float64 accumulator (each float converts exactly), rounded once to float32.
template <> struct sum_reducer<float> {
  using acc_t = double;
  using result_t = float;
  static TALLY_HD acc_t identity() { return -0.0; }
  static TALLY_HD void accumulate(acc_t& a, float x) { a += static_cast<double>(x); }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { status = 0; return static_cast<float>(a); }
};

/// float64 sum: float64 accumulator.
template <> struct sum_reducer<double> {
  using acc_t = double;
  using result_t = double;
  static TALLY_HD acc_t identity() { return -0.0; }
  static TALLY_HD void accumulate(acc_t& a, double x) { a += x; }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { status = 0; return a; }
};

/// Integer sums: exact 128-bit accumulator (cannot wrap below 2^64 elements), checked
/// narrowing to int64 at the end.
template <class I> struct int_sum_reducer {
  using acc_t = i128;
  using result_t = std::int64_t;
  static TALLY_HD acc_t identity() { return 0; }
  static TALLY_HD void accumulate(acc_t& a, I x) { a += x; }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { return narrow_i64(a, status); }
};
/// The exact 128-bit integer sum itself, unnarrowed (what an integer mean divides by n): any
/// integer or bool element type, below 2^63 elements (|sum| < 2^127).
template <class I> struct int_total_reducer {
  using acc_t = std::conditional_t<std::is_unsigned_v<I> && !std::is_same_v<I, bool>, u128, i128>;
  using result_t = i128;
  static TALLY_HD acc_t identity() { return 0; }
  static TALLY_HD void accumulate(acc_t& a, I x) { a += static_cast<acc_t>(x); }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { status = 0; return static_cast<i128>(a); }
};
template <> struct sum_reducer<std::int32_t> : int_sum_reducer<std::int32_t> {};
template <> struct sum_reducer<std::int64_t> : int_sum_reducer<std::int64_t> {};

/// int32 sums of fewer than 2^32 elements: |sum| <= n * 2^31 < 2^63, so a plain int64
/// accumulator is exact at every step (cheaper than 128-bit on the GPU).
struct int32_sum_reducer_short {
  using acc_t = std::int64_t;
  using result_t = std::int64_t;
  static constexpr std::int64_t max_n = std::int64_t(1) << 32;
  static TALLY_HD acc_t identity() { return 0; }
  static TALLY_HD void accumulate(acc_t& a, std::int32_t x) { a += x; }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { status = 0; return a; }
};

/// int64 sums of fewer than 2^31 elements: each element is split into its signed high and
/// unsigned low 32-bit halves, summed in two int64 words (|high sum| <= n * 2^31 < 2^62,
/// low sum < n * 2^32 < 2^63): exact, and two 64-bit adds instead of a 128-bit one.
struct int64_sum_reducer_short {
  struct acc_t {
    std::int64_t hi, lo;
  };
  using result_t = std::int64_t;
  static constexpr std::int64_t max_n = std::int64_t(1) << 31;
  static TALLY_HD acc_t identity() { return {0, 0}; }
  static TALLY_HD void accumulate(acc_t& a, std::int64_t x) {
    a.hi += x >> 32;
    a.lo += static_cast<std::int64_t>(static_cast<std::uint64_t>(x) & 0xffffffffu);
  }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return {a.hi + b.hi, a.lo + b.lo}; }
  static TALLY_HD result_t finalize(acc_t a, int& status) {
    return narrow_i64(static_cast<i128>(a.hi) * (i128(1) << 32) + a.lo, status);
  }
};

// ---- dot --------------------------------------------------------------------------------

template <class T> struct dot_reducer;

/// float32 dot: products formed exactly in float64 (24+24 bits fit in 53), float64 sum.
template <> struct dot_reducer<float> {
  using acc_t = double;
  using result_t = float;
  static TALLY_HD acc_t identity() { return -0.0; }
  static TALLY_HD void accumulate(acc_t& a, float x, float y) {
    a += static_cast<double>(x) * static_cast<double>(y);
  }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { status = 0; return static_cast<float>(a); }
};

/// float64 dot: fused multiply-add into a float64 accumulator.
template <> struct dot_reducer<double> {
  using acc_t = double;
  using result_t = double;
  static TALLY_HD acc_t identity() { return -0.0; }
  static TALLY_HD void accumulate(acc_t& a, double x, double y) { a = fma_(x, y, a); }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { status = 0; return a; }
};

/// int32 dot: each product is exact in int64, the sum exact in 128 bits.
template <> struct dot_reducer<std::int32_t> {
  using acc_t = i128;
  using result_t = std::int64_t;
  static TALLY_HD acc_t identity() { return 0; }
  static TALLY_HD void accumulate(acc_t& a, std::int32_t x, std::int32_t y) {
    a += static_cast<std::int64_t>(x) * static_cast<std::int64_t>(y);
  }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { return narrow_i64(a, status); }
};

/// int64 dot: each product exact in 128 bits, the sum exact in 192 bits.
template <> struct dot_reducer<std::int64_t> {
  using acc_t = i192;
  using result_t = std::int64_t;
  static TALLY_HD acc_t identity() { return {}; }
  static TALLY_HD void accumulate(acc_t& a, std::int64_t x, std::int64_t y) {
    a = add(a, make_i192(static_cast<i128>(x) * static_cast<i128>(y)));
  }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return add(a, b); }
  static TALLY_HD result_t finalize(acc_t a, int& status) { return narrow_i64(a, status); }
};

/// A floating reducer whose finalize rounds to Out instead (float32 data, float64 result).
template <class Base, class Out> struct with_result : Base {
  using result_t = Out;
  static TALLY_HD Out finalize(typename Base::acc_t a, int& status) {
    status = 0;
    return static_cast<Out>(a);
  }
};

// ---- element-wise add -------------------------------------------------------------------

/// out = x + y in the element type; status = 1 when an integer add overflows.
template <class T> TALLY_HD T add_checked(T x, T y, int& status) {
  if constexpr (requires { x.byte; }) {  // bool's storage (ops::bool_in, ops/small.hpp): or, 0 or 1
    return T(static_cast<bool>(x) || static_cast<bool>(y) ? 1 : 0);
  } else if constexpr (is_small_elem_v<T>) {  // float16 ... bool: ops/elementwise_small.hpp
    return small_add<T>(x, y, status);
  } else if constexpr (sizeof(T) == 4 && T(1) / 2 == 0) {  // int32
    std::int64_t r = static_cast<std::int64_t>(x) + y;
    if (r > INT32_MAX || r < INT32_MIN) status = 1;
    return static_cast<T>(r);
  } else if constexpr (sizeof(T) == 8 && T(1) / 2 == 0) {  // int64
    std::uint64_t r = static_cast<std::uint64_t>(x) + static_cast<std::uint64_t>(y);
    T s = static_cast<T>(r);
    if (((x ^ s) & (y ^ s)) < 0) status = 1;
    return s;
  } else {
    return x + y;
  }
}

}  // namespace tally::ops
