// The CUDA certified pass's accumulation pattern (src/cuda/certified.cuh), run on the host
// with the same ops::certified functions, for the CPU tests of the certificates.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "tally/ops/certified.hpp"

namespace tt::certified {

enum class kind { sum, dot, square };

/// `threads` threads taking 16-byte vectors of V elements in grid-stride order, each thread's
/// vectors going to its `chains` states (1 or 2: tuning::certified_chains, or
/// certified_moments_chains for the one-pass variance) in turn, then merged pairwise as a
/// tree; K levels. y is read only for kind::dot. Returns the finished interval, with the
/// kernel's absolute term.
template <int K, class T>
tally::ops::certified::interval emulate(const std::vector<T>& x, const std::vector<T>& y, kind k, int threads,
                                        int chains = 2) {
  namespace oc = tally::ops::certified;
  constexpr bool exact_products = std::is_same_v<T, float>;
  constexpr std::int64_t V = 16 / sizeof(T);
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  std::vector<oc::state> per(threads);
  for (int t = 0; t < threads; ++t) {
    oc::state s[2];
    int next = 0;
    for (std::int64_t v = t; v * V < n; v += threads) {
      for (std::int64_t i = v * V; i < std::min(n, v * V + V); ++i) {
        double a = static_cast<double>(x[i]);
        if (k == kind::sum) oc::add<K>(s[next], a);
        else oc::add_product<K, exact_products>(s[next], a, static_cast<double>(k == kind::square ? x[i] : y[i]));
      }
      next = (next + 1) % chains;
    }
    per[t] = oc::merge<K>(s[0], s[1]);
  }
  for (int w = 1; w < threads; w *= 2)
    for (int t = 0; t + w < threads; t += 2 * w) per[t] = oc::merge<K>(per[t], per[t + w]);
  double absolute = (k != kind::sum && !exact_products) ? static_cast<double>(n) * 0x1p-1074 : 0.0;
  return oc::finish(per[0], absolute);
}

}  // namespace tt::certified
