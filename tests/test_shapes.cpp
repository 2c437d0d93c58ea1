// Strided views, reductions along an axis and segmented reductions (tally/shapes.hpp): every
// test on both backends and every element type. Each output is checked against its own
// elements copied out into a contiguous vector: exact sums and means bit for bit against the
// 1-D CPU exact path (itself checked against MPFR in test_exact.cpp / test_mean.cpp), integer
// sums against an exact 128-bit sum, fast sums against the first-order bound of any float64
// summation order, (n - 1) * 2^-53 * sum|x| (+ half an ulp for float32), and min/max/argmin/
// argmax against a sequential scan, on both backends (the CUDA backend's exact sums and means
// against the 1-D CPU bits; tests/test_shapes_exact.cpp has the hard cases and MPFR).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"

namespace tt {
namespace {

// mean_strided's default result is mean's (mean_t): float for the 16-bit floats (was double).
static_assert(std::is_same_v<decltype(tally::mean_strided(tally::strided<tally::float16>{})), float>);
static_assert(std::is_same_v<decltype(tally::mean_strided(tally::strided<tally::bfloat16>{})), float>);
static_assert(std::is_same_v<decltype(tally::mean_strided(tally::strided<std::int8_t>{})), double>);

using tally::nan_policy;

// Test data: wide-ranging values (int64: uniform in +-2^40, so no sum here leaves int64).
template <class T> std::vector<T> data(std::int64_t n, std::uint64_t seed) {
  return random_values<T>(n, std::is_same_v<T, std::int64_t> ? dist::uniform : dist::wide, seed);
}

// The elements of each output, in order.
template <class T> using runs = std::vector<std::vector<T>>;

class Shapes : public Typed {
 protected:
  tally::options cpu_opt() const {
    tally::options o;
    o.backend = backend::cpu;
    return o;
  }
  bool cuda() const { return b() == backend::cuda; }

  // What a 1-D call gives for one output (the reference of every check below).
  template <class T> static tally::located<T> scan(const std::vector<T>& x, bool mx, bool skip) {
    tally::located<T> r{mx ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max(), -1};
    if constexpr (!std::numeric_limits<T>::is_integer)
      r.value = mx ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    bool nan_seen = false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      T v = x[i];
      if (v != v) {
        nan_seen = true;
        if (!skip) return {v, static_cast<std::int64_t>(i)};
        continue;
      }
      if (r.index < 0 || (mx ? v > r.value : v < r.value)) r = {v, static_cast<std::int64_t>(i)};
    }
    if constexpr (!std::numeric_limits<T>::is_integer)
      if (r.index < 0 && nan_seen) r.value = std::numeric_limits<T>::quiet_NaN();
    return r;
  }

  // Checks sums (exact and fast), means and the four extremes of `want` (per-output elements)
  // computed by `sum(acc, out)`, `mean(out)` and `ext(op, nans, values, indices)` on this backend.
  template <class T, class Sum, class Mean, class Ext>
  void check_all(const runs<T>& want, Sum&& sum, Mean&& mean, Ext&& ext) {
    const std::size_t m = want.size();
    using R = tally::result_t<T>;
    // sums
    for (auto acc : {tally::accuracy::exact, tally::accuracy::fast}) {
      SCOPED_TRACE(acc == tally::accuracy::exact ? "exact sum" : "fast sum");
      buffer<R> out(b(), m, R(7));
      sum(acc, out);
      std::vector<R> got = out.read();
      for (std::size_t o = 0; o < m; ++o) {
        SCOPED_TRACE("output " + std::to_string(o) + " of " + std::to_string(m) + ", length " + std::to_string(want[o].size()));
        if constexpr (is_float_v<T>) {
          tally::options c = cpu_opt();
          c.accuracy = tally::accuracy::exact;
          R exact = tally::sum<T>(want[o], c);
          if (acc == tally::accuracy::exact) {
            ASSERT_TRUE(same_bits(got[o], exact));
          } else {
            if (!std::isfinite(exact)) {  // NaN and infinities: IEEE in any order
              ASSERT_TRUE(same_bits(got[o], exact));
              continue;
            }
            long double mag = 0, e = tally::sum<T, double>(want[o], c);  // (+ half an ulp of float64)
            for (T v : want[o]) mag += std::fabs(static_cast<long double>(v));
            long double bound = (static_cast<long double>(want[o].size()) + 1) * std::ldexp(1.0L, -53) * mag +
                                std::ldexp(std::fabs(e), -53);
            if (std::is_same_v<T, float> && std::fabs(e) + bound > 0)  // + half an ulp of float32
              bound += std::ldexp(1.0L, std::ilogb(std::fabs(e) + bound) - 24);
            ASSERT_LE(std::fabs(static_cast<long double>(got[o]) - e), bound) << "fast sum " << got[o] << " exact " << exact;
            if (want[o].empty()) { ASSERT_TRUE(same_bits(got[o], R(0))); }
          }
        } else {
          exact_int e = exact_sum(want[o].data(), static_cast<std::int64_t>(want[o].size()));
          ASSERT_TRUE(e.fits) << "test data must not overflow here";
          ASSERT_EQ(got[o], e.value);
        }
      }
    }
    // means (float64 results; float32 data also as float32)
    {
      SCOPED_TRACE("mean");
      buffer<double> out(b(), m, 7.0);
      mean(out);
      std::vector<double> got = out.read();
      for (std::size_t o = 0; o < m; ++o) {
        SCOPED_TRACE("output " + std::to_string(o));
        double w = tally::mean<T, double>(want[o], cpu_opt());
        ASSERT_TRUE(same_bits(got[o], w));
      }
    }
    // extremes
    for (bool mx : {false, true})
      for (bool skip : {false, true}) {
        SCOPED_TRACE(std::string(mx ? "max" : "min") + (skip ? " (omit NaN)" : ""));
        buffer<T> values(b(), m, T(5));
        buffer<std::int64_t> idx(b(), m, std::int64_t(-7));
        const auto op = mx ? tally::extreme_op::max : tally::extreme_op::min;
        const auto nans = skip ? nan_policy::omit : nan_policy::propagate;
        ext(op, nans, values, &idx);
        std::vector<T> gv = values.read();
        std::vector<std::int64_t> gi = idx.read();
        // the values alone (no indices asked for: the CPU's column tiles then keep no rows)
        buffer<T> alone(b(), m, T(5));
        ext(op, nans, alone, nullptr);
        std::vector<T> ga = alone.read();
        for (std::size_t o = 0; o < m; ++o) {
          SCOPED_TRACE("output " + std::to_string(o) + ", length " + std::to_string(want[o].size()));
          auto w = scan(want[o], mx, skip);
          ASSERT_EQ(gi[o], w.index);
          ASSERT_TRUE(same_bits(gv[o], w.value));
          ASSERT_TRUE(same_bits(ga[o], w.value)) << "values without indices";
        }
      }
  }

  // A (rows, cols) matrix with the given strides inside a buffer of `span` elements starting
  // at element `origin`: the per-output element lists for both axes, and the checks.
  template <class T>
  void check_matrix(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs, std::uint64_t seed,
                    std::vector<T> fill = {}) {
    // Addresses reach origin + i*rs + j*cs; pick origin so all are >= 0.
    std::int64_t lo = 0, hi = 0;
    if (rows > 0 && cols > 0) {
      lo = std::min<std::int64_t>(0, (rows - 1) * rs) + std::min<std::int64_t>(0, (cols - 1) * cs);
      hi = std::max<std::int64_t>(0, (rows - 1) * rs) + std::max<std::int64_t>(0, (cols - 1) * cs);
    }
    std::int64_t origin = -lo, span = hi - lo + 1;
    std::vector<T> mem = fill.empty() ? data<T>(span, seed) : fill;
    if constexpr (std::is_same_v<T, std::int32_t>) {
      // mostly small, so fast paths and ties are exercised; some near the int32 limits
      for (std::size_t i = 0; i < mem.size() && fill.empty(); ++i)
        if (i % 5) mem[i] = static_cast<T>(static_cast<std::int64_t>(mem[i]) % 7);
    }
    auto bm = put(mem);
    const T* base = bm.data() + origin;
    tally::matrix<T> x{base, rows, cols, rs, cs};
    for (int axis : {0, 1}) {
      SCOPED_TRACE("shape (" + std::to_string(rows) + ", " + std::to_string(cols) + ") strides (" + std::to_string(rs) +
                   ", " + std::to_string(cs) + ") axis " + std::to_string(axis));
      std::int64_t m = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
      runs<T> want(static_cast<std::size_t>(m));
      for (std::int64_t o = 0; o < m; ++o)
        for (std::int64_t k = 0; k < len; ++k) {
          std::int64_t i = axis == 0 ? k : o, j = axis == 0 ? o : k;
          want[static_cast<std::size_t>(o)].push_back(mem[static_cast<std::size_t>(origin + i * rs + j * cs)]);
        }
      using R = tally::result_t<T>;
      check_all<T>(
          want,
          [&](tally::accuracy acc, buffer<R>& out) {
            tally::options o = opt();
            o.accuracy = acc;
            tally::sum_along<T, R>(x, axis, out.out(), o);
          },
          [&](buffer<double>& out) { tally::mean_along<T, double>(x, axis, out.out(), opt()); },
          [&](tally::extreme_op op, nan_policy nans, buffer<T>& v, buffer<std::int64_t>* i) {
            tally::extreme_axis(op, nans, x.ref(), axis, tally::detail::mref(v.out()),
                                i ? tally::detail::mref(i->out()) : tally::mutable_array_ref{}, opt());
          });
    }
  }

  template <class T> void check_segments(const std::vector<T>& x, const std::vector<std::int64_t>& off) {
    SCOPED_TRACE("segments: " + std::to_string(off.size() - 1) + ", elements " + std::to_string(x.size()));
    auto bx = put(x);
    auto bo = put(off);
    runs<T> want(off.size() - 1);
    for (std::size_t s = 0; s + 1 < off.size(); ++s)
      want[s].assign(x.begin() + off[s], x.begin() + off[s + 1]);
    using R = tally::result_t<T>;
    check_all<T>(
        want,
        [&](tally::accuracy acc, buffer<R>& out) {
          tally::options o = opt();
          o.accuracy = acc;
          tally::segment_sum<T, R>(bx.in(), bo.in(), out.out(), o);
        },
        [&](buffer<double>& out) { tally::segment_mean<T, double>(bx.in(), bo.in(), out.out(), opt()); },
        [&](tally::extreme_op op, nan_policy nans, buffer<T>& v, buffer<std::int64_t>* i) {
          tally::extreme_segments(op, nans, tally::detail::ref(bx.in()), bo.data(), bo.size() - 1,
                                  tally::detail::mref(v.out()), i ? tally::detail::mref(i->out()) : tally::mutable_array_ref{},
                                  opt());
        });
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, Shapes,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float32, dtype::float64, dtype::int32, dtype::int64)),
                         [](const auto& info) { return param_name(info); });

TEST_P(Shapes, RowMajorColumnMajorPaddedAndNegativeStrides) {
  with_type(t(), [&]<class T>() {
    struct S { std::int64_t r, c; };
    for (S s : {S{37, 53}, S{1, 1}, S{2, 3}, S{300, 300}}) {
      check_matrix<T>(s.r, s.c, s.c, 1, 1);             // row-major
      check_matrix<T>(s.r, s.c, 1, s.r, 2);             // column-major
      check_matrix<T>(s.r, s.c, s.c + 5, 1, 3);         // padded rows
      check_matrix<T>(s.r, s.c, -s.c, -1, 4);           // both strides negative
      check_matrix<T>(s.r, s.c, 2 * s.c, 2, 5);         // every other element
    }
  });
}

TEST_P(Shapes, EmptyAndLengthOneAxes) {
  with_type(t(), [&]<class T>() {
    for (auto [r, c] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 5}, {5, 0}, {0, 0}, {1, 1000}, {1000, 1},
                                                                          {100000, 1}, {1, 100000}}) {
      check_matrix<T>(r, c, c, 1, 6);
      check_matrix<T>(r, c, 1, r, 7);
    }
  });
}

TEST_P(Shapes, LongRowsAndTallColumnsSplitAcrossPiecesAndBlocks) {
  with_type(t(), [&]<class T>() {
    check_matrix<T>(3, 70001, 70001, 1, 8);   // rows longer than a CPU piece and a GPU tile
    check_matrix<T>(70001, 3, 3, 1, 9);       // tall: columns split into row chunks
    check_matrix<T>(5000, 70, 70, 1, 10);     // column mode with several tiles of rows
    // GPU column tiles of 16-byte vectors (row stride a multiple of 16 bytes): 66 and 67
    // outputs leave a last lane with 2 / 3 (float32) or 1 (float64, 67) outputs of its 4 / 2;
    // 2000 x 1000 spans several column tiles, each with row chunks combined by the last one.
    check_matrix<T>(4000, 66, 68, 1, 15);
    check_matrix<T>(4000, 67, 68, 1, 16);
    check_matrix<T>(2000, 1000, 1000, 1, 17);
    // GPU rows of 4096..65536 elements get a whole block each (tuning::shapes_v3_plan):
    // at both ends of that range, and with padded rows (outputs not 16-byte aligned)
    check_matrix<T>(300, 4096, 4096, 1, 19);
    check_matrix<T>(40, 16384, 16384, 1, 20);
    check_matrix<T>(20, 65536, 65536, 1, 23);
    check_matrix<T>(200, 5000, 5003, 1, 21);
    // many more work items than resident GPU blocks: each block takes several in turn
    check_matrix<T>(100000, 40, 40, 1, 22);
  });
}

TEST_P(Shapes, SegmentsEmptyUnevenAndOneHugeAmongManyTiny) {
  with_type(t(), [&]<class T>() {
    // no segments; only empty segments
    check_segments<T>({}, {0});
    check_segments<T>({}, {0, 0, 0, 0});
    // uneven, with empty ones at the start, middle and end
    std::mt19937_64 g(11);
    std::vector<std::int64_t> off{0, 0};
    for (int s = 0; s < 300; ++s) off.push_back(off.back() + (s % 7 == 0 ? 0 : static_cast<std::int64_t>(g() % (s % 50 == 1 ? 20000 : 40))));
    off.push_back(off.back());
    check_segments<T>(data<T>(off.back(), 12), off);
    // long segments side by side, so one GPU tile (16384 elements) holds the end of one and
    // the start of the next; lengths at and around the tile size; long ones after empty ones
    std::vector<std::int64_t> o1{0};
    for (std::int64_t len : {20000, 20000, 5, 40000, 16385, 16384, 16383, 0, 0, 33000, 16385, 1})
      o1.push_back(o1.back() + len);
    check_segments<T>(data<T>(o1.back(), 18), o1);
    // one segment of 3,000,000 elements among 3000 tiny ones (lengths 0..3), in the middle
    std::vector<std::int64_t> o2{0};
    for (int s = 0; s < 3001; ++s) o2.push_back(o2.back() + (s == 1500 ? 3000000 : s % 4));
    std::vector<T> x = random_values<T>(o2.back(), dist::narrow, 13);
    check_segments<T>(x, o2);
    // 12,000 tiny segments (lengths 0..3), one of 100,000 elements, 12,000 more: thousands of
    // outputs meet one GPU tile, and the tile probe's windows (placed where the points would sit
    // with equal segments) miss some of its points, so searches run after it
    std::vector<std::int64_t> o3{0};
    for (int s = 0; s < 24001; ++s) o3.push_back(o3.back() + (s == 12000 ? 100000 : s % 4));
    check_segments<T>(random_values<T>(o3.back(), dist::narrow, 15), o3);
  });
}

TEST_P(Shapes, StridedViews) {
  with_type(t(), [&]<class T>() {
    std::vector<T> mem = random_values<T>(100003, dist::narrow, 14);
    auto bm = put(mem);
    auto check = [&](std::int64_t first, std::int64_t n, std::int64_t stride) {
      SCOPED_TRACE("first " + std::to_string(first) + " n " + std::to_string(n) + " stride " + std::to_string(stride));
      std::vector<T> w;
      for (std::int64_t k = 0; k < n; ++k) w.push_back(mem[static_cast<std::size_t>(first + k * stride)]);
      tally::strided<T> v{bm.data() + first, n, stride};
      static_assert(std::is_same_v<decltype(tally::mean_strided<T>(v)), decltype(tally::mean<T>(w))>,
                    "mean_strided's default result type is mean's");
      tally::options ex = opt(), fa = opt();
      fa.accuracy = tally::accuracy::fast;
      tally::options c = cpu_opt();
      if constexpr (is_float_v<T>) {
        EXPECT_TRUE(same_bits(tally::sum_strided<T>(v, ex), tally::sum<T>(w, c)));
        EXPECT_TRUE(same_bits(tally::mean_strided<T>(v, ex), tally::mean<T>(w, c)));
        // narrow data: integers below 2^21, any order of float64 additions is exact
        EXPECT_TRUE(same_bits(tally::sum_strided<T>(v, fa), tally::sum<T>(w, c)));
      } else {
        EXPECT_EQ(tally::sum_strided<T>(v, ex), tally::sum<T>(w, c));
        EXPECT_TRUE(same_bits(tally::mean_strided<T>(v, ex), tally::mean<T>(w, c)));
      }
      for (bool mx : {false, true}) {
        auto got = mx ? tally::extreme_strided<T, true>(v, nan_policy::propagate, opt())
                      : tally::extreme_strided<T, false>(v, nan_policy::propagate, opt());
        auto want = scan(w, mx, false);
        EXPECT_EQ(got.index, want.index);
        EXPECT_TRUE(same_bits(got.value, want.value));
      }
    };
    check(0, 100003, 1);
    check(0, (100003 + 6) / 7, 7);      // every 7th element
    check(5, 333, 300);                 // column 5 of a row-major (333, 300) matrix
    check(100002, 100003, -1);          // reversed
    check(17, 1000, 0);                 // one element 1000 times
    check(3, 0, 9);                     // empty
    check(99999, 20000, -5);
    // A view of one element (or none) never steps its stride, so any stride is fine, as for
    // an axis of extent 1 (it was errc::invalid_argument beyond 2^60); two elements step it.
    for (std::int64_t stride : {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                                std::int64_t(1) << 61}) {
      check(42, 1, stride);
      check(42, 0, stride);
      tally::strided<T> two{bm.data() + 42, 2, stride};
      EXPECT_TRUE(throws_tally([&] { tally::sum_strided<T>(two, opt()); }, errc::invalid_argument, {"stride"}));
    }
  });
}

// Integer sums whose partials pass 2^31 and int64 overflow per output: an integer-only suite
// (instantiated for int32 and int64 only, so no floating instance skips).
class IntegerShapes : public Typed {};

INSTANTIATE_TEST_SUITE_P(Backends, IntegerShapes,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::int32, dtype::int64)),
                         [](const auto& info) { return param_name(info); });

TEST_P(IntegerShapes, Int32PartialSumsPassTwoToTheThirtyOneAndInt64OverflowNamesTheOutput) {
  with_type(t(), [&]<class T>() {
    if constexpr (std::is_integral_v<T>) {
      // (3, cols) of int32 max, the middle row int32 min: row sums pass 2^31 (int32) exactly.
      // 5000 columns: a warp per row on the GPU; 100003: rows split into tiles of 8192 across
      // blocks and combined in a second pass. The same data transposed, summed along axis 0:
      // a thread per column walking its rows, in chunks combined in a second pass.
      for (std::int64_t cols : {5000, 100003}) {
        SCOPED_TRACE("cols=" + std::to_string(cols));
        const std::int64_t rows = 3;
        std::vector<T> x(static_cast<std::size_t>(rows * cols), std::numeric_limits<std::int32_t>::max());
        for (std::int64_t j = 0; j < cols; ++j) x[static_cast<std::size_t>(cols + j)] = std::numeric_limits<std::int32_t>::min();
        const std::vector<std::int64_t> want = {cols * std::int64_t(INT32_MAX), cols * std::int64_t(INT32_MIN),
                                                cols * std::int64_t(INT32_MAX)};
        auto bx = put(x);
        buffer<std::int64_t> out(b(), rows, 0);
        tally::sum_along<T>(tally::matrix<T>::row_major(bx.data(), rows, cols), 1, out.out(), opt());
        EXPECT_EQ(out.read(), want);
        std::vector<T> xt(x.size());
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < cols; ++j)
            xt[static_cast<std::size_t>(j * rows + i)] = x[static_cast<std::size_t>(i * cols + j)];
        auto bt = put(xt);
        buffer<std::int64_t> tout(b(), rows, 0);
        tally::sum_along<T>(tally::matrix<T>::row_major(bt.data(), cols, rows), 0, tout.out(), opt());
        EXPECT_EQ(tout.read(), want);
      }
      if constexpr (sizeof(T) == 8) {
        std::vector<T> y = {1, 2, 3, INT64_MAX, 1, INT64_MIN, -1, 5};
        auto by = put(y);
        auto bo = put(std::vector<std::int64_t>{0, 3, 5, 8});
        buffer<std::int64_t> so(b(), 3, 0);
        EXPECT_TRUE(throws_tally([&] { tally::segment_sum<T>(by.in(), bo.in(), so.out(), opt()); }, errc::overflow,
                                 {"output 1", "int64"}));
        // an excursion past int64 that comes back is fine
        std::vector<T> z = {INT64_MAX, INT64_MAX, INT64_MIN, INT64_MIN, 7};
        auto bz = put(z);
        auto bo2 = put(std::vector<std::int64_t>{0, 5});
        buffer<std::int64_t> zo(b(), 1, 0);
        tally::segment_sum<T>(bz.in(), bo2.in(), zo.out(), opt());
        EXPECT_EQ(zo.read()[0], 5);
        // The same across tiles: segments of 5, h and 2h + 1 elements (h = 50000, each long
        // one split over several tiles). Segment 1 is h copies of 2^62: its sum leaves int64.
        // Segment 2 is h copies of int64 max, h of int64 min and a 7: it passes h * 2^63
        // (about 2^78) and comes back to 7 - h.
        const std::int64_t h = 50000;
        std::vector<T> w(5, T(1));
        w.insert(w.end(), static_cast<std::size_t>(h), T(1) << 62);
        w.insert(w.end(), static_cast<std::size_t>(h), INT64_MAX);
        w.insert(w.end(), static_cast<std::size_t>(h), INT64_MIN);
        w.push_back(7);
        auto bw = put(w);
        auto bwo = put(std::vector<std::int64_t>{0, 5, 5 + h, 5 + 3 * h + 1});
        buffer<std::int64_t> wo(b(), 3, 0);
        EXPECT_TRUE(throws_tally([&] { tally::segment_sum<T>(bw.in(), bwo.in(), wo.out(), opt()); }, errc::overflow,
                                 {"output 1", "int64"}));
        auto bwo2 = put(std::vector<std::int64_t>{0, 5, 5 + 2 * h + 1});
        std::vector<T> w2(w.begin(), w.begin() + 5);
        w2.insert(w2.end(), w.begin() + 5 + h, w.end());
        auto bw2 = put(w2);
        buffer<std::int64_t> wo2(b(), 2, 0);
        tally::segment_sum<T>(bw2.in(), bwo2.in(), wo2.out(), opt());
        EXPECT_EQ(wo2.read(), (std::vector<std::int64_t>{5, 7 - h}));
      }
    }
  });
}

TEST_P(Shapes, TiesAcrossBlockBoundariesAndNanRules) {
  with_type(t(), [&]<class T>() {
    // One long segment and one long column with ties placed past piece / tile / chunk bounds.
    const std::int64_t n = 300007;
    std::vector<T> x(static_cast<std::size_t>(n), T(1));
    for (std::int64_t i : {299999, 200000, 65537, 40000, 8192 * 3 + 1}) x[static_cast<std::size_t>(i)] = T(9);
    for (std::int64_t i : {123457, 32768, 32769}) x[static_cast<std::size_t>(i)] = T(-9);
    auto bx = put(x);
    auto bo = put(std::vector<std::int64_t>{0, 5, n});
    buffer<T> v(b(), 2, T(0));
    buffer<std::int64_t> i(b(), 2, std::int64_t(0));
    tally::segment_extreme<T, true>(bx.in(), bo.in(), v.out(), i.out(), nan_policy::propagate, opt());
    EXPECT_EQ(i.read()[1], 8192 * 3 + 1 - 5);
    tally::segment_extreme<T, false>(bx.in(), bo.in(), v.out(), i.out(), nan_policy::propagate, opt());
    EXPECT_EQ(i.read()[1], 32768 - 5);
    // the same data as a (n, 1) column of a (n, 1) matrix, axis 0
    buffer<std::int64_t> ci(b(), 1, std::int64_t(0));
    buffer<T> cv(b(), 1, T(0));
    tally::extreme_along<T, true>(tally::matrix<T>::row_major(bx.data(), n, 1), 0, cv.out(), ci.out(), nan_policy::propagate, opt());
    EXPECT_EQ(ci.read()[0], 8192 * 3 + 1);
    if constexpr (is_float_v<T>) {
      const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
      // rows: NaN in the middle; all NaN; all +inf; -0.0 then +0.0
      std::vector<T> m = {1, nan, 7, nan, 2,  nan, nan, nan, nan, nan,  inf, inf, inf, inf, inf,  T(-0.0), T(0.0), T(0.0), T(-0.0), T(0.0)};
      check_matrix<T>(4, 5, 5, 1, 0, m);
      auto bm = put(m);
      buffer<T> mv(b(), 4, T(0));
      buffer<std::int64_t> mi(b(), 4, std::int64_t(0));
      tally::extreme_along<T, false>(tally::matrix<T>::row_major(bm.data(), 4, 5), 1, mv.out(), mi.out(), nan_policy::propagate, opt());
      EXPECT_EQ(mi.read(), (std::vector<std::int64_t>{1, 5 - 5, 0, 0}));
      EXPECT_TRUE(std::isnan(mv.read()[0]));
      EXPECT_TRUE(same_bits(mv.read()[2], inf));
      EXPECT_TRUE(same_bits(mv.read()[3], T(-0.0)));
      tally::extreme_along<T, true>(tally::matrix<T>::row_major(bm.data(), 4, 5), 1, mv.out(), mi.out(), nan_policy::omit, opt());
      EXPECT_EQ(mi.read(), (std::vector<std::int64_t>{2, -1, 0, 0}));
      EXPECT_TRUE(std::isnan(mv.read()[1]));
    }
  });
}

// Column extremes of a row-major matrix (the CPU folds a tile of adjacent outputs row by row
// in vector lanes): few distinct values (ties in every column, across the 2048-row tiles),
// a staircase, and for floating types NaN first, NaN late, NaN only up to a row, all NaN,
// signed zeros as the minimum and infinities; 70 columns (one tile, its last vector
// overlapping the one before), dense and padded, and without the NaNs; both axes against the
// 1-D scan, with and without indices asked for.
TEST_P(Shapes, ColumnExtremesWithTiesNaNsAndSignedZeros) {
  with_type(t(), [&]<class T>() {
    constexpr bool fp = is_float_v<T>;
    const std::int64_t r = 5000, c = 70;
    std::vector<T> m(static_cast<std::size_t>(r * c));
    for (std::int64_t i = 0; i < r; ++i)
      for (std::int64_t j = 0; j < c; ++j) {
        T v = T((i * 31 + j * 17) % 4);
        switch (fp ? j % 7 : j % 2) {
          case 1: v = T(i / 600 + (i == 4999 - j ? 20 : 0) - (i == 2047 + j ? 20 : 0)); break;
          case 2: if (i == 3000 + j || i == 4000) v = std::numeric_limits<T>::quiet_NaN(); break;
          case 3: if (i < 10 + j) v = std::numeric_limits<T>::quiet_NaN(); break;
          case 4: v = std::numeric_limits<T>::quiet_NaN(); break;
          case 5: v = (i % 3 == 0) ? T(((i / 3 + j) % 2) ? 0.0 : -0.0) : T(1 + i % 5); break;
          case 6: v = (i % 2) ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity(); break;
          default: break;
        }
        m[static_cast<std::size_t>(i * c + j)] = v;
      }
    check_matrix<T>(r, c, c, 1, 0, m);
    std::vector<T> pad(static_cast<std::size_t>(r * (c + 1)), T(0));
    for (std::int64_t i = 0; i < r; ++i) std::copy_n(m.begin() + i * c, c, pad.begin() + i * (c + 1));
    check_matrix<T>(r, c, c + 1, 1, 0, pad);
    if constexpr (fp) {  // no NaN (their -0 instead): the tiles the CPU's AVX-512 path keeps
      for (T& v : m)
        if (std::isnan(v)) v = T(-0.0);
      check_matrix<T>(r, c, c, 1, 0, m);
    }
  });
}

// Rows whose best value is a zero of either sign (the CPU scans rows by value first, and
// without indices asked for it rescans only for a zero, whose sign is its first one's): rows of
// 25, 100 and 2100 elements (a short run, one block, and past the first block of 2048),
// negative or positive elsewhere, the first zero -0 in even rows and +0 in odd ones, placed
// in either block; the last row holds a NaN.
TEST_P(Shapes, RowExtremesOfZerosKeepTheFirstZerosSign) {
  with_type(t(), [&]<class T>() {
    if constexpr (is_float_v<T>) {
      for (std::int64_t c : {25, 100, 2100}) {
        const std::int64_t r = 7;
        std::vector<T> m(static_cast<std::size_t>(r * c));
        for (std::int64_t i = 0; i < r; ++i) {
          const T sign = (i / 2) % 2 ? T(1) : T(-1);  // below zero (max) or above (min)
          for (std::int64_t j = 0; j < c; ++j) m[static_cast<std::size_t>(i * c + j)] = sign * T(1 + (i + j) % 9);
          const std::int64_t first = (i % 3 == 2 && c > 2048) ? 2050 : 7 + i;
          m[static_cast<std::size_t>(i * c + first)] = i % 2 ? T(0.0) : T(-0.0);
          m[static_cast<std::size_t>(i * c + std::min(first + 40, c - 1))] = i % 2 ? T(-0.0) : T(0.0);
        }
        m[static_cast<std::size_t>(6 * c + 3)] = std::numeric_limits<T>::quiet_NaN();  // (and a NaN)
        check_matrix<T>(r, c, c, 1, 0, m);
      }
    }
  });
}

TEST_P(Shapes, BadArgumentsAreClearErrors) {
  with_type(t(), [&]<class T>() {
    using R = tally::result_t<T>;
    std::vector<T> xv(12, T(1));
    auto bx = put(xv);
    auto x = tally::matrix<T>::row_major(bx.data(), 3, 4);
    buffer<R> out3(b(), 3, R(0)), out4(b(), 4, R(0));
    EXPECT_TRUE(throws_tally([&] { tally::sum_along<T>(x, 2, out3.out(), opt()); }, errc::invalid_argument, {"axis"}));
    EXPECT_TRUE(throws_tally([&] { tally::sum_along<T>(x, 1, out4.out(), opt()); }, errc::length_mismatch, {"4 elements", "3 results"}));
    EXPECT_TRUE(throws_tally([&] { tally::sum_along<T>(x, 0, out3.out(), opt()); }, errc::length_mismatch));
    EXPECT_TRUE(throws_tally([&] { tally::reduce_axis(tally::reduce_op::dot, x.ref(), 1, tally::detail::mref(out3.out()), opt()); },
                             errc::invalid_argument, {"reduce_op::sum"}));
    auto neg = x;
    neg.rows = -1;
    EXPECT_TRUE(throws_tally([&] { tally::sum_along<T>(neg, 1, out3.out(), opt()); }, errc::invalid_argument, {"negative"}));
    auto huge = x;
    huge.row_stride = std::int64_t(1) << 61;
    EXPECT_TRUE(throws_tally([&] { tally::sum_along<T>(huge, 1, out3.out(), opt()); }, errc::invalid_argument, {"overflow"}));
    buffer<std::int32_t> wrong(b(), 3, 0);
    EXPECT_TRUE(throws_tally([&] { tally::reduce_axis(tally::reduce_op::sum, x.ref(), 1, tally::detail::mref(wrong.out()), opt()); },
                             errc::invalid_argument, {"cannot produce"}));
    EXPECT_TRUE(throws_tally([&] { tally::extreme_axis(tally::extreme_op::max, nan_policy::propagate, x.ref(), 1, {}, {}, opt()); },
                             errc::null_pointer, {"neither"}));
    // offsets: first not 0, decreasing, last not x's length (on the cuda backend the GPU
    // checks them in a kernel before the reduction: fast and exact sums, and means)
    buffer<R> so(b(), 3, R(0));
    buffer<double> mo(b(), 3, 0.0);
    tally::options fast = opt();
    fast.accuracy = tally::accuracy::fast;
    // (wild values too: the GPU's fused path reads through clamped ranges, so none of them
    // may read outside x; memcheck runs this test)
    buffer<T> vo(b(), 3, T(0));
    buffer<std::int64_t> io(b(), 3, 0);
    const std::int64_t big = std::int64_t(1) << 40;
    for (auto [off, where] : std::vector<std::pair<std::vector<std::int64_t>, std::string>>{
             {{1, 4, 8, 12}, "0"}, {{0, 8, 4, 12}, "2"}, {{0, 4, 8, 11}, "3"}, {{0, big, 8, 12}, "2"},
             {{0, -5, 8, 12}, "1"}, {{0, 4, 8, big}, "3"}, {{-big, 4, big, 12}, "0"}}) {
      auto bo = put(off);
      EXPECT_TRUE(throws_tally([&] { tally::segment_sum<T>(bx.in(), bo.in(), so.out(), fast); }, errc::invalid_argument,
                               {"offsets", where}))
          << "offsets case " << where;
      EXPECT_TRUE(throws_tally([&] { tally::segment_extreme<T, true>(bx.in(), bo.in(), vo.out(), io.out(), nan_policy::propagate, opt()); },
                               errc::invalid_argument, {"offsets", where}))
          << "offsets case " << where;
      EXPECT_TRUE(throws_tally([&] { tally::segment_sum<T>(bx.in(), bo.in(), so.out(), opt()); }, errc::invalid_argument,
                               {"offsets", where}))
          << "offsets case " << where;
      EXPECT_TRUE(throws_tally([&] { tally::segment_mean<T, double>(bx.in(), bo.in(), mo.out(), opt()); },
                               errc::invalid_argument, {"offsets"}))
          << "offsets case " << where;
    }
    // host offsets for device data (or the reverse) is a memory error, not a crash
    if (cuda()) {
      std::vector<std::int64_t> host_off{0, 4, 8, 12};
      EXPECT_TRUE(throws_tally([&] { tally::segment_sum<T>(bx.in(), tally::view<const std::int64_t>(host_off), so.out(), opt()); },
                               errc::wrong_memory));
    }
  });
}

// The other nine element types: tests/test_shapes_narrow.cpp.

}  // namespace
}  // namespace tt

namespace tt {
namespace {

// The CPU backend's fast float sums depend on the elements of each output alone, not on the
// layout: a column of a row-major matrix (summed a tile of adjacent columns at a time, the
// columns as the vector lanes), the same column as a row of the column-major matrix, as a
// strided view and as a contiguous 1-D array give the same bits. (The GPU's fast sums are
// within the bound only, and are not compared here.)
// The C++ wrappers' outputs in a std::vector: their element type is the result type, so one
// template argument (the input's) is enough, where a view<Out> parameter could not deduce Out
// from a vector.
TEST(ShapesCpu, ContainerOutputsTakeTheirElementType) {
  tally::options cpu;
  cpu.backend = tally::backend::cpu;
  const std::vector<double> a = {1, 2, 3, 4, 5, 6.5};  // (2, 3), row-major
  const auto m = tally::matrix<double>::row_major(a.data(), 2, 3, tally::memory::host);
  std::vector<double> cols(3, -1.0), rows(2, -1.0);
  tally::sum_along<double>(m, 0, cols, cpu);
  EXPECT_EQ(cols, (std::vector<double>{5, 7, 9.5}));
  tally::sum_along(m, 1, rows, cpu);
  EXPECT_EQ(rows, (std::vector<double>{6, 15.5}));
  std::vector<float> means(3, -1.0f);
  tally::mean_along<double>(m, 0, means, cpu);  // (float results of float64 rows, correctly rounded)
  EXPECT_EQ(means, (std::vector<float>{2.5f, 3.5f, 4.75f}));
  const std::vector<std::int32_t> x = {1, -2, 3, 4, 7};
  const std::vector<std::int64_t> off = {0, 1, 4, 4, 5};  // (one empty segment)
  std::vector<std::int64_t> sums(4, -1);
  tally::segment_sum<std::int32_t>(x, off, sums, cpu);
  EXPECT_EQ(sums, (std::vector<std::int64_t>{1, 5, 0, 7}));
  std::vector<double> seg_means(4, -1.0);
  tally::segment_mean<std::int32_t>(x, off, seg_means, cpu);
  EXPECT_EQ(seg_means[0], 1.0);
  EXPECT_EQ(seg_means[1], 5.0 / 3.0);  // (correctly rounded: the quotient of two exact values)
  EXPECT_TRUE(std::isnan(seg_means[2]));
  EXPECT_EQ(seg_means[3], 7.0);
  // a container of the wrong length is refused by name, as a view of it would be
  std::vector<double> short_out(2);
  EXPECT_THROW(tally::sum_along<double>(m, 0, short_out, cpu), tally::error);
}

TEST(ShapesCpu, FastSumsHaveTheSameBitsInEveryLayout) {
  tally::options fast;
  fast.backend = tally::backend::cpu;
  fast.accuracy = tally::accuracy::fast;
  auto run = [&]<class T>() {
    for (auto [r, c] : {std::pair<std::int64_t, std::int64_t>{5000, 70}, {70000, 65}, {1025, 64}, {3, 100}, {2049, 1}, {300, 700}}) {
      SCOPED_TRACE(std::to_string(r) + " x " + std::to_string(c));
      const std::vector<T> m = random_values<T>(r * c, dist::wide, static_cast<std::uint64_t>(r + c));
      std::vector<T> f(m.size());  // column-major copy
      for (std::int64_t i = 0; i < r; ++i)
        for (std::int64_t j = 0; j < c; ++j) f[static_cast<std::size_t>(j * r + i)] = m[static_cast<std::size_t>(i * c + j)];
      std::vector<T> cols(static_cast<std::size_t>(c)), rows(static_cast<std::size_t>(c));
      tally::sum_along<T, T>(tally::matrix<T>::row_major(m.data(), r, c), 0, tally::view<T>(cols), fast);
      tally::sum_along<T, T>(tally::matrix<T>::row_major(f.data(), c, r), 1, tally::view<T>(rows), fast);
      for (std::int64_t j = 0; j < c; ++j) {
        const std::vector<T> col(f.begin() + j * r, f.begin() + (j + 1) * r);
        const T one = tally::sum<T>(col, fast);
        const T strided = tally::sum_strided<T, T>(tally::strided<T>{m.data() + j, r, c}, fast);
        ASSERT_TRUE(same_bits(cols[static_cast<std::size_t>(j)], one)) << "column " << j;
        ASSERT_TRUE(same_bits(rows[static_cast<std::size_t>(j)], one)) << "column " << j;
        ASSERT_TRUE(same_bits(strided, one)) << "column " << j;
      }
    }
  };
  run.template operator()<float>();
  run.template operator()<double>();
}

}  // namespace
}  // namespace tt
