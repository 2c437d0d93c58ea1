// Shared by the benchmarks: error checks, a data generator and event timing.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>
#include <type_traits>
#include <string>
#include <vector>

namespace bench {

#define CK(call)                                                                       \
  do {                                                                                 \
    cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)
#define CKB(call)                                                                      \
  do {                                                                                 \
    cublasStatus_t s_ = (call);                                                        \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      std::fprintf(stderr, "%s:%d %s: cublas status %d\n", __FILE__, __LINE__, #call, int(s_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

// ---- data -------------------------------------------------------------------------------

__device__ __forceinline__ std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
template <class T> __global__ void fill(T* p, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::uint64_t r = mix(seed ^ std::uint64_t(i));
    if constexpr (std::is_floating_point_v<T>) p[i] = T(double(r >> 11) * 0x1.0p-53);  // [0, 1)
    else p[i] = T(std::int64_t(r % 2001) - 1000);                                        // [-1000, 1000]
  }
}

/// Test distributions for floating data: 0 uniform [0, 1); 1 wide: random sign and mantissa,
/// exponent uniform in [-60, 60]; 2 ill-conditioned: pairs (a, -a + d) with a wide and d in
/// [0, 2^-40), so the sum is tiny against sum|x| (condition number ~ 2^100).
template <class T> __global__ void fill_dist(T* p, std::int64_t n, std::uint64_t seed, int dist) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::uint64_t r = mix(seed ^ std::uint64_t(i));
    double m = 1.0 + double(r >> 12) * 0x1.0p-52;
    if (dist == 0) {
      p[i] = T(double(r >> 11) * 0x1.0p-53);
    } else if (dist == 1) {
      int e = int((r >> 1) % 121) - 60;
      p[i] = T((r & 1 ? -1.0 : 1.0) * ldexp(m, e));
    } else {
      std::uint64_t q = mix(seed ^ std::uint64_t(i & ~std::int64_t(1)));  // the pair's shared a
      int e = int((q >> 1) % 121) - 60;
      double a = (q & 1 ? -1.0 : 1.0) * ldexp(1.0 + double(q >> 12) * 0x1.0p-52, e);
      p[i] = (i & 1) ? T(-T(a) + T(double(r >> 11) * 0x1.0p-93)) : T(a);
    }
  }
}

// ---- the ceiling: a plain grid-stride read of 16-byte vectors ---------------------------

template <class T>
__global__ void __launch_bounds__(256) read_kernel(const T* __restrict__ x, const T* __restrict__ y,
                                                   std::int64_t n, bool two, double* sink) {
  using V = int4;
  constexpr int per = 16 / sizeof(T);
  std::int64_t nv = n / per;
  const V* xv = reinterpret_cast<const V*>(x);
  const V* yv = reinterpret_cast<const V*>(y);
  unsigned acc = 0;
  std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < nv; i += stride) {
    V a = __ldg(xv + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
    if (two) {
      V b = __ldg(yv + i);
      acc ^= b.x ^ b.y ^ b.z ^ b.w;
    }
  }
  if (acc == 0x12345678u) *sink = acc;  // keeps the loads alive; practically never taken
}

// ---- timing -----------------------------------------------------------------------------

struct timer {
  cudaStream_t s;
  cudaEvent_t a, b;
  timer(cudaStream_t st) : s(st) {
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
  // Median device time per call (us) of f(slot) over batches of back-to-back calls, the
  // slots taken in turn (inputs rotated through so small ones do not stay in L2).
  double per_call(const std::function<void(int)>& f, int slots, int reps) {
    int k = 0;
    return per_call_interleaved({[&] { f(k++ % slots); }}, reps)[0];
  }
  // Several configurations timed in turn within each repetition (so slow drifts of clocks or
  // temperature fall on all of them alike): each one's median device time per call (us).
  std::vector<double> per_call_interleaved(const std::vector<std::function<void()>>& fs, int reps) {
    const std::size_t m = fs.size();
    std::vector<int> batch(m);
    for (std::size_t j = 0; j < m; ++j) {
      for (int w = 0; w < 3; ++w) fs[j]();
      CK(cudaStreamSynchronize(s));
      CK(cudaEventRecord(a, s));
      for (int i = 0; i < 4; ++i) fs[j]();
      CK(cudaEventRecord(b, s));
      CK(cudaEventSynchronize(b));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, a, b));
      batch[j] = std::clamp(int(1.0 / std::max(ms / 4, 1e-4f)), 1, 2000);
    }
    std::vector<std::vector<double>> t(m);
    for (int r = 0; r < reps; ++r)
      for (std::size_t j = 0; j < m; ++j) {
        for (int w = 0; w < 2; ++w) fs[j]();  // the previous configuration's tail is not timed
        CK(cudaEventRecord(a, s));
        for (int i = 0; i < batch[j]; ++i) fs[j]();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t[j].push_back(1e3 * ms / batch[j]);
      }
    std::vector<double> med(m);
    for (std::size_t j = 0; j < m; ++j) {
      std::nth_element(t[j].begin(), t[j].begin() + t[j].size() / 2, t[j].end());
      med[j] = t[j][t[j].size() / 2];
    }
    return med;
  }
};

inline double host_median_us(const std::function<void(int)>& f, int slots, int reps) {
  for (int w = 0; w < 10; ++w) f(w % slots);
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f((r + 10) % slots);
    auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}


}  // namespace bench
