// The integer ops of the narrow types' shape reductions (sums, means, min / max and their first
// index over an int32 or int64 wide type), one launch path for the byte types and bool
// (src/cuda/shapes_narrow.cu) and the 16- to 64-bit integers (src/cuda/shapes_narrow_int.cu):
// the same ops and the same launch_v3 rules, so the same kernels and the same bits.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "cuda/shapes_launch.cuh"
#include "cuda/shapes_narrow_op.cuh"
#include "shapes_widen.hpp"

namespace tally::cuda::narrow_k {

using shapes_launch::geometry;
using shapes_launch::launch_v3;
using shapes_launch::outcome;
using shapes_launch::request;
using tally::shapes::kind;

/// Whether the narrow kernels read g in place: column mode (the outputs are the closer
/// elements; column_mode set) or rows / segments whose elements are adjacent, on an element
/// boundary; false for the others (strided rows: the caller widens x into a copy), and when
/// the plan turns the vector loads or the fused launch off.
inline bool reads_in_place(const geometry& g, std::size_t elem_bytes, bool& column_mode) {
  const bool segmented = g.offsets != nullptr;
  column_mode = !segmented && g.outputs > 1 && std::llabs(g.outer) < std::llabs(g.inner);
  const bool contiguous_rows =
      !column_mode && (segmented || g.inner == 1) && reinterpret_cast<std::uintptr_t>(g.x) % elem_bytes == 0;
  return tuning::shapes_vector_loads() && (column_mode || contiguous_rows);
}

/// g's request (integer sums, means, min / max and their first index) over In's elements by the
/// wide type's ops (In::wide: int32 or int64); FEW: launch_v3's rules for the narrow types,
/// else those of the wide core types. False for the layouts the kernels do not read in place
/// (rows whose elements are not adjacent): the caller then widens x into a copy.
template <class In, bool FEW> bool run_int(const geometry& g, const request& r, outcome& st, cudaStream_t s) {
  using W = typename In::wide;
  bool column_mode = false;
  if (!reads_in_place(g, sizeof(typename In::src), column_mode)) return false;
  // (uint64 read biased, In::biased: len * 2^63 added back to sums and means)
  constexpr bool biased = [] {
    if constexpr (requires { In::biased; }) return In::biased;
    else return false;
  }();
  auto run = [&]<class Op>(auto&& make) { launch_v3<Op, FEW>(g, r, st, s, make, column_mode); };
  if (r.what == kind::extreme) {  // (no NaN among integers: the NaN policy changes nothing)
    const tally::shapes::store as = tally::shapes::store_of(g.type);
    auto mk = [&]<class E>() {
      using Op = narrow_op<In, E>;
      run.template operator()<Op>([as](void* out, std::int64_t* idx, long long*) {
        Op op;
        op.w0 = E{static_cast<W*>(out), idx, as};
        return op;
      });
    };
    if (r.eop == extreme_op::max) mk.template operator()<extreme<W, true, false>>();
    else mk.template operator()<extreme<W, false, false>>();
    return true;
  }
  if (r.what == kind::mean) {
    using Op = narrow_op<In, int_mean<W, float>, int_mean<W, double>>;
    const bool out64 = r.out_type == dtype::float64;
    run.template operator()<Op>([out64, biased](void* out, std::int64_t*, long long* ovf) {
      Op op;
      op.w0 = {static_cast<float*>(out), ovf, biased};
      op.w1 = {static_cast<double*>(out), ovf, biased};
      op.pick = out64 ? 1 : 0;
      return op;
    });
    return true;
  }
  using Op = narrow_op<In, int_sum<W>>;
  const bool to_u64 = r.out_type == dtype::uint64;
  run.template operator()<Op>([to_u64, biased](void* out, std::int64_t*, long long* ovf) {
    Op op;
    op.w0 = {static_cast<std::int64_t*>(out), ovf, to_u64, biased};
    return op;
  });
  return true;
}

}  // namespace tally::cuda::narrow_k
