// tally::count_nonzero, tally::any, tally::all on every element type and both backends,
// against a plain count (NaN is nonzero, -0.0 is zero).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support.hpp"

namespace tt {
namespace {

class Logical : public Typed {};

INSTANTIATE_TEST_SUITE_P(Backends, Logical,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float32, dtype::float64, dtype::int32, dtype::int64)),
                         [](const auto& info) { return param_name(info); });

TEST_P(Logical, CountsMatchAPlainLoop) {
  with_type(t(), [&]<class T>() {
    std::mt19937_64 g(99);
    for (std::size_t n : {1u, 2u, 15u, 16u, 17u, 1000u, 32769u, 65537u, 1000003u}) {
      for (int density : {0, 1, 50, 100}) {  // percent of nonzero elements
        std::vector<T> x(n, T(0));
        std::int64_t want = 0;
        for (std::size_t i = 0; i < n; ++i) {
          if (int(g() % 100) < density) {
            x[i] = static_cast<T>(int(g() % 7) - 3);
            if constexpr (std::is_floating_point_v<T>) {
              if (g() % 50 == 0) x[i] = std::numeric_limits<T>::quiet_NaN();
              if (g() % 50 == 0) x[i] = T(-0.0);
            }
          }
          if constexpr (std::is_floating_point_v<T>) want += !(x[i] == T(0));
          else want += x[i] != 0;
        }
        for (std::size_t off : {0u, 1u}) {
          auto bx = put(x, off);
          SCOPED_TRACE("n=" + std::to_string(n) + " density=" + std::to_string(density) + " off=" + std::to_string(off));
          EXPECT_EQ(tally::count_nonzero<T>(bx.in(), opt()), want);
          EXPECT_EQ(tally::any<T>(bx.in(), opt()), want > 0);
          EXPECT_EQ(tally::all<T>(bx.in(), opt()), want == static_cast<std::int64_t>(n));
        }
      }
    }
  });
}

TEST_P(Logical, EdgeValuesAndEmpty) {
  with_type(t(), [&]<class T>() {
    auto e = put(std::vector<T>{});
    EXPECT_EQ(tally::count_nonzero<T>(e.in(), opt()), 0);
    EXPECT_FALSE(tally::any<T>(e.in(), opt()));
    EXPECT_TRUE(tally::all<T>(e.in(), opt()));  // vacuous truth, as NumPy
    std::vector<T> lim = {std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(), std::numeric_limits<T>::min()};
    EXPECT_EQ(tally::count_nonzero<T>(put(lim).in(), opt()), 3);
    if constexpr (std::is_floating_point_v<T>) {
      const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
      std::vector<T> v = {T(-0.0), T(0.0), nan, -inf, std::numeric_limits<T>::denorm_min()};
      EXPECT_EQ(tally::count_nonzero<T>(put(v).in(), opt()), 3);
      std::vector<T> z = {T(-0.0), T(-0.0)};
      EXPECT_FALSE(tally::any<T>(put(z).in(), opt()));
      std::vector<T> a = {nan, inf, -inf, T(1)};
      EXPECT_TRUE(tally::all<T>(put(a).in(), opt()));
    }
    // One zero at the very end of a long nonzero run (crosses every block / chunk boundary).
    std::vector<T> big(2000003, T(1));
    big.back() = T(0);
    EXPECT_FALSE(tally::all<T>(put(big).in(), opt()));
    EXPECT_EQ(tally::count_nonzero<T>(put(big).in(), opt()), 2000002);
  });
  tally::array_ref bad{nullptr, 3, dtype::int32};
  EXPECT_TRUE(throws_tally([&] { return tally::any(bad, opt()); }, errc::null_pointer, {"any", "null pointer"}));
  tally::array_ref neg{nullptr, -2, dtype::int32};
  EXPECT_TRUE(throws_tally([&] { return tally::count_nonzero(neg, opt()); }, errc::invalid_argument, {"negative"}));
}

}  // namespace
}  // namespace tt

namespace tt {
namespace {

// count_nonzero / any / all of every element type on both backends, from raw little-endian
// bytes: a floating value is zero when every bit but the sign is zero (so -0.0 is zero and NaN
// is not); any other type when every byte is zero. Random bit patterns, zeros and negative
// zeros, at lengths and offsets that take the vector and the misaligned paths.
class LogicalEveryType : public Typed {};

INSTANTIATE_TEST_SUITE_P(Backends, LogicalEveryType,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float16, dtype::bfloat16, dtype::float32,
                                                              dtype::float64, dtype::int8, dtype::int16, dtype::int32,
                                                              dtype::int64, dtype::uint8, dtype::uint16, dtype::uint32,
                                                              dtype::uint64, dtype::bool_)),
                         [](const auto& info) { return param_name(info); });

TEST_P(LogicalEveryType, CountsFromTheBits) {
  const std::size_t w = tally::dtype_size(t());
  const bool floating = t() == dtype::float16 || t() == dtype::bfloat16 || t() == dtype::float32 || t() == dtype::float64;
  std::mt19937_64 g(1234 + static_cast<int>(t()));
  for (std::size_t n : {1u, 7u, 33u, 4099u, 65537u, 1000003u}) {
    for (int density : {0, 3, 60, 100}) {
      std::vector<std::uint8_t> bytes(n * w, 0);
      std::int64_t want = 0;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint8_t* e = bytes.data() + i * w;
        if (int(g() % 100) < density) {
          if (t() == dtype::bool_) e[0] = 1;
          else
            for (std::size_t k = 0; k < w; ++k) e[k] = static_cast<std::uint8_t>(g());
        } else if (floating && g() % 4 == 0) {
          e[w - 1] = 0x80;  // -0.0
        }
        bool nz = false;
        for (std::size_t k = 0; k < w; ++k) nz |= (floating && k == w - 1 ? (e[k] & 0x7f) : e[k]) != 0;
        want += nz;
      }
      for (std::size_t off : {0u, 1u}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " density=" + std::to_string(density) + " off=" + std::to_string(off));
        buffer<std::uint8_t> bx(b(), bytes, off * w);
        tally::array_ref x{bx.data(), static_cast<std::int64_t>(n), t()};
        EXPECT_EQ(tally::count_nonzero(x, opt()), want);
        EXPECT_EQ(tally::any(x, opt()), want > 0);
        EXPECT_EQ(tally::all(x, opt()), want == static_cast<std::int64_t>(n));
      }
    }
  }
}

}  // namespace
}  // namespace tt
