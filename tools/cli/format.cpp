// tally CLI: shortest round-trip float formatting (std::to_chars) laid out as Python does.
#include "format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tally_cli {
namespace {

/// Shortest digits and decimal exponent of a finite nonzero |v|: v = d.ddd * 10^exp.
template <class F> std::pair<std::string, int> shortest(F v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
  std::string s(buf, end);  // "1.2345e+02"
  std::size_t e = s.find('e');
  std::string digits = s.substr(0, 1) + (e > 2 ? s.substr(2, e - 2) : "");
  return {digits, std::atoi(s.c_str() + e + 1)};
}

/// Digits laid out with a decimal point, always at least one fractional digit ("55.0").
std::string positional(const std::string& d, int exp) {
  if (exp < 0) return "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + d;
  std::size_t ip = static_cast<std::size_t>(exp) + 1;
  if (d.size() <= ip) return d + std::string(ip - d.size(), '0') + ".0";
  return d.substr(0, ip) + "." + d.substr(ip);
}

/// Digits in exponent form with a signed, at least two-digit exponent ("1.5e-05").
std::string exponential(const std::string& d, int exp) {
  char e[16];
  std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
  std::string out = d.substr(0, 1);
  if (d.size() > 1) out.append(".").append(d, 1);
  return out += e;
}

/// The sign and the spellings shared by Python and NumPy for zero and non-finite values.
template <class F> bool special(F v, std::string& out) {
  if (std::isnan(v)) out = "nan";
  else if (std::isinf(v)) out = v < 0 ? "-inf" : "inf";
  else if (v == 0) out = std::signbit(v) ? "-0.0" : "0.0";
  else return false;
  return true;
}

}  // namespace

std::string repr(double v) {
  std::string s;
  if (special(v, s)) return s;
  auto [d, exp] = shortest(v);
  std::string out(v < 0 ? "-" : "");
  return out += exp < -4 || exp >= 16 ? exponential(d, exp) : positional(d, exp);
}

std::string repr(float v) {
  std::string s;
  if (special(v, s)) return s;
  auto [d, exp] = shortest(v);
  float a = std::fabs(v);
  bool pos = static_cast<double>(a) >= 1e-4 && a < 1e6f;  // NumPy compares the value itself
  std::string out(v < 0 ? "-" : "");
  return out += pos ? positional(d, exp) : exponential(d, exp);
}

std::string repr(std::int64_t v) { return std::to_string(v); }
std::string repr(std::uint64_t v) { return std::to_string(v); }

scalar scalar_of(tally::dtype t, const void* p) {
  return tally::visit(t, [&](auto tag) -> scalar {
    using T = typename decltype(tag)::type;
    T e;
    std::memcpy(&e, p, sizeof e);
    if constexpr (std::is_same_v<T, tally::float16> || std::is_same_v<T, tally::bfloat16>) return tally::to_float(e);
    else if constexpr (std::is_floating_point_v<T>) return e;
    else if constexpr (std::is_same_v<T, std::uint64_t>) return e;
    else return static_cast<std::int64_t>(e);
  });
}

std::string repr(const scalar& v) {
  return std::visit([](auto x) { return repr(x); }, v);
}

std::string json_number(const scalar& v) {
  std::string s = repr(v);
  return (s == "nan" || s == "inf" || s == "-inf") ? "\"" + s + "\"" : s;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string json_object(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out = "{";
  for (std::size_t i = 0; i < members.size(); ++i)
    out += (i ? ", " : "") + json_string(members[i].first) + ": " + members[i].second;
  return out + "}";
}

std::string naming_files(std::string_view what, std::string_view files) {
  std::size_t colon = what.starts_with("tally::") ? what.find(": ") : std::string_view::npos;
  if (colon == std::string_view::npos) return std::string(files) + ": " + std::string(what);
  return std::string(what.substr(0, colon + 2)) + std::string(files) + ": " + std::string(what.substr(colon + 2));
}

}  // namespace tally_cli
