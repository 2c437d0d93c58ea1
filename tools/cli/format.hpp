// tally CLI: printing results as Python/NumPy print them, and as JSON.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tally/types.hpp"

namespace tally_cli {

/// A result value: float32, float64, int64 or uint64.
using scalar = std::variant<float, double, std::int64_t, std::uint64_t>;

/// The value of type t at p as a scalar: the 16-bit floats as their exact float32 value,
/// integers and bool (0 or 1) as int64, uint64 as itself.
scalar scalar_of(tally::dtype t, const void* p);

/// Python's repr of a float: shortest round-trip digits, exponent form when the decimal
/// exponent is < -4 or >= 16 ("55.0", "0.1", "1e+16", "1.5e-05", "-0.0", "inf", "nan").
std::string repr(double v);

/// NumPy's str of a float32: shortest float32 digits, exponent form unless
/// 1e-4 <= |v| < 1e6 ("0.1", "1e+06", "1.2345679e+08").
std::string repr(float v);

/// Plain decimal.
std::string repr(std::int64_t v);
std::string repr(std::uint64_t v);

/// The value as printed by default.
std::string repr(const scalar& v);

/// The value as a JSON number; non-finite values as the strings "nan", "inf", "-inf".
std::string json_number(const scalar& v);

/// A JSON string literal (quotes and escapes included).
std::string json_string(std::string_view s);

/// A library message "tally::OP: problem" with the input file(s) named after the operation,
/// "tally::OP: FILES: problem" (other text: "FILES: text"); the integer overflow errors name
/// no file of their own.
std::string naming_files(std::string_view what, std::string_view files);

/// A one-line JSON object from members whose values are already JSON text.
std::string json_object(const std::vector<std::pair<std::string, std::string>>& members);

}  // namespace tally_cli
