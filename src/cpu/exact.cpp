// CPU backend, exact mode: OpenMP threads over chunks of 2^15 inputs; each chunk goes through
// anchored levels (ops::exact::extract) vectorised across lanes, or, for chunks with special
// or extreme values, through four interleaved expansions (TwoSum) with flushes into the
// thread's superaccumulator; the threads' superaccumulators merge by integer addition (exact,
// so any order gives the same bits), and the total is rounded once.
#include "cpu/exact.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu/isa.hpp"
#include "state_backends.hpp"
#include "state_grid.hpp"
#include "tally/ops/certified.hpp"
#include "tally/ops/exact.hpp"
#include "tally/ops/small.hpp"
#include "tally/threads.hpp"

namespace tally::cpu {
namespace {

namespace ex = ops::exact;

constexpr std::int64_t kChunk = 1 << 15;
constexpr std::int64_t kParallelMin = 1 << 16;
constexpr int kTile = 16;
constexpr int kWays = 4;  // interleaved expansions (independent dependency chains)

// Folds x[0, n) (and y) into digits d and flags, exactly.
template <class L, class T, bool Dot>
void fold(const T* x, const T* y, std::int64_t n, std::int64_t* d, unsigned& flags) {
  ex::expansion f[kWays];
  auto dep = [d](int i, std::int64_t v) { d[i] += v; };
  auto flush = [&](double v) { ex::deposit<L>(v, dep); };
  auto dprod = [&](double a, double b) { ex::deposit_product<L>(a, b, dep); };
  auto term = [&](ex::expansion& g, std::int64_t i) {
    if constexpr (Dot) {
      if constexpr (std::is_same_v<T, float>) ex::add_product(g, x[i], y[i], flush);
      else ex::add_product(g, x[i], y[i], flush, dprod);
    } else {
      ex::add_term(g, x[i], flush);
    }
  };
  // Four expansions take consecutive tiles in turn (independent dependency chains); the
  // loop over them is unrolled so that each stays in registers.
  std::int64_t i = 0;
  for (; i + kWays * kTile <= n; i += kWays * kTile) {
    TALLY_UNROLL
    for (int w = 0; w < kWays; ++w) {
      ex::expansion& g = f[w];
      const std::int64_t b = i + w * kTile;
      bool done = false;
      if constexpr (!Dot && std::is_same_v<T, float>) {
        double t;
        if (ex::tile_exact_f32<kTile>(x + b, t, g.flags)) {
          ex::add(g, t, flush);
          done = true;
        }
      }
      if (!done)
        for (int k = 0; k < kTile; ++k) term(g, b + k);
      if constexpr (std::is_same_v<T, double>) {
        if (ex::too_big(g.a[0])) {  // keep |a0| < 2^1011: no TwoSum can overflow
          flush(g.a[0]);
          g.a[0] = 0.0;
        }
      }
    }
  }
  for (; i < n; ++i) {
    term(f[0], i);
    if constexpr (std::is_same_v<T, double>) {
      if (ex::too_big(f[0].a[0])) {
        flush(f[0].a[0]);
        f[0].a[0] = 0.0;
      }
    }
  }
  for (auto& g : f) {
    ex::drain(g, flush);
    flags |= g.flags;
  }
}

// ---- anchored levels (ops::exact::extract), vectorised across lanes ----------------------
//
// The main path for every type: a pre-pass over the chunk (in cache afterwards) finds its
// largest magnitude, so the levels are anchored once per chunk just above it; eight
// lanes of K levels each then take every input in 3K branch-free additions that the compiler
// vectorises (AVX2 where the CPU has it, chosen at run time). A remainder below the last level
// (data spanning more than 40K bits) is deposited directly; a chunk holding a NaN, an
// infinity, a magnitude of 2^1000 or more, or (dot) products that could underflow goes to
// the general path `fold`.
constexpr int kRenormGroups = 120;  // groups of eight inputs between renormalisations

template <class T> inline double as_double(T v) { return static_cast<double>(v); }

// Exponent e with |v| < 2^e for finite v >= 0 (v = 0 gives -1074).
inline int cap_of(double v) {
  if (v == 0.0) return -1074;
  int be = static_cast<int>((ex::bits_of(v) >> 52) & 0x7ff);
  return be == 0 ? -1022 : be - 1022;
}

// Four lanes as one vector (GCC/Clang vector extension: one AVX2 register, or two SSE2 ones).
// The helpers taking and returning them are always inlined, so GCC's ABI note about 32-byte
// vectors without AVX (-Wpsabi, silenced for this file in src/CMakeLists.txt) does not apply.
typedef double vd __attribute__((vector_size(32)));
typedef long long vl __attribute__((vector_size(32)));

/// ops::exact::extract on four lanes at once.
[[gnu::always_inline]] inline vd vextract(vd& S, vd x) {
  vd t = S + x;
  vd q = t - S;
  S = t;
  return x - q;
}

// What the pre-pass learns about a chunk: whether the levels may take it (no NaN, infinity,
// huge value or underflowing product), the anchor 2^cap above every input (or product), and
// the exponent `lowest` at or above which every bit of every input (or product) lies.
struct chunk_range {
  bool ok;
  int cap, lowest;
};

template <class T, bool Dot> [[gnu::always_inline]] inline chunk_range prepass(const T* x, const T* y, std::int64_t n) {
  // Pre-pass: the largest magnitudes, a NaN/infinity detector (x * 0 is NaN only for them),
  // and for dot the smallest nonzero magnitudes.
  // Four lanes at a time, so that no reduction is a serial chain.
  const vd zero4 = {0, 0, 0, 0}, big4 = {1e308, 1e308, 1e308, 1e308};
  vd mxv = zero4, myv = zero4, nxv = big4, nyv = big4, badv = zero4;
  auto load4 = [](const T* p) { return vd{as_double(p[0]), as_double(p[1]), as_double(p[2]), as_double(p[3])}; };
  auto vabs = [](vd v) { return (vd)((vl)v & (vl){~(1ll << 63), ~(1ll << 63), ~(1ll << 63), ~(1ll << 63)}); };
  std::int64_t i4 = 0;
  for (; i4 + 4 <= n; i4 += 4) {
    vd a = load4(x + i4), fa = vabs(a);
    mxv = fa > mxv ? fa : mxv;
    badv += a * 0.0;
    if constexpr (Dot) {
      vd b = load4(y + i4), fb = vabs(b);
      myv = fb > myv ? fb : myv;
      badv += b * 0.0;
      nyv = (b != 0.0 && fb < nyv) ? fb : nyv;
    }
    nxv = (a != 0.0 && fa < nxv) ? fa : nxv;
  }
  double mx = 0, my = 0, nx = 1e308, ny = 1e308, bad = 0;
  for (int l = 0; l < 4; ++l) {
    mx = std::max(mx, mxv[l]);
    my = std::max(my, myv[l]);
    nx = std::min(nx, nxv[l]);
    ny = std::min(ny, nyv[l]);
    bad += badv[l];
  }
  for (std::int64_t i = i4; i < n; ++i) {
    double a = as_double(x[i]);
    double fa = std::fabs(a);
    mx = fa > mx ? fa : mx;
    bad += a * 0.0;
    if constexpr (Dot) {
      double b = as_double(y[i]);
      double fb = std::fabs(b);
      my = fb > my ? fb : my;
      bad += b * 0.0;
      ny = (b != 0.0 && fb < ny) ? fb : ny;
    }
    nx = (a != 0.0 && fa < nx) ? fa : nx;
  }
  if (bad != 0.0 || bad != bad) return {false, 0, 0};  // NaN or infinity
  // |x| < 2^cap for every input; for dot + 1, as a rounded product may reach 2^(cx + cy).
  int cap = Dot ? cap_of(mx) + cap_of(my) + 1 : cap_of(mx);
  if (cap > 997) return {false, 0, 0};  // huge: the general path deposits those exactly
  if constexpr (Dot)
    if (std::ilogb(nx) + std::ilogb(ny) < -960) return {false, 0, 0};  // TwoProduct might not be exact
  // A nonzero input of magnitude at least 2^e has no bit below 2^(e - mantissa bits); an exact
  // product none below the sum of its factors' lowest bits. (All zero: nx = 1e308.)
  constexpr int mb = std::numeric_limits<T>::digits - 1;
  int lowest = Dot ? std::ilogb(nx) - mb + std::ilogb(ny) - mb : std::ilogb(nx) - mb;
  return {true, std::max(cap, -1000), lowest};
}

// The main pass over a chunk the pre-pass accepted, with K levels anchored at 2^cap. CHECK:
// test for remainders below the last level (false when the pre-pass proved there are none).
template <class L, class T, bool Dot, int K, int PW, bool CHECK>
[[gnu::always_inline]] inline void fold_levels_main(const T* x, const T* y, std::int64_t n, std::int64_t* d,
                                                    unsigned& flags, int cap) {
  constexpr int W = 2;  // vectors of 4 lanes: 8 lanes
  constexpr int J = 4 * W;
  const vd zero4 = {0, 0, 0, 0};
  auto load4 = [](const T* p) { return vd{as_double(p[0]), as_double(p[1]), as_double(p[2]), as_double(p[3])}; };
  vd S[K][W], zs[W];
  double m[K];
  for (int k = 0; k < K; ++k) {
    m[k] = ex::level_anchor(ex::level_ulp(cap, k));
    for (int w = 0; w < W; ++w) S[k][w] = vd{m[k], m[k], m[k], m[k]};
  }
  for (int w = 0; w < W; ++w) zs[w] = vd{-0.0, -0.0, -0.0, -0.0};
  std::int64_t carry = 0;
  auto dep = [d](int i, std::int64_t v) { d[i] += v; };
  const int g0 = ex::level_ulp(cap, 0);
  const double up = std::ldexp(1.0, -(g0 + 30)), down = std::ldexp(1.0, g0 + 30);
  // Every level back within 2^(g + 49) of its anchor (see levels_acc in src/cuda/exact.cuh).
  auto renormalize = [&](vd (&S)[K][W]) {
    for (int k = K - 1; k >= 1; --k)
      for (int w = 0; w < W; ++w) S[k][w] = m[k] + vextract(S[k - 1][w], S[k][w] - m[k]);
    for (int w = 0; w < W; ++w)
      for (int l = 0; l < 4; ++l) {
        double d0 = S[0][w][l] - m[0];
        double c = std::nearbyint(d0 * up);
        carry += static_cast<std::int64_t>(c);
        S[0][w][l] = m[0] + (d0 - c * down);
      }
  };
  auto deposit_rest = [&](vd r) {
    if constexpr (!CHECK) return;
    vl nz = r != 0.0;
    if ((nz[0] | nz[1] | nz[2] | nz[3]) != 0) [[unlikely]]
      for (int l = 0; l < 4; ++l)
        if (r[l] != 0.0) ex::deposit<L>(r[l], dep);
  };
  std::int64_t i = 0;
  int groups = 0;
  if constexpr (!Dot) {
    // Sums: a software pipeline across the levels, on PW vectors of lanes (1 with 16 vector
    // registers, 2 with AVX-512's 32). In each step level k takes the group level k - 1 took
    // in the previous step, so one step is K x PW independent extractions (not a chain of 3K
    // dependent additions per group); the pipeline drains with zeros at the end. The chain
    // from one step to the next is one extraction (3 additions) per 4 PW inputs.
    static_assert(PW <= W);
    vd P[K][PW];  // P[k]: the groups of four inputs waiting to enter level k
    for (int k = 0; k < K; ++k)
      for (int w = 0; w < PW; ++w) P[k][w] = zero4;
    auto step = [&](const vd* in) {
      vd r[K][PW];
      for (int k = 0; k < K; ++k)
        for (int w = 0; w < PW; ++w) r[k][w] = vextract(S[k][w], P[k][w]);
      for (int w = 0; w < PW; ++w) deposit_rest(r[K - 1][w]);
      for (int k = K - 1; k >= 1; --k)
        for (int w = 0; w < PW; ++w) P[k][w] = r[k - 1][w];
      for (int w = 0; w < PW; ++w) P[0][w] = in[w];
    };
    for (; i + 4 * PW <= n; i += 4 * PW) {
      vd v[PW];
      for (int w = 0; w < PW; ++w) {
        v[w] = load4(x + i + 4 * w);
        zs[w] += v[w];
      }
      step(v);
      if (++groups == 2 * kRenormGroups / PW) {
        renormalize(S);
        groups = 0;
      }
    }
    const vd zeros[PW] = {};
    for (int k = 0; k < K; ++k) step(zeros);
  } else {
    for (; i + J <= n; i += J) {
      vd v[W] = {}, e[W] = {};
      for (int w = 0; w < W; ++w) {
        double a[4], b[4], pe[4];
        for (int l = 0; l < 4; ++l) a[l] = as_double(x[i + 4 * w + l]);
        for (int l = 0; l < 4; ++l) b[l] = as_double(y[i + 4 * w + l]);
        for (int l = 0; l < 4; ++l) pe[l] = a[l] * b[l];
        v[w] = vd{pe[0], pe[1], pe[2], pe[3]};
        for (int l = 0; l < 4; ++l) pe[l] = std::fma(a[l], b[l], -pe[l]);
        e[w] = vd{pe[0], pe[1], pe[2], pe[3]};
        zs[w] += v[w];
      }
      for (int k = 0; k < K; ++k)
        for (int w = 0; w < W; ++w) v[w] = vextract(S[k][w], v[w]);
      for (int k = 1; k < K; ++k)
        for (int w = 0; w < W; ++w) e[w] = vextract(S[k][w], e[w]);
      for (int w = 0; w < W; ++w) {
        deposit_rest(v[w]);
        deposit_rest(e[w]);
      }
      if (++groups == kRenormGroups) {
        renormalize(S);
        groups = 0;
      }
    }
  }
  renormalize(S);
  for (int k = 0; k < K; ++k)
    for (int w = 0; w < W; ++w)
      for (int l = 0; l < 4; ++l) {
        double dd = S[k][w][l] - m[k];
        if (dd != 0.0) ex::deposit<L>(dd, dep);
      }
  if (carry != 0) {
    bool neg = carry < 0;
    auto mag = static_cast<ops::u128>(neg ? -static_cast<std::uint64_t>(carry) : static_cast<std::uint64_t>(carry));
    ex::deposit<L>(mag, g0 + 30, neg, dep);
  }
  for (int w = 0; w < W; ++w)
    for (int l = 0; l < 4; ++l)
      if (ex::bits_of(zs[w][l]) != (std::uint64_t(1) << 63)) flags |= ex::seen_not_neg_zero;
  // The tail (fewer than J inputs): exact deposits of each term.
  for (; i < n; ++i) {
    double a = as_double(x[i]);
    if constexpr (Dot) {
      double b = as_double(y[i]);
      if (ex::bits_of(a * b) != (std::uint64_t(1) << 63)) flags |= ex::seen_not_neg_zero;
      if (a != 0.0 && b != 0.0) ex::deposit_product<L>(a, b, dep);
    } else {
      if (ex::bits_of(a) != (std::uint64_t(1) << 63)) flags |= ex::seen_not_neg_zero;
      if (a != 0.0) ex::deposit<L>(a, dep);
    }
  }
}

// Pre-pass, then the main pass with as few levels as the chunk's range of bits needs (and
// no remainder test when they cover it all), or the most levels with the test.
template <class L, class T, bool Dot, int KMAX, int PW>
[[gnu::always_inline]] inline bool fold_levels_impl(const T* x, const T* y, std::int64_t n, std::int64_t* d,
                                                    unsigned& flags) {
  chunk_range r = prepass<T, Dot>(x, y, n);
  if (!r.ok) return false;
  // Level k's ulp is 2^(cap - 40 (k + 1)); with it at or below `lowest` nothing is left over.
  // (Dot: at least 2, since the TwoProduct error enters at level 1.)
  int need = std::max(Dot ? 2 : 1, (r.cap - r.lowest + ex::level_bits - 1) / ex::level_bits);
  // (A plain switch: a lambda here would not take the caller's target attribute.)
  switch (need < KMAX ? need : KMAX) {
    case 1: fold_levels_main<L, T, Dot, 1, PW, false>(x, y, n, d, flags, r.cap); break;
    case 2: fold_levels_main<L, T, Dot, 2, PW, false>(x, y, n, d, flags, r.cap); break;
    case 3: fold_levels_main<L, T, Dot, 3, PW, false>(x, y, n, d, flags, r.cap); break;
    case 4: fold_levels_main<L, T, Dot, 4 < KMAX ? 4 : KMAX, PW, false>(x, y, n, d, flags, r.cap); break;
    default:
      if (need <= KMAX) fold_levels_main<L, T, Dot, KMAX, PW, false>(x, y, n, d, flags, r.cap);
      else fold_levels_main<L, T, Dot, KMAX, PW, true>(x, y, n, d, flags, r.cap);
  }
  return true;
}

template <class L, class T, bool Dot, int K>
[[gnu::target("avx512f,avx512vl,avx2,fma")]] bool fold_levels_avx512(const T* x, const T* y, std::int64_t n,
                                                                    std::int64_t* d, unsigned& flags) {
  return fold_levels_impl<L, T, Dot, K, 2>(x, y, n, d, flags);
}
template <class L, class T, bool Dot, int K>
[[gnu::target("avx2,fma")]] bool fold_levels_avx2(const T* x, const T* y, std::int64_t n, std::int64_t* d,
                                                  unsigned& flags) {
  return fold_levels_impl<L, T, Dot, K, 1>(x, y, n, d, flags);
}
template <class L, class T, bool Dot, int K>
bool fold_levels_generic(const T* x, const T* y, std::int64_t n, std::int64_t* d, unsigned& flags) {
  return fold_levels_impl<L, T, Dot, K, 1>(x, y, n, d, flags);
}

template <class L, class T, bool Dot>
void fold_chunk(const T* x, const T* y, std::int64_t n, std::int64_t* d, unsigned& flags) {
  constexpr int K = Dot ? 9 : 5;  // as the CUDA levels: 200 / 360 bits below the anchor
  bool done = cpu_has_avx512() ? fold_levels_avx512<L, T, Dot, K>(x, y, n, d, flags)
              : cpu_has_avx2()  ? fold_levels_avx2<L, T, Dot, K>(x, y, n, d, flags)
                                : fold_levels_generic<L, T, Dot, K>(x, y, n, d, flags);
  if (!done) fold<L, T, Dot>(x, y, n, d, flags);
}

// The exact sum (or dot product) of x[0, n) as superaccumulator digits `total` (zero on
// entry) and special-value flags.
// S: the storage type of the elements, T or a 16-bit float (ops::half_in, ops::bhalf_in),
// whose chunks are first converted exactly to float32 (T) in a per-thread buffer.
template <class L, class T, bool Dot, class S = T>
void state(const void* xv, const void* yv, std::int64_t n, std::int64_t* total, unsigned& flags) {
  constexpr int D = L::digits;
  constexpr bool convert = !std::is_same_v<S, T>;
  const S* x = static_cast<const S*>(xv);
  const S* y = static_cast<const S*>(yv);
  std::int64_t chunks = (n + kChunk - 1) / kChunk;
  if constexpr (!convert)
    if (n <= kChunk) {  // (one chunk: no parallel region, no merge: a short call's fixed cost)
      fold_chunk<L, T, Dot>(x, Dot ? y : nullptr, n, total, flags);
      ex::normalize<D>(total);
      return;
    }
#pragma omp parallel if ((n >= kParallelMin) && ::tally::detail::cpu_threads_allowed())
  {
    std::int64_t d[D] = {};
    unsigned f = 0;
    std::vector<T> cx(convert ? kChunk : 0), cy(convert && Dot ? kChunk : 0);
#pragma omp for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
      std::int64_t b = c * kChunk, len = std::min(kChunk, n - b);
      if constexpr (convert) {
        for (std::int64_t i = 0; i < len; ++i) cx[i] = static_cast<T>(x[b + i]);
        if constexpr (Dot)
          for (std::int64_t i = 0; i < len; ++i) cy[i] = static_cast<T>(y[b + i]);
        fold_chunk<L, T, Dot>(cx.data(), Dot ? cy.data() : nullptr, len, d, f);
      } else {
        fold_chunk<L, T, Dot>(x + b, Dot ? y + b : nullptr, len, d, f);
      }
      ex::normalize<D>(d);  // keeps every digit small whatever the number of chunks
    }
#pragma omp critical(tally_exact_merge)
    {
      for (int k = 0; k < D; ++k) total[k] += d[k];
      flags |= f;
    }
  }
}

// ---- the certified pass (ops/certified.hpp), vectorised across lanes -------------------
//
// Dots and L2 norms first try the GPU's certified route: every lane keeps an
// ops::certified::state with K = 2 (Ogita, Rump and Oishi's Dot2: hi carried error-free by
// TwoSum, the TwoSum and TwoProduct errors added into lo, each inexact addition into lo counted
// in the running bound), the lanes and the threads merge (certified::merge), and the result is
// written only when the final interval proves the correctly rounded value (round_certified,
// sqrt_certified). Otherwise (ties, condition numbers past ~2^50, zero results, overflow,
// NaN, infinities, products that underflow) the exact levels above run: the same bits either
// way, only the time differs. About 16 vector operations per four float64 pairs where the
// levels take ~35 (9 levels of 3 additions and the pre-pass), and no pre-pass. AVX2 and FMA
// only: without FMA, TwoProduct would cost ~17 operations (Dekker), and the levels run.
namespace ce = ops::certified;
constexpr std::int64_t kCertifyBlock = 1 << 14;  // elements per OpenMP work item

/// The four terms from x[j..j+3] (times y[j..j+3]), and (float64 dots) their TwoProduct errors.
template <class T, bool Dot, bool EXACT>
[[gnu::always_inline, gnu::target("avx2,fma")]] inline vd cert_term(const T* x, const T* y, std::int64_t j, vd& pe) {
  const vd nz = {-0.0, -0.0, -0.0, -0.0};
  const T* px = x + j;
  vd p = {as_double(px[0]), as_double(px[1]), as_double(px[2]), as_double(px[3])};
  if constexpr (Dot) {
    const T* py = y + j;
    const vd a = p, b = {as_double(py[0]), as_double(py[1]), as_double(py[2]), as_double(py[3])};
    p = (vd)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)nz);  // a * b rounded once (certified::mul_rn)
    if constexpr (!EXACT) pe = (vd)_mm256_fmsub_pd((__m256d)a, (__m256d)b, (__m256d)p);  // its exact error
  }
  return p;
}

/// |v| on four lanes.
[[gnu::always_inline]] inline vd vabs4(vd v) {
  return (vd)((vl)v & (vl){~(1ll << 63), ~(1ll << 63), ~(1ll << 63), ~(1ll << 63)});
}

/// certified::add<2> on four lanes: p into hi by TwoSum, its error into lo, |lo| into bd.
[[gnu::always_inline]] inline void cert_add(vd& hi, vd& lo, vd& bd, vd p) {
  const vd s = hi + p, bp = s - hi, ap = s - bp, e = (hi - ap) + (p - bp);  // TwoSum
  hi = s;
  lo += e;
  bd += vabs4(lo);
}

/// One lane vector's certified states over x[0, n) (and y), merged into `st`: 8 lanes as two
/// vectors of 4 doubles, the last n % 8 terms added to lane state 0 one at a time.
/// EXACT: the terms are exact in float64 (sums, and products of float32 inputs), so no
/// TwoProduct error term. RUN > 0 (float32 inputs, float32 results): each lane first sums RUN
/// terms in plain float64 and only that run's sum enters its state; a run of RUN terms is off
/// by at most gamma(RUN - 1) times the sum of their magnitudes (Higham, "Accuracy and
/// Stability of Numerical Algorithms", 2nd ed., section 4.2), so `absum` collects those
/// magnitudes for the caller's untracked error (runs_error). ~4 vector operations per four
/// terms instead of ~10: a float32 result's half gap (2^-25 of it) leaves room for that error
/// unless the sum's condition number passes ~2^20.
template <class T, bool Dot, int RUN_ASKED>
[[gnu::target("avx2,fma")]] void certify_block(const T* x, const T* y, std::int64_t n, ce::state& st, double& absum) {
  constexpr bool EXACT = !Dot || std::is_same_v<T, float>;
  // (float32 inputs only; runs_first never asks for runs of other inputs, whose instances exist)
  constexpr int RUN = std::is_same_v<T, float> ? RUN_ASKED : 0;
  constexpr int G = 2;
  const vd nz = {-0.0, -0.0, -0.0, -0.0};
  vd hi[G], lo[G], bd[G], am[G];
  for (int g = 0; g < G; ++g) {
    hi[g] = nz;
    lo[g] = bd[g] = am[g] = vd{0, 0, 0, 0};
  }
  std::int64_t i = 0;
  if constexpr (RUN > 0)
    for (; i + 4 * G * RUN <= n; i += 4 * G * RUN) {
      vd r[G];
      for (int g = 0; g < G; ++g) r[g] = nz;  // (-0.0: a run of -0 terms stays -0)
      for (int k = 0; k < RUN; ++k)
        for (int g = 0; g < G; ++g) {
          vd pe;
          const vd p = cert_term<T, Dot, EXACT>(x, y, i + 4 * (G * k + g), pe);
          r[g] += p;
          am[g] += vabs4(p);
        }
      for (int g = 0; g < G; ++g) cert_add(hi[g], lo[g], bd[g], r[g]);
    }
  for (; i + 4 * G <= n; i += 4 * G)
    for (int g = 0; g < G; ++g) {
      vd pe;
      cert_add(hi[g], lo[g], bd[g], cert_term<T, Dot, EXACT>(x, y, i + 4 * g, pe));
      if constexpr (!EXACT) {
        lo[g] += pe;
        bd[g] += vabs4(lo[g]);
      }
    }
  ce::state r;
  for (int g = 0; g < G; ++g)
    for (int l = 0; l < 4; ++l) {
      r = ce::merge<2>(r, ce::state{hi[g][l], 0, lo[g][l], bd[g][l]});
      absum += am[g][l];
    }
  for (; i < n; ++i) {
    if constexpr (Dot) ce::add_product<2, EXACT>(r, as_double(x[i]), as_double(y[i]));
    else ce::add<2>(r, as_double(x[i]));
  }
  st = ce::merge<2>(st, r);
}

/// The certified state of x[0, n) (and y) over OpenMP threads, merged in thread order;
/// absum: the magnitudes summed in runs (RUN > 0; see certify_block).
template <class T, bool Dot, int RUN = 0> ce::state certify(const T* x, const T* y, std::int64_t n, double& absum) {
  const std::int64_t blocks = (n + kCertifyBlock - 1) / kCertifyBlock;
  const bool par = n >= kParallelMin && ::tally::detail::cpu_threads_allowed();
  if (!par) {  // (no parallel region and no vectors: a short call's fixed cost)
    ce::state st;
    double a = 0;
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t o = b * kCertifyBlock;
      certify_block<T, Dot, RUN>(x + o, Dot ? y + o : nullptr, std::min(kCertifyBlock, n - o), st, a);
    }
    absum = a;
    return st;
  }
  std::vector<ce::state> parts(static_cast<std::size_t>(omp_get_max_threads()));
  std::vector<double> sums(parts.size(), 0.0);
#pragma omp parallel
  {
    ce::state st;
    double a = 0;
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t o = b * kCertifyBlock;
      certify_block<T, Dot, RUN>(x + o, Dot ? y + o : nullptr, std::min(kCertifyBlock, n - o), st, a);
    }
    parts[static_cast<std::size_t>(omp_get_thread_num())] = st;
    sums[static_cast<std::size_t>(omp_get_thread_num())] = a;
  }
  ce::state total;
  for (const ce::state& p : parts) total = ce::merge<2>(total, p);
  absum = 0;
  for (double a : sums) absum += a;
  return total;
}

/// The run length of the float32-result route (certify_block's RUN), and a bound on the error
/// of all runs: gamma(RUN - 1) < 1.001 RUN u, times the magnitudes' sum, whose float64 sum
/// (n < 2^42 nonnegative terms) is below the true one by a factor less than 1 + 2^-11.
constexpr int kRun = 32;
inline double runs_error(double absum) { return absum * (kRun * 0x1p-53 * 1.002); }

/// The error not tracked in the certified bound: n * 2^-1074 for float64 products, which may
/// underflow (their TwoProduct error is then not exact); none for float32 inputs or sums.
template <class T, bool Dot> double untracked(std::int64_t n) {
  return Dot && std::is_same_v<T, double> ? static_cast<double>(n) * 0x1p-1074 : 0.0;
}

/// Whether the certified pass runs first: dots and norms of float32 / float64 storage (the
/// 16-bit floats take the levels), on CPUs with AVX2 and FMA, unless TALLY_CPU_CERTIFIED=0.
template <class T, class S> bool certify_first() {
  static const bool on = [] {
    const char* v = std::getenv("TALLY_CPU_CERTIFIED");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return std::is_same_v<S, T> && on && cpu_has_avx2();
}

/// Whether the float32-result route (runs of kRun terms in plain float64) runs: float32 inputs
/// and results, at least one run per lane, and n < 2^42 (runs_error's bound).
template <class T, class Out> bool runs_first(std::int64_t n) {
  return std::is_same_v<T, float> && std::is_same_v<Out, float> && n >= 8 * kRun && n < (std::int64_t(1) << 42);
}

/// Short sums (and float32 dots, whose products are exact) that the K = 2 pass did not prove:
/// mostly exact ties, frequent there (the exact sum of a few terms is often a double-double
/// lying on a midpoint, which an interval of nonzero width never proves). Again with K = 3
/// (hi and mid error-free, ops/certified.hpp): lo then usually stays 0, so the state is exact
/// (bound 0) and round_state rounds it once, ties included; false where it is not.
constexpr std::int64_t kShortExact = 64;
template <class T, bool Dot, class Out>
bool short_exact(const T* x, const T* y, std::int64_t n, Out& r) {
  if constexpr (Dot && !std::is_same_v<T, float>) {
    return false;  // (float64 products: a TwoProduct error may underflow, so bound 0 would not prove exactness)
  } else {
    ce::state s;
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (Dot) ce::add_product<3, true>(s, static_cast<double>(x[i]), static_cast<double>(y[i]));
      else ce::add<3>(s, static_cast<double>(x[i]));
    }
    return ce::round_state<Out>(s, r);
  }
}

template <class L, class T, bool Dot, class Out, class S>
void run(const void* xv, const void* yv, std::int64_t n, void* result) {
  if (certify_first<T, S>()) {
    const T* x = static_cast<const T*>(xv);
    const T* y = static_cast<const T*>(yv);
    Out r;
    double absum = 0;
    bool ok;
    if (runs_first<T, Out>(n)) {
      const ce::state st = certify<T, Dot, kRun>(x, y, n, absum);
      ok = ce::round_certified<Out>(ce::finish(st, runs_error(absum)), r);
    } else {
      const ce::state st = certify<T, Dot>(x, y, n, absum);
      ok = Dot ? ce::round_certified<Out>(ce::finish(st, untracked<T, Dot>(n)), r) : ce::round_state<Out>(st, r);
    }
    if (!ok && n <= kShortExact) ok = short_exact<T, Dot>(x, y, n, r);
    if (ok) return (void)std::memcpy(result, &r, sizeof r);
  }
  std::int64_t total[L::digits] = {};
  unsigned flags = 0;
  state<L, T, Dot, S>(xv, yv, n, total, flags);
  Out r = ex::round_to<L, Out>(total, flags);
  std::memcpy(result, &r, sizeof r);
}

template <class L, class T, class Out, class S> void run_mean(const void* x, std::int64_t n, void* result) {
  if (certify_first<T, S>()) {  // the certified pass first (see certify), the same bits
    Out r;
    double absum = 0;
    bool ok;
    if (runs_first<T, Out>(n)) {
      const ce::state st = certify<T, false, kRun>(static_cast<const T*>(x), nullptr, n, absum);
      ok = ce::divide_certified<Out>(ce::finish(st, runs_error(absum)), static_cast<std::uint64_t>(n), r);
    } else {
      ok = ce::divide_state<Out>(certify<T, false>(static_cast<const T*>(x), nullptr, n, absum), static_cast<std::uint64_t>(n), r);
    }
    if (ok) return (void)std::memcpy(result, &r, sizeof r);
  }
  std::int64_t total[L::digits] = {};
  unsigned flags = 0;
  state<L, T, false, S>(x, nullptr, n, total, flags);
  Out r = ex::divide_round<Out>(total, L::digits, L::base, flags, static_cast<std::uint64_t>(n));
  std::memcpy(result, &r, sizeof r);
}

template <class L, class T, bool Dot, class S>
void run_out(dtype out, const void* x, const void* y, std::int64_t n, void* result) {
  if (out == dtype::float32) run<L, T, Dot, float, S>(x, y, n, result);
  else run<L, T, Dot, double, S>(x, y, n, result);
}

// The L2 norm of at most a few hundred elements by the certified pass (ops/certified.hpp, the
// GPU's: a TwoSum state of the squares with a running error bound, sqrt_certified proving the
// correctly rounded root), false where it cannot prove it (a zero norm, ties, specials,
// overflow) and the superaccumulator runs. tally.norm along an axis calls this once per
// output: for short outputs the superaccumulator's setup dominated (~1 us a call).
template <class T, class Out, class S> bool norm2_short(const S* x, std::int64_t n, Out& r) {
  namespace ce = ops::certified;
  constexpr bool exact_squares = std::is_same_v<T, float>;  // float32 (and 16-bit) squares are exact in float64
  ce::state q;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(static_cast<T>(x[i]));
    ce::add_product<3, exact_squares>(q, v, v);
  }
  return ce::sqrt_certified<Out>(ce::finish(q, exact_squares ? 0.0 : static_cast<double>(n) * 0x1p-1074), r);
}

template <class L, class T, class Out, class S> void run_norm2(const void* x, std::int64_t n, void* result) {
  if (n <= 256) {  // short: the certified pass first (see norm2_short), the same bits
    Out r;
    if (norm2_short<T, Out, S>(static_cast<const S*>(x), n, r)) return (void)std::memcpy(result, &r, sizeof r);
  }
  if (certify_first<T, S>()) {  // the certified pass first (see certify), the same bits
    const T* p = static_cast<const T*>(x);
    Out r;
    double absum = 0;
    const bool ok = runs_first<T, Out>(n)
                        ? ce::sqrt_certified<Out>(ce::finish(certify<T, true, kRun>(p, p, n, absum), runs_error(absum)), r)
                        : ce::sqrt_certified<Out>(ce::finish(certify<T, true>(p, p, n, absum), untracked<T, true>(n)), r);
    if (ok) return (void)std::memcpy(result, &r, sizeof r);
  }
  std::int64_t total[L::digits] = {};
  unsigned flags = 0;
  state<L, T, true, S>(x, x, n, total, flags);  // the exact sum of squares: dot(x, x)
  Out r = ex::sqrt_round<Out>(total, L::digits, L::base, flags);
  std::memcpy(result, &r, sizeof r);
}

// Calls f(type_identity<T>, type_identity<S>) for floating t: T the float type whose exact
// machinery runs (float for float32 and both 16-bit floats, whose values are all float32
// values), S the storage type read.
template <class F> void with_exact_types(dtype t, F&& f) {
  tally::visit(t, [&](auto tag) {
    using E = typename decltype(tag)::type;
    if constexpr (is_floating_element_v<E>) {
      using T = std::conditional_t<std::is_same_v<E, double>, double, float>;
      f(std::type_identity<T>{}, std::type_identity<ops::storage_t<E>>{});
    }
  });
}

template <class L, class T, bool Dot>
void fold_serial(const void* xv, const void* yv, std::int64_t n, std::int64_t* d, unsigned& flags) {
  const T* x = static_cast<const T*>(xv);
  const T* y = static_cast<const T*>(yv);
  for (std::int64_t b = 0; b < n; b += kChunk) {
    std::int64_t len = std::min(kChunk, n - b);
    fold_chunk<L, T, Dot>(x + b, Dot ? y + b : nullptr, len, d, flags);
    ex::normalize<L::digits>(d);
  }
}

}  // namespace

void exact_sum_fold(dtype t, const void* x, std::int64_t n, std::int64_t* d, unsigned& flags) {
  for (std::int64_t b = 0; b < n; b += kChunk) {
    std::int64_t len = std::min(kChunk, n - b);
    if (t == dtype::float32) {
      fold_chunk<ex::f32_sum_layout, float, false>(static_cast<const float*>(x) + b, nullptr, len, d, flags);
      ex::normalize<ex::f32_sum_layout::digits>(d);
    } else {
      fold_chunk<ex::f64_sum_layout, double, false>(static_cast<const double*>(x) + b, nullptr, len, d, flags);
      ex::normalize<ex::f64_sum_layout::digits>(d);
    }
  }
}

void exact_fold(reduce_op op, dtype t, const void* x, const void* y, std::int64_t n, std::int64_t* d,
                unsigned& flags) {
  bool dot = op == reduce_op::dot;
  if (t == dtype::float32) {
    if (dot) fold_serial<ex::f32_dot_layout, float, true>(x, y, n, d, flags);
    else fold_serial<ex::f32_sum_layout, float, false>(x, y, n, d, flags);
  } else {
    if (dot) fold_serial<ex::f64_dot_layout, double, true>(x, y, n, d, flags);
    else fold_serial<ex::f64_sum_layout, double, false>(x, y, n, d, flags);
  }
}

bool certified_sum_state(dtype t, const void* x, std::int64_t n, ops::certified::state& st) {
  if (!certify_first<double, double>()) return false;
  double absum = 0;
  st = ce::state{};
  if (t == dtype::float32) certify_block<float, false, 0>(static_cast<const float*>(x), nullptr, n, st, absum);
  else certify_block<double, false, 0>(static_cast<const double*>(x), nullptr, n, st, absum);
  return true;
}

bool certified_moments(dtype t, const void* x, std::int64_t n, ops::certified::interval& s1,
                       ops::certified::interval& s2) {
  if (!certify_first<double, double>() || (t != dtype::float32 && t != dtype::float64)) return false;
  auto go = [&]<class T>() {
    const T* p = static_cast<const T*>(x);
    double absum = 0;
    s1 = ce::finish(certify<T, false>(p, nullptr, n, absum), 0.0);
    s2 = ce::finish(certify<T, true>(p, p, n, absum), untracked<T, true>(n));
  };
  if (t == dtype::float32) go.template operator()<float>();
  else go.template operator()<double>();
  return true;
}

void norm2_exact(dtype t, dtype out, const void* x, std::int64_t n, void* result) {
  with_exact_types(t, [&](auto tt, auto st) {
    using T = typename decltype(tt)::type;
    using S = typename decltype(st)::type;
    using L = std::conditional_t<std::is_same_v<T, float>, ex::f32_dot_layout, ex::f64_dot_layout>;
    if (out == dtype::float64) run_norm2<L, T, double, S>(x, n, result);
    else run_norm2<L, T, float, S>(x, n, result);
  });
}

void mean_exact(dtype t, dtype out, const void* x, std::int64_t n, void* result) {
  with_exact_types(t, [&](auto tt, auto st) {
    using T = typename decltype(tt)::type;
    using S = typename decltype(st)::type;
    using L = std::conditional_t<std::is_same_v<T, float>, ex::f32_sum_layout, ex::f64_sum_layout>;
    if (out == dtype::float64) run_mean<L, T, double, S>(x, n, result);
    else run_mean<L, T, float, S>(x, n, result);
  });
}

void reduce_exact(reduce_op op, dtype t, dtype out, const void* x, const void* y, std::int64_t n,
                  void* result) {
  if (n == 0) {  // the sum of nothing is +0
    std::memset(result, 0, dtype_size(out));
    return;
  }
  bool dot = op == reduce_op::dot;
  with_exact_types(t, [&](auto tt, auto st) {
    using T = typename decltype(tt)::type;
    using S = typename decltype(st)::type;
    constexpr bool f32 = std::is_same_v<T, float>;
    if (dot) run_out<std::conditional_t<f32, ex::f32_dot_layout, ex::f64_dot_layout>, T, true, S>(out, x, y, n, result);
    else run_out<std::conditional_t<f32, ex::f32_sum_layout, ex::f64_sum_layout>, T, false, S>(out, x, y, n, result);
  });
}

// The exact state (include/tally/state.hpp): the layout's digits moved onto the common grid.
void exact_state(reduce_op op, dtype t, const void* x, const void* y, std::int64_t n, std::int64_t* words) {
  if (n == 0) return;  // the zero state
  auto go = [&]<class L, class T, bool Dot>() {
    std::int64_t d[L::digits] = {};
    unsigned flags = 0;
    state<L, T, Dot>(x, y, n, d, flags);
    state_grid::place(d, L::digits, L::base, flags, n, words);  // every layout lies on the grid
  };
  bool dot = op == reduce_op::dot;
  if (t == dtype::float32) {
    if (dot) go.template operator()<ex::f32_dot_layout, float, true>();
    else go.template operator()<ex::f32_sum_layout, float, false>();
  } else {
    if (dot) go.template operator()<ex::f64_dot_layout, double, true>();
    else go.template operator()<ex::f64_sum_layout, double, false>();
  }
}

}  // namespace tally::cpu
