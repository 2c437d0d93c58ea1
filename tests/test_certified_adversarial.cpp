// Adversarial tests of the certified first pass (tally/ops/certified.hpp): data built to make
// a certificate lie. Sums, dots, means and L2 norms whose exact value lies on, or within a few
// ulps (of the Out result, or far less) of, a rounding midpoint, the float32 overflow threshold,
// FLT_MAX / DBL_MAX, the subnormal range, products that underflow, signed zeros; with K = 2
// and K = 3, EXACT and TwoProduct products, random numbers of states, random assignment of
// terms to states and random merge orders (and argument orders). The certificate may refuse
// any of them; whenever it holds, its value must be bit for bit the correctly rounded one
// (the MPFR oracle of exact_oracle.hpp; without MPFR the cpu backend's exact results).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "exact_oracle.hpp"
#include "tally/ops/certified.hpp"
#include "tally/tally.hpp"

namespace {

namespace oc = tally::ops::certified;
using vec = std::vector<double>;

const tally::options cpu{tally::backend::cpu};

enum class op { sum, dot, square };

// ---- oracle -----------------------------------------------------------------------------------

template <class Out> bool same_bits(Out a, Out b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// The correctly rounded Out value of the exact sum / dot / sum of squares.
template <class Out> Out ref_value(const vec& x, const vec& y, op k) {
  if constexpr (tt::oracle::have_oracle()) {
    return tt::oracle::exact<double, Out>(x, k == op::dot ? y : vec{}, tt::oracle::finish::value, k == op::square);
  } else {
    tally::view<const double> vx{x.data(), static_cast<std::int64_t>(x.size()), tally::memory::host};
    if (k == op::sum) return tally::sum<double, Out>(vx, cpu);
    if (k == op::square) {  // the cpu backend's exact dot of x with itself
      return tally::dot<double, Out>(vx, vx, cpu);
    }
    tally::view<const double> vy{y.data(), static_cast<std::int64_t>(y.size()), tally::memory::host};
    return tally::dot<double, Out>(vx, vy, cpu);
  }
}

/// The correctly rounded Out value of (exact sum of x) / n, for any n (not only x.size()).
/// Returns false when no oracle can answer (no MPFR, and n != x.size()).
template <class Out> bool ref_mean(const vec& x, std::uint64_t n, Out& out) {
#if defined(TALLY_TEST_HAVE_MPFR)
  mpfr_t s;
  mpfr_init2(s, 4600);
  mpfr_set_zero(s, 1);
  for (double v : x) mpfr_add_d(s, s, v, MPFR_RNDN);  // exact at 4600 bits
  if (mpfr_zero_p(s)) {
    mpfr_clear(s);
    out = ref_value<Out>(x, {}, op::sum);  // +-0 with IEEE's sign rule; 0 / n keeps it
    return true;
  }
  // The quotient at 4600 bits, then one rounding to Out (subnormals included): a quotient of
  // these sizes is never within 2^-4600 (relative) of a rounding boundary without being on it.
  mpfr_div_d(s, s, static_cast<double>(n), MPFR_RNDN);
  if constexpr (std::is_same_v<Out, float>) out = mpfr_get_flt(s, MPFR_RNDN);
  else out = mpfr_get_d(s, MPFR_RNDN);
  mpfr_clear(s);
  return true;
#else
  if (n != x.size()) return false;
  tally::view<const double> vx{x.data(), static_cast<std::int64_t>(x.size()), tally::memory::host};
  out = tally::mean<double, Out>(vx, cpu);
  return true;
#endif
}

/// The correctly rounded Out value of sqrt(sum of x^2) (subnormal results included).
template <class Out> Out ref_norm(const vec& x) {
#if defined(TALLY_TEST_HAVE_MPFR)
  mpfr_t s, p;
  mpfr_inits2(4600, s, p, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_zero(s, 1);
  for (double v : x) {
    mpfr_set_d(p, v, MPFR_RNDN);
    mpfr_sqr(p, p, MPFR_RNDN);  // exact at 4600 bits
    mpfr_add(s, s, p, MPFR_RNDN);
  }
  // sqrt at 4600 bits then one rounding: an exact midpoint stays exact (ties to even), and
  // an irrational root is never within 2^-4600 (relative) of a midpoint.
  mpfr_sqrt(s, s, MPFR_RNDN);
  Out out;
  if constexpr (std::is_same_v<Out, float>) out = mpfr_get_flt(s, MPFR_RNDN);
  else out = mpfr_get_d(s, MPFR_RNDN);
  mpfr_clears(s, p, static_cast<mpfr_ptr>(nullptr));
  return out;
#else
  tally::view<const double> vx{x.data(), static_cast<std::int64_t>(x.size()), tally::memory::host};
  return tally::norm2<double, Out>(vx, cpu);
#endif
}

// ---- the accumulation, in random shapes ---------------------------------------------------------

/// The kernel's pattern generalised: 1..8 states, terms given to them round-robin, at random
/// or in contiguous chunks, then merged in a random order (random pairs, random argument
/// order; empty states included). EXACT: products exact in float64 (float32 data).
template <int K, bool EXACT> oc::interval accumulate(const vec& x, const vec& y, op k, std::mt19937_64& g) {
  const std::size_t n = x.size();
  const int S = 1 + static_cast<int>(g() % 8);
  std::vector<oc::state> st(S);
  const int mode = static_cast<int>(g() % 3);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t j = mode == 0 ? i % S : mode == 1 ? g() % S : i * S / n;
    if (k == op::sum) oc::add<K>(st[j], x[i]);
    else oc::add_product<K, EXACT>(st[j], x[i], k == op::square ? x[i] : y[i]);
  }
  while (st.size() > 1) {
    std::size_t a = g() % st.size(), b = g() % (st.size() - 1);
    if (b >= a) ++b;
    st[a] = (g() & 1) ? oc::merge<K>(st[a], st[b]) : oc::merge<K>(st[b], st[a]);
    st.erase(st.begin() + static_cast<std::ptrdiff_t>(b));
  }
  const double absolute = (k != op::sum && !EXACT) ? static_cast<double>(n) * 0x1p-1074 : 0.0;
  return oc::finish(st[0], absolute);
}

// ---- bookkeeping ---------------------------------------------------------------------------------

struct tally_of {
  const char* name;
  long tried = 0, certified = 0, unchecked = 0, wrong = 0;
  ~tally_of() {
    std::printf("%-44s tried %9ld  certified %9ld  unchecked %ld  wrong %ld\n", name, tried, certified, unchecked, wrong);
  }
};

template <class Out> void report(tally_of& t, const char* what, const vec& x, const vec& y, Out got, Out want,
                                 std::uint64_t n = 0) {
  ++t.wrong;
  if (t.wrong > 8) return;
  std::string s;
  char buf[64];
  for (std::size_t i = 0; i < x.size() && i < 40; ++i) {
    std::snprintf(buf, sizeof buf, " %a", x[i]);
    s += buf;
    if (!y.empty()) {
      std::snprintf(buf, sizeof buf, "*%a", y[i]);
      s += buf;
    }
  }
  ADD_FAILURE() << t.name << ": " << what << " certified " << std::hexfloat << static_cast<double>(got)
                << ", correctly rounded " << static_cast<double>(want) << std::defaultfloat << " (n=" << n
                << ") terms:" << s;
}

/// Every certificate the interval gives for this data (value and, for sums, the mean by n;
/// for squares, the root), each checked against the oracle when it holds.
template <class Out> void check(tally_of& t, const oc::interval& v, const vec& x, const vec& y, op k,
                                std::uint64_t n_mean = 0) {
  Out r;
  ++t.tried;
  if (oc::round_certified<Out>(v, r)) {
    ++t.certified;
    Out want = ref_value<Out>(x, y, k);
    if (!same_bits(r, want)) report(t, "value", x, y, r, want);
  }
  if (k == op::sum) {
    std::uint64_t n = n_mean ? n_mean : x.size();
    ++t.tried;
    if (oc::divide_certified<Out>(v, n, r)) {
      ++t.certified;
      Out want;
      if (!ref_mean<Out>(x, n, want)) ++t.unchecked;
      else if (!same_bits(r, want)) report(t, "mean", x, y, r, want, n);
    }
  }
  if (k == op::square) {
    ++t.tried;
    if (oc::sqrt_certified<Out>(v, r)) {
      ++t.certified;
      Out want = ref_norm<Out>(x);
      if (!same_bits(r, want)) report(t, "norm", x, y, r, want);
    }
  }
}

/// All shapes: K = 3 and K = 2 (TwoProduct products), and, for float32 data, the kernel's
/// K = 2 with EXACT products (and K = 3 EXACT); both outputs.
void check_all(tally_of& t, const vec& x, const vec& y, op k, bool float_data, std::mt19937_64& g,
               std::uint64_t n_mean = 0) {
  auto both = [&](const oc::interval& v) {
    check<double>(t, v, x, y, k, n_mean);
    check<float>(t, v, x, y, k, n_mean);
  };
  both(accumulate<3, false>(x, y, k, g));
  both(accumulate<2, false>(x, y, k, g));
  if (float_data) {
    both(accumulate<2, true>(x, y, k, g));
    both(accumulate<3, true>(x, y, k, g));
  }
}

// ---- building blocks -------------------------------------------------------------------------------

/// A double-double (hi + lo), for building near-ties (not exact: the oracle decides).
struct dd {
  double hi, lo;
};
dd dd_add(dd a, double b) {
  double s, e;
  oc::two_sum(a.hi, b, s, e);
  e += a.lo;
  double h, l;
  oc::two_sum(s, e, h, l);
  return {h, l};
}

double uni(std::mt19937_64& g) { return std::uniform_real_distribution<double>(0.0, 1.0)(g); }
int irange(std::mt19937_64& g, int lo, int hi) { return lo + static_cast<int>(g() % static_cast<std::uint64_t>(hi - lo + 1)); }

/// A random Out value with exponent in [elo, ehi] (normal), random sign and significand.
template <class Out> Out random_out(std::mt19937_64& g, int elo, int ehi) {
  constexpr int digits = std::numeric_limits<Out>::digits;
  double m = 1.0 + std::ldexp(static_cast<double>(g() >> (64 - (digits - 1))), -(digits - 1));
  if (g() % 8 == 0) m = 1.0;                                   // powers of two
  if (g() % 8 == 0) m = 2.0 - std::ldexp(1.0, -(digits - 1));  // all ones
  Out r = static_cast<Out>(std::ldexp(m, irange(g, elo, ehi)));
  return (g() & 1) ? -r : r;
}

/// Half the gap from r (finite, nonzero) to its neighbour away from zero (up) or towards it
/// (down), as a double (exact: a power of two, or 2^-1075 for double subnormals, where 0).
template <class Out> double half_gap_side(Out r, bool away) {
  Out a = std::fabs(r);
  Out nb = std::nextafter(a, away ? std::numeric_limits<Out>::infinity() : Out(0));
  return std::fabs(static_cast<double>(nb) - static_cast<double>(a)) * 0.5;
}

/// t split into float32 pieces (exactly); false when t needs more than 4 or leaves the
/// float32 range.
bool float_pieces(double t, vec& out) {
  for (int i = 0; i < 4 && t != 0; ++i) {
    if (std::fabs(t) > FLT_MAX) return false;
    float f = static_cast<float>(t);
    if (f == 0) return false;  // below float32's range
    out.push_back(f);
    t -= static_cast<double>(f);  // exact
  }
  return t == 0;
}

/// Keeps the top `bits` significant bits of t (the rest is t - result, exact).
double top_bits(double t, int bits) {
  if (t == 0 || !std::isfinite(t)) return t;
  int e;
  std::frexp(t, &e);
  double scale = std::ldexp(1.0, bits - e);
  double r = std::trunc(t * scale) / scale;  // exact: power-of-two scaling
  return std::isfinite(r) ? r : t;
}

/// Disguises a list of terms with the same exact sum: terms split into high and low parts,
/// cancelling pairs (M, -M) of larger magnitude scattered in, shuffled. float_data: every
/// piece a float32 (false if impossible). max_scale: largest M relative to the largest term.
bool disguise(vec& t, std::mt19937_64& g, bool float_data, int max_scale = 80) {
  vec out;
  double big = 0;
  for (double v : t) big = std::max(big, std::fabs(v));
  for (double v : t) {
    if (v != 0 && g() % 3 == 0) {
      double hi = top_bits(v, irange(g, 1, 40));
      out.push_back(hi);
      if (v - hi != 0) out.push_back(v - hi);
    } else {
      out.push_back(v);
    }
  }
  int pairs = static_cast<int>(g() % 4);
  int ebig = big > 0 ? std::ilogb(big) : 0;
  for (int p = 0; p < pairs; ++p) {
    int e = std::min(ebig + irange(g, -20, max_scale), float_data ? 126 : 1022);
    double M = std::ldexp(1.0 + uni(g), e);
    if (float_data) M = static_cast<float>(M);
    if (!std::isfinite(M)) continue;
    out.push_back(M);
    out.push_back(-M);
  }
  if (float_data) {
    vec f;
    for (double v : out)
      if (!float_pieces(v, f)) return false;
    out.swap(f);
  }
  std::shuffle(out.begin(), out.end(), g);
  t.swap(out);
  return !t.empty();
}

/// A small offset from a midpoint: 0, or +-2^-j times the half gap (j from 0 to 120), or a few
/// ulps of the term scale below that.
double offset(std::mt19937_64& g, double hg) {
  switch (g() % 4) {
    case 0: return 0.0;
    case 1: return ((g() & 1) ? 1 : -1) * std::ldexp(hg, -irange(g, 0, 8));
    case 2: return ((g() & 1) ? 1 : -1) * std::ldexp(hg, -irange(g, 9, 60));
    default: return ((g() & 1) ? 1 : -1) * std::ldexp(hg * (1.0 + uni(g)), -irange(g, 60, 120));
  }
}

// ---- the tests -------------------------------------------------------------------------------------

// The float32 overflow certificate's lower bound, |H| - |L|(1 + 2^-52) - B, was computed with
// its first subtraction rounded: by up to half an ulp of H, which is not covered by the final
// factor (1 - 2^-50) when B nearly cancels H. This interval holds 2^128 - 2^104 + 2^84
// (correctly rounded: FLT_MAX) as well as values past the threshold (+inf): it must not be
// certified at all.
TEST(CertifiedAdversarial, FloatOverflowLowerBoundIsRigorous) {
  const double H = 0x1p157 + 0x1p105, L = -0x1p104 * (1 - 0x1p-20), B = H - 0x1p128;
  ASSERT_EQ(H - B, 0x1p128);  // exact
  float f;
  EXPECT_FALSE(oc::round_certified<float>({H, L, B, 1}, f)) << f;
  // The same with H's sign flipped (-inf vs -FLT_MAX).
  EXPECT_FALSE(oc::round_certified<float>({-H, -L, B, 1}, f)) << f;
  // Intervals wholly past the threshold (by more than 2^-50 of it) still give infinities.
  ASSERT_TRUE(oc::round_certified<float>({0x1p128, 0, 0x1p103 - 0x1p80, 1}, f));
  EXPECT_EQ(f, std::numeric_limits<float>::infinity());
  ASSERT_TRUE(oc::round_certified<float>({-0x1p157 - 0x1p105, 0x1p103, 0x1p157 + 0x1p105 - 0x1p128 - 0x1p105, 1}, f));
  EXPECT_EQ(f, -std::numeric_limits<float>::infinity());
  EXPECT_FALSE(oc::round_certified<float>({0x1p128, 0, 0x1p103, 1}, f));  // reaches the threshold itself
}

// Exact values on or near midpoints between Out values, in disguise; Out from its exponent
// range's bottom to its top.
template <class Out> void midpoints(tally_of& t, int cases, std::uint64_t seed, bool float_data, int elo, int ehi) {
  std::mt19937_64 g(seed);
  for (int c = 0; c < cases; ++c) {
    Out r = random_out<Out>(g, elo, ehi);
    bool away = g() & 1;
    double hg = half_gap_side(r, away);
    double R = static_cast<double>(r);
    double mid = (R < 0) == away ? -hg : hg;  // towards the chosen neighbour
    vec terms{R, mid, offset(g, hg)};
    if (g() % 4 == 0) terms.push_back(((g() & 1) ? 1 : -1) * std::ldexp(hg, -irange(g, 100, 400)));  // far below
    if (!disguise(terms, g, float_data)) continue;
    check_all(t, terms, {}, op::sum, float_data, g);
  }
}

TEST(CertifiedAdversarial, SumsAtAndNearMidpoints) {
  {
    tally_of t{"sums near double midpoints (double data)"};
    midpoints<double>(t, 120000, 1, false, -60, 60);
    midpoints<double>(t, 10000, 2, false, -1000, 900);
    EXPECT_EQ(t.wrong, 0);
    EXPECT_GT(t.certified, t.tried / 10);
  }
  {
    tally_of t{"sums near float midpoints (double data)"};
    midpoints<float>(t, 80000, 3, false, -60, 60);
    midpoints<float>(t, 10000, 4, false, -149, 127);
    EXPECT_EQ(t.wrong, 0);
    EXPECT_GT(t.certified, t.tried / 10);
  }
  {
    tally_of t{"sums near float midpoints (float data)"};
    midpoints<float>(t, 80000, 5, true, -40, 40);
    midpoints<float>(t, 10000, 6, true, -120, 100);
    EXPECT_EQ(t.wrong, 0);
    EXPECT_GT(t.certified, t.tried / 10);
  }
}

// Exact values near FLT_MAX, the float32 overflow threshold 2^128 - 2^103, 2^128, DBL_MAX,
// and sums whose intermediates overflow; with large cancelling terms (large bounds, for K = 2).
TEST(CertifiedAdversarial, NearOverflow) {
  tally_of t{"near FLT_MAX / threshold / DBL_MAX"};
  std::mt19937_64 g(7);
  const double fmax = FLT_MAX, thr = 0x1p128 - 0x1p103, dmax = DBL_MAX;
  for (int c = 0; c < 80000; ++c) {
    const int which = static_cast<int>(g() % 6);
    double base = which == 0 ? fmax : which == 1 ? thr : which == 2 ? 0x1p128 : which == 3 ? fmax - 0x1p103 : thr;
    bool float_data = which != 4 && (g() & 1);
    vec terms;
    if (which == 4) {  // DBL_MAX and its midpoints
      double hg = 0x1p970;
      terms = {dmax - 0x1p971 * static_cast<double>(g() % 3), (g() & 1) ? hg : -hg, offset(g, hg)};
      if (g() % 3 == 0) terms.push_back(dmax);  // an intermediate overflow
      if (g() % 3 == 0) terms.push_back(-dmax);
    } else {
      double d = offset(g, 0x1p103);
      if (which == 5) d = ((g() & 1) ? 1 : -1) * std::ldexp(1.0 + uni(g), irange(g, 60, 110));
      terms = {base, d};
      if (float_data) terms = {fmax, base - fmax, d};  // base as float32 pieces: FLT_MAX plus a power of two
    }
    if ((g() & 1) && !float_data) {  // large cancelling terms, so that K = 2 rounds into lo
      double M = std::ldexp(1.0 + uni(g), irange(g, 129, 1000));
      terms.push_back(M);
      terms.push_back(-M);
    }
    if (g() & 1) {
      for (double& v : terms) v = -v;
    }
    if (!disguise(terms, g, float_data, 20)) continue;
    check_all(t, terms, {}, op::sum, float_data, g);
  }
  EXPECT_EQ(t.wrong, 0);
  EXPECT_GT(t.certified, t.tried / 20);
}

// Subnormal results: sums near float32 subnormal midpoints (double data) and near the float64
// subnormal range; float64 dot products with products that underflow (rounded to 0, to a
// subnormal, or whose TwoProduct error term underflows) on top of a value near a midpoint.
TEST(CertifiedAdversarial, SubnormalResultsAndUnderflowingProducts) {
  tally_of t{"subnormal results, underflowing products"};
  std::mt19937_64 g(8);
  for (int c = 0; c < 60000; ++c) {
    // float32 subnormal and smallest-normal results.
    float r = static_cast<float>(std::ldexp(static_cast<double>(1 + g() % 20000), -149));
    if (g() & 1) r = -r;
    double hg = 0x1p-150;
    vec terms{r, ((g() & 1) ? hg : -hg), offset(g, hg)};
    if (disguise(terms, g, false, 40)) check_all(t, terms, {}, op::sum, false, g);
  }
  for (int c = 0; c < 60000; ++c) {
    // float64: a value near 2^-1022 .. 2^-1000 (or subnormal) near a midpoint, plus products
    // around 2^-1075, 2^-1100, ... of random signs.
    int e = irange(g, -1074, -990);
    double R = std::ldexp(1.0 + uni(g), e);
    if (e < -1022) R = std::ldexp(static_cast<double>(1 + g() % 1000), -1074);
    if (g() & 1) R = -R;
    double hg = half_gap_side(R, g() & 1);
    vec x{R, 1.0}, y{1.0, hg > 0 ? hg * ((g() & 1) ? 1 : -1) : 0x1p-1074};
    int extra = irange(g, 1, 4);
    for (int i = 0; i < extra; ++i) {
      int pe = irange(g, -1140, -960);  // the product's exponent
      int xe = irange(g, std::max(pe - 1000, -1070), std::min(pe + 1000, 1000));
      x.push_back(((g() & 1) ? 1 : -1) * std::ldexp(1.0 + uni(g), xe));
      y.push_back(std::ldexp(1.0 + ((g() & 1) ? uni(g) : 0.0), pe - xe));
    }
    if (g() & 1) {  // an exact midpoint product: 2^-1075 = 2^-500 * 2^-575
      x.push_back(0x1p-500);
      y.push_back(((g() & 1) ? 1 : -1) * 0x1p-575);
    }
    if (g() & 1) {  // a cancelling pair of products
      double a = std::ldexp(1.0 + uni(g), irange(g, -60, 60)), b = std::ldexp(1.0 + uni(g), irange(g, -60, 60));
      x.push_back(a), y.push_back(b), x.push_back(-a), y.push_back(b);
    }
    // shuffle x and y together
    for (std::size_t i = x.size(); i > 1; --i) {
      std::size_t j = g() % i;
      std::swap(x[i - 1], x[j]);
      std::swap(y[i - 1], y[j]);
    }
    check_all(t, x, y, op::dot, false, g);
  }
  EXPECT_EQ(t.wrong, 0);
  EXPECT_GT(t.certified, t.tried / 20);
}

// Means: exact sums n * (a midpoint of Out) + a small offset, for n at powers of two and
// their neighbours up to 2^53 (2^53 itself must be refused), including quotients near the
// 2^-900 / 2^900 limits and float32 subnormal means.
TEST(CertifiedAdversarial, MeansNearMidpointsAndLargeCounts) {
  tally_of t{"means near midpoints, n up to 2^53"};
  std::mt19937_64 g(9);
  auto pick_n = [&]() -> std::uint64_t {
    switch (g() % 4) {
      case 0: return 1 + g() % 20;
      case 1: {
        int k = irange(g, 1, 53);
        std::uint64_t p = std::uint64_t(1) << k;
        return p + static_cast<std::uint64_t>(irange(g, -1, 1));
      }
      case 2: return (std::uint64_t(1) << 53) - 1 - g() % 3;
      default: return 1 + (g() >> (11 + g() % 50));
    }
  };
  auto one = [&](auto tag, int elo, int ehi) {
    using Out = decltype(tag);
    std::uint64_t n = pick_n();
    if (n == 0) n = 1;
    Out r = random_out<Out>(g, elo, ehi);
    if (std::is_same_v<Out, float> && g() % 6 == 0) r = static_cast<float>(std::ldexp(static_cast<double>(1 + g() % 4000), -149));
    double R = r, dn = static_cast<double>(n);
    bool away = g() & 1;
    double hg = half_gap_side(r, away);
    double mid = (R < 0) == away ? -hg : hg;
    double p = R * dn, pe = std::fma(R, dn, -p);  // n R = p + pe exactly
    double q = mid * dn;                          // exact: a power of two times n < 2^53
    double d = offset(g, hg) * dn;
    vec terms{p, pe, q, d};
    if (!disguise(terms, g, false, 30)) return;
    check_all(t, terms, {}, op::sum, false, g, n);
    // n = 2^53 and above are never certified.
    Out o;
    oc::interval v = accumulate<3, false>(terms, {}, op::sum, g);
    EXPECT_FALSE(oc::divide_certified<Out>(v, std::uint64_t(1) << 53, o));
  };
  for (int c = 0; c < 50000; ++c) {
    one(double{}, -60, 60);
    one(float{}, -60, 60);
  }
  for (int c = 0; c < 5000; ++c) {
    one(double{}, -905, -895);
    one(double{}, 840, 905);
    one(float{}, -149, 127);
  }
  EXPECT_EQ(t.wrong, 0);
  EXPECT_GT(t.certified, t.tried / 10);
}

/// s^2 + t^2 with s, t of opposite parity: an odd hypotenuse c, and legs a = s^2 - t^2,
/// b = 2 s t; picks s, t with c in [2^bits, 2^(bits + 0.5)) and both legs below 2^bits.
bool pythagorean(std::mt19937_64& g, int bits, double& a, double& b, double& c) {
  for (int tries = 0; tries < 100; ++tries) {
    double theta = 0.6 + 0.35 * uni(g);  // legs of similar size
    double rad = std::sqrt(std::ldexp(1.0 + 0.4 * uni(g), bits));
    auto s = static_cast<std::uint64_t>(rad * std::cos(theta / 2)), u = static_cast<std::uint64_t>(rad * std::sin(theta / 2));
    if (((s ^ u) & 1) == 0) ++u;
    if (s <= u) continue;
    unsigned __int128 C = (unsigned __int128)s * s + (unsigned __int128)u * u;
    unsigned __int128 A = (unsigned __int128)s * s - (unsigned __int128)u * u, B = (unsigned __int128)2 * s * u;
    unsigned __int128 lim = (unsigned __int128)1 << bits;
    if (C < lim || A >= lim || B >= lim || C >= ((unsigned __int128)1 << (bits + 1))) continue;
    a = static_cast<double>(static_cast<std::uint64_t>(A));
    b = static_cast<double>(static_cast<std::uint64_t>(B));
    c = static_cast<double>(static_cast<std::uint64_t>(C));  // may round (bits + 1 > 53): not used exactly
    return true;
  }
  return false;
}

// L2 norms: sums of squares equal to, or near, the square of a midpoint between Out values.
// Exact ties from Pythagorean triples (an odd hypotenuse of digits + 1 bits is a midpoint),
// and near ties from r^2 + y^2 (+ z^2) fitted to (r + half gap)^2.
TEST(CertifiedAdversarial, NormsNearSquaresOfMidpoints) {
  tally_of t{"norms near squares of midpoints"};
  std::mt19937_64 g(10);
  for (int c = 0; c < 20000; ++c) {
    // Exact ties: ||(a, b) 2^k|| = c 2^k, c odd with digits + 1 bits.
    const bool dbl = g() & 1;
    double a, b, hyp;
    if (!pythagorean(g, dbl ? 53 : 24, a, b, hyp)) continue;
    int k = dbl ? irange(g, -400, 400) : irange(g, -100, 90);
    vec x{std::ldexp(a, k) * ((g() & 1) ? 1 : -1), std::ldexp(b, k) * ((g() & 1) ? 1 : -1)};
    if (g() % 3 == 0) x.push_back(std::ldexp(1.0 + uni(g), k + (dbl ? 0 : 10) - irange(g, 0, 60)));  // just past the tie
    if (g() % 3 == 0) x.push_back(0.0);
    std::shuffle(x.begin(), x.end(), g);
    check_all(t, x, {}, op::square, !dbl && x.size() == 2, g);
  }
  // Near ties: m = R + h (h: half the gap above R), m^2 - R^2 = 2 R h + h^2 carried as a
  // double-double T; `extra` random squares take about half of T (many terms: K = 2 rounds
  // in lo, so the bound matters), y^2 most of the rest, and z^2 what is left, scaled by
  // 1 +- 2^-j: sums of squares within ~2^-(105 + j) R^2 of m^2, on either side.
  auto sub_square = [](dd& T, double w) {
    double p = w * w, pe = std::fma(w, w, -p);
    T = dd_add(dd_add(T, -p), -pe);
  };
  auto near = [&](auto tag, int elo, int ehi, int extra) {
    using Out = decltype(tag);
    Out r = std::fabs(random_out<Out>(g, elo, ehi));
    if (!(r < std::numeric_limits<Out>::max())) return;
    const double R = r, h = half_gap_side(r, true);
    dd T = dd_add(dd{2 * R * h, 0.0}, h * h);
    vec x{R};
    const double w0 = std::sqrt(T.hi / (2.0 * std::max(extra, 1)));
    for (int i = 0; i < extra; ++i) {
      double w = w0 * (0.5 + uni(g));
      x.push_back(w);
      sub_square(T, w);
    }
    double y = std::sqrt(T.hi);
    sub_square(T, y);
    if (T.hi < 0 && (g() & 1)) {  // just below m^2: one ulp less of y, then z^2 from below
      double y2 = std::nextafter(y, 0.0);
      T = dd_add(dd_add(T, y * y), std::fma(y, y, -(y * y)));
      sub_square(T, y2);
      y = y2;
    }
    x.push_back(y);
    if (T.hi > 0 && (g() % 4 != 0)) {
      double z = std::sqrt(T.hi) * (1 + ((g() & 1) ? 1 : -1) * std::ldexp(1.0, -irange(g, 1, 50)));
      x.push_back(z);
    }
    if (g() % 4 == 0) x.push_back(std::ldexp(R, -irange(g, 60, 200)));
    std::shuffle(x.begin(), x.end(), g);
    check_all(t, x, {}, op::square, false, g);
  };
  for (int c = 0; c < 20000; ++c) {
    near(double{}, -200, 200, 0);
    near(float{}, -60, 60, 0);
  }
  for (int c = 0; c < 3000; ++c) {
    near(double{}, -200, 200, irange(g, 1, 300));
    near(double{}, -450, -440, 1);
    near(double{}, 440, 450, 1);
    near(float{}, -149, 127, irange(g, 0, 3));
  }
  // Thousands of squares: K = 2's lo rounds often, the bound decides (a certificate that
  // ignored B here would lie a few percent of the time).
  for (int c = 0; c < 400; ++c) near(double{}, -100, 100, irange(g, 2000, 6000));
  EXPECT_EQ(t.wrong, 0);
  EXPECT_GT(t.certified, t.tried / 10);
}

// Signed zeros: mixtures of +0 and -0 with terms that cancel exactly (or not), sums and dots
// of float32 data (exact products: zeros certified) and float64 data (TwoProduct: never a
// zero), every merge order; also means.
TEST(CertifiedAdversarial, SignedZeros) {
  tally_of t{"signed zeros"};
  std::mt19937_64 g(11);
  for (int c = 0; c < 30000; ++c) {
    const bool float_data = g() & 1;
    int n = irange(g, 1, 10);
    vec x, y;
    for (int i = 0; i < n; ++i) {
      double v;
      switch (g() % 5) {
        case 0: v = 0.0; break;
        case 1: case 2: v = -0.0; break;
        case 3: v = std::ldexp(1.0 + uni(g), irange(g, -30, 30)); break;
        default: v = 0x1p-149; break;
      }
      if (float_data) v = static_cast<float>(v);
      if (v != 0 && (g() & 1)) {
        x.push_back(v), y.push_back((g() & 1) ? -0.0 : 0.0);
        x.push_back(-v), y.push_back((g() & 1) ? -0.0 : 0.0);
      } else {
        x.push_back(v), y.push_back((g() & 1) ? -1.0 : ((g() & 1) ? 0.0 : -0.0));
      }
    }
    for (std::size_t i = x.size(); i > 1; --i) {
      std::size_t j = g() % i;
      std::swap(x[i - 1], x[j]);
      std::swap(y[i - 1], y[j]);
    }
    check_all(t, x, {}, op::sum, float_data, g);
    check_all(t, x, y, op::dot, float_data, g);
  }
  EXPECT_EQ(t.wrong, 0);
  EXPECT_GT(t.certified, t.tried / 4);
  // The rule itself: -0 only when every term is -0 (every product, for dots).
  std::mt19937_64 g2(12);
  for (int K : {2, 3}) {
    double r;
    float f;
    vec neg{-0.0, -0.0, -0.0};
    oc::interval v = K == 2 ? accumulate<2, true>(neg, {}, op::sum, g2) : accumulate<3, false>(neg, {}, op::sum, g2);
    ASSERT_TRUE(oc::round_certified<double>(v, r));
    EXPECT_TRUE(r == 0 && std::signbit(r));
    ASSERT_TRUE(oc::round_certified<float>(v, f));
    EXPECT_TRUE(f == 0 && std::signbit(f));
    vec mixed{-0.0, 0x1p-1074, -0.0, -0x1p-1074};
    v = K == 2 ? accumulate<2, true>(mixed, {}, op::sum, g2) : accumulate<3, false>(mixed, {}, op::sum, g2);
    ASSERT_TRUE(oc::round_certified<double>(v, r));
    EXPECT_TRUE(r == 0 && !std::signbit(r));
  }
}

// Short random sums and dots of awkward values (powers of two, all-ones significands, values
// one ulp off, midpoints of float32 and float64, near-cancelling pairs, tiny and huge terms,
// subnormals), in random shapes: a broad search for any certificate that lies.
TEST(CertifiedAdversarial, RandomAwkwardShortSums) {
  tally_of t{"random awkward short sums/dots/norms"};
  std::mt19937_64 g(13);
  auto awkward = [&](int e0, bool float_data) {
    double v;
    int e = e0 + irange(g, -60, 8);
    switch (g() % 8) {
      case 0: v = std::ldexp(1.0, e); break;
      case 1: v = std::ldexp(2.0 - 0x1p-52, e); break;
      case 2: v = std::ldexp(1.0 + 0x1p-52 * static_cast<double>(g() % 4), e); break;
      case 3: v = std::ldexp(1.0 + 0x1p-24 + ((g() & 1) ? 0x1p-53 : 0.0), e); break;  // float midpoints
      case 4: v = std::ldexp(1.0 + 0x1p-53 * static_cast<double>(1 + 2 * (g() % 2)), e); break;  // rounds
      case 5: v = std::ldexp(1.0 + uni(g), e); break;
      case 6: v = std::ldexp(1.0 + uni(g), e - irange(g, 50, 200)); break;
      default: v = std::ldexp(static_cast<double>(g() % 8), -1074); break;
    }
    if (float_data) v = static_cast<float>(v);
    return (g() & 1) ? -v : v;
  };
  for (int c = 0; c < 300000; ++c) {
    const bool float_data = g() % 3 == 0;
    const int e0 = float_data ? irange(g, -40, 40) : (g() % 8 == 0 ? irange(g, -1000, 1000) : irange(g, -20, 20));
    int n = irange(g, 1, 8);
    vec x, y;
    for (int i = 0; i < n; ++i) {
      double v = awkward(e0, float_data);
      x.push_back(v);
      y.push_back(awkward(float_data ? irange(g, -40, 40) : 0, float_data));
      if (g() % 4 == 0) {  // a near-cancelling partner
        double w = float_data ? static_cast<float>(-v * (1 + 0x1p-23 * static_cast<double>(irange(g, -2, 2))))
                              : -v * (1 + 0x1p-52 * static_cast<double>(irange(g, -2, 2)));
        x.push_back(w);
        y.push_back(y.back());
      }
    }
    const op k = static_cast<op>(g() % 3);
    check_all(t, x, k == op::dot ? y : vec{}, k, float_data, g);
  }
  EXPECT_EQ(t.wrong, 0);
  EXPECT_GT(t.certified, t.tried / 4);
}

// The CPU backend's sums, means, dots and L2 norms run the certified pass first, vectorised over lanes and
// threads (src/cpu/exact.cpp, certify), and the exact levels only where it cannot prove the
// result. End to end through tally::dot and tally::norm2 (cpu): near-midpoint dots in
// disguise (power-of-two factors moved between x and y, cancelling pairs, zero pairs), exact
// Pythagorean norm ties and random awkward values, at lengths from 1 to a few hundred (every
// lane position and tail), beside long inputs that take the threads; each result against the
// oracle, bit for bit. A lane order or bound that lied would show here, not only in the unit
// tests of ops/certified.hpp above.
TEST(CertifiedAdversarial, CpuSumsMeansDotsAndNormsOfAnyLengthAreCorrectlyRounded) {
  std::mt19937_64 g(14);
  long checked = 0, wrong = 0;
  auto expect = [&](const char* what, double got, double want, const vec& x, const vec& y) {
    ++checked;
    if (same_bits(got, want)) return;
    if (++wrong > 8) return;
    ADD_FAILURE() << what << ": got " << std::hexfloat << got << ", correctly rounded " << want << std::defaultfloat
                  << " (n=" << x.size() << ", x[0]=" << (x.empty() ? 0.0 : x[0]) << ", y[0]=" << (y.empty() ? 0.0 : y[0])
                  << ")";
  };
  auto check_dot = [&](const vec& x, const vec& y, bool float_data) {
    const auto n = static_cast<std::int64_t>(x.size());
    if (float_data) {
      std::vector<float> fx(x.begin(), x.end()), fy(y.begin(), y.end());
      tally::view<const float> vx{fx.data(), n, tally::memory::host}, vy{fy.data(), n, tally::memory::host};
      expect("float32 dot -> float64", tally::dot<float, double>(vx, vy, cpu), ref_value<double>(x, y, op::dot), x, y);
      expect("float32 dot -> float32", tally::dot<float, float>(vx, vy, cpu), ref_value<float>(x, y, op::dot), x, y);
    } else {
      tally::view<const double> vx{x.data(), n, tally::memory::host}, vy{y.data(), n, tally::memory::host};
      expect("float64 dot -> float64", tally::dot<double, double>(vx, vy, cpu), ref_value<double>(x, y, op::dot), x, y);
      expect("float64 dot -> float32", tally::dot<double, float>(vx, vy, cpu), ref_value<float>(x, y, op::dot), x, y);
    }
  };
  auto check_sum = [&](const vec& x, bool float_data) {
    const auto n = static_cast<std::int64_t>(x.size());
    double mean_d;
    float mean_f;
    ASSERT_TRUE(ref_mean<double>(x, x.size(), mean_d) && ref_mean<float>(x, x.size(), mean_f));
    if (float_data) {
      std::vector<float> fx(x.begin(), x.end());
      tally::view<const float> vx{fx.data(), n, tally::memory::host};
      expect("float32 sum -> float64", tally::sum<float, double>(vx, cpu), ref_value<double>(x, {}, op::sum), x, {});
      expect("float32 sum -> float32", tally::sum<float, float>(vx, cpu), ref_value<float>(x, {}, op::sum), x, {});
      expect("float32 mean -> float64", tally::mean<float, double>(vx, cpu), mean_d, x, {});
      expect("float32 mean -> float32", tally::mean<float, float>(vx, cpu), mean_f, x, {});
    } else {
      tally::view<const double> vx{x.data(), n, tally::memory::host};
      expect("float64 sum -> float64", tally::sum<double, double>(vx, cpu), ref_value<double>(x, {}, op::sum), x, {});
      expect("float64 sum -> float32", tally::sum<double, float>(vx, cpu), ref_value<float>(x, {}, op::sum), x, {});
      expect("float64 mean -> float64", tally::mean<double, double>(vx, cpu), mean_d, x, {});
      expect("float64 mean -> float32", tally::mean<double, float>(vx, cpu), mean_f, x, {});
    }
  };
  auto check_norm = [&](const vec& x, bool float_data) {
    const auto n = static_cast<std::int64_t>(x.size());
    if (float_data) {
      std::vector<float> fx(x.begin(), x.end());
      tally::view<const float> vx{fx.data(), n, tally::memory::host};
      expect("float32 norm -> float64", tally::norm2<float, double>(vx, cpu), ref_norm<double>(x), x, {});
      expect("float32 norm -> float32", tally::norm2<float, float>(vx, cpu), ref_norm<float>(x), x, {});
    } else {
      tally::view<const double> vx{x.data(), n, tally::memory::host};
      expect("float64 norm -> float64", tally::norm2<double, double>(vx, cpu), ref_norm<double>(x), x, {});
      expect("float64 norm -> float32", tally::norm2<double, float>(vx, cpu), ref_norm<float>(x), x, {});
    }
  };
  // Pads x (and y) to length n with zero pairs, or products cancelling in pairs, shuffled.
  auto pad = [&](vec& x, vec& y, std::size_t n, bool float_data, bool cancel) {
    while (x.size() < n) {
      if (cancel && x.size() + 2 <= n) {
        double a = std::ldexp(1.0 + uni(g), irange(g, -30, 30)), b = std::ldexp(1.0 + uni(g), irange(g, -30, 30));
        if (float_data) a = static_cast<float>(a), b = static_cast<float>(b);
        x.push_back(a), y.push_back(b), x.push_back(-a), y.push_back(b);
      } else {
        x.push_back((g() & 1) ? 0.0 : -0.0), y.push_back(std::ldexp(1.0 + uni(g), irange(g, -20, 20)));
        if (float_data) y.back() = static_cast<float>(y.back());
      }
    }
    for (std::size_t i = x.size(); i > 1; --i) {
      std::size_t j = g() % i;
      std::swap(x[i - 1], x[j]);
      std::swap(y[i - 1], y[j]);
    }
  };
  auto length = [&] {
    if (g() % 64 == 0) return static_cast<std::size_t>(irange(g, 66000, 100000));  // threads (when there are several)
    switch (g() % 8) {
      case 0: case 1: return static_cast<std::size_t>(irange(g, 100, 400));
      default: return static_cast<std::size_t>(irange(g, 1, 40));
    }
  };
  for (int c = 0; c < 3000; ++c) {
    // Dots near midpoints of either Out: sum terms in disguise, each moved into a product by a
    // power of two (exact), then padded.
    const bool float_data = g() % 3 == 0, to_float = g() & 1;
    double R, hg;
    if (to_float) {
      float r = random_out<float>(g, float_data ? -40 : -60, float_data ? 40 : 60);
      R = r, hg = half_gap_side(r, g() & 1);
    } else {
      double r = random_out<double>(g, -60, 60);
      R = r, hg = half_gap_side(r, g() & 1);
    }
    vec terms{R, (g() & 1) ? hg : -hg, offset(g, hg)};
    if (!disguise(terms, g, float_data, 40)) continue;
    vec x, y;
    for (double v : terms) {
      const int k = irange(g, -20, 20);
      x.push_back(std::ldexp(v, k)), y.push_back(std::ldexp(1.0, -k));
    }
    auto is_float = [](double v) { return v == static_cast<double>(static_cast<float>(v)); };
    if (float_data && !(std::all_of(x.begin(), x.end(), is_float) && std::all_of(y.begin(), y.end(), is_float)))
      continue;  // (a piece moved below float32's range)
    const std::size_t n = std::max(length(), x.size());
    pad(x, y, n, float_data, g() & 1);
    check_dot(x, y, float_data);
    // The same value as a sum: the products as terms (exact: powers of two), and as a mean.
    vec t(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) t[i] = x[i] * y[i];
    if (!float_data || std::all_of(t.begin(), t.end(), is_float)) check_sum(t, float_data);
  }
  for (int c = 0; c < 600; ++c) {
    // A lane whose own lo rounds and then cancels: the CPU's lanes take consecutive elements,
    // so lane 0 gets x[0], x[8], x[16], x[24], x[32] = M, A, b, -A, -M: A is lost from hi
    // (M / A > 2^53) into lo, the tie-breaker b far below A is rounded away in lo, -A cancels
    // lo back to 0 and -M hi, leaving a state of zeros whose running bound alone records the
    // lost b. Lane 1 holds an Out value R and the half gap to its neighbour: the rest of the
    // sum is an exact midpoint, which b decides. A bound not kept per element would let this
    // pass as an exact tie.
    const bool to_float = g() & 1;
    double R, hg;
    if (to_float) {
      float r = random_out<float>(g, -60, 60);
      R = r, hg = half_gap_side(r, g() & 1);
    } else {
      double r = random_out<double>(g, -60, 60);
      R = r, hg = half_gap_side(r, g() & 1);
    }
    vec x(40, 0.0);
    const double A = std::ldexp(1.0 + uni(g), std::ilogb(R) + irange(g, -10, 10));
    x[0] = std::ldexp(1.0 + uni(g), std::ilogb(A) + irange(g, 54, 70));
    x[8] = A;
    x[16] = ((g() & 1) ? 1 : -1) * std::ldexp(hg, -irange(g, 0, 10));
    x[24] = -A;
    x[32] = -x[0];
    x[1] = R;
    x[9] = (R < 0) == (g() & 1) ? -hg : hg;
    if (g() & 1) x.resize(static_cast<std::size_t>(irange(g, 41, 47)), 0.0);  // a tail after the lanes
    check_sum(x, false);
  }
  for (int c = 0; c < 1500; ++c) {
    // Exact norm ties (a Pythagorean triple: an odd hypotenuse of digits + 1 bits), zero-padded,
    // and just past them.
    const bool dbl = g() & 1;
    double a, b, hyp;
    if (!pythagorean(g, dbl ? 53 : 24, a, b, hyp)) continue;
    const int k = dbl ? irange(g, -300, 300) : irange(g, -60, 60);
    vec x{std::ldexp(a, k) * ((g() & 1) ? 1 : -1), std::ldexp(b, k) * ((g() & 1) ? 1 : -1)};
    if (g() % 3 == 0) x.push_back(std::ldexp(1.0, k + (dbl ? 0 : 10) - irange(g, 0, 60)));
    vec y(x.size(), 1.0);  // (pad's partner values; not used by the norm)
    pad(x, y, std::max(length(), x.size()), false, false);
    check_norm(x, !dbl && x.size() >= 2 && std::ldexp(a, k) == static_cast<float>(std::ldexp(a, k)) &&
                      std::ldexp(b, k) == static_cast<float>(std::ldexp(b, k)) &&
                      std::all_of(x.begin(), x.end(), [](double v) { return v == static_cast<float>(v); }));
  }
  for (int c = 0; c < 3000; ++c) {
    // Random awkward values (powers of two, all-ones significands, near-cancelling partners,
    // tiny and subnormal products), of random lengths: dots and norms.
    const bool float_data = g() % 3 == 0;
    const std::size_t n = length();
    vec x(n), y(n);
    const int e0 = float_data ? irange(g, -30, 30) : irange(g, -500, 500);
    for (std::size_t i = 0; i < n; ++i) {
      const int e = e0 + irange(g, -60, 8);
      double v;
      switch (g() % 6) {
        case 0: v = std::ldexp(1.0, e); break;
        case 1: v = std::ldexp(2.0 - 0x1p-52, e); break;
        case 2: v = std::ldexp(1.0 + uni(g), e); break;
        case 3: v = i > 0 ? -x[i - 1] * (1 + 0x1p-52 * irange(g, -2, 2)) : 1.0; break;
        case 4: v = std::ldexp(1.0 + uni(g), float_data ? -140 : irange(g, -1074, -1000)); break;
        default: v = 0.0; break;
      }
      x[i] = float_data ? static_cast<float>(v) : v;
      const double w = std::ldexp(1.0 + ((g() & 1) ? uni(g) : 0.0), float_data ? irange(g, -20, 20) : irange(g, -100, 100));
      y[i] = float_data ? static_cast<float>(w) : w;
    }
    switch (g() % 3) {
      case 0: check_dot(x, y, float_data); break;
      case 1: check_norm(x, float_data); break;
      default: check_sum(x, float_data); break;
    }
  }
  std::printf("cpu sums, means, dots and norms end to end: %ld results checked\n", checked);
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(checked, 10000);
}

}  // namespace
