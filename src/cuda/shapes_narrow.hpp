// The narrow element types read by the shape kernels themselves (src/cuda/shapes_narrow.cu),
// without the widened copy of src/cuda/shapes.cu.
#pragma once

#include <cuda_runtime.h>

#include <functional>

#include "shapes_backend.hpp"

namespace tally::cuda {

/// Runs g's request on the elements as they are, converted on the way, where a native kernel
/// exists; false when it does not (the caller then widens g into a copy). Native:
///   - float16, bfloat16: fast sums, min/max/argmin/argmax, and the certified pass of exact
///     sums and means (float16: where its fixed-point sums cannot serve); blocking, when the
///     pass cannot prove some output, false after it (the widened route then writes every
///     output, with the same bits as the proved ones); stream-ordered (with a status word,
///     plan half_gated), the pass then shapes_half_exact_gated;
///   - int8, uint8, bool: sums and means, min/max/argmin/argmax.
/// Layouts: rows with unit element stride, CSR segments, and column mode (the outputs are the
/// closer elements); others (strided rows) return false.
bool shapes_run_native(const shapes::geometry& g, const shapes::request& r, shapes::outcome& st, cudaStream_t stream);

/// Exact sums or means (r.what) of float16 / bfloat16 g, stream-ordered (r.stream_ordered, with
/// r.status_device): leases the widened copy, calls `pass`, which queues the certified pass in
/// place on `stream` with its status words in r.status_device, then queues the copy's kernel
/// and the exact kernels over the copy (src/cuda/shapes.cu), gated on the device by those
/// words: they run only when that pass refused an output over good offsets; the words then end
/// as the pass's offsets word and no overflow. Never synchronises (the copy is the (device,
/// stream) cache's buffer, grown by cudaMallocAsync). Throws tally::error (a CUDA error, out of
/// memory included) before the pass is queued when the copy cannot be had.
void shapes_half_exact_gated(const shapes::geometry& g, const shapes::request& r, shapes::outcome& st, cudaStream_t stream,
                             const std::function<void()>& pass);

/// The same for int16, uint16, uint32 and uint64 (src/cuda/shapes_narrow_int.cu): sums, means,
/// min/max/argmin/argmax, blocking or stream-ordered; false for other types and layouts.
bool shapes_run_native_int(const shapes::geometry& g, const shapes::request& r, shapes::outcome& st, cudaStream_t stream);

}  // namespace tally::cuda
