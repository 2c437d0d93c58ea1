// tally CLI: --axis for 2-D arrays (sum, mean, min, max, argmin, argmax per row or column),
// on the cpu backend or, through one copy of the matrix to device memory, the cuda backend.
#include "axis.hpp"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "cuda_staging.hpp"
#include "format.hpp"
#include "tally/shapes.hpp"

namespace tally_cli {

axis_report reduce_along(const std::string& cmd, const host_array& a, int axis, bool skip_nan, tally::accuracy acc,
                         tally::backend be) {
  if (a.shape.size() != 2)
    throw std::invalid_argument("--axis needs a 2-D array, and this one has shape " + shape_str(a.shape));
  const std::int64_t rows = a.shape[0], cols = a.shape[1];
  tally::matrix_ref x{a.bytes(), rows, cols, cols, 1, a.type(), tally::memory::host};
  const std::int64_t m = axis == 0 ? cols : rows;
  // result types as the 1-D commands: sums float32/float64 (float32 for the 16-bit floats),
  // uint64 for unsigned data, int64 for signed and bool; means float32 for float32 and the
  // 16-bit floats, else float64; min/max the input's type (the library reads all thirteen)
  const tally::dtype t = a.type();
  const bool half = t == tally::dtype::float16 || t == tally::dtype::bfloat16;
  const bool floating = t == tally::dtype::float32 || t == tally::dtype::float64;
  tally::dtype rt = cmd == "sum"    ? (floating ? t : half ? tally::dtype::float32 : tally::is_unsigned(t) ? tally::dtype::uint64 : tally::dtype::int64)
                    : cmd == "mean" ? (t == tally::dtype::float32 || half ? tally::dtype::float32 : tally::dtype::float64)
                    : cmd == "argmin" || cmd == "argmax" ? tally::dtype::int64
                                                         : t;
  host_array out = make_array(rt, {m});
  std::vector<std::int64_t> index(static_cast<std::size_t>(m));
  const bool want_index = cmd.starts_with("arg");
  tally::mutable_array_ref values = want_index ? tally::mutable_array_ref{} : out.mref();
  tally::mutable_array_ref indices =
      want_index ? tally::mutable_array_ref{index.data(), m, tally::dtype::int64, tally::memory::host} : tally::mutable_array_ref{};
  // No outputs (an axis of length 0 kept): the wanted array is still "given" (non-null), so
  // the result is an empty list, as NumPy's, rather than "neither values nor indices".
  std::int64_t no_outputs = 0;
  tally::mutable_array_ref& wanted = want_index ? indices : values;
  if (wanted.data == nullptr) wanted.data = &no_outputs;
  // The one call, on host arrays (cpu) or their device copies (cuda, cuda_staging.cpp).
  matrix_call call = [&](tally::matrix_ref xm, tally::mutable_array_ref v, tally::mutable_array_ref i,
                         const tally::options& opt) {
    if (cmd == "sum") {
      tally::reduce_axis(tally::reduce_op::sum, xm, axis, v, opt);
    } else if (cmd == "mean") {
      tally::mean_axis(xm, axis, v, opt);
    } else {
      bool mx = cmd == "max" || cmd == "argmax";
      auto op = mx ? tally::extreme_op::max : tally::extreme_op::min;
      auto nans = skip_nan ? tally::nan_policy::omit : tally::nan_policy::propagate;
      tally::extreme_axis(op, nans, xm, axis, v, i, opt);
    }
  };
  double secs = 0;
  if (be == tally::backend::cuda && tally::cuda_available()) {
    secs = matrix_on_gpu(call, x, values, indices, acc);
  } else {
    // The cpu backend; or cuda without a GPU, where the library reports errc::no_gpu.
    auto t0 = std::chrono::steady_clock::now();
    call(x, values, indices, {be, nullptr, acc});
    secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  axis_report r{{}, {}, rt, secs, be};
  for (std::int64_t o = 0; o < m; ++o) {
    scalar v;
    if (want_index) {
      if (index[static_cast<std::size_t>(o)] < 0)
        throw std::invalid_argument(std::string(skip_nan ? "nan" : "") + cmd + " along axis " + std::to_string(axis) + ": " +
                                    (axis == 0 ? "column " : "row ") + std::to_string(o) +
                                    ((axis == 0 ? rows : cols) == 0 ? " is empty" : " holds only NaN") +
                                    ", so there is no index");
      v = index[static_cast<std::size_t>(o)];
    } else {
      // (as the 1-D commands: the 16-bit floats as their exact float32 value, bool as 0 or 1)
      const void* p = static_cast<const char*>(out.bytes()) + o * tally::dtype_size(rt);
      v = scalar_of(rt, p);
    }
    r.text.push_back(repr(v));
    r.json.push_back(json_number(v));
  }
  return r;
}

}  // namespace tally_cli
