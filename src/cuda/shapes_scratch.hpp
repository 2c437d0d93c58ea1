// Scratch memory of the shape layer cached per (device, stream): a device buffer grown on
// demand (stream-ordered free of the old one, cudaMallocAsync of the new one, at least double)
// and kept for later calls, so a call of the v2 path allocates nothing once warm.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>

namespace tally::cuda {

/// Device words of the fused (v3) launches that hold a known value between calls: each call's
/// kernel leaves them as it found them (the last block resets the status words, the block
/// counter, the three lazy-tile words and the warp claims' counter; the last tile of an output resets that output's ticket).
/// Three sets (fifty-ninth session): set 0 for the launches that end in v3::block_done (which
/// cleans its set); sets 1 and 2, in turn, for the launches that end without it
/// (v3::finish::check_end): such a launch leaves its set as it ends and cleans the other one
/// (v3::clean_set), which the call before it left (shapes_scratch::check_end_set).
struct shapes_persistent {
  long long* status;      // [2]: first bad offset index, first overflowing output; "none" = 0x7f bytes
  unsigned* blocks_done;  // 0
  unsigned* tickets;      // [capacity]: 0
  unsigned* tile_next;    // 0: lazy tiles, the next tile item to claim
  unsigned* long_seen;    // 0; no longer set since the fifty-eighth session (the flag is bit 31 of `checked`)
  unsigned* checked;      // 0: lazy tiles, the blocks done with their share of the offsets check
  unsigned* group_next;         // 0: plan seg_warp_claim, the group items' warp claims handed out
};

struct shapes_scratch {
  std::mutex in_use;  // held by a call from its first launch to its stream synchronisation
  void* data = nullptr;
  std::size_t bytes = 0;
  /// At least `need` bytes on `stream` (call with in_use held). Throws tally::error on failure.
  void* reserve(std::size_t need, cudaStream_t stream);
  /// The persistent words with room for `tickets` tickets (call with in_use held): grown
  /// like the scratch, and set to their idle values (stream-ordered) when (re)allocated.
  /// `set`: 0, 1 or 2 (shapes_persistent).
  shapes_persistent reserve_persistent(std::size_t tickets, cudaStream_t stream, int set = 0);
  /// A launch that ends without block_done (check_end) on this stream: the set it takes (1 or
  /// 2, the one now clean; the other is clean too, or left by the last such launch, and this
  /// launch must clean it: `clean_other` true). Call with in_use held, after reserve_persistent.
  int check_end_set(bool& clean_other);
  void* persist = nullptr;
  std::size_t persist_tickets = 0;
  int dirty_set = 0;  // the set (1 or 2) the last check_end launch left, 0 none (every set clean), -1 unknown
  /// At least `bytes` of device memory that is all zero between calls (call with in_use held):
  /// grown like the scratch and zeroed (stream-ordered) when (re)allocated; every call's
  /// kernels leave what they use zero again (the exact path's merge slots and counters), so a
  /// call needs no memset.
  void* reserve_zeroed(std::size_t bytes, cudaStream_t stream);
  void* zeroed = nullptr;
  std::size_t zeroed_bytes = 0;
  /// The widened copy of a narrow input (src/shapes_widen.hpp), grown like the scratch and
  /// kept; held under its own lock (copy_in_use, taken before in_use, never while holding it).
  std::mutex copy_in_use;
  void* copy = nullptr;
  std::size_t copy_bytes = 0;
};

/// The scratch of the current device for `stream` (created on first use; never freed).
shapes_scratch& get_shapes_scratch(cudaStream_t stream);

/// The scratch of one shape call, from its first launch to its stream synchronisation (the
/// end of the lease's scope): with `cached`, the (device, stream) buffer above with its lock
/// held; otherwise a stream-ordered allocation of its own, freed (stream-ordered) when the
/// lease ends, on an error too. Throws tally::error when the memory cannot be had.
class scratch_lease {
 public:
  scratch_lease(std::size_t bytes, cudaStream_t stream, bool cached);
  ~scratch_lease();
  scratch_lease(const scratch_lease&) = delete;
  scratch_lease& operator=(const scratch_lease&) = delete;
  char* data() const noexcept { return data_; }
  /// The persistent words of the (device, stream) cache (a cached lease only).
  shapes_persistent persistent(std::size_t tickets, int set = 0) const { return cache_->reserve_persistent(tickets, stream_, set); }
  /// shapes_scratch::check_end_set of the (device, stream) cache (a cached lease only).
  int check_end_set(bool& clean_other) const { return cache_->check_end_set(clean_other); }
  /// The tickets each set holds (after persistent()).
  std::size_t ticket_capacity() const { return cache_->persist_tickets; }
  /// After a check_end launch failed: the sets' state is unknown, so the next call sets every
  /// set idle again (stream-ordered).
  void forget_sets() const { cache_->dirty_set = -1; }
  /// The zero-between-calls memory of the (device, stream) cache (a cached lease only).
  void* zeroed(std::size_t bytes) const { return cache_->reserve_zeroed(bytes, stream_); }

 private:
  char* data_ = nullptr;
  cudaStream_t stream_;
  bool cached_;
  shapes_scratch* cache_ = nullptr;
  std::unique_lock<std::mutex> hold_;
};

/// The widened copy of one shape call over a narrow element type: the (device, stream) cache's
/// copy buffer (at least `bytes`), its lock held for the lease's scope, which covers the call's
/// own scratch_lease. Stream order keeps later calls on the stream from overwriting it early.
class copy_lease {
 public:
  copy_lease(std::size_t bytes, cudaStream_t stream);
  char* data() const noexcept { return data_; }

 private:
  char* data_ = nullptr;
  std::unique_lock<std::mutex> hold_;
};

}  // namespace tally::cuda
