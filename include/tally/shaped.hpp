// tally: C++ wrappers of the shape layer (tally/shapes.hpp): typed strided views, matrices and
// segments. Included by tally/tally.hpp (and includes it: either may come first); the
// contracts are those of tally/shapes.hpp.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "tally/shapes.hpp"
#include "tally/tally.hpp"  // (located, detail::ref / mref; tally.hpp includes this file at its end)

namespace tally {

/// A strided 1-D view of T: element k at data + k * stride (elements; any sign, 0 allowed).
/// Shape (size,). E.g. every k-th element: {p, (n + k - 1) / k, k}; column j of a row-major
/// (rows, cols) matrix: {p + j, rows, cols}.
template <class T> struct strided {
  const T* data = nullptr;
  std::int64_t size = 0;
  std::int64_t stride = 1;
  memory where = memory::unknown;
  strided_ref ref() const { return {data, size, stride, dtype_of<T>(), where}; }
};

/// A 2-D array of T, shape (rows, cols): element (i, j) at data + i * row_stride + j * col_stride.
template <class T> struct matrix {
  const T* data = nullptr;
  std::int64_t rows = 0, cols = 0;
  std::int64_t row_stride = 0, col_stride = 1;
  memory where = memory::unknown;
  /// C order (NumPy's default): row_stride = cols, col_stride = 1.
  static matrix row_major(const T* p, std::int64_t rows, std::int64_t cols, memory m = memory::unknown) {
    return {p, rows, cols, cols, 1, m};
  }
  /// Fortran order: row_stride = 1, col_stride = rows.
  static matrix col_major(const T* p, std::int64_t rows, std::int64_t cols, memory m = memory::unknown) {
    return {p, rows, cols, 1, rows, m};
  }
  matrix_ref ref() const { return {data, rows, cols, row_stride, col_stride, dtype_of<T>(), where}; }
  /// The number of results a reduction along `axis` gives: cols for axis 0, rows for axis 1.
  std::int64_t outputs(int axis) const { return axis == 0 ? cols : rows; }
};

/// Sum of a strided view (see `sum` for types, accuracy and errors). Out as `sum`.
template <class T, class Out = result_t<T>> Out sum_strided(strided<T> x, const options& opt = {}) {
  Out r{};
  tally::reduce(reduce_op::sum, x.ref(), &r, dtype_of<Out>(), opt);
  return r;
}
/// Mean of a strided view, correctly rounded (NaN when empty). Out as `mean` (mean_t<T>: float
/// for float, float16 and bfloat16, double otherwise; float16 and bfloat16 gave double before).
template <class T, class Out = mean_t<T>>
Out mean_strided(strided<T> x, const options& opt = {}) {
  Out r{};
  tally::mean(x.ref(), &r, dtype_of<Out>(), opt);
  return r;
}
/// Minimum (MAX = false) or maximum of a strided view and its first index (-1 when empty).
template <class T, bool MAX>
located<T> extreme_strided(strided<T> x, nan_policy nans = nan_policy::propagate, const options& opt = {}) {
  located<T> r{};
  tally::extreme(MAX ? extreme_op::max : extreme_op::min, nans, x.ref(), &r.value, &r.index, opt);
  return r;
}

namespace detail {
/// A contiguous container of writable elements (std::vector<Out>, std::array<Out, N>, ...):
/// the outputs of the wrappers below may be one, with its element type as Out (host memory).
template <class C>
concept out_container = requires(C& c) {
  c.data();
  c.size();
} && std::is_pointer_v<decltype(std::declval<C&>().data())> &&
                        !std::is_const_v<std::remove_pointer_t<decltype(std::declval<C&>().data())>>;
template <class C> using elem_of = std::remove_pointer_t<decltype(std::declval<C&>().data())>;
}  // namespace detail

/// Sums along `axis` into out (shape (cols,) for axis 0, (rows,) for axis 1); Out: float or
/// double for floating T, int64_t for signed integers and bool, uint64_t for unsigned
/// integers (the default, result_t<T>). See tally::reduce_axis.
template <class T, class Out = result_t<T>>
void sum_along(matrix<T> x, int axis, view<Out> out, const options& opt = {}) {
  reduce_axis(reduce_op::sum, x.ref(), axis, detail::mref(out), opt);
}
/// Means along `axis` (float or double out; NaN for an empty row/column).
template <class T, class Out> void mean_along(matrix<T> x, int axis, view<Out> out, const options& opt = {}) {
  mean_axis(x.ref(), axis, detail::mref(out), opt);
}
/// sum_along and mean_along into a container (e.g. std::vector<double>, host memory): Out is
/// its element type, so `sum_along<float>(m, 0, outputs)` needs no second template argument.
template <class T, detail::out_container C> void sum_along(matrix<T> x, int axis, C& out, const options& opt = {}) {
  using Out = detail::elem_of<C>;
  sum_along<T, Out>(x, axis, view<Out>(out), opt);
}
template <class T, detail::out_container C> void mean_along(matrix<T> x, int axis, C& out, const options& opt = {}) {
  using Out = detail::elem_of<C>;
  mean_along<T, Out>(x, axis, view<Out>(out), opt);
}
/// Minimum (MAX = false) or maximum along `axis`: values (T) and/or first indices (int64_t;
/// an empty view leaves that one unwritten).
template <class T, bool MAX>
void extreme_along(matrix<T> x, int axis, view<T> values, view<std::int64_t> indices,
                nan_policy nans = nan_policy::propagate, const options& opt = {}) {
  extreme_axis(MAX ? extreme_op::max : extreme_op::min, nans, x.ref(), axis, detail::mref(values),
               detail::mref(indices), opt);
}

/// Per-segment sums: offsets (segments + 1,), out (segments,). See tally::reduce_segments.
template <class T, class Out = result_t<T>>
void segment_sum(view<const T> x, view<const std::int64_t> offsets, view<Out> out, const options& opt = {}) {
  reduce_segments(reduce_op::sum, detail::ref(x), offsets.data, offsets.size - 1, detail::mref(out), opt);
}
/// Per-segment means (NaN for empty segments).
template <class T, class Out>
void segment_mean(view<const T> x, view<const std::int64_t> offsets, view<Out> out, const options& opt = {}) {
  tally::mean_segments(detail::ref(x), offsets.data, offsets.size - 1, detail::mref(out), opt);
}
/// segment_sum and segment_mean into a container (host memory): Out is its element type.
template <class T, detail::out_container C>
void segment_sum(view<const T> x, view<const std::int64_t> offsets, C& out, const options& opt = {}) {
  using Out = detail::elem_of<C>;
  segment_sum<T, Out>(x, offsets, view<Out>(out), opt);
}
template <class T, detail::out_container C>
void segment_mean(view<const T> x, view<const std::int64_t> offsets, C& out, const options& opt = {}) {
  using Out = detail::elem_of<C>;
  segment_mean<T, Out>(x, offsets, view<Out>(out), opt);
}
/// Per-segment minimum (MAX = false) or maximum and first index within the segment.
template <class T, bool MAX>
void segment_extreme(view<const T> x, view<const std::int64_t> offsets, view<T> values,
                      view<std::int64_t> indices, nan_policy nans = nan_policy::propagate,
                      const options& opt = {}) {
  tally::extreme_segments(MAX ? extreme_op::max : extreme_op::min, nans, detail::ref(x), offsets.data,
                          offsets.size - 1, detail::mref(values), detail::mref(indices), opt);
}

// ---- stream-ordered forms (CUDA backend; see tally/shapes.hpp): device memory, no waiting;
// status_device: two int64 in device memory, or null. It comes before opt (and, in the extreme
// forms, after nans), so a call on a stream spells it out: sum_along_async(m, 1, out, nullptr,
// opt); extreme_along_async<float, true>(m, 1, v, i, nan_policy::propagate, status, opt).
// The segment forms take segments = offsets.size - 1 (an empty offsets view is an error).

/// sum_along, stream-ordered.
template <class T, class Out = result_t<T>>
void sum_along_async(matrix<T> x, int axis, view<Out> out, std::int64_t* status_device = nullptr, const options& opt = {}) {
  reduce_axis_async(reduce_op::sum, x.ref(), axis, detail::mref(out), status_device, opt);
}
/// mean_along, stream-ordered.
template <class T, class Out>
void mean_along_async(matrix<T> x, int axis, view<Out> out, std::int64_t* status_device = nullptr, const options& opt = {}) {
  mean_axis_async(x.ref(), axis, detail::mref(out), status_device, opt);
}
/// extreme_along, stream-ordered.
template <class T, bool MAX>
void extreme_along_async(matrix<T> x, int axis, view<T> values, view<std::int64_t> indices,
                         nan_policy nans = nan_policy::propagate, std::int64_t* status_device = nullptr,
                         const options& opt = {}) {
  extreme_axis_async(MAX ? extreme_op::max : extreme_op::min, nans, x.ref(), axis, detail::mref(values),
                     detail::mref(indices), status_device, opt);
}
/// segment_sum, stream-ordered (bad device offsets: status_device[0]).
template <class T, class Out = result_t<T>>
void segment_sum_async(view<const T> x, view<const std::int64_t> offsets, view<Out> out,
                       std::int64_t* status_device = nullptr, const options& opt = {}) {
  reduce_segments_async(reduce_op::sum, detail::ref(x), offsets.data, offsets.size - 1, detail::mref(out), status_device, opt);
}
/// segment_mean, stream-ordered.
template <class T, class Out>
void segment_mean_async(view<const T> x, view<const std::int64_t> offsets, view<Out> out,
                        std::int64_t* status_device = nullptr, const options& opt = {}) {
  tally::mean_segments_async(detail::ref(x), offsets.data, offsets.size - 1, detail::mref(out), status_device, opt);
}
/// segment_extreme, stream-ordered.
template <class T, bool MAX>
void segment_extreme_async(view<const T> x, view<const std::int64_t> offsets, view<T> values,
                           view<std::int64_t> indices, nan_policy nans = nan_policy::propagate,
                           std::int64_t* status_device = nullptr, const options& opt = {}) {
  tally::extreme_segments_async(MAX ? extreme_op::max : extreme_op::min, nans, detail::ref(x), offsets.data,
                                offsets.size - 1, detail::mref(values), detail::mref(indices), status_device, opt);
}

}  // namespace tally
