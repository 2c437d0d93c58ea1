// Exact-mode kernels (v3): per-thread accumulators that take each input in a handful of
// instructions whatever its exponent, a block superaccumulator in shared memory behind them,
// and one launch per reduction (the last block rounds). See docs/exact.md for the design and
// docs/performance.md for the measurements that chose it.
//
//  - float32 sums and dots: binned accumulation (Demmel and Hida, "Accurate and efficient
//    floating point summation", SIAM J. Sci. Comput. 25(4), 2003): each thread owns a row of
//    float64 bins in shared memory, one per range of exponents ([bin][thread] layout: no
//    bank conflicts whatever bins the lanes pick); a bin only ever holds multiples of its
//    unit below 2^53 units, so its float64 additions are exact;
//  - float64 sums and dots: K anchored levels in registers (ops::exact::extract, after
//    Demmel and Nguyen), anchored per warp at the largest magnitude seen; a rare remainder
//    below the last level, and inputs too large for the anchor outside the warp-uniform main
//    loop, go to the block superaccumulator.
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>

#include "cuda/block.cuh"
#include "cuda/thread.cuh"
#include "tally/ops/exact.hpp"

namespace tally::cuda::exact {

namespace ex = ops::exact;
inline constexpr unsigned kFull = 0xffffffffu;

// ---- deposits into the block superaccumulator (64-bit shared atomics; out of line: rare) ---

template <class L> __device__ __noinline__ void deposit_shared(long long* sa, double v) {
  ex::deposit<L>(v, [sa](int i, std::int64_t d) {
    atomicAdd(reinterpret_cast<unsigned long long*>(&sa[i]), static_cast<unsigned long long>(d));
  });
}
/// v * 2^e for a signed integer v (|v| < 2^63).
template <class L> __device__ __noinline__ void deposit_shared_int(long long* sa, long long v, int e) {
  if (v == 0) return;
  bool neg = v < 0;
  auto m = static_cast<ops::u128>(neg ? -static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v));
  ex::deposit<L>(m, e, neg, [sa](int i, std::int64_t d) {
    atomicAdd(reinterpret_cast<unsigned long long*>(&sa[i]), static_cast<unsigned long long>(d));
  });
}
template <class L> __device__ __noinline__ void deposit_shared_product(long long* sa, double a, double b) {
  ex::deposit_product<L>(a, b, [sa](int i, std::int64_t d) {
    atomicAdd(reinterpret_cast<unsigned long long*>(&sa[i]), static_cast<unsigned long long>(d));
  });
}

TALLY_HD unsigned special_flags(double v) {  // v is NaN or an infinity
  return v != v ? ex::seen_nan : (v > 0 ? ex::seen_pos_inf : ex::seen_neg_inf);
}
__device__ __forceinline__ unsigned hi_word(double v) {
  return static_cast<unsigned>(__double_as_longlong(v) >> 32);
}

// ---- float32: bins in shared memory ---------------------------------------------------------

/// Bins of float32 sums: bin b holds the inputs whose biased exponent is in [8b, 8b + 8)
/// (bin 31 also NaN and infinities). Its inputs are multiples of 2^(8b - 150) below
/// 2^(8b - 119): 2^31 units, so 2^22 of them sum exactly in a double (2^53 units).
struct f32_sum_bins {
  using layout = ex::f32_sum_layout;
  static constexpr int count = 32;      // bins per thread
  static constexpr int finite = 31;     // bins 0..30 hold only finite values
  static constexpr int special = 31;    // the bin where NaN and infinities land
  static constexpr int max_terms = (1 << 22) - 64;  // inputs per thread between flushes
  __device__ static int unit_exp(int b) { return 8 * b - 150; }
};
/// Bins of float32 dot products: each product p = x*y (exact in float64, 48 bits) is split at
/// its 24th bit into two pieces of at most 24 bits; a piece with biased float64 exponent
/// in [720 + 16b, 736 + 16b) goes to bin b (0..34; products lie in [2^-298, 2^256)), so bin
/// b holds multiples of 2^(16b - 326) below 2^(16b - 287): 2^39 units, 2^14 pieces exactly.
/// Bin 35 takes the high piece of zero, infinite and NaN products; bin 36 is scratch for the
/// low piece of those (never read).
struct f32_dot_bins {
  using layout = ex::f32_dot_layout;
  static constexpr int count = 37;
  static constexpr int finite = 35;
  static constexpr int special = 35;
  static constexpr int max_terms = (1 << 13) - 64;  // two pieces per product
  __device__ static int unit_exp(int b) { return 16 * b - 326; }
};

/// Warp-collective (all lanes active, in the main loop): moves the warp's bins into the block
/// superaccumulator and clears them. Each bin value is an integer number of units below
/// 2^53, so the warp's 32 of them sum exactly as 64-bit integers and lane 0 deposits one
/// value per bin. Returns the special-value and sign-of-zero flags the bins held. Out of line
/// (it runs once per B::max_terms inputs) and free of the accumulator object, which so stays
/// in registers.
template <class B, int BLOCK> __device__ __noinline__ unsigned flush_bins(double* row, long long* sa) {
  unsigned flags = 0;
#pragma unroll 1
  for (int b = 0; b <= B::special; ++b) {
    double v = row[b * BLOCK];
    row[b * BLOCK] = -0.0;
    if (__double_as_longlong(v) != static_cast<long long>(0x8000000000000000ull)) flags |= ex::seen_not_neg_zero;
    long long s = 0;
    if (!isfinite(v)) flags |= special_flags(v);
    else s = __double2ll_rn(v * ex::pow2(-B::unit_exp(b)));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(kFull, s, o);
    if ((threadIdx.x & 31) == 0 && s != 0) deposit_shared_int<typename B::layout>(sa, s, B::unit_exp(b));
  }
  return flags;
}

template <bool DOT, int BLOCK> struct bins_acc {
  using B = std::conditional_t<DOT, f32_dot_bins, f32_sum_bins>;
  using layout = typename B::layout;
  static constexpr std::size_t smem_bytes = sizeof(double) * B::count * BLOCK;

  double* row;  // this thread's bins: row[b * BLOCK]
  long long* sa;
  int terms = 0;
  unsigned flags = 0;

  __device__ void init(double* dyn, long long* block_sa) {
    row = dyn + threadIdx.x;
    sa = block_sa;
#pragma unroll 1
    for (int b = 0; b < B::count; ++b) row[b * BLOCK] = -0.0;  // -0.0: see seen_not_neg_zero
  }

  __device__ __forceinline__ void add(float x) {
    unsigned b = (__float_as_uint(x) >> 26) & 31u;  // biased exponent / 8
    row[b * BLOCK] += static_cast<double>(x);
  }
  __device__ __forceinline__ void add(float x, float y) {
    double p = static_cast<double>(x) * static_cast<double>(y);
    long long pb = __double_as_longlong(p);
    double hi = __longlong_as_double(pb & ~((1ll << 29) - 1));
    double lo = p - hi;  // exact; zero, or NaN only when p is not finite (then scratch)
    unsigned bh = min((static_cast<unsigned>(pb >> 52) & 0x7ffu) - 720u >> 4, 35u);
    unsigned bl = min((hi_word(lo) >> 20 & 0x7ffu) - 720u >> 4, 36u);
    row[bh * BLOCK] += hi;
    row[bl * BLOCK] += lo;
  }

  __device__ __forceinline__ void flush() {
    flags |= flush_bins<B, BLOCK>(row, sa);
    terms = 0;
  }

  template <int N, class T> __device__ __forceinline__ void tile(const T* a, const T* c) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if constexpr (DOT) add(a[k], c[k]);
      else add(a[k]);
    }
    terms += N;
    if (terms >= B::max_terms) flush();
  }
  // Outside the main loop (head, remainder and tail: fewer than 64 inputs per thread in all,
  // the margin left in B::max_terms), not counted, so that flushes stay warp-uniform.
  template <class T> __device__ __forceinline__ void one(T a, T c) {
    if constexpr (DOT) add(a, c);
    else add(a);
  }

  /// Block level (every thread calls): the bins of all threads are summed bin by bin as
  /// integers (each below 2^53 units; BLOCK of them below 2^61) and deposited once per bin.
  __device__ void finish(unsigned* block_flags) {
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double* bins = row - threadIdx.x;
    unsigned f = flags;
    for (int b = warp; b <= B::special; b += BLOCK / 32) {
      const double unit_inv = ex::pow2(-B::unit_exp(b));
      long long s = 0;
#pragma unroll 4
      for (int t = lane; t < BLOCK; t += 32) {
        double v = bins[b * BLOCK + t];
        if (__double_as_longlong(v) != static_cast<long long>(0x8000000000000000ull)) f |= ex::seen_not_neg_zero;
        if (!isfinite(v)) f |= special_flags(v);
        else if (b < B::finite || !DOT) s += __double2ll_rn(v * unit_inv);
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(kFull, s, o);
      if (lane == 0 && s != 0) deposit_shared_int<layout>(sa, s, B::unit_exp(b));
    }
    f = __reduce_or_sync(kFull, f);
    if (lane == 0 && f) atomicOr(block_flags, f);
  }
};

// ---- float64: anchored levels in registers ------------------------------------------------

/// K levels per thread, W = ex::level_bits apart, anchored at 2^cap (inputs below 2^cap go
/// straight in; the anchor is the same for all lanes of a warp and only moves up, in the
/// warp-uniform main loop). DOT: p = x*y and its TwoProduct error e = fma(x, y, -p) (Ogita,
/// Rump and Oishi 2005) enter the levels (e below level 0: |e| <= 2^-53 |p|).
/// One float64 input (or product x*y) that the levels do not take: special values give flags,
/// zero products only the sign-of-zero flag; anything else (huge, underflowing product, or
/// above the anchor outside the main loop) is deposited exactly. Returns the flags.
template <bool DOT, class L> __device__ __noinline__ unsigned take_outside(long long* sa, double x, double y) {
  if constexpr (DOT) {
    unsigned long long bx = __double_as_longlong(x), by = __double_as_longlong(y);
    if (!isfinite(x) || !isfinite(y)) return ex::seen_not_neg_zero | special_flags(x * y);
    bool xz = x == 0.0, yz = y == 0.0;
    unsigned f = ex::product_is_neg_zero(bx, by, xz, yz) ? 0u : unsigned(ex::seen_not_neg_zero);
    if (!xz && !yz) deposit_shared_product<L>(sa, x, y);
    return f;
  } else {
    if (!isfinite(x)) return ex::seen_not_neg_zero | special_flags(x);
    deposit_shared<L>(sa, x);
    return 0;
  }
}

template <bool DOT, class L, int N>
__device__ __noinline__ unsigned take_outside_tile(long long* sa, const double* buf, unsigned mask) {
  unsigned f = 0;
#pragma unroll 1
  for (int k = 0; k < N; ++k)
    if (mask >> k & 1u) f |= take_outside<DOT, L>(sa, buf[k], buf[N + k]);
  return f;
}

/// Deposits the nonzero values of buf[0..N) (remainders below the last level; rare).
template <class L, int N> __device__ __noinline__ void deposit_nonzero(long long* sa, const double* buf) {
#pragma unroll 1
  for (int k = 0; k < N; ++k)
    if (buf[k] != 0.0) deposit_shared<L>(sa, buf[k]);
}

template <bool DOT, int K, int P = 1, int F = 0> struct levels_acc {
  static_assert(F >= 0 && F < K, "the fast path uses fewer levels than the general one");
  using layout = std::conditional_t<DOT, ex::f64_dot_layout, ex::f64_sum_layout>;
  static constexpr std::size_t smem_bytes = 0;
  // Products are taken by the levels when 2^-965 <= |p| < 2^cap (no underflow in e, and the
  // error-free TwoProduct conditions hold); the cap never exceeds 2^997 for dots, 2^1000 for
  // sums, so no level overflows.
  static constexpr int max_cap = DOT ? 997 : 1000;
  static constexpr unsigned low_hi = DOT ? static_cast<unsigned>(1023 - 965) << 20 : 0u;
  static constexpr int slack = 8;  // a new anchor leaves room for inputs 2^8 larger

  // P independent sets of K levels (element k of a tile goes to set k % P: P chains of
  // dependent additions instead of one), all with the same anchor.
  double S[P][K];
  long long carry;  // units of 2^(ulp(level 0) + 30)
  int cap;
  unsigned cap_hi;  // (cap + 1023) << 20: x is taken iff (hi word of |x|) < cap_hi
  int terms;
  unsigned flags;
  double zs;  // -0.0 + every float64 input: stays -0.0 iff every input was -0.0
  long long* sa;

  __device__ __forceinline__ void anchor(int c) {
    cap = c;
    cap_hi = static_cast<unsigned>(c + 1023) << 20;
#pragma unroll
    for (int j = 0; j < P; ++j)
#pragma unroll
      for (int k = 0; k < K; ++k) S[j][k] = ex::level_anchor(ex::level_ulp(c, k));
    carry = 0;
    terms = 0;
  }
  __device__ void init(double*, long long* block_sa) {
    sa = block_sa;
    flags = 0;
    zs = -0.0;
    anchor(1);  // inputs below 2 until something larger arrives
  }

  /// x through levels from..KK-1 of set j; returns what is left below the last of them.
  template <int KK = K> __device__ __forceinline__ double take(int j, double x, int from = 0) {
#pragma unroll
    for (int k = 0; k < KK; ++k)
      if (k >= from) x = ex::extract(S[j][k], x);
    return x;
  }

  /// Whether levels 0..F-1 take every in-range input of the warp's tile whole: each input's
  /// lowest bit is at least 2^(e - 52) for |x| in [2^e, 2^(e+1)); a product p = x*y with
  /// |p| in [2^e, 2^(e+1)) and its error fma(x, y, -p) are multiples of ulp(x) ulp(y) >=
  /// 2^(e - 106). When that is at or above the ulp of level F-1, the remainders after level
  /// F-1 are exactly zero: the levels below are not needed and nothing need be tested.
  template <int N> __device__ __forceinline__ bool fast_tile(const double* p) const {
    if constexpr (F == 0) {
      return false;
    } else {
      unsigned lo = 0x7ffu;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        // Biased exponent of each in-range nonzero input (zero products and inputs outside
        // the levels do not count: they are taken out of line).
        bool in = DOT ? biased_hi(p[k]) < cap_hi - low_hi : p[k] != 0.0;
        lo = min(lo, in ? hi_word(p[k]) >> 20 & 0x7ffu : 0x7ffu);
      }
      lo = __reduce_min_sync(kFull, lo);
      return static_cast<int>(lo) - 1023 - (DOT ? 106 : 52) >= ex::level_ulp(cap, F - 1);
    }
  }

  /// Keeps every level within 2^(g + 49) of its anchor: each level's excess moves up one level
  /// (exactly, by extraction); level 0's excess above 2^(g0 + 30) goes to the integer carry.
  __device__ __forceinline__ void renormalize() {
    int g0 = ex::level_ulp(cap, 0);
    double m0 = ex::level_anchor(g0);
#pragma unroll
    for (int j = 0; j < P; ++j) {
#pragma unroll
      for (int k = K - 1; k >= 1; --k) {
        double m = ex::level_anchor(ex::level_ulp(cap, k));
        double d = S[j][k] - m;
        double r = ex::extract(S[j][k - 1], d);
        S[j][k] = m + r;
      }
      double d0 = S[j][0] - m0;
      double c = rint(d0 * ex::pow2(-(g0 + 30)));
      carry += static_cast<long long>(c);
      S[j][0] = m0 + (d0 - c * ex::pow2(g0 + 30));
    }
    terms = 0;
  }

  /// Warp-collective (all lanes active, same anchor): the levels of the warp are summed level
  /// by level (after renormalisation each is below 2^(g + 40) in magnitude, a multiple of 2^g,
  /// so 32 P of them sum exactly) and lane 0 deposits them; the levels are left empty.
  __device__ __forceinline__ void dump_warp() {
    renormalize();
#pragma unroll  // (S[j][k] with a run-time k would put the levels in local memory)
    for (int k = 0; k < K; ++k) {
      int g = ex::level_ulp(cap, k);
      double m = ex::level_anchor(g);
      double d = 0.0;
#pragma unroll
      for (int j = 0; j < P; ++j) {
        d += S[j][k] - m;
        S[j][k] = m;
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) d += __shfl_xor_sync(kFull, d, o);
      if ((threadIdx.x & 31) == 0 && d != 0.0) deposit_shared<layout>(sa, d);
    }
    long long c = carry;
    carry = 0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) c += __shfl_xor_sync(kFull, c, o);
    if ((threadIdx.x & 31) == 0) deposit_shared_int<layout>(sa, c, ex::level_ulp(cap, 0) + 30);
  }

  __device__ __forceinline__ void outside(double x, double y) { flags |= take_outside<DOT, layout>(sa, x, y); }

  // The cap an input in range asks for (0: none).
  __device__ __forceinline__ int wanted_cap(double v) {
    int e = static_cast<int>(hi_word(v) >> 20 & 0x7ffu) - 1023;  // |v| in [2^e, 2^(e+1))
    if (e + 1 <= cap || e >= max_cap || e == 1024) return 0;
    int c = e + 1 + slack;
    return c < max_cap ? c : max_cap;
  }

  template <int N, class T> __device__ __forceinline__ void tile(const T* a, const T* c) {
    double p[N];
    unsigned worst = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      p[k] = DOT ? a[k] * c[k] : a[k];
      worst = max(worst, biased_hi(p[k]));
    }
    if (__any_sync(kFull, worst >= cap_hi - low_hi)) {  // rare: maybe a new anchor (warp-wide)
      int want = 0;
#pragma unroll
      for (int k = 0; k < N; ++k) want = max(want, wanted_cap(p[k]));
      want = static_cast<int>(__reduce_max_sync(kFull, static_cast<unsigned>(want)));
      if (want > cap) {
        dump_warp();
        anchor(want);
      }
    }
    // In-range inputs go through the levels; the others (rare) become 0 there and are handled
    // after the tile, out of line, from a copy (so that the hot path keeps all in registers);
    // so are the remainders below the last level (one branch per tile, not per element).
    constexpr int R = DOT ? 2 * N : N;
    unsigned out_mask = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) out_mask |= unsigned(biased_hi(p[k]) >= cap_hi - low_hi) << k;
    if (fast_tile<N>(p)) {  // (warp-uniform) F levels take everything: no remainder to test
#pragma unroll
      for (int k = 0; k < N; ++k) {
        bool o = out_mask >> k & 1u;
        take<F>(k % P, o ? 0.0 : p[k]);
        if constexpr (DOT) take<F>(k % P, o ? 0.0 : ex::exact_fma(a[k], c[k], -p[k]), 1);
        else zs += a[k];
      }
    } else {
      double rem[R];
      bool any_rem = false;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        bool o = out_mask >> k & 1u;
        rem[k] = take(k % P, o ? 0.0 : p[k]);
        any_rem |= rem[k] != 0.0;
        if constexpr (DOT) {
          rem[N + k] = take(k % P, o ? 0.0 : ex::exact_fma(a[k], c[k], -p[k]), 1);
          any_rem |= rem[N + k] != 0.0;
        } else {
          zs += a[k];
        }
      }
      if (any_rem) {
        double buf[R];
#pragma unroll
        for (int k = 0; k < R; ++k) buf[k] = rem[k];
        deposit_nonzero<layout, R>(sa, buf);
      }
    }
    if constexpr (DOT)
      if (out_mask != (1u << N) - 1) flags |= ex::seen_not_neg_zero;
    if (out_mask) {
      double buf[2 * N];
#pragma unroll
      for (int k = 0; k < N; ++k) {
        buf[k] = a[k];
        buf[N + k] = DOT ? c[k] : T(0);
      }
      flags |= take_outside_tile<DOT, layout, N>(sa, buf, out_mask);
    }
    terms += (DOT ? 2 * N : N) / P;
    if (terms >= ex::level_renorm_terms - 2 * N) renormalize();
  }

  // (hi word of |p|) - low_hi: products below 2^-965 (and zero) wrap around to large values.
  __device__ __forceinline__ unsigned biased_hi(double p) const { return (hi_word(p) & 0x7fffffffu) - low_hi; }

  __device__ __forceinline__ void one_inner(double x, double y, double p) {
    if (biased_hi(p) >= cap_hi - low_hi) {
      outside(x, y);
    } else {
      double r = take(0, p);
      if (r != 0.0) deposit_shared<layout>(sa, r);
      if constexpr (DOT) {
        r = take(0, ex::exact_fma(x, y, -p), 1);
        if (r != 0.0) deposit_shared<layout>(sa, r);
        flags |= ex::seen_not_neg_zero;
      }
    }
    if constexpr (!DOT) zs += x;
  }
  template <class T> __device__ __forceinline__ void one(T a, T c) {
    double x = a, y = c;
    one_inner(x, y, DOT ? x * y : x);
    terms += 2;
    if (terms >= ex::level_renorm_terms - 2) renormalize();
  }

  __device__ void finish(unsigned* block_flags) {
    dump_warp();
    unsigned f = flags;
    if constexpr (!DOT)
      if (__double_as_longlong(zs) != static_cast<long long>(0x8000000000000000ull)) f |= ex::seen_not_neg_zero;
    f = __reduce_or_sync(kFull, f);
    if ((threadIdx.x & 31) == 0 && f) atomicOr(block_flags, f);
  }
};

/// Dynamic shared memory of an exact_kernel instance: the accumulator's, then the staging slots.
template <class A, class T, bool DOT, int V, int BLOCK, int UNROLL, int STAGES, bool SQUARE = false>
inline constexpr std::size_t exact_smem_bytes =
    A::smem_bytes + std::size_t(STAGES) * (DOT && !SQUARE ? 2 : 1) * UNROLL * BLOCK * sizeof(vec<T, V>);

/// What an exact_kernel leaves at out.value when it exports its state instead of rounding
/// (EXPORT): [0] the number of digits c, [1] the weight exponent of digit 0, [2] the
/// special-value flags, then c digits (digit i weighs 2^(32 i + [1]); not normalised, the
/// top one carries the sign). Host code finishes it (a mean's division, a norm's root).
inline constexpr int export_header = 3;

template <class L, class Out> __device__ __noinline__ Out round_digits(long long* sa, unsigned flags) {
  return ex::round_in_place<L, Out>(reinterpret_cast<std::int64_t*>(sa), flags);
}
template <class Out> __device__ __noinline__ Out round_span_digits(long long* sa, int count, int base, unsigned flags) {
  return ex::round_span<Out>(reinterpret_cast<std::int64_t*>(sa), count, base, flags);
}

/// One-launch exact reduction of x (and y for dot), n elements, with accumulator A (above).
/// Loads as in reduce_kernel (unaligned head and tail one by one, 16-byte vectors, UNROLL in
/// flight); the main loop runs while the whole warp has a full tile, so A::tile may use warp
/// collectives. Each block then turns its digits into bounded ones (two parallel carry steps)
/// and adds the nonzero ones to the grid's digits in global memory with integer atomics
/// (exact: order does not matter); the last block normalises and rounds once to Out and
/// leaves the global digits, flags and counter zero again. EXPORT: the last block writes the
/// grid's digits (see export_header) instead of rounding them. SQUARE (with DOT): y is x,
/// read once (the sum of squares of a norm).
template <class A, class T, bool DOT, int V, int BLOCK, int UNROLL, class Out, int MIN_BLOCKS = 2, int STAGES = 0,
          bool EXPORT = false, bool SQUARE = false, bool ABS = false, int GATE = 0>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
exact_kernel(const T* __restrict__ x,  // (n,)
             const T* __restrict__ y,  // (n,) for dot
             std::int64_t n, std::int64_t head,
             long long* global_sa,     // (L::digits,) zero on entry; left zero
             unsigned* global_flags,   // zero on entry; left zero
             unsigned* counter, result_sink<Out> out,
             unsigned* gate,             // GATE != 0: the certified kernel's verdict word, then the
                                         // blocks' read count and the last verdict (certified.cuh)
             unsigned gate_seq) {        // GATE != 0: the call's number in that word
  // GATE 1: launched behind the certified kernel with programmatic dependent launch: wait
  // for it to complete, then do nothing if it proved the result. GATE 2: the same, but poll
  // the verdict word for this call's number instead of waiting for the whole grid before to
  // complete (it wrote the result before the verdict), and wait only when the exact pass
  // must run. Polling needs every block of the grid before resident, which programmatic
  // launch gives: this grid starts only once all of them have called launch_dependents.
  // The last block to read the verdict records it in gate[2] (last_exact_was_certified) and
  // resets gate[0] to 0 ("pending"; call numbers start at 1), so a later execution carrying
  // the same number (a replayed CUDA graph) never reads a stale verdict.
  //
  // Both modes take only a word carrying this call's number: in GATE 1 too, where
  // griddepcontrol.wait is compiled out (PTX below sm_90 JIT-compiled for a newer GPU, whose
  // driver still honours the launch attribute) and one read could see the reset 0 and skip
  // the exact pass. The fence after the read makes it an acquire (PTX fence-based pattern).
  // On "held" the last reader still waits for the certified grid (griddepcontrol.wait: the
  // PTX ISA requires a dependent of launch_dependents to use it), so this grid completes only
  // after that one has completed and flushed, and the stream's later work (a kernel or copy
  // reading the result) follows both without relying on undocumented ordering.
  if constexpr (GATE != 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (GATE == 1) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    __shared__ unsigned run;
    __shared__ bool last_reader;
    if (threadIdx.x == 0) {
      volatile unsigned* word = gate;
      unsigned g = *word;
      while ((g >> 1) != gate_seq) {
        __nanosleep(32);
        g = *word;
      }
      __threadfence();
      run = g & 1u;
      last_reader = atomicAdd(gate + 1, 1u) == gridDim.x - 1;
      if (last_reader) {  // every block has read it
        gate[2] = g;
        gate[1] = 0;
        *word = 0;
      }
    }
    __syncthreads();
    if (run == 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if constexpr (GATE == 2)
        if (threadIdx.x == 0 && last_reader) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
      return;
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (GATE == 2) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  }
  using L = typename A::layout;
  constexpr int D = L::digits;
  constexpr int N = UNROLL * V;
  static_assert(!SQUARE || DOT, "SQUARE is a dot product of x with itself");
  static_assert(!EXPORT || std::is_same_v<Out, long long>, "an exported state is digits");
  static_assert(!ABS || !DOT, "ABS sums |x| (the exact L1 norm)");
  // ABS: every element is read as |x| (exact; -0.0 becomes +0.0, NaN stays NaN).
  auto tx = [](T v) -> T {
    if constexpr (ABS) return v < T(0) ? T(-v) : (v == T(0) ? T(0) : v);
    else return v;
  };
  constexpr bool LOAD_Y = DOT && !SQUARE;
  if constexpr (SQUARE) y = x;
  using vec_t = vec<T, V>;
  extern __shared__ double dyn[];
  __shared__ long long sa[D];
  __shared__ long long carry_in[D];
  __shared__ unsigned sflags, span_lo_inv, span_hi;
  __shared__ bool is_last;
  for (int i = threadIdx.x; i < D; i += BLOCK) sa[i] = 0;
  if (threadIdx.x == 0) sflags = span_lo_inv = span_hi = 0;
  A acc;
  acc.init(dyn, sa);
  __syncthreads();

  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * BLOCK + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * BLOCK;
  const int lane = threadIdx.x & 31;
  if (tid < head) acc.one(tx(x[tid]), DOT ? y[tid] : T(0));
  const std::int64_t nvec = (n - head) / V;
  const vec_t* xv = reinterpret_cast<const vec_t*>(x + head);
  const vec_t* yv = reinterpret_cast<const vec_t*>(DOT ? y + head : x + head);
  std::int64_t i = tid;
  // Warp-uniform condition: the warp's last lane has a full tile. The next tile's loads are
  // issued before the current tile is accumulated, so that a thread keeps its loads in flight
  // while it works (the accumulators take far longer per element than a plain sum).
  auto full = [&](std::int64_t j) { return j - lane + 31 + (UNROLL - 1) * stride < nvec; };
  auto work = [&](const vec_t* a, const vec_t* b) {
    T va[N], vb[N];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int k = 0; k < V; ++k) {
        va[u * V + k] = tx(a[u].v[k]);
        vb[u * V + k] = DOT ? b[u].v[k] : T(0);
      }
    acc.template tile<N>(va, vb);
  };
  if constexpr (STAGES > 0) {
    // Staged: each thread copies its next STAGES tiles into its own slots of shared memory
    // with asynchronous copies (cp.async), so many loads are in flight without holding
    // registers; a thread only ever reads its own slots (no block barrier needed).
    constexpr int IN = LOAD_Y ? 2 : 1;
    vec_t* slots = reinterpret_cast<vec_t*>(reinterpret_cast<char*>(dyn) + A::smem_bytes);  // [STAGES][IN][UNROLL][BLOCK]
    auto slot = [&](int st, int in, int u) { return slots + ((st * IN + in) * UNROLL + u) * BLOCK + threadIdx.x; };
    auto issue = [&](int st, std::int64_t j) {
      if (full(j)) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          __pipeline_memcpy_async(slot(st, 0, u), xv + j + u * stride, sizeof(vec_t));
          if constexpr (LOAD_Y) __pipeline_memcpy_async(slot(st, 1, u), yv + j + u * stride, sizeof(vec_t));
        }
      }
      __pipeline_commit();
    };
#pragma unroll
    for (int st = 0; st < STAGES; ++st) issue(st, i + st * UNROLL * stride);
#pragma unroll 1
    for (int st = 0; full(i); st = st + 1 == STAGES ? 0 : st + 1) {
      __pipeline_wait_prior(STAGES - 1);
      vec_t a[UNROLL], b[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        a[u] = *slot(st, 0, u);
        if constexpr (LOAD_Y) b[u] = *slot(st, 1, u);
        else if constexpr (DOT) b[u] = a[u];
      }
      issue(st, i + STAGES * UNROLL * stride);
      work(a, b);
      i += UNROLL * stride;
    }
    __pipeline_wait_prior(0);
  } else if (full(i)) {
    // Registers: the next tile's loads are issued before the current tile is accumulated.
    vec_t a[UNROLL], b[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      a[u] = load(xv + i + u * stride);
      if constexpr (LOAD_Y) b[u] = load(yv + i + u * stride);
      else if constexpr (DOT) b[u] = a[u];
    }
    while (true) {
      const std::int64_t next = i + UNROLL * stride;
      const bool more = full(next);
      vec_t na[UNROLL], nb[UNROLL];
      if (more) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          na[u] = load(xv + next + u * stride);
          if constexpr (LOAD_Y) nb[u] = load(yv + next + u * stride);
          else if constexpr (DOT) nb[u] = na[u];
        }
      }
      work(a, b);
      i = next;
      if (!more) break;
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        a[u] = na[u];
        if constexpr (DOT) b[u] = nb[u];
      }
    }
  }
  for (; i < nvec; i += stride) {
    vec_t a = load(xv + i), b;
    if constexpr (LOAD_Y) b = load(yv + i);
    else if constexpr (DOT) b = a;
#pragma unroll
    for (int k = 0; k < V; ++k) acc.one(tx(a.v[k]), DOT ? b.v[k] : T(0));
  }
  const std::int64_t tail = head + nvec * V;
  if (tid < n - tail) acc.one(tx(x[tail + tid]), DOT ? y[tail + tid] : T(0));

  acc.finish(&sflags);
  __syncthreads();

  if (gridDim.x == 1) {  // one block: round (or export) its own digits
    if constexpr (EXPORT) {
      for (int k = threadIdx.x; k < D; k += BLOCK) out.value[export_header + k] = sa[k];
      __threadfence_system();
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if constexpr (EXPORT) {
        out.value[0] = D;
        out.value[1] = L::base;
        out.value[2] = sflags;
      } else {
        *out.value = round_digits<L, Out>(sa, sflags);
      }
      if (out.status) *out.status = 0;
      if (out.done) {
        __threadfence_system();
        *out.done = out.ticket;
      }
    }
    return;
  }
  // Two parallel carry steps: digits end in (-2^32, 2^33), so the grid's sums of up to 2^29
  // blocks' digits cannot overflow, and zero digits stay zero (few atomics).
#pragma unroll 1
  for (int step = 0; step < 2; ++step) {
    for (int k = threadIdx.x; k < D; k += BLOCK) carry_in[k] = k > 0 ? (sa[k - 1] >> 32) : 0;
    __syncthreads();
    for (int k = threadIdx.x; k < D; k += BLOCK) {
      long long v = sa[k];
      sa[k] = (k + 1 < D ? (v & 0xffffffffll) : v) + carry_in[k];
    }
    __syncthreads();
  }
  // The grid's digits, and the range of digits any block touched (so the last block
  // normalises and rounds only that span: a few digits for most data, not all D).
  for (int k = threadIdx.x; k < D; k += BLOCK)
    if (sa[k]) {
      atomicAdd(reinterpret_cast<unsigned long long*>(global_sa + k), static_cast<unsigned long long>(sa[k]));
      atomicMax(&span_lo_inv, ~static_cast<unsigned>(k));
      atomicMax(&span_hi, static_cast<unsigned>(k) + 1);
    }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (sflags) atomicOr(global_flags, sflags);
    if (span_hi) {
      atomicMax(global_flags + 1, span_lo_inv);
      atomicMax(global_flags + 2, span_hi);
    }
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  const unsigned hi = __ldcg(global_flags + 2);
  const int lo = hi ? static_cast<int>(~__ldcg(global_flags + 1)) : 0;
  // Digits lo..hi-1 are the only nonzero ones; two more above hold the carries (the grid's
  // sums are below 2^43 per digit) and the sign.
  const int end = min(D, static_cast<int>(hi) + 2);
  for (int k = lo + threadIdx.x; k < end; k += BLOCK) {
    long long v = static_cast<long long>(__ldcg(reinterpret_cast<const unsigned long long*>(global_sa + k)));
    sa[k - lo] = v;
    global_sa[k] = 0;
    if constexpr (EXPORT) out.value[export_header + k - lo] = v;
  }
  if constexpr (EXPORT) __threadfence_system();  // the digits before the ticket (thread 0)
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned flags = __ldcg(global_flags);
    global_flags[0] = global_flags[1] = global_flags[2] = 0;
    *counter = 0;
    if constexpr (EXPORT) {
      out.value[0] = hi ? end - lo : 0;
      out.value[1] = L::base + 32 * lo;
      out.value[2] = flags;
    } else {
      *out.value = hi ? round_span_digits<Out>(sa, end - lo, L::base + 32 * lo, flags)
                      : round_span_digits<Out>(sa, 0, L::base, flags);
    }
    if (out.status) *out.status = 0;
    if (out.done) {
      __threadfence_system();
      *out.done = out.ticket;
    }
  }
}

}  // namespace tally::cuda::exact
