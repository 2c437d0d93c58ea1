// CUDA runtime queries and the cached per-(device, stream) workspaces.
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "backends.hpp"
#include "cuda/check.hpp"
#include "cuda/tuning.hpp"
#include "cuda/workspace.hpp"

namespace tally::cuda {

bool available() noexcept {
  static const bool ok = [] {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free error so later calls start clean
      return false;
    }
    return n > 0;
  }();
  return ok;
}

memory locate(const void* p, int* device) noexcept {
  *device = -1;
  if (p == nullptr || !available()) return memory::host;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return memory::host;
  }
  switch (a.type) {
    case cudaMemoryTypeDevice:
      *device = a.device;
      return memory::device;
    case cudaMemoryTypeManaged:
      return memory::device;  // readable by both; the GPU is the faster reader
    default:
      return memory::host;
  }
}

workspace& get_workspace(cudaStream_t stream) {
  static std::mutex m;
  static std::map<stream_key, std::unique_ptr<workspace>> cache;
  int device = 0;
  TALLY_CUDA(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(m);
  auto& slot = cache[key_of(device, stream)];
  if (!slot) {
    auto ws = std::make_unique<workspace>();
    ws->device = device;
    TALLY_CUDA(cudaDeviceGetAttribute(&ws->sm_count, cudaDevAttrMultiProcessorCount, device));
    ws->max_grid = ws->sm_count * tuning::blocks_per_sm;
    TALLY_CUDA(cudaMalloc(&ws->partials, static_cast<size_t>(ws->max_grid) * tuning::max_acc_bytes));
    TALLY_CUDA(cudaMalloc(reinterpret_cast<void**>(&ws->counter), sizeof(unsigned)));
    TALLY_CUDA(cudaMemset(ws->counter, 0, sizeof(unsigned)));
    TALLY_CUDA(cudaMalloc(reinterpret_cast<void**>(&ws->exact_sa), tuning::max_exact_digits * sizeof(long long)));
    TALLY_CUDA(cudaMemset(ws->exact_sa, 0, tuning::max_exact_digits * sizeof(long long)));
    TALLY_CUDA(cudaMalloc(reinterpret_cast<void**>(&ws->exact_flags), 6 * sizeof(unsigned)));
    TALLY_CUDA(cudaMemset(ws->exact_flags, 0, 6 * sizeof(unsigned)));
    void* host = nullptr;
    // [0, 32) result, 32 status, 36 done ticket, [64, ...) an exported exact state.
    constexpr std::size_t state_bytes = (3 + tuning::max_exact_digits + 4) * sizeof(long long);
    TALLY_CUDA(cudaHostAlloc(&host, 64 + state_bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    ws->host_result = host;
    ws->host_state = static_cast<char*>(host) + 64;
    ws->host_status = reinterpret_cast<int*>(static_cast<char*>(host) + 32);
    ws->host_done = reinterpret_cast<volatile unsigned*>(static_cast<char*>(host) + 36);
    *ws->host_done = 0;
    slot = std::move(ws);
  }
  return *slot;
}

}  // namespace tally::cuda
