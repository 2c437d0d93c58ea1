// tally CLI: host <-> device staging with the CUDA runtime (CUDA builds only).
#include <cuda_runtime.h>

#include <chrono>
#include <string>

#include "cuda_staging.hpp"

namespace tally_cli {
namespace {

void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw tally::error(tally::errc::cuda_error, std::string("tally CLI: ") + call + ": " + cudaGetErrorString(e));
}

/// Device memory holding a copy of an array; freed on destruction.
class device_array {
 public:
  device_array(std::int64_t n, tally::dtype t) : n_(n), t_(t) {
    if (bytes()) check(cudaMalloc(&p_, bytes()), "cudaMalloc");
  }
  explicit device_array(tally::array_ref host) : device_array(host.size, host.type) {
    if (bytes()) check(cudaMemcpy(p_, host.data, bytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  ~device_array() { if (p_) cudaFree(p_); }

  std::size_t bytes() const { return static_cast<std::size_t>(n_) * tally::dtype_size(t_); }
  tally::array_ref ref() const { return {p_, n_, t_, tally::memory::device}; }
  tally::mutable_array_ref mref() { return {p_, n_, t_, tally::memory::device}; }
  void copy_to(void* host) const {
    if (bytes()) check(cudaMemcpy(host, p_, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
  }

 private:
  void* p_ = nullptr;
  std::int64_t n_;
  tally::dtype t_;
};

template <class F> double timed(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

const tally::options kCuda{tally::backend::cuda};

}  // namespace

double reduce_on_gpu(tally::reduce_op op, tally::array_ref x, tally::array_ref y, void* result,
                     tally::accuracy acc) {
  device_array dx(x);
  if (op == tally::reduce_op::sum) return timed([&] { tally::reduce(op, dx.ref(), {}, result, {tally::backend::cuda, nullptr, acc}); });
  device_array dy(y);
  return timed([&] { tally::reduce(op, dx.ref(), dy.ref(), result, {tally::backend::cuda, nullptr, acc}); });
}

double add_on_gpu(tally::array_ref x, tally::array_ref y, tally::mutable_array_ref out) {
  device_array dx(x), dy(y), dout(out.size, out.type);
  double s = timed([&] { tally::add(dx.ref(), dy.ref(), dout.mref(), kCuda); });
  dout.copy_to(out.data);
  return s;
}

double extreme_on_gpu(tally::extreme_op op, tally::nan_policy nans, tally::array_ref x, void* value,
                      std::int64_t* index) {
  device_array dx(x);
  return timed([&] { tally::extreme(op, nans, dx.ref(), value, index, kCuda); });
}

double mean_norm_on_gpu(bool norm, tally::array_ref x, void* result, tally::dtype rt) {
  device_array dx(x);
  return timed([&] {
    if (norm) tally::norm2(dx.ref(), result, rt, kCuda);
    else tally::mean(dx.ref(), result, rt, kCuda);
  });
}

}  // namespace tally_cli
