// The CUDA backend of a CPU-only build: reports that there is none.
#include "backends.hpp"

namespace tally::cuda {

bool available() noexcept { return false; }

memory locate(const void*, int* device) noexcept {
  *device = -1;
  return memory::host;
}

namespace {
[[noreturn]] void none() {
  throw error(errc::no_gpu, "tally: the CUDA backend was requested but this build of tally has no CUDA support");
}
}  // namespace

void reduce(reduce_op, dtype, dtype, accuracy, const void*, const void*, std::int64_t, void*, int&, stream_t, int) { none(); }
void reduce_async(reduce_op, dtype, dtype, accuracy, const void*, const void*, std::int64_t, void*, int*, stream_t, int) { none(); }
void add(dtype, const void*, const void*, void*, std::int64_t, int&, stream_t, int) { none(); }
void add_async(dtype, const void*, const void*, void*, std::int64_t, int*, stream_t, int) { none(); }
void extreme(extreme_op, nan_policy, dtype, const void*, std::int64_t, void*, std::int64_t&, stream_t, int) { none(); }
void minmax(nan_policy, dtype, const void*, std::int64_t, void*, std::int64_t&, void*, std::int64_t&, stream_t, int) { none(); }
void mean(dtype, dtype, const void*, std::int64_t, void*, stream_t, int) { none(); }
void norm2(dtype, dtype, const void*, std::int64_t, void*, stream_t, int) { none(); }

}  // namespace tally::cuda
