// tally CLI: reductions along one axis of a 2-D array (--axis 0|1), through tally/shapes.hpp.
#pragma once

#include <string>
#include <vector>

#include "array.hpp"
#include "tally/core.hpp"

namespace tally_cli {

/// One result per column (axis 0) or row (axis 1), as text (repr) and JSON numbers.
struct axis_report {
  std::vector<std::string> text, json;
  tally::dtype type;  // of the results
  double seconds;  // of the library call alone (copies to and from the GPU excluded)
  tally::backend used;  // cpu or cuda
};

/// `cmd` (sum, mean, min, max, argmin, argmax) of the 2-D array `a` along `axis`, with NumPy's
/// result types: sum float32/float64/int64, mean float32 (float32 data) or float64, min/max
/// the input's type, argmin/argmax int64. Backend `be` (cpu or cuda, never automatic): cuda
/// copies the matrix to device memory once, runs the shape entry points (tally/shapes.hpp)
/// on the device views and copies the results back (cuda_staging.hpp), so the printed values
/// are the same as the cpu's (the shape layer gives the same bits on every backend for exact,
/// integer and min/max/arg results). Throws std::invalid_argument (the caller adds the file
/// name) for a non-2-D array, or an argmin/argmax with no answer (an empty row/column, or
/// only NaN with skip_nan); tally::error for library errors, among them the cuda backend's
/// refusals (errc::invalid_argument: an operation it lacks; errc::no_gpu: no GPU or no CUDA
/// in this build) passed through unchanged.
axis_report reduce_along(const std::string& cmd, const host_array& a, int axis, bool skip_nan, tally::accuracy acc,
                         tally::backend be);

}  // namespace tally_cli
