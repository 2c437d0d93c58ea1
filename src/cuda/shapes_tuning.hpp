// Switches of the shape layer's v2 and v3 fast paths (src/cuda/shapes_v2.cuh, shapes_v3.cuh), both on by default.
//
// v2 (rows and CSR segments with contiguous outputs: unit element stride, element-aligned
// base): 16-byte vector loads per lane from the first 16-byte boundary of each output (the
// unaligned head and the tail read scalarly), several outputs per warp for short outputs
// (groups of 4, 8, 16 or 32 lanes chosen from the mean output length), 16384-element tiles
// for long outputs, and the scratch (status words, tile partials, staged host results) taken
// from a per-(device, stream) cache grown on demand instead of cudaMallocAsync per call.
// Column reductions and strided rows keep the v1 kernels (they only take the cached scratch).
// Results stay deterministic (fixed combination order for a given shape and base address)
// and fast sums keep the float64-accumulator bound of any summation order; the bits of fast
// sums may differ from v1's (another order). Integer sums, means and min/max/arg results are
// the same as v1's.
//
// v2 is the default since 2026-11-30 (H200, 2^26 float32: rows 3134-3192 GB/s against v1's
// 993-2628, columns 2563-2985 against 1037-2608, uneven segments 2157 against 1285; see
// docs/performance.md). The environment variable TALLY_SHAPES_V2=0 selects v1, read once at
// the first call; set_shapes_vector_loads overrides it (benchmarks compare both paths).
#pragma once

namespace tally::cuda::tuning {

/// Whether the shape layer's fast paths use v2 (see above). Thread-safe.
bool shapes_vector_loads() noexcept;

/// Switches v2 on or off for later calls (calls in flight keep their path). Thread-safe.
void set_shapes_vector_loads(bool on) noexcept;

/// Whether the shape layer's fast paths use v3 (src/cuda/shapes_v3.cuh: one fused launch per
/// call, blocking by a spin on mapped host memory, column tiles of 16-byte vectors); on by
/// default, off with TALLY_SHAPES_V3=0 (read once). v3 needs v2 on. Thread-safe.
bool shapes_fused() noexcept;

/// Switches v3 on or off for later calls. Thread-safe.
void set_shapes_fused(bool on) noexcept;

}  // namespace tally::cuda::tuning
