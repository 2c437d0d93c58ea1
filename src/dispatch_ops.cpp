// Validation and backend choice for the norms, moments, logical reductions and scaled
// element-wise operations (issue 5). The same rules as dispatch.cpp (whose helpers are
// file-local there): negative lengths, null data, declared memory checked against the CUDA
// runtime, one side of memory per call, the forced backend able to read it.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "backends.hpp"
#include "backends_ops.hpp"
#include "tally/core.hpp"

namespace tally {
namespace {

std::string prefix(const char* fn) { return std::string("tally::") + fn + ": "; }

struct arg {
  const void* data;
  std::int64_t size;
  dtype type;
  memory where;
  const char* name;
  int device = -1;
};

void check(const char* fn, arg& a) {
  if (a.size < 0)
    throw error(errc::invalid_argument, prefix(fn) + a.name + " has negative length " + std::to_string(a.size));
  if (a.data == nullptr && a.size > 0)
    throw error(errc::null_pointer, prefix(fn) + a.name + " is a null pointer with length " + std::to_string(a.size));
  if (a.size > 0) {
    memory found = cuda::locate(a.data, &a.device);
    if (a.where == memory::device && found != memory::device)
      throw error(errc::wrong_memory, prefix(fn) + a.name +
                                          " is declared device memory, but the CUDA runtime does not know it as device memory");
    bool managed = found == memory::device && a.device < 0;
    if (a.where == memory::host && found == memory::device && !managed)
      throw error(errc::wrong_memory, prefix(fn) + a.name + " is declared host memory, but it is CUDA device memory");
    if (a.where == memory::unknown) a.where = found;
  }
}

backend choose(const char* fn, backend requested, std::initializer_list<const arg*> args) {
  const arg* host = nullptr;
  const arg* dev = nullptr;
  for (const arg* a : args) {
    if (a->where == memory::device && !dev) dev = a;
    if (a->where == memory::host && !host) host = a;
  }
  backend b = requested;
  if (b == backend::automatic) {
    if (dev && host)
      throw error(errc::wrong_memory, prefix(fn) + dev->name + " is in device memory but " + host->name +
                                          " is in host memory; all arrays must live on one side");
    b = dev ? backend::cuda : backend::cpu;
  }
  if (b == backend::cuda) {
    if (!cuda::available())
      throw error(errc::no_gpu, prefix(fn) + "the CUDA backend was requested but " +
#if defined(TALLY_HAVE_CUDA)
                                    "no usable CUDA GPU is present");
#else
                                    "this build of tally has no CUDA support");
#endif
    if (host)
      throw error(errc::wrong_memory, prefix(fn) + host->name +
                                          " is in host memory, which the CUDA backend cannot read (copy it to the device, or"
                                          " use the cpu backend)");
  } else if (dev) {
    throw error(errc::wrong_memory, prefix(fn) + dev->name +
                                        " is in CUDA device memory, which the CPU backend cannot read (use the cuda"
                                        " backend, or copy it to the host)");
  }
  return b;
}

bool floating(dtype t) { return t == dtype::float32 || t == dtype::float64; }

// The element types an operation of this file takes in this version (float32, float64, int32,
// int64): the others are a clear error, never a silent wrong answer.
bool core_type(dtype t) { return floating(t) || t == dtype::int32 || t == dtype::int64; }
void need_core_type(const char* fn, dtype t, const char* where = "") {
  if (!core_type(t))
    throw error(errc::invalid_argument, prefix(fn) + "x is " + dtype_name(t) + ", which " + fn + where +
                                            " does not take in this version (float32, float64, int32 or int64; convert"
                                            " it first: every value of the smaller types converts exactly)");
}

void need_float_result(const char* fn, void* result, dtype rt) {
  if (result == nullptr) throw error(errc::null_pointer, prefix(fn) + "result is a null pointer");
  if (!floating(rt))
    throw error(errc::invalid_argument, prefix(fn) + "the result is float32 or float64, not " + dtype_name(rt));
}

void put_float(void* result, dtype t, double v) {
  if (t == dtype::float32) {
    float f = static_cast<float>(v);
    std::memcpy(result, &f, sizeof f);
  } else {
    std::memcpy(result, &v, sizeof v);
  }
}

// A one-array reduction's checks: returns the backend, the argument resolved.
backend prepare_one(const char* fn, arg& ax, const options& opt) {
  check(fn, ax);
  return choose(fn, opt.backend, {&ax});
}

void overflow(const char* fn, dtype t) {
  throw error(errc::overflow, prefix(fn) + "an element of the exact " + dtype_name(t) + " result does not fit in " +
                                  dtype_name(t) + " (integer overflow)");
}

void check_alias(const char* fn, const arg& in, const arg& out) {
  if (in.size == 0) return;
  auto b0 = reinterpret_cast<std::uintptr_t>(in.data);
  auto o0 = reinterpret_cast<std::uintptr_t>(out.data);
  std::uintptr_t bytes = static_cast<std::uintptr_t>(in.size) * dtype_size(in.type);
  if (b0 == o0) return;
  if (b0 < o0 + bytes && o0 < b0 + bytes)
    throw error(errc::invalid_argument, prefix(fn) + out.name + " overlaps " + in.name +
                                            " without being the same array (only exact in-place aliasing is allowed)");
}

}  // namespace

void norm1(array_ref x, void* result, dtype result_type, const options& opt) {
  need_float_result("norm1", result, result_type);
  if (!floating(x.type))
    throw error(errc::invalid_argument, std::string("tally::norm1: x must be float32 or float64, not ") + dtype_name(x.type));
  arg ax{x.data, x.size, x.type, x.where, "x"};
  backend b = prepare_one("norm1", ax, opt);
  if (x.size == 0) return put_float(result, result_type, 0.0);
  if (b == backend::cuda) cuda::norm1(x.type, result_type, opt.accuracy, x.data, x.size, result, opt.stream, ax.device);
  else cpu::norm1(x.type, result_type, opt.accuracy, x.data, x.size, result);
}

void norm_inf(array_ref x, void* result, dtype result_type, const options& opt) {
  need_float_result("norm_inf", result, result_type);
  if (!floating(x.type))
    throw error(errc::invalid_argument, std::string("tally::norm_inf: x must be float32 or float64, not ") + dtype_name(x.type));
  arg ax{x.data, x.size, x.type, x.where, "x"};
  backend b = prepare_one("norm_inf", ax, opt);
  if (x.size == 0) return put_float(result, result_type, 0.0);
  if (b == backend::cuda) cuda::norm_inf(x.type, result_type, x.data, x.size, result, opt.stream, ax.device);
  else cpu::norm_inf(x.type, result_type, x.data, x.size, result);
}

void var(array_ref x, std::int64_t ddof, bool take_sqrt, void* result, dtype result_type, const options& opt) {
  const char* fn = take_sqrt ? "std" : "var";
  need_float_result(fn, result, result_type);
  need_core_type(fn, x.type);
  arg ax{x.data, x.size, x.type, x.where, "x"};
  backend b = prepare_one(fn, ax, opt);
  // n - ddof in 128 bits (ddof may be negative); NumPy gives NaN when it is not positive.
  __int128 m2 = static_cast<__int128>(x.size) - ddof;
  if (m2 > static_cast<__int128>(std::numeric_limits<std::int64_t>::max()))
    throw error(errc::invalid_argument, prefix(fn) + "n - ddof = " + std::to_string(x.size) + " - (" +
                                            std::to_string(ddof) + ") does not fit in int64");
  if (m2 <= 0 || x.size == 0) return put_float(result, result_type, std::numeric_limits<double>::quiet_NaN());
  if (b == backend::cuda) {
    if (opt.accuracy == accuracy::exact)
      throw error(errc::invalid_argument, prefix(fn) +
                                              "exact mode is not available on the cuda backend yet (use accuracy::fast,"
                                              " or host data on the cpu backend)");
    cuda::var(x.type, result_type, opt.accuracy, x.data, x.size, static_cast<std::uint64_t>(m2), take_sqrt, result,
              opt.stream, ax.device);
  } else {
    cpu::var(x.type, result_type, opt.accuracy, x.data, x.size, static_cast<std::uint64_t>(m2), take_sqrt, result);
  }
}

namespace {
std::int64_t count_checked(const char* fn, array_ref x, const options& opt) {
  arg ax{x.data, x.size, x.type, x.where, "x"};
  backend b = prepare_one(fn, ax, opt);
  if (b == backend::cuda) need_core_type(fn, x.type, " on the cuda backend");
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
  need_core_type("axpy", x.type);
  arg ax{x.data, x.size, x.type, x.where, "x"};
  arg ay{y.data, y.size, y.type, y.where, "y"};
  check("axpy", ax);
  check("axpy", ay);
  if (ax.size != ay.size)
    throw error(errc::length_mismatch, "tally::axpy: length mismatch: x has " + std::to_string(ax.size) +
                                           " elements, y has " + std::to_string(ay.size));
  if (ax.type != ay.type)
    throw error(errc::invalid_argument, std::string("tally::axpy: element type mismatch: x is ") + dtype_name(ax.type) +
                                            ", y is " + dtype_name(ay.type));
  check_alias("axpy", ax, ay);
  backend b = choose("axpy", opt.backend, {&ax, &ay});
  if (x.size == 0) return;
  int status = 0;
  if (b == backend::cuda) cuda::axpy(x.type, a, x.data, y.data, x.size, status, opt.stream, ax.device);
  else cpu::axpy(x.type, a, x.data, y.data, x.size, status);
  if (status) overflow("axpy", x.type);
}

void scale(const void* a, mutable_array_ref x, const options& opt) {
  if (a == nullptr) throw error(errc::null_pointer, "tally::scale: a is a null pointer");
  need_core_type("scale", x.type);
  arg ax{x.data, x.size, x.type, x.where, "x"};
  backend b = prepare_one("scale", ax, opt);
  if (x.size == 0) return;
  int status = 0;
  if (b == backend::cuda) cuda::scale(x.type, a, x.data, x.size, status, opt.stream, ax.device);
  else cpu::scale(x.type, a, x.data, x.size, status);
  if (status) overflow("scale", x.type);
}

}  // namespace tally
