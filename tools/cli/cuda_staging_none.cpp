// tally CLI: the GPU staging of a CPU-only build: there is no GPU to stage to.
#include "cuda_staging.hpp"

namespace tally_cli {
namespace {
[[noreturn]] void none() {
  throw tally::error(tally::errc::no_gpu, "tally: this build of tally has no CUDA support");
}
}  // namespace

double reduce_on_gpu(tally::reduce_op, tally::array_ref, tally::array_ref, void*, tally::accuracy) { none(); }
double add_on_gpu(tally::array_ref, tally::array_ref, tally::mutable_array_ref) { none(); }
double extreme_on_gpu(tally::extreme_op, tally::nan_policy, tally::array_ref, void*, std::int64_t*) { none(); }
double minmax_on_gpu(tally::nan_policy, tally::array_ref, void*, std::int64_t*, void*, std::int64_t*) { none(); }
double mean_norm_on_gpu(bool, tally::array_ref, void*, tally::dtype) { none(); }
double matrix_on_gpu(const matrix_call&, tally::matrix_ref, tally::mutable_array_ref, tally::mutable_array_ref,
                     tally::accuracy) {
  none();
}
int gpu_count() { return 0; }
void use_gpu(int) { none(); }
device_copy::device_copy(tally::array_ref) { none(); }
device_copy::~device_copy() = default;

}  // namespace tally_cli
