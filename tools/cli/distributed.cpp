// tally CLI: `--distributed` (tally::mpi). Each rank reads its slice of the .npy file(s) and
// reduces it on the CPU backend (--backend auto or cpu) or, with --backend cuda, on a GPU of
// its node (node-local rank modulo the GPU count; the slice copied there once); tally::mpi
// merges the exact states (or gathers the extremes) and rank 0 prints.
#include <fmt/core.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "array.hpp"
#include "cuda_staging.hpp"
#include "distributed.hpp"
#include "format.hpp"
#include "npy.hpp"
#include "tally/mpi.hpp"

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
    default: break;  // (tally::mpi takes only the four types above)
  }
  return 0.0;
}

// The reduction itself; every rank calls it (collective); the result is valid on rank 0.
// a and b: this rank's parts, in host memory (cpu) or device memory (cuda).
outcome reduce_parts(const dist_request& r, tally::array_ref a, tally::array_ref b, std::int64_t total, tally::backend be) {
  namespace tm = tally::mpi;
  MPI_Comm w = MPI_COMM_WORLD;
  tally::options opt{be, nullptr, r.accuracy == "fast" ? tally::accuracy::fast : tally::accuracy::exact};
  alignas(8) unsigned char v[8] = {};
  if (r.cmd == "sum" || r.cmd == "dot") {
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
  scalar s = as_scalar(a.type, v);
  return {repr(s), json_number(s), a.type};
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
    // (min and max still report the file's type)
    given = a.type();
    try {
      a = widen_to_core(std::move(a), "--distributed", offset);
      if (r.cmd == "dot") b = widen_to_core(std::move(b), "--distributed", offset);
    } catch (const std::invalid_argument& e) {
      throw npy::error(fmt::format("{}: {}", r.a, e.what()));
    }
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
      outcome o = gpu ? reduce_parts(r, da->ref(), db ? db->ref() : tally::array_ref{}, total, tally::backend::cuda)
                      : reduce_parts(r, a.ref(), b.ref(), total, tally::backend::cpu);
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
    } catch (const std::exception& e) {  // tally::error: every rank has one
      code = 1;
      message = e.what();
    }
  }
  // Print each failure once: rank 0's (every rank shares a library error, and most reading
  // errors), else those of the ranks that failed alone (a truncated slice, say).
  int rank0_failed = rank == 0 && !message.empty();
  MPI_Bcast(&rank0_failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!message.empty() && (rank == 0 || !rank0_failed)) {
    std::string_view what = message;
    if (what.starts_with("tally::")) what.remove_prefix(7);
    std::fprintf(stderr, "tally: %s%.*s\n", size > 1 && rank != 0 ? fmt::format("rank {}: ", rank).c_str() : "",
                 static_cast<int>(what.size()), what.data());
  }
  int exit_code = 0;
  MPI_Allreduce(&code, &exit_code, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  da.reset();
  db.reset();
  if (!already) MPI_Finalize();
  return exit_code;
}

}  // namespace tally_cli
