// Turning CUDA runtime errors into tally::error with the call and the error's name.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "tally/types.hpp"

namespace tally::cuda {

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* call) {
  throw error(errc::cuda_error, std::string("tally: CUDA call ") + call + " failed: " +
                                    cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

#define TALLY_CUDA(call)                                              \
  do {                                                                \
    cudaError_t tally_e_ = (call);                                    \
    if (tally_e_ != cudaSuccess) ::tally::cuda::throw_cuda(tally_e_, #call); \
  } while (0)

/// Makes `device` current for the scope (no-op for -1), restoring the caller's device.
class device_guard {
 public:
  explicit device_guard(int device) {
    if (device < 0) return;
    TALLY_CUDA(cudaGetDevice(&previous_));
    if (previous_ != device) TALLY_CUDA(cudaSetDevice(device));
    else previous_ = -1;
  }
  ~device_guard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace tally::cuda
