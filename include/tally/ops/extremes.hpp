// tally::ops: min, max and their first index (argmin, argmax), shared by the CPU and CUDA
// backends as small host/device functions (the reducer concept of reducers.hpp, with the
// element's index passed to accumulate).
//
// NaN rule (NumPy's): with nan_policy propagate a NaN anywhere makes the result NaN and the
// index that of the first NaN; with omit NaNs are skipped (nanmin, nanargmax, ...). Ties,
// -0.0 against +0.0 included (they compare equal), go to the first index, at every level of
// every tree: combine keeps the smaller index among equals, so the order of combination never
// matters (combine is associative and commutative).
#pragma once

#include <cstdint>
#include <limits>

#include "tally/ops/reducers.hpp"

namespace tally::ops {

inline constexpr std::int64_t kNoIndex = INT64_MAX;

/// The value and the first index of a minimum or maximum; index kNoIndex when there is none
/// (empty input, or only NaNs skipped).
template <class T> struct extreme_value {
  T value;
  std::int64_t index;
};

template <class T> TALLY_HD bool is_nan(T x) {
  if constexpr (std::numeric_limits<T>::is_integer) return false;
  else return x != x;
}

/// MAX: maximum (else minimum); SKIP_NAN: NaNs are ignored (else they win).
template <class T, bool MAX, bool SKIP_NAN> struct extreme_reducer {
  struct acc_t {
    T value;
    std::int64_t index;      // first index of `value`; kNoIndex before any element
    std::int64_t nan_index;  // first NaN seen; kNoIndex if none (or SKIP_NAN)
  };
  using result_t = extreme_value<T>;
  using value_type = T;
  static constexpr bool is_max = MAX;
  static constexpr bool skip_nan = SKIP_NAN;
  /// The empty result: -inf/+inf for floating types (the identity of max/min), the type's
  /// lowest/highest value for integers.
  static TALLY_HD T empty_value() {
    if constexpr (std::numeric_limits<T>::is_integer)
      return MAX ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    else return MAX ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  }
  static TALLY_HD acc_t identity() { return {empty_value(), kNoIndex, kNoIndex}; }
  // a is better than b: strictly larger (MAX) or smaller, or equal with a smaller index.
  static TALLY_HD bool better(T a, std::int64_t ia, T b, std::int64_t ib) {
    if (MAX ? a > b : a < b) return true;
    return a == b && ia < ib;
  }
  static TALLY_HD void accumulate(acc_t& acc, T x, std::int64_t i) {
    if (is_nan(x)) {
      if (!SKIP_NAN && i < acc.nan_index) acc.nan_index = i;
      return;
    }
    if (better(x, i, acc.value, acc.index)) {
      acc.value = x;
      acc.index = i;
    }
  }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) {
    acc_t r = better(b.value, b.index, a.value, a.index) ? b : a;
    r.nan_index = a.nan_index < b.nan_index ? a.nan_index : b.nan_index;
    return r;
  }
  static TALLY_HD result_t finalize(acc_t a, int& status) {
    status = 0;
    if (a.nan_index != kNoIndex) {
      if constexpr (!std::numeric_limits<T>::is_integer) return {std::numeric_limits<T>::quiet_NaN(), a.nan_index};
    }
    return {a.value, a.index};
  }
};

/// The minimum and the maximum with their first indices.
template <class T> struct minmax_value {
  extreme_value<T> min;
  extreme_value<T> max;
};

/// Minimum and maximum together, in one read (minmax, nanminmax): the two extreme reducers
/// side by side, each with its own rules (a NaN recorded by both when not skipped).
template <class T, bool SKIP_NAN> struct minmax_reducer {
  using min_r = extreme_reducer<T, false, SKIP_NAN>;
  using max_r = extreme_reducer<T, true, SKIP_NAN>;
  struct acc_t {
    typename min_r::acc_t min;
    typename max_r::acc_t max;
  };
  using result_t = minmax_value<T>;
  using value_type = T;
  static constexpr bool skip_nan = SKIP_NAN;
  static TALLY_HD acc_t identity() { return {min_r::identity(), max_r::identity()}; }
  static TALLY_HD void accumulate(acc_t& acc, T x, std::int64_t i) {
    min_r::accumulate(acc.min, x, i);
    max_r::accumulate(acc.max, x, i);
  }
  static TALLY_HD acc_t combine(acc_t a, acc_t b) { return {min_r::combine(a.min, b.min), max_r::combine(a.max, b.max)}; }
  static TALLY_HD result_t finalize(acc_t a, int& status) {
    result_t r{min_r::finalize(a.min, status), {}};
    r.max = max_r::finalize(a.max, status);
    return r;
  }
};

}  // namespace tally::ops
