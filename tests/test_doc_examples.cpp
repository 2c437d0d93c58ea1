// The C++ examples of README.md and of the public headers' comments, as written there (the
// lines between "example:" and "end of example" are copied verbatim, with the data the text
// elides as `...` filled in; around them, the variables the text leaves to the reader),
// compiled and run on host data (the CPU backend). A change that
// breaks one of those examples breaks this file. (The MPI examples run in tests/mpi; the
// NCCL and CUDA ones need a GPU: here only what compiles without one.)
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "tally/nccl.hpp"  // (needs no NCCL header: comm_t is an opaque pointer)
#include "tally/state.hpp"
#include "tally/tally.hpp"
#include "tally/transform_reduce.hpp"

namespace {

std::vector<float> load() { return std::vector<float>(16777217, 1.0f); }

TEST(DocExamples, ReadmeHostSum) {
  // example: README.md
  std::vector<float> x = load();               // host memory: CPU backend
  float s = tally::sum<float>(x);
  // end of example
  EXPECT_EQ(s, 16777216.0f);  // 2^24 + 1 rounds to 2^24 in float32 (ties to even)
  EXPECT_EQ((tally::sum<float, double>(x)), 16777217.0);
}

TEST(DocExamples, ReadmeDotOnHostPointers) {
  // README's dot with the automatic backend: host pointers run on the CPU backend.
  std::vector<double> a = {1, 2, 3}, b = {4, 5, 6};
  const double* d_a = a.data();
  const double* d_b = b.data();
  std::int64_t n = 3;
  tally::stream_t stream = nullptr;
  // example: README.md
  double d = tally::dot<double>({d_a, n}, {d_b, n}, {tally::backend::automatic, stream});
  // end of example
  EXPECT_EQ(d, 32.0);
}

TEST(DocExamples, TallyHeader) {
  std::vector<double> vx = {0.1, 0.2, 0.3}, vy = {1, 1, 1};
  const double* px = vx.data();
  const double* py = vy.data();
  std::int64_t n = 3;
  // example: include/tally/tally.hpp
  std::vector<float> x = {1.0f, 2.0f, 3.5f};
  float s = tally::sum<float>(x);                   // CPU backend (host data)
  double d = tally::dot<double>({px, n}, {py, n});  // CUDA backend if px, py are device memory
  // end of example
  EXPECT_EQ(s, 6.5f);
  EXPECT_EQ(d, 0.6);  // the exact sum of the three doubles, rounded once (left to right: 0.6000000000000001)
}

TEST(DocExamples, StateHeader) {
  // example: include/tally/state.hpp
  std::vector<double> part_a = {1e16, 0.1}, part_b = {-1e16, 0.2};             // (or views of device memory)
  tally::exact_state a = tally::partial_sum<double>(part_a);   // any backend
  tally::exact_state b = tally::partial_sum<double>(part_b);
  double s = tally::round<double>(tally::merge(a, b));  // == tally::sum<double>(a ++ b), bitwise
  // end of example
  std::vector<double> whole = {1e16, 0.1, -1e16, 0.2};
  EXPECT_EQ(s, tally::sum<double>(whole));
  EXPECT_EQ(s, 0.30000000000000004);
}

// example: include/tally/transform_reduce.hpp
  struct square { TALLY_HD std::int64_t operator()(std::int32_t v) const { return std::int64_t(v) * v; } };
  struct plus   { TALLY_HD std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; } };
// end of example

TEST(DocExamples, TransformReduceHeader) {
  std::vector<std::int32_t> x(100000);
  for (std::int32_t i = 0; i < 100000; ++i) x[static_cast<std::size_t>(i)] = i - 50000;
  // example: include/tally/transform_reduce.hpp
  std::int64_t s = tally::transform_reduce<std::int32_t>(x, std::int64_t(0), square{}, plus{});
  // end of example
  std::int64_t want = 0;
  for (std::int32_t v : x) want += std::int64_t(v) * v;
  EXPECT_EQ(s, want);
}

TEST(DocExamples, ShapedHeaderStridedViews) {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const float* p = v.data();
  std::int64_t n = 12, k = 5, rows = 3, cols = 4, j = 1;
  // tally/shaped.hpp: "every k-th element: {p, (n + k - 1) / k, k}; column j of a row-major
  // (rows, cols) matrix: {p + j, rows, cols}"
  EXPECT_EQ(tally::sum_strided<float>({p, (n + k - 1) / k, k}), 0.0f + 5.0f + 10.0f);
  EXPECT_EQ(tally::sum_strided<float>({p + j, rows, cols}), 1.0f + 5.0f + 9.0f);
}

TEST(DocExamples, NcclHeaderPartLists) {
  // The one-process form's list of parts (include/tally/nccl.hpp, docs/distributed.md): built
  // here with null communicators and host data, not passed to NCCL. With `y = {}` as its
  // default member initializer, tally::nccl::part made GCC 12.2 stop with an internal
  // compiler error on exactly this line.
  static const double data0[2] = {1, 2}, data1[3] = {3, 4, 5};
  const double* d0 = data0;
  const double* d1 = data1;
  std::int64_t n0 = 2, n1 = 3;
  tally::nccl::comm_t comms[2] = {nullptr, nullptr};
  tally::stream_t s0 = nullptr, s1 = nullptr;
  // example: include/tally/nccl.hpp
  std::vector<tally::nccl::part<double>> parts = {{comms[0], {d0, n0}, s0}, {comms[1], {d1, n1}, s1}};
  // end of example
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].x.data, d1);
  EXPECT_EQ(parts[1].x.size, 3);
  EXPECT_EQ(parts[0].y.data, nullptr);  // y: empty unless a dot product gives it
  EXPECT_EQ(parts[0].y.size, 0);
  tally::nccl::part<float> one{};
  EXPECT_EQ(one.y.size, 0);
  EXPECT_EQ(one.stream, nullptr);
}

}  // namespace
