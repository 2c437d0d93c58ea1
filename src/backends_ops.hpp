// The interface each backend implements for the norms, moments, logical reductions and the
// scaled element-wise operations (issue 5); src/dispatch_ops.cpp is the only caller.
// Arguments arrive validated: n > 0 unless stated, pointers non-null, memory checked.
#pragma once

#include <cstdint>
#include <memory>

#include "tally/core.hpp"

namespace tally::cpu {
/// L1 norm sum |x| of floating x, as `out`: exact (correctly rounded) or fast.
void norm1(dtype t, dtype out, accuracy acc, const void* x, std::int64_t n, void* result);
/// max |x| of floating x (NaN if any), as `out`.
void norm_inf(dtype t, dtype out, const void* x, std::int64_t n, void* result);
/// Variance (standard deviation with take_sqrt) with divisor m2 = n - ddof > 0, as `out`.
void var(dtype t, dtype out, accuracy acc, const void* x, std::int64_t n, std::uint64_t m2, bool take_sqrt,
         void* result);
/// Number of nonzero elements (n >= 0).
std::int64_t count_nonzero(dtype t, const void* x, std::int64_t n);
/// y = a*x + y; `a` points to one element of type t (any type but bool); first_bad = the
/// smallest index whose exact integer result did not fit t (written wrapped), -1 if none.
void axpy(dtype t, const void* a, const void* x, void* y, std::int64_t n, std::int64_t& first_bad);
/// x = a*x; as axpy.
void scale(dtype t, const void* a, void* x, std::int64_t n, std::int64_t& first_bad);
}  // namespace tally::cpu

namespace tally::cuda {
// `device` as in backends.hpp. Blocking: the result is in host memory on return.
void norm1(dtype t, dtype out, accuracy acc, const void* x, std::int64_t n, void* result_host, stream_t stream,
           int device);
void norm_inf(dtype t, dtype out, const void* x, std::int64_t n, void* result_host, stream_t stream, int device);
/// Fast mode only (exact mode throws errc::invalid_argument in this version).
void var(dtype t, dtype out, accuracy acc, const void* x, std::int64_t n, std::uint64_t m2, bool take_sqrt,
         void* result_host, stream_t stream, int device);
/// Exact mode, float32/float64 x: the variance (standard deviation) proved correctly rounded
/// by two certified passes (sum x, sum x^2; ops::certified::variance_certified). Returns
/// false, having written nothing, when the proof fails or the type is not float32/float64
/// (the caller then takes the exact states); with `TALLY_EXACT_CERTIFIED=0` always false.
bool var_certified(dtype t, dtype out, const void* x, std::int64_t n, std::uint64_t m2, bool take_sqrt,
                   void* result_host, stream_t stream, int device);
std::int64_t count_nonzero(dtype t, const void* x, std::int64_t n, stream_t stream, int device);
/// x (n > 0 elements of type t, every value of which is exact in float64: not int64 or uint64)
/// as n float64 in new memory on `device`, written in stream order on `stream` (not blocking);
/// the memory goes back to the stream's pool when the last copy of the handle goes.
std::shared_ptr<const double> widen_to_f64(dtype t, const void* x, std::int64_t n, stream_t stream, int device);
/// As the cpu forms (first_bad: the smallest overflowing index, -1 if none).
void axpy(dtype t, const void* a, const void* x, void* y, std::int64_t n, std::int64_t& first_bad, stream_t stream,
          int device);
void scale(dtype t, const void* a, void* x, std::int64_t n, std::int64_t& first_bad, stream_t stream, int device);
}  // namespace tally::cuda
