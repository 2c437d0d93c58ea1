// tally::transform_reduce: a reduction with user functors, header-only so that the functors
// instantiate it (CPU version; the CUDA version for nvcc users is
// tally/cuda/transform_reduce.cuh and takes the same functor types).
//
//   struct square { TALLY_HD std::int64_t operator()(std::int32_t v) const { return std::int64_t(v) * v; } };
//   struct plus   { TALLY_HD std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; } };
//   std::int64_t s = tally::transform_reduce<std::int32_t>(x, std::int64_t(0), square{}, plus{});
//
// TALLY_HD (from tally/ops/reducers.hpp) marks functor members for both sides: it is
// `__host__ __device__ __forceinline__` under nvcc and plain `inline` otherwise (which changes
// nothing for a member function defined in its class), so one functor serves both headers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "tally/core.hpp"
#include "tally/threads.hpp"
#include "tally/ops/reducers.hpp"
#include "tally/types.hpp"

namespace tally {

namespace detail {
/// Elements per chunk of the CPU transform_reduce (fixed: the result never depends on the
/// thread count).
inline constexpr std::int64_t kTransformChunk = 1 << 14;

template <class T> void check_transform_input(view<const T> x, const char* fn, bool device) {
  if (x.size < 0)
    throw error(errc::invalid_argument, std::string("tally::") + fn + ": x has negative length " + std::to_string(x.size));
  if (x.data == nullptr && x.size > 0)
    throw error(errc::null_pointer, std::string("tally::") + fn + ": x is a null pointer with length " + std::to_string(x.size));
  if (x.size == 0) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(x.data);
  const auto count = static_cast<std::uintptr_t>(x.size);
  if (count > static_cast<std::uintptr_t>(PTRDIFF_MAX) / sizeof(T) || begin > UINTPTR_MAX - count * sizeof(T))
    throw error(errc::invalid_argument, std::string("tally::") + fn + ": x has length " + std::to_string(x.size) +
                                            ", which runs past the end of the address space");
  if (x.where == memory::device && !cuda_available())  // (as validate::locate_declared: no GPU, no device memory)
    throw error(errc::no_gpu, std::string("tally::") + fn +
                                  ": x is declared device memory, but no usable CUDA GPU is present (or this build has no CUDA support)");
  const memory found = locate(x.data);
  if (x.where == memory::device && found != memory::device)
    throw error(errc::wrong_memory, std::string("tally::") + fn +
                                        ": x is declared device memory, but the CUDA runtime does not know it as device memory");
  const memory where = x.where == memory::host && found != memory::device ? memory::host : found;
  if (!device && where == memory::device)
    throw error(errc::wrong_memory, std::string("tally::") + fn +
                                        ": x is in CUDA device memory, which the CPU version cannot read (include"
                                        " tally/cuda/transform_reduce.cuh and use tally::cuda::transform_reduce)");
  if (device && (where != memory::device || locate(x.data) != memory::device))
    throw error(errc::wrong_memory, std::string("tally::") + fn + ": x is not CUDA device memory");
  if (device && begin % alignof(T) != 0)  // (a misaligned load faults on the GPU and loses the context)
    throw error(errc::invalid_argument, std::string("tally::") + fn + ": x is CUDA device memory at an address that is not a multiple of its " +
                                            std::to_string(alignof(T)) + "-byte elements' alignment (copy it to an aligned buffer)");
}
}  // namespace detail

/// combine over i of transform(x[i]), starting from `identity`, on the CPU (OpenMP threads
/// when the translation unit is compiled with OpenMP, one thread otherwise).
///
/// - Shapes: x (n,), host memory, any n >= 0. Types: T any element type the functor takes;
///   Acc, the accumulator and result type, any trivially copyable type.
/// - Requirements: `Acc transform(T)`, `Acc combine(Acc, Acc)`; combine must be associative
///   and commutative and `identity` its neutral element (combine(identity, a) == a), because
///   elements are grouped into chunks the caller does not choose (and the GPU version merges
///   them in a tree).
/// - Order: x is cut into fixed chunks of kTransformChunk elements; each chunk folds its
///   elements left to right from `identity`; chunk results are combined in chunk order. So
///   the result is deterministic for a given input and n (independent of the thread count)
///   even for a combine that is not exact; and equal to any other order (the GPU version's,
///   say) only if combine is exact (integer sums, min, max, counts; not floating sums).
/// - Empty x: returns identity.
/// - Blocking. Errors (tally::error): errc::invalid_argument (n < 0, x's bytes past the end of
///   the address space, or, for the GPU version, x not aligned to alignof(T)), errc::null_pointer
///   (null data with n > 0), errc::wrong_memory (device memory). Exceptions thrown by the
///   functors propagate (with OpenMP: after the loop, the one thrown in the lowest-numbered
///   chunk, i.e. the one a serial loop would meet first, whatever the threads' timing).
/// - Threads: OpenMP's (when compiled with it); one in the child of a fork()
///   (detail::cpu_threads_allowed).
template <class T, class Acc, class Transform, class Combine>
Acc transform_reduce(view<const T> x, Acc identity, Transform transform, Combine combine) {
  static_assert(std::is_trivially_copyable_v<Acc>, "tally::transform_reduce: Acc must be trivially copyable");
  detail::check_transform_input(x, "transform_reduce", false);
  const std::int64_t n = x.size;
  if (n == 0) return identity;
  const std::int64_t chunks = (n + detail::kTransformChunk - 1) / detail::kTransformChunk;
  std::vector<Acc> part(static_cast<std::size_t>(chunks), identity);
  const T* p = x.data;
  auto fold = [&](std::int64_t c) {
    Acc a = identity;
    const std::int64_t end = std::min(n, (c + 1) * detail::kTransformChunk);
    for (std::int64_t i = c * detail::kTransformChunk; i < end; ++i) a = combine(a, transform(p[i]));
    part[static_cast<std::size_t>(c)] = a;
  };
#if defined(_OPENMP)
  std::exception_ptr failure;
  std::int64_t failed_chunk = chunks;  // (the lowest chunk that threw: the one a serial loop meets first)
#pragma omp parallel for schedule(static) if (chunks > 1 && detail::cpu_threads_allowed())
  for (std::int64_t c = 0; c < chunks; ++c) {
    try {
      fold(c);
    } catch (...) {
#pragma omp critical(tally_transform_reduce_error)
      if (c < failed_chunk) {
        failed_chunk = c;
        failure = std::current_exception();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
#else
  for (std::int64_t c = 0; c < chunks; ++c) fold(c);
#endif
  Acc total = identity;
  for (const Acc& a : part) total = combine(total, a);
  return total;
}

}  // namespace tally
