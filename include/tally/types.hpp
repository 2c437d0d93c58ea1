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

/// Element types tally reads and writes.
enum class dtype : int { float32, float64, int32, int64 };

/// Name of an element type as NumPy spells it ("float32", "int64", ...).
const char* dtype_name(dtype t) noexcept;
/// Size of one element in bytes.
std::size_t dtype_size(dtype t) noexcept;

template <class T> inline constexpr bool is_element_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;

template <class T> constexpr dtype dtype_of() {
  static_assert(is_element_v<T>, "tally: element type must be float, double, int32_t or int64_t");
  if constexpr (std::is_same_v<T, float>) return dtype::float32;
  else if constexpr (std::is_same_v<T, double>) return dtype::float64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return dtype::int32;
  else return dtype::int64;
}

/// Result type of sum and dot for element type T: the element type for float32/float64
/// (accumulated internally in float64), int64 for the integer types (accumulated exactly).
template <class T> using result_t = std::conditional_t<std::is_integral_v<T>, std::int64_t, T>;

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
/// `data` may be null only when `size` is 0. Any alignment of `data` to its element type is
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
  invalid_argument,  ///< a negative length, a partially overlapping output, ...
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

}  // namespace tally
