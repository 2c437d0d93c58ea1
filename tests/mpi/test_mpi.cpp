// tally::mpi, run by CTest under `mpirun -np 2` and `-np 4`: the Mpi suite on the CPU backend
// (mpi_np2, mpi_np4), the MpiCuda suite with every rank's part in device memory on the CUDA
// backend (mpi_cuda_np2, mpi_cuda_np4; each rank on GPU node-local rank modulo the GPU count,
// so ranks share a GPU when there are fewer GPUs than ranks; skipped on every rank when any
// rank has no GPU). Every rank builds the same global data; sub-communicators of 1, 2, ..., P
// ranks each take it in uneven parts (empty parts included) and must return the same bits as
// tally's single-process result and the MPFR oracle (cuda: the single-process cpu bits, and
// the single-process cuda bits of the whole array on one GPU). Assertions are non-fatal
// (EXPECT) so every rank takes part in every collective; only rank 0 prints; the exit status
// is failed if any rank failed.
#include <gtest/gtest.h>
#include <mpi.h>
#if defined(TALLY_TEST_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "../exact_oracle.hpp"
#include "../support.hpp"
#include "tally/mpi.hpp"

namespace tt {
namespace {

using tally::reduce_op;
namespace tm = tally::mpi;

int world_rank() {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// The first k ranks of the world (MPI_COMM_NULL on the others).
struct sub_comm {
  MPI_Comm comm = MPI_COMM_NULL;
  explicit sub_comm(int k) { MPI_Comm_split(MPI_COMM_WORLD, world_rank() < k ? 0 : MPI_UNDEFINED, world_rank(), &comm); }
  ~sub_comm() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
  sub_comm(const sub_comm&) = delete;
  sub_comm& operator=(const sub_comm&) = delete;
};

// Uneven cut points for k ranks: cuts[r], cuts[r + 1] bound rank r's part; `variant` picks
// one of several splits, some with empty parts (all the data on one rank, say).
std::vector<std::size_t> cuts_for(std::size_t n, int k, int variant) {
  std::vector<std::size_t> c(static_cast<std::size_t>(k) + 1, 0);
  c[k] = n;
  std::mt19937_64 g(1000 + 17 * k + variant);
  for (int r = 1; r < k; ++r) c[r] = std::uniform_int_distribution<std::size_t>(0, n)(g);
  if (variant == 1 && k > 1) c[1] = 0;   // rank 0 empty
  if (variant == 2 && k > 1) c[k - 1] = n;  // last rank empty
  if (variant == 3)
    for (int r = 1; r < k; ++r) c[r] = n;  // everything on rank 0
  std::sort(c.begin(), c.end());
  return c;
}

// Rank r's part of v: a view into v (host memory).
template <class T> tally::view<const T> slice(const std::vector<T>& v, const std::vector<std::size_t>& c, int r) {
  return {v.data() + c[r], static_cast<std::int64_t>(c[r + 1] - c[r]), tally::memory::host};
}

template <class T> std::vector<T> wide_data(std::size_t n, std::uint64_t seed, int emax) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> m(1.0, 2.0);
  std::uniform_int_distribution<int> k(-emax, emax), s(0, 1);
  std::vector<T> v(n);
  for (auto& e : v) e = static_cast<T>((s(g) ? -1.0 : 1.0) * std::ldexp(m(g), k(g)));
  return v;
}

tally::options cpu() {
  tally::options o;
  o.backend = tally::backend::cpu;
  return o;
}

// Runs f(comm, rank, cuts) for every sub-communicator size k = 1..P and split variant.
template <class F> void for_each_split(std::size_t n, F&& f) {
  for (int k = 1; k <= world_size(); ++k) {
    sub_comm sc(k);
    for (int variant = 0; variant < 4; ++variant) {
      if (sc.comm == MPI_COMM_NULL) continue;
      auto c = cuts_for(n, k, variant);
      SCOPED_TRACE(::testing::Message() << "ranks " << k << " split variant " << variant);
      f(sc.comm, world_rank(), c);
    }
  }
}

template <class T> void sums_are_the_same_bits(std::size_t n) {
  auto x = wide_data<T>(n, 7, 60), y = wide_data<T>(n, 8, 25);
  const T s1 = tally::sum<T>(x, cpu()), d1 = tally::dot<T>(x, y, cpu());
  const T m1 = tally::mean<T, T>(x, cpu()), q1 = tally::norm2<T, T>(x, cpu());
  const double sw = tally::sum<T, double>(x, cpu());
  if (oracle::have_oracle()) {
    EXPECT_TRUE(same_bits(s1, oracle::exact<T, T>(x, {})));
    EXPECT_TRUE(same_bits(d1, oracle::exact<T, T>(x, y)));
    EXPECT_TRUE(same_bits(m1, oracle::exact<T, T>(x, {}, oracle::finish::mean)));
    EXPECT_TRUE(same_bits(q1, oracle::exact<T, T>(x, {}, oracle::finish::sqrt, true)));
  }
  for_each_split(n, [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    auto px = slice(x, c, r), py = slice(y, c, r);
    EXPECT_TRUE(same_bits(tm::sum<T>(comm, px, cpu()), s1));
    EXPECT_TRUE(same_bits(tm::dot<T>(comm, px, py, cpu()), d1));
    EXPECT_TRUE(same_bits(tm::mean<T>(comm, px, cpu()), m1));
    EXPECT_TRUE(same_bits(tm::norm2<T>(comm, px, cpu()), q1));
    EXPECT_TRUE(same_bits((tm::sum<T, double>(comm, px, cpu())), sw));
    auto rooted = tm::sum<T>(comm, px, 0, cpu());  // only rank 0 of comm receives it
    EXPECT_EQ(rooted.has_value(), r == 0);
    if (rooted) {
      EXPECT_TRUE(same_bits(*rooted, s1));
    }
  });
}

TEST(Mpi, Float64SumDotMeanNormAreTheSameBitsForAnySplit) { sums_are_the_same_bits<double>(100003); }
TEST(Mpi, Float32SumDotMeanNormAreTheSameBitsForAnySplit) { sums_are_the_same_bits<float>(100003); }

TEST(Mpi, IllConditionedSumCancelsAcrossRanks) {
  // 2^80, many small values, then -2^80 far away: only an exact merge keeps the small ones.
  std::vector<double> x = wide_data<double>(4001, 9, 20);
  x[0] = std::ldexp(1.0, 80);
  x[4000] = -std::ldexp(1.0, 80);
  const double want = tally::sum<double>(x, cpu());
  if (oracle::have_oracle()) {
    EXPECT_TRUE(same_bits(want, oracle::exact<double, double>(x, {})));
  }
  for_each_split(x.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    EXPECT_TRUE(same_bits(tm::sum<double>(comm, slice(x, c, r), cpu()), want));
  });
}

TEST(Mpi, SpecialValuesAndSignedZeros) {
  const double inf = std::numeric_limits<double>::infinity();
  for_each_split(6, [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    std::vector<double> zeros{-0.0, -0.0, -0.0, -0.0, -0.0, -0.0};
    EXPECT_TRUE(same_bits(tm::sum<double>(comm, slice(zeros, c, r), cpu()), -0.0));
    std::vector<double> pinf{1, 2, inf, 3, 4, 5};
    EXPECT_TRUE(same_bits(tm::sum<double>(comm, slice(pinf, c, r), cpu()), inf));
    std::vector<double> both{inf, 2, 3, 4, 5, -inf};
    EXPECT_TRUE(std::isnan(tm::sum<double>(comm, slice(both, c, r), cpu())));
    std::vector<double> nan{1, 2, 3, std::nan(""), 5, 6};
    EXPECT_TRUE(std::isnan(tm::mean<double>(comm, slice(nan, c, r), cpu())));
    std::vector<double> none;
    EXPECT_TRUE(same_bits(tm::sum<double>(comm, none, cpu()), 0.0));
    EXPECT_TRUE(std::isnan(tm::mean<double>(comm, none, cpu())));
    EXPECT_TRUE(same_bits(tm::norm2<double>(comm, none, cpu()), 0.0));
  });
}

TEST(Mpi, ExtremesGiveGlobalFirstIndices) {
  // Ties: the minimum -7 appears at global 3, 40 and 77; the maximum 9 at 10 and 90.
  std::vector<double> x(100);
  for (int i = 0; i < 100; ++i) x[i] = (i * 37) % 11 - 3 + 1.0 / 7.0;  // in (-3, 8)
  x[3] = x[40] = x[77] = -7;
  x[10] = x[90] = 9;
  for_each_split(x.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    auto px = slice(x, c, r);
    EXPECT_EQ(tm::min<double>(comm, px, cpu()), -7);
    EXPECT_EQ(tm::argmin<double>(comm, px, cpu()), 3);
    EXPECT_EQ(tm::max<double>(comm, px, cpu()), 9);
    EXPECT_EQ(tm::argmax<double>(comm, px, cpu()), 10);
    auto rooted = tm::extreme_of<double, true>(comm, px, tally::nan_policy::propagate, 0, cpu());
    EXPECT_EQ(rooted.has_value(), r == 0);
    if (rooted) {
      EXPECT_EQ(rooted->index, 10);
    }
  });
  // NaN: propagate gives NaN at the first NaN's global index; omit skips them.
  std::vector<float> y{5, 1, 8, std::nanf(""), 1, 9, std::nanf(""), 0.5f, 9};
  for_each_split(y.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    auto py = slice(y, c, r);
    EXPECT_TRUE(std::isnan(tm::min<float>(comm, py, cpu())));
    EXPECT_EQ(tm::argmax<float>(comm, py, cpu()), 3);
    EXPECT_EQ(tm::nanargmin<float>(comm, py, cpu()), 7);
    EXPECT_EQ(tm::nanargmax<float>(comm, py, cpu()), 5);
    EXPECT_EQ(tm::nanmax<float>(comm, py, cpu()), 9);
  });
  // Integers, and the empty and all-NaN answers.
  std::vector<std::int64_t> z{4, -2, 7, -2, 7};
  std::vector<double> nans(5, std::nan(""));
  for_each_split(z.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    EXPECT_EQ(tm::argmin<std::int64_t>(comm, slice(z, c, r), cpu()), 1);
    EXPECT_EQ(tm::argmax<std::int64_t>(comm, slice(z, c, r), cpu()), 2);
    std::vector<double> empty;
    auto none = tm::extreme_of<double, false>(comm, empty, tally::nan_policy::propagate, cpu());
    EXPECT_EQ(none.index, -1);
    EXPECT_EQ(none.value, std::numeric_limits<double>::infinity());
    auto allnan = tm::extreme_of<double, true>(comm, slice(nans, c, r), tally::nan_policy::omit, cpu());
    EXPECT_EQ(allnan.index, -1);
    EXPECT_TRUE(std::isnan(allnan.value));
    EXPECT_TRUE(throws_tally([&] { tm::nanargmax<double>(comm, slice(nans, c, r), cpu()); }, errc::empty_input, {"NaN"}));
    EXPECT_TRUE(throws_tally([&] { tm::argmin<double>(comm, empty, cpu()); }, errc::empty_input, {"empty"}));
  });
}

TEST(Mpi, IntegersAreExactAndOverflowOnlyGlobally) {
  std::vector<std::int64_t> x{INT64_MAX, -INT64_MAX, 5, 7, -3, 1};  // no part overflows
  std::vector<std::int64_t> big{INT64_MAX, 0, 0, 0, 0, 1};
  for_each_split(x.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    EXPECT_EQ(tm::sum<std::int64_t>(comm, slice(x, c, r), cpu()), 10);
    EXPECT_TRUE(same_bits(tm::mean<std::int64_t>(comm, slice(x, c, r), cpu()), 10.0 / 6.0));
    EXPECT_TRUE(throws_tally([&] { tm::sum<std::int64_t>(comm, slice(big, c, r), cpu()); }, errc::overflow, {"overflow"}));
  });
}

TEST(Mpi, FastModeIsWithinItsBoundButNotPromisedBitwise) {
  auto x = wide_data<double>(50000, 5, 3);
  for (auto& v : x) v = std::fabs(v);  // condition number 1: the relative bound applies
  const double exact = tally::sum<double>(x, cpu());
  tally::options fast = cpu();
  fast.accuracy = tally::accuracy::fast;
  for_each_split(x.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    double got = tm::sum<double>(comm, slice(x, c, r), fast);
    EXPECT_LE(std::fabs(got - exact), 1e-11 * exact) << got << " vs " << exact;
  });
}

TEST(Mpi, ALocalFailureReachesEveryRankWithoutAHang) {
  sub_comm sc(world_size());
  const int r = world_rank();
  // The last rank passes a null pointer with a length: it throws null_pointer; the others
  // learn of it through the collective.
  std::vector<double> x(10, 1.0);
  tally::view<const double> mine = r == world_size() - 1 ? tally::view<const double>{nullptr, 5} : tally::view<const double>(x);
  EXPECT_TRUE(throws_tally([&] { tm::sum<double>(sc.comm, mine, cpu()); }, errc::null_pointer));
  EXPECT_TRUE(throws_tally([&] { tm::argmin<double>(sc.comm, mine, cpu()); }, errc::null_pointer));
  // Different element types on different ranks.
  std::vector<float> f(3, 1.0f);
  std::vector<double> d(3, 1.0);
  std::int64_t out = 0;
  auto call = [&] {
    if (r % 2 == 0) tm::mean(sc.comm, {f.data(), 3, tally::dtype::float32, tally::memory::host}, &out, tally::dtype::float64, tm::all, cpu());
    else tm::mean(sc.comm, {d.data(), 3, tally::dtype::float64, tally::memory::host}, &out, tally::dtype::float64, tm::all, cpu());
  };
  if (world_size() > 1) {
    EXPECT_TRUE(throws_tally(call, errc::invalid_argument, {"different element types"}));
  }
  EXPECT_TRUE(throws_tally([&] { tm::sum<double>(sc.comm, x, world_size(), cpu()); }, errc::invalid_argument, {"root"}));
  // The state merge on its own.
  tally::exact_state s = tally::partial_sum<double>(x, cpu());
  tally::exact_state m = tm::merge(sc.comm, s);
  EXPECT_EQ(tally::round<double>(m), 10.0 * world_size());
}


// ---- the CUDA backend: every rank's part in device memory (one GPU per rank, or shared) -----

// Skips on every rank unless every rank can run the CUDA backend (a skip on some ranks only
// would leave the others waiting in a collective).
class MpiCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    int mine = runnable(backend::cuda) ? 1 : 0, every = 0;
    MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!every) GTEST_SKIP() << why_not(backend::cuda) << " (on this rank or another)";
  }
  static tally::options gpu() {
    tally::options o;
    o.backend = backend::cuda;
    return o;
  }
};

// Rank r's part of v copied to device memory (an empty part: a valid pointer, no elements).
template <class T> buffer<T> part_on_gpu(const std::vector<T>& v, const std::vector<std::size_t>& c, int r) {
  return buffer<T>(backend::cuda, std::vector<T>(v.begin() + c[r], v.begin() + c[r + 1]));
}
// A device view of a part, its memory declared (memory::device) or left for tally to find.
template <class T> tally::view<const T> dev(const buffer<T>& b, bool declared) {
  return {b.data(), b.size(), declared ? tally::memory::device : tally::memory::unknown};
}

template <class T> void cuda_sums_are_the_same_bits(std::size_t n) {
  auto x = wide_data<T>(n, 17, 60), y = wide_data<T>(n, 18, 25);
  // The references: one process on the cpu backend, and one process on one GPU.
  const T s1 = tally::sum<T>(x, cpu()), d1 = tally::dot<T>(x, y, cpu());
  const T m1 = tally::mean<T, T>(x, cpu()), q1 = tally::norm2<T, T>(x, cpu());
  const double sw = tally::sum<T, double>(x, cpu());
  const std::int64_t a1 = tally::argmax<T>(x, cpu());
  {
    tally::options o;
    o.backend = backend::cuda;
    buffer<T> gx(backend::cuda, x), gy(backend::cuda, y);
    EXPECT_TRUE(same_bits(tally::sum<T>(gx.in(), o), s1));
    EXPECT_TRUE(same_bits(tally::dot<T>(gx.in(), gy.in(), o), d1));
    EXPECT_TRUE(same_bits((tally::mean<T, T>(gx.in(), o)), m1));
    EXPECT_TRUE(same_bits((tally::norm2<T, T>(gx.in(), o)), q1));
    EXPECT_EQ(tally::argmax<T>(gx.in(), o), a1);
  }
  if (oracle::have_oracle()) {
    EXPECT_TRUE(same_bits(s1, oracle::exact<T, T>(x, {})));
    EXPECT_TRUE(same_bits(d1, oracle::exact<T, T>(x, y)));
  }
  tally::options o;
  o.backend = backend::cuda;
  for_each_split(n, [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    buffer<T> bx = part_on_gpu(x, c, r), by = part_on_gpu(y, c, r);
    const bool declared = r % 2 == 0;  // some ranks declare memory::device, others let tally find it
    auto px = dev(bx, declared), py = dev(by, declared);
    EXPECT_TRUE(same_bits(tm::sum<T>(comm, px, o), s1));
    EXPECT_TRUE(same_bits(tm::dot<T>(comm, px, py, o), d1));
    EXPECT_TRUE(same_bits(tm::mean<T>(comm, px, o), m1));
    EXPECT_TRUE(same_bits(tm::norm2<T>(comm, px, o), q1));
    EXPECT_TRUE(same_bits((tm::sum<T, double>(comm, px, o)), sw));
    EXPECT_EQ(tm::argmax<T>(comm, px, o), a1);
    auto rooted = tm::dot<T>(comm, px, py, 0, o);  // only rank 0 of comm receives it
    EXPECT_EQ(rooted.has_value(), r == 0);
    if (rooted) {
      EXPECT_TRUE(same_bits(*rooted, d1));
    }
  });
}

TEST_F(MpiCuda, Float64SumDotMeanNormArgmaxAreTheSameBitsForAnySplit) { cuda_sums_are_the_same_bits<double>(100003); }
TEST_F(MpiCuda, Float32SumDotMeanNormArgmaxAreTheSameBitsForAnySplit) { cuda_sums_are_the_same_bits<float>(100003); }
// Parts of about 2^20 elements per rank: many blocks per GPU, the exact kernels' full path.
TEST_F(MpiCuda, LargePartsAreTheSameBits) { cuda_sums_are_the_same_bits<double>((std::size_t(1) << 21) + 12345); }

TEST_F(MpiCuda, IllConditionedSumCancelsAcrossRanks) {
  std::vector<double> x = wide_data<double>(4001, 19, 20);
  x[0] = std::ldexp(1.0, 80);
  x[4000] = -std::ldexp(1.0, 80);
  const double want = tally::sum<double>(x, cpu());
  if (oracle::have_oracle()) {
    EXPECT_TRUE(same_bits(want, oracle::exact<double, double>(x, {})));
  }
  for_each_split(x.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    buffer<double> bx = part_on_gpu(x, c, r);
    EXPECT_TRUE(same_bits(tm::sum<double>(comm, dev(bx, true), gpu()), want));
    EXPECT_TRUE(same_bits(tm::mean<double>(comm, dev(bx, true), gpu()), tally::mean<double, double>(x, cpu())));
  });
}

TEST_F(MpiCuda, ExtremesGiveGlobalFirstIndices) {
  std::vector<double> x(1000);
  for (int i = 0; i < 1000; ++i) x[i] = (i * 37) % 11 - 3 + 1.0 / 7.0;  // in (-3, 8)
  x[30] = x[400] = x[777] = -7;
  x[100] = x[900] = 9;
  std::vector<float> y{5, 1, 8, std::nanf(""), 1, 9, std::nanf(""), 0.5f, 9};
  std::vector<std::int32_t> z{4, -2, 7, -2, 7};
  for_each_split(x.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    buffer<double> bx = part_on_gpu(x, c, r);
    EXPECT_EQ(tm::min<double>(comm, dev(bx, true), gpu()), -7);
    EXPECT_EQ(tm::argmin<double>(comm, dev(bx, true), gpu()), 30);
    EXPECT_EQ(tm::max<double>(comm, dev(bx, false), gpu()), 9);
    EXPECT_EQ(tm::argmax<double>(comm, dev(bx, false), gpu()), 100);
  });
  for_each_split(y.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    buffer<float> by = part_on_gpu(y, c, r);
    EXPECT_TRUE(std::isnan(tm::min<float>(comm, dev(by, true), gpu())));
    EXPECT_EQ(tm::argmax<float>(comm, dev(by, true), gpu()), 3);
    EXPECT_EQ(tm::nanargmin<float>(comm, dev(by, true), gpu()), 7);
    EXPECT_EQ(tm::nanargmax<float>(comm, dev(by, true), gpu()), 5);
    EXPECT_EQ(tm::nanmax<float>(comm, dev(by, true), gpu()), 9);
  });
  for_each_split(z.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    buffer<std::int32_t> bz = part_on_gpu(z, c, r);
    EXPECT_EQ(tm::argmin<std::int32_t>(comm, dev(bz, true), gpu()), 1);
    EXPECT_EQ(tm::argmax<std::int32_t>(comm, dev(bz, true), gpu()), 2);
    buffer<double> empty(backend::cuda, std::vector<double>{});
    EXPECT_TRUE(throws_tally([&] { tm::argmin<double>(comm, dev(empty, true), gpu()); }, errc::empty_input, {"empty"}));
  });
}

TEST_F(MpiCuda, IntegersAreExactAndOverflowOnlyGlobally) {
  std::vector<std::int64_t> x{INT64_MAX, -INT64_MAX, 5, 7, -3, 1};
  std::vector<std::int64_t> big{INT64_MAX, 0, 0, 0, 0, 1};
  for_each_split(x.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    buffer<std::int64_t> bx = part_on_gpu(x, c, r), bb = part_on_gpu(big, c, r);
    EXPECT_EQ(tm::sum<std::int64_t>(comm, dev(bx, true), gpu()), 10);
    EXPECT_TRUE(same_bits(tm::mean<std::int64_t>(comm, dev(bx, true), gpu()), 10.0 / 6.0));
    EXPECT_TRUE(throws_tally([&] { tm::sum<std::int64_t>(comm, dev(bb, true), gpu()); }, errc::overflow, {"overflow"}));
  });
}

TEST_F(MpiCuda, RanksOnDifferentBackendsMergeToTheSameBits) {
  // Even ranks on the cpu (host parts), odd ranks on the GPU: the exact states are the same
  // whichever backend made them.
  auto x = wide_data<double>(50001, 21, 60);
  const double want = tally::sum<double>(x, cpu());
  for_each_split(x.size(), [&](MPI_Comm comm, int r, const std::vector<std::size_t>& c) {
    buffer<double> bx = part_on_gpu(x, c, r);
    double got = r % 2 ? tm::sum<double>(comm, dev(bx, true), gpu()) : tm::sum<double>(comm, slice(x, c, r), cpu());
    EXPECT_TRUE(same_bits(got, want));
  });
}

TEST_F(MpiCuda, HostPartsOnTheCudaBackendFailEveryRank) {
  // A host part given to the cuda backend is errc::wrong_memory on its rank, and every rank throws.
  sub_comm sc(world_size());
  std::vector<double> x(10, 1.0);
  buffer<double> bx(backend::cuda, x);
  const bool host = world_rank() == world_size() - 1;
  tally::view<const double> mine = host ? tally::view<const double>{x.data(), 10, tally::memory::host} : dev(bx, true);
  if (host) {
    EXPECT_TRUE(throws_tally([&] { tm::sum<double>(sc.comm, mine, gpu()); }, errc::wrong_memory, {"host memory"}));
  } else {
    EXPECT_TRUE(throws_tally([&] { tm::sum<double>(sc.comm, mine, gpu()); }, errc::wrong_memory));
  }
}

// Each rank's GPU: its node-local rank (MPI_COMM_TYPE_SHARED) modulo the node's GPU count, as
// `tally ... --distributed --backend cuda` picks it. Collective; a no-op without GPUs.
void pick_gpu() {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank(), MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
#if defined(TALLY_TEST_HAVE_CUDA)
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) == cudaSuccess && gpus > 0) cudaSetDevice(local % gpus);
#endif
}

}  // namespace
}  // namespace tt

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  tt::pick_gpu();
  ::testing::InitGoogleTest(&argc, argv);
  if (tt::world_rank() != 0) {  // one report: rank 0's
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (tt::world_rank() == 0 && any && !failed) std::printf("tally_mpi_tests: another rank failed\n");
  MPI_Finalize();
  return any;
}
