// User functors of the transform_reduce tests: one type each, usable by the CPU header and (with
// nvcc) the CUDA header, as users are meant to write them (TALLY_HD members).
#pragma once

#include <cstdint>

#include "tally/transform_reduce.hpp"

namespace tt::tr {

/// int32 -> its square in int64 (exact: below 2^62).
struct square64 {
  TALLY_HD std::int64_t operator()(std::int32_t v) const { return static_cast<std::int64_t>(v) * v; }
};
struct plus64 {
  TALLY_HD std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; }
};
/// double -> |v|; combine: max, NaN propagating (identity 0).
struct abs_of {
  TALLY_HD double operator()(double v) const { return v < 0 ? -v : v; }
};
struct max_nan {
  TALLY_HD double operator()(double a, double b) const {
    if (a != a) return a;
    if (b != b) return b;
    return a < b ? b : a;
  }
};
/// float -> 1 if positive; combine: +.
struct is_positive {
  TALLY_HD std::int64_t operator()(float v) const { return v > 0.0f ? 1 : 0; }
};
/// A two-field accumulator: the count and the smallest element (a struct Acc).
struct count_min {
  std::int64_t count;
  std::int32_t least;
};
struct to_count_min {
  TALLY_HD count_min operator()(std::int32_t v) const { return {1, v}; }
};
struct merge_count_min {
  TALLY_HD count_min operator()(count_min a, count_min b) const {
    return {a.count + b.count, a.least < b.least ? a.least : b.least};
  }
};

/// The CUDA version over device data (tests/transform_cuda.cu; instantiated for the functors
/// above).
template <class T, class Acc, class Tr, class Co>
Acc cuda_transform_reduce(tally::view<const T> x, Acc identity, Tr tr, Co co);

}  // namespace tt::tr
