// Block and grid level: combine a block's accumulators (CUB BlockReduce: warp shuffles, then
// shared memory), and let the last block to finish combine the block partials, so the whole
// reduction is one launch with nothing finished on the host.
#pragma once

#include <cub/block/block_reduce.cuh>

#include "cuda/thread.cuh"

namespace tally::cuda {

/// Where a reduction's value goes: `value` (device or mapped host memory), the integer
/// overflow status (if not null), and, for blocking calls, a completion word in mapped host
/// memory that is set to `ticket` after value and status are visible to the host.
template <class Res> struct result_sink {
  Res* value;
  int* status;
  volatile unsigned* done;
  unsigned ticket;
};

template <class R> struct combine_fn {
  __device__ __forceinline__ typename R::acc_t operator()(const typename R::acc_t& a,
                                                          const typename R::acc_t& b) const {
    return R::combine(a, b);
  }
};

/// Combines every thread's `acc` across the grid: returns true in exactly one thread (thread
/// 0 of the last block to finish), which receives the grid's total in `total`.
///
/// partials: (gridDim.x,) accumulators, device scratch. counter: a device word that is 0 on
/// entry and is left 0 on exit (the finishing thread resets it), so the workspace is reusable
/// by the next launch on the same stream. The order of combination is fixed for a given grid
/// size, so the result is deterministic for a given launch shape.
template <class R, int BLOCK>
__device__ __forceinline__ bool grid_total(typename R::acc_t acc, typename R::acc_t* partials,
                                           unsigned* counter, typename R::acc_t& total) {
  using acc_t = typename R::acc_t;
  using block_reduce = cub::BlockReduce<acc_t, BLOCK, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
  __shared__ typename block_reduce::TempStorage temp;
  __shared__ bool is_last;

  acc_t block_total = block_reduce(temp).Reduce(acc, combine_fn<R>{});
  if (gridDim.x > 1) {
    if (threadIdx.x == 0) {
      partials[blockIdx.x] = block_total;
      __threadfence();  // the partial is visible grid-wide before the ticket is taken
      unsigned ticket = atomicAdd(counter, 1u);
      is_last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last) return false;
    __threadfence();
    // Up to 8 blocks per SM means a few partials per thread: issue their loads together
    // so the last block waits for one L2 round trip, not one per partial.
    constexpr int K = 4;
    acc = R::identity();
    for (unsigned i = threadIdx.x; i < gridDim.x; i += K * BLOCK) {
      acc_t v[K];
#pragma unroll
      for (int k = 0; k < K; ++k) {
        unsigned j = i + k * BLOCK;
        v[k] = j < gridDim.x ? load_cg(partials + j) : R::identity();
      }
#pragma unroll
      for (int k = 0; k < K; ++k) acc = R::combine(acc, v[k]);
    }
    __syncthreads();  // temp is reused
    block_total = block_reduce(temp).Reduce(acc, combine_fn<R>{});
  }
  if (threadIdx.x != 0) return false;
  if (gridDim.x > 1) *counter = 0;
  total = block_total;
  return true;
}

/// grid_total, then one thread writes R::finalize(total) to the sink (and the overflow
/// status, and the completion ticket).
template <class R, int BLOCK>
__device__ __forceinline__ void grid_finish(typename R::acc_t acc, typename R::acc_t* partials,
                                            unsigned* counter,
                                            result_sink<typename R::result_t> out) {
  typename R::acc_t total;
  if (!grid_total<R, BLOCK>(acc, partials, counter, total)) return;
  int st = 0;
  *out.value = R::finalize(total, st);
  if (out.status) *out.status = st;
  if (out.done) {
    __threadfence_system();  // value and status reach the host before the ticket
    *out.done = out.ticket;
  }
}

}  // namespace tally::cuda
