// The exact-state entry points of the CUDA backend in a CPU-only build: there is none.
#include "state_backends.hpp"

namespace tally::cuda {
namespace {
[[noreturn]] void none() {
  throw error(errc::no_gpu, "tally: the CUDA backend was requested but this build of tally has no CUDA support");
}
}  // namespace

void exact_state(reduce_op, dtype, const void*, const void*, std::int64_t, std::int64_t*, stream_t, int) { none(); }
void exact_state_async(reduce_op, dtype, const void*, const void*, std::int64_t, std::int64_t*, stream_t, int) { none(); }

}  // namespace tally::cuda
