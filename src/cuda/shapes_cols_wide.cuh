// Byte columns a 16-byte vector a lane (fiftieth session): the column sums and means of int8,
// uint8 and bool (narrow_op::column_bytes) and their min / max with the first row
// (narrow_op::column_extreme_keys), for row-major matrices whose rows are whole 16-byte
// vectors (launch_v3 checks: outer 1, row stride and base 16-byte aligned, outputs a multiple
// of 16, rows' chunks of at most kWideChunk rows).
//
// cols_body reads these 4 bytes a lane (kPackedBytes, kPackedExtremes), so a warp takes 128
// contiguous bytes of a row, and its columns read at 0.81 (sums) and 0.74 (max) of the read
// kernel stream-ordered (run 183, H100, 8192 x 8192), where the 32-bit columns, 512 bytes a
// warp's row, read at 0.92-0.96. Here lane j of every warp owns 16 adjacent columns and reads
// them as one 16-byte vector a row, so a warp reads 512 contiguous bytes of a row; warp w takes
// rows w, w + 8, ... of the block's row chunk, kWideRows rows in flight a lane (128 bytes, as
// cols_body's 32 rows of 4 bytes).
//  - Sums: the bytes' values (0..255) are added two to a word in 16-bit halves, as cols_body
//    does, and enter 32-bit sums every 256 rows; the block's 8 warps are added in shared
//    memory (32-bit: a chunk of at most kWideChunk rows of 255 stays below 2^32).
//  - Min / max: each byte's key (larger better) becomes a 16-bit key with 255 - its row in the
//    lane's run of 256 rows below (max.u16x2 keeps the best and, of equal keys, the first
//    row), as cols_body's; every 256 rows a run's best enters a 32-bit state (key, 0xffff - run,
//    255 - row in the run); the warps meet as 64-bit keys (key << 56 | 2^56 - 1 - row).
//  - Row chunks (one wave of resident blocks, as plan col_wave) meet in 64-bit words of device
//    memory that are zero between calls: atomicAdd of the chunk's biased sum, atomicMax of its
//    key. Both are exact and commutative, so the result does not depend on the order the
//    chunks arrive in: the same bits on every run and GPU, and the same as cols_body's (the
//    exact sum; the extreme with its first index). The column tile's last chunk block (a
//    ticket) takes the words back with atomicExch(0), leaving them zero, and writes the outputs.
//
// Status (run 184, H100): the GPU tests passed (ShapesNarrowColsWide.cuda), memcheck and
// racecheck clean, but slower than cols_body at 8192 x 8192 (stream-ordered, of read: int8
// sums 0.80 -> 0.78, max with index 0.73 -> 0.72), so off by default (plan byte_col_wide 0).
// The bare-kernel probe (bench/experiments/byte_cols_probe.cu) found the 16-byte lanes no
// faster than the 4-byte ones at 64 MiB (sums 0.90 against 0.92-0.93; 0.98 against 0.96 at
// 256 MiB): the lane width is not what holds the byte columns back.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "cuda/shapes_v3.cuh"

namespace tally::cuda::shapes_k::v3 {

inline constexpr int kWideCols = 16;                 // columns a lane: one 16-byte vector of bytes
inline constexpr int kWideTile = 32 * kWideCols;     // columns a block (512)
inline constexpr int kWideRows = 8;                  // rows in flight a lane
inline constexpr std::int64_t kWideChunk = 1 << 24;  // most rows a chunk (32-bit block sums, 16-bit run counts)

/// The wide column kernels' end (cols_bytes_wide, cols_shorts_wide): each column of the tile
/// from t0, its 8 warps' words in shared memory (sh: (warps, TILE)) met in warp order (KEYS:
/// their max, else their sum), then written (one row chunk) or met with the other chunks' in
/// words (64-bit atomicMax / atomicAdd; (outputs), zero between calls); the tile's last chunk
/// block (a ticket) takes the words back with atomicExch(0) and writes them. write(col, word):
/// the output's word as the op's state, written.
template <bool KEYS, int TILE, class Word, class Write>
__device__ __forceinline__ void wide_cols_end(const Word (&sh)[kColWarps][TILE], std::int64_t t0, std::int64_t outputs,
                                              unsigned long long* words, unsigned* tickets, const finish& f, Write&& write) {
  __syncthreads();
  for (int c = threadIdx.x; c < TILE; c += kBlock) {
    const std::int64_t col = t0 + c;
    if (col >= outputs) break;
    unsigned long long v = 0;
#pragma unroll
    for (int i = 0; i < kColWarps; ++i) {
      if constexpr (KEYS) v = max(v, static_cast<unsigned long long>(sh[i][c]));
      else v += sh[i][c];
    }
    if (gridDim.y == 1) write(col, v);
    else if constexpr (KEYS) atomicMax(words + col, v);
    else atomicAdd(words + col, v);
  }
  if (gridDim.y > 1) {
    if (last_chunk(tickets, f)) {
      for (int c = threadIdx.x; c < TILE; c += kBlock) {
        const std::int64_t col = t0 + c;
        if (col >= outputs) break;
        write(col, atomicExch(words + col, 0ull));  // (read, and zero for the next call)
      }
    }
  }
  block_done(f);
}

/// Whether Op is a byte op cols_bytes_wide takes: sums and means (column_bytes), or min / max
/// (column_extreme_keys).
template <class Op> constexpr bool wide_byte_sums() {
  return sizeof(typename Op::elem) == 1 && requires(unsigned q) { Op::column_bytes(q); };
}
template <class Op> constexpr bool wide_byte_keys() {
  return sizeof(typename Op::elem) == 1 && requires(unsigned q) { Op::column_extreme_keys(q); };
}
template <class Op> constexpr bool wide_bytes() { return wide_byte_sums<Op>() || wide_byte_keys<Op>(); }

/// The column kernel of wide_bytes ops: grid (column tiles of kWideTile, row chunks of `chunk`
/// rows); words: (g.outputs) 64-bit words, zero between calls (used when there are chunks);
/// tickets: (column tiles), zero between calls.
template <class Op>
__global__ void __launch_bounds__(kBlock, wide_byte_keys<Op>() ? 3 : 4)
    cols_bytes_wide(geo g, Op op, std::int64_t chunk, unsigned long long* words, unsigned* tickets, finish f) {
  using A = typename Op::acc;
  constexpr bool KEYS = wide_byte_keys<Op>();
  constexpr unsigned long long kRowMask = (1ull << 56) - 1;
  using word_t = std::conditional_t<KEYS, unsigned long long, unsigned>;
  __shared__ word_t sh[kColWarps][kWideTile];  // (warps, tile columns)
  allow_dependents();
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::int64_t t0 = static_cast<std::int64_t>(blockIdx.x) * kWideTile;
  const std::int64_t c0 = t0 + lane * kWideCols;  // (outputs % 16 == 0: all 16 columns or none)
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t k1 = k0 + chunk < g.len ? k0 + chunk : g.len;
  const unsigned char* p = static_cast<const unsigned char*>(g.x) + c0;  // (outer == 1)
  auto row_words = [&](std::int64_t k) { return __ldg(reinterpret_cast<const uint4*>(p + k * g.inner)); };
  std::int64_t k = k0 + w;
  if constexpr (!KEYS) {
    unsigned lo[4] = {}, hi[4] = {}, s[kWideCols] = {};
    int held = 0;  // rows in lo / hi
    auto add = [&](const uint4& v) {
      const unsigned q[4] = {Op::column_bytes(v.x), Op::column_bytes(v.y), Op::column_bytes(v.z), Op::column_bytes(v.w)};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        lo[j] += q[j] & 0x00ff00ffu;
        hi[j] += (q[j] >> 8) & 0x00ff00ffu;
      }
    };
    auto flush = [&]() {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        s[4 * j + 0] += lo[j] & 0xffffu;
        s[4 * j + 1] += hi[j] & 0xffffu;
        s[4 * j + 2] += lo[j] >> 16;
        s[4 * j + 3] += hi[j] >> 16;
        lo[j] = hi[j] = 0;
      }
      held = 0;
    };
    if (c0 < g.outputs) {
      static_assert(256 % kWideRows == 0);
      for (; k + (kWideRows - 1) * kColWarps < k1; k += kWideRows * kColWarps) {
        uint4 r[kWideRows];
#pragma unroll
        for (int u = 0; u < kWideRows; ++u) r[u] = row_words(k + u * kColWarps);
#pragma unroll
        for (int u = 0; u < kWideRows; ++u) add(r[u]);
        held += kWideRows;
        if (held == 256) flush();
      }
      for (; k < k1; k += kColWarps) add(row_words(k));  // (fewer than kWideRows rows: held stays under 256)
      flush();
    }
#pragma unroll
    for (int e = 0; e < kWideCols; ++e) sh[w][lane * kWideCols + e] = s[e];
  } else {
    unsigned even[4] = {}, odd[4] = {}, best[kWideCols] = {};  // (0: below every key of a row)
    unsigned run = 0;  // (this lane's runs of 256 rows done)
    int held = 0;      // rows in the run
    auto flush = [&]() {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          const unsigned key = ((b & 1) ? odd[j] : even[j]) >> (16 * (b >> 1)) & 0xffffu;
          best[4 * j + b] = max(best[4 * j + b], (key >> 8) << 24 | (0xffffu - run) << 8 | (key & 0xffu));
        }
        even[j] = odd[j] = 0;
      }
      ++run;
      held = 0;
    };
    constexpr int kU = kWideRows;
    static_assert(kU % 4 == 0 && 256 % kU == 0);
    constexpr auto kRowBytes = key_row_bytes<kU>::make();
    if (c0 < g.outputs) {
      for (; k + (kU - 1) * kColWarps < k1; k += kU * kColWarps) {
        uint4 r[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) r[u] = row_words(k + u * kColWarps);
        const unsigned blk = ((255u - static_cast<unsigned>(held)) & (256u - kU)) * 0x00010001u;  // (255 - held's upper bits)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          unsigned be = 0, bo = 0;
#pragma unroll
          for (int u = 0; u < kU; ++u) {
            const unsigned key = Op::column_extreme_keys(j == 0 ? r[u].x : j == 1 ? r[u].y : j == 2 ? r[u].z : r[u].w);
            be = __vmaxu2(be, __byte_perm(key, kRowBytes.t[u / 4], key_row_sel(u % 4, 0)));
            bo = __vmaxu2(bo, __byte_perm(key, kRowBytes.t[u / 4], key_row_sel(u % 4, 1)));
          }
          even[j] = __vmaxu2(even[j], be | blk);
          odd[j] = __vmaxu2(odd[j], bo | blk);
        }
        held += kU;
        if (held == 256) flush();
      }
      for (; k < k1; k += kColWarps) {  // (fewer than kU rows: held stays under 256)
        const uint4 v = row_words(k);
        const unsigned low = 255u - static_cast<unsigned>(held);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const unsigned key = Op::column_extreme_keys(j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w);
          even[j] = __vmaxu2(even[j], __byte_perm(key, low, key_row_sel(0, 0)));
          odd[j] = __vmaxu2(odd[j], __byte_perm(key, low, key_row_sel(0, 1)));
        }
        ++held;
      }
      if (held > 0) flush();
    }
#pragma unroll
    for (int e = 0; e < kWideCols; ++e) {
      const unsigned s = best[e];
      const std::int64_t in_lane = static_cast<std::int64_t>(0xffffu - ((s >> 8) & 0xffffu)) * 256 + (255 - (s & 0xffu));
      const std::int64_t row = k0 + w + in_lane * kColWarps;
      sh[w][lane * kWideCols + e] =
          s == 0 ? 0ull : (static_cast<unsigned long long>(s >> 24) << 56 | (kRowMask - static_cast<unsigned long long>(row)));
    }
  }
  // an output's word (the biased sum, or the key) as the op's state, written
  auto write = [&](std::int64_t col, unsigned long long v) {
    A a = Op::identity();
    if constexpr (KEYS) {
      Op::accumulate_value(a, Op::column_extreme_value(static_cast<unsigned>(v >> 56)),
                           static_cast<std::int64_t>(kRowMask - (v & kRowMask)));
    } else {
      a += static_cast<std::int64_t>(v);  // (< 255 x 2^56: the biased sum of every row)
      a -= static_cast<A>(Op::column_byte_bias()) * static_cast<A>(g.len);
    }
    op.write(col, a, g.len);
  };
  wide_cols_end<KEYS>(sh, t0, g.outputs, words, tickets, f, write);
}


// 16-bit integer columns a 16-byte vector a lane (fifty-first session): the column sums and
// means of int16 and uint16 (narrow_op::column_short_lo / hi) and their min / max with the
// first row (narrow_op::column_short_extremes), for row-major matrices whose rows are whole
// 16-byte vectors (launch_v3 checks: outer 1, row stride and base 16-byte aligned, outputs a
// multiple of 8, row chunks of at most kWideChunk rows).
//
// cols_body reads these 8 bytes a lane (kPackedShorts, kPackedShortExtremes), a warp taking
// 256 contiguous bytes of a row: int16 column sums read at 0.90 and max at 0.83 of the read
// kernel stream-ordered (run 183, H100, 2^26 elements). Here lane j of every warp owns 8
// adjacent columns, one 16-byte vector a row (512 contiguous bytes a warp's row, as the 32-bit
// columns that read at 0.92-0.96); warp w takes rows w, w + 8, ... of the block's row chunk,
// kWideRows rows in flight a lane.
//  - Sums: each element (Op::column_short_lo / hi) is added to its int32 run sum, which enters
//    a 64-bit lane sum every 8192 of the lane's rows (|run| <= 8192 x 2^15 < 2^31), as
//    cols_body's; the block's 8 warps are added in shared memory (int64).
//  - Min / max: each element becomes one 32-bit key, its value in the high half and its row
//    in the lane's run of 4096 rows in the low half (complemented for max), and the run's
//    best is the keys' max (min) in the element type's order, as cols_body's; every 4096 rows
//    the run's best enters a 64-bit key, larger better: the value's order as 16 bits
//    (complemented for min) above 2^48 - 1 - its row.
//  - Row chunks (one wave, plan col_wave) meet in 64-bit words of device memory that are zero
//    between calls: atomicAdd of the chunk's sum (two's complement: exact while the total
//    fits int64, 2^47 rows), atomicMax of its key; exact and commutative, so the same bits on
//    every run and GPU, and the same as cols_body's. The tile's last chunk block (a ticket)
//    takes the words back with atomicExch(0) and writes the outputs.
//
// Status (run 184, H100, 8192 x 8192, stream-ordered, of the read kernel): int16 sums 0.89 ->
// 0.93 and max with index 0.83 -> 0.93 against cols_body (uint16 the same); the GPU tests
// passed (ShapesNarrowColsWide.cuda, ...Whole.cuda), memcheck and racecheck clean. On by
// default (plan short_col_wide 1).
inline constexpr int kWideShortCols = 8;                    // columns a lane: one 16-byte vector of 16-bit elements
inline constexpr int kWideShortTile = 32 * kWideShortCols;  // columns a block (256)

/// A lane's rows of 16-byte vectors (cols_shorts_wide, cols_halves_wide): from p's row k,
/// k + kColWarps, ... below k1 (stride: elements a row), kWideRows rows in flight; add(v) on
/// each row's vector in order, flush(held) after every RUN rows and at the end (held: the run's
/// rows, 0 there when the rows were a whole number of runs).
template <int RUN, class T, class Add, class Flush>
__device__ __forceinline__ void wide_rows(const T* p, std::int64_t stride, std::int64_t k, std::int64_t k1, Add&& add, Flush&& flush) {
  static_assert(RUN % kWideRows == 0);
  auto row_words = [&](std::int64_t kk) { return __ldg(reinterpret_cast<const uint4*>(p + kk * stride)); };
  int held = 0;
  for (; k + (kWideRows - 1) * kColWarps < k1; k += kWideRows * kColWarps) {
    uint4 r[kWideRows];
#pragma unroll
    for (int u = 0; u < kWideRows; ++u) r[u] = row_words(k + u * kColWarps);
#pragma unroll
    for (int u = 0; u < kWideRows; ++u) add(r[u]);
    held += kWideRows;
    if (held == RUN) {
      flush(held);
      held = 0;
    }
  }
  for (; k < k1; k += kColWarps) {  // (fewer than kWideRows rows: held stays under RUN)
    add(row_words(k));
    ++held;
  }
  flush(held);
}

/// Whether Op is a 16-bit integer op cols_shorts_wide takes: sums and means
/// (column_short_lo), or min / max (column_short_extremes).
template <class Op> constexpr bool wide_short_sums() {
  return sizeof(typename Op::elem) == 2 && requires(unsigned q) { Op::column_short_lo(q); };
}
template <class Op> constexpr bool wide_short_keys() {
  if constexpr (sizeof(typename Op::elem) == 2 && requires { Op::column_short_extremes; }) return Op::column_short_extremes;
  else return false;
}
template <class Op> constexpr bool wide_shorts() { return wide_short_sums<Op>() || wide_short_keys<Op>(); }

/// The column kernel of wide_shorts ops: grid (column tiles of kWideShortTile, row chunks of
/// `chunk` rows); words: (g.outputs) 64-bit words, zero between calls (used when there are
/// chunks); tickets: (column tiles), zero between calls.
template <class Op>
__global__ void __launch_bounds__(kBlock, 3)
    cols_shorts_wide(geo g, Op op, std::int64_t chunk, unsigned long long* words, unsigned* tickets, finish f) {
  using A = typename Op::acc;
  using T = typename Op::elem;
  constexpr bool KEYS = wide_short_keys<Op>();
  constexpr bool kMax = [] {
    if constexpr (KEYS) return Op::extreme_is_max;
    else return false;
  }();
  constexpr unsigned long long kRowMask = (1ull << 48) - 1;
  __shared__ unsigned long long sh[kColWarps][kWideShortTile];  // (warps, tile columns)
  allow_dependents();
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::int64_t t0 = static_cast<std::int64_t>(blockIdx.x) * kWideShortTile;
  const std::int64_t c0 = t0 + lane * kWideShortCols;  // (outputs % 8 == 0: all 8 columns or none)
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t k1 = k0 + chunk < g.len ? k0 + chunk : g.len;
  const T* p = static_cast<const T*>(g.x) + c0;  // (outer == 1)
  const std::int64_t k = k0 + w;
  auto rows = [&]<int RUN>(auto&& add, auto&& flush) {
    if (c0 < g.outputs) wide_rows<RUN>(p, g.inner, k, k1, add, flush);
  };
  if constexpr (!KEYS) {
    std::int32_t run[kWideShortCols] = {};
    long long s[kWideShortCols] = {};
    rows.template operator()<8192>(
        [&](const uint4& v) {
          const unsigned q[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            run[2 * j] += Op::column_short_lo(q[j]);
            run[2 * j + 1] += Op::column_short_hi(q[j]);
          }
        },
        [&](int) {
#pragma unroll
          for (int e = 0; e < kWideShortCols; ++e) {
            s[e] += run[e];
            run[e] = 0;
          }
        });
#pragma unroll
    for (int e = 0; e < kWideShortCols; ++e) sh[w][lane * kWideShortCols + e] = static_cast<unsigned long long>(s[e]);
  } else {
    using C = std::conditional_t<std::is_signed_v<T>, int, unsigned>;  // (the keys' order: the element type's)
    constexpr C kWorst = kMax ? std::numeric_limits<C>::min() : std::numeric_limits<C>::max();
    C best[kWideShortCols];
#pragma unroll
    for (int e = 0; e < kWideShortCols; ++e) best[e] = kWorst;
    unsigned long long key[kWideShortCols] = {};  // (0: below every element's key)
    unsigned row = kMax ? 0xffffu : 0u;  // (this row's run row in the low half; complemented for max)
    std::int64_t k_run = k;              // the run's first row
    auto pick = [](C b, unsigned x) { return kMax ? max(b, static_cast<C>(x)) : min(b, static_cast<C>(x)); };
    rows.template operator()<4096>(
        [&](const uint4& v) {
          const unsigned q[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            best[2 * j] = pick(best[2 * j], __byte_perm(q[j], row, 0x1054));      // (the low element above row's half)
            best[2 * j + 1] = pick(best[2 * j + 1], __byte_perm(q[j], row, 0x3254));  // (the high element)
          }
          row += kMax ? 0xffffffffu : 1u;
        },
        [&](int held) {
          if (held == 0) return;
#pragma unroll
          for (int e = 0; e < kWideShortCols; ++e) {
            const unsigned b = static_cast<unsigned>(best[e]);
            const std::int64_t at = kMax ? 0xffff - (b & 0xffffu) : (b & 0xffffu);
            const unsigned order = (b >> 16) ^ (std::is_signed_v<T> ? 0x8000u : 0u);  // (the value's order as 16 bits)
            const unsigned long long kk = static_cast<unsigned long long>(kMax ? order : 0xffffu - order) << 48 |
                                          (kRowMask - static_cast<unsigned long long>(k_run + at * kColWarps));
            key[e] = max(key[e], kk);
            best[e] = kWorst;
          }
          k_run += static_cast<std::int64_t>(held) * kColWarps;
          row = kMax ? 0xffffu : 0u;
        });
#pragma unroll
    for (int e = 0; e < kWideShortCols; ++e) sh[w][lane * kWideShortCols + e] = key[e];
  }
  // an output's word (the sum, or the key) as the op's state, written
  auto write = [&](std::int64_t col, unsigned long long v) {
    A a = Op::identity();
    if constexpr (KEYS) {
      const unsigned order = static_cast<unsigned>(v >> 48) ^ (kMax ? 0u : 0xffffu);
      const std::int32_t value = std::is_signed_v<T> ? static_cast<std::int32_t>(order) - 0x8000 : static_cast<std::int32_t>(order);
      Op::accumulate_value(a, value, static_cast<std::int64_t>(kRowMask - (v & kRowMask)));
    } else {
      a += static_cast<std::int64_t>(v);  // (two's complement: the chunks' exact sum)
    }
    op.write(col, a, g.len);
  };
  wide_cols_end<KEYS>(sh, t0, g.outputs, words, tickets, f, write);
}


// float16 / bfloat16 column min / max with the first row, 8 columns a lane (fifty-fourth
// session): the half extreme ops (narrow_op::column_half_extremes) for row-major matrices whose
// rows are whole 16-byte vectors (launch_v3 checks, as cols_shorts_wide's: outer 1, row stride
// and base 16-byte aligned, outputs a multiple of 8, row chunks of at most kWideChunk rows).
//
// cols_body reads these 8 bytes a lane (kPackedHalfExtremes): 0.89 of the read kernel
// stream-ordered (run 186, H100, 8192 x 8192), where the 16-bit integer max read at 0.83 that
// way and at 0.93 as cols_shorts_wide's 16-byte lanes (run 184). Here lane j of every warp owns
// 8 adjacent columns, one 16-byte vector a row, four pairs; each pair keeps cols_body's run
// state: the best pair, the run row that first held each half (`at`, the halves a row beats
// strictly replace best and at: Op::column_pair_better, so the first of equal values stays,
// -0 and +0 tie), and without SKIP whether a NaN was met (Op::column_pair_nans). Every 4096
// rows each column's best enters its 64-bit key (Op::column_half_key: value order, first
// row, a zero's sign; the max), and a run with the column's first NaN, or with no element
// better than the worst value before the key has one, is read again element by element, as
// cols_body's. The warps and the row chunks meet as keys (wide_cols_end: the max, 64-bit
// atomicMax between chunks), exact and commutative: the same extreme, first index and first
// NaN as cols_body's, so the same bits on every run, GPU and plan.
//
// Status (run 188, H100, 8192 x 8192, stream-ordered, of the read kernel, two runs a plan):
// float16 max with index 0.888-0.889 -> 0.900-0.901, bfloat16 0.889-0.890 -> 0.901; 80
// registers (ptxas, the 3 blocks a SM of the launch bounds), no spills; the GPU tests passed
// (every half column test under half_col_wide=1, with and without one row chunk), memcheck and
// racecheck clean. On by default (plan half_col_wide 1).
inline constexpr int kWideHalfRun = 4096;  // rows of a lane's run (its rows in `at`: below 2^16)

/// Whether Op is a float16 / bfloat16 min / max cols_halves_wide takes.
template <class Op> constexpr bool wide_half_keys() {
  if constexpr (sizeof(typename Op::elem) == 2 && requires { Op::column_half_extremes; }) return Op::column_half_extremes;
  else return false;
}

/// The column kernel of wide_half_keys ops: grid (column tiles of kWideShortTile, row chunks of
/// `chunk` rows); words: (g.outputs) 64-bit words, zero between calls (used when there are
/// chunks); tickets: (column tiles), zero between calls.
template <class Op>
__global__ void __launch_bounds__(kBlock, 3)
    cols_halves_wide(geo g, Op op, std::int64_t chunk, unsigned long long* words, unsigned* tickets, finish f) {
  using T = typename Op::elem;
  __shared__ unsigned long long sh[kColWarps][kWideShortTile];  // (warps, tile columns)
  allow_dependents();
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::int64_t t0 = static_cast<std::int64_t>(blockIdx.x) * kWideShortTile;
  const std::int64_t c0 = t0 + lane * kWideShortCols;  // (outputs % 8 == 0: all 8 columns or none)
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t k1 = k0 + chunk < g.len ? k0 + chunk : g.len;
  const T* p = static_cast<const T*>(g.x) + c0;  // (outer == 1)
  constexpr unsigned kWorst = Op::column_worst_pair();
  unsigned best[4] = {kWorst, kWorst, kWorst, kWorst}, at[4] = {}, nans[4] = {};  // (pairs: columns 2 i, 2 i + 1)
  unsigned row = 0u;                  // (this row's run row, in both halves)
  std::int64_t k_run = k0 + w;        // the run's first row
  unsigned long long key[kWideShortCols] = {};  // (each column's key, Op::column_half_key; 0 no element)
  if (c0 < g.outputs) {
    wide_rows<kWideHalfRun>(
        p, g.inner, k0 + w, k1,
        [&](const uint4& v) {
          const unsigned q[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int i = 0; i < 4; ++i) half_pair_take<Op>(q[i], best[i], at[i], nans[i], row);
          row += 0x00010001u;
        },
        [&](int held) {
          if (held == 0) return;
#pragma unroll
          for (int e = 0; e < kWideShortCols; ++e)
            half_run_key<Op>(key[e], best[e / 2], at[e / 2], nans[e / 2], 16 * (e % 2), k_run, held, p + e, g.inner);
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            best[i] = kWorst;
            at[i] = nans[i] = 0u;
          }
          row = 0u;
          k_run += static_cast<std::int64_t>(held) * kColWarps;
        });
  }
#pragma unroll
  for (int e = 0; e < kWideShortCols; ++e) sh[w][lane * kWideShortCols + e] = key[e];
  auto write = [&](std::int64_t col, unsigned long long v) { op.write(col, Op::column_half_state(v), g.len); };
  wide_cols_end<true>(sh, t0, g.outputs, words, tickets, f, write);
}

// float16 exact column sums and means in fixed point, 8 columns a lane (fifty-fourth session):
// f16_fixed_op (Op::column_halves, src/cuda/shapes_narrow.cu), for row-major matrices whose
// rows are whole 16-byte vectors and whose columns hold at most kWideHalfSumLen rows (launch_v3
// and run_native check: outer 1, row stride and base 16-byte aligned, outputs a multiple of 8).
//
// cols_body reads these 8 bytes a lane (kPackedHalves) into 128-bit states and leaves a column
// with an infinity or a NaN to the widened exact route (Op::write's ovf), so the
// stream-ordered forms never took it. Here lane j of every warp owns 8 adjacent columns, one
// 16-byte vector a row: each element enters its column's float64 run exactly (Op::core::tiny_lo
// / tiny_hi: v x 2^-1008, 2 integer instructions and one addition), and every
// Op::core::kColumnRun rows the run enters the lane's 64-bit sum in units of 2^-24 (|element|
// < 2^40 units, so a column of at most 2^23 rows sums below 2^63: every partial sum fits int64),
// with its ops::exact flags: seen_not_neg_zero unless the run's sum is -0.0 (all its elements
// were), and, when the run met an infinity or a NaN (Op::core::specials, bits 15 / 31 of a
// word), the run's elements of that column read again and classified (Op::core::special_flags).
// The warps meet in shared memory (sums added, flags or-ed) and the row chunks in 64-bit words
// of device memory, zero between calls: atomicAdd of the sum (two's complement, exact),
// atomicOr of the flags; the tile's last chunk block (a ticket) takes both back with
// atomicExch(0) and writes the output (Op::write_fixed: the exact sum, or the mean, correctly
// rounded; NaN / inf by the flags, as the exact kernels'). Exact and commutative: the same bits
// on every run, GPU and plan, and the same as cols_body's and the widened route's.
//
// The float16 fast sums take it too where it applies (run_native): exact, so correctly rounded.
//
// Status (run 188, H100, 8192 x 8192, of the read kernel, two runs a plan): stream-ordered fast
// sums 0.828-0.830 -> 0.905; stream-ordered exact sums 0.185 (the widened route) -> 0.903-0.905;
// blocking exact sums 0.772-0.774 -> 0.772-0.795, fast 0.65-0.72 -> 0.77-0.79. 80 registers, no spills
// (a 1,840-byte stack frame: write_fixed's rare wide-integer paths). The GPU tests passed,
// memcheck and racecheck clean. On by default (plan half_col_wide 1).
inline constexpr std::int64_t kWideHalfSumLen = std::int64_t(1) << 23;  // most rows a column (int64 sums)

/// Whether Op is the float16 fixed-point sum cols_halves_sums_wide takes.
template <class Op> constexpr bool wide_half_sums() {
  if constexpr (sizeof(typename Op::elem) == 2 && requires { Op::column_halves; }) return Op::column_halves;
  else return false;
}

/// The column kernel of wide_half_sums ops: grid (column tiles of kWideShortTile, row chunks of
/// `chunk` rows), g.len at most kWideHalfSumLen; words: (2, g.outputs) 64-bit words (sums,
/// flags), zero between calls (used when there are chunks); tickets: (column tiles), zero
/// between calls.
template <class Op>
__global__ void __launch_bounds__(kBlock, 3)
    cols_halves_sums_wide(geo g, Op op, std::int64_t chunk, unsigned long long* words, unsigned* tickets, finish f) {
  using T = typename Op::elem;
  using core = typename Op::core;
  static_assert(core::kColumnRun % kWideRows == 0 && core::kColumnRun <= 4096);  // (a run's sum: exact in float64)
  __shared__ unsigned long long sh[kColWarps][kWideShortTile];  // (warps, tile columns): sums
  __shared__ unsigned char shf[kColWarps][kWideShortTile];      // (warps, tile columns): flags
  allow_dependents();
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::int64_t t0 = static_cast<std::int64_t>(blockIdx.x) * kWideShortTile;
  const std::int64_t c0 = t0 + lane * kWideShortCols;  // (outputs % 8 == 0: all 8 columns or none)
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t k1 = k0 + chunk < g.len ? k0 + chunk : g.len;
  const T* p = static_cast<const T*>(g.x) + c0;  // (outer == 1)
  double run[kWideShortCols];  // (-0.0: a run of -0.0 elements stays -0.0)
#pragma unroll
  for (int e = 0; e < kWideShortCols; ++e) run[e] = -0.0;
  unsigned sp[4] = {};                          // (each word's specials: bits 15 / 31)
  unsigned long long s[kWideShortCols] = {};    // (the lane's sums, units of 2^-24, two's complement)
  unsigned fl = 0;                              // (the lane's flags, 4 bits a column)
  std::int64_t k_run = k0 + w;                  // the run's first row
  if (c0 < g.outputs) {
    wide_rows<core::kColumnRun>(
        p, g.inner, k0 + w, k1,
        [&](const uint4& v) {
          const unsigned q[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            run[2 * j] += core::tiny_lo(q[j]);
            run[2 * j + 1] += core::tiny_hi(q[j]);
            sp[j] |= core::specials(q[j]);
          }
        },
        [&](int held) {
          if (held == 0) return;
#pragma unroll
          for (int e = 0; e < kWideShortCols; ++e) {
            s[e] += static_cast<unsigned long long>(core::units(run[e]));
            unsigned fe = core::neg_zero(run[e]) ? 0u : core::kNotNegZero;
            if ((sp[e / 2] >> (16 * (e % 2))) & 0x8000u) {  // (an infinity or a NaN in this run: which)
#pragma unroll 1
              for (int u = 0; u < held; ++u)
                fe |= core::special_flags(__ldg(p + (k_run + static_cast<std::int64_t>(u) * kColWarps) * g.inner + e));
            }
            fl |= fe << (4 * e);
            run[e] = -0.0;
          }
#pragma unroll
          for (int j = 0; j < 4; ++j) sp[j] = 0u;
          k_run += static_cast<std::int64_t>(held) * kColWarps;
        });
  }
#pragma unroll
  for (int e = 0; e < kWideShortCols; ++e) {
    sh[w][lane * kWideShortCols + e] = s[e];
    shf[w][lane * kWideShortCols + e] = static_cast<unsigned char>((fl >> (4 * e)) & 0xfu);
  }
  auto write = [&](std::int64_t col, unsigned long long v, unsigned flags) {
    op.write_fixed(col, static_cast<long long>(v), flags, g.len);  // (two's complement: the exact sum)
  };
  __syncthreads();
  for (int c = threadIdx.x; c < kWideShortTile; c += kBlock) {
    const std::int64_t col = t0 + c;
    if (col >= g.outputs) break;
    unsigned long long v = 0;
    unsigned flags = 0;
#pragma unroll
    for (int i = 0; i < kColWarps; ++i) {
      v += sh[i][c];
      flags |= shf[i][c];
    }
    if (gridDim.y == 1) {
      write(col, v, flags);
    } else {
      atomicAdd(words + col, v);
      if (flags != 0) atomicOr(words + g.outputs + col, static_cast<unsigned long long>(flags));
    }
  }
  if (gridDim.y > 1 && last_chunk(tickets, f)) {
    for (int c = threadIdx.x; c < kWideShortTile; c += kBlock) {
      const std::int64_t col = t0 + c;
      if (col >= g.outputs) break;
      const unsigned long long v = atomicExch(words + col, 0ull);  // (read, and zero for the next call)
      write(col, v, static_cast<unsigned>(atomicExch(words + g.outputs + col, 0ull)));
    }
  }
  block_done(f);
}

// bfloat16 fast column sums, 8 columns a lane (fifty-fifth session): narrow_op over
// fast_sum (a float64 sum a column, row by row) for row-major matrices whose rows are whole
// 16-byte vectors (launch_v3 checks, as cols_shorts_wide's: outer 1, row stride and base
// 16-byte aligned, outputs a multiple of 8).
//
// cols_body reads these as 16-byte vectors too (cols_kernel<Op, 8>, 4 rows in flight a lane)
// and converts each element bfloat16 -> float32 -> float64 (a shift, then F2F.F64.F32 on the
// SMs' conversion pipe: 2^26 of them a 128 MiB matrix): 0.83 of the read kernel
// stream-ordered (runs 187-188, H100, 8192 x 8192), where the float16 sums' 8-a-lane kernel
// (cols_halves_sums_wide) reads at 0.905. Here each element enters its column's float64 sum as
// v x 2^-896 made by 2 integer instructions (Op::reader::tiny_lo / tiny_hi, the certified
// pass's trick), kWideRows rows in flight a lane (wide_rows), and the lane's sum is scaled back
// by 2^896 once (exact). The scaled sums round exactly as the unscaled ones: every partial sum
// is a multiple of 2^-133 (2^-1029 scaled), so the scaled ones below 2^-1022 are exact float64
// subnormals, as the unscaled are exact, and above it both round to the same 53 bits. An
// infinity or a NaN (exponent field 255) would read as a finite value: each word's such halves
// are noted (bit 15 / 31 of sp), and a lane's column that met one is summed again from its
// chunk's rows element by element (Op::accumulate, cols_body's way), so its NaN too is the
// same. The warps meet in warp order in shared memory and the row chunks, written as partials
// (chunks, outputs), in cols_body's order (warp w of the tile's last chunk block took chunks w,
// w + 8, ..., then the 8 in warp order): launch_v3 gives it cols_body's row chunks (from the
// shape alone, plan col_blocks; not col_wave, whose chunks follow the SM count), so the same
// bits as cols_body's on every run, GPU and plan half_col_wide.
/// Whether Op is a bfloat16 fast sum cols_halves_fast_wide takes (a float64 state, a reader
/// with the scaled float64 terms).
template <class Op> constexpr bool wide_half_fast() {
  if constexpr (sizeof(typename Op::elem) == 2 && std::is_same_v<typename Op::acc, double> &&
                requires(unsigned q) { Op::reader::tiny_lo(q); })
    return true;
  else return false;
}

/// The column kernel of wide_half_fast ops: grid (column tiles of kWideShortTile, row chunks of
/// `chunk` rows); partials: (gridDim.y, g.outputs) states (used when there are chunks);
/// tickets: (column tiles), zero between calls.
template <class Op>
__global__ void __launch_bounds__(kBlock, 4)
    cols_halves_fast_wide(geo g, Op op, std::int64_t chunk, typename Op::acc* partials, unsigned* tickets, finish f) {
  using A = typename Op::acc;
  using T = typename Op::elem;
  using In = typename Op::reader;
  __shared__ A sh[kColWarps][kWideShortTile];  // (warps, tile columns)
  allow_dependents();
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::int64_t t0 = static_cast<std::int64_t>(blockIdx.x) * kWideShortTile;
  const std::int64_t c0 = t0 + lane * kWideShortCols;  // (outputs % 8 == 0: all 8 columns or none)
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t k1 = k0 + chunk < g.len ? k0 + chunk : g.len;
  const T* p = static_cast<const T*>(g.x) + c0;  // (outer == 1)
  A s[kWideShortCols];  // (the scaled sums; -0.0, the identity: a column of -0.0 stays -0.0)
#pragma unroll
  for (int e = 0; e < kWideShortCols; ++e) s[e] = Op::identity();
  unsigned sp = 0;  // (bit e: column e met an infinity or a NaN)
  if (c0 < g.outputs) {
    unsigned spw[4] = {};  // (each word's halves with exponent field 255: bits 15 / 31)
    wide_rows<1 << 20>(
        p, g.inner, k0 + w, k1,
        [&](const uint4& v) {
          const unsigned q[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            s[2 * j] += In::tiny_lo(q[j]);
            s[2 * j + 1] += In::tiny_hi(q[j]);
            spw[j] |= (q[j] & 0x7f807f80u) + 0x00800080u;  // (0x7f80 + 0x80 reaches bit 15; no carry past it)
          }
        },
        [](int) {});
#pragma unroll
    for (int e = 0; e < kWideShortCols; ++e) {
      s[e] *= In::kUnscale;  // (exact)
      if ((spw[e / 2] >> (16 * (e % 2))) & 0x8000u) sp |= 1u << e;
    }
    if (sp != 0) {  // (rare: the columns with an infinity or a NaN, again element by element)
#pragma unroll
      for (int e = 0; e < kWideShortCols; ++e) {  // (unrolled: s[] stays in registers)
        if ((sp >> e) & 1u) {
          A a = Op::identity();
#pragma unroll 1
          for (std::int64_t k = k0 + w; k < k1; k += kColWarps) Op::accumulate(a, __ldg(p + k * g.inner + e), k);
          s[e] = a;
        }
      }
    }
  }
#pragma unroll
  for (int e = 0; e < kWideShortCols; ++e) sh[w][lane * kWideShortCols + e] = s[e];
  __syncthreads();
  const int c = threadIdx.x;  // (this thread's tile column: kBlock == kWideShortTile)
  static_assert(kBlock == kWideShortTile);
  const std::int64_t col = t0 + c;
  if (col < g.outputs) {
    A v = sh[0][c];
#pragma unroll
    for (int i = 1; i < kColWarps; ++i) v = Op::combine(v, sh[i][c]);  // (warp order, as cols_body's warp 0)
    if (gridDim.y == 1) op.write(col, v, g.len);
    else partials[static_cast<std::int64_t>(blockIdx.y) * g.outputs + col] = v;
  }
  if (gridDim.y > 1 && last_chunk(tickets, f) && col < g.outputs) {
    // cols_body's order: part i takes chunks i, i + 8, ... from the identity, then the 8
    // parts meet in order
    A part[kColWarps];
#pragma unroll
    for (int i = 0; i < kColWarps; ++i) part[i] = Op::identity();
    unsigned y = 0;
    for (; y + kColWarps <= gridDim.y; y += kColWarps) {
      A q[kColWarps];
#pragma unroll
      for (int i = 0; i < kColWarps; ++i) q[i] = __ldcg(partials + static_cast<std::int64_t>(y + i) * g.outputs + col);
#pragma unroll
      for (int i = 0; i < kColWarps; ++i) part[i] = Op::combine(part[i], q[i]);
    }
#pragma unroll
    for (int i = 0; i < kColWarps; ++i)
      if (y + i < gridDim.y) part[i] = Op::combine(part[i], __ldcg(partials + static_cast<std::int64_t>(y + i) * g.outputs + col));
    A v = part[0];
#pragma unroll
    for (int i = 1; i < kColWarps; ++i) v = Op::combine(v, part[i]);
    op.write(col, v, g.len);
  }
  block_done(f);
}

}  // namespace tally::cuda::shapes_k::v3
