// tally: parallel reductions for NVIDIA GPUs and the CPU.
//
//   #include <tally/tally.hpp>
//   #include <vector>
//   std::vector<float> x = ...;
//   float s = tally::sum<float>(x);                   // CPU backend (host data)
//   double d = tally::dot<double>({px, n}, {py, n});  // CUDA backend if px, py are device memory
//
// Shapes: every input is a contiguous 1-D view, shape (n,), n >= 0, 64-bit n.
// Element types: float, double, int32_t, int64_t, and tally::float16, tally::bfloat16, int8_t,
// int16_t, uint8_t, uint16_t, uint32_t, uint64_t, bool (accumulators and results of every
// operation: docs/types.md).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "tally/core.hpp"
#include "tally/types.hpp"

namespace tally {

namespace detail {
template <class T> array_ref ref(view<const T> v) {
  return {v.data, v.size, dtype_of<T>(), v.where};
}
template <class T> mutable_array_ref mref(view<T> v) {
  return {v.data, v.size, dtype_of<T>(), v.where};
}
}  // namespace detail

/// Sum of the n elements of x.
///
/// - Shapes: x (n,). Any n >= 0, any alignment of x.data.
/// - Types: T in {float, double, int32_t, int64_t, float16, bfloat16, int8_t, int16_t, uint8_t,
///   uint16_t, uint32_t, uint64_t, bool}. Result Out, by default `result_t<T>`: float ->
///   float, double -> double, float16/bfloat16 -> float, signed integers and bool -> int64_t
///   (a bool sum counts the trues), unsigned integers -> uint64_t; floating T may ask for
///   Out = float or double (sum<float, double>: float32 data, correctly rounded float64 sum).
///   16-bit floats are never accumulated in 16 bits (docs/types.md): exact mode sums float16
///   in 128-bit fixed point (units of 2^-24) and bfloat16 as float32 data; fast mode in float64.
/// - Accuracy, opt.accuracy = accuracy::exact (default): the exact sum of the inputs rounded
///   once to Out, to nearest, ties to even (correctly rounded), whatever n, the data's
///   condition number or exponent range. No intermediate overflows (1e308 + 1e308 - 1e308 is
///   1e308); an exact sum beyond Out's range is +-inf. Accumulators: float32 inputs in
///   exponent bins of float64 (Demmel, Hida 2003), float64 inputs in anchored levels
///   (error-free extraction, Demmel, Nguyen 2013/2015; products by TwoProduct, Ogita, Rump,
///   Oishi 2005), both backed by a Kulisch superaccumulator; docs/exact.md. float32 and
///   float64 sums, dots and norms first run a certified pass on both backends (a TwoSum
///   state with a running error bound, ops/certified.hpp: Ogita, Rump, Oishi 2005 and
///   Higham's running error analysis; on the CPU with AVX2 and FMA) and run the exact
///   accumulators only where it cannot prove the correctly rounded result (ties, deep
///   cancellation, zero results, specials): the same bits either way, only the time differs.
/// - accuracy::fast: a float64 accumulator tree (float32 data convert exactly) with the
///   error bound below, rounded to Out at the end.
/// - Integer inputs accumulate exactly in 128-bit integers (64-bit where n makes that exact),
///   so no partial sum ever wraps.
/// - Empty input: returns 0 (+0.0).
/// - Floating special values follow IEEE: a NaN gives NaN, +inf and -inf together give NaN,
///   a sum of negative zeros is -0.0.
/// - Error bound of accuracy::fast: before the final rounding to Out,
///     |result - exact| <= (L + ceil(log2 n) + 8) * 2^-53 * sum|x_i|,
///   where L bounds the longest serial run of float64 additions (the rest is a tree):
///   L = 128 on the CPU backend (8 lanes over blocks of 1024 elements, then pairwise trees);
///   L = ceil(n / (8192 * SMs)) + 64 on the CUDA backend (each resident thread folds tiles of
///   16 elements into a running sum, then warp, block and grid trees combine the threads).
///   float32 inputs convert to float64 exactly; a float32 result adds half an ulp of float32.
///   (The standard first-order bound for a summation of that depth; Higham, "Accuracy and
///   Stability of Numerical Algorithms", 2nd ed., section 4.2.) The bound assumes that no
///   partial sum overflows float64: fast mode has no guard against that, so float64 data
///   whose partial sums pass DBL_MAX can give +-inf or NaN where the exact sum is finite
///   (1e308 + 1e308 - 1e308 may come out +inf; exact mode gives 1e308). float32 and 16-bit
///   data cannot overflow a float64 accumulator.
/// - Determinism: exact mode gives the same bits on every backend, GPU, launch shape and
///   thread count (the result is defined mathematically). Fast mode gives the same bits for
///   the same input, backend, device model and build; they can differ between the CPU and a
///   GPU, or between GPUs with different SM counts.
/// - Blocking: returns when the value is in host memory (the CUDA backend synchronises
///   `opt.stream`; an empty input's result is written on the host at once, so an empty call
///   is not a synchronisation point).
/// - Errors (tally::error): errc::null_pointer (null data, n > 0); errc::invalid_argument
///   (n < 0, or device data at an address that is not a multiple of the element size: the
///   GPU reads elements only at aligned addresses); errc::overflow (an integer sum outside int64, or uint64 for unsigned T: the exact sum is computed, so an
///   intermediate excursion past int64 that comes back is not an error); errc::wrong_memory
///   (host data forced onto the CUDA backend or device data onto the CPU backend);
///   errc::no_gpu (CUDA backend requested, no GPU or CPU-only build); errc::cuda_error.
template <class T, class Out = result_t<T>> Out sum(view<const T> x, const options& opt = {}) {
  static_assert(is_floating_element_v<T> ? (std::is_same_v<Out, float> || std::is_same_v<Out, double>)
                                           : std::is_same_v<Out, result_t<T>>,
                "tally::sum: Out is float or double for floating T, result_t<T> (int64_t or uint64_t) for integer T");
  Out r{};
  reduce(reduce_op::sum, detail::ref(x), {}, &r, dtype_of<Out>(), opt);
  return r;
}

/// Dot product sum_i x[i] * y[i].
///
/// - Shapes: x (n,), y (n,): the lengths must match (errc::length_mismatch otherwise).
/// - Types, result and accuracy modes: as `sum`. In exact mode every product is exact too
///   (float32 products are exact in float64; float64 products use TwoProduct with FMA, or an
///   exact 106-bit integer product near the ends of the exponent range), so the result is the
///   correctly rounded exact dot product at any condition number. In fast mode products are
///   formed in float64: exactly for float32 and 16-bit data; for float64 data by a fused
///   multiply-add on the GPU and on CPU builds with FMA enabled (-mfma, -march=native), else
///   by a rounded product and an add (as the default CPU build does: one rounding more per
///   product, inside the bound below). Integer products and sums are exact
///   (128-bit or wider), so errc::overflow is thrown exactly when the true dot product is
///   outside int64 (uint64 for unsigned T).
/// - Empty input: 0. NaN and infinity propagate as IEEE arithmetic does (0 * inf is NaN).
/// - Aliasing: x and y may be the same array (dot(x, x) is the squared L2 norm).
/// - Accuracy: the bound of `sum` with x_i replaced by x_i * y_i, plus, for float64 data,
///   n * 2^-1075 (half the smallest subnormal per product) for products that underflow below
///   2^-1022 in fast mode (1000 products of 0.49 * 2^-1074 each give 0; exact mode ~2.4e-321);
///   float64 products that overflow give +-inf or NaN there, as partial sums do for `sum`.
/// - Blocking, determinism and the other errors: as `sum`.
template <class T, class Out = result_t<T>>
Out dot(view<const T> x, view<const T> y, const options& opt = {}) {
  static_assert(is_floating_element_v<T> ? (std::is_same_v<Out, float> || std::is_same_v<Out, double>)
                                           : std::is_same_v<Out, result_t<T>>,
                "tally::dot: Out is float or double for floating T, result_t<T> (int64_t or uint64_t) for integer T");
  Out r{};
  reduce(reduce_op::dot, detail::ref(x), detail::ref(y), &r, dtype_of<Out>(), opt);
  return r;
}

/// Arithmetic mean of x: the exact sum of the n inputs divided by n, correctly rounded to
/// Out (the same bits on every backend and thread count; accumulator: the exact-mode
/// superaccumulator, then an exact long division by n; docs/exact.md).
///
/// - Shapes: x (n,). Types: every element type; Out float or double, by default `mean_t<T>`:
///   float for float, float16 and bfloat16, double for double and every integer type and bool.
///   (float16: the exact 128-bit fixed-point sum; integers: their exact 128-bit sum.)
/// - Empty input: NaN. A NaN input gives NaN; +inf and -inf together NaN; one infinity it.
/// - Blocking; both backends, the same bits on each. Errors as `sum`.
template <class T, class Out = mean_t<T>>
Out mean(view<const T> x, const options& opt = {}) {
  static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, double>, "tally::mean: Out is float or double");
  Out r{};
  tally::mean(detail::ref(x), &r, dtype_of<Out>(), opt);
  return r;
}

/// Euclidean norm sqrt(sum x[i]^2) of floating x (float, double, float16, bfloat16; the
/// 16-bit floats as their exact float32 values), correctly rounded to Out (default: double
/// for double, float otherwise): the square root of the exact sum of squares (exact products and sum, docs/exact.md),
/// rounded once, so elements near the ends of the range (1e200, 1e-200) give the right
/// norm with no overflow or underflow on the way. Empty x: +0; NaN: NaN; an infinity: +inf.
/// Blocking; both backends, the same bits on each; errors as `sum`.
template <class T, class Out = mean_t<T>> Out norm2(view<const T> x, const options& opt = {}) {
  static_assert(is_floating_element_v<T> && (std::is_same_v<Out, float> || std::is_same_v<Out, double>),
                "tally::norm2: floating data, float or double result");
  Out r{};
  tally::norm2(detail::ref(x), &r, dtype_of<Out>(), opt);
  return r;
}

/// The value and the index of the first occurrence of a minimum or maximum.
template <class T> struct located {
  T value;
  std::int64_t index;  // -1 when there is none (empty input; only NaNs with the nan forms)
};

/// Minimum (MAX = false) or maximum of x and the index of its first occurrence.
///
/// - Shapes: x (n,), any n >= 0, any alignment. Types: every element type; the value has
///   x's type (no accumulator: comparisons are exact; float16 and bfloat16 are compared as
///   their exact float32 values, and a NaN result is the type's canonical quiet NaN).
/// - NaN (NumPy's rule): nans = nan_policy::propagate (min, max, argmin, argmax) returns NaN
///   and the first NaN's index if x holds a NaN; nan_policy::omit (nanmin, nanmax, ...)
///   skips NaNs.
/// - Ties: the first index wins, whatever the backend, thread count or launch shape; -0.0 and
///   +0.0 compare equal, so whichever comes first is returned, with its own sign.
/// - Empty input: {+inf (min) or -inf (max), -1}; for integers the type's highest or lowest
///   value (bool: true for min, false for max). Only NaNs with nan_policy::omit: {NaN, -1}.
/// - Blocking; errors as `sum` (errc::null_pointer, invalid_argument, wrong_memory, no_gpu,
///   cuda_error).
template <class T, bool MAX>
located<T> extreme_of(view<const T> x, nan_policy nans = nan_policy::propagate, const options& opt = {}) {
  located<T> r{};
  extreme(MAX ? extreme_op::max : extreme_op::min, nans, detail::ref(x), &r.value, &r.index, opt);
  return r;
}

/// The minimum and the maximum of x, each with the index of its first occurrence.
template <class T> struct min_max {
  located<T> min, max;
};

/// Minimum and maximum of x together: what {extreme_of<T, false>, extreme_of<T, true>} with
/// the same nans return, so every rule of `extreme_of` holds for each (NaN, first index on
/// ties, signed zeros, the empty input's {+inf, -1} and {-inf, -1}). Unlike
/// std::minmax_element, whose maximum is the LAST largest element, both indices are the first
/// ones (argmin's and argmax's). Blocking. The CPU backend reads x once (per chunk of 2^15
/// elements: the minimum, then the maximum from cache); the CUDA backend reads x once too
/// (one launch keeps both extremes). Errors as `extreme_of`, named minmax (nanminmax).
template <class T>
min_max<T> minmax(view<const T> x, nan_policy nans = nan_policy::propagate, const options& opt = {}) {
  min_max<T> r{};
  tally::minmax(nans, detail::ref(x), &r.min.value, &r.min.index, &r.max.value, &r.max.index, opt);
  return r;
}

/// Minimum of x (NaN if x holds one; +inf, or the type's highest value, when x is empty).
template <class T> T min(view<const T> x, const options& opt = {}) { return extreme_of<T, false>(x, nan_policy::propagate, opt).value; }
/// Maximum of x (NaN if x holds one; -inf, or the type's lowest value, when x is empty).
template <class T> T max(view<const T> x, const options& opt = {}) { return extreme_of<T, true>(x, nan_policy::propagate, opt).value; }
/// Minimum of x ignoring NaNs (NaN if x holds nothing else; +inf when empty).
template <class T> T nanmin(view<const T> x, const options& opt = {}) { return extreme_of<T, false>(x, nan_policy::omit, opt).value; }
/// Maximum of x ignoring NaNs (NaN if x holds nothing else; -inf when empty).
template <class T> T nanmax(view<const T> x, const options& opt = {}) { return extreme_of<T, true>(x, nan_policy::omit, opt).value; }

namespace detail {
template <class T, bool MAX> std::int64_t arg_extreme(view<const T> x, nan_policy nans, const options& opt, const char* fn) {
  located<T> r = extreme_of<T, MAX>(x, nans, opt);
  if (r.index < 0)
    throw error(errc::empty_input, std::string("tally::") + fn + ": " +
                                       (x.size == 0 ? "x is empty" : "x holds only NaN") + ", so there is no index to return");
  return r.index;
}
}  // namespace detail

/// Index of the first minimum of x (of the first NaN if x holds one). Throws
/// errc::empty_input for empty x. Otherwise as `extreme_of`.
template <class T> std::int64_t argmin(view<const T> x, const options& opt = {}) {
  return detail::arg_extreme<T, false>(x, nan_policy::propagate, opt, "argmin");
}
/// Index of the first maximum of x (of the first NaN if x holds one). Throws
/// errc::empty_input for empty x.
template <class T> std::int64_t argmax(view<const T> x, const options& opt = {}) {
  return detail::arg_extreme<T, true>(x, nan_policy::propagate, opt, "argmax");
}
/// Index of the first minimum of x ignoring NaNs; errc::empty_input if x is empty or all NaN.
template <class T> std::int64_t nanargmin(view<const T> x, const options& opt = {}) {
  return detail::arg_extreme<T, false>(x, nan_policy::omit, opt, "nanargmin");
}
/// Index of the first maximum of x ignoring NaNs; errc::empty_input if x is empty or all NaN.
template <class T> std::int64_t nanargmax(view<const T> x, const options& opt = {}) {
  return detail::arg_extreme<T, true>(x, nan_policy::omit, opt, "nanargmax");
}

/// Element-wise out[i] = x[i] + y[i], i in [0, n).
///
/// - Shapes: x, y, out (n,), all the same length (errc::length_mismatch otherwise).
/// - Types: T for all three, any element type. Floating adds are IEEE round-to-nearest in T
///   (float16 / bfloat16: the exact sum rounded once to T, ties to even, overflow to +-inf).
///   Integer adds whose exact sum does not fit T (unsigned: above the maximum) throw
///   errc::overflow after the call, naming the first such index on the cpu backend (out then
///   holds wrapped values). bool: logical or (NumPy's add of bool arrays).
/// - Aliasing: out may be exactly x or exactly y (in place); any other overlap of out with an
///   input is errc::invalid_argument.
/// - Empty input: does nothing.
/// - Blocking: returns when out is written (the CUDA backend synchronises `opt.stream`).
/// - Errors: as `sum`, plus the aliasing rule.
template <class T> void add(view<const T> x, view<const T> y, view<T> out, const options& opt = {}) {
  tally::add(detail::ref(x), detail::ref(y), detail::mref(out), opt);
}

/// Asynchronous sum on the CUDA backend: enqueues its kernel on `opt.stream` and returns at
/// once (exact float32/float64 sums enqueue two: the certified pass and the exact kernel
/// behind it, which returns at once when the pass proved the result; docs/exact.md). x must
/// be device (or managed) memory; `result_device` (one `result_t<T>`) and `status_device`
/// (optional, one int: 0 ok, 1 integer overflow) must be device-accessible.
/// No allocation happens per call: a small workspace is cached per (device, stream); the
/// enqueue holds its lock, so several host threads may call this on one stream. The call may
/// be captured in a CUDA graph (make one call on the stream first, so the workspace exists);
/// the graph uses the capture stream's workspace, so do not run it concurrently with other
/// calls on that stream or with another launch of itself.
/// Errors detected on the host (bad arguments, launch failures) are thrown at once; integer
/// overflow is reported only through `status_device`.
/// The value written is the one `sum` returns with the same options, in the same bits (exact
/// mode: correctly rounded, the same on every backend and launch shape; fast mode: `sum`'s
/// fast value, the same bits for the same input, device model and build). Empty x: +0 (0 for integers) and status
/// 0 are written in stream order (two memsets, no kernel).
template <class T, class Out = result_t<T>>
void sum_async(view<const T> x, Out* result_device, int* status_device = nullptr,
               const options& opt = {}) {
  reduce_async(reduce_op::sum, detail::ref(x), {}, result_device, dtype_of<Out>(), status_device, opt);
}

/// Asynchronous dot product on the CUDA backend; see `sum_async` and `dot` (the value `dot`
/// returns, in the same bits; empty x and y: +0 and status 0 written in stream order).
template <class T, class Out = result_t<T>>
void dot_async(view<const T> x, view<const T> y, Out* result_device,
               int* status_device = nullptr, const options& opt = {}) {
  reduce_async(reduce_op::dot, detail::ref(x), detail::ref(y), result_device, dtype_of<Out>(),
               status_device, opt);
}

/// Asynchronous element-wise add on the CUDA backend; see `add` and `sum_async`: out gets the
/// bits `add` writes (each element rounded once, so deterministic); `status_device` (optional)
/// 0, or 1 when an integer sum overflowed (out then holds wrapped values). Empty arrays: only
/// the status is written (0, in stream order).
template <class T>
void add_async(view<const T> x, view<const T> y, view<T> out, int* status_device = nullptr,
               const options& opt = {}) {
  tally::add_async(detail::ref(x), detail::ref(y), detail::mref(out), status_device, opt);
}

// ---- norms, moments, logical reductions, scaled element-wise operations ------------------

/// L1 norm (asum) sum_i |x[i]| of float or double x, as Out (default T).
///
/// - Shapes: x (n,), any n >= 0, any alignment. Accumulator: exact mode (default) the
///   exact-mode superaccumulator of `sum` over the |x[i]|, rounded once (correctly rounded,
///   the same bits on every backend and launch shape; never overflows in between); fast mode
///   the float64 tree of the fast `sum` over the |x[i]|, with its error bound (sum |x_i| is
///   then the exact result) and its determinism.
/// - Empty x: +0. A NaN gives NaN, an infinity +inf.
/// - Blocking. On the cuda backend exact mode runs the exact sum kernel reading each element
///   as its absolute value (no temporary).
/// - Errors: as `sum`; T other than float and double does not compile (type-erased: float16,
///   bfloat16, integer or bool x is errc::invalid_argument).
template <class T, class Out = T> Out norm1(view<const T> x, const options& opt = {}) {
  static_assert(std::is_floating_point_v<T> && (std::is_same_v<Out, float> || std::is_same_v<Out, double>),
                "tally::norm1: float or double data, float or double result");
  Out r{};
  tally::norm1(detail::ref(x), &r, dtype_of<Out>(), opt);
  return r;
}

/// Max norm (amax) max_i |x[i]| of float or double x, as Out (default T: exact, no
/// arithmetic). NaN anywhere gives NaN (NumPy's rule); empty x gives +0. Deterministic on
/// every backend. Blocking; errors as `sum`.
template <class T, class Out = T> Out norm_inf(view<const T> x, const options& opt = {}) {
  static_assert(std::is_floating_point_v<T> && (std::is_same_v<Out, float> || std::is_same_v<Out, double>),
                "tally::norm_inf: float or double data, float or double result");
  Out r{};
  tally::norm_inf(detail::ref(x), &r, dtype_of<Out>(), opt);
  return r;
}

/// Variance sum_i (x[i] - mean)^2 / (n - ddof) of x (NumPy's `var`, ddof as NumPy: 0 for the
/// population variance, 1 for the sample variance), as Out (default `mean_t<T>`: float for
/// float, float16 and bfloat16; double for double, the integers and bool).
///
/// - Types: every element type (float16 / bfloat16 as their exact float32 values; bool as
///   0/1; uint64 up to 2^64 - 1 exactly); Out float or double.
/// - Exact mode (default): with S1 = sum x and S2 = sum x^2 exact (superaccumulators for
///   floating x, 128/192-bit integers for integer x), var = (n S2 - S1^2) / (n (n - ddof))
///   is formed exactly (big integers: Knuth, TAOCP vol. 2, 4.3.1) and rounded once:
///   correctly rounded, the same bits on every thread count; no overflow or underflow
///   (elements of 1e200 or 1e-200 are fine).
/// - Fast mode: Welford's update per chunk of 2^15 elements (cpu; per thread on the GPU;
///   Technometrics 4(3), 1962), merged with the pairwise formula of Chan, Golub and LeVeque
///   (Stanford STAN-CS-79-773, 1979), in float64 (no error bound is claimed). Its running mean
///   and sums of squares can overflow (|x| > ~1e154); a fast result that is not a finite
///   number >= 0 (that, or a NaN or infinity in x) is recomputed in exact mode, which returns
///   the correctly rounded value (+inf only when the variance itself overflows) or NaN.
///   On the cpu backend the same bits whatever the thread count.
/// - n - ddof <= 0 (so empty x with ddof = 0; empty x gives NaN for any ddof for which n - ddof
///   fits int64): NaN (NumPy
///   returns NaN or inf with a warning). NaN or an infinity in x: NaN. A negative ddof is
///   taken as it is (divisor n - ddof > n); one for which n - ddof does not fit int64 is
///   errc::invalid_argument.
/// - Blocking. CUDA backend: exact mode for float and double (one certified pass reads x
///   once for sum x and sum x^2 and the host proves the rounding, ops/certified.hpp; when the
///   proof fails, the GPU's exact states: the cpu backend's bits either way); float16,
///   bfloat16, bool and the integers up to 32 bits are first widened exactly into a float64
///   copy on the device (8 bytes per element more traffic and memory), then as double: the
///   same bits too. Exact mode of int64 and uint64 throws errc::invalid_argument there (fast
///   mode takes every type). Other errors as `sum`.
template <class T, class Out = mean_t<T>>
Out var(view<const T> x, std::int64_t ddof = 0, const options& opt = {}) {
  static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, double>, "tally::var: Out is float or double");
  Out r{};
  tally::var(detail::ref(x), ddof, false, &r, dtype_of<Out>(), opt);
  return r;
}

/// Standard deviation: the square root of `var` (same arguments and rules). Exact mode: the
/// correctly rounded square root of the exact rational variance (one rounding in all).
template <class T, class Out = mean_t<T>>
Out std_dev(view<const T> x, std::int64_t ddof = 0, const options& opt = {}) {
  static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, double>, "tally::std_dev: Out is float or double");
  Out r{};
  tally::var(detail::ref(x), ddof, true, &r, dtype_of<Out>(), opt);
  return r;
}

/// Number of elements of x that are not zero (int64; any element type). NaN counts as
/// nonzero, -0.0 as zero (IEEE comparison with 0). Empty x: 0. Exact and deterministic.
/// Blocking; errors as `sum`.
template <class T> std::int64_t count_nonzero(view<const T> x, const options& opt = {}) {
  return tally::count_nonzero(detail::ref(x), opt);
}
/// Whether some element of x is nonzero (NaN is, -0.0 is not); empty x: false.
template <class T> bool any(view<const T> x, const options& opt = {}) { return tally::any(detail::ref(x), opt); }
/// Whether every element of x is nonzero (NaN is, -0.0 is not); empty x: true.
template <class T> bool all(view<const T> x, const options& opt = {}) { return tally::all(detail::ref(x), opt); }

/// Element-wise y[i] = a * x[i] + y[i] (BLAS axpy), i in [0, n).
///
/// - Shapes: x, y (n,), the same length (errc::length_mismatch otherwise); T for all, any
///   element type but bool (errc::invalid_argument: NumPy would change the type).
/// - Floating: fma(a, x[i], y[i]), rounded once to nearest even (the same bits on both
///   backends); float16 / bfloat16: the exact a x + y (formed in float64, TwoSum and
///   round-to-odd) rounded once to T, overflow to +-inf. Integers: exact in 128 bits, and
///   errc::overflow after the call naming the first index whose result does not fit T
///   (unsigned: above the maximum; y then holds the wrapped values).
/// - Aliasing: y may be exactly x (y = (a + 1) y); any other overlap is errc::invalid_argument.
/// - Empty input: does nothing. Blocking; other errors as `add`.
template <class T> void axpy(T a, view<const T> x, view<T> y, const options& opt = {}) {
  tally::axpy(&a, detail::ref(x), detail::mref(y), opt);
}

/// Element-wise x[i] = a * x[i] in place (BLAS scal): IEEE products for floating T (float16 /
/// bfloat16: the exact product rounded once to T); exact integer products with errc::overflow
/// (first index) as `axpy`; bool refused. Empty x: nothing. Blocking.
template <class T> void scale(T a, view<T> x, const options& opt = {}) {
  tally::scale(&a, detail::mref(x), opt);
}

}  // namespace tally

// Strided views, per-row/column and segmented reductions (tally/shapes.hpp).
#include "tally/shaped.hpp"  // IWYU pragma: export
