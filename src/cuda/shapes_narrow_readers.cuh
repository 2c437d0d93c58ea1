// The element readers of the narrow integer types' shape reductions (the stored type, the wide
// accumulator type and the exact conversion, tally::shapes::widen_one; sum_words: a 16-byte
// vector's elements summed at once, exactly), shared by src/cuda/shapes_narrow.cu (the
// bytes), src/cuda/shapes_narrow_int.cu (the 16- to 64-bit integers) and
// bench/experiments/narrow_seg_probe.cu. bool's and the half types' readers stay with their
// ops in shapes_narrow.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/shapes_narrow_op.cuh"
#include "shapes_widen.hpp"

namespace tally::cuda::narrow_k {

// ---- bytes ----
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

// ---- 16- to 64-bit integers ----
struct i16_in {
  using src = std::int16_t;
  using wide = std::int32_t;
  static __device__ __forceinline__ std::int32_t read(src v) { return v; }
  /// A word's low and high elements, sign-extended.
  static __device__ __forceinline__ std::int32_t short_lo(unsigned q) { return static_cast<std::int16_t>(q & 0xffffu); }
  static __device__ __forceinline__ std::int32_t short_hi(unsigned q) { return static_cast<std::int32_t>(q) >> 16; }
  /// The vector's 8 elements summed in int32 (|sum| <= 8 x 2^15).
  static __device__ __forceinline__ std::int32_t sum_words(const uint4& w) {
    std::int32_t s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) s += short_hi(word_at(w, i)) + short_lo(word_at(w, i));
    return s;
  }
};
struct u16_in {
  using src = std::uint16_t;
  using wide = std::int32_t;
  static __device__ __forceinline__ std::int32_t read(src v) { return v; }
  /// A word's low and high elements, zero-extended.
  static __device__ __forceinline__ std::int32_t short_lo(unsigned q) { return static_cast<std::int32_t>(q & 0xffffu); }
  static __device__ __forceinline__ std::int32_t short_hi(unsigned q) { return static_cast<std::int32_t>(q >> 16); }
  /// The vector's 8 elements summed in int32 (sum <= 8 x 65535 < 2^20).
  static __device__ __forceinline__ std::int32_t sum_words(const uint4& w) {
    std::int32_t s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) s += short_hi(word_at(w, i)) + short_lo(word_at(w, i));
    return s;
  }
};
struct u32_in {
  using src = std::uint32_t;
  using wide = std::int64_t;
  static __device__ __forceinline__ std::int64_t read(src v) { return v; }
};
struct u64_in {  // biased: the bits x ^ 2^63 as int64 (src/shapes_widen.hpp)
  using src = std::uint64_t;
  using wide = std::int64_t;
  static constexpr bool biased = true;
  static __device__ __forceinline__ std::int64_t read(src v) { return tally::shapes::widen_one(v); }
};

}  // namespace tally::cuda::narrow_k
