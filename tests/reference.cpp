#include "reference.hpp"

#include "support.hpp"

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdio>

#if defined(TALLY_TEST_HAVE_MPFR)
#include <mpfr.h>
#endif

namespace tt {
namespace {

int ceil_log2(std::int64_t n) {
  int k = 0;
  while ((std::int64_t(1) << k) < n) ++k;
  return k;
}

/// Half an ulp of float32 at magnitude m (m >= 0, finite): the most the final rounding of a
/// float64 value of magnitude <= m to float32 can move it.
double half_ulp32(double m) {
  int e = m > 0 ? std::ilogb(m) : -126;
  if (e < -126) e = -126;  // subnormal range: ulp 2^-149
  return std::ldexp(1.0, e - 23 - 1);
}

::testing::AssertionResult report(bool ok, std::int64_t n, double result, double exact, double err,
                                  double bound, const char* how) {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "n=%lld result=%.17g (%a) exact~%.17g err=%.6g bound=%.6g err/bound=%.4g [%s]",
                static_cast<long long>(n), result, result, exact, err, bound,
                bound > 0 ? err / bound : INFINITY, how);
  return ok ? ::testing::AssertionSuccess() << buf : ::testing::AssertionFailure() << buf;
}

}  // namespace

std::int64_t bound_depth(tally::backend b, std::int64_t n) {
  std::int64_t L = 128;
  if (b == tally::backend::cuda) {
    std::int64_t per = 8192 * static_cast<std::int64_t>(grid_sms());
    L = (n + per - 1) / per + 64;
  }
  return L + ceil_log2(n) + 8;
}

#if defined(TALLY_TEST_HAVE_MPFR)

const char* oracle_name() { return "MPFR exact"; }

::testing::AssertionResult within_bound(tally::backend b, double r, bool f32, const double* x, const double* y,
                                        std::int64_t n) {
  if (!std::isfinite(r)) return ::testing::AssertionFailure() << "result is not finite: " << r;
  // Size an accumulator that holds every partial sum exactly: from the lowest bit of any term
  // (or of the result) to the top bit of the largest term plus log2(n) carry bits.
  long top = LONG_MIN, low = LONG_MAX;
  auto note = [&](long t, long l) {
    top = std::max(top, t);
    low = std::min(low, l);
  };
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]) || (y && !std::isfinite(y[i])))
      return ::testing::AssertionFailure() << "non-finite input at " << i;
    int ex = 0, ey = 0;
    if (x[i] == 0 || (y && y[i] == 0)) continue;
    std::frexp(x[i], &ex);
    if (y) {
      std::frexp(y[i], &ey);
      note(ex + ey, ex + ey - 106);
    } else {
      note(ex, ex - 53);
    }
  }
  if (r != 0) {
    int er = 0;
    std::frexp(r, &er);
    note(er, er - 53);
  }
  mpfr_prec_t prec = top == LONG_MIN ? 128 : static_cast<mpfr_prec_t>(top - low + 64 + ceil_log2(n + 1));
  if (prec < 128) prec = 128;

  mpfr_t S, A, t, E, B, M;
  mpfr_inits2(prec, S, E, static_cast<mpfr_ptr>(nullptr));
  mpfr_inits2(128, t, A, B, M, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_zero(S, 1);
  // sum|t_i| only scales the bound: accumulated in long double and rounded up below.
  long double a = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (!y) {
      mpfr_add_d(S, S, x[i], MPFR_RNDN);  // exact: prec covers every partial sum
      a += std::fabs(static_cast<long double>(x[i]));
      continue;
    }
    double p = x[i] * y[i];
    if (std::isfinite(p) && (p == 0 || std::fabs(p) > 0x1p-900)) {
      double e = std::fma(x[i], y[i], -p);  // x*y == p + e exactly (no overflow / underflow)
      mpfr_add_d(S, S, p, MPFR_RNDN);
      mpfr_add_d(S, S, e, MPFR_RNDN);
      a += std::fabs(static_cast<long double>(p)) + std::fabs(static_cast<long double>(e));
    } else {
      mpfr_set_d(t, x[i], MPFR_RNDN);
      mpfr_mul_d(t, t, y[i], MPFR_RNDN);  // 53 x 53 bits: exact in 128
      mpfr_add(S, S, t, MPFR_RNDN);
      mpfr_abs(t, t, MPFR_RNDN);
      a += mpfr_get_d(t, MPFR_RNDU);
    }
  }
  // a has relative error <= (n + 1) * 2^-64 (positive terms), and |p| + |e| >= |x*y|.
  mpfr_set_ld(A, a, MPFR_RNDU);
  mpfr_mul_d(A, A, 1 + std::ldexp(static_cast<double>(n + 2), -63), MPFR_RNDU);
  mpfr_set_d(E, r, MPFR_RNDN);
  mpfr_sub(E, E, S, MPFR_RNDN);  // exact
  mpfr_abs(E, E, MPFR_RNDN);
  mpfr_mul_ui(B, A, static_cast<unsigned long>(bound_depth(b, n)), MPFR_RNDU);
  mpfr_div_2ui(B, B, 53, MPFR_RNDU);
  if (f32) {
    mpfr_abs(M, S, MPFR_RNDU);
    mpfr_add(M, M, B, MPFR_RNDU);
    mpfr_add_d(B, B, half_ulp32(mpfr_get_d(M, MPFR_RNDU)), MPFR_RNDU);
  }
  bool ok = mpfr_cmp(E, B) <= 0;
  auto res = report(ok, n, r, mpfr_get_d(S, MPFR_RNDN), mpfr_get_d(E, MPFR_RNDU),
                    mpfr_get_d(B, MPFR_RNDD), oracle_name());
  mpfr_clears(S, A, E, t, B, M, static_cast<mpfr_ptr>(nullptr));
  return res;
}

#else  // no MPFR: compensated long double reference

static_assert(LDBL_MANT_DIG >= 64, "the fallback reference needs an extended long double");

const char* oracle_name() { return "long double Neumaier"; }

::testing::AssertionResult within_bound(tally::backend b, double r, bool f32, const double* x, const double* y,
                                        std::int64_t n) {
  if (!std::isfinite(r)) return ::testing::AssertionFailure() << "result is not finite: " << r;
  long double s = 0, c = 0, a = 0;
  auto add = [&](long double v) {
    long double u = s + v;
    if (std::fabs(s) >= std::fabs(v)) c += (s - u) + v;
    else c += (v - u) + s;
    s = u;
    a += std::fabs(v);
  };
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]) || (y && !std::isfinite(y[i])))
      return ::testing::AssertionFailure() << "non-finite input at " << i;
    if (y) {
      double p = x[i] * y[i];
      double e = std::fma(x[i], y[i], -p);  // x*y == p + e exactly (no underflow in these tests)
      add(p);
      add(e);
    } else {
      add(x[i]);
    }
  }
  long double S = s + c;
  long double err = std::fabs(static_cast<long double>(r) - S);
  // a overestimates sum|t_i| by at most n * 2^-64 relative (and by |e| <= 2^-53 |p| for
  // products): both lenient by far less than one unit of the bound.
  long double bound = bound_depth(b, n) * std::ldexp(1.0L, -53) * a * (1 + std::ldexp(1.0L, -40));
  bound += std::ldexp(1.0L, -61) * a;  // the reference's own error (Neumaier, 64-bit mantissa)
  if (f32) bound += half_ulp32(static_cast<double>(std::fabs(S) + bound));
  return report(err <= bound, n, r, static_cast<double>(S), static_cast<double>(err),
                static_cast<double>(bound), oracle_name());
}

#endif

}  // namespace tt
