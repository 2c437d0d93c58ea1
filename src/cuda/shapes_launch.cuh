// The v3 launch of the shape kernels (src/cuda/shapes_v3.cuh), shared by src/cuda/shapes.cu
// (the four core element types) and src/cuda/shapes_narrow.cu (16-bit floats, int8, uint8 and
// bool read by the kernels themselves): picks the mode, the lanes per output and the grid,
// leases the scratch, launches, and for blocking calls waits for the completion word.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <type_traits>

#include "cuda/check.hpp"
#include "cuda/shapes.cuh"
#include "cuda/shapes_cols_wide.cuh"
#include "cuda/shapes_scratch.hpp"
#include "cuda/shapes_tuning.hpp"
#include "cuda/shapes_v2.cuh"
#include "cuda/shapes_v3.cuh"
#include "cuda/workspace.hpp"
#include "shapes_backend.hpp"

namespace tally::cuda::shapes_launch {

using namespace shapes_k;
using tally::shapes::geometry;
using tally::shapes::outcome;
using tally::shapes::request;

inline int sm_count() {
  int dev = 0, sms = 0;
  TALLY_CUDA(cudaGetDevice(&dev));
  TALLY_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

inline int cc_major() {
  int dev = 0, major = 0;
  TALLY_CUDA(cudaGetDevice(&dev));
  TALLY_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  return major;
}

inline std::size_t round_up(std::size_t b) { return (b + 255) / 256 * 256; }

/// Whether `stream` is capturing into a CUDA graph (v3::finish::check_end is not taken then).
inline bool stream_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus c = cudaStreamCaptureStatusNone;
  TALLY_CUDA(cudaStreamIsCapturing(stream, &c));
  return c != cudaStreamCaptureStatusNone;
}

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

/// Lanes an output for the FEW ops of 1- and 2-byte elements whose partial vectors are read
/// masked (v2::takes_masked: exact sums of bytes and 16-bit integers, float16 fixed-point sums,
/// bfloat16 certified sums (forty-third session; run 155, segments of 200: 1555 GB/s, against
/// 1551 for the per-element op with its old lanes);
/// takes_masked_at: byte and 16-bit integer min / max, and float16 / bfloat16 min / max from
/// the forty-fourth session), from the mean output length in bytes
/// (rows and segments alike). Fewer lanes share an output's fixed costs (offsets, merge, write)
/// among fewer threads' idle time; more keep more loads in flight a long output. Measured
/// (run 150, H100, 2^26 int8 bytes in equal segments, GB/s with 1 / 2 / 4 / 32 lanes):
///   max and first index: 16 B 700 / 385 / 204 / 28; 64 B 1278 / 795 / 594 / 87;
///     200 B 1282 / 1201 / 793 / 251; 600 B 1349 / 1368 / 1347 / 549;
///     1000 B 1308 / 1516 / 1399 / 813; 2000 B 1151 / 1459 / 1597 / 860;
///     8192 B 471 / 849 / 1252 / 1549;
///   sums: 16 B 833 / 509 / 279 / 35; 64 B 1518 / 1417 / 922 / 135;
///     200 B 1475 / 1607 / 1514 / 399; 600 B 1391 / 1598 / 1661 / 975;
///     1000 B 1377 / 1630 / 1690 / 1416; 2000 B 1253 / 1530 / 1695 / 1702;
///     8192 B 570 / 1031 / 1505 / 1715.
/// The byte min / max (`rounds`: v2::takes_rounds_at, every round of a segment's vectors one
/// state update, masked at the segment's ends, from the forty-eighth session) 1, 4 or 32:
/// measured (run 173, H100, the same binary, GB/s with 1 / 2 / 4 lanes):
///   16 B 595 / 330 / 174; 64 B 1513 / 1100 / 630; 200 B 1480 / 1496 / 1517;
///   600 B 1361 / 1558 / 1639; 1000 B 1344 / 1624 / 1646; 2000 B 1256 / 1599 / 1757;
///   8192 B 563 / 1010 / 1485 (32 lanes: 1705, and 1777 as the rule's).
/// The sums and means of 2-byte elements (`shorts`: 16-bit integers and the float16 fixed-point
/// sums; not the bfloat16 certified pass's) take 4 lanes from 256 bytes, not 512 (fifty-seventh
/// session; their vectors cost more instructions a byte than the bytes' dp4a): run 195, H100,
/// 2^26 elements, stream-ordered GB/s with 2 / 4 lanes: int16 sums along segments of 200
/// (400 B) 2276 / 2407, uint16 2277 / 2407, float16 exact 2249 / 2238; the probe
/// (narrow_seg_probe.cu) int16 segments of 200 0.773 / 0.824 of read, rows of 200 0.818 / 0.873.
/// From 256 bytes they take few_unmasked_lanes' counts (run 199, H100, `tally_bench --only
/// narrow-lanes`, int16 sums along equal segments, blocking GB/s with 4 / 8 / 16 / 32 lanes:
/// 600 B 2021 / 1997 / 1561 / 906; 1200 B 2104 / 2142 / 2100 / 1605; 2000 B 2140 / 2192 /
/// 2230 / 1837; 4000 B 2160 / 2180 / 2217 / 2206: the 4 lanes they had up to 2 KiB lost 2-4%
/// from 1 KiB on).
/// The byte min / max (`rounds`) take 2 lanes from 128 to 512 bytes (fifty-seventh session; they
/// had 4): run 203, H100, `tally_bench --only narrow-lanes`, int8 max with index along equal
/// segments, blocking GB/s with 1 / 2 / 4 / 8 lanes: 64 B 1521 / 1111 / 640 / 343; 200 B
/// 1468 / 1537 / 1512 / 920; 300 B 1355 / **1606** / 1306 / 1248; 600 B 1371 / 1572 / 1664 /
/// 1295; 1000 B 1341 / 1630 / 1683 / 1678; 2000 B 1283 / 1634 / 1769 / 1775 (run 204, the rule: 300 B
/// 1643, 200 B 1550).
inline int few_unmasked_lanes(std::int64_t mean_bytes);
inline int few_masked_lanes(std::int64_t mean_bytes, bool extremes, bool rounds = false, bool shorts = false) {
  if (rounds) return mean_bytes < 128 ? 1 : mean_bytes < 512 ? 2 : mean_bytes < 4096 ? 4 : 32;
  if (extremes) return mean_bytes <= 256 ? 1 : mean_bytes <= 1024 ? 2 : mean_bytes < 4096 ? 4 : 32;
  if (shorts) return mean_bytes < 128 ? 1 : mean_bytes < 256 ? 2 : few_unmasked_lanes(mean_bytes);
  return mean_bytes < 128 ? 1 : mean_bytes < 512 ? 2 : mean_bytes < 2048 ? 4 : 32;
}

/// Lanes a segment for the byte and bool sums and means (v2::takes_lane_sums: 64-bit lane
/// partials, v2::fold_span_sum), from the mean length in bytes: 1 below 128, 2 below 256, 4
/// below 1.5 KiB, 16 below 4 KiB, then 32 (few_masked_lanes' byte sums, which rows keep, had 2 up to 512 B).
/// Run 210 (H100, `tally_bench --only narrow-lanes`, int8 sums along equal segments, blocking
/// GB/s with 1 / 2 / 4 / 8 / 16 / 32 lanes, every output equal at every lane count): 200 B
/// 1496 / 1625 / 1632 / 1153 / 684 / 373; 300 B 1359 / 1605 / **1640** / 1507 / 911 / 537;
/// 600 B 1351 / 1557 / 1654 / 1636 / 1497 / 924; 1000 B 1358 / 1618 / 1716 / 1706 / 1705 /
/// 1343; 2000 B 1287 / 1590 / 1714 / 1752 / **1769** / 1756; 8192 B 602 / 1082 / 1556 / 1734 /
/// 1769 / 1770. Run 211 (H100, the same sweep; the ShapesNarrow segment tests of int8, uint8
/// and bool passed under few_lanes 2, 4 and 16): 1000 B 1374 / 1664 / 1758 / 1791 / 1781 /
/// 1379; 2000 B 1303 / 1615 / 1764 / 1802 / **1816** / 1780; 8192 B 610 / 1116 / 1619 / 1793 /
/// 1850 / 1842. So 16 lanes from 1.5 KiB to 4 KiB (+2.9-3.2% at 2000 B in both runs; 8 lanes at
/// 1000 B: -0.6% in run 210, +1.8% in 211, not taken), then 32 (16 and 32 within 0.5% at 8 KiB).
inline int few_byte_sum_lanes(std::int64_t mean_bytes) {
  return mean_bytes < 128 ? 1 : mean_bytes < 256 ? 2 : mean_bytes < 1536 ? 4 : mean_bytes < 4096 ? 16 : 32;
}

/// Lanes an output (a row or a segment) for the FEW ops not under few_masked_lanes (elements of
/// 4 and 8 bytes, and the ops of 1- and 2-byte elements whose partial vectors are read element
/// by element: the float16 / bfloat16 fast sums), but the certified pass's, from the mean
/// length in bytes: 4 below 1 KiB, 8 below 1.75 KiB, 16 below 4 KiB, then 32; about 100-250
/// bytes a lane, 2-4 rounds of kGroupUnroll vectors. Before the fifty-seventh session segments
/// had 4 below 4 KiB and rows 4 below 1 KiB, 32 from it. Run 199 (`tally_bench --only
/// narrow-lanes`, blocking GB/s, lengths of 16 to 8192 elements) moved the 8 / 16 boundary
/// below 2 KiB: at 2000 B float16 fast sums along segments read 2092 / 2147 with 8 / 16
/// lanes (int16 sums 2192 / 2230), at 1600 B uint64 sums 2695 / 2698, at 1200 B float16 2210 /
/// 2221 and int16 2142 / 2100. At 1.5 KiB (run 200) the uint64 max with index along
/// segments of 200 (1600 B) took 16 lanes and read 2712 GB/s stream-ordered against 2779
/// with 8 (run 196): so 1.75 KiB, between the two. Run 199 also measured the rows: uint64 rows of 200 2742 GB/s by
/// the rule against 2352 with the 32 lanes rows had, float16 fast rows of 600 2293 against
/// 2233. Measured (runs 194-195, H100,
/// bench/experiments/narrow_seg_probe.cu: the library's rows_body, integer sums, 2^26
/// elements, fraction of the read kernel with 4 / 8 / 16 / 32 lanes):
///   uint64 (1600 B) equal segments of 200 0.884 / 0.922 / 0.923 / 0.770, rows of 200
///     0.899 / 0.937 / 0.938 / 0.808;
///   uint32 (800 B) segments 0.878 / 0.881 / 0.732 / 0.583, rows 0.909 / 0.915 / 0.773 / 0.650.
/// (Library, run 195: uint64 sums along segments of 200, stream-ordered, 2774 -> 2876 GB/s.)
inline int few_unmasked_lanes(std::int64_t mean_bytes) {
  return mean_bytes < 1024 ? 4 : mean_bytes < 1792 ? 8 : mean_bytes < 4096 ? 16 : 32;
}

/// Outputs a lane of the column kernel: a 16-byte vector's elements, but for FEW ops (the
/// narrow types') no more than keep the block's (8 warps x 32 lanes x V) accumulators within
/// 24 KiB of static shared memory (16-byte vectors of int8 with 16-byte states would take
/// 64 KiB, past the 48 KiB a static array may have).
template <bool FEW, class T, class A> constexpr int few_col_vector() {
  int v = 16 / static_cast<int>(sizeof(T));
  if constexpr (FEW)
    while (v > 1 && static_cast<std::size_t>(v) * sizeof(A) * 256 > 24 * 1024) v /= 2;
  return v;
}

/// v3 (the v2 path, tuning::shapes_vector_loads): rows with unit element stride, CSR segments and column mode in
/// one launch (after the offsets check of a segmented call), blocking by a spin on the
/// completion word in mapped host memory (or a copy and a synchronisation when the results
/// are bound for host memory).
/// FEW (the narrow element types' ops, src/cuda/shapes_narrow.cu), to keep their compile time
/// down: rows and segments get 32 or 4 lanes an output (from the mean length in float32
/// vectors' terms; rows longer than a tile are also split into tiles), tiles claimed after
/// the group items (lazy: segments' only when one is longer than split, rows' always); the
/// plan's lanes, flat items and block-per-segment are not used. Columns read vectors of up to 16 bytes (few_col_vector).
/// Whether Op's results depend on how the rows are split into chunks: the fast float sums
/// (fast_sum, and the float16 / bfloat16 ones, narrow_op over fast_sum), whose combination
/// order the chunks fix. Every other op's are exact or correctly rounded.
template <class Op> constexpr bool chunks_fix_bits() {
  if constexpr (requires(Op o) { o.w0; }) return is_fast_sum<std::remove_cvref_t<decltype(std::declval<Op>().w0)>>::value;
  else return is_fast_sum<Op>::value;
}

/// The narrow types' column kernels that launch_v3 launches (vec: rows read V elements a
/// lane): the packed byte and 16-bit sums and float16 fixed-point sums held to 4 blocks a SM,
/// the others unbounded.
template <class Op, int VV> constexpr bool few_cols_bounded() {
  return VV == 4 && (requires(unsigned q) { Op::column_bytes(q); } || requires { Op::column_halves; } ||
                     requires(unsigned q) { Op::column_short_lo(q); });
}
/// Resident blocks a SM of that kernel.
template <class Op, int VV> int few_cols_fit(bool vec) {
  if constexpr (few_cols_bounded<Op, VV>())
    return vec ? fit_blocks<v3::cols_kernel_heavy<Op, VV, false, 4>>() : fit_blocks<v3::cols_kernel<Op, 1>>();
  else return vec ? fit_blocks<v3::cols_kernel<Op, VV>>() : fit_blocks<v3::cols_kernel<Op, 1>>();
}

/// Column mode's row chunks for whole waves (plan col_wave): of at most `want` chunks of gx
/// column tiles, the most whose grid fills its waves of `slots` resident blocks to 95%, else
/// the best filled.
inline std::int64_t fill_waves(std::int64_t gx, std::int64_t want, std::int64_t slots) {
  std::int64_t pick = want;
  double best = 0;
  for (std::int64_t c = want; c >= 1; --c) {
    const std::int64_t blocks = gx * c, waves = (blocks + slots - 1) / slots;
    const double use = static_cast<double>(blocks) / static_cast<double>(waves * slots);  // (of the waves' slots)
    if (use >= 0.95) return c;
    if (use > best + 0.01) {
      best = use;
      pick = c;
    }
  }
  return pick;
}

/// Whether a column reduction's layout suits the wide column kernels (src/cuda/shapes_cols_wide.cuh),
/// `cols` columns a lane as one 16-byte vector a row: row-major (outer 1), the row stride and
/// the outputs multiples of cols, the base 16-byte aligned, and rows to read.
inline bool wide_layout(const geometry& g, std::int64_t cols) {
  return g.outer == 1 && g.inner > 0 && g.inner % cols == 0 && g.outputs % cols == 0 && g.len > 0 &&
         reinterpret_cast<std::uintptr_t>(g.x) % 16 == 0;
}

template <class Op, bool FEW = false, class Make>
void launch_v3(const geometry& g, const request& r, outcome& st, cudaStream_t stream, Make&& make, bool column_mode) {
  using A = typename Op::acc;
  using T = typename Op::elem;
  const bool segmented = g.offsets != nullptr;
  geo d{g.x, g.offsets, g.outputs, g.len, g.outer, g.inner, g.n};
  const tuning::shapes_v3_plan plan = tuning::shapes_v3_params();
  const std::int64_t tile = segmented ? plan.seg_tile : plan.tile;
  // Lazy tiles (every launch but rows of [block_row_len, tile] elements, a block each): the
  // rows kernel runs the tile items only when an output is longer than split (segments: the
  // blocks look while checking the offsets; rows: always, when a row passes a tile), claimed
  // one at a time after the group items. The eager order (plan seg_lazy_tiles 0: every tile
  // item run, first; run 46: lazy 10-13% faster on equal segments, which need no tile), and
  // eager rows below block_row_len, went in the forty-sixth session with their kernels (a
  // quarter of shapes.cu's) to shorten the build; the narrow types' rows had run lazy since
  // run 125. The claim counter is 32-bit and ends at most at tiles + grid: tiles < 2^31 (checked
  // below: n at most 2^41) and grid < 2^31 (clamped).
  // a block per segment (plan.seg_block_len; not with lanes chosen in the plan): segments of
  // up to a tile are then read whole by one block, as rows are
  const std::int64_t mean_len = g.outputs > 0 ? g.n / g.outputs : 0;
  const bool seg_block = !FEW && segmented && plan.seg_lanes == 0 && plan.seg_block_len > 0 && mean_len >= plan.seg_block_len;
  // flat group items (plan.seg_flat_len; fast float sums, lazy tiles, lanes not chosen in the
  // plan; sixteenth session, measured slower in run 57, off by default): a warp reads 8 consecutive short segments
  // as one range
  const bool flat = is_fast_sum<Op>::value && segmented && !seg_block && plan.seg_lanes == 0 && plan.seg_flat_len > 0 &&
                    mean_len <= plan.seg_flat_len;
  // longer outputs go to the tile items
  const std::int64_t split = !segmented ? plan.tile : seg_block ? std::max(plan.seg_split, plan.seg_tile) : plan.seg_split;
  std::int64_t tiles = 0, chunks = 1, chunk = g.len, gx = 1;
  bool vec = false;
  constexpr int VV = few_col_vector<FEW, T, A>();
  // (the byte sums, means and min / max with rows of whole 16-byte vectors: 16 columns a lane,
  // v3::cols_bytes_wide, plan byte_col_wide; row chunks of whole waves, at most kWideChunk rows)
  // (and the 16-bit integer ones, 8 columns a lane, v3::cols_shorts_wide, plan short_col_wide,
  // and the float16 / bfloat16 min / max, v3::cols_halves_wide, and float16 fixed-point sums
  // and means, v3::cols_halves_sums_wide (columns of at most kWideHalfSumLen rows), plan
  // half_col_wide)
  bool wide = false;
  // (and the bfloat16 fast sums, v3::cols_halves_fast_wide, plan half_col_wide: cols_body's row
  // chunks, from the shape alone, as their bits follow the chunks)
  constexpr bool kWideOp = v3::wide_bytes<Op>() || v3::wide_shorts<Op>() || v3::wide_half_keys<Op>() || v3::wide_half_sums<Op>() ||
                           v3::wide_half_fast<Op>();
  // (the bfloat16 fast sums' blocks, either kernel: min(col_blocks, half_fast_col_blocks))
  const std::int64_t col_blocks = v3::wide_half_fast<Op>() ? std::min(plan.col_blocks, plan.half_fast_col_blocks) : plan.col_blocks;
  if constexpr (FEW && v3::wide_half_fast<Op>()) {
    wide = column_mode && plan.half_col_wide == 1 && wide_layout(g, v3::kWideShortCols);
    if (wide) {
      gx = (g.outputs + v3::kWideShortTile - 1) / v3::kWideShortTile;
      row_chunks(g.len, (col_blocks + gx - 1) / gx, 64, chunks, chunk);
    }
  } else if constexpr (FEW && kWideOp) {
    constexpr bool kBytes = v3::wide_bytes<Op>();
    constexpr std::int64_t cols = kBytes ? v3::kWideCols : v3::kWideShortCols, tile = kBytes ? v3::kWideTile : v3::kWideShortTile;
    const int on = kBytes ? plan.byte_col_wide : v3::wide_shorts<Op>() ? plan.short_col_wide : plan.half_col_wide;
    wide = column_mode && on == 1 && wide_layout(g, cols) && (!v3::wide_half_sums<Op>() || g.len <= v3::kWideHalfSumLen);
    if (wide) {
      gx = (g.outputs + tile - 1) / tile;
      std::int64_t want = (plan.col_blocks + gx - 1) / gx;
      int fit = 0;
      if constexpr (kBytes) fit = fit_blocks<v3::cols_bytes_wide<Op>>();
      else if constexpr (v3::wide_shorts<Op>()) fit = fit_blocks<v3::cols_shorts_wide<Op>>();
      else if constexpr (v3::wide_half_keys<Op>()) fit = fit_blocks<v3::cols_halves_wide<Op>>();
      else fit = fit_blocks<v3::cols_halves_sums_wide<Op>>();
      if (plan.col_wave == 1) want = fill_waves(gx, want, static_cast<std::int64_t>(fit) * sm_count());
      want = std::max(want, (g.len + v3::kWideChunk - 1) / v3::kWideChunk);
      row_chunks(g.len, want, 64, chunks, chunk);
      wide = chunk <= v3::kWideChunk;  // (always: 65535 chunks of 2^24 rows of 16 bytes pass any memory)
    }
  }
  if (column_mode && !wide) {
    // 32 lanes x V outputs per block; row chunks from the shape alone (about plan.col_blocks blocks)
    vec = VV > 1 && g.outer == 1 && g.inner > 0 && g.inner % VV == 0 &&
          reinterpret_cast<std::uintptr_t>(g.x) % (VV * sizeof(T)) == 0;
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
      std::int64_t want = (col_blocks + gx - 1) / gx;
      if constexpr (FEW && !chunks_fix_bits<Op>()) {
        // (plan.col_wave: of at most col_blocks' chunks, the most whose grid fills its waves
        // of the kernel's resident blocks to 95% (else the best filled), so that no wave runs
        // mostly empty: col_blocks' 512 blocks were 1.3 waves of the kernels of 3 blocks a SM,
        // the uint32 / uint64 max with index and uint32 sums; run 166, H100, 8192 x 8192: 384
        // blocks, uint32 max 0.82 -> 0.91 of read stream-ordered, uint64 0.90 -> 0.98. The byte
        // kernels (4 a SM) and the 16-bit max (2 a SM) keep their 8 chunks there: 1 and 2 waves)
        if (plan.col_wave == 1) want = fill_waves(gx, want, static_cast<std::int64_t>(few_cols_fit<Op, VV>(vec)) * sm_count());
      }
      // (the byte columns' lanes keep 16-bit run counts (min / max) and 32-bit sums through
      // their chunk, v3::cols_body kPackedExtremes / kPackedBytes: at most kWideChunk rows a
      // chunk; 65535 chunks of 2^24 rows of 4 bytes pass any device's memory)
      if constexpr (FEW && v3::wide_bytes<Op>()) want = std::max(want, (g.len + v3::kWideChunk - 1) / v3::kWideChunk);
      row_chunks(g.len, want, 64, chunks, chunk);
    }
  } else if (!column_mode && g.n > 0 && (segmented || g.len > tile)) {
    tiles = (g.n + tile - 1) / tile;
    // (2^31 tiles of at least 1024 elements: 2^41 elements, past any device's memory)
    if (tiles >= (std::int64_t(1) << 31))
      throw error(errc::invalid_argument, "tally: a shape reduction of more than 2^41 elements is not supported");
  }
  const std::size_t out_bytes = r.out_on_host && r.out ? dtype_size(r.out_type) * g.outputs : 0;
  const std::size_t idx_bytes = r.out_on_host && r.index ? sizeof(std::int64_t) * g.outputs : 0;
  const std::size_t part_count = column_mode ? (chunks > 1 && (!wide || v3::wide_half_fast<Op>()) ? chunks * g.outputs : 0) : 2 * tiles;
  const std::size_t s_out = round_up(part_count * sizeof(A));
  const std::size_t s_idx = s_out + round_up(out_bytes);
  const std::size_t total = std::max<std::size_t>(256, s_idx + round_up(idx_bytes));
  scratch_lease lease(total, stream, true);
  const std::size_t ticket_count = column_mode ? (chunks > 1 ? gx : 0) : (tiles > 0 ? g.outputs : 0);
  // check_end (fifty-ninth session, plan check_end): a stream-ordered launch of the rows kernel
  // over segments (lazy tiles: every block counts its offsets check) whose op never records an
  // overflow ends without block_done: the last block to count its check reports the bad
  // offsets (at once under plan check_end 2, the default; at the blocks' ends under 1,
  // v3::check_end_status), and the words are a set of their own that the
  // next such launch cleans (v3::clean_set). Not under a graph's capture: a replay would find
  // the set as the last replay left it (such launches keep block_done's set 0).
  bool check_end = false;
  if constexpr (op_never_overflows<Op>())
    check_end = plan.check_end != 0 && segmented && !column_mode && r.stream_ordered && g.n > 0 && !stream_capturing(stream);
  shapes_persistent ps = lease.persistent(ticket_count);
  bool clean_other = false;
  int set = 0;
  if (check_end) {
    set = lease.check_end_set(clean_other);
    ps = lease.persistent(ticket_count, set);
  }
  // (a throw between here and the launch's check: the sets' state is no longer known, so the
  // next call sets every set idle again, lease.forget_sets)
  struct sets_guard {
    const scratch_lease& lease;
    bool armed;
    ~sets_guard() {
      if (armed) lease.forget_sets();
    }
  } guard{lease, check_end};
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
  if (check_end) {
    f.check_end = plan.check_end;
    f.clean = clean_other ? lease.persistent(ticket_count, 3 - set).status : nullptr;
    f.clean_tickets = static_cast<std::int64_t>(lease.ticket_capacity());
  }
  if (column_mode) {
    dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(chunks));
    if constexpr (FEW && v3::wide_half_fast<Op>()) {
      if (wide) v3::cols_halves_fast_wide<Op><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials, ps.tickets, f);
    } else if constexpr (FEW && kWideOp) {
      if (wide) {
        // (zero between calls: the chunks' words, (outputs), or (2, outputs) for the float16 sums' sums and flags)
        const std::size_t n_words = (v3::wide_half_sums<Op>() ? 2 : 1) * static_cast<std::size_t>(g.outputs);
        auto* words = chunks > 1 ? static_cast<unsigned long long*>(lease.zeroed(sizeof(unsigned long long) * n_words)) : nullptr;
        if constexpr (v3::wide_bytes<Op>()) v3::cols_bytes_wide<Op><<<grid, kBlock, 0, stream>>>(d, op, chunk, words, ps.tickets, f);
        else if constexpr (v3::wide_shorts<Op>()) v3::cols_shorts_wide<Op><<<grid, kBlock, 0, stream>>>(d, op, chunk, words, ps.tickets, f);
        else if constexpr (v3::wide_half_keys<Op>()) v3::cols_halves_wide<Op><<<grid, kBlock, 0, stream>>>(d, op, chunk, words, ps.tickets, f);
        else v3::cols_halves_sums_wide<Op><<<grid, kBlock, 0, stream>>>(d, op, chunk, words, ps.tickets, f);
      }
    }
    if (wide) {  // (launched above)
    } else if constexpr (sizeof(A) >= 32) {
      // (float32 vectors, plan.col_run: 1 a running sum per output, one state update per 16
      // rows, the next rows loaded ahead, 2 blocks a SM; 0 four rows a term, 3 blocks a SM)
      bool running = false;
      if constexpr (!FEW && takes_vectors_v<Op>) {
        running = vec && plan.col_run == 1;
        if (running) v3::cols_kernel_heavy<Op, VV, true, 2><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials, ps.tickets, f);
      }
      if (!running) {
        if (vec) v3::cols_kernel_heavy<Op, VV><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials, ps.tickets, f);
        else v3::cols_kernel_heavy<Op, 1><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials, ps.tickets, f);
      }
    } else if constexpr (FEW && few_cols_bounded<Op, VV>()) {
      // (packed byte columns, 16-bit integer columns and float16 fixed-point columns: held to
      // 64 registers, 4 blocks a SM; unbounded, the uint8 and bool sums took 80 registers and 3 blocks a SM, run 119:
      // uint8 columns at 0.41 of read, run 120: 0.65 with the bound (unbounded was plan
      // few_col_bound 0, removed in the forty-sixth session).
      // Not the byte extremes' packed columns: at 64 registers their 24-byte states spilled
      // 340 bytes, thirty-fifth session; unbounded, none (80 registers since the forty-seventh
      // session, 3 blocks a SM). Nor held to 3 blocks a SM (plan
      // ext_col_blocks 3, forty-fifth session: run 159, H200, the byte and 16-bit column max
      // within 2% of these, float16 / bfloat16 9% slower; removed)
      if (vec) v3::cols_kernel_heavy<Op, VV, false, 4><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials, ps.tickets, f);
      else v3::cols_kernel<Op, 1><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials, ps.tickets, f);
    } else {
      // (the byte min / max here since the fifty-second session's end of 64-bit keys: 40
      // registers, 80 before. Held to 64 and 4 blocks a SM (plan byte_ext_cap 1, 63
      // registers) they read the same: run 185, H100, 8192 x 8192, stream-ordered, int8 /
      // uint8 max with index 0.850 / 0.858 of read either way, ncu 32.3 / 31.9 us; removed)
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
    auto go = [&]<int G, bool LAZY = false>() {
      constexpr std::int64_t per = G == 0 ? v3::kFlatItem : kBlock / (G == 0 ? 1 : G);  // outputs per group item
      const std::int64_t groups = (g.outputs + per - 1) / per;
      const std::int64_t items = tiles + groups;
      // (32-byte accumulators, the certified pass's: 3 blocks a SM, 80 registers; run 65 measured
      // 4 blocks, 64 registers with 44-128 bytes spilled, 3-4% slower on rows of 1024 and 8192)
      constexpr auto kernel = v3::rows_kernel<Op, G, LAZY>;
      // (the certified pass over float32, plan.row_stages: its vectors staged through shared
      // memory, v3::row_stages_of)
      constexpr std::size_t stage_bytes = v3::row_smem_bytes<Op>();
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
      fk.warp_claim = G >= 1 && G <= 32 && LAZY && segmented ? plan.seg_warp_claim : 0;  // (the group items of one lane count)
      kernel<<<static_cast<unsigned>(grid), kBlock, dyn, stream>>>(d, op, partials, ps.tickets, tile, split, tiles, items,
                                                                 plan.item_order, plan.tile_probe, fk);
    };
    auto lanes = [&]<int G>() { go.template operator()<G, true>(); };
    // (accumulators of 32 bytes or more, the certified pass's: a block per row only from rows of
    // 256 plan.heavy_lane_len elements; shorter rows read by fewer lanes each, since a block's
    // merges of such states cost more than its lanes save: run 59, rows of 8192 through the
    // certified pass 2076 -> 2533-2600 GB/s with a warp per row)
    const std::int64_t block_row_len =
        heavy ? std::max<std::int64_t>(plan.block_row_len, kBlock * plan.heavy_lane_len) : plan.block_row_len;
    if constexpr (FEW) {
      // (no block per row: run 114, rows of 8192 float16 / int8 read by a block each ran 6% / 36%
      // slower than by a warp, 4 vectors a thread against 32)
      // (in float32 vectors' terms; run 114, 8 lanes on segments of 200 float16: 25 vectors a
      // segment, 3 a lane, 0.39 of read)
      // (the short outputs: 2 lanes, not 4, for the ops whose results are exact whatever the
      // order, v2::takes_masked and takes_masked_at (the byte min / max, forty-first
      // session), and so whatever the lanes: a warp's item then holds 16
      // outputs, whose fixed costs, the offsets, the merge and the writes, it shares. Run 127,
      // segments of 200: int8 sums +25% and +30% async, exact float16 sums +11%)
      // (the masked ops of 1- and 2-byte elements, forty-second session: 1, 2, 4 or 32 lanes
      // from the mean output length in bytes, few_masked_lanes; run 150, H100, equal int8
      // segments of 16 to 8192 bytes. Not those of 4 and 8 bytes, uint32 and uint64 min / max:
      // run 152, uint32 argmax segments of 200 (800 bytes) read 9% slower with its 2 lanes than
      // run 150 with 4)
      constexpr bool masked = v2::takes_masked<Op>() || v2::takes_masked_at<Op>();
      // (the others, fifty-seventh session: 4, 8, 16 or 32 lanes from the mean length in bytes,
      // few_unmasked_lanes, rows and segments alike; the certified pass's keep 4 or 32 in
      // heavy_lane_len terms)
      const std::int64_t mean_bytes = mean_len * static_cast<std::int64_t>(sizeof(T));
      // (the byte and bool sums and means along segments, on 64-bit lane partials since the
      // fifty-eighth session: few_byte_sum_lanes)
      const int lanes_by_len = segmented && sizeof(T) == 1 && v2::takes_lane_sums<Op>() ? few_byte_sum_lanes(mean_bytes)
                               : masked && sizeof(T) <= 2 ? few_masked_lanes(mean_bytes, v2::takes_masked_at<Op>(),
                                                                                v2::takes_rounds_at<Op, v3::kGroupUnroll>(),
                                                                                sizeof(T) == 2 && !heavy)
                               : !heavy ? few_unmasked_lanes(mean_bytes)
                               : lanes_len * static_cast<std::int64_t>(sizeof(T)) / 4 >= 256 ? 32
                                                                                          : 4;
      const int few = plan.few_lanes != 0 ? plan.few_lanes : lanes_by_len;
      if (few == 32) go.template operator()<32, true>();
      else if (few == 16) go.template operator()<16, true>();
      else if (few == 8) go.template operator()<8, true>();
      else if constexpr (masked) {
        if (few == 4) go.template operator()<4, true>();
        else if (few == 1) go.template operator()<1, true>();
        else go.template operator()<2, true>();
      } else go.template operator()<4, true>();
    }
    else if (!segmented && g.len >= block_row_len && g.len <= tile) go.template operator()<kBlock>();
    else if (seg_block) lanes.template operator()<kBlock>();
    else if (flat) {
      if constexpr (is_fast_sum<Op>::value) go.template operator()<0, true>();
    }
    else if (lanes_len >= 512) lanes.template operator()<32>();
    else if (lanes_len >= 256) lanes.template operator()<16>();
    else if (lanes_len >= 128) lanes.template operator()<8>();
    else lanes.template operator()<4>();
  }
  TALLY_CUDA(cudaGetLastError());
  guard.armed = false;
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

}  // namespace tally::cuda::shapes_launch
