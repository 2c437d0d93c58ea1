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

/// The device twin of a host output array: none for an empty ref ({nullptr, 0}: "not
/// wanted"), else `size` elements (at least one byte allocated, so that a wanted output with
/// no elements keeps a non-null pointer, as its host original).
class device_output {
 public:
  explicit device_output(tally::mutable_array_ref host) : host_(host) {
    if (host.data == nullptr && host.size == 0) return;
    check(cudaMalloc(&p_, bytes() ? bytes() : 1), "cudaMalloc");
  }
  device_output(const device_output&) = delete;
  device_output& operator=(const device_output&) = delete;
  ~device_output() { if (p_) cudaFree(p_); }

  std::size_t bytes() const { return static_cast<std::size_t>(host_.size) * tally::dtype_size(host_.type); }
  tally::mutable_array_ref mref() const {
    if (!p_) return {};
    return {p_, host_.size, host_.type, tally::memory::device};
  }
  void copy_back() const {
    if (p_ && bytes()) check(cudaMemcpy(host_.data, p_, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
  }

 private:
  tally::mutable_array_ref host_;
  void* p_ = nullptr;
};

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

double minmax_on_gpu(tally::nan_policy nans, tally::array_ref x, void* lo, std::int64_t* lo_index, void* hi,
                     std::int64_t* hi_index) {
  device_array dx(x);
  return timed([&] { tally::minmax(nans, dx.ref(), lo, lo_index, hi, hi_index, kCuda); });
}

double mean_norm_on_gpu(bool norm, tally::array_ref x, void* result, tally::dtype rt) {
  device_array dx(x);
  return timed([&] {
    if (norm) tally::norm2(dx.ref(), result, rt, kCuda);
    else tally::mean(dx.ref(), result, rt, kCuda);
  });
}

double matrix_on_gpu(const matrix_call& call, tally::matrix_ref x, tally::mutable_array_ref values,
                     tally::mutable_array_ref indices, tally::accuracy acc) {
  // One copy of the whole matrix; its strides (in elements) stay valid on the device.
  device_array dx(tally::array_ref{x.data, x.rows * x.cols, x.type, tally::memory::host});
  tally::matrix_ref dm = x;
  dm.data = dx.ref().data;
  dm.where = tally::memory::device;
  device_output dv(values), di(indices);
  double s = timed([&] { call(dm, dv.mref(), di.mref(), {tally::backend::cuda, nullptr, acc}); });
  dv.copy_back();
  di.copy_back();
  return s;
}

int gpu_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

void use_gpu(int device) {
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess)
    throw tally::error(tally::errc::cuda_error,
                       "tally CLI: cudaSetDevice(" + std::to_string(device) + "): " + cudaGetErrorString(e));
}

device_copy::device_copy(tally::array_ref host) : n_(host.size), t_(host.type) {
  std::size_t bytes = static_cast<std::size_t>(n_) * tally::dtype_size(t_);
  if (!bytes) return;
  check(cudaMalloc(&p_, bytes), "cudaMalloc");
  cudaError_t e = cudaMemcpy(p_, host.data, bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    cudaFree(p_);
    p_ = nullptr;
    check(e, "cudaMemcpy");
  }
}

device_copy::~device_copy() {
  if (p_) cudaFree(p_);
}

}  // namespace tally_cli
