// tally_dist_bench: 2-GPU reductions with tally::nccl against one GPU.
//
//   tally_dist_bench [--n N] [--reps R] [--quick]
//
// One process drives up to two GPUs (ncclCommInitAll; NCCL_NVLS_ENABLE=0). With N = 2^31
// float32 (the default) it reports, as medians of R blocking calls (wall clock):
//  - one GPU on half of the data, one GPU on all of it, two GPUs on a half each (exact and
//    fast), so: the cost of going distributed (2 GPUs on N vs 1 GPU on N/2) and the strong
//    scaling 1 -> 2 GPUs (1 GPU on N vs 2 GPUs on N);
//  - the combine step in microseconds: a 2-GPU exact sum of one element per GPU minus a
//    1-GPU sum of one element, and the bare ncclAllReduce of one exact state (1.2 KiB);
//  - whether the 2-GPU exact result has the 1-GPU bits (it must).
// Without a GPU it says so and exits 0; with one GPU it reports the 1-GPU numbers only.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tally/nccl.hpp"
#include "tally/tally.hpp"

namespace {

void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "dist_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void ok(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    std::fprintf(stderr, "dist_bench: %s: %s\n", what, ncclGetErrorString(r));
    std::exit(1);
  }
}

// Deterministic float32 data spanning 2^-20..2^20 with both signs (a hash of the index).
__global__ void fill(float* p, std::int64_t n, std::int64_t first) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
    std::uint64_t h = static_cast<std::uint64_t>(first + i) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    float m = 1.0f + static_cast<float>(h & 0xffffff) / 16777216.0f;
    int e = static_cast<int>((h >> 24) % 41) - 20;
    p[i] = ((h >> 40) & 1 ? -1.0f : 1.0f) * ldexpf(m, e);
  }
}

template <class F> double median_us(int reps, F&& f) {
  f();  // warm-up (workspaces, NCCL channels)
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = std::int64_t(1) << 31;
  int reps = 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) n = std::atoll(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--quick") n = std::int64_t(1) << 24, reps = 5;
    else {
      std::fprintf(stderr, "usage: tally_dist_bench [--n N] [--reps R] [--quick]\n");
      return 2;
    }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("dist_bench: no CUDA GPU: nothing measured\n");
    return 0;
  }
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  const int G = std::min(ndev, 2);
  const std::int64_t half = n / 2;
  std::printf("dist_bench: n = %lld float32 (%.2f GiB), %d GPU(s) used of %d, median of %d\n", static_cast<long long>(n),
              n * 4.0 / (1 << 30), G, ndev, reps);

  std::vector<float*> x(G, nullptr);
  std::vector<cudaStream_t> s(G);
  for (int d = 0; d < G; ++d) {
    ok(cudaSetDevice(d), "cudaSetDevice");
    std::int64_t len = d == 0 ? n : n - half;  // GPU 0 holds everything (for the 1-GPU runs)
    ok(cudaMalloc(&x[d], len * sizeof(float)), "cudaMalloc");
    fill<<<1024, 256>>>(x[d], len, d == 0 ? 0 : half);
    ok(cudaStreamCreateWithFlags(&s[d], cudaStreamNonBlocking), "cudaStreamCreate");
    ok(cudaDeviceSynchronize(), "fill");
  }
  tally::options o0{tally::backend::cuda, s[0], tally::accuracy::exact};
  tally::options f0{tally::backend::cuda, s[0], tally::accuracy::fast};
  float r_half = 0, r_whole = 0;
  ok(cudaSetDevice(0), "cudaSetDevice");
  double t_half = median_us(reps, [&] { r_half = tally::sum<float>({x[0], half}, o0); });
  double t_whole = median_us(reps, [&] { r_whole = tally::sum<float>({x[0], n}, o0); });
  double tf_half = median_us(reps, [&] { tally::sum<float>({x[0], half}, f0); });
  double tf_whole = median_us(reps, [&] { tally::sum<float>({x[0], n}, f0); });
  double t_one = median_us(reps * 5, [&] { tally::sum<float>({x[0], 1}, o0); });
  std::printf("\n%-44s %12s %12s\n", "", "exact (us)", "fast (us)");
  std::printf("%-44s %12.1f %12.1f\n", "1 GPU, n/2 elements", t_half, tf_half);
  std::printf("%-44s %12.1f %12.1f\n", "1 GPU, n elements", t_whole, tf_whole);
  if (G < 2) {
    std::printf("\nonly one GPU: no 2-GPU numbers\n");
    return 0;
  }
  std::vector<ncclComm_t> comms(G);
  ok(ncclCommInitAll(comms.data(), G, nullptr), "ncclCommInitAll");
  namespace tn = tally::nccl;
  std::vector<tn::part<float>> parts{{comms[0], {x[0], half}, s[0]}, {comms[1], {x[1], n - half}, s[1]}};
  std::vector<tn::part<float>> tiny{{comms[0], {x[0], 1}, s[0]}, {comms[1], {x[1], 1}, s[1]}};
  float r_two = 0;
  double t_two = median_us(reps, [&] { r_two = tn::sum<float>(std::span<const tn::part<float>>(parts)); });
  double tf_two = median_us(reps, [&] { tn::sum<float>(std::span<const tn::part<float>>(parts), tally::accuracy::fast); });
  double t_tiny = median_us(reps * 5, [&] { tn::sum<float>(std::span<const tn::part<float>>(tiny)); });
  // The bare collective on one exact state per GPU.
  std::vector<std::int64_t*> st(G);
  for (int d = 0; d < G; ++d) {
    ok(cudaSetDevice(d), "cudaSetDevice");
    ok(cudaMalloc(&st[d], tn::state_words * sizeof(std::int64_t)), "cudaMalloc");
    ok(cudaMemset(st[d], 0, tn::state_words * sizeof(std::int64_t)), "cudaMemset");
  }
  double t_ar = median_us(reps * 5, [&] {
    ok(ncclGroupStart(), "ncclGroupStart");
    for (int d = 0; d < G; ++d) ok(ncclAllReduce(st[d], st[d], tally::exact_state::size, ncclInt64, ncclSum, comms[d], s[d]), "ncclAllReduce");
    ok(ncclGroupEnd(), "ncclGroupEnd");
    for (int d = 0; d < G; ++d) {
      ok(cudaSetDevice(d), "cudaSetDevice");
      ok(cudaStreamSynchronize(s[d]), "cudaStreamSynchronize");
    }
  });
  std::printf("%-44s %12.1f %12.1f\n", "2 GPUs, n/2 elements each (tally::nccl)", t_two, tf_two);
  std::printf("\ngoing distributed (2 GPUs on n minus 1 GPU on n/2): %.1f us exact, %.1f us fast\n", t_two - t_half, tf_two - tf_half);
  std::printf("strong scaling 1 -> 2 GPUs (1 GPU on n / 2 GPUs on n): %.2fx exact, %.2fx fast\n", t_whole / t_two, tf_whole / tf_two);
  std::printf("combine step: 2-GPU sum of 1 element each %.1f us - 1-GPU sum of 1 element %.1f us = %.1f us;\n"
              "              bare ncclAllReduce of one %zu-byte state on 2 GPUs: %.1f us\n",
              t_tiny, t_one, t_tiny - t_one, sizeof(std::int64_t) * tally::exact_state::size, t_ar);
  std::uint32_t a, b;
  std::memcpy(&a, &r_two, 4);
  std::memcpy(&b, &r_whole, 4);
  std::printf("2-GPU exact sum %a, 1-GPU exact sum %a: %s\n", r_two, r_whole, a == b ? "bitwise equal" : "DIFFERENT (a bug)");
  for (int d = 0; d < G; ++d) ncclCommDestroy(comms[d]);
  (void)r_half;
  return a == b ? 0 : 1;
}
