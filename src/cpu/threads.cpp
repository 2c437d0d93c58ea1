// Whether the CPU backend may start OpenMP threads (src/cpu/threads.hpp).
#include <pthread.h>

#include <atomic>

#include "tally/threads.hpp"

namespace tally::detail {
namespace {

std::atomic<bool> g_forked_child{false};

// Registered when the library is loaded (this file is linked whenever any CPU loop is: they
// all call cpu_threads_allowed), so a fork after the caller's own OpenMP use is seen too.
const int g_registered = pthread_atfork(nullptr, nullptr, [] { g_forked_child.store(true, std::memory_order_relaxed); });

}  // namespace

bool cpu_threads_allowed() noexcept {
  (void)g_registered;
  return !g_forked_child.load(std::memory_order_relaxed);
}

}  // namespace tally::detail
