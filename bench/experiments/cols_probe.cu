// Experiment (not part of the library or its tests): the certified column pass, timed per
// block. Build: scripts/cols-probe.sh (nvcc -arch=sm_90). Prints, per shape and variant, the
// median of 20 timed launches (CUDA events) and GB/s, the spread of the blocks' start and end
// times (globaltimer), the mean block time per column tile, and the SMs' busy share.
//   lib:  v3::cols_body<certified_sum, 4, RUN> as launch_v3 launches it (one wave at 2 a SM)
//   lib2: a copy of the RUN path as it was before the 22nd session (states in shared memory
//         as (warps, lanes, V), the merge's loads 4 bytes each), with stamps inside; lib2shv, shv+mv1,
//         shv+mv2: lane-contiguous states, then 16-byte merge loads, then all of a warp's chunks in flight
//   dyn:  persistent blocks, B per column tile; each warp claims 16-row groups of its tile
//         from the tile's counter (lane 0, two groups ahead); one running-sum update a group.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cuda/shapes_v3.cuh"
#include "probe_common.cuh"

using namespace tally::cuda;
using namespace tally::cuda::shapes_k;
using Op = certified_sum<float, float, false>;
using A = Op::acc;


struct clocks {
  unsigned long long* t;  // [blocks][2]: start, end (ns)
  unsigned* sm;           // [blocks]
};

__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

__global__ void __launch_bounds__(kBlock, 2) lib_kernel(geo g, Op op, std::int64_t chunk, A* partials, unsigned* tickets,
                                                        v3::finish f, clocks c) {
  const unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    c.t[2 * b] = v3::global_ns();
    c.sm[b] = smid();
  }
  v3::cols_body<Op, 4, true>(g, op, chunk, partials, tickets, f);
  if (threadIdx.x == 0) c.t[2 * b + 1] = v3::global_ns();
}

using Fast = fast_sum<float, float>;
__global__ void __launch_bounds__(kBlock) fast_kernel(geo g, Fast op, std::int64_t chunk, double* partials, unsigned* tickets,
                                                      v3::finish f, clocks c) {
  const unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    c.t[2 * b] = v3::global_ns();
    c.sm[b] = smid();
  }
  v3::cols_body<Fast, 4>(g, op, chunk, partials, tickets, f);
  if (threadIdx.x == 0) c.t[2 * b + 1] = v3::global_ns();
}

// dyn: block (bx, by), by < gridDim.y = B; partials [B][outputs]; claim[bx] counts groups.
constexpr int kQ = 16;  // rows a group (one running-sum update)
__global__ void __launch_bounds__(kBlock, 2) dyn_kernel(geo g, Op op, A* partials, unsigned* tickets, unsigned* claim,
                                                        v3::finish f, clocks c) {
  constexpr int V = 4;
  const unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    c.t[2 * b] = v3::global_ns();
    c.sm[b] = smid();
  }
  __shared__ alignas(A) unsigned char sh_raw[v3::kColWarps * 32 * V * sizeof(A)];
  A(*sh)[32][V] = reinterpret_cast<A(*)[32][V]>(sh_raw);
  __shared__ bool last;
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::int64_t c0 = (static_cast<std::int64_t>(blockIdx.x) * 32 + lane) * V;
  const float* p = static_cast<const float*>(g.x) + c0;
  const unsigned groups = static_cast<unsigned>(g.len / kQ);  // (len a multiple of kQ here)
  A a[V];
#pragma unroll
  for (int e = 0; e < V; ++e) a[e] = Op::identity();
  tally::ops::certified::running run[V];
  unsigned* ctr = claim + blockIdx.x;
  unsigned cur = 0, nxt = 0, after = 0;
  if (lane == 0) {
    cur = atomicAdd(ctr, 1u);
    nxt = atomicAdd(ctr, 1u);
  }
  cur = __shfl_sync(0xffffffffu, cur, 0);
  nxt = __shfl_sync(0xffffffffu, nxt, 0);
  auto load = [&](uint4 (&r)[4], std::int64_t k) {
#pragma unroll
    for (int u = 0; u < 4; ++u) r[u] = __ldg(reinterpret_cast<const uint4*>(p + (k + u) * g.inner));
  };
  auto take = [&](const uint4 (&r)[4]) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      float v[V];
      __builtin_memcpy(v, &r[u], 16);
#pragma unroll
      for (int e = 0; e < V; ++e) tally::ops::certified::run_add(run[e], v[e]);
    }
  };
  uint4 r[4];
  if (cur < groups) load(r, static_cast<std::int64_t>(cur) * kQ);
  while (cur < groups) {
    if (lane == 0 && nxt < groups) after = atomicAdd(ctr, 1u);
    const std::int64_t k0 = static_cast<std::int64_t>(cur) * kQ;
#pragma unroll
    for (int s = 0; s < kQ / 4; ++s) {
      uint4 nx[4];
      const bool more = s + 1 < kQ / 4 || nxt < groups;
      const std::int64_t kn = s + 1 < kQ / 4 ? k0 + 4 * (s + 1) : static_cast<std::int64_t>(nxt) * kQ;
      if (more) load(nx, kn);
      take(r);
      if (more) __builtin_memcpy(r, nx, sizeof r);
    }
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (tally::ops::certified::run_exact<kQ>(run[e])) {
        Op::accumulate_term(a[e], run[e].s);
      } else {
#pragma unroll 1
        for (int kk = 0; kk < kQ; ++kk) Op::accumulate(a[e], __ldg(p + (k0 + kk) * g.inner + e), k0 + kk);
      }
      run[e] = tally::ops::certified::running{};
    }
    cur = nxt;
    nxt = __shfl_sync(0xffffffffu, after, 0);
    if (cur >= groups) nxt = groups;
  }
#pragma unroll
  for (int e = 0; e < V; ++e) sh[w][lane][e] = a[e];
  __syncthreads();
  if (w == 0) {
#pragma unroll
    for (int e = 0; e < V; ++e) {
      A s = sh[0][lane][e];
      for (int i = 1; i < v3::kColWarps; ++i) s = Op::combine(s, sh[i][lane][e]);
      partials[static_cast<std::int64_t>(blockIdx.y) * g.outputs + c0 + e] = s;
    }
    __threadfence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const unsigned k = atomicAdd(&tickets[blockIdx.x], 1u);
    last = k == gridDim.y - 1;
    if (last) {
      tickets[blockIdx.x] = 0;
      claim[blockIdx.x] = 0;
    }
  }
  __syncthreads();
  if (last) {
    __threadfence();
    A cc[V];
#pragma unroll
    for (int e = 0; e < V; ++e) cc[e] = Op::identity();
    for (unsigned y = w; y < gridDim.y; y += v3::kColWarps)
#pragma unroll
      for (int e = 0; e < V; ++e) cc[e] = Op::combine(cc[e], v3::load_cg(partials + static_cast<std::int64_t>(y) * g.outputs + c0 + e));
    __syncthreads();
#pragma unroll
    for (int e = 0; e < V; ++e) sh[w][lane][e] = cc[e];
    __syncthreads();
    if (w == 0) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        A s = sh[0][lane][e];
        for (int i = 1; i < v3::kColWarps; ++i) s = Op::combine(s, sh[i][lane][e]);
        op.write(c0 + e, s, g.len);
      }
    }
  }
  v3::block_done(f);
  if (threadIdx.x == 0) c.t[2 * b + 1] = v3::global_ns();
}


// lib2: a copy of cols_body's RUN path (V = 4, nc == V) with stamps (ns) per block:
// [0] start, [1] warp 0's rows done, [2] the warps combined and the partials written,
// [3] the ticket taken, [4] (last block) warp 0's chunk merge done, [5] the warps' merges combined, [6] end
struct stamps {
  unsigned long long* s;  // [blocks][8]
};
__device__ __forceinline__ void stamp(stamps st, unsigned b, int i) {
  if (threadIdx.x == 0) st.s[8 * b + i] = v3::global_ns();
}
__device__ __forceinline__ A load_old(const A* p) {  // the library's load_cg before the 22nd session: 8 four-byte loads
  unsigned w[8];
  const unsigned* q = reinterpret_cast<const unsigned*>(p);
#pragma unroll
  for (int i = 0; i < 8; ++i) w[i] = __ldcg(q + i);
  A r;
  __builtin_memcpy(&r, w, sizeof r);
  return r;
}
__device__ __forceinline__ A load_v(const A* q) {
  const double2 a = __ldcg(reinterpret_cast<const double2*>(q)), b = __ldcg(reinterpret_cast<const double2*>(q) + 1);
  A r;
  r.hi = a.x;
  r.mid = a.y;
  r.lo = b.x;
  r.bound = b.y;
  return r;
}
template <int SHV, int MV = 0>  // SHV: 0 the library's sh[w][lane][e]; 1 sh[e][w][lane] (lane-contiguous states)
// MV: the chunk merge's loads: 0 the library's (8 four-byte loads a state, one chunk at a time); 1 two 16-byte loads;
// 2 16-byte loads, all of a warp's chunks of one output issued together
__global__ void __launch_bounds__(kBlock, 2) lib2_kernel(geo g, Op op, std::int64_t chunk, A* partials, unsigned* tickets,
                                                         v3::finish f, stamps st) {
  constexpr int V = 4;
  using T = float;
  const unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  stamp(st, b, 0);
  if (threadIdx.x == 0) st.s[8 * b + 4] = st.s[8 * b + 5] = 0;
  __shared__ alignas(A) unsigned char sh_raw[v3::kColWarps * 32 * V * sizeof(A)];
  auto S = [&](int w_, int l_, int e_) -> A& {
    A* base = reinterpret_cast<A*>(sh_raw);
    return SHV == 0 ? base[(w_ * 32 + l_) * V + e_] : base[(e_ * v3::kColWarps + w_) * 32 + l_];
  };
  __shared__ bool last;
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::int64_t c0 = (static_cast<std::int64_t>(blockIdx.x) * 32 + lane) * V;
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t k1 = k0 + chunk < g.len ? k0 + chunk : g.len;
  const T* x = static_cast<const T*>(g.x);
  A a[V];
#pragma unroll
  for (int e = 0; e < V; ++e) a[e] = Op::identity();
  const T* p = x + c0;
  std::int64_t k = k0 + w;
  {
    constexpr int kColUnroll = v3::kColUnroll, kColWarps = v3::kColWarps, kRunRows = v3::kRunRows;
    constexpr int kRunIters = kRunRows / kColUnroll;
    constexpr std::int64_t step = kColUnroll * kColWarps;
    tally::ops::certified::running run[V];
    int held = 0;
    auto update = [&](const std::int64_t k_end) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        if (tally::ops::certified::run_exact<kRunRows>(run[e])) {
          Op::accumulate_term(a[e], run[e].s);
        } else {
#pragma unroll 1
          for (std::int64_t kk = k_end - held * step; kk < k_end; kk += step)
#pragma unroll 1
            for (int u = 0; u < kColUnroll; ++u)
              Op::accumulate(a[e], __ldg(p + (kk + u * kColWarps) * g.inner + e), kk + u * kColWarps);
        }
        run[e] = tally::ops::certified::running{};
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
        for (int e = 0; e < V; ++e) tally::ops::certified::run_add(run[e], v[e]);
      }
    };
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
  }
  stamp(st, b, 1);
#pragma unroll
  for (int e = 0; e < V; ++e) S(w, lane, e) = a[e];
  __syncthreads();
  if (w == 0) {
#pragma unroll
    for (int e = 0; e < V; ++e) {
      A s = S(0, lane, e);
      for (int i = 1; i < v3::kColWarps; ++i) s = Op::combine(s, S(i, lane, e));
      a[e] = s;
    }
#pragma unroll
    for (int e = 0; e < V; ++e) partials[static_cast<std::int64_t>(blockIdx.y) * g.outputs + c0 + e] = a[e];
    __threadfence();
  }
  stamp(st, b, 2);
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const unsigned kt = atomicAdd(&tickets[blockIdx.x], 1u);
    last = kt == gridDim.y - 1;
    if (last) tickets[blockIdx.x] = 0;
  }
  __syncthreads();
  stamp(st, b, 3);
  if (last) {
    __threadfence();
    A c[V];
#pragma unroll
    for (int e = 0; e < V; ++e) c[e] = Op::identity();
    if constexpr (MV == 0) {
      for (unsigned y = w; y < gridDim.y; y += v3::kColWarps)
#pragma unroll
        for (int e = 0; e < V; ++e) c[e] = Op::combine(c[e], load_old(partials + static_cast<std::int64_t>(y) * g.outputs + c0 + e));
    } else if constexpr (MV == 1) {
      for (unsigned y = w; y < gridDim.y; y += v3::kColWarps)
#pragma unroll
        for (int e = 0; e < V; ++e) c[e] = Op::combine(c[e], load_v(partials + static_cast<std::int64_t>(y) * g.outputs + c0 + e));
    } else {
      unsigned y = w;
      for (; y + 3 * v3::kColWarps < gridDim.y; y += 4 * v3::kColWarps) {
#pragma unroll
        for (int e = 0; e < V; ++e) {
          A q[4];
#pragma unroll
          for (int i = 0; i < 4; ++i) q[i] = load_v(partials + static_cast<std::int64_t>(y + i * v3::kColWarps) * g.outputs + c0 + e);
#pragma unroll
          for (int i = 0; i < 4; ++i) c[e] = Op::combine(c[e], q[i]);
        }
      }
      for (; y < gridDim.y; y += v3::kColWarps)
#pragma unroll
        for (int e = 0; e < V; ++e) c[e] = Op::combine(c[e], load_v(partials + static_cast<std::int64_t>(y) * g.outputs + c0 + e));
    }
    stamp(st, b, 4);
    __syncthreads();
#pragma unroll
    for (int e = 0; e < V; ++e) S(w, lane, e) = c[e];
    __syncthreads();
    if (w == 0) {
      A sv[V];
#pragma unroll
      for (int e = 0; e < V; ++e) {
        A s = S(0, lane, e);
        for (int i = 1; i < v3::kColWarps; ++i) s = Op::combine(s, S(i, lane, e));
        sv[e] = s;
      }
      stamp(st, b, 5);
#pragma unroll
      for (int e = 0; e < V; ++e) op.write(c0 + e, sv[e], g.len);
    }
  }
  v3::block_done(f);
  stamp(st, b, 6);
}

void report_stamps(const char* name, const stamps& sd, unsigned blocks, unsigned chunks) {
  std::vector<unsigned long long> s(8 * blocks);
  CK(cudaMemcpy(s.data(), sd.s, s.size() * 8, cudaMemcpyDeviceToHost));
  unsigned long long t0 = ~0ull;
  for (unsigned b = 0; b < blocks; ++b) t0 = std::min(t0, s[8 * b]);
  double sum[7] = {}, lsum[7] = {};
  int nl = 0;
  double last_end = 0, rows_end_max = 0;
  for (unsigned b = 0; b < blocks; ++b) {
    const unsigned long long* q = &s[8 * b];
    const bool is_last = chunks > 1 && q[4] != 0;
    rows_end_max = std::max(rows_end_max, double(q[1] - t0));
    last_end = std::max(last_end, double(q[6] - t0));
    for (int i = 1; i < 7; ++i) {
      if (i >= 4 && i <= 5 && !is_last) continue;
      const int prev = (i == 6 && !is_last) ? 3 : i - 1;
      (is_last ? lsum : sum)[i] += double(q[i] - q[prev]);
    }
    nl += is_last;
  }
  const int nn = blocks - nl;
  std::printf("%-8s stamps (us), others (%d): rows %.1f, combine+partials %.2f, ticket %.2f, end %.2f | last blocks (%d): rows %.1f, "
              "combine+partials %.2f, ticket %.2f, chunk merge %.2f, warps merged %.2f, write+done %.2f | rows done by %.1f, end %.1f\n",
              name, nn, sum[1] / nn / 1e3, sum[2] / nn / 1e3, sum[3] / nn / 1e3, sum[6] / nn / 1e3, nl, nl ? lsum[1] / nl / 1e3 : 0,
              nl ? lsum[2] / nl / 1e3 : 0, nl ? lsum[3] / nl / 1e3 : 0, nl ? lsum[4] / nl / 1e3 : 0, nl ? lsum[5] / nl / 1e3 : 0,
              nl ? lsum[6] / nl / 1e3 : 0, rows_end_max / 1e3, last_end / 1e3);
}


struct shared_state {
  finish_words w;  // tickets [4096]
  unsigned* claim;    // [4096]
  A* partials;
  float* out;
  long long* ovf;
  clocks c;
  stamps st;
};

void report(const char* name, std::int64_t rows, std::int64_t cols, const std::vector<float>& ms, const clocks& cdev,
            unsigned blocks, unsigned gx, int sms) {
  std::vector<float> s = ms;
  std::sort(s.begin(), s.end());
  const double med = s[s.size() / 2];
  const double gbs = rows * cols * 4.0 / (med * 1e-3) / 1e9;
  std::vector<unsigned long long> t(2 * blocks);
  std::vector<unsigned> sm(blocks);
  CK(cudaMemcpy(t.data(), cdev.t, t.size() * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(sm.data(), cdev.sm, sm.size() * 4, cudaMemcpyDeviceToHost));
  unsigned long long t0 = ~0ull, t1 = 0;
  for (unsigned b = 0; b < blocks; ++b) {
    t0 = std::min(t0, t[2 * b]);
    t1 = std::max(t1, t[2 * b + 1]);
  }
  const double span = static_cast<double>(t1 - t0);
  std::vector<double> ends, starts, dur;
  std::vector<double> tile_dur(gx, 0), tile_end(gx, 0);
  std::vector<int> tile_n(gx, 0);
  std::vector<double> sm_busy(sms, 0);
  std::vector<int> sm_n(sms, 0);
  for (unsigned b = 0; b < blocks; ++b) {
    const double st = t[2 * b] - t0, en = t[2 * b + 1] - t0;
    starts.push_back(st);
    ends.push_back(en);
    dur.push_back(en - st);
    tile_dur[b % gx] += en - st;
    tile_end[b % gx] = std::max(tile_end[b % gx], en);
    tile_n[b % gx]++;
    if (sm[b] < static_cast<unsigned>(sms)) {
      sm_n[sm[b]]++;
    }
  }
  // SM busy: the union of its blocks' intervals (time any block of this kernel was resident)
  for (int q = 0; q < sms; ++q) {
    std::vector<std::pair<double, double>> iv;
    for (unsigned b = 0; b < blocks; ++b)
      if (sm[b] == static_cast<unsigned>(q)) iv.push_back({starts[b], ends[b]});
    std::sort(iv.begin(), iv.end());
    double busy = 0, cs = -1, ce = -1;
    for (auto& [a, e] : iv) {
      if (a > ce) {
        if (ce > cs) busy += ce - cs;
        cs = a;
        ce = e;
      } else {
        ce = std::max(ce, e);
      }
    }
    if (ce > cs) busy += ce - cs;
    sm_busy[q] = busy / span;
  }
  auto pct = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * v.size()))];
  };
  double busy_mean = 0;
  for (double v : sm_busy) busy_mean += v;
  busy_mean /= sms;
  int sm_min = 1 << 30, sm_max = 0;
  for (int v : sm_n) {
    sm_min = std::min(sm_min, v);
    sm_max = std::max(sm_max, v);
  }
  std::printf("%-8s %6lld x %-6lld median %8.1f us %7.0f GB/s | last launch: span %6.1f us, SM busy %.2f, blocks/SM %d-%d\n", name,
              (long long)rows, (long long)cols, med * 1e3, gbs, span / 1e3, busy_mean, sm_min, sm_max);
  std::printf("         start us p0/p50/p90/max %6.1f %6.1f %6.1f %6.1f | end %6.1f %6.1f %6.1f %6.1f | dur %6.1f %6.1f %6.1f %6.1f\n",
              pct(starts, 0) / 1e3, pct(starts, .5) / 1e3, pct(starts, .9) / 1e3, pct(starts, 1) / 1e3, pct(ends, 0) / 1e3,
              pct(ends, .5) / 1e3, pct(ends, .9) / 1e3, pct(ends, 1) / 1e3, pct(dur, 0) / 1e3, pct(dur, .5) / 1e3,
              pct(dur, .9) / 1e3, pct(dur, 1) / 1e3);
  if (gx <= 16) {
    std::printf("         per tile mean dur / last end (us):");
    for (unsigned x = 0; x < gx; ++x) std::printf(" %.1f/%.1f", tile_dur[x] / tile_n[x] / 1e3, tile_end[x] / 1e3);
    std::printf("\n");
  }
  // blocks in launch order: the first 16 blocks' (sm, dur) and the slowest 8
  std::vector<unsigned> order(blocks);
  for (unsigned b = 0; b < blocks; ++b) order[b] = b;
  std::sort(order.begin(), order.end(), [&](unsigned x, unsigned y) { return dur[x] > dur[y]; });
  std::printf("         slowest blocks (id tile sm dur us, sm's blocks):");
  for (int i = 0; i < 8 && i < static_cast<int>(blocks); ++i) {
    const unsigned b = order[i];
    std::printf(" [%u %u %u %.1f %d]", b, b % gx, sm[b], dur[b] / 1e3, sm_n[sm[b]]);
  }
  std::printf("\n         fastest:");
  for (int i = 0; i < 6 && i < static_cast<int>(blocks); ++i) {
    const unsigned b = order[blocks - 1 - i];
    std::printf(" [%u %u %u %.1f %d]", b, b % gx, sm[b], dur[b] / 1e3, sm_n[sm[b]]);
  }
  std::printf("\n");
}

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::int64_t n = std::int64_t(1) << 26;
  float* x = nullptr;
  CK(cudaMalloc(&x, n * 4));
  fill<<<4 * sms, 256>>>(x, n, 12345u, 1.0f);
  shared_state S{};
  S.w = make_finish_words(4096);
  CK(cudaMalloc(&S.claim, 4 * 4096));
  CK(cudaMalloc(&S.partials, sizeof(A) * 8 * n / 16));
  CK(cudaMalloc(&S.out, 4 * 65536));
  CK(cudaMalloc(&S.ovf, 8));
  CK(cudaMalloc(&S.c.t, 16 * 65536));
  CK(cudaMalloc(&S.c.sm, 4 * 65536));
  CK(cudaMalloc(&S.st.s, 64 * 65536));
  CK(cudaMemset(S.claim, 0, 4 * 4096));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const std::int64_t shapes[3][2] = {{65536, 1024}, {8192, 8192}, {1024, 65536}};
  int only = argc > 1 ? std::atoi(argv[1]) : -1;
  for (int si = 0; si < 3; ++si) {
    if (only >= 0 && only != si) continue;
    const std::int64_t rows = shapes[si][0], cols = shapes[si][1];
    geo g{x, nullptr, cols, rows, 1, cols, n};
    const unsigned gx = static_cast<unsigned>(cols / 128);
    // lib: launch_v3's chunks (whole waves of 2 a SM, to 95%)
    const std::int64_t slots = 2LL * sms;
    std::int64_t want = 1;
    double best = 0;
    for (std::int64_t c = 1; c <= std::min<std::int64_t>(rows / 16, 4096); ++c) {
      const std::int64_t blocks = gx * c, waves = (blocks + slots - 1) / slots;
      const double use = double(blocks) / double(waves * slots);
      if (use > best + 0.01) {
        best = use;
        want = c;
      }
      if (use >= 0.95) break;
    }
    std::int64_t chunks = 0, chunk = 0;
    row_chunks(rows, want, 16, chunks, chunk);
    std::vector<float> ref(cols), got(cols);
    for (int variant = 0; variant < 7; ++variant) {
      std::vector<float> ms;
      unsigned blocks = 0;
      for (int it = 0; it < 25; ++it) {
        Op op{S.out, S.ovf};
        CK(cudaMemset(S.ovf, 0x7f, 8));
        v3::finish f{S.w.status, S.w.blocks_done, S.w.host_status, nullptr, 0, nullptr, 0, S.w.tile_next, S.w.long_seen, S.w.checked, 0};
        CK(cudaEventRecord(e0));
        if (variant == 0) {
          dim3 grid(gx, static_cast<unsigned>(chunks));
          blocks = grid.x * grid.y;
          lib_kernel<<<grid, kBlock>>>(g, op, chunk, S.partials, S.w.tickets, f, S.c);
        } else if (variant >= 3) {
          dim3 grid(gx, static_cast<unsigned>(chunks));
          blocks = grid.x * grid.y;
          if (variant == 3) lib2_kernel<0><<<grid, kBlock>>>(g, op, chunk, S.partials, S.w.tickets, f, S.st);
          else if (variant == 4) lib2_kernel<1><<<grid, kBlock>>>(g, op, chunk, S.partials, S.w.tickets, f, S.st);
          else if (variant == 5) lib2_kernel<1, 1><<<grid, kBlock>>>(g, op, chunk, S.partials, S.w.tickets, f, S.st);
          else lib2_kernel<1, 2><<<grid, kBlock>>>(g, op, chunk, S.partials, S.w.tickets, f, S.st);
        } else if (variant == 2) {
          std::int64_t fchunks = 0, fchunk = 0;
          row_chunks(rows, (512 + gx - 1) / gx, 64, fchunks, fchunk);
          dim3 grid(gx, static_cast<unsigned>(fchunks));
          blocks = grid.x * grid.y;
          fast_kernel<<<grid, kBlock>>>(g, Fast{S.out, S.ovf}, fchunk, reinterpret_cast<double*>(S.partials), S.w.tickets, f, S.c);
        } else {
          const unsigned per_tile = std::max<unsigned>(1, static_cast<unsigned>(slots / gx));
          dim3 grid(gx, per_tile);
          blocks = grid.x * grid.y;
          dyn_kernel<<<grid, kBlock>>>(g, op, S.partials, S.w.tickets, S.claim, f, S.c);
        }
        const float t = elapsed_ms(e0, e1);
        if (it >= 5) ms.push_back(t);
      }
      long long ovf = 0;
      CK(cudaMemcpy(&ovf, S.ovf, 8, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(variant == 0 ? ref.data() : got.data(), S.out, 4 * cols, cudaMemcpyDeviceToHost));
      if (variant == 2) ovf = 0x7f7f7f7f7f7f7f7fLL;
      const char* vname = variant == 0 ? "lib" : variant == 1 ? "dyn" : variant == 2 ? "fast" : variant == 3 ? "lib2" : variant == 4 ? "lib2shv" : variant == 5 ? "shv+mv1" : "shv+mv2";
      if (variant >= 3) {
        std::vector<float> sorted = ms;
        std::sort(sorted.begin(), sorted.end());
        std::printf("%-8s %6lld x %-6lld median %8.1f us %7.0f GB/s\n", vname, (long long)rows, (long long)cols, sorted[sorted.size() / 2] * 1e3,
                    rows * cols * 4.0 / (sorted[sorted.size() / 2] * 1e-3) / 1e9);
        report_stamps(vname, S.st, blocks, static_cast<unsigned>(chunks));
      } else {
        report(vname, rows, cols, ms, S.c, blocks, gx, sms);
      }
      std::printf("         ovf %s", ovf == 0x7f7f7f7f7f7f7f7fLL ? "none" : "SET");
      if (variant == 1 || variant >= 3) std::printf(", bits %s the lib's", std::memcmp(ref.data(), got.data(), 4 * cols) == 0 ? "equal" : "DIFFER from");
      std::printf("\n");
    }
  }
  return 0;
}
