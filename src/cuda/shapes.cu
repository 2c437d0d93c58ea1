// Launch layer of the shape kernels (src/cuda/shapes.cuh): picks the mode, sizes the grids,
// allocates stream-ordered scratch (partials, status words, and results bound for host
// memory), checks device offsets on the GPU, and reports overflow and bad offsets back.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <type_traits>

#include "cuda/check.hpp"
#include "cuda/shapes.cuh"
#include "cuda/shapes_exact.hpp"
#include "cuda/shapes_launch.cuh"
#include "cuda/shapes_narrow.hpp"
#include "cuda/shapes_scratch.hpp"
#include "cuda/shapes_tuning.hpp"
#include "cuda/shapes_v3.cuh"
#include "cuda/workspace.hpp"
#include "shapes_backend.hpp"

namespace tally::cuda {
namespace {

using namespace shapes_k;
using namespace shapes_launch;
using tally::shapes::geometry;
using tally::shapes::kind;
using tally::shapes::outcome;
using tally::shapes::request;

template <class Op, class Make>
void launch(const geometry& g, const request& r, outcome& st, cudaStream_t stream, Make&& make) {
  using A = typename Op::acc;
  const bool segmented = g.offsets != nullptr;
  const bool column_mode = !segmented && g.outputs > 1 && std::llabs(g.outer) < std::llabs(g.inner);
  // v2 / v3 (tuning::shapes_vector_loads, default on): columns, and rows and segments whose
  // elements are contiguous from an element-aligned base, by the fused v3 launch
  // (shapes_launch.cuh); the rest, strided or misaligned rows, by the v1 kernels below, with
  // the cached scratch. TALLY_SHAPES_V2=0: v1 for everything.
  const bool v2 = tuning::shapes_vector_loads();
  if (v2) {
    const bool contiguous_rows = !column_mode && (segmented || g.inner == 1) &&
                                 reinterpret_cast<std::uintptr_t>(g.x) % sizeof(typename Op::elem) == 0;
    if (column_mode || contiguous_rows) return launch_v3<Op>(g, r, st, stream, make, column_mode);
  }
  geo d{g.x, g.offsets, g.outputs, g.len, g.outer, g.inner, g.n};
  const std::int64_t tile = kTile;

  // Scratch: [bad, ovf] status words, the partials, and results bound for host memory.
  std::int64_t tiles = 0, chunks = 1, chunk = g.len;
  if (column_mode) {
    const std::int64_t gx = (g.outputs + kBlock - 1) / kBlock;
    row_chunks(g.len, (8LL * sm_count() + gx - 1) / gx, 64, chunks, chunk);  // a few waves
  } else if (g.n > 0 && (segmented || g.len > tile)) {
    tiles = (g.n + tile - 1) / tile;
  }
  const std::size_t out_bytes = r.out_on_host && r.out ? dtype_size(r.out_type) * g.outputs : 0;
  const std::size_t idx_bytes = r.out_on_host && r.index ? sizeof(std::int64_t) * g.outputs : 0;
  const std::size_t part_count = column_mode ? (chunks > 1 ? chunks * g.outputs : 0) : 2 * tiles;
  const std::size_t s_part = round_up(2 * sizeof(long long));
  const std::size_t s_out = s_part + round_up(part_count * sizeof(A));
  const std::size_t s_idx = s_out + round_up(out_bytes);
  const std::size_t total = s_idx + round_up(idx_bytes);
  scratch_lease lease(total, stream, v2);  // v2: the cached scratch, this call's until its sync
  char* scratch = lease.data();
  auto* status = reinterpret_cast<long long*>(scratch);
  auto* partials = reinterpret_cast<A*>(scratch + s_part);
  void* out = out_bytes ? scratch + s_out : r.out;
  std::int64_t* index = idx_bytes ? reinterpret_cast<std::int64_t*>(scratch + s_idx) : r.index;
  TALLY_CUDA(cudaMemsetAsync(status, 0x7f, 2 * sizeof(long long), stream));
  Op op = make(out, index, status + 1);

  const long long* bad = check_offsets(d, status, stream);
  TALLY_CUDA(cudaGetLastError());
  if (column_mode) {
    dim3 grid(static_cast<unsigned>((g.outputs + kBlock - 1) / kBlock), static_cast<unsigned>(chunks));
    shapes_col_kernel<Op><<<grid, kBlock, 0, stream>>>(d, op, chunk, partials);
    TALLY_CUDA(cudaGetLastError());
    if (chunks > 1) {
      shapes_col_finish<Op><<<grid.x, kBlock, 0, stream>>>(d, op, static_cast<int>(chunks), partials);
      TALLY_CUDA(cudaGetLastError());
    }
  } else {
    if (tiles > 0) {
      shapes_tile_kernel<Op><<<static_cast<unsigned>(tiles), kBlock, 0, stream>>>(d, partials, bad);
      TALLY_CUDA(cudaGetLastError());
    }
    unsigned blocks = static_cast<unsigned>((g.outputs + kBlock / 32 - 1) / (kBlock / 32));
    shapes_warp_kernel<Op><<<blocks, kBlock, 0, stream>>>(d, op, partials, bad);
    TALLY_CUDA(cudaGetLastError());
  }
  if (r.stream_ordered) {  // the status words to the caller's memory, in stream order
    if (r.status_device) shapes_export_status<<<1, 32, 0, stream>>>(status, reinterpret_cast<long long*>(r.status_device));
    TALLY_CUDA(cudaGetLastError());
    return;
  }
  long long words[2];
  TALLY_CUDA(cudaMemcpyAsync(words, status, sizeof words, cudaMemcpyDeviceToHost, stream));
  if (out_bytes) TALLY_CUDA(cudaMemcpyAsync(r.out, out, out_bytes, cudaMemcpyDeviceToHost, stream));
  if (idx_bytes) TALLY_CUDA(cudaMemcpyAsync(r.index, index, idx_bytes, cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA(cudaStreamSynchronize(stream));
  st.bad_offset_at = words[0] == kNone ? -1 : words[0];
  st.overflow_at = words[1] == kNone ? -1 : words[1];
}

// `as`: the caller's element type when g is a widened copy (src/shapes_widen.hpp).
template <class T>
void run_t(const geometry& g, const request& r, outcome& st, cudaStream_t s, tally::shapes::store as = tally::shapes::store::same) {
  if (r.what == kind::extreme) {
    bool mx = r.eop == extreme_op::max, skip = r.nans == nan_policy::omit;
    auto mk = [&]<class Op>() {
      launch<Op>(g, r, st, s, [as](void* out, std::int64_t* idx, long long*) { return Op{static_cast<T*>(out), idx, as}; });
    };
    if (mx && skip) mk.template operator()<extreme<T, true, true>>();
    else if (mx) mk.template operator()<extreme<T, true, false>>();
    else if (skip) mk.template operator()<extreme<T, false, true>>();
    else mk.template operator()<extreme<T, false, false>>();
    return;
  }
  auto mk = [&]<class Op, class Out>() {
    launch<Op>(g, r, st, s, [](void* out, std::int64_t*, long long* ovf) { return Op{static_cast<Out*>(out), ovf}; });
  };
  if constexpr (std::is_integral_v<T>) {
    const bool biased = as == tally::shapes::store::u64, to_u64 = r.out_type == dtype::uint64;
    auto mk_int = [&]<class Op, class Out>(auto... flags) {
      launch<Op>(g, r, st, s, [=](void* out, std::int64_t*, long long* ovf) { return Op{static_cast<Out*>(out), ovf, flags...}; });
    };
    if (r.what == kind::mean) {
      if (r.out_type == dtype::float32) mk_int.template operator()<int_mean<T, float>, float>(biased);
      else mk_int.template operator()<int_mean<T, double>, double>(biased);
    } else {
      mk_int.template operator()<int_sum<T>, std::int64_t>(to_u64, biased);
    }
  } else if (r.what == kind::mean || r.acc == accuracy::exact) {  // src/cuda/shapes_exact.cu
    // (tuning::shapes_certified: the certified pass first, in the fast kernels; the exact
    // path behind it only when some output was not proved. Blocking forms: the host reads the
    // pass's verdict; stream-ordered ones (with a status word): the exact kernels read it on
    // the device, from the caller's status words, and return at once when every output was
    // proved. Column mode too since the eighteenth session: its four 32-byte states per lane
    // fit 80 registers with each output's four rows in flight taken as one term, add4, and
    // one row of partials loaded at a time when chunks combine)
    // Other columns (float64, or not read as vectors) through the pass only where it measured
    // faster than the exact kernels (eighteenth session, float32 with add4): from
    // 32 column blocks (32 V outputs each, V elements a 16-byte vector) to under one wave of
    // 3 blocks a SM, its row chunks then filling whole waves. 2^26 float32, stream-ordered
    // GB/s, pass / exact kernels: 8192 x 8192 (64 column blocks) 2724 / 2587 (run 65);
    // 65536 x 1024 (8: the last block of each column tile combines 48 chunks) 2047 / 2185;
    // 1024 x 65536 (512, more than a wave) 2545 / 2605 (run 63).
    const bool column_mode = g.offsets == nullptr && g.outputs > 1 && std::llabs(g.outer) < std::llabs(g.inner);
    const std::int64_t col_block = 32LL * (16 / static_cast<std::int64_t>(sizeof(T)));
    // Since the nineteenth session, float32 columns read as 16-byte vectors always go through
    // the pass (its running sums with the next rows loaded ahead, plan.col_run; run 68:
    // 3119 / 2651 / 3215 GB/s on the three shapes against the exact kernels' 2765 / 2307 / 2663).
    const int cert_cols = tuning::shapes_v3_params().cert_cols;
    const bool vec_f32 = std::is_same_v<T, float> && g.outer == 1 && g.inner > 0 && g.inner % 4 == 0 &&
                         reinterpret_cast<std::uintptr_t>(g.x) % 16 == 0;
    const bool skip_columns =
        column_mode && (cert_cols == 0 || (cert_cols < 0 && !vec_f32 &&
                                           (g.outputs < 32 * col_block || g.outputs >= col_block * 3 * sm_count())));
    if (tuning::shapes_certified() && (!r.stream_ordered || r.status_device) && !skip_columns) {
      outcome c;
      auto pass = [&]<class Out, bool MEAN>() {
        using Op = certified_sum<T, Out, MEAN>;
        launch<Op>(g, r, c, s, [](void* out, std::int64_t*, long long* ovf) { return Op{static_cast<Out*>(out), ovf}; });
      };
      const bool mean = r.what == kind::mean;
      if (r.out_type == dtype::float32) {
        if (mean) pass.template operator()<float, true>();
        else pass.template operator()<float, false>();
      } else {
        if (mean) pass.template operator()<double, true>();
        else pass.template operator()<double, false>();
      }
      if (r.stream_ordered) {  // the pass's status words are in r.status_device: the gate
        shapes_exact_run(g, r, st, s, reinterpret_cast<long long*>(r.status_device));
        return;
      }
      if (c.bad_offset_at >= 0 || c.overflow_at < 0) {  // offsets that break the rules (reported), or every output proved
        st.bad_offset_at = c.bad_offset_at;
        return;
      }
    }
    shapes_exact_run(g, r, st, s);
  } else {  // fast floating sums
    if (r.out_type == dtype::float32) mk.template operator()<fast_sum<T, float>, float>();
    else mk.template operator()<fast_sum<T, double>, double>();
  }
}

// A narrow element type (src/shapes_widen.hpp): its elements widened into a compact device
// copy (the (device, stream) cache's copy buffer, kept for later calls like the scratch), then
// the copy reduced as W. Contiguous sources aligned to 16 bytes: a thread converts 16 /
// sizeof(W) elements a step, one load and one 16-byte store (run 110 wrote the elements of
// one 16-byte load with several 16-byte stores a thread, 64 bytes apart across the warp:
// int8 24% slower than one element a thread); others one element a thread (source_map:
// 64-bit divisions for strided layouts).
// gate (exact half sums and means behind the certified pass in place, stream-ordered:
// run_widened_gated): the pass's status words on the device; the kernel waits for the grid
// before it (launched as its programmatic dependent; plainly, the wait returns at once), and
// writes nothing unless that pass refused an output over good offsets (gate[0] < 0 and
// gate[1] >= 0, shapes_exact.cuh skipped), so a closed gate costs its blocks one read.
template <class Src, class W>
__global__ void __launch_bounds__(kBlock) widen_kernel(const Src* x, W* copy, std::int64_t n, tally::shapes::source_map at,
                                                       bool vectors, const long long* gate = nullptr) {
  if (gate) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    if (gate[0] >= 0 || gate[1] < 0) return;
  }
  using L = std::conditional_t<std::is_same_v<Src, bool>, unsigned char, Src>;  // (bool: its byte)
  const L* xl = reinterpret_cast<const L*>(x);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  auto one = [&](const L& v) -> W {
    if constexpr (std::is_same_v<Src, bool>) return tally::shapes::widen_bool(v);
    else return tally::shapes::widen_one(v);
  };
  if (vectors) {
    // E elements a thread and step: one 16-byte store of the copy, from one load of E
    // sizeof(Src) bytes (4 for int8, 8 for the 16-bit types and uint32, 16 for uint64), so a
    // warp's loads and stores are both contiguous; 4 steps in flight together
    constexpr int E = 16 / static_cast<int>(sizeof(W));
    constexpr int LB = E * static_cast<int>(sizeof(Src));
    using chunk = std::conditional_t<LB == 4, unsigned, std::conditional_t<LB == 8, uint2, uint4>>;
    static_assert(sizeof(chunk) == LB);
    constexpr int U = 4;
    const std::int64_t nv = n / E;
    const chunk* xv = reinterpret_cast<const chunk*>(x);
    uint4* cv = reinterpret_cast<uint4*>(copy);
    auto convert = [&](const chunk& c) {
      L e[E];
      __builtin_memcpy(e, &c, LB);
      W w[E];
#pragma unroll
      for (int k = 0; k < E; ++k) w[k] = one(e[k]);
      uint4 o;
      __builtin_memcpy(&o, w, 16);
      return o;
    };
    std::int64_t v = first;
    for (; v + (U - 1) * stride < nv; v += U * stride) {
      chunk c[U];
#pragma unroll
      for (int u = 0; u < U; ++u) c[u] = __ldg(xv + v + u * stride);
#pragma unroll
      for (int u = 0; u < U; ++u) cv[v + u * stride] = convert(c[u]);
    }
    for (; v < nv; v += stride) cv[v] = convert(__ldg(xv + v));
    for (std::int64_t i = nv * E + first; i < n; i += stride) copy[i] = one(xl[i]);
    return;
  }
  for (std::int64_t i = first; i < n; i += stride) copy[i] = one(xl[at(i)]);
}

template <class Src, class W> void run_widened(const geometry& g, const request& r, outcome& st, cudaStream_t s) {
  copy_lease copy(std::max<std::size_t>(static_cast<std::size_t>(g.n) * sizeof(W), 256), s);
  if (g.n > 0) {
    const tally::shapes::source_map at(g);
    const bool vectors = at.contiguous && reinterpret_cast<std::uintptr_t>(g.x) % 16 == 0;
    const std::int64_t items = vectors ? g.n / (16 / static_cast<std::int64_t>(sizeof(W))) + 1 : g.n;
    const std::int64_t blocks = std::min<std::int64_t>((items + kBlock - 1) / kBlock, std::int64_t(16) * sm_count());
    widen_kernel<Src, W><<<static_cast<unsigned>(blocks), kBlock, 0, s>>>(static_cast<const Src*>(g.x), reinterpret_cast<W*>(copy.data()),
                                                                       g.n, at, vectors);
    TALLY_CUDA(cudaGetLastError());
  }
  run_t<W>(tally::shapes::compact(g, copy.data()), r, st, s, tally::shapes::store_of(g.type));
}

// Exact sums and means of float16 / bfloat16, stream-ordered, behind the certified pass that
// the caller (src/cuda/shapes_narrow.cu) ran in place with its status words in gate
// (r.status_device): the widened copy and the exact kernels over it, both gated on the device,
// so that they run only when the pass refused an output (a NaN, an infinity, or a sum too
// close to a rounding boundary for its bound) and the offsets were good. The copy's kernel
// is a programmatic dependent of the pass (sm_90, plan.pdl), the exact kernels of the copy's
// (shapes_exact_run): a closed gate costs two launches whose blocks read it and return.
// Grid: 4 blocks a SM looping, where the ungated copy takes up to 16 (a closed gate's blocks
// are then few; an open one is rare). The copy is leased before the pass is queued, so that a
// failure to allocate it throws with nothing queued.
template <class Src, class W>
void run_widened_gated(const geometry& g, const request& r, outcome& st, cudaStream_t s, const std::function<void()>& pass) {
  auto* gate = reinterpret_cast<long long*>(r.status_device);
  copy_lease copy(std::max<std::size_t>(static_cast<std::size_t>(g.n) * sizeof(W), 256), s);
  pass();
  if (g.n > 0) {
    const tally::shapes::source_map at(g);
    const bool vectors = at.contiguous && reinterpret_cast<std::uintptr_t>(g.x) % 16 == 0;
    const std::int64_t items = vectors ? g.n / (16 / static_cast<std::int64_t>(sizeof(W))) + 1 : g.n;
    const std::int64_t blocks = std::min<std::int64_t>((items + kBlock - 1) / kBlock, std::int64_t(4) * sm_count());
    constexpr auto kernel = widen_kernel<Src, W>;
    // (as the exact kernels behind it: sm_90 device code on a 9.0+ device, else a plain launch)
    const bool pdl = tuning::shapes_v3_params().pdl != 0 && dependent_launch_ok();
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t c{};
    c.gridDim = dim3(static_cast<unsigned>(blocks));
    c.blockDim = dim3(kBlock);
    c.stream = s;
    c.attrs = attr;
    c.numAttrs = pdl ? 1 : 0;
    TALLY_CUDA(cudaLaunchKernelEx(&c, kernel, static_cast<const Src*>(g.x), reinterpret_cast<W*>(copy.data()), g.n, at, vectors,
                                  static_cast<const long long*>(gate)));
  }
  shapes_exact_run(tally::shapes::compact(g, copy.data()), r, st, s, gate);
}

}  // namespace

void shapes_half_exact_gated(const geometry& g, const request& r, outcome& st, cudaStream_t stream,
                             const std::function<void()>& pass) {
  if (g.type == dtype::float16) run_widened_gated<tally::float16, float>(g, r, st, stream, pass);
  else run_widened_gated<tally::bfloat16, float>(g, r, st, stream, pass);
}

bool shapes_supported(const tally::shapes::request&, dtype) noexcept {
  return true;  // every operation and element type of the shape layer (exact ones: shapes_exact.cu)
}

void shapes_clear_status(std::int64_t* status_device, stream_t stream, int device) {
  device_guard guard(device);
  TALLY_CUDA(cudaMemsetAsync(status_device, 0xff, 2 * sizeof(std::int64_t), stream));  // -1, -1
}

void shapes_run(const geometry& g, const request& r, outcome& st, stream_t stream, int device) {
  device_guard guard(device);
  switch (g.type) {
    case dtype::float32: return run_t<float>(g, r, st, stream);
    case dtype::float64: return run_t<double>(g, r, st, stream);
    case dtype::int32: return run_t<std::int32_t>(g, r, st, stream);
    case dtype::int64: return run_t<std::int64_t>(g, r, st, stream);
    case dtype::float16:
      if (shapes_run_native(g, r, st, stream)) return;
      return run_widened<tally::float16, float>(g, r, st, stream);
    case dtype::bfloat16:
      if (shapes_run_native(g, r, st, stream)) return;
      return run_widened<tally::bfloat16, float>(g, r, st, stream);
    case dtype::int8:
      if (shapes_run_native(g, r, st, stream)) return;
      return run_widened<std::int8_t, std::int32_t>(g, r, st, stream);
    case dtype::int16:
      if (shapes_run_native_int(g, r, st, stream)) return;
      return run_widened<std::int16_t, std::int32_t>(g, r, st, stream);
    case dtype::uint8:
      if (shapes_run_native(g, r, st, stream)) return;
      return run_widened<std::uint8_t, std::int32_t>(g, r, st, stream);
    case dtype::uint16:
      if (shapes_run_native_int(g, r, st, stream)) return;
      return run_widened<std::uint16_t, std::int32_t>(g, r, st, stream);
    case dtype::bool_:
      if (shapes_run_native(g, r, st, stream)) return;
      return run_widened<bool, std::int32_t>(g, r, st, stream);
    case dtype::uint32:
      if (shapes_run_native_int(g, r, st, stream)) return;
      return run_widened<std::uint32_t, std::int64_t>(g, r, st, stream);
    case dtype::uint64:
      if (shapes_run_native_int(g, r, st, stream)) return;
      return run_widened<std::uint64_t, std::int64_t>(g, r, st, stream);
  }
}

}  // namespace tally::cuda
