// Helpers of the NCCL tests: data, uneven splits, device copies of parts.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace tt::nccl_test {

inline void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

/// GPUs usable in this process (0 when there is no CUDA device or driver).
inline int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

template <class T> std::vector<T> wide_data(std::size_t n, std::uint64_t seed, int emax) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> m(1.0, 2.0);
  std::uniform_int_distribution<int> k(-emax, emax), s(0, 1);
  std::vector<T> v(n);
  for (auto& e : v) e = static_cast<T>((s(g) ? -1.0 : 1.0) * std::ldexp(m(g), k(g)));
  return v;
}

/// Cut points of `parts` uneven parts (variant 1: the first part empty).
inline std::vector<std::size_t> cuts_for(std::size_t n, int parts, int variant) {
  std::vector<std::size_t> c(static_cast<std::size_t>(parts) + 1, 0);
  c[parts] = n;
  std::mt19937_64 g(77 + 13 * parts + variant);
  for (int r = 1; r < parts; ++r) c[r] = std::uniform_int_distribution<std::size_t>(n / 5, n)(g);
  if (variant == 1 && parts > 1) c[1] = 0;
  std::sort(c.begin(), c.end());
  return c;
}

/// A copy of v[a, b) in the memory of GPU `dev` (freed by the destructor).
template <class T> class on_gpu {
 public:
  on_gpu(int dev, const std::vector<T>& v, std::size_t a, std::size_t b) : dev_(dev), n_(b - a) {
    cuda_ok(cudaSetDevice(dev), "cudaSetDevice");
    cuda_ok(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(n_, 1) * sizeof(T)), "cudaMalloc");
    if (n_) cuda_ok(cudaMemcpy(p_, v.data() + a, n_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~on_gpu() {
    cudaSetDevice(dev_);
    cudaFree(p_);
  }
  on_gpu(const on_gpu&) = delete;
  on_gpu& operator=(const on_gpu&) = delete;
  const T* data() const { return p_; }
  std::int64_t size() const { return static_cast<std::int64_t>(n_); }

 private:
  int dev_;
  std::size_t n_;
  T* p_ = nullptr;
};

}  // namespace tt::nccl_test
