// Launch layer of the shape layer's exact floating sums and means (src/cuda/shapes_exact.cuh):
// picks row or column mode as src/cuda/shapes.cu does, sizes the grids, and lays out the
// scratch: status words, zeroed merge slots (digits, flags, counter) for outputs split across
// blocks, and results bound for host memory. Deterministic: the merges are integer additions.
#include "cuda/shapes_exact.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>

#include "cuda/check.hpp"
#include "cuda/shapes_exact.cuh"
#include "cuda/shapes_scratch.hpp"
#include "cuda/shapes_tuning.hpp"

namespace tally::cuda {
namespace {

using namespace shapes_k;
using namespace shapes_k::exact;
using tally::shapes::geometry;
using tally::shapes::kind;
using tally::shapes::outcome;
using tally::shapes::request;

std::size_t round_up(std::size_t b) { return (b + 255) / 256 * 256; }

int sm_count() {
  int dev = 0, sms = 0;
  TALLY_CUDA(cudaGetDevice(&dev));
  TALLY_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}


template <class T, class Out, bool MEAN>
void launch(const geometry& g, const request& r, outcome& st, cudaStream_t stream, long long* gate) {
  constexpr int W = slot_words<T>;
  const bool segmented = g.offsets != nullptr;
  const bool column_mode = !segmented && g.outputs > 1 && std::llabs(g.outer) < std::llabs(g.inner);
  geo d{g.x, g.offsets, g.outputs, g.len, g.outer, g.inner, g.n};

  // Column mode: blocks of kColOut outputs, rows split into chunks for a few waves of blocks.
  const std::int64_t gx = (g.outputs + kColOut - 1) / kColOut;
  std::int64_t chunks = 1, chunk = std::max<std::int64_t>(1, g.len), tiles = 0;
  // gated (behind the certified pass): plan.gate_blocks a SM, else 8 (rows, segments) and 4 (columns)
  const int gate_blocks = gate ? tuning::shapes_v3_params().gate_blocks : 0;
  if (column_mode) {
    row_chunks(g.len, ((gate_blocks > 0 ? gate_blocks : 4LL) * sm_count() + gx - 1) / gx, 256, chunks, chunk);
  } else if (g.n > 0 && (segmented || g.len > kXTile)) {
    tiles = (g.n + kXTile - 1) / kXTile;
  }
  const std::size_t slot_count = column_mode ? (chunks > 1 ? static_cast<std::size_t>(g.outputs) : 0) : static_cast<std::size_t>(tiles);
  const std::size_t counter_count = column_mode && chunks > 1 ? static_cast<std::size_t>(gx) : 0;
  const std::size_t out_bytes = r.out_on_host ? sizeof(Out) * static_cast<std::size_t>(g.outputs) : 0;
  const std::size_t s_slots = round_up(2 * sizeof(long long));
  const std::size_t merge_bytes = (slot_count * W + counter_count) * sizeof(std::int64_t);
  const std::size_t s_out = s_slots + round_up(merge_bytes);
  const std::size_t total = s_out + round_up(out_bytes);
  const bool cached = tuning::shapes_vector_loads();
  scratch_lease lease(total, stream, cached);  // held until the sync below
  // gated, or stream-ordered columns: the stream's persistent block counter (0 between calls),
  // for the exact kernel's blocks to count themselves and set the caller's status words (no
  // status kernel)
  const bool count_blocks = cached && (gate || (column_mode && r.stream_ordered && r.status_device));
  unsigned* done_counter = count_blocks ? lease.persistent(0).blocks_done : nullptr;
  char* scratch = lease.data();
  auto* status = reinterpret_cast<long long*>(scratch);
  // the merge slots and counters: the stream's zero-between-calls memory (the kernels leave it
  // zero; no memset, so that a gated kernel follows the pass directly, plan.pdl), else zeroed here
  auto* slots = merge_bytes && cached ? static_cast<std::int64_t*>(lease.zeroed(merge_bytes))
                                      : reinterpret_cast<std::int64_t*>(scratch + s_slots);
  auto* counters = reinterpret_cast<unsigned long long*>(slots + slot_count * W);
  Out* out = out_bytes ? reinterpret_cast<Out*>(scratch + s_out) : static_cast<Out*>(r.out);
  if (!gate && !(column_mode && done_counter)) TALLY_CUDA(cudaMemsetAsync(status, 0x7f, 2 * sizeof(long long), stream));
  if (merge_bytes && !cached) TALLY_CUDA(cudaMemsetAsync(slots, 0, merge_bytes, stream));
  // gated: launched as a programmatic dependent of the certified pass (sm_90, plan.pdl), so that
  // its launch overlaps the pass's last blocks; griddepcontrol.wait in the kernel orders its
  // gate read after the whole pass
  cudaLaunchAttribute pdl_attr[1];
  pdl_attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  pdl_attr[0].val.programmaticStreamSerializationAllowed = 1;
  // (compute capability 9.0 and later, with sm_90 device code: griddepcontrol; else plainly)
  const bool pdl = gate && tuning::shapes_v3_params().pdl != 0 && dependent_launch_ok();
  auto config = [&](std::int64_t gx_, std::int64_t gy_) {
    cudaLaunchConfig_t c{};
    c.gridDim = dim3(static_cast<unsigned>(gx_), static_cast<unsigned>(gy_));
    c.blockDim = dim3(kBlock);
    c.dynamicSmemBytes = 0;
    c.stream = stream;
    c.attrs = pdl_attr;
    c.numAttrs = pdl ? 1 : 0;
    return c;
  };

  // (gated: the certified pass checked the offsets; its verdict is in gate[0])
  const long long* bad = gate ? nullptr : check_offsets(d, status, stream);
  TALLY_CUDA(cudaGetLastError());
  if (column_mode) {
    const cudaLaunchConfig_t c = config(gx, chunks);
    long long* status_out = gate ? gate : done_counter ? reinterpret_cast<long long*>(r.status_device) : nullptr;
    TALLY_CUDA(cudaLaunchKernelEx(&c, exact_col_kernel<T, Out, MEAN>, d, out, chunk, slots, counters,
                                  static_cast<const long long*>(gate), status_out, done_counter));
  } else {
    // Gated (behind the certified pass, which proves every output of most calls): grids of
    // at most 8 blocks a SM, which loop over the tiles and outputs when the gate opens, so
    // that a closed gate costs a few thousand empty blocks fewer (runs 60-62: the stream-
    // ordered certified calls trailed the blocking ones by up to 8%; measured since run 63).
    const std::int64_t cap = gate ? (gate_blocks > 0 ? gate_blocks : 8LL) * sm_count() : std::numeric_limits<std::int64_t>::max();
    const std::int64_t blocks = (g.outputs + kWarps - 1) / kWarps;
    if (gate && done_counter) {  // one launch: the tiles and the short outputs, and the overflow word (eighteenth session)
      const std::int64_t grid = std::max<std::int64_t>(1, std::min(std::max(tiles, blocks), cap));
      const cudaLaunchConfig_t c = config(grid, 1);
      TALLY_CUDA(cudaLaunchKernelEx(&c, exact_gated_kernel<T, Out, MEAN>, d, out, slots, tiles > 0, gate, done_counter));
    } else {
    if (tiles > 0) {
      exact_tile_kernel<T, Out, MEAN><<<static_cast<unsigned>(std::min(tiles, cap)), kBlock, 0, stream>>>(d, out, slots, bad, gate);
      TALLY_CUDA(cudaGetLastError());
    }
    exact_warp_kernel<T, Out, MEAN><<<static_cast<unsigned>(std::max<std::int64_t>(1, std::min(blocks, cap))), kBlock, 0, stream>>>(d, out, bad, gate);
    TALLY_CUDA(cudaGetLastError());
    }
  }
  if (r.stream_ordered) {  // the status words to the caller's memory, in stream order
    if (gate) {
      // (gate is r.status_device; with a counter, the last exact kernel's last block has set
      // its overflow word)
      if (!done_counter) shapes_gated_status<<<1, 32, 0, stream>>>(gate);
    } else if (r.status_device && !(column_mode && done_counter)) shapes_export_status<<<1, 32, 0, stream>>>(status, reinterpret_cast<long long*>(r.status_device));
    TALLY_CUDA(cudaGetLastError());
    return;
  }
  long long words[2];
  TALLY_CUDA(cudaMemcpyAsync(words, status, sizeof words, cudaMemcpyDeviceToHost, stream));
  if (out_bytes) TALLY_CUDA(cudaMemcpyAsync(r.out, out, out_bytes, cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA(cudaStreamSynchronize(stream));
  st.bad_offset_at = words[0] == kNone ? -1 : words[0];
}

template <class T> void run_t(const geometry& g, const request& r, outcome& st, cudaStream_t s, long long* gate) {
  const bool mean = r.what == kind::mean;
  if (r.out_type == dtype::float32) {
    if (mean) launch<T, float, true>(g, r, st, s, gate);
    else launch<T, float, false>(g, r, st, s, gate);
  } else {
    if (mean) launch<T, double, true>(g, r, st, s, gate);
    else launch<T, double, false>(g, r, st, s, gate);
  }
}

}  // namespace

// (shapes_exact.hpp; the gated exact kernels and, since the sixtieth session, the gated copy of
// src/cuda/shapes.cu: the same build's device code, so one kernel's binaryVersion answers)
bool dependent_launch_ok() {
  static std::atomic<int> known[64];  // per device: 0 not asked, 1 no, 2 yes
  int dev = 0;
  TALLY_CUDA(cudaGetDevice(&dev));
  if (dev >= 0 && dev < 64 && known[dev].load(std::memory_order_relaxed) != 0) return known[dev].load() == 2;
  int major = 0;
  TALLY_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  cudaFuncAttributes fa{};
  TALLY_CUDA(cudaFuncGetAttributes(&fa, exact_gated_kernel<float, float, false>));
  const bool ok = major >= 9 && fa.binaryVersion >= 90;
  if (dev >= 0 && dev < 64) known[dev].store(ok ? 2 : 1);
  return ok;
}

void shapes_exact_run(const geometry& g, const request& r, outcome& st, cudaStream_t stream, long long* gate) {
  if (g.type == dtype::float32) run_t<float>(g, r, st, stream, gate);
  else run_t<double>(g, r, st, stream, gate);
}

}  // namespace tally::cuda
