// tally::exact_state (include/tally/state.hpp): partial states on either backend, the exact
// merge, and the one rounding at the end.
#include "tally/state.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "state_backends.hpp"
#include "state_grid.hpp"
#include "validate.hpp"
#include "tally/ops/exact.hpp"
#include "tally/ops/exact_variance.hpp"

namespace tally {
namespace {

namespace sg = state_grid;
namespace ex = ops::exact;

const char* op_name(reduce_op op) { return op == reduce_op::sum ? "sum" : "dot"; }

bool is_float(dtype t) { return t == dtype::float32 || t == dtype::float64; }

void need_result(const char* fn, void* result) {
  if (result == nullptr) throw error(errc::null_pointer, std::string("tally::") + fn + ": result is a null pointer");
}

void need_float(const char* fn, dtype t) {
  if (!is_float(t))
    throw error(errc::invalid_argument, std::string("tally::") + fn + ": the result is float32 or float64, not " +
                                            dtype_name(t));
}

template <class Out> void put(void* result, Out v) { std::memcpy(result, &v, sizeof v); }

/// Two's-complement negation across normalised digits (as ops::exact::round_span does).
void negate(std::int64_t* d, int D) {
  std::int64_t borrow = 0;
  for (int i = 0; i < D; ++i) {
    std::int64_t v = -d[i] - borrow;
    borrow = 0;
    if (i + 1 < D && v < 0) {
      v += std::int64_t(1) << 32;
      borrow = 1;
    }
    d[i] = v;
  }
}

}  // namespace

exact_state partial(reduce_op op, array_ref x, array_ref y, const options& opt) {
  if (!is_float(x.type) && x.type != dtype::int32 && x.type != dtype::int64)
    throw error(errc::invalid_argument, std::string("tally::partial: exact states hold float32, float64, int32 and int64 "
                                                    "data, not ") + dtype_name(x.type));
  int device = -1;
  backend b = detail::check_reduce(op, x, y, opt.backend, device);
  exact_state s;
  if (x.size == 0) return s;  // the zero state
  const void* yd = op == reduce_op::dot ? y.data : x.data;
  if (!is_float(x.type)) {
    // Integers: the exact local result (int64, or errc::overflow), at weight 2^0.
    std::int64_t v = 0;
    reduce(op, x, y, &v, dtype::int64, options{b, opt.stream, accuracy::exact});
    std::int64_t d[2] = {v & 0xffffffffll, v >> 32};
    sg::place(d, 2, 0, ex::seen_not_neg_zero, x.size, s.words.data());
    return s;
  }
  if (b == backend::cuda) cuda::exact_state(op, x.type, x.data, yd, x.size, s.words.data(), opt.stream, device);
  else cpu::exact_state(op, x.type, x.data, yd, x.size, s.words.data());
  return s;
}

void partial_async(reduce_op op, array_ref x, array_ref y, std::int64_t* state_device, const options& opt) {
  std::string fn = std::string("partial_async (") + op_name(op) + ")";
  if (state_device == nullptr)
    throw error(errc::null_pointer, "tally::" + fn + ": state_device is a null pointer");
  validate::require_aligned(fn.c_str(), "state_device", state_device, alignof(std::int64_t), "int64 words, written by the GPU");
  if (opt.backend == backend::cpu)
    throw error(errc::invalid_argument, "tally::" + fn + " runs on the CUDA backend only; use tally::partial for the CPU backend");
  if (!is_float(x.type))
    throw error(errc::invalid_argument, "tally::" + fn + ": x must be float32 or float64, not " + dtype_name(x.type) +
                                            " (use tally::partial for integers)");
  int device = -1;
  detail::check_reduce(op, x, y, backend::cuda, device);
  const void* yd = op == reduce_op::dot ? y.data : x.data;
  cuda::exact_state_async(op, x.type, x.data, yd, x.size, state_device, opt.stream, device);
}

void normalize(exact_state& s) noexcept { sg::canonicalize(s.words.data()); }

exact_state merge(const exact_state& a, const exact_state& b) noexcept {
  exact_state r;
  for (int k = 0; k < exact_state::size; ++k) r.words[k] = a.words[k] + b.words[k];
  normalize(r);
  return r;
}

void round(const exact_state& s, void* result, dtype t) {
  need_result("round", result);
  std::int64_t w[sg::kSize];
  std::memcpy(w, s.words.data(), sizeof w);
  unsigned flags = sg::flags_of(w);
  if (t == dtype::int64) {
    if (flags & (ex::seen_nan | ex::seen_pos_inf | ex::seen_neg_inf))
      throw error(errc::invalid_argument, "tally::round: the state holds NaN or an infinity, which no int64 can hold");
    ex::normalize(w, sg::kDigits);
    bool neg = w[sg::kDigits - 1] < 0;
    if (neg) negate(w, sg::kDigits);
    constexpr int unit = -sg::kBase / 32;  // the digit of weight 2^0
    for (int i = 0; i < unit; ++i)
      if (w[i] != 0) throw error(errc::invalid_argument, "tally::round: the state's value is not an integer");
    for (int i = unit + 2; i < sg::kDigits; ++i)
      if (w[i] != 0) throw error(errc::overflow, "tally::round: the exact integer result does not fit in int64 (integer overflow)");
    std::uint64_t mag = static_cast<std::uint64_t>(w[unit]) | (static_cast<std::uint64_t>(w[unit + 1]) << 32);
    if (mag > (neg ? std::uint64_t(1) << 63 : static_cast<std::uint64_t>(INT64_MAX)))
      throw error(errc::overflow, "tally::round: the exact integer result does not fit in int64 (integer overflow)");
    put(result, neg ? static_cast<std::int64_t>(0 - mag) : static_cast<std::int64_t>(mag));
    return;
  }
  if (!is_float(t))
    throw error(errc::invalid_argument, std::string("tally::round: the result is float32, float64 or int64, not ") + dtype_name(t));
  if (s.terms() == 0 && flags == 0) {  // nothing was summed: +0 (the sum of nothing)
    std::memset(result, 0, dtype_size(t));
    return;
  }
  if (t == dtype::float32) put(result, ex::round_span<float>(w, sg::kDigits, sg::kBase, flags));
  else put(result, ex::round_span<double>(w, sg::kDigits, sg::kBase, flags));
}

void round_mean(const exact_state& s, void* result, dtype t) {
  need_result("round_mean", result);
  need_float("round_mean", t);
  if (s.terms() < 0) throw error(errc::invalid_argument, "tally::round_mean: the state's term count is negative");
  if (s.terms() == 0) {  // NumPy: the mean of nothing is NaN
    if (t == dtype::float32) put(result, std::numeric_limits<float>::quiet_NaN());
    else put(result, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  std::int64_t w[sg::kSize];
  std::memcpy(w, s.words.data(), sizeof w);
  unsigned flags = sg::flags_of(w);
  auto n = static_cast<std::uint64_t>(s.terms());
  if (t == dtype::float32) put(result, ex::divide_round<float>(w, sg::kDigits, sg::kBase, flags, n));
  else put(result, ex::divide_round<double>(w, sg::kDigits, sg::kBase, flags, n));
}

void round_sqrt(const exact_state& s, void* result, dtype t) {
  need_result("round_sqrt", result);
  need_float("round_sqrt", t);
  std::int64_t w[sg::kSize];
  std::memcpy(w, s.words.data(), sizeof w);
  unsigned flags = sg::flags_of(w);
  if (s.terms() == 0 && flags == 0) {  // the norm of nothing is +0
    std::memset(result, 0, dtype_size(t));
    return;
  }
  ex::normalize(w, sg::kDigits);
  if (w[sg::kDigits - 1] < 0 && !(flags & (ex::seen_nan | ex::seen_pos_inf | ex::seen_neg_inf)))
    throw error(errc::invalid_argument, "tally::round_sqrt: the state's value is negative (not a sum of squares)");
  if (t == dtype::float32) put(result, ex::sqrt_round<float>(w, sg::kDigits, sg::kBase, flags));
  else put(result, ex::sqrt_round<double>(w, sg::kDigits, sg::kBase, flags));
}

void round_variance(const exact_state& s1, const exact_state& s2, std::int64_t ddof, bool take_sqrt, void* result,
                    dtype t) {
  const char* fn = take_sqrt ? "round_variance (std)" : "round_variance";
  need_result(fn, result);
  need_float(fn, t);
  if (s1.terms() != s2.terms())
    throw error(errc::invalid_argument, std::string("tally::") + fn + ": s1 holds " + std::to_string(s1.terms()) +
                                            " terms and s2 " + std::to_string(s2.terms()) +
                                            "; they must be the sum and the sum of squares of the same data");
  auto nan = [&] {
    if (t == dtype::float32) put(result, std::numeric_limits<float>::quiet_NaN());
    else put(result, std::numeric_limits<double>::quiet_NaN());
  };
  const __int128 n = s1.terms(), m2 = n - ddof;
  std::int64_t w1[sg::kSize], w2[sg::kSize];
  std::memcpy(w1, s1.words.data(), sizeof w1);
  std::memcpy(w2, s2.words.data(), sizeof w2);
  unsigned flags = sg::flags_of(w1) | sg::flags_of(w2);
  if (n <= 0 || m2 <= 0 || m2 > std::numeric_limits<std::int64_t>::max() ||
      (flags & (ex::seen_nan | ex::seen_pos_inf | ex::seen_neg_inf)))
    return nan();
  bool neg1 = false, neg2 = false;
  ops::big::nat i1 = ops::big::from_digits(w1, sg::kDigits, neg1);
  ops::big::nat i2 = ops::big::from_digits(w2, sg::kDigits, neg2);
  if (neg2) throw error(errc::invalid_argument, std::string("tally::") + fn + ": s2 is negative (not a sum of squares)");
  // Both on the grid's weights 2^(32 i + kBase): B2 - 2 B1 = -kBase, a multiple of 32.
  auto un = static_cast<std::uint64_t>(n), um = static_cast<std::uint64_t>(m2);
  if (t == dtype::float32) put(result, ex::variance_round<float>(i1, sg::kBase, i2, sg::kBase, un, um, take_sqrt));
  else put(result, ex::variance_round<double>(i1, sg::kBase, i2, sg::kBase, un, um, take_sqrt));
}

}  // namespace tally
