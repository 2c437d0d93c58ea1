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
// Status (fiftieth session): built for sm_90 without spills (but 16 bytes in the bool mean's
// form, at the 64 registers of 4 blocks a SM), never yet run on a GPU: the session's device
// calls got no machine. Off by default (plan byte_col_wide 0) until a device run passes
// ShapesNarrowColsWide.cuda and the narrow bench measures it against cols_body.
#pragma once

#include <cstdint>

#include "cuda/shapes_v3.cuh"

namespace tally::cuda::shapes_k::v3 {

inline constexpr int kWideCols = 16;                 // columns a lane: one 16-byte vector of bytes
inline constexpr int kWideTile = 32 * kWideCols;     // columns a block (512)
inline constexpr int kWideRows = 8;                  // rows in flight a lane
inline constexpr std::int64_t kWideChunk = 1 << 24;  // most rows a chunk (32-bit block sums, 16-bit run counts)

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
  __syncthreads();
  for (int c = threadIdx.x; c < kWideTile; c += kBlock) {  // (the 8 warps, in warp order)
    const std::int64_t col = t0 + c;
    if (col >= g.outputs) break;
    unsigned long long v = 0;
#pragma unroll
    for (int i = 0; i < kColWarps; ++i) {
      if constexpr (KEYS) v = max(v, sh[i][c]);
      else v += sh[i][c];
    }
    if (gridDim.y == 1) write(col, v);
    else if constexpr (KEYS) atomicMax(words + col, v);
    else atomicAdd(words + col, v);
  }
  if (gridDim.y > 1) {
    if (last_chunk(tickets, f)) {
      for (int c = threadIdx.x; c < kWideTile; c += kBlock) {
        const std::int64_t col = t0 + c;
        if (col >= g.outputs) break;
        write(col, atomicExch(words + col, 0ull));  // (read, and zero for the next call)
      }
    }
  }
  block_done(f);
}

}  // namespace tally::cuda::shapes_k::v3
