// tally::exact_state: partial states on each backend, the exact merge, and the one rounding.
// Any split of the data into parts (empty parts included), merged in any order, must give the
// bitwise same canonical state as the whole array and round to the single-call result and to
// the MPFR oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "exact_oracle.hpp"
#include "support.hpp"
#include "tally/state.hpp"

namespace tt {
namespace {

using tally::exact_state;
using tally::reduce_op;

template <class T> std::vector<T> wide_data(std::size_t n, std::uint64_t seed, int emax = 60) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> m(1.0, 2.0);
  std::uniform_int_distribution<int> k(-emax, emax), s(0, 1);
  std::vector<T> v(n);
  for (auto& e : v) e = static_cast<T>((s(g) ? -1.0 : 1.0) * std::ldexp(m(g), k(g)));
  return v;
}

// Split points: cuts[0] = 0 < ... < cuts.back() = n, with repeated cuts (empty parts).
std::vector<std::size_t> cuts_of(std::size_t n, int parts, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<std::size_t> c{0, n};
  for (int i = 0; i + 1 < parts; ++i) c.push_back(std::uniform_int_distribution<std::size_t>(0, n)(g));
  c.push_back(c[1 % c.size()]);  // an empty part
  std::sort(c.begin(), c.end());
  return c;
}

class State : public Typed {
 protected:
  // The state of one part [a, b) of x (and y), computed on this backend.
  template <class T> exact_state part(const std::vector<T>& x, const std::vector<T>& y, std::size_t a, std::size_t b,
                                      reduce_op op, bool squares = false) const {
    std::vector<T> px(x.begin() + a, x.begin() + b);
    auto bx = put(px);
    if (squares) return tally::partial_squares<T>(bx.in(), opt());
    if (op == reduce_op::sum) return tally::partial_sum<T>(bx.in(), opt());
    std::vector<T> py(y.begin() + a, y.begin() + b);
    auto by = put(py);
    return tally::partial_dot<T>(bx.in(), by.in(), opt());
  }
  template <class T> exact_state merged(const std::vector<T>& x, const std::vector<T>& y, const std::vector<std::size_t>& c,
                                        reduce_op op, bool squares = false) const {
    exact_state s;
    for (std::size_t i = 0; i + 1 < c.size(); ++i) s = tally::merge(s, part(x, y, c[i], c[i + 1], op, squares));
    return s;
  }
};

TEST_P(State, AnySplitGivesTheSameStateAndBits) {
  with_float_type(t(), [&]<class T>() {
    const std::size_t n = 70001;  // past a CPU chunk and several GPU tiles
    auto x = wide_data<T>(n, 11), y = wide_data<T>(n, 12, 30);
    for (reduce_op op : {reduce_op::sum, reduce_op::dot}) {
      exact_state whole = part(x, y, 0, n, op);
      T single = op == reduce_op::sum ? tally::sum<T>(put(x).in(), opt()) : dot<T>(x, y);
      if (oracle::have_oracle()) {
        EXPECT_TRUE(same_bits(single, oracle::exact<T, T>(x, op == reduce_op::dot ? y : std::vector<T>{})));
      }
      for (int parts : {1, 2, 3, 4, 7}) {
        exact_state m = merged(x, y, cuts_of(n, parts, 100 + parts), op);
        EXPECT_EQ(m, whole) << "parts " << parts;
        EXPECT_TRUE(same_bits(tally::round<T>(m), single)) << "parts " << parts;
        EXPECT_EQ(m.terms(), static_cast<std::int64_t>(n));
      }
      // float32 data summed into a correctly rounded float64 through the state.
      double wide = op == reduce_op::sum ? tally::sum<T, double>(put(x).in(), opt())
                                         : tally::dot<T, double>(put(x).in(), put(y).in(), opt());
      EXPECT_TRUE(same_bits(tally::round<double>(whole), wide));
    }
  });
}

TEST_P(State, WordWiseSumIsTheMergeWithoutNormalising) {
  with_float_type(t(), [&]<class T>() {
    auto x = wide_data<T>(5000, 21);
    auto c = cuts_of(x.size(), 5, 3);
    exact_state wire;  // what MPI_SUM / ncclSum computes: a plain integer sum of the words
    for (std::size_t i = 0; i + 1 < c.size(); ++i) {
      exact_state p = part(x, x, c[i], c[i + 1], reduce_op::sum);
      for (int k = 0; k < exact_state::size; ++k) wire.words[k] += p.words[k];
    }
    T want = tally::sum<T>(put(x).in(), opt());
    EXPECT_TRUE(same_bits(tally::round<T>(wire), want));
    exact_state canon = wire;
    tally::normalize(canon);
    EXPECT_EQ(canon, part(x, x, 0, x.size(), reduce_op::sum));
  });
}

TEST_P(State, MeanAndNormOfMergedParts) {
  with_float_type(t(), [&]<class T>() {
    auto x = wide_data<T>(33333, 31, 100 / static_cast<int>(sizeof(T)));
    auto c = cuts_of(x.size(), 4, 9);
    exact_state s = merged(x, x, c, reduce_op::sum);
    exact_state q = merged(x, x, c, reduce_op::dot, true);
    auto bx = put(x);
    EXPECT_TRUE(same_bits(tally::round_mean<T>(s), tally::mean<T, T>(bx.in(), opt())));
    EXPECT_TRUE(same_bits(tally::round_sqrt<T>(q), tally::norm2<T, T>(bx.in(), opt())));
    if (oracle::have_oracle()) {
      EXPECT_TRUE(same_bits(tally::round_mean<T>(s), oracle::exact<T, T>(x, {}, oracle::finish::mean)));
      EXPECT_TRUE(same_bits(tally::round_sqrt<T>(q), oracle::exact<T, T>(x, {}, oracle::finish::sqrt, true)));
    }
    // The squares of x, as a state, equal the dot product of x with a copy of itself.
    std::vector<T> copy = x;
    EXPECT_EQ(q, merged(x, copy, c, reduce_op::dot));
  });
}

TEST_P(State, VarianceOfMergedPartsIsTheWholeDatasBits) {
  with_float_type(t(), [&]<class T>() {
    for (int dist_seed : {31, 47}) {
      auto x = wide_data<T>(33333, dist_seed, 100 / static_cast<int>(sizeof(T)));
      auto c = cuts_of(x.size(), 4, 9);
      exact_state s1 = merged(x, x, c, reduce_op::sum);
      exact_state s2 = merged(x, x, c, reduce_op::dot, true);
      tally::options cpu;
      cpu.backend = backend::cpu;
      for (std::int64_t ddof : {0, 1, -2}) {
        SCOPED_TRACE("ddof=" + std::to_string(ddof));
        for (bool take_sqrt : {false, true}) {
          double got = 0, want = take_sqrt ? tally::std_dev<T, double>(x, ddof, cpu) : tally::var<T, double>(x, ddof, cpu);
          tally::round_variance(s1, s2, ddof, take_sqrt, &got, dtype::float64);
          EXPECT_TRUE(same_bits(got, want)) << got << " " << want;
          float gf = 0, wf = take_sqrt ? tally::std_dev<T, float>(x, ddof, cpu) : tally::var<T, float>(x, ddof, cpu);
          tally::round_variance(s1, s2, ddof, take_sqrt, &gf, dtype::float32);
          EXPECT_TRUE(same_bits(gf, wf)) << gf << " " << wf;
        }
      }
      double r = 0;
      tally::round_variance(s1, s2, static_cast<std::int64_t>(x.size()), false, &r, dtype::float64);  // n - ddof = 0
      EXPECT_TRUE(std::isnan(r));
      exact_state half = merged(x, x, {0, x.size() / 2}, reduce_op::dot, true);
      EXPECT_TRUE(throws_tally([&] { tally::round_variance(s1, half, 0, false, &r, dtype::float64); return 0; },
                               errc::invalid_argument, {"terms", "same data"}));
    }
  });
}

TEST_P(State, SpecialValuesAndZerosMergeAsIeeeSays) {
  with_float_type(t(), [&]<class T>() {
    constexpr T inf = std::numeric_limits<T>::infinity(), qnan = std::numeric_limits<T>::quiet_NaN();
    auto st = [&](std::vector<T> v) { return tally::partial_sum<T>(put(v).in(), opt()); };
    exact_state none;
    EXPECT_TRUE(same_bits(tally::round<T>(none), T(0)));                      // nothing: +0
    EXPECT_TRUE(same_bits(tally::round<T>(tally::merge(none, none)), T(0)));  // still nothing
    EXPECT_TRUE(same_bits(tally::round<T>(tally::merge(st({-0.0f}), st({-0.0f, -0.0f}))), T(-0.0)));
    EXPECT_TRUE(same_bits(tally::round<T>(tally::merge(st({-0.0f}), none)), T(-0.0)));
    EXPECT_TRUE(same_bits(tally::round<T>(tally::merge(st({-0.0f}), st({0.0f}))), T(0.0)));
    EXPECT_TRUE(same_bits(tally::round<T>(tally::merge(st({1, inf}), st({2}))), inf));
    EXPECT_TRUE(same_bits(tally::round<T>(tally::merge(st({1, inf}), st({-inf}))), qnan));
    EXPECT_TRUE(same_bits(tally::round<T>(tally::merge(st({1}), st({qnan, 3}))), qnan));
    EXPECT_TRUE(same_bits(tally::round<T>(tally::merge(st({-inf}), st({-inf}))), -inf));
    // Cancellation across parts: 2^100 and 1 in one part, -2^100 in another.
    T big = std::ldexp(T(1), 100);
    EXPECT_TRUE(same_bits(tally::round<T>(tally::merge(st({big, 1}), st({-big}))), T(1)));
    // Overflow only at the end: the largest finite value twice, then minus it.
    T mx = std::numeric_limits<T>::max();
    EXPECT_TRUE(same_bits(tally::round<T>(tally::merge(st({mx, mx}), st({-mx}))), mx));
    EXPECT_TRUE(same_bits(tally::round<T>(tally::merge(st({mx}), st({mx}))), inf));
  });
}

TEST_P(State, Float32AndFloat64StatesShareOneGrid) {
  auto xf = wide_data<float>(20000, 41);
  auto xd = wide_data<double>(20000, 42);
  auto bf = put(xf);
  auto bd = put(xd);
  exact_state s = tally::merge(tally::partial_sum<float>(bf.in(), opt()), tally::partial_sum<double>(bd.in(), opt()));
  std::vector<double> all(xf.begin(), xf.end());  // float32 -> float64 is exact
  all.insert(all.end(), xd.begin(), xd.end());
  EXPECT_TRUE(same_bits(tally::round<double>(s), tally::sum<double>(put(all).in(), opt())));
  exact_state d = tally::merge(tally::partial_dot<float>(bf.in(), bf.in(), opt()), tally::partial_squares<double>(bd.in(), opt()));
  EXPECT_TRUE(same_bits(tally::round_sqrt<double>(d), tally::norm2<double>(put(all).in(), opt())));
  if (oracle::have_oracle()) { EXPECT_TRUE(same_bits(tally::round<double>(s), oracle::exact<double, double>(all, {}))); }
}

TEST_P(State, IntegersMergeExactlyAndOverflowOnlyAtTheEnd) {
  std::vector<std::int64_t> a{INT64_MAX, -5}, b{-INT64_MAX, 7};
  auto ba = put(a), bb = put(b);
  exact_state s = tally::merge(tally::partial_sum<std::int64_t>(ba.in(), opt()), tally::partial_sum<std::int64_t>(bb.in(), opt()));
  EXPECT_EQ(tally::round<std::int64_t>(s), 2);
  EXPECT_TRUE(same_bits(tally::round<double>(s), 2.0));
  EXPECT_TRUE(same_bits(tally::round_mean<double>(s), 0.5));
  std::vector<std::int64_t> c{INT64_MAX - 1}, d{2};
  auto bc = put(c), bdd = put(d);
  exact_state o = tally::merge(tally::partial_sum<std::int64_t>(bc.in(), opt()), tally::partial_sum<std::int64_t>(bdd.in(), opt()));
  EXPECT_TRUE(throws_tally([&] { tally::round<std::int64_t>(o); }, errc::overflow, {"int64"}));
  EXPECT_TRUE(same_bits(tally::round<double>(o), 9223372036854775808.0));
  std::vector<std::int64_t> e{INT64_MIN + 1}, f{-1};
  auto be = put(e), bf = put(f);
  EXPECT_EQ(tally::round<std::int64_t>(tally::merge(tally::partial_sum<std::int64_t>(be.in(), opt()),
                                                    tally::partial_sum<std::int64_t>(bf.in(), opt()))),
            INT64_MIN);
  std::vector<std::int32_t> g{3, -4, 5}, h{2, 2, 2};
  auto bg = put(g), bh = put(h);
  EXPECT_EQ(tally::round<std::int64_t>(tally::partial_dot<std::int32_t>(bg.in(), bh.in(), opt())), 8);
}

TEST_P(State, ErrorsAreNamed) {
  std::vector<double> x{1.5, 2.5};
  auto bx = put(x);
  exact_state s = tally::partial_sum<double>(bx.in(), opt());
  double r;
  EXPECT_TRUE(throws_tally([&] { tally::round(s, &r, dtype::int32); }, errc::invalid_argument, {"int32"}));
  EXPECT_TRUE(throws_tally([&] { tally::round(s, nullptr, dtype::float64); }, errc::null_pointer, {"result"}));
  EXPECT_TRUE(throws_tally([&] { tally::round_mean(s, &r, dtype::int64); }, errc::invalid_argument, {"float32"}));
  std::vector<double> h{0.5};
  auto bh = put(h);
  exact_state frac = tally::partial_sum<double>(bh.in(), opt());
  EXPECT_TRUE(throws_tally([&] { tally::round<std::int64_t>(frac); }, errc::invalid_argument, {"integer"}));
  std::vector<double> neg{-4.0};
  auto bn = put(neg);
  EXPECT_TRUE(throws_tally([&] { tally::round_sqrt<double>(tally::partial_sum<double>(bn.in(), opt())); },
                           errc::invalid_argument, {"negative"}));
  std::vector<double> y{1.0};
  auto by = put(y);
  EXPECT_TRUE(throws_tally([&] { tally::partial_dot<double>(bx.in(), by.in(), opt()); }, errc::length_mismatch, {"length"}));
  EXPECT_TRUE(throws_tally([&] { tally::partial(reduce_op::sum, {nullptr, 3, dtype::float64}, {}, opt()); },
                           errc::null_pointer, {"null"}));
  std::int64_t* dummy = reinterpret_cast<std::int64_t*>(&r);
  tally::options cpu;
  cpu.backend = backend::cpu;
  EXPECT_TRUE(throws_tally([&] { tally::partial_async(reduce_op::sum, {x.data(), 2, dtype::float64, tally::memory::host}, {}, dummy, cpu); },
                           errc::invalid_argument, {"CUDA"}));
  EXPECT_TRUE(throws_tally([&] { tally::partial_async(reduce_op::sum, {x.data(), 2, dtype::float64}, {}, nullptr, cpu); },
                           errc::null_pointer, {"state_device"}));
}

TEST_P(State, CanonicalStateIsTheSameOnEveryBackend) {
  with_float_type(t(), [&]<class T>() {
    auto x = wide_data<T>(100003, 51), y = wide_data<T>(100003, 52, 20);
    tally::options cpu;
    cpu.backend = backend::cpu;
    for (reduce_op op : {reduce_op::sum, reduce_op::dot}) {
      exact_state here = part(x, y, 0, x.size(), op);
      tally::array_ref rx{x.data(), static_cast<std::int64_t>(x.size()), tally::dtype_of<T>(), tally::memory::host};
      tally::array_ref ry{y.data(), static_cast<std::int64_t>(y.size()), tally::dtype_of<T>(), tally::memory::host};
      EXPECT_EQ(here, tally::partial(op, rx, ry, cpu));
    }
  });
}

#if defined(TALLY_TEST_HAVE_CUDA)
TEST_P(State, DeviceResidentStateEqualsTheBlockingOne) {
  if (b() != backend::cuda) GTEST_SKIP() << "partial_async is the CUDA backend's";
  with_float_type(t(), [&]<class T>() {
    auto x = wide_data<T>(1 << 20, 61), y = wide_data<T>(1 << 20, 62, 20);
    auto bx = put(x), by = put(y);
    buffer<std::int64_t> st(b(), exact_state::size, std::int64_t(-1));
    tally::array_ref rx{bx.data(), bx.size(), tally::dtype_of<T>()}, ry{by.data(), by.size(), tally::dtype_of<T>()};
    for (int k = 0; k < 3; ++k) {  // sum, dot, squares (x read once)
      reduce_op op = k == 0 ? reduce_op::sum : reduce_op::dot;
      tally::array_ref yy = k == 2 ? rx : ry;
      tally::partial_async(op, rx, yy, st.data(), opt());
      exact_state got;
      auto w = st.read();
      std::copy(w.begin(), w.end(), got.words.begin());
      EXPECT_EQ(got, tally::partial(op, rx, yy, opt())) << "k " << k;
    }
    tally::partial_async(reduce_op::sum, {bx.data(), 0, tally::dtype_of<T>()}, {}, st.data(), opt());
    EXPECT_EQ(st.read(), std::vector<std::int64_t>(exact_state::size, 0));
  });
}
#endif

INSTANTIATE_TEST_SUITE_P(Backends, State,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float32, dtype::float64)),
                         [](const auto& info) { return param_name(info); });

}  // namespace
}  // namespace tt
