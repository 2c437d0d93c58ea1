// Launch layer: picks the kernel instance (type, vector width), sizes the grid from the
// tuning data and the device, and runs the blocking and asynchronous forms.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <tuple>
#include <utility>

#include "backends.hpp"
#include "state_backends.hpp"
#include "state_grid.hpp"
#include "cuda/check.hpp"
#include "cuda/env_setting.hpp"
#include "cuda/certified.cuh"
#include "cuda/exact.cuh"
#include "cuda/exact_window.cuh"
#include "cuda/kernels.cuh"
#include "cuda/small.cuh"
#include "cuda/tuning.hpp"
#include "cuda/workspace.hpp"
#include "tally/ops/extremes.hpp"
#include "tally/ops/small.hpp"

namespace tally::cuda {
namespace {

constexpr int kBlock = tuning::block_threads;

inline bool aligned_to(const void* p, std::size_t a) {
  return reinterpret_cast<std::uintptr_t>(p) % a == 0;
}

// Blocks needed so each thread gets about `per_thread` vectors, capped at the resident grid.
inline unsigned grid_for(std::int64_t nvec, int per_thread, int max_grid) {
  std::int64_t per_block = static_cast<std::int64_t>(kBlock) * per_thread;
  std::int64_t g = (nvec + per_block - 1) / per_block;
  return static_cast<unsigned>(std::clamp<std::int64_t>(g, 1, max_grid));
}

// The grid of a reduction is one full wave: SMs x the blocks of this kernel that fit on an SM
// (its register use decides), at most tuning::blocks_per_sm. A grid of 8 blocks per SM for a
// kernel of which only 6 fit ran in 1.3 waves and lost 5% at 2^28 (docs/performance.md).
// Cached per kernel and device (the value is the same whoever computes it first). Kernels
// with more than 48 KiB of dynamic shared memory are allowed it here, once per device.
template <auto kernel, int BLOCK = kBlock> int resident_grid(const workspace& ws, std::size_t smem = 0) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices];
  int dev = ws.device < kMaxDevices ? ws.device : 0;
  int g = cache[dev].load(std::memory_order_relaxed);
  if (g == 0) {
    int per_sm = 0;
    if (smem > 0)
      TALLY_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    TALLY_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BLOCK, smem));
    g = ws.sm_count * std::clamp(per_sm, 1, tuning::blocks_per_sm * kBlock / BLOCK);
    cache[dev].store(g, std::memory_order_relaxed);
  }
  return g;
}

// Where a reduction's value goes (see result_sink); `done` is null for asynchronous calls.
struct sink {
  void* value;
  int* status;
  volatile unsigned* done;
  unsigned ticket;
};

template <class R, class T, bool DOT>
void launch_reduce(const T* x, const T* y, std::int64_t n, sink out, cudaStream_t stream,
                   workspace& ws) {
  static_assert(sizeof(typename R::acc_t) <= tuning::max_acc_bytes);
  constexpr int V = 16 / sizeof(T);
  // Wide (192-bit) accumulators get half the loads in flight so they stay in registers.
  constexpr int U = sizeof(typename R::acc_t) > 16 ? tuning::reduce_unroll / 2 : tuning::reduce_unroll;
  constexpr int kMinBlocks =
      tuning::full_occupancy<typename R::acc_t, DOT> && std::is_floating_point_v<T> ? 2048 / kBlock : 1;
  auto* partials = static_cast<typename R::acc_t*>(ws.partials);
  result_sink<typename R::result_t> res{static_cast<typename R::result_t*>(out.value), out.status,
                                       out.done, out.ticket};
  bool vectorisable = aligned_to(x, sizeof(T)) &&
                      (!DOT || (aligned_to(y, sizeof(T)) && head_count<T, V>(x) == head_count<T, V>(y)));
  if (vectorisable) {
    std::int64_t head = std::min<std::int64_t>(head_count<T, V>(x), n);
    constexpr auto kernel = reduce_kernel<R, T, DOT, V, kBlock, U, kMinBlocks>;
    unsigned grid = grid_for((n - head) / V, U, resident_grid<kernel>(ws));
    kernel<<<grid, kBlock, 0, stream>>>(x, y, n, head, partials, ws.counter, res);
  } else {
    constexpr auto kernel = reduce_kernel<R, T, DOT, 1, kBlock, U, kMinBlocks>;
    unsigned grid = grid_for(n, U, resident_grid<kernel>(ws));
    kernel<<<grid, kBlock, 0, stream>>>(x, y, n, 0, partials, ws.counter, res);
  }
  TALLY_CUDA(cudaGetLastError());
}

// Exact mode: float32 inputs use shared-memory bins; float64 sums anchored levels in
// registers fed through cp.async staging (src/cuda/exact.cuh); float64 dots (and sums of
// squares) windowed bins in shared memory (src/cuda/exact_window.cuh); shapes from
// tally_tune_exact. The 16-bit floats (ops::half_in, ops::bhalf_in: exact float32 values) use
// the float32 bins.
template <class T, bool DOT>
using f64_exact_acc = std::conditional_t<
    DOT && tuning::exact_dot_window_bits != 0,
    exact::window_acc<tuning::exact_dot_window_bits ? tuning::exact_dot_window_bits : 16, tuning::exact_dot_window_bins,
                      tuning::exact_block_threads>,
    exact::levels_acc<DOT, DOT ? tuning::exact_dot_levels : tuning::exact_sum_levels, 1,
                      DOT ? tuning::exact_dot_fast_levels : tuning::exact_sum_fast_levels>>;
template <class T, bool DOT>
using exact_acc = std::conditional_t<std::is_same_v<T, float> || ops::is_half_v<T>,
                                     exact::bins_acc<DOT, tuning::exact_block_threads>, f64_exact_acc<T, DOT>>;
inline constexpr bool f64_dot_window = tuning::exact_dot_window_bits != 0;

// Launches an exact kernel; GATE 1 or 2: behind the certified kernel, with programmatic
// dependent launch, reading `gate` (see src/cuda/certified.cuh and exact_kernel).
template <int GATE, auto kernel, class T, class Out>
void start_exact(unsigned grid, int block, std::size_t smem, cudaStream_t stream, const T* x, const T* y,
                 std::int64_t n, std::int64_t head, workspace& ws, result_sink<Out> res, unsigned* gate,
                 unsigned seq) {
  if constexpr (GATE != 0) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(static_cast<unsigned>(block));
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    TALLY_CUDA(cudaLaunchKernelEx(&cfg, kernel, x, y, n, head, ws.exact_sa, ws.exact_flags, ws.counter, res, gate, seq));
  } else {
    kernel<<<grid, block, smem, stream>>>(x, y, n, head, ws.exact_sa, ws.exact_flags, ws.counter, res, gate, seq);
  }
}

template <class T, bool DOT, class Out, bool EXPORT = false, bool SQUARE = false, bool ABS = false, int GATE = 0>
void launch_exact(const T* x, const T* y, std::int64_t n, sink out, cudaStream_t stream,
                  workspace& ws, unsigned seq = 0, int grid_cap = 0) {
  using A = exact_acc<T, DOT>;
  static_assert(A::layout::digits <= tuning::max_exact_digits);
  constexpr int B = tuning::exact_block_threads;
  constexpr bool window = std::is_same_v<T, double> && DOT && f64_dot_window;
  constexpr int U = window ? tuning::exact_f64_dot_unroll : tuning::exact_unroll;
  constexpr int ST = !std::is_same_v<T, double> ? 0
                     : DOT && f64_dot_window ? tuning::exact_f64_dot_stages
                                             : tuning::exact_f64_stages;
  constexpr int V = 16 / sizeof(T);
  result_sink<Out> res{static_cast<Out*>(out.value), out.status, out.done, out.ticket};
  unsigned* gate = GATE != 0 ? ws.exact_flags + 3 : nullptr;
  auto blocks = [&](std::int64_t units, int max_grid) {
    std::int64_t per_block = static_cast<std::int64_t>(B) * U;
    if (grid_cap > 0) max_grid = std::min(max_grid, grid_cap);  // (certified variant 6: a smaller gated grid)
    return static_cast<unsigned>(std::clamp<std::int64_t>((units + per_block - 1) / per_block, 1, max_grid));
  };
  bool vectorisable = aligned_to(x, sizeof(T)) &&
                      (!DOT || (aligned_to(y, sizeof(T)) && head_count<T, V>(x) == head_count<T, V>(y)));
  if (vectorisable) {
    std::int64_t head = std::min<std::int64_t>(head_count<T, V>(x), n);
    constexpr auto kernel = exact::exact_kernel<A, T, DOT, V, B, U, Out, 2, ST, EXPORT, SQUARE, ABS, GATE>;
    constexpr std::size_t smem = exact::exact_smem_bytes<A, T, DOT, V, B, U, ST, SQUARE>;
    unsigned grid = blocks((n - head) / V, resident_grid<kernel, B>(ws, smem));
    start_exact<GATE, kernel>(grid, B, smem, stream, x, y, n, head, ws, res, gate, seq);
  } else {
    constexpr auto kernel = exact::exact_kernel<A, T, DOT, 1, B, U, Out, 2, ST, EXPORT, SQUARE, ABS, GATE>;
    constexpr std::size_t smem = exact::exact_smem_bytes<A, T, DOT, 1, B, U, ST, SQUARE>;
    unsigned grid = blocks(n, resident_grid<kernel, B>(ws, smem));
    start_exact<GATE, kernel>(grid, B, smem, stream, x, y, n, 0, ws, res, gate, seq);
  }
  TALLY_CUDA(cudaGetLastError());
}

// The certified first pass (v5, src/cuda/certified.cuh): float64 data carry three levels
// (hi, mid, lo), float32 data two (their sums and products are exact in float64 already).
template <class T> inline constexpr int certified_levels = std::is_same_v<T, double> ? 3 : 2;

template <class T, bool DOT, bool SQUARE, bool ROUND, class Out, int U = tuning::certified_unroll,
          bool PREFETCH = tuning::certified_prefetch, bool MOMENTS = false, bool TAIL = false,
          bool ORDERED = false>
void launch_certified(const T* x, const T* y, std::int64_t n, sink out, cudaStream_t stream, workspace& ws,
                      unsigned seq = 0) {
  constexpr int K = certified_levels<T>;
  constexpr int P = MOMENTS ? tuning::certified_moments_chains : tuning::certified_chains;
  constexpr int V = 16 / sizeof(T);
  static_assert(sizeof(certified::moments) <= tuning::max_acc_bytes);
  auto* partials = static_cast<ops::certified::state*>(ws.partials);
  result_sink<Out> res{static_cast<Out*>(out.value), out.status, out.done, out.ticket};
  unsigned* gate = ws.exact_flags + 3;
  bool vectorisable = aligned_to(x, sizeof(T)) &&
                      (!DOT || SQUARE || (aligned_to(y, sizeof(T)) && head_count<T, V>(x) == head_count<T, V>(y)));
  if (vectorisable) {
    std::int64_t head = std::min<std::int64_t>(head_count<T, V>(x), n);
    constexpr auto kernel = certified::certified_kernel<T, DOT, SQUARE, K, P, V, kBlock, U, ROUND, Out, PREFETCH, MOMENTS, TAIL, ORDERED>;
    unsigned grid = grid_for((n - head) / V, U, resident_grid<kernel>(ws));
    kernel<<<grid, kBlock, 0, stream>>>(x, y, n, head, partials, ws.counter, gate, seq, res);
  } else {
    constexpr auto kernel = certified::certified_kernel<T, DOT, SQUARE, K, P, 1, kBlock, U, ROUND, Out, PREFETCH, MOMENTS, TAIL, ORDERED>;
    unsigned grid = grid_for(n, U, resident_grid<kernel>(ws));
    kernel<<<grid, kBlock, 0, stream>>>(x, y, n, 0, partials, ws.counter, gate, seq, res);
  }
  TALLY_CUDA(cudaGetLastError());
}

// Exact sum or dot in stream order: the certified pass, then the exact kernel gated on its
// verdict (it returns at once when the certificate held). The caller holds ws.blocking, so
// another thread's call on the same stream cannot enqueue between the two kernels.
template <class T, bool DOT, class Out>
void launch_exact_certified(const T* x, const T* y, std::int64_t n, sink out, cudaStream_t stream, workspace& ws) {
  if ((++ws.gate_seq & 0x7fffffffu) == 0) ws.gate_seq = 1;  // 0 is the reset gate's "pending"
  const unsigned seq = ws.gate_seq & 0x7fffffffu;
  constexpr int kPolled = 2, kWaits = 1;  // exact_kernel's GATE modes
  const int variant = tuning::certified_variant();  // the measured variants (bench, tests); 0: the default
  constexpr bool f64_sum = std::is_same_v<T, double> && !DOT;  // tuning::certified_f64_sum_unroll
  constexpr int U = f64_sum ? tuning::certified_f64_sum_unroll : tuning::certified_unroll;
  constexpr bool PF = f64_sum ? tuning::certified_f64_sum_prefetch : tuning::certified_prefetch;
  switch (variant) {
    case 2: launch_certified<T, DOT, false, true, Out, 8, false>(x, y, n, out, stream, ws, seq); break;
    case 3: launch_certified<T, DOT, false, true, Out, 4, true>(x, y, n, out, stream, ws, seq); break;
    case 4: launch_certified<T, DOT, false, true, Out, U, PF, false, true>(x, y, n, out, stream, ws, seq); break;
    case 5: launch_certified<T, DOT, false, true, Out, U, PF, false, false, true>(x, y, n, out, stream, ws, seq); break;
    default: launch_certified<T, DOT, false, true, Out, U, PF>(x, y, n, out, stream, ws, seq); break;
  }
  const bool polled = variant == 1 ? false : tuning::certified_gate_polled;
  const int grid_cap = variant == 6 ? ws.sm_count : 0;
  if (polled) launch_exact<T, DOT, Out, false, false, false, kPolled>(x, y, n, out, stream, ws, seq, grid_cap);
  else launch_exact<T, DOT, Out, false, false, false, kWaits>(x, y, n, out, stream, ws, seq);
}

// Exact float16 sums: the fixed-point kernel (src/cuda/small.cuh) when each thread's share
// fits its int64 (always, below 2^23 elements per resident thread); otherwise reduce_kernel
// with the same reducer accumulating every element in 128 bits.
template <class Out>
void launch_f16_sum(const ops::half_in* x, std::int64_t n, sink out, cudaStream_t stream, workspace& ws) {
  using R = ops::f16_exact_sum_reducer<Out>;
  static_assert(sizeof(typename R::acc_t) <= tuning::max_acc_bytes);
  constexpr int V = 8;
  constexpr int U = tuning::reduce_unroll;
  if (aligned_to(x, sizeof(ops::half_in))) {
    std::int64_t head = std::min<std::int64_t>(head_count<ops::half_in, V>(x), n);
    constexpr auto kernel = f16_sum_kernel<Out, V, kBlock, U>;
    unsigned grid = grid_for((n - head) / V, U, resident_grid<kernel>(ws));
    std::int64_t threads = static_cast<std::int64_t>(grid) * kBlock;
    if ((n + threads - 1) / threads + 2 * V <= ops::f16_int64_terms) {
      result_sink<Out> res{static_cast<Out*>(out.value), out.status, out.done, out.ticket};
      kernel<<<grid, kBlock, 0, stream>>>(x, n, head, static_cast<ops::f16_fixed*>(ws.partials), ws.counter, res);
      TALLY_CUDA(cudaGetLastError());
      return;
    }
  }
  launch_reduce<R, ops::half_in, false>(x, x, n, out, stream, ws);
}

template <class R, class T>
void launch_indexed(const T* x, std::int64_t n, sink out, cudaStream_t stream, workspace& ws) {
  static_assert(sizeof(typename R::acc_t) <= tuning::max_acc_bytes);
  constexpr int V = 16 / sizeof(T);
  constexpr int U = tuning::reduce_unroll;
  auto* partials = static_cast<typename R::acc_t*>(ws.partials);
  result_sink<typename R::result_t> res{static_cast<typename R::result_t*>(out.value), out.status, out.done, out.ticket};
  if (aligned_to(x, sizeof(T))) {
    std::int64_t head = std::min<std::int64_t>(head_count<T, V>(x), n);
    constexpr auto kernel = indexed_kernel<R, T, V, kBlock, U>;
    unsigned grid = grid_for((n - head) / V, U, resident_grid<kernel>(ws));
    kernel<<<grid, kBlock, 0, stream>>>(x, n, head, partials, ws.counter, res);
  } else {
    constexpr auto kernel = indexed_kernel<R, T, 1, kBlock, U>;
    unsigned grid = grid_for(n, U, resident_grid<kernel>(ws));
    kernel<<<grid, kBlock, 0, stream>>>(x, n, 0, partials, ws.counter, res);
  }
  TALLY_CUDA(cudaGetLastError());
}

template <class T>
void extreme_t(extreme_op op, nan_policy nans, const void* xv, std::int64_t n, sink out, cudaStream_t stream,
               workspace& ws) {
  using namespace ops;
  using E = reduced_t<T>;  // 16-bit floats compare as float32, bool's bytes as bool
  auto* x = static_cast<const T*>(xv);
  bool mx = op == extreme_op::max, skip = nans == nan_policy::omit;
  if (mx && skip) launch_indexed<extreme_reducer<E, true, true>, T>(x, n, out, stream, ws);
  else if (mx) launch_indexed<extreme_reducer<E, true, false>, T>(x, n, out, stream, ws);
  else if (skip) launch_indexed<extreme_reducer<E, false, true>, T>(x, n, out, stream, ws);
  else launch_indexed<extreme_reducer<E, false, false>, T>(x, n, out, stream, ws);
}

template <class T>
void minmax_t(nan_policy nans, const void* xv, std::int64_t n, sink out, cudaStream_t stream, workspace& ws) {
  using E = ops::reduced_t<T>;
  auto* x = static_cast<const T*>(xv);
  if (nans == nan_policy::omit) launch_indexed<ops::minmax_reducer<E, true>, T>(x, n, out, stream, ws);
  else launch_indexed<ops::minmax_reducer<E, false>, T>(x, n, out, stream, ws);
}

template <class T>
void launch_add(const T* x, const T* y, T* out, std::int64_t n, int* status, cudaStream_t stream,
                workspace& ws) {
  constexpr int V = 16 / sizeof(T);
  constexpr int U = tuning::add_unroll;
  std::int64_t hx = head_count<T, V>(x);
  bool vectorisable = aligned_to(x, sizeof(T)) && aligned_to(y, sizeof(T)) &&
                      aligned_to(out, sizeof(T)) && hx == head_count<T, V>(y) &&
                      hx == head_count<T, V>(out);
  if (vectorisable) {
    std::int64_t head = std::min<std::int64_t>(hx, n);
    unsigned grid = grid_for((n - head) / V, U, tuning::add_max_grid);
    add_kernel<T, V, kBlock, U><<<grid, kBlock, 0, stream>>>(x, y, out, n, head, status);
  } else {
    unsigned grid = grid_for(n, U, tuning::add_max_grid);
    add_kernel<T, 1, kBlock, U><<<grid, kBlock, 0, stream>>>(x, y, out, n, 0, status);
  }
  TALLY_CUDA(cudaGetLastError());
}

// T: the integer element type or bool (read as ops::bool_in: any nonzero byte true).
template <class T>
void reduce_t(reduce_op op, const void* x, const void* y, std::int64_t n, sink out,
              cudaStream_t stream, workspace& ws) {
  using S = ops::storage_t<T>;
  auto* xt = static_cast<const S*>(x);
  auto* yt = static_cast<const S*>(y);
  if (op == reduce_op::dot) {
    launch_reduce<ops::dot_reducer<T>, S, true>(xt, yt, n, out, stream, ws);
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    // Narrower exact accumulators where n allows (see the reducers' bounds).
    if (n < ops::int32_sum_reducer_short::max_n)
      launch_reduce<ops::int32_sum_reducer_short, S, false>(xt, xt, n, out, stream, ws);
    else
      launch_reduce<ops::sum_reducer<T>, S, false>(xt, xt, n, out, stream, ws);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    if (n < ops::int64_sum_reducer_short::max_n)
      launch_reduce<ops::int64_sum_reducer_short, S, false>(xt, xt, n, out, stream, ws);
    else
      launch_reduce<ops::sum_reducer<T>, S, false>(xt, xt, n, out, stream, ws);
  } else if constexpr (sizeof(T) <= 4 && !std::is_same_v<T, std::int32_t>) {
    // 8/16-bit integers, uint32 and bool: widened into one 64-bit word where n allows.
    if (n < ops::small_sum_reducer_short<T>::max_n)
      launch_reduce<ops::small_sum_reducer_short<T>, S, false>(xt, xt, n, out, stream, ws);
    else
      launch_reduce<ops::sum_reducer<T>, S, false>(xt, xt, n, out, stream, ws);
  } else {
    launch_reduce<ops::sum_reducer<T>, S, false>(xt, xt, n, out, stream, ws);
  }
}

// Floating inputs: fast (float64 tree) or exact, to a float32 or float64 result. T is the
// storage type (float, double, ops::half_in, ops::bhalf_in); the 16-bit floats are read as
// their exact float32 values (float32 reducers, float32 bins), except exact float16 sums,
// which take the fixed-point kernel.
template <class T, class Out>
void reduce_float(reduce_op op, accuracy acc, const void* x, const void* y, std::int64_t n,
                  sink out, cudaStream_t stream, workspace& ws) {
  using F = std::conditional_t<ops::is_half_v<T>, float, T>;
  auto* xt = static_cast<const T*>(x);
  auto* yt = static_cast<const T*>(y);
  bool dot = op == reduce_op::dot;
  if (acc == accuracy::exact) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (tuning::exact_certified()) {
        if (dot) launch_exact_certified<T, true, Out>(xt, yt, n, out, stream, ws);
        else launch_exact_certified<T, false, Out>(xt, xt, n, out, stream, ws);
        return;
      }
    }
    if (dot) launch_exact<T, true, Out>(xt, yt, n, out, stream, ws);
    else if constexpr (std::is_same_v<T, ops::half_in>) launch_f16_sum<Out>(xt, n, out, stream, ws);
    else launch_exact<T, false, Out>(xt, xt, n, out, stream, ws);
    return;
  }
  if (dot) launch_reduce<ops::with_result<ops::dot_reducer<F>, Out>, T, true>(xt, yt, n, out, stream, ws);
  else launch_reduce<ops::with_result<ops::sum_reducer<F>, Out>, T, false>(xt, xt, n, out, stream, ws);
}

void reduce_any(reduce_op op, dtype t, dtype o, accuracy acc, const void* x, const void* y,
                std::int64_t n, sink out, cudaStream_t stream, workspace& ws) {
  tally::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_element_v<T>) {
      using S = ops::storage_t<T>;
      if (o == dtype::float64) reduce_float<S, double>(op, acc, x, y, n, out, stream, ws);
      else reduce_float<S, float>(op, acc, x, y, n, out, stream, ws);
    } else {
      reduce_t<T>(op, x, y, n, out, stream, ws);
    }
  });
}

// Every element type: the 16-bit floats rounded once, small integers checked, bool as logical
// or (ops::add_checked forwards them to ops/elementwise_small.hpp).
void add_any(dtype t, const void* x, const void* y, void* out, std::int64_t n, int* status,
             cudaStream_t stream, workspace& ws) {
  tally::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = std::conditional_t<std::is_same_v<T, bool>, ops::bool_in, T>;  // (bool: its bytes, any nonzero true)
    launch_add(static_cast<const S*>(x), static_cast<const S*>(y), static_cast<S*>(out), n, status, stream, ws);
  });
}

}  // namespace

// Waits for a blocking reduction: spins on the completion word in mapped host memory (the
// kernel sets it last), which returns ~2 us sooner than cudaStreamSynchronize; falls back to
// cudaStreamSynchronize after tuning::spin_us, and polls the stream for errors meanwhile so
// a failed kernel cannot leave the caller spinning.
void wait_for(volatile unsigned* done, unsigned ticket, cudaStream_t stream) {
  auto t0 = std::chrono::steady_clock::now();
  for (unsigned i = 1; *done != ticket; ++i) {
    if (i % 256 != 0) continue;
    cudaError_t e = cudaStreamQuery(stream);
    if (e != cudaSuccess && e != cudaErrorNotReady) throw_cuda(e, "cudaStreamQuery(stream) after a reduction");
    if (e == cudaSuccess && *done != ticket)
      throw error(errc::cuda_error, "tally: a reduction kernel finished without writing its result");
    if (std::chrono::steady_clock::now() - t0 > std::chrono::microseconds(tuning::spin_us)) {
      TALLY_CUDA(cudaStreamSynchronize(stream));
      if (*done != ticket)
        throw error(errc::cuda_error, "tally: a reduction kernel finished without writing its result");
      return;
    }
  }
}


void reduce(reduce_op op, dtype t, dtype o, accuracy acc, const void* x, const void* y,
            std::int64_t n, void* result_host, int& status, stream_t stream, int device) {
  if (n == 0) {  // the sum of nothing is +0; no launch needed
    std::memset(result_host, 0, dtype_size(o));
    status = 0;
    return;
  }
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  std::lock_guard<std::mutex> lock(ws.blocking);
  // The kernel writes value, status and then the ticket straight into pinned, mapped host
  // memory: no separate device-to-host copy, no stream synchronisation on the fast path.
  unsigned ticket = ++ws.ticket;
  reduce_any(op, t, o, acc, x, y, n, sink{ws.host_result, ws.host_status, ws.host_done, ticket},
             stream, ws);
  wait_for(ws.host_done, ticket, stream);
  std::atomic_thread_fence(std::memory_order_acquire);  // read the value after the ticket
  std::memcpy(result_host, ws.host_result, dtype_size(o));
  status = *ws.host_status;
}

void norm1_exact(dtype t, dtype o, const void* x, std::int64_t n, void* result_host, stream_t stream, int device) {
  if (n == 0) {
    std::memset(result_host, 0, dtype_size(o));
    return;
  }
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  std::lock_guard<std::mutex> lock(ws.blocking);
  unsigned ticket = ++ws.ticket;
  sink out{ws.host_result, ws.host_status, ws.host_done, ticket};
  auto go = [&](auto* xt) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(xt)>>;
    if (o == dtype::float64) launch_exact<T, false, double, false, false, true>(xt, xt, n, out, stream, ws);
    else launch_exact<T, false, float, false, false, true>(xt, xt, n, out, stream, ws);
  };
  if (t == dtype::float32) go(static_cast<const float*>(x));
  else go(static_cast<const double*>(x));
  wait_for(ws.host_done, ticket, stream);
  std::atomic_thread_fence(std::memory_order_acquire);
  std::memcpy(result_host, ws.host_result, dtype_size(o));
}

void reduce_async(reduce_op op, dtype t, dtype o, accuracy acc, const void* x, const void* y,
                  std::int64_t n, void* result_device, int* status_device, stream_t stream,
                  int device) {
  device_guard guard(device);
  if (n == 0) {  // +0 and status 0, in stream order
    TALLY_CUDA(cudaMemsetAsync(result_device, 0, dtype_size(o), stream));
    if (status_device) TALLY_CUDA(cudaMemsetAsync(status_device, 0, sizeof(int), stream));
    return;
  }
  workspace& ws = get_workspace(stream);
  // Held while enqueueing: an exact call is two kernels sharing the workspace's gate, and
  // another thread's call on the same stream must not land between them.
  std::lock_guard<std::mutex> lock(ws.blocking);
  reduce_any(op, t, o, acc, x, y, n, sink{result_device, status_device, nullptr, 0}, stream, ws);
}

void add(dtype t, const void* x, const void* y, void* out, std::int64_t n, int& status,
         stream_t stream, int device) {
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  std::lock_guard<std::mutex> lock(ws.blocking);
  *ws.host_status = 0;
  add_any(t, x, y, out, n, ws.host_status, stream, ws);
  TALLY_CUDA(cudaStreamSynchronize(stream));
  status = *ws.host_status;
}

void add_async(dtype t, const void* x, const void* y, void* out, std::int64_t n, int* status_device,
               stream_t stream, int device) {
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  if (status_device) TALLY_CUDA(cudaMemsetAsync(status_device, 0, sizeof(int), stream));
  if (n > 0) add_any(t, x, y, out, n, status_device, stream, ws);
}

namespace {
// An extreme's value from the sink's (the 16-bit floats' is a float32, one of theirs or
// +-inf, NaN: converted back exactly).
void put_extreme_value(dtype t, const void* from, void* value_host) {
  if (t == dtype::float16 || t == dtype::bfloat16) {
    float f;
    std::memcpy(&f, from, sizeof f);
    std::uint16_t b = t == dtype::float16 ? to_float16(f).bits : to_bfloat16(f).bits;
    std::memcpy(value_host, &b, sizeof b);
  } else {
    std::memcpy(value_host, from, dtype_size(t));
  }
}
}  // namespace

void extreme(extreme_op op, nan_policy nans, dtype t, const void* x, std::int64_t n, void* value_host,
             std::int64_t& index, stream_t stream, int device) {
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  std::lock_guard<std::mutex> lock(ws.blocking);
  unsigned ticket = ++ws.ticket;
  sink out{ws.host_result, ws.host_status, ws.host_done, ticket};
  tally::visit(t, [&](auto tag) { extreme_t<ops::storage_t<typename decltype(tag)::type>>(op, nans, x, n, out, stream, ws); });
  wait_for(ws.host_done, ticket, stream);
  std::atomic_thread_fence(std::memory_order_acquire);
  // The sink holds an ops::extreme_value<E>: the value, then (8-byte aligned) the index.
  put_extreme_value(t, ws.host_result, value_host);
  std::memcpy(&index, static_cast<const char*>(ws.host_result) + 8, sizeof index);
}

void minmax(nan_policy nans, dtype t, const void* x, std::int64_t n, void* min_host, std::int64_t& min_index,
            void* max_host, std::int64_t& max_index, stream_t stream, int device) {
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  std::lock_guard<std::mutex> lock(ws.blocking);
  unsigned ticket = ++ws.ticket;
  sink out{ws.host_result, ws.host_status, ws.host_done, ticket};
  tally::visit(t, [&](auto tag) {
    using T = ops::storage_t<typename decltype(tag)::type>;
    static_assert(sizeof(ops::extreme_value<ops::reduced_t<T>>) == 16 &&
                  sizeof(ops::minmax_value<ops::reduced_t<T>>) == 32, "the sink holds 32 bytes: two (value, index)");
    minmax_t<T>(nans, x, n, out, stream, ws);
  });
  wait_for(ws.host_done, ticket, stream);
  std::atomic_thread_fence(std::memory_order_acquire);
  // The sink holds an ops::minmax_value<E>: two ops::extreme_value<E> of 16 bytes each (the
  // value, then the 8-byte aligned index).
  const char* r = static_cast<const char*>(ws.host_result);
  put_extreme_value(t, r, min_host);
  std::memcpy(&min_index, r + 8, sizeof min_index);
  put_extreme_value(t, r + 16, max_host);
  std::memcpy(&max_index, r + 24, sizeof max_index);
}

namespace {
// Runs a blocking exact reduction that exports its digits (exact_kernel's EXPORT) and
// returns them, with their weight and flags, for the host to finish.
struct exported_state {
  std::int64_t digits[tuning::max_exact_digits + 4];
  int count, base;
  unsigned flags;
};

template <class T, bool SQUARE>
exported_state export_exact(const T* x, std::int64_t n, stream_t stream, workspace& ws) {
  std::lock_guard<std::mutex> lock(ws.blocking);
  unsigned ticket = ++ws.ticket;
  launch_exact<T, SQUARE, long long, true, SQUARE>(x, x, n, sink{ws.host_state, ws.host_status, ws.host_done, ticket},
                                                   stream, ws);
  wait_for(ws.host_done, ticket, stream);
  std::atomic_thread_fence(std::memory_order_acquire);
  const long long* st = static_cast<const long long*>(ws.host_state);
  exported_state e{};
  e.count = static_cast<int>(st[0]);
  e.base = static_cast<int>(st[1]);
  e.flags = static_cast<unsigned>(st[2]);
  std::memcpy(e.digits, st + exact::export_header, sizeof(std::int64_t) * e.count);
  return e;
}

// The certified pass, blocking, its interval returned to the host (for a mean or a square
// root, which the host certifies; ops::certified).
template <class T, bool SQUARE>
ops::certified::interval certified_interval(const T* x, std::int64_t n, stream_t stream, workspace& ws) {
  std::lock_guard<std::mutex> lock(ws.blocking);
  unsigned ticket = ++ws.ticket;
  launch_certified<T, SQUARE, SQUARE, false, double>(x, x, n, sink{ws.host_result, ws.host_status, ws.host_done, ticket},
                                                     stream, ws);
  wait_for(ws.host_done, ticket, stream);
  std::atomic_thread_fence(std::memory_order_acquire);
  const double* w = static_cast<const double*>(ws.host_result);
  return ops::certified::interval{w[0], w[1], w[2], w[3]};
}
// sum x and sum x^2 in one certified pass (tuning::var_one_pass): both intervals.
template <class T>
std::pair<ops::certified::interval, ops::certified::interval> certified_moments(const T* x, std::int64_t n,
                                                                                stream_t stream, workspace& ws) {
  std::lock_guard<std::mutex> lock(ws.blocking);
  unsigned ticket = ++ws.ticket;
  // 8 doubles: into the exported-state area of the mapped host block (host_result holds 4)
  launch_certified<T, false, false, false, double, tuning::certified_unroll, tuning::certified_prefetch, true>(
      x, x, n, sink{ws.host_state, ws.host_status, ws.host_done, ticket}, stream, ws);
  wait_for(ws.host_done, ticket, stream);
  std::atomic_thread_fence(std::memory_order_acquire);
  const double* w = static_cast<const double*>(ws.host_state);
  return {ops::certified::interval{w[0], w[1], w[2], w[3]}, ops::certified::interval{w[4], w[5], w[6], w[7]}};
}
template <class T> inline constexpr bool certifiable = std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class T, class Out> void mean_float(const void* x, std::int64_t n, void* result, stream_t s, workspace& ws) {
  if constexpr (certifiable<T>) {
    Out r;
    if (tuning::exact_certified() &&
        ops::certified::divide_certified<Out>(certified_interval<T, false>(static_cast<const T*>(x), n, s, ws),
                                              static_cast<std::uint64_t>(n), r)) {
      std::memcpy(result, &r, sizeof r);
      return;
    }
  }
  exported_state e = export_exact<T, false>(static_cast<const T*>(x), n, s, ws);
  Out r = ops::exact::divide_round<Out>(e.digits, e.count, e.base, e.flags, static_cast<std::uint64_t>(n));
  std::memcpy(result, &r, sizeof r);
}

template <class T, class Out> void mean_int(const void* x, std::int64_t n, void* result, stream_t s, workspace& ws) {
  ops::i128 total;
  {
    std::lock_guard<std::mutex> lock(ws.blocking);
    unsigned ticket = ++ws.ticket;
    auto* xt = static_cast<const T*>(x);
    launch_reduce<ops::int_total_reducer<T>, T, false>(xt, xt, n, sink{ws.host_result, ws.host_status, ws.host_done, ticket},
                                                       s, ws);
    wait_for(ws.host_done, ticket, s);
    std::atomic_thread_fence(std::memory_order_acquire);
    std::memcpy(&total, ws.host_result, sizeof total);
  }
  Out r = ops::exact::divide_round_int<Out>(total, static_cast<std::uint64_t>(n));
  std::memcpy(result, &r, sizeof r);
}

template <class T, class Out> void norm2_float(const void* x, std::int64_t n, void* result, stream_t s, workspace& ws) {
  if constexpr (certifiable<T>) {
    Out r;
    if (tuning::exact_certified() &&
        ops::certified::sqrt_certified<Out>(certified_interval<T, true>(static_cast<const T*>(x), n, s, ws), r)) {
      std::memcpy(result, &r, sizeof r);
      return;
    }
  }
  exported_state e = export_exact<T, true>(static_cast<const T*>(x), n, s, ws);
  Out r = ops::exact::sqrt_round<Out>(e.digits, e.count, e.base, e.flags);
  std::memcpy(result, &r, sizeof r);
}
}  // namespace

void mean(dtype t, dtype out, const void* x, std::int64_t n, void* result, stream_t stream, int device) {
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  tally::visit(t, [&](auto tag) {
    using T = ops::storage_t<typename decltype(tag)::type>;
    constexpr bool floating = std::is_floating_point_v<T> || ops::is_half_v<T>;
    auto run = [&]<class Out>() {
      if constexpr (floating) mean_float<T, Out>(x, n, result, stream, ws);
      else mean_int<T, Out>(x, n, result, stream, ws);
    };
    if (out == dtype::float64) run.template operator()<double>();
    else run.template operator()<float>();
  });
}

bool var_certified(dtype t, dtype out, const void* x, std::int64_t n, std::uint64_t m2, bool take_sqrt,
                   void* result, stream_t stream, int device) {
  if (!tuning::exact_certified() || (t != dtype::float32 && t != dtype::float64)) return false;
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  auto go = [&](auto* xt, auto out_tag) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(xt)>>;
    using Out = decltype(out_tag);
    ops::certified::interval s1, s2;
    if (tuning::var_one_pass()) {
      std::tie(s1, s2) = certified_moments<T>(xt, n, stream, ws);
    } else {
      s1 = certified_interval<T, false>(xt, n, stream, ws);
      s2 = certified_interval<T, true>(xt, n, stream, ws);
    }
    Out r;
    if (!ops::certified::variance_certified<Out>(s1, s2, static_cast<std::uint64_t>(n), m2, take_sqrt, r)) return false;
    std::memcpy(result, &r, sizeof r);
    return true;
  };
  auto by_out = [&](auto* xt) { return out == dtype::float64 ? go(xt, double{}) : go(xt, float{}); };
  return t == dtype::float32 ? by_out(static_cast<const float*>(x)) : by_out(static_cast<const double*>(x));
}

void norm2(dtype t, dtype out, const void* x, std::int64_t n, void* result, stream_t stream, int device) {
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  tally::visit(t, [&](auto tag) {
    using T = ops::storage_t<typename decltype(tag)::type>;
    if constexpr (std::is_floating_point_v<T> || ops::is_half_v<T>) {
      if (out == dtype::float64) norm2_float<T, double>(x, n, result, stream, ws);
      else norm2_float<T, float>(x, n, result, stream, ws);
    } else {
      throw error(errc::invalid_argument, "tally::norm2: integer data (the dispatcher converts them)");
    }
  });
}

// ---- exact states (include/tally/state.hpp) ----------------------------------------------
namespace {

// The exact kernel's exported state at `w` ([count, base, flags, digits...]; see
// exact::export_header; at most 3 + 139 words, so it fits the 144 words of the state it
// becomes) turned in place into a canonical exact_state of n terms. One block: the words
// are read into shared memory first, so reading and writing the same buffer is safe.
__global__ void exported_to_state(long long* __restrict__ w, std::int64_t n) {
  constexpr int S = state_grid::kSize;
  __shared__ long long in[S];
  __shared__ std::int64_t out[S];
  for (int k = threadIdx.x; k < S; k += blockDim.x) {
    in[k] = w[k];
    out[k] = 0;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int count = static_cast<int>(in[0]), base = static_cast<int>(in[1]);
    auto flags = static_cast<unsigned>(in[2]);
    const auto* d = reinterpret_cast<const std::int64_t*>(in + exact::export_header);
    if (!state_grid::place(d, count, base, flags, n, out)) out[state_grid::kNan] = 1;  // (cannot happen: every layout is on the grid)
  }
  __syncthreads();
  for (int k = threadIdx.x; k < S; k += blockDim.x) w[k] = static_cast<long long>(out[k]);
}

template <class T, bool DOT, bool SQUARE>
void enqueue_state(const T* x, const T* y, std::int64_t n, long long* w, cudaStream_t stream, workspace& ws) {
  launch_exact<T, DOT, long long, true, SQUARE>(x, y, n, sink{w, nullptr, nullptr, 0}, stream, ws);
  exported_to_state<<<1, 160, 0, stream>>>(w, n);
  TALLY_CUDA(cudaGetLastError());
}

void enqueue_state_any(reduce_op op, dtype t, const void* x, const void* y, std::int64_t n, long long* w,
                       cudaStream_t stream, workspace& ws) {
  bool dot = op == reduce_op::dot, square = dot && x == y;
  auto go = [&](auto tag) {
    using T = decltype(tag);
    auto* xt = static_cast<const T*>(x);
    auto* yt = static_cast<const T*>(y);
    if (square) enqueue_state<T, true, true>(xt, xt, n, w, stream, ws);
    else if (dot) enqueue_state<T, true, false>(xt, yt, n, w, stream, ws);
    else enqueue_state<T, false, false>(xt, xt, n, w, stream, ws);
  };
  if (t == dtype::float32) go(float{});
  else go(double{});
}

// Blocking: the exported digits land in the workspace's pinned, mapped host memory (as
// export_exact does), and the host moves them onto the grid.
template <class T, bool DOT, bool SQUARE>
void state_blocking(const T* x, const T* y, std::int64_t n, std::int64_t* words, cudaStream_t stream, workspace& ws) {
  std::lock_guard<std::mutex> lock(ws.blocking);
  unsigned ticket = ++ws.ticket;
  launch_exact<T, DOT, long long, true, SQUARE>(x, y, n, sink{ws.host_state, ws.host_status, ws.host_done, ticket},
                                                stream, ws);
  wait_for(ws.host_done, ticket, stream);
  std::atomic_thread_fence(std::memory_order_acquire);
  const long long* st = static_cast<const long long*>(ws.host_state);
  std::int64_t d[tuning::max_exact_digits];
  int count = static_cast<int>(st[0]);
  std::memcpy(d, st + exact::export_header, sizeof(std::int64_t) * count);
  if (!state_grid::place(d, count, static_cast<int>(st[1]), static_cast<unsigned>(st[2]), n, words))
    throw error(errc::cuda_error, "tally: an exported exact state does not lie on the common digit grid");
}

}  // namespace

void exact_state(reduce_op op, dtype t, const void* x, const void* y, std::int64_t n, std::int64_t* words,
                 stream_t stream, int device) {
  if (n == 0) return;
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  bool dot = op == reduce_op::dot, square = dot && x == y;
  auto go = [&](auto tag) {
    using T = decltype(tag);
    auto* xt = static_cast<const T*>(x);
    auto* yt = static_cast<const T*>(y);
    if (square) state_blocking<T, true, true>(xt, xt, n, words, stream, ws);
    else if (dot) state_blocking<T, true, false>(xt, yt, n, words, stream, ws);
    else state_blocking<T, false, false>(xt, xt, n, words, stream, ws);
  };
  if (t == dtype::float32) go(float{});
  else go(double{});
}

void exact_state_async(reduce_op op, dtype t, const void* x, const void* y, std::int64_t n,
                       std::int64_t* words_device, stream_t stream, int device) {
  device_guard guard(device);
  if (n == 0) {
    TALLY_CUDA(cudaMemsetAsync(words_device, 0, state_grid::kSize * sizeof(std::int64_t), stream));
    return;
  }
  workspace& ws = get_workspace(stream);
  enqueue_state_any(op, t, x, y, n, reinterpret_cast<long long*>(words_device), stream, ws);
}

namespace tuning {
namespace {
std::atomic<int> certified_state{-1}, variant_state{-1}, one_pass_state{-1};
}
bool exact_certified() noexcept { return env_switch(certified_state, "TALLY_EXACT_CERTIFIED"); }
void set_exact_certified(bool on) noexcept { certified_state.store(on ? 1 : 0, std::memory_order_relaxed); }
int certified_variant() noexcept {
  return env_setting(variant_state, "TALLY_CERTIFIED_VARIANT",
                     [](const char* e) { return e && *e >= '0' && *e <= '6' && e[1] == 0 ? *e - '0' : 0; });
}
void set_certified_variant(int v) noexcept { variant_state.store(v >= 0 && v <= 6 ? v : 0, std::memory_order_relaxed); }
bool var_one_pass() noexcept {
  return env_setting(one_pass_state, "TALLY_VAR_ONE_PASS", [](const char* e) { return e && e[0] == '0' && e[1] == 0 ? 0 : 1; }) == 1;
}
void set_var_one_pass(bool on) noexcept { one_pass_state.store(on ? 1 : 0, std::memory_order_relaxed); }
}  // namespace tuning

bool last_exact_was_certified(stream_t stream, int device) {
  device_guard guard(device);
  workspace& ws = get_workspace(stream);
  unsigned g = 1;
  TALLY_CUDA(cudaMemcpyAsync(&g, ws.exact_flags + 5, sizeof g, cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA(cudaStreamSynchronize(stream));
  return (g & 1u) == 0;  // certified::gate_word
}

}  // namespace tally::cuda
