// tally::norm1 (asum) and tally::norm_inf (amax). Oracle: MPFR for the exact L1 norm (the
// exact sum of |x| at 2400 bits, which holds every float64 sum exactly, rounded once; on the
// cuda backend the cpu backend's bits, as the GPU machine has no MPFR), the
// documented fast-mode bound of `sum` over |x|, and std::fabs / comparisons for the max norm.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "reference.hpp"
#include "support.hpp"

#if defined(TALLY_TEST_HAVE_MPFR)
#include <mpfr.h>
#endif

namespace tt {
namespace {

class Norms : public Typed {
 protected:
  template <class T, class Out> static Out asum_oracle(const std::vector<T>& x) {
#if defined(TALLY_TEST_HAVE_MPFR)
    mpfr_t s;
    mpfr_init2(s, 2400);  // float64 magnitudes span 2^-1074..2^1024: 2100 bits and headroom
    mpfr_set_zero(s, 1);
    for (T v : x) mpfr_add_d(s, s, std::fabs(static_cast<double>(v)), MPFR_RNDN);  // exact
    Out r;
    if constexpr (std::is_same_v<Out, float>) r = mpfr_get_flt(s, MPFR_RNDN);
    else r = mpfr_get_d(s, MPFR_RNDN);
    mpfr_clear(s);
    return r;
#else
    (void)x;
    return Out(0);
#endif
  }
  // The cuda backend is held to the cpu backend's bits (the GPU machine has no MPFR; the cpu
  // backend is held to MPFR wherever the tests build with it).
  template <class T, class Out> Out asum_reference(const std::vector<T>& x) const {
    return reference_of(
        b(), "cpu norm1", [&] { return tally::norm1<T, Out>(x, cpu_backend()); }, [&] { return asum_oracle<T, Out>(x); });
  }
  template <class T, class Out> ::testing::AssertionResult asum_ok(const std::vector<T>& x, std::size_t off = 0) {
    auto bx = put(x, off);
    Out got = tally::norm1<T, Out>(bx.in(), opt()), want = asum_reference<T, Out>(x);
    if (same_bits(got, want)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << std::hexfloat << "got " << got << " want " << want;
  }
  template <class T> static T amax_ref(const std::vector<T>& x) {
    T m = 0;
    for (T v : x) {
      if (std::isnan(v)) return v;
      m = std::max(m, std::fabs(v));
    }
    return m;
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, Norms,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float32, dtype::float64)),
                         [](const auto& info) { return param_name(info); });

template <class T> std::vector<std::vector<T>> norm_data(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  const int emax = std::numeric_limits<T>::max_exponent - 2, emin = std::numeric_limits<T>::min_exponent - 20;
  std::vector<T> u(n), wide(n), huge(n), tiny(n);
  for (std::size_t i = 0; i < n; ++i) {
    double m = 1.0 + double(g() >> 12) * 0x1.0p-52;
    double s = g() & 1 ? -1.0 : 1.0;
    u[i] = static_cast<T>(double(g() >> 11) * 0x1.0p-53 - 0.5);
    wide[i] = static_cast<T>(s * std::ldexp(m, int(g() % 121) - 60));
    huge[i] = static_cast<T>(s * std::ldexp(m, emax - int(g() % 8)));  // the sum overflows T for n > 4
    tiny[i] = static_cast<T>(s * std::ldexp(m, emin + int(g() % 8)));  // subnormals
  }
  return {u, wide, huge, tiny};
}

TEST_P(Norms, L1ExactIsCorrectlyRounded) {
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (b() != backend::cuda) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_float_type(t(), [&]<class T>() {
    std::vector<std::size_t> lengths = {1u, 2u, 3u, 17u, 1000u, 70001u};
    // (Millions only on the GPU, where the reference is the cpu backend, not MPFR: hundreds of
    // blocks of the exact kernel and their combine.)
    if (b() == backend::cuda) lengths.push_back(2000003u);
    for (std::size_t n : lengths) {
      SCOPED_TRACE("n=" + std::to_string(n));
      for (const auto& x : norm_data<T>(n, 31 + n)) {
        EXPECT_TRUE((asum_ok<T, T>(x)));
        EXPECT_TRUE((asum_ok<T, double>(x, 1)));
        EXPECT_TRUE((asum_ok<T, float>(x, 3)));
      }
    }
    // 1e200-scale float64 / 1e30-scale float32 elements: no overflow before the rounding.
    const T big = std::is_same_v<T, double> ? T(1e200) : T(1e30);
    EXPECT_TRUE((asum_ok<T, T>({big, -big, big})));
    EXPECT_TRUE((asum_ok<T, T>({std::numeric_limits<T>::max(), -std::numeric_limits<T>::max()})));  // inf
  });
}

TEST_P(Norms, L1FastWithinTheDocumentedBound) {
  with_float_type(t(), [&]<class T>() {
    for (std::size_t n : {1u, 1000u, 300001u}) {
      auto x = random_values<T>(static_cast<std::int64_t>(n), dist::wide, 5 + n);
      tally::options o = opt();
      o.accuracy = tally::accuracy::fast;
      T got = tally::norm1<T>(put(x).in(), o);
      std::vector<T> ax(x.size());
      for (std::size_t i = 0; i < n; ++i) ax[i] = std::fabs(x[i]);
      EXPECT_TRUE(within_bound(b(), got, ax)) << "n=" << n;
    }
  });
}

// The bound of `sum` holds for data that a serial fold rounds the same way at every step: a
// 1 (here -1) followed by magnitudes of half its ulp, each lost by round-to-nearest-even, once
// per 2^15 elements. A fold of 2^15 elements in a row lost 2^15 of them; the lanes of the fast
// sum lose at most 127. A float64 result, so no float32 rounding hides the error.
TEST_P(Norms, L1FastMeetsTheBoundWhereSerialFoldsDoNot) {
  with_float_type(t(), [&]<class T>() {
    for (std::int64_t n : {std::int64_t(1) << 15, std::int64_t(1) << 17, (std::int64_t(1) << 17) + 3}) {
      std::vector<T> x(static_cast<std::size_t>(n));
      std::vector<double> ax(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = i % (1u << 15) == 0 ? T(-1) : T(i % 2 ? 0x1p-53 : -0x1p-53);
        ax[i] = std::fabs(static_cast<double>(x[i]));
      }
      tally::options o = opt();
      o.accuracy = tally::accuracy::fast;
      const double got = tally::norm1<T, double>(put(x).in(), o);
      EXPECT_TRUE(within_bound(b(), got, false, ax.data(), nullptr, n)) << "n=" << n;
    }
  });
}

TEST_P(Norms, MaxNormIsExact) {
  with_float_type(t(), [&]<class T>() {
    for (std::size_t n : {1u, 2u, 7u, 1000u, 70001u, 1000003u}) {
      for (const auto& x : norm_data<T>(n, 7 + n)) {
        auto bx = put(x, n % 3);
        EXPECT_TRUE(same_bits(tally::norm_inf<T>(bx.in(), opt()), amax_ref(x))) << "n=" << n;
        EXPECT_TRUE(same_bits((tally::norm_inf<T, double>(bx.in(), opt())), double(amax_ref(x))));
      }
    }
    // The largest magnitude is negative, and last; then first.
    std::vector<T> v = {1, -2, 3, -1e30f};
    EXPECT_EQ(tally::norm_inf<T>(put(v).in(), opt()), T(1e30f));
    v = {-1e30f, 1, 2};
    EXPECT_EQ(tally::norm_inf<T>(put(v).in(), opt()), T(1e30f));
  });
}

TEST_P(Norms, SpecialValuesAndEmpty) {
  with_float_type(t(), [&]<class T>() {
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    for (auto acc : {tally::accuracy::exact, tally::accuracy::fast}) {
      tally::options o = opt();
      o.accuracy = acc;
      EXPECT_TRUE(same_bits(tally::norm1<T>(put(std::vector<T>{}).in(), o), T(0)));
      EXPECT_TRUE(same_bits(tally::norm1<T>(put(std::vector<T>{T(-0.0), T(-0.0)}).in(), o), T(0)));  // +0
      EXPECT_EQ(tally::norm1<T>(put(std::vector<T>{1, -inf}).in(), o), inf);
      EXPECT_EQ(tally::norm1<T>(put(std::vector<T>{inf, -inf}).in(), o), inf);  // |x|: no NaN
      EXPECT_TRUE(std::isnan(tally::norm1<T>(put(std::vector<T>{1, nan, -inf}).in(), o)));
      EXPECT_EQ(tally::norm1<T>(put(std::vector<T>{-3, 4, T(-0.5)}).in(), o), T(7.5));
    }
    EXPECT_TRUE(same_bits(tally::norm_inf<T>(put(std::vector<T>{}).in(), opt()), T(0)));
    EXPECT_TRUE(same_bits(tally::norm_inf<T>(put(std::vector<T>{T(-0.0)}).in(), opt()), T(0)));
    EXPECT_EQ(tally::norm_inf<T>(put(std::vector<T>{1, -inf, 2}).in(), opt()), inf);
    std::vector<T> v(100000, T(1));
    v[77777] = nan;
    v[99999] = -inf;
    EXPECT_TRUE(std::isnan(tally::norm_inf<T>(put(v).in(), opt())));  // NaN in the middle wins
  });
}

TEST_P(Norms, Errors) {
  std::vector<std::int32_t> ints = {3, 4};
  auto bi = put(ints);
  tally::array_ref r{bi.data(), 2, dtype::int32};
  double out = 0;
  tally::options o = opt();
  EXPECT_TRUE(throws_tally([&] { tally::norm1(r, &out, dtype::float64, o); }, errc::invalid_argument, {"norm1", "int32"}));
  EXPECT_TRUE(throws_tally([&] { tally::norm_inf(r, &out, dtype::float64, o); }, errc::invalid_argument, {"norm_inf"}));
  std::vector<double> d = {1.0};
  auto bd = put(d);
  tally::array_ref rd{bd.data(), 1, dtype::float64};
  EXPECT_TRUE(throws_tally([&] { tally::norm1(rd, nullptr, dtype::float64, o); }, errc::null_pointer, {"result"}));
  EXPECT_TRUE(throws_tally([&] { tally::norm1(rd, &out, dtype::int64, o); }, errc::invalid_argument, {"float32 or float64"}));
  tally::array_ref bad{nullptr, 5, dtype::float64};
  EXPECT_TRUE(throws_tally([&] { tally::norm_inf(bad, &out, dtype::float64, o); }, errc::null_pointer, {"null pointer"}));
  tally::array_ref neg{bd.data(), -1, dtype::float64};
  EXPECT_TRUE(throws_tally([&] { tally::norm1(neg, &out, dtype::float64, o); }, errc::invalid_argument, {"negative"}));
}

}  // namespace
}  // namespace tt
