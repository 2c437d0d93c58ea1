// The interface each backend implements; src/dispatch.cpp is the only caller.
// Arguments arrive validated: lengths equal, pointers non-null when n > 0, memory checked.
#pragma once

#include <cstdint>

#include "tally/core.hpp"

namespace tally::cpu {
/// Writes the result (of type `out`) to `result`; status 1 = integer overflow.
void reduce(reduce_op op, dtype t, dtype out, accuracy acc, const void* x, const void* y,
            std::int64_t n, void* result, int& status);
/// out = x + y (every element type); first_bad = the smallest index whose exact integer sum
/// does not fit (written wrapped), -1 if none.
void add(dtype t, const void* x, const void* y, void* out, std::int64_t n, std::int64_t& first_bad);
/// The correctly rounded mean of x[0, n), n > 0, as `out` (float32 or float64).
void mean(dtype t, dtype out, const void* x, std::int64_t n, void* result);
/// The correctly rounded L2 norm of floating x[0, n), n > 0, as `out`.
void norm2(dtype t, dtype out, const void* x, std::int64_t n, void* result);
/// Minimum or maximum and its first index (kNoIndex when none) of x[0, n).
void extreme(extreme_op op, nan_policy nans, dtype t, const void* x, std::int64_t n, void* value,
             std::int64_t& index);
/// Both: the minimum and its first index, the maximum and its first index, in one read of x.
void minmax(nan_policy nans, dtype t, const void* x, std::int64_t n, void* min_value, std::int64_t& min_index,
            void* max_value, std::int64_t& max_index);
}  // namespace tally::cpu

namespace tally::cuda {
bool available() noexcept;
/// device or host, as cudaPointerGetAttributes says (host when there is no CUDA/GPU);
/// for device memory, `*device` receives the owning device ordinal (-1 for managed memory).
memory locate(const void* p, int* device) noexcept;
// `device` is the ordinal that owns the data (-1: the current device). The calls make it
// current for their duration and restore the caller's device afterwards.
/// Blocking: result lands in host memory at `result_host`.
void reduce(reduce_op op, dtype t, dtype out, accuracy acc, const void* x, const void* y,
            std::int64_t n, void* result_host, int& status, stream_t stream, int device);
void reduce_async(reduce_op op, dtype t, dtype out, accuracy acc, const void* x, const void* y,
                  std::int64_t n,
                  void* result_device, int* status_device, stream_t stream, int device);
void add(dtype t, const void* x, const void* y, void* out, std::int64_t n, int& status,
         stream_t stream, int device);
void add_async(dtype t, const void* x, const void* y, void* out, std::int64_t n,
               int* status_device, stream_t stream, int device);
/// Blocking minimum or maximum and its first index (kNoIndex when none), to host memory.
void extreme(extreme_op op, nan_policy nans, dtype t, const void* x, std::int64_t n, void* value_host,
             std::int64_t& index, stream_t stream, int device);
/// Blocking minimum and maximum with their first indices (kNoIndex when none), to host
/// memory, in one read of x (n > 0).
void minmax(nan_policy nans, dtype t, const void* x, std::int64_t n, void* min_host, std::int64_t& min_index,
            void* max_host, std::int64_t& max_index, stream_t stream, int device);
/// Blocking correctly rounded mean of x[0, n), n > 0, as `out`, to host memory.
void mean(dtype t, dtype out, const void* x, std::int64_t n, void* result_host, stream_t stream, int device);
/// Blocking correctly rounded L2 norm of floating x[0, n), n > 0, as `out`, to host memory.
void norm2(dtype t, dtype out, const void* x, std::int64_t n, void* result_host, stream_t stream, int device);
/// Blocking correctly rounded sum of |x| (the exact L1 norm) of float32/float64 x[0, n), as
/// `out`, to host memory: the exact kernel reading each element as its absolute value.
void norm1_exact(dtype t, dtype out, const void* x, std::int64_t n, void* result_host, stream_t stream, int device);
/// Tests and benchmarks (CUDA builds only): whether the last exact sum or dot enqueued on
/// `stream` with the certified pass on was proved by it (false: the exact kernel ran).
/// True before any such call; calls made with the certified pass off leave it unchanged.
/// Synchronises.
bool last_exact_was_certified(stream_t stream, int device);
}  // namespace tally::cuda
