// tally: vocabulary types of the public API (element types, views, options, errors).
// Using tally needs no CUDA header: a CUDA stream is passed as `stream_t`, which is the
// same type as `cudaStream_t` (both are `CUstream_st*`).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

struct CUstream_st;  // opaque; cudaStream_t is `CUstream_st*`

namespace tally {

/// A CUDA stream handle, identical to `cudaStream_t`. `nullptr` is the legacy default stream.
using stream_t = CUstream_st*;

#if defined(__CUDACC__)
#define TALLY_TYPES_HD __host__ __device__
#else
#define TALLY_TYPES_HD
#endif

/// Element types tally reads and writes. New types are appended, so the values of the
/// existing ones never change. Accumulator and result types of every operation:
/// docs/types.md. `bool_` is NumPy's bool (one byte, 0 or 1).
enum class dtype : int {
  float32, float64, int32, int64,                       // the first four (values 0-3)
  float16, bfloat16, int8, int16, uint8, uint16, uint32, uint64, bool_,
};
/// Number of dtype enumerators.
inline constexpr int dtype_count = 13;

/// Name of an element type as NumPy spells it ("float32", "int64", "bool", "bfloat16", ...).
const char* dtype_name(dtype t) noexcept;
/// Size of one element in bytes (0 for a value outside the enumeration).
std::size_t dtype_size(dtype t) noexcept;

/// IEEE 754 binary16 ("half", NumPy float16): 1 sign, 5 exponent, 10 fraction bits, stored
/// as its bit pattern; the same layout as CUDA's __half, so a `const __half*` may be passed
/// as a `const tally::float16*`. Every float16 value is exactly a float32 (to_float is exact,
/// NaN payloads kept); from_float rounds to nearest, ties to even (overflow to +-inf).
struct float16 {
  std::uint16_t bits;
};
/// bfloat16 ("brain float"): the upper 16 bits of a float32 (1 sign, 8 exponent, 7 fraction
/// bits), stored as its bit pattern; the same layout as CUDA's __nv_bfloat16. NumPy has no
/// bfloat16 dtype. to_float is exact (a shift); from_float rounds to nearest, ties to even.
struct bfloat16 {
  std::uint16_t bits;
};

/// The exact float32 value of a float16 (subnormals, infinities and NaN included).
TALLY_TYPES_HD constexpr float to_float(float16 h) {
  std::uint32_t s = static_cast<std::uint32_t>(h.bits >> 15) << 31;
  std::uint32_t e = (h.bits >> 10) & 0x1fu, m = h.bits & 0x3ffu;
  if (e == 0x1f) return __builtin_bit_cast(float, s | 0x7f800000u | (m << 13));  // inf, NaN
  if (e == 0) {  // zero or subnormal: m * 2^-24, exact in float32
    float v = static_cast<float>(m) * 5.9604644775390625e-08f;
    return s ? -v : v;
  }
  return __builtin_bit_cast(float, s | ((e + 112u) << 23) | (m << 13));
}
/// The exact float32 value of a bfloat16.
TALLY_TYPES_HD constexpr float to_float(bfloat16 h) {
  return __builtin_bit_cast(float, static_cast<std::uint32_t>(h.bits) << 16);
}
/// float32 -> float16, rounded to nearest, ties to even; NaN stays NaN (quiet).
TALLY_TYPES_HD constexpr float16 to_float16(float f) {
  std::uint32_t b = __builtin_bit_cast(std::uint32_t, f);
  std::uint16_t s = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  std::uint32_t a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return {static_cast<std::uint16_t>(s | 0x7e00u | ((a >> 13) & 0x3ffu))};
  if (a >= 0x477ff000u) return {static_cast<std::uint16_t>(s | 0x7c00u)};  // >= 65520: inf
  if (a < 0x38800000u) {  // below 2^-14: subnormal float16 (or zero); units of 2^-24
    int e = static_cast<int>(a >> 23);
    if (e < 102) return {s};  // below 2^-25: rounds to zero
    std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
    int shift = 126 - e;  // m * 2^(e-150) in units of 2^-24: m >> (126 - e)
    std::uint32_t q = m >> shift, r = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (r > half || (r == half && (q & 1u))) ++q;
    return {static_cast<std::uint16_t>(s | q)};
  }
  std::uint32_t q = a - 0x38000000u;  // rebias the exponent (127 -> 15)
  std::uint32_t r = q & 0x1fffu;
  q >>= 13;
  if (r > 0x1000u || (r == 0x1000u && (q & 1u))) ++q;  // a carry into the exponent is right
  return {static_cast<std::uint16_t>(s | q)};
}
/// float32 -> bfloat16, rounded to nearest, ties to even; NaN stays NaN (quiet).
TALLY_TYPES_HD constexpr bfloat16 to_bfloat16(float f) {
  std::uint32_t b = __builtin_bit_cast(std::uint32_t, f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((b >> 16) | 0x40u)};
  b += 0x7fffu + ((b >> 16) & 1u);
  return {static_cast<std::uint16_t>(b >> 16)};
}

template <class T> inline constexpr bool is_element_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16> ||
    std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int16_t> ||
    std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
    std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t> || std::is_same_v<T, bool>;

/// Floating element types: float, double, float16, bfloat16.
template <class T> inline constexpr bool is_floating_element_v =
    std::is_floating_point_v<T> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <class T> constexpr dtype dtype_of() {
  static_assert(is_element_v<T>,
                "tally: element type must be float, double, float16, bfloat16, int8/16/32/64_t, "
                "uint8/16/32/64_t or bool");
  if constexpr (std::is_same_v<T, float>) return dtype::float32;
  else if constexpr (std::is_same_v<T, double>) return dtype::float64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return dtype::int32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return dtype::int64;
  else if constexpr (std::is_same_v<T, float16>) return dtype::float16;
  else if constexpr (std::is_same_v<T, bfloat16>) return dtype::bfloat16;
  else if constexpr (std::is_same_v<T, std::int8_t>) return dtype::int8;
  else if constexpr (std::is_same_v<T, std::int16_t>) return dtype::int16;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return dtype::uint8;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return dtype::uint16;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return dtype::uint32;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return dtype::uint64;
  else return dtype::bool_;
}

/// Default result type of sum and dot for element type T (docs/types.md): T for float and
/// double; float for float16 and bfloat16 (never accumulated in 16 bits); int64 for signed
/// integers and bool (exact); uint64 for unsigned integers (exact).
template <class T> using result_t = std::conditional_t<
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>, float,
    std::conditional_t<std::is_floating_point_v<T>, T,
                       std::conditional_t<std::is_unsigned_v<T> && !std::is_same_v<T, bool>,
                                          std::uint64_t, std::int64_t>>>;

/// Default result type of mean for element type T: float for float, float16 and bfloat16;
/// double for everything else.
template <class T> using mean_t = std::conditional_t<
    std::is_same_v<T, float> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>, float, double>;

/// Where the bytes of a view live.
/// - unknown: ask the CUDA runtime (cudaPointerGetAttributes); host memory if there is no GPU.
/// - host: ordinary (pageable or pinned) host memory; only the CPU backend reads it.
/// - device: CUDA device memory (or managed memory); only the CUDA backend reads it.
enum class memory : int { unknown, host, device };

/// Which implementation runs a call.
/// - automatic: CUDA for device (and managed) memory, the CPU for host memory.
/// - cpu: the multithreaded CPU backend (OpenMP); data must be in host memory.
/// - cuda: the GPU backend; data must be in device memory and a GPU must be present.
enum class backend : int { automatic, cpu, cuda };

const char* backend_name(backend b) noexcept;

/// A contiguous 1-D view of `size` elements, shape (size,), starting at `data`.
/// `data` may be null only when `size` is 0; the `size` elements must be addressable (a size
/// whose bytes run past the end of the address space is errc::invalid_argument). Any alignment of `data` to its element type is
/// accepted (a view starting at x+1 is fine). Lengths and indices are 64-bit everywhere.
template <class T> struct view {
  T* data = nullptr;
  std::int64_t size = 0;
  memory where = memory::unknown;

  constexpr view() = default;
  constexpr view(T* p, std::int64_t n, memory m = memory::unknown) : data(p), size(n), where(m) {}
  template <class U, std::size_t E>
    requires std::is_convertible_v<U (*)[], T (*)[]>
  constexpr view(std::span<U, E> s, memory m = memory::host)
      : data(s.data()), size(static_cast<std::int64_t>(s.size())), where(m) {}
  template <class C>
    requires requires(C& c) { {c.data()} -> std::convertible_to<T*>; c.size(); }
  constexpr view(C& c, memory m = memory::host)  // e.g. std::vector<T>
      : data(c.data()), size(static_cast<std::int64_t>(c.size())), where(m) {}
  template <class U>
    requires (!std::is_same_v<U, T> && std::is_convertible_v<U (*)[], T (*)[]>)
  constexpr view(view<U> v) : data(v.data), size(v.size), where(v.where) {}
};

/// How floating sums and dot products are computed (integer results are always exact).
/// - exact (default): the exact mathematical sum of the inputs (products exact too), rounded
///   once to the output type, to nearest with ties to even. One right answer: every backend,
///   GPU and launch shape gives the same bits. Algorithm: float32 inputs in float64 exponent
///   bins (Demmel, Hida, SIAM J. Sci. Comput. 25(4), 2003), float64 inputs in anchored levels
///   (error-free extraction: Demmel, Nguyen, IEEE Trans. Computers 64(7), 2015; products by
///   TwoProduct: Ogita, Rump, Oishi, SIAM J. Sci. Comput. 26(6), 2005), what they cannot
///   hold in a Kulisch superaccumulator. See docs/exact.md.
/// - fast: a float64 accumulator tree, within the error bound documented on `sum`; the bits
///   can differ between backends and devices.
enum class accuracy : int { exact, fast };

/// Per-call options.
struct options {
  /// Which backend runs the call (see `backend`).
  tally::backend backend = backend::automatic;
  /// CUDA stream the work is ordered on (cudaStream_t; nullptr = legacy default stream).
  /// Ignored by the CPU backend.
  stream_t stream = nullptr;
  /// Floating sums and dots: exact (correctly rounded, the default) or fast.
  tally::accuracy accuracy = accuracy::exact;
};

/// Error codes carried by `tally::error`.
enum class errc : int {
  invalid_argument,  ///< a negative length, a partially overlapping output, an enum value out of range, ...
  length_mismatch,   ///< inputs of different lengths
  null_pointer,      ///< null data with nonzero length
  wrong_memory,      ///< host data given to the CUDA backend, or device data to the CPU backend
  overflow,          ///< an integer result that does not fit its type
  cuda_error,        ///< a CUDA runtime call failed (message names the call and the error)
  no_gpu,            ///< the CUDA backend was asked for with no usable GPU or without CUDA support
  empty_input,       ///< an operation with no answer for empty input (argmin, argmax of nothing)
};

/// The one exception type tally throws. `what()` names the problem; `code()` classifies it.
class error : public std::runtime_error {
 public:
  error(errc code, const std::string& what) : std::runtime_error(what), code_(code) {}
  errc code() const noexcept { return code_; }

 private:
  errc code_;
};

/// Calls `f(std::type_identity<T>{})` with T the C++ element type of `t` (float, double,
/// int32_t, int64_t, float16, bfloat16, int8_t, int16_t, uint8_t, uint16_t, uint32_t,
/// uint64_t, bool) and returns its result: the one switch over dtypes. A value outside the
/// enumeration throws errc::invalid_argument.
template <class F> decltype(auto) visit(dtype t, F&& f) {
  switch (t) {
    case dtype::float32: return f(std::type_identity<float>{});
    case dtype::float64: return f(std::type_identity<double>{});
    case dtype::int32: return f(std::type_identity<std::int32_t>{});
    case dtype::int64: return f(std::type_identity<std::int64_t>{});
    case dtype::float16: return f(std::type_identity<float16>{});
    case dtype::bfloat16: return f(std::type_identity<bfloat16>{});
    case dtype::int8: return f(std::type_identity<std::int8_t>{});
    case dtype::int16: return f(std::type_identity<std::int16_t>{});
    case dtype::uint8: return f(std::type_identity<std::uint8_t>{});
    case dtype::uint16: return f(std::type_identity<std::uint16_t>{});
    case dtype::uint32: return f(std::type_identity<std::uint32_t>{});
    case dtype::uint64: return f(std::type_identity<std::uint64_t>{});
    case dtype::bool_: return f(std::type_identity<bool>{});
  }
  throw error(errc::invalid_argument, "tally: unknown dtype value " + std::to_string(static_cast<int>(t)));
}

/// Whether t is float32, float64, float16 or bfloat16.
constexpr bool is_floating(dtype t) noexcept {
  return t == dtype::float32 || t == dtype::float64 || t == dtype::float16 || t == dtype::bfloat16;
}
/// Whether t is uint8, uint16, uint32 or uint64 (bool is not: it sums into int64).
constexpr bool is_unsigned(dtype t) noexcept {
  return t == dtype::uint8 || t == dtype::uint16 || t == dtype::uint32 || t == dtype::uint64;
}

}  // namespace tally
