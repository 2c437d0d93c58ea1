// v3 kernels of the shape layer (the v2 path, tuning::shapes_vector_loads, src/cuda/shapes_tuning.hpp; default on):
// one launch per call, blocking by a spin on mapped host memory instead of a copy and a stream
// synchronisation. Same ops and geometry as src/cuda/shapes.cuh.
//
//  - rows_kernel<G> (contiguous outputs: rows with unit element stride, CSR segments): work
//    items taken in turn by persistent blocks (the grid is what fits on the GPU; the items,
//    and so the bits, depend only on the shape and the plan, tuning::shapes_v3_plan):
//    items [0, tiles) are tiles of `tile` flat elements, the rest groups of outputs.
//      * A tile item reduces the parts of the outputs longer than `split` (rows: `tile`;
//        segments: seg_split) that meet its flat elements, found at the tile's ends and at
//        every `split` elements between (a long output inside the tile holds one of those
//        points): first a probe of the offsets where all those points would sit with equal
//        segments (a warp each, one round), then block-wide kBlock-ary searches for the
//        points it missed. An output inside the tile
//        is written at once; the first and last ones may reach other tiles and get one
//        partial per tile. The last tile to finish an output (a ticket per output)
//        combines that output's partials with the whole block, in tile order (thread i:
//        tiles i, i + kBlock, ...; then a CUB block reduction), and writes the output. So one
//        100M-element segment is finished by a block, not by one warp walking thousands of
//        partials.
//      * A group item gives G lanes (4..32, or the whole block for rows of block_row_len to
//        `tile` elements) to each output of at most `split` elements, 16-byte vector loads
//        (v2's fold_contig, kGroupUnroll vectors in flight per lane); with segments, each
//        thread loads its offsets for the block's next item before reading this one.
//      * A flat group item (G = 0, plan seg_flat_len, fast float sums of short segments;
//        sixteenth session; run 57 measured it slower than the default, so off): each warp reads 8
//        consecutive segments as one flat range in 512-byte warp loads, each lane folding
//        its elements segment by segment, the 32 parts of a segment combined in a butterfly.
//  - cols_kernel<V> (column mode: outputs are the closer elements, e.g. the columns of a
//    row-major matrix): block (bx, by) owns 32 * V adjacent outputs and a chunk of rows; lane
//    j of every warp owns outputs [(32 bx + j) V, +V) and reads them as one 16-byte vector per
//    row when V > 1 (so a warp reads 512 contiguous bytes per row); warp w takes rows
//    w, w + 8, ... of the chunk. The 8 warps' accumulators are combined in warp order through
//    shared memory; with more than one chunk, each block writes its partials and the last
//    chunk block of a column tile (a ticket per tile) combines the chunks in chunk order.
//    Accumulators of 32 bytes or more (the certified pass's, correctly rounded whatever the
//    order) are combined by all 8 warps instead, each taking one output's share (cols_body
//    SPREAD). The chunking depends only on the shape (not on the GPU), so the bits do too.
//  - Segments: every block of rows_kernel checks its share of the offsets (no separate
//    launch): under lazy tiles (the default) first, flagging segments longer than split (the
//    tiles then run first, claimed one at a time, and the group items after them), else after
//    its items. Outputs are read through span_of, clamped into x, so offsets that break the rules are
//    reported (status word 0) without any read outside x, and the last block then idles
//    every ticket.
//  - Completion (both kernels): every block counts itself done; the last one copies the two
//    status words to mapped host memory, resets them and the counter for the next call, and
//    writes the call's ticket last (the host spins on it, cuda::wait_for).
// Deterministic: every combination order depends only on the shape, the base address's
// alignment and the constants here.
#pragma once

#include <cub/block/block_reduce.cuh>

#include <cstdint>
#include <type_traits>

#include "cuda/shapes.cuh"
#include "cuda/shapes_items.hpp"
#include "cuda/shapes_v2.cuh"

namespace tally::cuda::shapes_k::v3 {

inline constexpr int kUnroll3 = 4;       // vectors in flight per thread: tiles and block rows
inline constexpr int kGroupUnroll = 4;   // vectors in flight per lane: groups of 1..32 lanes per output
// (eight of each, with registers for 3 blocks per SM instead of 4, gave nothing: run 44,
// equal segments of 200 and 1024 1-2% slower, one huge among tiny ones 3% slower; eight in
// the group items at 4 blocks per SM, run 55: no spills in the fast sums but 100-270 bytes in
// min/max, and equal segments of 200 and 1024 2% slower)
inline constexpr int kColWarps = kBlock / 32;  // row lanes of a column block
inline constexpr int kColUnroll = 4;
inline constexpr int kPackedByteRows = 32;  // rows a lane has in flight in the packed byte columns' sums (cols_body)
// rows a lane has in flight in the packed byte columns' min / max (cols_body kPackedExtremes;
// forty-eighth session, run 177: 32 where 16 were, the same 79 registers and 3 blocks a SM,
// column max +4% stream-ordered)
inline constexpr int kPackedExtremeRows = 32;
inline constexpr int kBf16RunRows = 8;  // certified bfloat16 columns (cols_body): rows a run (16 in flight)
inline constexpr int kRunRows = 16;  // certified columns (cols_body RUN): rows a state update
inline constexpr int kRowStages = 4;  // certified rows and segments under plan row_stages: groups of vectors staged a thread
inline constexpr int kCheckLoads = 4;  // offsets checked by a thread with their loads in flight together (rows_body)
inline constexpr int kCombineLoads = 4;  // partials loaded together by a thread of a finishing block
inline constexpr int kSpreadLoads = 8;  // the same in a column tile's finishing block, heavy accumulators (cols_body SPREAD)
inline constexpr int kProbePoints = kBlock / 32;  // tile items: the most points probed together (a warp each)
inline constexpr std::int64_t kWarpSegment = 2048;  // segments under plan seg_block_len: a warp reads those of at most this many elements

// Flat group items (plan seg_flat_len, rows_kernel G = 0): a warp reads kFlatSegs consecutive
// segments as one flat range; an item is kFlatItem segments (a block's warps).
inline constexpr int kFlatSegs = 8;
inline constexpr std::int64_t kFlatItem = kBlock / 32 * kFlatSegs;

/// Shared memory of the flat group items: each warp's segment ends and its lanes' parts of
/// each segment (A: the accumulator). Empty for the other lane counts.
template <class A, bool FLAT> struct flat_shared {
  std::int64_t end[kBlock / 32][kFlatSegs];
  A part[kBlock / 32][kFlatSegs][32];  // (warp, segment, lane)
};
template <class A> struct flat_shared<A, false> {};

inline constexpr unsigned long long kCheckWaitNs = 20000;  // lazy tiles: the longest wait for the offsets checks

/// The GPU's global timer, in nanoseconds.
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// The lanes of a group of `lanes` (reading one output with v2::fold_contig) that can hold
/// any of an output's len elements of type T: at most V - 1 read the scalar head or tail,
/// lane j the vectors j, j + lanes, ... (V elements a 16-byte vector).
template <class T> __device__ __forceinline__ int lanes_used(std::int64_t len, int lanes) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  const std::int64_t u = len / V + V;
  return u < lanes ? static_cast<int>(u) : lanes;
}

/// The group reduction of a warp's groups of `lanes` lanes (lane 0 of each gets its group's
/// accumulator). TRIM (accumulators of 32 bytes or more, the certified pass's, whose merges
/// cost ~40 instructions a level and whose results are correctly rounded whatever the merge
/// tree): the levels at or past `used` (the most lanes_used of the warp's groups, warp-
/// uniform) are skipped, their partners holding the identity; so a 32-lane group of a
/// 3-element segment merges twice, not five times.
template <class Op, bool TRIM>
__device__ __forceinline__ typename Op::acc group_reduce(typename Op::acc a, int lanes, int used) {
  int top = lanes;
  if constexpr (TRIM) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned most = __reduce_max_sync(0xffffffffu, static_cast<unsigned>(used));
#else
    unsigned most = static_cast<unsigned>(used);
    for (int d = 16; d >= 1; d /= 2) most = max(most, __shfl_xor_sync(0xffffffffu, most, d));
#endif
    top = static_cast<int>(most) < lanes ? static_cast<int>(most) : lanes;
  }
  for (int d = lanes / 2; d >= 1; d /= 2)
    if (!TRIM || d < top) a = Op::combine(a, v2::shfl_down_w(a, d, lanes));
  return a;
}

/// Block-wide reduction (thread 0 gets the block's accumulator) for accumulators of 32 bytes
/// or more, the certified pass's: a butterfly in each warp, then warp 0 merges the kBlock / 32
/// warp results in a tree of 3 levels, where cub::BlockReduce's warp reductions have thread 0
/// merge them one after another (7 dependent merges of ~40 instructions). `aggs`: kBlock / 32
/// states of shared memory, read by warp 0 before the caller's next barrier.
template <class Op> __device__ __forceinline__ typename Op::acc block_tree(typename Op::acc a, typename Op::acc* aggs) {
  constexpr int kWarpsHere = kBlock / 32;
  static_assert(kWarpsHere <= 32 && (kWarpsHere & (kWarpsHere - 1)) == 0);
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) a = Op::combine(a, v2::shfl_down_w(a, d, 32));
  const int w = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  if (lane == 0) aggs[w] = a;
  __syncthreads();
  if (w == 0) {
    a = lane < kWarpsHere ? aggs[lane] : Op::identity();
#pragma unroll
    for (int d = kWarpsHere / 2; d >= 1; d /= 2) a = Op::combine(a, v2::shfl_down_w(a, d, 32));
  }
  return a;
}

/// The dynamic shared memory of this launch, in bytes.
__device__ __forceinline__ unsigned dynamic_shared_bytes() {
  unsigned b;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(b));
  return b;
}

/// Groups of kUnroll3 (= kGroupUnroll) 16-byte vectors a thread of the rows kernel stages
/// through shared memory by cp.async (plan row_stages; v2::fold_contig STAGES), STAGES - 1 of
/// them in flight while one is folded, with no registers held for them: the certified pass
/// over float32 (32-byte states, 3 blocks a SM, 80 registers) kRowStages; the other ops 0
/// (their vectors loaded into registers). (The byte min / max staged 3 groups a thread at 4
/// blocks a SM, 48 KiB each, in the forty-first session: rows of 8192 int8 / uint8 ran 8% / 6%
/// slower than from registers, run 146 on an H100, so they stay in registers.)
template <class Op> constexpr int row_stages_of() {
  if constexpr (sizeof(typename Op::acc) >= 32 && v2::takes_vectors<Op>()) return kRowStages;
  else return 0;
}
/// The dynamic shared memory that stages the rows kernel's vectors for Op (0: none).
template <class Op> constexpr unsigned row_smem_bytes() {
  return static_cast<unsigned>(row_stages_of<Op>()) * kUnroll3 * kBlock * 16;
}
static_assert(kUnroll3 == kGroupUnroll);

/// Completion of a fused launch.
struct finish {
  long long* status;               // device [2] ("none" between calls)
  unsigned* blocks_done;           // device, 0 between calls
  long long* host_status;          // mapped host [2] (blocking) or device (stream-ordered); may be null
  volatile unsigned* host_done;    // mapped host (blocking); null for a stream-ordered call
  unsigned ticket;
  unsigned* tickets;               // segments: the per-output tickets (reset after bad offsets), else null
  std::int64_t ticket_count;
  unsigned* tile_next;             // device, 0 between calls: lazy tiles, the next tile item to claim
  unsigned* long_seen;             // device, 0 between calls: no longer set (the flag is kLongBit of `checked`, fifty-eighth session)
  unsigned* checked;               // device, 0 between calls: lazy tiles, the blocks done with their offsets check
  int wait_checks;                 // lazy tiles: the grid is co-resident, so a block with no long segment seen may
                                   // wait (bounded) for every block's offsets check before it skips the tiles
  int claim_ahead = 0;             // lazy tiles: when a block claims its next tile (plan seg_claim_ahead, rows_body)
  int check_late = 0;              // plan seg_check_late: the offsets check after the group items (group items first)
  int fence_each = 0;              // plan done_fence: 1 every thread fences its writes before the block's barrier
                                   // (block_done, the column tickets), 0 thread 0 alone after it
  unsigned* group_next = nullptr;  // device, 0 between calls: plan seg_warp_claim, the warp claims handed out
  int warp_claim = 0;              // plan seg_warp_claim: warp items a claim (0: group items by blocks, in turn)
  // check_end (fifty-ninth session; the rows kernel's lazy segments, stream-ordered, ops that
  // never record an overflow, plan check_end): the launch ends without block_done. The last
  // block to count its offsets check in `checked` writes host_status (2: at once; 1: at its
  // end, check_end_status); the words
  // above (a persistent set of its own, 1 or 2) are left as the launch ends them, and the next
  // such launch cleans them (clean_set) before the one after it takes them again.
  int check_end = 0;                // 2 (plan check_end 2, the default): the block whose check's count is the last
                                    // (atomicAdd's return, waited for) writes host_status at once, none at the end; 1: a
                                    // block at its end that reads every count (check_end_status)
  long long* clean = nullptr;       // check_end: the other set (shapes_persistent's layout: status [2], then
                                    // blocks_done, tile_next, long_seen, checked, group_next at bytes 16-36,
                                    // tickets from byte 48) to clean, left by the last check_end launch; null: clean
  std::int64_t clean_tickets = 0;   // its tickets (the capacity)
};

/// Lazy tiles, thread 0 of a block done with its offsets check: whether a segment longer than
/// split was seen. In a co-resident grid (f.wait_checks), when the flag is not yet set, it
/// waits, at most kCheckWaitNs, for every block's offsets check (all run first, so this is
/// short) and reads it again: without the wait a block could skip the tiles before the one
/// holding a long segment has looked. The bits never depend on it: a block that sets the flag claims
/// tiles itself. (Not inlined: it runs once per block, and inlined its registers made the
/// kernel's other paths spill.)
/// `early` (fifty-eighth session): a read of f.checked that thread 0 made before the block's
/// last group item, so that its round trip hid behind that item's loads (kNoEarly: none). Bit
/// kLongBit of that word is set by a block that saw a long segment before it adds its count
/// (atomics on one word are totally ordered), so a value that counts every block holds every
/// block's flag: set, the tiles are needed; clear, they are not, with no other read. Run 208
/// (bench/experiments/narrow_seg_probe.cu): the three dependent reads below cost int8
/// segments of 200 ~1.5 us a call of 33 (the same body with no tile items).
/// Since the same session the flag is only that bit (f.long_seen is no longer set), and the
/// block's check adds it and its count with no fence between (two atomics of one thread on
/// one word keep their order): thread 0 no longer waits at its block's start for a fence, a
/// wait its warp carried to the kernel's end. Every read here is a plain volatile read of that
/// word (run 100's first read was an atomic on it).
inline constexpr unsigned kLongBit = 0x80000000u;
inline constexpr unsigned kNoEarly = 0xffffffffu;
__device__ __forceinline__ bool long_seen_after_checks(const unsigned* checked, int wait_checks, unsigned early = kNoEarly) {
  if (early != kNoEarly) {
    if (early & kLongBit) return true;
    if (early == gridDim.x) return false;  // (every block counted, none with the bit)
  }
  auto read = [&]() { return *static_cast<const volatile unsigned*>(checked); };
  unsigned w = read();
  if (!wait_checks) return (w & kLongBit) != 0;
  const unsigned long long t0 = global_ns();
  // (the flag, once seen set, ends the wait at once: the tiles need not wait for the blocks
  // that have not yet checked)
  while (!(w & kLongBit) && w < gridDim.x && global_ns() - t0 < kCheckWaitNs) {
    __nanosleep(128);
    w = read();
  }
  return (w & kLongBit) != 0;
}

/// Column mode, called by every thread of a block of row chunk blockIdx.y once its part of the
/// column tile blockIdx.x is written (partials, or atomics): whether it is the tile's last
/// chunk block to finish (a ticket a tile, which that block resets), in which case every
/// chunk's writes are visible to it. The fences as block_done's (f.fence_each: plan done_fence).
__device__ __forceinline__ bool last_chunk(unsigned* tickets, const finish& f) {
  __shared__ bool last;
  if (f.fence_each) __threadfence();
  __syncthreads();  // the block's writes are done
  if (threadIdx.x == 0) {
    __threadfence();  // (one fence a block: cumulative over the barrier, as in block_done)
    const unsigned k = atomicAdd(&tickets[blockIdx.x], 1u);
    last = k == gridDim.y - 1;
    if (last) tickets[blockIdx.x] = 0;
  }
  __syncthreads();
  if (last) __threadfence();
  return last;
}

/// finish::check_end, block 0 (every thread) at its start: the other set's words (`clean`,
/// finish::clean) set to their idle values,
/// and its tickets when that set's status shows bad offsets (its tiles' tickets may then have
/// counted wrongly). The launch that left them has ended (stream order), and the next launch
/// that takes them starts after this one ends. (Not inlined, as check_end_status: their
/// registers made the rows kernels spill.)
static __device__ __noinline__ void clean_set(long long* clean, std::int64_t clean_tickets) {
  volatile long long* st = clean;
  const bool bad = __syncthreads_or(threadIdx.x == 0 && st[0] != kNone);  // (read before thread 0 writes)
  if (threadIdx.x == 0) {
    st[0] = kNone;
    st[1] = kNone;
    unsigned* words = reinterpret_cast<unsigned*>(clean + 2);
    for (int k = 0; k < 5; ++k) words[k] = 0;
  }
  if (bad) {
    unsigned* tickets = reinterpret_cast<unsigned*>(clean + 6);
    for (std::int64_t i = threadIdx.x; i < clean_tickets; i += blockDim.x) tickets[i] = 0;
  }
}

/// finish::check_end, thread 0 of every block at its end: when every block has counted its
/// offsets check in `checked` (as `early` read it before the block's last group item, kEarly,
/// or a read now; the block's own count is among them, so the last block to count sees them
/// all), every bad offset is in `status` (a block that found one fenced before it counted), and
/// it goes to host_status. Several blocks may write it, all the same words; the op never
/// records an overflow. (A read at each block's end where block_done had a fence, an atomic
/// and two barriers; the block's count kept in a register from its check instead made the
/// 16-bit and uint32 kernels spill 16-20 bytes more.)
static __device__ __noinline__ void check_end_status(const unsigned* checked, const long long* status, long long* host_status,
                                              unsigned early) {
  const unsigned w = early != kNoEarly && (early & ~kLongBit) == gridDim.x ? early : *static_cast<const volatile unsigned*>(checked);
  if ((w & ~kLongBit) != gridDim.x) return;
  __threadfence();
  const long long s0 = static_cast<const volatile long long*>(status)[0];
  host_status[0] = reported(s0);
  host_status[1] = reported(kNone);
}

/// Called by every thread of every block once its work is done.
__device__ __forceinline__ void block_done(const finish& f) {
  __shared__ bool last_block;
  // The block's outputs are visible before it counts itself done: the barrier orders every
  // thread's writes before thread 0's fence, which is cumulative (PTX memory model; the
  // pattern of cooperative groups' grid.sync), so one fence a block, not one a thread
  // (plan done_fence = 1: every thread's own fence first, as before the twenty-fifth session).
  // (Run 209, fifty-eighth session: thread 0's count as one acq_rel atomic, cuda::atomic_ref,
  // without the fences: the same time, ~1.9 us a call of 31 for this end on int8 segments of
  // 200, bench/experiments/narrow_seg_probe.cu; not taken)
  if (f.fence_each) __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const unsigned blocks = gridDim.x * gridDim.y;
    last_block = atomicAdd(f.blocks_done, 1u) == blocks - 1;
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  volatile long long* st = f.status;
  const long long s0 = st[0], s1 = st[1];
  if (s0 != kNone && f.tickets) {  // bad offsets: the tickets may have counted wrongly; idle them all
    for (std::int64_t i = threadIdx.x; i < f.ticket_count; i += blockDim.x) f.tickets[i] = 0;
    __threadfence();
  }
  if (threadIdx.x != 0) return;
  st[0] = kNone;
  st[1] = kNone;
  *f.blocks_done = 0;
  *f.tile_next = 0;
  *f.long_seen = 0;
  *f.checked = 0;
  if (f.group_next) *f.group_next = 0;
  if (f.host_status) {
    f.host_status[0] = reported(s0);
    f.host_status[1] = reported(s1);
  }
  if (f.host_done) {
    __threadfence_system();
    *f.host_done = f.ticket;
  }
}

/// An accumulator read from L2 (written by another block of this launch). Accumulators of a
/// multiple of 16 bytes (the certified pass's 32-byte states, 128-bit integers) in 16-byte
/// loads: the partials arrays start 256-byte aligned in the scratch, so every element is
/// 16-byte aligned. (Four-byte loads took 8 instructions a state, each touching a sector of
/// every lane's state: 8 times the L2 requests of the data.)
template <class A> __device__ __forceinline__ A load_cg(const A* p) {
  static_assert(sizeof(A) % 4 == 0);
  using W = std::conditional_t<sizeof(A) % 16 == 0, uint4, unsigned>;
  constexpr int N = static_cast<int>(sizeof(A) / sizeof(W));
  W w[N];
  const W* q = reinterpret_cast<const W*>(p);
#pragma unroll
  for (int i = 0; i < N; ++i) w[i] = __ldcg(q + i);
  A r;
  __builtin_memcpy(&r, w, sizeof r);
  return r;
}

/// The output holding flat element f (< n), found by the whole block (every thread calls it
/// and gets the same answer). CSR segments: a probe (unless `probe` is false: the caller's own
/// probe of the same place missed) of kBlock offsets where f would be with
/// equal segments, then a kBlock-ary search over the range left (one round of
/// kBlock parallel loads per factor of kBlock: two rounds for up to 65,536 segments) instead of
/// a binary search's chain of log2(segments) dependent loads. With valid offsets (nondecreasing
/// from 0 to n) the answer is the last o < outputs with off[o] <= f, never an empty segment;
/// with any others it is some o in [0, outputs) (the caller checks it holds f).
__device__ __forceinline__ std::int64_t block_output_of(const geo& g, std::int64_t f, bool probe = true) {
  if (!g.off) return f / g.len;
  std::int64_t lo = 0, hi = g.outputs - 1;  // off[lo] <= f always (lo, hi: the same in every thread)
  if (probe && hi >= kBlock && g.n > 0) {
    // A first probe: the kBlock offsets around where f would sit were the segments equal
    // (one round instead of log_kBlock(segments) when they nearly are; else the range it
    // leaves). The answer is the same whatever the probe (the last o with off[o] <= f).
    const auto guess = static_cast<std::int64_t>(static_cast<double>(f) * static_cast<double>(g.outputs) / static_cast<double>(g.n));
    std::int64_t start = guess - kBlock / 2;
    start = start < 0 ? 0 : start > hi - kBlock + 1 ? hi - kBlock + 1 : start;
    const int c = __syncthreads_count(__ldg(g.off + start + threadIdx.x) <= f);
    if (c == 0) hi = start > 0 ? start - 1 : 0;  // (start = 0 and c = 0 only with offsets that break the rules)
    else if (c == kBlock) lo = start + kBlock - 1;
    else lo = hi = start + c - 1;
  }
  while (lo < hi) {
    const std::int64_t step = (hi - lo + kBlock) / kBlock;  // ceil((hi - lo + 1) / kBlock) >= 1
    const std::int64_t i = lo + static_cast<std::int64_t>(threadIdx.x) * step;
    const bool below = i <= hi && __ldg(g.off + i) <= f;
    const int c = __syncthreads_count(below);  // samples at or below f: a prefix, c >= 1 (valid offsets)
    lo += static_cast<std::int64_t>(c > 0 ? c - 1 : 0) * step;  // (c = 0 only with offsets that break the rules)
    hi = lo + step - 1 < hi ? lo + step - 1 : hi;
  }
  return lo;
}

/// A segment's flat elements [b, e) from its two offsets lo, hi, clamped into [0, n] with
/// e >= b (see span_of), and where they start in x.
__device__ __forceinline__ void span_from(const geo& g, std::int64_t lo, std::int64_t hi, std::int64_t& b,
                                          std::int64_t& e, std::int64_t& at) {
  b = lo < 0 ? 0 : lo > g.n ? g.n : lo;
  e = hi < b ? b : hi > g.n ? g.n : hi;
  at = b;
}

/// Output o's flat elements [b, e) and where its elements start in x (rows: o * outer). For
/// segments, safe for any offsets: clamped into [0, n] with e >= b, so offsets that break the
/// rules (found by the blocks' own checks, reported, and the outputs then unspecified) never
/// lead a read outside x.
__device__ __forceinline__ void span_of(const geo& g, std::int64_t o, std::int64_t& b, std::int64_t& e,
                                        std::int64_t& at) {
  if (!g.off) {
    b = o * g.len;
    e = b + g.len;
    at = o * g.outer;
    return;
  }
  span_from(g, __ldg(g.off + o), __ldg(g.off + o + 1), b, e, at);
}

/// Rows and segments (contiguous outputs), one launch over `items` work items, taken by the
/// blocks in turn (item = blockIdx.x, + gridDim.x, ...; the grid may be smaller than the item
/// count: persistent blocks): items [0, tiles) are tiles of `tile` flat elements (the parts
/// of outputs longer than `split` elements that meet them), the rest groups of kBlock / G
/// outputs of at most `split` elements (G = kBlock: one output per block). What an item
/// computes does not depend on the block that takes it, so the bits do not depend on the
/// grid. order (shapes_items.hpp item_at): tiles first, group items first, or the tiles spread
/// evenly among the group items. probe (plan tile_probe): the tile items probe their search
/// points first. LAZY (every launch but that of rows read a block each, which have no tiles;
/// rows too, whose tile items are then all needed): the tile items
/// run only if a segment is longer than split, claimed after the group items (the same
/// bits; run 46: +10-13% on equal segments, where no tile is needed). Registers for 4 blocks per SM (64; a 5-block cap at 48 measured slower,
/// run 19; 3 blocks with 8 vectors in flight, run 44, no faster).
/// Lets a kernel launched behind this one as a programmatic dependent (the gated exact kernel
/// of a stream-ordered exact-mode call, plan.pdl) start its launch once every block of this
/// grid has begun: its blocks then take the slots this grid's blocks free, and wait
/// (griddepcontrol.wait) for this whole grid, its writes visible, before reading anything.
/// A no-op when no such kernel follows.
__device__ __forceinline__ void allow_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// The certified mean's op (certified_sum<T, Out, true>): rows_body leaves warp_phase out of
/// its kernels.
template <class Op> struct is_mean_op : std::false_type {};
template <class T, class Out> struct is_mean_op<certified_sum<T, Out, true>> : std::true_type {};

/// Marks of rows_body's progress for an experiment's clocks (bench/experiments/seg_probe.cu):
/// at(k) at point k of a block's run (1 offsets checked, 2 the tiles' need known, 3 the first
/// tile begun, 4 + i the end of the block's tile i < 8, 12 and 13 the start and end of a
/// segment's partials merge, 14 the items done). The library's, no_marks, does nothing.
struct no_marks {
  static __device__ __forceinline__ void at(int) {}
};

// (GU: the vectors in flight a lane of the group items, kGroupUnroll in the library; other values
// for bench/experiments/narrow_seg_probe.cu. Run 198 tried there an L2 prefetch of a group
// item's next segment once its own was read, cp.async.bulk.prefetch.L2: 1-26% slower on every
// type and lane count, removed.)
template <class Op, int G, bool LAZY = false, class Marks = no_marks, int AHEAD = -1, int GU = kGroupUnroll>
__device__ __forceinline__ void rows_body(geo g, Op op, typename Op::acc* partials, unsigned* tickets, std::int64_t tile,
                                          std::int64_t split, std::int64_t tiles, std::int64_t items, int order, int probe,
                                          finish f) {
  using A = typename Op::acc;
  using T = typename Op::elem;
  using block_reduce = cub::BlockReduce<A, kBlock, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
  allow_dependents();
  static_assert(G == kBlock || (G >= 1 && G <= 32 && (32 % (G == 0 ? 1 : G)) == 0) || (G == 0 && LAZY));
  __shared__ typename block_reduce::TempStorage temp;
  __shared__ bool last;
  __shared__ std::int64_t probe_at[kProbePoints];  // tile items: the output holding each point, or -1
  __shared__ std::int64_t probe_b[kProbePoints], probe_e[kProbePoints];  // its flat range (span_from), e = -1: not seen
  const T* x = static_cast<const T*>(g.x);
  // The certified pass over float32 (row_stages_of): its vectors staged through dynamic shared
  // memory by cp.async when the launch gives row_smem_bytes (plan row_stages; v2::fold_contig
  // STAGES), this thread's slots kBlock uint4 apart; else null.
  constexpr int RS = row_stages_of<Op>();
  constexpr bool kTrim = sizeof(A) >= 32;  // (group_reduce: the certified pass's merges trimmed to the lanes used)
  // lazy tiles: the group items before the tiles for accumulators under 32 bytes (no block then
  // waits at its start for the other blocks' offsets checks, and the tiles, claimed one at a
  // time, end the kernel balanced); the certified pass's states keep the tiles first, where
  // ptxas fits them without spills (twenty-first session, run 79)
  constexpr bool kGroupsFirst = !kTrim;
  // the checks' word read before a block's last group item (long_seen_after_checks' `early`):
  // the byte, bool and 16-bit integer sums and means (run 209, int8 / int16 segments of 200:
  // +3.5% / +2.3%, the tiles' handshake then free)
  constexpr bool kEarly = kGroupsFirst && v2::takes_lane_sums<Op>() && sizeof(T) <= 2;
  // plan seg_warp_claim (warp_phase): the certified pass's group items of 1..32 lanes, sums
  // (its mean's kernels spill 40 bytes already, and 116 with warp_phase: ptxas here)
  constexpr bool kWarpClaims = !kGroupsFirst && G >= 1 && G <= 32 && !is_mean_op<Op>::value;
  // a block's accumulator to thread 0: block_tree for the certified pass's states, else CUB's
  // (the callers' barriers after each use cover both: temp's bytes hold block_tree's states)
  static_assert(sizeof(typename block_reduce::TempStorage) >= kBlock / 32 * sizeof(A));
  auto reduce_block = [&](const A& v) -> A {
    if constexpr (kTrim) return block_tree<Op>(v, reinterpret_cast<A*>(&temp));
    else return block_reduce(temp).Reduce(v, combine_op<Op>{});
  };
  uint4* stage = nullptr;
  if constexpr (RS > 0) {
    extern __shared__ uint4 rows_dynamic[];
    if (dynamic_shared_bytes() >= row_smem_bytes<Op>()) stage = rows_dynamic + threadIdx.x;
  }
  // Offsets check (segments; the first bad index to status[0], reported by block_done): each
  // block checks a balanced share of the offsets (sizes differ by at most one, so every block
  // has one when there are at least as many offsets as blocks; run 48). The reads of the
  // items are safe with any offsets (span_of clamps them into x).
  //  - Lazy tiles (every segments launch): first, also looking for
  //    segments longer than split; a block that sees one sets kLongBit of f.checked, and every block
  //    then counts itself in f.checked. (Run 52 checked the offsets inside the group items
  //    instead, already loaded there: no faster on equal segments of 200, and 2% slower on
  //    one huge among tiny ones, where the blocks then learnt of the tiles only after every
  //    block's group items.)
  //  - Eager (before the forty-sixth session, plan seg_lazy_tiles = 0): after its items, its loads overlapping the other blocks'
  //    reads (run 44: +2% on the uneven case).
  auto check_offsets = [&](bool find_long) {
    const std::int64_t entries = g.outputs + 1, per = entries / gridDim.x, rem = entries % gridDim.x;
    const std::int64_t b = blockIdx.x;
    const std::int64_t i0 = b * per + (b < rem ? b : rem), i1 = i0 + per + (b < rem ? 1 : 0);
    bool longer = false, bad = false;
    // kCheckLoads entries a thread in flight together (one round trip for a share of up to
    // kCheckLoads kBlock entries: equal segments of 200 give a block ~640 entries, which the
    // loop of one entry at a time read in 3 dependent rounds, ~0.6 us each at the kernel's start)
    for (std::int64_t i_base = i0 + threadIdx.x; i_base < i1; i_base += kCheckLoads * kBlock) {
      std::int64_t v[kCheckLoads], prev[kCheckLoads];
#pragma unroll
      for (int k = 0; k < kCheckLoads; ++k) {
        const std::int64_t i = i_base + static_cast<std::int64_t>(k) * kBlock;
        v[k] = i < i1 ? __ldg(g.off + i) : 0;
        prev[k] = i < i1 && i > 0 ? __ldg(g.off + i - 1) : 0;
      }
#pragma unroll
      for (int k = 0; k < kCheckLoads; ++k) {
        const std::int64_t i = i_base + static_cast<std::int64_t>(k) * kBlock;
        if (i >= i1) break;
        bool good = i == 0 ? v[k] == 0 : v[k] >= prev[k];
        if (i == g.outputs) good = good && v[k] == g.n;
        if (!good) {
          atomicMin(f.status, static_cast<long long>(i));
          bad = true;
        }
        longer = longer || (i > 0 && v[k] - prev[k] > split);
      }
    }
    if (find_long) {
      const bool any = __syncthreads_or(longer);
      // (check_end: a block that found bad offsets fences after the barrier, before it counts,
      // so the last block to count reads them, check_end_status; f.check_end is the same in
      // every thread)
      const bool bad_any = f.check_end && __syncthreads_or(bad);
      if (threadIdx.x == 0) {
        if (bad_any) __threadfence();
        // the flag, then the count, on one word (long_seen_after_checks): no fence between
        if (any) atomicOr(f.checked, kLongBit);
        if (f.check_end == 2) {  // (plan check_end 2: the block whose count is the last writes the status now;
                                 // inline: a call here, with the kernel's state live, made 42 kernels spill more)
          if (((atomicAdd(f.checked, 1u) + 1u) & ~kLongBit) == gridDim.x && f.host_status) {
            __threadfence();
            f.host_status[0] = reported(static_cast<const volatile long long*>(f.status)[0]);
            f.host_status[1] = reported(kNone);
          }
        } else {
          atomicAdd(f.checked, 1u);
        }
      }
    }
  };
  __shared__ unsigned claimed;  // lazy tiles: the tile item thread 0 claimed
  // (LAZY: the order is at the end of the kernel)
  std::int64_t known = -1, known_b = 0, known_e = 0;  // the last output found and its flat range (same in every thread)
  bool have_next = false;  // group items of segments: this thread's offsets for the block's next item, loaded
  std::int64_t next_lo = 0, next_hi = 0;
  // Lazy tiles: when thread 0 claims the block's next tile (plan seg_claim_ahead, f.claim_ahead;
  // AHEAD >= 0, an experiment's override). 0 (the default): when the block is free, so that
  // the next tile goes to the block that can start it first (its claim's round trip, ~1 us, is
  // not hidden). 1 (before run 95): when the current tile is claimed; a block then holds its
  // next tile a whole tile before it can start it, and with 2-3 tiles a block the first
  // blocks back take the tiles the others would have run sooner. 2: once the current tile's
  // first part is read, before its block reduction. Run 96: 0 the fastest of the three on
  // every segment job with tiles, exact uneven segments +6% over 2 and +2% over 1. Never the bits.
  const int ahead_mode = AHEAD >= 0 ? AHEAD : f.claim_ahead;
  unsigned ahead = 0xffffffffu;
  bool ahead_made = false;
  // One tile item (t < tiles): the outputs of more than `split` elements meeting it.
  auto tile_item = [&](const std::int64_t t) {
      const std::int64_t f0 = t * tile, f1 = f0 + tile < g.n ? f0 + tile : g.n;
      // Output s, of flat elements [b, e) with e - b > split, meeting this tile: its part here
      // reduced by the whole block and written, or left as this tile's partial (the last of
      // its tiles to finish combines them). Every thread calls it with the same arguments.
      auto tile_part = [&](std::int64_t s, std::int64_t b, std::int64_t e) {
        const std::int64_t len = e - b;
        {
          const std::int64_t lo = (b > f0 ? b : f0) - b, hi = (e < f1 ? e : f1) - b;
          const T* xs = x + (g.off ? b : s * g.outer);
          A a = Op::identity();
          v2::fold_contig<Op, kUnroll3, RS>(a, xs, lo, hi, threadIdx.x, kBlock, stage);
          if constexpr (LAZY) {
            if (ahead_mode == 2 && threadIdx.x == 0 && !ahead_made) {
              ahead = atomicAdd(f.tile_next, 1u);
              ahead_made = true;
            }
          }
          A total = reduce_block(a);
          const std::int64_t t0 = b / tile, t1 = (b + len - 1) / tile;
          if (t0 == t1) {  // all of s is in this tile
            if (threadIdx.x == 0) op.write(s, total, len);
          } else {
            // its partial: slot 1 in s's first tile when s starts inside it (s then holds f1 - 1
            // there, and slot 0 may belong to an earlier output), else slot 0
            if (threadIdx.x == 0) {
              partials[2 * t + ((t == t0 && b > f0) ? 1 : 0)] = total;
              __threadfence();
              const unsigned k = atomicAdd(&tickets[s], 1u);
              last = k == static_cast<unsigned>(t1 - t0);
              if (last) tickets[s] = 0;  // idle again for the next call
            }
            __syncthreads();
            if (last) {  // every other tile of s has written its partial: combine them in tile order
              Marks::at(12);
              __threadfence();
              A c = Op::identity();
              auto slot_of = [&](std::int64_t u) { return 2 * u + ((u == t0 && b > t0 * tile) ? 1 : 0); };
              std::int64_t u = t0 + threadIdx.x;
              for (; u + (kCombineLoads - 1) * kBlock <= t1; u += kCombineLoads * kBlock) {  // loads in flight together
                A v[kCombineLoads];
#pragma unroll
                for (int i = 0; i < kCombineLoads; ++i) v[i] = load_cg(partials + slot_of(u + i * kBlock));
#pragma unroll
                for (int i = 0; i < kCombineLoads; ++i) c = Op::combine(c, v[i]);
              }
              for (; u <= t1; u += kBlock) c = Op::combine(c, load_cg(partials + slot_of(u)));
              __syncthreads();  // temp is reused
              A all = reduce_block(c);
              if (threadIdx.x == 0) op.write(s, all, len);
              Marks::at(13);
            }
          }
          __syncthreads();  // temp and `last` are reused
        }
      };
      // The points the walk below may search: f0 + k split (k < K - 1) and f1 - 1 (k = K - 1).
      // Probe (segments, plan.tile_probe, up to kProbePoints points): warp k reads the 32
      // offsets around where point k would sit were the segments equal, all in one round; a
      // point whose window brackets it needs no search. Skipped when the output already found
      // covers the tile (a long segment's inner tiles). The walk's answers are the same
      // either way.
      const std::int64_t K = (f1 - 1 - f0 + split - 1) / split + 1;
      auto point = [&](std::int64_t k) { return f0 + k * split < f1 - 1 ? f0 + k * split : f1 - 1; };
      const bool probing = g.off && probe && K <= kProbePoints && g.outputs >= 32 &&
                           !(known >= 0 && known_b <= f0 && f1 <= known_e);  // (the same in every thread)
      if (probing) {
        __syncthreads();  // every thread has read the last tile's probe_at
        const int w = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
        if (w < K) {
          const std::int64_t q = point(w);
          const auto guess = static_cast<std::int64_t>(static_cast<double>(q) * static_cast<double>(g.outputs) / static_cast<double>(g.n));
          const std::int64_t st = guess - 16 < 0 ? 0 : guess - 16 > g.outputs - 32 ? g.outputs - 32 : guess - 16;
          const std::int64_t v = __ldg(g.off + st + lane);
          const int c = __popc(__ballot_sync(0xffffffffu, v <= q));
          // its two offsets, when the window holds both (c < 32): the walk then needs no span_of
          const std::int64_t vb = __shfl_sync(0xffffffffu, v, c > 0 ? c - 1 : 0);
          const std::int64_t ve = __shfl_sync(0xffffffffu, v, c < 32 ? c : 31);
          // the last o with off[o] <= q, when the window shows it: c > 0 and off[st + c] > q (or the window ends at the last output)
          if (lane == 0) {
            const bool seen = c > 0 && (c < 32 || st + 32 == g.outputs);
            probe_at[w] = seen ? st + c - 1 : -1;
            std::int64_t b = 0, e = -1, at;
            if (seen && c < 32) span_from(g, vb, ve, b, e, at);
            probe_b[w] = b;
            probe_e[w] = e;
          }
        }
        __syncthreads();
      }
      {
        // The walk: the outputs holding f0 and f1 - 1, and any between (each holds a point
        // f0 + k split: an output longer than split inside the tile cannot fit between two of
        // them), visited in order; each point inside an output already found needs no search.
        std::int64_t p = f0;
        while (true) {
          if (!(known >= 0 && known_b <= p && p < known_e)) {
            const int k = probing ? static_cast<int>(p == f1 - 1 ? K - 1 : (p - f0) / split) : 0;
            const std::int64_t hit = probing ? probe_at[k] : -1;
            if (hit >= 0 && probe_e[k] >= 0) {  // the probe saw both its offsets (the values span_of reads)
              known = hit;
              known_b = probe_b[k];
              known_e = probe_e[k];
            } else {
              // (after a probe that missed p, block_output_of skips its own probe of the same place)
              known = hit >= 0 ? hit : block_output_of(g, p, !probing);
              std::int64_t at;
              span_of(g, known, known_b, known_e, at);
            }
            if (!(known_b <= p && p < known_e)) break;  // (only with offsets that break the rules)
          }
          if (known_e - known_b > split) tile_part(known, known_b, known_e);
          if (known_e >= f1) break;  // s reaches the tile's end
          // the next point at or after s's end: f0 + k split, or the tile's last element
          p = point((known_e - f0 + split - 1) / split);
        }
      }
  };
  // One flat group item (G = 0; plan seg_flat_len; segments under lazy tiles). Warp w takes
  // the segments s0 = item * kFlatItem + w kFlatSegs, up to kFlatSegs of them, as one flat
  // range [R0, R1): lane l reads its 16-byte vectors l, l + 32, ... (so each warp load is 512
  // contiguous bytes, as a block row is read, instead of a 64-byte piece of each of 8 segments
  // with 4 lanes per segment), the head before the first 16-byte boundary and the tail after
  // the last whole vector scalarly. A lane meets its elements in increasing order, so each
  // segment in one run: it folds the run and leaves it in part[w][segment][l] (identity where
  // it has none); the 32 parts of a segment are then combined in a butterfly. A warp whose
  // segments hold one longer than split (the tile items' share) or offsets that break the
  // rules takes its segments one at a time, 32 lanes each. The bits depend only on the
  // offsets, the base address's alignment and the constants here.
  __shared__ flat_shared<A, G == 0> fsh;
  auto flat_item = [&](const std::int64_t it, const std::int64_t taken) {
    if constexpr (G == 0) {
      constexpr unsigned full = 0xffffffffu;
      constexpr int V = 16 / static_cast<int>(sizeof(T));
      const int w = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
      const std::int64_t s0 = (it - tiles) * kFlatItem + static_cast<std::int64_t>(w) * kFlatSegs;
      const int ns = s0 >= g.outputs ? 0 : g.outputs - s0 < kFlatSegs ? static_cast<int>(g.outputs - s0) : kFlatSegs;
      // lane l <= ns: offset s0 + l, clamped into [0, n] (loaded ahead by the last item when it could)
      std::int64_t ov = 0;
      if (ns > 0 && lane <= ns) ov = have_next ? next_lo : __ldg(g.off + s0 + lane);  // (ns = 0: s0 may be past the offsets)
      // this lane's offset for the block's next item, loaded now (its latency behind this item's reads)
      have_next = false;
      if (taken + gridDim.x < items - tiles) {
        const std::int64_t ns0 = (taken + gridDim.x) * kFlatItem + static_cast<std::int64_t>(w) * kFlatSegs;
        if (ns0 + lane <= g.outputs && lane <= kFlatSegs) {
          next_lo = __ldg(g.off + ns0 + lane);
          have_next = true;
        }
      }
      if (ns == 0) return;  // (warp-uniform)
      ov = ov < 0 ? 0 : ov > g.n ? g.n : ov;
      const std::int64_t nx = __shfl_down_sync(full, ov, 1);
      const bool broken = lane < ns && nx < ov;  // (offsets that break the rules: reported by the check)
      const bool longer = lane < ns && nx - ov > split;
      if (__any_sync(full, broken || longer)) {
        for (int i = 0; i < ns; ++i) {  // one at a time, 32 lanes each (as span_of reads them)
          std::int64_t b, e, at;
          span_of(g, s0 + i, b, e, at);
          if (e - b > split) continue;  // (the tile items')
          A a = Op::identity();
          v2::fold_contig<Op, kGroupUnroll>(a, x + at, 0, e - b, lane, 32);
#pragma unroll
          for (int d = 16; d >= 1; d /= 2) a = Op::combine(a, v2::shfl_down_w(a, d, 32));
          if (lane == 0) op.write(s0 + i, a, e - b);
        }
        return;
      }
      if (lane < ns) fsh.end[w][lane] = nx;
#pragma unroll
      for (int i = 0; i < kFlatSegs; ++i) fsh.part[w][i][lane] = Op::identity();
      __syncwarp();
      const std::int64_t R0 = __shfl_sync(full, ov, 0), R1 = __shfl_sync(full, ov, ns);
      int c = 0;  // this lane's segment, its first element and its end
      std::int64_t bc = R0, ec = fsh.end[w][0];
      A a = Op::identity();
      auto put = [&](const T v, const std::int64_t k) {  // k: flat, increasing, in [R0, R1)
        while (k >= ec) {  // (c < ns - 1 here, as k < R1 = the last end)
          fsh.part[w][c][lane] = a;
          a = Op::identity();
          bc = ec;
          ++c;
          ec = fsh.end[w][c];
        }
        Op::accumulate(a, v, k - bc);
      };
      const auto addr = reinterpret_cast<std::uintptr_t>(x + R0);
      const std::int64_t head = static_cast<std::int64_t>(((16 - addr % 16) % 16) / sizeof(T));
      const std::int64_t kh = R0 + head < R1 ? R0 + head : R1;
      if (R0 + lane < kh) put(__ldg(x + R0 + lane), R0 + lane);  // (head < V <= 32)
      const std::int64_t nv = (R1 - kh) / V;
      const uint4* pv = reinterpret_cast<const uint4*>(x + kh);
      constexpr int U = kGroupUnroll;
      std::int64_t j = lane;
      for (; j + (U - 1) * 32 < nv; j += U * 32) {
        uint4 r[U];
#pragma unroll
        for (int u = 0; u < U; ++u) r[u] = __ldg(pv + j + u * 32);
#pragma unroll
        for (int u = 0; u < U; ++u) {
          T v[V];
          __builtin_memcpy(v, &r[u], 16);
#pragma unroll
          for (int e = 0; e < V; ++e) put(v[e], kh + (j + u * 32) * V + e);
        }
      }
      if (j < nv) {  // this lane's last (< U) vectors, in flight together
        uint4 r[U];
#pragma unroll
        for (int u = 0; u < U; ++u) r[u] = j + u * 32 < nv ? __ldg(pv + j + u * 32) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int u = 0; u < U; ++u) {
          if (j + u * 32 >= nv) break;
          T v[V];
          __builtin_memcpy(v, &r[u], 16);
#pragma unroll
          for (int e = 0; e < V; ++e) put(v[e], kh + (j + u * 32) * V + e);
        }
      }
      const std::int64_t kt = kh + nv * V;
      if (kt + lane < R1) put(__ldg(x + kt + lane), kt + lane);  // (tail < V <= 32)
      fsh.part[w][c][lane] = a;
      __syncwarp();
      for (int i = 0; i < ns; ++i) {
        A v = fsh.part[w][i][lane];
#pragma unroll
        for (int d = 16; d >= 1; d /= 2) v = Op::combine(v, v2::shfl_down_w(v, d, 32));
        if (lane == 0) op.write(s0 + i, v, fsh.end[w][i] - (i == 0 ? R0 : fsh.end[w][i - 1]));
      }
      __syncwarp();  // (part and end are written again by the next item)
    }
  };
  // One group item (it >= tiles; taken: its place in this block's turn, for the offsets
  // loaded ahead).
  auto group_item = [&](const std::int64_t it, const std::int64_t taken) {
    if constexpr (G == kBlock) {  // one output, the whole block (rows; segments: block_batch below)
      const std::int64_t o = it - tiles;
      std::int64_t b, e, at;
      span_of(g, o, b, e, at);
      const std::int64_t len = e - b;
      if (g.off && len <= kWarpSegment) {  // (segments, eager: the bits of block_batch, a warp)
        if (threadIdx.x < 32) {
          A a = Op::identity();
          v2::fold_contig<Op, kGroupUnroll, RS>(a, x + at, 0, len, static_cast<int>(threadIdx.x), 32, stage);
#pragma unroll
          for (int d = 16; d >= 1; d /= 2) a = Op::combine(a, v2::shfl_down_w(a, d, 32));
          if (threadIdx.x == 0) op.write(o, a, len);
        }
      } else if (len <= split) {  // (uniform in the block)
        A a = Op::identity();
        v2::fold_contig<Op, kUnroll3, RS>(a, x + at, 0, len, threadIdx.x, kBlock, stage);
        A total = reduce_block(a);
        if (threadIdx.x == 0) op.write(o, total, len);
        __syncthreads();  // temp is reused
      }
    } else if constexpr (G == 0) {
      flat_item(it, taken);
    } else {
      const int lane = threadIdx.x % G;
      const std::int64_t o = (it - tiles) * (kBlock / G) + threadIdx.x / G;
      const bool live = o < g.outputs;  // every lane stays for the shuffles
      std::int64_t b = 0, e = 0, at = 0;
      if (live) {
        if (have_next) span_from(g, next_lo, next_hi, b, e, at);  // (o: the output they were loaded for)
        else span_of(g, o, b, e, at);
      }
      // segments: this thread's offsets for the block's next item, loaded now so that their
      // latency hides behind this item's reads (the next item then starts its reads at once)
      have_next = false;
      if (g.off && taken + gridDim.x < (LAZY ? items - tiles : items)) {
        const std::int64_t nt = taken + gridDim.x;
        const std::int64_t nit = LAZY ? tiles + nt : item_at(nt, tiles, items, order);
        const std::int64_t no = (nit - tiles) * (kBlock / G) + threadIdx.x / G;
        if (nit >= tiles && no < g.outputs) {
          next_lo = __ldg(g.off + no);
          next_hi = __ldg(g.off + no + 1);
          have_next = true;
        }
      }
      const std::int64_t len = e - b;
      if constexpr (v2::takes_lane_sums<Op>()) {
        // (segments of the narrow integer sums and means: 64-bit lane partials, v2::fold_span_sum;
        // rows keep fold_span, whose vectors may not all lie in x there)
        if (g.off) {
          std::int64_t p = live && len <= split ? v2::fold_span_sum<Op, GU>(x, g.n, at, len, lane, G) : 0;
#pragma unroll
          for (int d = G / 2; d >= 1; d /= 2) p += __shfl_down_sync(0xffffffffu, p, d, G);
          if (live && lane == 0 && len <= split) op.write(o, static_cast<A>(p), len);
          return;
        }
      }
      A a = Op::identity();
      // (segments: partial head and tail vectors read whole and masked, for the ops that allow it)
      if (live && len <= split) v2::fold_span<Op, GU, RS>(a, x, g.off ? g.n : 0, at, len, lane, G, stage);
      a = group_reduce<Op, kTrim>(a, G, live && len <= split ? lanes_used<T>(len, G) : 0);
      if (live && lane == 0 && len <= split) op.write(o, a, len);
    }
  };
  // Segments under plan seg_block_len (lazy tiles only; G = kBlock: an item is one segment):
  // the block's items taken0 + w gridDim.x (w < kWarps, the same items a block takes one at a
  // time), together. Warp w loads item w's offsets; a segment of at most
  // kWarpSegment elements is read by that warp alone (32 lanes: the bits of the 32-lane group
  // items), all such ones at once; the longer ones (up to split) then by the whole block, one
  // after another. So the offsets cost one round trip per kWarps items, and a short segment
  // among long ones costs no block-wide item (fifteenth session: one huge among 4,000 tiny
  // ones read 5% slower with a block item each).
  constexpr int kWarps = kBlock / 32;
  __shared__ std::int64_t batch_b[kWarps], batch_e[kWarps];  // each warp's segment for the block: e = -1 none
  auto block_batch = [&](const std::int64_t taken0) {
    const int w = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
    const std::int64_t o = taken0 + static_cast<std::int64_t>(w) * gridDim.x;
    const bool live = o < items - tiles;  // (warp-uniform)
    std::int64_t b = 0, e = 0, at = 0;
    if (live) span_of(g, o, b, e, at);  // (every lane the same two loads)
    const std::int64_t len = e - b;
    if (live && len <= kWarpSegment) {
      A a = Op::identity();
      v2::fold_contig<Op, kGroupUnroll, RS>(a, x + at, 0, len, lane, 32, stage);
      a = group_reduce<Op, kTrim>(a, 32, lanes_used<T>(len, 32));  // (warp-uniform: one segment a warp)
      if (lane == 0) op.write(o, a, len);
    }
    if (lane == 0) {
      batch_b[w] = b;
      batch_e[w] = live && len > kWarpSegment && len <= split ? e : -1;
    }
    __syncthreads();
    for (int k = 0; k < kWarps; ++k) {
      const std::int64_t kb = batch_b[k], ke = batch_e[k];
      if (ke < 0) continue;  // (uniform in the block)
      A a = Op::identity();
      v2::fold_contig<Op, kUnroll3, RS>(a, x + kb, 0, ke - kb, threadIdx.x, kBlock, stage);
      A total = reduce_block(a);
      if (threadIdx.x == 0) op.write(taken0 + static_cast<std::int64_t>(k) * gridDim.x, total, ke - kb);
      __syncthreads();  // temp is reused
    }
    __syncthreads();  // batch_b, batch_e are written again by the next batch
  };
  if constexpr (!LAZY) {
    // the order items are taken in (what each item computes, and so the bits, is the same
    // whatever the order, and whichever block takes it)
    int done = 0;  // (Marks)
    for (std::int64_t taken = blockIdx.x; taken < items; taken += gridDim.x) {
      const std::int64_t it = item_at(taken, tiles, items, order);
      if (it < tiles) {
        if (done == 0) Marks::at(3);
        tile_item(it);
        if (done < 8) Marks::at(4 + done);
        ++done;
      } else {
        group_item(it, taken);
      }
    }
    if (g.off) check_offsets(false);
  } else {
    // The offsets check first; then the group items, taken in turn, and, when a segment
    // longer than split was seen, the tiles, claimed one at a time (an atomic counter: thread
    // 0 claims the next as soon as it has one, so that the atomic's round trip hides behind
    // the tile's reads), in the order kGroupsFirst gives. Group items first (accumulators
    // under 32 bytes): no block waits at its start for the other blocks' offsets checks, and
    // the tiles, claimed one at a time, end the kernel balanced (run 79: 0.5-2% faster on
    // every segment job than the tiles first, in a binary that chose the order at run time).
    // The certified pass's 32-byte states keep the tiles first: with the group items first
    // ptxas spills 36 bytes there, and 0 this way. Two loops, not one: the tile walk's state
    // and the group items' offsets loaded ahead are then never live together, and the order
    // is fixed at compile time (a run-time order spilled 14 bytes in the fast kernels, whose
    // one huge segment among 10,000 tiny ones then read 3112 GB/s against run 77's 3526).
    if constexpr (kGroupsFirst && G >= 1 && G <= 32) {
      // the block's first group item's offsets (taken = blockIdx.x), loaded before the check so
      // that their round trip overlaps its loads (group_item then reads them as loaded ahead)
      const std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * (kBlock / G) + threadIdx.x / G;
      if (g.off && static_cast<std::int64_t>(blockIdx.x) < items - tiles && o < g.outputs) {
        next_lo = __ldg(g.off + o);
        next_hi = __ldg(g.off + o + 1);
        have_next = true;
      }
    }
    // (plan seg_check_late, the kernels with the group items first: the check after them)
    const bool late_check = kGroupsFirst && f.check_late;
    // (rows, g.off null: the narrow types' kernels, launch_v3 under FEW, run rows lazily too;
    // there is nothing to check, and every tile item is needed)
    if (blockIdx.x == 0 && f.clean) clean_set(f.clean, f.clean_tickets);  // (check_end: the set the last such launch left)
    if (!late_check && g.off) check_offsets(true);
    Marks::at(1);
    unsigned early = kNoEarly;  // (thread 0: f.checked as read before the last group item)
    bool tiles_ran = false;  // (the same in every thread)
    auto tiles_phase = [&]() {
      if (tiles > 0) {
        __shared__ bool tiles_needed;
        if (threadIdx.x == 0) tiles_needed = !g.off || long_seen_after_checks(f.checked, f.wait_checks, early);
        __syncthreads();
        Marks::at(2);
        tiles_ran = tiles_needed;
        if (tiles_needed) {
          int done = 0;  // (Marks)
          if (ahead_mode == 1 && threadIdx.x == 0) ahead = atomicAdd(f.tile_next, 1u);
          while (true) {
            if (threadIdx.x == 0) {
              unsigned c;
              if (ahead_mode == 1) {
                c = ahead;
                if (static_cast<std::int64_t>(c) < tiles) ahead = atomicAdd(f.tile_next, 1u);
              } else {  // (2: claimed during the last tile, when it had a part; 0: never ahead)
                c = ahead_made ? ahead : atomicAdd(f.tile_next, 1u);
                ahead_made = false;
              }
              claimed = c;
            }
            __syncthreads();
            const unsigned c = claimed;
            __syncthreads();  // (claimed is written again for the next claim)
            if (static_cast<std::int64_t>(c) >= tiles) break;
            if (done == 0) Marks::at(3);
            tile_item(static_cast<std::int64_t>(c));
            if (done < 8) Marks::at(4 + done);
            ++done;
          }
        }
      }
    };
    // Plan seg_warp_claim (f.warp_claim = C > 0), the certified pass (tiles first) when its
    // tiles ran (a segment longer than split): the group items after the tiles taken by warps,
    // not blocks, so that the blocks whose last tile ends late find them taken by the others
    // instead of reading their own share of them then (a block item is read by its warps one
    // segment group each, 3-4 items in turn a block over the uneven segments' 10,000 tiny
    // ones). A warp item is 32 / G consecutive segments (warp item i: those of block item
    // i / kWarps's warp i % kWarps, read by the same lanes in the same order, so the same
    // bits). Warp gw takes warp item gw, then claims of C consecutive warp items from
    // f.group_next (claim k: the k-th counted), asked for two claims ahead by lane 0 so that
    // their round trips hide behind the reads; no block barrier. A warp loads its next warp
    // item's offsets before it reads the current one (as group_item). Runs 101-102 took every
    // call's group items so (equal segments included): 8-31% slower on equal segments (a
    // block item's time is the unit either way, and the claims cost), see docs/performance.md.
    auto warp_phase = [&]() {
      if constexpr (kWarpClaims) {
        constexpr int kPer = 32 / G;  // segments a warp item
        constexpr unsigned full = 0xffffffffu;
        const int lane32 = static_cast<int>(threadIdx.x % 32), lane = static_cast<int>(threadIdx.x % G);
        const std::int64_t witems = (g.outputs + kPer - 1) / kPer;
        auto warps = [&]() { return static_cast<std::int64_t>(gridDim.x) * kWarps; };  // W (recomputed: no register held)
        auto first_claimed = [&]() { return warps(); };  // the first warp item claimed
        // (claims only while their count fits the 32-bit counter, else none: the asks, at most
        // two a warp beyond the claims, then stay below 2^32, as W is at most the resident warps,
        // 64 blocks a SM, or with blocks_per_sm < 0 a warp per warp item, when no claim is made)
        const bool claims = first_claimed() < witems && (witems - first_claimed()) / f.warp_claim < (std::int64_t(1) << 31);
        std::int64_t wi = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
        if (wi >= witems) return;  // (warp-uniform)
        auto ask = [&]() -> unsigned { return lane32 == 0 ? atomicAdd(f.group_next, 1u) : 0u; };
        unsigned pend1 = 0, pend2 = 0;  // lane 0: the warp's next two claims
        if (claims) {
          pend1 = ask();
          pend2 = ask();
        }
        std::int64_t left = 0;            // warp items of the current claim still to take
        std::int64_t lo = 0, hi = 0;      // this thread's segment's offsets in warp item wi
        {
          const std::int64_t o = wi * kPer + lane32 / G;
          if (have_next) {  // (loaded before the offsets check, the same segment)
            lo = next_lo;
            hi = next_hi;
          } else if (o < g.outputs) {
            lo = __ldg(g.off + o);
            hi = __ldg(g.off + o + 1);
          }
          have_next = false;
        }
        while (true) {
          std::int64_t nwi;  // the warp's next warp item (warp-uniform)
          if (left > 0) {
            nwi = wi + 1;
            --left;
          } else if (claims) {
            nwi = first_claimed() + static_cast<std::int64_t>(__shfl_sync(full, pend1, 0)) * f.warp_claim;
            left = f.warp_claim - 1;
            pend1 = pend2;
            if (nwi < witems) pend2 = ask();
          } else {
            nwi = witems;
          }
          std::int64_t nlo = 0, nhi = 0;  // its offsets, loaded now: their latency behind this item's reads
          const std::int64_t no = nwi * kPer + lane32 / G;
          if (nwi < witems && no < g.outputs) {
            nlo = __ldg(g.off + no);
            nhi = __ldg(g.off + no + 1);
          }
          const std::int64_t o = wi * kPer + lane32 / G;
          const bool live = o < g.outputs;  // every lane stays for the shuffles
          std::int64_t b = 0, e = 0, at = 0;
          if (live) span_from(g, lo, hi, b, e, at);
          const std::int64_t len = e - b;
          A a = Op::identity();
          if (live && len <= split) v2::fold_contig<Op, GU, RS>(a, x + at, 0, len, lane, G, stage);
          a = group_reduce<Op, kTrim>(a, G, live && len <= split ? lanes_used<T>(len, G) : 0);
          if (live && lane == 0 && len <= split) op.write(o, a, len);
          if (nwi >= witems) break;
          wi = nwi;
          lo = nlo;
          hi = nhi;
        }
      }
    };
    auto groups_phase = [&]() {
      if constexpr (G == kBlock) {
        for (std::int64_t taken = blockIdx.x; taken < items - tiles; taken += kWarps * static_cast<std::int64_t>(gridDim.x))
          block_batch(taken);
      } else {
        // (in turn, not claimed: run 85 claimed them one at a time after the certified pass's
        // tiles, thread 0 holding the next claim, and the two barriers of each claim cost the
        // warps' overlap across items: exact equal segments of 200 / 1024 / 8192 20% / 10% /
        // 10% slower, the uneven ones 3% slower)
        if (kWarpClaims && tiles_ran && f.warp_claim > 0 && g.off) warp_phase();  // (segments only: rows have no offsets)
        else
          for (std::int64_t taken = blockIdx.x; taken < items - tiles; taken += gridDim.x) {
            // (groups first, segments with tiles: the checks' word read before the block's last
            // item, its round trip behind the item's loads; long_seen_after_checks)
            // (kEarly: the ops where run 209 measured it; uint32's kernels spilled 12-16 bytes for
            // the register it holds and read 1-5% slower)
            if (kEarly && g.off && tiles > 0 && threadIdx.x == 0 && taken + gridDim.x >= items - tiles)
              early = *static_cast<const volatile unsigned*>(f.checked);
            group_item(tiles + taken, taken);
          }
      }
    };
    if constexpr (kGroupsFirst) {
      groups_phase();
      if (late_check && g.off) check_offsets(true);
      tiles_phase();
    } else {
      tiles_phase();
      groups_phase();
    }
    if (f.check_end) {  // (the host sets it only for segments, whose every block counted its check)
      Marks::at(14);
      if (f.check_end == 1 && threadIdx.x == 0 && f.host_status) check_end_status(f.checked, f.status, f.host_status, early);
      return;
    }
  }
  Marks::at(14);
  block_done(f);
}

/// The rows kernel (rows_body), 3 blocks a SM for accumulators of 32 bytes or more (the
/// certified pass's), else 4.
template <class Op, int G, bool LAZY = false>
__global__ void __launch_bounds__(kBlock, sizeof(typename Op::acc) >= 32 ? 3 : 4) rows_kernel(geo g, Op op, typename Op::acc* partials, unsigned* tickets,
                                                      std::int64_t tile, std::int64_t split, std::int64_t tiles,
                                                      std::int64_t items, int order, int probe, finish f) {
  rows_body<Op, G, LAZY>(g, op, partials, tickets, tile, split, tiles, items, order, probe, f);
}

/// The vector type of a column step's load: V elements of T in Bytes (16, 8, 4 or 2).
template <std::size_t Bytes> struct col_vec;
template <> struct col_vec<16> { using type = uint4; };
template <> struct col_vec<8> { using type = uint2; };
template <> struct col_vec<4> { using type = unsigned; };
template <> struct col_vec<2> { using type = unsigned short; };
template <> struct col_vec<1> { using type = unsigned char; };  // (V = 1: the path is not taken)
template <std::size_t Bytes> using col_vec_t = typename col_vec<Bytes>::type;

/// The packed byte min / max along columns (cols_body kPackedExtremes, cols_bytes_wide): a
/// byte_perm selector taking the key's byte 0 (even) or 1 (odd) with the second word's byte b
/// below it as one 16-bit key, and the key's byte 2 or 3 with byte b again as the other.
constexpr unsigned key_row_sel(int b, int odd_half) {
  return static_cast<unsigned>((4 + b) | (odd_half << 4) | ((4 + b) << 8) | ((2 + odd_half) << 12));
}
/// kU rows loaded together: byte b of t[q] holds kU - 1 - (4q + b), the place that goes below
/// row 4q + b's key (a larger key wins, so of equal keys the first row).
template <int kU> struct key_row_bytes {
  unsigned t[kU / 4];
  static constexpr key_row_bytes make() {
    key_row_bytes r{};
    for (int q = 0; q < kU / 4; ++q)
      for (int b = 0; b < 4; ++b) r.t[q] |= static_cast<unsigned>(kU - 1 - (4 * q + b)) << (8 * b);
    return r;
  }
};

/// Column mode, V adjacent outputs per lane (V > 1: one vector of V elements per row, 16 bytes
/// but for launch_v3's FEW ops; needs outer == 1, inner > 0 a multiple of V, a base aligned to
/// the vector). Block (bx, by): outputs
/// [32 V bx, 32 V (bx + 1)), rows [by chunk, (by + 1) chunk).
/// One row's pair of half columns (the low and high 16 bits of q) into a lane's run state
/// (cols_body's kPackedHalfExtremes, cols_halves_wide): the halves that beat `best` strictly
/// (Op::column_pair_better; so the first of equal values stays, -0 and +0 tie, and a NaN never
/// does) replace it, with `row` (the run row, in both halves) in `at`; without SKIP the NaNs
/// seen are kept in `nans` (Op::column_pair_nans).
template <class Op>
__device__ __forceinline__ void half_pair_take(unsigned q, unsigned& best, unsigned& at, unsigned& nans, unsigned row) {
  const unsigned gt = Op::column_pair_better(q, best);
  best = (q & gt) | (best & ~gt);
  at = (row & gt) | (at & ~gt);
  if constexpr (Op::column_finds_nans) nans = Op::column_pair_nans(nans, q);
}

/// A lane's run of `held` rows (k_run, k_run + kColWarps, ...) of one half column into its key
/// (Op::column_half_key, the max; 0 no element): the column's half (bits sh..sh + 15) of the
/// run state's best, at and nans words. The run is read again element by element (pc: the
/// column's first element, stride: elements a row) when it holds the column's first NaN, or
/// when no element beat the worst value before the key has one.
template <class Op>
__device__ __forceinline__ void half_run_key(unsigned long long& key, unsigned best, unsigned at, unsigned nans, int sh,
                                             std::int64_t k_run, int held, const typename Op::elem* pc, std::int64_t stride) {
  const unsigned b = (best >> sh) & 0xffffu;
  const bool worst = b == (Op::column_worst_pair() & 0xffffu);
  bool again = worst && key == 0;  // (no element better than the worst value yet)
  if constexpr (Op::column_finds_nans) again = again || (Op::column_half_nan(nans >> sh) && key >> 48 != 0xffffu);  // (its first NaN)
  if (again) {
#pragma unroll 1
    for (int u = 0; u < held; ++u) {
      const std::int64_t kk = k_run + static_cast<std::int64_t>(u) * kColWarps;
      key = max(key, Op::column_half_key(__ldg(pc + kk * stride), kk));
    }
  } else if (!worst) {
    key = max(key, Op::column_half_key(b, k_run + static_cast<std::int64_t>((at >> sh) & 0xffffu) * kColWarps));
  }
}

template <class Op, int V, bool RUN = false>
__device__ __forceinline__ void cols_body(geo g, Op op, std::int64_t chunk, typename Op::acc* partials,
                                          unsigned* tickets, finish f) {
  using A = typename Op::acc;
  using T = typename Op::elem;
  // the warps' accumulators, word by word: (words of A, V, warps, lanes), so that a warp's
  // lanes touch consecutive words (as (warps, lanes, V) states, 32-byte states at a 128-byte lane stride
  // took 8 times the shared-memory wavefronts: ncu, run 79)
  constexpr int kWords = static_cast<int>(sizeof(A) / 4);
  static_assert(sizeof(A) % 4 == 0);
  __shared__ alignas(16) unsigned sh_words[kWords * V * kColWarps * 32];
  auto sh_put = [&](int w_, int lane_, int e_, const A& v) {
    unsigned q[kWords];
    words_of(v, q);
#pragma unroll
    for (int i = 0; i < kWords; ++i) sh_words[((i * V + e_) * kColWarps + w_) * 32 + lane_] = q[i];
  };
  auto sh_get = [&](int w_, int lane_, int e_) {
    unsigned q[kWords];
#pragma unroll
    for (int i = 0; i < kWords; ++i) q[i] = sh_words[((i * V + e_) * kColWarps + w_) * 32 + lane_];
    return from_words<A>(q);
  };
  allow_dependents();
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::int64_t c0 = (static_cast<std::int64_t>(blockIdx.x) * 32 + lane) * V;  // first output of this lane
  const int nc = c0 >= g.outputs ? 0 : (g.outputs - c0 < V ? static_cast<int>(g.outputs - c0) : V);
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t k1 = k0 + chunk < g.len ? k0 + chunk : g.len;
  const T* x = static_cast<const T*>(g.x);
  A a[V];
#pragma unroll
  for (int e = 0; e < V; ++e) a[e] = Op::identity();
  constexpr bool kPackedBytes = V == 4 && sizeof(T) == 1 && requires(unsigned q) { Op::column_bytes(q); };
  constexpr bool kPackedHalves = V == 4 && sizeof(T) == 2 && requires { Op::column_halves; };
  constexpr bool kPackedExtremes = V == 4 && sizeof(T) == 1 && requires(unsigned q) { Op::column_extreme_keys(q); };
  constexpr bool kPackedShorts = V == 4 && sizeof(T) == 2 && requires(unsigned q) { Op::column_short_lo(q); };
  constexpr bool kBf16Runs = V == 2 && sizeof(T) == 2 && v2::takes_certified_terms<Op>();
  constexpr bool kPackedShortExtremes = V == 4 && sizeof(T) == 2 && [] {
    if constexpr (requires { Op::column_short_extremes; }) return Op::column_short_extremes;
    else return false;
  }();
  constexpr bool kPackedHalfExtremes = V == 4 && sizeof(T) == 2 && [] {
    if constexpr (requires { Op::column_half_extremes; }) return Op::column_half_extremes;
    else return false;
  }();
  [[maybe_unused]] unsigned long long hkey[V] = {};  // (kPackedHalfExtremes: each output's key, Op::column_half_key; 0 no element)
  if (nc == V && V > 1) {
    // (one vector of V elements a row: 16 bytes, or 8 / 4 for the narrow types' states that
    // would not fit 16 bytes' worth in shared memory, launch_v3's FEW)
    using vec_t = col_vec_t<V * sizeof(T)>;
    const T* p = x + c0;  // outer == 1
    std::int64_t k = k0 + w;
    // The 16-bit columns' rows (kPackedShorts, kPackedHalves): a row's 8 bytes a lane, 8 rows a
    // step in flight (kColUnroll's 4 left 24 KB in flight a SM at 3 blocks); add(q) on each
    // row's pair of words in order, flush(rows) after every RUN_ROWS rows and at the end.
    auto rows_of_pairs = [&]<int RUN_ROWS>(auto&& add, auto&& flush) {
      constexpr int kU = 8;
      static_assert(RUN_ROWS % kU == 0);
      int held = 0;  // rows since the last flush
      for (; k + (kU - 1) * kColWarps < k1; k += kU * kColWarps) {
        uint2 r[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) r[u] = __ldg(reinterpret_cast<const uint2*>(p + (k + u * kColWarps) * g.inner));
#pragma unroll
        for (int u = 0; u < kU; ++u) add(r[u]);
        held += kU;
        if (held == RUN_ROWS) {
          flush(held);
          held = 0;
        }
      }
      for (; k < k1; k += kColWarps) {  // (fewer than kU rows: held stays under RUN_ROWS)
        add(__ldg(reinterpret_cast<const uint2*>(p + k * g.inner)));
        ++held;
      }
      flush(held);
    };
    if constexpr (RUN && v2::takes_vectors<Op>()) {
      // (the certified pass over float32, nineteenth session: each output's rows summed one at
      // a time into a running float64 (ops::certified::running), which enters the state as
      // one exact term every kRunRows rows when their exponents allow; when they do not, that
      // output's rows since the last update are read again and added one at a time. 4
      // instructions an element and one state update per 16 rows, against add4's ~10 and one
      // per 4 rows. With the next rows loaded ahead (below) it takes 118 registers: launched
      // at 2 blocks a SM (cols_kernel_heavy MIN_BLOCKS). Run 69, the same running sums with the
      // states in shared memory between updates, at 3 and 4 blocks a SM (80 and 64 registers):
      // 18-50% slower; run 67, without the rows ahead at 3 blocks a SM: 4-10% slower than add4)
      constexpr int kRunIters = kRunRows / kColUnroll;  // loop steps between state updates
      constexpr std::int64_t step = kColUnroll * kColWarps;  // rows a loop step advances
      ops::certified::running run[V];
      int held = 0;  // loop steps in run since the last update
      auto update = [&](const std::int64_t k_end) {  // the steps [k_end - held step, k_end)
#pragma unroll
        for (int e = 0; e < V; ++e) {
          if (ops::certified::run_exact<kRunRows>(run[e])) {
            Op::accumulate_term(a[e], run[e].s);
          } else {
#pragma unroll 1
            for (std::int64_t kk = k_end - held * step; kk < k_end; kk += step)
#pragma unroll 1
              for (int u = 0; u < kColUnroll; ++u)
                Op::accumulate(a[e], __ldg(p + (kk + u * kColWarps) * g.inner + e), kk + u * kColWarps);
          }
          run[e] = ops::certified::running{};
        }
        held = 0;
      };
      auto fits = [&](const std::int64_t kk) { return kk + (kColUnroll - 1) * kColWarps < k1; };
      auto load = [&](uint4 (&r)[kColUnroll], const std::int64_t kk) {
#pragma unroll
        for (int u = 0; u < kColUnroll; ++u) r[u] = __ldg(reinterpret_cast<const uint4*>(p + (kk + u * kColWarps) * g.inner));
      };
      auto take = [&](const uint4 (&r)[kColUnroll]) {
#pragma unroll
        for (int u = 0; u < kColUnroll; ++u) {
          T v[V];
          __builtin_memcpy(v, &r[u], 16);
#pragma unroll
          for (int e = 0; e < V; ++e) ops::certified::run_add(run[e], v[e]);
        }
      };
      // the next step's rows loaded before this step's are added: two steps in flight (run 68:
      // without it, the running sums read 2780 GB/s on 8192 x 8192, 3119 with it)
      uint4 r[kColUnroll];
      if (fits(k)) load(r, k);
      for (; fits(k); k += step) {
        uint4 nx[kColUnroll];
        const bool more = fits(k + step);
        if (more) load(nx, k + step);
        take(r);
        if (++held == kRunIters) update(k + step);
        if (more) __builtin_memcpy(r, nx, sizeof r);
      }
      if (held > 0) update(k);
    } else if constexpr (kPackedExtremes) {
      // (min / max of bytes and their first rows, V = 4: a row's word holds this lane's 4
      // outputs' bytes, as keys (Op::column_extreme_keys) where a larger key is better. Each
      // byte becomes a 16-bit key, the byte above and 255 - its run row below (a run: 256 of
      // this lane's rows), bytes 0 and 2 in `even`, 1 and 3 in `odd`, so that max.u16x2 keeps
      // the best key and, of equal keys, the first row: one byte permutation for each half and
      // a three-way max.u16x2 for two rows' halves, ~4 instructions a row for 4 outputs.
      // Within a block of kU = kPackedExtremeRows rows (32, loaded together) the low byte
      // holds kU - 1 - u (the permutation's second word, kRowBytes, a byte a row), and the
      // block's best enters the run's with the upper bits of 255 - its first row in the run
      // above that (an OR). Every 256 rows each output's best enters its state with its
      // row's index. The forty-fourth session's form (one unsigned byte comparison a row and
      // two selections, ~10 instructions) read at 0.62-0.66 of read (run 162, stream-ordered);
      // element by element, 0.27 (run 133). The same extreme and first index, so the same bits.)
      // Since the fifty-second session each run's best enters a 32-bit lane state for each
      // output (key << 24 | (0xffff - run) << 8 | (255 - row in the run): a larger state is a
      // better key, or of equal keys an earlier row), as cols_bytes_wide's and the bare probe's
      // (bench/experiments/byte_cols_probe.cu), and the op's states (a value and a 64-bit
      // index each) take the lane's 4 bests once, after the chunk: a 32-bit max a run for each
      // output where its state update compared values and 64-bit indices. The registers
      // stayed at 80 (ptxas): the op's 24-byte states in the block's end set them, until that
      // end met 64-bit keys instead (below). A chunk is at most kWideChunk = 2^24 rows
      // (launch_v3), so a lane's runs fit 16 bits.
      unsigned even = 0, odd = 0;  // (0: below or equal to every key, and a run has a row)
      unsigned best[4] = {};       // (0: no row; every row's state is above 0)
      unsigned run = 0;            // (this lane's runs of 256 rows done)
      int held = 0;                // rows in the run
      auto flush = [&]() {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const unsigned key = ((e & 1) ? odd : even) >> (16 * (e >> 1)) & 0xffffu;
          best[e] = max(best[e], (key >> 8) << 24 | (0xffffu - run) << 8 | (key & 0xffu));
        }
        even = odd = 0;
        ++run;
        held = 0;
      };
      constexpr int kU = kPackedExtremeRows;
      static_assert(kU >= 4 && kU <= 256 && 256 % kU == 0);
      constexpr auto kRowBytes = key_row_bytes<kU>::make();
      for (; k + (kU - 1) * kColWarps < k1; k += kU * kColWarps) {
        unsigned r[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) r[u] = __ldg(reinterpret_cast<const unsigned*>(p + (k + u * kColWarps) * g.inner));
        unsigned be = 0, bo = 0;  // (this block's best keys, 15 - u below)
#pragma unroll
        for (int u = 0; u < kU; ++u) {
          const unsigned key = Op::column_extreme_keys(r[u]);
          be = __vmaxu2(be, __byte_perm(key, kRowBytes.t[u / 4], key_row_sel(u % 4, 0)));
          bo = __vmaxu2(bo, __byte_perm(key, kRowBytes.t[u / 4], key_row_sel(u % 4, 1)));
        }
        const unsigned block = ((255u - static_cast<unsigned>(held)) & (256u - kU)) * 0x00010001u;  // (255 - held's upper bits above kU - 1 - u)
        even = __vmaxu2(even, be | block);
        odd = __vmaxu2(odd, bo | block);
        held += kU;
        if (held == 256) flush();
      }
      for (; k < k1; k += kColWarps) {  // (fewer than kU rows: held stays under 256)
        const unsigned key = Op::column_extreme_keys(__ldg(reinterpret_cast<const unsigned*>(p + k * g.inner)));
        const unsigned low = 255u - static_cast<unsigned>(held);
        even = __vmaxu2(even, __byte_perm(key, low, key_row_sel(0, 0)));
        odd = __vmaxu2(odd, __byte_perm(key, low, key_row_sel(0, 1)));
        ++held;
      }
      if (held > 0) flush();
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        if (best[e] == 0) continue;  // (no rows in this lane)
        const std::int64_t in_lane = static_cast<std::int64_t>(0xffffu - ((best[e] >> 8) & 0xffffu)) * 256 + (255 - (best[e] & 0xffu));
        Op::accumulate_value(a[e], Op::column_extreme_value(best[e] >> 24), k0 + w + in_lane * kColWarps);
      }
    } else if constexpr (kPackedBytes) {
      // (integer sums and means of bytes, V = 4: a row's word holds this lane's 4 outputs'
      // bytes. Their values 0..255 (Op::column_bytes: int8 biased by 128, bool as 0 / 1) are
      // added two to a word in 16-bit halves, bytes 0 and 2 in lo, 1 and 3 in hi, and enter
      // the 128-bit states every 256 rows (255 x 256 < 2^16): 4 instructions a row where each
      // byte's 128-bit addition took 4 or more. Exact, so the same values.)
      // Since the fifty-second session the halves enter 32-bit lane sums every 256 rows,
      // and the states take them (less the bias) once, after the chunk, as cols_bytes_wide
      // and the probe do: a chunk is at most kWideChunk = 2^24 rows (launch_v3), a lane's
      // 2^21, so 255 x 2^21 < 2^32. (With the op's 128-bit states met in the block's end
      // this spilled at the kernel's 64 registers; the end now meets 64-bit words.)
      unsigned lo = 0, hi = 0, s4[4] = {0u, 0u, 0u, 0u};
      int held = 0;  // rows in lo / hi
      auto flush = [&]() {
        s4[0] += lo & 0xffffu;
        s4[1] += hi & 0xffffu;
        s4[2] += lo >> 16;
        s4[3] += hi >> 16;
        lo = hi = 0;
        held = 0;
      };
      auto add = [&](const unsigned word) {
        const unsigned q = Op::column_bytes(word);
        lo += q & 0x00ff00ffu;
        hi += (q >> 8) & 0x00ff00ffu;
      };
      // (kU rows a step: a row is only 4 bytes a lane, and kColUnroll's 4 left 16 KiB in
      // flight a SM at 4 blocks, where ~36 KiB keep the read bandwidth: the byte columns read
      // at 0.61-0.66 of the read kernel asynchronously in run 128. 32 rows since the
      // forty-eighth session, in the same 64 registers: run 178, +1-2%, within the spread)
      constexpr int kU = kPackedByteRows;
      static_assert(256 % kU == 0);
      for (; k + (kU - 1) * kColWarps < k1; k += kU * kColWarps) {
        unsigned r[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) r[u] = __ldg(reinterpret_cast<const unsigned*>(p + (k + u * kColWarps) * g.inner));
#pragma unroll
        for (int u = 0; u < kU; ++u) add(r[u]);
        held += kU;
        if (held == 256) flush();
      }
      for (; k < k1; k += kColWarps) {  // (fewer than kU rows: held stays under 256)
        add(__ldg(reinterpret_cast<const unsigned*>(p + k * g.inner)));
        ++held;
      }
      flush();
      const std::int64_t rows = k1 > k0 + w ? (k1 - k0 - w + kColWarps - 1) / kColWarps : 0;  // (this lane's)
      const std::int64_t bias = static_cast<std::int64_t>(Op::column_byte_bias()) * rows;
#pragma unroll
      for (int e = 0; e < 4; ++e) a[e] += static_cast<std::int64_t>(s4[e]) - bias;
    } else if constexpr (kBf16Runs) {
      // (certified sums and means of bfloat16, V = 2, forty-third session: a row's word holds
      // this lane's 2 outputs' elements; each output's rows are summed in a float64 run (the
      // element as v x 2^-896, Op::reader::tiny_lo / hi: 2 integer instructions and one
      // addition a row) beside the word's largest magnitudes and smallest units (max.u16x2 /
      // min.u16x2 of both outputs at once), and the run enters the state as one exact term
      // (Op::accumulate_term) every kBf16RunRows rows when its exponents allow
      // (Op::reader::exact_for: at most 42 binades apart in runs of 8); when they do not (or
      // an infinity or a NaN is among them), that output's rows of the run are read again and
      // added one at a time. Element by element each row took a certified addition, ~7
      // float64 operations. Runs of 8, not 16: a warp takes the slow way when any of its 32
      // lanes does, and ncu (run 154, H100) found the bench's data (47 binades) failing 3% of
      // one lane's runs of 16, so 64% of the warps' runs.)
      using In = typename Op::reader;
      constexpr int kR = kBf16RunRows;     // (rows a run)
      constexpr int kU = 2 * kBf16RunRows;  // (rows in flight a lane: two runs)
      constexpr int kL = kR == 8 ? 3 : kR == 16 ? 4 : 5;
      static_assert((1 << kL) == kR);
      // the run of `rows` (<= kR) rows from k_run, their words words(u)
      auto take = [&](const std::int64_t k_run, const int rows, auto&& words) {
        double run0 = -0.0, run1 = -0.0;  // (-0.0: a run of -0.0 elements stays -0.0)
        unsigned mx = 0, mn = 0xffffffffu;
#pragma unroll
        for (int u = 0; u < kR; ++u) {
          if (u < rows) {
            const unsigned q = words(u);
            run0 += In::tiny_lo(q);
            run1 += In::tiny_hi(q);
            mx = __vmaxu2(mx, In::mags(q));
            mn = __vminu2(mn, In::units(q));
          }
        }
        const double run[2] = {run0 * In::kUnscale, run1 * In::kUnscale};
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (In::exact_for((mx >> (16 * e)) & 0xffffu, (mn >> (16 * e)) & 0xffffu, kL)) {
            Op::accumulate_term(a[e], run[e]);
          } else {
#pragma unroll 1
            for (int u = 0; u < rows; ++u) {
              const std::int64_t row = k_run + static_cast<std::int64_t>(u) * kColWarps;
              Op::accumulate(a[e], __ldg(p + row * g.inner + e), row);
            }
          }
        }
      };
      for (; k + (kU - 1) * kColWarps < k1; k += kU * kColWarps) {
        unsigned r[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) r[u] = __ldg(reinterpret_cast<const unsigned*>(p + (k + u * kColWarps) * g.inner));
        take(k, kR, [&](int u) { return r[u]; });
        take(k + kR * kColWarps, kR, [&](int u) { return r[kR + u]; });
      }
      for (; k < k1; k += kR * kColWarps) {  // (fewer than kU rows left: runs of up to kR)
        const std::int64_t left = (k1 - k + kColWarps - 1) / kColWarps;  // (this lane's rows left)
        const int rows = left < kR ? static_cast<int>(left) : kR;
        take(k, rows, [&](int u) { return __ldg(reinterpret_cast<const unsigned*>(p + (k + u * kColWarps) * g.inner)); });
      }
    } else if constexpr (kPackedShortExtremes) {
      // (min / max of int16 / uint16 and their first rows, V = 4, forty-third session: a row's 8
      // bytes hold this lane's 4 outputs' elements. Each element becomes one 32-bit key, its
      // value in the high half and its run row in the low half (one byte permutation), and a
      // run's best key is their 32-bit max (min): the best value first, then, among equal
      // values, the lowest row (for max the row is complemented, so the larger key is the
      // earlier row). 2 instructions an element where element by element each took a
      // comparison of value and 64-bit index and two selections (int16 argmax columns at 0.49
      // of read, run 151). Every 4096 rows each output's best enters its state with its row's
      // index: the same extreme and first index, so the same bits.)
      constexpr bool kMax = Op::extreme_is_max;
      using C = std::conditional_t<std::is_signed_v<T>, int, unsigned>;  // (the keys' order: the element type's)
      constexpr C kWorst = kMax ? std::numeric_limits<C>::min() : std::numeric_limits<C>::max();
      C best[4] = {kWorst, kWorst, kWorst, kWorst};
      unsigned row = kMax ? 0xffffu : 0u;  // (this row's run row in the low half; complemented for max)
      std::int64_t k_run = k;              // the run's first row
      auto pick = [](C b, unsigned key) { return kMax ? max(b, static_cast<C>(key)) : min(b, static_cast<C>(key)); };
      rows_of_pairs.template operator()<4096>(
          [&](const uint2 q) {
            best[0] = pick(best[0], __byte_perm(q.x, row, 0x1054));  // (q.x's low half above row's)
            best[1] = pick(best[1], __byte_perm(q.x, row, 0x3254));  // (q.x's high half above row's)
            best[2] = pick(best[2], __byte_perm(q.y, row, 0x1054));
            best[3] = pick(best[3], __byte_perm(q.y, row, 0x3254));
            row += kMax ? 0xffffffffu : 1u;
          },
          [&](int held) {
            if (held == 0) return;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const unsigned low = static_cast<unsigned>(best[e]) & 0xffffu;
              const std::int64_t at = kMax ? 0xffff - low : low;
              const std::int32_t v = std::is_signed_v<T> ? (static_cast<int>(best[e]) >> 16) : static_cast<std::int32_t>(static_cast<unsigned>(best[e]) >> 16);
              Op::accumulate_value(a[e], v, k_run + at * kColWarps);
              best[e] = kWorst;
            }
            k_run += static_cast<std::int64_t>(held) * kColWarps;
            row = kMax ? 0xffffu : 0u;
          });
    } else if constexpr (kPackedHalfExtremes) {
      // (min / max of float16 / bfloat16 and their first rows, V = 4, forty-fifth session: a
      // row's 8 bytes hold this lane's 4 outputs' elements as two pairs. A run's best pair and
      // the run row that first held each half (`at`, 16-bit halves) follow the byte columns'
      // rule: the halves a row beats strictly (Op::column_pair_better, one half-precision
      // comparison a pair) replace best and at, so the first of equal values stays with its
      // own bits (-0 and +0 tie). Without SKIP a max.NaN a pair keeps whether a NaN was met.
      // Every 4096 rows each output's best enters its key (hkey, Op::column_half_key, the
      // max; fifty-third session: the 24-byte states took the kernel to 114 registers, 2
      // blocks a SM); a run with the output's first NaN, or with no element better than the
      // worst value before the key has one, is read again element by element (a key each,
      // the max): once each an output and lane, but every run of an output of NaNs alone
      // under the omit policy (read twice). 4 instructions a pair (3 with SKIP) where
      // element by element each element took a conversion, a NaN test, a comparison of value
      // and 64-bit index and three selections (float16 argmax columns at 0.51 of read, run
      // 158). The same extreme, first index and first NaN, so the same bits.)
      constexpr unsigned kWorst = Op::column_worst_pair();
      unsigned best[2] = {kWorst, kWorst}, at[2] = {0u, 0u}, nans[2] = {0u, 0u};
      unsigned row = 0u;      // (this row's run row, in both halves)
      std::int64_t k_run = k;  // the run's first row
      rows_of_pairs.template operator()<4096>(
          [&](const uint2 q) {
            const unsigned w2[2] = {q.x, q.y};
#pragma unroll
            for (int i = 0; i < 2; ++i) half_pair_take<Op>(w2[i], best[i], at[i], nans[i], row);
            row += 0x00010001u;
          },
          [&](int held) {
            if (held == 0) return;
#pragma unroll
            for (int e = 0; e < 4; ++e) half_run_key<Op>(hkey[e], best[e / 2], at[e / 2], nans[e / 2], 16 * (e % 2), k_run, held, p + e, g.inner);
            best[0] = best[1] = kWorst;
            at[0] = at[1] = nans[0] = nans[1] = 0u;
            row = 0u;
            k_run += static_cast<std::int64_t>(held) * kColWarps;
          });
    } else if constexpr (kPackedShorts) {
      // (integer sums and means of int16 / uint16, V = 4, forty-second session: a row's 8 bytes
      // hold this lane's 4 outputs' elements, each added to an int32 run sum (2 instructions
      // an element: its half of the word, sign- or zero-extended, Op::column_short_lo / hi,
      // and the addition), which enters the 128-bit state every 8192 rows (|sum| <= 8192 x
      // 2^16 < 2^31), where each element's 128-bit addition took 4 or more. Exact, so the same
      // values.)
      std::int32_t run[4] = {0, 0, 0, 0};
      rows_of_pairs.template operator()<8192>(
          [&](const uint2 q) {
            run[0] += Op::column_short_lo(q.x);
            run[1] += Op::column_short_hi(q.x);
            run[2] += Op::column_short_lo(q.y);
            run[3] += Op::column_short_hi(q.y);
          },
          [&](int) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              a[e] += run[e];
              run[e] = 0;
            }
          });
    } else if constexpr (kPackedHalves) {
      // (exact float16 sums and means in fixed point, V = 4, src/cuda/shapes_narrow.cu's
      // f16_fixed: a row's 8 bytes hold this lane's 4 outputs' elements; each output's rows are
      // summed exactly in a float64 run (the element as v x 2^-1008: 2 integer instructions
      // and one addition a row), which enters the 128-bit state every Op::core::kColumnRun
      // rows, with whether an infinity or a NaN was among them (bit 15 / 31 of sp).)
      using core = typename Op::core;
      double run[4] = {-0.0, -0.0, -0.0, -0.0};  // (-0.0: a run of -0.0 elements stays -0.0)
      unsigned sp01 = 0, sp23 = 0;
      rows_of_pairs.template operator()<core::kColumnRun>(
          [&](const uint2 q) {
            run[0] += core::tiny_lo(q.x);
            run[1] += core::tiny_hi(q.x);
            run[2] += core::tiny_lo(q.y);
            run[3] += core::tiny_hi(q.y);
            sp01 |= core::specials(q.x);
            sp23 |= core::specials(q.y);
          },
          [&](int held) {
            core::flush(a[0], run[0], held, (sp01 & 0x8000u) != 0);
            core::flush(a[1], run[1], held, (sp01 & 0x80000000u) != 0);
            core::flush(a[2], run[2], held, (sp23 & 0x8000u) != 0);
            core::flush(a[3], run[3], held, (sp23 & 0x80000000u) != 0);
#pragma unroll
            for (int e = 0; e < 4; ++e) run[e] = -0.0;
            sp01 = sp23 = 0;
          });
    } else
    for (; k + (kColUnroll - 1) * kColWarps < k1; k += kColUnroll * kColWarps) {
      vec_t r[kColUnroll];
#pragma unroll
      for (int u = 0; u < kColUnroll; ++u) r[u] = __ldg(reinterpret_cast<const vec_t*>(p + (k + u * kColWarps) * g.inner));
      if constexpr (v2::takes_vectors<Op>() && kColUnroll == 4) {
        // (the certified pass over float32: each output's four rows as one exact term when
        // their exponents allow, ops::certified::add4)
        T v[kColUnroll][V];
        __builtin_memcpy(v, r, sizeof v);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const T c[4] = {v[0][e], v[1][e], v[2][e], v[3][e]};
          Op::accumulate_vector(a[e], c);
        }
      } else {
#pragma unroll
        for (int u = 0; u < kColUnroll; ++u) {
          T v[V];
          __builtin_memcpy(v, &r[u], sizeof(vec_t));
#pragma unroll
          for (int e = 0; e < V; ++e) Op::accumulate(a[e], v[e], k + u * kColWarps);
        }
      }
    }
    for (; k < k1; k += kColWarps) {
      vec_t r = __ldg(reinterpret_cast<const vec_t*>(p + k * g.inner));
      T v[V];
      __builtin_memcpy(v, &r, sizeof(vec_t));
#pragma unroll
      for (int e = 0; e < V; ++e) Op::accumulate(a[e], v[e], k);
    }
  } else if (nc > 0) {
#pragma unroll
    for (int e = 0; e < V; ++e) {  // (unrolled: a[] stays in registers)
      if (e >= nc) break;
      const T* p = x + (c0 + e) * g.outer;
      std::int64_t k = k0 + w;
      for (; k + (kColUnroll - 1) * kColWarps < k1; k += kColUnroll * kColWarps) {
        T v[kColUnroll];
#pragma unroll
        for (int u = 0; u < kColUnroll; ++u) v[u] = __ldg(p + (k + u * kColWarps) * g.inner);
        if constexpr (kPackedHalfExtremes) {
#pragma unroll
          for (int u = 0; u < kColUnroll; ++u) hkey[e] = max(hkey[e], Op::column_half_key(v[u], k + u * kColWarps));
        } else if constexpr (v2::takes_vectors<Op>() && kColUnroll == 4) {
          Op::accumulate_vector(a[e], v);  // (the certified pass: four rows as one exact term)
        } else {
#pragma unroll
          for (int u = 0; u < kColUnroll; ++u) Op::accumulate(a[e], v[u], k + u * kColWarps);
        }
      }
      for (; k < k1; k += kColWarps) {
        if constexpr (kPackedHalfExtremes) hkey[e] = max(hkey[e], Op::column_half_key(__ldg(p + k * g.inner), k));
        else Op::accumulate(a[e], __ldg(p + k * g.inner), k);
      }
    }
  }
  if constexpr (kPackedExtremes || kPackedBytes || kPackedHalfExtremes || kPackedHalves) {
    // The byte columns' end (fifty-second session): each output's state becomes one 64-bit
    // word. Min / max: a key, key << 56 | 2^56 - 1 - index (0: no element), whose max is the
    // best value and, of equal values, the first index, as cols_bytes_wide's and the probe's
    // ends. Sums and means: the signed sum (a lane's chunk is at most kWideChunk rows of
    // bytes; a column's whole sum is below 255 x 2^40 in magnitude: 2^40 rows of at least 4
    // bytes pass any device's memory). The block's 8 warps meet in shared memory (the
    // max or the sum of 8 words a column), the row chunks through their partials' memory as
    // words (chunks, outputs), met by the tile's last chunk block. Max and integer sums are
    // exact and commutative, so the same bits as the states' merges in warp and chunk order.
    // The op's states met here (min / max: 24 bytes; sums: 16, kCombineLoads rows of them
    // in flight) took the min / max kernel to 80 registers (ptxas), 3 blocks a SM, where the
    // probe's lanes take 63; with the words, 40 (run 185, H100, 8192 x 8192, stream-ordered,
    // of read: int8 max with index 0.73 -> 0.85, sums 0.80 -> 0.86; uint8 the same).
    // The half columns' min / max (kPackedHalfExtremes, fifty-third session) meet their
    // lanes' keys the same way (Op::column_half_key: value, first row, a zero's sign).
    // The float16 fixed-point sums and means (kPackedHalves, fifty-third session) meet their
    // 128-bit states themselves the same way (Op::combine: an integer addition, exact and
    // commutative), where the generic end below held kCombineLoads rows of 4 of them in
    // flight: 64 registers and 24 bytes of spills (ptxas).
    constexpr bool KEYS = kPackedExtremes || kPackedHalfExtremes;
    constexpr bool WHOLE = kPackedHalves;
    using word_t = std::conditional_t<KEYS, unsigned long long, std::conditional_t<WHOLE, A, long long>>;
    constexpr unsigned long long kRowMask = (1ull << 56) - 1;
    constexpr int kTile = 32 * V;  // (the block's outputs)
    static_assert(sizeof(sh_words) >= sizeof(word_t) * kColWarps * kTile);
    auto& sh = *reinterpret_cast<word_t(*)[kColWarps][kTile]>(sh_words);  // (warps, tile outputs)
    auto meet = [](word_t x, word_t y) {
      if constexpr (KEYS) return max(x, y);
      else if constexpr (WHOLE) return Op::combine(x, y);
      else return x + y;
    };
    auto ld = [](const word_t* q) {  // (a chunk's word, from L2)
      if constexpr (WHOLE) return load_cg(q);
      else return __ldcg(q);
    };
    auto none = [] {  // (the meet's identity: no key, a zero sum)
      if constexpr (WHOLE) return Op::identity();
      else return word_t{0};
    };
#pragma unroll
    for (int e = 0; e < V; ++e) {
      word_t v = none();
      if constexpr (WHOLE) {
        if (e < nc) v = a[e];
      } else if constexpr (kPackedHalfExtremes) {
        v = hkey[e];  // (0 past nc)
      } else if constexpr (KEYS) {
        if (e < nc && a[e].index != ops::kNoIndex)
          v = static_cast<unsigned long long>(Op::column_extreme_key(a[e].value)) << 56 |
              (kRowMask - static_cast<unsigned long long>(a[e].index));
      } else {
        if (e < nc) v = static_cast<long long>(a[e]);
      }
      sh[w][lane * V + e] = v;
    }
    auto write = [&](std::int64_t col, word_t v) {
      A s = Op::identity();
      if constexpr (WHOLE) {
        s = v;
      } else if constexpr (kPackedHalfExtremes) {
        s = Op::column_half_state(v);
      } else if constexpr (KEYS) {
        if (v != 0)
          Op::accumulate_value(s, Op::column_extreme_value(static_cast<unsigned>(v >> 56)), static_cast<std::int64_t>(kRowMask - (v & kRowMask)));
      } else {
        s += static_cast<std::int64_t>(v);
      }
      op.write(col, s, g.len);
    };
    const std::int64_t t0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
    auto* words = reinterpret_cast<word_t*>(partials);  // (chunks, outputs): sizeof(A) >= 8 a slot
    static_assert(sizeof(A) >= sizeof(word_t) && alignof(A) >= alignof(word_t));
    __syncthreads();
    for (int c = threadIdx.x; c < kTile; c += kBlock) {
      const std::int64_t col = t0 + c;
      if (col >= g.outputs) break;
      word_t v = sh[0][c];
#pragma unroll
      for (int i = 1; i < kColWarps; ++i) v = meet(v, sh[i][c]);
      if (gridDim.y == 1) write(col, v);
      else words[static_cast<std::int64_t>(blockIdx.y) * g.outputs + col] = v;
    }
    if (gridDim.y > 1 && last_chunk(tickets, f)) {
      for (int c = threadIdx.x; c < kTile; c += kBlock) {
        const std::int64_t col = t0 + c;
        if (col >= g.outputs) break;
        word_t v = none();
        unsigned y = 0;
        for (; y + 7 < gridDim.y; y += 8) {
          word_t q[8];
#pragma unroll
          for (int i = 0; i < 8; ++i) q[i] = ld(words + static_cast<std::int64_t>(y + i) * g.outputs + col);
#pragma unroll
          for (int i = 0; i < 8; ++i) v = meet(v, q[i]);
        }
        for (; y < gridDim.y; ++y) v = meet(v, ld(words + static_cast<std::int64_t>(y) * g.outputs + col));
        write(col, v);
      }
    }
    block_done(f);
    return;
  }
  // Heavy accumulators (32 bytes or more: the certified pass's states, whose results are
  // correctly rounded, and min/max with indices, first index on ties: neither's bits depend on
  // the order of merges) are combined by every warp (SPREAD): warp w takes output e = w % V of
  // its lanes and merges warps [h V, h V + V), h = w / V, then warps 0..V-1 merge the 8 / V
  // parts: V + 8 / V - 2 dependent merges a thread, where warp 0 alone made 7 a chain for each
  // of its V outputs (run 84's per-block clocks: ~3.5 us of every certified block's end). The
  // others keep warp 0's warp-order combine (their bits follow the order).
  constexpr bool SPREAD = sizeof(A) >= 32 && kColWarps % V == 0;
  constexpr int kParts = SPREAD ? kColWarps / V : 1;  // (parts, V) = the 8 warps
  const int es = w % V, hs = w / V;  // SPREAD: this thread's output (lane, es) and part hs
  // SPREAD: the parts (kParts, lane, es) of sh combined in part order by warps 0..V-1 (hs == 0)
  auto spread_parts = [&](A s) {
    if constexpr (kParts > 1) {
      __syncthreads();  // every part's warps are read
      sh_put(hs, lane, es, s);
      __syncthreads();
      if (hs == 0)
        for (int i = 1; i < kParts; ++i) s = Op::combine(s, sh_get(i, lane, es));
    }
    return s;
  };
#pragma unroll
  for (int e = 0; e < V; ++e) sh_put(w, lane, e, a[e]);
  __syncthreads();
  if constexpr (SPREAD) {
    A s = sh_get(hs * V, lane, es);
    for (int i = 1; i < V; ++i) s = Op::combine(s, sh_get(hs * V + i, lane, es));
    s = spread_parts(s);
    if (hs == 0 && es < nc) {
      if (gridDim.y == 1) op.write(c0 + es, s, g.len);
      else partials[static_cast<std::int64_t>(blockIdx.y) * g.outputs + c0 + es] = s;
    }
  } else if (w == 0) {  // the 8 warps' accumulators, combined in warp order by warp 0
#pragma unroll
    for (int e = 0; e < V; ++e) {
      A s = sh_get(0, lane, e);
      for (int i = 1; i < kColWarps; ++i) s = Op::combine(s, sh_get(i, lane, e));
      a[e] = s;
    }
    if (gridDim.y == 1) {
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (e < nc) op.write(c0 + e, a[e], g.len);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (e < nc) partials[static_cast<std::int64_t>(blockIdx.y) * g.outputs + c0 + e] = a[e];
    }
  }
  if (gridDim.y > 1) {
    if (last_chunk(tickets, f)) {
      auto part = [&](unsigned y, int e) { return partials + static_cast<std::int64_t>(y) * g.outputs + c0 + e; };
      if constexpr (SPREAD) {
        // every chunk of this column tile is in: thread (w, lane) merges chunks hs, hs + kParts,
        // ... of its output (lane, es), kSpreadLoads partials in flight, then the parts are
        // merged in part order
        constexpr int CL = kSpreadLoads;
        A c = Op::identity();
        if (es < nc) {
          unsigned y = hs;
          for (; y + (CL - 1) * kParts < gridDim.y; y += CL * kParts) {
            A v[CL];
#pragma unroll
            for (int i = 0; i < CL; ++i) v[i] = load_cg(part(y + i * kParts, es));
#pragma unroll
            for (int i = 0; i < CL; ++i) c = Op::combine(c, v[i]);
          }
          for (; y < gridDim.y; y += kParts) c = Op::combine(c, load_cg(part(y, es)));
        }
        c = spread_parts(c);
        if (hs == 0 && es < nc) op.write(c0 + es, c, g.len);
      } else {  // warp w combines chunks w, w + 8, ...
        A c[V];
#pragma unroll
        for (int e = 0; e < V; ++e) c[e] = Op::identity();
        unsigned y = w;
        // (partials loaded together: kCombineLoads rows of V; one row for 32-byte accumulators,
        // whose V x kCombineLoads states would take 512 bytes of registers, and where V states
        // take more than 64 bytes: the narrow types' min / max (24 bytes, V = 4), whose 384
        // bytes set the whole kernel's registers, 128: 2 blocks a SM; forty-fifth session).
        // But not the byte and 16-bit integer column min / max (kPackedExtremes,
        // kPackedShortExtremes): with one row they took 80 registers and read 5-6% slower
        // (run 161 against run 158, H100, stream-ordered: int8 1657 -> 1550 GB/s, int16 2294
        // -> 2162), while uint32 gained 14% and the packed half columns are new: kept at one)
        // (Since the fifty-second and fifty-third sessions the byte columns and the half
        // columns' min / max and float16 sums meet in the word end above, not here.)
        // The byte min / max (kPackedExtremes) load one row again since the forty-seventh
        // session: their loop now takes ~4 instructions a row, so the 3 blocks a SM of 80
        // registers beat the 2 of 126 (plan ext_col_lean, run 167, H100, stream-ordered:
        // int8 / uint8 column max 1817 / 1814 -> 1901 / 1905 GB/s).
        // The 16-bit min / max too (plan short_col_lean, run 170, H100, stream-ordered: int16 /
        // uint16 column max 2312 / 2311 -> 2409 / 2411 GB/s, 3 blocks a SM whose grid
        // col_wave makes one wave; in run 161, at 1.3 waves of 512 blocks, they lost 5-6%).
        constexpr int CL = sizeof(A) >= 32 || sizeof(A) * V > 64 ? 1 : kCombineLoads;
        for (; y + (CL - 1) * kColWarps < gridDim.y; y += CL * kColWarps) {  // loads in flight together
          A v[CL][V];
#pragma unroll
          for (int i = 0; i < CL; ++i)
#pragma unroll
            for (int e = 0; e < V; ++e) v[i][e] = e < nc ? load_cg(part(y + i * kColWarps, e)) : Op::identity();
#pragma unroll
          for (int i = 0; i < CL; ++i)
#pragma unroll
            for (int e = 0; e < V; ++e) c[e] = Op::combine(c[e], v[i][e]);
        }
        for (; y < gridDim.y; y += kColWarps)
#pragma unroll
          for (int e = 0; e < V; ++e)
            if (e < nc) c[e] = Op::combine(c[e], load_cg(part(y, e)));
        __syncthreads();  // sh is reused
#pragma unroll
        for (int e = 0; e < V; ++e) sh_put(w, lane, e, c[e]);
        __syncthreads();
        if (w == 0) {
#pragma unroll
          for (int e = 0; e < V; ++e) {
            if (e >= nc) break;
            A s = sh_get(0, lane, e);
            for (int i = 1; i < kColWarps; ++i) s = Op::combine(s, sh_get(i, lane, e));
            op.write(c0 + e, s, g.len);
          }
        }
      }
    }
  }
  block_done(f);
}

/// The column kernel (cols_body), registers as the compiler chooses (64 for fast sums, 4
/// blocks a SM; up to 128 for min/max with indices).
template <class Op, int V>
__global__ void __launch_bounds__(kBlock) cols_kernel(geo g, Op op, std::int64_t chunk, typename Op::acc* partials,
                                                      unsigned* tickets, finish f) {
  cols_body<Op, V>(g, op, chunk, partials, tickets, f);
}

/// The column kernel for accumulators of 32 bytes or more (the certified pass's: four states
/// a lane), held to 80 registers, 3 blocks a SM, without spills (64 registers spilled 92 bytes;
/// with no bound, 156 registers and one block). launch_v3 sizes its row chunks for whole
/// waves of 3 blocks a SM.
template <class Op, int V, bool RUN = false, int MIN_BLOCKS = 3>
__global__ void __launch_bounds__(kBlock, MIN_BLOCKS) cols_kernel_heavy(geo g, Op op, std::int64_t chunk, typename Op::acc* partials,
                                                              unsigned* tickets, finish f) {
  cols_body<Op, V, RUN>(g, op, chunk, partials, tickets, f);
}

}  // namespace tally::cuda::shapes_k::v3
