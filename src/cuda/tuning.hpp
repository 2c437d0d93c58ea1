// Launch shapes of the CUDA kernels, kept as plain data (see docs/performance.md for why).
#pragma once

namespace tally::cuda::tuning {

/// Threads per block of the reduction and element-wise kernels.
inline constexpr int block_threads = 256;
/// Resident blocks per SM the grid is sized for (256 x 8 = 2048 threads: full occupancy on
/// sm_90). The grid never exceeds SMs * blocks_per_sm, whatever n is (grid-stride loops).
inline constexpr int blocks_per_sm = 8;
/// 16-byte vector loads each thread has in flight per loop iteration (per input stream).
inline constexpr int reduce_unroll = 4;
inline constexpr int add_unroll = 2;
/// Largest accumulator the partials buffer must hold (the 192-bit int64-dot accumulator,
/// padded).
inline constexpr int max_acc_bytes = 32;

}  // namespace tally::cuda::tuning
