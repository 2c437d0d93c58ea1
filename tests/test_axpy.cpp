// tally::axpy (y = a*x + y) and tally::scale (x = a*x) on every element type and both backends,
// against an element-wise reference (floating: std::fma, compared bitwise; integers: exact
// 128-bit results, wrapped, with errc::overflow when one does not fit).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "support.hpp"

namespace tt {
namespace {

class Axpy : public Typed {};

INSTANTIATE_TEST_SUITE_P(Backends, Axpy,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float32, dtype::float64, dtype::int32, dtype::int64)),
                         [](const auto& info) { return param_name(info); });

template <class T> T axpy_ref(T a, T x, T y, bool& over) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fma(a, x, y);
  } else {
    i128 r = static_cast<i128>(a) * x + y;
    if (r > std::numeric_limits<T>::max() || r < std::numeric_limits<T>::min()) over = true;
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<unsigned __int128>(r)));
  }
}

TEST_P(Axpy, MatchesTheElementwiseReference) {
  with_type(t(), [&]<class T>() {
    for (std::size_t n : {1u, 3u, 1000u, 65537u, 1000003u}) {
      auto x = random_values<T>(static_cast<std::int64_t>(n), dist::narrow, n);
      auto y = random_values<T>(static_cast<std::int64_t>(n), dist::wide, n + 1);
      const T a = std::is_floating_point_v<T> ? T(0.1) : T(-3);
      for (std::size_t off : {0u, 1u}) {
        auto bx = put(x, off), by = put(y, off);
        bool over = false;
        std::vector<T> want(n), want_s(n);
        for (std::size_t i = 0; i < n; ++i) want[i] = axpy_ref(a, x[i], y[i], over);
        tally::axpy<T>(a, bx.in(), by.out(), opt());
        ASSERT_FALSE(over);
        std::vector<T> got = by.read();
        std::size_t bad = 0;
        for (std::size_t i = 0; i < n; ++i) bad += !same_bits(got[i], want[i]);
        EXPECT_EQ(bad, 0u) << "n=" << n << " off=" << off;
        // scale x in place
        for (std::size_t i = 0; i < n; ++i) want_s[i] = std::is_floating_point_v<T> ? T(a * x[i]) : axpy_ref(a, x[i], T(0), over);
        auto bs = put(x, off);
        tally::scale<T>(a, bs.out(), opt());
        got = bs.read();
        bad = 0;
        for (std::size_t i = 0; i < n; ++i) bad += !same_bits(got[i], want_s[i]);
        EXPECT_EQ(bad, 0u) << "scale n=" << n;
      }
    }
  });
}

TEST_P(Axpy, RoundedOnceAndSpecialValues) {
  if (t() == dtype::int32 || t() == dtype::int64) GTEST_SKIP() << "floating types only (integers: IntegerOverflowAliasingAndErrors)";
  with_float_type(t(), [&]<class T>() {
    const T eps = std::numeric_limits<T>::epsilon();
    // (1 + eps) (1 - eps) - 1 = -eps^2: fused, not 0 as the separate product and sum give.
    std::vector<T> x = {T(1) - eps}, y = {T(-1)};
    auto bx = put(x), by = put(y);
    tally::axpy<T>(T(1) + eps, bx.in(), by.out(), opt());
    EXPECT_EQ(by.read()[0], -eps * eps);
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    std::vector<T> xs = {inf, T(0), nan, std::numeric_limits<T>::max()}, ys = {T(1), T(-0.0), T(1), std::numeric_limits<T>::max()};
    auto cx = put(xs), cy = put(ys);
    tally::axpy<T>(T(2), cx.in(), cy.out(), opt());
    auto r = cy.read();
    EXPECT_EQ(r[0], inf);
    EXPECT_TRUE(same_bits(r[1], T(0)));  // 2 * 0 + (-0) = +0
    EXPECT_TRUE(std::isnan(r[2]));
    EXPECT_EQ(r[3], inf);  // overflow of a floating element is IEEE, not an error
    std::vector<T> big = {T(1e30f)};
    auto cb = put(big);
    tally::scale<T>(T(-1e30f), cb.out(), opt());
    const T want = T(-1e30f) * T(1e30f);  // -inf for float32
    EXPECT_EQ(cb.read()[0], want);
    if constexpr (std::is_same_v<T, float>) { EXPECT_EQ(want, -inf); }
  });
}

TEST_P(Axpy, IntegerOverflowAliasingAndErrors) {
  with_type(t(), [&]<class T>() {
    const T mx = std::numeric_limits<T>::max();
    if constexpr (std::is_integral_v<T>) {
      std::vector<T> x = {1, mx / 2 + 1, 3}, y = {0, 0, 0};
      auto bx = put(x), by = put(y);
      EXPECT_TRUE(throws_tally([&] { tally::axpy<T>(T(2), bx.in(), by.out(), opt()); }, errc::overflow, {"axpy", "overflow"}));
      auto r = by.read();  // written anyway, wrapped
      EXPECT_EQ(r[0], T(2));
      EXPECT_EQ(r[1], std::numeric_limits<T>::min());
      EXPECT_EQ(r[2], T(6));
      EXPECT_TRUE(throws_tally([&] { tally::scale<T>(T(3), bx.out(), opt()); }, errc::overflow, {"scale"}));
      // -1 * min overflows; min + min too; an exact result at the limit does not.
      std::vector<T> m = {std::numeric_limits<T>::min()};
      auto bm = put(m);
      EXPECT_TRUE(throws_tally([&] { tally::scale<T>(T(-1), bm.out(), opt()); }, errc::overflow));
      std::vector<T> ok1 = {mx / 2}, ok2 = {T(1)};
      auto b1 = put(ok1), b2 = put(ok2);
      tally::axpy<T>(T(2), b1.in(), b2.out(), opt());
      EXPECT_EQ(b2.read()[0], mx);
    }
    // Exact aliasing: y = a*y + y.
    std::vector<T> v = {1, 2, 3};
    auto bv = put(v);
    tally::axpy<T>(T(2), tally::view<const T>(bv.data(), 3), bv.out(), opt());
    EXPECT_EQ(bv.read(), (std::vector<T>{3, 6, 9}));
    // Partial overlap, length and type mismatch, null pointers.
    std::vector<T> w(10, T(1));
    auto bw = put(w);
    EXPECT_TRUE(throws_tally([&] { tally::axpy<T>(T(1), tally::view<const T>(bw.data(), 5), tally::view<T>(bw.data() + 2, 5), opt()); },
                             errc::invalid_argument, {"overlaps"}));
    EXPECT_TRUE(throws_tally([&] { tally::axpy<T>(T(1), tally::view<const T>(bw.data(), 5), tally::view<T>(bw.data() + 5, 4), opt()); },
                             errc::length_mismatch, {"length mismatch"}));
    EXPECT_TRUE(throws_tally([&] { tally::scale<T>(T(1), tally::view<T>(nullptr, 4), opt()); }, errc::null_pointer));
    EXPECT_TRUE(throws_tally([&] { tally::axpy(nullptr, {bw.data(), 1, tally::dtype_of<T>()}, {bw.data(), 1, tally::dtype_of<T>()}, opt()); },
                             errc::null_pointer, {"a is a null pointer"}));
    T one = 1;
    tally::mutable_array_ref other{bw.data(), 10, tally::dtype_of<T>() == dtype::float32 ? dtype::int32 : dtype::float32};
    EXPECT_TRUE(throws_tally([&] { tally::axpy(&one, {bw.data(), 10, tally::dtype_of<T>()}, other, opt()); },
                             errc::invalid_argument, {"type mismatch"}));
    // Empty: nothing happens, nothing throws.
    tally::axpy<T>(T(1), tally::view<const T>(nullptr, 0), tally::view<T>(nullptr, 0), opt());
    tally::scale<T>(T(1), tally::view<T>(nullptr, 0), opt());
  });
}

}  // namespace
}  // namespace tt
