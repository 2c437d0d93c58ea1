// tally::nccl (include/tally/nccl.hpp): tally's local kernels, then NCCL collectives on
// device-resident exact states (ncclInt64 / ncclSum: the exact merge), fast float64 partials,
// or gathered (value, index) records.
#include "tally/nccl.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dist_common.hpp"

namespace tally::nccl {
namespace {

using namespace tally::dist;

constexpr int W = exact_state::size;  // state words
constexpr int V = kErrcs + kTypes;    // verdict words
static_assert(state_words == W + V);
constexpr int R = sizeof(record_t) / sizeof(std::int64_t);

void check(ncclResult_t r, const char* call) {
  if (r != ncclSuccess)
    throw error(errc::cuda_error, std::string("tally::nccl: ") + call + " failed: " + ncclGetErrorString(r));
}
void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw error(errc::cuda_error, std::string("tally::nccl: ") + call + " failed: " + cudaGetErrorName(e) + ": " +
                                      cudaGetErrorString(e));
}

// Makes the communicator's GPU current for the scope (and restores the caller's).
class on_device {
 public:
  explicit on_device(int dev) {
    check(cudaGetDevice(&old_), "cudaGetDevice");
    if (dev != old_) check(cudaSetDevice(dev), "cudaSetDevice");
  }
  ~on_device() { cudaSetDevice(old_); }
  on_device(const on_device&) = delete;
  on_device& operator=(const on_device&) = delete;

 private:
  int old_ = 0;
};

// Device and pinned host words per (device, stream), grown on demand, never freed.
struct scratch {
  std::int64_t* dev = nullptr;
  std::int64_t* host = nullptr;
  std::size_t words = 0;
};
scratch& scratch_for(int dev, stream_t stream, std::size_t words) {
  static std::mutex m;
  static std::map<std::pair<int, stream_t>, scratch> cache;
  std::lock_guard<std::mutex> lock(m);
  scratch& s = cache[{dev, stream}];
  if (s.words < words) {
    std::size_t w = std::max<std::size_t>(words, 256);
    if (s.dev) cudaFree(s.dev);
    if (s.host) cudaFreeHost(s.host);
    s = {};
    check(cudaMalloc(reinterpret_cast<void**>(&s.dev), w * sizeof(std::int64_t)), "cudaMalloc");
    check(cudaMallocHost(reinterpret_cast<void**>(&s.host), w * sizeof(std::int64_t)), "cudaMallocHost");
    s.words = w;
  }
  return s;
}

struct comm_info {
  int rank, size, device;
};
comm_info info(comm_t comm, const std::string& fn, int root) {
  if (comm == nullptr) throw error(errc::invalid_argument, "tally::nccl::" + fn + ": comm is null");
  comm_info c{};
  check(ncclCommUserRank(comm, &c.rank), "ncclCommUserRank");
  check(ncclCommCount(comm, &c.size), "ncclCommCount");
  check(ncclCommCuDevice(comm, &c.device), "ncclCommCuDevice");
  static_assert(all == -1);
  check_root("tally::nccl", fn, root, c.size);
  return c;
}

options on_gpu(stream_t s, accuracy acc = accuracy::exact) { return options{backend::cuda, s, acc}; }

// This rank's exact state into s.dev[0, W), enqueued on `stream`: floating data through
// partial_async (device-resident, no synchronisation); integers through partial (their exact
// int64 result) copied up.
void local_state(reduce_op op, array_ref x, array_ref y, scratch& s, stream_t stream) {
  if (floating(x.type)) {
    partial_async(op, x, y, s.dev, on_gpu(stream));
  } else {
    exact_state st = partial(op, x, y, on_gpu(stream));
    std::memcpy(s.host, st.words.data(), sizeof(std::int64_t) * W);
    check(cudaMemcpyAsync(s.dev, s.host, sizeof(std::int64_t) * W, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  }
}

// Writes the verdict words s.dev[W, W + V) from the host (pinned staging: the blocking
// callers synchronise before the staging is reused).
void put_verdict(const verdict& v, scratch& s, stream_t stream) {
  std::memcpy(s.host + W, &v, sizeof v);
  check(cudaMemcpyAsync(s.dev + W, s.host + W, sizeof v, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
}

template <class Finish>
bool exact_collective(comm_t comm, const std::string& fn, int root, reduce_op op, array_ref x, array_ref y,
                      stream_t stream, Finish&& finish) {
  comm_info c = info(comm, fn, root);
  on_device guard(c.device);
  scratch& s = scratch_for(c.device, stream, W + V);
  local_failure mine = attempt([&] {
    require_supported(x.type, "tally::nccl::" + fn);
    local_state(op, x, y, s, stream);
  });
  if (mine.failed) check(cudaMemsetAsync(s.dev, 0, sizeof(std::int64_t) * W, stream), "cudaMemsetAsync");
  verdict v;
  record(v, mine, x.type);
  put_verdict(v, s, stream);
  if (root == all) check(ncclAllReduce(s.dev, s.dev, W + V, ncclInt64, ncclSum, comm, stream), "ncclAllReduce");
  else check(ncclReduce(s.dev, s.dev, W + V, ncclInt64, ncclSum, root, comm, stream), "ncclReduce");
  check(cudaMemcpyAsync(s.host, s.dev, sizeof(std::int64_t) * (W + V), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  if (root != all && root != c.rank) {
    if (mine.failed) throw error(mine.code, mine.what);
    return false;
  }
  std::memcpy(static_cast<void*>(&v), s.host + W, sizeof v);
  judge(v, mine, "tally::nccl::" + fn);
  exact_state merged;
  std::memcpy(merged.words.data(), s.host, sizeof(std::int64_t) * W);
  normalize(merged);
  finish(merged);
  return true;
}

void check_result(const std::string& fn, dtype in, dtype out, bool float_only) {
  dist::check_result("tally::nccl", fn, in, out, float_only);
}

void need(void* p, const std::string& fn) {
  if (p == nullptr) throw error(errc::null_pointer, "tally::nccl::" + fn + ": result is a null pointer");
}

void put_double(void* result, dtype rt, double v) {
  if (rt == dtype::float32) {
    float f = static_cast<float>(v);
    std::memcpy(result, &f, sizeof f);
  } else {
    std::memcpy(result, &v, sizeof v);
  }
}

void combine_typed(dtype t, extreme_op op, nan_policy nans, const std::vector<record_t>& recs, void* value,
                   std::int64_t* index) {
  switch (t) {
    case dtype::float32: return combine_any<float>(op, nans, recs, value, index);
    case dtype::float64: return combine_any<double>(op, nans, recs, value, index);
    case dtype::int32: return combine_any<std::int32_t>(op, nans, recs, value, index);
    case dtype::int64: return combine_any<std::int64_t>(op, nans, recs, value, index);
    default: throw error(errc::invalid_argument, std::string("tally::nccl: unsupported element type ") + dtype_name(t));
  }
}

}  // namespace

void allreduce_state_async(comm_t comm, reduce_op op, array_ref x, array_ref y, std::int64_t* state_device,
                           stream_t stream, int root) {
  const std::string fn = "allreduce_state_async";
  if (state_device == nullptr) throw error(errc::null_pointer, "tally::nccl::" + fn + ": state_device is a null pointer");
  if (!floating(x.type))
    throw error(errc::invalid_argument, "tally::nccl::" + fn + ": x must be float32 or float64, not " + dtype_name(x.type));
  comm_info c = info(comm, fn, root);
  on_device guard(c.device);
  partial_async(op, x, y, state_device, on_gpu(stream));
  // The verdict: no failure, one array of x's type (a counter of 1 is its low byte).
  check(cudaMemsetAsync(state_device + W, 0, sizeof(std::int64_t) * V, stream), "cudaMemsetAsync");
  check(cudaMemsetAsync(state_device + W + kErrcs + static_cast<int>(x.type), 1, 1, stream), "cudaMemsetAsync");
  if (root == all) check(ncclAllReduce(state_device, state_device, W + V, ncclInt64, ncclSum, comm, stream), "ncclAllReduce");
  else check(ncclReduce(state_device, state_device, W + V, ncclInt64, ncclSum, root, comm, stream), "ncclReduce");
}

bool reduce(comm_t comm, reduce_op op, array_ref x, array_ref y, void* result, dtype rt, stream_t stream, int root,
            accuracy acc) {
  const std::string fn = op == reduce_op::sum ? "sum" : "dot";
  if (acc == accuracy::fast && floating(x.type)) {
    comm_info c = info(comm, fn, root);
    on_device guard(c.device);
    scratch& s = scratch_for(c.device, stream, 1 + V);
    auto* d = reinterpret_cast<double*>(s.dev);
    auto* h = reinterpret_cast<double*>(s.host);
    local_failure mine = attempt([&] {
      require_supported(x.type, "tally::nccl::" + fn);
      check_result(fn, x.type, rt, true);
      reduce_async(op, x, y, d, dtype::float64, nullptr, on_gpu(stream, accuracy::fast));
    });
    if (mine.failed) check(cudaMemsetAsync(d, 0, sizeof(double), stream), "cudaMemsetAsync");
    verdict v;
    record(v, mine, x.type);
    for (int k = 0; k < kErrcs; ++k) h[1 + k] = static_cast<double>(v.failed[k]);
    for (int k = 0; k < kTypes; ++k) h[1 + kErrcs + k] = static_cast<double>(v.types[k]);
    check(cudaMemcpyAsync(d + 1, h + 1, sizeof(double) * V, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    if (root == all) check(ncclAllReduce(d, d, 1 + V, ncclFloat64, ncclSum, comm, stream), "ncclAllReduce");
    else check(ncclReduce(d, d, 1 + V, ncclFloat64, ncclSum, root, comm, stream), "ncclReduce");
    check(cudaMemcpyAsync(h, d, sizeof(double) * (1 + V), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    if (root != all && root != c.rank) {
      if (mine.failed) throw error(mine.code, mine.what);
      return false;
    }
    for (int k = 0; k < kErrcs; ++k) v.failed[k] = static_cast<std::int64_t>(h[1 + k]);
    for (int k = 0; k < kTypes; ++k) v.types[k] = static_cast<std::int64_t>(h[1 + kErrcs + k]);
    judge(v, mine, "tally::nccl::" + fn);
    need(result, fn);
    put_double(result, rt, h[0]);
    return true;
  }
  return exact_collective(comm, fn, root, op, x, y, stream, [&](const exact_state& s) {
    check_result(fn, x.type, rt, false);
    need(result, fn);
    round(s, result, rt);
  });
}

bool mean(comm_t comm, array_ref x, void* result, dtype rt, stream_t stream, int root) {
  return exact_collective(comm, "mean", root, reduce_op::sum, x, {}, stream, [&](const exact_state& s) {
    check_result("mean", x.type, rt, true);
    need(result, "mean");
    round_mean(s, result, rt);
  });
}

bool norm2(comm_t comm, array_ref x, void* result, dtype rt, stream_t stream, int root) {
  if (!floating(x.type))
    throw error(errc::invalid_argument, std::string("tally::nccl::norm2: x must be float32 or float64, not ") + dtype_name(x.type));
  return exact_collective(comm, "norm2", root, reduce_op::dot, x, x, stream, [&](const exact_state& s) {
    check_result("norm2", x.type, rt, true);
    need(result, "norm2");
    round_sqrt(s, result, rt);
  });
}

bool extreme(comm_t comm, extreme_op op, nan_policy nans, array_ref x, void* value, std::int64_t* index, stream_t stream,
             int root) {
  const std::string fn = std::string(nans == nan_policy::omit ? "nan" : "") + (op == extreme_op::max ? "max" : "min");
  comm_info c = info(comm, fn, root);
  on_device guard(c.device);
  scratch& s = scratch_for(c.device, stream, static_cast<std::size_t>(R) * (c.size + 1));
  record_t mine{0, -1, x.size, 0, static_cast<std::int64_t>(x.type)};
  local_failure failure = attempt([&] {
    require_supported(x.type, "tally::nccl::" + fn);
    std::int64_t v = 0, i = -1;
    tally::extreme(op, nans, x, &v, &i, on_gpu(stream));
    mine.value_bits = v;
    mine.index = i;
  });
  if (failure.failed) mine = {0, -1, 0, static_cast<std::int64_t>(failure.code) + 1, static_cast<std::int64_t>(x.type)};
  std::memcpy(s.host, &mine, sizeof mine);
  check(cudaMemcpyAsync(s.dev, s.host, sizeof mine, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  check(ncclAllGather(s.dev, s.dev + R, R, ncclInt64, comm, stream), "ncclAllGather");
  std::vector<record_t> recs(static_cast<std::size_t>(c.size));
  check(cudaMemcpyAsync(s.host + R, s.dev + R, sizeof(record_t) * c.size, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::memcpy(static_cast<void*>(recs.data()), s.host + R, sizeof(record_t) * c.size);
  if (root != all && root != c.rank) {
    if (failure.failed) throw error(failure.code, failure.what);
    return false;
  }
  judge(verdict_of(recs), failure, "tally::nccl::" + fn);
  if (value == nullptr || index == nullptr)
    throw error(errc::null_pointer, "tally::nccl::" + fn + ": value or index is a null pointer");
  combine_typed(x.type, op, nans, recs, value, index);
  return true;
}

// ---- one process, several GPUs ----------------------------------------------------------

void reduce_group(group_op op, std::span<const group_part> parts, void* result, dtype rt) {
  const char* names[] = {"sum", "dot", "mean", "norm2", "sum (fast)", "dot (fast)"};
  const std::string fn = names[static_cast<int>(op)];
  if (parts.empty()) throw error(errc::invalid_argument, "tally::nccl::" + fn + ": no parts");
  need(result, fn);
  const dtype t = parts[0].x.type;
  require_supported(t, "tally::nccl::" + fn);
  for (const auto& p : parts)
    if (p.x.type != t) throw error(errc::invalid_argument, "tally::nccl::" + fn + ": the parts have different element types");
  bool fast = (op == group_op::fast_sum || op == group_op::fast_dot) && floating(t);
  reduce_op rop = (op == group_op::dot || op == group_op::fast_dot || op == group_op::norm2) ? reduce_op::dot : reduce_op::sum;
  if (op == group_op::norm2 && !floating(t))
    throw error(errc::invalid_argument, std::string("tally::nccl::norm2: x must be float32 or float64, not ") + dtype_name(t));
  check_result(fn, t, rt, op == group_op::mean || op == group_op::norm2);
  const int words = fast ? 1 : W;
  std::vector<comm_info> infos;
  std::vector<scratch*> bufs;
  // Local steps: every GPU's state (or fast partial) enqueued on its own stream.
  for (const auto& p : parts) {
    infos.push_back(info(p.comm, fn, all));
    on_device guard(infos.back().device);
    bufs.push_back(&scratch_for(infos.back().device, p.stream, W + V));
    array_ref y = op == group_op::norm2 ? p.x : p.y;
    if (fast)
      reduce_async(rop, p.x, y, reinterpret_cast<double*>(bufs.back()->dev), dtype::float64, nullptr,
                   on_gpu(p.stream, accuracy::fast));
    else
      local_state(rop, p.x, y, *bufs.back(), p.stream);
  }
  // One group of collectives: NCCL launches them together.
  check(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    ncclResult_t r = fast ? ncclAllReduce(bufs[i]->dev, bufs[i]->dev, 1, ncclFloat64, ncclSum, parts[i].comm, parts[i].stream)
                          : ncclAllReduce(bufs[i]->dev, bufs[i]->dev, W, ncclInt64, ncclSum, parts[i].comm, parts[i].stream);
    if (r != ncclSuccess) {
      ncclGroupEnd();
      check(r, "ncclAllReduce");
    }
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
  std::vector<std::vector<std::int64_t>> got(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    on_device guard(infos[i].device);
    check(cudaMemcpyAsync(bufs[i]->host, bufs[i]->dev, sizeof(std::int64_t) * words, cudaMemcpyDeviceToHost,
                          parts[i].stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(parts[i].stream), "cudaStreamSynchronize");
    got[i].assign(bufs[i]->host, bufs[i]->host + words);
  }
  for (std::size_t i = 1; i < parts.size(); ++i)  // every GPU holds the same merged words
    if (got[i] != got[0]) throw error(errc::cuda_error, "tally::nccl::" + fn + ": the GPUs' merged results differ");
  if (fast) {
    double v;
    std::memcpy(&v, got[0].data(), sizeof v);
    return put_double(result, rt, v);
  }
  exact_state merged;
  std::memcpy(merged.words.data(), got[0].data(), sizeof(std::int64_t) * W);
  normalize(merged);
  if (op == group_op::mean) round_mean(merged, result, rt);
  else if (op == group_op::norm2) round_sqrt(merged, result, rt);
  else round(merged, result, rt);
}

void extreme_group(extreme_op op, nan_policy nans, std::span<const group_part> parts, void* value, std::int64_t* index) {
  if (parts.empty()) throw error(errc::invalid_argument, "tally::nccl::extreme: no parts");
  if (value == nullptr || index == nullptr) throw error(errc::null_pointer, "tally::nccl::extreme: value or index is a null pointer");
  std::vector<record_t> recs;
  require_supported(parts[0].x.type, "tally::nccl::extreme");
  for (const auto& p : parts) {
    if (p.x.type != parts[0].x.type)
      throw error(errc::invalid_argument, "tally::nccl::extreme: the parts have different element types");
    std::int64_t v = 0, i = -1;
    tally::extreme(op, nans, p.x, &v, &i, on_gpu(p.stream));  // each part on its own GPU
    recs.push_back({v, i, p.x.size, 0, static_cast<std::int64_t>(p.x.type)});
  }
  combine_typed(parts[0].x.type, op, nans, recs, value, index);
}

}  // namespace tally::nccl
