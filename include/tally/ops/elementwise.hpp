// tally::ops: element-wise y = a*x + y (axpy) and x = a*x (scale), shared by the CPU and CUDA
// backends. Floating: one fused multiply-add (a*x + y rounded once, to nearest even), so both
// backends give the same bits. Integers: exact products and sums in 64 or 128 bits, wrapped
// to T, with status = 1 when the exact result does not fit T. The element types after the
// first four (float16 ... uint64; bool is refused): ops/elementwise_small.hpp, the same rules
// (16-bit floats: the exact a*x + y rounded once to the 16-bit type).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "tally/ops/reducers.hpp"

namespace tally::ops {

/// a*x + y, rounded once (floating) or checked (integers: status = 1 on overflow).
template <class T> TALLY_HD T axpy_checked(T a, T x, T y, int& status) {
  if constexpr (is_small_elem_v<T>) {  // float16 ... uint64: ops/elementwise_small.hpp
    return small_axpy<T>(a, x, y, status);
  } else if constexpr (std::is_same_v<T, float>) {
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(a, x, y);
#else
    return std::fma(a, x, y);
#endif
  } else if constexpr (std::is_same_v<T, double>) {
#if defined(__CUDA_ARCH__)
    return __fma_rn(a, x, y);
#else
    return std::fma(a, x, y);
#endif
  } else if constexpr (sizeof(T) == 4) {  // int32: |a*x| <= 2^62, exact in int64
    std::int64_t r = static_cast<std::int64_t>(a) * x + y;
    if (r > INT32_MAX || r < INT32_MIN) status = 1;
    return static_cast<T>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(r)));
  } else {  // int64: exact in 128 bits
    i128 r = static_cast<i128>(a) * static_cast<i128>(x) + static_cast<i128>(y);
    if (r > static_cast<i128>(INT64_MAX) || r < static_cast<i128>(INT64_MIN)) status = 1;
    return static_cast<T>(static_cast<std::uint64_t>(static_cast<u128>(r)));
  }
}

/// a*x (floating: IEEE product; integers: checked as axpy_checked).
template <class T> TALLY_HD T scale_checked(T a, T x, int& status) {
  if constexpr (is_small_elem_v<T>) {
    return small_scale<T>(a, x, status);
  } else if constexpr (std::is_floating_point_v<T>) {
    return a * x;
  } else {
    return axpy_checked<T>(a, x, T(0), status);
  }
}

}  // namespace tally::ops
