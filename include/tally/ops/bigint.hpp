// tally::ops::big: small unsigned big integers (32-bit limbs, least significant first) for the
// exact variance: products, differences and divisions of superaccumulator values. Host code.
// Algorithms: the classical ones of Knuth, "The Art of Computer Programming", vol. 2,
// 3rd ed., section 4.3.1 (A: addition, S: subtraction, M: multiplication; division by a
// single word, exercise 16, with a 64-bit divisor over 32-bit limbs in 128-bit arithmetic).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tally/ops/reducers.hpp"

namespace tally::ops::big {

/// A nonnegative integer sum(limb[i] * 2^(32 i)); no leading zero limbs once trimmed.
struct nat {
  std::vector<std::uint32_t> limb;

  void trim() {
    while (!limb.empty() && limb.back() == 0) limb.pop_back();
  }
  bool zero() const {
    return std::all_of(limb.begin(), limb.end(), [](std::uint32_t v) { return v == 0; });
  }
  /// Number of significant bits (0 for zero).
  int bits() const {
    for (int i = static_cast<int>(limb.size()) - 1; i >= 0; --i)
      if (limb[i]) return 32 * i + 32 - __builtin_clz(limb[i]);
    return 0;
  }
};

/// |value| of D signed 64-bit digits (digit i weighing 2^(32 i)), carry-normalised first;
/// `neg` receives the sign. The digits are not modified.
inline nat from_digits(const std::int64_t* d, int D, bool& neg) {
  std::vector<std::int64_t> v(d, d + D);
  std::int64_t c = 0;
  for (int i = 0; i + 1 < D; ++i) {  // digits 0..D-2 into [0, 2^32), the top one signed
    std::int64_t t = v[i] + c;
    c = t >> 32;
    v[i] = t - c * (std::int64_t(1) << 32);
  }
  if (D > 0) v[D - 1] += c;
  neg = D > 0 && v[D - 1] < 0;
  nat r;
  r.limb.resize(static_cast<std::size_t>(D) + 2, 0);
  // Two's complement magnitude: negate limb by limb with a borrow (top digit sign-extended).
  std::int64_t borrow = 0;
  for (int i = 0; i < D; ++i) {
    std::int64_t t = neg ? -v[i] - borrow : v[i];
    borrow = 0;
    if (i + 1 < D && t < 0) { t += std::int64_t(1) << 32; borrow = 1; }
    // the top digit may exceed 32 bits: spread it over the two extra limbs
    if (i + 1 < D) {
      r.limb[i] = static_cast<std::uint32_t>(t);
    } else {
      auto u = static_cast<std::uint64_t>(t);
      r.limb[i] = static_cast<std::uint32_t>(u);
      r.limb[i + 1] = static_cast<std::uint32_t>(u >> 32);
    }
  }
  r.trim();
  return r;
}

/// a * b (Algorithm M).
inline nat mul(const nat& a, const nat& b) {
  nat r;
  r.limb.assign(a.limb.size() + b.limb.size() + 1, 0);
  for (std::size_t j = 0; j < b.limb.size(); ++j) {
    std::uint64_t k = 0;
    if (b.limb[j] == 0) continue;
    for (std::size_t i = 0; i < a.limb.size(); ++i) {
      std::uint64_t t = static_cast<std::uint64_t>(a.limb[i]) * b.limb[j] + r.limb[i + j] + k;
      r.limb[i + j] = static_cast<std::uint32_t>(t);
      k = t >> 32;
    }
    for (std::size_t i = a.limb.size() + j; k; ++i) {
      std::uint64_t t = static_cast<std::uint64_t>(r.limb[i]) + k;
      r.limb[i] = static_cast<std::uint32_t>(t);
      k = t >> 32;
    }
  }
  r.trim();
  return r;
}

/// a * m for a 64-bit m (two single-limb passes of Algorithm M).
inline nat mul(const nat& a, std::uint64_t m) {
  nat b;
  b.limb = {static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(m >> 32)};
  return mul(a, b);
}

/// a * 2^(32 k): k zero limbs below.
inline nat shift_limbs(const nat& a, int k) {
  nat r;
  r.limb.assign(static_cast<std::size_t>(k), 0);
  r.limb.insert(r.limb.end(), a.limb.begin(), a.limb.end());
  return r;
}

/// a < b.
inline bool less(const nat& a, const nat& b) {
  std::size_t n = std::max(a.limb.size(), b.limb.size());
  for (std::size_t i = n; i-- > 0;) {
    std::uint32_t x = i < a.limb.size() ? a.limb[i] : 0, y = i < b.limb.size() ? b.limb[i] : 0;
    if (x != y) return x < y;
  }
  return false;
}

/// a - b for a >= b (Algorithm S).
inline nat sub(const nat& a, const nat& b) {
  nat r;
  r.limb.assign(a.limb.size(), 0);
  std::int64_t borrow = 0;
  for (std::size_t i = 0; i < a.limb.size(); ++i) {
    std::int64_t t = static_cast<std::int64_t>(a.limb[i]) - (i < b.limb.size() ? b.limb[i] : 0) - borrow;
    borrow = t < 0;
    r.limb[i] = static_cast<std::uint32_t>(t + (borrow ? (std::int64_t(1) << 32) : 0));
  }
  r.trim();
  return r;
}

/// a / d for a 64-bit d > 0, in place; returns the remainder (short division, most
/// significant limb first: each partial remainder is below d, so each step fits 96 bits).
inline std::uint64_t divide(nat& a, std::uint64_t d) {
  u128 rem = 0;
  for (std::size_t i = a.limb.size(); i-- > 0;) {
    u128 cur = (rem << 32) | a.limb[i];
    a.limb[i] = static_cast<std::uint32_t>(cur / d);
    rem = cur % d;
  }
  a.trim();
  return static_cast<std::uint64_t>(rem);
}

}  // namespace tally::ops::big
