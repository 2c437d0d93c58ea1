// Floating special values and accuracy corner cases on every backend: NaN, infinities,
// signed zeros, the float64 accumulator of float32 data, the documented error bound.
#include <limits>

#include "reference.hpp"
#include "support.hpp"

namespace tt {
namespace {

class Floating : public Typed {};

constexpr dtype kFloatTypes[] = {dtype::float32, dtype::float64};

template <class T> constexpr T nan_v = std::numeric_limits<T>::quiet_NaN();
template <class T> constexpr T inf_v = std::numeric_limits<T>::infinity();

TEST_P(Floating, NaNPropagates) {
  with_float_type(t(), [&]<class T>() {
    EXPECT_TRUE(std::isnan(sum(std::vector<T>{1, nan_v<T>, 2})));
    EXPECT_TRUE(std::isnan(dot(std::vector<T>{1, nan_v<T>, 2}, std::vector<T>{1, 1, 1})));
    EXPECT_TRUE(std::isnan(dot(std::vector<T>{1, 2, 3}, std::vector<T>{1, 1, nan_v<T>})));
    EXPECT_TRUE(std::isnan(sum(std::vector<T>{nan_v<T>, inf_v<T>})));
    // One NaN anywhere in a long array: in the scalar head, the vector body and the tail.
    for (std::int64_t n : {5, 1000, 4097, 70001}) {
      for (std::int64_t at : {std::int64_t(0), n / 2 + 1, n - 1}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " NaN at " + std::to_string(at));
        auto x = ramp<T>(n, 0);
        x[at] = nan_v<T>;
        EXPECT_TRUE(std::isnan(sum(x)));
        EXPECT_TRUE(std::isnan(dot(x, ramp<T>(n, 1))));  // NaN * 0 is NaN too
        EXPECT_TRUE(std::isnan(dot(ramp<T>(n, 1), x)));
        auto bx = put(x, 1);
        EXPECT_TRUE(std::isnan(tally::sum<T>(bx.in(), opt()))) << "misaligned";
      }
    }
  });
}

TEST_P(Floating, Infinities) {
  with_float_type(t(), [&]<class T>() {
    EXPECT_TRUE(same_bits(sum(std::vector<T>{inf_v<T>, 1}), inf_v<T>));
    EXPECT_TRUE(same_bits(sum(std::vector<T>{-inf_v<T>, 1}), -inf_v<T>));
    EXPECT_TRUE(same_bits(sum(std::vector<T>{inf_v<T>, inf_v<T>}), inf_v<T>));
    EXPECT_TRUE(std::isnan(sum(std::vector<T>{inf_v<T>, -inf_v<T>})));
    EXPECT_TRUE(std::isnan(sum(std::vector<T>{1, inf_v<T>, 2, 3, -inf_v<T>, 4})));
    EXPECT_TRUE(same_bits(dot(std::vector<T>{2}, std::vector<T>{inf_v<T>}), inf_v<T>));
    EXPECT_TRUE(same_bits(dot(std::vector<T>{-2}, std::vector<T>{inf_v<T>}), -inf_v<T>));
    EXPECT_TRUE(std::isnan(dot(std::vector<T>{0}, std::vector<T>{inf_v<T>}))) << "0 * inf is NaN";
    EXPECT_TRUE(std::isnan(dot(std::vector<T>{1, 0}, std::vector<T>{1, inf_v<T>})));
    EXPECT_TRUE(std::isnan(dot(std::vector<T>{1, 1}, std::vector<T>{inf_v<T>, -inf_v<T>})));
    // An infinity deep in a long array.
    auto x = ramp<T>(100003, 0);
    x[77777] = -inf_v<T>;
    EXPECT_TRUE(same_bits(sum(x), -inf_v<T>));
  });
}

TEST_P(Floating, AddSpecialValues) {
  with_float_type(t(), [&]<class T>() {
    const T n = nan_v<T>, i = inf_v<T>, m = std::numeric_limits<T>::max();
    const T tiny = std::numeric_limits<T>::denorm_min();
    std::vector<T> x = {n, 1, i, i, -i, 0, -0.0, -0.0, m, tiny, tiny, 1, 2, 3};
    std::vector<T> y = {1, n, 1, -i, -1, -0.0, 0, -0.0, m, tiny, -tiny, 4, 5, 6};
    auto out = add(x, y);
    EXPECT_TRUE(add_matches(out, x, y));  // bitwise against IEEE x + y on the host
    EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1]) && std::isnan(out[3]));
    EXPECT_TRUE(same_bits(out[2], i));
    EXPECT_TRUE(same_bits(out[4], -i));
    EXPECT_TRUE(same_bits(out[5], T(0)));      // 0 + -0 = +0
    EXPECT_TRUE(same_bits(out[7], T(-0.0)));   // -0 + -0 = -0
    EXPECT_TRUE(same_bits(out[8], i)) << "max + max overflows to inf";
    EXPECT_TRUE(same_bits(out[9], T(2 * tiny))) << "subnormals are not flushed to zero";
    // The same in a long, misaligned array (vector body and scalar head/tail).
    std::vector<T> lx(10007), ly(10007);
    for (std::size_t k = 0; k < lx.size(); ++k) {
      lx[k] = x[k % x.size()];
      ly[k] = y[(k * 7) % y.size()];
    }
    auto bx = put(lx, 1), by = put(ly, 1);
    buffer<T> bo(b(), lx.size(), T(7), 1);
    tally::add<T>(bx.in(), by.in(), bo.out(), opt());
    EXPECT_TRUE(add_matches(bo.read(), lx, ly));
  });
}

// The library documents that a sum of negative zeros is -0.0 (IEEE: -0 + -0 = -0), while
// the sum of nothing is +0.0.
TEST_P(Floating, SignedZeros) {
  with_float_type(t(), [&]<class T>() {
    EXPECT_TRUE(same_bits(sum(std::vector<T>{-0.0, -0.0}), T(-0.0)));
    EXPECT_TRUE(same_bits(sum(std::vector<T>{-0.0}), T(-0.0)));
    EXPECT_TRUE(same_bits(sum(std::vector<T>(100003, T(-0.0))), T(-0.0))) << "many, multi-chunk";
    EXPECT_TRUE(same_bits(sum(std::vector<T>{-0.0, 0.0}), T(0.0)));
    EXPECT_TRUE(same_bits(sum(std::vector<T>{1, -1}), T(0.0)));
    EXPECT_TRUE(same_bits(sum(std::vector<T>{}), T(0.0)));
    auto bx = put(std::vector<T>(1001, T(-0.0)), 1);
    EXPECT_TRUE(same_bits(tally::sum<T>(bx.in(), opt()), T(-0.0))) << "misaligned";
  });
}

// Subnormal inputs are neither flushed on input nor in the accumulator.
TEST_P(Floating, Subnormals) {
  with_float_type(t(), [&]<class T>() {
    const T d = std::numeric_limits<T>::denorm_min();
    for (std::int64_t n : {1, 3, 1000, 100003}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      std::vector<T> x(n, d);
      EXPECT_TRUE(same_bits(sum(x), static_cast<T>(static_cast<long double>(n) * d)));
      EXPECT_TRUE(same_bits(dot(x, std::vector<T>(n, T(1))), static_cast<T>(static_cast<long double>(n) * d)));
      auto bx = put(x, 1);
      EXPECT_TRUE(same_bits(tally::sum<T>(bx.in(), opt()), static_cast<T>(static_cast<long double>(n) * d)))
          << "misaligned";
    }
    // A normal minus a slightly smaller normal: a subnormal result, exact.
    const T m = std::numeric_limits<T>::min();
    EXPECT_TRUE(same_bits(sum(std::vector<T>{m, -(m - d)}), d));
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, Floating,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::ValuesIn(kFloatTypes)),
                         [](const auto& info) { return param_name(info); });

// ---- float32 specifics: the float64 accumulator --------------------------------------------

// float32 inputs accumulate in float64 and are rounded once: the sum of two float32 maxima
// rounds to +inf, but [max, max, -max] is exactly max; 2^24 + 1 + 1 is exact.
TEST_P(Backend, Float32AccumulatesInFloat64) {
  const float m = std::numeric_limits<float>::max();
  EXPECT_TRUE(same_bits(sum(std::vector<float>{m, m}), inf_v<float>));
  EXPECT_TRUE(same_bits(sum(std::vector<float>{m, m, -m}), m));
  EXPECT_TRUE(same_bits(sum(std::vector<float>{16777216.0f, 1, 1}), 16777218.0f));
  // 1 + 2^-30 * 2^20 (1 + 2^-10): every small term would vanish in a float32 accumulator.
  std::vector<float> x(1 << 20, std::ldexp(1.0f, -30));
  x[0] = 1.0f;
  EXPECT_TRUE(same_bits(sum(x), static_cast<float>(1.0 + std::ldexp(1.0, -10) - std::ldexp(1.0, -30))));
  // dot of float32: products exact in float64 ((1 + 2^-23)^2 = 1 + 2^-22 + 2^-46).
  const float a = 1.0f + std::ldexp(1.0f, -23);
  EXPECT_TRUE(same_bits(dot(std::vector<float>{a, -1.0f}, std::vector<float>{a, 1.0f + std::ldexp(1.0f, -22)}),
                        std::ldexp(1.0f, -46)));
}

// The documented accuracy bound, |result - exact| <= (ceil(log2 n) + 2) * 2^-53 * sum|x_i|,
// on an adversarial input: x[0] = 1 followed by n - 1 = 2^24 - 1 copies of 2^-53 (half an
// ulp of 1). Each term added to a running 1.0 rounds away (ties to even), so a serial
// accumulation of k of them loses k * 2^-53; a pairwise tree loses at most ~log2(n) of them.
// Exact sum: 1 + (n - 1) * 2^-53 = sum|x_i|; bound: 26 * 2^-53 * (1 + (n - 1) * 2^-53).
// The error is evaluated exactly: result - 1 and (n - 1) * 2^-53 are multiples of 2^-53
// below 2^-28, so their difference is exact in float64.
::testing::AssertionResult adversarial_ok(tally::backend b, double r, std::int64_t n) {
  const double u = std::ldexp(1.0, -53);
  const double tail = static_cast<double>(n - 1) * u;  // exact
  if (!(r >= 1.0 && r < 2.0)) return ::testing::AssertionFailure() << "result " << r << " not in [1, 2)";
  const double err = std::fabs((r - 1.0) - tail);  // exact
  const double bound = static_cast<double>(bound_depth(b, n)) * u * (1.0 + tail);  // rounds up by < 2^-50 relative
  auto res = err <= bound ? ::testing::AssertionSuccess() : ::testing::AssertionFailure();
  return res << "n=" << n << " result=1+" << (r - 1.0) / u << "*2^-53, exact=1+" << (n - 1)
             << "*2^-53: error " << err / u << "*2^-53, bound " << bound / u << "*2^-53";
}

TEST_P(Backend, AccuracyBoundAdversarialInput) {
  const std::int64_t n = std::int64_t(1) << 24;
  std::vector<double> x(n, std::ldexp(1.0, -53));
  x[0] = 1.0;
  EXPECT_TRUE(adversarial_ok(b(), sum(x), n)) << "sum";
  EXPECT_TRUE(adversarial_ok(b(), dot(x, std::vector<double>(n, 1.0)), n)) << "dot with ones";
  // The same data through the general oracle at a size it can afford.
  const std::int64_t m = 100000;
  std::vector<double> xm(x.begin(), x.begin() + m);
  EXPECT_TRUE(within_bound(b(), sum(xm), xm)) << "sum, n=" << m;
}

}  // namespace
}  // namespace tt
