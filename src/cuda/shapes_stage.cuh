// Staged group items of the v3 rows kernel (src/cuda/shapes_v3.cuh, plan seg_stage = 1; not
// the default until measured on a GPU).
//
// A group item of CSR segments (kBlock / G consecutive segments, G lanes each) reads its
// segments' elements with each lane's own 16-byte loads (v2::fold_contig): 4 vectors in flight
// per lane, so an item of 64 segments of 200 floats needs 4 dependent rounds of memory latency
// to move 51 KB. Staged, the block copies the item's whole flat range into shared memory with
// cp.async (LDGSTS: the copies hold no registers), in chunks of kStageVecs vectors, double
// buffered: the next chunk is in flight while the lanes reduce the current one from shared
// memory. So an item costs about one round of latency, whatever its length.
//
// The bits are the fold_contig bits: each lane meets its elements in the same order (its head
// element, its vectors j = lane, lane + G, ... in increasing order, its tail element), since
// the chunks are cut at 16-byte boundaries of the address space and a segment's vectors are
// 16-byte aligned there too. Elements before the item's first 16-byte boundary and after its
// last (the heads and tails) are loaded from global memory directly, before the copies land.
//
// Not staged (the caller uses fold_contig, the same bits): an item whose flat range holds no
// whole vector, or more than kStageMaxVecs (a segment longer than split inside it, the huge
// one of an uneven set). A lane whose segment lies outside the item's range (only with
// offsets that break the rules, which are reported, the outputs then unspecified) reads only
// its head and tail elements.
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>

#include "cuda/shapes.cuh"
#include "cuda/shapes_v2.cuh"

namespace tally::cuda::shapes_k::v3 {

inline constexpr int kStageVecs = 1024;                 // 16-byte vectors per chunk (16 KB; two buffers)
inline constexpr std::int64_t kStageMaxVecs = 16384;    // items larger than this (256 KB) are not staged

/// Shared memory of the staged path: two chunk buffers.
struct stage_buffers {
  uint4 buf[2][kStageVecs];
};

/// Folds this lane's part of its segment [b, e) (flat elements; only when `mine`) into a, the
/// item's flat range being [F0, F1) (the same in every thread of the block; every thread calls
/// this). Returns false, having done nothing, when the item is not staged (the caller then
/// uses fold_contig); the decision is the same in every thread.
template <class Op, int G>
__device__ __forceinline__ bool staged_fold(typename Op::acc& a, const typename Op::elem* x, std::int64_t F0,
                                            std::int64_t F1, std::int64_t b, std::int64_t e, bool mine, int lane,
                                            stage_buffers& sb) {
  using T = typename Op::elem;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  // the item's whole vectors, as absolute 16-byte indices [v0, v1)
  const auto a0 = reinterpret_cast<std::uintptr_t>(x + F0), a1 = reinterpret_cast<std::uintptr_t>(x + F1);
  const std::uintptr_t v0 = (a0 + 15) / 16, v1 = a1 / 16;
  if (!(F1 > F0 && v1 > v0 && v1 - v0 <= static_cast<std::uintptr_t>(kStageMaxVecs))) return false;
  const int nvec = static_cast<int>(v1 - v0);
  const int chunks = (nvec + kStageVecs - 1) / kStageVecs;
  auto issue = [&](int c) {  // chunk c's vectors into buffer c % 2, kBlock threads at a time
    const int c0 = c * kStageVecs, cn = nvec - c0 < kStageVecs ? nvec - c0 : kStageVecs;
    for (int i = static_cast<int>(threadIdx.x); i < cn; i += kBlock)
      __pipeline_memcpy_async(&sb.buf[c % 2][i], reinterpret_cast<const uint4*>((v0 + c0 + i) * 16), 16);
    __pipeline_commit();
  };
  issue(0);

  // This lane's elements as fold_contig reads them: the head [0, kh), vectors [0, nv) from
  // element kh, the tail [kt, len); relative to the segment's first element b.
  const T* p = x + b;
  const std::int64_t len = mine ? e - b : 0;
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const std::int64_t head = static_cast<std::int64_t>(((16 - addr % 16) % 16) / sizeof(T));
  const std::int64_t kh = head < len ? head : len;
  const std::int64_t nv64 = (len - kh) / V, kt = kh + nv64 * V;
  // The segment's vectors lie in the item's (they do with valid offsets; with others the
  // outputs are unspecified and reported, and this lane reads none of them).
  const bool inside = b >= F0 && e <= F1;
  const int nv = inside ? static_cast<int>(nv64) : 0;
  // head and tail: at most one element each per lane (G >= V > head, tail), loaded now
  T hv{}, tv{};
  const bool has_head = lane < kh, has_tail = kt + lane < len;
  if (has_head) hv = __ldg(p + lane);
  if (has_tail) tv = __ldg(p + kt + lane);
  if (has_head) Op::accumulate(a, hv, lane);
  // the segment's first vector in the item's (kh is 16-byte aligned when nv > 0)
  const int sv0 = nv > 0 ? static_cast<int>(reinterpret_cast<std::uintptr_t>(p + kh) / 16 - v0) : 0;
  int j = lane;  // the lane's next vector (segment-relative)
  for (int c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) {
      issue(c + 1);
      __pipeline_wait_prior(1);  // chunk c has landed (this thread's copies)
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();  // and every thread's
    const int c0 = c * kStageVecs, c1 = c0 + kStageVecs;
    const uint4* buf = sb.buf[c % 2];
    for (; j < nv && sv0 + j < c1; j += G) {
      const uint4 w = buf[sv0 + j - c0];
      T v[V];
      __builtin_memcpy(v, &w, 16);
#pragma unroll
      for (int u = 0; u < V; ++u) Op::accumulate(a, v[u], kh + static_cast<std::int64_t>(j) * V + u);
    }
    __syncthreads();  // buffer c % 2 is read before chunk c + 2 overwrites it
  }
  if (has_tail) Op::accumulate(a, tv, kt + lane);
  return true;
}

}  // namespace tally::cuda::shapes_k::v3
