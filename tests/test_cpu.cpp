// CPU backend only: the result does not depend on the number of OpenMP threads.
#include <omp.h>

#include "support.hpp"

namespace tt {
namespace {

class CpuThreads : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = omp_get_max_threads(); }
  void TearDown() override { omp_set_num_threads(saved_); }
  int saved_ = 1;
};

template <class T> void same_bits_for_any_thread_count() {
  tally::options cpu;
  cpu.backend = backend::cpu;
  for (std::int64_t n : {65536, 3 * 32768 + 5, 1000003}) {
    const dist d = is_float_v<T> ? dist::wide : dist::narrow;
    auto x = random_values<T>(n, d, 5), y = random_values<T>(n, d, 6);
    std::vector<tally::result_t<T>> sums, dots;
    for (int threads : {1, 2, 4, 3}) {
      omp_set_num_threads(threads);
      sums.push_back(tally::sum<T>(x, cpu));
      dots.push_back(tally::dot<T>(x, y, cpu));
    }
    for (std::size_t k = 1; k < sums.size(); ++k) {
      EXPECT_TRUE(same_bits(sums[k], sums[0])) << "sum, n=" << n << ", thread-count case " << k;
      EXPECT_TRUE(same_bits(dots[k], dots[0])) << "dot, n=" << n << ", thread-count case " << k;
    }
  }
}

TEST_F(CpuThreads, SumAndDotIndependentOfThreadCountFloat32) { same_bits_for_any_thread_count<float>(); }
TEST_F(CpuThreads, SumAndDotIndependentOfThreadCountFloat64) { same_bits_for_any_thread_count<double>(); }
TEST_F(CpuThreads, SumAndDotIndependentOfThreadCountInt64) { same_bits_for_any_thread_count<std::int64_t>(); }

}  // namespace
}  // namespace tt
