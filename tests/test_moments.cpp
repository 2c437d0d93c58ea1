// tally::var and tally::std_dev. Oracle: MPFR: S1 and S2 summed exactly (9400 bits hold every
// float64 square and sum), n S2 - S1^2 exact, divided by n (n - ddof) at 9400 bits and
// rounded once more (a quotient of this size is never within 2^-9000 of a rounding boundary
// without being on it), the square root likewise. Fast mode: an explicit relative bound around
// the exact variance (MPFR on the cpu backend, the cpu backend's exact var on the cuda backend,
// as the GPU machine has no MPFR). Exact mode on the cuda backend: a clear refusal.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support.hpp"

#if defined(TALLY_TEST_HAVE_MPFR)
#include <mpfr.h>
#endif

namespace tt {
namespace {

class Moments : public Typed {
 protected:
  template <class T, class Out> static Out oracle(const std::vector<T>& x, std::int64_t ddof, bool take_sqrt) {
#if defined(TALLY_TEST_HAVE_MPFR)
    mpfr_t s1, s2, a, q;
    mpfr_inits2(9400, s1, s2, a, q, static_cast<mpfr_ptr>(nullptr));
    mpfr_set_zero(s1, 1);
    mpfr_set_zero(s2, 1);
    for (T v : x) {
      if constexpr (std::is_integral_v<T>) mpfr_set_si(a, static_cast<long>(v), MPFR_RNDN);
      else mpfr_set_d(a, static_cast<double>(v), MPFR_RNDN);
      mpfr_add(s1, s1, a, MPFR_RNDN);
      mpfr_sqr(a, a, MPFR_RNDN);
      mpfr_add(s2, s2, a, MPFR_RNDN);
    }
    const long n = static_cast<long>(x.size());
    mpfr_mul_si(s2, s2, n, MPFR_RNDN);
    mpfr_sqr(s1, s1, MPFR_RNDN);
    mpfr_sub(a, s2, s1, MPFR_RNDN);  // n S2 - S1^2, exact
    mpfr_div_si(q, a, n, MPFR_RNDN);
    mpfr_div_si(q, q, n - static_cast<long>(ddof), MPFR_RNDN);
    if (take_sqrt) mpfr_sqrt(q, q, MPFR_RNDN);
    Out r;
    if constexpr (std::is_same_v<Out, float>) r = mpfr_get_flt(q, MPFR_RNDN);
    else r = mpfr_get_d(q, MPFR_RNDN);
    mpfr_clears(s1, s2, a, q, static_cast<mpfr_ptr>(nullptr));
    return r;
#else
    (void)x, (void)ddof, (void)take_sqrt;
    return Out(0);
#endif
  }
  // The correctly rounded float64 variance: MPFR on the cpu backend; on the cuda backend the
  // cpu backend's exact var (held to MPFR wherever the tests build with it: the GPU machine has
  // no MPFR).
  template <class T> double exact_var(const std::vector<T>& x, std::int64_t ddof) const {
    return reference_of(
        b(), "cpu exact var", [&] { return tally::var<T, double>(x, ddof, cpu_backend()); },
        [&] { return oracle<T, double>(x, ddof, false); });
  }
  template <class T, class Out>
  ::testing::AssertionResult ok(const std::vector<T>& x, std::int64_t ddof = 0, std::size_t off = 0) {
    auto bx = put(x, off);
    Out v = tally::var<T, Out>(bx.in(), ddof, opt()), s = tally::std_dev<T, Out>(bx.in(), ddof, opt());
    // MPFR on the cpu backend; the cpu backend's bits on the cuda backend (see exact_var).
    Out wv = reference_of(
        b(), "cpu exact var", [&] { return tally::var<T, Out>(x, ddof, cpu_backend()); },
        [&] { return oracle<T, Out>(x, ddof, false); });
    Out ws = reference_of(
        b(), "cpu exact std", [&] { return tally::std_dev<T, Out>(x, ddof, cpu_backend()); },
        [&] { return oracle<T, Out>(x, ddof, true); });
    if (same_bits(v, wv) && same_bits(s, ws)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << std::hexfloat << "var got " << v << " want " << wv << "; std got " << s
                                         << " want " << ws << " (n=" << x.size() << ", ddof=" << ddof << ")";
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, Moments,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float32, dtype::float64, dtype::int32, dtype::int64)),
                         [](const auto& info) { return param_name(info); });

TEST_P(Moments, ExactIsCorrectlyRounded) {
  if (b() == backend::cuda && t() == dtype::int64) {
    // Exact var/std of 64-bit integer data are not on the cuda backend in this version: every
    // result type and ddof with data to reduce is refused with a clear error, never a number.
    // (int32 data is widened to float64 on the GPU and goes through the floating path below.)
    with_type(t(), [&]<class T>() {
      for (std::size_t n : {1u, 2u, 1001u}) {
        auto x = random_values<T>(static_cast<std::int64_t>(n), dist::narrow, 11 * n);
        auto bx = put(x);
        for (std::int64_t ddof : {0, -3}) {
          SCOPED_TRACE("n=" + std::to_string(n) + " ddof=" + std::to_string(ddof));
          EXPECT_TRUE(throws_tally([&] { tally::var<T, double>(bx.in(), ddof, opt()); }, errc::invalid_argument,
                                   {"tally::var", "not available on the cuda backend yet"}));
          EXPECT_TRUE(throws_tally([&] { tally::std_dev<T, float>(bx.in(), ddof, opt()); }, errc::invalid_argument,
                                   {"tally::std", "not available on the cuda backend yet"}));
        }
      }
    });
    return;
  }
  // Floating (and int32, widened) data on the cuda backend: the GPU's exact states of sum x and
  // sum x^2, rounded together (tally::round_variance), must give the cpu backend's bits.
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (b() != backend::cuda) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_type(t(), [&]<class T>() {
    using Out = std::conditional_t<std::is_floating_point_v<T>, T, double>;
    std::vector<std::size_t> lengths = {1u, 2u, 3u, 10u, 1001u, 70001u};
    if (b() == backend::cuda) lengths.push_back(2000003u);  // (many blocks; reference: the cpu backend)
    for (std::size_t n : lengths) {
      SCOPED_TRACE("n=" + std::to_string(n));
      for (dist d : {dist::uniform, dist::wide, dist::narrow}) {
        auto x = random_values<T>(static_cast<std::int64_t>(n), d, 11 * n + int(d));
        EXPECT_TRUE((ok<T, Out>(x, 0))) << dist_name(d);
        if (n > 1) {
          EXPECT_TRUE((ok<T, Out>(x, 1, 1))) << dist_name(d);
        }
        EXPECT_TRUE((ok<T, float>(x, 0, 2))) << dist_name(d);
        EXPECT_TRUE((ok<T, Out>(x, -3))) << dist_name(d);
      }
      if constexpr (std::is_floating_point_v<T>) {
        // A large mean and a tiny spread (the textbook formula's cancellation), and the ends of
        // the range: squares that overflow T, and squares far below its subnormals.
        std::mt19937_64 g(n);
        std::vector<T> shifted(n), huge(n), tiny(n);
        const int emax = std::numeric_limits<T>::max_exponent - 2, emin = std::numeric_limits<T>::min_exponent - 20;
        for (std::size_t i = 0; i < n; ++i) {
          double m = 1.0 + double(g() >> 12) * 0x1.0p-52;
          shifted[i] = static_cast<T>(1e6 + double(g() % 1000) * 1e-3);
          huge[i] = static_cast<T>((g() & 1 ? -1 : 1) * std::ldexp(m, emax - int(g() % 4)));
          tiny[i] = static_cast<T>((g() & 1 ? -1 : 1) * std::ldexp(m, emin + int(g() % 40)));
        }
        EXPECT_TRUE((ok<T, T>(shifted)));
        EXPECT_TRUE((ok<T, T>(huge)));  // +inf (var), a finite std
        EXPECT_TRUE((ok<T, T>(tiny)));
        EXPECT_TRUE((ok<T, double>(tiny)));
      }
    }
    if constexpr (std::is_same_v<T, double>) {
      EXPECT_TRUE((ok<T, T>({1e200, -1e200, 3e200})));  // var overflows to inf, std 1.6e200
      EXPECT_TRUE((ok<T, T>({1e-200, -1e-200, 5e-201})));  // var underflows to 0, std ~1e-200
      EXPECT_TRUE((ok<T, T>({1e-160, 3e-160})));  // subnormal var
      EXPECT_EQ(tally::std_dev<T>(put(std::vector<T>{1e200, -1e200}).in(), 0, opt()), 1e200);
    }
    if constexpr (std::is_integral_v<T>) {  // the extremes of the type: S2 near 2^(2 bits) n
      std::vector<T> ext = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), 0};
      EXPECT_TRUE((ok<T, double>(ext)));
      EXPECT_TRUE((ok<T, double>(ext, 1)));
    }
    // Constant data: exactly +0 (var and std).
    std::vector<T> c(1000, T(3));
    EXPECT_TRUE(same_bits(tally::var<T, Out>(put(c).in(), 0, opt()), Out(0)));
    EXPECT_TRUE(same_bits(tally::std_dev<T, Out>(put(c).in(), 1, opt()), Out(0)));
    EXPECT_EQ((tally::var<T, Out>(put(std::vector<T>{1, 2, 3, 4}).in(), 0, opt())), Out(1.25));
    EXPECT_EQ((tally::var<T, Out>(put(std::vector<T>{1, 2, 3, 4}).in(), 1, opt())), Out(5) / Out(3));
  });
}

TEST_P(Moments, FastWithinAnExplicitBound) {
  // Welford/Chan in float64: for these sizes and data (condition number kappa = sqrt(1 +
  // n mean^2 / M2) below 2e3), the relative error stays below 1e-10 (the forward error bound
  // of the pairwise algorithm is of order (log2 n + chunk length) u kappa; Chan, Golub and
  // LeVeque 1983), rounding to float32 adds one float32 ulp.
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (b() != backend::cuda) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_type(t(), [&]<class T>() {
    using Out = std::conditional_t<std::is_floating_point_v<T>, T, double>;
    tally::options o = opt();
    o.accuracy = tally::accuracy::fast;
    std::vector<std::size_t> lengths = {2u, 1000u, 300001u};
    // (Millions only on the GPU, where the reference is the cpu backend, not MPFR: Chan's
    // merge across hundreds of blocks.)
    if (b() == backend::cuda) lengths.push_back(3000017u);
    for (std::size_t n : lengths) {
      auto x = random_values<T>(static_cast<std::int64_t>(n), dist::narrow, 3 * n);
      for (auto& v : x) v = static_cast<T>(v + T(1000));  // a mean away from 0
      for (std::int64_t ddof : {0, 1}) {
        double got = tally::var<T, Out>(put(x).in(), ddof, o);
        double want = exact_var(x, ddof);
        double tol = std::is_same_v<Out, float> ? 1.2e-7 : 1e-10;
        EXPECT_LE(std::fabs(got - want), tol * want) << "n=" << n << " ddof=" << ddof;
        double gs = tally::std_dev<T, Out>(put(x).in(), ddof, o);
        EXPECT_LE(std::fabs(gs - std::sqrt(want)), tol * std::sqrt(want));
      }
    }
  });
}

TEST_P(Moments, DegreesOfFreedomSpecialValuesAndEmpty) {
  with_type(t(), [&]<class T>() {
    using Out = std::conditional_t<std::is_floating_point_v<T>, T, double>;
    for (auto acc : {tally::accuracy::exact, tally::accuracy::fast}) {
      if (acc == tally::accuracy::exact && b() == backend::cuda) continue;
      tally::options o = opt();
      o.accuracy = acc;
      std::vector<T> x = {1, 2, 4};
      EXPECT_TRUE(std::isnan(tally::var<T, Out>(put(std::vector<T>{}).in(), 0, o)));  // NumPy: NaN
      EXPECT_TRUE(std::isnan(tally::var<T, Out>(put(x).in(), 3, o)));                 // n - ddof = 0
      EXPECT_TRUE(std::isnan(tally::std_dev<T, Out>(put(x).in(), 5, o)));             // n - ddof < 0
      EXPECT_TRUE(same_bits(tally::var<T, Out>(put(std::vector<T>{7}).in(), 0, o), Out(0)));
      if constexpr (std::is_floating_point_v<T>) {
        const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
        EXPECT_TRUE(std::isnan(tally::var<T>(put(std::vector<T>{1, nan, 2}).in(), 0, o)));
        EXPECT_TRUE(std::isnan(tally::var<T>(put(std::vector<T>{1, inf, 2}).in(), 0, o)));
        EXPECT_TRUE(std::isnan(tally::std_dev<T>(put(std::vector<T>{-inf}).in(), 0, o)));
        // finite data whose variance overflows: +inf in both modes, and the standard deviation
        // of the exact variance (fast mode's running mean overflowed to -inf inside Welford's
        // update and gave -inf / NaN before)
        const T big = std::numeric_limits<T>::max();
        EXPECT_EQ(tally::var<T>(put(std::vector<T>{big, -big}).in(), 0, o), inf);
        EXPECT_TRUE(same_bits(tally::std_dev<T>(put(std::vector<T>{big, -big}).in(), 0, o), big));  // sqrt(big^2)
        EXPECT_EQ(tally::std_dev<T>(put(std::vector<T>{big / 2, -big, big}).in(), 1, o), inf);
        EXPECT_EQ(tally::var<T>(put(std::vector<T>{-big, big, T(5)}).in(), 0, o), inf);
      }
    }
  });
}

TEST_P(Moments, ExactOfIntegersOnCudaIsAnErrorAndBadArguments) {
  std::vector<double> x = {1.0, 2.0};
  auto bx = put(x);
  tally::array_ref r{bx.data(), 2, dtype::float64};
  double out = 0;
  tally::var(r, 0, false, &out, dtype::float64, opt());  // exact on both backends for floating data
  EXPECT_EQ(out, 0.25);
  if (b() == backend::cuda) {
    std::vector<std::int64_t> xi = {1, 2};
    auto bi = put(xi);
    tally::array_ref ri{bi.data(), 2, dtype::int64};
    EXPECT_TRUE(throws_tally([&] { tally::var(ri, 0, false, &out, dtype::float64, opt()); }, errc::invalid_argument,
                             {"integer data", "not available on the cuda backend yet"}));
  }
  EXPECT_TRUE(throws_tally([&] { tally::var(r, 0, false, nullptr, dtype::float64, opt()); }, errc::null_pointer, {"result"}));
  EXPECT_TRUE(throws_tally([&] { tally::var(r, 0, true, &out, dtype::int32, opt()); }, errc::invalid_argument, {"std", "float32 or float64"}));
  EXPECT_TRUE(throws_tally([&] { tally::var(r, std::numeric_limits<std::int64_t>::min(), false, &out, dtype::float64, opt()); },
                           errc::invalid_argument, {"ddof"}));
  tally::array_ref bad{nullptr, 3, dtype::float64};
  EXPECT_TRUE(throws_tally([&] { tally::var(bad, 0, false, &out, dtype::float64, opt()); }, errc::null_pointer));
}

}  // namespace
}  // namespace tt
