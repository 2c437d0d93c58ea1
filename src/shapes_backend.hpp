// The shape layer's interface to the backends (src/dispatch_shapes.cpp is the only caller).
// Arguments arrive validated: extents >= 0, pointers non-null where elements exist, memory
// checked, offsets valid when they are host memory.
#pragma once

#include <cstdint>

#include "tally/shapes.hpp"

namespace tally::shapes {

/// Which outputs and elements a call reduces. Uniform: output o's element k (k < len) at
/// x + o * outer + k * inner (elements). Segmented (offsets != null): output o is
/// x[offsets[o], offsets[o + 1]) (contiguous).
struct geometry {
  const void* x = nullptr;
  dtype type = dtype::float64;
  std::int64_t outputs = 0;
  const std::int64_t* offsets = nullptr;
  std::int64_t len = 0, outer = 0, inner = 1;
  std::int64_t n = 0;  // elements in all (segmented: x's length)
};

enum class kind : int { sum, mean, extreme };

/// What to compute and where to write it (out: `outputs` values of out_type, or null for
/// extremes without values; index: `outputs` int64 or null).
struct request {
  kind what = kind::sum;
  accuracy acc = accuracy::exact;
  extreme_op eop = extreme_op::min;
  nan_policy nans = nan_policy::propagate;
  dtype out_type = dtype::float64;
  void* out = nullptr;
  std::int64_t* index = nullptr;
  bool out_on_host = false;  // out and index are host memory (the strided 1-D forms on CUDA)
  // Stream-ordered (the *_async forms, CUDA backend only): enqueue and return without waiting;
  // the outcome is written to status_device (device memory, [bad offset, overflowing output],
  // -1 for none) in stream order when it is not null, and the call's outcome is left as is.
  bool stream_ordered = false;
  std::int64_t* status_device = nullptr;
};

/// What went wrong, if anything: the first output whose integer sum left int64 (-1 if none),
/// and (CUDA backend, device offsets) the first offsets entry that breaks the rules (-1 if none).
struct outcome {
  std::int64_t overflow_at = -1;
  std::int64_t bad_offset_at = -1;
};

}  // namespace tally::shapes

namespace tally::cpu {
void shapes_run(const shapes::geometry& g, const shapes::request& r, shapes::outcome& st);
}
namespace tally::cuda {
/// Whether the CUDA backend implements request r (else dispatch throws invalid_argument).
bool shapes_supported(const shapes::request& r, dtype t) noexcept;
void shapes_run(const shapes::geometry& g, const shapes::request& r, shapes::outcome& st, stream_t stream,
                int device);
/// Writes "no error" (-1, -1) to status_device [2] in stream order (a stream-ordered call with
/// nothing to compute).
void shapes_clear_status(std::int64_t* status_device, stream_t stream, int device);
}  // namespace tally::cuda
