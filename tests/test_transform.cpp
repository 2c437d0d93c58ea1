// tally::transform_reduce (CPU header) and tally::cuda::transform_reduce (CUDA header) with
// user functors: integer sum of squares, a NaN-propagating max-abs, a count, and a struct
// accumulator (count and minimum); exact combines, so both backends must give the plain
// loop's value exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support.hpp"
#include "tally/transform_reduce.hpp"
#include "transform_functors.hpp"

namespace tt {
namespace {

class Transform : public Backend {
 protected:
  template <class T, class Acc, class Tr, class Co> Acc run(const buffer<T>& x, Acc id, Tr tr, Co co) const {
    if (b() == backend::cuda) {
#if defined(TALLY_TEST_HAVE_CUDA)
      return tr::cuda_transform_reduce<T>(x.in(), id, tr, co);
#endif
    }
    return tally::transform_reduce<T>(x.in(), id, tr, co);
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, Transform, ::testing::Values(backend::cpu, backend::cuda),
                         [](const auto& info) { return param_name(info); });

TEST_P(Transform, UserFunctorsGiveTheExactAnswer) {
  std::mt19937_64 g(5);
  for (std::size_t n : {0u, 1u, 255u, 4097u, 16385u, 1000003u}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    std::vector<std::int32_t> xi(n);
    std::vector<double> xd(n);
    std::vector<float> xf(n);
    for (std::size_t i = 0; i < n; ++i) {
      xi[i] = static_cast<std::int32_t>(g() % ((1u << 21) + 1)) - (1 << 20);  // squares sum below 2^61
      xd[i] = std::ldexp(double(g() >> 11) * 0x1.0p-53 - 0.5, int(g() % 200) - 100);
      xf[i] = static_cast<float>(xd[i]);
    }
    i128 sq = 0;
    std::int64_t pos = 0;
    double mx = 0;
    std::int32_t least = std::numeric_limits<std::int32_t>::max();
    for (std::size_t i = 0; i < n; ++i) {
      sq += static_cast<i128>(xi[i]) * xi[i];
      pos += xf[i] > 0;
      mx = std::max(mx, std::fabs(xd[i]));
      least = std::min(least, xi[i]);
    }
    auto bi = put(xi, 1);
    auto bd = put(xd, 1);
    auto bf = put(xf);
    if (sq <= INT64_MAX) {
      EXPECT_EQ(run(bi, std::int64_t(0), tr::square64{}, tr::plus64{}), static_cast<std::int64_t>(sq));
    }
    EXPECT_EQ(run(bd, 0.0, tr::abs_of{}, tr::max_nan{}), mx);
    EXPECT_EQ(run(bf, std::int64_t(0), tr::is_positive{}, tr::plus64{}), pos);
    tr::count_min cm = run(bi, tr::count_min{0, std::numeric_limits<std::int32_t>::max()}, tr::to_count_min{}, tr::merge_count_min{});
    EXPECT_EQ(cm.count, static_cast<std::int64_t>(n));
    EXPECT_EQ(cm.least, least);
  }
  // Sum of squares past int32 and 2^53: 2^20 elements of 46341 (46341^2 > 2^31).
  std::vector<std::int32_t> big(1 << 20, 46341);
  EXPECT_EQ(run(put(big), std::int64_t(0), tr::square64{}, tr::plus64{}), std::int64_t(46341) * 46341 * (1 << 20));
  // NaN in the middle propagates through the max combine.
  std::vector<double> v(100001, 1.0);
  v[50000] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(run(put(v), 0.0, tr::abs_of{}, tr::max_nan{})));
}

TEST_P(Transform, BadInput) {
  // Empty input gives the identity (no launch error, no exception).
  EXPECT_EQ(run(buffer<double>(b(), std::vector<double>{}), -7.0, tr::abs_of{}, tr::max_nan{}), -7.0);
  auto bad = [&](tally::view<const double> x) {
    if (b() == backend::cuda) {
#if defined(TALLY_TEST_HAVE_CUDA)
      return tr::cuda_transform_reduce<double>(x, 0.0, tr::abs_of{}, tr::max_nan{});
#endif
    }
    return tally::transform_reduce<double>(x, 0.0, tr::abs_of{}, tr::max_nan{});
  };
  EXPECT_TRUE(throws_tally([&] { return bad({nullptr, 3}); }, errc::null_pointer, {"null pointer"}));
  EXPECT_TRUE(throws_tally([&] { return bad({nullptr, -1}); }, errc::invalid_argument, {"negative"}));
  // The other side's memory: device data to the CPU version, host data to the CUDA version.
  if (tally::cuda_available()) {
    buffer<double> other(b() == backend::cuda ? backend::cpu : backend::cuda, std::vector<double>{1.0, 2.0});
    EXPECT_TRUE(throws_tally([&] { return bad(other.in()); }, errc::wrong_memory));
  }
  // The CUDA version: device data at an address that is not a multiple of 8 (a float64 view at
  // byte 4 of a byte buffer) is refused before any launch (a misaligned load faults and loses
  // the context); the next good call still runs.
  if (b() == backend::cuda) {
    std::vector<std::uint8_t> bytes(64, 0);
    const double three = -3.0;
    std::memcpy(bytes.data() + 4, &three, 8);
    buffer<std::uint8_t> raw(backend::cuda, bytes);
    const auto* x4 = reinterpret_cast<const double*>(raw.data() + 4);
    EXPECT_TRUE(throws_tally([&] { return bad({x4, 3}); }, errc::invalid_argument, {"x", "not a multiple"}));
    EXPECT_EQ(bad(buffer<double>(b(), std::vector<double>{1.0, -2.0}).in()), 2.0);
  }
}

// Before: with OpenMP, whichever failing chunk reached the critical section first supplied the
// exception, so two failing elements in different chunks gave either message from run to run.
// Now it is the lowest chunk's, as a serial loop would throw.
TEST(TransformHost, TheFirstChunksExceptionPropagates) {
  constexpr std::int64_t C = tally::detail::kTransformChunk;
  std::vector<double> x(static_cast<std::size_t>(16 * C), 1.0);
  x[static_cast<std::size_t>(11 * C + 5)] = -11.0;  // (a later chunk, most often reached first by another thread)
  x[static_cast<std::size_t>(3 * C + 7)] = -3.0;
  auto checked = [](double v) {
    if (v < 0) throw std::runtime_error(std::to_string(static_cast<int>(v)));
    return v;
  };
  auto plus = [](double a, double b) { return a + b; };
  for (int rep = 0; rep < 20; ++rep) {
    try {
      (void)tally::transform_reduce<double>(x, 0.0, checked, plus);
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "-3") << "repetition " << rep;
    }
  }
}

}  // namespace
}  // namespace tt
