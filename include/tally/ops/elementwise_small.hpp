// tally::ops: element-wise add, axpy (a*x + y) and scale (a*x) of the element types added
// after the first four (float16, bfloat16, int8, int16, uint8, uint16, uint32, uint64, bool),
// shared by the CPU and CUDA backends as small host/device functions. reducers.hpp's
// add_checked and elementwise.hpp's axpy_checked / scale_checked forward these types here.
//
// 16-bit floats: the exact result is formed in float64 and rounded ONCE to the 16-bit type
// (to nearest, ties to even; overflow to +-inf, underflow through the subnormals, as IEEE 754
// binary16 / bfloat16 arithmetic would give it). A product of two 16-bit floats is exact in
// float64 (at most 22 or 16 significant bits). A sum p + y is not always exact in float64
// (bfloat16 spans 2^-133..2^128), so it is formed by TwoSum (Knuth, TAOCP vol. 2, 4.2.2;
// Moller 1965) and rounded to odd at 53 bits; rounding the round-to-odd value to a format of
// at most 51 bits is the correct rounding of the exact value (Boldo, Melquiond, "Emulation of
// FMA and correctly rounded sums: proved algorithms using rounding to odd", IEEE Trans.
// Computers 57(4), 2008). NaN in gives a quiet NaN out; 0 * inf and inf - inf give NaN.
//
// Integers: the exact result in 128 bits (products and sums of 8-64-bit values fit), and
// status = 1 when it does not fit T (below 0 or above the maximum for the unsigned types);
// the returned value is then the exact result wrapped to T. bool: add is logical or (NumPy's
// numpy.add on bool arrays); axpy and scale of bool are refused by the dispatch layer.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "tally/types.hpp"

#if defined(__CUDACC__)
#define TALLY_EW_HD __host__ __device__ __forceinline__
#else
#define TALLY_EW_HD inline
#endif

namespace tally::ops {

/// Whether T is one of the element types added after the first four (public types; the
/// backends' storage types half_in / bhalf_in are not).
template <class T> inline constexpr bool is_small_elem_v =
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16> || std::is_same_v<T, std::int8_t> ||
    std::is_same_v<T, std::int16_t> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
    std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t> || std::is_same_v<T, bool>;

namespace ew {

/// The format of a 16-bit float: significand digits (implicit bit included), the smallest
/// normal exponent, and 2^(emax + 1) (the first power of two above the largest finite value).
template <class H> struct half_format;
template <> struct half_format<float16> {
  static constexpr int digits = 11, emin = -14;
  static constexpr double overflow = 65536.0;  // 2^16
};
template <> struct half_format<bfloat16> {
  static constexpr int digits = 8, emin = -126;
  static constexpr double overflow = 0x1p128;
};

/// The 16-bit float value of float f that is exactly representable in H (or NaN / inf).
template <class H> TALLY_EW_HD H to_half(float f) {
  if constexpr (std::is_same_v<H, float16>) return to_float16(f);
  else return to_bfloat16(f);
}
template <class H> TALLY_EW_HD double to_double(H h) { return static_cast<double>(to_float(h)); }

/// d rounded to nearest, ties to even, as H: correct for the exact value d, and for the
/// round-to-odd float64 value of an exact result (H has at most 11 < 53 - 2 digits). The
/// quantum q of d's binade in H (2^(emin - digits + 1) in the subnormals) divides d exactly
/// (a power of two), rint rounds d / q to an integer with ties to even (the default rounding
/// mode), and r * q is exactly an H value (or 2^(emax+1): overflow, +-inf).
template <class H> TALLY_EW_HD H round_half(double d) {
  using F = half_format<H>;
  if (!(d == d) || std::isinf(d)) return to_half<H>(static_cast<float>(d));  // NaN stays NaN, +-inf
  const double a = std::fabs(d);
  if (a == 0) return to_half<H>(static_cast<float>(d));  // +-0
  int e = std::ilogb(a);
  if (e < F::emin) e = F::emin;
  const double q = std::ldexp(1.0, e - (F::digits - 1));
  double r = std::rint(a / q) * q;
  if (r >= F::overflow) r = __builtin_bit_cast(double, 0x7ff0000000000000ull);  // +inf
  return to_half<H>(static_cast<float>(std::signbit(d) ? -r : r));  // exact
}

/// fl(a + b) rounded to odd (to the neighbour with an odd last bit when inexact): with TwoSum's
/// exact error e, an inexact sum s with an even last bit moves one ulp toward a + b.
/// Non-finite sums are returned as they are. (float64 arithmetic without reassociation.)
TALLY_EW_HD double add_round_odd(double a, double b) {
  const double s = a + b;
  if (std::isinf(s) || s != s) return s;
  const double bb = s - a;
  const double err = (a - (s - bb)) + (b - bb);
  if (err == 0) return s;
  std::uint64_t bits = __builtin_bit_cast(std::uint64_t, s);
  if ((bits & 1u) == 0) bits += ((err > 0) == (s > 0)) ? 1 : static_cast<std::uint64_t>(-1);  // (sign-magnitude)
  return __builtin_bit_cast(double, bits);
}

/// The exact integer result r checked against T's range: status = 1 when it does not fit.
template <class T> TALLY_EW_HD T narrow(__int128 r, int& status) {
  constexpr int bits = static_cast<int>(sizeof(T) * 8);
  constexpr __int128 lo = std::is_signed_v<T> ? -(static_cast<__int128>(1) << (bits - 1)) : 0;
  constexpr __int128 hi = std::is_signed_v<T> ? (static_cast<__int128>(1) << (bits - 1)) - 1
                                               : (static_cast<__int128>(1) << bits) - 1;
  if (r < lo || r > hi) status = 1;
  return static_cast<T>(static_cast<unsigned __int128>(r));  // wrapped (two's complement)
}

/// a*x + y for uint64, exact in 128 bits and checked.
TALLY_EW_HD std::uint64_t u64_axpy(std::uint64_t a, std::uint64_t x, std::uint64_t y, int& status) {
  unsigned __int128 p = static_cast<unsigned __int128>(a) * x;  // < 2^128
  if (p >> 64) status = 1;
  std::uint64_t lo = static_cast<std::uint64_t>(p), r = lo + y;
  if (r < lo) status = 1;
  return r;
}

}  // namespace ew

/// x + y of a new element type: 16-bit floats rounded once; integers checked; bool: x or y.
template <class T> TALLY_EW_HD T small_add(T x, T y, int& status) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return ew::round_half<T>(ew::add_round_odd(ew::to_double(x), ew::to_double(y)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return x || y;
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    return ew::u64_axpy(1, x, y, status);
  } else {
    return ew::narrow<T>(static_cast<__int128>(x) + static_cast<__int128>(y), status);
  }
}

/// a*x + y of a new element type other than bool: 16-bit floats rounded once from the exact
/// value; integers exact and checked.
template <class T> TALLY_EW_HD T small_axpy(T a, T x, T y, int& status) {
  static_assert(!std::is_same_v<T, bool>, "tally: axpy of bool is refused (NumPy would change the type)");
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    const double p = ew::to_double(a) * ew::to_double(x);  // exact: at most 22 significant bits
    return ew::round_half<T>(ew::add_round_odd(p, ew::to_double(y)));
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    return ew::u64_axpy(a, x, y, status);
  } else {  // |a x| < 2^64, so the 128-bit result is exact
    return ew::narrow<T>(static_cast<__int128>(a) * static_cast<__int128>(x) + static_cast<__int128>(y), status);
  }
}

/// a*x of a new element type other than bool: 16-bit floats rounded once; integers checked.
template <class T> TALLY_EW_HD T small_scale(T a, T x, int& status) {
  static_assert(!std::is_same_v<T, bool>, "tally: scale of bool is refused (NumPy would change the type)");
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return ew::round_half<T>(ew::to_double(a) * ew::to_double(x));  // the product is exact
  } else {
    return small_axpy<T>(a, x, T(0), status);
  }
}

}  // namespace tally::ops
