// tally: shapes beyond contiguous 1-D arrays: strided 1-D views, reductions along one axis of
// a 2-D array (per row, per column) and segmented reductions (CSR offsets). The non-template
// layer (src/dispatch_shapes.cpp validates and picks the backend); typed C++ wrappers
// (sum_strided, sum_along, segment_sum, ...) in tally/shaped.hpp, which tally/tally.hpp includes.
//
// Operations: sum (exact by default, or fast), mean (always exact), min, max and their first
// index (argmin, argmax), with the NaN rule of `extreme` (propagate, or omit for the nan forms).
//
// Element types: all thirteen of tally::dtype. float32, float64, int32 and int64 are read
// directly. float16 and bfloat16 (as float32), int8, int16, uint8, uint16 and bool (as int32),
// uint32 and uint64 (as int64; uint64 biased by -2^63, undone exactly in the results) reduce
// as those wide values, converted exactly: 16-bit floats are never accumulated in 16 bits.
// On the CUDA backend, the nine narrow types' rows (adjacent elements), columns and segments
// are read in place by the kernels, which convert each element as they load it (exact
// float16 sums and means, blocking or stream-ordered: 128-bit fixed point in units of 2^-24,
// exact for outputs of up to 2^28 elements; an output holding an infinity or a NaN is read
// again on the device to tell which). float16 columns of row-major matrices whose rows are whole 16-byte
// vectors (a multiple of 8 columns, base and row stride 16-byte aligned) and of at most 2^23
// rows go 8 columns a lane in 64-bit fixed point with infinities and NaNs handled on the
// device: their exact sums and means, blocking or stream-ordered, never widen, and their fast
// sums are exact too (correctly rounded). Exact bfloat16 sums and means (and float16 ones of
// longer outputs) first run a certified pass in place (float64 TwoSum states with a running
// error bound, docs/exact.md), which proves the correctly rounded result of
// nearly every output; only when it cannot prove some output (heavy cancellation, an infinity
// or a NaN) is the call's data widened and summed exactly: blocking calls decide on the host,
// stream-ordered ones (with a status word) on the device, never synchronising. Every other
// case (those types' strided views, stream-ordered calls without a status word, and the CPU
// backend) is first widened into a compact copy of n wide elements (CUDA: device memory kept per (device,
// stream) for later calls; CPU: a host vector), which costs a read of x, a write and a read of 4 or 8 bytes per
// element (docs/types.md has the table of result types and the measured GB/s). Either way
// the exact results (integer sums, exact float sums, means, min/max and indices) have the
// same bits. Result types: sums float32 or float64 for floating input,
// int64 for signed integers and bool, uint64 for unsigned integers (errc::overflow beyond it);
// means float32 or float64; min/max the input's type (empty: the type's highest / lowest
// value; bool: true / false; a NaN result of a 16-bit float is its canonical quiet NaN).
//
// Results for an empty row / column / segment (each output is independent):
//   sum: +0 (integers 0); mean: NaN; min: +inf, max: -inf (integers: the type's highest /
//   lowest value); index: -1. A segment of only NaNs with nan_policy::omit: NaN and -1.
//
// Backends: everything on both (the stream-ordered forms: CUDA only). Exact floating sums and floating means give the same bits on
// the CPU and CUDA backends (each output's exact sum on the superaccumulator grid of
// ops::exact, rounded once by the same functions; on the GPU: per-thread TwoSum expansions
// flushed into shared-memory carry-save digits, outputs split across blocks merged by integer
// atomics, so the bits do not depend on the launch shape; the int64 digit words cannot
// overflow for outputs below 2^45 elements).
#pragma once

#include <cstdint>

#include "tally/core.hpp"
#include "tally/types.hpp"

namespace tally {

/// A type-erased strided 1-D view: element k (k in [0, size)) at
/// `static_cast<const T*>(data) + k * stride`. `stride` counts elements, not bytes, and may
/// be negative (data is then the address of element 0, the highest one) or 0 (the same
/// element `size` times). Shape (size,).
struct strided_ref {
  const void* data = nullptr;
  std::int64_t size = 0;
  std::int64_t stride = 1;
  dtype type = dtype::float64;
  memory where = memory::unknown;
};

/// A type-erased 2-D array, shape (rows, cols): element (i, j) at
/// `static_cast<const T*>(data) + i * row_stride + j * col_stride` (strides in elements, any
/// sign, 0 allowed). Row-major (C order): row_stride = cols, col_stride = 1; column-major
/// (Fortran order): row_stride = 1, col_stride = rows. Padding (row_stride > cols) is fine.
struct matrix_ref {
  const void* data = nullptr;
  std::int64_t rows = 0;        // extent of axis 0
  std::int64_t cols = 0;        // extent of axis 1
  std::int64_t row_stride = 0;  // elements between (i, j) and (i + 1, j)
  std::int64_t col_stride = 1;  // elements between (i, j) and (i, j + 1)
  dtype type = dtype::float64;
  memory where = memory::unknown;
};

// ---- along one axis of a matrix ------------------------------------------------------------
//
// axis follows NumPy: axis = 0 reduces over the rows, giving one result per column, out shape
// (cols,); axis = 1 reduces over the columns, giving one result per row, out shape (rows,).
// Every output is computed as the 1-D operation of its row or column would be (the same
// accumulators, the same empty result, the same NaN rule), so, e.g., the exact sum of column
// j has the bits of tally::sum over that column copied out.
// Memory: x, out (and indices) all on one side (host: CPU backend; device: CUDA backend).
// Blocking: returns when out is written (the CUDA backend synchronises opt.stream).
// Determinism: the same bits for the same input on a given backend whatever the thread count;
// exact and integer results and min/max/argmin/argmax are the same on every backend.
// Errors (tally::error): errc::invalid_argument (axis not 0 or 1, a negative extent, strides
// whose addresses overflow int64, rows * cols beyond int64, a result type the operation
// cannot produce, an operation the backend lacks, an output that shares memory with x, with
// the offsets or with the other output: outputs are never computed in place; an enumeration
// value outside its range; a device array, x, the offsets or an output, at an address that is
// not a multiple of its element size); errc::length_mismatch (out's length is not the number of outputs);
// errc::null_pointer; errc::wrong_memory; errc::no_gpu; errc::cuda_error; errc::overflow (an
// integer sum outside its int64 or uint64 result: the message names the first such output; out is then unspecified).

/// Sums along `axis` (op must be reduce_op::sum). out: float32 or float64 for floating x
/// (accuracy as `tally::sum`: exact, correctly rounded per output, by default; opt.accuracy =
/// fast: a float64 tree per output with the CPU bound of `sum`, L = 128), int64 for signed
/// integer and bool x, uint64 for unsigned x (exact, 128-bit accumulators; a sum outside the
/// result type is errc::overflow).
void reduce_axis(reduce_op op, matrix_ref x, int axis, mutable_array_ref out, const options& opt = {});

/// Means along `axis`: each the exact sum / count, correctly rounded to out's type (float32
/// or float64); opt.accuracy is not consulted. An empty row or column gives NaN.
void mean_axis(matrix_ref x, int axis, mutable_array_ref out, const options& opt = {});

/// Minimum or maximum along `axis` and the index of its first occurrence within its row or
/// column (0-based along the reduced axis). `values` (x's type) and `indices` (int64) each
/// either have one element per output or are left empty ({nullptr, 0}: not written); when
/// there are outputs, at least one is given (both left empty: errc::null_pointer). NaN and
/// ties as `extreme`; empty rows/columns give +-inf (integers: the type's highest / lowest
/// value) and -1.
void extreme_axis(extreme_op op, nan_policy nans, matrix_ref x, int axis, mutable_array_ref values,
                  mutable_array_ref indices, const options& opt = {});

// ---- segments (CSR offsets) ----------------------------------------------------------------
//
// offsets: (segments + 1,) int64 in the same memory as x; segment s is x[offsets[s],
// offsets[s + 1]). Required: offsets[0] == 0, non-decreasing, offsets[segments] == x.size
// (errc::invalid_argument naming the first bad entry otherwise; on the CUDA backend the check
// runs on the GPU before the reduction). segments == 0 is allowed (offsets = {0}, x empty;
// the CUDA backend does not read offsets[0] then, so a nonzero one is not reported there).
// Empty segments give the empty results listed at the top. Very uneven sizes are fine: on the
// GPU, segments longer than 16384 elements are reduced by whole blocks over tiles of x (65536
// elements; exact sums and means: 16384), and a segment meeting several tiles gets one
// partial per tile, combined in a
// fixed order (tile order) by the last of those blocks to finish (exact sums
// and means: integer digits merged by atomic addition, exact in any order; deterministic, no
// floating atomics). Other rules as the axis forms; indices are positions within the segment.

/// Per-segment sums (op must be reduce_op::sum); out types and accuracy as `reduce_axis`.
void reduce_segments(reduce_op op, array_ref x, const std::int64_t* offsets, std::int64_t segments,
                     mutable_array_ref out, const options& opt = {});
/// Per-segment means, correctly rounded (NaN for empty segments).
void mean_segments(array_ref x, const std::int64_t* offsets, std::int64_t segments, mutable_array_ref out,
                   const options& opt = {});
/// Per-segment minimum or maximum and its first index within the segment (-1 when empty).
void extreme_segments(extreme_op op, nan_policy nans, array_ref x, const std::int64_t* offsets,
                      std::int64_t segments, mutable_array_ref values, mutable_array_ref indices,
                      const options& opt = {});

// ---- stream-ordered forms (CUDA backend) ---------------------------------------------------
//
// The axis and segment operations above, enqueued on opt.stream without waiting: the call
// validates its arguments on the host, enqueues the kernels and returns; out (and indices)
// are written when the stream reaches the work, and the caller synchronises (or orders later
// work on the stream) before reading them. Results: the same bits as the blocking forms,
// empty rows, columns and segments included (their identity, NaN for means, -1 indices), so
// exact sums and means are correctly rounded and deterministic as those are.
// Memory: x, offsets, out, indices and status are device memory (errc::wrong_memory for host
// memory); they must stay valid until the stream reaches the work. opt.backend: automatic or
// cuda (cpu: errc::invalid_argument, whatever the memory); a call with nothing to read or
// write also runs on the cuda backend (errc::no_gpu without a GPU). Scratch: the shape
// layer's cached scratch of (device, stream), kept for the process's life, so a warm call
// allocates nothing; calls on one stream are ordered by the stream.
// status_device (optional): two int64 of 8-byte aligned device memory sharing no byte with
// x, the offsets or the outputs (errc::invalid_argument otherwise), written in stream order
// after the outputs, also by a call with no outputs: [0] the index of the first offsets entry
// that breaks the rules (blocking: errc::invalid_argument; always -1 for the axis forms, and
// for segments == 0, whose offsets the GPU does not read), [1] the first output whose integer
// sum left int64 (blocking: errc::overflow; always -1 for floating sums, means and extremes);
// -1 for "none". When either is set, out (and indices) are unspecified. With a null status
// those two errors go unreported. Every other error is thrown on the host before anything
// is enqueued, except errc::cuda_error (a failed launch or allocation, or a fault of earlier
// work surfacing), which may come after part of the work was enqueued; after a throw, do not
// rely on the status (it may keep an earlier call's words). Messages name the operation as "<op>_async (axis)" or
// "<op>_async (segments)", op one of sum, mean, min, max.

/// reduce_axis, stream-ordered.
void reduce_axis_async(reduce_op op, matrix_ref x, int axis, mutable_array_ref out, std::int64_t* status_device,
                       const options& opt = {});
/// mean_axis, stream-ordered.
void mean_axis_async(matrix_ref x, int axis, mutable_array_ref out, std::int64_t* status_device, const options& opt = {});
/// extreme_axis, stream-ordered.
void extreme_axis_async(extreme_op op, nan_policy nans, matrix_ref x, int axis, mutable_array_ref values,
                        mutable_array_ref indices, std::int64_t* status_device, const options& opt = {});
/// reduce_segments, stream-ordered (device offsets, checked on the GPU: status_device[0]).
void reduce_segments_async(reduce_op op, array_ref x, const std::int64_t* offsets, std::int64_t segments,
                           mutable_array_ref out, std::int64_t* status_device, const options& opt = {});
/// mean_segments, stream-ordered.
void mean_segments_async(array_ref x, const std::int64_t* offsets, std::int64_t segments, mutable_array_ref out,
                         std::int64_t* status_device, const options& opt = {});
/// extreme_segments, stream-ordered.
void extreme_segments_async(extreme_op op, nan_policy nans, array_ref x, const std::int64_t* offsets,
                            std::int64_t segments, mutable_array_ref values, mutable_array_ref indices,
                            std::int64_t* status_device, const options& opt = {});

// ---- strided 1-D views ---------------------------------------------------------------------
// The 1-D operations on a strided view (the single row of a (1, size) matrix with col_stride =
// stride): the same results as the contiguous forms on the same elements. The stride is
// stepped size - 1 times, so a view of one element (or none) takes any stride; otherwise
// (size - 1) * |stride| beyond 2^60 is errc::invalid_argument, as are elements below address
// 0 or past the end of the address space. `result`/`value`/`index` are host memory; rules as
// `reduce`, `mean` and `extreme` (empty: sum +0, mean NaN, min/max +-inf and index -1).

/// Sum (op must be reduce_op::sum) of a strided view as `result_type`.
void reduce(reduce_op op, strided_ref x, void* result, dtype result_type, const options& opt = {});
/// Mean of a strided view, correctly rounded to result_type (float32 or float64).
void mean(strided_ref x, void* result, dtype result_type, const options& opt = {});
/// Minimum or maximum of a strided view and its first index.
void extreme(extreme_op op, nan_policy nans, strided_ref x, void* value, std::int64_t* index,
             const options& opt = {});

}  // namespace tally
