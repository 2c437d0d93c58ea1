// Values of sum, dot and add for every element type on every backend: known exact results,
// empty and tiny inputs, lengths around every block / tile / chunk boundary, misaligned
// views, random data against the reference, determinism.
#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "reference.hpp"
#include "support.hpp"

namespace tt {
namespace {

constexpr dtype kAllTypes[] = {dtype::float32, dtype::float64, dtype::int32, dtype::int64};

// ---- the teaching examples and small known values ----------------------------------------

// dot of a[i] = i and b[i] = 2i, N = 33 * 1024: exactly 2 * sum i^2 = 25723564731392 (< 2^53,
// and every product and partial sum is an integer < 2^53, so the float64 accumulation is
// exact in any order). float64 and the integer types return it exactly; float32 returns its
// float32 rounding, 25723565768704.
TEST_P(Typed, TeachingDot33K) {
  with_type(t(), [&]<class T>() {
    const std::int64_t n = 33 * 1024;
    std::vector<T> a(n), b(n);
    for (std::int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<T>(i);
      b[i] = static_cast<T>(2 * i);
    }
    const std::int64_t exact = 25723564731392;
    ASSERT_EQ(exact_dot(a.data(), b.data(), n).value, exact);
    auto got = dot(a, b);
    EXPECT_TRUE(same_bits(got, exact_as<T>(exact)));
    if constexpr (std::is_same_v<T, float>) {
      EXPECT_EQ(got, 25723565768704.0f);
    }
  });
}

// sum of 2^20 ones is 1048576 in every type.
TEST_P(Typed, SumOfMillionOnes) {
  with_type(t(), [&]<class T>() {
    std::vector<T> x(1 << 20, T(1));
    EXPECT_TRUE(same_bits(sum(x), exact_as<T>(1048576)));
    EXPECT_TRUE(same_bits(dot(x, x), exact_as<T>(1048576)));
  });
}

TEST_P(Typed, SmallKnownValues) {
  with_type(t(), [&]<class T>() {
    auto iota = [](int n) {
      std::vector<T> v(n);
      for (int i = 0; i < n; ++i) v[i] = static_cast<T>(i + 1);
      return v;
    };
    EXPECT_TRUE(same_bits(sum(iota(10)), exact_as<T>(55)));
    EXPECT_TRUE(same_bits(sum(iota(48)), exact_as<T>(1176)));
    EXPECT_TRUE(same_bits(sum(std::vector<T>{1, 2}), exact_as<T>(3)));
    EXPECT_TRUE(same_bits(sum(iota(31)), exact_as<T>(496)));
    EXPECT_TRUE(same_bits(sum(iota(32)), exact_as<T>(528)));
    EXPECT_TRUE(same_bits(sum(iota(33)), exact_as<T>(561)));
    EXPECT_TRUE(same_bits(dot(std::vector<T>{1, 2, 3, 4}, std::vector<T>{1, 1, 1, 1}), exact_as<T>(10)));
    EXPECT_TRUE(add_matches(add(iota(5), iota(5)), iota(5), iota(5)));
  });
}

TEST_P(Typed, EmptyInput) {
  with_type(t(), [&]<class T>() {
    std::vector<T> none;
    auto s = sum(none);
    auto d = dot(none, none);
    EXPECT_TRUE(same_bits(s, tally::result_t<T>(0)));  // +0.0 for floating types
    EXPECT_TRUE(same_bits(d, tally::result_t<T>(0)));
    // Null data with length 0 is valid, on every argument.
    EXPECT_TRUE(same_bits(tally::sum<T>({nullptr, 0}, opt()), tally::result_t<T>(0)));
    EXPECT_TRUE(same_bits(tally::dot<T>({nullptr, 0}, {nullptr, 0}, opt()), tally::result_t<T>(0)));
    tally::add<T>({nullptr, 0}, {nullptr, 0}, tally::view<T>{nullptr, 0}, opt());
    // add of nothing writes nothing: the element after the (empty) view keeps its value.
    buffer<T> x(b(), 1, T(5)), y(b(), 1, T(6)), out(b(), 1, T(9));
    tally::add<T>({x.data(), 0}, {y.data(), 0}, tally::view<T>{out.data(), 0}, opt());
    EXPECT_EQ(out.read()[0], T(9));
  });
}

// Lengths 1, 2, 3 and small primes; "Tiny" in the name: the device-check script runs these
// under compute-sanitizer.
TEST_P(Typed, TinyLengths) {
  with_type(t(), [&]<class T>() {
    EXPECT_TRUE(same_bits(sum(std::vector<T>{T(42)}), exact_as<T>(42)));
    EXPECT_TRUE(same_bits(dot(std::vector<T>{T(42)}, std::vector<T>{T(2)}), exact_as<T>(84)));
    EXPECT_TRUE(add_matches(add(std::vector<T>{T(42)}, std::vector<T>{T(-2)}), {T(42)}, {T(-2)}));
    for (std::int64_t n : {1, 2, 3, 5, 7, 11, 13, 17, 31, 61, 127, 257, 509, 1021}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      auto x = ramp<T>(n, 0), y = ramp<T>(n, 1);
      EXPECT_TRUE(same_bits(sum(x), exact_as<T>(exact_sum(x.data(), n).value)));
      EXPECT_TRUE(same_bits(dot(x, y), exact_as<T>(exact_dot(x.data(), y.data(), n).value)));
      EXPECT_TRUE(add_matches(add(x, y), x, y));
    }
  });
}

// ---- lengths around every boundary of both backends --------------------------------------

// CUDA: 256-thread blocks, 16-byte vectors (V = 16 / sizeof(T) elements), 4 vectors in flight
// per thread for reductions (2 for add), grid capped at SMs * 8 blocks. CPU: chunks of 32768
// elements, 8 lanes, one thread below 65536 elements.
template <class T> std::vector<std::int64_t> boundary_sizes() {
  const std::int64_t V = 16 / sizeof(T);
  const std::int64_t G = static_cast<std::int64_t>(grid_sms()) * 8;
  std::set<std::int64_t> s;
  auto around = [&](std::int64_t c) {
    for (std::int64_t d : {-1, 0, 1})
      if (c + d >= 0) s.insert(c + d);
  };
  for (std::int64_t c : {V, 2 * V, std::int64_t(8), std::int64_t(16), std::int64_t(32), std::int64_t(256),
                         std::int64_t(1024), std::int64_t(4096), std::int64_t(256 * 4 * 4)})
    around(c);
  around(256 * V);          // one vector per thread of one block
  around(256 * 4 * V);      // one unrolled reduce step of one block
  around(256 * 2 * V);      // one unrolled add step of one block
  around(G * 256 * V);      // the capped grid, one vector per thread
  around(G * 256 * 2 * V);  // the capped grid, one unrolled add step
  around(G * 256 * 4 * V);  // the capped grid, one unrolled reduce step (132*8*256*4*4 floats)
  s.insert(G * 256 * 4 * V + V);
  s.insert(G * 256 * 4 * V + 256 * V + 3);  // a second, partial grid-stride pass
  for (std::int64_t c : {32768, 65536, 3 * 32768}) around(c);  // CPU chunk / parallel threshold
  s.insert(127);
  s.insert(128 * 128 + 1);
  std::mt19937_64 g(20261130);
  for (int i = 0; i < 3; ++i) s.insert(std::uniform_int_distribution<std::int64_t>(1, 3'000'000)(g));
  return {s.begin(), s.end()};
}

// Integer-valued data: every result is exact, so any lost or repeated element shows; add
// must also leave the element just past the end alone. One array of the largest size is
// uploaded once and read through prefix views.
TEST_P(Typed, BoundarySizes) {
  with_type(t(), [&]<class T>() {
    const auto sizes = boundary_sizes<T>();  // ascending
    const std::int64_t max_n = sizes.back();
    const auto x = ramp<T>(max_n, 0), y = ramp<T>(max_n, 1);
    auto bx = put(x), by = put(y);
    buffer<T> bo(b(), static_cast<std::size_t>(max_n) + 1, T(0));
    const T sentinel = T(12345);  // no x + y equals it
    i128 ps = 0, pd = 0;
    std::int64_t done = 0;
    int failures = 0;
    for (std::int64_t n : sizes) {
      for (; done < n; ++done) {
        ps += x[done];
        pd += static_cast<i128>(x[done]) * y[done];
      }
      SCOPED_TRACE("n=" + std::to_string(n));
      const tally::view<const T> vx{bx.data(), n}, vy{by.data(), n};
      auto rs = same_bits(tally::sum<T>(vx, opt()), exact_as<T>(static_cast<std::int64_t>(ps)));
      auto rd = same_bits(tally::dot<T>(vx, vy, opt()), exact_as<T>(static_cast<std::int64_t>(pd)));
      bo.set(0, n + 1, sentinel);
      tally::add<T>(vx, vy, tally::view<T>{bo.data(), n}, opt());
      auto got = bo.read(0, n + 1);
      auto ra = add_matches(got.data(), x.data(), y.data(), n);
      bool past = got[n] == sentinel;
      EXPECT_TRUE(rs) << "sum";
      EXPECT_TRUE(rd) << "dot";
      EXPECT_TRUE(ra) << "add";
      EXPECT_TRUE(past) << "add wrote out[n]";
      if (!(rs && rd && ra && past) && ++failures >= 6) FAIL() << "stopping after 6 failing sizes";
    }
  });
}

// ---- misaligned views ---------------------------------------------------------------------

// Views starting 1, 2, 3 elements (4-byte types) or 1 element (8-byte types) past a 256-byte
// boundary: the CUDA backend then reads a scalar head before its 16-byte vectors, or falls
// back to scalar loads when x and y (and out) are misaligned differently.
TEST_P(Typed, MisalignedViews) {
  with_type(t(), [&]<class T>() {
    const std::size_t V = 16 / sizeof(T);
    const std::vector<std::int64_t> sizes = {1, 2, 3, 4, 5, 7, 8, 9, 31, 1023, 1025, 4097, 100003, 1000001};
    const std::int64_t max_n = sizes.back();
    const auto x = ramp<T>(max_n, 0), y = ramp<T>(max_n, 1);
    const T sentinel = T(12345);
    std::vector<buffer<T>> bx, by, bo;  // one copy per misalignment
    for (std::size_t o = 0; o < V; ++o) {
      bx.emplace_back(b(), x, o);
      by.emplace_back(b(), y, o);
      bo.emplace_back(b(), static_cast<std::size_t>(max_n) + 1, T(0), o);
    }
    i128 ps = 0, pd = 0;
    std::int64_t done = 0;
    for (std::int64_t n : sizes) {
      for (; done < n; ++done) {
        ps += x[done];
        pd += static_cast<i128>(x[done]) * y[done];
      }
      const auto want_s = exact_as<T>(static_cast<std::int64_t>(ps));
      const auto want_d = exact_as<T>(static_cast<std::int64_t>(pd));
      auto add_into = [&](std::size_t ox, std::size_t oy, std::size_t oo) {
        bo[oo].set(0, n + 1, sentinel);
        tally::add<T>({bx[ox].data(), n}, {by[oy].data(), n}, tally::view<T>{bo[oo].data(), n}, opt());
        auto got = bo[oo].read(0, n + 1);
        EXPECT_TRUE(add_matches(got.data(), x.data(), y.data(), n)) << "add, out+" << oo;
        EXPECT_EQ(got[n], sentinel) << "add wrote out[n], out+" << oo;
      };
      for (std::size_t ox = 0; ox < V; ++ox) {
        for (std::size_t oy : {ox, (ox + 1) % V}) {  // same misalignment, then a different one
          SCOPED_TRACE("n=" + std::to_string(n) + " x+" + std::to_string(ox) + " y+" + std::to_string(oy));
          if (oy == ox) {
            EXPECT_TRUE(same_bits(tally::sum<T>({bx[ox].data(), n}, opt()), want_s)) << "sum";
          }
          EXPECT_TRUE(same_bits(tally::dot<T>({bx[ox].data(), n}, {by[oy].data(), n}, opt()), want_d)) << "dot";
          add_into(ox, oy, (ox + 2) % V);  // out at yet another misalignment (when V > 2)
          if (oy == ox) add_into(ox, oy, ox);  // all three alike: vectors after a scalar head
        }
      }
    }
  });
}

// ---- random data against the reference ----------------------------------------------------

// Non-power-of-two sizes of every kind (primes, 2^k - 1, 2^k + small); with `random_too`
// also three random lengths up to 3M.
std::vector<std::int64_t> random_sizes(bool random_too, std::uint64_t seed) {
  std::vector<std::int64_t> v = {1, 2, 3, 5, 7, 13, 31, 61, 127, 257, 509, 1021, 4099, 8191,
                                 32767, 32771, 65537, 131071, 262147, 1000003};
  std::mt19937_64 g(seed);
  if (random_too)
    for (int i = 0; i < 3; ++i) v.push_back(std::uniform_int_distribution<std::int64_t>(2, 3'000'000)(g));
  return v;
}

// Floating: within the documented bound of the exact value (MPFR when available); integer:
// exactly the reference, or errc::overflow exactly when the exact result is outside int64.
TEST_P(Typed, RandomDataMatchesReference) {
  with_type(t(), [&]<class T>() {
    std::uint64_t seed = 1;
    for (dist d : {dist::uniform, dist::wide, dist::narrow}) {
      for (std::int64_t n : random_sizes(d == dist::uniform, 7 + sizeof(T))) {
        SCOPED_TRACE(std::string(dist_name(d)) + " n=" + std::to_string(n));
        auto x = random_values<T>(n, d, ++seed), y = random_values<T>(n, d, ++seed);
        auto bx = put(x), by = put(y);
        if constexpr (is_float_v<T>) {
          EXPECT_TRUE(within_bound(b(), tally::sum<T>(bx.in(), opt()), x)) << "sum";
          EXPECT_TRUE(within_bound(b(), tally::dot<T>(bx.in(), by.in(), opt()), x, y)) << "dot";
        } else {
          EXPECT_TRUE(matches_exact([&] { return tally::sum<T>(bx.in(), opt()); }, exact_sum(x.data(), n)))
              << "sum";
          EXPECT_TRUE(matches_exact([&] { return tally::dot<T>(bx.in(), by.in(), opt()); },
                                    exact_dot(x.data(), y.data(), n)))
              << "dot";
        }
        if (n <= 300000) {
          buffer<T> bo(b(), static_cast<std::size_t>(n), T(7));
          if constexpr (is_float_v<T>) {
            tally::add<T>(bx.in(), by.in(), bo.out(), opt());
            EXPECT_TRUE(add_matches(bo.read(), x, y)) << "add";
          } else {
            // Random integers can overflow element-wise; halve them so no element does.
            for (auto& e : x) e /= 2;
            for (auto& e : y) e /= 2;
            auto hx = put(x), hy = put(y);
            tally::add<T>(hx.in(), hy.in(), bo.out(), opt());
            EXPECT_TRUE(add_matches(bo.read(), x, y)) << "add";
          }
        }
      }
    }
  });
}

// ---- determinism --------------------------------------------------------------------------

TEST_P(Typed, SameCallSameBits) {
  with_type(t(), [&]<class T>() {
    for (std::int64_t n : {1000, 1000003}) {
      // (narrow integers: the integer dot stays inside int64)
      const dist d = is_float_v<T> ? dist::wide : dist::narrow;
      auto x = random_values<T>(n, d, 11), y = random_values<T>(n, d, 12);
      auto bx = put(x), by = put(y);
      auto s1 = tally::sum<T>(bx.in(), opt()), s2 = tally::sum<T>(bx.in(), opt());
      auto d1 = tally::dot<T>(bx.in(), by.in(), opt()), d2 = tally::dot<T>(bx.in(), by.in(), opt());
      EXPECT_TRUE(same_bits(s1, s2)) << "sum, n=" << n;
      EXPECT_TRUE(same_bits(d1, d2)) << "dot, n=" << n;
      // A copy of the data at the same alignment in other memory gives the same bits too.
      auto cx = put(x), cy = put(y);
      EXPECT_TRUE(same_bits(tally::sum<T>(cx.in(), opt()), s1)) << "sum of a copy, n=" << n;
      EXPECT_TRUE(same_bits(tally::dot<T>(cx.in(), cy.in(), opt()), d1)) << "dot of a copy, n=" << n;
    }
  });
}

// Blocking calls from several host threads at once (on the CUDA backend: half of them on the
// legacy default stream, which they share, half on their own streams).
TEST_P(Backend, ConcurrentCallsFromHostThreads) {
  const std::int64_t n = 100003;
  auto x = ramp<double>(n, 0), y = ramp<double>(n, 1);
  auto bx = put(x), by = put(y);
  const double want_s = static_cast<double>(exact_sum(x.data(), n).value);
  const double want_d = static_cast<double>(exact_dot(x.data(), y.data(), n).value);
  std::atomic<int> wrong{0}, thrown{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 6; ++k) {
    threads.emplace_back([&, k] {
      tally::options o = opt();
#if defined(TALLY_TEST_HAVE_CUDA)
      if (b() == backend::cuda && k % 2) o.stream = cuda::create_stream();
#endif
      try {
        for (int i = 0; i < 40; ++i) {
          const std::int64_t m = n - (k * 40 + i);  // a different length per call
          double s = tally::sum<double>({bx.data(), m}, o);
          double d = tally::dot<double>({bx.data(), n}, {by.data(), n}, o);
          double ws = want_s;
          for (std::int64_t j = m; j < n; ++j) ws -= x[j];  // exact: small integers
          if (s != ws || d != want_d) ++wrong;
        }
      } catch (...) {
        ++thrown;
      }
#if defined(TALLY_TEST_HAVE_CUDA)
      if (o.stream) cuda::destroy_stream(o.stream);
#endif
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(thrown.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, Typed,
                         ::testing::Combine(::testing::Values(backend::cpu, backend::cuda),
                                            ::testing::ValuesIn(kAllTypes)),
                         [](const auto& info) { return param_name(info); });

}  // namespace
}  // namespace tt
