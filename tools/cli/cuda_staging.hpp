// tally CLI: running a tally call on the GPU for arrays that live in host memory.
// Built from cuda_staging.cpp when TALLY_HAVE_CUDA is ON, else from cuda_staging_none.cpp.
#pragma once

#include <cstdint>
#include <functional>

#include "tally/core.hpp"
#include "tally/shapes.hpp"

namespace tally_cli {

/// Copies x (and y, for dot) to device memory, runs tally::reduce there (memory::device,
/// backend cuda) and writes the result to host memory at `result`. Returns the seconds the
/// tally call took (copies excluded). Throws tally::error.
double reduce_on_gpu(tally::reduce_op op, tally::array_ref x, tally::array_ref y, void* result,
                     tally::accuracy acc);

/// Copies x and y to device memory, runs tally::add there and copies the sum back into the
/// host array `out`. Returns the seconds the tally call took. Throws tally::error.
double add_on_gpu(tally::array_ref x, tally::array_ref y, tally::mutable_array_ref out);

/// Copies x to device memory and runs tally::extreme there (value to host memory at `value`,
/// index to `*index`). Returns the seconds the tally call took. Throws tally::error.
double extreme_on_gpu(tally::extreme_op op, tally::nan_policy nans, tally::array_ref x, void* value,
                      std::int64_t* index);

/// Copies x to device memory once and runs tally::minmax there (one read of it: values to
/// host memory at `lo` / `hi`, indices to `*lo_index` / `*hi_index`). Returns the seconds the
/// tally call took. Throws tally::error.
double minmax_on_gpu(tally::nan_policy nans, tally::array_ref x, void* lo, std::int64_t* lo_index, void* hi,
                     std::int64_t* hi_index);

/// Copies x to device memory and runs tally::mean (norm false) or tally::norm2 (norm true)
/// there, the result (of type rt) to host memory at `result`. Returns the tally call's seconds.
double mean_norm_on_gpu(bool norm, tally::array_ref x, void* result, tally::dtype rt);

/// A shape-layer call (tally::reduce_axis, mean_axis or extreme_axis) on a matrix and its
/// output arrays; the caller builds it once and it runs on either side (see axis.cpp).
using matrix_call = std::function<void(tally::matrix_ref x, tally::mutable_array_ref values,
                                       tally::mutable_array_ref indices, const tally::options& opt)>;

/// Copies the host matrix x (rows * cols elements, C order: row_stride == cols, col_stride
/// == 1) to device memory once with cudaMemcpy, allocates device arrays shaped as `values`
/// and `indices` (an empty ref {nullptr, 0} stays empty: not written), runs `call` on the
/// device views (memory::device, backend cuda, the default stream, accuracy `acc`) and copies
/// the outputs back into `values` / `indices` (host). Returns the seconds of `call` alone.
/// Throws tally::error: whatever `call` throws (the cuda backend's refusals pass through
/// unchanged), errc::cuda_error for a failed allocation or copy, errc::no_gpu in a build
/// without CUDA.
double matrix_on_gpu(const matrix_call& call, tally::matrix_ref x, tally::mutable_array_ref values,
                     tally::mutable_array_ref indices, tally::accuracy acc);

/// --distributed --backend cuda: the number of CUDA devices this process sees (0 when there
/// is none, or in a build without CUDA).
int gpu_count();

/// Makes device `device` current for this process (cudaSetDevice). Throws tally::error
/// (errc::cuda_error naming the device; errc::no_gpu in a build without CUDA).
void use_gpu(int device);

/// A host array copied once to device memory of the current device (cudaMalloc +
/// cudaMemcpy); freed on destruction. An empty array holds no allocation (ref().data is
/// null, size 0). Throws tally::error (errc::cuda_error; errc::no_gpu without CUDA).
class device_copy {
 public:
  explicit device_copy(tally::array_ref host);
  ~device_copy();
  device_copy(const device_copy&) = delete;
  device_copy& operator=(const device_copy&) = delete;
  /// The copy: memory::device, the host array's length and element type.
  tally::array_ref ref() const { return {p_, n_, t_, tally::memory::device}; }

 private:
  void* p_ = nullptr;
  std::int64_t n_ = 0;
  tally::dtype t_ = tally::dtype::float64;
};

}  // namespace tally_cli
