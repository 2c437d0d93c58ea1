// The shape layer's op over a narrow element type (narrow_op): a wide type's op (src/cuda/shapes.cuh)
// reading In::src elements through In::read, with the byte types' vector paths (dp4a sums,
// max.u16x2 keys for min / max). Shared by src/cuda/shapes_narrow.cu (float16, bfloat16, int8,
// uint8, bool) and src/cuda/shapes_narrow_int.cu (int16, uint16, uint32, uint64).
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cuda/shapes.cuh"
#include "cuda/shapes_v2.cuh"
#include "tally/ops/certified.hpp"
#include "tally/ops/small.hpp"

namespace tally::cuda::narrow_k {

using namespace shapes_k;

// The byte and 16-bit integer types also sum a 16-byte vector's elements at once (In::sum_words,
// exact in int32: |sum| <= 16 x 255 or 8 x 65535), so that an integer sum's 128-bit state takes
// one addition a vector, not 16 or 8 (bytes: dp4a adds four bytes' products with 1 in one
// instruction). They take the vector's four words as loaded (v2::fold_words): through a byte
// array, NVVM kept a local copy of each vector. word_at(w, i): the vector's word i.
__device__ __forceinline__ unsigned word_at(const uint4& w, int i) { return i == 0 ? w.x : i == 1 ? w.y : i == 2 ? w.z : w.w; }

/// Whether W is the int32 min / max op (the byte and 16-bit types' extremes), and whether it
/// is the int32 or the int64 one (those of the 16-bit types, uint32 and uint64).
template <class W> struct is_int_extreme : std::false_type {};
template <bool MAX, bool SKIP> struct is_int_extreme<extreme<std::int32_t, MAX, SKIP>> : std::true_type {};
template <class W> struct is_wide_int_extreme : is_int_extreme<W> {};
template <bool MAX, bool SKIP> struct is_wide_int_extreme<extreme<std::int64_t, MAX, SKIP>> : std::true_type {};
/// Whether W is an exact integer sum or mean (int_sum, int_mean: a 128-bit state that only adds).
template <class W> struct is_int_add : std::false_type {};
template <class T> struct is_int_add<int_sum<T>> : std::true_type {};
template <class T, class Out> struct is_int_add<int_mean<T, Out>> : std::true_type {};
/// Whether W is the float min / max op (the float16 and bfloat16 extremes).
template <class W> struct is_float_extreme : std::false_type {};
template <bool MAX, bool SKIP> struct is_float_extreme<extreme<float, MAX, SKIP>> : std::true_type {};

/// Element i of a 16-byte vector of E (2, 4 or 8 bytes), from its words (no byte array: see
/// word_at).
template <class E> __device__ __forceinline__ E element_at(const uint4& w, int i) {
  if constexpr (sizeof(E) == 2) return static_cast<E>((word_at(w, i / 2) >> (16 * (i % 2))) & 0xffffu);
  else if constexpr (sizeof(E) == 4) return static_cast<E>(word_at(w, i));
  else return static_cast<E>(static_cast<std::uint64_t>(word_at(w, 2 * i)) | (static_cast<std::uint64_t>(word_at(w, 2 * i + 1)) << 32));
}

/// An op of the wide type (W0: src/cuda/shapes.cuh) reading In::src elements. W1..W3: variants
/// of W0 with the same accumulator that differ only in their writes (the result type; sum or
/// mean), chosen at run time by `pick`, so one set of kernels serves them all. vector_terms is
/// off: the certified pass takes these elements one at a time (its four-float32 terms,
/// add4 / add_n, are for float32 vectors).
template <class In, class W0, class W1 = W0, class W2 = W0, class W3 = W0> struct narrow_op {
  using elem = typename In::src;
  using acc = typename W0::acc;
  using reader = In;
  static_assert(std::is_same_v<acc, typename W1::acc> && std::is_same_v<acc, typename W2::acc> &&
                std::is_same_v<acc, typename W3::acc>);
  static constexpr bool vector_terms = false;
  W0 w0{};
  W1 w1{};
  W2 w2{};
  W3 w3{};
  int pick = 0;
  static __device__ __forceinline__ acc identity() { return W0::identity(); }
  static __device__ __forceinline__ void accumulate(acc& a, elem x, std::int64_t k) { W0::accumulate(a, In::read(x), k); }
  static __device__ __forceinline__ acc combine(acc a, acc b) { return W0::combine(a, b); }
  /// A 16-byte vector as loaded (v2::fold_words): integer sums and means of bytes and 16-bit
  /// integers add the vector's exact int32 sum (In::sum_words) to the 128-bit state once.
  static __device__ __forceinline__ void accumulate_words(acc& a, const uint4& w)
    requires(std::is_same_v<acc, ops::i128> && requires { In::sum_words(w); })
  {
    a += In::sum_words(w);
  }
  /// The same for the elements [from, to) of the vector (v2::fold_span: a segment's partial
  /// first and last vectors), the others zeroed: exact sums, so any order gives the same bits.
  static __device__ __forceinline__ void accumulate_words_masked(acc& a, const uint4& w, int from, int to)
    requires(std::is_same_v<acc, ops::i128> && requires { In::sum_words(w); })
  {
    a += In::sum_words(v2::keep_elements<static_cast<int>(sizeof(elem))>(w, from, to, 0u));  // (0: the identity of these reads)
  }
  /// 64-bit lane partials for the group items (v2::takes_lane_sums, v2::fold_span_sum): the
  /// integer sums and means (int_sum, int_mean: a 128-bit state that only adds) of the readers
  /// with an int32 sum_words (bytes, bool, 16-bit integers) and of uint32 (a vector's four
  /// words added in 64 bits). Not uint64 (its sums need the 128 bits) nor float16's fixed point
  /// (2^40 units an element).
  static constexpr bool lane_sums = [] {
    if constexpr (!is_int_add<W0>::value) return false;
    else if constexpr (requires(const uint4& w) { { In::sum_words(w) } -> std::same_as<std::int32_t>; }) return true;
    else return std::is_same_v<elem, std::uint32_t> && std::is_same_v<decltype(In::read(elem{})), std::int64_t>;
  }();
  /// shapes_k::op_never_overflows: every pick's op never records an overflow; the integer
  /// sums of bytes, bool and 16-bit integers neither (a sum of 2^41 elements, the most a
  /// launch takes, of at most 2^16 each fits int64 and uint64).
  template <class W>
  static constexpr bool no_overflow_of = is_int_add<W>::value ? sizeof(elem) <= 2 || never_overflows<W>::value
                                                                : never_overflows<W>::value;
  static constexpr bool no_overflow = no_overflow_of<W0> && no_overflow_of<W1> && no_overflow_of<W2> && no_overflow_of<W3>;
  static __device__ __forceinline__ std::int64_t vector_sum(const uint4& w)
    requires lane_sums
  {
    if constexpr (requires { In::sum_words(w); }) return In::sum_words(w);
    else return static_cast<std::int64_t>(static_cast<std::uint64_t>(w.x) + w.y + w.z + w.w);
  }
  static __device__ __forceinline__ std::int64_t value_of(elem v)
    requires lane_sums
  {
    return In::read(v);
  }
  /// Certified sums and means of bfloat16 (the float32 op's state, W0 = certified_sum<float,
  /// ...>; forty-third session): a 16-byte vector's 8 terms enter the state as one exact float64
  /// term when their exponents allow (In::terms_exact), else one at a time (W0::accumulate), so
  /// the state's exact value is the same either way. One state update a vector where there were
  /// 8. Measured (run 155, H100, against element by element, then plan bf16_terms 0): columns +9% (their
  /// runs of 8 rows, v3::cols_body kBf16Runs); rows and segments the same speed, bound by
  /// latency at the 32-byte state's occupancy rather than by these additions (ncu, run 154).
  static constexpr bool certified_terms = std::is_same_v<acc, ops::certified::state> && requires(const uint4& w, double& t) {
    In::terms_exact(w, t);
  };
  static __device__ __forceinline__ void accumulate_words(acc& a, const uint4& w)
    requires certified_terms
  {
    add_terms(a, w);
  }
  /// The same for the elements [from, to) of the vector (v2::fold_span), the others read as
  /// -0.0: they change neither the exact value nor its sign.
  static __device__ __forceinline__ void accumulate_words_masked(acc& a, const uint4& w, int from, int to)
    requires certified_terms
  {
    add_terms(a, v2::keep_elements<2>(w, from, to, 0x80008000u));
  }
  static __device__ __forceinline__ void add_terms(acc& a, const uint4& w) {
    double t;
    if (In::terms_exact(w, t)) {
      ops::certified::add<W0::K, true>(a, t);
      return;
    }
#pragma unroll 1
    for (int i = 0; i < 8; ++i) W0::accumulate(a, In::read(element_at<elem>(w, i)), 0);  // (rare: kept out of line)
  }
  /// One float64 term known to be an exact sum of elements (the columns' runs, v3::cols_body).
  static __device__ __forceinline__ void accumulate_term(acc& a, double t)
    requires certified_terms
  {
    W0::accumulate_term(a, t);
  }
  /// Min / max of bytes and the first index (v2::fold_words; the vector's elements kb, kb + 1,
  /// ...). The four words become keys 0..255 in the op's order (column_extreme_keys: a larger
  /// key is better), and the vector's best key comes from max.u16x2 over the even and the odd
  /// bytes (7 of them and a final max; native on sm_90), ~20 instructions where 16
  /// extractions and 15 min / max took ~45. (Measured, run 143: the same speed, byte argmax
  /// rows 0.49-0.52 of read, segments 0.30: ncu, run 145, shows the rows kernel waiting on
  /// memory at half occupancy, not on instructions.) The first element holding it is looked
  /// for only when that value could
  /// beat the state (strictly better, or equal with the state's index past kb): the lowest
  /// zero byte of key ^ best, found exactly by the borrow test (v - 0x01..) & ~v & 0x80..
  /// (a borrow runs only upwards from a zero byte, so the lowest flag is a true zero). The
  /// extreme and its first index do not depend on the order the elements are met in, so the
  /// bits are those of accumulate.
  static __device__ __forceinline__ void accumulate_words_at(acc& a, const uint4& w, std::int64_t kb)
    requires(is_int_extreme<W0>::value && sizeof(elem) == 1 && requires { In::byte_values(0u); })
  {
    accumulate_keys_at(a, make_uint4(column_extreme_keys(w.x), column_extreme_keys(w.y), column_extreme_keys(w.z),
                                     column_extreme_keys(w.w)),
                       kb, 0);
  }
  /// The same for the elements [from, to) of the vector (v2::fold_span: a segment's partial
  /// first and last vectors, read whole), at indices kb + from, ..., kb + to - 1 (kb < 0 for
  /// a segment's first vector). The other bytes' keys become 0, below or tied with every
  /// element's: a 0 best (every element of [from, to) the op's worst value) then has its
  /// first element at `from`, and a better best is never a masked byte's.
  static __device__ __forceinline__ void accumulate_words_masked_at(acc& a, const uint4& w, int from, int to, std::int64_t kb)
    requires(is_int_extreme<W0>::value && sizeof(elem) == 1 && requires { In::byte_values(0u); })
  {
    const uint4 k = make_uint4(column_extreme_keys(w.x), column_extreme_keys(w.y), column_extreme_keys(w.z),
                               column_extreme_keys(w.w));
    accumulate_keys_at(a, v2::keep_elements<1>(k, from, to, 0u), kb, from);
  }
  /// A vector's 16 keys (column_extreme_keys).
  static __device__ __forceinline__ uint4 vector_keys(const uint4& w)
    requires(is_int_extreme<W0>::value && sizeof(elem) == 1 && requires { In::byte_values(0u); })
  {
    return make_uint4(column_extreme_keys(w.x), column_extreme_keys(w.y), column_extreme_keys(w.z), column_extreme_keys(w.w));
  }
  /// Min / max of bytes and the first index over a lane's U vectors in flight together
  /// (v2::fold_vectors, v2::fold_span's rounds of whole vectors; forty-seventh session):
  /// vector u's keys (keys(u), column_extreme_keys) at indices kb + u stride, kb + u stride +
  /// 1, ... Each byte becomes a 16-bit key, the byte above and 255 - (16 u + its position)
  /// below, by one byte permutation for the even and one for the odd bytes of a word (the
  /// positions' bytes from kPos), and max.u16x2 (three-way) keeps the best key and, of equal
  /// keys, the first element: ~18 instructions a vector and one state update a round, where
  /// accumulate_keys_at's vector by vector took ~26 and an update each. The extreme and its
  /// first index, so the bits of accumulate.
  /// kClamp (v2::fold_span's rounds that hold a segment's first vector, forty-eighth session):
  /// the index found is raised to 0, the span's first element (kb the span's index of element 0
  /// of vector 0; masked keys, 0, come from accumulate_words_round_span_at). A masked byte
  /// before the span wins only when every kept byte of the round has key 0 too (the op's worst
  /// value), and then the first of them is the span's first element, index 0: the kept bytes
  /// of vector 0 come first. Masked bytes after the span's last element lose every tie to it.
  template <int U, bool kClamp = false, class Keys>
  static __device__ __forceinline__ void accumulate_keys_round_at(acc& a, Keys&& keys, std::int64_t kb, std::int64_t stride) {
    static_assert(U >= 1 && U <= 16);
    constexpr unsigned kPos[4] = {0x0c0d0e0fu, 0x08090a0bu, 0x04050607u, 0x00010203u};  // (byte b of [i]: 15 - (4 i + b))
    unsigned best = 0;  // (0: below or equal to every key)
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint4 kv = keys(u);  // (vector u's keys, made here: a round's keys are never all held)
      const unsigned k[4] = {kv.x, kv.y, kv.z, kv.w};
      unsigned m = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        m = __vmaxu2(m, __byte_perm(k[i], kPos[i], 0x2604u));  // (bytes 0 and 2, positions' bytes 0 and 2 below)
        m = __vmaxu2(m, __byte_perm(k[i], kPos[i], 0x3715u));  // (bytes 1 and 3)
      }
      best = __vmaxu2(best, m | (static_cast<unsigned>(15 - u) << 4) * 0x00010001u);
    }
    const unsigned key = max(best & 0xffffu, best >> 16);
    const unsigned at = 255u - (key & 0xffu);  // (16 u + position)
    std::int64_t i = kb + static_cast<std::int64_t>(at >> 4) * stride + static_cast<std::int64_t>(at & 15u);
    if constexpr (kClamp) i = max(i, std::int64_t(0));
    const std::int32_t m = column_extreme_value(key >> 8);
    if (W0::R::better(m, i, a.value, a.index)) {
      a.value = m;
      a.index = i;
    }
  }
  /// U whole vectors as loaded (v2::fold_vectors), vector u's elements at kb + u stride on.
  template <int U>
  static __device__ __forceinline__ void accumulate_words_round_at(acc& a, const uint4 (&w)[U], std::int64_t kb,
                                                                   std::int64_t stride)
    requires(is_int_extreme<W0>::value && sizeof(elem) == 1 && requires { In::byte_values(0u); })
  {
    accumulate_keys_round_at<U>(a, [&](int u) { return vector_keys(w[u]); }, kb, stride);
  }
  /// A round of a span's vectors that holds its first or its last vector or runs past its end
  /// (v2::fold_span; forty-eighth session): vector u is the span's vector j + u step of nv, its
  /// elements at (j + u step) 16 - from0 on in the span; the first vector's bytes before from0,
  /// the last one's from to_last on and the vectors from nv on (w[u] not loaded) get key 0, and
  /// the index found is raised to the span's first element (accumulate_keys_round_at's kClamp).
  /// Only u = 0 of the round at j = 0 can be the first vector; a word's kept bytes are those
  /// below a bit count, by a clamped funnel shift (SHF: the keys below 8 n bits of the vector,
  /// n = 16, to_last or 0), ~3 instructions a word. One state update a round where each such
  /// vector took one (accumulate_keys_at) and a branch on whether it could beat the state. The
  /// extreme and its first index, so the bits of accumulate.
  template <int U>
  static __device__ __forceinline__ void accumulate_words_round_span_at(acc& a, const uint4 (&w)[U], int j, int step,
                                                                        int nv, int from0, int to_last)
    requires(is_int_extreme<W0>::value && sizeof(elem) == 1 && requires { In::byte_values(0u); })
  {
    const int rest = nv - 1 - j;  // (vector u is the span's last when u step == rest, past its end when greater)
    accumulate_keys_round_at<U, true>(
        a,
        [&](int u) {
          const int d = u * step;
          const int bits = d < rest ? 128 : d == rest ? 8 * to_last : 0;  // (the vector's kept bytes, from its start)
          const uint4 kv = vector_keys(w[u]);
          unsigned k[4] = {kv.x, kv.y, kv.z, kv.w};
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            k[i] &= __funnelshift_lc(~0u, 0u, static_cast<unsigned>(max(bits - 32 * i, 0)));  // (the word's bytes below `bits`)
            if (u == 0) k[i] &= ~__funnelshift_lc(~0u, 0u, static_cast<unsigned>(max((j == 0 ? 8 * from0 : 0) - 32 * i, 0)));
          }
          return make_uint4(k[0], k[1], k[2], k[3]);
        },
        static_cast<std::int64_t>(j) * 16 - from0, static_cast<std::int64_t>(step) * 16);
  }
  /// A vector's 16 keys (column_extreme_keys; 0 for bytes left out, all before `from` or at
  /// or past the elements kept) into the state: the best key by max.u16x2 over the even and
  /// the odd bytes, then, only when that value could beat the state, its first byte at or
  /// past `from` (the lowest zero byte of key ^ best by the borrow test).
  static __device__ __forceinline__ void accumulate_keys_at(acc& a, const uint4& kv, std::int64_t kb, int from) {
    const unsigned k[4] = {kv.x, kv.y, kv.z, kv.w};
    unsigned even = k[0] & 0x00ff00ffu, odd = (k[0] >> 8) & 0x00ff00ffu;
#pragma unroll
    for (int i = 1; i < 4; ++i) {
      even = __vmaxu2(even, k[i] & 0x00ff00ffu);
      odd = __vmaxu2(odd, (k[i] >> 8) & 0x00ff00ffu);
    }
    const unsigned pair = __vmaxu2(even, odd);
    const unsigned best = max(pair & 0xffffu, pair >> 16);
    const std::int32_t m = column_extreme_value(best);
    constexpr bool kMax = W0::R::is_max;
    if (!(kMax ? m > a.value : m < a.value) && !(m == a.value && a.index > kb)) return;
    const unsigned rep = best * 0x01010101u;
    int first = 15;
#pragma unroll
    for (int i = 3; i >= 0; --i) {
      const unsigned z = k[i] ^ rep;
      const unsigned flags = (z - 0x01010101u) & ~z & 0x80808080u;
      if (flags != 0u) first = 4 * i + (__ffs(static_cast<int>(flags)) - 1) / 8;
    }
    first = max(first, from);
    if (W0::R::better(m, kb + first, a.value, a.index)) {
      a.value = m;
      a.index = kb + first;
    }
  }
  /// Min / max and the first index of 16-, 32- and 64-bit integers (int16, uint16: W0 over
  /// int32; uint32, uint64: over int64; forty-second session): the vector's V elements read
  /// (In::read: exact and order-preserving), their extreme by V - 1 min / max, and only when
  /// that value could beat the state (strictly better, or equal with the state's index past
  /// kb) the first element holding it. Element by element each took a comparison of value and
  /// 64-bit index and two selections. The extreme and its first index do not depend on the
  /// order the elements are met in, so the bits are those of accumulate.
  static __device__ __forceinline__ void accumulate_words_at(acc& a, const uint4& w, std::int64_t kb)
    requires(is_wide_int_extreme<W0>::value && sizeof(elem) >= 2 && std::is_integral_v<elem>)
  {
    extreme_of_vector(a, w, kb, 0, 16 / static_cast<int>(sizeof(elem)));
  }
  /// The same for the elements [from, to) of the vector (v2::fold_span: a segment's partial
  /// first and last vectors, read whole), at indices kb + from, ..., kb + to - 1. The others
  /// read as the op's worst value (In::read is order-preserving: the element type's lowest for
  /// max, highest for min), below or tied with every element: a best equal to it has its
  /// first element at `from` (every element of [from, to) then holds it), and a better best is
  /// never a masked element's.
  static __device__ __forceinline__ void accumulate_words_masked_at(acc& a, const uint4& w, int from, int to, std::int64_t kb)
    requires(is_wide_int_extreme<W0>::value && sizeof(elem) >= 2 && std::is_integral_v<elem>)
  {
    extreme_of_vector(a, w, kb, from, to);
  }
  /// Min / max of float16 and bfloat16 and the first index (NaN: NumPy's rules, as
  /// W0::accumulate; forty-fourth session): the vector's 8 elements as 4 pairs, their extreme by
  /// max.NaN (min.NaN) on the pairs (In::pair_max_nan: 3 for the pairs, one for the halves),
  /// and only when that value could beat the state (strictly better, or equal with the state's
  /// index past kb) the first element equal to it (In::pair_eq: a half-precision comparison,
  /// so -0 and +0 tie and the first one's own value is kept, as element by element). A NaN in
  /// the vector (rare) sends it element by element through W0::accumulate (the first NaN's
  /// index, or with SKIP the NaNs left out). Element by element each took a conversion, a NaN
  /// test, a comparison of value and 64-bit index and three selections. The extreme and its
  /// first index (and the first NaN) do not depend on the order the elements are met in, so
  /// the bits are those of accumulate.
  static __device__ __forceinline__ void accumulate_words_at(acc& a, const uint4& w, std::int64_t kb)
    requires(is_float_extreme<W0>::value && sizeof(elem) == 2 && requires { In::pair_eq(0u, 0u); })
  {
    float_extreme_of_vector(a, w, kb, 0, 8);
  }
  /// The same for the elements [from, to) of the vector (v2::fold_span: a segment's partial
  /// first and last vectors, read whole), at indices kb + from, ..., kb + to - 1; the others
  /// read as the op's worst value (-inf for max, +inf for min) and never taken for the index.
  static __device__ __forceinline__ void accumulate_words_masked_at(acc& a, const uint4& w, int from, int to, std::int64_t kb)
    requires(is_float_extreme<W0>::value && sizeof(elem) == 2 && requires { In::pair_eq(0u, 0u); })
  {
    float_extreme_of_vector(a, w, kb, from, to);
  }
  static __device__ __forceinline__ void float_extreme_of_vector(acc& a, const uint4& w, std::int64_t kb, int from, int to) {
    constexpr bool kMax = W0::R::is_max;
    auto ext = [](unsigned p, unsigned q) { return kMax ? In::pair_max_nan(p, q) : In::pair_min_nan(p, q); };
    const bool whole = from == 0 && to == 8;
    const uint4 k = whole ? w : v2::keep_elements<2>(w, from, to, kMax ? In::kNegInfPair : In::kInfPair);
    const unsigned m2 = ext(ext(k.x, k.y), ext(k.z, k.w));
    const unsigned m1 = ext(m2, __byte_perm(m2, 0, 0x1032));  // (both halves the extreme)
    const float m = In::read(static_cast<elem>(m1 & 0xffffu));
    if (m != m) {  // (a NaN among them: element by element, the NaN rules of W0::accumulate)
#pragma unroll 1
      for (int i = from; i < to; ++i) W0::accumulate(a, In::read(element_at<elem>(w, i)), kb + i);
      return;
    }
    if (!(kMax ? m > a.value : m < a.value) && !(m == a.value && a.index > kb)) return;
    // the first element of [from, to) equal to it (the fill elements outside may equal an infinite m)
    const uint4 in = whole ? make_uint4(~0u, ~0u, ~0u, ~0u) : v2::keep_elements<2>(make_uint4(~0u, ~0u, ~0u, ~0u), from, to, 0u);
    const unsigned e[4] = {In::pair_eq(k.x, m1) & in.x, In::pair_eq(k.y, m1) & in.y, In::pair_eq(k.z, m1) & in.z,
                           In::pair_eq(k.w, m1) & in.w};
    int first = 8;
#pragma unroll
    for (int i = 3; i >= 0; --i)
      if (e[i] != 0u) first = 2 * i + ((e[i] & 0xffffu) != 0u ? 0 : 1);
    if (first == 8) return;
    const float fv = In::read(element_at<elem>(w, first));  // (its own value: -0 or +0 where m is a zero)
    if (W0::R::better(fv, kb + first, a.value, a.index)) {
      a.value = fv;
      a.index = kb + first;
    }
  }
  static __device__ __forceinline__ void extreme_of_vector(acc& a, const uint4& w, std::int64_t kb, int from, int to) {
    using V = typename W0::R::value_type;
    constexpr int N = 16 / static_cast<int>(sizeof(elem));
    constexpr bool kMax = W0::R::is_max;
    constexpr elem worst = kMax ? std::numeric_limits<elem>::lowest() : std::numeric_limits<elem>::max();
    V v[N];
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = In::read(i >= from && i < to ? element_at<elem>(w, i) : worst);
    V m = v[0];
#pragma unroll
    for (int i = 1; i < N; ++i) m = kMax ? max(m, v[i]) : min(m, v[i]);
    if (!(kMax ? m > a.value : m < a.value) && !(m == a.value && a.index > kb)) return;
    int first = N - 1;
#pragma unroll
    for (int i = N - 1; i >= 0; --i)
      if (v[i] == m) first = i;
    first = max(first, from);
    if (W0::R::better(m, kb + first, a.value, a.index)) {
      a.value = m;
      a.index = kb + first;
    }
  }
  /// Column min / max of bytes (v3::cols_body, four outputs a lane): a word's bytes as keys
  /// 0..255 in the op's order, a larger key better (In::byte_values, complemented for min), so
  /// that max.u16x2 over keys with the run row below them finds each output's best and first
  /// row; a key's element value back; and an element (value and index) entered into a state.
  static __device__ __forceinline__ unsigned column_extreme_keys(unsigned w)
    requires(is_int_extreme<W0>::value && requires { In::byte_values(w); })
  {
    return W0::R::is_max ? In::byte_values(w) : ~In::byte_values(w);
  }
  static __device__ __forceinline__ std::int32_t column_extreme_value(unsigned key) {
    return static_cast<std::int32_t>((W0::R::is_max ? key : ~key) & 0xffu) - In::byte_bias;
  }
  /// The key of an element value (column_extreme_value's inverse; v3::cols_body's byte
  /// column end, which meets the warps and row chunks as 64-bit keys).
  static __device__ __forceinline__ unsigned column_extreme_key(std::int32_t v) {
    const unsigned b = static_cast<unsigned>(v + In::byte_bias) & 0xffu;
    return W0::R::is_max ? b : ~b & 0xffu;
  }
  static __device__ __forceinline__ void accumulate_value(acc& a, std::int32_t v, std::int64_t k) { W0::accumulate(a, v, k); }
  /// Column min / max of 16-bit integers (v3::cols_body's kPackedShortExtremes, four outputs a
  /// lane; forty-third session): whether this op takes them, whether it is max, and whether
  /// its elements are signed.
  static constexpr bool column_short_extremes = is_int_extreme<W0>::value && sizeof(elem) == 2 && std::is_integral_v<elem>;
  static constexpr bool extreme_is_max = [] {
    if constexpr (is_wide_int_extreme<W0>::value || is_float_extreme<W0>::value) return W0::R::is_max;
    else return false;
  }();
  /// Column min / max of float16 and bfloat16 (v3::cols_body's kPackedHalfExtremes, four
  /// outputs a lane as two pairs; forty-fifth session): whether this op takes them; which
  /// halves of a row's pair beat the run's best (column_pair_better: strictly larger for max,
  /// smaller for min, so the first of equal values stays, -0 and +0 tie, and a NaN never
  /// does); the run's best before any row (both halves -inf for max, +inf for min); whether
  /// NaNs must be found (not with SKIP: they are left out), and a pair's NaNs kept
  /// (column_pair_nans: max.NaN, a NaN half stays one).
  static constexpr bool column_half_extremes = [] {
    if constexpr (is_float_extreme<W0>::value && sizeof(elem) == 2 && requires { In::pair_gt(0u, 0u); }) return true;
    else return false;
  }();
  static constexpr bool column_finds_nans = [] {
    if constexpr (is_float_extreme<W0>::value) return !W0::R::skip_nan;
    else return false;
  }();
  static __device__ __forceinline__ unsigned column_pair_better(unsigned q, unsigned best)
    requires column_half_extremes
  {
    return W0::R::is_max ? In::pair_gt(q, best) : In::pair_lt(q, best);
  }
  static constexpr unsigned column_worst_pair() {
    if constexpr (column_half_extremes) return W0::R::is_max ? In::kNegInfPair : In::kInfPair;
    else return 0u;
  }
  static __device__ __forceinline__ unsigned column_pair_nans(unsigned seen, unsigned q)
    requires column_half_extremes
  {
    return In::pair_max_nan(seen, q);
  }
  /// Whether a half's bits (low 16 of `bits`) are a NaN.
  static __device__ __forceinline__ bool column_half_nan(unsigned bits)
    requires column_half_extremes
  {
    return (bits & 0x7fffu) > (In::kInfPair & 0x7fffu);
  }
  /// An element of the half columns as a 64-bit key (v3::cols_body's kPackedHalfExtremes:
  /// lanes, warps and row chunks meet as keys, the max; fifty-third session): bits 63..48 the
  /// value's order, larger better (the sign-magnitude bits made monotone, -0 and +0 as one,
  /// complemented for min; a NaN 0xffff, above every value, unless SKIP, whose NaNs give 0,
  /// no element); bits 47..1 2^47 - 1 - k, so that of equal values the first row wins (a row
  /// index reaches 2^47 only past 2^48 bytes of 16-bit elements); bit 0 a zero's sign, which
  /// no comparison reaches (rows differ first) and column_half_state gives back. 0: no element.
  static constexpr unsigned long long kHalfRowMask = (1ull << 47) - 1;
  static __device__ __forceinline__ unsigned long long column_half_key(unsigned bits, std::int64_t k)
    requires column_half_extremes
  {
    bits &= 0xffffu;
    const unsigned mag = bits & 0x7fffu;
    unsigned k16 = 0xffffu;
    if (column_half_nan(bits)) {
      if constexpr (W0::R::skip_nan) return 0;
    } else {
      const unsigned ord = mag == 0 ? 0x8000u : (bits & 0x8000u ? ~bits & 0xffffu : bits | 0x8000u);
      k16 = W0::R::is_max ? ord : 0xffffu - ord;  // (1 and above: -inf's order is 0x03ff, +inf's at most 0xff80)
    }
    return static_cast<unsigned long long>(k16) << 48 | (kHalfRowMask - static_cast<unsigned long long>(k)) << 1 |
           (mag == 0 ? bits >> 15 : 0u);
  }
  /// The state of a key (column_half_key's inverse; 0 the identity): the element's value
  /// with its row, or, a NaN's key, its row as the first NaN's.
  static __device__ __forceinline__ acc column_half_state(unsigned long long key)
    requires column_half_extremes
  {
    acc a = identity();
    if (key == 0) return a;
    const unsigned k16 = static_cast<unsigned>(key >> 48);
    const std::int64_t k = static_cast<std::int64_t>(kHalfRowMask - ((key >> 1) & kHalfRowMask));
    if constexpr (!W0::R::skip_nan) {
      if (k16 == 0xffffu) {
        a.nan_index = k;
        return a;
      }
    }
    const unsigned ord = W0::R::is_max ? k16 : 0xffffu - k16;
    unsigned bits = ord & 0x8000u ? ord & 0x7fffu : ~ord & 0xffffu;
    if (bits == 0) bits = static_cast<unsigned>(key & 1u) << 15;  // (-0 or +0)
    W0::accumulate(a, In::read(static_cast<elem>(bits)), k);
    return a;
  }
  /// Column sums and means of bytes (v3::cols_body, four outputs a lane): a word's bytes as
  /// values 0..255, and what each row's value is above the element's (In::byte_bias).
  static __device__ __forceinline__ unsigned column_bytes(unsigned w)
    requires(std::is_same_v<acc, ops::i128> && requires { In::byte_values(w); })
  {
    return In::byte_values(w);
  }
  static __device__ __forceinline__ std::int32_t column_byte_bias() { return In::byte_bias; }
  /// Column sums and means of 16-bit integers (v3::cols_body, four outputs a lane): the value
  /// of a word's low and high element, added to int32 run sums.
  static __device__ __forceinline__ std::int32_t column_short_lo(unsigned w)
    requires(std::is_same_v<acc, ops::i128> && sizeof(elem) == 2 && requires { In::short_lo(w); })
  {
    return In::short_lo(w);
  }
  static __device__ __forceinline__ std::int32_t column_short_hi(unsigned w)
    requires(std::is_same_v<acc, ops::i128> && sizeof(elem) == 2 && requires { In::short_hi(w); })
  {
    return In::short_hi(w);
  }
  __device__ void write(std::int64_t o, acc a, std::int64_t len) const {
    switch (pick) {
      case 1: w1.write(o, a, len); break;
      case 2: w2.write(o, a, len); break;
      case 3: w3.write(o, a, len); break;
      default: w0.write(o, a, len); break;
    }
  }
};

}  // namespace tally::cuda::narrow_k
