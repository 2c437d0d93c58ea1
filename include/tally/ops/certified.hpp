// tally::ops::certified: a one-pass, certified route to the correctly rounded sum, dot
// product, mean and L2 norm of float32 and float64 data, shared by host and device.
//
// The exact kernels (ops/exact.hpp) are exact for any data, at a cost per element that keeps
// float64 dots below memory speed. Most data do not need them: a sum carried in two or three
// doubles, with a running bound on what it has lost, already pins the exact value to an
// interval far narrower than a rounding gap, and then the one float that interval rounds to
// is the correctly rounded result, proved. When the interval straddles a rounding boundary
// (ties, exactly cancelling sums near a midpoint, condition numbers past ~2^100, a zero
// result, overflow, NaN or infinities), the certificate fails and the caller runs the exact
// kernel: the answer is the same bits either way, only the time differs.
//
// Algorithms:
//  - TwoSum (Knuth, TAOCP vol. 2) and TwoProduct by FMA (error-free transformations), and the
//    cascaded accumulation of their errors: Ogita, Rump and Oishi, "Accurate sum and dot
//    product", SIAM J. Sci. Comput. 26(6), 2005 (Sum2, Dot2), with a third level (K = 3) that
//    catches the errors of the second, so that a running sum which cancels against large
//    terms (the ill-conditioned data of tally's benchmark) is still carried error-free;
//  - a running error bound instead of the a-priori gamma_n bound of that paper: the only
//    inexact operations are the additions into `lo`, each off by at most u |result|
//    (u = 2^-53, round to nearest), so their total is at most u * sum of |lo| after each,
//    which `bound` accumulates (Higham, "Accuracy and Stability of Numerical Algorithms",
//    2nd ed., 2002, section 3.1 and chapter 4: running error analysis). The float sum of
//    `bound` undercounts by less than a factor 2 for fewer than 2^51 operations, hence 2u.
//  - FMA's TwoProduct error term is exact unless the product underflows; an underflowing
//    product is off by at most 2^-1075, so dot products add n * 2^-1074 to the bound.
//
// The analysis assumes IEEE binary64 arithmetic with round to nearest and gradual underflow
// (no flush-to-zero or denormals-are-zero mode on the host thread that certifies a mean, a
// norm or a variance; the device kernels never flush float64 subnormals).
//
// Overflow and special values need no test per element: an infinity or NaN anywhere (input,
// product, or an intermediate of TwoSum) reaches hi, mid, lo or bound and stays there, and
// a state that is not finite is never certified.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "tally/ops/exact.hpp"

namespace tally::ops::certified {

/// The unit roundoff of float64, round to nearest.
inline constexpr double unit = 0x1p-53;

/// TwoSum (Knuth): s = fl(a + b) and e with s + e == a + b exactly (no overflow).
TALLY_HD void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  double bp = s - a;
  double ap = s - bp;
  e = (a - ap) + (b - bp);
}

/// Fast2Sum (Dekker 1971, "A floating-point technique for extending the available
/// precision", Numer. Math. 18) on the operands taken in order of magnitude: the same s and
/// the same exact error e as TwoSum (up to the sign of a zero e), in three additions and one
/// compare instead of six additions (the compare and the two selects run beside the float64
/// pipe on a GPU). Exact because |big| >= |small| (round to nearest, no overflow; an
/// overflow or a NaN leaves s or e not finite, as TwoSum does).
TALLY_HD void two_sum_ordered(double a, double b, double& s, double& e) {
  const bool swap = std::fabs(a) < std::fabs(b);
  const double big = swap ? b : a, small = swap ? a : b;
  s = big + small;
  e = small - (s - big);
}

/// TwoSum, or (ORDERED) the same transformation by two_sum_ordered.
template <bool ORDERED> TALLY_HD void two_sum_as(double a, double b, double& s, double& e) {
  if constexpr (ORDERED) two_sum_ordered(a, b, s, e);
  else two_sum(a, b, s, e);
}

/// fl(a * b), never contracted into a later addition (TwoSum needs the rounded product).
TALLY_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  // fma(a, b, -0.0) is a * b rounded once (and -0.0 when a * b is -0.0), and no compiler fuses
  // it into a later addition, whatever -ffp-contract or -march the includer compiles with.
  return std::fma(a, b, -0.0);
#endif
}

/// The accumulator: the exact value of everything added is hi + mid + lo + err with
/// |err| <= 2u * bound. 32 bytes. K = 2 leaves mid at 0. The identity's hi is -0.0, so hi
/// stays -0.0 exactly when every term was -0.0 (IEEE: -0 + -0 = -0, and an exact
/// cancellation gives +0), which decides the sign of an exactly zero result.
struct state {
  double hi = -0.0, mid = 0, lo = 0, bound = 0;
};

/// Adds a term that belongs below hi: K = 3 into mid error-free (its error into lo), K = 2
/// into lo; lo's addition is the inexact one, counted in bound. ORDERED: the error-free
/// additions by two_sum_ordered (the same state, up to the signs of zero error terms).
template <int K, bool ORDERED = false> TALLY_HD void add_below(state& s, double e) {
  static_assert(K == 2 || K == 3);
  if constexpr (K == 3) {
    double e2;
    two_sum_as<ORDERED>(s.mid, e, s.mid, e2);
    s.lo += e2;
  } else {
    s.lo += e;
  }
  s.bound += std::fabs(s.lo);
}

/// Adds one float64 term. K = 3: hi, mid error-free, lo inexact (tracked); K = 2: hi
/// error-free, lo inexact.
template <int K, bool ORDERED = false> TALLY_HD void add(state& s, double x) {
  double e;
  two_sum_as<ORDERED>(s.hi, x, s.hi, e);
  add_below<K, ORDERED>(s, e);
}

/// The exact sum of four float32 terms as one float64, s = (x0 + x1) + (x2 + x3), when their
/// exponents allow it; else false (s is then not meaningful). The test: with f the biased
/// exponent field of a term and g = (|bits| - 1) >> 23 (f or f - 1 for a nonzero term, 511
/// for a zero), every nonzero term is an integer multiple of 2^(g - 150) and below
/// 2^(f - 126) in magnitude (subnormals: f = 0, multiples of 2^-149, below 2^-126), so every
/// partial sum of the four is a multiple of 2^(gmin - 150) below 2^(fmax - 124): an integer
/// below 2^(fmax - gmin + 26) times a power of two, exact in float64 (53 bits) when
/// fmax - gmin <= 27, and never overflowing or subnormal there (the bound is tight: at 28,
/// 14,103 of 10.2M edge cases are inexact, seventeenth-session review). Zeros do not count (g = 511),
/// and their signs come out as in four additions in turn (-0 only when all four are -0).
/// Infinities and NaNs (f = 255, g = 254) pass only beside zeros or other terms of 2^101 or
/// more, and then leave s not finite, as the additions in turn would (never certified). Random data of one sign and range take this
/// path nearly always (terms more than 27 binades apart within four neighbours are rare).
TALLY_HD bool sum4_exact(float x0, float x1, float x2, float x3, double& s) {
  const std::uint32_t a0 = exact::bits_of(x0) & 0x7fffffffu, a1 = exact::bits_of(x1) & 0x7fffffffu,
                      a2 = exact::bits_of(x2) & 0x7fffffffu, a3 = exact::bits_of(x3) & 0x7fffffffu;
  const auto mx = [](std::uint32_t a, std::uint32_t b) { return a > b ? a : b; };
  const auto mn = [](std::uint32_t a, std::uint32_t b) { return a < b ? a : b; };
  const std::uint32_t fmax = mx(mx(a0, a1), mx(a2, a3)) >> 23;  // (the largest magnitude's field)
  const std::uint32_t gmin = mn(mn(a0 - 1u, a1 - 1u), mn(a2 - 1u, a3 - 1u)) >> 23;  // (a zero wraps to 511)
  s = (static_cast<double>(x0) + static_cast<double>(x1)) + (static_cast<double>(x2) + static_cast<double>(x3));
  return static_cast<int>(fmax) - static_cast<int>(gmin) <= 27;
}

/// Adds four float32 terms: as one exact term (sum4_exact) when it applies, else one at a
/// time. The state's exact value is the same either way; one addition instead of four is
/// what makes the certified shape pass (src/cuda/shapes.cuh) cheap enough per element.
template <int K, bool ORDERED = false> TALLY_HD void add4(state& s, float x0, float x1, float x2, float x3) {
  double t;
  if (sum4_exact(x0, x1, x2, x3, t)) {
    add<K, ORDERED>(s, t);
  } else {
    add<K, ORDERED>(s, static_cast<double>(x0));
    add<K, ORDERED>(s, static_cast<double>(x1));
    add<K, ORDERED>(s, static_cast<double>(x2));
    add<K, ORDERED>(s, static_cast<double>(x3));
  }
}

/// The exact sum of N float32 terms as one float64 (N a power of two, 4 to 64), summed as a
/// pairwise tree, when their exponents allow it; else false (s is then not meaningful). The
/// test is sum4_exact's for N terms: every partial sum is an integer multiple of
/// 2^(gmin - 150) below N 2^(fmax - 126), i.e. an integer below 2^(fmax - gmin + 24 + log2 N),
/// exact in float64 when fmax - gmin <= 29 - log2 N (N = 4: 27, sum4_exact's bound; N = 16:
/// 25). fmax comes from the float maximum of the magnitudes (a NaN is skipped by the maximum
/// but reaches s, which is then NaN: never certified), gmin from the unsigned minimum of
/// 2 |bits| - 1 (the sign shifted out; a zero wraps to 0xffffffff, so it never counts),
/// shifted by 24: g = (|bits| - 1) >> 23 as in sum4_exact, in 3 integer or compare
/// instructions an element. An exact sum's zero sign does not depend on the order: -0 only
/// when every term is -0, as in N additions in turn.
namespace detail {
/// x[I] + ... + x[I + M - 1] in float64, as a pairwise tree (M a power of two).
template <int I, int M, int N> TALLY_HD double tree_sum(const float (&x)[N]) {
  if constexpr (M == 1) return static_cast<double>(x[I]);
  else return tree_sum<I, M / 2>(x) + tree_sum<I + M / 2, M / 2>(x);
}
}  // namespace detail

template <int N> TALLY_HD bool sum_exact(const float (&x)[N], double& s) {
  static_assert(N >= 4 && N <= 64 && (N & (N - 1)) == 0);
  constexpr int log2n = N == 4 ? 2 : N == 8 ? 3 : N == 16 ? 4 : N == 32 ? 5 : 6;
  float m = std::fabs(x[0]);
  std::uint32_t g = (exact::bits_of(x[0]) << 1) - 1u;
TALLY_UNROLL
  for (int i = 1; i < N; ++i) {
    m = std::fmax(m, std::fabs(x[i]));
    const std::uint32_t gi = (exact::bits_of(x[i]) << 1) - 1u;
    g = gi < g ? gi : g;
  }
  s = detail::tree_sum<0, N>(x);
  const int fmax = static_cast<int>(exact::bits_of(m) >> 23);  // (m >= 0, or a NaN: 255 or more, refused or not finite)
  const int gmin = static_cast<int>(g >> 24);
  return fmax - gmin <= 29 - log2n;
}

/// Adds N float32 terms (N a power of two, 4 to 64) as one exact term (sum_exact), if their
/// exponents allow; else false, and the state is unchanged (the caller then adds them four at a
/// time, add4: the certified shape pass re-reads them from memory for that, so that this
/// rare path holds no registers in the common one). One state update per N elements instead
/// of one per four.
template <int K, bool ORDERED = false, int N> TALLY_HD bool add_n(state& s, const float (&x)[N]) {
  double t;
  if (!sum_exact<N>(x, t)) return false;
  add<K, ORDERED>(s, t);
  return true;
}

/// A running float64 sum of float32 terms added one at a time, with what sum_exact's test
/// needs of them: the largest magnitude m and the unsigned minimum g of 2 |bits| - 1 (a zero
/// wraps to 0xffffffff and never counts). The test is sum_exact's, and so is the proof: every
/// partial sum, in any order, is an integer multiple of 2^(gmin - 150) below
/// N 2^(fmax - 126), exact in float64 when fmax - gmin <= 29 - log2 N for N terms; the
/// running sum is then the exact sum, and one term for the state (add). For a column of a
/// row-major matrix, whose terms reach a lane one row at a time: 4 instructions a term (the
/// conversion, the float64 addition, a float and an integer minimum or maximum) against
/// add4's ~10, and one state update per N rows. s starts at -0.0, so that it is -0 only
/// when every term is -0, as in the additions into the state. A NaN is skipped by the
/// maximum but reaches s (never certified); an infinity (f = 255, g = 254) passes only beside
/// zeros or other terms of 2^101 or more, and s is then not finite (never certified).
struct running {
  double s = -0.0;
  float m = 0;
  std::uint32_t g = 0xffffffffu;
};

/// Adds one float32 term to a running sum (running).
TALLY_HD void run_add(running& r, float x) {
  r.s += static_cast<double>(x);
  r.m = std::fmax(r.m, std::fabs(x));
  const std::uint32_t gi = (exact::bits_of(x) << 1) - 1u;
  r.g = gi < r.g ? gi : r.g;
}

/// Whether a running sum of at most N terms (N a power of two, 4 to 64) is exact (running).
template <int N> TALLY_HD bool run_exact(const running& r) {
  static_assert(N >= 4 && N <= 64 && (N & (N - 1)) == 0);
  constexpr int log2n = N == 4 ? 2 : N == 8 ? 3 : N == 16 ? 4 : N == 32 ? 5 : 6;
  return static_cast<int>(exact::bits_of(r.m) >> 23) - static_cast<int>(r.g >> 24) <= 29 - log2n;
}

/// Adds the product x * y. EXACT: the product is exact in float64 (float32 inputs), so its
/// error term is skipped. Otherwise TwoProduct by FMA; the error term goes in below hi.
template <int K, bool EXACT, bool ORDERED = false> TALLY_HD void add_product(state& s, double x, double y) {
  double p = mul_rn(x, y);
  add<K, ORDERED>(s, p);
  if constexpr (!EXACT) add_below<K, ORDERED>(s, std::fma(x, y, -p));
}

/// Merges two states (associative up to the bound: the exact value of the merge is the sum
/// of the two exact values, whatever the order, and the bound covers its new error).
template <int K> TALLY_HD state merge(state a, const state& b) {
  double e1;
  two_sum(a.hi, b.hi, a.hi, e1);
  double lo = a.lo + b.lo;
  double bd = a.bound + b.bound + std::fabs(lo);
  if constexpr (K == 3) {
    double e2, e3;
    two_sum(a.mid, b.mid, a.mid, e2);
    two_sum(a.mid, e1, a.mid, e3);
    lo += e2;
    bd += std::fabs(lo);
    lo += e3;
    bd += std::fabs(lo);
  } else {
    lo += e1;
    bd += std::fabs(lo);
  }
  a.lo = lo;
  a.bound = bd;
  return a;
}

/// A finished state: the exact value lies in [H + L - B, H + L + B], |L| about an ulp of H
/// or less. finite is false when anything overflowed or was NaN/infinite (no certificate).
struct interval {
  double H = 0, L = 0, B = 0, finite = 0;  // finite: 1 or 0 (a double: four 8-byte words)
};

/// Renormalises a state into an interval. absolute: the extra error not tracked in bound
/// (n * 2^-1074 for products of float64 inputs that may underflow; 0 otherwise).
TALLY_HD interval finish(const state& s, double absolute) {
  interval r;
  double m, l, h, e, e2, l2, e3;
  two_sum(s.mid, s.lo, m, l);
  two_sum(s.hi, m, h, e);
  two_sum(e, l, e2, l2);
  two_sum(h, e2, r.H, e3);
  r.L = e3 + l2;  // the one inexact step: off by at most u |L|
  r.B = (0x1p-52 * s.bound + 0x1p-52 * std::fabs(r.L) + absolute) * (1 + 0x1p-50);
  if (s.hi == 0 && s.mid == 0 && s.lo == 0 && s.bound == 0) r.H = s.hi;  // an exact zero keeps hi's sign
  bool ok = std::isfinite(s.hi) && std::isfinite(s.mid) && std::isfinite(s.lo) && std::isfinite(s.bound) &&
            std::isfinite(r.H) && std::isfinite(r.L) && std::isfinite(r.B);
  r.finite = ok ? 1 : 0;
  return r;
}

namespace detail {
/// Half the smaller of the two gaps around r > 0 (finite, not the largest), as a double;
/// the smaller gap is the one below r (they differ only at powers of two).
template <class Out> TALLY_HD double half_gap(Out r) {
  if constexpr (sizeof(Out) == 8) {
    double below = exact::double_of(exact::bits_of(r) - 1);
    return (r - below) * 0.5;
  } else {
    std::uint32_t b = exact::bits_of(r) - 1;
    float below;
#if defined(__CUDA_ARCH__)
    below = __uint_as_float(b);
#else
    std::memcpy(&below, &b, sizeof below);
#endif
    return (static_cast<double>(r) - static_cast<double>(below)) * 0.5;
  }
}
template <class Out> TALLY_HD bool usable(Out r) {  // nonzero, finite, not the largest
  Out a = r < 0 ? -r : r;
  return a > 0 && a < std::numeric_limits<Out>::max();
}
/// An upper bound on |D| plus D's own rounding error, where D = fl(a + c) and a, c were each
/// one rounded operation (or exact).
TALLY_HD double slack(double a, double c, double D) {
  return (std::fabs(D) + 0x1p-52 * (std::fabs(a) + std::fabs(c) + std::fabs(D))) * (1 + 0x1p-50);
}
}  // namespace detail

/// The correctly rounded Out value of the exact sum, if the interval proves it. A zero is
/// certified only when it is exact (B = 0: nothing was ever rounded), with hi's sign; the
/// largest finite value never is; an infinity only for float32 results whose whole interval
/// lies past the overflow threshold (float64 overflow is decided by the exact kernel).
template <class Out> TALLY_HD bool round_certified(const interval& v, Out& out) {
  if (!v.finite) return false;
  if (v.H == 0 && v.L == 0 && v.B == 0) {
    out = static_cast<Out>(v.H);
    return true;
  }
  if constexpr (sizeof(Out) == 4) {
    // Past the float32 overflow threshold (the midpoint between FLT_MAX and 2^128; ties go
    // to 2^128, i.e. infinity) the correctly rounded value is an infinity of the sum's sign.
    // least <= |H| - |L| - B: |H| - B = t + e exactly (TwoSum), so only the small terms
    // |e| + |L| (rounded up by the first factor) are subtracted from t, and that one rounding
    // is relative to the result (second factor). Subtracting |L| from |H| first would round by
    // up to half an ulp of H, which B may then cancel down to the threshold.
    constexpr double limit = 0x1p128 - 0x1p103;
    double t, e;
    two_sum(std::fabs(v.H), -v.B, t, e);
    double least = (t - (std::fabs(e) + std::fabs(v.L)) * (1 + 0x1p-50)) * (1 - 0x1p-50);
    if (least >= limit) {
      out = v.H > 0 ? std::numeric_limits<Out>::infinity() : -std::numeric_limits<Out>::infinity();
      return true;
    }
  }
  // The candidate: H + L rounded (to double, then to Out); it is proved or refused below.
  Out r = static_cast<Out>(v.H + v.L);
  if (!detail::usable(r)) return false;
  double a = v.H - static_cast<double>(r);  // exact when r is within a factor 2 of H (Sterbenz)
  double d = a + v.L;
  double lhs = (detail::slack(a, v.L, d) + v.B) * (1 + 0x1p-52);
  if (!(lhs < detail::half_gap(r < 0 ? -r : r))) return false;
  out = r;
  return true;
}

/// The exact value of a state as two doubles, H + L, when nothing was ever rounded (bound = 0:
/// every addition into lo was exact, so the value is hi + mid + lo) and the renormalisation's
/// last addition is exact too; else false. Such a sum is rounded once by round_pair, ties
/// included, which round_certified's strict interval test refuses even with B = 0 (sums of a
/// few float32 values are exact in float64, and their float32 rounding is then often a tie:
/// 21% of random sums of 2, 0.2% of sums of 200; sixteenth session review). An exact zero
/// keeps hi's sign.
TALLY_HD bool exact_pair(const state& s, double& H, double& L) {
  if (s.bound != 0 || !std::isfinite(s.hi) || !std::isfinite(s.mid) || !std::isfinite(s.lo)) return false;
  double m, l, h, e, e2, l2, e3, err;
  two_sum(s.mid, s.lo, m, l);
  two_sum(s.hi, m, h, e);
  two_sum(e, l, e2, l2);
  two_sum(h, e2, H, e3);
  two_sum(e3, l2, L, err);
  if (err != 0 || !std::isfinite(H) || !std::isfinite(L)) return false;
  if (H == 0) {  // (then L = 0 too: the value is 0)
    H = s.hi == 0 && s.mid == 0 && s.lo == 0 ? s.hi : 0.0;
    L = 0;
  }
  return true;
}

/// The correctly rounded Out value (round to nearest, ties to even) of H + L, exactly: for
/// float64 one IEEE addition; for float32 the sum rounded to odd in float64 (Boldo and
/// Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding
/// to odd", IEEE Trans. Computers 57(4), 2008: 53 >= 24 + 2 bits), then to float32. H + L must
/// not overflow float64 (it cannot: it is a state's finite renormalised value).
template <class Out> TALLY_HD Out round_pair(double H, double L) {
  if (L == 0) return static_cast<Out>(H);  // (one rounding; keeps a zero's sign, which H + 0 would not)
  if constexpr (sizeof(Out) == 8) {
    return H + L;
  } else {
    double s, e;
    two_sum(H, L, s, e);
    if (e != 0) {  // (s != 0: a zero sum is exact) to odd: one ulp toward e when s is even
      std::uint64_t b = exact::bits_of(s);
      if ((b & 1) == 0) s = exact::double_of((e > 0) == (s > 0) ? b + 1 : b - 1);
    }
    return static_cast<Out>(s);
  }
}

/// The correctly rounded Out value of a state's exact sum, if it is known exactly
/// (exact_pair) or the interval proves it (round_certified).
template <class Out> TALLY_HD bool round_state(const state& s, Out& out) {
  double H, L;
  if (exact_pair(s, H, L)) {
    out = round_pair<Out>(H, L);
    return true;
  }
  return round_certified(finish(s, 0.0), out);
}

/// The correctly rounded Out value of the (exact sum) / n, if it is known exactly and n is a
/// power of two (the quotient is then H / n + L / n, exactly, unless that underflows) or the
/// interval proves it (divide_certified). n < 2^53.
template <class Out> TALLY_HD bool divide_state(const state& s, std::uint64_t n, Out& out) {
  double H, L;
  if (n > 0 && (n & (n - 1)) == 0 && exact_pair(s, H, L)) {
    const double dn = static_cast<double>(n), h = H / dn, l = L / dn;
    if (h * dn == H && l * dn == L) {
      out = round_pair<Out>(h, l);
      return true;
    }
  }
  return divide_certified(finish(s, 0.0), n, out);
}

/// The correctly rounded Out value of (exact sum) / n, if the interval proves it (n < 2^53).
template <class Out> TALLY_HD bool divide_certified(const interval& v, std::uint64_t n, Out& out) {
  if (!v.finite || n == 0 || n >= (std::uint64_t(1) << 53)) return false;
  double dn = static_cast<double>(n);
  if (v.H == 0 && v.L == 0 && v.B == 0) {  // an exact zero, with its sign
    out = static_cast<Out>(v.H);
    return true;
  }
  // The candidate: H / n with one Newton correction for L and the quotient's rounding (H / n
  // alone can be an ulp off: L is up to half an ulp of H); proved or refused below.
  double q0 = v.H / dn;
  if (!(std::fabs(q0) >= 0x1p-900 && std::fabs(q0) <= 0x1p+900)) return false;
  double P0 = mul_rn(q0, dn);
  double r0 = (v.H - P0) + (v.L - std::fma(q0, dn, -P0));
  Out r = static_cast<Out>(q0 + r0 / dn);
  if (!detail::usable(r)) return false;
  double R = static_cast<double>(r);
  if (std::fabs(R) < 0x1p-900 || std::fabs(R) > 0x1p+900) return false;  // TwoProduct stays exact
  double P = mul_rn(R, dn);
  double Pe = std::fma(R, dn, -P);
  double a = v.H - P, c = v.L - Pe;
  double D = a + c;
  double lhs = (detail::slack(a, c, D) + v.B) * (1 + 0x1p-52);
  // v / n in (R - g, R + g)  <=>  v - R n in (-n g, n g), g the smaller half gap.
  if (!(lhs < dn * detail::half_gap(r < 0 ? -r : r) * (1 - 0x1p-50))) return false;
  out = r;
  return true;
}

/// The correctly rounded Out value of sqrt(exact sum), if the interval proves it.
template <class Out> TALLY_HD bool sqrt_certified(const interval& v, Out& out) {
  if (!v.finite || !(v.H > 0)) return false;
  // The candidate: sqrt(H) with one Newton correction for L and the root's rounding
  // (sqrt(H) alone can be an ulp off); proved or refused below.
  double s0 = std::sqrt(v.H);
  if (!(s0 >= 0x1p-450 && s0 <= 0x1p+450)) return false;
  double P0 = mul_rn(s0, s0);
  double r0 = (v.H - P0) + (v.L - std::fma(s0, s0, -P0));
  Out r = static_cast<Out>(s0 + r0 / (2 * s0));
  if (!detail::usable(r)) return false;
  double R = static_cast<double>(r);
  if (R < 0x1p-450 || R > 0x1p+450) return false;  // R^2 and its TwoProduct stay exact
  double P = mul_rn(R, R);
  double Pe = std::fma(R, R, -P);
  double a = v.H - P, c = v.L - Pe;
  double D = a + c;
  double h = detail::half_gap(r);
  // v in ((R - h)^2, (R + h)^2)  <=  |v - R^2| < 2 R h - h^2.
  double room = (2 * R * h - h * h) * (1 - 0x1p-50);
  double lhs = (detail::slack(a, c, D) + v.B) * (1 + 0x1p-52);
  if (!(lhs < room)) return false;
  out = r;
  return true;
}

namespace detail {
/// fl(a op b) with its rounding error added to `err` (|error| <= u |result|, plus 2^-1070
/// for a product that may underflow).
struct tracked {
  double err = 0;
  TALLY_HD double add(double a, double b) {
    double r = a + b;
    err += unit * std::fabs(r);
    return r;
  }
  TALLY_HD double mul(double a, double b) {
    double r = mul_rn(a, b);
    err += unit * std::fabs(r) + 0x1p-1070;
    return r;
  }
  TALLY_HD double total() const { return err * (1 + 0x1p-50); }
};
}  // namespace detail

/// The correctly rounded Out value of the variance (n S2 - S1^2) / (n (n - ddof)), or of its
/// square root (take_sqrt: the standard deviation), from the intervals of S1 = sum x and
/// S2 = sum x^2, if they prove it. m2 = n - ddof >= 1; n and m2 below 2^53. Refuses a zero
/// or negative numerator (constant data: the exact path rounds a zero), results out of
/// [2^-400, 2^400], and anything not finite.
template <class Out>
TALLY_HD bool variance_certified(const interval& s1, const interval& s2, std::uint64_t n, std::uint64_t m2,
                                 bool take_sqrt, Out& out) {
  constexpr std::uint64_t limit = std::uint64_t(1) << 53;
  if (!s1.finite || !s2.finite || n == 0 || m2 == 0 || n >= limit || m2 >= limit) return false;
  const double dn = static_cast<double>(n), dm = static_cast<double>(m2);
  const double mag = 0x1p+450;  // keeps every product below far from overflow
  if (!(std::fabs(s1.H) < mag && std::fabs(s2.H) < mag)) return false;
  detail::tracked t;
  // N = n S2 - S1^2 in two doubles (Nh + Nl) within E.
  double a1 = mul_rn(dn, s2.H), a2 = std::fma(dn, s2.H, -a1);  // exact
  double a3 = t.mul(dn, s2.L);
  double q1 = mul_rn(s1.H, s1.H), q2 = std::fma(s1.H, s1.H, -q1);  // exact
  double q3 = t.mul(2 * s1.H, s1.L);
  double d1, e1;
  two_sum(a1, -q1, d1, e1);  // exact: n S2 and S1^2 may cancel to a tiny fraction of each
  double r = t.add(t.add(t.add(t.add(a2, -q2), a3), -q3), e1);
  double Nh, Nl;
  two_sum(d1, r, Nh, Nl);
  // |S1^2 - (H1 + L1)^2| <= (2 |H1 + L1| + B1) B1, plus the dropped L1^2; n B2 for S2.
  double E = (t.total() + dn * s2.B + (2 * (std::fabs(s1.H) + std::fabs(s1.L)) + s1.B) * s1.B + s1.L * s1.L) *
             (1 + 0x1p-50);
  if (!(Nh - std::fabs(Nl) * (1 + 0x1p-52) - E > 0) || !std::isfinite(Nh + E)) return false;
  // D = n m2 exactly as D1 + D2.
  double D1 = mul_rn(dn, dm), D2 = std::fma(dn, dm, -D1);
  // Candidate: N / D with one Newton correction.
  double q0 = Nh / D1;
  if (!(q0 > 0x1p-800 && q0 < 0x1p+800)) return false;
  double c = q0 + ((Nh - mul_rn(q0, D1)) + (Nl - std::fma(q0, D1, -mul_rn(q0, D1)) - q0 * D2)) / D1;
  // check(cand): whether N / D (take_sqrt: its root) is proved to round to cand; `delta`
  // receives N - D R (N - D R^2), which corrects a candidate that is an ulp off.
  auto check = [&](Out cand, double& delta) {
    if (!detail::usable(cand)) return false;
    const double R = static_cast<double>(cand);
    if (!(R > 0x1p-400 && R < 0x1p+400)) return false;
    const double h = detail::half_gap(cand);
    detail::tracked u;
    double low, room;
    if (!take_sqrt) {
      // N / D in (R - h, R + h)  <=  |N - R D| < h D.
      double w1 = mul_rn(R, D1), w2 = std::fma(R, D1, -w1);  // exact
      double w3 = u.mul(R, D2);
      delta = u.add(u.add(u.add(u.add(Nh, -w1), Nl), -w2), -w3);
      low = std::fabs(delta);
      room = h * D1 * (1 - 0x1p-50);
    } else {
      // N / D in ((R - h)^2, (R + h)^2)  <=  |N - D R^2| < D (2 R h - h^2).
      double P = mul_rn(R, R), Pe = std::fma(R, R, -P);  // R^2 = P + Pe exactly
      double w1 = mul_rn(D1, P), w2 = std::fma(D1, P, -w1);  // exact
      double w3 = u.mul(D1, Pe), w4 = u.mul(D2, P);
      delta = u.add(u.add(u.add(u.add(u.add(Nh, -w1), Nl), -w2), -w3), -w4);
      low = std::fabs(delta) + std::fabs(D2 * Pe) * 2;  // the dropped D2 Pe (|D2 Pe| <= u^2 D1 P)
      room = D1 * (2 * R * h - h * h) * (1 - 0x1p-50);
    }
    double lhs = (low + u.total() + E) * (1 + 0x1p-50);
    return lhs < room;
  };
  Out cand = static_cast<Out>(take_sqrt ? std::sqrt(c) : c);
  double delta = 0;
  if (!check(cand, delta)) {
    // One more Newton step from this candidate (the root's rounding can leave it an ulp off).
    const double R = static_cast<double>(cand);
    if (!(R > 0)) return false;
    Out next = static_cast<Out>(take_sqrt ? R + delta / (2 * D1 * R) : R + delta / D1);
    if (next == cand || !check(next, delta)) return false;
    cand = next;
  }
  out = cand;
  return true;
}

}  // namespace tally::ops::certified
