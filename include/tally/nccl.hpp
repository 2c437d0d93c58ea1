// tally::nccl: reductions over arrays spread across GPUs, combined with NCCL (library
// tally_nccl, built when nccl.h and libnccl are found and the CUDA backend is built; see
// docs/distributed.md). Keep NCCL's NVLink multicast off (NCCL_NVLS_ENABLE=0 in the
// environment before the communicators are created): tally moves only ~1.2 KiB per rank.
//
// One process per GPU (ncclCommInitRank):
//   double s = tally::nccl::sum<double>(comm, {d_part, n}, stream);   // every rank
// One process driving several GPUs (ncclCommInitAll): every GPU's part at once,
//   std::vector<tally::nccl::part<double>> parts = {{comms[0], {d0, n0}, s0}, {comms[1], {d1, n1}, s1}};
//   double s = tally::nccl::sum<double>(parts);
//
// Each part is a contiguous 1-D view in the device memory of its communicator's GPU (the
// global array is the concatenation in rank order). Exact sums, dots, means and norms (the
// default): tally::partial_async leaves each GPU's exact state (include/tally/state.hpp) in
// device memory, ONE ncclAllReduce (ncclReduce to a root) with ncclInt64 and ncclSum merges
// them exactly in place (the special-value flags travel as per-flag counters in the same
// words, so no second ncclMax call is needed), and each rank copies the 1.2 KiB merged state
// to the host and rounds it once: bitwise the same for any number of GPUs and any split, and
// the same as tally::sum of the whole array on one GPU. accuracy::fast: each GPU's float64
// fast result summed with ncclFloat64 / ncclSum (NOT reproducible). min/max/argmin/argmax:
// per-GPU (value, first index) records gathered with ncclAllGather (one-process form: combined
// on the host) with ops::extreme_reducer; global index = local index + the lengths of the
// parts before; ties to the first global index; NaN as tally::extreme.
// Blocking (the calls synchronise their streams). Collective: every rank calls with the same
// element type, result type, operation and root. A rank whose local step fails still joins
// the collective (a zero state and a failure count travel), and then every receiving rank
// (every rank for root == all, else root) throws tally::error; with another root, a rank that
// is not root throws only for its own failure (and, on the exact path, checks no result type:
// only receiving ranks do). NCCL failures throw errc::cuda_error naming the NCCL call and its error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tally/core.hpp"
#include "tally/state.hpp"
#include "tally/tally.hpp"
#include "tally/types.hpp"

struct ncclComm;  // opaque; ncclComm_t is `ncclComm*`

namespace tally::nccl {

/// An NCCL communicator handle, the same type as ncclComm_t.
using comm_t = ::ncclComm*;

/// `root` value meaning: every rank receives the result (ncclAllReduce / ncclAllGather).
inline constexpr int all = -1;

/// Enqueues on `stream`, without synchronising: the exact state of this rank's x (and y; y
/// == x for a sum of squares) into `state_device` (`state_words` int64 words of
/// device memory on the communicator's GPU: the state, then failure and type counters), and
/// its in-place ncclAllReduce (ncclReduce to root) with ncclInt64 / ncclSum. Can be called
/// inside ncclGroupStart / ncclGroupEnd. Afterwards (in stream order) the first
/// exact_state::size words hold the word-wise sum of every rank's state, ready for
/// tally::round, round_mean or round_sqrt (after copying them to the host).
/// float32/float64 only.
void allreduce_state_async(comm_t comm, reduce_op op, array_ref x, array_ref y, std::int64_t* state_device,
                           stream_t stream, int root = all);
/// Words `allreduce_state_async` needs at `state_device`.
inline constexpr int state_words = exact_state::size + 8 + dtype_count;

/// Sum (y ignored) or dot of the distributed x, rounded to result_type (float32/float64 for
/// floating x, int64 for integers). Returns true where `result` (host memory) was written.
bool reduce(comm_t comm, reduce_op op, array_ref x, array_ref y, void* result, dtype result_type, stream_t stream,
            int root = all, accuracy acc = accuracy::exact);
bool mean(comm_t comm, array_ref x, void* result, dtype result_type, stream_t stream, int root = all);
bool norm2(comm_t comm, array_ref x, void* result, dtype result_type, stream_t stream, int root = all);
bool extreme(comm_t comm, extreme_op op, nan_policy nans, array_ref x, void* value, std::int64_t* index, stream_t stream,
             int root = all);

/// One GPU's part for the one-process form.
struct group_part {
  comm_t comm;
  array_ref x, y;  // y for dot (else ignored)
  stream_t stream;
};
/// What the one-process form computes: sum, dot, mean, norm2 (exact), or a fast sum / dot.
enum class group_op : int { sum, dot, mean, norm2, fast_sum, fast_dot };
/// Every GPU's part at once (one ncclGroupStart / ncclGroupEnd around the per-GPU
/// collectives), result to host memory. Blocking: returns after every part's stream is
/// synchronised. Exact ops: the correctly rounded result of the whole distributed input
/// (tally::round / round_mean / round_sqrt of the merged exact states), the same bits as one
/// GPU's call on the concatenated data; fast ops: a float64 allreduce of the parts' fast sums.
/// Errors (tally::error): errc::invalid_argument (no parts, parts of different element types,
/// an unsupported type or result type, norm2 of integers, and each part's own checks as
/// `partial_async` / `reduce_async` make them), errc::null_pointer (null result),
/// errc::wrong_memory (a part in host memory), errc::overflow (an integer result past int64 /
/// uint64), errc::cuda_error (a CUDA or NCCL call failed, naming it, or the GPUs' merged
/// words differ).
void reduce_group(group_op op, std::span<const group_part> parts, void* result, dtype result_type);
/// Minimum or maximum and global first index over the parts (combined on the host): the
/// value and first index `extreme` gives on the concatenated parts (index counted across
/// them in order; -1 when all are empty). Blocking. Errors as reduce_group, and
/// errc::null_pointer for a null value or index.
void extreme_group(extreme_op op, nan_policy nans, std::span<const group_part> parts, void* value, std::int64_t* index);

namespace detail {
template <class T> array_ref ref(view<const T> v) { return {v.data, v.size, dtype_of<T>(), v.where}; }
}  // namespace detail

// ---- typed forms, one process per GPU ----------------------------------------------------

template <class T, class Out = result_t<T>>
Out sum(comm_t c, view<const T> x, stream_t s, accuracy acc = accuracy::exact) {
  Out r{};
  reduce(c, reduce_op::sum, detail::ref(x), {}, &r, dtype_of<Out>(), s, all, acc);
  return r;
}
template <class T, class Out = result_t<T>>
std::optional<Out> sum(comm_t c, view<const T> x, stream_t s, int root, accuracy acc = accuracy::exact) {
  Out r{};
  if (!reduce(c, reduce_op::sum, detail::ref(x), {}, &r, dtype_of<Out>(), s, root, acc)) return std::nullopt;
  return r;
}
template <class T, class Out = result_t<T>>
Out dot(comm_t c, view<const T> x, view<const T> y, stream_t s, accuracy acc = accuracy::exact) {
  Out r{};
  reduce(c, reduce_op::dot, detail::ref(x), detail::ref(y), &r, dtype_of<Out>(), s, all, acc);
  return r;
}
template <class T, class Out = std::conditional_t<std::is_floating_point_v<T>, T, double>>
Out mean(comm_t c, view<const T> x, stream_t s) {
  Out r{};
  mean(c, detail::ref(x), &r, dtype_of<Out>(), s, all);
  return r;
}
template <class T, class Out = T> Out norm2(comm_t c, view<const T> x, stream_t s) {
  Out r{};
  norm2(c, detail::ref(x), &r, dtype_of<Out>(), s, all);
  return r;
}
template <class T, bool MAX>
located<T> extreme_of(comm_t c, view<const T> x, stream_t s, nan_policy nans = nan_policy::propagate) {
  located<T> r{};
  extreme(c, MAX ? extreme_op::max : extreme_op::min, nans, detail::ref(x), &r.value, &r.index, s, all);
  return r;
}
template <class T> T min(comm_t c, view<const T> x, stream_t s) { return extreme_of<T, false>(c, x, s).value; }
template <class T> T max(comm_t c, view<const T> x, stream_t s) { return extreme_of<T, true>(c, x, s).value; }
/// Global first index of the minimum / maximum; errc::empty_input when the global x is empty.
template <class T> std::int64_t argmin(comm_t c, view<const T> x, stream_t s) {
  auto r = extreme_of<T, false>(c, x, s);
  if (r.index < 0) throw error(errc::empty_input, "tally::nccl::argmin: the distributed x is empty");
  return r.index;
}
template <class T> std::int64_t argmax(comm_t c, view<const T> x, stream_t s) {
  auto r = extreme_of<T, true>(c, x, s);
  if (r.index < 0) throw error(errc::empty_input, "tally::nccl::argmax: the distributed x is empty");
  return r.index;
}

// ---- typed forms, one process driving several GPUs -----------------------------------------

/// One GPU's part: its communicator (from ncclCommInitAll), its data, its stream.
template <class T> struct part {
  comm_t comm;
  view<const T> x;
  stream_t stream = nullptr;
  view<const T> y{nullptr, 0};  // for dot (empty by default; `y = {}` made GCC 12 stop with an internal
                               // compiler error on braced lists of parts, as in the example at the top)
};

namespace detail {
template <class T> std::vector<group_part> parts_of(std::span<const part<T>> p) {
  std::vector<group_part> g;
  g.reserve(p.size());
  for (const auto& q : p) g.push_back({q.comm, ref(q.x), ref(q.y), q.stream});
  return g;
}
}  // namespace detail

template <class T, class Out = result_t<T>> Out sum(std::span<const part<T>> p, accuracy acc = accuracy::exact) {
  Out r{};
  reduce_group(acc == accuracy::fast ? group_op::fast_sum : group_op::sum, detail::parts_of(p), &r, dtype_of<Out>());
  return r;
}
template <class T, class Out = result_t<T>> Out dot(std::span<const part<T>> p, accuracy acc = accuracy::exact) {
  Out r{};
  reduce_group(acc == accuracy::fast ? group_op::fast_dot : group_op::dot, detail::parts_of(p), &r, dtype_of<Out>());
  return r;
}
template <class T, class Out = std::conditional_t<std::is_floating_point_v<T>, T, double>>
Out mean(std::span<const part<T>> p) {
  Out r{};
  reduce_group(group_op::mean, detail::parts_of(p), &r, dtype_of<Out>());
  return r;
}
template <class T, class Out = T> Out norm2(std::span<const part<T>> p) {
  Out r{};
  reduce_group(group_op::norm2, detail::parts_of(p), &r, dtype_of<Out>());
  return r;
}
template <class T, bool MAX> located<T> extreme_of(std::span<const part<T>> p, nan_policy nans = nan_policy::propagate) {
  located<T> r{};
  extreme_group(MAX ? extreme_op::max : extreme_op::min, nans, detail::parts_of(p), &r.value, &r.index);
  return r;
}

}  // namespace tally::nccl
