// CPU backend: minimum, maximum and their first index (ops/extremes.hpp). OpenMP threads
// over chunks of 2^15 elements. Within a thread, blocks of kBlock elements are scanned for
// their best value alone (compare and select in lanes the compiler vectorises, no index; and
// whether the block holds a NaN); only the block whose best value first beats the thread's is
// kept, and at the end that one block is scanned again for the first index holding the value.
// A block holding a NaN is folded element by element by the reducer (the NaN rule). The
// reducer's combine keeps the first index among equals, so neither the blocks, the lanes nor
// the thread count can change the answer.
#include <omp.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backends.hpp"
#include "cpu/isa.hpp"
#include "tally/ops/extremes.hpp"
#include "tally/ops/small.hpp"
#include "tally/threads.hpp"

namespace tally::cpu {
namespace {

constexpr std::int64_t kChunk = 1 << 15;
constexpr std::int64_t kParallelMin = 1 << 16;
constexpr int kLanes = 8;
constexpr std::int64_t kBlock = 2048;  // elements a block is scanned by value

template <class R, class T> typename R::acc_t fold(const T* __restrict x, std::int64_t begin, std::int64_t end) {
  typename R::acc_t lane[kLanes];
  for (auto& l : lane) l = R::identity();
  std::int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes)
    for (int j = 0; j < kLanes; ++j) R::accumulate(lane[j], x[i + j], i + j);
  for (; i < end; ++i) R::accumulate(lane[0], x[i], i);
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] = R::combine(lane[j], lane[j + w]);
  return lane[0];
}

// The best value of x[begin, end), or a NaN when the block holds one: four VB-byte GCC /
// Clang vectors a step (compare, compare, select), built for SSE2 and AVX2 below and chosen at
// run time. x > m is false for a NaN, which enters m by the second test and then
// stays, since nothing compares greater than it.
template <int VB, class R, class T>
[[gnu::always_inline]] inline T block_best_v(const T* __restrict x, std::int64_t begin, std::int64_t end) {
  constexpr int L = VB / sizeof(T), K = 4;
  typedef T vec __attribute__((vector_size(VB)));
  auto pick = [](T v, T m) { return ((R::is_max ? v > m : v < m) || ops::is_nan(v)) ? v : m; };
  T r = x[begin];
  std::int64_t i = begin;
  if (end - begin >= K * L) {
    vec m[K];
    std::memcpy(m, x + begin, sizeof m);  // (the block's first elements: candidates themselves)
    for (i = begin + K * L; i + K * L <= end; i += K * L)
      for (int k = 0; k < K; ++k) {
        vec v;
        std::memcpy(&v, x + i + k * L, sizeof v);
        if constexpr (std::numeric_limits<T>::is_integer) m[k] = (R::is_max ? v > m[k] : v < m[k]) ? v : m[k];
        else m[k] = ((R::is_max ? v > m[k] : v < m[k]) | (v != v)) ? v : m[k];
      }
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < L; ++j) r = ops::is_nan(r) ? r : pick(m[k][j], r);
  }
  for (; i < end; ++i) r = ops::is_nan(r) ? r : pick(x[i], r);
  return r;
}
template <class R, class T> [[gnu::target("avx2")]] T block_best_avx2(const T* x, std::int64_t b, std::int64_t e) {
  return block_best_v<32, R>(x, b, e);
}
template <class R, class T> T block_best(const T* x, std::int64_t b, std::int64_t e) {
  // (No AVX-512 form: GCC 12 breaks 64-byte vector comparisons into scalars, 5x slower.)
  return cpu_has_avx2() ? block_best_avx2<R>(x, b, e) : block_best_v<16, R>(x, b, e);
}

// One thread's elements [begin, end): blocks by value first (see the top of the file).
template <class R, class T> typename R::acc_t fold_range(const T* __restrict x, std::int64_t begin, std::int64_t end) {
  using acc = typename R::acc_t;
  acc mine = R::identity();
  T best{};
  std::int64_t best_block = -1;
  for (std::int64_t b = begin; b < end; b += kBlock) {
    const std::int64_t e = std::min(end, b + kBlock);
    const T v = block_best<R>(x, b, e);
    if (ops::is_nan(v)) {
      mine = R::combine(mine, fold<R, T>(x, b, e));
      if (!R::skip_nan) break;  // a NaN: later elements cannot change the result (its first NaN wins)
      continue;
    }
    if (best_block < 0 || (R::is_max ? v > best : v < best)) {
      best = v;
      best_block = b;
    }
  }
  if (best_block >= 0) {
    std::int64_t i = best_block;
    while (!(x[i] == best)) ++i;  // (the block holds best, and no NaN)
    acc a = R::identity();
    R::accumulate(a, x[i], i);
    mine = R::combine(mine, a);
  }
  return mine;
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
      if constexpr (!by_blocks) mine = R::combine(mine, fold<R, T>(x, c * kChunk, std::min(n, (c + 1) * kChunk)));
    }
    if constexpr (by_blocks)
      if (first >= 0) mine = fold_range<R, T>(x, first * kChunk, std::min(n, (last + 1) * kChunk));
#pragma omp critical(tally_extreme_merge)
    total = R::combine(total, mine);
  }
  int status = 0;
  auto r = R::finalize(total, status);
  if constexpr (ops::is_half_v<T>) {  // the float32 value of a 16-bit float (or +-inf, NaN): exact back
    std::uint16_t b = std::is_same_v<T, ops::half_in> ? to_float16(r.value).bits : to_bfloat16(r.value).bits;
    std::memcpy(value, &b, sizeof b);
  } else {
    std::memcpy(value, &r.value, sizeof(T));
  }
  index = r.index;
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

}  // namespace tally::cpu
