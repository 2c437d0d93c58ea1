// tally CLI: --axis for 2-D arrays (sum, mean, min, max, argmin, argmax per row or column).
#include "axis.hpp"

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "format.hpp"
#include "tally/shapes.hpp"

namespace tally_cli {

axis_report reduce_along(const std::string& cmd, const host_array& a, int axis, bool skip_nan, tally::accuracy acc) {
  if (a.shape.size() != 2)
    throw std::invalid_argument("--axis needs a 2-D array, and this one has shape " + shape_str(a.shape));
  const std::int64_t rows = a.shape[0], cols = a.shape[1];
  tally::matrix_ref x{a.bytes(), rows, cols, cols, 1, a.type(), tally::memory::host};
  const std::int64_t m = axis == 0 ? cols : rows;
  const bool floating = a.type() == tally::dtype::float32 || a.type() == tally::dtype::float64;
  tally::dtype rt = cmd == "sum"                           ? (floating ? a.type() : tally::dtype::int64)
                    : cmd == "mean"                        ? (a.type() == tally::dtype::float32 ? a.type() : tally::dtype::float64)
                    : cmd == "argmin" || cmd == "argmax" ? tally::dtype::int64
                                                           : a.type();
  host_array out = make_array(rt, {m});
  std::vector<std::int64_t> index(static_cast<std::size_t>(m));
  tally::options opt{tally::backend::cpu, nullptr, acc};
  auto t0 = std::chrono::steady_clock::now();
  if (cmd == "sum") {
    tally::reduce_axis(tally::reduce_op::sum, x, axis, out.mref(), opt);
  } else if (cmd == "mean") {
    tally::mean_axis(x, axis, out.mref(), opt);
  } else {
    bool mx = cmd == "max" || cmd == "argmax";
    auto op = mx ? tally::extreme_op::max : tally::extreme_op::min;
    auto nans = skip_nan ? tally::nan_policy::omit : tally::nan_policy::propagate;
    tally::mutable_array_ref idx{index.data(), m, tally::dtype::int64, tally::memory::host};
    if (cmd.starts_with("arg")) tally::extreme_axis(op, nans, x, axis, {}, idx, opt);
    else tally::extreme_axis(op, nans, x, axis, out.mref(), {}, opt);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  axis_report r{{}, {}, rt, secs};
  for (std::int64_t o = 0; o < m; ++o) {
    scalar v;
    if (cmd.starts_with("arg")) {
      if (index[static_cast<std::size_t>(o)] < 0)
        throw std::invalid_argument(std::string(skip_nan ? "nan" : "") + cmd + " along axis " + std::to_string(axis) + ": " +
                                    (axis == 0 ? "column " : "row ") + std::to_string(o) +
                                    ((axis == 0 ? rows : cols) == 0 ? " is empty" : " holds only NaN") +
                                    ", so there is no index");
      v = index[static_cast<std::size_t>(o)];
    } else {
      const void* p = static_cast<const char*>(out.bytes()) + o * tally::dtype_size(rt);
      switch (rt) {
        case tally::dtype::float32: v = *static_cast<const float*>(p); break;
        case tally::dtype::float64: v = *static_cast<const double*>(p); break;
        case tally::dtype::int32: v = std::int64_t{*static_cast<const std::int32_t*>(p)}; break;
        case tally::dtype::int64: v = *static_cast<const std::int64_t*>(p); break;
      }
    }
    r.text.push_back(repr(v));
    r.json.push_back(json_number(v));
  }
  return r;
}

}  // namespace tally_cli
