// min, max, argmin, argmax and their nan forms: every test on both backends and every type,
// against a plain sequential reference (std::vector scan: the first index of the extreme,
// NumPy's NaN rule).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support.hpp"

namespace tt {
namespace {

class Extremes : public Typed {
 protected:
  // The sequential reference: first index of the min/max; NaN (propagate) wins at its first
  // index; -1 when there is none.
  template <class T> static tally::located<T> reference(const std::vector<T>& x, bool mx, bool skip_nan) {
    tally::located<T> r{mx ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max(), -1};
    if constexpr (!std::numeric_limits<T>::is_integer)
      r.value = mx ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    for (std::size_t i = 0; i < x.size(); ++i) {
      T v = x[i];
      if (v != v) {
        if (!skip_nan) return {v, static_cast<std::int64_t>(i)};
        continue;
      }
      if (r.index < 0 || (mx ? v > r.value : v < r.value)) r = {v, static_cast<std::int64_t>(i)};
    }
    return r;
  }
  template <class T> void check(const std::vector<T>& x, std::size_t offset = 0) {
    auto bx = put(x, offset);
    for (bool mx : {false, true})
      for (bool skip : {false, true}) {
        SCOPED_TRACE(std::string(mx ? "max" : "min") + (skip ? " omit NaN" : "") + " n=" + std::to_string(x.size()) +
                     " offset=" + std::to_string(offset));
        auto want = reference(x, mx, skip);
        auto nans = skip ? tally::nan_policy::omit : tally::nan_policy::propagate;
        auto got = mx ? tally::extreme_of<T, true>(bx.in(), nans, opt()) : tally::extreme_of<T, false>(bx.in(), nans, opt());
        EXPECT_EQ(got.index, want.index);
        if (want.index >= 0) {
          EXPECT_TRUE(same_bits(got.value, x[static_cast<std::size_t>(want.index)]));
        }
        // minmax keeps both in one read (the CUDA backend's one launch): the same side
        const tally::min_max<T> both = tally::minmax<T>(bx.in(), nans, opt());
        const tally::located<T>& side = mx ? both.max : both.min;
        EXPECT_EQ(side.index, want.index) << "minmax";
        if (want.index >= 0) {
          EXPECT_TRUE(same_bits(side.value, x[static_cast<std::size_t>(want.index)])) << "minmax";
        }
      }
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, Extremes,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float32, dtype::float64, dtype::int32, dtype::int64)),
                         [](const auto& info) { return param_name(info); });

TEST_P(Extremes, RandomDataManyLengthsAndOffsets) {
  with_type(t(), [&]<class T>() {
    std::mt19937_64 g(5);
    for (std::size_t n : {1u, 2u, 3u, 7u, 8u, 9u, 255u, 1000u, 65537u, 1000003u}) {
      std::vector<T> x(n);
      // Few distinct values: many ties, so the first-index rule is exercised everywhere.
      for (auto& v : x) v = static_cast<T>(static_cast<int>(g() % 50) - 25);
      check(x);
      check(x, 1);
      check(x, 3);
    }
  });
}

// The GPU folds whole 16-byte vectors per thread and finds the index inside the vector at the
// end: the extreme and the first NaN at every position of a vector (and of the next one), with
// copies of the extreme later in the same vector, in the same thread's later vectors and in
// other threads' vectors; signed zeros within one vector; vectors made only of NaN next to
// numbers (omit: skipped); at offsets that shift the vector boundaries.
TEST_P(Extremes, EveryPositionInsideAVector) {
  with_type(t(), [&]<class T>() {
    constexpr bool fp = !std::numeric_limits<T>::is_integer;
    const std::size_t n = 70001;  // several vectors per thread at any grid
    std::vector<T> base(n);
    for (std::size_t i = 0; i < n; ++i) base[i] = static_cast<T>(static_cast<int>(i % 97) - 48);
    for (std::size_t p = 0; p < 18; ++p) {
      std::vector<T> x = base;
      x[1000 + p] = T(100);  // the max, then copies of it later
      x[1000 + p + 1] = T(100);
      x[40000 + p] = T(100);
      x[n - 1] = T(100);
      x[3000 + p] = T(-100);  // the min, and a copy two vectors on
      x[3000 + p + 8] = T(-100);
      for (std::size_t offset : {std::size_t(0), std::size_t(1), std::size_t(3)}) check(x, offset);
      if constexpr (fp) {
        x[5000 + p] = std::numeric_limits<T>::quiet_NaN();  // the first NaN, then another
        x[5000 + p + 3] = std::numeric_limits<T>::quiet_NaN();
        check(x);
        check(x, 2);
      }
    }
    if constexpr (fp) {
      // signed zeros: the first zero is the minimum with its own sign, whichever comes first
      for (std::size_t p = 0; p < 8; ++p) {
        std::vector<T> z(4096, T(1));
        z[64 + p] = T(-0.0);
        z[64 + p + 1] = T(0.0);
        check(z);
        z[64 + p] = T(0.0);
        z[64 + p + 1] = T(-0.0);
        check(z);
      }
      // whole vectors of NaN between numbers
      std::vector<T> h(20000);
      for (std::size_t i = 0; i < h.size(); ++i) h[i] = (i / 8) % 3 == 1 ? std::numeric_limits<T>::quiet_NaN() : T(static_cast<int>(i % 31));
      check(h);
      check(h, 1);
    }
  });
}

TEST_P(Extremes, TiesAcrossBlocksGiveTheFirstIndex) {
  with_type(t(), [&]<class T>() {
    const std::size_t n = 3000017;
    std::vector<T> x(n, T(1));
    for (std::size_t i : {std::size_t(2999999), std::size_t(777777), std::size_t(40001), std::size_t(40000)}) x[i] = T(9);
    for (std::size_t i : {std::size_t(2000000), std::size_t(123457), std::size_t(123456)}) x[i] = T(-9);
    auto bx = put(x);
    EXPECT_EQ(tally::argmax<T>(bx.in(), opt()), 40000);
    EXPECT_EQ(tally::argmin<T>(bx.in(), opt()), 123456);
    EXPECT_EQ(tally::max<T>(bx.in(), opt()), T(9));
    EXPECT_EQ(tally::min<T>(bx.in(), opt()), T(-9));
    // All equal: index 0.
    std::vector<T> same(n, T(3));
    auto bs = put(same, 1);
    EXPECT_EQ(tally::argmin<T>(bs.in(), opt()), 0);
    EXPECT_EQ(tally::argmax<T>(bs.in(), opt()), 0);
  });
}

TEST_P(Extremes, TypeLimitsAndInfinities) {
  with_type(t(), [&]<class T>() {
    using L = std::numeric_limits<T>;
    T hi = L::has_infinity ? L::infinity() : L::max(), lo = L::has_infinity ? -L::infinity() : L::lowest();
    std::vector<T> all_hi(1001, hi), all_lo(1001, lo);
    auto bh = put(all_hi), bl = put(all_lo);
    EXPECT_EQ(tally::argmin<T>(bh.in(), opt()), 0);  // all +inf: index 0 and +inf
    EXPECT_TRUE(same_bits(tally::min<T>(bh.in(), opt()), hi));
    EXPECT_EQ(tally::argmax<T>(bl.in(), opt()), 0);
    EXPECT_TRUE(same_bits(tally::max<T>(bl.in(), opt()), lo));
    check(all_hi);
    check(all_lo);
  });
}

TEST_P(Extremes, NaNRule) {
  with_type(t(), [&]<class T>() {
    if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
      const T nan = std::numeric_limits<T>::quiet_NaN();
      std::vector<T> x(100003);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(std::sin(double(i)) * 100);
      x[50001] = nan;
      x[70000] = nan;
      auto bx = put(x);
      EXPECT_TRUE(std::isnan(tally::max<T>(bx.in(), opt())));  // NaN in the middle of max
      EXPECT_EQ(tally::argmax<T>(bx.in(), opt()), 50001);
      EXPECT_EQ(tally::argmin<T>(bx.in(), opt()), 50001);
      EXPECT_FALSE(std::isnan(tally::nanmax<T>(bx.in(), opt())));
      check(x);
      check(x, 1);
      std::vector<T> all_nan(77, nan);
      auto ba = put(all_nan);
      EXPECT_TRUE(std::isnan(tally::nanmin<T>(ba.in(), opt())));
      EXPECT_TRUE(throws_tally([&] { return tally::nanargmax<T>(ba.in(), opt()); }, errc::empty_input));
      EXPECT_EQ(tally::argmax<T>(ba.in(), opt()), 0);
      // Signed zeros compare equal: the first one is returned with its own sign.
      std::vector<T> z = {T(1), T(-0.0), T(0.0), T(1)};
      auto bz = put(z);
      EXPECT_TRUE(same_bits(tally::min<T>(bz.in(), opt()), T(-0.0)));
      EXPECT_EQ(tally::argmin<T>(bz.in(), opt()), 1);
    } else {
      GTEST_SKIP() << "integers have no NaN";
    }
  });
}

// The reference cases of public bug reports (../shared/reference/reduction-cases.md), as given.
TEST_P(Extremes, ReportedCases) {
  with_type(t(), [&]<class T>() {
    std::vector<T> lanes(48);
    for (int i = 0; i < 48; ++i) lanes[static_cast<std::size_t>(i)] = static_cast<T>(i + 1);  // butterflies that drop lanes
    auto bl = put(lanes);
    EXPECT_EQ(tally::max<T>(bl.in(), opt()), T(48));
    EXPECT_EQ(tally::argmax<T>(bl.in(), opt()), 47);
    std::vector<T> equal(16, T(3));  // argmax of 16 equal values is 0
    auto be = put(equal);
    EXPECT_EQ(tally::argmax<T>(be.in(), opt()), 0);
    std::vector<T> two(1025, T(0));  // the maximum at 5 and 700: index 5
    two[5] = two[700] = T(9);
    auto bt = put(two);
    EXPECT_EQ(tally::argmax<T>(bt.in(), opt()), 5);
    if constexpr (std::numeric_limits<T>::has_infinity) {  // ten +inf: index 0, value +inf
      std::vector<T> inf(10, std::numeric_limits<T>::infinity());
      auto bi = put(inf);
      auto r = tally::extreme_of<T, false>(bi.in(), tally::nan_policy::propagate, opt());
      EXPECT_EQ(r.index, 0);
      EXPECT_EQ(r.value, std::numeric_limits<T>::infinity());
    }
  });
}

TEST_P(Extremes, EmptyInput) {
  with_type(t(), [&]<class T>() {
    std::vector<T> none;
    auto bn = put(none);
    using L = std::numeric_limits<T>;
    EXPECT_TRUE(same_bits(tally::min<T>(bn.in(), opt()), L::has_infinity ? L::infinity() : L::max()));
    EXPECT_TRUE(same_bits(tally::max<T>(bn.in(), opt()), L::has_infinity ? -L::infinity() : L::lowest()));
    EXPECT_TRUE(throws_tally([&] { return tally::argmin<T>(bn.in(), opt()); }, errc::empty_input, {"empty"}));
    EXPECT_TRUE(throws_tally([&] { return tally::argmax<T>(bn.in(), opt()); }, errc::empty_input));
  });
}

// minmax: both extremes with their first indices, against the sequential reference, for
// ties, NaN first / late / only, signed zeros (the first of each kind kept with its sign) and
// the empty input ({+inf, -1}, {-inf, -1}; integers: the type's limits).
TEST_P(Extremes, MinmaxGivesBothFirstExtremes) {
  with_type(t(), [&]<class T>() {
    constexpr bool fp = !std::numeric_limits<T>::is_integer;
    std::mt19937_64 g(11);
    std::vector<std::vector<T>> cases;
    for (std::size_t n : {0u, 1u, 5u, 4097u, 300001u}) {
      std::vector<T> x(n);
      for (auto& v : x) v = static_cast<T>(static_cast<int>(g() % 9) - 4);  // ties of both extremes
      cases.push_back(x);
      if constexpr (fp) {
        if (n > 1) {
          auto y = x;
          y[n / 2] = std::numeric_limits<T>::quiet_NaN();
          y[n - 1] = std::numeric_limits<T>::quiet_NaN();
          cases.push_back(y);
          std::vector<T> z(n, T(0.0));  // zeros: the first is -0
          z[0] = T(-0.0);
          cases.push_back(z);
          cases.push_back(std::vector<T>(n, std::numeric_limits<T>::quiet_NaN()));
        }
      }
    }
    for (const auto& x : cases)
      for (auto nans : {tally::nan_policy::propagate, tally::nan_policy::omit}) {
        SCOPED_TRACE("n=" + std::to_string(x.size()) + (nans == tally::nan_policy::omit ? " omit NaN" : ""));
        auto bx = put(x);
        const tally::min_max<T> got = tally::minmax<T>(bx.in(), nans, opt());
        const bool skip = nans == tally::nan_policy::omit;
        for (bool mx : {false, true}) {
          const auto want = reference(x, mx, skip);
          const tally::located<T>& r = mx ? got.max : got.min;
          EXPECT_EQ(r.index, want.index) << (mx ? "max" : "min");
          if (want.index >= 0) {
            EXPECT_TRUE(same_bits(r.value, x[static_cast<std::size_t>(want.index)])) << (mx ? "max" : "min");
          } else if (x.empty()) {
            EXPECT_TRUE(same_bits(r.value, want.value)) << (mx ? "max" : "min");
          } else {
            EXPECT_TRUE(r.value != r.value);  // only NaNs, omitted: NaN
          }
        }
      }
    // the type-erased call names itself in its errors
    std::vector<T> one(3, T(1));
    auto b1 = put(one);
    T v{};
    std::int64_t i = 0;
    EXPECT_TRUE(throws_tally([&] { tally::minmax(tally::nan_policy::omit, tally::detail::ref(b1.in()), &v, &i, nullptr, &i, opt()); },
                             errc::null_pointer, {"nanminmax"}));
    EXPECT_TRUE(throws_tally([&] { tally::minmax(tally::nan_policy::propagate, tally::array_ref{nullptr, 3, tally::dtype_of<T>()}, &v, &i, &v, &i, opt()); },
                             errc::null_pointer, {"minmax"}));
  });
}

}  // namespace
}  // namespace tt

namespace tt {
namespace {

// The CPU backend scans blocks of 2048 elements by value first and looks for the index in
// the one block that won (src/cpu/extremes.cpp); threads take contiguous chunks of 2^15. The
// extreme, its copies, signed zeros and NaNs at the last and first element of blocks, chunks
// and halves (the two threads' boundary), with NaN-only and NaN-holding blocks before,
// between and after the winner, and the winner tied in later blocks and other threads.
TEST_P(Extremes, ValueFirstBlocksAtEveryBoundary) {
  with_type(t(), [&]<class T>() {
    constexpr bool fp = !std::numeric_limits<T>::is_integer;
    const std::size_t n = 5 * 32768 + 4099;
    std::vector<T> base(n);
    for (std::size_t i = 0; i < n; ++i) base[i] = static_cast<T>(static_cast<int>((i * 7919) % 201) - 100);
    std::vector<std::size_t> spots = {0, 1, 2047, 2048, 2049, 4095, 4096, 32767, 32768, 65535, 65536, n / 2 - 1, n / 2, n / 2 + 1, n - 2049, n - 2048, n - 1};
    for (std::size_t p : spots) {
      std::vector<T> x = base;
      x[p] = T(120);  // the max at p, a copy in a later block and in the last one
      x[std::min(n - 1, p + 2048)] = T(120);
      x[n - 1] = T(120);
      x[(p + n / 2) % n] = T(-120);  // the min, somewhere else, and a copy a chunk on
      x[(p + n / 2 + 32768) % n] = T(-120);
      check(x);
      if constexpr (fp) {
        std::vector<T> y = x;
        y[(p + 5000) % n] = std::numeric_limits<T>::quiet_NaN();  // a NaN after (or before) the extremes
        y[(p + 9000) % n] = std::numeric_limits<T>::quiet_NaN();
        check(y);
        std::vector<T> z(n, T(5));  // zeros as the min at p: the first zero, its own sign
        z[p] = T(-0.0);
        z[std::min(n - 1, p + 1)] = T(0.0);
        z[(p + 70000) % n] = T(-0.0);
        check(z);
        z[p] = T(0.0);
        z[std::min(n - 1, p + 1)] = T(-0.0);
        check(z);
      }
    }
    if constexpr (fp) {
      // Whole blocks of NaN, then -inf / +inf only: the omit forms find the first infinity.
      const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
      for (std::size_t head : {std::size_t(1), std::size_t(2048), std::size_t(4097), std::size_t(32768), n / 2 + 3}) {
        std::vector<T> w(n, -inf);
        for (std::size_t i = 0; i < head; ++i) w[i] = nan;
        check(w);
        for (std::size_t i = head; i < n; ++i) w[i] = inf;
        check(w);
      }
      std::vector<T> all_nan(n, nan);
      check(all_nan);
    }
  });
}

}  // namespace
}  // namespace tt
