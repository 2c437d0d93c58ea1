// var / std_dev, add, axpy and scale of the element types added after the first four (float16,
// bfloat16, int8, int16, uint8, uint16, uint32, uint64, bool), on both backends.
//
// References: MPFR on the cpu backend (the exact variance of the exact values, rounded once;
// the exact a*x + y rounded once to the 16-bit format with MPFR's subnormalize), exact 128-bit
// integers for the integer element-wise operations; the cuda backend is held to the cpu
// backend's bits (the GPU machine has no MPFR); exact var/std of uint64 there is a clear
// refusal (the other types are widened to float64 on the GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"

#if defined(TALLY_TEST_HAVE_MPFR)
#include <mpfr.h>
#endif

namespace tt {
namespace {

using tally::bfloat16;
using tally::float16;

// Host storage of element type T: bool as NumPy's bytes (std::vector<bool> has no data()).
template <class T> using host_t = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;
template <class T> constexpr bool is_half = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <class T> double value_of(host_t<T> v) {
  if constexpr (is_half<T>) return static_cast<double>(tally::to_float(v));
  else return static_cast<double>(v);
}
template <class T> host_t<T> half_of(float f) {
  if constexpr (std::is_same_v<T, float16>) return tally::to_float16(f);
  else return tally::to_bfloat16(f);
}
template <class T> std::uint16_t bits_of(host_t<T> v) { return v.bits; }

/// The same for the 16-bit floats only, and for the integers only (not bool).
template <class F> void with_half_type(dtype t, F&& f) {
  if (t == dtype::float16) return f.template operator()<float16>();
  if (t == dtype::bfloat16) return f.template operator()<bfloat16>();
  FAIL() << "not a 16-bit float";
}
template <class F> void with_int_type(dtype t, F&& f) {
  switch (t) {
    case dtype::int8: return f.template operator()<std::int8_t>();
    case dtype::int16: return f.template operator()<std::int16_t>();
    case dtype::uint8: return f.template operator()<std::uint8_t>();
    case dtype::uint16: return f.template operator()<std::uint16_t>();
    case dtype::uint32: return f.template operator()<std::uint32_t>();
    case dtype::uint64: return f.template operator()<std::uint64_t>();
    default: FAIL() << "not a new integer type";
  }
}

/// Random data of T: 16-bit floats finite, of magnitudes 2^-e_lo..2^e_hi (bfloat16: also
/// beyond float16's range); integers over the whole range of T; bool 0/1.
template <class T> std::vector<host_t<T>> random_data(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<host_t<T>> v(n);
  for (auto& e : v) {
    if constexpr (is_half<T>) {
      int k = static_cast<int>(g() % 29) - 14;  // 2^-14 .. 2^15 (exclusive): finite in float16
      double m = 1.0 + static_cast<double>(g() >> 11) * 0x1.0p-53;
      e = half_of<T>(static_cast<float>((g() & 1 ? -1 : 1) * std::ldexp(m, k)));
    } else if constexpr (std::is_same_v<T, bool>) {
      e = static_cast<std::uint8_t>(g() & 1);
    } else {
      e = static_cast<T>(g());
    }
  }
  return v;
}

// ---- the MPFR oracles -----------------------------------------------------------------------

#if defined(TALLY_TEST_HAVE_MPFR)
template <class T> void set_exact(mpfr_t a, host_t<T> v) {
  if constexpr (std::is_same_v<T, std::uint64_t>) mpfr_set_ui(a, static_cast<unsigned long>(v), MPFR_RNDN);
  else if constexpr (is_half<T>) mpfr_set_d(a, value_of<T>(v), MPFR_RNDN);
  else mpfr_set_si(a, static_cast<long>(v), MPFR_RNDN);
}
#endif

/// The exact variance (take_sqrt: standard deviation) rounded once to Out: S1, S2 exact at
/// 1200 bits, n S2 - S1^2 exact, the quotient by n (n - ddof) at 1200 bits and rounded once
/// more (never within 2^-1100 of a rounding boundary without being on it).
template <class T, class Out> Out var_oracle(const std::vector<host_t<T>>& x, std::int64_t ddof, bool take_sqrt) {
#if defined(TALLY_TEST_HAVE_MPFR)
  mpfr_t s1, s2, a, q;
  mpfr_inits2(1200, s1, s2, a, q, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_zero(s1, 1);
  mpfr_set_zero(s2, 1);
  for (auto v : x) {
    set_exact<T>(a, v);
    mpfr_add(s1, s1, a, MPFR_RNDN);
    mpfr_sqr(a, a, MPFR_RNDN);
    mpfr_add(s2, s2, a, MPFR_RNDN);
  }
  const long n = static_cast<long>(x.size());
  mpfr_mul_si(s2, s2, n, MPFR_RNDN);
  mpfr_sqr(s1, s1, MPFR_RNDN);
  mpfr_sub(a, s2, s1, MPFR_RNDN);
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

/// op(a, x, y) of 16-bit floats (add: x + y; axpy: a x + y; scale: a x), exact in MPFR and
/// rounded once to T's format (precision 11 or 8; subnormals and overflow through MPFR's
/// emin / emax and mpfr_subnormalize). NaN for NaN results; +-0 signs by IEEE rules.
enum class ew_op { add, axpy, scale };
template <class T> host_t<T> half_oracle(ew_op op, host_t<T> a, host_t<T> x, host_t<T> y) {
  double da = value_of<T>(a), dx = value_of<T>(x), dy = value_of<T>(y);
  double d = op == ew_op::add ? dx + dy : op == ew_op::scale ? da * dx : da * dx + dy;  // specials and zeros
  if (!std::isfinite(d) && (std::isnan(da) || std::isnan(dx) || std::isnan(dy) || std::isinf(da) || std::isinf(dx) ||
                            std::isinf(dy)))
    return half_of<T>(static_cast<float>(d));
#if defined(TALLY_TEST_HAVE_MPFR)
  constexpr int prec = std::is_same_v<T, float16> ? 11 : 8;
  constexpr long emin = std::is_same_v<T, float16> ? -23 : -132, emax = std::is_same_v<T, float16> ? 16 : 128;
  mpfr_t e, t, r;
  mpfr_inits2(600, e, t, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(e, op == ew_op::add ? dx : da, MPFR_RNDN);
  if (op != ew_op::add) {
    mpfr_set_d(t, dx, MPFR_RNDN);
    mpfr_mul(e, e, t, MPFR_RNDN);  // exact
  }
  if (op != ew_op::scale) {
    mpfr_set_d(t, dy, MPFR_RNDN);
    mpfr_add(e, e, t, MPFR_RNDN);  // exact at 600 bits
  }
  host_t<T> out;
  if (mpfr_zero_p(e)) {
    out = half_of<T>(static_cast<float>(d));  // the IEEE sign of an exact zero (d is exact then)
  } else {
    mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_init2(r, prec);
    int inex = mpfr_set(r, e, MPFR_RNDN);
    inex = mpfr_check_range(r, inex, MPFR_RNDN);
    mpfr_subnormalize(r, inex, MPFR_RNDN);
    double v = mpfr_get_d(r, MPFR_RNDN);  // exact (or +-inf)
    mpfr_set_emin(old_min);
    mpfr_set_emax(old_max);
    mpfr_clear(r);
    out = half_of<T>(static_cast<float>(v));  // exact
  }
  mpfr_clears(e, t, static_cast<mpfr_ptr>(nullptr));
  return out;
#else
  return half_of<T>(std::numeric_limits<float>::quiet_NaN());
#endif
}

// ---- fixture ----------------------------------------------------------------------------------

class SmallOps : public Typed {
 protected:
  template <class T> buffer<host_t<T>> put_t(const std::vector<host_t<T>>& v, std::size_t off = 0) const {
    return buffer<host_t<T>>(b(), v, off);
  }
  template <class T> static tally::view<const T> in(const buffer<host_t<T>>& bx) {
    return {reinterpret_cast<const T*>(bx.data()), bx.size()};
  }
  template <class T> static tally::view<T> out(const buffer<host_t<T>>& bx) {
    return {reinterpret_cast<T*>(bx.data()), bx.size()};
  }
  template <class T, class Out> Out var_on(const std::vector<host_t<T>>& x, std::int64_t ddof, bool take_sqrt,
                                           tally::options o, std::size_t off = 0) const {
    auto bx = put_t<T>(x, off);
    return take_sqrt ? tally::std_dev<T, Out>(in<T>(bx), ddof, o) : tally::var<T, Out>(in<T>(bx), ddof, o);
  }
  // The correctly rounded result: MPFR on the cpu backend; the cpu backend's exact bits on cuda.
  template <class T, class Out> Out exact_ref(const std::vector<host_t<T>>& x, std::int64_t ddof, bool take_sqrt) const {
    return reference_of(
        b(), "cpu exact var",
        [&] {
          tally::view<const T> v(reinterpret_cast<const T*>(x.data()), static_cast<std::int64_t>(x.size()),
                                 tally::memory::host);
          return take_sqrt ? tally::std_dev<T, Out>(v, ddof, cpu_backend()) : tally::var<T, Out>(v, ddof, cpu_backend());
        },
        [&] { return var_oracle<T, Out>(x, ddof, take_sqrt); });
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, SmallOps,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float16, dtype::bfloat16, dtype::int8, dtype::int16,
                                                              dtype::uint8, dtype::uint16, dtype::uint32, dtype::uint64,
                                                              dtype::bool_)),
                         [](const auto& info) { return param_name(info); });

// ---- var / std --------------------------------------------------------------------------------

TEST_P(SmallOps, VarDefaultResultTypeFollowsMean) {
  with_small_type(t(), [&]<class T>() {
    using Out = decltype(tally::var<T>(tally::view<const T>{}));
    static_assert(std::is_same_v<Out, tally::mean_t<T>>);
    EXPECT_EQ((std::is_same_v<Out, float>), is_half<T>);
  });
}

TEST_P(SmallOps, ExactVarIsCorrectlyRounded) {
  with_small_type(t(), [&]<class T>() {
    using Out = tally::mean_t<T>;
    if (b() == backend::cuda && std::is_same_v<T, std::uint64_t>) {  // not widened: 2^64 > 2^53
      auto bx = put_t<T>(random_data<T>(100, 1));
      const std::string name = tally::dtype_name(t());
      EXPECT_TRUE(throws_tally([&] { tally::var<T, Out>(in<T>(bx), 0, opt()); }, errc::invalid_argument,
                               {"tally::var", name, "cuda backend"}));
      EXPECT_TRUE(throws_tally([&] { tally::std_dev<T, double>(in<T>(bx), 1, opt()); }, errc::invalid_argument,
                               {"tally::std", name, "cuda backend"}));
      return;
    }
#if !defined(TALLY_TEST_HAVE_MPFR)
    if (b() != backend::cuda) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
    // exact_ref: MPFR on the cpu backend; the cpu backend's exact bits on the cuda backend.
    for (std::size_t n : {1u, 2u, 3u, 17u, 1000u, 70001u}) {
      auto x = random_data<T>(n, 7 * n + 1);
      for (std::int64_t ddof : {0, 1, -2}) {
        if (static_cast<std::int64_t>(n) - ddof <= 0) continue;
        for (bool sq : {false, true}) {
          SCOPED_TRACE("n=" + std::to_string(n) + " ddof=" + std::to_string(ddof) + (sq ? " std" : " var"));
          EXPECT_TRUE(same_bits(var_on<T, Out>(x, ddof, sq, opt(), n % 3), not_nan(exact_ref<T, Out>(x, ddof, sq), "oracle")));
          EXPECT_TRUE(same_bits(var_on<T, float>(x, ddof, sq, opt()), exact_ref<T, float>(x, ddof, sq)));
          EXPECT_TRUE(same_bits(var_on<T, double>(x, ddof, sq, opt()), exact_ref<T, double>(x, ddof, sq)));
        }
      }
    }
    // The extremes of the type: for uint64 values up to 2^64 - 1, squares near 2^128.
    std::vector<host_t<T>> ext;
    if constexpr (is_half<T>) {
      const float big = std::is_same_v<T, float16> ? 65504.0f : 3.3895314e38f;  // the largest finite
      ext = {half_of<T>(big), half_of<T>(-big), half_of<T>(big), half_of<T>(std::ldexp(1.0f, -24))};
    } else if constexpr (std::is_same_v<T, bool>) {
      ext = {1, 0, 0, 1, 1};
    } else {
      ext = {std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
             static_cast<T>(std::numeric_limits<T>::max() - 1), T(0)};
    }
    for (bool sq : {false, true}) {
      EXPECT_TRUE(same_bits(var_on<T, Out>(ext, 0, sq, opt()), exact_ref<T, Out>(ext, 0, sq))) << sq;
      EXPECT_TRUE(same_bits(var_on<T, double>(ext, 1, sq, opt()), exact_ref<T, double>(ext, 1, sq))) << sq;
    }
    if constexpr (std::is_same_v<T, std::uint64_t>) {
      // Values near 2^64 (squares near 2^128): var of {m + 1, m - 1, m} is 2/3 (ddof 1: 1).
      std::vector<std::uint64_t> near = {UINT64_MAX, UINT64_MAX - 2, UINT64_MAX - 1};
      EXPECT_EQ((var_on<T, double>(near, 0, false, opt())), 2.0 / 3.0);  // mean 2^64 - 2: (1 + 1 + 0) / 3
      EXPECT_EQ((var_on<T, double>(near, 1, false, opt())), 1.0);
    }
    if constexpr (std::is_same_v<T, bool>) {  // NumPy: var([True, False, False, True, True]) = 0.24
      EXPECT_EQ((var_on<T, double>(ext, 0, false, opt())), 0.24);
    }
  });
}

TEST_P(SmallOps, FastVarWithinAnExplicitBound) {
  // Welford/Chan in float64 (see test_moments.cpp): relative error below 1e-10 for this data
  // (condition number below 10), plus one float32 ulp for float32 results.
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (b() != backend::cuda) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_small_type(t(), [&]<class T>() {
    using Out = tally::mean_t<T>;
    tally::options o = opt();
    o.accuracy = tally::accuracy::fast;
    std::vector<std::size_t> lengths = {2u, 1000u, 300001u};
    if (b() == backend::cuda) lengths.push_back(3000017u);
    for (std::size_t n : lengths) {
      auto x = random_data<T>(n, 5 * n);
      for (std::int64_t ddof : {0, 1}) {
        for (bool sq : {false, true}) {
          double got = var_on<T, Out>(x, ddof, sq, o);
          double want = exact_ref<T, double>(x, ddof, sq);
          double tol = std::is_same_v<Out, float> ? 1.2e-7 : 1e-10;
          EXPECT_LE(std::fabs(got - want), tol * want) << "n=" << n << " ddof=" << ddof << " sq=" << sq;
        }
      }
    }
  });
}

TEST_P(SmallOps, VarEmptyDdofSpecialValues) {
  with_small_type(t(), [&]<class T>() {
    using Out = tally::mean_t<T>;
    for (auto acc : {tally::accuracy::exact, tally::accuracy::fast}) {
      if (acc == tally::accuracy::exact && b() == backend::cuda && std::is_same_v<T, std::uint64_t>) continue;  // (refused: see above)
      tally::options o = opt();
      o.accuracy = acc;
      std::vector<host_t<T>> x = {host_t<T>(1), host_t<T>(0), host_t<T>(1)};
      if constexpr (is_half<T>) x = {half_of<T>(1), half_of<T>(2), half_of<T>(4)};
      EXPECT_TRUE(std::isnan(var_on<T, Out>({}, 0, false, o)));      // NumPy: NaN
      EXPECT_TRUE(std::isnan(var_on<T, Out>(x, 3, false, o)));       // n - ddof = 0
      EXPECT_TRUE(std::isnan(var_on<T, double>(x, 7, true, o)));     // n - ddof < 0
      EXPECT_TRUE(same_bits(var_on<T, Out>({x[0]}, 0, false, o), Out(0)));  // one element: +0
      EXPECT_TRUE(same_bits(var_on<T, Out>(std::vector<host_t<T>>(100, x[0]), 1, true, o), Out(0)));
      // Exact mode: the correctly rounded value; fast mode: within 1e-12 relative (float64 Welford).
      auto close = [&](double got, double want) {
        return acc == tally::accuracy::exact ? got == want : std::fabs(got - want) <= 1e-12 * want;
      };
      if constexpr (is_half<T>) {
        EXPECT_TRUE(close(var_on<T, double>(x, 0, false, o), 14.0 / 9.0));  // [1, 2, 4]: var 14/9
        if (acc == tally::accuracy::exact) { EXPECT_EQ((var_on<T, Out>(x, 0, false, o)), Out(14.0 / 9.0)); }
        const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
        EXPECT_TRUE(std::isnan(var_on<T, Out>({half_of<T>(1), half_of<T>(nan)}, 0, false, o)));
        EXPECT_TRUE(std::isnan(var_on<T, Out>({half_of<T>(1), half_of<T>(inf)}, 0, false, o)));
        EXPECT_TRUE(std::isnan(var_on<T, Out>({half_of<T>(-inf)}, 0, true, o)));
        // -0.0 and +0.0: both zero.
        EXPECT_TRUE(same_bits(var_on<T, Out>({half_of<T>(-0.0f), half_of<T>(0.0f)}, 0, false, o), Out(0)));
      } else {
        EXPECT_TRUE(close(var_on<T, double>(x, 1, false, o), 1.0 / 3.0)) << "[1, 0, 1] ddof 1";
      }
    }
  });
}

// ---- add / axpy / scale ------------------------------------------------------------------------

// Bitwise comparison of 16-bit results (any NaN equals any NaN), reporting the first few.
template <class T>
::testing::AssertionResult same_halves(const std::vector<host_t<T>>& got, const std::vector<host_t<T>>& want) {
  std::size_t bad = 0;
  auto fail = ::testing::AssertionFailure();
  for (std::size_t i = 0; i < got.size(); ++i) {
    bool nan = std::isnan(value_of<T>(got[i])) && std::isnan(value_of<T>(want[i]));
    if (!nan && got[i].bits != want[i].bits && ++bad <= 5)
      fail << "[" << i << "] got 0x" << std::hex << got[i].bits << " want 0x" << want[i].bits << std::dec << "; ";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return fail << bad << " of " << got.size() << " differ";
}

TEST_P(SmallOps, HalfElementwiseIsRoundedOnce) {
  if (t() != dtype::float16 && t() != dtype::bfloat16) GTEST_SKIP() << "16-bit floats only (integers: next tests)";
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (b() != backend::cuda) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_half_type(t(), [&]<class T>() {
    // Every bit pattern as x (NaNs and infinities included), random finite y and a.
    const std::size_t n = 65536;
    std::vector<host_t<T>> x(n), y = random_data<T>(n, 3), a_list = random_data<T>(8, 4);
    for (std::size_t i = 0; i < n; ++i) x[i].bits = static_cast<std::uint16_t>(i);
    std::mt19937_64 g(9);
    for (std::size_t i = 0; i < n; i += 7) y[i].bits = static_cast<std::uint16_t>(g());  // any pattern
    a_list.push_back(half_of<T>(1.0f));
    a_list.push_back(half_of<T>(-0.0f));
    auto cpu_or_oracle = [&](ew_op op, host_t<T> a) {
      std::vector<host_t<T>> want(n);
      if (b() == backend::cuda) {  // the cpu backend's bits
        want = op == ew_op::add ? x : y;
        if (op == ew_op::scale) want = x;
        tally::view<T> w(reinterpret_cast<T*>(want.data()), static_cast<std::int64_t>(n), tally::memory::host);
        tally::view<const T> vx(reinterpret_cast<const T*>(x.data()), static_cast<std::int64_t>(n), tally::memory::host);
        tally::view<const T> vy(reinterpret_cast<const T*>(y.data()), static_cast<std::int64_t>(n), tally::memory::host);
        T ta;
        std::memcpy(&ta, &a, sizeof ta);
        if (op == ew_op::add) tally::add<T>(vx, vy, w, cpu_backend());
        else if (op == ew_op::axpy) tally::axpy<T>(ta, vx, w, cpu_backend());
        else tally::scale<T>(ta, w, cpu_backend());
        return want;
      }
      for (std::size_t i = 0; i < n; ++i) want[i] = half_oracle<T>(op, a, x[i], y[i]);
      return want;
    };
    {
      auto bx = put_t<T>(x, 1), by = put_t<T>(y), bo = put_t<T>(y);
      tally::add<T>(in<T>(bx), in<T>(by), out<T>(bo), opt());
      EXPECT_TRUE(same_halves<T>(bo.read(), cpu_or_oracle(ew_op::add, {})));
    }
    for (auto a : a_list) {
      SCOPED_TRACE("a = " + std::to_string(value_of<T>(a)));
      T ta;
      std::memcpy(&ta, &a, sizeof ta);
      auto bx = put_t<T>(x), by = put_t<T>(y, 3);
      tally::axpy<T>(ta, in<T>(bx), out<T>(by), opt());
      EXPECT_TRUE(same_halves<T>(by.read(), cpu_or_oracle(ew_op::axpy, a)));
      tally::scale<T>(ta, out<T>(bx), opt());
      EXPECT_TRUE(same_halves<T>(bx.read(), cpu_or_oracle(ew_op::scale, a)));
    }
  });
}

TEST_P(SmallOps, HalfTiesOverflowNanAndSignedZeros) {
  if (t() != dtype::float16 && t() != dtype::bfloat16) GTEST_SKIP() << "16-bit floats only";
  with_half_type(t(), [&]<class T>() {
    using H = host_t<T>;
    auto h = [](float f) { return half_of<T>(f); };
    auto run_add = [&](std::vector<H> x, std::vector<H> y) {
      auto bx = put_t<T>(x), by = put_t<T>(y);
      tally::add<T>(in<T>(bx), in<T>(by), out<T>(by), opt());  // in place (out = y)
      return by.read();
    };
    auto run_axpy = [&](float a, std::vector<H> x, std::vector<H> y) {
      auto bx = put_t<T>(x), by = put_t<T>(y);
      H ha = h(a);
      T ta;
      std::memcpy(&ta, &ha, sizeof ta);
      tally::axpy<T>(ta, in<T>(bx), out<T>(by), opt());
      return by.read();
    };
    auto run_scale = [&](float a, std::vector<H> x) {
      auto bx = put_t<T>(x);
      H ha = h(a);
      T ta;
      std::memcpy(&ta, &ha, sizeof ta);
      tally::scale<T>(ta, out<T>(bx), opt());
      return bx.read();
    };
    const int p = std::is_same_v<T, float16> ? 11 : 8;  // significand bits
    const float u = std::ldexp(1.0f, 1 - p);            // ulp of 1
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    // Ties: 1 + u/2 -> 1 (even); (1 + u) + u/2 -> 1 + 2u (even).
    auto r = run_add({h(1), h(1 + u)}, {h(u / 2), h(u / 2)});
    EXPECT_EQ(r[0].bits, h(1).bits);
    EXPECT_EQ(r[1].bits, h(1 + 2 * u).bits);
    // Just below a tie, by less than float32 keeps: a x = (u/2)(1 + u)(1 - u) = u/2 - u^3/2,
    // y = 1 + u: exact 1 + 3u/2 - u^3/2 rounds to 1 + u. (Through float32 or a float32 fma it
    // would be the tie 1 + 3u/2, rounded to 1 + 2u: a double rounding.)
    r = run_axpy((u / 2) * (1 + u), {h(1 - u)}, {h(1 + u)});
    EXPECT_EQ(r[0].bits, h(1 + u).bits) << "double rounding";
    // Overflow to inf at the top (float16: 65504 + 16 = 65520 is the tie to 2^16: inf).
    const float big = std::is_same_v<T, float16> ? 65504.0f : 3.3895314e38f;
    const float half_ulp = std::is_same_v<T, float16> ? 16.0f : std::ldexp(1.0f, 119);
    r = run_add({h(big), h(big), h(-big)}, {h(half_ulp), h(half_ulp / 2), h(-half_ulp)});
    EXPECT_EQ(r[0].bits, h(inf).bits);
    EXPECT_EQ(r[1].bits, h(big).bits);
    EXPECT_EQ(r[2].bits, h(-inf).bits);
    r = run_axpy(2, {h(big)}, {h(-big)});  // 2 big - big = big: exact, no intermediate overflow
    EXPECT_EQ(r[0].bits, h(big).bits);
    r = run_scale(2, {h(big), h(-big)});
    EXPECT_EQ(r[0].bits, h(inf).bits);
    EXPECT_EQ(r[1].bits, h(-inf).bits);
    // NaN and the invalid operations.
    r = run_add({h(nan), h(inf), h(1)}, {h(1), h(-inf), h(inf)});
    EXPECT_TRUE(std::isnan(value_of<T>(r[0])));
    EXPECT_TRUE(std::isnan(value_of<T>(r[1])));
    EXPECT_EQ(r[2].bits, h(inf).bits);
    r = run_scale(0, {h(inf), h(nan), h(3)});
    EXPECT_TRUE(std::isnan(value_of<T>(r[0])));
    EXPECT_TRUE(std::isnan(value_of<T>(r[1])));
    EXPECT_EQ(r[2].bits, h(0).bits);
    // Signed zeros: -0 + -0 = -0; -0 + +0 = +0; -1 * +0 = -0; 1 * 1 + -1 = +0; 1 * -0 + -0 = -0.
    r = run_add({h(-0.0f), h(-0.0f)}, {h(-0.0f), h(0.0f)});
    EXPECT_EQ(r[0].bits, h(-0.0f).bits);
    EXPECT_EQ(r[1].bits, h(0.0f).bits);
    r = run_scale(-1, {h(0.0f)});
    EXPECT_EQ(r[0].bits, h(-0.0f).bits);
    r = run_axpy(1, {h(1), h(-0.0f)}, {h(-1), h(-0.0f)});
    EXPECT_EQ(r[0].bits, h(0.0f).bits);
    EXPECT_EQ(r[1].bits, h(-0.0f).bits);
    // Subnormals: float16's smallest is 2^-24; 1.5 * 2^-24 is a tie between 1 and 2 units: 2.
    if constexpr (std::is_same_v<T, float16>) {
      r = run_scale(1.5f, {H{0x0001}, H{0x0003}});
      EXPECT_EQ(r[0].bits, 0x0002);
      EXPECT_EQ(r[1].bits, 0x0004);  // 4.5 units: 4
      r = run_scale(0.5f, {H{0x0001}});
      EXPECT_EQ(r[0].bits, 0x0000);  // tie to 0
    } else {
      // bfloat16: the exact a x + y outside float64's reach. a x = 2^100 (1 + 3 * 2^-8) is the
      // tie between 2^100 (1 + 2^-7) and 2^100 (1 + 2^-6); y = -+2^-100 decides it, 200 bits
      // below (float64 alone would see the tie and round to even).
      const float a = 1.75f * std::ldexp(1.0f, 50), x = (37.0f / 64.0f) * std::ldexp(1.0f, 50);
      r = run_axpy(a, {h(x), h(x)}, {h(-std::ldexp(1.0f, -100)), h(std::ldexp(1.0f, -100))});
      EXPECT_EQ(value_of<T>(r[0]), std::ldexp(1.0 + 0x1p-7, 100));
      EXPECT_EQ(value_of<T>(r[1]), std::ldexp(1.0 + 0x1p-6, 100));
    }
  });
}

// Integers: the exact results in 128 bits; overflow (above the maximum, below the minimum or
// below 0 for unsigned types) is errc::overflow naming the first index, the array written
// wrapped.
TEST_P(SmallOps, IntegerElementwiseIsExactAndChecked) {
  if (t() == dtype::float16 || t() == dtype::bfloat16 || t() == dtype::bool_) GTEST_SKIP() << "integers only";
  with_int_type(t(), [&]<class T>() {
    const i128 lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    auto wrap = [](i128 v) { return static_cast<T>(static_cast<unsigned __int128>(v)); };
    const char* name = tally::dtype_name(t());
    for (std::size_t n : {1u, 5u, 1000u, 70001u}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      std::mt19937_64 g(n);
      // Values small enough that nothing overflows: |x|, |y| <= max/4, a in {-1, 0, 1, 2} (unsigned: {0, 1, 2}).
      std::vector<T> x(n), y(n);
      for (std::size_t i = 0; i < n; ++i) {
        x[i] = static_cast<T>(static_cast<T>(g()) / 4);
        y[i] = static_cast<T>(static_cast<T>(g()) / 4);
      }
      for (T a : {T(0), T(1), T(2), static_cast<T>(-1)}) {
        if (std::is_unsigned_v<T> && a == static_cast<T>(-1)) continue;
        std::vector<T> wa(n), ws(n), wd(n);
        bool over = false;
        for (std::size_t i = 0; i < n; ++i) {
          i128 r = static_cast<i128>(a) * x[i] + y[i], s = static_cast<i128>(a) * x[i], d = static_cast<i128>(x[i]) + y[i];
          over |= r < lo || r > hi || s < lo || s > hi || d < lo || d > hi;
          wa[i] = wrap(r), ws[i] = wrap(s), wd[i] = wrap(d);
        }
        ASSERT_FALSE(over);
        auto bx = put(x, 1), by = put(y), bo = put(y, 2);
        tally::add<T>(bx.in(), by.in(), bo.out(), opt());
        EXPECT_EQ(bo.read(), wd);
        tally::axpy<T>(a, bx.in(), by.out(), opt());
        EXPECT_EQ(by.read(), wa);
        tally::scale<T>(a, bx.out(), opt());
        EXPECT_EQ(bx.read(), ws);
      }
      // Overflow at index n/2 and at the last index: the first is named; all are written.
      std::vector<T> ox(n, T(1)), oy(n, T(0));
      ox[n / 2] = static_cast<T>(hi);
      ox[n - 1] = static_cast<T>(hi);
      oy[n / 2] = T(1);
      const std::string at = "index " + std::to_string(n / 2);
      {
        auto bx = put(ox), by = put(oy), bo = put(oy);
        // (the cuda backend's add reports the overflow without its index)
        std::vector<std::string> words = {"tally::add", name, "overflow"};
        if (b() == backend::cpu) words.push_back(at);
        EXPECT_TRUE(throws_tally([&] { tally::add<T>(bx.in(), by.in(), bo.out(), opt()); }, errc::overflow, words));
        auto r = bo.read();
        EXPECT_EQ(r[n / 2], wrap(hi + 1));
        EXPECT_TRUE(throws_tally([&] { tally::axpy<T>(T(2), bx.in(), by.out(), opt()); }, errc::overflow,
                                 {"tally::axpy", name, "overflow", at}));
        EXPECT_EQ(by.read()[n / 2], wrap(2 * hi + 1));
        EXPECT_TRUE(throws_tally([&] { tally::scale<T>(T(3), bx.out(), opt()); }, errc::overflow,
                                 {"tally::scale", name, at}));
        EXPECT_EQ(bx.read()[n - 1], wrap(3 * hi));
      }
      if constexpr (std::is_signed_v<T>) {  // below the minimum: -1 * min, min + -1
        std::vector<T> m(n, T(-1));
        m[n - 1] = static_cast<T>(lo);
        auto bm = put(m);
        EXPECT_TRUE(throws_tally([&] { tally::scale<T>(T(-1), bm.out(), opt()); }, errc::overflow,
                                 {"index " + std::to_string(n - 1)}));
        EXPECT_EQ(bm.read()[n - 1], static_cast<T>(lo));  // wrapped: -min is min
      }
    }
    // Exact results at the limits do not overflow.
    std::vector<T> x = {static_cast<T>(hi / 2), static_cast<T>(hi)}, y = {static_cast<T>(hi - 2 * (hi / 2)), T(0)};
    auto bx = put(x), by = put(y);
    tally::axpy<T>(T(2), tally::view<const T>(bx.data(), 1), tally::view<T>(by.data(), 1), opt());
    EXPECT_EQ(by.read()[0], static_cast<T>(hi));
    if constexpr (std::is_same_v<T, std::uint64_t>) {
      // uint64 near 2^64: (2^64 - 1) + 0, 2^63 - 1 + 2^63 fit; (2^64 - 1) + 1 and 2 * 2^63 do not.
      std::vector<T> a1 = {UINT64_MAX, (1ull << 63) - 1, UINT64_MAX}, b1 = {0, 1ull << 63, 1};
      auto ba = put(a1), bb = put(b1), bo = put(b1);
      EXPECT_TRUE(throws_tally([&] { tally::add<T>(ba.in(), bb.in(), bo.out(), opt()); }, errc::overflow,
                               b() == backend::cpu ? std::vector<std::string>{"uint64", "index 2"}
                                                   : std::vector<std::string>{"uint64"}));
      EXPECT_EQ(bo.read(), (std::vector<T>{UINT64_MAX, UINT64_MAX, 0}));
      std::vector<T> h1 = {1ull << 63, 1ull << 62};
      auto bh = put(h1);
      EXPECT_TRUE(throws_tally([&] { tally::scale<T>(T(2), bh.out(), opt()); }, errc::overflow, {"index 0"}));
      EXPECT_EQ(bh.read(), (std::vector<T>{0, 1ull << 63}));
      std::vector<T> big = {UINT64_MAX}, zero = {0};
      auto bg = put(big), bz = put(zero);
      EXPECT_TRUE(throws_tally([&] { tally::axpy<T>(UINT64_MAX, bg.in(), bz.out(), opt()); }, errc::overflow, {"index 0"}));
      EXPECT_EQ(bz.read()[0], 1u);  // (2^64 - 1)^2 mod 2^64
    }
  });
}

TEST_P(SmallOps, BoolAddIsLogicalOrAndAxpyScaleAreRefused) {
  if (t() != dtype::bool_) GTEST_SKIP() << "bool only";
  std::vector<std::uint8_t> x = {0, 0, 1, 1}, y = {0, 1, 0, 1};
  auto bx = put(x), by = put(y), bo = put(std::vector<std::uint8_t>(4, 7));
  tally::view<const bool> vx(reinterpret_cast<const bool*>(bx.data()), 4), vy(reinterpret_cast<const bool*>(by.data()), 4);
  tally::add<bool>(vx, vy, tally::view<bool>(reinterpret_cast<bool*>(bo.data()), 4), opt());
  EXPECT_EQ(bo.read(), (std::vector<std::uint8_t>{0, 1, 1, 1}));  // numpy.add: logical or, 0/1 bytes
  tally::view<bool> my(reinterpret_cast<bool*>(by.data()), 4);
  EXPECT_TRUE(throws_tally([&] { tally::axpy<bool>(true, vx, my, opt()); }, errc::invalid_argument, {"axpy", "bool"}));
  EXPECT_TRUE(throws_tally([&] { tally::scale<bool>(true, my, opt()); }, errc::invalid_argument, {"scale", "bool"}));
  EXPECT_EQ(by.read(), y);  // untouched
}

TEST_P(SmallOps, EmptyInputsDoNothing) {
  with_small_type(t(), [&]<class T>() {
    tally::add<T>(tally::view<const T>(nullptr, 0), tally::view<const T>(nullptr, 0), tally::view<T>(nullptr, 0), opt());
    if constexpr (!std::is_same_v<T, bool>) {
      T one;
      std::memset(&one, 0, sizeof one);
      tally::axpy<T>(one, tally::view<const T>(nullptr, 0), tally::view<T>(nullptr, 0), opt());
      tally::scale<T>(one, tally::view<T>(nullptr, 0), opt());
    }
    EXPECT_TRUE(throws_tally([&] { tally::add<T>(tally::view<const T>(nullptr, 3), tally::view<const T>(nullptr, 3),
                                                 tally::view<T>(nullptr, 3), opt()); },
                             errc::null_pointer));
  });
}

}  // namespace
}  // namespace tt
