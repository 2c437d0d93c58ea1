// Block and grid level: combine a block's accumulators (CUB BlockReduce: warp shuffles, then
// shared memory), and let the last block to finish combine the block partials, so the whole
// reduction is one launch with nothing finished on the host.
#pragma once

#include <cub/block/block_reduce.cuh>
#include <type_traits>

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
/// Shuffle of any accumulator made of 32-bit words (lane + d's value; the lanes past the
/// warp's end get their own).
template <class A> __device__ __forceinline__ A shfl_down(const A& v, int d) {
  static_assert(sizeof(A) % 4 == 0);
  constexpr int N = sizeof(A) / 4;
  unsigned w[N];
  words_of(v, w);
#pragma unroll
  for (int i = 0; i < N; ++i) w[i] = __shfl_down_sync(0xffffffffu, w[i], d);
  return from_words<A>(w);
}

/// A block's total in thread 0 by two shuffle trees (lanes within each warp, then the warps'
/// totals within warp 0), in a fixed order: log2(BLOCK) combines on the critical path where
/// CUB's warp-reductions algorithm has the first thread combine the warps' totals one after
/// another (7 more for 8 warps). For accumulators whose combine is long (the certified
/// states' TwoSums). `temp`: BLOCK / 32 accumulators of shared memory.
template <class R, int BLOCK>
__device__ __forceinline__ typename R::acc_t block_tree_reduce(typename R::acc_t a, typename R::acc_t* temp) {
  static_assert(BLOCK % 32 == 0 && BLOCK / 32 <= 32);
  constexpr int W = BLOCK / 32;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) {
    auto b = shfl_down(a, d);
    if (lane + d < 32) a = R::combine(a, b);
  }
  if constexpr (W > 1) {
    if (lane == 0) temp[warp] = a;
    __syncthreads();
    if (warp == 0) {
      a = lane < W ? temp[lane] : R::identity();
      // The tree spans W rounded up to a power of two (W / 2 would drop warps' totals when
      // W is not a power of two: for W = 3 lane 2 was never merged); lanes from W on are absent.
      constexpr int P = W <= 2 ? 2 : W <= 4 ? 4 : W <= 8 ? 8 : W <= 16 ? 16 : 32;
#pragma unroll
      for (int d = P / 2; d >= 1; d /= 2) {
        auto b = shfl_down(a, d);
        if (lane + d < W) a = R::combine(a, b);
      }
    }
    __syncthreads();  // temp may be reused
  }
  return a;
}

/// TREE: block_tree_reduce instead of CUB's BlockReduce (for long combines).
template <class R, int BLOCK, bool TREE = false>
__device__ __forceinline__ bool grid_total(typename R::acc_t acc, typename R::acc_t* partials,
                                           unsigned* counter, typename R::acc_t& total) {
  using acc_t = typename R::acc_t;
  using block_reduce = cub::BlockReduce<acc_t, BLOCK, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
  // Raw storage: accumulators with default member initialisers cannot be __shared__ objects.
  using temp_t = std::conditional_t<TREE, cub::Uninitialized<acc_t[BLOCK / 32]>, typename block_reduce::TempStorage>;
  __shared__ temp_t temp;
  __shared__ bool is_last;
  auto reduce = [&](const acc_t& a) {
    if constexpr (TREE) return block_tree_reduce<R, BLOCK>(a, temp.Alias());
    else return block_reduce(temp).Reduce(a, combine_fn<R>{});
  };

  acc_t block_total = reduce(acc);
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
      if constexpr (TREE) {  // long combines: skip the identities (a first partial is taken as is)
        if (i == threadIdx.x) acc = v[0];
        else acc = R::combine(acc, v[0]);
#pragma unroll
        for (int k = 1; k < K; ++k)
          if (i + k * BLOCK < gridDim.x) acc = R::combine(acc, v[k]);
      } else {
#pragma unroll
        for (int k = 0; k < K; ++k) acc = R::combine(acc, v[k]);
      }
    }
    __syncthreads();  // temp is reused
    block_total = reduce(acc);
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
