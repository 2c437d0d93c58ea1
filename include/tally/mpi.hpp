// tally::mpi: reductions over an array spread across the ranks of an MPI communicator
// (library tally_mpi, built when CMake finds MPI; see docs/distributed.md).
//
//   MPI_Init(&argc, &argv);
//   std::vector<double> part = my_slice();                  // any length, 0 included
//   double s = tally::mpi::sum<double>(MPI_COMM_WORLD, part);  // every rank gets the sum
//   std::optional<double> r = tally::mpi::sum<double>(MPI_COMM_WORLD, part, 0);  // rank 0 only
//
// Each rank passes its local part, a contiguous 1-D view (host memory: CPU backend; device
// memory: CUDA backend, one GPU per rank); the global array is the concatenation of the parts
// in rank order. Element types: float32, float64, int32 and int64 (any other dtype is
// errc::invalid_argument on every rank; the command-line tool widens the others exactly,
// docs/distributed.md). tally reduces each part with its own kernels, then combines across
// ranks:
//  - exact sums, dot products, means and norms (the default, and always for mean, norm2 and
//    integers): each rank's tally::exact_state (include/tally/state.hpp) is merged with ONE
//    MPI_Allreduce (MPI_Reduce to a root) of int64 words with MPI_SUM: an exact integer merge,
//    no user-defined MPI_Op; every rank rounds the same merged state once. The result is the
//    correctly rounded value of the whole array: bitwise the same for any number of ranks and
//    any split of the data, and the same as tally::sum of the whole array in one process.
//  - accuracy::fast sums and dots: each rank's float64 fast result, summed with MPI_SUM on
//    doubles (the order of MPI's reduction decides the bits: NOT reproducible across rank
//    counts or MPI implementations).
//  - min, max, argmin, argmax (and the nan forms): each rank's (value, first index) pair is
//    gathered (MPI_Allgather / MPI_Gather) and combined with ops::extreme_reducer; the global
//    index is the local index plus the lengths of the parts of the ranks before it, ties go to
//    the first global index, NaN as tally::extreme.
// Blocking and collective: every rank of `comm` must call, with the same element type, result
// type, operation and root. A rank whose local work fails (bad argument, overflow, CUDA error)
// still takes part in the collective, so no rank hangs; then every receiving rank (every rank
// for root == all, else root) throws tally::error (the failing rank its own message, the
// others naming the failure's errc). With another root, a rank that is not root throws only
// for its own failure; else it returns false (or no value) without learning of the others'. Empty global input:
// as the single-process functions (+0 for sums, NaN for mean, +inf/-inf and index -1, and
// errc::empty_input for argmin/argmax). `root` must be a rank of comm (else errc::invalid_argument
// on every rank). Device data: the small states are staged through host memory (no CUDA-aware
// MPI needed).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "tally/core.hpp"
#include "tally/state.hpp"
#include "tally/tally.hpp"
#include "tally/types.hpp"

namespace tally::mpi {

/// `root` value meaning: every rank receives the result (MPI_Allreduce / MPI_Allgather).
inline constexpr int all = -1;

/// Sum (y ignored) or dot product of the distributed x (and y, split the same way), rounded to
/// `result_type` (float32/float64 for floating x, int64 for integers: errc::overflow when the
/// global exact integer does not fit, and also when one rank's own exact part does not fit
/// int64, as state.hpp's partial states require, even where the global sum would). Returns true on the ranks where `result` was written
/// (every rank for root == all, else only root; result may be null elsewhere).
bool reduce(MPI_Comm comm, reduce_op op, array_ref x, array_ref y, void* result, dtype result_type, int root = all,
            const options& opt = {});
/// Correctly rounded mean (exact sum / global n) of the distributed x; float32/float64 result.
bool mean(MPI_Comm comm, array_ref x, void* result, dtype result_type, int root = all, const options& opt = {});
/// Correctly rounded L2 norm of the distributed floating x; float32/float64 result.
bool norm2(MPI_Comm comm, array_ref x, void* result, dtype result_type, int root = all, const options& opt = {});
/// Minimum or maximum of the distributed x and its first GLOBAL index (-1 when none), as
/// tally::extreme. `value` receives one element of x's type.
bool extreme(MPI_Comm comm, extreme_op op, nan_policy nans, array_ref x, void* value, std::int64_t* index,
             int root = all, const options& opt = {});
/// The exact merge of every rank's state: one MPI_Allreduce (MPI_Reduce to root) of the
/// exact_state::size int64 words with MPI_SUM, normalised. On non-root ranks (root != all)
/// the returned state is the local one.
exact_state merge(MPI_Comm comm, const exact_state& local, int root = all);

namespace detail {
template <class T> array_ref ref(view<const T> v) { return {v.data, v.size, dtype_of<T>(), v.where}; }
}  // namespace detail

// ---- typed forms: every rank gets the result ---------------------------------------------

template <class T, class Out = result_t<T>> Out sum(MPI_Comm comm, view<const T> x, const options& opt = {}) {
  Out r{};
  reduce(comm, reduce_op::sum, detail::ref(x), {}, &r, dtype_of<Out>(), all, opt);
  return r;
}
template <class T, class Out = result_t<T>> Out dot(MPI_Comm comm, view<const T> x, view<const T> y, const options& opt = {}) {
  Out r{};
  reduce(comm, reduce_op::dot, detail::ref(x), detail::ref(y), &r, dtype_of<Out>(), all, opt);
  return r;
}
template <class T, class Out = std::conditional_t<std::is_floating_point_v<T>, T, double>>
Out mean(MPI_Comm comm, view<const T> x, const options& opt = {}) {
  Out r{};
  mean(comm, detail::ref(x), &r, dtype_of<Out>(), all, opt);
  return r;
}
template <class T, class Out = T> Out norm2(MPI_Comm comm, view<const T> x, const options& opt = {}) {
  static_assert(std::is_floating_point_v<T>, "tally::mpi::norm2: float or double data");
  Out r{};
  norm2(comm, detail::ref(x), &r, dtype_of<Out>(), all, opt);
  return r;
}
template <class T, bool MAX>
located<T> extreme_of(MPI_Comm comm, view<const T> x, nan_policy nans = nan_policy::propagate, const options& opt = {}) {
  located<T> r{};
  extreme(comm, MAX ? extreme_op::max : extreme_op::min, nans, detail::ref(x), &r.value, &r.index, all, opt);
  return r;
}
template <class T> T min(MPI_Comm c, view<const T> x, const options& o = {}) { return extreme_of<T, false>(c, x, nan_policy::propagate, o).value; }
template <class T> T max(MPI_Comm c, view<const T> x, const options& o = {}) { return extreme_of<T, true>(c, x, nan_policy::propagate, o).value; }
template <class T> T nanmin(MPI_Comm c, view<const T> x, const options& o = {}) { return extreme_of<T, false>(c, x, nan_policy::omit, o).value; }
template <class T> T nanmax(MPI_Comm c, view<const T> x, const options& o = {}) { return extreme_of<T, true>(c, x, nan_policy::omit, o).value; }

namespace detail {
template <class T, bool MAX> std::int64_t arg(MPI_Comm c, view<const T> x, nan_policy nans, const options& o, const char* fn) {
  located<T> r = extreme_of<T, MAX>(c, x, nans, o);
  if (r.index < 0)
    throw error(errc::empty_input, std::string("tally::mpi::") + fn + ": the distributed x " +
                                       "is empty or holds only NaN, so there is no index to return");
  return r.index;
}
}  // namespace detail
/// Global index (0-based, in rank order) of the first minimum / maximum; errc::empty_input
/// (on every rank) when the global array is empty (or only NaN for the nan forms).
template <class T> std::int64_t argmin(MPI_Comm c, view<const T> x, const options& o = {}) { return detail::arg<T, false>(c, x, nan_policy::propagate, o, "argmin"); }
template <class T> std::int64_t argmax(MPI_Comm c, view<const T> x, const options& o = {}) { return detail::arg<T, true>(c, x, nan_policy::propagate, o, "argmax"); }
template <class T> std::int64_t nanargmin(MPI_Comm c, view<const T> x, const options& o = {}) { return detail::arg<T, false>(c, x, nan_policy::omit, o, "nanargmin"); }
template <class T> std::int64_t nanargmax(MPI_Comm c, view<const T> x, const options& o = {}) { return detail::arg<T, true>(c, x, nan_policy::omit, o, "nanargmax"); }

// ---- typed forms: only `root` gets the result (std::nullopt on the other ranks) -----------

template <class T, class Out = result_t<T>> std::optional<Out> sum(MPI_Comm comm, view<const T> x, int root, const options& opt = {}) {
  Out r{};
  if (!reduce(comm, reduce_op::sum, detail::ref(x), {}, &r, dtype_of<Out>(), root, opt)) return std::nullopt;
  return r;
}
template <class T, class Out = result_t<T>>
std::optional<Out> dot(MPI_Comm comm, view<const T> x, view<const T> y, int root, const options& opt = {}) {
  Out r{};
  if (!reduce(comm, reduce_op::dot, detail::ref(x), detail::ref(y), &r, dtype_of<Out>(), root, opt)) return std::nullopt;
  return r;
}
template <class T, class Out = std::conditional_t<std::is_floating_point_v<T>, T, double>>
std::optional<Out> mean(MPI_Comm comm, view<const T> x, int root, const options& opt = {}) {
  Out r{};
  if (!mean(comm, detail::ref(x), &r, dtype_of<Out>(), root, opt)) return std::nullopt;
  return r;
}
template <class T, class Out = T> std::optional<Out> norm2(MPI_Comm comm, view<const T> x, int root, const options& opt = {}) {
  Out r{};
  if (!norm2(comm, detail::ref(x), &r, dtype_of<Out>(), root, opt)) return std::nullopt;
  return r;
}
template <class T, bool MAX>
std::optional<located<T>> extreme_of(MPI_Comm comm, view<const T> x, nan_policy nans, int root, const options& opt = {}) {
  located<T> r{};
  if (!extreme(comm, MAX ? extreme_op::max : extreme_op::min, nans, detail::ref(x), &r.value, &r.index, root, opt))
    return std::nullopt;
  return r;
}

}  // namespace tally::mpi
