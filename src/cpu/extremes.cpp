// CPU backend: minimum, maximum and their first index (ops/extremes.hpp). OpenMP threads
// over chunks of 2^15 elements; each thread scans its contiguous chunks by value first
// (cpu/extreme_blocks.hpp). The reducer's combine keeps the first index among equals, so
// neither the blocks, the lanes nor the thread count can change the answer.
#include <omp.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backends.hpp"
#include "cpu/extreme_blocks.hpp"
#include "tally/ops/extremes.hpp"
#include "tally/ops/small.hpp"
#include "tally/threads.hpp"

namespace tally::cpu {
namespace {

constexpr std::int64_t kChunk = 1 << 15;
constexpr std::int64_t kParallelMin = 1 << 16;
using namespace extreme_blocks;
// The value of a finished reducer into `value` (x's storage type: a 16-bit float's exact
// float32 value converted back, exactly).
template <class R, class T> void put_result(const typename R::acc_t& total, void* value, std::int64_t& index) {
  int status = 0;
  auto r = R::finalize(total, status);
  if constexpr (ops::is_half_v<T>) {
    std::uint16_t b = std::is_same_v<T, ops::half_in> ? to_float16(r.value).bits : to_bfloat16(r.value).bits;
    std::memcpy(value, &b, sizeof b);
  } else {
    std::memcpy(value, &r.value, sizeof(T));
  }
  index = r.index;
}

template <class R, class T> void run(const void* xv, std::int64_t n, void* value, std::int64_t& index) {
  const T* x = static_cast<const T*>(xv);
  typename R::acc_t total = R::identity();
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  // Blocks by value where the element is the compared type (float32, float64, the integers);
  // the 16-bit floats and bool (compared as float32 / bool) element by element.
  constexpr bool by_blocks = std::is_same_v<T, typename R::value_type>;
#pragma omp parallel if ((n >= kParallelMin) && ::tally::detail::cpu_threads_allowed())
  {
    typename R::acc_t mine = R::identity();
    std::int64_t first = -1, last = -1;  // this thread's chunks (schedule(static): contiguous)
#pragma omp for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
      if (first < 0) first = c;
      last = c;
      if constexpr (!by_blocks) mine = R::combine(mine, fold_lanes<R, T>(x, c * kChunk, std::min(n, (c + 1) * kChunk)));
    }
    if constexpr (by_blocks)
      if (first >= 0) mine = fold_range<R, T>(x, first * kChunk, std::min(n, (last + 1) * kChunk));
#pragma omp critical(tally_extreme_merge)
    total = R::combine(total, mine);
  }
  put_result<R, T>(total, value, index);
}

// Minimum and maximum in one read: each thread's chunks (contiguous, in order) scanned for the
// minimum and then, from cache, for the maximum (by value first, as `run`); chunk results
// merged in order, threads merged by the reducers' combine (first index on ties).
template <class Rmin, class Rmax, class T>
void run_minmax(const void* xv, std::int64_t n, void* lo, std::int64_t& lo_index, void* hi, std::int64_t& hi_index) {
  const T* x = static_cast<const T*>(xv);
  typename Rmin::acc_t tmin = Rmin::identity();
  typename Rmax::acc_t tmax = Rmax::identity();
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  constexpr bool by_blocks = std::is_same_v<T, typename Rmin::value_type>;
#pragma omp parallel if ((n >= kParallelMin) && ::tally::detail::cpu_threads_allowed())
  {
    typename Rmin::acc_t mmin = Rmin::identity();
    typename Rmax::acc_t mmax = Rmax::identity();
#pragma omp for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t b = c * kChunk, e = std::min(n, b + kChunk);
      if constexpr (by_blocks) {
        mmin = Rmin::combine(mmin, fold_range<Rmin, T>(x, b, e));
        mmax = Rmax::combine(mmax, fold_range<Rmax, T>(x, b, e));
      } else {
        mmin = Rmin::combine(mmin, fold_lanes<Rmin, T>(x, b, e));
        mmax = Rmax::combine(mmax, fold_lanes<Rmax, T>(x, b, e));
      }
    }
#pragma omp critical(tally_minmax_merge)
    {
      tmin = Rmin::combine(tmin, mmin);
      tmax = Rmax::combine(tmax, mmax);
    }
  }
  put_result<Rmin, T>(tmin, lo, lo_index);
  put_result<Rmax, T>(tmax, hi, hi_index);
}

// T: the storage type read; the 16-bit floats are compared as their exact float32 values, bool's
// bytes as bool (any nonzero byte true).
template <class T> void run_t(extreme_op op, nan_policy nans, const void* x, std::int64_t n, void* value,
                              std::int64_t& index) {
  using namespace ops;
  using E = reduced_t<T>;
  bool mx = op == extreme_op::max, skip = nans == nan_policy::omit;
  if (mx && skip) run<extreme_reducer<E, true, true>, T>(x, n, value, index);
  else if (mx) run<extreme_reducer<E, true, false>, T>(x, n, value, index);
  else if (skip) run<extreme_reducer<E, false, true>, T>(x, n, value, index);
  else run<extreme_reducer<E, false, false>, T>(x, n, value, index);
}

}  // namespace

void extreme(extreme_op op, nan_policy nans, dtype t, const void* x, std::int64_t n, void* value,
             std::int64_t& index) {
  tally::visit(t, [&](auto tag) { run_t<ops::storage_t<typename decltype(tag)::type>>(op, nans, x, n, value, index); });
}

void minmax(nan_policy nans, dtype t, const void* x, std::int64_t n, void* min_value, std::int64_t& min_index,
            void* max_value, std::int64_t& max_index) {
  tally::visit(t, [&](auto tag) {
    using T = ops::storage_t<typename decltype(tag)::type>;
    using E = ops::reduced_t<T>;
    if (nans == nan_policy::omit)
      run_minmax<ops::extreme_reducer<E, false, true>, ops::extreme_reducer<E, true, true>, T>(x, n, min_value, min_index,
                                                                                              max_value, max_index);
    else
      run_minmax<ops::extreme_reducer<E, false, false>, ops::extreme_reducer<E, true, false>, T>(x, n, min_value, min_index,
                                                                                                max_value, max_index);
  });
}

}  // namespace tally::cpu
