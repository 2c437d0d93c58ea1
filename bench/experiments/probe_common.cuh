// Shared by the experiments in this folder (cols_probe.cu, seg_probe.cu, byte_cols_probe.cu,
// flat_seg_probe.cu): error checks, the device words a fused (v3) launch's finish needs and the
// read kernel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                       \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

/// The words v3::finish points at, in device memory, set to the values a call finds them in
/// (the status words "none", counters and tickets 0); `host_status` is device memory here
/// (a stream-ordered call's status).
struct finish_words {
  long long* status;       // [2]
  long long* host_status;  // [2]
  unsigned* blocks_done;
  unsigned* tile_next;
  unsigned* long_seen;
  unsigned* checked;
  unsigned* tickets;  // [ticket_count]
};

inline finish_words make_finish_words(std::size_t ticket_count) {
  finish_words w{};
  CK(cudaMalloc(&w.status, 16));
  CK(cudaMalloc(&w.host_status, 16));
  unsigned* words = nullptr;  // blocks_done, tile_next, long_seen, checked, then the tickets
  CK(cudaMalloc(&words, 4 * (4 + ticket_count)));
  CK(cudaMemset(w.status, 0x7f, 16));
  CK(cudaMemset(words, 0, 4 * (4 + ticket_count)));
  w.blocks_done = words;
  w.tile_next = words + 1;
  w.long_seen = words + 2;
  w.checked = words + 3;
  w.tickets = words + 4;
  return w;
}

/// x[i] = half_width * u_i, u_i uniform in [-1, 1) from a hash of i and seed (the same
/// values on every GPU and grid).
__global__ void fill(float* x, std::int64_t n, unsigned seed, float half_width) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    h *= 3266489917u;
    h ^= h >> 16;
    x[i] = (static_cast<float>(h) * (2.0f / 4294967296.0f) - 1.0f) * half_width;
  }
}

/// Records e1 after the launches since e0 (default stream), waits for it, checks the launches
/// and returns the milliseconds between the two events.
inline float elapsed_ms(cudaEvent_t e0, cudaEvent_t e1) {
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  CK(cudaGetLastError());
  float t = 0;
  CK(cudaEventElapsedTime(&t, e0, e1));
  return t;
}

/// The bench's read kernel (bench/common.cuh read_kernel, one input): nv 16-byte vectors of x,
/// grid-stride (byte_cols_probe.cu and flat_seg_probe.cu time it beside their kernels).
__global__ void __launch_bounds__(256) read_kernel(const int4* __restrict__ x, std::int64_t nv, unsigned* sink) {
  unsigned acc = 0;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < nv; i += stride) {
    int4 a = __ldg(x + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x12345678u) *sink = acc;
}
