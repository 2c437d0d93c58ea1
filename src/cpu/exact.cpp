// CPU backend, exact mode: OpenMP threads over chunks; in each chunk four interleaved
// two-term expansions (TwoSum) with rare flushes into the thread's superaccumulator; the
// threads' superaccumulators merge by integer addition (exact, so any order gives the same
// bits), and the total is rounded once.
#include "cpu/exact.hpp"

#include <omp.h>

#include <cstring>
#include <type_traits>

#include "tally/ops/exact.hpp"

namespace tally::cpu {
namespace {

namespace ex = ops::exact;

constexpr std::int64_t kChunk = 1 << 15;
constexpr std::int64_t kParallelMin = 1 << 16;
constexpr int kTile = 16;
constexpr int kWays = 4;  // interleaved expansions (independent dependency chains)

// Folds x[0, n) (and y) into digits d and flags, exactly.
template <class L, class T, bool Dot>
void fold(const T* x, const T* y, std::int64_t n, std::int64_t* d, unsigned& flags) {
  ex::expansion f[kWays];
  auto dep = [d](int i, std::int64_t v) { d[i] += v; };
  auto flush = [&](double v) { ex::deposit<L>(v, dep); };
  auto dprod = [&](double a, double b) { ex::deposit_product<L>(a, b, dep); };
  auto term = [&](ex::expansion& g, std::int64_t i) {
    if constexpr (Dot) {
      if constexpr (std::is_same_v<T, float>) ex::add_product(g, x[i], y[i], flush);
      else ex::add_product(g, x[i], y[i], flush, dprod);
    } else {
      ex::add_term(g, x[i], flush);
    }
  };
  // Four expansions take consecutive tiles in turn (independent dependency chains); the
  // loop over them is unrolled so that each stays in registers.
  std::int64_t i = 0;
  for (; i + kWays * kTile <= n; i += kWays * kTile) {
    TALLY_UNROLL
    for (int w = 0; w < kWays; ++w) {
      ex::expansion& g = f[w];
      const std::int64_t b = i + w * kTile;
      bool done = false;
      if constexpr (!Dot && std::is_same_v<T, float>) {
        double t;
        if (ex::tile_exact_f32<kTile>(x + b, t, g.flags)) {
          ex::add(g, t, flush);
          done = true;
        }
      }
      if (!done)
        for (int k = 0; k < kTile; ++k) term(g, b + k);
      if constexpr (std::is_same_v<T, double>) {
        if (ex::too_big(g.a[0])) {  // keep |a0| < 2^1011: no TwoSum can overflow
          flush(g.a[0]);
          g.a[0] = 0.0;
        }
      }
    }
  }
  for (; i < n; ++i) {
    term(f[0], i);
    if constexpr (std::is_same_v<T, double>) {
      if (ex::too_big(f[0].a[0])) {
        flush(f[0].a[0]);
        f[0].a[0] = 0.0;
      }
    }
  }
  for (auto& g : f) {
    ex::drain(g, flush);
    flags |= g.flags;
  }
}

template <class L, class T, bool Dot, class Out>
void run(const void* xv, const void* yv, std::int64_t n, void* result) {
  constexpr int D = L::digits;
  const T* x = static_cast<const T*>(xv);
  const T* y = static_cast<const T*>(yv);
  std::int64_t total[D] = {};
  unsigned flags = 0;
  std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel if (n >= kParallelMin)
  {
    std::int64_t d[D] = {};
    unsigned f = 0;
#pragma omp for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
      std::int64_t b = c * kChunk, len = std::min(kChunk, n - b);
      fold<L, T, Dot>(x + b, Dot ? y + b : nullptr, len, d, f);
      ex::normalize<D>(d);  // keeps every digit small whatever the number of chunks
    }
#pragma omp critical(tally_exact_merge)
    {
      for (int k = 0; k < D; ++k) total[k] += d[k];
      flags |= f;
    }
  }
  Out r = ex::round_to<L, Out>(total, flags);
  std::memcpy(result, &r, sizeof r);
}

template <class L, class T, bool Dot>
void run_out(dtype out, const void* x, const void* y, std::int64_t n, void* result) {
  if (out == dtype::float32) run<L, T, Dot, float>(x, y, n, result);
  else run<L, T, Dot, double>(x, y, n, result);
}

}  // namespace

void reduce_exact(reduce_op op, dtype t, dtype out, const void* x, const void* y, std::int64_t n,
                  void* result) {
  if (n == 0) {  // the sum of nothing is +0
    std::memset(result, 0, dtype_size(out));
    return;
  }
  bool dot = op == reduce_op::dot;
  if (t == dtype::float32) {
    if (dot) run_out<ex::f32_dot_layout, float, true>(out, x, y, n, result);
    else run_out<ex::f32_sum_layout, float, false>(out, x, y, n, result);
  } else {
    if (dot) run_out<ex::f64_dot_layout, double, true>(out, x, y, n, result);
    else run_out<ex::f64_sum_layout, double, false>(out, x, y, n, result);
  }
}

}  // namespace tally::cpu
