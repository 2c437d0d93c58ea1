// Shared test support: buffers in a backend's memory, the backend fixtures, data generators,
// exact integer references and assertion helpers.
//
// Every library test is written once and instantiated for tally::backend::cpu and
// tally::backend::cuda. A cuda-param test calls GTEST_SKIP() << "no CUDA GPU" (from SetUp)
// when the build has no CUDA backend or no GPU is usable, so ctest reports it as Skipped.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tally/tally.hpp"

#if defined(TALLY_TEST_HAVE_CUDA)
#include "device_buffer.hpp"
#endif

// GoogleTest prints parameters with these ("GetParam() = cuda").
namespace tally {
inline void PrintTo(backend b, std::ostream* os) { *os << backend_name(b); }
inline void PrintTo(dtype t, std::ostream* os) { *os << dtype_name(t); }
}  // namespace tally

namespace tt {

using tally::backend;
using tally::dtype;
using tally::errc;
using i128 = __int128;

// ---- backends -----------------------------------------------------------------------------

/// Whether tests for backend `b` can run in this process.
inline bool runnable(backend b) {
  if (b != backend::cuda) return true;
#if defined(TALLY_TEST_HAVE_CUDA)
  return tally::cuda_available();
#else
  return false;
#endif
}

/// Why a backend cannot run (the skip message; it always starts with "no CUDA GPU").
inline const char* why_not(backend) {
#if defined(TALLY_TEST_HAVE_CUDA)
  return "no CUDA GPU";
#else
  return "no CUDA GPU (this build has no CUDA backend)";
#endif
}

/// In a test body or SetUp: skip the test (reported SKIPPED) when backend b cannot run here.
#define TT_REQUIRE_BACKEND(b) \
  do {                        \
    if (!::tt::runnable(b)) GTEST_SKIP() << ::tt::why_not(b); \
  } while (0)

/// Multiprocessors the CUDA grid-size boundaries are computed for: the device's when a GPU
/// is present, else an H200's 132.
int grid_sms();

// ---- memory -------------------------------------------------------------------------------

/// `bytes` bytes in the memory backend b reads (host for cpu, device for cuda), 256-byte
/// aligned, so `offset` elements past the start is an exactly known misalignment.
class storage {
 public:
  storage(backend b, std::size_t bytes);
  ~storage();
  storage(storage&&) noexcept;
  storage& operator=(storage&&) noexcept;
  storage(const storage&) = delete;
  storage& operator=(const storage&) = delete;

  std::byte* data() const { return p_; }
  void upload(std::size_t offset, const void* src, std::size_t n);
  void download(void* dst, std::size_t offset, std::size_t n) const;

 private:
  void release() noexcept;
  backend b_;
  std::byte* p_ = nullptr;
  std::size_t bytes_ = 0;
#if defined(TALLY_TEST_HAVE_CUDA)
  cuda::device_buffer dev_;
#endif
};

/// n elements of T in backend b's memory, starting `offset` elements past a 256-byte boundary.
template <class T> class buffer {
 public:
  buffer(backend b, const std::vector<T>& values, std::size_t offset = 0)
      : n_(values.size()), off_(offset), mem_(b, (offset + values.size() + 1) * sizeof(T)) {
    mem_.upload(off_ * sizeof(T), values.data(), n_ * sizeof(T));
  }
  /// n elements, each set to `fill`.
  buffer(backend b, std::size_t n, T fill, std::size_t offset = 0)
      : buffer(b, std::vector<T>(n, fill), offset) {}

  T* data() const { return reinterpret_cast<T*>(mem_.data()) + off_; }
  std::int64_t size() const { return static_cast<std::int64_t>(n_); }
  /// A read-only view; memory::unknown, so tally asks the CUDA runtime where it lives.
  tally::view<const T> in() const { return {data(), size()}; }
  tally::view<T> out() const { return {data(), size()}; }
  std::vector<T> read() const {
    std::vector<T> v(n_);
    mem_.download(v.data(), off_ * sizeof(T), n_ * sizeof(T));
    return v;
  }
  void write(const std::vector<T>& v) {
    mem_.upload(off_ * sizeof(T), v.data(), std::min(v.size(), n_) * sizeof(T));
  }
  /// Sets elements [first, first + count) to `value`.
  void set(std::size_t first, std::size_t count, T value) {
    if (first + count > n_) throw std::out_of_range("tt::buffer::set past the end");
    std::vector<T> v(count, value);
    mem_.upload((off_ + first) * sizeof(T), v.data(), count * sizeof(T));
  }
  /// Elements [first, first + count).
  std::vector<T> read(std::size_t first, std::size_t count) const {
    if (first + count > n_) throw std::out_of_range("tt::buffer::read past the end");
    std::vector<T> v(count);
    mem_.download(v.data(), (off_ + first) * sizeof(T), count * sizeof(T));
    return v;
  }

 private:
  std::size_t n_, off_;
  storage mem_;
};

// ---- fixtures -----------------------------------------------------------------------------

/// The helpers every fixture shares: run a call on the backend the parameter names, with
/// host vectors moved into that backend's memory. `backend_of(GetParam())` picks the backend.
template <class Param> class on_backend : public ::testing::TestWithParam<Param> {
 protected:
  static backend backend_of(backend b) { return b; }
  static backend backend_of(const std::tuple<backend, dtype>& p) { return std::get<0>(p); }

  void SetUp() override { TT_REQUIRE_BACKEND(b()); }
  backend b() const { return backend_of(this->GetParam()); }
  tally::options opt() const {
    tally::options o;
    o.backend = b();
    return o;
  }
  template <class T> buffer<T> put(const std::vector<T>& v, std::size_t offset = 0) const {
    return buffer<T>(b(), v, offset);
  }
  template <class T> tally::result_t<T> sum(const std::vector<T>& v) const {
    return tally::sum<T>(put(v).in(), opt());
  }
  template <class T> tally::result_t<T> dot(const std::vector<T>& x, const std::vector<T>& y) const {
    auto bx = put(x), by = put(y);
    return tally::dot<T>(bx.in(), by.in(), opt());
  }
  template <class T> std::vector<T> add(const std::vector<T>& x, const std::vector<T>& y) const {
    auto bx = put(x), by = put(y);
    buffer<T> bo(b(), x.size(), T(7));
    tally::add<T>(bx.in(), by.in(), bo.out(), opt());
    return bo.read();
  }
};

/// Parameter: the backend only.
class Backend : public on_backend<backend> {};

/// Parameter: backend x element type.
class Typed : public on_backend<std::tuple<backend, dtype>> {
 protected:
  dtype t() const { return std::get<1>(GetParam()); }
};

std::string param_name(const ::testing::TestParamInfo<backend>& info);
std::string param_name(const ::testing::TestParamInfo<std::tuple<backend, dtype>>& info);

/// Calls f.template operator()<T>() for the element type t.
template <class F> void with_type(dtype t, F&& f) {
  switch (t) {
    case dtype::float32: return f.template operator()<float>();
    case dtype::float64: return f.template operator()<double>();
    case dtype::int32: return f.template operator()<std::int32_t>();
    case dtype::int64: return f.template operator()<std::int64_t>();
    default: break;  // the other element types: tests/test_types.cpp
  }
}

/// The same for the nine other element types (float16, bfloat16, int8, int16, uint8, uint16,
/// uint32, uint64, bool); a failure for the first four.
template <class F> void with_small_type(dtype t, F&& f) {
  switch (t) {
    case dtype::float16: return f.template operator()<tally::float16>();
    case dtype::bfloat16: return f.template operator()<tally::bfloat16>();
    case dtype::int8: return f.template operator()<std::int8_t>();
    case dtype::int16: return f.template operator()<std::int16_t>();
    case dtype::uint8: return f.template operator()<std::uint8_t>();
    case dtype::uint16: return f.template operator()<std::uint16_t>();
    case dtype::uint32: return f.template operator()<std::uint32_t>();
    case dtype::uint64: return f.template operator()<std::uint64_t>();
    case dtype::bool_: return f.template operator()<bool>();
    default: FAIL() << "not one of the nine small element types";
  }
}

/// The same for the floating types only (t must be float32 or float64).
template <class F> void with_float_type(dtype t, F&& f) {
  if (t == dtype::float32) return f.template operator()<float>();
  if (t == dtype::float64) return f.template operator()<double>();
  FAIL() << "with_float_type: not a floating type";
}

template <class T> inline constexpr bool is_float_v = std::is_floating_point_v<T>;

// ---- the reference of a cuda instance -------------------------------------------------------

/// Options that force the cpu backend. A cuda instance of a correctly rounded operation is held
/// to the cpu backend's result for the same host data, bit for bit: the GPU machine has no MPFR,
/// and the cpu backend is itself held to MPFR wherever the tests build with it.
inline tally::options cpu_backend() {
  tally::options o;
  o.backend = backend::cpu;
  return o;
}

/// `want` unchanged; a failure when it is NaN. For finite data none of the references compared
/// bitwise here is NaN, and a NaN reference would let the comparison pass whatever the backend
/// under test returns (any NaN equals any NaN in same_bits).
template <class Out> Out not_nan(Out want, const char* what) {
  if (std::isnan(want)) ADD_FAILURE() << what << ": the reference is NaN for finite data";
  return want;
}

/// The reference of a correctly rounded result on backend b: on the cuda backend `on_cpu()`,
/// the cpu backend's result for the same host data (bit for bit, and never NaN: see not_nan);
/// on the cpu backend `oracle()` (MPFR). In a build without MPFR the cpu instances of such
/// tests skip, so reaching the oracle there is a failure, not a vacuous pass.
template <class OnCpu, class Oracle>
auto reference_of(backend b, const char* what, OnCpu&& on_cpu, Oracle&& oracle) -> decltype(on_cpu()) {
  if (b == backend::cuda) return not_nan(on_cpu(), what);
#if !defined(TALLY_TEST_HAVE_MPFR)
  ADD_FAILURE() << what << ": no MPFR oracle in this build (the cpu instance should have skipped)";
#endif
  return oracle();
}

// ---- data ---------------------------------------------------------------------------------

/// Deterministic integer-valued data: x-like (kind 0, values in [-1000, 1000]) or y-like
/// (kind 1, values in [-20, 20]). Every sum and dot of up to 2^32 of them is an integer below
/// 2^53, so it is exact in any order in a float64 accumulator, and exactly representable in
/// every element type.
template <class T> std::vector<T> ramp(std::int64_t n, int kind = 0) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t k = kind == 0 ? (i * 7919) % 2001 - 1000 : (i * 104729 + 3) % 41 - 20;
    v[static_cast<std::size_t>(i)] = static_cast<T>(k);
  }
  return v;
}

/// Random data. Floating: `uniform` is uniform in [-1, 1]; `wide` is +-m * 2^k with m uniform
/// in [1, 2) and k uniform in [-40, 40]. Integer: `uniform` is uniform over int32 (int32) or
/// [-2^40, 2^40] (int64); `wide` picks a bit width w uniform in [0, bits-2] and a value uniform
/// in [-2^w, 2^w]. Every type: `narrow` is integers uniform in [-2^20, 2^20].
enum class dist { uniform, wide, narrow };
inline const char* dist_name(dist d) {
  return d == dist::uniform ? "uniform" : d == dist::wide ? "wide" : "narrow";
}
template <class T> std::vector<T> random_values(std::int64_t n, dist d, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<T> v(static_cast<std::size_t>(n));
  if (d == dist::narrow) {
    std::uniform_int_distribution<std::int64_t> u(-(1 << 20), 1 << 20);
    for (auto& e : v) e = static_cast<T>(u(g));
  } else if constexpr (is_float_v<T>) {
    std::uniform_real_distribution<double> u(-1.0, 1.0), m(1.0, 2.0);
    std::uniform_int_distribution<int> k(-40, 40), s(0, 1);
    for (auto& e : v)
      e = d == dist::uniform ? static_cast<T>(u(g))
                             : static_cast<T>((s(g) ? -1.0 : 1.0) * std::ldexp(m(g), k(g)));
  } else {
    constexpr int bits = sizeof(T) * 8;
    for (auto& e : v) {
      if (d == dist::uniform) {
        if constexpr (bits == 32)
          e = static_cast<T>(static_cast<std::uint32_t>(g()));
        else
          e = std::uniform_int_distribution<std::int64_t>(-(std::int64_t(1) << 40), std::int64_t(1) << 40)(g);
      } else {
        int w = std::uniform_int_distribution<int>(0, bits - 2)(g);
        std::int64_t lim = std::int64_t(1) << w;
        e = static_cast<T>(std::uniform_int_distribution<std::int64_t>(-lim, lim)(g));
      }
    }
  }
  return v;
}

// ---- exact integer references -------------------------------------------------------------

/// An exact integer result: whether it fits int64, and its value when it does.
struct exact_int {
  bool fits;
  std::int64_t value;
};

template <class T> exact_int exact_sum(const T* x, std::int64_t n) {
  i128 s = 0;  // |sum| < 2^63 * 2^63: cannot wrap for n < 2^64
  for (std::int64_t i = 0; i < n; ++i) s += x[i];
  bool fits = s >= INT64_MIN && s <= INT64_MAX;
  return {fits, fits ? static_cast<std::int64_t>(s) : 0};
}

/// Exact dot of integer vectors: products are exact in 128 bits; the running sum counts its
/// wraps past 2^128 so it is exact whatever the length.
template <class T> exact_int exact_dot(const T* x, const T* y, std::int64_t n) {
  i128 s = 0;
  std::int64_t wraps = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    i128 p = static_cast<i128>(x[i]) * static_cast<i128>(y[i]);
    i128 r;
    if (__builtin_add_overflow(s, p, &r)) wraps += p > 0 ? 1 : -1;
    s = r;
  }
  bool fits = wraps == 0 && s >= INT64_MIN && s <= INT64_MAX;
  return {fits, fits ? static_cast<std::int64_t>(s) : 0};
}

/// The exact value v (an integer below 2^53 in magnitude, or any int64 for integer T) as the
/// library must return it: rounded once to T for floating T, int64 otherwise.
template <class T> tally::result_t<T> exact_as(std::int64_t v) {
  if constexpr (is_float_v<T>) return static_cast<T>(static_cast<long double>(v));
  else return v;
}

// ---- assertions ---------------------------------------------------------------------------

/// Bitwise equality of two floating values (distinguishes -0.0, any NaN equals any NaN).
template <class T> ::testing::AssertionResult same_bits(T got, T want) {
  if constexpr (is_float_v<T>) {
    if (std::isnan(got) && std::isnan(want)) return ::testing::AssertionSuccess();
    if (std::memcmp(&got, &want, sizeof(T)) == 0) return ::testing::AssertionSuccess();
    char buf[160];
    std::snprintf(buf, sizeof buf, "got %.17g (%a), want %.17g (%a)", double(got), double(got),
                  double(want), double(want));
    return ::testing::AssertionFailure() << buf;
  } else {
    if (got == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", want " << want;
  }
}

/// Runs f() and checks it throws tally::error with `code` and a message containing every
/// string of `words`.
template <class F>
::testing::AssertionResult throws_tally(F&& f, errc code, std::vector<std::string> words = {}) {
  try {
    f();
  } catch (const tally::error& e) {
    if (e.code() != code)
      return ::testing::AssertionFailure()
             << "threw tally::error with code " << static_cast<int>(e.code()) << " (want "
             << static_cast<int>(code) << "): " << e.what();
    for (const auto& w : words)
      if (std::string(e.what()).find(w) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << e.what() << "\" lacks \"" << w << "\"";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw (want tally::error code "
                                       << static_cast<int>(code) << ")";
}

/// An integer result against its exact reference: the value when it fits, errc::overflow
/// when it does not.
template <class F> ::testing::AssertionResult matches_exact(F&& f, exact_int want) {
  if (!want.fits) return throws_tally(f, errc::overflow, {"overflow"});
  std::int64_t got = 0;
  try {
    got = f();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw " << e.what() << " (want " << want.value << ")";
  }
  if (got == want.value) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want.value
                                       << " (diff " << (static_cast<i128>(got) - want.value > 0 ? "+" : "")
                                       << static_cast<long long>(static_cast<i128>(got) - want.value) << ")";
}

/// Element-wise IEEE / wrapped-integer reference of add, compared bitwise; reports the first
/// few mismatching indices.
template <class T>
::testing::AssertionResult add_matches(const T* got, const T* x, const T* y, std::size_t n) {
  std::size_t bad = 0;
  auto fail = ::testing::AssertionFailure();
  for (std::size_t i = 0; i < n; ++i) {
    T want;
    if constexpr (is_float_v<T>) want = x[i] + y[i];
    else want = static_cast<T>(static_cast<std::make_unsigned_t<T>>(x[i]) + static_cast<std::make_unsigned_t<T>>(y[i]));
    auto r = same_bits(got[i], want);
    if (!r && ++bad <= 5) fail << "[" << i << "] " << r.message() << "; ";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return fail << bad << " of " << n << " elements differ";
}

template <class T>
::testing::AssertionResult add_matches(const std::vector<T>& got, const std::vector<T>& x,
                                       const std::vector<T>& y) {
  if (got.size() != x.size() || y.size() != x.size())
    return ::testing::AssertionFailure() << "sizes " << got.size() << ", " << x.size() << ", " << y.size();
  return add_matches(got.data(), x.data(), y.data(), x.size());
}

}  // namespace tt
