// What each backend implements for tally::exact_state (src/state.cpp is the only caller).
// Arguments arrive validated; `words` are exact_state::size int64 words.
#pragma once

#include <cstdint>

#include "tally/core.hpp"

namespace tally::cpu {
/// The canonical exact state of a float32/float64 sum or dot of x[0, n) into words (zero on entry).
void exact_state(reduce_op op, dtype t, const void* x, const void* y, std::int64_t n, std::int64_t* words);
}  // namespace tally::cpu

namespace tally::cuda {
/// Blocking: the canonical state, to host memory (zero on entry). y == x for dot: read once.
void exact_state(reduce_op op, dtype t, const void* x, const void* y, std::int64_t n, std::int64_t* words_host,
                 stream_t stream, int device);
/// Enqueued on `stream`: the canonical state into device memory (overwritten).
void exact_state_async(reduce_op op, dtype t, const void* x, const void* y, std::int64_t n,
                       std::int64_t* words_device, stream_t stream, int device);
}  // namespace tally::cuda

namespace tally::detail {
/// Validates x (and y for dot) exactly as tally::reduce does and returns the backend that runs
/// them (`requested`, or the one automatic picks); `device` receives x's CUDA device (-1 if none).
backend check_reduce(reduce_op op, array_ref x, array_ref y, backend requested, int& device);
}  // namespace tally::detail
