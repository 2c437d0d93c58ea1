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
///
/// Written for few integer instructions (an Nsight Compute profile of the first version, run
/// 14, found the integer pipe the busiest at 84 instructions per product): a piece's bin
/// address is its float64 high word shifted and masked (the exponent's top bits times the row
/// stride), subtracted from the address of the window's high bin and clamped to the scratch
/// bin (zero pieces, and every piece of a product outside the window: their base address is
/// set past the scratch bin); the window test compares high words.
/// GROUPED (a variant for tune_exact, not yet measured): a product's four bins are read
/// together, then written (p_lo and e_hi, the only pieces that can share a bin, are added
/// first: exact, both multiples of the bin's unit below 2^(W + 26) of them), so each thread has
/// one chain of dependent shared-memory updates per product instead of four (run 16: the
/// warps mostly wait on those chains).
template <int W, int NB, int BLOCK, bool GROUPED = false> struct window_acc {
  static_assert(W == 8 || W == 16, "bins of 8 or 16 exponent bits");
  using layout = ex::f64_dot_layout;
  static constexpr int shift = W == 8 ? 3 : 4;
  static constexpr unsigned stride = BLOCK * sizeof(double);  // bytes between bins of a row
  static_assert((stride & (stride - 1)) == 0 && stride <= (1u << (20 + shift)), "a power-of-two row stride");
  static constexpr int stride_log2 = __builtin_ctz(stride);
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
  unsigned lo_hi;    // smallest |high word| of p (and of a nonzero e) in the window
  unsigned span_hi;  // |high word| of p less lo_hi is below this in the window
  unsigned top_hi;   // |high word| of a product above the window (finite: below 0x7ff00000)
  unsigned base;     // shared address of bin 0 if it were in the row: row + hib * stride
  unsigned far;      // a base past the scratch bin for every piece (products outside the window)
  unsigned scratch;  // shared address of the scratch bin row[NB * BLOCK]
  int terms;
  unsigned flags;

  __device__ __forceinline__ void window(int h) {
    hib = h;
    lob = max(h - NB + 1, lob_min);
    const unsigned lo_e = static_cast<unsigned>(W * lob + 52);  // p's lowest piece is at most 52 bits below p
    lo_hi = lo_e << 20;
    top_hi = static_cast<unsigned>(W * h + W) << 20;
    span_hi = top_hi - lo_hi;
    base = static_cast<unsigned>(__cvta_generic_to_shared(row)) + static_cast<unsigned>(h) * stride;
    terms = 0;
  }
  __device__ void init(double* dyn, long long* block_sa) {
    row = dyn + threadIdx.x;
    sa = block_sa;
    flags = 0;
    scratch = static_cast<unsigned>(__cvta_generic_to_shared(row)) + NB * stride;
    far = scratch + (0x7ffu >> shift) * stride;
#pragma unroll 1
    for (int s = 0; s <= NB; ++s) row[s * BLOCK] = 0.0;
    window((1023 >> shift) + slack);  // products below 2^16 until a larger one arrives
  }
  __device__ void flush() {
    flush_window<W, BLOCK>(row, sa, hib, lob);
    terms = 0;
  }

  /// The bin address of a piece: min(b - bin(v) * stride, scratch).
  __device__ __forceinline__ unsigned address(unsigned b, double v) const {
    unsigned off = (hi_word(v) >> (20 + shift - stride_log2)) & ((0x7ffu >> shift) << stride_log2);
    return min(b - off, scratch);
  }
  __device__ static __forceinline__ double load(unsigned a) {
    double t;
    asm volatile("ld.shared.f64 %0, [%1];" : "=d"(t) : "r"(a) : "memory");
    return t;
  }
  __device__ static __forceinline__ void store(unsigned a, double v) {
    asm volatile("st.shared.f64 [%0], %1;" ::"r"(a), "d"(v) : "memory");
  }
  __device__ __forceinline__ void piece(unsigned b, double v) const {
    unsigned a = address(b, v);
    store(a, load(a) + v);
  }
  __device__ static __forceinline__ double top26(double v) {
    return __longlong_as_double(__double_as_longlong(v) & ~((1ll << 27) - 1));
  }
  /// v as two pieces: its top 26 bits (masked) and the rest (an exact subtraction).
  __device__ __forceinline__ void pieces(unsigned b, double v) const {
    double hi = top26(v);
    piece(b, hi);
    piece(b, v - hi);
  }
  /// p and its error e (base b: the window's, or `far` for a product outside it).
  __device__ __forceinline__ void product(unsigned b, double p, double e) const {
    if constexpr (!GROUPED) {
      pieces(b, p);
      pieces(b, e);
    } else {
      double ph = top26(p), eh = top26(e);
      double pl = p - ph, el = e - eh;
      unsigned a0 = address(b, ph), a1 = address(b, pl), a2 = address(b, eh), a3 = address(b, el);
      // Live pieces have distinct addresses below b except p_lo and e_hi; zero pieces land at
      // b or the scratch bin (outside the live bins), where several may meet: zeros only.
      const bool fold = a1 == a2;
      pl = fold ? pl + eh : pl;
      eh = fold ? 0.0 : eh;
      a2 = fold ? scratch : a2;
      double t0 = load(a0), t1 = load(a1), t2 = load(a2), t3 = load(a3);
      store(a0, t0 + ph);
      store(a1, t1 + pl);
      store(a2, t2 + eh);
      store(a3, t3 + el);
    }
  }
  /// Whether p (|high word| hp) and its error e fall in the window.
  __device__ __forceinline__ bool inside(unsigned hp, double e) const {
    unsigned he = hi_word(e) & 0x7fffffffu;
    return hp - lo_hi < span_hi && he - 1u >= lo_hi - 1u;  // e zero, or not below the window
  }

  template <int N, class T> __device__ __forceinline__ void tile(const T* a, const T* c) {
    double p[N];
    unsigned hp[N];
    unsigned mx = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      p[k] = static_cast<double>(a[k]) * static_cast<double>(c[k]);
      hp[k] = hi_word(p[k]) & 0x7fffffffu;
      mx = max(mx, hp[k] < 0x7ff00000u ? hp[k] : 0u);
    }
    if (__any_sync(kFull, mx >= top_hi)) {  // rare: maybe a new window (warp-wide)
      unsigned want = min(((mx >> 20) >> shift) + slack, static_cast<unsigned>(hib_max));
      want = __reduce_max_sync(kFull, mx >= top_hi ? want : 0u);
      if (static_cast<int>(want) > hib) {
        flush();
        window(static_cast<int>(want));
      }
    }
    bool any_in = false, any_out = false;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      double e = ex::exact_fma(a[k], c[k], -p[k]);
      bool in = inside(hp[k], e);
      any_in |= in;
      any_out |= !in;
      product(in ? base : far, p[k], e);
    }
    if (any_in) flags |= ex::seen_not_neg_zero;
    if (any_out) out_of_window<N>(a, c);
    terms += N;
    if (terms >= max_terms) flush();
  }
  /// The products of a tile that the window did not take, out of line (rare).
  template <int N, class T> __device__ __forceinline__ void out_of_window(const T* a, const T* c) {
    double buf[2 * N];
    unsigned mask = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      double p = static_cast<double>(a[k]) * static_cast<double>(c[k]);
      mask |= unsigned(!inside(hi_word(p) & 0x7fffffffu, ex::exact_fma(a[k], c[k], -p))) << k;
      buf[k] = a[k];
      buf[N + k] = c[k];
    }
    flags |= take_outside_tile<true, layout, N>(sa, buf, mask);
  }

  // Outside the main loop (head, remainder and tail: fewer than 64 products per thread in
  // all, the margin in max_terms); not counted, and the window does not move here.
  template <class T> __device__ __forceinline__ void one(T a, T c) {
    double x = a, y = c;
    double p = x * y;
    double e = ex::exact_fma(x, y, -p);
    if (inside(hi_word(p) & 0x7fffffffu, e)) {
      product(base, p, e);
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
