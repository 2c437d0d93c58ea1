// tally::detail::cpu_threads_allowed: whether the CPU loops may start OpenMP threads.
#pragma once

namespace tally::detail {

/// Whether the CPU backend's loops (and tally::transform_reduce) may start OpenMP threads:
/// false in the child of a fork() (Python's multiprocessing with its default 'fork' start
/// method on Linux, say). GNU libgomp's thread pool does not survive fork, so the child's first
/// parallel region waited forever for threads that no longer exist; there they run on one
/// thread, with the same results (which never depend on the thread count). Defined in the
/// tally library (src/cpu/threads.cpp). Thread-safe, non-blocking.
bool cpu_threads_allowed() noexcept;

}  // namespace tally::detail
