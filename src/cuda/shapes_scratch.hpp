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

/// The scratch of one shape call, from its first launch to its stream synchronisation (the
/// end of the lease's scope): with `cached`, the (device, stream) buffer above with its lock
/// held; otherwise a stream-ordered allocation of its own, freed (stream-ordered) when the
/// lease ends, on an error too. Throws tally::error when the memory cannot be had.
class scratch_lease {
 public:
  scratch_lease(std::size_t bytes, cudaStream_t stream, bool cached);
  ~scratch_lease();
  scratch_lease(const scratch_lease&) = delete;
  scratch_lease& operator=(const scratch_lease&) = delete;
  char* data() const noexcept { return data_; }

 private:
  char* data_ = nullptr;
  cudaStream_t stream_;
  bool cached_;
  std::unique_lock<std::mutex> hold_;
};

}  // namespace tally::cuda
