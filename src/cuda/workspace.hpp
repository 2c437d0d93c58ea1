// A small workspace cached per (device, stream): allocated once, reused by every call.
#pragma once

#include <cuda_runtime.h>

#include <mutex>
#include <thread>
#include <tuple>

namespace tally::cuda {

struct workspace {
  int device = 0;
  int sm_count = 0;
  int max_grid = 0;           // sm_count * tuning::blocks_per_sm
  void* partials = nullptr;   // device: max_grid accumulators of up to max_acc_bytes
  unsigned* counter = nullptr;  // device: blocks finished; the last block resets it to 0
  // Exact mode: the grid's superaccumulator digits and special-value flags (device, zero
  // between launches: the last block clears them).
  long long* exact_sa = nullptr;   // tuning::max_exact_digits
  unsigned* exact_flags = nullptr;  // [0] flags, [1] ~lowest and [2] highest + 1 nonzero digit,
                                    // [3] the certified pass's gate (certified::gate_word; 0 between calls),
                                    // [4] the gated blocks' read count, [5] the last verdict
  // Pinned, mapped host memory the kernels write the blocking result into directly, so a
  // blocking call needs no separate device-to-host copy.
  void* host_result = nullptr;  // 32 bytes
  void* host_state = nullptr;   // an exported exact state (exact::export_header + digits)
  int* host_status = nullptr;
  volatile unsigned* host_done = nullptr;  // completion ticket of the last blocking reduction
  unsigned ticket = 0;                     // last ticket handed out (under `blocking`)
  unsigned gate_seq = 0;                   // last exact call's number (certified::gate_word; under `blocking`)
  std::mutex blocking;  // held by a blocking call from launch to synchronise
};

/// The key of the caches held per (device, stream): the device, the stream handle, and, for
/// cudaStreamPerThread (one handle naming a different stream in each thread), the calling
/// thread, so two threads' per-thread streams never share a workspace or scratch (their work
/// is not ordered between them). Entries live for the process.
using stream_key = std::tuple<int, cudaStream_t, std::thread::id>;
inline stream_key key_of(int device, cudaStream_t stream) {
  return {device, stream, stream == cudaStreamPerThread ? std::this_thread::get_id() : std::thread::id{}};
}

/// The workspace of the current device for `stream` (created on first use; never freed).
workspace& get_workspace(cudaStream_t stream);

/// Waits for a blocking launch whose kernel writes `ticket` to `done` (mapped host memory)
/// last: spins, polling the stream for errors, and falls back to cudaStreamSynchronize after
/// tuning::spin_us. Throws tally::error when the kernel failed or finished without the ticket.
void wait_for(volatile unsigned* done, unsigned ticket, cudaStream_t stream);

}  // namespace tally::cuda
