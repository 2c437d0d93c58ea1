// Adversarial tests of ops::certified::variance_certified: hand-built intervals of S1 = sum x
// and S2 = sum x^2 whose exact variance (or its root) lies on, or within a few ulps of, a
// rounding midpoint of the output; huge cancellation (large mean, tiny spread); n near 2^53;
// m2 = 1; magnitudes near the 2^-400 / 2^400 guards; and short integer datasets built so that
// the exact var/std is a midpoint. Whenever a certificate holds, every point of the input
// box (S1, S2) must round to the certified value (MPFR oracle, checked at the box's corners:
// var is monotone in S2 and in S1^2), and on data the value must equal the cpu backend's
// exact result. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "certified_emulation.hpp"
#include "tally/ops/certified.hpp"
#include "tally/tally.hpp"

#if defined(TALLY_TEST_HAVE_MPFR)
#include <mpfr.h>
#endif

namespace {

namespace oc = tally::ops::certified;
const tally::options cpu{tally::backend::cpu};

using tt::certified::kind;

// The kernel's accumulation pattern (tests/certified_emulation.hpp), sum or squares of x.
template <int K, class T> oc::interval emulate(const std::vector<T>& x, kind k, int threads) {
  return tt::certified::emulate<K>(x, {}, k, threads);
}

// Short integer datasets (plus an offset, times a power of two) compared with the cpu
// backend's exact var / std_dev. Returns {certified, cases}.
template <class T, class Out> std::pair<int, int> data_cases(std::uint64_t seed, int reps) {
  constexpr int K = std::is_same_v<T, double> ? 3 : 2;
  std::mt19937_64 g(seed);
  int cases = 0, certified = 0;
  const int spread_bits = std::is_same_v<T, float> ? 12 : 26;
  for (int rep = 0; rep < reps; ++rep) {
    const std::int64_t n = std::vector<std::int64_t>{2, 3, 4, 5, 8, 16}[g() % 6];
    const int bits = 1 + static_cast<int>(g() % spread_bits);
    // A large offset (huge cancellation n S2 ~ S1^2) where the type leaves room for it.
    const int room = (std::is_same_v<T, float> ? 24 : 53) - bits - 1;
    const double offset = (g() % 3 == 0 || room <= 0) ? 0.0 : std::ldexp(static_cast<double>(g() % 1000 + 1), static_cast<int>(g() % room));
    const int scale = static_cast<int>(g() % 5 == 0 ? (static_cast<int>(g() % 2) ? 190 : -190) + static_cast<int>(g() % 21) - 10
                                                      : static_cast<int>(g() % 41) - 20);
    if (std::is_same_v<T, float> && std::abs(scale) > 40) continue;
    std::vector<T> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = static_cast<T>(std::ldexp(offset + static_cast<double>(g() % (std::uint64_t(1) << bits)), scale));
    tally::view<const T> vx{x.data(), n, tally::memory::host};
    const int threads = 1 + static_cast<int>(g() % 4);
    const oc::interval s1 = emulate<K>(x, kind::sum, threads), s2 = emulate<K>(x, kind::square, threads);
    for (std::int64_t ddof : {std::int64_t(0), std::int64_t(1), n - 1}) {
      for (bool take_sqrt : {false, true}) {
        ++cases;
        Out r;
        if (!oc::variance_certified<Out>(s1, s2, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(n - ddof), take_sqrt, r))
          continue;
        ++certified;
        Out want = take_sqrt ? tally::std_dev<T, Out>(vx, ddof, cpu) : tally::var<T, Out>(vx, ddof, cpu);
        EXPECT_EQ(r, want) << "n=" << n << " ddof=" << ddof << " sqrt=" << take_sqrt << " x0=" << static_cast<double>(x[0])
                           << " rep=" << rep;
      }
    }
  }
  return {certified, cases};
}

TEST(CertifiedVarianceAdversarial, ShortIntegerDataMatchesExact) {
  auto a = data_cases<double, double>(1, 1500);
  auto b = data_cases<double, float>(2, 1500);
  auto c = data_cases<float, float>(3, 1500);
  auto d = data_cases<float, double>(4, 1500);
  std::printf("integer data: certified %d/%d (d,d) %d/%d (d,f) %d/%d (f,f) %d/%d (f,d)\n", a.first, a.second, b.first,
              b.second, c.first, c.second, d.first, d.second);
  EXPECT_GT(a.first * 2, a.second);  // ordinary data certify most of the time
  EXPECT_GT(d.first * 2, d.second);
}

// Four integers (times 2^s), ddof 0: var = (4 S2 - S1^2) / 16 exactly, a midpoint of Out when
// N = 4 S2 - S1^2 is odd with p + 1 bits (p Out's precision). Built by search; the
// certificate must refuse the exact ties and be right on the neighbours (N +- 1, +- 2 ...,
// moved by changing one point by a unit, which changes N by a small even/odd amount).
template <class T, class Out> void exact_ties(std::uint64_t seed) {
  constexpr int K = std::is_same_v<T, double> ? 3 : 2;
  constexpr int p = std::numeric_limits<Out>::digits;
  std::mt19937_64 g(seed);
  int ties = 0, certified_near = 0, near = 0;
  for (int rep = 0; rep < 200000 && ties < 60; ++rep) {
    const std::int64_t lim = std::int64_t(1) << (p / 2 + 1);
    std::int64_t v[4];
    for (auto& e : v) e = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(lim));
    __int128 s1 = 0, s2 = 0;
    for (auto e : v) s1 += e, s2 += static_cast<__int128>(e) * e;
    __int128 N = 4 * s2 - s1 * s1;
    if (N <= 0 || (N & 1) == 0) continue;
    if (N < (static_cast<__int128>(1) << p) || N >= (static_cast<__int128>(1) << (p + 1))) continue;
    ++ties;
    const int scale = static_cast<int>(g() % 7) * 30 - 90;
    const double offset = (std::is_same_v<T, double> && g() % 2) ? 0x1p40 : 0.0;
    if (std::is_same_v<T, float> && (std::abs(scale) > 60)) continue;
    for (int bump = -2; bump <= 2; ++bump) {  // bump 0: the tie itself
      std::vector<T> x(4);
      for (int i = 0; i < 4; ++i) x[i] = static_cast<T>(std::ldexp(offset + static_cast<double>(v[i] + (i == 0 ? bump : 0)), scale));
      tally::view<const T> vx{x.data(), 4, tally::memory::host};
      for (int threads : {1, 3}) {
        const oc::interval a = emulate<K>(x, kind::sum, threads), b = emulate<K>(x, kind::square, threads);
        Out r;
        bool ok = oc::variance_certified<Out>(a, b, 4, 4, false, r);
        if (bump == 0 && offset == 0) { EXPECT_FALSE(ok) << "tie certified: v0=" << v[0]; }
        if (bump != 0) ++near, certified_near += ok;
        if (ok) { EXPECT_EQ(r, (tally::var<T, Out>(vx, 0, cpu))) << "bump=" << bump << " v0=" << v[0] << " scale=" << scale; }
      }
    }
  }
  std::printf("ties %d, near-tie certified %d/%d (%zu/%zu bytes)\n", ties, certified_near, near, sizeof(T), sizeof(Out));
  EXPECT_GE(ties, 20);
}

TEST(CertifiedVarianceAdversarial, ExactVarianceTiesAndNeighbours) {
  exact_ties<double, double>(7);
  exact_ties<float, float>(8);
  exact_ties<double, float>(9);
}

TEST(CertifiedVarianceAdversarial, ExactStdTies) {
  double r;
  float f;
  // {1 + 2^-52, -1}, ddof 0: std = 1 + 2^-53, a double midpoint.
  std::vector<double> x{1 + 0x1p-52, -1.0};
  auto s1 = emulate<3>(x, kind::sum, 1), s2 = emulate<3>(x, kind::square, 1);
  EXPECT_FALSE(oc::variance_certified<double>(s1, s2, 2, 2, true, r));
  // {-m, m} with m = 1 + 2^-24: std = m, a float midpoint; var = m^2.
  const double m = 1 + 0x1p-24;
  for (double scale : {1.0, 0x1p-190, 0x1p190, 0x1p-60, 0x1p60}) {
    std::vector<double> y{-m * scale, m * scale};
    auto a = emulate<3>(y, kind::sum, 1), b = emulate<3>(y, kind::square, 1);
    if (scale >= 0x1p-60 && scale <= 0x1p60) { EXPECT_FALSE(oc::variance_certified<float>(a, b, 2, 2, true, f)); }
    // Neighbours: m (1 +- 2^-40) are on either side of the midpoint.
    for (double eps : {0x1p-40, -0x1p-40, 0x1p-48, -0x1p-48}) {
      std::vector<double> z{-m * scale * (1 + eps), m * scale * (1 + eps)};
      tally::view<const double> vz{z.data(), 2, tally::memory::host};
      auto c = emulate<3>(z, kind::sum, 1), d = emulate<3>(z, kind::square, 1);
      if (oc::variance_certified<float>(c, d, 2, 2, true, f)) { EXPECT_EQ(f, (tally::std_dev<double, float>(vz, 0, cpu))) << eps; }
      if (oc::variance_certified<double>(c, d, 2, 2, true, r)) { EXPECT_EQ(r, (tally::std_dev<double, double>(vz, 0, cpu))) << eps; }
      if (oc::variance_certified<double>(c, d, 2, 1, false, r)) { EXPECT_EQ(r, (tally::var<double, double>(vz, 1, cpu))) << eps; }
    }
  }
}

#if defined(TALLY_TEST_HAVE_MPFR)
// MPFR oracle on hand-built intervals.
struct mp {
  mpfr_t v;
  mp() { mpfr_init2(v, 6000); mpfr_set_zero(v, 1); }
  ~mp() { mpfr_clear(v); }
  mp(const mp&) = delete;
};

// Rounds x > 0 (any precision) to Out, nearest-even, with Out's subnormals.
template <class Out> Out round_to(const mpfr_t x) {
  constexpr int p = std::numeric_limits<Out>::digits;
  constexpr int emin = std::numeric_limits<Out>::min_exponent - 1;  // 2^emin: smallest normal
  constexpr int sub = emin - (p - 1);                              // 2^sub: smallest subnormal
  mpfr_t t;
  mpfr_init2(t, mpfr_get_prec(x));
  mpfr_set(t, x, MPFR_RNDN);
  if (mpfr_get_exp(t) - 1 < emin) {  // below the normal range: round to a multiple of 2^sub
    mpfr_mul_2si(t, t, -sub, MPFR_RNDN);
    mpfr_rint(t, t, MPFR_RNDN);
    mpfr_mul_2si(t, t, sub, MPFR_RNDN);
  } else {
    mpfr_prec_round(t, p, MPFR_RNDN);
  }
  Out r = std::is_same_v<Out, float> ? static_cast<Out>(mpfr_get_flt(t, MPFR_RNDN)) : static_cast<Out>(mpfr_get_d(t, MPFR_RNDN));
  mpfr_clear(t);
  return r;
}

// The correctly rounded var (or std) at S1 = a1 (+ d1), S2 = a2 (+ d2), exact values given.
// Returns false for a nonpositive variance (then no value is right).
template <class Out> bool oracle(const mpfr_t S1, const mpfr_t S2, std::uint64_t n, std::uint64_t m2, bool take_sqrt, Out& out) {
  mp N, t, D, q;
  mpfr_mul_ui(N.v, S2, n, MPFR_RNDN);
  mpfr_sqr(t.v, S1, MPFR_RNDN);
  mpfr_sub(N.v, N.v, t.v, MPFR_RNDN);
  if (mpfr_sgn(N.v) <= 0) return false;
  mpfr_set_ui(D.v, n, MPFR_RNDN);
  mpfr_mul_ui(D.v, D.v, m2, MPFR_RNDN);
  mpfr_div(q.v, N.v, D.v, MPFR_RNDN);
  if (take_sqrt) mpfr_sqrt(q.v, q.v, MPFR_RNDN);
  out = round_to<Out>(q.v);
  return true;
}

void set_interval_point(mpfr_t dst, const oc::interval& v, int corner) {  // corner -1, 0, +1: H + L + corner B
  mpfr_set_d(dst, v.H, MPFR_RNDN);
  mpfr_add_d(dst, dst, v.L, MPFR_RNDN);
  if (corner) mpfr_add_d(dst, dst, corner * v.B, MPFR_RNDN);
}

struct tally_counts {
  int calls = 0, certified = 0;
};

// Calls the certificate and, when it holds, checks every corner of the box (and S1 = 0 when
// the S1 interval contains it).
template <class Out>
void verify(const oc::interval& s1, const oc::interval& s2, std::uint64_t n, std::uint64_t m2, bool take_sqrt, tally_counts& c) {
  ++c.calls;
  Out r;
  if (!oc::variance_certified<Out>(s1, s2, n, m2, take_sqrt, r)) return;
  ++c.certified;
  mp a, b;
  for (int c1 : {-1, 0, 1, 2}) {
    if (c1 == 2) {
      if (!(std::fabs(s1.H + s1.L) <= s1.B)) continue;
      mpfr_set_zero(a.v, 1);
    } else {
      set_interval_point(a.v, s1, c1);
    }
    for (int c2 : {-1, 0, 1}) {
      set_interval_point(b.v, s2, c2);
      Out want;
      bool pos = oracle<Out>(a.v, b.v, n, m2, take_sqrt, want);
      ASSERT_TRUE(pos && want == r) << std::hexfloat << "certified " << static_cast<double>(r) << " but corner (" << c1 << "," << c2
                                    << ") rounds to " << (pos ? static_cast<double>(want) : -1.0) << "; s1={" << s1.H << "," << s1.L
                                    << "," << s1.B << "} s2={" << s2.H << "," << s2.L << "," << s2.B << "} n=" << n << " m2=" << m2
                                    << " sqrt=" << take_sqrt << " out=" << sizeof(Out);
    }
  }
}

// The interval {H, L} of the exact value x (|x - H - L| tiny; L the rounded remainder).
oc::interval split(const mpfr_t x, double B) {
  oc::interval r;
  r.H = mpfr_get_d(x, MPFR_RNDN);
  mp t;
  mpfr_sub_d(t.v, x, r.H, MPFR_RNDN);
  r.L = mpfr_get_d(t.v, MPFR_RNDN);
  r.B = B;
  r.finite = 1;
  return r;
}

// Random targets: a midpoint M of Out (or a neighbour M + k 2^-j ulp), S1 random, S2 chosen
// so that the exact (n S2 - S1^2) / (n m2) is M (sqrt: M^2) up to S2's own rounding to a
// double-double (which is then the exact S2 when B2 = 0; its rounding residue goes into B2
// otherwise). Every certified value must be right at every corner.
template <class Out> tally_counts random_midpoints(std::uint64_t seed, int reps) {
  constexpr int p = std::numeric_limits<Out>::digits;
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(1.0, 2.0);
  tally_counts c;
  for (int rep = 0; rep < reps; ++rep) {
    // n and m2: tiny, ordinary, or near 2^53.
    std::uint64_t n, m2;
    switch (g() % 5) {
      case 0: n = 2 + g() % 6; m2 = n - g() % 2; break;
      case 1: n = 2 + g() % 100000; m2 = g() % 2 ? n : n - 1; break;
      case 2: n = (std::uint64_t(1) << 53) - 1 - g() % 1000; m2 = g() % 2 ? n : n - 1; break;
      case 3: n = 2 + g() % ((std::uint64_t(1) << 53) - 3); m2 = 1; break;
      default: n = (std::uint64_t(1) << (g() % 53)) + g() % 3; m2 = std::max<std::uint64_t>(1, n - g() % 3); break;
    }
    if (n >= (std::uint64_t(1) << 53)) n = (std::uint64_t(1) << 53) - 1;
    if (m2 == 0 || m2 >= (std::uint64_t(1) << 53)) m2 = 1;
    const bool take_sqrt = g() % 2;
    // Result exponent: ordinary, or near the guards / Out's range ends.
    int e;
    if (std::is_same_v<Out, float>) {
      const int es[] = {0, -20, 20, -126, -140, -149, 126, 127, static_cast<int>(g() % 200) - 100};
      e = es[g() % 9];
    } else {
      const int es[] = {0, -30, 30, -398, -401, 398, 399, -200, 200, static_cast<int>(g() % 800) - 400};
      e = es[g() % 10];
    }
    // M: a random Out value times (1 + 2^-p) (the midpoint above), moved by k / 2^j ulps.
    mp M, t, S1, S2, N;
    mpfr_set_d(M.v, std::ldexp(u(g), e), MPFR_RNDN);
    mpfr_prec_round(M.v, p, MPFR_RNDN);

    {
      // ulp of M at Out's precision (subnormal floor too).
      const int expo = static_cast<int>(mpfr_get_exp(M.v)) - 1;
      const int lowest = std::numeric_limits<Out>::min_exponent - p;
      int ulp_e = std::max(expo - (p - 1), lowest);
      mpfr_prec_round(M.v, 6000, MPFR_RNDN);
      const int kind_of = static_cast<int>(g() % 4);
      mpfr_set_ui_2exp(t.v, 1, ulp_e - 1, MPFR_RNDN);  // half an ulp: the midpoint
      mpfr_add(M.v, M.v, t.v, MPFR_RNDN);
      if (kind_of > 0) {  // a neighbour: +- k 2^-j ulp, j up to 60
        long k = static_cast<long>(g() % 7) - 3;
        int j = static_cast<int>(g() % 61);
        mpfr_set_si_2exp(t.v, k, ulp_e - j, MPFR_RNDN);
        mpfr_add(M.v, M.v, t.v, MPFR_RNDN);
      }
    }
    if (mpfr_sgn(M.v) <= 0) continue;
    mp V;  // the variance target
    if (take_sqrt) mpfr_sqr(V.v, M.v, MPFR_RNDN);
    else mpfr_set(V.v, M.v, MPFR_RNDN);
    // S1: random mean times n, possibly huge relative to the spread (cancellation).
    const int ratio = static_cast<int>(g() % 4) == 0 ? 0 : static_cast<int>(g() % 60);  // |mean| ~ 2^ratio * sd
    const double sd = std::sqrt(mpfr_get_d(V.v, MPFR_RNDN));
    double mean = (g() % 2 ? -1 : 1) * sd * std::ldexp(u(g), ratio);
    if (ratio == 0 && g() % 2) mean = 0;
    mpfr_set_d(S1.v, mean, MPFR_RNDN);
    mpfr_mul_ui(S1.v, S1.v, n, MPFR_RNDN);  // exact in 6000 bits
    mpfr_set_d(S1.v, mpfr_get_d(S1.v, MPFR_RNDN), MPFR_RNDN);  // a double
    // S2 = (V n m2 + S1^2) / n
    mpfr_mul_ui(N.v, V.v, n, MPFR_RNDN);
    mpfr_mul_ui(N.v, N.v, m2, MPFR_RNDN);
    mpfr_sqr(t.v, S1.v, MPFR_RNDN);
    mpfr_add(N.v, N.v, t.v, MPFR_RNDN);
    mpfr_div_ui(S2.v, N.v, n, MPFR_RNDN);
    oc::interval i1 = split(S1.v, 0), i2 = split(S2.v, 0);
    if (!std::isfinite(i2.H) || !std::isfinite(i1.H)) continue;
    // Bounds: zero (exact), tiny, or a few ulps of the partial sums' scale.
    const int bk = static_cast<int>(g() % 4);
    if (bk == 1) i2.B = std::fabs(i2.H) * 0x1p-106, i1.B = std::fabs(i1.H) * 0x1p-106;
    if (bk == 2) i2.B = std::fabs(i2.H) * std::ldexp(1.0, -80 - static_cast<int>(g() % 40));
    if (bk == 3) i1.B = std::fabs(i1.H) * std::ldexp(1.0, -80 - static_cast<int>(g() % 40));
    verify<Out>(i1, i2, n, m2, take_sqrt, c);
    if (::testing::Test::HasFatalFailure()) return c;
  }
  return c;
}

TEST(CertifiedVarianceAdversarial, HandBuiltIntervalsAtMidpointsMpfr) {
  auto d = random_midpoints<double>(21, 40000);
  auto f = random_midpoints<float>(22, 40000);
  std::printf("hand-built midpoint intervals: certified %d/%d (double) %d/%d (float)\n", d.certified, d.calls, f.certified, f.calls);
  EXPECT_GT(d.certified, 0);
  EXPECT_GT(f.certified, 0);
}

TEST(CertifiedVarianceAdversarial, GuardsAndSpecialIntervals) {
  tally_counts c;
  double r;
  // Not finite, n or m2 zero, n past 2^53: refused.
  oc::interval one{1, 0, 0, 1}, two{2, 0, 0, 1};
  EXPECT_FALSE(oc::variance_certified<double>({1, 0, 0, 0}, two, 2, 1, false, r));
  EXPECT_FALSE(oc::variance_certified<double>(one, two, 0, 1, false, r));
  // S1 = 1, S2 = 1 (n = 2, m2 = 1): var = (2 - 1) / 2 = 0.5 exactly.
  ASSERT_TRUE(oc::variance_certified<double>(one, {1, 0, 0, 1}, 2, 1, false, r));
  EXPECT_EQ(r, 0.5);
  // Huge cancellation at the edge of the S guard: S1 = 2^449 (1 + e), n = 2, S2 near S1^2 / 2.
  for (int e : {-900, -500, -200, 0, 200, 440}) {
    for (std::uint64_t n : {std::uint64_t(2), std::uint64_t(3), (std::uint64_t(1) << 53) - 1}) {
      for (std::uint64_t m2 : {std::uint64_t(1), n - 1, n}) {
        if (m2 == 0) continue;
        for (int k = -3; k <= 3; ++k) {
          mp S1, S2, t;
          mpfr_set_d(S1.v, std::ldexp(1.0 + 0x1p-30, e / 2), MPFR_RNDN);
          mpfr_sqr(S2.v, S1.v, MPFR_RNDN);
          mpfr_div_ui(S2.v, S2.v, n, MPFR_RNDN);
          mpfr_set_d(t.v, std::ldexp(static_cast<double>(k) + 0.5, e / 2 * 2 - 60), MPFR_RNDN);
          mpfr_add(S2.v, S2.v, t.v, MPFR_RNDN);
          for (double B : {0.0, 0x1p-1074, 1e-300}) {
            oc::interval a = split(S1.v, B), b = split(S2.v, B);
            verify<double>(a, b, n, m2, false, c);
            verify<double>(a, b, n, m2, true, c);
            verify<float>(a, b, n, m2, false, c);
            verify<float>(a, b, n, m2, true, c);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
  // Subnormal-ish inputs: S1 and S2 near 2^-1074 and the float subnormal range.
  for (double s1 : {0.0, 0x1p-1074, 0x1p-1000, 0x1p-600, 0x1p-75, 0x1p-70}) {
    for (double s2 : {0x1p-1074, 0x1p-1022, 0x1p-800, 0x1p-300, 0x1p-140, 0x1p-150, 0x1p-260}) {
      for (std::uint64_t n : {std::uint64_t(1), std::uint64_t(2), std::uint64_t(5)}) {
        for (double B : {0.0, 0x1p-1074, 0x1p-1060}) {
          oc::interval a{s1, 0, B, 1}, b{s2, 0, B, 1};
          for (bool sq : {false, true}) {
            verify<double>(a, b, n, n, sq, c);
            verify<float>(a, b, n, n, sq, c);
            verify<double>(a, b, n, 1, sq, c);
            verify<float>(a, b, n, 1, sq, c);
          }
        }
      }
    }
  }
  std::printf("guards and special intervals: certified %d/%d\n", c.certified, c.calls);
}
#endif

}  // namespace
