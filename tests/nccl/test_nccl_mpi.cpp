// tally::nccl, one process per GPU: run by CTest under `mpirun -np 2` (ncclCommInitRank with
// an id broadcast over MPI). Each rank holds an uneven part of the same global data on its own
// GPU; every result must equal the CPU backend's single-process bits. Skipped (on every rank)
// when the machine has fewer GPUs than ranks. NCCL_NVLS_ENABLE=0 is set before NCCL starts.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <nccl.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "../support.hpp"
#include "nccl_support.hpp"
#include "tally/nccl.hpp"

namespace tt {
namespace {

using namespace nccl_test;
namespace tn = tally::nccl;

int rank_of() {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size_of() {
  int s;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

class NcclRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    int gpus = gpu_count(), fewest = 0;
    MPI_Allreduce(&gpus, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (fewest < size_of()) GTEST_SKIP() << "no CUDA GPU for every rank (" << fewest << " GPUs, " << size_of() << " ranks)";
    dev_ = rank_of();
    cuda_ok(cudaSetDevice(dev_), "cudaSetDevice");
    ncclUniqueId id;
    if (rank_of() == 0) ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ASSERT_EQ(ncclCommInitRank(&comm_, size_of(), id, rank_of()), ncclSuccess);
    cuda_ok(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  void TearDown() override {
    if (comm_) {
      cudaStreamDestroy(stream_);
      ncclCommDestroy(comm_);
    }
  }
  int dev_ = 0;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

template <class T> void check_type(int dev, ncclComm_t comm, cudaStream_t stream) {
  const std::size_t n = (1 << 22) + 999;
  auto x = wide_data<T>(n, 8, 60), y = wide_data<T>(n, 9, 20);
  tally::options cpu;
  cpu.backend = tally::backend::cpu;
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE(::testing::Message() << "split variant " << variant);
    auto c = cuts_for(n, size_of(), variant);
    int r = rank_of();
    on_gpu<T> px(dev, x, c[r], c[r + 1]), py(dev, y, c[r], c[r + 1]);
    tally::view<const T> vx{px.data(), px.size()}, vy{py.data(), py.size()};
    EXPECT_TRUE(same_bits(tn::sum<T>(comm, vx, stream), tally::sum<T>(x, cpu)));
    EXPECT_TRUE(same_bits(tn::dot<T>(comm, vx, vy, stream), tally::dot<T>(x, y, cpu)));
    EXPECT_TRUE(same_bits(tn::mean<T>(comm, vx, stream), (tally::mean<T, T>(x, cpu))));
    EXPECT_TRUE(same_bits(tn::norm2<T>(comm, vx, stream), (tally::norm2<T, T>(x, cpu))));
    EXPECT_EQ(tn::argmax<T>(comm, vx, stream), tally::argmax<T>(x, cpu));
    auto rooted = tn::sum<T>(comm, vx, stream, 1);
    EXPECT_EQ(rooted.has_value(), r == 1);
    if (rooted) {
      EXPECT_TRUE(same_bits(*rooted, tally::sum<T>(x, cpu)));
    }
  }
}

TEST_F(NcclRanks, Float64OnePerGpuGivesTheSingleProcessBits) { check_type<double>(dev_, comm_, stream_); }
TEST_F(NcclRanks, Float32OnePerGpuGivesTheSingleProcessBits) { check_type<float>(dev_, comm_, stream_); }

TEST_F(NcclRanks, ALocalFailureReachesEveryRank) {
  std::vector<double> host(10, 1.0);  // host memory: the CUDA backend refuses it (wrong_memory)
  on_gpu<double> dev(dev_, host, 0, 10);
  tally::view<const double> mine = rank_of() == 0 ? tally::view<const double>{host.data(), 10}
                                                  : tally::view<const double>{dev.data(), dev.size()};
  EXPECT_TRUE(throws_tally([&] { tn::sum<double>(comm_, mine, stream_); }, errc::wrong_memory));
  EXPECT_TRUE(same_bits(tn::sum<double>(comm_, {dev.data(), dev.size()}, stream_), 10.0 * size_of()));
}

}  // namespace
}  // namespace tt

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (tt::rank_of() != 0) {
    auto& l = ::testing::UnitTest::GetInstance()->listeners();
    delete l.Release(l.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
