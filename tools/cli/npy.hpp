// tally CLI: NumPy .npy files (read: format 1.0/2.0/3.0; write: format 1.0).
#pragma once

#include <stdexcept>
#include <string>

#include "array.hpp"

namespace tally_cli::npy {

/// A problem with a .npy file; what() is "FILE: problem".
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// True when the file at `path` starts with the .npy magic string.
bool has_magic(const std::string& path);

/// Reads a .npy file of dtype f2, f4, f8, i1, i2, i4, i8, u1, u2, u4, u8 or b1 (either byte order, C or Fortran order, any
/// shape) into a C-order host array in native byte order. Throws npy::error.
host_array read(const std::string& path);

/// Part `rank` of `parts` of a .npy file's elements (flattened in C order): elements
/// [total * rank / parts, total * (rank + 1) / parts), as a 1-D host array, with `offset` the
/// index of its first element and `total` the file's element count. C-order (and 1-D) files
/// are read from the slice's byte offset only; a Fortran-order file of 2 or more dimensions
/// is read whole and sliced (its C order is not contiguous on disk). Throws npy::error.
host_array read_slice(const std::string& path, int rank, int parts, std::int64_t& offset, std::int64_t& total);

/// Writes `a` as .npy format 1.0 (little-endian, C order) to `path` without ever leaving a
/// partial file: a temporary in the same folder, fsync, then rename. A file it replaces keeps
/// its permission bits (and its owner and group where the process may set them); a new file
/// gets 0666 & ~umask. Throws npy::error.
void write_atomic(const std::string& path, const host_array& a);

}  // namespace tally_cli::npy
