// CUDA kernels of the shape layer: per-row, per-column, per-segment and strided reductions in
// fast mode, integer sums and means, min/max/argmin/argmax. Deterministic: every combination
// happens in a fixed order (warp butterflies, CUB block reductions, partials combined in tile
// order); no floating atomics.
//
//  - shapes_warp_kernel: one warp per output. An output of at most kTile elements is read by
//    its warp directly (lane-strided, kUnroll loads in flight per lane); a longer one was cut
//    into tiles by shapes_tile_kernel, and its warp combines the tile partials in tile order.
//  - shapes_tile_kernel: the flat element range [0, n) in tiles of kTile; one block per tile.
//    Only outputs longer than kTile are reduced here, and a tile meets at most two of them
//    (one holding its first element, one its last), so each tile writes at most two partials.
//    A tile whose two ends lie in short outputs returns after two binary searches.
//  - shapes_col_kernel / shapes_col_finish: column reductions (the outputs are the closer
//    elements, e.g. the columns of a row-major matrix): each thread owns one output and walks
//    its rows, so a warp reads 32 adjacent elements per row (coalesced); tall matrices are
//    split into row chunks across gridDim.y, whose partials the finish kernel combines in
//    chunk order.
//  - shapes_check_offsets: CSR offsets in device memory are checked first; every kernel after
//    it returns at once if they broke the rules.
#pragma once

#include <cub/block/block_reduce.cuh>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "cuda/block.cuh"
#include "shapes_widen.hpp"
#include "tally/ops/certified.hpp"
#include "tally/ops/exact.hpp"
#include "tally/ops/extremes.hpp"
#include "tally/ops/reducers.hpp"

namespace tally::cuda::shapes_k {

inline constexpr int kBlock = 256;
inline constexpr std::int64_t kTile = 8192;  // elements per tile; outputs longer than this are split
inline constexpr int kUnroll = 4;
inline constexpr long long kNone = 0x7f7f7f7f7f7f7f7fLL;  // "no error" (memset byte 0x7f)

/// Where each output's elements are: uniform (o * outer + k * inner, flat begin o * len) or
/// CSR segments (off[o] + k, contiguous).
struct geo {
  const void* x;
  const std::int64_t* off;
  std::int64_t outputs, len, outer, inner, n;
  __device__ __forceinline__ std::int64_t begin(std::int64_t o) const { return off ? off[o] : o * len; }
  __device__ __forceinline__ std::int64_t length(std::int64_t o) const { return off ? off[o + 1] - off[o] : len; }
  __device__ __forceinline__ std::int64_t addr(std::int64_t o, std::int64_t k) const {
    return off ? off[o] + k : o * outer + k * inner;
  }
  /// The output holding flat element f (f < n): the last o with begin(o) <= f (non-empty).
  __device__ __forceinline__ std::int64_t output_of(std::int64_t f) const {
    if (!off) return f / len;
    std::int64_t lo = 0, hi = outputs - 1;  // off[lo] <= f always (off[0] == 0)
    while (lo < hi) {
      std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (off[mid] <= f) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
};

template <class Op> struct combine_op {
  __device__ __forceinline__ typename Op::acc operator()(const typename Op::acc& a, const typename Op::acc& b) const {
    return Op::combine(a, b);
  }
};

// ---- ops: identity, accumulate(acc, x, k), combine, write(o, acc, len) ------------------------

/// Fast floating sum: float64 accumulator, rounded to Out once.
template <class T, class Out> struct fast_sum {
  using elem = T;
  using acc = double;
  Out* out;
  long long* ovf;
  static __device__ __forceinline__ acc identity() { return -0.0; }
  static __device__ __forceinline__ void accumulate(acc& a, T x, std::int64_t) { a += static_cast<double>(x); }
  static __device__ __forceinline__ acc combine(acc a, acc b) { return a + b; }
  __device__ void write(std::int64_t o, acc a, std::int64_t len) const { out[o] = len == 0 ? Out(0) : static_cast<Out>(a); }
};

/// Exact floating sum or mean (MEAN), first pass (tuning::shapes_certified): each output's
/// sum carried in K doubles with a running error bound (ops::certified: TwoSum/Fast2Sum
/// cascades, Ogita, Rump and Oishi 2005; K = 2 for elements of at most 24 significand bits,
/// 3 for float64; running error analysis, Higham 2002), then
/// rounded when it is known exactly (nothing rounded on the way: ties are then rounded to
/// even too) or the bound proves the correctly rounded value (ops::certified::round_state,
/// divide_state): the bits of the exact path (src/cuda/shapes_exact.cuh) and of the CPU
/// backend. An output it cannot prove (ties and zeros not known exactly, condition numbers
/// past roughly 2^100 with K = 3 and 2^80 / length with K = 2, NaN, infinities, float64
/// overflow) is written nowhere and recorded in the overflow status word (the first such
/// output), and the caller then runs the exact path for every output. Empty outputs: +0 (sum), NaN (mean), as the
/// exact path writes them.
template <class T, class Out, bool MEAN> struct certified_sum {
  using elem = T;
  using acc = ops::certified::state;
  /// The state's levels (ops::certified::add): 2 for elements of at most 24 significand bits
  /// (float32 in the shape layer), hi error-free and lo inexact, its error counted in the
  /// bound (the 1-D pass's float32 choice); 3 for float64. The certificate holds for either:
  /// only how often it fails (and the exact path runs) depends on K. mid stays 0 with K = 2
  /// but the state keeps its 32 bytes: a 24-byte state was up to 22% slower on rows and long
  /// segments (run 106, docs/performance.md).
  static constexpr int K = sizeof(T) <= 4 ? 2 : 3;
  Out* out;
  long long* ovf;
  static __device__ __forceinline__ acc identity() { return acc{}; }
  static __device__ __forceinline__ void accumulate(acc& a, T x, std::int64_t) {
    ops::certified::add<K, true>(a, static_cast<double>(x));
  }
  /// Four float32 terms as one exact term when their exponents allow (ops::certified::add4:
  /// one state update instead of four; run 58's ncu found the pass issue-bound, 33
  /// instructions an element, 12.7 of them float64).
  static __device__ __forceinline__ void accumulate_vector(acc& a, const T (&v)[4])
    requires std::is_same_v<T, float>
  {
    ops::certified::add4<K, true>(a, v[0], v[1], v[2], v[3]);
  }
  /// N float32 terms (the U vectors a lane has in flight: N = 4 U) as one exact term when
  /// their exponents allow (ops::certified::add_n: one state update per N elements); false
  /// when they do not, a left unchanged (the caller then folds them vector by vector).
  static constexpr bool vector_terms = std::is_same_v<T, float>;
  /// One float64 term known to be an exact sum of elements (a column's running sum,
  /// ops::certified::running).
  static __device__ __forceinline__ void accumulate_term(acc& a, double t) { ops::certified::add<K, true>(a, t); }
  template <int N> static __device__ __forceinline__ bool accumulate_vectors(acc& a, const float (&v)[N]) {
    return ops::certified::add_n<K, true>(a, v);
  }
  static __device__ __forceinline__ acc combine(acc a, acc b) { return ops::certified::merge<K>(a, b); }
  __device__ void write(std::int64_t o, acc a, std::int64_t len) const {
    Out r;
    bool ok = true;
    if (len == 0) {
      r = !MEAN ? Out(0)
          : sizeof(Out) == 8 ? static_cast<Out>(ops::exact::double_of(std::uint64_t(0x7ff8) << 48))
                             : static_cast<Out>(ops::exact::float_of(0x7fc00000u));
    } else if constexpr (MEAN) {
      ok = ops::certified::divide_state(a, static_cast<std::uint64_t>(len), r);
    } else {
      ok = ops::certified::round_state(a, r);
    }
    if (ok) out[o] = r;
    else atomicMin(ovf, static_cast<long long>(o));
  }
};

/// Integer sum: exact 128-bit accumulator, checked narrowing to int64 (overflow: the first
/// such output is recorded).
template <class T> struct int_sum {
  using elem = T;
  using acc = ops::i128;
  std::int64_t* out;
  long long* ovf;
  bool to_u64 = false;  // a uint64 result (unsigned data): 0 <= sum < 2^64
  bool biased = false;  // uint64 data read as x - 2^63 (src/shapes_widen.hpp): len * 2^63 added back
  static __device__ __forceinline__ acc identity() { return 0; }
  static __device__ __forceinline__ void accumulate(acc& a, T x, std::int64_t) { a += x; }
  static __device__ __forceinline__ acc combine(acc a, acc b) { return a + b; }
  __device__ void write(std::int64_t o, acc a, std::int64_t len) const {
    if (biased) a += static_cast<acc>(len) * (static_cast<acc>(1) << 63);
    int st = 0;
    if (to_u64) {
      st = a >= 0 && (a >> 64) == 0 ? 0 : 1;
      reinterpret_cast<std::uint64_t*>(out)[o] = st ? 0 : static_cast<std::uint64_t>(a);
    } else {
      out[o] = ops::narrow_i64(a, st);
    }
    if (st) atomicMin(ovf, static_cast<long long>(o));
  }
};

/// Integer mean: the exact 128-bit sum divided by the count, correctly rounded (ops::exact).
template <class T, class Out> struct int_mean {
  using elem = T;
  using acc = ops::i128;
  Out* out;
  long long* ovf;
  bool biased = false;  // uint64 data read as x - 2^63: len * 2^63 added back
  static __device__ __forceinline__ acc identity() { return 0; }
  static __device__ __forceinline__ void accumulate(acc& a, T x, std::int64_t) { a += x; }
  static __device__ __forceinline__ acc combine(acc a, acc b) { return a + b; }
  __device__ void write(std::int64_t o, acc a, std::int64_t len) const {
    if (biased) a += static_cast<acc>(len) * (static_cast<acc>(1) << 63);
    if (len == 0) {
      out[o] = std::numeric_limits<Out>::quiet_NaN();
      return;
    }
    std::int64_t d[5];
    auto u = static_cast<ops::u128>(a);
    for (int i = 0; i < 4; ++i) d[i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(u >> (32 * i)) & 0xffffffffu);
    d[4] = a < 0 ? -1 : 0;
    out[o] = ops::exact::divide_round<Out>(d, 5, 0, ops::exact::seen_not_neg_zero, static_cast<std::uint64_t>(len));
  }
};

/// min / max and the first index within the output.
template <class T, bool MAX, bool SKIP> struct extreme {
  using elem = T;
  using R = ops::extreme_reducer<T, MAX, SKIP>;
  using acc = typename R::acc_t;
  T* values;
  std::int64_t* index;
  shapes::store as = shapes::store::same;  // widened data: values written as the caller's type
  static __device__ __forceinline__ acc identity() { return R::identity(); }
  static __device__ __forceinline__ void accumulate(acc& a, T x, std::int64_t k) { R::accumulate(a, x, k); }
  static __device__ __forceinline__ acc combine(acc a, acc b) { return R::combine(a, b); }
  __device__ void write(std::int64_t o, acc a, std::int64_t len) const {
    int st = 0;
    auto r = R::finalize(a, st);
    T v = r.value;
    std::int64_t i = r.index;
    if (i == ops::kNoIndex) {
      i = -1;
      if constexpr (!std::numeric_limits<T>::is_integer)
        if (len > 0) v = std::numeric_limits<T>::quiet_NaN();
    }
    if (values) shapes::put_value(values, o, as, v);
    if (index) index[o] = i;
  }
};

/// Whether an op's write never records an overflow (status word 1), so that a launch over it
/// may end without v3::block_done (v3::finish::check_end): the fast sums, the integer means
/// and the extremes. The others may (the certified sums, the integer sums); an op type may
/// say so itself with a `no_overflow` member (narrow_k::narrow_op).
template <class Op> struct never_overflows : std::false_type {};
template <class T, class Out> struct never_overflows<fast_sum<T, Out>> : std::true_type {};
template <class T, class Out> struct never_overflows<int_mean<T, Out>> : std::true_type {};
template <class T, bool MAX, bool SKIP> struct never_overflows<extreme<T, MAX, SKIP>> : std::true_type {};
template <class Op> constexpr bool op_never_overflows() {
  if constexpr (requires { Op::no_overflow; }) return Op::no_overflow;
  else return never_overflows<Op>::value;
}

// ---- kernels ----------------------------------------------------------------------------------

/// bad = the first i in [0, segments] where the offsets break the rules. (static: one copy per
/// translation unit that launches it, shapes.cu and shapes_exact.cu.)
static __global__ void shapes_check_offsets(const std::int64_t* off, std::int64_t segments, std::int64_t n, long long* bad) {
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i > segments) return;
  bool ok = i == 0 ? off[0] == 0 : off[i] >= off[i - 1];
  if (i == segments) ok = ok && off[i] == n;
  if (!ok) atomicMin(bad, static_cast<long long>(i));
}

/// Column mode's row chunks (host): about `want` chunks of at least `min_rows` rows each (at
/// most 65,535, a grid's y extent) over `len` rows; sets the chunk length and the chunk count
/// that length gives. Depends only on its arguments, so the combination order does too.
inline void row_chunks(std::int64_t len, std::int64_t want, std::int64_t min_rows, std::int64_t& chunks,
                       std::int64_t& chunk) {
  chunks = want < 1 ? 1 : want;
  const std::int64_t most = len / min_rows < 1 ? 1 : len / min_rows;
  chunks = chunks > most ? most : chunks;
  chunks = chunks > 65535 ? 65535 : chunks;
  chunk = (len + chunks - 1) / chunks < 1 ? 1 : (len + chunks - 1) / chunks;
  chunks = len == 0 ? 1 : (len + chunk - 1) / chunk;
}

/// The status words of a call ("none" = kNone) as a stream-ordered call reports them: -1 for none.
__device__ __forceinline__ long long reported(long long w) { return w == kNone ? -1 : w; }

/// Copies a call's two status words to a stream-ordered call's status (device memory).
static __global__ void shapes_export_status(const long long* status, long long* out) {
  if (threadIdx.x < 2) out[threadIdx.x] = reported(status[threadIdx.x]);
}

/// Enqueues the offsets check of a segmented call (g.off set) on `stream`: status[0]
/// (0x7f-filled before) receives the first bad index. Returns the pointer the kernels after
/// it test (nullptr when the call is not segmented: nothing to check).
static inline const long long* check_offsets(const geo& g, long long* status, cudaStream_t stream) {
  if (g.off == nullptr) return nullptr;
  unsigned blocks = static_cast<unsigned>((g.outputs + 1 + kBlock - 1) / kBlock);
  shapes_check_offsets<<<blocks, kBlock, 0, stream>>>(g.off, g.outputs, g.n, status);
  return status;
}

/// Folds elements [k0, k1) of output o into a, kUnroll loads in flight, stride `step`
/// starting at k0 + first.
template <class Op>
__device__ __forceinline__ void fold_range(typename Op::acc& a, const geo& g, std::int64_t o, std::int64_t k0,
                                           std::int64_t k1, int first, int step) {
  using T = typename Op::elem;
  const T* x = static_cast<const T*>(g.x);
  std::int64_t k = k0 + first;
  for (; k + (kUnroll - 1) * step < k1; k += kUnroll * step) {
    T v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x + g.addr(o, k + u * step));
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) Op::accumulate(a, v[u], k + u * step);
  }
  for (; k < k1; k += step) Op::accumulate(a, __ldg(x + g.addr(o, k)), k);
}

/// Partials of long outputs: tiles (kTile flat elements), two slots each.
template <class Op>
__global__ void __launch_bounds__(kBlock) shapes_tile_kernel(geo g, typename Op::acc* partials, const long long* bad) {
  using A = typename Op::acc;
  using block_reduce = cub::BlockReduce<A, kBlock, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
  __shared__ typename block_reduce::TempStorage temp;
  if (bad && *bad != kNone) return;
  const std::int64_t t = blockIdx.x;
  const std::int64_t f0 = t * kTile, f1 = f0 + kTile < g.n ? f0 + kTile : g.n;
  const std::int64_t sa = g.output_of(f0), sb = g.output_of(f1 - 1);
  for (int slot = 0; slot < 2; ++slot) {
    std::int64_t s = slot == 0 ? sa : sb;
    if (slot == 1 && sb == sa) break;
    std::int64_t b = g.begin(s), len = g.length(s);
    if (len <= kTile) continue;
    std::int64_t lo = (b > f0 ? b : f0) - b, hi = (b + len < f1 ? b + len : f1) - b;
    A a = Op::identity();
    fold_range<Op>(a, g, s, lo, hi, threadIdx.x, kBlock);
    A total = block_reduce(temp).Reduce(a, combine_op<Op>{});
    if (threadIdx.x == 0) partials[2 * t + slot] = total;
    __syncthreads();  // temp is reused
  }
}

/// One warp per output: direct for short outputs, the tile partials for long ones.
template <class Op>
__global__ void __launch_bounds__(kBlock) shapes_warp_kernel(geo g, Op op, const typename Op::acc* partials,
                                                             const long long* bad) {
  using A = typename Op::acc;
  if (bad && *bad != kNone) return;
  const int lane = threadIdx.x & 31;
  const std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * (kBlock / 32) + threadIdx.x / 32;
  if (o >= g.outputs) return;
  const std::int64_t len = g.length(o);
  A a = Op::identity();
  if (len <= kTile) {
    fold_range<Op>(a, g, o, 0, len, lane, 32);
  } else {
    const std::int64_t b = g.begin(o), t0 = b / kTile, t1 = (b + len - 1) / kTile;
    for (std::int64_t t = t0 + lane; t <= t1; t += 32) {
      int slot = (t == t0 && b > t0 * kTile) ? 1 : 0;
      a = Op::combine(a, partials[2 * t + slot]);
    }
  }
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) a = Op::combine(a, shfl_down(a, d));
  if (lane == 0) op.write(o, a, len);
}

/// Column mode: thread per output, rows [y * chunk, (y + 1) * chunk) of gridDim.y chunks.
template <class Op>
__global__ void __launch_bounds__(kBlock) shapes_col_kernel(geo g, Op op, std::int64_t chunk, typename Op::acc* partials) {
  using A = typename Op::acc;
  using T = typename Op::elem;
  const std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (o >= g.outputs) return;
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t k1 = k0 + chunk < g.len ? k0 + chunk : g.len;
  const T* x = static_cast<const T*>(g.x) + o * g.outer;
  A a = Op::identity();
  std::int64_t k = k0;
  for (; k + kUnroll <= k1; k += kUnroll) {
    T v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x + (k + u) * g.inner);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) Op::accumulate(a, v[u], k + u);
  }
  for (; k < k1; ++k) Op::accumulate(a, __ldg(x + k * g.inner), k);
  if (gridDim.y == 1) op.write(o, a, g.len);
  else partials[static_cast<std::int64_t>(blockIdx.y) * g.outputs + o] = a;
}

template <class Op>
__global__ void __launch_bounds__(kBlock) shapes_col_finish(geo g, Op op, int chunks, const typename Op::acc* partials) {
  const std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (o >= g.outputs) return;
  typename Op::acc a = Op::identity();
  for (int c = 0; c < chunks; ++c) a = Op::combine(a, partials[static_cast<std::int64_t>(c) * g.outputs + o]);
  op.write(o, a, g.len);
}

}  // namespace tally::cuda::shapes_k
