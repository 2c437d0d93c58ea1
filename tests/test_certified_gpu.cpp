// Exact mode on the GPU with and without the certified first pass (src/cuda/certified.cuh):
// the same bits either way, and the cpu backend's; the certificate holds where it should
// (so the fast path really runs) and fails where it must (ties, far-apart cancellation,
// overflow, specials: the gated exact kernel then writes the result), for blocking and
// stream-ordered calls, sums, dots, means, L2 norms, variances and standard deviations.
// CUDA builds only; skipped without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "backends.hpp"
#include "cuda/tuning.hpp"
#include "device_buffer.hpp"
#include "support.hpp"

namespace tt {
namespace {

namespace tn = tally::cuda::tuning;

struct certified_switch {  // restores the defaults when the test ends
  ~certified_switch() {
    tn::set_exact_certified(true);
    tn::set_certified_variant(0);
    tn::set_var_one_pass(true);
  }
};

template <class T> std::vector<T> make(std::int64_t n, int kind, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(n));
  auto wide = [&] { return (g() & 1 ? -1.0 : 1.0) * std::ldexp(1.0 + u(g), static_cast<int>(g() % 121) - 60); };
  for (std::int64_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0: v[i] = static_cast<T>(u(g)); break;
      case 1: v[i] = static_cast<T>(wide()); break;
      case 2:  // adjacent pairs (a, -a + tiny)
        v[i] = i % 2 == 0 ? static_cast<T>(wide()) : static_cast<T>(-static_cast<T>(v[i - 1]) + static_cast<T>(u(g) * 0x1p-93));
        break;
      default: v[i] = static_cast<T>(wide()); break;
    }
  }
  if (kind == 3) {  // the pairs, shuffled: cancellation far apart (the certificate may fail)
    for (std::int64_t i = 1; i < n; i += 2) v[i] = static_cast<T>(-v[i - 1]);
    std::shuffle(v.begin(), v.end(), g);
  }
  return v;
}

template <class T, class Out> struct results {
  Out sum, dot, mean, norm, sum_async, var, std;
};

template <class T, class Out>
results<T, Out> run(const std::vector<T>& x, const std::vector<T>& y, std::size_t offset, tally::backend b) {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  results<T, Out> r{};
  tally::options o;
  o.backend = b;
  if (b == tally::backend::cpu) {
    tally::view<const T> vx{x.data(), n, tally::memory::host}, vy{y.data(), n, tally::memory::host};
    r.sum = r.sum_async = tally::sum<T, Out>(vx, o);
    r.dot = tally::dot<T, Out>(vx, vy, o);
    r.mean = n ? tally::mean<T, Out>(vx, o) : Out(0);
    r.norm = tally::norm2<T, Out>(vx, o);
    r.var = n > 1 ? tally::var<T, Out>(vx, 1, o) : Out(0);
    r.std = n ? tally::std_dev<T, Out>(vx, 0, o) : Out(0);
    return r;
  }
  const std::size_t bytes = (x.size() + offset) * sizeof(T) + 64;
  cuda::device_buffer dx(bytes), dy(bytes), dr(64);
  if (n) {
    dx.upload(offset * sizeof(T), x.data(), x.size() * sizeof(T));
    dy.upload(offset * sizeof(T), y.data(), y.size() * sizeof(T));
  }
  const T* px = reinterpret_cast<const T*>(static_cast<char*>(dx.get()) + offset * sizeof(T));
  const T* py = reinterpret_cast<const T*>(static_cast<char*>(dy.get()) + offset * sizeof(T));
  tally::view<const T> vx{px, n, tally::memory::device}, vy{py, n, tally::memory::device};
  r.sum = tally::sum<T, Out>(vx, o);
  r.dot = tally::dot<T, Out>(vx, vy, o);
  r.mean = n ? tally::mean<T, Out>(vx, o) : Out(0);
  r.norm = tally::norm2<T, Out>(vx, o);
  r.var = n > 1 ? tally::var<T, Out>(vx, 1, o) : Out(0);
  r.std = n ? tally::std_dev<T, Out>(vx, 0, o) : Out(0);
  tally::sum_async<T, Out>(vx, static_cast<Out*>(dr.get()), nullptr, o);
  dr.download(&r.sum_async, 0, sizeof(Out));
  return r;
}

template <class T, class Out>
::testing::AssertionResult same_results(const results<T, Out>& a, const results<T, Out>& b) {
  for (auto [p, q, what] : {std::tuple{a.sum, b.sum, "sum"}, {a.dot, b.dot, "dot"}, {a.mean, b.mean, "mean"},
                            {a.norm, b.norm, "norm2"}, {a.sum_async, b.sum_async, "sum_async"}, {a.var, b.var, "var"}, {a.std, b.std, "std"}}) {
    auto s = same_bits(p, q);
    if (!s) return s << " (" << what << ")";
  }
  return ::testing::AssertionSuccess();
}

template <class T, class Out> void compare_everywhere(int kind, std::int64_t n, std::size_t offset) {
  SCOPED_TRACE(::testing::Message() << "kind=" << kind << " n=" << n << " offset=" << offset << " T=" << sizeof(T)
                                    << " Out=" << sizeof(Out));
  certified_switch restore;
  auto x = make<T>(n, kind, 7 + n), y = make<T>(n, kind == 2 ? 1 : kind, 8 + n);
  auto want = run<T, Out>(x, y, 0, tally::backend::cpu);
  tn::set_exact_certified(true);
  auto with = run<T, Out>(x, y, offset, tally::backend::cuda);
  tn::set_exact_certified(false);
  auto without = run<T, Out>(x, y, offset, tally::backend::cuda);
  EXPECT_TRUE(same_results(with, want));
  EXPECT_TRUE(same_results(without, want));
  tn::set_exact_certified(true);
  tn::set_var_one_pass(false);  // var/std from two passes over x (sum x, then sum x^2; the default is one)
  EXPECT_TRUE(same_results(run<T, Out>(x, y, offset, tally::backend::cuda), want)) << "two-pass variance";
  tn::set_var_one_pass(true);
  if (n >= 65537) {  // the other variants of the certified pass (tuning::certified_variant)
    tn::set_exact_certified(true);
    for (int v = 1; v <= 6; ++v) {
      tn::set_certified_variant(v);
      EXPECT_TRUE(same_results(run<T, Out>(x, y, offset, tally::backend::cuda), want)) << "variant " << v;
    }
    tn::set_certified_variant(0);
  }
}

TEST(CertifiedGpu, SameBitsWithAndWithoutTheCertificateAndAsTheCpu) {
  TT_REQUIRE_BACKEND(tally::backend::cuda);
  for (int kind : {0, 1, 2, 3})
    for (std::int64_t n : {1, 2, 3, 31, 1000, 65537, (1 << 20) + 3})
      for (std::size_t offset : {0, 1}) {
        compare_everywhere<double, double>(kind, n, offset);
        compare_everywhere<float, float>(kind, n, offset);
        compare_everywhere<float, double>(kind, n, offset);
        compare_everywhere<double, float>(kind, n, offset);
      }
}

TEST(CertifiedGpu, SpecialValuesTiesAndOverflowGoToTheExactKernel) {
  TT_REQUIRE_BACKEND(tally::backend::cuda);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<std::vector<double>> cases = {
      {1.0, 0x1p-53},                    // a tie: to even, 1
      {1.0, 0x1p-53, 0x1p-150},          // just past it: 1 + 2^-52
      {1e308, 1e308, -1e308},            // an intermediate overflow: 1e308
      {1e308, 1e308},                    // overflow: inf
      {-0.0, -0.0, -0.0},                // -0
      {0.0, -0.0},                       // +0
      {1.5, -1.5},                       // +0
      {1.0, nan, 2.0},                   // NaN
      {inf, 1.0},                        // inf
      {inf, -inf},                       // NaN
      {0x1p-1074, 0x1p-1074, -0x1p-1073, 0x1p-1074},  // subnormal: 2^-1074
      {0x1.fffffffffffffp+1023, -0x1p+970},           // near DBL_MAX
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "case of " << c.size() << " starting " << c[0]);
    certified_switch restore;
    for (std::size_t rep : {std::size_t(1), std::size_t(3000)}) {  // and many copies
      std::vector<double> x;
      for (std::size_t k = 0; k < rep; ++k) x.insert(x.end(), c.begin(), c.end());
      auto want = run<double, double>(x, x, 0, tally::backend::cpu);
      tn::set_exact_certified(true);
      EXPECT_TRUE(same_results(run<double, double>(x, x, 0, tally::backend::cuda), want));
      auto wantf = run<double, float>(x, x, 0, tally::backend::cpu);
      EXPECT_TRUE(same_results(run<double, float>(x, x, 0, tally::backend::cuda), wantf));
    }
  }
}

TEST(CertifiedGpu, TheCertificateHoldsOnEasyDataAndFailsOnHardData) {
  TT_REQUIRE_BACKEND(tally::backend::cuda);
  certified_switch restore;
  tn::set_exact_certified(true);
  const std::int64_t n = (1 << 22) + 5;
  auto check = [&](const std::vector<double>& x, bool expect_certified) {
    cuda::device_buffer dx(x.size() * sizeof(double));
    dx.upload(0, x.data(), x.size() * sizeof(double));
    tally::options o;
    o.backend = tally::backend::cuda;
    tally::view<const double> vx{static_cast<const double*>(dx.get()), static_cast<std::int64_t>(x.size()),
                                 tally::memory::device};
    double got = tally::sum<double>(vx, o);
    EXPECT_EQ(tally::cuda::last_exact_was_certified(nullptr, -1), expect_certified);
    tally::view<const double> hx{x.data(), static_cast<std::int64_t>(x.size()), tally::memory::host};
    EXPECT_TRUE(same_bits(got, tally::sum<double>(hx, cpu_backend())));
  };
  check(make<double>(n, 0, 1), true);   // uniform
  check(make<double>(n, 1, 2), true);   // 2^-60 .. 2^60
  check(make<double>(n, 2, 3), true);   // adjacent cancelling pairs
  std::vector<double> tie(n, 0.0);
  tie[0] = 1.0;
  tie[n / 2] = 0x1p-53;  // exactly halfway: the exact kernel decides (ties to even)
  check(tie, false);
  std::vector<double> over(n, 1.0);
  over[4] = 1e308;  // one 16-byte vector: the same thread's state overflows
  over[5] = 1e308;
  over[n - 1] = -1e308;  // the exact sum is finite
  check(over, false);
}

// Two float64 inputs of n elements on the device: `easy` (the certificate holds) and `tie`
// (1 and a value half an ulp of 1 from it, at the given places: the exact sum is a tie, the
// certificate fails), with their correctly rounded sums from the cpu backend.
struct easy_and_tie {
  std::int64_t n;
  std::vector<double> easy, tie;
  double want_easy, want_tie;
  cuda::device_buffer de, dt;
  easy_and_tie(std::int64_t n_, int kind, std::uint64_t seed, std::size_t one_at, std::size_t half_at, double half)
      : n(n_), easy(make<double>(n_, kind, seed)), tie(static_cast<std::size_t>(n_), 0.0),
        de(static_cast<std::size_t>(n_) * sizeof(double)), dt(static_cast<std::size_t>(n_) * sizeof(double)) {
    tie[one_at] = 1.0;
    tie[half_at] = half;
    want_easy = tally::sum<double>(host(easy), cpu_backend());
    want_tie = tally::sum<double>(host(tie), cpu_backend());
    de.upload(0, easy.data(), easy.size() * sizeof(double));
    dt.upload(0, tie.data(), tie.size() * sizeof(double));
  }
  tally::view<const double> host(const std::vector<double>& v) const { return {v.data(), n, tally::memory::host}; }
  tally::view<const double> on_device(const cuda::device_buffer& b) const {
    return {static_cast<const double*>(b.get()), n, tally::memory::device};
  }
  tally::view<const double> easy_view() const { return on_device(de); }
  tally::view<const double> tie_view() const { return on_device(dt); }
};

// Stream-ordered calls back to back whose verdicts alternate (held, failed, held, ...): each
// gated exact kernel must act on its own call's verdict, never on a stale one (the polled
// gate of the default, variant 0, the waiting one of variant 1, and variant 6's smaller gated
// grid), and each result lands in its own slot.
TEST(CertifiedGpu, BackToBackStreamOrderedCallsWithAlternatingVerdicts) {
  TT_REQUIRE_BACKEND(tally::backend::cuda);
  certified_switch restore;
  tn::set_exact_certified(true);
  const easy_and_tie d((1 << 18) + 3, 0, 5, 0, ((1 << 18) + 3) / 2, 0x1p-53);
  const auto ve = d.easy_view(), vt = d.tie_view();
  const double want_easy = d.want_easy, want_tie = d.want_tie;
  constexpr int calls = 64;
  for (int v : {0, 1, 6}) {  // 6: the gated grid of a block per SM
    tn::set_certified_variant(v);
    cuda::device_buffer dr(calls * sizeof(double));
    auto* r = static_cast<double*>(dr.get());
    tally::options o;
    o.backend = tally::backend::cuda;
    for (int k = 0; k < calls; ++k) tally::sum_async<double>(k % 3 == 1 ? vt : ve, r + k, nullptr, o);
    std::vector<double> got(calls);
    dr.download(got.data(), 0, calls * sizeof(double));
    for (int k = 0; k < calls; ++k)
      EXPECT_TRUE(same_bits(got[k], k % 3 == 1 ? want_tie : want_easy)) << "variant " << v << " call " << k;
  }
}

// Several host threads enqueueing exact calls on one stream at once: the two kernels of one
// call are enqueued together (the workspace lock), so no call acts on another's verdict.
TEST(CertifiedGpu, SeveralThreadsOnOneStream) {
  TT_REQUIRE_BACKEND(tally::backend::cuda);
  certified_switch restore;
  tn::set_exact_certified(true);
  const easy_and_tie d((1 << 16) + 1, 1, 9, 3, (1 << 16) - 1, -0x1p-54);  // a tie below 1
  const auto ve = d.easy_view(), vt = d.tie_view();
  const double want_easy = d.want_easy, want_tie = d.want_tie;
  tally::stream_t s = cuda::create_stream();
  for (int v : {0, 1}) {
    tn::set_certified_variant(v);
    constexpr int threads = 4, calls = 32;
    cuda::device_buffer dr(threads * calls * sizeof(double));
    auto* r = static_cast<double*>(dr.get());
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        tally::options o;
        o.backend = tally::backend::cuda;
        o.stream = s;
        for (int k = 0; k < calls; ++k) tally::sum_async<double>((k + t) % 2 ? vt : ve, r + t * calls + k, nullptr, o);
      });
    for (auto& th : pool) th.join();
    cuda::synchronize(s);
    std::vector<double> got(threads * calls);
    dr.download(got.data(), 0, got.size() * sizeof(double));
    for (int t = 0; t < threads; ++t)
      for (int k = 0; k < calls; ++k)
        EXPECT_TRUE(same_bits(got[t * calls + k], (k + t) % 2 ? want_tie : want_easy))
            << "variant " << v << " thread " << t << " call " << k;
  }
  cuda::destroy_stream(s);
}

// One exact sum captured in a CUDA graph and replayed while the input changes between
// certifying data and a tie (the certificate fails): the call's number is baked into the
// graph, so only the gate's reset keeps a replay from acting on the previous replay's
// verdict (the polled gate, variant 0, and the waiting one, variant 1).
TEST(CertifiedGpu, ReplayedGraphNeverReadsAStaleVerdict) {
  TT_REQUIRE_BACKEND(tally::backend::cuda);
  certified_switch restore;
  tn::set_exact_certified(true);
  const std::int64_t n = (1 << 18) + 3;
  const easy_and_tie d(n, 0, 21, 7, static_cast<std::size_t>(n - 1), 0x1p-53);
  const std::vector<double>&easy = d.easy, &tie = d.tie;
  const double want_easy = d.want_easy, want_tie = d.want_tie;
  for (int v : {0, 1}) {
    tn::set_certified_variant(v);
    cuda::device_buffer dx(n * sizeof(double)), dr(sizeof(double));
    dx.upload(0, easy.data(), easy.size() * sizeof(double));
    tally::view<const double> vx{static_cast<const double*>(dx.get()), n, tally::memory::device};
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    tally::options o;
    o.backend = tally::backend::cuda;
    o.stream = s;
    auto* r = static_cast<double*>(dr.get());
    tally::sum_async<double>(vx, r, nullptr, o);  // the workspace exists before the capture
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    tally::sum_async<double>(vx, r, nullptr, o);
    ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int k = 0; k < 12; ++k) {
      const bool hard = k % 3 == 1 || k == 5;  // easy, tie, easy, easy, tie, tie, easy, tie, ...
      dx.upload(0, hard ? tie.data() : easy.data(), easy.size() * sizeof(double));
      ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      double got = 0;
      dr.download(&got, 0, sizeof got);
      EXPECT_TRUE(same_bits(got, hard ? want_tie : want_easy)) << "variant " << v << " replay " << k;
      EXPECT_EQ(tally::cuda::last_exact_was_certified(s, -1), !hard) << "variant " << v << " replay " << k;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
  }
}

}  // namespace
}  // namespace tt
