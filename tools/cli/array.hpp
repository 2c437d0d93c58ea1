// tally CLI: an array read from a file into host memory (element type, shape, C-order data).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "tally/core.hpp"

namespace tally_cli {

/// NumPy's bool as stored: one byte, 0 or 1 (std::vector<bool> has no data()).
struct bool8 {
  std::uint8_t v;
};

/// The elements; the alternative's index equals the tally::dtype value.
using buffer = std::variant<std::vector<float>, std::vector<double>, std::vector<std::int32_t>,
                            std::vector<std::int64_t>, std::vector<tally::float16>,
                            std::vector<tally::bfloat16>, std::vector<std::int8_t>,
                            std::vector<std::int16_t>, std::vector<std::uint8_t>,
                            std::vector<std::uint16_t>, std::vector<std::uint32_t>,
                            std::vector<std::uint64_t>, std::vector<bool8>>;
static_assert(std::variant_size_v<buffer> == tally::dtype_count);

/// The element type a host_array stores for tally element type T.
template <class T> using stored_t = std::conditional_t<std::is_same_v<T, bool>, bool8, T>;

/// A host array: NumPy shape ({} for 0-d) and elements in C (row-major) order.
struct host_array {
  std::vector<std::int64_t> shape;
  buffer data;

  tally::dtype type() const { return static_cast<tally::dtype>(data.index()); }
  std::int64_t size() const;
  const void* bytes() const;
  void* bytes();
  /// A view of the elements for the type-erased tally API (host memory).
  tally::array_ref ref() const { return {bytes(), size(), type(), tally::memory::host}; }
  tally::mutable_array_ref mref() { return {bytes(), size(), type(), tally::memory::host}; }
};

/// An array of `n` zeros of type `t`, shape (n,) unless `shape` is given.
host_array make_array(tally::dtype t, std::vector<std::int64_t> shape);

/// The common type of two element types: equal types stay; two floating types, a floating and
/// an integer type, or uint64 with a signed type -> float64 (as NumPy for the last two); two
/// unsigned types -> uint64; other integers -> int64; bool with another type -> that type.
tally::dtype promote(tally::dtype a, tally::dtype b) noexcept;

/// `a` with its elements converted to type `t` (as NumPy's astype does).
host_array convert(host_array a, tally::dtype t);

/// `a` widened exactly to the core types the shape layer and the MPI layer read (float32,
/// float64, int32, int64): 16-bit floats to float32, small integers and bool to int32, uint32
/// to int64. Other types stay (uint64 too: its callers take it as it is, or bias it first).
host_array widen_to_core(host_array a);

/// A shape as Python prints a tuple: "()", "(3,)", "(2, 3)".
std::string shape_str(const std::vector<std::int64_t>& shape);

}  // namespace tally_cli
