// tally CLI: host arrays, NumPy type promotion and conversion.
#include "array.hpp"

#include <type_traits>
#include <utility>

namespace tally_cli {

std::int64_t host_array::size() const {
  return std::visit([](const auto& v) { return static_cast<std::int64_t>(v.size()); }, data);
}

const void* host_array::bytes() const {
  return std::visit([](const auto& v) -> const void* { return v.data(); }, data);
}

void* host_array::bytes() {
  return std::visit([](auto& v) -> void* { return v.data(); }, data);
}

host_array make_array(tally::dtype t, std::vector<std::int64_t> shape) {
  std::size_t n = 1;
  for (std::int64_t d : shape) n *= static_cast<std::size_t>(d);
  host_array a{std::move(shape), {}};
  switch (t) {
    case tally::dtype::float32: a.data = std::vector<float>(n); break;
    case tally::dtype::float64: a.data = std::vector<double>(n); break;
    case tally::dtype::int32: a.data = std::vector<std::int32_t>(n); break;
    case tally::dtype::int64: a.data = std::vector<std::int64_t>(n); break;
  }
  return a;
}

tally::dtype promote(tally::dtype a, tally::dtype b) noexcept {
  using tally::dtype;
  if (a == b) return a;
  bool fa = a == dtype::float32 || a == dtype::float64;
  bool fb = b == dtype::float32 || b == dtype::float64;
  if (fa != fb) return dtype::float64;  // an integer with a float: float64 (as NumPy)
  return fa ? dtype::float64 : dtype::int64;
}

host_array convert(host_array a, tally::dtype t) {
  if (a.type() == t) return a;
  host_array out = make_array(t, a.shape);
  std::visit(
      [](const auto& from, auto& to) {
        using To = typename std::decay_t<decltype(to)>::value_type;
        for (std::size_t i = 0; i < from.size(); ++i) to[i] = static_cast<To>(from[i]);
      },
      a.data, out.data);
  return out;
}

std::string shape_str(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace tally_cli
