// tally: the mergeable exact state of a reduction (issue 4's promise; the base of MPI and NCCL).
//
//   std::vector<double> part_a = ..., part_b = ...;             // (or views of device memory)
//   tally::exact_state a = tally::partial_sum<double>(part_a);   // any backend
//   tally::exact_state b = tally::partial_sum<double>(part_b);
//   double s = tally::round<double>(tally::merge(a, b));  // == tally::sum<double>(a ++ b), bitwise
//
// (The untyped `partial(reduce_op, array_ref x, array_ref y)` below takes type-erased arrays.)
//
// The state is the exact value of a sum (or dot product, or sum of squares) as a Kulisch
// superaccumulator on ONE fixed digit grid, plus the term count and the special-value flags,
// all as plain int64 words. Integer addition of the words is the exact merge, so any integer
// SUM collective (MPI_Allreduce with MPI_INT64_T and MPI_SUM, ncclAllReduce with ncclInt64 and
// ncclSum) merges states from any number of ranks in any order, and rounding the merged state
// once gives the correctly rounded result of the whole array: the same bits whatever the
// number of parts and however the data was split. See docs/exact.md and docs/distributed.md.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "tally/core.hpp"
#include "tally/types.hpp"

namespace tally {

/// The exact state of a sum or dot product: `size` int64 words.
///
/// Layout (words):
///   [0, 139)   digits: word i weighs 2^(32 i - 2176). This is the widest layout (float64 dot
///              products); float32 sums and dots and float64 sums, whose own superaccumulators
///              start at 2^-224, 2^-352 and 2^-1088, sit on the same grid at digit offsets 61,
///              57 and 34, so states of every type and operation merge with each other.
///              Integer data sits at digit 68 (weight 2^0).
///   [139]      terms: the number of terms (elements, or products) the state holds.
///   [140, 144) special-value counters: terms (or states) that were NaN, +inf, -inf, and
///              not -0.0; only "zero or not" matters, so they merge by addition too.
///
/// A canonical state (what `partial` and `merge` return) has digits 0..137 in [0, 2^32), the
/// top digit signed, and counters 0 or 1; equal values give bitwise equal canonical states.
/// Word-wise int64 addition of fewer than 2^30 canonical states cannot overflow a word and is
/// the exact merge (the sum need not be canonical; `round` and `merge` accept it as it is).
struct exact_state {
  static constexpr int digits = 139;
  static constexpr int digit_base = -2176;
  static constexpr int terms_word = 139;
  static constexpr int nan_word = 140, pos_inf_word = 141, neg_inf_word = 142, not_neg_zero_word = 143;
  static constexpr int size = 144;

  std::array<std::int64_t, size> words{};

  std::int64_t terms() const noexcept { return words[terms_word]; }
  bool operator==(const exact_state&) const = default;
};

/// The exact state of a sum (op = sum; y ignored) or dot product (op = dot; y of x's length
/// and type) of x. Element types: float32 and float64 (exact on both backends, any length,
/// special values included); int32 and int64 (the local exact integer result, which must fit
/// int64 or errc::overflow is thrown, deposited at weight 2^0). Pass y == x (the same data
/// pointer) for a sum of squares (the norm): the CUDA backend then reads x once.
/// Empty x: the zero state (terms 0). Backend: as `reduce` (device memory: CUDA, host: CPU);
/// opt.accuracy is not consulted (a state is always exact). Blocking. Deterministic: the
/// state is a function of the input multiset (canonical, so bitwise equal on every backend).
/// Throws tally::error as `reduce` does.
exact_state partial(reduce_op op, array_ref x, array_ref y = {}, const options& opt = {});

/// Asynchronous form on the CUDA backend: enqueues on opt.stream the computation of the
/// canonical state of x (and y) into `state_device` (exact_state::size int64 words of device
/// memory, 8-byte aligned, overwritten in stream order) and returns without synchronising.
/// float32/float64 only (errc::invalid_argument for integers, and for a state_device or an
/// x / y not aligned to its element size). The state's digits come from the exact kernel's
/// exported superaccumulator, moved onto the common grid by a one-block kernel.
void partial_async(reduce_op op, array_ref x, array_ref y, std::int64_t* state_device, const options& opt = {});

/// The exact merge of two states (word-wise addition, then carry normalisation): canonical.
exact_state merge(const exact_state& a, const exact_state& b) noexcept;

/// Carry-normalises s in place (digits 0..137 in [0, 2^32), counters 0 or 1): the canonical
/// form of the same value. Accepts any word-wise sum of fewer than 2^30 canonical states.
void normalize(exact_state& s) noexcept;

/// Rounds the state once, to nearest with ties to even, into `result`:
///   float32 / float64: the correctly rounded value of the exact sum; NaN if a NaN term (or
///   +inf and -inf) was seen, else +-inf if one kind of infinity was, +inf/-inf on overflow;
///   an exact zero is -0.0 only when every term was -0.0; the zero state gives +0.0.
///   int64: the exact integer value; errc::overflow when it does not fit, errc::invalid_argument
///   when the state holds NaN, an infinity or a non-integer.
/// Any state, canonical or a word-wise sum of states. Host only, no communication.
void round(const exact_state& s, void* result, dtype result_type);

/// The exact value divided by the state's term count, correctly rounded to float32 or float64
/// (an exact long division, ops::exact::divide_round): the mean. NaN for terms == 0 (NumPy).
void round_mean(const exact_state& s, void* result, dtype result_type);

/// The correctly rounded square root of the exact value (ops::exact::sqrt_round): the L2 norm
/// of x when the state is partial(dot, x, x). float32 or float64. errc::invalid_argument when
/// the value is negative (not a sum of squares).
void round_sqrt(const exact_state& s, void* result, dtype result_type);

/// The correctly rounded variance (take_sqrt false) or standard deviation (true) of the terms
/// behind two states of the same data: s1 = partial(sum, x), s2 = partial(dot, x, x) (each may
/// be a merge of parts, e.g. across ranks), with NumPy's ddof: (n S2 - S1^2) / (n (n - ddof)),
/// formed exactly (ops::big, Knuth TAOCP 4.3.1) and rounded once (ops::exact::variance_round),
/// n = s1's term count. float32 or float64. NaN when n - ddof <= 0 or a NaN or infinity was
/// seen. errc::invalid_argument when the term counts of s1 and s2 differ (not the same data).
void round_variance(const exact_state& s1, const exact_state& s2, std::int64_t ddof, bool take_sqrt, void* result,
                    dtype result_type);

template <class Out> Out round(const exact_state& s) {
  static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, double> || std::is_same_v<Out, std::int64_t>,
                "tally::round: Out is float, double or int64_t");
  Out r{};
  round(s, &r, dtype_of<Out>());
  return r;
}
template <class Out> Out round_mean(const exact_state& s) {
  static_assert(std::is_floating_point_v<Out>, "tally::round_mean: Out is float or double");
  Out r{};
  round_mean(s, &r, dtype_of<Out>());
  return r;
}
template <class Out> Out round_sqrt(const exact_state& s) {
  static_assert(std::is_floating_point_v<Out>, "tally::round_sqrt: Out is float or double");
  Out r{};
  round_sqrt(s, &r, dtype_of<Out>());
  return r;
}

/// Typed forms of `partial`: the exact state of sum(x), dot(x, y), and of the sum of squares
/// of x (whose round_sqrt is norm2(x)).
template <class T> exact_state partial_sum(view<const T> x, const options& opt = {}) {
  return partial(reduce_op::sum, {x.data, x.size, dtype_of<T>(), x.where}, {}, opt);
}
template <class T> exact_state partial_dot(view<const T> x, view<const T> y, const options& opt = {}) {
  return partial(reduce_op::dot, {x.data, x.size, dtype_of<T>(), x.where}, {y.data, y.size, dtype_of<T>(), y.where}, opt);
}
template <class T> exact_state partial_squares(view<const T> x, const options& opt = {}) {
  array_ref r{x.data, x.size, dtype_of<T>(), x.where};
  return partial(reduce_op::dot, r, r, opt);
}

}  // namespace tally
