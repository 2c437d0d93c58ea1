// The shape layer's CUDA entry points in a CPU-only build: there is no CUDA backend.
#include "shapes_backend.hpp"

namespace tally::cuda {

bool shapes_supported(const shapes::request&, dtype) noexcept { return false; }

void shapes_run(const shapes::geometry&, const shapes::request&, shapes::outcome&, stream_t, int) {
  throw error(errc::no_gpu, "tally: the CUDA backend was requested but this build of tally has no CUDA support");
}

void shapes_clear_status(std::int64_t*, stream_t, int) {
  throw error(errc::no_gpu, "tally: the CUDA backend was requested but this build of tally has no CUDA support");
}

}  // namespace tally::cuda
