// Launch layer of the shape layer's exact floating sums and means on the GPU (kernels:
// src/cuda/shapes_exact.cuh). Called by src/cuda/shapes.cu for float32 / float64 data when
// the request is a mean, or a sum with accuracy::exact.
#pragma once

#include <cuda_runtime.h>

#include "shapes_backend.hpp"

namespace tally::cuda {

/// Exact sums (r.what == sum) or means (r.what == mean) of g's outputs into r.out (float32 or
/// float64; host memory when r.out_on_host), bitwise those of the CPU shape path. Blocking
/// (synchronises stream) unless r.stream_ordered. Reports bad device offsets in
/// st.bad_offset_at (stream-ordered: in r.status_device). gate (stream-ordered calls behind the
/// certified pass, not column mode; it is r.status_device, holding that pass's status words):
/// the kernels run only if that pass refused an output and the offsets were good, no offsets
/// check of its own, and the status words left as the pass's offsets word and no overflow.
/// Whether a kernel waiting with griddepcontrol.wait may be launched as a programmatic
/// dependent of the grid before it on the current device: compute capability 9.0 or later and
/// the library's device code built for it (the wait is compiled only for sm_90 and later; code
/// JIT-compiled from older PTX would run without it). Asked once a device; thread-safe.
bool dependent_launch_ok();

void shapes_exact_run(const shapes::geometry& g, const shapes::request& r, shapes::outcome& st, cudaStream_t stream,
                      long long* gate = nullptr);

}  // namespace tally::cuda
