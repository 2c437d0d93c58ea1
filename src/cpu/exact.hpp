// CPU backend, exact mode (see include/tally/ops/exact.hpp).
#pragma once

#include <cstdint>

#include "tally/core.hpp"
#include "tally/ops/certified.hpp"

namespace tally::cpu {
// Floating data: float32, float64, float16 or bfloat16 (the 16-bit floats are converted
// exactly to float32, chunk by chunk, and take the float32 path).
/// Correctly rounded sum / dot of floating data, written as `out` to result.
void reduce_exact(reduce_op op, dtype t, dtype out, const void* x, const void* y, std::int64_t n,
                  void* result);
/// Correctly rounded mean (exact sum / n, n > 0) of floating data, as `out`.
void mean_exact(dtype t, dtype out, const void* x, std::int64_t n, void* result);
/// Correctly rounded L2 norm (square root of the exact sum of squares), n > 0, as `out`.
void norm2_exact(dtype t, dtype out, const void* x, std::int64_t n, void* result);
/// Folds float32 or float64 x[0, n) (contiguous) exactly into the superaccumulator digits d
/// (ops::exact::f32_sum_layout for float32, f64_sum_layout for float64; the caller zeroes them
/// once) and ORs the special-value flags; one thread, no allocation. For the shape layer.
void exact_sum_fold(dtype t, const void* x, std::int64_t n, std::int64_t* d, unsigned& flags);
/// Adds the exact sum (op = sum) or dot product of float32/float64 x[0, n) (and y) to the
/// superaccumulator digits d (layout ops::exact::{f32,f64}_{sum,dot}_layout of (op, t)) and
/// ORs its special-value flags into `flags`, on the calling thread (no OpenMP inside); d is
/// left carry-normalised. For callers that merge their own chunks (norm1, the variance).
void exact_fold(reduce_op op, dtype t, const void* x, const void* y, std::int64_t n, std::int64_t* d,
                unsigned& flags);
/// The certified state (ops::certified, K = 2) of the sum of float32/float64 x[0, n)
/// (contiguous), on the calling thread, vectorised (AVX2 lanes, src/cpu/exact.cpp certify);
/// false, st untouched, where the certified pass does not run (no AVX2 and FMA, or
/// TALLY_CPU_CERTIFIED=0). For the shape layer's long rows and segments (round_state /
/// divide_state, then the superaccumulator where they cannot prove the result).
bool certified_sum_state(dtype t, const void* x, std::int64_t n, ops::certified::state& st);
/// The certified intervals (ops::certified::finish) of sum x and sum x^2 of float32/float64
/// x[0, n), over OpenMP threads, vectorised (two passes of the certified sum and dot); false
/// where the certified pass does not run (no AVX2 and FMA, TALLY_CPU_CERTIFIED=0, other
/// types). For the exact variance (variance_certified, then the exact sums where unproved).
bool certified_moments(dtype t, const void* x, std::int64_t n, ops::certified::interval& s1,
                       ops::certified::interval& s2);
}  // namespace tally::cpu
