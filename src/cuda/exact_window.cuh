// Exact float64 dot products (v4): windowed bins in shared memory, an accumulator for
// exact_kernel (src/cuda/exact.cuh) beside bins_acc (float32) and levels_acc (float64 v3).
//
// Why: the levels of v3 put each product p = x*y and its TwoProduct error e = fma(x, y, -p)
// (Ogita, Rump and Oishi, "Accurate sum and dot product", SIAM J. Sci. Comput. 26(6), 2005)
// through all K = 9 levels, 53 FP64 operations per product in long dependent chains: about
// 220 G products/s on an H200, 0.57-0.77x of fast mode (docs/performance.md, "Run 8-9").
// Here each product costs a fixed handful of operations whatever the data: p and e are each
// split into two pieces of at most 27 bits (the top 26 bits by masking, the rest by one exact
// subtraction), and each piece is added to the float64 bin of its exponent, as the float32
// kernels do (binned summation: Demmel and Hida, "Accurate and efficient floating point
// summation", SIAM J. Sci. Comput. 25(4), 2003).
//
// Geometry: bin b holds the pieces whose biased exponent E is in [W b, W b + W). A piece is a
// multiple of 2^(E - 1049) (at most 27 significant bits) below 2^(E - 1022), so bin b holds
// multiples of its unit 2^(W b - 1049) below 2^(W + 26) units each, and 2^(27 - W) pieces
// sum exactly in a float64 (2^53 units). The two pieces of one value lie in different bins
// (they are at least 26 bits apart), so a product adds at most two pieces to a bin.
//
// Window: float64 products span 4,200 bits of exponent, too many bins for shared memory, so
// each warp keeps NB bins below a high bin `hib` that only moves up (warp-uniform, in the main
// loop, when a larger product arrives: the bins are first flushed). A product is taken by the
// bins when every piece of it falls in the window; any other one (zero, NaN, infinity, too
// large, or with a piece below the window) goes out of line to the block superaccumulator,
// exactly, as in v3. Each thread owns a row of NB + 1 bins in shared memory ([bin][thread]:
// no bank conflicts whatever bins the lanes pick); bin NB is scratch for zero pieces.
// Every flush (warp-collective: before the bins could lose exactness, on a window move and at
// the end) sums a bin over the warp as 64-bit integers and deposits it once.
#pragma once

#include "cuda/exact.cuh"

namespace tally::cuda::exact {

template <int W, int BLOCK> __device__ __noinline__ void flush_window(double* row, long long* sa, int hib, int lob) {
  const int lane = threadIdx.x & 31;
#pragma unroll 1
  for (int s = 0; s <= hib - lob; ++s) {
    double v = row[s * BLOCK];
    if (!__any_sync(kFull, v != 0.0)) continue;
    row[s * BLOCK] = 0.0;
    const int ue = W * (hib - s) - 1049;  // the bin's unit; v is an integer below 2^53 of them
    long long q = __double2ll_rn(v * ex::pow2(-ue));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) q += __shfl_xor_sync(kFull, q, o);
    if (lane == 0 && q != 0) deposit_shared_int<ex::f64_dot_layout>(sa, q, ue);
  }
}

/// Exact float64 dot products (and sums of squares): W exponent bits per bin (8 or 16), NB
/// bins per thread in the window, BLOCK threads per block (the row stride in shared memory).
template <int W, int NB, int BLOCK> struct window_acc {
  static_assert(W == 8 || W == 16, "bins of 8 or 16 exponent bits");
  using layout = ex::f64_dot_layout;
  static constexpr int shift = W == 8 ? 3 : 4;
  static constexpr std::size_t smem_bytes = sizeof(double) * (NB + 1) * BLOCK;
  /// Lowest bin: pieces at or above 2^-895, so products in the window are at least 2^-843
  /// and their TwoProduct errors normal and exact.
  static constexpr int lob_min = 128 / W;
  /// Highest bin: a full bin stays below 2^(W b - 996) <= 2^1023.
  static constexpr int hib_max = 2019 / W;
  /// Products per thread between flushes: two pieces per bin per product, 2^(27 - W) pieces
  /// per bin, less 64 for the inputs outside the main loop (not counted).
  static constexpr int max_terms = (1 << (26 - W)) - 64;
  static constexpr int slack = W == 8 ? 2 : 1;  // a new window leaves room 2^16 above

  double* row;  // this thread's bins: row[s * BLOCK] holds bin hib - s
  long long* sa;
  int hib, lob;
  unsigned lo_e;  // smallest biased exponent of p (and of a nonzero e) in the window
  unsigned span;  // largest biased exponent of p less lo_e
  int terms;
  unsigned flags;

  __device__ __forceinline__ void window(int h) {
    hib = h;
    lob = max(h - NB + 1, lob_min);
    lo_e = static_cast<unsigned>(W * lob + 52);  // p's lowest piece is at most 52 bits below p
    span = static_cast<unsigned>(W * h + W - 1) - lo_e;
    terms = 0;
  }
  __device__ void init(double* dyn, long long* block_sa) {
    row = dyn + threadIdx.x;
    sa = block_sa;
    flags = 0;
#pragma unroll 1
    for (int s = 0; s <= NB; ++s) row[s * BLOCK] = 0.0;
    window((1023 >> shift) + slack);  // products below 2^16 until a larger one arrives
  }
  __device__ void flush() {
    flush_window<W, BLOCK>(row, sa, hib, lob);
    terms = 0;
  }

  __device__ static __forceinline__ unsigned exponent(double v) { return hi_word(v) >> 20 & 0x7ffu; }
  /// Whether p = x*y (biased exponent ep) and its error (biased exponent ee) fall in the window.
  __device__ __forceinline__ bool inside(unsigned ep, unsigned ee) const {
    return ep - lo_e <= span && ee - 1u >= lo_e - 1u;
  }
  /// Adds one piece (zero pieces go to the scratch bin NB, or to an unused one below the window).
  __device__ __forceinline__ void piece(double v) {
    unsigned s = min(static_cast<unsigned>(hib) - (exponent(v) >> shift), static_cast<unsigned>(NB));
    row[s * BLOCK] += v;
  }
  __device__ __forceinline__ void pieces(double v) {
    double hi = __longlong_as_double(__double_as_longlong(v) & ~((1ll << 27) - 1));  // top 26 bits
    piece(hi);
    piece(v - hi);  // exact: the low 27 bits
  }

  template <int N, class T> __device__ __forceinline__ void tile(const T* a, const T* c) {
    double p[N];
    unsigned ep[N];
    bool high = false;
    const unsigned top = lo_e + span;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      p[k] = static_cast<double>(a[k]) * static_cast<double>(c[k]);
      ep[k] = exponent(p[k]);
      high |= ep[k] > top && ep[k] < 0x7ffu;
    }
    if (__any_sync(kFull, high)) {  // rare: maybe a new window (warp-wide)
      unsigned want = 0;
#pragma unroll
      for (int k = 0; k < N; ++k)
        if (ep[k] > top && ep[k] < 0x7ffu)
          want = max(want, min((ep[k] >> shift) + slack, static_cast<unsigned>(hib_max)));
      want = __reduce_max_sync(kFull, want);
      if (static_cast<int>(want) > hib) {
        flush();
        window(static_cast<int>(want));
      }
    }
    unsigned out_mask = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      double e = ex::exact_fma(a[k], c[k], -p[k]);
      bool in = inside(ep[k], exponent(e));
      out_mask |= unsigned(!in) << k;
      pieces(in ? p[k] : 0.0);
      pieces(in ? e : 0.0);
    }
    if (out_mask != (1u << N) - 1) flags |= ex::seen_not_neg_zero;
    if (out_mask) {
      double buf[2 * N];
#pragma unroll
      for (int k = 0; k < N; ++k) {
        buf[k] = a[k];
        buf[N + k] = c[k];
      }
      flags |= take_outside_tile<true, layout, N>(sa, buf, out_mask);
    }
    terms += N;
    if (terms >= max_terms) flush();
  }

  // Outside the main loop (head, remainder and tail: fewer than 64 products per thread in
  // all, the margin in max_terms); not counted, and the window does not move here.
  template <class T> __device__ __forceinline__ void one(T a, T c) {
    double x = a, y = c;
    double p = x * y;
    double e = ex::exact_fma(x, y, -p);
    if (inside(exponent(p), exponent(e))) {
      pieces(p);
      pieces(e);
      flags |= ex::seen_not_neg_zero;
    } else {
      flags |= take_outside<true, layout>(sa, x, y);
    }
  }

  __device__ void finish(unsigned* block_flags) {
    flush();
    unsigned f = __reduce_or_sync(kFull, flags);
    if ((threadIdx.x & 31) == 0 && f) atomicOr(block_flags, f);
  }
};

}  // namespace tally::cuda::exact
