// Launch shapes of the CUDA kernels, kept as plain data (see docs/performance.md for why).
#pragma once

namespace tally::cuda::tuning {

/// Threads per block of the reduction and element-wise kernels.
inline constexpr int block_threads = 256;
/// Most resident blocks per SM a reduction grid is sized for (256 x 8 = 2048 threads: full
/// occupancy on sm_90). The launch layer asks the occupancy calculator how many blocks of
/// each kernel fit and uses min(that, blocks_per_sm) x SMs: exactly one wave. The grid never
/// exceeds it, whatever n is (grid-stride loops).
inline constexpr int blocks_per_sm = 8;
/// Reducers whose kernels are capped at 2048 / block_threads blocks per SM (32 registers):
/// float32 and float64 sums fit there without spilling (ptxas -v), at 100% occupancy instead
/// of 75% (38-40 registers); dot products and wide integer accumulators would spill, so they
/// keep the compiler's choice and the grid follows their occupancy.
template <class Acc, bool Dot> inline constexpr bool full_occupancy = !Dot && sizeof(Acc) == 8;

/// 16-byte vector loads each thread has in flight per loop iteration (per input stream).
inline constexpr int reduce_unroll = 4;
inline constexpr int add_unroll = 2;
/// The element-wise kernel is not grid-capped: one tile of add_unroll vectors per thread
/// measured 4330 GB/s (3 streams) at 2^27 floats against 4047 for the 8-blocks-per-SM
/// grid-stride loop (bench/tune.cu, H200). Past 2^31 - 1 blocks it strides.
inline constexpr int add_max_grid = 2147483647;
/// A blocking reduction spins on its completion word this long (us) before it falls back to
/// cudaStreamSynchronize (spinning saves ~2 us per call; longer kernels need not burn a core).
inline constexpr int spin_us = 200;
/// Largest accumulator the partials buffer must hold (the 192-bit int64-dot accumulator,
/// padded).
inline constexpr int max_acc_bytes = 64;
/// Anchored levels of the float64 exact kernels (40 bits each below the warp's anchor): 5
/// cover data spanning 2^-60..2^60 in sums; products of such data span twice that, and their
/// TwoProduct errors 53 bits more.
inline constexpr int exact_sum_levels = 5;
inline constexpr int exact_dot_levels = 9;
/// Levels of the fast path (0: none): a warp's tile whose inputs all lie within the top F
/// levels skips the others and the remainder test. Measured on the H200 (tune_exact, 2^27
/// float64, two runs; docs/performance.md v3.1): sums F=2 +2% on uniform data but -7% on wide
/// data; dots F=4 +0.2% in one run and -2.4% in the other on uniform data. Neither gains, so
/// both keep every level (F=0: the fast-path code compiles away).
inline constexpr int exact_sum_fast_levels = 0;
inline constexpr int exact_dot_fast_levels = 0;
/// Exact kernels' launch shape (bench/tune_exact.cu, H200): 128-thread blocks (more of them
/// fit beside the float32 bins' shared memory and the float64 levels' registers), 4 vectors
/// per input per tile, and for float64 three tiles in flight per thread through cp.async
/// staging in shared memory (4015 GB/s against 3392 with register prefetch, float64 sum).
inline constexpr int exact_block_threads = 128;
inline constexpr int exact_unroll = 4;
inline constexpr int exact_f64_stages = 3;
/// float64 dot products and sums of squares (v4, src/cuda/exact_window.cuh): windowed bins
/// of exact_dot_window_bits exponent bits, exact_dot_window_bins of them per thread in shared
/// memory (0 bits: the anchored levels of v3), with exact_f64_dot_stages tiles staged.
inline constexpr int exact_dot_window_bits = 16;
inline constexpr int exact_dot_window_bins = 32;
inline constexpr int exact_f64_dot_stages = 3;
inline constexpr int exact_f64_dot_unroll = 2;
/// v5, the certified first pass of exact mode (src/cuda/certified.cuh): independent
/// accumulator states per thread (shorter dependency chains) and 16-byte vectors in flight
/// per input per iteration.
/// Measured on the H200 (run 3 of the ninth session, bench --only exact): unroll 4 with the
/// next tile prefetched beat unroll 4 without (+3-6% on float64 sums, +3% on float64 dots)
/// and unroll 8 (+0-3%).
inline constexpr int certified_chains = 2;
inline constexpr int certified_unroll = 4;
inline constexpr bool certified_prefetch = true;
/// The gated exact kernel behind the certified pass polls the pass's verdict word (written
/// after the result) and returns as soon as it reads "held", rather than waiting for the
/// whole certified grid to complete (griddepcontrol.wait). Measured on the H200 (tenth
/// session, run 31, interleaved timing): +1.2-1.5% on float32/float64 sums at 2^25-2^26,
/// +0.3-0.8% on dots; a maximum shared-memory carveout for the pass (the exact kernel's)
/// lost 1.5-3.5% and was dropped.
inline constexpr bool certified_gate_polled = true;
/// float64 sums (not dots): unroll 8 without prefetch. With the polled gate it beat unroll 4
/// with prefetch by 1-5% at 2^25-2^29 on all three distributions (run 32, interleaved); on
/// float32 sums and on dots it lost 0-3%, so they keep the shape above.
inline constexpr int certified_f64_sum_unroll = 8;
inline constexpr bool certified_f64_sum_prefetch = false;
/// The certified pass's variants, for measurement: 0 the defaults above, 1 the same pass with
/// the exact kernel waiting for the certified grid to complete (the first v5 form), 2 unroll
/// 8 without prefetch, 3 unroll 4 with prefetch, 4 the defaults with the vectors left after
/// the last full tile loaded together as one partial tile (run 34: within 0.3% of the
/// default, so the remainder was not the gap), 5 the defaults with every error-free addition
/// by Fast2Sum on operands ordered by magnitude (ops::certified::two_sum_ordered: float64
/// sums take 8 float64 additions and 2 compares per element instead of 14 additions; the
/// pass keeps the float64 pipe ~44% busy at full bandwidth, so its tail and its overlap with
/// the loads should shrink; run 35: within 0.3% of the default, the float64 pipe is not the
/// limit), 6 the defaults with the gated exact kernel launched with one block per SM instead
/// of a full wave (fewer blocks to start, poll the verdict and retire behind a proof that
/// held; an exact pass after a failed proof then runs on that smaller grid; not yet measured).
/// TALLY_CERTIFIED_VARIANT (read once) or set_certified_variant. Thread-safe.
int certified_variant() noexcept;
void set_certified_variant(int v) noexcept;
/// Exact var/std of float32/float64 data on the GPU: sum x and sum x^2 in one certified pass
/// (states of both per thread, certified_moments_chains of each) instead of two passes.
/// Predicted: compute-bound for float64 data (38 float64 operations per element against 8
/// bytes), about 1.2x the two passes; float32 about 1.4x. Measured (H200, run 34): float32
/// 2^26 2700 GB/s against 1780 for two passes (1.52x; 1.51x cub-2pass+memcpy), float64 2^25
/// 2261 against 1681 (1.34x; 1.29x cub-2pass+memcpy), and ahead of both at every size from
/// 2^19. On by default; off with TALLY_VAR_ONE_PASS=0 (read once) or set_var_one_pass(false).
/// Either way the results are the same bits (when neither certifies, the exact pass runs).
/// Thread-safe.
inline constexpr int certified_moments_chains = 1;
bool var_one_pass() noexcept;
void set_var_one_pass(bool on) noexcept;
/// Whether exact sums, dots, means and L2 norms of float32/float64 data on the GPU try the
/// certified pass first (ops/certified.hpp; the exact kernels run only when it cannot prove
/// the correctly rounded result). On by default; off with TALLY_EXACT_CERTIFIED=0 (read
/// once) or set_exact_certified(false). Either way the results are the same bits.
/// Thread-safe.
bool exact_certified() noexcept;
void set_exact_certified(bool on) noexcept;
/// Digits of the largest superaccumulator (float64 dot, ops::exact::f64_dot_layout).
inline constexpr int max_exact_digits = 160;

}  // namespace tally::cuda::tuning
