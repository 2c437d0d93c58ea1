// Switches of the shape layer's v2 and v3 fast paths (src/cuda/shapes_v2.cuh, shapes_v3.cuh), both on by default.
//
// v2 (rows and CSR segments with contiguous outputs: unit element stride, element-aligned
// base): 16-byte vector loads per lane from the first 16-byte boundary of each output (the
// unaligned head and the tail read scalarly), several outputs per warp for short outputs
// (groups of 4, 8, 16 or 32 lanes chosen from the mean output length), 16384-element tiles
// for long outputs, and the scratch (status words, tile partials, staged host results) taken
// from a per-(device, stream) cache grown on demand instead of cudaMallocAsync per call.
// Column reductions and strided rows keep the v1 kernels (they only take the cached scratch).
// Results stay deterministic (fixed combination order for a given shape and base address)
// and fast sums keep the float64-accumulator bound of any summation order; the bits of fast
// sums may differ from v1's (another order). Integer sums, means and min/max/arg results are
// the same as v1's.
//
// v2 is the default since 2026-11-30 (H200, 2^26 float32: rows 3134-3192 GB/s against v1's
// 993-2628, columns 2563-2985 against 1037-2608, uneven segments 2157 against 1285; see
// docs/performance.md). The environment variable TALLY_SHAPES_V2=0 selects v1, read once at
// the first call; set_shapes_vector_loads overrides it (benchmarks compare both paths).
#pragma once

#include <cstdint>

namespace tally::cuda::tuning {

/// Whether the shape layer's fast paths use v2 (see above). Thread-safe.
bool shapes_vector_loads() noexcept;

/// Switches v2 on or off for later calls (calls in flight keep their path). Thread-safe.
void set_shapes_vector_loads(bool on) noexcept;

// v3 (src/cuda/shapes_v3.cuh: one fused launch per call, blocking by a spin on mapped host
// memory, column tiles of 16-byte vectors) is the v2 path's kernel set; the switch that turned
// it off (TALLY_SHAPES_V3=0, shapes_fused) went with v2's own kernels in the forty-sixth
// session.

/// Whether exact floating sums and means of the shape layer (rows, segments and, since the
/// eighteenth session, column mode; blocking forms, and stream-ordered ones with a status word) try the certified first
/// pass (shapes.cuh certified_sum, in the fast kernels) before the exact path, which then runs
/// only when some output is not proved (stream-ordered: gated on the device by the pass's
/// status words): the same bits either way. On by default (seventeenth session, runs 57-61:
/// exact row and segment sums 1.3-3.3x faster, every output's bits equal to the exact
/// path's); off with TALLY_SHAPES_CERTIFIED=0 (read once). Thread-safe.
bool shapes_certified() noexcept;

/// Switches the certified first pass on or off for later calls. Thread-safe.
void set_shapes_certified(bool on) noexcept;

/// The v3 plan constants, plain data (the benchmark's shapes-tune section sweeps them; the
/// defaults are the measured choice, docs/performance.md "Shapes v4"). tile, block_row_len and
/// col_blocks fix the combination order of each output, so changing them may change the bits
/// of fast floating sums (never of integer sums or min/max/arg); blocks_per_sm never does.
struct shapes_v3_plan {
  std::int64_t tile = 65536;          // rows: flat elements per tile item; rows longer than this are split
  std::int64_t seg_tile = 65536;      // CSR segments: flat elements per tile item
  std::int64_t seg_split = 16384;     // CSR segments longer than this go to the tile items (shorter: 4..32 lanes each)
  int seg_lanes = 0;                  // lanes per short segment: 0 from a quarter of the mean length n / segments, else 4,
                                      // 8, 16 or 32 (-1, the rule applied to each group item's own segments on the device,
                                      // never made the default, runs 43-65: removed in the forty-sixth session)
                                      // (1 and 2, fifteenth session, read equal segments of 200 31% and 13% slower: removed)
  int few_lanes = 0;                  // the narrow types' rows and segments (src/cuda/shapes_narrow*.cu): 0 from the mean
                                      // length: the ops exact in any order whose partial vectors are read masked (sums and
                                      // means of bytes and 16-bit integers, float16 fixed-point sums, byte and 16-bit min /
                                      // max) 1, 2, 4 or 32 by its bytes (shapes_launch::few_masked_lanes, forty-second
                                      // session; the 2-byte sums 4 lanes from 256 bytes, fifty-seventh); the others 4, 8,
                                      // 16 or 32 by the mean length in bytes (shapes_launch::few_unmasked_lanes, rows
                                      // and segments, fifty-seventh session; the certified pass's 4 or 32 in
                                      // heavy_lane_len terms);
                                      // 1 or 2 (the masked ops; the others 4), 4, 8, 16 or 32 for every call
                                      // (the forty-sixth session removed plan fields whose other values lost on a device:
                                      // bf16_terms, half_extreme_vectors, half_extreme_cols, few_col_bound and
                                      // ext_col_blocks; docs/performance.md, run 159; the forty-seventh session's trial
                                      // ext_col_lean and short_col_lean won and became the byte and 16-bit min / max
                                      // columns' only form, runs 167 and 170)
  std::int64_t block_row_len = 4096;  // rows (not segments) of [block_row_len, tile] elements: a block each
  std::int64_t heavy_lane_len = 128;  // rows and segments through accumulators of 32 bytes or more (the certified
                                      // pass): the lanes per output chosen from the mean length so that each lane
                                      // reads at least this many elements (rows: a block each from 256 x this),
                                      // since merging such states costs ~40 instructions a level (never the bits:
                                      // those results are correctly rounded; run 61: 128 best on rows, by 2-3%)
  int blocks_per_sm = 0;              // rows grid: 0 every resident block (persistent), > 0 that many per SM, < 0 a block per item
  std::int64_t col_blocks = 512;      // column mode: about this many blocks (row chunks from the shape alone)
  int col_wave = 1;                   // column mode, the narrow types' ops whose results do not depend on the row
                                      // chunks (all but the float16 / bfloat16 fast sums): 1 of at most col_blocks'
                                      // row chunks, the most whose grid fills its waves of the column kernel's resident
                                      // blocks (cudaOccupancyMaxActiveBlocksPerMultiprocessor) to 95%; 0 col_blocks'
                                      // as the others. Never the bits. (Forty-seventh session, run 166, H100, 8192 x
                                      // 8192: 384 blocks (one wave of 3 a SM) against col_blocks' 512 read the uint32 /
                                      // uint64 max with index at 0.91 / 0.98 of read stream-ordered against 0.82 / 0.90;
                                      // 768, 1024 or 2048 blocks lost for every narrow type)
  int byte_col_wide = 0;              // column mode, the byte sums, means and min / max (int8, uint8, bool) of row-major
                                      // matrices whose rows are whole 16-byte vectors (outputs a multiple of 16, base and row
                                      // stride 16-byte aligned): 1 16 columns a lane, a warp reading 512 bytes of a row, the
                                      // row chunks merged by 64-bit atomics (src/cuda/shapes_cols_wide.cuh, fiftieth
                                      // session); 0 cols_body's 4 columns a lane. Never the bits (exact results). 0 by
                                      // default: slower in run 184 (H100, 8192 x 8192, stream-ordered, of read: int8 sums
                                      // 0.80 -> 0.78, max with index 0.73 -> 0.72; tests: ShapesNarrowColsWide.cuda)
  int short_col_wide = 1;             // column mode, the 16-bit integer sums, means and min / max (int16, uint16) of
                                      // row-major matrices whose rows are whole 16-byte vectors (outputs a multiple of 8):
                                      // 1 8 columns a lane, a warp reading 512 bytes of a row, the row chunks merged by
                                      // 64-bit atomics (src/cuda/shapes_cols_wide.cuh cols_shorts_wide, fifty-first
                                      // session); 0 cols_body's 4 columns a lane. Never the bits (exact results). (Run
                                      // 184, H100, 8192 x 8192, stream-ordered, of read: int16 sums 0.89 -> 0.93, max
                                      // with index 0.83 -> 0.93; uint16 the same)
  int half_col_wide = 1;              // column mode, row-major matrices whose rows are whole 16-byte vectors (outputs a
                                      // multiple of 8): 1 the float16 / bfloat16 min / max with index and the float16
                                      // sums and means (columns of at most 2^23 rows; the fast sums too, exact) 8 columns
                                      // a lane, a warp reading 512 bytes of a row, the row chunks merged by 64-bit atomics
                                      // (src/cuda/shapes_cols_wide.cuh cols_halves_wide / cols_halves_sums_wide,
                                      // fifty-fourth session); 0 cols_body's 4 columns a lane (float16 exact sums with an
                                      // infinity or a NaN, and the stream-ordered ones, then widened). Never the bits of
                                      // min / max and exact sums. (Run 188, H100, 8192 x 8192, stream-ordered, of read:
                                      // float16 fast sums 0.83 -> 0.905, exact sums 0.185 (widened) -> 0.90, float16 /
                                      // bfloat16 max with index 0.89 -> 0.90). Since the fifty-fifth session also the
                                      // bfloat16 fast sums (cols_halves_fast_wide: scaled float64 terms, partials met
                                      // in cols_body's order over its row chunks, so the same bits either way)
  int f16_in_place = 1;               // exact float16 sums and means (fixed point, outputs of at most 2^28 elements):
                                      // 1 an output with an infinity or a NaN read again on the device to tell which
                                      // (f16_fixed_op::special_flags_of), so blocking and stream-ordered calls read in
                                      // place; 0 such a blocking call, and every stream-ordered one, on the widened route
                                      // (but the float16 columns of half_col_wide). Never the bits. (Written in the
                                      // fifty-fifth session; on since run 192, H100, 8192 x 8192, stream-ordered, of read:
                                      // exact float16 rows 0.185 -> 0.917, segments of 200 0.176 -> 0.75)
  int half_gated = 1;                 // exact bfloat16 sums and means (and float16's where f16_in_place cannot serve:
                                      // outputs past 2^28 elements), stream-ordered with a status word: 1 the certified pass
                                      // in place (as the blocking calls), then, behind its verdict read on the device, the
                                      // widened copy and the exact kernels over it, both gated (a closed gate: two launches
                                      // that read it and return); 0 the widened route (the copy, the pass over it, the gated
                                      // exact kernels). Never the bits (correctly rounded either way; sixtieth session)
  std::int64_t half_fast_col_blocks = 384;  // column mode, the bfloat16 fast sums (cols_halves_fast_wide and cols_body
                                      // alike, whose bits follow the row chunks): about min(col_blocks, this) blocks,
                                      // the row chunks from the shape alone. (Run 192, H100, 8192 x 8192, stream-ordered:
                                      // 384 read at 0.906 of the read kernel, 512 (col_blocks') at 0.888-0.889, 1024 at
                                      // 0.833, two rounds alike)
  int item_order = 0;                 // rows kernel: the order its blocks take the items in (shapes_items.hpp):
                                      // 0 tiles first, 1 group items (short outputs) first, 2 the tiles spread
                                      // evenly among the group items (never the bits; since the forty-sixth
                                      // session only the rows read a block each, whose launches have no tiles)
  int tile_probe = 1;                 // segments: 1 probes the offsets for all of a tile's search points at once
                                      // (a warp each, where they would sit were the segments equal) before the
                                      // searches, 0 searches point by point (never the bits)
  std::int64_t seg_block_len = 16384;  // CSR segments of mean length n / segments at least this (seg_lanes = 0):
                                      // a block per segment (group items of one segment each, as rows of block_row_len;
                                      // those of at most 2048 elements a warp each), and only segments longer than
                                      // max(seg_split, seg_tile) go to the tile items; 0 never (fifteenth session: equal
                                      // segments of 24Ki read at 0.93 of the read kernel instead of 0.87 in tile parts)
  std::int64_t seg_flat_len = 0;      // CSR segments of mean length at most this (fast float sums, lazy tiles, seg_lanes = 0,
                                      // under seg_block_len): flat group items, each warp reading 8 consecutive segments as one
                                      // range in 512-byte warp loads (rows_kernel G = 0); 0 never. Changes the bits of fast sums
                                      // (the order within a segment). Run 57 (seventeenth session): slower than the default everywhere
                                      // (equal segments of 200: 3043 against 3458 GB/s; of 1024: 3641 against 3840), so off.
  int cert_cols = -1;                 // exact mode, column mode: 1 always through the certified pass, 0 never (the exact
                                      // kernels), -1 the measured rule (shapes.cu run_t); never the bits (correctly rounded)
  int col_run = 1;                    // certified columns (float32 vectors): 1 a running float64 sum per output, one state
                                      // update per 16 rows, the next rows loaded ahead, 2 blocks a SM (cols_body RUN; run 68:
                                      // 3119 / 2651 / 3215 GB/s on 8192^2, 65536 x 1024, 1024 x 65536 against add4's 2494 /
                                      // 1895 / 1549); 0 four rows a term (add4), 3 blocks a SM; never the bits (twentieth
                                      // session: the rows staged through shared memory by cp.async, 4 steps at 3 blocks a SM
                                      // or 6 at 2, read 1969-2575 / 2281-3068 GB/s: removed)
  int cert_col_waves = 1;             // certified columns: the fewest row chunks whose grid fills at least this many waves
                                      // (of 2 or 3 blocks a SM) to 95% (1-64); never the bits (correctly rounded). Run 80:
                                      // 2 / 3 / 4 / 8 waves read 65536 x 1024 at 1868 / 1346 / 1119 / 675 GB/s against one
                                      // wave's 2649 (each column tile's last block merges the chunks' partials in turn)
  int row_stages = 1;                 // the certified pass over float32 rows and segments (rows_kernel): 1 its vectors staged
                                      // through shared memory by cp.async, kRowStages groups a thread (3 in flight while one
                                      // is folded; 64 KiB a block); 0 loaded into registers, one group at a time; never the bits
  int pdl = 1;                        // exact mode, stream-ordered: 1 the gated exact kernel launched as a programmatic dependent
                                      // of the certified pass (sm_90: its launch overlaps the pass's last blocks); 0 plainly
  int gate_blocks = 0;                // exact mode, stream-ordered: blocks a SM of the gated exact launch behind the certified
                                      // pass (1-16; rows and segments: its grid's cap, the blocks looping; columns: the row
                                      // chunks' target), which with a closed gate only read the gate and return; 0 the
                                      // defaults, 8 (rows, segments) and 4 (columns); never the bits (exact integer merges).
                                      // Run 79: 1 a SM gains 0.5-1% with the gate closed, but an open gate's exact kernels
                                      // would then run with an eighth of the blocks
                                      // (seg_lazy_tiles, 0 for the eager order, went in the forty-sixth session: lazy
                                      // tiles always; docs/performance.md)
  int seg_claim_ahead = 0;            // lazy tiles: when a block claims its next tile: 0 when the block is free, 1 when
                                      // the current one is claimed (before run 95), 2 once the current tile's first part
                                      // is read; never the bits. Run 96 (one binary, the three interleaved, GB/s): exact
                                      // uneven segments 3131 / 3074 / 2957, one segment 3200 / 3135 / 3091, fast uneven
                                      // 3639 / 3617 / 3619, fast one segment 3787 / 3739 / 3771
  int seg_check_late = 0;             // segments, lazy tiles, the kernels that take their group items first (accumulators under
                                      // 32 bytes): 1 a block checks its share of the offsets after its group items instead of
                                      // before them (the check's round trips then leave the kernel's start; a block then learns
                                      // of the tiles after its group items); never the bits. Run 99 (one binary): equal
                                      // segments of 200 -2.7%, uneven -0.9% against 0
  int done_fence = 0;                 // how a block's writes are fenced before it counts itself done (every launch) and, in
                                      // column mode, before its chunk's ticket: 0 one fence by thread 0 after the block's
                                      // barrier (cumulative over it), 1 one fence by every thread before it (before the
                                      // twenty-fifth session); never the bits. Run 99 (one binary): 0 no slower on any
                                      // job and 0.1-0.6% faster, blocking calls included
  int seg_warp_claim = 2;             // the certified pass over segments (exact mode; tiles first), when a segment longer than
                                      // seg_split made its tiles run: C > 0 the group items after the tiles taken by warps,
                                      // claims of C warp items (32 / lanes segments each) from one counter, so that the blocks
                                      // whose last tile ends late find them taken; 0 by the blocks in turn. Never the bits.
                                      // Exact uneven segments (runs 102-103, one binary): C = 2 +1.1% / +2.4%, C = 1 +1.0% /
                                      // +0.9%, C = 4 +0.4% / -0.5% over 0. Runs 101-102 took every call's group items so:
                                      // equal segments 8-31% slower (docs/performance.md)
  int check_end = 2;                  // stream-ordered segments (rows kernel, lazy tiles) of the ops that never record an
                                      // overflow (shapes_k::op_never_overflows): 2 the launch ends without block_done, the block
                                      // whose offsets check's count is the last writes the status at once (v3::finish::check_end),
                                      // 1 the same, the status written at the blocks' ends by one that sees every count, 0 with
                                      // block_done; never the bits (fifty-ninth session). Run 213 (H100, one binary, segments of
                                      // 200, stream-ordered): 2 over 1 / over 0: int8 sums +2.8% / +4.1%, int8 max with index
                                      // +2.3% / +3.8%, uint16 sums +1.8% / +2.2%, bfloat16 fast sums +1.4% / +2.1%
};

/// The plan later v3 calls use: the defaults above, or at the first call the fields named in
/// TALLY_SHAPES_PLAN ("tile=1024,blocks_per_sm=1"; tests run the shape suite under other
/// plans with it). Throws tally::error (invalid_argument) naming a bad item of that variable.
/// Thread-safe.
shapes_v3_plan shapes_v3_params();

/// A plan from TALLY_SHAPES_PLAN's form, "name=integer" items separated by commas (the
/// fields not named keep their defaults). Throws tally::error (invalid_argument) naming the
/// item that is not name=integer, names no field or is out of range, or the field that
/// set_shapes_v3_params would refuse.
shapes_v3_plan parse_shapes_plan(const char* text);

/// Sets the plan for later calls. Throws tally::error (invalid_argument) when tile, seg_tile or
/// seg_split is outside [1024, 2^30], seg_tile > 64 seg_split, seg_lanes not 0, 4, 8, 16 or 32, few_lanes not 0, 1, 2, 4, 8, 16 or 32, block_row_len < 1,
/// seg_block_len or seg_flat_len < 0, blocks_per_sm > 64,
/// col_blocks or half_fast_col_blocks outside [1, 2^20], col_wave, byte_col_wide, short_col_wide, half_col_wide, f16_in_place or half_gated not 0 or 1, gate_blocks outside [0, 16], cert_col_waves outside [1, 64] or item_order not 0, 1 or 2, cert_cols not -1, 0 or 1, or tile_probe,
/// col_run, row_stages, pdl, seg_check_late or done_fence not 0 or 1, seg_claim_ahead or check_end not 0, 1 or 2, or
/// seg_warp_claim outside [0, 64]. Thread-safe.
void set_shapes_v3_params(const shapes_v3_plan& p);

}  // namespace tally::cuda::tuning
