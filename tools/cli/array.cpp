// tally CLI: host arrays, NumPy type promotion and conversion.
#include "array.hpp"

#include <cstdint>
#include <string>

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
  tally::visit(t, [&](auto tag) {
    a.data.emplace<static_cast<std::size_t>(tally::dtype_of<typename decltype(tag)::type>())>(n);
  });
  return a;
}

tally::dtype promote(tally::dtype a, tally::dtype b) noexcept {
  using tally::dtype;
  if (a == b) return a;
  if (a == dtype::bool_) return b;
  if (b == dtype::bool_) return a;
  if (tally::is_floating(a) || tally::is_floating(b)) return dtype::float64;
  bool ua = tally::is_unsigned(a), ub = tally::is_unsigned(b);
  if (ua && ub) return dtype::uint64;
  if ((a == dtype::uint64 && !ub) || (b == dtype::uint64 && !ua)) return dtype::float64;
  return dtype::int64;
}

namespace {
// An element as a plain C++ number (the 16-bit floats as their exact float, bool as 0/1).
template <class T> auto number(T x) {
  if constexpr (std::is_same_v<T, tally::float16> || std::is_same_v<T, tally::bfloat16>) return tally::to_float(x);
  else if constexpr (std::is_same_v<T, bool8>) return static_cast<int>(x.v != 0);
  else return x;
}
template <class To, class N> To from_number(N v) {
  if constexpr (std::is_same_v<To, tally::float16>) return tally::to_float16(static_cast<float>(v));
  else if constexpr (std::is_same_v<To, tally::bfloat16>) return tally::to_bfloat16(static_cast<float>(v));
  else if constexpr (std::is_same_v<To, bool8>) return bool8{static_cast<std::uint8_t>(v != 0)};
  else return static_cast<To>(v);
}
}  // namespace

host_array convert(host_array a, tally::dtype t) {
  if (a.type() == t) return a;
  host_array out = make_array(t, a.shape);
  std::visit(
      [](const auto& from, auto& to) {
        using To = typename std::decay_t<decltype(to)>::value_type;
        for (std::size_t i = 0; i < from.size(); ++i) to[i] = from_number<To>(number(from[i]));
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

host_array widen_to_core(host_array a) {
  switch (a.type()) {
    case tally::dtype::float16:
    case tally::dtype::bfloat16: return convert(std::move(a), tally::dtype::float32);
    case tally::dtype::int8:
    case tally::dtype::int16:
    case tally::dtype::uint8:
    case tally::dtype::uint16:
    case tally::dtype::bool_: return convert(std::move(a), tally::dtype::int32);
    case tally::dtype::uint32: return convert(std::move(a), tally::dtype::int64);
    default: return a;
  }
}

}  // namespace tally_cli
