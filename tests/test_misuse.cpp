// Misuse of the public API as a newcomer might write it: enumeration values cast from ints,
// views whose bytes run past the end of the address space, shape-layer outputs that overlap
// their inputs or each other, and zero-output shape calls. Each is a tally::error with the
// right errc (or, for the legal cases, the right answer), never a crash or a wrong number.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support.hpp"
#include "tally/state.hpp"
#include "tally/transform_reduce.hpp"

namespace tt {
namespace {

using tally::array_ref;
using tally::mutable_array_ref;
using tally::nan_policy;

class Misuse : public Backend {};

INSTANTIATE_TEST_SUITE_P(Backends, Misuse, ::testing::Values(backend::cpu, backend::cuda),
                         [](const auto& info) { return param_name(info); });

// Before: a backend, accuracy, reduce_op, extreme_op or nan_policy outside its enumeration was
// silently read as another value (backend 7 ran on the CPU, accuracy 5 was fast, reduce_op 2 a
// sum, extreme_op 5 a min, nan_policy 5 propagate); an unknown dtype with no elements passed.
TEST_P(Misuse, EnumerationValuesOutsideTheirRangeAreRefused) {
  auto bx = put(std::vector<double>{1, 2, 3, 4, 5, 6});
  const array_ref x{bx.data(), 6, dtype::float64};
  double r = 0;
  std::int64_t i = 0;
  auto with = [&](auto edit) {
    tally::options o = opt();
    edit(o);
    return o;
  };
  const auto bad_backend = with([](tally::options& o) { o.backend = static_cast<backend>(7); });
  const auto neg_backend = with([](tally::options& o) { o.backend = static_cast<backend>(-1); });
  const auto bad_accuracy = with([](tally::options& o) { o.accuracy = static_cast<tally::accuracy>(5); });
  const auto bad_op = static_cast<tally::reduce_op>(2);
  const auto bad_eop = static_cast<tally::extreme_op>(5);
  const auto bad_nans = static_cast<nan_policy>(5);
  const auto sum = tally::reduce_op::sum;

  EXPECT_TRUE(throws_tally([&] { tally::reduce(sum, x, {}, &r, bad_backend); }, errc::invalid_argument, {"backend", "7"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce(sum, x, {}, &r, neg_backend); }, errc::invalid_argument, {"backend", "-1"}));
  EXPECT_TRUE(throws_tally([&] { tally::mean(x, &r, dtype::float64, bad_backend); }, errc::invalid_argument, {"backend"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce(sum, x, {}, &r, bad_accuracy); }, errc::invalid_argument, {"accuracy", "5"}));
  EXPECT_TRUE(throws_tally([&] { tally::norm1(x, &r, dtype::float64, bad_accuracy); }, errc::invalid_argument, {"accuracy"}));
  EXPECT_TRUE(throws_tally([&] { tally::var(x, 0, false, &r, dtype::float64, bad_accuracy); }, errc::invalid_argument,
                           {"accuracy"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce(bad_op, x, x, &r, opt()); }, errc::invalid_argument, {"reduce_op", "2"}));
  EXPECT_TRUE(throws_tally([&] { (void)tally::partial(bad_op, x, x, opt()); }, errc::invalid_argument, {"reduce_op"}));
  EXPECT_TRUE(throws_tally([&] { tally::extreme(bad_eop, nan_policy::propagate, x, &r, &i, opt()); },
                           errc::invalid_argument, {"extreme_op", "5"}));
  EXPECT_TRUE(throws_tally([&] { tally::extreme(tally::extreme_op::max, bad_nans, x, &r, &i, opt()); },
                           errc::invalid_argument, {"nan_policy", "5"}));
  // An unknown element type is refused even with no elements.
  EXPECT_TRUE(throws_tally([&] { tally::mean({nullptr, 0, static_cast<dtype>(99)}, &r, dtype::float64, opt()); },
                           errc::invalid_argument, {"99"}));
  EXPECT_TRUE(throws_tally([&] { (void)tally::all({nullptr, 0, static_cast<dtype>(99)}, opt()); }, errc::invalid_argument,
                           {"99"}));

  // The shape layer.
  const tally::matrix_ref m{bx.data(), 2, 3, 3, 1, dtype::float64};
  buffer<double> o3(b(), 3, 0.0), o2(b(), 2, 0.0);
  buffer<std::int64_t> i3(b(), 3, std::int64_t(0)), i2(b(), 2, std::int64_t(0)), offsets = put(std::vector<std::int64_t>{0, 2, 6});
  const mutable_array_ref out3{o3.data(), 3, dtype::float64}, out2{o2.data(), 2, dtype::float64};
  const mutable_array_ref idx3{i3.data(), 3, dtype::int64}, idx2{i2.data(), 2, dtype::int64};
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis(sum, m, 0, out3, bad_accuracy); }, errc::invalid_argument, {"accuracy"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis(sum, m, 0, out3, bad_backend); }, errc::invalid_argument, {"backend"}));
  EXPECT_TRUE(throws_tally([&] { tally::extreme_axis(bad_eop, nan_policy::omit, m, 0, out3, idx3, opt()); },
                           errc::invalid_argument, {"extreme_op"}));
  EXPECT_TRUE(throws_tally([&] { tally::extreme_axis(tally::extreme_op::min, bad_nans, m, 0, out3, idx3, opt()); },
                           errc::invalid_argument, {"nan_policy"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce_segments(sum, x, offsets.data(), 2, out2, bad_accuracy); },
                           errc::invalid_argument, {"accuracy"}));
  EXPECT_TRUE(throws_tally([&] { tally::extreme_segments(bad_eop, nan_policy::omit, x, offsets.data(), 2, out2, idx2, opt()); },
                           errc::invalid_argument, {"extreme_op"}));
  const tally::strided_ref sv{bx.data(), 3, 2, dtype::float64};
  EXPECT_TRUE(throws_tally([&] { tally::reduce(sum, sv, &r, dtype::float64, bad_accuracy); }, errc::invalid_argument,
                           {"accuracy"}));
  EXPECT_TRUE(throws_tally([&] { tally::extreme(tally::extreme_op::min, bad_nans, sv, &r, &i, opt()); },
                           errc::invalid_argument, {"nan_policy"}));
  // A memory declaration outside tally::memory (before: memory 5 or 9 was read as unknown).
  const auto bad_mem = static_cast<tally::memory>(5);
  EXPECT_TRUE(throws_tally([&] { tally::reduce(sum, {bx.data(), 6, dtype::float64, bad_mem}, {}, &r, opt()); },
                           errc::invalid_argument, {"x", "memory", "5"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce(sum, {nullptr, 0, dtype::float64, static_cast<tally::memory>(-1)}, {}, &r, opt()); },
                           errc::invalid_argument, {"memory", "-1"}))
      << "even with no elements";
  EXPECT_TRUE(throws_tally([&] { tally::reduce(sum, tally::strided_ref{bx.data(), 3, 2, dtype::float64, bad_mem}, &r,
                                               dtype::float64, opt()); },
                           errc::invalid_argument, {"memory", "5"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis(sum, m, 0, {o3.data(), 3, dtype::float64, bad_mem}, opt()); },
                           errc::invalid_argument, {"out", "memory", "5"}));
  EXPECT_EQ(o3.read(), std::vector<double>(3, 0.0)) << "nothing written";
}

// Before: a length whose bytes overflow (n * sizeof(T) past 2^63) or run past the top of the
// address space was read: a segfault (or, for INT64_MAX doubles, a silent return).
TEST_P(Misuse, ViewsRunningPastTheAddressSpaceAreRefused) {
  auto bx = put(std::vector<double>{1, 2, 3, 4});
  const double* p = bx.data();
  const auto* top = reinterpret_cast<const double*>(std::numeric_limits<std::uintptr_t>::max() - 63);
  for (tally::view<const double> v : {tally::view<const double>{p, std::numeric_limits<std::int64_t>::max()},
                                      tally::view<const double>{p, std::int64_t(1) << 61},
                                      tally::view<const double>{top, 100}}) {
    SCOPED_TRACE("size " + std::to_string(v.size));
    EXPECT_TRUE(throws_tally([&] { return tally::sum<double>(v, opt()); }, errc::invalid_argument, {"x", "address space"}));
    EXPECT_TRUE(throws_tally([&] { return tally::dot<double>(v, v, opt()); }, errc::invalid_argument, {"address space"}));
    EXPECT_TRUE(throws_tally([&] { return tally::mean<double>(v, opt()); }, errc::invalid_argument, {"address space"}));
    EXPECT_TRUE(throws_tally([&] { return tally::max<double>(v, opt()); }, errc::invalid_argument, {"address space"}));
    EXPECT_TRUE(throws_tally([&] { return tally::count_nonzero<double>(v, opt()); }, errc::invalid_argument,
                             {"address space"}));
    EXPECT_TRUE(throws_tally([&] { return tally::var<double>(v, 0, opt()); }, errc::invalid_argument, {"address space"}));
    EXPECT_TRUE(throws_tally([&] { return tally::partial_sum<double>(v, opt()); }, errc::invalid_argument,
                             {"address space"}));
    tally::view<double> w{const_cast<double*>(v.data), v.size};
    EXPECT_TRUE(throws_tally([&] { tally::add<double>(v, v, w, opt()); }, errc::invalid_argument, {"address space"}));
    EXPECT_TRUE(throws_tally([&] { tally::axpy<double>(2.0, v, w, opt()); }, errc::invalid_argument, {"address space"}));
    EXPECT_TRUE(throws_tally([&] { tally::scale<double>(2.0, w, opt()); }, errc::invalid_argument, {"address space"}));
    const std::int64_t offsets[2] = {0, v.size};
    double out = 0;
    EXPECT_TRUE(throws_tally([&] { tally::reduce_segments(tally::reduce_op::sum, {v.data, v.size, dtype::float64}, offsets, 1,
                                                          {&out, 1, dtype::float64}, opt()); },
                             errc::invalid_argument, {"address space"}));
  }
  EXPECT_EQ(tally::sum<double>(bx.in(), opt()), 10.0) << "an ordinary view still works";
}

// Before: a strided view or matrix whose negative stride reaches below address 0 (element 1 at
// 2^61 bytes below data) was read: a bus error, where the 1-D views' equivalent wrap is refused.
TEST_P(Misuse, StridesReachingBelowAddressZeroAreRefused) {
  auto bx = put(std::vector<double>{1, 2, 3, 4});
  const std::int64_t down = -(std::int64_t(1) << 58);  // 2^61 bytes: below 0 from any user address
  double r = 0;
  std::int64_t i = 0;
  const tally::strided<double> sv{bx.data(), 2, down};
  EXPECT_TRUE(throws_tally([&] { return tally::sum_strided<double>(sv, opt()); }, errc::invalid_argument,
                           {"below data", "address 0"}));
  EXPECT_TRUE(throws_tally([&] { return tally::mean_strided<double>(sv, opt()); }, errc::invalid_argument, {"address 0"}));
  EXPECT_TRUE(throws_tally([&] { tally::extreme(tally::extreme_op::max, nan_policy::propagate,
                                                tally::strided_ref{bx.data(), 2, down, dtype::float64}, &r, &i, opt()); },
                           errc::invalid_argument, {"address 0"}));
  const tally::matrix<double> rows_down{bx.data(), 2, 1, down, 1}, cols_down{bx.data(), 1, 2, 1, down};  // (2, 1), (1, 2)
  for (const auto& m : {rows_down, cols_down})
    for (int axis : {0, 1}) {
      SCOPED_TRACE("shape (" + std::to_string(m.rows) + ", " + std::to_string(m.cols) + "), axis " + std::to_string(axis));
      const std::int64_t outputs = axis == 0 ? m.cols : m.rows;
      buffer<double> out(b(), static_cast<std::size_t>(outputs), 0.0);
      buffer<std::int64_t> idx(b(), static_cast<std::size_t>(outputs), std::int64_t(0));
      EXPECT_TRUE(throws_tally([&] { tally::sum_along<double, double>(m, axis, out.out(), opt()); }, errc::invalid_argument,
                               {"below data", "address 0"}));
      EXPECT_TRUE(throws_tally([&] { tally::extreme_along<double, false>(m, axis, out.out(), idx.out(), nan_policy::propagate,
                                                                         opt()); },
                               errc::invalid_argument, {"address 0"}));
      EXPECT_EQ(out.read(), std::vector<double>(static_cast<std::size_t>(outputs), 0.0)) << "nothing written";
    }
  const tally::strided<double> back{bx.data() + 3, 4, -1};
  EXPECT_EQ(tally::sum_strided<double>(back, opt()), 10.0) << "an ordinary negative stride still works";
}

// Before: an unknown result dtype printed "a float64 sum cannot produce a ? result", the
// strided int64 overflow named "output 0", and host memory declared device memory to the CPU
// transform_reduce said "x is in CUDA device memory".
TEST(MisuseHost, MessagesNameWhatIsWrong) {
  std::vector<double> x{1, 2, 3};
  double r = 0;
  tally::options cpu;
  cpu.backend = backend::cpu;
  EXPECT_TRUE(throws_tally([&] { tally::reduce(tally::reduce_op::sum, {x.data(), 3, dtype::float64}, {}, &r,
                                               static_cast<dtype>(99), cpu); },
                           errc::invalid_argument, {"a float64 sum cannot produce an unknown dtype (value 99) result"}));
  std::vector<std::int64_t> big{std::int64_t(1) << 62, std::int64_t(1) << 62, std::int64_t(1) << 62};
  std::int64_t s = 0;
  try {
    tally::reduce(tally::reduce_op::sum, tally::strided_ref{big.data(), 3, 1, dtype::int64}, &s, dtype::int64, cpu);
    ADD_FAILURE() << "no overflow";
  } catch (const tally::error& e) {
    EXPECT_EQ(e.code(), errc::overflow);
    EXPECT_EQ(std::string(e.what()).find("output"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the exact int64 sum does not fit in int64"), std::string::npos) << e.what();
  }
  auto id = [](double v) { return v; };
  auto plus = [](double a, double b) { return a + b; };
  // (with no usable GPU the declaration cannot be true either: the cuda backend's no-GPU error,
  // as empty device arrays and DLPack device tensors get; sixty-first session)
  if (tally::cuda_available())
    EXPECT_TRUE(throws_tally([&] { return tally::transform_reduce<double>({x.data(), 3, tally::memory::device}, 0.0, id, plus); },
                             errc::wrong_memory, {"declared device memory", "does not know it"}));
  else
    EXPECT_TRUE(throws_tally([&] { return tally::transform_reduce<double>({x.data(), 3, tally::memory::device}, 0.0, id, plus); },
                             errc::no_gpu, {"declared device memory", "no usable CUDA GPU"}));
}

// A strided view of 2^40 elements of stride 0 passes every check (it reads one element), but the
// CPU backend reads the narrow types through a widened copy it cannot allocate: a tally::error
// naming it (sixty-first session: std::bad_alloc escaped, which a caller catching
// tally::error, as documented, did not catch).
TEST(MisuseHost, AWidenedCopyThatCannotBeAllocatedIsATallyError) {
  tally::options cpu;
  cpu.backend = backend::cpu;
  const std::int64_t n = std::int64_t(1) << 40;
  const std::uint64_t u = 1;
  const std::int8_t b = 1;
  std::uint64_t su = 0;
  EXPECT_TRUE(throws_tally([&] { tally::reduce(tally::reduce_op::sum, tally::strided_ref{&u, n, 0, dtype::uint64, tally::memory::host}, &su, dtype::uint64, cpu); },
                           errc::invalid_argument, {"cannot allocate", "uint64"}));
  double mean = 0;
  EXPECT_TRUE(throws_tally([&] { tally::mean(tally::strided_ref{&b, n, 0, dtype::int8, tally::memory::host}, &mean, dtype::float64, cpu); },
                           errc::invalid_argument, {"cannot allocate", "int8"}));
}

TEST(MisuseHost, TransformReduceViewPastTheAddressSpaceIsRefused) {
  std::vector<double> x{1, 2, 3};
  auto id = [](double v) { return v; };
  auto plus = [](double a, double b) { return a + b; };
  EXPECT_TRUE(throws_tally([&] { return tally::transform_reduce<double>({x.data(), std::int64_t(1) << 61}, 0.0, id, plus); },
                           errc::invalid_argument, {"address space"}));
  EXPECT_EQ(tally::transform_reduce<double>(x, 0.0, id, plus), 6.0);
  EXPECT_EQ(tally::transform_reduce<double>({nullptr, 0}, 5.0, id, plus), 5.0) << "empty: the identity";
}

// Before: outputs overlapping x (or the offsets, or each other) were written while x was still
// being read: the 2x4 row sums with out = row 1 gave {10, 31} instead of {10, 26}; a segment
// sum written over the offsets made the next segment's bounds garbage.
TEST_P(Misuse, ShapeOutputsMayNotOverlapTheirInputs) {
  auto bx = put(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0});
  const auto x = tally::matrix<double>::row_major(bx.data(), 2, 4);
  const std::vector<std::string> words{"overlaps", "x"};
  // per-row sums into row 1, per-column sums into the matrix's last elements
  EXPECT_TRUE(throws_tally([&] { tally::sum_along<double, double>(x, 1, tally::view<double>{bx.data() + 4, 2}, opt()); },
                           errc::invalid_argument, words));
  EXPECT_TRUE(throws_tally([&] { tally::sum_along<double, double>(x, 0, tally::view<double>{bx.data() + 5, 4}, opt()); },
                           errc::invalid_argument, words));
  EXPECT_TRUE(throws_tally([&] { tally::mean_along<double, double>(x, 1, tally::view<double>{bx.data(), 2}, opt()); },
                           errc::invalid_argument, words));
  // negative strides: x spans below its data pointer
  const tally::matrix<double> rev{bx.data() + 7, 2, 4, -4, -1};
  EXPECT_TRUE(throws_tally([&] { tally::sum_along<double, double>(rev, 1, tally::view<double>{bx.data(), 2}, opt()); },
                           errc::invalid_argument, words));
  // values and indices sharing memory
  buffer<std::int64_t> both(b(), 4, std::int64_t(0));
  auto bi = put(std::vector<std::int64_t>{5, 1, 7, 2, 8, 3, 9, 4});
  const auto xi = tally::matrix<std::int64_t>::row_major(bi.data(), 2, 4);
  EXPECT_TRUE(throws_tally([&] { tally::extreme_along<std::int64_t, true>(xi, 0, both.out(), both.out(), nan_policy::propagate, opt()); },
                           errc::invalid_argument, {"values", "indices"}));
  // segments: out over x, out over the offsets
  auto off = put(std::vector<std::int64_t>{0, 3, 6});
  const array_ref flat{bx.data(), 6, dtype::float64};
  EXPECT_TRUE(throws_tally([&] { tally::reduce_segments(tally::reduce_op::sum, flat, off.data(), 2,
                                                        {bx.data() + 3, 2, dtype::float64}, opt()); },
                           errc::invalid_argument, words));
  auto xs = put(std::vector<std::int64_t>{10, 20, 30, 40, 50, 60});
  auto off6 = put(std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(throws_tally([&] { tally::reduce_segments(tally::reduce_op::sum, {xs.data(), 6, dtype::int64}, off6.data(), 6,
                                                        {off6.data() + 1, 6, dtype::int64}, opt()); },
                           errc::invalid_argument, {"overlaps", "offsets"}));
  EXPECT_EQ(bx.read(), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0})) << "nothing written";
  EXPECT_EQ(off6.read(), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
  // Touching is not overlapping: outputs right after x's last element.
  tally::sum_along<double, double>(x, 1, tally::view<double>{bx.data() + 8, 2}, opt());
  EXPECT_EQ(bx.read(8, 2), (std::vector<double>{10, 26}));
  tally::reduce_segments(tally::reduce_op::sum, flat, off.data(), 2, {bx.data() + 6, 2, dtype::float64}, opt());
  EXPECT_EQ(bx.read(6, 2), (std::vector<double>{6, 15}));
}

// Device arrays at addresses that are not a multiple of their element size (a float64 view at
// byte 4 of a byte buffer, as a CuPy .view() of a byte array at an odd offset makes): the GPU
// reads elements only at aligned addresses, and such a read faulted with a misaligned address
// and lost the CUDA context (every later call of the process failed). Each is now
// errc::invalid_argument naming the argument, before anything is launched, and a good call
// after them still runs. Covered: 1-D sum and dot, add's out, rows of a matrix, segments'
// x, offsets, values and indices, and the stream-ordered 1-D result and status words
// (cuda::transform_reduce: tests/transform_cuda.cu).
TEST(MisuseGpu, MisalignedDeviceArraysAreRefusedAndTheContextLives) {
  TT_REQUIRE_BACKEND(backend::cuda);
  const std::vector<double> v{1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> offs{0, 3, 6};
  std::vector<std::uint8_t> bytes(128, 0);
  std::memcpy(bytes.data() + 4, v.data(), 48);      // x: 6 float64 at byte 4
  std::memcpy(bytes.data() + 60, offs.data(), 24);  // offsets: 3 int64 at byte 60
  buffer<std::uint8_t> raw(backend::cuda, bytes);
  auto* base = raw.data();
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(base) % 16, 0u);
  const auto* x4 = reinterpret_cast<const double*>(base + 4);
  const auto* off4 = reinterpret_cast<const std::int64_t*>(base + 60);
  tally::options gpu;
  gpu.backend = backend::cuda;
  const std::vector<std::string> misaligned{"not a multiple"};
  auto refused = [&](auto&& call, const char* name) {
    std::vector<std::string> words = misaligned;
    words.push_back(name);
    return throws_tally(call, errc::invalid_argument, words);
  };
  buffer<double> good(backend::cuda, v);
  buffer<std::int64_t> good_off(backend::cuda, offs);
  buffer<double> out(backend::cuda, 8, 0.0);
  buffer<std::int64_t> idx(backend::cuda, 4, std::int64_t(0));
  EXPECT_TRUE(refused([&] { (void)tally::sum<double>(tally::view<const double>{x4, 6}, gpu); }, "x"));
  EXPECT_TRUE(refused([&] { (void)tally::dot<double>(good.in(), tally::view<const double>{x4, 6}, gpu); }, "y"));
  EXPECT_TRUE(refused([&] { tally::add<double>(good.in(), good.in(), tally::view<double>{reinterpret_cast<double*>(base + 4), 6}, gpu); },
                      "out"));
  const tally::matrix_ref m4{x4, 2, 3, 3, 1, dtype::float64, tally::memory::device};
  EXPECT_TRUE(refused([&] { tally::reduce_axis(tally::reduce_op::sum, m4, 1, {out.data(), 2, dtype::float64}, gpu); }, "x"));
  const array_ref xs{good.data(), 6, dtype::float64};
  EXPECT_TRUE(refused([&] { tally::reduce_segments(tally::reduce_op::sum, {x4, 6, dtype::float64}, good_off.data(), 2,
                                                   {out.data(), 2, dtype::float64}, gpu); }, "x"));
  EXPECT_TRUE(refused([&] { tally::reduce_segments(tally::reduce_op::sum, xs, off4, 2, {out.data(), 2, dtype::float64}, gpu); },
                      "offsets"));
  EXPECT_TRUE(refused([&] { tally::reduce_segments(tally::reduce_op::sum, xs, good_off.data(), 2,
                                                   {base + 4, 2, dtype::float64}, gpu); }, "out"));
  EXPECT_TRUE(refused([&] { tally::extreme_segments(tally::extreme_op::max, nan_policy::propagate, xs, good_off.data(), 2,
                                                    {out.data(), 2, dtype::float64}, {base + 4, 2, dtype::int64}, gpu); },
                      "indices"));
  EXPECT_TRUE(throws_tally([&] { tally::reduce_async(tally::reduce_op::sum, xs, {}, base + 4, nullptr, gpu); },
                           errc::invalid_argument, {"result", "not a multiple"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce_async(tally::reduce_op::sum, xs, {}, out.data(), reinterpret_cast<int*>(base + 2), gpu); },
                           errc::invalid_argument, {"status", "not a multiple"}));
  EXPECT_TRUE(throws_tally([&] { tally::add_async(xs, xs, {out.data(), 6, dtype::float64}, reinterpret_cast<int*>(base + 2), gpu); },
                           errc::invalid_argument, {"status", "not a multiple"}));
  EXPECT_TRUE(throws_tally([&] { tally::partial_async(tally::reduce_op::sum, xs, {}, reinterpret_cast<std::int64_t*>(base + 4), gpu); },
                           errc::invalid_argument, {"state_device", "not a multiple"}));
  // nothing was written, and the context still runs work
  EXPECT_EQ(raw.read(), bytes);
  EXPECT_EQ(tally::sum<double>(good.in(), gpu), 21.0);
  tally::reduce_segments(tally::reduce_op::sum, xs, good_off.data(), 2, {out.data(), 2, dtype::float64}, gpu);
  EXPECT_EQ(out.read(0, 2), (std::vector<double>{6, 15}));
}

// Before: a call with no outputs (a matrix with no columns reduced along axis 0, or no
// segments) and both outputs empty was errc::null_pointer ("neither values nor indices").
TEST_P(Misuse, ShapeCallsWithNoOutputsAcceptEmptyOutputs) {
  auto bx = put(std::vector<double>{1, 2, 3});
  const auto none = tally::matrix<double>::row_major(bx.data(), 3, 0);
  tally::extreme_along<double, false>(none, 0, {}, {}, nan_policy::propagate, opt());
  tally::sum_along<double, double>(none, 0, {}, opt());
  auto off = put(std::vector<std::int64_t>{0});
  tally::segment_extreme<double, true>({nullptr, 0}, off.in(), {}, {}, nan_policy::omit, opt());
  // With outputs, giving neither is still an error.
  EXPECT_TRUE(throws_tally([&] { tally::extreme_along<double, false>(tally::matrix<double>::row_major(bx.data(), 1, 3), 0, {}, {},
                                                                     nan_policy::propagate, opt()); },
                           errc::null_pointer, {"neither"}));
  // Zero rows: per-column results of nothing.
  buffer<double> v(b(), 3, 7.0);
  buffer<std::int64_t> i(b(), 3, std::int64_t(7));
  tally::extreme_along<double, false>(tally::matrix<double>::row_major(bx.data(), 0, 3), 0, v.out(), i.out(),
                                      nan_policy::propagate, opt());
  EXPECT_EQ(v.read(), std::vector<double>(3, std::numeric_limits<double>::infinity()));
  EXPECT_EQ(i.read(), std::vector<std::int64_t>(3, -1));
}

// Before: rows * cols was computed with signed overflow (undefined behaviour) and the call
// then failed on the output length; the stride of an extent-1 axis (which is never stepped)
// reached the backends, where INT64_MIN was negated.
TEST_P(Misuse, MatrixExtentsAndUnusedStrides) {
  auto bx = put(std::vector<double>{1, 2, 3, 4});
  buffer<double> out(b(), 4, 0.0);
  const tally::matrix<double> huge{bx.data(), std::int64_t(1) << 32, std::int64_t(1) << 32, 0, 0};
  EXPECT_TRUE(throws_tally([&] { tally::sum_along<double, double>(huge, 0, out.out(), opt()); }, errc::invalid_argument,
                           {"rows * cols", "int64"}));
  const tally::matrix<double> one_row{bx.data(), 1, 4, std::numeric_limits<std::int64_t>::min(), 1};
  tally::sum_along<double, double>(one_row, 0, out.out(), opt());
  EXPECT_EQ(out.read(), (std::vector<double>{1, 2, 3, 4}));
  const tally::matrix<double> one_col{bx.data(), 4, 1, 1, std::numeric_limits<std::int64_t>::min()};
  buffer<double> one(b(), 1, 0.0);
  tally::sum_along<double, double>(one_col, 0, one.out(), opt());
  EXPECT_EQ(one.read(), std::vector<double>{10});
  buffer<double> four(b(), 4, 0.0);
  tally::sum_along<double, double>(one_col, 1, four.out(), opt());
  EXPECT_EQ(four.read(), (std::vector<double>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace tt
