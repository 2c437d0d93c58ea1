// CUDA runtime helpers for the tests: device, managed and pinned allocations, copies, fills,
// streams. Compiled only when the CUDA backend is built (TALLY_TEST_HAVE_CUDA); a CPU-only
// build has none of this, and its cuda-backend tests skip.
#pragma once

#include <cstddef>
#include <utility>

#include "tally/types.hpp"

namespace tt::cuda {

/// Where an allocation lives.
enum class kind { device, managed, pinned };

/// Owns `bytes` bytes from cudaMalloc / cudaMallocManaged / cudaMallocHost (256-byte aligned).
/// Throws std::runtime_error (naming the CUDA error) when the allocation fails.
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes, kind k = kind::device);
  ~device_buffer();
  device_buffer(device_buffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), bytes_(o.bytes_), kind_(o.kind_) {}
  device_buffer& operator=(device_buffer&& o) noexcept;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  void* get() const { return p_; }
  std::size_t bytes() const { return bytes_; }

  /// Copies host bytes to [offset, offset + n) of the buffer (blocking).
  void upload(std::size_t offset, const void* src, std::size_t n);
  /// Copies [offset, offset + n) of the buffer to host memory (blocking).
  void download(void* dst, std::size_t offset, std::size_t n) const;
  /// Fills `count` elements of `elem_size` bytes, starting at byte `offset`, with the element
  /// at `elem` (one host upload, then device-to-device copies that double the filled part).
  void fill(std::size_t offset, const void* elem, std::size_t elem_size, std::size_t count);

 private:
  void release() noexcept;
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
  kind kind_ = kind::device;
};

/// Free and total memory of the current device, in bytes.
std::pair<std::size_t, std::size_t> memory_info();
/// Multiprocessors of the current device.
int sm_count();
/// A new non-blocking stream, destroyed by destroy_stream.
tally::stream_t create_stream();
void destroy_stream(tally::stream_t s);
void synchronize(tally::stream_t s);
/// Blocking copies (cudaMemcpy, default kind): device <-> host.
void copy(void* dst, const void* src, std::size_t bytes);

}  // namespace tt::cuda
