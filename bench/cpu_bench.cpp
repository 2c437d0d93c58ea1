// CPU section of the benchmark: tally's CPU backend (exact and fast) against std::reduce on the same machine
// (Google Benchmark). bench/cpu_compare.py runs this and numpy.sum side by side.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "tally/tally.hpp"

namespace {

template <class T> std::vector<T> data(std::int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& x : v) x = static_cast<T>(u(g));
  return v;
}

template <class T> void tally_sum(benchmark::State& st) {
  auto v = data<T>(st.range(0));
  tally::options opt{tally::backend::cpu};
  for (auto _ : st) benchmark::DoNotOptimize(tally::sum<T>(v, opt));
  st.SetBytesProcessed(st.iterations() * st.range(0) * static_cast<std::int64_t>(sizeof(T)));
}

template <class T> void tally_sum_fast(benchmark::State& st) {
  auto v = data<T>(st.range(0));
  tally::options opt{tally::backend::cpu};
  opt.accuracy = tally::accuracy::fast;
  for (auto _ : st) benchmark::DoNotOptimize(tally::sum<T>(v, opt));
  st.SetBytesProcessed(st.iterations() * st.range(0) * static_cast<std::int64_t>(sizeof(T)));
}

template <class T> void tally_dot(benchmark::State& st) {
  auto v = data<T>(st.range(0));
  auto w = data<T>(st.range(0));
  tally::options opt{tally::backend::cpu};
  for (auto _ : st) benchmark::DoNotOptimize(tally::dot<T>(v, w, opt));
  st.SetBytesProcessed(st.iterations() * st.range(0) * 2 * static_cast<std::int64_t>(sizeof(T)));
}

template <class T> void std_reduce(benchmark::State& st) {
  auto v = data<T>(st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(std::reduce(v.begin(), v.end(), T(0)));
  st.SetBytesProcessed(st.iterations() * st.range(0) * static_cast<std::int64_t>(sizeof(T)));
}

}  // namespace

BENCHMARK(tally_sum<float>)->RangeMultiplier(4)->Range(1 << 16, 1 << 24)->UseRealTime();
BENCHMARK(tally_sum<double>)->RangeMultiplier(4)->Range(1 << 16, 1 << 24)->UseRealTime();
BENCHMARK(tally_sum_fast<float>)->RangeMultiplier(4)->Range(1 << 16, 1 << 24)->UseRealTime();
BENCHMARK(tally_sum_fast<double>)->RangeMultiplier(4)->Range(1 << 16, 1 << 24)->UseRealTime();
BENCHMARK(tally_dot<double>)->RangeMultiplier(4)->Range(1 << 16, 1 << 24)->UseRealTime();
BENCHMARK(std_reduce<float>)->RangeMultiplier(4)->Range(1 << 16, 1 << 24)->UseRealTime();
BENCHMARK(std_reduce<double>)->RangeMultiplier(4)->Range(1 << 16, 1 << 24)->UseRealTime();
BENCHMARK_MAIN();
