// tally_bench: GB/s of tally's GPU sum, dot, add, min/max/argmin/argmax, norms, mean, var and
// count_nonzero beside CUB, Thrust, cuBLAS and a plain read kernel (the bandwidth ceiling),
// all measured in one process on one GPU.
//
// Device time per call: CUDA events around a batch of back-to-back calls (batch sized to
// about 1 ms of work), after warm-up; the median of many batches. Every call reads a
// different slice of a 4 GiB pool (rotating), so sizes that fit in L2 are measured from
// memory, not from the cache. End-to-end latency (value in host memory): a host clock around
// single blocking calls, median. The rows of min/max/argmin/argmax, norms, mean, var and
// count_nonzero (bench_ops) time blocking tally calls beside each anchor both device only and
// with its value copied to host memory ("+memcpy" in the library name).
//
//   tally_bench [--quick] [--exact-only] [--only LIST] [--max-log2 N] [--exact-variants N] [--tune-filter A,B] [--tune-configs A,B] [--csv FILE] [--json FILE]
//   (--only: a comma-separated subset of reduce, add, latency, ops, exact, int, shapes; and, named
//   only, shapes-once, shapes-tune, shapes-narrow, narrow-lanes)
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>

#include "cuda/shapes_tuning.hpp"  // the shape layer's plan and switches (private header; tally is a static library)
#include "cuda/tuning.hpp"          // the certified-pass switch (private header)
#include "backends.hpp"              // tally::cuda::last_exact_was_certified
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cuda/std/functional>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/inner_product.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/extrema.h>
#include <thrust/reduce.h>
#include <thrust/transform.h>

#include <algorithm>
#include <limits>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common.cuh"
#include "tally/tally.hpp"

namespace {
using namespace bench;

constexpr std::size_t kPoolBytes = std::size_t(4) << 30;  // per input pool (full run)
std::size_t g_pool = kPoolBytes;                            // as allocated

struct row {
  std::string op, dtype, library;
  std::int64_t n;
  double us;        // device time per call (median), or end-to-end for op "*-latency"
  double gbps;      // bytes moved / us
  double check;     // |value - reference| / |reference| (NaN when not applicable)
};
std::vector<row> rows;

// Back-to-back calls read rotating copies of an n-element input (256-byte aligned, up to the
// pool's size), so each call reads DRAM, not the L2 its predecessor filled: X(k) is copy k.
template <class T> struct rotation {
  const char* base;
  std::size_t stride;
  int slots;
  rotation(const char* pool, std::int64_t n)
      : base(pool), stride((std::size_t(n) * sizeof(T) + 255) / 256 * 256),
        slots(int(std::max<std::size_t>(1, std::min<std::size_t>(g_pool / stride, 1 << 20)))) {}
  const T* operator()(int k) const { return reinterpret_cast<const T*>(base + std::size_t(k) * stride); }
};

template <class T> const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float32";
  else if constexpr (std::is_same_v<T, double>) return "float64";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else return "int64";
}

double rel(double v, double ref) {
  if (ref == 0) return std::fabs(v);
  return std::fabs(v - ref) / std::fabs(ref);
}

struct product_at {
  template <class T> struct op {
    const T* x;
    const T* y;
    __host__ __device__ double operator()(std::int64_t i) const { return double(x[i]) * double(y[i]); }
  };
};

// ---- one size ---------------------------------------------------------------------------

struct pools {
  char* x;
  char* y;
  char* out;
  void* cub_temp;
  std::size_t cub_temp_bytes;
  double* dres;  // device results
  cudaStream_t s;
  cublasHandle_t blas;
};

template <class T> void bench_reduce(pools& P, std::int64_t n, int reps, bool with_dot) {
  using R = tally::result_t<T>;
  const std::size_t bytes = std::size_t(n) * sizeof(T);
  const rotation<T> X(P.x, n);
  const int slots = X.slots;
  const rotation<T> Y(P.y, n);
  timer tm(P.s);
  tally::options opt{tally::backend::cuda, P.s};
  auto* rd = reinterpret_cast<R*>(P.dres);
  using CubOut = std::conditional_t<std::is_integral_v<T>, std::int64_t, T>;
  auto* cd = reinterpret_cast<CubOut*>(P.dres + 1);
  const char* tn = type_name<T>();
  const double gb = double(bytes) / 1e3;  // bytes per us -> GB/s

  // Reference values on slot 0 (tally's own blocking result is checked against CUB's).
  R tv = tally::sum<T>({X(0), n, tally::memory::device}, opt);
  std::size_t tb = P.cub_temp_bytes;
  CK(cub::DeviceReduce::Sum(P.cub_temp, tb, X(0), cd, n, P.s));
  CubOut cv;
  CK(cudaStreamSynchronize(P.s));  // P.s does not synchronise with the legacy stream
  CK(cudaMemcpy(&cv, cd, sizeof cv, cudaMemcpyDeviceToHost));
  double check = rel(double(tv), double(cv));

  int grid = 132 * 8;
  double t_read = tm.per_call([&](int k) { read_kernel<T><<<grid, 256, 0, P.s>>>(X(k), X(k), n, false, P.dres + 4); }, slots, reps);
  double t_tally = tm.per_call([&](int k) { tally::sum_async<T>({X(k), n, tally::memory::device}, rd, nullptr, opt); }, slots, reps);
  tally::options fast = opt;
  fast.accuracy = tally::accuracy::fast;
  double t_fast = std::is_floating_point_v<T>
                      ? tm.per_call([&](int k) { tally::sum_async<T>({X(k), n, tally::memory::device}, rd, nullptr, fast); }, slots, reps)
                      : NAN;
  double t_cub = tm.per_call([&](int k) {
    std::size_t b = P.cub_temp_bytes;
    cub::DeviceReduce::Sum(P.cub_temp, b, X(k), cd, n, P.s);
  }, slots, reps);
  double t_thrust = tm.per_call([&](int k) {
    auto p = thrust::device_pointer_cast(X(k));
    volatile auto v = thrust::reduce(thrust::cuda::par.on(P.s), p, p + n, CubOut(0));
    (void)v;
  }, slots, std::max(3, reps / 3));
  rows.push_back({"sum", tn, "read-kernel", n, t_read, gb / t_read, NAN});
  rows.push_back({"sum", tn, "tally", n, t_tally, gb / t_tally, check});
  if (std::is_floating_point_v<T>) rows.push_back({"sum", tn, "tally-fast", n, t_fast, gb / t_fast, NAN});
  rows.push_back({"sum", tn, "cub", n, t_cub, gb / t_cub, NAN});
  rows.push_back({"sum", tn, "thrust", n, t_thrust, gb / t_thrust, NAN});

  if (!with_dot) return;
  const double gb2 = 2 * gb;
  R dv = tally::dot<T>({X(0), n, tally::memory::device}, {Y(0), n, tally::memory::device}, opt);
  double t_read2 = tm.per_call([&](int k) { read_kernel<T><<<grid, 256, 0, P.s>>>(X(k), Y(k), n, true, P.dres + 4); }, slots, reps);
  double t_tdot = tm.per_call([&](int k) {
    tally::dot_async<T>({X(k), n, tally::memory::device}, {Y(k), n, tally::memory::device}, rd, nullptr, opt);
  }, slots, reps);
  double t_fastdot = tm.per_call([&](int k) {
    tally::dot_async<T>({X(k), n, tally::memory::device}, {Y(k), n, tally::memory::device}, rd, nullptr, fast);
  }, slots, reps);
  double t_cubdot = tm.per_call([&](int k) {
    std::size_t b = P.cub_temp_bytes;
    auto it = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0),
                                              product_at::op<T>{X(k), Y(k)});
    cub::DeviceReduce::Sum(P.cub_temp, b, it, P.dres + 2, n, P.s);
  }, slots, reps);
  rows.push_back({"dot", tn, "read-kernel", n, t_read2, gb2 / t_read2, NAN});
  double blas_ref = NAN;
  if constexpr (std::is_floating_point_v<T>) {
    CKB(cublasSetPointerMode(P.blas, CUBLAS_POINTER_MODE_DEVICE));
    auto blasdot = [&](int k) {
      if constexpr (std::is_same_v<T, float>)
        cublasSdot(P.blas, int(n), X(k), 1, Y(k), 1, reinterpret_cast<float*>(P.dres + 3));
      else
        cublasDdot(P.blas, int(n), X(k), 1, Y(k), 1, P.dres + 3);
    };
    if (n < (std::int64_t(1) << 31)) {
      blasdot(0);
      CK(cudaStreamSynchronize(P.s));
      T bv;
      CK(cudaMemcpy(&bv, P.dres + 3, sizeof bv, cudaMemcpyDeviceToHost));
      blas_ref = double(bv);
      double t_blas = tm.per_call(blasdot, slots, reps);
      rows.push_back({"dot", tn, "cublas", n, t_blas, gb2 / t_blas, NAN});
    }
  }
  rows.push_back({"dot", tn, "tally", n, t_tdot, gb2 / t_tdot, std::isnan(blas_ref) ? NAN : rel(double(dv), blas_ref)});
  rows.push_back({"dot", tn, "tally-fast", n, t_fastdot, gb2 / t_fastdot, NAN});
  rows.push_back({"dot", tn, "cub", n, t_cubdot, gb2 / t_cubdot, NAN});
  double t_thrustdot = tm.per_call([&](int k) {
    auto px = thrust::device_pointer_cast(X(k));
    auto py = thrust::device_pointer_cast(Y(k));
    volatile auto v = thrust::inner_product(thrust::cuda::par.on(P.s), px, px + n, py, CubOut(0));
    (void)v;
  }, slots, std::max(3, reps / 3));
  rows.push_back({"dot", tn, "thrust", n, t_thrustdot, gb2 / t_thrustdot, NAN});
}

template <class T> void bench_add(pools& P, std::int64_t n, int reps) {
  const std::size_t bytes = std::size_t(n) * sizeof(T);
  const rotation<T> X(P.x, n);
  const int slots = X.slots;
  const rotation<T> Y(P.y, n);
  auto O = [&](int k) { return reinterpret_cast<T*>(P.out + std::size_t(k) * X.stride); };
  timer tm(P.s);
  tally::options opt{tally::backend::cuda, P.s};
  const char* tn = type_name<T>();
  const double gb3 = 3.0 * bytes / 1e3;
  double t_copy = tm.per_call([&](int k) {
    CK(cudaMemcpyAsync(O(k), X(k), bytes, cudaMemcpyDeviceToDevice, P.s));
  }, slots, reps);
  double t_tally = tm.per_call([&](int k) {
    tally::add_async<T>({X(k), n, tally::memory::device}, {Y(k), n, tally::memory::device},
                        {O(k), n, tally::memory::device}, nullptr, opt);
  }, slots, reps);
  double t_thrust = tm.per_call([&](int k) {
    auto px = thrust::device_pointer_cast(X(k));
    thrust::transform(thrust::cuda::par_nosync.on(P.s), px, px + n, thrust::device_pointer_cast(Y(k)),
                      thrust::device_pointer_cast(O(k)), thrust::plus<T>());
  }, slots, reps);
  // memcpy moves 2 streams of bytes; report its GB/s over its own bytes (read + write).
  rows.push_back({"add", tn, "memcpy-d2d", n, t_copy, 2.0 * bytes / 1e3 / t_copy, NAN});
  rows.push_back({"add", tn, "tally", n, t_tally, gb3 / t_tally, NAN});
  rows.push_back({"add", tn, "thrust", n, t_thrust, gb3 / t_thrust, NAN});
}

// Exact against fast mode and CUB on three distributions (one input, larger than L2): GB/s,
// and each result's relative error against the exact (correctly rounded) value.
const char* dist_name(int d) { return d == 0 ? "uniform" : d == 1 ? "wide" : "illcond"; }

// --exact-variants N: rows for the default and the first N - 1 certified-pass variants (1..7).
int g_exact_variants = 7;
// --tune-filter A,B: the shapes-tune jobs whose names contain A or B (all when empty).
std::string g_tune_filter;
std::string g_tune_configs;  // --tune-configs A,B,...: only the shapes-tune configurations of those names (all when empty)

template <class T> void bench_exact(pools& P, std::int64_t n, int dist, int reps) {
  using CubOut = T;
  T* x = reinterpret_cast<T*>(P.x);
  T* y = reinterpret_cast<T*>(P.y);
  fill_dist<T><<<1024, 256, 0, P.s>>>(x, n, 11, dist);
  fill_dist<T><<<1024, 256, 0, P.s>>>(y, n, 12, dist == 2 ? 1 : dist);
  CK(cudaStreamSynchronize(P.s));
  timer tm(P.s);
  tally::options ex{tally::backend::cuda, P.s};
  tally::options fa = ex;
  fa.accuracy = tally::accuracy::fast;
  auto* rd = reinterpret_cast<T*>(P.dres);
  auto* cd = reinterpret_cast<CubOut*>(P.dres + 1);
  tally::view<const T> vx{x, n, tally::memory::device}, vy{y, n, tally::memory::device};
  std::string tn = std::string(type_name<T>()) + "-" + dist_name(dist);
  const double gb = double(n) * sizeof(T) / 1e3;
  // Values: exact is the reference.
  double vexact = double(tally::sum<T>(vx, ex)), vfast = double(tally::sum<T>(vx, fa));
  std::size_t tb = P.cub_temp_bytes;
  CK(cub::DeviceReduce::Sum(P.cub_temp, tb, x, cd, n, P.s));
  CK(cudaStreamSynchronize(P.s));
  CubOut cv;
  CK(cudaMemcpy(&cv, cd, sizeof cv, cudaMemcpyDeviceToHost));
  // Every configuration is timed in turn within each repetition (timer::per_call_interleaved),
  // so a drift of the clocks over the run cannot favour whichever was measured first.
  namespace tuning = tally::cuda::tuning;
  const char* variant_names[] = {"tally", "tally-c1 (gate waits for the grid)", "tally-c2 (unroll 8)",
                                 "tally-c3 (unroll 4 prefetch)", "tally-c4 (partial last tile)",
                                 "tally-c5 (ordered Fast2Sum)", "tally-c6 (gated grid: a block per SM)"};
  const int kVariants = g_exact_variants;  // --exact-variants: the default and the first N-1 variants (7 names)
  auto with_variant = [](int v, auto&& call) {
    tuning::set_certified_variant(v);
    call();
    tuning::set_certified_variant(0);
  };
  auto without_certificate = [](auto&& call) {  // v4 alone: the exact kernel, no certificate
    tuning::set_exact_certified(false);
    call();
    tuning::set_exact_certified(true);
  };
  {
    auto exact_call = [&] { tally::sum_async<T>(vx, rd, nullptr, ex); };
    std::vector<std::function<void()>> fs;
    for (int v = 0; v < kVariants; ++v) fs.push_back([&, v] { with_variant(v, exact_call); });
    fs.push_back([&] { without_certificate(exact_call); });
    fs.push_back([&] { tally::sum_async<T>(vx, rd, nullptr, fa); });
    fs.push_back([&] {
      std::size_t b = P.cub_temp_bytes;
      cub::DeviceReduce::Sum(P.cub_temp, b, x, cd, n, P.s);
    });
    exact_call();
    const bool held = tally::cuda::last_exact_was_certified(P.s, -1);
    auto t = tm.per_call_interleaved(fs, reps);
    for (int v = 0; v < kVariants; ++v) rows.push_back({"sum-exact", tn, variant_names[v], n, t[v], gb / t[v], 0.0});
    rows.push_back({"sum-exact", tn, held ? "tally-v4 (certified pass: held)" : "tally-v4 (certified pass: failed)", n,
                    t[kVariants], gb / t[kVariants], 0.0});
    rows.push_back({"sum-exact", tn, "tally-fast", n, t[kVariants + 1], gb / t[kVariants + 1], rel(vfast, vexact)});
    rows.push_back({"sum-exact", tn, "cub", n, t[kVariants + 2], gb / t[kVariants + 2], rel(double(cv), vexact)});
  }
  {  // The price of a failed proof: one NaN in x. The certified pass proves nothing that is not
     // finite, so the exact kernel reads x again (the sum is NaN either way). Timed interleaved
     // with fast mode on the same data; the error column is 0 when the result is NaN.
    T saved;
    const std::size_t mid = static_cast<std::size_t>(n / 2);
    CK(cudaStreamSynchronize(P.s));
    CK(cudaMemcpy(&saved, x + mid, sizeof(T), cudaMemcpyDeviceToHost));
    const T nan = std::numeric_limits<T>::quiet_NaN();
    CK(cudaMemcpy(x + mid, &nan, sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());  // (a copy from pageable memory may return before it lands)
    auto exact_call = [&] { tally::sum_async<T>(vx, rd, nullptr, ex); };
    exact_call();
    const bool held = tally::cuda::last_exact_was_certified(P.s, -1);
    T got;
    CK(cudaMemcpy(&got, rd, sizeof(T), cudaMemcpyDeviceToHost));
    // (and variant 6's price: its gated exact kernel runs on a block per SM)
    auto t = tm.per_call_interleaved({exact_call, [&] { tally::sum_async<T>(vx, rd, nullptr, fa); },
                                      [&] { with_variant(6, exact_call); }},
                                     reps);
    rows.push_back({"sum-exact", tn, held ? "tally (one NaN: proof held?!)" : "tally (one NaN: proof fails)", n, t[0],
                    gb / t[0], std::isnan(double(got)) ? 0.0 : 1.0});
    rows.push_back({"sum-exact", tn, "tally-c6 (one NaN: proof fails)", n, t[2], gb / t[2], std::isnan(double(got)) ? 0.0 : 1.0});
    CK(cudaStreamSynchronize(P.s));
    CK(cudaMemcpy(x + mid, &saved, sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
  }
  // Dot products of the same data.
  double dexact = double(tally::dot<T>(vx, vy, ex)), dfast = double(tally::dot<T>(vx, vy, fa));
  {
    auto exact_call = [&] { tally::dot_async<T>(vx, vy, rd, nullptr, ex); };
    std::vector<std::function<void()>> fs;
    for (int v = 0; v < kVariants; ++v) fs.push_back([&, v] { with_variant(v, exact_call); });
    fs.push_back([&] { without_certificate(exact_call); });
    fs.push_back([&] { tally::dot_async<T>(vx, vy, rd, nullptr, fa); });
    exact_call();
    const bool held = tally::cuda::last_exact_was_certified(P.s, -1);
    auto t = tm.per_call_interleaved(fs, reps);
    for (int v = 0; v < kVariants; ++v)
      rows.push_back({"dot-exact", tn, variant_names[v], n, t[v], 2 * gb / t[v], 0.0});
    rows.push_back({"dot-exact", tn, held ? "tally-v4 (certified pass: held)" : "tally-v4 (certified pass: failed)", n,
                    t[kVariants], 2 * gb / t[kVariants], 0.0});
    rows.push_back({"dot-exact", tn, "tally-fast", n, t[kVariants + 1], 2 * gb / t[kVariants + 1], rel(dfast, dexact)});
  }
}

void bench_latency(pools& P, std::int64_t n, int reps) {
  using T = float;
  const std::size_t bytes = std::size_t(n) * sizeof(T);
  const std::size_t stride = (bytes + 255) / 256 * 256;
  const int slots = int(std::min<std::size_t>(g_pool / stride, 1 << 16));
  auto X = [&](int k) { return reinterpret_cast<const T*>(P.x + std::size_t(k) * stride); };
  tally::options opt{tally::backend::cuda, P.s};
  volatile float sink = 0;
  double t_tally = host_median_us([&](int k) { sink = tally::sum<T>({X(k), n, tally::memory::device}, opt); }, slots, reps);
  double t_cub = host_median_us([&](int k) {
    std::size_t b = P.cub_temp_bytes;
    cub::DeviceReduce::Sum(P.cub_temp, b, X(k), reinterpret_cast<T*>(P.dres), n, P.s);
    float v;
    CK(cudaMemcpyAsync(&v, P.dres, sizeof v, cudaMemcpyDeviceToHost, P.s));
    CK(cudaStreamSynchronize(P.s));
    sink = v;
  }, slots, reps);
  double t_thrust = host_median_us([&](int k) {
    auto p = thrust::device_pointer_cast(X(k));
    sink = thrust::reduce(thrust::cuda::par.on(P.s), p, p + n, 0.0f);
  }, slots, reps);
  CKB(cublasSetPointerMode(P.blas, CUBLAS_POINTER_MODE_HOST));
  double t_blas = host_median_us([&](int k) {
    float v;
    cublasSdot(P.blas, int(n), X(k), 1, X(k), 1, &v);
    sink = v;
  }, slots, reps);
  (void)sink;
  rows.push_back({"sum-latency", "float32", "tally", n, t_tally, NAN, NAN});
  rows.push_back({"sum-latency", "float32", "cub+memcpy", n, t_cub, NAN, NAN});
  rows.push_back({"sum-latency", "float32", "thrust", n, t_thrust, NAN, NAN});
  rows.push_back({"sum-latency", "float32", "cublas-sdot", n, t_blas, NAN, NAN});
}

// ---- min/max/argmin/argmax, norms, mean, var and count_nonzero beside CUB and cuBLAS -----
//
// Float or double x, n elements, drawn from the pool like the sum rows (uniform [0, 1): its
// float32 rounding puts a few ties at 1.0f in the larger sizes, so first-index ties are
// exercised). Every tally call in these rows is blocking (the value comes back to host
// memory), timed with the same events around a batch of calls, each synchronising the stream
// inside. Each anchor is timed twice: device only (library "cub", "cublas", "cub-2pass": the
// value left in device memory) and with its value copied to host memory ("...+memcpy":
// cudaMemcpyAsync to a host variable, then cudaStreamSynchronize, as the sum-latency rows do
// and as a user of a blocking answer must). GB/s = bytes of x / time for every row, also for
// two-pass methods that read x twice. A "read-kernel" row (the ceiling) is repeated under
// each op. rel_check: min, max, norm-inf and count-nonzero against a host scan of slot 0
// (exact); argmin/argmax 0 when index and value are the host's first occurrence, else 1;
// norm2, norm1, mean and var against tally's exact (correctly rounded) result, whose own
// row then shows 0.

template <class T> __global__ void divide_by(T* v, std::int64_t n) { *v = *v / T(n); }
// |x[i - 1]| for the 1-based index cuBLAS i?amax returns (the element a user must fetch).
template <class T> __global__ void gather_abs(const T* x, const int* i1, T* out) { *out = fabs(x[*i1 - 1]); }

template <class T> struct squared_deviation {
  const T* mean;  // device
  __host__ __device__ T operator()(T x) const {
    T d = x - *mean;
    return d * d;
  }
};
template <class T> struct nonzero {
  __host__ __device__ std::int64_t operator()(T x) const { return x != T(0) ? 1 : 0; }
};

void ensure_cub_temp(pools& P, std::size_t b) {
  if (b <= P.cub_temp_bytes) return;
  CK(cudaFree(P.cub_temp));  // synchronises the device first
  P.cub_temp_bytes = b;
  CK(cudaMalloc(&P.cub_temp, P.cub_temp_bytes));
}

template <class T> void bench_ops(pools& P, std::int64_t n, int reps) {
  static_assert(std::is_floating_point_v<T>);
  const std::size_t bytes = std::size_t(n) * sizeof(T);
  const rotation<T> X(P.x, n);
  const int slots = X.slots;
  auto vx = [&](int k) { return tally::view<const T>{X(k), n, tally::memory::device}; };
  timer tm(P.s);
  tally::options opt{tally::backend::cuda, P.s};
  tally::options fast = opt;
  fast.accuracy = tally::accuracy::fast;
  const char* tn = type_name<T>();
  const double gb = double(bytes) / 1e3;  // bytes per us -> GB/s
  volatile double sink = 0;

  // Anchor outputs in device memory: a value at +0, an index (int64 from CUB, int from
  // cuBLAS) at +8, the two-pass mean at +16.
  char* dv = nullptr;
  CK(cudaMalloc(&dv, 64));
  T* dval = reinterpret_cast<T*>(dv);
  auto* didx = reinterpret_cast<std::int64_t*>(dv + 8);
  int* dblas_idx = reinterpret_cast<int*>(dv + 8);
  T* dmean = reinterpret_cast<T*>(dv + 16);
  auto fetch = [&](std::size_t nbytes) {  // the anchor's answer into host memory
    alignas(16) unsigned char h[16];
    CK(cudaMemcpyAsync(h, dv, nbytes, cudaMemcpyDeviceToHost, P.s));
    CK(cudaStreamSynchronize(P.s));
    T v;
    std::memcpy(&v, h, sizeof v);
    sink = double(v);
  };
  auto value_of_slot0 = [&](const auto& launch) {
    launch(0);
    T v;
    CK(cudaStreamSynchronize(P.s));
    CK(cudaMemcpy(&v, dval, sizeof v, cudaMemcpyDeviceToHost));
    return double(v);
  };

  // CUB scratch for every call below.
  {
    std::size_t b[7] = {};
    CK(cub::DeviceReduce::Min(nullptr, b[0], X(0), dval, n));
    CK(cub::DeviceReduce::Max(nullptr, b[1], X(0), dval, n));
    CK(cub::DeviceReduce::ArgMin(nullptr, b[2], X(0), dval, didx, n));
    CK(cub::DeviceReduce::ArgMax(nullptr, b[3], X(0), dval, didx, n));
    CK(cub::DeviceReduce::Sum(nullptr, b[4], X(0), dval, n));
    CK(cub::DeviceReduce::TransformReduce(nullptr, b[5], X(0), dval, n, cuda::std::plus<T>{},
                                          squared_deviation<T>{dmean}, T(0)));
    CK(cub::DeviceReduce::TransformReduce(nullptr, b[6], X(0), didx, n, cuda::std::plus<std::int64_t>{},
                                          nonzero<T>{}, std::int64_t(0)));
    ensure_cub_temp(P, *std::max_element(b, b + 7));
  }
  auto cub_min = [&](int k) { std::size_t b = P.cub_temp_bytes; cub::DeviceReduce::Min(P.cub_temp, b, X(k), dval, n, P.s); };
  auto cub_max = [&](int k) { std::size_t b = P.cub_temp_bytes; cub::DeviceReduce::Max(P.cub_temp, b, X(k), dval, n, P.s); };
  auto cub_argmin = [&](int k) {
    std::size_t b = P.cub_temp_bytes;
    cub::DeviceReduce::ArgMin(P.cub_temp, b, X(k), dval, didx, n, P.s);
  };
  auto cub_argmax = [&](int k) {
    std::size_t b = P.cub_temp_bytes;
    cub::DeviceReduce::ArgMax(P.cub_temp, b, X(k), dval, didx, n, P.s);
  };
  auto cub_sum = [&](int k, T* out) { std::size_t b = P.cub_temp_bytes; cub::DeviceReduce::Sum(P.cub_temp, b, X(k), out, n, P.s); };
  auto cub_mean = [&](int k) {  // CUB Sum (accumulated in T), then one divide on the device
    cub_sum(k, dval);
    divide_by<T><<<1, 1, 0, P.s>>>(dval, n);
  };
  // Two passes in T, as a CUB user writes it: mean = Sum / n, then the sum of squared
  // deviations from it (TransformReduce), then / n (ddof 0).
  auto cub_var = [&](int k) {
    cub_sum(k, dmean);
    divide_by<T><<<1, 1, 0, P.s>>>(dmean, n);
    std::size_t b = P.cub_temp_bytes;
    cub::DeviceReduce::TransformReduce(P.cub_temp, b, X(k), dval, n, cuda::std::plus<T>{},
                                       squared_deviation<T>{dmean}, T(0), P.s);
    divide_by<T><<<1, 1, 0, P.s>>>(dval, n);
  };
  auto cub_count = [&](int k) {
    std::size_t b = P.cub_temp_bytes;
    cub::DeviceReduce::TransformReduce(P.cub_temp, b, X(k), didx, n, cuda::std::plus<std::int64_t>{},
                                       nonzero<T>{}, std::int64_t(0), P.s);
  };
  CKB(cublasSetPointerMode(P.blas, CUBLAS_POINTER_MODE_DEVICE));
  auto blas_nrm2 = [&](int k) {
    if constexpr (std::is_same_v<T, float>) cublasSnrm2(P.blas, int(n), X(k), 1, dval);
    else cublasDnrm2(P.blas, int(n), X(k), 1, dval);
  };
  auto blas_asum = [&](int k) {
    if constexpr (std::is_same_v<T, float>) cublasSasum(P.blas, int(n), X(k), 1, dval);
    else cublasDasum(P.blas, int(n), X(k), 1, dval);
  };
  auto blas_amax = [&](int k) {  // the 1-based index, then the element itself, on the device
    if constexpr (std::is_same_v<T, float>) cublasIsamax(P.blas, int(n), X(k), 1, dblas_idx);
    else cublasIdamax(P.blas, int(n), X(k), 1, dblas_idx);
    gather_abs<T><<<1, 1, 0, P.s>>>(X(k), dblas_idx, dval);
  };

  // ---- reference values on slot 0 ----
  std::vector<T> h(static_cast<std::size_t>(n));
  CK(cudaMemcpy(h.data(), X(0), bytes, cudaMemcpyDeviceToHost));
  const std::int64_t hmin_at = std::min_element(h.begin(), h.end()) - h.begin();  // first minimum
  const std::int64_t hmax_at = std::max_element(h.begin(), h.end()) - h.begin();  // first maximum
  const double hmin = double(h[std::size_t(hmin_at)]), hmax = double(h[std::size_t(hmax_at)]);
  double hinf = 0;
  std::int64_t hcount = 0;
  for (T v : h) {
    hinf = std::max(hinf, double(std::fabs(v)));
    hcount += v != T(0);
  }
  std::vector<T>().swap(h);
  auto arg_check = [](std::int64_t at, double v, std::int64_t ref_at, double ref) { return at == ref_at && v == ref ? 0.0 : 1.0; };
  auto tmin = tally::extreme_of<T, false>(vx(0), tally::nan_policy::propagate, opt);
  auto tmax = tally::extreme_of<T, true>(vx(0), tally::nan_policy::propagate, opt);
  double c_min = value_of_slot0(cub_min), c_max = value_of_slot0(cub_max);
  auto cub_arg = [&](const auto& launch) {
    launch(0);
    CK(cudaStreamSynchronize(P.s));
    T v;
    std::int64_t at;
    CK(cudaMemcpy(&v, dval, sizeof v, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&at, didx, sizeof at, cudaMemcpyDeviceToHost));
    return std::pair<std::int64_t, double>(at, double(v));
  };
  auto c_argmin = cub_arg(cub_argmin), c_argmax = cub_arg(cub_argmax);
  const double x_norm2 = double(tally::norm2<T>(vx(0), opt));
  const double x_norm1 = double(tally::norm1<T>(vx(0), opt));
  const double f_norm1 = double(tally::norm1<T>(vx(0), fast));
  const double t_inf = double(tally::norm_inf<T>(vx(0), opt));
  const double x_mean = double(tally::mean<T>(vx(0), opt));
  const double x_var = double(tally::var<T>(vx(0), 0, opt));
  const double f_var = double(tally::var<T>(vx(0), 0, fast));
  const double t_count = double(tally::count_nonzero<T>(vx(0), opt));
  const double b_norm2 = value_of_slot0(blas_nrm2), b_norm1 = value_of_slot0(blas_asum);
  const double b_inf = value_of_slot0(blas_amax);
  const double c_mean = value_of_slot0(cub_mean), c_var = value_of_slot0(cub_var);
  double c_count = NAN;
  {
    cub_count(0);
    std::int64_t c;
    CK(cudaStreamSynchronize(P.s));
    CK(cudaMemcpy(&c, didx, sizeof c, cudaMemcpyDeviceToHost));
    c_count = double(c);
  }

  // ---- timings ----
  double t_read = tm.per_call([&](int k) { read_kernel<T><<<132 * 8, 256, 0, P.s>>>(X(k), X(k), n, false, P.dres + 4); }, slots, reps);
  auto tally_row = [&](const char* op, const char* lib, const std::function<void(int)>& f, double check) {
    double t = tm.per_call(f, slots, reps);
    rows.push_back({op, tn, "read-kernel", n, t_read, gb / t_read, NAN});
    rows.push_back({op, tn, lib, n, t, gb / t, check});
  };
  auto anchor_rows = [&](const char* op, const std::string& lib, const std::function<void(int)>& device,
                         const std::function<void(int)>& to_host, double check) {
    double td = tm.per_call(device, slots, reps);
    double th = tm.per_call(to_host, slots, reps);
    rows.push_back({op, tn, lib, n, td, gb / td, check});
    rows.push_back({op, tn, lib + "+memcpy", n, th, gb / th, check});
  };
  auto with_fetch = [&](const std::function<void(int)>& launch, std::size_t nbytes) {
    return std::function<void(int)>([&, launch, nbytes](int k) { launch(k); fetch(nbytes); });
  };

  tally_row("min", "tally", [&](int k) { sink = double(tally::min<T>(vx(k), opt)); }, rel(double(tmin.value), hmin));
  anchor_rows("min", "cub", cub_min, with_fetch(cub_min, sizeof(T)), rel(c_min, hmin));
  tally_row("max", "tally", [&](int k) { sink = double(tally::max<T>(vx(k), opt)); }, rel(double(tmax.value), hmax));
  anchor_rows("max", "cub", cub_max, with_fetch(cub_max, sizeof(T)), rel(c_max, hmax));
  // argmin/argmax: CUB's newer overload, value and index to separate outputs (8 + 8 bytes
  // at dv, fetched in one copy).
  tally_row("argmin", "tally", [&](int k) { sink = double(tally::argmin<T>(vx(k), opt)); },
            arg_check(tmin.index, double(tmin.value), hmin_at, hmin));
  anchor_rows("argmin", "cub", cub_argmin, with_fetch(cub_argmin, 16), arg_check(c_argmin.first, c_argmin.second, hmin_at, hmin));
  tally_row("argmax", "tally", [&](int k) { sink = double(tally::argmax<T>(vx(k), opt)); },
            arg_check(tmax.index, double(tmax.value), hmax_at, hmax));
  anchor_rows("argmax", "cub", cub_argmax, with_fetch(cub_argmax, 16), arg_check(c_argmax.first, c_argmax.second, hmax_at, hmax));

  {  // minmax: tally's one read against thrust::minmax_element (blocking: its two positions
     // come back to the host) and CUB's ArgMin then ArgMax (two reads, "cub-2pass"; both
     // answers fetched in the +memcpy form). rel_check 0 when both indices (thrust: both
     // positions) and values are the host's first occurrences; thrust's largest may be a
     // later tie (std::minmax_element's rule), which then counts as 1.
    const auto both = tally::minmax<T>(vx(0), tally::nan_policy::propagate, opt);
    tally_row("minmax", "tally", [&](int k) {
      const auto r = tally::minmax<T>(vx(k), tally::nan_policy::propagate, opt);
      sink = double(r.min.value) + double(r.max.value);
    }, arg_check(both.min.index, double(both.min.value), hmin_at, hmin) + arg_check(both.max.index, double(both.max.value), hmax_at, hmax));
    auto thrust_minmax = [&](int k) {
      const auto p = thrust::minmax_element(thrust::cuda::par.on(P.s), X(k), X(k) + n);
      sink = double(p.first - X(k)) + double(p.second - X(k));
    };
    thrust_minmax(0);
    const auto tp = thrust::minmax_element(thrust::cuda::par.on(P.s), X(0), X(0) + n);
    const double thrust_ok = (tp.first - X(0) == hmin_at && tp.second - X(0) == hmax_at) ? 0.0 : 1.0;
    const double tt = tm.per_call(thrust_minmax, slots, reps);
    rows.push_back({"minmax", tn, "thrust", n, tt, gb / tt, thrust_ok});
    auto cub_two = [&](int k) { cub_argmin(k); cub_argmax(k); };
    auto cub_two_host = [&](int k) {  // each answer fetched (the second call reuses dv)
      cub_argmin(k);
      fetch(16);
      cub_argmax(k);
      fetch(16);
    };
    anchor_rows("minmax", "cub-2pass", cub_two, cub_two_host,
                arg_check(c_argmin.first, c_argmin.second, hmin_at, hmin) + arg_check(c_argmax.first, c_argmax.second, hmax_at, hmax));
  }

  tally_row("norm2", "tally", [&](int k) { sink = double(tally::norm2<T>(vx(k), opt)); }, 0.0);
  anchor_rows("norm2", "cublas", blas_nrm2, with_fetch(blas_nrm2, sizeof(T)), rel(b_norm2, x_norm2));
  {  // exact and fast
    double t_ex = tm.per_call([&](int k) { sink = double(tally::norm1<T>(vx(k), opt)); }, slots, reps);
    double t_fa = tm.per_call([&](int k) { sink = double(tally::norm1<T>(vx(k), fast)); }, slots, reps);
    rows.push_back({"norm1", tn, "read-kernel", n, t_read, gb / t_read, NAN});
    rows.push_back({"norm1", tn, "tally", n, t_ex, gb / t_ex, 0.0});
    rows.push_back({"norm1", tn, "tally-fast", n, t_fa, gb / t_fa, rel(f_norm1, x_norm1)});
  }
  anchor_rows("norm1", "cublas", blas_asum, with_fetch(blas_asum, sizeof(T)), rel(b_norm1, x_norm1));
  tally_row("norm-inf", "tally", [&](int k) { sink = double(tally::norm_inf<T>(vx(k), opt)); }, rel(t_inf, hinf));
  anchor_rows("norm-inf", "cublas", blas_amax, with_fetch(blas_amax, sizeof(T)), rel(b_inf, hinf));

  tally_row("mean", "tally", [&](int k) { sink = double(tally::mean<T>(vx(k), opt)); }, 0.0);
  // the +memcpy form divides on the host, after the copy, as a user would
  anchor_rows("mean", "cub", cub_mean, [&](int k) {
    cub_sum(k, dval);
    fetch(sizeof(T));
    sink = sink / double(n);
  }, rel(c_mean, x_mean));
  {  // exact (floating data: the GPU's exact sum x and sum x^2, rounded together) and fast (Welford)
    double t_ex = tm.per_call([&](int k) { sink = double(tally::var<T>(vx(k), 0, opt)); }, slots, reps);
    double t_fa = tm.per_call([&](int k) { sink = double(tally::var<T>(vx(k), 0, fast)); }, slots, reps);
    tally::cuda::tuning::set_var_one_pass(!tally::cuda::tuning::var_one_pass());  // the other form
    double t_other = tm.per_call([&](int k) { sink = double(tally::var<T>(vx(k), 0, opt)); }, slots, reps);
    tally::cuda::tuning::set_var_one_pass(!tally::cuda::tuning::var_one_pass());
    const bool one = tally::cuda::tuning::var_one_pass();
    rows.push_back({"var", tn, "read-kernel", n, t_read, gb / t_read, NAN});
    rows.push_back({"var", tn, "tally", n, t_ex, gb / t_ex, 0.0});
    rows.push_back({"var", tn, one ? "tally-2pass" : "tally-1pass", n, t_other, gb / t_other, 0.0});
    rows.push_back({"var", tn, "tally-fast", n, t_fa, gb / t_fa, rel(f_var, x_var)});
  }
  anchor_rows("var", "cub-2pass", cub_var, with_fetch(cub_var, sizeof(T)), rel(c_var, x_var));
  tally_row("count-nonzero", "tally", [&](int k) { sink = double(tally::count_nonzero<T>(vx(k), opt)); },
            rel(t_count, double(hcount)));
  anchor_rows("count-nonzero", "cub", cub_count, [&](int k) {
    cub_count(k);
    std::int64_t c;
    CK(cudaMemcpyAsync(&c, didx, sizeof c, cudaMemcpyDeviceToHost, P.s));
    CK(cudaStreamSynchronize(P.s));
    sink = double(c);
  }, rel(c_count, double(hcount)));
  (void)sink;
  CK(cudaFree(dv));
}

void print_table() {
  // Pivot: one line per (op, dtype, n), a column per library.
  std::map<std::string, std::vector<const row*>> groups;
  std::vector<std::string> order;
  std::vector<const row*> sorted;
  for (const row& r : rows) sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(), [](const row* a, const row* b) {
    return std::tie(a->op, a->dtype, a->n) < std::tie(b->op, b->dtype, b->n);
  });
  for (const row* r : sorted) {
    std::string key = r->op + " " + r->dtype + " " + std::to_string(r->n);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(r);
  }
  std::string last_head;
  for (const std::string& key : order) {
    auto& g = groups[key];
    bool latency = g[0]->op.find("latency") != std::string::npos;
    bool blocking = false;  // bench_ops rows: tally blocking, anchors also with "+memcpy"
    for (auto* r : g) blocking |= r->library.find("+memcpy") != std::string::npos && !latency;
    std::string head = g[0]->op + " " + g[0]->dtype +
                       (latency    ? "  (us end to end, value in host memory)"
                        : blocking ? "  (GB/s of x; tally blocking, value in host memory; +memcpy: the anchor's value copied to host; tally/cub against it)"
                                   : "  (GB/s; device us per call for tally)");
    std::string cols;
    for (auto* r : g) cols += r->library + ",";
    if (head + cols != last_head) {
      std::printf("\n%s\n%12s", head.c_str(), "n");
      for (auto* r : g) std::printf(" %12s", r->library.c_str());
      std::printf(" %12s %10s %10s  %s\n", latency ? "tally/cub" : "tally us", "tally/cub", "tally/fast",
                  "rel. error (exact mode: vs the exact result; else tally vs CUB/cuBLAS)");
      last_head = head + cols;
    }
    const row* t = nullptr;
    const row* c = nullptr;
    const row* f = nullptr;
    for (auto* r : g) {
      if (r->library == "tally") t = r;
      if (r->library == "tally-fast") f = r;
      if (r->library == "cub" || r->library == "cub+memcpy" || r->library == "cub-segmented") c = r;
    }
    if (!t && f) {  // shape rows: tally's default ("tally-fast") against CUB's segmented reduce
      t = f;
      f = nullptr;
    }
    for (auto* r : g)  // an anchor with its value in host memory, where there is one (bench_ops)
      if (r->library.size() > 7 && r->library.compare(r->library.size() - 7, 7, "+memcpy") == 0) c = r;
    std::printf("%12lld", (long long)g[0]->n);
    for (auto* r : g) std::printf(" %12.1f", latency ? r->us : r->gbps);
    if (latency) std::printf(" %12.2f %10s", t && c ? t->us / c->us : NAN, "");
    else std::printf(" %12.2f %10.2f", t ? t->us : NAN, t && c ? c->us / t->us : NAN);
    std::printf(" %10.2f ", t && f ? f->us / t->us : NAN);
    for (auto* r : g)
      if (!std::isnan(r->check)) std::printf(" %s %.1e", r->library.c_str(), r->check);
    std::printf("\n");
  }
}

void write_csv(const char* path) {
  FILE* f = std::fopen(path, "w");
  if (!f) { std::perror(path); return; }
  std::fprintf(f, "op,dtype,library,n,us_per_call,gbps,rel_check\n");
  for (const row& r : rows)
    std::fprintf(f, "%s,%s,%s,%lld,%.4f,%.2f,%.3e\n", r.op.c_str(), r.dtype.c_str(), r.library.c_str(),
                 (long long)r.n, r.us, r.gbps, r.check);
  std::fclose(f);
}

void write_json(const char* path, const cudaDeviceProp& prop, int driver) {
  FILE* f = std::fopen(path, "w");
  if (!f) { std::perror(path); return; }
  std::fprintf(f, "{\"gpu\": \"%s\", \"sms\": %d, \"driver\": %d, \"rows\": [\n", prop.name, prop.multiProcessorCount, driver);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const row& r = rows[i];
    auto num = [](double v) { return std::isfinite(v) ? std::to_string(v) : std::string("null"); };
    std::fprintf(f, "  {\"op\": \"%s\", \"dtype\": \"%s\", \"library\": \"%s\", \"n\": %lld, \"us_per_call\": %s, \"gbps\": %s, \"rel_check\": %s}%s\n",
                 r.op.c_str(), r.dtype.c_str(), r.library.c_str(), (long long)r.n, num(r.us).c_str(),
                 num(r.gbps).c_str(), num(r.check).c_str(), i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

}  // namespace

// The offsets of the benchmark's uneven segments: `segs` segments of lengths 0..3 (s % 4),
// except the middle one, which holds the rest of the n elements.
std::vector<std::int64_t> uneven_offsets(std::int64_t n, std::int64_t segs) {
  std::int64_t tiny = 0;
  for (std::int64_t s = 0; s < segs; ++s) tiny += s == segs / 2 ? 0 : s % 4;
  std::vector<std::int64_t> off{0};
  for (std::int64_t s = 0; s < segs; ++s) off.push_back(off.back() + (s == segs / 2 ? n - tiny : s % 4));
  return off;
}

// ---- shapes: per-row, per-column and segmented sums (fast and exact; tally/shapes.hpp) -----
//
// float32, n elements in all: row sums and column sums of row-major matrices, and segments
// with one huge segment among 10,000 tiny ones. Anchors: cub::DeviceSegmentedReduce::Sum
// (rows and segments; CUB has no column reduction) and the plain read kernel. The tally
// calls are blocking (each synchronises the stream and allocates its scratch stream-ordered),
// so their times include that; GB/s = bytes read / time.
void bench_shapes(pools& P, std::int64_t n, int reps) {
  using T = float;
  const std::size_t bytes = std::size_t(n) * sizeof(T);
  const rotation<T> X(P.x, n);
  const int slots = X.slots;
  timer tm(P.s);
  tally::options fast{tally::backend::cuda, P.s, tally::accuracy::fast};
  tally::options exact{tally::backend::cuda, P.s, tally::accuracy::exact};
  // "tally-exact" rows: the exact kernels alone (the certified first pass off); the
  // "tally-exact-cert" rows: exact mode as shipped (the pass on, the default since the
  // seventeenth session; column mode too since the eighteenth).
  const bool certified_default = tally::cuda::tuning::shapes_certified();
  tally::cuda::tuning::set_shapes_certified(false);
  const double gb = double(bytes) / 1e3;
  T* out = reinterpret_cast<T*>(P.out);  // results (at most n / 2 of them)
  std::int64_t* doff = nullptr;
  const std::int64_t max_segments = std::max<std::int64_t>(65536, n / 1024);
  CK(cudaMalloc(&doff, sizeof(std::int64_t) * (max_segments + 1)));
  // The stream-ordered forms ("-async" libraries): queued back to back like CUB's calls; their
  // status words must read "none" (-1, -1) after the timing, and their results must have the
  // blocking call's bits (check column: 0 when every output is identical, else 1).
  std::int64_t* dstatus = nullptr;
  CK(cudaMalloc(&dstatus, 2 * sizeof(std::int64_t)));
  auto status_none = [&](const char* what) {
    std::int64_t h[2];
    CK(cudaMemcpy(h, dstatus, sizeof h, cudaMemcpyDeviceToHost));
    if (h[0] != -1 || h[1] != -1) {
      std::fprintf(stderr, "tally_bench: %s: stream-ordered status %lld %lld, not -1 -1\n", what, (long long)h[0], (long long)h[1]);
      std::exit(1);
    }
  };
  // 0 when the stream-ordered call on X(0) gives `blocking`'s bits, else 1
  auto differs = [&](const std::vector<T>& blocking, auto&& async_call) {
    CK(cudaMemset(out, 0xff, blocking.size() * sizeof(T)));
    async_call();
    CK(cudaStreamSynchronize(P.s));
    std::vector<T> h(blocking.size());
    CK(cudaMemcpy(h.data(), out, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return std::memcmp(h.data(), blocking.data(), h.size() * sizeof(T)) == 0 ? 0.0 : 1.0;
  };
  auto read_out = [&](std::int64_t m) {
    std::vector<T> h(static_cast<std::size_t>(m));
    CK(cudaStreamSynchronize(P.s));
    CK(cudaMemcpy(h.data(), out, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  };
  void* ctemp = nullptr;
  std::size_t ctemp_bytes = 0;
  auto cub_segments = [&](int k, std::int64_t segs) {
    std::size_t b = ctemp_bytes;
    return cub::DeviceSegmentedReduce::Sum(ctemp, b, X(k), out, segs, doff, doff + 1, P.s);
  };
  auto prepare_cub = [&](std::int64_t segs) {
    std::size_t b = 0;
    CK(cub::DeviceSegmentedReduce::Sum(nullptr, b, X(0), out, segs, doff, doff + 1, P.s));
    if (b > ctemp_bytes) {
      if (ctemp) CK(cudaFree(ctemp));
      ctemp_bytes = b;
      CK(cudaMalloc(&ctemp, ctemp_bytes));
    }
  };
  double t_read = tm.per_call([&](int k) { read_kernel<T><<<132 * 8, 256, 0, P.s>>>(X(k), X(k), n, false, P.dres + 4); }, slots, reps);
  rows.push_back({"shapes-read", "float32", "read-kernel", n, t_read, gb / t_read, NAN});
  // The default path (v3: one fused launch, spin wait) as "tally-fast".
  for (std::int64_t cols : {std::int64_t(1) << 13, std::int64_t(1) << 10, std::int64_t(1) << 16}) {
    const std::int64_t r = n / cols;
    std::string shape = std::to_string(r) + "x" + std::to_string(cols);
    // row sums: tally against CUB's segmented reduce over the row offsets
    std::vector<std::int64_t> off(static_cast<std::size_t>(r + 1));
    for (std::int64_t i = 0; i <= r; ++i) off[static_cast<std::size_t>(i)] = i * cols;
    CK(cudaMemcpy(doff, off.data(), off.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
    prepare_cub(r);
    double t_rows = tm.per_call([&](int k) {
      tally::reduce_axis(tally::reduce_op::sum, {X(k), r, cols, cols, 1, tally::dtype::float32, tally::memory::device}, 1,
                         {out, r, tally::dtype::float32, tally::memory::device}, fast);
    }, slots, reps);
    double t_cub = tm.per_call([&](int k) { CK(cub_segments(k, r)); }, slots, reps);
    double t_cols = tm.per_call([&](int k) {
      tally::reduce_axis(tally::reduce_op::sum, {X(k), r, cols, cols, 1, tally::dtype::float32, tally::memory::device}, 0,
                         {out, cols, tally::dtype::float32, tally::memory::device}, fast);
    }, slots, reps);
    // exact (correctly rounded per output; src/cuda/shapes_exact.cuh)
    double t_rows_x = tm.per_call([&](int k) {
      tally::reduce_axis(tally::reduce_op::sum, {X(k), r, cols, cols, 1, tally::dtype::float32, tally::memory::device}, 1,
                         {out, r, tally::dtype::float32, tally::memory::device}, exact);
    }, slots, reps);
    double t_cols_x = tm.per_call([&](int k) {
      tally::reduce_axis(tally::reduce_op::sum, {X(k), r, cols, cols, 1, tally::dtype::float32, tally::memory::device}, 0,
                         {out, cols, tally::dtype::float32, tally::memory::device}, exact);
    }, slots, reps);
    // stream-ordered: rows and columns, fast and exact
    const tally::matrix_ref m{X(0), r, cols, cols, 1, tally::dtype::float32, tally::memory::device};
    auto axis_async = [&](int k, int axis, const tally::options& o) {
      tally::matrix_ref mk = m;
      mk.data = X(k);
      const std::int64_t outs = axis == 1 ? r : cols;
      tally::reduce_axis_async(tally::reduce_op::sum, mk, axis, {out, outs, tally::dtype::float32, tally::memory::device},
                               dstatus, o);
    };
    auto axis_blocking = [&](int axis, const tally::options& o) {
      const std::int64_t outs = axis == 1 ? r : cols;
      tally::reduce_axis(tally::reduce_op::sum, m, axis, {out, outs, tally::dtype::float32, tally::memory::device}, o);
      return read_out(outs);
    };
    for (int axis : {1, 0})
      for (const tally::options* o : {&fast, &exact}) {
        double t = tm.per_call([&](int k) { axis_async(k, axis, *o); }, slots, reps);
        status_none("axis async");
        const std::vector<T> want = axis_blocking(axis, *o);
        const double check = differs(want, [&] { axis_async(0, axis, *o); });
        rows.push_back({std::string(axis == 1 ? "rows-" : "cols-") + shape, "float32",
                        o == &fast ? "tally-fast-async" : "tally-exact-async", n, t, gb / t, check});
      }
    // exact row and column sums, blocking, with the certified first pass
    // (tuning::shapes_certified; check: 1 when any output's bits differ from the exact path's)
    for (int axis : {1, 0}) {
      const std::int64_t outs = axis == 1 ? r : cols;
      const std::vector<T> want = axis_blocking(axis, exact);
      tally::cuda::tuning::set_shapes_certified(true);
      const std::vector<T> got = axis_blocking(axis, exact);
      double t = tm.per_call([&](int k) {
        tally::matrix_ref mk = m;
        mk.data = X(k);
        tally::reduce_axis(tally::reduce_op::sum, mk, axis, {out, outs, tally::dtype::float32, tally::memory::device}, exact);
      }, slots, reps);
      // stream-ordered: the exact kernels gated on the device (check: as differs())
      double ta = tm.per_call([&](int k) { axis_async(k, axis, exact); }, slots, reps);
      status_none("axis async, certified");
      const double check_a = differs(want, [&] { axis_async(0, axis, exact); });
      tally::cuda::tuning::set_shapes_certified(false);
      const double check = std::memcmp(want.data(), got.data(), want.size() * sizeof(T)) == 0 ? 0.0 : 1.0;
      rows.push_back({std::string(axis == 1 ? "rows-" : "cols-") + shape, "float32", "tally-exact-cert", n, t, gb / t, check});
      rows.push_back({std::string(axis == 1 ? "rows-" : "cols-") + shape, "float32", "tally-exact-cert-async", n, ta, gb / ta, check_a});
    }
    rows.push_back({"rows-" + shape, "float32", "tally-fast", n, t_rows, gb / t_rows, NAN});
    rows.push_back({"rows-" + shape, "float32", "cub-segmented", n, t_cub, gb / t_cub, NAN});
    rows.push_back({"cols-" + shape, "float32", "tally-fast", n, t_cols, gb / t_cols, NAN});
    rows.push_back({"rows-" + shape, "float32", "tally-exact", n, t_rows_x, gb / t_rows_x, NAN});
    rows.push_back({"cols-" + shape, "float32", "tally-exact", n, t_cols_x, gb / t_cols_x, NAN});
  }
  // one huge segment among 10,000 tiny ones (lengths 0..3), in the middle
  {
    const std::int64_t segs = 10001;
    const std::vector<std::int64_t> off = uneven_offsets(n, segs);
    CK(cudaMemcpy(doff, off.data(), off.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
    prepare_cub(segs);
    double t_seg = tm.per_call([&](int k) {
      tally::reduce_segments(tally::reduce_op::sum, {X(k), n, tally::dtype::float32, tally::memory::device}, doff, segs,
                             {out, segs, tally::dtype::float32, tally::memory::device}, fast);
    }, slots, reps);
    double t_cub = tm.per_call([&](int k) { CK(cub_segments(k, segs)); }, slots, reps);
    double t_seg_x = tm.per_call([&](int k) {
      tally::reduce_segments(tally::reduce_op::sum, {X(k), n, tally::dtype::float32, tally::memory::device}, doff, segs,
                             {out, segs, tally::dtype::float32, tally::memory::device}, exact);
    }, slots, reps);
    auto seg_async = [&](int k, const tally::options& o) {
      tally::reduce_segments_async(tally::reduce_op::sum, {X(k), n, tally::dtype::float32, tally::memory::device}, doff, segs,
                                   {out, segs, tally::dtype::float32, tally::memory::device}, dstatus, o);
    };
    for (const tally::options* o : {&fast, &exact}) {
      double t = tm.per_call([&](int k) { seg_async(k, *o); }, slots, reps);
      status_none("segments async");
      tally::reduce_segments(tally::reduce_op::sum, {X(0), n, tally::dtype::float32, tally::memory::device}, doff, segs,
                             {out, segs, tally::dtype::float32, tally::memory::device}, *o);
      const std::vector<T> want = read_out(segs);
      const double check = differs(want, [&] { seg_async(0, *o); });
      rows.push_back({"segments-uneven", "float32", o == &fast ? "tally-fast-async" : "tally-exact-async", n, t, gb / t, check});
    }
    {  // exact, blocking, with the certified first pass (check: 1 when any bit differs from the exact path's)
      auto seg_exact = [&](int k) {
        tally::reduce_segments(tally::reduce_op::sum, {X(k), n, tally::dtype::float32, tally::memory::device}, doff, segs,
                               {out, segs, tally::dtype::float32, tally::memory::device}, exact);
      };
      seg_exact(0);
      const std::vector<T> want = read_out(segs);
      tally::cuda::tuning::set_shapes_certified(true);
      seg_exact(0);
      const std::vector<T> got = read_out(segs);
      double t = tm.per_call(seg_exact, slots, reps);
      double ta = tm.per_call([&](int k) { seg_async(k, exact); }, slots, reps);
      status_none("segments async, certified");
      const double check_a = differs(want, [&] { seg_async(0, exact); });
      tally::cuda::tuning::set_shapes_certified(false);
      const double check = std::memcmp(want.data(), got.data(), want.size() * sizeof(T)) == 0 ? 0.0 : 1.0;
      rows.push_back({"segments-uneven", "float32", "tally-exact-cert", n, t, gb / t, check});
      rows.push_back({"segments-uneven", "float32", "tally-exact-cert-async", n, ta, gb / ta, check_a});
    }
    rows.push_back({"segments-uneven", "float32", "tally-fast", n, t_seg, gb / t_seg, NAN});
    rows.push_back({"segments-uneven", "float32", "cub-segmented", n, t_cub, gb / t_cub, NAN});
    rows.push_back({"segments-uneven", "float32", "tally-exact", n, t_seg_x, gb / t_seg_x, NAN});
  }
  if (ctemp) CK(cudaFree(ctemp));
  CK(cudaFree(doff));
  CK(cudaFree(dstatus));
  tally::cuda::tuning::set_shapes_certified(certified_default);
}

// ---- shapes of the narrow element types (widened into a compact copy first: src/shapes_widen.hpp)
//
// n elements of float16, bfloat16, int8, uint8, int16, uint16, uint32 and uint64 (its own
// buffer, filled on the host: finite float16 values, so the exact sums take the certified pass
// as float32 data would), summed per row and per column of a 8192-column row-major matrix and
// per segment of 200 (fast and exact where the type has both), and their max with its first
// index; the read kernel over the same bytes beside them (GB/s = bytes of the narrow input /
// time). Every type is read in place (src/cuda/shapes_narrow.cu, shapes_narrow_int.cu): the
// target is the read kernel's rate. Environment TALLY_BENCH_TYPES (e.g. "float16,bfloat16"):
// only the types listed.
void bench_shapes_narrow(pools& P, std::int64_t n, int reps) {
  timer tm(P.s);
  const tally::options fast{tally::backend::cuda, P.s, tally::accuracy::fast};
  const tally::options exact{tally::backend::cuda, P.s, tally::accuracy::exact};
  void* buf = nullptr;
  CK(cudaMalloc(&buf, std::size_t(n) * 8));
  std::int64_t* doff = nullptr;
  const std::int64_t segs = n / 200;
  CK(cudaMalloc(&doff, sizeof(std::int64_t) * (segs + 1)));
  {
    std::vector<std::int64_t> off(static_cast<std::size_t>(segs + 1));
    for (std::int64_t i = 0; i < segs; ++i) off[static_cast<std::size_t>(i)] = i * 200;
    off[static_cast<std::size_t>(segs)] = n;
    CK(cudaMemcpy(doff, off.data(), off.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  }
  void* out = P.out;  // (room for n / 2 float64 results)
  std::int64_t* dstatus = nullptr;  // (the stream-ordered forms' status words)
  CK(cudaMalloc(&dstatus, 2 * sizeof(std::int64_t)));
  const std::int64_t cols = 8192, r = n / cols;
  // (TALLY_BENCH_TYPES, a comma-separated list of type names: those alone)
  const char* only_types = std::getenv("TALLY_BENCH_TYPES");
  auto listed = [&](const char* name) {
    if (!only_types || !*only_types) return true;
    const std::string list = std::string(",") + only_types + ",";
    return list.find(std::string(",") + name + ",") != std::string::npos;
  };
  // (spread: bfloat16's data have exponents over spread + 8 binades: 40 by default, where a
  // vector's 8 terms mostly fit one float64 term (bf16_in::terms_exact allows 42) and a round
  // of 4 vectors mostly not; "bfloat16-narrow", 8, has 16 binades, where most rounds fit too)
  auto run_type = [&]<class T>(tally::dtype t, const char* name, int spread = 40) {
    if (!listed(name)) return;
    std::vector<T> h(static_cast<std::size_t>(n));
    std::mt19937_64 g(7);
    for (auto& e : h) {
      if constexpr (std::is_same_v<T, tally::float16>) e = tally::to_float16(static_cast<float>(std::ldexp(double(g() % 2048) - 1024, -int(g() % 12))));
      else if constexpr (std::is_same_v<T, tally::bfloat16>) e = tally::to_bfloat16(static_cast<float>(std::ldexp(double(g() % 256) - 128, -int(g() % static_cast<unsigned>(spread)))));
      else if constexpr (std::is_same_v<T, std::uint64_t>) e = g() >> 24;  // (below 2^40: no sum here leaves uint64)
      else e = static_cast<T>(g());
    }
    CK(cudaMemcpy(buf, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    const double gb = double(n) * sizeof(T) / 1e3;
    const std::int64_t words = std::int64_t(n) * sizeof(T) / 4;
    double t_read = tm.per_call([&](int) { read_kernel<float><<<132 * 8, 256, 0, P.s>>>(static_cast<const float*>(buf), static_cast<const float*>(buf), words, false, P.dres + 4); }, 1, reps);
    rows.push_back({"narrow-read", name, "read-kernel", n, t_read, gb / t_read, NAN});
    const bool floating = t == tally::dtype::float16 || t == tally::dtype::bfloat16;
    const tally::dtype rt = floating ? tally::dtype::float32 : std::is_unsigned_v<T> ? tally::dtype::uint64 : tally::dtype::int64;
    for (auto acc : {fast, exact}) {
      if (!floating && acc.accuracy == tally::accuracy::fast) continue;  // (integer sums are exact either way)
      const char* lib = acc.accuracy == tally::accuracy::fast ? "tally-fast" : "tally-exact-cert";
      const tally::matrix_ref m{buf, r, cols, cols, 1, t, tally::memory::device};
      double tr = tm.per_call([&](int) { tally::reduce_axis(tally::reduce_op::sum, m, 1, {out, r, rt, tally::memory::device}, acc); }, 1, reps);
      double tc = tm.per_call([&](int) { tally::reduce_axis(tally::reduce_op::sum, m, 0, {out, cols, rt, tally::memory::device}, acc); }, 1, reps);
      double ts = tm.per_call([&](int) {
        tally::reduce_segments(tally::reduce_op::sum, {buf, n, t, tally::memory::device}, doff, segs, {out, segs, rt, tally::memory::device}, acc);
      }, 1, reps);
      rows.push_back({"narrow-rows-" + std::to_string(r) + "x8192", name, lib, n, tr, gb / tr, NAN});
      rows.push_back({"narrow-cols-" + std::to_string(r) + "x8192", name, lib, n, tc, gb / tc, NAN});
      rows.push_back({"narrow-segments-200", name, lib, n, ts, gb / ts, NAN});
      {
        // the stream-ordered forms, queued back to back (the kernels' own rate, without the
        // blocking call's wait and status read; exact bfloat16 sums since the sixtieth session
        // the certified pass in place and the gated widened exact path behind it, plan
        // half_gated; half_gated=0 gives the widened route they took before)
        double ar = tm.per_call([&](int) { tally::reduce_axis_async(tally::reduce_op::sum, m, 1, {out, r, rt, tally::memory::device}, dstatus, acc); }, 1, reps);
        double ac = tm.per_call([&](int) { tally::reduce_axis_async(tally::reduce_op::sum, m, 0, {out, cols, rt, tally::memory::device}, dstatus, acc); }, 1, reps);
        double as = tm.per_call([&](int) {
          tally::reduce_segments_async(tally::reduce_op::sum, {buf, n, t, tally::memory::device}, doff, segs, {out, segs, rt, tally::memory::device}, dstatus, acc);
        }, 1, reps);
        const std::string alib = std::string(lib) + "-async";
        rows.push_back({"narrow-rows-" + std::to_string(r) + "x8192", name, alib, n, ar, gb / ar, NAN});
        rows.push_back({"narrow-cols-" + std::to_string(r) + "x8192", name, alib, n, ac, gb / ac, NAN});
        rows.push_back({"narrow-segments-200", name, alib, n, as, gb / as, NAN});
      }
    }
    // max and its index along each axis and per segment (x's type out, int64 indices)
    {
      void* vals = out;
      auto* idx = reinterpret_cast<std::int64_t*>(static_cast<char*>(out) + std::size_t(std::max(r, cols)) * 8);
      auto* sidx = reinterpret_cast<std::int64_t*>(static_cast<char*>(out) + std::size_t(segs) * 8);
      const tally::matrix_ref m{buf, r, cols, cols, 1, t, tally::memory::device};
      double tr = tm.per_call([&](int) { tally::extreme_axis(tally::extreme_op::max, tally::nan_policy::propagate, m, 1, {vals, r, t, tally::memory::device}, {idx, r, tally::dtype::int64, tally::memory::device}, fast); }, 1, reps);
      double tc = tm.per_call([&](int) { tally::extreme_axis(tally::extreme_op::max, tally::nan_policy::propagate, m, 0, {vals, cols, t, tally::memory::device}, {idx, cols, tally::dtype::int64, tally::memory::device}, fast); }, 1, reps);
      double ts = tm.per_call([&](int) {
        tally::extreme_segments(tally::extreme_op::max, tally::nan_policy::propagate, {buf, n, t, tally::memory::device}, doff, segs, {vals, segs, t, tally::memory::device}, {sidx, segs, tally::dtype::int64, tally::memory::device}, fast);
      }, 1, reps);
      rows.push_back({"narrow-rows-" + std::to_string(r) + "x8192", name, "tally-argmax", n, tr, gb / tr, NAN});
      rows.push_back({"narrow-cols-" + std::to_string(r) + "x8192", name, "tally-argmax", n, tc, gb / tc, NAN});
      rows.push_back({"narrow-segments-200", name, "tally-argmax", n, ts, gb / ts, NAN});
      {  // the stream-ordered forms, queued back to back (the kernels' own rate)
        double ar = tm.per_call([&](int) { tally::extreme_axis_async(tally::extreme_op::max, tally::nan_policy::propagate, m, 1, {vals, r, t, tally::memory::device}, {idx, r, tally::dtype::int64, tally::memory::device}, dstatus, fast); }, 1, reps);
        double ac = tm.per_call([&](int) { tally::extreme_axis_async(tally::extreme_op::max, tally::nan_policy::propagate, m, 0, {vals, cols, t, tally::memory::device}, {idx, cols, tally::dtype::int64, tally::memory::device}, dstatus, fast); }, 1, reps);
        double as = tm.per_call([&](int) {
          tally::extreme_segments_async(tally::extreme_op::max, tally::nan_policy::propagate, {buf, n, t, tally::memory::device}, doff, segs, {vals, segs, t, tally::memory::device}, {sidx, segs, tally::dtype::int64, tally::memory::device}, dstatus, fast);
        }, 1, reps);
        rows.push_back({"narrow-rows-" + std::to_string(r) + "x8192", name, "tally-argmax-async", n, ar, gb / ar, NAN});
        rows.push_back({"narrow-cols-" + std::to_string(r) + "x8192", name, "tally-argmax-async", n, ac, gb / ac, NAN});
        rows.push_back({"narrow-segments-200", name, "tally-argmax-async", n, as, gb / as, NAN});
      }
      if constexpr (sizeof(T) == 1) {
        namespace tn = tally::cuda::tuning;
        const tn::shapes_v3_plan p0 = tn::shapes_v3_params();
        tn::shapes_v3_plan p = p0;
        // the byte min / max's segments with 4 lanes and with 1 lane each (plan few_lanes 4 / 1;
        // 2 by default since the forty-first session) beside the default; "check": how many
        // segments' indices differ from the default's (must be 0)
        auto seg_max = [&](int) {
          tally::extreme_segments(tally::extreme_op::max, tally::nan_policy::propagate, {buf, n, t, tally::memory::device}, doff, segs, {vals, segs, t, tally::memory::device}, {sidx, segs, tally::dtype::int64, tally::memory::device}, fast);
        };
        auto indices = [&]() {
          std::vector<std::int64_t> h(static_cast<std::size_t>(segs));
          CK(cudaMemcpy(h.data(), sidx, h.size() * 8, cudaMemcpyDeviceToHost));
          return h;
        };
        seg_max(0);
        const std::vector<std::int64_t> want = indices();
        for (const int lanes : {4, 1}) {
          p.few_lanes = lanes;
          tn::set_shapes_v3_params(p);
          seg_max(0);
          const std::vector<std::int64_t> got = indices();
          double differ = 0;
          for (std::size_t i = 0; i < got.size(); ++i) differ += got[i] != want[i] ? 1 : 0;
          double fs = tm.per_call(seg_max, 1, reps);
          tn::set_shapes_v3_params(p0);
          rows.push_back({"narrow-segments-200", name, "tally-argmax-" + std::to_string(lanes) + "lanes", n, fs, gb / fs, differ});
        }
      }
    }
  };
  run_type.template operator()<tally::float16>(tally::dtype::float16, "float16");
  run_type.template operator()<tally::bfloat16>(tally::dtype::bfloat16, "bfloat16");
  run_type.template operator()<tally::bfloat16>(tally::dtype::bfloat16, "bfloat16-narrow", 8);
  run_type.template operator()<std::int8_t>(tally::dtype::int8, "int8");
  run_type.template operator()<std::uint8_t>(tally::dtype::uint8, "uint8");
  run_type.template operator()<std::int16_t>(tally::dtype::int16, "int16");
  run_type.template operator()<std::uint16_t>(tally::dtype::uint16, "uint16");
  run_type.template operator()<std::uint32_t>(tally::dtype::uint32, "uint32");
  run_type.template operator()<std::uint64_t>(tally::dtype::uint64, "uint64");
  CK(cudaFree(dstatus));
  CK(cudaFree(doff));
  CK(cudaFree(buf));
}

// Lanes an output for the narrow types' short rows and segments (plan few_lanes: 0 = the
// default rule, 1, 2, 4, 8, 16 or 32), swept over equal segments (and rows) of L elements
// (2^26 elements in all, past the L2): int8, int16 and float16 max and its first index, int8
// and int16 exact sums (few_masked_lanes), float16 fast sums and uint64 sums along segments and rows
// (few_unmasked_lanes). One table a length, a column a lane count; "check" is how many outputs
// differ from the default plan's (the integer ops: must be 0, their results are exact in any
// order), or for the float16 fast sums the largest relative difference (another order may
// change the last bits of the float64 accumulator, never more). TALLY_LANES_OPS: a comma-
// separated list of the ops' names (int8-argmax, int8-sum, int16-sum, int16-argmax,
// float16-sum, float16-rows, float16-argmax, uint32-sum, uint64-sum, uint64-rows) to run those
// alone (uint32-sum only when listed).
void bench_narrow_lanes(pools& P, std::int64_t n, int reps) {
  namespace tn = tally::cuda::tuning;
  timer tm(P.s);
  const tally::options fast{tally::backend::cuda, P.s, tally::accuracy::fast};
  void* buf = nullptr;
  CK(cudaMalloc(&buf, std::size_t(n) * 8));
  std::int64_t* doff = nullptr;
  CK(cudaMalloc(&doff, sizeof(std::int64_t) * (n + 1)));
  auto* vals = reinterpret_cast<double*>(P.out);  // (room for n / 2 float64 results)
  std::int64_t* idx = nullptr;
  CK(cudaMalloc(&idx, sizeof(std::int64_t) * std::size_t(n / 8 + 1)));
  const tn::shapes_v3_plan p0 = tn::shapes_v3_params();
  const char* only_ops = std::getenv("TALLY_LANES_OPS");
  auto listed = [&](const char* name) {
    if (!only_ops || !*only_ops) return true;
    const std::string list = std::string(",") + only_ops + ",";
    return list.find(std::string(",") + name + ",") != std::string::npos;
  };
  auto fetch = [&](const void* d, std::size_t k) {
    std::vector<std::int64_t> v(k);
    CK(cudaMemcpy(v.data(), d, k * 8, cudaMemcpyDeviceToHost));
    return v;
  };
  auto count_differ = [&](const std::vector<std::int64_t>& want, const std::vector<std::int64_t>& got) {
    double c = 0;
    for (std::size_t i = 0; i < got.size(); ++i) c += got[i] != want[i] ? 1 : 0;
    return c;
  };
  // fills buf with n elements of T (the same values for every length)
  auto fill = [&]<class T>() {
    std::vector<T> h(static_cast<std::size_t>(n));
    std::mt19937_64 g(11 + sizeof(T));
    for (auto& e : h) {
      if constexpr (std::is_same_v<T, tally::float16>) e = tally::to_float16(static_cast<float>(std::ldexp(double(g() % 2048) - 1024, -int(g() % 12))));
      else if constexpr (std::is_same_v<T, std::uint64_t>) e = g() >> 24;  // (below 2^40: no sum leaves uint64)
      else e = static_cast<T>(g());
    }
    CK(cudaMemcpy(buf, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  };
  for (const std::int64_t len : {16, 64, 200, 300, 600, 1000, 2000, 8192}) {
    const std::int64_t segs = n / len;
    {
      std::vector<std::int64_t> off(static_cast<std::size_t>(segs + 1));
      for (std::int64_t i = 0; i <= segs; ++i) off[static_cast<std::size_t>(i)] = i * len;
      CK(cudaMemcpy(doff, off.data(), off.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
    }
    const std::string shape = "narrow-lanes-seg" + std::to_string(len);
    const std::size_t k = static_cast<std::size_t>(segs);
    auto sweep = [&]<class T>(const char* name, auto call, auto differ) {
      const double gb = double(segs * len) * sizeof(T) / 1e3;
      for (const int lanes : {0, 1, 2, 4, 8, 16, 32}) {
        tn::shapes_v3_plan p = p0;
        p.few_lanes = lanes;
        tn::set_shapes_v3_params(p);
        call(0);
        const double d = differ(lanes == 0);
        const double t = tm.per_call(call, 1, reps);
        rows.push_back({shape, name, lanes == 0 ? std::string("default") : "lanes-" + std::to_string(lanes), segs * len, t, gb / t, d});
      }
      tn::set_shapes_v3_params(p0);
    };
    // an integer op's sweep: the outputs (int64 words at out) must equal the default plan's
    auto exact_sweep = [&]<class T>(const char* name, const void* out, auto call) {
      std::vector<std::int64_t> want;
      sweep.template operator()<T>(name, call, [&](bool first) {
        std::vector<std::int64_t> got = fetch(out, k);
        if (first) want = got;
        return count_differ(want, got);
      });
    };
    const tally::array_ref x8{buf, segs * len, tally::dtype::int8, tally::memory::device};
    if (listed("int8-argmax") || listed("int8-sum")) fill.template operator()<std::int8_t>();
    if (listed("int8-argmax"))
      exact_sweep.template operator()<std::int8_t>("int8-argmax", idx, [&](int) {
        tally::extreme_segments(tally::extreme_op::max, tally::nan_policy::propagate, x8, doff, segs, {vals, segs, tally::dtype::int8, tally::memory::device}, {idx, segs, tally::dtype::int64, tally::memory::device}, fast);
      });
    if (listed("int8-sum"))
      exact_sweep.template operator()<std::int8_t>("int8-sum", vals, [&](int) {
        tally::reduce_segments(tally::reduce_op::sum, x8, doff, segs, {vals, segs, tally::dtype::int64, tally::memory::device}, fast);
      });
    if (listed("int16-sum") || listed("int16-argmax")) fill.template operator()<std::int16_t>();
    if (listed("int16-sum"))
      exact_sweep.template operator()<std::int16_t>("int16-sum", vals, [&](int) {
        tally::reduce_segments(tally::reduce_op::sum, {buf, segs * len, tally::dtype::int16, tally::memory::device}, doff, segs, {vals, segs, tally::dtype::int64, tally::memory::device}, fast);
      });
    if (listed("int16-argmax"))
      exact_sweep.template operator()<std::int16_t>("int16-argmax", idx, [&](int) {
        tally::extreme_segments(tally::extreme_op::max, tally::nan_policy::propagate, {buf, segs * len, tally::dtype::int16, tally::memory::device}, doff, segs, {vals, segs, tally::dtype::int16, tally::memory::device}, {idx, segs, tally::dtype::int64, tally::memory::device}, fast);
      });
    if (listed("float16-sum") || listed("float16-rows") || listed("float16-argmax")) {
      fill.template operator()<tally::float16>();
      if (listed("float16-argmax"))
        exact_sweep.template operator()<tally::float16>("float16-argmax", idx, [&](int) {
          tally::extreme_segments(tally::extreme_op::max, tally::nan_policy::propagate, {buf, segs * len, tally::dtype::float16, tally::memory::device}, doff, segs, {vals, segs, tally::dtype::float16, tally::memory::device}, {idx, segs, tally::dtype::int64, tally::memory::device}, fast);
        });
      auto close = [&](std::vector<float>& want) {
        return [&](bool first) {
          std::vector<float> got(k);
          CK(cudaMemcpy(got.data(), vals, got.size() * 4, cudaMemcpyDeviceToHost));
          if (first) want = got;
          double worst = 0;
          for (std::size_t i = 0; i < got.size(); ++i)
            if (got[i] != want[i]) worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / std::max(1e-30, std::fabs(double(want[i]))));
          return worst;
        };
      };
      std::vector<float> want_s, want_r;
      if (listed("float16-sum"))
        sweep.template operator()<tally::float16>("float16-sum", [&](int) {
          tally::reduce_segments(tally::reduce_op::sum, {buf, segs * len, tally::dtype::float16, tally::memory::device}, doff, segs, {vals, segs, tally::dtype::float32, tally::memory::device}, fast);
        }, close(want_s));
      if (listed("float16-rows")) {
        const tally::matrix_ref m{buf, segs, len, len, 1, tally::dtype::float16, tally::memory::device};
        sweep.template operator()<tally::float16>("float16-rows", [&](int) {
          tally::reduce_axis(tally::reduce_op::sum, m, 1, {vals, segs, tally::dtype::float32, tally::memory::device}, fast);
        }, close(want_r));
      }
    }
    if (only_ops && listed("uint32-sum")) {
      fill.template operator()<std::uint32_t>();
      exact_sweep.template operator()<std::uint32_t>("uint32-sum", vals, [&](int) {
        tally::reduce_segments(tally::reduce_op::sum, {buf, segs * len, tally::dtype::uint32, tally::memory::device}, doff, segs, {vals, segs, tally::dtype::uint64, tally::memory::device}, fast);
      });
    }
    if (listed("uint64-sum") || listed("uint64-rows")) {
      fill.template operator()<std::uint64_t>();
      if (listed("uint64-sum"))
        exact_sweep.template operator()<std::uint64_t>("uint64-sum", vals, [&](int) {
          tally::reduce_segments(tally::reduce_op::sum, {buf, segs * len, tally::dtype::uint64, tally::memory::device}, doff, segs, {vals, segs, tally::dtype::uint64, tally::memory::device}, fast);
        });
      if (listed("uint64-rows")) {
        const tally::matrix_ref m{buf, segs, len, len, 1, tally::dtype::uint64, tally::memory::device};
        exact_sweep.template operator()<std::uint64_t>("uint64-rows", vals, [&](int) {
          tally::reduce_axis(tally::reduce_op::sum, m, 1, {vals, segs, tally::dtype::uint64, tally::memory::device}, fast);
        });
      }
    }
  }
  CK(cudaFree(idx));
  CK(cudaFree(doff));
  CK(cudaFree(buf));
}

// The v3 plan (tuning::shapes_v3_plan) swept over the shapes of bench_shapes: rows, columns and
// uneven segments of 2^26 float32, one table row per (shape, plan); "check" is the largest
// relative difference of the outputs from those of the default plan (fast sums: another
// combination order may change the last bits, never more than the float64 accumulator's bound).
void bench_shapes_tune(pools& P, std::int64_t n, int reps) {
  using T = float;
  namespace tn = tally::cuda::tuning;
  const std::size_t bytes = std::size_t(n) * sizeof(T);
  const rotation<T> X(P.x, n);
  const int slots = X.slots;
  timer tm(P.s);
  tally::options fast{tally::backend::cuda, P.s, tally::accuracy::fast};
  tally::options exact{tally::backend::cuda, P.s, tally::accuracy::exact};  // (the "tune-exact-" jobs: the certified pass)
  const double gb = double(bytes) / 1e3;
  T* out = reinterpret_cast<T*>(P.out);
  const tn::shapes_v3_plan base = tn::shapes_v3_params();
  struct cfg {
    const char* name;
    tn::shapes_v3_plan p;
  };
  auto mk = [&](std::int64_t tile, std::int64_t seg_tile, std::int64_t brl, int bps, std::int64_t cb) {
    tn::shapes_v3_plan p = base;
    p.tile = tile;
    p.seg_tile = seg_tile;
    p.block_row_len = brl;
    p.blocks_per_sm = bps;
    p.col_blocks = cb;
    return p;
  };
  const std::int64_t never = std::int64_t(1) << 40;
  auto with = [&](auto change) {
    tn::shapes_v3_plan p = base;
    change(p);
    return p;
  };
  std::vector<cfg> cfgs{
      {"v3-run18", with([&](auto& p) { p = mk(16384, 16384, never, -1, 1024); p.seg_split = 16384; })},  // run 18: a block per item, no block rows
      {"default", base},
      {"per-item", with([](auto& p) { p.blocks_per_sm = -1; })},
      {"t32k", with([](auto& p) { p.tile = 32768; })},
      {"t128k", with([](auto& p) { p.tile = 131072; })},
      {"seg16k (run 21)", with([](auto& p) { p.seg_tile = 16384; })},
      {"seg32k", with([](auto& p) { p.seg_tile = 32768; })},
      {"seg128k", with([](auto& p) { p.seg_tile = 131072; })},
      {"split8k", with([](auto& p) { p.seg_split = 8192; })},
      {"split32k", with([](auto& p) { p.seg_split = 32768; })},
      {"flat", with([](auto& p) { p.seg_flat_len = 4096; })},
      {"flat-all", with([](auto& p) { p.seg_flat_len = 1 << 30; p.seg_block_len = 0; })},
      {"seglanes4", with([](auto& p) { p.seg_lanes = 4; })},
      {"seglanes8", with([](auto& p) { p.seg_lanes = 8; })},
      {"seglanes16", with([](auto& p) { p.seg_lanes = 16; })},
      {"seglanes-auto", with([](auto& p) { p.seg_lanes = 0; })},
      {"groupsfirst", with([](auto& p) { p.item_order = 1; })},
      {"groupsfirst+seglanes4", with([](auto& p) { p.item_order = 1; p.seg_lanes = 4; })},
      {"interleave", with([](auto& p) { p.item_order = 2; })},
      {"interleave+split32k", with([](auto& p) { p.item_order = 2; p.seg_split = 32768; })},
      {"noprobe", with([](auto& p) { p.tile_probe = 0; })},
      {"noprobe+split32k", with([](auto& p) { p.tile_probe = 0; p.seg_split = 32768; })},
      {"split24k", with([](auto& p) { p.seg_split = 24576; })},
      {"ahead1", with([](auto& p) { p.seg_claim_ahead = 1; })},  // lazy tiles claimed as before run 95
      {"ahead2", with([](auto& p) { p.seg_claim_ahead = 2; })},  // ... once the current tile's first part is read
      {"checklate", with([](auto& p) { p.seg_check_late = 1; })},  // the offsets checked after the group items
      {"fence1", with([](auto& p) { p.done_fence = 1; })},  // every thread fenced before block_done's barrier (before the 25th session)
      // the certified pass's group items after its tiles claimed by warps, C warp items a claim (26th session; default 2)
      {"warp0", with([](auto& p) { p.seg_warp_claim = 0; })},  // (the certified pass's group items after its tiles by blocks, as before run 103)
      {"warp1", with([](auto& p) { p.seg_warp_claim = 1; })},
      {"warp2", with([](auto& p) { p.seg_warp_claim = 2; })},
      {"warp4", with([](auto& p) { p.seg_warp_claim = 4; })},
      {"warp8", with([](auto& p) { p.seg_warp_claim = 8; })},
      {"seg16k", with([](auto& p) { p.seg_tile = 16384; })},
      {"split1g", with([](auto& p) { p.seg_split = std::int64_t(1) << 30; p.seg_tile = std::int64_t(1) << 30; })},  // ~no tile items
      {"segblock-never", with([](auto& p) { p.seg_block_len = 0; })},  // fourteenth session: lanes per segment at every mean
      {"segblock8k", with([](auto& p) { p.seg_block_len = 8192; })},
      {"segblock32k", with([](auto& p) { p.seg_block_len = 32768; })},
      {"segblock4k", with([](auto& p) { p.seg_block_len = 4096; })},
      {"interleave+split1g", with([](auto& p) { p.item_order = 2; p.seg_split = std::int64_t(1) << 30; p.seg_tile = std::int64_t(1) << 30; })},
      {"brl2k", with([](auto& p) { p.block_row_len = 2048; })},
      {"brl1k", with([](auto& p) { p.block_row_len = 1024; })},
      {"cols256", with([](auto& p) { p.col_blocks = 256; })},
      {"cols512", with([](auto& p) { p.col_blocks = 512; })},
      {"cols2k", with([](auto& p) { p.col_blocks = 2048; })},
      {"heavy64", with([](auto& p) { p.heavy_lane_len = 64; })},  // (the certified pass's lanes: the tune-exact jobs)
      {"heavy256", with([](auto& p) { p.heavy_lane_len = 256; })},
      // exact mode (the tune-exact jobs): columns always / never through the certified pass,
      // its columns four rows a term (add4, 3 blocks a SM) instead of running sums with the
      // next rows ahead (2 blocks a SM), the gated kernel launched plainly
      {"certcols1", with([](auto& p) { p.cert_cols = 1; })},
      {"certcols0", with([](auto& p) { p.cert_cols = 0; })},
      {"certcols1+colrun0", with([](auto& p) { p.cert_cols = 1; p.col_run = 0; })},
      {"colrun0", with([](auto& p) { p.col_run = 0; })},
      {"rowstage0", with([](auto& p) { p.row_stages = 0; })},
      {"t16k", with([](auto& p) { p.tile = 16384; })},
      {"pdl0", with([](auto& p) { p.pdl = 0; })},
      // the gated exact launch's blocks a SM (rows and segments 8, columns 4 by default)
      {"colwaves2", with([](auto& p) { p.cert_col_waves = 2; })},
      {"colwaves3", with([](auto& p) { p.cert_col_waves = 3; })},
      {"colwaves4", with([](auto& p) { p.cert_col_waves = 4; })},
      {"colwaves8", with([](auto& p) { p.cert_col_waves = 8; })},
      {"gate1", with([](auto& p) { p.gate_blocks = 1; })},
      {"gate2", with([](auto& p) { p.gate_blocks = 2; })},
      {"gate4", with([](auto& p) { p.gate_blocks = 4; })},
      // segment tiles whose count fills whole rounds of the resident blocks (2^26 elements: 396
      // blocks of the certified pass at 3 a SM, 528 fast at 4): 56Ki 1171 tiles (2.96 rounds
      // of 396), 42Ki 1561 (3.94), 84Ki 781 (1.97; 1.48 of 528), against 64Ki's 1024 (2.59)
      {"segtile56k", with([](auto& p) { p.seg_tile = 57344; })},
      {"segtile42k", with([](auto& p) { p.seg_tile = 43008; })},
      {"segtile84k", with([](auto& p) { p.seg_tile = 86016; })},
  };
  // segments: one huge among 10,000 tiny ones (as bench_shapes)
  const std::int64_t segs = 10001;
  const std::vector<std::int64_t> off = uneven_offsets(n, segs);
  std::int64_t* doff = nullptr;
  CK(cudaMalloc(&doff, sizeof(std::int64_t) * off.size()));
  CK(cudaMemcpy(doff, off.data(), off.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  struct job {
    std::string name;
    std::int64_t outputs;
    std::function<void(int)> call;
  };
  std::vector<job> jobs;
  for (std::int64_t cols : {std::int64_t(1) << 13, std::int64_t(1) << 10, std::int64_t(1) << 16}) {
    const std::int64_t r = n / cols;
    const std::string shape = std::to_string(r) + "x" + std::to_string(cols);
    jobs.push_back({"tune-rows-" + shape, r, [&, r, cols](int k) {
      tally::reduce_axis(tally::reduce_op::sum, {X(k), r, cols, cols, 1, tally::dtype::float32, tally::memory::device}, 1,
                         {out, r, tally::dtype::float32, tally::memory::device}, fast);
    }});
    jobs.push_back({"tune-cols-" + shape, cols, [&, r, cols](int k) {
      tally::reduce_axis(tally::reduce_op::sum, {X(k), r, cols, cols, 1, tally::dtype::float32, tally::memory::device}, 0,
                         {out, cols, tally::dtype::float32, tally::memory::device}, fast);
    }});
  }
  // fixed cost per call: tiny shapes (64 x 64 rows and columns, 64 segments of 64)
  jobs.push_back({"tune-fixed-rows-64x64", 64, [&](int k) {
    tally::reduce_axis(tally::reduce_op::sum, {X(k), 64, 64, 64, 1, tally::dtype::float32, tally::memory::device}, 1,
                       {out, 64, tally::dtype::float32, tally::memory::device}, fast);
  }});
  jobs.push_back({"tune-fixed-cols-64x64", 64, [&](int k) {
    tally::reduce_axis(tally::reduce_op::sum, {X(k), 64, 64, 64, 1, tally::dtype::float32, tally::memory::device}, 0,
                       {out, 64, tally::dtype::float32, tally::memory::device}, fast);
  }});
  std::int64_t* doff64 = nullptr;
  {
    std::vector<std::int64_t> o64(65);
    for (int i = 0; i <= 64; ++i) o64[static_cast<std::size_t>(i)] = 64 * i;
    CK(cudaMalloc(&doff64, sizeof(std::int64_t) * o64.size()));
    CK(cudaMemcpy(doff64, o64.data(), o64.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  }
  jobs.push_back({"tune-fixed-segments-64x64", 64, [&](int k) {
    tally::reduce_segments(tally::reduce_op::sum, {X(k), 64 * 64, tally::dtype::float32, tally::memory::device}, doff64, 64,
                           {out, 64, tally::dtype::float32, tally::memory::device}, fast);
  }});
  jobs.push_back({"tune-segments-uneven", segs, [&](int k) {
    tally::reduce_segments(tally::reduce_op::sum, {X(k), n, tally::dtype::float32, tally::memory::device}, doff, segs,
                           {out, segs, tally::dtype::float32, tally::memory::device}, fast);
  }});
  std::int64_t* dstatus = nullptr;  // the stream-ordered form: status in device memory, nothing waits
  CK(cudaMalloc(&dstatus, 2 * sizeof(std::int64_t)));
  jobs.push_back({"tune-segments-uneven-async", segs, [&](int k) {
    tally::reduce_segments_async(tally::reduce_op::sum, {X(k), n, tally::dtype::float32, tally::memory::device}, doff, segs,
                                 {out, segs, tally::dtype::float32, tally::memory::device}, dstatus, fast);
  }});
  // the uneven segments' parts (the tune-*segments-one and -tiny jobs): one segment of n, and
  // the tiny ones without the huge one
  const std::vector<std::int64_t> off_one{0, n};
  std::vector<std::int64_t> off_tiny{0};
  for (std::int64_t s = 0; s < segs; ++s)
    if (s != segs / 2) off_tiny.push_back(off_tiny.back() + s % 4);
  const std::int64_t tiny_segs = static_cast<std::int64_t>(off_tiny.size()) - 1, tiny_n = off_tiny.back();
  std::int64_t *doff_one = nullptr, *doff_tiny = nullptr;
  CK(cudaMalloc(&doff_one, sizeof(std::int64_t) * off_one.size()));
  CK(cudaMemcpy(doff_one, off_one.data(), off_one.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  CK(cudaMalloc(&doff_tiny, sizeof(std::int64_t) * off_tiny.size()));
  CK(cudaMemcpy(doff_tiny, off_tiny.data(), off_tiny.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  // the same segments with the huge one last (lazy tiles: the block that sees it is among the
  // last to check its share of the offsets)
  std::vector<std::int64_t> off_last{0};
  {
    for (std::int64_t s = 0; s + 1 < segs; ++s) off_last.push_back(off_last.back() + s % 4);
    off_last.push_back(n);
  }
  std::int64_t* doff_last = nullptr;
  CK(cudaMalloc(&doff_last, sizeof(std::int64_t) * off_last.size()));
  CK(cudaMemcpy(doff_last, off_last.data(), off_last.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  jobs.push_back({"tune-segments-uneven-last-async", segs, [&](int k) {
    tally::reduce_segments_async(tally::reduce_op::sum, {X(k), n, tally::dtype::float32, tally::memory::device}, doff_last,
                                 segs, {out, segs, tally::dtype::float32, tally::memory::device}, dstatus, fast);
  }});
  // one huge among 4,000 tiny ones: a mean length past seg_block_len, so a block per segment
  // (the risk: 4,000 items that read almost nothing, against 500 with 32 lanes each)
  const std::int64_t segs4k = 4001;
  const std::vector<std::int64_t> off4k = uneven_offsets(n, segs4k);
  std::int64_t* doff4k = nullptr;
  CK(cudaMalloc(&doff4k, sizeof(std::int64_t) * off4k.size()));
  CK(cudaMemcpy(doff4k, off4k.data(), off4k.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  jobs.push_back({"tune-segments-uneven4k-async", segs4k, [&](int k) {
    tally::reduce_segments_async(tally::reduce_op::sum, {X(k), n, tally::dtype::float32, tally::memory::device}, doff4k,
                                 segs4k, {out, segs4k, tally::dtype::float32, tally::memory::device}, dstatus, fast);
  }});
  // equal segments (the lanes per short segment come from their mean length, 200 and 1024 here;
  // 8Ki-64Ki: around seg_split and seg_block_len, where a plan moves them between lanes, a block and tile items)
  std::vector<std::int64_t*> doff_eq;
  for (std::int64_t len : {std::int64_t(200), std::int64_t(1024), std::int64_t(8192), std::int64_t(16384), std::int64_t(24576),
                           std::int64_t(32768), std::int64_t(65536)}) {
    const std::int64_t count = n / len;
    std::vector<std::int64_t> o(static_cast<std::size_t>(count + 1));
    for (std::int64_t i = 0; i <= count; ++i) o[static_cast<std::size_t>(i)] = i * len;
    std::int64_t* d = nullptr;
    CK(cudaMalloc(&d, sizeof(std::int64_t) * o.size()));
    CK(cudaMemcpy(d, o.data(), o.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
    doff_eq.push_back(d);
    jobs.push_back({"tune-segments-equal" + std::to_string(len) + "-async", count, [&, d, count, len](int k) {
      tally::reduce_segments_async(tally::reduce_op::sum, {X(k), count * len, tally::dtype::float32, tally::memory::device}, d,
                                   count, {out, count, tally::dtype::float32, tally::memory::device}, dstatus, fast);
    }});
  }
  // exact mode (the default accuracy: the certified pass, then the exact kernels only for a
  // call with an output it cannot prove), stream-ordered: equal segments, the uneven ones,
  // rows; "check" must be 0 under every plan (correctly rounded results)
  {
    const std::int64_t lens[] = {200, 1024, 8192};
    for (std::size_t i = 0; i < 3; ++i) {
      std::int64_t* d = doff_eq[i];
      const std::int64_t len = lens[i], count = n / len;
      jobs.push_back({"tune-exact-segments-equal" + std::to_string(len) + "-async", count, [&, d, count, len](int k) {
        tally::reduce_segments_async(tally::reduce_op::sum, {X(k), count * len, tally::dtype::float32, tally::memory::device},
                                     d, count, {out, count, tally::dtype::float32, tally::memory::device}, dstatus, exact);
      }});
    }
    jobs.push_back({"tune-exact-segments-uneven-async", segs, [&](int k) {
      tally::reduce_segments_async(tally::reduce_op::sum, {X(k), n, tally::dtype::float32, tally::memory::device}, doff, segs,
                                   {out, segs, tally::dtype::float32, tally::memory::device}, dstatus, exact);
    }});
    // the uneven case taken apart: its huge segment alone (one segment of n elements) and its
    // 10,000 tiny ones alone (~15,000 elements: GB/s here still counts n elements' bytes, so
    // the time of the call is n * 4 bytes / GB/s), fast and exact
    for (const tally::options* o : {&fast, &exact}) {
      const std::string mode = o == &exact ? "tune-exact-" : "tune-";
      jobs.push_back({mode + "segments-one-async", 1, [&, o](int k) {
        tally::reduce_segments_async(tally::reduce_op::sum, {X(k), n, tally::dtype::float32, tally::memory::device}, doff_one, 1,
                                     {out, 1, tally::dtype::float32, tally::memory::device}, dstatus, *o);
      }});
      jobs.push_back({mode + "segments-tiny-async", tiny_segs, [&, o](int k) {
        tally::reduce_segments_async(tally::reduce_op::sum, {X(k), tiny_n, tally::dtype::float32, tally::memory::device},
                                     doff_tiny, tiny_segs, {out, tiny_segs, tally::dtype::float32, tally::memory::device},
                                     dstatus, *o);
      }});
    }
    for (std::int64_t cols : {std::int64_t(1) << 10, std::int64_t(1) << 13, std::int64_t(1) << 16}) {
      const std::int64_t r = n / cols;
      jobs.push_back({"tune-exact-rows-" + std::to_string(r) + "x" + std::to_string(cols) + "-async", r, [&, r, cols](int k) {
        tally::reduce_axis_async(tally::reduce_op::sum, {X(k), r, cols, cols, 1, tally::dtype::float32, tally::memory::device}, 1,
                                 {out, r, tally::dtype::float32, tally::memory::device}, dstatus, exact);
      }});
    }
    for (std::int64_t cols : {std::int64_t(1) << 10, std::int64_t(1) << 13, std::int64_t(1) << 16}) {
      const std::int64_t r = n / cols;
      jobs.push_back({"tune-exact-cols-" + std::to_string(r) + "x" + std::to_string(cols) + "-async", cols, [&, r, cols](int k) {
        tally::reduce_axis_async(tally::reduce_op::sum, {X(k), r, cols, cols, 1, tally::dtype::float32, tally::memory::device}, 0,
                                 {out, cols, tally::dtype::float32, tally::memory::device}, dstatus, exact);
      }});
    }
  }
  // rows of 200 (the group items without offsets: what equal segments of 200 would read
  // without the CSR loads and the lazy-tile check)
  {
    const std::int64_t cols = 200, r = n / cols;
    jobs.push_back({"tune-rows200-async", r, [&, r, cols](int k) {
      tally::reduce_axis_async(tally::reduce_op::sum, {X(k), r, cols, cols, 1, tally::dtype::float32, tally::memory::device}, 1,
                               {out, r, tally::dtype::float32, tally::memory::device}, dstatus, fast);
    }});
  }
  for (std::size_t i = 0; i < cfgs.size(); ++i)  // (a name given twice would be measured twice, as two columns)
    for (std::size_t k = 0; k < i; ++k)
      if (std::string(cfgs[i].name) == cfgs[k].name) {
        std::fprintf(stderr, "shapes-tune: configuration %s listed twice\n", cfgs[i].name);
        std::exit(2);
      }
  if (!g_tune_configs.empty()) {  // --tune-configs: only the configurations named in the list
    for (std::size_t b = 0, e; b <= g_tune_configs.size(); b = e + 1) {  // (a name not known is an error, not a skip)
      e = g_tune_configs.find(',', b);
      if (e == std::string::npos) e = g_tune_configs.size();
      const std::string name = g_tune_configs.substr(b, e - b);
      if (std::none_of(cfgs.begin(), cfgs.end(), [&](const cfg& c) { return name == c.name; })) {
        std::fprintf(stderr, "shapes-tune: --tune-configs names '%s', which is not a configuration (see the list in bench_shapes_tune)\n",
                     name.c_str());
        std::exit(2);
      }
    }
    const std::string list = "," + g_tune_configs + ",";
    cfgs.erase(std::remove_if(cfgs.begin(), cfgs.end(),
                              [&](const cfg& c) { return list.find("," + std::string(c.name) + ",") == std::string::npos; }),
               cfgs.end());
  }
  if (!g_tune_filter.empty()) {  // --tune-filter A,B: only the jobs whose names contain one of them
    std::vector<std::string> keys;
    for (std::size_t b = 0, e; b <= g_tune_filter.size(); b = e + 1) {
      e = g_tune_filter.find(',', b);
      if (e == std::string::npos) e = g_tune_filter.size();
      if (e > b) keys.push_back(g_tune_filter.substr(b, e - b));
    }
    jobs.erase(std::remove_if(jobs.begin(), jobs.end(),
                              [&](const job& j) {
                                return std::none_of(keys.begin(), keys.end(),
                                                    [&](const std::string& key) { return j.name.find(key) != std::string::npos; });
                              }),
               jobs.end());
  }
  for (const job& j : jobs) {
    auto outputs = [&]() {
      j.call(0);
      CK(cudaStreamSynchronize(P.s));
      std::vector<T> h(static_cast<std::size_t>(j.outputs));
      CK(cudaMemcpy(h.data(), out, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
      return h;
    };
    tn::set_shapes_v3_params(base);
    const std::vector<T> ref = outputs();
    for (const cfg& c : cfgs) {
      tn::set_shapes_v3_params(c.p);
      const std::vector<T> got = outputs();
      double diff = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) diff = std::max(diff, rel(double(got[i]), double(ref[i])));
      const double t = tm.per_call(j.call, slots, reps);
      rows.push_back({j.name, "float32", c.name, n, t, gb / t, diff});
    }
  }
  tn::set_shapes_v3_params(base);
  CK(cudaFree(doff));
  CK(cudaFree(doff64));
  CK(cudaFree(doff_last));
  CK(cudaFree(doff4k));
  CK(cudaFree(doff_one));
  CK(cudaFree(doff_tiny));
  CK(cudaFree(dstatus));
  for (std::int64_t* d : doff_eq) CK(cudaFree(d));
}

// Each shape of bench_shapes once, for a profiler (scripts/device-check.sh ncu: the kernels'
// own device time, without the blocking call's launch and completion around them): the read
// kernel, rows / columns / uneven segments through tally, and CUB's segmented reduce on the rows.
void bench_shapes_once(pools& P, std::int64_t n) {
  using T = float;
  const T* x = reinterpret_cast<const T*>(P.x);
  T* out = reinterpret_cast<T*>(P.out);
  tally::options fast{tally::backend::cuda, P.s, tally::accuracy::fast};
  // exact mode (the default accuracy): the certified pass's kernels (and the exact path's,
  // which then return at once when the pass proved every output)
  tally::options exact{tally::backend::cuda, P.s, tally::accuracy::exact};
  read_kernel<T><<<132 * 8, 256, 0, P.s>>>(x, x, n, false, P.dres + 4);
  std::int64_t* doff = nullptr;
  CK(cudaMalloc(&doff, sizeof(std::int64_t) * (std::max<std::int64_t>(65536, n / 1024) + 1)));
  for (std::int64_t cols : {std::int64_t(1) << 13, std::int64_t(1) << 10, std::int64_t(1) << 16}) {
    const std::int64_t r = n / cols;
    for (const tally::options* o : {&fast, &exact}) {
      tally::reduce_axis(tally::reduce_op::sum, {x, r, cols, cols, 1, tally::dtype::float32, tally::memory::device}, 1,
                         {out, r, tally::dtype::float32, tally::memory::device}, *o);
      tally::reduce_axis(tally::reduce_op::sum, {x, r, cols, cols, 1, tally::dtype::float32, tally::memory::device}, 0,
                         {out, cols, tally::dtype::float32, tally::memory::device}, *o);
    }
    std::vector<std::int64_t> off(static_cast<std::size_t>(r + 1));
    for (std::int64_t i = 0; i <= r; ++i) off[static_cast<std::size_t>(i)] = i * cols;
    CK(cudaMemcpy(doff, off.data(), off.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
    std::size_t b = 0;
    CK(cub::DeviceSegmentedReduce::Sum(nullptr, b, x, out, r, doff, doff + 1, P.s));
    void* tmp = nullptr;
    CK(cudaMalloc(&tmp, std::max<std::size_t>(b, 1)));
    CK(cub::DeviceSegmentedReduce::Sum(tmp, b, x, out, r, doff, doff + 1, P.s));
    CK(cudaStreamSynchronize(P.s));
    CK(cudaFree(tmp));
  }
  const std::int64_t segs = 10001;
  const std::vector<std::int64_t> off = uneven_offsets(n, segs);
  CK(cudaMemcpy(doff, off.data(), off.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  for (const tally::options* o : {&fast, &exact})
    tally::reduce_segments(tally::reduce_op::sum, {x, n, tally::dtype::float32, tally::memory::device}, doff, segs,
                           {out, segs, tally::dtype::float32, tally::memory::device}, *o);
  CK(cudaDeviceSynchronize());
  CK(cudaFree(doff));
  // equal segments of 200 (the slowest segment shape), all n / 200 of them
  {
    const std::int64_t len = 200, count = n / len;
    std::vector<std::int64_t> o(static_cast<std::size_t>(count + 1));
    for (std::int64_t i = 0; i <= count; ++i) o[static_cast<std::size_t>(i)] = i * len;
    CK(cudaMalloc(&doff, sizeof(std::int64_t) * o.size()));
    CK(cudaMemcpy(doff, o.data(), o.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
    tally::reduce_segments(tally::reduce_op::sum, {x, count * len, tally::dtype::float32, tally::memory::device}, doff, count,
                           {out, count, tally::dtype::float32, tally::memory::device}, fast);
    CK(cudaDeviceSynchronize());
    CK(cudaFree(doff));
  }
  // rows of 200 (the same group items as equal segments of 200, without offsets)
  tally::reduce_axis(tally::reduce_op::sum, {x, n / 200, 200, 200, 1, tally::dtype::float32, tally::memory::device}, 1,
                     {out, n / 200, tally::dtype::float32, tally::memory::device}, fast);
  CK(cudaDeviceSynchronize());
  std::printf("shapes-once: done (n = %lld)\n", (long long)n);
}

// Each exact-mode sum (certified pass + gated exact kernel), the fast sum and CUB's sum once
// per type at the issue's smallest sizes, for ncu's per-kernel device times (--only exact-once).
template <class T> void bench_exact_once(pools& P, std::int64_t n) {
  T* x = reinterpret_cast<T*>(P.x);
  fill_dist<T><<<1024, 256, 0, P.s>>>(x, n, 11, 0);
  CK(cudaStreamSynchronize(P.s));
  tally::options ex{tally::backend::cuda, P.s};
  tally::options fa = ex;
  fa.accuracy = tally::accuracy::fast;
  auto* rd = reinterpret_cast<T*>(P.dres);
  tally::view<const T> vx{x, n, tally::memory::device};
  for (int k = 0; k < 3; ++k) {
    tally::sum_async<T>(vx, rd, nullptr, ex);
    tally::sum_async<T>(vx, rd, nullptr, fa);
    std::size_t b = P.cub_temp_bytes;
    CK(cub::DeviceReduce::Sum(P.cub_temp, b, x, reinterpret_cast<T*>(P.dres + 1), n, P.s));
  }
  CK(cudaStreamSynchronize(P.s));
  std::printf("exact-once: done (%s, n = %lld)\n", type_name<T>(), (long long)n);
}

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;  // empty: every section
  int max_log2 = 30;
  const char* csv = nullptr;
  const char* json = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--exact-only") only = "exact";
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--max-log2" && i + 1 < argc) max_log2 = std::atoi(argv[++i]);
    else if (a == "--tune-filter" && i + 1 < argc) g_tune_filter = argv[++i];
    else if (a == "--tune-configs" && i + 1 < argc) g_tune_configs = argv[++i];
    else if (a == "--exact-variants" && i + 1 < argc) g_exact_variants = std::clamp(std::atoi(argv[++i]), 1, 7);
    else if (a == "--csv" && i + 1 < argc) csv = argv[++i];
    else if (a == "--json" && i + 1 < argc) json = argv[++i];
    else {
      std::fprintf(stderr, "usage: tally_bench [--quick] [--exact-only] [--only LIST] [--max-log2 N] [--exact-variants N] [--tune-filter A,B] [--tune-configs A,B] [--csv FILE] [--json FILE]\n");
      return 2;
    }
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("tally_bench: no CUDA GPU; nothing to measure\n");
    return 0;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  CK(cudaDriverGetVersion(&driver));
  std::printf("GPU: %s, %d SMs, L2 %d MB, driver API %d\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20, driver);

  pools P{};
  std::size_t pool = quick ? (std::size_t(64) << 20) : kPoolBytes;
  g_pool = pool;
  CK(cudaMalloc(&P.x, pool));
  CK(cudaMalloc(&P.y, pool));
  CK(cudaMalloc(&P.out, pool));
  CK(cudaMalloc(&P.dres, 64));
  CK(cudaStreamCreateWithFlags(&P.s, cudaStreamNonBlocking));
  CKB(cublasCreate(&P.blas));
  CKB(cublasSetStream(P.blas, P.s));
  // CUB temp storage for the largest case, allocated once.
  {
    std::size_t b1 = 0, b2 = 0;
    std::int64_t nmax = std::int64_t(pool / 4);
    CK(cub::DeviceReduce::Sum(nullptr, b1, (const float*)nullptr, (float*)nullptr, nmax));
    auto it = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), product_at::op<double>{nullptr, nullptr});
    CK(cub::DeviceReduce::Sum(nullptr, b2, it, (double*)nullptr, nmax));
    P.cub_temp_bytes = std::max<std::size_t>({b1, b2, 1 << 20}) * 2;
    CK(cudaMalloc(&P.cub_temp, P.cub_temp_bytes));
  }
  fill<float><<<1024, 256>>>(reinterpret_cast<float*>(P.x), pool / 4, 1);
  fill<float><<<1024, 256>>>(reinterpret_cast<float*>(P.y), pool / 4, 2);
  CK(cudaDeviceSynchronize());
  if (quick) max_log2 = std::min(max_log2, 20);
  int reps = quick ? 3 : 21;

  // Data are re-filled per type so every type reads valid values of its own kind.
  auto refill = [&](auto tag) {
    using T = decltype(tag);
    fill<T><<<1024, 256>>>(reinterpret_cast<T*>(P.x), std::int64_t(pool / sizeof(T)), 1);
    fill<T><<<1024, 256>>>(reinterpret_cast<T*>(P.y), std::int64_t(pool / sizeof(T)), 2);
    CK(cudaDeviceSynchronize());
  };
  auto want = [&](const std::string& section) {
    if (only.empty()) return true;
    std::string list = "," + only + ",";
    return list.find("," + section + ",") != std::string::npos;
  };
  refill(float{});
  if (want("reduce"))
    for (int l = 10; l <= max_log2; l += 2) bench_reduce<float>(P, std::int64_t(1) << l, reps, true);
  if (want("add"))
    for (int l = 10; l <= max_log2; l += 2) bench_add<float>(P, std::int64_t(1) << l, reps);
  if (want("latency"))
    for (int l = 10; l <= std::min(max_log2, 20); l += 2) bench_latency(P, std::int64_t(1) << l, quick ? 20 : 300);
  // min/max/argmin/argmax, norms, mean, var, count_nonzero beside CUB and cuBLAS
  if (want("ops"))
    for (int l = 20; l <= std::min(max_log2, 28); l += 2) bench_ops<float>(P, std::int64_t(1) << l, reps);
  refill(double{});
  if (want("reduce"))
    for (int l = 10; l <= max_log2 - 1; l += 2) bench_reduce<double>(P, std::int64_t(1) << l, reps, true);
  if (want("ops"))
    for (int l = 19; l <= std::min(max_log2 - 1, 27); l += 2) bench_ops<double>(P, std::int64_t(1) << l, reps);
  // Exact against fast mode on three distributions, at the issue's sizes.
  if (want("exact"))
    for (int d = 0; d < 3; ++d) {
      for (int l = 26; l <= max_log2; l += 2) bench_exact<float>(P, std::int64_t(1) << l, d, reps);
      for (int l = 25; l <= max_log2 - 1; l += 2) bench_exact<double>(P, std::int64_t(1) << l, d, reps);
    }
  if (want("exact-once") && !only.empty()) {
    bench_exact_once<float>(P, std::int64_t(1) << 26);
    bench_exact_once<double>(P, std::int64_t(1) << 25);
  }
  if (want("int")) {
    refill(std::int32_t{});
    for (int l = 10; l <= max_log2; l += 2) bench_reduce<std::int32_t>(P, std::int64_t(1) << l, reps, false);
  }
  if (want("shapes")) {
    refill(float{});
    bench_shapes(P, std::int64_t(1) << std::min(26, max_log2), reps);
    if (max_log2 >= 28 && !quick) bench_shapes(P, std::int64_t(1) << 28, reps);
  }
  if (want("shapes-narrow") && !only.empty()) {  // not in the default run: --only shapes-narrow
    bench_shapes_narrow(P, std::int64_t(1) << std::min(28, max_log2), reps);  // (2^28: 2 GiB of uint64, half the pool for the outputs)
  }
  if (want("narrow-lanes") && !only.empty()) {  // not in the default run: --only narrow-lanes
    bench_narrow_lanes(P, std::int64_t(1) << std::min(26, max_log2), reps);
  }
  if (want("shapes-once") && !only.empty()) {
    refill(float{});
    bench_shapes_once(P, std::int64_t(1) << std::min(26, max_log2));
  }
  if (want("shapes-tune")) {  // not in the default run: --only shapes-tune
    if (!only.empty()) {
      refill(float{});
      bench_shapes_tune(P, std::int64_t(1) << std::min(26, max_log2), reps);
    }
  }

  print_table();
  if (csv) write_csv(csv);
  if (json) write_json(json, prop, driver);
  return 0;
}
