// Experiment (not part of the library or its tests): can integer sums along short CSR segments
// read at the read kernel's rate when the blocks take flat tiles of the input, not segments?
// Self-contained (no library headers). Build: scripts/flat-seg-probe.sh (nvcc -arch=sm_90).
//
// The library's segments (src/cuda/shapes_v3.cuh rows_body) give each short segment a group of
// 1 to 32 lanes, so a segment of 200 bytes is a few dependent rounds of loads that its lanes
// wait on (run 172 ncu: half occupancy, 62% of the cycles on a long scoreboard); int8 sums along
// segments of 200 read at 0.73 of the read kernel (run 191, H100, stream-ordered), uint64 at 0.86.
//
// flat_seg_sum<T, V>: block b reads tile b, kBlock x V 16-byte vectors of the input (lane j of
// warp w reads vector i kBlock + 32 w + j: every warp load 512 contiguous bytes), all V loads in
// flight before anything else. Meanwhile the block finds the tile's segments: two 128-ary
// searches of the offsets (threads 0-127 for the tile's start, 128-255 for its end; ~3 rounds
// for 335,544 segments). The tile's segments go through shared memory in windows of kCap:
//   - their boundaries, relative to the tile, and for every vector slot the segment of its
//     first element (so a lane finds its vector's segment in one shared load);
//   - each lane's vector in pieces, one a segment it meets; a piece's sum (int8: __dp4a on
//     masked words) goes to the segment's 64-bit shared sum;
//   - the warp first merges its lanes' pieces of the same segment (a lane's first piece into
//     the lane before's last, then a segmented suffix scan over the lanes' last pieces: lanes
//     hold consecutive vectors, so a segment's lanes are consecutive), so one shared atomic a
//     segment a warp, not a lane.
// A segment inside its tile is stored; one that spans tiles is added (atomicAdd) into its output,
// which is zeroed first (cudaMemsetAsync, timed with the kernel: the library would use its
// zeroed scratch words and a ticket, as the byte columns do). Sums are exact (64-bit integers,
// two's complement for the signed types), so the order of the atomics cannot change a result.
//
// Cases (n = 2^26 elements): equal segments of 200 (the benchmark's), of 8192, random lengths
// 0..400, the benchmark's uneven segments (10,000 of 0-3 elements around one of ~2^26), and one
// segment. Each checked against the host's sums; prints the median of 7 batches of 20 launches
// (CUDA events) as GB/s of input and as a fraction of a 16-byte grid-stride read kernel over the
// same bytes, for int8, uint8, int16, uint32 and uint64, tiles of 16, 32 and 64 KiB (V 4, 8, 16).
// flat_seg_sum_persistent<T, V>: the same tiles taken by one wave of blocks in turn (tile
// blockIdx.x, + gridDim.x, ...), each block loading its next tile's vectors before the current
// tile's searches and sums (V 4 and 8).
// "guessed" (fifty-sixth session, after run 192: each block lived ~11 us, its chain of dependent
// reads): one block a tile, whose first segment is guessed as if the segments were equal; a
// 256-wide load of the offsets around the guess gives the tile's first and last segments and,
// when they lie in it, the window's boundaries (one dependent read a tile, the searches only
// when the guess misses); each vector's segment by a binary search of the window's boundaries
// in shared memory (no per-segment slot loop) (V 4 and 8).
// "warp/chunk" (flat_seg_sum_warp): a warp a chunk of 32 V vectors (2 / 4 KiB), no block
// barriers, the same guess with a 32-wide offsets load, windows of 31 segments in the warp's
// own shared words (V 4 and 8).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "probe_common.cuh"  // (CK, read_kernel)

constexpr int kBlock = 256, kWarps = kBlock / 32;
constexpr int kCap = 1024;  // segments a window

using u64 = unsigned long long;

/// The sum of elements [e, end) of a 16-byte vector of T (0 <= e < end <= 16 / sizeof(T)), as
/// a 64-bit two's complement word.
template <class T> __device__ __forceinline__ u64 piece_sum(const uint4& v, int e, int end) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
  if constexpr (sizeof(T) == 1) {
    int s = 0;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int lo = min(max(e - 4 * q, 0), 4), hi = min(max(end - 4 * q, 0), 4);
      const unsigned m = static_cast<unsigned>(((1ull << (8 * hi)) - 1) & ~((1ull << (8 * lo)) - 1));
      if constexpr (std::is_signed_v<T>) s = __dp4a(static_cast<int>(w[q] & m), 0x01010101, s);
      else s = static_cast<int>(__dp4a(w[q] & m, 0x01010101u, static_cast<unsigned>(s)));
    }
    return static_cast<u64>(static_cast<long long>(s));
  } else if constexpr (sizeof(T) == 2) {
    int s = 0;  // (8 halves of at most 2^16: an int holds their sum)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int lo = std::is_signed_v<T> ? static_cast<int>(static_cast<short>(w[q] & 0xffffu)) : static_cast<int>(w[q] & 0xffffu);
      const int hi = std::is_signed_v<T> ? static_cast<int>(w[q]) >> 16 : static_cast<int>(w[q] >> 16);
      s += (2 * q >= e && 2 * q < end ? lo : 0) + (2 * q + 1 >= e && 2 * q + 1 < end ? hi : 0);
    }
    return static_cast<u64>(static_cast<long long>(s));
  } else {
    constexpr int E = 16 / sizeof(T);
    T el[E];
    std::memcpy(el, w, 16);
    long long s = 0;
#pragma unroll
    for (int i = 0; i < E; ++i)
      if (i >= e && i < end) s += static_cast<long long>(el[i]);
    return static_cast<u64>(s);
  }
}

/// The last of the window's segments 0..wm-1 starting at or before r (offs: their wm + 1
/// boundaries, non-decreasing, offs[0] <= r): a binary search in shared memory.
__device__ __forceinline__ int last_at_or_before(const int* offs, int wm, int r) {
  int lo = 0, hi = wm - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (offs[mid] <= r) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/// A warp's 32 consecutive vectors (this lane's: elements r .. r + E - 1, relative) into the
/// window's segment sums (sums; offs: the window's boundaries, [wa, wb) its elements; j0: the
/// segment of element r when r lies in the window). Each lane's vector in pieces, one a segment
/// it meets; a lane's first piece joins the lane before's last when they are the same segment,
/// then a segmented suffix sum over the lanes' last pieces (a segment's lanes are consecutive),
/// so one shared atomic a segment a warp. Every lane of the warp calls it.
template <class T>
__device__ __forceinline__ void add_pieces(const uint4& v, int r, int wa, int wb, int j0, const int* offs, u64* sums, int lane) {
  constexpr int E = 16 / sizeof(T);
  int ck = -1, hk = -1;  // (the last piece's and, when it differs, the first piece's segment)
  u64 cv = 0, hv = 0;
  if (r < wb && r + E > wa) {
    int e = wa > r ? wa - r : 0;
    const int e_end = wb - r < E ? wb - r : E;
    int j = j0;
    int pieces = 0;
    while (e < e_end) {
      const int b = offs[j + 1] - r;
      const int end = b < e_end ? b : e_end;
      if (end > e) {
        const u64 s = (e == 0 && end == E) ? piece_sum<T>(v, 0, E) : piece_sum<T>(v, e, end);
        if (pieces == 1) {
          hk = ck;
          hv = cv;
        } else if (pieces > 1) {
          atomicAdd(&sums[ck], cv);  // (a whole segment inside the vector)
        }
        ck = j;
        cv = s;
        ++pieces;
        e = end;
      }
      ++j;
    }
  }
  // the first piece joins the lane before's last when that is the same segment
  const int nk = __shfl_down_sync(0xffffffffu, hk, 1);
  const u64 nv = __shfl_down_sync(0xffffffffu, hv, 1);
  if (lane < 31 && nk >= 0 && nk == ck) cv += nv;
  const int pk = __shfl_up_sync(0xffffffffu, ck, 1);
  if (hk >= 0 && !(lane > 0 && pk == hk)) atomicAdd(&sums[hk], hv);
  // the last pieces: a segmented suffix sum over the lanes
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const u64 t = __shfl_down_sync(0xffffffffu, cv, d);
    const int tk = __shfl_down_sync(0xffffffffu, ck, d);
    if (lane + d < 32 && tk == ck) cv += t;
  }
  if (ck >= 0 && (lane == 0 || pk != ck)) atomicAdd(&sums[ck], cv);
}

/// The shared memory of one tile's sums.
template <int V> struct tile_shared {
  int off[kCap + 1];                    // the window's boundaries, relative to the tile, clamped to [0, len]
  u64 sum[kCap];                        // (window segments)
  unsigned short first[kBlock * V];     // (vector slots) the window segment of the slot's first element
  std::int64_t bound[2][2];             // (targets, lo / hi)
  int cnt[kWarps];
  int cnt2[kWarps];
  int hit[kWarps];
};

/// Loads tile `tile` of x (kBlock V vectors; lane j of warp w vector i kBlock + 32 w + j), zeros past n.
template <class T, int V> __device__ __forceinline__ void load_tile(const T* __restrict__ x, std::int64_t n, std::int64_t tile, uint4 (&v)[V]) {
  constexpr int E = 16 / sizeof(T);
  constexpr std::int64_t kTile = std::int64_t(kBlock) * V * E;
  const std::int64_t t0 = tile * kTile;
  const std::int64_t len = t0 + kTile < n ? kTile : n - t0;
  const uint4* xv = reinterpret_cast<const uint4*>(x + t0);
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int slot = i * kBlock + threadIdx.x;
    v[i] = slot * E < len ? __ldg(xv + slot) : make_uint4(0, 0, 0, 0);
  }
}

/// Sums of x (n elements of T, 16-byte aligned, n a multiple of 16 / sizeof(T)) along the segments
/// [off[s], off[s + 1]) (off: segs + 1 non-decreasing offsets, off[0] = 0, off[segs] = n), into
/// out (segs 64-bit words, zero before the launch), for tile `tile`, whose vectors v holds.
template <class T, int V, bool G>
__device__ __forceinline__ void tile_sums(tile_shared<V>& sh, const uint4 (&v)[V], std::int64_t tile, std::int64_t n,
                                          const std::int64_t* __restrict__ off, std::int64_t segs, u64* out) {
  constexpr int E = 16 / sizeof(T);        // elements a vector
  constexpr int kTile = kBlock * V * E;    // elements a tile
  int* sh_off = sh.off;
  u64* sh_sum = sh.sum;
  unsigned short* sh_first = sh.first;
  auto& sh_bound = sh.bound;
  int* sh_cnt = sh.cnt;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const std::int64_t t0 = tile * kTile;
  const std::int64_t t1 = t0 + kTile < n ? t0 + kTile : n;
  const int len = static_cast<int>(t1 - t0);
  __syncthreads();  // (the tile before is done with the shared words)
  // 2. A = the first segment starting at or after t0, B = the first starting at or after t1
  // (the last tile: segs + 1, so the empty segments at n are its)
  const std::int64_t target1 = t1 == n ? n + 1 : t1;
  // G: one 256-wide load of the offsets around where A would be were the segments equal; when
  // A and B both fall inside it, it gives them and, if the tile's boundaries lie in it too,
  // the first window's offsets (one dependent read a tile); else the searches below
  bool guessed = false, direct = false;
  std::int64_t gA = 0, gB = 0, g_in = 0;
  if constexpr (G) {
    const double frac = static_cast<double>(t0) / static_cast<double>(n);
    std::int64_t g0 = static_cast<std::int64_t>(frac * static_cast<double>(segs)) - 64;
    if (g0 > segs + 1 - kBlock) g0 = segs + 1 - kBlock;
    if (g0 < 0) g0 = 0;
    const int width = segs + 1 - g0 < kBlock ? static_cast<int>(segs + 1 - g0) : kBlock;
    const std::int64_t p = g0 + tid;
    const bool in = tid < width;
    const std::int64_t o = in ? __ldg(off + p) : 0;
    const unsigned b0 = __ballot_sync(0xffffffffu, in && o < t0), b1 = __ballot_sync(0xffffffffu, in && o < target1),
                   b2 = __ballot_sync(0xffffffffu, in && o == t0);
    if (lane == 0) {
      sh_cnt[warp] = __popc(b0);
      sh.cnt2[warp] = __popc(b1);
      sh.hit[warp] = b2 != 0;
    }
    __syncthreads();
    int c0 = 0, c1 = 0;
    bool hit = false;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      c0 += sh_cnt[w];
      c1 += sh.cnt2[w];
      hit |= sh.hit[w] != 0;
    }
    const bool okA = (c0 > 0 || g0 == 0) && c0 < width;  // (A = g0 + c0 lies in the window; A <= segs always)
    const bool okB = (c1 > 0 || g0 == 0) && (c1 < width || g0 + width == segs + 1);
    guessed = okA && okB;
    if (guessed) {
      gA = g0 + c0;
      gB = g0 + c1;
      g_in = gA > 0 && !hit ? gA - 1 : gA;  // (off[A] == t0: no segment straddles t0)
      const std::int64_t g_end = gB < segs ? gB : segs;
      direct = g_in >= g0 && g_end < g0 + width && g_end - g_in <= kCap;
      if (direct && p >= g_in && p <= g_end) {  // (the first window's boundaries, from the same load)
        const std::int64_t rel = o - t0;
        sh_off[p - g_in] = static_cast<int>(rel < 0 ? 0 : rel > len ? len : rel);
        if (p < g_end) sh_sum[p - g_in] = 0;
      }
    }
  }
  const int grp = tid / 128, k = tid % 128;
  const std::int64_t target = grp == 0 ? t0 : target1;
  if (!guessed) {
  if (tid < 2) {
    sh_bound[tid][0] = 0;
    sh_bound[tid][1] = segs + 1;  // (the answer lies in [lo, hi])
  }
  __syncthreads();
  for (;;) {
    const std::int64_t lo = sh_bound[grp][0], hi = sh_bound[grp][1];
    if (sh_bound[0][0] == sh_bound[0][1] && sh_bound[1][0] == sh_bound[1][1]) break;  // (uniform)
    const std::int64_t step = (hi - lo + 127) / 128;
    const std::int64_t p = lo + k * step;
    const bool pred = lo < hi && p < hi && __ldg(off + p) < target;
    const unsigned b = __ballot_sync(0xffffffffu, pred);
    if (lane == 0) sh_cnt[warp] = __popc(b);
    __syncthreads();
    if (k == 0 && lo < hi) {
      const int c = sh_cnt[4 * grp] + sh_cnt[4 * grp + 1] + sh_cnt[4 * grp + 2] + sh_cnt[4 * grp + 3];
      // (the samples lo + i step below the answer are the first c)
      const std::int64_t nlo = c == 0 ? lo : lo + (c - 1) * step + 1;
      const std::int64_t nhi = c == 0 ? lo : (lo + c * step < hi ? lo + c * step : hi);
      sh_bound[grp][0] = nlo;
      sh_bound[grp][1] = nhi;
    }
    __syncthreads();
  }
  }
  const std::int64_t A = guessed ? gA : sh_bound[0][0], B = guessed ? gB : sh_bound[1][0];
  const std::int64_t s_in = guessed ? g_in : A > 0 && __ldg(off + A) > t0 ? A - 1 : A;  // (A <= segs: off[segs] = n > t0)
  const std::int64_t s_end = B < segs ? B : segs;                       // (the tile's segments: [s_in, s_end))
  for (std::int64_t w0 = s_in; w0 < s_end; w0 += kCap) {
    const int wm = static_cast<int>(s_end - w0 < kCap ? s_end - w0 : kCap);
    __syncthreads();  // (the window before is done with the shared arrays; G: the direct offsets written)
    if (!direct) {
      for (int j = tid; j <= wm; j += kBlock) {
        const std::int64_t o = __ldg(off + w0 + j) - t0;
        sh_off[j] = static_cast<int>(o < 0 ? 0 : o > len ? len : o);
        if (j < wm) sh_sum[j] = 0;
      }
      __syncthreads();
    }
    direct = false;  // (one window only)
    if constexpr (!G) {
      for (int j = tid; j < wm; j += kBlock)  // (the slots whose first element segment j holds)
        for (int q = (sh_off[j] + E - 1) / E; q * E < sh_off[j + 1]; ++q) sh_first[q] = static_cast<unsigned short>(j);
      __syncthreads();
    }
    const int wa = sh_off[0], wb = sh_off[wm];  // (the window's elements, relative)
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int r = (i * kBlock + tid) * E;  // (this lane's vector's first element, relative)
      const int j0 = r < wa || r >= wb ? 0 : G ? last_at_or_before(sh_off, wm, r) : sh_first[r / E];
      add_pieces<T>(v[i], r, wa, wb, j0, sh_off, sh_sum, lane);
    }
    __syncthreads();
    for (int j = tid; j < wm; j += kBlock) {
      const std::int64_t s = w0 + j;
      if (s >= A && __ldg(off + s + 1) <= t1) out[s] = sh_sum[j];  // (inside the tile: this block's alone)
      else atomicAdd(out + s, sh_sum[j]);                           // (spans tiles)
    }
  }
}

/// One block a tile (grid: the tiles); G: the guessed first segment (tile_sums).
template <class T, int V, bool G = false>
__global__ void __launch_bounds__(kBlock) flat_seg_sum(const T* __restrict__ x, std::int64_t n, const std::int64_t* __restrict__ off,
                                                       std::int64_t segs, u64* out) {
  __shared__ tile_shared<V> sh;
  uint4 v[V];
  load_tile<T, V>(x, n, blockIdx.x, v);  // (all in flight before the tile's searches)
  tile_sums<T, V, G>(sh, v, blockIdx.x, n, off, segs, out);
}

/// Persistent blocks (grid: one wave), tiles blockIdx.x, + gridDim.x, ...; the next tile's
/// vectors are loaded before the current tile's searches and sums.
template <class T, int V>
__global__ void __launch_bounds__(kBlock) flat_seg_sum_persistent(const T* __restrict__ x, std::int64_t n, const std::int64_t* __restrict__ off,
                                                                  std::int64_t segs, u64* out) {
  __shared__ tile_shared<V> sh;
  constexpr std::int64_t kTile = std::int64_t(kBlock) * V * (16 / sizeof(T));
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  uint4 v[V], w[V];
  std::int64_t t = blockIdx.x;
  if (t < tiles) load_tile<T, V>(x, n, t, v);
  for (; t < tiles; t += gridDim.x) {
    if (t + gridDim.x < tiles) load_tile<T, V>(x, n, t + gridDim.x, w);
    tile_sums<T, V, false>(sh, v, t, n, off, segs, out);
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = w[i];
  }
}

/// The first index in off[0 .. segs] (non-decreasing) whose offset is at least target, or segs + 1:
/// a 32-ary search by the warp (every lane calls it; the same answer in each).
__device__ __forceinline__ std::int64_t warp_lower_bound(const std::int64_t* __restrict__ off, std::int64_t segs, std::int64_t target, int lane) {
  std::int64_t lo = 0, hi = segs + 1;  // (the answer lies in [lo, hi])
  while (lo < hi) {
    const std::int64_t step = (hi - lo + 31) / 32;
    const std::int64_t p = lo + lane * step;
    const int c = __popc(__ballot_sync(0xffffffffu, p < hi && __ldg(off + p) < target));
    const std::int64_t nlo = c == 0 ? lo : lo + (c - 1) * step + 1;
    hi = c == 0 ? lo : (lo + c * step < hi ? lo + c * step : hi);
    lo = nlo;
  }
  return lo;
}

/// A warp a chunk of 32 V vectors, no block barriers (grid: the chunks / kWarps): the chunk's
/// vectors and a 32-wide load of the offsets around an equal-segments guess of its first
/// segment go out together; when the chunk's first and last segments fall in that load (the
/// usual case for segments of a few vectors or more), it gives their boundaries too (else
/// 32-ary searches and loads of the boundaries); windows of 31 segments through the warp's own
/// shared words. Each warp's chain: one dependent offsets read, the stores.
template <class T, int V>
__global__ void __launch_bounds__(kBlock) flat_seg_sum_warp(const T* __restrict__ x, std::int64_t n, const std::int64_t* __restrict__ off,
                                                            std::int64_t segs, u64* out) {
  constexpr int E = 16 / sizeof(T);
  constexpr std::int64_t kChunk = std::int64_t(32) * V * E;  // elements a chunk
  __shared__ int sh_off[kWarps][33];
  __shared__ u64 sh_sum[kWarps][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t t0 = (static_cast<std::int64_t>(blockIdx.x) * kWarps + warp) * kChunk;
  if (t0 >= n) return;  // (the whole warp)
  const std::int64_t t1 = t0 + kChunk < n ? t0 + kChunk : n;
  const int len = static_cast<int>(t1 - t0);
  uint4 v[V];
  const uint4* xv = reinterpret_cast<const uint4*>(x + t0);
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int slot = i * 32 + lane;
    v[i] = slot * E < len ? __ldg(xv + slot) : make_uint4(0, 0, 0, 0);
  }
  const std::int64_t target1 = t1 == n ? n + 1 : t1;
  std::int64_t g0 = static_cast<std::int64_t>(static_cast<double>(t0) / static_cast<double>(n) * static_cast<double>(segs)) - 8;
  if (g0 > segs + 1 - 32) g0 = segs + 1 - 32;
  if (g0 < 0) g0 = 0;
  const int width = segs + 1 - g0 < 32 ? static_cast<int>(segs + 1 - g0) : 32;
  const std::int64_t o = lane < width ? __ldg(off + g0 + lane) : 0;
  const unsigned b0 = __ballot_sync(0xffffffffu, lane < width && o < t0), b1 = __ballot_sync(0xffffffffu, lane < width && o < target1),
                 b2 = __ballot_sync(0xffffffffu, lane < width && o == t0);
  const int c0 = __popc(b0), c1 = __popc(b1);
  const bool guessed = (c0 > 0 || g0 == 0) && c0 < width && (c1 > 0 || g0 == 0) && (c1 < width || g0 + width == segs + 1);
  std::int64_t A, B;
  bool hit;
  if (guessed) {
    A = g0 + c0;
    B = g0 + c1;
    hit = b2 != 0;
  } else {
    A = warp_lower_bound(off, segs, t0, lane);
    B = warp_lower_bound(off, segs, target1, lane);
    hit = __ldg(off + A) == t0;  // (A <= segs: off[segs] = n > t0)
  }
  const std::int64_t s_in = A > 0 && !hit ? A - 1 : A;
  const std::int64_t s_end = B < segs ? B : segs;  // (the chunk's segments: [s_in, s_end))
  int* offs = sh_off[warp];
  u64* sums = sh_sum[warp];
  for (std::int64_t w0 = s_in; w0 < s_end; w0 += 31) {
    const int wm = static_cast<int>(s_end - w0 < 31 ? s_end - w0 : 31);
    std::int64_t ob;  // (boundary w0 + lane, lanes 0..wm)
    if (guessed && w0 >= g0 && w0 + wm < g0 + width) {
      ob = __shfl_sync(0xffffffffu, o, static_cast<int>(w0 - g0) + lane);  // (from the guessed load)
    } else {
      ob = lane <= wm ? __ldg(off + w0 + lane) : 0;
    }
    const std::int64_t rel = ob - t0;
    if (lane <= wm) offs[lane] = static_cast<int>(rel < 0 ? 0 : rel > len ? len : rel);
    if (lane < wm) sums[lane] = 0;
    __syncwarp();
    const int wa = offs[0], wb = offs[wm];
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int r = (i * 32 + lane) * E;
      const int j0 = r < wa || r >= wb ? 0 : last_at_or_before(offs, wm, r);
      add_pieces<T>(v[i], r, wa, wb, j0, offs, sums, lane);
    }
    __syncwarp();
    const std::int64_t next = __shfl_down_sync(0xffffffffu, ob, 1);  // (boundary w0 + lane + 1)
    if (lane < wm) {
      const std::int64_t s = w0 + lane;
      if (s >= A && next <= t1) out[s] = sums[lane];  // (inside the chunk: this warp's alone)
      else atomicAdd(out + s, sums[lane]);            // (spans chunks)
    }
    __syncwarp();  // (before the next window's words)
  }
}

template <class T> const char* type_name() {
  if constexpr (std::is_same_v<T, std::int8_t>) return "int8";
  else if constexpr (std::is_same_v<T, std::uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<T, std::int16_t>) return "int16";
  else if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32";
  else return "uint64";
}

struct ctx {
  cudaEvent_t e0, e1;
  unsigned* sink;
  void* buf;    // 2^26 x 8 bytes
  u64* out;     // 2^26 words
  std::int64_t* doff;
};

template <class F> double time_it(ctx& c, F&& launch) {
  for (int i = 0; i < 5; ++i) launch();
  std::vector<float> per;
  for (int b = 0; b < 7; ++b) {
    CK(cudaEventRecord(c.e0));
    for (int i = 0; i < 20; ++i) launch();
    CK(cudaEventRecord(c.e1));
    CK(cudaEventSynchronize(c.e1));
    CK(cudaGetLastError());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, c.e0, c.e1));
    per.push_back(ms * 1e3f / 20);
  }
  std::sort(per.begin(), per.end());
  return double(per[per.size() / 2]);  // us
}

template <class T, int V, bool P, bool G = false, bool W = false>
bool run_case(ctx& c, std::int64_t n, const std::vector<std::int64_t>& off, const char* name, double t_read, const std::vector<u64>& ref) {
  const std::int64_t segs = static_cast<std::int64_t>(off.size()) - 1;
  CK(cudaMemcpy(c.doff, off.data(), off.size() * 8, cudaMemcpyHostToDevice));
  constexpr std::int64_t tile = std::int64_t(kBlock) * V * (16 / sizeof(T));
  unsigned grid = static_cast<unsigned>((n + tile - 1) / tile);  // (W: a block is kWarps chunks of 32 V vectors, the same elements as a tile)
  if constexpr (P) {  // (one wave of resident blocks)
    int per_sm = 0, sms = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, flat_seg_sum_persistent<T, V>, kBlock, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    grid = std::min<unsigned>(grid, static_cast<unsigned>(per_sm * sms));
  }
  auto launch = [&] {
    CK(cudaMemsetAsync(c.out, 0, segs * 8));
    if constexpr (W) flat_seg_sum_warp<T, V><<<grid, kBlock>>>(static_cast<const T*>(c.buf), n, c.doff, segs, c.out);
    else if constexpr (P) flat_seg_sum_persistent<T, V><<<grid, kBlock>>>(static_cast<const T*>(c.buf), n, c.doff, segs, c.out);
    else flat_seg_sum<T, V, G><<<grid, kBlock>>>(static_cast<const T*>(c.buf), n, c.doff, segs, c.out);
  };
  CK(cudaMemset(c.out, 0xa5, segs * 8));  // (garbage before: the launch must zero what it adds into)
  launch();
  CK(cudaDeviceSynchronize());
  CK(cudaGetLastError());
  std::vector<u64> got(static_cast<std::size_t>(segs));
  CK(cudaMemcpy(got.data(), c.out, segs * 8, cudaMemcpyDeviceToHost));
  std::int64_t bad = 0, first_bad = -1;
  for (std::int64_t s = 0; s < segs; ++s) {
    if (got[std::size_t(s)] != ref[std::size_t(s)]) {
      if (first_bad < 0) first_bad = s;
      ++bad;
    }
  }
  const double t = time_it(c, launch);
  const double t_zero = time_it(c, [&] { CK(cudaMemsetAsync(c.out, 0, segs * 8)); });
  const double gb = double(n) * sizeof(T) / 1e3;
  std::printf("%-7s %-10s %s tile %6lld B grid %6u %9lld segs: %8.2f us %7.1f GB/s  %.3f of read (memset alone %.2f us)  %s",
              type_name<T>(), name, W ? "warp/chunk" : P ? "persistent" : G ? "guessed   " : "block/tile", (long long)((W ? tile / kWarps : tile) * sizeof(T)), grid, (long long)segs, t, gb / t, t_read / t, t_zero,
              bad == 0 ? "checked: all equal\n" : "");
  if (bad != 0) std::printf("WRONG: %lld segments differ, first %lld\n", (long long)bad, (long long)first_bad);
  return bad == 0;
}

template <class T> bool run_type(ctx& c, std::int64_t n) {
  std::vector<T> h(static_cast<std::size_t>(n));
  std::mt19937_64 g(7);
  for (auto& e : h) e = static_cast<T>(std::is_same_v<T, std::uint64_t> ? g() >> 24 : g());
  CK(cudaMemcpy(c.buf, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  const std::int64_t words = n * std::int64_t(sizeof(T)) / 16;
  const double t_read = time_it(c, [&] { read_kernel<<<132 * 8, 256>>>(static_cast<const int4*>(c.buf), words, c.sink); });
  std::printf("%-7s read kernel %8.2f us %7.1f GB/s\n", type_name<T>(), t_read, double(n) * sizeof(T) / 1e3 / t_read);
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> cases;
  {
    std::vector<std::int64_t> o;
    for (std::int64_t i = 0; i < n / 200; ++i) o.push_back(i * 200);
    o.push_back(n);
    cases.push_back({"equal200", o});
    o.clear();
    for (std::int64_t i = 0; i < n / 8192; ++i) o.push_back(i * 8192);
    o.push_back(n);
    cases.push_back({"equal8192", o});
    o.assign(1, 0);
    std::mt19937_64 r(11);
    while (o.back() < n) o.push_back(std::min<std::int64_t>(n, o.back() + std::int64_t(r() % 401)));
    cases.push_back({"rand0-400", o});
    const std::int64_t segs = 10001;  // (bench/gpu_bench.cu uneven_offsets)
    std::int64_t tiny = 0;
    for (std::int64_t s = 0; s < segs; ++s) tiny += s == segs / 2 ? 0 : s % 4;
    o.assign(1, 0);
    for (std::int64_t s = 0; s < segs; ++s) o.push_back(o.back() + (s == segs / 2 ? n - tiny : s % 4));
    cases.push_back({"uneven", o});
    cases.push_back({"one", {0, n}});
  }
  bool ok = true;
  for (const auto& [name, o] : cases) {
    std::vector<u64> ref(o.size() - 1, 0);  // (the host's sums, 64-bit two's complement)
    for (std::size_t s = 0; s + 1 < o.size(); ++s)
      for (std::int64_t i = o[s]; i < o[s + 1]; ++i) ref[s] += static_cast<u64>(static_cast<long long>(h[std::size_t(i)]));
    ok &= run_case<T, 4, false>(c, n, o, name.c_str(), t_read, ref);
    ok &= run_case<T, 8, false>(c, n, o, name.c_str(), t_read, ref);
    ok &= run_case<T, 16, false>(c, n, o, name.c_str(), t_read, ref);
    ok &= run_case<T, 4, false, true>(c, n, o, name.c_str(), t_read, ref);
    ok &= run_case<T, 8, false, true>(c, n, o, name.c_str(), t_read, ref);
    ok &= run_case<T, 4, false, false, true>(c, n, o, name.c_str(), t_read, ref);
    ok &= run_case<T, 8, false, false, true>(c, n, o, name.c_str(), t_read, ref);
    ok &= run_case<T, 4, true>(c, n, o, name.c_str(), t_read, ref);
    ok &= run_case<T, 8, true>(c, n, o, name.c_str(), t_read, ref);
  }
  return ok;
}

int main(int argc, char** argv) {
  const std::int64_t n = std::int64_t(1) << (argc > 1 ? std::atoi(argv[1]) : 26);
  ctx c{};
  CK(cudaEventCreate(&c.e0));
  CK(cudaEventCreate(&c.e1));
  CK(cudaMalloc(&c.sink, 4));
  CK(cudaMalloc(&c.buf, std::size_t(n) * 8));
  CK(cudaMalloc(&c.out, std::size_t(n) * 8));
  CK(cudaMalloc(&c.doff, std::size_t(n + 1) * 8));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("flat_seg_probe: %s, n = %lld\n", prop.name, (long long)n);
  bool ok = true;
  ok &= run_type<std::int8_t>(c, n);
  ok &= run_type<std::uint8_t>(c, n);
  ok &= run_type<std::int16_t>(c, n);
  ok &= run_type<std::uint32_t>(c, n);
  ok &= run_type<std::uint64_t>(c, n);
  std::printf(ok ? "all cases checked equal\n" : "SOME CASES WRONG\n");
  return ok ? 0 : 1;
}
