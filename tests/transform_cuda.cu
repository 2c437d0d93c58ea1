// The CUDA side of tests/test_transform.cpp: tally::cuda::transform_reduce instantiated with
// the test functors (compiled by nvcc, as a user's code would be).
#include "tally/cuda/transform_reduce.cuh"
#include "transform_functors.hpp"

namespace tt::tr {

template <class T, class Acc, class Tr, class Co>
Acc cuda_transform_reduce(tally::view<const T> x, Acc identity, Tr tr, Co co) {
  return tally::cuda::transform_reduce<T>(x, identity, tr, co, nullptr);
}

template std::int64_t cuda_transform_reduce(tally::view<const std::int32_t>, std::int64_t, square64, plus64);
template double cuda_transform_reduce(tally::view<const double>, double, abs_of, max_nan);
template std::int64_t cuda_transform_reduce(tally::view<const float>, std::int64_t, is_positive, plus64);
template count_min cuda_transform_reduce(tally::view<const std::int32_t>, count_min, to_count_min, merge_count_min);

}  // namespace tt::tr
