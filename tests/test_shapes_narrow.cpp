// The shape layer's narrow element types (float16, bfloat16, int8, int16, uint8, uint16, uint32,
// uint64, bool), which the backends widen exactly before reducing (src/shapes_widen.hpp): per
// row, per column (every layout), per segment and strided, on both backends, through the
// type-erased API (bool as NumPy's bytes). References, per output, from its own elements
// copied out:
//  - integer and bool sums: an exact 128-bit sum (int64 results; uint64 for unsigned data);
//  - float16 sums: the exact sum in long double (a float16 is a multiple of 2^-24 below 2^16,
//    so any sum of fewer than 2^24 of them is exact in 64 bits), rounded once to the result;
//  - bfloat16 sums: the 1-D CPU exact path (tally::sum, itself checked against MPFR in
//    tests/test_types.cpp); fast sums: the first-order bound of any float64 order;
//  - means: the 1-D CPU mean (correctly rounded, checked in tests/test_types.cpp);
//  - min/max/argmin/argmax: a sequential scan (first index on ties; -0 == +0; NaN rules as
//    tally::extreme; a NaN result is the type's canonical quiet NaN; empty: the type's highest
//    / lowest value, bool true / false, index -1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support.hpp"

namespace tt {
namespace {

using tally::float16;
using tally::bfloat16;
using tally::nan_policy;
using i128 = __int128;

template <class T> inline constexpr bool half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;
template <class T> inline constexpr bool unsigned_v = std::is_unsigned_v<T> && !std::is_same_v<T, bool>;
// How the tests hold elements of T: bool as its byte.
template <class T> using S = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;

// A small integer v as an element of T, for the tests' value patterns: the halves' exact
// float value, the integers' v (unsigned ones v + 9, so that -9..9 stay ordered), bool's 1
// above `bool_above` and 0 at or below it.
template <class T> S<T> small_value(int v, int bool_above) {
  if constexpr (std::is_same_v<T, float16>) return tally::to_float16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bfloat16>) return tally::to_bfloat16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bool>) return static_cast<std::uint8_t>(v > bool_above ? 1 : 0);
  else return static_cast<T>(std::is_unsigned_v<T> ? v + 9 : v);
}

// The values the column extreme tests span: int16 / uint16 their whole range, the other types
// a byte's, lo..lo + span (-128..127, or 0..255 unsigned; float16 and bfloat16 hold them
// exactly). of(v, bool_above): v as an element of T, bool 1 above bool_above.
template <class T> struct column_range {
  static constexpr bool shorts = std::is_integral_v<S<T>> && sizeof(S<T>) == 2;
  static constexpr int lo = shorts ? (std::is_unsigned_v<S<T>> ? 0 : -32768) : std::is_unsigned_v<S<T>> ? 0 : -128;
  static constexpr int span = shorts ? 65535 : 255;
  static S<T> of(int v, int bool_above) {
    if constexpr (std::is_same_v<T, float16>) return tally::to_float16(static_cast<float>(v));
    else if constexpr (std::is_same_v<T, bfloat16>) return tally::to_bfloat16(static_cast<float>(v));
    else if constexpr (std::is_same_v<T, bool>) return static_cast<std::uint8_t>(v > bool_above ? 1 : 0);
    else return static_cast<S<T>>(v);
  }
};

template <class T> long double val(S<T> v) {
  if constexpr (half_v<T>) return tally::to_float(v);
  else if constexpr (std::is_same_v<T, bool>) return v != 0 ? 1 : 0;
  else return static_cast<long double>(v);
}
template <class T> bool nan_of(S<T> v) {
  if constexpr (half_v<T>) return std::isnan(tally::to_float(v));
  else return false;
}
template <class T> std::uint64_t bits_of(S<T> v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}
template <class T> S<T> from_bits(std::uint64_t b) {
  S<T> v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// Test data: wide-ranging values of each type (float16 with subnormals, zeros of both signs and
// repeated small integers for ties; integers over their whole range, uint64 below 2^40 here
// so that no sum leaves uint64: the bias of uint64 is exercised anyway, every value reading as
// x - 2^63).
template <class T> std::vector<S<T>> gen(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<S<T>> v(static_cast<std::size_t>(n));
  std::uniform_real_distribution<double> m(1.0, 2.0);
  for (auto& e : v) {
    const unsigned pick = static_cast<unsigned>(g() % 10);
    if constexpr (std::is_same_v<T, float16>) {
      if (pick < 7) e = tally::to_float16(static_cast<float>((g() & 1 ? -1 : 1) * std::ldexp(m(g), static_cast<int>(g() % 33) - 20)));
      else if (pick == 7) e = float16{static_cast<std::uint16_t>((g() % 0x3ff + 1) | (g() & 1 ? 0x8000u : 0u))};  // subnormals
      else if (pick == 8) e = tally::to_float16(static_cast<float>(static_cast<int>(g() % 17) - 8));
      else e = float16{static_cast<std::uint16_t>(g() & 1 ? 0x8000u : 0u)};  // -0, +0
    } else if constexpr (std::is_same_v<T, bfloat16>) {
      if (pick < 8) e = tally::to_bfloat16(static_cast<float>((g() & 1 ? -1 : 1) * std::ldexp(m(g), static_cast<int>(g() % 121) - 60)));
      else e = tally::to_bfloat16(static_cast<float>(static_cast<int>(g() % 17) - 8));
    } else if constexpr (std::is_same_v<T, bool>) {
      e = static_cast<std::uint8_t>(g() & 1);
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
      e = g() >> 24;
    } else {
      e = static_cast<T>(g());  // the whole range of the type
      if (pick < 3) e = static_cast<T>(g() % 5);  // repeats: ties
    }
  }
  return v;
}

template <class T> using runs = std::vector<std::vector<S<T>>>;

class ShapesNarrow : public Typed {
 protected:
  bool cuda() const { return b() == backend::cuda; }
  static tally::options cpu_opt() {
    tally::options o;
    o.backend = backend::cpu;
    return o;
  }
  template <class T> static tally::view<const T> host_view(const std::vector<S<T>>& v) {
    return {reinterpret_cast<const T*>(v.data()), static_cast<std::int64_t>(v.size())};
  }

  // The scan of one output: (value bits, index).
  template <class T> static std::pair<std::uint64_t, std::int64_t> scan(const std::vector<S<T>>& x, bool mx, bool skip) {
    std::int64_t best = -1;
    bool nan_seen = false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (nan_of<T>(x[i])) {
        if (!skip) return {half_v<T> ? (std::is_same_v<T, float16> ? 0x7e00u : 0x7fc0u) : 0, static_cast<std::int64_t>(i)};
        nan_seen = true;
        continue;
      }
      const long double v = val<T>(x[i]);
      if (best < 0 || (mx ? v > val<T>(x[static_cast<std::size_t>(best)]) : v < val<T>(x[static_cast<std::size_t>(best)])))
        best = static_cast<std::int64_t>(i);
    }
    if (best >= 0) return {bits_of<T>(x[static_cast<std::size_t>(best)]), best};
    // empty (or only NaN, skipped)
    if constexpr (half_v<T>) {
      if (nan_seen) return {std::is_same_v<T, float16> ? 0x7e00u : 0x7fc0u, -1};
      const float inf = std::numeric_limits<float>::infinity();
      S<T> e = std::is_same_v<T, float16> ? S<T>{tally::to_float16(mx ? -inf : inf).bits}
                                          : S<T>{tally::to_bfloat16(mx ? -inf : inf).bits};
      return {bits_of<T>(e), -1};
    } else if constexpr (std::is_same_v<T, bool>) {
      return {mx ? 0u : 1u, -1};
    } else {
      return {bits_of<T>(mx ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max()), -1};
    }
  }

  // Sums (exact, fast), means and the four extremes of every output, against the references.
  template <class T, class Sum, class Mean, class Ext>
  void check_all(const runs<T>& want, Sum&& sum, Mean&& mean, Ext&& ext) {
    const std::size_t m = want.size();
    const dtype t = tally::dtype_of<T>();
    if constexpr (half_v<T>) {
      // each output's exact sum as float64 and float32 (float16: in long double; bfloat16: the
      // 1-D CPU path) and sum |x|, once
      std::vector<double> ref64(m), mags(m);
      std::vector<float> ref32(m);
      for (std::size_t o = 0; o < m; ++o) {
        long double mag = 0;
        for (auto v : want[o]) mag += std::fabs(val<T>(v));
        mags[o] = static_cast<double>(mag);
        if constexpr (std::is_same_v<T, float16>) {
          long double s = 0;
          for (auto v : want[o]) s += val<T>(v);
          ref64[o] = static_cast<double>(s);
          ref32[o] = static_cast<float>(s);
          if (s == 0) {  // an exact zero: +0, but -0 when every element is -0 (IEEE sums of -0)
            bool all_neg_zero = !want[o].empty();
            for (auto v : want[o]) all_neg_zero = all_neg_zero && v.bits == 0x8000;
            ref64[o] = all_neg_zero ? -0.0 : 0.0;
            ref32[o] = all_neg_zero ? -0.0f : 0.0f;
          }
        } else {
          const tally::options c = cpu_opt();
          ref64[o] = tally::sum<T, double>(host_view<T>(want[o]), c);
          ref32[o] = tally::sum<T, float>(host_view<T>(want[o]), c);
        }
      }
      for (auto acc : {tally::accuracy::exact, tally::accuracy::fast})
        for (dtype rt : {dtype::float32, dtype::float64}) {
          SCOPED_TRACE(std::string(acc == tally::accuracy::exact ? "exact" : "fast") + " sum as " + tally::dtype_name(rt));
          buffer<double> out(b(), m, 7.0);  // (room for either result type)
          sum(acc, tally::mutable_array_ref{out.data(), static_cast<std::int64_t>(m), rt, tally::memory::unknown});
          std::vector<double> raw = out.read();
          for (std::size_t o = 0; o < m; ++o) {
            SCOPED_TRACE("output " + std::to_string(o) + " of " + std::to_string(m) + ", length " + std::to_string(want[o].size()));
            const double got = rt == dtype::float32 ? static_cast<double>(reinterpret_cast<const float*>(raw.data())[o]) : raw[o];
            const double e64 = ref64[o], e = rt == dtype::float32 ? static_cast<double>(ref32[o]) : e64;
            if (acc == tally::accuracy::exact || !std::isfinite(e64)) {  // (NaN and infinities: IEEE in any order)
              ASSERT_TRUE(same_bits(got, e));
            } else {
              long double bound = (static_cast<long double>(want[o].size()) + 1) * std::ldexp(1.0L, -53) * mags[o] +
                                  std::ldexp(std::fabs(static_cast<long double>(e64)), -53);
              if (rt == dtype::float32 && std::fabs(e64) + bound > 0)
                bound += std::ldexp(1.0L, std::ilogb(std::fabs(static_cast<long double>(e64)) + bound) - 24);
              ASSERT_LE(std::fabs(static_cast<long double>(got) - e64), bound) << "fast sum " << got << " exact " << e64;
              if (want[o].empty()) { ASSERT_TRUE(same_bits(got, 0.0)); }
            }
          }
        }
    } else {
      const dtype rt = unsigned_v<T> ? dtype::uint64 : dtype::int64;
      for (auto acc : {tally::accuracy::exact, tally::accuracy::fast}) {
        SCOPED_TRACE(acc == tally::accuracy::exact ? "sum" : "sum (fast asked)");
        buffer<std::int64_t> out(b(), m, 7);
        sum(acc, tally::mutable_array_ref{out.data(), static_cast<std::int64_t>(m), rt, tally::memory::unknown});
        std::vector<std::int64_t> got = out.read();
        for (std::size_t o = 0; o < m; ++o) {
          SCOPED_TRACE("output " + std::to_string(o) + ", length " + std::to_string(want[o].size()));
          i128 s = 0;
          for (auto v : want[o]) s += static_cast<i128>(val<T>(v));
          ASSERT_TRUE(s >= 0 || !unsigned_v<T>);
          ASSERT_TRUE(s < (i128(1) << 63)) << "test data must not overflow here";
          ASSERT_EQ(static_cast<i128>(got[o]), s);
        }
      }
    }
    {
      SCOPED_TRACE("mean");
      buffer<double> out(b(), m, 7.0);
      mean(tally::mutable_array_ref{out.data(), static_cast<std::int64_t>(m), dtype::float64, tally::memory::unknown});
      std::vector<double> got = out.read();
      for (std::size_t o = 0; o < m; ++o) {
        SCOPED_TRACE("output " + std::to_string(o));
        ASSERT_TRUE(same_bits(got[o], tally::mean<T, double>(host_view<T>(want[o]), cpu_opt())));
      }
    }
    for (bool mx : {false, true})
      for (bool skip : {false, true}) {
        SCOPED_TRACE(std::string(mx ? "max" : "min") + (skip ? " (omit NaN)" : ""));
        buffer<S<T>> values(b(), m, from_bits<T>(0x55));
        buffer<std::int64_t> idx(b(), m, std::int64_t(-7));
        ext(mx ? tally::extreme_op::max : tally::extreme_op::min, skip ? nan_policy::omit : nan_policy::propagate,
            tally::mutable_array_ref{values.data(), static_cast<std::int64_t>(m), t, tally::memory::unknown},
            tally::mutable_array_ref{idx.data(), static_cast<std::int64_t>(m), dtype::int64, tally::memory::unknown});
        std::vector<S<T>> gv = values.read();
        std::vector<std::int64_t> gi = idx.read();
        for (std::size_t o = 0; o < m; ++o) {
          SCOPED_TRACE("output " + std::to_string(o) + ", length " + std::to_string(want[o].size()));
          auto [wb, wi] = scan<T>(want[o], mx, skip);
          ASSERT_EQ(gi[o], wi);
          ASSERT_EQ(bits_of<T>(gv[o]), wb);
        }
      }
  }

  // A (rows, cols) matrix with strides (rs, cs) inside a buffer: both axes.
  template <class T>
  void check_matrix(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs, std::uint64_t seed,
                    std::vector<S<T>> fill = {}) {
    std::int64_t lo = 0, hi = 0;
    if (rows > 0 && cols > 0) {
      lo = std::min<std::int64_t>(0, (rows - 1) * rs) + std::min<std::int64_t>(0, (cols - 1) * cs);
      hi = std::max<std::int64_t>(0, (rows - 1) * rs) + std::max<std::int64_t>(0, (cols - 1) * cs);
    }
    const std::int64_t origin = -lo, span = hi - lo + 1;
    std::vector<S<T>> mem = fill.empty() ? gen<T>(span, seed) : fill;
    auto bm = put(mem);
    const dtype t = tally::dtype_of<T>();
    tally::matrix_ref x{bm.data() + origin, rows, cols, rs, cs, t, tally::memory::unknown};
    for (int axis : {0, 1}) {
      SCOPED_TRACE("shape (" + std::to_string(rows) + ", " + std::to_string(cols) + ") strides (" + std::to_string(rs) +
                   ", " + std::to_string(cs) + ") axis " + std::to_string(axis));
      const std::int64_t m = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
      runs<T> want(static_cast<std::size_t>(m));
      for (std::int64_t o = 0; o < m; ++o)
        for (std::int64_t k = 0; k < len; ++k) {
          const std::int64_t i = axis == 0 ? k : o, j = axis == 0 ? o : k;
          want[static_cast<std::size_t>(o)].push_back(mem[static_cast<std::size_t>(origin + i * rs + j * cs)]);
        }
      check_all<T>(
          want,
          [&](tally::accuracy acc, tally::mutable_array_ref out) {
            tally::options o = opt();
            o.accuracy = acc;
            tally::reduce_axis(tally::reduce_op::sum, x, axis, out, o);
          },
          [&](tally::mutable_array_ref out) { tally::mean_axis(x, axis, out, opt()); },
          [&](tally::extreme_op op, nan_policy nans, tally::mutable_array_ref v, tally::mutable_array_ref i) {
            tally::extreme_axis(op, nans, x, axis, v, i, opt());
          });
    }
  }

  // (shift: x starts that many elements past a 256-byte boundary)
  template <class T>
  void check_segments(const std::vector<S<T>>& x, const std::vector<std::int64_t>& off, std::size_t shift = 0) {
    SCOPED_TRACE("segments: " + std::to_string(off.size() - 1) + ", elements " + std::to_string(x.size()) +
                 ", base shift " + std::to_string(shift));
    auto bx = put(x, shift);
    auto bo = put(off);
    runs<T> want(off.size() - 1);
    for (std::size_t s = 0; s + 1 < off.size(); ++s) want[s].assign(x.begin() + off[s], x.begin() + off[s + 1]);
    const tally::array_ref xr{bx.data(), static_cast<std::int64_t>(x.size()), tally::dtype_of<T>(), tally::memory::unknown};
    const std::int64_t segs = static_cast<std::int64_t>(off.size()) - 1;
    check_all<T>(
        want,
        [&](tally::accuracy acc, tally::mutable_array_ref out) {
          tally::options o = opt();
          o.accuracy = acc;
          tally::reduce_segments(tally::reduce_op::sum, xr, bo.data(), segs, out, o);
        },
        [&](tally::mutable_array_ref out) { tally::mean_segments(xr, bo.data(), segs, out, opt()); },
        [&](tally::extreme_op op, nan_policy nans, tally::mutable_array_ref v, tally::mutable_array_ref i) {
          tally::extreme_segments(op, nans, xr, bo.data(), segs, v, i, opt());
        });
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, ShapesNarrow,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::Values(dtype::float16, dtype::bfloat16, dtype::int8, dtype::int16,
                                                              dtype::uint8, dtype::uint16, dtype::uint32, dtype::uint64,
                                                              dtype::bool_)),
                         [](const auto& info) { return param_name(info); });

TEST_P(ShapesNarrow, RowMajorColumnMajorPaddedAndNegativeStrides) {
  with_small_type(t(), [&]<class T>() {
    struct Sh { std::int64_t r, c; };
    for (Sh s : {Sh{37, 53}, Sh{1, 1}, Sh{2, 3}, Sh{200, 150}}) {
      check_matrix<T>(s.r, s.c, s.c, 1, 1);      // row-major
      check_matrix<T>(s.r, s.c, 1, s.r, 2);      // column-major
      check_matrix<T>(s.r, s.c, s.c + 5, 1, 3);  // padded rows
      check_matrix<T>(s.r, s.c, -s.c, -1, 4);    // both strides negative
      check_matrix<T>(s.r, s.c, 2 * s.c, 2, 5);  // every other element
    }
  });
}

TEST_P(ShapesNarrow, EmptyAndLengthOneAxesAndLongRowsAndTallColumns) {
  with_small_type(t(), [&]<class T>() {
    for (auto [r, c] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 5}, {5, 0}, {0, 0}, {1, 1000}, {1000, 1}, {100000, 1}}) {
      check_matrix<T>(r, c, c, 1, 6);
      check_matrix<T>(r, c, 1, r, 7);
    }
    check_matrix<T>(3, 70001, 70001, 1, 8);  // rows longer than a CPU piece and a GPU tile
    check_matrix<T>(70001, 3, 3, 1, 9);      // tall: columns split into row chunks
    check_matrix<T>(4000, 66, 68, 1, 15);    // GPU column tiles of 16-byte vectors in the copy
    check_matrix<T>(20, 65536, 65536, 1, 23);
    check_matrix<T>(100000, 40, 40, 1, 22);  // many more work items than resident GPU blocks
    // columns read by the GPU as vectors of 2-16 elements (the native narrow kernels: as many
    // as the state's shared memory allows), split into row chunks, with a last column tile
    // whose lanes hold fewer than a vector's outputs
    check_matrix<T>(2000, 256, 256, 1, 24);
    check_matrix<T>(1500, 136, 136, 1, 25);
    if constexpr (sizeof(S<T>) == 1) {
      // columns of extreme bytes, long enough for many of the GPU's packed column sums' flushes
      // (every 256 rows): int8 -128 / 127, uint8 0 / 255; bool 0 / 1 (the 1-D reference reads
      // bool bytes as 0 or 1: other nonzero bytes in columns are ShapesNarrowEdges')
      using L = std::numeric_limits<S<T>>;
      const std::int64_t r = 3001, c = 128;
      std::vector<S<T>> ext(static_cast<std::size_t>(r * c));
      for (std::int64_t i = 0; i < r; ++i)
        for (std::int64_t j = 0; j < c; ++j) {
          const std::int64_t kind = j % 4;
          S<T> v = kind == 0 ? L::lowest() : kind == 1 ? L::max() : (i % 2 != 0 ? L::lowest() : L::max());
          if (kind == 3) v = i % 3 == 0 ? L::max() : static_cast<S<T>>(0x80 ^ (i % 8));
          if constexpr (std::is_same_v<T, bool>) v = v != 0 ? 1 : 0;
          ext[static_cast<std::size_t>(i * c + j)] = v;
        }
      check_matrix<T>(r, c, c, 1, 26, ext);
    }
    if constexpr (std::is_same_v<T, float16>) {
      // exact float16 sums and means (the GPU's fixed-point sums: float64 runs of at most 8
      // elements along rows, 4096 along columns, in a 128-bit state with counts of -0 and of
      // infinities / NaN): 9000 elements an output, so many column runs; per output o % 10:
      // 65504 throughout (past 2^29, the float64 runs' exact range); +65504 / -65504
      // cancelling, then the smallest subnormal; -0 throughout (sum -0); -0 and +0 (sum +0);
      // smallest subnormals of either sign; one +inf among finite values; -inf and +inf (NaN);
      // one NaN; -65504 and 1 alternating; one -inf
      const std::int64_t len = 9000, outs = 70;
      auto elem = [](std::int64_t o, std::int64_t k) -> std::uint16_t {
        switch (o % 10) {
          case 0: return 0x7bff;
          case 1: return k == len - 1 ? 0x0001 : (k % 2 != 0 ? 0xfbff : 0x7bff);
          case 2: return 0x8000;
          case 3: return k % 3 == 0 ? 0x0000 : 0x8000;
          case 4: return (k * 7 + o) % 5 < 2 ? 0x8001 : 0x0001;
          case 5: return k == 4500 ? 0x7c00 : static_cast<std::uint16_t>(0x3c00 + k % 1024);
          case 6: return k == 10 ? 0xfc00 : k == 8000 ? 0x7c00 : 0x3c00;
          case 7: return k == 7777 ? 0x7e01 : 0xfbff;
          case 8: return k % 2 != 0 ? 0xfbff : 0x3c00;
          default: return k == len / 2 ? 0xfc00 : 0x0400;
        }
      };
      std::vector<S<T>> by_col(static_cast<std::size_t>(len * outs)), by_row(by_col.size());
      for (std::int64_t o = 0; o < outs; ++o)
        for (std::int64_t k = 0; k < len; ++k) {
          by_col[static_cast<std::size_t>(k * outs + o)] = float16{elem(o, k)};  // (len, outs): columns
          by_row[static_cast<std::size_t>(o * len + k)] = float16{elem(o, k)};   // (outs, len): rows
        }
      check_matrix<T>(len, outs, outs, 1, 27, by_col);
      check_matrix<T>(outs, len, len, 1, 28, by_row);
      // the same values as segments (with empty ones between)
      std::vector<std::int64_t> off{0};
      for (std::int64_t o = 0; o < outs; ++o) {
        off.push_back(off.back() + len);
        if (o % 9 == 0) off.push_back(off.back());
      }
      std::vector<S<T>> segs;
      for (std::size_t i = 1; i < off.size(); ++i)
        if (off[i] > off[i - 1]) segs.insert(segs.end(), by_row.begin() + (segs.size() / len) * len, by_row.begin() + (segs.size() / len + 1) * len);
      check_segments<T>(segs, off);
      // rows of [2, 2^-23]: the mean 1 + 2^-24 and the sum 2 + 2^-23 are float32 ties (to even:
      // 1 and 2), exact in float64
      std::vector<S<T>> ties;
      for (int i = 0; i < 300; ++i) {
        ties.push_back(float16{static_cast<std::uint16_t>(i % 2 == 0 ? 0x4000 : 0x0002)});
        ties.push_back(float16{static_cast<std::uint16_t>(i % 2 == 0 ? 0x0002 : 0x4000)});
      }
      check_matrix<T>(300, 2, 2, 1, 29, ties);
    }
  });
}

TEST_P(ShapesNarrow, SegmentsEmptyUnevenAndOneHugeAmongManyTiny) {
  with_small_type(t(), [&]<class T>() {
    check_segments<T>({}, {0});
    check_segments<T>({}, {0, 0, 0, 0});
    std::mt19937_64 g(11);
    std::vector<std::int64_t> off{0, 0};
    for (int s = 0; s < 300; ++s)
      off.push_back(off.back() + (s % 7 == 0 ? 0 : static_cast<std::int64_t>(g() % (s % 50 == 1 ? 20000 : 40))));
    off.push_back(off.back());
    check_segments<T>(gen<T>(off.back(), 12), off);
    // one segment of 300,000 elements among 3000 tiny ones (lengths 0..3), in the middle
    std::vector<std::int64_t> o2{0};
    for (int s = 0; s < 3001; ++s) o2.push_back(o2.back() + (s == 1500 ? 300000 : s % 4));
    check_segments<T>(gen<T>(o2.back(), 13), o2);
  });
}

// Segments starting at every element position of a 16-byte vector, of lengths 0..40 and some
// of 100..159, over inputs starting 0, 1, 3 and 7 elements past a 256-byte boundary (the GPU's
// exact byte and float16 sums read a segment's partial first and last vectors whole and masked,
// v2::fold_span, and read elements one at a time where those vectors would leave the input:
// the first and last segments over a shifted base); float16 segments of -0.0 only, lengths
// 1..23 at every alignment (their sums are -0.0), then with one +0.0 in each of 2 or more
// elements (+0.0).
TEST_P(ShapesNarrow, SegmentsAtEveryAlignmentOverShiftedBases) {
  with_small_type(t(), [&]<class T>() {
    for (std::size_t shift : {0, 1, 3, 7}) {
      std::mt19937_64 g(40 + shift);
      std::vector<std::int64_t> off{0};
      for (int s = 0; s < 400; ++s)
        off.push_back(off.back() + static_cast<std::int64_t>(s % 41 == 40 ? 100 + g() % 60 : g() % 41));
      check_segments<T>(gen<T>(off.back(), 41 + shift), off, shift);
      if constexpr (std::is_same_v<T, float16>) {
        std::vector<std::int64_t> o2{0};
        for (int s = 0; s < 120; ++s) o2.push_back(o2.back() + 1 + s % 23);
        std::vector<S<T>> z(static_cast<std::size_t>(o2.back()), float16{static_cast<std::uint16_t>(0x8000)});
        check_segments<T>(z, o2, shift);
        for (std::size_t s = 0; s + 1 < o2.size(); ++s) {
          const std::int64_t len = o2[s + 1] - o2[s];
          if (len >= 2) z[static_cast<std::size_t>(o2[s] + static_cast<std::int64_t>(s) % len)] = float16{static_cast<std::uint16_t>(0)};
        }
        check_segments<T>(z, o2, shift);
      }
    }
  });
}

// Min / max of float16 and bfloat16 with special values inside whole 16-byte vectors (the GPU
// takes a vector's 8 halves at once: their extreme by max.NaN / min.NaN, then the first
// element equal to it; a vector holding a NaN goes element by element): rows of 64 and 72
// elements (8 or 9 vectors, and a row starting 8 elements past a vector) and segments of
// 0..70 over bases shifted 0, 1 and 3 elements, drawn from -0, +0, NaN and negative NaN
// (signalling and quiet patterns), +-inf, a large finite value, the smallest subnormal, +-1
// and +-2, at densities from all-special to 1 in 16, so that ties of -0 and +0, all-NaN
// vectors, NaN after the extreme and before it, and infinities tied with each other fall at
// every position. Every output against the element-by-element reference (first index; NaN
// propagated or left out).
TEST_P(ShapesNarrow, HalfExtremesOfSpecialValuesInWholeVectors) {
  if (t() != dtype::bfloat16 && t() != dtype::float16) GTEST_SKIP() << "float16 and bfloat16 only";
  with_small_type(t(), [&]<class T>() {
    if constexpr (half_v<T>) {
      const bool f16 = std::is_same_v<T, float16>;
      const std::uint16_t pool[] = {0x8000, 0x0000,
                                    static_cast<std::uint16_t>(f16 ? 0x7e00 : 0x7fc0), static_cast<std::uint16_t>(f16 ? 0xfe00 : 0xffc0),
                                    static_cast<std::uint16_t>(f16 ? 0x7c01 : 0x7f81),  // (signalling NaN pattern)
                                    static_cast<std::uint16_t>(f16 ? 0x7c00 : 0x7f80), static_cast<std::uint16_t>(f16 ? 0xfc00 : 0xff80),
                                    static_cast<std::uint16_t>(f16 ? 0x7bff : 0x7180), 0x0001, 0x8001,  // (bfloat16: 2^100, whose sums stay finite in float32)
                                    static_cast<std::uint16_t>(f16 ? 0x3c00 : 0x3f80), static_cast<std::uint16_t>(f16 ? 0xbc00 : 0xbf80),
                                    static_cast<std::uint16_t>(f16 ? 0x4000 : 0x4000), static_cast<std::uint16_t>(f16 ? 0xc000 : 0xc000)};
      constexpr std::size_t kPool = sizeof(pool) / sizeof(pool[0]);
      std::mt19937_64 g(91);
      auto draw = [&](std::size_t count, int density) {  // density: one special in that many (1: all)
        std::vector<S<T>> v(count);
        for (auto& e : v) {
          if (g() % static_cast<unsigned>(density) == 0) e = S<T>{pool[g() % kPool]};
          else e = S<T>{pool[10 + g() % 4]};  // (+-1, +-2)
        }
        return v;
      };
      for (const int density : {1, 2, 5, 16}) {
        SCOPED_TRACE("one special in " + std::to_string(density));
        for (const std::int64_t cols : {64, 72}) {
          const std::int64_t rows = 200;
          check_matrix<T>(rows, cols, cols, 1, 0, draw(static_cast<std::size_t>(rows * cols), density));
        }
        std::vector<std::int64_t> off{0};
        for (int k = 0; k < 300; ++k) off.push_back(off.back() + static_cast<std::int64_t>(g() % 71));
        const std::vector<S<T>> x = draw(static_cast<std::size_t>(off.back()), density);
        for (std::size_t shift : {0, 1, 3}) check_segments<T>(x, off, shift);
      }
    }
  });
}

// Short segments of 150..250 elements (each type's lanes from that mean) with, in the same
// call, runs of 100 segments of 2,000..2,400 (ten times the mean), an empty segment every 13th,
// one of 40,000 (a tile item's, past split) among the short ones, and the last segment ending
// at x's end; bases shifted 0 and 5 elements. Up to 32-bit types: the type's lowest and
// highest planted at the first and last elements of segments 63, 64, 255 and 256 (the ends
// of group items of 4, 2 and 1 lanes a segment) and twice inside segment 700 (the first
// index must win). (Written for an experiment that read a group item's segments through
// shared memory when its range fit, forty-fourth session: both kinds of item in one call.)
TEST_P(ShapesNarrow, SegmentsShortLongAndPastSplitInOneCall) {
  with_small_type(t(), [&]<class T>() {
    std::mt19937_64 g(77);
    std::vector<std::int64_t> off{0};
    for (int s = 0; s < 3200; ++s) {
      std::int64_t len = static_cast<std::int64_t>(150 + g() % 101);
      if (s >= 1000 && s < 1100) len = static_cast<std::int64_t>(2000 + g() % 401);
      if (s >= 2600 && s < 2700) len = static_cast<std::int64_t>(2000 + g() % 401);
      if (s == 1700) len = 40000;
      if (s % 13 == 5) len = 0;
      off.push_back(off.back() + len);
    }
    std::vector<S<T>> x = gen<T>(off.back(), 78);
    if constexpr (!std::is_same_v<T, bool> && std::is_integral_v<S<T>> && sizeof(S<T>) <= 4) {  // (uint64: sums would overflow)
      using L = std::numeric_limits<S<T>>;
      // the type's lowest and highest at the first and last elements of segments 63, 64, 255, 256
      // (group item ends for 1 to 16 lanes) and twice inside segment 700
      for (const std::size_t s : {63, 64, 255, 256}) {
        if (off[s + 1] > off[s]) {
          x[static_cast<std::size_t>(off[s])] = L::max();
          x[static_cast<std::size_t>(off[s + 1] - 1)] = L::lowest();
        }
      }
      for (const std::int64_t k : {3, 90}) {
        x[static_cast<std::size_t>(off[700] + k)] = L::max();
        x[static_cast<std::size_t>(off[700] + k + 1)] = L::lowest();
      }
    }
    for (std::size_t shift : {0, 5}) check_segments<T>(x, off, shift);
  });
}

// Segment sums of the type's lowest and of its highest value only, lengths around a 16-byte
// vector's (15, 16, 17 elements), 200, 4095, up to the default seg_split (16384) and past it
// (16385, 40000: tile items), over bases shifted 0 and 3 elements: the GPU sums the byte, bool,
// 16-bit and uint32 segments in 64-bit lane partials (v2::fold_span_sum), whose largest values
// these are (uint32: 16384 x (2^32 - 1) in one segment). Every output against the exact sum and
// mean (uint64 left out: its sums of the highest value leave uint64; bool: 0 and 1 are the
// other tests' values).
TEST_P(ShapesNarrow, SegmentSumsOfTheTypeExtremesUpToAndPastSplit) {
  with_small_type(t(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool> && std::is_integral_v<S<T>> && sizeof(S<T>) <= 4) {  // (bool: the others' tests)
      using L = std::numeric_limits<S<T>>;
      const std::vector<std::int64_t> lens{1, 15, 16, 17, 200, 0, 4095, 16383, 16384, 16385, 40000, 3};
      std::vector<std::int64_t> off{0};
      for (const std::int64_t len : lens) off.push_back(off.back() + len);
      for (const S<T> v : {L::lowest(), L::max()}) {
        SCOPED_TRACE("every element " + std::to_string(static_cast<long long>(v)));
        const std::vector<S<T>> x(static_cast<std::size_t>(off.back()), v);
        for (std::size_t shift : {0, 3}) check_segments<T>(x, off, shift);
      }
    } else {
      GTEST_SKIP() << "integer types up to 32 bits, not bool";
    }
  });
}

// Segments of one repeated value, the type's lowest or highest (bool: 0 or 1), at every start
// in a 16-byte vector, lengths 1..40, over bases shifted 0, 1, 3 and 7 elements: the GPU's byte
// min / max read a segment's partial first and last vectors whole, with the bytes outside the
// segment given the worst key, which ties with the segment's own elements when they are all
// the op's worst value; the first index must still be 0, never a byte before the segment.
TEST_P(ShapesNarrow, SegmentsOfOneRepeatedExtremeValueAtEveryAlignment) {
  if (t() != dtype::int8 && t() != dtype::uint8 && t() != dtype::bool_) GTEST_SKIP() << "int8, uint8 and bool only";
  with_small_type(t(), [&]<class T>() {
    if constexpr (sizeof(S<T>) == 1) {
      using L = std::numeric_limits<S<T>>;
      std::vector<std::int64_t> off{0};
      for (int s = 0; s < 200; ++s) off.push_back(off.back() + 1 + (s * 7) % 40);
      for (const S<T> v : {std::is_same_v<T, bool> ? S<T>(0) : L::lowest(), std::is_same_v<T, bool> ? S<T>(1) : L::max()})
        for (std::size_t shift : {0, 1, 3, 7}) check_segments<T>(std::vector<S<T>>(static_cast<std::size_t>(off.back()), v), off, shift);
    }
  });
}

// Byte min / max over segments of 1 to 1,100 bytes (the GPU reads a segment's aligned 16-byte
// vectors, 1, 2 or 4 lanes a segment by its mean length, 4 vectors of a lane a round with one
// state update; a round holding the segment's first or last vector, or running past its end,
// keys the bytes outside the segment as the worst value and raises the index found to the
// segment's first element: forty-eighth session), over bases shifted 0, 1, 3, 7 and 15
// elements: segments of the worst value only (for max the lowest, for min the highest: each op
// meets both), of the best value only, the best at the first element, at the last, at both, at
// the first element of a vector or the last of one, and values near both ends, tied, with the
// best values at a moving position. Every output against the element-by-element reference.
TEST_P(ShapesNarrow, ByteSegmentExtremesAtTheirEdgesAtEveryAlignment) {
  if (t() != dtype::int8 && t() != dtype::uint8 && t() != dtype::bool_) GTEST_SKIP() << "int8, uint8 and bool only";
  with_small_type(t(), [&]<class T>() {
    if constexpr (sizeof(S<T>) == 1) {
      constexpr bool kBool = std::is_same_v<T, bool>;
      using L = std::numeric_limits<S<T>>;
      const S<T> lo = kBool ? S<T>(0) : L::lowest(), hi = kBool ? S<T>(1) : L::max();
      const S<T> lo1 = kBool ? lo : S<T>(lo + 1), hi1 = kBool ? hi : S<T>(hi - 1);
      const std::int64_t lens[] = {1, 2, 15, 16, 17, 31, 33, 63, 64, 65, 199, 200, 255, 256, 257, 300, 1000, 1030, 1100};
      // (short segments only, then long ones among them, then longer ones: 1 and 4 lanes a
      // segment, from the mean length: few_masked_lanes; ShapesNarrowLanes* run every lane count)
      for (std::int64_t mean_band : {0, 1, 2}) {
        std::vector<std::int64_t> off{0};
        std::vector<S<T>> x;
        std::mt19937_64 g(77 + static_cast<unsigned>(mean_band));
        for (int s = 0; s < 8 * 19; ++s) {
          std::int64_t len = lens[s % 19];
          if (mean_band == 0) len = len % 257 + 1;
          if (mean_band == 2) len = 4 * len + 1;
          const int kind = (s / 19) % 8;
          std::vector<S<T>> seg(static_cast<std::size_t>(len));
          for (std::int64_t k = 0; k < len; ++k) {
            const auto r = g() % 4;
            seg[static_cast<std::size_t>(k)] = kind == 0 ? lo : kind == 1 ? hi : kind == 7 ? (r == 0 ? lo : r == 1 ? lo1 : r == 2 ? hi1 : hi)
                                                                                 : (r % 2 ? lo1 : hi1);
          }
          auto put_at = [&](std::int64_t k, S<T> v) { seg[static_cast<std::size_t>(std::clamp<std::int64_t>(k, 0, len - 1))] = v; };
          if (kind == 2 || kind == 4) put_at(0, hi), put_at(len / 2, lo);
          if (kind == 3 || kind == 4) put_at(len - 1, hi), put_at(len - 1 - len / 3, lo);
          if (kind == 5) put_at(16 - static_cast<std::int64_t>(s % 16), hi), put_at(15 - static_cast<std::int64_t>(s % 16), lo);
          if (kind == 6) put_at(len - 16 + static_cast<std::int64_t>(s % 16), hi), put_at(len - 17 + static_cast<std::int64_t>(s % 16), lo);
          x.insert(x.end(), seg.begin(), seg.end());
          off.push_back(off.back() + len);
        }
        for (std::size_t shift : {0, 1, 3, 7, 15}) check_segments<T>(x, off, shift);
      }
    }
  });
}

// Column min / max and their first rows (the GPU keeps a lane's four byte columns' best bytes
// and their rows packed in two words, entering them into the states every 256 of the lane's
// rows, 2048 rows of a column block; the other types go element by element): per column
// j % 4, a slow staircase (the extreme first met on a long plateau); one maximum and one
// minimum, each met twice, at rows on both sides of those 2048-row marks; values 0..3 above
// the lowest only (ties everywhere); then the same rows padded by one element (off the 4-byte
// boundary: element by element), and 62 columns (a last lane of 2). Values from the type's
// lowest over 255 steps (bytes: their whole range; halves and wider types: -128..127,
// unsigned 0..255); bool: 0 / 1 bytes, 1 in every 11th.
TEST_P(ShapesNarrow, ColumnExtremesKeepTheFirstRowAcrossRuns) {
  with_small_type(t(), [&]<class T>() {
    const int lo = std::is_unsigned_v<S<T>> ? 0 : -128, span = 255;
    auto of = [](int v) -> S<T> {
      if constexpr (std::is_same_v<T, float16>) return tally::to_float16(static_cast<float>(v));
      else if constexpr (std::is_same_v<T, bfloat16>) return tally::to_bfloat16(static_cast<float>(v));
      else return static_cast<S<T>>(v);
    };
    const std::int64_t r = 9001, c = 64;
    std::vector<S<T>> m(static_cast<std::size_t>(r * c));
    for (std::int64_t i = 0; i < r; ++i)
      for (std::int64_t j = 0; j < c; ++j) {
        int v = 0;
        switch (j % 4) {
          case 0: v = lo + static_cast<int>(i * span / (r - 1)); break;
          case 1: v = (i == 2047 + j || i == 4096 + j) ? lo + span : (i == 2048 + 3 * j || i == 6143) ? lo : lo + span / 2; break;
          case 2: v = (i == 4095 || i == 8191) ? lo + span : (i == 2049 || i == 2047) ? lo : lo + 1 + static_cast<int>((i * 7 + j) % (span - 1)); break;
          default: v = lo + static_cast<int>((i * 31 + j * 17) % 4); break;
        }
        if constexpr (std::is_same_v<T, bool>) v = (i * 5 + j) % 11 == 0 ? 1 : 0;
        m[static_cast<std::size_t>(i * c + j)] = of(v);
      }
    check_matrix<T>(r, c, c, 1, 0, m);
    std::vector<S<T>> pad(static_cast<std::size_t>(r * (c + 1)), of(lo));
    for (std::int64_t i = 0; i < r; ++i) std::copy_n(m.begin() + i * c, c, pad.begin() + i * (c + 1));
    check_matrix<T>(r, c, c + 1, 1, 0, pad);
    check_matrix<T>(r, c - 2, c, 1, 0, m);
  });
}

TEST_P(ShapesNarrow, StridedViews) {
  with_small_type(t(), [&]<class T>() {
    const std::vector<S<T>> mem = gen<T>(100003, 14);
    auto bm = put(mem);
    const dtype t = tally::dtype_of<T>();
    auto check = [&](std::int64_t first, std::int64_t n, std::int64_t stride) {
      SCOPED_TRACE("first " + std::to_string(first) + " n " + std::to_string(n) + " stride " + std::to_string(stride));
      std::vector<S<T>> w;
      for (std::int64_t k = 0; k < n; ++k) w.push_back(mem[static_cast<std::size_t>(first + k * stride)]);
      const tally::strided_ref v{bm.data() + first, n, stride, t, tally::memory::unknown};
      const tally::options c = cpu_opt();
      if constexpr (half_v<T>) {
        float s = -1;
        tally::reduce(tally::reduce_op::sum, v, &s, dtype::float32, opt());
        EXPECT_TRUE(same_bits(s, tally::sum<T, float>(host_view<T>(w), c)));
      } else {
        std::int64_t s = -1;
        tally::reduce(tally::reduce_op::sum, v, &s, unsigned_v<T> ? dtype::uint64 : dtype::int64, opt());
        i128 e = 0;
        for (auto x : w) e += static_cast<i128>(val<T>(x));
        EXPECT_EQ(static_cast<i128>(s), e);
      }
      double mn = -1;
      tally::mean(v, &mn, dtype::float64, opt());
      EXPECT_TRUE(same_bits(mn, tally::mean<T, double>(host_view<T>(w), c)));
      for (bool mx : {false, true}) {
        S<T> got{};
        std::int64_t gi = -7;
        tally::extreme(mx ? tally::extreme_op::max : tally::extreme_op::min, nan_policy::propagate, v, &got, &gi, opt());
        auto [wb, wi] = scan<T>(w, mx, false);
        EXPECT_EQ(gi, wi);
        EXPECT_EQ(bits_of<T>(got), wb);
      }
    };
    check(0, 100003, 1);
    check(0, (100003 + 6) / 7, 7);
    check(5, 333, 300);
    check(100002, 100003, -1);
    check(17, 1000, 0);
    check(3, 0, 9);
  });
}

TEST_P(ShapesNarrow, TiesAcrossBlockBoundariesAndNanRules) {
  with_small_type(t(), [&]<class T>() {
    // one long segment and one long column with ties past piece / tile / chunk bounds
    const std::int64_t n = 300007;
    auto of = [](int v) { return small_value<T>(v, 1); };
    std::vector<S<T>> x(static_cast<std::size_t>(n), of(1));
    for (std::int64_t i : {299999, 200000, 65537, 40000, 8192 * 3 + 1}) x[static_cast<std::size_t>(i)] = of(9);
    for (std::int64_t i : {123457, 32768, 32769}) x[static_cast<std::size_t>(i)] = of(-9);
    check_segments<T>(x, {0, 5, n});
    check_matrix<T>(n, 1, 1, 1, 0, x);
    if constexpr (half_v<T>) {
      const std::uint16_t nan = std::is_same_v<T, float16> ? 0x7e01 : 0x7fc1, inf = std::is_same_v<T, float16> ? 0x7c00 : 0x7f80;
      auto h = [](std::uint16_t b) { return S<T>{b}; };
      const S<T> one = of(1), two = of(2), seven = of(7), nz = h(0x8000), pz = h(0);
      // rows: NaN in the middle; all NaN; all +inf; -0 then +0; a negative NaN among values
      std::vector<S<T>> m = {one, h(nan), seven, h(nan), two,  h(nan), h(nan), h(nan), h(nan), h(nan),
                             h(inf), h(inf), h(inf), h(inf), h(inf),  nz, pz, pz, nz, pz,
                             two, h(static_cast<std::uint16_t>(nan | 0x8000)), one, seven, two};
      check_matrix<T>(5, 5, 5, 1, 0, m);
    }
  });
}

// Column min / max whose extremes and ties lie in different runs of a lane's rows: the packed
// byte columns keep runs of 256 of a lane's rows, the 16-bit integer columns runs of 4096
// (v3::cols_body kPackedExtremes, kPackedShortExtremes), a lane's rows every 8th row of its
// block's chunk. 70001 rows: with the default row chunks, many short ones; under
// ShapesNarrowColsWhole.cuda (col_blocks=1) one chunk, 8750 rows a lane, three runs of 4096.
TEST_P(ShapesNarrow, ColumnExtremesTiedAcrossLongRuns) {
  with_small_type(t(), [&]<class T>() {
    using R = column_range<T>;
    constexpr int lo = R::lo, span = R::span;
    auto of = [](int v) { return R::of(v, 0); };
    const std::int64_t r = 70001, c = 8;
    std::vector<S<T>> m(static_cast<std::size_t>(r * c));
    for (std::int64_t i = 0; i < r; ++i)
      for (std::int64_t j = 0; j < c; ++j) m[static_cast<std::size_t>(i * c + j)] = of(lo + 1 + static_cast<int>((i * 7 + j * 3) % (span - 1)));
    for (std::int64_t j = 0; j < c; ++j) {
      // the maximum 4 times (first at 32767 - j: a lane's run row 4095, the last of run 0),
      // the minimum 3 times (first at 33000 + 3 j: run 1)
      for (std::int64_t i : {65000 - j, 40000 + j, 32767 - j, 32768 + 8 + j}) m[static_cast<std::size_t>(i * c + j)] = of(lo + span);
      for (std::int64_t i : {50000 + j, 36000 - j, 33000 + 3 * j}) m[static_cast<std::size_t>(i * c + j)] = of(lo);
    }
    check_matrix<T>(r, c, c, 1, 0, m);
  });
}

// Column min / max and sums with the extremes tied at the distances the GPU column kernels'
// rows take (a block's warp w reads every 8th row from w, 32 of them in flight, in runs of
// 256): per column, the maximum and the minimum twice each, the second 1, 8, 16, 24, 32, 256
// or 2056 rows after the first (another warp's row; the same warp's 1st to 4th next rows; its
// next block of 32 rows in flight; 257 of its rows on, past a run);
// a column of one value (every row ties: the first), and one of the type's largest value (a
// byte column's packed 16-bit sums at their most, 255 x 256). Column counts multiples of 16
// (a block's 128 byte columns, and 144: one block and 16 columns of another) for every type.
// Under ShapesNarrowColsWhole.cuda (col_blocks=1) the 70001 rows are one row chunk: a warp's
// 8750 rows pass 34 runs. (Written in the forty-ninth session for two column layouts tried
// and removed: docs/performance.md.)
TEST_P(ShapesNarrow, ColumnExtremesTiedAtEveryRowDistance) {
  with_small_type(t(), [&]<class T>() {
    using R = column_range<T>;
    constexpr int lo = R::lo, span = R::span;
    auto of = [](int v) { return R::of(v, lo + span / 2); };
    const std::int64_t gaps[] = {1, 8, 16, 24, 32, 256, 2056};
    struct Sh { std::int64_t r, c; };
    for (Sh sh : {Sh{70001, 16}, Sh{2113, 144}, Sh{33, 48}, Sh{1, 32}, Sh{31, 16}, Sh{300, 128}}) {
      const std::int64_t r = sh.r, c = sh.c;
      std::vector<S<T>> m(static_cast<std::size_t>(r * c));
      for (std::int64_t i = 0; i < r; ++i)
        for (std::int64_t j = 0; j < c; ++j)
          m[static_cast<std::size_t>(i * c + j)] = of(lo + 1 + static_cast<int>((i * 7 + j * 3) % (span - 1)));
      for (std::int64_t j = 0; j < c; ++j) {
        auto at = [&](std::int64_t i) -> S<T>& { return m[static_cast<std::size_t>(i * c + j)]; };
        if (j % 16 == 5 || j % 16 == 9) {  // one value: every row ties; the type's largest value
          for (std::int64_t i = 0; i < r; ++i) at(i) = of(j % 16 == 5 ? lo + span / 2 : lo + span);
          continue;
        }
        const std::int64_t a = (j * 977 + 13) % r, b = (j * 613 + 101) % r;
        at(a) = of(lo + span);
        if (a + gaps[j % 7] < r) at(a + gaps[j % 7]) = of(lo + span);
        at(b) = of(lo);
        if (b + gaps[(j + 3) % 7] < r) at(b + gaps[(j + 3) % 7]) = of(lo);
      }
      check_matrix<T>(r, c, c, 1, 0, m);
    }
  });
}

// Byte column sums, means and min / max where every row is whole 16-byte vectors (column
// counts multiples of 16, row strides multiples of 16 bytes): the GPU reads these 16 columns a
// lane, 512 of a block, and merges the row chunks with 64-bit atomics (v3::cols_bytes_wide,
// plan byte_col_wide; fiftieth session, off by default, slower in run 184: the
// ShapesNarrowColsWide(Whole).cuda entries run this test and the other byte column tests with it on).
// Shapes with a last column tile of 16 columns (528), three tiles (1040), tall matrices whose
// lanes pass many runs of 256 rows, padded row strides (48 columns in rows of 64 bytes, 16 in
// 48), one row, and rows of random bytes, of the type's largest value (bool: 1; the sums at
// their most) and of its lowest (int8: -128, the bias's whole reach). Every output against the
// element-by-element reference, both axes.
TEST_P(ShapesNarrow, ByteColumnsOfWhole16ByteRowsInEveryTileAndChunk) {
  if (t() != dtype::int8 && t() != dtype::uint8 && t() != dtype::bool_) GTEST_SKIP() << "int8, uint8 and bool only";
  with_small_type(t(), [&]<class T>() {
    if constexpr (sizeof(S<T>) == 1) {
      using L = std::numeric_limits<S<T>>;
      constexpr bool kBool = std::is_same_v<T, bool>;
      struct Sh { std::int64_t r, c, rs; };
      for (Sh sh : {Sh{4099, 528, 528}, Sh{70001, 32, 32}, Sh{600, 1040, 1040}, Sh{300, 48, 64}, Sh{257, 16, 16},
                    Sh{1, 512, 512}, Sh{9000, 16, 48}})
        check_matrix<T>(sh.r, sh.c, sh.rs, 1, 17 + static_cast<std::uint64_t>(sh.c));
      for (const S<T> v : {kBool ? S<T>(1) : L::max(), kBool ? S<T>(0) : L::lowest()}) {
        const std::int64_t r = 70001, c = 32;
        std::vector<S<T>> m(static_cast<std::size_t>(r * c), v);
        m[static_cast<std::size_t>(12345 * c + 7)] = kBool ? S<T>(1 - v) : S<T>(v == L::max() ? v - 1 : v + 1);  // (one other value)
        check_matrix<T>(r, c, c, 1, 0, m);
      }
    }
  });
}

// The same for int16 and uint16 (v3::cols_shorts_wide, plan short_col_wide; fifty-first
// session, on by default since run 184: ShapesNarrowColsWide.cuda runs this test and the other
// 16-bit column tests with cols_body instead (short_col_wide=0), ShapesNarrowColsWideWhole.cuda
// with one row chunk, so that a lane's rows pass the 4096-row runs of the extremes and the
// 8192-row runs of the sums).
// 8 columns a lane, 256 a block: a last tile of 8 columns (264), three tiles (520), tall
// matrices, padded row strides (24 columns in rows of 32 elements, 8 in 24), one row; random
// values, and columns of the type's largest value (sums past 2^31) and of its lowest.
TEST_P(ShapesNarrow, ShortColumnsOfWhole16ByteRowsInEveryTileAndChunk) {
  if (t() != dtype::int16 && t() != dtype::uint16) GTEST_SKIP() << "int16 and uint16 only";
  with_small_type(t(), [&]<class T>() {
    if constexpr (sizeof(S<T>) == 2 && std::is_integral_v<S<T>>) {
      using L = std::numeric_limits<S<T>>;
      struct Sh { std::int64_t r, c, rs; };
      for (Sh sh : {Sh{4099, 264, 264}, Sh{70001, 16, 16}, Sh{600, 520, 520}, Sh{300, 24, 32}, Sh{257, 8, 8},
                    Sh{1, 256, 256}, Sh{9000, 8, 24}})
        check_matrix<T>(sh.r, sh.c, sh.rs, 1, 29 + static_cast<std::uint64_t>(sh.c));
      for (const S<T> v : {L::max(), L::lowest()}) {
        const std::int64_t r = 70001, c = 16;
        std::vector<S<T>> m(static_cast<std::size_t>(r * c), v);
        m[static_cast<std::size_t>(54321 * c + 5)] = S<T>(v == L::max() ? v - 1 : v + 1);  // (one other value)
        m[static_cast<std::size_t>(69000 * c + 9)] = S<T>(v == L::max() ? v - 1 : v + 1);
        check_matrix<T>(r, c, c, 1, 0, m);
      }
    }
  });
}

// The same shapes for float16 and bfloat16 (their min / max and the float16 sums and means 8
// columns a lane, v3::cols_halves_wide / cols_halves_sums_wide, plan half_col_wide; fifty-fourth
// session, on by default since run 188: ShapesNarrowColsWhole.cuda runs them with one row chunk,
// so that a lane's rows pass the 4096-row runs, and ShapesNarrowColsHalfBody(Whole).cuda run this
// test and the other half column tests with cols_body's 4 a lane instead).
// Random values (subnormals, zeros of both signs, repeated small integers for ties), then
// columns of ties: 1.0 everywhere but 2.0 at two late rows of one column, -1.0 at two rows of
// another (the first index of each, for max and min), -inf in a third with one NaN late and
// +inf after it.
TEST_P(ShapesNarrow, HalfColumnsOfWhole16ByteRowsInEveryTileAndChunk) {
  if (t() != dtype::bfloat16 && t() != dtype::float16) GTEST_SKIP() << "float16 and bfloat16 only";
  with_small_type(t(), [&]<class T>() {
    if constexpr (half_v<T>) {
      const bool f16 = std::is_same_v<T, float16>;
      auto h = [](unsigned b) { return S<T>{static_cast<std::uint16_t>(b)}; };
      struct Sh { std::int64_t r, c, rs; };
      for (Sh sh : {Sh{4099, 264, 264}, Sh{70001, 16, 16}, Sh{600, 520, 520}, Sh{300, 24, 32}, Sh{257, 8, 8},
                    Sh{1, 256, 256}, Sh{9000, 8, 24}})
        check_matrix<T>(sh.r, sh.c, sh.rs, 1, 31 + static_cast<std::uint64_t>(sh.c));
      const std::int64_t r = 70001, c = 16;
      std::vector<S<T>> m(static_cast<std::size_t>(r * c), h(f16 ? 0x3c00 : 0x3f80));  // (1.0)
      auto at = [&](std::int64_t i, std::int64_t j) -> S<T>& { return m[static_cast<std::size_t>(i * c + j)]; };
      at(54321, 5) = at(69000, 5) = h(0x4000);                         // (2.0)
      at(8191, 9) = at(8192, 9) = h(f16 ? 0xbc00 : 0xbf80);            // (-1.0)
      for (std::int64_t i = 0; i < r; ++i) at(i, 12) = h(f16 ? 0xfc00 : 0xff80);  // (-inf)
      at(40000, 12) = h(f16 ? 0x7e00 : 0x7fc0);                        // (NaN)
      at(50000, 12) = h(f16 ? 0x7c00 : 0x7f80);                        // (+inf)
      check_matrix<T>(r, c, c, 1, 0, m);
    }
  });
}

// Column min / max of float16 and bfloat16 with special values in different runs of a lane's
// rows (the GPU keeps a lane's four columns' best halves and their run rows in two pairs of
// words, entering them into the states every 4096 of the lane's rows, and reads a run again
// element by element when it holds the output's first NaN, or when no element beat -inf
// (+inf for min) before the state has one: v3::cols_body's kPackedHalfExtremes; with
// col_blocks=1, one row chunk and so three runs a lane, in ShapesNarrowColsWhole.cuda). 70001 rows of 16 columns. Per
// column j % 8: a NaN only in a late run among +-1 / +-2; -inf everywhere but a NaN at row
// 60000 and +inf at 65000; NaN everywhere but -inf at rows 50000 + j and 60000; -0 and +0
// alone, mixed; NaN everywhere; +inf first met in a later run, -inf once; draws from the
// specials at one in two; NaNs at rows 3 and 50000 with +inf between. Every output against
// the element-by-element reference (first index; NaN propagated or left out), both axes.
TEST_P(ShapesNarrow, ColumnHalfExtremesOfSpecialValuesAcrossRuns) {
  if (t() != dtype::bfloat16 && t() != dtype::float16) GTEST_SKIP() << "float16 and bfloat16 only";
  with_small_type(t(), [&]<class T>() {
    if constexpr (half_v<T>) {
      const bool f16 = std::is_same_v<T, float16>;
      auto h = [](unsigned b) { return S<T>{static_cast<std::uint16_t>(b)}; };
      const S<T> nan = h(f16 ? 0x7e00 : 0x7fc0), nnan = h(f16 ? 0xfe01 : 0xffc1), inf = h(f16 ? 0x7c00 : 0x7f80),
                 ninf = h(f16 ? 0xfc00 : 0xff80), nz = h(0x8000), pz = h(0);
      const S<T> small[4] = {h(f16 ? 0x3c00 : 0x3f80), h(f16 ? 0xbc00 : 0xbf80), h(0x4000), h(0xc000)};  // (+-1, +-2)
      const S<T> pool[8] = {nan, nnan, inf, ninf, nz, pz, h(1), h(0x8001)};
      const std::int64_t r = 70001, c = 16;
      std::mt19937_64 g(123);
      std::vector<S<T>> m(static_cast<std::size_t>(r * c));
      for (std::int64_t i = 0; i < r; ++i)
        for (std::int64_t j = 0; j < c; ++j) {
          S<T> v = small[g() % 4];
          switch (j % 8) {
            case 0: v = i == 40000 + j ? nan : v; break;
            case 1: v = i == 60000 ? nan : i == 65000 ? inf : ninf; break;
            case 2: v = (i == 50000 + j || i == 60000) ? ninf : nan; break;
            case 3: v = (i * 7 + j) % 3 == 0 ? nz : pz; break;
            case 4: v = j == 4 ? nan : nnan; break;
            case 5: v = (i == 33000 + j || i == 45000 || i == 69999) ? inf : i == 20000 ? ninf : v; break;
            case 6: v = g() % 2 == 0 ? pool[g() % 8] : v; break;
            default: v = (i == 3 || i == 50000) ? nan : i == 40000 ? inf : v; break;
          }
          m[static_cast<std::size_t>(i * c + j)] = v;
        }
      check_matrix<T>(r, c, c, 1, 0, m);
    }
  });
}

// Exact bfloat16 sums and means take a 16-byte vector's 8 terms (rows, segments) or a column's
// 16 rows as one exact float64 term when their exponents are at most 42 / 41 binades apart,
// else one term at a time (src/cuda/shapes_narrow.cu, bf16_in::terms_exact; v3::cols_body's
// kBf16Runs): data that takes the first way everywhere, outliers that break some vectors and
// runs, subnormals, large values, exact cancellations, all -0.0, and an infinity or a NaN
// among close values; rows, columns (2-column vectors, and odd widths without them) and
// segments at several alignments. float16 (fixed point) runs the same data.
TEST_P(ShapesNarrow, HalfExactSumsOfCloseAndOutlyingTerms) {
  if (t() != dtype::bfloat16 && t() != dtype::float16) GTEST_SKIP() << "float16 and bfloat16 only";
  with_small_type(t(), [&]<class T>() {
    if constexpr (half_v<T>) {
      constexpr bool bf = std::is_same_v<T, bfloat16>;
      std::mt19937_64 g(11);
      auto of = [](double v) -> S<T> {
        if constexpr (bf) return tally::to_bfloat16(static_cast<float>(v));
        else return tally::to_float16(static_cast<float>(v));
      };
      auto sign = [&]() { return g() & 1 ? -1.0 : 1.0; };
      // a value of 8 significand bits, 2^lo to 2^(hi + 1)
      auto value = [&](int lo, int hi) {
        return sign() * std::ldexp(1.0 + static_cast<double>(g() % 128) / 128.0, lo + static_cast<int>(g() % static_cast<unsigned>(hi - lo + 1)));
      };
      const int top = bf ? 100 : 14, low = bf ? -100 : -14;
      auto make = [&](int kind, std::int64_t n) {
        std::vector<S<T>> x(static_cast<std::size_t>(n));
        for (auto& e : x) {
          const unsigned p = static_cast<unsigned>(g() % 100);
          switch (kind) {
            case 0:  // close: every vector and run exact
              e = p < 5 ? S<T>{static_cast<std::uint16_t>(g() & 1 ? 0x8000u : 0u)} : of(value(-8, 8));
              break;
            case 1:  // close, with outliers far above and below
              e = p < 2 ? of(value(top - 4, top)) : p < 4 ? of(value(low, low + 4)) : of(value(-8, 8));
              break;
            case 2:  // subnormals and the smallest normal binades
              e = S<T>{static_cast<std::uint16_t>((p < 80 ? g() % (bf ? 0x7fu : 0x3ffu) + 1 : (bf ? 0x80u : 0x400u) + g() % (bf ? 0x100u : 0x800u)) |
                                                  (g() & 1 ? 0x8000u : 0u))};
              break;
            default:  // large values (their sums stay finite in float32)
              e = of(value(top - 8, top));
              break;
          }
        }
        return x;
      };
      struct Sh { std::int64_t r, c; };
      for (int kind = 0; kind < 4; ++kind) {
        SCOPED_TRACE("data kind " + std::to_string(kind));
        for (Sh s : {Sh{300, 66}, Sh{2000, 2}, Sh{37, 8200}, Sh{64, 67}, Sh{3, 5}}) check_matrix<T>(s.r, s.c, s.c, 1, 0, make(kind, s.r * s.c));
        const std::vector<S<T>> x = make(kind, 40000);
        std::vector<std::int64_t> off = {0};
        while (off.back() < 40000) off.push_back(std::min<std::int64_t>(40000, off.back() + static_cast<std::int64_t>(g() % 300)));
        for (std::size_t shift : {std::size_t(0), std::size_t(1), std::size_t(3), std::size_t(7)}) check_segments<T>(x, off, shift);
      }
      {
        SCOPED_TRACE("cancellations, signed zeros, a tie, an infinity and a NaN");
        const std::int64_t n = 48;
        std::vector<S<T>> m = make(0, n * n);
        for (std::int64_t j = 0; j < n / 2; ++j) {  // row 0: pairs x, -x (+0 exactly)
          m[static_cast<std::size_t>(n - 1 - j)] = m[static_cast<std::size_t>(j)];
          m[static_cast<std::size_t>(n - 1 - j)].bits ^= 0x8000u;
        }
        for (std::int64_t j = 0; j < n; ++j) m[static_cast<std::size_t>(n + j)] = S<T>{0x8000u};                 // row 1: -0.0
        for (std::int64_t j = 0; j < n; ++j) m[static_cast<std::size_t>(2 * n + j)] = S<T>{static_cast<std::uint16_t>(j % 3 ? 0x8000u : 0u)};  // row 2: +0
        for (std::int64_t j = 0; j < n; ++j) m[static_cast<std::size_t>(3 * n + j)] = S<T>{0};
        m[static_cast<std::size_t>(3 * n)] = of(1.0);  // row 3: 1 + 2^-24 (bfloat16) / 2^-11 (float16): a float32 / float16 tie
        m[static_cast<std::size_t>(3 * n + 9)] = of(bf ? 0x1p-24 : 0x1p-11);
        m[static_cast<std::size_t>(5 * n + 7)] = S<T>{static_cast<std::uint16_t>(bf ? 0x7f80u : 0x7c00u)};  // row 5: +inf
        m[static_cast<std::size_t>(9 * n + 20)] = S<T>{static_cast<std::uint16_t>(bf ? 0x7fc1u : 0x7e01u)};  // row 9: NaN
        check_matrix<T>(n, n, n, 1, 0, m);
        std::vector<std::int64_t> off;
        for (std::int64_t r = 0; r <= n; ++r) off.push_back(r * n);
        for (std::size_t shift : {std::size_t(0), std::size_t(5)}) check_segments<T>(m, off, shift);
      }
    }
  });
}

// The GPU folds byte rows and segments a 16-byte vector at a time (the best key of the vector
// by max.u16x2, then the first byte holding it: src/cuda/shapes_narrow.cu): the maximum at
// every position of a 48-byte row, tied later in the same vector and in the next ones, the
// minimum elsewhere with its own tie, rows padded off the 16-byte boundary (0, 1, 7 bytes) and
// the same data as segments at shifted bases. Every other type runs the same patterns.
TEST_P(ShapesNarrow, ExtremesAtEveryPositionOfAVector) {
  with_small_type(t(), [&]<class T>() {
    auto of = [](int v) { return small_value<T>(v, 1); };
    const std::int64_t len = 48;
    for (std::int64_t pad : {0, 1, 7}) {
      const std::int64_t ld = len + pad;
      std::vector<S<T>> x(static_cast<std::size_t>(len * ld), of(1));
      for (std::int64_t p = 0; p < len; ++p) {
        auto at = [&](std::int64_t k) -> S<T>& { return x[static_cast<std::size_t>(p * ld + k % len)]; };
        at(p) = of(9);
        at(p + 3) = of(9);
        at(p + 16) = of(9);
        at(p + 5) = of(-9);
        at(p + 6) = of(-9);
        at(p + 29) = of(-9);
      }
      check_matrix<T>(len, len, ld, 1, 0, x);
      std::vector<std::int64_t> off;
      for (std::int64_t r = 0; r <= len; ++r) off.push_back(r * ld);
      for (std::size_t shift : {std::size_t(0), std::size_t(3)}) check_segments<T>(x, off, shift);
    }
  });
}

// The GPU folds a lane's byte vectors in flight (4 a round, 16 x lanes bytes apart) into one
// best key with its position (src/cuda/shapes_narrow_op.cuh, accumulate_keys_round_at): rows
// of 2053 and 4099 bytes (with 0 and 5 of padding), the maximum first at a position that
// moves with the row, tied 16, 48, 64, 128 and 512 elements later (the same lane's next
// vectors for 1 to 32 lanes a row) and 1 and 15 later (the same vector); the minimum likewise
// from another position; fill values 2..5 (ties everywhere below the extremes); a row of the
// lowest value alone and one of the highest alone (every key 0 or every key the best); for
// float16 and bfloat16 also a row whose max is -0 met before +0, and one with two NaNs past
// its extremes; the same data as segments at shifted bases. Every other type runs the same
// patterns.
TEST_P(ShapesNarrow, ExtremesAtEveryPositionOfARound) {
  with_small_type(t(), [&]<class T>() {
    auto of = [](int v) { return small_value<T>(v, 4); };
    const std::int64_t rows = 40;
    for (std::int64_t len : {2053, 4099}) {
      for (std::int64_t pad : {0, 5}) {
        const std::int64_t ld = len + pad;
        std::vector<S<T>> x(static_cast<std::size_t>(rows * ld));
        for (std::int64_t r = 0; r < rows; ++r) {
          auto at = [&](std::int64_t k) -> S<T>& { return x[static_cast<std::size_t>(r * ld + k % len)]; };
          for (std::int64_t k = 0; k < ld; ++k) x[static_cast<std::size_t>(r * ld + k)] = of(2 + static_cast<int>((k * 7 + r) % 4));
          if (r == rows - 2 || r == rows - 1) {
            for (std::int64_t k = 0; k < len; ++k) at(k) = of(r == rows - 2 ? -9 : 9);
            continue;
          }
          const std::int64_t p = (r * 97 + r * r) % (len - 600), q = (p + 601 + 13 * r) % len;
          if constexpr (half_v<T>) {
            if (r == rows - 4) {  // (the max a zero: -0 first, +0 64 later; the rest -1)
              for (std::int64_t k = 0; k < len; ++k) at(k) = of(-1);
              at(p) = from_bits<T>(0x8000);
              at(p + 64) = of(0);
              continue;
            }
            if (r == rows - 3) {  // (NaNs past the extremes, in later rounds)
              at(p + 700) = at(p + 900) = from_bits<T>(std::is_same_v<T, float16> ? 0x7e00 : 0x7fc0);
            }
          }
          for (std::int64_t d : {0, 1, 15, 16, 48, 64, 128, 512}) at(p + d) = of(9);
          for (std::int64_t d : {0, 2, 14, 32, 64, 256}) at(q + d) = of(-9);
        }
        check_matrix<T>(rows, len, ld, 1, 0, x);
        std::vector<std::int64_t> off;
        for (std::int64_t r = 0; r <= rows; ++r) off.push_back(r * ld);
        for (std::size_t shift : {std::size_t(0), std::size_t(5)}) check_segments<T>(x, off, shift);
      }
    }
  });
}

// uint64 past 2^63 (the bias of the widened copy), uint32 and uint8 sums past their type, and
// bool bytes other than 0 and 1: on both backends.
class ShapesNarrowEdges : public Backend {};
INSTANTIATE_TEST_SUITE_P(Backends, ShapesNarrowEdges, ::testing::Values(backend::cpu, backend::cuda),
                         [](const auto& info) { return param_name(info); });

TEST_P(ShapesNarrowEdges, Uint64AboveTwoToTheSixtyThreeSumsMeansAndExtremes) {
  const std::uint64_t top = ~std::uint64_t(0), half = std::uint64_t(1) << 63;
  // rows of 3: sums of exactly 2^64 - 1 (rows 0-2), past 2^64 (rows 3 and 5: overflow, the
  // message names output 3), zeros
  std::vector<std::uint64_t> x = {top - 2, 1, 1,  half - 1, half, 0,  half + 1, half - 3, 1,  half, half, 5,  0, 0, 0,
                                  top, top, top};
  auto bx = put(x);
  const std::int64_t rows = 6;
  tally::matrix_ref m{bx.data(), rows, 3, 3, 1, dtype::uint64, tally::memory::unknown};
  buffer<std::uint64_t> out(b(), rows, 9);
  tally::mutable_array_ref o{out.data(), rows, dtype::uint64, tally::memory::unknown};
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis(tally::reduce_op::sum, m, 1, o, opt()); }, errc::overflow,
                           {"output 3", "uint64"}));
  tally::matrix_ref m3{bx.data(), 3, 3, 3, 1, dtype::uint64, tally::memory::unknown};
  buffer<std::uint64_t> out3(b(), 3, 9);
  tally::reduce_axis(tally::reduce_op::sum, m3, 1, tally::mutable_array_ref{out3.data(), 3, dtype::uint64, tally::memory::unknown}, opt());
  EXPECT_EQ(out3.read(), (std::vector<std::uint64_t>{top, top, top}));
  // the same rows as columns (column mode: a transposed copy)
  std::vector<std::uint64_t> xt(x.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < 3; ++c) xt[static_cast<std::size_t>(c * rows + r)] = x[static_cast<std::size_t>(r * 3 + c)];
  auto bt = put(xt);
  tally::matrix_ref mt{bt.data(), 3, 3, rows, 1, dtype::uint64, tally::memory::unknown};  // the first 3 columns
  buffer<std::uint64_t> outt(b(), 3, 9);
  tally::reduce_axis(tally::reduce_op::sum, mt, 0, tally::mutable_array_ref{outt.data(), 3, dtype::uint64, tally::memory::unknown}, opt());
  EXPECT_EQ(outt.read(), (std::vector<std::uint64_t>{top, top, top}));
  // means: the exact sum / 3 correctly rounded (row 5: 2^64 - 1, which rounds to 2^64)
  buffer<double> mo(b(), rows, 0.0);
  tally::mean_axis(m, 1, tally::mutable_array_ref{mo.data(), rows, dtype::float64, tally::memory::unknown}, opt());
  std::vector<double> gm = mo.read();
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<std::uint64_t> row(x.begin() + 3 * r, x.begin() + 3 * r + 3);
    EXPECT_TRUE(same_bits(gm[static_cast<std::size_t>(r)], tally::mean<std::uint64_t, double>(row, cpu_backend()))) << "row " << r;
  }
  EXPECT_EQ(gm[5], std::ldexp(1.0, 64));
  EXPECT_EQ(gm[3], std::ldexp(1.0, 64) / 3);  // (2^64 + 5) / 3 = 6148914691236517207, nearest float64: 2^64 / 3's
  // min / max across 2^63 (ties of top: the first index)
  buffer<std::uint64_t> v(b(), rows, 9);
  buffer<std::int64_t> i(b(), rows, 9);
  tally::mutable_array_ref vr{v.data(), rows, dtype::uint64, tally::memory::unknown};
  tally::mutable_array_ref ir{i.data(), rows, dtype::int64, tally::memory::unknown};
  tally::extreme_axis(tally::extreme_op::max, nan_policy::propagate, m, 1, vr, ir, opt());
  EXPECT_EQ(v.read(), (std::vector<std::uint64_t>{top - 2, half, half + 1, half, 0, top}));
  EXPECT_EQ(i.read(), (std::vector<std::int64_t>{0, 1, 0, 0, 0, 0}));
  tally::extreme_axis(tally::extreme_op::min, nan_policy::propagate, m, 1, vr, ir, opt());
  EXPECT_EQ(v.read(), (std::vector<std::uint64_t>{1, 0, 1, 5, 0, top}));
  EXPECT_EQ(i.read(), (std::vector<std::int64_t>{1, 2, 2, 2, 0, 0}));
  // empty outputs: min is the type's highest, max its lowest, index -1
  tally::matrix_ref none{bx.data(), 0, 2, 2, 1, dtype::uint64, tally::memory::unknown};
  buffer<std::uint64_t> ev(b(), 2, 9);
  buffer<std::int64_t> ei(b(), 2, 9);
  tally::mutable_array_ref evr{ev.data(), 2, dtype::uint64, tally::memory::unknown};
  tally::mutable_array_ref eir{ei.data(), 2, dtype::int64, tally::memory::unknown};
  tally::extreme_axis(tally::extreme_op::min, nan_policy::propagate, none, 0, evr, eir, opt());
  EXPECT_EQ(ev.read(), (std::vector<std::uint64_t>{top, top}));
  EXPECT_EQ(ei.read(), (std::vector<std::int64_t>{-1, -1}));
  tally::extreme_axis(tally::extreme_op::max, nan_policy::propagate, none, 0, evr, eir, opt());
  EXPECT_EQ(ev.read(), (std::vector<std::uint64_t>{0, 0}));
  // long segments (split across GPU tiles): n copies of 2^63 + 1 (overflow), then one such
  // value and n small ones (the biased partial sums run to about -n 2^63; the total fits)
  const std::int64_t n = 100000;
  std::vector<std::uint64_t> y(static_cast<std::size_t>(n), half + 1);
  for (std::int64_t k = 0; k < n; ++k) y.push_back(static_cast<std::uint64_t>(k % 1000));
  y.push_back(top);
  auto by = put(y);
  tally::array_ref yr{by.data(), static_cast<std::int64_t>(y.size()), dtype::uint64, tally::memory::unknown};
  buffer<std::uint64_t> so(b(), 2, 9);
  tally::mutable_array_ref sor{so.data(), 2, dtype::uint64, tally::memory::unknown};
  auto bo = put(std::vector<std::int64_t>{0, n, 2 * n + 1});
  EXPECT_TRUE(throws_tally([&] { tally::reduce_segments(tally::reduce_op::sum, yr, bo.data(), 2, sor, opt()); }, errc::overflow,
                           {"output 0", "uint64"}));
  buffer<std::uint64_t> so3(b(), 2, 9);
  auto y2 = tally::array_ref{by.data() + (n - 1), n + 2, dtype::uint64, tally::memory::unknown};
  auto bo3 = put(std::vector<std::int64_t>{0, n + 1, n + 2});
  tally::reduce_segments(tally::reduce_op::sum, y2, bo3.data(), 2,
                         tally::mutable_array_ref{so3.data(), 2, dtype::uint64, tally::memory::unknown}, opt());
  unsigned __int128 want = half + 1;
  for (std::int64_t k = 0; k < n; ++k) want += static_cast<unsigned>(k % 1000);
  EXPECT_EQ(so3.read()[0], static_cast<std::uint64_t>(want));
  EXPECT_EQ(so3.read()[1], top);
}

TEST_P(ShapesNarrowEdges, SmallUnsignedSumsPassTheirTypeAndBoolBytesCountAsTrue) {
  // 256 uint8 ones sum to 256 (a uint64 result); uint16 and uint32 rows past their types
  std::vector<std::uint8_t> ones(256 * 3, 1);
  auto b8 = put(ones);
  buffer<std::uint64_t> s8(b(), 3, 9);
  tally::reduce_axis(tally::reduce_op::sum, tally::matrix_ref{b8.data(), 3, 256, 256, 1, dtype::uint8, tally::memory::unknown}, 1,
                     tally::mutable_array_ref{s8.data(), 3, dtype::uint64, tally::memory::unknown}, opt());
  EXPECT_EQ(s8.read(), (std::vector<std::uint64_t>{256, 256, 256}));
  std::vector<std::uint32_t> big(2 * 5000, 0xffffffffu);
  auto b32 = put(big);
  buffer<std::uint64_t> s32(b(), 5000, 9);
  tally::reduce_axis(tally::reduce_op::sum, tally::matrix_ref{b32.data(), 2, 5000, 5000, 1, dtype::uint32, tally::memory::unknown}, 0,
                     tally::mutable_array_ref{s32.data(), 5000, dtype::uint64, tally::memory::unknown}, opt());
  EXPECT_EQ(s32.read(), std::vector<std::uint64_t>(5000, 2 * std::uint64_t(0xffffffffu)));
  std::vector<std::int8_t> lows(300, -128);
  auto bl = put(lows);
  buffer<std::int64_t> sl(b(), 1, 9);
  tally::reduce_axis(tally::reduce_op::sum, tally::matrix_ref{bl.data(), 1, 300, 300, 1, dtype::int8, tally::memory::unknown}, 1,
                     tally::mutable_array_ref{sl.data(), 1, dtype::int64, tally::memory::unknown}, opt());
  EXPECT_EQ(sl.read()[0], -128 * 300);
  // bool columns of bytes other than 0 and 1 (the GPU's packed column sums: 4 columns a lane,
  // flushed every 256 rows): each nonzero byte counts 1
  {
    const std::int64_t r = 1000, c = 64;
    std::vector<std::uint8_t> cb(static_cast<std::size_t>(r * c));
    std::vector<std::int64_t> trues(static_cast<std::size_t>(c), 0);
    for (std::int64_t i = 0; i < r; ++i)
      for (std::int64_t j = 0; j < c; ++j) {
        const auto v = static_cast<std::uint8_t>((i * 7 + j * 13) % 256);
        cb[static_cast<std::size_t>(i * c + j)] = v;
        trues[static_cast<std::size_t>(j)] += v != 0 ? 1 : 0;
      }
    auto bcb = put(cb);
    tally::matrix_ref m{bcb.data(), r, c, c, 1, dtype::bool_, tally::memory::unknown};
    buffer<std::int64_t> cs(b(), c, 9);
    tally::reduce_axis(tally::reduce_op::sum, m, 0, tally::mutable_array_ref{cs.data(), c, dtype::int64, tally::memory::unknown}, opt());
    EXPECT_EQ(cs.read(), trues);
    buffer<double> cm(b(), c, 9.0);
    tally::mean_axis(m, 0, tally::mutable_array_ref{cm.data(), c, dtype::float64, tally::memory::unknown}, opt());
    std::vector<double> want_mean(static_cast<std::size_t>(c));
    for (std::int64_t j = 0; j < c; ++j) want_mean[static_cast<std::size_t>(j)] = static_cast<double>(trues[static_cast<std::size_t>(j)]) / r;
    EXPECT_EQ(cm.read(), want_mean);  // (n / r of exact integers: one correctly rounded division)
  }
  // bool: bytes other than 0 and 1 are true (sums count them; max gives true, 1)
  std::vector<std::uint8_t> bytes = {0, 2, 255, 1, 0, 0, 0, 0};
  auto bb = put(bytes);
  auto bo = put(std::vector<std::int64_t>{0, 4, 4, 8});
  tally::array_ref xr{bb.data(), 8, dtype::bool_, tally::memory::unknown};
  buffer<std::int64_t> sb(b(), 3, 9);
  tally::reduce_segments(tally::reduce_op::sum, xr, bo.data(), 3, tally::mutable_array_ref{sb.data(), 3, dtype::int64, tally::memory::unknown}, opt());
  EXPECT_EQ(sb.read(), (std::vector<std::int64_t>{3, 0, 0}));
  buffer<std::uint8_t> vb(b(), 3, 9);
  buffer<std::int64_t> ib(b(), 3, 9);
  tally::mutable_array_ref vbr{vb.data(), 3, dtype::bool_, tally::memory::unknown};
  tally::mutable_array_ref ibr{ib.data(), 3, dtype::int64, tally::memory::unknown};
  tally::extreme_segments(tally::extreme_op::max, nan_policy::propagate, xr, bo.data(), 3, vbr, ibr, opt());
  EXPECT_EQ(vb.read(), (std::vector<std::uint8_t>{1, 0, 0}));  // empty: false
  EXPECT_EQ(ib.read(), (std::vector<std::int64_t>{1, -1, 0}));
  tally::extreme_segments(tally::extreme_op::min, nan_policy::propagate, xr, bo.data(), 3, vbr, ibr, opt());
  EXPECT_EQ(vb.read(), (std::vector<std::uint8_t>{0, 1, 0}));  // empty: true
  EXPECT_EQ(ib.read(), (std::vector<std::int64_t>{0, -1, 0}));
  buffer<double> mb(b(), 3, 9.0);
  tally::mean_segments(xr, bo.data(), 3, tally::mutable_array_ref{mb.data(), 3, dtype::float64, tally::memory::unknown}, opt());
  std::vector<double> gm = mb.read();
  EXPECT_EQ(gm[0], 0.75);
  EXPECT_TRUE(std::isnan(gm[1]));
  EXPECT_EQ(gm[2], 0.0);
}

TEST_P(ShapesNarrowEdges, ResultTypesAreCheckedAndUnknownTypesRefused) {
  std::vector<std::uint16_t> x(12, 0x3c00);  // 1.0 as float16
  auto bx = put(x);
  buffer<std::int64_t> out(b(), 4, 7), idx(b(), 4, 7);
  auto mat = [&](dtype t) { return tally::matrix_ref{bx.data(), 3, 4, 4, 1, t, tally::memory::unknown}; };
  auto as = [&](dtype t) { return tally::mutable_array_ref{out.data(), 4, t, tally::memory::unknown}; };
  tally::mutable_array_ref ir{idx.data(), 4, dtype::int64, tally::memory::unknown};
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis(tally::reduce_op::sum, mat(dtype::float16), 0, as(dtype::int64), opt()); },
                           errc::invalid_argument, {"float16", "float32 or float64 only"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis(tally::reduce_op::sum, mat(dtype::uint16), 0, as(dtype::int64), opt()); },
                           errc::invalid_argument, {"uint16", "uint64 only"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis(tally::reduce_op::sum, mat(dtype::int16), 0, as(dtype::uint64), opt()); },
                           errc::invalid_argument, {"int16", "int64 only"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis(tally::reduce_op::sum, mat(dtype::bool_), 0, as(dtype::uint64), opt()); },
                           errc::invalid_argument, {"bool", "int64 only"}));
  EXPECT_TRUE(throws_tally([&] { tally::mean_axis(mat(dtype::uint8), 0, as(dtype::int64), opt()); }, errc::invalid_argument,
                           {"float32 or float64"}));
  EXPECT_TRUE(throws_tally([&] { tally::extreme_axis(tally::extreme_op::min, nan_policy::propagate, mat(dtype::float16), 0, as(dtype::float32), ir, opt()); },
                           errc::invalid_argument, {"float16 only"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce_axis(tally::reduce_op::sum, mat(static_cast<dtype>(99)), 0, as(dtype::int64), opt()); },
                           errc::invalid_argument, {"outside tally::dtype", "99"}));
  EXPECT_EQ(out.read(), std::vector<std::int64_t>(4, 7));  // nothing written
  EXPECT_EQ(idx.read(), std::vector<std::int64_t>(4, 7));
}

// The stream-ordered forms over a widened copy (CUDA only): the same bits as the blocking ones.
TEST(ShapesNarrowAsync, SameResultsAsBlocking) {
  TT_REQUIRE_BACKEND(backend::cuda);
  tally::options o;
  o.backend = backend::cuda;
  const std::int64_t rows = 300, cols = 1000;
  std::vector<float16> h = gen<float16>(rows * cols, 5);
  buffer<float16> bh(backend::cuda, h);
  tally::matrix_ref m{bh.data(), rows, cols, cols, 1, dtype::float16, tally::memory::unknown};
  for (int axis : {0, 1}) {
    const std::int64_t k = axis == 0 ? cols : rows;
    buffer<float> a(backend::cuda, static_cast<std::size_t>(k), 7.0f), s(backend::cuda, static_cast<std::size_t>(k), 7.0f);
    buffer<std::int64_t> status(backend::cuda, 2, 5);
    tally::reduce_axis(tally::reduce_op::sum, m, axis, tally::mutable_array_ref{s.data(), k, dtype::float32, tally::memory::unknown}, o);
    tally::reduce_axis_async(tally::reduce_op::sum, m, axis, tally::mutable_array_ref{a.data(), k, dtype::float32, tally::memory::unknown},
                             status.data(), o);
    EXPECT_EQ(a.read(), s.read());  // (read() synchronises: a blocking copy after the stream's work)
    EXPECT_EQ(status.read(), (std::vector<std::int64_t>{-1, -1}));
  }
  std::vector<std::uint64_t> u(10000);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = (i * 0x9e3779b97f4a7c15ULL) ^ (i % 3 ? 0 : (std::uint64_t(1) << 63));
  buffer<std::uint64_t> bu(backend::cuda, u);
  std::vector<std::int64_t> off{0};
  for (std::int64_t s = 0; s < 300; ++s) off.push_back(std::min<std::int64_t>(10000, off.back() + (s % 5) * 13));
  off.back() = 10000;
  buffer<std::int64_t> bo(backend::cuda, off);
  const std::int64_t segs = static_cast<std::int64_t>(off.size()) - 1;
  tally::array_ref xr{bu.data(), 10000, dtype::uint64, tally::memory::unknown};
  for (auto op : {tally::extreme_op::min, tally::extreme_op::max}) {
    buffer<std::uint64_t> va(backend::cuda, static_cast<std::size_t>(segs), 7), vs(backend::cuda, static_cast<std::size_t>(segs), 7);
    buffer<std::int64_t> ia(backend::cuda, static_cast<std::size_t>(segs), 7), is(backend::cuda, static_cast<std::size_t>(segs), 7);
    buffer<std::int64_t> status(backend::cuda, 2, 5);
    tally::extreme_segments(op, nan_policy::propagate, xr, bo.data(), segs,
                            tally::mutable_array_ref{vs.data(), segs, dtype::uint64, tally::memory::unknown},
                            tally::mutable_array_ref{is.data(), segs, dtype::int64, tally::memory::unknown}, o);
    tally::extreme_segments_async(op, nan_policy::propagate, xr, bo.data(), segs,
                                  tally::mutable_array_ref{va.data(), segs, dtype::uint64, tally::memory::unknown},
                                  tally::mutable_array_ref{ia.data(), segs, dtype::int64, tally::memory::unknown}, status.data(), o);
    EXPECT_EQ(va.read(), vs.read());
    EXPECT_EQ(ia.read(), is.read());
    EXPECT_EQ(status.read(), (std::vector<std::int64_t>{-1, -1}));
    // against a scan on the host
    const std::vector<std::uint64_t> gv = vs.read();
    const std::vector<std::int64_t> gi = is.read();
    for (std::int64_t s = 0; s < segs; ++s) {
      std::uint64_t best = op == tally::extreme_op::min ? ~std::uint64_t(0) : 0;
      std::int64_t at = -1;
      for (std::int64_t k = off[static_cast<std::size_t>(s)]; k < off[static_cast<std::size_t>(s) + 1]; ++k) {
        const std::uint64_t v = u[static_cast<std::size_t>(k)];
        if (at < 0 || (op == tally::extreme_op::min ? v < best : v > best)) best = v, at = k - off[static_cast<std::size_t>(s)];
      }
      ASSERT_EQ(gv[static_cast<std::size_t>(s)], best) << "segment " << s;
      ASSERT_EQ(gi[static_cast<std::size_t>(s)], at) << "segment " << s;
    }
  }
}

// Output j of a float32 or float64 result (`out`) held in a buffer of doubles, as a double.
double output_value(const std::vector<double>& v, dtype out, std::int64_t j) {
  if (out == dtype::float64) return v[static_cast<std::size_t>(j)];
  float f;
  std::memcpy(&f, reinterpret_cast<const char*>(v.data()) + 4 * j, 4);
  return static_cast<double>(f);
}

// float16 column sums and means, stream-ordered against blocking (CUDA only): 5000 x 264 (whole
// 16-byte rows: under plan half_col_wide=1, v3::cols_halves_sums_wide, whose stream-ordered
// forms are read in place; otherwise the widened copy), exact sums and means as float32 and
// float64 and the fast sums, with special columns: a NaN, +inf, -inf, both infinities, all
// -0.0, -0.0 and +0.0 mixed, and +-65504 cancelling. The same bits both ways, and the special
// columns' IEEE results (NaN; the infinity; -0.0 only for all -0.0).
TEST(ShapesNarrowAsync, Float16ColumnSumsAndMeansOfSpecialColumns) {
  TT_REQUIRE_BACKEND(backend::cuda);
  tally::options o;
  o.backend = backend::cuda;
  const std::int64_t rows = 5000, cols = 264;
  std::vector<float16> h = gen<float16>(rows * cols, 77);
  auto at = [&](std::int64_t i, std::int64_t j) -> float16& { return h[static_cast<std::size_t>(i * cols + j)]; };
  const float16 nan{0x7e00}, inf{0x7c00}, ninf{0xfc00}, nz{0x8000}, pz{0x0000}, big{0x7bff}, nbig{0xfbff};
  at(4321, 3) = nan;
  at(17, 11) = inf;
  at(4999, 20) = ninf;
  at(100, 30) = inf, at(4100, 30) = ninf;
  for (std::int64_t i = 0; i < rows; ++i) {
    at(i, 40) = nz;
    at(i, 41) = i % 2 ? nz : pz;
    at(i, 42) = i % 2 ? big : nbig;  // (2500 of each: an exact zero, +0.0)
  }
  buffer<float16> bh(backend::cuda, h);
  tally::matrix_ref m{bh.data(), rows, cols, cols, 1, dtype::float16, tally::memory::unknown};
  auto bits = [](double d) { std::uint64_t b; std::memcpy(&b, &d, 8); return b; };
  for (const dtype out : {dtype::float32, dtype::float64}) {
    for (int what = 0; what < 3; ++what) {  // (exact sum, fast sum, mean)
      SCOPED_TRACE(std::string(out == dtype::float32 ? "float32" : "float64") + (what == 0 ? " exact sum" : what == 1 ? " fast sum" : " mean"));
      tally::options oo = o;
      oo.accuracy = what == 1 ? tally::accuracy::fast : tally::accuracy::exact;
      buffer<double> a(backend::cuda, static_cast<std::size_t>(cols), 7.0), b(backend::cuda, static_cast<std::size_t>(cols), 7.0);
      buffer<std::int64_t> status(backend::cuda, 2, 5);
      const tally::mutable_array_ref ra{a.data(), cols, out, tally::memory::unknown}, rb{b.data(), cols, out, tally::memory::unknown};
      if (what == 2) {
        tally::mean_axis(m, 0, rb, oo);
        tally::mean_axis_async(m, 0, ra, status.data(), oo);
      } else {
        tally::reduce_axis(tally::reduce_op::sum, m, 0, rb, oo);
        tally::reduce_axis_async(tally::reduce_op::sum, m, 0, ra, status.data(), oo);
      }
      const std::vector<double> va = a.read(), vb = b.read();
      EXPECT_EQ(status.read(), (std::vector<std::int64_t>{-1, -1}));
      auto value = [&](const std::vector<double>& v, std::int64_t j) { return output_value(v, out, j); };
      for (std::int64_t j = 0; j < cols; ++j) {
        ASSERT_EQ(bits(value(va, j)), bits(value(vb, j))) << "column " << j;
      }
      for (std::int64_t j : {3, 30}) EXPECT_TRUE(std::isnan(value(vb, j))) << "column " << j;
      EXPECT_EQ(value(vb, 11), INFINITY);
      EXPECT_EQ(value(vb, 20), -INFINITY);
      EXPECT_EQ(bits(value(vb, 40)), bits(-0.0));
      EXPECT_EQ(bits(value(vb, 41)), bits(0.0));
      EXPECT_EQ(bits(value(vb, 42)), bits(0.0));
    }
  }
}

// float16 row and segment sums and means, stream-ordered and blocking against the cpu backend
// (CUDA only). By default (plan f16_in_place=1, since run 192) the fixed-point kernels
// classify an output's infinities and NaNs on the device (f16_fixed_op::write reads an output
// whose state saw one again), so both forms read in place; under f16_in_place=0
// (ShapesNarrowF16Widened.cuda) the stream-ordered ones take the widened copy and the blocking
// ones with a special send the call there. 264 rows of 5000 (and 5000 x 264:
// rows of one 16-byte vector's 8 elements 33 times) with special rows: a NaN last, +inf,
// -inf, both infinities, all -0.0, -0.0 and +0.0 mixed, +-65504 cancelling, -inf and a NaN
// first; then the same elements as uneven segments (empty ones, one of 300,000) with the
// specials inside. Exact sums and means as float32 and float64: the cpu backend's bits.
TEST(ShapesNarrowAsync, Float16RowAndSegmentSumsAndMeansOfSpecials) {
  TT_REQUIRE_BACKEND(backend::cuda);
  const float16 nan{0x7e00}, inf{0x7c00}, ninf{0xfc00}, nz{0x8000}, pz{0x0000}, big{0x7bff}, nbig{0xfbff};
  auto bits = [](double d) { std::uint64_t b; std::memcpy(&b, &d, 8); return b; };
  struct shape { std::int64_t rows, cols; };
  for (const shape sh : {shape{264, 5000}, shape{5000, 264}}) {
    const std::int64_t rows = sh.rows, cols = sh.cols;
    std::vector<float16> h = gen<float16>(rows * cols, 78);
    auto at = [&](std::int64_t i, std::int64_t j) -> float16& { return h[static_cast<std::size_t>(i * cols + j)]; };
    at(3, cols - 1) = nan;
    at(11, 17) = inf;
    at(20, cols / 2) = ninf;
    at(30, 100) = inf, at(30, cols - 100) = ninf;
    for (std::int64_t j = 0; j < cols; ++j) {
      at(40, j) = nz;
      at(41, j) = j % 2 ? nz : pz;
      at(42, j) = j % 2 ? big : nbig;  // (as many of each: an exact zero, +0.0)
    }
    at(50, 0) = ninf, at(50, 1) = nan;
    // segments over the same elements: uneven, empty ones, one long, specials inside
    std::vector<std::int64_t> off{0};
    const std::int64_t n = rows * cols;
    for (int s = 0; off.back() < n; ++s) {
      const std::int64_t len = s == 7 ? 300000 : s % 5 == 2 ? 0 : 1 + (s * 7919) % 4000;
      off.push_back(std::min(n, off.back() + len));
    }
    buffer<float16> bh(backend::cuda, h);
    buffer<std::int64_t> boff(backend::cuda, off);
    const std::int64_t segs = static_cast<std::int64_t>(off.size()) - 1;
    for (const bool seg : {false, true}) {
      const std::int64_t m = seg ? segs : rows;
      for (const dtype out : {dtype::float32, dtype::float64}) {
        for (const bool mean : {false, true}) {
          SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols) + (seg ? " as segments, " : " rows, ") +
                       (out == dtype::float32 ? "float32" : "float64") + (mean ? " mean" : " exact sum"));
          tally::options o;
          o.accuracy = tally::accuracy::exact;
          std::vector<double> want(static_cast<std::size_t>(m), 7.0);
          buffer<double> a(backend::cuda, static_cast<std::size_t>(m), 7.0), b(backend::cuda, static_cast<std::size_t>(m), 7.0);
          buffer<std::int64_t> status(backend::cuda, 2, 5);
          const tally::mutable_array_ref rw{want.data(), m, out, tally::memory::host}, ra{a.data(), m, out, tally::memory::unknown},
              rb{b.data(), m, out, tally::memory::unknown};
          auto go = [&](const tally::options& oo, const tally::mutable_array_ref& r, bool async, const void* x, const std::int64_t* offs) {
            const tally::array_ref flat{x, n, dtype::float16, tally::memory::unknown};
            const tally::matrix_ref mat{x, rows, cols, cols, 1, dtype::float16, tally::memory::unknown};
            std::int64_t* st = async ? status.data() : nullptr;
            if (seg && mean) async ? tally::mean_segments_async(flat, offs, segs, r, st, oo) : tally::mean_segments(flat, offs, segs, r, oo);
            else if (seg) async ? tally::reduce_segments_async(tally::reduce_op::sum, flat, offs, segs, r, st, oo)
                                : tally::reduce_segments(tally::reduce_op::sum, flat, offs, segs, r, oo);
            else if (mean) async ? tally::mean_axis_async(mat, 1, r, st, oo) : tally::mean_axis(mat, 1, r, oo);
            else async ? tally::reduce_axis_async(tally::reduce_op::sum, mat, 1, r, st, oo) : tally::reduce_axis(tally::reduce_op::sum, mat, 1, r, oo);
          };
          tally::options cpu = o, gpu = o;
          cpu.backend = backend::cpu;
          gpu.backend = backend::cuda;
          go(cpu, rw, false, h.data(), off.data());
          go(gpu, rb, false, bh.data(), boff.data());
          go(gpu, ra, true, bh.data(), boff.data());
          const std::vector<double> va = a.read(), vb = b.read();
          EXPECT_EQ(status.read(), (std::vector<std::int64_t>{-1, -1}));
          auto value = [&](const std::vector<double>& v, std::int64_t j) { return output_value(v, out, j); };
          for (std::int64_t j = 0; j < m; ++j) {
            ASSERT_EQ(bits(value(vb, j)), bits(value(want, j))) << "output " << j << " (blocking): " << value(vb, j) << " against " << value(want, j);
            ASSERT_EQ(bits(value(va, j)), bits(value(want, j))) << "output " << j << " (stream-ordered): " << value(va, j) << " against " << value(want, j);
          }
          if (!seg) {
            for (std::int64_t j : {3, 30, 50}) EXPECT_TRUE(std::isnan(value(vb, j))) << "row " << j;
            EXPECT_EQ(value(vb, 11), INFINITY);
            EXPECT_EQ(value(vb, 20), -INFINITY);
            if (!mean) {
              EXPECT_EQ(bits(value(vb, 40)), bits(-0.0));
              EXPECT_EQ(bits(value(vb, 41)), bits(0.0));
              EXPECT_EQ(bits(value(vb, 42)), bits(0.0));
            }
          }
        }
      }
    }
  }
}

// Exact bfloat16 sums and means, stream-ordered (CUDA only): since the sixtieth session (plan
// half_gated=1) the certified pass reads x in place and the widened copy and the exact kernels
// behind it run only when its verdict, read on the device, refused an output (plan
// half_gated=0: the whole call on the copy; the test passes either way). Two data sets of 264
// x 5000 and 5000 x 264 elements: random values over 2^-60..2^61 (every output proved: the gate
// stays closed) and the same with refused outputs (a NaN, +inf, both infinities, a row of
// -0.0, 2^100 + 1 - 2^100 in a row of zeros, and a column of ones holding 2^100 and -2^100:
// the gate opens). Rows, columns and uneven segments (empty ones, one of 300,000 elements) of
// those elements, sums and means as float32 and float64: the stream-ordered and the blocking
// results have the cpu backend's bits (exact: the correctly rounded value) and the status
// reads [-1, -1]. Then eight calls queued before one wait (gates open and closed in turn, one
// copy reused) and bad offsets with refused outputs behind them: the status names the first
// bad entry and no overflow, and a good call after it clears it.
TEST(ShapesNarrowAsync, Bfloat16ExactSumsAndMeansBehindTheGate) {
  TT_REQUIRE_BACKEND(backend::cuda);
  const bfloat16 nan{0x7fc0}, inf{0x7f80}, ninf{0xff80}, nz{0x8000}, pz{0x0000}, one{0x3f80}, big{0x7180}, nbig{0xf180};
  auto bits = [](double d) { std::uint64_t b; std::memcpy(&b, &d, 8); return b; };
  struct shape { std::int64_t rows, cols; };
  struct job { bool seg; int axis; dtype out; bool mean; };
  for (const shape sh : {shape{264, 5000}, shape{5000, 264}}) {
    const std::int64_t rows = sh.rows, cols = sh.cols, n = rows * cols;
    std::vector<bfloat16> clean = gen<bfloat16>(n, 91), special = clean;
    auto at = [&](std::int64_t i, std::int64_t j) -> bfloat16& { return special[static_cast<std::size_t>(i * cols + j)]; };
    for (std::int64_t i = 0; i < rows; ++i) at(i, 7) = one;
    at(60, 7) = big, at(61, 7) = nbig;  // (column 7: rows - 4 ones once rows 40 and 50 are set below, far below the pass's bound)
    at(3, 3) = nan;
    at(11, 17) = inf;
    at(30, 100) = inf, at(30, 101) = ninf;
    for (std::int64_t j = 0; j < cols; ++j) {
      at(40, j) = nz;
      at(50, j) = pz;
    }
    at(50, 0) = big, at(50, 1) = one, at(50, 2) = nbig;  // (row 50: exactly 1)
    std::vector<std::int64_t> off{0};
    for (int s = 0; off.back() < n; ++s) {
      const std::int64_t len = s == 7 ? 300000 : s % 5 == 2 ? 0 : 1 + (s * 7919) % 4000;
      off.push_back(std::min(n, off.back() + len));
    }
    const std::int64_t segs = static_cast<std::int64_t>(off.size()) - 1;
    buffer<std::int64_t> boff(backend::cuda, off);
    auto outputs = [&](const job& jb) { return jb.seg ? segs : jb.axis == 0 ? cols : rows; };
    // one call of job jb over x (host or device data) into r; st: the status words (stream-ordered) or null
    auto go = [&](const job& jb, backend be, const void* x, const std::int64_t* offs, const tally::mutable_array_ref& r, std::int64_t* st) {
      tally::options o;
      o.accuracy = tally::accuracy::exact;
      o.backend = be;
      const tally::array_ref flat{x, n, dtype::bfloat16, tally::memory::unknown};
      const tally::matrix_ref mat{x, rows, cols, cols, 1, dtype::bfloat16, tally::memory::unknown};
      if (jb.seg && jb.mean) st ? tally::mean_segments_async(flat, offs, segs, r, st, o) : tally::mean_segments(flat, offs, segs, r, o);
      else if (jb.seg) st ? tally::reduce_segments_async(tally::reduce_op::sum, flat, offs, segs, r, st, o)
                          : tally::reduce_segments(tally::reduce_op::sum, flat, offs, segs, r, o);
      else if (jb.mean) st ? tally::mean_axis_async(mat, jb.axis, r, st, o) : tally::mean_axis(mat, jb.axis, r, o);
      else st ? tally::reduce_axis_async(tally::reduce_op::sum, mat, jb.axis, r, st, o)
              : tally::reduce_axis(tally::reduce_op::sum, mat, jb.axis, r, o);
    };
    auto cpu_want = [&](const job& jb, const std::vector<bfloat16>& h) {
      const std::int64_t m = outputs(jb);
      std::vector<double> want(static_cast<std::size_t>(m), 7.0);
      go(jb, backend::cpu, h.data(), off.data(), {want.data(), m, jb.out, tally::memory::host}, nullptr);
      return want;
    };
    std::vector<job> jobs;
    for (const bool seg : {false, true})
      for (const int axis : seg ? std::vector<int>{1} : std::vector<int>{0, 1})
        for (const dtype out : {dtype::float32, dtype::float64})
          for (const bool mean : {false, true}) jobs.push_back({seg, axis, out, mean});
    for (const bool refused : {false, true}) {
      const std::vector<bfloat16>& h = refused ? special : clean;
      buffer<bfloat16> bh(backend::cuda, h);
      for (const job& jb : jobs) {
        SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols) + (refused ? " with refused outputs, " : ", ") +
                     (jb.seg ? "segments, " : jb.axis == 0 ? "columns, " : "rows, ") +
                     (jb.out == dtype::float32 ? "float32" : "float64") + (jb.mean ? " mean" : " exact sum"));
        const std::int64_t m = outputs(jb);
        const std::vector<double> want = cpu_want(jb, h);
        buffer<double> a(backend::cuda, static_cast<std::size_t>(m), 7.0), b(backend::cuda, static_cast<std::size_t>(m), 7.0);
        buffer<std::int64_t> status(backend::cuda, 2, 5);
        go(jb, backend::cuda, bh.data(), boff.data(), {b.data(), m, jb.out, tally::memory::unknown}, nullptr);
        go(jb, backend::cuda, bh.data(), boff.data(), {a.data(), m, jb.out, tally::memory::unknown}, status.data());
        const std::vector<double> va = a.read(), vb = b.read();
        EXPECT_EQ(status.read(), (std::vector<std::int64_t>{-1, -1}));
        auto value = [&](const std::vector<double>& v, std::int64_t j) { return output_value(v, jb.out, j); };
        for (std::int64_t j = 0; j < m; ++j) {
          ASSERT_EQ(bits(value(vb, j)), bits(value(want, j))) << "output " << j << " (blocking): " << value(vb, j) << " against " << value(want, j);
          ASSERT_EQ(bits(value(va, j)), bits(value(want, j))) << "output " << j << " (stream-ordered): " << value(va, j) << " against " << value(want, j);
        }
        if (refused && !jb.seg && jb.axis == 1 && !jb.mean) {  // (the refused rows' IEEE results)
          EXPECT_TRUE(std::isnan(value(va, 3)));
          EXPECT_TRUE(std::isnan(value(va, 30)));
          EXPECT_EQ(value(va, 11), INFINITY);
          EXPECT_EQ(bits(value(va, 40)), bits(-0.0));
          EXPECT_EQ(value(va, 50), 1.0);
        }
        if (refused && !jb.seg && jb.axis == 0 && !jb.mean) {
          EXPECT_EQ(value(va, 7), static_cast<double>(rows - 4));  // (rows 40 and 50 hold zeros there, 60 and 61 cancel)
          EXPECT_EQ(value(va, 100), INFINITY);
          EXPECT_EQ(value(va, 101), -INFINITY);
        }
      }
    }
    // eight calls queued before one wait, refused and proved outputs in turn
    {
      buffer<bfloat16> bc(backend::cuda, clean), bs(backend::cuda, special);
      std::vector<std::pair<job, bool>> q;
      for (int k = 0; k < 8; ++k) q.push_back({jobs[static_cast<std::size_t>((3 * k + 1) % jobs.size())], (k + k / 4) % 2 == 0});
      std::deque<buffer<double>> outs;  // (deque: the buffers are not moved)
      std::deque<buffer<std::int64_t>> sts;
      for (const auto& [jb, refused] : q) {
        outs.emplace_back(backend::cuda, static_cast<std::size_t>(outputs(jb)), 7.0);
        sts.emplace_back(backend::cuda, 2, 5);
      }
      for (std::size_t k = 0; k < q.size(); ++k)
        go(q[k].first, backend::cuda, (q[k].second ? bs : bc).data(), boff.data(),
           {outs[k].data(), outputs(q[k].first), q[k].first.out, tally::memory::unknown}, sts[k].data());
      for (std::size_t k = 0; k < q.size(); ++k) {
        SCOPED_TRACE("queued call " + std::to_string(k));
        const job& jb = q[k].first;
        const std::vector<double> want = cpu_want(jb, q[k].second ? special : clean), got = outs[k].read();
        EXPECT_EQ(sts[k].read(), (std::vector<std::int64_t>{-1, -1}));
        for (std::int64_t j = 0; j < outputs(jb); ++j)
          ASSERT_EQ(bits(output_value(got, jb.out, j)), bits(output_value(want, jb.out, j))) << "output " << j;
      }
    }
    // bad offsets behind refused outputs: the first bad entry and no overflow; then a good call clears it
    {
      buffer<bfloat16> bs(backend::cuda, special);
      buffer<std::int64_t> status(backend::cuda, 2, 5);
      buffer<double> a(backend::cuda, static_cast<std::size_t>(segs), 7.0);
      std::vector<std::int64_t> bad = off;
      bad[9] = bad[8] - 1;  // (decreasing, just past the long segment)
      buffer<std::int64_t> bbad(backend::cuda, bad);
      const job jb{true, 1, dtype::float64, false};
      go(jb, backend::cuda, bs.data(), bbad.data(), {a.data(), segs, dtype::float64, tally::memory::unknown}, status.data());
      EXPECT_EQ(status.read(), (std::vector<std::int64_t>{9, -1}));
      go(jb, backend::cuda, bs.data(), boff.data(), {a.data(), segs, dtype::float64, tally::memory::unknown}, status.data());
      EXPECT_EQ(status.read(), (std::vector<std::int64_t>{-1, -1}));
      const std::vector<double> want = cpu_want(jb, special), got = a.read();
      for (std::int64_t j = 0; j < segs; ++j) ASSERT_EQ(bits(got[static_cast<std::size_t>(j)]), bits(want[static_cast<std::size_t>(j)])) << "segment " << j;
    }
  }
}

}  // namespace
}  // namespace tt
