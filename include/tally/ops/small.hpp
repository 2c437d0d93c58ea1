// tally::ops: the element types added after the first four (float16, bfloat16, int8, int16,
// uint8, uint16, uint32, uint64, bool), shared by the CPU and CUDA backends as small
// host/device pieces: the reducers of the new integer types, the kernel-side storage types of
// the 16-bit floats, and the exact fixed-point accumulation of float16. The accumulator and
// result of every operation and type are tabulated in docs/types.md.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tally/ops/exact.hpp"
#include "tally/ops/reducers.hpp"
#include "tally/types.hpp"

namespace tally::ops {

// ---- 16-bit floats as the backends read them ----------------------------------------------

/// A float16 as the kernels and CPU loops read it: the same two bytes as tally::float16 (and
/// CUDA's __half), with an implicit, exact conversion to float. So the float32 reducers
/// (sum_reducer<float>, dot_reducer<float>, extreme_reducer<float, ...>) and the float32
/// exact accumulators take float16 elements unchanged: every float16 is a float32, and a
/// product of two is exact in float64. Never accumulated in 16 bits.
struct half_in {
  std::uint16_t bits;
  half_in() = default;
  TALLY_HD constexpr half_in(int) : bits(0) {}  // T(0): +0
  TALLY_HD operator float() const { return to_float(float16{bits}); }
};
/// The same for bfloat16 (__nv_bfloat16).
struct bhalf_in {
  std::uint16_t bits;
  bhalf_in() = default;
  TALLY_HD constexpr bhalf_in(int) : bits(0) {}
  TALLY_HD operator float() const { return to_float(bfloat16{bits}); }
};
static_assert(sizeof(half_in) == 2 && sizeof(bhalf_in) == 2 && std::is_trivially_copyable_v<half_in>);

/// A bool as the backends read it: its byte, any nonzero value true (NumPy's rule, and the
/// shape layer's: shapes::widen_bool). A C++ bool holding a byte other than 0 or 1 is undefined
/// behaviour, and read as bool such bytes were added as they were (a sum of the bytes {255, 0,
/// 255, 0} gave 510); the type-erased API and NumPy views (.view(bool), frombuffer) hand them in.
struct bool_in {
  std::uint8_t byte;
  bool_in() = default;
  TALLY_HD constexpr bool_in(int v) : byte(v != 0 ? 1 : 0) {}  // T(0): false
  TALLY_HD constexpr operator bool() const { return byte != 0; }
};
static_assert(sizeof(bool_in) == 1 && std::is_trivially_copyable_v<bool_in>);

/// The type a backend reads elements of public type T as: half_in / bhalf_in for the 16-bit
/// floats (the same bytes), bool_in for bool, T itself otherwise.
template <class T> using storage_t = std::conditional_t<
    std::is_same_v<T, float16>, half_in,
    std::conditional_t<std::is_same_v<T, bfloat16>, bhalf_in, std::conditional_t<std::is_same_v<T, bool>, bool_in, T>>>;
template <class T> inline constexpr bool is_half_v = std::is_same_v<T, half_in> || std::is_same_v<T, bhalf_in>;
/// The type a storage type's elements are compared and reduced as (the reducers' element type):
/// float for the 16-bit floats, bool for bool_in, S itself otherwise.
template <class S> using reduced_t =
    std::conditional_t<is_half_v<S>, float, std::conditional_t<std::is_same_v<S, bool_in>, bool, S>>;

// ---- integer sums and dots ----------------------------------------------------------------

template <> struct sum_reducer<std::int8_t> : int_sum_reducer<std::int8_t> {};
template <> struct sum_reducer<std::int16_t> : int_sum_reducer<std::int16_t> {};
/// bool sums count the true elements (exactly, int64 result).
template <> struct sum_reducer<bool> : int_sum_reducer<bool> {};

/// Narrow an exact nonnegative 128-bit integer to uint64: status = 1 when it does not fit.
TALLY_HD std::uint64_t narrow_u64(u128 v, int& status) {
  status = v >> 64 ? 1 : 0;
  return status ? 0 : static_cast<std::uint64_t>(v);
}
/// The same for a 192-bit value holding a nonnegative integer.
TALLY_HD std::uint64_t narrow_u64(i192 v, int& status) {
  status = (v.hi != 0 || v.mid != 0) ? 1 : 0;
  return status ? 0 : v.lo;
}

/// Unsigned sums: exact 128-bit accumulator (n * 2^64 < 2^128), checked narrowing to uint64.
template <class U> struct uint_sum_reducer {
  using acc_t = u128;
  using result_t = std::uint64_t;
  static TALLY_HD acc_t identity() { return 0; }
  static TALLY_HD void accumulate(acc_t& a, U x) { a += x; }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { return narrow_u64(a, status); }
};
template <> struct sum_reducer<std::uint8_t> : uint_sum_reducer<std::uint8_t> {};
template <> struct sum_reducer<std::uint16_t> : uint_sum_reducer<std::uint16_t> {};
template <> struct sum_reducer<std::uint32_t> : uint_sum_reducer<std::uint32_t> {};
template <> struct sum_reducer<std::uint64_t> : uint_sum_reducer<std::uint64_t> {};

/// Sums of 8-, 16- and 32-bit integers and bools with fewer than max_n elements in one 64-bit
/// word (int64 for signed and bool, uint64 for unsigned): |sum| < max_n * 2^bits <= 2^63
/// (2^64 unsigned), so every step is exact. Used by the GPU where n allows it.
template <class I> struct small_sum_reducer_short {
  static constexpr bool is_u = std::is_unsigned_v<I> && !std::is_same_v<I, bool>;
  using acc_t = std::conditional_t<is_u, std::uint64_t, std::int64_t>;
  using result_t = acc_t;
  static constexpr int bits = std::is_same_v<I, bool> ? 1 : int(sizeof(I) * 8);
  static constexpr std::int64_t max_n = std::int64_t(1) << (bits >= 32 ? 31 : 62 - bits);
  static TALLY_HD acc_t identity() { return 0; }
  static TALLY_HD void accumulate(acc_t& a, I x) { a += static_cast<acc_t>(x); }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { status = 0; return a; }
};

/// Signed 8/16-bit and bool dots: each product exact in int64, the sum exact in 128 bits.
template <class I> struct small_int_dot_reducer {
  using acc_t = i128;
  using result_t = std::int64_t;
  static TALLY_HD acc_t identity() { return 0; }
  static TALLY_HD void accumulate(acc_t& a, I x, I y) { a += static_cast<std::int64_t>(x) * static_cast<std::int64_t>(y); }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { return narrow_i64(a, status); }
};
template <> struct dot_reducer<std::int8_t> : small_int_dot_reducer<std::int8_t> {};
template <> struct dot_reducer<std::int16_t> : small_int_dot_reducer<std::int16_t> {};
template <> struct dot_reducer<bool> : small_int_dot_reducer<bool> {};

/// Unsigned 8/16/32-bit dots: each product exact in uint64, the sum exact in 128 bits.
template <class U> struct small_uint_dot_reducer {
  using acc_t = u128;
  using result_t = std::uint64_t;
  static TALLY_HD acc_t identity() { return 0; }
  static TALLY_HD void accumulate(acc_t& a, U x, U y) { a += static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y); }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { return narrow_u64(a, status); }
};
template <> struct dot_reducer<std::uint8_t> : small_uint_dot_reducer<std::uint8_t> {};
template <> struct dot_reducer<std::uint16_t> : small_uint_dot_reducer<std::uint16_t> {};
template <> struct dot_reducer<std::uint32_t> : small_uint_dot_reducer<std::uint32_t> {};

/// uint64 dot: each product exact in 128 bits, the sum exact in 192 bits (zero-extended).
template <> struct dot_reducer<std::uint64_t> {
  using acc_t = i192;
  using result_t = std::uint64_t;
  static TALLY_HD acc_t identity() { return {}; }
  static TALLY_HD void accumulate(acc_t& a, std::uint64_t x, std::uint64_t y) {
    u128 p = static_cast<u128>(x) * y;
    i192 t;
    t.lo = static_cast<std::uint64_t>(p);
    t.mid = static_cast<std::uint64_t>(p >> 64);
    t.hi = 0;
    a = add(a, t);
  }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return add(a, b); }
  static TALLY_HD result_t finalize(acc_t a, int& status) { return narrow_u64(a, status); }
};

// ---- float16: exact sums in fixed point ---------------------------------------------------
//
// Every finite float16 is an integer multiple of 2^-24 below 2^16 in magnitude: at most 2^40
// units. So an int64 holds the exact sum of any 2^23 of them, and a 128-bit integer that of
// any 2^87. The exact sum is then rounded once (exact::round_span) or divided and rounded
// (exact::divide_round, the mean). Special values go to the exact-mode flags.

/// Exponent of the unit of the float16 fixed-point sums: values are counts of 2^-24.
inline constexpr int f16_unit_exp = -24;
/// Elements whose fixed-point values an int64 is guaranteed to sum exactly.
inline constexpr std::int64_t f16_int64_terms = std::int64_t(1) << 23;

/// The float16 with bits b as a signed count of 2^-24 (0 for infinities and NaN), and its
/// special-value and sign-of-zero flags or-ed into `flags` (exact::seen_*).
TALLY_HD std::int64_t f16_units(std::uint16_t b, unsigned& flags) {
  unsigned e = (b >> 10) & 0x1fu, m = b & 0x3ffu;
  if (b != 0x8000u) flags |= exact::seen_not_neg_zero;
  if (e == 0x1fu) {
    flags |= m ? exact::seen_nan : ((b >> 15) ? exact::seen_neg_inf : exact::seen_pos_inf);
    return 0;
  }
  std::int64_t v = e ? static_cast<std::int64_t>(m | 0x400u) << (e - 1) : static_cast<std::int64_t>(m);
  return (b >> 15) ? -v : v;
}

/// An exact float16 sum: the 128-bit count of 2^-24 and the flags.
struct f16_fixed {
  i128 units;
  unsigned flags;
};

/// The 32-bit digits (two's complement across five of them, digit i weighing 2^(32 i)) of s.
TALLY_HD void digits_of(i128 s, std::int64_t* d) {
  auto u = static_cast<u128>(s);
  for (int i = 0; i < 4; ++i) d[i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(u >> (32 * i)) & 0xffffffffu);
  d[4] = s < 0 ? -1 : 0;
}

/// The exact float16 sum a, correctly rounded to Out (float or double); IEEE specials by flags.
template <class Out> TALLY_HD Out f16_round(f16_fixed a) {
  std::int64_t d[5];
  digits_of(a.units, d);
  return exact::round_span<Out>(d, 5, f16_unit_exp, a.flags);
}

/// Reducer of exact float16 sums (element: half_in): 128-bit fixed point (the GPU kernel of
/// src/cuda/small.cuh folds each thread's elements in int64 first), rounded once to Out.
template <class Out> struct f16_exact_sum_reducer {
  using acc_t = f16_fixed;
  using result_t = Out;
  static TALLY_HD acc_t identity() { return {0, 0u}; }
  static TALLY_HD void accumulate(acc_t& a, half_in x) { a.units += f16_units(x.bits, a.flags); }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return {a.units + b.units, a.flags | b.flags}; }
  static TALLY_HD result_t finalize(acc_t a, int& status) {
    status = 0;
    return f16_round<Out>(a);
  }
};

}  // namespace tally::ops
