// The CPU backend in the child of a fork(): before, with GNU libgomp, the child's first
// parallel region waited forever (the parent's thread pool does not survive fork), so a Python
// multiprocessing worker (start method 'fork', Linux's default) hung in its first tally call
// after the parent had made one. Now the child runs the CPU loops on one thread, with the same
// bits (results never depend on the thread count).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "tally/shaped.hpp"
#include "tally/tally.hpp"
#include "tally/transform_reduce.hpp"

namespace tt {
namespace {

TEST(ForkedChild, CpuCallsAfterForkFinishWithTheParentsBits) {
  const std::int64_t n = std::int64_t(1) << 22, cols = 1024;  // past every OpenMP threshold
  std::vector<double> x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = 1.0 / static_cast<double>(i % 1000 + 1) - 0.25;
  tally::options cpu;
  cpu.backend = tally::backend::cpu;
  auto square = [](double v) { return v * v; };
  auto plus = [](double a, double b) { return a + b; };
  const auto m = tally::matrix<double>::row_major(x.data(), n / cols, cols);
  auto run = [&](std::vector<double>& cols_out) {  // (OpenMP threads in the calling thread)
    cols_out.assign(static_cast<std::size_t>(cols), 0.0);
    tally::sum_along<double, double>(m, 0, cols_out, cpu);
    return std::vector<double>{tally::sum<double>(x, cpu), tally::max<double>(x, cpu), tally::var<double>(x, 1, cpu),
                               tally::transform_reduce<double>(x, 0.0, square, plus)};
  };
  std::vector<double> parent_cols;
  const std::vector<double> parent = run(parent_cols);

  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << "fork failed";
  if (pid == 0) {
    alarm(120);  // a hang ends the child with SIGALRM
    std::vector<double> child_cols;
    const std::vector<double> child = run(child_cols);
    _exit(child == parent && child_cols == parent_cols ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_FALSE(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) << "the child hung in a CPU call (killed after 120 s)";
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's results differ from the parent's";
  EXPECT_TRUE(tally::detail::cpu_threads_allowed()) << "the parent keeps its threads";
}

}  // namespace
}  // namespace tt
