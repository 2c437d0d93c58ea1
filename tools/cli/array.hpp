// tally CLI: an array read from a file into host memory (element type, shape, C-order data).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "tally/core.hpp"

namespace tally_cli {

/// The elements; the alternative's index equals the tally::dtype value.
using buffer = std::variant<std::vector<float>, std::vector<double>, std::vector<std::int32_t>,
                            std::vector<std::int64_t>>;

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

/// NumPy's common type of two element types (f4+f8 -> f8, i4+i8 -> i8, int + f4 -> f8, ...).
tally::dtype promote(tally::dtype a, tally::dtype b) noexcept;

/// `a` with its elements converted to type `t` (as NumPy's astype does).
host_array convert(host_array a, tally::dtype t);

/// A shape as Python prints a tuple: "()", "(3,)", "(2, 3)".
std::string shape_str(const std::vector<std::int64_t>& shape);

}  // namespace tally_cli
