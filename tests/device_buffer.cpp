// CUDA runtime helpers for the tests (see device_buffer.hpp).
#include "device_buffer.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tt::cuda {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("test helper: ") + what + " failed: " + cudaGetErrorName(e) +
                             " (" + cudaGetErrorString(e) + ")");
}

}  // namespace

device_buffer::device_buffer(std::size_t bytes, kind k) : bytes_(bytes), kind_(k) {
  std::size_t n = std::max<std::size_t>(bytes, 1);
  switch (k) {
    case kind::device: check(cudaMalloc(&p_, n), "cudaMalloc"); break;
    case kind::managed: check(cudaMallocManaged(&p_, n), "cudaMallocManaged"); break;
    case kind::pinned: check(cudaMallocHost(&p_, n), "cudaMallocHost"); break;
  }
}

device_buffer::~device_buffer() { release(); }

void device_buffer::release() noexcept {
  if (!p_) return;
  if (kind_ == kind::pinned) cudaFreeHost(p_);
  else cudaFree(p_);
  p_ = nullptr;
}

device_buffer& device_buffer::operator=(device_buffer&& o) noexcept {
  if (this != &o) {
    release();
    p_ = std::exchange(o.p_, nullptr);
    bytes_ = o.bytes_;
    kind_ = o.kind_;
  }
  return *this;
}

void device_buffer::upload(std::size_t offset, const void* src, std::size_t n) {
  if (n == 0) return;
  if (offset + n > bytes_) throw std::out_of_range("device_buffer::upload past the end");
  check(cudaMemcpy(static_cast<char*>(p_) + offset, src, n, cudaMemcpyDefault), "cudaMemcpy (upload)");
  // cudaMemcpy from pageable memory may return before its DMA lands, and kernels on the
  // tests' non-blocking streams are not ordered after it: wait for it here.
  check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize (upload)");
}

void device_buffer::download(void* dst, std::size_t offset, std::size_t n) const {
  if (n == 0) return;
  if (offset + n > bytes_) throw std::out_of_range("device_buffer::download past the end");
  check(cudaMemcpy(dst, static_cast<const char*>(p_) + offset, n, cudaMemcpyDefault),
        "cudaMemcpy (download)");
}

void device_buffer::fill(std::size_t offset, const void* elem, std::size_t elem_size,
                         std::size_t count) {
  if (count == 0) return;
  if (offset + count * elem_size > bytes_) throw std::out_of_range("device_buffer::fill past the end");
  char* base = static_cast<char*>(p_) + offset;
  // Seed with up to 1 Mi elements from the host, then double by device-to-device copies.
  std::size_t seed = std::min<std::size_t>(count, std::size_t(1) << 20);
  std::string host(seed * elem_size, '\0');
  for (std::size_t i = 0; i < seed; ++i) std::memcpy(&host[i * elem_size], elem, elem_size);
  check(cudaMemcpy(base, host.data(), host.size(), cudaMemcpyHostToDevice), "cudaMemcpy (fill seed)");
  std::size_t done = seed;
  while (done < count) {
    std::size_t n = std::min(done, count - done);
    check(cudaMemcpy(base + done * elem_size, base, n * elem_size, cudaMemcpyDeviceToDevice),
          "cudaMemcpy (fill)");
    done += n;
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (fill)");
}

std::pair<std::size_t, std::size_t> memory_info() {
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return {free, total};
}

int sm_count() {
  int device = 0, n = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return n;
}

tally::stream_t create_stream() {
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return s;
}

void destroy_stream(tally::stream_t s) { cudaStreamDestroy(s); }

void synchronize(tally::stream_t s) { check(cudaStreamSynchronize(s), "cudaStreamSynchronize"); }

void copy(void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy");
}

}  // namespace tt::cuda
