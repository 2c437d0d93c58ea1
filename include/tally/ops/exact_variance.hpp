// tally::ops::exact: the correctly rounded variance and standard deviation from the exact sums
// S1 = sum x and S2 = sum x^2 (host code, shared by every backend that has those sums as
// superaccumulator digits or integers).
//
//   var = (n S2 - S1^2) / (n (n - ddof))
//
// With S1 = I1 2^B1 and S2 = I2 2^B2 (B2 >= 2 B1, B2 - 2 B1 a multiple of 32), the numerator
// is the integer N = n I2 2^(B2 - 2 B1) - I1^2 times 2^(2 B1), computed exactly (big integers,
// ops/bigint.hpp; N >= 0 by Cauchy-Schwarz). N is scaled by 2^s so that the quotient has at
// least 200 bits, divided by n and then by n - ddof (floor(floor(a / b) / c) = floor(a / bc),
// and the division is exact iff both remainders are 0), and the remainders become a sticky
// digit below the quotient. One rounding of that (round_span) is the correctly rounded
// variance; sqrt_round of it the correctly rounded standard deviation: at 200+ bits the
// square root's 114-117-bit window lies above the sticky digit, so the floor of the scaled
// true value and the quotient-plus-sticky give the same window and the same sticky bit.
#pragma once

#include <cstdint>
#include <vector>

#include "tally/ops/bigint.hpp"
#include "tally/ops/exact.hpp"

namespace tally::ops::exact {

/// The correctly rounded variance (or, with take_sqrt, standard deviation) as Out from the
/// magnitudes |S1| = I1 2^B1 and S2 = I2 2^B2, n > 0 elements and divisor m2 = n - ddof > 0.
template <class Out>
Out variance_round(const big::nat& I1, int B1, const big::nat& I2, int B2, std::uint64_t n, std::uint64_t m2,
                   bool take_sqrt) {
  const int shift = B2 - 2 * B1;  // a multiple of 32, >= 0
  big::nat a = big::shift_limbs(big::mul(I2, n), shift / 32);
  big::nat b = big::mul(I1, I1);
  if (big::less(a, b)) {  // cannot happen (Cauchy-Schwarz); never return a wrong number
    std::int64_t none = 0;
    return round_span<Out>(&none, 0, 0, seen_nan);
  }
  big::nat num = big::sub(a, b);
  if (num.zero()) {  // every element equal: +0
    std::int64_t zero = 0;
    return round_span<Out>(&zero, 1, 0, seen_not_neg_zero);
  }
  // Quotient of at least 200 bits: num has bits() bits, n (n - ddof) < 2^128.
  int want = 200 + 128 - num.bits();
  int s = want > 0 ? (want + 31) / 32 : 0;  // in limbs
  num = big::shift_limbs(num, s);
  std::uint64_t r1 = big::divide(num, n);
  std::uint64_t r2 = big::divide(num, m2);
  // Digits: a sticky digit, the quotient's limbs, a zero top digit (room for round_span).
  std::vector<std::int64_t> d(num.limb.size() + 2, 0);
  d[0] = (r1 != 0 || r2 != 0) ? 1 : 0;
  for (std::size_t i = 0; i < num.limb.size(); ++i) d[i + 1] = num.limb[i];
  const int base = 2 * B1 - 32 * s - 32;  // even
  const int D = static_cast<int>(d.size());
  return take_sqrt ? sqrt_round<Out>(d.data(), D, base, seen_not_neg_zero)
                   : round_span<Out>(d.data(), D, base, seen_not_neg_zero);
}

}  // namespace tally::ops::exact
