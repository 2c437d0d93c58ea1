// Native int16, uint16, uint32 and uint64 elements in the shape layer (forty-second session):
// rows, segments and columns read as they are, each element converted exactly on the way into
// the wide type's accumulator, as the byte types are in src/cuda/shapes_narrow.cu. The widened
// route (src/cuda/shapes.cu, run_widened) first copied them into int32 / int64 and read the
// copy: sizeof(x) / (sizeof(x) + 2 sizeof(W)) of the read bandwidth, 0.20 for the 16-bit types
// and uint32, 0.33 for uint64 (run 149, H100, 2^28 elements: uint64 sums at 0.30-0.31 of read).
//
//   int16, uint16 -> int32 (sums: a vector's 8 elements summed in int32, exact, then added to
//                    the 128-bit state once; columns: int32 run sums of 8192 rows, v3::cols_body)
//   uint32        -> int64
//   uint64        -> int64 as x ^ 2^63 (order-preserving; a sum or mean adds len * 2^63 back at
//                    the write, a min / max flips the bit back: src/shapes_widen.hpp)
// Min / max and their first index take a vector's elements at once (narrow_op::
// accumulate_words_at: their extreme first, the first index only when it could beat the
// state), and segments' partial end vectors are read whole, masked with the op's worst value.
// All under launch_v3's FEW rules (the narrow types' lanes and lazy tiles, fewer kernels to
// compile than the core types' rules).
//
// The same ops and conversions as the widened route (tally::shapes::widen_one), so the same
// accumulator values: every result (integer sums and means, min / max and their first
// indices) has the bits of the widened route and of the CPU backend.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>

#include "cuda/shapes_launch.cuh"
#include "cuda/shapes_narrow.hpp"
#include "cuda/shapes_narrow_op.cuh"
#include "cuda/shapes_narrow_readers.cuh"
#include "cuda/shapes_narrow_run.cuh"
#include "shapes_widen.hpp"

namespace tally::cuda {
namespace {

using namespace shapes_k;
using namespace shapes_launch;
using namespace narrow_k;
using tally::shapes::kind;

// (the element readers i16_in, u16_in, u32_in, u64_in: src/cuda/shapes_narrow_readers.cuh)

}  // namespace

bool shapes_run_native_int(const geometry& g, const request& r, outcome& st, cudaStream_t stream) {
  switch (g.type) {
    case dtype::int16: return run_int<i16_in, true>(g, r, st, stream);
    case dtype::uint16: return run_int<u16_in, true>(g, r, st, stream);
    case dtype::uint32: return run_int<u32_in, true>(g, r, st, stream);
    case dtype::uint64: return run_int<u64_in, true>(g, r, st, stream);
    default: return false;
  }
}

}  // namespace tally::cuda
