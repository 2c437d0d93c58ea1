// tally::norm2: the square root of the exact sum of squares, correctly rounded. Oracle: MPFR
// (exact sum of exact squares at 4600 bits, square root at 4600 bits, rounded once more).
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

class Norm : public Typed {
 protected:
  template <class T, class Out> static Out oracle(const std::vector<T>& x) {
#if defined(TALLY_TEST_HAVE_MPFR)
    mpfr_t s, a, r;
    mpfr_inits2(4600, s, a, r, static_cast<mpfr_ptr>(nullptr));
    mpfr_set_zero(s, 1);
    for (T v : x) {
      mpfr_set_d(a, static_cast<double>(v), MPFR_RNDN);
      mpfr_sqr(a, a, MPFR_RNDN);  // exact at 4600 bits
      mpfr_add(s, s, a, MPFR_RNDN);
    }
    mpfr_sqrt(r, s, MPFR_RNDN);
    Out out;
    if constexpr (std::is_same_v<Out, float>) out = mpfr_get_flt(r, MPFR_RNDN);
    else out = mpfr_get_d(r, MPFR_RNDN);
    mpfr_clears(s, a, r, static_cast<mpfr_ptr>(nullptr));
    return out;
#else
    (void)x;
    return Out(0);
#endif
  }
  // The cuda backend is held to the cpu backend's bits (the GPU machine has no MPFR; the cpu
  // backend is held to MPFR wherever the tests build with it).
  template <class T, class Out> Out reference(const std::vector<T>& x) const {
    return reference_of(
        b(), "cpu norm2", [&] { return tally::norm2<T, Out>(x, cpu_backend()); }, [&] { return oracle<T, Out>(x); });
  }
  template <class T, class Out> ::testing::AssertionResult ok(const std::vector<T>& x) {
    Out got = tally::norm2<T, Out>(put(x).in(), opt()), want = reference<T, Out>(x);
    if (same_bits(got, want)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << std::hexfloat << "got " << got << " want " << want;
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, Norm,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float32, dtype::float64)),
                         [](const auto& info) { return param_name(info); });

TEST_P(Norm, CorrectlyRoundedWithoutOverflowOrUnderflow) {
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (b() != backend::cuda) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_float_type(t(), [&]<class T>() {
    std::mt19937_64 g(23);
    const int emax = std::numeric_limits<T>::max_exponent - 2, emin = std::numeric_limits<T>::min_exponent - 20;
    // (Millions of elements only on the GPU, where the reference is the cpu backend, not MPFR.)
    std::vector<std::size_t> lengths = {1u, 2u, 3u, 17u, 1000u, 70001u};
    if (b() == backend::cuda) lengths.push_back(2000003u);
    for (std::size_t n : lengths) {
      SCOPED_TRACE("n=" + std::to_string(n));
      std::vector<T> u(n), wide(n), huge(n), tiny(n);
      for (std::size_t i = 0; i < n; ++i) {
        double m = 1.0 + double(g() >> 12) * 0x1.0p-52;
        u[i] = static_cast<T>(double(g() >> 11) * 0x1.0p-53 - 0.5);
        wide[i] = static_cast<T>((g() & 1 ? -1 : 1) * std::ldexp(m, int(g() % 121) - 60));
        huge[i] = static_cast<T>(std::ldexp(m, emax - int(g() % 4)));  // squares overflow T
        tiny[i] = static_cast<T>(std::ldexp(m, emin + int(g() % 8)));  // squares underflow T
      }
      EXPECT_TRUE((ok<T, T>(u)));
      EXPECT_TRUE((ok<T, T>(wide)));
      EXPECT_TRUE((ok<T, double>(wide)));
      EXPECT_TRUE((ok<T, T>(huge)));
      EXPECT_TRUE((ok<T, T>(tiny)));
      EXPECT_TRUE((ok<T, float>(tiny)));
    }
    // Perfect squares: 3-4-5, and sqrt(2^-2148)-scale values.
    EXPECT_EQ((tally::norm2<T>(put(std::vector<T>{3, 4}).in(), opt())), T(5));
    EXPECT_TRUE((ok<T, T>(std::vector<T>{std::numeric_limits<T>::denorm_min()})));
    EXPECT_TRUE((ok<T, T>(std::vector<T>{std::numeric_limits<T>::max(), std::numeric_limits<T>::max()})));
  });
}

TEST_P(Norm, SpecialValuesEmptyAndErrors) {
  with_float_type(t(), [&]<class T>() {
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    EXPECT_TRUE(same_bits(tally::norm2<T>(put(std::vector<T>{}).in(), opt()), T(0)));
    EXPECT_TRUE(same_bits(tally::norm2<T>(put(std::vector<T>{T(-0.0), T(-0.0)}).in(), opt()), T(0)));
    EXPECT_EQ(tally::norm2<T>(put(std::vector<T>{1, -inf}).in(), opt()), inf);
    EXPECT_TRUE(std::isnan(tally::norm2<T>(put(std::vector<T>{1, nan}).in(), opt())));
  });
  std::vector<std::int32_t> ints = {3, 4};
  tally::array_ref r{ints.data(), 2, dtype::int32, tally::memory::host};
  double out = 0;
  EXPECT_TRUE(throws_tally([&] { tally::norm2(r, &out, dtype::float64, opt()); return 0; }, errc::invalid_argument, {"float32 or float64"}));
}

}  // namespace
}  // namespace tt
