// tally::mean: the exact sum divided by n, correctly rounded. Oracle: MPFR (the exact sum at a
// precision wider than the data's exponent range, divided at 4600 bits, rounded once more: a
// quotient of these sizes is never within 2^-4600 of a rounding boundary without being on it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "exact_oracle.hpp"
#include "support.hpp"

namespace tt {
namespace {

class Mean : public Typed {
 protected:
  // The cuda backend is held to the cpu backend's bits (the GPU machine has no MPFR; the cpu
  // backend is held to MPFR wherever the tests build with it).
  template <class T, class Out> Out reference(const std::vector<T>& x) const {
    return reference_of(
        b(), "cpu mean", [&] { return tally::mean<T, Out>(x, cpu_backend()); }, [&] { return oracle::exact_mean<T, Out>(x); });
  }
  template <class T, class Out> ::testing::AssertionResult ok(const std::vector<T>& x, std::size_t off = 0) {
    auto bx = put(x, off);
    Out got = tally::mean<T, Out>(bx.in(), opt()), want = reference<T, Out>(x);
    if (same_bits(got, want)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << std::hexfloat << "got " << got << " want " << want;
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, Mean,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float32, dtype::float64, dtype::int32, dtype::int64)),
                         [](const auto& info) { return param_name(info); });

TEST_P(Mean, CorrectlyRounded) {
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (b() != backend::cuda) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_type(t(), [&]<class T>() {
    using Def = std::conditional_t<std::is_floating_point_v<T>, T, double>;
    std::mt19937_64 g(17);
    // (Millions of elements only on the GPU, where the reference is the cpu backend, not MPFR.)
    std::vector<std::size_t> lengths = {1u, 2u, 3u, 7u, 1000u, 65537u, 300007u};
    if (b() == backend::cuda) lengths.push_back(3000017u);
    for (std::size_t n : lengths) {
      SCOPED_TRACE("n=" + std::to_string(n));
      std::vector<T> x(n), wide(n);
      for (std::size_t i = 0; i < n; ++i) {
        if constexpr (std::is_integral_v<T>) {
          x[i] = static_cast<T>(static_cast<std::int64_t>(g() % 2000001) - 1000000);
          wide[i] = static_cast<T>(std::is_same_v<T, std::int64_t> ? static_cast<std::int64_t>(g()) : static_cast<std::int32_t>(g()));
        } else {
          x[i] = static_cast<T>(std::ldexp(double(g() >> 11) * 0x1.0p-53, 0) - 0.5);
          wide[i] = static_cast<T>((g() & 1 ? -1 : 1) * std::ldexp(1.0 + double(g() >> 12) * 0x1.0p-52, int(g() % 121) - 60));
        }
      }
      EXPECT_TRUE((ok<T, Def>(x)));
      EXPECT_TRUE((ok<T, Def>(wide, 1)));
      EXPECT_TRUE((ok<T, float>(wide)));
      EXPECT_TRUE((ok<T, double>(wide)));
    }
    // Subnormal means of tiny data, and the largest values (no overflow in between).
    if constexpr (std::is_floating_point_v<T>) {
      std::vector<T> tiny = {std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::denorm_min(), T(0)};
      EXPECT_TRUE((ok<T, T>(tiny)));
      std::vector<T> big(5, std::numeric_limits<T>::max());
      EXPECT_EQ(tally::mean<T>(put(big).in(), opt()), std::numeric_limits<T>::max());
    }
  });
}

TEST_P(Mean, SpecialValuesAndEmpty) {
  with_type(t(), [&]<class T>() {
    std::vector<T> none;
    EXPECT_TRUE(std::isnan(tally::mean<T>(put(none).in(), opt())));
    if constexpr (std::is_floating_point_v<T>) {
      const T inf = std::numeric_limits<T>::infinity();
      EXPECT_TRUE(std::isnan(tally::mean<T>(put(std::vector<T>{1, std::numeric_limits<T>::quiet_NaN()}).in(), opt())));
      EXPECT_TRUE(std::isnan(tally::mean<T>(put(std::vector<T>{inf, -inf}).in(), opt())));
      EXPECT_EQ(tally::mean<T>(put(std::vector<T>{inf, 1}).in(), opt()), inf);
      EXPECT_TRUE(same_bits(tally::mean<T>(put(std::vector<T>{T(-0.0), T(-0.0)}).in(), opt()), T(-0.0)));
      EXPECT_TRUE(same_bits(tally::mean<T>(put(std::vector<T>{T(1), T(-1)}).in(), opt()), T(0.0)));
    } else {
      // int64 extremes: the exact mean of the two ends is -0.5.
      std::vector<T> ends = {std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest()};
      EXPECT_EQ(tally::mean<T>(put(ends).in(), opt()), -0.5);
    }
  });
}

}  // namespace
}  // namespace tt
