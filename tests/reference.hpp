// Floating references: the documented accuracy bound of tally::sum / tally::dot checked
// against a higher-precision value of the exact result.
//
// With MPFR (TALLY_TEST_HAVE_MPFR) the exact sum is computed exactly (an MPFR accumulator
// sized to the exponent range of the terms; products exact in 128 bits), and the error and
// the bound are evaluated exactly / rounded up. Without MPFR the reference is a Neumaier
// (compensated) sum in long double of the terms, dot products split exactly into p + e with
// an fma; its own error (a few ulps of long double, <= 2^-61 * sum|t_i| for the sizes used)
// is added to the bound as an explicit slack.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tally/types.hpp"

namespace tt {

/// The depth the documented bound counts on backend b (tally.hpp, `sum`):
///   L + ceil(log2 n) + 8, with L = 128 (cpu) or ceil(n / (8192 * SMs)) + 64 (cuda).
std::int64_t bound_depth(tally::backend b, std::int64_t n);

/// The documented bound: with S = the exact sum (of x, or of x[i]*y[i] when y is not null),
///   |D - S| <= bound_depth(b, n) * 2^-53 * sum|t_i|
/// for the float64 accumulator D, and result = D (float64) or the float32 rounding of D, so
/// for float32 results half an ulp of float32 at |S| + bound is added. Inputs must be finite.
::testing::AssertionResult within_bound(tally::backend b, double result, bool float32_result,
                                        const double* x, const double* y, std::int64_t n);

/// The same for typed vectors (y empty for sum).
template <class T>
::testing::AssertionResult within_bound(tally::backend b, T result, const std::vector<T>& x,
                                        const std::vector<T>& y = {}) {
  if constexpr (std::is_same_v<T, double>) {
    return within_bound(b, result, false, x.data(), y.empty() ? nullptr : y.data(),
                        static_cast<std::int64_t>(x.size()));
  } else {
    std::vector<double> dx(x.begin(), x.end()), dy(y.begin(), y.end());
    return within_bound(b, static_cast<double>(result), true, dx.data(), dy.empty() ? nullptr : dy.data(),
                        static_cast<std::int64_t>(x.size()));
  }
}

/// Which oracle this build uses ("MPFR exact" or "long double Neumaier").
const char* oracle_name();

}  // namespace tt
