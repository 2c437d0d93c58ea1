// Experiment (not part of the library or its tests): the rows kernel timed per block, inside.
// Build: scripts/seg-probe.sh (nvcc -arch=sm_90). For each case, fast (fast_sum, float64
// accumulator) and exact (the certified pass, certified_sum), it launches v3::rows_body as
// launch_v3 would (the same template arguments, grid, dynamic shared memory, plan defaults)
// inside a wrapper whose Marks record %globaltimer at the body's points (v3::no_marks lists
// them), and prints the median of 20 timed launches (CUDA events, each synchronised) and the
// blocks' times at each point (p0 / p50 / p90 / max, us from the first block's start):
//   one:    one segment of 2^26 float32 (tile items only: 1,024 tiles of 64Ki)
//   uneven: that segment among 10,000 tiny ones (the benchmark's uneven case)
//   equal200, equal8192: equal segments of 200 (4 lanes each) and 8192 (32 lanes; no tile needed)
//   rows:   1,024 rows of 65,536 (a block a row: the same bytes as `one`, no tiles)
// and `one` and `uneven` eager (plan seg_lazy_tiles = 0: the tiles taken in turn, not claimed;
// the offsets checked after the items), with the next tile claimed when the block is free (the
// library default, rows_body AHEAD = 0), when the current one is claimed (`ahead1`,
// before run 95) or once its first part is read (`late`, AHEAD = 2),
// and `one` in the 32-lane kernel. Marks 1-3 are lazy tiles' only. Per case it also prints
// the SM clock over each block's run (%clock64 against %globaltimer) and, per SM (%smid), the
// last block's end and the spread of its blocks' ends.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cuda/shapes_v3.cuh"
#include "probe_common.cuh"

using namespace tally::cuda;
using namespace tally::cuda::shapes_k;


constexpr int kMarks = 16;  // 0 the block's start, 1-14 v3::no_marks's points, 15 its end
__device__ unsigned long long* g_marks;  // [blocks][kMarks], 0 = not reached
__device__ long long* g_clk;  // [blocks][2]: the SM's clock64 at the block's start and end (its clock rate over the run)

struct clock_marks {
  static __device__ __forceinline__ void at(int k) {
    if (threadIdx.x == 0) {
      g_marks[blockIdx.x * kMarks + k] = v3::global_ns();
      if (k == 0 || k == 15) g_clk[blockIdx.x * 2 + (k == 15)] = clock64();
      if (k == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        g_clk[2 * 4096 + blockIdx.x] = sm;
      }
    }
  }
};

template <class Op, int G, bool LAZY, int AHEAD>
__global__ void __launch_bounds__(kBlock, sizeof(typename Op::acc) >= 32 ? 3 : 4)
    probe_kernel(geo g, Op op, typename Op::acc* partials, unsigned* tickets, std::int64_t tile, std::int64_t split,
                 std::int64_t tiles, std::int64_t items, v3::finish f) {
  clock_marks::at(0);
  v3::rows_body<Op, G, LAZY, clock_marks, AHEAD>(g, op, partials, tickets, tile, split, tiles, items, 0, 1, f);
  clock_marks::at(15);
}



long long* clk_dev() {
  static long long* p = nullptr;
  if (!p) {
    CK(cudaMalloc(&p, sizeof(long long) * 3 * 4096));
    CK(cudaMemcpyToSymbol(g_clk, &p, sizeof p));
  }
  return p;
}

double pct(std::vector<double> v, double q) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

/// The grid launch_v3 gives the kernel (what fits on the GPU, at most `items`) and its dynamic
/// shared memory.
template <class Op, int G, bool LAZY, int AHEAD = 0> std::int64_t grid_for(std::int64_t items, int sms, std::size_t& dyn) {
  using A = typename Op::acc;
  constexpr auto kernel = probe_kernel<Op, G, LAZY, AHEAD>;
  constexpr bool staged = sizeof(A) >= 32 && v2::takes_vectors<Op>();
  dyn = 0;
  int fit0 = 0, fit = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit0, kernel, kBlock, 0));
  if (staged) {
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(v3::row_smem_bytes<Op>())));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kBlock, v3::row_smem_bytes<Op>()));
    if (fit >= fit0) dyn = v3::row_smem_bytes<Op>();
  }
  fit = std::max(1, dyn ? fit : fit0);
  return std::min<std::int64_t>(items, static_cast<std::int64_t>(fit) * sms);
}

template <class Op, int G, bool LAZY, int AHEAD = 0>
void run(const char* name, const geo& g, std::int64_t tile, std::int64_t split, std::int64_t tiles, std::int64_t items,
         const finish_words& W, typename Op::acc* partials, void* out, long long* ovf, unsigned long long* marks, int sms) {
  constexpr auto kernel = probe_kernel<Op, G, LAZY, AHEAD>;
  std::size_t dyn = 0;
  const std::int64_t grid = grid_for<Op, G, LAZY, AHEAD>(items, sms, dyn);
  const int fit = static_cast<int>((grid + sms - 1) / sms);
  const std::int64_t ticket_count = tiles > 0 ? g.outputs : 0;
  v3::finish f{W.status,    W.blocks_done, W.host_status, nullptr, 0, g.off && ticket_count > 0 ? W.tickets : nullptr,
               ticket_count, W.tile_next,  W.long_seen,   W.checked, 1};
  Op op{static_cast<decltype(Op::out)>(out), ovf};
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<double> ms;
  for (int it = 0; it < 25; ++it) {
    CK(cudaMemset(marks, 0, sizeof(unsigned long long) * kMarks * grid));
    CK(cudaMemset(ovf, 0x7f, 8));
    CK(cudaEventRecord(e0));
    kernel<<<static_cast<unsigned>(grid), kBlock, dyn>>>(g, op, partials, W.tickets, tile, split, tiles, items, f);
    const float t = elapsed_ms(e0, e1);
    if (it >= 5) ms.push_back(t);
  }
  long long st[2], ov = 0;
  CK(cudaMemcpy(st, W.host_status, 16, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&ov, ovf, 8, cudaMemcpyDeviceToHost));
  std::vector<unsigned long long> m(static_cast<std::size_t>(grid * kMarks));
  CK(cudaMemcpy(m.data(), marks, m.size() * 8, cudaMemcpyDeviceToHost));
  std::vector<long long> clk(static_cast<std::size_t>(grid * 2)), smid(static_cast<std::size_t>(grid));
  CK(cudaMemcpy(clk.data(), clk_dev(), clk.size() * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(smid.data(), clk_dev() + 2 * 4096, smid.size() * 8, cudaMemcpyDeviceToHost));
  unsigned long long t0 = ~0ull;
  for (std::int64_t b = 0; b < grid; ++b) t0 = std::min(t0, m[static_cast<std::size_t>(b * kMarks)]);
  const double med = pct(ms, 0.5);
  std::printf("%-22s median %7.1f us %6.0f GB/s | grid %lld (%d a SM, dyn %zu), tiles %lld, items %lld, status %lld %lld, ovf %s\n", name,
              med * 1e3, static_cast<double>(g.n) * 4 / (med * 1e-3) / 1e9, static_cast<long long>(grid), fit, dyn,
              static_cast<long long>(tiles), static_cast<long long>(items), st[0], st[1],
              ov == 0x7f7f7f7f7f7f7f7fLL ? "none" : "SET");
  static const char* what[kMarks] = {"start", "checked", "tiles known", "tile 0 begun", "tile 0 end", "tile 1 end", "tile 2 end",
                                     "tile 3 end", "tile 4 end", "tile 5 end", "tile 6 end", "tile 7 end", "merge start",
                                     "merge end", "items done", "end"};
  {  // the SMs' clock over each block's run (the last timed launch): cycles / ns
    std::vector<double> mhz;
    for (std::int64_t b = 0; b < grid; ++b) {
      const unsigned long long a = m[static_cast<std::size_t>(b * kMarks)], z = m[static_cast<std::size_t>(b * kMarks + 15)];
      if (a && z > a + 2000) mhz.push_back(static_cast<double>(clk[2 * b + 1] - clk[2 * b]) / static_cast<double>(z - a) * 1e3);
    }
    std::printf("    SM clock over a block's run: p0 %.0f p50 %.0f max %.0f MHz\n", pct(mhz, 0), pct(mhz, .5), pct(mhz, 1));
  }
  {  // the blocks' ends (mark 15) per SM: the SMs' last ends, and the spread of ends inside an SM
    std::vector<double> lo(sms, 1e30), hi(sms, -1);
    for (std::int64_t b = 0; b < grid; ++b) {
      const unsigned long long z = m[static_cast<std::size_t>(b * kMarks + 15)];
      const auto sm = static_cast<std::size_t>(smid[static_cast<std::size_t>(b)]);
      if (!z || sm >= lo.size()) continue;
      const double t = static_cast<double>(z - t0) / 1e3;
      lo[sm] = std::min(lo[sm], t);
      hi[sm] = std::max(hi[sm], t);
    }
    std::vector<double> last, spread;
    for (int i = 0; i < sms; ++i)
      if (hi[i] >= 0) {
        last.push_back(hi[i]);
        spread.push_back(hi[i] - lo[i]);
      }
    std::printf("    per SM: last end p0 %.1f p50 %.1f max %.1f us; first-to-last end inside an SM p50 %.1f max %.1f us\n", pct(last, 0),
                pct(last, .5), pct(last, 1), pct(spread, .5), pct(spread, 1));
  }
  std::vector<int> tiles_of(static_cast<std::size_t>(grid), 0);
  for (int k = 0; k < kMarks; ++k) {
    std::vector<double> v;
    for (std::int64_t b = 0; b < grid; ++b) {
      const unsigned long long t = m[static_cast<std::size_t>(b * kMarks + k)];
      if (t) v.push_back(static_cast<double>(t - t0) / 1e3);
      if (t && k >= 4 && k < 12) tiles_of[static_cast<std::size_t>(b)] = k - 3;
    }
    if (v.empty()) continue;
    std::printf("    %-12s blocks %5zu  p0 %6.1f  p50 %6.1f  p90 %6.1f  max %6.1f us\n", what[k], v.size(), pct(v, 0), pct(v, .5),
                pct(v, .9), pct(v, 1));
  }
  if (tiles > 0) {
    int hist[9] = {};
    for (int c : tiles_of) ++hist[std::min(c, 8)];
    std::printf("    tiles a block:");
    for (int c = 0; c <= 8; ++c)
      if (hist[c]) std::printf(" %d: %d blocks", c, hist[c]);
    std::printf("\n");
  }
  // per tile's duration: the mean over blocks of (end of tile i) - (end of tile i - 1 or tile 0 begun)
  if (tiles > 0) {
    std::vector<double> d;
    for (std::int64_t b = 0; b < grid; ++b) {
      const unsigned long long* r = &m[static_cast<std::size_t>(b * kMarks)];
      for (int i = 0; i < 8 && r[4 + i]; ++i) d.push_back(static_cast<double>(r[4 + i] - (i == 0 ? r[3] : r[3 + i])) / 1e3);
    }
    std::printf("    a tile's time: p0 %.1f p50 %.1f p90 %.1f max %.1f us\n", pct(d, 0), pct(d, .5), pct(d, .9), pct(d, 1));
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::int64_t n = std::int64_t(1) << 26, seg_tile = 65536, seg_split = 16384;
  float* x = nullptr;
  CK(cudaMalloc(&x, n * 4));
  fill<<<4 * sms, 256>>>(x, n, 12345u, 4.0f);  // (runs 86-89: another hash, the same range)
  const finish_words W = make_finish_words(1 << 19);
  unsigned long long* marks = nullptr;
  CK(cudaMalloc(&marks, sizeof(unsigned long long) * kMarks * 4096));
  CK(cudaMemcpyToSymbol(g_marks, &marks, sizeof marks));
  clk_dev();
  void* partials = nullptr;
  CK(cudaMalloc(&partials, 64 * 4096));
  void* out = nullptr;
  CK(cudaMalloc(&out, 8 * 16384));
  long long* ovf = nullptr;
  CK(cudaMalloc(&ovf, 8));
  // offsets: one segment; the uneven ones (uneven_offsets of bench/gpu_bench.cu)
  const std::int64_t segs = 10001;
  std::vector<std::int64_t> one{0, n}, uneven{0};
  std::int64_t tiny = 0;
  for (std::int64_t s = 0; s < segs; ++s) tiny += s == segs / 2 ? 0 : s % 4;
  for (std::int64_t s = 0; s < segs; ++s) uneven.push_back(uneven.back() + (s == segs / 2 ? n - tiny : s % 4));
  std::int64_t *d_one = nullptr, *d_uneven = nullptr;
  CK(cudaMalloc(&d_one, 16));
  CK(cudaMemcpy(d_one, one.data(), 16, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&d_uneven, 8 * uneven.size()));
  CK(cudaMemcpy(d_uneven, uneven.data(), 8 * uneven.size(), cudaMemcpyHostToDevice));
  using Fast = fast_sum<float, float>;
  using Cert = certified_sum<float, float, false>;
  const std::int64_t tiles = (n + seg_tile - 1) / seg_tile;
  // one segment: a mean length past seg_block_len, so G = kBlock and split = max(seg_split, seg_tile)
  {
    const geo g{x, d_one, 1, 0, 0, 0, n};
    const std::int64_t items = tiles + 1;
    run<Fast, kBlock, true, 2>("one fast late", g, seg_tile, seg_tile, tiles, items, W, static_cast<double*>(partials), out, ovf,
                               marks, sms);
    run<Cert, kBlock, true, 2>("one exact late", g, seg_tile, seg_tile, tiles, items, W, static_cast<Cert::acc*>(partials), out,
                               ovf, marks, sms);
    run<Fast, kBlock, true, 1>("one fast ahead1", g, seg_tile, seg_tile, tiles, items, W, static_cast<double*>(partials), out, ovf,
                               marks, sms);
    run<Cert, kBlock, true, 1>("one exact ahead1", g, seg_tile, seg_tile, tiles, items, W, static_cast<Cert::acc*>(partials), out,
                               ovf, marks, sms);
    run<Fast, kBlock, true>("one fast", g, seg_tile, seg_tile, tiles, items, W, static_cast<double*>(partials), out, ovf, marks, sms);
    run<Cert, kBlock, true>("one exact", g, seg_tile, seg_tile, tiles, items, W, static_cast<Cert::acc*>(partials), out, ovf, marks,
                            sms);
    // the same tiles in the 32-lane kernel (whose one group item then finds its segment too long)
    run<Cert, 32, true>("one exact G32", g, seg_tile, seg_tile, tiles, items, W, static_cast<Cert::acc*>(partials), out, ovf,
                        marks, sms);
    run<Cert, 32, false>("one exact G32 eager", g, seg_tile, seg_tile, tiles, items, W, static_cast<Cert::acc*>(partials), out,
                         ovf, marks, sms);
    // eager (plan seg_lazy_tiles = 0): the tiles taken in turn (block b: b, b + grid, ...), not claimed
    run<Fast, kBlock, false>("one fast eager", g, seg_tile, seg_tile, tiles, items, W, static_cast<double*>(partials), out, ovf, marks,
                             sms);
    run<Cert, kBlock, false>("one exact eager", g, seg_tile, seg_tile, tiles, items, W, static_cast<Cert::acc*>(partials), out, ovf,
                             marks, sms);
  }
  // uneven: 32 lanes a short segment (fast: mean / 4 >= 512; exact: mean * 16 / 128 >= 512)
  {
    const geo g{x, d_uneven, segs, 0, 0, 0, n};
    const std::int64_t items = tiles + (segs + kBlock / 32 - 1) / (kBlock / 32);
    run<Fast, 32, true, 2>("uneven fast late", g, seg_tile, seg_split, tiles, items, W, static_cast<double*>(partials), out, ovf,
                           marks, sms);
    run<Cert, 32, true, 2>("uneven exact late", g, seg_tile, seg_split, tiles, items, W, static_cast<Cert::acc*>(partials), out,
                           ovf, marks, sms);
    run<Fast, 32, true, 1>("uneven fast ahead1", g, seg_tile, seg_split, tiles, items, W, static_cast<double*>(partials), out, ovf,
                           marks, sms);
    run<Cert, 32, true, 1>("uneven exact ahead1", g, seg_tile, seg_split, tiles, items, W, static_cast<Cert::acc*>(partials), out,
                           ovf, marks, sms);
    run<Fast, 32, true>("uneven fast", g, seg_tile, seg_split, tiles, items, W, static_cast<double*>(partials), out, ovf, marks, sms);
    run<Cert, 32, true>("uneven exact", g, seg_tile, seg_split, tiles, items, W, static_cast<Cert::acc*>(partials), out, ovf, marks,
                        sms);
    run<Fast, 32, false>("uneven fast eager", g, seg_tile, seg_split, tiles, items, W, static_cast<double*>(partials), out, ovf, marks,
                         sms);
    run<Cert, 32, false>("uneven exact eager", g, seg_tile, seg_split, tiles, items, W, static_cast<Cert::acc*>(partials), out, ovf,
                         marks, sms);
  }
  // equal segments of 200 (the benchmark's tune job): 4 lanes a segment, fast and exact, lazy (no tile needed)
  {
    std::vector<std::int64_t> eq{0};
    const std::int64_t segs200 = n / 200;
    for (std::int64_t s = 1; s < segs200; ++s) eq.push_back(s * 200);
    eq.push_back(n);
    std::int64_t* d_eq = nullptr;
    CK(cudaMalloc(&d_eq, 8 * eq.size()));
    CK(cudaMemcpy(d_eq, eq.data(), 8 * eq.size(), cudaMemcpyHostToDevice));
    const geo g{x, d_eq, segs200, 0, 0, 0, n};
    const std::int64_t items = tiles + (segs200 + kBlock / 4 - 1) / (kBlock / 4);
    void* out200 = nullptr;
    CK(cudaMalloc(&out200, 8 * segs200));
    run<Fast, 4, true>("equal200 fast", g, seg_tile, seg_split, tiles, items, W, static_cast<double*>(partials), out200, ovf, marks,
                       sms);
    run<Cert, 4, true>("equal200 exact", g, seg_tile, seg_split, tiles, items, W, static_cast<Cert::acc*>(partials), out200, ovf,
                       marks, sms);
    CK(cudaFree(out200));
    CK(cudaFree(d_eq));
  }
  // equal segments of 8192: 32 lanes a segment, no tile needed 
  {
    std::vector<std::int64_t> eq;
    const std::int64_t segs8k = n / 8192;
    for (std::int64_t s = 0; s <= segs8k; ++s) eq.push_back(s * 8192);
    std::int64_t* d_eq = nullptr;
    CK(cudaMalloc(&d_eq, 8 * eq.size()));
    CK(cudaMemcpy(d_eq, eq.data(), 8 * eq.size(), cudaMemcpyHostToDevice));
    const geo g{x, d_eq, segs8k, 0, 0, 0, n};
    const std::int64_t items = tiles + (segs8k + kBlock / 32 - 1) / (kBlock / 32);
    run<Fast, 32, true>("equal8192 fast", g, seg_tile, seg_split, tiles, items, W, static_cast<double*>(partials), out, ovf, marks,
                        sms);
    run<Cert, 32, true>("equal8192 exact", g, seg_tile, seg_split, tiles, items, W, static_cast<Cert::acc*>(partials), out, ovf,
                        marks, sms);
    CK(cudaFree(d_eq));
  }
  // rows 1024 x 65536: a block a row (rows of at most the tile), no tiles
  {
    const std::int64_t rows = 1024, cols = 65536;
    const geo g{x, nullptr, rows, cols, cols, 1, n};
    run<Fast, kBlock, false>("rows fast", g, 65536, 65536, 0, rows, W, static_cast<double*>(partials), out, ovf, marks, sms);
    run<Cert, kBlock, false>("rows exact", g, 65536, 65536, 0, rows, W, static_cast<Cert::acc*>(partials), out, ovf, marks, sms);
  }
  return 0;
}
