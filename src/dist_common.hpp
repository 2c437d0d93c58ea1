// What tally::mpi and tally::nccl share: the verdict that travels beside each rank's partial
// result (so that a failure on one rank reaches every rank instead of leaving them waiting in
// a collective), and the combination of per-rank (value, first index) records of min / max.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tally/core.hpp"
#include "tally/ops/extremes.hpp"
#include "validate.hpp"

namespace tally::dist {

constexpr int kErrcs = 8;  // errc values
constexpr int kTypes = dtype_count;  // dtype values

// What travels beside a state or a fast partial: how many ranks failed with each errc, and
// how many passed each element type (so that every rank sees the same verdict).
struct verdict {
  std::int64_t failed[kErrcs] = {};
  std::int64_t types[kTypes] = {};
};

inline bool floating(dtype t) { return t == dtype::float32 || t == dtype::float64; }

// `root` is a rank of a communicator of `size` ranks, or -1 (the API's `all`: every rank
// receives). api: "tally::mpi" or "tally::nccl"; fn: the function's name.
inline void check_root(const char* api, const std::string& fn, int root, int size) {
  if (root != -1 && (root < 0 || root >= size))
    throw error(errc::invalid_argument, std::string(api) + "::" + fn + ": root " + std::to_string(root) +
                                            " is not a rank of the communicator (size " + std::to_string(size) +
                                            ", or " + api + "::all)");
}

// The result types a reduction may give: floating inputs (or float_only operations) a
// float32/float64 result, integer inputs int64.
inline void check_result(const char* api, const std::string& fn, dtype in, dtype out, bool float_only) {
  bool ok = (floating(in) || float_only) ? floating(out) : out == dtype::int64;
  if (!ok)
    throw error(errc::invalid_argument, std::string(api) + "::" + fn + ": " + validate::a_dtype(in) +
                                            " input cannot give " + validate::a_dtype(out) + " result");
}

// Runs the local step; a tally::error (or any exception) is recorded, not thrown, so this
// rank still joins the collective.
struct local_failure {
  bool failed = false;
  errc code = errc::invalid_argument;
  std::string what;
};
template <class F> local_failure attempt(F&& f) {
  local_failure e;
  try {
    f();
  } catch (const error& x) {
    e = {true, x.code(), x.what()};
  } catch (const std::exception& x) {
    e = {true, errc::invalid_argument, x.what()};
  }
  return e;
}

inline void record(verdict& v, const local_failure& e, dtype t) {
  if (e.failed) v.failed[static_cast<int>(e.code)] = 1;
  v.types[static_cast<int>(t)] = 1;
}

inline const char* errc_name(int k) {
  static const char* names[kErrcs] = {"invalid_argument", "length_mismatch", "null_pointer", "wrong_memory",
                                      "overflow (integer overflow)", "cuda_error", "no_gpu", "empty_input"};
  return k >= 0 && k < kErrcs ? names[k] : "?";
}

// After the collective: every rank throws when any rank failed or the types differ.
inline void judge(const verdict& v, const local_failure& mine, const std::string& fn) {
  if (mine.failed) throw error(mine.code, mine.what);
  std::int64_t ranks = 0;
  int first = -1;
  for (int k = 0; k < kErrcs; ++k)
    if (v.failed[k]) {
      ranks += v.failed[k];
      if (first < 0) first = k;
    }
  if (first >= 0)
    throw error(static_cast<errc>(first), fn + ": " + std::to_string(ranks) +
                                              " other rank(s) failed (errc::" + errc_name(first) +
                                              "); their own errors name the problem");
  int kinds = 0;
  for (int k = 0; k < kTypes; ++k) kinds += v.types[k] != 0;
  if (kinds > 1)
    throw error(errc::invalid_argument, fn + ": the ranks passed arrays of different element types");
}

// One rank's contribution to a distributed extreme.
struct record_t {
  std::int64_t value_bits;  // the local extreme's bytes (x's type), zero-extended
  std::int64_t index;       // its local first index, -1 when none
  std::int64_t n;           // the local length
  std::int64_t failed;      // errc + 1 of a local failure, else 0
  std::int64_t type;        // dtype
};

// The verdict of gathered extreme records: how many ranks failed with each errc, which types
// took part.
inline verdict verdict_of(const std::vector<record_t>& recs) {
  verdict v;
  for (const record_t& r : recs) {
    if (r.failed) v.failed[r.failed - 1] += 1;
    if (r.type >= 0 && r.type < kTypes) v.types[r.type] = 1;
  }
  return v;
}

template <class T, bool MAX, bool SKIP>
inline void combine_records(const std::vector<record_t>& recs, void* value, std::int64_t* index) {
  using R = ops::extreme_reducer<T, MAX, SKIP>;
  typename R::acc_t acc = R::identity();
  std::int64_t offset = 0;
  for (const record_t& r : recs) {  // rank order: global index = local index + offset
    if (r.index >= 0) {
      T v;
      std::memcpy(&v, &r.value_bits, sizeof v);
      typename R::acc_t a = R::identity();
      if (ops::is_nan(v)) a.nan_index = offset + r.index;  // propagate: the rank's first NaN
      else {
        a.value = v;
        a.index = offset + r.index;
      }
      acc = R::combine(acc, a);
    }
    offset += r.n;
  }
  int status = 0;
  auto res = R::finalize(acc, status);
  if (res.index == ops::kNoIndex) {  // empty, or only NaN skipped: tally::extreme's answer
    *index = -1;
    T v = offset > 0 && !std::numeric_limits<T>::is_integer ? std::numeric_limits<T>::quiet_NaN() : R::empty_value();
    std::memcpy(value, &v, sizeof v);
  } else {
    *index = res.index;
    std::memcpy(value, &res.value, sizeof res.value);
  }
}

/// The element types the distributed functions take (those of exact_state).
inline void require_supported(dtype t, const std::string& fn) {
  if (t != dtype::float32 && t != dtype::float64 && t != dtype::int32 && t != dtype::int64)
    throw error(errc::invalid_argument, fn + ": distributed reductions take float32, float64, int32 and int64 data, not " +
                                            dtype_name(t));
}

template <class T>
inline void combine_any(extreme_op op, nan_policy nans, const std::vector<record_t>& recs, void* value, std::int64_t* index) {
  bool mx = op == extreme_op::max, skip = nans == nan_policy::omit;
  if (mx && skip) combine_records<T, true, true>(recs, value, index);
  else if (mx) combine_records<T, true, false>(recs, value, index);
  else if (skip) combine_records<T, false, true>(recs, value, index);
  else combine_records<T, false, false>(recs, value, index);
}


}  // namespace tally::dist
