// Launch layer of the shape kernels (src/cuda/shapes.cuh): picks the mode, sizes the grids,
// allocates stream-ordered scratch (partials, status words, and results bound for host
// memory), checks device offsets on the GPU, and reports overflow and bad offsets back.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "cuda/check.hpp"
#include "cuda/shapes.cuh"
#include "cuda/shapes_exact.hpp"
#include "cuda/shapes_scratch.hpp"
#include "cuda/shapes_tuning.hpp"
#include "cuda/shapes_v2.cuh"
#include "cuda/shapes_v3.cuh"
#include "cuda/workspace.hpp"
#include "shapes_backend.hpp"

namespace tally::cuda {
namespace {

using namespace shapes_k;
using tally::shapes::geometry;
using tally::shapes::kind;
using tally::shapes::outcome;
using tally::shapes::request;

int sm_count() {
  int dev = 0, sms = 0;
  TALLY_CUDA(cudaGetDevice(&dev));
  TALLY_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

int cc_major() {
  int dev = 0, major = 0;
  TALLY_CUDA(cudaGetDevice(&dev));
  TALLY_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  return major;
}

std::size_t round_up(std::size_t b) { return (b + 255) / 256 * 256; }

/// Lets a kernel take `bytes` of dynamic shared memory (past the default 48 KiB), with the
/// largest shared memory carveout (asked once per kernel).
template <auto Kernel> void allow_shared(std::size_t bytes) {
  static const bool done = [bytes] {
    TALLY_CUDA(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    TALLY_CUDA(cudaFuncSetAttribute(Kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    return true;
  }();
  (void)done;
}

/// Resident blocks a SM of a kernel of kBlock threads and DYN bytes of dynamic shared memory
/// (asked once per kernel and size; allow_shared first when DYN is past 48 KiB).
template <auto Kernel, std::size_t DYN = 0> int fit_blocks() {
  static const int fit = [] {
    int b = 0;
    TALLY_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, Kernel, kBlock, DYN));
    return std::max(1, b);
  }();
  return fit;
}

template <class Op> inline constexpr bool takes_vectors_v = v2::takes_vectors<Op>();

template <class Op> struct is_fast_sum : std::false_type {};
template <class T, class Out> struct is_fast_sum<fast_sum<T, Out>> : std::true_type {};

/// v3 (tuning::shapes_fused): rows with unit element stride, CSR segments and column mode in
/// one launch (after the offsets check of a segmented call), blocking by a spin on the
/// completion word in mapped host memory (or a copy and a synchronisation when the results
/// are bound for host memory).
template <class Op, class Make>
void launch_v3(const geometry& g, const request& r, outcome& st, cudaStream_t stream, Make&& make, bool column_mode) {
  using A = typename Op::acc;
  using T = typename Op::elem;
  const bool segmented = g.offsets != nullptr;
  geo d{g.x, g.offsets, g.outputs, g.len, g.outer, g.inner, g.n};
  const tuning::shapes_v3_plan plan = tuning::shapes_v3_params();
  const std::int64_t tile = segmented ? plan.seg_tile : plan.tile;
  // segments under plan.seg_lazy_tiles (the default): the rows kernel that runs the tile
  // items only when a segment is longer than split, claimed after the group items (rows,
  // and segments with seg_lazy_tiles = 0, run every tile item)
  // (the claim counter is 32-bit and ends at most tiles + grid <= 2 tiles + segments: past
  // that, the eager order; n would be over 2^41 elements)
  const std::int64_t seg_tiles = segmented && g.n > 0 ? (g.n + tile - 1) / tile : 0;
  const bool lazy = segmented && plan.seg_lazy_tiles != 0 && 2 * seg_tiles + g.outputs < 0xffffffffLL;
  // a block per segment (plan.seg_block_len; not with lanes chosen in the plan): segments of
  // up to a tile are then read whole by one block, as rows are
  const std::int64_t mean_len = g.outputs > 0 ? g.n / g.outputs : 0;
  const bool seg_block = segmented && plan.seg_lanes == 0 && plan.seg_block_len > 0 && mean_len >= plan.seg_block_len;
  // flat group items (plan.seg_flat_len; fast float sums, lazy tiles, lanes not chosen in the
  // plan; sixteenth session, measured slower in run 57, off by default): a warp reads 8 consecutive short segments
  // as one range
  const bool flat = is_fast_sum<Op>::value && lazy && !seg_block && plan.seg_lanes == 0 && plan.seg_flat_len > 0 &&
                    mean_len <= plan.seg_flat_len;
  // longer outputs go to the tile items
  const std::int64_t split = !segmented ? plan.tile : seg_block ? std::max(plan.seg_split, plan.seg_tile) : plan.seg_split;
  std::int64_t tiles = 0, chunks = 1, chunk = g.len, gx = 1;
  bool vec = false;
  constexpr int VV = 16 / static_cast<int>(sizeof(T));
  if (column_mode) {
    // 32 lanes x V outputs per block; row chunks from the shape alone (about plan.col_blocks blocks)
    vec = g.outer == 1 && g.inner > 0 && g.inner % VV == 0 && reinterpret_cast<std::uintptr_t>(g.x) % 16 == 0;
    const std::int64_t per_block = 32LL * (vec ? VV : 1);
    gx = std::max<std::int64_t>(1, (g.outputs + per_block - 1) / per_block);
    if constexpr (sizeof(A) >= 32) {
      // (the certified pass, cols_kernel_heavy: 2 or 3 blocks a SM, plan.col_run; its results
      // are correctly rounded, so the chunks never change the bits) the fewest chunks whose
      // grid fills whole waves to 95% (run 63: plan.col_blocks' 512 blocks were 1.3 waves of
      // 396, and the certified columns read at 0.37-0.60 of the read kernel), at least
      // plan.cert_col_waves waves (more, shorter blocks: the block scheduler balances the SMs'
      // work; run 79's ncu: one wave of 65536 x 1024 kept the SMs active 70% of its time)
      const bool cert_vec = vec && takes_vectors_v<Op>;
      const std::int64_t slots = (cert_vec && plan.col_run == 1 ? 2LL : 3LL) * sm_count();
      const std::int64_t most = std::max<std::int64_t>(1, std::min<std::int64_t>(g.len / 16, 4096));
      std::int64_t want = 1;
      double best = 0;
      for (std::int64_t c = 1; c <= most; ++c) {
        const std::int64_t blocks = gx * c, waves = (blocks + slots - 1) / slots;
        if (waves < plan.cert_col_waves && c < most) continue;
        const double use = static_cast<double>(blocks) / static_cast<double>(waves * slots);  // (of the waves' slots)
        if (use > best + 0.01) {
          best = use;
          want = c;
        }
        if (use >= 0.95) break;
      }
      row_chunks(g.len, want, 16, chunks, chunk);
    } else {
      row_chunks(g.len, (plan.col_blocks + gx - 1) / gx, 64, chunks, chunk);
    }
  } else if (g.n > 0 && (segmented || g.len > tile)) {
    tiles = (g.n + tile - 1) / tile;
  }
  const std::size_t out_bytes = r.out_on_host && r.out ? dtype_size(r.out_type) * g.outputs : 0;
  const std::size_t idx_bytes = r.out_on_host && r.index ? sizeof(std::int64_t) * g.outputs : 0;
  const std::size_t part_count = column_mode ? (chunks > 1 ? chunks * g.outputs : 0) : 2 * tiles;
  const std::size_t s_out = round_up(part_count * sizeof(A));
  const std::size_t s_idx = s_out + round_up(out_bytes);
  const std::size_t total = std::max<std::size_t>(256, s_idx + round_up(idx_bytes));
  scratch_lease lease(total, stream, true);
  const std::size_t ticket_count = column_mode ? (chunks > 1 ? gx : 0) : (tiles > 0 ? g.outputs : 0);
  shapes_persistent ps = lease.persistent(ticket_count);
  char* scratch = lease.data();
  auto* partials = reinterpret_cast<A*>(scratch);
  void* out = out_bytes ? scratch + s_out : r.out;
  std::int64_t* index = idx_bytes ? reinterpret_cast<std::int64_t*>(scratch + s_idx) : r.index;
  Op op = make(out, index, ps.status + 1);

  // Blocking: the last block writes the status words and this call's ticket to mapped host
  // memory (the workspace's, held under its lock until read). Stream-ordered: it writes the
  // status words to the caller's device memory, and the call returns at once.
  // A stream-ordered call takes no workspace: creating one (the first call on a stream)
  // allocates with cudaMalloc, cudaMemset and cudaHostAlloc, which synchronise.
  workspace* wsp = r.stream_ordered ? nullptr : &get_workspace(stream);
  std::unique_lock<std::mutex> lock;
  if (wsp) lock = std::unique_lock<std::mutex>(wsp->blocking);
  const int sms = wsp ? wsp->sm_count : sm_count();
  const unsigned ticket = wsp ? ++wsp->ticket : 0;
  auto* host_status = wsp ? static_cast<long long*>(wsp->host_result)  // 32 bytes: the two status words
                          : reinterpret_cast<long long*>(r.status_device);
  // (segments: the rows kernel's blocks check the offsets themselves; no separate launch)
  v3::finish f{ps.status, ps.blocks_done, host_status, wsp ? wsp->host_done : nullptr, ticket,
               segmented && ticket_count > 0 ? ps.tickets : nullptr, static_cast<std::int64_t>(ticket_count),
               ps.tile_next, ps.long_seen, ps.checked, 0};
  f.group_next = ps.group_next;
  f.fence_each = plan.done_fence;
  if (column_mode) {
    dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(chunks));
    if constexpr (sizeof(A) >= 32) {
      // (float32 vectors, plan.col_run: 1 a running sum per output, one state update per 16
      // rows, the next rows loaded ahead, 2 blocks a SM; 0 four rows a term, 3 blocks a SM)
      bool running = false;
      if constexpr (takes_vectors_v<Op>) {
        running = vec && plan.col_run == 1;
        if (running) v3::cols_kernel_heavy<Op, VV, true, 2><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials, ps.tickets, f);
      }
      if (!running) {
        if (vec) v3::cols_kernel_heavy<Op, VV><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials, ps.tickets, f);
        else v3::cols_kernel_heavy<Op, 1><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials, ps.tickets, f);
      }
    } else {
      if (vec) v3::cols_kernel<Op, VV><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials, ps.tickets, f);
      else v3::cols_kernel<Op, 1><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials, ps.tickets, f);
    }
  } else {
    // lanes per output: a block for rows of [block_row_len, tile] elements, else 4..32 from
    // the mean length (segments: plan.seg_lanes when set, else a quarter of the mean length,
    // which counts the long segments too: run 38, equal segments of 200 gained 6% with 4
    // lanes over 8, segments of 1024 ran the same with 16 and 32, and one huge segment among
    // 10,000 tiny ones 1-3% better with 4 or 8 but keeps 32 here); the grid: persistent blocks (as many
    // as fit) taking the items in turn
    // (rows and segments through 32-byte accumulators, the certified pass's: at least
    // plan.heavy_lane_len elements a lane where the mean length allows, where the other
    // accumulators get 16 for rows and 64 for segments. Run 61, heavy_lane_len 16 / 64 / 128 / 256: rows of 1024
    // 2708 / 3272 / 3349 / 3201 GB/s, of 8192 2432 / 3263 / 3364 / 3247)
    constexpr bool heavy = sizeof(A) >= 32;
    const std::int64_t lanes_len = segmented && plan.seg_lanes > 0 ? 16LL * plan.seg_lanes
                                   : heavy                         ? mean_len * 16 / plan.heavy_lane_len
                                   : segmented                     ? mean_len / 4
                                                                   : mean_len;
    auto go = [&]<int G, bool ADAPT = false, bool LAZY = false>() {
      constexpr std::int64_t per = G == 0 ? v3::kFlatItem : kBlock / (G == 0 ? 1 : G);  // outputs per group item
      const std::int64_t groups = (g.outputs + per - 1) / per;
      const std::int64_t items = tiles + groups;
      // (32-byte accumulators, the certified pass's: 3 blocks a SM, 80 registers; run 65 measured
      // 4 blocks, 64 registers with 44-128 bytes spilled, 3-4% slower on rows of 1024 and 8192)
      constexpr auto kernel = v3::rows_kernel<Op, G, ADAPT, LAZY>;
      // (the certified pass over float32, plan.row_stages: its vectors staged through shared memory)
      constexpr std::size_t stage_bytes = heavy && takes_vectors_v<Op> ? v3::row_smem_bytes() : 0;
      // (only where cp.async exists, compute capability 8.0 on, and the staged blocks fit as
      // many a SM as the others: 3 x 64 KiB needs the 228 KiB of sm_80 / sm_90 class SMs)
      std::size_t dyn = 0;
      if (stage_bytes > 0 && plan.row_stages && cc_major() >= 8) {
        allow_shared<kernel>(stage_bytes);
        if (fit_blocks<kernel, stage_bytes>() >= fit_blocks<kernel>()) dyn = stage_bytes;
      }
      const int fit = dyn ? fit_blocks<kernel, stage_bytes>() : fit_blocks<kernel>();
      std::int64_t grid = items;
      if (plan.blocks_per_sm >= 0)
        grid = std::min<std::int64_t>(items, std::int64_t(plan.blocks_per_sm > 0 ? plan.blocks_per_sm : fit) * sms);
      grid = std::clamp<std::int64_t>(grid, 1, 0x7fffffff);
      v3::finish fk = f;
      fk.wait_checks = grid <= std::int64_t(fit) * sms ? 1 : 0;  // (lazy tiles: the blocks can all be resident)
      fk.claim_ahead = plan.seg_claim_ahead;
      fk.check_late = plan.seg_check_late;
      fk.warp_claim = G >= 1 && G <= 32 && !ADAPT && LAZY ? plan.seg_warp_claim : 0;  // (the group items of one lane count)
      kernel<<<static_cast<unsigned>(grid), kBlock, dyn, stream>>>(d, op, partials, ps.tickets, tile, split, tiles, items,
                                                                 plan.item_order, plan.tile_probe, fk);
    };
    auto lanes = [&]<int G>() {
      if (lazy) go.template operator()<G, false, true>();
      else go.template operator()<G>();
    };
    // (accumulators of 32 bytes or more, the certified pass's: a block per row only from rows of
    // 256 plan.heavy_lane_len elements; shorter rows read by fewer lanes each, since a block's
    // merges of such states cost more than its lanes save: run 59, rows of 8192 through the
    // certified pass 2076 -> 2533-2600 GB/s with a warp per row)
    const std::int64_t block_row_len =
        heavy ? std::max<std::int64_t>(plan.block_row_len, kBlock * plan.heavy_lane_len) : plan.block_row_len;
    if (!segmented && g.len >= block_row_len && g.len <= tile) go.template operator()<kBlock>();
    else if (seg_block) lanes.template operator()<kBlock>();
    else if (segmented && plan.seg_lanes < 0) {  // lanes per item
      if (lazy) go.template operator()<4, true, true>();
      else go.template operator()<4, true>();
    }
    else if (flat) {
      if constexpr (is_fast_sum<Op>::value) go.template operator()<0, false, true>();
    }
    else if (lanes_len >= 512) lanes.template operator()<32>();
    else if (lanes_len >= 256) lanes.template operator()<16>();
    else if (lanes_len >= 128) lanes.template operator()<8>();
    else lanes.template operator()<4>();
  }
  TALLY_CUDA(cudaGetLastError());
  if (r.stream_ordered) return;  // (dispatch refuses host outputs for these)
  if (out_bytes || idx_bytes) {
    if (out_bytes) TALLY_CUDA(cudaMemcpyAsync(r.out, out, out_bytes, cudaMemcpyDeviceToHost, stream));
    if (idx_bytes) TALLY_CUDA(cudaMemcpyAsync(r.index, index, idx_bytes, cudaMemcpyDeviceToHost, stream));
    TALLY_CUDA(cudaStreamSynchronize(stream));
    if (*wsp->host_done != ticket) throw error(errc::cuda_error, "tally: a shape kernel finished without its completion word");
  } else {
    wait_for(wsp->host_done, ticket, stream);
  }
  std::atomic_thread_fence(std::memory_order_acquire);  // read the status after the ticket
  st.bad_offset_at = host_status[0];  // (-1: none)
  st.overflow_at = host_status[1];
}

template <class Op, class Make>
void launch(const geometry& g, const request& r, outcome& st, cudaStream_t stream, Make&& make) {
  using A = typename Op::acc;
  const bool segmented = g.offsets != nullptr;
  const bool column_mode = !segmented && g.outputs > 1 && std::llabs(g.outer) < std::llabs(g.inner);
  if (tuning::shapes_vector_loads() && tuning::shapes_fused()) {
    const bool contiguous_rows = !column_mode && (segmented || g.inner == 1) &&
                                 reinterpret_cast<std::uintptr_t>(g.x) % sizeof(typename Op::elem) == 0;
    if (column_mode || contiguous_rows) return launch_v3<Op>(g, r, st, stream, make, column_mode);
  }
  geo d{g.x, g.offsets, g.outputs, g.len, g.outer, g.inner, g.n};
  // v2 (tuning::shapes_vector_loads, default on): cached scratch always; the v2 row / segment
  // kernels where the outputs are contiguous and the base element-aligned.
  const bool v2 = tuning::shapes_vector_loads();
  const bool v2_rows = v2 && !column_mode && (segmented || g.inner == 1) &&
                       reinterpret_cast<std::uintptr_t>(g.x) % sizeof(typename Op::elem) == 0;
  const std::int64_t tile = v2_rows ? v2::kTile2 : kTile;

  // Scratch: [bad, ovf] status words, the partials, and results bound for host memory.
  std::int64_t tiles = 0, chunks = 1, chunk = g.len;
  if (column_mode) {
    const std::int64_t gx = (g.outputs + kBlock - 1) / kBlock;
    row_chunks(g.len, (8LL * sm_count() + gx - 1) / gx, 64, chunks, chunk);  // a few waves
  } else if (g.n > 0 && (segmented || g.len > tile)) {
    tiles = (g.n + tile - 1) / tile;
  }
  const std::size_t out_bytes = r.out_on_host && r.out ? dtype_size(r.out_type) * g.outputs : 0;
  const std::size_t idx_bytes = r.out_on_host && r.index ? sizeof(std::int64_t) * g.outputs : 0;
  const std::size_t part_count = column_mode ? (chunks > 1 ? chunks * g.outputs : 0) : 2 * tiles;
  const std::size_t s_part = round_up(2 * sizeof(long long));
  const std::size_t s_out = s_part + round_up(part_count * sizeof(A));
  const std::size_t s_idx = s_out + round_up(out_bytes);
  const std::size_t total = s_idx + round_up(idx_bytes);
  scratch_lease lease(total, stream, v2);  // v2: the cached scratch, this call's until its sync
  char* scratch = lease.data();
  auto* status = reinterpret_cast<long long*>(scratch);
  auto* partials = reinterpret_cast<A*>(scratch + s_part);
  void* out = out_bytes ? scratch + s_out : r.out;
  std::int64_t* index = idx_bytes ? reinterpret_cast<std::int64_t*>(scratch + s_idx) : r.index;
  TALLY_CUDA(cudaMemsetAsync(status, 0x7f, 2 * sizeof(long long), stream));
  Op op = make(out, index, status + 1);

  const long long* bad = check_offsets(d, status, stream);
  TALLY_CUDA(cudaGetLastError());
  if (column_mode) {
    dim3 grid(static_cast<unsigned>((g.outputs + kBlock - 1) / kBlock), static_cast<unsigned>(chunks));
    shapes_col_kernel<Op><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials);
    TALLY_CUDA(cudaGetLastError());
    if (chunks > 1) {
      shapes_col_finish<Op><<<grid.x, kBlock, 0, stream>>>(d, op, static_cast<int>(chunks), partials);
      TALLY_CUDA(cudaGetLastError());
    }
  } else if (v2_rows) {
    if (tiles > 0) {
      v2::tile_kernel<Op, v2::kTile2><<<static_cast<unsigned>(tiles), kBlock, 0, stream>>>(d, partials, bad);
      TALLY_CUDA(cudaGetLastError());
    }
    // lanes per output from the mean length (a group reads ~2 vectors per lane per step)
    const std::int64_t mean_len = g.outputs > 0 ? g.n / g.outputs : 0;
    auto go = [&]<int G>() {
      unsigned blocks = static_cast<unsigned>((g.outputs + kBlock / G - 1) / (kBlock / G));
      v2::group_kernel<Op, G, v2::kTile2><<<blocks, kBlock, 0, stream>>>(d, op, partials, bad);
      TALLY_CUDA(cudaGetLastError());
    };
    if (mean_len >= 512) go.template operator()<32>();
    else if (mean_len >= 256) go.template operator()<16>();
    else if (mean_len >= 128) go.template operator()<8>();
    else go.template operator()<4>();
  } else {
    if (tiles > 0) {
      shapes_tile_kernel<Op><<<static_cast<unsigned>(tiles), kBlock, 0, stream>>>(d, partials, bad);
      TALLY_CUDA(cudaGetLastError());
    }
    unsigned blocks = static_cast<unsigned>((g.outputs + kBlock / 32 - 1) / (kBlock / 32));
    shapes_warp_kernel<Op><<<blocks, kBlock, 0, stream>>>(d, op, partials, bad);
    TALLY_CUDA(cudaGetLastError());
  }
  if (r.stream_ordered) {  // the status words to the caller's memory, in stream order
    if (r.status_device) shapes_export_status<<<1, 32, 0, stream>>>(status, reinterpret_cast<long long*>(r.status_device));
    TALLY_CUDA(cudaGetLastError());
    return;
  }
  long long words[2];
  TALLY_CUDA(cudaMemcpyAsync(words, status, sizeof words, cudaMemcpyDeviceToHost, stream));
  if (out_bytes) TALLY_CUDA(cudaMemcpyAsync(r.out, out, out_bytes, cudaMemcpyDeviceToHost, stream));
  if (idx_bytes) TALLY_CUDA(cudaMemcpyAsync(r.index, index, idx_bytes, cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA(cudaStreamSynchronize(stream));
  st.bad_offset_at = words[0] == kNone ? -1 : words[0];
  st.overflow_at = words[1] == kNone ? -1 : words[1];
}

// `as`: the caller's element type when g is a widened copy (src/shapes_widen.hpp).
template <class T>
void run_t(const geometry& g, const request& r, outcome& st, cudaStream_t s, tally::shapes::store as = tally::shapes::store::same) {
  if (r.what == kind::extreme) {
    bool mx = r.eop == extreme_op::max, skip = r.nans == nan_policy::omit;
    auto mk = [&]<class Op>() {
      launch<Op>(g, r, st, s, [as](void* out, std::int64_t* idx, long long*) { return Op{static_cast<T*>(out), idx, as}; });
    };
    if (mx && skip) mk.template operator()<extreme<T, true, true>>();
    else if (mx) mk.template operator()<extreme<T, true, false>>();
    else if (skip) mk.template operator()<extreme<T, false, true>>();
    else mk.template operator()<extreme<T, false, false>>();
    return;
  }
  auto mk = [&]<class Op, class Out>() {
    launch<Op>(g, r, st, s, [](void* out, std::int64_t*, long long* ovf) { return Op{static_cast<Out*>(out), ovf}; });
  };
  if constexpr (std::is_integral_v<T>) {
    const bool biased = as == tally::shapes::store::u64, to_u64 = r.out_type == dtype::uint64;
    auto mk_int = [&]<class Op, class Out>(auto... flags) {
      launch<Op>(g, r, st, s, [=](void* out, std::int64_t*, long long* ovf) { return Op{static_cast<Out*>(out), ovf, flags...}; });
    };
    if (r.what == kind::mean) {
      if (r.out_type == dtype::float32) mk_int.template operator()<int_mean<T, float>, float>(biased);
      else mk_int.template operator()<int_mean<T, double>, double>(biased);
    } else {
      mk_int.template operator()<int_sum<T>, std::int64_t>(to_u64, biased);
    }
  } else if (r.what == kind::mean || r.acc == accuracy::exact) {  // src/cuda/shapes_exact.cu
    // (tuning::shapes_certified: the certified pass first, in the fast kernels; the exact
    // path behind it only when some output was not proved. Blocking forms: the host reads the
    // pass's verdict; stream-ordered ones (with a status word): the exact kernels read it on
    // the device, from the caller's status words, and return at once when every output was
    // proved. Column mode too since the eighteenth session: its four 32-byte states per lane
    // fit 80 registers with each output's four rows in flight taken as one term, add4, and
    // one row of partials loaded at a time when chunks combine)
    // Other columns (float64, or not read as vectors) through the pass only where it measured
    // faster than the exact kernels (eighteenth session, float32 with add4): from
    // 32 column blocks (32 V outputs each, V elements a 16-byte vector) to under one wave of
    // 3 blocks a SM, its row chunks then filling whole waves. 2^26 float32, stream-ordered
    // GB/s, pass / exact kernels: 8192 x 8192 (64 column blocks) 2724 / 2587 (run 65);
    // 65536 x 1024 (8: the last block of each column tile combines 48 chunks) 2047 / 2185;
    // 1024 x 65536 (512, more than a wave) 2545 / 2605 (run 63).
    const bool column_mode = g.offsets == nullptr && g.outputs > 1 && std::llabs(g.outer) < std::llabs(g.inner);
    const std::int64_t col_block = 32LL * (16 / static_cast<std::int64_t>(sizeof(T)));
    // Since the nineteenth session, float32 columns read as 16-byte vectors always go through
    // the pass (its running sums with the next rows loaded ahead, plan.col_run; run 68:
    // 3119 / 2651 / 3215 GB/s on the three shapes against the exact kernels' 2765 / 2307 / 2663).
    const int cert_cols = tuning::shapes_v3_params().cert_cols;
    const bool vec_f32 = std::is_same_v<T, float> && g.outer == 1 && g.inner > 0 && g.inner % 4 == 0 &&
                         reinterpret_cast<std::uintptr_t>(g.x) % 16 == 0;
    const bool skip_columns =
        column_mode && (cert_cols == 0 || (cert_cols < 0 && !vec_f32 &&
                                           (g.outputs < 32 * col_block || g.outputs >= col_block * 3 * sm_count())));
    if (tuning::shapes_certified() && (!r.stream_ordered || r.status_device) && !skip_columns) {
      outcome c;
      auto pass = [&]<class Out, bool MEAN>() {
        using Op = certified_sum<T, Out, MEAN>;
        launch<Op>(g, r, c, s, [](void* out, std::int64_t*, long long* ovf) { return Op{static_cast<Out*>(out), ovf}; });
      };
      const bool mean = r.what == kind::mean;
      if (r.out_type == dtype::float32) {
        if (mean) pass.template operator()<float, true>();
        else pass.template operator()<float, false>();
      } else {
        if (mean) pass.template operator()<double, true>();
        else pass.template operator()<double, false>();
      }
      if (r.stream_ordered) {  // the pass's status words are in r.status_device: the gate
        shapes_exact_run(g, r, st, s, reinterpret_cast<long long*>(r.status_device));
        return;
      }
      if (c.bad_offset_at >= 0 || c.overflow_at < 0) {  // offsets that break the rules (reported), or every output proved
        st.bad_offset_at = c.bad_offset_at;
        return;
      }
    }
    shapes_exact_run(g, r, st, s);
  } else {  // fast floating sums
    if (r.out_type == dtype::float32) mk.template operator()<fast_sum<T, float>, float>();
    else mk.template operator()<fast_sum<T, double>, double>();
  }
}

// A narrow element type (src/shapes_widen.hpp): its elements widened into a compact device
// copy (the (device, stream) cache's copy buffer, kept for later calls like the scratch), then
// the copy reduced as W. Contiguous sources aligned to 16 bytes: a thread converts 16 /
// sizeof(W) elements a step, one load and one 16-byte store (run 110 wrote the elements of
// one 16-byte load with several 16-byte stores a thread, 64 bytes apart across the warp:
// int8 24% slower than one element a thread); others one element a thread (source_map:
// 64-bit divisions for strided layouts).
template <class Src, class W>
__global__ void __launch_bounds__(kBlock) widen_kernel(const Src* x, W* copy, std::int64_t n, tally::shapes::source_map at,
                                                       bool vectors) {
  using L = std::conditional_t<std::is_same_v<Src, bool>, unsigned char, Src>;  // (bool: its byte)
  const L* xl = reinterpret_cast<const L*>(x);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  auto one = [&](const L& v) -> W {
    if constexpr (std::is_same_v<Src, bool>) return tally::shapes::widen_bool(v);
    else return tally::shapes::widen_one(v);
  };
  if (vectors) {
    // E elements a thread and step: one 16-byte store of the copy, from one load of E
    // sizeof(Src) bytes (4 for int8, 8 for the 16-bit types and uint32, 16 for uint64), so a
    // warp's loads and stores are both contiguous; 4 steps in flight together
    constexpr int E = 16 / static_cast<int>(sizeof(W));
    constexpr int LB = E * static_cast<int>(sizeof(Src));
    using chunk = std::conditional_t<LB == 4, unsigned, std::conditional_t<LB == 8, uint2, uint4>>;
    static_assert(sizeof(chunk) == LB);
    constexpr int U = 4;
    const std::int64_t nv = n / E;
    const chunk* xv = reinterpret_cast<const chunk*>(x);
    uint4* cv = reinterpret_cast<uint4*>(copy);
    auto convert = [&](const chunk& c) {
      L e[E];
      __builtin_memcpy(e, &c, LB);
      W w[E];
#pragma unroll
      for (int k = 0; k < E; ++k) w[k] = one(e[k]);
      uint4 o;
      __builtin_memcpy(&o, w, 16);
      return o;
    };
    std::int64_t v = first;
    for (; v + (U - 1) * stride < nv; v += U * stride) {
      chunk c[U];
#pragma unroll
      for (int u = 0; u < U; ++u) c[u] = __ldg(xv + v + u * stride);
#pragma unroll
      for (int u = 0; u < U; ++u) cv[v + u * stride] = convert(c[u]);
    }
    for (; v < nv; v += stride) cv[v] = convert(__ldg(xv + v));
    for (std::int64_t i = nv * E + first; i < n; i += stride) copy[i] = one(xl[i]);
    return;
  }
  for (std::int64_t i = first; i < n; i += stride) copy[i] = one(xl[at(i)]);
}

template <class Src, class W> void run_widened(const geometry& g, const request& r, outcome& st, cudaStream_t s) {
  copy_lease copy(std::max<std::size_t>(static_cast<std::size_t>(g.n) * sizeof(W), 256), s);
  if (g.n > 0) {
    const tally::shapes::source_map at(g);
    const bool vectors = at.contiguous && reinterpret_cast<std::uintptr_t>(g.x) % 16 == 0;
    const std::int64_t items = vectors ? g.n / (16 / static_cast<std::int64_t>(sizeof(W))) + 1 : g.n;
    const std::int64_t blocks = std::min<std::int64_t>((items + kBlock - 1) / kBlock, std::int64_t(16) * sm_count());
    widen_kernel<Src, W><<<static_cast<unsigned>(blocks), kBlock, 0, s>>>(static_cast<const Src*>(g.x), reinterpret_cast<W*>(copy.data()),
                                                                       g.n, at, vectors);
    TALLY_CUDA(cudaGetLastError());
  }
  run_t<W>(tally::shapes::compact(g, copy.data()), r, st, s, tally::shapes::store_of(g.type));
}

}  // namespace

bool shapes_supported(const tally::shapes::request&, dtype) noexcept {
  return true;  // every operation and element type of the shape layer (exact ones: shapes_exact.cu)
}

void shapes_clear_status(std::int64_t* status_device, stream_t stream, int device) {
  device_guard guard(device);
  TALLY_CUDA(cudaMemsetAsync(status_device, 0xff, 2 * sizeof(std::int64_t), stream));  // -1, -1
}

void shapes_run(const geometry& g, const request& r, outcome& st, stream_t stream, int device) {
  device_guard guard(device);
  switch (g.type) {
    case dtype::float32: return run_t<float>(g, r, st, stream);
    case dtype::float64: return run_t<double>(g, r, st, stream);
    case dtype::int32: return run_t<std::int32_t>(g, r, st, stream);
    case dtype::int64: return run_t<std::int64_t>(g, r, st, stream);
    case dtype::float16: return run_widened<tally::float16, float>(g, r, st, stream);
    case dtype::bfloat16: return run_widened<tally::bfloat16, float>(g, r, st, stream);
    case dtype::int8: return run_widened<std::int8_t, std::int32_t>(g, r, st, stream);
    case dtype::int16: return run_widened<std::int16_t, std::int32_t>(g, r, st, stream);
    case dtype::uint8: return run_widened<std::uint8_t, std::int32_t>(g, r, st, stream);
    case dtype::uint16: return run_widened<std::uint16_t, std::int32_t>(g, r, st, stream);
    case dtype::bool_: return run_widened<bool, std::int32_t>(g, r, st, stream);
    case dtype::uint32: return run_widened<std::uint32_t, std::int64_t>(g, r, st, stream);
    case dtype::uint64: return run_widened<std::uint64_t, std::int64_t>(g, r, st, stream);
  }
}

}  // namespace tally::cuda
