// tally::ops::exact: exact summation, shared by the CPU and CUDA backends.
//
// Every exact reduction ends in a long fixed-point accumulator (Kulisch's superaccumulator):
// an array of D signed 64-bit digits, digit i weighing 2^(32 i + B), wide enough for every
// value the inputs can produce. Integer additions are exact and associative, so accumulators
// merge exactly in any order (the mergeable state of multi-GPU and MPI reductions). In front
// of it, cheaper exact forms take the inputs (docs/exact.md):
//  - anchored levels (`extract`, after Demmel and Nguyen, IEEE Trans. Computers 64(7), 2015):
//    the float64 paths of both backends and the CPU's main path;
//  - float64 exponent bins for float32 inputs (Demmel and Hida, SIAM J. Sci. Comput. 25(4),
//    2003): the CUDA float32 kernels (src/cuda/exact.cuh);
//  - expansions of kTerms doubles updated with TwoSum (Knuth; Ogita, Rump and Oishi,
//    "Accurate sum and dot product", SIAM J. Sci. Comput. 26(6), 2005), after ExBLAS
//    (Collange, Defour, Graillat, Iakymchuk, Parallel Computing 49, 2015): the CPU's general
//    path for chunks holding special or extreme values.
//
// The final value is the superaccumulator rounded once, to nearest with ties to even, to
// the output type (float or double): the correctly rounded exact result, identical on every
// backend and launch shape. Products in dot are exact: float32 products are exact in
// float64; float64 products use TwoProduct with FMA (p + e = x*y exactly) when no overflow or
// underflow can occur, and are deposited as exact 106-bit integer products otherwise.
// Special values: NaN, or +inf with -inf, give NaN; one kind of infinity gives it; a finite
// exact sum whose rounding overflows gives an infinity of its sign; an exactly zero sum is
// -0.0 only when every term was -0.0 (IEEE), a tiny nonzero sum rounds to a zero of its sign.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tally/ops/reducers.hpp"

namespace tally::ops::exact {

// ---- bit access -------------------------------------------------------------------------

TALLY_HD std::uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}
TALLY_HD std::uint32_t bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__float_as_uint(x));
#else
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}
TALLY_HD double double_of(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
}
TALLY_HD float float_of(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
}

/// Number of leading zero bits of a nonzero 64-bit word.
TALLY_HD int clz64(std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(v));
#else
  return __builtin_clzll(v);
#endif
}

// ---- special values ---------------------------------------------------------------------

/// Flags a thread gathers alongside its sums; merged with bitwise OR.
enum flag : unsigned {
  seen_nan = 1u,          ///< a NaN term (NaN input, or 0 * inf in dot)
  seen_pos_inf = 2u,      ///< a +inf term
  seen_neg_inf = 4u,      ///< a -inf term
  seen_not_neg_zero = 8u  ///< a term that is not -0.0 (so an exact zero sum is +0.0)
};

// ---- the superaccumulator ---------------------------------------------------------------

/// Layout of a superaccumulator: D digits, digit i weighs 2^(32 i + B). B is at or below the
/// lowest bit any deposited value can have (as m * 2^e with a 53-bit m, or 106-bit for
/// products), D leaves room for 2^64 terms of the largest magnitude plus carries.
template <int B, int D> struct layout {
  static constexpr int base = B;
  static constexpr int digits = D;
};

/// float32 sums: terms are multiples of 2^-149 below 2^128 (as doubles: lsb >= 2^-201).
using f32_sum_layout = layout<-224, 18>;
/// float32 dot products: products are exact doubles, multiples of 2^-298, below 2^256.
using f32_dot_layout = layout<-352, 26>;
/// float64 sums: multiples of 2^-1074, below 2^1024.
using f64_sum_layout = layout<-1088, 73>;
/// float64 dot products: exact products are multiples of 2^-2148, below 2^2048.
using f64_dot_layout = layout<-2176, 139>;

/// Adds magnitude M * 2^e (M < 2^106) with sign `neg` to the digits through add(i, v):
/// at most five digits, each receiving |v| < 2^32. Requires e >= L::base.
template <class L, class Add> TALLY_HD void deposit(u128 M, int e, bool neg, Add&& add) {
  int p = e - L::base;
  int i = p >> 5, s = p & 31;
  u128 lo = M << s;
  std::uint64_t hi = s ? static_cast<std::uint64_t>(M >> (128 - s)) : 0;
TALLY_UNROLL
  for (int k = 0; k < 4; ++k) {
    auto c = static_cast<std::int64_t>(static_cast<std::uint64_t>(lo >> (32 * k)) & 0xffffffffu);
    if (c) add(i + k, neg ? -c : c);
  }
  if (hi) add(i + 4, neg ? -static_cast<std::int64_t>(hi) : static_cast<std::int64_t>(hi));
}

/// Deposits a finite double exactly.
template <class L, class Add> TALLY_HD void deposit(double x, Add&& add) {
  std::uint64_t b = bits_of(x);
  int be = static_cast<int>((b >> 52) & 0x7ff);
  std::uint64_t m = b & ((std::uint64_t(1) << 52) - 1);
  if (be == 0 && m == 0) return;
  int e;
  if (be == 0) e = -1074;
  else { m |= std::uint64_t(1) << 52; e = be - 1075; }
  deposit<L>(static_cast<u128>(m), e, (b >> 63) != 0, add);
}

/// Deposits the exact product x * y of two finite doubles as a 106-bit integer product.
template <class L, class Add> TALLY_HD void deposit_product(double x, double y, Add&& add) {
  std::uint64_t bx = bits_of(x), by = bits_of(y);
  auto split = [](std::uint64_t b, std::uint64_t& m, int& e) {
    int be = static_cast<int>((b >> 52) & 0x7ff);
    m = b & ((std::uint64_t(1) << 52) - 1);
    if (be == 0) e = -1074;
    else { m |= std::uint64_t(1) << 52; e = be - 1075; }
  };
  std::uint64_t mx, my;
  int ex, ey;
  split(bx, mx, ex);
  split(by, my, ey);
  if (mx == 0 || my == 0) return;
  deposit<L>(static_cast<u128>(mx) * my, ex + ey, ((bx ^ by) >> 63) != 0, add);
}

/// Carry-normalises the D digits at d in place: afterwards digits 0..D-2 are in [0, 2^32)
/// and the top digit carries the sign (the value is unchanged).
TALLY_HD void normalize(std::int64_t* d, int D) {
  if (D <= 0) return;
  std::int64_t c = 0;
  TALLY_NO_UNROLL
  for (int i = 0; i + 1 < D; ++i) {
    std::int64_t v = d[i] + c;
    c = v >> 32;  // arithmetic: floor division by 2^32
    d[i] = v - c * (std::int64_t(1) << 32);
  }
  d[D - 1] += c;
}
template <int D> TALLY_HD void normalize(std::int64_t* d) { normalize(d, D); }

/// Rounds the value of the D digits at d, digit i weighing 2^(32 i + base) (normalised or
/// not; overwritten: normalised magnitude), to nearest, ties to even, as Out (double: 53 bits,
/// exponents [-1022, 1023]; float: 24 bits, [-126, 127]; subnormals included), and applies
/// the special-value flags. The top digit must have room for the sign and the carries.
template <class Out> TALLY_HD Out round_span(std::int64_t* d, int D, int base, unsigned flags) {
  constexpr int P = sizeof(Out) == 8 ? 53 : 24;
  constexpr int EMIN = sizeof(Out) == 8 ? -1022 : -126;
  constexpr int EMAX = sizeof(Out) == 8 ? 1023 : 127;
  auto make = [](bool neg, std::uint64_t mant, int lsb_exp) -> Out {
    // mant * 2^lsb_exp, exactly representable in Out by construction (or 0).
    if constexpr (sizeof(Out) == 8) {
      if (mant == 0) return double_of(neg ? (std::uint64_t(1) << 63) : 0);
      int lead = 63 - clz64(mant);  // leading bit position in mant
      int E = lead + lsb_exp;       // unbiased exponent
      std::uint64_t b;
      if (E < EMIN) {  // subnormal: lsb_exp == -1074 by construction
        b = mant;
      } else {
        b = (static_cast<std::uint64_t>(E + 1023) << 52) | ((mant << (52 - lead)) & ((std::uint64_t(1) << 52) - 1));
      }
      return double_of(b | (neg ? std::uint64_t(1) << 63 : 0));
    } else {
      if (mant == 0) return float_of(neg ? 0x80000000u : 0u);
      int lead = 63 - clz64(mant);
      int E = lead + lsb_exp;
      std::uint32_t b;
      if (E < EMIN) {
        b = static_cast<std::uint32_t>(mant);
      } else {
        b = (static_cast<std::uint32_t>(E + 127) << 23) | (static_cast<std::uint32_t>(mant << (23 - lead)) & 0x7fffffu);
      }
      return float_of(b | (neg ? 0x80000000u : 0u));
    }
  };
  auto inf = [](bool neg) -> Out {
    if constexpr (sizeof(Out) == 8) return double_of((std::uint64_t(0x7ff) << 52) | (neg ? std::uint64_t(1) << 63 : 0));
    else return float_of(0x7f800000u | (neg ? 0x80000000u : 0u));
  };
  if ((flags & seen_nan) || ((flags & seen_pos_inf) && (flags & seen_neg_inf))) {
    if constexpr (sizeof(Out) == 8) return double_of(std::uint64_t(0x7ff8) << 48);
    else return float_of(0x7fc00000u);
  }
  if (flags & seen_pos_inf) return inf(false);
  if (flags & seen_neg_inf) return inf(true);

  if (D <= 0) return make((flags & seen_not_neg_zero) == 0, 0, 0);  // no digits: exact zero
  normalize(d, D);
  bool neg = d[D - 1] < 0;
  if (neg) {  // magnitude: two's complement negation across the digits
    std::int64_t borrow = 0;
    TALLY_NO_UNROLL
    for (int i = 0; i < D; ++i) {
      std::int64_t v = -d[i] - borrow;
      borrow = 0;
      if (i + 1 < D && v < 0) { v += std::int64_t(1) << 32; borrow = 1; }
      d[i] = v;
    }
  }
  int h = D - 1;
  while (h >= 0 && d[h] == 0) --h;
  if (h < 0) return make((flags & seen_not_neg_zero) == 0, 0, 0);  // exact zero
  // The top digit may exceed 32 bits only if D were too small; it is < 2^32 here.
  auto digit = [&](int i) -> std::uint64_t { return (i >= 0 && i < D) ? static_cast<std::uint64_t>(d[i]) : 0; };
  int lead = 63 - clz64(digit(h));
  int top = 32 * h + lead + base;  // exponent of the leading bit
  if (top > EMAX) return inf(neg);
  int lsb = (top < EMIN ? EMIN : top) - (P - 1);  // exponent of the result's last bit
  // The 128-bit window of digits h..h-3 holds the result's bits and the rounding bit: the
  // leading bit is at least 96 bits above the window's lowest, and lsb - 1 >= top - 53.
  const int wbase = 32 * (h - 3) + base;  // exponent of the window's bit 0
  const u128 win = (static_cast<u128>(digit(h)) << 96) | (static_cast<u128>(digit(h - 1)) << 64) |
                   (static_cast<u128>(digit(h - 2)) << 32) | static_cast<u128>(digit(h - 3));
  const int s = (lsb - 1) - wbase;  // >= 0
  const u128 bits = s >= 128 ? u128(0) : win >> s;
  bool sticky = s >= 128 ? win != 0 : (s > 0 && (win & ((u128(1) << s) - 1)) != 0);
  TALLY_NO_UNROLL
  for (int j = 0; j < h - 3; ++j) sticky |= d[j] != 0;
  std::uint64_t half = static_cast<std::uint64_t>(bits) & 1u;
  std::uint64_t mant = static_cast<std::uint64_t>(bits >> 1);
  if (half && (sticky || (mant & 1))) {
    ++mant;
    if (mant >> P) {  // carried into a new leading bit
      mant >>= 1;
      ++lsb;
      if (lsb + (P - 1) > EMAX) return inf(neg);
    }
  }
  return make(neg, mant, lsb);
}

/// The exact value of the D digits at d (digit i weighing 2^(32 i + base)) divided by n > 0,
/// correctly rounded to Out (the mean of n inputs whose exact sum the digits hold), with the
/// special-value flags applied as round_span does. Long division by n over 32-bit digits
/// (every partial remainder < n < 2^63, so each step fits 128 bits), carried on below the
/// digits down to 2^-1100, under the smallest subnormal's half ulp; a nonzero remainder after
/// that becomes a sticky bit (a digit of 1 further down), so one rounding of the quotient is
/// the correct rounding of the exact quotient. d is overwritten.
template <class Out> TALLY_HD Out divide_round(std::int64_t* d, int D, int base, unsigned flags, std::uint64_t n) {
  constexpr int kMaxDigits = 160 + 64;
  if ((flags & (seen_nan | seen_pos_inf | seen_neg_inf)) || D <= 0) return round_span<Out>(d, 0, base, flags);
  normalize(d, D);
  bool neg = d[D - 1] < 0;
  if (neg) {  // magnitude
    std::int64_t borrow = 0;
    for (int i = 0; i < D; ++i) {
      std::int64_t v = -d[i] - borrow;
      borrow = 0;
      if (i + 1 < D && v < 0) { v += std::int64_t(1) << 32; borrow = 1; }
      d[i] = v;
    }
  }
  // Quotient digits q[F + i] for d[i], F fraction digits below them, one sticky digit below.
  int F = base > -1100 ? (base + 1100 + 31) / 32 : 0;
  const int Q = 1 + F + D;
  std::int64_t q[kMaxDigits];
  if (Q > kMaxDigits) return round_span<Out>(d, 0, base, flags | seen_nan);  // (no layout is this wide)
  std::uint64_t rem = 0;
  for (int i = Q - 1; i >= 1; --i) {
    std::uint64_t digit = i - 1 - F >= 0 ? static_cast<std::uint64_t>(d[i - 1 - F]) : 0;
    u128 cur = (static_cast<u128>(rem) << 32) | digit;
    q[i] = static_cast<std::int64_t>(cur / n);
    rem = static_cast<std::uint64_t>(cur % n);
  }
  q[0] = rem != 0;
  if (neg)
    for (int i = 0; i < Q; ++i) q[i] = -q[i];
  // An exact zero quotient keeps the sign rule of the sum (flags); the top digit has room.
  return round_span<Out>(q, Q, base - 32 * (F + 1), flags);
}

/// The exact integer sum s of n > 0 integers divided by n, correctly rounded to Out (an
/// integer mean): s's 32-bit digits through divide_round.
template <class Out> TALLY_HD Out divide_round_int(i128 s, std::uint64_t n) {
  std::int64_t d[5];  // 32-bit digits of s (two's complement across them), weight 2^(32 i)
  auto u = static_cast<u128>(s);
  for (int i = 0; i < 4; ++i) d[i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(u >> (32 * i)) & 0xffffffffu);
  d[4] = s < 0 ? -1 : 0;
  return divide_round<Out>(d, 5, 0, seen_not_neg_zero, n);
}

/// The square root of the exact value of the D digits at d (digit i weighing 2^(32 i + base),
/// base even; the value a sum of squares, so not negative), correctly rounded to Out, with
/// the special-value flags applied (NaN stays NaN, +inf gives +inf). With I the digits'
/// magnitude and N = floor(I / 4^j) (or I * 4^k) scaled to 114-117 bits, R = isqrt(N) holds
/// the top 57 or more bits of sqrt(I) exactly (floor(sqrt(I)) lies in [R 2^j, (R + 1) 2^j));
/// the rest only decides a sticky bit (zero iff R^2 == N and no bit of I was dropped), so one
/// rounding of R with that sticky bit is the correctly rounded root. d is overwritten.
template <class Out> TALLY_HD Out sqrt_round(std::int64_t* d, int D, int base, unsigned flags) {
  if ((flags & (seen_nan | seen_pos_inf | seen_neg_inf)) || D <= 0) return round_span<Out>(d, 0, base, flags);
  normalize(d, D);
  if (d[D - 1] < 0) return round_span<Out>(d, 0, base, flags | seen_nan);  // (cannot happen: a sum of squares)
  int h = D - 1;
  while (h >= 0 && d[h] == 0) --h;
  if (h < 0) return round_span<Out>(d, 0, base, flags);  // exact zero: +0 (or -0 by the flags)
  auto digit = [&](int i) -> std::uint64_t { return (i >= 0 && i < D) ? static_cast<std::uint64_t>(d[i]) : 0; };
  const int L = 32 * h + (64 - clz64(digit(h)));  // bit length of I
  // Bits [lo, lo + 128) of I (lo may be negative: zeros below bit 0).
  auto window = [&](int lo) -> u128 {
    u128 w = 0;
    for (int b = 0; b < 128; b += 32) {
      int p = lo + b;  // bit of I at the bottom of this 32-bit chunk of w
      std::uint64_t chunk;
      if (p >= 0) {
        int i = p >> 5, sh = p & 31;
        chunk = (digit(i) >> sh) | (sh ? (digit(i + 1) << (32 - sh)) : 0);
      } else {
        int q = -p;  // chunk covers I's bits [p, p + 32): only the upper 32 - q exist
        chunk = q >= 32 ? 0 : (digit(0) << q);
      }
      w |= static_cast<u128>(chunk & 0xffffffffu) << b;
    }
    return w;
  };
  int shift2 = L > 116 ? ((L - 115) & ~1) : -(((116 - L) + 1) & ~1);  // even: N = I / 2^shift2
  u128 N = window(shift2);
  bool dropped = false;
  if (shift2 > 0) {
    int full = shift2 >> 5;
    for (int i = 0; i < full && i < D; ++i) dropped |= d[i] != 0;
    int rem = shift2 & 31;
    if (rem) dropped |= (digit(full) & ((std::uint64_t(1) << rem) - 1)) != 0;
  }
  // R = isqrt(N): a floating estimate, then exact integer corrections (a long double estimate
  // is within 1 of it on x86 hosts; in device code, where long double is double, within ~2^6).
#if defined(__CUDA_ARCH__)
  double est = sqrt(static_cast<double>(N));
#else
  long double est = sqrtl(static_cast<long double>(N));
#endif
  u128 R = static_cast<u128>(est);
  while (R * R > N) --R;
  while ((R + 1) * (R + 1) <= N) ++R;
  bool exact = !dropped && R * R == N;
  // Value: R * 2^(base + shift2) / 2, i.e. R * 2^(base / 2 + shift2 / 2), plus a sticky bit.
  std::int64_t q[6];
  q[0] = exact ? 0 : 1;
  for (int i = 0; i < 4; ++i) q[1 + i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(R >> (32 * i)) & 0xffffffffu);
  q[5] = 0;
  return round_span<Out>(q, 6, base / 2 + shift2 / 2 - 32, flags);
}

/// round_span over a whole superaccumulator of layout L.
template <class L, class Out> TALLY_HD Out round_in_place(std::int64_t* d, unsigned flags) {
  return round_span<Out>(d, L::digits, L::base, flags);
}

/// round_in_place on a copy: src is left as it is.
template <class L, class Out> TALLY_HD Out round_to(const std::int64_t* src, unsigned flags) {
  std::int64_t d[L::digits];
  for (int i = 0; i < L::digits; ++i) d[i] = src[i];
  return round_in_place<L, Out>(d, flags);
}

// ---- per-thread expansions ----------------------------------------------------------------

/// A correctly rounded fused multiply-add on both sides, whatever the build flags: the GPU's
/// FMA, and on the host std::fma (glibc selects the FMA instruction at run time where the CPU
/// has it). TwoProduct needs it exact: x*y - fl(x*y) computed in one rounding.
TALLY_HD double exact_fma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// Error-free transformation: s + e == a + b exactly, s = fl(a + b) (Knuth's TwoSum; 6 ops,
/// no branch, valid for any finite a, b whose sum does not overflow).
TALLY_HD void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

/// Terms of a thread's expansion. Four doubles hold 212 bits: data spanning 2^-60..2^60
/// (120 exponents plus 53-bit mantissas) or the low parts of float64 products stay in
/// registers, and flushes to the superaccumulator are rare.
inline constexpr int kTerms = 4;

/// A thread's expansion (value: the exact sum of a[0..kTerms)) and special-value flags.
struct expansion {
  double a[kTerms] = {};
  unsigned flags = 0;
};

/// Adds finite t exactly, starting at term `level`: each TwoSum leaves the rounding error for
/// the next term and stops as soon as it is zero; an error left after the last term goes to
/// flush(double). Requires |t| < 2^1000 and |a[0]| < 2^1011, so nothing overflows.
template <class Flush> TALLY_HD void add(expansion& f, double t, Flush&& flush, int level = 0) {
  TALLY_UNROLL
  for (int i = 0; i < kTerms; ++i) {
    if (i < level) continue;
    double s, e;
    two_sum(f.a[i], t, s, e);
    f.a[i] = s;
    t = e;
    if (t == 0.0) return;
  }
  flush(t);
}

/// Deposits every term of the expansion through flush and clears it.
template <class Flush> TALLY_HD void drain(expansion& f, Flush&& flush) {
  TALLY_UNROLL
  for (int i = 0; i < kTerms; ++i) {
    if (f.a[i] != 0.0) flush(f.a[i]);
    f.a[i] = 0.0;
  }
}

/// Magnitudes at or above 2^1000 bypass the expansion (they are deposited directly), which
/// keeps every TwoSum clear of overflow; the expansion's a[0] is flushed when it reaches 2^1010.
inline constexpr int big_biased_exponent = 1023 + 1000;

/// float32 term: NaN and infinities set flags; anything else goes to the expansion.
template <class Flush> TALLY_HD void add_term(expansion& f, float x, Flush&& flush) {
  std::uint32_t b = bits_of(x);
  if (b != 0x80000000u) f.flags |= seen_not_neg_zero;
  if ((b & 0x7f800000u) == 0x7f800000u) {
    f.flags |= (b & 0x7fffffu) ? seen_nan : ((b >> 31) ? seen_neg_inf : seen_pos_inf);
    return;
  }
  add(f, static_cast<double>(x), flush);
}

/// float64 term; `deposit_big(x)` takes |x| >= 2^1000 exactly.
template <class Flush> TALLY_HD void add_term(expansion& f, double x, Flush&& flush) {
  std::uint64_t b = bits_of(x);
  if (b != (std::uint64_t(1) << 63)) f.flags |= seen_not_neg_zero;
  int be = static_cast<int>((b >> 52) & 0x7ff);
  if (be >= big_biased_exponent) {
    if (be == 0x7ff) {
      f.flags |= (b & ((std::uint64_t(1) << 52) - 1)) ? seen_nan : ((b >> 63) ? seen_neg_inf : seen_pos_inf);
      return;
    }
    flush(x);  // exact deposit of a huge finite value
    return;
  }
  add(f, x, flush);
}

/// Sign handling shared by the dot terms: the product x*y is an exact zero when x or y is
/// zero; it is -0.0 when their signs differ.
TALLY_HD bool product_is_neg_zero(std::uint64_t bx, std::uint64_t by, bool x_zero, bool y_zero) {
  return (x_zero || y_zero) && ((bx ^ by) >> 63);
}

/// float32 dot term: the product is exact in float64 (24 + 24 bits, exponent in range).
template <class Flush> TALLY_HD void add_product(expansion& f, float x, float y, Flush&& flush) {
  std::uint32_t bx = bits_of(x), by = bits_of(y);
  bool xs = (bx & 0x7f800000u) == 0x7f800000u, ys = (by & 0x7f800000u) == 0x7f800000u;
  double p = static_cast<double>(x) * static_cast<double>(y);
  if (xs || ys) {
    f.flags |= seen_not_neg_zero;
    std::uint64_t pb = bits_of(p);
    f.flags |= (pb & ((std::uint64_t(1) << 52) - 1)) ? seen_nan : ((pb >> 63) ? seen_neg_inf : seen_pos_inf);
    return;
  }
  bool neg_zero = (((bx & 0x7fffffffu) == 0) || ((by & 0x7fffffffu) == 0)) && ((bx ^ by) >> 31);
  if (!neg_zero) f.flags |= seen_not_neg_zero;
  add(f, p, flush);
}

/// float64 dot term: TwoProduct with FMA when the product and its error are clear of
/// overflow and underflow (both exponents normal and their sum in [-966, 997]); otherwise the
/// exact integer product goes to deposit_product(x, y).
template <class Flush, class DepositProduct>
TALLY_HD void add_product(expansion& f, double x, double y, Flush&& flush, DepositProduct&& dp) {
  std::uint64_t bx = bits_of(x), by = bits_of(y);
  int ex = static_cast<int>((bx >> 52) & 0x7ff), ey = static_cast<int>((by >> 52) & 0x7ff);
  if (ex == 0x7ff || ey == 0x7ff) {
    f.flags |= seen_not_neg_zero;
    std::uint64_t pb = bits_of(x * y);
    f.flags |= (pb & ((std::uint64_t(1) << 52) - 1)) ? seen_nan : ((pb >> 63) ? seen_neg_inf : seen_pos_inf);
    return;
  }
  bool xz = (bx << 1) == 0, yz = (by << 1) == 0;
  if (!product_is_neg_zero(bx, by, xz, yz)) f.flags |= seen_not_neg_zero;
  if (xz || yz) return;
  int es = ex + ey - 2046;  // sum of unbiased exponents
  if (ex == 0 || ey == 0 || es < -966 || es > 997) {
    dp(x, y);
    return;
  }
  double p = x * y;
  double e = exact_fma(x, y, -p);
  add(f, p, flush);
  if (e != 0.0) add(f, e, flush, 1);  // the low part joins below the leading term
}

/// True when |a| >= 2^1010: the caller then flushes a[0] and clears it.
TALLY_HD bool too_big(double a) {
  return static_cast<int>((bits_of(a) >> 52) & 0x7ff) >= 1023 + 1010;
}

/// float32 tile fast path: the sum of 16 (or fewer) finite float32 values whose exponents
/// lie within 25 of each other is exact in float64 (they are multiples of 2^(emin - 23) and
/// smaller than 2^(emax + 5), 53 bits in all), so such a tile is summed in float64 first and
/// enters the expansion once. Returns false (and does nothing) for any other tile.
template <int N> TALLY_HD bool tile_exact_f32(const float* v, double& out, unsigned& flags) {
  int emin = 255, emax = 0;
  bool all_neg_zero = true;
TALLY_UNROLL
  for (int k = 0; k < N; ++k) {
    std::uint32_t b = bits_of(v[k]);
    int be = static_cast<int>((b >> 23) & 0xff);
    bool zero = (b & 0x7fffffffu) == 0;
    all_neg_zero &= b == 0x80000000u;
    int lo = zero ? 255 : (be == 0 ? 1 : be);
    int hi = zero ? 0 : (be == 0 ? 1 : be);
    emin = emin < lo ? emin : lo;
    emax = emax > hi ? emax : hi;
  }
  if (emax == 0) {  // all zeros: nothing to add
    out = 0.0;
    if (!all_neg_zero) flags |= seen_not_neg_zero;
    return true;
  }
  if (emax == 255 || emax - emin > 25) return false;
  double t[N];
TALLY_UNROLL
  for (int k = 0; k < N; ++k) t[k] = static_cast<double>(v[k]);
TALLY_UNROLL
  for (int w = 1; w < N; w *= 2)
TALLY_UNROLL
    for (int j = 0; j + w < N; j += 2 * w) t[j] += t[j + w];
  out = t[0];
  if (!all_neg_zero) flags |= seen_not_neg_zero;
  return true;
}

}  // namespace tally::ops::exact

namespace tally::ops::exact {

// ---- anchored levels (float64 inputs) ----------------------------------------------------
//
// Error-free extraction, after Demmel and Nguyen ("Fast reproducible floating-point
// summation", ARITH 21, 2013; "Parallel reproducible summation", IEEE Trans. Computers 64(7),
// 2015): a level is a double S kept in [1.25, 1.75] * 2^(g + 52), so that its ulp is 2^g.
// For |x| <= 2^(g + 49), q = fl(S + x) - S is x rounded to a multiple of 2^g, exactly, and
// the remainder x - q (|x - q| <= 2^(g - 1)) is exact too. K levels whose ulps are W bits
// apart split every input into K exact pieces; S - 1.5 * 2^(g + 52) is the exact sum of
// the pieces a level took. Unlike ReproBLAS, a remainder left after the last level is not
// dropped but deposited into the superaccumulator, so the sum stays exact.

/// 2^e as a double, for e in [-1022, 1023].
TALLY_HD double pow2(int e) { return double_of(static_cast<std::uint64_t>(e + 1023) << 52); }

/// A level's anchor value 1.5 * 2^(g + 52) for ulp exponent g in [-1074, 971].
TALLY_HD double level_anchor(int g) {
  return double_of((static_cast<std::uint64_t>(g + 52 + 1023) << 52) | (std::uint64_t(1) << 51));
}

/// One extraction step: adds the part of x at or above the level's ulp to S; returns the rest.
TALLY_HD double extract(double& S, double x) {
  double T = S + x;
  double q = T - S;
  S = T;
  return x - q;
}

/// Level geometry: W bits between the ulps of consecutive levels; level 0 takes inputs below
/// 2^cap with its ulp at 2^(cap - W) (2^(W-1) inputs of at most 2^cap, or 2^(50 - W) of at
/// most a level's input bound, move a level by less than 2^(g + 50)); levels never go below
/// the smallest subnormal's ulp.
inline constexpr int level_bits = 40;
/// Inputs a level can take between two renormalisations (each at most 2^(g + W - 1) or,
/// for level 0, below 2^(g + W)): the drift stays below 2^(g + 49).
inline constexpr int level_renorm_terms = 256;
TALLY_HD int level_ulp(int cap, int k) {
  int g = cap - level_bits * (k + 1);
  return g < -1074 ? -1074 : g;
}

}  // namespace tally::ops::exact
