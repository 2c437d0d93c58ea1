// Scratch memory of the shape layer cached per (device, stream): a device buffer grown on
// demand (stream-ordered free of the old one, cudaMallocAsync of the new one, at least double)
// and kept for later calls, so a call of the v2 path allocates nothing once warm.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>

namespace tally::cuda {

struct shapes_scratch {
  std::mutex in_use;  // held by a call from its first launch to its stream synchronisation
  void* data = nullptr;
  std::size_t bytes = 0;
  /// At least `need` bytes on `stream` (call with in_use held). Throws tally::error on failure.
  void* reserve(std::size_t need, cudaStream_t stream);
};

/// The scratch of the current device for `stream` (created on first use; never freed).
shapes_scratch& get_shapes_scratch(cudaStream_t stream);

}  // namespace tally::cuda
