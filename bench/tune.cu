// tally_tune: sweeps the launch shapes of tally's own kernels (block size, loads in flight,
// blocks per SM) on the GPU it runs on, to choose src/cuda/tuning.hpp's values from
// measurements. Also splits the end-to-end latency of a blocking call into its parts.
//   tally_tune [--quick]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common.cuh"
#include "cuda/kernels.cuh"
#include "tally/ops/reducers.hpp"

using namespace bench;
using tally::cuda::add_kernel;
using tally::cuda::reduce_kernel;

namespace {

struct ctx {
  char* x;
  char* y;
  char* out;
  void* partials;
  unsigned* counter;
  double* res;
  cudaStream_t s;
  int sms;
  std::size_t pool;
};

template <int BLOCK, int U>
void sweep_sum(ctx& c, std::int64_t n, int bps, int reps) {
  using R = tally::ops::sum_reducer<float>;
  const std::size_t bytes = std::size_t(n) * 4, stride = (bytes + 255) / 256 * 256;
  int slots = int(std::max<std::size_t>(1, c.pool / stride));
  std::int64_t nvec = n / 4;
  std::int64_t g = (nvec + std::int64_t(BLOCK) * U - 1) / (std::int64_t(BLOCK) * U);
  unsigned grid = unsigned(std::min<std::int64_t>(g, std::int64_t(c.sms) * bps));
  timer tm(c.s);
  double us = tm.per_call([&](int k) {
    reduce_kernel<R, float, false, 4, BLOCK, U><<<grid, BLOCK, 0, c.s>>>(
        reinterpret_cast<const float*>(c.x + k * stride), nullptr, n, 0,
        static_cast<double*>(c.partials), c.counter,
        tally::cuda::result_sink<float>{reinterpret_cast<float*>(c.res), nullptr, nullptr, 0});
  }, slots, reps);
  std::printf("sum f32 n=2^%-2d block=%-4d unroll=%d bps=%-3d grid=%-6u %9.2f us %8.1f GB/s\n",
              __builtin_ctzll(n), BLOCK, U, bps, grid, us, bytes / 1e3 / us);
}

template <int BLOCK, int U>
void sweep_add(ctx& c, std::int64_t n, int bps, int reps) {
  const std::size_t bytes = std::size_t(n) * 4, stride = (bytes + 255) / 256 * 256;
  int slots = int(std::max<std::size_t>(1, c.pool / stride));
  std::int64_t nvec = n / 4;
  std::int64_t g = (nvec + std::int64_t(BLOCK) * U - 1) / (std::int64_t(BLOCK) * U);
  unsigned grid = unsigned(std::min<std::int64_t>(g, std::int64_t(c.sms) * bps));
  timer tm(c.s);
  double us = tm.per_call([&](int k) {
    add_kernel<float, 4, BLOCK, U><<<grid, BLOCK, 0, c.s>>>(
        reinterpret_cast<const float*>(c.x + k * stride), reinterpret_cast<const float*>(c.y + k * stride),
        reinterpret_cast<float*>(c.out + k * stride), n, 0, nullptr);
  }, slots, reps);
  std::printf("add f32 n=2^%-2d block=%-4d unroll=%d bps=%-3d grid=%-6u %9.2f us %8.1f GB/s (3 streams)\n",
              __builtin_ctzll(n), BLOCK, U, bps, grid, us, 3.0 * bytes / 1e3 / us);
}

__global__ void touch(volatile int* flag, int v) { *flag = v; }

void latency_parts(ctx& c) {
  int* mapped = nullptr;
  CK(cudaHostAlloc(&mapped, 64, cudaHostAllocMapped));
  auto median = [](std::vector<double> t) {
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    return t[t.size() / 2];
  };
  auto clock_us = [](auto f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<double> a, b, d;
  for (int i = 0; i < 2000; ++i) {
    a.push_back(clock_us([&] { touch<<<1, 1, 0, c.s>>>(mapped, i); CK(cudaStreamSynchronize(c.s)); }));
    b.push_back(clock_us([&] {
      touch<<<1, 1, 0, c.s>>>(mapped, i + 1000000);
      while (*reinterpret_cast<volatile int*>(mapped) != i + 1000000) {
      }
    }));
    CK(cudaStreamSynchronize(c.s));
    d.push_back(clock_us([&] { touch<<<1, 1, 0, c.s>>>(mapped, i); }));
    CK(cudaStreamSynchronize(c.s));
  }
  cudaPointerAttributes attr;
  std::vector<double> e;
  for (int i = 0; i < 2000; ++i) e.push_back(clock_us([&] { cudaPointerGetAttributes(&attr, c.x); }));
  std::printf("latency: launch+cudaStreamSynchronize %.2f us; launch+spin on mapped flag %.2f us; "
              "launch alone %.2f us; cudaPointerGetAttributes %.2f us\n",
              median(a), median(b), median(d), median(e));
  CK(cudaFreeHost(mapped));
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("tally_tune: no CUDA GPU; nothing to measure\n");
    return 0;
  }
  ctx c{};
  c.pool = quick ? (std::size_t(64) << 20) : (std::size_t(2) << 30);
  CK(cudaMalloc(&c.x, c.pool));
  CK(cudaMalloc(&c.y, c.pool));
  CK(cudaMalloc(&c.out, c.pool));
  CK(cudaMalloc(&c.partials, 1 << 24));
  CK(cudaMalloc(&c.counter, 4));
  CK(cudaMemset(c.counter, 0, 4));
  CK(cudaMalloc(&c.res, 64));
  CK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
  CK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, 0));
  fill<float><<<1024, 256>>>(reinterpret_cast<float*>(c.x), c.pool / 4, 1);
  fill<float><<<1024, 256>>>(reinterpret_cast<float*>(c.y), c.pool / 4, 2);
  CK(cudaDeviceSynchronize());
  latency_parts(c);
  int reps = quick ? 3 : 15;
  std::vector<int> logs = quick ? std::vector<int>{16} : std::vector<int>{16, 20, 22, 24, 26, 28};
  for (int l : logs) {
    std::int64_t n = std::int64_t(1) << l;
    for (int bps : {1, 2, 4, 8, 1000}) {
      sweep_sum<256, 4>(c, n, bps, reps);
      sweep_sum<256, 8>(c, n, bps, reps);
      sweep_sum<512, 4>(c, n, std::min(bps, 1000), reps);
      sweep_sum<128, 4>(c, n, bps, reps);
      sweep_sum<256, 2>(c, n, bps, reps);
    }
  }
  for (int l : logs) {
    std::int64_t n = std::int64_t(1) << l;
    if (l == 28) n = std::int64_t(1) << 27;  // three 512 MiB streams fit the pools
    for (int bps : {2, 4, 8, 1000}) {
      sweep_add<256, 1>(c, n, bps, reps);
      sweep_add<256, 2>(c, n, bps, reps);
      sweep_add<256, 4>(c, n, bps, reps);
      sweep_add<512, 2>(c, n, bps, reps);
    }
  }
  return 0;
}
