// The common digit grid of tally::exact_state (include/tally/state.hpp), for the host and the
// device: moves a superaccumulator of any layout (digit i weighing 2^(32 i + base)) onto it.
#pragma once

#include <cstdint>

#include "tally/ops/exact.hpp"

namespace tally::state_grid {

inline constexpr int kDigits = 139;   // exact_state::digits
inline constexpr int kBase = -2176;   // exact_state::digit_base (= ops::exact::f64_dot_layout)
inline constexpr int kTerms = 139;    // exact_state::terms_word
inline constexpr int kNan = 140, kPosInf = 141, kNegInf = 142, kNotNegZero = 143;
inline constexpr int kSize = 144;     // exact_state::size

static_assert(kBase == ops::exact::f64_dot_layout::base && kDigits == ops::exact::f64_dot_layout::digits,
              "the common grid is the widest layout");

/// Carry-normalises the digits of the words w and clamps the counters to 0 or 1.
TALLY_HD void canonicalize(std::int64_t* w) {
  ops::exact::normalize(w, kDigits);
  for (int k = kNan; k < kSize; ++k) w[k] = w[k] != 0;
}

/// Adds `count` digits d (digit i weighing 2^(32 i + base)) holding the exact value of `n`
/// terms with special-value `flags` (ops::exact::flag) to the words w, then canonicalises.
/// Returns false (w untouched) when the digits do not lie on the grid.
TALLY_HD bool place(const std::int64_t* d, int count, int base, unsigned flags, std::int64_t n, std::int64_t* w) {
  int off = base - kBase;
  if (count < 0 || off < 0 || off % 32 != 0 || off / 32 + count > kDigits) return false;
  off /= 32;
  for (int i = 0; i < count; ++i) w[off + i] += d[i];
  w[kTerms] += n;
  w[kNan] += (flags & ops::exact::seen_nan) != 0;
  w[kPosInf] += (flags & ops::exact::seen_pos_inf) != 0;
  w[kNegInf] += (flags & ops::exact::seen_neg_inf) != 0;
  w[kNotNegZero] += (flags & ops::exact::seen_not_neg_zero) != 0;
  canonicalize(w);
  return true;
}

/// The ops::exact flags of the words' counters.
TALLY_HD unsigned flags_of(const std::int64_t* w) {
  return (w[kNan] ? ops::exact::seen_nan : 0u) | (w[kPosInf] ? ops::exact::seen_pos_inf : 0u) |
         (w[kNegInf] ? ops::exact::seen_neg_inf : 0u) | (w[kNotNegZero] ? ops::exact::seen_not_neg_zero : 0u);
}

}  // namespace tally::state_grid
