// CUDA-specific behaviour: no GPU vs GPU present, asynchronous calls on streams and their
// status word, memory kinds and the automatic backend, and the large (> 2^31 element)
// inputs that need ~26 GB of GPU memory.
#include <algorithm>
#include <limits>

#include "support.hpp"

namespace tt {
namespace {

// ---- with and without a GPU ---------------------------------------------------------------

// Runs only when no GPU is usable (a CPU-only build, or a CUDA build on a machine without a
// GPU): the CUDA backend must then throw errc::no_gpu. On a GPU machine this is skipped and
// GpuPresent.CudaBackendRuns checks the converse.
TEST(NoGpu, CudaBackendThrowsNoGpu) {
  if (tally::cuda_available()) GTEST_SKIP() << "a CUDA GPU is present (see GpuPresent.CudaBackendRuns)";
#if !defined(TALLY_TEST_HAVE_CUDA)
  EXPECT_FALSE(tally::cuda_available()) << "a CPU-only build has no CUDA backend";
#endif
  tally::options o;
  o.backend = backend::cuda;
  std::vector<double> x = {1, 2, 3}, y = {4, 5, 6}, out(3);
  std::vector<std::int64_t> xi = {1, 2, 3};
  const tally::view<const double> vx(x), vy(y);
  const tally::view<double> vo(out);
  EXPECT_TRUE(throws_tally([&] { return tally::sum<double>(vx, o); }, errc::no_gpu));
  EXPECT_TRUE(throws_tally([&] { return tally::sum<std::int64_t>(xi, o); }, errc::no_gpu));
  EXPECT_TRUE(throws_tally([&] { return tally::dot<double>(vx, vy, o); }, errc::no_gpu));
  EXPECT_TRUE(throws_tally([&] { tally::add<double>(vx, vy, vo, o); }, errc::no_gpu));
  // Data of unknown kind: tally finds it is host memory; still no_gpu for the CUDA backend.
  EXPECT_TRUE(throws_tally([&] { return tally::sum<double>({x.data(), 3}, o); }, errc::no_gpu));
  double r = 0;
  EXPECT_TRUE(throws_tally([&] { tally::sum_async<double>({x.data(), 3}, &r); }, errc::no_gpu));
  EXPECT_TRUE(throws_tally([&] { tally::dot_async<double>({x.data(), 3}, {y.data(), 3}, &r); }, errc::no_gpu));
  EXPECT_TRUE(throws_tally([&] { tally::add_async<double>({x.data(), 3}, {y.data(), 3}, {out.data(), 3}); },
                           errc::no_gpu));
  // The automatic backend runs host data on the CPU.
  EXPECT_EQ(tally::sum<double>(vx), 6.0);
  EXPECT_EQ(tally::locate(x.data()), tally::memory::host);
}

TEST(GpuPresent, CudaBackendRuns) {
  if (!runnable(backend::cuda)) GTEST_SKIP() << why_not(backend::cuda);
  EXPECT_TRUE(tally::cuda_available());
  tally::options o;
  o.backend = backend::cuda;
  buffer<double> x(backend::cuda, std::vector<double>{1, 2, 3}), y(backend::cuda, std::vector<double>{4, 5, 6});
  buffer<double> out(backend::cuda, 3, 0.0);
  EXPECT_EQ(tally::locate(x.data()), tally::memory::device);
  EXPECT_EQ(tally::sum<double>(x.in(), o), 6.0);
  EXPECT_EQ(tally::dot<double>(x.in(), y.in(), o), 32.0);
  tally::add<double>(x.in(), y.in(), out.out(), o);
  EXPECT_EQ(out.read(), (std::vector<double>{5, 7, 9}));
}

// ---- CUDA only ----------------------------------------------------------------------------

class CudaOnly : public ::testing::Test {
 protected:
  void SetUp() override { TT_REQUIRE_BACKEND(backend::cuda); }
  static tally::options on(tally::stream_t s) {
    tally::options o;
    o.backend = backend::cuda;
    o.stream = s;
    return o;
  }
};

// (Bodies are compiled only with the CUDA backend; SetUp skips them otherwise.)

// Many asynchronous reductions queued back to back on two streams (each stream has its own
// cached workspace, reused by every launch), then blocking calls on the same streams.
TEST_F(CudaOnly, AsyncOnStreamsSmall) {
#if defined(TALLY_TEST_HAVE_CUDA)
  const std::int64_t n = 300007;
  auto h = ramp<double>(n, 0);
  buffer<double> x(backend::cuda, h);
  buffer<double> res(backend::cuda, 32, -1.0);
  tally::stream_t s1 = cuda::create_stream(), s2 = cuda::create_stream();
  std::vector<std::int64_t> len(32);
  for (int k = 0; k < 32; ++k) {
    len[k] = (n * (k + 1)) / 32 - k;
    tally::sum_async<double>({x.data(), len[k]}, res.data() + k, nullptr, on(k % 2 ? s1 : s2));
  }
  cuda::synchronize(s1);
  cuda::synchronize(s2);
  auto got = res.read();
  for (int k = 0; k < 32; ++k)
    EXPECT_EQ(got[k], static_cast<double>(exact_sum(h.data(), len[k]).value)) << "k=" << k;
  EXPECT_EQ(tally::sum<double>(x.in(), on(s1)), static_cast<double>(exact_sum(h.data(), n).value));
  EXPECT_EQ(tally::sum<double>(x.in(), on(s2)), static_cast<double>(exact_sum(h.data(), n).value));
  cuda::destroy_stream(s1);
  cuda::destroy_stream(s2);
#endif
}

// status_device: 1 and value 0 when the integer result overflows; 0 otherwise.
TEST_F(CudaOnly, AsyncStatusReportsOverflowSmall) {
#if defined(TALLY_TEST_HAVE_CUDA)
  using v64 = std::vector<std::int64_t>;
  const std::int64_t MAX = std::numeric_limits<std::int64_t>::max();
  buffer<std::int64_t> x(backend::cuda, v64{MAX, 1}), y(backend::cuda, v64{std::int64_t(1) << 32, 1});
  buffer<std::int64_t> res(backend::cuda, 1, 42);
  buffer<int> st(backend::cuda, 1, 0);
  tally::sum_async<std::int64_t>(x.in(), res.data(), st.data(), on(nullptr));
  cuda::synchronize(nullptr);
  EXPECT_EQ(st.read()[0], 1) << "sum of [INT64_MAX, 1]";
  EXPECT_EQ(res.read()[0], 0) << "documented: the value written is 0";
  st.write({0});
  tally::dot_async<std::int64_t>({y.data(), 1}, {y.data(), 1}, res.data(), st.data(), on(nullptr));
  cuda::synchronize(nullptr);
  EXPECT_EQ(st.read()[0], 1) << "dot [2^32].[2^32]";
  // A fitting result clears a stale 1.
  tally::sum_async<std::int64_t>({x.data() + 1, 1}, res.data(), st.data(), on(nullptr));
  cuda::synchronize(nullptr);
  EXPECT_EQ(st.read()[0], 0);
  EXPECT_EQ(res.read()[0], 1);
  // add_async: 1 when an element overflows, and it clears a stale 1 otherwise.
  using v32 = std::vector<std::int32_t>;
  buffer<std::int32_t> a(backend::cuda, v32{1, std::numeric_limits<std::int32_t>::max(), 3});
  buffer<std::int32_t> o(backend::cuda, 3, 0);
  tally::add_async<std::int32_t>(a.in(), a.in(), o.out(), st.data(), on(nullptr));
  cuda::synchronize(nullptr);
  EXPECT_EQ(st.read()[0], 1);
  tally::add_async<std::int32_t>({a.data(), 1}, {a.data(), 1}, tally::view<std::int32_t>{o.data(), 1}, st.data(),
                                 on(nullptr));
  cuda::synchronize(nullptr);
  EXPECT_EQ(st.read()[0], 0);
  EXPECT_EQ(o.read()[0], 2);
  // The blocking call turns the same overflow into errc::overflow.
  EXPECT_TRUE(throws_tally([&] { return tally::sum<std::int64_t>(x.in(), on(nullptr)); }, errc::overflow,
                           {"overflow"}));
#endif
}

// The automatic backend follows the memory: device -> CUDA, host -> CPU, both -> error.
TEST_F(CudaOnly, AutomaticBackendAndMemoryKindsSmall) {
#if defined(TALLY_TEST_HAVE_CUDA)
  const std::int64_t n = 5003;
  auto h = ramp<float>(n, 0);
  const float want = exact_as<float>(exact_sum(h.data(), n).value);
  buffer<float> d(backend::cuda, h);
  EXPECT_EQ(tally::sum<float>(d.in()), want) << "device memory, automatic";
  EXPECT_EQ(tally::sum<float>(h), want) << "host memory, automatic";
  EXPECT_TRUE(throws_tally([&] { return tally::dot<float>(d.in(), {h.data(), n}); }, errc::wrong_memory,
                           {"host", "device"}));
  std::vector<float> hout(n);
  EXPECT_TRUE(throws_tally([&] { tally::add<float>(d.in(), d.in(), tally::view<float>{hout.data(), n}); },
                           errc::wrong_memory));

  // Managed memory counts as device memory: the CUDA backend reads it, the CPU one refuses.
  cuda::device_buffer m(n * sizeof(float), cuda::kind::managed);
  std::copy(h.begin(), h.end(), static_cast<float*>(m.get()));
  const tally::view<const float> vm{static_cast<const float*>(m.get()), n};
  EXPECT_EQ(tally::locate(m.get()), tally::memory::device);
  EXPECT_EQ(tally::sum<float>(vm), want) << "managed, automatic";
  EXPECT_EQ(tally::sum<float>(vm, on(nullptr)), want) << "managed, cuda";
  tally::options cpu;
  cpu.backend = backend::cpu;
  EXPECT_TRUE(throws_tally([&] { return tally::sum<float>(vm, cpu); }, errc::wrong_memory));

  // Pinned host memory is host memory: the CPU backend reads it, the CUDA one refuses.
  cuda::device_buffer p(n * sizeof(float), cuda::kind::pinned);
  std::copy(h.begin(), h.end(), static_cast<float*>(p.get()));
  const tally::view<const float> vp{static_cast<const float*>(p.get()), n};
  EXPECT_EQ(tally::locate(p.get()), tally::memory::host);
  EXPECT_EQ(tally::sum<float>(vp), want) << "pinned, automatic";
  EXPECT_EQ(tally::sum<float>(vp, cpu), want) << "pinned, cpu";
  EXPECT_TRUE(throws_tally([&] { return tally::sum<float>(vp, on(nullptr)); }, errc::wrong_memory));
#endif
}

// ---- more than 2^31 elements (GPU only: ~26 GB) -------------------------------------------

class Large : public Backend {};

#if defined(TALLY_TEST_HAVE_CUDA)
#define TT_REQUIRE_GPU_MEMORY(bytes)                                                           \
  do {                                                                                         \
    auto [free_, total_] = cuda::memory_info();                                                \
    if (free_ < (bytes) + (std::size_t(1) << 30))                                              \
      GTEST_SKIP() << "needs " << ((bytes) >> 30) << " GiB of free GPU memory, has " << (free_ >> 30); \
  } while (0)

// Positions to check in an array of n elements: the ends, around 2^31 and 2^32, and random.
std::vector<std::int64_t> sample_positions(std::int64_t n) {
  std::vector<std::int64_t> p = {0, 1, 2, 3, 4, 5, n / 2, n - 5, n - 4, n - 3, n - 2, n - 1};
  for (std::int64_t c : {std::int64_t(1) << 31, std::int64_t(1) << 32})
    for (std::int64_t d = -3; d <= 3; ++d)
      if (c + d >= 0 && c + d < n) p.push_back(c + d);
  std::mt19937_64 g(31);
  for (int i = 0; i < 300; ++i) p.push_back(std::uniform_int_distribution<std::int64_t>(0, n - 1)(g));
  return p;
}

template <class T> T at(const cuda::device_buffer& b, std::int64_t i) {
  T v;
  b.download(&v, static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
  return v;
}
#endif

// out = x + y over 2^31 + 7 floats of 1.0 (3 x 8.6 GB); then sum(out): the float64
// accumulation of 2^31 + 7 twos is exactly 4294967310, whose float32 rounding is returned.
TEST_P(Large, AddFloatsPast2To31) {
#if defined(TALLY_TEST_HAVE_CUDA)
  const std::int64_t n = (std::int64_t(1) << 31) + 7;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  TT_REQUIRE_GPU_MEMORY(3 * bytes);
  const float one = 1.0f, sentinel = -1.0f;
  cuda::device_buffer x(bytes), y(bytes), out(bytes);
  x.fill(0, &one, sizeof one, n);
  y.fill(0, &one, sizeof one, n);
  out.fill(0, &sentinel, sizeof sentinel, n);
  auto* px = static_cast<const float*>(x.get());
  auto* py = static_cast<const float*>(y.get());
  auto* po = static_cast<float*>(out.get());
  tally::add<float>({px, n}, {py, n}, tally::view<float>{po, n}, opt());
  for (std::int64_t i : sample_positions(n)) ASSERT_EQ(at<float>(out, i), 2.0f) << "out[" << i << "]";
  EXPECT_EQ(tally::sum<float>({po, n}, opt()), static_cast<float>(4294967310.0));
  EXPECT_EQ(tally::sum<float>({px, n}, opt()), static_cast<float>(2147483655.0));
  EXPECT_EQ(tally::dot<float>({px, n}, {po, n}, opt()), static_cast<float>(4294967310.0));
  // Misaligned alike (vector body after a scalar head), then differently (scalar path).
  out.fill(0, &sentinel, sizeof sentinel, n);
  tally::add<float>({px + 1, n - 1}, {py + 1, n - 1}, tally::view<float>{po + 1, n - 1}, opt());
  EXPECT_EQ(at<float>(out, 0), sentinel);
  for (std::int64_t i : sample_positions(n))
    if (i > 0) {
      ASSERT_EQ(at<float>(out, i), 2.0f) << "out[" << i << "], x+1";
    }
  out.fill(0, &sentinel, sizeof sentinel, n);
  tally::add<float>({px + 1, n - 3}, {py, n - 3}, tally::view<float>{po + 2, n - 3}, opt());
  EXPECT_EQ(at<float>(out, 1), sentinel);
  EXPECT_EQ(at<float>(out, n - 1), sentinel);
  for (std::int64_t i : sample_positions(n))
    if (i >= 2 && i < n - 1) {
      ASSERT_EQ(at<float>(out, i), 2.0f) << "out[" << i << "], x+1 y out+2";
    }
  EXPECT_EQ(tally::sum<float>({po + 2, n - 3}, opt()), static_cast<float>(2.0 * (n - 3)));
#endif
}

TEST_P(Large, SumInt32OnesPast2To31) {
#if defined(TALLY_TEST_HAVE_CUDA)
  const std::int64_t n = (std::int64_t(1) << 31) + 7;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(std::int32_t);
  TT_REQUIRE_GPU_MEMORY(bytes);
  const std::int32_t one = 1;
  cuda::device_buffer x(bytes);
  x.fill(0, &one, sizeof one, n);
  auto* px = static_cast<const std::int32_t*>(x.get());
  EXPECT_EQ(tally::sum<std::int32_t>({px, n}, opt()), 2147483655LL);
  EXPECT_EQ(tally::dot<std::int32_t>({px, n}, {px, n}, opt()), 2147483655LL);
  EXPECT_EQ(tally::sum<std::int32_t>({px + 1, n - 1}, opt()), 2147483654LL) << "misaligned";
  EXPECT_EQ(tally::dot<std::int32_t>({px + 1, n - 2}, {px, n - 2}, opt()), 2147483653LL) << "misaligned";
#endif
}

TEST_P(Large, SumInt32OnesPast2To32) {
#if defined(TALLY_TEST_HAVE_CUDA)
  const std::int64_t n = (std::int64_t(1) << 32) + 1;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(std::int32_t);
  TT_REQUIRE_GPU_MEMORY(bytes);
  const std::int32_t one = 1;
  cuda::device_buffer x(bytes);
  x.fill(0, &one, sizeof one, n);
  auto* px = static_cast<const std::int32_t*>(x.get());
  EXPECT_EQ(tally::sum<std::int32_t>({px, n}, opt()), 4294967297LL);
#endif
}

// Exact float32 dot over 2^30 + 3 wide-range products: every thread's shared-memory bins
// are flushed into the block superaccumulator at least once (after 2^13 - 64 products);
// the GPU result must equal the CPU backend's bit for bit, and so must the sums.
TEST_P(Large, ExactFloatDotPastBinFlush) {
#if defined(TALLY_TEST_HAVE_CUDA)
  const std::int64_t n = (std::int64_t(1) << 30) + 3;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  TT_REQUIRE_GPU_MEMORY(2 * bytes);
  std::vector<float> hx(static_cast<std::size_t>(n)), hy(static_cast<std::size_t>(n));
  auto gen = [](std::uint64_t z) {  // splitmix64: random sign, mantissa, exponent in [-60, 60]
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    double m = 1.0 + double(z >> 12) * 0x1.0p-52;
    return static_cast<float>((z & 1 ? -1.0 : 1.0) * std::ldexp(m, int((z >> 1) % 121) - 60));
  };
#pragma omp parallel for
  for (std::int64_t i = 0; i < n; ++i) {
    hx[static_cast<std::size_t>(i)] = gen(static_cast<std::uint64_t>(i));
    hy[static_cast<std::size_t>(i)] = gen(static_cast<std::uint64_t>(i) + (std::uint64_t(1) << 40));
  }
  cuda::device_buffer x(bytes), y(bytes);
  x.upload(0, hx.data(), bytes);
  y.upload(0, hy.data(), bytes);
  auto* px = static_cast<const float*>(x.get());
  auto* py = static_cast<const float*>(y.get());
  tally::options cpu;
  cpu.backend = backend::cpu;
  EXPECT_TRUE(same_bits(tally::dot<float>({px, n}, {py, n}, opt()), tally::dot<float>(hx, hy, cpu)));
  EXPECT_TRUE(same_bits((tally::dot<float, double>({px, n}, {py, n}, opt())), (tally::dot<float, double>(hx, hy, cpu))));
  EXPECT_TRUE(same_bits(tally::sum<float>({px, n}, opt()), tally::sum<float>(hx, cpu)));
#endif
}

// Max and argmax past 2^31 and 2^32 elements (64-bit indices in the indexed kernel): ones
// with larger values planted near 2^31 and at the end; the first of two equal maxima wins.
TEST_P(Large, ArgmaxPast2To32) {
#if defined(TALLY_TEST_HAVE_CUDA)
  const std::int64_t n = (std::int64_t(1) << 32) + 1;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  TT_REQUIRE_GPU_MEMORY(bytes);
  const float one = 1.0f, big = 7.0f, bigger = 9.0f, tiny = -5.0f;
  cuda::device_buffer x(bytes);
  x.fill(0, &one, sizeof one, n);
  auto put_at = [&](std::int64_t i, const float& v) { x.upload(static_cast<std::size_t>(i) * sizeof(float), &v, sizeof v); };
  put_at((std::int64_t(1) << 31) + 3, big);
  put_at(n - 1, bigger);
  put_at((std::int64_t(1) << 32) - 1, bigger);
  put_at((std::int64_t(1) << 31) - 2, tiny);
  auto* px = static_cast<const float*>(x.get());
  EXPECT_EQ(tally::argmax<float>({px, n}, opt()), (std::int64_t(1) << 32) - 1);
  EXPECT_EQ(tally::max<float>({px, n}, opt()), bigger);
  EXPECT_EQ(tally::argmin<float>({px, n}, opt()), (std::int64_t(1) << 31) - 2);
  EXPECT_EQ(tally::argmax<float>({px, (std::int64_t(1) << 31) + 4}, opt()), (std::int64_t(1) << 31) + 3);
  EXPECT_EQ(tally::argmax<float>({px + 1, n - 1}, opt()), (std::int64_t(1) << 32) - 2) << "misaligned";
#endif
}

INSTANTIATE_TEST_SUITE_P(Gpu, Large, ::testing::Values(backend::cuda),
                         [](const auto& info) { return param_name(info); });

}  // namespace
}  // namespace tt
