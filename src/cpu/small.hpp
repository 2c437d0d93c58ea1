// CPU backend: exact float16 sums and means in fixed point (include/tally/ops/small.hpp).
#pragma once

#include <cstdint>

#include "tally/core.hpp"

namespace tally::cpu {
/// The exact sum of the float16 elements x[0, n), n >= 0, rounded once to `out` (float32 or
/// float64), or, when `mean` is set (n > 0), the exact sum divided by n, rounded once.
void f16_exact(const void* x, std::int64_t n, dtype out, bool mean, void* result);
}  // namespace tally::cpu
