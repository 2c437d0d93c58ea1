// Native narrow element types of the shape layer (twenty-ninth session): the v3 kernels
// (src/cuda/shapes_v3.cuh) read float16, bfloat16, int8, uint8 and bool elements as they are,
// 8 or 16 to a 16-byte vector, each converted exactly on the way into the wide type's
// accumulator (float32 values; int32 values for the integers and bool). The copy of
// src/cuda/shapes.cu (run_widened) cost sizeof(x) / (sizeof(x) + 2 sizeof(W)) of the read
// bandwidth (run 111: float16 0.18, int8 0.09); here a call reads x once.
//
// What runs here (else the widened route, src/cuda/shapes.cu: strided views, rows whose
// elements are not adjacent, exact float16 outputs with an infinity or a NaN under plan
// f16_in_place=0, and certified passes that could not prove every output: blocking, the whole
// call again; stream-ordered, behind the pass's verdict on the device, shapes_half_exact_gated): rows,
// segments and columns of
//  - float16: fast sums, exact sums and means in 128-bit fixed point (f16_fixed_op), min/max
//    and their index;
//  - bfloat16: fast sums, exact (certified) sums and means, min/max and their index;
//  - int8, uint8, bool: sums and means (a vector's bytes summed in int32 by dp4a, then added to
//    the 128-bit state; columns: a word's bytes added in 16-bit halves, column_bytes, into the
//    states every 256 rows), min/max and their index.
//
// Same ops as the widened route (src/cuda/shapes.cuh, with the element read by In::read), so
// the same accumulator values: exact results (integer sums and means, certified float sums and
// means, min/max and their indices) have the bits of the widened route and of the CPU backend.
// Fast float sums have their own bits (the lanes meet 8 elements a vector, not 4), fixed by the
// shape alone as everywhere else.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdlib>

#include "cuda/shapes_launch.cuh"
#include "cuda/shapes_narrow.hpp"
#include "cuda/shapes_narrow_op.cuh"
#include "cuda/shapes_narrow_readers.cuh"
#include "cuda/shapes_narrow_run.cuh"
#include "shapes_widen.hpp"
#include "tally/ops/small.hpp"

namespace tally::cuda {
namespace {

using namespace shapes_k;
using namespace shapes_launch;
using namespace narrow_k;
using tally::shapes::kind;
using tally::shapes::store;

// ---- element readers: the stored type and its exact conversion --------------------------------
// (min / max a vector at a time, narrow_op::float_extreme_of_vector, and a row at a time in
// columns, v3::cols_body: pairs of elements as words, their max.NaN / min.NaN, equality and
// order masks (0xffff a half when equal or ordered: -0 equals +0, a NaN nothing), and
// infinities of both halves)
template <class H2> __device__ __forceinline__ H2 pair_of(unsigned u) {
  H2 h;
  __builtin_memcpy(&h, &u, 4);
  return h;
}
template <class H2> __device__ __forceinline__ unsigned word_of_pair(H2 h) {
  unsigned u;
  __builtin_memcpy(&u, &h, 4);
  return u;
}
template <class H2> struct pair_ops {  // (H2: __half2 or __nv_bfloat162)
  static __device__ __forceinline__ unsigned pair_max_nan(unsigned a, unsigned b) {
    return word_of_pair(__hmax2_nan(pair_of<H2>(a), pair_of<H2>(b)));
  }
  static __device__ __forceinline__ unsigned pair_min_nan(unsigned a, unsigned b) {
    return word_of_pair(__hmin2_nan(pair_of<H2>(a), pair_of<H2>(b)));
  }
  static __device__ __forceinline__ unsigned pair_eq(unsigned a, unsigned b) { return __heq2_mask(pair_of<H2>(a), pair_of<H2>(b)); }
  // (0xffff a half where a > b, a < b; false where either is a NaN: the column min / max,
  // v3::cols_body's kPackedHalfExtremes)
  static __device__ __forceinline__ unsigned pair_gt(unsigned a, unsigned b) { return __hgt2_mask(pair_of<H2>(a), pair_of<H2>(b)); }
  static __device__ __forceinline__ unsigned pair_lt(unsigned a, unsigned b) { return __hlt2_mask(pair_of<H2>(a), pair_of<H2>(b)); }
};
struct f16_in : pair_ops<__half2> {  // IEEE binary16 bits -> float32 (cvt.f32.f16: exact, subnormals included)
  using src = std::uint16_t;
  using wide = float;
  static __device__ __forceinline__ float read(src b) { return __half2float(__ushort_as_half(b)); }
  static constexpr unsigned kInfPair = 0x7c007c00u, kNegInfPair = 0xfc00fc00u;
};
struct bf16_in : pair_ops<__nv_bfloat162> {  // bfloat16 bits -> float32 (the upper half of its bits)
  using src = std::uint16_t;
  using wide = float;
  static __device__ __forceinline__ float read(src b) { return __uint_as_float(static_cast<unsigned>(b) << 16); }
  static constexpr unsigned kInfPair = 0x7f807f80u, kNegInfPair = 0xff80ff80u;

  // ---- exact float64 sums of bfloat16 terms (the certified pass, forty-third session) --------
  // A bfloat16 has 8 significand bits, so many of them sum exactly in float64 when their
  // exponents are close enough: the test of ops::certified::sum_exact (float32, 24 bits) with
  // 8 bits. With f the biased exponent field of a term and g = (|bits| - 1) >> 7 (f or f - 1
  // for a nonzero term, 511 for a zero), a nonzero term is an integer multiple of 2^(g - 134)
  // below 2^(f - 126) in magnitude (subnormals: f = g = 0, multiples of 2^-133 below 2^-126),
  // so every partial sum of 2^L terms, in any order, is an integer below
  // 2^(fmax - gmin + 8 + L) times 2^(gmin - 134): exact in float64 when
  // fmax - gmin <= 45 - L (8 terms: 42 binades). Zeros never count, and an exact sum's zero
  // sign does not depend on the order (-0 only when every term is -0).
  //
  // The terms are summed as float64 values v x 2^-896 made by 2 integer instructions (the
  // float16 fixed-point sums' trick, f16_fixed_core::tiny_lo): a bfloat16's exponent and
  // fraction moved down 3 bits in a float64's high word, its sign kept, are exactly that
  // (normal values to normal float64 values, subnormal to subnormal; every such value is a
  // multiple of 2^-1030, so the float64 subnormals hold their sums exactly too), then scaled
  // back by 2^896 once per sum (exact). An infinity or a NaN (f = 255) would read as a finite
  // value: exact_for refuses any run with one, and the caller then adds its terms one at a
  // time, where they make the state not finite (never certified).
  static __device__ __forceinline__ double tiny_lo(unsigned w) {
    return __hiloint2double(static_cast<int>(static_cast<unsigned>(static_cast<int>(w << 16) >> 3) & 0x8fffe000u), 0);
  }
  static __device__ __forceinline__ double tiny_hi(unsigned w) {
    return __hiloint2double(static_cast<int>(static_cast<unsigned>(static_cast<int>(w) >> 3) & 0x8fffe000u), 0);
  }
  static constexpr double kUnscale = 0x1p896;
  /// A word's two magnitudes (|bits|), for fmax by max.u16x2.
  static __device__ __forceinline__ unsigned mags(unsigned w) { return w & 0x7fff7fffu; }
  /// A word's two |bits| - 1 (a zero wraps to 0xffff), for gmin by min.u16x2: each half's top
  /// bit set first, so that the 32-bit subtraction borrows across no half, and flipped back.
  static __device__ __forceinline__ unsigned units(unsigned w) { return ((w | 0x80008000u) - 0x00010001u) ^ 0x80008000u; }
  /// Whether a sum of at most 2^L terms whose largest |bits| is mx and smallest |bits| - 1 is
  /// mn (16-bit values) is exact and finite.
  static __device__ __forceinline__ bool exact_for(unsigned mx, unsigned mn, int L) {
    const int f = static_cast<int>(mx >> 7), g = static_cast<int>(mn >> 7);
    return f <= 254 && f - g <= 45 - L;
  }
  /// The exact sum of a 16-byte vector's 8 terms, when exact_for allows it (else false, t not
  /// meaningful): ~30 integer instructions and 8 float64 operations, where the terms one at a
  /// time took 8 certified additions (~7 float64 operations each).
  static __device__ __forceinline__ bool terms_exact(const uint4& w, double& t) {
    const unsigned mx = __vmaxu2(__vmaxu2(mags(w.x), mags(w.y)), __vmaxu2(mags(w.z), mags(w.w)));
    const unsigned mn = __vminu2(__vminu2(units(w.x), units(w.y)), __vminu2(units(w.z), units(w.w)));
    t = (((tiny_lo(w.x) + tiny_hi(w.x)) + (tiny_lo(w.y) + tiny_hi(w.y))) +
         ((tiny_lo(w.z) + tiny_hi(w.z)) + (tiny_lo(w.w) + tiny_hi(w.w)))) *
        kUnscale;
    return exact_for(max(mx & 0xffffu, mx >> 16), min(mn & 0xffffu, mn >> 16), 3);
  }
};
struct b8_in {  // bool's byte: any nonzero value is true (NumPy), as shapes::widen_bool
  using src = std::uint8_t;
  using wide = std::int32_t;
  static __device__ __forceinline__ std::int32_t read(src v) { return v != 0 ? 1 : 0; }
  // bit 0 of each byte becomes the OR of its 8 bits (the shifts bring in only bits of the same
  // byte at the positions kept: 4 -> 0..3, 2 -> 0..1, 1 -> 0)
  static __device__ __forceinline__ unsigned byte_values(unsigned w) {
    unsigned t = w | (w >> 4);
    t |= t >> 2;
    t |= t >> 1;
    return t & 0x01010101u;
  }
  static constexpr std::int32_t byte_bias = 0;
  static __device__ __forceinline__ std::int32_t sum_words(const uint4& w) {
    int s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) s += __popc(byte_values(word_at(w, i)));
    return s;
  }
};


/// Exact float16 sums and means in fixed point (thirty-third session). Every float16 value is
/// an integer multiple of 2^-24 below 2^16 in magnitude, so a sum of at most 2^28 of them is an
/// integer of at most 69 bits in those units: the exact sum fits a 128-bit integer, with no
/// certificate and no second pass (the certified pass over float32 terms read float16 rows at
/// 0.5 of read, run 120). The state, one ops::i128 added as integers (combine: +):
///   bits [0, 70)    the sum of the finite elements, signed, in units of 2^-24;
///   bits [70, 99)   how many elements were -0.0 (the sum is -0.0 when all of them were);
///   bits [99, 128)  how many vectors or runs held an infinity or a NaN.
/// With at most kMaxLen elements an output no field reaches the next one, and the sum of
/// finite elements is read back by sign-extending its 70 bits. An output with an infinity or
/// a NaN is reported as not proved (ovf): the caller's widened exact path then computes it,
/// as for the certified pass's unproved outputs. The rounding is ops::exact's round_span /
/// divide_round (digits weighing 2^(32 i - 24)), so the results are correctly rounded: the
/// bits of the certified pass, the widened route and the CPU backend.
///
/// The elements are summed first in float64, exactly: a float16's bits, its exponent and
/// fraction moved up 10 bits into a float64's high word, are the float64 v x 2^-1008 (normal
/// float16 values become normal float64 values, subnormal ones subnormal: the same formula),
/// so 2 integer instructions an element and no conversion; a run of at most 8192 such values
/// (|sum| < 2^29 in units of 1, multiples of 2^-24: 53 bits) is exact in float64, and enters
/// the state once as an int64: flush (x 2^1032, two exact multiplications and a conversion;
/// the columns' runs of up to kColumnRun rows) or flush_short (a vector's 8 elements). A run of
/// -0.0 values sums to -0.0 and of anything else to +0.0 or non-zero (round to nearest), so the
/// run's sign tells whether all its elements were -0.0.
struct f16_fixed_core {
  static constexpr std::int64_t kMaxLen = std::int64_t(1) << 28;
  static constexpr int kColumnRun = 4096;  // column rows a float64 run holds (< 8192)
  /// The low / high float16 of a 32-bit word as the float64 v x 2^-1008: the half at the top
  /// of a word, shifted right 6 places arithmetically, has its exponent and fraction at bits
  /// 24..10 and copies of its sign at 31..25; the mask keeps bit 31 of those (3 and 2
  /// instructions, against 4 and 3 for the shifts and masks of each field).
  static __device__ __forceinline__ double tiny_lo(unsigned w) {
    return __hiloint2double(static_cast<int>(static_cast<unsigned>(static_cast<int>(w << 16) >> 6) & 0x81fffc00u), 0);
  }
  static __device__ __forceinline__ double tiny_hi(unsigned w) {
    return __hiloint2double(static_cast<int>(static_cast<unsigned>(static_cast<int>(w) >> 6) & 0x81fffc00u), 0);
  }
  /// Bit 15 / 31 set when the low / high float16 of w is an infinity or a NaN (exponent 31:
  /// adding 1 to the exponent field carries into the half's sign position, never beyond it).
  static __device__ __forceinline__ unsigned specials(unsigned w) { return ((w & 0x7c007c00u) + 0x04000400u) & 0x80008000u; }
  /// A run's exact float64 sum t (of `count` elements as v x 2^-1008) into the state.
  static __device__ __forceinline__ void flush(ops::i128& a, double t, int count, bool special) {
    const long long q = __double2ll_rn(t * 0x1p1000 * 0x1p32);  // (exact: an integer below 2^53)
    long long hi = (special ? (1LL << 35) : 0);
    if (__double_as_longlong(t) == static_cast<long long>(0x8000000000000000ULL)) hi += static_cast<long long>(count) << 6;
    a += (static_cast<ops::i128>(hi) << 64) + q;
  }
  /// The same for a short run (|t| < 2^-981, a real sum below 2^27: any 2^11 float16 values,
  /// so the 8 of a 16-byte vector): t + 1.5 x 2^-980 is exact and has the unit 2^-1032 as its last
  /// bit, so its bits less those of 1.5 x 2^-980 are t x 2^1032 (one float64 addition and one
  /// int64 subtraction, no multiplications or conversion).
  static __device__ __forceinline__ void flush_short(ops::i128& a, double t, int count, bool special) {
    constexpr double kC = 0x1.8p-980;
    const long long q = __double_as_longlong(t + kC) - __double_as_longlong(kC);
    long long hi = (special ? (1LL << 35) : 0);
    if (__double_as_longlong(t) == static_cast<long long>(0x8000000000000000ULL)) hi += static_cast<long long>(count) << 6;
    a += (static_cast<ops::i128>(hi) << 64) + q;
  }
  /// A float16's ops::exact special flags (bits: its low 16): seen_nan for a NaN, seen_pos_inf /
  /// seen_neg_inf for an infinity, else 0 (the wide columns' runs with specials, read again).
  static __device__ __forceinline__ unsigned special_flags(unsigned bits) {
    const unsigned mag = bits & 0x7fffu;
    if (mag > 0x7c00u) return ops::exact::seen_nan;
    if (mag == 0x7c00u) return bits & 0x8000u ? ops::exact::seen_neg_inf : ops::exact::seen_pos_inf;
    return 0u;
  }
  static constexpr unsigned kNotNegZero = ops::exact::seen_not_neg_zero;
  /// A run's exact float64 sum t as an integer in units of 2^-24 (flush's conversion).
  static __device__ __forceinline__ long long units(double t) { return __double2ll_rn(t * 0x1p1000 * 0x1p32); }
  /// Whether a run's sum is -0.0 (all its elements were -0.0).
  static __device__ __forceinline__ bool neg_zero(double t) {
    return __double_as_longlong(t) == static_cast<long long>(0x8000000000000000ULL);
  }
  /// The state's fields: the finite sum (units of 2^-24), the -0.0 count, and whether any
  /// element was an infinity or a NaN.
  static __device__ __forceinline__ void decode(ops::i128 a, ops::i128& fin, std::uint64_t& neg_zeros, bool& special) {
    const auto u = static_cast<ops::u128>(a);
    fin = static_cast<ops::i128>(u << 58) >> 58;
    const ops::u128 rest = (u - static_cast<ops::u128>(fin)) >> 70;
    neg_zeros = static_cast<std::uint64_t>(rest) & ((1ULL << 29) - 1);
    special = (rest >> 29) != 0;
  }
};

/// The op over the core: sums (MEAN false) or means, as float32 or float64 (`pick`: 2 x mean
/// + float64), acc ops::i128; rows by accumulate_words (a 16-byte vector's 8 elements a run),
/// columns by cols_body's column_halves (4 outputs a lane, a float64 run each).
struct f16_fixed_op {
  using elem = std::uint16_t;
  using acc = ops::i128;
  using core = f16_fixed_core;
  static constexpr bool vector_terms = false;
  static constexpr bool column_halves = true;  // (cols_body's packed float16 columns)
  void* out;
  long long* ovf;
  int pick = 0;
  /// The reduction's elements (the launch's geometry), for write to classify the infinities
  /// and NaNs of an output whose state saw one (fifty-fifth session); x null: write leaves
  /// such an output to the caller instead (ovf), as before.
  shapes_k::geo src{};
  static __device__ __forceinline__ acc identity() { return 0; }
  static __device__ __forceinline__ void accumulate(acc& a, elem x, std::int64_t) {
    core::flush_short(a, core::tiny_lo(x), 1, core::specials(x) != 0);
  }
  /// The ops::exact special flags of output o's len elements (seen_nan, seen_pos_inf,
  /// seen_neg_inf), read again from src by this thread: the rare outputs with an infinity or
  /// a NaN, whose state records only that there was one. Stops once the result is known (a
  /// NaN, or both infinities).
  __device__ unsigned special_flags_of(std::int64_t o, std::int64_t len) const {
    constexpr unsigned kNan = ops::exact::seen_nan, kBoth = ops::exact::seen_pos_inf | ops::exact::seen_neg_inf;
    const auto* x = static_cast<const std::uint16_t*>(src.x);
    std::int64_t base = o * src.outer, step = src.inner;
    if (src.off) {  // (clamped into x, as the kernels' spans: bad offsets are reported, never read past x)
      base = min(max(src.off[o], std::int64_t(0)), src.n);
      step = 1;
      len = min(len, src.n - base);
    }
    unsigned fl = 0;
    std::int64_t k = 0;
    for (; k + 8 <= len; k += 8) {  // (8 loads in flight)
      std::uint16_t v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) v[u] = __ldg(x + base + (k + u) * step);
#pragma unroll
      for (int u = 0; u < 8; ++u) fl |= core::special_flags(v[u]);
      if ((fl & kNan) || (fl & kBoth) == kBoth) return fl;
    }
    for (; k < len; ++k) fl |= core::special_flags(__ldg(x + base + k * step));
    return fl;
  }
  static __device__ __forceinline__ acc combine(acc a, acc b) { return a + b; }
  static __device__ __forceinline__ void accumulate_words(acc& a, const uint4& w) { add_vector(a, w, 8); }
  /// The elements [from, to) of a vector (v2::fold_span), the others read as -0.0: they add
  /// nothing, and a sum of -0.0 is counted as to - from of them (so an output of -0.0 only
  /// stays -0.0).
  static __device__ __forceinline__ void accumulate_words_masked(acc& a, const uint4& w, int from, int to) {
    add_vector(a, v2::keep_elements<2>(w, from, to, 0x80008000u), to - from);
  }
  /// A vector's 8 elements, of which `count` are the output's, as one short run.
  static __device__ __forceinline__ void add_vector(acc& a, const uint4& w, int count) {
    const double t = ((core::tiny_lo(w.x) + core::tiny_hi(w.x)) + (core::tiny_lo(w.y) + core::tiny_hi(w.y))) +
                     ((core::tiny_lo(w.z) + core::tiny_hi(w.z)) + (core::tiny_lo(w.w) + core::tiny_hi(w.w)));
    core::flush_short(a, t, count, (core::specials(w.x) | core::specials(w.y) | core::specials(w.z) | core::specials(w.w)) != 0);
  }
  __device__ void write(std::int64_t o, acc a, std::int64_t len) const {
    const bool mean = pick >= 2, f64 = pick & 1;
    auto put = [&](double d, float f) {
      if (f64) static_cast<double*>(out)[o] = d;
      else static_cast<float*>(out)[o] = f;
    };
    if (len == 0) {  // the empty sum is +0, the empty mean NaN
      if (mean) put(ops::exact::double_of(std::uint64_t(0x7ff8) << 48), ops::exact::float_of(0x7fc00000u));
      else put(0.0, 0.0f);
      return;
    }
    ops::i128 fin;
    std::uint64_t neg_zeros;
    bool special;
    core::decode(a, fin, neg_zeros, special);
    unsigned flags = neg_zeros == static_cast<std::uint64_t>(len) ? 0u : ops::exact::seen_not_neg_zero;
    if (special) {
      if (src.x == nullptr) {
        atomicMin(ovf, static_cast<long long>(o));
        return;
      }
      flags |= special_flags_of(o, len) | ops::exact::seen_not_neg_zero;
    }
    write_fixed(o, fin, flags, len);
  }
  /// Output o (len > 0 elements) from their exact finite sum fin (units of 2^-24) and their
  /// ops::exact flags: seen_not_neg_zero, and seen_nan / seen_pos_inf / seen_neg_inf, which
  /// give the IEEE result (NaN, or the infinity; round_span's rule, as the exact kernels').
  /// (write above; v3::cols_halves_sums_wide, whose flags hold the specials themselves.)
  __device__ void write_fixed(std::int64_t o, ops::i128 fin, unsigned flags, std::int64_t len) const {
    const bool mean = pick >= 2, f64 = pick & 1;
    auto put = [&](double d, float f) {
      if (f64) static_cast<double*>(out)[o] = d;
      else static_cast<float*>(out)[o] = f;
    };
    constexpr unsigned kSpecials = ops::exact::seen_nan | ops::exact::seen_pos_inf | ops::exact::seen_neg_inf;
    if (flags & kSpecials) fin = 0;  // (round_span and divide_round below give the special result)
    // The usual case in a few instructions (a sum of at most 2^22 elements fits): an
    // int64 converts to float64 or float32 with one correct rounding, and the scaling by 2^-24
    // is exact (no result comes near the subnormals); a mean of |fin| <= 2^53 is one float64
    // division of exact operands, correctly rounded, and as float32 correct too unless that
    // quotient is a float32 midpoint (a second rounding could then go the wrong way).
    if (fin == 0 && (flags & kSpecials) == 0) {
      const bool neg = flags == 0;
      put(neg ? -0.0 : 0.0, neg ? -0.0f : 0.0f);
      return;
    }
    if ((flags & kSpecials) == 0 && fin >= -(ops::i128(1) << 62) && fin <= (ops::i128(1) << 62)) {
      const auto v = static_cast<long long>(fin);
      if (!mean) {
        put(__ll2double_rn(v) * 0x1p-24, __ll2float_rn(v) * 0x1p-24f);
        return;
      }
      if (v >= -(1LL << 53) && v <= (1LL << 53) && len <= (std::int64_t(1) << 53)) {
        const double q = __ll2double_rn(v) / __ll2double_rn(len);
        if (f64 || (__double_as_longlong(q) & 0x1fffffffLL) != 0x10000000LL) {
          put(q * 0x1p-24, static_cast<float>(q * 0x1p-24));
          return;
        }
      }
    }
    std::int64_t d[5];  // fin's 32-bit digits, weight 2^(32 i - 24)
    ops::digits_of(fin, d);
    if (f64) {
      static_cast<double*>(out)[o] = mean ? ops::exact::divide_round<double>(d, 5, ops::f16_unit_exp, flags, static_cast<std::uint64_t>(len))
                                          : ops::exact::round_span<double>(d, 5, ops::f16_unit_exp, flags);
    } else {
      static_cast<float*>(out)[o] = mean ? ops::exact::divide_round<float>(d, 5, ops::f16_unit_exp, flags, static_cast<std::uint64_t>(len))
                                         : ops::exact::round_span<float>(d, 5, ops::f16_unit_exp, flags);
    }
  }
};

static_assert(f16_fixed_op::column_halves);

template <class In> bool run_native(const geometry& g, const request& r, outcome& st, cudaStream_t s) {
  using W = typename In::wide;
  const bool segmented = g.offsets != nullptr;
  bool column_mode = false;
  if (!reads_in_place(g, sizeof(typename In::src), column_mode)) return false;
  const bool out64 = r.out_type == dtype::float64;
  auto run = [&]<class Op>(auto&& make, outcome& o) { launch_v3<Op, true>(g, r, o, s, make, column_mode); };
  if constexpr (std::is_same_v<W, float>) {
    if (r.what == kind::extreme) {
      const store as = tally::shapes::store_of(g.type);
      // (float16 / bfloat16 a vector at a time through In's pair operations: along rows and
      // segments the vector extreme, along columns v3::cols_body's kPackedHalfExtremes. Element
      // by element, the way before, was plan half_extreme_vectors / half_extreme_cols 0, removed
      // in the forty-sixth session after run 159: docs/performance.md)
      auto mk = [&]<class E>() {
        using Op = narrow_op<In, E>;
        run.template operator()<Op>([as](void* out, std::int64_t* idx, long long*) {
          Op op;
          op.w0 = E{static_cast<float*>(out), idx, as};
          return op;
        }, st);
      };
      const bool mx = r.eop == extreme_op::max, skip = r.nans == nan_policy::omit;
      if (mx && skip) mk.template operator()<extreme<float, true, true>>();
      else if (mx) mk.template operator()<extreme<float, true, false>>();
      else if (skip) mk.template operator()<extreme<float, false, true>>();
      else mk.template operator()<extreme<float, false, false>>();
      return true;
    }
    // (float16 columns whole 16-byte rows of at most kWideHalfSumLen rows, plan half_col_wide:
    // v3::cols_halves_sums_wide, exact sums and means with their specials written on the
    // device, so for the stream-ordered forms too, and the fast sums the same way: exact,
    // so correctly rounded, where the float states read at 0.83 of the read kernel)
    if constexpr (std::is_same_v<In, f16_in>) {
      if (column_mode && tuning::shapes_v3_params().half_col_wide == 1 && wide_layout(g, v3::kWideShortCols) &&
          g.len <= v3::kWideHalfSumLen) {
        const int pick = (r.what == kind::mean ? 2 : 0) + (out64 ? 1 : 0);
        run.template operator()<f16_fixed_op>([pick](void* out, std::int64_t*, long long* ovf) {
          return f16_fixed_op{out, ovf, pick};
        }, st);
        return true;
      }
    }
    if (r.what == kind::mean || r.acc == accuracy::exact) {
      if constexpr (std::is_same_v<In, f16_in>) {
        // (float16: the fixed-point sums, when no output can pass kMaxLen elements, blocking
        // and stream-ordered, plan f16_in_place=1 (the default since run 192): an output with
        // an infinity or a NaN is classified on the device (f16_fixed_op::special_flags_of);
        // under f16_in_place=0 it sends a blocking call to the widened route and the
        // stream-ordered ones always go there, through the gated exact kernels at 0.18-0.19
        // of the read kernel, below)
        if (tuning::shapes_v3_params().f16_in_place == 1 && (segmented ? g.n : g.len) <= f16_fixed_core::kMaxLen) {
          const int pick = (r.what == kind::mean ? 2 : 0) + (out64 ? 1 : 0);
          const shapes_k::geo src{g.x, g.offsets, g.outputs, g.len, g.outer, g.inner, g.n};
          run.template operator()<f16_fixed_op>([pick, src](void* out, std::int64_t*, long long* ovf) {
            return f16_fixed_op{out, ovf, pick, src};
          }, st);
          return true;
        }
      }
      // the certified pass: blocking calls, and since the sixtieth session the stream-ordered
      // ones with a status word (plan half_gated=1; float16 only where its fixed-point sums
      // cannot serve, outputs past kMaxLen elements, unless f16_in_place=0), which then queue
      // the widened copy and the exact kernels behind the pass's verdict, gated on the device
      // (shapes_half_exact_gated, src/cuda/shapes.cu); the other stream-ordered ones go to the
      // widened route (the copy, the pass over it, the gated exact kernels)
      if (r.stream_ordered) {
        const auto& plan = tuning::shapes_v3_params();
        const bool gated = r.status_device && plan.half_gated == 1 && tuning::shapes_certified() &&
                           (!std::is_same_v<In, f16_in> || plan.f16_in_place == 1);
        if (!gated) return false;
      }
      if constexpr (std::is_same_v<In, f16_in>) {
        // (float16, plan f16_in_place=0: the fixed-point sums, blocking, when no output can
        // pass kMaxLen elements; an output with an infinity or a NaN sends the call to the
        // widened route's exact path, same bits)
        if (!r.stream_ordered && (segmented ? g.n : g.len) <= f16_fixed_core::kMaxLen) {
          const int pick = (r.what == kind::mean ? 2 : 0) + (out64 ? 1 : 0);
          outcome c;
          run.template operator()<f16_fixed_op>([pick](void* out, std::int64_t*, long long* ovf) {
            return f16_fixed_op{out, ovf, pick};
          }, c);
          if (c.bad_offset_at >= 0 || c.overflow_at < 0) {  // offsets that break the rules, or no infinity / NaN
            st.bad_offset_at = c.bad_offset_at;
            return true;
          }
          return false;  // an output with an infinity or a NaN: the widened route's exact path
        }
      }
      if (!tuning::shapes_certified()) return false;
      const int pick = (r.what == kind::mean ? 2 : 0) + (out64 ? 1 : 0);
      outcome c;
      auto certified = [&]<class Reader>() {
        using Op = narrow_op<Reader, certified_sum<float, float, false>, certified_sum<float, double, false>,
                             certified_sum<float, float, true>, certified_sum<float, double, true>>;
        run.template operator()<Op>([pick](void* out, std::int64_t*, long long* ovf) {
          Op op;
          op.w0 = {static_cast<float*>(out), ovf};
          op.w1 = {static_cast<double*>(out), ovf};
          op.w2 = {static_cast<float*>(out), ovf};
          op.w3 = {static_cast<double*>(out), ovf};
          op.pick = pick;
          return op;
        }, c);
      };
      // (bfloat16: its terms a vector or a run at a time, bf16_in's exact vector terms; one at a
      // time was plan bf16_terms 0, removed in the forty-sixth session)
      if (r.stream_ordered) {  // (the pass's status words in r.status_device: the gate)
        shapes_half_exact_gated(g, r, st, s, [&] { certified.template operator()<In>(); });
        return true;
      }
      certified.template operator()<In>();
      if (c.bad_offset_at >= 0 || c.overflow_at < 0) {  // offsets that break the rules, or every output proved
        st.bad_offset_at = c.bad_offset_at;
        return true;
      }
      return false;  // some output not proved: the widened route's exact path (same bits)
    }
    using Op = narrow_op<In, fast_sum<float, float>, fast_sum<float, double>>;
    run.template operator()<Op>([out64](void* out, std::int64_t*, long long* ovf) {
      Op op;
      op.w0 = {static_cast<float*>(out), ovf};
      op.w1 = {static_cast<double*>(out), ovf};
      op.pick = out64 ? 1 : 0;
      return op;
    }, st);
    return true;
  } else {
    return run_int<In, true>(g, r, st, s);  // (src/cuda/shapes_narrow_run.cuh, shared with int16 to uint64)
  }
}

}  // namespace

bool shapes_run_native(const geometry& g, const request& r, outcome& st, cudaStream_t stream) {
  switch (g.type) {
    case dtype::float16: return run_native<f16_in>(g, r, st, stream);
    case dtype::bfloat16: return run_native<bf16_in>(g, r, st, stream);
    case dtype::int8: return run_native<i8_in>(g, r, st, stream);
    case dtype::uint8: return run_native<u8_in>(g, r, st, stream);
    case dtype::bool_: return run_native<b8_in>(g, r, st, stream);
    default: return false;
  }
}

}  // namespace tally::cuda
