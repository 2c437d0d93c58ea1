// Exact floating sums and means per row, per column, per CSR segment and of strided views
// (tally/shapes.hpp) on both backends, on data built to break them: ill-conditioned outputs
// (large values that cancel exactly around a small remainder), exponents over the whole range of
// the type (subnormals to the largest finite values), NaN, infinities, inf - inf, sums of -0.0,
// overflow to +-inf, empty outputs, lengths around the GPU's tile (16384) and the CPU's piece
// (32768), one segment of a million elements among thousands of tiny and empty ones, length-1
// axes with many outputs, column reductions of row-major matrices (split into row chunks on the
// GPU), negative and padded strides.
//
// Every output of every call is checked for float32 and float64 results, sums and means:
//  - cuda instances: bit for bit against the cpu backend's shape call on the same host data,
//    and (a sample of outputs) against the cpu backend's 1-D tally::sum / tally::mean of that
//    output's elements copied out; each GPU call is made twice and must give the same bits;
//  - cpu instances: against MPFR (tests/exact_oracle.hpp: the exact sum, rounded once; the
//    exact mean at 4600 bits, rounded once) for every output where the case is small enough,
//    and against the 1-D path otherwise (itself held to MPFR by test_exact.cpp / test_mean.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "exact_oracle.hpp"
#include "support.hpp"

namespace tt {
namespace {

template <class T> using runs = std::vector<std::vector<T>>;

// Random values of T with exponents uniform over T's whole finite range (subnormals included),
// random signs and mantissas.
template <class T> T any_value(std::mt19937_64& g) {
  using lim = std::numeric_limits<T>;
  const int lo = lim::min_exponent - lim::digits, hi = lim::max_exponent - 1;  // 2^lo: the smallest subnormal
  int e = static_cast<int>(g() % static_cast<std::uint64_t>(hi - lo + 1)) + lo;
  double m = 1.0 + static_cast<double>(g() >> 11) * 0x1.0p-53;
  T v = static_cast<T>(std::ldexp(m, e));
  if (!std::isfinite(v)) v = lim::max();
  return (g() & 1) ? -v : v;
}

// n values whose exact sum is tiny against their magnitudes: pairs v, -v over a wide exponent
// range (|v| up to 2^(max_exponent - 8), so no partial sum overflows), shuffled, with a few
// small values left over (condition numbers far beyond 1 / eps).
template <class T> std::vector<T> ill_conditioned(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  using lim = std::numeric_limits<T>;
  std::vector<T> v;
  v.reserve(static_cast<std::size_t>(n));
  const std::int64_t rest = std::min<std::int64_t>(n, 3);
  while (static_cast<std::int64_t>(v.size()) + 2 <= n - rest) {
    int e = static_cast<int>(g() % static_cast<std::uint64_t>(lim::max_exponent - 8 + 20)) - 20;
    T a = static_cast<T>(std::ldexp(1.0 + static_cast<double>(g() >> 11) * 0x1.0p-53, e));
    v.push_back(a);
    v.push_back(-a);
  }
  while (static_cast<std::int64_t>(v.size()) < n)
    v.push_back(static_cast<T>(std::ldexp(1.0 + static_cast<double>(g() >> 11) * 0x1.0p-53, -static_cast<int>(g() % 60))) *
                ((g() & 1) ? T(-1) : T(1)));
  std::shuffle(v.begin(), v.end(), g);
  return v;
}

class ShapesExact : public Typed {
 protected:
  bool cuda() const { return b() == backend::cuda; }

  // The correctly rounded sum / mean of one output by MPFR (cpu instances with MPFR only).
  template <class T, class Out> static Out oracle_of(const std::vector<T>& x, bool mean) {
    if (!mean) return oracle::exact<T, Out>(x, {});
    bool finite = true;
    for (T v : x) finite = finite && std::isfinite(v);
    if (!finite || x.empty() || oracle::exact<T, double>(x, {}) == 0.0)  // specials, empty, exact zero (sign rule)
      return oracle::exact<T, Out>(x, {}, oracle::finish::mean);
    return oracle::exact_mean<T, Out>(x);  // subnormal means included
  }

  // Runs `call(bk, mean, out)` (the shape operation on backend bk, results of type Out into
  // `out`, host vector of want.size()) and checks every output as the file comment says.
  // `mpfr`: whether cpu instances compare every output with MPFR (small cases).
  template <class T, class Call> void check(const runs<T>& want, Call&& call, bool mpfr = true) {
    const std::size_t m = want.size();
    auto one = [&]<class Out>(bool mean) {
      SCOPED_TRACE(std::string(mean ? "mean" : "exact sum") + " as " + (sizeof(Out) == 4 ? "float32" : "float64"));
      std::vector<Out> got = call.template operator()<Out>(b(), mean);
      ASSERT_EQ(got.size(), m);
      std::vector<Out> cpu = cuda() ? call.template operator()<Out>(backend::cpu, mean) : got;
      if (cuda()) {
        std::vector<Out> again = call.template operator()<Out>(b(), mean);
        for (std::size_t o = 0; o < m; ++o) ASSERT_TRUE(same_bits(again[o], got[o])) << "second GPU call, output " << o;
      }
      tally::options c = cpu_backend();
      c.accuracy = tally::accuracy::exact;
      const bool oracle_here = !cuda() && mpfr && oracle::have_oracle();
      for (std::size_t o = 0; o < m; ++o) {
        const auto& w = want[o];
        ASSERT_TRUE(same_bits(got[o], cpu[o])) << "output " << o << " of " << m << ", length " << w.size()
                                               << ": against the cpu backend's shape result";
        if (o < 3000 || o % 97 == 0 || w.size() > 1000) {
          Out one_d = mean ? tally::mean<T, Out>(w, c) : tally::sum<T, Out>(w, c);
          ASSERT_TRUE(same_bits(got[o], one_d)) << "output " << o << ", length " << w.size() << ": against 1-D tally::"
                                                << (mean ? "mean" : "sum") << " of its elements";
        }
        if (oracle_here) {
          ASSERT_TRUE(same_bits(got[o], (oracle_of<T, Out>(w, mean)))) << "output " << o << ", length " << w.size()
                                                                        << ": against MPFR";
        }
      }
    };
    one.template operator()<T>(false);
    one.template operator()<T>(true);
    using Other = std::conditional_t<std::is_same_v<T, float>, double, float>;
    one.template operator()<Other>(false);
    one.template operator()<Other>(true);
  }

  // A (rows, cols) matrix with strides (rs, cs) over `mem` at element `origin` (all addresses
  // inside mem), both axes.
  template <class T>
  void check_matrix(const std::vector<T>& mem, std::int64_t origin, std::int64_t rows, std::int64_t cols, std::int64_t rs,
                    std::int64_t cs, bool mpfr = true, std::vector<int> axes = {0, 1}) {
    for (int axis : axes) {
      SCOPED_TRACE("shape (" + std::to_string(rows) + ", " + std::to_string(cols) + ") strides (" + std::to_string(rs) +
                   ", " + std::to_string(cs) + ") axis " + std::to_string(axis));
      const std::int64_t m = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
      runs<T> want(static_cast<std::size_t>(m));
      for (std::int64_t o = 0; o < m; ++o)
        for (std::int64_t k = 0; k < len; ++k) {
          std::int64_t i = axis == 0 ? k : o, j = axis == 0 ? o : k;
          want[static_cast<std::size_t>(o)].push_back(mem[static_cast<std::size_t>(origin + i * rs + j * cs)]);
        }
      auto call = [&]<class Out>(backend bk, bool mean) {
        buffer<T> bm(bk, mem);
        buffer<Out> out(bk, static_cast<std::size_t>(m), Out(7));
        tally::options o;
        o.backend = bk;
        tally::matrix<T> x{bm.data() + origin, rows, cols, rs, cs};
        if (mean) tally::mean_along<T, Out>(x, axis, out.out(), o);
        else tally::sum_along<T, Out>(x, axis, out.out(), o);
        return out.read();
      };
      check<T>(want, call, mpfr);
    }
  }

  // A row-major (rows, cols) matrix of mem, also read with both strides negative and with
  // padded rows (every row of a (rows, cols + 3) matrix).
  template <class T> void check_layouts(const std::vector<T>& mem, std::int64_t rows, std::int64_t cols, bool mpfr = true) {
    check_matrix<T>(mem, 0, rows, cols, cols, 1, mpfr);
    if (rows * cols > 0) check_matrix<T>(mem, rows * cols - 1, rows, cols, -cols, -1, mpfr);
    if (rows > 0 && cols > 3) check_matrix<T>(mem, 0, rows, cols - 3, cols, 1, mpfr);  // padded: rows of cols - 3
    check_matrix<T>(mem, 0, rows, cols, 1, rows, mpfr);                               // column-major
  }

  template <class T> void check_segments(const std::vector<T>& x, const std::vector<std::int64_t>& off, bool mpfr = true) {
    SCOPED_TRACE("segments: " + std::to_string(off.size() - 1) + ", elements " + std::to_string(x.size()));
    runs<T> want(off.size() - 1);
    for (std::size_t s = 0; s + 1 < off.size(); ++s) want[s].assign(x.begin() + off[s], x.begin() + off[s + 1]);
    auto call = [&]<class Out>(backend bk, bool mean) {
      buffer<T> bx(bk, x);
      buffer<std::int64_t> bo(bk, off);
      buffer<Out> out(bk, off.size() - 1, Out(7));
      tally::options o;
      o.backend = bk;
      if (mean) tally::segment_mean<T, Out>(bx.in(), bo.in(), out.out(), o);
      else tally::segment_sum<T, Out>(bx.in(), bo.in(), out.out(), o);
      return out.read();
    };
    check<T>(want, call, mpfr);
  }

  template <class T> void check_strided(const std::vector<T>& mem, std::int64_t first, std::int64_t n, std::int64_t stride) {
    SCOPED_TRACE("strided: first " + std::to_string(first) + " n " + std::to_string(n) + " stride " + std::to_string(stride));
    runs<T> want(1);
    for (std::int64_t k = 0; k < n; ++k) want[0].push_back(mem[static_cast<std::size_t>(first + k * stride)]);
    auto call = [&]<class Out>(backend bk, bool mean) {
      buffer<T> bm(bk, mem);
      tally::options o;
      o.backend = bk;
      tally::strided<T> v{bm.data() + first, n, stride};
      return std::vector<Out>{mean ? tally::mean_strided<T, Out>(v, o) : tally::sum_strided<T, Out>(v, o)};
    };
    check<T>(want, call);
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, ShapesExact,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float32, dtype::float64)),
                         [](const auto& info) { return param_name(info); });

TEST_P(ShapesExact, IllConditionedRowsAndColumnsOverTheWholeExponentRange) {
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (!cuda()) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_float_type(t(), [&]<class T>() {
    // rows of 1000 and columns of 64: each row ill-conditioned (its own pairs cancel)
    {
      const std::int64_t rows = 64, cols = 1000;
      std::vector<T> mem;
      for (std::int64_t i = 0; i < rows; ++i) {
        auto r = ill_conditioned<T>(cols, 100 + static_cast<std::uint64_t>(i));
        mem.insert(mem.end(), r.begin(), r.end());
      }
      check_layouts<T>(mem, rows, cols);
    }
    // exponents over the whole range: subnormals next to values near the largest finite one
    {
      std::mt19937_64 g(7);
      std::vector<T> mem(300 * 70);
      for (auto& v : mem) v = any_value<T>(g);
      // keep the huge ones from overflowing a row or column sum: scale down all but a few
      for (std::size_t i = 0; i < mem.size(); ++i)
        if (i % 101 != 0) mem[i] = std::ldexp(mem[i], -8);
      check_layouts<T>(mem, 300, 70);
    }
    // a long ill-conditioned row and column (tile path and row chunks on the GPU)
    {
      auto mem = ill_conditioned<T>(3 * 40009, 9);
      check_layouts<T>(mem, 3, 40009);
    }
  });
}

TEST_P(ShapesExact, SpecialValuesSignedZerosOverflowAndEmpty) {
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (!cuda()) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_float_type(t(), [&]<class T>() {
    using lim = std::numeric_limits<T>;
    const T nan = lim::quiet_NaN(), inf = lim::infinity(), big = lim::max(), tiny = lim::denorm_min();
    // 12 rows of 6: NaN; +inf; -inf; inf and -inf; all -0.0; -0.0 and +0.0; max + max (overflow
    // to +inf); -max - max; max + max - max (exact: max); subnormals; max, -max and tiny; x, -x.
    std::vector<std::vector<T>> rows = {
        {1, 2, nan, 4, 5, 6},
        {1, inf, 3, 4, inf, 6},
        {-inf, 2, 3, 4, 5, 6},
        {1, inf, 3, -inf, 5, 6},
        {T(-0.0), T(-0.0), T(-0.0), T(-0.0), T(-0.0), T(-0.0)},
        {T(-0.0), T(0.0), T(-0.0), T(-0.0), T(-0.0), T(-0.0)},
        {big, big, 0, 0, 0, 0},
        {-big, T(-0.0), -big, 0, 0, 0},
        {big, big, -big, 0, 0, 0},
        {tiny, tiny, tiny, -tiny, 2 * tiny, 0},
        {big, tiny, -big, 0, T(-0.0), 0},
        {T(1.5), T(-1.5), T(1e-3), T(-1e-3), 0, T(-0.0)},
    };
    std::vector<T> mem;
    for (auto& r : rows) mem.insert(mem.end(), r.begin(), r.end());
    check_layouts<T>(mem, 12, 6);
    // the same rows as segments, with empty segments between them and an empty matrix
    std::vector<std::int64_t> off{0, 0};
    for (std::size_t i = 0; i < rows.size(); ++i) {
      off.push_back(off.back() + 6);
      off.push_back(off.back());
    }
    check_segments<T>(mem, off);
    check_layouts<T>(std::vector<T>{}, 0, 5);
    check_layouts<T>(std::vector<T>{}, 5, 0);
    // specials deep inside long outputs (across tiles and row chunks): one long row each
    const std::int64_t n = 40000;
    std::mt19937_64 g(5);
    std::vector<T> lng(static_cast<std::size_t>(6 * n));
    for (auto& v : lng) v = static_cast<T>(std::ldexp(static_cast<double>(g() % 2001) - 1000.0, -10));
    lng[static_cast<std::size_t>(0 * n + 30000)] = nan;
    lng[static_cast<std::size_t>(1 * n + 16384)] = inf;
    lng[static_cast<std::size_t>(2 * n + 100)] = inf;
    lng[static_cast<std::size_t>(2 * n + 39999)] = -inf;
    for (std::int64_t k = 0; k < n; ++k) lng[static_cast<std::size_t>(3 * n + k)] = T(-0.0);
    for (std::int64_t k = 0; k < n; ++k) lng[static_cast<std::size_t>(4 * n + k)] = k % 2 ? big : T(-0.0);  // overflows
    for (std::int64_t k = 0; k < n; ++k) lng[static_cast<std::size_t>(5 * n + k)] = k % 2 ? big : -big;     // exactly 0: +0
    check_layouts<T>(lng, 6, n, /*mpfr=*/true);
  });
}

TEST_P(ShapesExact, UnevenSegmentsOneMillionAmongThousandsOfTinyAndEmpty) {
  with_float_type(t(), [&]<class T>() {
    // 6001 segments of lengths 0..3 with one of 1,000,003 in the middle; wide exponents
    std::vector<std::int64_t> off{0};
    for (int s = 0; s < 6001; ++s) off.push_back(off.back() + (s == 3000 ? 1000003 : s % 4));
    std::mt19937_64 g(21);
    std::vector<T> x(static_cast<std::size_t>(off.back()));
    for (auto& v : x) v = static_cast<T>(std::ldexp(static_cast<double>(g() >> 11) * 0x1.0p-53 - 0.5, static_cast<int>(g() % 81) - 40));
    check_segments<T>(x, off, /*mpfr=*/false);
    // the huge one ill-conditioned (exact sum a few small values), at the start and at the end
    auto ill = ill_conditioned<T>(1000003, 22);
    std::vector<T> y = ill;
    y.insert(y.end(), 9, T(0.25));
    check_segments<T>(y, {0, 1000003, 1000003, 1000006, 1000012}, false);
    std::vector<T> z(9, T(-0.5));
    z.insert(z.end(), ill.begin(), ill.end());
    check_segments<T>(z, {0, 0, 4, 9, 9, 1000012}, false);
    // lengths around the GPU tile (16384) and the CPU piece (32768), starting anywhere
    std::vector<std::int64_t> o2{0};
    for (std::int64_t len : {16383, 16384, 16385, 1, 0, 32767, 32768, 32769, 5, 49153, 0, 16384, 2})
      o2.push_back(o2.back() + len);
    auto w = ill_conditioned<T>(o2.back(), 23);
    check_segments<T>(w, o2);
  });
}

TEST_P(ShapesExact, LengthOneAxesWithManyOutputsAndSingleLongAxes) {
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (!cuda()) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_float_type(t(), [&]<class T>() {
    std::mt19937_64 g(31);
    std::vector<T> mem(100000);
    for (auto& v : mem) v = any_value<T>(g);
    mem[5] = T(-0.0);
    mem[6] = std::numeric_limits<T>::quiet_NaN();
    mem[7] = -std::numeric_limits<T>::infinity();
    mem[99999] = std::numeric_limits<T>::denorm_min();
    // (100000, 1) and (1, 100000), both orders: 100000 outputs of one element, and one output
    // of 100000 (NaN in it)
    check_matrix<T>(mem, 0, 100000, 1, 1, 1);
    check_matrix<T>(mem, 0, 1, 100000, 100000, 1);
    check_matrix<T>(mem, 99999, 1, 100000, 1, -1);
  });
}

// Short outputs (the CPU backend tries the certified pass first for outputs of at most 128
// elements; the GPU's shape pass always does): lengths around that limit, each output one of
// the cases a certificate cannot prove and must leave to the superaccumulator: float32 and
// float64 output ties of exactly representable sums, cancellation far below the largest term,
// overflow that cancels back, specials; and random values over the whole exponent range.
// Read as rows (row mode), as columns of the transpose (column mode) and as segments.
TEST_P(ShapesExact, ShortOutputsWithTiesCancellationAndOverflowAroundTheCertifiedLength) {
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (!cuda()) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_float_type(t(), [&]<class T>() {
    using lim = std::numeric_limits<T>;
    const T big = lim::max();
    std::mt19937_64 g(41);
    for (std::int64_t len : {1, 2, 3, 7, 33, 127, 128, 129}) {
      const std::int64_t m = 240;
      runs<T> want(static_cast<std::size_t>(m));
      for (std::int64_t o = 0; o < m; ++o) {
        std::vector<T> r;
        switch (o % 8) {
          case 0: r = {T(1), T(0x1p-24)}; break;                   // float32 tie: to even, 1
          case 1: r = {T(1 + 0x1p-23), T(0x1p-24)}; break;          // float32 tie: to even, up
          case 2: r = {T(1), T(0x1p-53)}; break;                    // float64 tie (float32 elements: 2^-53 is one)
          case 3: r = {T(0x1p100), T(3), T(-0x1p100)}; break;       // cancellation: 3
          case 4: r = {big, big, -big}; break;                      // overflows, comes back: max
          case 5: r = {T(1), T(-0.0), lim::denorm_min(), T(-1)}; break;  // the smallest subnormal
          case 6: r = {lim::infinity(), T(2), -lim::infinity()}; break;  // NaN
          default: break;                                            // random over the whole range
        }
        r.resize(std::min<std::size_t>(r.size(), static_cast<std::size_t>(len)));
        while (static_cast<std::int64_t>(r.size()) < len) {
          if (o % 8 == 7) {
            r.push_back(any_value<T>(g));
          } else if (static_cast<std::int64_t>(r.size()) + 2 <= len && (g() & 1)) {  // v, -v: the sum unchanged
            const T v = any_value<T>(g) * T(0x1p-8);
            r.push_back(v);
            r.push_back(-v);
          } else {
            r.push_back((g() & 1) ? T(0) : T(-0.0));
          }
        }
        std::shuffle(r.begin(), r.end(), g);
        want[static_cast<std::size_t>(o)] = r;
      }
      SCOPED_TRACE("outputs of " + std::to_string(len));
      std::vector<T> by_rows, by_cols(static_cast<std::size_t>(m * len));
      std::vector<std::int64_t> off{0};
      for (std::int64_t o = 0; o < m; ++o) {
        by_rows.insert(by_rows.end(), want[static_cast<std::size_t>(o)].begin(), want[static_cast<std::size_t>(o)].end());
        for (std::int64_t k = 0; k < len; ++k)
          by_cols[static_cast<std::size_t>(k * m + o)] = want[static_cast<std::size_t>(o)][static_cast<std::size_t>(k)];
        off.push_back(off.back() + len);
      }
      check_matrix<T>(by_rows, 0, m, len, len, 1, true, {1});  // rows
      check_matrix<T>(by_cols, 0, len, m, m, 1, true, {0});    // columns of the transpose
      check_segments<T>(by_rows, off);
    }
  });
}

TEST_P(ShapesExact, ColumnReductionsOfRowMajorMatricesSplitIntoRowChunks) {
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (!cuda()) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_float_type(t(), [&]<class T>() {
    // tall and narrow (a few column blocks, many row chunks on the GPU), and wider ones with
    // 32k + 1 columns (a partial block of outputs); ill-conditioned columns. 300 x 5000 and
    // 2 x 40001 (float32) go through the certified pass on the GPU (shapes.cu: from 32 column
    // blocks to under a wave), 300 x 5000 with row chunks
    for (auto [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{70001, 3}, {5003, 33}, {257, 1025}, {2, 40001}, {300, 5000}}) {
      std::vector<T> mem(static_cast<std::size_t>(rows * cols));
      auto col = ill_conditioned<T>(rows * cols, 41 + static_cast<std::uint64_t>(cols));
      for (std::int64_t j = 0; j < cols; ++j)  // column j: a stretch of the ill-conditioned data
        for (std::int64_t i = 0; i < rows; ++i)
          mem[static_cast<std::size_t>(i * cols + j)] = col[static_cast<std::size_t>(j * rows + i)];
      check_matrix<T>(mem, 0, rows, cols, cols, 1, true, {0});
      check_matrix<T>(mem, rows * cols - 1, rows, cols, -cols, -1, true, {0});
    }
  });
}

TEST_P(ShapesExact, StridedViews) {
#if !defined(TALLY_TEST_HAVE_MPFR)
  if (!cuda()) GTEST_SKIP() << "no MPFR oracle in this build";
#endif
  with_float_type(t(), [&]<class T>() {
    auto mem = ill_conditioned<T>(200003, 51);
    check_strided<T>(mem, 0, 200003, 1);
    check_strided<T>(mem, 3, 66667, 3);
    check_strided<T>(mem, 200002, 200003, -1);
    check_strided<T>(mem, 17, 20000, 0);  // one element 20000 times: 20000 x
    check_strided<T>(mem, 4, 0, 9);       // empty: +0, NaN
    check_strided<T>(mem, 199999, 40000, -5);
  });
}

}  // namespace
}  // namespace tt
