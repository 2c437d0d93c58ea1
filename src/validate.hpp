// Argument checks and backend choice shared by the dispatch layers (dispatch.cpp,
// dispatch_ops.cpp, dispatch_shapes.cpp). Internal: not installed, not part of the API.
//
// The rules: a negative length is errc::invalid_argument; a null pointer with elements is
// errc::null_pointer; declared memory is checked against the CUDA runtime (one
// cudaPointerGetAttributes, nothing without a GPU), so a wrong declaration is
// errc::wrong_memory, not a crash; all arrays of a call live on one side; a forced backend must
// be able to read them (errc::wrong_memory) and the cuda backend must have a GPU
// (errc::no_gpu). Every message starts with "tally::<fn>: ".
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "tally/core.hpp"

namespace tally::validate {

/// "tally::<fn>: ", the start of every error message.
std::string prefix(const char* fn);

/// An array argument's name and the memory side it resolved to (memory::unknown: it has no
/// elements, so it does not constrain the backend).
struct side {
  const char* name;
  memory where;
};

/// One array argument of a call, named as the messages name it ("x", "y", "out").
struct arg {
  const void* data;
  std::int64_t size;
  dtype type;
  memory where;      // declared; `check` resolves memory::unknown
  const char* name;
  int device = -1;   // owning CUDA device, when known (-1: managed memory, or host)
  operator side() const { return {name, where}; }
};

/// A dtype with its article for messages: "a float64", "an int64", "a uint8", or "an unknown
/// dtype (value 99)" for a value outside the enumeration.
std::string a_dtype(dtype t);

/// A memory value outside the enumeration is errc::invalid_argument naming the argument.
void check_memory(const char* fn, const char* name, memory where);
/// Where `p` (which has elements to read or write) lives: the declared `where` checked against
/// the CUDA runtime, `device` set to the owning device. Throws errc::wrong_memory when the
/// declaration contradicts the runtime (managed memory may be declared host or device), and
/// errc::invalid_argument for a `where` outside the enumeration. `align` (bytes, the element
/// size; 0 or 1: none): CUDA device memory (managed memory included) at an address that is
/// not a multiple of it is errc::invalid_argument naming the argument, since the GPU reads and
/// writes elements only at aligned addresses (a misaligned access faults and loses the CUDA
/// context). Host memory is not checked (the CPU backend reads it whatever its alignment).
memory locate_declared(const char* fn, const char* name, const void* p, memory where, int& device, std::size_t align = 0);

/// p at an address that is a multiple of `align` bytes (0 or 1: any address), else
/// errc::invalid_argument: "<name> is at an address that is not a multiple of <align> bytes
/// (<why>)". For what the GPU reads or writes, where a misaligned access faults and loses the
/// CUDA context.
void require_aligned(const char* fn, const char* name, const void* p, std::size_t align, const std::string& why);

/// A known element type (errc::invalid_argument) and, for a view with elements, an extent
/// whose bytes are addressable: size * dtype_size(type) fits a ptrdiff_t and data + bytes does
/// not wrap the address space (errc::invalid_argument).
void extent(const char* fn, const char* name, const void* data, std::int64_t size, dtype type);

/// Checks one argument (length, null data, element type and extent, declared memory) and
/// resolves a.where and a.device.
memory check(const char* fn, arg& a);

/// How the backend-choice messages read: `read` (the 1-D calls: with advice on what to do),
/// `read_write` (the shape layer, whose outputs are arrays too).
enum class wording { read, read_write };

/// Enumerations passed in from callers (possibly cast from ints): a value outside the
/// enumeration is errc::invalid_argument naming it (never silently read as another value).
void check_enum(const char* fn, const char* what, int value, int count);
void check_accuracy(const char* fn, accuracy a);
void check_reduce_op(const char* fn, reduce_op op);
void check_extreme(const char* fn, extreme_op op, nan_policy nans);

/// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes);

/// Picks the backend for arguments whose memory sides are resolved, or throws
/// (errc::invalid_argument: `requested` is not a backend value; errc::wrong_memory: mixed sides under backend::automatic, or a side the forced backend
/// cannot reach; errc::no_gpu: cuda without a usable GPU).
backend choose(const char* fn, backend requested, std::initializer_list<side> args, wording w = wording::read);

/// check(fn, a), then choose for that argument alone.
backend check_one(const char* fn, arg& a, backend requested);

/// Equal lengths (errc::length_mismatch) and element types (errc::invalid_argument) of a and b.
void same_length(const char* fn, const arg& a, const arg& b);

/// Partial overlap of `out` with input `in` is errc::invalid_argument; exact aliasing (in
/// place) is allowed.
void check_alias(const char* fn, const arg& in, const arg& out);

/// float32 or float64 (the result types of the floating reductions).
bool float32_or_64(dtype t);

/// A floating result: not null (errc::null_pointer), float32 or float64 (errc::invalid_argument).
void need_float_result(const char* fn, const void* result, dtype result_type);

/// Writes v rounded to t (float32 or float64) to result.
void put_float(void* result, dtype t, double v);

}  // namespace tally::validate
