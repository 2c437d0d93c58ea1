// tally: the small non-template layer every front end (C++ templates, CLI, Python) calls.
// Each function validates its arguments, picks a backend and runs there (src/dispatch.cpp).
#pragma once

#include <cstdint>

#include "tally/types.hpp"

namespace tally {

/// A type-erased contiguous 1-D array: `size` elements of `type` at `data`.
struct array_ref {
  const void* data = nullptr;
  std::int64_t size = 0;
  dtype type = dtype::float64;
  memory where = memory::unknown;
};

/// A writable type-erased contiguous 1-D array.
struct mutable_array_ref {
  void* data = nullptr;
  std::int64_t size = 0;
  dtype type = dtype::float64;
  memory where = memory::unknown;
};

/// The reductions of this layer.
enum class reduce_op : int { sum, dot };

/// Result type of `op` over elements of type `t` (docs/types.md): float32 -> float32,
/// float64 -> float64, float16/bfloat16 -> float32, signed integers and bool -> int64,
/// unsigned integers -> uint64.
dtype result_dtype(reduce_op op, dtype t) noexcept;

/// Blocking reduction. `y` is read only for `dot` (same length and type as `x`).
/// Writes one value of `result_type` to host memory at `result`. Floating inputs may ask for
/// a float32 or float64 result (float32 data summed into a correctly rounded float64, say);
/// integer inputs give `result_dtype` (int64 or uint64). Throws tally::error (see tally.hpp
/// for the cases).
void reduce(reduce_op op, array_ref x, array_ref y, void* result, dtype result_type,
            const options& opt = {});
/// The same with the default result type, `result_dtype(op, x.type)`.
void reduce(reduce_op op, array_ref x, array_ref y, void* result, const options& opt = {});

/// Asynchronous reduction on the CUDA backend: enqueues the work on `opt.stream` and returns
/// without synchronising. `result_device` receives one value of `result_dtype(op, x.type)`;
/// if `status_device` is not null it receives 0, or 1 when an integer result overflowed int64 (uint64 for unsigned data)
/// (then the value written is 0). Both must be device-accessible memory and stay valid until
/// the stream reaches the work, each at an address that is a multiple of its size
/// (errc::invalid_argument otherwise). The inputs must be device memory, each element-aligned
/// (as every device array tally reads or writes: errc::invalid_argument otherwise).
void reduce_async(reduce_op op, array_ref x, array_ref y, void* result_device,
                  int* status_device, const options& opt = {});
/// The same with an explicit result type (see `reduce`).
void reduce_async(reduce_op op, array_ref x, array_ref y, void* result_device, dtype result_type,
                  int* status_device, const options& opt = {});

/// Blocking arithmetic mean of x: the exact sum of the inputs divided by n, rounded once to
/// `result_type` (float32 or float64; correctly rounded, so the same bits on every backend).
/// opt.accuracy is not consulted (the mean is always exact). Empty x: NaN (NumPy's answer).
/// NaN and infinities as in `reduce`. Both backends (on the GPU: the exact-sum kernel exports
/// its digits and the host divides; integers: their exact 128-bit sum).
void mean(array_ref x, void* result, dtype result_type, const options& opt = {});

/// Blocking Euclidean (L2) norm of floating x: the square root of the exact sum of squares,
/// correctly rounded to `result_type` (float32 or float64). Never overflows or underflows in
/// between (1e200 and 1e-200 elements give the right norm). Empty x: +0. NaN gives NaN, an
/// infinity +inf. Integer x: errc::invalid_argument. Both backends (on the GPU: the exact dot
/// kernel reads x once and exports its digits; the host takes the root).
void norm2(array_ref x, void* result, dtype result_type, const options& opt = {});

/// Which extreme `extreme` looks for.
enum class extreme_op : int { min, max };
/// What NaN does to min/max (NumPy's rule): propagate (min, max, argmin, argmax: a NaN
/// anywhere is the answer, at its first index) or omit (nanmin, nanmax, nanargmin, ...).
enum class nan_policy : int { propagate, omit };

/// Blocking minimum or maximum of x and the index of its first occurrence. Writes one value
/// of x's type to host memory at `value` and the index to `*index`. Empty input (or only
/// NaNs with nan_policy::omit): value +inf for min / -inf for max (integers: the type's
/// highest / lowest value; all-NaN with omit: NaN) and index -1. Ties (-0.0 and +0.0 compare
/// equal) go to the first index. Deterministic: the same value and index on every backend
/// and launch shape. Throws tally::error as `reduce` does.
void extreme(extreme_op op, nan_policy nans, array_ref x, void* value, std::int64_t* index,
             const options& opt = {});

/// Blocking minimum and maximum of x together, each with the index of its first occurrence:
/// what `extreme` writes for extreme_op::min (to min_value, *min_index) and for
/// extreme_op::max (to max_value, *max_index), with the same rules (NaN, ties, signed zeros,
/// empty input). The CPU backend reads x once (each chunk of 2^15 elements scanned for the
/// minimum and then, from cache, for the maximum); the CUDA backend reads x once too (one
/// launch keeps both extremes: each thread folds its 16-byte vectors with fmin and fmax and
/// finds the first index in the winning vectors at the end). Throws tally::error as
/// `extreme` (the messages name minmax, or nanminmax with nan_policy::omit).
void minmax(nan_policy nans, array_ref x, void* min_value, std::int64_t* min_index, void* max_value,
            std::int64_t* max_index, const options& opt = {});

/// Blocking element-wise out[i] = x[i] + y[i] (all three of one type and length; every dtype:
/// 16-bit floats rounded once from the exact sum, integers checked (errc::overflow naming the
/// first index on the cpu backend), bool as logical or).
void add(array_ref x, array_ref y, mutable_array_ref out, const options& opt = {});

/// Asynchronous element-wise add on the CUDA backend (device memory; no synchronisation).
/// `status_device`, if not null, receives 1 when an integer element overflowed, else 0.
void add_async(array_ref x, array_ref y, mutable_array_ref out, int* status_device,
               const options& opt = {});

// ---- norms, moments, logical reductions, scaled element-wise operations (dispatch_ops.cpp)

/// Blocking L1 norm sum |x[i]| of floating x (float32 or float64) as `result_type` (float32 or
/// float64). accuracy::exact (default): the exact sum of the |x[i]| rounded once (correctly
/// rounded; same bits on every backend); accuracy::fast: the float64 tree of the fast `sum`
/// over the |x[i]| (its error bound). Empty x: +0. NaN gives NaN, an infinity +inf. Any
/// other x (float16, bfloat16, integers, bool): errc::invalid_argument.
void norm1(array_ref x, void* result, dtype result_type, const options& opt = {});

/// Blocking max norm max |x[i]| of float32 or float64 x as `result_type` (exact: no
/// arithmetic; rounded only if result_type is narrower than x). NaN anywhere gives NaN.
/// Empty x: +0. Other x (float16, bfloat16, integers, bool): errc::invalid_argument.
void norm_inf(array_ref x, void* result, dtype result_type, const options& opt = {});

/// Blocking variance (take_sqrt false) or standard deviation (true) of x with NumPy's ddof:
/// sum (x[i] - mean)^2 / (n - ddof), as `result_type` (float32 or float64). x: every dtype
/// (16-bit floats as exact float32 values, integers exactly, bool as 0/1). Exact mode (default):
/// (n S2 - S1^2) / (n (n - ddof)) from the exact sums S1 = sum x and S2 = sum x^2, computed
/// exactly and rounded once (the standard deviation: the correctly rounded square root of that
/// exact rational). Fast mode: Welford per chunk (cpu) or thread (GPU), Chan et al. merging; a
/// fast result that is not a finite non-negative number (a NaN or an infinity in x, or finite
/// float32/float64 data whose running mean or sum of squares overflowed: [1e308, -1e308]) is
/// recomputed in exact mode, which gives NaN for the first and the correctly rounded value (here
/// +inf) for the second.
/// n - ddof <= 0 (empty x with ddof 0 included) gives NaN, as NumPy does; so does empty x with
/// any ddof; a ddof for which n - ddof does not fit int64 (ddof near INT64_MIN) is
/// errc::invalid_argument. NaN or an infinity in x gives NaN. Exact mode on the cuda backend:
/// float32/float64 data through the GPU's exact states of sum x and sum x^2
/// (tally::round_variance, the same bits as the cpu backend); float16, bfloat16, bool and
/// integers up to 32 bits widened to a float64 copy on the device first (8 bytes per element of
/// device memory, freed on return); int64 and uint64 data there is errc::invalid_argument in
/// this version (fast mode takes every dtype on both backends).
void var(array_ref x, std::int64_t ddof, bool take_sqrt, void* result, dtype result_type,
         const options& opt = {});

/// Blocking number of nonzero elements of x: NaN counts as nonzero, -0.0 as zero (float16 and
/// bfloat16 by their bits). Every dtype on both backends. Empty x: 0.
std::int64_t count_nonzero(array_ref x, const options& opt = {});
/// True when some element of x is nonzero (NaN is; -0.0 is not). Empty x: false.
bool any(array_ref x, const options& opt = {});
/// True when every element of x is nonzero (NaN is; -0.0 is not). Empty x: true.
bool all(array_ref x, const options& opt = {});

/// Blocking y[i] = a * x[i] + y[i]; `a` points to one host value of x's dtype; x and y of one
/// dtype and length. Floating: one fused multiply-add per element (rounded once). Integers:
/// exact, errc::overflow after the call naming the first index whose result does not fit (y
/// then holds wrapped values). float16 / bfloat16: the exact a*x + y rounded once. y may be
/// exactly x; any other overlap is errc::invalid_argument. Every dtype but bool (bool:
/// errc::invalid_argument naming the type).
void axpy(const void* a, array_ref x, mutable_array_ref y, const options& opt = {});
/// Blocking x[i] = a * x[i] in place; `a` as in axpy; integer overflow as axpy.
void scale(const void* a, mutable_array_ref x, const options& opt = {});

/// True when this build has the CUDA backend and at least one GPU is usable.
bool cuda_available() noexcept;

/// Where `data` lives, as the CUDA runtime reports it (cudaPointerGetAttributes): device for
/// device or managed memory, host otherwise and whenever there is no CUDA runtime or GPU.
memory locate(const void* data) noexcept;

}  // namespace tally
