// tally CLI: running a tally call on the GPU for arrays that live in host memory.
// Built from cuda_staging.cpp when TALLY_HAVE_CUDA is ON, else from cuda_staging_none.cpp.
#pragma once

#include <cstdint>

#include "tally/core.hpp"

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

/// Copies x to device memory and runs tally::mean (norm false) or tally::norm2 (norm true)
/// there, the result (of type rt) to host memory at `result`. Returns the tally call's seconds.
double mean_norm_on_gpu(bool norm, tally::array_ref x, void* result, tally::dtype rt);

}  // namespace tally_cli
