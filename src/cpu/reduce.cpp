// CPU backend: OpenMP threads over fixed-size chunks, vectorisable lanes inside each chunk.
//
// The input is cut into chunks of kChunk elements whatever the thread count; each chunk is
// folded into kLanes independent accumulators (lane j takes elements j, j+kLanes, ...), which
// the compiler turns into SIMD; the lanes and then the chunk partials are merged with the
// reducer's `combine` in a fixed pairwise order. So the result depends on the input alone,
// never on the number of threads.
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends.hpp"
#include "cpu/exact.hpp"
#include "cpu/reduce.hpp"
#include "cpu/small.hpp"
#include "tally/ops/exact.hpp"
#include "tally/ops/moments.hpp"
#include "tally/ops/reducers.hpp"
#include "tally/ops/small.hpp"
#include "tally/threads.hpp"

namespace tally::cpu {
namespace {

constexpr std::int64_t kChunk = 1 << 15;  // elements per chunk (a multiple of kLanes)
constexpr int kLanes = 8;
constexpr std::int64_t kParallelMin = 1 << 16;  // below this, one thread

constexpr std::int64_t kBlock = 1024;  // elements folded by the lanes before a tree merge

// Folds x[0, n) (n <= kBlock; and y for dot) into one accumulator with kLanes independent
// lanes (each a serial run of at most kBlock / kLanes = 128 additions), merged pairwise.
template <class R, class T, bool Dot>
typename R::acc_t fold_block(const T* __restrict x, const T* __restrict y, std::int64_t n) {
  using acc_t = typename R::acc_t;
  acc_t lane[kLanes];
  for (int j = 0; j < kLanes; ++j) lane[j] = R::identity();
  std::int64_t body = n - n % kLanes;
  for (std::int64_t i = 0; i < body; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      if constexpr (Dot) R::accumulate(lane[j], x[i + j], y[i + j]);
      else R::accumulate(lane[j], x[i + j]);
    }
  }
  for (std::int64_t i = body; i < n; ++i) {
    if constexpr (Dot) R::accumulate(lane[i - body], x[i], y[i]);
    else R::accumulate(lane[i - body], x[i]);
  }
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] = R::combine(lane[j], lane[j + w]);
  return lane[0];
}

// Folds a chunk x[0, n) (n <= kChunk): blocks of kBlock by fold_block, then a pairwise tree
// over the (at most 32) block results. Longest serial run: 128 additions, then
// log2(kChunk / kLanes) levels of tree; that is what the documented error bound counts.
template <class R, class T, bool Dot>
typename R::acc_t fold(const T* __restrict x, const T* __restrict y, std::int64_t n) {
  using acc_t = typename R::acc_t;
  constexpr int kMaxBlocks = static_cast<int>(kChunk / kBlock);
  acc_t part[kMaxBlocks];
  int blocks = 0;
  for (std::int64_t b = 0; b < n; b += kBlock)
    part[blocks++] = fold_block<R, T, Dot>(x + b, Dot ? y + b : nullptr, std::min(kBlock, n - b));
  for (int w = 1; w < blocks; w *= 2)
    for (int i = 0; i + w < blocks; i += 2 * w) part[i] = R::combine(part[i], part[i + w]);
  return blocks ? part[0] : R::identity();
}

// int64 sum, vectorisable: split each element into a signed high and an unsigned low 32-bit
// half; within a chunk (2^15 elements) both half-sums fit in int64 exactly.
template <>
ops::i128 fold<ops::sum_reducer<std::int64_t>, std::int64_t, false>(const std::int64_t* __restrict x,
                                                                     const std::int64_t* __restrict,
                                                                     std::int64_t n) {
  std::int64_t hi[kLanes] = {}, lo[kLanes] = {};
  std::int64_t body = n - n % kLanes;
  for (std::int64_t i = 0; i < body; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      hi[j] += x[i + j] >> 32;
      lo[j] += static_cast<std::int64_t>(static_cast<std::uint64_t>(x[i + j]) & 0xffffffffu);
    }
  for (std::int64_t i = body; i < n; ++i) {
    hi[0] += x[i] >> 32;
    lo[0] += static_cast<std::int64_t>(static_cast<std::uint64_t>(x[i]) & 0xffffffffu);
  }
  ops::i128 h = 0, l = 0;
  for (int j = 0; j < kLanes; ++j) { h += hi[j]; l += lo[j]; }
  return h * (ops::i128(1) << 32) + l;
}

// int32 sum, vectorisable: int64 lanes cannot overflow within a chunk.
template <>
ops::i128 fold<ops::sum_reducer<std::int32_t>, std::int32_t, false>(const std::int32_t* __restrict x,
                                                                     const std::int32_t* __restrict,
                                                                     std::int64_t n) {
  std::int64_t lane[kLanes] = {};
  std::int64_t body = n - n % kLanes;
  for (std::int64_t i = 0; i < body; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] += x[i + j];
  for (std::int64_t i = body; i < n; ++i) lane[0] += x[i];
  ops::i128 s = 0;
  for (int j = 0; j < kLanes; ++j) s += lane[j];
  return s;
}

// The combined accumulator of x[0, n) (n > 0): chunk folds, merged pairwise in a fixed order.
template <class R, class T, bool Dot>
typename R::acc_t total_of(const T* x, const T* y, std::int64_t n) {
  using acc_t = typename R::acc_t;
  acc_t total;
  std::int64_t chunks = (n + kChunk - 1) / kChunk;
  if (n < kParallelMin) {
    // Same chunking as the parallel path, so results do not jump at kParallelMin.
    total = R::identity();
    acc_t parts[2] = {R::identity(), R::identity()};
    for (std::int64_t c = 0; c < chunks; ++c) {
      std::int64_t b = c * kChunk, len = std::min(kChunk, n - b);
      parts[c] = fold<R, T, Dot>(x + b, Dot ? y + b : nullptr, len);
    }
    total = R::combine(parts[0], parts[1]);
  } else {
    std::vector<acc_t> part(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static) if (::tally::detail::cpu_threads_allowed())
    for (std::int64_t c = 0; c < chunks; ++c) {
      std::int64_t b = c * kChunk, len = std::min(kChunk, n - b);
      part[static_cast<std::size_t>(c)] = fold<R, T, Dot>(x + b, Dot ? y + b : nullptr, len);
    }
    // Pairwise merge of the chunk partials in a fixed order.
    for (std::int64_t w = 1; w < chunks; w *= 2) {
#pragma omp parallel for schedule(static) if ((chunks / (2 * w) > 4096) && ::tally::detail::cpu_threads_allowed())
      for (std::int64_t i = 0; i < chunks - w; i += 2 * w)
        part[static_cast<std::size_t>(i)] =
            R::combine(part[static_cast<std::size_t>(i)], part[static_cast<std::size_t>(i + w)]);
    }
    total = part[0];
  }
  return total;
}

template <class R, class T, bool Dot>
void reduce_t(const void* xv, const void* yv, std::int64_t n, void* result, int& status) {
  const T* x = static_cast<const T*>(xv);
  const T* y = static_cast<const T*>(yv);
  if (n == 0) {  // the sum of nothing is +0 (not the -0.0 identity)
    auto zero = typename R::result_t{};
    std::memcpy(result, &zero, sizeof zero);
    return;
  }
  auto r = R::finalize(total_of<R, T, Dot>(x, y, n), status);
  std::memcpy(result, &r, sizeof r);
}

// Mean of integers: the exact 128-bit sum divided by n, correctly rounded (ops::exact).
// (Unsigned sums are below n * 2^64 < 2^127, so they fit the signed 128-bit value.)
template <class T, class Out> void int_mean(const void* xv, std::int64_t n, void* result) {
  using S = ops::storage_t<T>;
  ops::i128 s = static_cast<ops::i128>(total_of<ops::sum_reducer<T>, S, false>(static_cast<const S*>(xv), nullptr, n));
  Out r = ops::exact::divide_round_int<Out>(s, static_cast<std::uint64_t>(n));
  std::memcpy(result, &r, sizeof r);
}

// out = x + y (ops::add_checked: every element type); first_bad = the smallest index whose
// exact integer sum did not fit T (written wrapped), -1 if none.
template <class T> void add_t(const void* xv, const void* yv, void* ov, std::int64_t n, std::int64_t& first_bad) {
  const T* x = static_cast<const T*>(xv);
  const T* y = static_cast<const T*>(yv);
  T* out = static_cast<T*>(ov);  // may alias x or y exactly: element i reads x[i], y[i] first
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
#pragma omp parallel for schedule(static) reduction(min : first) if ((n >= kParallelMin) && ::tally::detail::cpu_threads_allowed())
  for (std::int64_t i = 0; i < n; ++i) {
    int s = 0;
    out[i] = ops::add_checked(x[i], y[i], s);
    if (s && i < first) first = i;
  }
  first_bad = first == std::numeric_limits<std::int64_t>::max() ? -1 : first;
}

}  // namespace

void reduce(reduce_op op, dtype t, dtype out, accuracy acc, const void* x, const void* y,
            std::int64_t n, void* result, int& status) {
  status = 0;
  bool dot = op == reduce_op::dot;
  if (is_floating(t) && acc == accuracy::exact) {
    if (t == dtype::float16 && !dot) return f16_exact(x, n, out, false, result);  // fixed point
    return reduce_exact(op, t, out, x, y, n, result);
  }
  tally::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_element_v<T>) {
      // Fast mode: float64 accumulators; the 16-bit floats are read as their exact float32
      // values (ops::storage_t) by the float32 reducers.
      using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
      using S = ops::storage_t<T>;
      if (out == dtype::float64)
        dot ? reduce_t<ops::with_result<ops::dot_reducer<F>, double>, S, true>(x, y, n, result, status)
            : reduce_t<ops::with_result<ops::sum_reducer<F>, double>, S, false>(x, y, n, result, status);
      else
        dot ? reduce_t<ops::with_result<ops::dot_reducer<F>, float>, S, true>(x, y, n, result, status)
            : reduce_t<ops::with_result<ops::sum_reducer<F>, float>, S, false>(x, y, n, result, status);
    } else {
      using S = ops::storage_t<T>;  // (bool: its byte, any nonzero value true)
      dot ? reduce_t<ops::dot_reducer<T>, S, true>(x, y, n, result, status)
          : reduce_t<ops::sum_reducer<T>, S, false>(x, y, n, result, status);
    }
  });
}

void abs_sum_fast(dtype t, dtype out, const void* x, std::int64_t n, void* result) {
  int status = 0;  // (never set: floating)
  auto run = [&]<class T>() {
    if (out == dtype::float64) reduce_t<ops::abs_sum_reducer<T, double>, T, false>(x, nullptr, n, result, status);
    else reduce_t<ops::abs_sum_reducer<T, float>, T, false>(x, nullptr, n, result, status);
  };
  if (t == dtype::float32) run.template operator()<float>();
  else run.template operator()<double>();
}

void mean(dtype t, dtype out, const void* x, std::int64_t n, void* result) {
  if (t == dtype::float16) return f16_exact(x, n, out, true, result);
  if (is_floating(t)) return mean_exact(t, out, x, n, result);
  tally::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_floating_element_v<T>) {
      if (out == dtype::float32) int_mean<T, float>(x, n, result);
      else int_mean<T, double>(x, n, result);
    }
  });
}

void norm2(dtype t, dtype out, const void* x, std::int64_t n, void* result) { norm2_exact(t, out, x, n, result); }

void add(dtype t, const void* x, const void* y, void* out, std::int64_t n, std::int64_t& first_bad) {
  first_bad = -1;
  tally::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    add_t<std::conditional_t<std::is_same_v<T, bool>, ops::bool_in, T>>(x, y, out, n, first_bad);  // (bool: its bytes)
  });
}

}  // namespace tally::cpu
