// The CUDA backend of a CPU-only build for the operations of backends_ops.hpp: none.
#include "backends_ops.hpp"

namespace tally::cuda {
namespace {
[[noreturn]] void none() {
  throw error(errc::no_gpu, "tally: the CUDA backend was requested but this build of tally has no CUDA support");
}
}  // namespace

void norm1(dtype, dtype, accuracy, const void*, std::int64_t, void*, stream_t, int) { none(); }
void norm_inf(dtype, dtype, const void*, std::int64_t, void*, stream_t, int) { none(); }
void var(dtype, dtype, accuracy, const void*, std::int64_t, std::uint64_t, bool, void*, stream_t, int) { none(); }
bool var_certified(dtype, dtype, const void*, std::int64_t, std::uint64_t, bool, void*, stream_t, int) {
  none();
  return false;
}
std::int64_t count_nonzero(dtype, const void*, std::int64_t, stream_t, int) { none(); }
std::shared_ptr<const double> widen_to_f64(dtype, const void*, std::int64_t, stream_t, int) { none(); }
void axpy(dtype, const void*, const void*, void*, std::int64_t, std::int64_t&, stream_t, int) { none(); }
void scale(dtype, const void*, void*, std::int64_t, std::int64_t&, stream_t, int) { none(); }

}  // namespace tally::cuda
