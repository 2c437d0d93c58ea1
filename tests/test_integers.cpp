// Integer accumulation on every backend: exact 128/192-bit accumulators, checked narrowing to
// int64, errc::overflow exactly when the exact result does not fit, checked element-wise add.
#include <limits>

#include "support.hpp"

namespace tt {
namespace {

constexpr std::int32_t I32_MAX = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t I32_MIN = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t I64_MAX = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t I64_MIN = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t P(int k) { return std::int64_t(1) << k; }

using v32 = std::vector<std::int32_t>;
using v64 = std::vector<std::int64_t>;

TEST_P(Backend, Int32SumsPastInt32) {
  EXPECT_EQ(sum(v32(4, 1 << 30)), 4294967296LL);
  v32 ramp(100000);
  for (int i = 0; i < 100000; ++i) ramp[i] = i;
  EXPECT_EQ(sum(ramp), 4999950000LL);
  // Partial sums pass 2^31 (and -2^31) in every order: 5000 maxima, then 5000 minima, then 7.
  v32 x(5000, I32_MAX);
  x.insert(x.end(), 5000, I32_MIN);
  x.push_back(7);
  EXPECT_EQ(sum(x), 5000LL * I32_MAX + 5000LL * I32_MIN + 7);
  EXPECT_EQ(sum(v32(70001, I32_MIN)), 70001LL * I32_MIN);
  EXPECT_EQ(sum(v32(70001, I32_MAX)), 70001LL * I32_MAX);
  // int32 dot: products up to 2^62, exact sums.
  EXPECT_EQ(dot(v32{I32_MIN}, v32{I32_MIN}), P(62));
  EXPECT_EQ(dot(v32{I32_MIN, I32_MIN, 1}, v32{I32_MIN, I32_MIN, -1}), I64_MAX);
  EXPECT_TRUE(throws_tally([&] { return dot(v32{I32_MIN, I32_MIN}, v32{I32_MIN, I32_MIN}); },
                           errc::overflow, {"overflow"}))
      << "2^63 does not fit int64";
  EXPECT_EQ(dot(v32{I32_MIN, I32_MIN}, v32{I32_MIN, I32_MAX}), P(62) + std::int64_t(I32_MIN) * I32_MAX);
}

TEST_P(Backend, Int64SumOverflow) {
  EXPECT_TRUE(throws_tally([&] { return sum(v64{I64_MAX, 1}); }, errc::overflow, {"overflow"}));
  EXPECT_TRUE(throws_tally([&] { return sum(v64{I64_MIN, -1}); }, errc::overflow, {"overflow"}));
  EXPECT_TRUE(throws_tally([&] { return sum(v64(3, I64_MAX)); }, errc::overflow, {"overflow"}));
  // The accumulation is exact, so a transient excursion past int64 is not an error.
  EXPECT_EQ(sum(v64{I64_MAX, 1, -1}), I64_MAX);
  EXPECT_EQ(sum(v64{I64_MIN, -1, 1}), I64_MIN);
  EXPECT_EQ(sum(v64{I64_MAX, I64_MAX, I64_MIN, I64_MIN, 5}), -2 + 5);
  EXPECT_EQ(sum(v64{I64_MIN}), I64_MIN);
  EXPECT_EQ(sum(v64{I64_MAX}), I64_MAX);
  // Alternating maxima and minima over many chunks and threads: every pair adds -1.
  for (std::int64_t n : {70000, 70001, 1000001}) {
    v64 x(n);
    for (std::int64_t i = 0; i < n; ++i) x[i] = i % 2 ? I64_MIN : I64_MAX;
    EXPECT_EQ(sum(x), n % 2 ? I64_MAX - (n - 1) / 2 : -n / 2) << "n=" << n;
  }
  // 2^20 maxima, then 2^20 minima: the partial sums reach 2^83.
  v64 y(1 << 20, I64_MAX);
  y.insert(y.end(), 1 << 20, I64_MIN);
  EXPECT_EQ(sum(y), -(std::int64_t(1) << 20));
  y.push_back(I64_MAX);
  y.push_back(I64_MAX);
  EXPECT_TRUE(throws_tally([&] { return sum(y); }, errc::overflow, {"overflow"}));
}

TEST_P(Backend, Int64DotOverflow) {
  EXPECT_TRUE(throws_tally([&] { return dot(v64{P(32)}, v64{P(32)}); }, errc::overflow, {"overflow"}))
      << "2^64";
  EXPECT_TRUE(throws_tally([&] { return dot(v64{P(31)}, v64{P(32)}); }, errc::overflow, {"overflow"}))
      << "2^63";
  EXPECT_EQ(dot(v64{-P(31)}, v64{P(32)}), I64_MIN) << "-2^63 fits";
  EXPECT_EQ(dot(v64{I64_MIN}, v64{1}), I64_MIN);
  EXPECT_EQ(dot(v64{I64_MAX, I64_MIN}, v64{1, 0}), I64_MAX);
}

// Products up to 2^126 whose running sum leaves 128 bits and comes back:
// 16 * (-2^63 * -2^63) = +2^130, then 32 * (-2^63 * 2^62) = -2^130, then the tail.
// With the positive products first, both backends form a partial sum >= 2^127 (the CPU's
// lane 0 adds elements 0 and 8; a CUDA thread adds the 2 elements of its first vector).
v64 xs_big(const v64& tail_x) {
  v64 x(16 + 32, I64_MIN);
  x.insert(x.end(), tail_x.begin(), tail_x.end());
  return x;
}
v64 ys_big(const v64& tail_y) {
  v64 y(16, I64_MIN);
  y.insert(y.end(), 32, P(62));
  y.insert(y.end(), tail_y.begin(), tail_y.end());
  return y;
}

TEST_P(Backend, Int64DotBeyond2To127) {
  EXPECT_EQ(dot(xs_big({3}), ys_big({5})), 15);
  EXPECT_EQ(dot(xs_big({I64_MAX}), ys_big({1})), I64_MAX);
  EXPECT_EQ(dot(xs_big({I64_MIN}), ys_big({1})), I64_MIN);
  EXPECT_TRUE(throws_tally([&] { return dot(xs_big({I64_MAX, 1}), ys_big({1, 1})); }, errc::overflow))
      << "2^63 after the excursion";
  // Negative first: 32 * (-2^63 * (2^63 - 1)) = -2^131 + 2^68 (the CPU's lane 0 and the
  // first CUDA warp reach -2^128 + ...), then 32 * 2^126 = 2^131, then -2^68 and -21.
  {
    v64 x(64, I64_MIN), y(32, I64_MAX);
    y.insert(y.end(), 32, I64_MIN);
    x.insert(x.end(), {P(34), -7});
    y.insert(y.end(), {-P(34), 3});
    EXPECT_EQ(dot(x, y), -21);
  }
  // Exact results whose low 64 (or 128) bits look like a small int64 but that are far outside:
  // 4 * 2^126 + 5 = 2^128 + 5, 2^64 + 5, -2^128 + 5, 2^130.
  EXPECT_TRUE(throws_tally([&] { return dot(v64{I64_MIN, I64_MIN, I64_MIN, I64_MIN, 5},
                                            v64{I64_MIN, I64_MIN, I64_MIN, I64_MIN, 1}); },
                           errc::overflow))
      << "2^128 + 5";
  EXPECT_TRUE(throws_tally([&] { return dot(v64{P(32), 5}, v64{P(32), 1}); }, errc::overflow)) << "2^64 + 5";
  EXPECT_TRUE(throws_tally([&] { return dot(v64(8, I64_MIN), v64(8, P(62))); }, errc::overflow))
      << "-2^128";
  {
    v64 x(8, I64_MIN), y(8, P(62));
    x.push_back(5);
    y.push_back(1);
    EXPECT_TRUE(throws_tally([&] { return dot(x, y); }, errc::overflow)) << "-2^128 + 5";
  }
  EXPECT_TRUE(throws_tally([&] { return dot(v64(16, I64_MIN), v64(16, I64_MIN)); }, errc::overflow))
      << "2^130";
  // A long version: 4096 products of 2^126, then 8192 of -2^125, spread over chunks/blocks.
  {
    v64 x(4096 + 8192, I64_MIN), y(4096, I64_MIN);
    y.insert(y.end(), 8192, P(62));
    x.push_back(I64_MIN);
    y.push_back(1);
    EXPECT_EQ(dot(x, y), I64_MIN);
  }
}

TEST_P(Backend, IntegerAddOverflow) {
  auto b32 = [&](v32 x, v32 y) {
    auto bx = put(x), by = put(y);
    buffer<std::int32_t> bo(b(), x.size(), 0);
    auto r = throws_tally([&] { tally::add<std::int32_t>(bx.in(), by.in(), bo.out(), opt()); },
                          errc::overflow, {"overflow"});
    return std::make_pair(r, bo.read());
  };
  auto b64 = [&](v64 x, v64 y) {
    auto bx = put(x), by = put(y);
    buffer<std::int64_t> bo(b(), x.size(), 0);
    auto r = throws_tally([&] { tally::add<std::int64_t>(bx.in(), by.in(), bo.out(), opt()); },
                          errc::overflow, {"overflow"});
    return std::make_pair(r, bo.read());
  };
  {
    auto [r, out] = b32({I32_MAX}, {1});
    EXPECT_TRUE(r);
    EXPECT_EQ(out[0], I32_MIN) << "documented: out holds the wrapped values";
  }
  EXPECT_TRUE(b32({I32_MIN}, {-1}).first);
  EXPECT_TRUE(b32({0, 0, I32_MAX}, {0, 0, I32_MAX}).first);
  {
    auto [r, out] = b64({I64_MAX}, {1});
    EXPECT_TRUE(r);
    EXPECT_EQ(out[0], I64_MIN) << "documented: out holds the wrapped values";
  }
  EXPECT_TRUE(b64({I64_MIN}, {I64_MIN}).first);
  EXPECT_TRUE(b64({-1, I64_MIN}, {0, -1}).first);
  // One overflowing element among many: in the head, the vector body and the tail.
  for (std::int64_t at : {0, 1, 4999, 9998, 9999}) {
    SCOPED_TRACE("overflow at " + std::to_string(at));
    v32 x(10000, 5), y(10000, -3);
    x[at] = I32_MAX;
    y[at] = 2;
    EXPECT_TRUE(b32(x, y).first);
    v64 x64(10000, 5), y64(10000, -3);
    x64[at] = I64_MIN;
    y64[at] = -2;
    EXPECT_TRUE(b64(x64, y64).first);
  }
  // The extremes that do fit.
  EXPECT_EQ(add(v32{I32_MAX, I32_MIN, I32_MAX}, v32{0, 0, I32_MIN}), (v32{I32_MAX, I32_MIN, -1}));
  EXPECT_EQ(add(v64{I64_MAX, I64_MIN, I64_MAX}, v64{0, 0, I64_MIN}), (v64{I64_MAX, I64_MIN, -1}));
}

INSTANTIATE_TEST_SUITE_P(Backends, Backend, ::testing::Values(backend::cpu, backend::cuda),
                         [](const auto& info) { return param_name(info); });

}  // namespace
}  // namespace tt
