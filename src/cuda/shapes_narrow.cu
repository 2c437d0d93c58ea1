// Native narrow element types of the shape layer (twenty-ninth session): the v3 kernels
// (src/cuda/shapes_v3.cuh) read float16, bfloat16, int8, uint8 and bool elements as they are,
// 8 or 16 to a 16-byte vector, each converted exactly on the way into the wide type's
// accumulator (float32 values; int32 values for the integers and bool). The copy of
// src/cuda/shapes.cu (run_widened) cost sizeof(x) / (sizeof(x) + 2 sizeof(W)) of the read
// bandwidth (run 111: float16 0.18, int8 0.09); here a call reads x once.
//
// What runs here (else the widened route, src/cuda/shapes.cu: strided views, rows whose
// elements are not adjacent, stream-ordered exact float sums and means, and certified passes
// that could not prove every output): rows, segments and columns of
//  - float16, bfloat16: fast sums, exact (certified) sums and means, min/max and their index;
//  - int8, uint8, bool: sums and means (a vector's bytes summed in int32 by dp4a, then added to
//    the 128-bit state; columns: a word's bytes added in 16-bit halves, column_bytes, into the
//    states every 256 rows), min/max and their index.
//
// Same ops as the widened route (src/cuda/shapes.cuh, with the element read by In::read), so
// the same accumulator values: exact results (integer sums and means, certified float sums and
// means, min/max and their indices) have the bits of the widened route and of the CPU backend.
// Fast float sums have their own bits (the lanes meet 8 elements a vector, not 4), fixed by the
// shape alone as everywhere else.
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdlib>

#include "cuda/shapes_launch.cuh"
#include "cuda/shapes_narrow.hpp"
#include "shapes_widen.hpp"

namespace tally::cuda {
namespace {

using namespace shapes_k;
using namespace shapes_launch;
using tally::shapes::kind;
using tally::shapes::store;

// ---- element readers: the stored type and its exact conversion --------------------------------
struct f16_in {  // IEEE binary16 bits -> float32 (cvt.f32.f16: exact, subnormals included)
  using src = std::uint16_t;
  using wide = float;
  static __device__ __forceinline__ float read(src b) { return __half2float(__ushort_as_half(b)); }
};
struct bf16_in {  // bfloat16 bits -> float32 (the upper half of its bits)
  using src = std::uint16_t;
  using wide = float;
  static __device__ __forceinline__ float read(src b) { return __uint_as_float(static_cast<unsigned>(b) << 16); }
};
// The byte types also sum a 16-byte vector's bytes at once (sum_words, exact in int32: |sum|
// <= 16 x 255), so that an integer sum's 128-bit state takes one addition a vector, not 16:
// dp4a adds four bytes' products with 1 in one instruction. They take the vector's four words
// as loaded (v2::fold_words): through a byte array, NVVM kept a local copy of each vector.
__device__ __forceinline__ unsigned word_at(const uint4& w, int i) { return i == 0 ? w.x : i == 1 ? w.y : i == 2 ? w.z : w.w; }
struct i8_in {
  using src = std::int8_t;
  using wide = std::int32_t;
  static __device__ __forceinline__ std::int32_t read(src v) { return v; }
  /// A word's four bytes as values 0..255 (column sums, v3::cols_body): x + 128, taken off
  /// again as byte_bias per row.
  static __device__ __forceinline__ unsigned byte_values(unsigned w) { return w ^ 0x80808080u; }
  static constexpr std::int32_t byte_bias = 128;
  static __device__ __forceinline__ std::int32_t sum_words(const uint4& w) {
    int s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) s = __dp4a(static_cast<int>(word_at(w, i)), 0x01010101, s);
    return s;
  }
};
struct u8_in {
  using src = std::uint8_t;
  using wide = std::int32_t;
  static __device__ __forceinline__ std::int32_t read(src v) { return v; }
  static __device__ __forceinline__ unsigned byte_values(unsigned w) { return w; }
  static constexpr std::int32_t byte_bias = 0;
  static __device__ __forceinline__ std::int32_t sum_words(const uint4& w) {
    unsigned s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) s = __dp4a(word_at(w, i), 0x01010101u, s);
    return static_cast<std::int32_t>(s);
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

/// An op of the wide type (W0: src/cuda/shapes.cuh) reading In::src elements. W1..W3: variants
/// of W0 with the same accumulator that differ only in their writes (the result type; sum or
/// mean), chosen at run time by `pick`, so one set of kernels serves them all. vector_terms is
/// off: the certified pass takes these elements one at a time (its four-float32 terms,
/// add4 / add_n, are for float32 vectors).
template <class In, class W0, class W1 = W0, class W2 = W0, class W3 = W0> struct narrow_op {
  using elem = typename In::src;
  using acc = typename W0::acc;
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
  /// A 16-byte vector as loaded (v2::fold_words): integer sums and means of bytes add the
  /// vector's exact int32 sum to the 128-bit state once.
  static __device__ __forceinline__ void accumulate_words(acc& a, const uint4& w)
    requires(std::is_same_v<acc, ops::i128> && requires { In::sum_words(w); })
  {
    a += In::sum_words(w);
  }
  /// Column sums and means of bytes (v3::cols_body, four outputs a lane): a word's bytes as
  /// values 0..255, and what each row's value is above the element's (In::byte_bias).
  static __device__ __forceinline__ unsigned column_bytes(unsigned w)
    requires(std::is_same_v<acc, ops::i128> && requires { In::byte_values(w); })
  {
    return In::byte_values(w);
  }
  static __device__ __forceinline__ std::int32_t column_byte_bias() { return In::byte_bias; }
  __device__ void write(std::int64_t o, acc a, std::int64_t len) const {
    switch (pick) {
      case 1: w1.write(o, a, len); break;
      case 2: w2.write(o, a, len); break;
      case 3: w3.write(o, a, len); break;
      default: w0.write(o, a, len); break;
    }
  }
};

template <class In> bool run_native(const geometry& g, const request& r, outcome& st, cudaStream_t s) {
  using T = typename In::src;
  using W = typename In::wide;
  const bool segmented = g.offsets != nullptr;
  const bool column_mode = !segmented && g.outputs > 1 && std::llabs(g.outer) < std::llabs(g.inner);
  const bool contiguous_rows =
      !column_mode && (segmented || g.inner == 1) && reinterpret_cast<std::uintptr_t>(g.x) % sizeof(T) == 0;
  if (!tuning::shapes_vector_loads() || !tuning::shapes_fused() || !(column_mode || contiguous_rows)) return false;
  const bool out64 = r.out_type == dtype::float64;
  auto run = [&]<class Op>(auto&& make, outcome& o) { launch_v3<Op, true>(g, r, o, s, make, column_mode); };
  if constexpr (std::is_same_v<W, float>) {
    if (r.what == kind::extreme) {
      const store as = tally::shapes::store_of(g.type);
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
    if (r.what == kind::mean || r.acc == accuracy::exact) {
      // the certified pass (blocking calls; the stream-ordered ones gate the exact kernels on
      // the device, src/cuda/shapes.cu, over the widened copy)
      if (r.stream_ordered || !tuning::shapes_certified()) return false;
      using Op = narrow_op<In, certified_sum<float, float, false>, certified_sum<float, double, false>,
                           certified_sum<float, float, true>, certified_sum<float, double, true>>;
      const int pick = (r.what == kind::mean ? 2 : 0) + (out64 ? 1 : 0);
      outcome c;
      run.template operator()<Op>([pick](void* out, std::int64_t*, long long* ovf) {
        Op op;
        op.w0 = {static_cast<float*>(out), ovf};
        op.w1 = {static_cast<double*>(out), ovf};
        op.w2 = {static_cast<float*>(out), ovf};
        op.w3 = {static_cast<double*>(out), ovf};
        op.pick = pick;
        return op;
      }, c);
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
    if (r.what == kind::extreme) {  // (no NaN among integers: the NaN policy changes nothing)
      const store as = tally::shapes::store_of(g.type);
      auto mk = [&]<class E>() {
        using Op = narrow_op<In, E>;
        run.template operator()<Op>([as](void* out, std::int64_t* idx, long long*) {
          Op op;
          op.w0 = E{static_cast<std::int32_t*>(out), idx, as};
          return op;
        }, st);
      };
      if (r.eop == extreme_op::max) mk.template operator()<extreme<std::int32_t, true, false>>();
      else mk.template operator()<extreme<std::int32_t, false, false>>();
      return true;
    }
    if (r.what == kind::mean) {
      using Op = narrow_op<In, int_mean<std::int32_t, float>, int_mean<std::int32_t, double>>;
      run.template operator()<Op>([out64](void* out, std::int64_t*, long long* ovf) {
        Op op;
        op.w0 = {static_cast<float*>(out), ovf};
        op.w1 = {static_cast<double*>(out), ovf};
        op.pick = out64 ? 1 : 0;
        return op;
      }, st);
      return true;
    }
    using Op = narrow_op<In, int_sum<std::int32_t>>;
    const bool to_u64 = r.out_type == dtype::uint64;
    run.template operator()<Op>([to_u64](void* out, std::int64_t*, long long* ovf) {
      Op op;
      op.w0 = {static_cast<std::int64_t*>(out), ovf, to_u64, false};
      return op;
    }, st);
    return true;
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
