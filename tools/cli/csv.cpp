// tally CLI: reading a numeric column of a CSV file through zlib (plain files read as-is).
#include "csv.hpp"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace tally_cli::csv {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw error(path + ": " + problem);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A cell quoted for a message, shortened when long.
std::string quote(std::string_view s) {
  std::string out(1, '\'');
  for (std::size_t i = 0; i < s.size() && i < 40; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (s.size() > 40) out += "...";
  return out += '\'';
}

/// The whole (decompressed) file.
std::string slurp(const std::string& path) {
  errno = 0;
  gzFile g = gzopen(path.c_str(), "rb");
  if (!g) fail(path, std::string("cannot open: ") + (errno ? std::strerror(errno) : "out of memory"));
  std::string text;
  std::vector<char> buf(1 << 16);
  int n, code = Z_OK;
  while ((n = gzread(g, buf.data(), static_cast<unsigned>(buf.size()))) > 0) text.append(buf.data(), n);
  const char* msg = gzerror(g, &code);
  std::string problem = code == Z_ERRNO ? std::strerror(errno) : msg;
  // zlib's message starts with the path ("d.csv.gz: unexpected end of file"); name it once.
  if (problem.starts_with(path + ": ")) problem.erase(0, path.size() + 2);
  gzclose_r(g);
  if (n < 0 || (code != Z_OK && code != Z_STREAM_END)) fail(path, "cannot read: " + problem);
  return text;
}

/// The cells of one line: RFC 4180 quoting with `delim`, or blank-separated for ' '.
/// `unclosed`: the 0-based index of a cell whose opening quote is not closed on the line
/// (a missing quote, or a quoted cell that spans lines, which is not read), else npos.
std::vector<std::string> split(std::string_view line, char delim, std::size_t& unclosed) {
  std::vector<std::string> cells;
  unclosed = std::string::npos;
  if (delim == ' ') {
    std::size_t i = 0;
    while (true) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i == line.size()) return cells;
      std::size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
      cells.emplace_back(line.substr(i, j - i));
      i = j;
    }
  }
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c != '"') cell += c;
      else if (i + 1 < line.size() && line[i + 1] == '"') cell += c, ++i;
      else quoted = false;
    } else if (c == '"' && trim(cell).empty()) {
      quoted = true;
      cell.clear();
    } else if (c == delim) {
      cells.push_back(std::move(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  if (quoted) unclosed = cells.size();
  cells.push_back(std::move(cell));
  return cells;
}

struct line {
  std::int64_t number;  // 1-based line number in the file
  std::string_view text;
};

/// The non-blank lines after the first `skip` lines. Lines end in LF, CR LF or a lone CR
/// (classic Mac OS files), as Python's universal newlines read them; a UTF-8 BOM is allowed.
std::vector<line> data_lines(std::string_view text, std::int64_t skip) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<line> out;
  std::int64_t number = 0;
  while (!text.empty()) {
    std::size_t end = text.find_first_of("\r\n");
    std::string_view l = text.substr(0, end);
    std::size_t next = end == std::string_view::npos ? text.size()
                       : text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n' ? end + 2
                                                                                           : end + 1;
    text.remove_prefix(next);
    if (++number > skip && !trim(l).empty()) out.push_back({number, l});
  }
  return out;
}

/// The cells of line l, refusing a quote that the line does not close.
std::vector<std::string> cells_of(const std::string& path, const line& l, char delim) {
  std::size_t unclosed;
  std::vector<std::string> cells = split(l.text, delim, unclosed);
  if (unclosed != std::string::npos)
    fail(path, "row " + std::to_string(l.number) + ", column " + std::to_string(unclosed + 1) +
                   ": a quoted cell is not closed on its line (a missing closing quote, or a line break inside"
                   " quotes, which tally does not read)");
  return cells;
}

/// Whether a cell that is not a number starts like one (a digit, a sign or a point), or is
/// empty: a first row whose cell is such is data with a typo as often as it is a header.
bool numeric_looking(std::string_view cell) {
  std::string_view s = trim(cell);
  return s.empty() || (s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '-' || s[0] == '.';
}

/// The chosen column: its index, whether the first row is a header, and its name in messages.
struct column {
  std::size_t index = 0;
  bool header = false;
  std::string label;
};

/// Resolves --column: "" (the only column), digits (a 0-based index, always), "name:NAME"
/// (always a header name: the way to pick a header made of digits, such as 2019), or NAME.
/// `first` is the first row, read at line `first_line`.
column resolve(const std::string& path, const std::string& spec, const std::vector<std::string>& first,
               std::int64_t first_line) {
  column c;
  const bool by_name = spec.starts_with("name:");
  const std::string name = by_name ? spec.substr(5) : spec;
  bool digits = !by_name && !spec.empty() && spec.find_first_not_of("0123456789") == std::string::npos;
  auto named = [&](const std::string& n) {
    for (std::size_t i = 0; i < first.size(); ++i)
      if (trim(first[i]) == n) return i;
    return first.size();
  };
  if (spec.empty()) {
    if (first.size() != 1)
      fail(path, "has " + std::to_string(first.size()) + " columns; choose one with --column NAME|INDEX");
  } else if (digits) {
    c.index = spec.size() > 9 ? first.size() : std::stoul(spec);
    if (c.index >= first.size())
      fail(path, "column index " + spec + " is out of range (the first row has " +
                     std::to_string(first.size()) + " columns; indexes start at 0)" +
                     (named(spec) < first.size() ? "; to pick the column named " + quote(spec) +
                                                       ", say --column name:" + spec
                                                 : ""));
  } else if (spec[0] == '-' && spec.size() > 1 && spec.find_first_not_of("0123456789", 1) == std::string::npos) {
    fail(path, "column index " + spec + " is out of range (indexes start at 0)");
  } else {
    c.index = named(name);
    if (c.index == first.size()) {
      std::string names;
      for (std::size_t i = 0; i < first.size(); ++i) names += (i ? ", " : "") + quote(trim(first[i]));
      fail(path, "no column named " + quote(name) + " (the first row has " + names + ")");
    }
    for (std::size_t j = c.index + 1; j < first.size(); ++j)
      if (trim(first[j]) == name)
        fail(path, "the column name " + quote(name) + " is ambiguous: columns " + std::to_string(c.index + 1) +
                       " and " + std::to_string(j + 1) + " of line " + std::to_string(first_line) +
                       " both have it (pick one by 0-based index, e.g. --column " + std::to_string(c.index) + ")");
    c.header = true;
  }
  double ignored;
  if (!c.header && !parse_number(first[c.index], ignored)) {
    // A guessed header: said on stderr when its cell could be a mistyped number (or is
    // empty), so that a row of data is never dropped silently.
    c.header = true;
    if (numeric_looking(first[c.index]))
      std::fprintf(stderr,
                   "tally: note: %s: line %lld is taken as a header, as its cell %s (column %zu) is not a number"
                   " (name the column to confirm the header; fix the cell if it is data)\n",
                   path.c_str(), static_cast<long long>(first_line), quote(trim(first[c.index])).c_str(),
                   c.index + 1);
  }
  c.label = c.header ? quote(trim(first[c.index])) : std::to_string(c.index + 1);
  return c;
}

}  // namespace

bool parse_number(std::string_view cell, double& out) {
  std::string_view s = trim(cell);
  if (!s.empty() && s[0] == '+') {
    s.remove_prefix(1);
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) return false;
  }
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec == std::errc::invalid_argument || end != s.data() + s.size()) return false;
  if (ec == std::errc::result_out_of_range)  // overflow to +-inf, underflow to 0, as Python
    out = std::strtod(std::string(s).c_str(), nullptr);
  return true;
}

host_array read(const std::string& path, const options& opt) {
  std::string text = slurp(path);
  if (text.find('\0') != std::string::npos)
    fail(path, "neither a .npy file nor CSV text (it holds NUL bytes)");
  std::vector<line> lines = data_lines(text, opt.skip_rows);
  host_array a = make_array(tally::dtype::float64, {0});
  // A CSV input without data is a mistake (a wrong --skip-rows, the wrong file), not an
  // empty array: say so rather than print the sum of nothing.
  const std::string skipped = opt.skip_rows ? " after skipping " + std::to_string(opt.skip_rows) + " lines" : "";
  if (lines.empty()) fail(path, "no data rows" + skipped);
  const std::size_t width = cells_of(path, lines[0], opt.delimiter).size();
  column c = resolve(path, opt.column, cells_of(path, lines[0], opt.delimiter), lines[0].number);
  auto& v = std::get<std::vector<double>>(a.data);
  v.reserve(lines.size());
  for (std::size_t r = c.header ? 1 : 0; r < lines.size(); ++r) {
    std::vector<std::string> cells = cells_of(path, lines[r], opt.delimiter);
    // A row wider than the first (header) row: its cells cannot be matched to the columns
    // (a decimal comma in a comma-separated file, say "1,5"), so the file is refused rather
    // than read by the first row's columns with the rest dropped. Empty cells past the
    // first row's width (a trailing delimiter, "1,2,") are not data and pass.
    std::size_t used = cells.size();
    while (used > width && trim(cells[used - 1]).empty()) --used;
    if (used > width)
      fail(path, "row " + std::to_string(lines[r].number) + " has " + std::to_string(used) + " cells, line " +
                     std::to_string(lines[0].number) + " (the first row) has " + std::to_string(width) +
                     " (a decimal comma? quote such cells, or choose another --delimiter)");
    std::string where = "row " + std::to_string(lines[r].number) + ", column " + c.label + ": ";
    if (c.index >= cells.size())
      fail(path, where + "missing (the row has " + std::to_string(cells.size()) + " cells)");
    if (trim(cells[c.index]).empty()) fail(path, where + "empty cell");
    double x;
    if (!parse_number(cells[c.index], x)) fail(path, where + quote(trim(cells[c.index])) + " is not a number");
    v.push_back(x);
  }
  if (v.empty()) fail(path, "no data rows" + skipped + " (only a header)");
  a.shape = {static_cast<std::int64_t>(v.size())};
  return a;
}

}  // namespace tally_cli::csv
