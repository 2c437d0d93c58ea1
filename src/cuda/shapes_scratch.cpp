// Shape-layer scratch cache (src/cuda/shapes_scratch.hpp) and the v2 switch
// (src/cuda/shapes_tuning.hpp).
#include "cuda/shapes_scratch.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

#include "cuda/check.hpp"
#include "cuda/shapes_tuning.hpp"

namespace tally::cuda {

void* shapes_scratch::reserve(std::size_t need, cudaStream_t stream) {
  if (need <= bytes) return data;
  std::size_t grow = std::max(need, 2 * bytes);
  if (data) TALLY_CUDA(cudaFreeAsync(data, stream));
  data = nullptr;
  bytes = 0;
  TALLY_CUDA(cudaMallocAsync(&data, grow, stream));
  bytes = grow;
  return data;
}

shapes_persistent shapes_scratch::reserve_persistent(std::size_t tickets, cudaStream_t stream) {
  if (tickets > persist_tickets || persist == nullptr) {
    std::size_t grow = std::max<std::size_t>({tickets, 2 * persist_tickets, 1024});
    if (persist) TALLY_CUDA(cudaFreeAsync(persist, stream));
    persist = nullptr;
    persist_tickets = 0;
    const std::size_t bytes = 32 + grow * sizeof(unsigned);
    TALLY_CUDA(cudaMallocAsync(&persist, bytes, stream));
    // [0, 16): the two status words, "none" (bytes 0x7f); [16, 20): blocks done; [32, ...): tickets
    TALLY_CUDA(cudaMemsetAsync(persist, 0x7f, 16, stream));
    TALLY_CUDA(cudaMemsetAsync(static_cast<char*>(persist) + 16, 0, bytes - 16, stream));
    persist_tickets = grow;
  }
  auto* base = static_cast<char*>(persist);
  return {reinterpret_cast<long long*>(base), reinterpret_cast<unsigned*>(base + 16),
          reinterpret_cast<unsigned*>(base + 32)};
}

shapes_scratch& get_shapes_scratch(cudaStream_t stream) {
  static std::mutex m;
  static std::map<std::pair<int, cudaStream_t>, std::unique_ptr<shapes_scratch>> cache;
  int dev = 0;
  TALLY_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(m);
  auto& e = cache[{dev, stream}];
  if (!e) e = std::make_unique<shapes_scratch>();
  return *e;
}

scratch_lease::scratch_lease(std::size_t bytes, cudaStream_t stream, bool cached) : stream_(stream), cached_(cached) {
  if (cached) {
    shapes_scratch& cache = get_shapes_scratch(stream);
    hold_ = std::unique_lock<std::mutex>(cache.in_use);
    data_ = static_cast<char*>(cache.reserve(bytes, stream));
    cache_ = &cache;
  } else {
    TALLY_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&data_), bytes, stream));
  }
}

scratch_lease::~scratch_lease() {
  if (!cached_ && data_) cudaFreeAsync(data_, stream_);  // (a destructor reports nothing)
}

namespace tuning {
namespace {
// -1: not read yet; 0 / 1: off / on.
std::atomic<int> v2_state{-1};
}  // namespace

bool shapes_vector_loads() noexcept {
  int s = v2_state.load(std::memory_order_relaxed);
  if (s < 0) {
    const char* e = std::getenv("TALLY_SHAPES_V2");
    int v = (e && std::strcmp(e, "0") == 0) ? 0 : 1;  // v2 unless TALLY_SHAPES_V2=0
    int expected = -1;
    v2_state.compare_exchange_strong(expected, v);
    s = v2_state.load(std::memory_order_relaxed);
  }
  return s == 1;
}

void set_shapes_vector_loads(bool on) noexcept { v2_state.store(on ? 1 : 0, std::memory_order_relaxed); }

namespace {
std::atomic<int> v3_state{-1};
}  // namespace

bool shapes_fused() noexcept {
  int s = v3_state.load(std::memory_order_relaxed);
  if (s < 0) {
    const char* e = std::getenv("TALLY_SHAPES_V3");
    int v = (e && std::strcmp(e, "0") == 0) ? 0 : 1;  // v3 unless TALLY_SHAPES_V3=0
    int expected = -1;
    v3_state.compare_exchange_strong(expected, v);
    s = v3_state.load(std::memory_order_relaxed);
  }
  return s == 1;
}

void set_shapes_fused(bool on) noexcept { v3_state.store(on ? 1 : 0, std::memory_order_relaxed); }

}  // namespace tuning
}  // namespace tally::cuda
