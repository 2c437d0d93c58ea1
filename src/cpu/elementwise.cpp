// CPU backend: y = a*x + y and x = a*x (ops/elementwise.hpp, ops/elementwise_small.hpp), OpenMP
// over the elements, every element type but bool. Element i reads its inputs before writing,
// so exact aliasing of x and y is fine. An integer element whose exact result does not fit T
// is written wrapped and its index recorded; the smallest such index is reported.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backends_ops.hpp"
#include "tally/ops/elementwise.hpp"
#include "tally/threads.hpp"

namespace tally::cpu {
namespace {

constexpr std::int64_t kParallelMin = 1 << 16;
constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();

template <class T> void axpy_t(const void* av, const void* xv, void* yv, std::int64_t n, std::int64_t& first_bad) {
  T a;
  std::memcpy(&a, av, sizeof a);
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  std::int64_t first = kNone;
#pragma omp parallel for schedule(static) reduction(min : first) if ((n >= kParallelMin) && ::tally::detail::cpu_threads_allowed())
  for (std::int64_t i = 0; i < n; ++i) {
    int s = 0;
    y[i] = ops::axpy_checked<T>(a, x[i], y[i], s);
    if (s && i < first) first = i;
  }
  first_bad = first == kNone ? -1 : first;
}

template <class T> void scale_t(const void* av, void* xv, std::int64_t n, std::int64_t& first_bad) {
  T a;
  std::memcpy(&a, av, sizeof a);
  T* x = static_cast<T*>(xv);
  std::int64_t first = kNone;
#pragma omp parallel for schedule(static) reduction(min : first) if ((n >= kParallelMin) && ::tally::detail::cpu_threads_allowed())
  for (std::int64_t i = 0; i < n; ++i) {
    int s = 0;
    x[i] = ops::scale_checked<T>(a, x[i], s);
    if (s && i < first) first = i;
  }
  first_bad = first == kNone ? -1 : first;
}

}  // namespace

void axpy(dtype t, const void* a, const void* x, void* y, std::int64_t n, std::int64_t& first_bad) {
  first_bad = -1;
  tally::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) axpy_t<T>(a, x, y, n, first_bad);  // (bool: refused by dispatch_ops.cpp)
  });
}

void scale(dtype t, const void* a, void* x, std::int64_t n, std::int64_t& first_bad) {
  first_bad = -1;
  tally::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) scale_t<T>(a, x, n, first_bad);
  });
}

}  // namespace tally::cpu
