// Validation and backend choice for the norms, moments, logical reductions and scaled
// element-wise operations (issue 5). The same rules as dispatch.cpp (the shared checks:
// validate.hpp): negative lengths, null data, declared memory checked against the CUDA
// runtime, one side of memory per call, the forced backend able to read it.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "backends.hpp"
#include "backends_ops.hpp"
#include "tally/core.hpp"
#include "tally/state.hpp"
#include "validate.hpp"

namespace tally {
namespace {

using validate::arg;
using validate::check;
using validate::prefix;
using validate::put_float;

bool floating(dtype t) { return validate::float32_or_64(t); }

// The checks norm1 and norm_inf share: a float32 or float64 x and result; resolves the backend
// into `b` and x into `ax`; returns false when x is empty (the norm of nothing is +0, written here).
bool prepare_norm(const char* fn, array_ref x, void* result, dtype result_type, const options& opt, arg& ax,
                  backend& b) {
  validate::need_float_result(fn, result, result_type);
  if (!floating(x.type))
    throw error(errc::invalid_argument, prefix(fn) + "x must be float32 or float64, not " + dtype_name(x.type));
  ax = arg{x.data, x.size, x.type, x.where, "x"};
  b = validate::check_one(fn, ax, opt.backend);
  if (x.size == 0) put_float(result, result_type, 0.0);
  return x.size > 0;
}

// An integer element of axpy / scale whose exact result does not fit its type: the first index.
void overflow(const char* fn, dtype t, std::int64_t i, const char* what) {
  std::string at = std::to_string(i);
  std::string expr = std::string(what) == "axpy" ? "a*x[" + at + "] + y[" + at + "]" : "a*x[" + at + "]";
  throw error(errc::overflow, prefix(fn) + "the exact " + dtype_name(t) + " result " + expr + " does not fit in " +
                                  dtype_name(t) + " (integer overflow at index " + at +
                                  ", the first such index; the array holds wrapped values)");
}

// axpy and scale of bool: NumPy would change the type (True * 2 is an int), so refuse.
void refuse_bool(const char* fn, dtype t) {
  if (t == dtype::bool_)
    throw error(errc::invalid_argument, prefix(fn) + "x is bool, which " + fn +
                                            " does not take (a*x of bool is not a bool: NumPy would give an integer"
                                            " array; convert to an integer or floating type first)");
}

}  // namespace

void norm1(array_ref x, void* result, dtype result_type, const options& opt) {
  validate::check_accuracy("norm1", opt.accuracy);
  arg ax{};
  backend b;
  if (!prepare_norm("norm1", x, result, result_type, opt, ax, b)) return;
  if (b == backend::cuda) cuda::norm1(x.type, result_type, opt.accuracy, x.data, x.size, result, opt.stream, ax.device);
  else cpu::norm1(x.type, result_type, opt.accuracy, x.data, x.size, result);
}

void norm_inf(array_ref x, void* result, dtype result_type, const options& opt) {
  arg ax{};
  backend b;
  if (!prepare_norm("norm_inf", x, result, result_type, opt, ax, b)) return;
  if (b == backend::cuda) cuda::norm_inf(x.type, result_type, x.data, x.size, result, opt.stream, ax.device);
  else cpu::norm_inf(x.type, result_type, x.data, x.size, result);
}

void var(array_ref x, std::int64_t ddof, bool take_sqrt, void* result, dtype result_type, const options& opt) {
  const char* fn = take_sqrt ? "std" : "var";
  validate::check_accuracy(fn, opt.accuracy);
  validate::need_float_result(fn, result, result_type);
  if (dtype_size(x.type) == 0)
    throw error(errc::invalid_argument, prefix(fn) + "unknown element type value " + std::to_string(static_cast<int>(x.type)));
  arg ax{x.data, x.size, x.type, x.where, "x"};
  backend b = validate::check_one(fn, ax, opt.backend);
  // n - ddof in 128 bits (ddof may be negative); NumPy gives NaN when it is not positive.
  __int128 m2 = static_cast<__int128>(x.size) - ddof;
  if (m2 > static_cast<__int128>(std::numeric_limits<std::int64_t>::max()))
    throw error(errc::invalid_argument, prefix(fn) + "n - ddof = " + std::to_string(x.size) + " - (" +
                                            std::to_string(ddof) + ") does not fit in int64");
  if (m2 <= 0 || x.size == 0) return put_float(result, result_type, std::numeric_limits<double>::quiet_NaN());
  if (b == backend::cuda) {
    if (opt.accuracy == accuracy::exact) {
      // The GPU's exact states of sum x and sum x^2 (x read once for the squares), rounded
      // together on the host: the same bits as the cpu backend (round_variance). The states
      // hold float32/float64 data; the other types whose values float64 holds exactly are
      // widened into a float64 copy on the device first (8 bytes per element more traffic).
      if (x.type == dtype::int64 || x.type == dtype::uint64)
        throw error(errc::invalid_argument, prefix(fn) + "exact mode of 64-bit integer data (" + dtype_name(x.type) +
                                                ") is not available on the cuda backend yet (use accuracy::fast, or"
                                                " host data on the cpu backend)");
      if (!floating(x.type)) {
        auto wide = cuda::widen_to_f64(x.type, x.data, x.size, opt.stream, ax.device);
        array_ref w{wide.get(), x.size, dtype::float64, memory::device};
        if (cuda::var_certified(dtype::float64, result_type, w.data, x.size, static_cast<std::uint64_t>(m2), take_sqrt,
                                result, opt.stream, ax.device))
          return;
        exact_state s1 = partial(reduce_op::sum, w, {}, opt);
        exact_state s2 = partial(reduce_op::dot, w, w, opt);
        return round_variance(s1, s2, ddof, take_sqrt, result, result_type);
      }
      // float32/float64: two certified passes first (they prove the correctly rounded
      // result for most data; ops/certified.hpp), the exact states only when they cannot.
      if (cuda::var_certified(x.type, result_type, x.data, x.size, static_cast<std::uint64_t>(m2), take_sqrt, result,
                              opt.stream, ax.device))
        return;
      exact_state s1 = partial(reduce_op::sum, x, {}, opt);
      exact_state s2 = partial(reduce_op::dot, x, x, opt);
      return round_variance(s1, s2, ddof, take_sqrt, result, result_type);
    }
    cuda::var(x.type, result_type, opt.accuracy, x.data, x.size, static_cast<std::uint64_t>(m2), take_sqrt, result,
              opt.stream, ax.device);
  } else {
    cpu::var(x.type, result_type, opt.accuracy, x.data, x.size, static_cast<std::uint64_t>(m2), take_sqrt, result);
  }
  // Fast mode: a result that is not a finite non-negative number comes from a NaN or an
  // infinity in x, or from finite data whose running mean or M2 overflowed inside Welford's
  // update ([1e308, -1e308] gave -inf). The exact path tells them apart (NaN for the first,
  // the correctly rounded variance, +inf here, for the second), so it is asked once more.
  // Only floating data can get there (int64 values square to at most 2^126).
  double got = 0;
  if (result_type == dtype::float32) {
    float f;
    std::memcpy(&f, result, sizeof f);
    got = f;
  } else {
    std::memcpy(&got, result, sizeof got);
  }
  if (opt.accuracy == accuracy::fast && !(got >= 0 && got <= std::numeric_limits<double>::max()) && floating(x.type)) {
    options ex = opt;
    ex.accuracy = accuracy::exact;
    var(x, ddof, take_sqrt, result, result_type, ex);
  }
}

namespace {
std::int64_t count_checked(const char* fn, array_ref x, const options& opt) {
  arg ax{x.data, x.size, x.type, x.where, "x"};
  backend b = validate::check_one(fn, ax, opt.backend);
  if (x.size == 0) return 0;
  if (b == backend::cuda) return cuda::count_nonzero(x.type, x.data, x.size, opt.stream, ax.device);
  return cpu::count_nonzero(x.type, x.data, x.size);
}
}  // namespace

std::int64_t count_nonzero(array_ref x, const options& opt) { return count_checked("count_nonzero", x, opt); }
bool any(array_ref x, const options& opt) { return count_checked("any", x, opt) > 0; }
bool all(array_ref x, const options& opt) { return count_checked("all", x, opt) == x.size; }

void axpy(const void* a, array_ref x, mutable_array_ref y, const options& opt) {
  if (a == nullptr) throw error(errc::null_pointer, "tally::axpy: a is a null pointer");
  refuse_bool("axpy", x.type);
  arg ax{x.data, x.size, x.type, x.where, "x"};
  arg ay{y.data, y.size, y.type, y.where, "y"};
  check("axpy", ax);
  check("axpy", ay);
  validate::same_length("axpy", ax, ay);
  validate::check_alias("axpy", ax, ay);
  backend b = validate::choose("axpy", opt.backend, {ax, ay});
  if (x.size == 0) return;
  std::int64_t first_bad = -1;
  if (b == backend::cuda) cuda::axpy(x.type, a, x.data, y.data, x.size, first_bad, opt.stream, ax.device);
  else cpu::axpy(x.type, a, x.data, y.data, x.size, first_bad);
  if (first_bad >= 0) overflow("axpy", x.type, first_bad, "axpy");
}

void scale(const void* a, mutable_array_ref x, const options& opt) {
  if (a == nullptr) throw error(errc::null_pointer, "tally::scale: a is a null pointer");
  refuse_bool("scale", x.type);
  arg ax{x.data, x.size, x.type, x.where, "x"};
  backend b = validate::check_one("scale", ax, opt.backend);
  if (x.size == 0) return;
  std::int64_t first_bad = -1;
  if (b == backend::cuda) cuda::scale(x.type, a, x.data, x.size, first_bad, opt.stream, ax.device);
  else cpu::scale(x.type, a, x.data, x.size, first_bad);
  if (first_bad >= 0) overflow("scale", x.type, first_bad, "scale");
}

}  // namespace tally
