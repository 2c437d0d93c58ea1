// Argument checks and backend choice shared by the dispatch layers (see validate.hpp).
#include "validate.hpp"

#include <cstdint>
#include <cstring>

#include "backends.hpp"

namespace tally::validate {

std::string prefix(const char* fn) { return std::string("tally::") + fn + ": "; }

std::string a_dtype(dtype t) {
  if (dtype_size(t) == 0) return "an unknown dtype (value " + std::to_string(static_cast<int>(t)) + ")";
  const std::string name = dtype_name(t);
  return (name[0] == 'i' ? "an " : "a ") + name;  // (int8 ... int64: "an"; uint: "a", read "you-int")
}

void check_memory(const char* fn, const char* name, memory where) {
  const int v = static_cast<int>(where);
  if (v < 0 || v > static_cast<int>(memory::device))
    throw error(errc::invalid_argument, prefix(fn) + name + " is declared with an unknown memory value " +
                                            std::to_string(v) + " (memory::unknown, host or device)");
}

void require_aligned(const char* fn, const char* name, const void* p, std::size_t align, const std::string& why) {
  if (align > 1 && reinterpret_cast<std::uintptr_t>(p) % align != 0)
    throw error(errc::invalid_argument, prefix(fn) + name + " is at an address that is not a multiple of " +
                                            std::to_string(align) + " bytes (" + why + ")");
}

memory locate_declared(const char* fn, const char* name, const void* p, memory where, int& device, std::size_t align) {
  check_memory(fn, name, where);
  // Declared memory is checked against the CUDA runtime too (one cudaPointerGetAttributes,
  // ~0.1-0.2 us; nothing without a GPU), so a wrong declaration is an error, not a crash.
  // Device memory declared where no GPU is usable: the error of a cuda backend without one
  // (errc::no_gpu), as for empty arrays, which are never located, not a wrong declaration
  if (where == memory::device && !cuda::available())
    throw error(errc::no_gpu, prefix(fn) + name +
                                  " is declared device memory, but no usable CUDA GPU is present (or this build has no CUDA support)");
  memory found = cuda::locate(p, &device);
  if (where == memory::device && found != memory::device)
    throw error(errc::wrong_memory, prefix(fn) + name +
                                        " is declared device memory, but the CUDA runtime does not know it as device memory");
  bool managed = found == memory::device && device < 0;  // readable by the CPU as well
  if (where == memory::host && found == memory::device && !managed)
    throw error(errc::wrong_memory, prefix(fn) + name + " is declared host memory, but it is CUDA device memory");
  if (found == memory::device)
    require_aligned(fn, name, p, align,
                    "its element size; it is CUDA device memory, whose elements the GPU reads and writes only at aligned"
                    " addresses: copy it to an aligned buffer");
  return where == memory::unknown ? found : where;
}

void extent(const char* fn, const char* name, const void* data, std::int64_t size, dtype type) {
  const std::size_t es = dtype_size(type);
  if (es == 0)
    throw error(errc::invalid_argument, prefix(fn) + name + " has an unknown element type value " +
                                            std::to_string(static_cast<int>(type)));
  if (size <= 0 || data == nullptr) return;
  // The view's bytes must be addressable: size * element size fits a ptrdiff_t and the end
  // does not wrap past the top of the address space (else the backends read wild memory).
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const auto bytes = static_cast<std::uintptr_t>(size);
  if (bytes > static_cast<std::uintptr_t>(PTRDIFF_MAX) / es || begin > UINTPTR_MAX - bytes * es)
    throw error(errc::invalid_argument, prefix(fn) + name + " has length " + std::to_string(size) + " (" +
                                            dtype_name(type) + "), which runs past the end of the address space");
}

memory check(const char* fn, arg& a) {
  check_memory(fn, a.name, a.where);
  if (a.size < 0)
    throw error(errc::invalid_argument, prefix(fn) + a.name + " has negative length " + std::to_string(a.size));
  if (a.data == nullptr && a.size > 0)
    throw error(errc::null_pointer, prefix(fn) + a.name + " is a null pointer with length " + std::to_string(a.size));
  extent(fn, a.name, a.data, a.size, a.type);
  if (a.size > 0) a.where = locate_declared(fn, a.name, a.data, a.where, a.device, dtype_size(a.type));
  return a.where;
}

void check_enum(const char* fn, const char* what, int value, int count) {
  if (value < 0 || value >= count)
    throw error(errc::invalid_argument, prefix(fn) + "unknown " + what + " value " + std::to_string(value));
}

void check_accuracy(const char* fn, accuracy a) { check_enum(fn, "accuracy", static_cast<int>(a), 2); }
void check_reduce_op(const char* fn, reduce_op op) { check_enum(fn, "reduce_op", static_cast<int>(op), 2); }
void check_extreme(const char* fn, extreme_op op, nan_policy nans) {
  check_enum(fn, "extreme_op", static_cast<int>(op), 2);
  check_enum(fn, "nan_policy", static_cast<int>(nans), 2);
}

bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  auto a0 = reinterpret_cast<std::uintptr_t>(a), b0 = reinterpret_cast<std::uintptr_t>(b);
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

backend choose(const char* fn, backend requested, std::initializer_list<side> args, wording w) {
  check_enum(fn, "backend", static_cast<int>(requested), 3);
  const char* host = nullptr;
  const char* dev = nullptr;
  for (const side& a : args) {
    if (a.where == memory::device && !dev) dev = a.name;
    if (a.where == memory::host && !host) host = a.name;
  }
  const bool rw = w == wording::read_write;
  backend b = requested;
  if (b == backend::automatic) {
    if (dev && host)
      throw error(errc::wrong_memory, prefix(fn) + dev + " is in device memory but " + host +
                                          " is in host memory; all arrays must live on one side");
    b = dev ? backend::cuda : backend::cpu;
  }
  if (b == backend::cuda) {
    if (!cuda::available())
      throw error(errc::no_gpu, prefix(fn) + "the CUDA backend was requested but " +
                                    (rw ? "no usable CUDA GPU is present (or this build has no CUDA support)" :
#if defined(TALLY_HAVE_CUDA)
                                        "no usable CUDA GPU is present"
#else
                                        "this build of tally has no CUDA support"
#endif
                                    ));
    if (host)
      throw error(errc::wrong_memory, prefix(fn) + host +
                                          (rw ? " is in host memory, which the CUDA backend cannot read or write"
                                              : " is in host memory, which the CUDA backend cannot read (copy it to the"
                                                " device, or use the cpu backend)"));
  } else if (dev) {
    throw error(errc::wrong_memory, prefix(fn) + dev +
                                        (rw ? " is in CUDA device memory, which the CPU backend cannot read or write"
                                            : " is in CUDA device memory, which the CPU backend cannot read (use the"
                                              " cuda backend, or copy it to the host)"));
  }
  return b;
}

backend check_one(const char* fn, arg& a, backend requested) {
  check(fn, a);
  return choose(fn, requested, {a});
}

void same_length(const char* fn, const arg& a, const arg& b) {
  if (a.size != b.size)
    throw error(errc::length_mismatch, prefix(fn) + "length mismatch: " + a.name + " has " + std::to_string(a.size) +
                                           " elements, " + b.name + " has " + std::to_string(b.size));
  if (a.type != b.type)
    throw error(errc::invalid_argument, prefix(fn) + "element type mismatch: " + a.name + " is " + dtype_name(a.type) +
                                            ", " + b.name + " is " + dtype_name(b.type));
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

bool float32_or_64(dtype t) { return t == dtype::float32 || t == dtype::float64; }

void need_float_result(const char* fn, const void* result, dtype result_type) {
  if (result == nullptr) throw error(errc::null_pointer, prefix(fn) + "result is a null pointer");
  if (!float32_or_64(result_type))
    throw error(errc::invalid_argument, prefix(fn) + "the result is float32 or float64, not " + dtype_name(result_type));
}

void put_float(void* result, dtype t, double v) {
  if (t == dtype::float32) {
    float f = static_cast<float>(v);
    std::memcpy(result, &f, sizeof f);
  } else {
    std::memcpy(result, &v, sizeof v);
  }
}

}  // namespace tally::validate
