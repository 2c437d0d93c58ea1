// tally::mpi (include/tally/mpi.hpp): local reductions with tally's kernels, combined across
// ranks by MPI collectives on plain integers (exact states) or gathered (value, index) pairs.
#include "tally/mpi.hpp"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dist_common.hpp"

namespace tally::mpi {
namespace {

using namespace tally::dist;

void mpi_check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw error(errc::invalid_argument, std::string("tally::mpi: ") + call + " failed: " + std::string(text, len));
  }
}

struct comm_info {
  int rank, size;
};

comm_info info(MPI_Comm comm, const std::string& fn, int root) {
  if (comm == MPI_COMM_NULL) throw error(errc::invalid_argument, "tally::mpi::" + fn + ": comm is MPI_COMM_NULL");
  comm_info c{};
  mpi_check(MPI_Comm_rank(comm, &c.rank), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(comm, &c.size), "MPI_Comm_size");
  static_assert(all == -1);
  check_root("tally::mpi", fn, root, c.size);
  return c;
}

void check_result(const std::string& fn, dtype in, dtype out, bool float_only) {
  dist::check_result("tally::mpi", fn, in, out, float_only);
}

// The exact path: local state, one integer-sum collective of [state words, verdict], then
// `finish` on the receiving ranks.
template <class Local, class Finish>
bool exact_path(MPI_Comm comm, const std::string& fn, int root, dtype t, Local&& local, Finish&& finish) {
  comm_info c = info(comm, fn, root);
  constexpr int W = exact_state::size, V = kErrcs + kTypes;
  std::int64_t send[W + V] = {}, recv[W + V] = {};
  exact_state s;
  local_failure mine = attempt([&] {
    require_supported(t, "tally::mpi::" + fn);
    s = local();
  });
  if (mine.failed) s = exact_state{};
  verdict v;
  record(v, mine, t);
  std::memcpy(send, s.words.data(), sizeof(std::int64_t) * W);
  std::memcpy(send + W, &v, sizeof v);
  if (root == all) mpi_check(MPI_Allreduce(send, recv, W + V, MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce");
  else mpi_check(MPI_Reduce(send, recv, W + V, MPI_INT64_T, MPI_SUM, root, comm), "MPI_Reduce");
  bool receives = root == all || root == c.rank;
  if (!receives) {
    if (mine.failed) throw error(mine.code, mine.what);
    return false;
  }
  std::memcpy(static_cast<void*>(&v), recv + W, sizeof v);
  judge(v, mine, "tally::mpi::" + fn);
  exact_state merged;
  std::memcpy(merged.words.data(), recv, sizeof(std::int64_t) * W);
  normalize(merged);
  finish(merged);
  return true;
}

}  // namespace

exact_state merge(MPI_Comm comm, const exact_state& local, int root) {
  comm_info c = info(comm, "merge", root);
  exact_state r;
  if (root == all)
    mpi_check(MPI_Allreduce(local.words.data(), r.words.data(), exact_state::size, MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce");
  else
    mpi_check(MPI_Reduce(local.words.data(), r.words.data(), exact_state::size, MPI_INT64_T, MPI_SUM, root, comm), "MPI_Reduce");
  if (root != all && root != c.rank) return local;
  normalize(r);
  return r;
}

bool reduce(MPI_Comm comm, reduce_op op, array_ref x, array_ref y, void* result, dtype rt, int root, const options& opt) {
  const std::string fn = op == reduce_op::sum ? "sum" : "dot";
  if (opt.accuracy == accuracy::fast && floating(x.type)) {
    // Fast: each rank's float64 fast result, summed as doubles (not reproducible).
    comm_info c = info(comm, fn, root);
    constexpr int V = kErrcs + kTypes;
    double send[1 + V] = {}, recv[1 + V] = {};
    local_failure mine = attempt([&] {
      require_supported(x.type, "tally::mpi::" + fn);
      check_result(fn, x.type, rt, true);
      if (root == all || root == c.rank)
        if (result == nullptr) throw error(errc::null_pointer, "tally::mpi::" + fn + ": result is a null pointer");
      tally::reduce(op, x, y, &send[0], dtype::float64, opt);
    });
    if (mine.failed) send[0] = 0;
    verdict v;
    record(v, mine, x.type);
    for (int k = 0; k < kErrcs; ++k) send[1 + k] = static_cast<double>(v.failed[k]);
    for (int k = 0; k < kTypes; ++k) send[1 + kErrcs + k] = static_cast<double>(v.types[k]);
    if (root == all) mpi_check(MPI_Allreduce(send, recv, 1 + V, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce");
    else mpi_check(MPI_Reduce(send, recv, 1 + V, MPI_DOUBLE, MPI_SUM, root, comm), "MPI_Reduce");
    if (root != all && root != c.rank) {
      if (mine.failed) throw error(mine.code, mine.what);
      return false;
    }
    for (int k = 0; k < kErrcs; ++k) v.failed[k] = static_cast<std::int64_t>(recv[1 + k]);
    for (int k = 0; k < kTypes; ++k) v.types[k] = static_cast<std::int64_t>(recv[1 + kErrcs + k]);
    judge(v, mine, "tally::mpi::" + fn);
    if (rt == dtype::float32) {
      float f = static_cast<float>(recv[0]);
      std::memcpy(result, &f, sizeof f);
    } else {
      std::memcpy(result, &recv[0], sizeof(double));
    }
    return true;
  }
  return exact_path(
      comm, fn, root, x.type,
      [&] {
        check_result(fn, x.type, rt, false);
        return partial(op, x, y, opt);
      },
      [&](const exact_state& s) {
        if (result == nullptr) throw error(errc::null_pointer, "tally::mpi::" + fn + ": result is a null pointer");
        round(s, result, rt);
      });
}

bool mean(MPI_Comm comm, array_ref x, void* result, dtype rt, int root, const options& opt) {
  return exact_path(
      comm, "mean", root, x.type,
      [&] {
        check_result("mean", x.type, rt, true);
        return partial(reduce_op::sum, x, {}, opt);
      },
      [&](const exact_state& s) {
        if (result == nullptr) throw error(errc::null_pointer, "tally::mpi::mean: result is a null pointer");
        round_mean(s, result, rt);
      });
}

bool norm2(MPI_Comm comm, array_ref x, void* result, dtype rt, int root, const options& opt) {
  return exact_path(
      comm, "norm2", root, x.type,
      [&] {
        if (!floating(x.type))
          throw error(errc::invalid_argument, std::string("tally::mpi::norm2: x must be float32 or float64, not ") + dtype_name(x.type));
        check_result("norm2", x.type, rt, true);
        return partial(reduce_op::dot, x, x, opt);  // the exact sum of squares (x read once on the GPU)
      },
      [&](const exact_state& s) {
        if (result == nullptr) throw error(errc::null_pointer, "tally::mpi::norm2: result is a null pointer");
        round_sqrt(s, result, rt);
      });
}

bool extreme(MPI_Comm comm, extreme_op op, nan_policy nans, array_ref x, void* value, std::int64_t* index, int root,
             const options& opt) {
  const std::string fn = std::string(nans == nan_policy::omit ? "nan" : "") + (op == extreme_op::max ? "max" : "min");
  comm_info c = info(comm, fn, root);
  record_t mine{0, -1, x.size, 0, static_cast<std::int64_t>(x.type)};
  local_failure failure = attempt([&] {
    require_supported(x.type, "tally::mpi::" + fn);
    if ((root == all || root == c.rank) && (value == nullptr || index == nullptr))
      throw error(errc::null_pointer, "tally::mpi::" + fn + ": value or index is a null pointer");
    std::int64_t v = 0, i = -1;
    tally::extreme(op, nans, x, &v, &i, opt);
    mine.value_bits = v;
    mine.index = i;
  });
  if (failure.failed) {
    mine.failed = static_cast<std::int64_t>(failure.code) + 1;
    mine.index = -1;
    mine.n = 0;
  }
  constexpr int R = sizeof(record_t) / sizeof(std::int64_t);
  std::vector<record_t> recs(static_cast<std::size_t>(c.size));
  if (root == all) mpi_check(MPI_Allgather(&mine, R, MPI_INT64_T, recs.data(), R, MPI_INT64_T, comm), "MPI_Allgather");
  else mpi_check(MPI_Gather(&mine, R, MPI_INT64_T, recs.data(), R, MPI_INT64_T, root, comm), "MPI_Gather");
  if (root != all && root != c.rank) {
    if (failure.failed) throw error(failure.code, failure.what);
    return false;
  }
  judge(verdict_of(recs), failure, "tally::mpi::" + fn);
  switch (x.type) {
    default: break;  // (refused by require_supported above)
    case dtype::float32: combine_any<float>(op, nans, recs, value, index); break;
    case dtype::float64: combine_any<double>(op, nans, recs, value, index); break;
    case dtype::int32: combine_any<std::int32_t>(op, nans, recs, value, index); break;
    case dtype::int64: combine_any<std::int64_t>(op, nans, recs, value, index); break;
  }
  return true;
}

}  // namespace tally::mpi
