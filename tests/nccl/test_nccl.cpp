// tally::nccl, one process driving every GPU of the machine (ncclCommInitAll, group calls):
// the data split unevenly over the GPUs must give, bit for bit, the single-GPU result over the
// whole array and the CPU backend's (which CI checks against MPFR). Skipped without a GPU.
// NCCL_NVLS_ENABLE=0 is set before any communicator exists.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <vector>

#include "../support.hpp"
#include "nccl_support.hpp"
#include "tally/nccl.hpp"

namespace tt {
namespace {

using namespace nccl_test;
namespace tn = tally::nccl;

class NcclGroup : public ::testing::Test {
 protected:
  void SetUp() override {
    ndev_ = gpu_count();
    if (ndev_ == 0) GTEST_SKIP() << "no CUDA GPU";
    comms_.resize(ndev_);
    streams_.resize(ndev_);
    ASSERT_EQ(ncclCommInitAll(comms_.data(), ndev_, nullptr), ncclSuccess);
    for (int d = 0; d < ndev_; ++d) {
      cuda_ok(cudaSetDevice(d), "cudaSetDevice");
      cuda_ok(cudaStreamCreateWithFlags(&streams_[d], cudaStreamNonBlocking), "cudaStreamCreate");
    }
  }
  void TearDown() override {
    for (int d = 0; d < static_cast<int>(comms_.size()); ++d) {
      cudaSetDevice(d);
      cudaStreamDestroy(streams_[d]);
      ncclCommDestroy(comms_[d]);
    }
  }
  // The parts of x (and y) on the GPUs, split by `cuts`.
  template <class T> struct split {
    std::vector<std::unique_ptr<on_gpu<T>>> xs, ys;
    std::vector<tn::part<T>> parts;
  };
  template <class T> split<T> spread(const std::vector<T>& x, const std::vector<T>& y, const std::vector<std::size_t>& c) {
    split<T> s;
    for (int d = 0; d < ndev_; ++d) {
      s.xs.push_back(std::make_unique<on_gpu<T>>(d, x, c[d], c[d + 1]));
      s.ys.push_back(std::make_unique<on_gpu<T>>(d, y, c[d], c[d + 1]));
      s.parts.push_back({comms_[d], {s.xs.back()->data(), s.xs.back()->size()}, streams_[d],
                         {s.ys.back()->data(), s.ys.back()->size()}});
    }
    return s;
  }
  int ndev_ = 0;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
};

template <class T> void same_bits_as_one_gpu(int ndev, auto spread) {
  const std::size_t n = (1 << 22) + 12345;
  auto x = wide_data<T>(n, 3, 60), y = wide_data<T>(n, 4, 20);
  tally::options cpu;
  cpu.backend = tally::backend::cpu;
  const T s1 = tally::sum<T>(x, cpu), d1 = tally::dot<T>(x, y, cpu);
  const T m1 = tally::mean<T, T>(x, cpu), q1 = tally::norm2<T, T>(x, cpu);
  on_gpu<T> whole(0, x, 0, n), wy(0, y, 0, n);  // one GPU, the whole array
  EXPECT_TRUE(same_bits(tally::sum<T>({whole.data(), whole.size()}), s1));
  EXPECT_TRUE(same_bits(tally::dot<T>({whole.data(), whole.size()}, {wy.data(), wy.size()}), d1));
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE(::testing::Message() << ndev << " GPUs, split variant " << variant);
    auto sp = spread(x, y, cuts_for(n, ndev, variant));
    std::span<const tn::part<T>> p(sp.parts);
    EXPECT_TRUE(same_bits(tn::sum<T>(p), s1));
    EXPECT_TRUE(same_bits(tn::dot<T>(p), d1));
    EXPECT_TRUE(same_bits(tn::mean<T>(p), m1));
    EXPECT_TRUE(same_bits(tn::norm2<T>(p), q1));
    EXPECT_TRUE(same_bits((tn::sum<T, double>(p)), tally::sum<T, double>(x, cpu)));
    double fast = tn::sum<T, double>(p, tally::accuracy::fast), exact = tally::sum<T, double>(x, cpu);
    double mag = 0;
    for (T v : x) mag += std::fabs(static_cast<double>(v));
    EXPECT_LE(std::fabs(fast - exact), 1e-9 * mag);  // the fast path's bound, loosely
    auto mn = tn::extreme_of<T, false>(p);
    std::int64_t want = tally::argmin<T>(x, cpu);
    EXPECT_EQ(mn.index, want);
    EXPECT_TRUE(same_bits(mn.value, x[want]));
  }
}

TEST_F(NcclGroup, Float64PartsGiveTheOneGpuBits) {
  same_bits_as_one_gpu<double>(ndev_, [&](auto& x, auto& y, auto c) { return spread<double>(x, y, c); });
}
TEST_F(NcclGroup, Float32PartsGiveTheOneGpuBits) {
  same_bits_as_one_gpu<float>(ndev_, [&](auto& x, auto& y, auto c) { return spread<float>(x, y, c); });
}

TEST_F(NcclGroup, StatesMergeOnTheDeviceInsideAGroupCall) {
  // The public building block: partial state + ncclAllReduce, enqueued inside a group.
  const std::size_t n = 1000003;
  auto x = wide_data<double>(n, 5, 300);
  x[17] = std::numeric_limits<double>::infinity();
  tally::options cpu;
  cpu.backend = tally::backend::cpu;
  auto sp = spread<double>(x, x, cuts_for(n, ndev_, 0));
  std::vector<std::int64_t*> st(ndev_);
  for (int d = 0; d < ndev_; ++d) {
    cuda_ok(cudaSetDevice(d), "cudaSetDevice");
    cuda_ok(cudaMalloc(reinterpret_cast<void**>(&st[d]), tn::state_words * sizeof(std::int64_t)), "cudaMalloc");
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < ndev_; ++d)
    tn::allreduce_state_async(comms_[d], tally::reduce_op::sum,
                              {sp.parts[d].x.data, sp.parts[d].x.size, tally::dtype::float64}, {}, st[d], streams_[d]);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  for (int d = 0; d < ndev_; ++d) {
    tally::exact_state s;
    cuda_ok(cudaSetDevice(d), "cudaSetDevice");
    cuda_ok(cudaStreamSynchronize(streams_[d]), "cudaStreamSynchronize");
    cuda_ok(cudaMemcpy(s.words.data(), st[d], sizeof(std::int64_t) * tally::exact_state::size, cudaMemcpyDeviceToHost),
            "cudaMemcpy");
    EXPECT_EQ(tally::round<double>(s), std::numeric_limits<double>::infinity());
    EXPECT_EQ(s.terms(), static_cast<std::int64_t>(n));
    cudaFree(st[d]);
  }
  x[17] = 1.0;
  auto sp2 = spread<double>(x, x, cuts_for(n, ndev_, 1));
  EXPECT_TRUE(same_bits(tn::sum<double>(std::span<const tn::part<double>>(sp2.parts)), tally::sum<double>(x, cpu)));
}

}  // namespace
}  // namespace tt

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // NVLink multicast off (docs/distributed.md)
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
