// bool data whose true bytes are not 1. NumPy arrays made with .view(bool) or frombuffer, and
// any caller of the type-erased API, can hand bool elements holding bytes such as 2, 128 or
// 255; NumPy reads any nonzero byte as true, and so does the shape layer. Before, the 1-D
// operations read them as C++ bool and added the raw bytes: the sum of {255, 0, 255, 0} was
// 510, count_nonzero 510, its mean 127.5 and its var NaN. Each operation on every backend,
// against the same data with its bytes made 0 or 1.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "support.hpp"

namespace tt {
namespace {

using tally::array_ref;

class BoolBytes : public Backend {};
INSTANTIATE_TEST_SUITE_P(Backends, BoolBytes, ::testing::Values(backend::cpu, backend::cuda),
                         [](const auto& info) { return param_name(info); });

std::vector<std::uint8_t> bytes_of(std::size_t n, unsigned seed) {
  static const std::uint8_t kTrue[] = {1, 2, 128, 255, 17, 64};
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned h = static_cast<unsigned>(i * 2654435761u + seed);
    v[i] = (h >> 7) % 3 == 0 ? 0 : kTrue[(h >> 11) % 6];
  }
  return v;
}

TEST_P(BoolBytes, AnyNonzeroByteIsTrue) {
  for (std::size_t n : {std::size_t(37), std::size_t(4099), std::size_t(200003)}) {  // (past the CPU threads' threshold)
    for (std::size_t offset : {std::size_t(0), std::size_t(1)}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", offset " + std::to_string(offset));
      const std::vector<std::uint8_t> hx = bytes_of(n, 3), hy = bytes_of(n, 11);
      buffer<std::uint8_t> bx(b(), hx, offset), by(b(), hy, offset);
      const array_ref x{bx.data(), bx.size(), dtype::bool_}, y{by.data(), by.size(), dtype::bool_};
      std::int64_t count = 0, both = 0, first_true = -1, first_false = -1;
      for (std::size_t i = 0; i < n; ++i) {
        const bool t = hx[i] != 0;
        count += t;
        both += t && hy[i] != 0;
        if (t && first_true < 0) first_true = static_cast<std::int64_t>(i);
        if (!t && first_false < 0) first_false = static_cast<std::int64_t>(i);
      }
      const auto nn = static_cast<std::int64_t>(n);
      std::int64_t s = -1;
      tally::reduce(tally::reduce_op::sum, x, {}, &s, dtype::int64, opt());
      EXPECT_EQ(s, count) << "sum";
      std::int64_t d = -1;
      tally::reduce(tally::reduce_op::dot, x, y, &d, dtype::int64, opt());
      EXPECT_EQ(d, both) << "dot";
      double mean = 0, var = 0;
      tally::mean(x, &mean, dtype::float64, opt());
      EXPECT_EQ(mean, static_cast<double>(count) / static_cast<double>(nn)) << "mean (both exact integers: one rounding)";
      tally::var(x, 0, false, &var, dtype::float64, opt());
      EXPECT_EQ(var, static_cast<double>(count * (nn - count)) / static_cast<double>(nn * nn)) << "var = c (n - c) / n^2";
      EXPECT_EQ(tally::count_nonzero(x, opt()), count);
      EXPECT_TRUE(tally::any(x, opt()));
      EXPECT_FALSE(tally::all(x, opt()));
      for (auto op : {tally::extreme_op::min, tally::extreme_op::max}) {
        std::uint8_t value = 7;
        std::int64_t index = -2;
        tally::extreme(op, tally::nan_policy::propagate, x, &value, &index, opt());
        const bool mx = op == tally::extreme_op::max;
        EXPECT_EQ(value, mx ? 1 : 0) << (mx ? "max" : "min") << ": the value as a bool's byte";
        EXPECT_EQ(index, mx ? first_true : first_false) << (mx ? "argmax" : "argmin") << ": the first of equal values";
      }
      {
        std::uint8_t lo = 7, hi = 7;
        std::int64_t ilo = -2, ihi = -2;
        tally::minmax(tally::nan_policy::propagate, x, &lo, &ilo, &hi, &ihi, opt());
        EXPECT_EQ(lo, 0) << "minmax: the min as a bool's byte";
        EXPECT_EQ(hi, 1) << "minmax: the max as a bool's byte";
        EXPECT_EQ(ilo, first_false) << "minmax: the first false";
        EXPECT_EQ(ihi, first_true) << "minmax: the first true";
      }
      buffer<std::uint8_t> bo(b(), n, std::uint8_t(9), offset);
      tally::add(x, y, {bo.data(), bo.size(), dtype::bool_}, opt());
      const std::vector<std::uint8_t> sum = bo.read();
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += sum[i] != ((hx[i] != 0 || hy[i] != 0) ? 1 : 0);
      EXPECT_EQ(wrong, 0u) << "add: logical or, written as 0 or 1";
      // The shape layer reads the same elements the same way.
      std::int64_t strided = -1;
      tally::reduce(tally::reduce_op::sum, tally::strided_ref{bx.data(), nn, 1, dtype::bool_}, &strided, dtype::int64, opt());
      EXPECT_EQ(strided, count) << "sum (strided)";
    }
  }
  // All true, none of the bytes 1.
  buffer<std::uint8_t> all(b(), std::vector<std::uint8_t>{2, 255, 128, 4, 8, 16, 32, 64, 3});
  EXPECT_TRUE(tally::all({all.data(), all.size(), dtype::bool_}, opt()));
  std::int64_t s = -1;
  tally::reduce(tally::reduce_op::sum, {all.data(), all.size(), dtype::bool_}, {}, &s, dtype::int64, opt());
  EXPECT_EQ(s, 9);
}

}  // namespace
}  // namespace tt
