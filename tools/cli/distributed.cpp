// tally CLI: `--distributed` (tally::mpi). Each rank reads its slice of the .npy file(s) and
// reduces it on the CPU backend (--backend auto or cpu) or, with --backend cuda, on a GPU of
// its node (node-local rank modulo the GPU count; the slice copied there once); tally::mpi
// merges the exact states (or gathers the extremes) and rank 0 prints.
#include <fmt/core.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "array.hpp"
#include "cuda_staging.hpp"
#include "distributed.hpp"
#include "format.hpp"
#include "npy.hpp"
#include "tally/mpi.hpp"
#include "tally/ops/small.hpp"
#include "tally/state.hpp"

namespace tally_cli {
namespace {

struct outcome {
  std::string text, json;
  tally::dtype type;
};

bool is_float(tally::dtype t) { return t == tally::dtype::float32 || t == tally::dtype::float64; }

scalar as_scalar(tally::dtype t, const unsigned char* p) {
  auto get = [p](auto v) { std::memcpy(&v, p, sizeof v); return v; };
  switch (t) {
    case tally::dtype::float32: return get(float{});
    case tally::dtype::float64: return get(double{});
    case tally::dtype::int32: return std::int64_t{get(std::int32_t{})};
    case tally::dtype::int64: return get(std::int64_t{});
    case tally::dtype::uint64: return get(std::uint64_t{});
    default: break;  // (tally::mpi takes only float32, float64, int32 and int64)
  }
  return 0.0;
}

constexpr std::uint64_t kBias = std::uint64_t(1) << 63;

/// uint64 data as int64 with the order kept, x - 2^63 (the top bit flipped), for min, max,
/// argmin and argmax (tally::mpi takes int64; the shape layer does the same). The value found
/// is flipped back; the indexes and ties are those of the uint64 data.
host_array biased(const host_array& u) {
  const auto& v = std::get<std::vector<std::uint64_t>>(u.data);
  host_array out = make_array(tally::dtype::int64, u.shape);
  auto& o = std::get<std::vector<std::int64_t>>(out.data);
  for (std::size_t i = 0; i < v.size(); ++i) o[i] = static_cast<std::int64_t>(v[i] ^ kBias);
  return out;
}

/// v as a 192-bit integer: the exact accumulators of ops::sum_reducer and ops::dot_reducer
/// (128 bits signed or unsigned, or already 192).
tally::ops::i192 as_i192(tally::ops::i128 v) { return tally::ops::make_i192(v); }
tally::ops::i192 as_i192(tally::ops::u128 v) {
  return {static_cast<std::uint64_t>(v), static_cast<std::uint64_t>(v >> 64), 0};
}
tally::ops::i192 as_i192(tally::ops::i192 v) { return v; }

/// The exact integer sum (b null) or dot product of a part (integer elements, host memory,
/// b of a's type) by the library's own reducers: products exact in 64 or 128 bits, their sum
/// in 128 or 192 bits (ops::dot_reducer; uint64 products up to 2^128 - 2^65 + 1 included).
tally::ops::i192 exact_integer(const host_array& a, const host_array* b) {
  tally::ops::i192 total;
  std::visit([&](const auto& v) {
    using E = typename std::decay_t<decltype(v)>::value_type;
    if constexpr (std::is_integral_v<E>) {
      if (b) {
        using R = tally::ops::dot_reducer<E>;
        const auto& w = std::get<std::vector<E>>(b->data);
        typename R::acc_t acc = R::identity();
        for (std::size_t i = 0; i < v.size(); ++i) R::accumulate(acc, v[i], w[i]);
        total = as_i192(acc);
      } else {
        using R = tally::ops::sum_reducer<E>;
        typename R::acc_t acc = R::identity();
        for (E e : v) R::accumulate(acc, e);
        total = as_i192(acc);
      }
    }
  }, a.data);
  return total;
}

/// The exact state of this rank's integer sum (op sum; hb unused) or dot product of its part
/// (int32, int64 or uint64 `ha` and `hb`, in host memory; x and y the same part where it is
/// reduced, host or device memory). The library's own state; where that refuses (uint64, or
/// an int32 or int64 part whose own result does not fit int64, though the whole one may) the
/// part's result is taken exactly in 192 bits here (exact_integer) and entered as six float64
/// limbs (32 bits each, so every limb is exact): the same value on the same grid, the term
/// count (word terms_word, include/tally/state.hpp) set to the part's length for the mean.
tally::exact_state integer_state(tally::reduce_op op, const host_array& ha, const host_array& hb, tally::array_ref x,
                                 tally::array_ref y, const tally::options& opt) {
  if (ha.type() != tally::dtype::uint64) {
    try {
      return tally::partial(op, x, y, opt);
    } catch (const tally::error& e) {
      if (e.code() != tally::errc::overflow) throw;
    }
  }
  if (ha.size() == 0) return {};
  const tally::ops::i192 v = exact_integer(ha, op == tally::reduce_op::dot ? &hb : nullptr);
  const std::uint64_t words[3] = {v.lo, v.mid, static_cast<std::uint64_t>(v.hi)};
  double limbs[6];
  for (int k = 0; k < 6; ++k) {
    const auto bits = static_cast<std::uint32_t>(words[k / 2] >> (32 * (k % 2)));
    // the top limb signed (two's complement), the others unsigned
    limbs[k] = std::ldexp(k == 5 ? static_cast<double>(static_cast<std::int32_t>(bits)) : static_cast<double>(bits), 32 * k);
  }
  tally::exact_state st = tally::partial(tally::reduce_op::sum, {limbs, 6, tally::dtype::float64, tally::memory::host},
                                         {}, {tally::backend::cpu});
  st.words[tally::exact_state::terms_word] = ha.size();
  return st;
}

/// Integer sum, mean and dot: the ranks' exact states (integer_state) merged on rank 0
/// (tally::mpi::merge) and rounded once there: the sum and dot to int64 (uint64 for unsigned
/// data: `given`, the file's type, as one process), the mean to float64. So only the whole
/// result must fit, as in one process. A local failure is shared first, so that no rank waits
/// in the merge.
outcome integer_reduce(const dist_request& r, tally::dtype given, const host_array& ha, const host_array& hb,
                       tally::array_ref x, tally::array_ref y, const tally::options& opt) {
  MPI_Comm w = MPI_COMM_WORLD;
  const tally::reduce_op op = r.cmd == "dot" ? tally::reduce_op::dot : tally::reduce_op::sum;
  std::optional<tally::error> failed;
  tally::exact_state st;
  try {
    st = integer_state(op, ha, hb, x, y, opt);
  } catch (const tally::error& e) {
    failed = e;
  } catch (const std::exception& e) {  // (out of memory, say)
    failed = tally::error(tally::errc::invalid_argument, e.what());
  }
  int mine = failed ? 1 : 0, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, w);
  if (failed) throw *failed;
  if (any) throw tally::error(tally::errc::invalid_argument, "tally::" + r.cmd + ": other rank(s) failed; their own errors name the problem");
  st = tally::mpi::merge(w, st, 0);
  int rank = 0;
  MPI_Comm_rank(w, &rank);
  if (rank != 0) return {};
  if (r.cmd == "mean") {
    double m = 0;
    tally::round_mean(st, &m, tally::dtype::float64);
    return {repr(scalar(m)), json_number(scalar(m)), tally::dtype::float64};
  }
  const tally::dtype rt = tally::result_dtype(op, given);
  const bool u = rt == tally::dtype::uint64;
  std::int64_t v = 0;
  try {
    if (u) {  // the result minus 2^63 fits int64 exactly when the result fits uint64
      const double minus_bias = -std::ldexp(1.0, 63);
      st = tally::merge(st, tally::partial(tally::reduce_op::sum, {&minus_bias, 1, tally::dtype::float64, tally::memory::host},
                                           {}, {tally::backend::cpu}));
    }
    tally::round(st, &v, tally::dtype::int64);
  } catch (const tally::error& e) {
    if (e.code() != tally::errc::overflow) throw;
    // as one process words it (the merged state's rounding would say "round")
    throw tally::error(e.code(), fmt::format("tally::{}: the exact {} result does not fit in {} (integer overflow)", r.cmd,
                                             tally::dtype_name(given), tally::dtype_name(rt)));
  }
  scalar s = u ? scalar(static_cast<std::uint64_t>(v) ^ kBias) : scalar(v);
  return {repr(s), json_number(s), rt};
}

// The reduction itself; every rank calls it (collective); the result is valid on rank 0.
// a and b: this rank's parts, in host memory (cpu) or device memory (cuda); host_a, host_b:
// the same parts in host memory. given: the file's element type (dot: the two files' common
// type; uint64 for min and max reaches here biased).
outcome reduce_parts(const dist_request& r, tally::array_ref a, tally::array_ref b, const host_array& host_a,
                     const host_array& host_b, tally::dtype given, std::int64_t total, tally::backend be) {
  namespace tm = tally::mpi;
  MPI_Comm w = MPI_COMM_WORLD;
  tally::options opt{be, nullptr, r.accuracy == "fast" ? tally::accuracy::fast : tally::accuracy::exact};
  alignas(8) unsigned char v[8] = {};
  if ((r.cmd == "sum" || r.cmd == "mean" || r.cmd == "dot") && !is_float(a.type))
    return integer_reduce(r, given, host_a, host_b, a, b, opt);
  if (r.cmd == "sum" || r.cmd == "dot") {  // (floating: no overflow error)
    tally::reduce_op op = r.cmd == "sum" ? tally::reduce_op::sum : tally::reduce_op::dot;
    tally::dtype rt = tally::result_dtype(op, a.type);
    tm::reduce(w, op, a, op == tally::reduce_op::dot ? b : tally::array_ref{}, v, rt, 0, opt);
    scalar s = as_scalar(rt, v);
    return {repr(s), json_number(s), rt};
  }
  if (r.cmd == "mean" || r.cmd == "norm") {
    tally::dtype rt = a.type == tally::dtype::float32 ? tally::dtype::float32 : tally::dtype::float64;
    if (r.cmd == "mean") tm::mean(w, a, v, rt, 0, opt);
    else tm::norm2(w, a, v, rt, 0, opt);
    scalar s = as_scalar(rt, v);
    return {repr(s), json_number(s), rt};
  }
  bool mx = r.cmd == "max" || r.cmd == "argmax";
  std::int64_t index = -1;
  tally::nan_policy nans = r.skip_nan ? tally::nan_policy::omit : tally::nan_policy::propagate;
  tm::extreme(w, mx ? tally::extreme_op::max : tally::extreme_op::min, nans, a, v, &index, 0, opt);
  int rank = 0;
  MPI_Comm_rank(w, &rank);
  if (r.cmd.starts_with("arg")) {
    if (rank == 0 && index < 0)
      throw npy::error(fmt::format("{}: {}{}: {}", r.a, r.skip_nan ? "nan" : "", r.cmd,
                                   total == 0 ? "the input is empty, so there is no index"
                                              : "the input holds only NaN, so there is no index"));
    return {std::to_string(index), std::to_string(index), tally::dtype::int64};
  }
  if (given == tally::dtype::uint64) {  // (biased: flipped back)
    std::uint64_t u = 0;
    std::memcpy(&u, v, sizeof u);
    u ^= kBias;
    std::memcpy(v, &u, sizeof u);
  }
  scalar s = as_scalar(given == tally::dtype::uint64 ? given : a.type, v);
  return {repr(s), json_number(s), a.type};
}

// Every rank's failure message (empty: none) goes to rank 0, which prints the first in rank
// order (so the first in the file, where ranks fail on their slices) as one process prints its
// error: "tally: MESSAGE", one line, no rank prefix, whichever rank's slice held the problem.
// A message that only relays another rank's failure ("N other rank(s) failed ...") is printed
// only when no rank has one of its own. Collective.
void print_failures(const std::string& message, int rank, int size) {
  int len = static_cast<int>(message.size());
  std::vector<int> lens(static_cast<std::size_t>(rank == 0 ? size : 0)), at(lens.size());
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank == 0) {
    int sum = 0;
    for (std::size_t i = 0; i < lens.size(); ++i) at[i] = std::exchange(sum, sum + lens[i]);
    all.resize(static_cast<std::size_t>(sum));
  }
  MPI_Gatherv(message.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  std::string own, relay;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    std::string m = all.substr(static_cast<std::size_t>(at[i]), static_cast<std::size_t>(lens[i]));
    if (m.starts_with("tally::")) m.erase(0, 7);
    std::string& first = m.find("other rank(s) failed") != std::string::npos ? relay : own;
    if (first.empty()) first = m;
  }
  if (!own.empty() || !relay.empty()) std::fprintf(stderr, "tally: %s\n", (own.empty() ? relay : own).c_str());
}

// This process's rank on its node (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED; for
// OpenMPI the same as OMPI_COMM_WORLD_LOCAL_RANK). Collective over MPI_COMM_WORLD.
int node_local_rank(int world_rank) {
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return world_rank;
  int local = world_rank;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  return local;
}

}  // namespace

int run_distributed(const dist_request& r) {
  int already = 0;
  MPI_Initialized(&already);
  if (!already) MPI_Init(nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int code = 0;
  std::string message;
  host_array a, b;
  tally::dtype given = tally::dtype::float64;  // the file's element type
  std::int64_t offset = 0, total = 0;
  // --backend cuda: one GPU per rank, the node-local rank modulo the node's GPU count (several
  // ranks may share one). auto keeps the CPU here: the parts are read into host memory, and
  // which ranks get which GPUs is the launcher's business, so the GPU is only used when asked.
  const bool gpu = r.backend == "cuda";
  const int local_rank = gpu ? node_local_rank(rank) : 0;
  std::optional<device_copy> da, db;  // the parts on the GPU (freed before MPI_Finalize)
  // Reading: every rank its slice. A failure on any rank stops every rank before the
  // reduction (an MPI_Allreduce of the exit codes), so none waits in a collective.
  try {
    auto npy_only = [](const std::string& p) {
      std::error_code ec;
      if (std::filesystem::exists(p, ec) && !npy::has_magic(p))
        throw npy::error(p + ": --distributed reads .npy files only (this is not one)");
    };
    npy_only(r.a);
    a = npy::read_slice(r.a, rank, size, offset, total);
    if (r.cmd == "dot") {
      npy_only(r.b);
      std::int64_t ob = 0, tb = 0;
      b = npy::read_slice(r.b, rank, size, ob, tb);
      if (tb != total)
        throw npy::error(fmt::format("{}: length mismatch: {} has {} elements, {} has {}", r.b, r.b, tb, r.a, total));
      tally::dtype t = promote(a.type(), b.type());
      a = convert(std::move(a), t);
      b = convert(std::move(b), t);
    }
    // the MPI layer reads float32, float64, int32 and int64: the other types widened exactly
    // (min and max still report the file's type, sum, mean and dot give its result type).
    // uint64: sum, mean and dot take it as it is (integer_reduce), min, max, argmin and
    // argmax biased to int64, norm as float64.
    given = a.type();
    if (given == tally::dtype::uint64) {
      if (r.cmd == "norm") a = convert(std::move(a), tally::dtype::float64);
      else if (r.cmd != "sum" && r.cmd != "mean" && r.cmd != "dot") a = biased(a);
    }
    a = widen_to_core(std::move(a));
    if (r.cmd == "dot") b = widen_to_core(std::move(b));
    if (r.cmd == "norm" && !is_float(a.type())) a = convert(std::move(a), tally::dtype::float64);
    if (gpu) {
      int gpus = gpu_count();
      if (gpus == 0)
        throw tally::error(tally::errc::no_gpu,
                           "--distributed --backend cuda: this rank sees no usable CUDA GPU (or this build of "
                           "tally has no CUDA support); use --backend cpu");
      use_gpu(local_rank % gpus);
      da.emplace(a.ref());
      if (r.cmd == "dot") db.emplace(b.ref());
    }
  } catch (const tally::error& e) {  // no GPU, a CUDA allocation or copy
    code = 1;
    message = e.what();
  } catch (const std::exception& e) {
    code = 2;
    message = e.what();
  }
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst == 0) {
    try {
      double t0 = MPI_Wtime();
      outcome o = gpu ? reduce_parts(r, da->ref(), db ? db->ref() : tally::array_ref{}, a, b, given, total, tally::backend::cuda)
                      : reduce_parts(r, a.ref(), b.ref(), a, b, given, total, tally::backend::cpu);
      double secs = MPI_Wtime() - t0;
      if (r.cmd == "min" || r.cmd == "max") o.type = given;
      if (rank == 0) {
        if (r.json)
          fmt::print("{}\n", json_object({{"value", o.json},
                                          {"dtype", json_string(tally::dtype_name(o.type))},
                                          {"n", std::to_string(total)},
                                          {"backend", json_string(gpu ? "cuda" : "cpu")},
                                          {"ranks", std::to_string(size)},
                                          {"seconds", repr(secs)}}));
        else
          fmt::print("{}\n", o.text);
      }
    } catch (const npy::error& e) {
      code = 2;
      message = e.what();
    } catch (const tally::error& e) {  // every rank has one
      code = 1;
      // an overflow names the operation and, as one process does, the file(s)
      message = e.code() == tally::errc::overflow
                    ? naming_files(e.what(), r.cmd == "dot" ? r.a + " and " + r.b : r.a)
                    : std::string(e.what());
    } catch (const std::exception& e) {
      code = 1;
      message = e.what();
    }
  }
  int exit_code = 0;
  MPI_Allreduce(&code, &exit_code, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (exit_code != 0) print_failures(message, rank, size);
  da.reset();
  db.reset();
  if (!already) MPI_Finalize();
  return exit_code;
}

}  // namespace tally_cli
