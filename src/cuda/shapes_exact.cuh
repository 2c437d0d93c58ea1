// CUDA kernels of the shape layer's exact floating sums and means (per row, per column, per
// CSR segment, strided views): every output is the exact sum of its elements, held on the
// superaccumulator grid of the CPU shape path (ops::exact::f32_sum_layout for float32 data,
// f64_sum_layout for float64), rounded once with the same host/device functions the CPU uses
// (ops::exact::round_span; divide_round for means), so the bits are the CPU backend's and those
// of tally::sum / tally::mean over the output's elements.
//
// Per element: each thread keeps an expansion of ops::exact::kTerms doubles (TwoSum, Knuth;
// Ogita, Rump and Oishi 2005) and flushes what overflows it into a superaccumulator of int64
// digits in shared memory with 64-bit shared atomicAdd, no carry propagation (carry-save:
// each deposit adds |v| < 2^32 to at most five digits, so fewer than 2^31 deposits per digit
// cannot overflow); at the end the expansion is drained into it. Integer addition is exact
// and associative, so the order of the atomics changes nothing: deterministic, launch-shape
// independent results.
//
//  - exact_warp_kernel: one warp per output of at most kXTile elements (rows, segments,
//    strided views), one shared superaccumulator per warp; lane 0 rounds.
//  - exact_tile_kernel: outputs longer than kXTile: the flat element range in tiles of kXTile,
//    one block per tile (a tile meets at most two long outputs, as in shapes_tile_kernel).
//    Each block folds its part into a shared superaccumulator, carry-normalises it to signed
//    digits in [-2^31, 2^31) and adds its nonzero digits with global atomicAdd into the
//    output's slot in scratch (slot = the output's first tile), ORs its flags there, and counts
//    itself in the slot's counter; the block that counts last (threadfence reduction, as in
//    the CUDA samples) reads the slot back and rounds.
//  - exact_col_kernel: column reductions (outputs adjacent in memory): a block owns 32
//    adjacent outputs, lane j of every warp reads output j (a warp reads 32 neighbours of one
//    row: coalesced), the 8 warps take rows in turn; 32 shared superaccumulators per block.
//    Tall matrices are split into row chunks over gridDim.y that merge as the tiles do (slot =
//    the output, one counter per 32 outputs).
// Special values travel as ops::exact flags (NaN, +inf, -inf, not -0.0), ORed.
#pragma once

#include <cstdint>
#include <limits>

#include "cuda/shapes.cuh"
#include "tally/ops/exact.hpp"

namespace tally::cuda::shapes_k::exact {

namespace ex = ops::exact;

inline constexpr std::int64_t kXTile = 16384;  // elements per tile; longer outputs are split
inline constexpr int kWarps = kBlock / 32;
inline constexpr int kColOut = 32;  // outputs per block in column mode

template <class T> using layout_of = std::conditional_t<std::is_same_v<T, float>, ex::f32_sum_layout, ex::f64_sum_layout>;

/// Words of a slot in scratch: the digits, the flags, the counter of blocks done.
template <class T> inline constexpr int slot_words = layout_of<T>::digits + 2;

__device__ __forceinline__ void shared_add(std::int64_t* d, int i, std::int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(d + i), static_cast<unsigned long long>(v));
}

/// Adds element x to the thread's expansion; what overflows it goes into the digits at d.
template <class T> __device__ __forceinline__ void take(ex::expansion& f, T x, std::int64_t* d) {
  using L = layout_of<T>;
  auto add = [d](int i, std::int64_t v) { shared_add(d, i, v); };
  auto flush = [&](double v) { ex::deposit<L>(v, add); };
  ex::add_term(f, x, flush);
  if constexpr (std::is_same_v<T, double>) {
    if (ex::too_big(f.a[0])) {  // keep |a0| < 2^1011: no TwoSum can overflow
      flush(f.a[0]);
      f.a[0] = 0.0;
    }
  }
}

/// Drains the expansion into the digits at d; returns its flags.
template <class T> __device__ __forceinline__ unsigned drain_to(ex::expansion& f, std::int64_t* d) {
  using L = layout_of<T>;
  auto add = [d](int i, std::int64_t v) { shared_add(d, i, v); };
  ex::drain(f, [&](double v) { ex::deposit<L>(v, add); });
  return f.flags;
}

/// Folds elements k = first, first + step, ... < k1 of output o (kUnroll loads in flight).
template <class T>
__device__ __forceinline__ void fold(ex::expansion& f, const geo& g, std::int64_t o, std::int64_t k0, std::int64_t k1,
                                     int first, int step, std::int64_t* d) {
  const T* x = static_cast<const T*>(g.x);
  std::int64_t k = k0 + first;
  for (; k + (kUnroll - 1) * step < k1; k += kUnroll * step) {
    T v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x + g.addr(o, k + u * step));
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) take<T>(f, v[u], d);
  }
  for (; k < k1; k += step) take<T>(f, __ldg(x + g.addr(o, k)), d);
}

/// OR of v over the warp.
__device__ __forceinline__ unsigned warp_or(unsigned v) {
#pragma unroll
  for (int s = 16; s >= 1; s /= 2) v |= __shfl_xor_sync(0xffffffffu, v, s);
  return v;
}

/// Signed carry normalisation: digits 0..D-2 into [-2^31, 2^31), the carry into the top
/// digit (the value is unchanged). Keeps a partial's nonzero digits few whatever its sign.
__device__ __forceinline__ void balance(std::int64_t* d, int D) {
  std::int64_t c = 0;
  for (int i = 0; i + 1 < D; ++i) {
    std::int64_t v = d[i] + c;
    c = (v + (std::int64_t(1) << 31)) >> 32;
    d[i] = v - c * (std::int64_t(1) << 32);
  }
  d[D - 1] += c;
}

/// Rounds the output's digits (overwritten) into out[o]: the correctly rounded sum (len == 0:
/// +0) or mean (len == 0: NaN), as the CPU shape path writes it. Out of line: the long
/// division of the mean stays out of the folding loops' registers.
template <class T, class Out, bool MEAN>
__device__ __noinline__ void finish(Out* out, std::int64_t o, std::int64_t* d, unsigned flags, std::int64_t len) {
  using L = layout_of<T>;
  Out r;
  const Out nan = sizeof(Out) == 8 ? static_cast<Out>(ex::double_of(std::uint64_t(0x7ff8) << 48)) : static_cast<Out>(ex::float_of(0x7fc00000u));
  if constexpr (MEAN)
    r = len == 0 ? nan
                 : ex::divide_round<Out>(d, L::digits, L::base, flags, static_cast<std::uint64_t>(len));
  else
    r = len == 0 ? Out(0) : ex::round_span<Out>(d, L::digits, L::base, flags);
  out[o] = r;
}

/// Behind the certified pass of a stream-ordered call (shapes.cu, tuning::shapes_certified):
/// gate holds the two status words that pass reported (-1: none): the exact kernels run only
/// when it refused an output (gate[1] >= 0) and the offsets were good (gate[0] < 0). nullptr:
/// always run.
__device__ __forceinline__ bool skipped(const long long* gate) { return gate && (gate[0] >= 0 || gate[1] < 0); }

/// A kernel launched as a programmatic dependent of the one before it in the stream (the gated
/// exact kernels behind the certified pass, plan.pdl; sm_90 griddepcontrol): waits until that
/// grid has finished and its writes are visible. Launched plainly, the wait returns at once.
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// A gated call's status words as the caller reads them: the certified pass's offsets word,
/// and no overflow (gate[1] held the first refused output, not an overflow).
static __global__ void shapes_gated_status(long long* gate) {
  if (threadIdx.x == 0) gate[1] = -1;
}

/// A gated call's count of its last exact kernel's blocks (counter: the persistent block
/// counter of the stream's shape scratch, 0 between calls): the last block to count resets
/// the counter and writes the caller's overflow word, status_out[1], to -1 (the exact path
/// resolves every output the pass refused). Each block counts after reading the gate, so the
/// word is written after every read of it. Called by every thread of every block, first.
/// both: an ungated call's (column mode, no offsets): status_out[0] to -1 as well.
/// needed: false when status_out[1] already reads -1 (a gate closed because the pass refused
/// no output): then nothing is written, and the blocks do not count (a closed gate's launch
/// is then only each block's gate read, not gridDim atomics on one word).
__device__ __forceinline__ void count_gated_block(long long* status_out, unsigned* counter, bool both = false,
                                                  bool needed = true) {
  if (!counter || !needed) return;
  __syncthreads();  // every thread of this block has read the gate
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(counter, 1u) == gridDim.x * gridDim.y - 1) {
      __threadfence();  // (every block's count, and so its gate read, before the write)
      *counter = 0;
      status_out[1] = -1;
      if (both) status_out[0] = -1;
    }
  }
}

/// One warp per output of at most kXTile elements (longer ones: exact_tiles): block b of
/// `blocks` takes the outputs [b kWarps, (b + 1) kWarps), then those `blocks` blocks further on.
template <class T, class Out, bool MEAN>
__device__ __forceinline__ void exact_warp_outputs(const geo& g, Out* out, std::int64_t b, std::int64_t blocks) {
  using L = layout_of<T>;
  __shared__ std::int64_t acc[kWarps][L::digits];
  const int lane = threadIdx.x & 31, w = threadIdx.x / 32;
  std::int64_t* d = acc[w];
  // (whole warps skip an output; only warp-level synchronisation below)
  for (std::int64_t o = b * kWarps + w; o < g.outputs; o += blocks * kWarps) {
    const std::int64_t len = g.length(o);
    if (len > kXTile) continue;
    for (int i = lane; i < L::digits; i += 32) d[i] = 0;
    __syncwarp();
    ex::expansion f;
    fold<T>(f, g, o, 0, len, lane, 32, d);
    unsigned flags = warp_or(drain_to<T>(f, d));
    __syncwarp();
    if (lane == 0) finish<T, Out, MEAN>(out, o, d, flags, len);
    __syncwarp();  // lane 0 has read d before the next output's zeroing
  }
}

/// One warp per output of at most kXTile elements (exact_warp_outputs; longer ones:
/// exact_tile_kernel). A grid smaller than one block per kWarps outputs loops.
template <class T, class Out, bool MEAN>
__global__ void __launch_bounds__(kBlock) exact_warp_kernel(geo g, Out* out, const long long* bad, const long long* gate) {
  if (bad && *bad != kNone) return;
  if (skipped(gate)) return;
  exact_warp_outputs<T, Out, MEAN>(g, out, blockIdx.x, gridDim.x);
}

/// Outputs longer than kXTile: the tiles of kXTile flat elements, tile t by block t and then
/// every gridDim.x blocks further on (a smaller grid: the gated launch), merged through
/// slots (slot_words<T> words each, zeroed) in scratch; the last block of an output rounds.
template <class T, class Out, bool MEAN>
__device__ __forceinline__ void exact_tiles(const geo& g, Out* out, std::int64_t* slots, std::int64_t first,
                                            std::int64_t blocks) {
  using L = layout_of<T>;
  constexpr int D = L::digits;
  __shared__ std::int64_t acc[D];
  __shared__ unsigned sflags;
  __shared__ bool last;
  const std::int64_t tiles = (g.n + kXTile - 1) / kXTile;
  for (std::int64_t t = first; t < tiles; t += blocks) {  // (uniform across the block)
    const std::int64_t f0 = t * kXTile, f1 = f0 + kXTile < g.n ? f0 + kXTile : g.n;
    const std::int64_t sa = g.output_of(f0), sb = g.output_of(f1 - 1);
    for (int part = 0; part < 2; ++part) {
      const std::int64_t s = part == 0 ? sa : sb;
      if (part == 1 && sb == sa) break;
      const std::int64_t b = g.begin(s), len = g.length(s);
      if (len <= kXTile) continue;  // (uniform across the block)
      for (int i = threadIdx.x; i < D; i += kBlock) acc[i] = 0;
      if (threadIdx.x == 0) sflags = 0;
      __syncthreads();
      const std::int64_t lo = (b > f0 ? b : f0) - b, hi = (b + len < f1 ? b + len : f1) - b;
      ex::expansion f;
      fold<T>(f, g, s, lo, hi, threadIdx.x, kBlock, acc);
      unsigned fl = warp_or(drain_to<T>(f, acc));
      if ((threadIdx.x & 31) == 0 && fl) atomicOr(&sflags, fl);
      __syncthreads();
      if (threadIdx.x == 0) balance(acc, D);
      __syncthreads();
      std::int64_t* slot = slots + (b / kXTile) * slot_words<T>;
      for (int i = threadIdx.x; i < D; i += kBlock)
        if (acc[i] != 0) atomicAdd(reinterpret_cast<unsigned long long*>(slot + i), static_cast<unsigned long long>(acc[i]));
      if (threadIdx.x == 0 && sflags) atomicOr(reinterpret_cast<unsigned long long*>(slot + D), static_cast<unsigned long long>(sflags));
      __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) {
        const unsigned long long blocks = static_cast<unsigned long long>((b + len - 1) / kXTile - b / kXTile + 1);
        last = atomicAdd(reinterpret_cast<unsigned long long*>(slot + D + 1), 1ULL) == blocks - 1;
      }
      __syncthreads();
      if (last) {  // every other block of this output has added its digits (and fenced)
        __threadfence();
        for (int i = threadIdx.x; i < D; i += kBlock) acc[i] = static_cast<std::int64_t>(__ldcg(reinterpret_cast<const long long*>(slot + i)));
        if (threadIdx.x == 0) sflags = static_cast<unsigned>(__ldcg(reinterpret_cast<const long long*>(slot + D)));
        __syncthreads();
        // the slot idle again (zero) for the next call: the stream's persistent slots need no memset
        for (int i = threadIdx.x; i < slot_words<T>; i += kBlock) slot[i] = 0;
        if (threadIdx.x == 0) finish<T, Out, MEAN>(out, s, acc, sflags, len);
      }
      __syncthreads();  // acc and sflags are reused
    }
  }
}

template <class T, class Out, bool MEAN>
__global__ void __launch_bounds__(kBlock) exact_tile_kernel(geo g, Out* out, std::int64_t* slots, const long long* bad,
                                                             const long long* gate) {
  if (bad && *bad != kNone) return;
  if (skipped(gate)) return;
  exact_tiles<T, Out, MEAN>(g, out, slots, blockIdx.x, gridDim.x);
}

/// Behind the gate of a stream-ordered certified call, in one launch: the tiles (when there
/// are any) and then the short outputs, each block looping over both, when the gate is open;
/// and the caller's overflow word set to -1 by the last block to count (count_gated_block),
/// so that a closed gate costs one launch of blocks that return at once (before: the tile
/// kernel, the warp kernel and a status kernel, ~2.5 us each, run 63).
template <class T, class Out, bool MEAN>
__global__ void __launch_bounds__(kBlock) exact_gated_kernel(geo g, Out* out, std::int64_t* slots, bool has_tiles,
                                                              long long* gate, unsigned* counter) {
  wait_for_prior_grid();
  const bool skip = skipped(gate);
  count_gated_block(gate, counter, false, gate[1] >= 0);
  if (skip) return;
  if (has_tiles) exact_tiles<T, Out, MEAN>(g, out, slots, blockIdx.x, gridDim.x);
  exact_warp_outputs<T, Out, MEAN>(g, out, blockIdx.x, gridDim.x);
}

/// Column mode: kColOut adjacent outputs per block (blockIdx.x), rows [y * chunk, (y + 1) *
/// chunk) of gridDim.y chunks; with more than one chunk the blocks merge through slots (one
/// per output, slot_words<T> words, zeroed) and counters (one per blockIdx.x, zeroed), which
/// the last block of each blockIdx.x leaves zero again. gate: as exact_gated_kernel's, with
/// status_out = gate; or none (nullptr), and with done_counter set the last block to count
/// writes both of status_out's words (-1: column mode has no offsets, and no exact sum
/// overflows the status), so that a stream-ordered call needs no status kernel.
template <class T, class Out, bool MEAN>
__global__ void __launch_bounds__(kBlock) exact_col_kernel(geo g, Out* out, std::int64_t chunk, std::int64_t* slots,
                                                           unsigned long long* counters, const long long* gate,
                                                           long long* status_out, unsigned* done_counter) {
  using L = layout_of<T>;
  constexpr int D = L::digits;
  __shared__ std::int64_t acc[kColOut][D];
  __shared__ unsigned sflags[kColOut];
  __shared__ bool last;
  {
    if (gate) wait_for_prior_grid();
    const bool skip = skipped(gate);
    count_gated_block(status_out, done_counter, gate == nullptr, gate == nullptr || gate[1] >= 0);
    if (skip) return;
  }
  const int lane = threadIdx.x & 31, w = threadIdx.x / 32;
  const std::int64_t o0 = static_cast<std::int64_t>(blockIdx.x) * kColOut;
  const int live = g.outputs - o0 < kColOut ? static_cast<int>(g.outputs - o0) : kColOut;
  for (int i = threadIdx.x; i < kColOut * D; i += kBlock) acc[i / D][i % D] = 0;
  if (threadIdx.x < kColOut) sflags[threadIdx.x] = 0;
  __syncthreads();
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t k1 = k0 + chunk < g.len ? k0 + chunk : g.len;
  if (lane < live) {
    ex::expansion f;
    const T* x = static_cast<const T*>(g.x) + (o0 + lane) * g.outer;
    std::int64_t* d = acc[lane];
    std::int64_t k = k0 + w;
    constexpr int step = kWarps;
    for (; k + (kUnroll - 1) * step < k1; k += kUnroll * step) {
      T v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x + (k + u * step) * g.inner);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) take<T>(f, v[u], d);
    }
    for (; k < k1; k += step) take<T>(f, __ldg(x + k * g.inner), d);
    unsigned fl = drain_to<T>(f, d);
    if (fl) atomicOr(&sflags[lane], fl);
  }
  __syncthreads();
  if (gridDim.y == 1) {
    if (threadIdx.x < live) finish<T, Out, MEAN>(out, o0 + threadIdx.x, acc[threadIdx.x], sflags[threadIdx.x], g.len);
    return;
  }
  if (threadIdx.x < live) balance(acc[threadIdx.x], D);
  __syncthreads();
  for (int i = threadIdx.x; i < live * D; i += kBlock) {
    const std::int64_t v = acc[i / D][i % D];
    if (v != 0)
      atomicAdd(reinterpret_cast<unsigned long long*>(slots + (o0 + i / D) * slot_words<T> + i % D), static_cast<unsigned long long>(v));
  }
  if (threadIdx.x < live && sflags[threadIdx.x])
    atomicOr(reinterpret_cast<unsigned long long*>(slots + (o0 + threadIdx.x) * slot_words<T> + D),
             static_cast<unsigned long long>(sflags[threadIdx.x]));
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(counters + blockIdx.x, 1ULL) == gridDim.y - 1;
    if (last) counters[blockIdx.x] = 0;  // idle again for the next call
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int i = threadIdx.x; i < live * D; i += kBlock)
    acc[i / D][i % D] = static_cast<std::int64_t>(
        __ldcg(reinterpret_cast<const long long*>(slots + (o0 + i / D) * slot_words<T> + i % D)));
  if (threadIdx.x < live)
    sflags[threadIdx.x] = static_cast<unsigned>(__ldcg(reinterpret_cast<const long long*>(slots + (o0 + threadIdx.x) * slot_words<T> + D)));
  __syncthreads();
  // the slots idle again (zero) for the next call: the stream's persistent slots need no memset
  for (int i = threadIdx.x; i < live * slot_words<T>; i += kBlock) slots[o0 * slot_words<T> + i] = 0;
  if (threadIdx.x < live) finish<T, Out, MEAN>(out, o0 + threadIdx.x, acc[threadIdx.x], sflags[threadIdx.x], g.len);
}

}  // namespace tally::cuda::shapes_k::exact
