// CPU backend: exact float16 sums and means in fixed point. Every float16 is a count of
// 2^-24 below 2^40 (ops::f16_units); a chunk of 2^15 of them sums exactly in eight int64
// lanes, the chunks in 128 bits; the total is rounded once (or divided by n and rounded once).
// Integer addition is associative, so the thread count cannot change a bit of the result.
#include "cpu/small.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "tally/ops/exact.hpp"
#include "tally/ops/small.hpp"
#include "tally/threads.hpp"

namespace tally::cpu {
namespace {

constexpr std::int64_t kChunk = 1 << 15;
constexpr std::int64_t kParallelMin = 1 << 16;
constexpr int kLanes = 8;

ops::f16_fixed fold(const std::uint16_t* x, std::int64_t n) {
  std::int64_t lane[kLanes] = {};
  unsigned flags[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] += ops::f16_units(x[i + j], flags[j]);
  for (; i < n; ++i) lane[0] += ops::f16_units(x[i], flags[0]);
  ops::f16_fixed r{0, 0u};
  for (int j = 0; j < kLanes; ++j) {
    r.units += lane[j];
    r.flags |= flags[j];
  }
  return r;
}

template <class Out> Out finish(ops::f16_fixed s, bool mean, std::int64_t n) {
  if (!mean) return ops::f16_round<Out>(s);
  std::int64_t d[5];
  ops::digits_of(s.units, d);
  return ops::exact::divide_round<Out>(d, 5, ops::f16_unit_exp, s.flags, static_cast<std::uint64_t>(n));
}

}  // namespace

void f16_exact(const void* xv, std::int64_t n, dtype out, bool mean, void* result) {
  const auto* x = static_cast<const std::uint16_t*>(xv);
  ops::f16_fixed total{0, 0u};
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel if ((n >= kParallelMin) && ::tally::detail::cpu_threads_allowed())
  {
    ops::f16_fixed mine{0, 0u};
#pragma omp for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
      ops::f16_fixed p = fold(x + c * kChunk, std::min(kChunk, n - c * kChunk));
      mine.units += p.units;
      mine.flags |= p.flags;
    }
#pragma omp critical(tally_f16_merge)
    {
      total.units += mine.units;
      total.flags |= mine.flags;
    }
  }
  if (n == 0) total.flags = ops::exact::seen_not_neg_zero;  // the sum of nothing is +0
  if (out == dtype::float32) {
    float r = finish<float>(total, mean, n);
    std::memcpy(result, &r, sizeof r);
  } else {
    double r = finish<double>(total, mean, n);
    std::memcpy(result, &r, sizeof r);
  }
}

}  // namespace tally::cpu
