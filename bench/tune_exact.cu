// tally_tune_exact: launch shapes and accumulator variants of the exact-mode kernels
// (src/cuda/exact.cuh) on the GPU it runs on, on uniform and wide data, at 2^28 float32 /
// 2^27 float64 elements (larger than L2). Chooses tuning.hpp's exact_* values from
// measurements; the results are in docs/performance.md.
//   tally_tune_exact
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "common.cuh"
#include "cuda/exact_window.cuh"

using namespace bench;
namespace tc = tally::cuda;

namespace {

struct ctx {
  char* x;
  char* y;
  long long* sa;
  unsigned* flags;
  unsigned* counter;
  double* res;
  cudaStream_t s;
  int sms;
};

template <class A, class T, bool DOT, int BLOCK, int U, int MINB, int ST = 0>
void run(ctx& c, const char* name, std::int64_t n, int dist) {
  constexpr int V = 16 / sizeof(T);
  auto kernel = tc::exact::exact_kernel<A, T, DOT, V, BLOCK, U, double, MINB, ST>;
  constexpr std::size_t smem = tc::exact::exact_smem_bytes<A, T, DOT, V, BLOCK, U, ST>;
  if (smem > 0) CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BLOCK, smem));
  std::int64_t nvec = n / V;
  std::int64_t g = (nvec + std::int64_t(BLOCK) * U - 1) / (std::int64_t(BLOCK) * U);
  unsigned grid = unsigned(std::min<std::int64_t>(g, std::int64_t(c.sms) * std::max(per_sm, 1)));
  timer tm(c.s);
  double us = tm.per_call([&](int) {
    kernel<<<grid, BLOCK, smem, c.s>>>(reinterpret_cast<const T*>(c.x), reinterpret_cast<const T*>(c.y), n, 0,
                                       c.sa, c.flags, c.counter, tc::result_sink<double>{c.res, nullptr, nullptr, 0}, nullptr, 0u);
  }, 1, 15);
  CK(cudaGetLastError());
  // Every variant of one operation on one data set must give the same bits (exact mode).
  double got = 0;
  CK(cudaMemcpy(&got, c.res, sizeof got, cudaMemcpyDeviceToHost));
  static double first[2][2][2];
  static bool have[2][2][2];
  double& want = first[sizeof(T) == 8][DOT][dist];
  bool& h = have[sizeof(T) == 8][DOT][dist];
  if (!h) { want = got; h = true; }
  if (__builtin_memcmp(&got, &want, sizeof got) != 0) std::printf("MISMATCH: %a against %a\n", got, want);
  double bytes = double(n) * sizeof(T) * (DOT ? 2 : 1);
  std::printf("%-22s %-7s block=%-4d unroll=%d stages=%d blocks/SM=%d %9.1f us %8.1f GB/s\n", name,
              dist == 0 ? "uniform" : "wide", BLOCK, U, ST, per_sm, us, bytes / 1e3 / us);
}

template <class T> void fill_both(ctx& c, std::int64_t n, int dist) {
  fill_dist<T><<<1024, 256>>>(reinterpret_cast<T*>(c.x), n, 1, dist);
  fill_dist<T><<<1024, 256>>>(reinterpret_cast<T*>(c.y), n, 2, dist);
  CK(cudaDeviceSynchronize());
}

}  // namespace

int main() {
  ctx c{};
  CK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, 0));
  const std::size_t bytes = std::size_t(1) << 30;
  CK(cudaMalloc(&c.x, bytes));
  CK(cudaMalloc(&c.y, bytes));
  CK(cudaMalloc(&c.sa, 4096));
  CK(cudaMemset(c.sa, 0, 4096));
  CK(cudaMalloc(&c.flags, 64));
  CK(cudaMemset(c.flags, 0, 64));
  CK(cudaMalloc(&c.counter, 64));
  CK(cudaMemset(c.counter, 0, 64));
  CK(cudaMalloc(&c.res, 64));
  CK(cudaStreamCreate(&c.s));
  using namespace tc::exact;
  for (int dist : {0, 1}) {
    const std::int64_t n64 = std::int64_t(1) << 27, n32 = std::int64_t(1) << 28;
    fill_both<double>(c, n64, dist);
    run<levels_acc<false, 5, 1>, double, false, 128, 4, 2, 3>(c, "f64 sum K=5", n64, dist);
    run<levels_acc<true, 9, 1>, double, true, 128, 4, 2, 3>(c, "f64 dot K=9", n64, dist);
    // Run 9: register prefetch (STAGES=0) is 10-25% slower than staging; STAGES=2 ~ 3. The
    // dot is bound by work per product (docs/performance.md, "Run 8-9"): fewer levels (K=8:
    // 2 fewer extractions per product; wide data's smallest error terms then take the
    // remainder path) and two independent level sets (P=2: more independent additions per
    // thread, more registers).
    run<levels_acc<true, 9, 1>, double, true, 128, 4, 2, 2>(c, "f64 dot K=9", n64, dist);
    run<levels_acc<true, 8, 1>, double, true, 128, 4, 2, 3>(c, "f64 dot K=8", n64, dist);
    run<levels_acc<true, 8, 1>, double, true, 128, 4, 3, 2>(c, "f64 dot K=8", n64, dist);
    // v4: windowed bins in shared memory (src/cuda/exact_window.cuh), W exponent bits per bin.
    // Run 14: windowed bins, 3501 -> 3767-3871 uniform, 2785 -> 3577-3623 wide (16-bit bins,
    // 32 of them, unroll 2, 3 stages); grouping a product's four bins gained nothing; ncu: the
    // integer pipe busiest, 84 instructions per product. Run 15: the lean version.
    run<window_acc<16, 32, 128>, double, true, 128, 2, 2, 3>(c, "f64 dot win16x32", n64, dist);
    // Run 16: the warps wait on each thread's chain of shared-memory updates (ncu stall
    // reasons: wait, short_scoreboard). GROUPED: one chain per product (not yet measured).
    run<window_acc<16, 32, 128, true>, double, true, 128, 2, 2, 3>(c, "f64 dot win16x32 G", n64, dist);
    run<window_acc<16, 32, 128, true>, double, true, 128, 4, 2, 2>(c, "f64 dot win16x32 G", n64, dist);
    run<window_acc<16, 32, 128>, double, true, 128, 2, 2, 2>(c, "f64 dot win16x32", n64, dist);
    run<window_acc<16, 32, 128>, double, true, 128, 4, 2, 2>(c, "f64 dot win16x32", n64, dist);
    run<window_acc<16, 32, 128>, double, true, 128, 4, 2, 0>(c, "f64 dot win16x32", n64, dist);
    run<window_acc<16, 28, 128>, double, true, 128, 2, 2, 3>(c, "f64 dot win16x28", n64, dist);
    run<window_acc<8, 48, 128>, double, true, 128, 2, 2, 3>(c, "f64 dot win8x48", n64, dist);
    run<window_acc<16, 32, 64>, double, true, 64, 2, 4, 3>(c, "f64 dot win16x32", n64, dist);
    fill_both<float>(c, n32, dist);
    run<bins_acc<false, 128>, float, false, 128, 4, 2>(c, "f32 sum bins", n32, dist);
    run<bins_acc<false, 128>, float, false, 128, 4, 2, 2>(c, "f32 sum bins", n32, dist);
    run<bins_acc<false, 64>, float, false, 64, 4, 2>(c, "f32 sum bins", n32, dist);
    run<bins_acc<true, 128>, float, true, 128, 4, 2>(c, "f32 dot bins", n32, dist);
    run<bins_acc<true, 128>, float, true, 128, 2, 2, 3>(c, "f32 dot bins", n32, dist);
    run<bins_acc<true, 64>, float, true, 64, 4, 2>(c, "f32 dot bins", n32, dist);
  }
  return 0;
}

