// CPU backend: y = a*x + y and x = a*x (ops/elementwise.hpp), OpenMP over the elements.
// Element i reads its inputs before writing, so exact aliasing of x and y is fine.
#include <omp.h>

#include <cstdint>
#include <cstring>

#include "backends_ops.hpp"
#include "tally/ops/elementwise.hpp"

namespace tally::cpu {
namespace {

constexpr std::int64_t kParallelMin = 1 << 16;

template <class T> void axpy_t(const void* av, const void* xv, void* yv, std::int64_t n, int& status) {
  T a;
  std::memcpy(&a, av, sizeof a);
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (n >= kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) {
    int s = 0;
    y[i] = ops::axpy_checked<T>(a, x[i], y[i], s);
    bad |= s;
  }
  status = bad;
}

template <class T> void scale_t(const void* av, void* xv, std::int64_t n, int& status) {
  T a;
  std::memcpy(&a, av, sizeof a);
  T* x = static_cast<T*>(xv);
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (n >= kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) {
    int s = 0;
    x[i] = ops::scale_checked<T>(a, x[i], s);
    bad |= s;
  }
  status = bad;
}

}  // namespace

void axpy(dtype t, const void* a, const void* x, void* y, std::int64_t n, int& status) {
  status = 0;
  switch (t) {
    case dtype::float32: return axpy_t<float>(a, x, y, n, status);
    case dtype::float64: return axpy_t<double>(a, x, y, n, status);
    case dtype::int32: return axpy_t<std::int32_t>(a, x, y, n, status);
    case dtype::int64: return axpy_t<std::int64_t>(a, x, y, n, status);
    default: break;  // (the other element types are refused by src/dispatch_ops.cpp)
  }
}

void scale(dtype t, const void* a, void* x, std::int64_t n, int& status) {
  status = 0;
  switch (t) {
    case dtype::float32: return scale_t<float>(a, x, n, status);
    case dtype::float64: return scale_t<double>(a, x, n, status);
    case dtype::int32: return scale_t<std::int32_t>(a, x, n, status);
    case dtype::int64: return scale_t<std::int64_t>(a, x, n, status);
    default: break;  // (the other element types are refused by src/dispatch_ops.cpp)
  }
}

}  // namespace tally::cpu
