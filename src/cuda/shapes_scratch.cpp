// Shape-layer scratch cache (src/cuda/shapes_scratch.hpp) and the v2 switch
// (src/cuda/shapes_tuning.hpp).
#include "cuda/shapes_scratch.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <limits>
#include <string>
#include <utility>

#include "cuda/check.hpp"
#include "cuda/env_setting.hpp"
#include "cuda/shapes_tuning.hpp"
#include "cuda/workspace.hpp"

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

shapes_persistent shapes_scratch::reserve_persistent(std::size_t tickets, cudaStream_t stream, int set) {
  // Each of the 3 sets (set_bytes apart): [0, 16): the two status words, "none" (bytes 0x7f);
  // [16, 20): blocks done; [20, 24): the next lazy tile; [24, 28): a long segment seen; [28,
  // 32): offsets checks done; [32, 36): the group items' warp claims handed out; [36, 48):
  // unused; [48, ...): tickets
  auto set_idle = [&] {
    const std::size_t set_bytes = 48 + persist_tickets * sizeof(unsigned);
    TALLY_CUDA(cudaMemsetAsync(persist, 0, 3 * set_bytes, stream));
    for (int k = 0; k < 3; ++k) TALLY_CUDA(cudaMemsetAsync(static_cast<char*>(persist) + k * set_bytes, 0x7f, 16, stream));
    dirty_set = 0;
  };
  if (persist != nullptr && dirty_set < 0) set_idle();  // (forget_sets)
  if (tickets > persist_tickets || persist == nullptr) {
    // (a multiple of 4 tickets, so that every set starts 16-byte aligned: its status words are
    // read and written as 8-byte words. Until the sixty-second session an odd count, e.g. 3001
    // tickets, put sets 1 and 2 at 4 mod 8 and a stream-ordered segment call faulted with a
    // misaligned address: run 219)
    std::size_t grow = (std::max<std::size_t>({tickets, 2 * persist_tickets, 1024}) + 3) & ~std::size_t(3);
    if (persist) TALLY_CUDA(cudaFreeAsync(persist, stream));
    persist = nullptr;
    persist_tickets = 0;
    TALLY_CUDA(cudaMallocAsync(&persist, 3 * (48 + grow * sizeof(unsigned)), stream));
    persist_tickets = grow;
    set_idle();
  }
  auto* base = static_cast<char*>(persist) + static_cast<std::size_t>(set) * (48 + persist_tickets * sizeof(unsigned));
  return {reinterpret_cast<long long*>(base), reinterpret_cast<unsigned*>(base + 16),
          reinterpret_cast<unsigned*>(base + 48), reinterpret_cast<unsigned*>(base + 20),
          reinterpret_cast<unsigned*>(base + 24), reinterpret_cast<unsigned*>(base + 28),
          reinterpret_cast<unsigned*>(base + 32)};
}

int shapes_scratch::check_end_set(bool& clean_other) {
  const int set = dirty_set == 1 ? 2 : 1;
  clean_other = dirty_set != 0;
  dirty_set = set;
  return set;
}

void* shapes_scratch::reserve_zeroed(std::size_t need, cudaStream_t stream) {
  if (need <= zeroed_bytes && zeroed) return zeroed;
  const std::size_t grow = std::max<std::size_t>({need, 2 * zeroed_bytes, 4096});
  if (zeroed) TALLY_CUDA(cudaFreeAsync(zeroed, stream));
  zeroed = nullptr;
  zeroed_bytes = 0;
  TALLY_CUDA(cudaMallocAsync(&zeroed, grow, stream));
  TALLY_CUDA(cudaMemsetAsync(zeroed, 0, grow, stream));
  zeroed_bytes = grow;
  return zeroed;
}

shapes_scratch& get_shapes_scratch(cudaStream_t stream) {
  static std::mutex m;
  static std::map<stream_key, std::unique_ptr<shapes_scratch>> cache;
  int dev = 0;
  TALLY_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(m);
  auto& e = cache[key_of(dev, stream)];
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

copy_lease::copy_lease(std::size_t bytes, cudaStream_t stream) {
  shapes_scratch& cache = get_shapes_scratch(stream);
  hold_ = std::unique_lock<std::mutex>(cache.copy_in_use);
  if (bytes > cache.copy_bytes || cache.copy == nullptr) {
    const std::size_t grow = std::max(bytes, 2 * cache.copy_bytes);
    if (cache.copy) TALLY_CUDA(cudaFreeAsync(cache.copy, stream));
    cache.copy = nullptr;
    cache.copy_bytes = 0;
    TALLY_CUDA(cudaMallocAsync(&cache.copy, grow, stream));
    cache.copy_bytes = grow;
  }
  data_ = static_cast<char*>(cache.copy);
}

scratch_lease::~scratch_lease() {
  if (!cached_ && data_) cudaFreeAsync(data_, stream_);  // (a destructor reports nothing)
}

namespace tuning {
namespace {
std::atomic<int> v2_state{-1};
std::atomic<int> certified_state{-1};
std::mutex plan_mutex;
shapes_v3_plan plan;  // guarded by plan_mutex
bool plan_read = false;

void check_plan(const shapes_v3_plan& p) {
  if (p.tile < 1024 || p.tile > (std::int64_t(1) << 30))
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.tile must lie in [1024, 2^30]");
  if (p.seg_tile < 1024 || p.seg_tile > (std::int64_t(1) << 30))
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.seg_tile must lie in [1024, 2^30]");
  if (p.seg_split < 1024 || p.seg_split > (std::int64_t(1) << 30))
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.seg_split must lie in [1024, 2^30]");
  if (p.seg_tile > 64 * p.seg_split)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.seg_tile must be at most 64 seg_split");
  if (p.seg_lanes != 0 && p.seg_lanes != 4 && p.seg_lanes != 8 && p.seg_lanes != 16 && p.seg_lanes != 32)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.seg_lanes must be 0 (from the mean length), 4, 8, 16 or 32");
  if (p.few_lanes != 0 && p.few_lanes != 1 && p.few_lanes != 2 && p.few_lanes != 4 && p.few_lanes != 8 && p.few_lanes != 16 &&
      p.few_lanes != 32)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.few_lanes must be 0 (from the mean length), 1, 2, 4, 8, 16 or 32");
  if (p.block_row_len < 1) throw error(errc::invalid_argument, "tally: shapes_v3_plan.block_row_len must be positive");
  if (p.heavy_lane_len < 1 || p.heavy_lane_len > 65536)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.heavy_lane_len must lie in [1, 65536]");
  if (p.seg_block_len < 0) throw error(errc::invalid_argument, "tally: shapes_v3_plan.seg_block_len must be 0 (never) or positive");
  if (p.seg_flat_len < 0) throw error(errc::invalid_argument, "tally: shapes_v3_plan.seg_flat_len must be 0 (never) or positive");
  if (p.blocks_per_sm > 64) throw error(errc::invalid_argument, "tally: shapes_v3_plan.blocks_per_sm must be at most 64");
  if (p.col_blocks < 1 || p.col_blocks > (std::int64_t(1) << 20))
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.col_blocks must lie in [1, 2^20]");
  if (p.half_fast_col_blocks < 1 || p.half_fast_col_blocks > (std::int64_t(1) << 20))
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.half_fast_col_blocks must lie in [1, 2^20]");
  if (p.col_wave != 0 && p.col_wave != 1) throw error(errc::invalid_argument, "tally: shapes_v3_plan.col_wave must be 0 or 1");
  if (p.byte_col_wide != 0 && p.byte_col_wide != 1)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.byte_col_wide must be 0 or 1");
  if (p.short_col_wide != 0 && p.short_col_wide != 1)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.short_col_wide must be 0 or 1");
  if (p.half_col_wide != 0 && p.half_col_wide != 1)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.half_col_wide must be 0 or 1");
  if (p.f16_in_place != 0 && p.f16_in_place != 1)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.f16_in_place must be 0 or 1");
  if (p.half_gated != 0 && p.half_gated != 1)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.half_gated must be 0 or 1");
  if (p.item_order < 0 || p.item_order > 2)
    throw error(errc::invalid_argument,
                "tally: shapes_v3_plan.item_order must be 0 (tiles first), 1 (groups first) or 2 (interleaved)");
  if (p.tile_probe != 0 && p.tile_probe != 1) throw error(errc::invalid_argument, "tally: shapes_v3_plan.tile_probe must be 0 or 1");
  if (p.cert_cols < -1 || p.cert_cols > 1)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.cert_cols must be -1 (the measured rule), 0 or 1");
  if (p.col_run != 0 && p.col_run != 1) throw error(errc::invalid_argument, "tally: shapes_v3_plan.col_run must be 0 or 1");
  if (p.row_stages != 0 && p.row_stages != 1)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.row_stages must be 0 or 1");
  if (p.cert_col_waves < 1 || p.cert_col_waves > 64)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.cert_col_waves must lie in [1, 64]");
  if (p.gate_blocks < 0 || p.gate_blocks > 16)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.gate_blocks must lie in [0, 16] (0: the defaults)");
  if (p.pdl != 0 && p.pdl != 1) throw error(errc::invalid_argument, "tally: shapes_v3_plan.pdl must be 0 or 1");
  if (p.seg_claim_ahead < 0 || p.seg_claim_ahead > 2)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.seg_claim_ahead must be 0, 1 or 2");
  if (p.seg_check_late != 0 && p.seg_check_late != 1)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.seg_check_late must be 0 or 1");
  if (p.done_fence != 0 && p.done_fence != 1)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.done_fence must be 0 or 1");
  if (p.check_end < 0 || p.check_end > 2)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.check_end must be 0, 1 or 2");
  if (p.seg_warp_claim < 0 || p.seg_warp_claim > 64)
    throw error(errc::invalid_argument, "tally: shapes_v3_plan.seg_warp_claim must lie in [0, 64] (0: group items by blocks)");
}

}  // namespace

// TALLY_SHAPES_PLAN="tile=1024,blocks_per_sm=1,...": the plan's fields by name (tests run
// the shape suite under other plans with it).
shapes_v3_plan parse_shapes_plan(const char* e) {
  shapes_v3_plan p;
  std::string s(e);
  std::size_t at = 0;
  while (at < s.size()) {
    std::size_t end = s.find(',', at);
    if (end == std::string::npos) end = s.size();
    const std::string item = s.substr(at, end - at);
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    long long v = 0;
    const char* first = eq == std::string::npos ? nullptr : item.c_str() + eq + 1;
    const char* last = item.c_str() + item.size();
    if (!first || first == last || std::from_chars(first, last, v).ptr != last)
      throw error(errc::invalid_argument, "tally: TALLY_SHAPES_PLAN item '" + item + "' is not name=integer");
    // the int fields: a value past int's range is refused, not wrapped into a valid one
    auto small = [&](long long w) {
      if (w < std::numeric_limits<int>::min() || w > std::numeric_limits<int>::max())
        throw error(errc::invalid_argument, "tally: TALLY_SHAPES_PLAN item '" + item + "' is out of range");
      return static_cast<int>(w);
    };
    if (key == "tile") p.tile = v;
    else if (key == "seg_tile") p.seg_tile = v;
    else if (key == "seg_split") p.seg_split = v;
    else if (key == "seg_lanes") p.seg_lanes = small(v);
    else if (key == "few_lanes") p.few_lanes = small(v);
    else if (key == "block_row_len") p.block_row_len = v;
    else if (key == "heavy_lane_len") p.heavy_lane_len = v;
    else if (key == "seg_block_len") p.seg_block_len = v;
    else if (key == "seg_flat_len") p.seg_flat_len = v;
    else if (key == "blocks_per_sm") p.blocks_per_sm = small(v);
    else if (key == "col_blocks") p.col_blocks = v;
    else if (key == "half_fast_col_blocks") p.half_fast_col_blocks = v;
    else if (key == "col_wave") p.col_wave = small(v);
    else if (key == "byte_col_wide") p.byte_col_wide = small(v);
    else if (key == "short_col_wide") p.short_col_wide = small(v);
    else if (key == "half_col_wide") p.half_col_wide = small(v);
    else if (key == "f16_in_place") p.f16_in_place = small(v);
    else if (key == "half_gated") p.half_gated = small(v);
    else if (key == "item_order") p.item_order = small(v);
    else if (key == "tile_probe") p.tile_probe = small(v);
    else if (key == "seg_claim_ahead") p.seg_claim_ahead = small(v);
    else if (key == "done_fence") p.done_fence = small(v);
    else if (key == "check_end") p.check_end = small(v);
    else if (key == "seg_check_late") p.seg_check_late = small(v);
    else if (key == "seg_warp_claim") p.seg_warp_claim = small(v);
    else if (key == "cert_cols") p.cert_cols = small(v);
    else if (key == "col_run") p.col_run = small(v);
    else if (key == "pdl") p.pdl = small(v);
    else if (key == "row_stages") p.row_stages = small(v);
    else if (key == "cert_col_waves") p.cert_col_waves = small(v);
    else if (key == "gate_blocks") p.gate_blocks = small(v);
    else throw error(errc::invalid_argument, "tally: TALLY_SHAPES_PLAN has no field '" + key + "'");
    at = end + 1;
  }
  check_plan(p);
  return p;
}

bool shapes_vector_loads() noexcept { return env_switch(v2_state, "TALLY_SHAPES_V2"); }
void set_shapes_vector_loads(bool on) noexcept { v2_state.store(on ? 1 : 0, std::memory_order_relaxed); }
bool shapes_certified() noexcept { return env_switch(certified_state, "TALLY_SHAPES_CERTIFIED"); }
void set_shapes_certified(bool on) noexcept { certified_state.store(on ? 1 : 0, std::memory_order_relaxed); }

shapes_v3_plan shapes_v3_params() {
  std::lock_guard<std::mutex> lock(plan_mutex);
  if (!plan_read) {
    if (const char* e = std::getenv("TALLY_SHAPES_PLAN"); e && *e) plan = parse_shapes_plan(e);
    plan_read = true;
  }
  return plan;
}

void set_shapes_v3_params(const shapes_v3_plan& p) {
  check_plan(p);
  std::lock_guard<std::mutex> lock(plan_mutex);
  plan = p;
  plan_read = true;
}

}  // namespace tuning
}  // namespace tally::cuda
