// Exact mode (the default): correctly rounded sum and dot, bitwise identical on every backend
// and launch shape. The oracle is MPFR (exact sums at a precision wider than the data's whole
// exponent range, rounded once with mpfr_get_d / mpfr_get_flt); where MPFR is absent (the GPU
// machine) the CUDA results are compared bit for bit with the CPU backend's, which CI checks
// against MPFR.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

#include "reference.hpp"
#include "support.hpp"
#include "tally/ops/exact.hpp"

#if defined(TALLY_TEST_HAVE_MPFR)
#include <mpfr.h>
#endif

namespace tt {
namespace {

namespace ex = tally::ops::exact;

constexpr bool kHaveMpfr =
#if defined(TALLY_TEST_HAVE_MPFR)
    true;
#else
    false;
#endif

// ---- oracle -------------------------------------------------------------------------------

// Exact sum (y empty) or dot product, rounded once to Out, with IEEE special-value rules.
template <class T, class Out> Out oracle(const std::vector<T>& x, const std::vector<T>& y) {
  const bool dot = !y.empty();
  bool nan = false, pinf = false, ninf = false, all_neg_zero = true;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double t = dot ? static_cast<double>(x[i]) * static_cast<double>(y[i]) : static_cast<double>(x[i]);
    bool special = !std::isfinite(static_cast<double>(x[i])) || (dot && !std::isfinite(static_cast<double>(y[i])));
    if (special) {
      if (std::isnan(t)) nan = true;
      else if (t > 0) pinf = true;
      else ninf = true;
      all_neg_zero = false;
      continue;
    }
    bool exact_zero = x[i] == 0 || (dot && y[i] == 0);
    bool neg_zero = exact_zero && (dot ? (std::signbit(static_cast<double>(x[i])) != std::signbit(static_cast<double>(y[i])))
                                       : std::signbit(static_cast<double>(x[i])));
    if (!neg_zero) all_neg_zero = false;
  }
  if (nan || (pinf && ninf)) return std::numeric_limits<Out>::quiet_NaN();
  if (pinf) return std::numeric_limits<Out>::infinity();
  if (ninf) return -std::numeric_limits<Out>::infinity();
  if (x.empty()) return Out(0);
#if defined(TALLY_TEST_HAVE_MPFR)
  const mpfr_prec_t prec = dot ? 4600 : 2300;
  mpfr_t s, p, a, b;
  mpfr_inits2(prec, s, p, a, b, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_zero(s, all_neg_zero ? -1 : 1);
  for (std::size_t i = 0; i < x.size(); ++i) {
    mpfr_set_d(a, static_cast<double>(x[i]), MPFR_RNDN);
    if (dot) {
      mpfr_set_d(b, static_cast<double>(y[i]), MPFR_RNDN);
      mpfr_mul(p, a, b, MPFR_RNDN);  // exact at this precision
      mpfr_add(s, s, p, MPFR_RNDN);  // exact
    } else {
      mpfr_add(s, s, a, MPFR_RNDN);
    }
  }
  if (mpfr_zero_p(s)) mpfr_set_zero(s, all_neg_zero ? -1 : 1);
  Out r;
  if constexpr (std::is_same_v<Out, float>) r = mpfr_get_flt(s, MPFR_RNDN);
  else r = mpfr_get_d(s, MPFR_RNDN);
  mpfr_clears(s, p, a, b, static_cast<mpfr_ptr>(nullptr));
  return r;
#else
  // No MPFR here: the CPU backend's exact result (checked against MPFR in CI).
  tally::options o;
  o.backend = backend::cpu;
  return dot ? tally::dot<T, Out>(x, y, o) : tally::sum<T, Out>(x, o);
#endif
}

template <class F> ::testing::AssertionResult same(F got, std::type_identity_t<F> want) {
  if (same_bits(got, want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << std::hexfloat << got << " want " << want
                                       << std::defaultfloat << " (" << got << " vs " << want << ")";
}

// ---- data ---------------------------------------------------------------------------------

template <class T> std::vector<T> uniform(std::size_t n, std::uint64_t seed, double lo = -1, double hi = 1) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(n);
  for (auto& e : v) e = static_cast<T>(u(g));
  return v;
}

// Random signs and mantissas, exponents uniform in [emin, emax].
template <class T> std::vector<T> wide(std::size_t n, std::uint64_t seed, int emin, int emax) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> m(1.0, 2.0);
  std::uniform_int_distribution<int> e(emin, emax);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>((g() & 1 ? -1.0 : 1.0) * std::ldexp(m(g), e(g)));
  return v;
}

// Ill-conditioned dot products with condition number about c: Ogita, Rump and Oishi,
// "Accurate sum and dot product" (2005), Algorithm 6.1 (GenDot). The running dot products
// of the second half are computed exactly (MPFR) or in long double.
template <class T> void gen_dot(std::size_t n, double c, std::uint64_t seed, std::vector<T>& x, std::vector<T>& y) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double b = std::log2(c);
  const std::size_t n2 = n / 2;
  x.assign(n, T(0));
  y.assign(n, T(0));
  auto rnd = [&](int e) { return static_cast<T>(std::ldexp(2 * u(g) - 1, e)); };
  std::vector<int> es(n2);
  for (std::size_t i = 0; i < n2; ++i) es[i] = static_cast<int>(std::lround(u(g) * b / 2));
  es[0] = static_cast<int>(std::lround(b / 2)) + 1;
  es[n2 - 1] = 0;
  for (std::size_t i = 0; i < n2; ++i) {
    x[i] = rnd(es[i]);
    y[i] = rnd(es[i]);
  }
  for (std::size_t i = n2; i < n; ++i) {
    int e = static_cast<int>(std::lround(b / 2 * (1.0 - double(i - n2) / double(n - n2))));
    x[i] = rnd(e);
    // y[i] = (rnd(e) - x[0:i] . y[0:i]) / x[i], with the running dot product computed exactly.
    std::vector<T> xi(x.begin(), x.begin() + i), yi(y.begin(), y.begin() + i);
    double d = static_cast<double>(oracle<T, double>(xi, yi));
    y[i] = static_cast<T>((static_cast<double>(rnd(e)) - d) / static_cast<double>(x[i]));
  }
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), g);
  std::vector<T> px(n), py(n);
  for (std::size_t i = 0; i < n; ++i) {
    px[i] = x[perm[i]];
    py[i] = y[perm[i]];
  }
  x.swap(px);
  y.swap(py);
}

// ---- fixture ------------------------------------------------------------------------------

class Exact : public Typed {
 protected:
  // Oracle comparisons on the CPU need MPFR (without it the oracle is the CPU itself). So on
  // the GPU machine (no MPFR) the cpu instances of the oracle tests skip by design, and the
  // cuda instances run against the cpu backend's bits.
  bool oracle_meaningful() const { return kHaveMpfr || b() != backend::cpu; }

  template <class T, class Out = T>
  ::testing::AssertionResult sum_ok(const std::vector<T>& x, std::size_t offset = 0) {
    auto bx = put(x, offset);
    return same(tally::sum<T, Out>(bx.in(), opt()), oracle<T, Out>(x, {}));
  }
  template <class T, class Out = T>
  ::testing::AssertionResult dot_ok(const std::vector<T>& x, const std::vector<T>& y,
                                    std::size_t ox = 0, std::size_t oy = 0) {
    auto bx = put(x, ox), by = put(y, oy);
    return same(tally::dot<T, Out>(bx.in(), by.in(), opt()), oracle<T, Out>(x, y));
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, Exact,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float32, dtype::float64)),
                         [](const auto& i) {
                           return std::string(tally::backend_name(std::get<0>(i.param))) + "_" +
                                  tally::dtype_name(std::get<1>(i.param));
                         });

template <class F> void with_float(dtype t, F&& f) {
  if (t == dtype::float32) f.template operator()<float>();
  else f.template operator()<double>();
}

// ---- known answers (no oracle needed) -----------------------------------------------------

TEST_P(Exact, KnownAnswers) {
  with_float(t(), [&]<class T>() {
    // Ones, 2^24 + 1: float64 output 16777217 exactly; float32 output rounds to even.
    for (std::int64_t n : {(1 << 24) + 1, (1 << 24) + 3}) {
      auto x = put(std::vector<T>(n, T(1)));
      EXPECT_EQ((tally::sum<T, double>(x.in(), opt())), double(n)) << n;
      EXPECT_EQ((tally::dot<T, double>(x.in(), x.in(), opt())), double(n)) << n;
      EXPECT_EQ((tally::sum<T, float>(x.in(), opt())), n == (1 << 24) + 1 ? 16777216.0f : 16777220.0f) << n;
    }
    // +1e30, 1, -1e30 repeated: the exact sum counts the ones.
    std::vector<T> c;
    for (int i = 0; i < 30001; ++i) {
      c.push_back(T(1e30));
      c.push_back(T(1));
      c.push_back(T(-1e30));
    }
    EXPECT_EQ(sum(c), T(30001));
    // A symmetric sequence: exact sum 0, +0.0.
    auto u = uniform<T>(50000, 3);
    std::vector<T> sym(u);
    for (T v : u) sym.push_back(-v);
    std::shuffle(sym.begin(), sym.end(), std::mt19937_64(4));
    EXPECT_TRUE(same(sum(sym), T(0)));
    // Ties to even: 1 + 2^-53 (float64: tie, stays 1), (1 + 2^-52) + 2^-53 (rounds up).
    if constexpr (std::is_same_v<T, double>) {
      EXPECT_TRUE(same(sum(std::vector<double>{1.0, 0x1p-53}), 1.0));
      EXPECT_TRUE(same(sum(std::vector<double>{1.0 + 0x1p-52, 0x1p-53}), 1.0 + 0x1p-51));
      EXPECT_TRUE(same(sum(std::vector<double>{1.0, 0x1p-53, 0x1p-200}), 1.0 + 0x1p-52)) << "sticky bit";
      // No intermediate overflow; the exact sum decides.
      EXPECT_TRUE(same(sum(std::vector<double>{1e308, 1e308, -1e308}), 1e308));
      EXPECT_TRUE(same(sum(std::vector<double>{DBL_MAX, DBL_MAX, -DBL_MAX}), DBL_MAX));
      EXPECT_TRUE(same(sum(std::vector<double>{DBL_MAX, DBL_MAX}), INFINITY));
      EXPECT_TRUE(same(sum(std::vector<double>{-DBL_MAX, -DBL_MAX}), -INFINITY));
      EXPECT_TRUE(same(dot(std::vector<double>{1e200, 1e200}, std::vector<double>{1e200, -1e200}), 0.0))
          << "products beyond the float64 range cancel exactly";
      EXPECT_TRUE(same(dot(std::vector<double>{1e200, 1e-200}, std::vector<double>{1e200, 1e-200}), INFINITY));
      EXPECT_TRUE(same(dot(std::vector<double>{1e-200, -1e-200}, std::vector<double>{1e-200, 1e-200}), 0.0));
      EXPECT_TRUE(same(dot(std::vector<double>{-1e-200}, std::vector<double>{1e-200}), -0.0))
          << "a tiny negative exact value rounds to -0";
      EXPECT_TRUE(same((tally::sum<double, float>(put(std::vector<double>{-1e-300}).in(), opt())), -0.0f));
      EXPECT_TRUE(same((tally::sum<double, float>(put(std::vector<double>{1e300, 1e300, -1e300}).in(), opt())), INFINITY))
          << "exact 1e300 overflows float32";
      // Subnormals: the smallest one, sums of them, halfway cases.
      const double tiny = 0x1p-1074;
      EXPECT_TRUE(same(sum(std::vector<double>{tiny, tiny, tiny}), 3 * tiny));
      EXPECT_TRUE(same(sum(std::vector<double>{DBL_MIN, -tiny}), DBL_MIN - tiny));
    } else {
      EXPECT_TRUE(same(sum(std::vector<float>{1.0f, 0x1p-24f}), 1.0f));
      EXPECT_TRUE(same(sum(std::vector<float>{1.0f + 0x1p-23f, 0x1p-24f}), 1.0f + 0x1p-22f));
      EXPECT_TRUE(same(sum(std::vector<float>{FLT_MAX, FLT_MAX}), INFINITY));
      EXPECT_TRUE(same((tally::sum<float, double>(put(std::vector<float>{FLT_MAX, FLT_MAX}).in(), opt())),
                       2.0 * double(FLT_MAX)));
      EXPECT_TRUE(same(sum(std::vector<float>{0x1p-149f, 0x1p-149f}), 0x1p-148f));
    }
    // Special values.
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    EXPECT_TRUE(std::isnan(sum(std::vector<T>{1, nan, 2})));
    EXPECT_TRUE(std::isnan(sum(std::vector<T>{inf, -inf})));
    EXPECT_TRUE(same(sum(std::vector<T>{inf, 1, inf}), inf));
    EXPECT_TRUE(same(sum(std::vector<T>{-inf, 1}), -inf));
    EXPECT_TRUE(std::isnan(dot(std::vector<T>{0, 1}, std::vector<T>{inf, 1})));
    EXPECT_TRUE(same(dot(std::vector<T>{2, 1}, std::vector<T>{-inf, 1}), -inf));
    // Signed zeros.
    EXPECT_TRUE(same(sum(std::vector<T>{-0.0, -0.0}), T(-0.0)));
    EXPECT_TRUE(same(sum(std::vector<T>(70001, T(-0.0))), T(-0.0)));
    EXPECT_TRUE(same(sum(std::vector<T>{-0.0, 0.0}), T(0.0)));
    EXPECT_TRUE(same(sum(std::vector<T>{}), T(0.0)));
    EXPECT_TRUE(same(dot(std::vector<T>{-0.0, 0.0}, std::vector<T>{1, -1}), T(-0.0)));
    EXPECT_TRUE(same(dot(std::vector<T>{-0.0, 0.0}, std::vector<T>{1, 1}), T(0.0)));
  });
}

// ---- against the oracle -------------------------------------------------------------------

TEST_P(Exact, RandomDataEveryLaunchShape) {
  if (!oracle_meaningful()) GTEST_SKIP() << "no MPFR oracle in this build (the cpu backend would be its own reference)";
  with_float(t(), [&]<class T>() {
    std::uint64_t seed = 10;
    // Lengths from one block to a full grid, and offsets that take the vector path (0) and
    // the misaligned scalar path (dot with x and y at different offsets).
    for (std::size_t n : {1u, 2u, 3u, 15u, 16u, 17u, 255u, 257u, 1023u, 1025u, 4097u, 65537u, 262147u, 1000003u}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      auto x = uniform<T>(n, ++seed), y = uniform<T>(n, ++seed);
      EXPECT_TRUE(sum_ok(x));
      EXPECT_TRUE(sum_ok(x, 1));
      EXPECT_TRUE(dot_ok(x, y));
      EXPECT_TRUE(dot_ok(x, y, 1, 0));
      EXPECT_TRUE((sum_ok<T, double>(x)));
      EXPECT_TRUE((dot_ok<T, float>(x, y, 3, 3)));
    }
  });
}

TEST_P(Exact, WideExponentRanges) {
  if (!oracle_meaningful()) GTEST_SKIP() << "no MPFR oracle in this build (the cpu backend would be its own reference)";
  with_float(t(), [&]<class T>() {
    std::uint64_t seed = 100;
    for (std::size_t n : {7u, 1000u, 100003u}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      auto x = wide<T>(n, ++seed, -60, 60), y = wide<T>(n, ++seed, -60, 60);
      EXPECT_TRUE(sum_ok(x));
      EXPECT_TRUE(dot_ok(x, y));
      // The whole range, subnormals included.
      int lo = std::is_same_v<T, float> ? -149 : -1074, hi = std::is_same_v<T, float> ? 127 : 1023;
      auto z = wide<T>(n, ++seed, lo, hi), w = wide<T>(n, ++seed, lo, hi);
      for (std::size_t i = 0; i < n; i += 3) z[i] = static_cast<T>(std::ldexp(double(i % 7) + 1, lo));  // subnormals
      EXPECT_TRUE(sum_ok(z));
      EXPECT_TRUE((sum_ok<T, double>(z)));
      EXPECT_TRUE(dot_ok(z, w));
      EXPECT_TRUE((dot_ok<T, double>(z, w, 1, 0)));
    }
  });
}

TEST_P(Exact, IllConditionedDotProducts) {
  if (!oracle_meaningful()) GTEST_SKIP() << "no MPFR oracle in this build (the cpu backend would be its own reference)";
  with_float(t(), [&]<class T>() {
    const double cmax = std::is_same_v<T, float> ? 1e30 : 1e100;
    std::uint64_t seed = 1000;
    for (double c = 1; c <= cmax; c *= 1e5) {
      SCOPED_TRACE("condition number ~" + std::to_string(c));
      std::vector<T> x, y;
      gen_dot<T>(500, c, ++seed, x, y);
      EXPECT_TRUE(dot_ok(x, y));
      EXPECT_TRUE((dot_ok<T, double>(x, y, 1, 2)));
      // The same terms as a sum: x*y (float64 products) for float64 output.
      std::vector<double> p(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) p[i] = double(x[i]) * double(y[i]);
      if constexpr (std::is_same_v<T, float>) {  // float32 products are exact in float64
        auto bp = put(p);
        EXPECT_TRUE(same(tally::sum<double>(bp.in(), opt()), (oracle<float, double>(x, y))));
      }
    }
  });
}

// Data that exercises every path of the exact kernels: magnitudes that climb (the per-warp
// anchor of the float64 levels moves up again and again) or fall (remainders below the last
// level), rare huge values and subnormals among ordinary ones (including in the unaligned
// head and the tail), products that underflow, long runs of -0.0, exact cancellation, and
// lengths past the levels' renormalisation interval.
TEST_P(Exact, HardDataEveryPath) {
  if (!oracle_meaningful()) GTEST_SKIP() << "no MPFR oracle in this build (the cpu backend would be its own reference)";
  with_float(t(), [&]<class T>() {
    constexpr bool f32 = std::is_same_v<T, float>;
    const int emax = f32 ? 127 : 1023, emin = f32 ? -149 : -1074;
    std::mt19937_64 g(4242);
    std::uniform_real_distribution<double> m(1.0, 2.0);
    for (std::size_t n : {100u, 5003u, 300007u}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      std::vector<T> up(n), down(n);
      for (std::size_t i = 0; i < n; ++i) {
        int e = static_cast<int>(-100 + 200 * double(i) / double(n));
        up[i] = static_cast<T>((g() & 1 ? -1 : 1) * std::ldexp(m(g), e));
        down[n - 1 - i] = up[i];
      }
      EXPECT_TRUE(sum_ok(up));
      EXPECT_TRUE(sum_ok(down));
      EXPECT_TRUE(sum_ok(up, 1));
      EXPECT_TRUE(dot_ok(up, down));
      EXPECT_TRUE(dot_ok(down, up, 1, 1));

      auto x = uniform<T>(n, 7 + n), y = uniform<T>(n, 8 + n);
      for (std::size_t i : {std::size_t(0), std::size_t(1), n / 3, n / 2, n - 2, n - 1}) {
        x[i] = static_cast<T>(std::ldexp(m(g), emax - 1) * (i % 2 ? -1 : 1));  // near the top
        y[(i + 5) % n] = static_cast<T>(std::ldexp(double(i % 5 + 1), emin));   // subnormal
      }
      EXPECT_TRUE(sum_ok(x));
      EXPECT_TRUE(sum_ok(x, 1));
      EXPECT_TRUE(sum_ok(y));
      EXPECT_TRUE((sum_ok<T, double>(y, 1)));
      EXPECT_TRUE(dot_ok(x, y));
      EXPECT_TRUE(dot_ok(y, x, 1, 0));
      // Products that underflow (float64: below 2^-965, where TwoProduct is not exact) among
      // ordinary ones, and products near overflow.
      auto a = uniform<T>(n, 9 + n), c = uniform<T>(n, 10 + n);
      for (std::size_t i = 0; i < n; i += 7) {
        a[i] = static_cast<T>(std::ldexp(m(g), f32 ? -70 : -600));
        c[i] = static_cast<T>(std::ldexp(m(g), f32 ? -70 : -500));
      }
      a[n / 2] = static_cast<T>(std::ldexp(1.5, emax - 1));
      c[n / 2] = static_cast<T>(std::ldexp(1.25, emax - 1));
      EXPECT_TRUE(dot_ok(a, c));
      EXPECT_TRUE((dot_ok<T, double>(a, c, 1, 1)));
      // -0.0 everywhere gives -0.0; one +0.0 gives +0.0; x and -x shuffled give +0.0.
      std::vector<T> nz(n, T(-0.0));
      EXPECT_TRUE(sum_ok(nz));
      EXPECT_TRUE(dot_ok(nz, a));
      nz[n - 1] = T(0.0);
      EXPECT_TRUE(sum_ok(nz));
      auto w = wide<T>(n / 2, 11 + n, -60, 60);
      std::vector<T> pm(w);
      for (T v : w) pm.push_back(-v);
      std::shuffle(pm.begin(), pm.end(), g);
      EXPECT_TRUE(sum_ok(pm));
      EXPECT_TRUE(sum_ok(pm, 1));
    }
    // Long wide data: every thread passes several renormalisations.
    auto x = wide<T>(3000017, 5, -60, 60), y = wide<T>(3000017, 6, -60, 60);
    EXPECT_TRUE(sum_ok(x));
    EXPECT_TRUE(dot_ok(x, y));
  });
}

// Data whose ranges of bits step across multiples of the 40-bit level width, so that the CPU
// picks every number of levels from its pre-pass (and skips the remainder test when they
// cover the range, keeps it when they cannot): large elements 2^a, a in [0, 16), among small
// ones with their low bit up to `span` binades below.
TEST_P(Exact, SpansAroundLevelBoundaries) {
  if (!oracle_meaningful()) GTEST_SKIP() << "no MPFR oracle in this build (the cpu backend would be its own reference)";
  with_float(t(), [&]<class T>() {
    constexpr int mant = std::numeric_limits<T>::digits;
    std::mt19937_64 g(99);
    for (int span : {38, 39, 40, 41, 42, 79, 80, 81, 119, 120, 121, 159, 160, 161, 199, 200, 201, 240}) {
      SCOPED_TRACE("span=" + std::to_string(span));
      const std::size_t n = 70001;  // more than two CPU chunks
      std::vector<T> x(n), y(n);
      for (std::size_t i = 0; i < n; ++i) {
        int a = static_cast<int>(g() % 16);
        // The low bit sits `span` below the top bit of the chunk's largest element: a value of
        // at most `mant` bits at a random place in the span.
        int lo = a - span + (mant - 1);
        double top = std::ldexp(1.0, a), low = std::ldexp(1.0, std::max(lo - static_cast<int>(g() % 8), a - span));
        x[i] = static_cast<T>((g() & 1 ? -1 : 1) * (i % 3 == 0 ? top : low * double(1 + (g() & 0xff))));
        y[i] = static_cast<T>(std::ldexp(1.0, -static_cast<int>(g() % 8)) * (g() & 1 ? -1 : 1));
      }
      EXPECT_TRUE(sum_ok(x));
      EXPECT_TRUE((sum_ok<T, double>(x)));
      EXPECT_TRUE(dot_ok(x, y));
    }
  });
}

// The same bits on the CPU and on the GPU, over many launch shapes (CUDA param only).
TEST_P(Exact, BitwiseSameAsCpu) {
  if (b() != backend::cuda) GTEST_SKIP() << "compares the cuda backend with the cpu backend";
  with_float(t(), [&]<class T>() {
    tally::options cpu;
    cpu.backend = backend::cpu;
    std::uint64_t seed = 7;
    for (std::size_t n : {5u, 300u, 4096u, 70000u, 2000003u, 20000003u}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      auto x = wide<T>(n, ++seed, -30, 30), y = uniform<T>(n, ++seed);
      for (std::size_t off : {0u, 1u}) {
        auto bx = put(x, off), by = put(y, 0);
        EXPECT_TRUE(same(tally::sum<T>(bx.in(), opt()), tally::sum<T>(x, cpu)));
        EXPECT_TRUE(same(tally::dot<T>(bx.in(), by.in(), opt()), tally::dot<T>(x, y, cpu)));
        EXPECT_TRUE(same((tally::sum<T, double>(bx.in(), opt())), (tally::sum<T, double>(x, cpu))));
      }
    }
  });
}

// The float64 dot kernel's windowed bins (src/cuda/exact_window.cuh) on the paths that
// ordinary data rarely takes, against the cpu backend's bits (CUDA param, float64 only):
// products of 53 one-bits that fill their bins fastest, long enough that every thread
// flushes its bins several times (more than 960 products per thread at a full grid);
// magnitudes rising through the array (each warp's window moves up tens of times);
// magnitudes falling (most products end below the window: the out-of-line path); and the
// same as sums of squares (the L2 norm's kernel).
TEST_P(Exact, WindowedBinsFlushMoveAndFallBelow) {
  if (b() != backend::cuda || t() != dtype::float64) GTEST_SKIP() << "the cuda float64 dot kernel's paths";
  tally::options cpu;
  cpu.backend = backend::cpu;
  const double full = 2.0 - 0x1p-52;  // 53 one-bits
  auto check = [&](const std::vector<double>& x, const std::vector<double>& y, const char* what) {
    SCOPED_TRACE(what);
    auto bx = put(x), by = put(y);
    EXPECT_TRUE(same(tally::dot<double>(bx.in(), by.in(), opt()), tally::dot<double>(x, y, cpu)));
    EXPECT_TRUE(same((tally::dot<double, float>(bx.in(), by.in(), opt())), (tally::dot<double, float>(x, y, cpu))));
  };
  {
    const std::size_t n = (std::size_t(1) << 27) + 5;
    std::vector<double> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = std::ldexp(full, static_cast<int>(i % 16));
      y[i] = i % 1000 == 999 ? -full : full;
    }
    check(x, y, "full bins, flushes");
  }
  std::mt19937_64 g(77);
  std::uniform_real_distribution<double> m(1.0, 2.0);
  for (std::size_t n : {std::size_t(4000037), std::size_t(40000003)}) {
    std::vector<double> up(n), down(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      int e = static_cast<int>(-400 + 800 * double(i) / double(n));
      up[i] = (g() & 1 ? -1 : 1) * std::ldexp(m(g), e);
      down[n - 1 - i] = up[i];
      y[i] = m(g);
    }
    check(up, y, "rising: the window moves");
    if (n < 10000000) check(down, y, "falling: products below the window");
    auto bu = put(up);
    EXPECT_TRUE(same(tally::norm2<double>(bu.in(), opt()), tally::norm2<double>(up, cpu))) << "sum of squares, rising";
  }
}

// Fast mode keeps its documented bound (and may differ from exact mode).
TEST_P(Exact, FastModeWithinItsBound) {
  with_float(t(), [&]<class T>() {
    tally::options o = opt();
    o.accuracy = tally::accuracy::fast;
    for (std::size_t n : {1000u, 300007u}) {
      auto x = uniform<T>(n, n), y = uniform<T>(n, n + 1);
      auto bx = put(x), by = put(y);
      EXPECT_TRUE(within_bound(b(), tally::sum<T>(bx.in(), o), x));
      EXPECT_TRUE(within_bound(b(), tally::dot<T>(bx.in(), by.in(), o), x, y));
    }
  });
}

// The superaccumulator state merges exactly: digits of three uneven parts, each built by
// depositing every element directly (no expansions), add up to the digits of the whole, and
// the rounded total equals tally's exact sum.
TEST_P(Exact, SuperaccumulatorStatesMerge) {
  with_float(t(), [&]<class T>() {
    using L = std::conditional_t<std::is_same_v<T, float>, ex::f32_sum_layout, ex::f64_sum_layout>;
    auto x = wide<T>(30011, 77, -40, 40);
    std::int64_t whole[L::digits] = {};
    std::size_t cut[] = {0, 1, 20000, x.size()};
    for (int part = 0; part < 3; ++part) {
      std::int64_t d[L::digits] = {};
      for (std::size_t i = cut[part]; i < cut[part + 1]; ++i)
        ex::deposit<L>(static_cast<double>(x[i]), [&](int k, std::int64_t v) { d[k] += v; });
      ex::normalize<L::digits>(d);
      for (int k = 0; k < L::digits; ++k) whole[k] += d[k];
    }
    T merged = ex::round_to<L, T>(whole, ex::seen_not_neg_zero);
    EXPECT_TRUE(same(sum(x), merged));
    if (kHaveMpfr) {
      EXPECT_TRUE(same(merged, (oracle<T, T>(x, {}))));
    }
  });
}

}  // namespace
}  // namespace tt
