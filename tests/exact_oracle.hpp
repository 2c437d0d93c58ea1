// An exact oracle for the distributed and exact-state tests: the exact sum (or dot product, or
// sum of squares) of the terms with MPFR, wide enough to hold every bit, then ONE rounding to
// the output type (the value itself, its mean, or its square root), with IEEE special values.
// Without MPFR (the GPU machine) `have_oracle()` is false and callers compare against the CPU
// backend's single-process result instead (which CI checks against MPFR).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(TALLY_TEST_HAVE_MPFR)
#include <mpfr.h>
#endif

namespace tt::oracle {

enum class finish { value, mean, sqrt };

constexpr bool have_oracle() {
#if defined(TALLY_TEST_HAVE_MPFR)
  return true;
#else
  return false;
#endif
}

/// Sum of x (y empty), of x[i]*y[i], or (squares) of x[i]^2, finished as `f` and rounded once
/// to Out. Results must not be subnormal for mean and sqrt (they round at Out's precision).
template <class T, class Out>
Out exact(const std::vector<T>& x, const std::vector<T>& y, finish f = finish::value, bool squares = false) {
  const bool dot = squares || !y.empty();
  bool nan = false, pinf = false, ninf = false, all_neg_zero = true;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double a = static_cast<double>(x[i]), b = dot ? static_cast<double>(squares ? x[i] : y[i]) : 1.0;
    double t = a * b;
    if (!std::isfinite(a) || !std::isfinite(b)) {
      if (std::isnan(t)) nan = true;
      else if (t > 0) pinf = true;
      else ninf = true;
      all_neg_zero = false;
      continue;
    }
    bool neg_zero = dot ? ((a == 0 || b == 0) && std::signbit(a) != std::signbit(b)) : (a == 0 && std::signbit(a));
    if (!neg_zero) all_neg_zero = false;
  }
  constexpr Out qnan = std::numeric_limits<Out>::quiet_NaN(), inf = std::numeric_limits<Out>::infinity();
  if (f == finish::mean && x.empty()) return qnan;
  if (nan || (pinf && ninf)) return qnan;
  if (pinf) return inf;
  if (ninf) return -inf;
  if (x.empty()) return Out(0);
#if defined(TALLY_TEST_HAVE_MPFR)
  mpfr_t s, p, a, b, r;
  mpfr_inits2(4600, s, p, a, b, static_cast<mpfr_ptr>(nullptr));
  mpfr_init2(r, std::is_same_v<Out, float> ? 24 : 53);
  mpfr_set_zero(s, 1);
  for (std::size_t i = 0; i < x.size(); ++i) {
    mpfr_set_d(a, static_cast<double>(x[i]), MPFR_RNDN);
    if (dot) {
      mpfr_set_d(b, static_cast<double>(squares ? x[i] : y[i]), MPFR_RNDN);
      mpfr_mul(p, a, b, MPFR_RNDN);  // exact at 4600 bits
      mpfr_add(s, s, p, MPFR_RNDN);  // exact
    } else {
      mpfr_add(s, s, a, MPFR_RNDN);
    }
  }
  Out out;
  if (f == finish::value) {
    if (mpfr_zero_p(s)) mpfr_set_zero(s, all_neg_zero ? -1 : 1);
    if constexpr (std::is_same_v<Out, float>) out = mpfr_get_flt(s, MPFR_RNDN);
    else out = mpfr_get_d(s, MPFR_RNDN);
  } else {
    if (f == finish::mean) mpfr_div_d(r, s, static_cast<double>(x.size()), MPFR_RNDN);  // one rounding
    else mpfr_sqrt(r, s, MPFR_RNDN);
    if (mpfr_zero_p(r)) mpfr_set_zero(r, (f == finish::mean && all_neg_zero) ? -1 : 1);
    if constexpr (std::is_same_v<Out, float>) out = mpfr_get_flt(r, MPFR_RNDN);  // exact: r has 24 bits
    else out = mpfr_get_d(r, MPFR_RNDN);
  }
  mpfr_clears(s, p, a, b, r, static_cast<mpfr_ptr>(nullptr));
  return out;
#else
  return qnan;  // callers check have_oracle() first
#endif
}

/// The exact mean of finite x (integers of up to 64 bits, or floating values), rounded once to
/// Out, subnormal results included: the sum exact at 4600 bits, the quotient at 4600 bits
/// rounded once more (a quotient of these sizes is never within 2^-4600 of a rounding boundary
/// without being on it). Without MPFR: NaN (callers check have_oracle() first).
template <class T, class Out> Out exact_mean(const std::vector<T>& x) {
#if defined(TALLY_TEST_HAVE_MPFR)
  mpfr_t s, q;
  mpfr_inits2(4600, s, q, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_zero(s, 1);
  for (T v : x) {
    if constexpr (std::is_unsigned_v<T>) mpfr_add_ui(s, s, static_cast<unsigned long>(v), MPFR_RNDN);
    else if constexpr (std::is_integral_v<T>) mpfr_add_si(s, s, static_cast<long>(v), MPFR_RNDN);
    else mpfr_add_d(s, s, static_cast<double>(v), MPFR_RNDN);  // exact at 4600 bits
  }
  mpfr_div_ui(q, s, static_cast<unsigned long>(x.size()), MPFR_RNDN);
  Out r;
  if constexpr (std::is_same_v<Out, float>) r = mpfr_get_flt(q, MPFR_RNDN);
  else r = mpfr_get_d(q, MPFR_RNDN);
  mpfr_clears(s, q, static_cast<mpfr_ptr>(nullptr));
  return r;
#else
  (void)x;
  return std::numeric_limits<Out>::quiet_NaN();
#endif
}

}  // namespace tt::oracle
