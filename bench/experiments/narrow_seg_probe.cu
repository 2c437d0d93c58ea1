// Experiment (not part of the library or its tests): the library's narrow integer segment sums
// (v3::rows_body over narrow_op<In, int_sum<W>>, as launch_v3 runs them for int8, int16,
// uint32 and uint64 under the FEW rules, lazy tiles) on equal segments of 200 elements at 2^26
// elements, with the lanes a segment (G) and the kernel's resident blocks a SM (MINB, its
// __launch_bounds__ minimum: 4 in the library, so 64 registers) varied. Build:
// scripts/narrow-seg-probe.sh (nvcc -arch=sm_90). For each type it prints the read kernel's
// GB/s and, for each (G, MINB, GU: vectors in flight a lane), the median over 15 batches of 10
// back-to-back launches, GB/s, the fraction of read, the grid, and whether all 335,544 sums
// equal the host's; then the same over rows of 200 (no offsets).
// Run 197 compared uint32's reader (an element at a time into the 128-bit state) with a reader
// that summed a 16-byte vector's four words in 64 bits and added that once (as the byte and
// 16-bit readers' sum_words): segments of 200 at 4 / 8 lanes 0.876-0.878 / 0.879-0.882 of read
// against 0.880 / 0.888, within 1%, so the library keeps its reader (and the probe dropped
// that one).
// Run 198 added an L2 prefetch of a group item's next segment (cp.async.bulk.prefetch.L2 by
// lane 0 once its own segment was read): slower everywhere (int8 G 2 0.741 -> 0.709, uint32
// G 4 0.878 -> 0.844, uint64 G 8 0.922 -> 0.861), so removed.
// By default (no argument "all": every lane count, rows too) it runs each type's segments at
// 2, 4 and 8 lanes. Argument "lean" (fifty-eighth session): the library's body at two lane
// counts, with and without tile items, beside lean_seg (below) in its variants.
// Runs 206-209 (H100; docs/benchmarks/h100-run206..209-*): lean_seg read int8 / int16 / uint32
// segments of 200 at 0.85-0.87 / 0.89-0.90 / 0.92-0.93 of read persistent, 0.89 / 0.92 / 0.95
// one block an item, where the library's body read 0.74 / 0.83 / 0.88. What the gap was made
// of, int8 at 4 lanes: the 128-bit state's adds and 4-word shuffles (v2::fold_span_sum's
// 64-bit lane partials took int8 from 0.65 to 0.75 at 4 lanes, int16 0.61 -> 0.80 at 8), the
// tiles' handshake at each block's end (1.5 us a call: long_seen_after_checks' early read),
// block_done (1.9 us: lean_seg with it, "+done"; an acq_rel atomic in place of its fences
// changed nothing), and ~1.9 us of the body's own.

// Run 194 (H100): more resident blocks (6 or 8 a SM: 40 or 32 registers, spilling) were
// 1.3-3x slower for every type and lane count, so MINB is 4 (the library's) since.
// The question (fifty-seventh session): the library's segments of 200 read at 0.73-0.87 of the
// read kernel (run 193) where its rows of 8192 read at 0.91-0.99; ncu (run 172) showed the
// group items waiting on their loads at half occupancy. Do more resident blocks (fewer
// registers) or other lane counts than the launch rule's (2 lanes for int8, 2 for int16, 4 for
// uint32, 32 for uint64) close the gap?
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda/shapes_narrow_op.cuh"
#include "cuda/shapes_narrow_readers.cuh"
#include "cuda/shapes_v3.cuh"
#include "probe_common.cuh"
#include "shapes_widen.hpp"

using namespace tally::cuda;
using namespace tally::cuda::shapes_k;
using namespace tally::cuda::narrow_k;

// (the library's element readers: i8_in, i16_in, u32_in, u64_in, src/cuda/shapes_narrow_readers.cuh)

template <class Op, int G, int MINB, int GU>
__global__ void __launch_bounds__(kBlock, MINB)
    probe_kernel(geo g, Op op, typename Op::acc* partials, unsigned* tickets, std::int64_t tile, std::int64_t split,
                 std::int64_t tiles, std::int64_t items, v3::finish f) {
  v3::rows_body<Op, G, true, v3::no_marks, -1, GU>(g, op, partials, tickets, tile, split, tiles, items, 0, 1, f);
}

__global__ void fill_bytes(unsigned* w, std::int64_t words) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ 0x9e3779b9u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    h *= 3266489917u;
    h ^= h >> 16;
    w[i] = h;
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct ctx {
  int sms;
  std::int64_t n, segs;
  const std::int64_t* doff;
  finish_words W;
  unsigned* group_next;
  void* partials;
  std::int64_t* out;
  long long* ovf;
  bool lean = false;  // (argument "lean")
  bool done = false;  // (argument "done")
  std::vector<std::int64_t> want, want_rows;  // the host's sums of the segments, of the rows (uint64: the sums' bits)
};

/// Times launches of f (10 back to back, 15 batches after 3 warm-ups): the median us a launch.
template <class F> double time_us(F&& f) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int w = 0; w < 3; ++w) f();
  std::vector<double> t;
  for (int b = 0; b < 15; ++b) {
    CK(cudaEventRecord(e0));
    for (int i = 0; i < 10; ++i) f();
    t.push_back(elapsed_ms(e0, e1) * 100.0);  // (ms / 10 launches, in us)
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return median(t);
}

/// One case: segments (c.doff, equal segments of 200, the last 264) or rows of 200 (no
/// offsets, the first n - n % 200 elements), G lanes an output, MINB blocks a SM, GU vectors in
/// flight a lane.
template <class In, class T, int G, int MINB, int GU>
void run(ctx& c, const char* type, const T* x, double read_us, bool rows, bool no_tiles = false) {
  using W = typename In::wide;
  using Op = narrow_op<In, int_sum<W>>;
  constexpr bool biased = [] {
    if constexpr (requires { In::biased; }) return In::biased;
    else return false;
  }();
  constexpr auto kernel = probe_kernel<Op, G, MINB, GU>;
  int fit = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kBlock, 0));
  cudaFuncAttributes attr{};
  CK(cudaFuncGetAttributes(&attr, kernel));
  // (launch_v3: segments tile = seg_tile, split = seg_split, tiles over n; rows of 200: no tiles,
  // split = tile)
  const std::int64_t n = rows ? c.segs * 200 : c.n;
  const std::int64_t tile = 65536, split = rows ? 65536 : 16384, tiles = rows || no_tiles ? 0 : (n + tile - 1) / tile;
  constexpr std::int64_t per = kBlock / G;
  const std::int64_t items = tiles + (c.segs + per - 1) / per;
  const std::int64_t grid = std::min<std::int64_t>(items, static_cast<std::int64_t>(std::max(fit, 1)) * c.sms);
  const geo g = rows ? geo{x, nullptr, c.segs, 200, 200, 1, n} : geo{x, c.doff, c.segs, 0, 0, 0, n};
  v3::finish f{c.W.status, c.W.blocks_done, c.W.host_status, nullptr, 0, rows ? nullptr : c.W.tickets, rows ? 0 : c.segs,
               c.W.tile_next, c.W.long_seen, c.W.checked, grid <= static_cast<std::int64_t>(fit) * c.sms ? 1 : 0};
  f.group_next = c.group_next;
  f.warp_claim = rows ? 0 : 2;  // (plan seg_warp_claim's default, as launch_v3 gives lazy segments' group items)
  Op op;
  op.w0 = {c.out, c.ovf, std::is_unsigned_v<T>, biased};
  CK(cudaMemset(c.out, 0, 8 * c.segs));
  CK(cudaMemset(c.ovf, 0x7f, 8));
  auto launch = [&] {
    kernel<<<static_cast<unsigned>(grid), kBlock>>>(g, op, static_cast<typename Op::acc*>(c.partials), c.W.tickets, tile, split,
                                                    tiles, items, f);
  };
  launch();
  CK(cudaDeviceSynchronize());
  std::vector<std::int64_t> got(static_cast<std::size_t>(c.segs));
  CK(cudaMemcpy(got.data(), c.out, 8 * c.segs, cudaMemcpyDeviceToHost));
  long long st[2] = {0, 0};
  CK(cudaMemcpy(st, c.W.host_status, 16, cudaMemcpyDeviceToHost));
  const std::vector<std::int64_t>& want = rows ? c.want_rows : c.want;
  std::int64_t bad = 0;
  for (std::int64_t s = 0; s < c.segs; ++s) bad += got[static_cast<std::size_t>(s)] != want[static_cast<std::size_t>(s)];
  const double us = time_us(launch);
  const double gbs = static_cast<double>(n) * sizeof(T) / (us * 1e3);
  std::printf("%-6s %-4s G %2d minb %d GU %d: %3d regs, %zu B local, %d blocks a SM, grid %6lld: %8.2f us %7.1f GB/s %.3f of read  %s (status %lld)\n",
              type, rows ? "rows" : no_tiles ? "segs (no tiles)" : "segs", G, MINB, GU, attr.numRegs, static_cast<std::size_t>(attr.localSizeBytes), fit,
              static_cast<long long>(grid), us, gbs, read_us / us * static_cast<double>(n) / static_cast<double>(c.n),
              bad ? "WRONG" : "checked: all equal", st[0]);
  if (bad) std::printf("  %lld sums differ\n", static_cast<long long>(bad));
}


// ---- Lean segment sums (fifty-eighth session) ----
// The question: is the library's segments-of-200 gap (int8 0.75, int16 0.83, uint32 0.88 of
// read, stream-ordered) the general kernel's (rows_body: tiles, offsets check, 128-bit
// states, 64 registers at 4 blocks a SM), or any group-item kernel's? lean_seg is the least a
// segment sum needs: G lanes a segment, its offsets, the aligned 16-byte vectors holding it
// (U in flight a lane, the first and last masked), a 32-bit (bytes, 16-bit) or 64-bit (uint32)
// sum a lane, G-lane shuffles, one write. No offsets check, no tiles, no overflow check.
// ONESHOT: one block an item (grid = items; the hardware schedules the blocks), else
// persistent (grid = resident blocks, items in turn, the next item's offsets loaded ahead).
template <class T> struct lean_acc { using type = std::int32_t; };
template <> struct lean_acc<std::uint32_t> { using type = std::int64_t; };

// FIN: the block's end. 0 none; 1 the library's, v3::block_done (every block counted, the last
// one resets the words and writes the status). Argument "done" (fifty-ninth session) takes
// block_done apart: 2 thread 0's fence and count (no last block's work), 3 the count alone,
// 4 block_done's steps less the tickets' branch (fence, count, the last block's reads, resets
// and writes), 5 those without thread 0's fence, 6 the count as a reduction (no return value
// waited for), 7 the closing barrier alone.
template <int FIN> __device__ __forceinline__ void probe_done(const v3::finish& f) {
  if constexpr (FIN == 1) {
    v3::block_done(f);
  } else if constexpr (FIN == 7) {
    __syncthreads();
  } else if constexpr (FIN >= 2) {
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
      if constexpr (FIN == 2 || FIN == 4) __threadfence();
      if constexpr (FIN == 6) {
        atomicAdd(f.blocks_done, 1u);  // (result unused: RED)
        last = false;
      } else {
        last = atomicAdd(f.blocks_done, 1u) == gridDim.x - 1;
      }
    }
    __syncthreads();
    if constexpr (FIN == 4 || FIN == 5) {
      if (!last || threadIdx.x != 0) return;
      __threadfence();
      volatile long long* st = f.status;
      const long long s0 = st[0], s1 = st[1];
      st[0] = kNone;
      st[1] = kNone;
      *f.blocks_done = 0;
      *f.tile_next = 0;
      *f.checked = 0;
      f.host_status[0] = s0;
      f.host_status[1] = s1;
    }
  }
}

template <class In, int G, int MINB, int U, bool ONESHOT, int CHECK = 0, int FIN = 0>
__global__ void __launch_bounds__(kBlock, MINB)
    lean_seg(const typename In::src* x, const std::int64_t* off, std::int64_t segs, std::int64_t* out, long long* status,
             std::int64_t n, v3::finish f) {
  using T = typename In::src;
  using A = typename lean_acc<T>::type;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  constexpr int per = kBlock / G;
  const int lane = static_cast<int>(threadIdx.x % G);
  const std::int64_t items = (segs + per - 1) / per;
  std::int64_t item = blockIdx.x;
  std::int64_t s = item * per + threadIdx.x / G;
  std::int64_t lo = 0, hi = 0;
  if (s < segs) {
    lo = __ldg(off + s);
    hi = __ldg(off + s + 1);
  }
  if constexpr (CHECK == 1) {
    const std::int64_t entries = segs + 1, share = entries / gridDim.x, rem = entries % gridDim.x, b = blockIdx.x;
    const std::int64_t i0 = b * share + (b < rem ? b : rem), i1 = i0 + share + (b < rem ? 1 : 0);
    for (std::int64_t ib = i0 + threadIdx.x; ib < i1; ib += 4 * kBlock) {
      std::int64_t v[4], pv[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const std::int64_t i = ib + static_cast<std::int64_t>(k) * kBlock;
        v[k] = i < i1 ? __ldg(off + i) : 0;
        pv[k] = i < i1 && i > 0 ? __ldg(off + i - 1) : 0;
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const std::int64_t i = ib + static_cast<std::int64_t>(k) * kBlock;
        if (i >= i1) break;
        bool good = i == 0 ? v[k] == 0 : v[k] >= pv[k];
        if (i == segs) good = good && v[k] == n;
        if (!good) atomicMin(status, static_cast<long long>(i));
      }
    }
  }
  while (true) {
    if constexpr (CHECK == 2) {
      if (lane == 0 && s < segs && (hi < lo || (s == 0 && lo != 0) || (s == segs - 1 && hi != n)))
        atomicMin(status, static_cast<long long>(hi < lo ? s + 1 : s == 0 && lo != 0 ? 0 : segs));
    }
    std::int64_t nlo = 0, nhi = 0;
    const std::int64_t nitem = item + gridDim.x;
    if constexpr (!ONESHOT) {
      const std::int64_t ns = nitem * per + threadIdx.x / G;
      if (nitem < items && ns < segs) {
        nlo = __ldg(off + ns);
        nhi = __ldg(off + ns + 1);
      }
    }
    A a = 0;
    if (s < segs && hi > lo) {
      const auto b0 = reinterpret_cast<std::uintptr_t>(x + lo), b1 = reinterpret_cast<std::uintptr_t>(x + hi);
      const std::uintptr_t a0 = b0 & ~std::uintptr_t(15), a1 = (b1 + 15) & ~std::uintptr_t(15);
      const uint4* p = reinterpret_cast<const uint4*>(a0);
      const int nv = static_cast<int>((a1 - a0) / 16);
      const int from0 = static_cast<int>((b0 - a0) / sizeof(T)), to_last = V - static_cast<int>((a1 - b1) / sizeof(T));
      for (int j = lane; j < nv; j += G * U) {
        uint4 r[U];
#pragma unroll
        for (int u = 0; u < U; ++u) r[u] = j + u * G < nv ? __ldg(p + j + u * G) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int k = j + u * G;
          uint4 w = r[u];
          // (v2::keep_bytes: the probe's own copy, lean_keep in runs 206-210, moved into the library)
          if (k == 0 || k == nv - 1) w = v2::keep_bytes(w, k == 0 ? from0 * static_cast<int>(sizeof(T)) : 0,
                                                        k == nv - 1 ? to_last * static_cast<int>(sizeof(T)) : 16);
          if constexpr (sizeof(T) <= 2) a += In::sum_words(w);
          else a += static_cast<A>(w.x) + static_cast<A>(w.y) + static_cast<A>(w.z) + static_cast<A>(w.w);
        }
      }
    }
#pragma unroll
    for (int d = G / 2; d >= 1; d /= 2) a += __shfl_down_sync(0xffffffffu, a, d, G);
    if (lane == 0 && s < segs) out[s] = a;
    if (ONESHOT || nitem >= items) break;
    item = nitem;
    s = item * per + threadIdx.x / G;
    lo = nlo;
    hi = nhi;
  }
  probe_done<FIN>(f);
}

template <class In, class T, int G, int MINB, int U, bool ONESHOT, int CHECK = 0, int FIN = 0>
void run_lean(ctx& c, const char* type, const T* x, double read_us) {
  constexpr auto kernel = lean_seg<In, G, MINB, U, ONESHOT, CHECK, FIN>;
  int fit = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kBlock, 0));
  cudaFuncAttributes attr{};
  CK(cudaFuncGetAttributes(&attr, kernel));
  constexpr std::int64_t per = kBlock / G;
  const std::int64_t items = (c.segs + per - 1) / per;
  const std::int64_t grid = ONESHOT ? items : std::min<std::int64_t>(items, static_cast<std::int64_t>(std::max(fit, 1)) * c.sms);
  CK(cudaMemset(c.out, 0, 8 * c.segs));
  CK(cudaMemset(c.W.status, 0x7f, 16));
  v3::finish f{c.W.status, c.W.blocks_done, c.W.host_status, nullptr, 0, c.W.tickets, c.segs,
               c.W.tile_next, c.W.long_seen, c.W.checked, 0};
  f.group_next = c.group_next;
  auto launch = [&] { kernel<<<static_cast<unsigned>(grid), kBlock>>>(x, c.doff, c.segs, c.out, c.W.status, c.n, f); };
  launch();
  CK(cudaDeviceSynchronize());
  std::vector<std::int64_t> got(static_cast<std::size_t>(c.segs));
  CK(cudaMemcpy(got.data(), c.out, 8 * c.segs, cudaMemcpyDeviceToHost));
  std::int64_t bad = 0;
  for (std::int64_t s = 0; s < c.segs; ++s) bad += got[static_cast<std::size_t>(s)] != c.want[static_cast<std::size_t>(s)];
  const double us = time_us(launch);
  const double gbs = static_cast<double>(c.n) * sizeof(T) / (us * 1e3);
  long long st = 0;
  CK(cudaMemcpy(&st, c.W.status, 8, cudaMemcpyDeviceToHost));
  if (st != 0x7f7f7f7f7f7f7f7fLL) std::printf("  status %lld: a check failed\n", st);
  std::printf("%-6s lean %-7s end %d check %d G %2d minb %d U %d: %3d regs, %zu B local, %d blocks a SM, grid %6lld: %8.2f us %7.1f GB/s %.3f of read  %s\n",
              type, ONESHOT ? "oneshot" : "persist", FIN, CHECK, G, MINB, U, attr.numRegs, static_cast<std::size_t>(attr.localSizeBytes), fit,
              static_cast<long long>(grid), us, gbs, read_us / us, bad ? "WRONG" : "checked: all equal");
  if (bad) std::printf("  %lld sums differ\n", static_cast<long long>(bad));
}

template <class In, class T, int G> void lean_set(ctx& c, const char* type, const T* x, double read_us) {
  run_lean<In, T, G, 4, 4, false>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, false, 1>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, false, 1, 1>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, true>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, true, 2, 1>(c, type, x, read_us);
}

// (argument "done": block_done's parts, probe_done's FIN, on the persistent lean kernel with
// the offsets check, and on one block an item)
template <class In, class T, int G> void done_set(ctx& c, const char* type, const T* x, double read_us) {
  run_lean<In, T, G, 4, 4, false, 1, 0>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, false, 1, 1>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, false, 1, 2>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, false, 1, 3>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, false, 1, 4>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, false, 1, 5>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, false, 1, 6>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, false, 1, 7>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, true, 2, 0>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, true, 2, 1>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, true, 2, 3>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, true, 2, 5>(c, type, x, read_us);
  run_lean<In, T, G, 4, 4, true, 2, 6>(c, type, x, read_us);
}

template <class In, class T, bool kFew = false, int LG1 = 0, int LG2 = 0> void type_cases(ctx& c, const char* type, void* buf) {
  const T* x = static_cast<const T*>(buf);
  {  // the host's sums of equal segments of 200 (the last one 264) and of rows of 200
    std::vector<T> h(static_cast<std::size_t>(c.n));
    CK(cudaMemcpy(h.data(), x, sizeof(T) * c.n, cudaMemcpyDeviceToHost));
    c.want.assign(static_cast<std::size_t>(c.segs), 0);
    c.want_rows.assign(static_cast<std::size_t>(c.segs), 0);
    for (std::int64_t s = 0; s < c.segs; ++s) {
      const std::int64_t b = s * 200, e = s + 1 == c.segs ? c.n : b + 200;
      unsigned long long acc = 0;  // (mod 2^64: every sum here fits its output; uint64 as its bits)
      for (std::int64_t i = b; i < e; ++i) {
        if constexpr (std::is_same_v<T, std::uint64_t>) acc += h[static_cast<std::size_t>(i)];
        else acc += static_cast<unsigned long long>(static_cast<std::int64_t>(h[static_cast<std::size_t>(i)]));
        if (i + 1 == b + 200) c.want_rows[static_cast<std::size_t>(s)] = static_cast<std::int64_t>(acc);
      }
      c.want[static_cast<std::size_t>(s)] = static_cast<std::int64_t>(acc);
    }
  }
  const std::int64_t nv = c.n * static_cast<std::int64_t>(sizeof(T)) / 16;
  unsigned* sink = nullptr;
  CK(cudaMalloc(&sink, 4));
  const double read_us = time_us([&] { read_kernel<<<c.sms * 8, 256>>>(static_cast<const int4*>(buf), nv, sink); });
  std::printf("%-6s read kernel %8.2f us %7.1f GB/s\n", type, read_us, static_cast<double>(c.n) * sizeof(T) / (read_us * 1e3));
  if constexpr (LG1 > 0) {  // (argument "lean": the library's body at LG1 lanes beside lean_seg at LG1 and LG2)
    if (c.done) {
      done_set<In, T, LG1>(c, type, x, read_us);
      CK(cudaFree(sink));
      return;
    }
    if (c.lean) {
      run<In, T, LG1, 4, 4>(c, type, x, read_us, false);
      run<In, T, LG1, 4, 4>(c, type, x, read_us, false, true);
      run<In, T, LG2, 4, 4>(c, type, x, read_us, false);
      run<In, T, LG2, 4, 4>(c, type, x, read_us, false, true);
      lean_set<In, T, LG1>(c, type, x, read_us);
      lean_set<In, T, LG2>(c, type, x, read_us);
      CK(cudaFree(sink));
      return;
    }
  }
  if constexpr (kFew) {  // (the segments at the lane counts near the best)
    run<In, T, 2, 4, 4>(c, type, x, read_us, false);
    run<In, T, 4, 4, 4>(c, type, x, read_us, false);
    run<In, T, 8, 4, 4>(c, type, x, read_us, false);
    CK(cudaFree(sink));
    return;
  }
  for (const bool rows : {false, true}) {
    run<In, T, 1, 4, 4>(c, type, x, read_us, rows);
    run<In, T, 2, 4, 4>(c, type, x, read_us, rows);
    run<In, T, 4, 4, 4>(c, type, x, read_us, rows);
    run<In, T, 8, 4, 4>(c, type, x, read_us, rows);
    run<In, T, 16, 4, 4>(c, type, x, read_us, rows);
    run<In, T, 32, 4, 4>(c, type, x, read_us, rows);
    run<In, T, 1, 4, 8>(c, type, x, read_us, rows);
    run<In, T, 2, 4, 8>(c, type, x, read_us, rows);
    run<In, T, 4, 4, 8>(c, type, x, read_us, rows);
    run<In, T, 8, 4, 8>(c, type, x, read_us, rows);
    run<In, T, 16, 4, 8>(c, type, x, read_us, rows);
    run<In, T, 2, 4, 2>(c, type, x, read_us, rows);
    run<In, T, 4, 4, 2>(c, type, x, read_us, rows);
  }
  CK(cudaFree(sink));
}

int main(int argc, char** argv) {
  ctx c{};
  CK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, 0));
  c.n = std::int64_t(1) << 26;
  c.segs = c.n / 200;
  void* buf = nullptr;
  CK(cudaMalloc(&buf, 8 * c.n));
  std::vector<std::int64_t> off(static_cast<std::size_t>(c.segs + 1));
  for (std::int64_t s = 0; s < c.segs; ++s) off[static_cast<std::size_t>(s)] = s * 200;
  off[static_cast<std::size_t>(c.segs)] = c.n;
  std::int64_t* doff = nullptr;
  CK(cudaMalloc(&doff, 8 * off.size()));
  CK(cudaMemcpy(doff, off.data(), 8 * off.size(), cudaMemcpyHostToDevice));
  c.doff = doff;
  c.W = make_finish_words(static_cast<std::size_t>(c.segs));
  CK(cudaMalloc(&c.group_next, 4));
  CK(cudaMemset(c.group_next, 0, 4));
  CK(cudaMalloc(&c.partials, 32 * 4096));
  CK(cudaMalloc(&c.out, 8 * c.segs));
  CK(cudaMalloc(&c.ovf, 8));
  std::printf("equal segments of 200 (the last 264), 2^26 elements, %d SMs; integer sums, lazy tiles\n", c.sms);
  // (argument "all": int8, int16 and uint64 too, every lane count, as runs 194-195; else uint32 alone,
  // the library's reader and one summing a vector's words at once)
  const bool all = argc > 1 && std::string(argv[1]) == "all";
  c.lean = argc > 1 && std::string(argv[1]) == "lean";
  c.done = argc > 1 && std::string(argv[1]) == "done";
  for (int k = 0; k < (c.lean || c.done ? 3 : 4); ++k) {
    fill_bytes<<<c.sms * 4, 256>>>(static_cast<unsigned*>(buf), 2 * c.n);
    CK(cudaDeviceSynchronize());
    if (k == 0) {
      if (all) type_cases<i8_in, std::int8_t>(c, "int8", buf);
      else type_cases<i8_in, std::int8_t, true, 2, 4>(c, "int8", buf);
    }
    if (k == 1) {
      if (all) type_cases<i16_in, std::int16_t>(c, "int16", buf);
      else type_cases<i16_in, std::int16_t, true, 4, 8>(c, "int16", buf);
    }
    if (k == 2) {
      if (all) type_cases<u32_in, std::uint32_t>(c, "uint32", buf);
      else type_cases<u32_in, std::uint32_t, true, 4, 8>(c, "uint32", buf);
    }
    if (k == 3) {
      // (below 2^40, as the bench: no sum leaves uint64)
      std::vector<std::uint64_t> h(static_cast<std::size_t>(c.n));
      CK(cudaMemcpy(h.data(), buf, 8 * c.n, cudaMemcpyDeviceToHost));
      for (auto& e : h) e >>= 24;
      CK(cudaMemcpy(buf, h.data(), 8 * c.n, cudaMemcpyHostToDevice));
      if (all) type_cases<u64_in, std::uint64_t>(c, "uint64", buf);
      else type_cases<u64_in, std::uint64_t, true>(c, "uint64", buf);
    }
  }
  std::printf("done\n");
  return 0;
}
