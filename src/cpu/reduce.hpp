// CPU backend: the fast-mode float64 trees of cpu/reduce.cpp (eight lanes over blocks of 1024
// elements, pairwise trees above them: the structure behind the error bound tally::sum
// documents, L = 128) for callers outside that file.
#pragma once

#include <cstdint>

#include "tally/core.hpp"

namespace tally::cpu {
/// The fast-mode L1 norm sum |x[i]| of float32 or float64 x[0, n), n >= 0, as `out` (float32
/// or float64): the fast sum's tree over the |x[i]|, so the same error bound (+0 for n = 0).
void abs_sum_fast(dtype t, dtype out, const void* x, std::int64_t n, void* result);
}  // namespace tally::cpu
