// Experiment (not part of the library or its tests): does the byte column reduction read
// faster when a warp reads more contiguous bytes of each row? Self-contained (no library
// headers). Build: scripts/byte-cols-probe.sh (nvcc -arch=sm_90).
//
// Column sums of a row-major R x 8192 uint8 matrix (uint64 results, checked against the host),
// in the library's column layout (src/cuda/shapes_v3.cuh cols_body kPackedBytes): 256-thread
// blocks, lane j of every warp owns VB adjacent columns and reads them as one VB-byte load a
// row; warp w takes rows w, w + 8, ... of the block's row chunk; U rows in flight a lane; the
// bytes are added two to a word in 16-bit halves and enter 32-bit sums every 256 rows.
//   VB = 4:  a warp reads 128 contiguous bytes of a row (the library's byte columns today)
//   VB = 8:  256 bytes (the 16-bit columns' width)
//   VB = 16: 512 bytes (the 32-bit columns' width)
// The row chunks fill one wave of resident blocks (the library's col_wave). Chunk merge:
//   part: each block writes its column sums as partials; the tile's last block (a ticket)
//         adds the chunks in chunk order (the library's way)
//   atom: each block adds its sums into 64-bit words with atomicAdd; the tile's last block
//         reads and clears them (atomicExch)
// The u16 variants read the same bytes as 4096 uint16 columns (cols_sum16): 8- or 16-byte lanes.
// Prints, per matrix and variant, the median over 7 batches of 20 back-to-back launches (CUDA
// events) as GB/s and as a fraction of a grid-stride 16-byte read kernel over the same bytes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_common.cuh"  // (CK, read_kernel)

constexpr int kBlock = 256, kWarps = 8;
constexpr std::int64_t kCols = 8192;
// Built with -DPROBE_RUNTIME_STRIDE (build/probe/byte_cols_probe_rt), the kernels' loads take
// the row stride from constant memory, known only at run time as the library's g.inner is,
// instead of the compile-time 8192 (immediate offsets from one address): the fifty-second
// session's question whether that is the library's last ~10% on the byte columns.
#ifdef PROBE_RUNTIME_STRIDE
__constant__ std::int64_t c_stride;
#define ROW_STRIDE c_stride
#else
#define ROW_STRIDE kCols
#endif

template <int VB> struct vec;
template <> struct vec<4> { using type = unsigned; };
template <> struct vec<8> { using type = uint2; };
template <> struct vec<16> { using type = uint4; };

// (rows, kCols) uint8 x; out: (kCols) uint64; chunk rows a block (a multiple of 8 U)
template <int VB, int U, bool ATOM>
__global__ void __launch_bounds__(kBlock, 4) cols_sum(const unsigned char* __restrict__ x, std::int64_t rows, std::int64_t chunk,
                                                      unsigned* partials, unsigned long long* sums, unsigned* tickets,
                                                      unsigned long long* out) {
  using V = typename vec<VB>::type;
  constexpr int W = VB / 4;            // words a row a lane
  constexpr int TILE = 32 * VB;        // columns a block
  __shared__ unsigned sh[kWarps][TILE];
  __shared__ bool last;
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::int64_t c0 = std::int64_t(blockIdx.x) * TILE + lane * VB;
  const std::int64_t k0 = std::int64_t(blockIdx.y) * chunk, k1 = min(k0 + chunk, rows);
  const unsigned char* p = x + c0;
  unsigned lo[W] = {}, hi[W] = {}, acc[VB] = {};
  int held = 0;
  auto flush = [&]() {
#pragma unroll
    for (int j = 0; j < W; ++j) {
      acc[4 * j + 0] += lo[j] & 0xffffu;
      acc[4 * j + 1] += hi[j] & 0xffffu;
      acc[4 * j + 2] += lo[j] >> 16;
      acc[4 * j + 3] += hi[j] >> 16;
      lo[j] = hi[j] = 0;
    }
    held = 0;
  };
  std::int64_t k = k0 + w;
  for (; k + (U - 1) * kWarps < k1; k += U * kWarps) {
    V r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = __ldg(reinterpret_cast<const V*>(p + (k + u * kWarps) * ROW_STRIDE));
#pragma unroll
    for (int u = 0; u < U; ++u) {
      unsigned q[W];
      __builtin_memcpy(q, &r[u], sizeof(V));
#pragma unroll
      for (int j = 0; j < W; ++j) {
        lo[j] += q[j] & 0x00ff00ffu;
        hi[j] += (q[j] >> 8) & 0x00ff00ffu;
      }
    }
    held += U;
    if (held == 256) flush();
  }
  for (; k < k1; k += kWarps) {
    V r = __ldg(reinterpret_cast<const V*>(p + k * ROW_STRIDE));
    unsigned q[W];
    __builtin_memcpy(q, &r, sizeof(V));
#pragma unroll
    for (int j = 0; j < W; ++j) {
      lo[j] += q[j] & 0x00ff00ffu;
      hi[j] += (q[j] >> 8) & 0x00ff00ffu;
    }
  }
  flush();
#pragma unroll
  for (int e = 0; e < VB; ++e) sh[w][lane * VB + e] = acc[e];
  __syncthreads();
  // each thread: columns t, t + 256, ... of the tile, summed over the 8 warps in warp order
  for (int c = threadIdx.x; c < TILE; c += kBlock) {
    unsigned s = 0;
#pragma unroll
    for (int i = 0; i < kWarps; ++i) s += sh[i][c];
    const std::int64_t col = std::int64_t(blockIdx.x) * TILE + c;
    if constexpr (ATOM) atomicAdd(sums + col, static_cast<unsigned long long>(s));
    else partials[std::int64_t(blockIdx.y) * kCols + col] = s;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const unsigned t = atomicAdd(&tickets[blockIdx.x], 1u);
    last = t == gridDim.y - 1;
    if (last) tickets[blockIdx.x] = 0;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int c = threadIdx.x; c < TILE; c += kBlock) {
    const std::int64_t col = std::int64_t(blockIdx.x) * TILE + c;
    unsigned long long s = 0;
    if constexpr (ATOM) {
      s = atomicExch(sums + col, 0ull);
    } else {
      unsigned y = 0;
      for (; y + 7 < gridDim.y; y += 8) {
        unsigned v[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = __ldcg(partials + std::int64_t(y + i) * kCols + col);
#pragma unroll
        for (int i = 0; i < 8; ++i) s += v[i];
      }
      for (; y < gridDim.y; ++y) s += __ldcg(partials + std::int64_t(y) * kCols + col);
    }
    out[col] = s;
  }
}


// Column max of uint8 with the first row of the max, the library's packed keys
// (cols_body kPackedExtremes): each byte becomes a 16-bit key, the byte above and
// 255 - its row in the lane's run of 256 rows below, bytes 0 and 2 of a word in `even`, 1 and 3
// in `odd`, max.u16x2 keeping the best key (of equal keys the first row). Every 256 rows the
// run's keys enter 32-bit states (byte, 0xffff - run, 255 - row in run). The block's warps meet
// as 64-bit keys (byte << 56 | 2^56 - 1 - row) in shared memory; chunks merge as `cols_sum`
// (ATOM: atomicMax on the 64-bit keys). out: the tile's 64-bit keys.
template <int VB, int U, bool ATOM>
__global__ void __launch_bounds__(kBlock, 3) cols_max(const unsigned char* __restrict__ x, std::int64_t rows, std::int64_t chunk,
                                                      unsigned* partials32, unsigned long long* keys, unsigned* tickets,
                                                      unsigned long long* out) {
  using V = typename vec<VB>::type;
  constexpr int W = VB / 4;
  constexpr int TILE = 32 * VB;
  constexpr unsigned long long kMask = (1ull << 56) - 1;
  __shared__ unsigned long long sh[kWarps][TILE];
  __shared__ bool last;
  unsigned long long* partials = reinterpret_cast<unsigned long long*>(partials32);
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::int64_t c0 = std::int64_t(blockIdx.x) * TILE + lane * VB;
  const std::int64_t k0 = std::int64_t(blockIdx.y) * chunk, k1 = min(k0 + chunk, rows);
  const unsigned char* p = x + c0;
  unsigned even[W] = {}, odd[W] = {}, best[VB] = {};
  unsigned run = 0;  // (runs of 256 of this lane's rows done)
  int held = 0;
  auto flush = [&]() {
#pragma unroll
    for (int j = 0; j < W; ++j) {
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const unsigned key = ((b & 1) ? odd[j] : even[j]) >> (16 * (b >> 1)) & 0xffffu;
        const unsigned s = (key >> 8) << 24 | (0xffffu - run) << 8 | (key & 0xffu);
        best[4 * j + b] = max(best[4 * j + b], s);
      }
      even[j] = odd[j] = 0;
    }
    ++run;
    held = 0;
  };
  constexpr auto sel = [](int b, int odd_half) {
    return static_cast<unsigned>((4 + b) | (odd_half << 4) | ((4 + b) << 8) | ((2 + odd_half) << 12));
  };
  struct row_bytes { unsigned t[U / 4]; };
  constexpr row_bytes kRowBytes = [] {
    row_bytes r{};
    for (int q = 0; q < U / 4; ++q)
      for (int b = 0; b < 4; ++b) r.t[q] |= static_cast<unsigned>(U - 1 - (4 * q + b)) << (8 * b);
    return r;
  }();
  std::int64_t k = k0 + w;
  for (; k + (U - 1) * kWarps < k1; k += U * kWarps) {
    V r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = __ldg(reinterpret_cast<const V*>(p + (k + u * kWarps) * ROW_STRIDE));
    const unsigned blk = ((255u - static_cast<unsigned>(held)) & (256u - U)) * 0x00010001u;
#pragma unroll
    for (int j = 0; j < W; ++j) {
      unsigned be = 0, bo = 0;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        unsigned q[W];
        __builtin_memcpy(q, &r[u], sizeof(V));
        be = __vmaxu2(be, __byte_perm(q[j], kRowBytes.t[u / 4], sel(u % 4, 0)));
        bo = __vmaxu2(bo, __byte_perm(q[j], kRowBytes.t[u / 4], sel(u % 4, 1)));
      }
      even[j] = __vmaxu2(even[j], be | blk);
      odd[j] = __vmaxu2(odd[j], bo | blk);
    }
    held += U;
    if (held == 256) flush();
  }
  for (; k < k1; k += kWarps) {
    V r = __ldg(reinterpret_cast<const V*>(p + k * ROW_STRIDE));
    unsigned q[W];
    __builtin_memcpy(q, &r, sizeof(V));
    const unsigned low = 255u - static_cast<unsigned>(held);
#pragma unroll
    for (int j = 0; j < W; ++j) {
      even[j] = __vmaxu2(even[j], __byte_perm(q[j], low, sel(0, 0)));
      odd[j] = __vmaxu2(odd[j], __byte_perm(q[j], low, sel(0, 1)));
    }
    ++held;
  }
  if (held > 0) flush();
#pragma unroll
  for (int e = 0; e < VB; ++e) {
    const unsigned s = best[e];
    const std::int64_t in_lane = std::int64_t(0xffffu - ((s >> 8) & 0xffffu)) * 256 + (255 - (s & 0xffu));
    const std::int64_t row = k0 + w + in_lane * kWarps;
    sh[w][lane * VB + e] = s == 0 ? 0ull : (static_cast<unsigned long long>(s >> 24) << 56 | (kMask - static_cast<unsigned long long>(row)));
  }
  __syncthreads();
  for (int c = threadIdx.x; c < TILE; c += kBlock) {
    unsigned long long m = 0;
#pragma unroll
    for (int i = 0; i < kWarps; ++i) m = max(m, sh[i][c]);
    const std::int64_t col = std::int64_t(blockIdx.x) * TILE + c;
    if constexpr (ATOM) atomicMax(keys + col, m);
    else partials[std::int64_t(blockIdx.y) * kCols + col] = m;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const unsigned t = atomicAdd(&tickets[blockIdx.x], 1u);
    last = t == gridDim.y - 1;
    if (last) tickets[blockIdx.x] = 0;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int c = threadIdx.x; c < TILE; c += kBlock) {
    const std::int64_t col = std::int64_t(blockIdx.x) * TILE + c;
    unsigned long long m = 0;
    if constexpr (ATOM) {
      m = atomicExch(keys + col, 0ull);
    } else {
      unsigned y = 0;
      for (; y + 7 < gridDim.y; y += 8) {
        unsigned long long v[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = __ldcg(partials + std::int64_t(y + i) * kCols + col);
#pragma unroll
        for (int i = 0; i < 8; ++i) m = max(m, v[i]);
      }
      for (; y < gridDim.y; ++y) m = max(m, __ldcg(partials + std::int64_t(y) * kCols + col));
    }
    out[col] = m;
  }
}

// Column sums of the same bytes read as a row-major R x 4096 uint16 matrix (a row 8192 bytes),
// lane j owning VB / 2 adjacent columns as one VB-byte load a row (the library's 16-bit
// columns: VB = 8, 256 contiguous bytes a warp; VB = 16: 512), each 16-bit value added into its
// 32-bit sum a row (the chunks here stay under 65537 rows a lane). Chunk merge: 64-bit atomics.
template <int VB, int U>
__global__ void __launch_bounds__(kBlock, 4) cols_sum16(const unsigned char* __restrict__ x, std::int64_t rows, std::int64_t chunk,
                                                        unsigned*, unsigned long long* sums, unsigned* tickets,
                                                        unsigned long long* out) {
  using V = typename vec<VB>::type;
  constexpr int W = VB / 4, E = VB / 2;  // words, columns a lane
  constexpr int TILE = 32 * E;           // columns a block
  constexpr std::int64_t kCols16 = kCols / 2;
  __shared__ unsigned sh[kWarps][TILE];
  __shared__ bool last;
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::int64_t k0 = std::int64_t(blockIdx.y) * chunk, k1 = min(k0 + chunk, rows);
  const unsigned char* p = x + (std::int64_t(blockIdx.x) * TILE + lane * E) * 2;
  unsigned acc[E] = {};
  auto add = [&](const V& r) {
    unsigned q[W];
    __builtin_memcpy(q, &r, sizeof(V));
#pragma unroll
    for (int j = 0; j < W; ++j) {
      acc[2 * j] += q[j] & 0xffffu;
      acc[2 * j + 1] += q[j] >> 16;
    }
  };
  std::int64_t k = k0 + w;
  for (; k + (U - 1) * kWarps < k1; k += U * kWarps) {
    V r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = __ldg(reinterpret_cast<const V*>(p + (k + u * kWarps) * ROW_STRIDE));
#pragma unroll
    for (int u = 0; u < U; ++u) add(r[u]);
  }
  for (; k < k1; k += kWarps) add(__ldg(reinterpret_cast<const V*>(p + k * ROW_STRIDE)));
#pragma unroll
  for (int e = 0; e < E; ++e) sh[w][lane * E + e] = acc[e];
  __syncthreads();
  for (int c = threadIdx.x; c < TILE; c += kBlock) {
    unsigned long long s = 0;
#pragma unroll
    for (int i = 0; i < kWarps; ++i) s += sh[i][c];
    atomicAdd(sums + std::int64_t(blockIdx.x) * TILE + c, s);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const unsigned t = atomicAdd(&tickets[blockIdx.x], 1u);
    last = t == gridDim.y - 1;
    if (last) tickets[blockIdx.x] = 0;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int c = threadIdx.x; c < TILE; c += kBlock) {
    const std::int64_t col = std::int64_t(blockIdx.x) * TILE + c;
    out[col] = atomicExch(sums + col, 0ull);
  }
  (void)kCols16;
}

struct variant {
  const char* name;
  void (*kernel)(const unsigned char*, std::int64_t, std::int64_t, unsigned*, unsigned long long*, unsigned*, unsigned long long*);
  int vb, u;
  bool max;
  bool u16 = false;  // (rows, 4096) uint16: tiles of 16 VB columns
};

int main(int argc, char** argv) {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("GPU: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  const variant vs[] = {
      {"v4-u32-part", cols_sum<4, 32, false>, 4, 32},   {"v4-u32-atom", cols_sum<4, 32, true>, 4, 32},
      {"v8-u16-part", cols_sum<8, 16, false>, 8, 16},   {"v8-u16-atom", cols_sum<8, 16, true>, 8, 16},
      {"v16-u8-part", cols_sum<16, 8, false>, 16, 8},   {"v16-u8-atom", cols_sum<16, 8, true>, 16, 8},
      {"v16-u4-atom", cols_sum<16, 4, true>, 16, 4},    {"v8-u8-atom", cols_sum<8, 8, true>, 8, 8},
      {"max-v4-u32-part", cols_max<4, 32, false>, 4, 32, true},  {"max-v4-u32-atom", cols_max<4, 32, true>, 4, 32, true},
      {"max-v8-u16-atom", cols_max<8, 16, true>, 8, 16, true},   {"max-v16-u8-part", cols_max<16, 8, false>, 16, 8, true},
      {"max-v16-u8-atom", cols_max<16, 8, true>, 16, 8, true},   {"max-v16-u4-atom", cols_max<16, 4, true>, 16, 4, true},
      {"u16-v8-u8-atom", cols_sum16<8, 8>, 8, 8, false, true},   {"u16-v8-u16-atom", cols_sum16<8, 16>, 8, 16, false, true},
      {"u16-v16-u8-atom", cols_sum16<16, 8>, 16, 8, false, true}, {"u16-v16-u4-atom", cols_sum16<16, 4>, 16, 4, false, true},
  };
  std::vector<std::int64_t> row_counts = {8192, 32768};
  if (argc > 1) row_counts = {std::atoll(argv[1])};
  const std::int64_t max_rows = *std::max_element(row_counts.begin(), row_counts.end());
  unsigned char* x = nullptr;
  CK(cudaMalloc(&x, std::size_t(max_rows) * kCols));
  std::vector<unsigned char> h(std::size_t(max_rows) * kCols);
  unsigned long long st = 12345;
  for (auto& b : h) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    b = static_cast<unsigned char>(st >> 56);
  }
  CK(cudaMemcpy(x, h.data(), h.size(), cudaMemcpyHostToDevice));
#ifdef PROBE_RUNTIME_STRIDE
  CK(cudaMemcpyToSymbol(c_stride, &kCols, sizeof kCols));
  std::printf("row stride: run time (constant memory)\n");
#endif
  unsigned *partials = nullptr, *tickets = nullptr, *sink = nullptr;
  unsigned long long *sums = nullptr, *out = nullptr;
  CK(cudaMalloc(&partials, sizeof(unsigned) * kCols * 2048));
  CK(cudaMalloc(&sums, 8 * kCols));
  CK(cudaMalloc(&out, 8 * kCols));
  CK(cudaMalloc(&tickets, 4 * 4096));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(sums, 0, 8 * kCols));
  CK(cudaMemset(tickets, 0, 4 * 4096));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto time_it = [&](auto&& launch) {
    for (int i = 0; i < 5; ++i) launch();
    std::vector<float> per;
    for (int b = 0; b < 7; ++b) {
      CK(cudaEventRecord(e0));
      for (int i = 0; i < 20; ++i) launch();
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      per.push_back(ms * 1e3f / 20);
    }
    std::sort(per.begin(), per.end());
    return double(per[per.size() / 2]);  // us
  };
  for (const std::int64_t rows : row_counts) {
    const double bytes = double(rows) * kCols;
    std::vector<unsigned long long> ref(kCols, 0), ref_max(kCols, 0);  // (sums; max keys, byte << 56 | 2^56 - 1 - first row)
    std::vector<unsigned long long> ref16(kCols / 2, 0);                 // (the uint16 view's sums)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < kCols; ++c) {
        const unsigned char b = h[std::size_t(r * kCols + c)];
        ref[c] += b;
        ref16[c / 2] += static_cast<unsigned long long>(b) << (8 * (c % 2));
        ref_max[c] = std::max(ref_max[c], (static_cast<unsigned long long>(b) << 56) | ((1ull << 56) - 1 - static_cast<unsigned long long>(r)));
      }
    const std::int64_t nv = rows * kCols / 16;
    const double t_read = time_it([&] { read_kernel<<<prop.multiProcessorCount * 8, 256>>>(reinterpret_cast<const int4*>(x), nv, sink); });
    std::printf("\n%lld x %lld uint8 (%.0f MiB): read kernel %.2f us, %.0f GB/s\n", (long long)rows, (long long)kCols,
                bytes / (1 << 20), t_read, bytes / t_read / 1e3);
    std::printf("%-16s %6s %6s %8s %9s %9s %6s %s\n", "variant", "tiles", "chunks", "blocks/SM", "us", "GB/s", "of read", "check");
    for (const variant& v : vs) {
      int per_sm = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.kernel, kBlock, 0));
      const std::int64_t ncols = v.u16 ? kCols / 2 : kCols;
      const std::int64_t tiles = ncols / (32 * (v.u16 ? v.vb / 2 : v.vb));
      // one wave: the most chunks whose grid fits the resident blocks, each a multiple of 8 U rows
      const std::int64_t step = 8 * v.u;
      std::int64_t chunks = std::max<std::int64_t>(1, std::int64_t(per_sm) * prop.multiProcessorCount / tiles);
      std::int64_t chunk = (rows + chunks - 1) / chunks;
      chunk = (chunk + step - 1) / step * step;
      chunks = (rows + chunk - 1) / chunk;
      const dim3 grid{unsigned(tiles), unsigned(chunks)};
      CK(cudaMemset(out, 0xff, 8 * kCols));
      const double t = time_it([&] { v.kernel<<<grid, kBlock>>>(x, rows, chunk, partials, sums, tickets, out); });
      std::vector<unsigned long long> got(kCols);
      CK(cudaMemcpy(got.data(), out, 8 * kCols, cudaMemcpyDeviceToHost));
      int bad = 0;
      const auto& want = v.u16 ? ref16 : v.max ? ref_max : ref;
      for (std::int64_t c = 0; c < ncols; ++c) bad += got[c] != want[c];
      std::printf("%-16s %6lld %6lld %8d %9.2f %9.0f %6.3f %s\n", v.name, (long long)tiles, (long long)chunks, per_sm, t,
                  bytes / t / 1e3, t_read / t, bad ? "WRONG" : "ok");
      if (bad) std::printf("  %d columns differ (column 0: %llu against %llu)\n", bad, got[0], want[0]);
    }
  }
  return 0;
}
