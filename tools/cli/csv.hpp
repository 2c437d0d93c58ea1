// tally CLI: one numeric column of a CSV file (plain or gzip-compressed), read as float64.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "array.hpp"

namespace tally_cli::csv {

/// A problem with a CSV file; what() is "FILE: problem".
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct options {
  /// Header NAME or 0-based INDEX (digits are always an index) of the column, or "name:NAME"
  /// (always a name: a header such as 2019); empty: the file's only column.
  std::string column;
  /// Cell separator; ' ' splits on runs of blanks (numpy.loadtxt's default).
  char delimiter = ',';
  /// Lines skipped at the top before the header or data (numpy.loadtxt's skiprows).
  std::int64_t skip_rows = 0;
};

/// Reads one column as a 1-D float64 array. The first row (after skip_rows; blank lines are
/// ignored) is a header when the column is chosen by NAME or its cell there is not a number;
/// in the second case a note goes to stderr when that cell is empty or starts like a number
/// (a digit, a sign or a point: "0x10", "1.2.3"), which may be data with a typo. Lines end in
/// LF, CR LF or CR. Throws csv::error naming the row and column of a bad cell, a quote not
/// closed on its line (quoted line breaks are not read), or a name two columns share.
host_array read(const std::string& path, const options& opt);

/// Parses a cell as Python's float() would ("1e3", " -2.5", "+4", "inf", "nan"); false if
/// it is not a number.
bool parse_number(std::string_view cell, double& out);

}  // namespace tally_cli::csv
