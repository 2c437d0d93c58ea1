// Validation and backend choice: the one place the backends meet.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "backends.hpp"
#include "state_backends.hpp"
#include "tally/core.hpp"
#include "tally/ops/extremes.hpp"
#include "validate.hpp"

namespace tally {

const char* dtype_name(dtype t) noexcept {
  static constexpr const char* names[dtype_count] = {"float32", "float64", "int32",  "int64",  "float16",
                                                     "bfloat16", "int8",  "int16",  "uint8",  "uint16",
                                                     "uint32",  "uint64",  "bool"};
  int i = static_cast<int>(t);
  return i >= 0 && i < dtype_count ? names[i] : "?";
}

std::size_t dtype_size(dtype t) noexcept {
  int i = static_cast<int>(t);
  if (i < 0 || i >= dtype_count) return 0;
  return visit(t, [](auto tag) { return sizeof(typename decltype(tag)::type); });
}

const char* backend_name(backend b) noexcept {
  switch (b) {
    case backend::automatic: return "auto";
    case backend::cpu: return "cpu";
    case backend::cuda: return "cuda";
  }
  return "?";
}

dtype result_dtype(reduce_op, dtype t) noexcept {
  if (t == dtype::float32 || t == dtype::float64) return t;
  if (t == dtype::float16 || t == dtype::bfloat16) return dtype::float32;
  return is_unsigned(t) ? dtype::uint64 : dtype::int64;
}

bool cuda_available() noexcept { return cuda::available(); }

memory locate(const void* data) noexcept {
  int device = -1;
  return data ? cuda::locate(data, &device) : memory::host;
}

namespace {

const char* op_name(reduce_op op) { return op == reduce_op::sum ? "sum" : "dot"; }

using validate::arg;
using validate::check;
using validate::choose;
using validate::same_length;

void overflow_error(const char* fn, dtype t) {
  throw error(errc::overflow, std::string("tally::") + fn + ": the exact " + dtype_name(t) +
                                  " result does not fit in " +
                                  (std::string(fn) == "add" ? dtype_name(t) : is_unsigned(t) ? "uint64" : "int64") + " (integer overflow)");
}

struct prepared {
  backend b;
  arg x, y;
};

prepared prepare_reduce(reduce_op op, array_ref x, array_ref y, backend requested) {
  validate::check_reduce_op("reduce", op);
  const char* fn = op_name(op);
  arg ax{x.data, x.size, x.type, x.where, "x"};
  arg ay{y.data, y.size, y.type, y.where, "y"};
  check(fn, ax);
  if (op == reduce_op::dot) {
    check(fn, ay);
    same_length(fn, ax, ay);
    return {choose(fn, requested, {ax, ay}), ax, ay};
  }
  return {choose(fn, requested, {ax}), ax, ay};
}

}  // namespace

backend detail::check_reduce(reduce_op op, array_ref x, array_ref y, backend requested, int& device) {
  prepared p = prepare_reduce(op, x, y, requested);
  device = p.x.device;
  return p.b;
}

namespace {
// The result types a reduction may produce: float32/float64 for floating inputs, int64 for
// integer inputs.
void check_result_type(reduce_op op, dtype in, dtype out) {
  if (dtype_size(in) == 0)
    throw error(errc::invalid_argument, std::string("tally::") + op_name(op) + ": unknown element type value " +
                                            std::to_string(static_cast<int>(in)));
  bool floating = is_floating(in);
  dtype integer = is_unsigned(in) ? dtype::uint64 : dtype::int64;
  bool ok = floating ? (out == dtype::float32 || out == dtype::float64) : out == integer;
  if (!ok)
    throw error(errc::invalid_argument, std::string("tally::") + op_name(op) + ": " + validate::a_dtype(in) + " " +
                                            op_name(op) + " cannot produce " + validate::a_dtype(out) + " result (" +
                                            (floating ? "float32 or float64" : dtype_name(integer)) + " only)");
}
}  // namespace

void reduce(reduce_op op, array_ref x, array_ref y, void* result, dtype result_type,
            const options& opt) {
  validate::check_reduce_op("reduce", op);
  validate::check_accuracy(op_name(op), opt.accuracy);
  if (result == nullptr)
    throw error(errc::null_pointer, std::string("tally::") + op_name(op) + ": result is a null pointer");
  check_result_type(op, x.type, result_type);
  prepared p = prepare_reduce(op, x, y, opt.backend);
  int status = 0;
  if (p.b == backend::cuda)
    cuda::reduce(op, x.type, result_type, opt.accuracy, x.data, y.data, x.size, result, status,
                 opt.stream, p.x.device);
  else
    cpu::reduce(op, x.type, result_type, opt.accuracy, x.data, y.data, x.size, result, status);
  if (status) overflow_error(op_name(op), x.type);
}

void reduce(reduce_op op, array_ref x, array_ref y, void* result, const options& opt) {
  reduce(op, x, y, result, result_dtype(op, x.type), opt);
}

namespace {
// The words a stream-ordered 1-D call writes on the GPU (the result, result_bytes wide, and the
// status int): each at an address that is a multiple of its size, since a misaligned write
// faults and loses the CUDA context (device or mapped pinned memory alike).
void check_async_words(const std::string& fn, const void* result, std::size_t result_bytes, const int* status) {
  validate::require_aligned(fn.c_str(), "result", result, result_bytes, "its type's size: the GPU writes it as one word");
  validate::require_aligned(fn.c_str(), "status", status, alignof(int), "it is one int, written by the GPU");
}
}  // namespace

void reduce_async(reduce_op op, array_ref x, array_ref y, void* result_device, dtype result_type,
                  int* status_device, const options& opt) {
  validate::check_reduce_op("reduce_async", op);
  const char* fn = op_name(op);
  validate::check_accuracy(fn, opt.accuracy);
  if (result_device == nullptr)
    throw error(errc::null_pointer, std::string("tally::") + fn + "_async: result is a null pointer");
  if (opt.backend == backend::cpu)
    throw error(errc::invalid_argument, std::string("tally::") + fn +
                                            "_async runs on the CUDA backend only; use tally::" +
                                            fn + " for the CPU backend");
  check_result_type(op, x.type, result_type);
  check_async_words(std::string(fn) + "_async", result_device, dtype_size(result_type), status_device);
  prepared p = prepare_reduce(op, x, y, backend::cuda);
  cuda::reduce_async(op, x.type, result_type, opt.accuracy, x.data, y.data, x.size, result_device,
                     status_device, opt.stream, p.x.device);
}

void reduce_async(reduce_op op, array_ref x, array_ref y, void* result_device, int* status_device,
                  const options& opt) {
  reduce_async(op, x, y, result_device, result_dtype(op, x.type), status_device, opt);
}

namespace {
prepared prepare_add(array_ref x, array_ref y, mutable_array_ref out, arg& ao, backend requested) {
  if (dtype_size(x.type) == 0)
    throw error(errc::invalid_argument, "tally::add: unknown element type value " + std::to_string(static_cast<int>(x.type)));
  arg ax{x.data, x.size, x.type, x.where, "x"};
  arg ay{y.data, y.size, y.type, y.where, "y"};
  check("add", ax);
  check("add", ay);
  check("add", ao);
  same_length("add", ax, ay);
  same_length("add", ax, ao);
  validate::check_alias("add", ax, ao);
  validate::check_alias("add", ay, ao);
  (void)out;
  return {choose("add", requested, {ax, ay, ao}), ax, ay};
}
}  // namespace

void add(array_ref x, array_ref y, mutable_array_ref out, const options& opt) {
  arg ao{out.data, out.size, out.type, out.where, "out"};
  prepared p = prepare_add(x, y, out, ao, opt.backend);
  if (x.size == 0) return;
  if (p.b == backend::cuda) {
    int status = 0;
    cuda::add(x.type, x.data, y.data, out.data, x.size, status, opt.stream, p.x.device);
    if (status) overflow_error("add", x.type);
  } else {
    std::int64_t first_bad = -1;
    cpu::add(x.type, x.data, y.data, out.data, x.size, first_bad);
    if (first_bad >= 0)
      throw error(errc::overflow, std::string("tally::add: the exact ") + dtype_name(x.type) + " sum x[" +
                                      std::to_string(first_bad) + "] + y[" + std::to_string(first_bad) +
                                      "] does not fit in " + dtype_name(x.type) + " (integer overflow at index " +
                                      std::to_string(first_bad) + ", the first such index; out holds wrapped values)");
  }
}

void add_async(array_ref x, array_ref y, mutable_array_ref out, int* status_device,
               const options& opt) {
  if (opt.backend == backend::cpu)
    throw error(errc::invalid_argument,
                "tally::add_async runs on the CUDA backend only; use tally::add for the CPU backend");
  check_async_words("add_async", nullptr, 0, status_device);
  arg ao{out.data, out.size, out.type, out.where, "out"};
  prepared p = prepare_add(x, y, out, ao, backend::cuda);
  cuda::add_async(x.type, x.data, y.data, out.data, x.size, status_device, opt.stream, p.x.device);
}

namespace {
// The checks mean and norm2 share (floating results); resolves the backend into `b` and
// x's device into `device`; returns false when x is empty (the caller writes the answer).
bool prepare_float_result(const char* fn, array_ref x, void* result, dtype result_type, const options& opt,
                          backend& b, int& device) {
  validate::need_float_result(fn, result, result_type);
  arg ax{x.data, x.size, x.type, x.where, "x"};
  b = validate::check_one(fn, ax, opt.backend);
  device = ax.device;
  return x.size > 0;
}
}  // namespace

void mean(array_ref x, void* result, dtype result_type, const options& opt) {
  backend b;
  int device;
  if (!prepare_float_result("mean", x, result, result_type, opt, b, device))  // NumPy: the mean of nothing is NaN
    return validate::put_float(result, result_type, std::numeric_limits<double>::quiet_NaN());
  if (b == backend::cuda) cuda::mean(x.type, result_type, x.data, x.size, result, opt.stream, device);
  else cpu::mean(x.type, result_type, x.data, x.size, result);
}

void norm2(array_ref x, void* result, dtype result_type, const options& opt) {
  if (!is_floating(x.type))
    throw error(errc::invalid_argument, std::string("tally::norm2: x must be floating (float16, bfloat16, float32 or"
                                                    " float64), not ") + dtype_name(x.type));
  backend b;
  int device;
  if (!prepare_float_result("norm2", x, result, result_type, opt, b, device))  // the norm of nothing is +0
    return validate::put_float(result, result_type, 0.0);
  if (b == backend::cuda) cuda::norm2(x.type, result_type, x.data, x.size, result, opt.stream, device);
  else cpu::norm2(x.type, result_type, x.data, x.size, result);
}

namespace {
// What `extreme` writes from a backend's index i (ops::kNoIndex when none): the index, or for
// an empty input (or only NaNs skipped) -1 and the empty value of `op` (NaN for only NaNs).
void put_extreme(extreme_op op, array_ref x, std::int64_t i, void* value, std::int64_t* index);
}  // namespace

void extreme(extreme_op op, nan_policy nans, array_ref x, void* value, std::int64_t* index,
             const options& opt) {
  validate::check_extreme("extreme", op, nans);
  const char* fn = op == extreme_op::min ? (nans == nan_policy::omit ? "nanmin" : "min")
                                         : (nans == nan_policy::omit ? "nanmax" : "max");
  if (value == nullptr || index == nullptr)
    throw error(errc::null_pointer, std::string("tally::") + fn + ": value or index is a null pointer");
  arg ax{x.data, x.size, x.type, x.where, "x"};
  backend b = validate::check_one(fn, ax, opt.backend);
  std::int64_t i = ops::kNoIndex;
  if (x.size > 0) {
    if (b == backend::cuda) cuda::extreme(op, nans, x.type, x.data, x.size, value, i, opt.stream, ax.device);
    else cpu::extreme(op, nans, x.type, x.data, x.size, value, i);
  }
  put_extreme(op, x, i, value, index);
}

void minmax(nan_policy nans, array_ref x, void* min_value, std::int64_t* min_index, void* max_value,
            std::int64_t* max_index, const options& opt) {
  validate::check_extreme("minmax", extreme_op::min, nans);
  const char* fn = nans == nan_policy::omit ? "nanminmax" : "minmax";
  if (min_value == nullptr || min_index == nullptr || max_value == nullptr || max_index == nullptr)
    throw error(errc::null_pointer, std::string("tally::") + fn + ": a value or index pointer is null");
  arg ax{x.data, x.size, x.type, x.where, "x"};
  backend b = validate::check_one(fn, ax, opt.backend);
  std::int64_t lo = ops::kNoIndex, hi = ops::kNoIndex;
  if (x.size > 0) {
    if (b == backend::cuda) {
      cuda::minmax(nans, x.type, x.data, x.size, min_value, lo, max_value, hi, opt.stream, ax.device);
    } else {
      cpu::minmax(nans, x.type, x.data, x.size, min_value, lo, max_value, hi);
    }
  }
  put_extreme(extreme_op::min, x, lo, min_value, min_index);
  put_extreme(extreme_op::max, x, hi, max_value, max_index);
}

namespace {
void put_extreme(extreme_op op, array_ref x, std::int64_t i, void* value, std::int64_t* index) {
  if (i == ops::kNoIndex) {  // empty, or only NaNs skipped
    *index = -1;
    bool all_nan = x.size > 0;  // (no index with elements present: every one was a NaN)
    auto put = [&](auto v) { std::memcpy(value, &v, sizeof v); };
    bool mx = op == extreme_op::max;
    visit(x.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      constexpr float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
      float f = all_nan ? nan : (mx ? -inf : inf);
      if constexpr (std::is_same_v<T, float16>) put(to_float16(f));
      else if constexpr (std::is_same_v<T, bfloat16>) put(to_bfloat16(f));
      else if constexpr (std::is_floating_point_v<T>) put(static_cast<T>(f));
      else put(mx ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max());
    });
  } else {
    *index = i;
  }
}
}  // namespace

}  // namespace tally
