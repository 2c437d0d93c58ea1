// tally::ops: the reducers of the norms, the moments (variance) and the logical reductions,
// shared by the CPU and CUDA backends as small host/device functions (the reducer concept of
// reducers.hpp: identity, accumulate, combine, finalize).
#pragma once

#include <cmath>
#include <cstdint>

#include "tally/ops/reducers.hpp"

namespace tally::ops {

/// |x| for floating x, as a double (exact: float32 converts exactly).
template <class T> TALLY_HD double abs_of(T x) { return std::fabs(static_cast<double>(x)); }

/// Fast L1 norm: float64 accumulator of |x| (each |x| converts exactly), rounded once to Out.
template <class T, class Out> struct abs_sum_reducer {
  using acc_t = double;
  using result_t = Out;
  static TALLY_HD acc_t identity() { return 0.0; }
  static TALLY_HD void accumulate(acc_t& a, T x) { a += abs_of(x); }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { status = 0; return static_cast<Out>(a); }
};

/// Max norm: max |x| with NaN propagating (a NaN anywhere gives NaN); identity 0 (the max norm
/// of nothing). Exact: no arithmetic besides |x| and comparisons; the double converts to Out
/// once (exact for Out = T).
template <class T, class Out> struct max_abs_reducer {
  using acc_t = double;
  using result_t = Out;
  static TALLY_HD acc_t identity() { return 0.0; }
  static TALLY_HD acc_t pick(acc_t a, acc_t b) {
    if (a != a) return a;
    if (b != b) return b;
    return a < b ? b : a;
  }
  static TALLY_HD void accumulate(acc_t& a, T x) { a = pick(a, abs_of(x)); }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return pick(a, b); }
  static TALLY_HD result_t finalize(acc_t a, int& status) { status = 0; return static_cast<Out>(a); }
};

/// Number of elements that are not zero: NaN counts (NaN != 0), -0.0 does not (-0.0 == 0).
template <class T> struct count_nonzero_reducer {
  using acc_t = std::int64_t;
  using result_t = std::int64_t;
  static TALLY_HD acc_t identity() { return 0; }
  static TALLY_HD bool nonzero(T x) {
    if constexpr (requires { x.bits; }) return (x.bits & 0x7fffu) != 0;  // float16, bfloat16 storage: not +-0
    else return x != T(0);
  }
  static TALLY_HD void accumulate(acc_t& a, T x) { a += nonzero(x) ? 1 : 0; }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return a + b; }
  static TALLY_HD result_t finalize(acc_t a, int& status) { status = 0; return a; }
};

/// Running count, mean and sum of squared deviations (M2) of a set of values.
struct moments {
  double n, mean, m2;
};

/// Fast-mode variance: Welford's update per element (B. P. Welford, "Note on a method for
/// calculating corrected sums of squares and products", Technometrics 4(3), 1962) and the
/// pairwise merge of Chan, Golub and LeVeque ("Updating formulae and a pairwise algorithm for
/// computing sample variances", Stanford CS tech. report STAN-CS-79-773, 1979):
///   n = na + nb, d = mean_b - mean_a, mean = mean_a + d nb / n, M2 = M2a + M2b + d^2 na nb / n.
/// The accumulator itself is the result; the caller divides M2 by n - ddof.
template <class T> struct welford_reducer {
  using acc_t = moments;
  using result_t = moments;
  static TALLY_HD acc_t identity() { return {0.0, 0.0, 0.0}; }
  static TALLY_HD void accumulate(acc_t& a, T x) {
    double v = static_cast<double>(x);
    a.n += 1.0;
    double d = v - a.mean;
    a.mean += d / a.n;
    a.m2 += d * (v - a.mean);
  }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) {
    if (a.n == 0.0) return b;
    if (b.n == 0.0) return a;
    double n = a.n + b.n;
    double d = b.mean - a.mean;
    double f = b.n / n;
    return {n, a.mean + d * f, a.m2 + b.m2 + d * d * a.n * f};
  }
  static TALLY_HD result_t finalize(acc_t a, int& status) { status = 0; return a; }
};

/// Fast-mode variance (or standard deviation) from merged moments: M2 / (n - ddof), in float64.
inline double finish_variance(moments m, std::uint64_t divisor, bool take_sqrt) {
  double v = m.m2 / static_cast<double>(divisor);
  if (m.m2 != m.m2 || m.mean != m.mean) v = m.m2 + m.mean;  // NaN (a NaN or an infinity seen)
  return take_sqrt ? std::sqrt(v) : v;
}

}  // namespace tally::ops
