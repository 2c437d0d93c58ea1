// The element types added after the first four: float16, bfloat16, int8, int16, uint8,
// uint16, uint32, uint64, bool. Every test is written once and runs on both backends (the
// cuda instances report SKIPPED without a GPU). References: exact integer sums in __int128,
// and for the 16-bit floats and the means MPFR (each 16-bit value is exactly a float32, so MPFR
// sums them exactly) on the cpu backend; the cuda backend is held to the cpu backend's bits
// (the GPU machine has no MPFR).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "exact_oracle.hpp"
#include "reference.hpp"
#include "support.hpp"

#if defined(TALLY_TEST_HAVE_MPFR)
#include <mpfr.h>
#endif

namespace tt {
namespace {

using tally::bfloat16;
using tally::float16;

float16 h(float f) { return tally::to_float16(f); }
bfloat16 bh(float f) { return tally::to_bfloat16(f); }
float f(float16 v) { return tally::to_float(v); }
float f(bfloat16 v) { return tally::to_float(v); }

// ---- conversions (host only; no backend) --------------------------------------------------

TEST(Float16Storage, EveryBitPatternRoundTripsExactly) {
  for (unsigned b = 0; b < 65536; ++b) {
    float16 x{static_cast<std::uint16_t>(b)};
    float v = tally::to_float(x);
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(f(h(v)))) << b;
      continue;
    }
    ASSERT_EQ(h(v).bits, b) << "float16 bits " << b;
    bfloat16 y{static_cast<std::uint16_t>(b)};
    if (!std::isnan(f(y))) { ASSERT_EQ(bh(f(y)).bits, b) << "bfloat16 bits " << b; }
  }
  EXPECT_EQ(f(float16{0x3c00}), 1.0f);
  EXPECT_EQ(f(float16{0x0001}), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(f(float16{0x7bff}), 65504.0f);
  EXPECT_EQ(f(bfloat16{0x3f80}), 1.0f);
}

TEST(Float16Storage, RoundsToNearestTiesToEven) {
  EXPECT_EQ(h(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);                           // tie: to even (1.0)
  EXPECT_EQ(h(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);                       // tie: up to even
  EXPECT_EQ(h(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)).bits, 0x3c01);   // above the tie
  EXPECT_EQ(h(65519.0f).bits, 0x7bff);
  EXPECT_EQ(h(65520.0f).bits, 0x7c00);                 // tie at the top: to even = inf
  EXPECT_EQ(h(std::ldexp(1.0f, -25)).bits, 0x0000);    // tie between 0 and 2^-24: to 0
  EXPECT_EQ(h(std::ldexp(1.5f, -25)).bits, 0x0001);
  EXPECT_EQ(h(std::ldexp(3.0f, -25)).bits, 0x0002);    // tie 1.5 units: to 2
  EXPECT_EQ(bh(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);
  EXPECT_EQ(bh(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82);
}

// ---- reductions on both backends ----------------------------------------------------------

class Types : public Backend {
 public:  // (the helpers below are called from free function templates too)
  using Backend::b;
  using Backend::opt;
  using Backend::put;
  template <class T> tally::result_t<T> sum_of(const std::vector<T>& v, std::size_t off = 0) const {
    auto bx = put(v, off);
    return tally::sum<T>(bx.in(), opt());
  }
  template <class T, class Out> Out sum_as(const std::vector<T>& v, tally::accuracy a = tally::accuracy::exact) const {
    auto bx = put(v);
    tally::options o = opt();
    o.accuracy = a;
    return tally::sum<T, Out>(bx.in(), o);
  }
  template <class T, class Out> Out dot_as(const std::vector<T>& x, const std::vector<T>& y) const {
    auto bx = put(x), by = put(y);
    return tally::dot<T, Out>(bx.in(), by.in(), opt());
  }
  // The extreme, checked to be minmax's side too (each narrow type's one-read minmax).
  template <class T> tally::located<T> ext(const std::vector<T>& v, bool mx, tally::nan_policy p) const {
    auto bx = put(v);
    auto r = mx ? tally::extreme_of<T, true>(bx.in(), p, opt()) : tally::extreme_of<T, false>(bx.in(), p, opt());
    const tally::min_max<T> both = tally::minmax<T>(bx.in(), p, opt());
    const tally::located<T>& side = mx ? both.max : both.min;
    EXPECT_EQ(side.index, r.index) << "minmax";
    if constexpr (requires { r.value.bits; }) EXPECT_EQ(side.value.bits, r.value.bits) << "minmax";
    else EXPECT_TRUE(same_bits(side.value, r.value)) << "minmax";
    return r;
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, Types, ::testing::Values(backend::cpu, backend::cuda),
                         [](const auto& info) { return param_name(info); });

// Random integers of every new integer type, at lengths across the vector and chunk
// boundaries and at an offset, against the exact __int128 sum and dot.
template <class T> std::vector<T> random_ints(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& e : v) {
    if constexpr (std::is_same_v<T, bool>) e = g() & 1;
    else e = static_cast<T>(g());  // the whole range of T
  }
  return v;
}

template <class T> void check_ints(const Types& t, std::int64_t n, std::uint64_t seed, std::size_t off) {
  auto x = random_ints<T>(n, seed), y = random_ints<T>(n, seed + 1);
  i128 s = 0, d = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    s += x[i];
    d += static_cast<i128>(x[i]) * static_cast<i128>(y[i]);  // below 2^128 for these n
  }
  using R = tally::result_t<T>;
  static_assert(std::is_same_v<R, std::conditional_t<std::is_unsigned_v<T> && !std::is_same_v<T, bool>, std::uint64_t, std::int64_t>>);
  auto fits = [](i128 v) {
    return std::is_same_v<R, std::uint64_t> ? v >= 0 && v <= static_cast<i128>(UINT64_MAX) : v >= INT64_MIN && v <= INT64_MAX;
  };
  const char* name = tally::dtype_name(tally::dtype_of<T>());
  EXPECT_EQ(static_cast<i128>(t.template sum_of<T>(x, off)), s) << name << " n=" << n;
  if (fits(d))
    EXPECT_EQ(static_cast<i128>(t.template dot_as<T, R>(x, y)), d) << "dot " << name << " n=" << n;
  else  // (random uint32 products are near 2^64: long dots overflow uint64)
    EXPECT_TRUE(throws_tally([&] { t.template dot_as<T, R>(x, y); }, errc::overflow, {name})) << "n=" << n;
}

TEST_P(Types, IntegerSumsAndDotsAreExact) {
  for (std::int64_t n : {0, 1, 15, 17, 1000, 32769, 200001}) {
    std::size_t off = static_cast<std::size_t>(n % 3);
    check_ints<std::int8_t>(*this, n, 1 + n, off);
    check_ints<std::int16_t>(*this, n, 2 + n, off);
    check_ints<std::uint8_t>(*this, n, 3 + n, off);
    check_ints<std::uint16_t>(*this, n, 4 + n, off);
    check_ints<std::uint32_t>(*this, n, 5 + n, off);
  }
}

TEST_P(Types, SmallIntegersDoNotWrap) {
  EXPECT_EQ(sum_of(std::vector<std::uint8_t>(256, 1)), 256u);
  EXPECT_EQ(sum_of(std::vector<std::uint8_t>(100000, 255)), 25500000u);
  EXPECT_EQ(sum_of(std::vector<std::int8_t>((1 << 16) + 1, 1)), (1 << 16) + 1);
  EXPECT_EQ(sum_of(std::vector<std::int8_t>(70000, -128)), -128 * 70000);
  EXPECT_EQ(sum_of(std::vector<std::int16_t>((1 << 16) + 1, 32767)), std::int64_t(32767) * ((1 << 16) + 1));
  EXPECT_EQ(sum_of(std::vector<std::uint16_t>((1 << 16) + 1, 65535)), std::uint64_t(65535) * ((1 << 16) + 1));
  EXPECT_EQ(sum_of(std::vector<std::uint32_t>(5, 0xffffffffu)), std::uint64_t(0xffffffffu) * 5);
  std::vector<std::uint8_t> d8(300, 255);
  EXPECT_EQ((dot_as<std::uint8_t, std::uint64_t>(d8, d8)), 300u * 255 * 255);
}

TEST_P(Types, BoolSumsCountTheTrues) {
  std::vector<std::uint8_t> bytes(100003);
  std::int64_t trues = 0, first_false = -1, first_true = -1;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    trues += bytes[i] = (i * 2654435761u >> 7) % 3 == 0;
    if (bytes[i] && first_true < 0) first_true = static_cast<std::int64_t>(i);
    if (!bytes[i] && first_false < 0) first_false = static_cast<std::int64_t>(i);
  }
  // (std::vector<bool> has no data(): the bools are NumPy-style bytes, 0 or 1)
  buffer<std::uint8_t> bx = put(bytes);
  tally::view<const bool> v(reinterpret_cast<const bool*>(bx.data()), bx.size());
  EXPECT_EQ(tally::sum<bool>(v, opt()), trues);
  EXPECT_EQ(tally::dot<bool>(v, v, opt()), trues);
  EXPECT_EQ(tally::max<bool>(v, opt()), true);
  EXPECT_EQ(tally::min<bool>(v, opt()), false);
  EXPECT_EQ(tally::argmin<bool>(v, opt()), first_false);
  EXPECT_EQ(tally::argmax<bool>(v, opt()), first_true);
  EXPECT_DOUBLE_EQ(tally::mean<bool>(v, opt()), static_cast<double>(trues) / bytes.size());
}

TEST_P(Types, Uint64SumOverflowIsAnError) {
  std::vector<std::uint64_t> x{UINT64_MAX - 5, 5};
  EXPECT_EQ(sum_of(x), UINT64_MAX);
  x.push_back(1);
  EXPECT_TRUE(throws_tally([&] { sum_of(x); }, errc::overflow, {"uint64"}));
  std::vector<std::uint64_t> big{UINT64_MAX, UINT64_MAX, 3};  // past 2^64 and back is not possible: unsigned
  EXPECT_TRUE(throws_tally([&] { sum_of(big); }, errc::overflow));
  std::vector<std::uint64_t> y{std::uint64_t(1) << 31, std::uint64_t(1) << 31, 3};
  EXPECT_EQ((dot_as<std::uint64_t, std::uint64_t>(y, y)), (std::uint64_t(1) << 63) + 9);
  std::vector<std::uint64_t> z{std::uint64_t(1) << 32};
  EXPECT_TRUE(throws_tally([&] { dot_as<std::uint64_t, std::uint64_t>(z, z); }, errc::overflow));
  auto r = random_ints<std::uint64_t>(1001, 9);
  for (auto& e : r) e >>= 12;  // the sum fits
  i128 s = 0;
  for (auto e : r) s += e;
  EXPECT_EQ(static_cast<i128>(sum_of(r)), s);
}

// ---- 16-bit floats -------------------------------------------------------------------------

/// The exact sum (or dot) of float32 values, rounded once to Out (0 without MPFR: only the cpu
/// instances call it, and they skip in such builds).
template <class Out> Out mpfr_sum(const std::vector<float>& x, const std::vector<float>* y = nullptr) {
#if defined(TALLY_TEST_HAVE_MPFR)
  mpfr_t s, p;
  mpfr_inits2(2200, s, p, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_zero(s, 1);
  for (std::size_t i = 0; i < x.size(); ++i) {
    mpfr_set_flt(p, x[i], MPFR_RNDN);
    if (y) mpfr_mul_d(p, p, (*y)[i], MPFR_RNDN);  // exact at 2200 bits
    mpfr_add(s, s, p, MPFR_RNDN);                  // exact: the terms span < 2200 bits
  }
  Out r;
  if constexpr (std::is_same_v<Out, float>) r = mpfr_get_flt(s, MPFR_RNDN);
  else r = mpfr_get_d(s, MPFR_RNDN);
  mpfr_clears(s, p, static_cast<mpfr_ptr>(nullptr));
  return r;
#else
  (void)x, (void)y;
  return Out(0);
#endif
}

// Random 16-bit floats across their whole exponent range, subnormals included (every
// finite bit pattern equally likely).
template <class H> std::vector<H> random_halves(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<H> v;
  while (static_cast<std::int64_t>(v.size()) < n) {
    H x{static_cast<std::uint16_t>(g())};
    if (std::isfinite(tally::to_float(x))) v.push_back(x);
  }
  return v;
}

template <class H> std::vector<float> widen(const std::vector<H>& v) {
  std::vector<float> r;
  for (H e : v) r.push_back(tally::to_float(e));
  return r;
}

// The exact sum (y null) or dot product of 16-bit floats, rounded once to Out: MPFR on the cpu
// backend; on the cuda backend the cpu backend's bits for the same data (the GPU machine has no
// MPFR; the cpu backend is held to MPFR here).
template <class H, class Out> Out half_reference(const Types& t, const std::vector<H>& x, const std::vector<H>* y) {
  return reference_of(
      t.b(), y ? "cpu dot" : "cpu sum",
      [&] { return y ? tally::dot<H, Out>(x, *y, cpu_backend()) : tally::sum<H, Out>(x, cpu_backend()); },
      [&] {
        std::vector<float> fy = y ? widen(*y) : std::vector<float>{};
        return mpfr_sum<Out>(widen(x), y ? &fy : nullptr);
      });
}

template <class H> void check_halves(const Types& t, std::int64_t n, std::uint64_t seed) {
  auto x = random_halves<H>(n, seed), y = random_halves<H>(n, seed + 7);
  const char* name = tally::dtype_name(tally::dtype_of<H>());
  EXPECT_TRUE(same_bits(t.template sum_as<H, float>(x), half_reference<H, float>(t, x, nullptr))) << name << " sum n=" << n;
  EXPECT_TRUE(same_bits(t.template sum_as<H, double>(x), half_reference<H, double>(t, x, nullptr))) << name << " sum n=" << n;
  EXPECT_TRUE(same_bits(t.template dot_as<H, float>(x, y), half_reference<H, float>(t, x, &y))) << name << " dot n=" << n;
  EXPECT_TRUE(same_bits(t.template dot_as<H, double>(x, y), half_reference<H, double>(t, x, &y))) << name << " dot n=" << n;
  // Fast mode: a float64 accumulator, within the documented bound (float64 result: bfloat16
  // sums can pass the float32 range). The bound needs no MPFR.
  double fast = t.template sum_as<H, double>(x, tally::accuracy::fast);
  auto fx = widen(x);
  EXPECT_TRUE(within_bound(t.b(), fast, std::vector<double>(fx.begin(), fx.end()))) << name << " fast n=" << n;
}

TEST_P(Types, HalfSumsAndDotsAreCorrectlyRounded) {
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (b() != backend::cuda) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  std::vector<std::int64_t> lengths = {1, 2, 9, 100, 4097, 70001};
  // (Millions only on the GPU, where the reference is the cpu backend, not MPFR: hundreds of
  // blocks of the exact kernel, each exporting its digits to the last block's combine.)
  if (b() == backend::cuda) lengths.push_back(3000017);
  for (std::int64_t n : lengths) {
    check_halves<float16>(*this, n, 11 + n);
    check_halves<bfloat16>(*this, n, 13 + n);
  }
}

TEST_P(Types, HalfSumsSpecialValues) {
  float inf = std::numeric_limits<float>::infinity();
  auto s16 = [&](std::vector<float> v) {
    std::vector<float16> x;
    for (float e : v) x.push_back(h(e));
    return sum_as<float16, float>(x);
  };
  auto sb16 = [&](std::vector<float> v) {
    std::vector<bfloat16> x;
    for (float e : v) x.push_back(bh(e));
    return sum_as<bfloat16, float>(x);
  };
  for (auto s : {std::function<float(std::vector<float>)>(s16), std::function<float(std::vector<float>)>(sb16)}) {
    EXPECT_TRUE(same_bits(s({}), 0.0f));
    EXPECT_TRUE(same_bits(s({-0.0f, -0.0f}), -0.0f));
    EXPECT_TRUE(same_bits(s({-0.0f, 0.0f}), 0.0f));
    EXPECT_TRUE(same_bits(s({1.0f, inf}), inf));
    EXPECT_TRUE(same_bits(s({-inf, 2.0f}), -inf));
    EXPECT_TRUE(std::isnan(s({inf, -inf})));
    EXPECT_TRUE(std::isnan(s({1.0f, std::nanf(""), 2.0f})));
    EXPECT_TRUE(same_bits(s({1.0f, -1.0f}), 0.0f));
  }
  // float16: 65504 * 2^10 elements do not overflow the float32 result; 2^24 + 1 needs rounding.
  EXPECT_TRUE(same_bits(sum_as<float16, float>(std::vector<float16>(1024, h(65504.0f))), 65504.0f * 1024));
  // 2^13 + 1 ones and 2^-11: exact sum 8193 + 2^-11, correctly rounded to float32 (8193.0005).
  std::vector<float16> x(8193, h(1.0f));
  x.push_back(h(std::ldexp(1.0f, -11)));
  EXPECT_TRUE(same_bits(sum_as<float16, float>(x), 8193.0f + std::ldexp(1.0f, -11)));
  // ties to even in the final rounding: 2^24 + 1 (units of 1) rounds to 2^24 in float32 ...
  std::vector<float16> t(1024, h(16384.0f));  // 2^14 * 2^10 = 2^24
  t.push_back(h(1.0f));
  EXPECT_TRUE(same_bits(sum_as<float16, float>(t), 16777216.0f));
  t.push_back(h(1.0f));                       // ... 2^24 + 2 is exact
  EXPECT_TRUE(same_bits(sum_as<float16, float>(t), 16777218.0f));
  t.push_back(h(1.0f));                       // 2^24 + 3: tie, to even 2^24 + 4
  EXPECT_TRUE(same_bits(sum_as<float16, float>(t), 16777220.0f));
  EXPECT_TRUE(same_bits(sum_as<float16, double>(t), 16777219.0));
  // subnormals: 3 * 2^-24 + 2^-24 = 2^-22 exactly
  EXPECT_TRUE(same_bits(sum_as<float16, float>({float16{3}, float16{1}}), std::ldexp(1.0f, -22)));
}

TEST_P(Types, HalfMinMaxTiesAndNaN) {
  float nan = std::nanf("");
  auto run = [&]<class H>(H (*conv)(float)) {
    std::vector<H> x(3000, conv(1.0f));
    x[700] = conv(5.0f);
    x[2900] = conv(5.0f);
    x[100] = conv(-2.0f);
    x[2000] = conv(-2.0f);
    auto mx = ext(x, true, tally::nan_policy::propagate), mn = ext(x, false, tally::nan_policy::propagate);
    EXPECT_EQ(mx.value.bits, conv(5.0f).bits);
    EXPECT_EQ(mx.index, 700);
    EXPECT_EQ(mn.value.bits, conv(-2.0f).bits);
    EXPECT_EQ(mn.index, 100);
    x[1500] = conv(nan);
    x[2500] = conv(nan);
    auto p = ext(x, true, tally::nan_policy::propagate);
    EXPECT_TRUE(std::isnan(tally::to_float(p.value)));
    EXPECT_EQ(p.index, 1500);
    auto o = ext(x, true, tally::nan_policy::omit);
    EXPECT_EQ(o.value.bits, conv(5.0f).bits);
    EXPECT_EQ(o.index, 700);
    std::vector<H> z{conv(0.0f), conv(-0.0f), conv(-0.0f)};  // -0 == +0: the first wins, sign kept
    EXPECT_EQ(ext(z, false, tally::nan_policy::propagate).value.bits, conv(0.0f).bits);
    std::vector<H> zz{conv(-0.0f), conv(0.0f)};
    EXPECT_EQ(ext(zz, true, tally::nan_policy::propagate).value.bits, conv(-0.0f).bits);
    std::vector<H> infs(10, conv(std::numeric_limits<float>::infinity()));
    auto a = ext(infs, false, tally::nan_policy::propagate);
    EXPECT_EQ(a.index, 0);
    EXPECT_EQ(a.value.bits, conv(std::numeric_limits<float>::infinity()).bits);
    std::vector<H> e;
    auto em = ext(e, false, tally::nan_policy::propagate);
    EXPECT_EQ(em.index, -1);
    EXPECT_EQ(tally::to_float(em.value), std::numeric_limits<float>::infinity());
    std::vector<H> sub{H{0x0003}, H{0x0001}, H{0x8001}, H{0x0001}};  // subnormals (bfloat16 too)
    EXPECT_EQ(ext(sub, false, tally::nan_policy::propagate).index, 2);
    EXPECT_EQ(ext(sub, true, tally::nan_policy::propagate).index, 0);
  };
  run.template operator()<float16>(&h);
  run.template operator()<bfloat16>(&bh);
}

TEST_P(Types, IntegerMinMaxKeepTheType) {
  std::vector<std::uint64_t> u{5, UINT64_MAX, 7, UINT64_MAX};
  EXPECT_EQ(ext(u, true, tally::nan_policy::propagate).value, UINT64_MAX);
  EXPECT_EQ(ext(u, true, tally::nan_policy::propagate).index, 1);
  std::vector<std::int8_t> s(5000, 3);
  s[4321] = -128;
  s[4322] = -128;
  EXPECT_EQ(ext(s, false, tally::nan_policy::propagate).value, -128);
  EXPECT_EQ(ext(s, false, tally::nan_policy::propagate).index, 4321);
  std::vector<std::uint16_t> e;
  EXPECT_EQ(ext(e, false, tally::nan_policy::propagate).value, 65535);
  EXPECT_EQ(ext(e, true, tally::nan_policy::propagate).value, 0);
}

// Known answers (no oracle needed); the same on both backends.
TEST_P(Types, MeanOfEveryNewType) {
  std::vector<std::uint8_t> ones(256, 1);
  EXPECT_EQ(tally::mean<std::uint8_t>(put(ones).in(), opt()), 1.0);
  std::vector<std::uint64_t> big{UINT64_MAX, UINT64_MAX, UINT64_MAX};
  EXPECT_EQ(tally::mean<std::uint64_t>(put(big).in(), opt()), 18446744073709551615.0);
  std::vector<std::int16_t> s{-32768, 32767, 2};
  EXPECT_EQ(tally::mean<std::int16_t>(put(s).in(), opt()), 1.0 / 3.0);
  // float16: 0.1 (as float16) * 3 + 1e4 - 1e4: the exact mean of the float16 values.
  std::vector<float16> x{h(0.1f), h(0.1f), h(0.1f), h(10000.0f), h(-10000.0f)};
  float want = static_cast<float>(3.0 * f(h(0.1f)) / 5.0);  // exact numerator; one double rounding then float:
  double wd = 3.0 * f(h(0.1f)) / 5.0;                      // the quotient is not near a float tie here
  EXPECT_TRUE(same_bits(tally::mean<float16>(put(x).in(), opt()), want));
  EXPECT_TRUE(same_bits((tally::mean<float16, double>(put(x).in(), opt())), wd));
  std::vector<bfloat16> y{bh(1.0f), bh(2.0f), bh(4.0f)};
  EXPECT_TRUE(same_bits(tally::mean<bfloat16>(put(y).in(), opt()), 7.0f / 3.0f));
  std::vector<float16> e;
  EXPECT_TRUE(std::isnan(tally::mean<float16>(put(e).in(), opt())));
  std::vector<float16> ni{h(1.0f), h(std::numeric_limits<float>::infinity())};
  EXPECT_EQ(tally::mean<float16>(put(ni).in(), opt()), std::numeric_limits<float>::infinity());
}

// The exact sum of x divided by n, rounded once to Out: MPFR on the cpu backend
// (oracle::exact_mean, the 16-bit floats widened exactly to float32); on the cuda
// backend the cpu backend's bits for the same data.
template <class T, class Out> Out mean_reference(const Types& t, const std::vector<T>& x) {
  return reference_of(
      t.b(), "cpu mean", [&] { return tally::mean<T, Out>(x, cpu_backend()); }, [&] {
        if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) return oracle::exact_mean<float, Out>(widen(x));
        else return oracle::exact_mean<T, Out>(x);
      });
}

template <class T> void check_mean(const Types& t, const std::vector<T>& x, std::size_t off) {
  auto bx = t.template put<T>(x, off);
  const char* name = tally::dtype_name(tally::dtype_of<T>());
  EXPECT_TRUE(same_bits((tally::mean<T, float>(bx.in(), t.opt())), (mean_reference<T, float>(t, x))))
      << name << " n=" << x.size();
  EXPECT_TRUE(same_bits((tally::mean<T, double>(bx.in(), t.opt())), (mean_reference<T, double>(t, x))))
      << name << " n=" << x.size();
}

// Random data over the whole range of each integer type and every finite 16-bit float.
TEST_P(Types, MeanOfEveryNewTypeIsCorrectlyRounded) {
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (b() != backend::cuda) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  std::vector<std::int64_t> lengths = {1, 3, 1000, 70001};
  // (Millions only on the GPU, where the reference is the cpu backend, not MPFR: hundreds of
  // blocks, and for the 16-bit floats the exact kernel's exported digits.)
  if (b() == backend::cuda) lengths.push_back(3000017);
  for (std::int64_t n : lengths) {
    std::size_t off = static_cast<std::size_t>(n % 3);
    check_mean(*this, random_ints<std::int8_t>(n, 21 + n), off);
    check_mean(*this, random_ints<std::int16_t>(n, 22 + n), off);
    check_mean(*this, random_ints<std::uint8_t>(n, 23 + n), off);
    check_mean(*this, random_ints<std::uint16_t>(n, 24 + n), off);
    check_mean(*this, random_ints<std::uint32_t>(n, 25 + n), off);
    check_mean(*this, random_ints<std::uint64_t>(n, 26 + n), off);
    check_mean(*this, random_halves<float16>(n, 27 + n), off);
    check_mean(*this, random_halves<bfloat16>(n, 28 + n), off);
  }
}

TEST_P(Types, ErrorsNameTheProblem) {
  std::vector<float16> x(4, h(1.0f));
  auto bx = put(x);
  float16 out[4];
  tally::view<float16> vo(out, 4, tally::memory::host);
  std::int64_t r64 = 0;
  EXPECT_TRUE(throws_tally([&] { tally::reduce(tally::reduce_op::sum, {bx.data(), 4, dtype::float16}, {}, &r64, dtype::int64, opt()); },
                           errc::invalid_argument, {"float16", "int64"}));
  std::vector<std::uint8_t> u(3, 1);
  auto bu = put(u);
  EXPECT_TRUE(throws_tally([&] { tally::reduce(tally::reduce_op::sum, {bu.data(), 3, dtype::uint8}, {}, &r64, dtype::int64, opt()); },
                           errc::invalid_argument, {"uint8", "uint64"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce(tally::reduce_op::sum, {bu.data(), 3, static_cast<dtype>(99)}, {}, &r64, dtype::int64, opt()); },
                           errc::invalid_argument, {"99"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce(tally::reduce_op::dot, {bu.data(), 3, dtype::uint8}, {bx.data(), 3, dtype::float16}, &r64, dtype::uint64, opt()); },
                           errc::invalid_argument, {"mismatch"}));
}

// The operations of issue 5 that take only the four core types refuse the others by name (never
// a silent wrong answer); count_nonzero/any/all take every type (both backends: tests/test_logical.cpp).
TEST(TypesCoverage, CountNonzeroOfEveryTypeAndClearRefusals) {
  tally::options cpu;
  cpu.backend = tally::backend::cpu;
  auto ref = [](const auto& v, dtype t) {
    return tally::array_ref{v.data(), static_cast<std::int64_t>(v.size()), t, tally::memory::host};
  };
  std::vector<std::int8_t> i8 = {1, 0, -2, 0, 3};
  std::vector<std::uint64_t> u64 = {0, 0, 1ull << 63};
  std::vector<std::uint16_t> h = {0x0000, 0x8000, 0x7e00 /* NaN */, 0x0001 /* denorm_min */, 0x3c00};
  std::vector<std::uint8_t> b = {1, 0, 1, 1};
  EXPECT_EQ(tally::count_nonzero(ref(i8, dtype::int8), cpu), 3);
  EXPECT_EQ(tally::count_nonzero(ref(u64, dtype::uint64), cpu), 1);
  EXPECT_EQ(tally::count_nonzero(ref(h, dtype::float16), cpu), 3);  // -0.0 is zero, NaN is not
  EXPECT_EQ(tally::count_nonzero(ref(h, dtype::bfloat16), cpu), 3);
  EXPECT_EQ(tally::count_nonzero(ref(b, dtype::bool_), cpu), 3);
  EXPECT_FALSE(tally::all(ref(i8, dtype::int8), cpu));
  EXPECT_TRUE(tally::any(ref(u64, dtype::uint64), cpu));
  // var/std, axpy and scale take these types too (tests/test_types_ops.cpp); bool axpy is refused.
  double out = 0;
  tally::var(ref(i8, dtype::int8), 0, false, &out, dtype::float64, cpu);
  EXPECT_EQ(out, 2.64);  // [1, 0, -2, 0, 3]: (5 * 14 - 2^2) / 25, correctly rounded
  std::vector<std::int8_t> y8 = i8;
  tally::mutable_array_ref my{y8.data(), 5, dtype::int8, tally::memory::host};
  std::int8_t two = 2;
  tally::axpy(&two, ref(i8, dtype::int8), my, cpu);
  EXPECT_EQ(y8, (std::vector<std::int8_t>{3, 0, -6, 0, 9}));
  tally::mutable_array_ref mb{b.data(), 4, dtype::bool_, tally::memory::host};
  std::uint8_t yes = 1;
  EXPECT_TRUE(throws_tally([&] { tally::scale(&yes, mb, cpu); return 0; }, errc::invalid_argument, {"bool", "scale"}));
}

TEST(TypesNames, NamesSizesAndResultTypes) {
  using tally::dtype;
  EXPECT_STREQ(tally::dtype_name(dtype::bool_), "bool");
  EXPECT_STREQ(tally::dtype_name(dtype::bfloat16), "bfloat16");
  EXPECT_EQ(tally::dtype_size(dtype::float16), 2u);
  EXPECT_EQ(tally::dtype_size(dtype::uint64), 8u);
  EXPECT_EQ(tally::dtype_size(dtype::bool_), 1u);
  EXPECT_EQ(static_cast<int>(dtype::int64), 3);  // the first four keep their values
  EXPECT_EQ(tally::result_dtype(tally::reduce_op::sum, dtype::float16), dtype::float32);
  EXPECT_EQ(tally::result_dtype(tally::reduce_op::sum, dtype::uint8), dtype::uint64);
  EXPECT_EQ(tally::result_dtype(tally::reduce_op::dot, dtype::bool_), dtype::int64);
  EXPECT_EQ(tally::result_dtype(tally::reduce_op::sum, dtype::int8), dtype::int64);
}

}  // namespace
}  // namespace tt
