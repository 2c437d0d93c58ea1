// The stream-ordered shape forms (tally/shapes.hpp, "stream-ordered forms"): the same bits as
// the blocking forms (which test_shapes.cpp checks against exact references), queued back to
// back on two streams; errors found on the GPU reported through the status words (bad
// offsets, integer overflow) and cleared by the next good call; errors found on the host
// thrown before anything is enqueued. The GPU cases need a GPU (skipped otherwise); the host
// checks run everywhere.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

namespace tt {
namespace {

using tally::extreme_op;
using tally::nan_policy;
using v64 = std::vector<std::int64_t>;

tally::options cuda_on(tally::stream_t s, tally::accuracy acc = tally::accuracy::exact) {
  tally::options o;
  o.backend = backend::cuda;
  o.stream = s;
  o.accuracy = acc;
  return o;
}

// Bitwise equality of two result vectors (NaNs of any payload equal).
template <class R> ::testing::AssertionResult same(const std::vector<R>& got, const std::vector<R>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes " << got.size() << " and " << want.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    auto r = same_bits(got[i], want[i]);
    if (!r) return r << " at output " << i;
  }
  return ::testing::AssertionSuccess();
}

// Without a GPU, or with host memory, the stream-ordered forms refuse before doing anything.
TEST(ShapesAsyncHost, HostMemoryAndTheCpuBackendAreRefused) {
  std::vector<double> x(12, 1.0), out(3);
  v64 off = {0, 4, 8, 12};
  std::vector<std::int64_t> idx(3);
  const tally::matrix_ref m{x.data(), 3, 4, 4, 1, dtype::float64, tally::memory::unknown};
  const tally::mutable_array_ref o{out.data(), 3, dtype::float64, tally::memory::unknown};
  const tally::mutable_array_ref oi{idx.data(), 3, dtype::int64, tally::memory::unknown};
  const tally::array_ref xr{x.data(), 12, dtype::float64, tally::memory::unknown};
  tally::options cpu;
  cpu.backend = backend::cpu;
  // host data: the automatic backend would be the cpu one, which has no stream-ordered form
  const errc host = errc::wrong_memory;
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis_async(tally::reduce_op::sum, m, 1, o, nullptr); }, host,
                           {"sum_async (axis)", "device memory"}));
  EXPECT_TRUE(throws_tally([&] { tally::mean_segments_async(xr, off.data(), 3, o, nullptr); }, host,
                           {"mean_async (segments)", "device memory"}));
  EXPECT_TRUE(throws_tally([&] { tally::extreme_axis_async(extreme_op::max, nan_policy::propagate, m, 1, {}, oi, nullptr); },
                           host, {"max_async (axis)"}));
  // the cpu backend asked for by name
  EXPECT_TRUE(throws_tally([&] { tally::reduce_segments_async(tally::reduce_op::sum, xr, off.data(), 3, o, nullptr, cpu); },
                           errc::invalid_argument, {"sum_async (segments)", "cuda backend only"}));
  EXPECT_TRUE(throws_tally([&] { tally::mean_axis_async(m, 1, o, nullptr, cpu); }, errc::invalid_argument,
                           {"cuda backend only"}));
  // the usual argument checks come first, as in the blocking forms
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis_async(tally::reduce_op::sum, m, 2, o, nullptr); },
                           errc::invalid_argument, {"axis must be 0"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis_async(tally::reduce_op::dot, m, 1, o, nullptr); },
                           errc::invalid_argument, {"reduce_op::sum"}));
  EXPECT_EQ(out, std::vector<double>(3, 0.0)) << "nothing was written";
}

// Nothing to read or write: a stream-ordered call still goes to the cuda backend (never the cpu
// one by default, which has no stream-ordered form): no_gpu without a GPU, nothing to do with
// one. The typed wrappers' empty offsets view (segments = -1) is named as such.
TEST(ShapesAsyncHost, EmptyCallsGoToTheCudaBackend) {
  const tally::matrix_ref m{nullptr, 5, 0, 0, 1, dtype::float32, tally::memory::unknown};  // axis 0: no outputs
  auto call = [&] { tally::reduce_axis_async(tally::reduce_op::sum, m, 0, {nullptr, 0, dtype::float32, tally::memory::unknown}, nullptr); };
  auto ext = [&] { tally::extreme_axis_async(extreme_op::min, nan_policy::propagate, m, 0, {}, {}, nullptr); };
  if (runnable(backend::cuda)) {
    EXPECT_NO_THROW(call());
    EXPECT_NO_THROW(ext());
  } else {
    EXPECT_TRUE(throws_tally(call, errc::no_gpu, {"sum_async (axis)"}));
    EXPECT_TRUE(throws_tally(ext, errc::no_gpu, {"min_async (axis)"}));
  }
  tally::options cpu;
  cpu.backend = backend::cpu;
  EXPECT_TRUE(throws_tally([&] { tally::mean_axis_async(m, 0, {nullptr, 0, dtype::float32, tally::memory::unknown}, nullptr, cpu); },
                           errc::invalid_argument, {"mean_async (axis)", "cuda backend only"}));
  EXPECT_TRUE(throws_tally([&] {
    tally::segment_sum_async<float>(tally::view<const float>(), tally::view<const std::int64_t>(), tally::view<float>());
  }, errc::invalid_argument, {"sum_async (segments)", "empty offsets view"}));
}

class ShapesAsync : public ::testing::Test {
 protected:
  void SetUp() override { TT_REQUIRE_BACKEND(backend::cuda); }
};

// (Bodies are compiled only with the CUDA backend; SetUp skips them otherwise.)

// Rows, columns (contiguous and strided), uneven segments with empty ones and one longer than
// a segment tile: sums (exact and fast), means, min/max with indices, each stream-ordered call
// queued without waiting on one of two streams, then compared with the blocking call.
template <class T> void async_equals_blocking() {
#if defined(TALLY_TEST_HAVE_CUDA)
  using R = tally::result_t<T>;
  using M = std::conditional_t<std::is_floating_point_v<T>, T, double>;
  const std::int64_t rows = 37, cols = 4501;  // (rows, cols), row-major, padded to row_stride (columns: the certified pass's)
  const std::int64_t rs = cols + 5;
  auto h = random_values<T>(rows * rs, std::is_same_v<T, std::int64_t> ? dist::uniform : dist::wide, 7);
  if constexpr (std::is_floating_point_v<T>) {
    h[5] = std::numeric_limits<T>::quiet_NaN();  // a NaN in row 0 (min/max propagate, nan forms skip)
    h[rs + 17] = -h[rs + 17];
  }
  buffer<T> x(backend::cuda, h);
  v64 off = {0, 0, 3, 40000, 40000, 40001, 60000, 60000, 100000};  // empty segments; one of 39997 elements
  const std::int64_t segs = static_cast<std::int64_t>(off.size()) - 1;
  buffer<std::int64_t> doff(backend::cuda, off);
  tally::stream_t s[2] = {cuda::create_stream(), cuda::create_stream()};
  buffer<std::int64_t> status(backend::cuda, 2 * 64, 5);
  int call = 0;
  std::vector<std::function<void()>> checks;  // run after both streams are synchronised

  // shapes: (matrix, axis) pairs, rows and columns, contiguous and strided
  struct shape {
    tally::matrix_ref m;
    int axis;
    std::int64_t outputs;
    const char* name;
  };
  const dtype t = tally::dtype_of<T>();
  const std::vector<shape> shapes = {
      {{x.data(), rows, cols, rs, 1, t, tally::memory::device}, 1, rows, "rows"},
      {{x.data(), rows, cols, rs, 1, t, tally::memory::device}, 0, cols, "columns"},
      {{x.data(), rows, cols / 2, rs, 2, t, tally::memory::device}, 1, rows, "rows of every other column"},
      {{x.data(), cols, rows, 1, rs, t, tally::memory::device}, 1, cols, "rows of a column-major view"},
  };
  // keeps every output buffer alive until the checks
  std::vector<std::unique_ptr<buffer<R>>> keep_r;
  std::vector<std::unique_ptr<buffer<M>>> keep_m;
  std::vector<std::unique_ptr<buffer<T>>> keep_t;
  std::vector<std::unique_ptr<buffer<std::int64_t>>> keep_i;
  auto next_status = [&] { return status.data() + 2 * (call++ % 64); };
  auto status_ok = [&](std::int64_t* st, std::string what) {
    const std::size_t at = static_cast<std::size_t>(st - status.data());
    checks.push_back([&, at, what] {
      auto w = status.read(at, 2);
      EXPECT_EQ(w[0], -1) << what;
      EXPECT_EQ(w[1], -1) << what;
    });
  };

  for (const shape& sh : shapes) {
    for (auto acc : {tally::accuracy::exact, tally::accuracy::fast}) {
      const std::string what = std::string(sh.name) + (acc == tally::accuracy::exact ? ", exact sum" : ", fast sum");
      auto& a = *keep_r.emplace_back(std::make_unique<buffer<R>>(backend::cuda, sh.outputs, R(9)));
      std::int64_t* st = next_status();
      tally::reduce_axis_async(tally::reduce_op::sum, sh.m, sh.axis, {a.data(), sh.outputs, tally::dtype_of<R>(), tally::memory::device},
                               st, cuda_on(s[call % 2], acc));
      status_ok(st, what);
      checks.push_back([&, pa = &a, sh, acc, what] {
        auto& a = *pa;
        buffer<R> b(backend::cuda, sh.outputs, R(3));
        tally::reduce_axis(tally::reduce_op::sum, sh.m, sh.axis, {b.data(), sh.outputs, tally::dtype_of<R>(), tally::memory::device},
                           cuda_on(nullptr, acc));
        EXPECT_TRUE(same(a.read(), b.read())) << what;
      });
    }
    {
      auto& a = *keep_m.emplace_back(std::make_unique<buffer<M>>(backend::cuda, sh.outputs, M(9)));
      std::int64_t* st = next_status();
      tally::mean_axis_async(sh.m, sh.axis, {a.data(), sh.outputs, tally::dtype_of<M>(), tally::memory::device}, st, cuda_on(s[call % 2]));
      status_ok(st, std::string(sh.name) + ", mean");
      checks.push_back([&, pa = &a, sh] {
        auto& a = *pa;
        buffer<M> b(backend::cuda, sh.outputs, M(3));
        tally::mean_axis(sh.m, sh.axis, {b.data(), sh.outputs, tally::dtype_of<M>(), tally::memory::device}, cuda_on(nullptr));
        EXPECT_TRUE(same(a.read(), b.read())) << sh.name << ", mean";
      });
    }
    for (auto op : {extreme_op::min, extreme_op::max})
      for (auto nans : {nan_policy::propagate, nan_policy::omit}) {
        const std::string what = std::string(sh.name) + (op == extreme_op::min ? ", min" : ", max") +
                                 (nans == nan_policy::omit ? " (omit NaN)" : "");
        auto& v = *keep_t.emplace_back(std::make_unique<buffer<T>>(backend::cuda, sh.outputs, T(9)));
        auto& i = *keep_i.emplace_back(std::make_unique<buffer<std::int64_t>>(backend::cuda, sh.outputs, 9));
        std::int64_t* st = next_status();
        tally::extreme_axis_async(op, nans, sh.m, sh.axis, {v.data(), sh.outputs, t, tally::memory::device},
                                  {i.data(), sh.outputs, dtype::int64, tally::memory::device}, st, cuda_on(s[call % 2]));
        status_ok(st, what);
        checks.push_back([&, pv = &v, pi = &i, sh, op, nans, what] {
          auto& v = *pv;
          auto& i = *pi;
          buffer<T> bv(backend::cuda, sh.outputs, T(3));
          buffer<std::int64_t> bi(backend::cuda, sh.outputs, 3);
          tally::extreme_axis(op, nans, sh.m, sh.axis, {bv.data(), sh.outputs, t, tally::memory::device},
                              {bi.data(), sh.outputs, dtype::int64, tally::memory::device}, cuda_on(nullptr));
          EXPECT_TRUE(same(v.read(), bv.read())) << what;
          EXPECT_TRUE(same(i.read(), bi.read())) << what;
        });
      }
  }
  // segments
  const tally::array_ref xs{x.data(), off.back(), t, tally::memory::device};
  for (auto acc : {tally::accuracy::exact, tally::accuracy::fast}) {
    auto& a = *keep_r.emplace_back(std::make_unique<buffer<R>>(backend::cuda, segs, R(9)));
    std::int64_t* st = next_status();
    tally::reduce_segments_async(tally::reduce_op::sum, xs, doff.data(), segs, {a.data(), segs, tally::dtype_of<R>(), tally::memory::device},
                                 st, cuda_on(s[call % 2], acc));
    status_ok(st, "segments, sum");
    checks.push_back([&, pa = &a, acc] {
      auto& a = *pa;
      buffer<R> b(backend::cuda, segs, R(3));
      tally::reduce_segments(tally::reduce_op::sum, xs, doff.data(), segs, {b.data(), segs, tally::dtype_of<R>(), tally::memory::device},
                             cuda_on(nullptr, acc));
      EXPECT_TRUE(same(a.read(), b.read())) << "segments, sum";
    });
  }
  {
    auto& a = *keep_m.emplace_back(std::make_unique<buffer<M>>(backend::cuda, segs, M(9)));
    std::int64_t* st = next_status();
    tally::mean_segments_async(xs, doff.data(), segs, {a.data(), segs, tally::dtype_of<M>(), tally::memory::device}, st, cuda_on(s[call % 2]));
    status_ok(st, "segments, mean");
    checks.push_back([&, pa = &a] {
      auto& a = *pa;
      buffer<M> b(backend::cuda, segs, M(3));
      tally::mean_segments(xs, doff.data(), segs, {b.data(), segs, tally::dtype_of<M>(), tally::memory::device}, cuda_on(nullptr));
      EXPECT_TRUE(same(a.read(), b.read())) << "segments, mean";
    });
  }
  for (auto op : {extreme_op::min, extreme_op::max}) {
    auto& v = *keep_t.emplace_back(std::make_unique<buffer<T>>(backend::cuda, segs, T(9)));
    auto& i = *keep_i.emplace_back(std::make_unique<buffer<std::int64_t>>(backend::cuda, segs, 9));
    std::int64_t* st = next_status();
    tally::extreme_segments_async(op, nan_policy::propagate, xs, doff.data(), segs, {v.data(), segs, t, tally::memory::device},
                                  {i.data(), segs, dtype::int64, tally::memory::device}, st, cuda_on(s[call % 2]));
    status_ok(st, "segments, extreme");
    checks.push_back([&, pv = &v, pi = &i, op] {
      auto& v = *pv;
      auto& i = *pi;
      buffer<T> bv(backend::cuda, segs, T(3));
      buffer<std::int64_t> bi(backend::cuda, segs, 3);
      tally::extreme_segments(op, nan_policy::propagate, xs, doff.data(), segs, {bv.data(), segs, t, tally::memory::device},
                              {bi.data(), segs, dtype::int64, tally::memory::device}, cuda_on(nullptr));
      EXPECT_TRUE(same(v.read(), bv.read())) << "segments, extreme";
      EXPECT_TRUE(same(i.read(), bi.read())) << "segments, extreme";
      EXPECT_EQ(i.read()[0], -1) << "an empty segment's index";
    });
  }
  ASSERT_LT(call, 64) << "status slots are reused";
  cuda::synchronize(s[0]);
  cuda::synchronize(s[1]);
  for (auto& c : checks) c();
  cuda::destroy_stream(s[0]);
  cuda::destroy_stream(s[1]);
#endif
}

TEST_F(ShapesAsync, SameBitsAsBlockingFloat32) { async_equals_blocking<float>(); }
TEST_F(ShapesAsync, SameBitsAsBlockingFloat64) { async_equals_blocking<double>(); }
TEST_F(ShapesAsync, SameBitsAsBlockingInt32) { async_equals_blocking<std::int32_t>(); }
TEST_F(ShapesAsync, SameBitsAsBlockingInt64) { async_equals_blocking<std::int64_t>(); }

// Errors found on the GPU: the status words name them; the next good call clears them.
TEST_F(ShapesAsync, StatusReportsBadOffsetsAndOverflowThenClears) {
#if defined(TALLY_TEST_HAVE_CUDA)
  const std::int64_t n = 50000;
  buffer<double> x(backend::cuda, std::vector<double>(n, 0.5));
  buffer<std::int64_t> st(backend::cuda, 2, 5);
  buffer<double> out(backend::cuda, 4, 9.0);
  buffer<double> vals(backend::cuda, 4, 9.0);
  buffer<std::int64_t> idx(backend::cuda, 4, 9);
  const tally::array_ref xs{x.data(), n, dtype::float64, tally::memory::device};
  const tally::mutable_array_ref o{out.data(), 4, dtype::float64, tally::memory::device};
  const tally::mutable_array_ref ov{vals.data(), 4, dtype::float64, tally::memory::device};
  const tally::mutable_array_ref oi{idx.data(), 4, dtype::int64, tally::memory::device};
  struct bad_case {
    v64 off;
    std::int64_t first_bad;
  };
  const std::vector<bad_case> cases = {{{1, 10, 20, 30, n}, 0},          // offsets[0] != 0
                                       {{0, 10, 5, 30, n}, 2},           // decreasing
                                       {{0, 10, 20, 30, n - 1}, 4},      // last != n
                                       {{0, 30000, 20000, 40000, n}, 2}};  // decreasing, long segments
  const v64 good = {0, 10, 20000, 30000, n};
  for (const auto& c : cases) {
    buffer<std::int64_t> doff(backend::cuda, c.off);
    for (int path = 0; path < 4; ++path) {
      SCOPED_TRACE("case first bad " + std::to_string(c.first_bad) + ", path " + std::to_string(path));
      st.write({5, 5});
      if (path == 0) tally::reduce_segments_async(tally::reduce_op::sum, xs, doff.data(), 4, o, st.data(), cuda_on(nullptr, tally::accuracy::fast));
      if (path == 1) tally::reduce_segments_async(tally::reduce_op::sum, xs, doff.data(), 4, o, st.data(), cuda_on(nullptr));
      if (path == 2) tally::mean_segments_async(xs, doff.data(), 4, o, st.data(), cuda_on(nullptr));
      if (path == 3) tally::extreme_segments_async(extreme_op::max, nan_policy::omit, xs, doff.data(), 4, ov, oi, st.data(), cuda_on(nullptr));
      cuda::synchronize(nullptr);
      EXPECT_EQ(st.read(), (v64{c.first_bad, -1}));
      // the blocking form throws for the same offsets
      EXPECT_TRUE(throws_tally([&] { tally::reduce_segments(tally::reduce_op::sum, xs, doff.data(), 4, o, cuda_on(nullptr)); },
                               errc::invalid_argument, {"offsets[" + std::to_string(c.first_bad) + "]"}));
      // a good call on the same stream clears the stale status and computes
      buffer<std::int64_t> goff(backend::cuda, good);
      tally::reduce_segments_async(tally::reduce_op::sum, xs, goff.data(), 4, o, st.data(), cuda_on(nullptr, tally::accuracy::fast));
      cuda::synchronize(nullptr);
      EXPECT_EQ(st.read(), (v64{-1, -1}));
      EXPECT_EQ(out.read(), (std::vector<double>{5.0, 9995.0, 5000.0, 10000.0}));
    }
  }
  // integer overflow: output 2 of int64 rows leaves int64
  const std::int64_t MAX = std::numeric_limits<std::int64_t>::max();
  v64 h(4 * 3, 1);
  h[2 * 3] = MAX;
  h[3 * 3] = MAX;  // rows 2 and 3 overflow: the first is named
  buffer<std::int64_t> xi(backend::cuda, h);
  buffer<std::int64_t> oi64(backend::cuda, 4, 9);
  st.write({5, 5});
  tally::reduce_axis_async(tally::reduce_op::sum, {xi.data(), 4, 3, 3, 1, dtype::int64, tally::memory::device}, 1,
                           {oi64.data(), 4, dtype::int64, tally::memory::device}, st.data(), cuda_on(nullptr));
  cuda::synchronize(nullptr);
  EXPECT_EQ(st.read(), (v64{-1, 2}));
  EXPECT_EQ(oi64.read()[0], 3);
  // columns: every column of a (3000, 2) int64 matrix of MAX / 1000 overflows; column 0 is named
  buffer<std::int64_t> xc(backend::cuda, v64(6000, MAX / 1000));
  buffer<std::int64_t> oc(backend::cuda, 2, 9);
  st.write({5, 5});
  tally::reduce_axis_async(tally::reduce_op::sum, {xc.data(), 3000, 2, 2, 1, dtype::int64, tally::memory::device}, 0,
                           {oc.data(), 2, dtype::int64, tally::memory::device}, st.data(), cuda_on(nullptr));
  cuda::synchronize(nullptr);
  EXPECT_EQ(st.read(), (v64{-1, 0}));
  // nothing to compute still writes the status; a null status is fine
  buffer<std::int64_t> zero(backend::cuda, v64{0});
  st.write({5, 5});
  tally::reduce_segments_async(tally::reduce_op::sum, {x.data(), 0, dtype::float64, tally::memory::device}, zero.data(), 0,
                               {out.data(), 0, dtype::float64, tally::memory::device}, st.data(), cuda_on(nullptr));
  cuda::synchronize(nullptr);
  EXPECT_EQ(st.read(), (v64{-1, -1}));
  st.write({5, 5});
  tally::reduce_axis_async(tally::reduce_op::sum, {x.data(), 0, 7, 7, 1, dtype::float64, tally::memory::device}, 1,
                           {out.data(), 0, dtype::float64, tally::memory::device}, st.data(), cuda_on(nullptr));
  cuda::synchronize(nullptr);
  EXPECT_EQ(st.read(), (v64{-1, -1}));
  // the same with the automatic backend: no arrays with elements, the status decides nothing
  // but is still written
  st.write({5, 5});
  tally::mean_axis_async({x.data(), 0, 7, 7, 1, dtype::float64, tally::memory::device}, 1,
                         {out.data(), 0, dtype::float64, tally::memory::device}, st.data());
  cuda::synchronize(nullptr);
  EXPECT_EQ(st.read(), (v64{-1, -1}));
  buffer<std::int64_t> goff(backend::cuda, good);
  tally::reduce_segments_async(tally::reduce_op::sum, xs, goff.data(), 4, o, nullptr, cuda_on(nullptr));
  cuda::synchronize(nullptr);
  EXPECT_EQ(out.read(), (std::vector<double>{5.0, 9995.0, 5000.0, 10000.0}));
#endif
}

// cudaStreamPerThread is one handle naming a different stream in each thread: the scratch
// and workspace caches key it by thread too, so threads queueing on their own per-thread
// streams at once never share partials, tickets or counters (their work is not ordered).
// The stream-ordered segment calls whose ops never record an overflow (byte sums, means, max
// with index) end without block_done, in a set of persistent words of their own (v3::finish
// check_end), placed after the stream's tickets, one a segment when a segment is long enough
// for tile items. Run 219 found such a call faulting (misaligned address, the context lost)
// when the tickets were grown to an odd count: sets 1 and 2 began at 4 mod 8 and their 8-byte
// status words were misaligned. Here, on a fresh stream, the ticket words grown by odd
// segment counts (1025, then 3001 and 7003: each past twice the last) and even ones beside
// them, each call with one segment past seg_split (tiles) among short and empty ones; every
// output against the cpu backend's, every status [-1, -1].
TEST_F(ShapesAsync, OddSegmentCountsGrowTheStreamsWords) {
#if defined(TALLY_TEST_HAVE_CUDA)
  tally::stream_t s = cuda::create_stream();
  buffer<std::int64_t> st(backend::cuda, 2, 5);
  std::uint64_t seed = 219;
  for (const std::int64_t m : {1025, 1026, 3001, 3002, 7003, 1027}) {
    v64 off{0};
    for (std::int64_t k = 0; k < m; ++k) off.push_back(off.back() + (k == m / 3 ? 40000 : k % 5 == 0 ? 0 : k % 37));
    const std::int64_t n = off.back();
    std::vector<std::int8_t> h(static_cast<std::size_t>(n));
    for (auto& e : h) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      e = static_cast<std::int8_t>(seed >> 56);
    }
    buffer<std::int8_t> x(backend::cuda, h);
    buffer<std::int64_t> doff(backend::cuda, off);
    const tally::array_ref xs{x.data(), n, dtype::int8, tally::memory::device};
    const tally::array_ref xh{h.data(), n, dtype::int8, tally::memory::host};
    tally::options cpu;
    cpu.backend = backend::cpu;
    for (int op = 0; op < 3; ++op) {
      SCOPED_TRACE(std::to_string(m) + " segments, " + (op == 0 ? "sum" : op == 1 ? "mean" : "max with index"));
      st.write({5, 5});
      if (op == 0) {
        buffer<std::int64_t> got(backend::cuda, static_cast<std::size_t>(m), 9);
        std::vector<std::int64_t> want(static_cast<std::size_t>(m));
        tally::reduce_segments_async(tally::reduce_op::sum, xs, doff.data(), m, {got.data(), m, dtype::int64, tally::memory::device},
                                     st.data(), cuda_on(s));
        tally::reduce_segments(tally::reduce_op::sum, xh, off.data(), m, {want.data(), m, dtype::int64, tally::memory::host}, cpu);
        cuda::synchronize(s);
        EXPECT_EQ(got.read(), want);
      } else if (op == 1) {
        buffer<double> got(backend::cuda, static_cast<std::size_t>(m), 9.0);
        std::vector<double> want(static_cast<std::size_t>(m));
        tally::mean_segments_async(xs, doff.data(), m, {got.data(), m, dtype::float64, tally::memory::device}, st.data(), cuda_on(s));
        tally::mean_segments(xh, off.data(), m, {want.data(), m, dtype::float64, tally::memory::host}, cpu);
        cuda::synchronize(s);
        EXPECT_TRUE(same(got.read(), want));
      } else {
        buffer<std::int8_t> got(backend::cuda, static_cast<std::size_t>(m), 9);
        buffer<std::int64_t> gi(backend::cuda, static_cast<std::size_t>(m), 9);
        std::vector<std::int8_t> want(static_cast<std::size_t>(m));
        std::vector<std::int64_t> wi(static_cast<std::size_t>(m));
        tally::extreme_segments_async(extreme_op::max, nan_policy::propagate, xs, doff.data(), m,
                                      {got.data(), m, dtype::int8, tally::memory::device},
                                      {gi.data(), m, dtype::int64, tally::memory::device}, st.data(), cuda_on(s));
        tally::extreme_segments(extreme_op::max, nan_policy::propagate, xh, off.data(), m,
                                {want.data(), m, dtype::int8, tally::memory::host},
                                {wi.data(), m, dtype::int64, tally::memory::host}, cpu);
        cuda::synchronize(s);
        EXPECT_EQ(got.read(), want);
        EXPECT_EQ(gi.read(), wi);
      }
      EXPECT_EQ(st.read(), (v64{-1, -1}));
    }
  }
  cuda::destroy_stream(s);
#endif
}

TEST_F(ShapesAsync, PerThreadDefaultStreamsOfSeveralThreadsAtOnce) {
#if defined(TALLY_TEST_HAVE_CUDA)
  const auto per_thread = reinterpret_cast<tally::stream_t>(std::uintptr_t(0x2));  // cudaStreamPerThread
  const std::int64_t n = 300000;
  const v64 off = {0, 7, 100000, 100001, 250000, n};  // long segments: tile partials and tickets
  buffer<std::int64_t> doff(backend::cuda, off);
  constexpr int kThreads = 4, kCalls = 25;
  std::vector<std::unique_ptr<buffer<double>>> xs;
  std::vector<std::vector<double>> want(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    auto h = random_values<double>(n, dist::uniform, 100 + t);
    xs.push_back(std::make_unique<buffer<double>>(backend::cuda, h));
    for (std::size_t sgm = 0; sgm + 1 < off.size(); ++sgm) {
      tally::options c;
      c.backend = backend::cpu;
      c.accuracy = tally::accuracy::exact;
      want[t].push_back(tally::sum<double>({h.data() + off[sgm], off[sgm + 1] - off[sgm]}, c));
    }
  }
  std::vector<std::vector<double>> got(kThreads);
  std::vector<v64> status(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      buffer<double> out(backend::cuda, off.size() - 1, 9.0);
      buffer<std::int64_t> st(backend::cuda, 2, 5);
      const tally::array_ref x{xs[t]->data(), n, dtype::float64, tally::memory::device};
      for (int k = 0; k < kCalls; ++k)  // exact (merged digits) and fast (tile partials, tickets) in turn
        tally::reduce_segments_async(tally::reduce_op::sum, x, doff.data(), static_cast<std::int64_t>(off.size()) - 1,
                                     {out.data(), static_cast<std::int64_t>(off.size()) - 1, dtype::float64, tally::memory::device},
                                     st.data(), cuda_on(per_thread, k % 2 ? tally::accuracy::fast : tally::accuracy::exact));
      cuda::synchronize(per_thread);
      got[t] = out.read();
      status[t] = st.read();
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(status[t], (v64{-1, -1})) << "thread " << t;
    ASSERT_EQ(got[t].size(), want[t].size());
    for (std::size_t sgm = 0; sgm < want[t].size(); ++sgm)  // the last call is exact: the correctly rounded sums
      EXPECT_TRUE(same_bits(got[t][sgm], want[t][sgm])) << "thread " << t << ", segment " << sgm;
  }
#endif
}

// Host-side errors on a GPU: a host status, a status inside an output, host outputs.
TEST_F(ShapesAsync, BadStatusAndHostOutputsAreRefused) {
#if defined(TALLY_TEST_HAVE_CUDA)
  buffer<float> x(backend::cuda, std::vector<float>(12, 1.0f));
  buffer<float> out(backend::cuda, 3, 9.0f);
  buffer<std::int64_t> idx(backend::cuda, 8, 9);
  const tally::matrix_ref m{x.data(), 3, 4, 4, 1, dtype::float32, tally::memory::device};
  const tally::mutable_array_ref o{out.data(), 3, dtype::float32, tally::memory::device};
  std::int64_t host_status[2] = {5, 5};
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis_async(tally::reduce_op::sum, m, 1, o, host_status, cuda_on(nullptr)); },
                           errc::wrong_memory, {"status is host memory"}));
  EXPECT_TRUE(throws_tally([&] {
    tally::extreme_axis_async(extreme_op::min, nan_policy::propagate, m, 1, {}, {idx.data(), 3, dtype::int64, tally::memory::device},
                              idx.data() + 2, cuda_on(nullptr));
  }, errc::invalid_argument, {"status overlaps an output"}));
  // status inside x or the offsets, or not 8-byte aligned
  EXPECT_TRUE(throws_tally([&] {
    tally::reduce_axis_async(tally::reduce_op::sum, m, 1, o, reinterpret_cast<std::int64_t*>(x.data() + 4), cuda_on(nullptr));
  }, errc::invalid_argument, {"status overlaps x"}));
  buffer<std::int64_t> doff(backend::cuda, v64{0, 4, 8, 12});
  const tally::array_ref xs{x.data(), 12, dtype::float32, tally::memory::device};
  EXPECT_TRUE(throws_tally([&] { tally::mean_segments_async(xs, doff.data(), 3, o, doff.data() + 2, cuda_on(nullptr)); },
                           errc::invalid_argument, {"status overlaps offsets"}));
  EXPECT_TRUE(throws_tally([&] {
    tally::reduce_axis_async(tally::reduce_op::sum, m, 1, o, reinterpret_cast<std::int64_t*>(reinterpret_cast<char*>(idx.data()) + 4),
                             cuda_on(nullptr));
  }, errc::invalid_argument, {"8-byte aligned"}));
  // the cpu backend by name: invalid_argument whatever the memory (device arrays here)
  tally::options cpu;
  cpu.backend = backend::cpu;
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis_async(tally::reduce_op::sum, m, 1, o, nullptr, cpu); },
                           errc::invalid_argument, {"sum_async (axis)", "cuda backend only"}));
  EXPECT_TRUE(throws_tally([&] {
    tally::extreme_segments_async(extreme_op::max, nan_policy::propagate, xs, doff.data(), 3, {}, {idx.data(), 3, dtype::int64, tally::memory::device},
                                  nullptr, cpu);
  }, errc::invalid_argument, {"max_async (segments)", "cuda backend only"}));
  std::vector<float> host_out(3, 9.0f);
  EXPECT_TRUE(throws_tally([&] {
    tally::reduce_axis_async(tally::reduce_op::sum, m, 1, {host_out.data(), 3, dtype::float32, tally::memory::unknown}, nullptr,
                             cuda_on(nullptr));
  }, errc::wrong_memory));
  cuda::synchronize(nullptr);
  EXPECT_EQ(out.read(), std::vector<float>(3, 9.0f)) << "nothing was enqueued";
  EXPECT_EQ(host_out, std::vector<float>(3, 9.0f));
#endif
}

}  // namespace
}  // namespace tt
